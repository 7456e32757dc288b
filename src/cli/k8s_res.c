/*
 * Resource names: a container's limits and requests as gpupool's resources, and the resource
 * maps of queues and quotas. Which device plugin a name comes from decides its unit
 * (REFERENCE: NVIDIA's device plugin, HAMi, Alibaba's gpushare, vGPU); the mapping table is in
 * docs/kubernetes.md.
 *
 * One value per resource: the limit when there is one, else the request. gpupool reserves what
 * it enforces, so a request below its limit is raised to it (with a warning).
 */
#include "cli/k8s_impl.h"

#include <stdio.h>
#include <string.h>

/* What a container asks of its GPU, gathered before it is checked as a whole. */
typedef struct gpu_ask {
    long long gpus;    /* nvidia.com/gpu or nvidia.com/gpu.<model> */
    const char *model; /* <model> of nvidia.com/gpu.<model> */
    const char *mig;   /* <profile> of nvidia.com/mig-<profile> */
    long long mig_count;
    long long vgpus;   /* nvidia.com/vgpu */
    long long mem_mib; /* gpumem, gpu-memory, vgpu-memory, aliyun gpu-mem */
    long long cores;   /* gpucores, aliyun gpu-core */
    long long mem_pct; /* gpumem-percentage */
    char gpu_path[K8S_PATH_MAX];
} gpu_ask;

static const char *const mem_names[] = {"nvidia.com/gpumem", "nvidia.com/gpu-memory",
                                        "nvidia.com/vgpu-memory", "aliyun.com/gpu-mem", NULL};
static const char *const core_names[] = {"nvidia.com/gpucores", "aliyun.com/gpu-core", NULL};

static int in_list(const char *const *list, const char *s)
{
    for (; *list; list++) {
        if (strcmp(*list, s) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The value as written, for env fieldRefs ("8", "16Gi"). */
static json_t *as_written(const json_t *v)
{
    if (json_is_string(v)) {
        return json_string(json_string_value(v));
    }
    if (json_is_integer(v)) {
        return json_sprintf("%lld", (long long)json_integer_value(v));
    }
    return json_sprintf("%g", json_number_value(v));
}

static int count_of(k8s_tr *t, const json_t *v, const char *path, long long lo, long long hi,
                    long long *out)
{
    if (gp_k8s_count_value(v, out) < 0 || *out < lo || *out > hi) {
        k8s_error(t, path, "must be a whole number from %lld to %lld", lo, hi);
        return -1;
    }
    return 0;
}

/* One named resource into res or ask. 0, or -1 after an error. */
static int one_resource(k8s_tr *t, const char *name, const json_t *v, const char *path, json_t *res,
                        gpu_ask *g)
{
    long long n;
    if (strcmp(name, "cpu") == 0) {
        if (gp_k8s_cpu_milli(v, &n) < 0) {
            k8s_error(t, path, "not a CPU quantity (e.g. 500m, 2, 0.5)");
            return -1;
        }
        k8s_set(t, res, "cpu_milli", json_integer(n));
    } else if (strcmp(name, "memory") == 0) {
        if (gp_k8s_mib(v, &n) < 0) {
            k8s_error(t, path, "not a memory quantity (e.g. 16Gi, 8G, 512Mi)");
            return -1;
        }
        k8s_set(t, res, "memory_mib", json_integer(n));
    } else if (strcmp(name, "nvidia.com/gpu") == 0 || strncmp(name, "nvidia.com/gpu.", 15) == 0) {
        if (count_of(t, v, path, 0, 32, &n) < 0) {
            return -1;
        }
        g->gpus = n;
        g->model = name[14] == '.' ? name + 15 : g->model;
        snprintf(g->gpu_path, sizeof(g->gpu_path), "%s", path);
    } else if (strncmp(name, "nvidia.com/mig-", 15) == 0 && name[15]) {
        if (count_of(t, v, path, 0, 7, &g->mig_count) < 0) {
            return -1;
        }
        g->mig = name + 15;
    } else if (strcmp(name, "nvidia.com/vgpu") == 0) {
        return count_of(t, v, path, 0, 32, &g->vgpus);
    } else if (in_list(mem_names, name)) {
        if (gp_k8s_gpu_mib(v, &g->mem_mib) < 0 || g->mem_mib > (1LL << 30)) {
            k8s_error(t, path, "not a GPU memory figure (MiB, or a quantity such as 10Gi)");
            return -1;
        }
    } else if (in_list(core_names, name)) {
        return count_of(t, v, path, 1, 100, &g->cores);
    } else if (strcmp(name, "nvidia.com/gpumem-percentage") == 0) {
        return count_of(t, v, path, 1, 100, &g->mem_pct);
    } else if (strcmp(name, "ephemeral-storage") == 0 || strncmp(name, "hugepages-", 10) == 0) {
        k8s_warn(t, path, "not honoured: gpupool does not reserve or limit %s", name);
    } else {
        k8s_error(t, path, "unknown resource %s: gpupool cannot give it", name);
        return -1;
    }
    return 0;
}

/* A share of one GPU: memory, compute, a memory percentage, a vGPU. */
static int fraction(k8s_tr *t, const gpu_ask *g, const char *path, json_t *res)
{
    if (g->gpus > 1 || g->vgpus > 1) {
        k8s_error(t, g->gpus > 1 ? g->gpu_path : path,
                  "%lld GPUs with a share of GPU memory or compute: gpupool shares one GPU per "
                  "replica (use replicas for more)",
                  g->gpus > 1 ? g->gpus : g->vgpus);
        return -1;
    }
    if (g->vgpus == 1 && g->mem_mib == 0 && g->cores == 0) {
        k8s_error(t, path,
                  "nvidia.com/vgpu: needs its memory (nvidia.com/vgpu-memory or "
                  "nvidia.com/gpu-memory)");
        return -1;
    }
    if (g->mem_mib > 0) {
        k8s_set(t, res, "gpu_memory_mib", json_integer(g->mem_mib));
    }
    if (g->cores > 0) {
        k8s_set(t, res, "cores_percent", json_integer(g->cores));
    }
    if (g->mem_pct > 0) {
        char p[K8S_PATH_MAX];
        k8s_warn(t, k8s_join(p, path, "nvidia.com/gpumem-percentage"),
                 "not honoured as a memory limit: gpupool limits GPU memory in MiB; reserved as "
                 "%lld%% of the GPU (gpu_milli %lld) with no memory limit",
                 g->mem_pct, g->mem_pct * 10);
        if (g->mem_mib == 0) {
            k8s_set(t, res, "gpu_milli", json_integer(g->mem_pct * 10));
        }
    }
    return 0;
}

/* The GPU request as a whole: whole GPUs, a MIG slice or a share. */
static int gpu_request(k8s_tr *t, const gpu_ask *g, const char *path, json_t *res)
{
    bool share = g->mem_mib > 0 || g->cores > 0 || g->mem_pct > 0 || g->vgpus > 0;
    if (g->mig && g->mig_count > 0) {
        if (g->gpus > 0 || share) {
            k8s_error(t, path, "a MIG instance together with other GPU resources: ask for one");
            return -1;
        }
        if (g->mig_count > 1) {
            k8s_error(t, path, "nvidia.com/mig-%s: %lld instances: a replica gets one MIG instance",
                      g->mig, g->mig_count);
            return -1;
        }
        k8s_set(t, res, "mig_profile", json_string(g->mig));
        return 0;
    }
    if (share) {
        if (fraction(t, g, path, res) < 0) {
            return -1;
        }
    } else if (g->gpus > 0) {
        k8s_set(t, res, "gpus", json_integer(g->gpus));
    }
    if (g->model && (g->gpus > 0 || share)) {
        json_t *models = json_array();
        json_array_append_new(models, json_string(g->model));
        k8s_set(t, res, "gpu_models", models);
    }
    return 0;
}

/* Warns where a request differs from its limit (the limit is what gpupool takes). */
static void compare_request(k8s_tr *t, const char *name, const json_t *req, const json_t *lim,
                            const char *rpath)
{
    long long a, b;
    if (gp_k8s_cpu_milli(req, &a) == 0 && gp_k8s_cpu_milli(lim, &b) == 0 && a == b) {
        return;
    }
    json_t *rs = as_written(req), *ls = as_written(lim);
    char p[K8S_PATH_MAX];
    k8s_warn(t, k8s_join(p, rpath, name),
             "%s differs from the limit %s: gpupool reserves and enforces one amount, the limit",
             rs ? json_string_value(rs) : "?", ls ? json_string_value(ls) : "?");
    json_decref(rs);
    json_decref(ls);
}

int k8s_resources(k8s_tr *t, const json_t *container, const char *path, json_t *res, json_t *limits)
{
    char rp[K8S_PATH_MAX], lp[K8S_PATH_MAX], qp[K8S_PATH_MAX], p[K8S_PATH_MAX];
    k8s_join(rp, path, "resources");
    const json_t *r = k8s_obj(t, container, path, "resources");
    if (!r) {
        return 0;
    }
    static const k8s_key keys[] = {
        {"limits", NULL},
        {"requests", NULL},
        {"claims", "not supported: gpupool has no dynamic resource claims"},
        {NULL, NULL},
    };
    k8s_check_keys(t, r, rp, keys);
    const json_t *lim = k8s_obj(t, r, rp, "limits");
    const json_t *req = k8s_obj(t, r, rp, "requests");
    k8s_join(lp, rp, "limits");
    k8s_join(qp, rp, "requests");
    gpu_ask g = {0};
    int rc = 0;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)lim, name, v)
    {
        json_object_set_new(limits, name, as_written(v));
        if (one_resource(t, name, v, k8s_join(p, lp, name), res, &g) < 0) {
            rc = -1;
        }
        const json_t *rv = req ? json_object_get(req, name) : NULL;
        if (rv) {
            compare_request(t, name, rv, v, qp);
        }
    }
    json_object_foreach((json_t *)req, name, v)
    {
        if (lim && json_object_get(lim, name)) {
            continue;
        }
        if (one_resource(t, name, v, k8s_join(p, qp, name), res, &g) < 0) {
            rc = -1;
        }
    }
    if (rc == 0) {
        rc = gpu_request(t, &g, lim ? lp : qp, res);
    }
    return rc;
}

void k8s_queue_resource(k8s_tr *t, const char *name, const json_t *value, const char *path,
                        json_t *out)
{
    long long n;
    if (strcmp(name, "nvidia.com/gpu") == 0) {
        if (gp_k8s_count_value(value, &n) < 0) {
            k8s_error(t, path, "must be a whole number of GPUs");
            return;
        }
        k8s_set(t, out, "gpus", json_integer(n));
    } else if (in_list(mem_names, name)) {
        if (gp_k8s_gpu_mib(value, &n) < 0) {
            k8s_error(t, path, "not a GPU memory figure (MiB, or a quantity such as 10Gi)");
            return;
        }
        k8s_set(t, out, "gpu_memory_mib", json_integer(n));
    } else if (strcmp(name, "cpu") == 0) {
        if (gp_k8s_cpu_milli(value, &n) < 0) {
            k8s_error(t, path, "not a CPU quantity (e.g. 500m, 2, 0.5)");
            return;
        }
        k8s_set(t, out, "cpu_milli", json_integer(n));
    } else if (strcmp(name, "memory") == 0) {
        if (gp_k8s_mib(value, &n) < 0) {
            k8s_error(t, path, "not a memory quantity (e.g. 16Gi, 8G, 512Mi)");
            return;
        }
        k8s_set(t, out, "memory_mib", json_integer(n));
    } else {
        k8s_warn(t, path,
                 "not honoured: a queue limits only nvidia.com/gpu, GPU memory, cpu "
                 "and memory");
    }
}

void k8s_queue_resources(k8s_tr *t, const json_t *map, const char *path, json_t *out)
{
    const char *name;
    json_t *v;
    char p[K8S_PATH_MAX];
    json_object_foreach((json_t *)map, name, v)
    {
        k8s_queue_resource(t, name, v, k8s_join(p, path, name), out);
    }
}
