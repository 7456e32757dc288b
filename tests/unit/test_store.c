/*
 * The store's conformance suite, run against SQLite always (test_store) and against
 * PostgreSQL when the pg fixture has started a server (test_store_pg: GP_TEST_PG_URL_FILE names
 * the file with its URL; each test gets a database of its own). Both backends must pass the
 * same tests; the few that read SQLite's files or plans directly are skipped on PostgreSQL, and
 * the few that go around the store use each backend's own SQL.
 *
 * The store: migrations (from an empty file and from a schema-1 database), durability
 * across reopen, transactions and savepoints, idempotent job insert, unique names, iteration
 * order and early stop, event pagination, tokens, objects, meta and the allocation epoch; the
 * audit log (order, filters, pages, and UPDATE and DELETE refused whoever opens the file).
 */
#include "store/sqlite_impl.h" /* test_audit_filters_use_indexes reads the plans */
#include "store/store.h"
#include "tests/unit/harness.h"

#include <dirent.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct fixture {
    char dir[64];
    char path[128];
    int pg;           /* the PostgreSQL backend */
    char pgbase[256]; /* the server's URL, without a database */
    char pgdb[64];    /* this test's database */
    char url[512];    /* what the store opens */
} fixture;

/* Runs sql on the server's maintenance database (pg) or on db of the fixture's server. */
static int pg_exec(const fixture *f, const char *db, const char *sql, char *err, size_t cap)
{
    char url[512];
    snprintf(url, sizeof(url), "%s/%s", f->pgbase, db);
    PGconn *c = PQconnectdb(url);
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (err) {
        snprintf(err, cap, "%s", ok ? "" : PQresultErrorMessage(r));
    }
    PQclear(r);
    PQfinish(c);
    return ok ? 0 : -1;
}

static int setup(void **state)
{
    static int serial;
    fixture *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/gpupool-store.XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof(f->path), "%s/state.db", f->dir);
    snprintf(f->url, sizeof(f->url), "sqlite:%s", f->path);
    const char *urlfile = getenv("GP_TEST_PG_URL_FILE");
    if (urlfile) {
        FILE *uf = fopen(urlfile, "r");
        if (!uf || !fgets(f->pgbase, sizeof(f->pgbase), uf)) {
            fail_msg("%s: no PostgreSQL URL (is the pg fixture running?)", urlfile);
        }
        fclose(uf);
        f->pgbase[strcspn(f->pgbase, "\n")] = '\0';
        f->pg = 1;
        snprintf(f->pgdb, sizeof(f->pgdb), "gp_t_%d_%d", (int)getpid(), ++serial);
        char sql[128], err[256];
        snprintf(sql, sizeof(sql), "CREATE DATABASE %s", f->pgdb);
        if (pg_exec(f, "postgres", sql, err, sizeof(err)) < 0) {
            fail_msg("%s: %s", sql, err);
        }
        snprintf(f->url, sizeof(f->url), "%s/%s", f->pgbase, f->pgdb);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f->pg) {
        char sql[128];
        snprintf(sql, sizeof(sql), "DROP DATABASE %s WITH (FORCE)", f->pgdb);
        pg_exec(f, "postgres", sql, NULL, 0);
    }
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

/* The tests that read SQLite's own files or plans. */
#define SQLITE_ONLY(f)                                                                             \
    do {                                                                                           \
        if ((f)->pg) {                                                                             \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static gp_store *open_store(const fixture *f)
{
    gp_store *s = NULL;
    gp_diag d;
    int rc = gp_store_open_url(f->url, &s, &d);
    if (rc != 0) {
        fail_msg("gp_store_open: %s", d.msg);
    }
    return s;
}

/* Asserts a call returned 0, printing the diag when not. */
#define OK(call)                                                                                   \
    do {                                                                                           \
        int ok_rc_ = (call);                                                                       \
        if (ok_rc_ != 0) {                                                                         \
            fail_msg("%s = %d: %s", #call, ok_rc_, d.msg);                                         \
        }                                                                                          \
    } while (0)

static int64_t put_obj(gp_store *s, gp_obj_kind kind, const char *name, const char *json)
{
    gp_diag d;
    int64_t id = 0;
    OK(gp_store_obj_put(s, kind, &id, name, json, &d));
    assert_true(id > 0);
    return id;
}

static int64_t insert_job(gp_store *s, int64_t tenant, const char *name, const char *key)
{
    gp_diag d;
    gp_job_rec j = {.tenant_id = tenant};
    snprintf(j.name, sizeof(j.name), "%s", name);
    snprintf(j.idempotency_key, sizeof(j.idempotency_key), "%s", key ? key : "");
    int created = -1;
    OK(gp_store_job_insert(s, &j, "{}", NULL, &created, &d));
    assert_int_equal(created, 1);
    return j.id;
}

/* ---- collectors for the _each walks ---- */

typedef struct objs {
    int n, stop_at; /* stop_at: return 42 on the stop_at-th call (1-based), 0 = never */
    int64_t id[16];
    char name[16][64];
    char json[16][128];
} objs;

static int collect_obj(void *ctx, int64_t id, const char *name, const char *json)
{
    objs *o = ctx;
    assert_true(o->n < 16);
    o->id[o->n] = id;
    snprintf(o->name[o->n], sizeof(o->name[0]), "%s", name);
    snprintf(o->json[o->n], sizeof(o->json[0]), "%s", json);
    o->n++;
    return o->n == o->stop_at ? 42 : 0;
}

static objs list_objs(gp_store *s, gp_obj_kind kind)
{
    gp_diag d;
    objs o = {0};
    OK(gp_store_obj_each(s, kind, collect_obj, &o, &d));
    return o;
}

typedef struct jobs {
    int n, stop_at;
    gp_job_rec rec[16];
    char status[16][64];
} jobs;

static int collect_job(void *ctx, const gp_job_rec *rec, const char *spec, const char *status)
{
    (void)spec;
    jobs *j = ctx;
    assert_true(j->n < 16);
    j->rec[j->n] = *rec;
    snprintf(j->status[j->n], sizeof(j->status[0]), "%s", status);
    j->n++;
    return j->n == j->stop_at ? 42 : 0;
}

static int count_jobs(gp_store *s)
{
    gp_diag d;
    jobs j = {0};
    OK(gp_store_job_each(s, collect_job, &j, &d));
    return j.n;
}

typedef struct events {
    int n;
    gp_event_rec ev[16];
} events;

static int collect_event(void *ctx, const gp_event_rec *ev)
{
    events *e = ctx;
    assert_true(e->n < 16);
    e->ev[e->n++] = *ev;
    return 0;
}

typedef struct placements {
    int n, stop_at;
    gp_placement_rec p[16];
    char json[16][64];
} placements;

static int collect_placement(void *ctx, const gp_placement_rec *p, const char *json)
{
    placements *pl = ctx;
    assert_true(pl->n < 16);
    pl->p[pl->n] = *p;
    snprintf(pl->json[pl->n], sizeof(pl->json[0]), "%s", json);
    pl->n++;
    return pl->n == pl->stop_at ? 42 : 0;
}

typedef struct tokens {
    int n, stop_at;
    gp_token_rec t[16];
} tokens;

static int collect_token(void *ctx, const gp_token_rec *t)
{
    tokens *tk = ctx;
    assert_true(tk->n < 16);
    tk->t[tk->n++] = *t;
    return tk->n == tk->stop_at ? 42 : 0;
}

/* ---- tests ---- */

static void test_reopen_keeps_everything(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    assert_int_equal(gp_store_version(s), gp_store_schema_version());

    OK(gp_store_begin(s, &d));
    int64_t tenant = put_obj(s, GP_OBJ_TENANT, "team-a", "{\"quota\":{\"gpus\":16}}");
    int64_t queue = put_obj(s, GP_OBJ_QUEUE, "research", "{\"weight\":2}");
    int64_t pclass = put_obj(s, GP_OBJ_PRIORITY_CLASS, "high", "{\"value\":100}");
    int64_t node = put_obj(s, GP_OBJ_NODE, "gpu-01", "{\"gpus\":8}");
    gp_job_rec j = {
        .tenant_id = tenant, .name = "train", .submit_time_ms = 1234, .idempotency_key = "req-1"};
    int created;
    OK(gp_store_job_insert(s, &j, "{\"name\":\"train\"}", "{\"reason\":\"queued\"}", &created, &d));
    gp_event_rec ev = {.job_id = j.id, .time_ms = 1234, .type = "Submitted", .message = "by bob"};
    OK(gp_store_event_add(s, &ev, &d));
    int64_t e1, e2;
    OK(gp_store_next_epoch(s, &e1, &d));
    OK(gp_store_next_epoch(s, &e2, &d));
    assert_true(e2 > e1);
    gp_placement_rec p = {.job_id = j.id, .replica = 0, .node_id = node, .epoch = e2};
    OK(gp_store_placement_put(s, &p, "{\"gpus\":[0,1]}", &d));
    gp_token_rec t = {.name = "bob",
                      .hash = "ab12",
                      .role = "user",
                      .tenant_id = tenant,
                      .created_ms = 77,
                      .expires_ms = 99};
    OK(gp_store_token_insert(s, &t, &d));
    OK(gp_store_meta_set(s, "admin_token_made", "1", &d));
    OK(gp_store_commit(s, &d));
    gp_store_close(s);

    /* Everything committed is there after a reopen, and no migration runs twice. */
    s = open_store(f);
    assert_int_equal(gp_store_version(s), gp_store_schema_version());
    objs o = list_objs(s, GP_OBJ_TENANT);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.id[0], tenant);
    assert_string_equal(o.name[0], "team-a");
    assert_string_equal(o.json[0], "{\"quota\":{\"gpus\":16}}");
    o = list_objs(s, GP_OBJ_QUEUE);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.id[0], queue);
    assert_string_equal(o.json[0], "{\"weight\":2}");
    o = list_objs(s, GP_OBJ_PRIORITY_CLASS);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.id[0], pclass);
    assert_string_equal(o.name[0], "high");
    o = list_objs(s, GP_OBJ_NODE);
    assert_int_equal(o.n, 1);
    assert_string_equal(o.name[0], "gpu-01");

    gp_job_rec j2;
    char *spec, *status;
    OK(gp_store_job_get(s, j.id, &j2, &spec, &status, &d));
    assert_string_equal(j2.name, "train");
    assert_string_equal(j2.state, "Pending");
    assert_string_equal(j2.idempotency_key, "req-1");
    assert_int_equal(j2.tenant_id, tenant);
    assert_int_equal(j2.submit_time_ms, 1234);
    assert_string_equal(spec, "{\"name\":\"train\"}");
    assert_string_equal(status, "{\"reason\":\"queued\"}");
    free(spec);
    free(status);
    assert_int_equal(gp_store_job_get(s, 999, &j2, NULL, NULL, &d), GP_ENOENT);

    events e = {0};
    OK(gp_store_event_each(s, j.id, 0, 0, collect_event, &e, &d));
    assert_int_equal(e.n, 1);
    assert_int_equal(e.ev[0].id, ev.id);
    assert_string_equal(e.ev[0].type, "Submitted");
    assert_string_equal(e.ev[0].message, "by bob");

    placements pl = {0};
    OK(gp_store_placement_each(s, collect_placement, &pl, &d));
    assert_int_equal(pl.n, 1);
    assert_int_equal(pl.p[0].node_id, node);
    assert_int_equal(pl.p[0].epoch, e2);
    assert_string_equal(pl.json[0], "{\"gpus\":[0,1]}");

    tokens tk = {0};
    OK(gp_store_token_each(s, collect_token, &tk, &d));
    assert_int_equal(tk.n, 1);
    assert_string_equal(tk.t[0].hash, "ab12");
    assert_string_equal(tk.t[0].role, "user");
    assert_int_equal(tk.t[0].tenant_id, tenant);
    assert_int_equal(tk.t[0].created_ms, 77);
    assert_int_equal(tk.t[0].expires_ms, 99);
    assert_int_equal(tk.t[0].revoked, 0);

    char buf[16];
    OK(gp_store_meta_get(s, "admin_token_made", buf, sizeof(buf), &d));
    assert_string_equal(buf, "1");

    /* The epoch keeps increasing across a reopen. */
    int64_t e3;
    OK(gp_store_begin(s, &d));
    OK(gp_store_next_epoch(s, &e3, &d));
    OK(gp_store_commit(s, &d));
    assert_true(e3 > e2);
    gp_store_close(s);
}

/* The schema of migration 1 exactly as released: databases at version 1 exist. */
static const char v1_schema[] =
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
    "  WHERE state IN ('Pending', 'Scheduled', 'Running', 'Preempted');"
    "PRAGMA user_version = 1;"
    "INSERT INTO tenants(id, name, quota_gpus) VALUES (7, 'team-a', 16);"
    "INSERT INTO jobs(id, tenant_id, name, state, idempotency_key, submit_time_ms, spec)"
    "  VALUES (3, 7, 'train', 'Running', 'k1', 1234, '{\"name\":\"train\"}');";

static void test_migrate_from_v1(void **state)
{
    fixture *f = *state;
    SQLITE_ONLY(f);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, v1_schema, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    gp_diag d;
    gp_store *s = open_store(f);
    assert_int_equal(gp_store_version(s), gp_store_schema_version());
    objs o = list_objs(s, GP_OBJ_TENANT);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.id[0], 7);
    assert_string_equal(o.name[0], "team-a");
    assert_string_equal(o.json[0], "{}");
    gp_job_rec j;
    char *spec, *status;
    OK(gp_store_job_get(s, 3, &j, &spec, &status, &d));
    assert_int_equal(j.tenant_id, 7);
    assert_string_equal(j.name, "train");
    assert_string_equal(j.state, "Running");
    assert_string_equal(j.idempotency_key, "k1");
    assert_int_equal(j.submit_time_ms, 1234);
    assert_string_equal(spec, "{\"name\":\"train\"}");
    assert_string_equal(status, "{}");
    free(spec);
    free(status);

    /* The migrated database takes the new kinds of records, and the old indexes still hold. */
    OK(gp_store_begin(s, &d));
    int64_t node = put_obj(s, GP_OBJ_NODE, "gpu-01", NULL);
    gp_placement_rec p = {.job_id = 3, .replica = 0, .node_id = node, .epoch = 1};
    OK(gp_store_placement_put(s, &p, NULL, &d));
    gp_job_rec retry = {.tenant_id = 7, .name = "other", .idempotency_key = "k1"};
    int created;
    OK(gp_store_job_insert(s, &retry, "{}", NULL, &created, &d));
    assert_int_equal(created, 0);
    assert_int_equal(retry.id, 3);
    OK(gp_store_commit(s, &d));
    gp_store_close(s);
}

static void test_idempotent_insert(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    int64_t a = put_obj(s, GP_OBJ_TENANT, "a", NULL), b = put_obj(s, GP_OBJ_TENANT, "b", NULL);
    int64_t id = insert_job(s, a, "x", "k1");

    /* A retry with the same key returns the same job, even with another spec and name... */
    int created = -1;
    gp_job_rec retry = {.tenant_id = a, .name = "y", .idempotency_key = "k1"};
    OK(gp_store_job_insert(s, &retry, "{\"other\":true}", "{\"x\":1}", &created, &d));
    assert_int_equal(created, 0);
    assert_int_equal(retry.id, id);
    /* ...and with the same name while that job is active (a retry, not a name clash). */
    gp_job_rec same = {.tenant_id = a, .name = "x", .idempotency_key = "k1"};
    OK(gp_store_job_insert(s, &same, "{}", NULL, &created, &d));
    assert_int_equal(created, 0);
    assert_int_equal(same.id, id);
    assert_int_equal(count_jobs(s), 1);
    char *spec;
    OK(gp_store_job_get(s, id, &retry, &spec, NULL, &d));
    assert_string_equal(spec, "{}");
    assert_string_equal(retry.name, "x");
    free(spec);

    /* The same key in another tenant is another job. */
    int64_t other = insert_job(s, b, "x", "k1");
    assert_int_not_equal(other, id);
    assert_int_equal(count_jobs(s), 2);

    /* A job of a tenant that is not stored is refused. */
    gp_job_rec orphan = {.tenant_id = 999, .name = "z"};
    assert_int_equal(gp_store_job_insert(s, &orphan, "{}", NULL, &created, &d), GP_ENOENT);
    assert_non_null(strstr(d.msg, "tenant 999"));
    OK(gp_store_commit(s, &d));
    gp_store_close(s);
}

static void test_active_names(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    int64_t a = put_obj(s, GP_OBJ_TENANT, "a", NULL), b = put_obj(s, GP_OBJ_TENANT, "b", NULL);
    int64_t x = insert_job(s, a, "x", NULL);
    insert_job(s, b, "x", NULL); /* names are unique per tenant only */

    /* An active job's name is unique in its tenant; nothing is stored on refusal. */
    int created = -1;
    gp_job_rec dup = {.tenant_id = a, .name = "x"};
    assert_int_equal(gp_store_job_insert(s, &dup, "{}", NULL, &created, &d), GP_EEXIST);
    assert_non_null(strstr(d.msg, "x"));
    assert_int_equal(created, 0);
    assert_int_equal(count_jobs(s), 2);

    /* Once the job has finished its name is free again. */
    OK(gp_store_job_update(s, x, "Succeeded", "{\"exit\":0}", &d));
    int64_t x2 = insert_job(s, a, "x", NULL);
    assert_int_not_equal(x2, x);
    gp_job_rec j;
    char *status;
    OK(gp_store_job_get(s, x, &j, NULL, &status, &d));
    assert_string_equal(j.state, "Succeeded");
    assert_string_equal(status, "{\"exit\":0}");
    free(status);
    /* Making the old job active again would clash with the new one. */
    assert_int_equal(gp_store_job_update(s, x, "Running", NULL, &d), GP_EEXIST);
    assert_int_equal(gp_store_job_update(s, 999, "Running", NULL, &d), GP_ENOENT);
    OK(gp_store_commit(s, &d));
    gp_store_close(s);
}

static void test_savepoint_rollback(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    OK(gp_store_savepoint(s, &d));
    put_obj(s, GP_OBJ_QUEUE, "a", NULL);
    OK(gp_store_savepoint_release(s, &d));

    OK(gp_store_savepoint(s, &d));
    put_obj(s, GP_OBJ_QUEUE, "b", NULL);
    gp_store_savepoint_rollback(s);

    /* A change refused by a constraint, undone by its savepoint; the transaction goes on. */
    OK(gp_store_savepoint(s, &d));
    put_obj(s, GP_OBJ_QUEUE, "c", NULL);
    int64_t id = 0;
    assert_int_equal(gp_store_obj_put(s, GP_OBJ_QUEUE, &id, "a", NULL, &d), GP_EEXIST);
    gp_store_savepoint_rollback(s);

    /* One level of nesting: the inner rollback keeps the outer savepoint's change. */
    OK(gp_store_savepoint(s, &d));
    put_obj(s, GP_OBJ_QUEUE, "d", NULL);
    OK(gp_store_savepoint(s, &d));
    put_obj(s, GP_OBJ_QUEUE, "e", NULL);
    gp_store_savepoint_rollback(s);
    OK(gp_store_savepoint_release(s, &d));
    OK(gp_store_commit(s, &d));
    gp_store_close(s);

    s = open_store(f);
    objs o = list_objs(s, GP_OBJ_QUEUE);
    assert_int_equal(o.n, 2);
    assert_string_equal(o.name[0], "a");
    assert_string_equal(o.name[1], "d");
    gp_store_close(s);
}

static void test_transaction_rollback(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    gp_store_rollback(s); /* without a transaction: nothing to do, no complaint */
    gp_store_savepoint_rollback(s);

    OK(gp_store_begin(s, &d));
    int64_t tenant = put_obj(s, GP_OBJ_TENANT, "a", NULL);
    int64_t node = put_obj(s, GP_OBJ_NODE, "n", NULL);
    int64_t job = insert_job(s, tenant, "x", "k");
    gp_event_rec ev = {.job_id = job, .type = "Submitted"};
    OK(gp_store_event_add(s, &ev, &d));
    int64_t epoch;
    OK(gp_store_next_epoch(s, &epoch, &d));
    gp_placement_rec p = {.job_id = job, .node_id = node, .epoch = epoch};
    OK(gp_store_placement_put(s, &p, NULL, &d));
    gp_token_rec t = {.name = "t", .hash = "h", .role = "admin"};
    OK(gp_store_token_insert(s, &t, &d));
    OK(gp_store_meta_set(s, "k", "v", &d));
    gp_store_rollback(s);
    gp_store_rollback(s);

    /* Nothing is left, in this connection or after a reopen. */
    for (int round = 0; round < 2; round++) {
        for (int k = GP_OBJ_TENANT; k <= GP_OBJ_NODE; k++) {
            assert_int_equal(list_objs(s, (gp_obj_kind)k).n, 0);
        }
        assert_int_equal(count_jobs(s), 0);
        events e = {0};
        OK(gp_store_event_each(s, job, 0, 0, collect_event, &e, &d));
        assert_int_equal(e.n, 0);
        placements pl = {0};
        OK(gp_store_placement_each(s, collect_placement, &pl, &d));
        assert_int_equal(pl.n, 0);
        tokens tk = {0};
        OK(gp_store_token_each(s, collect_token, &tk, &d));
        assert_int_equal(tk.n, 0);
        char buf[8];
        assert_int_equal(gp_store_meta_get(s, "k", buf, sizeof(buf), &d), GP_ENOENT);
        gp_store_close(s);
        s = open_store(f);
    }
    /* The store works on after a rollback. */
    OK(gp_store_begin(s, &d));
    put_obj(s, GP_OBJ_TENANT, "a", NULL);
    OK(gp_store_commit(s, &d));
    assert_int_equal(list_objs(s, GP_OBJ_TENANT).n, 1);
    gp_store_close(s);
}

static void test_iteration_order_and_stop(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    /* Names in reverse order, so id order and name order differ. */
    int64_t ids[4];
    const char *names[4] = {"zz", "yy", "xx", "ww"};
    for (int i = 0; i < 4; i++) {
        ids[i] = put_obj(s, GP_OBJ_NODE, names[i], NULL);
    }
    /* Renaming keeps the id, and so the place in the order. */
    int64_t renamed = ids[1];
    OK(gp_store_obj_put(s, GP_OBJ_NODE, &renamed, "aa", "{\"v\":2}", &d));
    assert_int_equal(renamed, ids[1]);
    objs o = list_objs(s, GP_OBJ_NODE);
    assert_int_equal(o.n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(o.id[i], ids[i]);
        assert_true(i == 0 || o.id[i] > o.id[i - 1]);
    }
    assert_string_equal(o.name[1], "aa");
    assert_string_equal(o.json[1], "{\"v\":2}");

    objs stop = {.stop_at = 2};
    assert_int_equal(gp_store_obj_each(s, GP_OBJ_NODE, collect_obj, &stop, &d), 42);
    assert_int_equal(stop.n, 2);

    int64_t tenant = put_obj(s, GP_OBJ_TENANT, "t", NULL);
    int64_t jid[3];
    for (int i = 0; i < 3; i++) {
        jid[i] = insert_job(s, tenant, names[i], NULL);
    }
    jobs j = {0};
    OK(gp_store_job_each(s, collect_job, &j, &d));
    assert_int_equal(j.n, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(j.rec[i].id, jid[i]);
    }
    jobs jstop = {.stop_at = 1};
    assert_int_equal(gp_store_job_each(s, collect_job, &jstop, &d), 42);
    assert_int_equal(jstop.n, 1);

    /* Placements come by job, then replica, whatever the order they were put in. */
    gp_placement_rec p[] = {
        {.job_id = jid[1], .replica = 1, .node_id = ids[0], .epoch = 1},
        {.job_id = jid[0], .replica = 0, .node_id = ids[0], .epoch = 2},
        {.job_id = jid[1], .replica = 0, .node_id = ids[2], .epoch = 3},
    };
    for (int i = 0; i < 3; i++) {
        OK(gp_store_placement_put(s, &p[i], NULL, &d));
    }
    /* A put of a stored replica replaces it. */
    p[1].epoch = 9;
    OK(gp_store_placement_put(s, &p[1], "{\"v\":2}", &d));
    placements pl = {0};
    OK(gp_store_placement_each(s, collect_placement, &pl, &d));
    assert_int_equal(pl.n, 3);
    assert_int_equal(pl.p[0].job_id, jid[0]);
    assert_int_equal(pl.p[0].epoch, 9);
    assert_string_equal(pl.json[0], "{\"v\":2}");
    assert_int_equal(pl.p[1].job_id, jid[1]);
    assert_int_equal(pl.p[1].replica, 0);
    assert_int_equal(pl.p[2].replica, 1);
    placements plstop = {.stop_at = 2};
    assert_int_equal(gp_store_placement_each(s, collect_placement, &plstop, &d), 42);
    assert_int_equal(plstop.n, 2);
    /* Clearing a job removes its placements only; clearing none is fine. */
    OK(gp_store_placement_clear(s, jid[1], &d));
    OK(gp_store_placement_clear(s, jid[2], &d));
    pl = (placements){0};
    OK(gp_store_placement_each(s, collect_placement, &pl, &d));
    assert_int_equal(pl.n, 1);
    assert_int_equal(pl.p[0].job_id, jid[0]);
    /* Placements must name a stored job and node. */
    gp_placement_rec bad = {.job_id = jid[2], .node_id = 999};
    assert_int_equal(gp_store_placement_put(s, &bad, NULL, &d), GP_ENOENT);

    tokens tk = {.stop_at = 2};
    for (int i = 0; i < 3; i++) {
        gp_token_rec t = {.role = "user"};
        snprintf(t.name, sizeof(t.name), "%s", names[i]);
        snprintf(t.hash, sizeof(t.hash), "hash-%d", i);
        OK(gp_store_token_insert(s, &t, &d));
    }
    assert_int_equal(gp_store_token_each(s, collect_token, &tk, &d), 42);
    assert_int_equal(tk.n, 2);
    assert_string_equal(tk.t[0].name, "zz");
    assert_string_equal(tk.t[1].name, "yy");
    OK(gp_store_commit(s, &d));
    gp_store_close(s);
}

typedef struct nested {
    gp_store *s;
    int outer, inner;
} nested;

static int count_inner(void *ctx, int64_t id, const char *name, const char *json)
{
    (void)id, (void)name, (void)json;
    ((nested *)ctx)->inner++;
    return 0;
}

static int walk_inner(void *ctx, int64_t id, const char *name, const char *json)
{
    (void)id, (void)name, (void)json;
    nested *n = ctx;
    if (++n->outer > 3) {
        return -1; /* the inner walk restarted the outer one */
    }
    gp_diag d;
    OK(gp_store_obj_each(n->s, GP_OBJ_QUEUE, count_inner, n, &d));
    return 0;
}

/* A callback may walk the same kind again: the second walk gets its own statement. */
static void test_reentrant_walk(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    put_obj(s, GP_OBJ_QUEUE, "a", NULL);
    put_obj(s, GP_OBJ_QUEUE, "b", NULL);
    put_obj(s, GP_OBJ_QUEUE, "c", NULL);
    OK(gp_store_commit(s, &d));
    nested n = {.s = s};
    OK(gp_store_obj_each(s, GP_OBJ_QUEUE, walk_inner, &n, &d));
    assert_int_equal(n.outer, 3);
    assert_int_equal(n.inner, 9);
    gp_store_close(s);
}

static void test_event_pagination(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    int64_t tenant = put_obj(s, GP_OBJ_TENANT, "t", NULL);
    int64_t j1 = insert_job(s, tenant, "one", NULL), j2 = insert_job(s, tenant, "two", NULL);
    int64_t ids[5];
    for (int i = 0; i < 5; i++) {
        gp_event_rec ev = {.job_id = j1, .time_ms = 100 + i};
        snprintf(ev.type, sizeof(ev.type), "E%d", i);
        OK(gp_store_event_add(s, &ev, &d));
        ids[i] = ev.id;
        gp_event_rec other = {.job_id = j2, .type = "Other"}; /* interleaved, never listed */
        OK(gp_store_event_add(s, &other, &d));
    }
    gp_event_rec orphan = {.job_id = 999, .type = "X"};
    assert_int_equal(gp_store_event_add(s, &orphan, &d), GP_ENOENT);
    OK(gp_store_commit(s, &d));

    events e = {0};
    OK(gp_store_event_each(s, j1, 0, 0, collect_event, &e, &d));
    assert_int_equal(e.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(e.ev[i].id, ids[i]);
        assert_int_equal(e.ev[i].job_id, j1);
        assert_int_equal(e.ev[i].time_ms, 100 + i);
    }
    /* A page of two after the second event. */
    e = (events){0};
    OK(gp_store_event_each(s, j1, ids[1], 2, collect_event, &e, &d));
    assert_int_equal(e.n, 2);
    assert_int_equal(e.ev[0].id, ids[2]);
    assert_int_equal(e.ev[1].id, ids[3]);
    assert_string_equal(e.ev[1].type, "E3");
    /* The last page is short, and after the last event there is nothing. */
    e = (events){0};
    OK(gp_store_event_each(s, j1, ids[3], 10, collect_event, &e, &d));
    assert_int_equal(e.n, 1);
    e = (events){0};
    OK(gp_store_event_each(s, j1, ids[4], 0, collect_event, &e, &d));
    assert_int_equal(e.n, 0);
    gp_store_close(s);
}

static void test_newer_schema_refused(void **state)
{
    fixture *f = *state;
    if (f->pg) {
        gp_store_close(open_store(f));
        char sql[96];
        snprintf(sql, sizeof(sql), "UPDATE gp_schema SET version = %d",
                 gp_store_schema_version() + 1);
        assert_int_equal(pg_exec(f, f->pgdb, sql, NULL, 0), 0);
        gp_store *s;
        gp_diag d;
        assert_int_equal(gp_store_open_url(f->url, &s, &d), GP_EIO);
        assert_null(s);
        assert_non_null(strstr(d.msg, "newer"));
        return;
    }
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    char sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", gp_store_schema_version() + 1);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    gp_store *s;
    gp_diag d;
    assert_int_equal(gp_store_open(f->path, &s, &d), GP_EIO);
    assert_null(s);
    assert_non_null(strstr(d.msg, "newer"));
    assert_int_equal(gp_store_open("/nonexistent-dir/x.db", &s, &d), GP_EIO);
    assert_null(s);
}

static void test_token_uniqueness(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    gp_token_rec t = {.name = "ci", .hash = "aaaa", .role = "operator"};
    OK(gp_store_token_insert(s, &t, &d));
    gp_token_rec same_hash = {.name = "other", .hash = "aaaa", .role = "user"};
    assert_int_equal(gp_store_token_insert(s, &same_hash, &d), GP_EEXIST);
    assert_non_null(strstr(d.msg, "hash"));
    gp_token_rec same_name = {.name = "ci", .hash = "bbbb", .role = "user"};
    assert_int_equal(gp_store_token_insert(s, &same_name, &d), GP_EEXIST);
    assert_non_null(strstr(d.msg, "token ci: already exists"));

    OK(gp_store_token_revoke(s, t.id, &d));
    assert_int_equal(gp_store_token_revoke(s, t.id + 100, &d), GP_ENOENT);
    /* A revoked token still holds its hash. */
    assert_int_equal(gp_store_token_insert(s, &same_hash, &d), GP_EEXIST);
    OK(gp_store_commit(s, &d));
    tokens tk = {0};
    OK(gp_store_token_each(s, collect_token, &tk, &d));
    assert_int_equal(tk.n, 1);
    assert_int_equal(tk.t[0].revoked, 1);
    gp_store_close(s);
}

static void test_obj_put_delete(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    int64_t research = put_obj(s, GP_OBJ_QUEUE, "research", NULL);
    int64_t prod = put_obj(s, GP_OBJ_QUEUE, "prod", NULL);
    /* Names are unique per kind, not across kinds. */
    put_obj(s, GP_OBJ_PRIORITY_CLASS, "research", NULL);

    int64_t id = 0;
    assert_int_equal(gp_store_obj_put(s, GP_OBJ_QUEUE, &id, "research", "{}", &d), GP_EEXIST);
    assert_string_equal(d.msg, "queue research: already exists");
    assert_int_equal(id, 0);
    id = prod;
    assert_int_equal(gp_store_obj_put(s, GP_OBJ_QUEUE, &id, "research", "{}", &d), GP_EEXIST);
    id = 999;
    assert_int_equal(gp_store_obj_put(s, GP_OBJ_QUEUE, &id, "new", "{}", &d), GP_ENOENT);
    assert_int_equal(gp_store_obj_put(s, (gp_obj_kind)9, &id, "x", "{}", &d), GP_EINVAL);

    OK(gp_store_obj_delete(s, GP_OBJ_QUEUE, research, &d));
    assert_int_equal(gp_store_obj_delete(s, GP_OBJ_QUEUE, research, &d), GP_ENOENT);
    objs o = list_objs(s, GP_OBJ_QUEUE);
    assert_int_equal(o.n, 1);
    assert_int_equal(o.id[0], prod);
    assert_int_equal(list_objs(s, GP_OBJ_PRIORITY_CLASS).n, 1);
    /* The name of a deleted object is free. */
    put_obj(s, GP_OBJ_QUEUE, "research", NULL);

    /* A tenant with jobs, or a node with placements, cannot be deleted. */
    int64_t tenant = put_obj(s, GP_OBJ_TENANT, "t", NULL);
    int64_t node = put_obj(s, GP_OBJ_NODE, "n", NULL);
    int64_t job = insert_job(s, tenant, "x", NULL);
    gp_placement_rec p = {.job_id = job, .node_id = node, .epoch = 1};
    OK(gp_store_placement_put(s, &p, NULL, &d));
    assert_int_equal(gp_store_obj_delete(s, GP_OBJ_TENANT, tenant, &d), GP_ESTATE);
    assert_int_equal(gp_store_obj_delete(s, GP_OBJ_NODE, node, &d), GP_ESTATE);
    assert_non_null(strstr(d.msg, "node"));
    OK(gp_store_placement_clear(s, job, &d));
    OK(gp_store_obj_delete(s, GP_OBJ_NODE, node, &d));
    OK(gp_store_commit(s, &d));
    gp_store_close(s);

    s = open_store(f);
    assert_int_equal(list_objs(s, GP_OBJ_QUEUE).n, 2);
    assert_int_equal(list_objs(s, GP_OBJ_NODE).n, 0);
    gp_store_close(s);
}

typedef struct creds {
    int n;
    int64_t tenant[8];
    char registry[8][64], username[8][64], password[8][64];
    int64_t updated[8];
} creds;

static int collect_cred(void *ctx, const gp_registry_cred_rec *r)
{
    creds *c = ctx;
    c->tenant[c->n] = r->tenant_id;
    snprintf(c->registry[c->n], 64, "%s", r->registry);
    snprintf(c->username[c->n], 64, "%s", r->username);
    snprintf(c->password[c->n], 64, "%s", r->password);
    c->updated[c->n++] = r->updated_ms;
    return 0;
}

/* Registry credentials: one per tenant and registry (a second put replaces), kept across a
 * reopen, refused for a tenant that is not stored, and gone with their tenant. */
static void test_registry_creds(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    int64_t a = put_obj(s, GP_OBJ_TENANT, "a", NULL);
    int64_t b = put_obj(s, GP_OBJ_TENANT, "b", NULL);
    gp_registry_cred_rec r = {a, "127.0.0.1:5000", "alice", "s3cret", 10};
    OK(gp_store_registry_cred_put(s, &r, &d));
    r = (gp_registry_cred_rec){a, "127.0.0.1:5000", "alice2", "other", 20};
    OK(gp_store_registry_cred_put(s, &r, &d));
    r = (gp_registry_cred_rec){a, "docker.io", "al", "pw", 30};
    OK(gp_store_registry_cred_put(s, &r, &d));
    r = (gp_registry_cred_rec){b, "127.0.0.1:5000", "bob", "bpw", 40};
    OK(gp_store_registry_cred_put(s, &r, &d));
    r = (gp_registry_cred_rec){999, "x.io", "u", "p", 1};
    assert_int_equal(gp_store_registry_cred_put(s, &r, &d), GP_ENOENT);
    OK(gp_store_commit(s, &d));
    gp_store_close(s);

    s = open_store(f);
    creds c = {0};
    OK(gp_store_registry_cred_each(s, collect_cred, &c, &d));
    assert_int_equal(c.n, 3);
    assert_int_equal(c.tenant[0], a);
    assert_string_equal(c.registry[0], "127.0.0.1:5000");
    assert_string_equal(c.username[0], "alice2");
    assert_string_equal(c.password[0], "other");
    assert_int_equal(c.updated[0], 20);
    assert_string_equal(c.registry[1], "docker.io");
    assert_int_equal(c.tenant[2], b);
    OK(gp_store_begin(s, &d));
    OK(gp_store_registry_cred_delete(s, a, "docker.io", &d));
    assert_int_equal(gp_store_registry_cred_delete(s, a, "docker.io", &d), GP_ENOENT);
    OK(gp_store_obj_delete(s, GP_OBJ_TENANT, b, &d));
    OK(gp_store_commit(s, &d));
    c = (creds){0};
    OK(gp_store_registry_cred_each(s, collect_cred, &c, &d));
    assert_int_equal(c.n, 1);
    assert_string_equal(c.username[0], "alice2");
    gp_store_close(s);
}

static void test_meta(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    char buf[8];
    assert_int_equal(gp_store_meta_get(s, "cluster", buf, sizeof(buf), &d), GP_ENOENT);
    assert_non_null(strstr(d.msg, "cluster"));
    OK(gp_store_begin(s, &d));
    OK(gp_store_meta_set(s, "cluster", "first", &d));
    OK(gp_store_meta_set(s, "cluster", "second-long-value", &d));
    OK(gp_store_commit(s, &d));
    OK(gp_store_meta_get(s, "cluster", buf, sizeof(buf), &d));
    assert_string_equal(buf, "second-"); /* truncated to the buffer */
    gp_store_close(s);
}

/* ---- the audit log ---- */

typedef struct audits {
    int n;
    int64_t id[16], time[16];
    char actor[16][32], role[16][16], tenant[16][32], action[16][32], object[16][32],
        detail[16][64];
} audits;

static int collect_audit(void *ctx, const gp_audit_rec *r)
{
    audits *a = ctx;
    assert_true(a->n < 16);
    a->id[a->n] = r->id;
    a->time[a->n] = r->time_ms;
    snprintf(a->actor[a->n], sizeof(a->actor[0]), "%s", r->actor);
    snprintf(a->role[a->n], sizeof(a->role[0]), "%s", r->role);
    snprintf(a->tenant[a->n], sizeof(a->tenant[0]), "%s", r->tenant);
    snprintf(a->action[a->n], sizeof(a->action[0]), "%s", r->action);
    snprintf(a->object[a->n], sizeof(a->object[0]), "%s", r->object);
    snprintf(a->detail[a->n], sizeof(a->detail[0]), "%s", r->detail);
    a->n++;
    return 0;
}

static audits list_audit(gp_store *s, const gp_audit_filter *f)
{
    gp_diag d;
    audits a = {0};
    OK(gp_store_audit_each(s, f, collect_audit, &a, &d));
    return a;
}

/* The records of test_audit_log, in the order appended. */
static const struct {
    int64_t time;
    const char *actor, *role, *tenant, *action, *object, *detail;
} audit_fixture[] = {
    {1000, "admin", "admin", "", "tenant.create", "tenant/team-a", "{\"request\":\"POST\"}"},
    {2000, "alice", "user", "team-a", "job.submit", "job/1", NULL},
    {3000, "scheduler", "", "team-a", "placement.allocate", "job/1", "{\"epoch\":1}"},
    {4000, "alice", "user", "team-a", "job.cancel", "job/1", NULL},
    {4000, "alice", "user", "team-a", "placement.free", "job/1", "{\"ended\":\"Cancelled\"}"},
    {5000, "ops", "operator", "", "node.drain", "node/gpu-01", NULL},
};
#define NAUDIT_FIXTURE ((int)(sizeof(audit_fixture) / sizeof(audit_fixture[0])))

/* Open file descriptors of this process. */
static int open_fds(void)
{
    int n = 0;
    DIR *dir = opendir("/proc/self/fd");
    assert_non_null(dir);
    for (struct dirent *e = readdir(dir); e; e = readdir(dir)) {
        n += e->d_name[0] != '.';
    }
    closedir(dir);
    return n;
}

/* A group commit's changes, each in its savepoint, over rows already stored: a change that
 * touches many pages (here every job of 400, with 2 KiB of status each) journals them for its
 * savepoint, hundreds of KiB, in memory: no temporary file is opened for it; and the savepoint
 * rolled back still undoes only its own change. */
static void test_savepoints_journal_in_memory(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    int64_t tenant = put_obj(s, GP_OBJ_TENANT, "t", "{}");
    enum { NJOBS = 400 };
    int64_t ids[NJOBS];
    char status[2048];
    memset(status, 'x', sizeof(status));
    memcpy(status, "{\"pad\":\"", 8);
    memcpy(status + sizeof(status) - 3, "\"}", 3);
    OK(gp_store_begin(s, &d));
    for (int i = 0; i < NJOBS; i++) {
        char name[32];
        snprintf(name, sizeof(name), "job-%d", i);
        ids[i] = insert_job(s, tenant, name, NULL);
        OK(gp_store_job_update(s, ids[i], "Pending", status, &d));
    }
    OK(gp_store_commit(s, &d));
    int fds = open_fds();
    OK(gp_store_begin(s, &d));
    for (int round = 0; round < 2; round++) {
        OK(gp_store_savepoint(s, &d));
        for (int i = 0; i < NJOBS; i++) {
            OK(gp_store_job_update(s, ids[i], round ? "Failed" : "Running", status, &d));
        }
        assert_int_equal(open_fds(), fds);
        if (round) {
            gp_store_savepoint_rollback(s);
        } else {
            OK(gp_store_savepoint_release(s, &d));
        }
    }
    OK(gp_store_commit(s, &d));
    gp_store_close(s);
    s = open_store(f);
    for (int i = 0; i < NJOBS; i += 57) {
        gp_job_rec rec;
        OK(gp_store_job_get(s, ids[i], &rec, NULL, NULL, &d));
        assert_string_equal(rec.state, "Running");
    }
    gp_store_close(s);
}

static void test_audit_log(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    int64_t ids[NAUDIT_FIXTURE];
    OK(gp_store_begin(s, &d));
    for (int i = 0; i < NAUDIT_FIXTURE; i++) {
        gp_audit_rec r = {.time_ms = audit_fixture[i].time,
                          .actor = audit_fixture[i].actor,
                          .role = audit_fixture[i].role,
                          .tenant = audit_fixture[i].tenant,
                          .action = audit_fixture[i].action,
                          .object = audit_fixture[i].object,
                          .detail = audit_fixture[i].detail};
        OK(gp_store_audit_add(s, &r, &d));
        ids[i] = r.id;
        assert_true(i == 0 || ids[i] > ids[i - 1]);
    }
    OK(gp_store_commit(s, &d));
    /* A record of a rolled-back transaction is not kept. */
    OK(gp_store_begin(s, &d));
    gp_audit_rec lost = {.time_ms = 6000, .actor = "x", .action = "job.submit"};
    OK(gp_store_audit_add(s, &lost, &d));
    gp_store_rollback(s);
    gp_store_close(s);

    s = open_store(f);
    audits a = list_audit(s, NULL);
    assert_int_equal(a.n, NAUDIT_FIXTURE);
    for (int i = 0; i < NAUDIT_FIXTURE; i++) {
        assert_int_equal(a.id[i], ids[i]);
        assert_int_equal(a.time[i], audit_fixture[i].time);
        assert_string_equal(a.actor[i], audit_fixture[i].actor);
        assert_string_equal(a.role[i], audit_fixture[i].role);
        assert_string_equal(a.tenant[i], audit_fixture[i].tenant);
        assert_string_equal(a.action[i], audit_fixture[i].action);
        assert_string_equal(a.object[i], audit_fixture[i].object);
        assert_string_equal(a.detail[i], audit_fixture[i].detail ? audit_fixture[i].detail : "{}");
    }

    /* Filters: exact values, prefixes ending in '*', a time window [since, until). */
    gp_audit_filter by_actor = {.actor = "alice"};
    a = list_audit(s, &by_actor);
    assert_int_equal(a.n, 3);
    assert_int_equal(a.id[0], ids[1]);
    assert_int_equal(a.id[2], ids[4]);
    gp_audit_filter by_tenant = {.tenant = "team-a", .action = "placement.*"};
    a = list_audit(s, &by_tenant);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.action[0], "placement.allocate");
    assert_string_equal(a.action[1], "placement.free");
    gp_audit_filter by_action = {.action = "job.submit"};
    assert_int_equal(list_audit(s, &by_action).n, 1);
    gp_audit_filter not_prefix = {.action = "job."}; /* without '*': exact only */
    assert_int_equal(list_audit(s, &not_prefix).n, 0);
    gp_audit_filter by_object = {.object = "node/*"};
    a = list_audit(s, &by_object);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.actor[0], "ops");
    gp_audit_filter window = {.since_ms = 2000, .until_ms = 4000};
    a = list_audit(s, &window);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.id[0], ids[1]);
    assert_int_equal(a.id[1], ids[2]);
    gp_audit_filter empty_tenant = {.tenant = ""};
    assert_int_equal(list_audit(s, &empty_tenant).n, 2);

    /* Pages: two at a time after a cursor. */
    gp_audit_filter page = {.after = ids[1], .limit = 2};
    a = list_audit(s, &page);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.id[0], ids[2]);
    assert_int_equal(a.id[1], ids[3]);
    page.after = ids[5];
    assert_int_equal(list_audit(s, &page).n, 0);

    /* Records appended later come after the others. */
    OK(gp_store_begin(s, &d));
    gp_audit_rec next = {.time_ms = 7000, .actor = "admin", .action = "token.revoke"};
    OK(gp_store_audit_add(s, &next, &d));
    OK(gp_store_commit(s, &d));
    assert_true(next.id > ids[NAUDIT_FIXTURE - 1]);
    page.after = ids[NAUDIT_FIXTURE - 1];
    a = list_audit(s, &page);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.action[0], "token.revoke");
    gp_store_close(s);
}

/* The plan of a cached audit statement, its steps' details joined by '|'. */
static void audit_plan(gp_store *s, sqlite3_stmt *cached, char *out, size_t cap)
{
    char *sql = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sqlite3_sql(cached));
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(SQ(s)->db, sql, -1, &st, NULL), SQLITE_OK);
    size_t n = 0;
    out[0] = '\0';
    while (sqlite3_step(st) == SQLITE_ROW && n < cap) {
        n += (size_t)snprintf(out + n, cap - n, "%s|", (const char *)sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    sqlite3_free(sql);
}

/* Each filter is served by its index (migration 5), not by reading the whole table, and a
 * prefix is the same set of records as the naive comparison, at the byte edges too. */
static void test_audit_filters_use_indexes(void **state)
{
    fixture *f = *state;
    SQLITE_ONLY(f);
    gp_diag d;
    gp_store *s = open_store(f);
    static const char *const actors[] = {"a", "a\xfe", "a\xff", "a\xff\xff", "b", "\xff", ""};
    OK(gp_store_begin(s, &d));
    for (size_t i = 0; i < sizeof(actors) / sizeof(actors[0]); i++) {
        gp_audit_rec r = {.time_ms = 1000 * (int64_t)(i + 1), .actor = actors[i], .action = "x"};
        OK(gp_store_audit_add(s, &r, &d));
    }
    OK(gp_store_commit(s, &d));
    static const struct {
        gp_audit_filter f;
        const char *index;
        int n;
    } cases[] = {
        {{.actor = "a"}, "audit_by_actor", 1},
        {{.actor = "a*"}, "audit_by_actor", 4},
        {{.actor = "a\xff*"}, "audit_by_actor", 2},
        {{.actor = "\xff*"}, "audit_by_actor", 1},
        {{.tenant = "team-a"}, "audit_by_tenant", 0},
        {{.action = "x*"}, "audit_by_action", 7},
        {{.object = "job/1"}, "audit_by_object", 0},
        {{.since_ms = 2000, .until_ms = 4000}, "audit_by_time", 2},
    };
    gp_store_close(s);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        s = open_store(f); /* a fresh statement cache: the case's is the one statement in it */
        audits a = list_audit(s, &cases[i].f);
        if (a.n != cases[i].n) {
            fail_msg("case %zu: %d records, expected %d", i, a.n, cases[i].n);
        }
        sqlite3_stmt *used = NULL;
        for (int k = 0; k < GP_SQ_AUDIT_SHAPES; k++) {
            used = SQ(s)->audit[k] ? SQ(s)->audit[k] : used;
        }
        assert_non_null(used);
        char plan[512];
        audit_plan(s, used, plan, sizeof(plan));
        if (!strstr(plan, cases[i].index)) {
            fail_msg("case %zu: plan \"%s\" does not use %s", i, plan, cases[i].index);
        }
        gp_store_close(s);
    }
}

static void audit_append_only_pg(const fixture *f);
static void audit_append_only_sqlite(const fixture *f);

static void test_audit_append_only(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = open_store(f);
    OK(gp_store_begin(s, &d));
    gp_audit_rec r = {.time_ms = 1, .actor = "admin", .action = "job.cancel", .object = "job/1"};
    OK(gp_store_audit_add(s, &r, &d));
    OK(gp_store_commit(s, &d));
    gp_store_close(s);

    /* Whoever opens the database: UPDATE and DELETE are refused, the record stays. */
    if (f->pg) {
        audit_append_only_pg(f);
    } else {
        audit_append_only_sqlite(f);
    }
    s = open_store(f);
    audits a = list_audit(s, NULL);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.actor[0], "admin");
    assert_int_equal(a.time[0], 1);
    OK(gp_store_begin(s, &d));
    gp_audit_rec blocked = {.time_ms = 2, .actor = "admin", .action = "job.submit"};
    assert_int_equal(gp_store_audit_add(s, &blocked, &d), GP_EIO);
    if (!f->pg) {
        assert_non_null(strstr(d.msg, "audit unavailable"));
    }
    gp_store_rollback(s);
    gp_store_close(s);
}

/* PostgreSQL: the same refusals in its SQL, and a trigger that refuses every insert. */
static void audit_append_only_pg(const fixture *f)
{
    static const char *const refused[] = {
        "UPDATE audit SET actor = 'someone-else'",
        "UPDATE audit SET time_ms = 2 WHERE id = 1",
        "DELETE FROM audit",
        "DELETE FROM audit WHERE id = 1",
        "TRUNCATE audit",
    };
    char err[512];
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        if (pg_exec(f, f->pgdb, refused[i], err, sizeof(err)) == 0 || !strstr(err, "append-only")) {
            fail_msg("%s: %s", refused[i], err);
        }
    }
    /* An id of the writer's choosing (over an existing record) is refused too. */
    assert_int_equal(
        pg_exec(f, f->pgdb, "INSERT INTO audit(id, time_ms, actor, action) VALUES (1, 9, 'x', 'y')",
                NULL, 0),
        -1);
    assert_int_equal(pg_exec(f, f->pgdb,
                             "CREATE FUNCTION audit_down() RETURNS trigger LANGUAGE plpgsql AS $$ "
                             "BEGIN RAISE EXCEPTION 'audit unavailable'; END $$; "
                             "CREATE TRIGGER audit_down BEFORE INSERT ON audit "
                             "FOR EACH ROW EXECUTE FUNCTION audit_down()",
                             NULL, 0),
                     0);
}

static void audit_append_only_sqlite(const fixture *f)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    static const char *const refused[] = {
        "UPDATE audit SET actor = 'someone-else'",
        "UPDATE audit SET time_ms = 2 WHERE id = 1",
        "DELETE FROM audit",
        "DELETE FROM audit WHERE id = 1",
        "INSERT OR REPLACE INTO audit(id, time_ms, actor, action) VALUES (1, 9, 'x', 'y')",
        "REPLACE INTO audit(id, time_ms, actor, action) VALUES (1, 9, 'x', 'y')",
        "UPDATE OR REPLACE audit SET id = 1",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char *err = NULL;
        int rc = sqlite3_exec(db, refused[i], NULL, NULL, &err);
        if (rc == SQLITE_OK || !err || !strstr(err, "append-only")) {
            fail_msg("%s: rc %d, %s", refused[i], rc, err ? err : "(no error)");
        }
        sqlite3_free(err);
    }
    /* A store that cannot write the record says so as its failure, not as bad input. */
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TRIGGER audit_down BEFORE INSERT ON audit "
                                  "BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

/* ---- the leader lease: two stores on one database ---- */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Only one holds it; the other is told who does; the holder's transactions run. */
static void test_lease_one_leader(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *a = open_store(f), *b = open_store(f);
    int64_t ta = 0, tb = 0, again = 0;
    OK(gp_store_lease_acquire(a, "ctl-a", 60000, &ta, &d));
    assert_true(ta > 0);
    assert_int_equal(gp_store_lease_acquire(b, "ctl-b", 60000, &tb, &d), GP_ESTATE);
    assert_int_equal(tb, 0);
    assert_non_null(strstr(d.msg, "held by ctl-a"));
    OK(gp_store_lease_acquire(a, "ctl-a", 60000, &again, &d)); /* ours: extended, same token */
    assert_int_equal(again, ta);
    gp_store_lease l;
    OK(gp_store_lease_get(b, &l, &d));
    assert_string_equal(l.holder, "ctl-a");
    assert_int_equal(l.token, ta);
    assert_true(l.remaining_ms > 0);
    assert_int_equal(l.ours, 0);
    OK(gp_store_lease_get(a, &l, &d));
    assert_int_equal(l.ours, 1);
    OK(gp_store_begin(a, &d));
    put_obj(a, GP_OBJ_TENANT, "team-a", NULL);
    OK(gp_store_commit(a, &d));
    OK(gp_store_lease_renew(a, 60000, &d));
    assert_int_equal(gp_store_lease_renew(b, 60000, &d), GP_ESTATE); /* holds none */
    /* Released: free at once, and the next token is larger. */
    OK(gp_store_lease_release(a, &d));
    OK(gp_store_lease_acquire(b, "ctl-b", 60000, &tb, &d));
    assert_true(tb > ta);
    assert_int_equal(gp_store_lease_acquire(a, "", 1000, &ta, &d), GP_EINVAL);
    assert_int_equal(gp_store_lease_acquire(a, "ctl-a", 0, &ta, &d), GP_EINVAL);
    gp_store_close(a);
    gp_store_close(b);
}

/* After expiry another takes over with a larger token; the deposed one can neither begin nor
 * renew, and its store holds nothing afterwards. */
static void test_lease_takeover_fences(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *a = open_store(f), *b = open_store(f);
    int64_t ta, tb;
    OK(gp_store_lease_acquire(a, "ctl-a", 1, &ta, &d));
    sleep_ms(20); /* the lease is 1 ms long */
    OK(gp_store_lease_acquire(b, "ctl-b", 60000, &tb, &d));
    assert_true(tb > ta);
    assert_int_equal(gp_store_begin(a, &d), GP_ESTATE);
    char want[64];
    snprintf(want, sizeof(want), "lease lost: held by ctl-b with token %lld", (long long)tb);
    if (!strstr(d.msg, want)) {
        fail_msg("\"%s\" does not say \"%s\"", d.msg, want);
    }
    assert_int_equal(gp_store_lease_renew(a, 60000, &d), GP_ESTATE);
    OK(gp_store_begin(b, &d));
    put_obj(b, GP_OBJ_TENANT, "team-b", NULL);
    OK(gp_store_commit(b, &d));
    objs o = list_objs(a, GP_OBJ_TENANT); /* reads still work */
    assert_int_equal(o.n, 1);
    gp_store_close(a);
    gp_store_close(b);
}

typedef struct takeover {
    gp_store *s;
    int64_t token;
    int rc;
    atomic_int done;
    gp_diag d;
} takeover;

static void *take_over(void *arg)
{
    takeover *t = arg;
    t->rc = gp_store_lease_acquire(t->s, "ctl-b", 60000, &t->token, &t->d);
    atomic_store(&t->done, 1);
    return NULL;
}

/* A takeover waits for the holder's open transaction, which commits under the old token. */
static void test_lease_takeover_waits(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *a = open_store(f);
    takeover t = {.s = open_store(f)};
    int64_t ta;
    OK(gp_store_lease_acquire(a, "ctl-a", 200, &ta, &d));
    OK(gp_store_begin(a, &d));
    put_obj(a, GP_OBJ_TENANT, "team-a", NULL);
    sleep_ms(300); /* expired, with the transaction still open */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, take_over, &t), 0);
    sleep_ms(300);
    assert_int_equal(atomic_load(&t.done), 0); /* still waiting for a's transaction */
    OK(gp_store_commit(a, &d));
    pthread_join(th, NULL);
    if (t.rc != 0) {
        fail_msg("takeover: %s", t.d.msg);
    }
    assert_true(t.token > ta);
    assert_int_equal(gp_store_begin(a, &d), GP_ESTATE);
    assert_int_equal(list_objs(t.s, GP_OBJ_TENANT).n, 1);
    gp_store_close(a);
    gp_store_close(t.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reopen_keeps_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idempotent_insert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_active_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_savepoint_rollback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transaction_rollback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iteration_order_and_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reentrant_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_pagination, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_audit_filters_use_indexes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_token_uniqueness, setup, teardown),
        cmocka_unit_test_setup_teardown(test_obj_put_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_meta, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_creds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_audit_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_savepoints_journal_in_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_audit_append_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease_one_leader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease_takeover_fences, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease_takeover_waits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
