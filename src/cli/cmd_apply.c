/*
 * gpupool apply -f / gpupool delete -f: Kubernetes manifests (k8s.h) applied to the pool like
 * `kubectl apply`. All documents are read and translated first; any error, or under --strict
 * any field not honoured, refuses the lot. Then every object is planned against the server
 * (its dry run validates each; apply_plan.h) and only when all pass is anything applied.
 *
 *   --dry-run=client   translate only (no server); print what would be sent
 *   --dry-run=server   translate and plan: the server checks each object, nothing is stored
 *   -o name            KIND/NAME per object; -o json|yaml the gpupool objects
 *
 * Diagnostics go to stderr as "gpupool apply: FILE: Pod/x: PATH: warning|error: WHY".
 */
#include "cli/cli.h"

#include "cli/apply_io.h"
#include "cli/apply_plan.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/k8s.h"
#include "cli/output.h"

#include <stdio.h>
#include <string.h>

static const gp_cli_opt apply_opts[] = {
    {"filename", 'f', "FILE",
     "a manifest file, a directory of them (*.yaml, *.yml, *.json) or "
     "'-' for stdin (repeatable)"},
    {"dry-run", 0, "MODE",
     "client (translate only) or server (the server checks everything, stores nothing)"},
    {"strict", 0, NULL, "refuse manifests with any field gpupool does not honour"},
    {"namespace", 'n', "NS", "the namespace (tenant) of manifests that name none"},
    {"output", 'o', "FORMAT", "name (KIND/NAME), json or yaml (the gpupool objects)"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec apply_spec = {
    "apply",
    "apply -f FILE|DIR|- [-f ...] [--dry-run=client|server] [--strict] [-n NS] [-o FORMAT]",
    "Creates or updates gpupool objects from Kubernetes manifests (Pod, Job, Deployment,\n"
    "HorizontalPodAutoscaler, PriorityClass, Namespace, ResourceQuota, Queue, Volcano Job;\n"
    "docs/kubernetes.md). Fields gpupool does not honour are named with their paths; errors,\n"
    "or any such field under --strict, apply nothing.",
    apply_opts,
    GP_CLI_CONN,
    0,
    0,
};

static const gp_cli_opt delete_opts[] = {
    {"filename", 'f', "FILE", "a manifest file, a directory of them or '-' (repeatable)"},
    {"namespace", 'n', "NS", "the namespace (tenant) of manifests that name none"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec delete_spec = {
    "delete",
    "delete -f FILE|DIR|- [-f ...] [-n NS]",
    "Deletes what `gpupool apply -f` made of the manifests: cancels their active jobs and\n"
    "services, deletes their tenants, queues and priority classes.",
    delete_opts,
    GP_CLI_CONN,
    0,
    0,
};

static void print_diags(const gp_k8s_result *r, const json_t *files, const char *cmd)
{
    for (size_t i = 0; i < r->ndiags; i++) {
        const gp_k8s_diag *d = &r->diags[i];
        fprintf(stderr, "gpupool %s: %s: %s: %s%s%s: %s\n", cmd,
                json_string_value(json_array_get(files, (size_t)d->source)), d->where, d->path,
                d->path[0] ? ": " : "", d->severity == GP_K8S_ERROR ? "error" : "warning",
                d->message);
    }
}

/* The objects as {"items": [{"kind", "name", "spec"|"object"}]}, for -o json|yaml. */
static json_t *objects_doc(const gp_k8s_result *r)
{
    json_t *items = json_array();
    for (size_t i = 0; i < r->nobjects; i++) {
        const gp_k8s_object *o = &r->objects[i];
        json_array_append_new(items,
                              json_pack("{s:s, s:s, s:s, s:O?}", "kind", gp_apply_kind(o), "name",
                                        o->name, "from", o->source_kind,
                                        o->target == GP_K8S_JOB ? "spec" : "object", o->doc));
    }
    return json_pack("{s:o}", "items", items);
}

/* Reads the -f inputs: *docs and *files (apply_io.h). 0, or an exit status (printed). */
static int read_inputs(const gp_cli_args *a, const char *cmd, json_t **docs, json_t **files)
{
    gp_cli_vals fs = gp_cli_arg_all(a, "filename");
    if (fs.n == 0) {
        fprintf(stderr, "gpupool %s: -f FILE is required\n", cmd);
        return GP_EXIT_USAGE;
    }
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_apply_read(fs.v, fs.n, docs, files, &d) < 0) {
        fprintf(stderr, "gpupool %s: %s\n", cmd, d.msg);
        return GP_EXIT_USAGE;
    }
    return 0;
}

/* Translates docs into *r (volumes: the registered ones, may be NULL). 0, or an exit status. */
static int translate(const gp_cli_args *a, const char *cmd, const json_t *docs,
                     const json_t *volumes, const json_t *files, gp_k8s_result *r, int quiet)
{
    gp_k8s_ctx ctx = {.volumes = volumes, .ns = gp_cli_arg(a, "namespace")};
    gp_k8s_translate(docs, &ctx, r);
    if (r->oom) {
        fprintf(stderr, "gpupool %s: out of memory\n", cmd);
        return GP_EXIT_FAILURE;
    }
    if (!quiet) {
        print_diags(r, files, cmd);
    }
    return 0;
}

/* The registered volumes, for hostPath volumes. */
static int volumes(gp_cli_conn *c, json_t **items)
{
    int more = 0;
    *items = json_array();
    return gp_cli_get_pages(c, "/v1/volumes", "", 1, *items, &more);
}

static int check_refusals(const gp_k8s_result *r, int strict)
{
    size_t errors = gp_k8s_count(r, GP_K8S_ERROR);
    size_t warnings = r->ndiags - errors;
    if (errors > 0) {
        fprintf(stderr, "gpupool apply: %zu error%s: nothing applied\n", errors,
                errors == 1 ? "" : "s");
        return GP_EXIT_USAGE;
    }
    if (strict && warnings > 0) {
        fprintf(stderr,
                "gpupool apply: --strict: %zu field%s not honoured (above): nothing applied\n",
                warnings, warnings == 1 ? "" : "s");
        return GP_EXIT_USAGE;
    }
    return 0;
}

static int print_client(const gp_k8s_result *r, const char *out)
{
    if (out && strcmp(out, "name") != 0) {
        gp_out_format f;
        json_t *doc = objects_doc(r);
        int rc = gp_out_format_parse(out, &f) == 0 && doc ? gp_out_doc(stdout, f, doc) : -1;
        json_decref(doc);
        return rc == 0 ? GP_EXIT_OK : GP_EXIT_FAILURE;
    }
    for (size_t i = 0; i < r->nobjects; i++) {
        printf("%s/%s%s\n", gp_apply_kind(&r->objects[i]), r->objects[i].name,
               out ? "" : " created (dry run)");
    }
    return GP_EXIT_OK;
}

static int print_server_dry(const gp_apply_step *s, size_t n, const char *out)
{
    static const char *const said[] = {"unchanged", "created", "configured"};
    if (out && strcmp(out, "name") != 0) {
        json_t *items = json_array();
        for (size_t i = 0; i < n; i++) {
            json_array_append_new(
                items, json_pack("{s:s, s:s, s:s, s:O?}", "kind", gp_apply_kind(s[i].obj), "name",
                                 s[i].obj->name, "action", said[s[i].action], "server", s[i].dry));
        }
        gp_out_format f;
        json_t *doc = json_pack("{s:o}", "items", items);
        int rc = gp_out_format_parse(out, &f) == 0 && doc ? gp_out_doc(stdout, f, doc) : -1;
        json_decref(doc);
        return rc == 0 ? GP_EXIT_OK : GP_EXIT_FAILURE;
    }
    for (size_t i = 0; i < n; i++) {
        printf("%s/%s", gp_apply_kind(s[i].obj), s[i].obj->name);
        if (!out) {
            printf(" %s (server dry run%s)", s[i].deferred ? "created" : said[s[i].action],
                   s[i].deferred ? "; the server checks it once what it names is created" : "");
        }
        printf("\n");
    }
    return GP_EXIT_OK;
}

static int apply_run(const gp_cli_args *a)
{
    const char *dry = gp_cli_arg(a, "dry-run");
    const char *out = gp_cli_arg(a, "output");
    if (dry && strcmp(dry, "client") != 0 && strcmp(dry, "server") != 0 &&
        strcmp(dry, "none") != 0) {
        return gp_cli_usage_error(&apply_spec, "--dry-run: must be client, server or none");
    }
    gp_out_format f;
    if (out && strcmp(out, "name") != 0 &&
        (gp_out_format_parse(out, &f) < 0 || (f != GP_OUT_JSON && f != GP_OUT_YAML))) {
        return gp_cli_usage_error(&apply_spec, "-o: must be name, json or yaml");
    }
    int client = dry && strcmp(dry, "client") == 0;
    gp_cli_conn *c = NULL;
    json_t *vols = NULL, *files = NULL, *docs = NULL;
    gp_k8s_result r = {0};
    int rc = read_inputs(a, "apply", &docs, &files);
    rc = rc || client ? rc : gp_cli_connect(a, &c);
    rc = rc || client ? rc : volumes(c, &vols);
    rc = rc ? rc : translate(a, "apply", docs, vols, files, &r, 0);
    rc = rc ? rc : check_refusals(&r, gp_cli_arg(a, "strict") != NULL);
    gp_apply_step *steps = NULL;
    if (rc == 0 && client) {
        rc = print_client(&r, out);
    } else if (rc == 0) {
        rc = gp_apply_plan(c, &r, &steps);
        if (rc == 0 && dry && strcmp(dry, "server") == 0) {
            rc = print_server_dry(steps, r.nobjects, out);
        } else if (rc == 0) {
            rc = gp_apply_run(c, steps, r.nobjects, out);
        }
    }
    gp_apply_steps_free(steps, r.nobjects);
    gp_k8s_result_fini(&r);
    json_decref(vols);
    json_decref(docs);
    json_decref(files);
    gp_cli_conn_free(c);
    return rc;
}

int gp_cli_apply(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&apply_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = apply_run(&a);
    gp_cli_args_fini(&a);
    return rc;
}

/* Names the manifests delete leaves alone: those apply would refuse (they made nothing). */
static int skip_refused(const gp_k8s_result *r, const json_t *files)
{
    int n = 0;
    for (size_t i = 0; i < r->ndiags; i++) {
        const gp_k8s_diag *d = &r->diags[i];
        int first = 1;
        for (size_t k = 0; k < i && first; k++) {
            first = !(r->diags[k].severity == GP_K8S_ERROR && r->diags[k].source == d->source &&
                      strcmp(r->diags[k].where, d->where) == 0);
        }
        if (d->severity == GP_K8S_ERROR && first) {
            fprintf(stderr,
                    "gpupool delete: %s: %s: left alone: apply refuses it, so it made nothing "
                    "(gpupool apply --dry-run=client says why)\n",
                    json_string_value(json_array_get(files, (size_t)d->source)), d->where);
            n++;
        }
    }
    return n;
}

int gp_cli_delete(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&delete_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    gp_cli_conn *c = NULL;
    json_t *files = NULL, *docs = NULL;
    gp_k8s_result r = {0};
    rc = read_inputs(&a, "delete", &docs, &files);
    rc = rc ? rc : gp_cli_connect(&a, &c);
    rc = rc ? rc : translate(&a, "delete", docs, NULL, files, &r, 1);
    int skipped = rc == 0 ? skip_refused(&r, files) : 0;
    rc = rc ? rc : gp_apply_delete(c, &r);
    rc = rc || !skipped ? rc : GP_EXIT_FAILURE;
    gp_k8s_result_fini(&r);
    json_decref(docs);
    json_decref(files);
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
    return rc;
}
