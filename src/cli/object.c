/*
 * create, set and delete of the named objects from their field tables (see object.h).
 *
 * The option table of a subcommand is built from the field table at run time (the fields plus
 * nothing else: connection and output options come from args.c), so a field is declared once.
 */
#include "cli/object.h"

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SUB_CREATE, SUB_SET, SUB_DELETE };

/* "a,b" as ["a", "b"] ("" as []); NULL when an entry is empty. */
static json_t *name_list(const char *v)
{
    json_t *list = json_array();
    for (const char *p = v; list && *v;) {
        size_t n = strcspn(p, ",");
        json_t *s = n ? json_stringn(p, n) : NULL;
        if (!s || json_array_append_new(list, s) < 0) {
            json_decref(list);
            return NULL;
        }
        if (!p[n]) {
            break;
        }
        p += n + 1;
    }
    return list;
}

/* The JSON value of one option value; NULL when malformed. "none" removes (*remove = 1). */
static json_t *field_value(const gp_cli_field *f, const char *v, int *remove)
{
    int64_t n;
    *remove = f->type != GP_VAL_STRING && f->type != GP_VAL_FIXED && f->type != GP_VAL_BOOL &&
              strcmp(v, "none") == 0;
    if (*remove) {
        return json_null();
    }
    switch (f->type) {
    case GP_VAL_GPUS:
        if (gp_cli_parse_milli(v, (int64_t)1000000 * 1000, &n) < 0) {
            return NULL;
        }
        return n % 1000 == 0 ? json_integer(n / 1000) : json_real((double)n / 1000.0);
    case GP_VAL_MIB:
        return gp_cli_parse_mib(v, &n) < 0 ? NULL : json_integer(n);
    case GP_VAL_CPU:
        return gp_cli_parse_milli(v, (int64_t)1 << 40, &n) < 0 ? NULL : json_integer(n);
    case GP_VAL_NUMBER: {
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        return end == v || *end || errno || !isfinite(x) || x <= 0 ? NULL : json_real(x);
    }
    case GP_VAL_INT:
        return gp_cli_parse_int(v, -1000000000, 1000000000, &n) < 0 ? NULL : json_integer(n);
    case GP_VAL_FIXED:
        return json_loads(f->fixed, JSON_DECODE_ANY, NULL);
    case GP_VAL_LIST:
        return name_list(v);
    case GP_VAL_BOOL:
        return !v[0] || strcmp(v, "true") == 0 ? json_true()
               : strcmp(v, "false") == 0       ? json_false()
                                               : NULL;
    default:
        return json_string(v);
    }
}

/* Sets (or removes) doc[path] where path is dot-separated; objects on the way are made. */
static int set_path(json_t *doc, const char *path, const char *last, json_t *value, int remove)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    json_t *obj = doc;
    char *save, *key = strtok_r(buf, ".", &save);
    for (char *next; key && (next = strtok_r(NULL, ".", &save)); key = next) {
        json_t *child = json_object_get(obj, key);
        if (!json_is_object(child)) {
            child = json_object();
            json_object_set_new(obj, key, child);
        }
        obj = child;
    }
    if (last) { /* GP_VAL_MODELS: one level more */
        json_t *child = json_object_get(obj, key);
        if (!json_is_object(child)) {
            child = json_object();
            json_object_set_new(obj, key, child);
        }
        obj = child;
        key = (char *)last;
    }
    if (remove) {
        json_decref(value);
        json_object_del(obj, key);
        return 0;
    }
    return json_object_set_new(obj, key, value);
}

/* Applies one option value of field f to doc. 0, or -1 for a malformed value. */
static int apply(json_t *doc, const gp_cli_field *f, const char *v)
{
    char model[128];
    const char *arg = v;
    if (f->type == GP_VAL_MODELS) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || (size_t)(eq - v) >= sizeof(model)) {
            return -1;
        }
        memcpy(model, v, (size_t)(eq - v));
        model[eq - v] = '\0';
        arg = eq + 1;
    }
    gp_cli_field as = *f;
    as.type = f->type == GP_VAL_MODELS ? GP_VAL_GPUS : f->type;
    int remove;
    json_t *value = field_value(&as, arg, &remove);
    if (!value) {
        return -1;
    }
    return set_path(doc, f->path, f->type == GP_VAL_MODELS ? model : NULL, value, remove);
}

/* Applies every field given on the command line; 0 or an exit status. *n counts them. */
static int apply_all(const gp_cli_object *o, const gp_cli_args *a, json_t *doc, int *n)
{
    *n = 0;
    for (const gp_cli_field *f = o->fields; f->flag; f++) {
        gp_cli_vals vals = gp_cli_arg_all(a, f->flag);
        for (int i = 0; i < vals.n; i++, (*n)++) {
            if (apply(doc, f, vals.v[i]) < 0) {
                return gp_cli_usage_error(a->spec, "--%s: bad value \"%s\" (%s)", f->flag,
                                          vals.v[i], f->help);
            }
        }
    }
    return 0;
}

/* Prints the answer: "KIND NAME VERB", or the document with -o json|yaml. */
static int report(const gp_cli_object *o, const gp_cli_args *a, const char *name, const char *verb,
                  json_t *doc)
{
    gp_out_format format;
    if (gp_out_format_parse(gp_cli_arg(a, "output"), &format) < 0) {
        format = GP_OUT_TABLE; /* checked before the call */
    }
    if (format == GP_OUT_JSON || format == GP_OUT_YAML) {
        return gp_out_doc(stdout, format, doc) < 0 ? GP_EXIT_FAILURE : 0;
    }
    printf("%s %s %s\n", o->kind, name, verb);
    return 0;
}

static int create_or_set(const gp_cli_object *o, const gp_cli_args *a, gp_cli_conn *c, int set)
{
    const char *name = a->pos[0];
    char path[1200];
    json_t *doc = NULL, *answer = NULL;
    if (gp_cli_path(path, sizeof(path), o->path, name, NULL) < 0) {
        return gp_cli_usage_error(a->spec, "name too long");
    }
    int rc = set ? gp_cli_call(c, "GET", path, NULL, &doc) : 0;
    if (rc != 0) {
        return rc;
    }
    if (set) { /* what the server adds to what it stores */
        json_object_del(doc, "usage");
        json_object_del(doc, "pending");
    } else {
        doc = json_pack("{s:s}", "name", name);
    }
    int n;
    rc = apply_all(o, a, doc, &n);
    if (rc == 0 && set && n == 0) {
        rc = gp_cli_usage_error(a->spec, "nothing to change: give at least one flag");
    }
    if (rc == 0) {
        rc = gp_cli_call(c, set ? "PUT" : "POST", set ? path : o->path, doc, &answer);
    }
    if (rc == 0) {
        rc = report(o, a, name, set ? "configured" : "created", answer);
    }
    json_decref(doc);
    json_decref(answer);
    return rc;
}

static int delete_all(const gp_cli_object *o, const gp_cli_args *a, gp_cli_conn *c)
{
    int status = 0;
    for (int i = 0; i < a->npos; i++) {
        char path[1200];
        if (gp_cli_path(path, sizeof(path), o->path, a->pos[i], NULL) < 0) {
            return gp_cli_usage_error(a->spec, "name too long");
        }
        int rc = gp_cli_call(c, "DELETE", path, NULL, NULL);
        if (rc == 0) {
            printf("%s %s deleted\n", o->kind, a->pos[i]);
        } else {
            status = rc;
        }
    }
    return status;
}

/* The option table of create and set: one option per field. NULL when out of memory. */
static gp_cli_opt *field_opts(const gp_cli_object *o)
{
    int n = 0;
    while (o->fields[n].flag) {
        n++;
    }
    gp_cli_opt *opts = calloc((size_t)n + 1, sizeof(*opts));
    for (int i = 0; opts && i < n; i++) {
        opts[i] = (gp_cli_opt){o->fields[i].flag, 0, o->fields[i].metavar, o->fields[i].help};
    }
    return opts;
}

static int run_sub(const gp_cli_object *o, int sub, int argc, char **argv)
{
    static const char *const names[] = {"create", "set", "delete"};
    char name[64], synopsis[160], about[256];
    snprintf(name, sizeof(name), "%s %s", o->cmd, names[sub]);
    snprintf(synopsis, sizeof(synopsis), "%s %s NAME%s", o->cmd, names[sub],
             sub == SUB_DELETE ? " [NAME...]"
             : sub == SUB_SET  ? " FLAGS"
                               : " [FLAGS]");
    if (sub == SUB_CREATE) {
        snprintf(about, sizeof(about), "Creates a %s.", o->kind);
    } else if (sub == SUB_SET) {
        snprintf(about, sizeof(about),
                 "Changes the fields given of a %s, keeping the others; a limit given as none "
                 "is removed.",
                 o->kind);
    } else {
        snprintf(about, sizeof(about), "Deletes %ss that no active job uses.", o->kind);
    }
    gp_cli_opt *opts = sub == SUB_DELETE ? calloc(1, sizeof(*opts)) : field_opts(o);
    if (!opts) {
        fprintf(stderr, "gpupool: out of memory\n");
        return GP_EXIT_FAILURE;
    }
    gp_cli_spec spec = {name,
                        synopsis,
                        about,
                        opts,
                        GP_CLI_CONN | (sub == SUB_DELETE ? 0 : GP_CLI_OUTPUT),
                        1,
                        sub == SUB_DELETE ? -1 : 1};
    gp_cli_args a;
    gp_out_format format;
    int rc = gp_cli_parse(&spec, argc, argv, &a);
    if (rc == GP_CLI_CONTINUE && gp_out_format_parse(gp_cli_arg(&a, "output"), &format) < 0) {
        rc = gp_cli_usage_error(&spec, "-o: must be table, json or yaml");
    }
    gp_cli_conn *c = NULL;
    if (rc == GP_CLI_CONTINUE && (rc = gp_cli_connect(&a, &c)) == 0) {
        rc = sub == SUB_DELETE ? delete_all(o, &a, c) : create_or_set(o, &a, c, sub == SUB_SET);
    }
    if (rc != GP_EXIT_OK && rc != GP_EXIT_FAILURE && rc != GP_EXIT_USAGE) {
        rc = GP_EXIT_FAILURE;
    }
    gp_cli_conn_free(c);
    if (a.spec) {
        gp_cli_args_fini(&a);
    }
    free(opts);
    return rc;
}

int gp_cli_object_cmd(const gp_cli_object *o, int argc, char **argv)
{
    static const char *const names[] = {"create", "set", "delete"};
    if (gp_cli_list_sink() && argc < 2) {
        for (int i = 0; i < 3; i++) {
            fprintf(gp_cli_list_sink(), "sub %s\n", names[i]);
        }
        return GP_EXIT_OK;
    }
    if (gp_cli_list_sink() && argc < 2) {
        for (int i = 0; i < 3; i++) {
            fprintf(gp_cli_list_sink(), "sub %s\n", names[i]);
        }
        return GP_EXIT_OK;
    }
    int help = argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                             strcmp(argv[1], "help") == 0);
    for (int i = 0; !help && argc >= 2 && i < 3; i++) {
        if (strcmp(argv[1], names[i]) == 0) {
            return run_sub(o, i, argc - 1, argv + 1);
        }
    }
    FILE *f = help ? stdout : stderr;
    if (!help && argc < 2) {
        fprintf(stderr, "gpupool %s: missing subcommand\n", o->cmd);
    } else if (!help) {
        fprintf(stderr, "gpupool %s: unknown subcommand \"%s\"\n", o->cmd, argv[1]);
    }
    fprintf(f,
            "usage: gpupool %s create|set|delete NAME [FLAGS]\n\n"
            "subcommands:\n"
            "  create     create a %s\n"
            "  set        change the fields given of a %s\n"
            "  delete     delete %ss\n\n"
            "List them with 'gpupool get %ss'. Run 'gpupool %s create --help' for the flags.\n",
            o->cmd, o->kind, o->kind, o->kind, o->cmd, o->cmd);
    return help ? GP_EXIT_OK : GP_EXIT_USAGE;
}
