/*
 * The audit log's records (see audit.h): who is acting, the record of an API change built from
 * its route, caller and answer, and the records of placements made and ended.
 *
 * Action names come from one table of the write routes. A write route the table lacks still
 * gets a record, its action derived from the route ("widget.create", "widget.frob"), so a new
 * endpoint is never silently left out of the log; only the routes listed with no action (agents'
 * heartbeats) are not recorded.
 */
#include "ctl/audit.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ---- */

static bool is_person(ctl_role r)
{
    return r == CTL_ROLE_ADMIN || r == CTL_ROLE_OPERATOR || r == CTL_ROLE_USER;
}

static int append(gpupoold *g, const ctl_principal *who, const char *actor, const char *tenant,
                  const char *action, const char *object, json_t *detail, gp_diag *d)
{
    char *text = detail ? json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (detail && !text) {
        return gp_diag_set(d, GP_ENOMEM, "audit log: out of memory");
    }
    ctl_op *op = g->op_now;
    if (op && !op->audit.time_ms) {
        op->audit.time_ms = ctl_now_ms();
    }
    gp_audit_rec r = {
        .time_ms = op ? op->audit.time_ms : ctl_now_ms(),
        .actor = who ? who->name : actor,
        .role = who ? ctl_role_name(who->role) : "",
        .tenant = who && who->role == CTL_ROLE_USER ? who->tenant : tenant,
        .action = action,
        .object = object,
        .detail = text,
    };
    gp_diag why;
    gp_diag_clear(&why);
    int rc = gp_store_audit_add(g->store, &r, &why);
    free(text);
    if (rc < 0) {
        if (op) {
            op->audit.failed = true;
        }
        return gp_diag_set(d, GP_EUNAVAIL,
                           "audit log: cannot record %s %s (%s); the change was not made", action,
                           object, why.msg);
    }
    return 0;
}

int ctl_audit(gpupoold *g, const ctl_audit_rec *r, gp_diag *d)
{
    if (r->actor) {
        return append(g, NULL, r->actor, r->tenant, r->action, r->object, r->detail, d);
    }
    const ctl_principal *who = g->op_now ? g->op_now->audit.who : NULL;
    if (who && is_person(who->role)) {
        return append(g, who, NULL, r->tenant, r->action, r->object, r->detail, d);
    }
    return append(g, NULL, "controller", r->tenant, r->action, r->object, r->detail, d);
}

/* ---- placements ---- */

/* Where replicas are: {"epoch": E, "replicas": [{"node": "gpu-01", "gpus": [0, 1]}, ...]}; a
 * share of a GPU shows as {"index", "milli", "memory_mib"} (MIG: the slice). At most
 * MAX_SHOWN replicas are listed; "replicas_total" counts them all. */
#define MAX_SHOWN 32

static json_t *share_doc(const gp_gpu_share *s)
{
    if (s->mig_start >= 0) {
        return json_pack("{s:i, s:i, s:i, s:i}", "index", s->gpu, "mig_start", s->mig_start,
                         "mig_compute_slices", s->mig_compute_slices, "mig_memory_slices",
                         s->mig_memory_slices);
    }
    if (s->milli < 1000) {
        return json_pack("{s:i, s:i, s:I}", "index", s->gpu, "milli", s->milli, "memory_mib",
                         (json_int_t)s->mem_mib);
    }
    return json_integer(s->gpu);
}

static json_t *where_doc(gpupoold *g, const ctl_replica *replicas, int n)
{
    json_t *list = json_array();
    for (int r = 0; r < n && r < MAX_SHOWN; r++) {
        const ctl_node *node = ctl_node_by_id(&g->st, replicas[r].node_id);
        json_t *gpus = json_array();
        for (int s = 0; s < replicas[r].a.nshares; s++) {
            json_array_append_new(gpus, share_doc(&replicas[r].a.shares[s]));
        }
        json_array_append_new(
            list, json_pack("{s:s, s:o}", "node", node ? node->name : "?", "gpus", gpus));
    }
    json_t *doc = json_pack("{s:I, s:o}", "epoch", (json_int_t)(n > 0 ? replicas[0].epoch : 0),
                            "replicas", list);
    if (doc && n > MAX_SHOWN) {
        json_object_set_new(doc, "replicas_total", json_integer(n));
    }
    return doc;
}

static int placement_rec(gpupoold *g, const ctl_job *j, const char *actor, const char *action,
                         json_t *detail, gp_diag *d)
{
    if (!detail) {
        return gp_diag_set(d, GP_ENOMEM, "audit log: out of memory");
    }
    char object[48];
    snprintf(object, sizeof(object), "job/%lld", (long long)j->id);
    json_object_set_new(detail, "name", json_string(j->name));
    const ctl_tenant *t = ctl_tenant_by_id(&g->st, j->tenant_id);
    ctl_audit_rec r = {.actor = actor,
                       .tenant = t ? t->lim.name : "",
                       .action = action,
                       .object = object,
                       .detail = detail};
    int rc = ctl_audit(g, &r, d);
    json_decref(detail);
    return rc;
}

int ctl_audit_allocate(gpupoold *g, const ctl_job *j, const ctl_replica *replicas, int nreplicas,
                       gp_diag *d)
{
    return placement_rec(g, j, "scheduler", "placement.allocate", where_doc(g, replicas, nreplicas),
                         d);
}

int ctl_audit_free(gpupoold *g, const ctl_job *j, const char *actor, const char *ended,
                   const char *reason, gp_diag *d)
{
    if (!j->replicas) {
        return 0; /* nothing was placed: nothing is freed */
    }
    json_t *detail = where_doc(g, j->replicas, j->spec.replicas);
    if (detail) {
        json_object_set_new(detail, "ended", json_string(ended));
        json_object_set_new(detail, "reason", json_string(reason ? reason : ""));
    }
    return placement_rec(g, j, actor, "placement.free", detail, d);
}

/* ---- API changes ---- */

typedef struct audit_route {
    const char *method, *pattern;
    const char *action; /* NULL: the request is not recorded */
    const char *kind;
    bool by_id, created_only;
} audit_route;

static const audit_route audit_routes[] = {
    {"POST", "/v1/jobs", "job.submit", "job", true, true},
    {"POST", "/v1/jobs/{job}/cancel", "job.cancel", "job", true, false},
    {"POST", "/v1/jobs/{job}/requeue", "job.requeue", "job", true, false},
    {"POST", "/v1/nodes", "node.register", "node", false, false},
    /* Agents report every second; what a report changes that matters (a placement ends) has
     * its own record. A log of every heartbeat would bury the changes people make. */
    {"POST", "/v1/nodes/{node}/heartbeat", NULL, "node", false, false},
    {"POST", "/v1/nodes/{node}/cordon", "node.cordon", "node", false, false},
    {"POST", "/v1/nodes/{node}/drain", "node.drain", "node", false, false},
    {"POST", "/v1/nodes/{node}/uncordon", "node.uncordon", "node", false, false},
    {"POST", "/v1/nodes/{node}/check", "node.check", "node", false, false},
    {"POST", "/v1/nodes/{node}/taints", "node.taint", "node", false, false},
    {"PUT", "/v1/nodes/{node}/taints", "node.taint", "node", false, false},
    {"POST", "/v1/nodes/{node}/credential", "node.readmit", "node", false, false},
    {"POST", "/v1/nodes/{node}/gpus/{gpu}/drain", "gpu.drain", "gpu", false, false},
    {"POST", "/v1/nodes/{node}/gpus/{gpu}/undrain", "gpu.undrain", "gpu", false, false},
    {"POST", "/v1/tenants", "tenant.create", "tenant", false, false},
    {"PUT", "/v1/tenants/{tenant}", "tenant.update", "tenant", false, false},
    {"DELETE", "/v1/tenants/{tenant}", "tenant.delete", "tenant", false, false},
    /* The body's password shows redacted (redact()). */
    {"PUT", "/v1/tenants/{tenant}/registries/{registry}", "registry.set", "registry", false, false},
    {"DELETE", "/v1/tenants/{tenant}/registries/{registry}", "registry.delete", "registry", false,
     false},
    {"POST", "/v1/queues", "queue.create", "queue", false, false},
    {"PUT", "/v1/queues/{queue}", "queue.update", "queue", false, false},
    {"DELETE", "/v1/queues/{queue}", "queue.delete", "queue", false, false},
    {"POST", "/v1/priorityclasses", "priorityclass.create", "priorityclass", false, false},
    {"PUT", "/v1/priorityclasses/{class}", "priorityclass.update", "priorityclass", false, false},
    {"DELETE", "/v1/priorityclasses/{class}", "priorityclass.delete", "priorityclass", false,
     false},
    {"POST", "/v1/volumes", "volume.create", "volume", false, false},
    {"PUT", "/v1/volumes/{volume}", "volume.update", "volume", false, false},
    {"DELETE", "/v1/volumes/{volume}", "volume.delete", "volume", false, false},
    {"POST", "/v1/tokens", "token.create", "token", true, false},
    {"DELETE", "/v1/tokens/{token}", "token.revoke", "token", true, false},
};

#define NAUDIT_ROUTES ((int)(sizeof(audit_routes) / sizeof(audit_routes[0])))

static bool is_write(const char *method)
{
    return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0 &&
           strcmp(method, "OPTIONS") != 0;
}

/* The action of a write route the table lacks: the collection in the singular, then the last
 * segment when it is a verb ("/v1/widgets/{w}/frob": widget.frob), else what the method does
 * (create, update, delete). */
static void derive(const char *method, const char *pattern, ctl_op_audit *a)
{
    const char *p = strncmp(pattern, "/v1/", 4) == 0 ? pattern + 4 : pattern + (*pattern == '/');
    size_t n = strcspn(p, "/");
    if (n >= 4 && strncmp(p + n - 4, "sses", 4) == 0) {
        n -= 2; /* "classes": class */
    } else if (n > 1 && p[n - 1] == 's') {
        n--;
    }
    const char *last = strrchr(pattern, '/');
    const char *verb = strcmp(method, "POST") == 0     ? "create"
                       : strcmp(method, "DELETE") == 0 ? "delete"
                                                       : "update";
    if (last && last[1] && last[1] != '{' && strchr(p, '/')) {
        verb = last + 1;
    }
    snprintf(a->action_buf, sizeof(a->action_buf), "%.*s.%s", (int)n, p, verb);
    a->action = a->action_buf;
    a->kind = a->action_buf; /* the part before the '.', by the length below */
}

void ctl_audit_prepare(ctl_op *op, const ctl_principal *who, const gp_http_request *http,
                       const char *pattern, const char *ref, const char *ref2)
{
    ctl_op_audit *a = &op->audit;
    memset(a, 0, sizeof(*a));
    a->who = who;
    a->method = http->method;
    a->path = http->path;
    a->ref = ref;
    a->ref2 = ref2;
    pattern = pattern ? pattern : http->path;
    for (int i = 0; i < NAUDIT_ROUTES; i++) {
        const audit_route *r = &audit_routes[i];
        if (strcmp(r->method, a->method) == 0 && strcmp(r->pattern, pattern) == 0) {
            a->action = r->action;
            a->kind = r->kind;
            a->by_id = r->by_id;
            a->created_only = r->created_only;
            break;
        }
    }
    if (!a->kind && is_write(a->method)) {
        derive(a->method, pattern, a);
    }
    /* Not the body of a creation: the object itself is stored, and a job's spec may carry
     * credentials in its environment. */
    if (a->ref && http->body_len > 0 && is_write(a->method)) {
        a->body = http->body;
        a->body_len = http->body_len;
    }
}

static bool names_secret(const char *key)
{
    char low[64];
    size_t n = 0;
    for (; key[n] && n + 1 < sizeof(low); n++) {
        low[n] = (char)tolower((unsigned char)key[n]);
    }
    low[n] = '\0';
    return strstr(low, "token") || strstr(low, "secret") || strstr(low, "password") ||
           strstr(low, "key");
}

/* Replaces, at any depth, the values of keys that name a secret. */
static void redact(json_t *v)
{
    const char *key;
    json_t *x;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach(v, key, x)
        {
            if (names_secret(key)) {
                json_object_set_new(v, key, json_string("(redacted)"));
            } else {
                redact(x);
            }
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x)
        {
            redact(x);
        }
    }
}

/* The new document of a PUT, as the record shows it (small ones only). */
#define MAX_BODY_SHOWN 2048

static void add_body(json_t *detail, const ctl_op_audit *a)
{
    json_t *body = a->body_len <= MAX_BODY_SHOWN ? json_loadb(a->body, a->body_len, 0, NULL) : NULL;
    if (json_is_object(body) && json_object_size(body) == 0) {
        json_decref(body); /* "{}": nothing to show */
    } else if (json_is_object(body)) {
        redact(body);
        json_object_set_new(detail, "body", body);
    } else {
        json_decref(body);
        json_object_set_new(detail, "body_bytes", json_integer((json_int_t)a->body_len));
    }
}

/* The object's name or id: from the answer (a new job's id, a created object's name), else from
 * the path. */
static void object_of(const ctl_op_audit *a, const json_t *res, size_t kindlen, char *buf,
                      size_t cap)
{
    const json_t *id = json_object_get(res, "id");
    const char *name = json_string_value(json_object_get(res, "name"));
    if (!name) {
        char kind[64];
        snprintf(kind, sizeof(kind), "%.*s", (int)kindlen, a->kind);
        name = json_string_value(json_object_get(json_object_get(res, kind), "name"));
    }
    if (a->ref2) {
        snprintf(buf, cap, "%.*s/%s/%s", (int)kindlen, a->kind, a->ref, a->ref2);
    } else if (a->by_id && json_is_integer(id)) {
        snprintf(buf, cap, "%.*s/%lld", (int)kindlen, a->kind, (long long)json_integer_value(id));
    } else if (name || a->ref) {
        snprintf(buf, cap, "%.*s/%s", (int)kindlen, a->kind, name ? name : a->ref);
    } else {
        snprintf(buf, cap, "%.*s", (int)kindlen, a->kind);
    }
}

int ctl_audit_op(gpupoold *g, const ctl_op *op, gp_diag *d)
{
    const ctl_op_audit *a = &op->audit;
    if (!a->who || !a->action || (a->created_only && op->status != 201)) {
        return 0;
    }
    const json_t *res = op->result;
    size_t kindlen = a->kind == a->action_buf ? strcspn(a->kind, ".") : strlen(a->kind);
    char object[320];
    object_of(a, res, kindlen, object, sizeof(object));
    /* The object's tenant: a job's or user token's, or a tenant itself. */
    const char *tenant = json_string_value(json_object_get(res, "tenant"));
    if (!tenant && kindlen == 6 && strncmp(a->kind, "tenant", 6) == 0) {
        tenant = strchr(object, '/') ? strchr(object, '/') + 1 : NULL;
    }
    char request[320];
    snprintf(request, sizeof(request), "%s %s", a->method, a->path);
    json_t *detail = json_pack("{s:s}", "request", request);
    if (!detail) {
        return gp_diag_set(d, GP_ENOMEM, "audit log: out of memory");
    }
    const char *name = json_string_value(json_object_get(res, "name"));
    if (a->by_id && name) {
        json_object_set_new(detail, "name", json_string(name));
    }
    if (a->body) {
        add_body(detail, a);
    }
    int rc = append(g, a->who, NULL, tenant ? tenant : "", a->action, object, detail, d);
    json_decref(detail);
    return rc;
}
