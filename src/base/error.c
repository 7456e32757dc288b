/*
 * The error table: names, messages and HTTP statuses generated from GP_ERROR_MAP.
 * Pure: no I/O, usable from libgpcore.
 */
#include "gpupool/error.h"

#include <stdarg.h>
#include <stdio.h>

struct error_info {
    int code;
    int http;
    const char *name;
    const char *msg;
};

static const struct error_info error_table[] = {
#define GP_ERROR_ROW(name, value, http, msg) {(value), (http), "GP_" #name, (msg)},
    GP_ERROR_MAP(GP_ERROR_ROW)
#undef GP_ERROR_ROW
};

static const struct error_info *find(int code)
{
    for (size_t i = 0; i < sizeof(error_table) / sizeof(error_table[0]); i++) {
        if (error_table[i].code == code) {
            return &error_table[i];
        }
    }
    return NULL;
}

const char *gp_strerror_name(int code)
{
    if (code == 0) {
        return "GP_OK";
    }
    const struct error_info *e = find(code);
    return e ? e->name : "GP_E?";
}

const char *gp_strerror(int code)
{
    if (code == 0) {
        return "success";
    }
    const struct error_info *e = find(code);
    return e ? e->msg : "unknown error";
}

int gp_error_http_status(int code)
{
    if (code == 0) {
        return 200;
    }
    const struct error_info *e = find(code);
    return e ? e->http : 500;
}

void gp_diag_clear(gp_diag *d)
{
    if (d) {
        d->code = 0;
        d->msg[0] = '\0';
    }
}

int gp_diag_set(gp_diag *d, int code, const char *fmt, ...)
{
    if (d) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
        va_end(ap);
        d->code = code;
    }
    return code;
}
