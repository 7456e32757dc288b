/*
 * The baseline policies of the FGD study (Weng et al., ATC'23), as its simulator defines them:
 * Random, DotProduct, GpuClustering, GpuPacking and BestFit. Scores are the simulator's
 * integers (0..100, truncated), so ties fall where they fall there and are broken at random by
 * the placer. Resource vectors are normalised by the largest node of the cluster (CPU and GPU
 * count), which for the Alibaba trace is the simulator's 128 cores and 8 GPUs.
 */
#include "core/cluster_impl.h"
#include "core/policy_impl.h"

/* Per-GPU compute and GPU count a request asks for, in milli-GPU. */
static void request_gpu(const gp_request *r, int64_t *milli, int *count)
{
    switch (r->kind) {
    case GP_REQ_WHOLE:
        *milli = GP_MILLI_PER_GPU;
        *count = r->gpu_count;
        return;
    case GP_REQ_FRACTION:
        *milli = r->gpu_milli;
        *count = 1;
        return;
    case GP_REQ_MIG: {
        int slices = r->mig_profile[0] - '0';
        *milli = (int64_t)slices * GP_MILLI_PER_GPU / GP_MIG_COMPUTE_SLICES;
        *count = 1;
        return;
    }
    default:
        *milli = 0;
        *count = 0;
        return;
    }
}

static double max_cpu(const gp_cluster *c)
{
    return c->max_cpu_milli > 0 ? (double)c->max_cpu_milli : 1.0;
}

static double max_gpu_milli(const gp_cluster *c)
{
    return c->max_gpus > 0 ? (double)c->max_gpus * GP_MILLI_PER_GPU : 1.0;
}

/* ---- Random: every feasible node scores the same; the placer's tie-break is the choice. ---- */

static double random_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    (void)p;
    (void)c;
    (void)node;
    (void)r;
    return 0.0;
}

const policy_ops gp_policy_random = {
    .name = "random",
    .uniform = true,
    .summary = "a feasible node and a fitting GPU drawn uniformly at random",
    .score = random_score,
    .choose_share = gp_share_random,
};

/* ---- DotProduct: least aligned free and requested (CPU, GPU) vectors. ---- */

static double dotproduct_score(const gp_policy *p, const gp_cluster *c, int node,
                               const gp_request *r)
{
    (void)p;
    const gp_node *n = &c->nodes[node];
    int64_t milli;
    int count;
    request_gpu(r, &milli, &count);
    double nc = (double)n->cpu_free / max_cpu(c);
    double ng = (double)gp_node_gpu_milli_free(c, node) / max_gpu_milli(c);
    double pc = (double)r->cpu_milli / max_cpu(c);
    double pg = (double)(milli * count) / max_gpu_milli(c);
    double s = 1.0 - (nc * pc + ng * pg) / 2.0;
    return (double)(int64_t)(100.0 * s);
}

const policy_ops gp_policy_dotproduct = {
    .name = "dotproduct",
    .summary = "node whose free (CPU, GPU) vector is least aligned with the request's",
    .score = dotproduct_score,
    .choose_share = gp_share_best_fit,
};

/* ---- GpuClustering: put work of one class (share, N-GPU) together. ---- */

static int request_tag(const gp_request *r)
{
    switch (r->kind) {
    case GP_REQ_WHOLE:
        return r->gpu_count;
    case GP_REQ_FRACTION:
        return r->gpu_milli < GP_MILLI_PER_GPU ? GP_TAG_SHARE : 1;
    case GP_REQ_MIG:
        return GP_TAG_MIG;
    default:
        return -1;
    }
}

static double clustering_score(const gp_policy *p, const gp_cluster *c, int node,
                               const gp_request *r)
{
    (void)p;
    int tag = request_tag(r);
    if (tag < 0) {
        return 0.0;
    }
    const gp_node *n = &c->nodes[node];
    int64_t cap = (int64_t)max_gpu_milli(c);
    int64_t used = cap - gp_node_gpu_milli_free(c, node);
    int64_t base = used > 0 ? 25 * used / cap : 0;
    uint64_t mine = 1ull << tag;
    if (n->tag_mask == mine) {
        return (double)(base + 75);
    }
    if (n->tag_mask & mine) {
        return (double)(base + 50);
    }
    if (n->tag_mask == 0) {
        return (double)(base + 25);
    }
    return (double)base;
}

const policy_ops gp_policy_clustering = {
    .name = "clustering",
    .uses_tags = true,
    .summary = "node already running work of the same GPU class (share, 1-GPU, 2-GPU, ...)",
    .score = clustering_score,
    .choose_share = gp_share_best_fit,
};

/* ---- GpuPacking: fill partly used GPUs first, then partly used nodes, then empty ones. ---- */

static double packing_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    (void)p;
    int64_t milli;
    int count;
    request_gpu(r, &milli, &count);
    if (milli <= 0) {
        return 0.0;
    }
    const gp_node *n = &c->nodes[node];
    int32_t left[GP_MAX_GPUS_PER_NODE];
    int ng = 0, free_gpus = 0;
    for (int g = 0; g < n->ngpus; g++) {
        const gp_gpu *u = cluster_gpu_const(c, node, g);
        int32_t l = u->mode == GP_GPU_FULL ? u->milli_free : 0;
        free_gpus += l == GP_MILLI_PER_GPU;
        /* insertion sort, ascending and stable */
        int k = ng++;
        while (k > 0 && left[k - 1] > l) {
            left[k] = left[k - 1];
            k--;
        }
        left[k] = l;
    }
    if (free_gpus == n->ngpus) {
        return (double)(33 - free_gpus > free_gpus ? 33 - free_gpus : free_gpus);
    }
    int taken = 0, untouched = 0;
    int64_t sum = 0;
    for (int k = 0; k < ng && taken < count; k++) {
        if (left[k] >= milli) {
            taken++;
            untouched += left[k] == GP_MILLI_PER_GPU;
            sum += (int64_t)left[k] * 100 / GP_MILLI_PER_GPU;
        }
    }
    if (untouched > 0) {
        return (double)(50 - untouched > 33 ? 50 - untouched : 33);
    }
    int64_t s = 100 - sum / 10;
    return (double)(s > 50 ? s : 50);
}

const policy_ops gp_policy_packing = {
    .name = "packing",
    .summary = "partly used GPUs first, then partly used nodes, then empty nodes",
    .score = packing_score,
    .choose_share = gp_share_best_fit,
};

/* ---- BestFit: least (CPU, GPU) left over after placement. ---- */

static double bestfit_score(const gp_policy *p, const gp_cluster *c, int node, const gp_request *r)
{
    (void)p;
    const gp_node *n = &c->nodes[node];
    int64_t milli;
    int count;
    request_gpu(r, &milli, &count);
    double rc = (double)(n->cpu_free - r->cpu_milli) / max_cpu(c);
    double rg = (double)(gp_node_gpu_milli_free(c, node) - milli * count) / max_gpu_milli(c);
    double rest = 0.5 * rc + 0.5 * rg;
    return (double)(int64_t)((1.0 - rest) * 100.0);
}

const policy_ops gp_policy_bestfit = {
    .name = "bestfit",
    .summary = "node with the least CPU and GPU left after placement",
    .score = bestfit_score,
    .choose_share = gp_share_best_fit,
};
