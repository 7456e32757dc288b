/*
 * gpupool sbatch [OPTIONS] SCRIPT [ARGS...]: submits a Slurm batch script as a job
 * (sbatch.h says what is mapped), and prints "Submitted batch job NAME" as sbatch does.
 * gpupool's own options (--server, --token, --token-file, --strict, --help) may come anywhere
 * before the script; every other option before it is sbatch's. Unsupported sbatch options are
 * warned about on stderr, or refused with --strict (exit 2).
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/sbatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SCRIPT_BYTES (1 << 20)

static const gp_cli_opt sbatch_opts[] = {
    {"strict", 0, NULL, "refuse sbatch options gpupool does not support (default: warn)"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec sbatch_spec = {
    "sbatch",
    "sbatch [--strict] [SBATCH OPTIONS] SCRIPT [ARGS...]",
    "Submits a Slurm batch script: its #SBATCH lines and the sbatch options given here (which\n"
    "win) become the job's spec: --gres=gpu:N, --gpus-per-node, -N, --ntasks-per-node, -c,\n"
    "--mem, -t, -J, -o, -e, -p (queue), --array, --dependency=afterok:ID, --export, -D.\n"
    "Other options are named as not supported. The script runs with its #! interpreter (else\n"
    "/bin/sh) in the job's working directory (default: this directory).",
    sbatch_opts,
    GP_CLI_CONN,
    0,
    0,
};

/* gpupool's own options: those of sbatch_spec and the connection's. */
static int own_option(const char *w, bool *with_value)
{
    static const char *const valued[] = {"--server", "--token", "--token-file"};
    *with_value = false;
    if (strcmp(w, "--strict") == 0 || strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0) {
        return 1;
    }
    for (size_t i = 0; i < sizeof(valued) / sizeof(valued[0]); i++) {
        size_t n = strlen(valued[i]);
        if (strncmp(w, valued[i], n) == 0 && (w[n] == '=' || w[n] == '\0')) {
            *with_value = w[n] == '\0';
            return 1;
        }
    }
    return 0;
}

static char *read_script(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gpupool sbatch: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(MAX_SCRIPT_BYTES + 1);
    size_t n = text ? fread(text, 1, MAX_SCRIPT_BYTES + 1, f) : 0;
    bool bad = ferror(f) || n > MAX_SCRIPT_BYTES || (text && memchr(text, '\0', n));
    fclose(f);
    if (!text || bad) {
        fprintf(stderr, "gpupool sbatch: %s: %s\n", path,
                !text ? "out of memory" : "unreadable, larger than 1 MiB or not text");
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

static const char *env_of(const char *name)
{
    return getenv(name);
}

static int submit(const gp_cli_args *a, gp_sbatch_in *in)
{
    char err[512], cwd[4096];
    if (!getcwd(cwd, sizeof(cwd))) {
        fprintf(stderr, "gpupool sbatch: the current directory: %s\n", strerror(errno));
        return GP_EXIT_FAILURE;
    }
    in->cwd = cwd;
    in->getenv = env_of;
    in->strict = gp_cli_arg(a, "strict") != NULL;
    json_t *spec = NULL, *warnings = NULL;
    if (gp_sbatch_build(in, &spec, &warnings, err, sizeof(err)) < 0) {
        fprintf(stderr, "gpupool sbatch: %s: %s\n", in->script_name, err);
        return GP_EXIT_USAGE;
    }
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w)
    {
        fprintf(stderr, "gpupool sbatch: warning: %s\n", json_string_value(w));
    }
    json_decref(warnings);
    gp_cli_conn *c = NULL;
    json_t *job = NULL;
    int rc = gp_cli_connect(a, &c);
    if (rc == 0) {
        gp_cli_prefer_minimal(c, true); /* only the name is printed */
    }
    rc = rc ? rc : gp_cli_call(c, "POST", "/v1/jobs", spec, &job);
    if (rc == 0) {
        printf("Submitted batch job %s\n", gp_out_str(job, "name"));
    }
    json_decref(job);
    json_decref(spec);
    gp_cli_conn_free(c);
    return rc;
}

int gp_cli_sbatch(int argc, char **argv)
{
    char **own = calloc((size_t)argc + 1, sizeof(char *));
    char **opts = calloc((size_t)argc + 1, sizeof(char *));
    if (!own || !opts) {
        free(own);
        free(opts);
        return GP_EXIT_FAILURE;
    }
    int nown = 0, nopts = 0, i = 1;
    own[nown++] = argv[0];
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        bool with_value;
        if (own_option(argv[i], &with_value)) {
            own[nown++] = argv[i];
            if (with_value && i + 1 < argc) {
                own[nown++] = argv[++i];
            }
        } else {
            opts[nopts++] = argv[i];
            if (gp_sbatch_takes_next(argv[i]) && i + 1 < argc) {
                opts[nopts++] = argv[++i];
            }
        }
    }
    gp_cli_args a;
    int rc = gp_cli_parse(&sbatch_spec, nown, own, &a);
    if (rc == GP_CLI_CONTINUE && i >= argc) {
        gp_cli_args_fini(&a);
        rc = gp_cli_usage_error(&sbatch_spec, "missing the script");
    } else if (rc == GP_CLI_CONTINUE) {
        char *script = read_script(argv[i]);
        gp_sbatch_in in = {.script = script,
                           .script_name = argv[i],
                           .args = argv + i + 1,
                           .nargs = argc - i - 1,
                           .opts = opts,
                           .nopts = nopts};
        rc = script ? submit(&a, &in) : GP_EXIT_USAGE;
        free(script);
        gp_cli_args_fini(&a);
    }
    free(own);
    free(opts);
    return rc;
}
