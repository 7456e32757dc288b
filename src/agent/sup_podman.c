/*
 * The supervisor's sandbox (supervise.h, sandbox.h): the image pull, `podman run` as the job's
 * leader, stops through `podman stop`, and the container's removal. The loop that waits is
 * supervise.c's; this file does what differs for a container.
 */
#define _GNU_SOURCE /* pipe2, explicit_bzero, realpath */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/cdi.h"
#include "agent/cmd.h"
#include "agent/pull.h"
#include "agent/seccomp.h"
#include "agent/sup_int.h"
#include "base/log.h"

#define ENV_FILE     "env"           /* the job's variables, for podman (0600) */
#define PRELOAD_FILE "ld.so.preload" /* what a fraction's /etc/ld.so.preload says */
#define PULL_TMP     "pull-tmp"      /* podman's TMPDIR while it pulls: its blobs land here */
#define PULL_AUTH    "pull-auth.json"
#define PULL_LOG     "pull.log"

static int path_in(const sup *S, const char *name, char *buf, size_t cap)
{
    return gp_rdir_path(buf, cap, S->o->state_dir, name);
}

/* ---- preparing ---- */

/* The credentials for the pull: the spec's, else the agent's file (read once, then removed, so
 * that they stay on disk no longer than the supervisor needs them). */
static void take_auth(sup *S)
{
    char path[4200], *text = NULL;
    json_t *doc = NULL;
    gp_diag d;
    if (S->s->auth_registry || path_in(S, GP_RDIR_AUTH, path, sizeof(path)) < 0) {
        return;
    }
    int rc = gp_rdir_read_json(S->o->state_dir, GP_RDIR_AUTH, 65536, &doc, &d);
    unlink(path);
    if (rc == 0) {
        text = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
    } else if (rc != GP_ENOENT) {
        GP_LOG(GP_LOG_WARN, "run", "%s: not used: %s", GP_RDIR_AUTH, d.msg);
    }
    S->auth = text;
}

static int write_file(const char *path, const char *text, mode_t mode, gp_diag *d)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
    size_t len = strlen(text);
    bool ok = fd >= 0 && fchmod(fd, mode) == 0 && write(fd, text, len) == (ssize_t)len;
    int e = errno;
    if (fd >= 0) {
        close(fd);
    }
    return ok ? 0 : gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(e));
}

int sup_ctr_prepare(sup *S, gp_diag *d)
{
    const gp_run_spec *s = S->s;
    char *abs = realpath(S->o->state_dir, NULL);
    gp_sandbox_name(s->job, s->replica, s->epoch, abs ? abs : S->o->state_dir, S->name);
    free(abs);
    snprintf(S->cgroup_name, sizeof(S->cgroup_name), "job%lld-r%d-e%lld-p%ld", (long long)s->job,
             s->replica, (long long)s->epoch, (long)getpid());
    snprintf(S->cgroup_parent, sizeof(S->cgroup_parent), "/gpupool/%s", S->cgroup_name);
    gp_cgroup_describe_named(S->o->cgroup_root, S->cgroup_name, S->st.cgroup, sizeof(S->st.cgroup));
    S->mount_volumes = true; /* for the messages: podman mounts them */
    if (S->preload) {
        int rc = path_in(S, PRELOAD_FILE, S->preload_file, sizeof(S->preload_file));
        rc = rc ? gp_diag_set(d, rc, "--state-dir: path too long")
                : write_file(S->preload_file, GP_SANDBOX_SHARE_LIBRARY "\n", 0644, d);
        if (rc < 0) {
            return rc;
        }
    }
    take_auth(S);
    gp_sandbox_host h = {.workdir = S->workdir,
                         .checkpoint = S->checkpoint[0] ? S->checkpoint : NULL,
                         .hostfile = S->hostfile[0] ? S->hostfile : NULL,
                         .share_region = S->share_region[0] ? S->share_region : NULL,
                         .share_limits = S->share_limits[0] ? S->share_limits : NULL,
                         .share_library = S->preload ? S->o->share_library : NULL,
                         .preload = S->preload ? S->preload_file : NULL};
    return gp_sandbox_layout_make(s, &h, &S->layout, d);
}

int sup_ctr_env_base(sup *S, char ***out)
{
    /* A job over the host root gets the host's PATH and locale (not its TMPDIR: /tmp is its
     * own); an image job only what its image says. */
    char *none[] = {NULL}, *host[8] = {NULL};
    int n = 0;
    static const char *const keep[] = {"PATH=", "LANG=", "LC_ALL=", "TZ="};
    for (int i = 0; S->o->environ_ && S->o->environ_[i] && n < 7; i++) {
        for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++) {
            if (strncmp(S->o->environ_[i], keep[k], strlen(keep[k])) == 0) {
                host[n++] = S->o->environ_[i];
            }
        }
    }
    const gp_sup_user *u = &S->o->user;
    if (S->s->image) {
        return gp_run_env_base(none, NULL, NULL, NULL, out);
    }
    return gp_run_env_base(host, u->name[0] ? u->name : NULL, S->layout.workdir,
                           u->shell[0] ? u->shell : NULL, out);
}

/* ---- pulling ---- */

static void remove_tree(const char *path, int depth)
{
    DIR *dir = depth < 16 ? opendir(path) : NULL;
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char sub[4200];
        struct stat sb;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
            continue;
        }
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        if (lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            remove_tree(sub, depth + 1);
        } else {
            unlink(sub);
        }
    }
    if (dir) {
        closedir(dir);
    }
    rmdir(path);
}

static void pull_record(sup *S, int64_t done, int64_t total, int64_t start_ms)
{
    json_t *o =
        json_pack("{s:s, s:I, s:I, s:I}", "image", S->s->image, "done_bytes", (json_int_t)done,
                  "total_bytes", (json_int_t)total, "start_ms", (json_int_t)start_ms);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    gp_diag d;
    if (text && gp_rdir_write_atomic(S->o->state_dir, GP_RDIR_PULL, text, strlen(text), &d) < 0) {
        GP_LOG(GP_LOG_WARN, "run", "%s", d.msg);
    }
    free(text);
    json_decref(o);
}

/* The final record of a replica that never ran: exit 125 and why (reason starts with
 * GP_PULL_REASON_PREFIX for a failed pull), or killed when it was stopped meanwhile. */
static int end_before_run(sup *S, const char *why, gp_diag *d)
{
    S->st.state = S->stopping ? GP_RDIR_KILLED : GP_RDIR_EXITED;
    S->st.exit_code = S->stopping ? 128 + SIGTERM : 125;
    S->st.signal = S->stopping ? SIGTERM : 0;
    S->st.start_ms = S->st.end_ms = sup_now_ms(CLOCK_REALTIME);
    snprintf(S->st.error, sizeof(S->st.error), "%s", S->stopping ? "" : why);
    snprintf(S->st.reason, sizeof(S->st.reason), "%.255s", why);
    char line[700];
    snprintf(line, sizeof(line), "gpupool-run: %.600s\n", why);
    sup_log_line(S, line);
    GP_LOG(GP_LOG_WARN, "run", "job=%lld replica=%d %s", (long long)S->s->job, S->s->replica,
           S->st.reason);
    int rc = gp_rdir_write_status(S->o->state_dir, &S->st, d);
    return rc < 0 ? rc : 1;
}

/* The environment of `podman pull`: ours with TMPDIR its own directory. NULL-terminated, the
 * strings borrowed (tmp too); free the array only. */
static char **pull_env(const sup *S, char *tmp)
{
    int n = 0;
    while (S->o->environ_ && S->o->environ_[n]) {
        n++;
    }
    char **env = calloc((size_t)n + 2, sizeof(char *));
    int k = 0;
    for (int i = 0; env && i < n; i++) {
        if (strncmp(S->o->environ_[i], "TMPDIR=", 7) != 0) {
            env[k++] = S->o->environ_[i];
        }
    }
    if (env) {
        env[k] = tmp;
    }
    return env;
}

/* Waits for the pull (pid) while watching its progress and the stop signals. Returns its wait
 * status; a stop kills it (S->stopping set). */
static int watch_pull(sup *S, pid_t pid, const char *tmpdir, int64_t total, int64_t start_ms)
{
    int ws = 0;
    int64_t shown = 0;
    for (bool done = false; !done;) {
        struct pollfd p = {S->sigfd, POLLIN, 0};
        if (poll(&p, 1, 250) > 0) {
            struct signalfd_siginfo si;
            while (read(S->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if ((si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) && !S->stopping) {
                    S->stopping = true;
                    GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d stop while pulling",
                           (long long)S->s->job, S->s->replica);
                    kill(-pid, SIGKILL);
                }
            }
        }
        done = waitpid(pid, &ws, WNOHANG) == pid;
        int64_t now = gp_pull_dir_bytes(tmpdir);
        if (!done && now != shown) {
            pull_record(S, now, total, start_ms);
            shown = now;
        }
    }
    return ws;
}

/* podman's auth file for the pull from the credentials (the spec's or the agent's file), mode
 * 0600 at path; *used false when there are none. */
static int write_authfile(sup *S, const char *path, bool *used, gp_diag *d)
{
    char *auth = NULL;
    if (S->auth) {
        gp_run_spec creds = {0};
        gp_diag ad;
        if (gp_run_spec_auth_parse(S->auth, &creds, &ad) == 0) {
            auth = gp_pull_authfile_text(&creds);
        } else {
            GP_LOG(GP_LOG_WARN, "run", "%s: not used: %s", GP_RDIR_AUTH, ad.msg);
        }
        free(creds.auth_registry);
        free(creds.auth_username);
        explicit_bzero(creds.auth_password, creds.auth_password ? strlen(creds.auth_password) : 0);
        free(creds.auth_password);
    } else {
        auth = gp_pull_authfile_text(S->s);
    }
    *used = auth != NULL;
    int rc = auth ? write_file(path, auth, 0600, d) : 0;
    if (auth) {
        explicit_bzero(auth, strlen(auth));
        free(auth);
    }
    return rc;
}

/* The last bytes of the file at path (at most cap - 1), NUL-terminated into buf. */
static void tail_of(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
    off_t from = size > (off_t)cap - 1 ? size - (off_t)cap + 1 : 0;
    ssize_t got = fd >= 0 ? pread(fd, buf, cap - 1, from) : 0;
    buf[got > 0 ? got : 0] = '\0';
    if (fd >= 0) {
        close(fd);
    }
}

/* Starts `podman pull` (with the auth file when given), its output to logpath, podman's
 * temporary files in tmpdir. The pid, or -1 with errno set. */
static pid_t spawn_pull(sup *S, const char *authfile, const char *tmpdir, const char *logpath)
{
    char tmpvar[4300];
    snprintf(tmpvar, sizeof(tmpvar), "TMPDIR=%s", tmpdir);
    char **env = pull_env(S, tmpvar);
    char *argv[8] = {(char *)S->o->runtime->podman, "pull"};
    int n = 2;
    if (authfile) {
        argv[n++] = "--authfile";
        argv[n++] = (char *)authfile;
    }
    argv[n++] = S->s->image;
    argv[n] = NULL;
    int logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pid_t pid = env ? gp_cmd_spawn(argv, env, logfd, logfd) : -1;
    int e = errno;
    if (logfd >= 0) {
        close(logfd);
    }
    free(env);
    errno = e;
    return pid;
}

/* Runs `podman pull` (pull.h): 0 pulled; 1 ended (failed or stopped: recorded); < 0 error. */
static int run_pull(sup *S, gp_diag *d)
{
    char tmpdir[4200], authfile[4200], logpath[4200], record[4200];
    if (path_in(S, PULL_TMP, tmpdir, sizeof(tmpdir)) < 0 ||
        path_in(S, PULL_AUTH, authfile, sizeof(authfile)) < 0 ||
        path_in(S, PULL_LOG, logpath, sizeof(logpath)) < 0 ||
        path_in(S, GP_RDIR_PULL, record, sizeof(record)) < 0) {
        return gp_diag_set(d, GP_ERANGE, "--state-dir: path too long");
    }
    remove_tree(tmpdir, 0);
    if (mkdir(tmpdir, 0700) < 0) {
        return gp_diag_set(d, GP_EIO, "%s: %s", tmpdir, strerror(errno));
    }
    bool auth = false;
    int rc = write_authfile(S, authfile, &auth, d);
    if (rc < 0) {
        return rc;
    }
    const char *af = auth ? authfile : NULL;
    int64_t start_ms = sup_now_ms(CLOCK_REALTIME), total = gp_pull_remote_bytes(S->s->image, af);
    pull_record(S, 0, total, start_ms);
    GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d pulling %s (%lld bytes)", (long long)S->s->job,
           S->s->replica, S->s->image, (long long)total);
    pid_t pid = spawn_pull(S, af, tmpdir, logpath);
    int e = errno;
    int ws = pid > 0 ? watch_pull(S, pid, tmpdir, total, start_ms) : 0;
    unlink(authfile);
    remove_tree(tmpdir, 0);
    unlink(record);
    if (pid < 0) {
        return gp_diag_set(d, GP_EIO, "podman pull: %s", strerror(e));
    }
    if (S->stopping || (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) {
        return S->stopping ? 1 : 0;
    }
    char text[4096], msg[600], why[700];
    tail_of(logpath, text, sizeof(text));
    gp_pull_message(text, msg, sizeof(msg));
    snprintf(why, sizeof(why), GP_PULL_REASON_PREFIX "%s", msg);
    return end_before_run(S, why, d);
}

int sup_ctr_pull(sup *S, gp_diag *d)
{
    const gp_run_spec *s = S->s;
    if (!s->image) {
        return 0;
    }
    snprintf(S->st.image, sizeof(S->st.image), "%s", s->image);
    const char *podman = S->o->runtime->podman;
    bool present = s->pull_policy != GP_RUN_PULL_ALWAYS && gp_pull_present(podman, s->image);
    int rc = 0;
    if (s->pull_policy == GP_RUN_PULL_NEVER && !present) {
        char why[700];
        snprintf(why, sizeof(why),
                 GP_PULL_REASON_PREFIX "%.500s is not on this node and image_pull_policy is Never",
                 s->image);
        rc = end_before_run(S, why, d);
    } else if (gp_pull_needed(s->pull_policy, present)) {
        rc = run_pull(S, d);
    }
    if (rc == 1 && S->stopping && S->st.state == GP_RDIR_NONE) {
        char why[700];
        snprintf(why, sizeof(why), "stopped while pulling %.500s", s->image);
        rc = end_before_run(S, why, d);
    }
    if (rc == 0) {
        gp_pull_image_id(podman, s->image, S->st.image_id, sizeof(S->st.image_id));
    }
    return rc;
}

/* ---- running ---- */

/* The env file: every variable whose value it can carry; the others go to S->env_args. */
static int write_env(sup *S, gp_diag *d)
{
    int rc = path_in(S, ENV_FILE, S->env_file, sizeof(S->env_file));
    if (rc < 0) {
        return gp_diag_set(d, rc, "--state-dir: path too long");
    }
    int fd = open(S->env_file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    int n = 0, k = 0;
    while (S->env && S->env[n]) {
        n++;
    }
    S->env_args = calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; f && S->env_args && i < n; i++) {
        if (!gp_sandbox_env_kept(&S->layout, S->env[i])) {
            GP_LOG(GP_LOG_WARN, "run", "job=%lld replica=%d %.*s: not given to a fraction's job",
                   (long long)S->s->job, S->s->replica, (int)strcspn(S->env[i], "="), S->env[i]);
        } else if (gp_sandbox_env_file_ok(S->env[i])) {
            fprintf(f, "%s\n", S->env[i]);
        } else if (!(S->env_args[k++] = strdup(S->env[i]))) {
            break;
        }
    }
    bool ok = f && S->env_args && fflush(f) == 0 && fsync(fd) == 0;
    int e = errno;
    if (f) {
        fclose(f);
    } else if (fd >= 0) {
        close(fd);
    }
    return ok ? 0 : gp_diag_set(d, GP_EIO, "%s: %s", S->env_file, strerror(e));
}

/* A host directory the job needs that is missing fails the start as it would have outside
 * (exit 127 naming it). 1 when it did. */
static int check_dirs(sup *S, gp_diag *d, int *rc)
{
    struct stat sb;
    for (int i = 0; i < S->s->nvolumes; i++) {
        if (stat(S->s->volumes[i].path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            launch_report r = {REPORT_VOLUME, errno ? errno : ENOTDIR, i};
            errno = 0;
            *rc = sup_record_failed_start(S, &r, d);
            return 1;
        }
    }
    const char *wd = S->s->working_dir;
    if (!S->s->image && wd && (stat(wd, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        snprintf(S->workdir, sizeof(S->workdir), "%s", wd); /* the message names it */
        launch_report r = {REPORT_CHDIR, errno ? errno : ENOTDIR, 0};
        *rc = sup_record_failed_start(S, &r, d);
        return 1;
    }
    return 0;
}

/* The podman options giving the container exactly its GPUs through CDI, when the agent says the
 * node's spec names them where podman reads it (cdi_devices); otherwise none, and a job with
 * GPUs is told in the log that it sees none. */
static int gpu_devices(const sup *S, gp_cdi_args *out, gp_diag *d)
{
    const gp_run_spec *s = S->s;
    if (s->ngpus > 0 && !s->cdi_devices) {
        GP_LOG(GP_LOG_WARN, "run",
               "job=%lld replica=%d: %d GPU(s) but no CDI spec podman reads (cdi_devices): the "
               "container gets no GPU device",
               (long long)s->job, s->replica, s->ngpus);
    }
    int rc = gp_cdi_podman_args(NULL, (const char *const *)s->gpu_uuids,
                                s->cdi_devices ? s->ngpus : 0, out, d);
    for (int i = 0; rc == 0 && s->cdi_devices && i < s->ngpus; i++) {
        GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d device %s=%s", (long long)s->job,
               s->replica, GP_CDI_KIND, s->gpu_uuids[i]);
    }
    return rc;
}

/* The command line: the node's settings, this replica's container. */
static int command_line(sup *S, char ***argv, gp_diag *d)
{
    gp_cdi_args cdi = {NULL, NULL};
    int rc = gpu_devices(S, &cdi, d);
    if (rc < 0) {
        return rc;
    }
    /* A job may not make namespaces of its own (seccomp.h): without the profile, no start. */
    char seccomp[4200];
    rc = gp_rdir_path(seccomp, sizeof(seccomp), S->o->state_dir, GP_RDIR_SECCOMP);
    rc = rc ? gp_diag_set(d, rc, "seccomp profile path too long")
            : gp_seccomp_write(getenv("GPUPOOL_SECCOMP_DEFAULT"), seccomp, d);
    if (rc < 0) {
        gp_cdi_args_fini(&cdi);
        return rc;
    }
    gp_sandbox_node n;
    gp_runtime_node(S->o->runtime, &n);
    n.seccomp = seccomp;
    n.hostname = S->o->hostname;
    n.pids_limit = S->o->pids_limit;
    const char **masks = calloc((size_t)S->o->nmasks + 2, sizeof(char *));
    char *own = realpath(S->o->state_dir, NULL);
    if (!masks) {
        free(own);
        gp_cdi_args_fini(&cdi);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (int i = 0; i < S->o->nmasks; i++) {
        masks[n.nmasks++] = S->o->masks[i];
    }
    masks[n.nmasks++] = own ? own : S->o->state_dir; /* never the supervisor's own files */
    n.masks = masks;
    /* The tenant's host ids (idmap.h): an image job's through a user namespace, a job over the
     * host root's directly (sup_int.h: sup_userns) */
    const gp_sup_user *u = &S->o->user;
    bool userns = sup_userns(S);
    gp_sandbox_job j = {.name = S->name,
                        .state_dir = own ? own : S->o->state_dir,
                        .cgroup_parent = S->cgroup_parent,
                        .env_file = S->env_file,
                        .env_args = S->env_args,
                        .uid = userns ? u->uid : u->host_uid,
                        .gid = userns ? u->gid : u->host_gid,
                        .userns = userns ? S->s->userns : (gp_idmap){0, 0},
                        .grace_s = S->o->grace_s,
                        .device_args = (const char *const *)cdi.run};
    rc = gp_sandbox_argv(&n, &j, S->s, &S->layout, argv, d);
    free(masks);
    free(own);
    gp_cdi_args_fini(&cdi);
    return rc;
}

/* The child: a session of its own, the pipes as stdout and stderr, podman exec'd with
 * gpupool-run's environment (the job's is in the env file). */
static void ctr_child(sup *S, char **argv, const int out[2], int report)
{
    setsid();
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out[0], 1) < 0 || dup2(out[1], 2) < 0) {
        sup_report_exit(report, REPORT_STDIO, 0);
    }
    gp_cmd_child_reset();
    if (chdir("/") < 0) {
        sup_report_exit(report, REPORT_CHDIR, 0);
    }
    execve(argv[0], argv, S->o->environ_);
    sup_report_exit(report, REPORT_EXEC, 0);
}

int sup_ctr_launch(sup *S, gp_diag *d)
{
    int rc = 0;
    if (check_dirs(S, d, &rc)) {
        return rc < 0 ? rc : 1;
    }
    char **argv = NULL;
    rc = write_env(S, d);
    rc = rc ? rc : command_line(S, &argv, d);
    if (rc == GP_EINVAL) { /* what the spec asks cannot be given to podman */
        snprintf(S->st.error, sizeof(S->st.error), "%s", d->msg);
        snprintf(S->st.reason, sizeof(S->st.reason), "could not start: %.200s", d->msg);
        S->st.state = GP_RDIR_EXITED;
        S->st.exit_code = 127;
        S->st.start_ms = S->st.end_ms = sup_now_ms(CLOCK_REALTIME);
        rc = gp_rdir_write_status(S->o->state_dir, &S->st, d);
        return rc < 0 ? rc : 1;
    }
    int out[2] = {-1, -1}, err[2] = {-1, -1}, rep[2] = {-1, -1};
    if (rc == 0 && (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
                    pipe2(rep, O_CLOEXEC) < 0 || (S->pid = fork()) < 0)) {
        rc = gp_diag_set(d, GP_EIO, "starting podman: %s", strerror(errno));
    }
    if (rc == 0 && S->pid == 0) {
        const int ends[2] = {out[1], err[1]};
        ctr_child(S, argv, ends, rep[1]);
    }
    gp_sandbox_argv_free(argv);
    int *all[] = {&out[1], &err[1], &rep[1]};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        sup_close_fd(all[i]);
    }
    if (rc < 0) {
        sup_close_fd(&out[0]);
        sup_close_fd(&err[0]);
        sup_close_fd(&rep[0]);
        S->pid = 0;
        return rc;
    }
    S->pipe_fd[0] = out[0];
    S->pipe_fd[1] = err[0];
    for (int i = 0; i < 2; i++) {
        fcntl(S->pipe_fd[i], F_SETFL, O_NONBLOCK);
    }
    GP_LOG(GP_LOG_INFO, "run", "job=%lld replica=%d podman run %s%s%s", (long long)S->s->job,
           S->s->replica, S->name, S->s->image ? " " : " over the host root",
           S->s->image ? S->s->image : "");
    rc = sup_await_exec(S, rep[0], d);
    sup_close_fd(&rep[0]);
    return rc;
}

/* ---- stopping ---- */

/* podman with its global options and then the words given (NULL-terminated). */
static void podman_argv(const sup *S, char **argv, const char *const *words)
{
    const gp_runtime *rt = S->o->runtime;
    int n = 0;
    argv[n++] = (char *)rt->podman;
    argv[n++] = "--runtime";
    argv[n++] = (char *)(rt->oci_path[0] ? rt->oci_path : rt->oci_runtime);
    argv[n++] = "--cgroup-manager";
    argv[n++] = (char *)rt->cgroup_manager;
    for (int i = 0; words[i]; i++) {
        argv[n++] = (char *)words[i];
    }
    argv[n] = NULL;
}

void sup_ctr_stop(sup *S)
{
    int64_t now = sup_now_ms(CLOCK_MONOTONIC);
    if (S->stop_pid > 0 || now < S->next_stop_ms || S->leader_done) {
        return;
    }
    S->next_stop_ms = now + 500;
    char grace[16], *argv[16];
    snprintf(grace, sizeof(grace), "%d", S->o->grace_s);
    const char *words[] = {"stop", "--ignore", "--time", grace, S->name, NULL};
    podman_argv(S, argv, words);
    S->stop_pid = gp_cmd_spawn(argv, NULL, 2, 2); /* its words go to supervisor.log */
    if (S->stop_pid < 0) {
        GP_LOG(GP_LOG_WARN, "run", "podman stop %s: %s", S->name, strerror(errno));
        S->stop_pid = 0;
    }
}

/* Runs podman WORDS... and waits (at most timeout_ms); its words go to supervisor.log. */
static void podman_now(const sup *S, const char *const *words, int timeout_ms)
{
    char *argv[16];
    podman_argv(S, argv, words);
    gp_cmd_result r;
    gp_diag d;
    if (gp_cmd_run(argv, NULL, timeout_ms, 0, &r, &d) < 0) {
        GP_LOG(GP_LOG_WARN, "run", "podman %s %s: %s", words[0], S->name, d.msg);
    } else if (r.status != 0) {
        char line[400];
        gp_cmd_last_line(r.err, line, sizeof(line));
        GP_LOG(GP_LOG_WARN, "run", "podman %s %s: exit %d: %s", words[0], S->name, r.status, line);
    }
    gp_cmd_result_fini(&r);
}

void sup_ctr_escalate(sup *S)
{
    const char *words[] = {"kill", "--signal", "KILL", S->name, NULL};
    podman_now(S, words, 30000);
    if (S->pid > 0 && !S->leader_done) {
        kill(-S->pid, SIGKILL);
        kill(S->pid, SIGKILL);
    }
}

void sup_ctr_clean_up(sup *S)
{
    const char *words[] = {"rm", "--force", "--ignore", "--time", "0", S->name, NULL};
    podman_now(S, words, 60000);
    if (S->pid > 0 && kill(-S->pid, 0) == 0) {
        kill(-S->pid, SIGKILL); /* what podman run left in its group */
    }
    sup_kill_orphans();
    gp_cgroup_remove_named(S->o->cgroup_root, S->cgroup_name);
    if (S->env_file[0]) {
        unlink(S->env_file);
    }
}

void sup_ctr_exit(sup *S, int *exit_code, int *signal)
{
    if (*signal) {
        return; /* podman run itself was killed (escalated) */
    }
    if (*exit_code > 128 && *exit_code <= 128 + 64) {
        *signal = *exit_code - 128;
        S->escalated = S->escalated || (S->stopping && *signal == SIGKILL);
        return;
    }
    if (S->stopping || *exit_code < 125 || *exit_code > 127) {
        return;
    }
    /* podman's own error: its last "Error: " line in the job's stderr */
    char path[4200], text[4096] = "", msg[400];
    if (path_in(S, GP_RDIR_STDERR, path, sizeof(path)) < 0) {
        return;
    }
    tail_of(path, text, sizeof(text));
    if (strstr(text, "Error: ")) {
        gp_pull_message(text, msg, sizeof(msg));
        snprintf(S->st.error, sizeof(S->st.error), "podman: %s", msg);
    }
}
