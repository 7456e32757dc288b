/*
 * The workloads: Pod, batch/v1 Job, Volcano Job and Deployment as job specs (the pod template
 * through k8s_pod_job), and a HorizontalPodAutoscaler as its Deployment's autoscale.
 */
#include "cli/k8s_impl.h"

#include <stdio.h>
#include <string.h>

json_t *k8s_pod(k8s_tr *t, const json_t *doc);
json_t *k8s_job(k8s_tr *t, const json_t *doc);
json_t *k8s_vcjob(k8s_tr *t, const json_t *doc);
json_t *k8s_deployment(k8s_tr *t, const json_t *doc);
json_t *k8s_hpa(k8s_tr *t, const json_t *doc, const char **target);

#define MAX_RESTARTS 1000

static const k8s_key top_keys[] = {
    {"apiVersion", NULL},
    {"kind", NULL},
    {"metadata", NULL},
    {"spec", NULL},
    {"status", "not kept: written by Kubernetes"},
    {NULL, NULL},
};

json_t *k8s_pod(k8s_tr *t, const json_t *doc)
{
    k8s_check_keys(t, doc, "", top_keys);
    const json_t *meta = json_object_get(doc, "metadata");
    const json_t *spec = k8s_obj(t, doc, "", "spec");
    if (!spec) {
        k8s_error(t, "spec", "required");
        return NULL;
    }
    json_t *job = k8s_pod_job(t, meta, NULL, spec, "spec", "batch", 0);
    if (!job) {
        return NULL;
    }
    /* A pod is restarted in place for as long as it lives: gpupool's most restarts. */
    const char *rp = json_string_value(json_object_get(spec, "restartPolicy"));
    if (!rp || strcmp(rp, "Always") == 0) {
        k8s_set(t, job, "restart_policy", json_string("always"));
        k8s_set(t, job, "max_restarts", json_integer(MAX_RESTARTS));
    } else if (strcmp(rp, "OnFailure") == 0) {
        k8s_set(t, job, "restart_policy", json_string("on-failure"));
        k8s_set(t, job, "max_restarts", json_integer(MAX_RESTARTS));
    } else if (strcmp(rp, "Never") == 0) {
        k8s_set(t, job, "restart_policy", json_string("never"));
    } else {
        k8s_error(t, "spec.restartPolicy", "must be Always, OnFailure or Never");
    }
    return job;
}

/* A Job's or a task's template: metadata and spec. */
static const json_t *template_spec(k8s_tr *t, const json_t *tpl, const char *path,
                                   const json_t **tmeta)
{
    char q[K8S_PATH_MAX];
    static const k8s_key keys[] = {{"metadata", NULL}, {"spec", NULL}, {NULL, NULL}};
    if (!tpl) {
        k8s_error(t, path, "required: the pod template");
        return NULL;
    }
    static const k8s_key meta_keys[] = {
        {"labels", NULL},
        {"annotations", NULL},
        {"name", "not kept: the job is named by its owner's metadata.name"},
        {NULL, NULL},
    };
    k8s_check_keys(t, tpl, path, keys);
    *tmeta = json_object_get(tpl, "metadata");
    k8s_check_keys(t, *tmeta, k8s_join(q, path, "metadata"), meta_keys);
    const json_t *s = k8s_obj(t, tpl, path, "spec");
    if (!s) {
        k8s_error(t, k8s_join(q, path, "spec"), "required");
    }
    return s;
}

/* A Job's or a Deployment's top-level and spec keys checked, its spec into *spec and its pod
 * template's spec returned (NULL: an error was recorded), the template's metadata in *tmeta. */
static const json_t *workload_spec(k8s_tr *t, const json_t *doc, const k8s_key *keys,
                                   const json_t **spec, const json_t **tmeta)
{
    k8s_check_keys(t, doc, "", top_keys);
    *spec = k8s_obj(t, doc, "", "spec");
    k8s_check_keys(t, *spec, "spec", keys);
    return template_spec(t, json_object_get(*spec, "template"), "spec.template", tmeta);
}

static int positive(k8s_tr *t, const json_t *o, const char *key, const char *path, int dflt, int hi)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        return dflt;
    }
    char q[K8S_PATH_MAX];
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > hi) {
        k8s_error(t, k8s_join(q, path, key), "must be a whole number from 0 to %d", hi);
        return -1;
    }
    return (int)json_integer_value(v);
}

json_t *k8s_job(k8s_tr *t, const json_t *doc)
{
    static const k8s_key keys[] = {
        {"template", NULL},
        {"parallelism", NULL},
        {"completions", NULL},
        {"backoffLimit", NULL},
        {"activeDeadlineSeconds", NULL},
        {"ttlSecondsAfterFinished",
         "not honoured: an ended job is kept until the controller's retention removes it"},
        {"completionMode", "not honoured: replicas are told their rank (GPUPOOL_NODE_RANK)"},
        {"suspend", "not supported: a job runs when applied"},
        {"podFailurePolicy", "not supported: every failure counts against backoffLimit"},
        {"selector", "not needed: a job's replicas are its own"},
        {"manualSelector", "not needed: a job's replicas are its own"},
        {NULL, NULL},
    };
    const json_t *spec = NULL, *tmeta = NULL;
    const json_t *ps = workload_spec(t, doc, keys, &spec, &tmeta);
    int par = positive(t, spec, "parallelism", "spec", 1, 4096);
    int comp = positive(t, spec, "completions", "spec", par, 4096);
    int backoff = positive(t, spec, "backoffLimit", "spec", 6, 1 << 30);
    if (!ps || par < 0 || comp < 0 || backoff < 0) {
        return NULL;
    }
    if (par == 0) {
        k8s_error(t, "spec.parallelism", "must be at least 1");
        return NULL;
    }
    if (comp != par) {
        k8s_warn(t, "spec.completions",
                 "not honoured: gpupool runs the %d replicas of parallelism together once (a "
                 "gang), not %d completions",
                 par, comp);
    }
    json_t *job = k8s_pod_job(t, json_object_get(doc, "metadata"), tmeta, ps, "spec.template.spec",
                              "batch", par > 1);
    if (!job) {
        return NULL;
    }
    const char *rp = json_string_value(json_object_get(ps, "restartPolicy"));
    if (!rp || (strcmp(rp, "OnFailure") != 0 && strcmp(rp, "Never") != 0)) {
        k8s_error(t, "spec.template.spec.restartPolicy", "required: OnFailure or Never");
    }
    /* Kubernetes retries a failed Job's pod either way (in place or anew) up to backoffLimit. */
    k8s_set(t, job, "replicas", json_integer(par));
    k8s_set(t, job, "restart_policy", json_string(backoff > 0 ? "on-failure" : "never"));
    k8s_set(t, job, "max_restarts", json_integer(backoff > MAX_RESTARTS ? MAX_RESTARTS : backoff));
    json_int_t ads = json_integer_value(json_object_get(spec, "activeDeadlineSeconds"));
    if (ads > 0) {
        k8s_set(t, job, "max_runtime", json_sprintf("%llds", (long long)ads));
    }
    return job;
}

/* A Volcano Job's one task: its replicas and template. */
static json_t *vc_task(k8s_tr *t, const json_t *doc, const json_t *spec, int *replicas)
{
    static const k8s_key task_keys[] = {
        {"name", NULL},
        {"replicas", NULL},
        {"template", NULL},
        {"minAvailable", "not honoured: a gang starts all its replicas together"},
        {"policies", "not supported: a failed replica is restarted (maxRetry) or ends the job"},
        {"maxRetry", "not honoured: the job's maxRetry counts"},
        {NULL, NULL},
    };
    const json_t *tasks = k8s_arr(t, spec, "spec", "tasks");
    if (!tasks || json_array_size(tasks) == 0) {
        k8s_error(t, "spec.tasks", "required: one task");
        return NULL;
    }
    if (json_array_size(tasks) > 1) {
        k8s_error(t, "spec.tasks[1]",
                  "not supported: a gpupool gang runs one pod template (give one task; run a "
                  "master as rank 0, GPUPOOL_NODE_RANK)");
        return NULL;
    }
    const json_t *task = json_array_get(tasks, 0);
    k8s_check_keys(t, task, "spec.tasks[0]", task_keys);
    *replicas = positive(t, task, "replicas", "spec.tasks[0]", 1, 4096);
    const json_t *tmeta = NULL;
    const json_t *ps =
        template_spec(t, json_object_get(task, "template"), "spec.tasks[0].template", &tmeta);
    if (!ps || *replicas < 1) {
        if (*replicas == 0) {
            k8s_error(t, "spec.tasks[0].replicas", "must be at least 1");
        }
        return NULL;
    }
    return k8s_pod_job(t, json_object_get(doc, "metadata"), tmeta, ps,
                       "spec.tasks[0].template.spec", "batch", *replicas > 1);
}

json_t *k8s_vcjob(k8s_tr *t, const json_t *doc)
{
    static const k8s_key keys[] = {
        {"tasks", NULL},
        {"minAvailable", NULL},
        {"queue", NULL},
        {"schedulerName", NULL},
        {"maxRetry", NULL},
        {"priorityClassName", NULL},
        {"plugins",
         "not needed: gpupool gives a gang's replicas their rank, master address and hostfile "
         "(GPUPOOL_NODE_RANK, MASTER_ADDR, GPUPOOL_HOSTFILE)"},
        {"policies", "not supported: a failed replica is restarted (maxRetry) or ends the job"},
        {"ttlSecondsAfterFinished",
         "not honoured: an ended job is kept until the controller's retention removes it"},
        {"volumes", "not supported: mount registered volumes through the task's template"},
        {NULL, NULL},
    };
    k8s_check_keys(t, doc, "", top_keys);
    const json_t *spec = k8s_obj(t, doc, "", "spec");
    if (!spec) {
        k8s_error(t, "spec", "required");
        return NULL;
    }
    k8s_check_keys(t, spec, "spec", keys);
    int replicas = 0;
    json_t *job = vc_task(t, doc, spec, &replicas);
    if (!job) {
        return NULL;
    }
    int minav = positive(t, spec, "minAvailable", "spec", replicas, 4096);
    if (minav >= 0 && minav != replicas) {
        k8s_warn(t, "spec.minAvailable",
                 "not honoured: a gang starts all its %d replicas together, not %d", replicas,
                 minav);
    }
    const char *sn = k8s_str(t, spec, "spec", "schedulerName");
    if (sn && strcmp(sn, "volcano") != 0) {
        k8s_warn(t, "spec.schedulerName", "not honoured: gpupool schedules every job itself");
    }
    const char *queue = k8s_str(t, spec, "spec", "queue");
    if (queue) {
        k8s_set(t, job, "queue", json_string(queue));
    }
    const char *pc = k8s_str(t, spec, "spec", "priorityClassName");
    if (pc) {
        k8s_set(t, job, "priority_class", json_string(pc));
    }
    int retry = positive(t, spec, "maxRetry", "spec", 3, MAX_RESTARTS);
    k8s_set(t, job, "replicas", json_integer(replicas));
    k8s_set(t, job, "restart_policy", json_string(retry > 0 ? "on-failure" : "never"));
    k8s_set(t, job, "max_restarts", json_integer(retry > 0 ? retry : 0));
    return job;
}

/* maxSurge / maxUnavailable: a count, or a percentage of replicas (surge rounded up,
 * unavailable down, as Kubernetes does). */
static int rollout_value(k8s_tr *t, const json_t *v, const char *path, int replicas, int up)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 4096) {
        return (int)json_integer_value(v);
    }
    const char *s = json_string_value(v);
    int pct;
    char end;
    if (s && sscanf(s, "%d%%%c", &pct, &end) == 1 && pct >= 0 && pct <= 100 &&
        s[strlen(s) - 1] == '%') {
        return up ? (replicas * pct + 99) / 100 : replicas * pct / 100;
    }
    k8s_error(t, path, "must be a count or a percentage");
    return -1;
}

static void strategy(k8s_tr *t, const json_t *spec, int replicas, json_t *job)
{
    const json_t *st = k8s_obj(t, spec, "spec", "strategy");
    if (!st) {
        return;
    }
    const char *type = json_string_value(json_object_get(st, "type"));
    if (type && strcmp(type, "RollingUpdate") != 0) {
        k8s_warn(t, "spec.strategy.type",
                 "not honoured: a service is always rolled (max_surge, max_unavailable)");
    }
    const json_t *ru = json_object_get(st, "rollingUpdate");
    if (!ru) {
        return;
    }
    int surge = 1, unavail = 0;
    const json_t *v = json_object_get(ru, "maxSurge");
    if (v) {
        surge = rollout_value(t, v, "spec.strategy.rollingUpdate.maxSurge", replicas, 1);
    }
    v = json_object_get(ru, "maxUnavailable");
    if (v) {
        unavail = rollout_value(t, v, "spec.strategy.rollingUpdate.maxUnavailable", replicas, 0);
    }
    if (surge == 0 && unavail == 0) {
        k8s_error(t, "spec.strategy.rollingUpdate", "maxSurge and maxUnavailable are both 0");
    } else if (surge >= 0 && unavail >= 0) {
        k8s_set(t, job, "update",
                json_pack("{s:i, s:i}", "max_surge", surge, "max_unavailable", unavail));
    }
}

/* The selector must pick the template's own pods: gpupool's replicas are the service's. */
static void selector(k8s_tr *t, const json_t *spec, const json_t *tmeta)
{
    const json_t *sel = json_object_get(spec, "selector");
    const json_t *ml = json_object_get(sel, "matchLabels");
    const json_t *labels = json_object_get(tmeta, "labels");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ml, k, v)
    {
        if (!json_equal(json_object_get(labels, k), v)) {
            k8s_error(t, "spec.selector.matchLabels",
                      "must match the template's labels (%s is not among them)", k);
            return;
        }
    }
    if (sel && json_object_size(sel) != (ml ? 1u : 0u)) {
        k8s_warn(t, "spec.selector", "not honoured: a service's replicas are its own");
    }
}

json_t *k8s_deployment(k8s_tr *t, const json_t *doc)
{
    static const k8s_key keys[] = {
        {"replicas", NULL},
        {"selector", NULL},
        {"template", NULL},
        {"strategy", NULL},
        {"minReadySeconds", "not honoured: a replica is available once its readiness passes"},
        {"revisionHistoryLimit", "not kept: gpupool keeps no old revisions"},
        {"progressDeadlineSeconds", "not honoured: a rolling update has no deadline"},
        {"paused", "not supported: a service's rollout cannot be paused"},
        {NULL, NULL},
    };
    const json_t *spec = NULL, *tmeta = NULL;
    const json_t *ps = workload_spec(t, doc, keys, &spec, &tmeta);
    int replicas = positive(t, spec, "replicas", "spec", 1, 4096);
    if (!ps || replicas < 0) {
        return NULL;
    }
    if (replicas == 0) {
        k8s_error(t, "spec.replicas", "must be at least 1: a service keeps one replica or more");
        return NULL;
    }
    selector(t, spec, tmeta);
    json_t *job = k8s_pod_job(t, json_object_get(doc, "metadata"), tmeta, ps, "spec.template.spec",
                              "service", 0);
    if (!job) {
        return NULL;
    }
    const char *rp = json_string_value(json_object_get(ps, "restartPolicy"));
    if (rp && strcmp(rp, "Always") != 0) {
        k8s_error(t, "spec.template.spec.restartPolicy", "must be Always (a service)");
    }
    if (!json_object_get(job, "port")) {
        k8s_error(t, "spec.template.spec.containers[0].ports",
                  "required: a service serves on a port (containerPort)");
    }
    k8s_set(t, job, "replicas", json_integer(replicas));
    strategy(t, spec, replicas, job);
    return job;
}
