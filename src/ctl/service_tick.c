/*
 * The reconciliation of services each scheduling cycle (service.h). It runs in two parts, so a
 * cycle with nothing to change writes nothing:
 *   - the plan, in memory (the committer, under the state lock): the autoscaler's decision
 *     (recorded in its history; a new count kept as `want`), and whether the service needs a
 *     change at all (a count to store, replica jobs to make or stop, a rollout under way, a
 *     stalled rollout to report, its reason);
 *   - the changes, in one transaction for the services that need them, a savepoint each (a
 *     failed one is rolled back alone and tried again next cycle).
 */
#include "ctl/service.h"
#include "ctl/service_impl.h"

#include "base/log.h"
#include "ctl/changes.h"
#include "ctl/history.h"
#include "ctl/txn.h"
#include "gpupool/autoscale.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How often a service's autoscaler decides (and records a recommendation). */
#define SCALE_EVERY_MS 1000

/* What the controller keeps in memory per service: the autoscaler's recommendations and when it
 * last decided, a decided count not yet stored (want, 0: none) with its event, and the revision
 * whose stalled rollout was reported. */
typedef struct svc_mem {
    int64_t id;
    gp_scale_history h;
    int64_t last_ms;
    int want;
    bool up;
    char why[480];
    int stalled_rev;
} svc_mem;

struct ctl_services {
    svc_mem *v;
    int n, cap;
};

static svc_mem *mem_of(gpupoold *g, int64_t id)
{
    if (!g->services && !(g->services = calloc(1, sizeof(*g->services)))) {
        return NULL;
    }
    struct ctl_services *s = g->services;
    for (int i = 0; i < s->n; i++) {
        if (s->v[i].id == id) {
            return &s->v[i];
        }
    }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        svc_mem *v = realloc(s->v, (size_t)cap * sizeof(*v));
        if (!v) {
            return NULL;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n] = (svc_mem){.id = id};
    return &s->v[s->n++];
}

void ctl_services_free(gpupoold *g)
{
    struct ctl_services *s = g->services;
    for (int i = 0; s && i < s->n; i++) {
        gp_autoscale_history_fini(&s->v[i].h);
    }
    if (s) {
        free(s->v);
        free(s);
    }
    g->services = NULL;
}

typedef struct svc_view {
    ctl_job **v; /* active replica jobs, oldest first */
    int n;
    int cur, old;         /* of the service's revision; of older ones */
    int ready, cur_ready; /* ready: all; of the current revision */
} svc_view;

static int view_of(ctl_state *st, const ctl_job *svc, svc_view *w)
{
    memset(w, 0, sizeof(*w));
    w->n = ctl_service_replicas(st, svc, &w->v);
    if (w->n < 0) {
        return w->n;
    }
    for (int i = 0; i < w->n; i++) {
        bool cur = w->v[i]->revision == svc->revision, ready = ctl_service_replica_ready(w->v[i]);
        w->cur += cur;
        w->old += !cur;
        w->ready += ready;
        w->cur_ready += cur && ready;
    }
    return 0;
}

/* The replica to stop first among those of which (revision: only the current one when cur,
 * only older ones otherwise): one not ready, else the newest (cur) or the oldest (old). */
static ctl_job *pick_stop(const ctl_job *svc, const svc_view *w, bool cur, bool ready_ok)
{
    ctl_job *best = NULL;
    for (int i = 0; i < w->n; i++) {
        ctl_job *r = w->v[i];
        if ((r->revision == svc->revision) != cur) {
            continue;
        }
        bool ready = ctl_service_replica_ready(r);
        if (!ready) {
            return r;
        }
        if (ready_ok && (!best || cur)) {
            best = r; /* the newest of the current revision; the oldest of an old one */
        }
    }
    return best;
}

/* One step of a service: creates or stops one replica, or ends a rollout; *did says whether
 * something was done (the caller repeats until nothing is). */
static int step_count(gpupoold *g, ctl_job *svc, const svc_view *w, bool *did, gp_diag *d)
{
    int target = svc->svc_replicas;
    *did = true;
    if (w->old == 0) {
        if (svc->svc_rollout_ms) {
            ctl_job next = *svc;
            next.svc_rollout_ms = 0;
            char msg[128];
            snprintf(msg, sizeof(msg), "revision %d: %d of %d replicas ready", svc->revision,
                     w->cur_ready, target);
            int rc = ctl_job_store(g, &next, svc->state, d);
            rc = rc < 0 ? rc : ctl_job_event(g, svc->id, "RolloutComplete", msg, d);
            if (rc == 0) {
                svc->svc_rollout_ms = 0;
            }
            return rc;
        }
        if (w->cur < target) {
            return ctl__service_create_replica(g, svc, d);
        }
        if (w->cur > target) {
            return ctl__service_stop_replica(g, svc, pick_stop(svc, w, true, true),
                                             "ReplicaStopped", "scaled down", d);
        }
        *did = false;
        return 0;
    }
    /* a rolling update */
    const gp_update *u = &svc->spec.update;
    if (w->cur < target && w->n < target + u->max_surge) {
        return ctl__service_create_replica(g, svc, d);
    }
    int min_ready = target - u->max_unavailable;
    ctl_job *r = pick_stop(svc, w, false, w->ready - 1 >= min_ready);
    if (r) {
        char why[96];
        snprintf(why, sizeof(why), "replaced by revision %d", svc->revision);
        return ctl__service_stop_replica(g, svc, r, "RollingUpdate", why, d);
    }
    if (w->cur > target) { /* the count fell during the rollout */
        return ctl__service_stop_replica(g, svc, pick_stop(svc, w, true, true), "ReplicaStopped",
                                         "scaled down", d);
    }
    *did = false;
    return 0;
}

/* Whether the rollout's new revision has had no replica ready past the deadline, not yet
 * reported. */
static bool stalled(const gpupoold *g, const ctl_job *svc, const svc_view *w, const svc_mem *m,
                    int64_t now)
{
    return w->old > 0 && w->cur_ready == 0 && m->stalled_rev != svc->revision &&
           now - svc->svc_rollout_ms >= g->cfg->services.progress_deadline_ms;
}

static int report_stalled(gpupoold *g, ctl_job *svc, const svc_view *w, svc_mem *m, gp_diag *d)
{
    char msg[200];
    snprintf(msg, sizeof(msg),
             "revision %d: no replica ready after %llds; %d replicas of older revisions keep "
             "serving",
             svc->revision, (long long)(g->cfg->services.progress_deadline_ms / 1000), w->old);
    int rc = ctl_job_event(g, svc->id, "RolloutStalled", msg, d);
    if (rc == 0) {
        m->stalled_rev = svc->revision;
        GP_LOG(GP_LOG_INFO, "service", "job=%lld %s", (long long)svc->id, msg);
    }
    return rc;
}

/* The autoscaler's input over the ready replicas: a Prometheus gauge, the mean of the last value
 * each reported; GPU utilisation or memory utilisation, their mean over the last
 * CTL_SERVICE_METRIC_WINDOW_S in the jobs' history (history.h). */
static bool metric_value(gpupoold *g, const ctl_job *svc, const svc_view *w, int64_t now,
                         double *value)
{
    double sum = 0;
    int n = 0;
    int64_t *ids = calloc((size_t)w->n + 1, sizeof(*ids));
    for (int i = 0; ids && i < w->n; i++) {
        const ctl_job *r = w->v[i];
        if (!ctl_service_replica_ready(r)) {
            continue;
        }
        ids[n++] = r->id;
        sum += r->replicas[0].has_metric ? r->replicas[0].metric : 0;
    }
    int rc = GP_ENOENT;
    if (n && svc->spec.autoscale.metric == GP_SCALE_PROMETHEUS) {
        int with = 0;
        for (int i = 0; i < w->n; i++) {
            with += ctl_service_replica_ready(w->v[i]) && w->v[i]->replicas[0].has_metric;
        }
        rc = with ? 0 : GP_ENOENT;
        *value = with ? sum / with : 0;
    } else if (n) {
        ctl_hist_metric m = svc->spec.autoscale.metric == GP_SCALE_GPU_UTIL ? CTL_HIST_GPU_UTIL
                                                                            : CTL_HIST_GPU_MEM_UTIL;
        rc = ctl_history_avg(g, ids, n, -1, m, CTL_SERVICE_METRIC_WINDOW_S, now, value);
    }
    free(ids);
    return rc == 0;
}

/* The autoscaler, once a second with no rollout under way: a decision to change the count is
 * kept in m->want (stored by apply_want). Memory only. */
static void autoscale(gpupoold *g, const ctl_job *svc, const svc_view *w, svc_mem *m, int64_t now)
{
    const gp_autoscale *as = &svc->spec.autoscale;
    if (!as->enabled || w->old > 0 || now - m->last_ms < SCALE_EVERY_MS) {
        return;
    }
    m->last_ms = now;
    gp_scale_input in = {.current = svc->svc_replicas,
                         .min_replicas = as->min_replicas,
                         .max_replicas = as->max_replicas,
                         .target = as->target,
                         .tolerance = GP_AUTOSCALE_TOLERANCE,
                         .now_ms = now,
                         .up_window_ms = as->scale_up_window_s * 1000,
                         .down_window_ms = as->scale_down_window_s * 1000};
    in.have_value = metric_value(g, svc, w, now, &in.value);
    gp_scale_decision dec;
    int64_t keep = in.up_window_ms > in.down_window_ms ? in.up_window_ms : in.down_window_ms;
    if (gp_autoscale_decide(&in, &m->h, &dec) < 0 ||
        gp_autoscale_record(&m->h, now, dec.recommendation, keep) < 0) {
        return; /* bounds the spec's parser already checked; out of memory: no decision */
    }
    m->want = dec.dir == GP_SCALE_KEEP ? 0 : dec.desired;
    m->up = dec.dir == GP_SCALE_UP;
    snprintf(m->why, sizeof(m->why), "%d -> %d replicas: %s %s", svc->svc_replicas, dec.desired,
             as->metric == GP_SCALE_PROMETHEUS ? as->metric_name : gp_scale_metric_name(as->metric),
             dec.reason);
}

/* Stores the count the autoscaler decided, with its event (ScaledUp, ScaledDown). */
static int apply_want(gpupoold *g, ctl_job *svc, svc_mem *m, gp_diag *d)
{
    ctl_job next = *svc;
    next.svc_replicas = m->want;
    int rc = ctl_job_store(g, &next, svc->state, d);
    rc = rc < 0 ? rc : ctl_job_event(g, svc->id, m->up ? "ScaledUp" : "ScaledDown", m->why, d);
    if (rc == 0) {
        GP_LOG(GP_LOG_INFO, "service", "job=%lld %s", (long long)svc->id, m->why);
        svc->svc_replicas = m->want;
        m->want = 0;
    }
    return rc;
}

/* The service's reason: how many replicas are ready, into buf. */
static void reason_of(const ctl_job *svc, const svc_view *w, char *buf, size_t cap)
{
    snprintf(buf, cap, "%d of %d replicas ready (revision %d%s)", w->ready, svc->svc_replicas,
             svc->revision, w->old ? ", rolling update" : "");
}

static int update_reason(gpupoold *g, ctl_job *svc, const svc_view *w, gp_diag *d)
{
    char why[sizeof(svc->reason)];
    reason_of(svc, w, why, sizeof(why));
    if (strcmp(why, svc->reason) == 0) {
        return 0;
    }
    ctl_job next = *svc;
    snprintf(next.reason, sizeof(next.reason), "%s", why);
    int rc = ctl_job_store(g, &next, svc->state, d);
    if (rc == 0) {
        snprintf(svc->reason, sizeof(svc->reason), "%s", why);
    }
    return rc;
}

/* The plan of one service (memory only): whether it needs a transaction. */
static bool plan(gpupoold *g, const ctl_job *svc, int64_t now)
{
    svc_mem *m = mem_of(g, svc->id);
    svc_view w;
    if (!m || view_of(&g->st, svc, &w) < 0) {
        return true; /* out of memory: the transaction says so */
    }
    autoscale(g, svc, &w, m, now);
    char why[sizeof(svc->reason)];
    reason_of(svc, &w, why, sizeof(why));
    bool need = m->want || w.old > 0 || w.cur != svc->svc_replicas || svc->svc_rollout_ms ||
                stalled(g, svc, &w, m, now) || strcmp(why, svc->reason) != 0;
    free(w.v);
    return need;
}

/* One service's changes (a step of the transaction). */
static int tick_step(ctl_txn *tx, void *arg, gp_diag *d)
{
    const ctl_tick *a = arg;
    ctl_job *svc = ctl_job_by_id(tx->st, a->id);
    svc_mem *m = mem_of(tx->g, a->id);
    if (!svc || !ctl_job_is_service(svc) || svc->state != CTL_RUNNING) {
        return 0;
    }
    svc_view w = {0};
    int rc = m ? view_of(tx->st, svc, &w) : GP_ENOMEM;
    if (rc < 0) {
        return gp_diag_set(d, rc, "out of memory");
    }
    tx->dirty = true; /* memory follows each store write: a failure reloads it */
    if (m->want == svc->svc_replicas) {
        m->want = 0; /* decided against a count an update has changed since */
    }
    if (m->want) {
        rc = apply_want(tx->g, svc, m, d);
    }
    if (rc == 0 && stalled(tx->g, svc, &w, m, a->now)) {
        rc = report_stalled(tx->g, svc, &w, m, d);
    }
    bool did = true;
    for (int guard = 0; rc == 0 && did && guard < 2 * GP_JOB_MAX_REPLICAS; guard++) {
        rc = step_count(tx->g, svc, &w, &did, d);
        free(w.v);
        w.v = NULL;
        rc = rc < 0 ? rc : view_of(tx->st, svc, &w);
    }
    rc = rc < 0 ? rc : update_reason(tx->g, svc, &w, d);
    free(w.v);
    return rc;
}

static bool pick(gpupoold *g, const ctl_job *svc, int64_t now)
{
    return ctl_job_is_service(svc) && svc->state == CTL_RUNNING && plan(g, svc, now);
}

int ctl_services_tick(gpupoold *g, int64_t now, gp_diag *d)
{
    return ctl_txn_each_job(g, "services", pick, tick_step, now, d);
}
