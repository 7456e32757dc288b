/*
 * gp_cluster: storage of models, nodes and GPUs, construction and read access.
 *
 * Nodes and GPUs live in two growable arrays; a node's GPUs are the contiguous run
 * gpus[first_gpu .. first_gpu + ngpus). Node indexes are stable for the cluster's lifetime.
 * Allocation arithmetic lives in alloc.c; this file never changes allocation state (a GPU's MIG
 * layout, set here, is not allocation state).
 */
#include "core/cluster_impl.h"
#include "gpupool/constraint.h"
#include "core/grow.h"

#include <stdlib.h>
#include <string.h>

gp_cluster *gp_cluster_new(void)
{
    return calloc(1, sizeof(gp_cluster));
}

void gp_cluster_free(gp_cluster *c)
{
    if (!c) {
        return;
    }
    for (int i = 0; i < c->nnodes; i++) {
        free(c->nodes[i].labels);
        free(c->nodes[i].taints);
    }
    free(c->nodes);
    free(c->gpus);
    free(c->changed);
    free(c->changed_flag);
    free(c);
}

gp_cluster *gp_cluster_clone(const gp_cluster *c)
{
    gp_cluster *n = malloc(sizeof(*n));
    if (!n) {
        return NULL;
    }
    *n = *c;
    size_t cap_nodes = (size_t)(c->cap_nodes ? c->cap_nodes : 1);
    n->nodes = malloc(sizeof(gp_node) * cap_nodes);
    n->gpus = malloc(sizeof(gp_gpu) * (size_t)(c->cap_gpus ? c->cap_gpus : 1));
    n->changed = malloc(sizeof(int) * cap_nodes);
    n->changed_flag = malloc(cap_nodes);
    if (!n->nodes || !n->gpus || !n->changed || !n->changed_flag) {
        free(n->nodes);
        free(n->gpus);
        free(n->changed);
        free(n->changed_flag);
        free(n);
        return NULL;
    }
    if (c->nnodes) { /* an empty cluster's arrays are NULL: no memcpy from NULL */
        memcpy(n->nodes, c->nodes, sizeof(gp_node) * (size_t)c->nnodes);
    }
    if (c->ngpus) {
        memcpy(n->gpus, c->gpus, sizeof(gp_gpu) * (size_t)c->ngpus);
    }
    /* The clone's consumer starts from scratch: every node is new to it. */
    n->nchanged = c->nnodes;
    for (int i = 0; i < c->nnodes; i++) {
        n->nodes[i].labels = NULL;
        n->nodes[i].taints = NULL;
        n->changed[i] = i;
        n->changed_flag[i] = 1;
    }
    for (int i = 0; i < c->nnodes; i++) {
        const gp_node *src = &c->nodes[i];
        if (src->nlabels == 0) {
            continue;
        }
        n->nodes[i].labels = malloc(sizeof(gp_label) * (size_t)src->nlabels);
        if (!n->nodes[i].labels) {
            gp_cluster_free(n);
            return NULL;
        }
        memcpy(n->nodes[i].labels, src->labels, sizeof(gp_label) * (size_t)src->nlabels);
    }
    for (int i = 0; i < c->nnodes; i++) {
        const gp_node *src = &c->nodes[i];
        if (src->ntaints > 0) {
            n->nodes[i].taints = malloc(sizeof(gp_taint) * (size_t)src->ntaints);
            if (!n->nodes[i].taints) {
                gp_cluster_free(n);
                return NULL;
            }
            memcpy(n->nodes[i].taints, src->taints, sizeof(gp_taint) * (size_t)src->ntaints);
        }
    }
    return n;
}

static void copy_name(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n >= GP_NAME_MAX) {
        n = GP_NAME_MAX - 1;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int gp_cluster_find_model(const gp_cluster *c, const char *name)
{
    for (int i = 0; i < c->nmodels; i++) {
        if (strcmp(c->models[i].name, name) == 0) {
            return i;
        }
    }
    return GP_ENOENT;
}

int gp_cluster_model(gp_cluster *c, const char *name, int64_t mem_mib)
{
    if (!name || !*name || strlen(name) >= GP_NAME_MAX || mem_mib < 0) {
        return GP_EINVAL;
    }
    int i = gp_cluster_find_model(c, name);
    if (i >= 0) {
        return i;
    }
    if (c->nmodels >= GP_MAX_MODELS) {
        return GP_ERANGE;
    }
    gp_gpu_model *m = &c->models[c->nmodels];
    copy_name(m->name, name);
    m->mem_mib = mem_mib;
    m->mig = gp_mig_geometry_of_model(name);
    return c->nmodels++;
}

int gp_cluster_model_count(const gp_cluster *c)
{
    return c->nmodels;
}

const gp_gpu_model *gp_cluster_model_info(const gp_cluster *c, int model)
{
    return model >= 0 && model < c->nmodels ? &c->models[model] : NULL;
}

/* Grows the node array and the change list together, so a change never needs memory. */
static int grow_nodes(gp_cluster *c, int need)
{
    if (need <= c->cap_nodes) {
        return 0;
    }
    int ncap = c->cap_nodes ? c->cap_nodes * 2 : 16;
    while (ncap < need) {
        ncap *= 2;
    }
    gp_node *nodes = realloc(c->nodes, sizeof(gp_node) * (size_t)ncap);
    if (!nodes) {
        return GP_ENOMEM;
    }
    c->nodes = nodes;
    int *changed = realloc(c->changed, sizeof(int) * (size_t)ncap);
    if (!changed) {
        return GP_ENOMEM;
    }
    c->changed = changed;
    uint8_t *flag = realloc(c->changed_flag, (size_t)ncap);
    if (!flag) {
        return GP_ENOMEM;
    }
    memset(flag + c->cap_nodes, 0, (size_t)(ncap - c->cap_nodes));
    c->changed_flag = flag;
    c->cap_nodes = ncap;
    return 0;
}

static int check_gpu_specs(const gp_cluster *c, int ngpus, const gp_gpu_spec *gpus)
{
    for (int g = 0; g < ngpus; g++) {
        if (gpus[g].model < 0 || gpus[g].model >= c->nmodels || gpus[g].mem_mib < 0) {
            return GP_EINVAL;
        }
        if (ngpus < 32 && (gpus[g].nvlink >> ngpus) != 0) {
            return GP_EINVAL;
        }
        if (gpus[g].nvlink & (1u << g)) {
            return GP_EINVAL;
        }
    }
    return 0;
}

int gp_cluster_add_node(gp_cluster *c, const char *name, int64_t cpu_milli, int64_t memory_mib,
                        int ngpus, const gp_gpu_spec *gpus)
{
    if (!name || !*name || strlen(name) >= GP_NAME_MAX || cpu_milli < 0 || memory_mib < 0 ||
        ngpus < 0 || ngpus > GP_MAX_GPUS_PER_NODE || (ngpus > 0 && !gpus)) {
        return GP_EINVAL;
    }
    int rc = check_gpu_specs(c, ngpus, gpus);
    if (rc < 0) {
        return rc;
    }
    if (grow_nodes(c, c->nnodes + 1) < 0 ||
        gp_grow((void **)&c->gpus, &c->cap_gpus, c->ngpus + ngpus, sizeof(gp_gpu), 16) < 0) {
        return GP_ENOMEM;
    }
    gp_node *n = &c->nodes[c->nnodes];
    memset(n, 0, sizeof(*n));
    copy_name(n->name, name);
    n->cpu_milli = n->cpu_free = cpu_milli;
    n->memory_mib = n->mem_free = memory_mib;
    n->ngpus = ngpus;
    n->first_gpu = c->ngpus;
    n->schedulable = true;
    n->window_ms = -1;
    for (int g = 0; g < ngpus; g++) {
        gp_gpu *u = &c->gpus[c->ngpus + g];
        memset(u, 0, sizeof(*u));
        u->model = (uint16_t)gpus[g].model;
        u->numa = (int16_t)gpus[g].numa;
        u->nvlink = gpus[g].nvlink;
        u->mem_mib = gpus[g].mem_mib ? gpus[g].mem_mib : c->models[gpus[g].model].mem_mib;
        u->mem_free_mib = u->mem_mib;
        u->milli_free = GP_MILLI_PER_GPU;
        u->mode = GP_GPU_FULL;
        n->models |= 1ull << gpus[g].model;
    }
    c->ngpus += ngpus;
    c->milli_capacity += (int64_t)ngpus * GP_MILLI_PER_GPU;
    if (cpu_milli > c->max_cpu_milli) {
        c->max_cpu_milli = cpu_milli;
    }
    if (ngpus > c->max_gpus) {
        c->max_gpus = ngpus;
    }
    cluster_touch(c, c->nnodes);
    return c->nnodes++;
}

int gp_cluster_set_label(gp_cluster *c, int node, const char *key, const char *value)
{
    if (node < 0 || node >= c->nnodes || !key || !*key || !value || strlen(key) >= GP_NAME_MAX ||
        strlen(value) >= GP_NAME_MAX) {
        return GP_EINVAL;
    }
    gp_node *n = &c->nodes[node];
    for (int i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, key) == 0) {
            copy_name(n->labels[i].value, value);
            cluster_touch(c, node);
            return 0;
        }
    }
    gp_label *l = realloc(n->labels, sizeof(gp_label) * (size_t)(n->nlabels + 1));
    if (!l) {
        return GP_ENOMEM;
    }
    n->labels = l;
    copy_name(l[n->nlabels].key, key);
    copy_name(l[n->nlabels].value, value);
    n->nlabels++;
    cluster_touch(c, node);
    return 0;
}

int gp_cluster_set_taints(gp_cluster *c, int node, const gp_taint *taints, int n)
{
    if (node < 0 || node >= c->nnodes || n < 0 || (n > 0 && !taints)) {
        return GP_EINVAL;
    }
    gp_taint *t = NULL;
    if (n > 0) {
        t = malloc(sizeof(gp_taint) * (size_t)n);
        if (!t) {
            return GP_ENOMEM;
        }
        memcpy(t, taints, sizeof(gp_taint) * (size_t)n);
    }
    gp_node *x = &c->nodes[node];
    free(x->taints);
    x->taints = t;
    x->ntaints = n;
    cluster_touch(c, node);
    return 0;
}

int gp_cluster_set_schedulable(gp_cluster *c, int node, bool schedulable)
{
    if (node < 0 || node >= c->nnodes) {
        return GP_EINVAL;
    }
    c->nodes[node].schedulable = schedulable;
    cluster_touch(c, node);
    return 0;
}

int gp_cluster_set_caps(gp_cluster *c, int node, uint32_t caps)
{
    if (node < 0 || node >= c->nnodes) {
        return GP_EINVAL;
    }
    if (c->nodes[node].caps != caps) {
        c->nodes[node].caps = caps;
        cluster_touch(c, node);
    }
    return 0;
}

int gp_cluster_set_gpu_avail(gp_cluster *c, int node, int gpu, int avail)
{
    if (node < 0 || node >= c->nnodes || gpu < 0 || gpu >= c->nodes[node].ngpus ||
        avail < GP_GPU_IN_SERVICE || avail > GP_GPU_SPARE) {
        return GP_EINVAL;
    }
    gp_gpu *u = &c->gpus[c->nodes[node].first_gpu + gpu];
    if (u->avail != avail) {
        u->avail = (uint8_t)avail;
        cluster_touch(c, node);
    }
    return 0;
}

int gp_cluster_set_mig_layout(gp_cluster *c, int node, int gpu, const gp_mig_instance *in, int n,
                              gp_diag *d)
{
    if (node < 0 || node >= c->nnodes || gpu < 0 || gpu >= c->nodes[node].ngpus) {
        return gp_diag_set(d, GP_EINVAL, "no GPU %d on node %d", gpu, node);
    }
    gp_gpu *u = &c->gpus[c->nodes[node].first_gpu + gpu];
    if (u->mode != GP_GPU_MIG || u->mig_dynamic) {
        return gp_diag_set(d, GP_ESTATE, "GPU %d of node %s is not partitioned by an operator", gpu,
                           c->nodes[node].name);
    }
    uint8_t slots[GP_MIG_MEMORY_SLICES];
    int rc = gp_mig_layout_encode(c->models[u->model].mig, in, n, slots, d);
    if (rc < 0) {
        return rc;
    }
    if (memcmp(u->mig_layout, slots, sizeof(slots)) != 0) {
        memcpy(u->mig_layout, slots, sizeof(slots));
        cluster_touch(c, node);
    }
    return 0;
}

int gp_cluster_set_window(gp_cluster *c, int node, int64_t window_ms)
{
    if (node < 0 || node >= c->nnodes || window_ms < -1) {
        return GP_EINVAL;
    }
    if (c->nodes[node].window_ms != window_ms) {
        c->nodes[node].window_ms = window_ms;
        cluster_touch(c, node);
    }
    return 0;
}

void gp_cluster_set_dynamic_mig(gp_cluster *c, bool allow)
{
    c->dynamic_mig = allow;
}

bool gp_cluster_dynamic_mig(const gp_cluster *c)
{
    return c->dynamic_mig;
}

int gp_cluster_node_count(const gp_cluster *c)
{
    return c->nnodes;
}

int gp_cluster_gpu_count(const gp_cluster *c)
{
    return c->ngpus;
}

const gp_node *gp_cluster_node(const gp_cluster *c, int node)
{
    return node >= 0 && node < c->nnodes ? &c->nodes[node] : NULL;
}

const gp_gpu *gp_cluster_gpu(const gp_cluster *c, int node, int gpu)
{
    if (node < 0 || node >= c->nnodes || gpu < 0 || gpu >= c->nodes[node].ngpus) {
        return NULL;
    }
    return &c->gpus[c->nodes[node].first_gpu + gpu];
}

int gp_cluster_find_node(const gp_cluster *c, const char *name)
{
    for (int i = 0; i < c->nnodes; i++) {
        if (strcmp(c->nodes[i].name, name) == 0) {
            return i;
        }
    }
    return GP_ENOENT;
}

int64_t gp_cluster_gpu_milli_capacity(const gp_cluster *c)
{
    return c->milli_capacity;
}

int64_t gp_cluster_gpu_milli_allocated(const gp_cluster *c)
{
    return c->milli_allocated;
}

int gp_cluster_changed_nodes(const gp_cluster *c, const int **nodes)
{
    *nodes = c->changed;
    return c->nchanged;
}

void gp_cluster_clear_changed(gp_cluster *c)
{
    for (int i = 0; i < c->nchanged; i++) {
        c->changed_flag[c->changed[i]] = 0;
    }
    c->nchanged = 0;
}
