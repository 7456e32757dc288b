/*
 * The scheduling cycle of gpupoold: build the scheduler's input from memory, run libgpcore's
 * gp_sched_cycle, commit its decisions, then apply them to memory.
 *
 * Runs on the committer thread with the state lock held (see commit.c). The decisions are
 * committed in transactions of at most CYCLE_BATCH writes (the evictions all in the first, then
 * placements in decision order, then changed reasons) and, on a shared store, of at most
 * ctl_cycle_txn_budget_ms of writing (the lease's renewal waits for the transaction in
 * progress), each applied to memory once committed;
 * between two of them the state lock is released for a moment, so reads are answered while a
 * large backlog is placed. When changes are queued for the committer meanwhile (heartbeats,
 * submits), the cycle stops after the transaction in progress and asks for the next cycle: what
 * it decided but did not commit is released from the cluster model and decided again then, so
 * the queued changes wait for one transaction, not for the whole backlog. When a commit fails,
 * what it held is reverted in the cluster model (gp_sched_revert) and memory is left as it
 * was, so nothing the store did not keep is ever acted on. A waiting job's reason is written
 * only when it changes, so an idle pool with many pending jobs does not rewrite them every
 * cycle.
 */
#include "ctl/array.h"
#include "ctl/audit.h"
#include "ctl/changes.h"
#include "ctl/history.h"
#include "ctl/meter.h"
#include "ctl/metrics.h"
#include "ctl/notify.h"
#include "ctl/recovery.h"
#include "ctl/service.h"
#include "ctl/server.h"

#include "base/log.h"
#include "gpupool/modelname.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The most writes (evictions, placements, changed reasons) one transaction of a cycle holds;
 * the evictions go together in the first whatever their number. */
#define CYCLE_BATCH 2000

/* The scheduler's input, in buffers kept from cycle to cycle (they only grow), so a cycle over
 * many jobs allocates nothing. */
struct ctl_cycle_buf {
    gp_sched_queue *queues;
    int capqueues;
    gp_sched_tenant *tenants;
    int captenants;
    gp_sched_job *running, *pending;
    int caprunning, cappending;
    gp_assignment *asg; /* the running jobs' assignments, contiguous */
    int capasg;
    double *util;
    int caputil;
    double cost[GP_MAX_MODELS];
    ctl_node **bycl; /* cluster node index -> node */
    int capbycl;
    int64_t *drain_at; /* cluster node index -> its maintenance deadline (0: none) */
    int capdrain;
    int *pool; /* the registered nodes' cluster indexes (ctl_pool_nodes) */
    int cappool, npool;
};

typedef struct cycle_in {
    gp_sched_input in;
    struct ctl_cycle_buf *b;
} cycle_in;

void ctl_cycle_buf_free(struct ctl_cycle_buf *b)
{
    if (b) {
        free(b->queues);
        free(b->tenants);
        free(b->running);
        free(b->pending);
        free(b->asg);
        free(b->util);
        free(b->bycl);
        free(b->drain_at);
        free(b->pool);
        free(b);
    }
}

/* Makes *p hold n elements of size bytes (contents not kept). */
static int reserve(void **p, int *cap, int n, size_t size)
{
    if (n <= *cap) {
        return 0;
    }
    int ncap = *cap ? *cap : 64;
    while (ncap < n) {
        ncap *= 2;
    }
    void *q = realloc(*p, size * (size_t)ncap);
    if (!q) {
        return GP_ENOMEM;
    }
    *p = q;
    *cap = ncap;
    return 0;
}

static int index_of_queue(const ctl_state *st, const char *name)
{
    for (int i = 0; i < st->nqueues; i++) {
        if (strcmp(st->queues[i].q.name, name) == 0) {
            return i;
        }
    }
    return -1;
}

static int index_of_tenant(const ctl_state *st, int64_t id)
{
    for (int i = 0; i < st->ntenants; i++) {
        if (st->tenants[i].id == id) {
            return i;
        }
    }
    return -1;
}

/* The scheduler's view of a job, cached in the job until tenants, queues, classes or models
 * change; false (with the reason set) when its queue or tenant is gone. */
static bool sched_job(ctl_state *st, ctl_job *j, gp_sched_job *out)
{
    if (j->sj_gen != st->gen) {
        gp_sched_job *v = &j->sj;
        memset(v, 0, sizeof(*v));
        v->id = j->id;
        v->queue = index_of_queue(st, j->spec.queue);
        v->tenant = index_of_tenant(st, j->tenant_id);
        ctl_pclass *pc = ctl_pclass_by_name(st, j->spec.priority_class);
        v->priority = pc ? pc->value : 0;
        v->can_preempt = pc && pc->preempt;
        snprintf(v->priority_class, sizeof(v->priority_class), "%s", j->spec.priority_class);
        v->preemptible = j->spec.preemptible;
        v->submit_ms = j->submit_ms;
        v->replicas = j->spec.replicas;
        gp_jobspec_request(&j->spec, st->cluster, &v->req);
        v->topology = j->spec.topology;
        v->gpu_policy = j->spec.gpu_policy;
        v->max_runtime_ms = j->spec.max_runtime_s * 1000;
        v->allow_unschedulable = j->spec.allow_unschedulable;
        v->model_names = (const char(*)[GP_NAME_MAX])j->spec.gpu_models;
        v->nmodel_names = j->spec.ngpu_models;
        v->group = j->owner; /* a service's replica jobs spread together */
        j->sj_gen = st->gen;
    }
    if (j->sj.queue < 0 || j->sj.tenant < 0) {
        snprintf(j->reason, sizeof(j->reason), "queue %s: does not exist", j->spec.queue);
        return false;
    }
    *out = j->sj;
    out->req.spare_ok = j->spare_ok;
    out->req.runtime_ms = j->sj.max_runtime_ms;
    out->start_ms = j->start_ms;
    out->assignments = NULL;
    return true;
}

static int grow_all(gpupoold *g, struct ctl_cycle_buf *b)
{
    ctl_state *st = &g->st;
    int nasg = 0;
    for (int i = 0; i < st->njobs; i++) {
        nasg += st->jobs[i]->replicas ? st->jobs[i]->spec.replicas : 0;
    }
    int rc = reserve((void **)&b->queues, &b->capqueues, st->nqueues + 1, sizeof(*b->queues));
    rc = rc ? rc
            : reserve((void **)&b->tenants, &b->captenants, st->ntenants + 1, sizeof(*b->tenants));
    rc = rc ? rc
            : reserve((void **)&b->running, &b->caprunning, st->njobs - st->npending + 1,
                      sizeof(*b->running));
    rc = rc ? rc
            : reserve((void **)&b->pending, &b->cappending, st->npending + 1, sizeof(*b->pending));
    rc = rc ? rc : reserve((void **)&b->asg, &b->capasg, nasg + 1, sizeof(*b->asg));
    rc = rc ? rc
            : reserve((void **)&b->util, &b->caputil, gp_cluster_gpu_count(st->cluster) + 1,
                      sizeof(*b->util));
    int nn = gp_cluster_node_count(st->cluster) + 1;
    rc = rc ? rc : reserve((void **)&b->bycl, &b->capbycl, nn, sizeof(*b->bycl));
    rc = rc ? rc : reserve((void **)&b->pool, &b->cappool, st->nnodes + 1, sizeof(*b->pool));
    return rc ? rc : reserve((void **)&b->drain_at, &b->capdrain, nn, sizeof(*b->drain_at));
}

/* scheduler.model_cost per model of the cluster: each model takes the price of the most
 * specific name naming it (gpupool/modelname.h), of equally specific ones the first. */
static void fill_costs(gpupoold *g, struct ctl_cycle_buf *b)
{
    const gp_cluster *c = g->st.cluster;
    const gp_ctl_cost_map *costs = &g->cfg->scheduler.model_cost;
    int rank[GP_MAX_MODELS] = {0};
    memset(b->cost, 0, sizeof(b->cost));
    for (int i = 0; i < costs->n; i++) {
        for (int m = 0; m < gp_cluster_model_count(c) && m < GP_MAX_MODELS; m++) {
            const gp_gpu_model *info = gp_cluster_model_info(c, m);
            int r = gp_model_name_match(costs->entry[i].model, info->name, info->mem_mib);
            if (r > rank[m]) {
                rank[m] = r;
                b->cost[m] = costs->entry[i].price;
            }
        }
    }
}

static void fill_limits(gpupoold *g, struct ctl_cycle_buf *b)
{
    ctl_state *st = &g->st;
    for (int i = 0; i < st->nqueues; i++) {
        b->queues[i] = st->queues[i].q;
    }
    for (int i = 0; i < st->ntenants; i++) {
        ctl_tenant_limits(st, &st->tenants[i], &b->tenants[i]);
    }
    /* a node replaced by a new registration keeps its cluster index, with no ctl_node */
    memset(b->drain_at, 0, sizeof(*b->drain_at) * (size_t)gp_cluster_node_count(st->cluster));
    for (int i = 0; i < st->nnodes; i++) {
        ctl_node *n = &st->nodes[i];
        b->bycl[n->cl] = n;
        b->drain_at[n->cl] = n->drain_deadline_ms;
        int first = gp_cluster_node(st->cluster, n->cl)->first_gpu;
        for (int k = 0; k < n->ngpus; k++) {
            b->util[first + k] = n->gpus[k].util < 0 ? 0 : n->gpus[k].util;
        }
    }
    fill_costs(g, b);
    b->npool = ctl_pool_nodes(st, b->pool);
}

static int build(gpupoold *g, cycle_in *c, int64_t now)
{
    ctl_state *st = &g->st;
    if (!g->cycbuf && !(g->cycbuf = calloc(1, sizeof(*g->cycbuf)))) {
        return GP_ENOMEM;
    }
    struct ctl_cycle_buf *b = c->b = g->cycbuf;
    int rc = grow_all(g, b);
    if (rc < 0) {
        return rc;
    }
    fill_limits(g, b);
    int nr = 0, np = 0, na = 0;
    for (int i = 0; i < st->njobs; i++) {
        ctl_job *j = st->jobs[i];
        if (ctl_job_state_holds(j->state) && j->replicas) {
            if (sched_job(st, j, &b->running[nr])) {
                for (int r = 0; r < j->spec.replicas; r++) {
                    b->asg[na + r] = j->replicas[r].a;
                }
                b->running[nr++].assignments = &b->asg[na];
                na += j->spec.replicas;
            }
        } else if (ctl_job_state_waits(j->state) && !ctl_job_is_array(j) &&
                   ctl_job_deps(st, j, NULL) == GP_DEPS_READY &&
                   sched_job(st, j, &b->pending[np])) {
            np++;
        }
    }
    c->in = (gp_sched_input){.queues = b->queues,
                             .nqueues = st->nqueues,
                             .tenants = b->tenants,
                             .ntenants = st->ntenants,
                             .running = b->running,
                             .nrunning = nr,
                             .pending = b->pending,
                             .npending = np,
                             .gpu_util = b->util,
                             .model_cost = g->cfg->scheduler.model_cost.n ? b->cost : NULL,
                             .drain_at_ms = b->drain_at,
                             .pool_nodes = b->pool,
                             .npool_nodes = b->npool,
                             .now_ms = now,
                             .seed = (uint64_t)now};
    return 0;
}

/* "node-1 GPU 0,1; node-2 GPU 0,1"; a MIG slice says what it does to the GPU's instances: "node-1
 * GPU 1 (MIG 1g.10gb: reused instance GPU 1 slice 6)". Before the next layout a node reports. */
static void describe_placement(const gp_cluster *cl, cycle_in *c, const gp_sched_placement *p,
                               char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (int r = 0; r < p->nreplicas && n + 64 < cap; r++) {
        const gp_assignment *a = &p->replicas[r];
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", r ? "; " : "", c->b->bycl[a->node]->name);
        for (int s = 0; s < a->nshares && n + 16 < cap; s++) {
            n += (size_t)snprintf(buf + n, cap - n, "%s%d", s ? "," : " GPU ", a->shares[s].gpu);
        }
        for (int s = 0; s < a->nshares && n + 16 < cap; s++) {
            char mig[320]; /* at most 7 instances destroyed: about 210 bytes */
            gp_mig_share_describe(cl, a->node, &a->shares[s], mig, sizeof(mig));
            if (mig[0]) {
                n += (size_t)snprintf(buf + n, cap - n, " (%s)", mig);
            }
        }
    }
}

/* Writes the placement of p; replicas receives the memory form, applied after the commit. */
static int write_placed(gpupoold *g, cycle_in *c, const gp_sched_placement *p,
                        ctl_replica *replicas, int64_t now, gp_diag *d)
{
    int64_t epoch;
    int rc = gp_store_next_epoch(g->store, &epoch, d);
    for (int r = 0; rc == 0 && r < p->nreplicas; r++) {
        ctl_node *n = c->b->bycl[p->replicas[r].node];
        replicas[r] = (ctl_replica){.node_id = n->id, .epoch = epoch, .a = p->replicas[r]};
        gp_placement_rec rec = {
            .job_id = p->job_id, .replica = r, .node_id = n->id, .epoch = epoch};
        json_t *doc = ctl_assignment_doc(&p->replicas[r]);
        char *text = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        rc = text ? gp_store_placement_put(g->store, &rec, text, d)
                  : gp_diag_set(d, GP_ENOMEM, "out of memory");
        free(text);
    }
    ctl_job *j = ctl_job_by_id(&g->st, p->job_id);
    if (rc == 0) {
        ctl_job shadow = *j;
        shadow.reason[0] = 0;
        shadow.spare_ok = false;
        shadow.start_ms = now;
        shadow.replicas = replicas;
        rc = ctl_job_store(g, &shadow, CTL_SCHEDULED, d);
    }
    if (rc == 0) {
        char where[512];
        describe_placement(g->st.cluster, c, p, where, sizeof(where));
        rc = ctl_job_event_at(g, p->job_id, now, "Scheduled", where, d);
    }
    if (rc == 0) {
        rc = ctl_audit_allocate(g, j, replicas, p->nreplicas, d);
    }
    if (rc == 0) {
        rc = ctl_meter_open(g, j, replicas, p->nreplicas, now, d);
    }
    return rc;
}

static int write_evicted(gpupoold *g, const gp_sched_eviction *e, int64_t now, gp_diag *d)
{
    ctl_job *j = ctl_job_by_id(&g->st, e->job_id);
    int rc = gp_store_placement_clear(g->store, e->job_id, d);
    if (rc == 0) {
        ctl_job shadow = *j;
        snprintf(shadow.reason, sizeof(shadow.reason), "%s", e->reason);
        rc = ctl_job_store(g, &shadow, CTL_PREEMPTED, d);
    }
    if (rc == 0) {
        rc = ctl_job_event_at(g, e->job_id, now, "Preempted", e->reason, d);
    }
    if (rc == 0) {
        rc = ctl_audit_free(g, j, "scheduler", "Preempted", e->reason, d);
    }
    if (rc == 0) {
        rc = ctl_meter_close(g, j, now, d);
    }
    return rc;
}

static int write_waiting(gpupoold *g, const gp_sched_wait *w, gp_diag *d)
{
    ctl_job *j = ctl_job_by_id(&g->st, w->job_id);
    if (j->state == CTL_PENDING && strcmp(j->reason, w->reason) == 0) {
        return 0; /* a Preempted job becomes Pending: written even with the same reason */
    }
    ctl_job shadow = *j;
    snprintf(shadow.reason, sizeof(shadow.reason), "%s", w->reason);
    return ctl_job_store(g, &shadow, CTL_PENDING, d);
}

/* One transaction's share of a cycle's decisions: evicted[ev0, ev1), placed[pl0, pl1),
 * waiting[wt0, wt1). */
typedef struct result_span {
    int ev0, ev1, pl0, pl1, wt0, wt1;
} result_span;

/* Writes the decisions of the span; replicas[i] gets placement i's memory form. The evictions
 * are written whatever the time; past the deadline the span is cut after the last decision
 * written (at least one), so that the rest goes to the next transaction. */
static int write_result(gpupoold *g, cycle_in *c, const gp_sched_result *r, result_span *sp,
                        ctl_replica **replicas, int64_t now, int64_t deadline, gp_diag *d)
{
    int rc = 0;
    for (int i = sp->ev0; rc == 0 && i < sp->ev1; i++) {
        rc = write_evicted(g, &r->evicted[i], now, d);
    }
    bool some = sp->ev1 > sp->ev0;
    for (int i = sp->pl0; rc == 0 && i < sp->pl1; i++) {
        if (some && ctl_cycle_txn_spent(deadline)) {
            sp->pl1 = i;
            sp->wt1 = sp->wt0;
            return 0;
        }
        rc = write_placed(g, c, &r->placed[i], replicas[i], now, d);
        some = true;
    }
    for (int i = sp->wt0; rc == 0 && i < sp->wt1; i++) {
        if (some && ctl_cycle_txn_spent(deadline)) {
            sp->wt1 = i;
            return 0;
        }
        rc = write_waiting(g, &r->waiting[i], d);
        some = true;
    }
    return rc;
}

static void apply_result(gpupoold *g, const gp_sched_result *r, const result_span *sp,
                         ctl_replica **replicas, int64_t now)
{
    ctl_state *st = &g->st;
    for (int i = sp->ev0; i < sp->ev1; i++) {
        ctl_job *j = ctl_job_by_id(st, r->evicted[i].job_id);
        ctl_job_drop_replicas(st, j);
        snprintf(j->reason, sizeof(j->reason), "%s", r->evicted[i].reason);
        ctl_job_set_state(st, j, CTL_PREEMPTED);
    }
    for (int i = sp->pl0; i < sp->pl1; i++) {
        ctl_job *j = ctl_job_by_id(st, r->placed[i].job_id);
        free(j->replicas);
        j->replicas = replicas[i];
        ctl_state_placements_changed(st);
        ctl_job_desired_changed(st, j);
        replicas[i] = NULL;
        j->reason[0] = 0;
        j->spare_ok = false;
        j->start_ms = now;
        ctl_job_set_state(st, j, CTL_SCHEDULED);
    }
    for (int i = sp->wt0; i < sp->wt1; i++) {
        ctl_job *j = ctl_job_by_id(st, r->waiting[i].job_id);
        snprintf(j->reason, sizeof(j->reason), "%s", r->waiting[i].reason);
        ctl_job_set_state(st, j, CTL_PENDING);
    }
    atomic_fetch_add(&g->stats.placed, sp->pl1 - sp->pl0);
    atomic_fetch_add(&g->stats.evicted, sp->ev1 - sp->ev0);
}

static bool reasons_changed(gpupoold *g, const gp_sched_result *r)
{
    for (int i = 0; i < r->nwaiting; i++) {
        ctl_job *j = ctl_job_by_id(&g->st, r->waiting[i].job_id);
        if (j->state != CTL_PENDING || strcmp(j->reason, r->waiting[i].reason) != 0) {
            return true;
        }
    }
    return false;
}

typedef struct result_txn {
    cycle_in *c;
    gp_sched_result *r;
    result_span sp;
    ctl_replica **replicas;
    int64_t now;
    int64_t deadline; /* gp_mono_ms past which the span is cut; 0: none */
} result_txn;

static int result_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    result_txn *x = arg;
    return write_result(tx->g, x->c, x->r, &x->sp, x->replicas, x->now, x->deadline, d);
}

/* The next transaction's span after *done (all evictions first, then up to CYCLE_BATCH writes
 * in all: a span without evictions always has room); false when nothing is left. */
static bool next_span(const gp_sched_result *r, const result_span *done, result_span *sp)
{
    int room = CYCLE_BATCH;
    sp->ev0 = done->ev1;
    sp->ev1 = r->nevicted;
    room -= sp->ev1 - sp->ev0;
    room = room > 0 ? room : 0;
    sp->pl0 = done->pl1;
    sp->pl1 = sp->pl0 + (r->nplaced - sp->pl0 < room ? r->nplaced - sp->pl0 : room);
    room -= sp->pl1 - sp->pl0;
    sp->wt0 = done->wt1;
    sp->wt1 = sp->wt0 + (r->nwaiting - sp->wt0 < room ? r->nwaiting - sp->wt0 : room);
    return sp->ev1 > sp->ev0 || sp->pl1 > sp->pl0 || sp->wt1 > sp->wt0;
}

/* Between two transactions of a cycle: whether changes wait for the committer; if none, the
 * state lock is released for a moment so that waiting readers are answered. */
static bool pause_for_others(gpupoold *g)
{
    pthread_mutex_lock(&g->qlock);
    bool queued = g->head != NULL;
    pthread_mutex_unlock(&g->qlock);
    if (!queued) {
        ctl_desired_publish(&g->st); /* agents start what is committed so far */
        ctl_read_unlock(g);
        struct timespec ts = {0, 500000}; /* woken readers take the lock meanwhile */
        nanosleep(&ts, NULL);
        ctl_read_lock(g);
    }
    return queued;
}

/* Releases from the cluster model what the cycle decided but did not commit: placed[from, ...)
 * and, when with_evictions (nothing was committed), the evictions. */
static void revert_rest(gpupoold *g, cycle_in *c, const gp_sched_result *r, int from,
                        bool with_evictions)
{
    gp_sched_result rest = *r;
    rest.placed = r->placed + from;
    rest.nplaced = r->nplaced - from;
    rest.nevicted = with_evictions ? r->nevicted : 0;
    gp_sched_revert(g->sched, &c->in, &rest);
}

/* The cycle's decisions: stored span by span (each span one transaction, the store only), each
 * applied to memory once committed; *placed receives the placements committed, *reasons the
 * waiting reasons committed. What was not committed is released from the scheduler's model. */
static int commit_result(gpupoold *g, cycle_in *c, gp_sched_result *r, int64_t now, int *placed,
                         int *reasons, gp_diag *d)
{
    ctl_replica **replicas = calloc((size_t)r->nplaced + 1, sizeof(*replicas));
    int rc = replicas ? 0 : GP_ENOMEM;
    for (int i = 0; rc == 0 && i < r->nplaced; i++) {
        replicas[i] = calloc((size_t)r->placed[i].nreplicas, sizeof(ctl_replica));
        rc = replicas[i] ? 0 : GP_ENOMEM;
    }
    result_span done = {0, 0, 0, 0, 0, 0};
    result_txn x = {.c = c, .r = r, .replicas = replicas, .now = now};
    bool stopped = false;
    while (rc == 0 && !stopped && next_span(r, &done, &x.sp)) {
        x.deadline = ctl_cycle_txn_deadline(g);
        rc = ctl_txn_run(g, "scheduling cycle", CTL_TXN_STORE, result_body, &x, NULL, d);
        if (rc == 0) {
            apply_result(g, r, &x.sp, replicas, now);
            done = x.sp;
            result_span more;
            stopped = next_span(r, &done, &more) && pause_for_others(g);
        }
    }
    if (rc < 0 || done.pl1 < r->nplaced) {
        revert_rest(g, c, r, done.pl1, done.ev1 == 0 && r->nevicted > 0);
    }
    if (rc < 0 && d->code == 0) {
        gp_diag_set(d, rc, "%s", gp_strerror(rc));
    }
    if (stopped) {
        ctl_kick(g); /* the rest is decided again once the queued changes ran */
    }
    for (int i = 0; replicas && i < r->nplaced; i++) {
        free(replicas[i]);
    }
    free(replicas);
    *placed = done.pl1;
    *reasons = done.wt1;
    return rc;
}

static bool expired(const ctl_job *j, int64_t now)
{
    return ctl_job_state_holds(j->state) && !ctl_job_is_service(j) && !ctl_job_is_array(j) &&
           j->spec.max_runtime_s > 0 && now - j->start_ms > j->spec.max_runtime_s * 1000;
}

static int expire_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    int64_t now = *(const int64_t *)arg;
    int rc = 0;
    for (int i = 0; rc == 0 && i < tx->st->njobs; i++) {
        ctl_job *j = tx->st->jobs[i];
        if (expired(j, now)) {
            char why[128];
            snprintf(why, sizeof(why), "max runtime of %llds exceeded",
                     (long long)j->spec.max_runtime_s);
            rc = ctl_job_finish(tx->g, j, false, 0, 0, why, d);
        }
    }
    return rc;
}

/* Fails the jobs that have held their GPUs past their max runtime (counted from placement);
 * the agents stop them when the placement disappears from their desired set. */
static int expire(gpupoold *g, int64_t now, gp_diag *d)
{
    bool any = false;
    for (int i = 0; i < g->st.njobs && !any; i++) {
        any = expired(g->st.jobs[i], now);
    }
    if (!any) {
        return 0;
    }
    return ctl_txn_run(g, "max runtime", CTL_TXN_MEMORY, expire_body, &now, NULL, d);
}

int ctl_schedule(gpupoold *g, gp_diag *d)
{
    if (g->stale) {
        ctl_reload(g);
    }
    if (g->stale) {
        return gp_diag_set(d, GP_EUNAVAIL, "the state is not loaded from the store");
    }
    int rc0 = ctl_recovery_tick(g, ctl_now_ms(), ctl_cycle_txn_deadline(g), d);
    if (rc0 > 0) {
        ctl_kick(g); /* nodes left for the next cycle; what waits for the lock goes first */
        return 0;
    }
    if (rc0 == 0) {
        rc0 = expire(g, ctl_now_ms(), d);
    }
    if (rc0 == 0) {
        rc0 = ctl_meter_tick(g, ctl_now_ms(), d);
    }
    if (rc0 == 0) {
        rc0 = ctl_services_tick(g, ctl_now_ms(), d);
    }
    if (rc0 == 0) {
        rc0 = ctl_batch_tick(g, ctl_now_ms(), d);
    }
    if (rc0 < 0) {
        return rc0;
    }
    ctl_history_tick(g, ctl_now_ms());
    if (!g->sched || g->st.npending == 0) {
        ctl_notify_quota(g, NULL, 0, ctl_now_ms());
        return 0;
    }
    int64_t now = ctl_now_ms(), t0_us = ctl_metrics_now_us();
    cycle_in c;
    memset(&c, 0, sizeof(c));
    int rc = build(g, &c, now);
    gp_sched_result r;
    memset(&r, 0, sizeof(r));
    if (rc == 0) {
        rc = gp_sched_cycle(g->sched, &c.in, &r, d);
    } else {
        gp_diag_set(d, rc, "building the scheduler's input: %s", gp_strerror(rc));
    }
    int placed = 0, reasons = r.nwaiting;
    if (rc == 0 && (r.nplaced || r.nevicted || reasons_changed(g, &r))) {
        rc = commit_result(g, &c, &r, now, &placed, &reasons, d);
        if (rc == 0 && (placed || r.nevicted)) {
            /* seconds: the whole cycle, its input built, decided, committed and applied. */
            GP_LOG(GP_LOG_INFO, "sched", "cycle placed=%d evicted=%d waiting=%d seconds=%.3f",
                   placed, r.nevicted, r.nwaiting + r.nplaced - placed,
                   (double)(ctl_metrics_now_us() - t0_us) / 1e6);
        }
    }
    if (rc == 0) {
        ctl_notify_quota(g, r.waiting, reasons, now); /* the reasons are those committed */
    }
    gp_sched_result_fini(&r);
    return rc;
}
