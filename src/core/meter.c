/*
 * Metering math (see gpupool/meter.h): clipping, splitting at period boundaries and price
 * changes, exact sums, and the cents of each row by the largest-remainder method.
 *
 * Every interval is cut into parts [t, e) that lie in one period and under one price. Each part
 * carries its integer amounts and its money as a 128-bit numerator over MONEY_DEN (cents). Parts
 * are then sorted by (key, period) and merged into rows. The total's numerator is the sum of all
 * parts, whatever the grouping, so the total is the same for every grouping; the rows' cents are
 * distributed from it.
 */
#include "gpupool/meter.h"
#include "gpupool/modelname.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define MS_PER_DAY  INT64_C(86400000)
#define MS_PER_HOUR INT64_C(3600000)
#define PPM         INT64_C(1000000)
#define MIB_PER_GIB INT64_C(1024)

/* The money denominator: a numerator of MONEY_DEN is one cent. A numerator is micro-currency
 * per hour x milli x ms x the discount's parts per million x MiB per GiB; dividing it by micro
 * per cent (1e4), milli per unit (1e3), ms per hour, ppm and MiB per GiB gives cents. */
static u128 money_den(void)
{
    return (u128)10000 * 1000 * (u128)MS_PER_HOUR * (u128)PPM * (u128)MIB_PER_GIB;
}

/* ---- names ---- */

static const char *const kind_names[] = {"whole", "fraction", "mig", NULL};
static const char *const by_names[] = {"tenant", "queue", "node", "job", "model", NULL};
static const char *const period_names[] = {"none", "day", "week", "month", NULL};

static int parse_name(const char *const *names, const char *s, int *out)
{
    for (int i = 0; s && names[i]; i++) {
        if (strcmp(names[i], s) == 0) {
            *out = i;
            return 0;
        }
    }
    return GP_EINVAL;
}

const char *gp_meter_kind_name(gp_meter_kind k)
{
    return k >= GP_METER_WHOLE && k <= GP_METER_MIG ? kind_names[k] : "?";
}

int gp_meter_kind_parse(const char *s, gp_meter_kind *out)
{
    int v;
    int rc = parse_name(kind_names, s, &v);
    if (rc == 0) {
        *out = (gp_meter_kind)v;
    }
    return rc;
}

const char *gp_meter_by_name(gp_meter_by b)
{
    return b >= GP_METER_BY_TENANT && b <= GP_METER_BY_MODEL ? by_names[b] : "?";
}

int gp_meter_by_parse(const char *s, gp_meter_by *out)
{
    int v;
    int rc = parse_name(by_names, s, &v);
    if (rc == 0) {
        *out = (gp_meter_by)v;
    }
    return rc;
}

const char *gp_meter_period_name(gp_meter_period p)
{
    return p >= GP_METER_NONE && p <= GP_METER_MONTH ? period_names[p] : "?";
}

int gp_meter_period_parse(const char *s, gp_meter_period *out)
{
    int v;
    int rc = parse_name(period_names, s, &v);
    if (rc == 0) {
        *out = (gp_meter_period)v;
    }
    return rc;
}

/* ---- the calendar (proleptic Gregorian, UTC) ---- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Days from 1970-01-01 to y-m-d. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int month_days(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* Far enough from the ends of int64 that no period arithmetic overflows. */
#define T_LIMIT (INT64_C(1) << 52)

int64_t gp_meter_period_start(int64_t t, gp_meter_period p)
{
    if (p == GP_METER_NONE || t < -T_LIMIT || t > T_LIMIT) {
        return INT64_MIN;
    }
    int64_t day = floor_div(t, MS_PER_DAY);
    if (p == GP_METER_DAY) {
        return day * MS_PER_DAY;
    }
    if (p == GP_METER_WEEK) {
        /* 1970-01-01 was a Thursday: Mondays are the days d with (d + 3) % 7 == 0. */
        return (floor_div(day + 3, 7) * 7 - 3) * MS_PER_DAY;
    }
    int64_t y;
    int m, d;
    civil_from_days(day, &y, &m, &d);
    return days_from_civil(y, m, 1) * MS_PER_DAY;
}

int64_t gp_meter_period_next(int64_t start, gp_meter_period p)
{
    if (p == GP_METER_NONE || start < -T_LIMIT || start > T_LIMIT) {
        return INT64_MAX;
    }
    if (p == GP_METER_DAY) {
        return start + MS_PER_DAY;
    }
    if (p == GP_METER_WEEK) {
        return start + 7 * MS_PER_DAY;
    }
    int64_t y;
    int m, d;
    civil_from_days(floor_div(start, MS_PER_DAY), &y, &m, &d);
    return start + month_days(y, m) * MS_PER_DAY;
}

/* ---- text ---- */

/* n decimal digits at *p into *out, advancing *p. */
static bool digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9') {
            return false;
        }
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return true;
}

/* The time of day and zone after a date: "T12:00:00[.250](Z|+02:00)", as ms to add. */
static int parse_clock(const char *p, int64_t *ms)
{
    int h, mi, sec, oh = 0, om = 0, frac = 0;
    if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
        !digits(&p, 2, &sec) || h > 23 || mi > 59 || sec > 60) {
        return GP_EINVAL;
    }
    if (*p == '.') {
        p++;
        int n = 0;
        for (; *p >= '0' && *p <= '9'; p++, n++) {
            frac = n < 3 ? frac * 10 + (*p - '0') : frac;
        }
        for (int k = n; k < 3; k++) {
            frac *= 10;
        }
        if (n == 0) {
            return GP_EINVAL;
        }
    }
    int sign = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p++ == '+' ? 1 : -1;
        if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 || om > 59) {
            return GP_EINVAL;
        }
    } else {
        return GP_EINVAL;
    }
    if (*p) {
        return GP_EINVAL;
    }
    *ms = ((int64_t)h * 3600 + mi * 60 + sec - sign * (oh * 3600 + om * 60)) * 1000 + frac;
    return 0;
}

int gp_meter_parse_time(const char *s, int64_t *ms)
{
    int y, mo, d;
    const char *p = s;
    if (!s || !digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
        !digits(&p, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo)) {
        return GP_EINVAL;
    }
    int64_t clock = 0;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        if (parse_clock(p + 1, &clock) < 0) {
            return GP_EINVAL;
        }
    } else if (*p) {
        return GP_EINVAL;
    }
    *ms = days_from_civil(y, mo, d) * MS_PER_DAY + clock;
    return 0;
}

void gp_meter_time_text(int64_t t, char *buf, size_t cap)
{
    if (t < -T_LIMIT || t > T_LIMIT) {
        snprintf(buf, cap, "-");
        return;
    }
    int64_t day = floor_div(t, MS_PER_DAY), rest = t - day * MS_PER_DAY;
    int64_t y;
    int m, d;
    civil_from_days(day, &y, &m, &d);
    int h = (int)(rest / MS_PER_HOUR), mi = (int)(rest / 60000 % 60), s = (int)(rest / 1000 % 60);
    int ms = (int)(rest % 1000);
    if (ms) {
        snprintf(buf, cap, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ", (long long)y, m, d, h, mi, s,
                 ms);
    } else {
        snprintf(buf, cap, "%04lld-%02d-%02dT%02d:%02d:%02dZ", (long long)y, m, d, h, mi, s);
    }
}

int gp_meter_parse_micro(const char *s, int64_t *out)
{
    if (!s || !*s) {
        return GP_EINVAL;
    }
    int64_t whole = 0, frac = 0;
    int nint = 0, nfrac = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++, nint++) {
        if (whole > INT64_C(1000000000)) {
            return GP_EINVAL;
        }
        whole = whole * 10 + (*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, nfrac++) {
            if (nfrac >= 6) {
                return GP_EINVAL;
            }
            frac = frac * 10 + (*p - '0');
        }
        if (nfrac == 0) {
            return GP_EINVAL;
        }
    }
    if (*p || nint == 0 || whole > INT64_C(1000000000) ||
        (whole == INT64_C(1000000000) && frac > 0)) {
        return GP_EINVAL;
    }
    for (int k = nfrac; k < 6; k++) {
        frac *= 10;
    }
    *out = whole * PPM + frac;
    return 0;
}

void gp_meter_cents_text(int64_t cents, char *buf, size_t cap)
{
    uint64_t a = cents < 0 ? (uint64_t)0 - (uint64_t)cents : (uint64_t)cents;
    snprintf(buf, cap, "%s%llu.%02u", cents < 0 ? "-" : "", (unsigned long long)(a / 100),
             (unsigned)(a % 100));
}

/* ---- the cost model ---- */

int gp_meter_cost_hourly(const gp_meter_cost_model *m, int64_t *hourly_micro)
{
    if (m->depreciation_months < 1 || m->purchase_micro < 0 || m->power_w_micro < 0 ||
        m->electricity_kwh_micro < 0 || m->overhead_micro < 0) {
        return GP_EINVAL;
    }
    /* (p / (M x 730) + w x e / 1e9) x (1e6 + o) / 1e6, in micro-units, over one denominator. */
    u128 hours = (u128)m->depreciation_months * 730;
    u128 a = (u128)m->purchase_micro * 1000000000u;
    u128 b;
    if (__builtin_mul_overflow((u128)m->power_w_micro * (u128)m->electricity_kwh_micro, hours,
                               &b)) {
        return GP_ERANGE;
    }
    u128 num, den = hours * 1000000000u * (u128)PPM;
    if (__builtin_add_overflow(a, b, &num) ||
        __builtin_mul_overflow(num, (u128)PPM + (u128)m->overhead_micro, &num)) {
        return GP_ERANGE;
    }
    u128 v = (num + den / 2) / den;
    if (v > (u128)INT64_MAX) {
        return GP_ERANGE;
    }
    *hourly_micro = (int64_t)v;
    return 0;
}

/* ---- prices ---- */

/* The price entries sorted by (model, from). */
#define PRICE_MEMO 64

typedef struct price_memo {
    const char *model; /* an interval's, borrowed */
    int64_t mem_mib;
    int lo, hi; /* the entries it pays */
} price_memo;

typedef struct price_index {
    const gp_meter_price **e;
    int n;
    price_memo memo[PRICE_MEMO]; /* models resolved so far */
    int nmemo;
} price_index;

static int by_model_from(const void *a, const void *b)
{
    const gp_meter_price *x = *(const gp_meter_price *const *)a;
    const gp_meter_price *y = *(const gp_meter_price *const *)b;
    int c = strcmp(x->model, y->model);
    if (c) {
        return c;
    }
    return x->from_ms < y->from_ms ? -1 : x->from_ms > y->from_ms;
}

/* The entries [lo, hi) of the most specific name naming model (lo == hi: none). */
static void resolve_model(const price_index *px, const char *model, int64_t mem_mib, int *lo,
                          int *hi)
{
    int best = 0;
    *lo = *hi = 0;
    for (int i = 0; i < px->n;) {
        int end = i + 1;
        while (end < px->n && strcmp(px->e[end]->model, px->e[i]->model) == 0) {
            end++;
        }
        int rank = gp_model_name_match(px->e[i]->model, model, mem_mib);
        if (rank > best) {
            best = rank;
            *lo = i;
            *hi = end;
        }
        i = end;
    }
}

/* resolve_model, remembered for the models seen (most reports have a few). */
static void model_range(price_index *px, const gp_meter_interval *iv, int *lo, int *hi)
{
    const char *model = iv->model ? iv->model : "";
    for (int k = 0; k < px->nmemo; k++) {
        const price_memo *m = &px->memo[k];
        if (m->mem_mib == iv->model_mem_mib && strcmp(m->model, model) == 0) {
            *lo = m->lo;
            *hi = m->hi;
            return;
        }
    }
    resolve_model(px, model, iv->model_mem_mib, lo, hi);
    if (px->nmemo < PRICE_MEMO) {
        px->memo[px->nmemo++] = (price_memo){model, iv->model_mem_mib, *lo, *hi};
    }
}

/* Of model's entries [lo, hi): the one in force at t (NULL: none yet) and when the next one
 * starts (INT64_MAX: never). */
static const gp_meter_price *price_at(const price_index *px, int lo, int hi, int64_t t,
                                      int64_t *next)
{
    const gp_meter_price *cur = NULL;
    *next = INT64_MAX;
    for (int i = lo; i < hi; i++) {
        if (px->e[i]->from_ms <= t) {
            cur = px->e[i];
        } else {
            *next = px->e[i]->from_ms;
            break;
        }
    }
    return cur;
}

static const gp_meter_mig_price *mig_price(const gp_meter_price *p, const char *profile)
{
    for (int i = 0; profile && i < p->nmig; i++) {
        if (strcmp(p->mig[i].profile, profile) == 0) {
            return &p->mig[i];
        }
    }
    return NULL;
}

/* ---- parts ---- */

typedef struct part {
    const char *key;
    int64_t period;
    int64_t gpu, used, cpu, mem, unpriced;
    u128 money;
} part;

typedef struct parts {
    part *v;
    int n, cap;
} parts;

static int parts_add(parts *ps, const part *p)
{
    if (ps->n == ps->cap) {
        int ncap = ps->cap ? ps->cap * 2 : 256;
        part *nv = ncap > ps->cap ? realloc(ps->v, sizeof(*nv) * (size_t)ncap) : NULL;
        if (!nv) {
            return GP_ENOMEM;
        }
        ps->v = nv;
        ps->cap = ncap;
    }
    ps->v[ps->n++] = *p;
    return 0;
}

static bool mul(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

static bool umul(u128 a, u128 b, u128 *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* The money of part [t, t + len) of iv under price p (NULL: none for its GPUs). */
static int part_money(const gp_meter_interval *iv, const gp_meter_price *p,
                      const gp_meter_prices *pr, int64_t len, part *out)
{
    u128 gpu = 0, cpu = 0, mem = 0;
    bool ok = true;
    if (iv->gpus > 0 && iv->milli > 0) {
        u128 gm = (u128)out->gpu; /* gpus x milli x len */
        const gp_meter_mig_price *mp =
            p && iv->kind == GP_METER_MIG ? mig_price(p, iv->mig_profile) : NULL;
        if (!p) {
            out->unpriced = out->gpu;
        } else if (mp) {
            ok = umul((u128)mp->hourly_micro * 1000000000u * MIB_PER_GIB,
                      (u128)iv->gpus * (u128)len, &gpu);
        } else if (iv->kind == GP_METER_FRACTION) {
            u128 rate = p->fraction_hourly_micro >= 0
                            ? (u128)p->fraction_hourly_micro * PPM
                            : (u128)p->hourly_micro * (u128)(PPM - pr->shared_discount_ppm);
            ok = umul(rate * MIB_PER_GIB, gm, &gpu);
        } else {
            ok = umul((u128)p->hourly_micro * PPM * MIB_PER_GIB, gm, &gpu);
        }
    }
    ok = ok && umul((u128)pr->cpu_core_hour_micro * PPM * MIB_PER_GIB, (u128)out->cpu, &cpu);
    ok = ok && umul((u128)pr->memory_gib_hour_micro * 1000000000u, (u128)out->mem, &mem);
    ok = ok && !__builtin_add_overflow(gpu, cpu, &out->money) &&
         !__builtin_add_overflow(out->money, mem, &out->money);
    return ok ? 0 : GP_ERANGE;
}

static const char *key_of(const gp_meter_interval *iv, gp_meter_by by)
{
    const char *k = by == GP_METER_BY_TENANT  ? iv->tenant
                    : by == GP_METER_BY_QUEUE ? iv->queue
                    : by == GP_METER_BY_NODE  ? iv->node
                    : by == GP_METER_BY_JOB   ? iv->job
                                              : iv->model;
    return k ? k : "";
}

static int check_interval(const gp_meter_interval *iv, int i, gp_diag *d)
{
    if (iv->gpus < 0 || iv->milli < 0 || iv->milli > 1000 || iv->cpu_milli < 0 ||
        iv->memory_mib < 0 || iv->used_milli_ms < 0) {
        return gp_diag_set(d, GP_EINVAL, "usage interval %d: negative amounts or milli above 1000",
                           i);
    }
    if (iv->kind < GP_METER_WHOLE || iv->kind > GP_METER_MIG) {
        return gp_diag_set(d, GP_EINVAL, "usage interval %d: unknown kind", i);
    }
    return 0;
}

/* Cuts iv's part in [from, to) at periods and price changes into ps. */
static int split(const gp_meter_interval *iv, int idx, price_index *px, const gp_meter_prices *pr,
                 const gp_meter_query *q, parts *ps, gp_diag *d)
{
    int rc = check_interval(iv, idx, d);
    int64_t a = iv->start_ms > q->from_ms ? iv->start_ms : q->from_ms;
    int64_t b = iv->end_ms < q->to_ms ? iv->end_ms : q->to_ms;
    if (rc < 0 || a >= b) {
        return rc;
    }
    int64_t total_len = iv->end_ms - iv->start_ms, milli_total;
    int64_t alloc_total;
    if (!mul(iv->gpus, iv->milli, &milli_total) || !mul(milli_total, total_len, &alloc_total)) {
        return gp_diag_set(d, GP_ERANGE, "usage interval %d: too large", idx);
    }
    int64_t used_total = iv->used_milli_ms < alloc_total ? iv->used_milli_ms : alloc_total;
    int lo = 0, hi = 0;
    if (px) {
        model_range(px, iv, &lo, &hi);
    }
    for (int64_t t = a; t < b;) {
        int64_t pstart =
            q->period == GP_METER_NONE ? q->from_ms : gp_meter_period_start(t, q->period);
        int64_t e = gp_meter_period_next(pstart, q->period), next_price = INT64_MAX;
        const gp_meter_price *p = px ? price_at(px, lo, hi, t, &next_price) : NULL;
        e = e < b ? e : b;
        e = e < next_price ? e : next_price;
        int64_t len = e - t;
        part pt = {.key = key_of(iv, q->by), .period = pstart};
        if (!mul(milli_total, len, &pt.gpu) || !mul(iv->cpu_milli, len, &pt.cpu) ||
            !mul(iv->memory_mib, len, &pt.mem)) {
            return gp_diag_set(d, GP_ERANGE, "usage interval %d: too large", idx);
        }
        pt.used = (int64_t)((u128)used_total * (u128)len / (u128)total_len);
        if (pr && part_money(iv, p, pr, len, &pt) < 0) {
            return gp_diag_set(d, GP_ERANGE, "usage interval %d: cost too large", idx);
        }
        if ((rc = parts_add(ps, &pt)) < 0) {
            return gp_diag_set(d, rc, "out of memory");
        }
        t = e;
    }
    return 0;
}

static int by_key_period(const void *a, const void *b)
{
    const part *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) {
        return c;
    }
    return x->period < y->period ? -1 : x->period > y->period;
}

static bool add_row(gp_meter_row *r, const part *p)
{
    return !__builtin_add_overflow(r->gpu_milli_ms, p->gpu, &r->gpu_milli_ms) &&
           !__builtin_add_overflow(r->used_milli_ms, p->used, &r->used_milli_ms) &&
           !__builtin_add_overflow(r->cpu_milli_ms, p->cpu, &r->cpu_milli_ms) &&
           !__builtin_add_overflow(r->memory_mib_ms, p->mem, &r->memory_mib_ms) &&
           !__builtin_add_overflow(r->unpriced_milli_ms, p->unpriced, &r->unpriced_milli_ms);
}

/* For the largest-remainder pass: a row's remainder and index. */
typedef struct rem {
    u128 r;
    int row;
} rem;

static int by_remainder(const void *a, const void *b)
{
    const rem *x = a, *y = b;
    if (x->r != y->r) {
        return x->r > y->r ? -1 : 1;
    }
    return x->row - y->row; /* ties: the earlier row */
}

/* Merges the sorted parts into rows and gives them their cents. */
static int merge(parts *ps, gp_meter_report *out, gp_diag *d)
{
    out->rows = calloc((size_t)ps->n + 1, sizeof(*out->rows));
    u128 *num = calloc((size_t)ps->n + 1, sizeof(*num));
    rem *rems = calloc((size_t)ps->n + 1, sizeof(*rems));
    int rc = out->rows && num && rems ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
    u128 total = 0;
    for (int i = 0; rc == 0 && i < ps->n; i++) {
        const part *p = &ps->v[i];
        if (out->nrows == 0 || by_key_period(p, &ps->v[i - 1]) != 0) {
            out->rows[out->nrows++] = (gp_meter_row){.key = p->key, .period_start_ms = p->period};
        }
        int k = out->nrows - 1;
        if (!add_row(&out->rows[k], p) || !add_row(&out->total, p) ||
            __builtin_add_overflow(num[k], p->money, &num[k]) ||
            __builtin_add_overflow(total, p->money, &total)) {
            rc = gp_diag_set(d, GP_ERANGE, "usage sums too large");
        }
    }
    u128 den = money_den(), cents = 0;
    if (rc == 0 && (total > ~(u128)0 - den || (cents = (total + den / 2) / den) > INT64_MAX)) {
        rc = gp_diag_set(d, GP_ERANGE, "cost too large");
    }
    if (rc == 0) {
        out->total.cost_cents = (int64_t)cents;
        u128 given = 0;
        for (int k = 0; k < out->nrows; k++) {
            out->rows[k].cost_cents = (int64_t)(num[k] / den);
            given += num[k] / den;
            rems[k] = (rem){num[k] % den, k};
        }
        /* given <= floor(total / den) <= cents, and cents - given <= nrows (each remainder is
         * below one cent). */
        qsort(rems, (size_t)out->nrows, sizeof(*rems), by_remainder);
        for (int i = 0; given < cents && i < out->nrows; i++, given++) {
            out->rows[rems[i].row].cost_cents++;
        }
    }
    free(num);
    free(rems);
    return rc;
}

int gp_meter_report_build(const gp_meter_interval *iv, int n, const gp_meter_prices *prices,
                          const gp_meter_query *q, gp_meter_report *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    if (q->from_ms >= q->to_ms) {
        return gp_diag_set(d, GP_EINVAL, "from must be before to");
    }
    if (q->by < GP_METER_BY_TENANT || q->by > GP_METER_BY_MODEL || q->period < GP_METER_NONE ||
        q->period > GP_METER_MONTH) {
        return gp_diag_set(d, GP_EINVAL, "unknown grouping or period");
    }
    if (prices && (prices->shared_discount_ppm < 0 || prices->shared_discount_ppm > PPM ||
                   prices->cpu_core_hour_micro < 0 || prices->memory_gib_hour_micro < 0)) {
        return gp_diag_set(d, GP_EINVAL, "prices: negative, or a discount above 1");
    }
    price_index px = {.e = NULL, .n = 0, .nmemo = 0};
    int rc = 0;
    if (prices && prices->nentries > 0) {
        px.e = malloc(sizeof(*px.e) * (size_t)prices->nentries);
        if (!px.e) {
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
        for (int i = 0; i < prices->nentries; i++) {
            const gp_meter_price *e = &prices->entries[i];
            if (e->hourly_micro < 0 || e->nmig < 0 || e->nmig > GP_METER_MIG_MAX) {
                rc = gp_diag_set(d, GP_EINVAL, "prices[%d]: negative price", i);
            }
            px.e[px.n++] = e;
        }
        qsort(px.e, (size_t)px.n, sizeof(*px.e), by_model_from);
    }
    parts ps = {NULL, 0, 0};
    for (int i = 0; rc == 0 && i < n; i++) {
        rc = split(&iv[i], i, prices ? &px : NULL, prices, q, &ps, d);
    }
    free(px.e);
    if (rc == 0 && ps.n > 0) {
        qsort(ps.v, (size_t)ps.n, sizeof(*ps.v), by_key_period);
    }
    if (rc == 0) {
        rc = merge(&ps, out, d);
    }
    free(ps.v);
    out->total.period_start_ms = q->from_ms;
    out->priced = prices != NULL;
    if (rc < 0) {
        gp_meter_report_fini(out);
    }
    return rc;
}

void gp_meter_report_fini(gp_meter_report *r)
{
    if (!r) {
        return;
    }
    free(r->rows);
    memset(r, 0, sizeof(*r));
}
