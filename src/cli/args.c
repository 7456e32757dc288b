/*
 * Option parsing of the server commands from their tables (see args.h). getopt_long is fed a
 * struct option array built from the table; long options answer FIRST_KEY + their index, short
 * ones their letter, which maps back to the index through the same table.
 */
#include "cli/args.h"

#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_KEY 256

static const gp_cli_opt help_opt = {"help", 'h', NULL, "print this help and exit"};
static const gp_cli_opt conn_opts[] = {
    {"server", 0, "URL", "gpupoold's URL (env GPUPOOL_SERVER; default http://127.0.0.1:7070)"},
    {"token", 0, "TOKEN", "API token (env GPUPOOL_TOKEN)"},
    {"token-file", 0, "PATH", "read the API token from PATH (e.g. DATA_DIR/admin.token)"},
    {"context", 0, "NAME", "use context NAME of the config file (env GPUPOOL_CONTEXT)"},
    {"cacert", 0, "FILE", "trust the CA certificates in FILE (PEM) for an https server"},
};
#define NCONN ((int)(sizeof(conn_opts) / sizeof(conn_opts[0])))
static const gp_cli_opt output_opt = {"output", 'o', "FORMAT",
                                      "output format: table, wide, json or yaml"};
static const gp_cli_opt output_forms_opt = {
    "output", 'o', "FORMAT",
    "table, wide, json, yaml, name, jsonpath=TEMPLATE or custom-columns=SPEC"};

/* Whether o's value may be left out (metavar "[=X]"). */
static bool optional_value(const gp_cli_opt *o)
{
    return o->metavar && o->metavar[0] == '[';
}

static int count_opts(const gp_cli_spec *spec)
{
    int n = 1;
    for (const gp_cli_opt *o = spec->opts; o && o->name; o++) {
        n++;
    }
    n += spec->flags & GP_CLI_CONN ? NCONN : 0;
    n += spec->flags & GP_CLI_OUTPUT ? 1 : 0;
    return n;
}

/* Fills a->opts with the spec's options and the common ones. */
static int collect_opts(const gp_cli_spec *spec, gp_cli_args *a)
{
    int n = count_opts(spec), i = 0;
    a->opts = calloc((size_t)n, sizeof(*a->opts));
    a->vals = calloc((size_t)n, sizeof(*a->vals));
    if (!a->opts || !a->vals) {
        return -1;
    }
    for (const gp_cli_opt *o = spec->opts; o && o->name; o++) {
        a->opts[i++] = o;
    }
    if (spec->flags & GP_CLI_OUTPUT) {
        a->opts[i++] = spec->flags & GP_CLI_OUTPUT_FORMS ? &output_forms_opt : &output_opt;
    }
    for (int k = 0; (spec->flags & GP_CLI_CONN) && k < NCONN; k++) {
        a->opts[i++] = &conn_opts[k];
    }
    a->opts[i++] = &help_opt;
    a->nopts = i;
    return 0;
}

void gp_cli_args_fini(gp_cli_args *a)
{
    for (int i = 0; a->vals && i < a->nopts; i++) {
        free(a->vals[i].v);
    }
    free(a->vals);
    free(a->opts);
    *a = (gp_cli_args){0};
}

void gp_cli_help(const gp_cli_spec *spec, FILE *f)
{
    gp_cli_args a = {0};
    fprintf(f, "usage: gpupool %s\n", spec->synopsis);
    if (spec->about) {
        fprintf(f, "\n%s\n", spec->about);
    }
    if (collect_opts(spec, &a) < 0) {
        gp_cli_args_fini(&a);
        return;
    }
    fputs("\noptions:\n", f);
    for (int i = 0; i < a.nopts; i++) {
        const gp_cli_opt *o = a.opts[i];
        char left[64];
        char shortname[8] = "";
        if (o->shortname) {
            snprintf(shortname, sizeof(shortname), "-%c, ", o->shortname);
        }
        snprintf(left, sizeof(left), "%s--%s%s%s", shortname, o->name,
                 o->metavar && !optional_value(o) ? " " : "", o->metavar ? o->metavar : "");
        fprintf(f, "  %-30s %s\n", left, o->help);
    }
    gp_cli_args_fini(&a);
}

int gp_cli_usage_error(const gp_cli_spec *spec, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "gpupool %s: %s\nusage: gpupool %s\n(see 'gpupool %s --help')\n", spec->name,
            msg, spec->synopsis, spec->name);
    return GP_EXIT_USAGE;
}

static int add_value(gp_cli_vals *v, const char *value)
{
    const char **p = realloc(v->v, sizeof(*p) * (size_t)(v->n + 1));
    if (!p) {
        return -1;
    }
    p[v->n++] = value;
    v->v = p;
    return 0;
}

static int index_of_short(const gp_cli_args *a, int c)
{
    for (int i = 0; i < a->nopts; i++) {
        if (a->opts[i]->shortname && a->opts[i]->shortname == c) {
            return i;
        }
    }
    return -1;
}

/* The getopt tables: *longopts (heap) and shortopts (into buf). */
static int build_getopt(const gp_cli_args *a, unsigned flags, struct option **longopts, char *buf,
                        size_t cap)
{
    *longopts = calloc((size_t)a->nopts + 1, sizeof(**longopts));
    if (!*longopts) {
        return -1;
    }
    size_t used = (size_t)snprintf(buf, cap, "%s:", flags & GP_CLI_IN_ORDER ? "+" : "");
    for (int i = 0; i < a->nopts; i++) {
        const gp_cli_opt *o = a->opts[i];
        int has = optional_value(o) ? optional_argument
                  : o->metavar      ? required_argument
                                    : no_argument;
        (*longopts)[i] = (struct option){o->name, has, NULL, FIRST_KEY + i};
        if (o->shortname && used + 3 < cap) {
            buf[used++] = o->shortname;
            if (has == required_argument) {
                buf[used++] = ':';
            }
            buf[used] = '\0';
        }
    }
    return 0;
}

/* Reports getopt_long's '?' (unknown option) or ':' (missing value). */
static int option_error(const gp_cli_spec *spec, const gp_cli_args *a, int c, char **argv)
{
    int i = optopt >= FIRST_KEY ? optopt - FIRST_KEY : index_of_short(a, optopt);
    if (c == ':' && i >= 0 && i < a->nopts) {
        return gp_cli_usage_error(spec, "--%s: missing value", a->opts[i]->name);
    }
    if (c == ':') {
        return gp_cli_usage_error(spec, "%s: missing value", argv[optind - 1]);
    }
    if (optopt >= FIRST_KEY && i < a->nopts) {
        return gp_cli_usage_error(spec, "--%s takes no value", a->opts[i]->name);
    }
    if (optopt > 0 && optopt < FIRST_KEY) {
        return gp_cli_usage_error(spec, "unknown option -%c", optopt);
    }
    return gp_cli_usage_error(spec, "unknown or ambiguous option %s", argv[optind - 1]);
}

/* Runs getopt_long over argv; GP_CLI_CONTINUE or an exit status. */
static int scan(const gp_cli_spec *spec, int argc, char **argv, gp_cli_args *a,
                const struct option *longopts, const char *shortopts)
{
    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, shortopts, longopts, NULL);
        if (c == -1) {
            break;
        }
        int i = c >= FIRST_KEY ? c - FIRST_KEY : c == '?' || c == ':' ? -1 : index_of_short(a, c);
        if (i < 0 || i >= a->nopts) {
            return option_error(spec, a, c, argv);
        }
        if (a->opts[i] == &help_opt) {
            gp_cli_help(spec, stdout);
            return GP_EXIT_OK;
        }
        if (add_value(&a->vals[i], optarg ? optarg : "") < 0) {
            fprintf(stderr, "gpupool %s: out of memory\n", spec->name);
            return GP_EXIT_FAILURE;
        }
    }
    a->pos = argv + optind;
    a->npos = argc - optind;
    if (a->npos < spec->min_pos) {
        return gp_cli_usage_error(spec, "missing argument");
    }
    if (spec->max_pos >= 0 && a->npos > spec->max_pos) {
        return gp_cli_usage_error(spec, "unexpected argument \"%s\"", a->pos[spec->max_pos]);
    }
    return GP_CLI_CONTINUE;
}

static FILE *list_sink;

void gp_cli_set_list_sink(FILE *f)
{
    list_sink = f;
}

FILE *gp_cli_list_sink(void)
{
    return list_sink;
}

/* The spec's options as completion reads them (see args.h). */
static int list_opts(const gp_cli_spec *spec)
{
    gp_cli_args a = {0};
    if (collect_opts(spec, &a) == 0) {
        for (int i = 0; i < a.nopts; i++) {
            const gp_cli_opt *o = a.opts[i];
            const char *mv = o->metavar && !optional_value(o) ? o->metavar : "";
            fprintf(list_sink, "flag --%s%s%s\n", o->name, *mv ? " " : "", mv);
            if (o->shortname) {
                fprintf(list_sink, "flag -%c%s%s\n", o->shortname, *mv ? " " : "", mv);
            }
        }
    }
    gp_cli_args_fini(&a);
    return GP_EXIT_OK;
}

int gp_cli_parse(const gp_cli_spec *spec, int argc, char **argv, gp_cli_args *a)
{
    *a = (gp_cli_args){.spec = spec};
    if (list_sink) {
        return list_opts(spec);
    }
    struct option *longopts = NULL;
    char shortopts[64];
    int status;
    if (collect_opts(spec, a) < 0 ||
        build_getopt(a, spec->flags, &longopts, shortopts, sizeof(shortopts)) < 0) {
        fprintf(stderr, "gpupool %s: out of memory\n", spec->name);
        status = GP_EXIT_FAILURE;
    } else {
        status = scan(spec, argc, argv, a, longopts, shortopts);
    }
    free(longopts);
    if (status != GP_CLI_CONTINUE) {
        gp_cli_args_fini(a);
    }
    return status;
}

static int find(const gp_cli_args *a, const char *name)
{
    for (int i = 0; i < a->nopts; i++) {
        if (strcmp(a->opts[i]->name, name) == 0) {
            return i;
        }
    }
    return -1;
}

const char *gp_cli_arg(const gp_cli_args *a, const char *name)
{
    int i = find(a, name);
    return i >= 0 && a->vals[i].n > 0 ? a->vals[i].v[a->vals[i].n - 1] : NULL;
}

gp_cli_vals gp_cli_arg_all(const gp_cli_args *a, const char *name)
{
    int i = find(a, name);
    return i >= 0 ? a->vals[i] : (gp_cli_vals){0};
}

int gp_cli_any_own(const gp_cli_args *a)
{
    for (int i = 0; i < a->nopts; i++) {
        const gp_cli_opt *o = a->opts[i];
        int common = o == &help_opt || o == &output_opt || o == &output_forms_opt;
        for (int k = 0; k < NCONN; k++) {
            common |= o == &conn_opts[k];
        }
        if (!common && a->vals[i].n > 0) {
            return 1;
        }
    }
    return 0;
}

int gp_cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    if (!s || !*s || (!isdigit((unsigned char)*s) && *s != '-')) {
        return -1;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < lo || v > hi) {
        return -1;
    }
    *out = v;
    return 0;
}

int gp_cli_parse_milli(const char *s, int64_t hi, int64_t *milli)
{
    const char *dot = strchr(s, '.');
    size_t ilen = dot ? (size_t)(dot - s) : strlen(s);
    size_t flen = dot ? strlen(dot + 1) : 0;
    if (ilen == 0 || ilen > 12 || strspn(s, "0123456789") != ilen || (dot && flen == 0) ||
        flen > 3 || (dot && strspn(dot + 1, "0123456789") != flen)) {
        return -1;
    }
    int64_t v = 0;
    for (size_t i = 0; i < ilen; i++) {
        v = v * 10 + (s[i] - '0');
    }
    v *= 1000;
    for (size_t i = 0, scale = 100; i < flen; i++, scale /= 10) {
        v += (dot[1 + i] - '0') * (int64_t)scale;
    }
    if (v > hi) {
        return -1;
    }
    *milli = v;
    return 0;
}

/* Splits s into a positive number and a unit suffix looked up in units (NULL-name ended). */
static int number_unit(const char *s, const char *const *names, const int64_t *mult, int64_t *out)
{
    char *end;
    if (!s || !isdigit((unsigned char)*s)) {
        return -1;
    }
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || v <= 0) {
        return -1;
    }
    for (int i = 0; names[i]; i++) {
        if (strcmp(end, names[i]) == 0) {
            if (v > INT64_MAX / 4 / mult[i]) {
                return -1;
            }
            *out = v * mult[i];
            return 0;
        }
    }
    return -1;
}

int gp_cli_parse_mib(const char *s, int64_t *mib)
{
    static const char *const names[] = {"", "Mi", "MiB", "Gi", "GiB", "Ti", "TiB", NULL};
    static const int64_t mult[] = {1, 1, 1, 1024, 1024, 1024 * 1024, 1024 * 1024};
    return number_unit(s, names, mult, mib);
}

int gp_cli_parse_seconds(const char *s, int64_t *seconds)
{
    static const char *const names[] = {"", "s", "m", "h", "d", NULL};
    static const int64_t mult[] = {1, 1, 60, 3600, 86400};
    return number_unit(s, names, mult, seconds);
}

static void list_subs(const char *cmd, const gp_cli_sub *subs, FILE *f)
{
    int width = 10;
    for (const gp_cli_sub *s = subs; s->name; s++) {
        width = (int)strlen(s->name) > width ? (int)strlen(s->name) : width;
    }
    fprintf(f, "usage: gpupool %s SUBCOMMAND [ARGS...]\n\nsubcommands:\n", cmd);
    for (const gp_cli_sub *s = subs; s->name; s++) {
        fprintf(f, "  %-*s %s\n", width, s->name, s->help);
    }
    fprintf(f, "\nRun 'gpupool %s SUBCOMMAND --help' for its options.\n", cmd);
}

int gp_cli_dispatch(const char *cmd, const gp_cli_sub *subs, int argc, char **argv)
{
    if (list_sink && argc < 2) {
        for (const gp_cli_sub *s = subs; s->name; s++) {
            fprintf(list_sink, "sub %s\n", s->name);
        }
        return GP_EXIT_OK;
    }
    if (argc < 2) {
        fprintf(stderr, "gpupool %s: missing subcommand\n", cmd);
        list_subs(cmd, subs, stderr);
        return GP_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        list_subs(cmd, subs, stdout);
        return GP_EXIT_OK;
    }
    for (const gp_cli_sub *s = subs; s->name; s++) {
        if (strcmp(s->name, argv[1]) == 0) {
            return s->run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "gpupool %s: unknown subcommand \"%s\"\n", cmd, argv[1]);
    list_subs(cmd, subs, stderr);
    return GP_EXIT_USAGE;
}
