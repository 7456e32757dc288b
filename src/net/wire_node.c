/*
 * What a node reports of itself in its heartbeat (see wire.h): each GPU's MIG instances, the
 * latest health check and the image cache. Each decoder reads every member once against its
 * table, so a value is judged here and nowhere else; the controller gets typed values and
 * judges only what needs the node (GPU indices, the GPU's model and mode).
 */
#include "net/wire.h"
#include "net/wire_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_LEN 96

/* ---- gpus[].mig_instances ---- */

static int mig_one(json_t *v, const char *path, gp_wire_mig *m, gp_diag *d)
{
    static const char *const names[] = {"profile", "start", "idle", "held", NULL};
    *m = (gp_wire_mig){.start = -1, .idle = true};
    int rc;
    if ((rc = gp__wire_members(v, path, names, d)) != 0 ||
        (rc = gp__wire_str(v, path, "profile", false, m->profile, sizeof(m->profile), d)) != 0 ||
        (rc = gp__wire_i(v, path, "start", 0, GP_MIG_MEMORY_SLICES - 1, false, &m->start, d)) !=
            0 ||
        (rc = gp__wire_bool(v, path, "idle", &m->idle, d)) != 0 ||
        (rc = gp__wire_bool(v, path, "held", &m->held, d)) != 0) {
        return rc;
    }
    if (!m->profile[0] || m->start < 0) {
        return gp_diag_set(d, GP_EINVAL, "%s: profile and start are required", path);
    }
    return 0;
}

int gp_wire_mig_decode(json_t *gpu, const char *path, gp_wire_mig *out, int *n, bool *given,
                       gp_diag *d)
{
    *n = 0;
    *given = false;
    json_t *list = json_object_get(gpu, "mig_instances");
    if (!list || json_is_null(list)) {
        return 0;
    }
    if (!json_is_array(list) || json_array_size(list) > GP_MIG_MEMORY_SLICES) {
        return gp_diag_set(d, GP_EINVAL, "%s.mig_instances: must be a list of at most %d instances",
                           path, GP_MIG_MEMORY_SLICES);
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        char p[PATH_LEN + 32];
        snprintf(p, sizeof(p), "%s.mig_instances[%zu]", path, i);
        int rc = mig_one(json_array_get(list, i), p, &out[i], d);
        if (rc != 0) {
            *n = 0;
            return rc;
        }
    }
    *n = (int)json_array_size(list);
    *given = true;
    return 0;
}

json_t *gp_wire_mig_encode(const gp_wire_mig *list, int n)
{
    json_t *a = json_array();
    for (int k = 0; a && k < n; k++) {
        const gp_wire_mig *m = &list[k];
        json_t *o = json_pack("{s:s, s:i, s:b, s:b}", "profile", m->profile, "start", m->start,
                              "idle", m->idle, "held", m->held);
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* ---- health ---- */

const char *gp_wire_severity_name(gp_wire_severity s)
{
    return s == GP_WIRE_FATAL ? "fatal" : "warning";
}

static int condition_one(json_t *v, const char *path, gp_wire_condition *c, gp_diag *d)
{
    static const char *const names[] = {"check", "gpu", "severity", "message", NULL};
    char severity[16] = "";
    int rc;
    if ((rc = gp__wire_members(v, path, names, d)) != 0 ||
        (rc = gp__wire_str(v, path, "check", true, c->check, sizeof(c->check), d)) != 0 ||
        (rc = gp__wire_i(v, path, "gpu", -1, GP_WIRE_MAX_GPUS - 1, true, &c->gpu, d)) != 0 ||
        (rc = gp__wire_str(v, path, "severity", true, severity, sizeof(severity), d)) != 0 ||
        (rc = gp__wire_str(v, path, "message", false, c->message, sizeof(c->message), d)) != 0) {
        return rc;
    }
    if (!c->check[0]) {
        return gp_diag_set(d, GP_EINVAL, "%s.check: must not be empty", path);
    }
    if (strcmp(severity, "fatal") == 0) {
        c->severity = GP_WIRE_FATAL;
    } else if (strcmp(severity, "warning") == 0) {
        c->severity = GP_WIRE_WARNING;
    } else {
        return gp_diag_set(d, GP_EINVAL, "%s.severity: must be fatal or warning", path);
    }
    return 0;
}

int gp__wire_health_decode(json_t *doc, gp_wire_heartbeat *hb, gp_diag *d)
{
    static const char *const names[] = {"seq", "at_ms", "conditions", NULL};
    json_t *h = json_object_get(doc, "health"), *conds;
    if (!h || json_is_null(h)) {
        return 0;
    }
    gp_wire_health *out = &hb->health;
    out->at_ms = -1;
    int rc;
    if ((rc = gp__wire_members(h, "health", names, d)) != 0 ||
        (rc = gp__wire_int(h, "health", "seq", 0, INT64_MAX, true, &out->seq, d)) != 0 ||
        (rc = gp__wire_int(h, "health", "at_ms", 0, INT64_MAX, false, &out->at_ms, d)) != 0 ||
        (rc = gp__wire_list(h, "health", "conditions", GP_WIRE_MAX_CONDITIONS, &conds, d)) != 0) {
        return rc;
    }
    size_t n = json_array_size(conds);
    out->conditions = n ? calloc(n, sizeof(*out->conditions)) : NULL;
    if (n && !out->conditions) {
        return gp_diag_set(d, GP_ENOMEM, "heartbeat: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        char path[PATH_LEN];
        snprintf(path, sizeof(path), "health.conditions[%zu]", i);
        if ((rc = condition_one(json_array_get(conds, i), path, &out->conditions[i], d)) != 0) {
            return rc;
        }
    }
    out->nconditions = n;
    hb->has_health = true;
    return 0;
}

json_t *gp_wire_health_encode(const gp_wire_health *h)
{
    json_t *conds = json_array();
    for (size_t i = 0; conds && i < h->nconditions; i++) {
        const gp_wire_condition *c = &h->conditions[i];
        json_t *o = json_pack("{s:s, s:i, s:s, s:s}", "check", c->check, "gpu", c->gpu, "severity",
                              gp_wire_severity_name(c->severity), "message", c->message);
        if (!o || json_array_append_new(conds, o) != 0) {
            json_decref(conds);
            conds = NULL;
        }
    }
    json_t *v =
        conds ? json_pack("{s:I, s:o}", "seq", (json_int_t)h->seq, "conditions", conds) : NULL;
    if (v && h->at_ms >= 0) {
        json_object_set_new(v, "at_ms", json_integer((json_int_t)h->at_ms));
    }
    return v;
}

/* ---- images ---- */

static int image_one(json_t *v, const char *path, gp_wire_image *im, gp_diag *d)
{
    static const char *const names[] = {"ref", "id", "size_bytes", "last_used_ms", NULL};
    int rc;
    if ((rc = gp__wire_members(v, path, names, d)) != 0 ||
        (rc = gp__wire_str(v, path, "ref", false, im->ref, sizeof(im->ref), d)) != 0 ||
        (rc = gp__wire_str(v, path, "id", false, im->id, sizeof(im->id), d)) != 0 ||
        (rc = gp__wire_int(v, path, "size_bytes", 0, GP_WIRE_IMAGE_SIZE_MAX, false, &im->size_bytes,
                           d)) != 0 ||
        (rc = gp__wire_int(v, path, "last_used_ms", 0, INT64_MAX / 2, false, &im->last_used_ms,
                           d)) != 0) {
        return rc;
    }
    if (!im->ref[0] && !im->id[0]) {
        return gp_diag_set(d, GP_EINVAL, "%s: needs ref or id", path);
    }
    return 0;
}

int gp__wire_images_decode(json_t *doc, gp_wire_heartbeat *hb, gp_diag *d)
{
    json_t *list;
    int rc = gp__wire_list(doc, "", "images", GP_WIRE_MAX_IMAGES, &list, d);
    if (rc != 0 || !list) {
        return rc;
    }
    size_t n = json_array_size(list);
    hb->images = n ? calloc(n, sizeof(*hb->images)) : NULL;
    if (n && !hb->images) {
        return gp_diag_set(d, GP_ENOMEM, "heartbeat: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        char path[PATH_LEN];
        snprintf(path, sizeof(path), "images[%zu]", i);
        if ((rc = image_one(json_array_get(list, i), path, &hb->images[i], d)) != 0) {
            return rc;
        }
    }
    hb->nimages = n;
    hb->has_images = true;
    return 0;
}

json_t *gp_wire_image_encode(const gp_wire_image *im)
{
    return json_pack("{s:s, s:s, s:I, s:I}", "ref", im->ref, "id", im->id, "size_bytes",
                     (json_int_t)im->size_bytes, "last_used_ms", (json_int_t)im->last_used_ms);
}
