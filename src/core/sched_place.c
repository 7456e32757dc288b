/*
 * Placement for the scheduler: its placers, one replica under constraints, and gangs.
 *
 * Placers. There is one placer per GPU policy in use, all over the one cluster. A placer learns
 * of changed nodes from the cluster's change list and clears it, so the scheduler is the list's
 * only consumer and fans it out: before a placer runs, the list is drained into every placer's
 * own dirty set, and the running placer's set is put back on the list for it to consume.
 *
 * One replica. The placer picks a node by score over node classes. Two constraints are not in
 * the class key and are checked on the node it picked: NVLink (a whole-GPU set must be pairwise
 * NVLink-connected: required or preferred) and, for fractions, GPUs above the utilisation
 * threshold (hot). When the pick misses one, a scan over the nodes (next-fit: it starts where
 * the last scan stopped, so a cycle scans each node about once per shape) looks for a node that
 * meets it. A required constraint that no node meets fails the replica; a preferred one falls
 * back to the placer's pick. So a hot GPU takes a fraction only when no cold GPU anywhere fits.
 * Nodes of the backfill reservation are unschedulable for the placers; a job short enough to
 * finish before the shadow time may still go there (tried last).
 *
 * Gangs: replicas are placed one after the other, each applied to the cluster, and released
 * again (last first) when one fails. With model_cost, the cheapest model group is tried first.
 *
 * Shapes that failed are remembered (sched_fail.c), so a failing shape costs one placement
 * attempt per cycle, not one per job.
 */
#include "core/assert.h"
#include "core/grow.h"
#include "core/sched_impl.h"
#include "gpupool/feasible.h"
#include "gpupool/topology.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- placers and the change list ---- */

static int dirty_fit(sched_placer *p, int nnodes)
{
    if (nnodes <= p->cap) {
        return 0;
    }
    int *d = realloc(p->dirty, sizeof(int) * (size_t)nnodes);
    if (!d) {
        return GP_ENOMEM;
    }
    p->dirty = d;
    uint8_t *f = realloc(p->dirty_flag, (size_t)nnodes);
    if (!f) {
        return GP_ENOMEM;
    }
    memset(f + p->cap, 0, (size_t)(nnodes - p->cap));
    p->dirty_flag = f;
    p->cap = nnodes;
    return 0;
}

static void dirty_add(sched_placer *p, int node)
{
    if (!p->dirty_flag[node]) {
        p->dirty_flag[node] = 1;
        p->dirty[p->ndirty++] = node;
    }
}

/* Drains the cluster's change list into the dirty set of every placer (or of `only`). */
static int harvest(gp_scheduler *s, sched_placer *only)
{
    const int *nodes;
    int n = gp_cluster_changed_nodes(s->c, &nodes);
    for (int k = 0; k < SCHED_NPOLICIES; k++) {
        sched_placer *p = &s->placers[k];
        if (!p->pl || (only && p != only)) {
            continue;
        }
        if (dirty_fit(p, s->c->nnodes) < 0) {
            return GP_ENOMEM;
        }
        for (int i = 0; i < n; i++) {
            dirty_add(p, nodes[i]);
        }
    }
    gp_cluster_clear_changed(s->c);
    return 0;
}

/* Puts p's dirty set on the (empty) change list of the cluster, for p's placer to consume. */
static void inject(gp_cluster *c, sched_placer *p)
{
    for (int i = 0; i < p->ndirty; i++) {
        int node = p->dirty[i];
        p->dirty_flag[node] = 0;
        if (!c->changed_flag[node]) {
            c->changed_flag[node] = 1;
            c->changed[c->nchanged++] = node;
        }
    }
    p->ndirty = 0;
}

static void placer_drop(sched_placer *p)
{
    gp_placer_free(p->pl);
    sched_policy_free(p->pol);
    p->pl = NULL;
    p->pol = NULL;
}

static int placer_create(gp_scheduler *s, int k)
{
    sched_placer *p = &s->placers[k];
    int rc = harvest(s, NULL);
    if (rc < 0) {
        return rc;
    }
    gp_workload w = {p->target, p->ntarget};
    if (k == GP_GPU_FRAGMENTATION && p->ntarget == 0) {
        return GP_EINVAL;
    }
    rc = sched_policy_new(s->cfg.node_policy, (gp_gpu_policy)k, &w, s->c, &s->env, &p->pol);
    if (rc < 0) {
        return rc;
    }
    rc = gp_placer_new(s->c, &p->pol->base, &p->pl);
    if (rc < 0) {
        placer_drop(p);
        return rc;
    }
    /* gp_placer_new put every node on the change list: that is for this placer alone. */
    return harvest(s, p);
}

/* The placer of GPU policy k, created when first needed, with the changes it has not seen on
 * the cluster's change list. */
static int placer_acquire(gp_scheduler *s, int k, gp_placer **out)
{
    sched_placer *p = &s->placers[k];
    int rc = p->pl ? harvest(s, NULL) : placer_create(s, k);
    if (rc < 0) {
        return rc;
    }
    inject(s->c, p);
    *out = p->pl;
    return 0;
}

void placers_free(gp_scheduler *s)
{
    for (int k = 0; k < SCHED_NPOLICIES; k++) {
        placer_drop(&s->placers[k]);
        free(s->placers[k].dirty);
        free(s->placers[k].dirty_flag);
    }
}

/* ---- per-cycle preparation: utilisation, fragmentation target ---- */

static int prepare_hot(gp_scheduler *s, const gp_sched_input *in)
{
    s->env.util = NULL;
    s->env.hot = NULL;
    if (!in->gpu_util || s->cfg.util_weight <= 0) {
        return 0;
    }
    int nn = s->c->nnodes;
    if (gp_grow((void **)&s->hot, &s->cap_hot, nn, sizeof(uint32_t), 64) < 0) {
        return GP_ENOMEM;
    }
    bool any = false;
    for (int n = 0; n < nn; n++) {
        const gp_node *node = &s->c->nodes[n];
        s->hot[n] = 0;
        for (int g = 0; g < node->ngpus; g++) {
            if (in->gpu_util[node->first_gpu + g] > s->cfg.util_threshold) {
                s->hot[n] |= 1u << g;
                any = true;
            }
        }
    }
    s->env.util = in->gpu_util;
    s->env.hot = any ? s->hot : NULL;
    return 0;
}

static bool same_target(const sched_placer *p, const gp_workload_item *w, int n)
{
    if (n != p->ntarget) {
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (memcmp(&w[i].shape, &p->target[i].shape, sizeof(gp_request)) != 0 ||
            fabs(w[i].weight - p->target[i].weight) > 0.05) {
            return false;
        }
    }
    return true;
}

/* The fragmentation policy plans for the typical shapes of the pending requests (FGD's target
 * workload: the most frequent shapes covering 95%, at most SCHED_TARGET_MAX of them), counted
 * over an even sample of at most SCHED_TARGET_SAMPLE requests. Its placer is rebuilt only when
 * that target changes: a new shape, or a weight moving by more than 0.05; with nothing pending
 * the last target stays. */
static int prepare_target(gp_scheduler *s, const gp_sched_input *in)
{
    int stride = in->npending / SCHED_TARGET_SAMPLE + 1;
    gp_request *reqs = malloc(sizeof(gp_request) * (size_t)(in->npending / stride + 1));
    if (!reqs) {
        return GP_ENOMEM;
    }
    int n = 0;
    for (int i = 0; i < in->npending; i += stride) {
        if (gp_request_check(&in->pending[i].req, NULL) == 0) {
            reqs[n++] = in->pending[i].req;
        }
    }
    gp_workload_item *items = NULL;
    int nitems = 0, rc = n > 0 ? gp_workload_typical(reqs, n, 0.95, &items, &nitems) : 0;
    if (rc == 0 && n > 0 && nitems == 0) { /* fewer than 20 requests: 95% rounds down */
        free(items);
        rc = gp_workload_typical(reqs, n, 1.0, &items, &nitems);
    }
    free(reqs);
    if (rc < 0 || nitems == 0) {
        free(items);
        return rc;
    }
    if (nitems > SCHED_TARGET_MAX) {
        double sum = 0;
        for (int i = 0; i < SCHED_TARGET_MAX; i++) {
            sum += items[i].weight;
        }
        for (int i = 0; i < SCHED_TARGET_MAX; i++) {
            items[i].weight /= sum;
        }
        nitems = SCHED_TARGET_MAX;
    }
    sched_placer *p = &s->placers[GP_GPU_FRAGMENTATION];
    if (!same_target(p, items, nitems)) {
        placer_drop(p);
        memcpy(p->target, items, sizeof(gp_workload_item) * (size_t)nitems);
        p->ntarget = nitems;
    }
    free(items);
    return 0;
}

int placers_prepare(gp_scheduler *s, const gp_sched_input *in)
{
    int rc = prepare_hot(s, in);
    if (rc < 0) {
        return rc;
    }
    bool frag = s->cfg.gpu_policy == GP_GPU_FRAGMENTATION;
    for (int i = 0; i < in->npending && !frag; i++) {
        frag = in->pending[i].gpu_policy == GP_GPU_FRAGMENTATION;
    }
    return frag ? prepare_target(s, in) : 0;
}

/* ---- constraints ---- */

static bool is_clique(const gp_cluster *c, int node, uint32_t set, int count)
{
    return gp_topology_score(c, node, set).nvlink_pairs == count * (count - 1) / 2;
}

static uint32_t share_mask(const gp_assignment *a)
{
    uint32_t m = 0;
    for (int i = 0; i < a->nshares; i++) {
        m |= 1u << a->shares[i].gpu;
    }
    return m;
}

bool gpus_clique(const gp_cluster *c, int node, uint32_t cand, int count)
{
    uint32_t chosen;
    return gp_topology_pick(c, node, cand, count, &chosen) == 0 &&
           is_clique(c, node, chosen, count);
}

/* Whether node has count free GPUs for r that are pairwise NVLink-connected. */
static bool clique_free(const gp_cluster *c, int node, const gp_request *r)
{
    uint32_t cand = 0;
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        if (gp_gpu_fits(c, node, g, r)) {
            cand |= 1u << g;
        }
    }
    return gpus_clique(c, node, cand, r->gpu_count);
}

static bool cold_fits(const cycle *cy, const gp_cluster *c, int node, const gp_request *r)
{
    uint32_t hot = cy->s->env.hot[node];
    for (int g = 0; g < c->nodes[node].ngpus; g++) {
        if (!(hot & (1u << g)) && gp_gpu_fits(c, node, g, r)) {
            return true;
        }
    }
    return false;
}

bool node_ok(const cycle *cy, const gp_cluster *c, const job_ctx *jc, int node)
{
    /* the constraints first: a few string compares that spare gp_node_fits on nodes they
     * refuse */
    return constraints_ok(cy, c, jc, node) && gp_node_fits(c, node, &jc->req) &&
           (!jc->nvl_require || clique_free(c, node, &jc->req));
}

/* Whether node meets the soft constraints too (preferred NVLink, cold GPU). */
static bool node_good(const cycle *cy, const gp_cluster *c, const job_ctx *jc, int node)
{
    return node_ok(cy, c, jc, node) && (!jc->nvl_prefer || clique_free(c, node, &jc->req)) &&
           (!jc->cold || cold_fits(cy, c, node, &jc->req)) && constraints_preferred(c, jc, node);
}

/* 0: a meets every constraint; 1: it misses a preferred one; 2: a required one. */
static int misses(const cycle *cy, const gp_cluster *c, const job_ctx *jc, const gp_assignment *a)
{
    uint32_t set = share_mask(a);
    int count = jc->req.gpu_count;
    if (!constraints_ok(cy, c, jc, a->node)) {
        return 2;
    }
    if (jc->nvl_require && !is_clique(cy->c, a->node, set, count)) {
        return 2;
    }
    if (jc->nvl_prefer && !is_clique(cy->c, a->node, set, count)) {
        return 1;
    }
    if (jc->cold && (cy->s->env.hot[a->node] & set)) {
        return 1;
    }
    return constraints_preferred(c, jc, a->node) ? 0 : 1;
}

/* ---- one replica ---- */

static sched_policy *policy_of(const cycle *cy, const job_ctx *jc)
{
    return cy->s->placers[jc->pol].pol;
}

int place_on_node(cycle *cy, gp_cluster *c, const job_ctx *jc, int node, gp_assignment *out)
{
    gp_assignment a;
    int rc = gp_policy_choose(&policy_of(cy, jc)->base, c, node, &jc->req, &cy->rng, &a);
    if (rc < 0) {
        return GP_ENOSPC;
    }
    if (jc->nvl_require && !is_clique(c, node, share_mask(&a), jc->req.gpu_count)) {
        return GP_ENOSPC;
    }
    rc = gp_cluster_assign(c, &a);
    if (rc == 0) {
        *out = a;
    }
    return rc;
}

/* Next-fit scan for a node meeting every constraint (soft: also the preferred ones); -1. The
 * result "none" is cached per shape. */
static int scan(cycle *cy, gp_cluster *c, const job_ctx *jc, bool soft)
{
    int mode = soft ? FAIL_SOFT : FAIL_HARD;
    bool real = c == cy->c;
    if (real && fail_lookup(cy, jc, mode, NULL, NULL)) {
        return -1;
    }
    int nn = c->nnodes;
    for (int i = 0; i < nn; i++) {
        int node = (cy->cursor + i) % nn;
        if (soft ? node_good(cy, c, jc, node) : node_ok(cy, c, jc, node)) {
            cy->cursor = node;
            return node;
        }
    }
    if (real && fail_record(cy, jc, mode, "", 0) < 0) {
        return GP_ENOMEM;
    }
    return -1;
}

/* A reserved node for a job short enough to use it (the nodes are unschedulable meanwhile). */
static int place_reserved(cycle *cy, const job_ctx *jc, gp_assignment *out)
{
    for (int i = 0; i < cy->nreserved; i++) {
        int node = cy->reserved[i];
        gp_node *n = &cy->c->nodes[node];
        n->schedulable = true; /* for the filter only; no state changes */
        bool ok = node_ok(cy, cy->c, jc, node);
        n->schedulable = false;
        if (ok && place_on_node(cy, cy->c, jc, node, out) == 0) {
            return 0;
        }
    }
    return GP_ENOSPC;
}

static int pick(cycle *cy, ptarget *pt, const job_ctx *jc, gp_assignment *a)
{
    gp_placer *pl = pt->pl;
    if (!pl) {
        int rc = placer_acquire(cy->s, jc->pol, &pl);
        if (rc < 0) {
            return rc;
        }
    }
    return gp_placer_place(pl, &jc->req, &cy->rng, a, NULL);
}

int place_replica(cycle *cy, ptarget *pt, const job_ctx *jc, gp_assignment *out)
{
    bool real = pt->c == cy->c;
    gp_assignment a;
    int rc = constraints_prepare(cy, jc);
    if (rc == 0) {
        rc = pick(cy, pt, jc, &a);
    }
    if (rc == 0) {
        int miss = misses(cy, pt->c, jc, &a);
        if (miss == 1 && !real) {
            miss = 0; /* scratch placements (backfill) ignore preferences */
        }
        if (miss) {
            int node = scan(cy, pt->c, jc, miss == 1);
            if (node < -1) {
                return node;
            }
            if (node >= 0 && place_on_node(cy, pt->c, jc, node, out) == 0) {
                return 0;
            }
            rc = miss == 2 ? GP_ENOSPC : 0;
        }
        if (rc == 0) {
            rc = gp_cluster_assign(pt->c, &a);
            if (rc == 0) {
                *out = a;
            }
            return rc;
        }
    }
    if (rc == GP_ENOSPC && real && jc->may_reserved && cy->nreserved > 0) {
        return place_reserved(cy, jc, out);
    }
    return rc;
}

/* ---- gangs ---- */

int attempt_push_rep(cycle *cy, const gp_assignment *a)
{
    attempt *at = &cy->at;
    if (gp_grow((void **)&at->rep, &at->cap_rep, at->nrep + 1, sizeof(gp_assignment), 16) < 0) {
        return GP_ENOMEM;
    }
    at->rep[at->nrep++] = *a;
    return 0;
}

void attempt_unplace(cycle *cy)
{
    attempt *at = &cy->at;
    while (at->nrep > 0) {
        int rc = gp_cluster_release(cy->c, &at->rep[--at->nrep]);
        GP_ALWAYS(rc == 0);
        (void)rc;
    }
}

int gang_attempt(cycle *cy, job_ctx *jc, int *fitted)
{
    ptarget pt = {cy->c, NULL};
    cy->at.nrep = 0;
    for (int k = 0; k < jc->job->replicas; k++) {
        gp_assignment a;
        int rc = place_replica(cy, &pt, jc, &a);
        if (rc == 0 && attempt_push_rep(cy, &a) < 0) {
            gp_cluster_release(cy->c, &a);
            rc = GP_ENOMEM;
        }
        if (rc < 0) {
            *fitted = k;
            attempt_unplace(cy);
            return rc;
        }
    }
    *fitted = jc->job->replicas;
    return 0;
}

static void model_names(const cycle *cy, uint64_t mask, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int m = 0; m < cy->nmodels && len + 1 < size; m++) {
        if (mask & (1ull << m)) {
            int w = snprintf(buf + len, size - len, "%s%s", len ? "/" : "", cy->c->models[m].name);
            len = w < 0 ? len : len + (size_t)w;
        }
    }
    if (len + 1 < size && len > 0) {
        buf[len++] = ' ';
        buf[len] = '\0';
    }
}

void describe_request(const cycle *cy, const job_ctx *jc, char *buf, size_t size)
{
    const gp_request *r = &jc->req;
    char models[96], gpu[160] = "", cpu[32], mem[32];
    model_names(cy, r->allowed_models, models, sizeof(models));
    if (r->kind == GP_REQ_WHOLE) {
        snprintf(gpu, sizeof(gpu), "%d free %s%sGPU%s", r->gpu_count,
                 jc->nvl_require ? "NVLink-connected " : "", models, r->gpu_count > 1 ? "s" : "");
    } else if (r->kind == GP_REQ_FRACTION && r->gpu_mem_mib > 0) {
        fmt_mib(mem, sizeof(mem), r->gpu_mem_mib);
        snprintf(gpu, sizeof(gpu), "one %sGPU with %d milli-GPU and %s free", models, r->gpu_milli,
                 mem);
    } else if (r->kind == GP_REQ_FRACTION) {
        snprintf(gpu, sizeof(gpu), "one %sGPU with %d milli-GPU free", models, r->gpu_milli);
    } else if (r->kind == GP_REQ_MIG) {
        snprintf(gpu, sizeof(gpu), "a free %.15s MIG slice%s%.*s", r->mig_profile,
                 models[0] ? " on " : "", models[0] ? (int)strlen(models) - 1 : 0, models);
    }
    fmt_cores(cpu, sizeof(cpu), r->cpu_milli);
    fmt_mib(mem, sizeof(mem), r->memory_mib);
    snprintf(buf, size, "%s%s%s%s%s%s%s%s", gpu, gpu[0] && r->cpu_milli ? " and " : "",
             r->cpu_milli ? cpu : "",
             r->cpu_milli == 1000 ? " CPU core"
             : r->cpu_milli       ? " CPU cores"
                                  : "",
             (gpu[0] || r->cpu_milli) && r->memory_mib ? " and " : "", r->memory_mib ? mem : "",
             r->memory_mib ? " memory" : "",
             (r->needs & GP_CAP_IMAGES) && (gpu[0] || r->cpu_milli || r->memory_mib)
                 ? " with a container runtime"
                 : "");
}

/* Whether a node this cycle may place on has every capability in needs. */
static bool caps_present(const cycle *cy, uint32_t needs)
{
    for (int node = 0; node < cy->c->nnodes; node++) {
        const gp_node *n = &cy->c->nodes[node];
        bool usable = n->schedulable || (cy->is_reserved && cy->is_reserved[node]);
        if (usable && (n->caps & needs) == needs) {
            return true;
        }
    }
    return false;
}

/* at_most: fitted is the room for a smaller shape, an upper bound. When maintenance windows
 * alone keep the job off nodes that would give it room, the reason says so instead. */
static void gang_reason(cycle *cy, const job_ctx *jc, int fitted, bool at_most, char *reason)
{
    int replicas = jc->job->replicas;
    if (jc->req.needs && !caps_present(cy, jc->req.needs)) {
        /* No node that could run it is up: not a matter of room. */
        reasonf(reason, "capacity: %s", gp_feasible_why(GP_FEASIBLE_NO_RUNTIME));
        return;
    }
    if ((replicas == 1 || !at_most) && maint_reason(cy, jc, replicas - fitted, reason)) {
        return;
    }
    char desc[200];
    describe_request(cy, jc, desc, sizeof(desc));
    if (jc->job->replicas == 1) {
        reasonf(reason, "capacity: no node has %s", desc);
    } else {
        reasonf(reason, "gang: needs %d replicas of %s; room for %s%d", jc->job->replicas, desc,
                at_most ? "at most " : "", fitted);
    }
}

static int model_cmp(const cycle *cy, int a, int b)
{
    double ca = cy->in->model_cost[a], cb = cy->in->model_cost[b];
    return ca < cb ? -1 : ca > cb ? 1 : a - b;
}

/* Masks to try, cheapest model group first, then all the job's models together (for gangs
 * that fit only across models); one mask when cost is not considered. */
static int cost_groups(const cycle *cy, const job_ctx *jc, uint64_t *groups)
{
    uint64_t all = jc->req.allowed_models;
    groups[0] = all;
    if (!cy->in->model_cost || cy->cfg->cost_weight <= 0 || jc->req.kind == GP_REQ_NONE) {
        return 1;
    }
    int order[GP_MAX_MODELS], n = 0;
    for (int m = 0; m < cy->nmodels; m++) {
        if (!all || (all & (1ull << m))) {
            int k = n++;
            while (k > 0 && model_cmp(cy, order[k - 1], m) > 0) {
                order[k] = order[k - 1];
                k--;
            }
            order[k] = m;
        }
    }
    int ng = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && cy->in->model_cost[order[i]] == cy->in->model_cost[order[i - 1]]) {
            groups[ng - 1] |= 1ull << order[i];
        } else {
            groups[ng++] = 1ull << order[i];
        }
    }
    if (ng <= 1) {
        groups[0] = all;
        return 1;
    }
    groups[ng++] = all;
    return ng;
}

int place_gang(cycle *cy, job_ctx *jc, char *reason)
{
    uint64_t groups[GP_MAX_MODELS + 1], all = jc->req.allowed_models;
    int ng = cost_groups(cy, jc, groups);
    char why[SCHED_REASON] = "";
    for (int g = 0; g < ng; g++) {
        jc->req.allowed_models = groups[g];
        bool exact;
        int fitted;
        const char *cached = fail_lookup(cy, jc, FAIL_PLACE, &exact, &fitted);
        if (cached && exact) {
            snprintf(why, sizeof(why), "%s", cached);
            continue;
        }
        if (cached) { /* a smaller shape failed: so does this one */
            if (constraints_said(cached)) {
                snprintf(why, sizeof(why), "%s", cached);
            } else {
                gang_reason(cy, jc, fitted, true, why);
            }
            continue;
        }
        int rc = gang_attempt(cy, jc, &fitted);
        if (rc == 0) {
            return 0;
        }
        if (rc != GP_ENOSPC) {
            jc->req.allowed_models = all;
            return rc;
        }
        if (!constraints_reason(cy, jc, why)) {
            gang_reason(cy, jc, fitted, false, why);
        }
        if (fail_record(cy, jc, FAIL_PLACE, why, fitted) < 0) {
            jc->req.allowed_models = all;
            return GP_ENOMEM;
        }
    }
    jc->req.allowed_models = all;
    jc->constrained = constraints_said(why);
    reason_copy(reason, why);
    return GP_ENOSPC;
}
