/*
 * The processes of a local pool, from /proc (pool_procs.h).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli/pool_procs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define PP_PATH   4096
#define PP_ARGMAX (256 * 1024) /* what is read of a command line or an environment */

static const char *const programs[GP_POOL_NKINDS] = {"gpupool-agent", "gpupool-run", "gpupoold"};

/* Environment variables that name a pool's path (the programs' own GPUPOOL_* settings). */
static const char *const path_vars[] = {
    "GPUPOOL_DATA_DIR=", "GPUPOOL_STATE_DIR=", "GPUPOOL_JOIN_TOKEN_FILE="};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* The fields of /proc/PID/stat after the command name (state first); "" when unreadable. */
static void stat_fields(pid_t pid, char *buf, size_t cap)
{
    char path[64], line[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) {
        return;
    }
    if (fgets(line, sizeof(line), f)) {
        const char *close = strrchr(line, ')');
        snprintf(buf, cap, "%s", close && close[1] == ' ' ? close + 2 : "");
    }
    fclose(f);
}

bool gp_pool_alive(pid_t pid)
{
    char f[1024];
    stat_fields(pid, f, sizeof(f));
    return f[0] && f[0] != 'Z' && f[0] != 'X';
}

/* Field 22 of /proc/PID/stat (start time in clock ticks after boot); 0 when unreadable. */
static unsigned long long start_time(pid_t pid)
{
    char f[1024];
    stat_fields(pid, f, sizeof(f));
    const char *p = f;
    for (int field = 3; field < 22 && *p; field++) { /* the buffer starts at field 3 */
        p = strchr(p, ' ');
        p = p ? p + 1 : "";
    }
    return strtoull(p, NULL, 10);
}

/* Reads up to cap - 1 bytes of a /proc file into buf (NUL-terminated); the length, or -1. */
static ssize_t read_proc(pid_t pid, const char *what, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, what);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0) {
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* The file name of the process's program: of /proc/PID/exe (without " (deleted)", as after a
 * rebuild), else its comm. */
static void program(pid_t pid, char *buf, size_t cap)
{
    char path[64], exe[PP_PATH];
    snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
    ssize_t n = readlink(path, exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *del = strstr(exe, " (deleted)");
        if (del && del[10] == '\0') {
            *del = '\0';
        }
        const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
        size_t len = strlen(base) < cap - 1 ? strlen(base) : cap - 1;
        memcpy(buf, base, len);
        buf[len] = '\0';
        return;
    }
    if (read_proc(pid, "comm", buf, cap) < 0) {
        buf[0] = '\0';
    }
    buf[strcspn(buf, "\n")] = '\0';
}

/* Whether path (absolute) is dir itself (exact) or inside dir. */
static bool under(const char *path, const char *dir, bool exact)
{
    size_t n = strlen(dir);
    if (strncmp(path, dir, n) != 0) {
        return false;
    }
    return exact ? path[n] == '\0' : path[n] == '/' && path[n + 1] != '\0';
}

/* Whether value, a path as the process at cwd was given it, names its kind's place in dir. */
static bool names_pool(const char *dir, gp_pool_kind kind, const char *value, const char *cwd)
{
    if (!value[0] || (value[0] != '/' && !cwd[0])) {
        return false;
    }
    char joined[PP_PATH * 2 + 2], resolved[PP_PATH], agents[PP_PATH + 16], token[PP_PATH + 16];
    snprintf(joined, sizeof(joined), "%s%s%s", value[0] == '/' ? "" : cwd,
             value[0] == '/' ? "" : "/", value);
    const char *path = realpath(joined, resolved) ? resolved : joined;
    snprintf(agents, sizeof(agents), "%s/agents", dir);
    snprintf(token, sizeof(token), "%s/join.token", dir);
    switch (kind) {
    case GP_POOL_CTL:
        return under(path, dir, true);
    case GP_POOL_AGENT:
        return under(path, token, true) || under(path, agents, false);
    default:
        return under(path, agents, false);
    }
}

/* Whether the NUL-separated strings of buf (len bytes) name the pool: every argument (or the
 * value of --flag=VALUE) when env is false, the path variables when it is true. */
static bool strings_name_pool(const char *dir, gp_pool_kind kind, const char *buf, ssize_t len,
                              const char *cwd, bool env)
{
    for (const char *s = buf; s < buf + len; s += strlen(s) + 1) {
        const char *value = s;
        if (env) {
            value = NULL;
            for (size_t i = 0; i < sizeof(path_vars) / sizeof(path_vars[0]); i++) {
                if (strncmp(s, path_vars[i], strlen(path_vars[i])) == 0) {
                    value = s + strlen(path_vars[i]);
                }
            }
        } else if (s[0] == '-' && s[1] == '-' && strchr(s, '=')) {
            value = strchr(s, '=') + 1;
        }
        if (value && names_pool(dir, kind, value, cwd)) {
            return true;
        }
    }
    return false;
}

/* Whether live process pid is a process of kind in the pool at dir (by its arguments and
 * environment; the program is checked by the caller). */
static bool of_pool(const char *dir, gp_pool_kind kind, pid_t pid, char *buf)
{
    char path[64], cwd[PP_PATH];
    snprintf(path, sizeof(path), "/proc/%ld/cwd", (long)pid);
    ssize_t n = readlink(path, cwd, sizeof(cwd) - 1);
    cwd[n > 0 ? n : 0] = '\0';
    ssize_t len = read_proc(pid, "cmdline", buf, PP_ARGMAX);
    if (len > 0 && strings_name_pool(dir, kind, buf, len, cwd, false)) {
        return true;
    }
    len = read_proc(pid, "environ", buf, PP_ARGMAX);
    return len > 0 && strings_name_pool(dir, kind, buf, len, cwd, true);
}

/* The pid holding dir's lock (a gpupoold), or 0 when none holds it. */
static pid_t lock_holder(const char *dir)
{
    char path[PP_PATH + 32], line[32] = "";
    snprintf(path, sizeof(path), "%s/gpupoold.lock", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        return 0;
    }
    long pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
        line[n > 0 ? n : 0] = '\0';
        pid = strtol(line, NULL, 10);
    }
    close(fd); /* drops the shared lock if it was taken */
    char prog[64] = "";
    if (pid > 0) { /* a holder between its flock and writing its pid leaves an old one there */
        program((pid_t)pid, prog, sizeof(prog));
    }
    return strcmp(prog, programs[GP_POOL_CTL]) == 0 && gp_pool_alive((pid_t)pid) ? (pid_t)pid : 0;
}

static int add_pid(pid_t *pids, int n, int cap, pid_t pid)
{
    for (int i = 0; i < n; i++) {
        if (pids[i] == pid) {
            return n;
        }
    }
    if (n < cap) {
        pids[n++] = pid;
    }
    return n;
}

int gp_pool_find(const char *dir, gp_pool_kind kind, pid_t *pids, int cap)
{
    int n = 0;
    char *buf = malloc(PP_ARGMAX);
    DIR *proc = buf ? opendir("/proc") : NULL;
    struct dirent *e;
    while (proc && (e = readdir(proc))) {
        if (!isdigit((unsigned char)e->d_name[0])) {
            continue;
        }
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        char prog[64];
        program(pid, prog, sizeof(prog));
        if (pid != getpid() && strcmp(prog, programs[kind]) == 0 && gp_pool_alive(pid) &&
            of_pool(dir, kind, pid, buf)) {
            n = add_pid(pids, n, cap, pid);
        }
    }
    if (proc) {
        closedir(proc);
    }
    free(buf);
    pid_t holder = kind == GP_POOL_CTL ? lock_holder(dir) : 0;
    return holder ? add_pid(pids, n, cap, holder) : n;
}

/* SIGTERM to each of pids, SIGKILL to those alive after grace_ms; waits for them. Returns how
 * many were signalled. */
static int stop_pids(const pid_t *pids, int n, long grace_ms, const char *who, bool *failed)
{
    int stopped = 0;
    for (int i = 0; i < n; i++) {
        if (kill(pids[i], SIGTERM) == 0) {
            stopped++;
        } else if (errno != ESRCH) {
            fprintf(stderr, "%s: cannot stop process %ld: %s\n", who, (long)pids[i],
                    strerror(errno));
            if (failed) {
                *failed = true;
            }
        }
    }
    bool killed = false;
    for (long waited = 0;; waited += 50) {
        bool any = false;
        for (int i = 0; i < n && !any; i++) {
            any = gp_pool_alive(pids[i]);
        }
        if (!any || waited >= grace_ms + 5000) {
            break; /* gone, or not even SIGKILL helped: left for the caller's message */
        }
        if (waited >= grace_ms && !killed) {
            for (int i = 0; i < n; i++) {
                kill(pids[i], SIGKILL);
            }
            killed = true;
        }
        sleep_ms(50);
    }
    return stopped;
}

/* Whether the live process pid is the leader recorded for replica directory name ("J-R-E"):
 * the recorded start time, and the job's and replica's numbers in its environment (which a
 * process of another job or of nobody's lacks, whatever a job wrote into its directory). */
static bool is_job_leader(pid_t pid, unsigned long long start, const char *name, char *buf)
{
    long long job, epoch;
    int replica;
    char want_job[64], want_rep[48];
    if (sscanf(name, "%lld-%d-%lld", &job, &replica, &epoch) != 3 || !gp_pool_alive(pid) ||
        start_time(pid) != start) {
        return false;
    }
    snprintf(want_job, sizeof(want_job), "GPUPOOL_JOB_ID=%lld", job);
    snprintf(want_rep, sizeof(want_rep), "GPUPOOL_REPLICA=%d", replica);
    ssize_t len = read_proc(pid, "environ", buf, PP_ARGMAX);
    bool has_job = false, has_rep = false;
    for (const char *s = buf; len > 0 && s < buf + len; s += strlen(s) + 1) {
        has_job |= strcmp(s, want_job) == 0;
        has_rep |= strcmp(s, want_rep) == 0;
    }
    return has_job && has_rep;
}

/* SIGKILL to the process group of every job whose supervisor is gone: its leader, recorded in
 * a replica directory's child.pid, still alive (is_job_leader). */
static int kill_orphan_jobs(const char *dir, char *buf)
{
    char agents[PP_PATH + 16];
    snprintf(agents, sizeof(agents), "%s/agents", dir);
    DIR *ad = opendir(agents);
    struct dirent *ae;
    int killed = 0;
    while (ad && (ae = readdir(ad))) {
        char reps[PP_PATH * 2];
        snprintf(reps, sizeof(reps), "%s/%s/replicas", agents, ae->d_name);
        DIR *rd = ae->d_name[0] == '.' ? NULL : opendir(reps);
        struct dirent *re;
        while (rd && (re = readdir(rd))) {
            char file[PP_PATH * 3];
            snprintf(file, sizeof(file), "%s/%s/child.pid", reps, re->d_name);
            FILE *f = re->d_name[0] == '.' ? NULL : fopen(file, "r");
            long pid = 0;
            unsigned long long start = 0;
            if (f && fscanf(f, "%ld %llu", &pid, &start) == 2 && pid > 1 &&
                is_job_leader((pid_t)pid, start, re->d_name, buf) &&
                kill(-(pid_t)pid, SIGKILL) == 0) {
                killed++;
            }
            if (f) {
                fclose(f);
            }
        }
        if (rd) {
            closedir(rd);
        }
    }
    if (ad) {
        closedir(ad);
    }
    return killed;
}

int gp_pool_stop(const char *dir, const char *who, long grace_ms, bool *failed)
{
    pid_t *pids = malloc(GP_POOL_MAX_PROCS * sizeof(*pids));
    char *buf = malloc(PP_ARGMAX);
    if (!pids || !buf) {
        free(pids);
        free(buf);
        fprintf(stderr, "%s: out of memory\n", who);
        if (failed) {
            *failed = true;
        }
        return 0;
    }
    int stopped = 0;
    static const gp_pool_kind order[] = {GP_POOL_AGENT, GP_POOL_RUN, GP_POOL_CTL};
    for (int k = 0; k < 3; k++) {
        int n = gp_pool_find(dir, order[k], pids, GP_POOL_MAX_PROCS);
        stopped += stop_pids(pids, n, grace_ms, who, failed);
        if (order[k] == GP_POOL_RUN) {
            stopped += kill_orphan_jobs(dir, buf);
        }
        for (int i = 0; i < n; i++) {
            if (gp_pool_alive(pids[i])) {
                fprintf(stderr, "%s: process %ld (%s) is still alive\n", who, (long)pids[i],
                        programs[order[k]]);
                if (failed) {
                    *failed = true;
                }
            }
        }
    }
    free(pids);
    free(buf);
    return stopped;
}
