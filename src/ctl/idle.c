/*
 * Idle reclamation (see idle.h).
 */
#include "ctl/idle.h"

#include "base/log.h"
#include "ctl/changes.h"
#include "ctl/notify.h"
#include "ctl/proxy_state.h"

#include <stdint.h>
#include <stdio.h>

/* "30m", "1h30m", "45s": a duration as people write it. */
static void duration_text(int64_t s, char *buf, size_t cap)
{
    int64_t h = s / 3600, m = s / 60 % 60, sec = s % 60;
    int n = 0;
    buf[0] = 0;
    if (h) {
        n += snprintf(buf + n, cap - (size_t)n, "%lldh", (long long)h);
    }
    if (m && (size_t)n < cap) {
        n += snprintf(buf + n, cap - (size_t)n, "%lldm", (long long)m);
    }
    if ((sec || !s) && (size_t)n < cap) {
        snprintf(buf + n, cap - (size_t)n, "%llds", (long long)sec);
    }
}

/* Stops j: Cancelled with why, the placement freed. */
static int stop(gpupoold *g, ctl_job *j, const char *why, gp_diag *d)
{
    ctl_job next = *j; /* its replicas only feed the status document (where it ran) */
    snprintf(next.reason, sizeof(next.reason), "%s", why);
    next.end_ms = ctl_now_ms();
    const ctl_node *n = ctl_node_by_id(&g->st, j->replicas[0].node_id);
    char node[GP_NAME_MAX];
    snprintf(node, sizeof(node), "%s", n ? n->name : "");
    int rc = ctl_job_end_placement(g, j, &next, CTL_CANCELLED, "IdleStopped", d);
    if (rc < 0) {
        return rc;
    }
    GP_LOG(GP_LOG_INFO, "idle", "job=%lld stopped: %s", (long long)j->id, why);
    ctl_notify_job_idle(g, j, node, why);
    return 0;
}

/* Suspends the notebook j: its placement freed, Suspended with why; resumed on demand. */
static int suspend(gpupoold *g, ctl_job *j, const char *why, gp_diag *d)
{
    ctl_job next = *j;
    snprintf(next.reason, sizeof(next.reason), "%s", why);
    int rc = ctl_job_end_placement(g, j, &next, CTL_SUSPENDED, "IdleSuspended", d);
    if (rc == 0) {
        GP_LOG(GP_LOG_INFO, "idle", "job=%lld suspended: %s", (long long)j->id, why);
    }
    return rc;
}

/* Whether j, its replicas' idle clocks as they are, has been idle long enough at now to be
 * stopped or suspended (a notebook's proxy traffic included). */
static bool idle_due(gpupoold *g, const ctl_job *j, int64_t now)
{
    int64_t idle_ms = INT64_MAX; /* the job's: its least idle replica's */
    for (int i = 0; i < j->spec.replicas; i++) {
        int64_t since = j->replicas[i].idle_since_ms;
        if (!since) {
            return false;
        }
        idle_ms = now - since < idle_ms ? now - since : idle_ms;
    }
    if (idle_ms < j->spec.idle_timeout_s * 1000) {
        return false;
    }
    bool interactive = j->spec.job_kind == GP_JOB_NOTEBOOK;
    /* someone uses a notebook through the proxy (a kernel's WebSocket included) */
    return !(interactive && g->proxy &&
             now - ctl_proxy_last_seen(g->proxy, j->id) < j->spec.idle_timeout_s * 1000);
}

/* Whether report util of replica r moves its idle clock to idle (true) or stops it (false). */
static bool idle_reading(const ctl_job *j, int util)
{
    return util >= 0 && util < j->spec.idle_utilization;
}

bool ctl_idle_report_writes(gpupoold *g, const ctl_job *j, int r, int util, int64_t now)
{
    /* a clock not yet started starts at now: 0 < idle_timeout, so not due */
    return j->spec.idle_timeout_s > 0 && idle_reading(j, util) && j->replicas[r].idle_since_ms &&
           idle_due(g, j, now);
}

int ctl_idle_report(gpupoold *g, ctl_job *j, int r, int util, int64_t now, gp_diag *d)
{
    ctl_replica *rep = &j->replicas[r];
    if (j->spec.idle_timeout_s > 0 && !idle_reading(j, util)) {
        rep->idle_since_ms = 0; /* busy, or no evidence */
    } else if (j->spec.idle_timeout_s > 0 && rep->idle_since_ms == 0) {
        rep->idle_since_ms = now; /* not due yet: ctl_idle_report_writes says so below */
    }
    if (!ctl_idle_report_writes(g, j, r, util, now)) {
        return 0;
    }
    char dur[32], why[200];
    duration_text(j->spec.idle_timeout_s, dur, sizeof(dur));
    bool interactive = j->spec.job_kind == GP_JOB_NOTEBOOK;
    snprintf(why, sizeof(why), "idle: GPU utilisation below %g%%%s for %s",
             j->spec.idle_utilization, interactive ? " and no traffic through its proxy" : "", dur);
    if (interactive && j->spec.idle_action == GP_IDLE_SUSPEND) {
        return suspend(g, j, why, d);
    }
    return stop(g, j, why, d);
}

int ctl_job_resume(gpupoold *g, ctl_job *j, const char *why, gp_diag *d)
{
    if (j->state != CTL_SUSPENDED) {
        return gp_diag_set(d, GP_ESTATE, "job %s is %s: only a Suspended job resumes", j->name,
                           ctl_job_state_name(j->state));
    }
    ctl_job next = *j;
    snprintf(next.reason, sizeof(next.reason), "%s", why);
    next.start_ms = next.end_ms = 0;
    int rc = ctl_job_store(g, &next, CTL_PENDING, d);
    if (rc == 0) {
        rc = ctl_job_event_at(g, j->id, ctl_now_ms(), "Resumed", why, d);
    }
    if (rc < 0) {
        return rc;
    }
    snprintf(j->reason, sizeof(j->reason), "%s", why);
    j->start_ms = j->end_ms = 0;
    ctl_job_set_state(&g->st, j, CTL_PENDING);
    GP_LOG(GP_LOG_INFO, "idle", "job=%lld resumed: %s", (long long)j->id, why);
    return 0;
}
