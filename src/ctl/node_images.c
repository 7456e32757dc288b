/*
 * What a node can do with images: the container runtime its agent registered (stored with the
 * node; it gives the node GP_CAP_IMAGES on the cluster model, so jobs from images go only
 * there) and the image cache its heartbeats report (memory only: the next heartbeat after a
 * restart brings it back).
 *
 * Who sees what: the runtime is shown to everyone who may read the node; of the cache, users
 * see only how many images it holds and their total size (the references would name other
 * tenants' images), admins and operators the list too.
 */
#include "ctl/ctl.h"
#include "ctl/doc.h"

#include <string.h>

/* One string member of runtime: 1..63 bytes; one of choices when given. */
static int runtime_str(json_t *rt, const char *key, const char *const *choices, json_t *out,
                       gp_diag *d)
{
    char buf[64] = "";
    int rc = doc_str(rt, "runtime", key, buf, sizeof(buf), d);
    if (rc < 0) {
        return rc;
    }
    if (!buf[0]) {
        return gp_diag_set(d, GP_EINVAL, "runtime.%s: required", key);
    }
    for (int i = 0; choices && choices[i]; i++) {
        if (strcmp(buf, choices[i]) == 0) {
            break;
        }
        if (!choices[i + 1]) {
            return gp_diag_set(d, GP_EINVAL, "runtime.%s: must be one of %s, %s%s%s", key,
                               choices[0], choices[1], choices[2] ? ", " : "",
                               choices[2] ? choices[2] : "");
        }
    }
    json_object_set_new(out, key, json_string(buf));
    return 0;
}

int ctl_runtime_read(json_t *doc, json_t **out, gp_diag *d)
{
    static const char *const fields[] = {"engine", "version", "oci_runtime", "cgroups", NULL};
    static const char *const oci[] = {"runc", "crun", NULL};
    static const char *const cgroups[] = {"v1", "hybrid", "v2", NULL};
    *out = NULL;
    json_t *rt = json_object_get(doc, "runtime");
    if (!rt || json_is_null(rt)) {
        return 0;
    }
    int rc = doc_check_fields(rt, "runtime", fields, d);
    json_t *normal = json_object();
    if (!normal) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    rc = rc < 0 ? rc : runtime_str(rt, "engine", NULL, normal, d);
    rc = rc < 0 ? rc : runtime_str(rt, "version", NULL, normal, d);
    rc = rc < 0 ? rc : runtime_str(rt, "oci_runtime", oci, normal, d);
    rc = rc < 0 ? rc : runtime_str(rt, "cgroups", cgroups, normal, d);
    if (rc < 0) {
        json_decref(normal);
        return rc;
    }
    *out = normal;
    return 0;
}

void ctl_node_set_runtime(ctl_state *st, ctl_node *n, json_t *runtime)
{
    json_t *old = n->runtime;
    n->runtime = runtime ? json_incref(runtime) : NULL;
    json_decref(old);
    gp_cluster_set_caps(st->cluster, n->cl, n->runtime ? GP_CAP_IMAGES : 0);
}

int ctl_images_read(const gp_wire_image *images, size_t n, json_t **out, int64_t *bytes, gp_diag *d)
{
    *out = NULL;
    *bytes = 0;
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        json_t *e = gp_wire_image_encode(&images[i]);
        if (!e || json_array_append_new(list, e) != 0) {
            json_decref(list);
            list = NULL;
        }
        *bytes += images[i].size_bytes; /* each at most 2^50, at most 4096 of them */
    }
    if (!list) {
        *bytes = 0;
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    *out = list;
    return 0;
}

void ctl_images_show(const ctl_node *n, bool staff, json_t *doc)
{
    json_object_set_new(doc, "runtime", n->runtime ? json_deep_copy(n->runtime) : json_null());
    json_t *cache =
        json_pack("{s:i, s:I}", "count", n->images ? (int)json_array_size(n->images) : 0,
                  "size_bytes", (json_int_t)n->images_bytes);
    if (cache && staff) {
        json_object_set_new(cache, "items", n->images ? json_deep_copy(n->images) : json_array());
    }
    json_object_set_new(doc, "images", cache ? cache : json_null());
}
