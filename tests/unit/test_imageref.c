/* OCI image references: what docker and podman take is accepted and normalised; anything else is
 * refused with the field named; normalising twice changes nothing. */
#include "gpupool/imageref.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

static void expect_normal(const char *text, const char *want)
{
    char buf[GP_IMAGE_REF_MAX], again[GP_IMAGE_REF_MAX];
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_image_ref_normalize(text, "image", buf, sizeof(buf), &d) != 0) {
        fail_msg("\"%s\" refused: %s", text, d.msg);
    }
    if (strcmp(buf, want) != 0) {
        fail_msg("\"%s\" normalised to \"%s\", expected \"%s\"", text, buf, want);
    }
    assert_int_equal(gp_image_ref_normalize(buf, "image", again, sizeof(again), &d), 0);
    assert_string_equal(again, buf); /* a normal form is its own */
}

static void test_normal_forms(void **state)
{
    (void)state;
    expect_normal("ubuntu", "docker.io/library/ubuntu:latest");
    expect_normal("ubuntu:22.04", "docker.io/library/ubuntu:22.04");
    expect_normal("pytorch/pytorch:2.1.0-cuda12.1", "docker.io/pytorch/pytorch:2.1.0-cuda12.1");
    expect_normal("nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04",
                  "nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04");
    expect_normal("127.0.0.1:5000/team/pytorch:2.1", "127.0.0.1:5000/team/pytorch:2.1");
    expect_normal("localhost/img", "localhost/img:latest");
    expect_normal("localhost:5000/a/b/c", "localhost:5000/a/b/c:latest");
    expect_normal("Registry.Example.COM:443/x", "registry.example.com:443/x:latest");
    expect_normal("index.docker.io/library/busybox", "docker.io/library/busybox:latest");
    expect_normal("registry-1.docker.io/busybox:1", "docker.io/library/busybox:1");
    expect_normal("docker.io/busybox", "docker.io/library/busybox:latest");
    expect_normal("[::1]:5000/img:v1", "[::1]:5000/img:v1");
    expect_normal("a.b/c__d/e-f/g.h/i_j---k:Tag_1.0-x", "a.b/c__d/e-f/g.h/i_j---k:Tag_1.0-x");
    char digest[160];
    snprintf(digest, sizeof(digest), "img@sha256:%064d", 0);
    char want[200];
    snprintf(want, sizeof(want), "docker.io/library/img@sha256:%064d", 0);
    expect_normal(digest, want); /* a digest alone: no tag added */
    snprintf(digest, sizeof(digest), "r.io/img:1.0@sha256:%064d", 7);
    snprintf(want, sizeof(want), "r.io/img:1.0@sha256:%064d", 7);
    expect_normal(digest, want);
}

static void test_pull_defaults(void **state)
{
    (void)state;
    gp_image_ref r;
    gp_diag d;
    assert_int_equal(gp_image_ref_parse("ubuntu", "image", &r, &d), 0);
    assert_false(r.tag_given);
    assert_int_equal(gp_image_ref_default_pull(&r), GP_PULL_ALWAYS);
    assert_int_equal(gp_image_ref_parse("ubuntu:latest", "image", &r, &d), 0);
    assert_int_equal(gp_image_ref_default_pull(&r), GP_PULL_ALWAYS);
    assert_int_equal(gp_image_ref_parse("ubuntu:22.04", "image", &r, &d), 0);
    assert_int_equal(gp_image_ref_default_pull(&r), GP_PULL_IF_NOT_PRESENT);
    char text[120];
    snprintf(text, sizeof(text), "ubuntu:latest@sha256:%064d", 1);
    assert_int_equal(gp_image_ref_parse(text, "image", &r, &d), 0);
    assert_int_equal(gp_image_ref_default_pull(&r), GP_PULL_IF_NOT_PRESENT);
    assert_string_equal(gp_pull_policy_name(GP_PULL_NEVER), "Never");
    assert_null(gp_pull_policy_name(GP_PULL_DEFAULT));
    assert_int_equal(gp_pull_policy_parse("IfNotPresent"), GP_PULL_IF_NOT_PRESENT);
    assert_int_equal(gp_pull_policy_parse("always"), GP_PULL_DEFAULT);
}

static void expect_refused(const char *text, const char *needle)
{
    gp_image_ref r;
    memset(&r, 0x5a, sizeof(r));
    gp_image_ref before = r;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_image_ref_parse(text, "image", &r, &d);
    if (rc != GP_EINVAL || strncmp(d.msg, "image: ", 7) != 0 || !strstr(d.msg, needle)) {
        fail_msg("\"%s\": %s \"%s\", expected GP_EINVAL naming image and \"%s\"", text,
                 gp_strerror_name(rc), d.msg, needle);
    }
    assert_memory_equal(&r, &before, sizeof(r)); /* untouched */
}

static void test_refused(void **state)
{
    (void)state;
    expect_refused("", "1 to 639 characters");
    expect_refused("Ubuntu", "path component \"Ubuntu\" must be lower-case");
    expect_refused("Team/img", "path component \"Team\"");
    expect_refused("r.io/Team/img", "path component \"Team\"");
    expect_refused("r.io/team//img", "empty component");
    expect_refused("r.io/", "path is missing");
    expect_refused("/img", "empty component");
    expect_refused("img/", "empty component");
    expect_refused("a-/b", "path component \"a-\"");
    expect_refused("a..b", "path component");
    expect_refused("a___b", "path component");
    expect_refused("_a", "path component");
    expect_refused("img name", "path component");
    expect_refused("img:", "tag after ':'");
    expect_refused("img:-x", "tag after ':'");
    expect_refused("img:a/b", "registry \"img:a\""); /* a ":" before the last "/" */
    expect_refused("r.io:99999/img", "registry \"r.io:99999\"");
    expect_refused("r.io:0/img", "registry");
    expect_refused("r.io:port/img", "registry");
    expect_refused("-r.io/img", "registry");
    expect_refused("r_x.io/img", "registry");
    expect_refused("[zz]:5000/img", "registry");
    expect_refused("img@sha256:abc", "digest after '@'");
    expect_refused("img@md5:0123456789abcdef0123456789abcdef", "digest");
    char text[700];
    snprintf(text, sizeof(text), "img@sha256:%064d", 0);
    text[strlen(text) - 1] = 'A'; /* upper-case hex */
    expect_refused(text, "digest");
    memset(text, 'a', 300);
    text[300] = '\0';
    expect_refused(text, "longer than 255");
    memset(text, 'a', 650);
    text[650] = '\0';
    expect_refused(text, "1 to 639 characters");
    /* The longest valid reference still fits once normalised. */
    memcpy(text, "r.io/", 5);
    memset(text + 5, 'a', 250); /* a name of 255 */
    snprintf(text + 255, sizeof(text) - 255, ":%0128d@sha512:%0128d", 0, 0);
    char normal[GP_IMAGE_REF_MAX];
    gp_diag d;
    assert_int_equal(gp_image_ref_normalize(text, "image", normal, sizeof(normal), &d), 0);
    snprintf(text, sizeof(text), "img:%0130d", 0);
    expect_refused(text, "tag");
}

static void test_registries(void **state)
{
    (void)state;
    char buf[GP_IMAGE_REGISTRY_MAX];
    gp_diag d;
    assert_int_equal(
        gp_image_registry_normalize("127.0.0.1:5000", "registry", buf, sizeof(buf), &d), 0);
    assert_string_equal(buf, "127.0.0.1:5000");
    assert_int_equal(gp_image_registry_normalize("NVCR.io", "registry", buf, sizeof(buf), &d), 0);
    assert_string_equal(buf, "nvcr.io");
    assert_int_equal(
        gp_image_registry_normalize("index.docker.io", "registry", buf, sizeof(buf), &d), 0);
    assert_string_equal(buf, "docker.io");
    assert_int_equal(gp_image_registry_normalize("localhost", "registry", buf, sizeof(buf), &d), 0);
    static const char *const bad[] = {
        "", "https://r.io", "r.io/path", "r.io:", "r.io:70000", "r io", "-r.io"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        gp_diag_clear(&d);
        if (gp_image_registry_normalize(bad[i], "registry", buf, sizeof(buf), &d) != GP_EINVAL ||
            strncmp(d.msg, "registry: ", 10) != 0) {
            fail_msg("registry \"%s\" accepted or unnamed: %s", bad[i], d.msg);
        }
    }
    /* The registry of an image compares with the one credentials name. */
    gp_image_ref r;
    assert_int_equal(gp_image_ref_parse("Index.Docker.IO/team/x:1", "image", &r, &d), 0);
    assert_string_equal(r.registry, "docker.io");
    assert_string_equal(r.path, "team/x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal_forms),
        cmocka_unit_test(test_pull_defaults),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_registries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
