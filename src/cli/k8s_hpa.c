/*
 * autoscaling/v2 HorizontalPodAutoscaler as the autoscale of the service its Deployment
 * becomes: min and max replicas, the first metric (GPU utilisation, GPU memory utilisation, or
 * a per-pod gauge read from the service's Prometheus endpoint) and the stabilisation windows.
 */
#include "cli/k8s_impl.h"

#include <stdio.h>
#include <string.h>

json_t *k8s_hpa(k8s_tr *t, const json_t *doc, const char **target);

/* A Resource metric: GPU or GPU memory utilisation. */
static int resource_metric(k8s_tr *t, const json_t *m, const char *path, json_t *as)
{
    char q[K8S_PATH_MAX];
    const json_t *r = json_object_get(m, "resource");
    const char *name = json_string_value(json_object_get(r, "name"));
    const json_t *target = json_object_get(r, "target");
    const char *type = json_string_value(json_object_get(target, "type"));
    const json_t *au = json_object_get(target, "averageUtilization");
    const char *metric = NULL;
    if (name && strcmp(name, "nvidia.com/gpu") == 0) {
        metric = "gpu_utilization";
    } else if (name && (strcmp(name, "nvidia.com/gpu-memory") == 0 ||
                        strcmp(name, "nvidia.com/gpumem") == 0)) {
        metric = "gpu_memory_utilization";
    }
    if (!metric) {
        k8s_error(t, k8s_join(q, path, "resource.name"),
                  "not supported: a service scales on nvidia.com/gpu or nvidia.com/gpu-memory "
                  "utilisation, or a Pods metric it exposes");
        return -1;
    }
    if (!type || strcmp(type, "Utilization") != 0 || !json_is_integer(au) ||
        json_integer_value(au) < 1 || json_integer_value(au) > 100) {
        k8s_error(t, k8s_join(q, path, "resource.target"),
                  "must be type Utilization with an averageUtilization from 1 to 100");
        return -1;
    }
    k8s_set(t, as, "metric", json_string(metric));
    k8s_set(t, as, "target", json_integer(json_integer_value(au)));
    return 0;
}

/* A Pods metric: a gauge every replica exposes at /metrics on the service's port. */
static int pods_metric(k8s_tr *t, const json_t *m, const char *path, json_t *as)
{
    char q[K8S_PATH_MAX];
    const json_t *p = json_object_get(m, "pods");
    const char *name = json_string_value(json_object_get(json_object_get(p, "metric"), "name"));
    const json_t *target = json_object_get(p, "target");
    const json_t *av = json_object_get(target, "averageValue");
    long long milli;
    if (!name || !av || gp_k8s_cpu_milli(av, &milli) < 0 || milli <= 0) {
        k8s_error(t, k8s_join(q, path, "pods"),
                  "needs metric.name and target.averageValue (a positive quantity)");
        return -1;
    }
    if (json_object_get(json_object_get(p, "metric"), "selector")) {
        k8s_warn(t, k8s_join(q, path, "pods.metric.selector"),
                 "not honoured: the gauge is read without label selection");
    }
    k8s_set(t, as, "metric", json_string("prometheus"));
    k8s_set(t, as, "target", json_real((double)milli / 1000.0));
    k8s_set(t, as, "prometheus", json_pack("{s:s}", "name", name));
    return 0;
}

static void behavior(k8s_tr *t, const json_t *spec, json_t *as)
{
    static const char *const dirs[][2] = {{"scaleUp", "scale_up_window"},
                                          {"scaleDown", "scale_down_window"}};
    char q[K8S_PATH_MAX];
    const json_t *b = json_object_get(spec, "behavior");
    for (int i = 0; b && i < 2; i++) {
        const json_t *d = json_object_get(b, dirs[i][0]);
        const json_t *w = json_object_get(d, "stabilizationWindowSeconds");
        if (json_is_integer(w) && json_integer_value(w) >= 0 && json_integer_value(w) <= 3600) {
            k8s_set(t, as, dirs[i][1], json_sprintf("%llds", (long long)json_integer_value(w)));
        }
        if (json_object_get(d, "policies") || json_object_get(d, "selectPolicy")) {
            snprintf(q, sizeof(q), "spec.behavior.%s.policies", dirs[i][0]);
            k8s_warn(t, q, "not honoured: gpupool scales straight to the wanted count");
        }
    }
}

json_t *k8s_hpa(k8s_tr *t, const json_t *doc, const char **target)
{
    static const k8s_key keys[] = {
        {"scaleTargetRef", NULL}, {"minReplicas", NULL}, {"maxReplicas", NULL},
        {"metrics", NULL},        {"behavior", NULL},    {NULL, NULL},
    };
    char q[K8S_PATH_MAX];
    const json_t *spec = k8s_obj(t, doc, "", "spec");
    k8s_check_keys(t, spec, "spec", keys);
    const json_t *ref = json_object_get(spec, "scaleTargetRef");
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    *target = json_string_value(json_object_get(ref, "name"));
    if (!kind || strcmp(kind, "Deployment") != 0 || !*target) {
        k8s_error(t, "spec.scaleTargetRef", "must name a Deployment (kind and name)");
        return NULL;
    }
    const json_t *mn = json_object_get(spec, "minReplicas");
    const json_t *mx = json_object_get(spec, "maxReplicas");
    json_int_t lo = mn ? json_integer_value(mn) : 1, hi = json_integer_value(mx);
    if (lo < 1 || hi < lo || hi > 4096) {
        k8s_error(t, "spec.maxReplicas",
                  "needs 1 <= minReplicas <= maxReplicas <= 4096 (maxReplicas is required)");
        return NULL;
    }
    json_t *as = json_pack("{s:I, s:I}", "min_replicas", lo, "max_replicas", hi);
    const json_t *metrics = k8s_arr(t, spec, "spec", "metrics");
    if (!metrics || json_array_size(metrics) == 0) {
        /* Kubernetes' default: 80% CPU; gpupool scales on GPUs. */
        k8s_warn(t, "spec.metrics", "not given: the service scales on GPU utilisation, 80%%");
        k8s_set(t, as, "metric", json_string("gpu_utilization"));
        k8s_set(t, as, "target", json_integer(80));
    } else {
        const json_t *m = json_array_get(metrics, 0);
        const char *type = json_string_value(json_object_get(m, "type"));
        int rc = -1;
        k8s_index(q, "spec.metrics", 0);
        if (type && strcmp(type, "Resource") == 0) {
            rc = resource_metric(t, m, q, as);
        } else if (type && strcmp(type, "Pods") == 0) {
            rc = pods_metric(t, m, q, as);
        } else {
            k8s_error(t, k8s_join(q, q, "type"),
                      "not supported: a service scales on a Resource or a Pods metric");
        }
        for (size_t i = 1; i < json_array_size(metrics); i++) {
            k8s_warn(t, k8s_index(q, "spec.metrics", i),
                     "not honoured: a service scales on one metric (the first)");
        }
        if (rc < 0) {
            json_decref(as);
            return NULL;
        }
    }
    behavior(t, spec, as);
    return as;
}
