/*
 * The store's public functions (store.h): each dispatches through the handle's operations table
 * (store_ops.h) to its backend, and gp_store_open_url picks the backend from a URL.
 */
#include "store/store_ops.h"

#include <stdio.h>
#include <string.h>

#define STORE_DISPATCH(cls, name, params, args)                                                    \
    int gp_store_##name params                                                                     \
    {                                                                                              \
        return s->ops->name args;                                                                  \
    }
GP_STORE_OPS(STORE_DISPATCH)
#undef STORE_DISPATCH

int gp_store_version(gp_store *s)
{
    return s->ops->version(s);
}

void gp_store_rollback(gp_store *s)
{
    s->ops->rollback(s);
}

void gp_store_savepoint_rollback(gp_store *s)
{
    s->ops->savepoint_rollback(s);
}

void gp_store_close(gp_store *s)
{
    if (s) {
        s->ops->close(s);
    }
}

const char *gp_store_backend(const gp_store *s)
{
    return s->ops->name;
}

int gp_store_open(const char *path, gp_store **out, gp_diag *d)
{
    return gp__sqlite_open(path, out, d);
}

int gp_store_open_url(const char *url, gp_store **out, gp_diag *d)
{
    *out = NULL;
    if (!url || !url[0]) {
        return gp_diag_set(d, GP_EINVAL,
                           "store.url: empty; expected sqlite:PATH or "
                           "postgresql://...");
    }
    if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0) {
        return gp__pg_open(url, out, d);
    }
    const char *path = url;
    if (strncmp(url, "sqlite:", 7) == 0) {
        path = url + 7;
    } else if (strstr(url, "://") || strchr(url, '=')) {
        /* A URL of another scheme, or a libpq key=value string: not a file name anyone meant. */
        return gp_diag_set(d, GP_EINVAL,
                           "store.url %s: unknown kind of store; expected sqlite:PATH or "
                           "postgresql://...",
                           url);
    }
    if (!path[0]) {
        return gp_diag_set(d, GP_EINVAL, "store.url %s: no file after sqlite:", url);
    }
    return gp__sqlite_open(path, out, d);
}

/* ---- the lease's rules, the same for every backend ---- */

int gp__lease_acquire_row(gp__lease_row *row, const char *holder, int64_t ttl_ms, gp_diag *d)
{
    if (!holder || !holder[0] || strlen(holder) >= sizeof(row->holder)) {
        return gp_diag_set(d, GP_EINVAL, "lease holder: must be 1 to %zu characters",
                           sizeof(row->holder) - 1);
    }
    if (ttl_ms <= 0) {
        return gp_diag_set(d, GP_EINVAL, "lease ttl_ms: must be positive, not %lld",
                           (long long)ttl_ms);
    }
    int live = row->holder[0] && row->expires_ms > row->now_ms;
    if (live && strcmp(row->holder, holder) != 0) {
        return gp_diag_set(d, GP_ESTATE, "lease held by %s with token %lld for %lld ms more",
                           row->holder, (long long)row->token,
                           (long long)(row->expires_ms - row->now_ms));
    }
    if (!live) { /* free or expired: a takeover, with a new token */
        row->token++;
        snprintf(row->holder, sizeof(row->holder), "%s", holder);
    }
    row->expires_ms = row->now_ms + ttl_ms;
    return 0;
}

int gp__lease_check_row(const gp__lease_row *row, const char *holder, int64_t token, gp_diag *d)
{
    if (row->token != token || strcmp(row->holder, holder) != 0) {
        return gp_diag_set(d, GP_ESTATE, "lease lost: held by %s with token %lld",
                           row->holder[0] ? row->holder : "nobody", (long long)row->token);
    }
    if (row->expires_ms <= row->now_ms) {
        return gp_diag_set(d, GP_ESTATE, "lease lost: token %lld of %s expired %lld ms ago",
                           (long long)token, holder, (long long)(row->now_ms - row->expires_ms));
    }
    return 0;
}
