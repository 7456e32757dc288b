/*
 * Volumes: named host directories that jobs mount. The document:
 *
 *   volume: {"path": "/srv/datasets/imagenet", "read_only": true, "description": ".."}
 *
 * The path must be absolute; it is normalised (repeated and trailing '/' dropped) and may not
 * hold "." or ".." components or be "/" itself. Whether it exists is the agent's business (the
 * controller may not see the nodes' storage): a replica whose volume is missing fails to start,
 * with the path in its reason.
 */
#include "ctl/ctl.h"
#include "ctl/doc.h"

#include <string.h>

/* Normalises path into out (cap bytes); GP_EINVAL naming the field when it is not acceptable. */
static int norm_path(const char *path, char *out, size_t cap, gp_diag *d)
{
    if (path[0] != '/') {
        return gp_diag_set(d, GP_EINVAL, "path: must be an absolute path");
    }
    size_t n = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/') {
            p++;
        }
        size_t len = strcspn(p, "/");
        if (len == 0) {
            break;
        }
        if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
            return gp_diag_set(d, GP_EINVAL, "path: must not contain . or .. components");
        }
        for (size_t i = 0; i < len; i++) {
            if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
                return gp_diag_set(d, GP_EINVAL, "path: must not contain control characters");
            }
        }
        if (n + 1 + len >= cap) {
            return gp_diag_set(d, GP_EINVAL, "path: longer than %zu characters", cap - 1);
        }
        out[n++] = '/';
        memcpy(out + n, p, len);
        n += len;
        p += len;
    }
    if (n == 0) {
        return gp_diag_set(d, GP_EINVAL, "path: must not be / itself");
    }
    out[n] = '\0';
    return 0;
}

int ctl_volume_from_doc(const char *name, json_t *doc, ctl_volume *out, gp_diag *d)
{
    static const char *const top[] = {"name", "path", "read_only", "description", NULL};
    ctl_volume v;
    memset(&v, 0, sizeof(v));
    snprintf(v.name, sizeof(v.name), "%s", name);
    char path[4096] = "";
    int rc = doc_check_fields(doc, "", top, d);
    if (rc == 0) {
        rc = doc_str(doc, "", "path", path, sizeof(path), d);
    }
    if (rc == 0 && !path[0]) {
        rc = gp_diag_set(d, GP_EINVAL, "path: required");
    }
    if (rc == 0) {
        rc = norm_path(path, v.path, sizeof(v.path), d);
    }
    if (rc == 0) {
        rc = doc_bool(doc, "", "read_only", &v.read_only, d);
    }
    if (rc == 0) {
        rc = doc_str(doc, "", "description", v.description, sizeof(v.description), d);
    }
    if (rc < 0) {
        return rc;
    }
    *out = v;
    return 0;
}

json_t *ctl_volume_doc(const ctl_volume *v)
{
    return json_pack("{s:s, s:s, s:b, s:s}", "name", v->name, "path", v->path, "read_only",
                     v->read_only, "description", v->description);
}

int ctl_volumes_check(ctl_state *st, const gp_jobspec *spec, gp_diag *d)
{
    for (int i = 0; i < spec->nvolumes; i++) {
        const gp_volume_ref *r = &spec->volumes[i];
        const ctl_volume *v = ctl_volume_by_name(st, r->name);
        if (!v) {
            return gp_diag_set(d, GP_EINVAL, "volumes[%d]: no volume named %s", i, r->name);
        }
        if (v->read_only && r->mode == GP_VOLUME_RW) {
            return gp_diag_set(d, GP_EINVAL,
                               "volumes[%d]: volume %s is read-only; mount it as %s:ro", i, r->name,
                               r->name);
        }
    }
    return 0;
}

json_t *ctl_volumes_doc(ctl_state *st, const gp_jobspec *spec)
{
    json_t *list = json_array();
    for (int i = 0; i < spec->nvolumes; i++) {
        const gp_volume_ref *r = &spec->volumes[i];
        const ctl_volume *v = ctl_volume_by_name(st, r->name);
        if (v) { /* deleting a volume that active jobs use is refused */
            bool ro = r->mode == GP_VOLUME_RO || (r->mode == GP_VOLUME_DEFAULT && v->read_only);
            json_array_append_new(list, json_pack("{s:s, s:s, s:b}", "name", v->name, "path",
                                                  v->path, "read_only", ro));
        }
    }
    return list;
}
