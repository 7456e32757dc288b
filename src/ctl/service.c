/*
 * Services (service.h): creation, update, and the replica jobs (made, stopped, listed). The
 * reconciliation each cycle is service_tick.c. A service's replica jobs are found by a scan of
 * the jobs (a pool has few services: one pass per service).
 */
#include "ctl/service.h"

#include "base/log.h"
#include "ctl/changes.h"
#include "ctl/service_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ctl_service_replica_ready(const ctl_job *r)
{
    return r->owner && r->state == CTL_RUNNING && r->replicas &&
           strcmp(r->replicas[0].state, "Running") == 0 && r->replicas[0].ready;
}

ctl_job *ctl_service_pick(ctl_state *st, const ctl_job *svc, unsigned turn)
{
    unsigned n = 0;
    for (int i = 0; i < st->njobs; i++) {
        n += st->jobs[i]->owner == svc->id && ctl_service_replica_ready(st->jobs[i]);
    }
    unsigned k = n ? turn % n : 0;
    for (int i = 0; n && i < st->njobs; i++) {
        ctl_job *r = st->jobs[i];
        if (r->owner == svc->id && ctl_service_replica_ready(r) && k-- == 0) {
            return r;
        }
    }
    return NULL;
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

int ctl__service_create_replica(gpupoold *g, ctl_job *svc, gp_diag *d)
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
    if (!text) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    ctl_job proto = {.tenant_id = svc->tenant_id, .owner = svc->id, .revision = svc->revision};
    snprintf(proto.name, sizeof(proto.name), "%.63s", name);
    ctl_job svc_next = *svc;
    svc_next.svc_next++;
    char msg[160];
    snprintf(msg, sizeof(msg), "%s (revision %d)", name, svc->revision);
    int rc = ctl_job_make_child(g, &proto, text, &svc_next, "created by its service",
                                "ReplicaCreated", msg, d);
    free(text);
    if (rc < 0) {
        return rc;
    }
    svc->svc_next++;
    return 0;
}

int ctl__service_stop_replica(gpupoold *g, const ctl_job *svc, ctl_job *r, const char *type,
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
