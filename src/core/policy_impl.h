/*
 * Private interface between the policy registry (policy.c) and the policies (policy_*.c).
 *
 * A policy is a table of data: a name, a summary, whether it needs a target workload, a node
 * scorer and a chooser of the GPU for fractional requests. Everything else (whole GPUs by
 * topology, MIG slices, CPU-only requests) is chosen the same way for every policy.
 */
#ifndef GP_CORE_POLICY_IMPL_H
#define GP_CORE_POLICY_IMPL_H

#include "core/frag.h"
#include "gpupool/placement.h"

typedef double (*policy_score_fn)(const gp_policy *p, const gp_cluster *c, int node,
                                  const gp_request *r);
/* Returns the index of the GPU of node that a FRACTION request r takes (it passed the filter). */
typedef int (*policy_share_fn)(const gp_policy *p, const gp_cluster *c, int node,
                               const gp_request *r, gp_rng *rng);

typedef struct policy_ops {
    const char *name;
    const char *summary;
    bool needs_target;
    bool uses_tags;       /* the score reads gp_node.tag_mask */
    bool uniform;         /* every feasible node equally likely: no tie rank applies */
    bool cpu_aware_frag;  /* fragmentation counts GPUs stranded for want of CPU (frag.h) */
    bool host_aware_frag; /* gp_policy_fit fits the target to the cluster (frag.h) */
    policy_score_fn score;
    policy_share_fn choose_share;
} policy_ops;

struct gp_policy {
    const policy_ops *ops;
    gp_frag_target target; /* empty unless ops->needs_target */
};

/* Whether p's scores read the workload classes of a node (the placer keys classes on them). */
static inline bool gp_policy_uses_tags(const gp_policy *p)
{
    return p->ops->uses_tags;
}

static inline bool gp_policy_uniform(const gp_policy *p)
{
    return p->ops->uniform;
}

/* The policies, defined in policy_baseline.c and policy_fgd.c. */
extern const policy_ops gp_policy_random, gp_policy_dotproduct, gp_policy_clustering,
    gp_policy_packing, gp_policy_bestfit, gp_policy_fgd, gp_policy_ours;

/* GPU choosers for fractional requests shared by several policies. */
/* The fitting GPU with the least compute left (ties: lowest index). */
int gp_share_best_fit(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                      gp_rng *rng);
/* A fitting GPU drawn uniformly at random. */
int gp_share_random(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                    gp_rng *rng);

/* The GPU a MIG request takes on node: the one whose share costs least (gp_mig_share_cost: an
 * idle instance of its profile first, then a new instance that destroys no idle one, then the
 * least destroyed); on ties a GPU already partitioned, with the most compute slices in use
 * (packing), then the lowest index; -1 when none fits. */
int gp_mig_pick_gpu(const gp_cluster *c, int node, const gp_request *r);

/* Sum of compute left over the GPUs of node that are not partitioned, in milli-GPU. */
int64_t gp_node_gpu_milli_free(const gp_cluster *c, int node);

#endif
