/*
 * The policy registry, request validation, and the GPU choice every policy shares:
 * CPU-only requests take no GPU; whole GPUs go by topology (gp_topology_pick); MIG requests go
 * to the GPU and slice that disturb the instances there least (gp_mig_pick_gpu); fractional
 * requests go where the policy's choose_share says.
 */
#include "core/cluster_impl.h"
#include "core/policy_impl.h"
#include "gpupool/topology.h"

#include <stdlib.h>
#include <string.h>

static const policy_ops *const registry[] = {
    &gp_policy_random,  &gp_policy_dotproduct, &gp_policy_clustering, &gp_policy_packing,
    &gp_policy_bestfit, &gp_policy_fgd,        &gp_policy_ours,
};
#define NPOLICIES ((int)(sizeof(registry) / sizeof(registry[0])))

static const char *const names[] = {
    "random", "dotproduct", "clustering", "packing", "bestfit", "fgd", "ours",
};
_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(registry) / sizeof(registry[0]),
               "policy name table and registry differ");

const char *const *gp_policy_names(int *count)
{
    *count = NPOLICIES;
    return names;
}

static const policy_ops *find(const char *name)
{
    for (int i = 0; i < NPOLICIES; i++) {
        if (strcmp(registry[i]->name, name) == 0) {
            return registry[i];
        }
    }
    return NULL;
}

const char *gp_policy_summary(const char *name)
{
    const policy_ops *ops = find(name);
    return ops ? ops->summary : NULL;
}

int gp_policy_new(const char *name, const gp_workload *target, gp_policy **out, gp_diag *d)
{
    *out = NULL;
    const policy_ops *ops = find(name);
    if (!ops) {
        return gp_diag_set(d, GP_ENOENT, "unknown policy \"%s\"", name);
    }
    gp_policy *p = calloc(1, sizeof(*p));
    if (!p) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    p->ops = ops;
    if (ops->needs_target) {
        if (!target || target->nitems == 0) {
            free(p);
            return gp_diag_set(d, GP_EINVAL, "policy %s needs a target workload", name);
        }
        int rc = gp_frag_target_init(&p->target, target);
        if (rc < 0) {
            free(p);
            return gp_diag_set(d, rc, "policy %s: target workload: %s", name, gp_strerror(rc));
        }
        p->target.cpu_aware = ops->cpu_aware_frag;
    }
    *out = p;
    return 0;
}

void gp_policy_fit(gp_policy *p, const gp_cluster *c)
{
    if (p->ops->host_aware_frag && p->target.ntypes > 0) {
        gp_frag_target_fit(&p->target, c);
    }
}

void gp_policy_free(gp_policy *p)
{
    if (p) {
        gp_frag_target_fini(&p->target);
        free(p);
    }
}

const char *gp_policy_name(const gp_policy *p)
{
    return p->ops->name;
}

double gp_policy_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    return p->ops->score(p, c, node, r);
}

int64_t gp_node_gpu_milli_free(const gp_cluster *c, int node)
{
    int64_t sum = 0;
    const gp_node *n = &c->nodes[node];
    for (int g = 0; g < n->ngpus; g++) {
        const gp_gpu *u = cluster_gpu_const(c, node, g);
        if (u->mode == GP_GPU_FULL) {
            sum += u->milli_free;
        }
    }
    return sum;
}

int gp_share_best_fit(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                      gp_rng *rng)
{
    (void)p;
    (void)rng;
    int best = -1;
    int32_t best_left = 0;
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        const gp_gpu *u = cluster_gpu_const(c, node, g);
        if (gp_gpu_fits(c, node, g, r) && (best < 0 || u->milli_free < best_left)) {
            best = g;
            best_left = u->milli_free;
        }
    }
    return best;
}

int gp_share_random(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                    gp_rng *rng)
{
    (void)p;
    int pick = -1;
    uint64_t seen = 0;
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        if (gp_gpu_fits(c, node, g, r) && gp_rng_below(rng, ++seen) == 0) {
            pick = g;
        }
    }
    return pick;
}

int gp_mig_pick_gpu(const gp_cluster *c, int node, const gp_request *r)
{
    int best = -1, best_cost = 0, best_used = 0;
    bool best_mig = false;
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        const gp_gpu *u = cluster_gpu_const(c, node, g);
        gp_gpu_share s;
        if (gp_gpu_share_for(c, node, g, r, &s) < 0) {
            continue;
        }
        int cost = gp_mig_share_cost(c, node, &s);
        bool mig = u->mode == GP_GPU_MIG;
        if (best < 0 || cost < best_cost ||
            (cost == best_cost &&
             (mig > best_mig || (mig == best_mig && u->mig_compute_used > best_used)))) {
            best = g;
            best_cost = cost;
            best_mig = mig;
            best_used = u->mig_compute_used;
        }
    }
    return best;
}

static int choose_whole(const gp_cluster *c, int node, const gp_request *r, gp_assignment *out)
{
    uint32_t candidates = 0, chosen;
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        if (gp_gpu_fits(c, node, g, r)) {
            candidates |= 1u << g;
        }
    }
    int rc = gp_topology_pick(c, node, candidates, r->gpu_count, &chosen);
    if (rc < 0) {
        return rc;
    }
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        if (chosen & (1u << g)) {
            gp_gpu_share_for(c, node, g, r, &out->shares[out->nshares++]);
        }
    }
    return 0;
}

int gp_policy_choose(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                     gp_rng *rng, gp_assignment *out)
{
    memset(out, 0, offsetof(gp_assignment, shares));
    out->node = node;
    out->cpu_milli = r->cpu_milli;
    out->memory_mib = r->memory_mib;
    int gpu;
    switch (r->kind) {
    case GP_REQ_NONE:
        return 0;
    case GP_REQ_WHOLE:
        return choose_whole(c, node, r, out);
    case GP_REQ_FRACTION:
        gpu = p->ops->choose_share(p, c, node, r, rng);
        break;
    case GP_REQ_MIG:
        gpu = gp_mig_pick_gpu(c, node, r);
        break;
    default:
        return GP_EINVAL;
    }
    if (gpu < 0) {
        return GP_ENOSPC;
    }
    out->nshares = 1;
    return gp_gpu_share_for(c, node, gpu, r, &out->shares[0]);
}

int gp_request_check(const gp_request *r, gp_diag *d)
{
    if (r->cpu_milli < 0) {
        return gp_diag_set(d, GP_EINVAL, "cpu_milli: must be >= 0");
    }
    if (r->memory_mib < 0) {
        return gp_diag_set(d, GP_EINVAL, "memory_mib: must be >= 0");
    }
    switch (r->kind) {
    case GP_REQ_NONE:
        return 0;
    case GP_REQ_WHOLE:
        if (r->gpu_count < 1 || r->gpu_count > GP_MAX_GPUS_PER_NODE) {
            return gp_diag_set(d, GP_EINVAL, "gpu_count: must be between 1 and %d",
                               GP_MAX_GPUS_PER_NODE);
        }
        return 0;
    case GP_REQ_FRACTION:
        if (r->gpu_milli < 0 || r->gpu_milli > GP_MILLI_PER_GPU) {
            return gp_diag_set(d, GP_EINVAL, "gpu_milli: must be between 0 and %d",
                               GP_MILLI_PER_GPU);
        }
        if (r->gpu_mem_mib < 0) {
            return gp_diag_set(d, GP_EINVAL, "gpu_memory_mib: must be >= 0");
        }
        if (r->gpu_milli == 0 && r->gpu_mem_mib == 0) {
            return gp_diag_set(d, GP_EINVAL,
                               "gpu_milli, gpu_memory_mib: a fraction needs one of them > 0");
        }
        return 0;
    case GP_REQ_MIG:
        if (!gp_mig_name_valid(r->mig_profile)) {
            return gp_diag_set(d, GP_EINVAL, "mig_profile: \"%.15s\" is not a MIG profile name",
                               r->mig_profile);
        }
        return 0;
    default:
        return gp_diag_set(d, GP_EINVAL, "kind: unknown GPU request kind %d", (int)r->kind);
    }
}
