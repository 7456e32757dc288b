/*
 * gpupool config get-contexts|current-context|use-context|set-context|delete-context: named
 * contexts for several clusters in the config file (cliconfig.h), each a server, a token file
 * and a CA file. The config file keeps what `gpupool login` saved; a context's token lives in
 * a file of its own, mode 0600: --token writes it (beside the config file, tokens/NAME), or
 * --token-file names one that only its owner can read.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/cliconfig.h"
#include "cli/output.h"
#include "cli/secretfile.h"
#include "net/servers.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const gp_cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};
static const gp_cli_opt list_opts[] = {
    {"output", 'o', "FORMAT", "table, json or yaml"},
    {NULL, 0, NULL, NULL},
};
static const gp_cli_opt set_opts[] = {
    {"server", 0, "URL", "the cluster's gpupoold (a comma-separated list for several)"},
    {"token", 0, "TOKEN", "its API token, saved in a 0600 file beside the config file"},
    {"token-file", 0, "PATH", "its API token is in PATH (a file only its owner can read)"},
    {"cacert", 0, "FILE", "CA certificates (PEM) to trust for its https server"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec list_spec = {"config get-contexts",
                                      "config get-contexts [-o FORMAT]",
                                      "Lists the contexts; '*' marks the current one.",
                                      list_opts,
                                      0,
                                      0,
                                      0};
static const gp_cli_spec current_spec = {"config current-context",
                                         "config current-context",
                                         "Prints the current context's name.",
                                         no_opts,
                                         0,
                                         0,
                                         0};
static const gp_cli_spec use_spec = {"config use-context",
                                     "config use-context NAME",
                                     "Makes NAME the context later commands use.",
                                     no_opts,
                                     0,
                                     1,
                                     1};
static const gp_cli_spec set_spec = {
    "config set-context",
    "config set-context NAME [--server URL] [--token TOKEN | --token-file PATH] [--cacert FILE]",
    "Creates context NAME (--server required) or changes the fields given.",
    set_opts,
    0,
    1,
    1};
static const gp_cli_spec delete_spec = {"config delete-context",
                                        "config delete-context NAME",
                                        "Removes context NAME.",
                                        no_opts,
                                        0,
                                        1,
                                        1};

/* Loads the config file into *cfg (heap) and its path into path. 0 or an exit status. */
static int load(const gp_cli_spec *spec, char *path, size_t cap, gp_cli_config **cfg)
{
    gp_diag d;
    gp_diag_clear(&d);
    *cfg = calloc(1, sizeof(**cfg));
    if (!*cfg) {
        fprintf(stderr, "gpupool %s: out of memory\n", spec->name);
        return GP_EXIT_FAILURE;
    }
    if (gp_cli_config_path(path, cap) < 0) {
        fprintf(stderr, "gpupool %s: neither XDG_CONFIG_HOME nor HOME is set\n", spec->name);
        return GP_EXIT_FAILURE;
    }
    if (gp_cli_config_load(path, *cfg, &d) < 0) {
        fprintf(stderr, "gpupool %s: %s\n", spec->name, d.msg);
        return d.code == GP_EINVAL ? GP_EXIT_USAGE : GP_EXIT_FAILURE;
    }
    return 0;
}

static int save(const gp_cli_spec *spec, const char *path, const gp_cli_config *cfg)
{
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_cli_config_save(path, cfg, &d) < 0) {
        fprintf(stderr, "gpupool %s: %s\n", spec->name, d.msg);
        return GP_EXIT_FAILURE;
    }
    return 0;
}

static int list(const gp_cli_args *a, gp_cli_config *cfg, const char *path)
{
    (void)path;
    gp_out_format format;
    if (gp_out_format_parse(gp_cli_arg(a, "output"), &format) < 0 || format == GP_OUT_WIDE) {
        return gp_cli_usage_error(a->spec, "-o: must be table, json or yaml");
    }
    if (format == GP_OUT_JSON || format == GP_OUT_YAML) {
        json_t *items = json_array();
        for (int i = 0; i < cfg->nctx; i++) {
            const gp_cli_context *c = &cfg->ctx[i];
            json_array_append_new(items, json_pack("{s:s,s:s,s:s,s:s,s:b}", "name", c->name,
                                                   "server", c->server, "token_file", c->token_file,
                                                   "cacert", c->cacert, "current",
                                                   strcmp(c->name, cfg->current) == 0));
        }
        json_t *doc = json_pack("{s:o}", "items", items);
        int rc = doc && gp_out_doc(stdout, format, doc) == 0 ? 0 : GP_EXIT_FAILURE;
        json_decref(doc);
        return rc;
    }
    static const char *const headers[] = {"CURRENT", "NAME", "SERVER", "TOKEN-FILE", "CACERT"};
    gp_out_table *t = gp_out_table_new(headers, 5);
    for (int i = 0; t && i < cfg->nctx; i++) {
        const gp_cli_context *c = &cfg->ctx[i];
        const char *row[] = {strcmp(c->name, cfg->current) == 0 ? "*" : " ", c->name, c->server,
                             c->token_file, c->cacert};
        if (gp_out_table_add(t, row) < 0) {
            gp_out_table_free(t);
            t = NULL;
        }
    }
    if (!t) {
        fprintf(stderr, "gpupool config: out of memory\n");
        return GP_EXIT_FAILURE;
    }
    gp_out_table_print(t, stdout, 0);
    gp_out_table_free(t);
    return 0;
}

static int current(const gp_cli_args *a, gp_cli_config *cfg, const char *path)
{
    (void)a;
    if (!cfg->current[0]) {
        fprintf(stderr, "gpupool config current-context: none set in %s\n", path);
        return GP_EXIT_FAILURE;
    }
    printf("%s\n", cfg->current);
    return 0;
}

static int unknown(const gp_cli_args *a, const char *name)
{
    return gp_cli_usage_error(a->spec, "no context \"%s\" (see 'gpupool config get-contexts')",
                              name);
}

static int use(const gp_cli_args *a, gp_cli_config *cfg, const char *path)
{
    if (!gp_cli_config_find(cfg, a->pos[0])) {
        return unknown(a, a->pos[0]);
    }
    snprintf(cfg->current, sizeof(cfg->current), "%s", a->pos[0]);
    int rc = save(a->spec, path, cfg);
    if (rc == 0) {
        printf("switched to context \"%s\"\n", a->pos[0]);
    }
    return rc;
}

static int delete_context(const gp_cli_args *a, gp_cli_config *cfg, const char *path)
{
    if (gp_cli_config_remove(cfg, a->pos[0]) < 0) {
        return unknown(a, a->pos[0]);
    }
    int rc = save(a->spec, path, cfg);
    if (rc == 0) {
        printf("deleted context \"%s\"\n", a->pos[0]);
    }
    return rc;
}

/* An absolute, readable path for flag's value into out; what the file must be: with secret,
 * a regular file only its owner can read. */
static int file_arg(const gp_cli_args *a, const char *flag, int secret, char *out, size_t cap)
{
    const char *v = gp_cli_arg(a, flag);
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(v, real) || stat(real, &st) < 0 || access(real, R_OK) < 0) {
        return gp_cli_usage_error(a->spec, "--%s %s: %s", flag, v, strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return gp_cli_usage_error(a->spec, "--%s %s: not a regular file", flag, v);
    }
    if (secret && (st.st_mode & 077)) {
        return gp_cli_usage_error(a->spec,
                                  "--%s %s: others may read it (mode %04o): chmod 600 it first",
                                  flag, v, (unsigned)(st.st_mode & 07777));
    }
    if (strlen(real) >= cap) {
        return gp_cli_usage_error(a->spec, "--%s: path too long", flag);
    }
    snprintf(out, cap, "%s", real);
    return 0;
}

/* --token: written to tokens/NAME beside the config file at path, 0600; its path into out. */
static int save_token(const gp_cli_args *a, const char *path, char *out, size_t cap)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    *(slash ? slash : dir) = '\0';
    int n = snprintf(out, cap, "%s/tokens/%s", dir, a->pos[0]);
    if (n < 0 || (size_t)n >= cap || strlen(dir) + 8 >= sizeof(dir)) {
        return gp_cli_usage_error(a->spec, "config path too long");
    }
    strcat(dir, "/tokens");
    if ((mkdir(dir, 0700) < 0 && errno != EEXIST) ||
        gp_cli_write_secret(out, gp_cli_arg(a, "token")) < 0) {
        fprintf(stderr, "gpupool %s: %s: %s\n", a->spec->name, out, strerror(errno));
        return GP_EXIT_FAILURE;
    }
    return 0;
}

static int set_server(const gp_cli_args *a, gp_cli_context *c)
{
    gp_servers s;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_servers_parse(gp_cli_arg(a, "server"), &s, &d) < 0) {
        return gp_cli_usage_error(a->spec, "--server: %s", d.msg);
    }
    if (gp_servers_format(&s, c->server, sizeof(c->server)) < 0) {
        return gp_cli_usage_error(a->spec, "--server: too long");
    }
    return 0;
}

static int set(const gp_cli_args *a, gp_cli_config *cfg, const char *path)
{
    const char *name = a->pos[0];
    gp_cli_context c = {0}, *old = gp_cli_config_find(cfg, name);
    int rc = 0;
    if (!gp_cli_context_name_ok(name)) {
        return gp_cli_usage_error(a->spec, "NAME: 1 to 63 letters, digits, '-' or '_'");
    }
    if (!old && !gp_cli_arg(a, "server")) {
        return gp_cli_usage_error(a->spec, "--server: required for a new context");
    }
    if (gp_cli_arg(a, "token") && gp_cli_arg(a, "token-file")) {
        return gp_cli_usage_error(a->spec, "--token and --token-file exclude each other");
    }
    if (!old && cfg->nctx == GP_CLI_MAX_CONTEXTS) {
        return gp_cli_usage_error(a->spec, "at most %d contexts", GP_CLI_MAX_CONTEXTS);
    }
    if (old) {
        c = *old;
    }
    snprintf(c.name, sizeof(c.name), "%s", name);
    if (gp_cli_arg(a, "server")) {
        rc = set_server(a, &c);
    }
    if (rc == 0 && gp_cli_arg(a, "cacert")) {
        rc = file_arg(a, "cacert", 0, c.cacert, sizeof(c.cacert));
    }
    if (rc == 0 && gp_cli_arg(a, "token-file")) {
        rc = file_arg(a, "token-file", 1, c.token_file, sizeof(c.token_file));
    }
    if (rc == 0 && gp_cli_arg(a, "token")) {
        rc = save_token(a, path, c.token_file, sizeof(c.token_file));
    }
    if (rc != 0) {
        return rc;
    }
    *gp_cli_config_add(cfg, name) = c;
    rc = save(a->spec, path, cfg);
    if (rc == 0) {
        printf("context \"%s\" %s\n", name, old ? "changed" : "created");
    }
    return rc;
}

static int run(const gp_cli_spec *spec,
               int (*fn)(const gp_cli_args *, gp_cli_config *, const char *), int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    char path[1024];
    gp_cli_config *cfg = NULL;
    rc = load(spec, path, sizeof(path), &cfg);
    if (rc == 0) {
        rc = fn(&a, cfg, path);
    }
    free(cfg);
    gp_cli_args_fini(&a);
    return rc;
}

static int cmd_list(int argc, char **argv)
{
    return run(&list_spec, list, argc, argv);
}

static int cmd_current(int argc, char **argv)
{
    return run(&current_spec, current, argc, argv);
}

static int cmd_use(int argc, char **argv)
{
    return run(&use_spec, use, argc, argv);
}

static int cmd_set(int argc, char **argv)
{
    return run(&set_spec, set, argc, argv);
}

static int cmd_delete(int argc, char **argv)
{
    return run(&delete_spec, delete_context, argc, argv);
}

static const gp_cli_sub subs[] = {
    {"get-contexts", cmd_list, "list the contexts"},
    {"current-context", cmd_current, "print the current context"},
    {"use-context", cmd_use, "make a context the current one"},
    {"set-context", cmd_set, "create or change a context (server, token, CA file)"},
    {"delete-context", cmd_delete, "remove a context"},
    {NULL, NULL, NULL},
};

int gp_cli_config_cmd(int argc, char **argv)
{
    return gp_cli_dispatch("config", subs, argc, argv);
}
