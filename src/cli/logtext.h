/*
 * The pure parts of `gpupool logs`: --since values, the times of lines from the agent's times
 * file (agent/logcap.h: "OFFSET UNIX_MS" lines), and the timestamps printed. No I/O, no clock:
 * the current time is passed in.
 */
#ifndef GP_CLI_LOGTEXT_H
#define GP_CLI_LOGTEXT_H

#include <stddef.h>
#include <stdint.h>

/* --since: a duration before now_ms ("90s", "10m", "2h", "3d"; a bare number is seconds) or an
 * RFC 3339 time ("2026-05-01T12:00:00Z", "...T12:00:00.5+02:00"). *since_ms: ms since the
 * epoch. 0, or -1 for anything else (a zero or negative duration included). */
int gp_logs_parse_since(const char *s, int64_t now_ms, int64_t *since_ms);

/* ms since the epoch as RFC 3339 in UTC with milliseconds: 2026-05-01T12:00:00.250Z. */
void gp_logs_format_time(int64_t ms, char *buf, size_t cap);

/* The records of a times file, in offset order. */
typedef struct gp_logs_times {
    int64_t *off, *ms;
    size_t n, cap;
} gp_logs_times;

/* Adds the complete records ("OFFSET UNIX_MS\n") at the start of text[0, len); a malformed one
 * is skipped. Returns the bytes used (a last record without its newline is left for the next
 * call), or -1 when out of memory. */
long gp_logs_times_add(gp_logs_times *t, const char *text, size_t len);
/* The time of the line starting at offset: that of the last record at or before it; 0 when
 * none is. */
int64_t gp_logs_times_at(const gp_logs_times *t, int64_t offset);
void gp_logs_times_fini(gp_logs_times *t);

#endif
