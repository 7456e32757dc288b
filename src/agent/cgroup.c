/*
 * cgroup v2 / v1 limits of a replica (layout and policy in cgroup.h).
 *
 * Everything here is plain file I/O on cgroupfs, so the unit tests drive it against an ordinary
 * directory laid out like one.
 */
#define _DEFAULT_SOURCE /* DT_DIR */

#include "agent/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int join(char *buf, size_t size, const char *a, const char *b)
{
    int n = snprintf(buf, size, "%s/%s", a, b);
    return n < 0 || (size_t)n >= size ? GP_ERANGE : 0;
}

static int exists(const char *dir, const char *name)
{
    char p[1200];
    return join(p, sizeof(p), dir, name) == 0 && access(p, F_OK) == 0;
}

gp_cgroup_version gp_cgroup_detect(const char *root)
{
    if (exists(root, "cgroup.controllers")) {
        return GP_CGROUP_V2;
    }
    if (exists(root, "cpu/cgroup.procs") || exists(root, "memory/cgroup.procs")) {
        return GP_CGROUP_V1;
    }
    return GP_CGROUP_NONE;
}

/* Writes text to DIR/FILE (one write, as cgroupfs wants). */
static int put(const char *dir, const char *file, const char *text, gp_diag *d)
{
    char p[1200];
    if (join(p, sizeof(p), dir, file) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return gp_diag_set(d, GP_EIO, "%s: %s", p, strerror(errno));
    }
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int e = errno;
    close(fd);
    if (n != (ssize_t)len) {
        return gp_diag_set(d, GP_EIO, "%s: writing \"%s\": %s", p, text,
                           n < 0 ? strerror(e) : "short write");
    }
    return 0;
}

static int make_dir(const char *path, gp_diag *d)
{
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        return gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
    }
    return 0;
}

/* Adds dir (ROOT-relative parts joined) to cg after creating it and its "gpupool" parent. */
static int add_dir(gp_cgroup *cg, const char *base, const char *name, gp_diag *d)
{
    char parent[1024];
    char *leaf = cg->dirs[cg->ndirs];
    if (join(parent, sizeof(parent), base, "gpupool") < 0 ||
        join(leaf, sizeof(cg->dirs[0]), parent, name) < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", base);
    }
    int rc = make_dir(parent, d);
    if (rc == 0 && mkdir(leaf, 0755) < 0) {
        rc = gp_diag_set(d, GP_EIO, "%s: %s", leaf, strerror(errno));
    }
    if (rc == 0) {
        cg->ndirs++;
    }
    return rc;
}

/* Enables the controllers in DIR/cgroup.subtree_control unless they are on already (an operator
 * may have delegated a tree we cannot write at the top). */
static int enable(const char *dir, int64_t cpu_milli, int64_t memory_mib, gp_diag *d)
{
    char p[1200], have[256] = "";
    if (join(p, sizeof(p), dir, "cgroup.subtree_control") < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", dir);
    }
    FILE *f = fopen(p, "re");
    if (f) {
        if (!fgets(have, sizeof(have), f)) {
            have[0] = '\0';
        }
        fclose(f);
    }
    char *tok, *save = NULL;
    int cpu_on = 0, mem_on = 0;
    for (tok = strtok_r(have, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
        cpu_on |= strcmp(tok, "cpu") == 0;
        mem_on |= strcmp(tok, "memory") == 0;
    }
    int rc = 0;
    if (cpu_milli > 0 && !cpu_on) {
        rc = put(dir, "cgroup.subtree_control", "+cpu", d);
    }
    if (rc == 0 && memory_mib > 0 && !mem_on) {
        rc = put(dir, "cgroup.subtree_control", "+memory", d);
    }
    return rc;
}

static int create_v2(gp_cgroup *cg, const char *root, const char *name, int64_t cpu_milli,
                     int64_t memory_mib, gp_diag *d)
{
    char parent[1024], text[64];
    if (join(parent, sizeof(parent), root, "gpupool") < 0) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", root);
    }
    int rc = make_dir(parent, d);
    rc = rc ? rc : enable(root, cpu_milli, memory_mib, d);
    rc = rc ? rc : enable(parent, cpu_milli, memory_mib, d);
    rc = rc ? rc : add_dir(cg, root, name, d);
    if (rc == 0 && cpu_milli > 0) {
        snprintf(text, sizeof(text), "%lld 100000", (long long)(cpu_milli * 100));
        rc = put(cg->dirs[0], "cpu.max", text, d);
    }
    if (rc == 0 && memory_mib > 0) {
        snprintf(text, sizeof(text), "%lld", (long long)(memory_mib * 1024 * 1024));
        rc = put(cg->dirs[0], "memory.max", text, d);
    }
    return rc;
}

static int create_v1(gp_cgroup *cg, const char *root, const char *name, int64_t cpu_milli,
                     int64_t memory_mib, gp_diag *d)
{
    char base[1024], text[64];
    int rc = 0;
    if (cpu_milli > 0) {
        rc = join(base, sizeof(base), root, "cpu") < 0
                 ? gp_diag_set(d, GP_ERANGE, "%s: path too long", root)
                 : add_dir(cg, base, name, d);
        rc = rc ? rc : put(cg->dirs[cg->ndirs - 1], "cpu.cfs_period_us", "100000", d);
        snprintf(text, sizeof(text), "%lld", (long long)(cpu_milli * 100));
        rc = rc ? rc : put(cg->dirs[cg->ndirs - 1], "cpu.cfs_quota_us", text, d);
    }
    if (rc == 0 && memory_mib > 0) {
        rc = join(base, sizeof(base), root, "memory") < 0
                 ? gp_diag_set(d, GP_ERANGE, "%s: path too long", root)
                 : add_dir(cg, base, name, d);
        snprintf(text, sizeof(text), "%lld", (long long)(memory_mib * 1024 * 1024));
        rc = rc ? rc : put(cg->dirs[cg->ndirs - 1], "memory.limit_in_bytes", text, d);
    }
    return rc;
}

int gp_cgroup_create(gp_cgroup *cg, const char *root, const char *name, int64_t cpu_milli,
                     int64_t memory_mib, gp_diag *d)
{
    memset(cg, 0, sizeof(*cg));
    if (cpu_milli <= 0 && memory_mib <= 0) {
        return 0;
    }
    gp_cgroup_version v = gp_cgroup_detect(root);
    int rc;
    if (v == GP_CGROUP_V2) {
        rc = create_v2(cg, root, name, cpu_milli, memory_mib, d);
    } else if (v == GP_CGROUP_V1) {
        rc = create_v1(cg, root, name, cpu_milli, memory_mib, d);
    } else {
        return gp_diag_set(d, GP_ENOTSUP, "%s: neither cgroup v2 nor v1 cpu/memory found", root);
    }
    cg->version = v;
    if (rc < 0) {
        gp_diag inner;
        gp_cgroup_remove(cg, &inner);
        memset(cg, 0, sizeof(*cg));
    }
    return rc;
}

int gp_cgroup_add(const gp_cgroup *cg, pid_t pid, gp_diag *d)
{
    char text[32];
    snprintf(text, sizeof(text), "%ld", (long)pid);
    for (int i = 0; i < cg->ndirs; i++) {
        int rc = put(cg->dirs[i], "cgroup.procs", text, d);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

/* SIGKILLs the processes listed in DIR/cgroup.procs; returns how many were listed. */
static int kill_listed(const char *dir)
{
    char p[1200];
    if (join(p, sizeof(p), dir, "cgroup.procs") < 0) {
        return 0;
    }
    FILE *f = fopen(p, "re");
    if (!f) {
        return 0;
    }
    long pid;
    int n = 0;
    while (fscanf(f, "%ld", &pid) == 1) {
        if (pid > 0 && pid != (long)getpid()) {
            kill((pid_t)pid, SIGKILL);
            n++;
        }
    }
    fclose(f);
    return n;
}

int gp_cgroup_kill(const gp_cgroup *cg)
{
    int n = 0;
    for (int i = 0; i < cg->ndirs; i++) {
        if (cg->version == GP_CGROUP_V2 && exists(cg->dirs[i], "cgroup.kill")) {
            gp_diag ignored;
            n += kill_listed(cg->dirs[i]) > 0;
            put(cg->dirs[i], "cgroup.kill", "1", &ignored);
        } else {
            n += kill_listed(cg->dirs[i]);
        }
    }
    return n;
}

int gp_cgroup_remove(gp_cgroup *cg, gp_diag *d)
{
    int rc = 0;
    for (int i = 0; i < cg->ndirs; i++) {
        /* rmdir fails with EBUSY while killed processes are still on their way out. */
        int e;
        for (int tries = 0;; tries++) {
            e = rmdir(cg->dirs[i]) == 0 ? 0 : errno;
            if (e != EBUSY || tries == 50) {
                break;
            }
            kill_listed(cg->dirs[i]);
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (e && e != ENOENT) {
            rc = gp_diag_set(d, GP_EIO, "%s: cannot remove: %s", cg->dirs[i], strerror(e));
        }
    }
    return rc;
}

void gp_cgroup_describe(const gp_cgroup *cg, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < cg->ndirs && o < size; i++) {
        int n = snprintf(buf + o, size - o, "%s%s", i ? "," : "", cg->dirs[i]);
        o += n > 0 ? (size_t)n : 0;
    }
}

/* ---- a process's replica, by its group ---- */

int gp_cgroup_name(char *buf, size_t size, int64_t job, int replica, int64_t epoch, long pid)
{
    int n = snprintf(buf, size, "job%lld-r%d-e%lld-p%ld", (long long)job, replica, (long long)epoch,
                     pid);
    return n < 0 || (size_t)n >= size ? GP_ERANGE : 0;
}

/* Digits at *p (at most 18: no overflow) into *v, then the character after them must be one of
 * ends (or the end of the string). Advances *p past the digits. */
static int digits(const char **p, const char *ends, int64_t *v)
{
    int64_t x = 0;
    int n = 0;
    for (; **p >= '0' && **p <= '9' && n < 18; (*p)++, n++) {
        x = x * 10 + (**p - '0');
    }
    if (n == 0 || (**p >= '0' && **p <= '9') || !strchr(ends, **p)) {
        return -1;
    }
    *v = x;
    return 0;
}

static int expect(const char **p, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0) {
        return -1;
    }
    *p += n;
    return 0;
}

/* One path component [c, end) that is a replica's NAME. */
static int parse_name(const char *c, const char *end, gp_cgroup_replica *out)
{
    char name[96];
    if ((size_t)(end - c) >= sizeof(name)) {
        return 0;
    }
    memcpy(name, c, (size_t)(end - c));
    name[end - c] = '\0';
    const char *p = name;
    int64_t job, replica, epoch, pid;
    if (expect(&p, "job") || digits(&p, "-", &job) || expect(&p, "-r") ||
        digits(&p, "-", &replica) || expect(&p, "-e") || digits(&p, "-", &epoch) ||
        expect(&p, "-p") || digits(&p, "", &pid) || replica > INT32_MAX) {
        return 0;
    }
    *out = (gp_cgroup_replica){job, (int)replica, epoch};
    return 1;
}

/* The first "gpupool/NAME" pair of components in a path [p, end). */
static int path_owner(const char *p, const char *end, gp_cgroup_replica *out)
{
    const char *prev = NULL, *prev_end = NULL;
    while (p < end) {
        while (p < end && *p == '/') {
            p++;
        }
        const char *c = p;
        while (p < end && *p != '/') {
            p++;
        }
        if (c == p) {
            break;
        }
        if (prev && prev_end - prev == 7 && strncmp(prev, "gpupool", 7) == 0 &&
            parse_name(c, p, out)) {
            return 1;
        }
        prev = c;
        prev_end = p;
    }
    return 0;
}

int gp_cgroup_parse_owner(const char *text, gp_cgroup_replica *out, char *path, size_t cap)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        const char *end = nl ? nl : line + strlen(line);
        const char *c1 = memchr(line, ':', (size_t)(end - line));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
        if (c2 && path_owner(c2 + 1, end, out)) {
            if (path && cap) {
                snprintf(path, cap, "%.*s", (int)(end - c2 - 1), c2 + 1);
            }
            return 1;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

int gp_cgroup_owner_of(pid_t pid, gp_cgroup_replica *out, char *path, size_t cap)
{
    char file[64], text[8192];
    snprintf(file, sizeof(file), "/proc/%ld/cgroup", (long)pid);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT || errno == ESRCH ? GP_ENOENT : GP_EIO;
    }
    size_t len = 0;
    ssize_t n;
    while (len < sizeof(text) - 1 && (n = read(fd, text + len, sizeof(text) - 1 - len)) > 0) {
        len += (size_t)n;
    }
    close(fd);
    text[len] = '\0';
    return gp_cgroup_parse_owner(text, out, path, cap);
}

/* Removes the directory tree at path, deepest first (rmdir only: a cgroup directory holds no
 * files to delete). depth bounds the walk. */
static void remove_cgroup_tree(const char *path, int depth)
{
    DIR *dir = depth < 8 ? opendir(path) : NULL;
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char sub[1200];
        if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
            join(sub, sizeof(sub), path, e->d_name) == 0) {
            remove_cgroup_tree(sub, depth + 1);
        }
    }
    if (dir) {
        closedir(dir);
    }
    for (int tries = 0; rmdir(path) != 0 && errno == EBUSY && tries < 50; tries++) {
        kill_listed(path);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void gp_cgroup_remove_named(const char *root, const char *name)
{
    char path[1200], rel[300];
    snprintf(rel, sizeof(rel), "gpupool/%s", name);
    if (exists(root, "cgroup.controllers")) {
        if (join(path, sizeof(path), root, rel) == 0) {
            remove_cgroup_tree(path, 0);
        }
        return;
    }
    DIR *dir = opendir(root); /* v1 and hybrid: one hierarchy per directory, unified too */
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char base[1100];
        if (e->d_name[0] == '.' || join(base, sizeof(base), root, e->d_name) < 0 ||
            join(path, sizeof(path), base, rel) < 0 || access(path, F_OK) != 0) {
            continue;
        }
        remove_cgroup_tree(path, 0);
    }
    if (dir) {
        closedir(dir);
    }
}

void gp_cgroup_describe_named(const char *root, const char *name, char *buf, size_t size)
{
    if (exists(root, "cgroup.controllers")) {
        snprintf(buf, size, "%s/gpupool/%s", root, name);
    } else {
        snprintf(buf, size, "%s/cpu/gpupool/%s,%s/memory/gpupool/%s", root, name, root, name);
    }
}
