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
 * Returns 0 once the final record is written, or an error (d says why) when the supervisor could
 * not work: GP_ESTATE (another live supervisor), GP_EIO (state directory), GP_ENOMEM.
 */
#ifndef GP_AGENT_SUPERVISE_H
#define GP_AGENT_SUPERVISE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/run_spec.h"
#include "gpupool/error.h"

/* The user the job runs as. */
typedef struct gp_sup_user {
    bool change; /* setgid/initgroups/setuid before exec (only when running as root) */
    uid_t uid;
    gid_t gid;
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
} gp_sup_opts;

/* Resolves --user NAME (NULL or "": the user gpupool-run runs as, no change). Switching to
 * another user needs root: GP_EPERM otherwise; GP_EINVAL for an unknown user; d names --user. */
int gp_sup_user_resolve(const char *name, gp_sup_user *out, gp_diag *d);

/* Supervises the replica to its end (steps above). */
int gp_sup_run(const gp_sup_opts *o, gp_diag *d);

#endif
