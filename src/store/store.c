/*
 * The store's public functions (store.h): each dispatches through the handle's operations table
 * (store_ops.h) to its backend, and gp_store_open_url picks the backend from a URL.
 */
#include "store/store_ops.h"

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
        return gp_diag_set(d, GP_ENOTSUP, "store.url %s: PostgreSQL is not built in", url);
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
