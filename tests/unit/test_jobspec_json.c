/*
 * The job spec's canonical form (gp_jobspec_to_json): for many specs, and for every file of the
 * job spec fuzzer's corpus (tests/fixtures/jobspec, JSON and YAML), parse -> encode -> parse
 * gives an equal spec and encoding that again gives the same text; the canonical text of a few
 * specs is spelled out (durations in the largest exact unit, one form per volume and env entry,
 * defaults explicit); a secret is shown as its sealed form.
 */
#include "gpupool/jobspec.h"
#include "tests/unit/harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GP_JOBSPEC_FIXTURES
#error "GP_JOBSPEC_FIXTURES: the fixture corpus directory"
#endif

/* parse(text) -> encode -> parse -> equal; encode again -> the same text. */
static void round_trip(const char *text, size_t len, bool yaml)
{
    gp_jobspec a, b;
    gp_diag d;
    int rc =
        yaml ? gp_jobspec_parse_yaml(text, len, &a, &d) : gp_jobspec_parse_json(text, len, &a, &d);
    if (rc != 0) {
        fail_msg("%.*s: %s", (int)len, text, d.msg);
    }
    json_t *doc = gp_jobspec_to_json(&a);
    assert_non_null(doc);
    char *canon = json_dumps(doc, JSON_COMPACT);
    assert_non_null(canon);
    if (gp_jobspec_parse_json(canon, strlen(canon), &b, &d) != 0) {
        fail_msg("the canonical form of %.*s does not parse: %s: %s", (int)len, text, canon, d.msg);
    }
    if (!gp_jobspec_equal(&a, &b)) {
        fail_msg("%.*s: the canonical form %s parses to another spec", (int)len, text, canon);
    }
    json_t *again = gp_jobspec_to_json(&b);
    char *canon2 = json_dumps(again, JSON_COMPACT);
    assert_string_equal(canon, canon2);
    free(canon2);
    json_decref(again);
    free(canon);
    json_decref(doc);
    gp_jobspec_fini(&b);
    gp_jobspec_fini(&a);
}

static const char *const specs[] = {
    "{\"name\":\"a\",\"command\":[\"x\"]}",
    "{\"name\":\"a\",\"command\":[\"x\"],\"args\":[]}",
    "{\"name\":\"train\",\"tenant\":\"team-a\",\"queue\":\"research\",\"priority_class\":\"high\","
    "\"replicas\":4,\"resources\":{\"gpus\":8,\"gpu_models\":[\"A100-80GB\",\"H100-80GB\"],"
    "\"cpu_milli\":64000,\"memory_mib\":262144},\"topology\":\"require-nvlink\","
    "\"gpu_policy\":\"spread\",\"preemptible\":true,\"command\":[\"torchrun\",\"train.py\"],"
    "\"args\":[\"--epochs\",\"3\"],\"env\":{\"HF_HOME\":\"/data/hf\",\"SEED\":\"7\"},"
    "\"working_dir\":\"/workspace\",\"max_runtime\":7200,\"idle_timeout\":\"30m\","
    "\"idle_utilization\":7.5,\"restart_policy\":\"on-failure\",\"max_restarts\":3}",
    "{\"name\":\"q\",\"command\":[\"x\"],\"resources\":{\"cores_percent\":50}}",
    "{\"name\":\"q\",\"command\":[\"x\"],\"resources\":{\"gpu_memory_mib\":10240,"
    "\"compute_policy\":\"strict\"}}",
    "{\"name\":\"q\",\"command\":[\"x\"],\"resources\":{\"gpu_milli\":250,\"gpu_memory_mib\":1,"
    "\"cores_percent\":20}}",
    "{\"name\":\"m\",\"command\":[\"x\"],\"resources\":{\"mig_profile\":\"1g.10gb\"},"
    "\"idle_timeout\":3600}",
    "{\"name\":\"v\",\"command\":[\"x\"],\"volumes\":[\"a\",\"b:ro\",{\"name\":\"c\","
    "\"read_only\":false},{\"name\":\"d\",\"read_only\":true},{\"name\":\"e\"}]}",
    "{\"name\":\"s\",\"command\":[\"x\"],\"env\":{\"A\":{\"value\":\"v\",\"secret\":false},"
    "\"B\":{\"value\":\"p\",\"secret\":true},\"C\":{\"secret\":true,\"sealed\":\"gps1.abc\"},"
    "\"D\":\"\"}}",
    "{\"name\":\"i\",\"command\":[\"x\"],\"image\":\"ubuntu\",\"network\":\"private\"}",
    "{\"name\":\"i\",\"command\":[\"x\"],\"image\":\"r:5000/t/x@sha256:"
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
    "\"image_pull_policy\":\"Never\",\"allow_unschedulable\":true}",
    "{\"name\":\"d\",\"command\":[\"x\"],\"max_runtime\":\"365d\",\"hang_timeout\":59,"
    "\"restart_policy\":\"never\",\"resources\":{\"gpus\":1},\"idle_timeout\":\"90m\","
    "\"idle_utilization\":0.1}",
    "{\"name\":\"d\",\"command\":[\"x\"],\"restart_policy\":\"always\",\"max_restarts\":0,"
    "\"resources\":{\"cpu_milli\":0,\"memory_mib\":0}}",
    "{\"name\":\"u\",\"command\":[\"\\u00e9t\\u00e9\",\"a b\"],\"working_dir\":\"/\\u00fc\"}",
};

static void test_specs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        round_trip(specs[i], strlen(specs[i]), false);
    }
}

static void test_corpus(void **state)
{
    (void)state;
    DIR *dir = opendir(GP_JOBSPEC_FIXTURES);
    assert_non_null(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", GP_JOBSPEC_FIXTURES, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        char buf[65536];
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        round_trip(buf, len, strstr(e->d_name, ".json") == NULL);
        n++;
    }
    closedir(dir);
    assert_true(n >= 5);
}

/* The canonical text of s, parsed from text. */
static char *canonical(const char *text)
{
    gp_jobspec s;
    gp_diag d;
    assert_int_equal(gp_jobspec_parse_json(text, strlen(text), &s, &d), 0);
    json_t *doc = gp_jobspec_to_json(&s);
    char *out = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    gp_jobspec_fini(&s);
    return out;
}

static void test_canonical_text(void **state)
{
    (void)state;
    char *t = canonical("{\"name\":\"a\",\"command\":[\"x\"],\"tenant\":\"t\","
                        "\"volumes\":[{\"name\":\"c\",\"read_only\":true}],\"max_runtime\":5400,"
                        "\"hang_timeout\":45,\"env\":{\"K\":{\"value\":\"v\"}},"
                        "\"resources\":{\"cores_percent\":25},\"idle_timeout\":172800}");
    assert_string_equal(
        t,
        "{\"name\":\"a\",\"kind\":\"batch\",\"tenant\":\"t\",\"queue\":\"default\",\"replicas\":1,"
        "\"resources\":{\"gpu_milli\":250,\"cores_percent\":25,\"cpu_milli\":0,"
        "\"memory_mib\":0},\"topology\":\"any\",\"preemptible\":false,\"network\":\"host\","
        "\"command\":[\"x\"],\"args\":[],\"env\":{\"K\":\"v\"},\"volumes\":[\"c:ro\"],"
        "\"max_runtime\":\"90m\",\"hang_timeout\":\"45s\",\"idle_timeout\":\"2d\","
        "\"idle_utilization\":5,\"idle_action\":\"stop\",\"restart_policy\":\"never\","
        "\"max_restarts\":0,\"allow_unschedulable\":false}");
    free(t);
    t = canonical("{\"name\":\"a\",\"command\":[\"x\"],\"image\":\"ubuntu\",\"max_runtime\":\"2h\","
                  "\"restart_policy\":\"on-failure\",\"env\":{\"S\":{\"secret\":true,"
                  "\"sealed\":\"gps1.xyz\"}}}");
    assert_non_null(strstr(t, "\"image\":\"docker.io/library/ubuntu:latest\","
                              "\"image_pull_policy\":\"Always\""));
    assert_non_null(strstr(t, "\"env\":{\"S\":{\"secret\":true,\"sealed\":\"gps1.xyz\"}}"));
    assert_non_null(strstr(t, "\"max_runtime\":\"2h\""));
    assert_non_null(strstr(t, "\"restart_policy\":\"on-failure\",\"max_restarts\":3"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_specs),
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_canonical_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
