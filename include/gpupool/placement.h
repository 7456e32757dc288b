/*
 * Placement: choosing the node and the GPUs for a request, by a pluggable scoring policy.
 *
 * A gp_policy scores a node for a request (higher is better) and chooses the GPUs on the node
 * it wins. A gp_placer runs a policy over a cluster: it filters nodes (gp_node_fits), scores
 * the feasible ones, picks uniformly at random among those with the highest score (the caller's
 * gp_rng decides), and asks the policy for the GPUs on that node. A MIG request ranks nodes
 * first by what it does to their MIG instances (gp_mig_node_cost: a node with an idle instance
 * of its profile before one where a new instance destroys nothing, before one where it destroys
 * the least), then by the policy's score.
 *
 * Speed. Nodes whose allocation state is identical (same capacity, models, free CPU, memory and
 * GPU shares as a multiset, workload classes present) are one equivalence class, scored once per
 * request shape; a class's state never changes, so its scores are cached for as long as the class
 * lives. A change to a node moves it to another class. The placer learns of changes through the
 * cluster's change list (gp_cluster_changed_nodes), so it must be the only consumer of that list.
 *
 * Ownership: the placer borrows the cluster and the policy; both must outlive it. Not
 * thread-safe; distinct placers over distinct clusters may run in parallel.
 */
#ifndef GPUPOOL_PLACEMENT_H
#define GPUPOOL_PLACEMENT_H

#include "gpupool/error.h"
#include "gpupool/model.h"
#include "gpupool/rng.h"

#include <stdint.h>

typedef struct gp_policy gp_policy;
typedef struct gp_placer gp_placer;

/* A request shape of the target workload, with its share of the workload (weights sum to 1). */
typedef struct gp_workload_item {
    gp_request shape;
    double weight;
} gp_workload_item;

/* The workload a fragmentation-aware policy plans for. Borrowed by gp_policy_new (copied). */
typedef struct gp_workload {
    const gp_workload_item *items;
    int nitems;
} gp_workload;

/*
 * The target workload of a list of requests, as FGD defines it: requests grouped by shape (CPU,
 * GPU kind, count, compute, GPU memory, MIG profile, allowed models; host memory is left out),
 * most frequent shapes first (ties: larger CPU, then larger GPU request first), taken until they
 * cover coverage (0 < coverage <= 1) of the requests, the shape that crosses it included.
 * Weights are the counts renormalised over the shapes taken. *out is malloc'd; the caller frees
 * it. GP_EINVAL for n < 1 or a bad coverage, GP_ENOMEM.
 */
int gp_workload_typical(const gp_request *reqs, int n, double coverage, gp_workload_item **out,
                        int *nout);

/* Names of the built-in policies, in a stable order; *count receives their number. */
const char *const *gp_policy_names(int *count);
/* One-line description of a policy, or NULL for an unknown name. */
const char *gp_policy_summary(const char *name);

/* Creates policy name. target is the workload FGD-style policies plan for (may be NULL for the
 * others; required by fgd and by the policies built on it). GP_ENOENT for an unknown name,
 * GP_EINVAL when a required target is missing. */
int gp_policy_new(const char *name, const gp_workload *target, gp_policy **out, gp_diag *d);
/* Fits p to the cluster it will place on, once, before placing (ours: weighs each type of the
 * target by how scarce the nodes able to host it are, frag.h); the others ignore it. Reads only
 * the nodes' capacities; may be called again when nodes come or go. */
void gp_policy_fit(gp_policy *p, const gp_cluster *c);
void gp_policy_free(gp_policy *p);
const char *gp_policy_name(const gp_policy *p);

/*
 * The node score of policy p for placing r on node (which must pass gp_node_fits). The value
 * depends only on the node's allocation state, never on its name or index.
 */
double gp_policy_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r);
/* Chooses the GPU shares for r on node (which must pass gp_node_fits) and fills out, CPU and
 * memory included. rng is used by policies that choose at random. */
int gp_policy_choose(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                     gp_rng *rng, gp_assignment *out);

/* Creates a placer over c with policy p. */
int gp_placer_new(gp_cluster *c, const gp_policy *p, gp_placer **out);
void gp_placer_free(gp_placer *pl);

/* Breaks ties by the lowest rank[node] instead of at random (rank borrowed, one entry per node;
 * NULL restores random tie-breaks). */
void gp_placer_set_tie_rank(gp_placer *pl, const uint32_t *rank);

/* Statistics of one placement decision. */
typedef struct gp_place_info {
    int feasible_nodes; /* nodes that passed the filter */
    int classes_scored; /* node classes whose score was not cached */
    int classes_seen;   /* live node classes examined */
} gp_place_info;

/*
 * Decides where r goes and fills out; does not change the cluster (apply with
 * gp_cluster_assign). GP_ENOSPC when no node passes the filter; GP_EINVAL for a malformed
 * request (see gp_request_check). info may be NULL.
 */
int gp_placer_place(gp_placer *pl, const gp_request *r, gp_rng *rng, gp_assignment *out,
                    gp_place_info *info);

/* Validates a request: kinds, counts and ranges; d names the field. */
int gp_request_check(const gp_request *r, gp_diag *d);

#endif
