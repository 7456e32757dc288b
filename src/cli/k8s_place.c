/*
 * A pod's volumes and where it may run: volumeMounts against the pod's volumes (registered
 * gpupool volumes by claim name or hostPath, /dev/shm from a memory emptyDir), and nodeSelector,
 * tolerations, pod anti-affinity, topology spread and hostNetwork as the job spec's placement
 * fields (labels, node_selector, tolerations, spread, anti_affinity, network).
 */
#include "cli/k8s_impl.h"

#include <stdio.h>
#include <string.h>

void k8s_pod_volumes(k8s_tr *t, const json_t *spec, const json_t *c, const char *path,
                     const char *cpath, json_t *job);
void k8s_pod_placement(k8s_tr *t, const json_t *spec, const char *path, json_t *job, int gang);

/* The volume named name in the pod's volumes, or NULL. */
static const json_t *pod_volume(const json_t *spec, const char *name)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(spec, "volumes"), i, v)
    {
        const char *n = json_string_value(json_object_get(v, "name"));
        if (n && strcmp(n, name) == 0) {
            return v;
        }
    }
    return NULL;
}

/* The registered volume whose path is path, or NULL. */
static const char *volume_at(const k8s_tr *t, const char *path)
{
    size_t i;
    const json_t *v;
    if (!t->ctx || !t->ctx->volumes) {
        return NULL;
    }
    json_array_foreach(t->ctx->volumes, i, v)
    {
        const char *p = json_string_value(json_object_get(v, "path"));
        if (p && strcmp(p, path) == 0) {
            return json_string_value(json_object_get(v, "name"));
        }
    }
    return NULL;
}

static void add_volume(k8s_tr *t, json_t *job, const char *name, int ro, const char *mpath,
                       const char *mount_path)
{
    json_t *vols = json_object_get(job, "volumes");
    if (!vols) {
        vols = json_array();
        k8s_set(t, job, "volumes", vols);
    }
    json_array_append_new(vols, json_sprintf("%s%s", name, ro ? ":ro" : ""));
    char want[K8S_PATH_MAX];
    snprintf(want, sizeof(want), "/data/%s", name);
    if (mount_path && strcmp(mount_path, want) != 0) {
        char q[K8S_PATH_MAX];
        k8s_warn(t, k8s_join(q, mpath, "mountPath"),
                 "not honoured: gpupool mounts volume %s at %s (GPUPOOL_DATA_DIR/%s), not at %s",
                 name, want, name, mount_path);
    }
}

/* A memory emptyDir: /dev/shm's size. */
static void shm(k8s_tr *t, const json_t *ed, const char *mount_path, const char *vpath,
                const char *mpath, json_t *job)
{
    char q[K8S_PATH_MAX];
    if (!mount_path || strcmp(mount_path, "/dev/shm") != 0) {
        k8s_warn(t, k8s_join(q, mpath, "mountPath"),
                 "not honoured: a memory emptyDir is honoured at /dev/shm only");
        return;
    }
    const json_t *sl = json_object_get(ed, "sizeLimit");
    long long mib;
    if (!sl) {
        k8s_warn(t, k8s_join(q, vpath, "emptyDir"),
                 "no sizeLimit: /dev/shm keeps gpupool's default size (half the job's memory)");
        return;
    }
    if (gp_k8s_mib(sl, &mib) < 0 || mib < 1) {
        k8s_error(t, k8s_join(q, vpath, "emptyDir.sizeLimit"), "not a memory quantity (e.g. 32Gi)");
        return;
    }
    k8s_set(t, job, "shm_size_mib", json_integer(mib));
}

/* One volumeMount of the container at mpath. */
static void mount(k8s_tr *t, const json_t *spec, const json_t *m, const char *path,
                  const char *mpath, json_t *job)
{
    char q[K8S_PATH_MAX], vpath[K8S_PATH_MAX];
    const char *name = k8s_str(t, m, mpath, "name");
    const char *mp = k8s_str(t, m, mpath, "mountPath");
    int ro = json_is_true(json_object_get(m, "readOnly"));
    if (json_object_get(m, "subPath")) {
        k8s_warn(t, k8s_join(q, mpath, "subPath"), "not honoured: the whole volume is mounted");
    }
    const json_t *v = name ? pod_volume(spec, name) : NULL;
    if (!v) {
        k8s_error(t, k8s_join(q, mpath, "name"), "no volume of the pod has this name");
        return;
    }
    size_t idx = 0;
    const json_t *w;
    json_array_foreach(json_object_get(spec, "volumes"), idx, w)
    {
        if (w == v) {
            break;
        }
    }
    k8s_index(vpath, k8s_join(q, path, "volumes"), idx);
    const json_t *pvc = json_object_get(v, "persistentVolumeClaim");
    const json_t *hp = json_object_get(v, "hostPath");
    const json_t *ed = json_object_get(v, "emptyDir");
    if (pvc) {
        const char *claim =
            k8s_str(t, pvc, k8s_join(q, vpath, "persistentVolumeClaim"), "claimName");
        if (!claim) {
            k8s_error(t, k8s_join(q, q, "claimName"), "required");
            return;
        }
        ro = ro || json_is_true(json_object_get(pvc, "readOnly"));
        add_volume(t, job, claim, ro, mpath, mp);
    } else if (hp) {
        const char *hpath = k8s_str(t, hp, k8s_join(q, vpath, "hostPath"), "path");
        const char *reg = hpath ? volume_at(t, hpath) : NULL;
        if (!reg) {
            k8s_warn(t, k8s_join(q, vpath, "hostPath"),
                     "not honoured: no registered volume has path %s (an admin registers one: "
                     "gpupool volume create NAME --path %s); not mounted",
                     hpath ? hpath : "?", hpath ? hpath : "PATH");
            return;
        }
        add_volume(t, job, reg, ro, mpath, mp);
    } else if (ed) {
        const char *medium = json_string_value(json_object_get(ed, "medium"));
        if (medium && strcmp(medium, "Memory") == 0) {
            shm(t, ed, mp, vpath, mpath, job);
        } else {
            k8s_warn(t, k8s_join(q, vpath, "emptyDir"),
                     "not mounted: a job's scratch space is its own working directory "
                     "(/gpupool/work); %s is in the job's own file system",
                     mp ? mp : "the mount path");
        }
    } else {
        k8s_error(t, vpath,
                  "not supported: gpupool mounts registered volumes (persistentVolumeClaim by "
                  "claim name, hostPath by path) and memory emptyDirs only");
    }
}

void k8s_pod_volumes(k8s_tr *t, const json_t *spec, const json_t *c, const char *path,
                     const char *cpath, json_t *job)
{
    char q[K8S_PATH_MAX], q2[K8S_PATH_MAX];
    const json_t *ms = k8s_arr(t, c, cpath, "volumeMounts");
    k8s_join(q, cpath, "volumeMounts");
    size_t i;
    const json_t *m;
    json_array_foreach((json_t *)ms, i, m)
    {
        mount(t, spec, m, path, k8s_index(q2, q, i), job);
    }
}

static void tolerations(k8s_tr *t, const json_t *tl, const char *path, json_t *job)
{
    static const char *const fields[][2] = {
        {"key", "key"}, {"operator", "operator"}, {"value", "value"}, {"effect", "effect"}};
    static const k8s_key keys[] = {
        {"key", NULL},
        {"operator", NULL},
        {"value", NULL},
        {"effect", NULL},
        {"tolerationSeconds", "not honoured: a tolerated NoExecute taint is tolerated for good"},
        {NULL, NULL},
    };
    json_t *out = json_array();
    char q[K8S_PATH_MAX];
    size_t i;
    const json_t *e;
    json_array_foreach((json_t *)tl, i, e)
    {
        k8s_index(q, path, i);
        k8s_check_keys(t, e, q, keys);
        json_t *o = json_object();
        for (size_t f = 0; f < 4; f++) {
            const char *v = k8s_str(t, e, q, fields[f][0]);
            if (v) {
                k8s_set(t, o, fields[f][1], json_string(v));
            }
        }
        if (!json_object_get(o, "operator")) {
            k8s_set(t, o, "operator", json_string("Equal"));
        }
        json_array_append_new(out, o);
    }
    k8s_set(t, job, "tolerations", out);
}

static void spread(k8s_tr *t, const json_t *sl, const char *path, json_t *job)
{
    static const k8s_key keys[] = {
        {"maxSkew", NULL},       {"topologyKey", NULL}, {"whenUnsatisfiable", NULL},
        {"labelSelector", NULL}, {NULL, NULL},
    };
    json_t *out = json_array();
    char q[K8S_PATH_MAX], q2[K8S_PATH_MAX];
    size_t i;
    const json_t *e;
    json_array_foreach((json_t *)sl, i, e)
    {
        k8s_index(q, path, i);
        k8s_check_keys(t, e, q, keys);
        const char *key = k8s_str(t, e, q, "topologyKey");
        json_int_t skew = json_integer_value(json_object_get(e, "maxSkew"));
        if (!key || skew < 1) {
            k8s_error(t, q, "needs topologyKey and a maxSkew of at least 1");
            continue;
        }
        const char *when = json_string_value(json_object_get(e, "whenUnsatisfiable"));
        if (when && strcmp(when, "DoNotSchedule") != 0) {
            k8s_warn(t, k8s_join(q2, q, "whenUnsatisfiable"),
                     "not honoured: gpupool keeps the skew strictly (DoNotSchedule)");
        }
        if (json_object_get(e, "labelSelector")) {
            k8s_warn(t, k8s_join(q2, q, "labelSelector"),
                     "not honoured: the skew is counted over the job's own replicas");
        }
        json_array_append_new(
            out, json_pack("{s:s, s:I}", "topology_key", key, "max_skew", (json_int_t)skew));
    }
    k8s_set(t, job, "spread", out);
}

/* podAntiAffinity on kubernetes.io/hostname (required): one replica per node. */
static void affinity(k8s_tr *t, const json_t *a, const char *path, json_t *job)
{
    char q[K8S_PATH_MAX], q2[K8S_PATH_MAX];
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        k8s_join(q, path, k);
        if (strcmp(k, "podAntiAffinity") != 0) {
            k8s_warn(t, q, "not supported: use nodeSelector (node labels)");
            continue;
        }
        const char *k2;
        json_t *v2;
        json_object_foreach(v, k2, v2)
        {
            k8s_join(q2, q, k2);
            const json_t *term = json_array_get(v2, 0);
            const char *tk = json_string_value(json_object_get(term, "topologyKey"));
            if (strcmp(k2, "requiredDuringSchedulingIgnoredDuringExecution") == 0 &&
                json_array_size(v2) == 1 && tk && strcmp(tk, "kubernetes.io/hostname") == 0) {
                k8s_set(t, job, "anti_affinity", json_true());
            } else {
                k8s_warn(t, q2,
                         "not supported: only a required term on kubernetes.io/hostname (one "
                         "replica per node)");
            }
        }
    }
}

void k8s_pod_placement(k8s_tr *t, const json_t *spec, const char *path, json_t *job, int gang)
{
    char q[K8S_PATH_MAX];
    const json_t *ns = k8s_obj(t, spec, path, "nodeSelector");
    if (ns && json_object_size(ns) > 0) {
        json_t *sel = json_object();
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)ns, k, v)
        {
            if (!json_is_string(v)) {
                k8s_error(t, k8s_join(q, k8s_join(q, path, "nodeSelector"), k), "must be a string");
                continue;
            }
            k8s_set(t, sel, k, json_string(json_string_value(v)));
        }
        k8s_set(t, job, "node_selector", sel);
    }
    const json_t *tl = k8s_arr(t, spec, path, "tolerations");
    if (tl && json_array_size(tl) > 0) {
        tolerations(t, tl, k8s_join(q, path, "tolerations"), job);
    }
    const json_t *sp = k8s_arr(t, spec, path, "topologySpreadConstraints");
    if (sp && json_array_size(sp) > 0) {
        spread(t, sp, k8s_join(q, path, "topologySpreadConstraints"), job);
    }
    const json_t *af = k8s_obj(t, spec, path, "affinity");
    if (af) {
        affinity(t, af, k8s_join(q, path, "affinity"), job);
    }
    const json_t *hn = json_object_get(spec, "hostNetwork");
    const char *kind = json_string_value(json_object_get(job, "kind"));
    if (json_is_true(hn)) {
        if (kind) {
            k8s_error(t, k8s_join(q, path, "hostNetwork"),
                      "a service runs in a network namespace of its own: hostNetwork is refused");
        } else {
            k8s_set(t, job, "network", json_string("host"));
        }
    } else if (!kind && gang) {
        /* Pods of a Job reach each other over the pod network; a gang's replicas over the
         * nodes'. */
        k8s_warn(t, k8s_join(q, path, "hostNetwork"),
                 "not given: a gang's replicas run on the nodes' network, where they reach each "
                 "other (as pods do over the pod network)");
        k8s_set(t, job, "network", json_string("host"));
    } else if (!kind) {
        k8s_set(t, job, "network", json_string("private"));
    }
}
