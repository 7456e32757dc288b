/*
 * One trace replay (see replay.h for the methodology). The arrival order and the placement
 * decisions draw from two independent generators seeded from the seed, so every policy sees the
 * same arrivals for a given seed.
 */
#include "sim/replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ORDER_STREAM     0x6f72646572ull /* "order" */
#define PLACE_STREAM     0x706c616365ull /* "place" */
#define RANK_STREAM      0x72616e6bull   /* "rank" */
#define TYPICAL_COVERAGE 0.95

static int64_t pod_gpu_milli(const gp_trace_pod *p)
{
    return (int64_t)p->num_gpu * p->gpu_milli;
}

/* The arrival sequence: the pods shuffled, then tuned to inflate x capacity. *out malloc'd. */
static int arrivals(const gp_trace *t, int64_t capacity, double inflate, uint64_t seed, int **out,
                    int *nout)
{
    gp_rng rng;
    gp_rng_seed(&rng, seed ^ ORDER_STREAM);
    int n = t->npods, cap = n + 16;
    int *seq = malloc(sizeof(int) * (size_t)cap);
    if (!seq) {
        return GP_ENOMEM;
    }
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        seq[i] = i;
        total += pod_gpu_milli(&t->pods[i]);
    }
    for (int i = n - 1; i > 0; i--) {
        int j = (int)gp_rng_below(&rng, (uint64_t)i + 1);
        int tmp = seq[i];
        seq[i] = seq[j];
        seq[j] = tmp;
    }
    /* Down to the target when the trace asks for more (random pods out), then up to it (random
     * pods in, the one that reaches it included), so the last arrival is at >= target. */
    double target = inflate * (double)capacity;
    while (n > 0 && (double)total > target) {
        int k = (int)gp_rng_below(&rng, (uint64_t)n);
        total -= pod_gpu_milli(&t->pods[seq[k]]);
        memmove(seq + k, seq + k + 1, sizeof(int) * (size_t)(n - k - 1));
        n--;
    }
    while (total > 0 && (double)total < target) {
        int idx = (int)gp_rng_below(&rng, (uint64_t)t->npods);
        if (n == cap) {
            cap *= 2;
            int *ns = realloc(seq, sizeof(int) * (size_t)cap);
            if (!ns) {
                free(seq);
                return GP_ENOMEM;
            }
            seq = ns;
        }
        seq[n++] = idx;
        total += pod_gpu_milli(&t->pods[idx]);
    }
    *out = seq;
    *nout = n;
    return 0;
}

/* A random rank for every node: ties go to the lowest. *out malloc'd. */
static int node_order(int n, uint64_t seed, uint32_t **out)
{
    gp_rng rng;
    gp_rng_seed(&rng, seed ^ RANK_STREAM);
    uint32_t *rank = malloc(sizeof(uint32_t) * (size_t)(n ? n : 1));
    if (!rank) {
        return GP_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        rank[i] = (uint32_t)i;
    }
    for (int i = n - 1; i > 0; i--) {
        int j = (int)gp_rng_below(&rng, (uint64_t)i + 1);
        uint32_t tmp = rank[i];
        rank[i] = rank[j];
        rank[j] = tmp;
    }
    *out = rank;
    return 0;
}

typedef struct prepared {
    uint32_t *rank;
    gp_cluster *cluster;
    gp_request *requests;
    gp_policy *policy;
    gp_placer *placer;
} prepared;

static void prepared_fini(prepared *pr)
{
    gp_placer_free(pr->placer);
    gp_policy_free(pr->policy);
    free(pr->requests);
    free(pr->rank);
    gp_cluster_free(pr->cluster);
}

static int prepare(const gp_trace *t, const char *policy, prepared *pr, gp_diag *d)
{
    memset(pr, 0, sizeof(*pr));
    int rc = gp_trace_build_cluster(t, &pr->cluster, d);
    if (rc < 0) {
        return rc;
    }
    pr->requests = malloc(sizeof(gp_request) * (size_t)(t->npods ? t->npods : 1));
    if (!pr->requests) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (int i = 0; i < t->npods; i++) {
        gp_trace_pod_request(pr->cluster, &t->pods[i], &pr->requests[i]);
    }
    gp_workload_item *items = NULL;
    int nitems = 0;
    rc = gp_workload_typical(pr->requests, t->npods, TYPICAL_COVERAGE, &items, &nitems);
    if (rc < 0) {
        return gp_diag_set(d, rc, "target workload: %s", gp_strerror(rc));
    }
    gp_workload w = {items, nitems};
    rc = gp_policy_new(policy, &w, &pr->policy, d);
    free(items);
    if (rc < 0) {
        return rc;
    }
    gp_policy_fit(pr->policy, pr->cluster);
    rc = gp_placer_new(pr->cluster, pr->policy, &pr->placer);
    if (rc < 0) {
        return gp_diag_set(d, rc, "placer: %s", gp_strerror(rc));
    }
    return 0;
}

/* Fills the summary figures from the per-arrival series. */
static void summarise(const int64_t *arrived, const int64_t *allocated, int n, int64_t capacity,
                      gp_replay_result *out)
{
    out->unalloc_at_100 = out->unalloc_at_130 = out->window_unalloc_100 = NAN;
    double window_sum = 0.0;
    int window_n = 0;
    for (int i = 0; i < n; i++) {
        double alloc_pct = 100.0 * (double)allocated[i] / (double)capacity;
        if (isnan(out->unalloc_at_100) && arrived[i] * 100 >= 100 * capacity) {
            out->unalloc_at_100 = 100.0 - alloc_pct;
        }
        if (isnan(out->unalloc_at_130) && arrived[i] * 100 >= 130 * capacity) {
            out->unalloc_at_130 = 100.0 - alloc_pct;
        }
        /* arrived % rounds to 100 (half to even): 99.5 <= arrived % <= 100.5 */
        if (arrived[i] * 1000 >= 995 * capacity && arrived[i] * 1000 <= 1005 * capacity) {
            window_sum += alloc_pct;
            window_n++;
        }
    }
    if (window_n > 0) {
        out->window_unalloc_100 = 100.0 - window_sum / window_n;
    }
}

static int run(const gp_trace *t, prepared *pr, const gp_replay_params *p, gp_replay_result *out,
               gp_diag *d)
{
    int64_t capacity = gp_cluster_gpu_milli_capacity(pr->cluster);
    if (capacity <= 0) {
        return gp_diag_set(d, GP_EINVAL, "the node list has no GPU");
    }
    int *seq, n;
    if (arrivals(t, capacity, p->inflate, p->seed, &seq, &n) < 0) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (p->ties == GP_TIES_ORDERED && node_order(t->nnodes, p->seed, &pr->rank) < 0) {
        free(seq);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int64_t *arrived = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    int64_t *allocated = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!arrived || !allocated) {
        free(seq);
        free(arrived);
        free(allocated);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    gp_rng rng;
    gp_rng_seed(&rng, p->seed ^ PLACE_STREAM);
    if (p->ties == GP_TIES_ORDERED) {
        gp_placer_set_tie_rank(pr->placer, pr->rank);
    }
    int64_t arrived_milli = 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const gp_request *r = &pr->requests[seq[i]];
        arrived_milli += pod_gpu_milli(&t->pods[seq[i]]);
        gp_assignment a;
        rc = gp_placer_place(pr->placer, r, &rng, &a, NULL);
        if (rc == 0) {
            rc = gp_cluster_assign(pr->cluster, &a);
            out->placed++;
        } else if (rc == GP_ENOSPC) {
            rc = 0;
            out->failed++;
        }
        arrived[i] = arrived_milli;
        allocated[i] = gp_cluster_gpu_milli_allocated(pr->cluster);
    }
    if (rc < 0) {
        gp_diag_set(d, rc, "placement failed: %s", gp_strerror(rc));
    } else {
        out->arrivals = n;
        summarise(arrived, allocated, n, capacity, out);
        if (p->keep_curve) {
            out->curve = malloc(sizeof(gp_replay_point) * (size_t)(n ? n : 1));
            for (int i = 0; out->curve && i < n; i++) {
                out->curve[i].arrived_pct = (float)(100.0 * (double)arrived[i] / (double)capacity);
                out->curve[i].allocated_pct =
                    (float)(100.0 * (double)allocated[i] / (double)capacity);
            }
            if (!out->curve) {
                rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
            }
        }
    }
    free(seq);
    free(arrived);
    free(allocated);
    return rc;
}

int gp_replay_run(const gp_trace *t, const gp_replay_params *p, gp_replay_result *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    if (!(p->inflate > 0.0) || p->inflate > 100.0) {
        return gp_diag_set(d, GP_EINVAL, "inflate: must be > 0 and <= 100");
    }
    prepared pr;
    int rc = prepare(t, p->policy, &pr, d);
    if (rc == 0) {
        rc = run(t, &pr, p, out, d);
    }
    prepared_fini(&pr);
    if (rc < 0) {
        gp_replay_result_fini(out);
    }
    return rc;
}

void gp_replay_result_fini(gp_replay_result *r)
{
    free(r->curve);
    r->curve = NULL;
}
