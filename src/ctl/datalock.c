/*
 * The data directory's lock (datalock.h): flock(2) on DATA_DIR/gpupoold.lock, the holder's pid
 * written into the file.
 */
#include "ctl/datalock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define PATH_CAP 4096

/* The pid written in the lock file at fd, or 0 when it holds none (the holder may be between
 * taking the lock and writing its pid). */
static long holder_pid(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    return end != buf && pid > 0 ? pid : 0;
}

int ctl_datalock_take(const char *data_dir, int *fd, gp_diag *d)
{
    char path[PATH_CAP];
    snprintf(path, sizeof(path), "%s/%s", data_dir, CTL_DATALOCK_FILE);
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (*fd < 0) {
        return gp_diag_set(d, GP_EIO, "data_dir lock %s: %s", path, strerror(errno));
    }
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        long pid = e == EWOULDBLOCK ? holder_pid(*fd) : 0;
        close(*fd);
        *fd = -1;
        if (e != EWOULDBLOCK) {
            return gp_diag_set(d, GP_EIO, "data_dir lock %s: %s", path, strerror(e));
        }
        if (pid > 0) {
            return gp_diag_set(d, GP_ESTATE,
                               "data_dir %s is in use by another gpupoold (pid %ld holds %s)",
                               data_dir, pid, path);
        }
        return gp_diag_set(d, GP_ESTATE,
                           "data_dir %s is in use by another gpupoold (it holds %s and is "
                           "starting; its pid is not written yet)",
                           data_dir, path);
    }
    char line[32];
    int len = snprintf(line, sizeof(line), "%ld\n", (long)getpid());
    if (ftruncate(*fd, 0) != 0 || pwrite(*fd, line, (size_t)len, 0) != len) {
        int e = errno;
        close(*fd);
        *fd = -1;
        return gp_diag_set(d, GP_EIO, "data_dir lock %s: writing the pid: %s", path, strerror(e));
    }
    return 0;
}

void ctl_datalock_release(int fd)
{
    if (fd >= 0) {
        close(fd); /* drops the flock; the file stays (see datalock.h) */
    }
}
