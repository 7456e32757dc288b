/*
 * A job's records: its state and status document, its events, and the end of a placement (the
 * one path by which cancel, requeue, drain and a job's own end give its GPUs back). Each writes
 * the store first and changes memory only once the store has taken it; all run in the
 * committer, inside its transaction.
 */
#include "ctl/audit.h"
#include "ctl/changes.h"
#include "ctl/meter.h"
#include "ctl/notify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_job_store(gpupoold *g, const ctl_job *j, ctl_job_state state, gp_diag *d)
{
    json_t *status = ctl_job_status_doc(j);
    char *text = json_dumps(status, JSON_COMPACT);
    json_decref(status);
    if (!text) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc = gp_store_job_update(g->store, j->id, ctl_job_state_name(state), text, d);
    free(text);
    return rc;
}

int ctl_job_event_at(gpupoold *g, int64_t job, int64_t now, const char *type, const char *msg,
                     gp_diag *d)
{
    gp_event_rec ev = {.job_id = job, .time_ms = now};
    snprintf(ev.type, sizeof(ev.type), "%s", type);
    snprintf(ev.message, sizeof(ev.message), "%s", msg);
    return gp_store_event_add(g->store, &ev, d);
}

int ctl_job_event(gpupoold *g, int64_t job, const char *type, const char *msg, gp_diag *d)
{
    return ctl_job_event_at(g, job, ctl_now_ms(), type, msg, d);
}

int ctl_job_make_child(gpupoold *g, const ctl_job *proto, const char *text,
                       const ctl_job *owner_next, const char *child_why, const char *owner_event,
                       const char *owner_msg, gp_diag *d)
{
    ctl_job *c = calloc(1, sizeof(*c));
    if (!c) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    *c = *proto;
    memset(&c->spec, 0, sizeof(c->spec));
    int rc = gp_jobspec_parse_json(text, strlen(text), &c->spec, d);
    if (rc < 0) {
        free(c);
        return rc;
    }
    c->state = CTL_PENDING;
    c->submit_ms = ctl_now_ms();
    snprintf(c->reason, sizeof(c->reason), "%s", CTL_REASON_NEW);
    gp_job_rec rec = {.tenant_id = c->tenant_id, .submit_time_ms = c->submit_ms};
    snprintf(rec.name, sizeof(rec.name), "%s", c->name);
    snprintf(rec.state, sizeof(rec.state), "Pending");
    int created = 0;
    rc = gp_store_job_insert(g->store, &rec, text, "{}", &created, d);
    c->id = rec.id;
    rc = rc < 0 ? rc : ctl_job_store(g, c, CTL_PENDING, d);
    rc = rc < 0 ? rc : ctl_job_store(g, owner_next, owner_next->state, d);
    rc = rc < 0 ? rc : ctl_job_event(g, c->id, "Submitted", child_why, d);
    rc = rc < 0 ? rc : ctl_job_event(g, owner_next->id, owner_event, owner_msg, d);
    if (rc == 0 && ctl_state_add_job(&g->st, c) < 0) {
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (rc < 0) {
        gp_jobspec_fini(&c->spec);
        free(c);
    }
    return rc;
}

int ctl_job_end_placement(gpupoold *g, ctl_job *j, const ctl_job *next, ctl_job_state to,
                          const char *event, gp_diag *d)
{
    int64_t now = ctl_now_ms(); /* the event's time is the end of the usage record */
    int rc = gp_store_placement_clear(g->store, j->id, d);
    if (rc == 0) {
        rc = ctl_job_store(g, next, to, d); /* next's replicas say where it ran */
    }
    if (rc == 0) {
        rc = ctl_job_event_at(g, j->id, now, event, next->reason, d);
    }
    if (rc == 0) {
        rc = ctl_audit_free(g, j, NULL, event, next->reason, d);
    }
    if (rc == 0) {
        rc = ctl_meter_close(g, j, now, d);
    }
    if (rc < 0) {
        return rc;
    }
    if (ctl_job_state_holds(j->state)) {
        ctl_job_hold(&g->st, j, false);
    }
    ctl_job_drop_replicas(&g->st, j);
    snprintf(j->reason, sizeof(j->reason), "%s", next->reason);
    j->start_ms = next->start_ms;
    j->end_ms = next->end_ms;
    j->exit_code = next->exit_code;
    j->restarts = next->restarts;
    j->spare_ok = next->spare_ok;
    memcpy(j->fault_ms, next->fault_ms, sizeof(j->fault_ms));
    ctl_job_set_state(&g->st, j, to);
    return 0;
}

/* Ends j's run: ok, or failed as `what` says (e.g. "replica 0 exited with code 3"); by its
 * restart policy back to Pending with one more restart, unless final (a failure the job did not
 * cause and would only repeat: never restarted, what is the reason). */
static int end_run(gpupoold *g, ctl_job *j, bool ok, int exit_code, const char *what, bool final,
                   gp_diag *d)
{
    ctl_job next = *j; /* its replicas only feed the status document (where it ran) */
    bool restart = j->spec.restart_policy == GP_RESTART_ALWAYS ||
                   (!ok && j->spec.restart_policy == GP_RESTART_ON_FAILURE);
    restart &= j->restarts < j->spec.max_restarts && !final;
    ctl_job_state to = restart ? CTL_PENDING : ok ? CTL_SUCCEEDED : CTL_FAILED;
    if (restart) {
        next.start_ms = next.end_ms = 0;
        next.exit_code = 0;
        next.restarts++;
        snprintf(next.reason, sizeof(next.reason), "restarting: %.200s (restart %d of %d)", what,
                 next.restarts, j->spec.max_restarts);
    } else {
        next.end_ms = ctl_now_ms();
        next.exit_code = ok ? 0 : exit_code;
        snprintf(next.reason, sizeof(next.reason), "%s", what);
    }
    return ctl_job_end_placement(g, j, &next, to, restart ? "Restarting" : ctl_job_state_name(to),
                                 d);
}

int ctl_job_finish(gpupoold *g, ctl_job *j, bool ok, int replica, int exit_code, const char *why,
                   gp_diag *d)
{
    char what[64];
    snprintf(what, sizeof(what),
             ok ? "all replicas exited with code 0" : "replica %d exited with code %d", replica,
             exit_code);
    return end_run(g, j, ok, exit_code, why ? why : what, why != NULL, d);
}

/* Restarts of j after faults within the window ending at now. */
static int recent_faults(const gpupoold *g, const ctl_job *j, int64_t now)
{
    int n = 0;
    for (int i = 0; i < CTL_FAULT_RESTARTS_KEEP && j->fault_ms[i]; i++) {
        n += now - j->fault_ms[i] < g->cfg->faults.restart_window_ms;
    }
    return n;
}

int ctl_job_fault(gpupoold *g, ctl_job *j, ctl_fault_kind kind, const char *cause, gp_diag *d)
{
    int64_t now = ctl_now_ms();
    ctl_job next = *j;
    next.exit_code = 0;
    int recent = recent_faults(g, j, now);
    bool hw = kind == CTL_FAULT_HARDWARE;
    bool never = hw && j->spec.restart_policy == GP_RESTART_NEVER;
    if (never || (hw && recent >= g->cfg->faults.restart_limit)) {
        next.end_ms = now;
        if (never) {
            snprintf(next.reason, sizeof(next.reason),
                     "%.200s; not restarted (restart policy Never)", cause);
        } else {
            snprintf(next.reason, sizeof(next.reason),
                     "%.160s; not restarted: %d restarts after faults within %llds", cause, recent,
                     (long long)(g->cfg->faults.restart_window_ms / 1000));
        }
        return ctl_job_end_placement(g, j, &next, CTL_FAILED, "Failed", d);
    }
    next.start_ms = next.end_ms = 0;
    next.restarts++;
    next.spare_ok = true;
    memmove(next.fault_ms + 1, next.fault_ms, sizeof(next.fault_ms) - sizeof(next.fault_ms[0]));
    next.fault_ms[0] = now;
    snprintf(next.reason, sizeof(next.reason), "restarting after %.200s (restart %d)", cause,
             next.restarts);
    int rc = ctl_job_end_placement(g, j, &next, CTL_PENDING,
                                   kind == CTL_FAULT_MAINTENANCE ? "Requeued" : "Restarting", d);
    if (rc == 0 && hw) {
        ctl_notify_job_restarted(g, j, cause);
    }
    return rc;
}

int ctl_job_fail(gpupoold *g, ctl_job *j, const char *cause, gp_diag *d)
{
    return end_run(g, j, false, -1, cause, false, d);
}
