/*
 * PostgreSQL backend of the store: the leader lease (store.h), table lease of migration 8.
 *
 * Times come from the database's clock (clock_timestamp(), not the transaction's start, since a
 * takeover may have waited for a lock). The row is locked FOR UPDATE by a change of the lease
 * and FOR SHARE by each transaction of the holder (gp__pg_lease_check), so a takeover waits for
 * the holder's running transaction and the holder's next transaction sees the new token.
 */
#include "store/pg_impl.h"

#include <stdio.h>
#include <string.h>

#define ROW_SQL                                                                                    \
    "SELECT holder, token, expires_ms, "                                                           \
    "(extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM lease WHERE id = 1 "

/* Reads the lease row under lock ("FOR UPDATE" or "FOR SHARE"). */
static int read_row(gp_store *s, const char *lock, gp__lease_row *row, gp_diag *d)
{
    char sql[256];
    snprintf(sql, sizeof(sql), "%s%s", ROW_SQL, lock);
    PGresult *r;
    int rc = gp_pg_query(s, sql, NULL, &r, "lease", d);
    if (rc < 0) {
        return rc;
    }
    if (PQntuples(r) != 1) {
        PQclear(r);
        return gp_diag_set(d, GP_EIO, "store: lease: the lease row is missing");
    }
    gp_pg_copy(row->holder, sizeof(row->holder), r, 0, 0);
    row->token = gp_pg_int(r, 0, 1);
    row->expires_ms = gp_pg_int(r, 0, 2);
    row->now_ms = gp_pg_int(r, 0, 3);
    PQclear(r);
    return 0;
}

static int write_row(gp_store *s, const gp__lease_row *row, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_str(&p, row->holder);
    gp_pg_i64(&p, row->token);
    gp_pg_i64(&p, row->expires_ms);
    return gp_pg_query(s, "UPDATE lease SET holder = $1, token = $2, expires_ms = $3 WHERE id = 1",
                       &p, NULL, "lease", d);
}

static int read_shared(gp_store *s, gp__lease_row *row, gp_diag *d)
{
    return read_row(s, "FOR SHARE", row, d);
}

static int read_unlocked(gp_store *s, gp__lease_row *row, gp_diag *d)
{
    return read_row(s, "", row, d);
}

int gp__pg_lease_check(gp_store *s, gp_diag *d)
{
    return gp__lease_check(s, read_shared, d);
}

/* Runs change on the locked row in a transaction of its own (without the lease check); the
 * row as committed in *out. */
static int in_tx(gp_store *s, gp__lease_change_fn change, const void *arg, gp__lease_row *out,
                 gp_diag *d)
{
    if (PG(s)->in_tx) {
        return gp_diag_set(d, GP_ESTATE, "store: lease: a transaction is open");
    }
    int rc = gp_pg_query(s, "BEGIN", NULL, NULL, "lease: begin", d);
    if (rc < 0) {
        return rc;
    }
    PG(s)->in_tx = 1;
    rc = read_row(s, "FOR UPDATE", out, d);
    if (rc == 0 && change) {
        rc = change(out, arg, d);
        if (rc == 0) {
            rc = write_row(s, out, d);
        }
    }
    if (rc == 0) {
        rc = gp__pg_commit(s, d);
    } else {
        gp__pg_rollback(s);
    }
    return rc;
}

static const gp__lease_io io = {in_tx, read_unlocked};

int gp__pg_lease_acquire(gp_store *s, const char *holder, int64_t ttl_ms, int64_t *token,
                         gp_diag *d)
{
    return gp__lease_acquire(s, &io, holder, ttl_ms, token, d);
}

int gp__pg_lease_renew(gp_store *s, int64_t ttl_ms, gp_diag *d)
{
    return gp__lease_renew(s, &io, ttl_ms, d);
}

int gp__pg_lease_release(gp_store *s, gp_diag *d)
{
    return gp__lease_release(s, &io, d);
}

int gp__pg_lease_get(gp_store *s, gp_store_lease *out, gp_diag *d)
{
    return gp__lease_get(s, &io, out, d);
}
