/*
 * The state directory of a replica (contract in replica_dir.h).
 *
 * Every file is replaced whole through a temporary file in the same directory, so a reader sees
 * either the old or the new content, never a torn one, and the fsync of the file and of the
 * directory make the new content survive a machine crash once the call returns.
 */
#include "agent/replica_dir.h"
#include "base/procstat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    /* Made anew, never opened as found: the name is predictable, and a FIFO put there by a job
     * would block the writer. */
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
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

/* The content of a record (at most cap - 1 bytes, NUL-terminated; *len its length). A record is
 * a small regular file: anything else is refused without blocking or reading on (a job that can
 * write the directory may have put a FIFO, a device, a link or a huge file there). GP_ENOENT when
 * absent; GP_EIO with d set otherwise. */
static int read_record(const char *path, char *buf, size_t cap, size_t *len, gp_diag *d)
{
    *len = 0;
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? GP_ENOENT
                               : gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
    }
    struct stat sb;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size >= (off_t)cap) {
        close(fd);
        return gp_diag_set(d, GP_EIO, "%s: not a regular file of at most %zu bytes", path, cap - 1);
    }
    while (*len < cap - 1) {
        ssize_t n = read(fd, buf + *len, cap - 1 - *len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            int e = errno;
            close(fd);
            return gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(e));
        }
        if (n == 0) {
            break;
        }
        *len += (size_t)n;
    }
    close(fd);
    buf[*len] = '\0';
    return 0;
}

int gp_rdir_read_line(const char *dir, const char *name, char *buf, size_t cap, gp_diag *d)
{
    char path[4096], text[4096];
    size_t len;
    buf[0] = '\0';
    if (gp_rdir_path(path, sizeof(path), dir, name) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    int rc = read_record(path, text, sizeof(text), &len, d);
    if (rc == 0) {
        text[strcspn(text, "\r\n")] = '\0';
        snprintf(buf, cap, "%s", text);
    }
    return rc;
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
    size_t n;
    out->pid = 0;
    out->start = 0;
    if (gp_rdir_path(path, sizeof(path), dir, name) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    int rc = read_record(path, buf, sizeof(buf), &n, d);
    if (rc < 0) {
        return rc;
    }
    long pid = 0;
    unsigned long long start = 0;
    if (n == 0 || sscanf(buf, "%ld %llu", &pid, &start) != 2 || pid <= 0) {
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
        "{s:i, s:s, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:i, s:b, s:s, s:s, s:s, s:s, "
        "s:s, s:s, s:s}",
        "version", 1, "state", gp_rdir_state_name(s->state), "job", (json_int_t)s->job, "replica",
        s->replica, "epoch", (json_int_t)s->epoch, "supervisor_pid", (json_int_t)s->supervisor_pid,
        "pid", (json_int_t)s->child.pid, "pid_start", (json_int_t)s->child.start, "start_ms",
        (json_int_t)s->start_ms, "end_ms", (json_int_t)s->end_ms, "exit_code", s->exit_code,
        "signal", s->signal, "escalated", s->escalated, "error", s->error, "reason", s->reason,
        "stop_reason", s->stop_reason, "cgroup", s->cgroup, "container", s->container, "image",
        s->image, "image_id", s->image_id);
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

/* A status.json larger than this is not one gpupool-run wrote. */
#define STATUS_MAX 65536

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

int gp_rdir_read_json(const char *dir, const char *name, size_t max, json_t **out, gp_diag *d)
{
    char path[4096];
    *out = NULL;
    if (gp_rdir_path(path, sizeof(path), dir, name) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    char *text = malloc(max + 1);
    size_t len;
    int rc = text ? read_record(path, text, max + 1, &len, d)
                  : gp_diag_set(d, GP_ENOMEM, "%s: out of memory", path);
    if (rc == 0) {
        json_error_t err;
        *out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
        rc = *out ? 0
                  : gp_diag_set(d, GP_EPARSE, "%s:%d:%d: %s", path, err.line, err.column, err.text);
    }
    free(text);
    return rc;
}

int gp_rdir_read_status(const char *dir, gp_rdir_status *out, gp_diag *d)
{
    char path[4096];
    memset(out, 0, sizeof(*out));
    if (gp_rdir_path(path, sizeof(path), dir, GP_RDIR_STATUS) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    json_t *o = NULL;
    int rc = gp_rdir_read_json(dir, GP_RDIR_STATUS, STATUS_MAX, &o, d);
    if (rc < 0) {
        return rc;
    }
    json_error_t err;
    const char *state = NULL, *error = NULL, *reason = NULL, *stop_reason = NULL, *cgroup = NULL;
    const char *container = NULL, *image = NULL, *image_id = NULL;
    json_int_t job = 0, epoch = 0, sup = 0, pid = 0, start = 0, s_ms = 0, e_ms = 0;
    int esc = 0;
    rc = json_unpack_ex(
        o, &err, 0,
        "{s:s, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:i, s:b, s?s, s?s, s?s, s?s, s?s, "
        "s?s, s?s}",
        "state", &state, "job", &job, "replica", &out->replica, "epoch", &epoch, "supervisor_pid",
        &sup, "pid", &pid, "pid_start", &start, "start_ms", &s_ms, "end_ms", &e_ms, "exit_code",
        &out->exit_code, "signal", &out->signal, "escalated", &esc, "error", &error, "reason",
        &reason, "stop_reason", &stop_reason, "cgroup", &cgroup, "container", &container, "image",
        &image, "image_id", &image_id);
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
        copy_text(out->container, sizeof(out->container), container);
        copy_text(out->image, sizeof(out->image), image);
        copy_text(out->image_id, sizeof(out->image_id), image_id);
    } else {
        gp_diag_set(d, GP_EPARSE, "%s: %s", path, err.text);
        out->state = GP_RDIR_NONE;
    }
    json_decref(o);
    return rc == 0 ? 0 : GP_EPARSE;
}

/* Whether process pid's command line has "--state-dir" followed by dir, as the agent starts
 * gpupool-run (replicas.c). */
static bool names_dir(pid_t pid, const char *dir)
{
    char path[64], buf[8192];
    size_t len = 0;
    snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    for (ssize_t n; len < sizeof(buf) - 1; len += (size_t)n) {
        n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n < 0 && errno == EINTR) {
            n = 0;
            continue;
        }
        if (n <= 0) {
            break;
        }
    }
    close(fd);
    buf[len] = '\0';
    const char *end = buf + len;
    for (const char *arg = buf; arg < end; arg += strlen(arg) + 1) {
        const char *next = arg + strlen(arg) + 1;
        if (next < end && strcmp(arg, "--state-dir") == 0 && strcmp(next, dir) == 0) {
            return true;
        }
    }
    return false;
}

int gp_rdir_find_supervisor(const char *dir, gp_rdir_pid *out)
{
    *out = (gp_rdir_pid){0, 0};
    DIR *proc = opendir("/proc");
    if (!proc) {
        return GP_ENOENT;
    }
    struct dirent *e;
    while ((e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        uint64_t start;
        bool zombie = false;
        if (*end || pid <= 0 || !names_dir((pid_t)pid, dir) ||
            gp_rdir_proc_start((pid_t)pid, &start, &zombie) < 0 || zombie) {
            continue;
        }
        if (!out->pid || start < out->start) {
            *out = (gp_rdir_pid){(pid_t)pid, start};
        }
    }
    closedir(proc);
    return out->pid ? 0 : GP_ENOENT;
}

int gp_rdir_probe(const char *dir, gp_rdir_view *out, gp_diag *d)
{
    char path[4096];
    memset(out, 0, sizeof(*out));
    if (gp_rdir_path(path, sizeof(path), dir, GP_RDIR_SUPERVISOR_PID) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    gp_diag ignored;
    int sup = gp_rdir_read_pid(dir, GP_RDIR_SUPERVISOR_PID, &out->supervisor, &ignored);
    bool child = gp_rdir_read_pid(dir, GP_RDIR_CHILD_PID, &out->child, &ignored) == 0;
    bool sup_alive = gp_rdir_pid_alive(&out->supervisor);
    out->supervisor_alive = sup_alive && names_dir(out->supervisor.pid, dir);
    /* No trustworthy supervisor.pid (missing, garbled, or naming a live process that is not a
     * supervisor of this directory): look for the supervisor itself. A supervisor.pid naming a
     * process that is gone says the supervisor is gone. */
    if (!out->supervisor_alive && (sup < 0 || sup_alive)) {
        out->supervisor_alive = gp_rdir_find_supervisor(dir, &out->supervisor) == 0;
    }
    out->child_alive = child && gp_rdir_pid_alive(&out->child);
    /* Status last: a supervisor that exited after the liveness check above has written its
     * final record before exiting, so a dead supervisor with a "running" record was lost. */
    int rc = gp_rdir_read_status(dir, &out->status, d);
    out->status_unreadable = rc < 0 && rc != GP_ENOENT;
    if (!child && !out->status_unreadable) {
        out->child = out->status.child; /* child.pid unreadable: the record's copy */
        out->child_alive = gp_rdir_pid_alive(&out->child);
    }
    return 0;
}
