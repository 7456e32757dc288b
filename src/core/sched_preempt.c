/*
 * Preemption and reclaim: making room for a job by evicting running jobs.
 *
 * A victim is a preemptible running job, not yet evicted, that is either of lower priority
 * than a job whose class may preempt (priority preemption), or of another reclaimable queue
 * above its guarantee while the job stays within its own (reclaim).
 *
 * Choice, per replica that does not fit as things are: every node holding victims is tried by
 * releasing its victims cheapest first (fewest GPUs, then the most recently started: least
 * progress lost) until the replica fits there; the node whose set is cheapest (total GPUs, then
 * number of jobs, then progress lost) wins. Trying a node releases and re-applies the victims
 * on the cluster itself, so the test is exact for every kind of request, then undone. Its
 * victims are released for good (in the attempt), and the replica is placed there; later
 * replicas see the room earlier victims left. When all replicas are placed, each victim is
 * re-applied if it still fits (most expensive first): a victim whose room was not needed is
 * spared. If any replica finds no node, everything is undone and nobody is evicted. The caller
 * marks the remaining victims evicted when it commits the placement.
 */
#include "core/assert.h"
#include "core/grow.h"
#include "core/sched_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int run_release(cycle *cy, int r)
{
    const gp_sched_job *j = &cy->in->running[r];
    for (int k = 0; k < j->replicas; k++) {
        int rc = gp_cluster_release(cy->c, &j->assignments[k]);
        if (rc < 0) {
            while (k-- > 0) {
                gp_cluster_assign(cy->c, &j->assignments[k]);
            }
            return rc;
        }
    }
    cy->run[r].out = true;
    return 0;
}

int run_restore(cycle *cy, int r)
{
    const gp_sched_job *j = &cy->in->running[r];
    for (int k = 0; k < j->replicas; k++) {
        int rc = gp_cluster_assign(cy->c, &j->assignments[k]);
        if (rc < 0) {
            while (k-- > 0) {
                gp_cluster_release(cy->c, &j->assignments[k]);
            }
            return rc;
        }
    }
    cy->run[r].out = false;
    return 0;
}

void attempt_restore_victims(cycle *cy)
{
    attempt *at = &cy->at;
    while (at->nvictims > 0) {
        int rc = run_restore(cy, at->victims[--at->nvictims]);
        GP_ALWAYS(rc == 0);
        (void)rc;
    }
}

/* 0: not a victim for jc; 1: by priority; 2: by reclaim. */
static int victim_kind(const cycle *cy, const job_ctx *jc, int r)
{
    const gp_sched_job *v = &cy->in->running[r], *j = jc->job;
    if (cy->run[r].evicted || cy->run[r].out || !v->preemptible) {
        return 0;
    }
    if (j->can_preempt && v->priority < j->priority) {
        return 1;
    }
    if (jc->reclaim && v->queue != j->queue && cy->in->queues[v->queue].reclaimable &&
        limits_queue_above_guarantee(cy, v->queue)) {
        return 2;
    }
    return 0;
}

typedef struct vcost {
    int64_t gpus; /* milli-GPU */
    int64_t n;
    int64_t lost; /* ms of progress lost */
} vcost;

static vcost cost_of(const cycle *cy, int r)
{
    int64_t lost = cy->in->now_ms - cy->in->running[r].start_ms;
    return (vcost){cy->run[r].gpus, 1, lost > 0 ? lost : 0};
}

static int cost_cmp(vcost a, vcost b)
{
    if (a.gpus != b.gpus) {
        return a.gpus < b.gpus ? -1 : 1;
    }
    if (a.n != b.n) {
        return a.n < b.n ? -1 : 1;
    }
    return a.lost < b.lost ? -1 : a.lost > b.lost;
}

static vcost cost_add(vcost a, vcost b)
{
    return (vcost){a.gpus + b.gpus, a.n + b.n, a.lost + b.lost};
}

/* Whether node could ever hold r (capacity, models), whatever runs there. */
static bool node_could(const cycle *cy, const job_ctx *jc, int node)
{
    const gp_node *n = &cy->c->nodes[node];
    const gp_request *r = &jc->req;
    if (!n->schedulable || n->cpu_milli < r->cpu_milli || n->memory_mib < r->memory_mib ||
        cy->by_node_start[node] == cy->by_node_start[node + 1]) {
        return false;
    }
    if (r->kind == GP_REQ_NONE) {
        return true;
    }
    if (r->allowed_models && !(n->models & r->allowed_models)) {
        return false;
    }
    return n->ngpus >= (r->kind == GP_REQ_WHOLE ? r->gpu_count : 1);
}

/* The distinct victims for jc on node, cheapest first, into out. */
static int gather(const cycle *cy, const job_ctx *jc, int node, int *out)
{
    int n = 0;
    for (int i = cy->by_node_start[node]; i < cy->by_node_start[node + 1]; i++) {
        int r = cy->by_node[i];
        bool dup = false;
        for (int k = 0; k < n && !dup; k++) {
            dup = out[k] == r;
        }
        if (dup || !victim_kind(cy, jc, r)) {
            continue;
        }
        int k = n++;
        while (k > 0 && cost_cmp(cost_of(cy, out[k - 1]), cost_of(cy, r)) > 0) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = r;
    }
    return n;
}

/* With the first n of set released and a replica of jc fitting on node, re-applies the
 * victims that are not needed after all (most expensive first); returns how many remain, kept
 * at the front of set, with their cost. */
static int minimise(cycle *cy, const job_ctx *jc, int node, int *set, int n, vcost *cost)
{
    int kept = n;
    for (int i = n - 1; i >= 0; i--) {
        if (run_restore(cy, set[i]) < 0) {
            continue;
        }
        if (node_ok(cy, cy->c, jc, node)) {
            set[i] = set[--kept]; /* not needed: stays applied */
            continue;
        }
        int rc = run_release(cy, set[i]);
        GP_ALWAYS(rc == 0);
        (void)rc;
    }
    *cost = (vcost){0, 0, 0};
    for (int i = 0; i < kept; i++) {
        *cost = cost_add(*cost, cost_of(cy, set[i]));
    }
    return kept;
}

/* Whether node could hold a replica of jc once the n victims in cand are gone, by the sums of
 * CPU, memory and GPU compute they hold there: a quick test before the exact one. */
static bool could_fit(const cycle *cy, const job_ctx *jc, int node, const int *cand, int n)
{
    const gp_node *nd = &cy->c->nodes[node];
    const gp_request *r = &jc->req;
    int64_t cpu = nd->cpu_free, mem = nd->mem_free, milli = gp_node_gpu_milli_free(cy->c, node);
    for (int i = 0; i < n; i++) {
        const gp_sched_job *v = &cy->in->running[cand[i]];
        for (int k = 0; k < v->replicas; k++) {
            const gp_assignment *a = &v->assignments[k];
            if (a->node != node) {
                continue;
            }
            cpu += a->cpu_milli;
            mem += a->memory_mib;
            for (int s = 0; s < a->nshares; s++) {
                milli += a->shares[s].milli;
            }
        }
    }
    bool gpu_ok = r->kind == GP_REQ_MIG || milli >= req_gpu_milli(r);
    return cpu >= r->cpu_milli && mem >= r->memory_mib && gpu_ok;
}

/* Releases victims on node (cheapest first) until a replica of jc fits there, drops those not
 * needed, and restores the rest. True when it fits with at most budget victims costing less
 * than bound; the set is the first *nset entries of cand. */
static bool eval_node(cycle *cy, const job_ctx *jc, int node, const vcost *bound, int budget,
                      int *cand, int *nset, vcost *cost)
{
    int nc = gather(cy, jc, node, cand), released = 0;
    vcost c = {0, 0, 0};
    bool fit = false;
    if (nc == 0 || !could_fit(cy, jc, node, cand, nc < budget ? nc : budget)) {
        return false;
    }
    for (int i = 0; i < nc && i < budget; i++) {
        vcost next = cost_add(c, cost_of(cy, cand[i]));
        if ((bound && cost_cmp(next, *bound) >= 0) || run_release(cy, cand[i]) < 0) {
            break;
        }
        released++;
        c = next;
        if (node_ok(cy, cy->c, jc, node)) {
            fit = true;
            break;
        }
    }
    if (fit) {
        released = minimise(cy, jc, node, cand, released, &c);
    }
    for (int i = released - 1; i >= 0; i--) {
        int rc = run_restore(cy, cand[i]);
        GP_ALWAYS(rc == 0);
        (void)rc;
    }
    *nset = released;
    *cost = c;
    return fit && (!bound || cost_cmp(c, *bound) < 0);
}

static int push_victim(cycle *cy, int r)
{
    attempt *at = &cy->at;
    if (gp_grow((void **)&at->victims, &at->cap_victims, at->nvictims + 1, sizeof(int), 16) < 0) {
        return GP_ENOMEM;
    }
    at->victims[at->nvictims++] = r;
    return 0;
}

/* Finds the cheapest node to make room on, evicts its victims (into the attempt) and places a
 * replica there. GP_ENOSPC when no node works. */
static int make_room(cycle *cy, const job_ctx *jc, int budget, int *cand, int *best,
                     gp_assignment *out)
{
    int best_node = -1, nbest = 0;
    vcost best_cost = {0, 0, 0};
    for (int node = 0; node < cy->c->nnodes; node++) {
        int nset;
        vcost c;
        if (node_could(cy, jc, node) &&
            eval_node(cy, jc, node, best_node >= 0 ? &best_cost : NULL, budget, cand, &nset, &c)) {
            best_node = node;
            best_cost = c;
            nbest = nset;
            memcpy(best, cand, sizeof(int) * (size_t)nset);
        }
    }
    if (best_node < 0) {
        return GP_ENOSPC;
    }
    for (int i = 0; i < nbest; i++) {
        cy->run[best[i]].prio_victim = victim_kind(cy, jc, best[i]) == 1;
        int rc = run_release(cy, best[i]);
        if (rc == 0 && (rc = push_victim(cy, best[i])) < 0) {
            run_restore(cy, best[i]);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return place_on_node(cy, cy->c, jc, best_node, out);
}

/* Re-applies the victims whose room the job did not need, most expensive first. */
static void spare(cycle *cy)
{
    attempt *at = &cy->at;
    for (int i = 1; i < at->nvictims; i++) {
        int v = at->victims[i], k = i;
        while (k > 0 && cost_cmp(cost_of(cy, at->victims[k - 1]), cost_of(cy, v)) < 0) {
            at->victims[k] = at->victims[k - 1];
            k--;
        }
        at->victims[k] = v;
    }
    int kept = 0;
    for (int i = 0; i < at->nvictims; i++) {
        if (run_restore(cy, at->victims[i]) != 0) {
            at->victims[kept++] = at->victims[i];
        }
    }
    at->nvictims = kept;
}

static void fail_reason(const cycle *cy, const job_ctx *jc, int budget, char *reason)
{
    char base[SCHED_REASON];
    memcpy(base, reason, sizeof(base));
    const char *why;
    if (budget <= 0) {
        why = "no evictions are left in this cycle";
    } else if (jc->job->can_preempt && jc->reclaim) {
        why = "evicting lower-priority or borrowed work would not make room";
    } else if (jc->job->can_preempt) {
        why = "evicting preemptible lower-priority jobs would not make room";
    } else {
        why = "reclaiming from queues above their guarantee would not make room";
    }
    (void)cy;
    reasonf(reason, "%.160s; %s", base, why);
}

static int place_with_victims(cycle *cy, const job_ctx *jc, int budget, int *cand, int *best)
{
    ptarget pt = {cy->c, NULL};
    for (int k = 0; k < jc->job->replicas; k++) {
        gp_assignment a;
        int rc = place_replica(cy, &pt, jc, &a);
        if (rc == GP_ENOSPC && budget > cy->at.nvictims) {
            rc = make_room(cy, jc, budget - cy->at.nvictims, cand, best, &a);
        }
        if (rc == 0 && (rc = attempt_push_rep(cy, &a)) < 0) {
            gp_cluster_release(cy->c, &a);
        }
        if (rc < 0) {
            attempt_unplace(cy);
            attempt_restore_victims(cy);
            return rc;
        }
    }
    spare(cy);
    return 0;
}

/* Whether some other reclaimable queue is above its guarantee: something to reclaim. */
static bool lenders(const cycle *cy, const job_ctx *jc)
{
    for (int q = 0; q < cy->in->nqueues; q++) {
        if (q != jc->job->queue && cy->in->queues[q].reclaimable &&
            limits_queue_above_guarantee(cy, q)) {
            return true;
        }
    }
    return false;
}

int preempt_try(cycle *cy, job_ctx *jc, char *reason)
{
    const gp_sched_job *j = jc->job;
    int budget = cy->cfg->max_preemptions - cy->nev;
    jc->reclaim = jc->reclaim && lenders(cy, jc);
    if (cy->cfg->max_preemptions <= 0 || (!j->can_preempt && !jc->reclaim)) {
        return GP_ENOSPC;
    }
    const char *cached = budget > 0 ? fail_lookup(cy, jc, FAIL_PREEMPT, NULL, NULL) : NULL;
    if (cached || budget <= 0) {
        fail_reason(cy, jc, budget, reason);
        return GP_ENOSPC;
    }
    int n = cy->max_on_node > 0 ? cy->max_on_node : 1;
    int *cand = malloc(sizeof(int) * (size_t)n * 2);
    if (!cand) {
        return GP_ENOMEM;
    }
    cy->at.nrep = 0;
    cy->at.nvictims = 0;
    int rc = place_with_victims(cy, jc, budget, cand, cand + n);
    free(cand);
    if (rc == GP_ENOSPC) {
        fail_reason(cy, jc, budget, reason);
        if (fail_record(cy, jc, FAIL_PREEMPT, "", 0) < 0) {
            return GP_ENOMEM;
        }
    }
    return rc;
}
