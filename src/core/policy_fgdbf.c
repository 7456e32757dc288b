/*
 * fgdbf: our refinement of FGD. A node scores the published FGD integer score; among nodes that
 * tie on it, nodes already running work win over empty ones (packing), which keeps whole nodes
 * free for multi-GPU requests for longer.
 */
#include "core/cluster_impl.h"
#include "core/fgd.h"
#include "core/policy_impl.h"

static double fgdbf_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    const gp_node *n = &c->nodes[node];
    double s;
    if (r->kind == GP_REQ_FRACTION) {
        int gpu;
        s = gp_fgd_best_share(p, c, node, r, 0, &gpu);
    } else {
        gp_frag_node before;
        gp_frag_node_of(c, node, &before);
        s = gp_fgd_sigmoid_score(gp_frag_amount(&p->target, &before),
                                 gp_fgd_frag_after(p, c, node, r, &before, -1));
    }
    int empty = gp_node_gpu_milli_free(c, node) == (int64_t)n->ngpus * GP_MILLI_PER_GPU;
    return s - (empty ? 0.5 : 0.0);
}

static int fgdbf_share(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                       gp_rng *rng)
{
    (void)rng;
    int gpu;
    gp_fgd_best_share(p, c, node, r, 0, &gpu);
    return gpu;
}

const policy_ops gp_policy_fgdbf = {
    .name = "fgdbf",
    .summary = "FGD, ties to nodes already in use (ours)",
    .needs_target = true,
    .score = fgdbf_score,
    .choose_share = fgdbf_share,
};
