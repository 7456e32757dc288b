/*
 * The state directory of a replica (contract in replica_dir.h).
 *
 * Every file is replaced whole through a temporary file in the same directory, so a reader sees
 * either the old or the new content, never a torn one, and the fsync of the file and of the
 * directory make the new content survive a machine crash once the call returns.
 */
#include "agent/replica_dir.h"
#include "base/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

const char *gp_rdir_state_name(gp_rdir_state s)
{
    switch (s) {
    case GP_RDIR_RUNNING:
        return "running";
    case GP_RDIR_EXITED:
        return "exited";
    case GP_RDIR_KILLED:
        return "killed";
    default:
        return "none";
    }
}

int gp_rdir_path(char *buf, size_t size, const char *dir, const char *name)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= size ? GP_ERANGE : 0;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int gp_rdir_write_atomic(const char *dir, const char *name, const void *data, size_t len,
                         gp_diag *d)
{
    char path[4096], tmp[4096];
    char tname[300];
    snprintf(tname, sizeof(tname), ".%s.tmp.%ld", name, (long)getpid());
    if (gp_rdir_path(path, sizeof(path), dir, name) < 0 ||
        gp_rdir_path(tmp, sizeof(tmp), dir, tname) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return gp_diag_set(d, GP_EIO, "%s: %s", tmp, strerror(errno));
    }
    if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return gp_diag_set(d, GP_EIO, "%s: %s", tmp, strerror(e));
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(e));
    }
    if (fsync_dir(dir) < 0) {
        return gp_diag_set(d, GP_EIO, "%s: fsync: %s", dir, strerror(errno));
    }
    return 0;
}

int gp_rdir_proc_start(pid_t pid, uint64_t *start, bool *zombie)
{
    gp_proc_stat ps;
    int rc = gp_proc_stat_read(pid, &ps);
    if (rc < 0) {
        return rc;
    }
    *start = ps.start_time;
    if (zombie) {
        *zombie = ps.state == 'Z' || ps.state == 'X' || ps.state == 'x';
    }
    return 0;
}

int gp_rdir_proc_session(pid_t pid, pid_t *ppid, pid_t *sid)
{
    gp_proc_stat ps;
    int rc = gp_proc_stat_read(pid, &ps);
    if (rc < 0) {
        return rc;
    }
    *ppid = ps.ppid;
    *sid = ps.session;
    return 0;
}

int gp_rdir_read_line(const char *dir, const char *name, char *buf, size_t cap, gp_diag *d)
{
    char path[4096];
    buf[0] = '\0';
    if (gp_rdir_path(path, sizeof(path), dir, name) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    FILE *f = fopen(path, "re");
    if (!f) {
        return errno == ENOENT ? GP_ENOENT
                               : gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
    }
    if (!fgets(buf, (int)cap, f)) {
        buf[0] = '\0';
    }
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    return 0;
}

int gp_rdir_write_pid(const char *dir, const char *name, pid_t pid, gp_diag *d)
{
    uint64_t start = 0;
    if (gp_rdir_proc_start(pid, &start, NULL) < 0) {
        return gp_diag_set(d, GP_ENOENT, "/proc/%ld/stat: cannot read the start time", (long)pid);
    }
    char line[64];
    int n = snprintf(line, sizeof(line), "%ld %" PRIu64 "\n", (long)pid, start);
    return gp_rdir_write_atomic(dir, name, line, (size_t)n, d);
}

int gp_rdir_read_pid(const char *dir, const char *name, gp_rdir_pid *out, gp_diag *d)
{
    char path[4096], buf[128];
    out->pid = 0;
    out->start = 0;
    if (gp_rdir_path(path, sizeof(path), dir, name) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? GP_ENOENT
                               : gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    long pid = 0;
    unsigned long long start = 0;
    if (n > 0) {
        buf[n] = '\0';
    }
    if (n <= 0 || sscanf(buf, "%ld %llu", &pid, &start) != 2 || pid <= 0) {
        return gp_diag_set(d, GP_EPARSE, "%s: expected \"PID STARTTIME\"", path);
    }
    out->pid = (pid_t)pid;
    out->start = (uint64_t)start;
    return 0;
}

bool gp_rdir_pid_alive(const gp_rdir_pid *p)
{
    uint64_t start;
    bool zombie = false;
    if (p->pid <= 0 || gp_rdir_proc_start(p->pid, &start, &zombie) < 0) {
        return false;
    }
    return start == p->start && !zombie;
}

int gp_rdir_write_status(const char *dir, const gp_rdir_status *s, gp_diag *d)
{
    json_t *o = json_pack(
        "{s:i, s:s, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:i, s:b, s:s, s:s, s:s, s:s}",
        "version", 1, "state", gp_rdir_state_name(s->state), "job", (json_int_t)s->job, "replica",
        s->replica, "epoch", (json_int_t)s->epoch, "supervisor_pid", (json_int_t)s->supervisor_pid,
        "pid", (json_int_t)s->child.pid, "pid_start", (json_int_t)s->child.start, "start_ms",
        (json_int_t)s->start_ms, "end_ms", (json_int_t)s->end_ms, "exit_code", s->exit_code,
        "signal", s->signal, "escalated", s->escalated, "error", s->error, "reason", s->reason,
        "stop_reason", s->stop_reason, "cgroup", s->cgroup);
    char *text = o ? json_dumps(o, JSON_SORT_KEYS | JSON_INDENT(2)) : NULL;
    json_decref(o);
    if (!text) {
        return gp_diag_set(d, GP_ENOMEM, "status.json: out of memory");
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* json_dumps leaves no newline; its NUL becomes one */
    int rc = gp_rdir_write_atomic(dir, GP_RDIR_STATUS, text, len + 1, d);
    free(text);
    return rc;
}

static int parse_state(const char *name, gp_rdir_state *out)
{
    static const gp_rdir_state all[] = {GP_RDIR_RUNNING, GP_RDIR_EXITED, GP_RDIR_KILLED};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(name, gp_rdir_state_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return GP_EPARSE;
}

static void copy_text(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

int gp_rdir_read_status(const char *dir, gp_rdir_status *out, gp_diag *d)
{
    char path[4096];
    memset(out, 0, sizeof(*out));
    if (gp_rdir_path(path, sizeof(path), dir, GP_RDIR_STATUS) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    if (access(path, F_OK) < 0 && errno == ENOENT) {
        return GP_ENOENT;
    }
    json_error_t err;
    json_t *o = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!o) {
        return gp_diag_set(d, GP_EPARSE, "%s:%d:%d: %s", path, err.line, err.column, err.text);
    }
    const char *state = NULL, *error = NULL, *reason = NULL, *stop_reason = NULL, *cgroup = NULL;
    json_int_t job = 0, epoch = 0, sup = 0, pid = 0, start = 0, s_ms = 0, e_ms = 0;
    int esc = 0;
    int rc = json_unpack_ex(
        o, &err, 0,
        "{s:s, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:i, s:b, s?s, s?s, s?s, s?s}", "state",
        &state, "job", &job, "replica", &out->replica, "epoch", &epoch, "supervisor_pid", &sup,
        "pid", &pid, "pid_start", &start, "start_ms", &s_ms, "end_ms", &e_ms, "exit_code",
        &out->exit_code, "signal", &out->signal, "escalated", &esc, "error", &error, "reason",
        &reason, "stop_reason", &stop_reason, "cgroup", &cgroup);
    if (rc == 0 && parse_state(state, &out->state) < 0) {
        snprintf(err.text, sizeof(err.text), "state: must be running, exited or killed");
        rc = -1;
    }
    if (rc == 0) {
        out->job = job;
        out->epoch = epoch;
        out->supervisor_pid = (pid_t)sup;
        out->child.pid = (pid_t)pid;
        out->child.start = (uint64_t)start;
        out->start_ms = s_ms;
        out->end_ms = e_ms;
        out->escalated = esc != 0;
        copy_text(out->error, sizeof(out->error), error);
        copy_text(out->reason, sizeof(out->reason), reason);
        copy_text(out->stop_reason, sizeof(out->stop_reason), stop_reason);
        copy_text(out->cgroup, sizeof(out->cgroup), cgroup);
    } else {
        gp_diag_set(d, GP_EPARSE, "%s: %s", path, err.text);
        out->state = GP_RDIR_NONE;
    }
    json_decref(o);
    return rc == 0 ? 0 : GP_EPARSE;
}

int gp_rdir_probe(const char *dir, gp_rdir_view *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    int rc = gp_rdir_read_pid(dir, GP_RDIR_SUPERVISOR_PID, &out->supervisor, d);
    if (rc < 0 && rc != GP_ENOENT) {
        return rc;
    }
    rc = gp_rdir_read_pid(dir, GP_RDIR_CHILD_PID, &out->child, d);
    if (rc < 0 && rc != GP_ENOENT) {
        return rc;
    }
    out->supervisor_alive = gp_rdir_pid_alive(&out->supervisor);
    out->child_alive = gp_rdir_pid_alive(&out->child);
    /* Status last: a supervisor that exited after the liveness check above has written its
     * final record before exiting, so a dead supervisor with a "running" record was lost. */
    rc = gp_rdir_read_status(dir, &out->status, d);
    return rc == GP_ENOENT ? 0 : rc;
}
