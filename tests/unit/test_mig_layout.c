/*
 * MIG placement against the instances that exist on a GPU (its layout, as the agent reports it):
 * an idle instance of the profile is reused before a new one is made; a new one goes where it
 * destroys nothing, else where it destroys the least; blocked instances are never touched; the
 * placer prefers a node with a reusable instance; and the layout never changes what assignment
 * and release do.
 */
#include "gpupool/mig.h"
#include "gpupool/model.h"
#include "gpupool/placement.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

#define H100 "NVIDIA H100 80GB HBM3"

/* A cluster with one node per entry of gpus (that many H100s, all in MIG mode). */
static gp_cluster *mig_cluster(int nodes, int gpus)
{
    gp_cluster *c = gp_cluster_new();
    int m = gp_cluster_model(c, H100, 81559);
    for (int n = 0; n < nodes; n++) {
        char name[16];
        snprintf(name, sizeof(name), "n%d", n);
        assert_int_equal(fx_node(c, name, 64000, 262144, gpus, m), n);
        for (int g = 0; g < gpus; g++) {
            assert_int_equal(gp_cluster_enable_mig(c, n, g), 0);
        }
    }
    return c;
}

/* Sets the layout of a GPU from "profile@start" words ("1g.10gb@3 3g.40gb@4!"; ! = blocked). */
static void layout(gp_cluster *c, int node, int gpu, const char *spec)
{
    gp_mig_instance in[GP_MIG_MEMORY_SLICES];
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *w = strtok(buf, " "); w; w = strtok(NULL, " ")) {
        memset(&in[n], 0, sizeof(in[n]));
        char *at = strchr(w, '@');
        assert_non_null(at);
        *at = '\0';
        snprintf(in[n].profile, sizeof(in[n].profile), "%s", w);
        in[n].start = at[1] - '0';
        in[n].blocked = at[2] == '!';
        n++;
    }
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_cluster_set_mig_layout(c, node, gpu, in, n, &d);
    if (rc != 0) {
        fail_msg("layout %s: %s", spec, d.msg);
    }
}

static const char *describe(const gp_cluster *c, const gp_assignment *a)
{
    static char buf[200];
    gp_mig_share_describe(c, a->node, &a->shares[0], buf, sizeof(buf));
    return buf;
}

static gp_policy *policy(void)
{
    gp_policy *p = NULL;
    assert_int_equal(gp_policy_new("bestfit", NULL, &p, NULL), 0);
    return p;
}

/* The issue: GPU 0 holds an idle 3g.40gb, GPU 1 seven idle 1g.10gb. A 1g.10gb goes to GPU 1,
 * into an instance that exists, and nothing is destroyed. */
static void test_reuse_before_reshape(void **state)
{
    (void)state;
    gp_cluster *c = mig_cluster(1, 2);
    layout(c, 0, 0, "3g.40gb@4");
    layout(c, 0, 1, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb@6");
    gp_policy *p = policy();
    gp_request r = fx_mig("1g.10gb");
    gp_assignment a;
    assert_int_equal(gp_policy_choose(p, c, 0, &r, NULL, &a), 0);
    assert_int_equal(a.nshares, 1);
    assert_int_equal(a.shares[0].gpu, 1);
    assert_int_equal(a.shares[0].mig_start, 6);
    assert_int_equal(a.shares[0].mig_reused, 1);
    assert_int_equal(a.shares[0].mig_destroys, 0);
    assert_int_equal(gp_mig_share_cost(c, 0, &a.shares[0]), 0);
    assert_string_equal(describe(c, &a), "MIG 1g.10gb: reused instance GPU 1 slice 6");
    /* Taken: the next one reuses the instance below it, never the same one twice. */
    assert_int_equal(gp_cluster_assign(c, &a), 0);
    gp_assignment b;
    assert_int_equal(gp_policy_choose(p, c, 0, &r, NULL, &b), 0);
    assert_int_equal(b.shares[0].gpu, 1);
    assert_int_equal(b.shares[0].mig_start, 5);
    assert_int_equal(b.shares[0].mig_reused, 1);
    /* A 3g.40gb reuses the idle one on GPU 0. */
    gp_request r3 = fx_mig("3g.40gb");
    assert_int_equal(gp_policy_choose(p, c, 0, &r3, NULL, &b), 0);
    assert_int_equal(b.shares[0].gpu, 0);
    assert_int_equal(b.shares[0].mig_start, 4);
    assert_string_equal(describe(c, &b), "MIG 3g.40gb: reused instance GPU 0 slice 4");
    gp_policy_free(p);
    gp_cluster_free(c);
}

/* Across nodes: the node with a reusable instance wins even when the policy's tie-break prefers
 * the other one, and two nodes that differ only in layout are told apart. */
static void test_placer_prefers_reuse(void **state)
{
    (void)state;
    gp_cluster *c = mig_cluster(2, 1);
    layout(c, 0, 0, "2g.20gb@0! 1g.10gb@2! 1g.10gb@3! 3g.40gb@4");
    layout(c, 1, 0, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb@6");
    gp_policy *p = policy();
    gp_placer *pl = NULL;
    assert_int_equal(gp_placer_new(c, p, &pl), 0);
    uint32_t rank[2] = {0, 1}; /* node 0 first on ties */
    gp_placer_set_tie_rank(pl, rank);
    gp_request r = fx_mig("1g.10gb");
    gp_rng rng;
    gp_rng_seed(&rng, 1);
    gp_assignment a;
    assert_int_equal(gp_placer_place(pl, &r, &rng, &a, NULL), 0);
    assert_int_equal(a.node, 1);
    assert_int_equal(a.shares[0].mig_reused, 1);
    assert_int_equal(gp_mig_node_cost(c, 0, &r), 1 + 8 * 3 + 1); /* it would destroy the 3g */
    assert_int_equal(gp_mig_node_cost(c, 1, &r), 0);
    /* With no instance left on node 1, its free slices still come before destroying on node 0,
     * until they are all taken. */
    layout(c, 1, 0, "");
    for (int k = 0; k < 7; k++) {
        assert_int_equal(gp_placer_place(pl, &r, &rng, &a, NULL), 0);
        assert_int_equal(a.node, 1); /* free space on node 1 before destroying on node 0 */
        assert_int_equal(a.shares[0].mig_destroys, 0);
        assert_int_equal(gp_cluster_assign(c, &a), 0);
    }
    assert_int_equal(gp_placer_place(pl, &r, &rng, &a, NULL), 0);
    assert_int_equal(a.node, 0);
    assert_int_equal(a.shares[0].mig_destroys, 1u << 4);
    gp_placer_free(pl);
    gp_policy_free(p);
    gp_cluster_free(c);
}

/* No instance of the profile is idle: a new one destroys the fewest compute slices, and the
 * decision names what it destroys. */
static void test_reshape_destroys_least(void **state)
{
    (void)state;
    gp_cluster *c = mig_cluster(1, 1);
    /* Every slice taken: 4g.40gb at 0-3, 1g.20gb at 4-5 and 6-7. */
    layout(c, 0, 0, "4g.40gb@0 1g.20gb@4 1g.20gb@6");
    gp_policy *p = policy();
    gp_request r = fx_mig("2g.20gb");
    gp_assignment a;
    assert_int_equal(gp_policy_choose(p, c, 0, &r, NULL, &a), 0);
    assert_int_equal(a.shares[0].mig_start, 4); /* not 0 or 2: that would destroy the 4g */
    assert_int_equal(a.shares[0].mig_reused, 0);
    assert_int_equal(a.shares[0].mig_destroys, 1u << 4);
    assert_int_equal(gp_mig_share_cost(c, 0, &a.shares[0]), 1 + 8 + 1);
    assert_string_equal(describe(c, &a),
                        "MIG 2g.20gb: created 2g.20gb at GPU 0 slice 4, destroyed idle 1g.20gb "
                        "at slice 4");
    /* The GPU 0, its small instances in use outside gpupool: a 1g.10gb can only go where
     * the idle 3g.40gb is, at the highest start. */
    layout(c, 0, 0, "2g.20gb@0! 1g.10gb@2! 1g.10gb@3! 3g.40gb@4");
    gp_request r1 = fx_mig("1g.10gb");
    assert_int_equal(gp_policy_choose(p, c, 0, &r1, NULL, &a), 0);
    assert_string_equal(describe(c, &a), "MIG 1g.10gb: created 1g.10gb at GPU 0 slice 6, "
                                         "destroyed idle 3g.40gb at slice 4");
    /* Once that allocation is made, the 3g.40gb is as good as gone: the next one destroys
     * nothing more. */
    assert_int_equal(gp_cluster_assign(c, &a), 0);
    assert_int_equal(gp_policy_choose(p, c, 0, &r1, NULL, &a), 0);
    assert_int_equal(a.shares[0].mig_start, 5);
    assert_int_equal(a.shares[0].mig_destroys, 0);
    assert_string_equal(describe(c, &a), "MIG 1g.10gb: created 1g.10gb at GPU 0 slice 5");
    gp_policy_free(p);
    gp_cluster_free(c);
}

/* Fewest compute slices destroyed first, then fewest instances, then the highest start. */
static void test_reshape_order(void **state)
{
    (void)state;
    gp_cluster *c = mig_cluster(1, 1);
    gp_policy *p = policy();
    gp_request r = fx_mig("4g.40gb"); /* only at 0: slices 0-3 */
    layout(c, 0, 0, "1g.10gb@0 1g.10gb@1 2g.20gb@2 3g.40gb@4");
    gp_assignment a;
    /* 4g at 0 destroys 1g, 1g and 2g (4 compute slices) and leaves the 3g: 4 + 3 = 7. */
    assert_int_equal(gp_policy_choose(p, c, 0, &r, NULL, &a), 0);
    assert_int_equal(a.shares[0].mig_destroys, (1u << 0) | (1u << 1) | (1u << 2));
    assert_string_equal(describe(c, &a),
                        "MIG 4g.40gb: created 4g.40gb at GPU 0 slice 0, destroyed idle 1g.10gb "
                        "at slice 0, 1g.10gb at slice 1, 2g.20gb at slice 2");
    /* 3g.40gb may go to 0 (destroying 1g, 1g, 2g: 4 slices) or reuse the one at 4. */
    gp_request r3 = fx_mig("3g.40gb");
    assert_int_equal(gp_policy_choose(p, c, 0, &r3, NULL, &a), 0);
    assert_int_equal(a.shares[0].mig_start, 4);
    assert_int_equal(a.shares[0].mig_reused, 1);
    /* 2g.20gb: at 4 it would destroy the 3g (3 compute slices), at 0 or 2 two 1g (2 slices). */
    layout(c, 0, 0, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 3g.40gb@4");
    gp_request r2 = fx_mig("2g.20gb");
    assert_int_equal(gp_policy_choose(p, c, 0, &r2, NULL, &a), 0);
    assert_int_equal(a.shares[0].mig_start, 2); /* two 1g at 2-3 and 0-1 tie: the higher start */
    assert_int_equal(a.shares[0].mig_destroys, (1u << 2) | (1u << 3));
    gp_policy_free(p);
    gp_cluster_free(c);
}

/* Blocked instances (used outside gpupool) are neither reused nor destroyed. */
static void test_blocked_untouched(void **state)
{
    (void)state;
    gp_cluster *c = mig_cluster(1, 1);
    layout(c, 0, 0, "1g.10gb@0! 1g.10gb@1! 1g.10gb@2! 1g.10gb@3! 1g.10gb@4! 1g.10gb@5! 1g.10gb@6!");
    gp_request r = fx_mig("1g.10gb");
    assert_false(gp_node_fits(c, 0, &r));
    assert_int_equal(gp_mig_node_cost(c, 0, &r), -1);
    /* One of them idle: that one is reused; a 2g.20gb could only destroy blocked ones. */
    layout(c, 0, 0, "1g.10gb@0! 1g.10gb@1! 1g.10gb@2 1g.10gb@3! 1g.10gb@4! 1g.10gb@5! 1g.10gb@6!");
    gp_policy *p = policy();
    gp_assignment a;
    assert_int_equal(gp_policy_choose(p, c, 0, &r, NULL, &a), 0);
    assert_int_equal(a.shares[0].mig_start, 2);
    assert_int_equal(a.shares[0].mig_reused, 1);
    gp_request r2 = fx_mig("2g.20gb");
    assert_false(gp_node_fits(c, 0, &r2));
    /* The compute slices of the instances that stay count: beside six 1g.10gb a 1g.20gb fits at
     * 6, where nothing is in the way. */
    layout(c, 0, 0, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5");
    gp_request r1 = fx_mig("1g.20gb"); /* starts 0, 2, 4, 6: at 6 nothing is in the way */
    assert_int_equal(gp_policy_choose(p, c, 0, &r1, NULL, &a), 0);
    assert_int_equal(a.shares[0].mig_start, 6);
    assert_int_equal(a.shares[0].mig_destroys, 0);
    gp_policy_free(p);
    gp_cluster_free(c);
}

/* Layouts are checked, and never change what assignment and release do. */
static void test_layout_rules(void **state)
{
    (void)state;
    gp_cluster *c = mig_cluster(1, 1);
    int full = gp_cluster_model(c, "Tesla T4", 15360);
    assert_int_equal(fx_node(c, "t4", 8000, 8192, 1, full), 1);
    gp_diag d;
    gp_mig_instance bad[2] = {{"3g.40gb", 2, false}, {"1g.10gb", 0, false}};
    assert_int_equal(gp_cluster_set_mig_layout(c, 0, 0, bad, 1, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "cannot start at memory slice 2 (legal: 0, 4)"));
    gp_mig_instance overlap[2] = {{"3g.40gb", 0, false}, {"1g.10gb", 3, false}};
    assert_int_equal(gp_cluster_set_mig_layout(c, 0, 0, overlap, 2, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "[1]"));
    gp_mig_instance unknown[1] = {{"1g.5gb", 0, false}};
    assert_int_equal(gp_cluster_set_mig_layout(c, 0, 0, unknown, 1, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "no MIG profile \"1g.5gb\""));
    gp_mig_instance ok[1] = {{"1g.10gb", 0, false}};
    assert_int_equal(gp_cluster_set_mig_layout(c, 1, 0, ok, 1, &d), GP_ESTATE); /* not MIG */
    assert_int_equal(gp_cluster_set_mig_layout(c, 0, 1, ok, 1, &d), GP_EINVAL);
    for (int s = 0; s < GP_MIG_MEMORY_SLICES; s++) {
        assert_int_equal(gp_cluster_gpu(c, 0, 0)->mig_layout[s], 0); /* refusals changed nothing */
    }
    /* An unchanged layout is no change of the node. */
    assert_int_equal(gp_cluster_set_mig_layout(c, 0, 0, ok, 1, &d), 0);
    uint32_t v = gp_cluster_node(c, 0)->version;
    assert_int_equal(gp_cluster_set_mig_layout(c, 0, 0, ok, 1, &d), 0);
    assert_int_equal(gp_cluster_node(c, 0)->version, v);
    /* Assignment and release ignore the layout and restore the state bit for bit. */
    layout(c, 0, 0, "3g.40gb@4");
    gp_gpu before = *gp_cluster_gpu(c, 0, 0);
    gp_policy *p = policy();
    gp_request r = fx_mig("1g.10gb");
    gp_assignment a;
    assert_int_equal(gp_policy_choose(p, c, 0, &r, NULL, &a), 0);
    assert_int_equal(gp_cluster_assign(c, &a), 0);
    assert_memory_equal(gp_cluster_gpu(c, 0, 0)->mig_layout, before.mig_layout, 8);
    assert_int_equal(gp_cluster_check(c, &d), 0);
    assert_int_equal(gp_cluster_release(c, &a), 0);
    assert_memory_equal(gp_cluster_gpu(c, 0, 0), &before, sizeof(before));
    /* A copy carries the layout. */
    gp_cluster *copy = gp_cluster_clone(c);
    assert_memory_equal(gp_cluster_gpu(copy, 0, 0)->mig_layout, before.mig_layout, 8);
    gp_cluster_free(copy);
    gp_policy_free(p);
    gp_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_before_reshape),   cmocka_unit_test(test_placer_prefers_reuse),
        cmocka_unit_test(test_reshape_destroys_least), cmocka_unit_test(test_reshape_order),
        cmocka_unit_test(test_blocked_untouched),      cmocka_unit_test(test_layout_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
