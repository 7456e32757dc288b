/*
 * The desired-replicas codec (wire_desired.h). Each decoder reads each member it knows once,
 * through the strict readers of wire_read.h, so a value is judged in one place; the encoders
 * write the same members back, absent ones left out.
 */
#include "net/wire_desired.h"
#include "net/wire.h"
#include "net/wire_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_LEN 128

/* ---- decoding ---- */

void gp_wire_desired_replica_init(gp_wire_desired_replica *r)
{
    *r = (gp_wire_desired_replica){
        .restart_count = -1,
        .cpu_milli = -1,
        .memory_mib = -1,
        .tenant_id = -1,
        .share = {.memory_mib = -1, .core_percent = -1, .policy = GP_COMPUTE_DEFAULT},
        .network = -1,
        .pull_policy = GP_PULL_DEFAULT,
        .rank = -1,
        .nproc_per_node = -1,
        .master_port = -1,
        .kind = -1,
        .port = -1,
        .array_index = -1,
        .array_job = -1,
        .shm_size_mib = -1};
}

/* A job array's child and /dev/shm. */
static int decode_batch(json_t *v, const char *path, gp_wire_desired_replica *r, gp_diag *d)
{
    int rc;
    if ((rc = gp__wire_i(v, path, "array_index", 0, GP_ARRAY_INDEX_MAX, false, &r->array_index,
                         d)) != 0 ||
        (rc = gp__wire_int(v, path, "array_job", 1, INT64_MAX, false, &r->array_job, d)) != 0 ||
        (rc = gp__wire_int(v, path, "shm_size_mib", 1, GP_JOB_MAX_SHM_MIB, false, &r->shm_size_mib,
                           d)) != 0) {
        return rc;
    }
    return 0;
}

static int decode_gpu(json_t *v, const char *path, gp_wire_desired_gpu *g, gp_diag *d)
{
    *g = (gp_wire_desired_gpu){.index = -1, .milli = -1, .memory_mib = -1, .mig_start = -1};
    int rc;
    if ((rc = gp__wire_object(v, path, d)) != 0 ||
        (rc = gp__wire_i(v, path, "index", 0, GP_WIRE_MAX_GPUS - 1, false, &g->index, d)) ||
        (rc = gp__wire_str(v, path, "uuid", false, g->uuid, sizeof(g->uuid), d)) != 0 ||
        (rc = gp__wire_i(v, path, "milli", 0, 1000, false, &g->milli, d)) != 0 ||
        (rc = gp__wire_int(v, path, "memory_mib", 0, GP_WIRE_MAX_MEMORY_MIB, false, &g->memory_mib,
                           d)) != 0 ||
        (rc = gp__wire_i(v, path, "mig_start", -1, 63, false, &g->mig_start, d)) != 0 ||
        (rc = gp__wire_str(v, path, "mig_uuid", false, g->mig_uuid, sizeof(g->mig_uuid), d))) {
        return rc;
    }
    return 0;
}

static int decode_gpus(json_t *rep, const char *path, gp_wire_desired_replica *r, gp_diag *d)
{
    json_t *list;
    int rc = gp__wire_list(rep, path, "gpus", GP_WIRE_MAX_GPUS, &list, d);
    size_t n = json_array_size(list);
    if (rc != 0 || n == 0) {
        return rc;
    }
    if (!(r->gpus = calloc(n, sizeof(*r->gpus)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    char sub[PATH_LEN + 16];
    for (size_t i = 0; i < n; i++, r->ngpus++) {
        snprintf(sub, sizeof(sub), "%s.gpus[%zu]", path, i);
        if ((rc = decode_gpu(json_array_get(list, i), sub, &r->gpus[i], d)) != 0) {
            return rc;
        }
    }
    return 0;
}

static int decode_share(json_t *rep, const char *path, gp_wire_gpu_share *s, gp_diag *d)
{
    json_t *o = json_object_get(rep, "gpu_share");
    if (!o || json_is_null(o)) {
        return 0;
    }
    char sub[PATH_LEN + 16], policy[16] = "";
    snprintf(sub, sizeof(sub), "%s.gpu_share", path);
    s->given = true;
    int rc;
    if ((rc = gp__wire_object(o, sub, d)) != 0 ||
        (rc = gp__wire_int(o, sub, "memory_mib", 0, GP_WIRE_MAX_MEMORY_MIB, false, &s->memory_mib,
                           d)) != 0 ||
        (rc = gp__wire_i(o, sub, "core_percent", 1, 100, false, &s->core_percent, d)) != 0 ||
        (rc = gp__wire_str(o, sub, "core_policy", false, policy, sizeof(policy), d)) != 0) {
        return rc;
    }
    if (policy[0]) {
        s->policy = strcmp(policy, "shared") == 0   ? GP_COMPUTE_SHARED
                    : strcmp(policy, "strict") == 0 ? GP_COMPUTE_STRICT
                                                    : GP_COMPUTE_DEFAULT;
        if (s->policy == GP_COMPUTE_DEFAULT) {
            return gp_diag_set(d, GP_EINVAL, "%s.core_policy: must be shared or strict", sub);
        }
    }
    return 0;
}

static int decode_volumes(json_t *rep, const char *path, gp_wire_desired_replica *r, gp_diag *d)
{
    json_t *list;
    int rc = gp__wire_list(rep, path, "volumes", GP_WIRE_MAX_VOLUMES, &list, d);
    size_t n = json_array_size(list);
    if (rc != 0 || n == 0) {
        return rc;
    }
    if (!(r->volumes = calloc(n, sizeof(*r->volumes)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    char sub[PATH_LEN + 16];
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(list, i);
        gp_wire_volume *x = &r->volumes[r->nvolumes++];
        snprintf(sub, sizeof(sub), "%s.volumes[%zu]", path, i);
        if ((rc = gp__wire_object(v, sub, d)) != 0 ||
            (rc = gp__wire_str(v, sub, "name", true, x->name, sizeof(x->name), d)) != 0 ||
            (rc = gp__wire_strdup(v, sub, "path", true, GP_WIRE_MAX_PATH_LEN, &x->path, d)) ||
            (rc = gp__wire_bool(v, sub, "read_only", &x->read_only, d)) != 0) {
            return rc;
        }
        if (!x->name[0] || x->path[0] != '/') {
            return gp_diag_set(d, GP_EINVAL, "%s: must have a name and an absolute path", sub);
        }
    }
    return 0;
}

/* One hostfile line, "HOST slots=N" (as the controller sends it) or {host, slots}. */
static int decode_host(json_t *v, const char *path, gp_wire_host *h, gp_diag *d)
{
    const char *text = json_string_value(v), *at = NULL;
    long long slots = 0;
    if (text && strlen(text) == json_string_length(v)) {
        for (const char *p = strstr(text, " slots="); p; p = strstr(p + 1, " slots=")) {
            at = p;
        }
        char *end = NULL;
        slots = at ? strtoll(at + 7, &end, 10) : 0;
        slots = end && !*end && end != at + 7 ? slots : 0;
    } else if (json_is_object(v) && json_is_string(json_object_get(v, "host")) &&
               json_is_integer(json_object_get(v, "slots"))) {
        text = json_string_value(json_object_get(v, "host"));
        at = text + strlen(text);
        slots = json_integer_value(json_object_get(v, "slots"));
    }
    size_t len = at ? (size_t)(at - text) : 0;
    if (len == 0 || len >= sizeof(h->name) || memchr(text, '\n', len) || memchr(text, '\r', len) ||
        slots < 1 || slots > 1 << 20) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be \"HOST slots=N\" (N from 1)", path);
    }
    memcpy(h->name, text, len);
    h->name[len] = '\0';
    h->slots = (int)slots;
    return 0;
}

static int decode_gang(json_t *rep, const char *path, gp_wire_desired_replica *r, gp_diag *d)
{
    int world = r->world_size > 0 ? r->world_size : 1;
    json_t *list;
    int rc;
    if ((rc = gp__wire_i(rep, path, "rank", 0, world - 1, false, &r->rank, d)) != 0 ||
        (rc = gp__wire_i(rep, path, "nproc_per_node", 1, 1024, false, &r->nproc_per_node, d)) ||
        (rc = gp__wire_strdup(rep, path, "master_addr", false, 255, &r->master_addr, d)) != 0 ||
        (rc = gp__wire_i(rep, path, "master_port", 1, 65535, false, &r->master_port, d)) != 0 ||
        (rc = gp__wire_list(rep, path, "hostfile", GP_WIRE_MAX_HOSTS, &list, d)) != 0) {
        return rc;
    }
    size_t n = json_array_size(list);
    if (list && !(r->hosts = calloc(n + 1, sizeof(*r->hosts)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    char sub[PATH_LEN + 24];
    for (size_t i = 0; i < n; i++, r->nhosts++) {
        snprintf(sub, sizeof(sub), "%s.hostfile[%zu]", path, i);
        if ((rc = decode_host(json_array_get(list, i), sub, &r->hosts[i], d)) != 0) {
            return rc;
        }
    }
    return 0;
}

/* Where it runs: image, pull policy, credentials, network, privileged, volumes, checkpoints. */
static int decode_sandbox(json_t *rep, const char *path, gp_wire_desired_replica *r, gp_diag *d)
{
    char policy[16] = "", network[16] = "", sub[PATH_LEN + 16];
    json_t *auth = json_object_get(rep, "registry_auth");
    int rc;
    if ((rc = gp__wire_strdup(rep, path, "image", false, GP_IMAGE_REF_MAX, &r->image, d)) != 0 ||
        (rc = gp__wire_str(rep, path, "image_pull_policy", false, policy, sizeof(policy), d)) ||
        (rc = gp__wire_str(rep, path, "network", false, network, sizeof(network), d)) != 0 ||
        (rc = gp__wire_bool(rep, path, "privileged", &r->privileged, d)) != 0 ||
        (rc = gp__wire_strdup(rep, path, "checkpoint_dir", false, GP_WIRE_MAX_PATH_LEN,
                              &r->checkpoint_dir, d)) != 0) {
        return rc;
    }
    if (policy[0] && (r->pull_policy = gp_pull_policy_parse(policy)) == GP_PULL_DEFAULT) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s.image_pull_policy: must be Always, IfNotPresent or Never", path);
    }
    if (network[0]) {
        r->network = strcmp(network, "host") == 0      ? GP_NETWORK_HOST
                     : strcmp(network, "private") == 0 ? GP_NETWORK_PRIVATE
                                                       : -1;
        if (r->network < 0) {
            return gp_diag_set(d, GP_EINVAL, "%s.network: must be host or private", path);
        }
    }
    snprintf(sub, sizeof(sub), "%s.registry_auth", path);
    if (auth && !json_is_null(auth) &&
        ((rc = gp__wire_object(auth, sub, d)) != 0 ||
         (rc = gp__wire_strdup(auth, sub, "registry", true, GP_IMAGE_REGISTRY_MAX,
                               &r->auth_registry, d)) != 0 ||
         (rc = gp__wire_strdup(auth, sub, "username", true, GP_WIRE_MAX_SECRET_LEN,
                               &r->auth_username, d)) != 0 ||
         (rc = gp__wire_strdup(auth, sub, "password", true, GP_WIRE_MAX_SECRET_LEN,
                               &r->auth_password, d)) != 0)) {
        return rc;
    }
    return decode_volumes(rep, path, r, d);
}

/* What kind of work: kind, port and probes. */
static int decode_serve(json_t *rep, const char *path, gp_wire_desired_replica *r, gp_diag *d)
{
    static const char *const names[] = {"batch", "notebook", "service"};
    char kind[16] = "", sub[PATH_LEN + 24];
    int rc;
    if ((rc = gp__wire_str(rep, path, "kind", false, kind, sizeof(kind), d)) != 0 ||
        (rc = gp__wire_i(rep, path, "port", 1, 65535, false, &r->port, d)) != 0) {
        return rc;
    }
    for (int i = 0; kind[0] && i < 3; i++) {
        r->kind = strcmp(kind, names[i]) == 0 ? i : r->kind;
    }
    if (kind[0] && r->kind < 0) {
        return gp_diag_set(d, GP_EINVAL, "%s.kind: must be batch, notebook or service", path);
    }
    gp_probe *probes[] = {&r->readiness, &r->liveness};
    const char *keys[] = {"readiness_probe", "liveness_probe"};
    for (int i = 0; i < 2; i++) {
        json_t *p = json_object_get(rep, keys[i]);
        snprintf(sub, sizeof(sub), "%s.%s", path, keys[i]);
        if (p && !json_is_null(p) &&
            (rc = gp_probe_parse(p, sub, r->port > 0 ? r->port : 0, probes[i], d)) != 0) {
            return rc;
        }
        if ((probes[i]->type == GP_PROBE_HTTP || probes[i]->type == GP_PROBE_TCP) &&
            probes[i]->port <= 0) { /* the controller sends ports resolved */
            return gp_diag_set(d, GP_EINVAL, "%s: needs a port (the replica has none)", sub);
        }
    }
    return 0;
}

/* The job spec as shown to the node: an object, kept as sent; its MIG profile read out. */
static int decode_spec(json_t *rep, const char *path, gp_wire_desired_replica *r, gp_diag *d)
{
    json_t *spec = json_object_get(rep, "spec");
    if (!spec || json_is_null(spec)) {
        return 0;
    }
    char sub[PATH_LEN + 24];
    snprintf(sub, sizeof(sub), "%s.spec", path);
    int rc = gp__wire_object(spec, sub, d);
    json_t *res = json_object_get(spec, "resources");
    snprintf(sub, sizeof(sub), "%s.spec.resources", path);
    if (rc == 0 && res && !json_is_null(res)) {
        rc = gp__wire_object(res, sub, d);
        rc = rc ? rc
                : gp__wire_str(res, sub, "mig_profile", false, r->mig_profile,
                               sizeof(r->mig_profile), d);
    }
    if (rc == 0) {
        r->spec = json_incref(spec);
    }
    return rc;
}

int gp_wire_desired_replica_decode(json_t *v, const char *path, gp_wire_desired_replica *r,
                                   gp_diag *d)
{
    gp_wire_desired_replica_init(r);
    int rc;
    if ((rc = gp__wire_object(v, path, d)) != 0 ||
        (rc = gp__wire_int(v, path, "job", 1, INT64_MAX, true, &r->job, d)) != 0 ||
        (rc = gp__wire_i(v, path, "replica", 0, 65535, true, &r->replica, d)) != 0 ||
        (rc = gp__wire_int(v, path, "epoch", 0, INT64_MAX, true, &r->epoch, d)) != 0 ||
        (rc = gp__wire_str(v, path, "name", false, r->name, sizeof(r->name), d)) != 0 ||
        (rc = gp__wire_i(v, path, "world_size", 1, GP_JOB_MAX_REPLICAS, false, &r->world_size,
                         d)) != 0 ||
        (rc = gp__wire_i(v, path, "restart_count", 0, INT32_MAX, false, &r->restart_count, d)) ||
        (rc = gp__wire_int(v, path, "cpu_milli", 0, INT64_MAX, false, &r->cpu_milli, d)) != 0 ||
        (rc = gp__wire_int(v, path, "memory_mib", 0, INT64_MAX, false, &r->memory_mib, d)) ||
        (rc = gp__wire_str(v, path, "tenant", false, r->tenant, sizeof(r->tenant), d)) != 0 ||
        (rc = gp__wire_int(v, path, "tenant_id", 0, INT64_MAX, false, &r->tenant_id, d)) != 0 ||
        (rc = gp__wire_str(v, path, "queue", false, r->queue, sizeof(r->queue), d)) != 0 ||
        (rc = decode_gpus(v, path, r, d)) != 0 || (rc = decode_share(v, path, &r->share, d)) ||
        (rc = decode_spec(v, path, r, d)) != 0 || (rc = decode_sandbox(v, path, r, d)) != 0 ||
        (rc = decode_gang(v, path, r, d)) != 0 || (rc = decode_serve(v, path, r, d)) != 0 ||
        (rc = decode_batch(v, path, r, d)) != 0) {
        gp_wire_desired_replica_fini(r);
        return rc;
    }
    return 0;
}

void gp_wire_desired_replica_fini(gp_wire_desired_replica *r)
{
    gp_probe_fini(&r->readiness);
    gp_probe_fini(&r->liveness);
    free(r->gpus);
    json_decref(r->spec);
    free(r->image);
    free(r->auth_registry);
    free(r->auth_username);
    if (r->auth_password) {
        memset(r->auth_password, 0, strlen(r->auth_password));
    }
    free(r->auth_password);
    for (size_t i = 0; i < r->nvolumes; i++) {
        free(r->volumes[i].path);
    }
    free(r->volumes);
    free(r->checkpoint_dir);
    free(r->master_addr);
    free(r->hosts);
    gp_wire_desired_replica_init(r);
}

int gp_wire_desired_decode(json_t *doc, gp_wire_desired *out, gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    json_t *list;
    int rc;
    if ((rc = gp__wire_object(doc, "", d)) != 0 ||
        (rc = gp__wire_str(doc, "", "node", false, out->node, sizeof(out->node), d)) != 0 ||
        (rc = gp__wire_int(doc, "", "version", 0, INT64_MAX, false, &out->version, d)) != 0 ||
        (rc = gp__wire_bool(doc, "", "cordoned", &out->cordoned, d)) != 0 ||
        (rc = gp__wire_int(doc, "", "check_seq", 0, INT64_MAX, false, &out->check_seq, d)) ||
        (rc = gp__wire_list(doc, "", "desired", GP_WIRE_MAX_DESIRED, &list, d)) != 0) {
        return rc;
    }
    size_t n = json_array_size(list);
    if (n && !(out->replicas = calloc(n, sizeof(*out->replicas)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    char path[PATH_LEN];
    for (size_t i = 0; i < n && rc == 0; i++) {
        snprintf(path, sizeof(path), "desired[%zu]", i);
        rc = gp_wire_desired_replica_decode(json_array_get(list, i), path, &out->replicas[i], d);
        out->nreplicas += rc == 0;
    }
    if (rc != 0) {
        gp_wire_desired_fini(out);
    }
    return rc;
}

void gp_wire_desired_fini(gp_wire_desired *dd)
{
    for (size_t i = 0; i < dd->nreplicas; i++) {
        gp_wire_desired_replica_fini(&dd->replicas[i]);
    }
    free(dd->replicas);
    memset(dd, 0, sizeof(*dd));
}

/* ---- encoding ---- */

static void set_int(json_t *o, const char *key, int64_t v)
{
    json_object_set_new(o, key, json_integer((json_int_t)v));
}

static void set_str(json_t *o, const char *key, const char *v)
{
    if (v && v[0]) {
        json_object_set_new(o, key, json_string(v));
    }
}

static json_t *gpu_encode(const gp_wire_desired_gpu *g)
{
    json_t *v = json_object();
    if (g->index >= 0) {
        set_int(v, "index", g->index);
    }
    set_str(v, "uuid", g->uuid);
    if (g->milli >= 0) {
        set_int(v, "milli", g->milli);
    }
    if (g->memory_mib >= 0) {
        set_int(v, "memory_mib", g->memory_mib);
    }
    set_int(v, "mig_start", g->mig_start);
    set_str(v, "mig_uuid", g->mig_uuid);
    return v;
}

static void share_encode(const gp_wire_gpu_share *s, json_t *doc)
{
    if (!s->given) {
        return;
    }
    json_t *v = json_object();
    if (s->memory_mib >= 0) {
        set_int(v, "memory_mib", s->memory_mib);
    }
    if (s->core_percent >= 0) {
        set_int(v, "core_percent", s->core_percent);
    }
    set_str(v, "core_policy", gp_compute_policy_name(s->policy));
    json_object_set_new(doc, "gpu_share", v);
}

json_t *gp_wire_desired_auth_encode(const gp_wire_desired_replica *r)
{
    if (!r->auth_registry || !r->auth_username || !r->auth_password) {
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s}", "registry", r->auth_registry, "username", r->auth_username,
                     "password", r->auth_password);
}

static void sandbox_encode(const gp_wire_desired_replica *r, json_t *doc)
{
    if (r->network >= 0) {
        json_object_set_new(doc, "network", json_string(gp_network_name(r->network)));
    }
    if (r->privileged) {
        json_object_set_new(doc, "privileged", json_true());
    }
    set_str(doc, "image", r->image);
    set_str(doc, "image_pull_policy", gp_pull_policy_name(r->pull_policy));
    json_t *auth = gp_wire_desired_auth_encode(r);
    if (auth) {
        json_object_set_new(doc, "registry_auth", auth);
    }
    if (r->volumes) {
        json_t *list = json_array();
        for (size_t i = 0; i < r->nvolumes; i++) {
            const gp_wire_volume *v = &r->volumes[i];
            json_array_append_new(list, json_pack("{s:s, s:s, s:b}", "name", v->name, "path",
                                                  v->path, "read_only", v->read_only));
        }
        json_object_set_new(doc, "volumes", list);
    }
    set_str(doc, "checkpoint_dir", r->checkpoint_dir);
}

static void serve_encode(const gp_wire_desired_replica *r, json_t *doc)
{
    if (r->kind >= 0) {
        json_object_set_new(doc, "kind", json_string(gp_job_kind_name(r->kind)));
    }
    if (r->port > 0) {
        set_int(doc, "port", r->port);
    }
    json_t *p = gp_probe_to_json(&r->readiness);
    if (p) {
        json_object_set_new(doc, "readiness_probe", p);
    }
    if ((p = gp_probe_to_json(&r->liveness)) != NULL) {
        json_object_set_new(doc, "liveness_probe", p);
    }
}

static void gang_encode(const gp_wire_desired_replica *r, json_t *doc)
{
    if (r->rank >= 0) {
        set_int(doc, "rank", r->rank);
    }
    if (r->nproc_per_node >= 0) {
        set_int(doc, "nproc_per_node", r->nproc_per_node);
    }
    if (r->master_addr) {
        json_object_set_new(doc, "master_addr", json_string(r->master_addr));
    }
    if (r->master_port >= 0) {
        set_int(doc, "master_port", r->master_port);
    }
    if (r->hosts) {
        json_t *lines = json_array();
        for (size_t i = 0; i < r->nhosts; i++) {
            json_array_append_new(lines,
                                  json_sprintf("%s slots=%d", r->hosts[i].name, r->hosts[i].slots));
        }
        json_object_set_new(doc, "hostfile", lines);
    }
}

json_t *gp_wire_desired_replica_encode(const gp_wire_desired_replica *r)
{
    json_t *doc = json_pack("{s:I, s:i, s:I}", "job", (json_int_t)r->job, "replica", r->replica,
                            "epoch", (json_int_t)r->epoch);
    if (!doc) {
        return NULL;
    }
    set_str(doc, "name", r->name);
    if (r->world_size > 0) {
        set_int(doc, "world_size", r->world_size);
    }
    if (r->restart_count >= 0) {
        set_int(doc, "restart_count", r->restart_count);
    }
    if (r->array_index >= 0) {
        set_int(doc, "array_index", r->array_index);
    }
    if (r->array_job >= 0) {
        set_int(doc, "array_job", r->array_job);
    }
    if (r->shm_size_mib >= 0) {
        set_int(doc, "shm_size_mib", r->shm_size_mib);
    }
    if (r->cpu_milli >= 0) {
        set_int(doc, "cpu_milli", r->cpu_milli);
    }
    if (r->memory_mib >= 0) {
        set_int(doc, "memory_mib", r->memory_mib);
    }
    json_t *gpus = json_array();
    for (size_t i = 0; i < r->ngpus; i++) {
        json_array_append_new(gpus, gpu_encode(&r->gpus[i]));
    }
    json_object_set_new(doc, "gpus", gpus);
    if (r->spec) {
        json_object_set(doc, "spec", r->spec);
    }
    set_str(doc, "tenant", r->tenant);
    if (r->tenant_id >= 0) {
        set_int(doc, "tenant_id", r->tenant_id);
    }
    set_str(doc, "queue", r->queue);
    share_encode(&r->share, doc);
    sandbox_encode(r, doc);
    gang_encode(r, doc);
    serve_encode(r, doc);
    return doc;
}

json_t *gp_wire_desired_encode(const gp_wire_desired *dd, json_t *replicas)
{
    if (!replicas) {
        replicas = json_array();
        for (size_t i = 0; replicas && i < dd->nreplicas; i++) {
            json_t *v = gp_wire_desired_replica_encode(&dd->replicas[i]);
            if (!v || json_array_append_new(replicas, v) != 0) {
                json_decref(replicas);
                return NULL;
            }
        }
    }
    return json_pack("{s:s, s:I, s:b, s:I, s:o}", "node", dd->node, "version",
                     (json_int_t)dd->version, "cordoned", dd->cordoned, "check_seq",
                     (json_int_t)dd->check_seq, "desired", replicas);
}
