/* The cluster model: construction, feasibility, assignment and release, MIG on demand. */
#include "gpupool/model.h"
#include "gpupool/placement.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

#include <stdlib.h>

static gp_cluster *small(void)
{
    gp_cluster *c = gp_cluster_new();
    int t4 = gp_cluster_model(c, "T4", 16384);
    assert_int_equal(fx_node(c, "n0", 8000, 32768, 2, t4), 0);
    assert_int_equal(fx_node(c, "n1", 16000, 65536, 4, t4), 1);
    return c;
}

static void test_build(void **state)
{
    (void)state;
    gp_cluster *c = small();
    assert_int_equal(gp_cluster_node_count(c), 2);
    assert_int_equal(gp_cluster_gpu_count(c), 6);
    assert_int_equal(gp_cluster_gpu_milli_capacity(c), 6000);
    assert_int_equal(gp_cluster_gpu_milli_allocated(c), 0);
    assert_int_equal(gp_cluster_find_node(c, "n1"), 1);
    assert_int_equal(gp_cluster_find_node(c, "nx"), GP_ENOENT);
    assert_int_equal(gp_cluster_gpu(c, 1, 3)->mem_mib, 16384);
    assert_null(gp_cluster_gpu(c, 1, 4));
    /* Bad nodes are refused whole. */
    gp_gpu_spec bad = {.model = 7, .numa = -1};
    assert_int_equal(gp_cluster_add_node(c, "n2", 1, 1, 1, &bad), GP_EINVAL);
    gp_gpu_spec loop = {.model = 0, .numa = -1, .nvlink = 1};
    assert_int_equal(gp_cluster_add_node(c, "n2", 1, 1, 1, &loop), GP_EINVAL);
    assert_int_equal(gp_cluster_add_node(c, "n2", -1, 1, 0, NULL), GP_EINVAL);
    assert_int_equal(gp_cluster_node_count(c), 2);
    assert_int_equal(gp_cluster_check(c, NULL), 0);
    gp_cluster_free(c);
}

static void test_fits(void **state)
{
    (void)state;
    gp_cluster *c = small();
    gp_request r = fx_whole(1000, 3);
    assert_false(gp_node_fits(c, 0, &r));
    assert_true(gp_node_fits(c, 1, &r));
    r = fx_frac(9000, 500);
    assert_false(gp_node_fits(c, 0, &r)); /* CPU */
    assert_true(gp_node_fits(c, 1, &r));
    r = fx_frac(0, 500);
    r.gpu_mem_mib = 20000;
    assert_false(gp_node_fits(c, 1, &r)); /* GPU memory */
    r.allowed_models = 1ull << 5;
    r.gpu_mem_mib = 0;
    assert_false(gp_node_fits(c, 1, &r)); /* model */
    r.allowed_models = 1ull;
    assert_true(gp_node_fits(c, 1, &r));
    gp_cluster_set_schedulable(c, 1, false);
    assert_false(gp_node_fits(c, 1, &r));
    gp_cluster_free(c);
}

static gp_assignment frac_on(int node, int gpu, int milli, int64_t mem)
{
    gp_assignment a;
    memset(&a, 0, sizeof(a));
    a.node = node;
    a.cpu_milli = 1000;
    a.memory_mib = 1024;
    a.nshares = 1;
    a.shares[0] =
        (gp_gpu_share){.gpu = (uint8_t)gpu, .milli = milli, .mem_mib = mem, .mig_start = -1};
    return a;
}

static void test_assign_release_inverse(void **state)
{
    (void)state;
    gp_cluster *c = small();
    gp_cluster *before = gp_cluster_clone(c);
    gp_assignment a = frac_on(1, 2, 300, 4096);
    assert_int_equal(gp_cluster_assign(c, &a), 0);
    assert_int_equal(gp_cluster_gpu(c, 1, 2)->milli_free, 700);
    assert_int_equal(gp_cluster_gpu(c, 1, 2)->mem_free_mib, 16384 - 4096);
    assert_int_equal(gp_cluster_node(c, 1)->cpu_free, 15000);
    assert_int_equal(gp_cluster_gpu_milli_allocated(c), 300);
    assert_int_equal(gp_cluster_node(c, 1)->tags[GP_TAG_SHARE], 1);
    assert_int_equal(gp_cluster_release(c, &a), 0);
    for (int g = 0; g < 4; g++) {
        assert_memory_equal(gp_cluster_gpu(c, 1, g), gp_cluster_gpu(before, 1, g), sizeof(gp_gpu));
    }
    assert_int_equal(gp_cluster_node(c, 1)->cpu_free, 16000);
    assert_int_equal(gp_cluster_node(c, 1)->tag_mask, 0);
    assert_int_equal(gp_cluster_gpu_milli_allocated(c), 0);
    /* Releasing what is not held is refused and changes nothing. */
    assert_int_equal(gp_cluster_release(c, &a), GP_EINVAL);
    assert_int_equal(gp_cluster_check(c, NULL), 0);
    gp_cluster_free(before);
    gp_cluster_free(c);
}

static void test_assign_refusals(void **state)
{
    (void)state;
    gp_cluster *c = small();
    gp_assignment a = frac_on(0, 0, 800, 0);
    assert_int_equal(gp_cluster_assign(c, &a), 0);
    gp_assignment b = frac_on(0, 0, 300, 0);
    assert_int_equal(gp_cluster_assign(c, &b), GP_ENOSPC); /* 800 + 300 > 1000 */
    b = frac_on(0, 5, 100, 0);
    assert_int_equal(gp_cluster_assign(c, &b), GP_EINVAL); /* no GPU 5 */
    b = frac_on(0, 1, 1001, 0);
    assert_int_equal(gp_cluster_assign(c, &b), GP_EINVAL);
    b = frac_on(0, 1, 0, 0);
    assert_int_equal(gp_cluster_assign(c, &b), GP_EINVAL); /* takes nothing */
    b = frac_on(0, 1, 100, 0);
    b.cpu_milli = 8000;
    assert_int_equal(gp_cluster_assign(c, &b), GP_ENOSPC); /* CPU: 7000 left */
    /* Two shares of one GPU in one assignment are malformed. */
    b = frac_on(1, 1, 100, 0);
    b.nshares = 2;
    b.shares[1] = b.shares[0];
    assert_int_equal(gp_cluster_assign(c, &b), GP_EINVAL);
    /* A failed multi-GPU assignment leaves the first GPUs untouched. */
    b = frac_on(0, 1, 1000, 0);
    b.nshares = 2;
    b.shares[1] = (gp_gpu_share){.gpu = 0, .milli = 1000, .mig_start = -1};
    assert_int_equal(gp_cluster_assign(c, &b), GP_ENOSPC);
    assert_int_equal(gp_cluster_gpu(c, 0, 1)->milli_free, 1000);
    assert_int_equal(gp_cluster_gpu_milli_allocated(c), 800);
    assert_int_equal(gp_cluster_check(c, NULL), 0);
    gp_cluster_free(c);
}

static gp_cluster *mig_cluster(bool dynamic)
{
    gp_cluster *c = gp_cluster_new();
    int a100 = gp_cluster_model(c, "NVIDIA A100-SXM4-80GB", 81920);
    assert_int_equal(gp_cluster_model_info(c, a100)->mig, GP_MIG_A100_80GB);
    fx_node(c, "dgx", 128000, 1 << 20, 2, a100);
    gp_cluster_set_dynamic_mig(c, dynamic);
    return c;
}

static int place_mig(gp_cluster *c, const char *profile, gp_assignment *a)
{
    gp_request r = fx_mig(profile);
    gp_policy *p;
    gp_placer *pl;
    assert_int_equal(gp_policy_new("bestfit", NULL, &p, NULL), 0);
    assert_int_equal(gp_placer_new(c, p, &pl), 0);
    gp_rng rng;
    gp_rng_seed(&rng, 1);
    int rc = gp_placer_place(pl, &r, &rng, a, NULL);
    if (rc == 0) {
        rc = gp_cluster_assign(c, a);
    }
    gp_placer_free(pl);
    gp_policy_free(p);
    return rc;
}

static void test_mig_static(void **state)
{
    (void)state;
    gp_cluster *c = mig_cluster(false);
    gp_assignment a;
    /* Not partitioned and no dynamic MIG: nothing fits. */
    assert_int_equal(place_mig(c, "1g.10gb", &a), GP_ENOSPC);
    assert_int_equal(gp_cluster_enable_mig(c, 0, 1), 0);
    /* 7 instances of 1g.10gb fit on GPU 1, the 8th does not. */
    for (int i = 0; i < 7; i++) {
        assert_int_equal(place_mig(c, "1g.10gb", &a), 0);
        assert_int_equal(a.shares[0].gpu, 1);
        assert_int_equal(a.shares[0].mig_memory_slices, 1);
    }
    assert_int_equal(place_mig(c, "1g.10gb", &a), GP_ENOSPC);
    assert_int_equal(gp_cluster_gpu(c, 0, 1)->mig_compute_used, 7);
    assert_int_equal(gp_cluster_gpu_milli_allocated(c), 1000);
    /* A profile this GPU does not have is refused at placement. */
    assert_int_equal(place_mig(c, "1g.5gb", &a), GP_ENOSPC);
    /* An illegal slice (3g starting at 2) is refused at assignment. */
    gp_cluster *d = mig_cluster(false);
    gp_cluster_enable_mig(d, 0, 0);
    gp_assignment bad;
    memset(&bad, 0, sizeof(bad));
    bad.nshares = 1;
    bad.shares[0] =
        (gp_gpu_share){.gpu = 0, .mig_start = 2, .mig_memory_slices = 4, .mig_compute_slices = 3};
    assert_int_equal(gp_cluster_assign(d, &bad), GP_EINVAL);
    bad.shares[0].mig_start = 4;
    assert_int_equal(gp_cluster_assign(d, &bad), 0);
    assert_int_equal(gp_cluster_assign(d, &bad), GP_ENOSPC); /* overlaps itself */
    /* A partitioned GPU takes no whole or fractional work. */
    gp_assignment w = frac_on(0, 0, 100, 0);
    assert_int_equal(gp_cluster_assign(d, &w), GP_ENOSPC);
    gp_cluster_free(d);
    gp_cluster_free(c);
}

static void test_mig_dynamic(void **state)
{
    (void)state;
    gp_cluster *c = mig_cluster(true);
    gp_assignment a, b;
    assert_int_equal(place_mig(c, "3g.40gb", &a), 0);
    const gp_gpu *u = gp_cluster_gpu(c, 0, a.shares[0].gpu);
    assert_int_equal(u->mode, GP_GPU_MIG);
    assert_int_equal(u->mig_dynamic, 1);
    /* The second 3g goes to the same GPU (packing) at the other legal start. */
    assert_int_equal(place_mig(c, "3g.40gb", &b), 0);
    assert_int_equal(b.shares[0].gpu, a.shares[0].gpu);
    assert_int_not_equal(b.shares[0].mig_start, a.shares[0].mig_start);
    /* Releasing both turns the GPU back into a whole GPU. */
    assert_int_equal(gp_cluster_release(c, &a), 0);
    assert_int_equal(gp_cluster_release(c, &b), 0);
    u = gp_cluster_gpu(c, 0, a.shares[0].gpu);
    assert_int_equal(u->mode, GP_GPU_FULL);
    assert_int_equal(u->mig_mem_used, 0);
    assert_int_equal(gp_cluster_gpu_milli_allocated(c), 0);
    assert_int_equal(gp_cluster_check(c, NULL), 0);
    gp_cluster_free(c);
}

static void test_request_check(void **state)
{
    (void)state;
    gp_diag d;
    gp_request r = fx_whole(0, 0);
    assert_int_equal(gp_request_check(&r, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "gpu_count"));
    r = fx_frac(0, 1200);
    assert_int_equal(gp_request_check(&r, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "gpu_milli"));
    r = fx_mig("big");
    assert_int_equal(gp_request_check(&r, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "mig_profile"));
    r = fx_none(-1, 0);
    assert_int_equal(gp_request_check(&r, &d), GP_EINVAL);
    r = fx_frac(100, 250);
    assert_int_equal(gp_request_check(&r, &d), 0);
}

static void test_errors(void **state)
{
    (void)state;
    assert_string_equal(gp_strerror_name(GP_ENOSPC), "GP_ENOSPC");
    assert_int_equal(gp_error_http_status(GP_ENOENT), 404);
    assert_int_equal(gp_error_http_status(0), 200);
    assert_string_equal(gp_strerror_name(-999), "GP_E?");
    gp_diag d;
    assert_int_equal(gp_diag_set(&d, GP_EINVAL, "x: %d", 3), GP_EINVAL);
    assert_string_equal(d.msg, "x: 3");
}

/* Drained GPUs take nothing new, hot spares only restarts after a fault, and a node under a
 * maintenance deadline only jobs that finish before it; what a GPU holds is never affected. */
static void test_avail_window(void **state)
{
    (void)state;
    gp_cluster *c = small();
    gp_request one = fx_whole(1000, 1), frac = fx_frac(0, 500), four = fx_whole(1000, 4);
    assert_true(gp_node_fits(c, 1, &four));
    assert_int_equal(gp_cluster_set_gpu_avail(c, 1, 2, GP_GPU_OUT), 0);
    assert_false(gp_node_fits(c, 1, &four));
    assert_false(gp_gpu_fits(c, 1, 2, &one));
    assert_false(gp_gpu_fits(c, 1, 2, &frac));
    four.spare_ok = true;
    assert_false(gp_node_fits(c, 1, &four)); /* out of service is out for restarts too */
    assert_int_equal(gp_cluster_set_gpu_avail(c, 1, 2, GP_GPU_SPARE), 0);
    assert_true(gp_node_fits(c, 1, &four));
    four.spare_ok = false;
    assert_false(gp_node_fits(c, 1, &four));
    assert_false(gp_gpu_fits(c, 1, 2, &frac));
    frac.spare_ok = true;
    assert_true(gp_gpu_fits(c, 1, 2, &frac));
    /* An allocation already on a GPU is not touched by draining it, and releases. */
    gp_assignment a = {.node = 0, .cpu_milli = 1000, .nshares = 1};
    a.shares[0] = (gp_gpu_share){.gpu = 0, .milli = 1000, .mem_mib = 16384, .mig_start = -1};
    assert_int_equal(gp_cluster_assign(c, &a), 0);
    assert_int_equal(gp_cluster_set_gpu_avail(c, 0, 0, GP_GPU_OUT), 0);
    assert_int_equal(gp_cluster_release(c, &a), 0);
    assert_false(gp_gpu_fits(c, 0, 0, &one));
    assert_int_equal(gp_cluster_set_gpu_avail(c, 0, 0, GP_GPU_IN_SERVICE), 0);
    assert_true(gp_gpu_fits(c, 0, 0, &one));
    assert_int_equal(gp_cluster_set_gpu_avail(c, 0, 2, GP_GPU_OUT), GP_EINVAL);
    assert_int_equal(gp_cluster_set_gpu_avail(c, 0, 0, 7), GP_EINVAL);
    /* Maintenance window. */
    assert_int_equal(gp_cluster_set_window(c, 0, 3600000), 0);
    assert_false(gp_node_fits(c, 0, &one)); /* unbounded runtime */
    one.runtime_ms = 3600001;
    assert_false(gp_node_fits(c, 0, &one));
    one.runtime_ms = 3600000;
    assert_true(gp_node_fits(c, 0, &one));
    assert_int_equal(gp_cluster_set_window(c, 0, -1), 0);
    one.runtime_ms = 0;
    assert_true(gp_node_fits(c, 0, &one));
    assert_int_equal(gp_cluster_set_window(c, 0, -2), GP_EINVAL);
    assert_int_equal(gp_cluster_check(c, NULL), 0);
    gp_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_assign_release_inverse),
        cmocka_unit_test(test_assign_refusals),
        cmocka_unit_test(test_mig_static),
        cmocka_unit_test(test_mig_dynamic),
        cmocka_unit_test(test_request_check),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_avail_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
