/*
 * gpupool tenant registry set|list|delete: a tenant's credentials for image registries
 * (/v1/tenants/{tenant}/registries). set takes the user name as a flag and the password from
 * standard input (asked without echo on a terminal) or from a file (--password-file), never
 * from the command line, where other users could read it in the process list. list shows the
 * registries, user names and when each was set, never a password.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define PASSWORD_MAX 8192

static const gp_cli_opt set_opts[] = {
    {"username", 'u', "USER", "the user name at the registry (required)"},
    {"password-file", 0, "FILE",
     "read the password from FILE (its first line); default: standard input"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

static const gp_cli_spec set_spec = {
    "tenant registry set",
    "tenant registry set TENANT REGISTRY --username USER [--password-file FILE]",
    "Sets the tenant's credentials for REGISTRY (HOST[:PORT], e.g. 127.0.0.1:5000 or nvcr.io),\n"
    "replacing earlier ones. The password is read from FILE or from standard input (asked for\n"
    "without echo on a terminal); only the node pulling one of the tenant's images from\n"
    "REGISTRY receives it. Admins and operators.",
    set_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT,
    2,
    2,
};

static const gp_cli_spec list_spec = {
    "tenant registry list",
    "tenant registry list TENANT",
    "Lists the registries the tenant has credentials for (never the passwords).",
    no_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT,
    1,
    1,
};

static const gp_cli_spec delete_spec = {
    "tenant registry delete",
    "tenant registry delete TENANT REGISTRY...",
    "Deletes the tenant's credentials for each REGISTRY.",
    no_opts,
    GP_CLI_CONN,
    2,
    -1,
};

/* Reads the first line of f (without its line end) into buf. 0, or -1 with why set. */
static int read_line(FILE *f, char *buf, size_t cap, const char **why)
{
    if (!fgets(buf, (int)cap, f)) {
        *why = ferror(f) ? strerror(errno) : "no password given";
        return -1;
    }
    size_t n = strlen(buf);
    if (n > 0 && buf[n - 1] != '\n' && !feof(f)) {
        *why = "longer than 8191 bytes";
        return -1;
    }
    buf[strcspn(buf, "\r\n")] = '\0';
    if (!buf[0]) {
        *why = "the password is empty";
        return -1;
    }
    return 0;
}

/* The password from --password-file or standard input (no echo on a terminal). */
static int read_password(const gp_cli_args *a, char *buf, size_t cap)
{
    const char *path = gp_cli_arg(a, "password-file"), *why = NULL;
    FILE *f = path ? fopen(path, "r") : stdin;
    if (!f) {
        fprintf(stderr, "gpupool tenant registry set: %s: %s\n", path, strerror(errno));
        return GP_EXIT_USAGE;
    }
    struct termios old, quiet;
    int tty = !path && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0;
    if (tty) {
        fprintf(stderr, "Password: ");
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    int rc = read_line(f, buf, cap, &why);
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        fputc('\n', stderr);
    }
    if (path) {
        fclose(f);
    }
    if (rc < 0) {
        fprintf(stderr, "gpupool tenant registry set: %s: %s\n", path ? path : "standard input",
                why);
        return GP_EXIT_USAGE;
    }
    return 0;
}

static int path_of(char *buf, size_t cap, const char *tenant, const char *registry)
{
    char t[512], r[512];
    if (gp_cli_escape(tenant, t, sizeof(t)) < 0 ||
        (registry && gp_cli_escape(registry, r, sizeof(r)) < 0)) {
        return -1;
    }
    int n = snprintf(buf, cap, "/v1/tenants/%s/registries%s%s", t, registry ? "/" : "",
                     registry ? r : "");
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int set(const gp_cli_args *a, gp_cli_conn *c, gp_out_format format)
{
    const char *user = gp_cli_arg(a, "username");
    if (!user || !user[0]) {
        return gp_cli_usage_error(a->spec, "--username is required");
    }
    char path[1200], *password = calloc(1, PASSWORD_MAX);
    if (!password || path_of(path, sizeof(path), a->pos[0], a->pos[1]) < 0) {
        free(password);
        return gp_cli_usage_error(a->spec, "tenant or registry too long");
    }
    int rc = read_password(a, password, PASSWORD_MAX);
    json_t *body = rc == 0 ? json_pack("{s:s, s:s}", "username", user, "password", password) : NULL;
    memset(password, 0, PASSWORD_MAX);
    free(password);
    json_t *answer = NULL;
    if (rc == 0) {
        rc = body ? gp_cli_call(c, "PUT", path, body, &answer) : GP_EXIT_FAILURE;
    }
    json_decref(body);
    if (rc == 0 && (format == GP_OUT_JSON || format == GP_OUT_YAML)) {
        rc = gp_out_doc(stdout, format, answer) < 0 ? GP_EXIT_FAILURE : 0;
    } else if (rc == 0) {
        printf("registry %s of tenant %s set (user %s)\n", gp_out_str(answer, "registry"),
               a->pos[0], gp_out_str(answer, "username"));
    }
    json_decref(answer);
    return rc;
}

static int list(const gp_cli_args *a, gp_cli_conn *c, gp_out_format format)
{
    char path[1200];
    json_t *doc = NULL;
    if (path_of(path, sizeof(path), a->pos[0], NULL) < 0) {
        return gp_cli_usage_error(a->spec, "tenant name too long");
    }
    int rc = gp_cli_call(c, "GET", path, NULL, &doc);
    if (rc == 0 && (format == GP_OUT_JSON || format == GP_OUT_YAML)) {
        rc = gp_out_doc(stdout, format, doc) < 0 ? GP_EXIT_FAILURE : 0;
    } else if (rc == 0) {
        static const char *const head[] = {"REGISTRY", "USERNAME", "UPDATED"};
        gp_out_table *t = gp_out_table_new(head, 3);
        int64_t now = gp_out_now_ms();
        size_t i;
        const json_t *e;
        json_array_foreach(json_object_get(doc, "items"), i, e)
        {
            char age[32];
            gp_out_age(now, gp_out_int(e, "updated_ms"), age, sizeof(age));
            const char *row[] = {gp_out_str(e, "registry"), gp_out_str(e, "username"), age};
            if (t && gp_out_table_add(t, row) < 0) {
                gp_out_table_free(t);
                t = NULL;
            }
        }
        if (t) {
            gp_out_table_print(t, stdout, 0);
        }
        rc = t ? 0 : GP_EXIT_FAILURE;
        gp_out_table_free(t);
    }
    json_decref(doc);
    return rc;
}

static int delete_all(const gp_cli_args *a, gp_cli_conn *c)
{
    int status = 0;
    for (int i = 1; i < a->npos; i++) {
        char path[1200];
        if (path_of(path, sizeof(path), a->pos[0], a->pos[i]) < 0) {
            return gp_cli_usage_error(a->spec, "tenant or registry too long");
        }
        int rc = gp_cli_call(c, "DELETE", path, NULL, NULL);
        if (rc == 0) {
            printf("registry %s of tenant %s deleted\n", a->pos[i], a->pos[0]);
        } else {
            status = rc;
        }
    }
    return status;
}

static int run(const gp_cli_spec *spec, int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    gp_out_format format = GP_OUT_TABLE;
    gp_cli_conn *c = NULL;
    if (gp_out_format_parse(gp_cli_arg(&a, "output"), &format) < 0 || format == GP_OUT_WIDE) {
        rc = gp_cli_usage_error(spec, "-o: must be table, json or yaml");
    } else if ((rc = gp_cli_connect(&a, &c)) == 0) {
        rc = spec == &set_spec    ? set(&a, c, format)
             : spec == &list_spec ? list(&a, c, format)
                                  : delete_all(&a, c);
    }
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
    return rc;
}

int gp_cli_tenant_registry(int argc, char **argv)
{
    static const struct {
        const char *name;
        const gp_cli_spec *spec;
    } subs[] = {{"set", &set_spec}, {"list", &list_spec}, {"delete", &delete_spec}};
    for (size_t i = 0; argc >= 2 && i < sizeof(subs) / sizeof(subs[0]); i++) {
        if (strcmp(argv[1], subs[i].name) == 0) {
            return run(subs[i].spec, argc - 1, argv + 1);
        }
    }
    int help = argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                             strcmp(argv[1], "help") == 0);
    if (!help && argc < 2) {
        fprintf(stderr, "gpupool tenant registry: missing subcommand\n");
    } else if (!help) {
        fprintf(stderr, "gpupool tenant registry: unknown subcommand \"%s\"\n", argv[1]);
    }
    fprintf(help ? stdout : stderr,
            "usage: gpupool tenant registry set|list|delete TENANT ...\n\n"
            "subcommands:\n"
            "  set TENANT REGISTRY --username USER [--password-file FILE]\n"
            "             set the tenant's credentials for an image registry\n"
            "  list TENANT\n"
            "             list the registries it has credentials for (never the passwords)\n"
            "  delete TENANT REGISTRY...\n"
            "             delete its credentials for each registry\n");
    return help ? GP_EXIT_OK : GP_EXIT_USAGE;
}
