/*
 * gpupool top nodes|jobs: GPU use now. Nodes: their GPUs, the share allocated, the mean
 * utilisation and the GPU memory in use, from the agents' last readings (GET /v1/nodes:
 * gpus[].utilization, gpus[].readings.memory_used_mib). Jobs: the running jobs, each with its
 * GPUs and the newest point of its history (GET /v1/jobs/{id}/metrics over the last two
 * minutes: gpu_util, gpu_mem_mib, gpu_mem_util). Rows are sorted by --sort-by, largest first
 * (name: alphabetical); a value not known yet ("-") sorts last.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/resource.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gp_cli_opt top_opts[] = {
    {"sort-by", 0, "KEY", "name, gpu-util, gpu-memory or allocation (default name)"},
    {"tenant", 0, "T", "jobs: only of tenant T"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec top_spec = {
    "top",
    "top nodes|jobs [--sort-by name|gpu-util|gpu-memory|allocation] [--tenant T]",
    "Shows GPU use now: per node (allocation, utilisation, GPU memory from the agents' last\n"
    "readings) or per running job (from its metrics history, GET /v1/jobs/{id}/metrics).",
    top_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT,
    1,
    1,
};

enum { KEY_NAME, KEY_UTIL, KEY_MEM, KEY_ALLOC };

typedef struct row {
    char name[256];
    double util, mem_mib, mem_total, alloc; /* NAN: unknown */
    json_t *doc;                            /* the row as -o json shows it */
    int key;                                /* what rows sort by (KEY_*) */
    char cells[8][64];
} row;

static int cmp_rows(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    int sort_key = a->key;
    double x = sort_key == KEY_UTIL ? a->util : sort_key == KEY_MEM ? a->mem_mib : a->alloc;
    double y = sort_key == KEY_UTIL ? b->util : sort_key == KEY_MEM ? b->mem_mib : b->alloc;
    if (sort_key != KEY_NAME && isnan(x) != isnan(y)) {
        return isnan(x) ? 1 : -1;
    }
    if (sort_key != KEY_NAME && !isnan(x) && x != y) {
        return x > y ? -1 : 1;
    }
    return strcmp(a->name, b->name);
}

static void pct(double v, char *buf, size_t cap)
{
    if (isnan(v)) {
        snprintf(buf, cap, "-");
    } else {
        snprintf(buf, cap, "%.0f%%", v);
    }
}

static void mib(double v, char *buf, size_t cap)
{
    if (isnan(v)) {
        snprintf(buf, cap, "-");
    } else {
        gp_out_mib((int64_t)llround(v), buf, cap);
    }
}

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

/* One node's row from its document. */
static void node_row(const json_t *n, row *r)
{
    double util = 0, used = 0, total = 0;
    int nutil = 0, nused = 0;
    size_t i, ngpus = json_array_size(json_object_get(n, "gpus"));
    json_t *g;
    snprintf(r->name, sizeof(r->name), "%s", gp_out_str(n, "name"));
    json_array_foreach(json_object_get(n, "gpus"), i, g)
    {
        json_t *u = json_object_get(g, "utilization");
        json_t *m = json_object_get(json_object_get(g, "readings"), "memory_used_mib");
        total += (double)gp_out_int(g, "memory_mib");
        if (json_is_number(u)) {
            util += json_number_value(u);
            nutil++;
        }
        if (json_is_number(m)) {
            used += json_number_value(m);
            nused++;
        }
    }
    double alloc = json_number_value(json_object_get(json_object_get(n, "allocated"), "gpus"));
    r->util = nutil ? util / nutil : NAN;
    r->mem_mib = nused ? used : NAN;
    r->mem_total = total;
    r->alloc = ngpus ? 100.0 * alloc / (double)ngpus : NAN;
    snprintf(r->cells[0], 64, "%s", r->name);
    snprintf(r->cells[1], 64, "%zu", ngpus);
    gp_out_number(json_object_get(json_object_get(n, "allocated"), "gpus"), r->cells[2], 64);
    pct(r->alloc, r->cells[3], 64);
    pct(r->util, r->cells[4], 64);
    char a[32], b[32];
    mib(r->mem_mib, a, sizeof(a));
    mib(total, b, sizeof(b));
    snprintf(r->cells[5], 64, "%s/%s", a, b);
    pct(nused && total > 0 ? 100.0 * used / total : NAN, r->cells[6], 64);
    r->doc = json_pack("{s:s,s:I,s:o,s:o,s:o,s:o,s:f}", "name", r->name, "gpus", (json_int_t)ngpus,
                       "allocated_gpus", json_real(alloc), "allocation_percent",
                       num_or_null(r->alloc), "gpu_util_percent", num_or_null(r->util),
                       "gpu_memory_used_mib", num_or_null(r->mem_mib), "gpu_memory_mib", total);
}

/* The newest mean of metric (the job's series, not a replica's) in a metrics answer. */
static double newest(const json_t *m, const char *metric)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(m, "series"), i, s)
    {
        if (strcmp(gp_out_str(s, "metric"), metric) != 0 || json_object_get(s, "replica")) {
            continue;
        }
        json_t *mean = json_object_get(s, "mean");
        for (size_t k = json_array_size(mean); k-- > 0;) {
            if (json_is_number(json_array_get(mean, k))) {
                return json_number_value(json_array_get(mean, k));
            }
        }
    }
    return NAN;
}

/* One job's row: its document and its newest history point. */
static int job_row(gp_cli_conn *c, const json_t *j, row *r)
{
    char id[32], path[128];
    gp_out_number(json_object_get(j, "id"), id, sizeof(id));
    snprintf(path, sizeof(path), "/v1/jobs/%s/metrics?from=-2m", id);
    json_t *m = NULL;
    int rc = gp_cli_call(c, "GET", path, NULL, &m);
    if (rc != 0) {
        return rc;
    }
    snprintf(r->name, sizeof(r->name), "%s", gp_out_str(j, "name"));
    r->util = newest(m, "gpu_util");
    r->mem_mib = newest(m, "gpu_mem_mib");
    double mem_util = newest(m, "gpu_mem_util");
    json_decref(m);
    char gpus[64];
    gp_cli_job_gpus(j, gpus, sizeof(gpus));
    const json_t *res = json_object_get(json_object_get(j, "spec"), "resources");
    double per = json_number_value(json_object_get(res, "gpus"));
    r->alloc = per * (double)(gp_out_int(j, "replicas") ? gp_out_int(j, "replicas") : 1);
    snprintf(r->cells[0], 64, "%s", id);
    snprintf(r->cells[1], 64, "%s", r->name);
    snprintf(r->cells[2], 64, "%s", gp_out_str(j, "tenant"));
    snprintf(r->cells[3], 64, "%s", gpus);
    pct(r->util, r->cells[4], 64);
    mib(r->mem_mib, r->cells[5], 64);
    pct(mem_util, r->cells[6], 64);
    r->doc = json_pack("{s:O,s:s,s:s,s:s,s:o,s:o,s:o}", "id", json_object_get(j, "id"), "name",
                       r->name, "tenant", gp_out_str(j, "tenant"), "gpus", gpus, "gpu_util_percent",
                       num_or_null(r->util), "gpu_memory_used_mib", num_or_null(r->mem_mib),
                       "gpu_memory_percent", num_or_null(mem_util));
    return 0;
}

static int print_rows(row *rows, size_t n, int jobs, int key, gp_out_format format)
{
    static const char *const node_h[] = {"NAME",     "GPUS",    "ALLOCATED", "ALLOC%",
                                         "GPU-UTIL", "GPU-MEM", "GPU-MEM%"};
    static const char *const job_h[] = {"ID",       "NAME",    "TENANT",  "GPUS",
                                        "GPU-UTIL", "GPU-MEM", "GPU-MEM%"};
    for (size_t i = 0; i < n; i++) {
        rows[i].key = key;
    }
    qsort(rows, n, sizeof(*rows), cmp_rows);
    if (format == GP_OUT_JSON || format == GP_OUT_YAML) {
        json_t *items = json_array();
        for (size_t i = 0; i < n; i++) {
            json_array_append(items, rows[i].doc);
        }
        json_t *doc = json_pack("{s:o}", "items", items);
        int rc = gp_out_doc(stdout, format, doc) < 0 ? GP_EXIT_FAILURE : 0;
        json_decref(doc);
        return rc;
    }
    gp_out_table *t = gp_out_table_new(jobs ? job_h : node_h, 7);
    for (size_t i = 0; t && i < n; i++) {
        const char *cells[7];
        for (int c = 0; c < 7; c++) {
            cells[c] = rows[i].cells[c];
        }
        if (gp_out_table_add(t, cells) < 0) {
            gp_out_table_free(t);
            t = NULL;
        }
    }
    if (!t) {
        fprintf(stderr, "gpupool top: out of memory\n");
        return GP_EXIT_FAILURE;
    }
    gp_out_table_print(t, stdout, 0);
    gp_out_table_free(t);
    return 0;
}

static int top(const gp_cli_args *a, int jobs, int key, gp_out_format format)
{
    char query[512] = "";
    const char *tenant = gp_cli_arg(a, "tenant");
    if (jobs && (gp_cli_query_add(query, sizeof(query), "state", "Running") < 0 ||
                 (tenant && gp_cli_query_add(query, sizeof(query), "tenant", tenant) < 0))) {
        return gp_cli_usage_error(a->spec, "--tenant: too long");
    }
    gp_cli_conn *c;
    int rc = gp_cli_connect(a, &c), more;
    json_t *items = json_array();
    if (rc == 0) {
        rc = gp_cli_get_pages(c, jobs ? "/v1/jobs" : "/v1/nodes", query, 1, items, &more);
    }
    size_t n = rc == 0 ? json_array_size(items) : 0;
    row *rows = calloc(n ? n : 1, sizeof(*rows));
    rc = rc == 0 && !rows ? GP_EXIT_FAILURE : rc;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (jobs) {
            rc = job_row(c, json_array_get(items, i), &rows[i]);
        } else {
            node_row(json_array_get(items, i), &rows[i]);
        }
    }
    if (rc == 0) {
        rc = print_rows(rows, n, jobs, key, format);
    }
    for (size_t i = 0; rows && i < n; i++) {
        json_decref(rows[i].doc);
    }
    free(rows);
    json_decref(items);
    gp_cli_conn_free(c);
    return rc;
}

int gp_cli_top(int argc, char **argv)
{
    static const char *const keys[] = {"name", "gpu-util", "gpu-memory", "allocation"};
    gp_cli_args a;
    int rc = gp_cli_parse(&top_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    const char *what = a.pos[0], *by = gp_cli_arg(&a, "sort-by");
    int jobs = strcmp(what, "jobs") == 0 || strcmp(what, "job") == 0;
    gp_out_format format;
    int sort_key = by ? -1 : KEY_NAME;
    for (int i = 0; by && i < 4; i++) {
        if (strcmp(by, keys[i]) == 0) {
            sort_key = i;
        }
    }
    if (!jobs && strcmp(what, "nodes") != 0 && strcmp(what, "node") != 0) {
        rc = gp_cli_usage_error(&top_spec, "unknown kind \"%s\" (nodes or jobs)", what);
    } else if (sort_key < 0) {
        rc = gp_cli_usage_error(&top_spec,
                                "--sort-by: must be name, gpu-util, gpu-memory or allocation");
    } else if (gp_out_format_parse(gp_cli_arg(&a, "output"), &format) < 0 ||
               format == GP_OUT_WIDE) {
        rc = gp_cli_usage_error(&top_spec, "-o: must be table, json or yaml");
    } else if (!jobs && gp_cli_arg(&a, "tenant")) {
        rc = gp_cli_usage_error(&top_spec, "--tenant: for jobs only");
    } else {
        rc = top(&a, jobs, sort_key, format);
    }
    gp_cli_args_fini(&a);
    return rc;
}
