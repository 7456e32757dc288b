/*
 * Private to the PostgreSQL backend of the store (pg_*.c): its handle and the helpers every
 * part uses.
 *
 * Every statement has its values bound as parameters (text format), never formatted into the
 * SQL; only table names from fixed tables and parameter numbers are. Each statement text is
 * prepared once per connection (the first time it runs) and executed by name afterwards; the
 * cache holds GP_PG_MAX_STMTS texts and is emptied when the connection is re-established.
 *
 * PostgreSQL aborts the whole transaction when one statement fails, where SQLite fails the
 * statement alone. gp_pg_write keeps SQLite's meaning: inside a transaction it runs the
 * statement under its own savepoint and rolls back to it on failure, so a refused insert
 * (a name taken) leaves the transaction usable, as the controller expects. The savepoint, the
 * statement and the release go to the server together (libpq's pipeline mode): one round trip,
 * and a second one only when the statement was refused.
 *
 * The walks over tables that grow with the pool (jobs, placements, usage) read through a cursor
 * in batches of GP_PG_BATCH rows (gp_pg_walk), so neither side holds the whole table at once.
 *
 * A lost connection (PostgreSQL restarted, the network cut) is re-established at the next
 * gp_store_begin, or at the next read outside a transaction (PQreset); a call made while the
 * server is away fails with GP_EIO.
 */
#ifndef GP_STORE_PG_IMPL_H
#define GP_STORE_PG_IMPL_H

#include "store/store_ops.h"

#include <libpq-fe.h>

/* Prepared statements a connection keeps, and rows a walk fetches at a time. */
#define GP_PG_MAX_STMTS 128
#define GP_PG_BATCH     2000

/* The PostgreSQL backend's handle: its gp_store (the operations table) first. */
typedef struct gp_pg {
    gp_store base;
    PGconn *conn;
    /* The statements prepared on conn: stmts[i] (owned) is prepared as "gp_s<i>". */
    char *stmts[GP_PG_MAX_STMTS];
    int nstmts;
    /* Cursors open (gp_pg_walk), for their names: walks may nest. */
    int cursors;
    /* gp_store_begin succeeded and neither commit nor rollback ran since. */
    int in_tx;
} gp_pg;

#define PG(s) ((gp_pg *)(s))

/* The backend's operations (store_ops.h), one gp__pg_<name> per row. */
#define GP_PG_OP_PROTO(cls, name, params, args) int gp__pg_##name params;
GP_STORE_OPS(GP_PG_OP_PROTO)
#undef GP_PG_OP_PROTO
int gp__pg_version(gp_store *s);
void gp__pg_rollback(gp_store *s);
void gp__pg_savepoint_rollback(gp_store *s);
void gp__pg_close(gp_store *s);

/* Inside a transaction just begun: when the store holds the lease, locks its row for share and
 * checks it is still ours (pg_lease.c). 0 when it holds none. */
int gp__pg_lease_check(gp_store *s, gp_diag *d);

/* Bound parameters of one statement: strings borrowed (NULL is SQL NULL), numbers formatted
 * into the struct's own buffers. */
#define GP_PG_MAX_PARAMS 24
typedef struct gp_pg_params {
    int n;
    const char *v[GP_PG_MAX_PARAMS];
    char num[GP_PG_MAX_PARAMS][24];
} gp_pg_params;

void gp_pg_str(gp_pg_params *p, const char *v);
void gp_pg_i64(gp_pg_params *p, int64_t v);

/* The migrations (pg_schema.c): gp__pg_migrations[i] brings version i to i + 1. */
extern const char *const gp__pg_migrations[];
extern const int gp__pg_nmigrations;

/* Runs sql with p (NULL: none). *res (when not NULL) gets the result on success, to PQclear.
 * Outside a transaction a statement that fails because the connection was lost is retried
 * once on a new connection. GP_EIO with d naming what and PostgreSQL's message otherwise. */
int gp_pg_query(gp_store *s, const char *sql, const gp_pg_params *p, PGresult **res,
                const char *what, gp_diag *d);
/* gp_pg_query for a write: 0; GP_EEXIST when a unique constraint refuses it and GP_ENOENT when
 * a foreign key does (d untouched, as gp_sqlite_write); GP_EINVAL for other constraints and
 * GP_EIO otherwise, with d. *constraint (when not NULL) gets the refusing constraint's name
 * (cap 64). Inside a transaction the statement runs under its own savepoint. */
int gp_pg_write(gp_store *s, const char *sql, const gp_pg_params *p, PGresult **res,
                char *constraint, const char *what, gp_diag *d);
/* Runs sql (a SELECT, with p or NULL) and calls row(ctx, res, i) for each row in order, fetched
 * GP_PG_BATCH at a time through a cursor; stops at the first non-zero return, which it returns.
 * Outside a transaction the walk runs in a read-only one of its own (one snapshot): row must not
 * write then. GP_EIO with d naming what when a statement fails. */
int gp_pg_walk(gp_store *s, const char *sql, const gp_pg_params *p,
               int (*row)(void *ctx, PGresult *res, int i), void *ctx, const char *what,
               gp_diag *d);
/* Rows a write changed (its command tag). */
int64_t gp_pg_changes(PGresult *res);
/* Column text of a row ("" for NULL), as a number, and copied (truncated to cap). */
const char *gp_pg_text(PGresult *res, int row, int col);
int64_t gp_pg_int(PGresult *res, int row, int col);
void gp_pg_copy(char *dst, size_t cap, PGresult *res, int row, int col);
int gp_pg_isnull(PGresult *res, int row, int col);
/* "store: <what>: <the connection's last message>" with code. */
int gp_pg_error(gp_store *s, gp_diag *d, int code, const char *what);

#endif
