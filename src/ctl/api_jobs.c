/*
 * /v1/jobs: submit (idempotent with an Idempotency-Key), list with filters and pagination, get,
 * cancel, requeue and the event history.
 *
 * A submit is checked twice: its spec outside the committer (syntax, fields, values), then
 * against the state inside it (tenant, queue, priority class, volumes, whether the registered
 * nodes and the limits could ever run it, pending limit), where the insert and the check cannot
 * be separated by another submit. A user's submit must name a priority class and a queue its
 * tenant is granted (objects.c), else 403 naming both; admins and operators are not bound by
 * grants (they are the ones who make them). A privileged job is refused (403) for a tenant an
 * admin has not allowed (allow_privileged), whoever submits it; withdrawing the permission
 * refuses new submissions and service updates only: jobs already stored keep running.
 */
#include "ctl/api.h"
#include "ctl/array.h"
#include "ctl/doc.h"
#include "ctl/secrets.h"
#include "ctl/service.h"
#include "gpupool/feasible.h"
#include "gpupool/meter.h"
#include "gpupool/selector.h"

#include <stdlib.h>
#include <string.h>

/* ---- documents ---- */

/* The name of the MIG profile with these slices on geometry g ("?" when none has them). */
static const char *mig_name(gp_mig_geometry g, int compute, int memory)
{
    int n;
    const gp_mig_profile *p = gp_mig_profiles(g, &n);
    for (int i = 0; i < n; i++) {
        if (p[i].compute_slices == compute && p[i].memory_slices == memory) {
            return p[i].name;
        }
    }
    return "?";
}

static json_t *gpu_share_doc(ctl_state *st, const ctl_node *n, const gp_gpu_share *s)
{
    const ctl_gpu_info *g = &n->gpus[s->gpu];
    json_t *doc = json_pack("{s:i, s:s, s:s, s:i, s:I}", "index", s->gpu, "uuid", g->uuid, "model",
                            g->model, "milli", s->milli, "memory_mib", (json_int_t)s->mem_mib);
    if (s->mig_start >= 0) {
        const gp_gpu *gpu = gp_cluster_gpu(st->cluster, n->cl, s->gpu);
        const gp_gpu_model *m = gp_cluster_model_info(st->cluster, gpu->model);
        json_object_set_new(
            doc, "mig_profile",
            json_string(mig_name(m->mig, s->mig_compute_slices, s->mig_memory_slices)));
        json_object_set_new(doc, "mig_start", json_integer(s->mig_start));
    }
    return doc;
}

static json_t *placement_doc(ctl_state *st, const ctl_job *j)
{
    json_t *list = json_array();
    for (int r = 0; j->replicas && r < j->spec.replicas; r++) {
        const ctl_replica *rep = &j->replicas[r];
        const ctl_node *n = ctl_node_by_id(st, rep->node_id);
        json_t *gpus = json_array();
        for (int s = 0; n && s < rep->a.nshares; s++) {
            json_array_append_new(gpus, gpu_share_doc(st, n, &rep->a.shares[s]));
        }
        json_array_append_new(list,
                              json_pack("{s:i, s:s, s:I, s:s, s:I, s:I, s:o}", "replica", r, "node",
                                        n ? n->name : "?", "epoch", (json_int_t)rep->epoch, "state",
                                        rep->state[0] ? rep->state : "Assigned", "cpu_milli",
                                        (json_int_t)rep->a.cpu_milli, "memory_mib",
                                        (json_int_t)rep->a.memory_mib, "gpus", gpus));
    }
    return list;
}

/* A service's "service": {revision, replicas, ready, rolling_update}; a replica job's
 * "service": {id, name, revision, ready} (service.h). */
static void service_fields(ctl_state *st, const ctl_job *j, json_t *doc)
{
    if (ctl_job_is_service(j)) {
        ctl_job **v;
        int n = ctl_service_replicas(st, j, &v), ready = 0;
        bool rolling = false;
        for (int i = 0; i < n; i++) {
            ready += ctl_service_replica_ready(v[i]);
            rolling |= v[i]->revision != j->revision;
        }
        free(v);
        json_object_set_new(doc, "service",
                            json_pack("{s:i, s:i, s:i, s:b}", "revision", j->revision, "replicas",
                                      j->svc_replicas, "ready", ready, "rolling_update", rolling));
    } else if (j->owner) {
        const ctl_job *svc = ctl_job_by_id(st, j->owner);
        json_object_set_new(doc, "service",
                            json_pack("{s:I, s:s, s:i, s:b}", "id", (json_int_t)j->owner, "name",
                                      svc ? svc->name : "", "revision", j->revision, "ready",
                                      ctl_service_replica_ready(j)));
    }
}

/* An array's "array": {indices, max_running, pending, running, succeeded, failed}; a child's
 * "array": {id, name, index} (array.h). */
static void array_fields(ctl_state *st, const ctl_job *j, json_t *doc)
{
    if (ctl_job_is_array(j)) {
        ctl_array_counts c;
        ctl_array_count(st, j, &c);
        json_object_set_new(doc, "array",
                            json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "indices", c.total,
                                      "max_running", j->spec.array.max_running, "pending",
                                      c.pending + c.total - c.made, "running", c.running,
                                      "succeeded", c.succeeded, "failed", c.failed, "cancelled",
                                      c.cancelled));
    } else if (j->in_array) {
        const ctl_job *arr = ctl_job_by_id(st, j->owner);
        json_object_set_new(doc, "array",
                            json_pack("{s:I, s:s, s:i}", "id", (json_int_t)j->owner, "name",
                                      arr ? arr->name : "", "index", j->array_index));
    }
}

json_t *api_job_doc(ctl_state *st, const ctl_job *j)
{
    const ctl_tenant *t = ctl_tenant_by_id(st, j->tenant_id);
    const ctl_pclass *pc = ctl_pclass_by_name(st, j->spec.priority_class);
    json_t *spec = ctl_job_spec_doc(st, j, false); /* a secret value: its name only */
    json_t *doc = json_pack(
        "{s:I, s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:i, s:I, s:I, s:I, s:i, s:i, s:o, s:o}", "id",
        (json_int_t)j->id, "name", j->name, "tenant", t ? t->lim.name : "?", "queue", j->spec.queue,
        "priority_class", j->spec.priority_class, "priority", pc ? pc->value : 0, "state",
        ctl_job_state_name(j->state), "reason", j->reason, "replicas", j->spec.replicas,
        "submit_time_ms", (json_int_t)j->submit_ms, "start_time_ms", (json_int_t)j->start_ms,
        "end_time_ms", (json_int_t)j->end_ms, "restarts", j->restarts, "exit_code", j->exit_code,
        "placement", placement_doc(st, j), "spec", spec ? spec : json_object());
    if (doc && !j->in_array) {
        service_fields(st, j, doc);
    }
    if (doc) {
        array_fields(st, j, doc);
    }
    return doc;
}

/* ---- submit ---- */

typedef struct submit_arg {
    json_t *doc; /* the spec as submitted, tenant filled in */
    gp_jobspec spec;
    char key[128];
    bool bound;      /* by the tenant's grants: a user's submit */
    bool update;     /* a service: a new spec for the active one of that name (else created) */
    bool must_exist; /* PUT /v1/services/{name}: only an update (404 without one) */
    bool dry_run;    /* ?dry_run=true: every check, nothing stored */
    bool minimal;    /* Prefer: return=minimal: the answer identifies the job only */
} submit_arg;

/* Frees what a holds, and a itself when heap. */
static void submit_arg_fini(submit_arg *a, bool heap)
{
    gp_jobspec_fini(&a->spec);
    json_decref(a->doc);
    if (heap) {
        free(a);
    }
}

static void submit_arg_free(void *arg)
{
    submit_arg_fini(arg, true);
}

/* The answer to a submit: the job's document; with Prefer: return=minimal (RFC 7240) only what
 * identifies the job and its state, which costs the committer and the client next to nothing. */
static json_t *submit_answer(ctl_state *st, const ctl_job *j, bool minimal)
{
    return minimal ? json_pack("{s:I, s:s, s:s}", "id", (json_int_t)j->id, "name", j->name, "state",
                               ctl_job_state_name(j->state))
                   : api_job_doc(st, j);
}

/* Judges j against every node of the pool; gp_feasible_pool stops at the first nodes that can
 * hold it, and the node index keeps the pool's nodes and GPU models (ctl_pool_view), so a submit
 * that fits costs little whatever the pool's size. */
static int feasible_on_all(ctl_state *st, const gp_feasible_job *j, gp_diag *d)
{
    const int *pool;
    uint64_t models;
    int n = ctl_pool_view(st, &pool, &models);
    if (n >= 0) {
        return gp_feasible_pool_models(st->cluster, pool, n, models, j, d);
    }
    int *nodes = malloc(sizeof(int) * (size_t)(st->nnodes + 1));
    if (!nodes) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    n = ctl_pool_nodes(st, nodes);
    int rc = gp_feasible_pool(st->cluster, nodes, n, j, d);
    free(nodes);
    return rc;
}

/* Whether the job could ever run (gpupool/feasible.h): on the registered nodes, whatever their
 * state, and under its tenant's quotas and its queue's limits. One that could not is refused
 * naming the field, unless it allows waiting (allow_unschedulable). */
static int check_feasible(ctl_state *st, const ctl_tenant *t, const ctl_queue *q,
                          const gp_jobspec *s, gp_diag *d)
{
    gp_request req;
    gp_jobspec_request(s, st->cluster, &req);
    /* A service's replicas are jobs of one replica each: each alone must be able to run. */
    gp_feasible_job job = {.req = &req,
                           .replicas = s->job_kind == GP_JOB_SERVICE ? 1 : s->replicas,
                           .topology = s->topology,
                           .preemptible = s->preemptible,
                           .models = s->gpu_models,
                           .nmodels = s->ngpu_models};
    gp_sched_tenant lim;
    ctl_tenant_limits(st, t, &lim);
    /* The limits first, as the scheduler judges them first. */
    int rc = gp_feasible_limits(st->cluster, &job, &lim, &q->q, d);
    if (rc == 0) {
        rc = feasible_on_all(st, &job, d);
    }
    if (rc == GP_EINVAL && s->allow_unschedulable) {
        gp_diag_clear(d); /* accepted: it waits, saying why (the scheduler's reason) */
        return 0;
    }
    return rc;
}

/* An array's size within jobs.max_array_size, and its children's names (NAME-INDEX) within
 * the longest job name. */
static int check_array(const gp_ctl_config *cfg, const gp_jobspec *s, gp_diag *d)
{
    if (s->array.nitems == 0) {
        return 0;
    }
    int64_t n = gp_array_count(&s->array);
    if (n > cfg->jobs.max_array_size) {
        return gp_diag_set(d, GP_EINVAL, "array: %lld indices, more than the %d allowed",
                           (long long)n, cfg->jobs.max_array_size);
    }
    char last[GP_JOB_NAME_MAX + 16];
    snprintf(last, sizeof(last), "%s-%d", s->name, gp_array_at(&s->array, n - 1));
    if (strlen(last) >= GP_JOB_NAME_MAX) {
        return gp_diag_set(d, GP_EINVAL, "name: too long for an array's children (%s)", last);
    }
    return 0;
}

static int check_submit(ctl_state *st, const gp_ctl_config *cfg, submit_arg *a, ctl_tenant **t,
                        gp_diag *d)
{
    *t = ctl_tenant_by_name(st, a->spec.tenant);
    if (!*t) {
        return gp_diag_set(d, GP_ENOENT, "tenant %s: not found", a->spec.tenant);
    }
    if (a->spec.privileged && !(*t)->allow_privileged) { /* whoever submits: admins too */
        return gp_diag_set(d, GP_EPERM,
                           "privileged: tenant %s may not run privileged jobs (an admin allows "
                           "it: gpupool tenant set %s --allow-privileged)",
                           (*t)->lim.name, (*t)->lim.name);
    }
    const ctl_queue *queue = ctl_queue_by_name(st, a->spec.queue);
    if (!queue) {
        return gp_diag_set(d, GP_EINVAL, "queue: %s does not exist", a->spec.queue);
    }
    if (!ctl_pclass_by_name(st, a->spec.priority_class)) {
        return gp_diag_set(d, GP_EINVAL, "priority_class: %s does not exist",
                           a->spec.priority_class);
    }
    if (a->bound && !ctl_tenant_granted(*t, CTL_GRANT_CLASS, a->spec.priority_class,
                                        cfg->jobs.default_priority_class)) {
        return gp_diag_set(d, GP_EPERM, "priority class %s: not granted to tenant %s",
                           a->spec.priority_class, (*t)->lim.name);
    }
    if (a->bound &&
        !ctl_tenant_granted(*t, CTL_GRANT_QUEUE, a->spec.queue, cfg->jobs.default_queue)) {
        return gp_diag_set(d, GP_EPERM, "queue %s: not granted to tenant %s", a->spec.queue,
                           (*t)->lim.name);
    }
    if (a->spec.job_kind == GP_JOB_SERVICE && strlen(a->spec.name) > CTL_SERVICE_NAME_MAX) {
        return gp_diag_set(d, GP_EINVAL, "name: a service's name is at most %d characters",
                           CTL_SERVICE_NAME_MAX);
    }
    int rc = check_array(cfg, &a->spec, d);
    rc = rc < 0 ? rc : ctl_volumes_check(st, &a->spec, d);
    rc = rc < 0 ? rc : gp_jobspec_cap_check(&a->spec, d);
    if (rc < 0) {
        return rc;
    }
    rc = check_feasible(st, *t, queue, &a->spec, d);
    if (rc < 0) {
        return rc;
    }
    const gp_sched_tenant *q = &(*t)->lim;
    int pending = 0;
    unsigned waiting = 1u << CTL_PENDING; /* the Pending jobs only, newest first */
    for (int i = ctl_jobs_next(st, waiting, st->njobs - 1, -1);
         i >= 0 && st->npending >= cfg->jobs.max_pending_per_tenant;
         i = ctl_jobs_next(st, waiting, i - 1, -1)) {
        pending += st->jobs[i]->tenant_id == (*t)->id;
        if (pending >= cfg->jobs.max_pending_per_tenant) {
            return gp_diag_set(d, GP_ENOSPC,
                               "tenant %s has %d pending jobs, the most allowed; wait or cancel "
                               "some",
                               q->name, pending);
        }
    }
    return 0;
}

/* A new spec for the active service named in a (service.h): 200 with the service. */
static int update_run(gpupoold *g, ctl_op *op, ctl_job *svc, gp_diag *d)
{
    submit_arg *a = op->arg;
    ctl_tenant *t = NULL;
    if (!ctl_job_is_service(svc) || a->spec.job_kind != GP_JOB_SERVICE) {
        return gp_diag_set(d, GP_ESTATE,
                           "kind: job %s is active and not a service: only a service's spec "
                           "can be updated",
                           svc->name);
    }
    bool changed = false;
    int rc = check_submit(&g->st, g->cfg, a, &t, d);
    rc = rc < 0 ? rc : ctl_secrets_seal(g->st.secret_key, t->id, a->doc, &a->spec, d);
    rc = rc < 0 ? rc : ctl_service_update(g, svc, &a->spec, &changed, d);
    if (rc < 0) {
        return rc;
    }
    op->kick = changed;
    op->status = 200;
    op->result = submit_answer(&g->st, svc, a->minimal);
    return 0;
}

/* The active job of tenant t named name, or NULL. */
static ctl_job *active_named(ctl_state *st, const ctl_tenant *t, const char *name)
{
    for (int i = st->njobs - 1; t && i >= 0; i--) {
        ctl_job *j = st->jobs[i];
        if (j->tenant_id == t->id && !ctl_job_state_final(j->state) && strcmp(j->name, name) == 0) {
            return j;
        }
    }
    return NULL;
}

/* A retry answers with the job its key made, whatever changed since (quota, queues): 1 when
 * answered, 0 when the key made none (or there is none), or an error. */
static int retry_answer(gpupoold *g, ctl_op *op, const ctl_tenant *t, gp_diag *d)
{
    submit_arg *a = op->arg;
    int64_t existing = 0;
    int rc = t && a->key[0] ? gp_store_job_find_key(g->store, t->id, a->key, &existing, d) : 0;
    if (rc == 0 && existing > 0) {
        ctl_job *job = ctl_job_by_id(&g->st, existing);
        if (!job) {
            return gp_diag_set(d, GP_EINTERNAL, "job %lld: stored but not in memory",
                               (long long)existing);
        }
        op->status = 200;
        op->result = submit_answer(&g->st, job, a->minimal);
        return 1;
    }
    if (rc == GP_ENOENT) {
        gp_diag_clear(d);
        return 0;
    }
    return rc;
}

/* A dry run: the checks of a submission (or an update: the active job of that name must be a
 * service), and the spec as it would be stored. */
static int dry_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    submit_arg *a = op->arg;
    ctl_tenant *t = ctl_tenant_by_name(&g->st, a->spec.tenant);
    ctl_job *active = a->update ? active_named(&g->st, t, a->spec.name) : NULL;
    if (active && (!ctl_job_is_service(active) || a->spec.job_kind != GP_JOB_SERVICE)) {
        return gp_diag_set(d, GP_ESTATE,
                           "kind: job %s is active and not a service: only a service's spec "
                           "can be updated",
                           active->name);
    }
    if (!active && a->must_exist) {
        return gp_diag_set(d, GP_ENOENT, "service %s: not found", a->spec.name);
    }
    int rc = check_submit(&g->st, g->cfg, a, &t, d);
    if (rc < 0) {
        return rc;
    }
    op->status = 200;
    op->result = json_pack("{s:b, s:o}", "dry_run", 1, "spec", gp_jobspec_to_json(&a->spec));
    return op->result ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

static int submit_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    submit_arg *a = op->arg;
    ctl_state *st = &g->st;
    if (a->dry_run) {
        return dry_run(g, op, d);
    }
    ctl_tenant *t = ctl_tenant_by_name(st, a->spec.tenant);
    ctl_job *active = a->update ? active_named(st, t, a->spec.name) : NULL;
    if (active) {
        return update_run(g, op, active, d);
    }
    if (a->must_exist) {
        return gp_diag_set(d, GP_ENOENT, "service %s: not found", a->spec.name);
    }
    int rc = retry_answer(g, op, t, d);
    if (rc != 0) {
        return rc < 0 ? rc : 0;
    }
    rc = check_submit(st, g->cfg, a, &t, d);
    rc = rc < 0 ? rc : ctl_secrets_seal(st->secret_key, t->id, a->doc, &a->spec, d);
    int64_t *after = NULL;
    int nafter = 0;
    rc = rc < 0 ? rc : ctl_deps_resolve(st, &a->spec, t->id, &after, &nafter, d);
    if (rc < 0) {
        return rc;
    }
    char *text = json_dumps(a->doc, JSON_COMPACT | JSON_SORT_KEYS);
    ctl_job *j = calloc(1, sizeof(*j));
    if (!text || !j) {
        free(text);
        free(j);
        free(after);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    gp_job_rec rec = {.tenant_id = t->id, .submit_time_ms = ctl_now_ms()};
    snprintf(rec.name, sizeof(rec.name), "%s", a->spec.name);
    snprintf(rec.state, sizeof(rec.state), "Pending");
    snprintf(rec.idempotency_key, sizeof(rec.idempotency_key), "%s", a->key);
    int created = 0;
    rc = gp_store_job_insert(g->store, &rec, text, "{\"reason\":\"" CTL_REASON_NEW "\"}", &created,
                             d);
    if (rc == 0 && created) {
        rc = ctl_job_event(g, rec.id, "Submitted", "submitted", d);
    }
    if (rc == 0 && created) {
        *j = (ctl_job){.id = rec.id,
                       .tenant_id = t->id,
                       .state = CTL_PENDING,
                       .spec = a->spec,
                       .submit_ms = rec.submit_time_ms,
                       .after_ids = after,
                       .nafter = nafter};
        after = NULL; /* the job's */
        snprintf(j->name, sizeof(j->name), "%s", rec.name);
        snprintf(j->reason, sizeof(j->reason), "%s", CTL_REASON_NEW);
        snprintf(j->idempotency_key, sizeof(j->idempotency_key), "%s", a->key);
        rc = ctl_state_add_job(st, j);
        if (rc == 0) {
            memset(&a->spec, 0, sizeof(a->spec)); /* now the job's */
            op->dirty = true;                     /* in memory: a failure below reloads it */
            rc = j->spec.job_kind == GP_JOB_SERVICE ? ctl_service_create(g, j, d) : 0;
            rc = rc == 0 && j->nafter > 0 ? ctl_job_store(g, j, CTL_PENDING, d) : rc;
            j = NULL;
            op->status = 201;
            op->kick = true;
        } else {
            gp_diag_set(d, rc, "out of memory");
        }
    } else if (rc == 0) {
        op->status = 200; /* a retry: the job the key made */
    }
    free(after);
    free(text);
    if (j) {
        free(j->after_ids); /* set only when it was not added */
        free(j);
    }
    if (rc == 0) {
        ctl_job *job = ctl_job_by_id(st, rec.id);
        op->result = job ? submit_answer(st, job, a->minimal) : NULL;
        if (!job) {
            rc = gp_diag_set(d, GP_EINTERNAL, "job %lld: stored but not in memory",
                             (long long)rec.id);
        }
    }
    return rc;
}

/* Fills tenant, queue and priority class into doc, the way the job will be stored. */
static int resolve_defaults(api_req *rq, json_t *doc)
{
    const gp_ctl_config *cfg = rq->g->cfg;
    json_t *tenant = json_object_get(doc, "tenant");
    if (rq->who.role == CTL_ROLE_USER) {
        const char *name = rq->who.tenant;
        if (json_is_string(tenant) && strcmp(json_string_value(tenant), name) != 0) {
            api_error(rq, GP_ENOENT, "tenant %s: not found", json_string_value(tenant));
            return GP_ENOENT;
        }
        json_object_set_new(doc, "tenant", json_string(name));
    } else if (!tenant || json_is_null(tenant)) {
        api_error(rq, GP_EINVAL, "tenant: required when submitting as %s",
                  ctl_role_name(rq->who.role));
        return GP_EINVAL;
    }
    if (!json_object_get(doc, "queue")) {
        json_object_set_new(doc, "queue", json_string(cfg->jobs.default_queue));
    }
    if (!json_object_get(doc, "priority_class")) {
        json_object_set_new(doc, "priority_class", json_string(cfg->jobs.default_priority_class));
    }
    return 0;
}

/* A notebook that names no command runs the operator's (notebooks.command, through /bin/sh -c)
 * in the operator's notebook image when it names none either (notebooks.image); both are stored
 * in its spec and document, so the job says what it runs. */
static int resolve_notebook(const gp_ctl_config *cfg, submit_arg *a, gp_diag *d)
{
    if (a->spec.job_kind != GP_JOB_NOTEBOOK || a->spec.command) {
        return 0;
    }
    if (!a->spec.image && !cfg->notebooks.image[0]) {
        return gp_diag_set(d, GP_EINVAL,
                           "image: required for a notebook: this pool has no default notebook "
                           "image (notebooks.image)");
    }
    const char *image = a->spec.image ? a->spec.image : cfg->notebooks.image;
    json_t *cmd = json_pack("[s, s, s]", "/bin/sh", "-c", cfg->notebooks.command);
    int rc = cmd ? json_object_set(a->doc, "command", cmd) : -1;
    rc |= json_object_set_new(a->doc, "image", json_string(image));
    if (rc == 0 && !a->spec.image) { /* the default pull policy for this image */
        json_object_del(a->doc, "image_pull_policy");
    }
    json_decref(cmd);
    if (rc != 0) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    /* reparse: the spec now carries the image, its pull policy and the command */
    char *text = json_dumps(a->doc, JSON_COMPACT);
    gp_jobspec spec;
    rc = text ? gp_jobspec_parse_json(text, strlen(text), &spec, d)
              : gp_diag_set(d, GP_ENOMEM, "out of memory");
    free(text);
    if (rc == 0) {
        gp_jobspec_fini(&a->spec);
        a->spec = spec;
    }
    return rc;
}

/* A job from an image stores the image in its normal form with the pull policy it runs under
 * (the default resolved), so the job says what it runs; without an image it runs over the
 * host's root filesystem, unless the operator forbids that (jobs.allow_host_rootfs). */
static int resolve_image(const gp_ctl_config *cfg, submit_arg *a, gp_diag *d)
{
    int rc = resolve_notebook(cfg, a, d);
    if (rc < 0) {
        return rc;
    }
    if (!a->spec.image) {
        return cfg->jobs.allow_host_rootfs
                   ? 0
                   : gp_diag_set(d, GP_EINVAL,
                                 "image: required: this pool runs jobs only from "
                                 "images");
    }
    rc = json_object_set_new(a->doc, "image", json_string(a->spec.image));
    rc |= json_object_set_new(a->doc, "image_pull_policy",
                              json_string(gp_pull_policy_name(a->spec.image_pull_policy)));
    return rc == 0 ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

/* A fraction that names no compute_policy gets the operator's (jobs.compute_policy), in its
 * spec and in the document stored, so the job says which policy it runs under. */
static int resolve_compute_policy(const gp_ctl_config *cfg, submit_arg *a)
{
    if (a->spec.kind != GP_REQ_FRACTION || a->spec.compute_policy != GP_COMPUTE_DEFAULT) {
        return 0;
    }
    a->spec.compute_policy = cfg->jobs.compute_policy;
    json_t *res = json_object_get(a->doc, "resources");
    const char *name = gp_compute_policy_name(a->spec.compute_policy);
    /* a fraction has resources; a failure here is out of memory */
    return json_object_set_new(res, "compute_policy", json_string(name)) == 0 ? 0 : GP_ENOMEM;
}

/* The name a PUT /v1/services/{name} gives the spec: the path's (a body naming another is
 * refused). */
static int put_name(api_req *rq, json_t *doc, const char *name)
{
    json_t *n = json_object_get(doc, "name");
    if (n && (!json_is_string(n) || strcmp(json_string_value(n), name) != 0)) {
        api_error(rq, GP_EINVAL, "name: must be %s (the service's name in the path)", name);
        return GP_EINVAL;
    }
    if (!json_object_get(doc, "kind")) {
        json_object_set_new(doc, "kind", json_string("service"));
    }
    return json_object_set_new(doc, "name", json_string(name)) == 0 ? 0 : GP_ENOMEM;
}

/* A submission; put_service: the name of PUT /v1/services/{name} (an update, or the service
 * created), NULL for POST /v1/jobs. */
static void submit(api_req *rq, const char *put_service)
{
    submit_arg a;
    memset(&a, 0, sizeof(a));
    const char *key = gp_http_request_header(rq->http, "Idempotency-Key");
    if (key && (strlen(key) == 0 || strlen(key) >= sizeof(a.key))) {
        api_error(rq, GP_EINVAL, "Idempotency-Key: must be 1 to %zu characters", sizeof(a.key) - 1);
        return;
    }
    snprintf(a.key, sizeof(a.key), "%s", key ? key : "");
    a.bound = rq->who.role == CTL_ROLE_USER;
    const char *update = gp_http_request_query(rq->http, "update");
    if (update && strcmp(update, "true") != 0 && strcmp(update, "false") != 0) {
        api_error(rq, GP_EINVAL, "update: must be true or false");
        return;
    }
    a.update = (update && strcmp(update, "true") == 0) || put_service;
    const char *dry = gp_http_request_query(rq->http, "dry_run");
    if (dry && strcmp(dry, "true") != 0 && strcmp(dry, "false") != 0) {
        api_error(rq, GP_EINVAL, "dry_run: must be true or false");
        return;
    }
    a.dry_run = dry && strcmp(dry, "true") == 0;
    a.must_exist = put_service != NULL;
    a.minimal = gp_http_prefers(gp_http_request_header(rq->http, "Prefer"), "return", "minimal");
    a.doc = api_body(rq);
    if (a.doc && put_service && put_name(rq, a.doc, put_service) < 0) {
        json_decref(a.doc);
        return;
    }
    if (!a.doc || resolve_defaults(rq, a.doc) < 0) {
        json_decref(a.doc);
        return;
    }
    char *text = json_dumps(a.doc, JSON_COMPACT);
    gp_diag d;
    gp_diag_clear(&d);
    int rc = text ? gp_jobspec_parse_json(text, strlen(text), &a.spec, &d)
                  : gp_diag_set(&d, GP_ENOMEM, "out of memory");
    free(text);
    if (rc == 0 && (rc = ctl_secrets_check_submitted(&a.spec, &d)) < 0) {
        gp_jobspec_fini(&a.spec);
    }
    if (rc == 0 && resolve_compute_policy(rq->g->cfg, &a) < 0) {
        rc = gp_diag_set(&d, GP_ENOMEM, "out of memory");
        gp_jobspec_fini(&a.spec);
    }
    if (rc == 0 && (rc = resolve_image(rq->g->cfg, &a, &d)) < 0) {
        gp_jobspec_fini(&a.spec);
    }
    if (rc < 0) {
        api_diag(rq, &d);
        json_decref(a.doc);
        return;
    }
    submit_arg *ap = malloc(sizeof(*ap));
    if (!ap) {
        submit_arg_fini(&a, false);
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    *ap = a;
    ctl_op op = {.run = submit_run};
    api_run_async(rq, &op, ap, submit_arg_free);
}

void api_jobs_submit(api_req *rq)
{
    submit(rq, NULL);
}

static ctl_job *find_scoped(api_req *rq, const char *ref);

void api_services_put(api_req *rq)
{
    ctl_read_lock(rq->g);
    ctl_job *svc = find_scoped(rq, rq->params[0]);
    bool found = svc && ctl_job_is_service(svc) && !ctl_job_state_final(svc->state);
    char name[GP_JOB_NAME_MAX];
    snprintf(name, sizeof(name), "%s", found ? svc->name : "");
    ctl_read_unlock(rq->g);
    if (!found) { /* before the body is read: another tenant's service does not exist */
        api_error(rq, GP_ENOENT, "service %s: not found", rq->params[0]);
        return;
    }
    submit(rq, name);
}

/* ---- reading ---- */

static ctl_job *find_scoped(api_req *rq, const char *ref)
{
    return ctl_job_find(&rq->g->st, ref, api_scope(rq));
}

void api_jobs_get(api_req *rq)
{
    ctl_read_lock(rq->g);
    ctl_job *j = find_scoped(rq, rq->params[0]);
    json_t *doc = j ? api_job_doc(&rq->g->st, j) : NULL;
    ctl_read_unlock(rq->g);
    if (!doc) {
        api_error(rq, GP_ENOENT, "job %s: not found", rq->params[0]);
        return;
    }
    api_reply(rq, 200, doc);
}

typedef struct list_filter {
    int64_t tenant_id; /* 0 = any */
    const char *queue, *name;
    unsigned states; /* bit per state; 0 = any */
    int64_t after;   /* the cursor: ids above it (below it, newest first; 0 = from the newest) */
    int limit;
    bool desc;        /* order=desc: newest first */
    gp_selector *sel; /* selector=: on the job's labels; owned; NULL = any */
} list_filter;

int api_page(api_req *rq, const char *what, int *limit, int64_t *after)
{
    const char *v;
    if ((v = gp_http_request_query(rq->http, "limit"))) {
        char *end;
        long n = strtol(v, &end, 10);
        if (!*v || *end || n < 1 || n > 1000) {
            api_error(rq, GP_EINVAL, "limit: must be between 1 and 1000");
            return GP_EINVAL;
        }
        *limit = (int)n;
    }
    if ((v = gp_http_request_query(rq->http, "after"))) {
        char *end;
        long long n = strtoll(v, &end, 10);
        if (!*v || *end || n < 0) {
            api_error(rq, GP_EINVAL, "after: must be %s", what);
            return GP_EINVAL;
        }
        *after = n;
    }
    return 0;
}

int api_time_param(api_req *rq, const char *key, int64_t *ms)
{
    const char *v = gp_http_request_query(rq->http, key);
    if (!v) {
        return 0;
    }
    char *end;
    long long n = strtoll(v, &end, 10);
    if (v[0] >= '0' && v[0] <= '9' && !*end && n >= 0) {
        *ms = n;
        return 0;
    }
    if (gp_meter_parse_time(v, ms) == 0) {
        return 0;
    }
    api_error(rq, GP_EINVAL,
              "%s: must be a date (2024-05-01), an RFC 3339 time (2024-05-01T12:00:00Z) or "
              "milliseconds since the epoch",
              key);
    return GP_EINVAL;
}

static int read_filter(api_req *rq, list_filter *f)
{
    memset(f, 0, sizeof(*f));
    f->limit = 100;
    f->tenant_id = api_scope(rq);
    if (api_page(rq, "a job id", &f->limit, &f->after) < 0) {
        return GP_EINVAL;
    }
    const char *v;
    if ((v = gp_http_request_query(rq->http, "state"))) {
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", v);
        for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            ctl_job_state s;
            if (ctl_job_state_parse(tok, &s) < 0) {
                api_error(rq, GP_EINVAL,
                          "state: %s is not one of Pending, Scheduled, Running, Succeeded, "
                          "Failed, Cancelled, Preempted, Suspended",
                          tok);
                return GP_EINVAL;
            }
            f->states |= 1u << s;
        }
    }
    if ((v = gp_http_request_query(rq->http, "order"))) {
        if (strcmp(v, "desc") != 0 && strcmp(v, "asc") != 0) {
            api_error(rq, GP_EINVAL, "order: must be asc (oldest first) or desc (newest first)");
            return GP_EINVAL;
        }
        f->desc = v[0] == 'd';
    }
    f->queue = gp_http_request_query(rq->http, "queue");
    f->name = gp_http_request_query(rq->http, "name");
    if ((v = gp_http_request_query(rq->http, "tenant"))) {
        ctl_tenant *t = ctl_tenant_by_name(&rq->g->st, v);
        if (!t || (f->tenant_id && t->id != f->tenant_id)) {
            api_error(rq, GP_ENOENT, "tenant %s: not found", v);
            return GP_ENOENT;
        }
        f->tenant_id = t->id;
    }
    if ((v = gp_http_request_query(rq->http, "selector"))) {
        gp_diag d;
        f->sel = malloc(sizeof(*f->sel));
        int rc =
            f->sel ? gp_selector_parse(v, f->sel, &d) : gp_diag_set(&d, GP_ENOMEM, "out of memory");
        if (rc < 0) {
            free(f->sel);
            f->sel = NULL;
            api_diag(rq, &d);
            return rc;
        }
    }
    return 0;
}

static bool passes(const ctl_job *j, const list_filter *f)
{
    return (!f->after || (f->desc ? j->id < f->after : j->id > f->after)) &&
           (!f->tenant_id || j->tenant_id == f->tenant_id) &&
           (!f->states || (f->states & (1u << j->state))) &&
           (!f->queue || strcmp(j->spec.queue, f->queue) == 0) &&
           (!f->name || strcmp(j->name, f->name) == 0) &&
           (!f->sel || gp_selector_matches(f->sel, j->spec.labels, j->spec.nlabels));
}

void api_jobs_list(api_req *rq)
{
    list_filter f;
    ctl_read_lock(rq->g);
    if (read_filter(rq, &f) < 0) {
        ctl_read_unlock(rq->g);
        return;
    }
    ctl_state *st = &rq->g->st;
    json_t *items = json_array();
    int64_t last = 0;
    bool more = false;
    /* Jobs are sorted by id: start past the cursor. */
    int lo = 0, hi = st->njobs;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (st->jobs[mid]->id <= f.after) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    /* Newest first: from the last job below the cursor (all of them without one) down. */
    int first = f.desc ? (f.after ? lo - 1 : st->njobs - 1) : lo, step = f.desc ? -1 : 1;
    if (f.desc && f.after && lo > 0 && st->jobs[lo - 1]->id == f.after) {
        first = lo - 2;
    }
    /* With states, only the jobs in them are visited (the jobs by state, in the same order). */
    for (int i = ctl_jobs_next(st, f.states, first, step); i >= 0;
         i = ctl_jobs_next(st, f.states, i + step, step)) {
        if (!passes(st->jobs[i], &f)) {
            continue;
        }
        if ((int)json_array_size(items) == f.limit) {
            more = true;
            break;
        }
        json_array_append_new(items, api_job_doc(st, st->jobs[i]));
        last = st->jobs[i]->id;
    }
    ctl_read_unlock(rq->g);
    free(f.sel);
    api_reply(rq, 200,
              json_pack("{s:o, s:o}", "items", items, "next",
                        more ? json_sprintf("%lld", (long long)last) : json_null()));
}

typedef struct events_ctx {
    json_t *list;
} events_ctx;

static int add_event_doc(void *ctx, const gp_event_rec *ev)
{
    events_ctx *c = ctx;
    json_array_append_new(c->list, json_pack("{s:I, s:I, s:s, s:s}", "id", (json_int_t)ev->id,
                                             "time_ms", (json_int_t)ev->time_ms, "type", ev->type,
                                             "message", ev->message));
    return 0;
}

void api_jobs_events(api_req *rq)
{
    ctl_read_lock(rq->g);
    ctl_job *j = find_scoped(rq, rq->params[0]);
    int64_t id = j ? j->id : 0;
    ctl_read_unlock(rq->g);
    if (!id) {
        api_error(rq, GP_ENOENT, "job %s: not found", rq->params[0]);
        return;
    }
    events_ctx c = {json_array()};
    gp_diag d;
    gp_diag_clear(&d);
    pthread_mutex_lock(&rq->g->reader_lock);
    int rc = gp_store_event_each(rq->g->reader, id, 0, 0, add_event_doc, &c, &d);
    pthread_mutex_unlock(&rq->g->reader_lock);
    if (rc < 0) {
        json_decref(c.list);
        api_diag(rq, &d);
        return;
    }
    api_reply(rq, 200, json_pack("{s:I, s:o}", "job", (json_int_t)id, "items", c.list));
}

/* ---- cancel and requeue ---- */

typedef struct change_arg {
    const char *ref;
    int64_t scope;
    bool requeue;
    const char *who;
} change_arg;

static int change_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    change_arg *a = op->arg;
    ctl_state *st = &g->st;
    ctl_job *j = ctl_job_find(st, a->ref, a->scope);
    if (!j) {
        return gp_diag_set(d, GP_ENOENT, "job %s: not found", a->ref);
    }
    if (a->requeue ? ctl_job_state_waits(j->state) || j->state == CTL_SUCCEEDED ||
                         j->state == CTL_CANCELLED
                   : ctl_job_state_final(j->state)) {
        return gp_diag_set(d, GP_ESTATE, "job %s is %s: cannot %s it", a->ref,
                           ctl_job_state_name(j->state), a->requeue ? "requeue" : "cancel");
    }
    if ((ctl_job_is_service(j) || ctl_job_is_array(j)) && a->requeue) {
        return gp_diag_set(d, GP_ESTATE, "job %s is a %s: cannot requeue it", a->ref,
                           ctl_job_is_array(j) ? "job array" : "service");
    }
    if (ctl_job_is_array(j)) {
        char why[160];
        snprintf(why, sizeof(why), "cancelled with its array by %s", a->who);
        op->dirty = true;
        int rc = ctl_array_cancel_children(g, j, why, d);
        if (rc < 0) {
            return rc;
        }
    }
    if (ctl_job_is_service(j)) {
        char why[160];
        snprintf(why, sizeof(why), "cancelled with its service by %s", a->who);
        op->dirty = true;
        int rc = ctl_service_cancel_replicas(g, j, why, d);
        if (rc < 0) {
            return rc;
        }
    }
    ctl_job next = *j; /* its replicas only feed the status document (where it ran) */
    ctl_job_state to = a->requeue ? CTL_PENDING : CTL_CANCELLED;
    snprintf(next.reason, sizeof(next.reason), "%s by %s", a->requeue ? "requeued" : "cancelled",
             a->who);
    if (a->requeue) {
        next.start_ms = next.end_ms = 0;
        next.exit_code = 0;
    } else {
        next.end_ms = ctl_now_ms();
    }
    bool held = ctl_job_state_holds(j->state);
    int rc = ctl_job_end_placement(g, j, &next, to, a->requeue ? "Requeued" : "Cancelled", d);
    if (rc < 0) {
        return rc;
    }
    op->kick = held || a->requeue;
    op->result = api_job_doc(st, j);
    return 0;
}

static void change(api_req *rq, bool requeue)
{
    change_arg a = {rq->params[0], api_scope(rq), requeue, rq->who.name};
    ctl_op op = {.run = change_run, .arg = &a};
    api_run(rq, &op);
}

void api_jobs_cancel(api_req *rq)
{
    change(rq, false);
}

void api_jobs_requeue(api_req *rq)
{
    change(rq, true);
}
