/*
 * Fragmentation Gradient Descent (Weng et al., ATC'23), and ours: the same descent over a
 * CPU-aware fragmentation measure (frag.h).
 *
 * fgd: a node scores int(100 * sigmoid((F_before - F_after) / 1000)), F being the node's GPU
 * fragmentation with respect to the target workload (frag.h); a fractional request takes the
 * first GPU whose own score is highest. The truncation to integers is the published
 * definition: nodes whose fragmentation grows by nearly the same amount tie and are chosen
 * between at random.
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

/* ours: FGD's score, choice and ties over the CPU-aware measure (gp_frag_target.cpu_aware). It
 * raises the score of placements that keep a node's CPU in proportion to its idle GPUs, so CPU-
 * only and CPU-heavy pods go where CPU is plentiful and fewer GPUs end up idle for want of CPU
 * near saturation. Whole-GPU types keep FGD's rule on purpose: counting their CPU stranding too
 * pulls CPU-heavy multi-GPU pods onto the few CPU-rich 8-GPU nodes the largest pods need.
 * Fitted to its cluster (gp_policy_fit), each type weighs by how scarce its hosts are
 * (gp_frag_target_fit), so work that may go anywhere is kept off the GPUs that only pods pinned
 * to a model (or needing a large node) can use. */
const policy_ops gp_policy_ours = {
    .name = "ours",
    .summary = "FGD over a CPU-aware fragmentation measure, each pod type weighted by how scarce "
               "its hosts are",
    .needs_target = true,
    .cpu_aware_frag = true,
    .host_aware_frag = true,
    .score = fgd_score,
    .choose_share = fgd_share,
};
