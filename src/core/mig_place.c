/*
 * MIG placement against the instances that exist: where on a GPU a MIG request goes, what that
 * does to the GPU's idle instances, what it costs, and how that is told.
 *
 * A GPU's layout (gp_gpu.mig_layout) is what its agent last reported. Allocations placed since
 * may not be in it yet, and instances destroyed for them may still be. So each instance of the
 * layout is read against the allocations: one that an allocation overlaps is taken (it is that
 * allocation's own, or is destroyed for it) and counts for nothing here; one that none overlaps
 * is idle, free to reuse or destroy, unless it is blocked (used outside gpupool), and then it
 * stays where it is. The compute slices in use on the GPU are the allocations' plus those of
 * the instances that stay.
 *
 * With no layout (an agent that reports none, the simulator) every legal start costs the same,
 * and the choice is gp_mig_choose_start's: the highest free start.
 */
#include "core/cluster_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* An instance of the layout that no allocation overlaps. */
typedef struct free_inst {
    const gp_mig_profile *p;
    int start;
    uint8_t mask;
    bool blocked;
} free_inst;

/* The instances of u that no allocation overlaps; *compute receives their compute slices. */
static int free_instances(gp_mig_geometry g, const gp_gpu *u, free_inst *out, int *compute)
{
    int n = 0;
    *compute = 0;
    for (int s = 0; s < GP_MIG_MEMORY_SLICES; s++) {
        const gp_mig_profile *p = gp_mig_slot_profile(g, u->mig_layout[s]);
        if (!p || (gp_mig_mask(p, s) & u->mig_mem_used)) {
            continue;
        }
        out[n++] =
            (free_inst){p, s, gp_mig_mask(p, s), (u->mig_layout[s] & GP_MIG_SLOT_BLOCKED) != 0};
        *compute += p->compute_slices;
    }
    return n;
}

/* The cost of gp_mig_share_cost, from what the instances destroyed take. */
static int cost_of(bool reused, int destroyed, int destroyed_compute)
{
    if (reused) {
        return 0;
    }
    return destroyed ? 1 + 8 * destroyed_compute + destroyed : 1;
}

bool mig_choose(const gp_cluster *c, const gp_gpu *u, const gp_mig_profile *p, mig_choice *out)
{
    free_inst inst[GP_MIG_MEMORY_SLICES];
    int staying = 0;
    int n = free_instances(c->models[u->model].mig, u, inst, &staying);
    uint8_t blocked = 0;
    for (int i = 0; i < n; i++) {
        blocked |= inst[i].blocked ? inst[i].mask : 0;
    }
    bool found = false;
    for (int s = GP_MIG_MEMORY_SLICES - 1; s >= 0; s--) {
        uint8_t mask = gp_mig_mask(p, s);
        if (!(p->legal_starts & (1u << s)) || (mask & (u->mig_mem_used | blocked))) {
            continue;
        }
        mig_choice ch = {.start = s};
        int gone = 0, gone_compute = 0;
        for (int i = 0; i < n; i++) {
            if (!(inst[i].mask & mask)) {
                continue;
            }
            if (inst[i].p == p && inst[i].start == s) {
                ch.reused = true; /* it stays, as the allocation's own */
                continue;
            }
            ch.destroys |= (uint8_t)(1u << inst[i].start);
            gone++;
            gone_compute += inst[i].p->compute_slices;
        }
        int compute =
            u->mig_compute_used + staying - gone_compute + (ch.reused ? 0 : p->compute_slices);
        if (compute > GP_MIG_COMPUTE_SLICES) {
            continue;
        }
        ch.cost = cost_of(ch.reused, gone, gone_compute);
        if (!found || ch.cost < out->cost) {
            *out = ch;
            found = true;
        }
    }
    return found;
}

int gp_mig_share_cost(const gp_cluster *c, int node, const gp_gpu_share *s)
{
    if (s->mig_start < 0) {
        return -1;
    }
    const gp_gpu *u = cluster_gpu_const(c, node, s->gpu);
    int gone = 0, gone_compute = 0;
    for (int k = 0; k < GP_MIG_MEMORY_SLICES; k++) {
        const gp_mig_profile *p = gp_mig_slot_profile(c->models[u->model].mig, u->mig_layout[k]);
        if ((s->mig_destroys & (1u << k)) && p) {
            gone++;
            gone_compute += p->compute_slices;
        }
    }
    return cost_of(s->mig_reused != 0, gone, gone_compute);
}

int gp_mig_node_cost(const gp_cluster *c, int node, const gp_request *r)
{
    int best = -1;
    if (r->kind != GP_REQ_MIG) {
        return -1;
    }
    for (int g = 0; g < c->nodes[node].ngpus && best != 0; g++) {
        gp_gpu_share s;
        if (gp_gpu_share_for(c, node, g, r, &s) == 0) {
            int cost = gp_mig_share_cost(c, node, &s);
            best = best < 0 || cost < best ? cost : best;
        }
    }
    return best;
}

/* The profile of geometry g with the shape of share s; NULL when none has it. */
static const gp_mig_profile *profile_of_share(gp_mig_geometry g, const gp_gpu_share *s)
{
    int n;
    const gp_mig_profile *p = gp_mig_profiles(g, &n);
    for (int i = 0; i < n; i++) {
        if (p[i].compute_slices == s->mig_compute_slices &&
            p[i].memory_slices == s->mig_memory_slices) {
            return &p[i];
        }
    }
    return NULL;
}

/* Appends to buf (cap bytes) at *len, never past the end. */
static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len + 1 >= cap) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (k > 0) {
        *len = *len + (size_t)k < cap ? *len + (size_t)k : cap - 1;
    }
}

void gp_mig_share_describe(const gp_cluster *c, int node, const gp_gpu_share *s, char *buf,
                           size_t cap)
{
    if (cap == 0) {
        return;
    }
    buf[0] = '\0';
    if (s->mig_start < 0) {
        return;
    }
    const gp_gpu *u = cluster_gpu_const(c, node, s->gpu);
    gp_mig_geometry g = c->models[u->model].mig;
    const gp_mig_profile *p = profile_of_share(g, s);
    const char *name = p ? p->name : "?";
    size_t len = 0;
    append(buf, cap, &len, "MIG %s: ", name);
    if (s->mig_reused) {
        append(buf, cap, &len, "reused instance GPU %d slice %d", s->gpu, s->mig_start);
        return;
    }
    append(buf, cap, &len, "created %s at GPU %d slice %d", name, s->gpu, s->mig_start);
    const char *sep = ", destroyed idle ";
    for (int k = 0; k < GP_MIG_MEMORY_SLICES; k++) {
        const gp_mig_profile *q = gp_mig_slot_profile(g, u->mig_layout[k]);
        if ((s->mig_destroys & (1u << k)) && q) {
            append(buf, cap, &len, "%s%s at slice %d", sep, q->name, k);
            sep = ", ";
        }
    }
}
