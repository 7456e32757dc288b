/*
 * Private interface between the files of the scheduler.
 *
 *   sched.c          the cycle: validation, order (priority, DRF, submit, id), result, revert
 *   sched_limits.c   usage, tenant quotas, queue capability and guarantee, DRF shares, reasons
 *   sched_place.c    placers (one per GPU policy, sharing the cluster's change list), replica
 *                    placement under constraints (NVLink, hot GPUs, reserved nodes), gangs, the
 *                    failure cache
 *   sched_preempt.c  victims for reclaim and priority preemption
 *   sched_backfill.c the EASY reservation
 *   sched_maint.c    maintenance windows in reasons
 *   sched_never.c    the reasons of jobs that can never run
 *   policy_sched.c   the node-policy x GPU-policy compositions the placers run
 *
 * One gp_sched_cycle call owns one `cycle`; every change it makes to the cluster is recorded in
 * it (placements in placed, victims in run[].evicted, reserved nodes in reserved) so that a
 * failure or gp_sched_revert can undo it exactly.
 */
#ifndef GP_CORE_SCHED_IMPL_H
#define GP_CORE_SCHED_IMPL_H

#include "core/cluster_impl.h"
#include "core/policy_impl.h"
#include "core/u64map.h"
#include "gpupool/placement.h"
#include "gpupool/sched.h"

#include <stdbool.h>
#include <stdint.h>

#define SCHED_NPOLICIES     4    /* GPU policies: packing, spread, topology, fragmentation */
#define SCHED_REASON        256  /* bytes of a reason, as in gp_sched_wait */
#define SCHED_TARGET_MAX    16   /* shapes of the fragmentation target workload at most */
#define SCHED_TARGET_SAMPLE 8192 /* pending requests it is derived from at most */
#define SCHED_NEVER         INT64_MAX

/* ---- policies (policy_sched.c) ---- */

/* What the composed policies read besides the cluster, set by the scheduler for each cycle. */
typedef struct sched_env {
    const double *util;  /* per cluster GPU, percent; NULL when unknown */
    const uint32_t *hot; /* per node: bit g set when GPU g is above the threshold; NULL: none */
} sched_env;

typedef struct sched_policy {
    gp_policy base; /* first member: the placer and gp_policy_choose see this */
    gp_node_policy node;
    gp_gpu_policy gpu;
    gp_policy *inner;     /* GP_GPU_FRAGMENTATION: the `ours` policy, which scores the nodes */
    const sched_env *env; /* borrowed from the scheduler */
} sched_policy;

/* A policy scoring nodes by node (binpack/spread) and choosing fractional GPUs by gpu; for
 * GP_GPU_FRAGMENTATION the `ours` policy over target (required), fitted to the nodes of c
 * (gp_policy_fit), scores and chooses. Fractional requests never take a GPU marked hot in env
 * when a cold one on the node fits. */
int sched_policy_new(gp_node_policy node, gp_gpu_policy gpu, const gp_workload *target,
                     const gp_cluster *c, const sched_env *env, sched_policy **out);
void sched_policy_free(sched_policy *p);

/* ---- the scheduler ---- */

typedef struct sched_placer {
    sched_policy *pol;
    gp_placer *pl;
    int *dirty; /* nodes changed since this placer last synced */
    int ndirty;
    uint8_t *dirty_flag;
    int cap;                                   /* nodes dirty and dirty_flag hold */
    gp_workload_item target[SCHED_TARGET_MAX]; /* fragmentation: the target it plans for */
    int ntarget;
} sched_placer;

struct gp_scheduler {
    gp_cluster *c;
    gp_sched_config cfg;
    sched_env env;
    sched_placer placers[SCHED_NPOLICIES];
    uint32_t *hot; /* per node, for env.hot */
    int cap_hot;
};

/* ---- one cycle ---- */

typedef struct tenant_use {
    int64_t gpu_milli, gpu_mem_mib;
    int64_t model_milli[GP_MAX_MODELS];
    /* The last GPU quota refusal's text and what it said (its use and the job's need): the jobs
     * a full quota holds back get it without formatting it again (the quota is the cycle's). */
    bool refused_set;
    int64_t refused_used, refused_need;
    char refused[SCHED_REASON];
} tenant_use;

typedef struct run_job {
    gp_res use;       /* what its assignments hold */
    int64_t gpus;     /* milli-GPU, the victim cost */
    bool evicted;     /* evicted by this cycle */
    bool out;         /* released by the attempt under way */
    bool prio_victim; /* in the attempt under way: evicted for priority (else reclaim) */
} run_job;

typedef struct placed_job {
    int pending;        /* index into in->pending */
    gp_assignment *rep; /* its replicas (owned until moved into the result) */
} placed_job;

/* A job under decision: its effective request and what constrains where it may go. */
typedef struct job_ctx {
    const gp_sched_job *job;
    int idx;               /* into in->pending */
    int pol;               /* GPU policy index */
    gp_request req;        /* allowed_models narrowed by quota and cost order */
    uint64_t limit_models; /* models the limits allow (0: any) */
    bool nvl_require;      /* whole GPUs must be pairwise NVLink-connected */
    bool nvl_prefer;       /* prefer nodes where they are */
    bool cold;             /* fraction: prefer GPUs below the utilisation threshold */
    bool may_reserved;     /* short enough for the backfill reservation's nodes */
    bool reclaim;          /* within its queue's guarantee: may reclaim lent capacity */
    bool constrained;      /* its constraints or the nodes' taints kept it off (no reservation) */
} job_ctx;

/* Replicas applied and victims released by the attempt under way. */
typedef struct attempt {
    gp_assignment *rep;
    int nrep, cap_rep;
    int *victims; /* running indexes, in release order */
    int nvictims, cap_victims;
} attempt;

#define FAIL_KEY  96 /* bytes of a failure-cache class key */
#define FAIL_DIMS 6  /* sizes compared for dominance */

typedef struct fail_entry {
    int next;     /* next entry with the same class hash, or -1 */
    uint64_t gen; /* capacity generation it was recorded in */
    int fitted;   /* gang replicas that fit */
    int64_t dims[FAIL_DIMS];
    char key[FAIL_KEY]; /* the class: everything but the sizes */
    char reason[SCHED_REASON];
} fail_entry;

/* Where a replica is placed: the scheduler's cluster (pl NULL: its placers) or a scratch copy
 * with its own placer (backfill). */
typedef struct ptarget {
    gp_cluster *c;
    gp_placer *pl;
} ptarget;

typedef struct cycle {
    gp_scheduler *s;
    gp_cluster *c;
    const gp_sched_input *in;
    const gp_sched_config *cfg;
    gp_rng rng;
    int nmodels;
    /* usage, kept current as jobs are placed and evicted */
    tenant_use *tu;
    gp_res *qu;
    double *share;
    double cap_gpu, cap_cpu, cap_mem;
    /* running jobs, and which hold a replica on each node (CSR; a job may repeat) */
    run_job *run;
    int *by_node_start, *by_node;
    /* decisions */
    placed_job *placed;
    int nplaced, cap_placed;
    gp_sched_eviction *ev;
    int nev, cap_ev;
    gp_sched_wait *wait;
    int nwait, cap_wait;
    attempt at;
    /* failure cache: shapes that failed, valid while gen is unchanged (no eviction since) */
    uint64_t gen;
    gp_u64map fail_index;
    fail_entry *fails;
    int nfails, cap_fails;
    int cursor; /* next-fit start of the fallback scans */
    /* backfill */
    int64_t reserved_job;
    int64_t shadow_ms;
    int *reserved; /* nodes held unschedulable for the reservation */
    int nreserved;
    uint8_t *is_reserved; /* per node */
    int reserve_tries;
    int max_on_node; /* most running replicas on one node */
    int *ev_run;     /* running index of each eviction in ev */
    int cap_ev_run;
    int *windowed; /* nodes with a maintenance window (fixed for the cycle) */
    /* spread and anti-affinity of the job under decision (sched_constraint.c) */
    int *spread_count;  /* per node: replicas of its group */
    uint8_t *spread_ok; /* per node: one more allowed; NULL until a job needs it */
    int64_t spread_for; /* the job spread_ok was computed for (0: none) */
    /* constraints_reason of the jobs without constraints, the same for all of them in a cycle
     * (it depends on the taints alone): -1 not worked out yet, 0 none, 1 plain_reason */
    int plain_known;
    char plain_reason[SCHED_REASON];
    int nwindowed;
} cycle;

/* ---- sched_limits.c ---- */

/* Formats a reason into reason[SCHED_REASON], cut short when longer. */
void reasonf(char *reason, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copies a reason (NUL-terminated, any length) into reason[SCHED_REASON], cut short when longer:
 * what reasonf(reason, "%s", from) does, without formatting. */
void reason_copy(char *reason, const char *from);

int limits_init(cycle *cy);
void limits_fini(cycle *cy);
/* Adds (sign 1) or removes (sign -1) an assignment's usage to a tenant and a queue. */
void limits_account(cycle *cy, int tenant, int queue, const gp_assignment *a, int sign);
double limits_share(const cycle *cy, int queue);
/* Whether job j may be placed under its limits: false with the reason. On true, *models is
 * the set of GPU models it may use (0: any). Also sets jc->reclaim. */
bool limits_check(cycle *cy, job_ctx *jc, char *reason);
/* Whether the exact usage of n placed replicas keeps every limit; false with the reason. */
bool limits_post_check(cycle *cy, const job_ctx *jc, const gp_assignment *a, int n, char *reason);
bool limits_queue_above_guarantee(const cycle *cy, int queue);
/* "16", "2.5": milli-GPU as GPUs. */
void fmt_gpus(char *buf, size_t size, int64_t milli);
void fmt_cores(char *buf, size_t size, int64_t milli);
void fmt_mib(char *buf, size_t size, int64_t mib);
/* Milli-GPU one replica of r takes (model-independent). */
int64_t req_gpu_milli(const gp_request *r);
/* The victim reason for a reclaim by job jc. */
void limits_reclaim_reason(const cycle *cy, const job_ctx *jc, char *reason);

/* ---- sched_constraint.c: node selector, taints, spread, anti-affinity ---- */

/* Whether node meets jc's required constraints: its node selector, no taint of effect
 * NoSchedule or NoExecute that it does not tolerate, and spread and anti-affinity (as last
 * computed by constraints_prepare). Costs a test and a branch for a request without constraints
 * on a node without taints. */
bool constraints_ok(const cycle *cy, const gp_cluster *c, const job_ctx *jc, int node);
/* Whether node has no PreferNoSchedule taint that jc does not tolerate. */
bool constraints_preferred(const gp_cluster *c, const job_ctx *jc, int node);
/* Counts the replicas of jc's group (running, placed this cycle, and the attempt's) per node and
 * computes which nodes spread and anti-affinity allow; nothing for a job without them. 0 or
 * GP_ENOMEM. */
int constraints_prepare(cycle *cy, const job_ctx *jc);
/* When the constraints or taints keep jc off every node: "0/3 nodes match: 2 lack gpu-type=a100,
 * 1 has taint dedicated=x:NoSchedule" into reason, true; false (reason untouched) when some node
 * passes them (then what keeps the job waiting is room, and the usual reason says so). */
bool constraints_reason(cycle *cy, const job_ctx *jc, char *reason);
/* Whether reason is one constraints_reason wrote (a failure cached with it is one of them). */
bool constraints_said(const char *reason);
void constraints_fini(cycle *cy);
/* What of jc's constraints the failure cache tells shapes apart by: 0 for none; else a hash of
 * them (jobs that give the same share their failures), but the job's own for a service's
 * replica job with spread or anti-affinity (where the rest of its group is differs per job). */
uint64_t constraints_key(const job_ctx *jc);

/* ---- sched_place.c ---- */

int placers_prepare(gp_scheduler *s, const gp_sched_input *in);
void placers_free(gp_scheduler *s);
/* Places all replicas of jc, applying them to the cluster (cy->at.rep). 0, GP_ENOSPC with the
 * reason (cluster unchanged), or an error. */
int place_gang(cycle *cy, job_ctx *jc, char *reason);
/* One replica on pt, applied. 0 or GP_ENOSPC (nothing applied) or an error. */
int place_replica(cycle *cy, ptarget *pt, const job_ctx *jc, gp_assignment *out);
/* One replica of jc on node, applied. */
int place_on_node(cycle *cy, gp_cluster *c, const job_ctx *jc, int node, gp_assignment *out);
/* Whether count of the GPUs cand of node are pairwise NVLink-connected. */
bool gpus_clique(const gp_cluster *c, int node, uint32_t cand, int count);
/* Whether node can take a replica of jc now (filter, NVLink requirement). */
bool node_ok(const cycle *cy, const gp_cluster *c, const job_ctx *jc, int node);
/* Releases the replicas the attempt applied, last first. */
void attempt_unplace(cycle *cy);
int attempt_push_rep(cycle *cy, const gp_assignment *a);
/* Describes a request for reasons: "2 free A100-80GB GPUs and 16 CPU cores". */
void describe_request(const cycle *cy, const job_ctx *jc, char *buf, size_t size);
#define FAIL_PLACE    0 /* the gang does not fit */
#define FAIL_PREEMPT  1 /* evictions would not make room */
#define FAIL_RESERVED 2 /* whether it would fit on the reserved nodes ("" = no) */
#define FAIL_SOFT     3 /* no node meets the preferred constraints */
#define FAIL_HARD     4 /* no node meets the required constraints */
#define FAIL_NEVER    5 /* no node could hold it even when empty */
#define FAIL_POOL     6 /* why the pool as built could never hold it ("" = it could) */

/* ---- sched_fail.c ---- */

/* Whether jc's shape is known to fail in mode: the recorded reason, or NULL. *exact (may be
 * NULL) says whether this very shape failed rather than a smaller one of the same kind;
 * *fitted (may be NULL) receives the replicas that fit then. */
const char *fail_lookup(cycle *cy, const job_ctx *jc, int mode, bool *exact, int *fitted);
int fail_record(cycle *cy, const job_ctx *jc, int mode, const char *reason, int fitted);

/* Places every replica of jc (cy->at.rep, applied). 0; GP_ENOSPC with *fitted replicas having
 * fit (nothing stays applied); or an error. */
int gang_attempt(cycle *cy, job_ctx *jc, int *fitted);

/* ---- sched_never.c ---- */

/* Whether jc could never run on the pool as built (*never), and then its reason. 0 or
 * GP_ENOMEM. */
int never_pool(cycle *cy, const job_ctx *jc, char *reason, bool *never);
/* Replaces reason (a limit refused jc) with the unschedulable one when no limit could ever
 * admit jc. */
void never_limits(const cycle *cy, const job_ctx *jc, char *reason);

/* ---- sched_preempt.c ---- */

/* Places jc by evicting victims; on 0 the attempt holds replicas and victims (released, not
 * yet marked evicted). GP_ENOSPC (cluster unchanged, reason appended) or an error. */
int preempt_try(cycle *cy, job_ctx *jc, char *reason);
/* Re-applies a released running job. */
int run_restore(cycle *cy, int r);
int run_release(cycle *cy, int r);
/* Re-applies the victims the attempt released, last first. */
void attempt_restore_victims(cycle *cy);

/* ---- sched_maint.c ---- */

/* Lists the nodes with a maintenance window (cy->windowed). 0 or GP_ENOMEM. */
int maint_init(cycle *cy);
/* Whether the maintenance windows of at least need nodes (at least 1) that could otherwise
 * take a replica of jc keep it off them: true with the reason ("maintenance: ..."). The
 * cluster is unchanged on return. */
bool maint_reason(cycle *cy, const job_ctx *jc, int need, char *reason);
/* ms since the epoch in UTC: "14:00 UTC", "14:00:27 UTC" on the UTC day of now_ms, else
 * "2025-05-02 14:00 UTC". */
void maint_utc_text(int64_t ms, int64_t now_ms, char *buf, size_t size);
/* A duration in whole seconds (rounded up): "2h", "1h30m", "45s", "1d2h". */
void maint_duration_text(int64_t ms, char *buf, size_t size);

/* ---- sched_backfill.c ---- */

/* Whether a replica of jc would fit some schedulable node if it were empty (cached). */
int backfill_ever_fits(cycle *cy, const job_ctx *jc, bool *fits);
/* Makes the reservation for jc when none exists. 0 (reserved or not) or an error. */
int backfill_reserve(cycle *cy, job_ctx *jc);
/* Whether jc would be placed if it might use the reserved nodes (nothing applied). */
int backfill_blocks(cycle *cy, job_ctx *jc, bool *blocks);
/* Makes the reserved nodes schedulable again. */
void backfill_release(cycle *cy);

#endif
