/*
 * The supervisor of one replica (steps and contract in supervise.h and replica_dir.h).
 *
 * One thread, one poll loop over a signalfd and the job's two output pipes. Signals are blocked
 * and read from the signalfd, so there is no handler, no global and no race between a signal and
 * the poll. Times for deadlines come from CLOCK_MONOTONIC, times in records from CLOCK_REALTIME.
 */
#define _GNU_SOURCE /* signalfd, pipe2, close_range, initgroups, prctl, environ */

#include "agent/supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "agent/logcap.h"
#include "agent/netns.h"
#include "agent/replica_dir.h"
#include "agent/sup_int.h"
#include "agent/volumes.h"
#include "shim/region.h"
#include "base/log.h"

/* How long, at most, the supervisor waits for the killed group to disappear and drains the pipes
 * (a process that escaped the group may keep them open). */
#define DRAIN_MS 2000
/* In a sandbox: how long past the grace period `podman stop` gets before the supervisor kills
 * the container itself. */
#define CTR_STOP_SLACK_MS 5000

int64_t sup_now_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int gp_sup_user_resolve(const char *name, gp_sup_user *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    struct passwd *pw = name && *name ? getpwnam(name) : getpwuid(geteuid());
    if (!pw && name && *name) {
        return gp_diag_set(d, GP_EINVAL, "--user %s: no such user", name);
    }
    if (!pw) { /* running under a uid without a passwd entry: no change, no names */
        out->uid = out->host_uid = geteuid();
        out->gid = out->host_gid = getegid();
        return 0;
    }
    if (name && *name && geteuid() != 0 && pw->pw_uid != geteuid()) {
        return gp_diag_set(d, GP_EPERM,
                           "--user %s: running a job as another user needs root (gpupool-run "
                           "runs as uid %ld)",
                           name, (long)geteuid());
    }
    out->change = name && *name && geteuid() == 0;
    out->uid = out->host_uid = pw->pw_uid;
    out->gid = out->host_gid = pw->pw_gid;
    snprintf(out->name, sizeof(out->name), "%s", pw->pw_name);
    snprintf(out->home, sizeof(out->home), "%s", pw->pw_dir ? pw->pw_dir : "/");
    snprintf(out->shell, sizeof(out->shell), "%s", pw->pw_shell ? pw->pw_shell : "/bin/sh");
    return 0;
}

int gp_sup_user_resolve_sandbox(const char *name, gp_sup_user *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    struct passwd *pw = getpwnam(name && *name ? name : GP_SUP_SANDBOX_USER);
    if (!pw && name && *name) {
        return gp_diag_set(d, GP_EINVAL, "--user %s: no such user", name);
    }
    if (pw && pw->pw_uid == 0) {
        return gp_diag_set(d, GP_EINVAL, "--user %s: a job never runs as root in its sandbox",
                           name && *name ? name : GP_SUP_SANDBOX_USER);
    }
    out->uid = out->host_uid = pw ? pw->pw_uid : GP_SUP_SANDBOX_UID;
    out->gid = out->host_gid = pw ? pw->pw_gid : GP_SUP_SANDBOX_UID;
    out->change = geteuid() == 0; /* files made for the job are given to it */
    snprintf(out->name, sizeof(out->name), "%s", pw ? pw->pw_name : GP_SUP_SANDBOX_USER);
    snprintf(out->shell, sizeof(out->shell), "%s", pw && pw->pw_shell ? pw->pw_shell : "/bin/sh");
    return 0;
}

bool sup_userns(const sup *S)
{
    return S->ctr && S->s->image && S->s->userns.size > 0;
}

int gp_sup_user_map(gp_sup_user *u, const gp_idmap *m, gp_diag *d)
{
    if (m->size <= 0) {
        return 0;
    }
    if (geteuid() != 0) {
        return gp_diag_set(d, GP_EPERM,
                           "userns: mapping a job's ids onto the host's needs root "
                           "(gpupool-run runs as uid %ld)",
                           (long)geteuid());
    }
    if ((int64_t)u->uid >= m->size || (int64_t)u->gid >= m->size) {
        return gp_diag_set(
            d, GP_EINVAL, "--user %s: uid %lu, gid %lu: outside the tenant's %lld ids (userns)",
            u->name, (unsigned long)u->uid, (unsigned long)u->gid, (long long)m->size);
    }
    u->host_uid = (uid_t)(m->base + (int64_t)u->uid);
    u->host_gid = (gid_t)(m->base + (int64_t)u->gid);
    return 0;
}

/* ---- preparing ---- */

static int setup_signals(sup *S, gp_diag *d)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
        (S->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
        return gp_diag_set(d, GP_EIO, "signalfd: %s", strerror(errno));
    }
    /* Output goes to files; a broken pipe on our own stderr must not end the supervisor. */
    signal(SIGPIPE, SIG_IGN);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
        GP_LOG(GP_LOG_WARN, "run", "PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
    }
    return 0;
}

static int claim_dir(sup *S, gp_diag *d)
{
    const char *dir = S->o->state_dir;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        return gp_diag_set(d, GP_EIO, "--state-dir %s: %s", dir, strerror(errno));
    }
    gp_rdir_pid other;
    gp_diag why;
    int rc = gp_rdir_read_pid(dir, GP_RDIR_SUPERVISOR_PID, &other, &why);
    if (rc == 0 && other.pid != getpid() && gp_rdir_pid_alive(&other)) {
        return gp_diag_set(d, GP_ESTATE, "--state-dir %s: supervised by gpupool-run pid %ld", dir,
                           (long)other.pid);
    }
    /* gpupool-run writes it whole (replica_dir.h): one that cannot be read was tampered with,
     * and its supervisor may still run. */
    if (rc < 0 && rc != GP_ENOENT) {
        return gp_diag_set(d, GP_ESTATE, "--state-dir %s: %s: not taking the directory over", dir,
                           why.msg);
    }
    rc = gp_rdir_write_pid(dir, GP_RDIR_SUPERVISOR_PID, getpid(), d);
    /* Records of an earlier run in this directory are not this run's. */
    char path[4200];
    const char *stale[] = {GP_RDIR_STATUS, GP_RDIR_CHILD_PID, GP_RDIR_STOP_REASON};
    for (size_t i = 0; rc == 0 && i < sizeof(stale) / sizeof(stale[0]); i++) {
        if (gp_rdir_path(path, sizeof(path), dir, stale[i]) == 0 && unlink(path) < 0 &&
            errno != ENOENT) {
            rc = gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
        }
    }
    return rc;
}

/* The job's checkpoint directory: the spec's, else ROOT/JOB; made (with its parents) when
 * missing, and given to the job's user when newly made. The same for every placement of the
 * job, so a restarted job finds what it saved. */
static int prepare_checkpoint(sup *S, gp_diag *d)
{
    const gp_sup_user *u = &S->o->user;
    if (S->s->checkpoint_dir) {
        snprintf(S->checkpoint, sizeof(S->checkpoint), "%s", S->s->checkpoint_dir);
    } else {
        snprintf(S->checkpoint, sizeof(S->checkpoint), "%s/%lld", S->o->checkpoint_root,
                 (long long)S->s->job);
    }
    char path[sizeof(S->checkpoint)];
    snprintf(path, sizeof(path), "%s", S->checkpoint);
    for (char *p = path + 1;; p++) {
        bool last = *p == '\0';
        if (*p != '/' && !last) {
            continue;
        }
        *p = '\0';
        bool made = mkdir(path, last ? 0750 : 0755) == 0;
        if (!made && errno != EEXIST) {
            return gp_diag_set(d, GP_EIO, "checkpoint directory %s: %s", path, strerror(errno));
        }
        if (made && last && u->change && chown(path, u->host_uid, u->host_gid) < 0) {
            return gp_diag_set(d, GP_EIO, "checkpoint directory %s: chown: %s", path,
                               strerror(errno));
        }
        if (last) {
            return 0;
        }
        *p = '/';
    }
}

static int prepare_files(sup *S, gp_diag *d)
{
    const char *dir = S->o->state_dir;
    const gp_sup_user *u = &S->o->user;
    if (S->s->working_dir && !S->ctr) {
        snprintf(S->workdir, sizeof(S->workdir), "%s", S->s->working_dir);
    } else if (gp_rdir_path(S->workdir, sizeof(S->workdir), dir, GP_RDIR_WORK) < 0) {
        return gp_diag_set(d, GP_ERANGE, "--state-dir %s: path too long", dir);
    } else if (mkdir(S->workdir, 0755) < 0 && errno != EEXIST) {
        return gp_diag_set(d, GP_EIO, "%s: %s", S->workdir, strerror(errno));
    } else if (u->change && chown(S->workdir, u->host_uid, u->host_gid) < 0) {
        return gp_diag_set(d, GP_EIO, "%s: chown: %s", S->workdir, strerror(errno));
    }
    if (S->s->checkpoint_dir || S->o->checkpoint_root) {
        int rc = prepare_checkpoint(S, d);
        if (rc < 0) {
            return rc;
        }
    }
    if (S->s->nvolumes > 0 && !S->ctr) {
        S->mount_volumes = gp_volumes_mount_mode();
        gp_volumes_data_dir(S->mount_volumes, S->workdir, S->data_dir, sizeof(S->data_dir));
    }
    if (!gp_run_spec_is_gang(S->s)) {
        return 0;
    }
    gp_rdir_path(S->hostfile, sizeof(S->hostfile), dir, GP_RDIR_HOSTFILE);
    char *text = gp_run_hostfile_text(S->s);
    int rc = text ? gp_rdir_write_atomic(dir, GP_RDIR_HOSTFILE, text, strlen(text), d)
                  : gp_diag_set(d, GP_ENOMEM, "out of memory");
    free(text);
    return rc;
}

/* Fractional GPUs: the region libgpushare enforces the limits from (shim/region.h), owned by
 * us: the usage file writable by the job's group (the job's processes record their usage, mode
 * 0660), the limits file readable by it only (0640). In a sandbox the group is the container's
 * (gp_sup_user_resolve_sandbox), and the job's user is never ours: the library trusts the
 * limits only when the job's user does not own them. */
static int prepare_share(sup *S, gp_diag *d)
{
    const gp_run_spec *s = S->s;
    if (!s->fractional) {
        return 0;
    }
    gp_share_limits lim = {.ndevices = (uint32_t)s->ngpus,
                           .core_percent = (uint32_t)s->share_core_percent,
                           .core_policy =
                               s->share_core_strict ? GP_SHARE_CORE_STRICT : GP_SHARE_CORE_DEFAULT,
                           .on_error = GP_SHARE_FAIL_OPEN};
    for (int i = 0; i < s->ngpus && i < GP_SHARE_MAX_DEVICES; i++) {
        lim.mem_bytes[i] =
            s->share_mem_mib > 0 ? (uint64_t)s->share_mem_mib << 20 : GP_SHARE_UNLIMITED;
    }
    if (gp_rdir_path(S->share_region, sizeof(S->share_region), S->o->state_dir, GP_RDIR_SHARE) <
        0) {
        return gp_diag_set(d, GP_ERANGE, "--state-dir: path too long");
    }
    snprintf(S->share_limits, sizeof(S->share_limits), "%s" GP_SHARE_LIMITS_SUFFIX,
             S->share_region);
    /* In a user namespace the files belong to its root (the job's uid never is: it cannot
     * rewrite them), which the library inside sees as root. */
    const gp_sup_user *u = &S->o->user;
    uid_t owner = sup_userns(S) ? (uid_t)s->userns.base : geteuid();
    int rc =
        gp_share_region_create(S->share_region, &lim, owner, u->change ? u->host_gid : getegid());
    if (rc < 0) {
        return gp_diag_set(d, rc, "%s: cannot create the GPU share region", S->share_region);
    }
    const char *lib = S->o->share_library;
    S->preload = lib && lib[0] && access(lib, R_OK) == 0;
    if (!S->preload) {
        GP_LOG(GP_LOG_WARN, "run",
               "job=%lld replica=%d libgpushare not found (%s): GPU limits held by the agent's "
               "NVML watch only",
               (long long)s->job, s->replica, lib && lib[0] ? lib : "none given");
    }
    return 0;
}

static int prepare_env(sup *S, gp_diag *d)
{
    const gp_sup_user *u = &S->o->user;
    char **base = NULL;
    int rc =
        S->ctr ? sup_ctr_env_base(S, &base)
               : gp_run_env_base(S->o->environ_, u->name[0] ? u->name : NULL,
                                 u->home[0] ? u->home : NULL, u->shell[0] ? u->shell : NULL, &base);
    if (rc == 0) {
        gp_run_paths paths = {.hostfile = S->hostfile[0] ? S->hostfile : NULL,
                              .data_dir = S->data_dir[0] ? S->data_dir : NULL,
                              .share_library = S->preload ? S->o->share_library : NULL,
                              .share_region = S->share_region[0] ? S->share_region : NULL,
                              .checkpoint_dir = S->checkpoint[0] ? S->checkpoint : NULL};
        rc = gp_run_env_build(S->s, (const char *const *)base, S->ctr ? &S->layout.paths : &paths,
                              &S->env);
    }
    gp_run_env_free(base);
    return rc < 0 ? gp_diag_set(d, rc, "building the environment: out of memory") : 0;
}

static void prepare_cgroup(sup *S)
{
    char name[128];
    gp_diag cd;
    gp_diag_clear(&cd);
    snprintf(name, sizeof(name), "job%lld-r%d-e%lld-p%ld", (long long)S->s->job, S->s->replica,
             (long long)S->s->epoch, (long)getpid());
    if (gp_cgroup_create(&S->cg, S->o->cgroup_root, name, S->s->cpu_milli, S->s->memory_mib, &cd) <
        0) {
        GP_LOG(GP_LOG_WARN, "run", "no CPU/memory limits (cpu_milli=%lld memory_mib=%lld): %s",
               (long long)S->s->cpu_milli, (long long)S->s->memory_mib, cd.msg);
    }
}

static int prepare_logs(sup *S, gp_diag *d)
{
    static const char *const names[2] = {GP_RDIR_STDOUT, GP_RDIR_STDERR};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        if (gp_rdir_path(path, sizeof(path), S->o->state_dir, names[i]) < 0) {
            return gp_diag_set(d, GP_ERANGE, "--state-dir: path too long");
        }
        int rc = gp_logcap_open(&S->log[i], path, S->o->log_max, d);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

/* ---- launching ---- */

void sup_report_exit(int fd, int step, int arg)
{
    launch_report r = {step, errno, arg};
    ssize_t n = write(fd, &r, sizeof(r));
    (void)n;
    _exit(127);
}

static void cloexec_from(int lowest)
{
    if (close_range((unsigned)lowest, ~0U, CLOSE_RANGE_CLOEXEC) == 0) {
        return;
    }
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = lowest; fd < (max > 0 && max < 65536 ? max : 65536); fd++) {
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
}

/* The child between fork and exec. fds: stdout and stderr write ends, go (read), report (write).
 * The supervisor is single-threaded, so calling non-async-signal-safe functions here is fine. */
static void child_main(const sup *S, const int out[2], int go, int report)
{
    setsid();
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++) {
        signal(sig, SIG_DFL); /* also undoes an ignored SIGPIPE inherited from the agent */
    }
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out[0], 1) < 0 || dup2(out[1], 2) < 0) {
        sup_report_exit(report, REPORT_STDIO, 0);
    }
    cloexec_from(3);
    char c;
    if (read(go, &c, 1) != 1) { /* the supervisor died before moving us into the cgroup */
        _exit(127);
    }
    int vol = -1;
    if (S->s->nvolumes > 0 && (S->mount_volumes ? gp_volumes_mount(S->s, &vol)
                                                : gp_volumes_link(S->s, S->data_dir, &vol)) < 0) {
        sup_report_exit(report, REPORT_VOLUME, vol);
    }
    int ns = S->s->own_netns ? gp_netns_unshare() : 0;
    if (ns < 0) { /* never on the node's network: it must not be reachable there */
        errno = -ns;
        sup_report_exit(report, REPORT_NETNS, 0);
    }
    const gp_sup_user *u = &S->o->user;
    if (u->change &&
        (initgroups(u->name, u->gid) < 0 || setgid(u->gid) < 0 || setuid(u->uid) < 0)) {
        sup_report_exit(report, REPORT_USER, 0);
    }
    if (chdir(S->workdir) < 0) {
        sup_report_exit(report, REPORT_CHDIR, 0);
    }
    environ = S->env; /* execvp looks the command up in the job's PATH */
    execvp(S->s->argv[0], S->s->argv);
    sup_report_exit(report, REPORT_EXEC, 0);
}

void sup_close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
    }
    *fd = -1;
}

/* Records a start that failed in the child (r) as exited with code 127. */
int sup_record_failed_start(sup *S, const launch_report *r, gp_diag *d)
{
    const char *what = r->step == REPORT_EXEC     ? "exec"
                       : r->step == REPORT_CHDIR  ? "chdir"
                       : r->step == REPORT_USER   ? "switching to user"
                       : r->step == REPORT_VOLUME ? (S->mount_volumes ? "mounting" : "linking")
                       : r->step == REPORT_NETNS  ? "network namespace"
                                                  : "redirecting stdio";
    char vol[1400];
    const gp_run_volume *v = r->step == REPORT_VOLUME && r->arg >= 0 && r->arg < S->s->nvolumes
                                 ? &S->s->volumes[r->arg]
                                 : NULL;
    if (v) {
        snprintf(vol, sizeof(vol), "volume %s (%.1024s)", v->name, v->path);
    } else {
        snprintf(vol, sizeof(vol), "the volumes' directory %.1024s", S->data_dir);
    }
    const char *exec = S->ctr ? S->o->runtime->podman : S->s->argv[0];
    const char *arg = r->step == REPORT_EXEC     ? exec
                      : r->step == REPORT_CHDIR  ? S->workdir
                      : r->step == REPORT_USER   ? S->o->user.name
                      : r->step == REPORT_VOLUME ? vol
                                                 : "";
    snprintf(S->st.error, sizeof(S->st.error), "%s %.300s: %s", what, arg, strerror(r->err));
    snprintf(S->st.reason, sizeof(S->st.reason), "could not start: %.200s", S->st.error);
    S->st.state = GP_RDIR_EXITED;
    S->st.exit_code = 127;
    S->st.start_ms = S->st.end_ms = sup_now_ms(CLOCK_REALTIME);
    char line[700];
    snprintf(line, sizeof(line), "gpupool-run: %s\n", S->st.error);
    sup_log_line(S, line);
    GP_LOG(GP_LOG_WARN, "run", "job=%lld replica=%d %s", (long long)S->s->job, S->s->replica,
           S->st.reason);
    return gp_rdir_write_status(S->o->state_dir, &S->st, d);
}

void sup_log_line(sup *S, const char *line)
{
    gp_diag ld;
    gp_logcap_write(&S->log[1], line, strlen(line), sup_now_ms(CLOCK_REALTIME), &ld);
}

/* Waits for the child's verdict: 0 once it exec'd, 1 when it failed and that was recorded. */
int sup_await_exec(sup *S, int report, gp_diag *d)
{
    launch_report r;
    ssize_t n;
    while ((n = read(report, &r, sizeof(r))) < 0 && errno == EINTR) {
    }
    if (n == 0) {
        return 0;
    }
    if (n != (ssize_t)sizeof(r)) {
        r.step = REPORT_EXEC;
        r.err = EIO;
    }
    while (waitpid(S->pid, &S->wstatus, 0) < 0 && errno == EINTR) {
    }
    S->leader_done = true;
    int rc = sup_record_failed_start(S, &r, d);
    return rc < 0 ? rc : 1;
}

/* Forks and execs the job. 0: running; 1: could not start (recorded); < 0: error. */
static int launch(sup *S, gp_diag *d)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, go[2] = {-1, -1}, rep[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 ||
        pipe2(rep, O_CLOEXEC) < 0 || (S->pid = fork()) < 0) {
        int e = errno;
        int *all[] = {&out[0], &out[1], &err[0], &err[1], &go[0], &go[1], &rep[0], &rep[1]};
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
            sup_close_fd(all[i]);
        }
        return gp_diag_set(d, GP_EIO, "starting the job: %s", strerror(e));
    }
    if (S->pid == 0) {
        const int ends[2] = {out[1], err[1]};
        child_main(S, ends, go[0], rep[1]);
    }
    sup_close_fd(&out[1]);
    sup_close_fd(&err[1]);
    sup_close_fd(&go[0]);
    sup_close_fd(&rep[1]);
    S->pipe_fd[0] = out[0];
    S->pipe_fd[1] = err[0];
    for (int i = 0; i < 2; i++) {
        fcntl(S->pipe_fd[i], F_SETFL, O_NONBLOCK);
    }
    gp_diag cd;
    if (S->cg.version != GP_CGROUP_NONE && gp_cgroup_add(&S->cg, S->pid, &cd) < 0) {
        GP_LOG(GP_LOG_WARN, "run", "job not limited: %s", cd.msg);
    }
    ssize_t w = write(go[1], "g", 1);
    (void)w;
    sup_close_fd(&go[1]);
    int rc = sup_await_exec(S, rep[0], d);
    sup_close_fd(&rep[0]);
    return rc;
}

static int record_running(sup *S, gp_diag *d)
{
    uint64_t start = 0;
    gp_rdir_proc_start(S->pid, &start, NULL);
    S->st.state = GP_RDIR_RUNNING;
    S->st.child.pid = S->pid;
    S->st.child.start = start;
    S->st.start_ms = sup_now_ms(CLOCK_REALTIME);
    snprintf(S->st.reason, sizeof(S->st.reason), "running");
    if (S->ctr) {
        snprintf(S->st.container, sizeof(S->st.container), "%s", S->name);
    }
    int rc = gp_rdir_write_pid(S->o->state_dir, GP_RDIR_CHILD_PID, S->pid, d);
    rc = rc ? rc : gp_rdir_write_status(S->o->state_dir, &S->st, d);
    GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d started pid=%ld", (long long)S->s->job,
           S->s->replica, (long)S->pid);
    return rc;
}

/* ---- waiting ---- */

/* Copies what the job wrote on pipe i into its log; closes the pipe at EOF. A log that cannot be
 * written is reported once and its output discarded, so the job never blocks on a full pipe. */
static void pump(sup *S, int i)
{
    char buf[65536];
    ssize_t n = read(S->pipe_fd[i], buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        sup_close_fd(&S->pipe_fd[i]);
        return;
    }
    gp_diag ld;
    if (n > 0 && !S->log_broken[i] &&
        gp_logcap_write(&S->log[i], buf, (size_t)n, sup_now_ms(CLOCK_REALTIME), &ld) < 0) {
        GP_LOG(GP_LOG_ERROR, "run", "job output discarded from now on: %s", ld.msg);
        S->log_broken[i] = true;
    }
}

/* Reaps every child that has exited: the leader, and orphans re-parented to us. */
void sup_reap(sup *S)
{
    int ws;
    pid_t p;
    while ((p = waitpid(-1, &ws, WNOHANG)) > 0) {
        if (p == S->pid && !S->leader_done) {
            S->leader_done = true;
            S->wstatus = ws;
            S->st.end_ms = sup_now_ms(CLOCK_REALTIME);
        } else if (p == S->stop_pid) {
            S->stop_pid = 0;
        }
    }
}

static void begin_stop(sup *S, int sig)
{
    if (S->stopping) {
        return;
    }
    S->stopping = true;
    S->deadline = sup_now_ms(CLOCK_MONOTONIC) + (int64_t)S->o->grace_s * 1000;
    if (S->ctr) {
        /* podman stop escalates after the grace period itself; ours is the backstop */
        S->deadline += CTR_STOP_SLACK_MS;
        GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d stop (signal %d): podman stop %s",
               (long long)S->s->job, S->s->replica, sig, S->name);
        if (S->pid > 0) {
            sup_ctr_stop(S);
        }
        return;
    }
    GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d stop (signal %d): SIGTERM to group %ld",
           (long long)S->s->job, S->s->replica, sig, (long)S->pid);
    kill(-S->pid, SIGTERM);
}

static void escalate(sup *S)
{
    if (S->escalated) {
        return;
    }
    S->escalated = true;
    GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d grace of %d s over: SIGKILL to %s %ld",
           (long long)S->s->job, S->s->replica, S->o->grace_s, S->ctr ? S->name : "group",
           (long)S->pid);
    if (S->ctr) {
        sup_ctr_escalate(S);
        return;
    }
    kill(-S->pid, SIGKILL);
}

static void read_signals(sup *S)
{
    struct signalfd_siginfo si;
    while (read(S->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGCHLD) {
            sup_reap(S);
        } else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
            begin_stop(S, (int)si.ssi_signo);
        }
    }
    sup_reap(S); /* SIGCHLDs coalesce; an extra look is cheap */
}

/* One round of poll over the signals and the pipes, for at most timeout_ms (-1: no limit). */
void sup_poll_once(sup *S, int timeout_ms)
{
    struct pollfd p[3] = {
        {S->sigfd, POLLIN, 0}, {S->pipe_fd[0], POLLIN, 0}, {S->pipe_fd[1], POLLIN, 0}};
    if (poll(p, 3, timeout_ms) <= 0) {
        return;
    }
    if (p[0].revents) {
        read_signals(S);
    }
    for (int i = 0; i < 2; i++) {
        if (p[i + 1].revents && S->pipe_fd[i] >= 0) {
            pump(S, i);
        }
    }
}

static int until(int64_t deadline)
{
    int64_t left = deadline - sup_now_ms(CLOCK_MONOTONIC);
    return left <= 0 ? 0 : left > 60000 ? 60000 : (int)left;
}

/* Until the leader has exited, escalating to SIGKILL when a stop outlasts the grace period. */
static void wait_leader(sup *S)
{
    while (!S->leader_done) {
        bool waiting_kill = S->stopping && !S->escalated;
        if (waiting_kill && until(S->deadline) == 0) {
            escalate(S);
            continue;
        }
        if (waiting_kill && S->ctr && S->stop_pid == 0) {
            sup_ctr_stop(S); /* the container did not run yet when asked: ask again */
        }
        int wait = waiting_kill ? until(S->deadline) : -1;
        sup_poll_once(S, waiting_kill && S->ctr && wait > 200 ? 200 : wait);
    }
}

/* Sends SIGKILL to every child re-parented to us (descendants that left the job's group). */
void sup_kill_orphans(void)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
    FILE *f = fopen(path, "re");
    long pid;
    while (f && fscanf(f, "%ld", &pid) == 1) {
        kill((pid_t)pid, SIGKILL);
    }
    if (f) {
        fclose(f);
    }
}

static void drain(sup *S);

/* After the leader: the rest of the group (grace left after a stop, none otherwise), the cgroup,
 * the orphans; then the pipes until EOF or DRAIN_MS. */
static void clean_up_group(sup *S)
{
    if (S->ctr) {
        sup_ctr_clean_up(S);
        drain(S);
        return;
    }
    if (S->stopping && !S->escalated) {
        while (kill(-S->pid, 0) == 0 && until(S->deadline) > 0) {
            sup_poll_once(S, until(S->deadline) < 50 ? until(S->deadline) : 50);
            sup_reap(S);
        }
    }
    if (kill(-S->pid, 0) == 0) {
        if (S->stopping) {
            escalate(S);
        } else {
            GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d leader exited: SIGKILL to group %ld",
                   (long long)S->s->job, S->s->replica, (long)S->pid);
            kill(-S->pid, SIGKILL);
        }
    }
    gp_cgroup_kill(&S->cg);
    sup_kill_orphans();
    drain(S);
}

/* SIGKILL is not instant: waits (reaping re-parented ones) until the group is really gone and the
 * pipes are closed, at most DRAIN_MS, so that the final record never precedes the end of a
 * process of the job. */
static void drain(sup *S)
{
    int64_t end = sup_now_ms(CLOCK_MONOTONIC) + DRAIN_MS;
    for (;;) {
        sup_reap(S);
        bool open = S->pipe_fd[0] >= 0 || S->pipe_fd[1] >= 0, alive = kill(-S->pid, 0) == 0;
        if ((!open && !alive) || until(end) == 0) {
            break;
        }
        sup_poll_once(S, alive ? (until(end) < 10 ? until(end) : 10) : until(end));
    }
}

static int record_end(sup *S, gp_diag *d)
{
    int ws = S->wstatus;
    S->st.state = S->stopping ? GP_RDIR_KILLED : GP_RDIR_EXITED;
    S->st.signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    S->st.exit_code = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
    if (S->ctr) {
        sup_ctr_exit(S, &S->st.exit_code, &S->st.signal);
    }
    S->st.escalated = S->escalated;
    char how[96];
    if (S->st.signal) {
        snprintf(how, sizeof(how), "ended by signal %d (%s)", S->st.signal,
                 strsignal(S->st.signal));
    } else {
        snprintf(how, sizeof(how), "exited with code %d", S->st.exit_code);
    }
    char stopped[200];
    if (S->escalated) {
        snprintf(stopped, sizeof(stopped),
                 "stopped: SIGTERM, then SIGKILL after the %d s grace period; %s", S->o->grace_s,
                 how);
    } else {
        snprintf(stopped, sizeof(stopped), "stopped: SIGTERM; %s within the %d s grace period", how,
                 S->o->grace_s);
    }
    /* Why the agent stopped it, when it said so (replica_dir.h: stop-reason). */
    gp_diag rd;
    if (S->stopping && gp_rdir_read_line(S->o->state_dir, GP_RDIR_STOP_REASON, S->st.stop_reason,
                                         sizeof(S->st.stop_reason), &rd) == GP_EIO) {
        GP_LOG(GP_LOG_WARN, "run", "the stop reason is unknown: %s", rd.msg);
    }
    if (!S->stopping && S->st.error[0]) {
        snprintf(S->st.reason, sizeof(S->st.reason), "could not start: %.200s", S->st.error);
    } else if (!S->stopping) {
        snprintf(S->st.reason, sizeof(S->st.reason), "%s", how);
    } else if (S->st.stop_reason[0]) {
        snprintf(S->st.reason, sizeof(S->st.reason), "%.150s (%.100s)", S->st.stop_reason, stopped);
    } else {
        snprintf(S->st.reason, sizeof(S->st.reason), "%s", stopped);
    }
    GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d state=%s exit_code=%d: %s",
           (long long)S->s->job, S->s->replica, gp_rdir_state_name(S->st.state), S->st.exit_code,
           S->st.reason);
    return gp_rdir_write_status(S->o->state_dir, &S->st, d);
}

/* ---- the whole ---- */

/* A replica this supervisor cannot run: an image without a sandbox (exit 125, so that the
 * controller fails the job rather than retry it), a sandbox without podman (127). 1 when it
 * was recorded as such, 0 to go on. */
static int refuse(sup *S, gp_diag *d)
{
    char why[600] = "";
    int code = 0;
    if (!S->ctr && S->s->image) {
        code = 125;
        snprintf(why, sizeof(why),
                 "ImagePullFailed: this node runs no containers (gpupool-run --runtime none)");
    } else if (S->ctr && !S->o->runtime->ok) {
        code = 127;
        snprintf(why, sizeof(why), "no container runtime: %.500s", S->o->runtime->why);
    }
    if (!code) {
        return 0;
    }
    snprintf(S->st.error, sizeof(S->st.error), "%s", why);
    snprintf(S->st.reason, sizeof(S->st.reason), "%s%.200s", code == 127 ? "could not start: " : "",
             why);
    S->st.state = GP_RDIR_EXITED;
    S->st.exit_code = code;
    S->st.start_ms = S->st.end_ms = sup_now_ms(CLOCK_REALTIME);
    char line[700];
    snprintf(line, sizeof(line), "gpupool-run: %s\n", why);
    sup_log_line(S, line);
    int rc = gp_rdir_write_status(S->o->state_dir, &S->st, d);
    return rc < 0 ? rc : 1;
}

static int supervise(sup *S, gp_diag *d)
{
    int rc = setup_signals(S, d);
    rc = rc ? rc : claim_dir(S, d);
    rc = rc ? rc : prepare_files(S, d);
    rc = rc ? rc : prepare_share(S, d);
    rc = rc ? rc : (S->ctr ? sup_ctr_prepare(S, d) : 0);
    rc = rc ? rc : prepare_env(S, d);
    rc = rc ? rc : prepare_logs(S, d);
    if (rc < 0) {
        return rc;
    }
    if (!S->ctr) {
        prepare_cgroup(S);
        gp_cgroup_describe(&S->cg, S->st.cgroup, sizeof(S->st.cgroup));
    }
    rc = refuse(S, d);
    rc = rc ? rc : S->ctr ? sup_ctr_pull(S, d) : 0;
    rc = rc ? rc : S->ctr ? sup_ctr_launch(S, d) : launch(S, d);
    if (rc == 0) {
        rc = record_running(S, d);
        if (rc < 0 && S->ctr) { /* no record, no supervision: do not leave the job running */
            sup_ctr_escalate(S);
        } else if (rc < 0) {
            kill(-S->pid, SIGKILL);
        }
        wait_leader(S);
        clean_up_group(S);
        int end = record_end(S, d);
        rc = rc ? rc : end;
    }
    gp_diag cd;
    if (gp_cgroup_remove(&S->cg, &cd) < 0) {
        GP_LOG(GP_LOG_WARN, "run", "%s", cd.msg);
    }
    return rc < 0 ? rc : 0;
}

int gp_sup_run(const gp_sup_opts *o, gp_diag *d)
{
    sup S;
    memset(&S, 0, sizeof(S));
    S.o = o;
    S.s = o->spec;
    S.sigfd = S.pipe_fd[0] = S.pipe_fd[1] = -1;
    S.log[0].fd = S.log[1].fd = -1;
    S.st.job = o->spec->job;
    S.st.replica = o->spec->replica;
    S.st.epoch = o->spec->epoch;
    S.st.supervisor_pid = getpid();
    S.ctr = o->runtime != NULL;
    int rc = supervise(&S, d);
    sup_close_fd(&S.pipe_fd[0]);
    sup_close_fd(&S.pipe_fd[1]);
    sup_close_fd(&S.sigfd);
    gp_logcap_close(&S.log[0]);
    gp_logcap_close(&S.log[1]);
    gp_run_env_free(S.env);
    gp_run_env_free(S.env_args);
    if (S.auth) {
        explicit_bzero(S.auth, strlen(S.auth));
        free(S.auth);
    }
    return rc;
}
