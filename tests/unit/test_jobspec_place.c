/*
 * The job spec's labels, annotations and placement fields (node_selector, tolerations, spread,
 * anti_affinity): parsing, the errors that name the field's path, the canonical form's round trip
 * whatever order maps were written in, and the label syntax (gpupool/constraint.h).
 */
#include "gpupool/constraint.h"
#include "gpupool/jobspec.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD "{\"name\":\"j\",\"command\":[\"x\"],"

static void parse_ok(const char *text, gp_jobspec *s)
{
    gp_diag d;
    if (gp_jobspec_parse_json(text, strlen(text), s, &d) != 0) {
        fail_msg("%s: %s", text, d.msg);
    }
}

static void refused(const char *text, const char *want)
{
    gp_jobspec s;
    gp_diag d;
    int rc = gp_jobspec_parse_json(text, strlen(text), &s, &d);
    if (rc == 0) {
        gp_jobspec_fini(&s);
        fail_msg("accepted: %s", text);
    }
    if (rc != GP_EINVAL || strncmp(d.msg, want, strlen(want)) != 0) {
        fail_msg("%s: got %d \"%s\", want \"%s...\"", text, rc, d.msg, want);
    }
}

/* Encodes s, parses that back: equal, and the same text again. Returns the text (caller frees). */
static char *round_trip(const gp_jobspec *s)
{
    json_t *j = gp_jobspec_to_json(s);
    assert_non_null(j);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    gp_jobspec again;
    parse_ok(text, &again);
    assert_true(gp_jobspec_equal(s, &again));
    json_t *j2 = gp_jobspec_to_json(&again);
    char *text2 = json_dumps(j2, JSON_COMPACT);
    assert_string_equal(text, text2);
    free(text2);
    json_decref(j2);
    gp_jobspec_fini(&again);
    return text;
}

static void test_fields(void **state)
{
    (void)state;
    gp_jobspec s;
    parse_ok(HEAD "\"labels\":{\"tier\":\"web\",\"app\":\"shop\",\"example.com/team\":\"\"},"
                  "\"annotations\":{\"owner\":\"Ann <ann@example.com>\"},"
                  "\"node_selector\":{\"gpu-type\":\"a100\"},"
                  "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":"
                  "\"ml\",\"effect\":\"NoSchedule\"},{\"operator\":\"Exists\"},{\"key\":\"k\"}],"
                  "\"spread\":[{\"topology_key\":\"zone\",\"max_skew\":1}],"
                  "\"anti_affinity\":true}",
             &s);
    assert_int_equal(s.nlabels, 3);
    assert_string_equal(s.labels[0].key, "app"); /* sorted */
    assert_string_equal(s.labels[1].key, "example.com/team");
    assert_string_equal(s.labels[1].value, "");
    assert_int_equal(s.nannotations, 1);
    assert_int_equal(s.place.nselector, 1);
    assert_string_equal(s.place.selector[0].value, "a100");
    assert_int_equal(s.place.ntolerations, 3);
    assert_true(s.place.tolerations[0].equal);
    assert_int_equal(s.place.tolerations[0].effect, GP_TAINT_NO_SCHEDULE);
    assert_null(s.place.tolerations[1].key);
    assert_false(s.place.tolerations[1].equal);
    assert_int_equal(s.place.tolerations[1].effect, GP_TAINT_ANY);
    assert_true(s.place.tolerations[2].equal); /* Equal by default, value "" */
    assert_string_equal(s.place.tolerations[2].value, "");
    assert_int_equal(s.place.nspread, 1);
    assert_int_equal(s.place.spread[0].max_skew, 1);
    assert_true(s.place.anti_affinity);
    char *text = round_trip(&s);
    assert_non_null(strstr(text, "\"labels\":{\"app\":\"shop\",\"example.com/team\":\"\","
                                 "\"tier\":\"web\"}"));
    assert_non_null(strstr(text, "{\"operator\":\"Exists\"}"));
    free(text);
    gp_jobspec_fini(&s);
}

/* Maps written in another order are the same spec, with the same canonical text. */
static void test_order(void **state)
{
    (void)state;
    gp_jobspec a, b;
    parse_ok(HEAD
             "\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"node_selector\":{\"x\":\"1\",\"y\":\"2\"}}",
             &a);
    parse_ok(HEAD
             "\"node_selector\":{\"y\":\"2\",\"x\":\"1\"},\"labels\":{\"b\":\"2\",\"a\":\"1\"}}",
             &b);
    assert_true(gp_jobspec_equal(&a, &b));
    char *ta = round_trip(&a), *tb = round_trip(&b);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    gp_jobspec_fini(&b);
    parse_ok(HEAD "\"labels\":{\"a\":\"1\",\"b\":\"3\"}}", &b);
    assert_false(gp_jobspec_equal(&a, &b));
    gp_jobspec_fini(&a);
    gp_jobspec_fini(&b);
    /* none of the fields: none in the canonical form */
    parse_ok(HEAD "\"labels\":{}}", &a);
    char *t = round_trip(&a);
    assert_null(strstr(t, "labels"));
    assert_null(strstr(t, "anti_affinity"));
    free(t);
    gp_jobspec_fini(&a);
}

static void test_refused(void **state)
{
    (void)state;
    refused(HEAD "\"labels\":[]}", "labels: must be an object");
    refused(HEAD "\"labels\":{\"-bad\":\"x\"}}", "labels.-bad: a key is [prefix/]name");
    refused(HEAD "\"labels\":{\"Example.com/x\":\"x\"}}", "labels.Example.com/x: a key");
    refused(HEAD "\"labels\":{\"a/b/c\":\"x\"}}", "labels.a/b/c: a key");
    refused(HEAD "\"labels\":{\"app\":\"has space\"}}", "labels.app: a label value");
    refused(HEAD "\"labels\":{\"app\":1}}", "labels.app: must be a string");
    refused(HEAD "\"node_selector\":{\"gpu-type\":\"a100!\"}}", "node_selector.gpu-type: a label");
    refused(HEAD "\"tolerations\":{}}", "tolerations: must be a list");
    refused(HEAD "\"tolerations\":[{\"key\":\"a\"},{\"key\":\"b\",\"operator\":\"In\"}]}",
            "tolerations[1].operator: must be Exists or Equal");
    refused(HEAD "\"tolerations\":[{\"key\":\"a\",\"effect\":\"NoRun\"}]}",
            "tolerations[0].effect: must be NoSchedule, PreferNoSchedule or NoExecute");
    refused(HEAD "\"tolerations\":[{\"operator\":\"Equal\",\"value\":\"v\"}]}",
            "tolerations[0].key: required with operator Equal");
    refused(HEAD "\"tolerations\":[{\"key\":\"a\",\"operator\":\"Exists\",\"value\":\"v\"}]}",
            "tolerations[0].value: must be empty with operator Exists");
    refused(HEAD "\"tolerations\":[{\"key\":\"a\",\"toleration_seconds\":5}]}",
            "tolerations[0].toleration_seconds: unknown field");
    refused(HEAD "\"spread\":[{\"topology_key\":\"zone\"}]}", "spread[0].max_skew: required");
    refused(HEAD "\"spread\":[{\"topology_key\":\"zone\",\"max_skew\":0}]}",
            "spread[0].max_skew: must be between 1 and 4096");
    refused(HEAD "\"spread\":[{\"max_skew\":1}]}", "spread[0].topology_key: required");
    refused(HEAD "\"spread\":[{\"topology_key\":\"z\",\"max_skew\":1},{\"topology_key\":\"z\","
                 "\"max_skew\":2}]}",
            "spread[1].topology_key: given twice");
    refused(HEAD "\"anti_affinity\":\"yes\"}", "anti_affinity: must be true or false");
    char big[5200];
    snprintf(big, sizeof(big), HEAD "\"annotations\":{\"a\":\"%04100d\"}}", 0);
    refused(big, "annotations.a: at most 4096 bytes");
    /* a refused spec leaves nothing behind (ASan: no leak of the labels parsed before) */
    refused(HEAD "\"labels\":{\"a\":\"b\"},\"spread\":[],"
                 "\"tolerations\":[{\"key\":\"a\"},"
                 "{\"effect\":\"x\"}]}",
            "tolerations[1].effect");
}

static void test_label_syntax(void **state)
{
    (void)state;
    assert_true(gp_label_key_ok("app"));
    assert_true(gp_label_key_ok("kubernetes.io/hostname"));
    assert_true(gp_label_key_ok("a.b-c/X_y.z"));
    assert_false(gp_label_key_ok(""));
    assert_false(gp_label_key_ok("/x"));
    assert_false(gp_label_key_ok("a/"));
    assert_false(gp_label_key_ok("a..b/x"));
    assert_false(gp_label_key_ok("x_"));
    char long_name[80];
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    assert_false(gp_label_key_ok(long_name));
    long_name[63] = '\0';
    assert_true(gp_label_key_ok(long_name));
    assert_true(gp_label_value_ok(""));
    assert_true(gp_label_value_ok("a100"));
    assert_false(gp_label_value_ok("a/b"));
    assert_int_equal(gp_taint_effect_parse("PreferNoSchedule"), GP_TAINT_PREFER_NO_SCHEDULE);
    assert_int_equal(gp_taint_effect_parse("noschedule"), -1);
    assert_string_equal(gp_taint_effect_name(GP_TAINT_NO_EXECUTE), "NoExecute");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_label_syntax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
