/*
 * CSV reader for the openb node and pod lists. Lines are read whole with getline; fields are
 * split on commas (double-quoted fields may hold commas). Columns are found by header name, so
 * column order does not matter, and a missing required column is an error naming it.
 */
#include "sim/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 32

typedef struct csv_line {
    char *field[MAX_FIELDS];
    int n;
} csv_line;

/* Splits line (modified in place) into fields. Strips the line end. */
static void split(char *line, csv_line *out)
{
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
        line[--len] = '\0';
    }
    out->n = 0;
    char *p = line;
    for (;;) {
        char *start = p, *w = p;
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') {
                    p++;
                }
                *w++ = *p++;
            }
            if (*p == '"') {
                p++;
            }
        }
        while (*p && *p != ',') {
            *w++ = *p++;
        }
        int more = *p == ',';
        *w = '\0';
        if (out->n < MAX_FIELDS) {
            out->field[out->n++] = start;
        }
        if (!more) {
            break;
        }
        p++;
    }
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!*s) {
        return GP_EPARSE;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno) {
        /* Accept "12.0"-style integers some exports write; reject real fractions. */
        double d = strtod(s, &end);
        if (*end || end == s || !(d == d)) {
            return GP_EPARSE;
        }
        if (d < -9.0e18 || d > 9.0e18) {
            return GP_ERANGE;
        }
        if (d != (double)(long long)d) {
            return GP_EPARSE;
        }
        v = (long long)d;
    }
    if (v < lo || v > hi) {
        return GP_ERANGE;
    }
    *out = v;
    return 0;
}

typedef struct column {
    const char *name;
    int required;
    int index;
} column;

static int find_columns(const csv_line *hdr, column *cols, int ncols, const char *path, gp_diag *d)
{
    for (int c = 0; c < ncols; c++) {
        cols[c].index = -1;
        for (int i = 0; i < hdr->n; i++) {
            if (strcmp(hdr->field[i], cols[c].name) == 0) {
                cols[c].index = i;
            }
        }
        if (cols[c].index < 0 && cols[c].required) {
            return gp_diag_set(d, GP_EPARSE, "%s:1: missing column \"%s\" in the header", path,
                               cols[c].name);
        }
    }
    return 0;
}

static const char *field(const csv_line *l, const column *c)
{
    return c->index >= 0 && c->index < l->n ? l->field[c->index] : "";
}

static int number(const csv_line *l, const column *c, int64_t lo, int64_t hi, int64_t *out,
                  const char *path, long lineno, gp_diag *d)
{
    if (c->index >= l->n) {
        return gp_diag_set(d, GP_EPARSE, "%s:%ld: %s: missing field (line has %d fields)", path,
                           lineno, c->name, l->n);
    }
    const char *s = field(l, c);
    int rc = parse_i64(s, lo, hi, out);
    if (rc == GP_ERANGE) {
        return gp_diag_set(d, GP_EPARSE, "%s:%ld: %s: %s is out of range %lld..%lld", path, lineno,
                           c->name, s, (long long)lo, (long long)hi);
    }
    if (rc < 0) {
        return gp_diag_set(d, GP_EPARSE, "%s:%ld: %s: malformed number \"%s\"", path, lineno,
                           c->name, s);
    }
    return 0;
}

static int copy_text(char *dst, size_t cap, const char *s, const char *col, const char *path,
                     long lineno, gp_diag *d)
{
    size_t n = strlen(s);
    if (n >= cap) {
        return gp_diag_set(d, GP_EPARSE, "%s:%ld: %s: longer than %zu characters", path, lineno,
                           col, cap - 1);
    }
    memcpy(dst, s, n + 1);
    return 0;
}

/* Reads every data line of path, calling row() for each; grows *items of item size. */
typedef int (*row_fn)(const csv_line *l, const column *cols, void *item, const char *path,
                      long lineno, gp_diag *d);

static int read_csv(const char *path, column *cols, int ncols, size_t size, row_fn row,
                    void **items, int *count, gp_diag *d)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return gp_diag_set(d, GP_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0, n = 0, ncap = 0;
    char *arr = NULL;
    csv_line l;
    if (getline(&line, &cap, f) < 0) {
        rc = gp_diag_set(d, GP_EPARSE, "%s:1: empty file (expected a header line)", path);
        goto out;
    }
    lineno = 1;
    split(line, &l);
    rc = find_columns(&l, cols, ncols, path, d);
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\r' || line[0] == '\0') {
            continue;
        }
        if (n == ncap) {
            ncap = ncap ? ncap * 2 : 1024;
            char *na = realloc(arr, size * (size_t)ncap);
            if (!na) {
                rc = gp_diag_set(d, GP_ENOMEM, "%s:%ld: out of memory", path, lineno);
                break;
            }
            arr = na;
        }
        split(line, &l);
        memset(arr + size * (size_t)n, 0, size);
        rc = row(&l, cols, arr + size * (size_t)n, path, lineno, d);
        n++;
    }
    if (rc == 0 && ferror(f)) {
        rc = gp_diag_set(d, GP_EIO, "%s:%ld: read error", path, lineno);
    }
    if (rc == 0 && n == 0) {
        rc = gp_diag_set(d, GP_EPARSE, "%s: no data lines", path);
    }
out:
    free(line);
    fclose(f);
    if (rc < 0) {
        free(arr);
        return rc;
    }
    *items = arr;
    *count = n;
    return 0;
}

enum { N_SN, N_CPU, N_MEM, N_GPU, N_MODEL, N_COLS };

static int node_row(const csv_line *l, const column *cols, void *item, const char *path,
                    long lineno, gp_diag *d)
{
    gp_trace_node *n = item;
    int64_t v;
    int rc = copy_text(n->name, sizeof(n->name), field(l, &cols[N_SN]), "sn", path, lineno, d);
    if (rc == 0 && !n->name[0]) {
        rc = gp_diag_set(d, GP_EPARSE, "%s:%ld: sn: empty node name", path, lineno);
    }
    if (rc == 0 &&
        (rc = number(l, &cols[N_CPU], 0, INT64_MAX / 4, &n->cpu_milli, path, lineno, d)) == 0 &&
        (rc = number(l, &cols[N_MEM], 0, INT64_MAX / 4, &n->memory_mib, path, lineno, d)) == 0 &&
        (rc = number(l, &cols[N_GPU], 0, GP_MAX_GPUS_PER_NODE, &v, path, lineno, d)) == 0) {
        n->gpus = (int)v;
        rc = copy_text(n->model, sizeof(n->model), field(l, &cols[N_MODEL]), "model", path, lineno,
                       d);
    }
    if (rc == 0 && n->gpus > 0 && !n->model[0]) {
        rc = gp_diag_set(d, GP_EPARSE, "%s:%ld: model: empty for a node with %d GPUs", path, lineno,
                         n->gpus);
    }
    return rc;
}

int gp_trace_read_nodes(gp_trace *t, const char *path, gp_diag *d)
{
    column cols[N_COLS] = {
        {"sn", 1, -1},  {"cpu_milli", 1, -1}, {"memory_mib", 1, -1},
        {"gpu", 1, -1}, {"model", 1, -1},
    };
    void *items;
    int n;
    int rc = read_csv(path, cols, N_COLS, sizeof(gp_trace_node), node_row, &items, &n, d);
    if (rc < 0) {
        return rc;
    }
    free(t->nodes);
    t->nodes = items;
    t->nnodes = n;
    return 0;
}

enum { P_NAME, P_CPU, P_MEM, P_NGPU, P_MILLI, P_SPEC, P_COLS };

static int pod_row(const csv_line *l, const column *cols, void *item, const char *path, long lineno,
                   gp_diag *d)
{
    gp_trace_pod *p = item;
    int64_t ngpu, milli;
    int rc = copy_text(p->name, sizeof(p->name), field(l, &cols[P_NAME]), "name", path, lineno, d);
    if (rc == 0 &&
        (rc = number(l, &cols[P_CPU], 0, INT64_MAX / 4, &p->cpu_milli, path, lineno, d)) == 0 &&
        (rc = number(l, &cols[P_MEM], 0, INT64_MAX / 4, &p->memory_mib, path, lineno, d)) == 0 &&
        (rc = number(l, &cols[P_NGPU], 0, GP_MAX_GPUS_PER_NODE, &ngpu, path, lineno, d)) == 0 &&
        (rc = number(l, &cols[P_MILLI], 0, GP_MILLI_PER_GPU, &milli, path, lineno, d)) == 0) {
        p->num_gpu = (int)ngpu;
        p->gpu_milli = (int)milli;
        rc = copy_text(p->gpu_spec, sizeof(p->gpu_spec), field(l, &cols[P_SPEC]), "gpu_spec", path,
                       lineno, d);
    }
    if (rc == 0 && p->num_gpu > 0 && p->gpu_milli == 0) {
        rc = gp_diag_set(d, GP_EPARSE, "%s:%ld: gpu_milli: 0 for a pod with num_gpu %d", path,
                         lineno, p->num_gpu);
    }
    if (rc == 0 && p->num_gpu > 1 && p->gpu_milli != GP_MILLI_PER_GPU) {
        rc = gp_diag_set(d, GP_EPARSE,
                         "%s:%ld: gpu_milli: %d, but a pod with num_gpu %d must ask for 1000", path,
                         lineno, p->gpu_milli, p->num_gpu);
    }
    if (rc == 0 && p->num_gpu == 0 && p->gpu_milli != 0) {
        rc = gp_diag_set(d, GP_EPARSE, "%s:%ld: gpu_milli: %d for a pod with num_gpu 0", path,
                         lineno, p->gpu_milli);
    }
    if (rc == 0 && strcmp(p->gpu_spec, "nan") == 0) {
        p->gpu_spec[0] = '\0';
    }
    return rc;
}

int gp_trace_read_pods(gp_trace *t, const char *path, gp_diag *d)
{
    column cols[P_COLS] = {
        {"name", 1, -1},    {"cpu_milli", 1, -1}, {"memory_mib", 1, -1},
        {"num_gpu", 1, -1}, {"gpu_milli", 1, -1}, {"gpu_spec", 0, -1},
    };
    void *items;
    int n;
    int rc = read_csv(path, cols, P_COLS, sizeof(gp_trace_pod), pod_row, &items, &n, d);
    if (rc < 0) {
        return rc;
    }
    free(t->pods);
    t->pods = items;
    t->npods = n;
    return 0;
}

void gp_trace_fini(gp_trace *t)
{
    free(t->nodes);
    free(t->pods);
    t->nodes = NULL;
    t->pods = NULL;
    t->nnodes = t->npods = 0;
}

int gp_trace_build_cluster(const gp_trace *t, gp_cluster **out, gp_diag *d)
{
    *out = NULL;
    gp_cluster *c = gp_cluster_new();
    if (!c) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (int i = 0; i < t->nnodes; i++) {
        const gp_trace_node *n = &t->nodes[i];
        gp_gpu_spec specs[GP_MAX_GPUS_PER_NODE];
        int model = n->gpus > 0 ? gp_cluster_model(c, n->model, 0) : 0;
        if (model < 0) {
            gp_cluster_free(c);
            return gp_diag_set(d, model, "node %s: model %s: %s", n->name, n->model,
                               gp_strerror(model));
        }
        for (int g = 0; g < n->gpus; g++) {
            specs[g] = (gp_gpu_spec){.model = model, .numa = -1, .nvlink = 0, .mem_mib = 0};
        }
        int rc = gp_cluster_add_node(c, n->name, n->cpu_milli, n->memory_mib, n->gpus, specs);
        if (rc < 0) {
            gp_cluster_free(c);
            return gp_diag_set(d, rc, "node %s: %s", n->name, gp_strerror(rc));
        }
    }
    *out = c;
    return 0;
}

void gp_trace_pod_request(const gp_cluster *c, const gp_trace_pod *p, gp_request *out)
{
    memset(out, 0, sizeof(*out));
    out->cpu_milli = p->cpu_milli;
    out->memory_mib = p->memory_mib;
    if (p->num_gpu == 0) {
        out->kind = GP_REQ_NONE;
    } else if (p->num_gpu == 1 && p->gpu_milli < GP_MILLI_PER_GPU) {
        out->kind = GP_REQ_FRACTION;
        out->gpu_milli = p->gpu_milli;
    } else {
        out->kind = GP_REQ_WHOLE;
        out->gpu_count = p->num_gpu;
    }
    if (!p->gpu_spec[0]) {
        return;
    }
    char spec[sizeof(p->gpu_spec)];
    memcpy(spec, p->gpu_spec, sizeof(spec));
    uint64_t mask = 0;
    int any_unknown = 0;
    char *save = NULL;
    for (char *tok = strtok_r(spec, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
        int m = gp_cluster_find_model(c, tok);
        if (m >= 0) {
            mask |= 1ull << m;
        } else {
            any_unknown = 1;
        }
    }
    if (mask == 0 && any_unknown) {
        /* Only models the cluster lacks: allow a model index no GPU has, so nothing fits. */
        mask = 1ull << (GP_MAX_MODELS - 1);
    }
    out->allowed_models = mask;
}
