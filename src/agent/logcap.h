/*
 * A log file with a size cap, fed by the supervisor from the job's stdout or stderr pipe.
 *
 * Policy: rotate once. When a write would take the file past the cap, the bytes that fit are
 * written, the file is renamed to NAME.1 (replacing an older NAME.1) and a new NAME is started
 * for the rest. So the file never exceeds the cap, the newest output is always kept, and a stream
 * uses at most twice the cap on disk. A cap of 0 means no cap. An existing file is appended to
 * (its size counts against the cap), so a restarted replica keeps the earlier output.
 *
 * Times: beside each log file PATH, PATH.times records when lines were written, so that
 * `gpupool logs --timestamps|--since` can tell (the job's output carries no times of its own).
 * It starts with the line GP_LOGCAP_TIMES_MAGIC (a reader tells it from a log so). Each write that
 * starts at least one line appends one text record "OFFSET UNIX_MS\n": OFFSET is the byte offset in
 * PATH of the first line starting in that write, UNIX_MS the time given. A line's time is the time
 * of the last record at or before its start (the lines of one write were read from the job at the
 * same moment). The times file is rotated with PATH (PATH.times.1) and so bounded by it: one record
 * per write of up to 64 KiB, about 30 bytes.
 *
 * Ownership: gp_logcap is embedded by the caller (gp_logcap_open / gp_logcap_close); it owns its
 * file descriptor. Not thread-safe; the supervisor has one thread.
 */
#ifndef GP_AGENT_LOGCAP_H
#define GP_AGENT_LOGCAP_H

#include <stddef.h>
#include <stdint.h>

#include "gpupool/error.h"

/* The first line of every times file. */
#define GP_LOGCAP_TIMES_MAGIC "# gpupool log times v1\n"

typedef struct gp_logcap {
    int fd;
    int tfd;           /* PATH.times; -1 when it could not be opened (times are then lost) */
    int at_line_start; /* the next byte written starts a line */
    int64_t size, cap;
    int rotations; /* how many times the file was rotated */
    char path[4096];
} gp_logcap;

/* Opens (creating, mode 0644) path for appending. Returns 0 or GP_EIO (d says why). */
int gp_logcap_open(gp_logcap *lc, const char *path, int64_t cap, gp_diag *d);
/* Appends n bytes, rotating as described above, recording now_ms (ms since the epoch) as the
 * time of the lines they start. Returns 0 or GP_EIO. */
int gp_logcap_write(gp_logcap *lc, const void *buf, size_t n, int64_t now_ms, gp_diag *d);
/* Closes the file; safe on a closed or zeroed-then-failed gp_logcap (fd < 0). */
void gp_logcap_close(gp_logcap *lc);

#endif
