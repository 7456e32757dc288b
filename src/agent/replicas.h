/*
 * The agent's view of its replica directories (layout in agent.h): listing them with the state
 * their supervisor recorded, starting a supervisor for a new placement, stopping one, and
 * archiving those that are over into finished/ (the newest `keep` are kept, for logs).
 */
#ifndef GP_AGENT_REPLICAS_H
#define GP_AGENT_REPLICAS_H

#include "agent/converge.h"
#include "agent/replica_dir.h"
#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_REPLICAS_PATH_MAX 1200

/* How supervisors are started. Borrowed strings. */
typedef struct gp_replicas_env {
    const char *state_dir;
    const char *run_binary;
    const char *user; /* "" = the agent's */
    int grace_s;
    int64_t log_max;
} gp_replicas_env;

/* STATE_DIR/SUB/J-R-E into buf. GP_ERANGE when it does not fit. */
int gp_replicas_dir(const char *state_dir, const char *sub, const gp_replica_key *k, char *buf,
                    size_t cap);

/* Every replica directory with its state; *out is malloc'd (caller frees), *n its length.
 * Unreadable directories are logged and skipped. */
int gp_replicas_scan(const char *state_dir, int64_t started_grace_ms, gp_local_replica **out,
                     int *n, gp_diag *d);

/* Makes the directory, writes spec (the JSON text gpupool-run reads) and starts gpupool-run
 * detached (its own session; not a child of the agent). */
int gp_replicas_start(const gp_replicas_env *env, const gp_replica_key *k, const char *spec,
                      gp_diag *d);

/* Stops a replica: SIGTERM to its supervisor (which stops the job's process group and records
 * how it ended); with kill_group, SIGKILL to the job's group directly (a lost replica). */
int gp_replicas_stop(const char *state_dir, const gp_replica_key *k, bool kill_group, gp_diag *d);

/* Moves a replica's directory to finished/ and keeps the newest `keep` there. */
int gp_replicas_forget(const char *state_dir, const gp_replica_key *k, int keep, gp_diag *d);

#endif
