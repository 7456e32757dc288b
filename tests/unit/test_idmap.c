/* Tenants' host ids (idmap.h): each tenant's range from the agent's first id, the bounds, the
 * host's subordinate ranges they must not meet. (The run spec's userns: test_pull.c; podman's
 * --uidmap: test_sandbox.c.) */
#include "agent/idmap.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

static void test_ranges(void **state)
{
    (void)state;
    gp_diag d;
    gp_idmap m;
    assert_int_equal(gp_idmap_tenant(GP_IDMAP_FIRST_DEFAULT, 0, &m, &d), 0);
    assert_int_equal(m.base, INT64_C(1073741824));
    assert_int_equal(m.size, 65536);
    assert_int_equal(gp_idmap_tenant(GP_IDMAP_FIRST_DEFAULT, 3, &m, &d), 0);
    assert_int_equal(m.base, INT64_C(1073741824) + 3 * 65536);
    /* two tenants never share an id */
    gp_idmap a, b;
    assert_int_equal(gp_idmap_tenant(200000, 7, &a, &d), 0);
    assert_int_equal(gp_idmap_tenant(200000, 8, &b, &d), 0);
    assert_true(a.base + a.size <= b.base);
    /* the last tenant that fits ends at or below 2^32 - 1 */
    int64_t n = gp_idmap_tenants(GP_IDMAP_FIRST_DEFAULT);
    assert_int_equal(n, (INT64_C(4294967295) - INT64_C(1073741824)) / 65536);
    assert_int_equal(gp_idmap_tenant(GP_IDMAP_FIRST_DEFAULT, n - 1, &m, &d), 0);
    assert_true(m.base + m.size <= GP_IDMAP_END);
    assert_int_equal(gp_idmap_tenant(GP_IDMAP_FIRST_DEFAULT, n, &m, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "no host id range"));
    assert_int_equal(m.size, 0);
    assert_int_equal(gp_idmap_tenant(GP_IDMAP_FIRST_DEFAULT, -1, &m, &d), GP_EINVAL);
    /* never root's or a system user's ids */
    assert_int_equal(gp_idmap_tenant(1000, 0, &m, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "--tenant-uids 1000"));
    assert_int_equal(gp_idmap_tenants(0), 0);
    assert_int_equal(gp_idmap_tenants(GP_IDMAP_END), 0);
}

static void test_subid_overlap(void **state)
{
    (void)state;
    static const char subuid[] = "# rootless users\n"
                                 "alice:100000:65536\n"
                                 "\n"
                                 "broken line\n"
                                 "bob:x:65536\n"
                                 "carol:1073807360:10\n";
    char who[256] = "";
    /* before alice, and between alice and carol */
    assert_int_equal(gp_idmap_subid_overlap(subuid, 65536, 100000, who, sizeof(who)), 0);
    assert_int_equal(gp_idmap_subid_overlap(subuid, 165536, 1073807360, who, sizeof(who)), 0);
    assert_int_equal(gp_idmap_subid_overlap(subuid, 165535, 165536, who, sizeof(who)), 1);
    assert_string_equal(who, "alice:100000:65536");
    assert_int_equal(
        gp_idmap_subid_overlap(subuid, GP_IDMAP_FIRST_DEFAULT, GP_IDMAP_END, who, sizeof(who)), 1);
    assert_string_equal(who, "carol:1073807360:10");
    assert_int_equal(gp_idmap_subid_overlap("", 0, GP_IDMAP_END, who, sizeof(who)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_subid_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
