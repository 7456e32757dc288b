/*
 * The history of libgpcore (gpupool/history.h): buckets and their boundaries, the tiers'
 * downsampling, the query plan (tier, step, alignment, refusals), windows, the store's eviction
 * order, and the time and duration syntax. A randomized case (seeded; GP_TEST_SEED=S runs one
 * seed, the seed is printed) compares the finest tier's answers with a naive list of samples.
 */
#include "gpupool/history.h"
#include "gpupool/rng.h"
#include "tests/unit/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC  INT64_C(1000)
#define MIN  (60 * SEC)
#define HOUR (60 * MIN)
#define DAY  (24 * HOUR)
#define T0   (INT64_C(1699999200) * SEC) /* 2023-11-14T22:00:00Z: a multiple of 30 min */

static gp_hist_series *series_new(void)
{
    gp_hist_series *s = malloc(sizeof(*s));
    assert_non_null(s);
    gp_hist_series_init(s);
    return s;
}

/* Points of s over [from, to] at step, planned at ref. */
static gp_hist_point *query(const gp_hist_series *s, int64_t ref, int64_t from, int64_t to,
                            int64_t step, gp_hist_plan *p)
{
    assert_int_equal(gp_hist_plan_make(ref, from, to, step, p), 0);
    gp_hist_point *pts = calloc((size_t)p->npoints, sizeof(*pts));
    assert_non_null(pts);
    gp_hist_fill(s, p, pts);
    return pts;
}

/* A sample at the last ms of a bucket and one at the first ms of the next land in two points. */
static void test_bucket_boundaries(void **state)
{
    (void)state;
    gp_hist_series *s = series_new();
    gp_hist_add(s, T0 + 10 * SEC - 1, 10);
    gp_hist_add(s, T0 + 10 * SEC, 30);
    gp_hist_add(s, T0 + 10 * SEC + 9999, 50);
    gp_hist_plan p;
    gp_hist_point *pts = query(s, T0 + MIN, T0, T0 + 30 * SEC, 10 * SEC, &p);
    assert_int_equal(p.tier, 0);
    assert_int_equal(p.step_ms, 10 * SEC);
    assert_int_equal(p.first_ms, T0);
    assert_int_equal(p.npoints, 4);
    assert_int_equal(pts[0].n, 1);
    assert_true(pts[0].min == 10 && pts[0].max == 10);
    assert_int_equal(pts[1].n, 2);
    assert_true(pts[1].min == 30 && pts[1].max == 50 && gp_hist_point_mean(&pts[1]) == 40);
    assert_int_equal(pts[2].n, 0);
    assert_int_equal(pts[3].n, 0);
    free(pts);
    free(s);
}

/* Coarser tiers keep min, max and an exact mean of what the finer ones saw; the finest tier
 * forgets what is older than an hour, the next what is older than a day. */
static void test_downsampling(void **state)
{
    (void)state;
    gp_hist_series *s = series_new();
    /* one sample every 10 s for two days: value = minute of the day (0..1439) */
    for (int64_t t = T0; t < T0 + 2 * DAY; t += 10 * SEC) {
        gp_hist_add(s, t, (double)(((t - T0) / MIN) % 1440));
    }
    int64_t now = T0 + 2 * DAY - 1;
    gp_hist_plan p;
    /* the last hour comes from the 10 s tier */
    gp_hist_point *pts = query(s, now, now - HOUR + 10 * SEC, now, 10 * SEC, &p);
    assert_int_equal(p.tier, 0);
    assert_int_equal(p.npoints, 360);
    for (int i = 0; i < p.npoints; i++) {
        assert_int_equal(pts[i].n, 1);
    }
    free(pts);
    /* six hours ago: the 2 min tier; each point of 2 min holds 12 samples, two minutes */
    int64_t from = now - 6 * HOUR;
    pts = query(s, now, from, from + 10 * MIN, 0, &p);
    assert_int_equal(p.tier, 1);
    assert_int_equal(p.step_ms, 2 * MIN);
    assert_int_equal(p.first_ms % (2 * MIN), 0);
    for (int i = 0; i < p.npoints; i++) {
        int64_t minute = ((p.first_ms + i * p.step_ms - T0) / MIN) % 1440;
        assert_int_equal(pts[i].n, 12);
        assert_true(pts[i].min == (double)minute);
        assert_true(pts[i].max == (double)minute + 1);
        assert_true(fabs(gp_hist_point_mean(&pts[i]) - ((double)minute + 0.5)) < 1e-6);
    }
    free(pts);
    /* a day and a half ago: the 30 min tier, 180 samples a bucket */
    from = now - 36 * HOUR;
    pts = query(s, now, from, from + HOUR, 30 * MIN, &p);
    assert_int_equal(p.tier, 2);
    assert_int_equal(pts[0].n, 180);
    assert_true(pts[0].max - pts[0].min == 29);
    free(pts);
    /* the finest tier holds only its last hour */
    gp_hist_point acc;
    gp_hist_point_clear(&acc);
    gp_hist_plan old = {.tier = 0, .step_ms = 10 * SEC, .first_ms = T0, .npoints = 6};
    gp_hist_point six[6] = {{0}};
    gp_hist_fill(s, &old, six);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(six[i].n, 0);
    }
    free(s);
}

/* A step finer than the tier is rounded up to it; the points are aligned to the step, whatever
 * from says; the default step keeps the points at most GP_HIST_DEFAULT_POINTS. */
static void test_plan(void **state)
{
    (void)state;
    gp_hist_plan p;
    assert_int_equal(gp_hist_plan_make(T0, T0 - HOUR / 2, T0, 1 * SEC, &p), 0);
    assert_int_equal(p.tier, 0);
    assert_int_equal(p.step_ms, 10 * SEC);
    assert_int_equal(gp_hist_plan_make(T0, T0 - HOUR / 2 + 7 * SEC, T0, 25 * SEC, &p), 0);
    assert_int_equal(p.step_ms, 30 * SEC);
    assert_int_equal(p.first_ms % (30 * SEC), 0);
    assert_true(p.first_ms <= T0 - HOUR / 2 + 7 * SEC);
    assert_true(p.first_ms + 30 * SEC > T0 - HOUR / 2 + 7 * SEC);
    assert_true(p.first_ms + (p.npoints - 1) * p.step_ms <= T0);
    assert_true(p.first_ms + p.npoints * p.step_ms > T0);
    /* default: an hour at 10 s is 361 points (an unaligned start): 20 s */
    assert_int_equal(gp_hist_plan_make(T0, T0 - HOUR + 1, T0, 0, &p), 0);
    assert_int_equal(p.step_ms, 20 * SEC);
    assert_true(p.npoints <= GP_HIST_DEFAULT_POINTS);
    /* ten minutes: every 10 s point */
    assert_int_equal(gp_hist_plan_make(T0, T0 - 10 * MIN, T0, 0, &p), 0);
    assert_int_equal(p.step_ms, 10 * SEC);
    assert_int_equal(p.npoints, 61);
    /* a week: the 30 min tier */
    assert_int_equal(gp_hist_plan_make(T0, T0 - 7 * DAY + HOUR, T0, 0, &p), 0);
    assert_int_equal(p.tier, 2);
    assert_true(p.npoints <= GP_HIST_DEFAULT_POINTS);
    /* refusals */
    assert_int_equal(gp_hist_plan_make(T0, T0 + 1, T0, 0, &p), GP_EINVAL);
    assert_int_equal(gp_hist_plan_make(T0, T0 - HOUR, T0, -1, &p), GP_EINVAL);
    assert_int_equal(gp_hist_plan_make(T0, T0 - 2 * DAY, T0, 1 * SEC, &p), GP_ERANGE);
    assert_int_equal(gp_hist_plan_make(T0, T0 - 365 * DAY, T0, MIN, &p), GP_ERANGE);
    assert_int_equal(gp_hist_plan_make(T0, T0 - 365 * DAY, T0, 0, &p), 0); /* coarse, but whole */
    assert_true(p.npoints <= GP_HIST_DEFAULT_POINTS);
    /* from == to: one point */
    assert_int_equal(gp_hist_plan_make(T0, T0, T0, 0, &p), 0);
    assert_int_equal(p.npoints, 1);
}

/* Windows read the finest tier that still holds their start; samples out of order are kept
 * while their bucket is in the window, dropped once it is not. */
static void test_window_and_order(void **state)
{
    (void)state;
    gp_hist_series *s = series_new();
    gp_hist_add(s, T0, 20);
    gp_hist_add(s, T0 + 30 * SEC, 60);
    gp_hist_add(s, T0 + 15 * SEC, 40);  /* late, still in the window */
    gp_hist_add(s, T0 + 2 * HOUR, 0);   /* moves every head on */
    gp_hist_add(s, T0 + 15 * SEC, 1e6); /* too late for the 10 s tier, kept by the coarser */
    gp_hist_add(s, T0 + 2 * HOUR, NAN); /* ignored */
    gp_hist_point acc;
    gp_hist_point_clear(&acc);
    gp_hist_window(s, T0 + 2 * HOUR - 5 * MIN, T0 + 2 * HOUR, &acc);
    assert_int_equal(acc.n, 1);
    assert_true(acc.max == 0);
    gp_hist_point_clear(&acc);
    gp_hist_window(s, T0, T0 + MIN, &acc); /* the 2 min tier: one bucket */
    assert_int_equal(acc.n, 4);
    assert_true(acc.min == 20 && acc.max == 1e6);
    gp_hist_point_clear(&acc);
    gp_hist_window(NULL, T0, T0 + MIN, &acc);
    assert_int_equal(acc.n, 0);
    free(s);
}

/* Two series filled into the same points aggregate: counts and sums add, extremes combine. */
static void test_aggregate(void **state)
{
    (void)state;
    gp_hist_series *a = series_new(), *b = series_new();
    gp_hist_add(a, T0, 10);
    gp_hist_add(b, T0 + SEC, 50);
    gp_hist_plan p;
    gp_hist_point *pts = query(a, T0 + MIN, T0, T0 + 9 * SEC, 10 * SEC, &p);
    gp_hist_fill(b, &p, pts);
    gp_hist_fill(NULL, &p, pts);
    assert_int_equal(p.npoints, 1);
    assert_int_equal(pts[0].n, 2);
    assert_true(pts[0].min == 10 && pts[0].max == 50 && gp_hist_point_mean(&pts[0]) == 30);
    free(pts);
    free(a);
    free(b);
}

/* The sizes docs/operations.md and the history.* options' help quote. */
static void test_sizes(void **state)
{
    (void)state;
    assert_int_equal(GP_HIST_SERIES_BYTES, 22728);
}

/* Finished keys go first, the earliest end first; then the earliest added. */
static void test_store_eviction(void **state)
{
    (void)state;
    gp_hist_store *h = gp_hist_store_new(3, 2);
    assert_non_null(h);
    assert_null(gp_hist_store_open(h, 1, 2));
    for (int64_t k = 1; k <= 3; k++) {
        gp_hist_add(gp_hist_store_open(h, k, 0), T0, (double)k);
    }
    assert_int_equal(gp_hist_store_count(h), 3);
    assert_null(gp_hist_store_get(h, 1, 1)); /* not made yet */
    gp_hist_store_finish(h, 3, T0 + 5);
    gp_hist_store_finish(h, 2, T0 + 9);
    gp_hist_store_finish(h, 2, T0 + 1); /* the first end stays */
    int64_t end = 0;
    assert_true(gp_hist_store_finished(h, 2, &end));
    assert_int_equal(end, T0 + 9);
    assert_non_null(gp_hist_store_open(h, 4, 1)); /* evicts 3: finished earliest */
    assert_false(gp_hist_store_has(h, 3));
    assert_true(gp_hist_store_has(h, 1) && gp_hist_store_has(h, 2) && gp_hist_store_has(h, 4));
    assert_non_null(gp_hist_store_open(h, 5, 0)); /* evicts 2: the other finished one */
    assert_false(gp_hist_store_has(h, 2));
    assert_non_null(gp_hist_store_open(h, 6, 0)); /* none finished: 1, added first */
    assert_false(gp_hist_store_has(h, 1));
    assert_int_equal(gp_hist_store_count(h), 3);
    gp_hist_store_drop(h, 4);
    assert_int_equal(gp_hist_store_count(h), 2);
    assert_null(gp_hist_store_get(h, 4, 1));
    /* many keys through a small store: the index is rebuilt, the last three stay */
    for (int64_t k = 100; k < 1100; k++) {
        gp_hist_add(gp_hist_store_open(h, k, 1), T0, 1);
    }
    assert_int_equal(gp_hist_store_count(h), 3);
    for (int64_t k = 1097; k < 1100; k++) {
        assert_non_null(gp_hist_store_get(h, k, 1));
    }
    int seen = 0;
    for (int i = 0; i < gp_hist_store_capacity(h); i++) {
        int64_t k;
        seen += gp_hist_store_slot(h, i, &k) && k >= 1097;
    }
    assert_int_equal(seen, 3);
    assert_null(gp_hist_store_new(0, 1));
    assert_null(gp_hist_store_new(1, 0));
    gp_hist_store_free(h);
    gp_hist_store_free(NULL);
}

static void test_parse(void **state)
{
    (void)state;
    int64_t ms = 0, now = T0;
    assert_int_equal(gp_hist_parse_duration("10s", &ms), 0);
    assert_int_equal(ms, 10 * SEC);
    assert_int_equal(gp_hist_parse_duration("1.5m", &ms), 0);
    assert_int_equal(ms, 90 * SEC);
    assert_int_equal(gp_hist_parse_duration("60", &ms), 0);
    assert_int_equal(ms, MIN);
    assert_int_equal(gp_hist_parse_duration("250ms", &ms), 0);
    assert_int_equal(ms, 250);
    const char *bad_durations[] = {"", "0", "0s", "-1s", "1x", "s", "1.2.3s", "1e3", NULL};
    for (int i = 0; bad_durations[i]; i++) {
        assert_int_equal(gp_hist_parse_duration(bad_durations[i], &ms), GP_EINVAL);
    }
    assert_int_equal(gp_hist_parse_duration(NULL, &ms), GP_EINVAL);
    assert_int_equal(gp_hist_parse_time("now", now, &ms), 0);
    assert_int_equal(ms, now);
    assert_int_equal(gp_hist_parse_time("-1h", now, &ms), 0);
    assert_int_equal(ms, now - HOUR);
    assert_int_equal(gp_hist_parse_time("now-15m", now, &ms), 0);
    assert_int_equal(ms, now - 15 * MIN);
    assert_int_equal(gp_hist_parse_time("1699999200", now, &ms), 0);
    assert_int_equal(ms, T0);
    assert_int_equal(gp_hist_parse_time("1699999200.5", now, &ms), 0);
    assert_int_equal(ms, T0 + 500);
    assert_int_equal(gp_hist_parse_time("2023-11-14T22:00:00Z", now, &ms), 0);
    assert_int_equal(ms, T0);
    const char *bad_times[] = {"", "yesterday", "now+1h", "-", "-1y", "12:00", "nowx", NULL};
    for (int i = 0; bad_times[i]; i++) {
        assert_int_equal(gp_hist_parse_time(bad_times[i], now, &ms), GP_EINVAL);
    }
}

/* Random samples (times within the last hour, in any order) against a naive list: every point
 * of the 10 s tier at random steps agrees on count, extremes and sum. */
static void test_random_against_naive(void **state)
{
    (void)state;
    uint64_t seed = 0x5eed;
    const char *env = getenv("GP_TEST_SEED");
    if (env) {
        seed = strtoull(env, NULL, 0);
    }
    printf("test_history seed=%llu\n", (unsigned long long)seed);
    gp_rng rng;
    gp_rng_seed(&rng, seed);
    enum { N = 4000 };
    static int64_t ts[N];
    static float vs[N];
    for (int round = 0; round < 20; round++) {
        gp_hist_series *s = series_new();
        int64_t now = T0 + (int64_t)gp_rng_below(&rng, 10 * HOUR);
        for (int i = 0; i < N; i++) {
            /* the last sample at now: the head */
            ts[i] = i == N - 1 ? now : now - (int64_t)gp_rng_below(&rng, 50 * MIN);
            vs[i] = (float)gp_rng_below(&rng, 101);
            gp_hist_add(s, ts[i], vs[i]);
        }
        int64_t step = 10 * SEC * (1 + (int64_t)gp_rng_below(&rng, 20));
        int64_t from = now - 50 * MIN + (int64_t)gp_rng_below(&rng, 10 * MIN);
        gp_hist_plan p;
        gp_hist_point *pts = query(s, now, from, now - 1, step, &p);
        assert_int_equal(p.tier, 0);
        for (int k = 0; k < p.npoints; k++) {
            int64_t lo = p.first_ms + k * p.step_ms, hi = lo + p.step_ms;
            int64_t n = 0;
            double mn = INFINITY, mx = -INFINITY, sum = 0;
            for (int i = 0; i < N; i++) {
                if (ts[i] >= lo && ts[i] < hi) {
                    n++;
                    mn = vs[i] < mn ? vs[i] : mn;
                    mx = vs[i] > mx ? vs[i] : mx;
                    sum += vs[i];
                }
            }
            assert_int_equal(pts[k].n, n);
            if (n) {
                assert_true(pts[k].min == mn && pts[k].max == mx);
                assert_true(fabs(pts[k].sum - sum) <= 1e-6 * sum + 1e-3);
            }
        }
        free(pts);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_boundaries),
        cmocka_unit_test(test_downsampling),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_window_and_order),
        cmocka_unit_test(test_aggregate),
        cmocka_unit_test(test_store_eviction),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_random_against_naive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
