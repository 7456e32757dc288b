/*
 * The supervisor of one replica: what gpupool-run does between reading its arguments and
 * exiting. Contract of the state directory and of the program in replica_dir.h.
 *
 * gp_sup_run:
 *  1. blocks SIGTERM, SIGINT, SIGHUP and SIGCHLD and reads them from a signalfd (so there is no
 *     signal handler and no global state), ignores SIGPIPE; becomes a child subreaper so that
 *     orphaned descendants of the job are re-parented to it, not to init;
 *  2. writes supervisor.pid (refusing a directory whose supervisor is alive), the hostfile for
 *     gangs, creates work/; creates the cgroup with the limits (cgroup.h; a warning and no
 *     limits where not permitted); opens stdout.log and stderr.log (logcap.h);
 *  3. forks the job: the child starts a new session (so its PID is its process group's ID),
 *     restores default signal dispositions and an empty mask, gets /dev/null as stdin and pipes
 *     to the supervisor as stdout and stderr, marks every other descriptor close-on-exec, waits
 *     until the supervisor has moved it into the cgroup, switches user (initgroups, setgid,
 *     setuid), changes directory and execs with the job's environment (PATH looked up in it).
 *     A step that fails is reported through a close-on-exec pipe: status.json then says exited,
 *     exit_code 127 and the step with its errno text in error (also appended to stderr.log);
 *  4. records child.pid and status.json "running", then copies the pipes into the logs while it
 *     waits for the job's leader to exit or for a stop signal;
 *  5. SIGTERM or SIGINT: SIGTERM to the job's process group; after the grace period, SIGKILL
 *     to the group (escalated). A second stop signal changes nothing. SIGHUP is ignored;
 *  6. when the leader has exited: after a stop request, the rest of the group keeps what is
 *     left of the grace period and is then killed; when the job ended by itself, whatever it
 *     left in its process group is killed at once with SIGKILL (the leader's exit is the end of
 *     the job, as with a container's main process). Then everything left in the cgroup and every
 *     re-parented descendant is killed too, the pipes are drained (at most 2 s), status.json
 *     gets its final record ("exited" or "killed"), and the cgroup is removed.
 *
 * In a sandbox (opts.runtime set; sandbox.h says what the job sees) steps 3 to 6 go through
 * podman: the image is pulled first as its policy says (pull.h; a failed pull is the final
 * record: exit 125, "ImagePullFailed: ..."), the leader is `podman run` (its stdout and stderr
 * are the job's, written by the container straight into the pipes), a stop is `podman stop`
 * with the grace period (asked again while the container is not running yet; SIGKILL to the
 * container 5 s past the grace period if it is still there), and once `podman run` has ended the
 * container is removed (`podman rm --force`) with the replica's cgroup directories; the exit
 * code is podman's: the job's, 128+N for a job killed by signal N (recorded as signal N), 125 to
 * 127 with podman's message as the error when the job could not be started.
 *
 * The container gets the spec's GPUs as CDI devices (`--device nvidia.com/gpu=UUID`,
 * gp_cdi_podman_args) when the spec says cdi_devices, and no GPU device otherwise (logged for a
 * job with GPUs); a name that is not a CDI device name fails the start (exit 127).
 *
 * Returns 0 once the final record is written, or an error (d says why) when the supervisor could
 * not work: GP_ESTATE (another live supervisor), GP_EIO (state directory), GP_ENOMEM.
 */
#ifndef GP_AGENT_SUPERVISE_H
#define GP_AGENT_SUPERVISE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/run_spec.h"
#include "agent/runtime.h"
#include "gpupool/error.h"

/* The user the job runs as. */
typedef struct gp_sup_user {
    bool change; /* setgid/initgroups/setuid before exec (only when running as root) */
    uid_t uid;   /* the job's, where it runs (inside its user namespace in a sandbox with one) */
    gid_t gid;
    uid_t host_uid; /* what they are on the host: the owner of the files made for the job */
    gid_t host_gid;
    char name[256];
    char home[1024];
    char shell[256];
} gp_sup_user;

typedef struct gp_sup_opts {
    const char *state_dir;
    const gp_run_spec *spec; /* borrowed */
    gp_sup_user user;
    int grace_s;             /* SIGTERM to SIGKILL */
    int64_t log_max;         /* bytes per log file; 0 = no cap */
    const char *cgroup_root; /* e.g. /sys/fs/cgroup */
    char *const *environ_;   /* gpupool-run's environment, for the base variables */
    /* libgpushare.so, preloaded into fractional replicas (NULL or a missing file: none; the
     * agent's NVML watch still holds the memory limit) */
    const char *share_library;
    /* where the job's checkpoint directory is made (ROOT/JOB) when the spec names none; NULL:
     * the job gets none */
    const char *checkpoint_root;
    /* The sandbox (sandbox.h): the node's podman; NULL runs the job as a host process (steps
     * above; gpupool-run --runtime none). */
    const gp_runtime *runtime;
    const char *const *masks; /* host paths hidden from a job over the host root */
    int nmasks;
    int64_t pids_limit;   /* 0: podman's default */
    const char *hostname; /* the host's name, which a job on the host network gets */
} gp_sup_opts;

/* The user a sandboxed job runs as when none is named: nobody (65534 without a passwd entry). */
#define GP_SUP_SANDBOX_USER "nobody"
#define GP_SUP_SANDBOX_UID  65534

/* Resolves --user NAME (NULL or "": the user gpupool-run runs as, no change). Switching to
 * another user needs root: GP_EPERM otherwise; GP_EINVAL for an unknown user; d names --user. */
int gp_sup_user_resolve(const char *name, gp_sup_user *out, gp_diag *d);

/* Resolves --user NAME for a sandboxed job (NULL or "": GP_SUP_SANDBOX_USER): its uid and gid
 * inside the container, never root (GP_EINVAL); change is set when gpupool-run runs as root,
 * so the files made for the job are given to that user. */
int gp_sup_user_resolve_sandbox(const char *name, gp_sup_user *out, gp_diag *d);

/* Places a sandboxed job's user in its tenant's host range m (idmap.h; size 0: no change):
 * host_uid = m->base + uid, host_gid = m->base + gid. GP_EINVAL when the user is outside the
 * range, GP_EPERM when not running as root (only root maps ids onto the host's). */
int gp_sup_user_map(gp_sup_user *u, const gp_idmap *m, gp_diag *d);

/* Supervises the replica to its end (steps above). */
int gp_sup_run(const gp_sup_opts *o, gp_diag *d);

#endif
