/* Tenants' host ids (idmap.h): each tenant's range from the agent's first id, the bounds, the
 * host's subordinate ranges they must not meet; the run spec's userns and the podman options a
 * user namespace gives (sandbox.h). */
#include "agent/idmap.h"
#include "agent/run_spec.h"
#include "agent/sandbox.h"
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

static gp_run_spec *parse(const char *extra, gp_diag *d, int *rc)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"job\": 1, \"replica\": 0, \"epoch\": 1, %s \"spec\": {\"command\": [\"true\"]}}",
             extra);
    gp_run_spec *s = NULL;
    gp_diag_clear(d);
    *rc = gp_run_spec_parse(text, &s, d);
    return s;
}

static void test_spec_userns(void **state)
{
    (void)state;
    gp_diag d;
    int rc;
    gp_run_spec *s = parse("", &d, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s->userns.size, 0);
    gp_run_spec_free(s);
    s = parse("\"userns\": {\"uid_base\": 1073807360, \"size\": 65536},", &d, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s->userns.base, 1073807360);
    assert_int_equal(s->userns.size, 65536);
    gp_run_spec_free(s);
    static const struct {
        const char *extra, *msg;
    } bad[] = {
        {"\"userns\": 5,", "userns: must be an object"},
        {"\"userns\": {\"size\": 65536},", "userns.uid_base: required"},
        {"\"userns\": {\"uid_base\": 0, \"size\": 65536},", "userns.uid_base: must be"},
        {"\"userns\": {\"uid_base\": 1073807360, \"size\": 65537},", "userns.size: must be"},
        {"\"userns\": {\"uid_base\": 4294960000, \"size\": 65536},", "userns.size: the range"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        s = parse(bad[i].extra, &d, &rc);
        assert_null(s);
        assert_int_equal(rc, GP_EINVAL);
        if (!strstr(d.msg, bad[i].msg)) {
            fail_msg("%s: %s, expected %s", bad[i].extra, d.msg, bad[i].msg);
        }
    }
}

static int arg_at(char **argv, const char *a)
{
    for (int i = 0; argv[i]; i++) {
        if (strcmp(argv[i], a) == 0) {
            return i;
        }
    }
    return -1;
}

/* With a range the container's ids 0..size-1 are the tenant's; without, no user namespace. */
static void test_sandbox_args(void **state)
{
    (void)state;
    static char *cmd[] = {"true", NULL};
    gp_sandbox_node n = {.podman = "podman",
                         .oci_runtime = "runc",
                         .cgroup_manager = "cgroupfs",
                         .nofile = {1024, 1024},
                         .nproc = {-1, -1}};
    gp_sandbox_job j = {.name = "gpupool-1-0-1-x", .state_dir = "/s", .uid = 65534, .gid = 65534};
    gp_run_spec s = {.job = 1, .epoch = 1, .world_size = 1, .argv = cmd, .image = "reg/x:1"};
    gp_sandbox_host h = {.workdir = "/s/work"};
    gp_sandbox_layout l;
    gp_diag d;
    char **a = NULL;
    assert_int_equal(gp_sandbox_layout_make(&s, &h, &l, &d), 0);
    assert_int_equal(gp_sandbox_argv(&n, &j, &s, &l, &a, &d), 0);
    for (int i = 0; a[i]; i++) {
        assert_null(strstr(a[i], "map="));
    }
    gp_sandbox_argv_free(a);
    j.userns = (gp_idmap){1073807360, 65536};
    assert_int_equal(gp_sandbox_argv(&n, &j, &s, &l, &a, &d), 0);
    int u = arg_at(a, "--uidmap=0:1073807360:65536");
    int g = arg_at(a, "--gidmap=0:1073807360:65536");
    int user = arg_at(a, "--user=65534:65534");
    assert_true(u > 0 && g > 0 && user > 0);
    assert_true(u < arg_at(a, "reg/x:1") && g < arg_at(a, "reg/x:1"));
    gp_sandbox_argv_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_subid_overlap),
        cmocka_unit_test(test_spec_userns),
        cmocka_unit_test(test_sandbox_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
