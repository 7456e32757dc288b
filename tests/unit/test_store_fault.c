/*
 * The fault-injecting store wrapper (store/store_fault.h) over a real store: every operation
 * fails with GP_EIO at its N, naming itself and N; the count classes; sticky failures; and a
 * failed commit that leaves nothing stored. A list of one call of each operation (steps[])
 * is run with the Nth call failing for every N, and every operation of the table must have
 * failed once.
 *
 * test_store_fault runs it on SQLite, test_store_fault_pg on PostgreSQL (tests/unit/testdb.h).
 */
#include "store/store.h"
#include "store/store_fault.h"
#include "store/store_ops.h"
#include "tests/unit/harness.h"
#include "tests/unit/testdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fixture {
    char dir[64];
    gp_testdb db;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/gpupool-store-fault.XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    char err[256];
    if (gp_testdb_init(&f->db, f->dir, "state.db", err, sizeof(err)) < 0) {
        fail_msg("%s", err);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gp_testdb_fini(&f->db);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc == 0 ? 0 : -1;
}

#define OK(call)                                                                                   \
    do {                                                                                           \
        int ok_rc_ = (call);                                                                       \
        if (ok_rc_ != 0) {                                                                         \
            fail_msg("%s = %d: %s", #call, ok_rc_, d.msg);                                         \
        }                                                                                          \
    } while (0)

/* The fixture's store, wrapped (reset_file empties it first). */
static gp_store *open_wrapped(const fixture *f, const gp_store_fault_plan *plan)
{
    gp_diag d;
    gp_store *in = NULL, *s = NULL;
    OK(gp_store_open_url(f->db.url, &in, &d));
    OK(gp_store_fault_wrap(in, plan, &s, &d));
    assert_string_equal(gp_store_backend(s), "fault");
    return s;
}

/* An empty store: the file removed, or the database created again. */
static void reset_file(fixture *f)
{
    char err[256];
    if (gp_testdb_reset(&f->db, err, sizeof(err)) < 0) {
        fail_msg("%s", err);
    }
}

/* ---- one call of every operation, in an order where each finds what it needs ---- */

typedef struct walk {
    int64_t tenant, node, volume, job;
} walk;

static int nop_obj(void *c, int64_t id, const char *n, const char *j)
{
    (void)c, (void)id, (void)n, (void)j;
    return 0;
}
static int nop_job(void *c, const gp_job_rec *r, const char *a, const char *b)
{
    (void)c, (void)r, (void)a, (void)b;
    return 0;
}
static int nop_event(void *c, const gp_event_rec *e)
{
    (void)c, (void)e;
    return 0;
}
static int nop_placement(void *c, const gp_placement_rec *p, const char *j)
{
    (void)c, (void)p, (void)j;
    return 0;
}
static int nop_usage(void *c, const gp_usage_rec *r)
{
    (void)c, (void)r;
    return 0;
}
static int nop_token(void *c, const gp_token_rec *t)
{
    (void)c, (void)t;
    return 0;
}
static int nop_audit(void *c, const gp_audit_rec *r)
{
    (void)c, (void)r;
    return 0;
}
static int nop_cred(void *c, const gp_registry_cred_rec *r)
{
    (void)c, (void)r;
    return 0;
}

#define STEP(name) static int step_##name(gp_store *s, walk *w, gp_diag *d)
STEP(begin)
{
    (void)w;
    return gp_store_begin(s, d);
}
STEP(obj_put)
{
    return gp_store_obj_put(s, GP_OBJ_TENANT, &w->tenant, "team-a", "{}", d);
}
STEP(obj_each)
{
    (void)w;
    return gp_store_obj_each(s, GP_OBJ_TENANT, nop_obj, NULL, d);
}
STEP(job_insert)
{
    gp_job_rec j = {.tenant_id = w->tenant, .name = "train", .idempotency_key = "k1"};
    int created;
    int rc = gp_store_job_insert(s, &j, "{}", NULL, &created, d);
    w->job = j.id;
    return rc;
}
STEP(job_find_key)
{
    int64_t id;
    return gp_store_job_find_key(s, w->tenant, "k1", &id, d);
}
STEP(job_update)
{
    return gp_store_job_update(s, w->job, "Running", "{}", d);
}
STEP(job_get)
{
    gp_job_rec j;
    return gp_store_job_get(s, w->job, &j, NULL, NULL, d);
}
STEP(job_each)
{
    (void)w;
    return gp_store_job_each(s, nop_job, NULL, d);
}
STEP(event_add)
{
    gp_event_rec ev = {.job_id = w->job, .time_ms = 1, .type = "Submitted"};
    return gp_store_event_add(s, &ev, d);
}
STEP(event_each)
{
    return gp_store_event_each(s, w->job, 0, 0, nop_event, NULL, d);
}
STEP(next_epoch)
{
    (void)w;
    int64_t e;
    return gp_store_next_epoch(s, &e, d);
}
STEP(placement_put)
{
    gp_placement_rec p = {.job_id = w->job, .replica = 0, .node_id = w->node, .epoch = 1};
    return gp_store_placement_put(s, &p, NULL, d);
}
STEP(placement_each)
{
    (void)w;
    return gp_store_placement_each(s, nop_placement, NULL, d);
}
STEP(usage_open)
{
    gp_usage_rec r = {.job_id = w->job,
                      .epoch = 1,
                      .tenant_id = w->tenant,
                      .kind = "whole",
                      .gpus = 1,
                      .milli = 1000,
                      .start_ms = 10};
    return gp_store_usage_open(s, &r, d);
}
STEP(usage_set_used)
{
    return gp_store_usage_set_used(s, w->job, 0, 1, 5, d);
}
STEP(usage_close)
{
    return gp_store_usage_close(s, w->job, 0, 1, 20, 5, d);
}
STEP(usage_each)
{
    (void)w;
    gp_usage_filter f = {.to_ms = 100};
    return gp_store_usage_each(s, &f, nop_usage, NULL, d);
}
STEP(token_insert)
{
    (void)w;
    gp_token_rec t = {.name = "t1", .hash = "h1", .role = "admin"};
    return gp_store_token_insert(s, &t, d);
}
STEP(token_revoke)
{
    (void)w;
    return gp_store_token_revoke(s, 1, d);
}
STEP(token_each)
{
    (void)w;
    return gp_store_token_each(s, nop_token, NULL, d);
}
STEP(audit_add)
{
    (void)w;
    gp_audit_rec r = {.time_ms = 1, .actor = "a", .action = "x"};
    return gp_store_audit_add(s, &r, d);
}
STEP(audit_each)
{
    (void)w;
    return gp_store_audit_each(s, NULL, nop_audit, NULL, d);
}
STEP(registry_cred_put)
{
    gp_registry_cred_rec r = {
        .tenant_id = w->tenant, .registry = "r.io", .username = "u", .password = "p"};
    return gp_store_registry_cred_put(s, &r, d);
}
STEP(registry_cred_each)
{
    (void)w;
    return gp_store_registry_cred_each(s, nop_cred, NULL, d);
}
STEP(registry_cred_delete)
{
    return gp_store_registry_cred_delete(s, w->tenant, "r.io", d);
}
STEP(meta_set)
{
    (void)w;
    return gp_store_meta_set(s, "k", "v", d);
}
STEP(meta_get)
{
    (void)w;
    char buf[8];
    return gp_store_meta_get(s, "k", buf, sizeof(buf), d);
}
STEP(savepoint)
{
    (void)w;
    return gp_store_savepoint(s, d);
}
STEP(savepoint_release)
{
    (void)w;
    return gp_store_savepoint_release(s, d);
}
STEP(placement_clear)
{
    return gp_store_placement_clear(s, w->job, d);
}
STEP(obj_delete)
{
    return gp_store_obj_delete(s, GP_OBJ_VOLUME, w->volume, d);
}
STEP(commit)
{
    (void)w;
    return gp_store_commit(s, d);
}

/* The lease's calls are transactions of their own: after the commit. */
STEP(lease_acquire)
{
    (void)w;
    int64_t token;
    return gp_store_lease_acquire(s, "gpupoold-a", 60000, &token, d);
}
STEP(lease_get)
{
    (void)w;
    gp_store_lease l;
    return gp_store_lease_get(s, &l, d);
}
STEP(lease_renew)
{
    (void)w;
    return gp_store_lease_renew(s, 60000, d);
}
STEP(lease_release)
{
    (void)w;
    return gp_store_lease_release(s, d);
}

static const struct {
    const char *name;
    int (*fn)(gp_store *s, walk *w, gp_diag *d);
} steps[] = {
#define S(n)                                                                                       \
    {                                                                                              \
#n, step_##n                                                                               \
    }
    S(begin),
    S(obj_put),
    S(obj_each),
    S(job_insert),
    S(job_find_key),
    S(job_update),
    S(job_get),
    S(job_each),
    S(event_add),
    S(event_each),
    S(next_epoch),
    S(placement_put),
    S(placement_each),
    S(usage_open),
    S(usage_set_used),
    S(usage_close),
    S(usage_each),
    S(token_insert),
    S(token_revoke),
    S(token_each),
    S(audit_add),
    S(audit_each),
    S(registry_cred_put),
    S(registry_cred_each),
    S(registry_cred_delete),
    S(meta_set),
    S(meta_get),
    S(savepoint),
    S(savepoint_release),
    S(placement_clear),
    S(obj_delete),
    S(commit),
    S(lease_acquire),
    S(lease_get),
    S(lease_renew),
    S(lease_release),
#undef S
};
#define NSTEPS ((int)(sizeof(steps) / sizeof(steps[0])))

/* Every operation of the table, which the step list must cover. */
static const char *const table_ops[] = {
#define OP_NAME(cls, name, params, args) #name,
    GP_STORE_OPS(OP_NAME)
#undef OP_NAME
};
#define NOPS ((int)(sizeof(table_ops) / sizeof(table_ops[0])))

/* The node and the volume the steps use, stored before the run (uncounted: not through the
 * wrapper). */
static void prepare(const fixture *f, walk *w)
{
    gp_diag d;
    gp_store *s = NULL;
    OK(gp_store_open_url(f->db.url, &s, &d));
    OK(gp_store_begin(s, &d));
    OK(gp_store_obj_put(s, GP_OBJ_NODE, &w->node, "gpu-01", "{}", &d));
    OK(gp_store_obj_put(s, GP_OBJ_VOLUME, &w->volume, "data", "{}", &d));
    OK(gp_store_commit(s, &d));
    gp_store_close(s);
}

/* Runs the steps until one fails; the index of the failed step, or NSTEPS. */
static int run_steps(gp_store *s, walk *w, gp_diag *d)
{
    for (int i = 0; i < NSTEPS; i++) {
        if (steps[i].fn(s, w, d) != 0) {
            return i;
        }
    }
    return NSTEPS;
}

/* Without a plan every step succeeds and each is one counted call. */
static void test_steps_pass_unarmed(void **state)
{
    fixture *f = *state;
    gp_diag d;
    walk w = {0};
    prepare(f, &w);
    gp_store *s = open_wrapped(f, NULL);
    int at = run_steps(s, &w, &d);
    if (at != NSTEPS) {
        fail_msg("step %s failed: %s", steps[at].name, d.msg);
    }
    assert_int_equal(gp_store_fault_calls(s), NSTEPS);
    assert_int_equal(gp_store_fault_injected(s), 0);
    gp_store_close(s);
}

/* For every N, call N fails with GP_EIO naming its operation and N, and nothing before it
 * does; every operation of the table fails at its N. */
static void test_every_op_fails_at_its_n(void **state)
{
    fixture *f = *state;
    int failed[NOPS] = {0};
    for (int n = 1; n <= NSTEPS; n++) {
        reset_file(f);
        walk w = {0};
        prepare(f, &w);
        gp_store_fault_plan plan = {.count = GP_STORE_FAULT_ANY, .nth = (uint64_t)n};
        gp_store *s = open_wrapped(f, &plan);
        gp_diag d;
        gp_diag_clear(&d);
        int at = run_steps(s, &w, &d);
        if (at != n - 1) {
            fail_msg("N=%d: step %d (%s) failed: %s", n, at, at < NSTEPS ? steps[at].name : "-",
                     d.msg);
        }
        assert_int_equal(d.code, GP_EIO);
        char want[96];
        snprintf(want, sizeof(want), "injected fault: %s (call %d)", steps[at].name, n);
        if (!strstr(d.msg, want)) {
            fail_msg("N=%d: \"%s\" does not say \"%s\"", n, d.msg, want);
        }
        assert_int_equal(gp_store_fault_injected(s), 1);
        for (int k = 0; k < NOPS; k++) {
            failed[k] |= strcmp(table_ops[k], steps[at].name) == 0;
        }
        gp_store_rollback(s);
        gp_store_close(s);
    }
    for (int k = 0; k < NOPS; k++) {
        if (!failed[k]) {
            fail_msg("operation %s never failed: add it to steps[]", table_ops[k]);
        }
    }
}

/* WRITES counts everything but reads; COMMITS only commit. */
static void test_count_classes(void **state)
{
    fixture *f = *state;
    int writes = 0;
    for (int i = 0; i < NSTEPS; i++) {
        const char *n = steps[i].name;
        writes += !strstr(n, "_each") && !strstr(n, "_get") && strcmp(n, "job_find_key") != 0;
    }
    static const struct {
        gp_store_fault_count count;
        int expect; /* -1: writes */
    } cases[] = {{GP_STORE_FAULT_WRITES, -1}, {GP_STORE_FAULT_COMMITS, 1}};
    for (size_t c = 0; c < 2; c++) {
        reset_file(f);
        walk w = {0};
        prepare(f, &w);
        gp_store_fault_plan plan = {.count = cases[c].count, .nth = 1000};
        gp_store *s = open_wrapped(f, &plan);
        gp_diag d;
        assert_int_equal(run_steps(s, &w, &d), NSTEPS);
        int expect = cases[c].expect < 0 ? writes : cases[c].expect;
        assert_int_equal(gp_store_fault_calls(s), expect);
        gp_store_close(s);
    }
}

/* sticky: every counted call from N on fails (a dead disk); re-arming heals it. */
static void test_sticky(void **state)
{
    fixture *f = *state;
    walk w = {0};
    prepare(f, &w);
    gp_store_fault_plan plan = {.count = GP_STORE_FAULT_ANY, .nth = 3, .sticky = 1};
    gp_store *s = open_wrapped(f, &plan);
    gp_diag d;
    assert_int_equal(run_steps(s, &w, &d), 2);
    for (int i = 3; i < NSTEPS; i++) {
        assert_int_equal(steps[i].fn(s, &w, &d), GP_EIO);
        assert_non_null(strstr(d.msg, steps[i].name));
    }
    assert_int_equal(gp_store_fault_injected(s), NSTEPS - 2);
    gp_store_rollback(s);
    OK(gp_store_fault_arm(s, NULL));
    w.tenant = 0; /* its insert was rolled back */
    assert_int_equal(run_steps(s, &w, &d), NSTEPS);
    gp_store_close(s);
}

static int count_obj(void *c, int64_t id, const char *n, const char *j)
{
    (void)id, (void)n, (void)j;
    (*(int *)c)++;
    return 0;
}

/* A commit that fails stores nothing of its transaction, and the store works afterwards. */
static void test_failed_commit_stores_nothing(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store_fault_plan plan = {.count = GP_STORE_FAULT_COMMITS, .nth = 1};
    gp_store *s = open_wrapped(f, &plan);
    int64_t id = 0;
    OK(gp_store_begin(s, &d));
    OK(gp_store_obj_put(s, GP_OBJ_TENANT, &id, "lost", "{}", &d));
    OK(gp_store_meta_set(s, "k", "lost", &d));
    assert_int_equal(gp_store_commit(s, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "injected fault: commit (call 1)"));
    int n = 0;
    OK(gp_store_obj_each(s, GP_OBJ_TENANT, count_obj, &n, &d));
    assert_int_equal(n, 0);
    char buf[16];
    assert_int_equal(gp_store_meta_get(s, "k", buf, sizeof(buf), &d), GP_ENOENT);
    id = 0;
    OK(gp_store_begin(s, &d));
    OK(gp_store_obj_put(s, GP_OBJ_TENANT, &id, "kept", "{}", &d));
    OK(gp_store_commit(s, &d));
    gp_store_close(s);
    /* what is stored, read without the wrapper */
    OK(gp_store_open_url(f->db.url, &s, &d));
    n = 0;
    OK(gp_store_obj_each(s, GP_OBJ_TENANT, count_obj, &n, &d));
    assert_int_equal(n, 1);
    assert_int_equal(gp_store_meta_get(s, "k", buf, sizeof(buf), &d), GP_ENOENT);
    gp_store_close(s);
}

/* Arming a store that is not a wrapper is refused. */
static void test_arm_plain_store(void **state)
{
    fixture *f = *state;
    gp_diag d;
    gp_store *s = NULL;
    OK(gp_store_open_url(f->db.url, &s, &d));
    gp_store_fault_plan plan = {.nth = 1};
    assert_int_equal(gp_store_fault_arm(s, &plan), GP_EINVAL);
    assert_int_equal(gp_store_fault_calls(s), 0);
    gp_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_steps_pass_unarmed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_op_fails_at_its_n, setup, teardown),
        cmocka_unit_test_setup_teardown(test_count_classes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sticky, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_commit_stores_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_arm_plain_store, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
