/*
 * Where a replica may go beyond its resources: node labels and selectors, node taints and a
 * job's tolerations, spread over a topology label, and anti-affinity (Kubernetes' nodeSelector,
 * taints and tolerations, topologySpreadConstraints with DoNotSchedule, and podAntiAffinity on
 * kubernetes.io/hostname).
 *
 *   node_selector   every pair must be a label of the node. Every node also has the implicit
 *                   label kubernetes.io/hostname = its name.
 *   taints          a node's taint that the job does not tolerate: NoSchedule and NoExecute
 *                   refuse the node, PreferNoSchedule makes it a last resort (taken only when no
 *                   node without such a taint fits). A running replica that does not tolerate a
 *                   NoExecute taint is evicted (the controller's part).
 *   spread          for each {topology_key, max_skew}: the domains are the values of the label
 *                   topology_key among the nodes that have it and pass node_selector; placing
 *                   one more replica in the node's domain must keep (count there + 1) - (least
 *                   count over the domains) <= max_skew. A node without the label is refused.
 *   anti_affinity   at most one replica of the group per node.
 * Counts are over the replicas of one group: a job's own, or a service's replica jobs together.
 *
 * The strings are borrowed: a gp_constraints points into its owner (a parsed job spec). Pure: no
 * I/O, no clock, no globals.
 */
#ifndef GPUPOOL_CONSTRAINT_H
#define GPUPOOL_CONSTRAINT_H

#include "gpupool/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Label and taint keys ([prefix/]name: a DNS subdomain of at most 253 bytes, a name of at most
 * 63) and values (at most 63) with their NUL. */
#define GP_LABEL_KEY_MAX   320
#define GP_LABEL_VALUE_MAX 64
/* The label every node has, its name as value. */
#define GP_LABEL_HOSTNAME "kubernetes.io/hostname"

typedef enum gp_taint_effect {
    GP_TAINT_NO_SCHEDULE = 0,
    GP_TAINT_PREFER_NO_SCHEDULE = 1,
    GP_TAINT_NO_EXECUTE = 2,
} gp_taint_effect;
#define GP_TAINT_EFFECTS 3
/* A toleration's effect when left out: every effect. */
#define GP_TAINT_ANY (-1)

typedef struct gp_taint {
    char key[GP_LABEL_KEY_MAX];
    char value[GP_LABEL_VALUE_MAX]; /* may be "" */
    int effect;                     /* gp_taint_effect */
} gp_taint;

typedef struct gp_kv {
    char *key;
    char *value;
} gp_kv;

typedef struct gp_toleration {
    char *key;   /* NULL: every key (operator Exists only) */
    bool equal;  /* operator Equal: value must match; else Exists */
    char *value; /* Equal: the value ("" allowed); NULL for Exists */
    int effect;  /* gp_taint_effect, or GP_TAINT_ANY */
} gp_toleration;

typedef struct gp_spread {
    char *topology_key;
    int max_skew; /* >= 1 */
} gp_spread;

typedef struct gp_constraints {
    gp_kv *selector; /* sorted by key, keys distinct */
    int nselector;
    gp_toleration *tolerations;
    int ntolerations;
    gp_spread *spread;
    int nspread;
    bool anti_affinity;
} gp_constraints;

/* Wire names of gp_taint_effect ("NoSchedule", "PreferNoSchedule", "NoExecute"); its index or -1
 * for another name. */
const char *gp_taint_effect_name(int effect);
int gp_taint_effect_parse(const char *name);

/* Whether key is a label key ([prefix/]name) and value a label value (may be empty). */
bool gp_label_key_ok(const char *key);
bool gp_label_value_ok(const char *value);

/* Whether one of tolerations tol[0..n) tolerates taint t. */
bool gp_tolerates(const gp_toleration *tol, int n, const gp_taint *t);

/* Whether any of the constraints is set (a request without them costs nothing more). */
bool gp_constraints_any(const gp_constraints *k);

/* ---- the checks on a node of a cluster ---- */

/* A node's label key, or NULL when it has none (GP_LABEL_HOSTNAME: the node's name unless its
 * agent set it). */
const char *gp_node_label(const gp_cluster *c, int node, const char *key);
/* The index of the first node_selector pair node lacks, or -1 when it has them all (k NULL:
 * -1). */
int gp_node_selector_miss(const gp_cluster *c, int node, const gp_constraints *k);
/* What node's taints do to a request with constraints k (NULL: no tolerations): 0 none that it
 * does not tolerate; 1 only PreferNoSchedule ones; 2 a NoSchedule or NoExecute one. *which: the
 * index of the worst untolerated taint, or -1. */
int gp_node_taint_check(const gp_cluster *c, int node, const gp_constraints *k, int *which);
/*
 * Which nodes spread and anti_affinity of k allow one more replica of a group on: count[node] is
 * the group's replicas on each node (gp_cluster_node_count entries); ok (as many) is set to 1 for
 * an allowed node, 0 otherwise. Domains are told apart by a 64-bit hash of the label value.
 * O(nodes) per spread constraint. 0 or GP_ENOMEM.
 */
int gp_spread_allowed(const gp_cluster *c, const gp_constraints *k, const int *count, uint8_t *ok);

#endif
