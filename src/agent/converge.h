/*
 * Convergence: what the agent must do to make the node run exactly the replicas the controller
 * wants. Level-triggered and pure: given the desired set (from the latest heartbeat answer) and
 * what the replica directories say, it lists the actions; the agent carries them out and asks
 * again next time. Doing the same plan twice is harmless, so a crash at any point is recovered
 * by the next round.
 *
 * A replica is named by (job, replica, epoch): a new placement of the same replica has a new
 * epoch, so an old directory is never mistaken for the new placement (the fence of allocation
 * epochs).
 *
 * Rules, per local replica directory:
 *   running, desired                      -> nothing (report Running)
 *   running, not desired                  -> stop it (SIGTERM to its supervisor)
 *   final (exited), desired               -> report its end (Succeeded/Failed) until the
 *                                            controller stops listing it
 *   final or stopped, not desired         -> forget it (the directory may be archived)
 *   lost (supervisor gone, no final record) -> report Failed; kill a leftover job group
 * and per desired replica without a directory -> start it. A replica that has a directory is
 * never started again, whatever its records say: a status.json that cannot be read (a job may
 * garble it) counts as running while the supervisor lives, so it is stopped through the
 * supervisor when no longer desired (gp_local_state_of).
 */
#ifndef GP_AGENT_CONVERGE_H
#define GP_AGENT_CONVERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/replica_dir.h"

typedef struct gp_replica_key {
    int64_t job;
    int replica;
    int64_t epoch;
} gp_replica_key;

/* Whether a and b name the same replica placement (job, replica and epoch all equal). */
bool gp_replica_key_equal(const gp_replica_key *a, const gp_replica_key *b);

typedef enum gp_local_state {
    GP_LOCAL_STARTING = 0, /* directory made, no record yet, supervisor alive */
    GP_LOCAL_RUNNING,
    GP_LOCAL_EXITED, /* final: the job ended by itself (or could not start) */
    GP_LOCAL_KILLED, /* final: stopped because it was no longer desired */
    GP_LOCAL_LOST,   /* no supervisor and no final record */
} gp_local_state;

/* The state of a replica directory from what was read of it (gp_rdir_probe): final records
 * as they say; otherwise running (or starting, before its first record) while the supervisor
 * lives, also when status.json cannot be read; starting while young (the directory was made
 * less than the grace period ago) and no supervisor has shown up yet; else lost. */
gp_local_state gp_local_state_of(const gp_rdir_view *v, bool young);

typedef struct gp_local_replica {
    gp_replica_key key;
    gp_local_state state;
    int exit_code;
} gp_local_replica;

typedef enum gp_action_kind {
    GP_ACT_START = 0,  /* start desired[index] */
    GP_ACT_STOP,       /* stop local[index] */
    GP_ACT_FORGET,     /* local[index] is over and not desired: archive its directory */
    GP_ACT_REPORT,     /* report local[index]'s state to the controller */
    GP_ACT_KILL_GROUP, /* local[index] is lost: kill what is left of its job */
} gp_action_kind;

typedef struct gp_action {
    gp_action_kind kind;
    int index;
} gp_action;

/* Fills out (room for 2 * (ndesired + nlocal) actions) and returns how many. Stops come before
 * starts, so GPUs are freed before new replicas take them. */
int gp_converge(const gp_replica_key *desired, int ndesired, const gp_local_replica *local,
                int nlocal, gp_action *out);

/* The state name a report carries ("Running", "Succeeded", "Failed"); NULL when the state is
 * not reported (starting, killed). */
const char *gp_local_report_state(const gp_local_replica *l);

#endif
