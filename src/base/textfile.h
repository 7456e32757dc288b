/*
 * Whole small text files (specs, profiles, tables of /proc and /etc) read into one string.
 */
#ifndef GP_BASE_TEXTFILE_H
#define GP_BASE_TEXTFILE_H

#include <stddef.h>

/* All of fd, at most max bytes, as a new NUL-terminated string (free it); *len, when len is not
 * NULL, its length. NULL with errno set: EFBIG when there is more than max, ENOMEM, or what read
 * failed with. */
char *gp_text_read_fd(int fd, size_t max, size_t *len);

/* The same for the file at path (opened non-blocking: a FIFO never waits). NULL with errno set,
 * open's included (ENOENT: no such file). */
char *gp_text_read(const char *path, size_t max, size_t *len);

#endif
