/*
 * gpupool token create|list|revoke: API tokens (admin only). create prints the secret alone on
 * stdout, the one time the server shows it; list never shows secrets; revoke takes ids or
 * names.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/resource.h"

#include <string.h>

static const gp_cli_opt create_opts[] = {
    {"name", 0, "NAME", "the token's name (unique); required"},
    {"role", 0, "ROLE",
     "admin, operator, user, join or metrics (may only scrape /metrics); required"},
    {"tenant", 0, "T", "the tenant of a user token (required for role user)"},
    {"expires-in", 0, "DURATION", "expire after 3600, 90s, 30m, 2h or 30d (default never)"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec create_spec = {
    "token create",
    "token create --name NAME --role admin|operator|user|join|metrics [--tenant T]\n"
    "             [--expires-in 30d]",
    "Creates a token and prints its secret, which is not shown again.",
    create_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT,
    0,
    0,
};

static const gp_cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

static const gp_cli_spec list_spec = {
    "token list",
    "token list [-o table|wide|json|yaml]",
    "Lists the tokens (never their secrets).",
    no_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT,
    0,
    0,
};

static const gp_cli_spec revoke_spec = {
    "token revoke",
    "token revoke ID|NAME [ID|NAME...]",
    "Revokes tokens.",
    no_opts,
    GP_CLI_CONN,
    1,
    -1,
};

static int create(const gp_cli_args *a, gp_cli_conn *c)
{
    const char *name = gp_cli_arg(a, "name"), *role = gp_cli_arg(a, "role");
    const char *tenant = gp_cli_arg(a, "tenant"), *expires = gp_cli_arg(a, "expires-in");
    gp_out_format format;
    int64_t seconds = 0;
    if (!name || !role) {
        return gp_cli_usage_error(a->spec, "%s: required", !name ? "--name" : "--role");
    }
    if (expires && gp_cli_parse_seconds(expires, &seconds) < 0) {
        return gp_cli_usage_error(a->spec, "--expires-in: bad value \"%s\"", expires);
    }
    if (gp_out_format_parse(gp_cli_arg(a, "output"), &format) < 0) {
        return gp_cli_usage_error(a->spec, "-o: must be table, json or yaml");
    }
    json_t *body = json_pack("{s:s, s:s}", "name", name, "role", role), *doc = NULL;
    if (tenant) {
        json_object_set_new(body, "tenant", json_string(tenant));
    }
    if (seconds) {
        json_object_set_new(body, "expires_in", json_integer(seconds));
    }
    int rc = gp_cli_call(c, "POST", "/v1/tokens", body, &doc);
    if (rc == 0 && (format == GP_OUT_JSON || format == GP_OUT_YAML)) {
        rc = gp_out_doc(stdout, format, doc) < 0 ? GP_EXIT_FAILURE : 0;
    } else if (rc == 0) {
        printf("%s\n", gp_out_str(doc, "token"));
    }
    json_decref(body);
    json_decref(doc);
    return rc;
}

static int list(const gp_cli_args *a, gp_cli_conn *c)
{
    gp_out_format format;
    if (gp_out_format_parse(gp_cli_arg(a, "output"), &format) < 0) {
        return gp_cli_usage_error(a->spec, "-o: must be table, wide, json or yaml");
    }
    json_t *doc;
    int rc = gp_cli_call(c, "GET", "/v1/tokens", NULL, &doc);
    if (rc == 0 && gp_cli_kind_print(gp_cli_kind_find("tokens"), format,
                                     json_object_get(doc, "items"), stdout) < 0) {
        rc = GP_EXIT_FAILURE;
    }
    json_decref(doc);
    return rc;
}

static int revoke(const gp_cli_args *a, gp_cli_conn *c)
{
    int status = 0;
    for (int i = 0; i < a->npos; i++) {
        json_t *tok = NULL;
        int rc = gp_cli_kind_get(c, gp_cli_kind_find("tokens"), a->pos[i], &tok);
        if (rc == 0) {
            char path[64];
            snprintf(path, sizeof(path), "/v1/tokens/%lld", (long long)gp_out_int(tok, "id"));
            rc = gp_cli_call(c, "DELETE", path, NULL, NULL);
        }
        if (rc == 0) {
            printf("token %s (%lld) revoked\n", gp_out_str(tok, "name"),
                   (long long)gp_out_int(tok, "id"));
        }
        status = rc ? rc : status;
        json_decref(tok);
    }
    return status;
}

static int run(const gp_cli_spec *spec, int (*fn)(const gp_cli_args *, gp_cli_conn *), int argc,
               char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    gp_cli_conn *c = NULL;
    rc = gp_cli_connect(&a, &c);
    if (rc == 0) {
        rc = fn(&a, c);
    }
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
    return rc;
}

static int cmd_create(int argc, char **argv)
{
    return run(&create_spec, create, argc, argv);
}

static int cmd_list(int argc, char **argv)
{
    return run(&list_spec, list, argc, argv);
}

static int cmd_revoke(int argc, char **argv)
{
    return run(&revoke_spec, revoke, argc, argv);
}

static const gp_cli_sub subs[] = {
    {"create", cmd_create, "create a token and print its secret"},
    {"list", cmd_list, "list the tokens"},
    {"revoke", cmd_revoke, "revoke tokens"},
    {NULL, NULL, NULL},
};

int gp_cli_token(int argc, char **argv)
{
    return gp_cli_dispatch("token", subs, argc, argv);
}
