/*
 * The scheduler's side of node selectors, taints, spread and anti-affinity
 * (gpupool/constraint.h). The placers' classes and scores ignore them; sched_place.c checks them
 * on the node a placer picks, like NVLink, and scans for another node when it misses. A request
 * without constraints on a pool without taints pays one test per check.
 *
 * Spread and anti-affinity depend on where the job's group already is, so before each replica
 * the group's replicas are counted per node (running jobs not evicted, jobs placed earlier in the
 * cycle, the replicas of the attempt under way) and the allowed nodes computed once.
 */
#include "core/cluster_impl.h"
#include "core/sched_impl.h"
#include "gpupool/constraint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool counted(const gp_constraints *k)
{
    return k && (k->nspread > 0 || k->anti_affinity);
}

bool constraints_ok(const cycle *cy, const gp_cluster *c, const job_ctx *jc, int node)
{
    const gp_constraints *k = jc->req.place;
    if (!k && c->nodes[node].ntaints == 0) {
        return true;
    }
    int which;
    if (gp_node_selector_miss(c, node, k) >= 0 || gp_node_taint_check(c, node, k, &which) == 2) {
        return false;
    }
    return !counted(k) || cy->spread_for != jc->job->id || cy->spread_ok[node];
}

bool constraints_preferred(const gp_cluster *c, const job_ctx *jc, int node)
{
    int which;
    return c->nodes[node].ntaints == 0 || gp_node_taint_check(c, node, jc->req.place, &which) == 0;
}

static int64_t group_of(const gp_sched_job *j)
{
    return j->group ? j->group : -j->id - 1; /* own ids apart from group numbers */
}

static void count_job(cycle *cy, const gp_assignment *a, int n)
{
    for (int r = 0; r < n; r++) {
        if (a[r].node >= 0 && a[r].node < cy->c->nnodes) {
            cy->spread_count[a[r].node]++;
        }
    }
}

static int spread_alloc(cycle *cy)
{
    if (cy->spread_ok) {
        return 0;
    }
    size_t nn = (size_t)cy->c->nnodes + 1;
    cy->spread_count = calloc(nn, sizeof(int));
    cy->spread_ok = calloc(nn, 1);
    return cy->spread_count && cy->spread_ok ? 0 : GP_ENOMEM;
}

int constraints_prepare(cycle *cy, const job_ctx *jc)
{
    const gp_constraints *k = jc->req.place;
    if (!counted(k)) {
        return 0;
    }
    int rc = spread_alloc(cy);
    if (rc < 0) {
        return rc;
    }
    memset(cy->spread_count, 0, sizeof(int) * (size_t)cy->c->nnodes);
    int64_t g = group_of(jc->job);
    /* A job of its own group (not a service's replica) has no replicas elsewhere: a pending job
     * is not running, and is placed once per cycle. */
    for (int i = 0; jc->job->group && i < cy->in->nrunning; i++) {
        const gp_sched_job *j = &cy->in->running[i];
        if (!cy->run[i].evicted && group_of(j) == g) {
            count_job(cy, j->assignments, j->replicas);
        }
    }
    for (int p = 0; jc->job->group && p < cy->nplaced; p++) {
        const gp_sched_job *j = &cy->in->pending[cy->placed[p].pending];
        if (group_of(j) == g) {
            count_job(cy, cy->placed[p].rep, j->replicas);
        }
    }
    count_job(cy, cy->at.rep, cy->at.nrep);
    rc = gp_spread_allowed(cy->c, k, cy->spread_count, cy->spread_ok);
    cy->spread_for = rc == 0 ? jc->job->id : 0;
    return rc;
}

/* Appends ", N what" to buf when n > 0. */
static void part(char *buf, size_t size, int n, const char *what)
{
    size_t len = strlen(buf);
    if (n > 0 && len < size) {
        snprintf(buf + len, size - len, "%s%d %s", len ? ", " : "", n, what);
    }
}

static bool reason_of(const cycle *cy, const job_ctx *jc, char *reason)
{
    const gp_constraints *k = jc->req.place;
    const gp_cluster *c = cy->c;
    int total = c->nnodes, lack = 0, tainted = 0, spread = 0, match = 0;
    int first_lack = -1, first_taint_node = -1, first_taint = -1;
    for (int node = 0; node < total; node++) {
        int miss = gp_node_selector_miss(c, node, k), which = -1;
        if (miss >= 0) {
            lack++;
            first_lack = first_lack < 0 ? miss : first_lack;
        } else if (gp_node_taint_check(c, node, k, &which) == 2) {
            tainted++;
            if (first_taint_node < 0) {
                first_taint_node = node;
                first_taint = which;
            }
        } else if (counted(k) && cy->spread_for == jc->job->id && !cy->spread_ok[node]) {
            spread++;
        } else {
            match++;
        }
    }
    if (match > 0) {
        return false; /* some node could take it: a matter of room, said as such */
    }
    char what[160] = "", buf[200] = "";
    if (lack) {
        snprintf(what, sizeof(what), "lack %.60s=%.60s", k->selector[first_lack].key,
                 k->selector[first_lack].value);
        part(buf, sizeof(buf), lack, what);
    }
    if (tainted) {
        const gp_taint *t = &c->nodes[first_taint_node].taints[first_taint];
        snprintf(what, sizeof(what), "%s taint %.60s%s%.60s:%s", tainted == 1 ? "has" : "have",
                 t->key, t->value[0] ? "=" : "", t->value, gp_taint_effect_name(t->effect));
        part(buf, sizeof(buf), tainted, what);
    }
    part(buf, sizeof(buf), spread,
         k && k->anti_affinity ? "excluded by spread or anti_affinity" : "excluded by spread");
    reasonf(reason, "%d/%d nodes match: %s", match, total, buf);
    return true;
}

bool constraints_said(const char *reason)
{
    return strncmp(reason, "0/", 2) == 0 && strstr(reason, " nodes match: ") != NULL;
}

bool constraints_reason(cycle *cy, const job_ctx *jc, char *reason)
{
    if (jc->req.place) {
        return reason_of(cy, jc, reason);
    }
    if (gp_cluster_tainted_nodes(cy->c) == 0) {
        return false; /* the common case: nothing to say, at no cost */
    }
    /* Without constraints the answer depends on the taints alone, fixed for the cycle: work it
     * out once, not once per waiting job. */
    if (cy->plain_known < 0) {
        cy->plain_known = reason_of(cy, jc, cy->plain_reason) ? 1 : 0;
    }
    if (cy->plain_known == 1) {
        reason_copy(reason, cy->plain_reason);
    }
    return cy->plain_known == 1;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    for (; s && *s; s++) {
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    }
    return (h ^ 0xff) * 1099511628211ull; /* a separator: "ab","c" differs from "a","bc" */
}

uint64_t constraints_key(const job_ctx *jc)
{
    const gp_constraints *k = jc->req.place;
    if (!k) {
        return 0;
    }
    if (counted(k) && jc->job->group) {
        /* a service's replica job: depends on where the rest of its group is */
        return (uint64_t)jc->job->id << 1 | 1;
    }
    /* Without a group, spread and anti-affinity start from nothing placed for every job: the
     * same constraints fail alike. */
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < k->nspread; i++) {
        h = mix_str(h, k->spread[i].topology_key);
        h = (h ^ (uint64_t)k->spread[i].max_skew) * 1099511628211ull;
    }
    h = (h ^ (uint64_t)(k->anti_affinity + 7)) * 1099511628211ull;
    for (int i = 0; i < k->nselector; i++) {
        h = mix_str(mix_str(h, k->selector[i].key), k->selector[i].value);
    }
    h = mix_str(h, "|");
    for (int i = 0; i < k->ntolerations; i++) {
        const gp_toleration *t = &k->tolerations[i];
        h = mix_str(mix_str(h, t->key ? t->key : "\x01"), t->equal ? t->value : "\x02");
        h = (h ^ (uint64_t)(t->effect + 2)) * 1099511628211ull;
    }
    return h << 1; /* even: never a job's own key */
}

void constraints_fini(cycle *cy)
{
    free(cy->spread_count);
    free(cy->spread_ok);
    cy->spread_count = NULL;
    cy->spread_ok = NULL;
    cy->spread_for = 0;
}
