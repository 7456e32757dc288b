/* Placement policies: scores on hand-made cases, FGD fragmentation, the target workload, and the
 * placer's choice against brute force over every node. */
#include "core/frag.h"
#include "gpupool/placement.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* An 8-GPU node (128 cores) and a 4-GPU node (64 cores), so the largest node is 128 cores and
 * 8 GPUs, as in the Alibaba cluster. */
static gp_cluster *two_nodes(void)
{
    gp_cluster *c = gp_cluster_new();
    int g = gp_cluster_model(c, "G2", 0);
    fx_node(c, "big", 128000, 1 << 20, 8, g);
    fx_node(c, "small", 64000, 1 << 19, 4, g);
    return c;
}

static void take(gp_cluster *c, int node, int64_t cpu, int ngpu, const int *gpus, const int *milli)
{
    gp_assignment a;
    memset(&a, 0, sizeof(a));
    a.node = node;
    a.cpu_milli = cpu;
    a.nshares = ngpu;
    for (int i = 0; i < ngpu; i++) {
        a.shares[i] = (gp_gpu_share){.gpu = (uint8_t)gpus[i], .milli = milli[i], .mig_start = -1};
    }
    assert_int_equal(gp_cluster_assign(c, &a), 0);
}

static double score(const char *policy, const gp_cluster *c, int node, const gp_request *r,
                    const gp_workload *w)
{
    gp_policy *p;
    assert_int_equal(gp_policy_new(policy, w, &p, NULL), 0);
    double s = gp_policy_score(p, c, node, r);
    gp_policy_free(p);
    return s;
}

static void test_dotproduct_bestfit(void **state)
{
    (void)state;
    gp_cluster *c = two_nodes();
    /* small: 32 of 64 cores used, 0 GPUs used: n = (0.25, 0.5); request (0.25, 0.125). */
    int g0 = 0, m = 1000;
    take(c, 1, 32000, 0, &g0, &m);
    gp_request r = fx_whole(32000, 1);
    /* dot = 0.0625 + 0.0625 = 0.125; 100 * (1 - 0.125 / 2) = 93.75 -> 93 */
    assert_int_equal((int)score("dotproduct", c, 1, &r, NULL), 93);
    /* left after: CPU 0/128 cores, GPU 3/8: 1 - (0 + 0.1875) = 0.8125 -> 81 */
    assert_int_equal((int)score("bestfit", c, 1, &r, NULL), 81);
    gp_cluster_free(c);
}

static void test_packing(void **state)
{
    (void)state;
    gp_cluster *c = two_nodes();
    gp_request share = fx_frac(1000, 300);
    /* Empty 8-GPU node: max(33 - 8, 8) = 25; empty 4-GPU node: max(29, 4) = 29. */
    assert_int_equal((int)score("packing", c, 0, &share, NULL), 25);
    assert_int_equal((int)score("packing", c, 1, &share, NULL), 29);
    /* GPU 0 of big at 600 left: the share takes it (no free GPU among those taken):
     * S = 600 * 100 / 1000 = 60 -> 100 - 6 = 94. */
    int g = 0, m = 400;
    take(c, 0, 0, 1, &g, &m);
    assert_int_equal((int)score("packing", c, 0, &share, NULL), 94);
    /* A whole GPU on a partly used node takes one untouched GPU: max(50 - 1, 33) = 49. */
    gp_request whole = fx_whole(0, 1);
    assert_int_equal((int)score("packing", c, 0, &whole, NULL), 49);
    /* CPU-only work scores 0 everywhere. */
    gp_request cpu = fx_none(1000, 0);
    assert_int_equal((int)score("packing", c, 0, &cpu, NULL), 0);
    gp_cluster_free(c);
}

static void test_clustering(void **state)
{
    (void)state;
    gp_cluster *c = two_nodes();
    gp_request share = fx_frac(0, 500), one = fx_whole(0, 1);
    /* Empty: base 25 * 8000 / 8000 used... base = 25 * used / 8000 = 0; no tags: +25. */
    assert_int_equal((int)score("clustering", c, 0, &share, NULL), 25);
    int g = 0, m = 500;
    take(c, 0, 0, 1, &g, &m); /* a share on big: used 500 -> base 25 * 500 / 8000 = 1 */
    assert_int_equal((int)score("clustering", c, 0, &share, NULL), 1 + 75);
    assert_int_equal((int)score("clustering", c, 0, &one, NULL), 1);
    g = 1;
    m = 1000;
    take(c, 0, 0, 1, &g, &m); /* and a whole GPU: both tags; used 1500 -> base 4 */
    assert_int_equal((int)score("clustering", c, 0, &share, NULL), 4 + 50);
    assert_int_equal((int)score("clustering", c, 0, &one, NULL), 4 + 50);
    gp_cluster_free(c);
}

static gp_workload_item items[3];

static gp_workload target3(void)
{
    items[0] = (gp_workload_item){fx_frac(1000, 500), 0.5};
    items[1] = (gp_workload_item){fx_none(100, 0), 0.25};
    items[2] = (gp_workload_item){fx_whole(2000, 2), 0.25};
    return (gp_workload){items, 3};
}

static void test_fragmentation(void **state)
{
    (void)state;
    gp_workload w = target3();
    gp_frag_target t;
    assert_int_equal(gp_frag_target_init(&t, &w), 0);
    gp_frag_node n = {.cpu_free = 10000, .ngpus = 2, .left = {1000, 400}, .model = {0, 0}};
    /* share 500: fits, the 400 GPU is a fragment: 0.5 * 400; CPU-only: all 1400 idle;
     * 2 whole GPUs: only one free, all idle: 0.25 * 1400. */
    assert_true(fabs(gp_frag_amount(&t, &n) - (200.0 + 350.0 + 350.0)) < 1e-9);
    /* Without CPU for the share type, all idle compute is its fragment too. */
    n.cpu_free = 500;
    assert_true(fabs(gp_frag_amount(&t, &n) - (700.0 + 350.0 + 350.0)) < 1e-9);
    gp_frag_target_fini(&t);
}

/* The CPU-aware measure of `ours`: CPU for one share pod (1000 of 1500 left) means one GPU can
 * host the type; the other hosting GPUs are its fragment. Whole-GPU types are unchanged. */
static void test_fragmentation_cpu_aware(void **state)
{
    (void)state;
    gp_workload_item one[2] = {{fx_frac(1000, 500), 0.5}, {fx_whole(1000, 1), 0.5}};
    gp_workload w = {one, 2};
    gp_frag_target t;
    assert_int_equal(gp_frag_target_init(&t, &w), 0);
    gp_frag_node n = {.cpu_free = 1500, .ngpus = 3, .left = {600, 1000, 900}, .model = {0}};
    /* FGD: every GPU hosts the share type; whole GPU: 600 and 900 are fragments. */
    assert_true(fabs(gp_frag_amount(&t, &n) - (0.0 + 0.5 * 1500)) < 1e-9);
    t.cpu_aware = true;
    /* Ours: CPU for one share pod, so only the GPU with 1000 left counts for it: 1500 stranded. */
    assert_true(fabs(gp_frag_amount(&t, &n) - (0.5 * 1500 + 0.5 * 1500)) < 1e-9);
    n.cpu_free = 3000; /* three pods' CPU: all hosts usable again */
    assert_true(fabs(gp_frag_amount(&t, &n) - (0.0 + 0.5 * 1500)) < 1e-9);
    gp_frag_target_fini(&t);
}

static void test_fgd(void **state)
{
    (void)state;
    gp_workload w = target3();
    gp_cluster *c = two_nodes();
    int g = 0, m = 500;
    take(c, 0, 0, 1, &g, &m); /* big: GPU 0 at 500 left */
    gp_request share = fx_frac(1000, 500);
    /* On big, taking GPU 0 (500 left, fully used after) lowers fragmentation; taking a free
     * GPU leaves 500 on it. The score is int(100 sigmoid(dF / 1000)). */
    gp_frag_target t;
    gp_frag_target_init(&t, &w);
    gp_frag_node before, after;
    gp_frag_node_of(c, 0, &before);
    after = before;
    after.cpu_free -= 1000;
    after.left[0] = 0;
    double f0 = gp_frag_amount(&t, &before), f1 = gp_frag_amount(&t, &after);
    int want = (int)(100.0 / (1.0 + exp(-(f0 - f1) / 1000.0)));
    assert_int_equal((int)score("fgd", c, 0, &share, &w), want);
    gp_policy *p;
    gp_policy_new("fgd", &w, &p, NULL);
    gp_assignment a;
    gp_rng rng;
    gp_rng_seed(&rng, 3);
    assert_int_equal(gp_policy_choose(p, c, 0, &share, &rng, &a), 0);
    assert_int_equal(a.shares[0].gpu, 0);
    gp_policy_free(p);
    gp_frag_target_fini(&t);
    /* FGD needs a target workload. */
    assert_int_equal(gp_policy_new("fgd", NULL, &p, NULL), GP_EINVAL);
    assert_int_equal(gp_policy_new("nope", NULL, &p, NULL), GP_ENOENT);
    gp_cluster_free(c);
}

static void test_typical_workload(void **state)
{
    (void)state;
    gp_request reqs[20];
    for (int i = 0; i < 12; i++) {
        reqs[i] = fx_frac(1000, 500);
        reqs[i].memory_mib = i; /* memory is not part of the shape */
    }
    for (int i = 12; i < 18; i++) {
        reqs[i] = fx_whole(8000, 1);
    }
    reqs[18] = fx_none(100, 0);
    reqs[19] = fx_whole(64000, 8);
    gp_workload_item *out;
    int n;
    /* 95% of 20 = 19: 12 + 6 = 18 < 19, so the third shape (a tie of 1 and 1: larger CPU
     * first) is taken too. */
    assert_int_equal(gp_workload_typical(reqs, 20, 0.95, &out, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(out[0].shape.gpu_milli, 500);
    assert_true(fabs(out[0].weight - 12.0 / 19.0) < 1e-12);
    assert_int_equal(out[1].shape.gpu_count, 1);
    assert_int_equal(out[2].shape.gpu_count, 8);
    free(out);
    assert_int_equal(gp_workload_typical(reqs, 20, 1.0, &out, &n), 0);
    assert_int_equal(n, 4);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += out[i].weight;
    }
    assert_true(fabs(sum - 1.0) < 1e-12);
    free(out);
    assert_int_equal(gp_workload_typical(reqs, 20, 0.0, &out, &n), GP_EINVAL);
}

/* A cluster of 24 nodes in assorted states. */
static gp_cluster *assorted(gp_rng *rng)
{
    gp_cluster *c = gp_cluster_new();
    int a = gp_cluster_model(c, "A", 0), b = gp_cluster_model(c, "B", 0);
    for (int i = 0; i < 24; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%02d", i);
        int ngpu = i % 3 == 0 ? 2 : 8;
        fx_node(c, name, ngpu * 12000, 1 << 18, ngpu, i % 4 == 0 ? b : a);
        for (int k = 0; k < (int)gp_rng_below(rng, 6); k++) {
            int g = (int)gp_rng_below(rng, (uint64_t)ngpu);
            int m = (int)(gp_rng_below(rng, 4) + 1) * 250;
            if (gp_cluster_gpu(c, i, g)->milli_free >= m) {
                take(c, i, (int64_t)gp_rng_below(rng, 8000), 1, &g, &m);
            }
        }
    }
    return c;
}

/* The placer picks a node of the highest score among all feasible nodes, for every policy. */
static void test_placer_brute_force(void **state)
{
    (void)state;
    int np;
    const char *const *names = gp_policy_names(&np);
    gp_workload w = target3();
    for (uint64_t seed = 1; seed <= 5; seed++) {
        gp_rng rng;
        gp_rng_seed(&rng, seed);
        gp_cluster *c = assorted(&rng);
        uint32_t rank[24];
        for (int i = 0; i < 24; i++) {
            rank[i] = (uint32_t)((i * 7) % 24);
        }
        for (int pi = 0; pi < np; pi++) {
            gp_policy *p;
            gp_placer *pl;
            assert_int_equal(gp_policy_new(names[pi], &w, &p, NULL), 0);
            assert_int_equal(gp_placer_new(c, p, &pl), 0);
            gp_request reqs[5] = {fx_frac(2000, 250), fx_frac(2000, 750), fx_whole(4000, 2),
                                  fx_none(3000, 1000), fx_whole(1000, 8)};
            for (int ranked = 0; ranked < 2; ranked++) {
                gp_placer_set_tie_rank(pl, ranked ? rank : NULL);
                for (int k = 0; k < 5; k++) {
                    double best = -HUGE_VAL;
                    int best_node = -1;
                    for (int n = 0; n < 24; n++) {
                        if (!gp_node_fits(c, n, &reqs[k])) {
                            continue;
                        }
                        double s = gp_policy_score(p, c, n, &reqs[k]);
                        if (s > best || (s == best && rank[n] < rank[best_node])) {
                            best = s;
                            best_node = n;
                        }
                    }
                    gp_assignment a;
                    int rc = gp_placer_place(pl, &reqs[k], &rng, &a, NULL);
                    if (best_node < 0) {
                        assert_int_equal(rc, GP_ENOSPC);
                        continue;
                    }
                    assert_int_equal(rc, 0);
                    assert_true(gp_node_fits(c, a.node, &reqs[k]));
                    if (strcmp(names[pi], "random") != 0) {
                        assert_true(gp_policy_score(p, c, a.node, &reqs[k]) == best);
                        if (ranked) {
                            assert_int_equal(a.node, best_node);
                        }
                    }
                    assert_int_equal(gp_cluster_assign(c, &a), 0);
                }
            }
            gp_placer_free(pl);
            gp_policy_free(p);
        }
        assert_int_equal(gp_cluster_check(c, NULL), 0);
        gp_cluster_free(c);
    }
}

/* Random tie-breaks are uniform over the tying nodes, whatever their classes. */
static void test_placer_uniform_ties(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    int g = gp_cluster_model(c, "A", 0);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%d", i);
        fx_node(c, name, 8000, 8192, 1, g);
    }
    gp_policy *p;
    gp_placer *pl;
    gp_policy_new("random", NULL, &p, NULL);
    gp_placer_new(c, p, &pl);
    int hits[4] = {0};
    gp_rng rng;
    gp_rng_seed(&rng, 99);
    gp_request r = fx_frac(0, 100);
    for (int i = 0; i < 4000; i++) {
        gp_assignment a;
        assert_int_equal(gp_placer_place(pl, &r, &rng, &a, NULL), 0);
        hits[a.node]++;
    }
    for (int i = 0; i < 4; i++) {
        assert_in_range(hits[i], 850, 1150);
    }
    gp_placer_free(pl);
    gp_policy_free(p);
    gp_cluster_free(c);
}

static void test_names(void **state)
{
    (void)state;
    int n;
    const char *const *names = gp_policy_names(&n);
    const char *want[] = {"random",  "dotproduct", "clustering", "packing",
                          "bestfit", "fgd",        "ours"};
    assert_int_equal(n, 7);
    for (int i = 0; i < 7; i++) {
        assert_string_equal(names[i], want[i]);
    }
    for (int i = 0; i < n; i++) {
        assert_non_null(gp_policy_summary(names[i]));
        gp_workload w = target3();
        gp_policy *p;
        assert_int_equal(gp_policy_new(names[i], &w, &p, NULL), 0);
        assert_string_equal(gp_policy_name(p), names[i]);
        gp_policy_free(p);
    }
}

/* One T4 GPU among four: a type pinned to T4 has a quarter of the cluster as hosts. */
static gp_cluster *scarce_t4(int *t4_model)
{
    gp_cluster *c = gp_cluster_new();
    int t4 = gp_cluster_model(c, "T4", 0), g2 = gp_cluster_model(c, "G2", 0);
    fx_node(c, "t4", 64000, 1 << 18, 1, t4);
    fx_node(c, "g2a", 64000, 1 << 18, 1, g2);
    fx_node(c, "g2b", 64000, 1 << 18, 1, g2);
    fx_node(c, "g2c", 64000, 1 << 18, 1, g2);
    int g = 0, some = 100, all = 1000;
    take(c, 1, 0, 1, &g, &some); /* g2a: 900 left */
    take(c, 2, 0, 1, &g, &all);  /* g2b, g2c: full */
    take(c, 3, 0, 1, &g, &all);
    *t4_model = t4;
    return c;
}

static void test_ours_fitted_protects_scarce_hosts(void **state)
{
    (void)state;
    int t4;
    gp_cluster *c = scarce_t4(&t4);
    /* Target: 20% whole GPUs pinned to T4, 80% half GPUs anywhere. */
    gp_workload_item shapes[2] = {{fx_whole(0, 1), 0.2}, {fx_frac(0, 500), 0.8}};
    shapes[0].shape.allowed_models = 1ull << t4;
    gp_workload w = {shapes, 2};
    gp_request half = fx_frac(0, 500);
    gp_policy *ours, *fgd;
    assert_int_equal(gp_policy_new("ours", &w, &ours, NULL), 0);
    assert_int_equal(gp_policy_new("fgd", &w, &fgd, NULL), 0);
    /* Unfitted (FGD's weights): on t4 the pinned type loses its only host, +0.2 * 500 = 100
     * -> 47; on g2a the half type loses 400 and the pinned type's fragment falls by 500:
     * +0.8 * 400 - 0.2 * 500 = 220 -> 44. The unpinned half takes the only T4. */
    assert_int_equal((int)gp_policy_score(ours, c, 0, &half), 47);
    assert_int_equal((int)gp_policy_score(ours, c, 1, &half), 44);
    /* Fitted: the pinned type's hosts are 1 GPU of 4, its weight 0.8: +400 -> 40 on t4,
     * +320 - 400 = -80 -> 51 on g2a. The half goes to g2a; fitting twice changes nothing. */
    gp_policy_fit(ours, c);
    gp_policy_fit(ours, c);
    assert_int_equal((int)gp_policy_score(ours, c, 0, &half), 40);
    assert_int_equal((int)gp_policy_score(ours, c, 1, &half), 51);
    gp_placer *pl;
    assert_int_equal(gp_placer_new(c, ours, &pl), 0);
    gp_rng rng;
    gp_rng_seed(&rng, 1);
    gp_assignment a;
    assert_int_equal(gp_placer_place(pl, &half, &rng, &a, NULL), 0);
    assert_int_equal(a.node, 1);
    gp_placer_free(pl);
    /* fgd keeps the published weights. */
    gp_policy_fit(fgd, c);
    assert_int_equal((int)gp_policy_score(fgd, c, 0, &half), 47);
    gp_policy_free(ours);
    gp_policy_free(fgd);
    gp_cluster_free(c);
}

static void test_frag_fit_weights(void **state)
{
    (void)state;
    int t4;
    gp_cluster *c = scarce_t4(&t4);
    /* Pinned to T4: 1 GPU of 4; 2 GPUs: no host; 128 cores: no host; anything else: all. */
    gp_workload_item shapes[4] = {{fx_frac(0, 300), 0.4},
                                  {fx_whole(0, 2), 0.1},
                                  {fx_frac(128000, 300), 0.1},
                                  {fx_frac(1000, 300), 0.4}};
    shapes[0].shape.allowed_models = 1ull << t4;
    gp_workload w = {shapes, 4};
    gp_frag_target t;
    assert_int_equal(gp_frag_target_init(&t, &w), 0);
    gp_frag_target_fit(&t, c);
    assert_true(fabs(t.types[0].weight - 1.6) < 1e-9);
    assert_true(t.types[1].weight == 0.0 && t.types[2].weight == 0.0);
    assert_true(fabs(t.types[3].weight - 0.4) < 1e-9);
    /* On the T4 node, idle: the 2-GPU and 128-core types add nothing; 600 left of 1000 after
     * a 400 share: every type still fits, fragmentation 0. */
    gp_frag_node n;
    gp_frag_node_of(c, 0, &n);
    assert_true(gp_frag_amount(&t, &n) == 0.0);
    /* On g2a (900 left) the T4 type counts all 900 idle as its fragment, at weight 1.6. */
    gp_frag_node_of(c, 1, &n);
    assert_true(fabs(gp_frag_amount(&t, &n) - 1.6 * 900) < 1e-9);
    gp_frag_target_fini(&t);
    gp_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dotproduct_bestfit),
        cmocka_unit_test(test_packing),
        cmocka_unit_test(test_clustering),
        cmocka_unit_test(test_fragmentation),
        cmocka_unit_test(test_fragmentation_cpu_aware),
        cmocka_unit_test(test_fgd),
        cmocka_unit_test(test_typical_workload),
        cmocka_unit_test(test_placer_brute_force),
        cmocka_unit_test(test_placer_uniform_ties),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_ours_fitted_protects_scarce_hosts),
        cmocka_unit_test(test_frag_fit_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
