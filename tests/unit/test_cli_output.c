/* How the CLI's tables show an image reference (gp_out_image): Docker Hub's prefixes dropped, a
 * digest shortened, a long reference cut at its path components, never more than the width. */
#include "cli/output.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

static void expect_image(const char *ref, size_t max, const char *want)
{
    char buf[128];
    memset(buf, 'x', sizeof(buf));
    gp_out_image(ref, max, buf, sizeof(buf));
    if (strcmp(buf, want) != 0) {
        fail_msg("\"%s\" (max %zu) shown as \"%s\", expected \"%s\"", ref ? ref : "(null)", max,
                 buf, want);
    }
    if (strlen(buf) > max) {
        fail_msg("\"%s\" shown in %zu bytes, more than %zu", buf, strlen(buf), max);
    }
}

static void test_short_forms(void **state)
{
    (void)state;
    expect_image(NULL, 40, "");
    expect_image("", 40, "");
    expect_image("docker.io/library/ubuntu:22.04", 40, "ubuntu:22.04");
    expect_image("docker.io/pytorch/pytorch:2.1.0", 40, "pytorch/pytorch:2.1.0");
    expect_image("localhost/gpupool-demo:1", 40, "localhost/gpupool-demo:1");
    expect_image("127.0.0.1:5000/team/pytorch:2.1", 40, "127.0.0.1:5000/team/pytorch:2.1");
    expect_image("[::1]:5000/img:v1", 40, "[::1]:5000/img:v1");
    /* not Docker Hub, though the name starts alike */
    expect_image("docker.iox/a:1", 40, "docker.iox/a:1");
}

static void test_digests(void **state)
{
    (void)state;
    char ref[160];
    snprintf(ref, sizeof(ref), "docker.io/library/img@sha256:0123456789abcdef%048d", 0);
    expect_image(ref, 40, "img@sha256:0123456789ab");
    snprintf(ref, sizeof(ref), "r.io/img:1.0@sha256:fedcba9876543210%048d", 7);
    expect_image(ref, 40, "r.io/img:1.0@sha256:fedcba987654");
}

static void test_long_references(void **state)
{
    (void)state;
    /* the registry and leading path components go first, keeping as much as fits */
    expect_image("registry.example.com:5000/ml-platform/team-a/pytorch:2.1", 40,
                 ".../ml-platform/team-a/pytorch:2.1");
    expect_image("registry.example.com:5000/ml-platform/team-a/pytorch:2.1", 30,
                 ".../team-a/pytorch:2.1");
    expect_image("registry.example.com:5000/ml-platform/team-a/pytorch:2.1", 56,
                 "registry.example.com:5000/ml-platform/team-a/pytorch:2.1");
    expect_image("registry.example.com:5000/ml-platform/team-a/pytorch:2.1", 55,
                 ".../ml-platform/team-a/pytorch:2.1");
    /* the last component too long even so: its end goes as well */
    expect_image("nvcr.io/nvidia/pytorch:23.10-py3-cuda12.2-cudnn8-devel-ubuntu22.04", 40,
                 ".../pytorch:23.10-py3-cuda12.2-cudnn8...");
    expect_image("registry.example.com:5000/team-a/pytorch:2.1.0-cuda12.1-cudnn8-runtime", 40,
                 ".../pytorch:2.1.0-cuda12.1-cudnn8-run...");
    expect_image("averyveryveryveryverylongimagenamewithoutanyslash:1", 20, "averyveryveryvery...");
    /* a buffer smaller than max bounds it too */
    char small[12];
    gp_out_image("docker.io/library/ubuntu:22.04", 40, small, sizeof(small));
    assert_string_equal(small, "ubuntu:2...");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_forms),
        cmocka_unit_test(test_digests),
        cmocka_unit_test(test_long_references),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
