/*
 * PostgreSQL backend of the store: connecting, migrations, the statement helpers, transactions,
 * the allocation epoch and the meta settings. Jobs, events and placements are in pg_jobs.c;
 * objects, tokens and registry credentials in pg_objects.c; the audit log and the usage ledger
 * in pg_ledger.c; the leader lease in pg_lease.c. See pg_impl.h for the invariants.
 *
 * Durability: every session sets synchronous_commit on, so when gp_store_commit returns 0 the
 * transaction is in PostgreSQL's WAL on disk (and on a synchronous standby when the server is
 * configured with one), whatever the server's default.
 *
 * Migrations: table gp_schema holds the version. Each migration runs in its own transaction
 * that first takes an advisory lock, then reads the version, runs the script and bumps the
 * version: two gpupoold starting together migrate once, and a crash leaves the last version.
 */
#include "store/pg_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The advisory lock of migrations (any constant that fits a bigint). */
#define MIGRATION_LOCK "7165117112111108"

/* ---- parameters and results ---- */

void gp_pg_str(gp_pg_params *p, const char *v)
{
    if (p->n < GP_PG_MAX_PARAMS) {
        p->v[p->n++] = v;
    }
}

void gp_pg_i64(gp_pg_params *p, int64_t v)
{
    if (p->n < GP_PG_MAX_PARAMS) {
        snprintf(p->num[p->n], sizeof(p->num[0]), "%" PRId64, v);
        p->v[p->n] = p->num[p->n];
        p->n++;
    }
}

const char *gp_pg_text(PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? "" : PQgetvalue(res, row, col);
}

int64_t gp_pg_int(PGresult *res, int row, int col)
{
    return strtoll(gp_pg_text(res, row, col), NULL, 10);
}

int gp_pg_isnull(PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col);
}

void gp_pg_copy(char *dst, size_t cap, PGresult *res, int row, int col)
{
    snprintf(dst, cap, "%s", gp_pg_text(res, row, col));
}

int64_t gp_pg_changes(PGresult *res)
{
    return strtoll(PQcmdTuples(res), NULL, 10);
}

/* PostgreSQL's messages end with a newline and may hold more (a hint on a tabbed line): the
 * diag's is one line. */
static int error_with(gp_diag *d, int code, const char *what, const char *msg)
{
    char line[400];
    snprintf(line, sizeof(line), "%s", msg);
    for (char *c = line; *c; c++) {
        *c = *c == '\n' || *c == '\t' ? ' ' : *c;
    }
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ') {
        line[--n] = '\0';
    }
    return gp_diag_set(d, code, "store: %s: %s", what, line);
}

int gp_pg_error(gp_store *s, gp_diag *d, int code, const char *what)
{
    return error_with(d, code, what, PQerrorMessage(PG(s)->conn));
}

/* ---- connection ---- */

static int connected(gp_store *s)
{
    return PQstatus(PG(s)->conn) == CONNECTION_OK;
}

/* Sets what every session needs; on a new connection and after each reset. */
static int session_setup(gp_store *s, gp_diag *d)
{
    PGresult *r = PQexec(PG(s)->conn, "SET synchronous_commit = on; SET client_min_messages = "
                                      "warning; SET TIME ZONE 'UTC'");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok ? 0 : gp_pg_error(s, d, GP_EIO, "session setup");
}

/* Forgets the statements prepared on the connection (a new session has none). */
static void forget_statements(gp_pg *pg)
{
    for (int i = 0; i < pg->nstmts; i++) {
        free(pg->stmts[i]);
        pg->stmts[i] = NULL;
    }
    pg->nstmts = 0;
    pg->cursors = 0;
}

/* Re-establishes a lost connection. GP_EIO while the server is away. */
static int reconnect(gp_store *s, gp_diag *d)
{
    forget_statements(PG(s));
    PQreset(PG(s)->conn);
    if (!connected(s)) {
        return gp_pg_error(s, d, GP_EIO, "postgresql: connection lost");
    }
    return session_setup(s, d);
}

/* Whether sql is worth preparing: a query or a change (not BEGIN, COMMIT, SAVEPOINT, ...). */
static int preparable(const char *sql)
{
    static const char *const verbs[] = {"SELECT ", "INSERT ", "UPDATE ", "DELETE "};
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        if (strncmp(sql, verbs[i], strlen(verbs[i])) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The name sql is prepared under on the connection (prepared now if it is new), in name (cap
 * 16); 0 when it runs unprepared: not worth it, the cache is full, the transaction has failed
 * already, or the server refused to prepare it (the statement then runs unprepared and fails
 * by itself). */
static int prepared(gp_store *s, const char *sql, int nparams, char *name)
{
    gp_pg *pg = PG(s);
    for (int i = 0; i < pg->nstmts; i++) {
        if (strcmp(pg->stmts[i], sql) == 0) {
            snprintf(name, 16, "gp_s%d", i);
            return 1;
        }
    }
    if (!preparable(sql) || pg->nstmts == GP_PG_MAX_STMTS ||
        PQtransactionStatus(pg->conn) == PQTRANS_INERROR) {
        return 0;
    }
    char *copy = strdup(sql);
    if (!copy) {
        return 0;
    }
    snprintf(name, 16, "gp_s%d", pg->nstmts);
    PGresult *r = PQprepare(pg->conn, name, sql, nparams, NULL);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        free(copy);
        return 0;
    }
    pg->stmts[pg->nstmts++] = copy;
    return 1;
}

/* One statement; the result, or NULL after a failure (message in the connection). */
static PGresult *run(gp_store *s, const char *sql, const gp_pg_params *p, int *ok)
{
    char name[16];
    int n = p ? p->n : 0;
    const char *const *v = p ? p->v : NULL;
    PGresult *r = prepared(s, sql, n, name)
                      ? PQexecPrepared(PG(s)->conn, name, n, v, NULL, NULL, 0)
                      : PQexecParams(PG(s)->conn, sql, n, NULL, v, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    *ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    return r;
}

int gp_pg_query(gp_store *s, const char *sql, const gp_pg_params *p, PGresult **res,
                const char *what, gp_diag *d)
{
    if (res) {
        *res = NULL;
    }
    if (!PG(s)->in_tx && !connected(s) && reconnect(s, d) < 0) {
        return GP_EIO;
    }
    int ok;
    PGresult *r = run(s, sql, p, &ok);
    if (!ok && !PG(s)->in_tx && !connected(s)) {
        /* The server went away since the last call: one more try on a new connection. */
        PQclear(r);
        if (reconnect(s, d) < 0) {
            return GP_EIO;
        }
        r = run(s, sql, p, &ok);
    }
    if (!ok) {
        int rc = error_with(d, GP_EIO, what, PQresultErrorMessage(r));
        PQclear(r);
        return rc;
    }
    if (res) {
        *res = r;
    } else {
        PQclear(r);
    }
    return 0;
}

/* Runs a fixed statement without parameters or rows; 0 or GP_EIO. */
static int run_fixed(gp_store *s, const char *sql, const char *what, gp_diag *d)
{
    return gp_pg_query(s, sql, NULL, NULL, what, d);
}

/* The code of a failed write from its SQLSTATE. */
static int write_code(PGresult *r)
{
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (!state) {
        return GP_EIO;
    }
    if (strcmp(state, "23505") == 0) { /* unique_violation */
        return GP_EEXIST;
    }
    if (strcmp(state, "23503") == 0) { /* foreign_key_violation */
        return GP_ENOENT;
    }
    return strncmp(state, "23", 2) == 0 ? GP_EINVAL : GP_EIO; /* integrity constraints */
}

/* GP_EIO when the transaction cannot commit: the connection is gone, or a statement failed
 * outside a statement savepoint and PostgreSQL aborted the transaction. */
static int check_tx(gp_store *s, const char *what, gp_diag *d)
{
    if (!connected(s)) {
        return gp_pg_error(s, d, GP_EIO, what);
    }
    if (PG(s)->in_tx && PQtransactionStatus(PG(s)->conn) != PQTRANS_INTRANS) {
        return gp_diag_set(
            d, GP_EIO, "store: %s: the transaction was rolled back after an earlier error", what);
    }
    return 0;
}

/* The result of the next query of a pipeline, the NULL after it consumed; NULL when none came
 * (the connection broke). */
static PGresult *next_result(PGconn *c)
{
    PGresult *r = PQgetResult(c);
    if (r && PQresultStatus(r) != PGRES_PIPELINE_SYNC) {
        PGresult *end = PQgetResult(c);
        PQclear(end);
    }
    return r;
}

/* Inside a transaction: SAVEPOINT, the statement and RELEASE sent together, one Sync. *res gets
 * the statement's result (its status says whether it worked); *undo is set when it failed after
 * the savepoint was made, so the caller must roll back to it. GP_EIO with d when the pipeline
 * itself failed (the connection lost). */
static int write_pipelined(gp_store *s, const char *sql, const gp_pg_params *p, PGresult **res,
                           int *undo, const char *what, gp_diag *d)
{
    PGconn *c = PG(s)->conn;
    char name[16];
    int n = p ? p->n : 0;
    const char *const *v = p ? p->v : NULL;
    int named = prepared(s, sql, n, name); /* before the pipeline: PQprepare waits */
    *res = NULL;
    *undo = 0;
    if (!PQenterPipelineMode(c)) {
        return gp_pg_error(s, d, GP_EIO, what);
    }
    int sent = PQsendQueryParams(c, "SAVEPOINT gp_stmt", 0, NULL, NULL, NULL, NULL, 0) &&
               (named ? PQsendQueryPrepared(c, name, n, v, NULL, NULL, 0)
                      : PQsendQueryParams(c, sql, n, NULL, v, NULL, NULL, 0)) &&
               PQsendQueryParams(c, "RELEASE gp_stmt", 0, NULL, NULL, NULL, NULL, 0) &&
               PQpipelineSync(c);
    PGresult *sp = sent ? next_result(c) : NULL;
    PGresult *r = sent ? next_result(c) : NULL;
    PGresult *rel = sent ? next_result(c) : NULL;
    PGresult *sync = sent ? PQgetResult(c) : NULL;
    int ok = sp && PQresultStatus(sp) == PGRES_COMMAND_OK && r &&
             PQresultStatus(r) != PGRES_PIPELINE_ABORTED && sync &&
             PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
    *undo = ok && PQresultStatus(rel) != PGRES_COMMAND_OK;
    PQclear(sp);
    PQclear(rel);
    PQclear(sync);
    int rc = 0;
    if (!PQexitPipelineMode(c) || !ok) {
        rc = gp_pg_error(s, d, GP_EIO, what);
        PQclear(r);
        r = NULL;
        if (connected(s)) {
            /* The protocol state is unknown: start a fresh session (the transaction is lost
             * with it, and commit reports so). */
            forget_statements(PG(s));
            PQreset(c);
            if (connected(s)) {
                session_setup(s, NULL);
            }
        }
    }
    *res = r;
    return rc;
}

int gp_pg_write(gp_store *s, const char *sql, const gp_pg_params *p, PGresult **res,
                char *constraint, const char *what, gp_diag *d)
{
    if (res) {
        *res = NULL;
    }
    if (constraint) {
        constraint[0] = '\0';
    }
    gp_pg *pg = PG(s);
    int ok, undo = 0;
    PGresult *r;
    if (pg->in_tx) {
        if (check_tx(s, what, d) < 0 || write_pipelined(s, sql, p, &r, &undo, what, d) < 0) {
            return GP_EIO;
        }
        ExecStatusType st = PQresultStatus(r);
        ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    } else {
        if (!connected(s) && reconnect(s, d) < 0) {
            return GP_EIO;
        }
        r = run(s, sql, p, &ok);
    }
    int rc = 0;
    if (!ok) {
        rc = write_code(r);
        if (constraint) {
            const char *c = PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME);
            snprintf(constraint, 64, "%s", c ? c : "");
        }
        if (rc != GP_EEXIST && rc != GP_ENOENT) {
            error_with(d, rc, what, PQresultErrorMessage(r));
        }
        PQclear(r);
        r = NULL;
    }
    if (undo) {
        /* Back to the state before the statement, in one round trip. */
        PGresult *u = PQexec(pg->conn, "ROLLBACK TO gp_stmt; RELEASE gp_stmt");
        int undone = PQresultStatus(u) == PGRES_COMMAND_OK;
        PQclear(u);
        if (!undone) {
            return gp_pg_error(s, d, GP_EIO, what);
        }
    }
    if (res && rc == 0) {
        *res = r;
    } else {
        PQclear(r);
    }
    return rc;
}

/* ---- walks ---- */

int gp_pg_walk(gp_store *s, const char *sql, const gp_pg_params *p,
               int (*row)(void *ctx, PGresult *res, int i), void *ctx, const char *what, gp_diag *d)
{
    gp_pg *pg = PG(s);
    int own = !pg->in_tx;
    int rc =
        own ? gp_pg_query(s, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", NULL, NULL, what, d)
            : 0;
    if (rc < 0) {
        return rc;
    }
    char cursor[32], decl[1536], fetch[64];
    snprintf(cursor, sizeof(cursor), "gp_c%d", pg->cursors++);
    int len = snprintf(decl, sizeof(decl), "DECLARE %s NO SCROLL CURSOR FOR %s", cursor, sql);
    snprintf(fetch, sizeof(fetch), "FETCH %d FROM %s", GP_PG_BATCH, cursor);
    if (len < 0 || (size_t)len >= sizeof(decl)) {
        rc = gp_diag_set(d, GP_EINVAL, "store: %s: statement too long", what);
    } else {
        rc = gp_pg_query(s, decl, p, NULL, what, d);
    }
    int more = rc == 0;
    while (rc == 0 && more) {
        PGresult *r;
        rc = gp_pg_query(s, fetch, NULL, &r, what, d);
        if (rc < 0) {
            break;
        }
        int n = PQntuples(r);
        for (int i = 0; rc == 0 && i < n; i++) {
            rc = row(ctx, r, i);
        }
        more = n == GP_PG_BATCH;
        PQclear(r);
    }
    if (connected(s) && PQtransactionStatus(pg->conn) == PQTRANS_INTRANS) {
        char close[48];
        snprintf(close, sizeof(close), "CLOSE %s", cursor);
        gp_pg_query(s, close, NULL, NULL, what, NULL);
    }
    pg->cursors--;
    if (own) {
        PGresult *r = PQexec(pg->conn, rc == 0 ? "COMMIT" : "ROLLBACK");
        if (rc == 0 && PQresultStatus(r) != PGRES_COMMAND_OK) {
            rc = error_with(d, GP_EIO, what, PQresultErrorMessage(r));
        }
        PQclear(r);
    }
    return rc;
}

/* ---- opening and migrations ---- */

int gp__pg_version(gp_store *s)
{
    PGresult *r;
    if (gp_pg_query(s, "SELECT version FROM gp_schema", NULL, &r, "schema version", NULL) < 0) {
        return -1;
    }
    int v = PQntuples(r) == 1 ? (int)gp_pg_int(r, 0, 0) : 0;
    PQclear(r);
    return v;
}

/* Runs the next migration if one is due: 1 when it ran, 0 when the schema is current. */
static int migrate_one(gp_store *s, gp_diag *d)
{
    int rc = run_fixed(s, "BEGIN", "migration: begin", d);
    if (rc < 0) {
        return rc;
    }
    PG(s)->in_tx = 1;
    rc = run_fixed(s, "SELECT pg_advisory_xact_lock(" MIGRATION_LOCK ")", "migration: lock", d);
    if (rc == 0) {
        rc = run_fixed(s, "CREATE TABLE IF NOT EXISTS gp_schema (version INTEGER NOT NULL)",
                       "migration: schema table", d);
    }
    if (rc == 0) {
        rc = run_fixed(s,
                       "INSERT INTO gp_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM gp_schema)",
                       "migration: schema table", d);
    }
    int v = rc == 0 ? gp__pg_version(s) : -1;
    if (rc == 0 && v < 0) {
        rc = gp_pg_error(s, d, GP_EIO, "reading the schema version");
    } else if (rc == 0 && v > gp__pg_nmigrations) {
        rc = gp_diag_set(d, GP_EIO,
                         "store: schema version %d is newer than this build's %d; upgrade gpupool",
                         v, gp__pg_nmigrations);
    } else if (rc == 0 && v < gp__pg_nmigrations) {
        char what[32];
        snprintf(what, sizeof(what), "migration %d", v + 1);
        /* A script of several statements: PQexec, which takes no parameters (it has none). */
        PGresult *r = PQexec(PG(s)->conn, gp__pg_migrations[v]);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            rc = error_with(d, GP_EIO, what, PQresultErrorMessage(r));
        }
        PQclear(r);
        if (rc == 0) {
            gp_pg_params p = {0};
            gp_pg_i64(&p, v + 1);
            rc = gp_pg_query(s, "UPDATE gp_schema SET version = $1", &p, NULL, what, d);
        }
    }
    if (rc == 0) {
        rc = run_fixed(s, "COMMIT", "migration: commit", d);
    }
    PG(s)->in_tx = 0;
    if (rc < 0) {
        run_fixed(s, "ROLLBACK", "migration: rollback", NULL);
        return rc;
    }
    return v < gp__pg_nmigrations;
}

static const gp_store_ops pg_ops = {
    .name = "postgresql",
#define PG_OP(cls, name, params, args) .name = gp__pg_##name,
    GP_STORE_OPS(PG_OP)
#undef PG_OP
        .version = gp__pg_version,
    .rollback = gp__pg_rollback,
    .savepoint_rollback = gp__pg_savepoint_rollback,
    .close = gp__pg_close,
};

int gp__pg_open(const char *url, gp_store **out, gp_diag *d)
{
    *out = NULL;
    gp_pg *pg = calloc(1, sizeof(*pg));
    if (!pg) {
        return gp_diag_set(d, GP_ENOMEM, "store: out of memory");
    }
    pg->base.ops = &pg_ops;
    gp_store *s = &pg->base;
    /* The URL's own settings come after the default connect timeout, so they win. The URL may
     * hold a password: messages name the host and database, never the URL. */
    /* TCP keepalives and a user timeout bound how long a call can hang on a database that is
     * gone without a word (a dead host, a cut network): about 10 s, then the connection fails
     * like any lost one and is made again at the next begin. */
    const char *const keys[] = {"connect_timeout",
                                "application_name",
                                "keepalives",
                                "keepalives_idle",
                                "keepalives_interval",
                                "keepalives_count",
                                "tcp_user_timeout",
                                "dbname",
                                NULL};
    const char *const values[] = {"10", "gpupoold", "1", "5", "2", "3", "10000", url, NULL};
    pg->conn = PQconnectdbParams(keys, values, 1);
    int rc = 0;
    if (!pg->conn) {
        rc = gp_diag_set(d, GP_ENOMEM, "store: out of memory");
    } else if (!connected(s)) {
        rc = gp_pg_error(s, d, GP_EIO, "postgresql: cannot connect");
    } else {
        rc = session_setup(s, d);
    }
    if (rc == 0) {
        while ((rc = migrate_one(s, d)) > 0) {
        }
    }
    if (rc < 0) {
        gp__pg_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void gp__pg_close(gp_store *s)
{
    /* An open transaction ends with the session: the server rolls it back. */
    forget_statements(PG(s));
    PQfinish(PG(s)->conn);
    free(PG(s));
}

/* ---- transactions ---- */

int gp__pg_begin(gp_store *s, gp_diag *d)
{
    gp_pg *pg = PG(s);
    if (pg->in_tx) {
        return gp_diag_set(d, GP_ESTATE, "store: begin: a transaction is open already");
    }
    /* gp_pg_query re-establishes a lost connection (and retries once) outside a transaction. */
    int rc = run_fixed(s, "BEGIN", "begin", d);
    if (rc == 0) {
        pg->in_tx = 1;
        rc = gp__pg_lease_check(s, d);
        if (rc < 0) {
            gp__pg_rollback(s);
        }
    }
    return rc;
}

int gp__pg_commit(gp_store *s, gp_diag *d)
{
    int rc = check_tx(s, "commit", d);
    PGresult *r = NULL;
    if (rc == 0) {
        rc = gp_pg_query(s, "COMMIT", NULL, &r, "commit", d);
    }
    /* A COMMIT of an aborted transaction "succeeds" as ROLLBACK. */
    if (rc == 0 && strcmp(PQcmdStatus(r), "COMMIT") != 0) {
        rc = gp_diag_set(d, GP_EIO, "store: commit: the transaction was rolled back");
    }
    PQclear(r);
    if (rc < 0) {
        gp__pg_rollback(s);
    }
    PG(s)->in_tx = 0;
    return rc;
}

void gp__pg_rollback(gp_store *s)
{
    PG(s)->in_tx = 0;
    if (connected(s) && PQtransactionStatus(PG(s)->conn) != PQTRANS_IDLE) {
        PGresult *r = PQexec(PG(s)->conn, "ROLLBACK");
        PQclear(r);
    }
}

/* Savepoints all have one name: ROLLBACK TO and RELEASE act on the most recent one of that
 * name, so they nest, as in the SQLite backend. */
int gp__pg_savepoint(gp_store *s, gp_diag *d)
{
    int rc = check_tx(s, "savepoint", d);
    return rc < 0 ? rc : run_fixed(s, "SAVEPOINT gp_change", "savepoint", d);
}

int gp__pg_savepoint_release(gp_store *s, gp_diag *d)
{
    int rc = check_tx(s, "savepoint release", d);
    return rc < 0 ? rc : run_fixed(s, "RELEASE gp_change", "savepoint release", d);
}

void gp__pg_savepoint_rollback(gp_store *s)
{
    if (PG(s)->in_tx && run_fixed(s, "ROLLBACK TO gp_change", "savepoint rollback", NULL) == 0) {
        run_fixed(s, "RELEASE gp_change", "savepoint release", NULL);
    }
}

/* ---- allocation epoch ---- */

int gp__pg_next_epoch(gp_store *s, int64_t *epoch, gp_diag *d)
{
    *epoch = 0;
    PGresult *r;
    int rc = gp_pg_query(s,
                         "UPDATE counters SET value = value + 1 WHERE name = 'epoch' "
                         "RETURNING value",
                         NULL, &r, "epoch", d);
    if (rc < 0) {
        return rc;
    }
    if (PQntuples(r) == 1) {
        *epoch = gp_pg_int(r, 0, 0);
    } else {
        rc = gp_diag_set(d, GP_EIO, "store: epoch: the counter is missing");
    }
    PQclear(r);
    return rc;
}

/* ---- meta ---- */

int gp__pg_meta_set(gp_store *s, const char *key, const char *value, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_str(&p, key);
    gp_pg_str(&p, value);
    return gp_pg_query(s,
                       "INSERT INTO meta(key, value) VALUES ($1, $2) "
                       "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       &p, NULL, "meta set", d);
}

int gp__pg_meta_get(gp_store *s, const char *key, char *buf, size_t cap, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_str(&p, key);
    PGresult *r;
    int rc = gp_pg_query(s, "SELECT value FROM meta WHERE key = $1", &p, &r, "meta get", d);
    if (rc < 0) {
        return rc;
    }
    if (PQntuples(r) == 1) {
        gp_pg_copy(buf, cap, r, 0, 0);
    } else {
        rc = gp_diag_set(d, GP_ENOENT, "meta %s: not set", key);
    }
    PQclear(r);
    return rc;
}
