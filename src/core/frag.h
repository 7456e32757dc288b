/*
 * GPU fragmentation of a node with respect to a target workload (Weng et al., ATC'23, FGD).
 *
 * For one pod type t of the target workload, the fragment of a node is the idle GPU compute
 * (milli-GPU) that t cannot use there:
 *   - t asks for no GPU: all idle GPU compute of the node;
 *   - t may not use the node's GPU models, or the node lacks CPU for t, or fewer than t.count
 *     GPUs have t.milli left: all idle GPU compute;
 *   - otherwise: the idle compute of the GPUs that cannot host t (less than t.milli left, or a
 *     model t may not use).
 * The node's fragmentation is the sum over types weighted by each type's share of the workload.
 *
 * CPU-aware variant (the `ours` policy): a fractional pod holds one GPU and its own CPU, so a
 * node with CPU left for m pods of a fractional type t can serve t on at most m GPUs. With
 * cpu_aware set, only the m hosting GPUs with the most compute left are usable by t; the rest
 * of the node's idle compute is t's fragment. Whole-GPU types keep the rule above.
 * GPUs in MIG mode count as having no compute left for this purpose; MIG shapes of the workload
 * are not types here (their slices are not milli-GPU shares).
 *
 * Pure; the target owns its arrays.
 */
#ifndef GP_CORE_FRAG_H
#define GP_CORE_FRAG_H

#include "gpupool/model.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct gp_frag_type {
    int64_t cpu_milli;
    int32_t milli;           /* per GPU; 0 for a CPU-only type */
    int count;               /* GPUs */
    uint64_t allowed_models; /* 0: any */
    double weight;
} gp_frag_type;

typedef struct gp_frag_target {
    gp_frag_type *types;
    int ntypes;
    bool cpu_aware; /* CPU-aware fragments for fractional types */
} gp_frag_target;

/* The allocation state fragmentation looks at. */
typedef struct gp_frag_node {
    int64_t cpu_free;
    int ngpus;
    int32_t left[GP_MAX_GPUS_PER_NODE]; /* compute left per GPU; 0 for MIG-mode GPUs */
    uint16_t model[GP_MAX_GPUS_PER_NODE];
} gp_frag_node;

struct gp_workload;
/* Builds a target from a workload (copies it; MIG items are left out). GP_ENOMEM. */
int gp_frag_target_init(gp_frag_target *t, const struct gp_workload *w);
void gp_frag_target_fini(gp_frag_target *t);

void gp_frag_node_of(const gp_cluster *c, int node, gp_frag_node *out);
/* The fragmentation of n with respect to t, in milli-GPU. */
double gp_frag_amount(const gp_frag_target *t, const gp_frag_node *n);

#endif
