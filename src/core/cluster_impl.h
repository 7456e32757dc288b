/*
 * Private layout of gp_cluster, shared by the files of libgpcore only.
 */
#ifndef GP_CORE_CLUSTER_IMPL_H
#define GP_CORE_CLUSTER_IMPL_H

#include "gpupool/model.h"

struct gp_cluster {
    gp_gpu_model models[GP_MAX_MODELS];
    int nmodels;
    gp_node *nodes;
    int nnodes, cap_nodes;
    gp_gpu *gpus;
    int ngpus, cap_gpus;
    int64_t milli_capacity;
    int64_t max_cpu_milli; /* largest node: CPU, GPU count (policies normalise by them) */
    int max_gpus;
    int64_t milli_allocated;
    bool dynamic_mig;
    int ntainted; /* nodes with at least one taint */
    int *changed; /* change list, capacity cap_nodes: never allocates on a change */
    int nchanged;
    uint8_t *changed_flag; /* per node: already on the change list */
};

/* Records a change of node: bumps its version and puts it on the change list once. */
static inline void cluster_touch(gp_cluster *c, int node)
{
    c->nodes[node].version++;
    if (!c->changed_flag[node]) {
        c->changed_flag[node] = 1;
        c->changed[c->nchanged++] = node;
    }
}

static inline gp_gpu *cluster_gpu(gp_cluster *c, int node, int gpu)
{
    return &c->gpus[c->nodes[node].first_gpu + gpu];
}

static inline const gp_gpu *cluster_gpu_const(const gp_cluster *c, int node, int gpu)
{
    return &c->gpus[c->nodes[node].first_gpu + gpu];
}

/* Milli-GPU a MIG GPU counts as allocated when compute_used of its 7 compute slices are in use. */
static inline int64_t mig_milli(int compute_used)
{
    return ((int64_t)compute_used * GP_MILLI_PER_GPU + GP_MIG_COMPUTE_SLICES / 2) /
           GP_MIG_COMPUTE_SLICES;
}

/* Where a new MIG instance of profile p goes on GPU u (see mig_place.c and gp_gpu_share_for):
 * its start, whether it reuses the idle instance there, the idle instances it destroys (bit s:
 * the one starting at slice s) and its cost (gp_mig_share_cost). */
typedef struct mig_choice {
    int start;
    bool reused;
    uint8_t destroys;
    int cost;
} mig_choice;

/* The cheapest place for p on u (in MIG mode, or empty and partitionable); false when none is
 * free. Reads the allocations and the layout of u only. */
bool mig_choose(const gp_cluster *c, const gp_gpu *u, const gp_mig_profile *p, mig_choice *out);

#endif
