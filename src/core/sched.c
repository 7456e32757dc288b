/*
 * The scheduling cycle: validation, the order in which pending jobs are considered, the decision
 * for each (limits, placement, preemption, backfill), the result, and revert.
 *
 * Order. Pending jobs are sorted by (priority desc, queue, submit, id). Within one priority the
 * queues take turns through a binary heap keyed by (DRF share, submit time and id of the
 * queue's next job): the queue with the lowest weighted dominant share goes next, and its share
 * is updated as soon as it places a job (or loses one to eviction). O(log queues) per job.
 *
 * Undo. Every change made to the cluster is recorded (placements in placed, victims in
 * ev_run, reserved nodes in reserved), so a failure in the middle of a cycle, or
 * gp_sched_revert after it, puts the cluster back: placements released last first, victims
 * re-applied. gp_cluster_assign and gp_cluster_release are exact inverses, so the allocation
 * state is restored bit for bit (node versions aside).
 */
#include "core/assert.h"
#include "core/grow.h"
#include "core/sched_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPLICAS 4096

/* ---- names and configuration ---- */

static const char *const node_names[] = {"binpack", "spread"};
static const char *const gpu_names[] = {"packing", "spread", "topology", "fragmentation"};

int gp_node_policy_parse(const char *s, gp_node_policy *out)
{
    for (int i = 0; s && i < 2; i++) {
        if (strcmp(s, node_names[i]) == 0) {
            *out = (gp_node_policy)i;
            return 0;
        }
    }
    return GP_EINVAL;
}

int gp_gpu_policy_parse(const char *s, gp_gpu_policy *out)
{
    for (int i = 0; s && i < SCHED_NPOLICIES; i++) {
        if (strcmp(s, gpu_names[i]) == 0) {
            *out = (gp_gpu_policy)i;
            return 0;
        }
    }
    return GP_EINVAL;
}

const char *gp_node_policy_name(gp_node_policy p)
{
    return p >= 0 && p < 2 ? node_names[p] : "unknown";
}

const char *gp_gpu_policy_name(gp_gpu_policy p)
{
    if (p == GP_GPU_DEFAULT) {
        return "default";
    }
    return p >= 0 && p < SCHED_NPOLICIES ? gpu_names[p] : "unknown";
}

void gp_sched_config_default(gp_sched_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->node_policy = GP_NODE_BINPACK;
    cfg->gpu_policy = GP_GPU_FRAGMENTATION;
    cfg->backfill = true;
    cfg->util_threshold = 80.0;
    cfg->util_weight = 1.0;
    cfg->cost_weight = 1.0;
    cfg->max_preemptions = 64;
}

int gp_sched_new(gp_cluster *c, const gp_sched_config *cfg, gp_scheduler **out, gp_diag *d)
{
    *out = NULL;
    if (!c || !cfg) {
        return gp_diag_set(d, GP_EINVAL, "scheduler: cluster and config are required");
    }
    if (cfg->node_policy < 0 || cfg->node_policy > GP_NODE_SPREAD || cfg->gpu_policy < 0 ||
        cfg->gpu_policy >= SCHED_NPOLICIES) {
        return gp_diag_set(d, GP_EINVAL, "scheduler: unknown node or GPU policy");
    }
    if (!(cfg->util_threshold >= 0) || !(cfg->util_weight >= 0) || !(cfg->cost_weight >= 0) ||
        cfg->max_preemptions < 0) {
        return gp_diag_set(d, GP_EINVAL,
                           "scheduler: util_threshold, util_weight, cost_weight and "
                           "max_preemptions must be >= 0");
    }
    gp_scheduler *s = calloc(1, sizeof(*s));
    if (!s) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    s->c = c;
    s->cfg = *cfg;
    *out = s;
    return 0;
}

void gp_sched_free(gp_scheduler *s)
{
    if (s) {
        placers_free(s);
        free(s->hot);
        free(s);
    }
}

/* ---- input ---- */

static int check_job(const gp_sched_input *in, const gp_sched_job *j, const char *what, gp_diag *d)
{
    if (j->tenant < 0 || j->tenant >= in->ntenants || j->queue < 0 || j->queue >= in->nqueues) {
        return gp_diag_set(d, GP_EINVAL, "%s job %lld: tenant or queue index out of range", what,
                           (long long)j->id);
    }
    return 0;
}

static int check_running(const gp_cluster *c, const gp_sched_input *in, const gp_sched_job *j,
                         gp_diag *d)
{
    int rc = check_job(in, j, "running", d);
    if (rc < 0) {
        return rc;
    }
    if (j->replicas < 1 || !j->assignments) {
        return gp_diag_set(d, GP_EINVAL, "running job %lld: no assignments", (long long)j->id);
    }
    for (int k = 0; k < j->replicas; k++) {
        if (j->assignments[k].node < 0 || j->assignments[k].node >= gp_cluster_node_count(c)) {
            return gp_diag_set(d, GP_EINVAL, "running job %lld: node index out of range",
                               (long long)j->id);
        }
    }
    return 0;
}

static int check_input(const gp_scheduler *s, const gp_sched_input *in, gp_diag *d)
{
    if ((in->nqueues > 0 && !in->queues) || (in->ntenants > 0 && !in->tenants) ||
        (in->nrunning > 0 && !in->running) || (in->npending > 0 && !in->pending) ||
        in->nqueues < 0 || in->ntenants < 0 || in->nrunning < 0 || in->npending < 0) {
        return gp_diag_set(d, GP_EINVAL, "scheduler input: missing arrays");
    }
    for (int q = 0; q < in->nqueues; q++) {
        if (!(in->queues[q].weight > 0)) {
            return gp_diag_set(d, GP_EINVAL, "queue %s: weight must be > 0", in->queues[q].name);
        }
    }
    for (int r = 0; r < in->nrunning; r++) {
        int rc = check_running(s->c, in, &in->running[r], d);
        if (rc < 0) {
            return rc;
        }
    }
    for (int p = 0; p < in->npending; p++) {
        int rc = check_job(in, &in->pending[p], "pending", d);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- cycle state ---- */

/* Which running jobs hold a replica on each node (CSR). */
static int index_nodes(cycle *cy)
{
    int nn = cy->c->nnodes, total = 0;
    cy->by_node_start = calloc((size_t)nn + 1, sizeof(int));
    if (!cy->by_node_start) {
        return GP_ENOMEM;
    }
    for (int r = 0; r < cy->in->nrunning; r++) {
        for (int k = 0; k < cy->in->running[r].replicas; k++) {
            cy->by_node_start[cy->in->running[r].assignments[k].node + 1]++;
            total++;
        }
    }
    for (int n = 0; n < nn; n++) {
        int here = cy->by_node_start[n + 1];
        cy->max_on_node = here > cy->max_on_node ? here : cy->max_on_node;
        cy->by_node_start[n + 1] += cy->by_node_start[n];
    }
    cy->by_node = malloc(sizeof(int) * (size_t)(total ? total : 1));
    int *fill = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    if (!cy->by_node || !fill) {
        free(fill);
        return GP_ENOMEM;
    }
    memcpy(fill, cy->by_node_start, sizeof(int) * (size_t)nn);
    for (int r = 0; r < cy->in->nrunning; r++) {
        for (int k = 0; k < cy->in->running[r].replicas; k++) {
            cy->by_node[fill[cy->in->running[r].assignments[k].node]++] = r;
        }
    }
    free(fill);
    return 0;
}

static int cycle_init(cycle *cy, gp_scheduler *s, const gp_sched_input *in)
{
    memset(cy, 0, sizeof(*cy));
    cy->plain_known = -1;
    cy->s = s;
    cy->c = s->c;
    cy->in = in;
    cy->cfg = &s->cfg;
    gp_rng_seed(&cy->rng, in->seed);
    cy->nmodels = gp_cluster_model_count(s->c);
    cy->shadow_ms = SCHED_NEVER;
    gp_u64map_init(&cy->fail_index);
    cy->gen = 1;
    cy->is_reserved = calloc((size_t)s->c->nnodes + 1, 1);
    if (!cy->is_reserved) {
        return GP_ENOMEM;
    }
    int rc = limits_init(cy);
    rc = rc < 0 ? rc : maint_init(cy);
    return rc < 0 ? rc : index_nodes(cy);
}

static void cycle_fini(cycle *cy)
{
    limits_fini(cy);
    free(cy->by_node_start);
    free(cy->by_node);
    for (int p = 0; p < cy->nplaced; p++) {
        free(cy->placed[p].rep);
    }
    free(cy->placed);
    free(cy->ev);
    free(cy->ev_run);
    free(cy->wait);
    free(cy->at.rep);
    free(cy->at.victims);
    gp_u64map_fini(&cy->fail_index);
    free(cy->fails);
    free(cy->reserved);
    free(cy->is_reserved);
    free(cy->windowed);
    constraints_fini(cy);
}

/* ---- order: priority levels, queues by DRF share through an indexed heap ---- */

typedef struct okey {
    int32_t priority;
    int32_t queue;
    int64_t submit;
    int64_t id;
    int idx;
} okey;

static int okey_cmp(const void *pa, const void *pb)
{
    const okey *a = pa, *b = pb;
    if (a->priority != b->priority) {
        return a->priority > b->priority ? -1 : 1;
    }
    if (a->queue != b->queue) {
        return a->queue < b->queue ? -1 : 1;
    }
    if (a->submit != b->submit) {
        return a->submit < b->submit ? -1 : 1;
    }
    return a->id < b->id ? -1 : a->id > b->id;
}

typedef struct order {
    okey *keys;
    int *head, *end; /* per queue: its next and end key in the current level */
    int *heap, *pos; /* pos: index in heap, or -1 */
    int n;
} order;

static bool qless(const cycle *cy, const order *o, int a, int b)
{
    if (cy->share[a] != cy->share[b]) {
        return cy->share[a] < cy->share[b];
    }
    const okey *ka = &o->keys[o->head[a]], *kb = &o->keys[o->head[b]];
    if (ka->submit != kb->submit) {
        return ka->submit < kb->submit;
    }
    return ka->id < kb->id;
}

static void heap_swap(order *o, int i, int j)
{
    int t = o->heap[i];
    o->heap[i] = o->heap[j];
    o->heap[j] = t;
    o->pos[o->heap[i]] = i;
    o->pos[o->heap[j]] = j;
}

static void heap_fix(const cycle *cy, order *o, int i)
{
    while (i > 0 && qless(cy, o, o->heap[i], o->heap[(i - 1) / 2])) {
        heap_swap(o, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < o->n && qless(cy, o, o->heap[l], o->heap[m])) {
            m = l;
        }
        if (r < o->n && qless(cy, o, o->heap[r], o->heap[m])) {
            m = r;
        }
        if (m == i) {
            return;
        }
        heap_swap(o, i, m);
        i = m;
    }
}

static void heap_push(const cycle *cy, order *o, int q)
{
    o->heap[o->n] = q;
    o->pos[q] = o->n;
    heap_fix(cy, o, o->n++);
}

static void heap_pop(const cycle *cy, order *o)
{
    o->pos[o->heap[0]] = -1;
    if (--o->n > 0) {
        o->heap[0] = o->heap[o->n];
        o->pos[o->heap[0]] = 0;
        heap_fix(cy, o, 0);
    }
}

/* The share of queue q changed: update it and its place in the heap. */
static void share_changed(cycle *cy, order *o, int q)
{
    cy->share[q] = limits_share(cy, q);
    if (o->pos[q] >= 0) {
        heap_fix(cy, o, o->pos[q]);
    }
}

/* ---- decisions ---- */

static int add_wait(cycle *cy, int64_t id, const char *reason)
{
    if (gp_grow((void **)&cy->wait, &cy->cap_wait, cy->nwait + 1, sizeof(gp_sched_wait), 256) < 0) {
        return GP_ENOMEM;
    }
    gp_sched_wait *w = &cy->wait[cy->nwait++];
    w->job_id = id;
    reason_copy(w->reason, reason);
    return 0;
}

static int add_eviction(cycle *cy, const job_ctx *jc, int v)
{
    if (gp_grow((void **)&cy->ev, &cy->cap_ev, cy->nev + 1, sizeof(gp_sched_eviction), 16) < 0) {
        return GP_ENOMEM;
    }
    if (gp_grow((void **)&cy->ev_run, &cy->cap_ev_run, cy->nev + 1, sizeof(int), 16) < 0) {
        return GP_ENOMEM;
    }
    const gp_sched_job *vj = &cy->in->running[v], *j = jc->job;
    gp_sched_eviction *e = &cy->ev[cy->nev];
    cy->ev_run[cy->nev++] = v;
    e->job_id = vj->id;
    e->for_job_id = j->id;
    if (cy->run[v].prio_victim) {
        reasonf(e->reason, "preempted by job %lld (priority class %s, %d > %d)", (long long)j->id,
                j->priority_class, (int)j->priority, (int)vj->priority);
    } else {
        limits_reclaim_reason(cy, jc, e->reason);
    }
    return 0;
}

static int record_placement(cycle *cy, order *o, const job_ctx *jc)
{
    attempt *at = &cy->at;
    gp_assignment *rep = malloc(sizeof(gp_assignment) * (size_t)at->nrep);
    if (!rep || gp_grow((void **)&cy->placed, &cy->cap_placed, cy->nplaced + 1, sizeof(placed_job),
                        64) < 0) {
        free(rep);
        return GP_ENOMEM;
    }
    memcpy(rep, at->rep, sizeof(gp_assignment) * (size_t)at->nrep);
    cy->placed[cy->nplaced++] = (placed_job){jc->idx, rep};
    for (int k = 0; k < at->nrep; k++) {
        limits_account(cy, jc->job->tenant, jc->job->queue, &at->rep[k], 1);
    }
    at->nrep = 0;
    share_changed(cy, o, jc->job->queue);
    return 0;
}

/* Commits the attempt: 1 when placed, 0 when the exact usage breaks a limit (undone, reason
 * set), or an error (undone). */
static int commit(cycle *cy, order *o, const job_ctx *jc, char *reason)
{
    attempt *at = &cy->at;
    if (!limits_post_check(cy, jc, at->rep, at->nrep, reason)) {
        attempt_unplace(cy);
        attempt_restore_victims(cy);
        return 0;
    }
    for (int i = 0; i < at->nvictims; i++) {
        if (add_eviction(cy, jc, at->victims[i]) < 0) {
            cy->nev -= i; /* the first i were recorded: drop them again */
            attempt_unplace(cy);
            attempt_restore_victims(cy);
            return GP_ENOMEM;
        }
    }
    for (int i = 0; i < at->nvictims; i++) {
        int v = at->victims[i];
        const gp_sched_job *vj = &cy->in->running[v];
        cy->run[v].out = false;
        cy->run[v].evicted = true;
        for (int k = 0; k < vj->replicas; k++) {
            limits_account(cy, vj->tenant, vj->queue, &vj->assignments[k], -1);
        }
        share_changed(cy, o, vj->queue);
        cy->gen++;
    }
    at->nvictims = 0;
    int rc = record_placement(cy, o, jc);
    if (rc < 0) {
        attempt_unplace(cy);
        return rc;
    }
    return 1;
}

static bool valid_job(const gp_sched_job *j, char *reason)
{
    if (j->replicas < 1 || j->replicas > MAX_REPLICAS) {
        reasonf(reason, "invalid: replicas must be between 1 and %d", MAX_REPLICAS);
        return false;
    }
    if (j->gpu_policy < GP_GPU_DEFAULT || j->gpu_policy >= SCHED_NPOLICIES ||
        j->topology < GP_TOPO_ANY || j->topology > GP_TOPO_REQUIRE_NVLINK) {
        reasonf(reason, "invalid: unknown GPU policy or topology preference");
        return false;
    }
    if (gp_request_check(&j->req, NULL) < 0) {
        gp_diag d;
        gp_diag_clear(&d);
        gp_request_check(&j->req, &d);
        reasonf(reason, "invalid request: %.200s", d.msg);
        return false;
    }
    return true;
}

static void job_setup(const cycle *cy, const gp_sched_job *j, int idx, job_ctx *jc)
{
    memset(jc, 0, sizeof(*jc));
    jc->job = j;
    jc->idx = idx;
    jc->pol = j->gpu_policy == GP_GPU_DEFAULT ? (int)cy->cfg->gpu_policy : (int)j->gpu_policy;
    jc->req = j->req;
    bool multi = j->req.kind == GP_REQ_WHOLE && j->req.gpu_count > 1;
    jc->nvl_require = multi && j->topology == GP_TOPO_REQUIRE_NVLINK;
    jc->nvl_prefer = multi && !jc->nvl_require &&
                     (j->topology == GP_TOPO_PREFER_NVLINK || jc->pol == GP_GPU_TOPOLOGY);
    jc->cold = j->req.kind == GP_REQ_FRACTION && cy->s->env.hot != NULL;
    jc->may_reserved =
        cy->reserved_job != 0 && j->max_runtime_ms > 0 &&
        (cy->shadow_ms == SCHED_NEVER || j->max_runtime_ms <= cy->shadow_ms - cy->in->now_ms);
}

/* The job could not be placed for want of room: the reason, and the reservation. */
static int blocked(cycle *cy, job_ctx *jc, char *reason)
{
    bool fits, blocks = false;
    int rc = backfill_ever_fits(cy, jc, &fits);
    if (rc == 0 && fits) {
        rc = backfill_blocks(cy, jc, &blocks);
    }
    if (rc < 0) {
        return rc;
    }
    if (!fits || jc->job->replicas > 1) {
        bool never = false;
        rc = never_pool(cy, jc, reason, &never);
        if (rc < 0 || never) {
            return rc < 0 ? rc : add_wait(cy, jc->job->id, reason);
        }
    }
    if (!fits) {
        char base[SCHED_REASON];
        memcpy(base, reason, sizeof(base));
        reasonf(reason, "%.190s; no node could hold it even when empty", base);
    } else if (blocks) {
        if (cy->shadow_ms == SCHED_NEVER) {
            reasonf(reason,
                    "backfill: waiting behind job %lld, which holds the reservation (its start "
                    "time is unknown)",
                    (long long)cy->reserved_job);
        } else {
            char when[48];
            maint_utc_text(cy->shadow_ms, cy->in->now_ms, when, sizeof(when));
            reasonf(reason,
                    "backfill: waiting behind job %lld, which holds the reservation until %s",
                    (long long)cy->reserved_job, when);
        }
    } else if (cy->reserved_job == 0) {
        rc = backfill_reserve(cy, jc);
        if (rc < 0) {
            return rc;
        }
        if (cy->reserved_job == jc->job->id) {
            char base[SCHED_REASON];
            memcpy(base, reason, sizeof(base));
            if (cy->shadow_ms == SCHED_NEVER) {
                reasonf(reason, "%.150s; holds the backfill reservation", base);
            } else {
                char when[48];
                maint_utc_text(cy->shadow_ms, cy->in->now_ms, when, sizeof(when));
                reasonf(reason, "%.150s; holds the backfill reservation, expected to start at %s",
                        base, when);
            }
        }
    }
    return add_wait(cy, jc->job->id, reason);
}

static int decide(cycle *cy, order *o, int idx)
{
    const gp_sched_job *j = &cy->in->pending[idx];
    char reason[SCHED_REASON] = "";
    job_ctx jc;
    if (!valid_job(j, reason)) {
        return add_wait(cy, j->id, reason);
    }
    job_setup(cy, j, idx, &jc);
    if (!limits_check(cy, &jc, reason)) {
        never_limits(cy, &jc, reason);
        return add_wait(cy, j->id, reason);
    }
    jc.req.allowed_models = jc.limit_models;
    cy->at.nrep = 0;
    cy->at.nvictims = 0;
    int rc = place_gang(cy, &jc, reason);
    if (rc == GP_ENOSPC) {
        rc = preempt_try(cy, &jc, reason);
    }
    if (rc == 0) {
        rc = commit(cy, o, &jc, reason);
        if (rc == 0) {
            return add_wait(cy, j->id, reason);
        }
        return rc < 0 ? rc : 0;
    }
    if (rc == GP_ENOSPC && jc.constrained) {
        return add_wait(cy, j->id, reason); /* not for want of room: no reservation */
    }
    return rc == GP_ENOSPC ? blocked(cy, &jc, reason) : rc;
}

static int order_init(const cycle *cy, order *o)
{
    const gp_sched_input *in = cy->in;
    int nq = in->nqueues ? in->nqueues : 1;
    o->keys = malloc(sizeof(okey) * (size_t)(in->npending ? in->npending : 1));
    o->head = malloc(sizeof(int) * (size_t)nq);
    o->end = malloc(sizeof(int) * (size_t)nq);
    o->heap = malloc(sizeof(int) * (size_t)nq);
    o->pos = malloc(sizeof(int) * (size_t)nq);
    o->n = 0;
    if (!o->keys || !o->head || !o->end || !o->heap || !o->pos) {
        return GP_ENOMEM;
    }
    for (int i = 0; i < in->npending; i++) {
        const gp_sched_job *j = &in->pending[i];
        o->keys[i] = (okey){j->priority, j->queue, j->submit_ms, j->id, i};
    }
    qsort(o->keys, (size_t)in->npending, sizeof(okey), okey_cmp);
    for (int q = 0; q < nq; q++) {
        o->pos[q] = -1;
    }
    return 0;
}

static void order_fini(order *o)
{
    free(o->keys);
    free(o->head);
    free(o->end);
    free(o->heap);
    free(o->pos);
}

/* Decides one priority level: keys [i, end). */
static int run_level(cycle *cy, order *o, int i, int end)
{
    for (int k = i; k < end;) {
        int q = o->keys[k].queue, e = k;
        while (e < end && o->keys[e].queue == q) {
            e++;
        }
        o->head[q] = k;
        o->end[q] = e;
        heap_push(cy, o, q);
        k = e;
    }
    while (o->n > 0) {
        int q = o->heap[0];
        int idx = o->keys[o->head[q]++].idx;
        if (o->head[q] == o->end[q]) {
            heap_pop(cy, o);
        } else {
            heap_fix(cy, o, 0);
        }
        int rc = decide(cy, o, idx);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

static int run_order(cycle *cy)
{
    order o;
    int rc = order_init(cy, &o);
    for (int i = 0; rc == 0 && i < cy->in->npending;) {
        int end = i;
        while (end < cy->in->npending && o.keys[end].priority == o.keys[i].priority) {
            end++;
        }
        rc = run_level(cy, &o, i, end);
        i = end;
    }
    order_fini(&o);
    return rc;
}

/* ---- result, undo, revert ---- */

static void undo_cycle(cycle *cy)
{
    attempt_unplace(cy);
    attempt_restore_victims(cy);
    for (int p = cy->nplaced - 1; p >= 0; p--) {
        int n = cy->in->pending[cy->placed[p].pending].replicas;
        for (int k = n - 1; k >= 0; k--) {
            int rc = gp_cluster_release(cy->c, &cy->placed[p].rep[k]);
            GP_ALWAYS(rc == 0);
            (void)rc;
        }
    }
    for (int e = cy->nev - 1; e >= 0; e--) {
        int rc = run_restore(cy, cy->ev_run[e]);
        GP_ALWAYS(rc == 0);
        (void)rc;
    }
    backfill_release(cy);
}

static int build_result(cycle *cy, gp_sched_result *out)
{
    out->placed = calloc((size_t)(cy->nplaced ? cy->nplaced : 1), sizeof(gp_sched_placement));
    if (!out->placed) {
        return GP_ENOMEM;
    }
    for (int p = 0; p < cy->nplaced; p++) {
        const gp_sched_job *j = &cy->in->pending[cy->placed[p].pending];
        gp_sched_placement *pl = &out->placed[p];
        pl->replicas = cy->placed[p].rep; /* moved: the result owns it */
        cy->placed[p].rep = NULL;
        pl->job_id = j->id;
        pl->nreplicas = j->replicas;
        out->nplaced = p + 1;
    }
    out->evicted = cy->ev;
    out->nevicted = cy->nev;
    cy->ev = NULL;
    out->waiting = cy->wait;
    out->nwaiting = cy->nwait;
    cy->wait = NULL;
    out->reserved_job = cy->reserved_job;
    out->shadow_ms = cy->reserved_job ? cy->shadow_ms : SCHED_NEVER;
    return 0;
}

int gp_sched_cycle(gp_scheduler *s, const gp_sched_input *in, gp_sched_result *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    out->shadow_ms = SCHED_NEVER;
    int rc = check_input(s, in, d);
    if (rc < 0) {
        return rc;
    }
    cycle cy;
    rc = cycle_init(&cy, s, in);
    if (rc == 0) {
        rc = placers_prepare(s, in);
    }
    if (rc == 0) {
        rc = run_order(&cy);
    }
    backfill_release(&cy);
    if (rc == 0) {
        rc = build_result(&cy, out);
    }
    if (rc < 0) {
        undo_cycle(&cy);
        gp_sched_result_fini(out);
        out->shadow_ms = SCHED_NEVER;
        gp_diag_set(d, rc, "scheduling cycle: %s", gp_strerror(rc));
    }
    cycle_fini(&cy);
    return rc;
}

static int find_running(const gp_sched_input *in, int64_t id)
{
    for (int r = 0; r < in->nrunning; r++) {
        if (in->running[r].id == id) {
            return r;
        }
    }
    return -1;
}

int gp_sched_revert(gp_scheduler *s, const gp_sched_input *in, const gp_sched_result *r)
{
    int err = 0;
    for (int p = r->nplaced - 1; p >= 0; p--) {
        for (int k = r->placed[p].nreplicas - 1; k >= 0; k--) {
            int rc = gp_cluster_release(s->c, &r->placed[p].replicas[k]);
            err = err ? err : rc;
        }
    }
    for (int e = r->nevicted - 1; e >= 0; e--) {
        int v = find_running(in, r->evicted[e].job_id);
        if (v < 0) {
            err = err ? err : GP_EINVAL;
            continue;
        }
        for (int k = 0; k < in->running[v].replicas; k++) {
            int rc = gp_cluster_assign(s->c, &in->running[v].assignments[k]);
            err = err ? err : rc;
        }
    }
    return err;
}

void gp_sched_result_fini(gp_sched_result *r)
{
    if (!r) {
        return;
    }
    for (int p = 0; p < r->nplaced; p++) {
        free(r->placed[p].replicas);
    }
    free(r->placed);
    free(r->evicted);
    free(r->waiting);
    memset(r, 0, sizeof(*r));
}
