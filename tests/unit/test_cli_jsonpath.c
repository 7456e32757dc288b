/* The JSONPath templates and custom columns of `gpupool get -o` (cli/jsonpath.h, cli/columns.h):
 * kubectl's forms over lists and single objects, errors naming their position, and the
 * canonical text that compiles back to the same template. */
#include "cli/columns.h"
#include "cli/jsonpath.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *list_doc =
    "{\"items\": [{\"name\": \"train-1\", \"state\": \"Running\", \"resources\": {\"gpus\": 2},"
    " \"labels\": {\"app\": \"llm\", \"kubernetes.io/role\": \"x\"}, \"nodes\": [\"n1\", \"n2\"]},"
    " {\"name\": \"eval\", \"state\": \"Pending\", \"resources\": {\"gpus\": 0.5},"
    " \"labels\": {}, \"nodes\": []}]}";

static void expect_run(const char *tmpl, const char *doc_text, const char *want)
{
    json_t *doc = json_loads(doc_text, JSON_DECODE_ANY, NULL);
    assert_non_null(doc);
    gp_jsonpath *p;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_jsonpath_compile(tmpl, &p, &d) != 0) {
        fail_msg("%s: refused: %s", tmpl, d.msg);
    }
    char *out;
    assert_int_equal(gp_jsonpath_run(p, doc, &out, &d), 0);
    if (strcmp(out, want) != 0) {
        fail_msg("%s gave \"%s\", expected \"%s\"", tmpl, out, want);
    }
    /* the canonical form does the same */
    char *canon = gp_jsonpath_format(p), *out2, *canon2;
    gp_jsonpath *q;
    assert_int_equal(gp_jsonpath_compile(canon, &q, &d), 0);
    assert_int_equal(gp_jsonpath_run(q, doc, &out2, &d), 0);
    assert_string_equal(out2, want);
    canon2 = gp_jsonpath_format(q);
    assert_string_equal(canon, canon2);
    free(out);
    free(out2);
    free(canon);
    free(canon2);
    gp_jsonpath_free(p);
    gp_jsonpath_free(q);
    json_decref(doc);
}

static void expect_error(const char *tmpl, const char *want)
{
    gp_jsonpath *p = (gp_jsonpath *)1;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_jsonpath_compile(tmpl, &p, &d), GP_EINVAL);
    assert_null(p);
    if (strcmp(d.msg, want) != 0) {
        fail_msg("%s: \"%s\", expected \"%s\"", tmpl, d.msg, want);
    }
}

static void test_kubectl_forms(void **state)
{
    (void)state;
    expect_run("{.items[*].name}", list_doc, "train-1 eval");
    expect_run("{range .items[*]}{.name}{\"\\t\"}{.state}{\"\\n\"}{end}", list_doc,
               "train-1\tRunning\neval\tPending\n");
    expect_run("{.name}", "{\"name\": \"train-1\"}", "train-1");
    expect_run("name={.name} gpus={.resources.gpus}",
               "{\"name\": \"a\", \"resources\": {\"gpus\": 0.25}}", "name=a gpus=0.25");
    expect_run("{.items[0].labels['kubernetes.io/role']}", list_doc, "x");
    expect_run("{.items[-1].name}", list_doc, "eval");
    expect_run("{$.items[1].resources}", list_doc, "{\"gpus\":0.5}");
    expect_run("{.items[0].nodes}", list_doc, "[\"n1\",\"n2\"]");
    expect_run("{.items[0].labels.*}", list_doc, "llm x");
    expect_run("{range .items[*]}[{range .nodes[*]}{@} {end}]{end}", list_doc, "[n1 n2 ][]");
    expect_run("{ .items[*].resources.gpus }", list_doc, "2 0.5");
    expect_run("{.}", "\"s\"", "s");
    expect_run("{$}", "true", "true");
}

static void test_missing_prints_nothing(void **state)
{
    (void)state;
    expect_run("<{.nope}{.items[7].name}{.items[0].name.x}>", list_doc, "<>");
    expect_run("{.items[*].labels.app}", list_doc, "llm");
}

static void test_errors_name_position(void **state)
{
    (void)state;
    expect_error("{.name", "position 1: '{' without its '}'");
    expect_error("ab}", "position 3: '}' without its '{' (write {\"}\"})");
    expect_error("{range .items[*]}{.name}", "position 1: {range} without its {end}");
    expect_error("x{end}", "position 2: {end} without its {range}");
    expect_error("{.items[?(@.x)]}", "position 8: filters ([?(...)]) are not supported");
    expect_error("{..name}", "position 2: recursive descent (..) is not supported");
    expect_error("{.items[0:2]}",
                 "position 10: slices and unions ([a:b], [a,b]) are not supported");
    expect_error("{.a.}", "position 5: expected a name after '.'");
    expect_error("{}", "position 2: empty expression");
    expect_error("{name}", "position 2: expected '.' or '['");
    expect_error("{\"\\q\"}", "position 3: unknown escape in a string");
    expect_error("{.a['b}", "position 1: '{' without its '}'");
    expect_error("{range .a}{range .b}{range .c}{range .d}{range .e}{range .f}{range .g}"
                 "{range .h}{range .i}{end}{end}{end}{end}{end}{end}{end}{end}{end}",
                 "position 82: ranges nested too deep");
}

static void expect_columns(const char *spec, const char *item_text, const char *want)
{
    gp_columns *c;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_columns_parse(spec, &c, &d) != 0) {
        fail_msg("%s: refused: %s", spec, d.msg);
    }
    json_t *item = json_loads(item_text, 0, NULL);
    char got[512] = "";
    for (int i = 0; i < gp_columns_count(c); i++) {
        char *cell = gp_columns_cell(c, i, item);
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s=%s", i ? " " : "",
                 gp_columns_header(c, i), cell);
        free(cell);
    }
    if (strcmp(got, want) != 0) {
        fail_msg("%s gave \"%s\", expected \"%s\"", spec, got, want);
    }
    char *canon = gp_columns_format(c);
    gp_columns *c2;
    assert_int_equal(gp_columns_parse(canon, &c2, &d), 0);
    char *canon2 = gp_columns_format(c2);
    assert_string_equal(canon, canon2);
    free(canon);
    free(canon2);
    gp_columns_free(c);
    gp_columns_free(c2);
    json_decref(item);
}

static void expect_columns_error(const char *spec, const char *want)
{
    gp_columns *c = (gp_columns *)1;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_columns_parse(spec, &c, &d), GP_EINVAL);
    assert_null(c);
    if (strcmp(d.msg, want) != 0) {
        fail_msg("%s: \"%s\", expected \"%s\"", spec, d.msg, want);
    }
}

static void test_custom_columns(void **state)
{
    (void)state;
    const char *job = "{\"name\": \"train-1\", \"resources\": {\"gpus\": 2}, \"nodes\": [\"a\", "
                      "\"b\"], \"labels\": {\"x,y\": \"1\"}}";
    expect_columns("NAME:.name,GPUS:.resources.gpus", job, "NAME=train-1 GPUS=2");
    expect_columns("NODES:{.nodes[*]},MISSING:.image", job, "NODES=a,b MISSING=<none>");
    expect_columns("L:.labels['x,y']", job, "L=1");
}

static void test_custom_columns_errors(void **state)
{
    (void)state;
    expect_columns_error("", "no columns: expected HEADER:PATH[,HEADER:PATH...]");
    expect_columns_error("NAME", "column 1: position 1: expected HEADER:PATH");
    expect_columns_error("NAME:.name,:.x", "column 2: position 12: empty header");
    expect_columns_error("NAME:.name,GPUS:.res..gpus",
                         "column 2 (GPUS): position 21: recursive descent (..) is not supported");
    expect_columns_error("NAME:name", "column 1 (NAME): position 6: expected '.' or '['");
    expect_columns_error("A:{.a}{.b}",
                         "column 1 (A): position 3: one path expected, not text or a range");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubectl_forms),         cmocka_unit_test(test_missing_prints_nothing),
        cmocka_unit_test(test_errors_name_position),  cmocka_unit_test(test_custom_columns),
        cmocka_unit_test(test_custom_columns_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
