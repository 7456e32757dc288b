/*
 * Capped log files (policy in logcap.h).
 */
#include "agent/logcap.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"

/* PATH.times (suffix "") or PATH.times.1 (suffix ".1") into buf. */
static void times_path(const gp_logcap *lc, const char *suffix, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s.times%s", lc->path, suffix);
}

static int open_file(gp_logcap *lc, int flags, gp_diag *d)
{
    char tpath[sizeof(lc->path) + 16];
    lc->fd = open(lc->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | flags, 0644);
    if (lc->fd < 0) {
        return gp_diag_set(d, GP_EIO, "%s: %s", lc->path, strerror(errno));
    }
    struct stat st;
    lc->size = fstat(lc->fd, &st) == 0 ? (int64_t)st.st_size : 0;
    /* an existing file that does not end a line: the next line starts after its next '\n' */
    char last = '\n';
    lc->at_line_start =
        lc->size == 0 || (pread(lc->fd, &last, 1, lc->size - 1) == 1 && last == '\n');
    times_path(lc, "", tpath, sizeof(tpath));
    lc->tfd = open(tpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | flags, 0644);
    if (lc->tfd < 0) {
        GP_LOG(GP_LOG_WARN, "run", "%s: %s; the output's times are not kept", tpath,
               strerror(errno));
    } else if (fstat(lc->tfd, &st) == 0 && st.st_size == 0 &&
               write(lc->tfd, GP_LOGCAP_TIMES_MAGIC, sizeof(GP_LOGCAP_TIMES_MAGIC) - 1) !=
                   (ssize_t)sizeof(GP_LOGCAP_TIMES_MAGIC) - 1) {
        close(lc->tfd);
        lc->tfd = -1;
    }
    return 0;
}

/* Records the time of the first line that the bytes p[0, n), about to be written at lc->size,
 * start (none when no line starts in them). */
static void record_time(gp_logcap *lc, const char *p, size_t n, int64_t now_ms)
{
    int64_t start = -1;
    if (lc->at_line_start) {
        start = lc->size;
    } else {
        const char *nl = memchr(p, '\n', n);
        start = nl && (size_t)(nl - p) + 1 < n ? lc->size + (nl - p) + 1 : -1;
    }
    lc->at_line_start = p[n - 1] == '\n';
    if (start < 0 || lc->tfd < 0) {
        return;
    }
    char rec[64];
    int len = snprintf(rec, sizeof(rec), "%lld %lld\n", (long long)start, (long long)now_ms);
    if (write(lc->tfd, rec, (size_t)len) != len) {
        close(lc->tfd);
        lc->tfd = -1; /* times lost from here, the output is not */
    }
}

int gp_logcap_open(gp_logcap *lc, const char *path, int64_t cap, gp_diag *d)
{
    memset(lc, 0, sizeof(*lc));
    lc->fd = -1;
    lc->tfd = -1;
    lc->cap = cap < 0 ? 0 : cap;
    if (snprintf(lc->path, sizeof(lc->path), "%s", path) >= (int)sizeof(lc->path)) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", path);
    }
    return open_file(lc, 0, d);
}

static int rotate(gp_logcap *lc, gp_diag *d)
{
    char old[sizeof(lc->path) + 2], times[sizeof(lc->path) + 16], times_old[sizeof(times)];
    snprintf(old, sizeof(old), "%s.1", lc->path);
    times_path(lc, "", times, sizeof(times));
    times_path(lc, ".1", times_old, sizeof(times_old));
    close(lc->fd);
    lc->fd = -1;
    if (lc->tfd >= 0) {
        close(lc->tfd);
        lc->tfd = -1;
    }
    int e = rename(lc->path, old) < 0 ? errno : 0;
    if (!e && rename(times, times_old) < 0) {
        unlink(times); /* times that no longer match the file are worse than none */
    }
    lc->rotations++;
    /* A file that cannot be renamed is truncated instead, so the cap holds either way. */
    if (e) {
        GP_LOG(GP_LOG_WARN, "run", "%s: rename: %s; truncated instead", lc->path, strerror(e));
    }
    return open_file(lc, O_TRUNC, d);
}

int gp_logcap_write(gp_logcap *lc, const void *buf, size_t n, int64_t now_ms, gp_diag *d)
{
    const char *p = buf;
    while (n > 0) {
        if (lc->fd < 0) {
            return gp_diag_set(d, GP_EIO, "%s: not open", lc->path);
        }
        if (lc->cap > 0 && lc->size >= lc->cap) {
            int rc = rotate(lc, d);
            if (rc < 0) {
                return rc;
            }
            continue;
        }
        size_t chunk = n;
        if (lc->cap > 0 && (int64_t)chunk > lc->cap - lc->size) {
            chunk = (size_t)(lc->cap - lc->size);
        }
        bool at_start = lc->at_line_start;
        record_time(lc, p, chunk, now_ms);
        ssize_t w = write(lc->fd, p, chunk);
        if (w < 0 && errno == EINTR) {
            lc->at_line_start = at_start;
            continue;
        }
        if (w <= 0) {
            return gp_diag_set(d, GP_EIO, "%s: %s", lc->path, strerror(errno));
        }
        if ((size_t)w < chunk) {
            lc->at_line_start = p[w - 1] == '\n';
        }
        p += w;
        n -= (size_t)w;
        lc->size += w;
    }
    return 0;
}

void gp_logcap_close(gp_logcap *lc)
{
    if (lc->fd >= 0) {
        close(lc->fd);
    }
    if (lc->tfd >= 0) {
        close(lc->tfd);
    }
    lc->fd = -1;
    lc->tfd = -1;
}
