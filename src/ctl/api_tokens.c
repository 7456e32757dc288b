/*
 * /v1/tokens: API tokens. A token's secret is shown once, at creation; the store and memory
 * keep only its SHA-256. Roles: admin, operator, user (bound to a tenant), join (may only
 * register nodes), metrics (may only scrape the controller's and the agents' /metrics). Agent
 * tokens are made by node registration, one per node; registering again revokes the node's older
 * ones.
 */
#include "ctl/api.h"
#include "ctl/doc.h"

#include "net/token.h"

#include <stdlib.h>
#include <string.h>

static const char *prefix_of(ctl_role r)
{
    switch (r) {
    case CTL_ROLE_ADMIN:
        return "gpa";
    case CTL_ROLE_OPERATOR:
        return "gpo";
    case CTL_ROLE_JOIN:
        return "gpj";
    case CTL_ROLE_AGENT:
        return "gpn";
    case CTL_ROLE_METRICS:
        return "gpm";
    default:
        return "gpu";
    }
}

static bool name_taken(ctl_state *st, const char *name)
{
    return ctl_token_by_name(st, name) != NULL;
}

int ctl_token_create(gpupoold *g, const char *name, ctl_role role, int64_t tenant_id,
                     int64_t node_id, int64_t expires_ms, char *secret, size_t cap, gp_diag *d)
{
    ctl_state *st = &g->st;
    if (gp_token_generate(prefix_of(role), secret, cap) < 0) {
        return gp_diag_set(d, GP_EIO, "cannot generate a token");
    }
    gp_token_rec t = {.tenant_id = tenant_id,
                      .node_id = node_id,
                      .created_ms = ctl_now_ms(),
                      .expires_ms = expires_ms};
    /* Token names are unique; agents get one per registration. */
    snprintf(t.name, sizeof(t.name), "%s", name);
    if (role == CTL_ROLE_AGENT) { /* unique even for two registrations in one millisecond */
        for (int64_t stamp = t.created_ms; stamp == t.created_ms || name_taken(st, t.name);
             stamp++) {
            snprintf(t.name, sizeof(t.name), "agent-%s-%lld", name, (long long)stamp);
        }
    }
    snprintf(t.role, sizeof(t.role), "%s", ctl_role_name(role));
    if (gp_token_hash(secret, t.hash) < 0) {
        return gp_diag_set(d, GP_EIO, "cannot hash a token");
    }
    if (st->ntokens == st->captokens) {
        int ncap = st->captokens ? st->captokens * 2 : 16;
        gp_token_rec *p = realloc(st->tokens, sizeof(*p) * (size_t)ncap);
        if (!p) {
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
        st->tokens = p;
        st->captokens = ncap;
    }
    int rc = gp_store_token_insert(g->store, &t, d);
    if (rc < 0) {
        return rc;
    }
    st->tokens[st->ntokens++] = t;
    ctl_token_appended(st);
    return 0;
}

int ctl_tokens_retire_agent(gpupoold *g, int64_t node_id, int64_t keep1, int64_t keep2, gp_diag *d)
{
    ctl_state *st = &g->st;
    int *mine;
    int n = ctl_tokens_of_node(st, node_id, &mine);
    if (n < 0) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (int pass = 0; rc == 0 && pass < 2; pass++) { /* the store first, then memory */
        for (int k = 0; rc == 0 && k < n; k++) {
            gp_token_rec *o = &st->tokens[mine[k]];
            if (o->revoked || strcmp(o->role, "agent") != 0 || o->id == keep1 || o->id == keep2) {
                continue;
            }
            if (pass == 1) {
                ctl_token_revoke(st, mine[k]);
            } else {
                rc = gp_store_token_revoke(g->store, o->id, d);
            }
        }
    }
    free(mine);
    return rc;
}

static json_t *token_doc(ctl_state *st, const gp_token_rec *t)
{
    ctl_tenant *tn = ctl_tenant_by_id(st, t->tenant_id);
    ctl_node *n = ctl_node_by_id(st, t->node_id);
    return json_pack(
        "{s:I, s:s, s:s, s:o, s:o, s:I, s:I, s:b}", "id", (json_int_t)t->id, "name", t->name,
        "role", t->role, "tenant", tn ? json_string(tn->lim.name) : json_null(), "node",
        n ? json_string(n->name) : json_null(), "created_ms", (json_int_t)t->created_ms,
        "expires_ms", (json_int_t)t->expires_ms, "revoked", t->revoked != 0);
}

void api_tokens_list(api_req *rq)
{
    ctl_read_lock(rq->g);
    json_t *items = json_array();
    for (int i = 0; i < rq->g->st.ntokens; i++) {
        json_array_append_new(items, token_doc(&rq->g->st, &rq->g->st.tokens[i]));
    }
    ctl_read_unlock(rq->g);
    api_reply(rq, 200, json_pack("{s:o}", "items", items));
}

typedef struct token_arg {
    char name[64];
    ctl_role role;
    char tenant[GP_NAME_MAX];
    int64_t expires_in_s;
} token_arg;

static int create_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    token_arg *a = op->arg;
    ctl_state *st = &g->st;
    int64_t tenant_id = 0;
    if (a->role == CTL_ROLE_USER) {
        ctl_tenant *t = ctl_tenant_by_name(st, a->tenant);
        if (!t) {
            return gp_diag_set(d, GP_EINVAL, "tenant: %s does not exist", a->tenant);
        }
        tenant_id = t->id;
    }
    if (name_taken(st, a->name)) {
        return gp_diag_set(d, GP_EEXIST, "token %s: already exists", a->name);
    }
    char secret[128];
    int64_t expires = a->expires_in_s ? ctl_now_ms() + a->expires_in_s * 1000 : 0;
    int rc =
        ctl_token_create(g, a->name, a->role, tenant_id, 0, expires, secret, sizeof(secret), d);
    if (rc < 0) {
        return rc;
    }
    op->status = 201;
    op->result = token_doc(st, &st->tokens[st->ntokens - 1]);
    json_object_set_new(op->result, "token", json_string(secret));
    return 0;
}

void api_tokens_create(api_req *rq)
{
    static const char *const fields[] = {"name", "role", "tenant", "expires_in", NULL};
    json_t *doc = api_body(rq);
    if (!doc) {
        return;
    }
    token_arg a;
    memset(&a, 0, sizeof(a));
    char role[16] = "";
    gp_diag d;
    gp_diag_clear(&d);
    int rc = doc_check_fields(doc, "", fields, &d);
    if (rc == 0) {
        rc = doc_name(doc, "", "name", a.name, sizeof(a.name), &d);
    }
    if (rc == 0) {
        rc = doc_str(doc, "", "role", role, sizeof(role), &d);
    }
    if (rc == 0) {
        rc = doc_str(doc, "", "tenant", a.tenant, sizeof(a.tenant), &d);
    }
    if (rc == 0) {
        rc = doc_int(doc, "", "expires_in", 1, INT64_C(10) * 365 * 86400, &a.expires_in_s, &d);
    }
    if (rc == 0 && !a.name[0]) {
        rc = gp_diag_set(&d, GP_EINVAL, "name: required");
    }
    if (rc == 0 && (ctl_role_parse(role, &a.role) < 0 || a.role == CTL_ROLE_AGENT)) {
        rc = gp_diag_set(&d, GP_EINVAL, "role: must be admin, operator, user, join or metrics");
    }
    if (rc == 0 && (a.role == CTL_ROLE_USER) != (a.tenant[0] != 0)) {
        rc = gp_diag_set(&d, GP_EINVAL, "tenant: %s",
                         a.role == CTL_ROLE_USER ? "required for role user" : "only for role user");
    }
    json_decref(doc);
    if (rc < 0) {
        api_diag(rq, &d);
        return;
    }
    ctl_op op = {.run = create_run, .arg = &a};
    api_run(rq, &op);
}

typedef struct revoke_arg {
    int64_t id;
} revoke_arg;

static int revoke_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    revoke_arg *a = op->arg;
    ctl_state *st = &g->st;
    for (int i = 0; i < st->ntokens; i++) {
        if (st->tokens[i].id == a->id) {
            int rc = gp_store_token_revoke(g->store, a->id, d);
            if (rc < 0) {
                return rc;
            }
            ctl_token_revoke(st, i);
            op->result = token_doc(st, &st->tokens[i]);
            return 0;
        }
    }
    return gp_diag_set(d, GP_ENOENT, "token %lld: not found", (long long)a->id);
}

void api_tokens_revoke(api_req *rq)
{
    char *end;
    revoke_arg a = {strtoll(rq->params[0], &end, 10)};
    if (*end || a.id <= 0) {
        api_error(rq, GP_ENOENT, "token %s: not found", rq->params[0]);
        return;
    }
    ctl_op op = {.run = revoke_run, .arg = &a};
    api_run(rq, &op);
}
