/*
 * The API's rate limiter (src/ctl/ratelimit.c) on a clock the test drives: the burst, the
 * refill, the advertised wait (a request made after it succeeds, one made just before it does
 * not), independent keys, a clock going backwards, the memory bound (full buckets dropped first,
 * else the fullest), threads sharing one limiter, and a differential run against a naive model
 * (a linear array with the same refill and eviction rules): the answers and the advertised waits
 * must be the same at every step, with and without keys being dropped.
 */
#include "ctl/ratelimit.h"
#include "gpupool/error.h"
#include "tests/unit/harness.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static gp_ratelimit *make(double rate, double burst, size_t max_keys)
{
    gp_ratelimit *rl = NULL;
    assert_int_equal(gp_ratelimit_new(rate, burst, max_keys, &rl), 0);
    assert_non_null(rl);
    return rl;
}

static void test_bad_arguments(void **state)
{
    (void)state;
    gp_ratelimit *rl = (gp_ratelimit *)1;
    assert_int_equal(gp_ratelimit_new(-1, 10, 10, &rl), GP_EINVAL);
    assert_null(rl);
    assert_int_equal(gp_ratelimit_new(NAN, 10, 10, &rl), GP_EINVAL);
    assert_int_equal(gp_ratelimit_new(INFINITY, 10, 10, &rl), GP_EINVAL);
    assert_int_equal(gp_ratelimit_new(1, 0.5, 10, &rl), GP_EINVAL);
    assert_int_equal(gp_ratelimit_new(1, 10, 0, &rl), GP_EINVAL);
    assert_int_equal(gp_ratelimit_new(1, 10, GP_RATELIMIT_MAX_KEYS + 1, &rl), GP_EINVAL);
    assert_null(rl);
    gp_ratelimit_free(NULL);
}

static void test_burst_refill_retry(void **state)
{
    (void)state;
    gp_ratelimit *rl = make(10, 5, 100); /* a token every 100 ms, 5 at once */
    int64_t retry = -1;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(gp_ratelimit_take(rl, 7, 1000, &retry), 0);
    }
    assert_int_equal(retry, -1); /* untouched on success */
    assert_int_equal(gp_ratelimit_take(rl, 7, 1000, &retry), GP_EUNAVAIL);
    assert_int_equal(retry, 100);
    /* Halfway there: still refused, and the wait shrinks. */
    assert_int_equal(gp_ratelimit_take(rl, 7, 1050, &retry), GP_EUNAVAIL);
    assert_int_equal(retry, 50);
    /* Just before the advertised time: refused; at it: one request, then refused again. */
    assert_int_equal(gp_ratelimit_take(rl, 7, 1099, &retry), GP_EUNAVAIL);
    assert_int_equal(retry, 1);
    assert_int_equal(gp_ratelimit_take(rl, 7, 1100, &retry), 0);
    assert_int_equal(gp_ratelimit_take(rl, 7, 1100, &retry), GP_EUNAVAIL);
    assert_int_equal(retry, 100);
    /* The steady rate: one request per 100 ms goes through forever. */
    for (int64_t t = 1200; t < 3000; t += 100) {
        assert_int_equal(gp_ratelimit_take(rl, 7, t, NULL), 0);
        assert_int_equal(gp_ratelimit_take(rl, 7, t, NULL), GP_EUNAVAIL);
    }
    /* A long rest refills up to the burst, not beyond. */
    int ok = 0;
    while (gp_ratelimit_take(rl, 7, 1000000, NULL) == 0) {
        ok++;
    }
    assert_int_equal(ok, 5);
    gp_ratelimit_free(rl);
}

static void test_slow_rate_retry(void **state)
{
    (void)state;
    gp_ratelimit *rl = make(0.5, 1, 10); /* one request per 2 s */
    int64_t retry = 0;
    assert_int_equal(gp_ratelimit_take(rl, 1, 0, &retry), 0);
    assert_int_equal(gp_ratelimit_take(rl, 1, 0, &retry), GP_EUNAVAIL);
    assert_int_equal(retry, 2000);
    assert_int_equal(gp_ratelimit_take(rl, 1, 1999, &retry), GP_EUNAVAIL);
    assert_int_equal(gp_ratelimit_take(rl, 1, 2000, &retry), 0);
    gp_ratelimit_free(rl);
}

static void test_keys_independent(void **state)
{
    (void)state;
    gp_ratelimit *rl = make(1, 3, 100);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(gp_ratelimit_take(rl, 1, 0, NULL), 0);
    }
    assert_int_equal(gp_ratelimit_take(rl, 1, 0, NULL), GP_EUNAVAIL);
    /* Key 2 is untouched by key 1's flood, and key 1 stays refused meanwhile. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(gp_ratelimit_take(rl, 2, 0, NULL), 0);
        assert_int_equal(gp_ratelimit_take(rl, 1, 0, NULL), GP_EUNAVAIL);
    }
    assert_int_equal(gp_ratelimit_take(rl, 2, 0, NULL), GP_EUNAVAIL);
    assert_int_equal(gp_ratelimit_take(rl, -5, 0, NULL), 0); /* any int64 is a key */
    assert_int_equal(gp_ratelimit_size(rl), 3);
    assert_int_equal(gp_ratelimit_check(rl), 0);
    gp_ratelimit_free(rl);
}

static void test_no_limit(void **state)
{
    (void)state;
    gp_ratelimit *rl = make(0, 1, 1);
    for (int i = 0; i < 10000; i++) {
        assert_int_equal(gp_ratelimit_take(rl, i % 7, 0, NULL), 0);
    }
    assert_int_equal(gp_ratelimit_size(rl), 0);
    gp_ratelimit_free(rl);
}

static void test_clock_backwards(void **state)
{
    (void)state;
    gp_ratelimit *rl = make(10, 1, 10);
    assert_int_equal(gp_ratelimit_take(rl, 1, 5000, NULL), 0);
    int64_t retry = 0;
    /* Earlier times give nothing back and do not move the bucket's clock back. */
    assert_int_equal(gp_ratelimit_take(rl, 1, 0, &retry), GP_EUNAVAIL);
    assert_int_equal(retry, 100);
    assert_int_equal(gp_ratelimit_take(rl, 1, 5099, &retry), GP_EUNAVAIL);
    assert_int_equal(gp_ratelimit_take(rl, 1, 5100, &retry), 0);
    gp_ratelimit_free(rl);
}

static void test_memory_bound(void **state)
{
    (void)state;
    gp_ratelimit *rl = make(1, 2, 8);
    /* Keys 1..7 drained, key 8 half: no bucket is full. */
    for (int64_t k = 1; k <= 7; k++) {
        assert_int_equal(gp_ratelimit_take(rl, k, 0, NULL), 0);
        assert_int_equal(gp_ratelimit_take(rl, k, 0, NULL), 0);
    }
    assert_int_equal(gp_ratelimit_take(rl, 8, 0, NULL), 0);
    assert_int_equal(gp_ratelimit_size(rl), 8);
    /* A ninth key makes room by dropping the fullest bucket (key 8), never a drained one. */
    assert_int_equal(gp_ratelimit_take(rl, 9, 0, NULL), 0);
    assert_int_equal(gp_ratelimit_size(rl), 8);
    assert_int_equal(gp_ratelimit_check(rl), 0);
    for (int64_t k = 1; k <= 7; k++) {
        assert_int_equal(gp_ratelimit_take(rl, k, 0, NULL), GP_EUNAVAIL);
    }
    /* Once every bucket has refilled, room is made by dropping all the full ones. */
    assert_int_equal(gp_ratelimit_take(rl, 100, 10000, NULL), 0);
    assert_int_equal(gp_ratelimit_size(rl), 1);
    assert_int_equal(gp_ratelimit_check(rl), 0);
    /* Many keys never grow the table past the bound. */
    for (int64_t k = 0; k < 5000; k++) {
        gp_ratelimit_take(rl, k * 7919, 20000 + k, NULL);
        assert_true(gp_ratelimit_size(rl) <= 8);
    }
    assert_int_equal(gp_ratelimit_check(rl), 0);
    gp_ratelimit_free(rl);
}

/* The naive model: an unordered array of at most max_keys buckets, searched linearly, with
 * the same refill arithmetic at the same moments and the same rule for making room. */
typedef struct mbucket {
    int64_t key, last;
    double tokens;
} mbucket;

#define NKEYS 300
#define EPS   1e-6 /* the limiter's rounding slack */

typedef struct model {
    double rate, burst;
    int max_keys, n;
    mbucket b[NKEYS];
} model;

static void model_refill(const model *m, mbucket *b, int64_t now)
{
    if (now > b->last) {
        b->tokens += (double)(now - b->last) * m->rate / 1000.0;
        if (b->tokens > m->burst) {
            b->tokens = m->burst;
        }
        b->last = now;
    }
}

static void model_make_room(model *m, int64_t now)
{
    int kept = 0, fullest = -1;
    for (int i = 0; i < m->n; i++) {
        model_refill(m, &m->b[i], now);
        if (m->b[i].tokens < m->burst - EPS) {
            m->b[kept++] = m->b[i];
        }
    }
    if (kept < m->n) {
        m->n = kept;
        return;
    }
    for (int i = 0; i < m->n; i++) {
        const mbucket *f = fullest < 0 ? NULL : &m->b[fullest];
        if (!f || m->b[i].tokens > f->tokens ||
            (m->b[i].tokens == f->tokens && m->b[i].key < f->key)) {
            fullest = i;
        }
    }
    m->b[fullest] = m->b[--m->n];
}

static int model_take(model *m, int64_t key, int64_t now, int64_t *retry)
{
    mbucket *b = NULL;
    for (int i = 0; i < m->n && !b; i++) {
        b = m->b[i].key == key ? &m->b[i] : NULL;
    }
    if (!b) {
        if (m->n >= m->max_keys) {
            model_make_room(m, now);
        }
        b = &m->b[m->n++];
        *b = (mbucket){.key = key, .last = now, .tokens = m->burst};
    }
    model_refill(m, b, now);
    if (b->tokens >= 1 - EPS) {
        b->tokens = fmax(0, b->tokens - 1);
        return 0;
    }
    double ms = ceil((1 - b->tokens) * 1000.0 / m->rate - EPS);
    *retry = ms < 1 ? 1 : (int64_t)ms;
    return GP_EUNAVAIL;
}

static void run_differential(unsigned seed, int max_keys, bool expect_refusals)
{
    srand(seed);
    model m = {.rate = 1 + rand() % 50, .burst = 1 + rand() % 20, .max_keys = max_keys};
    gp_ratelimit *rl = make(m.rate, m.burst, (size_t)max_keys);
    int64_t now = 0;
    int refused = 0;
    for (int step = 0; step < 200000; step++) {
        if (rand() % 8 == 0) {
            now += rand() % 4; /* about 40 s in all: hot keys go over any rate drawn */
        }
        int k = rand() % (rand() % NKEYS + 1); /* small keys are hot, large ones rare */
        int64_t want_retry = 0, got_retry = 0;
        int want = model_take(&m, k, now, &want_retry);
        int got = gp_ratelimit_take(rl, k, now, &got_retry);
        if (got != want || got_retry != want_retry) {
            fprintf(stderr,
                    "seed %u max_keys %d step %d key %d: limiter %d (retry %lld), model %d "
                    "(retry %lld)\n",
                    seed, max_keys, step, k, got, (long long)got_retry, want,
                    (long long)want_retry);
            fail();
        }
        refused += got != 0;
        if (step % 10000 == 0) {
            assert_int_equal(gp_ratelimit_check(rl), 0);
            assert_int_equal(gp_ratelimit_size(rl), (size_t)m.n);
        }
    }
    if (expect_refusals) {
        assert_true(refused > 0); /* the run exercised refusals, not only grants */
    }
    assert_int_equal(gp_ratelimit_check(rl), 0);
    gp_ratelimit_free(rl);
}

static void test_differential(void **state)
{
    (void)state;
    const char *env = getenv("GPUPOOL_TEST_SEED"); /* to replay a failure */
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    printf("test_differential seed=%u\n", seed);
    run_differential(seed, NKEYS, true);  /* room for every key */
    run_differential(seed + 1, 40, true); /* keys dropped all the time */
    run_differential(seed + 2, 250, true);
    run_differential(seed + 3, 1, false); /* one bucket: each new key replaces it */
}

typedef struct hammer {
    gp_ratelimit *rl;
    int64_t key;
    int ok;
} hammer;

static void *hammer_main(void *arg)
{
    hammer *h = arg;
    for (int i = 0; i < 20000; i++) {
        h->ok += gp_ratelimit_take(h->rl, h->key, 0, NULL) == 0;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    /* A frozen clock: exactly the burst goes through per key, however the threads interleave. */
    gp_ratelimit *rl = make(5, 1000, 64);
    enum { N = 8 };
    pthread_t th[N];
    hammer h[N];
    for (int i = 0; i < N; i++) {
        h[i] = (hammer){rl, i % 2, 0};
        assert_int_equal(pthread_create(&th[i], NULL, hammer_main, &h[i]), 0);
    }
    int ok[2] = {0, 0};
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        ok[i % 2] += h[i].ok;
    }
    assert_int_equal(ok[0], 1000);
    assert_int_equal(ok[1], 1000);
    assert_int_equal(gp_ratelimit_check(rl), 0);
    gp_ratelimit_free(rl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),   cmocka_unit_test(test_burst_refill_retry),
        cmocka_unit_test(test_slow_rate_retry), cmocka_unit_test(test_keys_independent),
        cmocka_unit_test(test_no_limit),        cmocka_unit_test(test_clock_backwards),
        cmocka_unit_test(test_memory_bound),    cmocka_unit_test(test_differential),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
