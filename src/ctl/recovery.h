/*
 * The controller's handling of faults: XIDs and health checks reported by agents, GPUs taken
 * out of service and returned, lost nodes, maintenance deadlines and hot spares.
 *
 * GPUs. A GPU is drained (out of service: nothing new is placed on it) by a fault (faults.h),
 * by a fatal finding of its node's health check, or by an operator. A GPU drained by a fault
 * or a check returns to service once a health check of its node asked for at least
 * faults.recheck_after after the drain passes for it (no fatal finding for the GPU); a retired
 * GPU, or one an operator drained, returns only by an operator's undrain. The drain is stored
 * with the node.
 *
 * Lost nodes. A node silent past nodes.lost_timeout loses its placements: each job on it is
 * restarted elsewhere (or fails with "node-lost", by its restart policy) exactly once, since
 * the placement ends. The node is fenced: it gets no new work until its agent reports none of
 * the superseded replicas running (the agent stops them: they are no longer in its desired
 * document).
 *
 * Maintenance. A node drained with a deadline takes only jobs whose max runtime ends before it;
 * at the deadline its jobs are put back in their queues (the agent stops them with SIGTERM,
 * their signal to checkpoint) and the node is drained.
 *
 * Hot spares. faults.spare_fraction of each GPU model's in-service GPUs (on Ready nodes, the
 * last ones in node order) take only jobs restarting after a fault.
 *
 * All run in the committer, inside its transaction (store first, then memory), except that a
 * heartbeat that changes nothing the store keeps (ctl_recovery_health_writes false, no XIDs) has
 * its health result and fence applied on its own thread under the state lock, with no
 * transaction.
 */
#ifndef GP_CTL_RECOVERY_H
#define GP_CTL_RECOVERY_H

#include "ctl/context.h"
#include "net/wire.h"

/* What happens to the jobs on a node (ctl_node_end_jobs). */
typedef enum ctl_jobs_act {
    CTL_ACT_FAIL,        /* as if a replica failed: its restart policy applies */
    CTL_ACT_RESTART,     /* a restart after a hardware fault (ctl_job_fault) */
    CTL_ACT_MAINTENANCE, /* back to the queue with one more restart (ctl_job_fault) */
    CTL_ACT_REQUEUE,     /* back to the queue as they are (an operator's drain) */
} ctl_jobs_act;

/* Requeues every job with a replica on n that does not tolerate one of n's NoExecute taints (its
 * reason and Requeued event name the taint); *evicted: how many. */
int ctl_node_evict_untolerated(gpupoold *g, ctl_node *n, int *evicted, gp_diag *d);

/* Ends the placement of every job holding GPU gpu of n (gpu < 0: anything of n's; multi: only
 * jobs holding more than one GPU there), each once (a gang's other replicas end with it), as
 * act says, with cause as the reason. */
int ctl_node_end_jobs(gpupoold *g, ctl_node *n, int gpu, bool multi, ctl_jobs_act act,
                      const char *cause, gp_diag *d);
/* Stores next (a changed copy of n: cordon, drain, deadline, health check asked, GPUs' drains)
 * and takes those fields into n, with what follows from them (desired-document versions,
 * schedulability, GPU availability). */
int ctl_node_commit(gpupoold *g, ctl_node *n, ctl_node *next, gp_diag *d);

/* The XID events of a heartbeat, decoded and checked against the node (net/wire.h): counted,
 * and acted on per faults.h. Returns 1 when that changed GPUs or placements (a scheduling cycle
 * is due), else 0, or an error. */
int ctl_recovery_xids(gpupoold *g, ctl_node *n, const gp_wire_xid *events, size_t nevents,
                      gp_diag *d);
/* The health check result of a heartbeat, decoded and checked against the node (net/wire.h;
 * NULL: none reported): node-wide fatal findings make the node unschedulable, a GPU's
 * drain it (restarting its jobs elsewhere), and drained GPUs waiting for this check return.
 * Returns 1 when that changed what may be placed, else 0, or an error. */
int ctl_recovery_health(gpupoold *g, ctl_node *n, const gp_wire_health *health, gp_diag *d);
/* Whether ctl_recovery_health(n, health) would store something (drain a GPU, return one, or
 * ask again for a failed one); false when it changes memory only (the result shown, the
 * node-wide verdict). Pure. */
bool ctl_recovery_health_writes(const ctl_node *n, const gp_wire_health *health);
/* What a heartbeat's replica reports say about fencing: stale_running is the number of reports
 * of superseded replicas still Running. Returns whether the fence was lifted. */
bool ctl_recovery_fence(gpupoold *g, ctl_node *n, int stale_running);

/* Takes GPU gpu of n out of service with reason (automatic: a fault or a check, which a
 * passing health check may undo; retire: never undone automatically); restart: its jobs are
 * restarted elsewhere first. */
int ctl_gpu_drain(gpupoold *g, ctl_node *n, int gpu, const char *reason, bool automatic,
                  bool retire, bool restart, gp_diag *d);
/* Returns GPU gpu of n to service (retired or not); by: who, for the log. */
int ctl_gpu_undrain(gpupoold *g, ctl_node *n, int gpu, const char *by, gp_diag *d);
/* Asks n's agent for a health check now; its drained GPUs waiting for one wait for this one. */
int ctl_node_check(gpupoold *g, ctl_node *n, gp_diag *d);

/* Once per scheduling cycle, in its own transaction: lost nodes, maintenance deadlines, health
 * checks due; and (memory only) hot spares and maintenance windows on the cluster model. Past
 * deadline (ctl_cycle_txn_deadline; 0: none) the transaction handles no further node (it handles
 * at least one): 1 when nodes are left due then (the caller asks for the next cycle and ends
 * this one, so that the lease's renewal and the queued changes come first), else 0; or a
 * negative GP_E*. */
int ctl_recovery_tick(gpupoold *g, int64_t now, int64_t deadline, gp_diag *d);

/* A replica report's idle_ms for job j's replica r: past the job's hang_timeout, the job is
 * reported hung (once per placement) and restarted unless its policy is Never. */
int ctl_recovery_idle(gpupoold *g, ctl_job *j, int r, int64_t idle_ms, gp_diag *d);
/* Whether ctl_recovery_idle(j, r, idle_ms) would act (an event, a restart: store). Pure. */
bool ctl_recovery_idle_writes(const ctl_job *j, int r, int64_t idle_ms);

#endif
