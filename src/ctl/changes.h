/*
 * Changes to jobs, nodes and tokens that more than one caller makes: API handlers, agents'
 * reports, recovery and the scheduling loop. Each runs inside a transaction of the runner
 * (txn.h), in the committer, under the state lock: it checks what it needs, writes the store,
 * then changes memory (store first, so a failed write leaves memory alone).
 *
 * Layer: changes (tests/layers.sh). Implemented in jobs.c, pull.c, node_mig.c, recovery.c and,
 * for tokens, api_tokens.c.
 */
#ifndef GP_CTL_CHANGES_H
#define GP_CTL_CHANGES_H

#include "ctl/context.h"
#include "net/wire.h"

#include <jansson.h>

/* ---- job records (jobs.c); all run in the committer ---- */
/* Stores j's state and status document (built from j's fields). */
int ctl_job_store(gpupoold *g, const ctl_job *j, ctl_job_state state, gp_diag *d);
/* Appends an event to the job's history, now or at time now. */
int ctl_job_event(gpupoold *g, int64_t job, const char *type, const char *msg, gp_diag *d);
int ctl_job_event_at(gpupoold *g, int64_t job, int64_t now, const char *type, const char *msg,
                     gp_diag *d);
/* Makes a Pending job that an owner (a service or an array) creates: its spec parsed from text
 * (a canonical job spec, borrowed), with proto's tenant_id, name, owner and owner-kind fields
 * (revision, in_array, array_index; the rest is filled in here). Stores it, stores owner_next as
 * the owner's new status, appends a "Submitted" event (child_why) on the child and owner_event
 * (owner_msg) on the owner, then adds the child to the state. 0, or an error with nothing in
 * memory changed. */
int ctl_job_make_child(gpupoold *g, const ctl_job *proto, const char *text,
                       const ctl_job *owner_next, const char *child_why, const char *owner_event,
                       const char *owner_msg, gp_diag *d);
/* Ends j's placement (if any) and moves it to state `to`: clears the stored placement, stores
 * next's status (next is j with the new reason, times, exit code and restarts; its replicas
 * record where it ran), appends an `event`, then in memory gives the GPUs back, keeps where it
 * ran, and takes next's fields. */
int ctl_job_end_placement(gpupoold *g, ctl_job *j, const ctl_job *next, ctl_job_state to,
                          const char *event, gp_diag *d);

/* Ends a job that holds resources: Succeeded (ok) or Failed with replica's exit code, or, by
 * its restart policy, back to Pending with one more restart. why (not NULL) is the reason of a
 * failure the job itself did not cause (e.g. max runtime): it is final, never restarted.
 * Store first, then memory; runs in the committer. */
int ctl_job_finish(gpupoold *g, ctl_job *j, bool ok, int replica, int exit_code, const char *why,
                   gp_diag *d);

/* ---- image pulls reported by agents (pull.c); run in the committer ---- */
/* Replica report w (decoded by net/wire.h) of j's replica (current: its placement and epoch) at
 * now (also on a heartbeat's own thread under the state lock when ctl_pull_report_writes is
 * false: it then changes memory only):
 * when running and pulling ("phase": "Pulling"), records the pull's progress event when one is
 * due and returns 1 (the replica has not started); otherwise 0, after recording "Pulled REF in
 * S s" when a pull was under way (unless pull_failed). */
int ctl_pull_report(gpupoold *g, ctl_job *j, int replica, const gp_wire_replica *w,
                    bool pull_failed, int64_t now, gp_diag *d);
/* Whether ctl_pull_report would record an event (store) for the same report at now; false when
 * it would change memory only. Pure. */
bool ctl_pull_report_writes(const ctl_job *j, int replica, const gp_wire_replica *w,
                            bool pull_failed, int64_t now);
/* Whether a failed replica could not get its image: exit code 125 and a reason starting
 * "ImagePullFailed: ". */
bool ctl_pull_failed(int exit_code, const char *reason);
/* The job's reason for such a failure: the agent's reason on one line (" (replica N)" after it
 * in a gang), into buf. */
void ctl_pull_failed_reason(const ctl_job *j, int replica, const char *reason, char *buf,
                            size_t cap);

/* The reason an agent stops a replica whose liveness probe failed with (agent/services.h): the
 * replica is restarted by its job's restart policy, with an event ReplicaUnhealthy. */
#define CTL_LIVENESS_PREFIX "LivenessFailed: "

/* Stores n's document (n may be a changed copy of a node; memory is not touched). */
int ctl_node_store(gpupoold *g, ctl_node *n, gp_diag *d);
/* The GPU instances in a heartbeat's GPU readings (gpus[i].mig_instances, decoded, with GPU
 * indices checked against n by gp_wire_heartbeat_check_node): checked against each GPU's mode
 * and model (GP_EINVAL naming the field, nothing changed), and those that changed are stored
 * with the node and set on the model (node_mig.c). 1 when some changed (what may be placed
 * changed), 0 when none did. */
int ctl_mig_report(gpupoold *g, ctl_node *n, const gp_wire_heartbeat *hb, gp_diag *d);
/* Whether ctl_mig_report would store something (an instance list changed) or refuse hb; false
 * when it would change nothing. Pure: reads n and hb only. */
bool ctl_mig_report_writes(const ctl_node *n, const gp_wire_heartbeat *hb);

/* How a job's placement ends when something else than the job failed (ctl_job_fault). */
typedef enum ctl_fault_kind {
    CTL_FAULT_HARDWARE,    /* a GPU or node fault, or a lost node: restarted unless its policy is
                              Never (then Failed) */
    CTL_FAULT_MAINTENANCE, /* a maintenance deadline: always put back in its queue */
} ctl_fault_kind;

/* Stops j's placement because of a fault it did not cause (cause: e.g. "XID 48 (double-bit
 * ECC error) on node n0 GPU 1"): back to Pending as a restart after a fault (one more restart,
 * the same checkpoint directory, hot spares allowed, not counted against max_restarts), or
 * Failed when its restart policy is Never (hardware faults) or it already restarted
 * faults.restart_limit times within faults.restart_window. Runs in the committer. */
int ctl_job_fault(gpupoold *g, ctl_job *j, ctl_fault_kind kind, const char *cause, gp_diag *d);
/* Fails j as if a replica had failed (restart policy and max_restarts apply), with cause as
 * the reason (an application fault the driver reported). */
int ctl_job_fail(gpupoold *g, ctl_job *j, const char *cause, gp_diag *d);

/* Creates a token: the secret in secret (shown once), its record in st and the store. Runs in
 * the committer. */
int ctl_token_create(gpupoold *g, const char *name, ctl_role role, int64_t tenant_id,
                     int64_t node_id, int64_t expires_ms, char *secret, size_t cap, gp_diag *d);

/* Revokes every live agent token of the node but keep1 and keep2 (ids; 0: none), in the store
 * and in st. Runs in the committer. */
int ctl_tokens_retire_agent(gpupoold *g, int64_t node_id, int64_t keep1, int64_t keep2, gp_diag *d);

#endif
