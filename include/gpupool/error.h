/*
 * Error codes of gpupool.
 *
 * Every function that can fail returns 0 or a negative GP_E* code. One X-macro table gives each
 * code its value, its name, its message and the HTTP status an API answer carries for it, so the
 * four can never drift apart. Context (which field, which file and line) travels beside the code
 * in a gp_diag at the boundaries where it is known: config, store, HTTP, CLI.
 */
#ifndef GPUPOOL_ERROR_H
#define GPUPOOL_ERROR_H

#include <stddef.h>

/* X(NAME, value, http_status, message) */
#define GP_ERROR_MAP(X)                                                                            \
    X(EINVAL, -1, 400, "invalid argument")                                                         \
    X(ENOMEM, -2, 500, "out of memory")                                                            \
    X(ENOENT, -3, 404, "not found")                                                                \
    X(EEXIST, -4, 409, "already exists")                                                           \
    X(ENOSPC, -5, 409, "insufficient capacity")                                                    \
    X(ERANGE, -6, 400, "value out of range")                                                       \
    X(EPARSE, -7, 400, "malformed input")                                                          \
    X(EIO, -8, 500, "input/output error")                                                          \
    X(ESTATE, -9, 409, "operation not allowed in the current state")                               \
    X(ENOTSUP, -10, 501, "not supported")                                                          \
    X(EINTERNAL, -11, 500, "internal error")                                                       \
    X(EAUTH, -12, 401, "authentication required")                                                  \
    X(EPERM, -13, 403, "permission denied")                                                        \
    X(ETOOBIG, -14, 413, "request too large")                                                      \
    X(EUNAVAIL, -15, 503, "service unavailable")

typedef enum gp_error {
    GP_OK = 0,
#define GP_ERROR_ENUM(name, value, http, msg) GP_##name = (value),
    GP_ERROR_MAP(GP_ERROR_ENUM)
#undef GP_ERROR_ENUM
} gp_error;

/* Name of a code ("GP_EINVAL"); "GP_OK" for 0; "GP_E?" for an unknown code. Static storage. */
const char *gp_strerror_name(int code);
/* Human message of a code; static storage. */
const char *gp_strerror(int code);
/* HTTP status an API answer uses for the code (200 for 0, 500 for unknown codes). */
int gp_error_http_status(int code);

/* A code plus a human-readable message naming what is wrong (field, file, line). Embedded by the
 * caller; no heap. */
typedef struct gp_diag {
    int code;
    char msg[512];
} gp_diag;

/* Resets a diag to GP_OK with an empty message. Accepts NULL. */
void gp_diag_clear(gp_diag *d);
/* Records code and a printf-style message in d (if d is not NULL) and returns code, so that
 * `return gp_diag_set(d, GP_EINVAL, "replicas: must be ...");` reads naturally. */
int gp_diag_set(gp_diag *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
