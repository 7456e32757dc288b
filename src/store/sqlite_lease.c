/*
 * SQLite backend of the store: the leader lease (store.h), table lease of migration 8, with
 * the rules of store.c. One process uses a SQLite database (the data directory's lock keeps a
 * second gpupoold out), but the calls are the same as PostgreSQL's so that the controller has
 * one path. BEGIN IMMEDIATE takes SQLite's write lock, so a takeover from another connection
 * waits (busy_timeout) for the holder's open transaction, as PostgreSQL's row lock makes it.
 * Times are SQLite's clock, 'now' in milliseconds.
 */
#include "store/sqlite_impl.h"

#include <stdio.h>
#include <string.h>

static int read_row(gp_store *s, gp__lease_row *row, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_LEASE_READ, &st, "lease", d);
    if (rc < 0) {
        return rc;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        gp_sqlite_copy(row->holder, sizeof(row->holder), st, 0);
        row->token = sqlite3_column_int64(st, 1);
        row->expires_ms = sqlite3_column_int64(st, 2);
        row->now_ms = sqlite3_column_int64(st, 3);
    } else {
        rc = gp_sqlite_error(s, d, GP_EIO, "lease");
    }
    gp_sqlite_put(s, GP_SQ_LEASE_READ, st);
    return rc;
}

static int write_row(gp_store *s, const gp__lease_row *row, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_LEASE_WRITE, &st, "lease", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_text(st, 1, row->holder, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, row->token);
    sqlite3_bind_int64(st, 3, row->expires_ms);
    rc = gp_sqlite_write(s, st, "lease", d);
    gp_sqlite_put(s, GP_SQ_LEASE_WRITE, st);
    return rc < 0 ? gp_diag_set(d, GP_EIO, "store: lease: cannot write") : 0;
}

int gp__sqlite_lease_check(gp_store *s, gp_diag *d)
{
    return gp__lease_check(s, read_row, d);
}

/* Runs change on the row in a write transaction of its own (no lease check); the row as
 * committed in *out. */
static int in_tx(gp_store *s, gp__lease_change_fn change, const void *arg, gp__lease_row *out,
                 gp_diag *d)
{
    if (SQ(s)->in_tx) {
        return gp_diag_set(d, GP_ESTATE, "store: lease: a transaction is open");
    }
    if (sqlite3_exec(SQ(s)->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        return gp_sqlite_error(s, d, GP_EIO, "lease: begin");
    }
    SQ(s)->in_tx = 1;
    int rc = read_row(s, out, d);
    if (rc == 0) {
        rc = change(out, arg, d);
    }
    if (rc == 0) {
        rc = write_row(s, out, d);
    }
    if (rc == 0) {
        return gp__sqlite_commit(s, d);
    }
    gp__sqlite_rollback(s);
    return rc;
}

static const gp__lease_io io = {in_tx, read_row};

int gp__sqlite_lease_acquire(gp_store *s, const char *holder, int64_t ttl_ms, int64_t *token,
                             gp_diag *d)
{
    return gp__lease_acquire(s, &io, holder, ttl_ms, token, d);
}

int gp__sqlite_lease_renew(gp_store *s, int64_t ttl_ms, gp_diag *d)
{
    return gp__lease_renew(s, &io, ttl_ms, d);
}

int gp__sqlite_lease_release(gp_store *s, gp_diag *d)
{
    return gp__lease_release(s, &io, d);
}

int gp__sqlite_lease_get(gp_store *s, gp_store_lease *out, gp_diag *d)
{
    return gp__lease_get(s, &io, out, d);
}
