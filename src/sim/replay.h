/*
 * One replay of a pod trace through the placement engine, by the published methodology:
 *
 *   1. the pods, in file order, are shuffled with the seed;
 *   2. pods drawn uniformly with replacement from the original list (CPU-only pods included) are
 *      appended until the total GPU request (num_gpu x gpu_milli) reaches inflate x the cluster's
 *      GPU capacity (the pod that reaches it is included); a trace that asks for more than that
 *      first loses pods drawn at random until it does not, then is topped up the same way, so
 *      the last arrival always reaches the target;
 *   3. pods only arrive: each is placed by the policy or, when no node fits, counted as failed
 *      and skipped;
 *   4. ties between equally scored nodes go to the first node of a node order drawn at random
 *      per seed (the reference simulator's behaviour, GP_TIES_ORDERED) or, on request, to a node
 *      drawn at random at every decision (GP_TIES_RANDOM);
 *   5. after every arrival, allocated and arrived milli-GPU are recorded as % of capacity
 *      (arrived counts failed pods too, before the attempt).
 * The policy's target workload (FGD) is derived from the original pod list.
 */
#ifndef GP_SIM_REPLAY_H
#define GP_SIM_REPLAY_H

#include "gpupool/placement.h"
#include "sim/trace.h"

#include <stdint.h>

typedef struct gp_replay_point {
    float arrived_pct;
    float allocated_pct;
} gp_replay_point;

typedef struct gp_replay_result {
    double unalloc_at_100;     /* 100 - allocated % at the first arrival with arrived % >= 100;
                                  NAN when arrivals never reach it (inflate < 1) */
    double unalloc_at_130;     /* same at 130; NAN when arrivals never reach it */
    double window_unalloc_100; /* 100 - mean allocated % over arrivals with arrived % in
                                  [99.5, 100.5]: the published figures' aggregation; NAN when
                                  no arrival falls there */
    int placed;
    int failed;
    int arrivals;
    gp_replay_point *curve; /* one point per arrival; owned, free with gp_replay_result_fini */
} gp_replay_result;

typedef enum gp_tie_mode {
    GP_TIES_ORDERED = 0,
    GP_TIES_RANDOM = 1,
} gp_tie_mode;

typedef struct gp_replay_params {
    const char *policy; /* a name from gp_policy_names() */
    uint64_t seed;
    double inflate;   /* 1.3 in the published runs; > 0 */
    int keep_curve;   /* fill result->curve */
    gp_tie_mode ties; /* GP_TIES_ORDERED (0) unless set */
} gp_replay_params;

/* Runs one replay. t must hold nodes and pods. 0, or a negative code with d saying why
 * (unknown policy, out of memory); on failure *out is zeroed and holds nothing to free.
 * Thread-safe: shares nothing between calls. */
int gp_replay_run(const gp_trace *t, const gp_replay_params *p, gp_replay_result *out, gp_diag *d);
void gp_replay_result_fini(gp_replay_result *r);

#endif
