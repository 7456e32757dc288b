/*
 * Idle reclamation: a job that sets idle_timeout (and idle_utilization, default 5%) is stopped
 * once every one of its replicas has reported GPU utilisation below idle_utilization for
 * idle_timeout: the job ends Cancelled with the reason ("idle: GPU utilisation below 5% for
 * 30m"), event IdleStopped, its GPUs are freed and an alert JobIdleStopped goes to the
 * configured receivers.
 *
 * The evidence is the "util" of each Running replica's report in the agents' heartbeats (the
 * mean utilisation of its GPUs, sampled by the agent each round). A replica's idle time starts
 * at the first report below the threshold and restarts at any report at or above it. A report
 * without util (a MIG slice NVML gives no utilisation for, an agent that does not send it)
 * stops the clock: without evidence the job is never called idle. The clocks are kept in
 * memory, so a restarted controller starts them again (it may stop a job later than it could
 * have, never earlier).
 *
 * A notebook is idle only when, besides, its proxy passed no traffic (a request, or a frame of
 * an open WebSocket: proxy_state.h) for idle_timeout. With idle_action suspend (a notebook's
 * default) it is then Suspended instead of stopped: its replica stops and its GPUs are freed,
 * event IdleSuspended; it keeps its spec and volumes, and POST /v1/jobs/{job}/resume (or a
 * request to its proxy, or a proxy-session) puts it back to Pending (event Resumed, see
 * ctl_job_resume). Suspended is stored like every state, so a restart keeps it.
 *
 * Runs in the committer, inside its transaction (store first, then memory); a report that only
 * moves the clocks (ctl_idle_report_writes false) also runs on the heartbeat's own thread under
 * the state lock, with no transaction.
 */
#ifndef GP_CTL_IDLE_H
#define GP_CTL_IDLE_H

#include "ctl/context.h"

/* A Running replica r of job j reported util (percent; -1: none) at now. Stops the job when it
 * has been idle long enough (j's replicas are then NULL). 0, or an error of the store with d
 * set. */
int ctl_idle_report(gpupoold *g, ctl_job *j, int r, int util, int64_t now, gp_diag *d);
/* Whether ctl_idle_report(g, j, r, util, now) would stop or suspend j (store); false when it
 * would only move the replica's idle clock (memory). Changes nothing. */
bool ctl_idle_report_writes(gpupoold *g, const ctl_job *j, int r, int util, int64_t now);

/* Puts the Suspended job j back to Pending (event Resumed with why). GP_ESTATE when j is not
 * Suspended; store errors with d set. In the committer's transaction. */
int ctl_job_resume(gpupoold *g, ctl_job *j, const char *why, gp_diag *d);

#endif
