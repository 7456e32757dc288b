/*
 * gpupool audit: the audit log (GET /v1/audit, admins only), oldest first, as a table or as the
 * server's records in JSON or YAML. The filters are the server's; --since and --until also take
 * a duration back from now (30m, 2h, 7d) besides milliseconds since the epoch and RFC 3339
 * times. Records come in pages: --all follows the "next" cursor to the end; without it a table
 * that has more says so on stderr.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/resource.h"

#include <stdlib.h>
#include <string.h>

static const gp_cli_opt audit_opts[] = {
    {"since", 0, "T", "records at or after T: 2024-05-01T12:00:00Z, milliseconds, or 2h (ago)"},
    {"until", 0, "T", "records before T (as --since)"},
    {"actor", 0, "A", "only by actor A (a token's name, scheduler or controller)"},
    {"tenant", 0, "T", "only of tenant T"},
    {"action", 0, "A", "only action A (job.submit; placement.* for both placement actions)"},
    {"object", 0, "O", "only object O (job/42, node/gpu-01; node/* for every node)"},
    {"limit", 0, "N", "at most N per page (1..1000; default 100)"},
    {"all", 0, NULL, "every page, not only the first"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec audit_spec = {
    "audit",
    "audit [--since T] [--until T] [--actor A] [--tenant T] [--action A] [--object O] "
    "[--limit N] [--all] [-o table|wide|json|yaml]",
    "Shows the audit log, oldest first: every change made through the API and every\n"
    "placement made or ended, with who did it (admin tokens only).",
    audit_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT,
    0,
    0,
};

/* ---- the table ---- */

static void c_time(const json_t *r, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_time(gp_out_int(r, "time_ms"), buf, cap);
}

static void c_id(const json_t *r, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%lld", (long long)gp_out_int(r, "id"));
}

#define STR_CELL(fn, key)                                                                          \
    static void fn(const json_t *r, int64_t now, char *buf, size_t cap)                            \
    {                                                                                              \
        (void)now;                                                                                 \
        snprintf(buf, cap, "%s", gp_out_str(r, key));                                              \
    }
STR_CELL(c_actor, "actor")
STR_CELL(c_role, "role")
STR_CELL(c_tenant, "tenant")
STR_CELL(c_action, "action")
STR_CELL(c_object, "object")

/* The detail as compact JSON; the table shows its start, -o wide all a cell holds. */
static void detail(const json_t *r, char *buf, size_t cap, size_t shown)
{
    const json_t *v = json_object_get(r, "detail");
    char *text = json_is_string(v) ? strdup(json_string_value(v)) : json_dumps(v, JSON_COMPACT);
    if (!text) {
        return;
    }
    size_t n = strlen(text);
    if (n > shown && shown + 4 <= cap) {
        snprintf(buf, cap, "%.*s...", (int)shown - 3, text);
    } else {
        snprintf(buf, cap, "%s", text);
    }
    free(text);
}

static void c_detail(const json_t *r, int64_t now, char *buf, size_t cap)
{
    (void)now;
    detail(r, buf, cap, 60);
}

static void c_detail_wide(const json_t *r, int64_t now, char *buf, size_t cap)
{
    (void)now;
    detail(r, buf, cap, cap - 1);
}

/* DETAIL is the last column: the narrow one in a table, the whole one in -o wide. */
static const gp_cli_column audit_cols[] = {
    {"ID", 1, c_id},         {"TIME", 0, c_time},     {"ACTOR", 0, c_actor},
    {"ROLE", 0, c_role},     {"TENANT", 0, c_tenant}, {"ACTION", 0, c_action},
    {"OBJECT", 0, c_object}, {"DETAIL", 0, c_detail}, {NULL, 0, NULL},
};

static const gp_cli_column audit_cols_wide[] = {
    {"ID", 1, c_id},         {"TIME", 0, c_time},          {"ACTOR", 0, c_actor},
    {"ROLE", 0, c_role},     {"TENANT", 0, c_tenant},      {"ACTION", 0, c_action},
    {"OBJECT", 0, c_object}, {"DETAIL", 0, c_detail_wide}, {NULL, 0, NULL},
};

/* ---- the query ---- */

/* A time option as the server takes it: a duration with its unit (30m, 2h) becomes the time
 * that long ago, in milliseconds; anything else is passed on for the server to check. */
static void time_value(const char *v, char *out, size_t cap)
{
    size_t n = strlen(v);
    int64_t seconds;
    if (n > 1 && strchr("smhd", v[n - 1]) && gp_cli_parse_seconds(v, &seconds) == 0) {
        snprintf(out, cap, "%lld", (long long)(gp_out_now_ms() - seconds * 1000));
    } else {
        snprintf(out, cap, "%s", v);
    }
}

static int build_query(const gp_cli_args *a, char *q, size_t cap)
{
    static const char *const keys[] = {"actor", "tenant", "action", "object", "limit"};
    static const char *const times[] = {"since", "until"};
    q[0] = '\0';
    int64_t limit;
    const char *lim = gp_cli_arg(a, "limit");
    if (lim && gp_cli_parse_int(lim, 1, 1000, &limit) < 0) {
        return gp_cli_usage_error(a->spec, "--limit: must be an integer between 1 and 1000");
    }
    for (int i = 0; i < 2; i++) {
        const char *v = gp_cli_arg(a, times[i]);
        char t[128];
        if (v) {
            time_value(v, t, sizeof(t));
            if (gp_cli_query_add(q, cap, times[i], t) < 0) {
                return gp_cli_usage_error(a->spec, "--%s: too long", times[i]);
            }
        }
    }
    for (int i = 0; i < 5; i++) {
        const char *v = gp_cli_arg(a, keys[i]);
        if (v && gp_cli_query_add(q, cap, keys[i], v) < 0) {
            return gp_cli_usage_error(a->spec, "--%s: too long", keys[i]);
        }
    }
    return 0;
}

static int run(const gp_cli_args *a)
{
    gp_out_format format;
    if (gp_out_format_parse(gp_cli_arg(a, "output"), &format) < 0) {
        return gp_cli_usage_error(a->spec, "-o: must be table, wide, json or yaml");
    }
    char query[1400];
    int rc = build_query(a, query, sizeof(query));
    if (rc != 0) {
        return rc;
    }
    gp_cli_conn *c;
    rc = gp_cli_connect(a, &c);
    if (rc != 0) {
        return rc;
    }
    json_t *items = json_array();
    int more = 0;
    rc = items ? gp_cli_get_pages(c, "/v1/audit", query, gp_cli_arg(a, "all") != NULL, items, &more)
               : GP_EXIT_FAILURE;
    gp_cli_conn_free(c);
    const gp_cli_kind kind = {"audit record",
                              "audit records",
                              NULL,
                              "/v1/audit",
                              1,
                              1,
                              format == GP_OUT_WIDE ? audit_cols_wide : audit_cols};
    if (rc == 0 && gp_cli_kind_print(&kind, format, items, stdout) < 0) {
        fprintf(stderr, "gpupool audit: out of memory\n");
        rc = GP_EXIT_FAILURE;
    }
    if (rc == 0 && more && format <= GP_OUT_WIDE) {
        fprintf(stderr, "gpupool audit: more records on later pages: add --all\n");
    }
    json_decref(items);
    return rc;
}

int gp_cli_audit(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&audit_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = run(&a);
    gp_cli_args_fini(&a);
    return rc;
}
