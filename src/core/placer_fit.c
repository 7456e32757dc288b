/*
 * Node class summaries for the placer (placer.h): what the node offers a request, reduced to
 * the maxima and counts that gp_node_fits' per-GPU checks are bounded by. Every field is read
 * from what the class key holds (CPU and memory left, schedulability, capabilities, window, and
 * per GPU its model, mode, availability, compute and memory left and capacity), so members of
 * one class have one summary.
 */
#include "core/placer.h"

#include "core/cluster_impl.h"

#include <string.h>

void placer_fit_of(const gp_cluster *c, int node, placer_fit *out)
{
    const gp_node *n = &c->nodes[node];
    memset(out, 0, sizeof(*out));
    out->cpu_free = n->cpu_free;
    out->mem_free = n->mem_free;
    out->window_ms = n->window_ms;
    out->models = n->models;
    out->caps = n->caps;
    out->schedulable = n->schedulable;
    out->max_milli = -1;
    out->max_gpu_mem = -1;
    for (int g = 0; g < n->ngpus; g++) {
        const gp_gpu *u = cluster_gpu_const(c, node, g);
        if (u->avail == GP_GPU_OUT || u->mode != GP_GPU_FULL) {
            continue;
        }
        /* gp_gpu_share_for: a fraction needs compute and memory left on one GPU in FULL mode;
         * a whole GPU needs it empty (no holders, all compute and memory left). */
        if (u->milli_free > out->max_milli) {
            out->max_milli = u->milli_free;
        }
        if (u->mem_free_mib > out->max_gpu_mem) {
            out->max_gpu_mem = u->mem_free_mib;
        }
        if (u->milli_free == GP_MILLI_PER_GPU && u->mem_free_mib == u->mem_mib) {
            out->whole++;
        }
    }
}
