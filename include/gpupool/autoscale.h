/*
 * The autoscaler's decision for one service: how many replicas it should have, from a metric
 * and its target, the way Kubernetes' HorizontalPodAutoscaler decides (pure: no clock, no I/O;
 * the caller passes the time, the metric and the recommendation history in).
 *
 *   ratio          = value / target  (value: the metric averaged over the ready replicas:
 *                                     GPU utilisation or GPU memory utilisation in percent, or
 *                                     the service's Prometheus metric per replica)
 *   recommendation = current                  when |ratio - 1| <= tolerance (default 10%)
 *                  = ceil(current x ratio)    otherwise
 *   stabilised     = the recommendation made over the last scale_up_window, taking the
 *                    smallest of them (a brief spike does not scale out), and over the last
 *                    scale_down_window, taking the largest (a brief lull does not scale in):
 *                    up   = min(recommendations within up window, this one)
 *                    down = max(recommendations within down window, this one)
 *                    desired = current, raised to up when below it, lowered to down when above
 *   desired        = stabilised, bounded by [min_replicas, max_replicas]
 *
 * With no value (no ready replica reported the metric) the recommendation is current (only the
 * bounds apply). The history holds the raw recommendations (before stabilisation), oldest first;
 * gp_autoscale_record appends one and drops those older than the longer window.
 */
#ifndef GPUPOOL_AUTOSCALE_H
#define GPUPOOL_AUTOSCALE_H

#include <stdbool.h>
#include <stdint.h>

#define GP_AUTOSCALE_TOLERANCE 0.1

typedef struct gp_scale_rec {
    int64_t at_ms;
    int replicas;
} gp_scale_rec;

/* A service's past recommendations; owns v. Zero-initialised is empty. */
typedef struct gp_scale_history {
    gp_scale_rec *v;
    int n, cap;
} gp_scale_history;

typedef struct gp_scale_input {
    int current; /* replicas the service has now (its target count) */
    int min_replicas, max_replicas;
    bool have_value;
    double value;
    double target; /* > 0 */
    double tolerance;
    int64_t now_ms;
    int64_t up_window_ms, down_window_ms; /* >= 0 */
} gp_scale_input;

typedef enum gp_scale_dir {
    GP_SCALE_KEEP = 0,
    GP_SCALE_UP = 1,
    GP_SCALE_DOWN = 2,
} gp_scale_dir;

typedef struct gp_scale_decision {
    int recommendation; /* this sample's, before stabilisation and bounds */
    int desired;        /* what the service should have */
    gp_scale_dir dir;   /* desired against current */
    char reason[192];   /* "value 85.0 target 50.0 ratio 1.70: recommend 4, stabilised 4" */
} gp_scale_decision;

/* The decision for in over the recommendations in h (not changed). in->target must be > 0 and
 * min_replicas <= max_replicas, else GP_EINVAL. 0 on success. */
int gp_autoscale_decide(const gp_scale_input *in, const gp_scale_history *h,
                        gp_scale_decision *out);

/* Appends (now_ms, replicas) to h and drops the recommendations older than now_ms - keep_ms.
 * 0 or GP_ENOMEM (h unchanged). */
int gp_autoscale_record(gp_scale_history *h, int64_t now_ms, int replicas, int64_t keep_ms);

void gp_autoscale_history_fini(gp_scale_history *h);

#endif
