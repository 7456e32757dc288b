/*
 * The placement policies of the scheduler: a node policy composed with a GPU policy.
 *
 * Node policy: binpack scores a node by how full it is after the placement (GPU compute counted
 * twice, CPU and memory once each, as shares of the node's own capacity), spread by how empty.
 * GPU policy: which GPU a fraction takes on the chosen node: packing and topology the fitting
 * GPU with the least compute left (fill partly used GPUs first), spread the one with the most.
 * Fragmentation is the `ours` policy of libgpcore, fitted to the cluster when the placer is made
 * (gp_policy_fit): it scores nodes and picks the GPU that grows fragmentation least, whatever the
 * node policy.
 *
 * Whole GPUs and MIG slices are chosen as for every policy (gp_policy_choose: the best NVLink/
 * NUMA set, legal slices). A fraction never takes a GPU marked hot (utilisation above the
 * threshold) while a cold GPU on the node fits; among hot ones it takes the least utilised.
 *
 * Scores depend only on the node's allocation state, as the placer's class cache requires;
 * utilisation and NVLink positions (which the class key does not hold) are handled by the
 * scheduler around the placer (sched_place.c). These policies are not in the registry of
 * gp_policy_names: they belong to the scheduler, and the trace simulator compares the published
 * policies.
 */
#include "core/frag.h"
#include "core/sched_impl.h"

#include <math.h>
#include <stdlib.h>

/* How full node is once r is placed on it, 0..1. */
static double fullness(const gp_cluster *c, int node, const gp_request *r)
{
    const gp_node *n = &c->nodes[node];
    double cpu = n->cpu_milli > 0
                     ? (double)(n->cpu_milli - n->cpu_free + r->cpu_milli) / (double)n->cpu_milli
                     : 0.0;
    double mem = n->memory_mib > 0
                     ? (double)(n->memory_mib - n->mem_free + r->memory_mib) / (double)n->memory_mib
                     : 0.0;
    if (n->ngpus == 0) {
        return (cpu + mem) / 2.0;
    }
    double cap = (double)n->ngpus * GP_MILLI_PER_GPU;
    double gpu = (cap - (double)gp_node_gpu_milli_free(c, node) + (double)req_gpu_milli(r)) / cap;
    return (2.0 * gpu + cpu + mem) / 4.0;
}

static double compose_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    const sched_policy *sp = (const sched_policy *)p;
    double f = fullness(c, node, r);
    return sp->node == GP_NODE_SPREAD ? -f : f;
}

static double frag_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    const sched_policy *sp = (const sched_policy *)p;
    return gp_policy_score(sp->inner, c, node, r);
}

/* The GPU of cand whose use by r grows the node's fragmentation least (lowest index on ties). */
static int frag_pick(const sched_policy *sp, const gp_cluster *c, int node, const gp_request *r,
                     uint32_t cand)
{
    gp_frag_node before;
    gp_frag_node_of(c, node, &before);
    const gp_frag_target *t = &sp->inner->target;
    double f0 = gp_frag_amount(t, &before), best = -HUGE_VAL;
    int pick = -1;
    for (int g = 0; g < before.ngpus; g++) {
        if (!(cand & (1u << g))) {
            continue;
        }
        gp_frag_node after = before;
        after.cpu_free -= r->cpu_milli;
        after.left[g] -= r->gpu_milli;
        double s = f0 - gp_frag_amount(t, &after);
        if (s > best) {
            best = s;
            pick = g;
        }
    }
    return pick;
}

/* The GPU of cand with the least (most, for spread) compute left; lowest index on ties. */
static int fill_pick(const gp_cluster *c, int node, uint32_t cand, bool most)
{
    int pick = -1;
    int32_t best = 0;
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        if (!(cand & (1u << g))) {
            continue;
        }
        int32_t left = cluster_gpu_const(c, node, g)->milli_free;
        if (pick < 0 || (most ? left > best : left < best)) {
            pick = g;
            best = left;
        }
    }
    return pick;
}

static int coolest(const sched_policy *sp, const gp_cluster *c, int node, uint32_t cand)
{
    int pick = -1;
    double best = 0.0;
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        if (cand & (1u << g)) {
            double u = sp->env->util[c->nodes[node].first_gpu + g];
            if (pick < 0 || u < best) {
                pick = g;
                best = u;
            }
        }
    }
    return pick;
}

static int pick_share(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                      gp_rng *rng)
{
    (void)rng;
    const sched_policy *sp = (const sched_policy *)p;
    uint32_t fit = 0;
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        if (gp_gpu_fits(c, node, g, r)) {
            fit |= 1u << g;
        }
    }
    if (fit == 0) {
        return -1;
    }
    uint32_t hot = sp->env && sp->env->hot ? sp->env->hot[node] : 0;
    if ((fit & ~hot) == 0) {
        return coolest(sp, c, node, fit);
    }
    uint32_t cand = fit & ~hot;
    switch (sp->gpu) {
    case GP_GPU_FRAGMENTATION:
        return frag_pick(sp, c, node, r, cand);
    case GP_GPU_SPREAD:
        return fill_pick(c, node, cand, true);
    default:
        return fill_pick(c, node, cand, false);
    }
}

static const policy_ops ops_compose = {
    .name = "sched",
    .summary = "scheduler: node policy (binpack/spread) with a GPU policy for fractions",
    .score = compose_score,
    .choose_share = pick_share,
};

static const policy_ops ops_fragmentation = {
    .name = "sched-fragmentation",
    .summary = "scheduler: the ours policy, with hot GPUs avoided for fractions",
    .score = frag_score,
    .choose_share = pick_share,
};

int sched_policy_new(gp_node_policy node, gp_gpu_policy gpu, const gp_workload *target,
                     const gp_cluster *c, const sched_env *env, sched_policy **out)
{
    *out = NULL;
    sched_policy *p = calloc(1, sizeof(*p));
    if (!p) {
        return GP_ENOMEM;
    }
    p->node = node;
    p->gpu = gpu;
    p->env = env;
    p->base.ops = &ops_compose;
    if (gpu == GP_GPU_FRAGMENTATION) {
        int rc = gp_policy_new("ours", target, &p->inner, NULL);
        if (rc < 0) {
            free(p);
            return rc;
        }
        gp_policy_fit(p->inner, c);
        p->base.ops = &ops_fragmentation;
    }
    *out = p;
    return 0;
}

void sched_policy_free(sched_policy *p)
{
    if (p) {
        gp_policy_free(p->inner);
        free(p);
    }
}
