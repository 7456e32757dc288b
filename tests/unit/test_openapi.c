/*
 * The OpenAPI document built into gpupoold (docs/openapi.json, served at /openapi.json)
 * documents exactly the routes of api_routes: every route has its operation, with the route's
 * summary, its path parameters declared, the roles of its role bits in x-roles and a bearer
 * token required unless anyone may call it; and every documented operation is a route.
 *
 * A route's parameter that takes the rest of the path ("/ui/{path...}") is documented as an
 * ordinary one ("/ui/{path}"), since OpenAPI has no such parameter.
 *
 * The checker also runs on altered route tables (a route added, one removed, roles changed), so
 * the test is seen to fail when the document and the table drift apart.
 */
#include "ctl/api.h"
#include "tests/unit/harness.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char gp_openapi_json[];
extern const unsigned long gp_openapi_json_len;

static const char *const methods[] = {"get",  "put",   "post",  "delete", "options",
                                      "head", "patch", "trace", NULL};

static json_t *load_doc(void)
{
    json_error_t err;
    json_t *doc = json_loadb(gp_openapi_json, gp_openapi_json_len, JSON_REJECT_DUPLICATES, &err);
    if (!doc) {
        fail_msg("docs/openapi.json: line %d, column %d: %s", err.line, err.column, err.text);
    }
    return doc;
}

/* Records one problem: counts it and prints it, so a failing run says what drifted. */
static void problem(int *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(int *n, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    print_message("openapi: %s\n", line);
    (*n)++;
}

/* Follows a local "$ref" ("#/components/parameters/job") within doc. */
static json_t *deref(json_t *doc, json_t *v)
{
    const char *ref = json_string_value(json_object_get(v, "$ref"));
    if (!ref || strncmp(ref, "#/", 2) != 0) {
        return v;
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", ref + 2);
    json_t *cur = doc;
    char *save = NULL;
    for (char *tok = strtok_r(buf, "/", &save); tok && cur; tok = strtok_r(NULL, "/", &save)) {
        cur = json_object_get(cur, tok);
    }
    return cur;
}

/* Whether op declares a path parameter called name. */
static bool has_path_param(json_t *doc, json_t *op, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(op, "parameters"), i, p)
    {
        p = deref(doc, p);
        const char *in = json_string_value(json_object_get(p, "in"));
        const char *pname = json_string_value(json_object_get(p, "name"));
        if (json_is_true(json_object_get(p, "required")) && in && strcmp(in, "path") == 0 &&
            pname && strcmp(pname, name) == 0) {
            return true;
        }
    }
    return false;
}

/* The role bits an operation's x-roles names; UINT32_MAX when it is not a list of roles. */
static unsigned roles_of(json_t *op)
{
    json_t *list = json_object_get(op, "x-roles");
    if (!json_is_array(list)) {
        return UINT32_MAX;
    }
    unsigned bits = 0;
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        ctl_role r;
        if (!json_is_string(v) || ctl_role_parse(json_string_value(v), &r) < 0) {
            return UINT32_MAX;
        }
        bits |= 1u << r;
    }
    return bits;
}

/* Whether op needs the bearer token: its own security, else the document's. */
static bool needs_bearer(json_t *doc, json_t *op)
{
    json_t *sec = json_object_get(op, "security");
    if (!sec) {
        sec = json_object_get(doc, "security");
    }
    size_t i;
    json_t *req;
    json_array_foreach(sec, i, req)
    {
        if (json_object_get(req, "bearer")) {
            return true;
        }
    }
    return false;
}

/* The document's path of a route pattern: "{path...}" as "{path}". */
static void doc_path(const char *pattern, char *buf, size_t cap)
{
    size_t k = 0;
    for (const char *p = pattern; *p && k + 1 < cap; p++) {
        if (strncmp(p, "...}", 4) != 0) {
            buf[k++] = *p;
        } else {
            p += 2; /* the '}' comes next */
        }
    }
    buf[k] = '\0';
}

/* Checks one route against the document; problems are counted in *n. */
static void check_route(json_t *doc, const api_route *r, int *n)
{
    char method[16];
    size_t len = strlen(r->method);
    assert_true(len < sizeof(method));
    for (size_t i = 0; i <= len; i++) {
        method[i] =
            (char)(r->method[i] >= 'A' && r->method[i] <= 'Z' ? r->method[i] + 32 : r->method[i]);
    }
    char path[256];
    doc_path(r->pattern, path, sizeof(path));
    json_t *op = json_object_get(json_object_get(json_object_get(doc, "paths"), path), method);
    if (!json_is_object(op)) {
        problem(n, "%s %s: not documented", r->method, r->pattern);
        return;
    }
    const char *summary = json_string_value(json_object_get(op, "summary"));
    if (!summary || strcmp(summary, r->summary) != 0) {
        problem(n, "%s %s: summary differs from the route table's", r->method, r->pattern);
    }
    /* Monitoring routes document who may call them once metrics.auth asks for a token. */
    unsigned roles = r->roles == R_SCRAPE ? R_SCRAPERS : r->roles;
    if (roles_of(op) != roles) {
        problem(n, "%s %s: x-roles differ from the route's role bits", r->method, r->pattern);
    }
    if (needs_bearer(doc, op) != (r->roles != R_ANYONE)) {
        problem(n, "%s %s: security differs (a bearer token iff the route needs one)", r->method,
                r->pattern);
    }
    for (const char *p = strchr(path, '{'); p; p = strchr(p + 1, '{')) {
        const char *close = strchr(p, '}');
        assert_non_null(close);
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)(close - p - 1), p + 1);
        if (!has_path_param(doc, op, name)) {
            problem(n, "%s: path parameter %s not declared", r->pattern, name);
        }
    }
}

/* Every documented operation must be a route of the table. */
static void check_documented(json_t *doc, const api_route *routes, int *n)
{
    const char *path;
    json_t *item;
    json_object_foreach(json_object_get(doc, "paths"), path, item)
    {
        for (int m = 0; methods[m]; m++) {
            if (!json_object_get(item, methods[m])) {
                continue;
            }
            bool found = false;
            for (const api_route *r = routes; r->method && !found; r++) {
                char rpath[256];
                doc_path(r->pattern, rpath, sizeof(rpath));
                found = strcmp(rpath, path) == 0 && strcasecmp(r->method, methods[m]) == 0;
            }
            if (!found) {
                problem(n, "%s %s: documented but not a route", methods[m], path);
            }
        }
    }
}

/* Number of differences between the document and a route table. */
static int problems(json_t *doc, const api_route *routes)
{
    int n = 0;
    for (const api_route *r = routes; r->method; r++) {
        check_route(doc, r, &n);
    }
    check_documented(doc, routes, &n);
    return n;
}

static int count_routes(void)
{
    int n = 0;
    while (api_routes[n].method) {
        n++;
    }
    return n;
}

static void test_document_shape(void **state)
{
    (void)state;
    assert_int_equal(strlen(gp_openapi_json), gp_openapi_json_len);
    json_t *doc = load_doc();
    assert_string_equal(json_string_value(json_object_get(doc, "openapi")), "3.0.3");
    json_t *bearer = json_object_get(
        json_object_get(json_object_get(doc, "components"), "securitySchemes"), "bearer");
    assert_string_equal(json_string_value(json_object_get(bearer, "scheme")), "bearer");
    json_t *error =
        json_object_get(json_object_get(json_object_get(doc, "components"), "schemas"), "Error");
    assert_non_null(json_object_get(json_object_get(error, "properties"), "error"));
    json_decref(doc);
}

static void test_documents_every_route(void **state)
{
    (void)state;
    json_t *doc = load_doc();
    assert_true(count_routes() > 0);
    assert_int_equal(problems(doc, api_routes), 0);
    json_decref(doc);
}

/* A copy of api_routes with room for one more route. */
static api_route *copy_routes(int extra)
{
    int n = count_routes();
    api_route *copy = calloc((size_t)(n + 1 + extra), sizeof(*copy));
    assert_non_null(copy);
    memcpy(copy, api_routes, sizeof(*copy) * (size_t)n);
    return copy;
}

static void test_detects_undocumented_route(void **state)
{
    (void)state;
    json_t *doc = load_doc();
    api_route *routes = copy_routes(1);
    int n = count_routes();
    routes[n] = (api_route){"GET", "/v1/undocumented", R_PEOPLE, NULL, "Not in the document"};
    assert_int_equal(problems(doc, routes), 1);
    /* A new method on a documented path is just as undocumented. */
    routes[n] = (api_route){"PATCH", "/v1/jobs/{job}", R_PEOPLE, NULL, "Change a job"};
    assert_int_equal(problems(doc, routes), 1);
    free(routes);
    json_decref(doc);
}

static void test_detects_removed_route(void **state)
{
    (void)state;
    json_t *doc = load_doc();
    api_route *routes = copy_routes(0);
    int n = count_routes();
    memmove(&routes[0], &routes[1], sizeof(*routes) * (size_t)n); /* drops the first route */
    assert_int_equal(problems(doc, routes), 1);
    free(routes);
    json_decref(doc);
}

static void test_detects_changed_roles(void **state)
{
    (void)state;
    json_t *doc = load_doc();
    api_route *routes = copy_routes(0);
    int n = count_routes();
    int changed = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(routes[i].pattern, "/v1/tokens") == 0 && routes[i].roles == R_ADMIN) {
            routes[i].roles = R_STAFF;
            changed++;
        }
    }
    assert_true(changed > 0);
    assert_int_equal(problems(doc, routes), changed);
    /* A route that stops needing a token differs in x-roles and in security. */
    memcpy(routes, api_routes, sizeof(*routes) * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (strcmp(routes[i].pattern, "/v1/whoami") == 0) {
            routes[i].roles = R_ANYONE;
        }
    }
    assert_int_equal(problems(doc, routes), 2);
    free(routes);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_document_shape),
        cmocka_unit_test(test_documents_every_route),
        cmocka_unit_test(test_detects_undocumented_route),
        cmocka_unit_test(test_detects_removed_route),
        cmocka_unit_test(test_detects_changed_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
