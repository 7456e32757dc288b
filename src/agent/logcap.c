/*
 * Capped log files (policy in logcap.h).
 */
#include "agent/logcap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"

static int open_file(gp_logcap *lc, int flags, gp_diag *d)
{
    lc->fd = open(lc->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | flags, 0644);
    if (lc->fd < 0) {
        return gp_diag_set(d, GP_EIO, "%s: %s", lc->path, strerror(errno));
    }
    struct stat st;
    lc->size = fstat(lc->fd, &st) == 0 ? (int64_t)st.st_size : 0;
    return 0;
}

int gp_logcap_open(gp_logcap *lc, const char *path, int64_t cap, gp_diag *d)
{
    memset(lc, 0, sizeof(*lc));
    lc->fd = -1;
    lc->cap = cap < 0 ? 0 : cap;
    if (snprintf(lc->path, sizeof(lc->path), "%s", path) >= (int)sizeof(lc->path)) {
        return gp_diag_set(d, GP_ERANGE, "%s: path too long", path);
    }
    return open_file(lc, 0, d);
}

static int rotate(gp_logcap *lc, gp_diag *d)
{
    char old[sizeof(lc->path) + 2];
    snprintf(old, sizeof(old), "%s.1", lc->path);
    close(lc->fd);
    lc->fd = -1;
    int e = rename(lc->path, old) < 0 ? errno : 0;
    lc->rotations++;
    /* A file that cannot be renamed is truncated instead, so the cap holds either way. */
    if (e) {
        GP_LOG(GP_LOG_WARN, "run", "%s: rename: %s; truncated instead", lc->path, strerror(e));
    }
    return open_file(lc, O_TRUNC, d);
}

int gp_logcap_write(gp_logcap *lc, const void *buf, size_t n, gp_diag *d)
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
        ssize_t w = write(lc->fd, p, chunk);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return gp_diag_set(d, GP_EIO, "%s: %s", lc->path, strerror(errno));
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
    lc->fd = -1;
}
