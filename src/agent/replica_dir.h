/*
 * The state directory of one replica: the on-disk contract between gpupool-run (which writes it)
 * and gpupool-agent (which reads it, also after its own restart, to re-attach).
 *
 * gpupool-run is started by the agent as
 *
 *   gpupool-run --state-dir DIR --spec FILE [--user NAME] [--grace SECONDS] [--log-max BYTES]
 *               [--cgroup-root PATH] [--log-level LEVEL] [--checkpoint-root DIR]
 *               [--runtime podman|none] [--podman PATH] [--pids-limit N] [--mask PATH]...
 *
 * in a session of its own (setsid), with its stdout/stderr pointing at a file (never at a pipe
 * to the agent), and stays in the foreground as the supervisor of one replica. It does not need
 * the agent once started: an agent that dies, even with SIGKILL, leaves the job running.
 *
 * Files in DIR (created when missing, mode 0755; every record below is replaced atomically:
 * written to a temporary file, fsync'd, renamed over the old one, and the directory fsync'd):
 *
 *   supervisor.pid  "PID STARTTIME\n": gpupool-run itself. STARTTIME is field 22 of
 *                   /proc/PID/stat (clock ticks after boot), so a reused PID is not mistaken for
 *                   the supervisor. Written first; a second gpupool-run on a DIR whose supervisor
 *                   is alive refuses to start (exit 1).
 *   child.pid       "PID STARTTIME\n": the job's leader, once its exec succeeded. The leader is
 *                   a session and process-group leader: its PGID is PID.
 *   status.json     the record of the replica (below); absent until the job was launched (a new
 *                   supervisor removes the status.json, child.pid and stop-reason of an earlier
 *                   run).
 *   stop-reason     one line, written by the agent (atomically) before it stops a replica for a
 *                   reason of its own rather than because the controller no longer wants it
 *                   (the GPU memory watch: "GPU memory 2048 MiB on GPU 0 (GPU-…) above the
 *                   replica's limit of 1024 MiB for 30 s"). The supervisor copies it into the
 *                   final record (stop_reason, and first in reason); the agent then reports the
 *                   replica Failed with it.
 *   stdout.log      the job's stdout; stderr.log its stderr (two files, never interleaved).
 *   stdout.log.1    the previous stdout.log: when a log would pass --log-max bytes (default
 *   stderr.log.1    64 MiB) it is renamed to .1 (replacing the old .1) and a new one started, so
 *                   a stream keeps at most 2 x --log-max bytes on disk. 0 turns the cap off.
 *   hostfile        gangs only: one "HOST slots=N" line per host; GPUPOOL_HOSTFILE names it.
 *   work/           the job's working directory when its spec gives none (owned by --user;
 *                   with --user, DIR and its parents must be searchable by that user).
 *
 * status.json, one JSON object:
 *   version        1
 *   state          "running" | "exited" (the job ended by itself, or could not be started)
 *                  | "killed" (gpupool-run was told to stop it: SIGTERM or SIGINT)
 *   job, replica, epoch          copied from the spec, so a directory names its replica
 *   supervisor_pid, pid, pid_start   gpupool-run's PID; the leader's PID and start time
 *   start_ms, end_ms             wall-clock milliseconds since 1970; end_ms 0 while running
 *   exit_code      the leader's exit status; 128+N when it died of signal N; 127 when it could
 *                  not be started (error says why)
 *   signal         the signal that ended the leader, 0 when it exited
 *   escalated      true when the grace period ran out and the group got SIGKILL
 *   error          why the job could not be started ("exec foo: No such file or directory");
 *                  empty otherwise
 *   reason         one line for people
 *   stop_reason    the stop-reason file's line when the job was stopped for it, else empty
 *                  (absent in records of older supervisors: read as empty)
 *   cgroup         the cgroup directories that held the job's limits, comma-separated (v1: one
 *                  per controller), "" when none; removed once the job is over
 *   container      the podman container the job runs in ("gpupool-J-R-E-HASH", sandbox.h); ""
 *                  when it runs as a host process (--runtime none)
 *   image, image_id  the job's image and its id once pulled; "" over the host root
 *
 * In a sandbox (--runtime podman, the default) the job's leader is `podman run` (child.pid),
 * the job itself runs in its container, and the job never sees this directory. A job with an
 * image first has it pulled (sandbox.h, pull.h): meanwhile there is no status.json and
 *
 *   pull.json      {"image", "done_bytes", "total_bytes" (0: unknown), "start_ms"}, rewritten as
 *                  the pull goes; removed when it is over. A pull that fails ends the replica
 *                  without running it: state "exited", exit_code 125, reason
 *                  "ImagePullFailed: " and the registry's (podman's) message.
 *   registry-auth.json  the agent's (0600): the credentials for the pull ({registry, username,
 *                  password}); gpupool-run reads and removes it at start.
 *
 * The job runs in a session and process group of its own (PGID = its PID). SIGTERM or SIGINT to
 * gpupool-run stops it: SIGTERM to the group, SIGKILL to the group after --grace seconds
 * (default 10). When the job's leader exits by itself, whatever it left in its group (background
 * processes) is killed at once with SIGKILL, as a container's are when its main process exits;
 * so are processes left in its cgroup and descendants re-parented to gpupool-run (a child
 * subreaper). The final record is written after they are gone (at most ~2 s more).
 *
 * Re-attaching (gp_rdir_probe does steps 1-3):
 *   1. status.json says exited or killed: the replica is over; the record is final.
 *   2. Otherwise supervisor.pid names a live process (same start time) whose command line has
 *      --state-dir DIR: the supervisor runs; stop the job with SIGTERM to that PID and wait for
 *      status.json to become final.
 *   3. Otherwise the supervisor is gone without a final record (killed with SIGKILL, the machine
 *      rebooted): the replica is lost. If child.pid is still alive its group should be killed.
 *
 * Records that cannot be read. A job that runs as the agent's user can write this directory, so
 * any record may be garbled, replaced by something that is not a regular file, or removed.
 * Records are read without blocking, only from regular files, and only up to a size gpupool-run
 * never exceeds. A status.json that cannot be read is no final record: the replica is treated as
 * running while its supervisor lives (it is stopped through it, never started again) and as lost
 * once it is gone. A supervisor.pid that is missing, cannot be read, or names a live process that
 * is not a supervisor of DIR is not believed: the supervisor is looked for among the processes
 * (the oldest whose command line has --state-dir DIR: the supervisor starts before its job). A
 * child.pid that cannot be read is replaced by status.json's pid and pid_start.
 *
 * gpupool-run's exit status: 0 once the final record is written (whatever the job did, including
 * a command that could not be executed); 2 for bad arguments or a bad spec (stderr names the
 * field); 1 when it could not do its work (state directory unwritable, another supervisor).
 */
#ifndef GP_AGENT_REPLICA_DIR_H
#define GP_AGENT_REPLICA_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "gpupool/error.h"

#define GP_RDIR_SUPERVISOR_PID "supervisor.pid"
#define GP_RDIR_CHILD_PID      "child.pid"
#define GP_RDIR_STATUS         "status.json"
#define GP_RDIR_STDOUT         "stdout.log"
#define GP_RDIR_STDERR         "stderr.log"
#define GP_RDIR_HOSTFILE       "hostfile"
#define GP_RDIR_WORK           "work"
#define GP_RDIR_STOP_REASON    "stop-reason"
#define GP_RDIR_SHARE          "share.region" /* fractional GPUs: libgpushare's accounting */
#define GP_RDIR_SPEC           "spec.json"    /* the agent's: what gpupool-run was given */
#define GP_RDIR_SPEC_MAX       (16u << 20)    /* spec.json larger than this is not the agent's */
#define GP_RDIR_PULL           "pull.json"    /* the image pull under way (below) */
#define GP_RDIR_SECCOMP        "seccomp.json" /* the sandbox's seccomp profile (seccomp.h) */
#define GP_RDIR_AUTH           "registry-auth.json" /* the agent's: credentials for the pull */

typedef enum gp_rdir_state {
    GP_RDIR_NONE = 0, /* no status.json yet */
    GP_RDIR_RUNNING,
    GP_RDIR_EXITED,
    GP_RDIR_KILLED,
} gp_rdir_state;

/* A process identified beyond its PID: PID plus its start time from /proc/PID/stat. */
typedef struct gp_rdir_pid {
    pid_t pid;
    uint64_t start; /* clock ticks after boot */
} gp_rdir_pid;

typedef struct gp_rdir_status {
    gp_rdir_state state;
    int64_t job;
    int replica;
    int64_t epoch;
    pid_t supervisor_pid;
    gp_rdir_pid child;
    int64_t start_ms, end_ms;
    int exit_code;
    int signal;
    bool escalated;
    char error[512];
    char reason[256];
    char stop_reason[256];
    char cgroup[512];
    char container[96]; /* the podman container; "" for a job run as a host process */
    char image[512];    /* the job's image; "" over the host root or as a host process */
    char image_id[80];  /* its id ("sha256:..."), once pulled */
} gp_rdir_status;

/* What a re-attaching agent learns about a directory (see the steps above). */
typedef struct gp_rdir_view {
    gp_rdir_status status;  /* state GP_RDIR_NONE when there is no status.json or it cannot be
                               read */
    bool status_unreadable; /* status.json is there but cannot be read or understood */
    bool supervisor_alive;  /* the supervisor runs (see "Records that cannot be read") */
    bool child_alive;       /* child.pid likewise */
    gp_rdir_pid supervisor; /* the supervisor found, else supervisor.pid's ({0, 0}: none) */
    gp_rdir_pid child;      /* from child.pid ({0, 0} when absent) */
} gp_rdir_view;

/* "running", "exited", "killed" ("none" for GP_RDIR_NONE). Static storage. */
const char *gp_rdir_state_name(gp_rdir_state s);

/* Replaces DIR/NAME with the len bytes of data: temporary file, fsync, rename, fsync of DIR.
 * Returns 0, or GP_EIO with d naming the path and the system error. */
int gp_rdir_write_atomic(const char *dir, const char *name, const void *data, size_t len,
                         gp_diag *d);

/* Start time (field 22 of /proc/PID/stat) of a process, and whether it is a zombie. Returns 0,
 * GP_ENOENT when there is no such process, GP_EPARSE when the file cannot be understood. */
int gp_rdir_proc_start(pid_t pid, uint64_t *start, bool *zombie);

/* Parent (field 4 of /proc/PID/stat) and session (field 6) of a process. Returns 0, GP_ENOENT
 * when there is no such process, GP_EPARSE when the file cannot be understood. */
int gp_rdir_proc_session(pid_t pid, pid_t *ppid, pid_t *sid);

/* The first line of DIR/NAME, without its newline, into buf (truncated to cap - 1 bytes).
 * GP_ENOENT when absent (buf is then ""), GP_EIO with d set when it cannot be read (also when
 * it is not a regular file of at most 4 KiB). */
int gp_rdir_read_line(const char *dir, const char *name, char *buf, size_t cap, gp_diag *d);

/* Records pid with its current start time in DIR/NAME ("PID STARTTIME\n"), atomically. */
int gp_rdir_write_pid(const char *dir, const char *name, pid_t pid, gp_diag *d);
/* Reads DIR/NAME written by gp_rdir_write_pid. GP_ENOENT when absent, GP_EPARSE when bad,
 * GP_EIO when it cannot be read (or is not a small regular file). */
int gp_rdir_read_pid(const char *dir, const char *name, gp_rdir_pid *out, gp_diag *d);
/* True when p->pid is a live (not zombie) process whose start time is p->start: false for a
 * process that exited and for an unrelated process that reuses the PID. */
bool gp_rdir_pid_alive(const gp_rdir_pid *p);

/* Writes DIR/status.json from s, atomically. */
int gp_rdir_write_status(const char *dir, const gp_rdir_status *s, gp_diag *d);
/* The JSON document in DIR/NAME (a record or spec.json), read as records are: a regular file of
 * at most max bytes. On success *out is a new reference (json_decref). GP_ENOENT when absent,
 * GP_EIO (cannot be read, not such a file) or GP_EPARSE (not JSON) with d set; *out NULL. */
int gp_rdir_read_json(const char *dir, const char *name, size_t max, json_t **out, gp_diag *d);

/* Reads DIR/status.json into out (zeroed first). GP_ENOENT when absent, GP_EPARSE with the
 * field named in d when malformed, GP_EIO with d set when it cannot be read (also when it is not
 * a regular file of at most 64 KiB). */
int gp_rdir_read_status(const char *dir, gp_rdir_status *out, gp_diag *d);

/* The supervisor of DIR among the live processes: the oldest one whose command line has
 * --state-dir DIR. 0 with *out set, GP_ENOENT when there is none. Reads /proc. */
int gp_rdir_find_supervisor(const char *dir, gp_rdir_pid *out);

/* Fills out from the files of DIR (any of them may be missing or unreadable: see "Records that
 * cannot be read"). Returns 0, with d describing status.json when status_unreadable is set, or
 * GP_ERANGE when DIR is too long. */
int gp_rdir_probe(const char *dir, gp_rdir_view *out, gp_diag *d);

/* Joins dir and name into buf ("dir/name"); GP_ERANGE when it does not fit. */
int gp_rdir_path(char *buf, size_t size, const char *dir, const char *name);

#endif
