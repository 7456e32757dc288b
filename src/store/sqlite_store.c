/*
 * SQLite backend of the store. Migrations are an ordered list of SQL scripts; the database's
 * PRAGMA user_version says how many have run. Each runs in its own transaction together with
 * the version bump.
 */
#include "store/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp_store {
    sqlite3 *db;
};

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
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

int gp_store_schema_version(void)
{
    return NMIGRATIONS;
}

static int db_error(gp_store *s, gp_diag *d, int code, const char *what)
{
    return gp_diag_set(d, code, "store: %s: %s", what, sqlite3_errmsg(s->db));
}

int gp_store_version(gp_store *s)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            v = sqlite3_column_int(st, 0);
        }
        sqlite3_finalize(st);
    }
    return v;
}

static int migrate(gp_store *s, gp_diag *d)
{
    int v = gp_store_version(s);
    if (v < 0) {
        return db_error(s, d, GP_EIO, "reading the schema version");
    }
    if (v > NMIGRATIONS) {
        return gp_diag_set(d, GP_EIO,
                           "store: schema version %d is newer than this build's %d; "
                           "upgrade gpupool",
                           v, NMIGRATIONS);
    }
    for (; v < NMIGRATIONS; v++) {
        char bump[64];
        snprintf(bump, sizeof(bump), "PRAGMA user_version = %d", v + 1);
        if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(s->db, migrations[v], NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(s->db, bump, NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
            int rc = db_error(s, d, GP_EIO, "migration");
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            return rc;
        }
    }
    return 0;
}

int gp_store_open(const char *path, gp_store **out, gp_diag *d)
{
    *out = NULL;
    gp_store *s = calloc(1, sizeof(*s));
    if (!s) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc = 0;
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        rc = gp_diag_set(d, GP_EIO, "store: %s: %s", path,
                         s->db ? sqlite3_errmsg(s->db) : "cannot open");
    } else if (sqlite3_exec(s->db,
                            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
                            "PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000;",
                            NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_error(s, d, GP_EIO, path);
    } else {
        rc = migrate(s, d);
    }
    if (rc < 0) {
        gp_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void gp_store_close(gp_store *s)
{
    if (s) {
        sqlite3_close(s->db);
        free(s);
    }
}

/* Prepares sql into *st; on failure d names what was being done. */
static int prepare(gp_store *s, const char *sql, sqlite3_stmt **st, const char *what, gp_diag *d)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
        return db_error(s, d, GP_EIO, what);
    }
    return 0;
}

/* Steps a bound INSERT and finalizes it: 0 with the new row's id in *id, GP_EEXIST when a
 * constraint refuses the row (the caller words the message), GP_EIO with d set otherwise. */
static int run_insert(gp_store *s, sqlite3_stmt *st, int64_t *id, const char *what, gp_diag *d)
{
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    if (step == SQLITE_CONSTRAINT) {
        return GP_EEXIST;
    }
    if (step != SQLITE_DONE) {
        return db_error(s, d, GP_EIO, what);
    }
    *id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

static void copy(char *dst, size_t cap, const unsigned char *src)
{
    snprintf(dst, cap, "%s", src ? (const char *)src : "");
}

int gp_store_tenant_create(gp_store *s, gp_tenant_rec *rec, gp_diag *d)
{
    sqlite3_stmt *st;
    int prc = prepare(s,
                      "INSERT INTO tenants(name, quota_gpus, quota_gpu_memory_mib) "
                      "VALUES (?, ?, ?)",
                      &st, "tenant insert", d);
    if (prc < 0) {
        return prc;
    }
    sqlite3_bind_text(st, 1, rec->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, rec->quota_gpus);
    sqlite3_bind_int64(st, 3, rec->quota_gpu_memory_mib);
    int rc = run_insert(s, st, &rec->id, "tenant insert", d);
    return rc == GP_EEXIST ? gp_diag_set(d, rc, "tenant %s: already exists", rec->name) : rc;
}

int gp_store_tenant_get(gp_store *s, const char *name, gp_tenant_rec *out, gp_diag *d)
{
    sqlite3_stmt *st;
    int prc = prepare(s,
                      "SELECT id, name, quota_gpus, quota_gpu_memory_mib FROM tenants "
                      "WHERE name = ?",
                      &st, "tenant get", d);
    if (prc < 0) {
        return prc;
    }
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int step = sqlite3_step(st), rc = 0;
    if (step == SQLITE_ROW) {
        out->id = sqlite3_column_int64(st, 0);
        copy(out->name, sizeof(out->name), sqlite3_column_text(st, 1));
        out->quota_gpus = sqlite3_column_int64(st, 2);
        out->quota_gpu_memory_mib = sqlite3_column_int64(st, 3);
    } else if (step == SQLITE_DONE) {
        rc = gp_diag_set(d, GP_ENOENT, "tenant %s: not found", name);
    } else {
        rc = db_error(s, d, GP_EIO, "tenant get");
    }
    sqlite3_finalize(st);
    return rc;
}

/* The id of the tenant's job with this idempotency key, 0 when none, negative on error. */
static int64_t job_by_key(gp_store *s, const gp_job_rec *rec)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT id FROM jobs WHERE tenant_id = ? AND idempotency_key = ?",
                           -1, &st, NULL) != SQLITE_OK) {
        return GP_EIO;
    }
    sqlite3_bind_int64(st, 1, rec->tenant_id);
    sqlite3_bind_text(st, 2, rec->idempotency_key, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    int64_t id = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : step == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return id < 0 ? GP_EIO : id;
}

static int insert_job(gp_store *s, gp_job_rec *rec, const char *spec_json, gp_diag *d)
{
    sqlite3_stmt *st;
    int prc = prepare(s,
                      "INSERT INTO jobs(tenant_id, name, state, idempotency_key, "
                      "submit_time_ms, spec) VALUES (?, ?, ?, ?, ?, ?)",
                      &st, "job insert", d);
    if (prc < 0) {
        return prc;
    }
    sqlite3_bind_int64(st, 1, rec->tenant_id);
    sqlite3_bind_text(st, 2, rec->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, rec->state[0] ? rec->state : "Pending", -1, SQLITE_STATIC);
    if (rec->idempotency_key[0]) {
        sqlite3_bind_text(st, 4, rec->idempotency_key, -1, SQLITE_STATIC);
    } else {
        sqlite3_bind_null(st, 4);
    }
    sqlite3_bind_int64(st, 5, rec->submit_time_ms);
    sqlite3_bind_text(st, 6, spec_json, -1, SQLITE_STATIC);
    int rc = run_insert(s, st, &rec->id, "job insert", d);
    return rc == GP_EEXIST ? gp_diag_set(d, rc, "name: a job named %s is already active", rec->name)
                           : rc;
}

int gp_store_job_insert(gp_store *s, gp_job_rec *rec, const char *spec_json, int *created,
                        gp_diag *d)
{
    *created = 0;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        return db_error(s, d, GP_EIO, "begin");
    }
    int64_t existing = rec->idempotency_key[0] ? job_by_key(s, rec) : 0;
    int rc = existing < 0 ? db_error(s, d, GP_EIO, "idempotency lookup") : 0;
    if (rc == 0 && existing > 0) {
        rec->id = existing;
    } else if (rc == 0) {
        rc = insert_job(s, rec, spec_json, d);
        *created = rc == 0;
    }
    if (rc == 0 && sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_error(s, d, GP_EIO, "commit");
        *created = 0;
    }
    if (rc < 0) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

int gp_store_job_get(gp_store *s, int64_t id, gp_job_rec *out, char **spec_json, gp_diag *d)
{
    sqlite3_stmt *st;
    int prc = prepare(s,
                      "SELECT id, tenant_id, name, state, idempotency_key, submit_time_ms, "
                      "spec FROM jobs WHERE id = ?",
                      &st, "job get", d);
    if (prc < 0) {
        return prc;
    }
    sqlite3_bind_int64(st, 1, id);
    int step = sqlite3_step(st), rc = 0;
    if (step == SQLITE_ROW) {
        out->id = sqlite3_column_int64(st, 0);
        out->tenant_id = sqlite3_column_int64(st, 1);
        copy(out->name, sizeof(out->name), sqlite3_column_text(st, 2));
        copy(out->state, sizeof(out->state), sqlite3_column_text(st, 3));
        copy(out->idempotency_key, sizeof(out->idempotency_key), sqlite3_column_text(st, 4));
        out->submit_time_ms = sqlite3_column_int64(st, 5);
        if (spec_json) {
            const unsigned char *t = sqlite3_column_text(st, 6);
            *spec_json = strdup(t ? (const char *)t : "");
            rc = *spec_json ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
    } else if (step == SQLITE_DONE) {
        rc = gp_diag_set(d, GP_ENOENT, "job %lld: not found", (long long)id);
    } else {
        rc = db_error(s, d, GP_EIO, "job get");
    }
    sqlite3_finalize(st);
    return rc;
}
