/*
 * The agent's side of replica directories: listing them with their state, starting a
 * supervisor, stopping one, and archiving finished ones. See agent.h for the layout and
 * replica_dir.h for what a supervisor writes.
 */
#define _GNU_SOURCE /* realpath */

#include "agent/replicas.h"

#include "agent/cgroup.h"
#include "agent/cmd.h"
#include "agent/sandbox.h"
#include "base/log.h"

#include <dirent.h>
#include <jansson.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int gp_replicas_dir(const char *state_dir, const char *sub, const gp_replica_key *k, char *buf,
                    size_t cap)
{
    int n = snprintf(buf, cap, "%s/%s/%lld-%d-%lld", state_dir, sub, (long long)k->job, k->replica,
                     (long long)k->epoch);
    return n < 0 || (size_t)n >= cap ? GP_ERANGE : 0;
}

static int parse_name(const char *name, gp_replica_key *k)
{
    long long job, epoch;
    int replica, used = 0;
    if (sscanf(name, "%lld-%d-%lld%n", &job, &replica, &epoch, &used) != 3 || name[used] ||
        job <= 0 || replica < 0 || epoch <= 0) {
        return GP_EINVAL;
    }
    *k = (gp_replica_key){job, replica, epoch};
    return 0;
}

/* Milliseconds since spec.json was written (the agent's start of the replica); large when
 * unknown. */
static int64_t age_ms(const char *rdir)
{
    char path[GP_REPLICAS_PATH_MAX + 16];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/spec.json", rdir);
    if (stat(path, &sb) != 0) {
        return INT64_MAX;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)(now.tv_sec - sb.st_mtim.tv_sec) * 1000 +
           (now.tv_nsec - sb.st_mtim.tv_nsec) / 1000000;
}

int gp_replicas_scan(const char *state_dir, int64_t started_grace_ms, gp_local_replica **out,
                     int *n, gp_diag *d)
{
    char path[GP_REPLICAS_PATH_MAX];
    snprintf(path, sizeof(path), "%s/replicas", state_dir);
    *out = NULL;
    *n = 0;
    DIR *dir = opendir(path);
    if (!dir) {
        return errno == ENOENT ? 0 : gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
    }
    gp_local_replica *list = NULL;
    int cap = 0, count = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        gp_replica_key k;
        if (parse_name(e->d_name, &k) < 0) {
            continue;
        }
        char rdir[GP_REPLICAS_PATH_MAX];
        gp_replicas_dir(state_dir, "replicas", &k, rdir, sizeof(rdir));
        gp_rdir_view v;
        gp_diag pd;
        gp_diag_clear(&pd);
        if (gp_rdir_probe(rdir, &v, &pd) < 0) {
            GP_LOG(GP_LOG_WARN, "agent", "replica=%s unreadable: %s", e->d_name, pd.msg);
            continue;
        }
        if (v.status_unreadable) {
            GP_LOG(GP_LOG_WARN, "agent", "replica=%s supervisor=%s record unreadable: %s",
                   e->d_name, v.supervisor_alive ? "alive" : "gone", pd.msg);
        }
        if (count == cap) {
            cap = cap ? cap * 2 : 16;
            gp_local_replica *p = realloc(list, sizeof(*p) * (size_t)cap);
            if (!p) {
                free(list);
                closedir(dir);
                return gp_diag_set(d, GP_ENOMEM, "out of memory");
            }
            list = p;
        }
        bool young = age_ms(rdir) < started_grace_ms;
        list[count++] = (gp_local_replica){k, gp_local_state_of(&v, young), v.status.exit_code};
    }
    closedir(dir);
    *out = list;
    *n = count;
    return 0;
}

/* Writes the spec and starts gpupool-run in a session of its own, detached from the agent: a
 * double fork, so the supervisor is not the agent's child (no zombie, nothing tied to the
 * agent's life). */
/* gpupool-run's arguments for a replica in dir (at most START_ARGS of them). */
#define START_ARGS 96
static void start_argv(const gp_replicas_env *env, const char *dir, const char *specpath,
                       char *grace, char *logmax, char *pids, char *checkpoints, const char **argv)
{
    int a = 0;
    argv[a++] = env->run_binary;
    argv[a++] = "--state-dir";
    argv[a++] = dir;
    argv[a++] = "--spec";
    argv[a++] = specpath;
    argv[a++] = "--grace";
    argv[a++] = grace;
    argv[a++] = "--log-max";
    argv[a++] = logmax;
    if (env->user[0]) {
        argv[a++] = "--user";
        argv[a++] = env->user;
    }
    argv[a++] = "--checkpoint-root";
    argv[a++] = checkpoints;
    argv[a++] = "--runtime";
    argv[a++] = env->runtime ? "podman" : "none";
    if (env->runtime) {
        argv[a++] = "--podman";
        argv[a++] = env->runtime->podman;
        argv[a++] = "--pids-limit";
        argv[a++] = pids;
    }
    for (int i = 0; env->runtime && env->masks && env->masks[i] && a < START_ARGS - 3; i++) {
        argv[a++] = "--mask";
        argv[a++] = env->masks[i];
    }
    argv[a] = NULL;
}

/* The registry credentials beside the spec, readable by root only. */
static int write_auth(const char *dir, const char *auth, gp_diag *d)
{
    char path[GP_REPLICAS_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", dir, GP_RDIR_AUTH);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    size_t len = strlen(auth);
    bool ok = fd >= 0 && write(fd, auth, len) == (ssize_t)len;
    int e = errno;
    if (fd >= 0) {
        close(fd);
    }
    return ok ? 0 : gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(e));
}

int gp_replicas_start(const gp_replicas_env *env, const gp_replica_key *k, const char *spec,
                      const char *auth, gp_diag *d)
{
    char dir[GP_REPLICAS_PATH_MAX], specpath[GP_REPLICAS_PATH_MAX + 16],
        logpath[GP_REPLICAS_PATH_MAX + 32];
    char parent[GP_REPLICAS_PATH_MAX];
    snprintf(parent, sizeof(parent), "%s/replicas", env->state_dir);
    if (mkdir(parent, 0755) != 0 && errno != EEXIST) {
        return gp_diag_set(d, GP_EIO, "%s: %s", parent, strerror(errno));
    }
    int rc = gp_replicas_dir(env->state_dir, "replicas", k, dir, sizeof(dir));
    if (rc == 0 && mkdir(dir, 0755) != 0) {
        /* A directory is made once per placement: one that exists has (or had) its supervisor,
         * and a second one must never run the job again. */
        rc = gp_diag_set(d, errno == EEXIST ? GP_EEXIST : GP_EIO, "%s: %s", dir,
                         errno == EEXIST ? "exists already: not starting a second supervisor"
                                         : strerror(errno));
    }
    if (rc == 0) {
        rc = gp_rdir_write_atomic(dir, GP_RDIR_SPEC, spec, strlen(spec), d);
    }
    if (rc == 0 && auth) {
        rc = write_auth(dir, auth, d);
    }
    if (rc < 0) {
        return rc;
    }
    snprintf(specpath, sizeof(specpath), "%s/spec.json", dir);
    snprintf(logpath, sizeof(logpath), "%s/supervisor.log", dir);
    char grace[32], logmax[32], pids[32], checkpoints[GP_REPLICAS_PATH_MAX];
    snprintf(checkpoints, sizeof(checkpoints), "%s/checkpoints", env->state_dir);
    snprintf(grace, sizeof(grace), "%d", env->grace_s);
    snprintf(logmax, sizeof(logmax), "%lld", (long long)env->log_max);
    snprintf(pids, sizeof(pids), "%lld", (long long)env->pids_limit);
    const char *argv[START_ARGS];
    start_argv(env, dir, specpath, grace, logmax, pids, checkpoints, argv);
    pid_t pid = fork();
    if (pid < 0) {
        return gp_diag_set(d, GP_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        setsid();
        if (fork() != 0) {
            _exit(0);
        }
        int in = open("/dev/null", O_RDONLY),
            out = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) {
            _exit(127);
        }
        execv(env->run_binary, (char *const *)argv);
        dprintf(2, "gpupool-agent: exec %s: %s\n", env->run_binary, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    GP_LOG(GP_LOG_INFO, "agent", "start job=%lld replica=%d epoch=%lld", (long long)k->job,
           k->replica, (long long)k->epoch);
    return 0;
}

/* Whether pid leads a session of its own, as a job's leader does (supervise.h). child.pid may be
 * written by the job: this keeps a forged one from naming init (kill(-1) signals every process)
 * or a process that is no job's leader. */
static bool leads_session(pid_t pid)
{
    pid_t ppid, sid;
    return pid > 1 && gp_rdir_proc_session(pid, &ppid, &sid) == 0 && sid == pid;
}

int gp_replicas_stop(const char *state_dir, const gp_replica_key *k, bool kill_group,
                     const char *reason, gp_diag *d)
{
    char dir[GP_REPLICAS_PATH_MAX];
    int rc = gp_replicas_dir(state_dir, "replicas", k, dir, sizeof(dir));
    gp_rdir_view v;
    if (rc == 0) {
        rc = gp_rdir_probe(dir, &v, d);
    }
    if (rc < 0) {
        return rc;
    }
    if (!kill_group && v.supervisor_alive && reason) {
        char line[512];
        int n = snprintf(line, sizeof(line), "%.500s\n", reason);
        rc = gp_rdir_write_atomic(dir, GP_RDIR_STOP_REASON, line, (size_t)n, d);
        if (rc < 0) {
            return rc;
        }
    }
    if (!kill_group && v.supervisor_alive) {
        kill(v.supervisor.pid, SIGTERM);
    } else if (kill_group && v.child_alive && leads_session(v.child.pid)) {
        kill(-v.child.pid, SIGKILL);
    }
    return 0;
}

int gp_replicas_stop_reason(const char *state_dir, const gp_replica_key *k, char *buf, size_t cap)
{
    char dir[GP_REPLICAS_PATH_MAX];
    gp_rdir_status st;
    gp_diag d;
    buf[0] = '\0';
    if (gp_replicas_dir(state_dir, "replicas", k, dir, sizeof(dir)) < 0) {
        return 0;
    }
    int rc = gp_rdir_read_status(dir, &st, &d);
    if (rc == 0 && (st.state == GP_RDIR_KILLED || st.state == GP_RDIR_EXITED)) {
        snprintf(buf, cap, "%s", st.stop_reason); /* the final record says */
    } else if (gp_rdir_read_line(dir, GP_RDIR_STOP_REASON, buf, cap, &d) < 0) {
        buf[0] = '\0';
    }
    return buf[0] != '\0';
}

void gp_replicas_remove_sandbox(const gp_replicas_env *env, const gp_replica_key *k)
{
    char dir[GP_REPLICAS_PATH_MAX], name[GP_SANDBOX_NAME_MAX];
    const gp_runtime *rt = env->runtime;
    if (!rt || !rt->ok || gp_replicas_dir(env->state_dir, "replicas", k, dir, sizeof(dir)) < 0) {
        return;
    }
    char *abs = realpath(dir, NULL);
    gp_sandbox_name(k->job, k->replica, k->epoch, abs ? abs : dir, name);
    free(abs);
    char *argv[] = {(char *)rt->podman,
                    "--runtime",
                    (char *)(rt->oci_path[0] ? rt->oci_path : rt->oci_runtime),
                    "--cgroup-manager",
                    (char *)rt->cgroup_manager,
                    "rm",
                    "--force",
                    "--ignore",
                    "--time",
                    "0",
                    name,
                    NULL};
    gp_cmd_result r;
    gp_diag d;
    if (gp_cmd_run(argv, NULL, 60000, 256, &r, &d) == 0 && r.status == 0 && r.out && r.out[0]) {
        GP_LOG(GP_LOG_INFO, "agent", "lost replica job=%lld replica=%d: container %s removed",
               (long long)k->job, k->replica, name);
    }
    gp_cmd_result_fini(&r);
    /* its cgroups: gpupool/jobJ-rR-eE-pPID, the supervisor's PID unknown now */
    char prefix[96], base[64];
    snprintf(prefix, sizeof(prefix), "job%lld-r%d-e%lld-p", (long long)k->job, k->replica,
             (long long)k->epoch);
    const char *root = "/sys/fs/cgroup";
    snprintf(base, sizeof(base), "%s/%s", root,
             rt->cgroups == GP_CGMODE_V2 ? "gpupool" : "pids/gpupool");
    DIR *gd = opendir(base);
    struct dirent *e;
    while (gd && (e = readdir(gd))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            gp_cgroup_remove_named(root, e->d_name);
        }
    }
    if (gd) {
        closedir(gd);
    }
}

int gp_replicas_pull(const char *state_dir, const gp_replica_key *k, char *image, size_t cap,
                     int64_t *done_bytes, int64_t *total_bytes)
{
    char dir[GP_REPLICAS_PATH_MAX];
    json_t *o = NULL;
    gp_diag d;
    if (gp_replicas_dir(state_dir, "replicas", k, dir, sizeof(dir)) < 0 ||
        gp_rdir_read_json(dir, GP_RDIR_PULL, 65536, &o, &d) < 0) {
        return 0;
    }
    const char *img = NULL;
    json_int_t done = 0, total = 0;
    int ok = json_unpack(o, "{s:s, s:I, s:I}", "image", &img, "done_bytes", &done, "total_bytes",
                         &total) == 0;
    if (ok) {
        snprintf(image, cap, "%s", img);
        *done_bytes = done > 0 ? done : 0;
        *total_bytes = total > 0 ? total : 0;
    }
    json_decref(o);
    return ok;
}

/* The job's labels from spec.json: name, tenant, queue and the MIG profile. */
static void watch_labels(json_t *spec, gp_replica_watch *out)
{
    const char *name = "", *tenant = "", *queue = "", *profile = "";
    json_unpack(spec, "{s?s, s?s, s?s}", "name", &name, "tenant", &tenant, "queue", &queue);
    json_unpack(spec, "{s:{s:{s:s}}}", "spec", "resources", "mig_profile", &profile);
    snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->tenant, sizeof(out->tenant), "%s", tenant);
    snprintf(out->queue, sizeof(out->queue), "%s", queue);
    snprintf(out->mig_profile, sizeof(out->mig_profile), "%s", profile);
}

int gp_replicas_watch_info(const char *state_dir, const gp_replica_key *k, gp_replica_watch *out,
                           gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    out->use.key = *k;
    char dir[GP_REPLICAS_PATH_MAX];
    gp_rdir_view v;
    int rc = gp_replicas_dir(state_dir, "replicas", k, dir, sizeof(dir));
    if (rc < 0 || (rc = gp_rdir_probe(dir, &v, d)) < 0) {
        return rc == GP_ERANGE ? gp_diag_set(d, rc, "%s: path too long", state_dir) : rc;
    }
    out->leader = v.child_alive ? v.child.pid : 0;
    snprintf(out->image_id, sizeof(out->image_id), "%s", v.status.image_id);
    out->supervisor = v.supervisor_alive ? v.supervisor.pid : 0;
    json_t *spec;
    if ((rc = gp_rdir_read_json(dir, GP_RDIR_SPEC, GP_RDIR_SPEC_MAX, &spec, d)) < 0) {
        return rc == GP_ENOENT ? gp_diag_set(d, GP_EIO, "%s/%s: missing", dir, GP_RDIR_SPEC) : rc;
    }
    watch_labels(spec, out);
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(spec, "gpus"), i, g)
    {
        /* The rule run_spec (agent.c) gives the job its limit by. */
        int index = -1, milli = 1000, start = -1;
        json_int_t mem = 0;
        const char *mig_uuid = "";
        json_unpack(g, "{s?i, s?i, s?I, s?i, s?s}", "index", &index, "milli", &milli, "memory_mib",
                    &mem, "mig_start", &start, "mig_uuid", &mig_uuid);
        if (index < 0 || out->use.ngpus == GP_MEMWATCH_MAX_GPUS) {
            continue;
        }
        gp_replica_gpu *r = &out->gpus[out->use.ngpus];
        gp_memwatch_gpu *w = &out->use.gpus[out->use.ngpus++];
        w->index = index;
        w->limit_mib = start < 0 && milli < 1000 && mem > 0 ? (int64_t)mem : 0;
        *r = (gp_replica_gpu){milli, mem > 0 ? (int64_t)mem : 0, start, "", -1, -1};
        snprintf(r->mig_uuid, sizeof(r->mig_uuid), "%s", mig_uuid);
    }
    json_decref(spec);
    return 0;
}

/* The replica whose leader (or, with supervisors, supervisor) is p; -1 when none. */
static int owner_of(const gp_replica_watch *reps, int n, pid_t p, bool supervisors)
{
    for (int i = 0; p > 1 && i < n; i++) {
        if (reps[i].leader == p || (supervisors && reps[i].supervisor == p)) {
            return i;
        }
    }
    return -1;
}

/* How far up the process tree gp_replicas_owner looks. */
#define OWNER_DEPTH 64

int gp_replicas_owner(const gp_replica_watch *reps, int n, pid_t pid)
{
    pid_t ppid = 0, sid = 0;
    if (gp_rdir_proc_session(pid, &ppid, &sid) < 0) {
        return -1;
    }
    int i = owner_of(reps, n, sid, false);
    for (int depth = 0; i < 0 && ppid > 1 && depth < OWNER_DEPTH; depth++) {
        i = owner_of(reps, n, ppid, true);
        if (i < 0 && gp_rdir_proc_session(ppid, &ppid, &sid) == 0) {
            i = owner_of(reps, n, sid, false);
        } else if (i < 0) {
            break; /* the parent is gone meanwhile */
        }
    }
    return i;
}

/* Removes a directory tree (finished replicas only hold plain files and work/). */
static void remove_tree(const char *path)
{
    DIR *dir = opendir(path);
    if (dir) {
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
                continue;
            }
            char sub[GP_REPLICAS_PATH_MAX * 2];
            snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
            struct stat sb;
            if (lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode)) {
                remove_tree(sub);
            } else {
                unlink(sub);
            }
        }
        closedir(dir);
    }
    rmdir(path);
}

/* Keeps the newest `keep` finished directories (by modification time). */
static void prune(const char *finished, int keep)
{
    DIR *dir = opendir(finished);
    if (!dir) {
        return;
    }
    struct ent {
        char name[128];
        time_t t;
    } *list = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        char sub[GP_REPLICAS_PATH_MAX * 2];
        struct stat sb;
        snprintf(sub, sizeof(sub), "%s/%s", finished, e->d_name);
        if (e->d_name[0] == '.' || strlen(e->d_name) >= 128 || stat(sub, &sb) != 0) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            struct ent *p = realloc(list, sizeof(*p) * (size_t)cap);
            if (!p) {
                break;
            }
            list = p;
        }
        snprintf(list[n].name, sizeof(list[n].name), "%s", e->d_name);
        list[n++].t = sb.st_mtime;
    }
    closedir(dir);
    while (n > keep) {
        int oldest = 0;
        for (int i = 1; i < n; i++) {
            oldest = list[i].t < list[oldest].t ? i : oldest;
        }
        char sub[GP_REPLICAS_PATH_MAX * 2];
        snprintf(sub, sizeof(sub), "%s/%s", finished, list[oldest].name);
        remove_tree(sub);
        list[oldest] = list[--n];
    }
    free(list);
}

int gp_replicas_forget(const char *state_dir, const gp_replica_key *k, int keep, gp_diag *d)
{
    char from[GP_REPLICAS_PATH_MAX], to[GP_REPLICAS_PATH_MAX], finished[GP_REPLICAS_PATH_MAX];
    snprintf(finished, sizeof(finished), "%s/finished", state_dir);
    if (mkdir(finished, 0755) != 0 && errno != EEXIST) {
        return gp_diag_set(d, GP_EIO, "%s: %s", finished, strerror(errno));
    }
    gp_replicas_dir(state_dir, "replicas", k, from, sizeof(from));
    gp_replicas_dir(state_dir, "finished", k, to, sizeof(to));
    remove_tree(to);
    if (rename(from, to) != 0) {
        return gp_diag_set(d, GP_EIO, "%s: %s", from, strerror(errno));
    }
    prune(finished, keep);
    return 0;
}
