/* MIG geometry: profile tables and legal placements. */
#include "gpupool/mig.h"
#include "gpupool/model.h"
#include "tests/unit/harness.h"

static void test_geometry_of_model(void **state)
{
    (void)state;
    assert_int_equal(gp_mig_geometry_of_model("A100-SXM4-40GB"), GP_MIG_A100_40GB);
    assert_int_equal(gp_mig_geometry_of_model("NVIDIA A100 80GB PCIe"), GP_MIG_A100_80GB);
    assert_int_equal(gp_mig_geometry_of_model("NVIDIA H100 80GB HBM3"), GP_MIG_H100_80GB);
    assert_int_equal(gp_mig_geometry_of_model("V100M32"), GP_MIG_NONE);
    assert_int_equal(gp_mig_geometry_of_model("T4"), GP_MIG_NONE);
}

static void test_profile_tables(void **state)
{
    (void)state;
    int n;
    const gp_mig_profile *p = gp_mig_profiles(GP_MIG_A100_40GB, &n);
    assert_int_equal(n, 6);
    assert_string_equal(gp_mig_find(GP_MIG_A100_40GB, "1g.5gb")->name, "1g.5gb");
    assert_int_equal(gp_mig_find(GP_MIG_A100_40GB, "1g.5gb")->id, 19);
    assert_int_equal(gp_mig_find(GP_MIG_A100_40GB, "1g.10gb")->id, 15);
    assert_int_equal(gp_mig_find(GP_MIG_A100_80GB, "1g.10gb")->id, 19);
    assert_int_equal(gp_mig_find(GP_MIG_H100_80GB, "3g.40gb")->id, 9);
    assert_null(gp_mig_find(GP_MIG_H100_80GB, "1g.5gb"));
    assert_null(gp_mig_find(GP_MIG_NONE, "1g.10gb"));
    /* Every legal placement stays within the 8 memory slices. */
    for (int g = GP_MIG_A100_40GB; g < GP_MIG_GEOMETRY_COUNT; g++) {
        p = gp_mig_profiles((gp_mig_geometry)g, &n);
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < 8; s++) {
                if (p[i].legal_starts & (1u << s)) {
                    assert_true(s + p[i].memory_slices <= GP_MIG_MEMORY_SLICES);
                }
            }
        }
    }
}

static void test_name_syntax(void **state)
{
    (void)state;
    assert_true(gp_mig_name_valid("1g.10gb"));
    assert_true(gp_mig_name_valid("7g.80gb"));
    assert_false(gp_mig_name_valid("1g10gb"));
    assert_false(gp_mig_name_valid("g.10gb"));
    assert_false(gp_mig_name_valid("1g.10"));
    assert_false(gp_mig_name_valid(""));
}

/* Fills a GPU with instances of one profile; the count must equal the driver's max. */
static int fill(gp_mig_geometry g, const char *name)
{
    const gp_mig_profile *p = gp_mig_find(g, name);
    uint8_t used = 0;
    int compute = 0, n = 0, s;
    while ((s = gp_mig_choose_start(p, used, compute)) >= 0) {
        assert_true(p->legal_starts & (1u << s));
        assert_int_equal(used & gp_mig_mask(p, s), 0);
        used |= gp_mig_mask(p, s);
        compute += p->compute_slices;
        n++;
    }
    return n;
}

static void test_max_instances(void **state)
{
    (void)state;
    for (int g = GP_MIG_A100_40GB; g < GP_MIG_GEOMETRY_COUNT; g++) {
        int n;
        const gp_mig_profile *p = gp_mig_profiles((gp_mig_geometry)g, &n);
        for (int i = 0; i < n; i++) {
            assert_int_equal(fill((gp_mig_geometry)g, p[i].name), p[i].max_instances);
        }
    }
}

static void test_mixed_layouts(void **state)
{
    (void)state;
    const gp_mig_profile *p4 = gp_mig_find(GP_MIG_A100_80GB, "4g.40gb");
    const gp_mig_profile *p3 = gp_mig_find(GP_MIG_A100_80GB, "3g.40gb");
    const gp_mig_profile *p1 = gp_mig_find(GP_MIG_A100_80GB, "1g.10gb");
    const gp_mig_profile *p7 = gp_mig_find(GP_MIG_A100_80GB, "7g.80gb");
    /* 4g at 0 then 3g must go to 4. */
    uint8_t used = gp_mig_mask(p4, 0);
    assert_int_equal(gp_mig_choose_start(p3, used, 4), 4);
    used |= gp_mig_mask(p3, 4);
    /* Full: 7 compute slices in use. */
    assert_int_equal(gp_mig_choose_start(p1, used, 7), -1);
    /* A 1g instance at slice 6 leaves room for a 4g at 0 but not for a 7g. */
    used = gp_mig_mask(p1, gp_mig_choose_start(p1, 0, 0));
    assert_int_equal(gp_mig_choose_start(p4, used, 1), 0);
    assert_int_equal(gp_mig_choose_start(p7, used, 1), -1);
    /* 3g at 4 is taken: the next 3g goes to 0; a third is refused. */
    used = gp_mig_mask(p3, 4);
    assert_int_equal(gp_mig_choose_start(p3, used, 3), 0);
    used |= gp_mig_mask(p3, 0);
    assert_int_equal(gp_mig_choose_start(p3, used, 6), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_of_model), cmocka_unit_test(test_profile_tables),
        cmocka_unit_test(test_name_syntax),       cmocka_unit_test(test_max_instances),
        cmocka_unit_test(test_mixed_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
