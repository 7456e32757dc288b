/* Secrets written to files (secretfile.h). */
#include "cli/secretfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

int gp_cli_write_secret(const char *path, const char *secret)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    bool ok = f && fprintf(f, "%s\n", secret) > 0 && fflush(f) == 0 && fsync(fd) == 0;
    if (f ? fclose(f) != 0 : (fd >= 0 && close(fd) != 0)) {
        ok = false;
    }
    if (ok && rename(tmp, path) == 0) {
        return 0;
    }
    int e = errno;
    unlink(tmp);
    errno = e;
    return -1;
}
