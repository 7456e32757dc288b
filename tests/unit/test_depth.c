/*
 * The nesting limit of API bodies (src/net/yaml_json.c): gp_json_check_depth on JSON text and
 * the YAML reader, both at GP_JSON_MAX_DEPTH and one past it, with the place of the refusal;
 * brackets inside JSON strings (escapes included) do not count; a YAML document nested far
 * deeper than the limit, in flow and in block style, is refused without exhausting the stack.
 */
#include "gpupool/error.h"
#include "net/yaml_json.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n arrays around a 1, inside {"x": ...} when in_object: n + in_object deep. */
static char *nested_json(int n, int in_object)
{
    char *s = malloc((size_t)n * 2 + 16);
    assert_non_null(s);
    size_t k = 0;
    if (in_object) {
        k += (size_t)sprintf(s, "{\"x\": ");
    }
    memset(s + k, '[', (size_t)n);
    k += (size_t)n;
    s[k++] = '1';
    memset(s + k, ']', (size_t)n);
    k += (size_t)n;
    if (in_object) {
        s[k++] = '}';
    }
    s[k] = '\0';
    return s;
}

static int check_json(const char *text, gp_diag *d)
{
    gp_diag_clear(d);
    return gp_json_check_depth(text, strlen(text), GP_JSON_MAX_DEPTH, d);
}

static void test_json_depth(void **state)
{
    (void)state;
    gp_diag d;
    char *s = nested_json(GP_JSON_MAX_DEPTH, 0);
    assert_int_equal(check_json(s, &d), 0);
    free(s);
    s = nested_json(GP_JSON_MAX_DEPTH - 1, 1);
    assert_int_equal(check_json(s, &d), 0);
    free(s);

    s = nested_json(GP_JSON_MAX_DEPTH + 1, 0);
    assert_int_equal(check_json(s, &d), GP_EPARSE);
    assert_string_equal(d.msg, "line 1, column 65: nested deeper than 64 levels");
    free(s);
    s = nested_json(GP_JSON_MAX_DEPTH, 1); /* the object counts */
    assert_int_equal(check_json(s, &d), GP_EPARSE);
    free(s);

    /* The line and column of the bracket too deep. */
    assert_int_equal(gp_json_check_depth("{\n  \"a\": [[1]]\n}", 16, 2, &d), GP_EPARSE);
    assert_string_equal(d.msg, "line 2, column 9: nested deeper than 2 levels");

    /* Siblings do not add up; closing brackets give the depth back. */
    assert_int_equal(gp_json_check_depth("[[1],[2],{\"a\":[3]}]", 19, 3, &d), 0);
    assert_int_equal(gp_json_check_depth("[[1],[2],{\"a\":[[3]]}]", 21, 3, &d), GP_EPARSE);

    /* Brackets in strings are text, also after escaped quotes and backslashes. */
    const char *str = "{\"a\": \"[[[[{{{{\", \"b\": \"\\\"[[[[\", \"c\": \"\\\\\", \"d\": [1]}";
    assert_int_equal(gp_json_check_depth(str, strlen(str), 2, &d), 0);
    /* A backslash before the closing quote is itself escaped: the string ends there. */
    const char *str2 = "[\"\\\\\", [[1]]]";
    assert_int_equal(gp_json_check_depth(str2, strlen(str2), 2, &d), GP_EPARSE);

    /* Malformed text is the parser's business, not the scanner's. */
    assert_int_equal(gp_json_check_depth("]]]}}}", 6, 1, &d), 0);
    assert_int_equal(gp_json_check_depth("", 0, 1, &d), 0);
    /* Text past len is not read. */
    assert_int_equal(gp_json_check_depth("[[[", 1, 1, &d), 0);
}

static char *nested_yaml_flow(int n)
{
    char *s = malloc((size_t)n * 2 + 16);
    assert_non_null(s);
    size_t k = (size_t)sprintf(s, "x: ");
    memset(s + k, '[', (size_t)n);
    k += (size_t)n;
    s[k++] = '1';
    memset(s + k, ']', (size_t)n);
    k += (size_t)n;
    s[k++] = '\n';
    s[k] = '\0';
    return s;
}

/* A block mapping n deep: "k0:\n  k1:\n    k2: ..." with a scalar at the bottom. */
static char *nested_yaml_block(int n)
{
    size_t cap = (size_t)n * (size_t)n * 2 + (size_t)n * 16 + 16;
    char *s = malloc(cap);
    assert_non_null(s);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        memset(s + k, ' ', (size_t)i * 2);
        k += (size_t)i * 2;
        k += (size_t)snprintf(s + k, cap - k, "k%d:%s\n", i, i == n - 1 ? " 1" : "");
    }
    s[k] = '\0';
    return s;
}

static int yaml(const char *text, gp_diag *d)
{
    json_t *out = NULL;
    gp_diag_clear(d);
    int rc = gp_yaml_to_json(text, strlen(text), &out, d);
    assert_true(rc == 0 ? out != NULL : out == NULL);
    json_decref(out);
    return rc;
}

static void test_yaml_depth(void **state)
{
    (void)state;
    gp_diag d;
    /* The top mapping is depth 1, so 63 sequences inside it make 64. */
    char *s = nested_yaml_flow(GP_JSON_MAX_DEPTH - 1);
    assert_int_equal(yaml(s, &d), 0);
    free(s);
    s = nested_yaml_flow(GP_JSON_MAX_DEPTH);
    assert_int_equal(yaml(s, &d), GP_EPARSE);
    assert_string_equal(d.msg, "line 1, column 67: nested deeper than 64 levels");
    free(s);

    s = nested_yaml_block(GP_JSON_MAX_DEPTH);
    assert_int_equal(yaml(s, &d), 0);
    free(s);
    s = nested_yaml_block(GP_JSON_MAX_DEPTH + 1);
    assert_int_equal(yaml(s, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "line 65, column"));
    assert_non_null(strstr(d.msg, "nested deeper than 64 levels"));
    free(s);

    /* Far deeper: refused at the limit, long before the stack could run out. */
    s = nested_yaml_flow(200000);
    assert_int_equal(yaml(s, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "nested deeper than 64 levels"));
    free(s);
    s = nested_yaml_block(1000);
    assert_int_equal(yaml(s, &d), GP_EPARSE);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_depth),
        cmocka_unit_test(test_yaml_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
