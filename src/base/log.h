/*
 * Logging front end: one line per event, `ts=... level=... sub=... msg="..."` on stderr, or the
 * same fields as a JSON object per line.
 *
 * GP_LOG filters on the level before any formatting happens, so a disabled debug line costs one
 * comparison. The threshold is process-wide state set once by main() (gp_log_set_level); it is
 * the only global in libgpbase and is never touched by libgpcore.
 */
#ifndef GP_BASE_LOG_H
#define GP_BASE_LOG_H

typedef enum gp_log_level {
    GP_LOG_DEBUG = 0,
    GP_LOG_INFO = 1,
    GP_LOG_WARN = 2,
    GP_LOG_ERROR = 3,
    GP_LOG_OFF = 4,
} gp_log_level;

extern int gp_log_threshold;

void gp_log_set_level(gp_log_level level);
/* Non-zero: JSON lines ({"ts", "level", "sub", "msg"}) instead of key=value text. Set once by
 * main() before any thread starts. */
void gp_log_set_json(int on);
/* Parses "debug", "info", "warn", "error", "off"; returns 0 or GP_EINVAL. */
int gp_log_parse_level(const char *s, gp_log_level *out);
void gp_log_write(gp_log_level level, const char *subsystem, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define GP_LOG(level, subsystem, ...)                                                              \
    do {                                                                                           \
        if ((int)(level) >= gp_log_threshold) {                                                    \
            gp_log_write((level), (subsystem), __VA_ARGS__);                                       \
        }                                                                                          \
    } while (0)

#endif
