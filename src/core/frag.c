/*
 * Fragmentation arithmetic. One pass over the GPUs per type; nodes have at most 32 GPUs and the
 * target workload tens of types, and the placer caches per node class, so this stays cheap.
 */
#include "core/frag.h"

#include "core/cluster_impl.h"
#include "gpupool/placement.h"

#include <stdlib.h>
#include <string.h>

int gp_frag_target_init(gp_frag_target *t, const gp_workload *w)
{
    memset(t, 0, sizeof(*t));
    t->types = calloc((size_t)(w->nitems ? w->nitems : 1), sizeof(gp_frag_type));
    if (!t->types) {
        return GP_ENOMEM;
    }
    for (int i = 0; i < w->nitems; i++) {
        const gp_request *r = &w->items[i].shape;
        gp_frag_type *ft = &t->types[t->ntypes];
        switch (r->kind) {
        case GP_REQ_NONE:
            ft->milli = 0;
            ft->count = 0;
            break;
        case GP_REQ_WHOLE:
            ft->milli = GP_MILLI_PER_GPU;
            ft->count = r->gpu_count;
            break;
        case GP_REQ_FRACTION:
            ft->milli = r->gpu_milli;
            ft->count = 1;
            break;
        default:
            continue;
        }
        ft->cpu_milli = r->cpu_milli;
        ft->allowed_models = r->allowed_models;
        ft->weight = ft->share = w->items[i].weight;
        t->ntypes++;
    }
    return 0;
}

void gp_frag_target_fini(gp_frag_target *t)
{
    free(t->types);
    memset(t, 0, sizeof(*t));
}

/* Whether the GPU models of a node allow t. */
static bool model_allowed(const gp_frag_type *t, uint16_t model)
{
    return t->allowed_models == 0 || (t->allowed_models & (1ull << model));
}

/* Whether n could host t were it empty: CPU capacity and enough GPUs of allowed models. */
static bool can_host(const gp_frag_type *t, const gp_frag_node *n)
{
    if (n->cpu_cap < t->cpu_milli || n->ngpus < t->count) {
        return false;
    }
    if (t->allowed_models == 0) {
        return true;
    }
    int gpus = 0;
    for (int g = 0; g < n->ngpus && gpus < t->count; g++) {
        gpus += model_allowed(t, n->model[g]);
    }
    return gpus >= t->count;
}

void gp_frag_target_fit(gp_frag_target *t, const gp_cluster *c)
{
    /* One pass over the nodes; each type's weight holds its hosts' GPU count until the end. */
    int64_t all = 0;
    for (int i = 0; i < t->ntypes; i++) {
        t->types[i].weight = 0.0;
    }
    for (int node = 0; node < c->nnodes; node++) {
        gp_frag_node n;
        gp_frag_node_of(c, node, &n);
        all += n.ngpus;
        for (int i = 0; i < t->ntypes; i++) {
            t->types[i].weight += can_host(&t->types[i], &n) ? n.ngpus : 0;
        }
    }
    for (int i = 0; i < t->ntypes; i++) {
        gp_frag_type *ft = &t->types[i];
        ft->weight = ft->weight > 0.0 ? ft->share * (double)all / ft->weight : 0.0;
    }
}

void gp_frag_node_of(const gp_cluster *c, int node, gp_frag_node *out)
{
    const gp_node *n = &c->nodes[node];
    out->cpu_free = n->cpu_free;
    out->cpu_cap = n->cpu_milli;
    out->ngpus = n->ngpus;
    for (int g = 0; g < n->ngpus; g++) {
        const gp_gpu *u = cluster_gpu_const(c, node, g);
        out->left[g] = u->mode == GP_GPU_FULL ? u->milli_free : 0;
        out->model[g] = u->model;
    }
}

/* Fragment of one type on n, given the node's total idle compute. */
static double type_fragment(const gp_frag_type *t, const gp_frag_node *n, int64_t total,
                            bool cpu_aware)
{
    if (t->count == 0 || t->milli == 0) {
        return (double)total;
    }
    int32_t host[GP_MAX_GPUS_PER_NODE]; /* compute left of the GPUs that can host t, descending */
    int hosts = 0;
    int64_t usable = 0;
    for (int g = 0; g < n->ngpus; g++) {
        if (!model_allowed(t, n->model[g]) || n->left[g] < t->milli) {
            continue;
        }
        usable += n->left[g];
        int k = hosts++;
        while (k > 0 && host[k - 1] < n->left[g]) {
            host[k] = host[k - 1];
            k--;
        }
        host[k] = n->left[g];
    }
    if (hosts < t->count || n->cpu_free < t->cpu_milli) {
        return (double)total;
    }
    if (cpu_aware && t->milli < GP_MILLI_PER_GPU && t->cpu_milli > 0 &&
        n->cpu_free / t->cpu_milli < hosts) {
        usable = 0;
        for (int k = 0; k < n->cpu_free / t->cpu_milli; k++) {
            usable += host[k];
        }
    }
    return (double)(total - usable);
}

double gp_frag_amount(const gp_frag_target *t, const gp_frag_node *n)
{
    int64_t total = 0;
    for (int g = 0; g < n->ngpus; g++) {
        total += n->left[g];
    }
    if (total == 0) {
        return 0.0;
    }
    double frag = 0.0;
    for (int i = 0; i < t->ntypes; i++) {
        const gp_frag_type *ft = &t->types[i];
        if (ft->weight == 0.0) {
            continue; /* a type no node can host (gp_frag_target_fit) */
        }
        frag += ft->weight * type_fragment(ft, n, total, t->cpu_aware);
    }
    return frag;
}
