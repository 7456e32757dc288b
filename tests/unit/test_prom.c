/*
 * The Prometheus text writer (src/net/prom.c): family lines, label escaping, value formatting
 * (integers, the shortest text that reads back, NaN and infinities), and histograms (cumulative
 * buckets with an inclusive upper bound, +Inf, sum and count), also under concurrent observers.
 * Randomized value round trips print their seed.
 */
#include "net/prom.h"
#include "tests/unit/harness.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The text of one sample with no labels and value v, without its name and newline. */
static void value_text(double v, char *buf, size_t cap)
{
    gp_prom p;
    gp_prom_init(&p);
    gp_prom_sample(&p, "m", NULL, v);
    const char *t = gp_prom_text(&p);
    assert_non_null(t);
    assert_true(strncmp(t, "m ", 2) == 0);
    size_t n = strlen(t);
    assert_true(n >= 4 && t[n - 1] == '\n');
    snprintf(buf, cap, "%.*s", (int)(n - 3), t + 2);
    gp_prom_fini(&p);
}

static void test_empty(void **state)
{
    (void)state;
    gp_prom p;
    gp_prom_init(&p);
    assert_string_equal(gp_prom_text(&p), "");
    gp_prom_fini(&p);
    gp_prom_fini(&p); /* twice is harmless */
}

static void test_family_and_labels(void **state)
{
    (void)state;
    gp_prom p;
    gp_prom_init(&p);
    gp_prom_family(&p, "gpupool_jobs", "gauge", "Jobs \"by\" state\\queue\nand tenant.");
    const char *labels[] = {"state", "Pending", "queue", NULL, "tenant", "a\"b\\c\nd", NULL};
    gp_prom_sample(&p, "gpupool_jobs", labels, 3);
    gp_prom_sample(&p, "gpupool_jobs", NULL, 0);
    const char *none[] = {"queue", NULL, NULL}; /* every value left out: no braces */
    gp_prom_sample(&p, "gpupool_jobs", none, 1);
    assert_string_equal(gp_prom_text(&p),
                        "# HELP gpupool_jobs Jobs \"by\" state\\\\queue\\nand tenant.\n"
                        "# TYPE gpupool_jobs gauge\n"
                        "gpupool_jobs{state=\"Pending\",tenant=\"a\\\"b\\\\c\\nd\"} 3\n"
                        "gpupool_jobs 0\n"
                        "gpupool_jobs 1\n");
    gp_prom_fini(&p);
}

static void test_values(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0, "0"},
        {3, "3"},
        {-2, "-2"},
        {1e15, "1000000000000000"},
        {9007199254740991.0, "9007199254740991"},
        {0.5, "0.5"},
        {0.1, "0.1"},
        {0.001551, "0.001551"},
        {1.0 / 3, "0.3333333333333333"},
        {2.5e-7, "2.5e-07"},
        {1e300, "1e+300"},
        {123456789.125, "123456789.125"},
        {-0.25, "-0.25"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        value_text(cases[i].v, buf, sizeof(buf));
        if (strcmp(buf, cases[i].text) != 0) {
            fail_msg("value %.17g: wrote %s, expected %s", cases[i].v, buf, cases[i].text);
        }
    }
    value_text(NAN, buf, sizeof(buf));
    assert_string_equal(buf, "NaN");
    value_text(INFINITY, buf, sizeof(buf));
    assert_string_equal(buf, "+Inf");
    value_text(-INFINITY, buf, sizeof(buf));
    assert_string_equal(buf, "-Inf");
}

/* Any finite value reads back exactly, in at most 17 significant digits. */
static void test_values_round_trip(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    print_message("seed %u\n", seed);
    srand(seed);
    char buf[64];
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = 0;
        for (int k = 0; k < 4; k++) {
            bits = bits << 16 | (uint64_t)(rand() & 0xffff);
        }
        double v;
        memcpy(&v, &bits, sizeof(v));
        if (!isfinite(v)) {
            continue;
        }
        value_text(v, buf, sizeof(buf));
        if (strtod(buf, NULL) != v) {
            fail_msg("seed %u: %a written as %s does not read back", seed, v, buf);
        }
    }
}

static void test_histogram(void **state)
{
    (void)state;
    static const double bounds[] = {0.1, 1, 10};
    gp_prom_hist h;
    gp_prom_hist_init(&h, bounds, 3);
    const double obs[] = {0.05, 0.1, 0.5, 5, 50, -1, NAN};
    for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++) {
        gp_prom_hist_observe(&h, obs[i]);
    }
    gp_prom p;
    gp_prom_init(&p);
    gp_prom_family(&p, "d_seconds", "histogram", "Durations.");
    const char *labels[] = {"route", "/v1/jobs/{job}", "code", "200", NULL};
    gp_prom_hist_write(&p, "d_seconds", labels, &h);
    /* 0.1 falls in its own bucket (le is inclusive); a negative or NaN value counts as 0 */
    assert_string_equal(gp_prom_text(&p),
                        "# HELP d_seconds Durations.\n"
                        "# TYPE d_seconds histogram\n"
                        "d_seconds_bucket{route=\"/v1/jobs/{job}\",code=\"200\",le=\"0.1\"} 4\n"
                        "d_seconds_bucket{route=\"/v1/jobs/{job}\",code=\"200\",le=\"1\"} 5\n"
                        "d_seconds_bucket{route=\"/v1/jobs/{job}\",code=\"200\",le=\"10\"} 6\n"
                        "d_seconds_bucket{route=\"/v1/jobs/{job}\",code=\"200\",le=\"+Inf\"} 7\n"
                        "d_seconds_sum{route=\"/v1/jobs/{job}\",code=\"200\"} 55.65\n"
                        "d_seconds_count{route=\"/v1/jobs/{job}\",code=\"200\"} 7\n");
    gp_prom_fini(&p);

    /* no labels: le alone */
    gp_prom_init(&p);
    gp_prom_hist_write(&p, "e", NULL, &h);
    assert_non_null(strstr(gp_prom_text(&p), "e_bucket{le=\"0.1\"} 4\n"));
    assert_non_null(strstr(gp_prom_text(&p), "e_sum 55.65\ne_count 7\n"));
    gp_prom_fini(&p);
}

static void test_histogram_bounds_clamped(void **state)
{
    (void)state;
    double many[GP_PROM_HIST_MAX + 4];
    for (int i = 0; i < GP_PROM_HIST_MAX + 4; i++) {
        many[i] = i + 1;
    }
    gp_prom_hist h;
    gp_prom_hist_init(&h, many, GP_PROM_HIST_MAX + 4);
    assert_int_equal(h.nbounds, GP_PROM_HIST_MAX);
    gp_prom_hist_observe(&h, 1000);
    gp_prom p;
    gp_prom_init(&p);
    gp_prom_hist_write(&p, "x", NULL, &h);
    const char *t = gp_prom_text(&p);
    char last[64];
    snprintf(last, sizeof(last), "x_bucket{le=\"%d\"} 0\nx_bucket{le=\"+Inf\"} 1\n",
             GP_PROM_HIST_MAX);
    assert_non_null(strstr(t, last));
    gp_prom_fini(&p);
}

#define THREADS 4
#define PER     20000

static void *observer(void *arg)
{
    gp_prom_hist *h = arg;
    for (int i = 0; i < PER; i++) {
        gp_prom_hist_observe(h, (i % 3) * 0.5); /* 0, 0.5, 1 */
    }
    return NULL;
}

/* Concurrent observers lose nothing: every count and the sum are exact once they are done. */
static void test_histogram_threads(void **state)
{
    (void)state;
    static const double bounds[] = {0.25, 0.75};
    gp_prom_hist h;
    gp_prom_hist_init(&h, bounds, 2);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_create(&t[i], NULL, observer, &h), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
    }
    int zeros = 0, halves = 0, ones = 0;
    for (int i = 0; i < PER; i++) {
        zeros += i % 3 == 0;
        halves += i % 3 == 1;
        ones += i % 3 == 2;
    }
    gp_prom p;
    gp_prom_init(&p);
    gp_prom_hist_write(&p, "c", NULL, &h);
    char want[256];
    snprintf(want, sizeof(want),
             "c_bucket{le=\"0.25\"} %d\nc_bucket{le=\"0.75\"} %d\nc_bucket{le=\"+Inf\"} %d\n"
             "c_sum %g\nc_count %d\n",
             THREADS * zeros, THREADS * (zeros + halves), THREADS * PER,
             THREADS * (halves * 0.5 + ones * 1.0), THREADS * PER);
    assert_string_equal(gp_prom_text(&p), want);
    gp_prom_fini(&p);
}

/* Reading one metric of a scrape (a service's autoscaling metric): samples summed over labels,
 * longer names, comments, label values holding } or quotes, and values that are not numbers. */
static void test_read_sum(void **state)
{
    (void)state;
    const char *text = "# HELP inflight requests\n"
                       "# TYPE inflight gauge\n"
                       "inflight{path=\"/a\"} 3\n"
                       "inflight{path=\"}\\\" 9\"} 4.5 1700000000000\n"
                       "inflight_total 100\n"
                       "other 7\n"
                       "inflight NaN\n"
                       "inflight{broken 5\n"
                       "inflight 0.5";
    double v = -1;
    assert_int_equal(gp_prom_read_sum(text, strlen(text), "inflight", &v), 1);
    assert_true(v == 8.0);
    assert_int_equal(gp_prom_read_sum(text, strlen(text), "other", &v), 1);
    assert_true(v == 7.0);
    v = -1;
    assert_int_equal(gp_prom_read_sum(text, strlen(text), "missing", &v), 0);
    assert_int_equal(gp_prom_read_sum(text, strlen(text), "inflight_t", &v), 0);
    assert_int_equal(gp_prom_read_sum("", 0, "x", &v), 0);
    const char *huge = "x 1e308\nx 1e308\n";
    assert_int_equal(gp_prom_read_sum(huge, strlen(huge), "x", &v), 0);
    assert_true(v == -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_family_and_labels),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_values_round_trip),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_histogram_bounds_clamped),
        cmocka_unit_test(test_histogram_threads),
        cmocka_unit_test(test_read_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
