/* The SQLite store: migrations, durability across reopen, idempotent job insert, uniqueness. */
#include "store/store.h"
#include "tests/unit/harness.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fixture {
    char dir[64];
    char path[128];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/gpupool-store.XXXXXX");
    if (!mkdtemp(f->dir)) {
        return -1;
    }
    snprintf(f->path, sizeof(f->path), "%s/state.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

static void test_migrate_and_reopen(void **state)
{
    fixture *f = *state;
    gp_store *s;
    gp_diag d;
    assert_int_equal(gp_store_open(f->path, &s, &d), 0);
    assert_int_equal(gp_store_version(s), gp_store_schema_version());
    gp_tenant_rec t = {.name = "team-a", .quota_gpus = 16, .quota_gpu_memory_mib = -1};
    assert_int_equal(gp_store_tenant_create(s, &t, &d), 0);
    gp_job_rec j = {.tenant_id = t.id, .name = "train", .submit_time_ms = 1234};
    int created;
    assert_int_equal(gp_store_job_insert(s, &j, "{\"name\":\"train\"}", &created, &d), 0);
    assert_int_equal(created, 1);
    gp_store_close(s);

    /* Everything acknowledged is there after a reopen, and no migration runs twice. */
    assert_int_equal(gp_store_open(f->path, &s, &d), 0);
    gp_tenant_rec t2;
    assert_int_equal(gp_store_tenant_get(s, "team-a", &t2, &d), 0);
    assert_int_equal(t2.quota_gpus, 16);
    gp_job_rec j2;
    char *spec;
    assert_int_equal(gp_store_job_get(s, j.id, &j2, &spec, &d), 0);
    assert_string_equal(j2.name, "train");
    assert_string_equal(j2.state, "Pending");
    assert_int_equal(j2.submit_time_ms, 1234);
    assert_string_equal(spec, "{\"name\":\"train\"}");
    free(spec);
    assert_int_equal(gp_store_job_get(s, 999, &j2, NULL, &d), GP_ENOENT);
    assert_int_equal(gp_store_tenant_get(s, "nope", &t2, &d), GP_ENOENT);
    gp_store_close(s);
}

static void test_idempotency_and_names(void **state)
{
    fixture *f = *state;
    gp_store *s;
    gp_diag d;
    assert_int_equal(gp_store_open(f->path, &s, &d), 0);
    gp_tenant_rec a = {.name = "a", .quota_gpus = -1}, b = {.name = "b", .quota_gpus = -1};
    assert_int_equal(gp_store_tenant_create(s, &a, &d), 0);
    assert_int_equal(gp_store_tenant_create(s, &b, &d), 0);
    assert_int_equal(gp_store_tenant_create(s, &a, &d), GP_EEXIST);
    int created;
    gp_job_rec j1 = {.tenant_id = a.id, .name = "x", .idempotency_key = "k1"};
    assert_int_equal(gp_store_job_insert(s, &j1, "{}", &created, &d), 0);
    assert_int_equal(created, 1);
    /* A retry with the same key returns the same job, even under another name. */
    gp_job_rec retry = {.tenant_id = a.id, .name = "y", .idempotency_key = "k1"};
    assert_int_equal(gp_store_job_insert(s, &retry, "{}", &created, &d), 0);
    assert_int_equal(created, 0);
    assert_int_equal(retry.id, j1.id);
    /* The same key in another tenant is another job. */
    gp_job_rec other = {.tenant_id = b.id, .name = "x", .idempotency_key = "k1"};
    assert_int_equal(gp_store_job_insert(s, &other, "{}", &created, &d), 0);
    assert_int_equal(created, 1);
    assert_int_not_equal(other.id, j1.id);
    /* An active job's name is unique in its tenant; nothing is stored on refusal. */
    gp_job_rec dup = {.tenant_id = a.id, .name = "x"};
    assert_int_equal(gp_store_job_insert(s, &dup, "{}", &created, &d), GP_EEXIST);
    assert_non_null(strstr(d.msg, "name"));
    assert_int_equal(created, 0);
    gp_job_rec done = {.tenant_id = a.id, .name = "z", .state = "Succeeded"};
    assert_int_equal(gp_store_job_insert(s, &done, "{}", &created, &d), 0);
    gp_job_rec again = {.tenant_id = a.id, .name = "z"};
    assert_int_equal(gp_store_job_insert(s, &again, "{}", &created, &d), 0);
    gp_store_close(s);
}

static void test_newer_schema_refused(void **state)
{
    fixture *f = *state;
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_migrate_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idempotency_and_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
