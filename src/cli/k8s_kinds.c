/*
 * The manifests that are not workloads: PriorityClass, Namespace, ResourceQuota and both forms
 * of Queue, each as the gpupool object the controller keeps (docs/api.md: Tenants, Queues,
 * Priority classes).
 */
#include "cli/k8s_impl.h"

#include <stdio.h>
#include <string.h>

/* Defined here, used by k8s.c. */
json_t *k8s_pclass(k8s_tr *t, const json_t *doc);
json_t *k8s_namespace(k8s_tr *t, const json_t *doc);
json_t *k8s_quota(k8s_tr *t, const json_t *doc, json_t *tenant);
json_t *k8s_queue(k8s_tr *t, const json_t *doc);

json_t *k8s_pclass(k8s_tr *t, const json_t *doc)
{
    static const k8s_key keys[] = {
        {"apiVersion", NULL},    {"kind", NULL},        {"metadata", NULL},
        {"value", NULL},         {"description", NULL}, {"preemptionPolicy", NULL},
        {"globalDefault", NULL}, {NULL, NULL},
    };
    k8s_check_keys(t, doc, "", keys);
    const json_t *v = json_object_get(doc, "value");
    if (!json_is_integer(v) || json_integer_value(v) < -1000000000 ||
        json_integer_value(v) > 1000000000) {
        k8s_error(t, "value", "required: an integer from -1000000000 to 1000000000");
        return NULL;
    }
    const char *pp = k8s_str(t, doc, "", "preemptionPolicy");
    if (pp && strcmp(pp, "Never") != 0 && strcmp(pp, "PreemptLowerPriority") != 0) {
        k8s_error(t, "preemptionPolicy", "must be Never or PreemptLowerPriority");
        return NULL;
    }
    if (json_is_true(json_object_get(doc, "globalDefault"))) {
        k8s_warn(t, "globalDefault",
                 "not honoured: the default class is the controller's setting "
                 "jobs.default_priority_class");
    }
    /* Kubernetes' default policy is PreemptLowerPriority; gpupool's is Never: always explicit. */
    json_t *o = json_pack("{s:s, s:I, s:s}", "name", t->name, "value", json_integer_value(v),
                          "preemption_policy", pp ? pp : "PreemptLowerPriority");
    const char *desc = k8s_str(t, doc, "", "description");
    if (desc && o) {
        if (strlen(desc) >= 256) {
            k8s_error(t, "description", "must be under 256 bytes");
        }
        k8s_set(t, o, "description", json_string(desc));
    }
    return o;
}

json_t *k8s_namespace(k8s_tr *t, const json_t *doc)
{
    static const k8s_key keys[] = {
        {"apiVersion", NULL}, {"kind", NULL},
        {"metadata", NULL},   {"spec", "not honoured: a tenant has no finalizers"},
        {NULL, NULL},
    };
    k8s_check_keys(t, doc, "", keys);
    return json_pack("{s:s}", "name", t->name);
}

/* One quota key: requests.X or X is the tenant's limit of X; limits.X is not kept. */
static void quota_key(k8s_tr *t, const char *key, const json_t *v, const json_t *hard,
                      json_t *quota)
{
    char p[K8S_PATH_MAX], other[K8S_PATH_MAX];
    k8s_join(p, "spec.hard", key);
    if (strncmp(key, "limits.", 7) == 0) {
        snprintf(other, sizeof(other), "requests.%s", key + 7);
        k8s_warn(t, p,
                 "not honoured: a gpupool job has one amount (request and limit alike), so a "
                 "quota has one figure: %s is kept",
                 json_object_get(hard, other) ? other : "the request");
        return;
    }
    const char *name = strncmp(key, "requests.", 9) == 0 ? key + 9 : key;
    long long n;
    if (strcmp(name, "nvidia.com/gpu") == 0 || strncmp(name, "nvidia.com/gpu.", 15) == 0) {
        if (gp_k8s_count_value(v, &n) < 0) {
            k8s_error(t, p, "must be a whole number of GPUs");
            return;
        }
        if (name[14] == '.') {
            json_t *models = json_object_get(quota, "models");
            if (!models) {
                models = json_object();
                k8s_set(t, quota, "models", models);
            }
            k8s_set(t, models, name + 15, json_integer(n));
        } else {
            k8s_set(t, quota, "gpus", json_integer(n));
        }
    } else if (strcmp(name, "nvidia.com/gpumem") == 0 ||
               strcmp(name, "nvidia.com/gpu-memory") == 0 ||
               strcmp(name, "aliyun.com/gpu-mem") == 0) {
        if (gp_k8s_gpu_mib(v, &n) < 0) {
            k8s_error(t, p, "not a GPU memory figure (MiB, or a quantity such as 200Gi)");
            return;
        }
        k8s_set(t, quota, "gpu_memory_mib", json_integer(n));
    } else {
        k8s_warn(t, p, "not honoured: a tenant's quota limits GPUs, GPU memory and GPUs per model");
    }
}

json_t *k8s_quota(k8s_tr *t, const json_t *doc, json_t *tenant)
{
    static const k8s_key keys[] = {
        {"apiVersion", NULL}, {"kind", NULL}, {"metadata", NULL}, {"spec", NULL}, {NULL, NULL},
    };
    static const k8s_key spec_keys[] = {
        {"hard", NULL},
        {"scopes", "not honoured: the quota counts every job of the tenant"},
        {"scopeSelector", "not honoured: the quota counts every job of the tenant"},
        {NULL, NULL},
    };
    k8s_check_keys(t, doc, "", keys);
    const json_t *spec = k8s_obj(t, doc, "", "spec");
    k8s_check_keys(t, spec, "spec", spec_keys);
    const json_t *hard = spec ? k8s_obj(t, spec, "spec", "hard") : NULL;
    json_t *quota = json_object_get(tenant, "quota");
    if (!quota) {
        quota = json_object();
        k8s_set(t, tenant, "quota", quota);
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)hard, k, v)
    {
        quota_key(t, k, v, hard, quota);
    }
    return tenant;
}

/* v1alpha1's capabilities: [{name, value}]. */
static void capabilities(k8s_tr *t, const json_t *list, json_t *cap)
{
    char p[K8S_PATH_MAX];
    size_t i;
    const json_t *e;
    json_array_foreach((json_t *)list, i, e)
    {
        k8s_index(p, "spec.capabilities", i);
        const char *name = k8s_str(t, e, p, "name");
        if (!name || !json_object_get(e, "value")) {
            k8s_error(t, p, "needs name and value");
            continue;
        }
        k8s_queue_resource(t, name, json_object_get(e, "value"), k8s_join(p, p, "value"), cap);
    }
}

json_t *k8s_queue(k8s_tr *t, const json_t *doc)
{
    static const k8s_key keys[] = {
        {"apiVersion", NULL},
        {"kind", NULL},
        {"metadata", NULL},
        {"spec", NULL},
        {"status", "not kept: written by Kubernetes"},
        {NULL, NULL},
    };
    static const k8s_key spec_keys[] = {
        {"weight", NULL},
        {"capability", NULL},
        {"capabilities", NULL},
        {"guarantee", NULL},
        {"reclaimable", NULL},
        {"deserved", "not honoured: a queue's fair share follows its weight"},
        {"priorityClassName",
         "not honoured: a gpupool queue has no priority class; jobs name theirs "
         "(priorityClassName)"},
        {"preemptionPolicy",
         "not honoured: preemption is the priority class's (PriorityClass preemptionPolicy)"},
        {"priority", "not honoured: queues are ordered by fair share (weight)"},
        {NULL, NULL},
    };
    k8s_check_keys(t, doc, "", keys);
    const json_t *spec = k8s_obj(t, doc, "", "spec");
    k8s_check_keys(t, spec, "spec", spec_keys);
    json_t *q = json_pack("{s:s}", "name", t->name);
    const json_t *w = json_object_get(spec, "weight");
    if (w) {
        if (!json_is_number(w) || json_number_value(w) < 0.001 || json_number_value(w) > 1e6) {
            k8s_error(t, "spec.weight", "must be a number from 0.001 to 1000000");
        } else {
            k8s_set(t, q, "weight", json_real(json_number_value(w)));
        }
    }
    json_t *cap = json_object();
    const json_t *c = k8s_obj(t, spec, "spec", "capability");
    if (c) {
        k8s_queue_resources(t, c, "spec.capability", cap);
    }
    const json_t *cl = k8s_arr(t, spec, "spec", "capabilities");
    if (cl) {
        capabilities(t, cl, cap);
    }
    if (json_object_size(cap) > 0) {
        k8s_set(t, q, "capability", cap);
    } else {
        json_decref(cap);
    }
    const json_t *g = k8s_obj(t, spec, "spec", "guarantee");
    if (g) {
        json_t *gr = json_object();
        const json_t *res = json_object_get(g, "resource");
        if (json_object_size(g) != 1 || !json_is_object(res)) {
            k8s_error(t, "spec.guarantee", "must be {resource: {NAME: QUANTITY, ...}}");
        }
        k8s_queue_resources(t, res, "spec.guarantee.resource", gr);
        k8s_set(t, q, "guarantee", gr);
    }
    const json_t *r = json_object_get(spec, "reclaimable");
    if (r) {
        if (!json_is_boolean(r)) {
            k8s_error(t, "spec.reclaimable", "must be true or false");
        } else {
            k8s_set(t, q, "reclaimable", json_boolean(json_is_true(r)));
        }
    }
    return q;
}
