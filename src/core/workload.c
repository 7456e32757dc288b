/*
 * Target workload ("typical pods") of FGD: the most frequent request shapes covering a share of
 * the requests. Sorting, then one pass to group equal shapes.
 */
#include "gpupool/placement.h"

#include <stdlib.h>
#include <string.h>

/* The shape of r: every field but host memory, in a zeroed struct so memcmp compares it. */
static void shape_of(const gp_request *r, gp_request *out)
{
    memset(out, 0, sizeof(*out));
    out->cpu_milli = r->cpu_milli;
    out->kind = r->kind;
    out->allowed_models = r->allowed_models;
    if (r->kind == GP_REQ_WHOLE) {
        out->gpu_count = r->gpu_count;
    } else if (r->kind == GP_REQ_FRACTION) {
        out->gpu_milli = r->gpu_milli;
        out->gpu_mem_mib = r->gpu_mem_mib;
    } else if (r->kind == GP_REQ_MIG) {
        memcpy(out->mig_profile, r->mig_profile, sizeof(out->mig_profile) - 1);
    }
}

static int64_t gpu_request(const gp_request *r)
{
    switch (r->kind) {
    case GP_REQ_WHOLE:
        return (int64_t)r->gpu_count * 1000;
    case GP_REQ_FRACTION:
        return r->gpu_milli;
    default:
        return 0;
    }
}

#define CMP(a, b)                                                                                  \
    do {                                                                                           \
        if ((a) != (b)) {                                                                          \
            return (a) < (b) ? -1 : 1;                                                             \
        }                                                                                          \
    } while (0)

/* Ascending by (cpu, GPU request, count, kind, memory, models, profile). */
static int shape_cmp(const void *pa, const void *pb)
{
    const gp_request *a = pa, *b = pb;
    CMP(a->cpu_milli, b->cpu_milli);
    CMP(gpu_request(a), gpu_request(b));
    CMP(a->gpu_count, b->gpu_count);
    CMP(a->kind, b->kind);
    CMP(a->gpu_mem_mib, b->gpu_mem_mib);
    CMP(a->allowed_models, b->allowed_models);
    return strcmp(a->mig_profile, b->mig_profile);
}

typedef struct group {
    gp_request shape;
    int count;
} group;

/* Descending count; ties in descending shape order. */
static int group_cmp(const void *pa, const void *pb)
{
    const group *a = pa, *b = pb;
    CMP(b->count, a->count);
    return -shape_cmp(&a->shape, &b->shape);
}

int gp_workload_typical(const gp_request *reqs, int n, double coverage, gp_workload_item **out,
                        int *nout)
{
    *out = NULL;
    *nout = 0;
    if (n < 1 || !(coverage > 0.0 && coverage <= 1.0)) {
        return GP_EINVAL;
    }
    gp_request *shapes = malloc(sizeof(gp_request) * (size_t)n);
    group *groups = malloc(sizeof(group) * (size_t)n);
    if (!shapes || !groups) {
        free(shapes);
        free(groups);
        return GP_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        shape_of(&reqs[i], &shapes[i]);
    }
    qsort(shapes, (size_t)n, sizeof(gp_request), shape_cmp);
    int ng = 0;
    for (int i = 0; i < n; i++) {
        if (ng > 0 && memcmp(&groups[ng - 1].shape, &shapes[i], sizeof(gp_request)) == 0) {
            groups[ng - 1].count++;
        } else {
            groups[ng].shape = shapes[i];
            groups[ng++].count = 1;
        }
    }
    free(shapes);
    qsort(groups, (size_t)ng, sizeof(group), group_cmp);
    int64_t expected = (int64_t)(coverage * (double)n + 1e-9), cum = 0;
    int taken = 0;
    while (taken < ng && cum < expected) {
        cum += groups[taken++].count;
    }
    gp_workload_item *items = malloc(sizeof(gp_workload_item) * (size_t)(taken ? taken : 1));
    if (!items) {
        free(groups);
        return GP_ENOMEM;
    }
    for (int i = 0; i < taken; i++) {
        items[i].shape = groups[i].shape;
        items[i].weight = ((double)groups[i].count / (double)n) / ((double)cum / (double)n);
    }
    free(groups);
    *out = items;
    *nout = taken;
    return 0;
}
