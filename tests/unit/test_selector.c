/*
 * Label selectors (gpupool/selector.h): kubectl's equality and set syntax, errors that name the
 * requirement, the canonical text, and what matches (absent labels included).
 */
#include "gpupool/selector.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gp_selector sel;

static void parse_ok(const char *text)
{
    gp_diag d;
    if (gp_selector_parse(text, &sel, &d) != 0) {
        fail_msg("%s: %s", text, d.msg);
    }
}

static void refused(const char *text, const char *want)
{
    gp_diag d;
    gp_selector s;
    int rc = gp_selector_parse(text, &s, &d);
    if (rc != GP_EINVAL || strcmp(d.msg, want) != 0) {
        fail_msg("%s: got %d \"%s\", want \"%s\"", text, rc, rc ? d.msg : "", want);
    }
}

static void canonical(const char *text, const char *want)
{
    char buf[GP_SELECTOR_TEXT_MAX];
    parse_ok(text);
    assert_int_equal(gp_selector_format(&sel, buf, sizeof(buf)), 0);
    assert_string_equal(buf, want);
}

static void test_syntax(void **state)
{
    (void)state;
    canonical("app=web,tier!=db,gpu,!debug", "app=web,tier!=db,gpu,!debug");
    canonical(" app == web , ! debug ", "app=web,!debug");
    canonical("env in (prod, qa),team notin(x)", "env in (prod,qa),team notin (x)");
    canonical("example.com/team=ml,app=", "example.com/team=ml,app=");
    canonical("", "");
    canonical("index=1,in=2", "index=1,in=2"); /* keys that start like the operators */
    parse_ok("app=web");
    assert_int_equal(sel.n, 1);
    assert_int_equal(sel.req[0].op, GP_SEL_EQ);
    refused("app=web,", "selector: a requirement starts with a label key ([prefix/]name)");
    refused("app=web tier=db", "selector: app: requirements are separated by commas");
    refused("app=a/b", "selector: app: a value is at most 63 of [A-Za-z0-9-_.], alphanumeric at "
                       "both ends");
    refused("env in prod", "selector: env: a set of values in parentheses must follow in / notin");
    refused("env in (a b)",
            "selector: env: values in a set are separated by commas and end with )");
    refused("=web", "selector: a requirement starts with a label key ([prefix/]name)");
    refused("-app", "selector: a requirement starts with a label key ([prefix/]name)");
    char many[400] = "";
    for (int i = 0; i < 17; i++) {
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%sk%d", i ? "," : "", i);
    }
    refused(many, "selector: at most 16 requirements");
}

static void test_matches(void **state)
{
    (void)state;
    gp_kv web[] = {{"app", "web"}, {"env", "prod"}, {"gpu", ""}};
    gp_kv db[] = {{"app", "db"}};
    parse_ok("app=web,gpu,!debug");
    assert_true(gp_selector_matches(&sel, web, 3));
    assert_false(gp_selector_matches(&sel, db, 1));
    parse_ok("tier!=db"); /* absent matches != */
    assert_true(gp_selector_matches(&sel, web, 3));
    parse_ok("app!=db");
    assert_false(gp_selector_matches(&sel, db, 1));
    parse_ok("env in (prod,qa)");
    assert_true(gp_selector_matches(&sel, web, 3));
    assert_false(gp_selector_matches(&sel, db, 1)); /* absent: not in */
    parse_ok("env notin (prod)");
    assert_false(gp_selector_matches(&sel, web, 3));
    assert_true(gp_selector_matches(&sel, db, 1)); /* absent: notin */
    parse_ok("");
    assert_true(gp_selector_matches(&sel, NULL, 0));
    parse_ok("app");
    assert_false(gp_selector_matches(&sel, NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
