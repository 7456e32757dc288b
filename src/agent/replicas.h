/*
 * The agent's view of its replica directories (layout in agent.h): listing them with the state
 * their supervisor recorded, starting a supervisor for a new placement, stopping one (with a
 * reason of the agent's own, or because the controller no longer wants it), archiving those that
 * are over into finished/ (the newest `keep` are kept, for logs), and for the GPU memory watch
 * (memwatch.h): a running replica's processes and GPU memory limits, and the replica a process
 * belongs to.
 */
#ifndef GP_AGENT_REPLICAS_H
#define GP_AGENT_REPLICAS_H

#include "agent/converge.h"
#include "agent/memwatch.h"
#include "agent/replica_dir.h"
#include "agent/runtime.h"
#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_REPLICAS_PATH_MAX 1200

/* How supervisors are started. Borrowed strings. */
typedef struct gp_replicas_env {
    const char *state_dir;
    const char *run_binary;
    const char *user; /* "" = the agent's (a host process) or nobody (a sandbox) */
    int grace_s;
    int64_t log_max;
    /* The sandbox (gpupool-run --runtime podman): NULL runs jobs as host processes. */
    const gp_runtime *runtime;
    const char *const *masks; /* host paths hidden from jobs (NULL-terminated; may be NULL) */
    int64_t pids_limit;
} gp_replicas_env;

/* STATE_DIR/SUB/J-R-E into buf. GP_ERANGE when it does not fit. */
int gp_replicas_dir(const char *state_dir, const char *sub, const gp_replica_key *k, char *buf,
                    size_t cap);

/* Every replica directory with its state (gp_local_state_of); *out is malloc'd (caller frees),
 * *n its length. Records that cannot be read are logged (replica_dir.h says what they count as). */
int gp_replicas_scan(const char *state_dir, int64_t started_grace_ms, gp_local_replica **out,
                     int *n, gp_diag *d);

/* Makes the directory, writes spec (the JSON text gpupool-run reads) and auth (the registry
 * credentials, NULL: none) into registry-auth.json (0600, replica_dir.h), and starts gpupool-run
 * detached (its own session; not a child of the agent). GP_EEXIST when the directory exists:
 * a placement gets one supervisor, ever. */
int gp_replicas_start(const gp_replicas_env *env, const gp_replica_key *k, const char *spec,
                      const char *auth, gp_diag *d);

/* A lost replica's sandbox (its supervisor gone): removes its container (named from its
 * directory, sandbox.h) and what is left of its cgroups. No-op without a runtime. */
void gp_replicas_remove_sandbox(const gp_replicas_env *env, const gp_replica_key *k);

/* The image pull under way of a starting replica (its pull.json): 1 with the fields set, 0 when
 * there is none. */
int gp_replicas_pull(const char *state_dir, const gp_replica_key *k, char *image, size_t cap,
                     int64_t *done_bytes, int64_t *total_bytes);

/* Stops a replica: SIGTERM to its supervisor (which stops the job's process group and records
 * how it ended); with kill_group, SIGKILL to the job's group directly (a lost replica; only when
 * the recorded leader still leads a session of its own). A reason
 * (one line; NULL: none, the controller's stop) is first written to the directory's stop-reason
 * file (replica_dir.h), so that the final record carries it and the replica is reported Failed
 * with it; GP_EIO when it cannot be written (then nothing is signalled). */
int gp_replicas_stop(const char *state_dir, const gp_replica_key *k, bool kill_group,
                     const char *reason, gp_diag *d);

/* Why the agent stopped a replica that is over (killed or lost): the stop_reason of its final
 * record, else its stop-reason file (a supervisor lost before recording). 1 with buf set when
 * there is one, 0 when there is none (stopped because it was no longer desired, or ended by
 * itself). */
int gp_replicas_stop_reason(const char *state_dir, const gp_replica_key *k, char *buf, size_t cap);

/* Job labels read from spec.json are cut to this many bytes (with the NUL). */
#define GP_REPLICAS_LABEL_MAX 128

/* A GPU of a running replica as its spec.json gives it (the desired replica's gpus[] entry, with
 * the MIG device the agent made for it), and what the agent's round measured of it (usage.h). */
typedef struct gp_replica_gpu {
    int milli;          /* thousandths of the GPU; 1000: the whole GPU */
    int64_t memory_mib; /* the memory of its share (a fraction); 0: none given */
    int mig_start;      /* first memory slice of its MIG instance; -1: not a MIG slice */
    char mig_uuid[96];  /* "MIG-…" of that instance; "" unknown */
    /* Measured (usage.h), -1 unknown: the utilisation a heartbeat reports for it (percent), and
     * the one its slice metric shows (percent; a fraction's only from its own processes). */
    int util;
    int slice_util;
} gp_replica_gpu;

/* A running replica as the agent's round sees it: the GPU memory watch and the metrics. */
typedef struct gp_replica_watch {
    gp_memwatch_replica use; /* key, and per GPU its index and limit (used_mib 0, uuid NULL) */
    gp_replica_gpu gpus[GP_MEMWATCH_MAX_GPUS]; /* the same GPUs as use.gpus, in the same order */
    /* The job's name, tenant and queue (desired document's name, tenant, queue) and its MIG
     * profile (spec.resources.mig_profile); "" when spec.json has none. */
    char name[GP_REPLICAS_LABEL_MAX];
    char tenant[GP_REPLICAS_LABEL_MAX];
    char queue[GP_REPLICAS_LABEL_MAX];
    char mig_profile[32];
    char image_id[80]; /* the image it runs from ("" over the host root) */
    pid_t leader;      /* the job's leader, whose session the job runs in; 0: not alive */
    pid_t supervisor;  /* its gpupool-run (a child subreaper); 0: not alive */
} gp_replica_watch;

/* Fills out from a replica's directory: the live leader and supervisor, the job's labels, and its
 * GPUs from spec.json, with the limit the job was given (the GPU's memory_mib for a fraction of a
 * GPU, milli < 1000 outside MIG; 0, none, otherwise); util and slice_util are -1. GP_EIO/GP_EPARSE
 * with d set when spec.json cannot be read or understood. */
int gp_replicas_watch_info(const char *state_dir, const gp_replica_key *k, gp_replica_watch *out,
                           gp_diag *d);

/* The replica (index in reps[0..n)) process pid belongs to, from /proc: the one whose leader's
 * session it is in (gpupool-run starts each job in a session of its own), else the one whose
 * leader or supervisor is among its ancestors (a process that left the session with setsid; the
 * supervisor is a child subreaper, so a process that also left its parent is still below it).
 * -1: a process of no replica, or one that is gone. */
int gp_replicas_owner(const gp_replica_watch *reps, int n, pid_t pid);

/* Moves a replica's directory to finished/ and keeps the newest `keep` there. */
int gp_replicas_forget(const char *state_dir, const gp_replica_key *k, int keep, gp_diag *d);

#endif
