/* /proc/PID/stat (see procstat.h). */
#include "base/procstat.h"

#include "gpupool/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The number in field `field` (>= 4) of a line whose field 3 starts at p. */
static int field_at(const char *p, int field, unsigned long long *out)
{
    for (int f = 3; f < field; f++) {
        p = strchr(p, ' ');
        if (!p) {
            return GP_EPARSE;
        }
        p++;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || end == p) {
        return GP_EPARSE;
    }
    *out = v;
    return 0;
}

int gp_proc_stat_read(pid_t pid, gp_proc_stat *out)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return GP_ENOENT;
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return GP_ENOENT;
    }
    buf[n] = '\0';
    /* "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so fields are counted
     * from the last ')'. */
    const char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2]) {
        return GP_EPARSE;
    }
    p += 2;
    unsigned long long ppid, session, start;
    int rc = field_at(p, 4, &ppid);
    rc = rc ? rc : field_at(p, 6, &session);
    rc = rc ? rc : field_at(p, 22, &start);
    if (rc == 0) {
        *out = (gp_proc_stat){p[0], (pid_t)ppid, (pid_t)session, (uint64_t)start};
    }
    return rc;
}
