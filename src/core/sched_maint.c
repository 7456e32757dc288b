/*
 * Maintenance windows in reasons: whether a job that found no room is kept off nodes only by
 * their maintenance deadlines, and the text that says so ("maintenance: dgx-1 drains at 14:00
 * UTC and the job may run 2h").
 *
 * A node with a window (gp_node.window_ms >= 0) takes only jobs whose max runtime ends before
 * its deadline. Such a node blocks a job when the job's runtime does not fit the window and the
 * node would pass the job's filter without it (free GPUs, CPU, memory, models, NVLink).
 *
 * Times: the deadline is the input's drain_at_ms for the node (the controller's stored
 * deadline), else now_ms + the window. It is written in UTC by arithmetic on the epoch (the core
 * has no time zone and no libc time functions): a reason is stored and read by people anywhere,
 * and UTC is what the CLI prints every other time in.
 */
#include "core/sched_impl.h"

#include <stdio.h>
#include <stdlib.h>

#define MS_PER_MIN INT64_C(60000)
#define MS_PER_DAY (INT64_C(86400) * 1000)

/* Floor division, for times before the epoch too. */
static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The civil date (proleptic Gregorian) of a day number since 1970-01-01 (H. Hinnant's
 * days_from_civil inverted). */
static void civil(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

void maint_utc_text(int64_t ms, int64_t now_ms, char *buf, size_t size)
{
    int64_t day = floor_div(ms, MS_PER_DAY), in_day = ms - day * MS_PER_DAY;
    int hh = (int)(in_day / 3600000), mm = (int)(in_day / MS_PER_MIN % 60);
    int ss = (int)(in_day / 1000 % 60);
    char date[32] = "", sec[8] = "";
    if (day != floor_div(now_ms, MS_PER_DAY)) {
        int64_t y;
        int m, d;
        civil(day, &y, &m, &d);
        snprintf(date, sizeof(date), "%04lld-%02d-%02d ", (long long)y, m, d);
    }
    if (ss) {
        snprintf(sec, sizeof(sec), ":%02d", ss);
    }
    snprintf(buf, size, "%s%02d:%02d%s UTC", date, hh, mm, sec);
}

void maint_duration_text(int64_t ms, char *buf, size_t size)
{
    static const struct {
        int64_t ms;
        char unit;
    } parts[] = {{MS_PER_DAY, 'd'}, {3600000, 'h'}, {MS_PER_MIN, 'm'}, {1000, 's'}};
    int64_t left = (ms + 999) / 1000 * 1000; /* whole seconds, rounded up */
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && used + 1 < size; i++) {
        if (left >= parts[i].ms) {
            int w = snprintf(buf + used, size - used, "%lld%c", (long long)(left / parts[i].ms),
                             parts[i].unit);
            used = w < 0 ? used : used + (size_t)w;
            left %= parts[i].ms;
        }
    }
    if (!buf[0]) {
        snprintf(buf, size, "0s");
    }
}

int maint_init(cycle *cy)
{
    int n = 0;
    for (int i = 0; i < cy->c->nnodes; i++) {
        n += cy->c->nodes[i].window_ms >= 0;
    }
    if (n == 0) {
        return 0;
    }
    cy->windowed = malloc(sizeof(int) * (size_t)n);
    if (!cy->windowed) {
        return GP_ENOMEM;
    }
    for (int i = 0; i < cy->c->nnodes; i++) {
        if (cy->c->nodes[i].window_ms >= 0) {
            cy->windowed[cy->nwindowed++] = i;
        }
    }
    return 0;
}

static int64_t deadline_of(const cycle *cy, int node)
{
    const int64_t *at = cy->in->drain_at_ms;
    return at && at[node] > 0 ? at[node] : cy->in->now_ms + cy->c->nodes[node].window_ms;
}

/* Whether node's window alone keeps a replica of jc off it. */
static bool window_blocks(cycle *cy, const job_ctx *jc, int node)
{
    gp_node *n = &cy->c->nodes[node];
    int64_t w = n->window_ms, run = jc->req.runtime_ms;
    if (w < 0 || (run > 0 && run <= w)) {
        return false;
    }
    n->window_ms = -1; /* for the filter only; no state changes */
    bool ok = node_ok(cy, cy->c, jc, node);
    n->window_ms = w;
    return ok;
}

bool maint_reason(cycle *cy, const job_ctx *jc, int need, char *reason)
{
    int count = 0, last = -1;
    int64_t last_at = 0;
    for (int i = 0; i < cy->nwindowed; i++) {
        int node = cy->windowed[i];
        if (window_blocks(cy, jc, node)) {
            int64_t at = deadline_of(cy, node);
            if (last < 0 || at > last_at) {
                last = node;
                last_at = at;
            }
            count++;
        }
    }
    if (count == 0 || count < need) {
        return false;
    }
    char when[48], run[48] = "sets no max runtime", more[64] = "";
    maint_utc_text(last_at, cy->in->now_ms, when, sizeof(when));
    if (jc->req.runtime_ms > 0) {
        char d[32];
        maint_duration_text(jc->req.runtime_ms, d, sizeof(d));
        snprintf(run, sizeof(run), "may run %s", d);
    }
    if (count > 1) {
        snprintf(more, sizeof(more), "; %d more node%s that could hold it drain%s by then",
                 count - 1, count > 2 ? "s" : "", count > 2 ? "" : "s");
    }
    reasonf(reason, "maintenance: %s drains at %s and the job %s%s", cy->c->nodes[last].name, when,
            run, more);
    return true;
}
