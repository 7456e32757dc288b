/*
 * Feasibility, assignment and release: the only code that changes allocation state.
 *
 * assign and release validate the whole assignment before touching anything, so a failure
 * leaves the cluster as it was; after the change, GP_ALWAYS re-checks the node's invariants.
 */
#include "core/cluster_impl.h"
#include "core/assert.h"

#include <string.h>

static bool model_allowed(const gp_request *r, int model)
{
    return r->allowed_models == 0 || (r->allowed_models & (1ull << model)) != 0;
}

static bool gpu_empty(const gp_gpu *u)
{
    return u->mode == GP_GPU_FULL && u->holders == 0 && u->milli_free == GP_MILLI_PER_GPU &&
           u->mem_free_mib == u->mem_mib;
}

static const gp_mig_profile *mig_profile_for(const gp_cluster *c, const gp_gpu *u,
                                             const gp_request *r)
{
    gp_mig_geometry g = c->models[u->model].mig;
    return g == GP_MIG_NONE ? NULL : gp_mig_find(g, r->mig_profile);
}

int gp_gpu_share_for(const gp_cluster *c, int node, int gpu, const gp_request *r, gp_gpu_share *out)
{
    const gp_gpu *u = cluster_gpu_const(c, node, gpu);
    memset(out, 0, sizeof(*out));
    out->gpu = (uint8_t)gpu;
    out->mig_start = -1;
    if (u->avail == GP_GPU_OUT || (u->avail == GP_GPU_SPARE && !r->spare_ok) ||
        !model_allowed(r, u->model)) {
        return GP_ENOSPC;
    }
    switch (r->kind) {
    case GP_REQ_WHOLE:
        if (!gpu_empty(u)) {
            return GP_ENOSPC;
        }
        out->milli = GP_MILLI_PER_GPU;
        out->mem_mib = u->mem_mib;
        return 0;
    case GP_REQ_FRACTION:
        if (u->mode != GP_GPU_FULL || u->milli_free < r->gpu_milli ||
            (r->gpu_mem_mib > 0 && u->mem_free_mib < r->gpu_mem_mib)) {
            return GP_ENOSPC;
        }
        out->milli = r->gpu_milli;
        out->mem_mib = r->gpu_mem_mib;
        return 0;
    case GP_REQ_MIG: {
        const gp_mig_profile *p = mig_profile_for(c, u, r);
        mig_choice ch;
        if (!p || !(u->mode == GP_GPU_MIG || (c->dynamic_mig && gpu_empty(u))) ||
            !mig_choose(c, u, p, &ch)) {
            return GP_ENOSPC;
        }
        out->mig_start = (int8_t)ch.start;
        out->mig_memory_slices = (int8_t)p->memory_slices;
        out->mig_compute_slices = (int8_t)p->compute_slices;
        out->mig_reused = ch.reused;
        out->mig_destroys = ch.destroys;
        return 0;
    }
    default:
        return GP_EINVAL;
    }
}

bool gp_gpu_fits(const gp_cluster *c, int node, int gpu, const gp_request *r)
{
    gp_gpu_share s;
    return gp_gpu_share_for(c, node, gpu, r, &s) == 0;
}

bool gp_node_fits(const gp_cluster *c, int node, const gp_request *r)
{
    const gp_node *n = &c->nodes[node];
    if (!n->schedulable || n->cpu_free < r->cpu_milli || n->mem_free < r->memory_mib ||
        (n->caps & r->needs) != r->needs) {
        return false;
    }
    if (n->window_ms >= 0 && (r->runtime_ms <= 0 || r->runtime_ms > n->window_ms)) {
        return false;
    }
    if (r->kind == GP_REQ_NONE) {
        return true;
    }
    if (r->allowed_models && (n->models & r->allowed_models) == 0) {
        return false;
    }
    int need = r->kind == GP_REQ_WHOLE ? r->gpu_count : 1;
    int have = 0;
    for (int g = 0; g < n->ngpus && have < need; g++) {
        if (gp_gpu_fits(c, node, g, r)) {
            have++;
        }
    }
    return have >= need;
}

/* Whether (compute, memory slices, start) is an instance some profile of g allows. */
static bool mig_shape_legal(gp_mig_geometry g, const gp_gpu_share *s)
{
    int n;
    const gp_mig_profile *p = gp_mig_profiles(g, &n);
    for (int i = 0; i < n; i++) {
        if (p[i].compute_slices == s->mig_compute_slices &&
            p[i].memory_slices == s->mig_memory_slices && s->mig_start >= 0 &&
            s->mig_start < GP_MIG_MEMORY_SLICES && (p[i].legal_starts & (1u << s->mig_start))) {
            return true;
        }
    }
    return false;
}

static uint8_t share_mask(const gp_gpu_share *s)
{
    return (uint8_t)(((1u << s->mig_memory_slices) - 1u) << s->mig_start);
}

/* Validates shape: node index, share count, distinct GPUs in range, numbers in range. */
static int check_shape(const gp_cluster *c, const gp_assignment *a)
{
    if (a->node < 0 || a->node >= c->nnodes || a->cpu_milli < 0 || a->memory_mib < 0 ||
        a->nshares < 0 || a->nshares > c->nodes[a->node].ngpus) {
        return GP_EINVAL;
    }
    uint32_t seen = 0;
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        if (s->gpu >= c->nodes[a->node].ngpus || (seen & (1u << s->gpu))) {
            return GP_EINVAL;
        }
        seen |= 1u << s->gpu;
        if (s->mig_start >= 0) {
            const gp_gpu *u = cluster_gpu_const(c, a->node, s->gpu);
            if (!mig_shape_legal(c->models[u->model].mig, s) || s->milli != 0 || s->mem_mib != 0) {
                return GP_EINVAL;
            }
        } else if (s->milli < 0 || s->milli > GP_MILLI_PER_GPU || s->mem_mib < 0 ||
                   (s->milli == 0 && s->mem_mib == 0)) {
            return GP_EINVAL;
        }
    }
    return 0;
}

static bool share_fits(const gp_cluster *c, int node, const gp_gpu_share *s)
{
    const gp_gpu *u = cluster_gpu_const(c, node, s->gpu);
    if (s->mig_start < 0) {
        return u->mode == GP_GPU_FULL && u->milli_free >= s->milli && u->mem_free_mib >= s->mem_mib;
    }
    if (u->mode == GP_GPU_FULL) {
        if (!c->dynamic_mig || !gpu_empty(u)) {
            return false;
        }
        return true; /* an empty GPU takes any legal instance */
    }
    return (u->mig_mem_used & share_mask(s)) == 0 &&
           u->mig_compute_used + s->mig_compute_slices <= GP_MIG_COMPUTE_SLICES;
}

static bool share_held(const gp_cluster *c, int node, const gp_gpu_share *s)
{
    const gp_gpu *u = cluster_gpu_const(c, node, s->gpu);
    if (s->mig_start < 0) {
        return u->mode == GP_GPU_FULL && u->holders > 0 &&
               u->milli_free + s->milli <= GP_MILLI_PER_GPU &&
               u->mem_free_mib + s->mem_mib <= u->mem_mib;
    }
    return u->mode == GP_GPU_MIG && u->mig_instances > 0 &&
           (u->mig_mem_used & share_mask(s)) == share_mask(s) &&
           u->mig_compute_used >= s->mig_compute_slices;
}

/* Checks one node's invariants; used after every change. */
static bool node_consistent(const gp_cluster *c, int node)
{
    const gp_node *n = &c->nodes[node];
    if (n->cpu_free < 0 || n->cpu_free > n->cpu_milli || n->mem_free < 0 ||
        n->mem_free > n->memory_mib) {
        return false;
    }
    for (int g = 0; g < n->ngpus; g++) {
        const gp_gpu *u = cluster_gpu_const(c, node, g);
        if (u->milli_free < 0 || u->milli_free > GP_MILLI_PER_GPU || u->mem_free_mib < 0 ||
            u->mem_free_mib > u->mem_mib || u->mig_compute_used > GP_MIG_COMPUTE_SLICES) {
            return false;
        }
        if (u->mode == GP_GPU_MIG && (u->holders || u->milli_free != GP_MILLI_PER_GPU)) {
            return false;
        }
        if (u->mode == GP_GPU_FULL && (u->mig_instances || u->mig_mem_used)) {
            return false;
        }
        if (u->mode == GP_GPU_FULL || u->mig_dynamic) {
            for (int s = 0; s < GP_MIG_MEMORY_SLICES; s++) {
                if (u->mig_layout[s]) {
                    return false; /* only an operator-partitioned GPU has a layout */
                }
            }
        }
    }
    return true;
}

int gp_assignment_tag(const gp_assignment *a)
{
    if (a->nshares == 0) {
        return -1;
    }
    if (a->shares[0].mig_start >= 0) {
        return GP_TAG_MIG;
    }
    if (a->nshares == 1 && a->shares[0].milli < GP_MILLI_PER_GPU) {
        return GP_TAG_SHARE;
    }
    return a->nshares;
}

static void add_tag(gp_node *n, int tag, int delta)
{
    if (tag < 0) {
        return;
    }
    n->tags[tag] = (uint16_t)(n->tags[tag] + delta);
    if (n->tags[tag]) {
        n->tag_mask |= 1ull << tag;
    } else {
        n->tag_mask &= ~(1ull << tag);
    }
}

int gp_cluster_assign(gp_cluster *c, const gp_assignment *a)
{
    int rc = check_shape(c, a);
    if (rc < 0) {
        return rc;
    }
    gp_node *n = &c->nodes[a->node];
    if (n->cpu_free < a->cpu_milli || n->mem_free < a->memory_mib) {
        return GP_ENOSPC;
    }
    for (int i = 0; i < a->nshares; i++) {
        if (!share_fits(c, a->node, &a->shares[i])) {
            return GP_ENOSPC;
        }
    }
    n->cpu_free -= a->cpu_milli;
    n->mem_free -= a->memory_mib;
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        gp_gpu *u = cluster_gpu(c, a->node, s->gpu);
        if (s->mig_start < 0) {
            u->milli_free -= s->milli;
            u->mem_free_mib -= s->mem_mib;
            u->holders++;
            c->milli_allocated += s->milli;
            continue;
        }
        if (u->mode == GP_GPU_FULL) {
            u->mode = GP_GPU_MIG;
            u->mig_dynamic = 1;
        }
        int64_t before = mig_milli(u->mig_compute_used);
        u->mig_mem_used |= share_mask(s);
        u->mig_compute_used = (uint8_t)(u->mig_compute_used + s->mig_compute_slices);
        u->mig_instances++;
        c->milli_allocated += mig_milli(u->mig_compute_used) - before;
    }
    add_tag(n, gp_assignment_tag(a), 1);
    cluster_touch(c, a->node);
    GP_ALWAYS(node_consistent(c, a->node));
    return 0;
}

int gp_cluster_release(gp_cluster *c, const gp_assignment *a)
{
    int rc = check_shape(c, a);
    if (rc < 0) {
        return rc;
    }
    gp_node *n = &c->nodes[a->node];
    if (n->cpu_free + a->cpu_milli > n->cpu_milli || n->mem_free + a->memory_mib > n->memory_mib) {
        return GP_EINVAL;
    }
    for (int i = 0; i < a->nshares; i++) {
        if (!share_held(c, a->node, &a->shares[i])) {
            return GP_EINVAL;
        }
    }
    int tag = gp_assignment_tag(a);
    if (tag >= 0 && n->tags[tag] == 0) {
        return GP_EINVAL;
    }
    n->cpu_free += a->cpu_milli;
    n->mem_free += a->memory_mib;
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        gp_gpu *u = cluster_gpu(c, a->node, s->gpu);
        if (s->mig_start < 0) {
            u->milli_free += s->milli;
            u->mem_free_mib += s->mem_mib;
            u->holders--;
            c->milli_allocated -= s->milli;
            continue;
        }
        int64_t before = mig_milli(u->mig_compute_used);
        u->mig_mem_used &= (uint8_t)~share_mask(s);
        u->mig_compute_used = (uint8_t)(u->mig_compute_used - s->mig_compute_slices);
        u->mig_instances--;
        c->milli_allocated += mig_milli(u->mig_compute_used) - before;
        if (u->mig_instances == 0 && u->mig_dynamic) {
            u->mode = GP_GPU_FULL;
            u->mig_dynamic = 0;
        }
    }
    add_tag(n, gp_assignment_tag(a), -1);
    cluster_touch(c, a->node);
    GP_ALWAYS(node_consistent(c, a->node));
    return 0;
}

int gp_cluster_enable_mig(gp_cluster *c, int node, int gpu)
{
    if (node < 0 || node >= c->nnodes || gpu < 0 || gpu >= c->nodes[node].ngpus) {
        return GP_EINVAL;
    }
    gp_gpu *u = cluster_gpu(c, node, gpu);
    if (c->models[u->model].mig == GP_MIG_NONE) {
        return GP_ENOTSUP;
    }
    if (u->mode == GP_GPU_MIG) {
        u->mig_dynamic = 0;
        return 0;
    }
    if (!gpu_empty(u)) {
        return GP_ESTATE;
    }
    u->mode = GP_GPU_MIG;
    u->mig_dynamic = 0;
    cluster_touch(c, node);
    return 0;
}

int gp_cluster_check(const gp_cluster *c, gp_diag *d)
{
    int64_t alloc = 0, cap = 0;
    for (int i = 0; i < c->nnodes; i++) {
        if (!node_consistent(c, i)) {
            return gp_diag_set(d, GP_EINTERNAL, "node %s: capacity invariant broken",
                               c->nodes[i].name);
        }
        for (int g = 0; g < c->nodes[i].ngpus; g++) {
            const gp_gpu *u = cluster_gpu_const(c, i, g);
            cap += GP_MILLI_PER_GPU;
            alloc += u->mode == GP_GPU_MIG ? mig_milli(u->mig_compute_used)
                                           : GP_MILLI_PER_GPU - u->milli_free;
        }
    }
    if (cap != c->milli_capacity || alloc != c->milli_allocated) {
        return gp_diag_set(d, GP_EINTERNAL,
                           "cluster totals: capacity %lld/%lld allocated %lld/%lld (cached/real)",
                           (long long)c->milli_capacity, (long long)cap,
                           (long long)c->milli_allocated, (long long)alloc);
    }
    return 0;
}
