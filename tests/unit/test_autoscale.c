/*
 * The autoscaler's decision (gpupool/autoscale.h) on a controlled clock: the ratio rule, the 10%
 * tolerance, the scale-up window (the smallest recommendation over it), the scale-down window
 * (the largest), the bounds, no value, bad input, and the history's trimming.
 */
#include "gpupool/autoscale.h"
#include "gpupool/error.h"
#include "tests/unit/harness.h"

#include <string.h>

#define SEC INT64_C(1000)

static gp_scale_input input(int current, double value, double target)
{
    return (gp_scale_input){.current = current,
                            .min_replicas = 1,
                            .max_replicas = 10,
                            .have_value = true,
                            .value = value,
                            .target = target,
                            .tolerance = GP_AUTOSCALE_TOLERANCE,
                            .now_ms = 1000 * SEC,
                            .up_window_ms = 0,
                            .down_window_ms = 0};
}

static gp_scale_decision decide(const gp_scale_input *in, const gp_scale_history *h)
{
    gp_scale_decision d;
    assert_int_equal(gp_autoscale_decide(in, h, &d), 0);
    return d;
}

static void test_ratio(void **state)
{
    (void)state;
    gp_scale_input in = input(2, 90, 50); /* 2 x 1.8 = 3.6 -> 4 */
    gp_scale_decision d = decide(&in, NULL);
    assert_int_equal(d.recommendation, 4);
    assert_int_equal(d.desired, 4);
    assert_int_equal(d.dir, GP_SCALE_UP);
    assert_non_null(strstr(d.reason, "value 90.00 target 50.00"));
    in = input(4, 10, 50); /* 4 x 0.2 = 0.8 -> 1 */
    d = decide(&in, NULL);
    assert_int_equal(d.desired, 1);
    assert_int_equal(d.dir, GP_SCALE_DOWN);
    in = input(3, 100, 50); /* exactly 6 */
    assert_int_equal(decide(&in, NULL).desired, 6);
}

static void test_tolerance(void **state)
{
    (void)state;
    gp_scale_input in = input(4, 54, 50); /* ratio 1.08: within 10% */
    gp_scale_decision d = decide(&in, NULL);
    assert_int_equal(d.desired, 4);
    assert_int_equal(d.dir, GP_SCALE_KEEP);
    in = input(4, 46, 50); /* 0.92 */
    assert_int_equal(decide(&in, NULL).desired, 4);
    in = input(4, 56, 50); /* 1.12: 4.48 -> 5 */
    assert_int_equal(decide(&in, NULL).desired, 5);
    in = input(4, 44, 50); /* 0.88: 3.52 -> 4: outside the tolerance, but ceil keeps 4 */
    assert_int_equal(decide(&in, NULL).desired, 4);
    in = input(10, 44, 50); /* 8.8 -> 9 */
    assert_int_equal(decide(&in, NULL).desired, 9);
}

static void test_bounds(void **state)
{
    (void)state;
    gp_scale_input in = input(5, 500, 50); /* 50 wanted, max 10 */
    gp_scale_decision d = decide(&in, NULL);
    assert_int_equal(d.recommendation, 50);
    assert_int_equal(d.desired, 10);
    in = input(5, 0, 50);
    in.min_replicas = 2;
    assert_int_equal(decide(&in, NULL).desired, 2);
    /* Outside its bounds already (the bounds changed): brought back even without a value. */
    in = input(12, 0, 50);
    in.have_value = false;
    d = decide(&in, NULL);
    assert_int_equal(d.desired, 10);
    assert_non_null(strstr(d.reason, "no metric value"));
    in = input(3, 0, 50);
    in.have_value = false;
    assert_int_equal(decide(&in, NULL).dir, GP_SCALE_KEEP);
}

/* A spike inside the up window does not scale out until the recommendations over the whole
 * window agree: the smallest one is taken. */
static void test_up_window(void **state)
{
    (void)state;
    gp_scale_history h = {0};
    gp_scale_input in = input(2, 50, 50);
    in.up_window_ms = 30 * SEC;
    int64_t t0 = in.now_ms;
    /* Quiet at t0 - 20 s (recommendation 2), then a spike: 2 x 2 = 4. */
    assert_int_equal(gp_autoscale_record(&h, t0 - 20 * SEC, 2, 60 * SEC), 0);
    in.value = 100;
    gp_scale_decision d = decide(&in, &h);
    assert_int_equal(d.recommendation, 4);
    assert_int_equal(d.desired, 2);
    assert_int_equal(d.dir, GP_SCALE_KEEP);
    /* 31 s later the quiet sample has left the window: the spike's recommendations rule. */
    assert_int_equal(gp_autoscale_record(&h, t0, 4, 60 * SEC), 0);
    in.now_ms = t0 + 11 * SEC;
    assert_int_equal(decide(&in, &h).desired, 4);
    /* The window takes the smallest: 3 inside it caps the rise at 3. */
    assert_int_equal(gp_autoscale_record(&h, t0 + 5 * SEC, 3, 60 * SEC), 0);
    assert_int_equal(decide(&in, &h).desired, 3);
    gp_autoscale_history_fini(&h);
}

/* A lull inside the down window does not scale in: the largest recommendation is taken. */
static void test_down_window(void **state)
{
    (void)state;
    gp_scale_history h = {0};
    gp_scale_input in = input(6, 10, 50); /* 6 x 0.2 = 1.2 -> 2 */
    in.down_window_ms = 60 * SEC;
    int64_t t0 = in.now_ms;
    assert_int_equal(gp_autoscale_record(&h, t0 - 50 * SEC, 6, 120 * SEC), 0);
    assert_int_equal(gp_autoscale_record(&h, t0 - 30 * SEC, 5, 120 * SEC), 0);
    gp_scale_decision d = decide(&in, &h);
    assert_int_equal(d.recommendation, 2);
    assert_int_equal(d.desired, 6);
    /* 15 s later the 6 is out of the window, the 5 still in: down to 5. */
    in.now_ms = t0 + 15 * SEC;
    assert_int_equal(decide(&in, &h).desired, 5);
    /* Once both are out, the low recommendation rules. */
    in.now_ms = t0 + 31 * SEC;
    d = decide(&in, &h);
    assert_int_equal(d.desired, 2);
    assert_int_equal(d.dir, GP_SCALE_DOWN);
    /* The down window does not hold a rise back. */
    in.value = 100;
    assert_int_equal(decide(&in, &h).desired, 10);
    gp_autoscale_history_fini(&h);
}

static void test_record_trims(void **state)
{
    (void)state;
    gp_scale_history h = {0};
    for (int i = 0; i < 100; i++) {
        assert_int_equal(gp_autoscale_record(&h, i * SEC, i, 10 * SEC), 0);
    }
    /* Kept: those after 99 s - 10 s. */
    assert_int_equal(h.n, 10);
    assert_int_equal(h.v[0].at_ms, 90 * SEC);
    assert_int_equal(h.v[9].replicas, 99);
    gp_autoscale_history_fini(&h);
    assert_null(h.v);
    assert_int_equal(h.n, 0);
}

static void test_bad_input(void **state)
{
    (void)state;
    gp_scale_decision d;
    gp_scale_input in = input(2, 50, 0);
    assert_int_equal(gp_autoscale_decide(&in, NULL, &d), GP_EINVAL);
    in = input(2, 50, 50);
    in.min_replicas = 5;
    in.max_replicas = 4;
    assert_int_equal(gp_autoscale_decide(&in, NULL, &d), GP_EINVAL);
    in = input(2, 50, 50);
    in.up_window_ms = -1;
    assert_int_equal(gp_autoscale_decide(&in, NULL, &d), GP_EINVAL);
    /* A metric that is not a number changes nothing. */
    in = input(2, 0.0 / 0.0, 50);
    assert_int_equal(decide(&in, NULL).desired, 2);
    /* No replica yet: the minimum. */
    in = input(0, 80, 50);
    in.min_replicas = 2;
    assert_int_equal(decide(&in, NULL).desired, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratio),       cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_bounds),      cmocka_unit_test(test_up_window),
        cmocka_unit_test(test_down_window), cmocka_unit_test(test_record_trims),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
