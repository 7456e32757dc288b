/*
 * The controller's history of jobs and tenants (history.h): what the heartbeats and the
 * scheduling loop record into the core's series (gpupool/history.h), and the reads of the API
 * and the autoscaler.
 *
 * A job's series i: metric m of the job as a whole at i = m; of replica r (below
 * CTL_HISTORY_REPLICAS, a job of several replicas) at i = CTL_HIST_NJOB * (1 + r) + m.
 */
#include "ctl/history.h"

#include "base/log.h"
#include "ctl/ctl.h"
#include "gpupool/mig.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct ctl_history {
    pthread_mutex_t lock;
    gp_hist_store *jobs;    /* NULL: history.max_jobs 0 */
    gp_hist_store *tenants; /* NULL: history.max_tenants 0 */
    int64_t last_tick_ms;
    int64_t stale_ms; /* a replica's readings older than this are left out of the job's */
};

static const char *const job_names[CTL_HIST_NJOB] = {"gpu_util", "gpu_mem_util", "gpu_mem_mib"};
static const char *const job_units[CTL_HIST_NJOB] = {"percent", "percent", "MiB"};
static const char *const tenant_names[CTL_HIST_NTENANT] = {"gpus_allocated",
                                                           "gpu_mem_allocated_mib"};
static const char *const tenant_units[CTL_HIST_NTENANT] = {"GPUs", "MiB"};

const char *ctl_hist_metric_name(ctl_hist_metric m)
{
    return (unsigned)m < CTL_HIST_NJOB ? job_names[m] : "?";
}

const char *ctl_hist_metric_unit(ctl_hist_metric m)
{
    return (unsigned)m < CTL_HIST_NJOB ? job_units[m] : "?";
}

int ctl_hist_metric_parse(const char *s, ctl_hist_metric *out)
{
    for (int m = 0; s && m < CTL_HIST_NJOB; m++) {
        if (strcmp(s, job_names[m]) == 0) {
            *out = (ctl_hist_metric)m;
            return 0;
        }
    }
    return GP_EINVAL;
}

const char *ctl_hist_tenant_metric_name(ctl_hist_tenant_metric m)
{
    return (unsigned)m < CTL_HIST_NTENANT ? tenant_names[m] : "?";
}

const char *ctl_hist_tenant_metric_unit(ctl_hist_tenant_metric m)
{
    return (unsigned)m < CTL_HIST_NTENANT ? tenant_units[m] : "?";
}

ctl_history *ctl_history_new(const gp_ctl_config *cfg)
{
    ctl_history *h = calloc(1, sizeof(*h));
    if (!h) {
        return NULL;
    }
    pthread_mutex_init(&h->lock, NULL);
    h->stale_ms = cfg->nodes.heartbeat_timeout_ms;
    if (cfg->history.max_jobs > 0) {
        h->jobs = gp_hist_store_new(cfg->history.max_jobs, CTL_HISTORY_JOB_SERIES);
    }
    if (cfg->history.max_tenants > 0) {
        h->tenants = gp_hist_store_new(cfg->history.max_tenants, CTL_HISTORY_TENANT_SERIES);
    }
    if ((cfg->history.max_jobs > 0 && !h->jobs) || (cfg->history.max_tenants > 0 && !h->tenants)) {
        ctl_history_free(h);
        return NULL;
    }
    return h;
}

void ctl_history_free(ctl_history *h)
{
    if (!h) {
        return;
    }
    gp_hist_store_free(h->jobs);
    gp_hist_store_free(h->tenants);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

/* ---- recording ---- */

/* The GPU memory (MiB) share s of a GPU of node n lets its replica use: a MIG slice its memory
 * slices' part of the GPU, a share with a memory limit that limit, else the whole GPU. */
static int64_t share_limit(const ctl_node *n, const gp_gpu_share *s)
{
    int64_t total = s->gpu < n->ngpus ? n->gpus[s->gpu].mem_mib : 0;
    if (s->mig_start >= 0) {
        return total * s->mig_memory_slices / GP_MIG_MEMORY_SLICES;
    }
    return s->mem_mib > 0 ? s->mem_mib : total;
}

static void add(gp_hist_store *st, int64_t key, int i, int64_t now, double v)
{
    gp_hist_series *s = gp_hist_store_open(st, key, i);
    if (s) {
        gp_hist_add(s, now, v);
    }
}

/* Samples of metric values util (percent, < 0 unknown), mem and limit (MiB, < 0 unknown) into
 * the series starting at base. */
static void add_three(gp_hist_store *st, int64_t key, int base, int64_t now, double util,
                      double mem, double limit)
{
    if (util >= 0) {
        add(st, key, base + CTL_HIST_GPU_UTIL, now, util);
    }
    if (mem >= 0) {
        add(st, key, base + CTL_HIST_GPU_MEM_MIB, now, mem);
        if (limit > 0) {
            add(st, key, base + CTL_HIST_GPU_MEM_UTIL, now, 100.0 * mem / limit);
        }
    }
}

void ctl_history_replica(gpupoold *g, ctl_job *j, int r, const ctl_node *n,
                         const gp_wire_replica *w, int64_t now)
{
    ctl_history *h = g->history;
    ctl_replica *rep = &j->replicas[r];
    int64_t limit = 0;
    for (int i = 0; i < rep->a.nshares; i++) {
        limit += share_limit(n, &rep->a.shares[i]);
    }
    rep->hist_util = w->util;
    rep->hist_mem_mib = w->mem_mib;
    rep->hist_limit_mib = limit;
    rep->hist_ms = now;
    if (!h || !h->jobs) {
        return;
    }
    /* the job: its replicas' latest readings, those heard from lately */
    double util = 0, mem = 0, lim = 0;
    int nutil = 0, nmem = 0;
    for (int i = 0; i < j->spec.replicas; i++) {
        const ctl_replica *o = &j->replicas[i];
        if (o->hist_ms == 0 || now - o->hist_ms > h->stale_ms) {
            continue;
        }
        if (o->hist_util >= 0) {
            util += o->hist_util;
            nutil++;
        }
        if (o->hist_mem_mib >= 0) {
            mem += (double)o->hist_mem_mib;
            lim += (double)o->hist_limit_mib;
            nmem++;
        }
    }
    pthread_mutex_lock(&h->lock);
    add_three(h->jobs, j->id, 0, now, nutil ? util / nutil : -1, nmem ? mem : -1, lim);
    if (j->spec.replicas > 1 && r < CTL_HISTORY_REPLICAS) {
        add_three(h->jobs, j->id, CTL_HIST_NJOB * (1 + r), now, w->util, (double)w->mem_mib,
                  (double)limit);
    }
    pthread_mutex_unlock(&h->lock);
}

/* What one replica holds: GPUs (whole 1, a fraction its milli, MIG its compute slices of 7)
 * and GPU memory allocated (MiB: the share's; a MIG slice its part of the GPU's memory). */
static void held(ctl_state *st, const ctl_replica *r, double *gpus, double *mem)
{
    for (int i = 0; i < r->a.nshares; i++) {
        const gp_gpu_share *s = &r->a.shares[i];
        if (s->mig_start >= 0) {
            const ctl_node *n = ctl_node_by_id(st, r->node_id); /* MIG only: rare */
            *gpus += (double)s->mig_compute_slices / GP_MIG_COMPUTE_SLICES;
            *mem += n ? (double)share_limit(n, s) : 0;
        } else {
            *gpus += (double)s->milli / 1000.0;
            *mem += (double)s->mem_mib;
        }
    }
}

/* Every tenant's allocation at now. */
static void sample_tenants(ctl_history *h, ctl_state *st, int64_t now)
{
    int nt = st->ntenants;
    double *gpus = calloc((size_t)nt + 1, sizeof(double)),
           *mem = calloc((size_t)nt + 1, sizeof(double));
    if (!gpus || !mem) {
        free(gpus);
        free(mem);
        return;
    }
    int t = nt;
    for (int i = 0; i < st->njobs; i++) {
        const ctl_job *j = st->jobs[i];
        if (!j->replicas || !ctl_job_state_holds(j->state)) {
            continue;
        }
        if (t >= nt || st->tenants[t].id != j->tenant_id) { /* the last job's, often */
            const ctl_tenant *tn = ctl_tenant_by_id(st, j->tenant_id);
            t = tn ? (int)(tn - st->tenants) : nt;
        }
        for (int r = 0; t < nt && r < j->spec.replicas; r++) {
            held(st, &j->replicas[r], &gpus[t], &mem[t]);
        }
    }
    pthread_mutex_lock(&h->lock);
    for (int k = 0; k < nt; k++) {
        add(h->tenants, st->tenants[k].id, CTL_HIST_GPUS_ALLOCATED, now, gpus[k]);
        add(h->tenants, st->tenants[k].id, CTL_HIST_GPU_MEM_ALLOCATED_MIB, now, mem[k]);
    }
    pthread_mutex_unlock(&h->lock);
    free(gpus);
    free(mem);
}

/* Marks finished the kept jobs that ended or are gone, and the tenants that are gone. */
static void mark_finished(ctl_history *h, ctl_state *st, int64_t now)
{
    pthread_mutex_lock(&h->lock);
    for (int i = 0; h->jobs && i < gp_hist_store_capacity(h->jobs); i++) {
        int64_t id;
        if (!gp_hist_store_slot(h->jobs, i, &id) || gp_hist_store_finished(h->jobs, id, NULL)) {
            continue;
        }
        const ctl_job *j = ctl_job_by_id(st, id);
        if (!j || ctl_job_state_final(j->state)) {
            gp_hist_store_finish(h->jobs, id, j && j->end_ms ? j->end_ms : now);
        }
    }
    for (int i = 0; h->tenants && i < gp_hist_store_capacity(h->tenants); i++) {
        int64_t id;
        if (gp_hist_store_slot(h->tenants, i, &id) && !ctl_tenant_by_id(st, id)) {
            gp_hist_store_drop(h->tenants, id);
        }
    }
    pthread_mutex_unlock(&h->lock);
}

void ctl_history_tick(gpupoold *g, int64_t now)
{
    ctl_history *h = g->history;
    if (!h || now - h->last_tick_ms < CTL_HISTORY_TICK_MS) {
        return;
    }
    h->last_tick_ms = now; /* the committer's alone */
    if (h->tenants) {
        sample_tenants(h, &g->st, now);
    }
    mark_finished(h, &g->st, now);
}

/* ---- reading ---- */

/* The series of metric m of job id, replica as for ctl_history_avg; NULL when none. Under the
 * history's lock. */
static const gp_hist_series *job_series(const ctl_history *h, int64_t id, int replica,
                                        ctl_hist_metric m)
{
    if (!h->jobs) {
        return NULL;
    }
    const gp_hist_series *s =
        replica >= 0 && replica < CTL_HISTORY_REPLICAS
            ? gp_hist_store_get(h->jobs, id, CTL_HIST_NJOB * (1 + replica) + (int)m)
            : NULL;
    if (s || replica > 0) {
        return s;
    }
    /* the job series; for replica 0 when no replica has series of its own: a job of one
     * replica */
    bool own = false;
    for (int k = CTL_HIST_NJOB; replica == 0 && k < CTL_HISTORY_JOB_SERIES && !own; k++) {
        own = gp_hist_store_get(h->jobs, id, k) != NULL;
    }
    return own ? NULL : gp_hist_store_get(h->jobs, id, (int)m);
}

int ctl_history_avg(gpupoold *g, const int64_t *ids, int n, int replica, ctl_hist_metric m,
                    int64_t window_s, int64_t now_ms, double *value)
{
    ctl_history *h = g->history;
    if ((unsigned)m >= CTL_HIST_NJOB || window_s <= 0 || window_s > INT64_MAX / 2000) {
        return GP_EINVAL;
    }
    if (!h) {
        return GP_ENOENT;
    }
    gp_hist_point acc;
    gp_hist_point_clear(&acc);
    pthread_mutex_lock(&h->lock);
    for (int i = 0; i < n; i++) {
        gp_hist_window(job_series(h, ids[i], replica, m), now_ms - window_s * 1000, now_ms, &acc);
    }
    pthread_mutex_unlock(&h->lock);
    if (acc.n == 0) {
        return GP_ENOENT;
    }
    *value = gp_hist_point_mean(&acc);
    return 0;
}

int ctl_history_job_avg(gpupoold *g, int64_t job_id, ctl_hist_metric m, int64_t window_s,
                        int64_t now_ms, double *value)
{
    return ctl_history_avg(g, &job_id, 1, -1, m, window_s, now_ms, value);
}

void ctl_history_fill(gpupoold *g, const int64_t *ids, int n, int replica, ctl_hist_metric m,
                      const gp_hist_plan *p, gp_hist_point *out)
{
    ctl_history *h = g->history;
    if (!h || (unsigned)m >= CTL_HIST_NJOB) {
        return;
    }
    pthread_mutex_lock(&h->lock);
    for (int i = 0; i < n; i++) {
        gp_hist_fill(job_series(h, ids[i], replica, m), p, out);
    }
    pthread_mutex_unlock(&h->lock);
}

void ctl_history_tenant_fill(gpupoold *g, int64_t tenant_id, ctl_hist_tenant_metric m,
                             const gp_hist_plan *p, gp_hist_point *out)
{
    ctl_history *h = g->history;
    if (!h || !h->tenants || (unsigned)m >= CTL_HIST_NTENANT) {
        return;
    }
    pthread_mutex_lock(&h->lock);
    gp_hist_fill(gp_hist_store_get(h->tenants, tenant_id, (int)m), p, out);
    pthread_mutex_unlock(&h->lock);
}

unsigned ctl_history_replicas(gpupoold *g, int64_t job_id, int nreplicas)
{
    ctl_history *h = g->history;
    unsigned bits = 0;
    if (!h || !h->jobs) {
        return 0;
    }
    pthread_mutex_lock(&h->lock);
    for (int r = 0; r < nreplicas && r < CTL_HISTORY_REPLICAS; r++) {
        for (int k = 0; k < CTL_HIST_NJOB; k++) {
            bits |= gp_hist_store_get(h->jobs, job_id, CTL_HIST_NJOB * (1 + r) + k) ? 1u << r : 0;
        }
    }
    pthread_mutex_unlock(&h->lock);
    return bits;
}
