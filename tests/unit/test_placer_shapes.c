/*
 * The placer with many request shapes: the class summaries and the per-shape score cache
 * (src/core/placer.h) against the straightforward scan (gp_placer_set_plain: every live class
 * checked with gp_node_fits and scored afresh).
 *
 * Differential: two copies of one random cluster (GPU models with and without MIG, spares and
 * GPUs out of service, unschedulable nodes, capabilities, maintenance windows), one placer on
 * each, one plain; random requests drawn from many shapes (CPU only, whole GPUs, fractions with
 * and without GPU memory, MIG profiles, model restrictions, spares allowed, runtimes,
 * capabilities) are placed by both with equal generators, and must give the same answer and
 * leave the generators equal; placements are applied to both, releases and changes of node
 * state too. Every policy, with and without a tie rank, with the default cache and with one
 * small enough to be dropped over and over. Seeds 1..N by default; GP_TEST_SEED=S runs one seed.
 * Every seed is printed so a failure can be replayed.
 */
#include "core/placer.h"
#include "gpupool/placement.h"
#include "gpupool/rng.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>

#define NODES    40
#define SHAPES   120
#define OPS      1500
#define LIVE_MAX 512

static const char *const mig_profiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};

static gp_cluster *random_cluster(gp_rng *rng)
{
    gp_cluster *c = gp_cluster_new();
    int models[3] = {gp_cluster_model(c, "NVIDIA H100 80GB HBM3", 81559),
                     gp_cluster_model(c, "NVIDIA L4", 23034), gp_cluster_model(c, "T4", 0)};
    for (int i = 0; i < NODES; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%02d", i);
        int ngpus = (int)gp_rng_below(rng, 9); /* 0..8 */
        int m = models[gp_rng_below(rng, 3)];
        gp_gpu_spec s[GP_MAX_GPUS_PER_NODE];
        for (int g = 0; g < ngpus; g++) {
            s[g] = (gp_gpu_spec){.model = m, .numa = g * 2 / ngpus, .nvlink = 0, .mem_mib = 0};
        }
        int64_t cpu = 8000 * (int64_t)(1 + gp_rng_below(rng, 8));
        assert_true(gp_cluster_add_node(c, name, cpu, 65536 * (int64_t)(1 + gp_rng_below(rng, 4)),
                                        ngpus, s) == i);
        if (m == models[0] && ngpus > 0 && gp_rng_below(rng, 3) == 0) {
            assert_int_equal(gp_cluster_enable_mig(c, i, 0), 0);
        }
    }
    return c;
}

static gp_request random_shape(gp_rng *rng)
{
    gp_request r =
        fx_none((int64_t)gp_rng_below(rng, 24) * 500, (int64_t)gp_rng_below(rng, 40) * 2048);
    switch (gp_rng_below(rng, 5)) {
    case 0:
        break;
    case 1:
        r.kind = GP_REQ_WHOLE;
        r.gpu_count = 1 + (int)gp_rng_below(rng, 8);
        break;
    case 2:
    case 3:
        r.kind = GP_REQ_FRACTION;
        r.gpu_milli = (int)gp_rng_below(rng, 21) * 50;
        r.gpu_mem_mib = gp_rng_below(rng, 2) ? (int64_t)gp_rng_below(rng, 24) * 1024 : 0;
        if (r.gpu_milli == 0 && r.gpu_mem_mib == 0) {
            r.gpu_milli = 100;
        }
        break;
    default:
        r = fx_mig(mig_profiles[gp_rng_below(rng, 4)]);
        r.cpu_milli = (int64_t)gp_rng_below(rng, 8) * 500;
        break;
    }
    r.allowed_models = gp_rng_below(rng, 4) == 0 ? 1 + gp_rng_below(rng, 7) : 0;
    r.spare_ok = gp_rng_below(rng, 4) == 0;
    r.runtime_ms = gp_rng_below(rng, 3) == 0 ? (int64_t)gp_rng_below(rng, 4) * 3600000 : 0;
    r.needs = gp_rng_below(rng, 6) == 0 ? GP_CAP_IMAGES : 0;
    return r;
}

/* A change of node state, the same on both clusters. */
static void perturb(gp_cluster *a, gp_cluster *b, gp_rng *rng)
{
    int node = (int)gp_rng_below(rng, NODES);
    int ngpus = gp_cluster_node(a, node)->ngpus;
    switch (gp_rng_below(rng, 5)) {
    case 0: {
        bool on = gp_rng_below(rng, 4) != 0;
        assert_int_equal(gp_cluster_set_schedulable(a, node, on), 0);
        assert_int_equal(gp_cluster_set_schedulable(b, node, on), 0);
        break;
    }
    case 1: {
        int64_t w = gp_rng_below(rng, 2) ? -1 : (int64_t)gp_rng_below(rng, 4) * 3600000;
        assert_int_equal(gp_cluster_set_window(a, node, w), 0);
        assert_int_equal(gp_cluster_set_window(b, node, w), 0);
        break;
    }
    case 2: {
        uint32_t caps = gp_rng_below(rng, 2) ? GP_CAP_IMAGES : 0;
        assert_int_equal(gp_cluster_set_caps(a, node, caps), 0);
        assert_int_equal(gp_cluster_set_caps(b, node, caps), 0);
        break;
    }
    case 3:
        if (ngpus > 0) {
            int g = (int)gp_rng_below(rng, (uint64_t)ngpus), avail = (int)gp_rng_below(rng, 3);
            assert_int_equal(gp_cluster_set_gpu_avail(a, node, g, avail), 0);
            assert_int_equal(gp_cluster_set_gpu_avail(b, node, g, avail), 0);
        }
        break;
    default: {
        bool dyn = gp_rng_below(rng, 2);
        gp_cluster_set_dynamic_mig(a, dyn);
        gp_cluster_set_dynamic_mig(b, dyn);
        break;
    }
    }
}

static void assert_same(int rc1, const gp_assignment *x, int rc2, const gp_assignment *y)
{
    assert_int_equal(rc1, rc2);
    if (rc1 < 0) {
        return;
    }
    assert_int_equal(x->node, y->node);
    assert_int_equal(x->cpu_milli, y->cpu_milli);
    assert_int_equal(x->memory_mib, y->memory_mib);
    assert_int_equal(x->nshares, y->nshares);
    for (int i = 0; i < x->nshares; i++) {
        const gp_gpu_share *s = &x->shares[i], *t = &y->shares[i];
        assert_int_equal(s->gpu, t->gpu);
        assert_int_equal(s->milli, t->milli);
        assert_int_equal(s->mem_mib, t->mem_mib);
        assert_int_equal(s->mig_start, t->mig_start);
        assert_int_equal(s->mig_memory_slices, t->mig_memory_slices);
    }
}

typedef struct run {
    gp_cluster *fast_c, *plain_c;
    gp_placer *fast, *plain;
    gp_assignment live[LIVE_MAX];
    int nlive;
    long placed, refused, fresh_scored;
} run;

static void place_both(run *u, const gp_request *r, gp_rng *r1, gp_rng *r2)
{
    gp_assignment a, b;
    gp_place_info info;
    int rc1 = gp_placer_place(u->fast, r, r1, &a, &info);
    int rc2 = gp_placer_place(u->plain, r, r2, &b, NULL);
    assert_same(rc1, &a, rc2, &b);
    assert_true(r1->state == r2->state);
    u->fresh_scored += info.classes_scored;
    if (rc1 < 0) {
        u->refused++;
        return;
    }
    assert_true(gp_node_fits(u->fast_c, a.node, r));
    u->placed++;
    if (u->nlive < LIVE_MAX && gp_cluster_assign(u->fast_c, &a) == 0) {
        assert_int_equal(gp_cluster_assign(u->plain_c, &a), 0);
        u->live[u->nlive++] = a;
    }
}

static void one_run(uint64_t seed, const char *policy, bool ranked, size_t limit)
{
    gp_rng rng;
    gp_rng_seed(&rng, seed);
    run *u = calloc(1, sizeof(*u));
    assert_non_null(u);
    u->fast_c = random_cluster(&rng);
    u->plain_c = gp_cluster_clone(u->fast_c);
    gp_request shapes[SHAPES];
    for (int i = 0; i < SHAPES; i++) {
        shapes[i] = random_shape(&rng);
    }
    gp_request typical[3] = {fx_frac(2000, 500), fx_whole(8000, 1), fx_none(4000, 8192)};
    gp_workload_item items[3] = {{typical[0], 0.5}, {typical[1], 0.3}, {typical[2], 0.2}};
    gp_workload w = {items, 3};
    gp_policy *p;
    assert_int_equal(gp_policy_new(policy, &w, &p, NULL), 0);
    assert_int_equal(gp_placer_new(u->fast_c, p, &u->fast), 0);
    assert_int_equal(gp_placer_new(u->plain_c, p, &u->plain), 0);
    gp_placer_set_plain(u->plain, true);
    gp_placer_set_cache_limit(u->fast, limit);
    if (seed % 2 == 1) { /* rebuilt every few hundred changes: scores follow their classes */
        gp_placer_set_spare_classes(u->fast, 8);
        gp_placer_set_spare_classes(u->plain, 8);
    }
    uint32_t rank[NODES];
    for (int i = 0; i < NODES; i++) {
        rank[i] = (uint32_t)((i * 17 + seed) % NODES);
    }
    if (ranked) {
        gp_placer_set_tie_rank(u->fast, rank);
        gp_placer_set_tie_rank(u->plain, rank);
    }
    gp_rng r1, r2;
    gp_rng_seed(&r1, seed * 7919);
    gp_rng_seed(&r2, seed * 7919);
    for (int op = 0; op < OPS; op++) {
        uint64_t what = gp_rng_below(&rng, 20);
        if (what < 12) {
            place_both(u, &shapes[gp_rng_below(&rng, SHAPES)], &r1, &r2);
        } else if (what < 19 && u->nlive > 0) {
            int k = (int)gp_rng_below(&rng, (uint64_t)u->nlive);
            assert_int_equal(gp_cluster_release(u->fast_c, &u->live[k]), 0);
            assert_int_equal(gp_cluster_release(u->plain_c, &u->live[k]), 0);
            u->live[k] = u->live[--u->nlive];
        } else {
            perturb(u->fast_c, u->plain_c, &rng);
        }
    }
    size_t entries, bytes;
    gp_placer_cache_usage(u->fast, &entries, &bytes);
    assert_true(entries <= limit);
    assert_true(u->placed > OPS / 10 && u->refused > 0); /* both outcomes were compared */
    assert_true(seed % 2 == 0 || gp_placer_rebuilds(u->fast) > 0);
    assert_int_equal(gp_placer_rebuilds(u->fast), gp_placer_rebuilds(u->plain));
    gp_placer_free(u->fast);
    gp_placer_free(u->plain);
    gp_policy_free(p);
    gp_cluster_free(u->fast_c);
    gp_cluster_free(u->plain_c);
    free(u);
}

static void test_same_decisions_as_plain_scan(void **state)
{
    (void)state;
    int np;
    const char *const *names = gp_policy_names(&np);
    const char *env = getenv("GP_TEST_SEED");
    uint64_t first = env ? strtoull(env, NULL, 10) : 1, last = env ? first : 6;
    for (uint64_t seed = first; seed <= last; seed++) {
        printf("seed %llu\n", (unsigned long long)seed);
        for (int pi = 0; pi < np; pi++) {
            one_run(seed, names[pi], seed % 2 == 0, seed % 3 == 0 ? 50 : PLACER_SCORES_MAX);
        }
    }
}

/* The summary never turns away a node that fits (it is a necessary condition). */
static void test_summary_is_necessary(void **state)
{
    (void)state;
    gp_rng rng;
    gp_rng_seed(&rng, 5);
    gp_cluster *c = random_cluster(&rng);
    gp_placer *pl;
    gp_policy *p;
    assert_int_equal(gp_policy_new("bestfit", NULL, &p, NULL), 0);
    assert_int_equal(gp_placer_new(c, p, &pl), 0);
    gp_rng r2;
    gp_rng_seed(&r2, 9);
    long fits = 0;
    for (int round = 0; round < 400; round++) {
        gp_request r = random_shape(&rng);
        for (int n = 0; n < NODES; n++) {
            placer_fit f;
            placer_fit_of(c, n, &f);
            if (gp_node_fits(c, n, &r)) {
                fits++;
                assert_true(placer_fit_may(&f, &r));
            }
        }
        gp_assignment a;
        if (gp_placer_place(pl, &r, &r2, &a, NULL) == 0) {
            assert_int_equal(gp_cluster_assign(c, &a), 0);
        }
        if (round % 10 == 0) {
            gp_cluster *copy = gp_cluster_clone(c);
            perturb(c, copy, &rng);
            gp_cluster_free(copy);
        }
    }
    assert_true(fits > 100);
    gp_placer_free(pl);
    gp_policy_free(p);
    gp_cluster_free(c);
}

/* A class the summary rules out costs no score and no cache entry; a shape placed again on
 * an unchanged cluster is answered from its cache alone. */
static void test_summary_and_cache_spare_scoring(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    int m = gp_cluster_model(c, "T4", 0);
    for (int i = 0; i < 16; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%d", i);
        fx_node(c, name, 1000 * (i + 1), 65536, 2, m); /* 16 classes: CPU differs */
    }
    gp_policy *p;
    gp_placer *pl;
    assert_int_equal(gp_policy_new("bestfit", NULL, &p, NULL), 0);
    assert_int_equal(gp_placer_new(c, p, &pl), 0);
    gp_rng rng;
    gp_rng_seed(&rng, 1);
    gp_assignment a;
    gp_place_info info;
    gp_request big = fx_frac(20000, 100); /* more CPU than any node has */
    assert_int_equal(gp_placer_place(pl, &big, &rng, &a, &info), GP_ENOSPC);
    assert_int_equal(info.classes_seen, 16);
    assert_int_equal(info.classes_scored, 0);
    gp_request some = fx_frac(12000, 100); /* nodes n11..n15 */
    assert_int_equal(gp_placer_place(pl, &some, &rng, &a, &info), 0);
    assert_int_equal(info.classes_scored, 5);
    assert_int_equal(info.feasible_nodes, 5);
    assert_int_equal(gp_placer_place(pl, &some, &rng, &a, &info), 0);
    assert_int_equal(info.classes_scored, 0);
    size_t entries, bytes;
    gp_placer_cache_usage(pl, &entries, &bytes);
    assert_int_equal(entries, 5);
    assert_true(bytes > 0);
    gp_placer_set_spare_classes(pl, -1000); /* every decision rebuilds the classes */
    long before = gp_placer_rebuilds(pl);
    assert_int_equal(gp_placer_place(pl, &some, &rng, &a, &info), 0);
    assert_true(gp_placer_rebuilds(pl) > before);
    assert_int_equal(info.classes_scored, 0);              /* the scores followed their classes */
    gp_assignment small = {.node = 15, .cpu_milli = 1000}; /* n15 still fits `some` */
    assert_int_equal(gp_cluster_assign(c, &small), 0);
    assert_int_equal(gp_placer_place(pl, &some, &rng, &a, &info), 0);
    assert_int_equal(info.classes_scored, 1); /* only the node that changed */
    gp_placer_free(pl);
    gp_policy_free(p);
    gp_cluster_free(c);
}

/* The cache holds at most its limit, dropping everything when full, and still answers. */
static void test_cache_bounded(void **state)
{
    (void)state;
    placer_scores s;
    placer_scores_init(&s, 100);
    for (int shape = 0; shape < 30; shape++) {
        for (int cls = 0; cls < 20; cls++) {
            placer_scores_put(&s, shape, cls, shape * 100.0 + cls);
            assert_true(s.total <= 100);
            double v;
            assert_true(placer_scores_get(&s, shape, cls, &v));
            assert_true(v == shape * 100.0 + cls);
        }
    }
    double v;
    assert_false(placer_scores_get(&s, 0, 0, &v)); /* dropped long ago */
    assert_false(placer_scores_get(&s, 1000, 0, &v));
    placer_scores_put(&s, 29, 19, -1.5); /* replaces */
    assert_true(placer_scores_get(&s, 29, 19, &v) && v == -1.5);
    placer_scores_clear(&s);
    assert_int_equal(s.total, 0);
    assert_false(placer_scores_get(&s, 29, 19, &v));
    placer_scores_fini(&s);
}

static int odd_dropped_halved(void *ctx, int cls)
{
    (void)ctx;
    return cls % 2 ? -1 : cls / 2;
}

/* Pruning keeps what the map keeps, under its new number, and frees the rest. */
static void test_cache_prune(void **state)
{
    (void)state;
    placer_scores s;
    placer_scores_init(&s, 1 << 20);
    for (int shape = 0; shape < 5; shape++) {
        for (int cls = 0; cls < 300; cls++) {
            placer_scores_put(&s, shape, cls, shape * 1000.0 + cls);
        }
    }
    size_t bytes = placer_scores_bytes(&s);
    placer_scores_prune(&s, odd_dropped_halved, NULL);
    assert_int_equal(s.total, 5 * 150);
    assert_true(placer_scores_bytes(&s) < bytes);
    for (int shape = 0; shape < 5; shape++) {
        for (int cls = 0; cls < 300; cls++) {
            double v;
            bool hit = placer_scores_get(&s, shape, cls, &v);
            assert_int_equal(hit, cls < 150);
            assert_true(!hit || v == shape * 1000.0 + cls * 2);
        }
    }
    placer_scores_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_decisions_as_plain_scan),
        cmocka_unit_test(test_summary_is_necessary),
        cmocka_unit_test(test_summary_and_cache_spare_scoring),
        cmocka_unit_test(test_cache_bounded),
        cmocka_unit_test(test_cache_prune),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
