/*
 * Loading the state from the store at start (and after a failed commit), and the stored form
 * of assignments. Everything acknowledged before a restart comes back: tenants, queues,
 * priority classes, nodes, tokens, jobs with their status, and the placements of the jobs that
 * hold GPUs, which are applied again to a fresh cluster model.
 */
#include "ctl/ctl.h"
#include "ctl/doc.h"

#include <stdlib.h>
#include <string.h>

json_t *ctl_assignment_doc(const gp_assignment *a)
{
    json_t *shares = json_array();
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        json_array_append_new(shares,
                              json_pack("{s:i, s:i, s:I, s:i, s:i, s:i}", "gpu", s->gpu, "milli",
                                        s->milli, "memory_mib", (json_int_t)s->mem_mib, "mig_start",
                                        s->mig_start, "mig_memory_slices", s->mig_memory_slices,
                                        "mig_compute_slices", s->mig_compute_slices));
    }
    return json_pack("{s:I, s:I, s:o}", "cpu_milli", (json_int_t)a->cpu_milli, "memory_mib",
                     (json_int_t)a->memory_mib, "shares", shares);
}

int ctl_assignment_from_doc(json_t *doc, int node, gp_assignment *a, gp_diag *d)
{
    memset(a, 0, sizeof(*a));
    a->node = node;
    json_t *shares = json_object_get(doc, "shares");
    json_int_t cpu = 0, mem = 0;
    if (json_unpack(doc, "{s:I, s:I}", "cpu_milli", &cpu, "memory_mib", &mem) != 0 ||
        !json_is_array(shares) || json_array_size(shares) > GP_MAX_GPUS_PER_NODE) {
        return gp_diag_set(d, GP_EIO, "store: malformed assignment");
    }
    a->cpu_milli = cpu;
    a->memory_mib = mem;
    size_t i;
    json_t *s;
    json_array_foreach(shares, i, s)
    {
        int gpu, milli, start, ms, cs;
        json_int_t m;
        if (json_unpack(s, "{s:i, s:i, s:I, s:i, s:i, s:i}", "gpu", &gpu, "milli", &milli,
                        "memory_mib", &m, "mig_start", &start, "mig_memory_slices", &ms,
                        "mig_compute_slices", &cs) != 0) {
            return gp_diag_set(d, GP_EIO, "store: malformed GPU share");
        }
        a->shares[i] = (gp_gpu_share){.gpu = (uint8_t)gpu,
                                      .milli = milli,
                                      .mem_mib = m,
                                      .mig_start = (int8_t)start,
                                      .mig_memory_slices = (int8_t)ms,
                                      .mig_compute_slices = (int8_t)cs};
    }
    a->nshares = (int)json_array_size(shares);
    return 0;
}

typedef struct load_ctx {
    ctl_state *st;
    gp_diag *d;
    json_t *replica_states; /* job id (as a key) -> the stored status's "replicas" */
} load_ctx;

static json_t *parse(const char *text, gp_diag *d, const char *what)
{
    json_error_t err;
    json_t *v = json_loads(text, 0, &err);
    if (!v) {
        gp_diag_set(d, GP_EIO, "store: %s: %s", what, err.text);
    }
    return v;
}

static int grow(void **p, int *cap, int n, size_t size)
{
    if (n < *cap) {
        return 0;
    }
    int ncap = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, size * (size_t)ncap);
    if (!q) {
        return GP_ENOMEM;
    }
    *p = q;
    *cap = ncap;
    return 0;
}

static int load_obj(void *ctx, int64_t id, const char *name, const char *json, gp_obj_kind kind)
{
    load_ctx *l = ctx;
    ctl_state *st = l->st;
    json_t *doc = parse(json, l->d, name);
    if (!doc) {
        return GP_EIO;
    }
    int rc = 0;
    switch (kind) {
    case GP_OBJ_TENANT:
        rc = grow((void **)&st->tenants, &st->captenants, st->ntenants, sizeof(ctl_tenant));
        if (rc == 0 &&
            (rc = ctl_tenant_from_doc(name, doc, &st->tenants[st->ntenants], l->d)) == 0) {
            st->tenants[st->ntenants++].id = id;
        }
        break;
    case GP_OBJ_QUEUE:
        rc = grow((void **)&st->queues, &st->capqueues, st->nqueues, sizeof(ctl_queue));
        if (rc == 0 && (rc = ctl_queue_from_doc(name, doc, &st->queues[st->nqueues], l->d)) == 0) {
            st->queues[st->nqueues++].id = id;
        }
        break;
    case GP_OBJ_PRIORITY_CLASS:
        rc = grow((void **)&st->pclasses, &st->cappclasses, st->npclasses, sizeof(ctl_pclass));
        if (rc == 0 &&
            (rc = ctl_pclass_from_doc(name, doc, &st->pclasses[st->npclasses], l->d)) == 0) {
            st->pclasses[st->npclasses++].id = id;
        }
        break;
    case GP_OBJ_NODE:
        rc = ctl_state_add_node(st, id, name, doc, l->d);
        break;
    case GP_OBJ_VOLUME:
        rc = grow((void **)&st->volumes, &st->capvolumes, st->nvolumes, sizeof(ctl_volume));
        if (rc == 0 &&
            (rc = ctl_volume_from_doc(name, doc, &st->volumes[st->nvolumes], l->d)) == 0) {
            st->volumes[st->nvolumes++].id = id;
        }
        break;
    }
    json_decref(doc);
    return rc;
}

static int load_tenant(void *ctx, int64_t id, const char *name, const char *json)
{
    return load_obj(ctx, id, name, json, GP_OBJ_TENANT);
}
static int load_queue(void *ctx, int64_t id, const char *name, const char *json)
{
    return load_obj(ctx, id, name, json, GP_OBJ_QUEUE);
}
static int load_pclass(void *ctx, int64_t id, const char *name, const char *json)
{
    return load_obj(ctx, id, name, json, GP_OBJ_PRIORITY_CLASS);
}
static int load_node(void *ctx, int64_t id, const char *name, const char *json)
{
    return load_obj(ctx, id, name, json, GP_OBJ_NODE);
}
static int load_volume(void *ctx, int64_t id, const char *name, const char *json)
{
    return load_obj(ctx, id, name, json, GP_OBJ_VOLUME);
}

static int load_token(void *ctx, const gp_token_rec *t)
{
    load_ctx *l = ctx;
    ctl_state *st = l->st;
    if (grow((void **)&st->tokens, &st->captokens, st->ntokens, sizeof(*t)) < 0) {
        return GP_ENOMEM;
    }
    st->tokens[st->ntokens++] = *t;
    return 0;
}

/* Each node's newest live agent token, and whether an older one is live too. */
static void index_agent_tokens(ctl_state *st)
{
    for (int i = 0; i < st->ntokens; i++) {
        const gp_token_rec *t = &st->tokens[i];
        ctl_node *n =
            t->revoked || strcmp(t->role, "agent") != 0 ? NULL : ctl_node_by_id(st, t->node_id);
        if (!n) {
            continue;
        }
        n->older_agent_tokens |= n->agent_token_id != 0;
        if (t->id > n->agent_token_id) {
            n->agent_token_id = t->id;
        }
    }
}

static int load_cred(void *ctx, const gp_registry_cred_rec *r)
{
    load_ctx *l = ctx;
    return ctl_registry_add(l->st, r) == 0 ? 0 : gp_diag_set(l->d, GP_ENOMEM, "out of memory");
}

/* Arrays and dependencies (ctl.h): after_ok's ids, a child's index, an array's count made. */
static void read_batch(ctl_job *j, json_t *status)
{
    json_t *after = json_object_get(status, "after_ok");
    json_t *index = json_object_get(status, "array_index");
    size_t n = json_array_size(after);
    if (n > 0 && (j->after_ids = calloc(n, sizeof(int64_t)))) {
        for (size_t i = 0; i < n; i++) {
            j->after_ids[i] = json_integer_value(json_array_get(after, i));
        }
        j->nafter = (int)n;
    }
    j->in_array = json_is_integer(index);
    j->array_index = (int)json_integer_value(index);
    j->array_made = (int)json_integer_value(json_object_get(status, "array_made"));
}

static void read_status(ctl_job *j, json_t *status)
{
    read_batch(j, status);
    json_int_t start = 0, end = 0, epoch = 0;
    int restarts = 0, exit_code = 0;
    const char *reason = "";
    json_t *ran = NULL;
    json_unpack(status, "{s?s, s?I, s?I, s?i, s?i, s?o, s?I}", "reason", &reason, "start_ms",
                &start, "end_ms", &end, "restarts", &restarts, "exit_code", &exit_code, "ran_on",
                &ran, "ran_epoch", &epoch);
    if ((int)json_array_size(ran) == j->spec.replicas &&
        (j->ran_on = malloc(sizeof(int64_t) * (size_t)j->spec.replicas))) {
        for (int r = 0; r < j->spec.replicas; r++) {
            j->ran_on[r] = json_integer_value(json_array_get(ran, (size_t)r));
        }
        j->ran_epoch = epoch;
    }
    int spare_ok = 0;
    json_t *faults = NULL;
    json_unpack(status, "{s?b, s?o}", "spare_ok", &spare_ok, "fault_restarts_ms", &faults);
    j->spare_ok = spare_ok;
    for (size_t i = 0; i < CTL_FAULT_RESTARTS_KEEP && i < json_array_size(faults); i++) {
        j->fault_ms[i] = json_integer_value(json_array_get(faults, i));
    }
    json_int_t owner = 0, rollout = 0;
    json_unpack(status, "{s?I, s?i, s?{s?i, s?i, s?i, s?I}}", "owner", &owner, "revision",
                &j->revision, "service", "revision", &j->revision, "replicas", &j->svc_replicas,
                "next", &j->svc_next, "rollout_ms", &rollout);
    j->owner = owner;
    j->svc_rollout_ms = rollout;
    snprintf(j->reason, sizeof(j->reason), "%s", reason);
    j->start_ms = start;
    j->end_ms = end;
    j->restarts = restarts;
    j->exit_code = exit_code;
}

/* A service's spec as it is now: the one in its status, once an update replaced the one stored
 * at submission (service.h). */
static int service_spec(ctl_job *j, json_t *status, gp_diag *d)
{
    json_t *spec = json_object_get(json_object_get(status, "service"), "spec");
    if (!spec) {
        return 0;
    }
    char *text = json_dumps(spec, JSON_COMPACT);
    gp_jobspec now;
    int rc = text ? gp_jobspec_parse_json(text, strlen(text), &now, d)
                  : gp_diag_set(d, GP_ENOMEM, "out of memory");
    free(text);
    if (rc == 0) {
        gp_jobspec_fini(&j->spec);
        j->spec = now;
    }
    return rc;
}

static int load_job(void *ctx, const gp_job_rec *rec, const char *spec_json,
                    const char *status_json)
{
    load_ctx *l = ctx;
    ctl_job *j = calloc(1, sizeof(*j));
    if (!j) {
        return GP_ENOMEM;
    }
    j->id = rec->id;
    j->tenant_id = rec->tenant_id;
    snprintf(j->name, sizeof(j->name), "%s", rec->name);
    snprintf(j->idempotency_key, sizeof(j->idempotency_key), "%s", rec->idempotency_key);
    j->submit_ms = rec->submit_time_ms;
    int rc = ctl_job_state_parse(rec->state, &j->state);
    if (rc == 0) {
        rc = gp_jobspec_parse_json(spec_json, strlen(spec_json), &j->spec, l->d);
    }
    json_t *status = rc == 0 ? parse(status_json, l->d, "job status") : NULL;
    if (rc == 0 && !status) {
        rc = GP_EIO;
    }
    if (rc == 0) {
        read_status(j, status);
        rc = service_spec(j, status, l->d);
    }
    if (rc == 0) {
        rc = ctl_state_add_job(l->st, j);
    }
    json_t *reps = rc == 0 ? json_object_get(status, "replicas") : NULL;
    if (json_array_size(reps) > 0) {
        char key[32];
        snprintf(key, sizeof(key), "%lld", (long long)j->id);
        json_object_set(l->replica_states, key, reps);
    }
    json_decref(status);
    if (rc < 0) {
        ctl_job_free(j);
        if (l->d->code == 0) {
            gp_diag_set(l->d, rc, "store: job %lld: %s", (long long)rec->id, gp_strerror(rc));
        }
    }
    return rc;
}

static int load_placement(void *ctx, const gp_placement_rec *p, const char *json)
{
    load_ctx *l = ctx;
    ctl_job *j = ctl_job_by_id(l->st, p->job_id);
    ctl_node *n = ctl_node_by_id(l->st, p->node_id);
    if (!j || !n || !ctl_job_state_holds(j->state) || p->replica < 0 ||
        p->replica >= j->spec.replicas) {
        return 0; /* a leftover of a job that no longer holds: ignored */
    }
    if (!j->replicas) {
        j->replicas = calloc((size_t)j->spec.replicas, sizeof(*j->replicas));
        if (!j->replicas) {
            return GP_ENOMEM;
        }
    }
    json_t *doc = parse(json, l->d, "placement");
    if (!doc) {
        return GP_EIO;
    }
    ctl_replica *r = &j->replicas[p->replica];
    r->node_id = p->node_id;
    r->epoch = p->epoch;
    int rc = ctl_assignment_from_doc(doc, n->cl, &r->a, l->d);
    json_decref(doc);
    return rc;
}

/* What the agents last reported of each replica (Running, Succeeded, exit codes), as stored in
 * the job's status. */
static void restore_replica_states(ctl_state *st, json_t *states)
{
    const char *key;
    json_t *reps;
    json_object_foreach(states, key, reps)
    {
        ctl_job *j = ctl_job_by_id(st, strtoll(key, NULL, 10));
        size_t i;
        json_t *r;
        json_array_foreach(reps, i, r)
        {
            int replica = -1, code = 0;
            const char *state = "";
            if (!j || !j->replicas ||
                json_unpack(r, "{s:i, s?s, s?i}", "replica", &replica, "state", &state, "exit_code",
                            &code) != 0 ||
                replica < 0 || replica >= j->spec.replicas) {
                continue;
            }
            snprintf(j->replicas[replica].state, sizeof(j->replicas[replica].state), "%s", state);
            j->replicas[replica].exit_code = code;
        }
    }
}

/* Applies the holds of every job that holds resources; a job whose placement is incomplete or
 * no longer fits goes back to Pending (it will be placed again). */
static void apply_holds(ctl_state *st)
{
    for (int i = 0; i < st->njobs; i++) {
        ctl_job *j = st->jobs[i];
        if (!ctl_job_state_holds(j->state) || ctl_job_is_service(j) || ctl_job_is_array(j)) {
            free(j->replicas);
            j->replicas = NULL;
            continue;
        }
        bool complete = j->replicas != NULL;
        for (int r = 0; complete && r < j->spec.replicas; r++) {
            complete = j->replicas[r].epoch > 0;
        }
        if (!complete || ctl_job_hold(st, j, true) < 0) {
            free(j->replicas);
            j->replicas = NULL;
            ctl_job_set_state(st, j, CTL_PENDING);
            snprintf(j->reason, sizeof(j->reason), "placement lost at restart; waiting again");
        }
    }
}

int ctl_state_load(ctl_state *st, gp_store *store, gp_diag *d)
{
    ctl_state_clear(st);
    st->cluster = gp_cluster_new();
    if (!st->cluster) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    load_ctx l = {st, d, json_object()};
    int rc = gp_store_obj_each(store, GP_OBJ_TENANT, load_tenant, &l, d);
    if (rc == 0) {
        rc = gp_store_obj_each(store, GP_OBJ_QUEUE, load_queue, &l, d);
    }
    if (rc == 0) {
        rc = gp_store_obj_each(store, GP_OBJ_PRIORITY_CLASS, load_pclass, &l, d);
    }
    if (rc == 0) {
        rc = gp_store_obj_each(store, GP_OBJ_NODE, load_node, &l, d);
    }
    if (rc == 0) {
        rc = gp_store_obj_each(store, GP_OBJ_VOLUME, load_volume, &l, d);
    }
    if (rc == 0) {
        rc = gp_store_token_each(store, load_token, &l, d);
    }
    if (rc == 0) {
        rc = gp_store_registry_cred_each(store, load_cred, &l, d);
    }
    if (rc == 0) {
        rc = gp_store_job_each(store, load_job, &l, d);
    }
    if (rc == 0) {
        rc = gp_store_placement_each(store, load_placement, &l, d);
    }
    if (rc < 0) {
        if (d->code == 0) {
            gp_diag_set(d, rc, "loading the state: %s", gp_strerror(rc));
        }
        json_decref(l.replica_states);
        ctl_state_clear(st);
        return rc;
    }
    apply_holds(st);
    index_agent_tokens(st);
    restore_replica_states(st, l.replica_states);
    json_decref(l.replica_states);
    return 0;
}
