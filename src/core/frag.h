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
 * Host-aware weights (the `ours` policy, once fitted to a cluster): the hosts of type t are
 * the nodes that could host it were they empty (CPU capacity, at least t.count GPUs of a model t
 * may use), h_t their share of the cluster's GPUs. t's pods arrive in proportion w_t and all
 * land on that share of the cluster, so t's weight becomes w_t / h_t. On a node outside its
 * hosts t still counts all idle compute as its fragment (as in FGD): work placed there lowers
 * that fragment, which is what steers work away from the few nodes a scarce type can use; the
 * larger weight makes that pull, and the cost of fragmenting those hosts for t, grow with how
 * scarce they are. A type no node can host gets weight 0 (it never lands anywhere).
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
    double share; /* the type's share of the workload (weight before gp_frag_target_fit) */
} gp_frag_type;

typedef struct gp_frag_target {
    gp_frag_type *types;
    int ntypes;
    bool cpu_aware; /* CPU-aware fragments for fractional types */
} gp_frag_target;

/* The allocation state fragmentation looks at. */
typedef struct gp_frag_node {
    int64_t cpu_free;
    int64_t cpu_cap; /* CPU capacity (which types the node could ever host) */
    int ngpus;
    int32_t left[GP_MAX_GPUS_PER_NODE]; /* compute left per GPU; 0 for MIG-mode GPUs */
    uint16_t model[GP_MAX_GPUS_PER_NODE];
} gp_frag_node;

struct gp_workload;
/* Builds a target from a workload (copies it; MIG items are left out). GP_ENOMEM. */
int gp_frag_target_init(gp_frag_target *t, const struct gp_workload *w);
void gp_frag_target_fini(gp_frag_target *t);
/* Fits t to the cluster it plans for (host-aware weights above): scales each type's weight by
 * 1 / (its hosts' share of the cluster's GPUs), 0 when it has none. Reads only capacities (CPU,
 * GPU count and models of each node), never allocations. Fitting again (nodes came or went)
 * starts from the workload's shares. */
void gp_frag_target_fit(gp_frag_target *t, const gp_cluster *c);

void gp_frag_node_of(const gp_cluster *c, int node, gp_frag_node *out);
/* The fragmentation of n with respect to t, in milli-GPU. */
double gp_frag_amount(const gp_frag_target *t, const gp_frag_node *n);

#endif
