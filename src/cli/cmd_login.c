/*
 * gpupool login and gpupool whoami. login checks a server and token with GET /v1/whoami and
 * saves them in the config file (client.h) for the later commands; whoami shows who the
 * resolved token is.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"

static const gp_cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

static const gp_cli_spec login_spec = {
    "login",
    "login --server URL (--token TOKEN | --token-file PATH)",
    "Checks the server and token (GET /v1/whoami) and saves them, mode 0600, in\n"
    "$XDG_CONFIG_HOME/gpupool/config (default ~/.config/gpupool/config) for later commands.",
    no_opts,
    GP_CLI_CONN,
    0,
    0,
};

static const gp_cli_spec whoami_spec = {
    "whoami", "whoami [-o table|json|yaml]", "Shows the role, tenant and name of the token in use.",
    no_opts,  GP_CLI_CONN | GP_CLI_OUTPUT,   0,
    0,
};

/* GET /v1/whoami on t into *who; t->server becomes the URL as used (scheme added, no
 * trailing '/'). */
static int whoami(gp_cli_target *t, json_t **who)
{
    gp_cli_conn *c;
    *who = NULL;
    int rc = gp_cli_connect_to(t, &c);
    if (rc == 0) {
        snprintf(t->server, sizeof(t->server), "%s", gp_cli_server(c));
        rc = gp_cli_call(c, "GET", "/v1/whoami", NULL, who);
    }
    gp_cli_conn_free(c);
    return rc;
}

static void describe_who(const json_t *who)
{
    const char *tenant = gp_out_str(who, "tenant");
    printf("role %s, token %s%s%s\n", gp_out_str(who, "role"), gp_out_str(who, "token"),
           tenant[0] ? ", tenant " : "", tenant);
}

static int login(const gp_cli_args *a)
{
    gp_cli_target t;
    char path[1024];
    if (!gp_cli_arg(a, "server") || (!gp_cli_arg(a, "token") && !gp_cli_arg(a, "token-file"))) {
        return gp_cli_usage_error(a->spec, "--server and --token (or --token-file) are required");
    }
    if (gp_cli_config_path(path, sizeof(path)) < 0) {
        fprintf(stderr, "gpupool login: neither XDG_CONFIG_HOME nor HOME is set\n");
        return GP_EXIT_FAILURE;
    }
    int rc = gp_cli_resolve(a, &t);
    json_t *who = NULL;
    if (rc == 0) {
        rc = whoami(&t, &who);
    }
    gp_diag d;
    gp_diag_clear(&d);
    if (rc == 0 && gp_cli_config_write(path, &t, &d) < 0) {
        fprintf(stderr, "gpupool login: %s\n", d.msg);
        rc = GP_EXIT_FAILURE;
    }
    if (rc == 0) {
        printf("logged in to %s as ", t.server);
        describe_who(who);
        printf("wrote %s\n", path);
    }
    json_decref(who);
    return rc;
}

static int show_whoami(const gp_cli_args *a)
{
    gp_cli_target t;
    gp_out_format format;
    if (gp_out_format_parse(gp_cli_arg(a, "output"), &format) < 0) {
        return gp_cli_usage_error(a->spec, "-o: must be table, json or yaml");
    }
    int rc = gp_cli_resolve(a, &t);
    json_t *who = NULL;
    if (rc == 0) {
        rc = whoami(&t, &who);
    }
    if (rc == 0 && (format == GP_OUT_JSON || format == GP_OUT_YAML)) {
        rc = gp_out_doc(stdout, format, who) < 0 ? GP_EXIT_FAILURE : 0;
    } else if (rc == 0) {
        printf("%s: ", t.server);
        describe_who(who);
    }
    json_decref(who);
    return rc;
}

static int run(const gp_cli_spec *spec, int (*fn)(const gp_cli_args *), int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = fn(&a);
    gp_cli_args_fini(&a);
    return rc;
}

int gp_cli_login(int argc, char **argv)
{
    return run(&login_spec, login, argc, argv);
}

int gp_cli_whoami(int argc, char **argv)
{
    return run(&whoami_spec, show_whoami, argc, argv);
}
