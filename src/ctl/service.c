/*
 * Services (service.h): creation, update, the replica jobs, and the reconciliation each cycle
 * (replica count, rolling update, autoscaling). Each service's replica jobs are found by a scan
 * of the jobs (a pool has few services; the scan is one pass per service per cycle).
 */
#include "ctl/service.h"

#include "base/log.h"
#include "ctl/changes.h"
#include "ctl/txn.h"
#include "gpupool/autoscale.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How often a service's autoscaler decides (and records a recommendation). */
#define SCALE_EVERY_MS 1000

/* What the controller keeps in memory per service: the autoscaler's recommendations and when it
 * last decided; the revision whose stalled rollout was reported. */
typedef struct svc_mem {
    int64_t id;
    gp_scale_history h;
    int64_t last_ms;
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

bool ctl_service_replica_ready(const ctl_job *r)
{
    return r->owner && r->state == CTL_RUNNING && r->replicas &&
           strcmp(r->replicas[0].state, "Running") == 0 && r->replicas[0].ready;
}

int ctl_service_replicas(ctl_state *st, const ctl_job *svc, ctl_job ***out)
{
    *out = NULL;
    int n = 0;
    for (int i = 0; i < st->njobs; i++) {
        n += st->jobs[i]->owner == svc->id && !ctl_job_state_final(st->jobs[i]->state);
    }
    ctl_job **v = calloc((size_t)n + 1, sizeof(*v));
    if (!v) {
        return GP_ENOMEM;
    }
    int k = 0;
    for (int i = 0; i < st->njobs && k < n; i++) {
        if (st->jobs[i]->owner == svc->id && !ctl_job_state_final(st->jobs[i]->state)) {
            v[k++] = st->jobs[i];
        }
    }
    *out = v;
    return k;
}

/* ---- creation and update ---- */

/* The replica count a spec starts with (jobspec.h: replicas, raised to min_replicas). */
static int initial_count(const gp_jobspec *s, int now)
{
    if (!s->autoscale.enabled) {
        return s->replicas;
    }
    int n = now > 0 ? now : s->replicas;
    n = n < s->autoscale.min_replicas ? s->autoscale.min_replicas : n;
    return n > s->autoscale.max_replicas ? s->autoscale.max_replicas : n;
}

int ctl_service_create(gpupoold *g, ctl_job *j, gp_diag *d)
{
    ctl_job next = *j;
    next.revision = 1;
    next.svc_replicas = initial_count(&j->spec, 0);
    next.svc_next = 1;
    next.start_ms = ctl_now_ms();
    snprintf(next.reason, sizeof(next.reason), "0 of %d replicas ready (revision 1)",
             next.svc_replicas);
    int rc = ctl_job_store(g, &next, CTL_RUNNING, d);
    if (rc == 0) {
        char msg[128];
        snprintf(msg, sizeof(msg), "service with %d replicas", next.svc_replicas);
        rc = ctl_job_event(g, j->id, "ServiceCreated", msg, d);
    }
    if (rc < 0) {
        return rc;
    }
    j->revision = next.revision;
    j->svc_replicas = next.svc_replicas;
    j->svc_next = next.svc_next;
    j->start_ms = next.start_ms;
    snprintf(j->reason, sizeof(j->reason), "%s", next.reason);
    ctl_job_set_state(&g->st, j, CTL_RUNNING);
    return 0;
}

int ctl_service_update(gpupoold *g, ctl_job *svc, gp_jobspec *spec, bool *changed, gp_diag *d)
{
    *changed = false;
    if (gp_jobspec_equal(&svc->spec, spec)) {
        return 0;
    }
    ctl_job next = *svc;
    next.spec = *spec;
    next.revision = svc->revision + 1;
    next.svc_replicas = initial_count(spec, svc->svc_replicas);
    if (!spec->autoscale.enabled) {
        next.svc_replicas = spec->replicas;
    }
    next.svc_rollout_ms = ctl_now_ms();
    int rc = ctl_job_store(g, &next, svc->state, d);
    if (rc == 0) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "revision %d started: %d replicas, max_surge %d, "
                 "max_unavailable %d",
                 next.revision, next.svc_replicas, spec->update.max_surge,
                 spec->update.max_unavailable);
        rc = ctl_job_event(g, svc->id, "RollingUpdate", msg, d);
    }
    if (rc < 0) {
        return rc;
    }
    gp_jobspec_fini(&svc->spec);
    svc->spec = *spec;
    memset(spec, 0, sizeof(*spec));
    svc->revision = next.revision;
    svc->svc_replicas = next.svc_replicas;
    svc->svc_rollout_ms = next.svc_rollout_ms;
    svc->sj_gen = 0;
    *changed = true;
    return 0;
}

/* ---- replica jobs ---- */

/* The spec document of a new replica job of svc named name: the service's spec, one replica,
 * always restarted. New reference, NULL when out of memory. */
static json_t *replica_doc(const ctl_job *svc, const char *name)
{
    json_t *doc = gp_jobspec_to_json(&svc->spec);
    if (!doc) {
        return NULL;
    }
    int rc = json_object_set_new(doc, "name", json_string(name));
    rc |= json_object_set_new(doc, "replicas", json_integer(1));
    rc |= json_object_set_new(doc, "restart_policy", json_string("always"));
    rc |= json_object_set_new(doc, "max_restarts", json_integer(1000));
    json_t *as = json_object_get(doc, "autoscale");
    if (as) {
        rc |= json_object_set_new(as, "min_replicas", json_integer(1));
    }
    if (rc != 0) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* Whether an active job of the tenant is named name (the store refuses a second one). */
static bool name_taken(ctl_state *st, int64_t tenant_id, const char *name)
{
    for (int i = st->njobs - 1; i >= 0; i--) {
        const ctl_job *j = st->jobs[i];
        if (j->tenant_id == tenant_id && !ctl_job_state_final(j->state) &&
            strcmp(j->name, name) == 0) {
            return true;
        }
    }
    return false;
}

/* Creates replica job NAME-N of svc at its revision, Pending (N the service's counter, past
 * the names an active job of the tenant holds). */
static int create_replica(gpupoold *g, ctl_job *svc, gp_diag *d)
{
    char name[GP_JOB_NAME_MAX + 16];
    snprintf(name, sizeof(name), "%.48s-%d", svc->name, svc->svc_next);
    while (name_taken(&g->st, svc->tenant_id, name) && svc->svc_next < 9999999) {
        svc->svc_next++; /* memory only until stored below: a failure reloads it */
        snprintf(name, sizeof(name), "%.48s-%d", svc->name, svc->svc_next);
    }
    json_t *doc = replica_doc(svc, name);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    ctl_job *r = calloc(1, sizeof(*r));
    int rc = text && r ? gp_jobspec_parse_json(text, strlen(text), &r->spec, d)
                       : gp_diag_set(d, GP_ENOMEM, "out of memory");
    if (rc < 0) {
        free(text);
        free(r);
        return rc;
    }
    *r = (ctl_job){.tenant_id = svc->tenant_id,
                   .state = CTL_PENDING,
                   .spec = r->spec,
                   .submit_ms = ctl_now_ms(),
                   .owner = svc->id,
                   .revision = svc->revision};
    snprintf(r->name, sizeof(r->name), "%.63s", name);
    snprintf(r->reason, sizeof(r->reason), "%s", CTL_REASON_NEW);
    gp_job_rec rec = {.tenant_id = svc->tenant_id, .submit_time_ms = r->submit_ms};
    snprintf(rec.name, sizeof(rec.name), "%.63s", name);
    snprintf(rec.state, sizeof(rec.state), "Pending");
    int created = 0;
    rc = gp_store_job_insert(g->store, &rec, text, "{}", &created, d);
    free(text);
    ctl_job svc_next = *svc;
    svc_next.svc_next++;
    r->id = rec.id;
    char msg[160];
    snprintf(msg, sizeof(msg), "%s (revision %d)", name, svc->revision);
    rc = rc < 0 ? rc : ctl_job_store(g, r, CTL_PENDING, d);
    rc = rc < 0 ? rc : ctl_job_store(g, &svc_next, svc->state, d);
    rc = rc < 0 ? rc : ctl_job_event(g, r->id, "Submitted", "created by its service", d);
    rc = rc < 0 ? rc : ctl_job_event(g, svc->id, "ReplicaCreated", msg, d);
    if (rc == 0 && ctl_state_add_job(&g->st, r) < 0) {
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (rc < 0) {
        gp_jobspec_fini(&r->spec);
        free(r);
        return rc;
    }
    svc->svc_next++;
    return 0;
}

/* Cancels replica job r of svc (why: the reason), with an event on the service (type). */
static int stop_replica(gpupoold *g, const ctl_job *svc, ctl_job *r, const char *type,
                        const char *why, gp_diag *d)
{
    ctl_job next = *r;
    snprintf(next.reason, sizeof(next.reason), "stopped by service %s: %s", svc->name, why);
    next.end_ms = ctl_now_ms();
    char msg[200];
    snprintf(msg, sizeof(msg), "%s (revision %d) stopped: %s", r->name, r->revision, why);
    int rc = ctl_job_end_placement(g, r, &next, CTL_CANCELLED, "Cancelled", d);
    return rc < 0 ? rc : ctl_job_event(g, svc->id, type, msg, d);
}

int ctl_service_cancel_replicas(gpupoold *g, const ctl_job *svc, const char *why, gp_diag *d)
{
    ctl_job **v;
    int n = ctl_service_replicas(&g->st, svc, &v);
    int rc = n < 0 ? gp_diag_set(d, n, "out of memory") : 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        ctl_job next = *v[i];
        snprintf(next.reason, sizeof(next.reason), "%s", why);
        next.end_ms = ctl_now_ms();
        rc = ctl_job_end_placement(g, v[i], &next, CTL_CANCELLED, "Cancelled", d);
    }
    free(v);
    return rc;
}

/* ---- reconciliation ---- */

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

typedef struct tick_arg {
    int64_t svc_id;
    int64_t now;
} tick_arg;

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
            return create_replica(g, svc, d);
        }
        if (w->cur > target) {
            return stop_replica(g, svc, pick_stop(svc, w, true, true), "ReplicaStopped",
                                "scaled down", d);
        }
        *did = false;
        return 0;
    }
    /* a rolling update */
    const gp_update *u = &svc->spec.update;
    if (w->cur < target && w->n < target + u->max_surge) {
        return create_replica(g, svc, d);
    }
    int min_ready = target - u->max_unavailable;
    ctl_job *r = pick_stop(svc, w, false, w->ready - 1 >= min_ready);
    if (r) {
        char why[96];
        snprintf(why, sizeof(why), "replaced by revision %d", svc->revision);
        return stop_replica(g, svc, r, "RollingUpdate", why, d);
    }
    if (w->cur > target) { /* the count fell during the rollout */
        return stop_replica(g, svc, pick_stop(svc, w, true, true), "ReplicaStopped", "scaled down",
                            d);
    }
    *did = false;
    return 0;
}

/* The rollout's new revision has no replica ready past the deadline: reported once. */
static int check_stalled(gpupoold *g, ctl_job *svc, const svc_view *w, int64_t now, gp_diag *d)
{
    svc_mem *m = mem_of(g, svc->id);
    if (!m || w->old == 0 || w->cur_ready > 0 || m->stalled_rev == svc->revision ||
        now - svc->svc_rollout_ms < g->cfg->services.progress_deadline_ms) {
        return 0;
    }
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

/* The autoscaler's input: the mean of the metric over the ready replicas. */
static bool metric_value(const ctl_job *svc, const svc_view *w, double *value)
{
    double sum = 0;
    int n = 0;
    for (int i = 0; i < w->n; i++) {
        const ctl_job *r = w->v[i];
        if (!ctl_service_replica_ready(r)) {
            continue;
        }
        const ctl_replica *rep = &r->replicas[0];
        if (svc->spec.autoscale.metric == GP_SCALE_GPU_UTIL && rep->util >= 0) {
            sum += rep->util;
            n++;
        } else if (svc->spec.autoscale.metric == GP_SCALE_PROMETHEUS && rep->has_metric) {
            sum += rep->metric;
            n++;
        }
    }
    if (n) {
        *value = sum / n;
    }
    return n > 0;
}

static int autoscale(gpupoold *g, ctl_job *svc, const svc_view *w, int64_t now, gp_diag *d)
{
    const gp_autoscale *as = &svc->spec.autoscale;
    svc_mem *m = as->enabled && w->old == 0 ? mem_of(g, svc->id) : NULL;
    if (!m || now - m->last_ms < SCALE_EVERY_MS) {
        return 0;
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
    in.have_value = metric_value(svc, w, &in.value);
    gp_scale_decision dec;
    if (gp_autoscale_decide(&in, &m->h, &dec) < 0) {
        return 0;
    }
    int64_t keep = in.up_window_ms > in.down_window_ms ? in.up_window_ms : in.down_window_ms;
    if (gp_autoscale_record(&m->h, now, dec.recommendation, keep) < 0) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (dec.dir == GP_SCALE_KEEP) {
        return 0;
    }
    ctl_job next = *svc;
    next.svc_replicas = dec.desired;
    char msg[480];
    snprintf(msg, sizeof(msg), "%d -> %d replicas: %s %s", svc->svc_replicas, dec.desired,
             as->metric == GP_SCALE_PROMETHEUS ? as->metric_name : gp_scale_metric_name(as->metric),
             dec.reason);
    int rc = ctl_job_store(g, &next, svc->state, d);
    rc = rc < 0 ? rc
                : ctl_job_event(g, svc->id, dec.dir == GP_SCALE_UP ? "ScaledUp" : "ScaledDown", msg,
                                d);
    if (rc == 0) {
        GP_LOG(GP_LOG_INFO, "service", "job=%lld %s", (long long)svc->id, msg);
        svc->svc_replicas = dec.desired;
    }
    return rc;
}

/* The service's reason: how many replicas are ready. */
static int update_reason(gpupoold *g, ctl_job *svc, const svc_view *w, gp_diag *d)
{
    char why[sizeof(svc->reason)];
    snprintf(why, sizeof(why), "%d of %d replicas ready (revision %d%s)", w->ready,
             svc->svc_replicas, svc->revision, w->old ? ", rolling update" : "");
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

/* One service, one change (a step of the transaction, so a failed one is rolled back alone). */
static int tick_step(ctl_txn *tx, void *arg, gp_diag *d)
{
    tick_arg *a = arg;
    ctl_job *svc = ctl_job_by_id(tx->st, a->svc_id);
    if (!svc || !ctl_job_is_service(svc) || svc->state != CTL_RUNNING) {
        return 0;
    }
    svc_view w;
    int rc = view_of(tx->st, svc, &w);
    if (rc < 0) {
        return gp_diag_set(d, rc, "out of memory");
    }
    rc = check_stalled(tx->g, svc, &w, a->now, d);
    rc = rc < 0 ? rc : autoscale(tx->g, svc, &w, a->now, d);
    bool did = true;
    for (int guard = 0; rc == 0 && did && guard < 2 * GP_JOB_MAX_REPLICAS; guard++) {
        tx->dirty = true;
        rc = step_count(tx->g, svc, &w, &did, d);
        free(w.v);
        w.v = NULL;
        rc = rc < 0 ? rc : view_of(tx->st, svc, &w);
    }
    rc = rc < 0 ? rc : update_reason(tx->g, svc, &w, d);
    free(w.v);
    return rc;
}

static int tick_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    int64_t now = *(int64_t *)arg;
    for (int i = 0; i < tx->st->njobs; i++) {
        ctl_job *svc = tx->st->jobs[i];
        if (!ctl_job_is_service(svc) || svc->state != CTL_RUNNING) {
            continue;
        }
        tick_arg a = {svc->id, now};
        gp_diag sd;
        gp_diag_clear(&sd);
        if (ctl_txn_step(tx, tick_step, &a, &sd) < 0) {
            GP_LOG(GP_LOG_WARN, "service", "job=%lld: %s", (long long)a.svc_id, sd.msg);
        }
    }
    (void)d;
    return 0;
}

int ctl_services_tick(gpupoold *g, int64_t now, gp_diag *d)
{
    bool any = false;
    for (int i = 0; i < g->st.njobs && !any; i++) {
        any = ctl_job_is_service(g->st.jobs[i]) && g->st.jobs[i]->state == CTL_RUNNING;
    }
    if (!any) {
        return 0;
    }
    return ctl_txn_run(g, "services", CTL_TXN_MEMORY, tick_body, &now, NULL, d);
}
