/*
 * Log sink: formats into a stack buffer and writes the whole line with one write(2), so lines
 * from concurrent threads or processes never interleave.
 */
#include "base/log.h"

#include "gpupool/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int gp_log_threshold = GP_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error", "off"};

void gp_log_set_level(gp_log_level level)
{
    gp_log_threshold = (int)level;
}

int gp_log_parse_level(const char *s, gp_log_level *out)
{
    for (int i = 0; i <= GP_LOG_OFF; i++) {
        if (strcmp(s, level_names[i]) == 0) {
            *out = (gp_log_level)i;
            return 0;
        }
    }
    return GP_EINVAL;
}

void gp_log_write(gp_log_level level, const char *subsystem, const char *fmt, ...)
{
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(
        line, sizeof(line), "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s sub=%s msg=\"",
        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
        ts.tv_nsec / 1000000L, level_names[level < 0 || level > GP_LOG_OFF ? 0 : level], subsystem);
    if (n < 0 || (size_t)n >= sizeof(line)) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 2, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2) {
        len = sizeof(line) - 2;
    }
    line[len++] = '"';
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
