/* The XID table and its recurrence rules (src/ctl/faults.c): what each XID does, when repeats
 * drain or retire a GPU, and the history's stored form. */
#include "ctl/faults.h"
#include "tests/unit/harness.h"

#define HOUR (3600 * INT64_C(1000))

static ctl_fault_action decide(int xid, ctl_gpu_faults *h, int64_t now)
{
    ctl_fault_action a;
    ctl_fault_decide(xid, h, now, &a);
    return a;
}

static void test_table(void **state)
{
    (void)state;
    ctl_gpu_faults h = {0};
    static const int fatal[] = {8, 46, 62, 95, 119, 120, 140, 143};
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
        ctl_fault_action a = decide(fatal[i], &h, HOUR);
        assert_true(a.known);
        assert_int_equal(a.jobs, CTL_JOBS_RESTART);
        assert_true(a.drain_gpu);
        assert_false(a.drain_node);
        assert_false(a.retire);
    }
    for (int x = 43; x <= 45; x += 2) {
        ctl_fault_action a = decide(x, &h, HOUR);
        assert_true(a.known);
        assert_int_equal(a.jobs, CTL_JOBS_KEEP);
        assert_false(a.drain_gpu);
    }
    ctl_fault_action a = decide(79, &h, HOUR);
    assert_true(a.drain_node && a.drain_gpu);
    assert_int_equal(a.jobs, CTL_JOBS_RESTART);
    a = decide(74, &h, HOUR);
    assert_int_equal(a.jobs, CTL_JOBS_RESTART_MULTI);
    assert_true(a.drain_gpu);
    a = decide(64, &h, HOUR);
    assert_true(a.retire && a.drain_gpu);
    a = decide(63, &h, HOUR);
    assert_int_equal(a.jobs, CTL_JOBS_KEEP);
    assert_true(a.drain_gpu);
    a = decide(154, &h, HOUR);
    assert_int_equal(a.jobs, CTL_JOBS_KEEP);
    assert_true(a.drain_gpu);
    a = decide(94, &h, HOUR);
    assert_int_equal(a.jobs, CTL_JOBS_FAIL);
    assert_true(a.drain_gpu);
    a = decide(12345, &h, HOUR);
    assert_false(a.known);
    assert_int_equal(a.jobs, CTL_JOBS_KEEP);
    assert_false(a.drain_gpu);
}

static void test_recurring(void **state)
{
    (void)state;
    ctl_gpu_faults h = {0};
    /* Application faults: the job only, the GPU at the 3rd within 24 h. */
    for (int x = 0; x < 2; x++) {
        ctl_fault_action a = decide(13, &h, HOUR * (1 + x));
        assert_int_equal(a.jobs, CTL_JOBS_FAIL);
        assert_false(a.drain_gpu);
    }
    assert_true(decide(31, &h, HOUR * 3).drain_gpu);
    /* Spread over more than a day, three are not a pattern. */
    ctl_gpu_faults spread = {0};
    assert_false(decide(13, &spread, HOUR).drain_gpu);
    assert_false(decide(13, &spread, HOUR * 20).drain_gpu);
    assert_false(decide(13, &spread, HOUR * 26).drain_gpu);
    assert_true(decide(13, &spread, HOUR * 27).drain_gpu);
    /* Context-switch timeouts: the 2nd drains. */
    ctl_gpu_faults c = {0};
    assert_false(decide(109, &c, HOUR).drain_gpu);
    assert_true(decide(109, &c, HOUR * 2).drain_gpu);
    /* Single-bit ECC rate: the jobs stay; the 3rd drains. */
    ctl_gpu_faults s = {0};
    assert_false(decide(92, &s, HOUR).drain_gpu);
    assert_false(decide(92, &s, HOUR).drain_gpu);
    ctl_fault_action a = decide(92, &s, HOUR);
    assert_true(a.drain_gpu);
    assert_int_equal(a.jobs, CTL_JOBS_KEEP);
    /* Double-bit ECC: drained at once, retired at the 2nd, however far apart. */
    ctl_gpu_faults d = {0};
    a = decide(48, &d, HOUR);
    assert_true(a.drain_gpu);
    assert_false(a.retire);
    assert_true(decide(48, &d, HOUR * 1000).retire);
}

static void test_doc(void **state)
{
    (void)state;
    ctl_gpu_faults h = {0}, back;
    assert_null(ctl_gpu_faults_doc(&h));
    decide(13, &h, 5);
    decide(13, &h, 7);
    decide(109, &h, 9);
    decide(48, &h, 11);
    json_t *doc = ctl_gpu_faults_doc(&h);
    assert_non_null(doc);
    ctl_gpu_faults_read(doc, &back);
    assert_memory_equal(&h, &back, sizeof(h));
    json_decref(doc);
    /* Malformed values are ignored, never trusted. */
    doc = json_pack("{s:[s, i], s:i, s:s}", "app_ms", "x", -4, "dbe", -2, "ctx_ms", "no");
    ctl_gpu_faults_read(doc, &back);
    assert_int_equal(back.app_ms[0], 0);
    assert_int_equal(back.app_ms[1], 0);
    assert_int_equal(back.dbe, 0);
    json_decref(doc);
    ctl_gpu_faults_read(NULL, &back);
    assert_int_equal(back.dbe, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_recurring),
        cmocka_unit_test(test_doc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
