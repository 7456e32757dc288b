/*
 * Whole text files into one string (contract in textfile.h).
 */
#include "base/textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

char *gp_text_read_fd(int fd, size_t max, size_t *len)
{
    size_t n = 0, cap = max < 65536 ? max : 65536;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (n == cap) {
            char *more = cap < max ? realloc(buf, (cap * 2 < max ? cap * 2 : max) + 1) : NULL;
            if (!more) {
                int e = cap < max ? ENOMEM : EFBIG;
                char probe;
                if (e == EFBIG && read(fd, &probe, 1) == 0) {
                    break; /* exactly max bytes */
                }
                free(buf);
                errno = e;
                return NULL;
            }
            buf = more;
            cap = cap * 2 < max ? cap * 2 : max;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (got == 0) {
            break;
        }
        n += (size_t)got;
    }
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    buf[n] = '\0';
    if (len) {
        *len = n;
    }
    return buf;
}

char *gp_text_read(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return NULL;
    }
    char *text = gp_text_read_fd(fd, max, len);
    int e = errno;
    close(fd);
    errno = e;
    return text;
}
