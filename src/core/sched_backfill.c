/*
 * EASY backfill: the reservation of the first job that cannot be placed.
 *
 * On a scratch copy of the cluster (as it is at that point of the cycle), the running jobs
 * (those of the input not evicted, and those placed in this cycle, started now) are released in
 * the order they are expected to end: start + max runtime. Jobs without a max runtime never end
 * for this purpose; they are released last, all at once, and a reservation that needs them gives
 * an unknown shadow time (INT64_MAX). After each group of equal end times, if a released node
 * can now hold a replica, the job is placed on the copy with the same policy; the first time it
 * fits, its nodes are the reservation and that end time is the shadow time. A job that does not
 * fit even on the emptied copy can never run here and gets no reservation; the next blocked job
 * may get it (a few tries per cycle).
 *
 * The reserved nodes are made unschedulable on the real cluster for the rest of the cycle, so
 * the placers skip them; a job whose max runtime ends by the shadow time may still use them
 * (sched_place.c). They are made schedulable again before the cycle returns.
 */
#include "core/grow.h"
#include "core/sched_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESERVE_TRIES 3

typedef struct ending {
    int64_t end;
    const gp_assignment *asg;
    int n;
} ending;

static int ending_cmp(const void *pa, const void *pb)
{
    const ending *a = pa, *b = pb;
    return a->end < b->end ? -1 : a->end > b->end;
}

static int64_t end_of(int64_t start, int64_t max_runtime)
{
    if (max_runtime <= 0 || start > SCHED_NEVER - max_runtime) {
        return SCHED_NEVER;
    }
    return start + max_runtime;
}

/* Every job holding the cluster now, with its expected end, sorted. */
static ending *endings(const cycle *cy, int *count)
{
    const gp_sched_input *in = cy->in;
    ending *e = malloc(sizeof(ending) * (size_t)(in->nrunning + cy->nplaced + 1));
    if (!e) {
        return NULL;
    }
    int n = 0;
    for (int r = 0; r < in->nrunning; r++) {
        if (!cy->run[r].evicted) {
            const gp_sched_job *j = &in->running[r];
            e[n++] = (ending){end_of(j->start_ms, j->max_runtime_ms), j->assignments, j->replicas};
        }
    }
    for (int p = 0; p < cy->nplaced; p++) {
        const gp_sched_job *j = &in->pending[cy->placed[p].pending];
        e[n++] = (ending){end_of(in->now_ms, j->max_runtime_ms), cy->placed[p].rep, j->replicas};
    }
    qsort(e, (size_t)n, sizeof(ending), ending_cmp);
    *count = n;
    return e;
}

/* Places the gang on the scratch copy; on success its nodes are in nodes[0..*nn). Undone either
 * way, so the copy can be emptied further. */
static int scratch_gang(cycle *cy, ptarget *pt, const job_ctx *jc, gp_assignment *a, int *nodes,
                        int *nn)
{
    int k, rc = 0, nrep = cy->at.nrep;
    for (k = 0; k < jc->job->replicas && rc == 0; k++) {
        rc = place_replica(cy, pt, jc, &a[k]);
        /* spread and anti-affinity count the gang's replicas placed so far (the attempt's) */
        if (rc == 0 && jc->req.place && attempt_push_rep(cy, &a[k]) < 0) {
            gp_cluster_release(pt->c, &a[k]);
            rc = GP_ENOMEM;
        }
    }
    cy->at.nrep = nrep; /* scratch replicas: never released on the real cluster */
    if (rc != 0) {
        k--;
    }
    *nn = 0;
    for (int i = k - 1; i >= 0; i--) {
        bool seen = false;
        for (int x = 0; x < *nn && !seen; x++) {
            seen = nodes[x] == a[i].node;
        }
        if (!seen) {
            nodes[(*nn)++] = a[i].node;
        }
        gp_cluster_release(pt->c, &a[i]);
    }
    return rc;
}

/* Whether any node in touched[0..n) can now hold one replica. */
static bool any_fits(const cycle *cy, gp_cluster *sc, const job_ctx *jc, const int *touched, int n)
{
    for (int i = 0; i < n; i++) {
        if (node_ok(cy, sc, jc, touched[i])) {
            return true;
        }
    }
    return false;
}

typedef struct scratch {
    gp_cluster *c;
    gp_placer *pl;
    gp_assignment *a;
    int *nodes, *touched;
    uint8_t *mark; /* per node: in touched */
} scratch;

static void scratch_free(scratch *s)
{
    gp_placer_free(s->pl);
    gp_cluster_free(s->c);
    free(s->a);
    free(s->nodes);
    free(s->touched);
    free(s->mark);
}

/* Empties the scratch copy in order of expected end until jc fits: its nodes and shadow time;
 * *nn = 0 when it never fits. */
static int find_shadow(cycle *cy, scratch *s, const job_ctx *jc, const ending *e, int ne, int *nn,
                       int64_t *shadow)
{
    ptarget pt = {s->c, s->pl};
    int64_t need = req_gpu_milli(&jc->req) * jc->job->replicas;
    *nn = 0;
    for (int i = 0; i < ne;) {
        int64_t end = e[i].end;
        int nt = 0;
        for (; i < ne && e[i].end == end; i++) {
            for (int k = 0; k < e[i].n; k++) {
                int node = e[i].asg[k].node;
                if (gp_cluster_release(s->c, &e[i].asg[k]) == 0 && !s->mark[node]) {
                    s->mark[node] = 1;
                    s->touched[nt++] = node;
                }
            }
        }
        for (int t = 0; t < nt; t++) {
            s->mark[s->touched[t]] = 0;
        }
        if (gp_cluster_gpu_milli_capacity(s->c) - gp_cluster_gpu_milli_allocated(s->c) < need ||
            !any_fits(cy, s->c, jc, s->touched, nt)) {
            continue;
        }
        int rc = scratch_gang(cy, &pt, jc, s->a, s->nodes, nn);
        if (rc == 0) {
            *shadow = end > cy->in->now_ms ? end : cy->in->now_ms;
            return 0;
        }
        *nn = 0;
        if (rc != GP_ENOSPC) {
            return rc;
        }
    }
    return 0;
}

static int hold_nodes(cycle *cy, const int *nodes, int nn)
{
    cy->reserved = malloc(sizeof(int) * (size_t)nn);
    if (!cy->reserved) {
        return GP_ENOMEM;
    }
    for (int i = 0; i < nn; i++) {
        if (cy->c->nodes[nodes[i]].schedulable) {
            gp_cluster_set_schedulable(cy->c, nodes[i], false);
            cy->reserved[cy->nreserved++] = nodes[i];
            cy->is_reserved[nodes[i]] = 1;
        }
    }
    return 0;
}

/* Whether a replica of jc fits node when the node is empty. */
static bool fits_empty(const cycle *cy, const job_ctx *jc, int node)
{
    const gp_cluster *c = cy->c;
    const gp_node *n = &c->nodes[node];
    const gp_request *r = &jc->req;
    /* Reserved nodes are unschedulable for the rest of the cycle, but only for now. */
    bool usable = n->schedulable || (cy->is_reserved && cy->is_reserved[node]);
    if (!usable || n->cpu_milli < r->cpu_milli || n->memory_mib < r->memory_mib ||
        (n->caps & r->needs) != r->needs) {
        return false;
    }
    uint32_t ok = 0;
    for (int g = 0; g < n->ngpus; g++) {
        const gp_gpu *u = gp_cluster_gpu(c, node, g);
        const gp_gpu_model *m = gp_cluster_model_info(c, u->model);
        if (r->allowed_models && !(r->allowed_models & (1ull << u->model))) {
            continue;
        }
        bool fit = r->kind == GP_REQ_WHOLE ||
                   (r->kind == GP_REQ_FRACTION && r->gpu_mem_mib <= u->mem_mib) ||
                   (r->kind == GP_REQ_MIG && (u->mode == GP_GPU_MIG || c->dynamic_mig) &&
                    m->mig != GP_MIG_NONE && gp_mig_find(m->mig, r->mig_profile));
        ok |= fit ? 1u << g : 0;
    }
    switch (r->kind) {
    case GP_REQ_NONE:
        return true;
    case GP_REQ_WHOLE:
        return __builtin_popcount(ok) >= r->gpu_count &&
               (!jc->nvl_require || gpus_clique(c, node, ok, r->gpu_count));
    default:
        return ok != 0;
    }
}

int backfill_ever_fits(cycle *cy, const job_ctx *jc, bool *fits)
{
    *fits = false;
    if (fail_lookup(cy, jc, FAIL_NEVER, NULL, NULL)) {
        return 0;
    }
    for (int node = 0; node < cy->c->nnodes && !*fits; node++) {
        *fits = fits_empty(cy, jc, node);
    }
    return *fits ? 0 : fail_record(cy, jc, FAIL_NEVER, "", 0);
}

int backfill_reserve(cycle *cy, job_ctx *jc)
{
    if (!cy->cfg->backfill || cy->reserved_job != 0 || cy->reserve_tries >= RESERVE_TRIES ||
        !cy->s->placers[jc->pol].pol) {
        return 0;
    }
    cy->reserve_tries++;
    int ne = 0, nn = 0, rc;
    ending *e = endings(cy, &ne);
    scratch s = {gp_cluster_clone(cy->c), NULL, NULL, NULL, NULL, NULL};
    s.a = malloc(sizeof(gp_assignment) * (size_t)jc->job->replicas);
    s.nodes = malloc(sizeof(int) * (size_t)jc->job->replicas);
    s.touched = malloc(sizeof(int) * (size_t)(cy->c->nnodes + 1));
    s.mark = calloc((size_t)(cy->c->nnodes + 1), 1);
    rc = !e || !s.c || !s.a || !s.nodes || !s.touched || !s.mark ? GP_ENOMEM : 0;
    if (rc == 0) {
        rc = gp_placer_new(s.c, &cy->s->placers[jc->pol].pol->base, &s.pl);
    }
    int64_t shadow = SCHED_NEVER;
    if (rc == 0) {
        job_ctx sj = *jc;
        sj.may_reserved = false;
        rc = find_shadow(cy, &s, &sj, e, ne, &nn, &shadow);
    }
    if (rc == 0 && nn > 0) {
        rc = hold_nodes(cy, s.nodes, nn);
        cy->reserved_job = jc->job->id;
        cy->shadow_ms = shadow;
    }
    free(e);
    scratch_free(&s);
    return rc;
}

int backfill_blocks(cycle *cy, job_ctx *jc, bool *blocks)
{
    *blocks = false;
    if (cy->reserved_job == 0 || jc->may_reserved || cy->nreserved == 0) {
        return 0;
    }
    const char *cached = fail_lookup(cy, jc, FAIL_RESERVED, NULL, NULL);
    if (cached) {
        *blocks = cached[0] != '\0';
        return 0;
    }
    job_ctx alt = *jc;
    alt.may_reserved = true;
    int fitted, rc = gang_attempt(cy, &alt, &fitted);
    if (rc == 0) {
        attempt_unplace(cy);
        *blocks = true;
    } else if (rc != GP_ENOSPC) {
        return rc;
    }
    return fail_record(cy, jc, FAIL_RESERVED, *blocks ? "1" : "", 0);
}

void backfill_release(cycle *cy)
{
    for (int i = 0; i < cy->nreserved; i++) {
        gp_cluster_set_schedulable(cy->c, cy->reserved[i], true);
        cy->is_reserved[cy->reserved[i]] = 0;
    }
    cy->nreserved = 0;
}
