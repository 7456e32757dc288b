/*
 * Fragmentation Gradient Descent (Weng et al., ATC'23) and fgdbf, our refinement of it.
 *
 * fgd: a node scores int(100 * sigmoid((F_before - F_after) / 1000)), F being the node's GPU
 * fragmentation with respect to the target workload (frag.h); a fractional request takes the
 * first GPU whose own score is highest. The truncation to integers is the published
 * definition: nodes whose fragmentation grows by nearly the same amount tie and are chosen
 * between at random.
 *
 * fgdbf: the same gradient without the truncation, so the node that adds the least
 * fragmentation wins outright; remaining exact ties go to the node left with the least free
 * GPU compute, then CPU (best fit), which keeps empty nodes empty for large requests.
 */
#include "core/cluster_impl.h"
#include "core/policy_impl.h"

#include <math.h>

/* The fragmentation of node after r takes gpu (or the GPUs a whole request would take). */
static double frag_after(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                         const gp_frag_node *before, int gpu)
{
    gp_frag_node n = *before;
    n.cpu_free -= r->cpu_milli;
    if (r->kind == GP_REQ_FRACTION) {
        n.left[gpu] -= r->gpu_milli;
    } else if (r->kind == GP_REQ_WHOLE || r->kind == GP_REQ_MIG) {
        gp_assignment a;
        if (gp_policy_choose(p, c, node, r, NULL, &a) == 0) {
            for (int i = 0; i < a.nshares; i++) {
                n.left[a.shares[i].gpu] = 0;
            }
        }
    }
    return gp_frag_amount(&p->target, &n);
}

static double sigmoid_score(double f0, double f1)
{
    return (double)(int64_t)(100.0 / (1.0 + exp(-(f0 - f1) / 1000.0)));
}

/* Best score over the GPUs a fractional request may take, and the first GPU reaching it.
 * GPUs with equal compute left give equal scores, so each distinct value is scored once. */
static double best_share(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                         int exact, int *gpu_out)
{
    gp_frag_node before;
    gp_frag_node_of(c, node, &before);
    double f0 = gp_frag_amount(&p->target, &before);
    double best = -HUGE_VAL;
    int best_gpu = -1;
    int32_t seen[GP_MAX_GPUS_PER_NODE];
    uint16_t seen_model[GP_MAX_GPUS_PER_NODE];
    double seen_score[GP_MAX_GPUS_PER_NODE];
    int nseen = 0;
    for (int g = 0; g < before.ngpus; g++) {
        if (!gp_gpu_fits(c, node, g, r)) {
            continue;
        }
        double s = HUGE_VAL;
        for (int k = 0; k < nseen; k++) {
            if (seen[k] == before.left[g] && seen_model[k] == before.model[g]) {
                s = seen_score[k];
            }
        }
        if (s == HUGE_VAL) {
            double f1 = frag_after(p, c, node, r, &before, g);
            s = exact ? f0 - f1 : sigmoid_score(f0, f1);
            if (nseen < GP_MAX_GPUS_PER_NODE) {
                seen[nseen] = before.left[g];
                seen_model[nseen] = before.model[g];
                seen_score[nseen++] = s;
            }
        }
        if (s > best) {
            best = s;
            best_gpu = g;
        }
    }
    *gpu_out = best_gpu;
    return best;
}

static double fgd_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    if (r->kind == GP_REQ_FRACTION) {
        int gpu;
        return best_share(p, c, node, r, 0, &gpu);
    }
    gp_frag_node before;
    gp_frag_node_of(c, node, &before);
    return sigmoid_score(gp_frag_amount(&p->target, &before),
                         frag_after(p, c, node, r, &before, -1));
}

static int fgd_share(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                     gp_rng *rng)
{
    (void)rng;
    int gpu;
    best_share(p, c, node, r, 0, &gpu);
    return gpu;
}

const policy_ops gp_policy_fgd = {
    .name = "fgd",
    .summary = "Fragmentation Gradient Descent: least growth of expected GPU fragmentation",
    .needs_target = true,
    .score = fgd_score,
    .choose_share = fgd_share,
};

/* Scale of the best-fit tie-break: far below any fragmentation difference that matters
 * (fragmentation is in milli-GPU weighted by shares of at least 1e-4), far above rounding. */
#define TIE_SCALE 1e-9

static double fgdbf_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    const gp_node *n = &c->nodes[node];
    double delta;
    int64_t gpu_left = gp_node_gpu_milli_free(c, node);
    if (r->kind == GP_REQ_FRACTION) {
        int gpu;
        delta = best_share(p, c, node, r, 1, &gpu);
        gpu_left -= r->gpu_milli;
    } else {
        gp_frag_node before;
        gp_frag_node_of(c, node, &before);
        delta = gp_frag_amount(&p->target, &before) - frag_after(p, c, node, r, &before, -1);
        gpu_left -= r->kind == GP_REQ_WHOLE ? (int64_t)r->gpu_count * GP_MILLI_PER_GPU : 0;
    }
    double cpu_left = (double)(n->cpu_free - r->cpu_milli) / (double)(c->max_cpu_milli + 1);
    double fit = (double)gpu_left / GP_MILLI_PER_GPU + cpu_left;
    return delta - TIE_SCALE * fit;
}

static int fgdbf_share(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                       gp_rng *rng)
{
    (void)rng;
    int gpu;
    best_share(p, c, node, r, 1, &gpu);
    return gpu;
}

const policy_ops gp_policy_fgdbf = {
    .name = "fgdbf",
    .summary = "FGD with exact gradients, ties to the best-fitting node (ours)",
    .needs_target = true,
    .score = fgdbf_score,
    .choose_share = fgdbf_share,
};
