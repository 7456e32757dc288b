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

int gp__pg_lease_check(gp_store *s, gp_diag *d)
{
    gp_pg *pg = PG(s);
    if (pg->lease_token == 0) {
        return 0;
    }
    gp__lease_row row;
    int rc = read_row(s, "FOR SHARE", &row, d);
    return rc < 0 ? rc : gp__lease_check_row(&row, pg->lease_holder, pg->lease_token, d);
}

/* Runs change on the locked row in a transaction of its own (without the lease check); the
 * row as committed in *out. */
static int in_tx(gp_store *s, int (*change)(gp__lease_row *row, const void *arg, gp_diag *d),
                 const void *arg, gp__lease_row *out, gp_diag *d)
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

typedef struct acquire_arg {
    const char *holder;
    int64_t ttl_ms;
} acquire_arg;

static int acquire(gp__lease_row *row, const void *arg, gp_diag *d)
{
    const acquire_arg *a = arg;
    return gp__lease_acquire_row(row, a->holder, a->ttl_ms, d);
}

int gp__pg_lease_acquire(gp_store *s, const char *holder, int64_t ttl_ms, int64_t *token,
                         gp_diag *d)
{
    *token = 0;
    acquire_arg a = {holder, ttl_ms};
    gp__lease_row row;
    int rc = in_tx(s, acquire, &a, &row, d);
    if (rc == 0) {
        PG(s)->lease_token = *token = row.token;
        snprintf(PG(s)->lease_holder, sizeof(PG(s)->lease_holder), "%s", row.holder);
    }
    return rc;
}

typedef struct renew_arg {
    const gp_pg *pg;
    int64_t ttl_ms;
} renew_arg;

/* Our token, still: extended (even past its expiry, since nobody took it over meanwhile). */
static int renew(gp__lease_row *row, const void *arg, gp_diag *d)
{
    const renew_arg *a = arg;
    if (a->ttl_ms <= 0) {
        return gp_diag_set(d, GP_EINVAL, "lease ttl_ms: must be positive, not %lld",
                           (long long)a->ttl_ms);
    }
    if (row->token != a->pg->lease_token || strcmp(row->holder, a->pg->lease_holder) != 0) {
        return gp_diag_set(d, GP_ESTATE, "lease lost: held by %s with token %lld",
                           row->holder[0] ? row->holder : "nobody", (long long)row->token);
    }
    row->expires_ms = row->now_ms + a->ttl_ms;
    return 0;
}

int gp__pg_lease_renew(gp_store *s, int64_t ttl_ms, gp_diag *d)
{
    gp_pg *pg = PG(s);
    if (pg->lease_token == 0) {
        return gp_diag_set(d, GP_ESTATE, "lease: not held by this store");
    }
    renew_arg a = {pg, ttl_ms};
    gp__lease_row row;
    int rc = in_tx(s, renew, &a, &row, d);
    if (rc == GP_ESTATE) {
        pg->lease_token = 0;
    }
    return rc;
}

static int release(gp__lease_row *row, const void *arg, gp_diag *d)
{
    (void)d;
    const gp_pg *pg = arg;
    if (row->token == pg->lease_token && strcmp(row->holder, pg->lease_holder) == 0) {
        row->holder[0] = '\0'; /* the token stays: the next one is larger */
        row->expires_ms = 0;
    }
    return 0;
}

int gp__pg_lease_release(gp_store *s, gp_diag *d)
{
    gp_pg *pg = PG(s);
    if (pg->lease_token == 0) {
        return 0;
    }
    gp__lease_row row;
    int rc = in_tx(s, release, pg, &row, d);
    if (rc == 0) {
        pg->lease_token = 0;
    }
    return rc;
}

int gp__pg_lease_get(gp_store *s, gp_store_lease *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    gp__lease_row row;
    int rc = read_row(s, "", &row, d);
    if (rc < 0) {
        return rc;
    }
    int live = row.holder[0] && row.expires_ms > row.now_ms;
    snprintf(out->holder, sizeof(out->holder), "%s", row.holder);
    out->token = row.token;
    out->remaining_ms = live ? row.expires_ms - row.now_ms : 0;
    out->ours =
        live && PG(s)->lease_token == row.token && strcmp(PG(s)->lease_holder, row.holder) == 0;
    return 0;
}
