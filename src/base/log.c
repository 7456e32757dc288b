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
static int log_json; /* set once by main() before threads start */

static const char *const level_names[] = {"debug", "info", "warn", "error", "off"};

void gp_log_set_level(gp_log_level level)
{
    gp_log_threshold = (int)level;
}

void gp_log_set_json(int on)
{
    log_json = on;
}

/* Copies src into dst as the inside of a JSON string; returns the bytes written. */
static size_t json_escape(char *dst, size_t cap, const char *src, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 7 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == '"' || c == '\\') {
            dst[o++] = '\\';
            dst[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(dst + o, cap - o, "\\u%04x", c);
        } else {
            dst[o++] = (char)c;
        }
    }
    return o;
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
    char msg[1536], line[4096];
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t mlen = m < 0 ? 0 : (size_t)m >= sizeof(msg) ? sizeof(msg) - 1 : (size_t)m;
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    const char *lv = level_names[level < 0 || level > GP_LOG_OFF ? 0 : level];
    int n = snprintf(line, sizeof(line),
                     log_json ? "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"level\":\"%s\","
                                "\"sub\":\"%s\",\"msg\":\""
                              : "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s sub=%s msg=\"",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000L, lv, subsystem);
    if (n < 0 || (size_t)n >= sizeof(line)) {
        return;
    }
    size_t len = (size_t)n + json_escape(line + n, sizeof(line) - (size_t)n - 3, msg, mlen);
    line[len++] = '"';
    if (log_json) {
        line[len++] = '}';
    }
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
