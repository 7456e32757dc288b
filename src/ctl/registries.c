/*
 * Tenants' credentials for image registries: /v1/tenants/{tenant}/registries[/{registry}].
 *
 * Admins and operators set (PUT {"username", "password"}) and delete a tenant's credentials for
 * one registry (HOST[:PORT], in the normal form of gpupool/imageref.h, so "Index.Docker.io" and
 * "docker.io" are one registry); people may list them, users their own tenant's only (another
 * tenant's are not found). No answer ever carries a password: the list shows the registry, the
 * user name and when it was set. The password leaves the controller only in the desired
 * document of the node that runs a replica of the tenant's image from that registry, answered to
 * that node's own agent (desired.c), and the audit record of a change shows the request with the
 * password redacted (audit.c).
 *
 * In memory the credentials are one array (st->creds) ordered by tenant and registry; the store
 * is written first, memory changed after (the committer's rule).
 */
#include "ctl/api.h"
#include "ctl/doc.h"

#include <stdlib.h>
#include <string.h>

#define PASSWORD_MAX 8192 /* bytes of a password (registry tokens can be long) */

/* ---- state ---- */

static int cred_cmp(int64_t tenant_id, const char *registry, const ctl_registry_cred *c)
{
    if (tenant_id != c->tenant_id) {
        return tenant_id < c->tenant_id ? -1 : 1;
    }
    return strcmp(registry, c->registry);
}

/* The index of (tenant, registry), or where it would go (*found false). */
static int cred_find(const ctl_state *st, int64_t tenant_id, const char *registry, bool *found)
{
    int lo = 0, hi = st->ncreds;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = cred_cmp(tenant_id, registry, &st->creds[mid]);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    *found = false;
    return lo;
}

int ctl_registry_add(ctl_state *st, const gp_registry_cred_rec *r)
{
    bool found;
    int i = cred_find(st, r->tenant_id, r->registry, &found);
    char *password = strdup(r->password);
    if (!password) {
        return GP_ENOMEM;
    }
    if (!found) {
        if (st->ncreds == st->capcreds) {
            int ncap = st->capcreds ? st->capcreds * 2 : 16;
            ctl_registry_cred *p = realloc(st->creds, sizeof(*p) * (size_t)ncap);
            if (!p) {
                free(password);
                return GP_ENOMEM;
            }
            st->creds = p;
            st->capcreds = ncap;
        }
        memmove(&st->creds[i + 1], &st->creds[i], sizeof(st->creds[0]) * (size_t)(st->ncreds - i));
        st->ncreds++;
    } else {
        free(st->creds[i].password);
    }
    ctl_registry_cred *c = &st->creds[i];
    memset(c, 0, sizeof(*c));
    c->tenant_id = r->tenant_id;
    snprintf(c->registry, sizeof(c->registry), "%s", r->registry);
    snprintf(c->username, sizeof(c->username), "%s", r->username);
    c->password = password;
    c->updated_ms = r->updated_ms;
    return 0;
}

static void cred_remove(ctl_state *st, int i)
{
    free(st->creds[i].password);
    memmove(&st->creds[i], &st->creds[i + 1], sizeof(st->creds[0]) * (size_t)(st->ncreds - i - 1));
    st->ncreds--;
}

const ctl_registry_cred *ctl_registry_for_image(const ctl_state *st, int64_t tenant_id,
                                                const char *image)
{
    gp_image_ref ref;
    if (!image || gp_image_ref_parse(image, "image", &ref, NULL) < 0) {
        return NULL;
    }
    bool found;
    int i = cred_find(st, tenant_id, ref.registry, &found);
    return found ? &st->creds[i] : NULL;
}

void ctl_registry_drop_tenant(ctl_state *st, int64_t tenant_id)
{
    for (int i = st->ncreds - 1; i >= 0; i--) {
        if (st->creds[i].tenant_id == tenant_id) {
            cred_remove(st, i);
        }
    }
}

void ctl_registry_clear(ctl_state *st)
{
    for (int i = 0; i < st->ncreds; i++) {
        free(st->creds[i].password);
    }
    free(st->creds);
    st->creds = NULL;
    st->ncreds = st->capcreds = 0;
}

/* ---- documents ---- */

static json_t *cred_doc(const ctl_state *st, const ctl_registry_cred *c)
{
    const ctl_tenant *t = ctl_tenant_by_id((ctl_state *)st, c->tenant_id);
    return json_pack("{s:s, s:s, s:s, s:I}", "tenant", t ? t->lim.name : "?", "registry",
                     c->registry, "username", c->username, "updated_ms", (json_int_t)c->updated_ms);
}

/* The nodes running the tenant's replicas from images on registry must ask again: their
 * documents carry the credentials. */
static void registry_moved(ctl_state *st, int64_t tenant_id, const char *registry)
{
    for (int k = 0; k < st->njobs; k++) {
        const ctl_job *j = st->jobs[k];
        gp_image_ref ref;
        if (j->replicas && j->tenant_id == tenant_id && j->spec.image &&
            gp_image_ref_parse(j->spec.image, "image", &ref, NULL) == 0 &&
            strcmp(ref.registry, registry) == 0) {
            ctl_job_desired_changed(st, j);
        }
    }
}

/* ---- the API ---- */

void api_registries_list(api_req *rq)
{
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    ctl_tenant *t = ctl_tenant_by_name(st, rq->params[0]);
    if (!t || (api_scope(rq) && t->id != api_scope(rq))) {
        ctl_read_unlock(rq->g);
        api_error(rq, GP_ENOENT, "tenant %s: not found", rq->params[0]);
        return;
    }
    json_t *items = json_array();
    for (int i = 0; i < st->ncreds; i++) {
        if (st->creds[i].tenant_id == t->id) {
            json_t *doc = cred_doc(st, &st->creds[i]);
            json_object_del(doc, "tenant");
            json_array_append_new(items, doc);
        }
    }
    json_t *doc = json_pack("{s:s, s:o}", "tenant", t->lim.name, "items", items);
    ctl_read_unlock(rq->g);
    api_reply(rq, 200, doc);
}

typedef struct cred_arg {
    const char *tenant;
    char registry[GP_IMAGE_REGISTRY_MAX];
    char username[256];
    char *password; /* owned by the handler */
    bool remove;
} cred_arg;

static int cred_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    cred_arg *a = op->arg;
    ctl_state *st = &g->st;
    ctl_tenant *t = ctl_tenant_by_name(st, a->tenant);
    if (!t) {
        return gp_diag_set(d, GP_ENOENT, "tenant %s: not found", a->tenant);
    }
    bool found;
    int i = cred_find(st, t->id, a->registry, &found);
    if (a->remove) {
        if (!found) {
            return gp_diag_set(d, GP_ENOENT, "tenant %s: no credentials for registry %s", a->tenant,
                               a->registry);
        }
        int rc = gp_store_registry_cred_delete(g->store, t->id, a->registry, d);
        if (rc < 0) {
            return rc;
        }
        cred_remove(st, i);
        op->result = json_pack("{s:s, s:s, s:b}", "tenant", t->lim.name, "registry", a->registry,
                               "deleted", 1);
    } else {
        gp_registry_cred_rec r = {t->id, a->registry, a->username, a->password, ctl_now_ms()};
        int rc = gp_store_registry_cred_put(g->store, &r, d);
        if (rc == 0 && ctl_registry_add(st, &r) < 0) {
            rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
        if (rc < 0) {
            return rc;
        }
        op->status = found ? 200 : 201;
        op->result = cred_doc(st, &st->creds[cred_find(st, t->id, a->registry, &found)]);
    }
    registry_moved(st, t->id, a->registry);
    return 0;
}

/* The registry of the path, normalised; GP_EINVAL after answering 400. */
static int path_registry(api_req *rq, cred_arg *a)
{
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_image_registry_normalize(rq->params[1], "registry", a->registry, sizeof(a->registry),
                                    &d) < 0) {
        api_diag(rq, &d);
        return GP_EINVAL;
    }
    return 0;
}

/* {"username", "password"}: both required; the password is a copy the caller frees. */
static int read_body(json_t *doc, void *arg, gp_diag *d)
{
    cred_arg *a = arg;
    static const char *const fields[] = {"username", "password", NULL};
    int rc = doc_check_fields(doc, "", fields, d);
    rc = rc < 0 ? rc : doc_str(doc, "", "username", a->username, sizeof(a->username), d);
    if (rc == 0 && !a->username[0]) {
        rc = gp_diag_set(d, GP_EINVAL, "username: required");
    }
    json_t *pw = json_object_get(doc, "password");
    if (rc == 0 && (!json_is_string(pw) || json_string_length(pw) == 0 ||
                    json_string_length(pw) >= PASSWORD_MAX ||
                    strlen(json_string_value(pw)) != json_string_length(pw))) {
        rc = gp_diag_set(d, GP_EINVAL, "password: required, a string of 1 to %d bytes",
                         PASSWORD_MAX - 1);
    }
    if (rc == 0 && !(a->password = strdup(json_string_value(pw)))) {
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    return rc;
}

void api_registries_put(api_req *rq)
{
    cred_arg a = {.tenant = rq->params[0]};
    if (path_registry(rq, &a) < 0) {
        return;
    }
    if (api_read_body(rq, read_body, &a) == 0) {
        ctl_op op = {.run = cred_run, .arg = &a};
        api_run(rq, &op);
    }
    if (a.password) {
        memset(a.password, 0, strlen(a.password));
        free(a.password);
    }
}

void api_registries_delete(api_req *rq)
{
    cred_arg a = {.tenant = rq->params[0], .remove = true};
    if (path_registry(rq, &a) < 0) {
        return;
    }
    ctl_op op = {.run = cred_run, .arg = &a};
    api_run(rq, &op);
}
