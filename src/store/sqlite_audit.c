/*
 * SQLite backend of the store: the audit log (see store.h), table `audit` of migration 4.
 *
 * Records are only inserted; the table's triggers abort UPDATE and DELETE. One statement with
 * every filter as an optional parameter serves all reads: a filter left out is bound NULL and
 * its condition is true, so the statement is prepared once and cached like the fixed ones.
 */
#include "store/sqlite_impl.h"

#include <stdint.h>
#include <string.h>

static void bind_str(sqlite3_stmt *st, int col, const char *v)
{
    sqlite3_bind_text(st, col, v ? v : "", -1, SQLITE_STATIC);
}

int gp_store_audit_add(gp_store *s, gp_audit_rec *r, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_AUDIT_ADD, &st, "audit add", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, r->time_ms);
    bind_str(st, 2, r->actor);
    bind_str(st, 3, r->role);
    bind_str(st, 4, r->tenant);
    bind_str(st, 5, r->action);
    bind_str(st, 6, r->object);
    sqlite3_bind_text(st, 7, r->detail ? r->detail : "{}", -1, SQLITE_STATIC);
    /* Every refusal is the store's failure (GP_EIO), a trigger's included: the change being
     * recorded cannot be made without its record. */
    if (gp_sqlite_exec(st) != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "audit add");
    }
    gp_sqlite_put(s, GP_SQ_AUDIT_ADD, st);
    if (rc == 0) {
        r->id = sqlite3_last_insert_rowid(s->db);
    }
    return rc;
}

/* Binds one string filter to its two parameters: exact (col) or prefix (col + 1, for a value
 * ending in '*'); the other stays NULL. */
static void bind_match(sqlite3_stmt *st, int col, const char *v)
{
    if (!v) {
        return;
    }
    size_t n = strlen(v);
    if (n > 0 && v[n - 1] == '*') {
        sqlite3_bind_text(st, col + 1, v, (int)(n - 1), SQLITE_STATIC);
    } else {
        sqlite3_bind_text(st, col, v, (int)n, SQLITE_STATIC);
    }
}

int gp_store_audit_each(gp_store *s, const gp_audit_filter *f, gp_store_audit_fn fn, void *ctx,
                        gp_diag *d)
{
    static const gp_audit_filter all;
    f = f ? f : &all;
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_AUDIT_EACH, &st, "audit list", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, f->after);
    sqlite3_bind_int64(st, 2, f->since_ms > 0 ? f->since_ms : INT64_MIN);
    sqlite3_bind_int64(st, 3, f->until_ms > 0 ? f->until_ms : INT64_MAX);
    bind_match(st, 4, f->actor);
    bind_match(st, 6, f->tenant);
    bind_match(st, 8, f->action);
    bind_match(st, 10, f->object);
    sqlite3_bind_int(st, 12, f->limit > 0 ? f->limit : -1); /* SQLite: a negative LIMIT is none */
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        gp_audit_rec r = {
            .id = sqlite3_column_int64(st, 0),
            .time_ms = sqlite3_column_int64(st, 1),
            .actor = gp_sqlite_text(st, 2),
            .role = gp_sqlite_text(st, 3),
            .tenant = gp_sqlite_text(st, 4),
            .action = gp_sqlite_text(st, 5),
            .object = gp_sqlite_text(st, 6),
            .detail = gp_sqlite_text(st, 7),
        };
        rc = fn(ctx, &r);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "audit list");
    }
    gp_sqlite_put(s, GP_SQ_AUDIT_EACH, st);
    return rc;
}
