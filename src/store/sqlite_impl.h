/*
 * Private to the SQLite backend of the store (sqlite_*.c): the gp_store struct, the list of
 * statements it prepares, and the helpers every part uses.
 *
 * Statements are prepared once per gp_store (SQLITE_PREPARE_PERSISTENT) on first use and kept
 * until gp_store_close: gpupoold inserts thousands of jobs per second and a prepare costs more
 * than the insert. A cached statement is in use from gp_sqlite_get until gp_sqlite_put resets
 * it; when a caller asks for a statement that is in use (an _each callback calling back into
 * the store), it gets a fresh one that gp_sqlite_put finalizes, so re-entry is safe.
 */
#ifndef GP_STORE_SQLITE_IMPL_H
#define GP_STORE_SQLITE_IMPL_H

#include "store/store_ops.h"

#include <sqlite3.h>

/* The usage ledger's statements (sqlite_usage.c). */
#define GP_SQLITE_USAGE_STMTS(X)                                                                   \
    X(USAGE_OPEN,                                                                                  \
      "INSERT INTO usage(job_id, replica, epoch, tenant_id, tenant, queue, node_id, node, model, " \
      "kind, gpus, milli, mig_profile, cpu_milli, memory_mib, start_ms, end_ms, "                  \
      "used_gpu_milli_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")          \
    X(USAGE_CLOSE, "UPDATE usage SET end_ms = MAX(start_ms, ?1), "                                 \
                   "used_gpu_milli_ms = MAX(used_gpu_milli_ms, ?2) "                               \
                   "WHERE job_id = ?3 AND replica = ?4 AND epoch = ?5 AND end_ms IS NULL")         \
    X(USAGE_USED, "UPDATE usage SET used_gpu_milli_ms = MAX(used_gpu_milli_ms, ?1) "               \
                  "WHERE job_id = ?2 AND replica = ?3 AND epoch = ?4 AND end_ms IS NULL")          \
    X(USAGE_EACH,                                                                                  \
      "SELECT id, job_id, replica, epoch, tenant_id, tenant, queue, node_id, node, model, kind, "  \
      "gpus, milli, mig_profile, cpu_milli, memory_mib, start_ms, end_ms, used_gpu_milli_ms "      \
      "FROM usage WHERE start_ms < ?2 AND (end_ms IS NULL OR end_ms > ?1) "                        \
      "AND (?3 = 0 OR tenant_id = ?3) ORDER BY id")                                                \
    X(USAGE_OPEN_EACH,                                                                             \
      "SELECT id, job_id, replica, epoch, tenant_id, tenant, queue, node_id, node, model, kind, "  \
      "gpus, milli, mig_profile, cpu_milli, memory_mib, start_ms, end_ms, used_gpu_milli_ms "      \
      "FROM usage WHERE end_ms IS NULL ORDER BY id")

/* Tenants' registry credentials (sqlite_registry.c). */
#define GP_SQLITE_REGISTRY_STMTS(X)                                                                \
    X(REGCRED_PUT,                                                                                 \
      "INSERT INTO registry_credentials(tenant_id, registry, username, password, updated_ms) "     \
      "VALUES (?, ?, ?, ?, ?) ON CONFLICT(tenant_id, registry) DO UPDATE SET "                     \
      "username = excluded.username, password = excluded.password, "                               \
      "updated_ms = excluded.updated_ms")                                                          \
    X(REGCRED_DELETE, "DELETE FROM registry_credentials WHERE tenant_id = ? AND registry = ?")     \
    X(REGCRED_EACH, "SELECT tenant_id, registry, username, password, updated_ms "                  \
                    "FROM registry_credentials ORDER BY tenant_id, registry")

/* X(ID, sql): every fixed statement of the backend. Object statements depend on the kind's
 * table and are built in sqlite_objects.c. */
#define GP_SQLITE_STMTS(X)                                                                         \
    X(VERSION, "PRAGMA user_version")                                                              \
    X(BEGIN, "BEGIN IMMEDIATE")                                                                    \
    X(COMMIT, "COMMIT")                                                                            \
    X(ROLLBACK, "ROLLBACK")                                                                        \
    X(SAVEPOINT, "SAVEPOINT gp_change")                                                            \
    X(RELEASE, "RELEASE gp_change")                                                                \
    X(ROLLBACK_TO, "ROLLBACK TO gp_change")                                                        \
    X(JOB_INSERT,                                                                                  \
      "INSERT INTO jobs(tenant_id, name, state, idempotency_key, submit_time_ms, spec, status) "   \
      "VALUES (?, ?, ?, ?, ?, ?, ?) "                                                              \
      "ON CONFLICT(tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING")      \
    X(JOB_BY_KEY, "SELECT id FROM jobs WHERE tenant_id = ? AND idempotency_key = ?")               \
    X(JOB_UPDATE, "UPDATE jobs SET state = ?, status = ? WHERE id = ?")                            \
    X(JOB_GET, "SELECT id, tenant_id, name, state, idempotency_key, submit_time_ms, spec, status " \
               "FROM jobs WHERE id = ?")                                                           \
    X(JOB_EACH, "SELECT id, tenant_id, name, state, idempotency_key, submit_time_ms, spec, "       \
                "status FROM jobs ORDER BY id")                                                    \
    X(EVENT_ADD, "INSERT INTO job_events(job_id, time_ms, type, message) VALUES (?, ?, ?, ?)")     \
    X(EVENT_EACH, "SELECT id, job_id, time_ms, type, message FROM job_events "                     \
                  "WHERE job_id = ? AND id > ? ORDER BY id LIMIT ?")                               \
    X(PLACEMENT_PUT,                                                                               \
      "INSERT INTO placements(job_id, replica, node_id, epoch, assignment) "                       \
      "VALUES (?, ?, ?, ?, ?) ON CONFLICT(job_id, replica) DO UPDATE SET "                         \
      "node_id = excluded.node_id, epoch = excluded.epoch, assignment = excluded.assignment")      \
    X(PLACEMENT_CLEAR, "DELETE FROM placements WHERE job_id = ?")                                  \
    X(PLACEMENT_EACH, "SELECT job_id, replica, node_id, epoch, assignment FROM placements "        \
                      "ORDER BY job_id, replica")                                                  \
    X(EPOCH_BUMP, "UPDATE counters SET value = value + 1 WHERE name = 'epoch'")                    \
    X(EPOCH_GET, "SELECT value FROM counters WHERE name = 'epoch'")                                \
    X(TOKEN_INSERT, "INSERT INTO tokens(name, hash, role, tenant_id, node_id, created_ms, "        \
                    "expires_ms, revoked) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")                        \
    X(TOKEN_REVOKE, "UPDATE tokens SET revoked = 1 WHERE id = ?")                                  \
    X(TOKEN_EACH, "SELECT id, name, hash, role, tenant_id, node_id, created_ms, expires_ms, "      \
                  "revoked FROM tokens ORDER BY id")                                               \
    X(META_SET, "INSERT INTO meta(key, value) VALUES (?, ?) "                                      \
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value")                           \
    X(META_GET, "SELECT value FROM meta WHERE key = ?")                                            \
    X(AUDIT_ADD, "INSERT INTO audit(time_ms, actor, role, tenant, action, object, detail) "        \
                 "VALUES (?, ?, ?, ?, ?, ?, ?)")                                                   \
    X(LEASE_READ, "SELECT holder, token, expires_ms, "                                             \
                  "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) "                    \
                  "FROM lease WHERE id = 1")                                                       \
    X(LEASE_WRITE, "UPDATE lease SET holder = ?, token = ?, expires_ms = ? WHERE id = 1")          \
    GP_SQLITE_USAGE_STMTS(X)                                                                       \
    GP_SQLITE_REGISTRY_STMTS(X)

typedef enum gp_sqlite_stmt_id {
#define GP_SQLITE_STMT_ENUM(id, sql) GP_SQ_##id,
    GP_SQLITE_STMTS(GP_SQLITE_STMT_ENUM)
#undef GP_SQLITE_STMT_ENUM
        GP_SQ_COUNT
} gp_sqlite_stmt_id;

/* The statements of each object kind (sqlite_objects.c). */
enum { GP_SQ_OBJ_INSERT, GP_SQ_OBJ_UPDATE, GP_SQ_OBJ_DELETE, GP_SQ_OBJ_EACH, GP_SQ_OBJ_OPS };
#define GP_SQ_OBJ_KINDS 5

/* The audit reads (sqlite_audit.c): one statement per shape of filter, so that each names only
 * the conditions it has and SQLite can serve them from the indexes of migration 5. A shape is
 * whether since and until are set (2 x 2) and, for each of the four string filters, none, an
 * exact value or a prefix (3^4). */
#define GP_SQ_AUDIT_SHAPES (2 * 2 * 3 * 3 * 3 * 3)

/* The SQLite backend's handle: its gp_store (the operations table) first. */
typedef struct gp_sqlite {
    gp_store base;
    sqlite3 *db;
    /* gp_store_begin succeeded and neither commit nor rollback ran since: lets commit and
     * savepoint notice a transaction SQLite rolled back by itself after an I/O error. */
    int in_tx;
    sqlite3_stmt *stmt[GP_SQ_COUNT];
    sqlite3_stmt *obj[GP_SQ_OBJ_KINDS][GP_SQ_OBJ_OPS];
    sqlite3_stmt *audit[GP_SQ_AUDIT_SHAPES];
} gp_sqlite;

/* Inside a transaction just begun: when the store holds the lease, checks it is still ours
 * (sqlite_lease.c). 0 when it holds none. */
int gp__sqlite_lease_check(gp_store *s, gp_diag *d);

/* The SQLite handle of a store of this backend. */
#define SQ(s) ((gp_sqlite *)(s))

/* The backend's operations (store_ops.h), one gp__sqlite_<name> per row. */
#define GP_SQLITE_OP_PROTO(cls, name, params, args) int gp__sqlite_##name params;
GP_STORE_OPS(GP_SQLITE_OP_PROTO)
#undef GP_SQLITE_OP_PROTO
int gp__sqlite_version(gp_store *s);
void gp__sqlite_rollback(gp_store *s);
void gp__sqlite_savepoint_rollback(gp_store *s);
void gp__sqlite_close(gp_store *s);

/* Gives in *st the statement cached in *slot, preparing sql into the slot on first use, or a
 * fresh statement when the cached one is in use. GP_EIO with d naming what. Hand the statement
 * back with gp_sqlite_put. */
int gp_sqlite_prepare(gp_store *s, sqlite3_stmt **slot, const char *sql, sqlite3_stmt **st,
                      const char *what, gp_diag *d);
/* gp_sqlite_prepare for a fixed statement. */
int gp_sqlite_get(gp_store *s, gp_sqlite_stmt_id id, sqlite3_stmt **st, const char *what,
                  gp_diag *d);
/* Resets st and clears its bindings when it is the one cached in *slot; finalizes it otherwise.
 * Call after reading the error message of a failed step (reset keeps it, but be plain). */
void gp_sqlite_put_slot(sqlite3_stmt **slot, sqlite3_stmt *st);
void gp_sqlite_put(gp_store *s, gp_sqlite_stmt_id id, sqlite3_stmt *st);

/* GP_EIO (or code) with "store: <what>: <SQLite's message>". */
int gp_sqlite_error(gp_store *s, gp_diag *d, int code, const char *what);

/* Steps a bound statement that returns no rows: SQLITE_DONE, or SQLite's result code. */
int gp_sqlite_exec(sqlite3_stmt *st);
/* Steps a bound write. 0; GP_EEXIST when a UNIQUE or PRIMARY KEY constraint refuses it and
 * GP_ENOENT when a FOREIGN KEY constraint does (both with d untouched: the caller words the
 * message, and for a delete a foreign key means "still referenced"); GP_EINVAL for other
 * constraints and GP_EIO otherwise, both with d naming what. */
int gp_sqlite_write(gp_store *s, sqlite3_stmt *st, const char *what, gp_diag *d);

/* Copies column text (NULL as "") into dst, truncated to cap. */
void gp_sqlite_copy(char *dst, size_t cap, sqlite3_stmt *st, int col);
/* A malloc'd copy of column text (NULL as ""); GP_ENOMEM with d when out of memory. */
int gp_sqlite_dup(sqlite3_stmt *st, int col, char **out, gp_diag *d);
/* Column text, "" for NULL: valid until the next step or reset of st. */
const char *gp_sqlite_text(sqlite3_stmt *st, int col);

#endif
