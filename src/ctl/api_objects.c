/*
 * /v1/tenants, /v1/queues, /v1/priorityclasses, /v1/volumes: named objects with one create,
 * update, delete and read path, told apart by a small table of per-kind functions.
 *
 * Create takes {"name": ..., <document>}; update (PUT) takes the document (a name in it must
 * match the path). Deleting an object that active jobs use is refused (409), so no job ever
 * points at something missing; so is deleting a priority class or queue a tenant is granted
 * (the refusal names the tenants: revoke the grants first). A tenant's grants must name
 * existing classes and queues. Users see only their own tenant.
 */
#include "ctl/api.h"
#include "ctl/doc.h"

#include <stdlib.h>
#include <string.h>

typedef enum obj_type { OBJ_TENANT, OBJ_QUEUE, OBJ_PCLASS, OBJ_VOLUME } obj_type;

static const gp_obj_kind store_kind[] = {GP_OBJ_TENANT, GP_OBJ_QUEUE, GP_OBJ_PRIORITY_CLASS,
                                         GP_OBJ_VOLUME};
static const char *const kind_name[] = {"tenant", "queue", "priority class", "volume"};

static bool uses_volume(const gp_jobspec *s, const char *name)
{
    for (int i = 0; i < s->nvolumes; i++) {
        if (strcmp(s->volumes[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

/* Usage of everything held, per tenant or per queue. */
static gp_res usage_of(ctl_state *st, obj_type t, int64_t tenant_id, const char *queue)
{
    gp_res u = {0, 0, 0, 0};
    for (int i = 0; i < st->njobs; i++) {
        const ctl_job *j = st->jobs[i];
        if (!j->replicas || (t == OBJ_TENANT && j->tenant_id != tenant_id) ||
            (t == OBJ_QUEUE && strcmp(j->spec.queue, queue) != 0)) {
            continue;
        }
        for (int r = 0; r < j->spec.replicas; r++) {
            gp_res x = gp_sched_usage(st->cluster, &j->replicas[r].a, NULL);
            u.gpu_milli += x.gpu_milli;
            u.gpu_mem_mib += x.gpu_mem_mib;
            u.cpu_milli += x.cpu_milli;
            u.memory_mib += x.memory_mib;
        }
    }
    return u;
}

static json_t *usage_doc(const gp_res *u)
{
    return json_pack("{s:o, s:I, s:I, s:I}", "gpus", doc_gpus_value(u->gpu_milli), "gpu_memory_mib",
                     (json_int_t)u->gpu_mem_mib, "cpu_milli", (json_int_t)u->cpu_milli,
                     "memory_mib", (json_int_t)u->memory_mib);
}

static int count_jobs(ctl_state *st, obj_type t, int64_t tenant_id, const char *name,
                      ctl_job_state s)
{
    int n = 0;
    for (int i = 0; i < st->njobs; i++) {
        const ctl_job *j = st->jobs[i];
        bool mine = t == OBJ_TENANT   ? j->tenant_id == tenant_id
                    : t == OBJ_QUEUE  ? strcmp(j->spec.queue, name) == 0
                    : t == OBJ_VOLUME ? uses_volume(&j->spec, name)
                                      : strcmp(j->spec.priority_class, name) == 0;
        n += mine && (s == CTL_NSTATES ? !ctl_job_state_final(j->state) : j->state == s);
    }
    return n;
}

/* The API's document of object i of type t, with its use. */
static json_t *show(ctl_state *st, obj_type t, int i)
{
    json_t *doc;
    if (t == OBJ_TENANT) {
        ctl_tenant *x = &st->tenants[i];
        doc = ctl_tenant_doc(st, x);
        gp_res u = usage_of(st, t, x->id, NULL);
        json_object_set_new(doc, "usage", usage_doc(&u));
        json_object_set_new(doc, "pending",
                            json_integer(count_jobs(st, t, x->id, NULL, CTL_PENDING)));
    } else if (t == OBJ_QUEUE) {
        ctl_queue *x = &st->queues[i];
        doc = ctl_queue_doc(x);
        gp_res u = usage_of(st, t, 0, x->q.name);
        json_object_set_new(doc, "usage", usage_doc(&u));
        json_object_set_new(doc, "pending",
                            json_integer(count_jobs(st, t, 0, x->q.name, CTL_PENDING)));
    } else if (t == OBJ_VOLUME) {
        ctl_volume *x = &st->volumes[i];
        doc = ctl_volume_doc(x);
        json_object_set_new(doc, "active_jobs",
                            json_integer(count_jobs(st, t, 0, x->name, CTL_NSTATES)));
    } else {
        doc = ctl_pclass_doc(&st->pclasses[i]);
    }
    return doc;
}

static int count_of(ctl_state *st, obj_type t)
{
    return t == OBJ_TENANT   ? st->ntenants
           : t == OBJ_QUEUE  ? st->nqueues
           : t == OBJ_VOLUME ? st->nvolumes
                             : st->npclasses;
}

static int index_of(ctl_state *st, obj_type t, const char *name)
{
    for (int i = 0; i < count_of(st, t); i++) {
        const char *n = t == OBJ_TENANT   ? st->tenants[i].lim.name
                        : t == OBJ_QUEUE  ? st->queues[i].q.name
                        : t == OBJ_VOLUME ? st->volumes[i].name
                                          : st->pclasses[i].name;
        if (strcmp(n, name) == 0) {
            return i;
        }
    }
    return -1;
}

static void list(api_req *rq, obj_type t)
{
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    json_t *items = json_array();
    for (int i = 0; i < count_of(st, t); i++) {
        if (t == OBJ_TENANT && api_scope(rq) && st->tenants[i].id != api_scope(rq)) {
            continue;
        }
        json_array_append_new(items, show(st, t, i));
    }
    ctl_read_unlock(rq->g);
    api_reply(rq, 200, json_pack("{s:o}", "items", items));
}

static void get(api_req *rq, obj_type t)
{
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    int i = index_of(st, t, rq->params[0]);
    if (i >= 0 && t == OBJ_TENANT && api_scope(rq) && st->tenants[i].id != api_scope(rq)) {
        i = -1;
    }
    json_t *doc = i >= 0 ? show(st, t, i) : NULL;
    ctl_read_unlock(rq->g);
    if (!doc) {
        api_error(rq, GP_ENOENT, "%s %s: not found", kind_name[t], rq->params[0]);
        return;
    }
    api_reply(rq, 200, doc);
}

/* ---- writes ---- */

typedef struct put_arg {
    obj_type type;
    char name[GP_NAME_MAX];
    json_t *doc;
    bool create;
    bool dry_run; /* ?dry_run=true: checked, answered as it would be stored, not stored */
} put_arg;

typedef union any_obj {
    ctl_tenant tenant;
    ctl_queue queue;
    ctl_pclass pclass;
    ctl_volume volume;
} any_obj;

static int parse(obj_type t, const char *name, json_t *doc, any_obj *o, gp_diag *d)
{
    switch (t) {
    case OBJ_TENANT:
        return ctl_tenant_from_doc(name, doc, &o->tenant, d);
    case OBJ_QUEUE:
        return ctl_queue_from_doc(name, doc, &o->queue, d);
    case OBJ_VOLUME:
        return ctl_volume_from_doc(name, doc, &o->volume, d);
    default:
        return ctl_pclass_from_doc(name, doc, &o->pclass, d);
    }
}

static json_t *stored_doc(ctl_state *st, obj_type t, any_obj *o)
{
    return t == OBJ_TENANT   ? ctl_tenant_doc(st, &o->tenant)
           : t == OBJ_QUEUE  ? ctl_queue_doc(&o->queue)
           : t == OBJ_VOLUME ? ctl_volume_doc(&o->volume)
                             : ctl_pclass_doc(&o->pclass);
}

static int64_t *id_of(obj_type t, any_obj *o)
{
    return t == OBJ_TENANT   ? &o->tenant.id
           : t == OBJ_QUEUE  ? &o->queue.id
           : t == OBJ_VOLUME ? &o->volume.id
                             : &o->pclass.id;
}

/* Puts o into memory: appended (create) or over entry i. */
static int install(ctl_state *st, obj_type t, int i, any_obj *o)
{
    void **arr = t == OBJ_TENANT   ? (void **)&st->tenants
                 : t == OBJ_QUEUE  ? (void **)&st->queues
                 : t == OBJ_VOLUME ? (void **)&st->volumes
                                   : (void **)&st->pclasses;
    int *n = t == OBJ_TENANT   ? &st->ntenants
             : t == OBJ_QUEUE  ? &st->nqueues
             : t == OBJ_VOLUME ? &st->nvolumes
                               : &st->npclasses;
    int *cap = t == OBJ_TENANT   ? &st->captenants
               : t == OBJ_QUEUE  ? &st->capqueues
               : t == OBJ_VOLUME ? &st->capvolumes
                                 : &st->cappclasses;
    size_t size = t == OBJ_TENANT   ? sizeof(ctl_tenant)
                  : t == OBJ_QUEUE  ? sizeof(ctl_queue)
                  : t == OBJ_VOLUME ? sizeof(ctl_volume)
                                    : sizeof(ctl_pclass);
    if (i < 0) {
        if (*n == *cap) {
            int ncap = *cap ? *cap * 2 : 16;
            void *p = realloc(*arr, size * (size_t)ncap);
            if (!p) {
                return GP_ENOMEM;
            }
            *arr = p;
            *cap = ncap;
        }
        i = (*n)++;
    } else if (t == OBJ_TENANT) {
        ctl_tenant_fini(&st->tenants[i]);
    }
    memcpy((char *)*arr + size * (size_t)i, o, size);
    return 0;
}

static int put_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    put_arg *a = op->arg;
    ctl_state *st = &g->st;
    int i = index_of(st, a->type, a->name);
    if (a->create && i >= 0) {
        return gp_diag_set(d, GP_EEXIST, "%s %s: already exists", kind_name[a->type], a->name);
    }
    if (!a->create && i < 0) {
        return gp_diag_set(d, GP_ENOENT, "%s %s: not found", kind_name[a->type], a->name);
    }
    any_obj o;
    int rc = parse(a->type, a->name, a->doc, &o, d);
    if (rc < 0) {
        return rc;
    }
    if (a->type == OBJ_TENANT && (rc = ctl_tenant_grants_check(st, &o.tenant, d)) < 0) {
        ctl_tenant_fini(&o.tenant);
        return rc;
    }
    if (a->dry_run) {
        op->status = 200;
        op->result = stored_doc(st, a->type, &o);
        if (a->type == OBJ_TENANT) {
            ctl_tenant_fini(&o.tenant);
        }
        return op->result ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    *id_of(a->type, &o) = 0;
    if (i >= 0) {
        any_obj *cur = (any_obj *)(a->type == OBJ_TENANT   ? (void *)&st->tenants[i]
                                   : a->type == OBJ_QUEUE  ? (void *)&st->queues[i]
                                   : a->type == OBJ_VOLUME ? (void *)&st->volumes[i]
                                                           : (void *)&st->pclasses[i]);
        *id_of(a->type, &o) = *id_of(a->type, cur);
    }
    json_t *doc = stored_doc(st, a->type, &o);
    char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    rc = text
             ? gp_store_obj_put(g->store, store_kind[a->type], id_of(a->type, &o), a->name, text, d)
             : gp_diag_set(d, GP_ENOMEM, "out of memory");
    free(text);
    if (rc == 0) {
        rc = install(st, a->type, i, &o);
        if (rc < 0) {
            gp_diag_set(d, rc, "out of memory");
        }
    }
    if (rc < 0) {
        if (a->type == OBJ_TENANT) {
            ctl_tenant_fini(&o.tenant);
        }
        return rc;
    }
    if (a->type == OBJ_VOLUME && !a->create) {
        /* Desired documents show a volume as registered now: its users' nodes must ask again. */
        for (int k = 0; k < st->njobs; k++) {
            if (st->jobs[k]->replicas && uses_volume(&st->jobs[k]->spec, a->name)) {
                ctl_job_desired_changed(st, st->jobs[k]);
            }
        }
    }
    st->gen++;
    op->status = a->create ? 201 : 200;
    op->kick = true; /* a larger quota or a new queue may let jobs run */
    op->result = show(st, a->type, index_of(st, a->type, a->name));
    return 0;
}

static void put(api_req *rq, obj_type t, bool create)
{
    put_arg a = {.type = t, .create = create};
    const char *dry = gp_http_request_query(rq->http, "dry_run");
    if (dry && strcmp(dry, "true") != 0 && strcmp(dry, "false") != 0) {
        api_error(rq, GP_EINVAL, "dry_run: must be true or false");
        return;
    }
    a.dry_run = dry && strcmp(dry, "true") == 0;
    a.doc = api_body(rq);
    if (!a.doc) {
        return;
    }
    gp_diag d;
    gp_diag_clear(&d);
    int rc = doc_name(a.doc, "", "name", a.name, sizeof(a.name), &d);
    if (rc == 0 && create && !a.name[0]) {
        rc = gp_diag_set(&d, GP_EINVAL, "name: required");
    }
    if (rc == 0 && !create) {
        if (a.name[0] && strcmp(a.name, rq->params[0]) != 0) {
            rc = gp_diag_set(&d, GP_EINVAL, "name: %s does not match the path's %s", a.name,
                             rq->params[0]);
        }
        snprintf(a.name, sizeof(a.name), "%s", rq->params[0]);
    }
    if (rc < 0) {
        api_diag(rq, &d);
    } else {
        ctl_op op = {.run = put_run, .arg = &a};
        api_run(rq, &op);
    }
    json_decref(a.doc);
}

/* Refuses (409) deleting a priority class or queue that tenants list in their grants, naming
 * them. */
static int check_granted(ctl_state *st, obj_type t, const char *name, gp_diag *d)
{
    if (t != OBJ_PCLASS && t != OBJ_QUEUE) {
        return 0;
    }
    ctl_grant k = t == OBJ_PCLASS ? CTL_GRANT_CLASS : CTL_GRANT_QUEUE;
    char names[256] = "";
    size_t len = 0;
    int n = 0;
    for (int i = 0; i < st->ntenants; i++) {
        if (!ctl_tenant_lists(&st->tenants[i], k, name)) {
            continue;
        }
        if (n++ < 5) {
            int w = snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
                             st->tenants[i].lim.name);
            len = w > 0 && (size_t)w < sizeof(names) - len ? len + (size_t)w : len;
        }
    }
    if (n == 0) {
        return 0;
    }
    return gp_diag_set(
        d, GP_ESTATE, "%s %s: granted to tenant%s %s%s; remove it from their %s first",
        kind_name[t], name, n == 1 ? "" : "s", names, n > 5 ? ", ..." : "", ctl_grant_field(k));
}

static int delete_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    put_arg *a = op->arg;
    ctl_state *st = &g->st;
    int i = index_of(st, a->type, a->name);
    if (i < 0) {
        return gp_diag_set(d, GP_ENOENT, "%s %s: not found", kind_name[a->type], a->name);
    }
    int64_t id = a->type == OBJ_TENANT   ? st->tenants[i].id
                 : a->type == OBJ_QUEUE  ? st->queues[i].id
                 : a->type == OBJ_VOLUME ? st->volumes[i].id
                                         : st->pclasses[i].id;
    int active = count_jobs(st, a->type, id, a->name, CTL_NSTATES);
    if (active > 0) {
        return gp_diag_set(d, GP_ESTATE, "%s %s: %d active jobs use it", kind_name[a->type],
                           a->name, active);
    }
    int rc = check_granted(st, a->type, a->name, d);
    if (rc < 0) {
        return rc;
    }
    rc = gp_store_obj_delete(g->store, store_kind[a->type], id, d);
    /* A deleted tenant's user tokens go with it. */
    for (int k = 0; rc == 0 && a->type == OBJ_TENANT && k < st->ntokens; k++) {
        if (st->tokens[k].tenant_id == id && !st->tokens[k].revoked) {
            rc = gp_store_token_revoke(g->store, st->tokens[k].id, d);
        }
    }
    if (rc < 0) {
        return rc;
    }
    for (int k = 0; a->type == OBJ_TENANT && k < st->ntokens; k++) {
        if (st->tokens[k].tenant_id == id) {
            st->tokens[k].revoked = 1;
        }
    }
    if (a->type == OBJ_TENANT) {
        ctl_registry_drop_tenant(st, id); /* the store drops them with the tenant */
        ctl_tenant_fini(&st->tenants[i]);
        st->tenants[i] = st->tenants[--st->ntenants];
    } else if (a->type == OBJ_QUEUE) {
        st->queues[i] = st->queues[--st->nqueues];
    } else if (a->type == OBJ_VOLUME) {
        st->volumes[i] = st->volumes[--st->nvolumes];
    } else {
        st->pclasses[i] = st->pclasses[--st->npclasses];
    }
    st->gen++;
    st->auth_gen++;
    op->status = 200;
    op->result = json_pack("{s:s}", "deleted", a->name);
    return 0;
}

static void del(api_req *rq, obj_type t)
{
    put_arg a = {.type = t};
    snprintf(a.name, sizeof(a.name), "%s", rq->params[0]);
    ctl_op op = {.run = delete_run, .arg = &a};
    api_run(rq, &op);
}

void api_tenants_list(api_req *rq)
{
    list(rq, OBJ_TENANT);
}
void api_tenants_get(api_req *rq)
{
    get(rq, OBJ_TENANT);
}
void api_tenants_create(api_req *rq)
{
    put(rq, OBJ_TENANT, true);
}
void api_tenants_update(api_req *rq)
{
    put(rq, OBJ_TENANT, false);
}
void api_tenants_delete(api_req *rq)
{
    del(rq, OBJ_TENANT);
}
void api_queues_list(api_req *rq)
{
    list(rq, OBJ_QUEUE);
}
void api_queues_get(api_req *rq)
{
    get(rq, OBJ_QUEUE);
}
void api_queues_create(api_req *rq)
{
    put(rq, OBJ_QUEUE, true);
}
void api_queues_update(api_req *rq)
{
    put(rq, OBJ_QUEUE, false);
}
void api_queues_delete(api_req *rq)
{
    del(rq, OBJ_QUEUE);
}
void api_pclasses_list(api_req *rq)
{
    list(rq, OBJ_PCLASS);
}
void api_pclasses_get(api_req *rq)
{
    get(rq, OBJ_PCLASS);
}
void api_pclasses_create(api_req *rq)
{
    put(rq, OBJ_PCLASS, true);
}
void api_pclasses_update(api_req *rq)
{
    put(rq, OBJ_PCLASS, false);
}
void api_pclasses_delete(api_req *rq)
{
    del(rq, OBJ_PCLASS);
}
void api_volumes_list(api_req *rq)
{
    list(rq, OBJ_VOLUME);
}
void api_volumes_get(api_req *rq)
{
    get(rq, OBJ_VOLUME);
}
void api_volumes_create(api_req *rq)
{
    put(rq, OBJ_VOLUME, true);
}
void api_volumes_update(api_req *rq)
{
    put(rq, OBJ_VOLUME, false);
}
void api_volumes_delete(api_req *rq)
{
    del(rq, OBJ_VOLUME);
}
