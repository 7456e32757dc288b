/*
 * gpupool-run's spec file and the job's environment (contract in run_spec.h).
 *
 * Parsing is strict about the fields gpupool-run uses (types, ranges, required fields, each error
 * naming its field by path) and ignores the others. Building the environment is pure: the caller
 * passes the base variables in, so the precedence rules are unit-tested without a process.
 */
#define _DEFAULT_SOURCE /* explicit_bzero */

#include "agent/run_spec.h"
#include "gpupool/jobspec.h"
#include "base/envname.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/log.h"
#include "base/textfile.h"

/* ---- parsing helpers: each names the field (path) in its error ---- */

static int get_int(json_t *o, const char *name, int required, int64_t min, int64_t max,
                   int64_t *out, gp_diag *d)
{
    json_t *v = json_object_get(o, name);
    if (!v || json_is_null(v)) {
        return required ? gp_diag_set(d, GP_EINVAL, "%s: required", name) : 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an integer from %lld to %lld", name,
                           (long long)min, (long long)max);
    }
    *out = json_integer_value(v);
    return 0;
}

static int get_small(json_t *o, const char *name, int required, int min, int max, int *out,
                     gp_diag *d)
{
    int64_t v = *out;
    int rc = get_int(o, name, required, min, max, &v, d);
    *out = (int)v;
    return rc;
}

static int plain_string(json_t *v)
{
    return json_is_string(v) && !memchr(json_string_value(v), '\0', json_string_length(v));
}

static int get_str(json_t *o, const char *path, const char *name, int required, char **out,
                   gp_diag *d)
{
    json_t *v = json_object_get(o, name);
    if (!v || json_is_null(v)) {
        return required ? gp_diag_set(d, GP_EINVAL, "%s%s: required", path, name) : 0;
    }
    if (!plain_string(v) || json_string_length(v) == 0) {
        return gp_diag_set(d, GP_EINVAL, "%s%s: must be a non-empty string", path, name);
    }
    *out = strdup(json_string_value(v));
    return *out ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

/* Appends the strings of array v (path names it) to list, which has *n entries and room for
 * the rest plus a NULL. */
static int add_strings(json_t *v, const char *path, char **list, int *n, gp_diag *d)
{
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i);
        if (!plain_string(e)) {
            return gp_diag_set(d, GP_EINVAL, "%s[%zu]: must be a string", path, i);
        }
        if (!(list[(*n)++] = strdup(json_string_value(e)))) {
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
    }
    return 0;
}

static int get_vars(json_t *o, const char *path, gp_run_var **out, int *n, gp_diag *d)
{
    if (!o || json_is_null(o)) {
        return 0;
    }
    if (!json_is_object(o) || json_object_size(o) > 4096) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a map of at most 4096 names to strings",
                           path);
    }
    if (!(*out = calloc(json_object_size(o) + 1, sizeof(gp_run_var)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val)
    {
        if (!gp_env_name_valid(key)) {
            return gp_diag_set(d, GP_EINVAL, "%s.%.64s: not a valid variable name", path, key);
        }
        if (!plain_string(val)) {
            return gp_diag_set(d, GP_EINVAL, "%s.%.64s: must be a string", path, key);
        }
        gp_run_var *var = &(*out)[(*n)++];
        var->name = strdup(key);
        var->value = strdup(json_string_value(val));
        if (!var->name || !var->value) {
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
    }
    return 0;
}

/* ---- the sections of the spec ---- */

static int parse_command(json_t *spec, gp_run_spec *s, gp_diag *d)
{
    if (!json_is_object(spec)) {
        return gp_diag_set(d, GP_EINVAL, "spec: required, an object");
    }
    json_t *cmd = json_object_get(spec, "command"), *args = json_object_get(spec, "args");
    if (!json_is_array(cmd) || json_array_size(cmd) == 0 || json_array_size(cmd) > 4096) {
        return gp_diag_set(d, GP_EINVAL, "spec.command: required, a list of 1 to 4096 strings");
    }
    if (args && !json_is_null(args) && (!json_is_array(args) || json_array_size(args) > 65536)) {
        return gp_diag_set(d, GP_EINVAL, "spec.args: must be a list of at most 65536 strings");
    }
    size_t total = json_array_size(cmd) + (json_is_array(args) ? json_array_size(args) : 0);
    if (!(s->argv = calloc(total + 1, sizeof(char *)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int n = 0;
    int rc = add_strings(cmd, "spec.command", s->argv, &n, d);
    if (rc == 0 && json_is_array(args)) {
        rc = add_strings(args, "spec.args", s->argv, &n, d);
    }
    if (rc == 0 && s->argv[0][0] == '\0') {
        rc = gp_diag_set(d, GP_EINVAL, "spec.command[0]: must not be empty");
    }
    if (rc == 0) {
        rc = get_vars(json_object_get(spec, "env"), "spec.env", &s->env, &s->nenv, d);
    }
    if (rc == 0) {
        rc = get_str(spec, "spec.", "working_dir", 0, &s->working_dir, d);
    }
    if (rc == 0 && s->working_dir && s->working_dir[0] != '/') {
        rc = gp_diag_set(d, GP_EINVAL, "spec.working_dir: must be an absolute path");
    }
    return rc;
}

/* A UUID goes into a comma-separated list: no separators, spaces or '='. */
static int uuid_valid(const char *u)
{
    if (!*u) {
        return 0;
    }
    for (; *u; u++) {
        if (!(isalnum((unsigned char)*u) || *u == '-' || *u == '_' || *u == '/' || *u == '.')) {
            return 0;
        }
    }
    return 1;
}

static int parse_gpus(json_t *gpus, gp_run_spec *s, gp_diag *d)
{
    if (!gpus || json_is_null(gpus)) {
        return 0;
    }
    if (!json_is_array(gpus) || json_array_size(gpus) > 1024) {
        return gp_diag_set(d, GP_EINVAL, "gpus: must be a list of at most 1024 objects");
    }
    if (!(s->gpu_uuids = calloc(json_array_size(gpus) + 1, sizeof(char *)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < json_array_size(gpus); i++) {
        json_t *g = json_array_get(gpus, i);
        json_t *mig = json_object_get(g, "mig_uuid");
        const char *key = mig && !json_is_null(mig) ? "mig_uuid" : "uuid";
        json_t *u = json_object_get(g, key);
        if (!json_is_object(g) || !plain_string(u) || !uuid_valid(json_string_value(u))) {
            return gp_diag_set(d, GP_EINVAL,
                               "gpus[%zu].%s: required, a UUID (letters, digits, '-')", i, key);
        }
        if (!(s->gpu_uuids[s->ngpus++] = strdup(json_string_value(u)))) {
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
    }
    return 0;
}

/* gpu_share: a fraction's limits, enforced as given (the controller decided them). */
static int parse_share(json_t *o, gp_run_spec *s, gp_diag *d)
{
    if (!o || json_is_null(o)) {
        return 0;
    }
    if (!json_is_object(o)) {
        return gp_diag_set(d, GP_EINVAL, "gpu_share: must be an object");
    }
    if (s->ngpus == 0) {
        return gp_diag_set(d, GP_EINVAL, "gpu_share: the replica has no GPU");
    }
    s->fractional = 1;
    s->share_core_percent = 100;
    int rc = get_int(o, "memory_mib", 0, 0, (int64_t)1 << 40, &s->share_mem_mib, d);
    rc = rc ? rc : get_small(o, "core_percent", 0, 1, 100, &s->share_core_percent, d);
    json_t *pol = json_object_get(o, "core_policy");
    if (rc == 0 && pol && !json_is_null(pol)) {
        const char *p = json_is_string(pol) ? json_string_value(pol) : "";
        if (strcmp(p, "shared") != 0 && strcmp(p, "strict") != 0) {
            return gp_diag_set(d, GP_EINVAL, "gpu_share.core_policy: must be shared or strict");
        }
        s->share_core_strict = strcmp(p, "strict") == 0;
    }
    if (rc < 0 && d) {
        /* get_int and get_small name the key alone */
        char msg[sizeof(d->msg)];
        snprintf(msg, sizeof(msg), "%s", d->msg);
        gp_diag_set(d, rc, "gpu_share.%s", msg);
    }
    return rc;
}

static int parse_host(json_t *h, size_t i, char **out, gp_diag *d)
{
    char line[600];
    if (plain_string(h)) {
        snprintf(line, sizeof(line), "%s", json_string_value(h));
    } else {
        json_t *host = json_object_get(h, "host"), *slots = json_object_get(h, "slots");
        if (!plain_string(host) || !json_is_integer(slots) || json_integer_value(slots) < 1) {
            return gp_diag_set(d, GP_EINVAL,
                               "hostfile[%zu]: must be \"HOST slots=N\" or {host, slots}", i);
        }
        snprintf(line, sizeof(line), "%s slots=%lld", json_string_value(host),
                 (long long)json_integer_value(slots));
    }
    if (!line[0] || strpbrk(line, "\r\n")) {
        return gp_diag_set(d, GP_EINVAL, "hostfile[%zu]: must be one non-empty line", i);
    }
    *out = strdup(line);
    return *out ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

static int parse_gang(json_t *o, gp_run_spec *s, gp_diag *d)
{
    s->rank = s->replica;
    s->nproc_per_node = s->ngpus > 1 ? s->ngpus : 1; /* a controller that does not say */
    int rc = get_small(o, "rank", 0, 0, s->world_size - 1, &s->rank, d);
    if (rc == 0) {
        rc = get_small(o, "nproc_per_node", 0, 1, GP_RUN_NPROC_MAX, &s->nproc_per_node, d);
    }
    if (rc == 0) {
        rc = get_str(o, "", "master_addr", 1, &s->master_addr, d);
    }
    if (rc == 0) {
        rc = get_small(o, "master_port", 1, 1, 65535, &s->master_port, d);
    }
    json_t *hf = json_object_get(o, "hostfile");
    if (rc == 0 &&
        (!json_is_array(hf) || json_array_size(hf) == 0 || json_array_size(hf) > 65536)) {
        rc = gp_diag_set(d, GP_EINVAL, "hostfile: required for a gang, a list of hosts");
    }
    if (rc == 0 && !(s->hostfile = calloc(json_array_size(hf), sizeof(char *)))) {
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; rc == 0 && i < json_array_size(hf); i++) {
        rc = parse_host(json_array_get(hf, i), i, &s->hostfile[i], d);
        s->nhosts += rc == 0;
    }
    return rc;
}

static int parse_volumes(json_t *vols, gp_run_spec *s, gp_diag *d)
{
    if (!vols || json_is_null(vols)) {
        return 0;
    }
    if (!json_is_array(vols) || json_array_size(vols) > 64) {
        return gp_diag_set(d, GP_EINVAL, "volumes: must be a list of at most 64 objects");
    }
    if (!(s->volumes = calloc(json_array_size(vols) + 1, sizeof(gp_run_volume)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < json_array_size(vols); i++) {
        json_t *v = json_array_get(vols, i), *ro = json_object_get(v, "read_only");
        char path[40];
        snprintf(path, sizeof(path), "volumes[%zu].", i);
        gp_run_volume *x = &s->volumes[s->nvolumes++];
        int rc = get_str(v, path, "name", 1, &x->name, d);
        rc = rc ? rc : get_str(v, path, "path", 1, &x->path, d);
        if (rc < 0) {
            return rc;
        }
        const char *n = x->name;
        bool ok = n[0] != '\0' && strlen(n) < 64;
        for (; ok && *n; n++) {
            ok = islower((unsigned char)*n) || isdigit((unsigned char)*n) || *n == '-';
        }
        if (!ok) {
            return gp_diag_set(d, GP_EINVAL, "%sname: must be [a-z0-9-], 1 to 63 characters", path);
        }
        if (x->path[0] != '/') {
            return gp_diag_set(d, GP_EINVAL, "%spath: must be an absolute path", path);
        }
        if (ro && !json_is_boolean(ro)) {
            return gp_diag_set(d, GP_EINVAL, "%sread_only: must be true or false", path);
        }
        x->read_only = json_is_true(ro);
    }
    return 0;
}

/* ---- images ---- */

const char *gp_run_pull_name(gp_run_pull p)
{
    return p == GP_RUN_PULL_IF_NOT_PRESENT ? "IfNotPresent"
           : p == GP_RUN_PULL_NEVER        ? "Never"
                                           : "Always";
}

gp_run_pull gp_run_pull_default(const char *image)
{
    if (strchr(image, '@')) {
        return GP_RUN_PULL_IF_NOT_PRESENT; /* a digest never changes */
    }
    const char *slash = strrchr(image, '/'), *colon = strrchr(image, ':');
    const char *tag = colon && (!slash || colon > slash) ? colon + 1 : NULL;
    return !tag || strcmp(tag, "latest") == 0 ? GP_RUN_PULL_ALWAYS : GP_RUN_PULL_IF_NOT_PRESENT;
}

/* The shape podman takes as one reference: printable, no spaces, not an option; the controller
 * checks the grammar. */
static bool image_ref_ok(const char *v)
{
    size_t len = strlen(v);
    if (len == 0 || len > 1024 || v[0] == '-') {
        return false;
    }
    for (const char *p = v; *p; p++) {
        if ((unsigned char)*p <= ' ' || *p == 0x7f) {
            return false;
        }
    }
    return true;
}

/* A string field of o (top level, else of o.spec, where a controller may carry it too). */
static json_t *top_or_spec(json_t *o, const char *name, const char **path)
{
    json_t *v = json_object_get(o, name);
    *path = "";
    if (!v || json_is_null(v)) {
        v = json_object_get(json_object_get(o, "spec"), name);
        *path = "spec.";
    }
    return v && !json_is_null(v) ? v : NULL;
}

static int parse_auth_obj(json_t *a, gp_run_spec *s, gp_diag *d)
{
    free(s->auth_registry);
    free(s->auth_username);
    free(s->auth_password);
    s->auth_registry = s->auth_username = s->auth_password = NULL;
    if (!json_is_object(a)) {
        return gp_diag_set(d, GP_EINVAL, "registry_auth: must be an object");
    }
    int rc = get_str(a, "registry_auth.", "registry", 1, &s->auth_registry, d);
    rc = rc ? rc : get_str(a, "registry_auth.", "username", 1, &s->auth_username, d);
    rc = rc ? rc : get_str(a, "registry_auth.", "password", 1, &s->auth_password, d);
    if (rc == 0 && !image_ref_ok(s->auth_registry)) {
        rc = gp_diag_set(d, GP_EINVAL, "registry_auth.registry: must be HOST[:PORT]");
    }
    return rc;
}

int gp_run_spec_auth_parse(const char *text, gp_run_spec *s, gp_diag *d)
{
    json_error_t err;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (!o) {
        return gp_diag_set(d, GP_EPARSE, "registry_auth: line %d, column %d: %s", err.line,
                           err.column, err.text);
    }
    int rc = parse_auth_obj(o, s, d);
    json_decref(o);
    return rc;
}

static int parse_image(json_t *o, gp_run_spec *s, gp_diag *d)
{
    const char *path;
    json_t *v = top_or_spec(o, "image", &path);
    if (v && (!plain_string(v) || !image_ref_ok(json_string_value(v)))) {
        return gp_diag_set(d, GP_EINVAL, "%simage: must be an image reference", path);
    }
    if (v && !(s->image = strdup(json_string_value(v)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    json_t *p = top_or_spec(o, "image_pull_policy", &path);
    if (p && !s->image) {
        return gp_diag_set(d, GP_EINVAL, "%simage_pull_policy: only with image", path);
    }
    s->pull_policy = s->image ? gp_run_pull_default(s->image) : GP_RUN_PULL_ALWAYS;
    if (p) {
        const char *t = json_is_string(p) ? json_string_value(p) : "";
        gp_run_pull all[] = {GP_RUN_PULL_ALWAYS, GP_RUN_PULL_IF_NOT_PRESENT, GP_RUN_PULL_NEVER};
        size_t i = 0;
        while (i < 3 && strcmp(t, gp_run_pull_name(all[i])) != 0) {
            i++;
        }
        if (i == 3) {
            return gp_diag_set(d, GP_EINVAL,
                               "%simage_pull_policy: must be Always, IfNotPresent or Never", path);
        }
        s->pull_policy = all[i];
    }
    json_t *n = top_or_spec(o, "network", &path);
    if (n) {
        const char *t = json_is_string(n) ? json_string_value(n) : "";
        if (strcmp(t, "host") != 0 && strcmp(t, "private") != 0) {
            return gp_diag_set(d, GP_EINVAL, "%snetwork: must be host or private", path);
        }
        s->network_private = strcmp(t, "private") == 0;
    }
    json_t *c = json_object_get(o, "cdi_devices");
    if (c && !json_is_boolean(c)) {
        return gp_diag_set(d, GP_EINVAL, "cdi_devices: must be true or false");
    }
    s->cdi_devices = c && json_is_true(c);
    json_t *priv = json_object_get(o, "privileged");
    if (priv && !json_is_boolean(priv)) {
        return gp_diag_set(d, GP_EINVAL, "privileged: must be true or false");
    }
    s->privileged = priv && json_is_true(priv);
    json_t *a = json_object_get(o, "registry_auth");
    int rc = get_str(o, "", "tenant", 0, &s->tenant, d);
    return rc == 0 && a && !json_is_null(a) ? parse_auth_obj(a, s, d) : rc;
}

/* userns: {uid_base, size}, set by the agent (idmap.h). */
static int parse_userns(json_t *u, gp_run_spec *s, gp_diag *d)
{
    if (!u || json_is_null(u)) {
        return 0;
    }
    if (!json_is_object(u)) {
        return gp_diag_set(d, GP_EINVAL, "userns: must be an object");
    }
    gp_idmap *m = &s->userns;
    int rc = get_int(u, "uid_base", 1, GP_IDMAP_FIRST_MIN, GP_IDMAP_END - 1, &m->base, d);
    rc = rc ? rc : get_int(u, "size", 1, 1, GP_IDMAP_SIZE, &m->size, d);
    if (rc == 0 && m->base + m->size > GP_IDMAP_END) {
        rc = gp_diag_set(d, GP_EINVAL, "size: the range passes %lld", (long long)GP_IDMAP_END - 1);
    }
    if (rc < 0) {
        char msg[sizeof(d->msg)];
        snprintf(msg, sizeof(msg), "%s", d->msg);
        m->base = m->size = 0;
        return gp_diag_set(d, rc, "userns.%.200s", msg);
    }
    return 0;
}

/* job_kind and port: a notebook or service gets a network namespace of its own. */
static int parse_kind(json_t *o, gp_run_spec *s, gp_diag *d)
{
    json_t *k = json_object_get(o, "kind");
    const char *t = k && json_is_string(k) ? json_string_value(k) : k ? "?" : "batch";
    if (strcmp(t, "batch") != 0 && strcmp(t, "notebook") != 0 && strcmp(t, "service") != 0) {
        return gp_diag_set(d, GP_EINVAL, "kind: must be batch, notebook or service");
    }
    s->own_netns = strcmp(t, "batch") != 0;
    return get_small(o, "port", 0, 0, 65535, &s->port, d);
}

static int parse_doc(json_t *o, gp_run_spec *s, gp_diag *d)
{
    const int64_t big = (int64_t)1 << 52;
    if (!json_is_object(o)) {
        return gp_diag_set(d, GP_EINVAL, "the spec must be a JSON object");
    }
    s->world_size = 1;
    int rc = get_int(o, "job", 1, 1, big, &s->job, d);
    rc = rc ? rc : get_small(o, "replica", 1, 0, 1 << 20, &s->replica, d);
    rc = rc ? rc : get_int(o, "epoch", 1, 0, big, &s->epoch, d);
    rc = rc ? rc : get_small(o, "world_size", 0, 1, 1 << 20, &s->world_size, d);
    rc = rc ? rc : get_small(o, "restart_count", 0, 0, 1 << 30, &s->restart_count, d);
    s->array_index = -1;
    rc = rc ? rc : get_small(o, "array_index", 0, 0, GP_ARRAY_INDEX_MAX, &s->array_index, d);
    rc = rc ? rc : get_int(o, "array_job", 0, 1, big, &s->array_job, d);
    rc = rc ? rc : get_int(o, "shm_size_mib", 0, 1, GP_JOB_MAX_SHM_MIB, &s->shm_size_mib, d);
    rc = rc ? rc : get_int(o, "cpu_milli", 0, 0, big, &s->cpu_milli, d);
    rc = rc ? rc : get_int(o, "memory_mib", 0, 0, big, &s->memory_mib, d);
    rc = rc ? rc : get_str(o, "", "name", 0, &s->name, d);
    rc = rc ? rc : parse_gpus(json_object_get(o, "gpus"), s, d);
    rc = rc ? rc : parse_share(json_object_get(o, "gpu_share"), s, d);
    rc = rc ? rc : parse_command(json_object_get(o, "spec"), s, d);
    if (rc == 0) {
        rc = get_vars(json_object_get(o, "env_extra"), "env_extra", &s->env_extra, &s->nenv_extra,
                      d);
    }
    if (rc == 0 && s->replica >= s->world_size) {
        rc = gp_diag_set(d, GP_EINVAL, "replica: must be less than world_size (%d)", s->world_size);
    }
    if (rc == 0 && gp_run_spec_is_gang(s)) {
        rc = parse_gang(o, s, d);
    }
    if (rc == 0) {
        rc = parse_volumes(json_object_get(o, "volumes"), s, d);
    }
    rc = rc ? rc : get_str(o, "", "checkpoint_dir", 0, &s->checkpoint_dir, d);
    if (rc == 0 && s->checkpoint_dir && s->checkpoint_dir[0] != '/') {
        rc = gp_diag_set(d, GP_EINVAL, "checkpoint_dir: must be an absolute path");
    }
    rc = rc ? rc : parse_userns(json_object_get(o, "userns"), s, d);
    rc = rc ? rc : parse_kind(o, s, d);
    return rc ? rc : parse_image(o, s, d);
}

int gp_run_spec_parse(const char *text, gp_run_spec **out, gp_diag *d)
{
    *out = NULL;
    json_error_t err;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (!o) {
        return gp_diag_set(d, GP_EPARSE, "line %d, column %d: %s", err.line, err.column, err.text);
    }
    gp_run_spec *s = calloc(1, sizeof(*s));
    int rc = s ? parse_doc(o, s, d) : gp_diag_set(d, GP_ENOMEM, "out of memory");
    json_decref(o);
    if (rc < 0) {
        gp_run_spec_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int gp_run_spec_load(const char *path, gp_run_spec **out, gp_diag *d)
{
    *out = NULL;
    char *buf = gp_text_read(path, 64u << 20, NULL);
    if (!buf) {
        return gp_diag_set(d, errno == ENOMEM ? GP_ENOMEM : GP_EINVAL, "--spec %s: %s", path,
                           strerror(errno));
    }
    int rc = gp_run_spec_parse(buf, out, d);
    free(buf);
    if (rc < 0) {
        char msg[sizeof(d->msg)];
        snprintf(msg, sizeof(msg), "%s", d ? d->msg : "");
        gp_diag_set(d, rc, "--spec %s: %s", path, msg);
    }
    return rc;
}

static void free_strings(char **v, int n)
{
    for (int i = 0; v && (n < 0 ? v[i] != NULL : i < n); i++) {
        free(v[i]);
    }
    free(v);
}

static void free_vars(gp_run_var *v, int n)
{
    for (int i = 0; v && i < n; i++) {
        free(v[i].name);
        free(v[i].value);
    }
    free(v);
}

void gp_run_spec_free(gp_run_spec *s)
{
    if (!s) {
        return;
    }
    free(s->name);
    free_strings(s->gpu_uuids, -1);
    free_strings(s->argv, -1);
    free_vars(s->env, s->nenv);
    free_vars(s->env_extra, s->nenv_extra);
    free(s->working_dir);
    free(s->checkpoint_dir);
    free(s->master_addr);
    free_strings(s->hostfile, s->nhosts);
    for (int i = 0; i < s->nvolumes; i++) {
        free(s->volumes[i].name);
        free(s->volumes[i].path);
    }
    free(s->volumes);
    free(s->image);
    free(s->tenant);
    free(s->auth_registry);
    free(s->auth_username);
    if (s->auth_password) {
        explicit_bzero(s->auth_password, strlen(s->auth_password));
    }
    free(s->auth_password);
    free(s);
}

int gp_run_spec_is_gang(const gp_run_spec *s)
{
    return s->world_size > 1;
}

char *gp_run_hostfile_text(const gp_run_spec *s)
{
    size_t len = 1;
    for (int i = 0; i < s->nhosts; i++) {
        len += strlen(s->hostfile[i]) + 1;
    }
    char *t = malloc(len), *p = t;
    for (int i = 0; t && i < s->nhosts; i++) {
        p += sprintf(p, "%s\n", s->hostfile[i]);
    }
    if (t) {
        *p = '\0';
    }
    return t;
}
