/* The GPU memory watch (src/agent/memwatch.c): a fractional replica above its GPU memory limit
 * for the whole grace period is stopped with a reason that names the GPU, the use and the limit;
 * a brief excursion, a reading back under the limit, a missing reading and a whole GPU are not;
 * several GPUs and several replicas are kept apart; each replica is answered once; replicas that
 * disappear are forgotten. Plus a randomized comparison with a naive model (seed printed). */
#include "agent/memwatch.h"
#include "tests/unit/harness.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GRACE_MS 30000

static const char *const uuids[] = {"GPU-0000-aaaa", "GPU-1111-bbbb", "GPU-2222-cccc"};

/* A replica (job, 0, 1) holding the listed GPUs with a limit each (0: a whole GPU). */
static gp_memwatch_replica replica(int64_t job, int ngpus, const int *index, const int64_t *limit)
{
    gp_memwatch_replica r;
    memset(&r, 0, sizeof(r));
    r.key = (gp_replica_key){job, 0, 1};
    r.ngpus = ngpus;
    for (int i = 0; i < ngpus; i++) {
        const char *uuid = index[i] >= 0 && index[i] < 3 ? uuids[index[i]] : NULL;
        r.gpus[i] = (gp_memwatch_gpu){index[i], uuid, limit[i], 0};
    }
    return r;
}

static gp_memwatch *watch(int64_t grace_ms)
{
    gp_memwatch *w = NULL;
    assert_int_equal(gp_memwatch_new(grace_ms, &w), 0);
    assert_non_null(w);
    return w;
}

/* One observation of one replica; the stops it answers (at most 4) into out. */
static int observe1(gp_memwatch *w, int64_t t, const gp_memwatch_replica *r, gp_memwatch_stop *out)
{
    int n = gp_memwatch_observe(w, t, r, 1, out, 4);
    assert_true(n >= 0);
    return n;
}

static void test_brief_excursion(void **state)
{
    (void)state;
    gp_memwatch *w = watch(GRACE_MS);
    gp_memwatch_replica r = replica(7, 1, (int[]){0}, (int64_t[]){10240});
    gp_memwatch_stop out[4];
    r.gpus[0].used_mib = 9000;
    assert_int_equal(observe1(w, 0, &r, out), 0);
    r.gpus[0].used_mib = 12288; /* above from t = 1 s ... */
    for (int64_t t = 1000; t < 1000 + GRACE_MS; t += 1000) {
        assert_int_equal(observe1(w, t, &r, out), 0);
    }
    r.gpus[0].used_mib = 10240; /* ... back to the limit (not above) just before the grace ends */
    assert_int_equal(observe1(w, 1000 + GRACE_MS, &r, out), 0);
    assert_int_equal(observe1(w, 100000, &r, out), 0);
    gp_memwatch_free(w);
}

static void test_stop_after_grace(void **state)
{
    (void)state;
    gp_memwatch *w = watch(GRACE_MS);
    gp_memwatch_replica r = replica(7, 1, (int[]){0}, (int64_t[]){10240});
    gp_memwatch_stop out[4];
    r.gpus[0].used_mib = 12288;
    assert_int_equal(observe1(w, 5000, &r, out), 0);
    assert_int_equal(observe1(w, 5000 + GRACE_MS - 1, &r, out), 0);
    assert_int_equal(observe1(w, 5000 + GRACE_MS, &r, out), 1);
    assert_int_equal(out[0].key.job, 7);
    assert_int_equal(out[0].key.replica, 0);
    assert_int_equal(out[0].key.epoch, 1);
    assert_string_equal(out[0].reason, "GPU memory 12288 MiB on GPU 0 (GPU-0000-aaaa) above the "
                                       "replica's limit of 10240 MiB for 30 s");
    /* Answered once, however long it takes the replica to go. */
    assert_int_equal(observe1(w, 5000 + 2 * GRACE_MS, &r, out), 0);
    gp_memwatch_free(w);
}

static void test_back_under_resets(void **state)
{
    (void)state;
    gp_memwatch *w = watch(GRACE_MS);
    gp_memwatch_replica r = replica(7, 1, (int[]){0}, (int64_t[]){1024});
    gp_memwatch_stop out[4];
    r.gpus[0].used_mib = 2048;
    assert_int_equal(observe1(w, 0, &r, out), 0);
    assert_int_equal(observe1(w, 20000, &r, out), 0);
    r.gpus[0].used_mib = 512;
    assert_int_equal(observe1(w, 21000, &r, out), 0);
    r.gpus[0].used_mib = 2048; /* the timer starts again here */
    assert_int_equal(observe1(w, 22000, &r, out), 0);
    assert_int_equal(observe1(w, 22000 + GRACE_MS - 1000, &r, out), 0);
    assert_int_equal(observe1(w, 22000 + GRACE_MS + 4500, &r, out), 1);
    assert_non_null(strstr(out[0].reason, "for 34 s")); /* how long it was seen above */
    gp_memwatch_free(w);
}

/* No reading is no evidence: it resets, like a reading under the limit. */
static void test_no_reading_resets(void **state)
{
    (void)state;
    gp_memwatch *w = watch(GRACE_MS);
    gp_memwatch_replica r = replica(7, 1, (int[]){0}, (int64_t[]){1024});
    gp_memwatch_stop out[4];
    r.gpus[0].used_mib = 4096;
    assert_int_equal(observe1(w, 0, &r, out), 0);
    r.gpus[0].used_mib = -1;
    assert_int_equal(observe1(w, 15000, &r, out), 0);
    r.gpus[0].used_mib = 4096;
    assert_int_equal(observe1(w, 16000, &r, out), 0);
    assert_int_equal(observe1(w, GRACE_MS + 1000, &r, out), 0);
    assert_int_equal(observe1(w, 16000 + GRACE_MS, &r, out), 1);
    gp_memwatch_free(w);
}

static void test_whole_gpu_never(void **state)
{
    (void)state;
    gp_memwatch *w = watch(0);
    gp_memwatch_replica r = replica(9, 2, (int[]){0, 1}, (int64_t[]){0, -5});
    gp_memwatch_stop out[4];
    r.gpus[0].used_mib = 80000;
    r.gpus[1].used_mib = 80000;
    for (int64_t t = 0; t < 10 * GRACE_MS; t += 1000) {
        assert_int_equal(observe1(w, t, &r, out), 0);
    }
    gp_memwatch_free(w);
}

/* Each GPU has its own timer and the reason names the GPU that stayed above. */
static void test_several_gpus(void **state)
{
    (void)state;
    gp_memwatch *w = watch(GRACE_MS);
    gp_memwatch_replica r = replica(3, 3, (int[]){0, 1, 2}, (int64_t[]){1000, 2000, 0});
    gp_memwatch_stop out[4];
    /* GPU 0 and GPU 1 take turns above their limits: neither is above for the whole grace. */
    for (int64_t t = 0; t <= 3 * GRACE_MS; t += 1000) {
        bool first = (t / 10000) % 2 == 0;
        r.gpus[0].used_mib = first ? 1500 : 900;
        r.gpus[1].used_mib = first ? 1900 : 2500;
        r.gpus[2].used_mib = 70000; /* no limit */
        assert_int_equal(observe1(w, t, &r, out), 0);
    }
    /* Both under, then GPU 1 stays above. */
    r.gpus[0].used_mib = 900;
    r.gpus[1].used_mib = 1900;
    int64_t t0 = 4 * GRACE_MS;
    assert_int_equal(observe1(w, t0 - 1000, &r, out), 0);
    r.gpus[1].used_mib = 4096;
    assert_int_equal(observe1(w, t0, &r, out), 0);
    assert_int_equal(observe1(w, t0 + GRACE_MS, &r, out), 1);
    assert_string_equal(out[0].reason, "GPU memory 4096 MiB on GPU 1 (GPU-1111-bbbb) above the "
                                       "replica's limit of 2000 MiB for 30 s");
    gp_memwatch_free(w);
}

/* Replicas are kept apart; one that leaves is forgotten (its timer does not carry over to a new
 * placement, which has another epoch anyway, nor to the same key seen again later). */
static void test_several_replicas(void **state)
{
    (void)state;
    gp_memwatch *w = watch(GRACE_MS);
    gp_memwatch_replica r[3] = {replica(1, 1, (int[]){0}, (int64_t[]){1024}),
                                replica(2, 1, (int[]){0}, (int64_t[]){1024}),
                                replica(3, 1, (int[]){1}, (int64_t[]){4096})};
    gp_memwatch_stop out[4];
    r[0].gpus[0].used_mib = 2048; /* above */
    r[1].gpus[0].used_mib = 1000; /* under */
    r[2].gpus[0].used_mib = 5000; /* above */
    assert_int_equal(gp_memwatch_observe(w, 0, r, 3, out, 4), 0);
    assert_int_equal(gp_memwatch_observe(w, 10000, r, 3, out, 4), 0);
    /* Replica 1 is gone for one observation: forgotten. */
    assert_int_equal(gp_memwatch_observe(w, 11000, r + 1, 2, out, 4), 0);
    assert_int_equal(gp_memwatch_observe(w, GRACE_MS, r, 3, out, 4), 1);
    assert_int_equal(out[0].key.job, 3);
    assert_int_equal(gp_memwatch_observe(w, 2 * GRACE_MS - 1, r, 3, out, 4), 0);
    assert_int_equal(gp_memwatch_observe(w, 2 * GRACE_MS, r, 3, out, 4), 1);
    assert_int_equal(out[0].key.job, 1);
    assert_int_equal(gp_memwatch_observe(w, 100000, r, 3, out, 4), 0);
    /* An empty observation forgets everything. */
    assert_int_equal(gp_memwatch_observe(w, 100000, NULL, 0, out, 4), 0);
    gp_memwatch_free(w);
}

/* A stop that does not fit in out is answered at the next observation. */
static void test_cap(void **state)
{
    (void)state;
    gp_memwatch *w = watch(0);
    gp_memwatch_replica r[2] = {replica(1, 1, (int[]){0}, (int64_t[]){1}),
                                replica(2, 1, (int[]){0}, (int64_t[]){1})};
    r[0].gpus[0].used_mib = r[1].gpus[0].used_mib = 2;
    gp_memwatch_stop out[1];
    assert_int_equal(gp_memwatch_observe(w, 0, r, 2, out, 1), 1);
    assert_int_equal(out[0].key.job, 1);
    assert_string_equal(out[0].reason, "GPU memory 2 MiB on GPU 0 (GPU-0000-aaaa) above the "
                                       "replica's limit of 1 MiB for 0 s");
    assert_int_equal(gp_memwatch_observe(w, 1, r, 2, out, 1), 1);
    assert_int_equal(out[0].key.job, 2);
    assert_int_equal(gp_memwatch_observe(w, 2, r, 2, out, 0), 0);
    gp_memwatch_free(w);
}

static void test_bad_args(void **state)
{
    (void)state;
    gp_memwatch *w = (gp_memwatch *)1;
    assert_int_equal(gp_memwatch_new(-1, &w), GP_EINVAL);
    assert_null(w);
    gp_memwatch_free(NULL);
    /* A GPU index out of range, no UUID: ignored, and described without one. */
    w = watch(0);
    gp_memwatch_replica r = replica(1, 2, (int[]){-1, GP_MEMWATCH_MAX_GPUS}, (int64_t[]){1, 1});
    r.gpus[0].used_mib = r.gpus[1].used_mib = 5;
    gp_memwatch_stop out[2];
    assert_int_equal(observe1(w, 0, &r, out), 0);
    r.gpus[0] = (gp_memwatch_gpu){4, NULL, 10, 11};
    assert_int_equal(observe1(w, 0, &r, out), 1);
    assert_string_equal(out[0].reason,
                        "GPU memory 11 MiB on GPU 4 above the replica's limit of 10 MiB for 0 s");
    gp_memwatch_free(w);
}

/* Random observations of random replicas against the rule stated plainly: stop (once) at the
 * first observation where a GPU has been above its limit at every observation of the last grace
 * period, counting from the first of the run. */
static void test_random(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    print_message("test_random: seed %u\n", seed);
    srand(seed);
    enum { NREP = 4, NGPU = 3, STEPS = 3000 };
    const int64_t grace = 5000;
    gp_memwatch *w = watch(grace);
    int64_t since[NREP][NGPU];
    bool stopped[NREP] = {false}, present[NREP] = {false};
    for (int i = 0; i < NREP; i++) {
        for (int g = 0; g < NGPU; g++) {
            since[i][g] = -1;
        }
    }
    int64_t t = 0;
    int total = 0;
    for (int step = 0; step < STEPS; step++) {
        t += 1 + rand() % 2000;
        gp_memwatch_replica reps[NREP];
        int idx[NREP], n = 0;
        for (int i = 0; i < NREP; i++) {
            bool here = rand() % 20 != 0;
            if (!here || !present[i]) { /* forgotten: a fresh start when it comes back */
                stopped[i] = false;
                for (int g = 0; g < NGPU; g++) {
                    since[i][g] = -1;
                }
            }
            present[i] = here;
            if (!here) {
                continue;
            }
            reps[n] = replica(i + 1, NGPU, (int[]){0, 1, 2}, (int64_t[]){100, 200, 0});
            for (int g = 0; g < NGPU; g++) {
                int64_t used = rand() % 8 == 0 ? -1 : rand() % 260;
                reps[n].gpus[g].used_mib = used;
                bool above = reps[n].gpus[g].limit_mib > 0 && used > reps[n].gpus[g].limit_mib;
                since[i][g] = !above ? -1 : since[i][g] >= 0 ? since[i][g] : t;
            }
            idx[n++] = i;
        }
        gp_memwatch_stop out[NREP];
        int got = gp_memwatch_observe(w, t, reps, n, out, NREP);
        int want = 0;
        for (int k = 0; k < n; k++) {
            int i = idx[k];
            bool over = false;
            for (int g = 0; g < NGPU; g++) {
                over |= since[i][g] >= 0 && t - since[i][g] >= grace;
            }
            if (over && !stopped[i]) {
                if (want >= got || out[want].key.job != i + 1) {
                    fail_msg("seed %u step %d: replica %d should be stopped", seed, step, i + 1);
                }
                stopped[i] = true;
                want++;
            }
        }
        if (got != want) {
            fail_msg("seed %u step %d: %d stops, the model says %d", seed, step, got, want);
        }
        total += got;
    }
    print_message("test_random: %d stops\n", total);
    gp_memwatch_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_brief_excursion),   cmocka_unit_test(test_stop_after_grace),
        cmocka_unit_test(test_back_under_resets), cmocka_unit_test(test_no_reading_resets),
        cmocka_unit_test(test_whole_gpu_never),   cmocka_unit_test(test_several_gpus),
        cmocka_unit_test(test_several_replicas),  cmocka_unit_test(test_cap),
        cmocka_unit_test(test_bad_args),          cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
