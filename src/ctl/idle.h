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
 * Runs in the committer, inside its transaction (store first, then memory).
 */
#ifndef GP_CTL_IDLE_H
#define GP_CTL_IDLE_H

#include "ctl/context.h"

/* A Running replica r of job j reported util (percent; -1: none). Stops the job when it has
 * been idle long enough (j's replicas are then NULL). 0, or an error of the store with d set. */
int ctl_idle_report(gpupoold *g, ctl_job *j, int r, int util, gp_diag *d);

#endif
