/*
 * SQLite backend of the store: opening, migrations, the statement cache, transactions, the
 * allocation epoch and the meta settings. Jobs, events and placements are in sqlite_jobs.c;
 * named objects and tokens in sqlite_objects.c; the audit log in sqlite_audit.c; the usage
 * ledger in sqlite_usage.c; tenants' registry credentials in sqlite_registry.c.
 *
 * Migrations are an ordered list of SQL scripts; the database's PRAGMA user_version says how
 * many have run. A migration never changes once released (databases at its version exist):
 * schema changes are new entries. Each runs in its own BEGIN IMMEDIATE transaction together
 * with the version bump, and the version is read inside that transaction, so two processes
 * opening the same old database do not both migrate it.
 */
#include "store/sqlite_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const migrations[] = {
    /* 1: tenants and jobs */
    "CREATE TABLE tenants ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  quota_gpus INTEGER NOT NULL DEFAULT -1,"
    "  quota_gpu_memory_mib INTEGER NOT NULL DEFAULT -1);"
    "CREATE TABLE jobs ("
    "  id INTEGER PRIMARY KEY,"
    "  tenant_id INTEGER NOT NULL REFERENCES tenants(id),"
    "  name TEXT NOT NULL,"
    "  state TEXT NOT NULL,"
    "  idempotency_key TEXT,"
    "  submit_time_ms INTEGER NOT NULL,"
    "  spec TEXT NOT NULL);"
    "CREATE UNIQUE INDEX jobs_idempotency ON jobs(tenant_id, idempotency_key)"
    "  WHERE idempotency_key IS NOT NULL;"
    "CREATE UNIQUE INDEX jobs_active_name ON jobs(tenant_id, name)"
    "  WHERE state IN ('Pending', 'Scheduled', 'Running', 'Preempted');",

    /* 2: named objects as JSON documents (the quota columns of tenants stay, unused), job
     * status, events, placements, the allocation epoch, API tokens, controller settings.
     * Placements refer to their node, so a node with placements cannot be deleted; the index
     * on node_id keeps that check from scanning every placement. */
    "ALTER TABLE tenants ADD COLUMN spec TEXT NOT NULL DEFAULT '{}';"
    "ALTER TABLE jobs ADD COLUMN status TEXT NOT NULL DEFAULT '{}';"
    "CREATE TABLE queues ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  spec TEXT NOT NULL DEFAULT '{}');"
    "CREATE TABLE priority_classes ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  spec TEXT NOT NULL DEFAULT '{}');"
    "CREATE TABLE nodes ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  spec TEXT NOT NULL DEFAULT '{}');"
    "CREATE TABLE job_events ("
    "  id INTEGER PRIMARY KEY,"
    "  job_id INTEGER NOT NULL REFERENCES jobs(id),"
    "  time_ms INTEGER NOT NULL,"
    "  type TEXT NOT NULL,"
    "  message TEXT NOT NULL);"
    "CREATE INDEX job_events_job ON job_events(job_id, id);"
    "CREATE TABLE placements ("
    "  job_id INTEGER NOT NULL REFERENCES jobs(id),"
    "  replica INTEGER NOT NULL,"
    "  node_id INTEGER NOT NULL REFERENCES nodes(id),"
    "  epoch INTEGER NOT NULL,"
    "  assignment TEXT NOT NULL DEFAULT '{}',"
    "  PRIMARY KEY (job_id, replica)) WITHOUT ROWID;"
    "CREATE INDEX placements_node ON placements(node_id);"
    "CREATE TABLE counters ("
    "  name TEXT PRIMARY KEY,"
    "  value INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT INTO counters(name, value) VALUES ('epoch', 0);"
    "CREATE TABLE tokens ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  hash TEXT NOT NULL UNIQUE,"
    "  role TEXT NOT NULL,"
    "  tenant_id INTEGER NOT NULL DEFAULT 0,"
    "  node_id INTEGER NOT NULL DEFAULT 0,"
    "  created_ms INTEGER NOT NULL,"
    "  expires_ms INTEGER NOT NULL DEFAULT 0,"
    "  revoked INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE meta ("
    "  key TEXT PRIMARY KEY,"
    "  value TEXT NOT NULL) WITHOUT ROWID;",
    /* 3: volumes, named host directories that jobs mount (shaped like the other objects). */
    "CREATE TABLE volumes ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  spec TEXT NOT NULL DEFAULT '{}');",
    /* 4: the audit log. Append-only: triggers abort every UPDATE and DELETE, whoever runs
     * them (the controller never does; the triggers keep a tool or a mistyped statement from
     * rewriting history), and an INSERT over an existing id, since REPLACE deletes without
     * firing delete triggers. AUTOINCREMENT: the id of a committed record is never handed out
     * again. */
    "CREATE TABLE audit ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  time_ms INTEGER NOT NULL,"
    "  actor TEXT NOT NULL,"
    "  role TEXT NOT NULL DEFAULT '',"
    "  tenant TEXT NOT NULL DEFAULT '',"
    "  action TEXT NOT NULL,"
    "  object TEXT NOT NULL DEFAULT '',"
    "  detail TEXT NOT NULL DEFAULT '{}');"
    "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit"
    "  BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END;"
    "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit"
    "  BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END;"
    "CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit"
    "  WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM audit WHERE id = NEW.id)"
    "  BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END;",
    /* 5: indexes for the audit log's filters (gp_store_audit_each), which would otherwise read
     * the whole table. An index holds the rowid (id) after its column, so an exact actor,
     * tenant, action or object also yields its records in id order from the cursor on. */
    "CREATE INDEX audit_by_actor ON audit(actor);"
    "CREATE INDEX audit_by_tenant ON audit(tenant);"
    "CREATE INDEX audit_by_action ON audit(action);"
    "CREATE INDEX audit_by_object ON audit(object);"
    "CREATE INDEX audit_by_time ON audit(time_ms);",
    /* 6: the usage ledger (sqlite_usage.c): one row per replica placement, opened and closed
     * with it. No foreign keys: rows outlive their nodes, and name them as they were. A closed
     * row is final and no row is ever deleted (triggers). Indexes: the open rows, the range
     * of a report (rows ending after its start, or still open), and one tenant's rows. */
    "CREATE TABLE usage ("
    "  id INTEGER PRIMARY KEY,"
    "  job_id INTEGER NOT NULL,"
    "  replica INTEGER NOT NULL,"
    "  epoch INTEGER NOT NULL,"
    "  tenant_id INTEGER NOT NULL,"
    "  tenant TEXT NOT NULL,"
    "  queue TEXT NOT NULL,"
    "  node_id INTEGER NOT NULL,"
    "  node TEXT NOT NULL,"
    "  model TEXT NOT NULL DEFAULT '',"
    "  kind TEXT NOT NULL CHECK (kind IN ('whole', 'fraction', 'mig')),"
    "  gpus INTEGER NOT NULL CHECK (gpus >= 0),"
    "  milli INTEGER NOT NULL CHECK (milli BETWEEN 0 AND 1000),"
    "  mig_profile TEXT NOT NULL DEFAULT '',"
    "  cpu_milli INTEGER NOT NULL DEFAULT 0,"
    "  memory_mib INTEGER NOT NULL DEFAULT 0,"
    "  start_ms INTEGER NOT NULL,"
    "  end_ms INTEGER CHECK (end_ms IS NULL OR end_ms >= start_ms),"
    "  used_gpu_milli_ms INTEGER NOT NULL DEFAULT 0,"
    "  UNIQUE (job_id, replica, epoch));"
    "CREATE INDEX usage_open ON usage(job_id) WHERE end_ms IS NULL;"
    "CREATE INDEX usage_end ON usage(end_ms);"
    "CREATE INDEX usage_tenant ON usage(tenant_id, end_ms);"
    "CREATE TRIGGER usage_closed_final BEFORE UPDATE ON usage WHEN OLD.end_ms IS NOT NULL"
    "  BEGIN SELECT RAISE(ABORT, 'a closed usage record is final'); END;"
    "CREATE TRIGGER usage_no_delete BEFORE DELETE ON usage"
    "  BEGIN SELECT RAISE(ABORT, 'usage records are kept'); END;",
    /* 7: tenants' credentials for image registries (sqlite_registry.c): one row per tenant and
     * registry, gone with the tenant. */
    "CREATE TABLE registry_credentials ("
    "  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,"
    "  registry TEXT NOT NULL,"
    "  username TEXT NOT NULL,"
    "  password TEXT NOT NULL,"
    "  updated_ms INTEGER NOT NULL,"
    "  PRIMARY KEY (tenant_id, registry)) WITHOUT ROWID;",
    /* 8: the leader lease (store.h): one row, its token never going back. */
    "CREATE TABLE lease ("
    "  id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  holder TEXT NOT NULL DEFAULT '',"
    "  token INTEGER NOT NULL DEFAULT 0,"
    "  expires_ms INTEGER NOT NULL DEFAULT 0);"
    "INSERT INTO lease(id) VALUES (1);",
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

static const char *const stmt_sql[GP_SQ_COUNT] = {
#define STMT_SQL(id, sql) sql,
    GP_SQLITE_STMTS(STMT_SQL)
#undef STMT_SQL
};

int gp_store_schema_version(void)
{
    return NMIGRATIONS;
}

/* ---- helpers shared by the sqlite_*.c files ---- */

int gp_sqlite_error(gp_store *s, gp_diag *d, int code, const char *what)
{
    return gp_diag_set(d, code, "store: %s: %s", what, sqlite3_errmsg(SQ(s)->db));
}

int gp_sqlite_prepare(gp_store *s, sqlite3_stmt **slot, const char *sql, sqlite3_stmt **st,
                      const char *what, gp_diag *d)
{
    *st = NULL;
    if (*slot && !sqlite3_stmt_busy(*slot)) {
        *st = *slot;
        return 0;
    }
    /* Only the cached copy is persistent: a fresh one for re-entry lives for one call. */
    unsigned flags = *slot ? 0 : SQLITE_PREPARE_PERSISTENT;
    if (sqlite3_prepare_v3(SQ(s)->db, sql, -1, flags, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return gp_sqlite_error(s, d, GP_EIO, what);
    }
    if (!*slot) {
        *slot = *st;
    }
    return 0;
}

int gp_sqlite_get(gp_store *s, gp_sqlite_stmt_id id, sqlite3_stmt **st, const char *what,
                  gp_diag *d)
{
    return gp_sqlite_prepare(s, &SQ(s)->stmt[id], stmt_sql[id], st, what, d);
}

void gp_sqlite_put_slot(sqlite3_stmt **slot, sqlite3_stmt *st)
{
    if (st == *slot) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    } else {
        sqlite3_finalize(st);
    }
}

void gp_sqlite_put(gp_store *s, gp_sqlite_stmt_id id, sqlite3_stmt *st)
{
    gp_sqlite_put_slot(&SQ(s)->stmt[id], st);
}

int gp_sqlite_exec(sqlite3_stmt *st)
{
    int step = sqlite3_step(st);
    return step == SQLITE_ROW ? SQLITE_DONE : step;
}

int gp_sqlite_write(gp_store *s, sqlite3_stmt *st, const char *what, gp_diag *d)
{
    int step = gp_sqlite_exec(st);
    if (step == SQLITE_DONE) {
        return 0;
    }
    switch (sqlite3_extended_errcode(SQ(s)->db)) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
        return GP_EEXIST;
    case SQLITE_CONSTRAINT_FOREIGNKEY:
        return GP_ENOENT;
    default:
        return gp_sqlite_error(s, d, (step & 0xff) == SQLITE_CONSTRAINT ? GP_EINVAL : GP_EIO, what);
    }
}

const char *gp_sqlite_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? (const char *)t : "";
}

void gp_sqlite_copy(char *dst, size_t cap, sqlite3_stmt *st, int col)
{
    snprintf(dst, cap, "%s", gp_sqlite_text(st, col));
}

int gp_sqlite_dup(sqlite3_stmt *st, int col, char **out, gp_diag *d)
{
    *out = strdup(gp_sqlite_text(st, col));
    return *out ? 0 : gp_diag_set(d, GP_ENOMEM, "store: out of memory");
}

/* Runs one fixed statement without parameters or rows (transaction control). */
static int run_fixed(gp_store *s, gp_sqlite_stmt_id id, const char *what, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, id, &st, what, d);
    if (rc < 0) {
        return rc;
    }
    if (gp_sqlite_exec(st) != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, what);
    }
    gp_sqlite_put(s, id, st);
    return rc;
}

/* ---- opening and migrations ---- */

int gp__sqlite_version(gp_store *s)
{
    sqlite3_stmt *st;
    if (gp_sqlite_get(s, GP_SQ_VERSION, &st, "schema version", NULL) < 0) {
        return -1;
    }
    int v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    gp_sqlite_put(s, GP_SQ_VERSION, st);
    return v;
}

/* Runs the next migration if one is due: 1 when it ran, 0 when the schema is current. */
static int migrate_one(gp_store *s, gp_diag *d)
{
    if (sqlite3_exec(SQ(s)->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        return gp_sqlite_error(s, d, GP_EIO, "migration: begin");
    }
    int rc = 0, v = gp__sqlite_version(s);
    if (v < 0) {
        rc = gp_sqlite_error(s, d, GP_EIO, "reading the schema version");
    } else if (v > NMIGRATIONS) {
        rc = gp_diag_set(d, GP_EIO,
                         "store: schema version %d is newer than this build's %d; "
                         "upgrade gpupool",
                         v, NMIGRATIONS);
    } else if (v < NMIGRATIONS) {
        char bump[64], what[32];
        snprintf(bump, sizeof(bump), "PRAGMA user_version = %d", v + 1);
        snprintf(what, sizeof(what), "migration %d", v + 1);
        if (sqlite3_exec(SQ(s)->db, migrations[v], NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(SQ(s)->db, bump, NULL, NULL, NULL) != SQLITE_OK) {
            rc = gp_sqlite_error(s, d, GP_EIO, what);
        }
    }
    if (rc == 0 && sqlite3_exec(SQ(s)->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = gp_sqlite_error(s, d, GP_EIO, "migration: commit");
    }
    if (rc < 0) {
        sqlite3_exec(SQ(s)->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    return v < NMIGRATIONS;
}

static const gp_store_ops sqlite_ops = {
    .name = "sqlite",
#define SQLITE_OP(cls, name, params, args) .name = gp__sqlite_##name,
    GP_STORE_OPS(SQLITE_OP)
#undef SQLITE_OP
        .version = gp__sqlite_version,
    .rollback = gp__sqlite_rollback,
    .savepoint_rollback = gp__sqlite_savepoint_rollback,
    .close = gp__sqlite_close,
};

int gp__sqlite_open(const char *path, gp_store **out, gp_diag *d)
{
    *out = NULL;
    gp_sqlite *sq = calloc(1, sizeof(*sq));
    if (!sq) {
        return gp_diag_set(d, GP_ENOMEM, "store: out of memory");
    }
    sq->base.ops = &sqlite_ops;
    gp_store *s = &sq->base;
    int rc = 0;
    if (sqlite3_open_v2(path, &sq->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        rc = gp_diag_set(d, GP_EIO, "store: %s: %s", path,
                         SQ(s)->db ? sqlite3_errmsg(SQ(s)->db) : "cannot open");
    } else if (sqlite3_exec(SQ(s)->db,
                            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
                            "PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000; "
                            /* savepoints' journals in memory: a group of changes, each in
                             * its savepoint, journals a few pages per change, which past 64
                             * KiB would otherwise go to a new temporary file on disk (created
                             * and removed in one group commit in three under load) */
                            "PRAGMA temp_store=MEMORY;",
                            NULL, NULL, NULL) != SQLITE_OK) {
        rc = gp_sqlite_error(s, d, GP_EIO, path);
    } else {
        while ((rc = migrate_one(s, d)) > 0) {
        }
    }
    if (rc < 0) {
        gp__sqlite_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void gp__sqlite_close(gp_store *s)
{
    if (!s) {
        return;
    }
    for (int i = 0; i < GP_SQ_COUNT; i++) {
        sqlite3_finalize(SQ(s)->stmt[i]);
    }
    for (int k = 0; k < GP_SQ_OBJ_KINDS; k++) {
        for (int op = 0; op < GP_SQ_OBJ_OPS; op++) {
            sqlite3_finalize(SQ(s)->obj[k][op]);
        }
    }
    for (int i = 0; i < GP_SQ_AUDIT_SHAPES; i++) {
        sqlite3_finalize(SQ(s)->audit[i]);
    }
    /* A transaction still open is rolled back by SQLite: nothing uncommitted survives. */
    sqlite3_close(SQ(s)->db);
    free(SQ(s));
}

/* ---- transactions ---- */

int gp__sqlite_begin(gp_store *s, gp_diag *d)
{
    int rc = run_fixed(s, GP_SQ_BEGIN, "begin", d);
    SQ(s)->in_tx = rc == 0;
    if (rc == 0 && (rc = gp__sqlite_lease_check(s, d)) < 0) {
        gp__sqlite_rollback(s);
    }
    return rc;
}

/* GP_EIO when the transaction begun by gp_store_begin is gone: SQLite rolls a transaction
 * back by itself after some errors (disk full, I/O error, out of memory), and writes after
 * that would each commit on their own. */
static int check_tx(gp_store *s, const char *what, gp_diag *d)
{
    if (SQ(s)->in_tx && sqlite3_get_autocommit(SQ(s)->db)) {
        return gp_diag_set(
            d, GP_EIO, "store: %s: the transaction was rolled back after an earlier error", what);
    }
    return 0;
}

int gp__sqlite_commit(gp_store *s, gp_diag *d)
{
    int rc = check_tx(s, "commit", d);
    if (rc == 0) {
        rc = run_fixed(s, GP_SQ_COMMIT, "commit", d);
    }
    if (rc < 0) {
        gp__sqlite_rollback(s);
    }
    SQ(s)->in_tx = 0;
    return rc;
}

void gp__sqlite_rollback(gp_store *s)
{
    SQ(s)->in_tx = 0;
    if (!sqlite3_get_autocommit(SQ(s)->db)) {
        run_fixed(s, GP_SQ_ROLLBACK, "rollback", NULL);
    }
}

/* Savepoints all have one name: SQLite's ROLLBACK TO and RELEASE act on the most recent one
 * of that name, so they nest as deep as callers open them. */
int gp__sqlite_savepoint(gp_store *s, gp_diag *d)
{
    int rc = check_tx(s, "savepoint", d);
    return rc < 0 ? rc : run_fixed(s, GP_SQ_SAVEPOINT, "savepoint", d);
}

int gp__sqlite_savepoint_release(gp_store *s, gp_diag *d)
{
    int rc = check_tx(s, "savepoint release", d);
    return rc < 0 ? rc : run_fixed(s, GP_SQ_RELEASE, "savepoint release", d);
}

void gp__sqlite_savepoint_rollback(gp_store *s)
{
    /* Both fail harmlessly when there is no savepoint or no transaction. */
    if (run_fixed(s, GP_SQ_ROLLBACK_TO, "savepoint rollback", NULL) == 0) {
        run_fixed(s, GP_SQ_RELEASE, "savepoint release", NULL);
    }
}

/* ---- allocation epoch ---- */

int gp__sqlite_next_epoch(gp_store *s, int64_t *epoch, gp_diag *d)
{
    *epoch = 0;
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_EPOCH_BUMP, &st, "epoch", d);
    if (rc < 0) {
        return rc;
    }
    if (gp_sqlite_exec(st) != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "epoch");
    }
    gp_sqlite_put(s, GP_SQ_EPOCH_BUMP, st);
    if (rc < 0 || (rc = gp_sqlite_get(s, GP_SQ_EPOCH_GET, &st, "epoch", d)) < 0) {
        return rc;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        *epoch = sqlite3_column_int64(st, 0);
    } else {
        rc = gp_sqlite_error(s, d, GP_EIO, "epoch");
    }
    gp_sqlite_put(s, GP_SQ_EPOCH_GET, st);
    return rc;
}

/* ---- meta ---- */

int gp__sqlite_meta_set(gp_store *s, const char *key, const char *value, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_META_SET, &st, "meta set", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    if (gp_sqlite_exec(st) != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "meta set");
    }
    gp_sqlite_put(s, GP_SQ_META_SET, st);
    return rc;
}

int gp__sqlite_meta_get(gp_store *s, const char *key, char *buf, size_t cap, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_META_GET, &st, "meta get", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        gp_sqlite_copy(buf, cap, st, 0);
    } else if (step == SQLITE_DONE) {
        rc = gp_diag_set(d, GP_ENOENT, "meta %s: not set", key);
    } else {
        rc = gp_sqlite_error(s, d, GP_EIO, "meta get");
    }
    gp_sqlite_put(s, GP_SQ_META_GET, st);
    return rc;
}
