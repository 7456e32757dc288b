/*
 * The job's environment (layers and precedence in run_spec.h).
 *
 * Pure: the caller passes the base variables in, so the precedence rules are unit-tested without
 * starting a process.
 */
#include "agent/run_spec.h"
#include "base/envname.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

/* A growing "NAME=VALUE" list where setting a name replaces its earlier value. */
typedef struct envlist {
    char **v;
    int n, cap;
} envlist;

static int name_matches(const char *entry, const char *name)
{
    size_t len = strlen(name);
    return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static int env_set(envlist *e, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *entry = malloc(len);
    if (!entry) {
        return GP_ENOMEM;
    }
    snprintf(entry, len, "%s=%s", name, value);
    for (int i = 0; i < e->n; i++) {
        if (name_matches(e->v[i], name)) {
            free(e->v[i]);
            e->v[i] = entry;
            return 0;
        }
    }
    if (e->n + 2 > e->cap) {
        int cap = e->cap ? e->cap * 2 : 64;
        char **grown = realloc(e->v, (size_t)cap * sizeof(char *));
        if (!grown) {
            free(entry);
            return GP_ENOMEM;
        }
        e->v = grown;
        e->cap = cap;
    }
    e->v[e->n++] = entry;
    e->v[e->n] = NULL;
    return 0;
}

int gp_run_env_reserved(const gp_run_spec *s, const char *name)
{
    return gp_env_reserved(name) || (gp_run_spec_is_gang(s) && gp_env_gang_reserved(name));
}

/* The comma-separated GPU list; NULL when out of memory. */
static char *gpu_list(const gp_run_spec *s)
{
    size_t len = 1;
    for (int i = 0; i < s->ngpus; i++) {
        len += strlen(s->gpu_uuids[i]) + 1;
    }
    char *t = calloc(1, len);
    for (int i = 0; t && i < s->ngpus; i++) {
        strcat(i ? strcat(t, ",") : t, s->gpu_uuids[i]);
    }
    return t;
}

/* Sets NAME to the decimal value v. */
static int env_int(envlist *e, const char *name, long long v)
{
    char num[32];
    snprintf(num, sizeof(num), "%lld", v);
    return env_set(e, name, num);
}

/* A fraction's limits, as libgpushare's variables (the region holds the same). */
static int env_share(envlist *e, const gp_run_spec *s)
{
    int rc = env_int(e, "GPUPOOL_GPU_MEMORY_LIMIT_MIB", s->share_mem_mib);
    rc = rc ? rc : env_int(e, "GPUPOOL_GPU_CORE_LIMIT", s->share_core_percent);
    return rc ? rc
              : env_set(e, "GPUPOOL_GPU_CORE_POLICY", s->share_core_strict ? "strict" : "shared");
}

/* The job as launchers see it (run_spec.h): replicas are torchrun's nodes and mpirun's hosts,
 * each starting nproc_per_node processes. */
static int env_launch(envlist *e, const gp_run_spec *s, const gp_run_paths *paths)
{
    bool gang = gp_run_spec_is_gang(s);
    int nnodes = gang ? s->world_size : 1, rank = gang ? s->rank : 0;
    int nproc = gang ? s->nproc_per_node : s->ngpus > 1 ? s->ngpus : 1;
    int rc = env_int(e, "GPUPOOL_NNODES", nnodes);
    rc = rc ? rc : env_int(e, "GPUPOOL_NODE_RANK", rank);
    rc = rc ? rc : env_int(e, "GPUPOOL_NPROC_PER_NODE", nproc);
    if (rc < 0 || !gang) {
        return rc;
    }
    rc = env_int(e, "PET_NNODES", nnodes);
    rc = rc ? rc : env_int(e, "PET_NODE_RANK", rank);
    rc = rc ? rc : env_int(e, "PET_NPROC_PER_NODE", nproc);
    rc = rc ? rc : env_set(e, "PET_MASTER_ADDR", s->master_addr);
    rc = rc ? rc : env_int(e, "PET_MASTER_PORT", s->master_port);
    rc = rc ? rc : env_int(e, "WORLD_SIZE", (long long)nnodes * nproc);
    rc = rc ? rc : env_int(e, "RANK", (long long)rank * nproc);
    rc = rc ? rc : env_int(e, "LOCAL_RANK", 0);
    rc = rc ? rc : env_int(e, "LOCAL_WORLD_SIZE", nproc);
    rc = rc ? rc : env_set(e, "MASTER_ADDR", s->master_addr);
    rc = rc ? rc : env_int(e, "MASTER_PORT", s->master_port);
    if (rc == 0 && paths->hostfile) {
        rc = env_set(e, "GPUPOOL_HOSTFILE", paths->hostfile);
    }
    return rc;
}

/* A job array's child's index and array, and /dev/shm's size (run_spec.h). */
static int env_batch(envlist *e, const gp_run_spec *s)
{
    char num[32];
    int rc = 0;
    if (s->array_index >= 0) {
        snprintf(num, sizeof(num), "%d", s->array_index);
        rc = env_set(e, "GPUPOOL_ARRAY_INDEX", num);
        rc = rc ? rc : env_set(e, "SLURM_ARRAY_TASK_ID", num);
        snprintf(num, sizeof(num), "%lld", (long long)s->array_job);
        rc = rc ? rc : env_set(e, "GPUPOOL_ARRAY_JOB_ID", num);
        rc = rc ? rc : env_set(e, "SLURM_ARRAY_JOB_ID", num);
    }
    if (rc == 0 && s->shm_size_mib > 0) {
        snprintf(num, sizeof(num), "%lld", (long long)s->shm_size_mib);
        rc = env_set(e, "GPUPOOL_SHM_SIZE_MIB", num);
    }
    return rc;
}

/* Layer 4: gpupool's own variables. */
static int env_own(envlist *e, const gp_run_spec *s, const gp_run_paths *paths)
{
    char num[32], *gpus = gpu_list(s);
    if (!gpus) {
        return GP_ENOMEM;
    }
    int rc = env_set(e, "CUDA_VISIBLE_DEVICES", gpus);
    rc = rc ? rc : env_set(e, "NVIDIA_VISIBLE_DEVICES", s->ngpus ? gpus : "none");
    free(gpus);
    snprintf(num, sizeof(num), "%lld", (long long)s->job);
    rc = rc ? rc : env_set(e, "GPUPOOL_JOB_ID", num);
    rc = rc ? rc : env_set(e, "GPUPOOL_JOB_NAME", s->name ? s->name : "");
    snprintf(num, sizeof(num), "%d", s->replica);
    rc = rc ? rc : env_set(e, "GPUPOOL_REPLICA", num);
    snprintf(num, sizeof(num), "%d", s->restart_count);
    rc = rc ? rc : env_set(e, "GPUPOOL_RESTART_COUNT", num);
    rc = rc ? rc : env_batch(e, s);
    if (rc == 0 && paths->data_dir) {
        rc = env_set(e, "GPUPOOL_DATA_DIR", paths->data_dir);
    }
    if (rc == 0 && paths->share_library) {
        rc = env_set(e, "LD_PRELOAD", paths->share_library);
    }
    if (rc == 0 && paths->share_region) {
        rc = env_set(e, "GPUPOOL_SHARE_REGION", paths->share_region);
    }
    if (rc == 0 && s->fractional) {
        rc = env_share(e, s);
    }
    if (rc == 0 && paths->checkpoint_dir) {
        rc = env_set(e, "GPUPOOL_CHECKPOINT_DIR", paths->checkpoint_dir);
    }
    if (rc == 0 && s->own_netns && s->port > 0) {
        snprintf(num, sizeof(num), "%d", s->port);
        rc = env_set(e, "GPUPOOL_PORT", num);
        char url[64];
        snprintf(url, sizeof(url), "/v1/jobs/%lld/proxy/", (long long)s->job);
        rc = rc ? rc : env_set(e, "GPUPOOL_BASE_URL", url);
    }
    return rc < 0 ? rc : env_launch(e, s, paths);
}

int gp_run_env_build(const gp_run_spec *s, const char *const *base, const gp_run_paths *paths,
                     char ***out)
{
    static const gp_run_paths none;
    envlist e = {0};
    int rc = env_set(&e, "PATH", "/usr/local/bin:/usr/bin:/bin"); /* replaced by base's */
    for (int i = 0; rc == 0 && base && base[i]; i++) {
        const char *eq = strchr(base[i], '=');
        char name[256];
        if (!eq || eq == base[i] || (size_t)(eq - base[i]) >= sizeof(name)) {
            continue;
        }
        snprintf(name, sizeof(name), "%.*s", (int)(eq - base[i]), base[i]);
        rc = env_set(&e, name, eq + 1);
    }
    for (int i = 0; rc == 0 && i < s->nenv; i++) {
        if (gp_run_env_reserved(s, s->env[i].name)) {
            GP_LOG(GP_LOG_WARN, "run", "spec.env.%s: set by gpupool, dropped", s->env[i].name);
            continue;
        }
        rc = env_set(&e, s->env[i].name, s->env[i].value);
    }
    for (int i = 0; rc == 0 && i < s->nenv_extra; i++) {
        rc = env_set(&e, s->env_extra[i].name, s->env_extra[i].value);
    }
    rc = rc ? rc : env_own(&e, s, paths ? paths : &none);
    if (rc < 0) {
        gp_run_env_free(e.v);
        *out = NULL;
        return rc;
    }
    *out = e.v;
    return 0;
}

void gp_run_env_free(char **env)
{
    for (int i = 0; env && env[i]; i++) {
        free(env[i]);
    }
    free(env);
}

const char *gp_run_env_get(char *const *env, const char *name)
{
    for (int i = 0; env && env[i]; i++) {
        if (name_matches(env[i], name)) {
            return env[i] + strlen(name) + 1;
        }
    }
    return NULL;
}

int gp_run_env_base(char *const *environ_, const char *user, const char *home, const char *shell,
                    char ***out)
{
    static const char *const keep[] = {"PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"};
    envlist e = {0};
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < sizeof(keep) / sizeof(keep[0]); k++) {
        const char *v = gp_run_env_get(environ_, keep[k]);
        if (v) {
            rc = env_set(&e, keep[k], v);
        }
    }
    if (rc == 0 && user) {
        rc = env_set(&e, "USER", user);
        rc = rc ? rc : env_set(&e, "LOGNAME", user);
    }
    if (rc == 0 && home) {
        rc = env_set(&e, "HOME", home);
    }
    if (rc == 0 && shell) {
        rc = env_set(&e, "SHELL", shell);
    }
    if (rc == 0 && !e.v) {
        e.v = calloc(1, sizeof(char *));
        rc = e.v ? 0 : GP_ENOMEM;
    }
    if (rc < 0) {
        gp_run_env_free(e.v);
        e.v = NULL;
    }
    *out = e.v;
    return rc;
}
