/*
 * The autoscaler's arithmetic (gpupool/autoscale.h): one recommendation from the metric, then
 * the stabilisation windows over the recorded recommendations, then the bounds. Pure.
 */
#include "gpupool/autoscale.h"

#include "gpupool/error.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ceil(current x ratio), kept within int; a ratio that is not a finite number changes nothing. */
static int raw_recommendation(const gp_scale_input *in, double ratio)
{
    if (!in->have_value || !isfinite(ratio) || ratio < 0) {
        return in->current;
    }
    if (fabs(ratio - 1.0) <= in->tolerance) {
        return in->current;
    }
    if (in->current <= 0) {
        return in->min_replicas;
    }
    double want = ceil((double)in->current * ratio);
    if (want > (double)INT_MAX) {
        return INT_MAX;
    }
    return (int)want;
}

/* Kubernetes' stabilizeRecommendationWithBehaviors: the smallest recommendation over the up
 * window bounds a rise, the largest over the down window bounds a fall. */
static int stabilise(const gp_scale_input *in, const gp_scale_history *h, int rec)
{
    int up = rec;
    int down = rec;
    int64_t up_cut = in->now_ms - in->up_window_ms;
    int64_t down_cut = in->now_ms - in->down_window_ms;
    for (int i = 0; h && i < h->n; i++) {
        const gp_scale_rec *r = &h->v[i];
        if (r->at_ms > up_cut && r->replicas < up) {
            up = r->replicas;
        }
        if (r->at_ms > down_cut && r->replicas > down) {
            down = r->replicas;
        }
    }
    int out = in->current;
    if (out < up) {
        out = up;
    }
    if (out > down) {
        out = down;
    }
    return out;
}

int gp_autoscale_decide(const gp_scale_input *in, const gp_scale_history *h, gp_scale_decision *out)
{
    memset(out, 0, sizeof(*out));
    if (!(in->target > 0) || in->min_replicas < 0 || in->min_replicas > in->max_replicas ||
        in->up_window_ms < 0 || in->down_window_ms < 0 || in->tolerance < 0) {
        return GP_EINVAL;
    }
    double ratio = in->have_value ? in->value / in->target : 1.0;
    out->recommendation = raw_recommendation(in, ratio);
    int d = stabilise(in, h, out->recommendation);
    if (d < in->min_replicas) {
        d = in->min_replicas;
    }
    if (d > in->max_replicas) {
        d = in->max_replicas;
    }
    out->desired = d;
    out->dir = d > in->current ? GP_SCALE_UP : d < in->current ? GP_SCALE_DOWN : GP_SCALE_KEEP;
    if (in->have_value) {
        snprintf(out->reason, sizeof(out->reason),
                 "value %.2f target %.2f ratio %.2f: recommend %d, stabilised %d, bounds %d..%d",
                 in->value, in->target, ratio, out->recommendation, d, in->min_replicas,
                 in->max_replicas);
    } else {
        snprintf(out->reason, sizeof(out->reason), "no metric value: keep %d, bounds %d..%d",
                 in->current, in->min_replicas, in->max_replicas);
    }
    return 0;
}

int gp_autoscale_record(gp_scale_history *h, int64_t now_ms, int replicas, int64_t keep_ms)
{
    int64_t cut = now_ms - keep_ms;
    int drop = 0;
    while (drop < h->n && h->v[drop].at_ms <= cut) {
        drop++;
    }
    if (drop > 0) {
        memmove(h->v, h->v + drop, (size_t)(h->n - drop) * sizeof(*h->v));
        h->n -= drop;
    }
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 16;
        gp_scale_rec *v = realloc(h->v, (size_t)cap * sizeof(*v));
        if (!v) {
            return GP_ENOMEM;
        }
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n++] = (gp_scale_rec){now_ms, replicas};
    return 0;
}

void gp_autoscale_history_fini(gp_scale_history *h)
{
    free(h->v);
    memset(h, 0, sizeof(*h));
}
