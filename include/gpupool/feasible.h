/*
 * Whether a job could ever run: judged against what the pool is built of and the limits it
 * runs under, never against what is free now.
 *
 * The pool. Every node that counts (the registered ones), whatever its state: a node that is
 * down, cordoned or draining, a drained GPU, a GPU in the other MIG mode, all count as they
 * are built, since they may come back. A replica could run on a node when the node has a GPU of
 * an allowed model; for MIG, an allowed GPU whose model has the profile; for whole GPUs, as many
 * allowed GPUs as asked, pairwise NVLink-connected for require-nvlink (the same choice of set
 * the scheduler makes on an empty node); for a fraction's memory, an allowed GPU that large;
 * and the CPU and memory asked. Before all that, the node must have the capabilities the
 * request needs (a container runtime for a job from an image). A gang needs room for all its
 * replicas on such nodes at once. A pool with no node at all is not judged (nothing is known yet).
 *
 * The limits. The tenant's GPU quota, its GPU memory quota and per-model quotas, the queue's
 * capability, and for a job that is not preemptible the queue's guarantee (only preemptible
 * jobs may borrow): a job that needs more than one of them allows, with nothing else running,
 * can never be admitted. Per-model quotas are judged as the scheduler judges them: all replicas
 * on one model.
 *
 * Both checks answer 0, or GP_EINVAL with d->msg "FIELD: WHY" — the field of the job spec that
 * asks for too much and what the pool or the limit has instead:
 *   resources.gpu_models[0]: no node has model "A100-80GB"; models in the pool: NVIDIA
 *   A100-SXM4-80GB, Tesla T4
 * gp_feasible_why gives the WHY part (for a pending job's reason). They never refuse a job the
 * scheduler could place on an empty pool.
 *
 * Pure: no I/O, no globals. Cost: O(nodes x GPUs) for the pool, O(models) for the limits.
 */
#ifndef GPUPOOL_FEASIBLE_H
#define GPUPOOL_FEASIBLE_H

#include "gpupool/error.h"
#include "gpupool/model.h"
#include "gpupool/sched.h"

#include <stdbool.h>

/* The message of a job from an image when no node counted has a container runtime. */
#define GP_FEASIBLE_NO_RUNTIME "image: no node can run images (no container runtime)"

typedef struct gp_feasible_job {
    const gp_request *req; /* one replica; its allowed_models count when nmodels is 0 */
    int replicas;
    gp_topology_pref topology;
    bool preemptible;
    /* The models as the job names them (gpu_models), resolved with gp_cluster_models_named;
     * borrowed; may be NULL when nmodels is 0. */
    const char (*models)[GP_NAME_MAX];
    int nmodels;
} gp_feasible_job;

/* Judges j against the nodes of c listed in nodes (nnodes of them; nodes NULL: every node of
 * c). 0 or GP_EINVAL with d. */
int gp_feasible_pool(const gp_cluster *c, const int *nodes, int nnodes, const gp_feasible_job *j,
                     gp_diag *d);
/* The same, given present: the models the listed nodes have (the OR of their gp_node.models),
 * as a caller that keeps it up to date has it. It then costs only the nodes judged until the
 * verdict is known: a job that fits stops at the first nodes that can hold it. The verdict
 * equals gp_feasible_pool's when present is exact. */
int gp_feasible_pool_models(const gp_cluster *c, const int *nodes, int nnodes, uint64_t present,
                            const gp_feasible_job *j, gp_diag *d);

/* Judges j against tenant t and queue q (either may be NULL: no limit). 0 or GP_EINVAL with
 * d. */
int gp_feasible_limits(const gp_cluster *c, const gp_feasible_job *j, const gp_sched_tenant *t,
                       const gp_sched_queue *q, gp_diag *d);

/* The part of a message of the two above after its field ("no node has model ..."); msg itself
 * when it names no field. */
const char *gp_feasible_why(const char *msg);

#endif
