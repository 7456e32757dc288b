/*
 * The scheduler: one pure decision step from the pool's state to placements, preemptions and
 * the reason every job left pending is still waiting.
 *
 * gpupoold runs a cycle on events (submit, node change, job end) and periodically: it builds a
 * gp_sched_input from its records, calls gp_sched_cycle, and commits the result in one
 * transaction. The simulator and the benchmarks run the same function.
 *
 * Order. Pending jobs are considered by priority value (higher first), then by their queue's
 * weighted dominant resource share (DRF over GPU compute, CPU and memory, divided by the queue's
 * weight; lower first; recomputed as the cycle places jobs), then by submit time (earlier
 * first), then by id.
 *
 * Limits, all checked before a job is placed and never exceeded:
 *  - tenant quota: GPU compute (milli-GPU), GPU memory, and per GPU model;
 *  - queue capability: the most the queue may hold;
 *  - borrowing: a queue above its guarantee uses capacity lent by others; only preemptible jobs
 *    may be placed beyond their queue's guarantee, so lent capacity can always be reclaimed.
 *    GPU compute counts whenever the guarantee sets it (>= 0; 0 = owed nothing); GPU memory, CPU
 *    and memory only where the guarantee sets them above 0 ("owed 16 GPUs" does not make every
 *    job that needs a CPU a borrower); -1 = unlimited. A dimension counts for jobs that use it.
 * Per-model quotas are checked as if all replicas landed on one model; the exact usage of the
 * GPUs chosen is checked again after placement. A job that no limit could ever admit waits with
 * a reason saying so ("..., more than it can ever get").
 *
 * Reclaim: a job whose queue is below its guarantee, and that does not fit, may evict
 * preemptible jobs of queues above their guarantee (whatever their priority) until it fits.
 * Preemption: a job whose priority class has preemption policy PreemptLowerPriority and that
 * does not fit may evict preemptible jobs of lower priority. Both choose the cheapest set of
 * victims (fewest GPUs, then least progress lost: the most recently started first), and evict
 * only when the job is then placed in the same cycle: never without making room.
 *
 * Jobs that can never run. A job that could not run even on an empty pool as it is built (every
 * node in pool_nodes, whatever its state), or that needs more than a limit allows with nothing
 * else running, waits with the reason "unschedulable: ..." (gp_feasible_pool,
 * gp_feasible_limits) instead of a reason about the capacity in use.
 *
 * Gangs: a job's replicas are placed all together or not at all.
 *
 * Maintenance windows (gp_cluster_set_window): a node draining at a deadline takes only jobs
 * whose max runtime ends before it. A job kept off nodes that could otherwise hold it waits with
 * "maintenance: dgx-1 drains at 14:00 UTC and the job may run 2h" (or "... and the job sets no
 * max runtime"), naming the node that drains last and how many more such nodes there are, not
 * "capacity: ...". The deadline is drain_at_ms of the input (else now_ms + the window), written
 * in UTC: "14:00 UTC" (seconds only when not 0) on the day of now_ms, else "2025-05-02 14:00 UTC".
 *
 * Backfill (EASY): the first job in order that cannot be placed gets a reservation: the nodes
 * it would get once running jobs end (by start + max runtime; a job with no max runtime never
 * ends for this purpose), and the time that happens (the shadow time). Jobs after it may still
 * be placed, but on a reserved node only when their own max runtime ends before the shadow
 * time. So small jobs fill the gaps and a large job is never starved.
 *
 * Placement: a node policy (binpack: fullest feasible node; spread: emptiest) and a GPU policy
 * (packing, spread, topology: NVLink/NUMA-aware sets, or fragmentation: the `ours` policy of
 * libgpcore, which scores nodes itself) per cluster, with a per-job override. Shared (fractional)
 * placements avoid GPUs whose measured utilisation is above util_threshold (a scoring penalty of
 * util_weight); a request allowing several GPU models prefers the cheapest that fits
 * (model_cost, weight cost_weight).
 * In detail: with util_weight > 0 and gpu_util given, a fraction never takes a hot GPU while a
 * cold one anywhere fits; when none does it takes the least utilised hot one (placed, not kept
 * waiting). With cost_weight > 0 and model_cost given, the cheapest model group is tried first,
 * then the next, then all allowed models together (a gang that fits only across models).
 * REQUIRE_NVLINK: a whole-GPU replica's GPUs are pairwise NVLink-connected or it is not placed;
 * PREFER_NVLINK (and the topology policy for multi-GPU requests): such a set when any node has
 * one. Whole GPUs always go to the best NVLink/NUMA set of the chosen node. The fragmentation
 * policy plans for the typical shapes of the pending requests (gp_workload_typical: 95% of them,
 * at most 16 shapes, counted over a sample of at most 8192), re-derived each cycle; its placer is
 * rebuilt only when a shape changes or a weight moves by more than 0.05.
 *
 * Cost. A shape that failed fails again in the same cycle until an eviction, and so does every
 * shape asking for at least as much of everything (same kind, models, constraints): such jobs
 * cost a hash lookup. Placing a job costs what the placer costs (O(node classes) per new shape).
 *
 * Ownership and effects: gp_scheduler borrows the cluster given to gp_sched_new, which must hold
 * exactly the assignments of the jobs in `running`. gp_sched_cycle changes that cluster: it
 * releases the victims' assignments and applies the new placements, so on return the cluster
 * matches the result. A caller that fails to commit the result reverts it with
 * gp_sched_revert. Pure: no I/O, clock, randomness (the seed is an input) or globals.
 * Not thread-safe: one cycle at a time per scheduler.
 */
#ifndef GPUPOOL_SCHED_H
#define GPUPOOL_SCHED_H

#include "gpupool/error.h"
#include "gpupool/model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gp_topology_pref {
    GP_TOPO_ANY = 0,
    GP_TOPO_PREFER_NVLINK = 1,
    GP_TOPO_REQUIRE_NVLINK = 2,
} gp_topology_pref;

typedef enum gp_node_policy {
    GP_NODE_BINPACK = 0,
    GP_NODE_SPREAD = 1,
} gp_node_policy;

typedef enum gp_gpu_policy {
    GP_GPU_DEFAULT = -1, /* per job: the cluster's */
    GP_GPU_PACKING = 0,
    GP_GPU_SPREAD = 1,
    GP_GPU_TOPOLOGY = 2,
    GP_GPU_FRAGMENTATION = 3,
} gp_gpu_policy;

/* Names "binpack"/"spread" and "packing"/"spread"/"topology"/"fragmentation"; GP_EINVAL for
 * others. */
int gp_node_policy_parse(const char *s, gp_node_policy *out);
int gp_gpu_policy_parse(const char *s, gp_gpu_policy *out);
const char *gp_node_policy_name(gp_node_policy p);
const char *gp_gpu_policy_name(gp_gpu_policy p);

/* A resource vector. In limits, -1 in a field means unlimited. */
typedef struct gp_res {
    int64_t gpu_milli;   /* GPU compute: 1000 per whole GPU */
    int64_t gpu_mem_mib; /* GPU memory */
    int64_t cpu_milli;
    int64_t memory_mib;
} gp_res;

/* What one assignment holds: whole GPUs count 1000 milli and their memory, fractions their
 * share, MIG instances compute_slices/7 of a GPU (rounded up to a milli) and their slice's
 * memory. *model receives the GPU model index (-1 for a CPU-only assignment). */
gp_res gp_sched_usage(const gp_cluster *c, const gp_assignment *a, int *model);

typedef struct gp_sched_queue {
    char name[GP_NAME_MAX];
    double weight;     /* > 0; share of the pool in fair-share order */
    gp_res guarantee;  /* what the queue is owed; 0 = nothing, -1 = unlimited (see Limits) */
    gp_res capability; /* the most it may hold; -1 fields = unlimited */
    bool reclaimable;  /* whether its borrowed capacity may be reclaimed (default true) */
} gp_sched_queue;

typedef struct gp_sched_tenant {
    char name[GP_NAME_MAX];
    int64_t quota_gpu_milli;   /* -1 = unlimited */
    int64_t quota_gpu_mem_mib; /* -1 = unlimited */
    /* per GPU model index of the cluster: milli-GPU; -1 = unlimited */
    int64_t quota_model_milli[GP_MAX_MODELS];
} gp_sched_tenant;

typedef struct gp_sched_job {
    int64_t id;
    int tenant; /* index into the input's tenants */
    int queue;  /* index into the input's queues */
    int32_t priority;
    char priority_class[GP_NAME_MAX]; /* for reasons */
    bool can_preempt;                 /* its class's policy is PreemptLowerPriority */
    bool preemptible;                 /* may be evicted */
    int64_t submit_ms;
    int replicas;
    gp_request req; /* one replica's request */
    gp_topology_pref topology;
    gp_gpu_policy gpu_policy; /* GP_GPU_DEFAULT = the cluster's */
    int64_t max_runtime_ms;   /* 0 = none */
    /* A pending job that can never run (gpupool/feasible.h) waits with the reason
     * "unschedulable: WHY", and " (allowed to wait)" after it when it asked to wait for
     * capacity that is not there yet. */
    bool allow_unschedulable;
    const char (*model_names)[GP_NAME_MAX]; /* the models as the job names them, for that
                                               reason; borrowed; NULL when none */
    int nmodel_names;
    /* The replicas spread and anti_affinity (req.place) count together: those of the jobs with
     * the same group (a service's replica jobs); 0: the job's own only. */
    int64_t group;
    /* jobs in `running` only: */
    int64_t start_ms;
    const gp_assignment *assignments; /* replicas entries, applied to the cluster */
} gp_sched_job;

typedef struct gp_sched_config {
    gp_node_policy node_policy;
    gp_gpu_policy gpu_policy; /* never GP_GPU_DEFAULT */
    bool backfill;
    double util_threshold; /* percent; shared placements avoid GPUs above it */
    double util_weight;    /* 0 = ignore utilisation */
    double cost_weight;    /* 0 = ignore cost */
    int max_preemptions;   /* jobs evicted per cycle at most; 0 = no preemption */
} gp_sched_config;

/* Defaults: binpack, fragmentation, backfill on, threshold 80, util_weight 1, cost_weight 1,
 * max_preemptions 64. */
void gp_sched_config_default(gp_sched_config *cfg);

typedef struct gp_sched_input {
    const gp_sched_queue *queues;
    int nqueues;
    const gp_sched_tenant *tenants;
    int ntenants;
    const gp_sched_job *running; /* Scheduled and Running jobs: hold the cluster's assignments */
    int nrunning;
    const gp_sched_job *pending; /* in any order */
    int npending;
    const double *gpu_util;   /* per cluster GPU (node's first_gpu + i), percent; NULL = unknown */
    const double *model_cost; /* per model index, price per GPU-hour; NULL = all equal */
    /* per cluster node: its maintenance deadline (ms since the epoch), for reasons only; NULL, or
     * 0 for a node: now_ms + its window */
    const int64_t *drain_at_ms;
    /* The nodes a job that can never run is judged against (the registered ones); NULL = every
     * node of the cluster. */
    const int *pool_nodes;
    int npool_nodes;
    int64_t now_ms;
    uint64_t seed;
} gp_sched_input;

typedef struct gp_sched_placement {
    int64_t job_id;
    int nreplicas;
    gp_assignment *replicas; /* owned by the result */
} gp_sched_placement;

typedef struct gp_sched_eviction {
    int64_t job_id;     /* the victim, one of the input's running jobs */
    int64_t for_job_id; /* the job placed in its room */
    char reason[256];   /* "preempted by job 42 (priority class high, 1000 > 100)" or
                           "reclaimed: queue research is owed 16 GPUs, uses 8" */
} gp_sched_eviction;

typedef struct gp_sched_wait {
    int64_t job_id;
    char reason[256]; /* "quota: tenant team-a uses 16 of 16 A100-80GB GPUs; the job needs 8",
                         "quota: tenant team-a uses 120 of 128 GiB GPU memory; ...",
                         "maintenance: dgx-1 drains at 14:00 UTC and the job may run 2h",
                         "gang: needs 4 nodes with 8 free NVLink-connected GPUs; 2 have them" */
} gp_sched_wait;

typedef struct gp_sched_result {
    gp_sched_placement *placed; /* in decision order */
    int nplaced;
    gp_sched_eviction *evicted;
    int nevicted;
    gp_sched_wait *waiting; /* one per pending job not placed */
    int nwaiting;
    int64_t reserved_job; /* job holding the backfill reservation; 0 = none */
    int64_t shadow_ms;    /* when it is expected to start; INT64_MAX = unknown */
} gp_sched_result;

/* Quantities as the reasons write them, so that other messages about the same limits match.
 * GPU compute in GPUs, exact to a thousandth: 16000 -> "16", 2500 -> "2.5". GPU memory in the
 * unit its limit was given in: GiB when limit_mib is a whole number of GiB ("120", "40.5"; to
 * two decimals, rounded up), else MiB; gp_sched_mem_unit names that unit ("GiB" or "MiB"). */
void gp_sched_fmt_gpus(char *buf, size_t size, int64_t milli);
void gp_sched_fmt_mem(char *buf, size_t size, int64_t mib, int64_t limit_mib);
const char *gp_sched_mem_unit(int64_t limit_mib);

typedef struct gp_scheduler gp_scheduler;

/* Creates a scheduler over cluster c (borrowed; must outlive it). GP_ENOMEM, GP_EINVAL. */
int gp_sched_new(gp_cluster *c, const gp_sched_config *cfg, gp_scheduler **out, gp_diag *d);
void gp_sched_free(gp_scheduler *s);

/* Runs one cycle. On success *out owns its arrays (free with gp_sched_result_fini) and the
 * cluster reflects it; on failure the cluster is unchanged. */
int gp_sched_cycle(gp_scheduler *s, const gp_sched_input *in, gp_sched_result *out, gp_diag *d);
/* Undoes what a cycle did to the cluster (re-applies the victims' assignments, releases the
 * placements). in must be the input that produced r. */
int gp_sched_revert(gp_scheduler *s, const gp_sched_input *in, const gp_sched_result *r);
void gp_sched_result_fini(gp_sched_result *r);

#endif
