/*
 * A pod template as a job spec: the one container, its resources, environment, volumes,
 * probes and ports, and the pod's placement fields. The owner (Pod, Job, Deployment, Volcano
 * Job) sets what depends on it: replicas, restart policy, kind (k8s.c).
 */
#include "cli/k8s_impl.h"

#include "base/envname.h"

#include <stdio.h>
#include <string.h>

/* The pod's metadata, the job spec being built and what env fieldRefs resolve against. */
typedef struct pod {
    k8s_tr *t;
    json_t *job;
    json_t *labels, *annotations; /* borrowed from job */
    json_t *limits;               /* resource name -> value as written */
    const char *ns;
    int replicas_gang; /* a gang: launch variables are gpupool's */
} pod;

static const k8s_key pod_keys[] = {
    {"containers", NULL},
    {"restartPolicy", NULL},
    {"nodeSelector", NULL},
    {"tolerations", NULL},
    {"affinity", NULL},
    {"topologySpreadConstraints", NULL},
    {"hostNetwork", NULL},
    {"volumes", NULL},
    {"priorityClassName", NULL},
    {"activeDeadlineSeconds", NULL},
    {"initContainers", NULL},
    {"securityContext", NULL},
    {"dnsPolicy", "not honoured: a job resolves names as its node does (no cluster DNS)"},
    {"terminationGracePeriodSeconds",
     "not honoured: the agent's grace period applies (agent setting grace_seconds)"},
    {"serviceAccountName", "not supported: jobs have no Kubernetes service account"},
    {"serviceAccount", "not supported: jobs have no Kubernetes service account"},
    {"imagePullSecrets",
     "not honoured: images are pulled with the tenant's registry credentials (gpupool tenant "
     "registry set)"},
    {"schedulerName", "not honoured: gpupool schedules every job itself"},
    {"nodeName", "not honoured: gpupool places jobs; use nodeSelector kubernetes.io/hostname"},
    {NULL, NULL},
};

static const k8s_key container_keys[] = {
    {"name", NULL},
    {"image", NULL},
    {"imagePullPolicy", NULL},
    {"command", NULL},
    {"args", NULL},
    {"workingDir", NULL},
    {"env", NULL},
    {"resources", NULL},
    {"ports", NULL},
    {"volumeMounts", NULL},
    {"livenessProbe", NULL},
    {"readinessProbe", NULL},
    {"securityContext", NULL},
    {"startupProbe", "not supported: use readinessProbe's initialDelaySeconds"},
    {"envFrom", "not supported: give each variable in env"},
    {"lifecycle", "not supported: gpupool runs no lifecycle hooks"},
    {NULL, NULL},
};

/* A string-to-string map (labels, annotations, nodeSelector) merged into dst. */
static void string_map(k8s_tr *t, const json_t *m, const char *path, json_t *dst)
{
    const char *k;
    json_t *v;
    char p[K8S_PATH_MAX];
    json_object_foreach((json_t *)m, k, v)
    {
        if (!json_is_string(v)) {
            k8s_error(t, k8s_join(p, path, k), "must be a string");
            continue;
        }
        k8s_set(t, dst, k, json_string(json_string_value(v)));
    }
}

/* The key inside ['x'] or ["x"] at s into buf; the rest after it in *rest. */
static int bracket_key(const char *s, char *buf, size_t cap, const char **rest)
{
    if (s[0] != '[' || (s[1] != '\'' && s[1] != '"')) {
        return -1;
    }
    const char *end = strchr(s + 2, s[1]);
    if (!end || end[1] != ']' || (size_t)(end - s - 2) >= cap) {
        return -1;
    }
    memcpy(buf, s + 2, (size_t)(end - s - 2));
    buf[end - s - 2] = '\0';
    *rest = end + 2;
    return 0;
}

/* A fieldRef's value (a new string), or NULL with a diagnostic. */
static json_t *field_ref(pod *p, const char *fp, const char *path)
{
    k8s_tr *t = p->t;
    char key[256];
    const char *rest;
    if (strcmp(fp, "metadata.name") == 0) {
        return json_string(t->name);
    }
    if (strcmp(fp, "metadata.namespace") == 0) {
        return json_string(p->ns ? p->ns : "default");
    }
    if (strncmp(fp, "metadata.labels", 15) == 0 || strncmp(fp, "metadata.annotations", 20) == 0) {
        int lab = fp[9] == 'l';
        const char *b = fp + (lab ? 15 : 20);
        if (bracket_key(b, key, sizeof(key), &rest) == 0 && !*rest) {
            const json_t *v = json_object_get(lab ? p->labels : p->annotations, key);
            if (!v) {
                k8s_warn(t, path, "the pod has no %s %s: the value is empty, as in Kubernetes%s",
                         lab ? "label" : "annotation", key,
                         strstr(key, "rank") ? " (a gang's replicas get their rank in "
                                               "GPUPOOL_NODE_RANK and RANK)"
                                             : "");
            }
            return json_string(v ? json_string_value(v) : "");
        }
    }
    const char *lim = strstr(fp, ".resources.limits");
    if (strncmp(fp, "spec.containers[0]", 18) == 0 && lim && lim == fp + 18) {
        const char *b = lim + 17;
        if (*b == '.') {
            snprintf(key, sizeof(key), "%s", b + 1);
            rest = "";
        } else if (bracket_key(b, key, sizeof(key), &rest) < 0) {
            rest = "x";
        }
        const json_t *v = *rest ? NULL : json_object_get(p->limits, key);
        if (v) {
            return json_string(json_string_value(v));
        }
        if (!*rest) {
            k8s_error(t, path, "the container has no limit %s", key);
            return NULL;
        }
    }
    k8s_warn(t, path,
             "not supported: %s is not known when the job is submitted; the variable is left out",
             fp);
    return NULL;
}

/* One env entry into job.env. */
static void env_var(pod *p, const json_t *e, const char *path, json_t *env)
{
    k8s_tr *t = p->t;
    char q[K8S_PATH_MAX], q2[K8S_PATH_MAX];
    const char *name = k8s_str(t, e, path, "name");
    if (!name) {
        k8s_error(t, k8s_join(q, path, "name"), "required");
        return;
    }
    if (gp_env_reserved(name) || (p->replicas_gang && gp_env_gang_reserved(name))) {
        k8s_warn(t, k8s_join(q, path, "name"),
                 "not honoured: gpupool sets %s itself (from the GPUs and replicas it gives the "
                 "job); the variable is left out",
                 name);
        return;
    }
    const json_t *vf = json_object_get(e, "valueFrom");
    if (!vf) {
        const char *v = k8s_str(t, e, path, "value");
        k8s_set(t, env, name, json_string(v ? v : ""));
        return;
    }
    k8s_join(q, path, "valueFrom");
    const json_t *fr = json_object_get(vf, "fieldRef");
    const json_t *rr = json_object_get(vf, "resourceFieldRef");
    json_t *v = NULL;
    if (fr) {
        const char *fp = k8s_str(t, fr, k8s_join(q2, q, "fieldRef"), "fieldPath");
        v = fp ? field_ref(p, fp, k8s_join(q2, q2, "fieldPath")) : NULL;
    } else if (rr) {
        const char *res = k8s_str(t, rr, k8s_join(q2, q, "resourceFieldRef"), "resource");
        if (res && strncmp(res, "limits.", 7) == 0 && json_object_get(p->limits, res + 7)) {
            v = json_string(json_string_value(json_object_get(p->limits, res + 7)));
        } else {
            k8s_error(t, k8s_join(q2, q2, "resource"), "the container has no such limit");
        }
    } else {
        k8s_error(t, q,
                  "not supported: gpupool has no secrets or config maps to read from; give the "
                  "value (a secret: gpupool submit --secret-env)");
    }
    if (v) {
        k8s_set(t, env, name, v);
    }
}

static void env_list(pod *p, const json_t *c, const char *path)
{
    char q[K8S_PATH_MAX], q2[K8S_PATH_MAX];
    const json_t *env = k8s_arr(p->t, c, path, "env");
    if (!env || json_array_size(env) == 0) {
        return;
    }
    json_t *out = json_object();
    k8s_join(q, path, "env");
    size_t i;
    const json_t *e;
    json_array_foreach((json_t *)env, i, e)
    {
        env_var(p, e, k8s_index(q2, q, i), out);
    }
    k8s_set(p->t, p->job, "env", out);
}

/* A string list (command, args) copied into the job. */
static json_t *strings(k8s_tr *t, const json_t *a, const char *path)
{
    json_t *out = json_array();
    size_t i;
    const json_t *v;
    char q[K8S_PATH_MAX];
    json_array_foreach((json_t *)a, i, v)
    {
        if (json_is_string(v)) {
            json_array_append_new(out, json_string(json_string_value(v)));
        } else if (json_is_number(v)) {
            json_array_append_new(out, json_sprintf("%g", json_number_value(v)));
        } else {
            k8s_error(t, k8s_index(q, path, i), "must be a string");
        }
    }
    return out;
}

/* command and args: gpupool runs no image ENTRYPOINT, so args alone become the command when
 * they start with a program (not an option). */
static void command(k8s_tr *t, const json_t *c, const char *path, json_t *job)
{
    char q[K8S_PATH_MAX];
    const json_t *cmd = k8s_arr(t, c, path, "command");
    const json_t *args = k8s_arr(t, c, path, "args");
    if (cmd && json_array_size(cmd) > 0) {
        k8s_set(t, job, "command", strings(t, cmd, k8s_join(q, path, "command")));
        if (args) {
            k8s_set(t, job, "args", strings(t, args, k8s_join(q, path, "args")));
        }
        return;
    }
    const char *first = args ? json_string_value(json_array_get(args, 0)) : NULL;
    if (first && first[0] != '-' && first[0] != '\0') {
        k8s_warn(t, k8s_join(q, path, "command"),
                 "not given: gpupool does not run the image's ENTRYPOINT; args are run as the "
                 "command (%s ...)",
                 first);
        k8s_set(t, job, "command", strings(t, args, k8s_join(q, path, "args")));
        return;
    }
    k8s_error(t, k8s_join(q, path, "command"),
              "required: gpupool does not run the image's ENTRYPOINT; give the command%s",
              first ? " (args start with an option)" : "");
}

/* A securityContext: a container's (job: its job) or the pod's (job NULL). A container's
 * privileged is the job's privileged (gpupoold refuses it for a tenant an admin has not
 * allowed); the rest is refused or not honoured, with a warning. */
static void security(k8s_tr *t, const json_t *sc, const char *path, json_t *job)
{
    const char *k;
    json_t *v;
    char q[K8S_PATH_MAX];
    json_object_foreach((json_t *)sc, k, v)
    {
        k8s_join(q, path, k);
        if (job && strcmp(k, "privileged") == 0) {
            if (!json_is_boolean(v)) {
                k8s_error(t, q, "must be true or false");
            } else if (json_is_true(v)) {
                k8s_set(t, job, "privileged", json_true());
                snprintf(t->privileged_at, sizeof(t->privileged_at), "%s", q);
            }
        } else if (strcmp(k, "privileged") == 0 || strcmp(k, "allowPrivilegeEscalation") == 0) {
            if (json_is_true(v)) {
                k8s_warn(t, q,
                         "refused: left out; only a container's securityContext.privileged asks "
                         "for more privileges (a privileged job)");
            }
        } else if (strcmp(k, "capabilities") == 0) {
            if (json_object_get(v, "add")) {
                k8s_warn(t, q, "refused: jobs get no added capabilities; left out");
            }
        } else if (strcmp(k, "runAsNonRoot") == 0 && json_is_true(v)) {
            continue; /* jobs never run as root */
        } else {
            k8s_warn(t, q, "not honoured: jobs run as the node's job user, unprivileged");
        }
    }
}

/* The container's one port (services) and its named ports (for probes). */
static void ports(k8s_tr *t, const json_t *c, const char *path, json_t *job, int want)
{
    const json_t *ps = k8s_arr(t, c, path, "ports");
    char q[K8S_PATH_MAX], q2[K8S_PATH_MAX];
    k8s_join(q, path, "ports");
    size_t i;
    const json_t *p;
    json_array_foreach((json_t *)ps, i, p)
    {
        json_int_t port = json_integer_value(json_object_get(p, "containerPort"));
        k8s_index(q2, q, i);
        if (port < 1 || port > 65535) {
            k8s_error(t, k8s_join(q2, q2, "containerPort"), "must be from 1 to 65535");
        } else if (i == 0 && want) {
            k8s_set(t, job, "port", json_integer(port));
        } else if (!want) {
            k8s_warn(t, q2,
                     "not honoured: a batch job's ports are the node's (hostNetwork) or "
                     "its own namespace's, not published");
        } else {
            k8s_warn(t, q2,
                     "not routed: a service is reached on one port (the first, %lld); the "
                     "others only inside its network namespace",
                     (long long)json_integer_value(
                         json_object_get(json_array_get(ps, 0), "containerPort")));
        }
    }
}

/* The container: image, command, env, resources, ports, probes. */
static void container(pod *p, const json_t *c, const char *path, const char *job_kind)
{
    k8s_tr *t = p->t;
    json_t *job = p->job;
    char q[K8S_PATH_MAX];
    k8s_check_keys(t, c, path, container_keys);
    const char *image = k8s_str(t, c, path, "image");
    if (image) {
        k8s_set(t, job, "image", json_string(image));
    }
    const char *pull = k8s_str(t, c, path, "imagePullPolicy");
    if (pull) {
        k8s_set(t, job, "image_pull_policy", json_string(pull));
    }
    const char *wd = k8s_str(t, c, path, "workingDir");
    if (wd) {
        k8s_set(t, job, "working_dir", json_string(wd));
    }
    command(t, c, path, job);
    json_t *res = json_object();
    k8s_resources(t, c, path, res, p->limits);
    k8s_set(t, job, "resources", res);
    env_list(p, c, path);
    const json_t *sc = k8s_obj(t, c, path, "securityContext");
    if (sc) {
        security(t, sc, k8s_join(q, path, "securityContext"), job);
    }
    int service = strcmp(job_kind, "service") == 0;
    ports(t, c, path, job, service);
    const json_t *cports = json_object_get(c, "ports");
    static const char *const probes[][2] = {{"readinessProbe", "readiness_probe"},
                                            {"livenessProbe", "liveness_probe"}};
    for (int i = 0; i < 2; i++) {
        const json_t *pr = k8s_obj(t, c, path, probes[i][0]);
        if (!pr) {
            continue;
        }
        k8s_join(q, path, probes[i][0]);
        if (!service) {
            k8s_warn(t, q, "not honoured: only services (a Deployment) are probed");
            continue;
        }
        json_t *g = k8s_probe(t, pr, q, cports);
        if (g) {
            k8s_set(t, job, probes[i][1], g);
        }
    }
}

/* The pod's labels and annotations (the owner's, then the template's) and its namespace. */
static void metadata(pod *p, const json_t *meta, const json_t *tmeta, const char *tpath)
{
    k8s_tr *t = p->t;
    char q[K8S_PATH_MAX];
    p->labels = json_object();
    p->annotations = json_object();
    string_map(t, json_object_get(meta, "labels"), "metadata.labels", p->labels);
    string_map(t, json_object_get(meta, "annotations"), "metadata.annotations", p->annotations);
    if (tmeta) {
        string_map(t, json_object_get(tmeta, "labels"), k8s_join(q, tpath, "labels"), p->labels);
        string_map(t, json_object_get(tmeta, "annotations"), k8s_join(q, tpath, "annotations"),
                   p->annotations);
    }
    p->ns = json_string_value(json_object_get(meta, "namespace"));
    if (!p->ns && t->ctx) {
        p->ns = t->ctx->ns;
    }
    if (p->ns && strcmp(p->ns, "default") != 0) {
        k8s_set(t, p->job, "tenant", json_string(p->ns));
    }
    if (json_object_size(p->labels) > 0) {
        k8s_set(t, p->job, "labels", json_incref(p->labels));
    }
    if (json_object_size(p->annotations) > 0) {
        k8s_set(t, p->job, "annotations", json_incref(p->annotations));
    }
}

void k8s_pod_volumes(k8s_tr *t, const json_t *spec, const json_t *c, const char *path,
                     const char *cpath, json_t *job);
void k8s_pod_placement(k8s_tr *t, const json_t *spec, const char *path, json_t *job, int gang);

json_t *k8s_pod_job(k8s_tr *t, const json_t *meta, const json_t *tmeta, const json_t *spec,
                    const char *path, const char *job_kind, int gang)
{
    char q[K8S_PATH_MAX], tpath[K8S_PATH_MAX];
    int before = t->errors;
    pod p = {.t = t, .job = json_object(), .limits = json_object()};
    p.replicas_gang = gang;
    snprintf(tpath, sizeof(tpath), "%s", path);
    char *dot = strrchr(tpath, '.');
    if (dot) {
        snprintf(dot, sizeof(tpath) - (size_t)(dot - tpath), ".metadata");
    }
    k8s_set(t, p.job, "name", json_string(t->name));
    /* Kubernetes accepts a pod no node can hold yet and keeps it Pending: so does the job. */
    k8s_set(t, p.job, "allow_unschedulable", json_true());
    if (strcmp(job_kind, "batch") != 0) {
        k8s_set(t, p.job, "kind", json_string(job_kind));
    }
    metadata(&p, meta, tmeta, tpath);
    k8s_check_keys(t, spec, path, pod_keys);
    const json_t *cs = k8s_arr(t, spec, path, "containers");
    if (!cs || json_array_size(cs) == 0) {
        k8s_error(t, k8s_join(q, path, "containers"), "required: one container");
    } else {
        for (size_t i = 1; i < json_array_size(cs); i++) {
            k8s_error(t, k8s_index(q, k8s_join(q, path, "containers"), i),
                      "not supported: a job runs one container (run helpers in its command)");
        }
        k8s_index(q, k8s_join(q, path, "containers"), 0);
        container(&p, json_array_get(cs, 0), q, job_kind);
        k8s_pod_volumes(t, spec, json_array_get(cs, 0), path, q, p.job);
    }
    if (json_object_get(spec, "initContainers")) {
        k8s_error(t, k8s_join(q, path, "initContainers"),
                  "not supported: run the init steps at the start of the command");
    }
    const json_t *sc = k8s_obj(t, spec, path, "securityContext");
    if (sc) {
        security(t, sc, k8s_join(q, path, "securityContext"), NULL);
    }
    const char *pc = k8s_str(t, spec, path, "priorityClassName");
    if (pc) {
        k8s_set(t, p.job, "priority_class", json_string(pc));
    }
    json_int_t ads = json_integer_value(json_object_get(spec, "activeDeadlineSeconds"));
    if (ads > 0) {
        k8s_set(t, p.job, "max_runtime", json_sprintf("%llds", (long long)ads));
    }
    k8s_pod_placement(t, spec, path, p.job, gang);
    json_decref(p.labels);
    json_decref(p.annotations);
    json_decref(p.limits);
    if (t->errors > before) {
        json_decref(p.job);
        return NULL;
    }
    return p.job;
}
