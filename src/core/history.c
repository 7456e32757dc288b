/*
 * Bounded, downsampled time series (gpupool/history.h): the rings of buckets, the query plan,
 * and a store of series by key with eviction.
 *
 * Invariant of a tier: every slot outside head-n+1 .. head is empty (n == 0), and a slot inside
 * holds only samples of its own bucket. Moving the head clears the slots it passes over, so a
 * slot is never read for a bucket it does not hold.
 */
#include "gpupool/history.h"

#include "core/u64map.h"
#include "gpupool/meter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const gp_hist_tier gp_hist_tiers[GP_HIST_NTIERS] = {
    {.step_ms = 10 * 1000, .nbuckets = 361, .offset = 0},         /* 1 hour */
    {.step_ms = 120 * 1000, .nbuckets = 721, .offset = 361},      /* 1 day */
    {.step_ms = 30 * 60 * 1000, .nbuckets = 337, .offset = 1082}, /* 1 week */
};

_Static_assert(361 + 721 + 337 == GP_HIST_BUCKETS, "GP_HIST_BUCKETS is the tiers' total");

/* Floor division for a possibly negative numerator. */
static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void gp_hist_series_init(gp_hist_series *s)
{
    memset(s->b, 0, sizeof(s->b));
    for (int t = 0; t < GP_HIST_NTIERS; t++) {
        s->head[t] = INT64_MIN;
    }
}

static gp_hist_bucket *slot(gp_hist_series *s, int t, int64_t k)
{
    const gp_hist_tier *tr = &gp_hist_tiers[t];
    return &s->b[tr->offset + (int)(k % tr->nbuckets)];
}

static const gp_hist_bucket *cslot(const gp_hist_series *s, int t, int64_t k)
{
    const gp_hist_tier *tr = &gp_hist_tiers[t];
    return &s->b[tr->offset + (int)(k % tr->nbuckets)];
}

/* Moves tier t's head to bucket k (> head), clearing the slots passed over. */
static void advance(gp_hist_series *s, int t, int64_t k)
{
    const gp_hist_tier *tr = &gp_hist_tiers[t];
    int64_t from = s->head[t] == INT64_MIN ? k : s->head[t] + 1;
    if (k - from >= tr->nbuckets) {
        from = k - tr->nbuckets + 1; /* every slot is passed over */
    }
    for (int64_t i = from; i <= k; i++) {
        memset(slot(s, t, i), 0, sizeof(gp_hist_bucket));
    }
    s->head[t] = k;
}

void gp_hist_add(gp_hist_series *s, int64_t t_ms, double v)
{
    if (t_ms < 0 || !isfinite(v)) {
        return;
    }
    float f = (float)v;
    for (int t = 0; t < GP_HIST_NTIERS; t++) {
        int64_t k = t_ms / gp_hist_tiers[t].step_ms;
        if (s->head[t] == INT64_MIN || k > s->head[t]) {
            advance(s, t, k);
        } else if (k <= s->head[t] - gp_hist_tiers[t].nbuckets) {
            continue; /* older than the tier's window */
        }
        gp_hist_bucket *b = slot(s, t, k);
        if (b->n == 0) {
            b->min = b->max = f;
            b->sum = 0;
        }
        b->min = f < b->min ? f : b->min;
        b->max = f > b->max ? f : b->max;
        b->sum += f;
        b->n++;
    }
}

void gp_hist_point_clear(gp_hist_point *p)
{
    *p = (gp_hist_point){0};
}

double gp_hist_point_mean(const gp_hist_point *p)
{
    return p->n > 0 ? p->sum / (double)p->n : 0;
}

static void merge(gp_hist_point *p, const gp_hist_bucket *b)
{
    if (b->n == 0) {
        return;
    }
    if (p->n == 0) {
        p->min = b->min;
        p->max = b->max;
    }
    p->min = b->min < p->min ? b->min : p->min;
    p->max = b->max > p->max ? b->max : p->max;
    p->sum += b->sum;
    p->n += b->n;
}

/* The start of the oldest bucket tier t holds when its newest is the one of ref_ms. */
static int64_t tier_oldest(int t, int64_t ref_ms)
{
    const gp_hist_tier *tr = &gp_hist_tiers[t];
    return (floordiv(ref_ms, tr->step_ms) - tr->nbuckets + 1) * tr->step_ms;
}

/* Points of [from, to] at step, aligned to multiples of step. */
static int64_t npoints(int64_t from, int64_t to, int64_t step)
{
    return (to - floordiv(from, step) * step) / step + 1;
}

int gp_hist_plan_make(int64_t ref_ms, int64_t from_ms, int64_t to_ms, int64_t step_ms,
                      gp_hist_plan *out)
{
    if (from_ms > to_ms || step_ms < 0) {
        return GP_EINVAL;
    }
    if (step_ms > 0 && npoints(from_ms, to_ms, step_ms) > GP_HIST_MAX_POINTS) {
        return GP_ERANGE;
    }
    int t = 0;
    while (t < GP_HIST_NTIERS - 1 && from_ms < tier_oldest(t, ref_ms)) {
        t++;
    }
    int64_t ts = gp_hist_tiers[t].step_ms, step;
    if (step_ms == 0) {
        /* the smallest multiple of the tier's step giving at most the default points */
        int64_t span = to_ms - from_ms, m = span / ((int64_t)GP_HIST_DEFAULT_POINTS * ts) + 1;
        while (m > 1 && npoints(from_ms, to_ms, (m - 1) * ts) <= GP_HIST_DEFAULT_POINTS) {
            m--;
        }
        while (npoints(from_ms, to_ms, m * ts) > GP_HIST_DEFAULT_POINTS) {
            m++;
        }
        step = m * ts;
    } else {
        step = (step_ms + ts - 1) / ts * ts;
    }
    int64_t n = npoints(from_ms, to_ms, step);
    if (n > GP_HIST_MAX_POINTS) {
        return GP_ERANGE;
    }
    *out = (gp_hist_plan){
        .tier = t, .step_ms = step, .first_ms = floordiv(from_ms, step) * step, .npoints = (int)n};
    return 0;
}

/* The bucket numbers of tier t that are valid and within [lo, hi] into *a .. *b; false when
 * none. */
static bool valid_range(const gp_hist_series *s, int t, int64_t lo, int64_t hi, int64_t *a,
                        int64_t *b)
{
    if (s->head[t] == INT64_MIN) {
        return false;
    }
    int64_t oldest = s->head[t] - gp_hist_tiers[t].nbuckets + 1;
    *a = lo > oldest ? lo : oldest;
    *b = hi < s->head[t] ? hi : s->head[t];
    *a = *a < 0 ? 0 : *a;
    return *a <= *b;
}

void gp_hist_fill(const gp_hist_series *s, const gp_hist_plan *p, gp_hist_point *out)
{
    if (!s || p->npoints <= 0) {
        return;
    }
    int t = p->tier;
    int64_t ts = gp_hist_tiers[t].step_ms;
    int64_t end = p->first_ms + (int64_t)p->npoints * p->step_ms; /* exclusive */
    int64_t a, b;
    if (!valid_range(s, t, floordiv(p->first_ms + ts - 1, ts), floordiv(end - 1, ts), &a, &b)) {
        return;
    }
    for (int64_t k = a; k <= b; k++) {
        int64_t i = (k * ts - p->first_ms) / p->step_ms;
        merge(&out[i], cslot(s, t, k));
    }
}

void gp_hist_window(const gp_hist_series *s, int64_t from_ms, int64_t to_ms, gp_hist_point *acc)
{
    if (!s || from_ms > to_ms) {
        return;
    }
    int t = 0;
    while (t < GP_HIST_NTIERS - 1 &&
           (s->head[t] == INT64_MIN ||
            from_ms < (s->head[t] - gp_hist_tiers[t].nbuckets + 1) * gp_hist_tiers[t].step_ms)) {
        t++;
    }
    int64_t ts = gp_hist_tiers[t].step_ms, a, b;
    if (!valid_range(s, t, floordiv(from_ms, ts), floordiv(to_ms, ts), &a, &b)) {
        return;
    }
    for (int64_t k = a; k <= b; k++) {
        merge(acc, cslot(s, t, k));
    }
}

/* ---- the store ---- */

typedef struct entry {
    int64_t key;
    bool used, finished;
    int64_t end_ms;
    uint64_t seq; /* order of addition */
    gp_hist_series **series;
} entry;

struct gp_hist_store {
    int max_keys, nseries, count;
    uint64_t seq;
    entry *e;
    gp_u64map index; /* key -> slot + 1; 0: dropped (the map has no deletion) */
};

#define INDEX_NONE UINT64_C(0)

gp_hist_store *gp_hist_store_new(int max_keys, int nseries)
{
    if (max_keys < 1 || max_keys > 10000000 || nseries < 1 || nseries > 1024) {
        return NULL;
    }
    gp_hist_store *h = calloc(1, sizeof(*h));
    if (!h) {
        return NULL;
    }
    h->max_keys = max_keys;
    h->nseries = nseries;
    h->e = calloc((size_t)max_keys, sizeof(entry));
    gp_u64map_init(&h->index);
    if (!h->e) {
        free(h);
        return NULL;
    }
    return h;
}

static void entry_clear(gp_hist_store *h, entry *e)
{
    if (e->series) {
        for (int i = 0; i < h->nseries; i++) {
            free(e->series[i]);
        }
        free(e->series);
    }
    memset(e, 0, sizeof(*e));
}

void gp_hist_store_free(gp_hist_store *h)
{
    if (!h) {
        return;
    }
    for (int i = 0; i < h->max_keys; i++) {
        entry_clear(h, &h->e[i]);
    }
    free(h->e);
    gp_u64map_fini(&h->index);
    free(h);
}

static entry *find(const gp_hist_store *h, int64_t key)
{
    uint64_t v;
    if (!gp_u64map_get(&h->index, (uint64_t)key, &v) || v == INDEX_NONE) {
        return NULL;
    }
    entry *e = &h->e[v - 1];
    return e->used && e->key == key ? e : NULL;
}

const gp_hist_series *gp_hist_store_get(const gp_hist_store *h, int64_t key, int i)
{
    entry *e = find(h, key);
    return e && i >= 0 && i < h->nseries ? e->series[i] : NULL;
}

bool gp_hist_store_has(const gp_hist_store *h, int64_t key)
{
    return find(h, key) != NULL;
}

/* The slot a new key takes: a free one, else the one to evict (finished first, the earliest
 * end; else the earliest added). */
static int victim(const gp_hist_store *h)
{
    int best = -1;
    for (int i = 0; i < h->max_keys; i++) {
        const entry *e = &h->e[i];
        if (!e->used) {
            return i;
        }
        if (best < 0) {
            best = i;
            continue;
        }
        const entry *b = &h->e[best];
        bool better =
            e->finished != b->finished
                ? e->finished
                : (e->finished && e->end_ms != b->end_ms ? e->end_ms < b->end_ms : e->seq < b->seq);
        best = better ? i : best;
    }
    return best;
}

/* Rebuilds the index from the live entries: dropped keys stay in the map as INDEX_NONE until
 * then, so it is rebuilt when they outnumber the live ones. */
static int reindex(gp_hist_store *h)
{
    gp_u64map m;
    gp_u64map_init(&m);
    for (int i = 0; i < h->max_keys; i++) {
        if (h->e[i].used && gp_u64map_put(&m, (uint64_t)h->e[i].key, (uint64_t)i + 1) != 0) {
            gp_u64map_fini(&m);
            return GP_ENOMEM;
        }
    }
    gp_u64map_fini(&h->index);
    h->index = m;
    return 0;
}

void gp_hist_store_drop(gp_hist_store *h, int64_t key)
{
    entry *e = find(h, key);
    if (!e) {
        return;
    }
    entry_clear(h, e);
    h->count--;
    /* the map has room for key (it was put): marking it cannot fail */
    (void)gp_u64map_put(&h->index, (uint64_t)key, INDEX_NONE);
}

static entry *add_key(gp_hist_store *h, int64_t key)
{
    gp_hist_series **series = calloc((size_t)h->nseries, sizeof(*series));
    if (!series) {
        return NULL;
    }
    if (h->index.count > 2 * (size_t)h->max_keys + 16 && reindex(h) != 0) {
        free(series);
        return NULL;
    }
    int v = victim(h);
    if (gp_u64map_put(&h->index, (uint64_t)key, (uint64_t)v + 1) != 0) {
        free(series);
        return NULL;
    }
    entry *e = &h->e[v];
    if (e->used) {
        int64_t old = e->key;
        entry_clear(h, e);
        h->count--;
        (void)gp_u64map_put(&h->index, (uint64_t)old, INDEX_NONE);
    }
    *e = (entry){.key = key, .used = true, .seq = ++h->seq, .series = series};
    h->count++;
    return e;
}

gp_hist_series *gp_hist_store_open(gp_hist_store *h, int64_t key, int i)
{
    if (i < 0 || i >= h->nseries) {
        return NULL;
    }
    entry *e = find(h, key);
    if (e && e->series[i]) {
        return e->series[i];
    }
    gp_hist_series *s = malloc(sizeof(*s));
    if (!s) {
        return NULL;
    }
    gp_hist_series_init(s);
    if (!e && !(e = add_key(h, key))) {
        free(s);
        return NULL;
    }
    e->series[i] = s;
    return s;
}

void gp_hist_store_finish(gp_hist_store *h, int64_t key, int64_t end_ms)
{
    entry *e = find(h, key);
    if (e && !e->finished) {
        e->finished = true;
        e->end_ms = end_ms;
    }
}

bool gp_hist_store_finished(const gp_hist_store *h, int64_t key, int64_t *end_ms)
{
    const entry *e = find(h, key);
    if (e && e->finished && end_ms) {
        *end_ms = e->end_ms;
    }
    return e && e->finished;
}

int gp_hist_store_count(const gp_hist_store *h)
{
    return h->count;
}

int gp_hist_store_capacity(const gp_hist_store *h)
{
    return h->max_keys;
}

bool gp_hist_store_slot(const gp_hist_store *h, int i, int64_t *key)
{
    if (i < 0 || i >= h->max_keys || !h->e[i].used) {
        return false;
    }
    *key = h->e[i].key;
    return true;
}

/* ---- text ---- */

/* A non-negative decimal with an optional unit into ms (unit_ms for a bare number). */
static int parse_amount(const char *s, int64_t unit_ms, int64_t *ms)
{
    static const struct {
        const char *name;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    if (!s || !((*s >= '0' && *s <= '9') || *s == '.')) {
        return GP_EINVAL;
    }
    double whole = 0, scale = 1;
    bool digits = false, dot = false;
    for (; (*s >= '0' && *s <= '9') || (*s == '.' && !dot); s++) {
        if (*s == '.') {
            dot = true;
            continue;
        }
        digits = true;
        if (dot) {
            scale /= 10;
            whole += (*s - '0') * scale;
        } else {
            whole = whole * 10 + (*s - '0');
        }
        if (whole > 1e15) {
            return GP_EINVAL;
        }
    }
    if (!digits) {
        return GP_EINVAL;
    }
    int64_t u = *s ? 0 : unit_ms;
    for (size_t i = 0; !u && i < sizeof(units) / sizeof(units[0]); i++) {
        u = strcmp(s, units[i].name) == 0 ? units[i].ms : 0;
    }
    double v = whole * (double)u;
    if (!u || v > 1e15) {
        return GP_EINVAL;
    }
    *ms = (int64_t)llround(v);
    return 0;
}

int gp_hist_parse_duration(const char *s, int64_t *ms)
{
    int64_t v;
    if (parse_amount(s, 1000, &v) != 0 || v <= 0) {
        return GP_EINVAL;
    }
    *ms = v;
    return 0;
}

int gp_hist_parse_time(const char *s, int64_t now_ms, int64_t *ms)
{
    if (!s || !*s) {
        return GP_EINVAL;
    }
    if (strncmp(s, "now", 3) == 0) {
        s += 3;
        if (!*s) {
            *ms = now_ms;
            return 0;
        }
        if (*s != '-') {
            return GP_EINVAL;
        }
    }
    int64_t v;
    if (*s == '-') {
        /* relative: a unit is required ("-1h"), a bare number is seconds */
        if (parse_amount(s + 1, 1000, &v) != 0 || v > now_ms) {
            return GP_EINVAL;
        }
        *ms = now_ms - v;
        return 0;
    }
    const char *p = s;
    while ((*p >= '0' && *p <= '9') || *p == '.') {
        p++;
    }
    if (!*p) { /* unix seconds */
        if (parse_amount(s, 1000, &v) != 0) {
            return GP_EINVAL;
        }
        *ms = v;
        return 0;
    }
    return gp_meter_parse_time(s, ms) == 0 ? 0 : GP_EINVAL;
}
