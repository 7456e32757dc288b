/*
 * The job's environment (layers and precedence in run_spec.h).
 *
 * Pure: the caller passes the base variables in, so the precedence rules are unit-tested without
 * starting a process.
 */
#include "agent/run_spec.h"
#include "base/envname.h"

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

static const char *const gang_vars[] = {"WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR",
                                        "MASTER_PORT"};

int gp_run_env_reserved(const gp_run_spec *s, const char *name)
{
    if (gp_env_reserved(name)) {
        return 1;
    }
    for (size_t i = 0; gp_run_spec_is_gang(s) && i < sizeof(gang_vars) / sizeof(gang_vars[0]);
         i++) {
        if (strcmp(name, gang_vars[i]) == 0) {
            return 1;
        }
    }
    return 0;
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

/* A fraction's limits, as libgpushare's variables (the region holds the same). */
static int env_share(envlist *e, const gp_run_spec *s)
{
    char num[32];
    snprintf(num, sizeof(num), "%lld", (long long)s->share_mem_mib);
    int rc = env_set(e, "GPUPOOL_GPU_MEMORY_LIMIT_MIB", num);
    snprintf(num, sizeof(num), "%d", s->share_core_percent);
    rc = rc ? rc : env_set(e, "GPUPOOL_GPU_CORE_LIMIT", num);
    return rc ? rc
              : env_set(e, "GPUPOOL_GPU_CORE_POLICY", s->share_core_strict ? "strict" : "shared");
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
    if (rc < 0 || !gp_run_spec_is_gang(s)) {
        return rc;
    }
    snprintf(num, sizeof(num), "%d", s->world_size);
    rc = rc ? rc : env_set(e, "WORLD_SIZE", num);
    snprintf(num, sizeof(num), "%d", s->rank);
    rc = rc ? rc : env_set(e, "RANK", num);
    snprintf(num, sizeof(num), "%d", s->local_rank);
    rc = rc ? rc : env_set(e, "LOCAL_RANK", num);
    rc = rc ? rc : env_set(e, "MASTER_ADDR", s->master_addr);
    snprintf(num, sizeof(num), "%d", s->master_port);
    rc = rc ? rc : env_set(e, "MASTER_PORT", num);
    if (rc == 0 && paths->hostfile) {
        rc = env_set(e, "GPUPOOL_HOSTFILE", paths->hostfile);
    }
    return rc;
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
