/*
 * SQLite backend of the store: tenants' registry credentials (see store.h), table
 * registry_credentials of migration 7, keyed by (tenant, registry). The tenant is a foreign key
 * with ON DELETE CASCADE: a deleted tenant leaves no credentials behind.
 */
#include "store/sqlite_impl.h"

#include <string.h>

int gp__sqlite_registry_cred_put(gp_store *s, const gp_registry_cred_rec *r, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_REGCRED_PUT, &st, "registry credentials", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, r->tenant_id);
    sqlite3_bind_text(st, 2, r->registry, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->username, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, r->password, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, r->updated_ms);
    rc = gp_sqlite_write(s, st, "registry credentials", d);
    gp_sqlite_put(s, GP_SQ_REGCRED_PUT, st);
    if (rc == GP_ENOENT) {
        return gp_diag_set(d, rc, "tenant %lld: not found", (long long)r->tenant_id);
    }
    return rc;
}

int gp__sqlite_registry_cred_delete(gp_store *s, int64_t tenant_id, const char *registry,
                                    gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_REGCRED_DELETE, &st, "registry credentials", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, tenant_id);
    sqlite3_bind_text(st, 2, registry, -1, SQLITE_STATIC);
    rc = gp_sqlite_write(s, st, "registry credentials", d);
    int changed = rc == 0 && sqlite3_changes(SQ(s)->db) > 0;
    gp_sqlite_put(s, GP_SQ_REGCRED_DELETE, st);
    if (rc == 0 && !changed) {
        return gp_diag_set(d, GP_ENOENT, "registry %s: no credentials stored", registry);
    }
    return rc;
}

int gp__sqlite_registry_cred_each(gp_store *s, gp_store_registry_cred_fn fn, void *ctx, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_REGCRED_EACH, &st, "registry credentials", d);
    if (rc < 0) {
        return rc;
    }
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        gp_registry_cred_rec r = {
            .tenant_id = sqlite3_column_int64(st, 0),
            .registry = gp_sqlite_text(st, 1),
            .username = gp_sqlite_text(st, 2),
            .password = gp_sqlite_text(st, 3),
            .updated_ms = sqlite3_column_int64(st, 4),
        };
        rc = fn(ctx, &r);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "registry credentials");
    }
    gp_sqlite_put(s, GP_SQ_REGCRED_EACH, st);
    return rc;
}
