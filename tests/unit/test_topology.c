/* Multi-GPU choice by topology on synthetic DGX-like and PCIe nodes. */
#include "gpupool/placement.h"
#include "gpupool/topology.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

/* 8 GPUs: NVLink full mesh inside {0,1,2,3} and inside {4,5,6,7} (two NVLink islands, as on
 * DGX-1-like boards with a partial cube mesh), NUMA 0 for GPUs 0-3, NUMA 1 for 4-7. */
static int islands_node(gp_cluster *c, int model)
{
    gp_gpu_spec s[8];
    for (int i = 0; i < 8; i++) {
        uint32_t island = i < 4 ? 0x0fu : 0xf0u;
        s[i] = (gp_gpu_spec){
            .model = model, .numa = i < 4 ? 0 : 1, .nvlink = island & ~(1u << i), .mem_mib = 0};
    }
    return gp_cluster_add_node(c, "dgx", 128000, 1 << 20, 8, s);
}

/* 8 PCIe GPUs without NVLink, NUMA 0 for even GPUs and 1 for odd ones (interleaved slots). */
static int pcie_node(gp_cluster *c, int model)
{
    gp_gpu_spec s[8];
    for (int i = 0; i < 8; i++) {
        s[i] = (gp_gpu_spec){.model = model, .numa = i % 2, .nvlink = 0, .mem_mib = 0};
    }
    return gp_cluster_add_node(c, "pcie", 128000, 1 << 20, 8, s);
}

static void test_nvlink_island(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    int m = gp_cluster_model(c, "H100", 81920);
    int n = islands_node(c, m);
    uint32_t chosen;
    /* GPUs 1 and 2 are taken: the only full island of 4 left is {4,5,6,7}. */
    assert_int_equal(gp_topology_pick(c, n, 0xf9u, 4, &chosen), 0);
    assert_int_equal(chosen, 0xf0u);
    /* Two GPUs from {0, 3, 4}: 0 and 3 share NVLink. */
    assert_int_equal(gp_topology_pick(c, n, 0x19u, 2, &chosen), 0);
    assert_int_equal(chosen, 0x09u);
    gp_topo_score s = gp_topology_score(c, n, 0xf0u);
    assert_int_equal(s.nvlink_pairs, 6);
    assert_int_equal(s.numa_pairs, 6);
    assert_int_equal(gp_topology_pick(c, n, 0x3u, 3, &chosen), GP_ENOSPC);
    assert_int_equal(gp_topology_pick(c, n, 0x3u, 0, &chosen), GP_EINVAL);
    gp_cluster_free(c);
}

static void test_pcie_numa(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    int m = gp_cluster_model(c, "L40S", 49152);
    int n = pcie_node(c, m);
    uint32_t chosen;
    /* From {0,1,2,3}: no NVLink; the pair on one NUMA node with the lowest indexes is {0,2}. */
    assert_int_equal(gp_topology_pick(c, n, 0x0fu, 2, &chosen), 0);
    assert_int_equal(chosen, 0x05u);
    /* Four from all eight: the even (NUMA 0) GPUs. */
    assert_int_equal(gp_topology_pick(c, n, 0xffu, 4, &chosen), 0);
    assert_int_equal(chosen, 0x55u);
    gp_cluster_free(c);
}

/* Through the placer: a 4-GPU request on the DGX-like node gets an NVLink island. */
static void test_placement_uses_topology(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    int m = gp_cluster_model(c, "H100", 81920);
    int n = islands_node(c, m);
    gp_assignment taken;
    memset(&taken, 0, sizeof(taken));
    taken.node = n;
    taken.nshares = 1;
    taken.shares[0] = (gp_gpu_share){.gpu = 1, .milli = 1000, .mig_start = -1};
    assert_int_equal(gp_cluster_assign(c, &taken), 0);
    gp_policy *p;
    gp_placer *pl;
    gp_policy_new("bestfit", NULL, &p, NULL);
    gp_placer_new(c, p, &pl);
    gp_rng rng;
    gp_rng_seed(&rng, 5);
    gp_request r = fx_whole(0, 4);
    gp_assignment a;
    assert_int_equal(gp_placer_place(pl, &r, &rng, &a, NULL), 0);
    uint32_t set = 0;
    for (int i = 0; i < a.nshares; i++) {
        set |= 1u << a.shares[i].gpu;
    }
    assert_int_equal(set, 0xf0u);
    gp_placer_free(pl);
    gp_policy_free(p);
    gp_cluster_free(c);
}

/* More than 16 candidates: the greedy path still finds a full NVLink group. */
static void test_greedy_large(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    int m = gp_cluster_model(c, "X", 0);
    gp_gpu_spec s[20];
    for (int i = 0; i < 20; i++) {
        uint32_t group = (i >= 12 && i < 16) ? 0xf000u : 0;
        s[i] = (gp_gpu_spec){.model = m, .numa = 0, .nvlink = group & ~(1u << i)};
    }
    int n = gp_cluster_add_node(c, "wide", 1, 1, 20, s);
    uint32_t chosen;
    assert_int_equal(gp_topology_pick(c, n, 0xfffffu, 4, &chosen), 0);
    assert_int_equal(chosen, 0xf000u);
    gp_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvlink_island),
        cmocka_unit_test(test_pcie_numa),
        cmocka_unit_test(test_placement_uses_topology),
        cmocka_unit_test(test_greedy_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
