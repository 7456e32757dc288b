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

typedef struct acquire_arg {
    const char *holder;
    int64_t ttl_ms;
} acquire_arg;

static int acquire(gp__lease_row *row, const void *arg, gp_diag *d)
{
    const acquire_arg *a = arg;
    return gp__lease_acquire_row(row, a->holder, a->ttl_ms, d);
}

int gp__lease_acquire(gp_store *s, const gp__lease_io *io, const char *holder, int64_t ttl_ms,
                      int64_t *token, gp_diag *d)
{
    *token = 0;
    acquire_arg a = {holder, ttl_ms};
    gp__lease_row row;
    int rc = io->tx(s, acquire, &a, &row, d);
    if (rc == 0) {
        s->lease_token = *token = row.token;
        snprintf(s->lease_holder, sizeof(s->lease_holder), "%s", row.holder);
    }
    return rc;
}

typedef struct renew_arg {
    const gp_store *s;
    int64_t ttl_ms;
} renew_arg;

static int renew(gp__lease_row *row, const void *arg, gp_diag *d)
{
    const renew_arg *a = arg;
    if (a->ttl_ms <= 0) {
        return gp_diag_set(d, GP_EINVAL, "lease ttl_ms: must be positive, not %lld",
                           (long long)a->ttl_ms);
    }
    if (row->token != a->s->lease_token || strcmp(row->holder, a->s->lease_holder) != 0) {
        return gp_diag_set(d, GP_ESTATE, "lease lost: held by %s with token %lld",
                           row->holder[0] ? row->holder : "nobody", (long long)row->token);
    }
    row->expires_ms = row->now_ms + a->ttl_ms;
    return 0;
}

int gp__lease_renew(gp_store *s, const gp__lease_io *io, int64_t ttl_ms, gp_diag *d)
{
    if (s->lease_token == 0) {
        return gp_diag_set(d, GP_ESTATE, "lease: not held by this store");
    }
    renew_arg a = {s, ttl_ms};
    gp__lease_row row;
    int rc = io->tx(s, renew, &a, &row, d);
    if (rc == GP_ESTATE) {
        s->lease_token = 0;
    }
    return rc;
}

static int release(gp__lease_row *row, const void *arg, gp_diag *d)
{
    (void)d;
    const gp_store *s = arg;
    if (row->token == s->lease_token && strcmp(row->holder, s->lease_holder) == 0) {
        row->holder[0] = '\0';
        row->expires_ms = 0;
    }
    return 0;
}

int gp__lease_release(gp_store *s, const gp__lease_io *io, gp_diag *d)
{
    if (s->lease_token == 0) {
        return 0;
    }
    gp__lease_row row;
    int rc = io->tx(s, release, s, &row, d);
    if (rc == 0) {
        s->lease_token = 0;
    }
    return rc;
}

int gp__lease_get(gp_store *s, const gp__lease_io *io, gp_store_lease *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    gp__lease_row row;
    int rc = io->read(s, &row, d);
    if (rc < 0) {
        return rc;
    }
    int live = row.holder[0] && row.expires_ms > row.now_ms;
    snprintf(out->holder, sizeof(out->holder), "%s", row.holder);
    out->token = row.token;
    out->remaining_ms = live ? row.expires_ms - row.now_ms : 0;
    out->ours = live && s->lease_token == row.token && strcmp(s->lease_holder, row.holder) == 0;
    return 0;
}

int gp__lease_check(gp_store *s, int (*read)(gp_store *s, gp__lease_row *out, gp_diag *d),
                    gp_diag *d)
{
    if (s->lease_token == 0) {
        return 0;
    }
    gp__lease_row row;
    int rc = read(s, &row, d);
    return rc < 0 ? rc : gp__lease_check_row(&row, s->lease_holder, s->lease_token, d);
}
