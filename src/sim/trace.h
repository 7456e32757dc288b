/*
 * Reading the openb trace format (Alibaba cluster-trace-gpu-v2023) into plain arrays.
 *
 * Node list: columns sn, cpu_milli, memory_mib, gpu, model (any order; others ignored).
 * Pod list:  columns name, cpu_milli, memory_mib, num_gpu, gpu_milli, and optionally gpu_spec
 *            (`|`-separated allowed models); others ignored.
 * Every error names the file, the line and the column: `pods.csv:17: num_gpu: malformed number
 * "x"`, with code GP_EPARSE (bad content) or GP_EIO (cannot read).
 */
#ifndef GP_SIM_TRACE_H
#define GP_SIM_TRACE_H

#include "gpupool/error.h"
#include "gpupool/model.h"

#include <stdint.h>

typedef struct gp_trace_node {
    char name[GP_NAME_MAX];
    int64_t cpu_milli;
    int64_t memory_mib;
    int gpus;
    char model[GP_NAME_MAX];
} gp_trace_node;

typedef struct gp_trace_pod {
    char name[GP_NAME_MAX];
    int64_t cpu_milli;
    int64_t memory_mib;
    int num_gpu;        /* 0..8 in the published traces; up to GP_MAX_GPUS_PER_NODE */
    int gpu_milli;      /* per GPU, 0..1000 */
    char gpu_spec[256]; /* "" or "V100M16|V100M32" */
} gp_trace_pod;

typedef struct gp_trace {
    gp_trace_node *nodes;
    int nnodes;
    gp_trace_pod *pods;
    int npods;
} gp_trace;

/* Reads a node list into t->nodes. On failure t->nodes is unchanged and d says why. */
int gp_trace_read_nodes(gp_trace *t, const char *path, gp_diag *d);
/* Reads a pod list into t->pods. On failure t->pods is unchanged and d says why. */
int gp_trace_read_pods(gp_trace *t, const char *path, gp_diag *d);
void gp_trace_fini(gp_trace *t);

/* Builds a cluster of the trace's nodes (models interned, GPU memory not tracked). */
int gp_trace_build_cluster(const gp_trace *t, gp_cluster **out, gp_diag *d);
/* Translates a pod into a request against cluster c. A gpu_spec naming only models c lacks
 * allows just a model index no GPU has (the last one), so such a pod can never be placed. */
void gp_trace_pod_request(const gp_cluster *c, const gp_trace_pod *p, gp_request *out);

#endif
