/*
 * Building blocks of FGD-style policies (policy_fgd.c), shared with the policies built on it.
 */
#ifndef GP_CORE_FGD_H
#define GP_CORE_FGD_H

#include "core/frag.h"
#include "gpupool/placement.h"

/* The fragmentation of node (whose state is before) after r takes GPU gpu (FRACTION), or the
 * GPUs gp_policy_choose gives it (WHOLE, MIG), or only CPU (NONE; gpu ignored). */
double gp_fgd_frag_after(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                         const gp_frag_node *before, int gpu);
/* int(100 * sigmoid((f0 - f1) / 1000)): the published FGD score. */
double gp_fgd_sigmoid_score(double f0, double f1);
/* For a FRACTION request: the best score over the GPUs of node that fit, and in *gpu_out the
 * first GPU reaching it. exact: score f0 - f1 instead of the sigmoid integer. */
double gp_fgd_best_share(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r,
                         int exact, int *gpu_out);

#endif
