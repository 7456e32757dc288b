/* Images in the run spec (image, image_pull_policy and its default, network, registry_auth), the
 * pull decisions (pull.h: policy, the registry's message, podman's auth file, the size from a
 * manifest or an index) and the node's image cache (images.h: what podman lists, which images a
 * size cap evicts). */
#include "agent/images.h"
#include "agent/pull.h"
#include "agent/run_spec.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gp_run_spec *parse(const char *extra, gp_diag *d, int *rc)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"job\": 1, \"replica\": 0, \"epoch\": 1, %s \"spec\": {\"command\": [\"true\"]}}",
             extra);
    gp_run_spec *s = NULL;
    gp_diag_clear(d);
    *rc = gp_run_spec_parse(text, &s, d);
    return s;
}

static void test_spec_image(void **state)
{
    (void)state;
    gp_diag d;
    int rc;
    gp_run_spec *s = parse("", &d, &rc);
    assert_int_equal(rc, 0);
    assert_null(s->image); /* the host's root */
    assert_false(s->network_private);
    gp_run_spec_free(s);
    s = parse("\"image\": \"127.0.0.1:5000/team/bb:1\", \"network\": \"private\", "
              "\"tenant\": \"a\",",
              &d, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s->image, "127.0.0.1:5000/team/bb:1");
    assert_int_equal(s->pull_policy, GP_RUN_PULL_IF_NOT_PRESENT); /* a tag */
    assert_true(s->network_private);
    assert_string_equal(s->tenant, "a");
    gp_run_spec_free(s);
    s = parse("\"image\": \"reg:5000/x\", \"image_pull_policy\": \"Never\",", &d, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s->pull_policy, GP_RUN_PULL_NEVER);
    gp_run_spec_free(s);
    /* the controller may carry them in the job's spec instead */
    char text[] = "{\"job\": 1, \"replica\": 0, \"epoch\": 1, \"spec\": {\"command\": [\"true\"],"
                  " \"image\": \"reg/x:latest\"}}";
    assert_int_equal(gp_run_spec_parse(text, &s, &d), 0);
    assert_string_equal(s->image, "reg/x:latest");
    assert_int_equal(s->pull_policy, GP_RUN_PULL_ALWAYS);
    gp_run_spec_free(s);
}

/* cdi_devices: the agent's word that podman resolves the GPUs through CDI (run_spec.h). */
static void test_spec_cdi_devices(void **state)
{
    (void)state;
    gp_diag d;
    int rc;
    gp_run_spec *s = parse("", &d, &rc);
    assert_int_equal(rc, 0);
    assert_false(s->cdi_devices);
    gp_run_spec_free(s);
    s = parse("\"cdi_devices\": true,", &d, &rc);
    assert_int_equal(rc, 0);
    assert_true(s->cdi_devices);
    gp_run_spec_free(s);
    s = parse("\"cdi_devices\": false,", &d, &rc);
    assert_int_equal(rc, 0);
    assert_false(s->cdi_devices);
    gp_run_spec_free(s);
    s = parse("\"cdi_devices\": \"yes\",", &d, &rc);
    assert_int_equal(rc, GP_EINVAL);
    assert_null(s);
    assert_non_null(strstr(d.msg, "cdi_devices"));
}

/* userns: the tenant's host ids the agent gives a sandboxed job (idmap.h). */
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

static void test_spec_image_refused(void **state)
{
    (void)state;
    static const struct {
        const char *extra, *field;
    } bad[] = {
        {"\"image\": \"--privileged\",", "image: must be an image reference"},
        {"\"image\": \"a b\",", "image: must be an image reference"},
        {"\"image\": 5,", "image: must be an image reference"},
        {"\"image_pull_policy\": \"Always\",", "image_pull_policy: only with image"},
        {"\"image\": \"x\", \"image_pull_policy\": \"Sometimes\",", "image_pull_policy: must be"},
        {"\"network\": \"none\",", "network: must be host or private"},
        {"\"image\": \"x\", \"registry_auth\": {\"registry\": \"r\"},",
         "registry_auth.username: required"},
        {"\"image\": \"x\", \"registry_auth\": \"secret\",", "registry_auth: must be an object"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        gp_diag d;
        int rc;
        gp_run_spec *s = parse(bad[i].extra, &d, &rc);
        assert_null(s);
        assert_int_equal(rc, GP_EINVAL);
        if (!strstr(d.msg, bad[i].field)) {
            fail_msg("%s: %s, expected %s", bad[i].extra, d.msg, bad[i].field);
        }
    }
}

static void test_pull_policy(void **state)
{
    (void)state;
    assert_int_equal(gp_run_pull_default("reg:5000/team/img"), GP_RUN_PULL_ALWAYS);
    assert_int_equal(gp_run_pull_default("reg:5000/team/img:latest"), GP_RUN_PULL_ALWAYS);
    assert_int_equal(gp_run_pull_default("img"), GP_RUN_PULL_ALWAYS);
    assert_int_equal(gp_run_pull_default("reg:5000/team/img:2.1"), GP_RUN_PULL_IF_NOT_PRESENT);
    assert_int_equal(gp_run_pull_default("reg/img@sha256:abcd"), GP_RUN_PULL_IF_NOT_PRESENT);
    assert_true(gp_pull_needed(GP_RUN_PULL_ALWAYS, true));
    assert_true(gp_pull_needed(GP_RUN_PULL_ALWAYS, false));
    assert_false(gp_pull_needed(GP_RUN_PULL_IF_NOT_PRESENT, true));
    assert_true(gp_pull_needed(GP_RUN_PULL_IF_NOT_PRESENT, false));
    assert_false(gp_pull_needed(GP_RUN_PULL_NEVER, false));
    assert_string_equal(gp_run_pull_name(GP_RUN_PULL_IF_NOT_PRESENT), "IfNotPresent");
}

static void test_message(void **state)
{
    (void)state;
    char msg[300];
    gp_pull_message("Trying to pull r/x:nope...\nError: initializing source docker://r/x:nope: "
                    "reading manifest nope in r/x: manifest unknown: manifest unknown\n",
                    msg, sizeof(msg));
    assert_string_equal(msg, "initializing source docker://r/x:nope: reading manifest nope in "
                             "r/x: manifest unknown: manifest unknown");
    gp_pull_message("time=... level=warning msg=\"retrying\"\nError: first\nError: last one\n", msg,
                    sizeof(msg));
    assert_string_equal(msg, "last one");
    gp_pull_message("no error line\nbut this\n", msg, sizeof(msg));
    assert_string_equal(msg, "but this");
    gp_pull_message("", msg, sizeof(msg));
    assert_string_equal(msg, "no message");
}

static void test_authfile(void **state)
{
    (void)state;
    gp_run_spec s;
    memset(&s, 0, sizeof(s));
    assert_null(gp_pull_authfile_text(&s));
    gp_diag d;
    assert_int_equal(gp_run_spec_auth_parse("{\"registry\": \"127.0.0.1:5000\", \"username\": "
                                            "\"alice\", \"password\": \"s3cr3t:x\"}",
                                            &s, &d),
                     0);
    char *text = gp_pull_authfile_text(&s);
    /* base64("alice:s3cr3t:x") */
    assert_string_equal(text,
                        "{\"auths\":{\"127.0.0.1:5000\":{\"auth\":\"YWxpY2U6czNjcjN0Ong=\"}}}");
    free(text);
    free(s.auth_registry);
    free(s.auth_username);
    free(s.auth_password);
}

static void test_manifest_bytes(void **state)
{
    (void)state;
    char digest[100];
    const char *manifest =
        "{\"schemaVersion\":2,\"config\":{\"digest\":\"sha256:c\",\"size\":409},\"layers\":["
        "{\"digest\":\"sha256:a\",\"size\":31090566},{\"digest\":\"sha256:b\",\"size\":25}]}";
    assert_int_equal(gp_pull_manifest_bytes(manifest, "amd64", digest, sizeof(digest)),
                     409 + 31090566 + 25);
    const char *index =
        "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"sha256:arm\",\"platform\":"
        "{\"architecture\":\"arm64\",\"os\":\"linux\"}},{\"digest\":\"sha256:x86\",\"platform\":"
        "{\"architecture\":\"amd64\",\"os\":\"linux\"}}]}";
    assert_int_equal(gp_pull_manifest_bytes(index, "amd64", digest, sizeof(digest)), -1);
    assert_string_equal(digest, "sha256:x86");
    assert_int_equal(gp_pull_manifest_bytes(index, "s390x", digest, sizeof(digest)), -1);
    assert_string_equal(digest, "");
    assert_int_equal(gp_pull_manifest_bytes("not json", "amd64", digest, sizeof(digest)), 0);
}

static void test_images_parse(void **state)
{
    (void)state;
    const char *text =
        "[{\"Id\": \"41ca\", \"Names\": [\"127.0.0.1:5000/team/bb:1\"], \"Size\": 2000000, "
        "\"Containers\": 1}, {\"Id\": \"0f6e\", \"Names\": null, \"Size\": 32001107}]";
    gp_image *list = NULL;
    int n = 0;
    assert_int_equal(gp_images_parse(text, &list, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(list[0].id, "sha256:41ca");
    assert_string_equal(list[0].ref, "127.0.0.1:5000/team/bb:1");
    assert_int_equal(list[0].size_bytes, 2000000);
    assert_int_equal(list[0].containers, 1);
    assert_string_equal(list[1].ref, "");
    free(list);
    assert_int_equal(gp_images_parse("{}", &list, &n), GP_EPARSE);
}

/* The least recently used images go first, until the cache fits; never one in use, one a
 * container uses, or one no replica here used. */
static void test_evict_plan(void **state)
{
    (void)state;
    gp_image imgs[] = {
        {.id = "sha256:a", .size_bytes = 100, .last_used_ms = 3000},
        {.id = "sha256:b", .size_bytes = 100, .last_used_ms = 1000},
        {.id = "sha256:c", .size_bytes = 100, .last_used_ms = 500, .in_use = true},
        {.id = "sha256:d", .size_bytes = 100, .last_used_ms = 200, .containers = 1},
        {.id = "sha256:e", .size_bytes = 100, .last_used_ms = 0}, /* not ours */
        {.id = "sha256:f", .size_bytes = 100, .last_used_ms = 2000},
    };
    int out[6];
    assert_int_equal(gp_images_evict_plan(imgs, 6, 0, out), 0); /* no cap */
    assert_int_equal(gp_images_evict_plan(imgs, 6, 600, out), 0);
    assert_int_equal(gp_images_evict_plan(imgs, 6, 450, out), 2);
    assert_int_equal(out[0], 1); /* b, then f */
    assert_int_equal(out[1], 5);
    assert_int_equal(gp_images_evict_plan(imgs, 6, 1, out), 3); /* b, f, a: all that may go */
    assert_int_equal(out[2], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_image),       cmocka_unit_test(test_spec_image_refused),
        cmocka_unit_test(test_pull_policy),      cmocka_unit_test(test_message),
        cmocka_unit_test(test_authfile),         cmocka_unit_test(test_manifest_bytes),
        cmocka_unit_test(test_images_parse),     cmocka_unit_test(test_evict_plan),
        cmocka_unit_test(test_spec_cdi_devices), cmocka_unit_test(test_spec_userns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
