/* Job arrays and dependencies: the array syntax, the dependency verdict, and the spec fields
 * array, after_ok and shm_size_mib (parsed, refused with the field named, canonical). */
#include "gpupool/array.h"
#include "gpupool/jobspec.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

static gp_job_array parse_ok(const char *text)
{
    gp_job_array a;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_array_parse(text, strlen(text), "array", &a, &d);
    if (rc != 0) {
        fail_msg("%s: %s", text, d.msg);
    }
    return a;
}

/* The indices of text, as "i,j,k", and its canonical form. */
static void expect_indices(const char *text, const char *indices, const char *canon)
{
    gp_job_array a = parse_ok(text);
    char got[4096] = "";
    for (int64_t k = 0; k < gp_array_count(&a); k++) {
        char n[16];
        snprintf(n, sizeof(n), "%s%d", k ? "," : "", gp_array_at(&a, k));
        strcat(got, n);
    }
    assert_string_equal(got, indices);
    char buf[GP_ARRAY_TEXT_MAX];
    assert_int_equal(gp_array_format(&a, buf, sizeof(buf)), 0);
    assert_string_equal(buf, canon);
    gp_job_array again = parse_ok(buf);
    assert_true(gp_array_equal(&a, &again));
}

static void test_array_syntax(void **state)
{
    (void)state;
    expect_indices("0-3", "0,1,2,3", "0-3");
    expect_indices("7", "7", "7");
    expect_indices("1,3,5-7", "1,3,5,6,7", "1,3,5-7");
    expect_indices("0-10:3%2", "0,3,6,9", "0-9:3%2");
    expect_indices("5-5:4", "5", "5");
}

static void test_array_count_and_limit(void **state)
{
    (void)state;
    gp_job_array a = parse_ok("0-99%10");
    assert_int_equal(gp_array_count(&a), 100);
    assert_int_equal(a.max_running, 10);
    assert_int_equal(gp_array_at(&a, 99), 99);
    assert_int_equal(gp_array_at(&a, 100), -1);
    a = parse_ok("0-999998,9999999");
    assert_int_equal(gp_array_count(&a), GP_ARRAY_MAX_COUNT);
}

static void expect_bad(const char *text, const char *needle)
{
    gp_job_array a;
    memset(&a, 0x5a, sizeof(a));
    gp_job_array before = a;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_array_parse(text, strlen(text), "array", &a, &d);
    if (rc != GP_EINVAL || !strstr(d.msg, needle) || strncmp(d.msg, "array: ", 7) != 0) {
        fail_msg("%s: returned %d \"%s\", expected EINVAL naming \"%s\"", text, rc, d.msg, needle);
    }
    assert_memory_equal(&a, &before, sizeof(a));
}

static void test_array_errors(void **state)
{
    (void)state;
    expect_bad("", "expected an index");
    expect_bad("a-3", "expected an index");
    expect_bad("-3", "expected an index");
    expect_bad("5-3", "needs M");
    expect_bad("0-3:0", "step");
    expect_bad("0-3%0", "%MAX");
    expect_bad("0-3%", "%MAX");
    expect_bad("0-3%2x", "%MAX");
    expect_bad("0-3,3", "must go up");
    expect_bad("4,2", "must go up");
    expect_bad("0-3,", "expected an index");
    expect_bad("0-3 ", "unexpected");
    expect_bad("12345678", "expected an index");
    expect_bad("0-9999999", "at most 1000000 indices");
    char many[512] = "";
    for (int i = 0; i <= GP_ARRAY_MAX_ITEMS; i++) {
        char n[8];
        snprintf(n, sizeof(n), "%s%d", i ? "," : "", i);
        strcat(many, n);
    }
    expect_bad(many, "at most 64 items");
}

static void test_deps_decide(void **state)
{
    (void)state;
    int which = 7;
    assert_int_equal(gp_deps_decide(NULL, 0, &which), GP_DEPS_READY);
    assert_int_equal(which, -1);
    gp_dep_state ok[] = {GP_DEP_SUCCEEDED, GP_DEP_SUCCEEDED};
    assert_int_equal(gp_deps_decide(ok, 2, &which), GP_DEPS_READY);
    gp_dep_state wait[] = {GP_DEP_SUCCEEDED, GP_DEP_ACTIVE, GP_DEP_ACTIVE};
    assert_int_equal(gp_deps_decide(wait, 3, &which), GP_DEPS_WAIT);
    assert_int_equal(which, 1);
    /* one that failed decides at once, though another is still running */
    gp_dep_state failed[] = {GP_DEP_ACTIVE, GP_DEP_FAILED};
    assert_int_equal(gp_deps_decide(failed, 2, &which), GP_DEPS_FAIL);
    assert_int_equal(which, 1);
    gp_dep_state cancelled[] = {GP_DEP_SUCCEEDED, GP_DEP_CANCELLED};
    assert_int_equal(gp_deps_decide(cancelled, 2, &which), GP_DEPS_FAIL);
    assert_int_equal(which, 1);
    gp_dep_state gone[] = {GP_DEP_GONE};
    assert_int_equal(gp_deps_decide(gone, 1, &which), GP_DEPS_FAIL);
}

static void spec_error(const char *yaml, const char *needle)
{
    gp_jobspec s;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_jobspec_parse_yaml(yaml, strlen(yaml), &s, &d);
    if (rc != GP_EINVAL || !strstr(d.msg, needle)) {
        fail_msg("%s: returned %d \"%s\", expected EINVAL naming \"%s\"", yaml, rc, d.msg, needle);
    }
}

static void test_spec_fields(void **state)
{
    (void)state;
    const char *y = "name: sweep\ncommand: [x]\narray: \"0-10:5%2\"\nafter_ok: [prep, \"17\"]\n"
                    "shm_size_mib: 2048\n";
    gp_jobspec s;
    gp_diag d;
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_int_equal(gp_array_count(&s.array), 3);
    assert_int_equal(s.array.max_running, 2);
    assert_string_equal(s.after_ok[0], "prep");
    assert_string_equal(s.after_ok[1], "17");
    assert_null(s.after_ok[2]);
    assert_int_equal(s.shm_size_mib, 2048);
    json_t *o = gp_jobspec_to_json(&s);
    assert_string_equal(json_string_value(json_object_get(o, "array")), "0-10:5%2");
    assert_int_equal(json_integer_value(json_object_get(o, "shm_size_mib")), 2048);
    char *text = json_dumps(o, JSON_COMPACT);
    gp_jobspec t;
    assert_int_equal(gp_jobspec_parse_json(text, strlen(text), &t, &d), 0);
    assert_true(gp_jobspec_equal(&s, &t));
    t.shm_size_mib = 1;
    assert_false(gp_jobspec_equal(&s, &t));
    free(text);
    json_decref(o);
    gp_jobspec_fini(&s);
    gp_jobspec_fini(&t);
    /* none of them: not in the canonical form */
    y = "name: a\ncommand: [x]\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    o = gp_jobspec_to_json(&s);
    assert_null(json_object_get(o, "array"));
    assert_null(json_object_get(o, "after_ok"));
    assert_null(json_object_get(o, "shm_size_mib"));
    json_decref(o);
    gp_jobspec_fini(&s);
}

static void test_spec_errors(void **state)
{
    (void)state;
    spec_error("name: a\ncommand: [x]\narray: 5\n", "array: must be a string");
    spec_error("name: a\ncommand: [x]\narray: \"3-1\"\n", "array: a range N-M");
    spec_error("name: a\nkind: service\nport: 80\nimage: r/i\ncommand: [x]\narray: \"0-3\"\n",
               "array: only for a batch job");
    spec_error("name: a\ncommand: [x]\nafter_ok: []\n", "after_ok: must be a list of 1 to 64");
    spec_error("name: a\ncommand: [x]\nafter_ok: prep\n", "after_ok: must be a list");
    spec_error("name: a\ncommand: [x]\nafter_ok: [Prep]\n", "after_ok[0]: must be lower-case");
    spec_error("name: a\ncommand: [x]\nafter_ok: [b, b]\n", "after_ok[1]: b is named twice");
    spec_error("name: a\ncommand: [x]\nafter_ok: [b, a]\n", "after_ok[1]: a job cannot wait");
    spec_error("name: a\ncommand: [x]\nshm_size_mib: 0\n", "shm_size_mib: must be between 1");
    spec_error("name: a\ncommand: [x]\nshm_size_mib: 2000000\n", "shm_size_mib: must be between");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_array_syntax), cmocka_unit_test(test_array_count_and_limit),
        cmocka_unit_test(test_array_errors), cmocka_unit_test(test_deps_decide),
        cmocka_unit_test(test_spec_fields),  cmocka_unit_test(test_spec_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
