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
    gp_sqlite *sq = SQ(s);
    if (sq->lease_token == 0) {
        return 0;
    }
    gp__lease_row row;
    int rc = read_row(s, &row, d);
    return rc < 0 ? rc : gp__lease_check_row(&row, sq->lease_holder, sq->lease_token, d);
}

/* Runs change on the row in a write transaction of its own (no lease check); the row as
 * committed in *out. */
static int in_tx(gp_store *s, int (*change)(gp__lease_row *row, const void *arg, gp_diag *d),
                 const void *arg, gp__lease_row *out, gp_diag *d)
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

typedef struct acquire_arg {
    const char *holder;
    int64_t ttl_ms;
} acquire_arg;

static int acquire(gp__lease_row *row, const void *arg, gp_diag *d)
{
    const acquire_arg *a = arg;
    return gp__lease_acquire_row(row, a->holder, a->ttl_ms, d);
}

int gp__sqlite_lease_acquire(gp_store *s, const char *holder, int64_t ttl_ms, int64_t *token,
                             gp_diag *d)
{
    *token = 0;
    acquire_arg a = {holder, ttl_ms};
    gp__lease_row row;
    int rc = in_tx(s, acquire, &a, &row, d);
    if (rc == 0) {
        SQ(s)->lease_token = *token = row.token;
        snprintf(SQ(s)->lease_holder, sizeof(SQ(s)->lease_holder), "%s", row.holder);
    }
    return rc;
}

typedef struct renew_arg {
    const gp_sqlite *sq;
    int64_t ttl_ms;
} renew_arg;

static int renew(gp__lease_row *row, const void *arg, gp_diag *d)
{
    const renew_arg *a = arg;
    if (a->ttl_ms <= 0) {
        return gp_diag_set(d, GP_EINVAL, "lease ttl_ms: must be positive, not %lld",
                           (long long)a->ttl_ms);
    }
    if (row->token != a->sq->lease_token || strcmp(row->holder, a->sq->lease_holder) != 0) {
        return gp_diag_set(d, GP_ESTATE, "lease lost: held by %s with token %lld",
                           row->holder[0] ? row->holder : "nobody", (long long)row->token);
    }
    row->expires_ms = row->now_ms + a->ttl_ms;
    return 0;
}

int gp__sqlite_lease_renew(gp_store *s, int64_t ttl_ms, gp_diag *d)
{
    gp_sqlite *sq = SQ(s);
    if (sq->lease_token == 0) {
        return gp_diag_set(d, GP_ESTATE, "lease: not held by this store");
    }
    renew_arg a = {sq, ttl_ms};
    gp__lease_row row;
    int rc = in_tx(s, renew, &a, &row, d);
    if (rc == GP_ESTATE) {
        sq->lease_token = 0;
    }
    return rc;
}

static int release(gp__lease_row *row, const void *arg, gp_diag *d)
{
    (void)d;
    const gp_sqlite *sq = arg;
    if (row->token == sq->lease_token && strcmp(row->holder, sq->lease_holder) == 0) {
        row->holder[0] = '\0';
        row->expires_ms = 0;
    }
    return 0;
}

int gp__sqlite_lease_release(gp_store *s, gp_diag *d)
{
    if (SQ(s)->lease_token == 0) {
        return 0;
    }
    gp__lease_row row;
    int rc = in_tx(s, release, SQ(s), &row, d);
    if (rc == 0) {
        SQ(s)->lease_token = 0;
    }
    return rc;
}

int gp__sqlite_lease_get(gp_store *s, gp_store_lease *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    gp__lease_row row;
    int rc = read_row(s, &row, d);
    if (rc < 0) {
        return rc;
    }
    int live = row.holder[0] && row.expires_ms > row.now_ms;
    snprintf(out->holder, sizeof(out->holder), "%s", row.holder);
    out->token = row.token;
    out->remaining_ms = live ? row.expires_ms - row.now_ms : 0;
    out->ours =
        live && SQ(s)->lease_token == row.token && strcmp(SQ(s)->lease_holder, row.holder) == 0;
    return 0;
}
