/*
 * The pool model of libgpcore: cluster -> nodes -> GPUs, requests, and assignments.
 *
 * A gp_cluster owns its nodes, GPUs, labels and the table of GPU models. Nodes and GPUs are
 * exposed as read-only structs (gp_cluster_node, gp_cluster_gpu) so that policies and reports
 * can read them without copies; only gp_cluster_* functions change them.
 *
 * Capacity invariants, asserted on every change:
 *   0 <= cpu_free <= cpu_milli, 0 <= mem_free <= memory_mib                      (per node)
 *   0 <= milli_free <= 1000, 0 <= mem_free_mib <= mem_mib                        (per GPU)
 *   a GPU in MIG mode holds no whole or fractional allocation, and vice versa
 *   a GPU in FULL mode has no MIG layout (instances reported by its agent)
 * gp_cluster_assign and gp_cluster_release are exact inverses: release(assign(a)) restores the
 * state bit for bit. Both validate first and change nothing when they fail. Neither reads nor
 * changes a GPU's MIG layout: the layout is what the node's agent last reported, and only
 * guides where a MIG request goes (gp_gpu_share_for).
 *
 * Pure: no I/O, no clock, no randomness, no globals. Not thread-safe; one writer at a time.
 */
#ifndef GPUPOOL_MODEL_H
#define GPUPOOL_MODEL_H

#include "gpupool/error.h"
#include "gpupool/mig.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_MILLI_PER_GPU     1000
#define GP_MAX_GPUS_PER_NODE 32
#define GP_MAX_MODELS        64
#define GP_NAME_MAX          64

typedef struct gp_cluster gp_cluster;
struct gp_taint;       /* gpupool/constraint.h */
struct gp_constraints; /* gpupool/constraint.h */

typedef enum gp_gpu_mode {
    GP_GPU_FULL = 0, /* whole and fractional allocations */
    GP_GPU_MIG = 1,  /* partitioned into MIG instances */
} gp_gpu_mode;

typedef struct gp_gpu_model {
    char name[GP_NAME_MAX];
    int64_t mem_mib;     /* memory of one GPU of this model; 0 = not tracked */
    gp_mig_geometry mig; /* GP_MIG_NONE when the model cannot be partitioned */
} gp_gpu_model;

typedef struct gp_gpu {
    /* fixed at creation */
    uint16_t model;  /* index into the cluster's model table */
    int16_t numa;    /* NUMA node; -1 unknown */
    uint32_t nvlink; /* bit j: NVLink to GPU j of the same node */
    int64_t mem_mib; /* total memory; 0 = not tracked */
    /* allocation state */
    int32_t milli_free;       /* compute left, 0..1000 */
    int64_t mem_free_mib;     /* memory left */
    uint16_t holders;         /* whole or fractional allocations holding this GPU */
    uint8_t mode;             /* gp_gpu_mode */
    uint8_t mig_dynamic;      /* MIG was switched on by an allocation: back to FULL when empty */
    uint8_t mig_mem_used;     /* memory slices in use (bit mask) */
    uint8_t mig_compute_used; /* compute slices in use */
    uint8_t mig_instances;    /* MIG instances allocated */
    /* The GPU instances that exist on it, as its agent last reported them (gp_mig_layout_encode's
     * form: byte s, the instance starting at memory slice s). An instance that no allocation
     * overlaps is idle unless GP_MIG_SLOT_BLOCKED. All zero when unknown or not partitioned. */
    uint8_t mig_layout[GP_MIG_MEMORY_SLICES];
    /* availability for new allocations (gp_gpu_avail); what it holds is never affected */
    uint8_t avail;
} gp_gpu;

/* Whether a GPU takes new allocations. A GPU out of service (drained after a fault, or by an
 * operator) takes none; a hot spare takes only requests with spare_ok (restarts after a fault).
 * Allocations it already holds stay until released. */
typedef enum gp_gpu_avail {
    GP_GPU_IN_SERVICE = 0,
    GP_GPU_OUT = 1,
    GP_GPU_SPARE = 2,
} gp_gpu_avail;

typedef struct gp_label {
    char key[GP_NAME_MAX];
    char value[GP_NAME_MAX];
} gp_label;

/* Workload classes a node holds, counted per node: what GPU-clustering policies look at.
 * GP_TAG_SHARE: a fraction of one GPU; GP_TAG_MIG: a MIG instance; 1..32: that many whole GPUs.
 * CPU-only allocations carry no tag. */
#define GP_TAG_SHARE 0
#define GP_TAG_MIG   (GP_MAX_GPUS_PER_NODE + 1)
#define GP_TAG_COUNT (GP_MAX_GPUS_PER_NODE + 2)

/* Capabilities of a node beyond its resources: bits of gp_node.caps and gp_request.needs. A
 * request is placed only on a node that has every capability it needs. GP_CAP_IMAGES: the node
 * runs jobs from OCI images (it has a working container runtime). */
#define GP_CAP_IMAGES (1u << 0)

typedef struct gp_node {
    char name[GP_NAME_MAX];
    int64_t cpu_milli, memory_mib; /* capacity */
    int64_t cpu_free, mem_free;    /* left */
    int ngpus;
    int first_gpu; /* index of GPU 0 of this node in the cluster's GPU array */
    int nlabels;
    gp_label *labels;            /* owned by the cluster */
    uint64_t models;             /* bit m: the node has a GPU of model m */
    uint32_t version;            /* bumped on every change */
    uint64_t tag_mask;           /* bit t: tags[t] > 0 */
    uint16_t tags[GP_TAG_COUNT]; /* allocations per workload class */
    bool schedulable;
    /* Maintenance window: -1 none; else only requests with 0 < runtime_ms <= window_ms fit
     * (jobs that finish before the node's maintenance deadline). */
    int64_t window_ms;
    uint32_t caps; /* GP_CAP_* */
    int ntaints;
    struct gp_taint *taints; /* owned by the cluster; see gpupool/constraint.h */
} gp_node;

typedef enum gp_gpu_kind {
    GP_REQ_NONE = 0,     /* CPU and memory only */
    GP_REQ_WHOLE = 1,    /* gpu_count whole GPUs on one node */
    GP_REQ_FRACTION = 2, /* part of one GPU: gpu_milli and/or gpu_mem_mib */
    GP_REQ_MIG = 3,      /* one MIG instance of profile mig_profile */
} gp_gpu_kind;

typedef struct gp_request {
    int64_t cpu_milli;
    int64_t memory_mib;
    gp_gpu_kind kind;
    int gpu_count;           /* WHOLE: 1..GP_MAX_GPUS_PER_NODE */
    int gpu_milli;           /* FRACTION: 0..1000 (0 = memory only) */
    int64_t gpu_mem_mib;     /* FRACTION: 0 = compute only */
    char mig_profile[16];    /* MIG: "1g.10gb" */
    uint64_t allowed_models; /* bit m: model m allowed; 0 = any model */
    bool spare_ok;           /* may use hot-spare GPUs (a restart after a fault) */
    int64_t runtime_ms;      /* the longest it runs; 0 = unbounded (maintenance windows) */
    uint32_t needs;          /* GP_CAP_* the node must have */
    /* node selector, tolerations, spread, anti-affinity (borrowed; NULL: none). The scheduler
     * checks them on the node a placer picks (the placer's classes and scores ignore them), so
     * a request without them costs what it did before they existed. */
    const struct gp_constraints *place;
} gp_request;

/* One GPU's share of an assignment. */
typedef struct gp_gpu_share {
    uint8_t gpu;               /* index within the node */
    int32_t milli;             /* compute taken (1000 for whole GPUs, 0 for MIG) */
    int64_t mem_mib;           /* memory taken (whole: all of it; MIG: 0, the slice holds it) */
    int8_t mig_start;          /* MIG: first memory slice; -1 otherwise */
    int8_t mig_memory_slices;  /* MIG: memory slices */
    int8_t mig_compute_slices; /* MIG: compute slices */
    /* MIG, what the share does to the GPU's instances when gp_gpu_share_for chose it (0 in a
     * share built otherwise; assignment and release ignore both): reused, 1 when the idle
     * instance of its profile at mig_start is taken as it is; destroys, bit s: the idle
     * instance starting at memory slice s is destroyed to make room. */
    uint8_t mig_reused;
    uint8_t mig_destroys;
} gp_gpu_share;

/* Where a request goes: a node, and its share of each GPU it uses. */
typedef struct gp_assignment {
    int node;
    int64_t cpu_milli;
    int64_t memory_mib;
    int nshares;
    gp_gpu_share shares[GP_MAX_GPUS_PER_NODE];
} gp_assignment;

/* ---- building a cluster ---- */

gp_cluster *gp_cluster_new(void);
void gp_cluster_free(gp_cluster *c);
/* Deep copy (same models, nodes, state). NULL on out of memory. */
gp_cluster *gp_cluster_clone(const gp_cluster *c);

/* Index of the model named name, adding it (with mem_mib and the MIG geometry derived from the
 * name) when new. GP_ERANGE past GP_MAX_MODELS. */
int gp_cluster_model(gp_cluster *c, const char *name, int64_t mem_mib);
/* Index of the model named name, or GP_ENOENT. */
int gp_cluster_find_model(const gp_cluster *c, const char *name);
int gp_cluster_model_count(const gp_cluster *c);
const gp_gpu_model *gp_cluster_model_info(const gp_cluster *c, int model);

/* Description of one GPU when adding a node. */
typedef struct gp_gpu_spec {
    int model;       /* from gp_cluster_model */
    int numa;        /* -1 unknown */
    uint32_t nvlink; /* bit j: NVLink to GPU j of the same node */
    int64_t mem_mib; /* 0: take the model's */
} gp_gpu_spec;

/* Adds a node with ngpus GPUs (ngpus 0..GP_MAX_GPUS_PER_NODE; gpus may be NULL when 0) and
 * returns its index, or GP_EINVAL (bad numbers, NVLink to a GPU out of range), GP_ENOMEM. */
int gp_cluster_add_node(gp_cluster *c, const char *name, int64_t cpu_milli, int64_t memory_mib,
                        int ngpus, const gp_gpu_spec *gpus);
/* Adds a label to a node (replacing a label of the same key). */
int gp_cluster_set_label(gp_cluster *c, int node, const char *key, const char *value);
int gp_cluster_set_schedulable(gp_cluster *c, int node, bool schedulable);
/* Replaces a node's taints with taints[0..n) (copied). GP_EINVAL for a bad node or n < 0,
 * GP_ENOMEM. */
int gp_cluster_set_taints(gp_cluster *c, int node, const struct gp_taint *taints, int n);
/* Sets a node's capabilities (GP_CAP_* bits; a node starts with none). GP_EINVAL for a bad
 * node. */
int gp_cluster_set_caps(gp_cluster *c, int node, uint32_t caps);
/* Sets a GPU's availability (gp_gpu_avail). GP_EINVAL for a bad node, GPU or value. */
int gp_cluster_set_gpu_avail(gp_cluster *c, int node, int gpu, int avail);
/* Sets a node's maintenance window (-1 none; else milliseconds left before its deadline, at
 * least 0). GP_EINVAL for a bad node. */
int gp_cluster_set_window(gp_cluster *c, int node, int64_t window_ms);
/* Whether MIG-capable GPUs with no allocation may be partitioned on demand (default false). */
void gp_cluster_set_dynamic_mig(gp_cluster *c, bool allow);
bool gp_cluster_dynamic_mig(const gp_cluster *c);
/* Puts a MIG-capable, unallocated GPU into MIG mode (operator-partitioned: stays in MIG mode). */
int gp_cluster_enable_mig(gp_cluster *c, int node, int gpu);
/*
 * Records the n GPU instances that exist on gpu of node, as its agent reports them (see
 * gp_mig_layout_encode; the GPU's model gives the geometry). Allocations are not checked against
 * it: the agent reports what it saw, which lags behind what was placed since. GP_EINVAL for a bad
 * node or GPU, or a bad layout (d says why); GP_ESTATE when the GPU is not partitioned by an
 * operator (gp_cluster_enable_mig). Nothing changes on failure, and an unchanged layout is no
 * change of the node.
 */
int gp_cluster_set_mig_layout(gp_cluster *c, int node, int gpu, const gp_mig_instance *in, int n,
                              gp_diag *d);

/* ---- reading ---- */

int gp_cluster_node_count(const gp_cluster *c);
int gp_cluster_gpu_count(const gp_cluster *c);
const gp_node *gp_cluster_node(const gp_cluster *c, int node);
/* GPU gpu (0-based within the node) of node. */
const gp_gpu *gp_cluster_gpu(const gp_cluster *c, int node, int gpu);
/* Index of the node named name, or GP_ENOENT. Linear; for tools and tests. */
int gp_cluster_find_node(const gp_cluster *c, const char *name);

/* Totals over the whole cluster, in milli-GPU: capacity (1000 per GPU) and allocated (compute
 * held by whole and fractional shares, plus whole GPUs in MIG mode counted by the compute slices
 * in use, scaled to 1000). Maintained incrementally: O(1). */
int64_t gp_cluster_gpu_milli_capacity(const gp_cluster *c);
int64_t gp_cluster_gpu_milli_allocated(const gp_cluster *c);

/* The workload-class tag of an assignment (GP_TAG_*), or -1 for a CPU-only one. */
int gp_assignment_tag(const gp_assignment *a);

/* Nodes changed (added, assigned, released, relabelled) since the last gp_cluster_clear_changed,
 * each listed once; *nodes points into the cluster and is valid until the next change. One
 * consumer only (the placer). */
int gp_cluster_changed_nodes(const gp_cluster *c, const int **nodes);
void gp_cluster_clear_changed(gp_cluster *c);

/* ---- feasibility, assignment, release ---- */

/* Whether gpu of node can hold a request (availability, model allowed, mode, compute and memory
 * left), without looking at CPU or memory of the node. For WHOLE it means: entirely free. */
bool gp_gpu_fits(const gp_cluster *c, int node, int gpu, const gp_request *r);
/* Whether node passes the filter for r: schedulable, the capabilities r needs, maintenance
 * window, CPU, memory, allowed models, and enough GPUs that fit (count for WHOLE, one for
 * FRACTION and MIG). */
bool gp_node_fits(const gp_cluster *c, int node, const gp_request *r);

/*
 * Share of gpu for r: milli/mem for FULL GPUs; for MIG a legal slice, chosen against the GPU's
 * layout: an idle instance of the profile is reused (the highest start); else a new instance
 * goes where it destroys no idle instance, else where the idle instances it destroys have the
 * fewest compute slices, then are fewest (ties: the highest start, keeping the low slices that
 * large profiles need). It never overlaps an allocation or a blocked instance, and leaves room
 * in compute slices for the instances that stay. GP_ENOSPC when the GPU cannot hold it.
 */
int gp_gpu_share_for(const gp_cluster *c, int node, int gpu, const gp_request *r,
                     gp_gpu_share *out);

/* What MIG share s (from gp_gpu_share_for, on node's GPU s->gpu) does to the GPU's instances, as
 * one number, lower is better: 0 reuses an idle instance; 1 creates one where none is; else
 * 1 + 8 × the compute slices of the idle instances it destroys + their number. -1 when s is not
 * a MIG share. */
int gp_mig_share_cost(const gp_cluster *c, int node, const gp_gpu_share *s);
/* The least gp_mig_share_cost over the GPUs of node that can hold MIG request r; -1 when none
 * can (or r is not MIG). */
int gp_mig_node_cost(const gp_cluster *c, int node, const gp_request *r);
/* What MIG share s does, in words, into buf (cap bytes, NUL-terminated, cut to fit): "MIG
 * 1g.10gb: reused instance GPU 1 slice 3", or "MIG 1g.10gb: created 1g.10gb at GPU 0 slice 6,
 * destroyed idle 3g.40gb at slice 4". Call it before the GPU's layout changes. "" for a share
 * that is not MIG. */
void gp_mig_share_describe(const gp_cluster *c, int node, const gp_gpu_share *s, char *buf,
                           size_t cap);

/* Applies a: takes its CPU, memory and GPU shares. Validates the whole assignment first;
 * GP_EINVAL (malformed) or GP_ENOSPC (does not fit) leave the cluster unchanged. */
int gp_cluster_assign(gp_cluster *c, const gp_assignment *a);
/* Gives back what a took. GP_EINVAL when the cluster does not hold a (it would push a capacity
 * past its total); then nothing changes. */
int gp_cluster_release(gp_cluster *c, const gp_assignment *a);

/* Checks every capacity invariant of the whole cluster, including the cached totals. 0 or
 * GP_EINTERNAL with d naming the first broken one. O(nodes + GPUs); for tests and debug builds. */
int gp_cluster_check(const gp_cluster *c, gp_diag *d);

#endif
