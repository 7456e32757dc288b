/*
 * The heartbeat codec (see wire.h). Each decoder walks one object against its member table and
 * reads each member once, so a value is judged in one place; paths are built as the walk goes
 * down ("replicas[2].pull.done_bytes").
 */
#include "net/wire.h"
#include "net/wire_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_LEN 96

/* ---- replicas[] ---- */

static int decode_pull(json_t *rep, const char *path, gp_wire_replica *r, gp_diag *d)
{
    char phase[16] = "";
    int rc = gp__wire_str(rep, path, "phase", false, phase, sizeof(phase), d);
    if (rc != 0 || !phase[0]) {
        return rc != 0 ? rc
               : json_object_get(rep, "pull")
                   ? gp_diag_set(d, GP_EINVAL, "%s.pull: only with phase", path)
                   : 0;
    }
    if (strcmp(phase, "Pulling") != 0 || r->state != GP_WIRE_RUNNING) {
        return gp_diag_set(d, GP_EINVAL, "%s.phase: must be Pulling, on a Running replica", path);
    }
    static const char *const names[] = {"image", "done_bytes", "total_bytes", NULL};
    char sub[PATH_MAX_LEN + 8];
    snprintf(sub, sizeof(sub), "%s.pull", path);
    json_t *pull = json_object_get(rep, "pull");
    r->pulling = true;
    r->pull_done_bytes = r->pull_total_bytes = 0;
    if ((rc = gp__wire_members(pull, sub, names, d)) != 0 ||
        (rc = gp__wire_str(pull, sub, "image", true, r->pull_image, sizeof(r->pull_image), d)) !=
            0 ||
        (rc = gp__wire_int(pull, sub, "done_bytes", 0, INT64_MAX, true, &r->pull_done_bytes, d)) ||
        (rc =
             gp__wire_int(pull, sub, "total_bytes", 0, INT64_MAX, true, &r->pull_total_bytes, d))) {
        return rc;
    }
    return 0;
}

/* A service replica's "ready" and "metric". */
static int decode_service(json_t *rep, const char *path, gp_wire_replica *r, gp_diag *d)
{
    bool ready = false;
    int rc;
    if ((rc = gp__wire_bool(rep, path, "ready", &ready, d)) != 0 ||
        (rc = gp__wire_num(rep, path, "metric", -GP_WIRE_METRIC_MAX, GP_WIRE_METRIC_MAX, &r->metric,
                           d)) != 0) {
        return rc;
    }
    json_t *v = json_object_get(rep, "ready");
    r->ready = v && !json_is_null(v) ? ready : -1;
    v = json_object_get(rep, "metric");
    r->has_metric = v && !json_is_null(v);
    return 0;
}

static int decode_replica(json_t *rep, const char *path, gp_wire_replica *r, gp_diag *d)
{
    static const char *const names[] = {"job",    "replica", "epoch",  "state",       "exit_code",
                                        "reason", "idle_ms", "util",   "gpu_mem_mib", "phase",
                                        "pull",   "ready",   "metric", NULL};
    *r = (gp_wire_replica){.idle_ms = -1, .util = -1, .mem_mib = -1, .ready = -1};
    char state[16] = "";
    int rc;
    if ((rc = gp__wire_members(rep, path, names, d)) != 0 ||
        (rc = gp__wire_int(rep, path, "job", 1, INT64_MAX, true, &r->job, d)) != 0 ||
        (rc = gp__wire_i(rep, path, "replica", 0, 65535, true, &r->replica, d)) != 0 ||
        (rc = gp__wire_int(rep, path, "epoch", 0, INT64_MAX, true, &r->epoch, d)) != 0 ||
        (rc = gp__wire_str(rep, path, "state", true, state, sizeof(state), d)) != 0 ||
        (rc = gp__wire_i(rep, path, "exit_code", -255, 255, false, &r->exit_code, d)) != 0 ||
        (rc = gp__wire_str(rep, path, "reason", false, r->reason, sizeof(r->reason), d)) != 0 ||
        (rc = gp__wire_int(rep, path, "idle_ms", 0, INT64_MAX, false, &r->idle_ms, d)) != 0 ||
        (rc = gp__wire_i(rep, path, "util", 0, 100, false, &r->util, d)) != 0 ||
        (rc = gp__wire_int(rep, path, "gpu_mem_mib", 0, GP_WIRE_MAX_MEMORY_MIB, false, &r->mem_mib,
                           d)) != 0 ||
        (rc = decode_service(rep, path, r, d)) != 0) {
        return rc;
    }
    if (strcmp(state, "Running") == 0) {
        r->state = GP_WIRE_RUNNING;
    } else if (strcmp(state, "Succeeded") == 0) {
        r->state = GP_WIRE_SUCCEEDED;
    } else if (strcmp(state, "Failed") == 0) {
        r->state = GP_WIRE_FAILED;
    } else {
        return gp_diag_set(d, GP_EINVAL, "%s.state: must be Running, Succeeded or Failed", path);
    }
    return decode_pull(rep, path, r, d);
}

/* ---- gpus[] and events[] ---- */

static int decode_gpu(json_t *v, const char *path, gp_wire_gpu *g, gp_diag *d)
{
    static const char *const names[] = {
        "index",        "utilization",      "memory_used_mib", "temperature_c", "power_w",
        "sm_clock_mhz", "memory_clock_mhz", "ecc_uncorrected", "mig_instances", NULL};
    *g = (gp_wire_gpu){.utilization = -1,
                       .memory_used_mib = -1,
                       .temperature_c = GP_WIRE_NO_TEMP,
                       .power_w = -1,
                       .sm_clock_mhz = -1,
                       .memory_clock_mhz = -1,
                       .ecc_uncorrected = -1};
    int rc;
    if ((rc = gp__wire_members(v, path, names, d)) != 0 ||
        (rc = gp__wire_i(v, path, "index", 0, GP_WIRE_MAX_GPUS - 1, true, &g->index, d)) != 0 ||
        (rc = gp__wire_num(v, path, "utilization", 0, 100, &g->utilization, d)) != 0 ||
        (rc = gp__wire_int(v, path, "memory_used_mib", 0, GP_WIRE_MAX_MEMORY_MIB, false,
                           &g->memory_used_mib, d)) != 0 ||
        (rc = gp__wire_i(v, path, "temperature_c", -40, 150, false, &g->temperature_c, d)) != 0 ||
        (rc = gp__wire_num(v, path, "power_w", 0, 5000, &g->power_w, d)) != 0 ||
        (rc = gp__wire_i(v, path, "sm_clock_mhz", 0, 100000, false, &g->sm_clock_mhz, d)) != 0 ||
        (rc = gp__wire_i(v, path, "memory_clock_mhz", 0, 100000, false, &g->memory_clock_mhz, d)) ||
        (rc = gp__wire_int(v, path, "ecc_uncorrected", 0, INT64_MAX, false, &g->ecc_uncorrected,
                           d))) {
        return rc;
    }
    return gp_wire_mig_decode(v, path, g->mig, &g->nmig, &g->has_mig, d);
}

static int decode_xid(json_t *v, const char *path, gp_wire_xid *x, gp_diag *d)
{
    static const char *const names[] = {"gpu", "xid", NULL};
    int rc;
    if ((rc = gp__wire_members(v, path, names, d)) != 0 ||
        (rc = gp__wire_i(v, path, "gpu", 0, GP_WIRE_MAX_GPUS - 1, true, &x->gpu, d)) != 0 ||
        (rc = gp__wire_i(v, path, "xid", 1, GP_WIRE_XID_MAX, true, &x->xid, d)) != 0) {
        return rc;
    }
    return 0;
}

static int decode_lists(json_t *doc, gp_wire_heartbeat *hb, gp_diag *d)
{
    json_t *reps, *gpus, *events;
    int rc;
    if ((rc = gp__wire_list(doc, "", "replicas", GP_WIRE_MAX_REPORTS, &reps, d)) != 0 ||
        (rc = gp__wire_list(doc, "", "gpus", GP_WIRE_MAX_GPUS, &gpus, d)) != 0 ||
        (rc = gp__wire_list(doc, "", "events", GP_WIRE_MAX_EVENTS, &events, d)) != 0) {
        return rc;
    }
    size_t nr = json_array_size(reps), ng = json_array_size(gpus), ne = json_array_size(events);
    hb->replicas = nr ? calloc(nr, sizeof(*hb->replicas)) : NULL;
    hb->gpus = ng ? calloc(ng, sizeof(*hb->gpus)) : NULL;
    hb->events = ne ? calloc(ne, sizeof(*hb->events)) : NULL;
    if ((nr && !hb->replicas) || (ng && !hb->gpus) || (ne && !hb->events)) {
        return gp_diag_set(d, GP_ENOMEM, "heartbeat: out of memory");
    }
    char path[PATH_MAX_LEN];
    for (size_t i = 0; i < nr; i++, hb->nreplicas++) {
        snprintf(path, sizeof(path), "replicas[%zu]", i);
        if ((rc = decode_replica(json_array_get(reps, i), path, &hb->replicas[i], d)) != 0) {
            return rc;
        }
    }
    for (size_t i = 0; i < ng; i++, hb->ngpus++) {
        snprintf(path, sizeof(path), "gpus[%zu]", i);
        if ((rc = decode_gpu(json_array_get(gpus, i), path, &hb->gpus[i], d)) != 0) {
            return rc;
        }
    }
    for (size_t i = 0; i < ne; i++, hb->nevents++) {
        snprintf(path, sizeof(path), "events[%zu]", i);
        if ((rc = decode_xid(json_array_get(events, i), path, &hb->events[i], d)) != 0) {
            return rc;
        }
    }
    return 0;
}

int gp_wire_heartbeat_decode(json_t *doc, gp_wire_heartbeat *out, gp_diag *d)
{
    static const char *const names[] = {"replicas", "gpus", "events", "health", "images", NULL};
    memset(out, 0, sizeof(*out));
    int rc = gp__wire_members(doc, "", names, d);
    if (rc == 0) {
        rc = decode_lists(doc, out, d);
    }
    if (rc == 0) {
        rc = gp__wire_health_decode(doc, out, d);
    }
    if (rc == 0) {
        rc = gp__wire_images_decode(doc, out, d);
    }
    if (rc != 0) {
        gp_wire_heartbeat_fini(out);
    }
    return rc;
}

void gp_wire_heartbeat_fini(gp_wire_heartbeat *hb)
{
    free(hb->replicas);
    free(hb->gpus);
    free(hb->events);
    free(hb->health.conditions);
    free(hb->images);
    memset(hb, 0, sizeof(*hb));
}

int gp_wire_heartbeat_check_node(const gp_wire_heartbeat *hb, const gp_wire_node_gpus *node,
                                 gp_diag *d)
{
    for (size_t i = 0; i < hb->ngpus; i++) {
        const gp_wire_gpu *g = &hb->gpus[i];
        if (g->index >= node->ngpus) {
            return gp_diag_set(d, GP_EINVAL, "gpus[%zu].index: %d, the node has %d GPUs", i,
                               g->index, node->ngpus);
        }
        int64_t total = node->memory_mib[g->index];
        if (g->memory_used_mib > total + 1) {
            return gp_diag_set(d, GP_EINVAL,
                               "gpus[%zu].memory_used_mib: %lld, more than the GPU's %lld MiB", i,
                               (long long)g->memory_used_mib, (long long)total);
        }
    }
    for (size_t i = 0; i < hb->nevents; i++) {
        if (hb->events[i].gpu >= node->ngpus) {
            return gp_diag_set(d, GP_EINVAL, "events[%zu].gpu: %d, the node has %d GPUs", i,
                               hb->events[i].gpu, node->ngpus);
        }
    }
    for (size_t i = 0; i < hb->health.nconditions; i++) {
        if (hb->health.conditions[i].gpu >= node->ngpus) {
            return gp_diag_set(d, GP_EINVAL, "health.conditions[%zu].gpu: %d, the node has %d GPUs",
                               i, hb->health.conditions[i].gpu, node->ngpus);
        }
    }
    return 0;
}

/* ---- encoders ---- */

const char *gp_wire_state_name(gp_wire_replica_state s)
{
    return s == GP_WIRE_RUNNING ? "Running" : s == GP_WIRE_SUCCEEDED ? "Succeeded" : "Failed";
}

static void set_int(json_t *o, const char *key, int64_t v)
{
    json_object_set_new(o, key, json_integer((json_int_t)v));
}

json_t *gp_wire_gpu_encode(const gp_wire_gpu *g)
{
    json_t *v = json_object();
    if (!v) {
        return NULL;
    }
    set_int(v, "index", g->index);
    if (g->utilization >= 0) {
        double u = g->utilization;
        json_object_set_new(v, "utilization",
                            u == floor(u) ? json_integer((json_int_t)u) : json_real(u));
    }
    if (g->memory_used_mib >= 0) {
        set_int(v, "memory_used_mib", g->memory_used_mib);
    }
    if (g->temperature_c != GP_WIRE_NO_TEMP) {
        set_int(v, "temperature_c", g->temperature_c);
    }
    if (g->power_w >= 0) {
        json_object_set_new(v, "power_w", json_real(g->power_w));
    }
    if (g->sm_clock_mhz >= 0) {
        set_int(v, "sm_clock_mhz", g->sm_clock_mhz);
    }
    if (g->memory_clock_mhz >= 0) {
        set_int(v, "memory_clock_mhz", g->memory_clock_mhz);
    }
    if (g->ecc_uncorrected >= 0) {
        set_int(v, "ecc_uncorrected", g->ecc_uncorrected);
    }
    if (g->has_mig) {
        json_object_set_new(v, "mig_instances", gp_wire_mig_encode(g->mig, g->nmig));
    }
    return v;
}

json_t *gp_wire_xid_encode(const gp_wire_xid *x)
{
    return json_pack("{s:i, s:i}", "gpu", x->gpu, "xid", x->xid);
}

json_t *gp_wire_replica_encode(const gp_wire_replica *r)
{
    json_t *v = json_pack("{s:I, s:i, s:I, s:s}", "job", (json_int_t)r->job, "replica", r->replica,
                          "epoch", (json_int_t)r->epoch, "state", gp_wire_state_name(r->state));
    if (!v) {
        return NULL;
    }
    if (r->pulling) {
        json_object_set_new(v, "phase", json_string("Pulling"));
        json_object_set_new(v, "pull",
                            json_pack("{s:s, s:I, s:I}", "image", r->pull_image, "done_bytes",
                                      (json_int_t)r->pull_done_bytes, "total_bytes",
                                      (json_int_t)r->pull_total_bytes));
    }
    if (!r->pulling || r->exit_code != 0) { /* a pulling report carries none */
        set_int(v, "exit_code", r->exit_code);
    }
    if (r->reason[0]) {
        json_object_set_new(v, "reason", json_string(r->reason));
    }
    if (r->idle_ms >= 0) {
        set_int(v, "idle_ms", r->idle_ms);
    }
    if (r->util >= 0) {
        set_int(v, "util", r->util);
    }
    if (r->mem_mib >= 0) {
        set_int(v, "gpu_mem_mib", r->mem_mib);
    }
    if (r->ready >= 0) {
        json_object_set_new(v, "ready", json_boolean(r->ready));
    }
    if (r->has_metric) {
        json_object_set_new(v, "metric", json_real(r->metric));
    }
    return v;
}

json_t *gp_wire_heartbeat_encode(const gp_wire_heartbeat *hb)
{
    json_t *doc = json_object(), *reps = json_array(), *gpus = json_array(), *events = json_array();
    if (!doc || !reps || !gpus || !events) {
        json_decref(doc);
        json_decref(reps);
        json_decref(gpus);
        json_decref(events);
        return NULL;
    }
    for (size_t i = 0; i < hb->nreplicas; i++) {
        json_array_append_new(reps, gp_wire_replica_encode(&hb->replicas[i]));
    }
    for (size_t i = 0; i < hb->ngpus; i++) {
        json_array_append_new(gpus, gp_wire_gpu_encode(&hb->gpus[i]));
    }
    for (size_t i = 0; i < hb->nevents; i++) {
        json_array_append_new(events, gp_wire_xid_encode(&hb->events[i]));
    }
    json_object_set_new(doc, "replicas", reps);
    json_object_set_new(doc, "gpus", gpus);
    json_object_set_new(doc, "events", events);
    if (hb->has_images) {
        json_t *images = json_array();
        for (size_t i = 0; images && i < hb->nimages; i++) {
            json_array_append_new(images, gp_wire_image_encode(&hb->images[i]));
        }
        json_object_set_new(doc, "images", images);
    }
    if (hb->has_health) {
        json_object_set_new(doc, "health", gp_wire_health_encode(&hb->health));
    }
    return doc;
}
