/*
 * Faults, health, lost nodes, maintenance and hot spares (see recovery.h).
 */
#include "ctl/recovery.h"
#include "gpupool/constraint.h"

#include "base/log.h"
#include "ctl/changes.h"
#include "ctl/txn.h"
#include "ctl/notify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- jobs on a node ---- */

/* The jobs holding GPU gpu of n (gpu < 0: anything of n's), each once; multi: only those holding
 * more than one GPU there. *out is malloc'd. Returns their number or GP_ENOMEM. */
static int jobs_on(ctl_state *st, const ctl_node *n, int gpu, bool multi, ctl_job ***out)
{
    const ctl_held *held;
    int nheld = ctl_state_held_on(st, n->id, &held);
    ctl_job **jobs = nheld >= 0 ? malloc(sizeof(*jobs) * ((size_t)nheld + 1)) : NULL;
    if (!jobs) {
        return GP_ENOMEM;
    }
    int k = 0;
    for (int i = 0; i < nheld; i++) {
        ctl_job *j = held[i].job;
        const ctl_replica *rep = &j->replicas[held[i].replica];
        bool on = gpu < 0;
        for (int s = 0; !on && s < rep->a.nshares; s++) {
            on = rep->a.shares[s].gpu == gpu;
        }
        on &= !multi || rep->a.nshares > 1;
        for (int p = 0; on && p < k; p++) {
            on = jobs[p] != j;
        }
        if (on) {
            jobs[k++] = j;
        }
    }
    *out = jobs;
    return k;
}

/* The class of a restart's cause (gpupool_job_restarts_total), from the causes this file
 * writes: "XID 48 (...) on node ...", "node-lost: ...", "health check: ... on node ...". */
static ctl_restart_cause restart_cause(ctl_jobs_act act, const char *cause)
{
    return act == CTL_ACT_MAINTENANCE                ? CTL_RESTART_MAINTENANCE
           : strncmp(cause, "XID ", 4) == 0          ? CTL_RESTART_XID
           : strncmp(cause, "node-lost", 9) == 0     ? CTL_RESTART_NODE_LOST
           : strncmp(cause, "health check", 12) == 0 ? CTL_RESTART_HEALTH
                                                     : CTL_RESTART_OTHER;
}

int ctl_node_end_jobs(gpupoold *g, ctl_node *n, int gpu, bool multi, ctl_jobs_act act,
                      const char *cause, gp_diag *d)
{
    ctl_job **jobs;
    int k = jobs_on(&g->st, n, gpu, multi, &jobs);
    if (k < 0) {
        return gp_diag_set(d, k, "out of memory");
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < k; i++) {
        ctl_job *j = jobs[i];
        if (!j->replicas) {
            continue;
        }
        if (act == CTL_ACT_REQUEUE) {
            ctl_job next = *j;
            snprintf(next.reason, sizeof(next.reason), "%s", cause);
            next.start_ms = next.end_ms = 0;
            next.exit_code = 0;
            rc = ctl_job_end_placement(g, j, &next, CTL_PENDING, "Requeued", d);
            continue;
        }
        GP_LOG(GP_LOG_WARN, "faults", "job=%lld %s: %s", (long long)j->id,
               act == CTL_ACT_FAIL ? "fails" : "restarts", cause);
        rc = act == CTL_ACT_FAIL      ? ctl_job_fail(g, j, cause, d)
             : act == CTL_ACT_RESTART ? ctl_job_fault(g, j, CTL_FAULT_HARDWARE, cause, d)
                                      : ctl_job_fault(g, j, CTL_FAULT_MAINTENANCE, cause, d);
        if (rc == 0 && ctl_job_state_waits(j->state)) {
            ctl_metrics_restart(&g->metrics, restart_cause(act, cause));
        }
    }
    free(jobs);
    return rc;
}

/* The first NoExecute taint of n that j does not tolerate, or NULL. */
static const gp_taint *untolerated(const ctl_node *n, const ctl_job *j)
{
    const gp_constraints *k = &j->spec.place;
    for (int i = 0; i < n->ntaints; i++) {
        if (n->taints[i].effect == GP_TAINT_NO_EXECUTE &&
            !gp_tolerates(k->tolerations, k->ntolerations, &n->taints[i])) {
            return &n->taints[i];
        }
    }
    return NULL;
}

int ctl_node_evict_untolerated(gpupoold *g, ctl_node *n, int *evicted, gp_diag *d)
{
    *evicted = 0;
    ctl_job **jobs;
    int k = jobs_on(&g->st, n, -1, false, &jobs);
    if (k < 0) {
        return gp_diag_set(d, k, "out of memory");
    }
    int rc = 0;
    for (int i = 0; rc == 0 && i < k; i++) {
        ctl_job *j = jobs[i];
        const gp_taint *t = j->replicas ? untolerated(n, j) : NULL;
        if (!t) {
            continue;
        }
        char text[GP_LABEL_KEY_MAX + GP_LABEL_VALUE_MAX + 24];
        ctl_taint_text(t, text, sizeof(text));
        ctl_job next = *j;
        snprintf(next.reason, sizeof(next.reason),
                 "requeued: taint %.150s of node %.63s is not tolerated", text, n->name);
        next.start_ms = next.end_ms = 0;
        next.exit_code = 0;
        GP_LOG(GP_LOG_INFO, "nodes", "job=%lld evicted from node=%s taint=%s", (long long)j->id,
               n->name, text);
        rc = ctl_job_end_placement(g, j, &next, CTL_PENDING, "Requeued", d);
        *evicted += rc == 0;
    }
    free(jobs);
    return rc;
}

/* ---- GPUs in and out of service ---- */

static void mark_drained(ctl_gpu_info *gi, const char *reason, bool automatic, bool retire,
                         int64_t now)
{
    if (!gi->drained) {
        gi->drained = true;
        gi->drained_ms = now;
        gi->check_seq = 0;
        gi->drain_auto = automatic;
        snprintf(gi->drain_reason, sizeof(gi->drain_reason), "%s", reason);
    }
    if (!automatic) {
        gi->drain_auto = false;
    }
    if (retire && !gi->retired) {
        gi->retired = true;
        gi->drain_auto = false;
        snprintf(gi->drain_reason, sizeof(gi->drain_reason), "retired: %.180s", reason);
    }
}

int ctl_node_commit(gpupoold *g, ctl_node *n, ctl_node *next, gp_diag *d)
{
    int rc = ctl_node_store(g, next, d);
    if (rc < 0) {
        return rc;
    }
    if (n->cordoned != next->cordoned) {
        ctl_node_desired_changed(&g->st, n);
    }
    n->cordoned = next->cordoned;
    n->draining = next->draining;
    n->drain_deadline_ms = next->drain_deadline_ms;
    if (n->check_seq != next->check_seq) {
        ctl_node_desired_changed(&g->st, n); /* the agent learns a check is asked for */
    }
    n->check_seq = next->check_seq;
    if (next->taints != n->taints) { /* taken: next's list is n's now */
        free(n->taints);
        n->taints = next->taints;
        n->ntaints = next->ntaints;
        if (gp_cluster_set_taints(g->st.cluster, n->cl, n->taints, n->ntaints) < 0) {
            gp_cluster_set_schedulable(g->st.cluster, n->cl, false); /* fail closed */
        }
    }
    for (int i = 0; i < n->ngpus; i++) {
        json_t *readings = n->gpus[i].readings;
        n->gpus[i] = next->gpus[i];
        n->gpus[i].readings = readings;
    }
    ctl_node_update_schedulable(&g->st, n);
    ctl_node_update_gpus(&g->st, n);
    return 0;
}

int ctl_gpu_drain(gpupoold *g, ctl_node *n, int gpu, const char *reason, bool automatic,
                  bool retire, bool restart, gp_diag *d)
{
    char cause[300];
    snprintf(cause, sizeof(cause), "%.180s on node %s GPU %d", reason, n->name, gpu);
    int rc = restart ? ctl_node_end_jobs(g, n, gpu, false, CTL_ACT_RESTART, cause, d) : 0;
    if (rc < 0) {
        return rc;
    }
    ctl_node next = *n;
    bool was_drained = n->gpus[gpu].drained;
    mark_drained(&next.gpus[gpu], reason, automatic, retire, ctl_now_ms());
    rc = ctl_node_commit(g, n, &next, d);
    if (rc == 0) {
        GP_LOG(GP_LOG_WARN, "faults", "node=%s gpu=%d uuid=%s drained: %s", n->name, gpu,
               n->gpus[gpu].uuid, n->gpus[gpu].drain_reason);
        if (!was_drained) {
            ctl_notify_gpu_drained(g, n, gpu, false, n->gpus[gpu].drained_ms);
        }
    }
    return rc;
}

int ctl_gpu_undrain(gpupoold *g, ctl_node *n, int gpu, const char *by, gp_diag *d)
{
    ctl_node next = *n;
    ctl_gpu_info *gi = &next.gpus[gpu];
    bool was_drained = gi->drained;
    int64_t drained_ms = gi->drained_ms;
    gi->drained = gi->drain_auto = gi->retired = false;
    gi->drain_reason[0] = 0;
    gi->drained_ms = gi->check_seq = 0;
    if (strcmp(by, "health check") != 0) {
        memset(&gi->faults, 0, sizeof(gi->faults)); /* an operator vouches for the GPU */
    }
    int rc = ctl_node_commit(g, n, &next, d);
    if (rc == 0) {
        GP_LOG(GP_LOG_INFO, "faults", "node=%s gpu=%d uuid=%s back in service by %s", n->name, gpu,
               n->gpus[gpu].uuid, by);
        if (was_drained) {
            ctl_notify_gpu_drained(g, n, gpu, true, drained_ms);
        }
    }
    return rc;
}

int ctl_node_check(gpupoold *g, ctl_node *n, gp_diag *d)
{
    ctl_node next = *n;
    next.check_seq++;
    for (int i = 0; i < n->ngpus; i++) {
        if (next.gpus[i].drained && next.gpus[i].drain_auto) {
            next.gpus[i].check_seq = next.check_seq;
        }
    }
    int rc = ctl_node_commit(g, n, &next, d);
    if (rc == 0) {
        GP_LOG(GP_LOG_INFO, "faults", "node=%s health check %lld asked for", n->name,
               (long long)n->check_seq);
    }
    return rc;
}

/* ---- what agents report ---- */

static int one_xid(gpupoold *g, ctl_node *n, int gpu, int xid, int64_t now, gp_diag *d)
{
    ctl_gpu_info *gi = &n->gpus[gpu];
    gi->xids++;
    gi->last_xid = xid;
    ctl_metrics_xid(&g->metrics, n->name, gpu, xid);
    ctl_fault_action a;
    ctl_node next = *n;
    ctl_fault_decide(xid, &next.gpus[gpu].faults, now, &a);
    GP_LOG(GP_LOG_WARN, "nodes", "xid node=%s gpu=%d uuid=%s xid=%d (%s)", n->name, gpu, gi->uuid,
           xid, a.what);
    if (!a.known) {
        return 0;
    }
    char cause[200];
    snprintf(cause, sizeof(cause), "XID %d (%s) on node %s GPU %d", xid, a.what, n->name, gpu);
    int rc = 0;
    if (a.drain_node) {
        rc = ctl_node_end_jobs(g, n, -1, false, CTL_ACT_RESTART, cause, d);
        next.cordoned = next.draining = true;
    } else if (a.jobs != CTL_JOBS_KEEP) {
        rc = ctl_node_end_jobs(g, n, gpu, a.jobs == CTL_JOBS_RESTART_MULTI,
                               a.jobs == CTL_JOBS_FAIL ? CTL_ACT_FAIL : CTL_ACT_RESTART, cause, d);
    }
    if (a.drain_gpu) {
        char reason[160];
        snprintf(reason, sizeof(reason), "XID %d (%s)", xid, a.what);
        mark_drained(&next.gpus[gpu], reason, true, a.retire, now);
    }
    bool was_drained = gi->drained;
    rc = rc < 0 ? rc : ctl_node_commit(g, n, &next, d);
    if (rc == 0 && a.drain_gpu) {
        GP_LOG(GP_LOG_WARN, "faults", "node=%s gpu=%d uuid=%s drained: %s", n->name, gpu, gi->uuid,
               gi->drain_reason);
        if (!was_drained) {
            ctl_notify_gpu_drained(g, n, gpu, false, gi->drained_ms);
        }
    }
    return rc < 0 ? rc : a.jobs != CTL_JOBS_KEEP || a.drain_gpu || a.drain_node;
}

int ctl_recovery_xids(gpupoold *g, ctl_node *n, const gp_wire_xid *events, size_t nevents,
                      gp_diag *d)
{
    int64_t now = ctl_now_ms();
    int changed = 0;
    for (size_t i = 0; i < nevents; i++) {
        if (events[i].gpu < n->ngpus) { /* gp_wire_heartbeat_check_node refused any other */
            int rc = one_xid(g, n, events[i].gpu, events[i].xid, now, d);
            if (rc < 0) {
                return rc;
            }
            changed |= rc;
        }
    }
    return changed;
}

/* The fatal findings of health: node-wide into node_bad (cap 200; "" when none), a GPU's
 * message into gpu_bad[gpu] (NULL when none). */
static void fatal_findings(const ctl_node *n, const gp_wire_health *health, char *node_bad,
                           const char **gpu_bad)
{
    node_bad[0] = 0;
    for (int k = 0; k < GP_MAX_GPUS_PER_NODE; k++) {
        gpu_bad[k] = NULL;
    }
    for (size_t i = 0; i < health->nconditions; i++) {
        const gp_wire_condition *c = &health->conditions[i];
        if (c->severity != GP_WIRE_FATAL) {
            continue;
        }
        if (c->gpu < 0) {
            snprintf(node_bad, 200, "%.60s: %.130s", c->check, c->message);
        } else if (c->gpu < n->ngpus) { /* gp_wire_heartbeat_check_node refused any other */
            gpu_bad[c->gpu] = c->message;
        }
    }
}

/* What health check seq does to GPU gi: drain it (bad: its fatal finding), return it, or ask
 * again later (a drain waiting for this check that failed it). */
typedef enum gpu_verdict { GPU_KEEP, GPU_DRAIN, GPU_RETURN, GPU_RECHECK } gpu_verdict;

static gpu_verdict gpu_verdict_of(const ctl_gpu_info *gi, const char *bad, int64_t seq)
{
    if (bad && !gi->drained) {
        return GPU_DRAIN;
    }
    if (gi->drained && gi->drain_auto && gi->check_seq > 0 && seq >= gi->check_seq) {
        return bad ? GPU_RECHECK : GPU_RETURN;
    }
    return GPU_KEEP;
}

bool ctl_recovery_health_writes(const ctl_node *n, const gp_wire_health *health)
{
    if (!health) {
        return false;
    }
    char node_bad[200];
    const char *gpu_bad[GP_MAX_GPUS_PER_NODE];
    fatal_findings(n, health, node_bad, gpu_bad);
    for (int k = 0; k < n->ngpus; k++) {
        if (gpu_verdict_of(&n->gpus[k], gpu_bad[k], health->seq) != GPU_KEEP) {
            return true;
        }
    }
    return false;
}

int ctl_recovery_health(gpupoold *g, ctl_node *n, const gp_wire_health *health, gp_diag *d)
{
    if (!health) {
        return 0;
    }
    int64_t seq = health->seq;
    char node_bad[200];
    const char *gpu_bad[GP_MAX_GPUS_PER_NODE];
    fatal_findings(n, health, node_bad, gpu_bad);
    json_t *shown = gp_wire_health_encode(health);
    if (!shown) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    json_decref(n->health);
    n->health = shown;
    n->health_seq = seq;
    int changed = strcmp(n->unhealthy, node_bad) != 0;
    if (changed) {
        GP_LOG(node_bad[0] ? GP_LOG_WARN : GP_LOG_INFO, "faults", "node=%s health: %s", n->name,
               node_bad[0] ? node_bad : "passes");
        snprintf(n->unhealthy, sizeof(n->unhealthy), "%s", node_bad);
        ctl_node_update_schedulable(&g->st, n);
    }
    int rc = 0;
    for (int k = 0; rc == 0 && k < n->ngpus; k++) {
        gpu_verdict v = gpu_verdict_of(&n->gpus[k], gpu_bad[k], seq);
        if (v == GPU_DRAIN) {
            char reason[200];
            snprintf(reason, sizeof(reason), "health check: %.180s", gpu_bad[k]);
            rc = ctl_gpu_drain(g, n, k, reason, true, false, true, d);
        } else if (v == GPU_RETURN) {
            rc = ctl_gpu_undrain(g, n, k, "health check", d);
        } else if (v == GPU_RECHECK) { /* failed: ask again after faults.recheck_after */
            ctl_node next = *n;
            next.gpus[k].check_seq = 0;
            next.gpus[k].drained_ms = ctl_now_ms();
            rc = ctl_node_commit(g, n, &next, d);
        }
        changed |= v != GPU_KEEP;
    }
    return rc < 0 ? rc : changed;
}

bool ctl_recovery_fence(gpupoold *g, ctl_node *n, int stale_running)
{
    if (!n->fenced || stale_running > 0) {
        return false;
    }
    n->fenced = false;
    ctl_node_update_schedulable(&g->st, n);
    GP_LOG(GP_LOG_INFO, "faults", "node=%s runs no superseded replica: takes work again", n->name);
    return true;
}

bool ctl_recovery_idle_writes(const ctl_job *j, int r, int64_t idle_ms)
{
    return j->spec.hang_timeout_s > 0 && !j->replicas[r].hung &&
           idle_ms >= j->spec.hang_timeout_s * 1000;
}

int ctl_recovery_idle(gpupoold *g, ctl_job *j, int r, int64_t idle_ms, gp_diag *d)
{
    ctl_replica *rep = &j->replicas[r];
    if (!ctl_recovery_idle_writes(j, r, idle_ms)) {
        return 0;
    }
    char cause[160];
    snprintf(cause, sizeof(cause), "replica %d hung: no output and no GPU use for %llds", r,
             (long long)(idle_ms / 1000));
    int rc = ctl_job_event(g, j->id, "Hung", cause, d);
    if (rc < 0) {
        return rc;
    }
    GP_LOG(GP_LOG_WARN, "faults", "job=%lld %s", (long long)j->id, cause);
    if (j->spec.restart_policy != GP_RESTART_NEVER && j->restarts < j->spec.max_restarts) {
        rc = ctl_job_fail(g, j, cause, d);
        if (rc == 0 && ctl_job_state_waits(j->state)) {
            ctl_metrics_restart(&g->metrics, CTL_RESTART_HUNG);
        }
        return rc;
    }
    rep->hung = true;
    return 0;
}

/* ---- once per cycle ---- */

/* Hot spares: per model, round(spare_fraction * in-service GPUs on Ready nodes), the last ones
 * in node order. Memory only. */
static void spares(gpupoold *g)
{
    ctl_state *st = &g->st;
    if (g->cfg->faults.spare_fraction <= 0) {
        return; /* none held back (the setting cannot change while running) */
    }
    int count[GP_MAX_MODELS] = {0};
    for (int i = 0; i < st->nnodes; i++) {
        for (int k = 0; st->nodes[i].ready && k < st->nodes[i].ngpus; k++) {
            count[gp_cluster_gpu(st->cluster, st->nodes[i].cl, k)->model] +=
                !st->nodes[i].gpus[k].drained;
        }
    }
    for (int m = 0; m < GP_MAX_MODELS; m++) {
        count[m] = (int)lround(g->cfg->faults.spare_fraction * count[m]);
    }
    for (int i = st->nnodes - 1; i >= 0; i--) {
        ctl_node *n = &st->nodes[i];
        bool changed = false;
        for (int k = n->ngpus - 1; k >= 0; k--) {
            int m = gp_cluster_gpu(st->cluster, n->cl, k)->model;
            bool spare = n->ready && !n->gpus[k].drained && count[m] > 0;
            count[m] -= spare;
            changed |= spare != n->gpus[k].spare;
            n->gpus[k].spare = spare;
        }
        if (changed) {
            ctl_node_update_gpus(st, n);
        }
    }
}

/* What needs the store: 1 lost with placements, 2 maintenance due, 3 a health check due. */
static int due(gpupoold *g, ctl_node *n, int64_t now)
{
    if (!n->ready && now - n->heartbeat_ms > g->cfg->nodes.lost_timeout_ms) {
        const ctl_held *held;
        if (ctl_state_held_on(&g->st, n->id, &held) != 0) {
            return 1;
        }
    }
    if (n->drain_deadline_ms && now >= n->drain_deadline_ms) {
        return 2;
    }
    for (int k = 0; k < n->ngpus; k++) {
        const ctl_gpu_info *gi = &n->gpus[k];
        if (gi->drained && gi->drain_auto && gi->check_seq == 0 &&
            now - gi->drained_ms >= g->cfg->faults.recheck_after_ms) {
            return 3;
        }
    }
    return 0;
}

static int handle(gpupoold *g, ctl_node *n, int what, int64_t now, gp_diag *d)
{
    char cause[200];
    if (what == 1) {
        snprintf(cause, sizeof(cause), "node-lost: node %s silent for %llds", n->name,
                 (long long)((now - n->heartbeat_ms) / 1000));
        int rc = ctl_node_end_jobs(g, n, -1, false, CTL_ACT_RESTART, cause, d);
        if (rc == 0) {
            n->fenced = true;
            ctl_node_update_schedulable(&g->st, n);
            GP_LOG(GP_LOG_WARN, "faults", "node=%s lost: its jobs moved; fenced", n->name);
        }
        return rc;
    }
    if (what == 2) {
        snprintf(cause, sizeof(cause), "maintenance of node %s at its drain deadline", n->name);
        int rc = ctl_node_end_jobs(g, n, -1, false, CTL_ACT_MAINTENANCE, cause, d);
        ctl_node next = *n;
        next.cordoned = next.draining = true;
        next.drain_deadline_ms = 0;
        rc = rc < 0 ? rc : ctl_node_commit(g, n, &next, d);
        if (rc == 0) {
            gp_cluster_set_window(g->st.cluster, n->cl, -1);
            GP_LOG(GP_LOG_INFO, "nodes", "node=%s drained at its maintenance deadline", n->name);
        }
        return rc;
    }
    return ctl_node_check(g, n, d);
}

/* Maintenance windows: a node draining at a deadline takes jobs that end before it. */
static void windows(gpupoold *g, int64_t now)
{
    for (int i = 0; i < g->st.nnodes; i++) {
        ctl_node *n = &g->st.nodes[i];
        int64_t w = n->drain_deadline_ms ? (n->drain_deadline_ms - now) / 1000 * 1000 : -1;
        gp_cluster_set_window(g->st.cluster, n->cl, w < -1 ? 0 : w);
    }
}

typedef struct tick_arg {
    int64_t now;
    int64_t deadline; /* ctl_cycle_txn_deadline */
    bool more;        /* nodes left due when the time was spent */
} tick_arg;

/* The body of the tick's transaction: every node with something due, or as many as the time
 * allows (at least one): the rest stay due for the next tick. */
static int tick_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    tick_arg *t = arg;
    int rc = 0;
    bool some = false;
    for (int i = 0; rc == 0 && i < tx->st->nnodes; i++) {
        ctl_node *n = &tx->st->nodes[i];
        int what = due(tx->g, n, t->now);
        if (what && some && ctl_cycle_txn_spent(t->deadline)) {
            t->more = true;
            break;
        }
        rc = what ? handle(tx->g, n, what, t->now, d) : 0;
        some |= what != 0;
    }
    return rc;
}

int ctl_recovery_tick(gpupoold *g, int64_t now, int64_t deadline, gp_diag *d)
{
    ctl_state *st = &g->st;
    bool any = false;
    for (int i = 0; i < st->nnodes && !any; i++) {
        any = due(g, &st->nodes[i], now) != 0;
    }
    int rc = 0;
    if (any) {
        tick_arg t = {.now = now, .deadline = deadline};
        rc = ctl_txn_run(g, "recovery", CTL_TXN_MEMORY, tick_body, &t, NULL, d);
        rc = rc == 0 && t.more ? 1 : rc; /* the nodes left: the next cycle's tick */
    }
    spares(g);
    windows(g, now);
    return rc;
}
