/*
 * Internal to gpupool-run's supervisor: the state of one supervision, shared by supervise.c (the
 * loop, and jobs run as host processes) and sup_podman.c (jobs in a podman sandbox). Not an API:
 * nothing outside those two files includes it.
 */
#ifndef GP_AGENT_SUP_INT_H
#define GP_AGENT_SUP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "agent/cgroup.h"
#include "agent/logcap.h"
#include "agent/replica_dir.h"
#include "agent/sandbox.h"
#include "agent/supervise.h"

typedef struct sup {
    const gp_sup_opts *o;
    const gp_run_spec *s;
    char **env;
    char workdir[4096], hostfile[4200], data_dir[4200], share_region[4200], checkpoint[4200];
    char share_limits[4300]; /* share_region's limits file */
    bool preload;            /* libgpushare is there to preload */
    bool mount_volumes;      /* volumes in a private mount namespace, else links */
    gp_cgroup cg;
    gp_logcap log[2];
    int pipe_fd[2]; /* read ends of the job's stdout and stderr; -1 at EOF */
    bool log_broken[2];
    int sigfd;
    pid_t pid; /* the job's leader, also its process group; 0 before the launch */
    bool leader_done, stopping, escalated;
    int wstatus;
    int64_t deadline; /* monotonic ms: SIGKILL when stopping */
    gp_rdir_status st;
    /* In a sandbox (o->runtime set): */
    bool ctr;
    char name[GP_SANDBOX_NAME_MAX]; /* the container */
    char cgroup_name[128];          /* the replica's cgroup (cgroup.h names it) */
    char cgroup_parent[160];        /* "/gpupool/" cgroup_name */
    gp_sandbox_layout layout;       /* what the job sees */
    char preload_file[4200];        /* the ld.so.preload a fraction gets */
    char env_file[4200];            /* the job's variables, for podman */
    char **env_args;                /* those that cannot go into the file */
    pid_t stop_pid;                 /* a `podman stop` under way; 0: none */
    int64_t next_stop_ms;           /* monotonic: when a stop may be asked again */
    char *auth;                     /* registry_auth read from the agent's file (JSON) */
} sup;

/* A step of the child that failed before exec, sent through the report pipe. */
typedef struct launch_report {
    int step; /* REPORT_* */
    int err;  /* errno */
    int arg;  /* REPORT_VOLUME: the volume's index, -1 for the namespace or the data directory */
} launch_report;

enum { REPORT_STDIO, REPORT_USER, REPORT_CHDIR, REPORT_EXEC, REPORT_VOLUME, REPORT_NETNS };

/* ---- supervise.c, for sup_podman.c ---- */

int64_t sup_now_ms(clockid_t clock);

/* Whether the job runs in a user namespace of its tenant's ids (idmap.h): an image job in a
 * sandbox whose spec has userns. A job over the host root runs as its tenant's host ids without
 * one: the runtime must make its mount points (the volumes under /data, /etc/ld.so.preload) in
 * the host's directories, which a user namespace's root may not write. */
bool sup_userns(const sup *S);
void sup_close_fd(int *fd);
/* Writes the child's failed step to the report pipe and exits 127 (in the child). */
void sup_report_exit(int fd, int step, int arg);
/* Waits for the child's verdict on the report pipe: 0 once it exec'd, 1 when it failed and
 * that was recorded, < 0 on an error. */
int sup_await_exec(sup *S, int report, gp_diag *d);
/* One round of poll over the signals and the pipes (at most timeout_ms; -1: no limit). */
void sup_poll_once(sup *S, int timeout_ms);
/* Reaps every child that has exited (the leader and the rest). */
void sup_reap(sup *S);
/* Sends SIGKILL to every child re-parented to the supervisor. */
void sup_kill_orphans(void);
/* Records a start that failed (r: the step, its errno and argument) as exited with code 127. */
int sup_record_failed_start(sup *S, const launch_report *r, gp_diag *d);
/* Writes a line into the job's stderr.log (gpupool-run's own message). */
void sup_log_line(sup *S, const char *line);

/* ---- sup_podman.c ---- */

/* The layout, the cgroup parent, and the container's name (before the environment is built). */
int sup_ctr_prepare(sup *S, gp_diag *d);
/* The base of the job's environment in the sandbox (a NULL-terminated list, gp_run_env_free). */
int sup_ctr_env_base(sup *S, char ***out);
/* Pulls the image as its policy says: 0 to go on; 1 when the replica ended (a failed pull, a
 * stop while pulling: recorded); < 0 on an error of the supervisor. */
int sup_ctr_pull(sup *S, gp_diag *d);
/* Writes the env file and starts `podman run`: 0 running; 1 could not start (recorded). */
int sup_ctr_launch(sup *S, gp_diag *d);
/* A stop: `podman stop` with the grace period (again while the container is not running yet). */
void sup_ctr_stop(sup *S);
/* Past the grace period: SIGKILL to the container and to `podman run`. */
void sup_ctr_escalate(sup *S);
/* After `podman run` ended: the container removed, its cgroups, the pipes drained. */
void sup_ctr_clean_up(sup *S);
/* The exit as podman reported it: 128+N read as signal N; podman's own error (125 to 127) as
 * the error when the job never ran. */
void sup_ctr_exit(sup *S, int *exit_code, int *signal);

#endif
