/*
 * The translator's entry: each manifest (a `kind: List` standing for its items) dispatched by
 * apiVersion and kind, then the manifests that amend another object: a ResourceQuota its
 * namespace's tenant, an HPA its Deployment's service. A manifest with an error gives no
 * object, and an HPA or quota whose target has an error gives none either.
 */
#include "cli/k8s_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *k8s_pod(k8s_tr *t, const json_t *doc);
json_t *k8s_job(k8s_tr *t, const json_t *doc);
json_t *k8s_vcjob(k8s_tr *t, const json_t *doc);
json_t *k8s_deployment(k8s_tr *t, const json_t *doc);
json_t *k8s_hpa(k8s_tr *t, const json_t *doc, const char **target);
json_t *k8s_pclass(k8s_tr *t, const json_t *doc);
json_t *k8s_namespace(k8s_tr *t, const json_t *doc);
json_t *k8s_quota(k8s_tr *t, const json_t *doc, json_t *tenant);
json_t *k8s_queue(k8s_tr *t, const json_t *doc);

typedef json_t *kind_fn(k8s_tr *t, const json_t *doc);

/* The kinds that make an object of their own. */
static const struct kind {
    const char *api; /* apiVersion */
    const char *kind;
    gp_k8s_target target;
    kind_fn *fn;
} kinds[] = {
    {"v1", "Pod", GP_K8S_JOB, k8s_pod},
    {"batch/v1", "Job", GP_K8S_JOB, k8s_job},
    {"batch.volcano.sh/v1alpha1", "Job", GP_K8S_JOB, k8s_vcjob},
    {"apps/v1", "Deployment", GP_K8S_JOB, k8s_deployment},
    {"scheduling.k8s.io/v1", "PriorityClass", GP_K8S_PCLASS, k8s_pclass},
    {"v1", "Namespace", GP_K8S_TENANT, k8s_namespace},
    {"scheduling.volcano.sh/v1beta1", "Queue", GP_K8S_QUEUE, k8s_queue},
    {"scheduling.sigs.k8s.io/v1alpha1", "Queue", GP_K8S_QUEUE, k8s_queue},
    {NULL, NULL, 0, NULL},
};

/* [a-z0-9-], 1..63, alphanumeric at both ends: a gpupool object name. */
static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1])) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-')) {
            return 0;
        }
    }
    return 1;
}

static void add_object(k8s_tr *t, gp_k8s_target target, json_t *doc)
{
    gp_k8s_result *r = t->res;
    gp_k8s_object *o = realloc(r->objects, (r->nobjects + 1) * sizeof(*o));
    if (!o) {
        r->oom = true;
        json_decref(doc);
        return;
    }
    r->objects = o;
    o += r->nobjects++;
    *o = (gp_k8s_object){.target = target, .doc = doc, .source = t->source};
    snprintf(o->name, sizeof(o->name), "%s", t->name);
    snprintf(o->source_kind, sizeof(o->source_kind), "%s", t->where);
    snprintf(o->privileged_at, sizeof(o->privileged_at), "%s", t->privileged_at);
}

static gp_k8s_object *find_object(gp_k8s_result *r, gp_k8s_target target, const char *name,
                                  const char *job_kind)
{
    for (size_t i = 0; i < r->nobjects; i++) {
        gp_k8s_object *o = &r->objects[i];
        const char *k = json_string_value(json_object_get(o->doc, "kind"));
        if (o->target == target && strcmp(o->name, name) == 0 &&
            (!job_kind || (k && strcmp(k, job_kind) == 0))) {
            return o;
        }
    }
    return NULL;
}

/* An earlier object that doc would be too: the same kind and name (for jobs, of the same
 * tenant), or NULL. Applying both would make one of them twice. */
static const gp_k8s_object *same_object(const gp_k8s_result *r, gp_k8s_target target,
                                        const json_t *doc)
{
    const char *name = json_string_value(json_object_get(doc, "name"));
    const json_t *tenant = json_object_get(doc, "tenant");
    for (size_t i = 0; name && i < r->nobjects; i++) {
        const gp_k8s_object *o = &r->objects[i];
        if (o->target == target && strcmp(o->name, name) == 0 &&
            (target != GP_K8S_JOB || json_equal(json_object_get(o->doc, "tenant"), tenant) ||
             (!tenant && !json_object_get(o->doc, "tenant")))) {
            return o;
        }
    }
    return NULL;
}

/* Sets up t for doc: its kind and name, checked. 0, or -1 (an error added). */
static int begin(k8s_tr *t, const json_t *doc)
{
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    const json_t *meta = json_object_get(doc, "metadata");
    t->name = json_string_value(json_object_get(meta, "name"));
    t->doc = doc;
    t->errors = 0;
    t->privileged_at[0] = '\0';
    if (kind && t->name) {
        snprintf(t->where, sizeof(t->where), "%s/%s", kind, t->name);
    } else {
        snprintf(t->where, sizeof(t->where), "document %d", t->source + 1);
    }
    if (!json_is_object(doc) || !kind || !json_string_value(json_object_get(doc, "apiVersion"))) {
        k8s_error(t, "", "not a Kubernetes object: needs apiVersion and kind");
        return -1;
    }
    if (!json_is_object(meta) || !t->name) {
        k8s_error(t, "metadata.name", "required");
        return -1;
    }
    if (!name_ok(t->name)) {
        k8s_error(t, "metadata.name",
                  "%s: a gpupool name is 1 to 63 of [a-z0-9-], starting and ending with a letter "
                  "or digit",
                  t->name);
        return -1;
    }
    static const k8s_key meta_keys[] = {
        {"name", NULL}, {"namespace", NULL}, {"labels", NULL}, {"annotations", NULL}, {NULL, NULL}};
    k8s_check_keys(t, meta, "metadata", meta_keys);
    return 0;
}

static void one(k8s_tr *t, const json_t *doc)
{
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    if (kind &&
        (strcmp(kind, "HorizontalPodAutoscaler") == 0 || strcmp(kind, "ResourceQuota") == 0)) {
        return; /* the second pass */
    }
    if (begin(t, doc) < 0) {
        return;
    }
    const char *api = json_string_value(json_object_get(doc, "apiVersion"));
    for (const struct kind *k = kinds; k->api; k++) {
        if (strcmp(k->api, api) == 0 && strcmp(k->kind, kind) == 0) {
            json_t *o = k->fn(t, doc);
            const gp_k8s_object *twin = o ? same_object(t->res, k->target, o) : NULL;
            if (twin) {
                k8s_error(t, "metadata.name", "%s: %s comes earlier with this name", t->name,
                          twin->source_kind);
            }
            if (o && t->errors == 0) {
                add_object(t, k->target, o);
            } else {
                json_decref(o);
            }
            return;
        }
    }
    k8s_error(t, "kind",
              "%s %s: not supported (gpupool applies Pod, batch/v1 Job, Volcano Job, Deployment, "
              "HorizontalPodAutoscaler, PriorityClass, Namespace, ResourceQuota and Queue)",
              api, kind);
}

/* A ResourceQuota: its namespace's tenant, made when no Namespace manifest made it. */
static void quota(k8s_tr *t, const json_t *doc)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(doc, "metadata"), "namespace"));
    if (!ns && t->ctx) {
        ns = t->ctx->ns;
    }
    if (!ns || !name_ok(ns)) {
        k8s_error(t, "metadata.namespace", "required: the tenant the quota limits ([a-z0-9-])");
        return;
    }
    gp_k8s_object *o = find_object(t->res, GP_K8S_TENANT, ns, NULL);
    json_t *tenant = o ? json_deep_copy(o->doc) : json_pack("{s:s}", "name", ns);
    k8s_quota(t, doc, tenant);
    if (t->errors > 0) {
        json_decref(tenant);
        return;
    }
    if (o) {
        json_decref(o->doc);
        o->doc = tenant;
        return;
    }
    const char *name = t->name;
    t->name = ns;
    add_object(t, GP_K8S_TENANT, tenant);
    t->name = name;
}

static void hpa(k8s_tr *t, const json_t *doc)
{
    const char *target = NULL;
    json_t *as = k8s_hpa(t, doc, &target);
    if (!as) {
        return;
    }
    gp_k8s_object *o = find_object(t->res, GP_K8S_JOB, target, "service");
    if (!o) {
        k8s_error(t, "spec.scaleTargetRef.name",
                  "no Deployment %s among these manifests (or it was refused): apply the HPA "
                  "with its Deployment",
                  target);
        json_decref(as);
        return;
    }
    json_int_t replicas = json_integer_value(json_object_get(o->doc, "replicas"));
    json_int_t hi = json_integer_value(json_object_get(as, "max_replicas"));
    if (replicas > hi) {
        k8s_warn(t, "spec.maxReplicas",
                 "the Deployment's %lld replicas are above it: the service starts with %lld",
                 (long long)replicas, (long long)hi);
        json_object_set_new(o->doc, "replicas", json_integer(hi));
    }
    json_object_set_new(o->doc, "autoscale", as);
}

/* The documents with each List replaced by its items (new array); sources[i] the index of the
 * document each came from. */
static json_t *flatten(const json_t *docs, int **sources)
{
    json_t *out = json_array();
    size_t cap = 0, n = 0, i;
    int *src = NULL;
    const json_t *d;
    json_array_foreach((json_t *)docs, i, d)
    {
        const char *kind = json_string_value(json_object_get(d, "kind"));
        const json_t *items = json_object_get(d, "items");
        int list = kind && strcmp(kind, "List") == 0 && json_is_array(items);
        size_t m = list ? json_array_size(items) : 1;
        for (size_t j = 0; j < m; j++) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                int *p = realloc(src, cap * sizeof(*p));
                if (!p) {
                    free(src);
                    json_decref(out);
                    return NULL;
                }
                src = p;
            }
            src[n++] = (int)i;
            json_array_append(out, list ? json_array_get(items, j) : (json_t *)d);
        }
    }
    *sources = src;
    return out;
}

void gp_k8s_translate(const json_t *docs, const gp_k8s_ctx *ctx, gp_k8s_result *out)
{
    *out = (gp_k8s_result){0};
    int *sources = NULL;
    json_t *all = flatten(docs, &sources);
    if (!all) {
        out->oom = true;
        return;
    }
    k8s_tr t = {.res = out, .ctx = ctx};
    size_t i;
    const json_t *d;
    json_array_foreach(all, i, d)
    {
        t.source = sources[i];
        one(&t, d);
    }
    for (int pass = 0; pass < 2; pass++) { /* quotas after Namespaces, HPAs after Deployments */
        json_array_foreach(all, i, d)
        {
            const char *kind = json_string_value(json_object_get(d, "kind"));
            const char *want = pass == 0 ? "ResourceQuota" : "HorizontalPodAutoscaler";
            if (!kind || strcmp(kind, want) != 0) {
                continue;
            }
            t.source = sources[i];
            if (begin(&t, d) < 0) {
                continue;
            }
            const char *api = json_string_value(json_object_get(d, "apiVersion"));
            if (pass == 0 && strcmp(api, "v1") == 0) {
                quota(&t, d);
            } else if (pass == 1 && strcmp(api, "autoscaling/v2") == 0) {
                hpa(&t, d);
            } else {
                k8s_error(&t, "apiVersion", "%s: not supported (%s)", api,
                          pass == 0 ? "v1" : "autoscaling/v2");
            }
        }
    }
    free(sources);
    json_decref(all);
}

void gp_k8s_result_fini(gp_k8s_result *r)
{
    for (size_t i = 0; i < r->nobjects; i++) {
        json_decref(r->objects[i].doc);
    }
    for (size_t i = 0; i < r->ndiags; i++) {
        free(r->diags[i].where);
        free(r->diags[i].path);
        free(r->diags[i].message);
    }
    free(r->objects);
    free(r->diags);
    *r = (gp_k8s_result){0};
}

size_t gp_k8s_count(const gp_k8s_result *r, gp_k8s_severity s)
{
    size_t n = 0;
    for (size_t i = 0; i < r->ndiags; i++) {
        n += r->diags[i].severity >= s;
    }
    return n;
}
