/*
 * Small clusters and requests shared by the unit tests.
 */
#ifndef GP_TESTS_FIXTURES_H
#define GP_TESTS_FIXTURES_H

#include "gpupool/model.h"

#include <string.h>

/* A node of n GPUs of model m with no topology. */
static inline int fx_node(gp_cluster *c, const char *name, int64_t cpu, int64_t mem, int n, int m)
{
    gp_gpu_spec s[GP_MAX_GPUS_PER_NODE];
    for (int i = 0; i < n; i++) {
        s[i] = (gp_gpu_spec){.model = m, .numa = -1, .nvlink = 0, .mem_mib = 0};
    }
    return gp_cluster_add_node(c, name, cpu, mem, n, s);
}

static inline gp_request fx_none(int64_t cpu, int64_t mem)
{
    gp_request r;
    memset(&r, 0, sizeof(r));
    r.cpu_milli = cpu;
    r.memory_mib = mem;
    r.kind = GP_REQ_NONE;
    return r;
}

static inline gp_request fx_whole(int64_t cpu, int count)
{
    gp_request r = fx_none(cpu, 0);
    r.kind = GP_REQ_WHOLE;
    r.gpu_count = count;
    return r;
}

static inline gp_request fx_frac(int64_t cpu, int milli)
{
    gp_request r = fx_none(cpu, 0);
    r.kind = GP_REQ_FRACTION;
    r.gpu_milli = milli;
    return r;
}

static inline gp_request fx_mig(const char *profile)
{
    gp_request r = fx_none(0, 0);
    r.kind = GP_REQ_MIG;
    strncpy(r.mig_profile, profile, sizeof(r.mig_profile) - 1);
    return r;
}

#endif
