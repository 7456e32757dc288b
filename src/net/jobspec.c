/*
 * Job spec validation: one table of fields per object level drives parsing, so every field has
 * exactly one place where its type and bounds are checked, and unknown fields are found by the
 * same walk. JSON comes from jansson (duplicate keys refused), YAML through yaml_json.c.
 */
#include "gpupool/jobspec.h"

#include "base/envname.h"
#include "gpupool/modelname.h"
#include "net/jobspec_impl.h"
#include "net/seal.h"
#include "net/yaml_json.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- typed getters; each names the field on error ---- */

int js_int(json_t *v, const char *path, int64_t lo, int64_t hi, int64_t *out, gp_diag *d)
{
    if (!json_is_integer(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an integer", path);
    }
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be between %lld and %lld", path, (long long)lo,
                           (long long)hi);
    }
    *out = x;
    return 0;
}

/* get_int for int fields; *out is written only on success. */
int js_int32(json_t *v, const char *path, int lo, int hi, int *out, gp_diag *d)
{
    int64_t x = 0;
    int rc = js_int(v, path, lo, hi, &x, d);
    if (rc == 0) {
        *out = (int)x;
    }
    return rc;
}

int js_text(json_t *v, const char *path, char *dst, size_t cap, gp_diag *d)
{
    if (!json_is_string(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a string", path);
    }
    size_t n = json_string_length(v);
    if (n == 0 || n >= cap || memchr(json_string_value(v), '\0', n)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be 1 to %zu characters", path, cap - 1);
    }
    memcpy(dst, json_string_value(v), n + 1);
    return 0;
}

/* A DNS-label-like identifier: [a-z0-9-], alphanumeric at both ends. */
int js_ident(json_t *v, const char *path, char *dst, size_t cap, gp_diag *d)
{
    int rc = js_text(v, path, dst, cap, d);
    if (rc < 0) {
        return rc;
    }
    size_t n = strlen(dst);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)dst[i];
        if (!(islower(ch) || isdigit(ch) || (ch == '-' && i > 0 && i + 1 < n))) {
            dst[0] = '\0';
            return gp_diag_set(d, GP_EINVAL, "%s: must be lower-case letters, digits and inner '-'",
                               path);
        }
    }
    return 0;
}

int js_enum(json_t *v, const char *path, const char *const *names, int n, int *out, gp_diag *d)
{
    if (json_is_string(v)) {
        for (int i = 0; i < n; i++) {
            if (strcmp(json_string_value(v), names[i]) == 0) {
                *out = i;
                return 0;
            }
        }
    }
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, names[i], sizeof(list) - strlen(list) - 1);
    }
    return gp_diag_set(d, GP_EINVAL, "%s: must be one of %s", path, list);
}

/* A NULL-terminated copy of an array of strings. */
int js_strings(json_t *v, const char *path, int min, char ***out, gp_diag *d)
{
    if (!json_is_array(v) || (int)json_array_size(v) < min || json_array_size(v) > 4096) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a list of %d to 4096 strings", path, min);
    }
    size_t n = json_array_size(v);
    char **list = calloc(n + 1, sizeof(char *));
    if (!list) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e) || memchr(json_string_value(e), '\0', json_string_length(e))) {
            for (size_t k = 0; k < i; k++) {
                free(list[k]);
            }
            free(list);
            return gp_diag_set(d, GP_EINVAL, "%s[%zu]: must be a string", path, i);
        }
        list[i] = strdup(json_string_value(e));
    }
    *out = list;
    return 0;
}

static const field *find_field(const field *fields, int nfields, const char *key)
{
    for (int i = 0; i < nfields; i++) {
        if (strcmp(fields[i].name, key) == 0) {
            return &fields[i];
        }
    }
    return NULL;
}

/* Walks object v with tables; unknown keys are errors. */
int js_walk(json_t *v, const char *path, const field_table *tables, int ntables, gp_jobspec *s,
            gp_diag *d)
{
    if (!json_is_object(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", *path ? path : "spec");
    }
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val)
    {
        char sub[256];
        snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
        const field *f = NULL;
        for (int t = 0; !f && t < ntables; t++) {
            f = find_field(tables[t].fields, tables[t].n, key);
        }
        if (!f) {
            return gp_diag_set(d, GP_EINVAL, "%s: unknown field", sub);
        }
        if (json_is_null(val)) {
            continue; /* null: the default */
        }
        int rc = f->parse(val, sub, s, d);
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

int js_walk1(json_t *v, const char *path, field_table t, gp_jobspec *s, gp_diag *d)
{
    return js_walk(v, path, &t, 1, s, d);
}

static const char *const compute_names[] = {"shared", "strict"}; /* from GP_COMPUTE_SHARED */
static const char *const topology_names[] = {"any", "prefer-nvlink", "require-nvlink"};
static const char *const gpu_policy_names[] = {"packing", "spread", "topology", "fragmentation"};
static const char *const pull_names[] = {"Always", "IfNotPresent", "Never"};
static const char *const network_names[] = {"host", "private"};
static const char *const restart_names[] = {"never", "on-failure", "always"};

/* ---- resources ---- */

static int f_gpus(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 1, GP_MAX_GPUS_PER_NODE, &s->gpus, d);
}

static int f_gpu_milli(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 1, GP_MILLI_PER_GPU, &s->gpu_milli, d);
}

static int f_gpu_memory(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int(v, path, 1, (int64_t)1 << 40, &s->gpu_memory_mib, d);
}

static int f_cores(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 1, 100, &s->cores_percent, d);
}

static int f_compute_policy(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, compute_names, 2, &x, d);
    s->compute_policy = rc == 0 ? (gp_compute_policy)x : s->compute_policy;
    return rc;
}

static int f_mig(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int rc = js_text(v, path, s->mig_profile, sizeof(s->mig_profile), d);
    if (rc == 0 && !gp_mig_name_valid(s->mig_profile)) {
        s->mig_profile[0] = '\0';
        return gp_diag_set(d, GP_EINVAL, "%s: must be a MIG profile such as 1g.10gb", path);
    }
    return rc;
}

static int f_models(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > GP_JOB_MAX_MODELS) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a list of 1 to %d GPU models", path,
                           GP_JOB_MAX_MODELS);
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        char sub[280];
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        int rc = js_text(json_array_get(v, i), sub, s->gpu_models[i], GP_NAME_MAX, d);
        if (rc < 0) {
            return rc;
        }
    }
    s->ngpu_models = (int)json_array_size(v);
    return 0;
}

static int f_cpu(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int(v, path, 0, (int64_t)1 << 40, &s->cpu_milli, d);
}

static int f_memory(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int(v, path, 0, (int64_t)1 << 40, &s->memory_mib, d);
}

static const field resource_fields[] = {
    {"gpus", f_gpus},
    {"gpu_milli", f_gpu_milli},
    {"gpu_memory_mib", f_gpu_memory},
    {"cores_percent", f_cores},
    {"compute_policy", f_compute_policy},
    {"mig_profile", f_mig},
    {"gpu_models", f_models},
    {"cpu_milli", f_cpu},
    {"memory_mib", f_memory},
};

/* ---- top level ---- */

static int f_name(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_ident(v, path, s->name, sizeof(s->name), d);
}

static int f_tenant(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_ident(v, path, s->tenant, sizeof(s->tenant), d);
}

static int f_queue(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_ident(v, path, s->queue, sizeof(s->queue), d);
}

static int f_priority(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_ident(v, path, s->priority_class, sizeof(s->priority_class), d);
}

static int f_replicas(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 1, GP_JOB_MAX_REPLICAS, &s->replicas, d);
}

static int f_resources(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_walk1(v, path, JS_TABLE(resource_fields), s, d);
}

static int f_topology(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, topology_names, 3, &x, d);
    s->topology = (gp_topology_pref)x;
    return rc;
}

static int f_gpu_policy(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, gpu_policy_names, 4, &x, d);
    s->gpu_policy = (gp_gpu_policy)x;
    return rc;
}

static int f_preemptible(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_boolean(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be true or false", path);
    }
    s->preemptible = json_is_true(v);
    return 0;
}

static int f_allow_unschedulable(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_boolean(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be true or false", path);
    }
    s->allow_unschedulable = json_is_true(v);
    return 0;
}

static int f_privileged(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_boolean(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be true or false", path);
    }
    s->privileged = json_is_true(v);
    return 0;
}

static int f_image(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_string(v) || memchr(json_string_value(v), '\0', json_string_length(v))) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a string (an image reference)", path);
    }
    gp_image_ref ref;
    char normal[GP_IMAGE_REF_MAX];
    int rc = gp_image_ref_parse(json_string_value(v), path, &ref, d);
    if (rc == 0 && gp_image_ref_format(&ref, normal, sizeof(normal)) < 0) {
        rc = gp_diag_set(d, GP_EINVAL, "%s: longer than %d characters once normalised", path,
                         GP_IMAGE_REF_MAX - 1);
    }
    if (rc < 0) {
        return rc;
    }
    free(s->image);
    s->image = strdup(normal);
    if (!s->image) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    return 0;
}

static int f_pull_policy(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, pull_names, 3, &x, d);
    s->image_pull_policy = (gp_pull_policy)x;
    return rc;
}

static int f_network(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, network_names, 2, &x, d);
    s->network = (gp_network)x;
    return rc;
}

static int f_command(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_strings(v, path, 1, &s->command, d);
}

static int f_args(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_strings(v, path, 0, &s->args, d);
}

/* One env entry given as an object: {value: S, secret: B} or {secret: true, sealed: S}. */
static int env_object(json_t *val, const char *path, const char *key, gp_env_var *var, gp_diag *d)
{
    json_t *value = json_object_get(val, "value"), *sealed = json_object_get(val, "sealed");
    json_t *secret = json_object_get(val, "secret");
    const char *k;
    json_t *x;
    json_object_foreach(val, k, x)
    {
        if (strcmp(k, "value") != 0 && strcmp(k, "sealed") != 0 && strcmp(k, "secret") != 0) {
            return gp_diag_set(d, GP_EINVAL, "%s.%.64s.%.64s: unknown field (value, secret)", path,
                               key, k);
        }
    }
    if (secret && !json_is_boolean(secret)) {
        return gp_diag_set(d, GP_EINVAL, "%s.%.64s.secret: must be true or false", path, key);
    }
    json_t *text = value ? value : sealed;
    if ((value != NULL) == (sealed != NULL)) {
        return gp_diag_set(d, GP_EINVAL, "%s.%.64s.value: required (a string)", path, key);
    }
    if (!json_is_string(text) || memchr(json_string_value(text), '\0', json_string_length(text))) {
        return gp_diag_set(d, GP_EINVAL, "%s.%.64s.%s: must be a string", path, key,
                           value ? "value" : "sealed");
    }
    var->secret = json_is_true(secret);
    var->sealed = sealed != NULL;
    if (var->sealed && !var->secret) {
        return gp_diag_set(d, GP_EINVAL, "%s.%.64s.sealed: only with secret: true", path, key);
    }
    var->value = strdup(json_string_value(text));
    return 0;
}

static int f_env(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_object(v) || json_object_size(v) > 1024) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s: must be a map of at most 1024 names to strings (or {value, "
                           "secret})",
                           path);
    }
    s->env = calloc(json_object_size(v) + 1, sizeof(gp_env_var));
    if (!s->env) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val)
    {
        if (!gp_env_name_valid(key)) {
            return gp_diag_set(d, GP_EINVAL, "%s.%.64s: not a valid variable name", path, key);
        }
        if (gp_env_reserved(key)) {
            return gp_diag_set(d, GP_EINVAL, "%s.%.64s: set by gpupool, cannot be overridden", path,
                               key);
        }
        gp_env_var *var = &s->env[s->nenv];
        if (json_is_object(val)) {
            int rc = env_object(val, path, key, var, d);
            if (rc < 0) {
                free(var->value);
                var->value = NULL;
                return rc;
            }
        } else if (!json_is_string(val) ||
                   memchr(json_string_value(val), '\0', json_string_length(val))) {
            return gp_diag_set(d, GP_EINVAL, "%s.%.64s: must be a string or {value, secret}", path,
                               key);
        } else {
            var->value = strdup(json_string_value(val));
        }
        var->name = strdup(key);
        s->nenv++;
        if (!var->name || !var->value) {
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
    }
    return 0;
}

static int f_workdir(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    char dir[4096];
    int rc = js_text(v, path, dir, sizeof(dir), d);
    if (rc == 0 && dir[0] != '/') {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an absolute path", path);
    }
    if (rc == 0) {
        s->working_dir = strdup(dir);
    }
    return rc;
}

/* Seconds, or a number with a unit: 90s, 30m, 2h, 1d; between lo and hi seconds. */
int js_duration_in(json_t *v, const char *path, int64_t lo, int64_t hi, int64_t *out, gp_diag *d)
{
    if (json_is_integer(v)) {
        return js_int(v, path, lo, hi, out, d);
    }
    const char *t = json_is_string(v) ? json_string_value(v) : "";
    char *end;
    long long n = strtoll(t, &end, 10);
    int64_t unit = *end == 's'   ? 1
                   : *end == 'm' ? 60
                   : *end == 'h' ? 3600
                   : *end == 'd' ? 86400
                                 : 0;
    if (end == t || !isdigit((unsigned char)*t) || unit == 0 || end[1] != '\0' || n < 0 ||
        n > hi / unit || n * unit < lo) {
        json_t *l = js_duration_json(lo), *h = js_duration_json(hi);
        int rc = gp_diag_set(d, GP_EINVAL,
                             "%s: must be seconds or a duration such as 90s, 30m, 2h, 1d "
                             "(%s%s%s %s)",
                             path, lo > 0 ? "" : "between ", lo > 0 ? "" : json_string_value(l),
                             lo > 0 ? "at most" : " and", json_string_value(h));
        json_decref(l);
        json_decref(h);
        return rc;
    }
    *out = n * unit;
    return 0;
}

int js_duration(json_t *v, const char *path, int64_t *out, gp_diag *d)
{
    return js_duration_in(v, path, 1, JS_DURATION_MAX, out, d);
}

static int f_runtime(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_duration(v, path, &s->max_runtime_s, d);
}

static int f_hang(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_duration(v, path, &s->hang_timeout_s, d);
}

static int f_idle_timeout(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_duration(v, path, &s->idle_timeout_s, d);
}

static int f_idle_util(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 100) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a percentage between 0 and 100", path);
    }
    s->idle_utilization = json_number_value(v);
    return 0;
}

static int f_restart(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    int x = 0;
    int rc = js_enum(v, path, restart_names, 3, &x, d);
    s->restart_policy = (gp_restart_policy)x;
    return rc;
}

static int f_max_restarts(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int32(v, path, 0, 1000, &s->max_restarts, d);
}

/* One entry of volumes: "NAME", "NAME:ro", "NAME:rw" or {name, read_only}. */
static int volume_ref(json_t *v, const char *path, gp_volume_ref *out, gp_diag *d)
{
    if (json_is_object(v)) {
        char sub[300];
        json_t *ro = NULL;
        const char *key;
        json_t *val;
        json_object_foreach(v, key, val)
        {
            if (strcmp(key, "name") != 0 && strcmp(key, "read_only") != 0) {
                return gp_diag_set(d, GP_EINVAL, "%s.%.64s: unknown field", path, key);
            }
        }
        snprintf(sub, sizeof(sub), "%s.name", path);
        json_t *name = json_object_get(v, "name");
        if (!name) {
            return gp_diag_set(d, GP_EINVAL, "%s: required", sub);
        }
        int rc = js_ident(name, sub, out->name, sizeof(out->name), d);
        if (rc == 0 && (ro = json_object_get(v, "read_only")) != NULL && !json_is_null(ro)) {
            if (!json_is_boolean(ro)) {
                return gp_diag_set(d, GP_EINVAL, "%s.read_only: must be true or false", path);
            }
            out->mode = json_is_true(ro) ? GP_VOLUME_RO : GP_VOLUME_RW;
        }
        return rc;
    }
    char text[GP_JOB_NAME_MAX + 8];
    int rc = js_text(v, path, text, sizeof(text), d);
    if (rc < 0) {
        return rc;
    }
    char *colon = strchr(text, ':');
    if (colon) {
        *colon++ = '\0';
        if (strcmp(colon, "ro") != 0 && strcmp(colon, "rw") != 0) {
            return gp_diag_set(d, GP_EINVAL, "%s: the mode after ':' must be ro or rw", path);
        }
        out->mode = colon[1] == 'o' ? GP_VOLUME_RO : GP_VOLUME_RW;
    }
    json_t *name = json_string(text);
    rc = name ? js_ident(name, path, out->name, sizeof(out->name), d)
              : gp_diag_set(d, GP_EINVAL, "%s: must be NAME, NAME:ro or NAME:rw", path);
    json_decref(name);
    return rc;
}

static int f_volumes(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_array(v) || json_array_size(v) > GP_JOB_MAX_VOLUMES) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a list of at most %d volumes", path,
                           GP_JOB_MAX_VOLUMES);
    }
    for (size_t i = 0; i < json_array_size(v); i++) {
        char sub[280];
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        gp_volume_ref r = {.mode = GP_VOLUME_DEFAULT};
        int rc = volume_ref(json_array_get(v, i), sub, &r, d);
        if (rc < 0) {
            return rc;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(s->volumes[k].name, r.name) == 0) {
                return gp_diag_set(d, GP_EINVAL, "%s: volume %s is listed twice", sub, r.name);
            }
        }
        s->volumes[i] = r;
    }
    s->nvolumes = (int)json_array_size(v);
    return 0;
}

static const field top_fields[] = {
    {"name", f_name},
    {"tenant", f_tenant},
    {"queue", f_queue},
    {"priority_class", f_priority},
    {"replicas", f_replicas},
    {"resources", f_resources},
    {"topology", f_topology},
    {"gpu_policy", f_gpu_policy},
    {"preemptible", f_preemptible},
    {"command", f_command},
    {"args", f_args},
    {"env", f_env},
    {"working_dir", f_workdir},
    {"max_runtime", f_runtime},
    {"hang_timeout", f_hang},
    {"idle_timeout", f_idle_timeout},
    {"idle_utilization", f_idle_util},
    {"restart_policy", f_restart},
    {"max_restarts", f_max_restarts},
    {"volumes", f_volumes},
    {"allow_unschedulable", f_allow_unschedulable},
    {"image", f_image},
    {"image_pull_policy", f_pull_policy},
    {"network", f_network},
    {"privileged", f_privileged},
    {"array", js_f_array},
    {"after_ok", js_f_after_ok},
    {"shm_size_mib", js_f_shm_size},
};

/* ---- entry points ---- */

/* The kind of GPU request, and what a fraction's fields mean together (gp_jobspec_enforcement
 * in jobspec.h): a compute cap alone reserves its share. */
static int finish_fraction(gp_jobspec *s, gp_diag *d)
{
    bool whole_or_mig = s->gpus > 0 || s->mig_profile[0] != '\0';
    bool fraction = s->gpu_milli > 0 || s->gpu_memory_mib > 0 || s->cores_percent > 0;
    if (s->cores_percent && whole_or_mig) {
        return gp_diag_set(d, GP_EINVAL, "resources.cores_percent: only with a GPU fraction");
    }
    if (s->compute_policy != GP_COMPUTE_DEFAULT && (whole_or_mig || !fraction)) {
        return gp_diag_set(d, GP_EINVAL, "resources.compute_policy: only with a GPU fraction");
    }
    if ((s->gpus > 0) + fraction + (s->mig_profile[0] != '\0') > 1) {
        return gp_diag_set(d, GP_EINVAL,
                           "resources: ask for one of gpus, a fraction "
                           "(gpu_milli, gpu_memory_mib, cores_percent) or mig_profile");
    }
    if (s->gpu_milli == 0 && s->cores_percent > 0) {
        s->gpu_milli = s->cores_percent * (GP_MILLI_PER_GPU / 100);
    }
    s->kind = s->gpus > 0         ? GP_REQ_WHOLE
              : s->mig_profile[0] ? GP_REQ_MIG
              : fraction          ? GP_REQ_FRACTION
                                  : GP_REQ_NONE;
    return 0;
}

/* The image's pull policy: only with an image; Kubernetes' default when not given. */
static int finish_image(gp_jobspec *s, gp_diag *d)
{
    if (!s->image) {
        return s->image_pull_policy == GP_PULL_DEFAULT
                   ? 0
                   : gp_diag_set(d, GP_EINVAL, "image_pull_policy: only with image");
    }
    if (s->image_pull_policy == GP_PULL_DEFAULT) {
        gp_image_ref ref;
        int rc = gp_image_ref_parse(s->image, "image", &ref, d); /* its normal form: parses */
        if (rc < 0) {
            return rc;
        }
        s->image_pull_policy = gp_image_ref_default_pull(&ref);
    }
    return 0;
}

static int finish(gp_jobspec *s, gp_diag *d)
{
    if (!s->name[0]) {
        return gp_diag_set(d, GP_EINVAL, "name: required");
    }
    int rc = js_serve_finish(s, d);
    if (rc < 0) {
        return rc;
    }
    if (!s->command && s->job_kind != GP_JOB_NOTEBOOK) {
        return gp_diag_set(d, GP_EINVAL, "command: required");
    }
    rc = finish_fraction(s, d);
    if (rc < 0) {
        return rc;
    }
    if (s->ngpu_models && s->kind == GP_REQ_NONE) {
        return gp_diag_set(d, GP_EINVAL, "resources.gpu_models: the job asks for no GPU");
    }
    if (s->idle_utilization >= 0 && s->idle_timeout_s == 0) {
        return gp_diag_set(d, GP_EINVAL, "idle_utilization: only with idle_timeout");
    }
    if (s->idle_utilization < 0) {
        s->idle_utilization = GP_JOB_DEFAULT_IDLE_UTIL;
    }
    if (s->idle_timeout_s > 0 && s->kind == GP_REQ_NONE && s->job_kind != GP_JOB_NOTEBOOK) {
        return gp_diag_set(d, GP_EINVAL, "idle_timeout: the job asks for no GPU");
    }
    for (int i = 0; s->replicas > 1 && i < s->nenv; i++) {
        if (gp_env_gang_reserved(s->env[i].name)) {
            return gp_diag_set(d, GP_EINVAL,
                               "env.%.64s: set by gpupool for a job of more than one replica",
                               s->env[i].name);
        }
    }
    rc = finish_image(s, d);
    rc = rc < 0 ? rc : js_batch_finish(s, d);
    if (rc < 0) {
        return rc;
    }
    if (s->max_restarts < 0) {
        /* A restart policy alone should restart: a few times, unless told otherwise. */
        s->max_restarts = s->restart_policy == GP_RESTART_NEVER ? 0 : GP_JOB_DEFAULT_RESTARTS;
    }
    return 0;
}

static int from_json(json_t *root, gp_jobspec *out, gp_diag *d)
{
    gp_jobspec s;
    memset(&s, 0, sizeof(s));
    strcpy(s.queue, "default");
    s.replicas = 1;
    s.max_restarts = -1; /* unset: see finish() */
    s.idle_utilization = -1;
    s.gpu_policy = GP_GPU_DEFAULT;
    s.compute_policy = GP_COMPUTE_DEFAULT;
    s.image_pull_policy = GP_PULL_DEFAULT;
    js_serve_defaults(&s); /* the kind's defaults: see js_serve_finish */
    const field_table tables[] = {
        JS_TABLE(top_fields),
        {js_serve_fields, js_serve_nfields},
        {js_place_fields, js_place_nfields},
    };
    int rc = js_walk(root, "", tables, (int)(sizeof(tables) / sizeof(tables[0])), &s, d);
    if (rc == 0) {
        rc = finish(&s, d);
    }
    if (rc < 0) {
        gp_jobspec_fini(&s);
        return rc;
    }
    *out = s;
    return 0;
}

int gp_jobspec_parse_json(const char *text, size_t len, gp_jobspec *out, gp_diag *d)
{
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        return gp_diag_set(d, GP_EPARSE, "line %d, column %d: %s", err.line, err.column, err.text);
    }
    int rc = from_json(root, out, d);
    json_decref(root);
    return rc;
}

int gp_jobspec_parse_yaml(const char *text, size_t len, gp_jobspec *out, gp_diag *d)
{
    json_t *root;
    int rc = gp_yaml_to_json(text, len, &root, d);
    if (rc < 0) {
        return rc;
    }
    rc = from_json(root, out, d);
    json_decref(root);
    return rc;
}

static void free_list(char **list)
{
    for (char **p = list; p && *p; p++) {
        free(*p);
    }
    free(list);
}

void gp_jobspec_fini(gp_jobspec *s)
{
    free_list(s->command);
    free_list(s->args);
    for (int i = 0; i < s->nenv; i++) {
        free(s->env[i].name);
        if (s->env[i].secret && s->env[i].value) {
            gp_seal_wipe(s->env[i].value, strlen(s->env[i].value));
        }
        free(s->env[i].value);
    }
    free(s->env);
    free(s->working_dir);
    free(s->image);
    js_serve_fini(s);
    js_place_fini(s);
    js_batch_fini(s);
    s->command = s->args = NULL;
    s->env = NULL;
    s->nenv = 0;
    s->working_dir = NULL;
    s->image = NULL;
}

void gp_jobspec_request(const gp_jobspec *s, const gp_cluster *c, gp_request *out)
{
    memset(out, 0, sizeof(*out));
    out->cpu_milli = s->cpu_milli;
    out->memory_mib = s->memory_mib;
    out->kind = s->kind;
    out->gpu_count = s->gpus;
    out->gpu_milli = s->gpu_milli;
    out->gpu_mem_mib = s->gpu_memory_mib;
    memcpy(out->mig_profile, s->mig_profile, sizeof(out->mig_profile));
    for (int i = 0; i < s->ngpu_models; i++) {
        out->allowed_models |= gp_cluster_models_named(c, s->gpu_models[i]);
    }
    if (s->ngpu_models > 0 && out->allowed_models == 0) {
        out->allowed_models = 1ull << (GP_MAX_MODELS - 1); /* none of them: unplaceable */
    }
    out->needs = s->image ? GP_CAP_IMAGES : 0;
    const gp_constraints *k = &s->place;
    bool any = k->nselector || k->ntolerations || k->nspread || k->anti_affinity;
    out->place = any ? k : NULL;
}

int gp_jobspec_cap_check(const gp_jobspec *s, gp_diag *d)
{
    int reserved = (s->gpu_milli + 9) / 10;
    if (s->kind == GP_REQ_FRACTION && s->cores_percent > reserved) {
        return gp_diag_set(d, GP_EINVAL,
                           "resources.cores_percent: at most %d, the share gpu_milli %d reserves; "
                           "ask for more gpu_milli to use more",
                           reserved, s->gpu_milli);
    }
    return 0;
}

const char *gp_network_name(gp_network n)
{
    return n == GP_NETWORK_PRIVATE ? "private" : "host";
}

const char *gp_compute_policy_name(gp_compute_policy p)
{
    return p == GP_COMPUTE_SHARED ? "shared" : p == GP_COMPUTE_STRICT ? "strict" : NULL;
}

void gp_jobspec_enforcement(const gp_jobspec *s, int64_t gpu_memory_mib, gp_share_enforcement *out)
{
    memset(out, 0, sizeof(*out));
    out->policy = GP_COMPUTE_SHARED;
    if (s->kind != GP_REQ_FRACTION) {
        return;
    }
    out->fraction = true;
    out->memory_mib = s->gpu_memory_mib;
    out->policy = s->compute_policy == GP_COMPUTE_STRICT ? GP_COMPUTE_STRICT : GP_COMPUTE_SHARED;
    int64_t pct = 100;
    if (s->cores_percent > 0) {
        pct = s->cores_percent;
    } else if (s->gpu_milli > 0) {
        pct = (s->gpu_milli + 9) / 10;
    } else if (gpu_memory_mib > 0) {
        pct = (100 * s->gpu_memory_mib + gpu_memory_mib - 1) / gpu_memory_mib;
    }
    out->core_percent = (int)(pct < 1 ? 1 : pct > 100 ? 100 : pct);
}

/* ---- the canonical form (gp_jobspec_to_json) ---- */

void js_put(enc *e, json_t *o, const char *key, json_t *v)
{
    if (!v || !o || json_object_set_new(o, key, v) != 0) {
        e->failed = true;
    }
}

json_t *js_string_list(enc *e, char **list)
{
    json_t *a = json_array();
    for (char **p = list; a && p && *p; p++) {
        if (json_array_append_new(a, json_string(*p)) != 0) {
            e->failed = true;
        }
    }
    e->failed |= !a;
    return a;
}

/* Seconds in the largest unit that divides them exactly: "2h", "90m", "45s", "1d". */
json_t *js_duration_json(int64_t secs)
{
    static const struct {
        int64_t secs;
        char unit;
    } units[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};
    char buf[32] = "0s";
    for (size_t i = 0; secs != 0 && i < sizeof(units) / sizeof(units[0]); i++) {
        if (secs % units[i].secs == 0) {
            snprintf(buf, sizeof(buf), "%lld%c", (long long)(secs / units[i].secs), units[i].unit);
            break;
        }
    }
    return json_string(buf);
}

static json_t *resources(enc *e, const gp_jobspec *s)
{
    json_t *r = json_object();
    if (s->gpus > 0) {
        js_put(e, r, "gpus", json_integer(s->gpus));
    }
    if (s->gpu_milli > 0) {
        js_put(e, r, "gpu_milli", json_integer(s->gpu_milli));
    }
    if (s->gpu_memory_mib > 0) {
        js_put(e, r, "gpu_memory_mib", json_integer(s->gpu_memory_mib));
    }
    if (s->cores_percent > 0) {
        js_put(e, r, "cores_percent", json_integer(s->cores_percent));
    }
    if (s->compute_policy != GP_COMPUTE_DEFAULT) {
        js_put(e, r, "compute_policy", json_string(compute_names[s->compute_policy]));
    }
    if (s->mig_profile[0]) {
        js_put(e, r, "mig_profile", json_string(s->mig_profile));
    }
    if (s->ngpu_models > 0) {
        json_t *models = json_array();
        for (int i = 0; models && i < s->ngpu_models; i++) {
            e->failed |= json_array_append_new(models, json_string(s->gpu_models[i])) != 0;
        }
        js_put(e, r, "gpu_models", models);
    }
    js_put(e, r, "cpu_milli", json_integer(s->cpu_milli));
    js_put(e, r, "memory_mib", json_integer(s->memory_mib));
    e->failed |= !r;
    return r;
}

/* One form per entry: a string; {"value", "secret": true} for a secret not yet sealed; the
 * sealed form {"secret": true, "sealed"} once gpupoold has sealed it. */
static json_t *env_map(enc *e, const gp_jobspec *s)
{
    json_t *m = json_object();
    for (int i = 0; m && i < s->nenv; i++) {
        const gp_env_var *v = &s->env[i];
        json_t *x = !v->secret  ? json_string(v->value)
                    : v->sealed ? json_pack("{s:b, s:s}", "secret", 1, "sealed", v->value)
                                : json_pack("{s:s, s:b}", "value", v->value, "secret", 1);
        js_put(e, m, v->name, x);
    }
    e->failed |= !m;
    return m;
}

static json_t *volume_list(enc *e, const gp_jobspec *s)
{
    json_t *a = json_array();
    for (int i = 0; a && i < s->nvolumes; i++) {
        const gp_volume_ref *v = &s->volumes[i];
        char buf[GP_JOB_NAME_MAX + 4];
        snprintf(buf, sizeof(buf), "%s%s", v->name,
                 v->mode == GP_VOLUME_RO   ? ":ro"
                 : v->mode == GP_VOLUME_RW ? ":rw"
                                           : "");
        e->failed |= json_array_append_new(a, json_string(buf)) != 0;
    }
    e->failed |= !a;
    return a;
}

/* What a job does with time: its limits (absent: none), idle stop and restarts. */
static void lifecycle(enc *e, json_t *o, const gp_jobspec *s)
{
    if (s->max_runtime_s > 0) {
        js_put(e, o, "max_runtime", js_duration_json(s->max_runtime_s));
    }
    if (s->hang_timeout_s > 0) {
        js_put(e, o, "hang_timeout", js_duration_json(s->hang_timeout_s));
    }
    if (s->idle_timeout_s > 0) {
        double u = s->idle_utilization;
        js_put(e, o, "idle_timeout", js_duration_json(s->idle_timeout_s));
        js_put(e, o, "idle_utilization",
               u == (double)(int64_t)u ? json_integer((json_int_t)u) : json_real(u));
        js_put(e, o, "idle_action",
               json_string(s->idle_action == GP_IDLE_SUSPEND ? "suspend" : "stop"));
    }
    js_put(e, o, "restart_policy", json_string(restart_names[s->restart_policy]));
    js_put(e, o, "max_restarts", json_integer(s->max_restarts));
}

json_t *gp_jobspec_to_json(const gp_jobspec *s)
{
    enc e = {false};
    json_t *o = json_object();
    js_put(&e, o, "name", json_string(s->name));
    js_put(&e, o, "kind", json_string(gp_job_kind_name(s->job_kind)));
    if (s->tenant[0]) {
        js_put(&e, o, "tenant", json_string(s->tenant));
    }
    js_put(&e, o, "queue", json_string(s->queue));
    if (s->priority_class[0]) {
        js_put(&e, o, "priority_class", json_string(s->priority_class));
    }
    js_put(&e, o, "replicas", json_integer(s->replicas));
    js_put(&e, o, "resources", resources(&e, s));
    js_put(&e, o, "topology", json_string(topology_names[s->topology]));
    if (s->gpu_policy != GP_GPU_DEFAULT) {
        js_put(&e, o, "gpu_policy", json_string(gpu_policy_names[s->gpu_policy]));
    }
    js_put(&e, o, "preemptible", json_boolean(s->preemptible));
    if (s->image) {
        js_put(&e, o, "image", json_string(s->image));
        js_put(&e, o, "image_pull_policy", json_string(pull_names[s->image_pull_policy]));
    }
    js_put(&e, o, "network", json_string(network_names[s->network]));
    if (s->privileged) { /* left out when false: the form of every other job is unchanged */
        js_put(&e, o, "privileged", json_true());
    }
    if (s->command) { /* a notebook's may be left to the controller's default */
        js_put(&e, o, "command", js_string_list(&e, s->command));
    }
    js_put(&e, o, "args", js_string_list(&e, s->args));
    js_put(&e, o, "env", env_map(&e, s));
    if (s->working_dir) {
        js_put(&e, o, "working_dir", json_string(s->working_dir));
    }
    js_put(&e, o, "volumes", volume_list(&e, s));
    lifecycle(&e, o, s);
    js_put(&e, o, "allow_unschedulable", json_boolean(s->allow_unschedulable));
    js_serve_encode(&e, o, s);
    js_place_encode(&e, o, s);
    js_batch_encode(&e, o, s);
    if (e.failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- equality ---- */

static bool same_str(const char *a, const char *b)
{
    return (a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0);
}

bool js_same_list(char **a, char **b)
{
    size_t i = 0;
    for (; a && b && a[i] && b[i]; i++) {
        if (strcmp(a[i], b[i]) != 0) {
            return false;
        }
    }
    return !(a && a[i]) && !(b && b[i]);
}

static bool same_env(const gp_jobspec *a, const gp_jobspec *b)
{
    if (a->nenv != b->nenv) {
        return false;
    }
    for (int i = 0; i < a->nenv; i++) {
        const gp_env_var *x = &a->env[i], *y = &b->env[i];
        if (strcmp(x->name, y->name) != 0 || strcmp(x->value, y->value) != 0 ||
            x->secret != y->secret || x->sealed != y->sealed) {
            return false;
        }
    }
    return true;
}

bool gp_jobspec_equal(const gp_jobspec *a, const gp_jobspec *b)
{
    bool same = strcmp(a->name, b->name) == 0 && strcmp(a->tenant, b->tenant) == 0 &&
                strcmp(a->queue, b->queue) == 0 &&
                strcmp(a->priority_class, b->priority_class) == 0 && a->replicas == b->replicas &&
                a->kind == b->kind && a->gpus == b->gpus && a->gpu_milli == b->gpu_milli &&
                a->gpu_memory_mib == b->gpu_memory_mib && a->cores_percent == b->cores_percent &&
                a->compute_policy == b->compute_policy &&
                strcmp(a->mig_profile, b->mig_profile) == 0 && a->ngpu_models == b->ngpu_models &&
                a->cpu_milli == b->cpu_milli && a->memory_mib == b->memory_mib &&
                a->topology == b->topology && a->gpu_policy == b->gpu_policy &&
                a->preemptible == b->preemptible && a->max_runtime_s == b->max_runtime_s &&
                a->hang_timeout_s == b->hang_timeout_s && a->idle_timeout_s == b->idle_timeout_s &&
                a->idle_utilization == b->idle_utilization &&
                a->restart_policy == b->restart_policy && a->max_restarts == b->max_restarts &&
                a->nvolumes == b->nvolumes && a->allow_unschedulable == b->allow_unschedulable &&
                a->image_pull_policy == b->image_pull_policy && a->network == b->network &&
                a->privileged == b->privileged;
    for (int i = 0; same && i < a->ngpu_models; i++) {
        same = strcmp(a->gpu_models[i], b->gpu_models[i]) == 0;
    }
    for (int i = 0; same && i < a->nvolumes; i++) {
        same = strcmp(a->volumes[i].name, b->volumes[i].name) == 0 &&
               a->volumes[i].mode == b->volumes[i].mode;
    }
    return same && js_same_list(a->command, b->command) && js_same_list(a->args, b->args) &&
           same_env(a, b) && same_str(a->working_dir, b->working_dir) &&
           same_str(a->image, b->image) && js_serve_equal(a, b) && js_place_equal(a, b) &&
           js_batch_equal(a, b);
}
