/*
 * gpupool notebook open JOB: asks POST /v1/jobs/{job}/proxy-session for a one-time URL that
 * opens the notebook's proxy in a browser, and prints it in full (server and path). The code in
 * it works once, within a minute; the browser then holds a session cookie and the API token
 * never appears in a URL. A notebook Suspended for idleness is resumed by the same call (the
 * page answers once it runs again).
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"

#include <stdio.h>
#include <string.h>

static const gp_cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

static const gp_cli_spec notebook_spec = {
    "notebook",
    "notebook open JOB",
    "Prints a URL that opens the notebook JOB (by id or name) in a browser: it works once,\n"
    "within a minute. A notebook suspended for idleness is resumed.",
    no_opts,
    GP_CLI_CONN,
    2,
    2,
};

int gp_cli_notebook(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&notebook_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    if (strcmp(a.pos[0], "open") != 0) {
        rc = gp_cli_usage_error(a.spec, "notebook %s: unknown (only open)", a.pos[0]);
        gp_cli_args_fini(&a);
        return rc;
    }
    gp_cli_conn *c = NULL;
    char path[1200];
    json_t *doc = NULL;
    if (gp_cli_path(path, sizeof(path), "/v1/jobs", a.pos[1], "proxy-session") < 0) {
        fprintf(stderr, "gpupool: job %.40s...: name too long\n", a.pos[1]);
        rc = GP_EXIT_USAGE;
    } else if ((rc = gp_cli_connect(&a, &c)) == 0 &&
               (rc = gp_cli_call(c, "POST", path, NULL, &doc)) == 0) {
        const char *server = gp_cli_server(c);
        size_t n = strlen(server);
        while (n > 0 && server[n - 1] == '/') {
            n--;
        }
        if (json_is_true(json_object_get(doc, "resumed"))) {
            fprintf(stderr, "gpupool: %s was suspended for idleness: resuming\n", a.pos[1]);
        }
        printf("%.*s%s\n", (int)n, server, gp_out_str(doc, "url"));
    }
    json_decref(doc);
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
    return rc;
}
