/*
 * Routing and authentication of the API (see api.h). The route table is the one list of
 * endpoints: the router matches against it, and a test checks that /openapi.json documents
 * exactly these routes.
 */
#include "ctl/api.h"
#include "base/clock.h"
#include "ctl/proxy.h"

#include "base/log.h"
#include "ctl/ratelimit.h"
#include "net/token.h"
#include "net/yaml_json.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

const api_route api_routes[] = {
    {"GET", "/healthz", R_ANYONE, api_healthz, "Liveness: the process answers"},
    {"GET", "/readyz", R_ANYONE, api_readyz, "Readiness: the store is open and the state loaded"},
    {"GET", "/openapi.json", R_ANYONE, api_openapi, "This API, as OpenAPI 3"},
    {"GET", "/metrics", R_SCRAPE, api_metrics, "The controller's metrics, for Prometheus"},
    {"GET", "/v1/sd/prometheus", R_SCRAPE, api_sd_prometheus,
     "The nodes' agents as Prometheus HTTP service discovery targets"},
    {"GET", "/v1/whoami", R_PEOPLE | R_AGENT | R_JOIN, api_whoami, "The caller's role and tenant"},
    {"POST", "/v1/jobs", R_PEOPLE, api_jobs_submit, "Submit a job (JSON or YAML)"},
    {"GET", "/v1/jobs", R_PEOPLE, api_jobs_list, "List jobs with filters and pagination"},
    {"GET", "/v1/jobs/{job}", R_PEOPLE, api_jobs_get, "Get a job by id or name"},
    {"POST", "/v1/jobs/{job}/cancel", R_PEOPLE, api_jobs_cancel, "Cancel a job"},
    {"POST", "/v1/jobs/{job}/requeue", R_PEOPLE, api_jobs_requeue,
     "Stop a job and put it back in the queue"},
    {"GET", "/v1/jobs/{job}/events", R_PEOPLE, api_jobs_events, "A job's event history"},
    {"GET", "/v1/jobs/{job}/logs", R_PEOPLE, api_jobs_logs,
     "A replica's stdout or stderr, from its node's agent"},
    {"GET", "/v1/services/{service}", R_PEOPLE, api_services_get,
     "A service with its ready endpoints and replica jobs"},
    {"PUT", "/v1/services/{service}", R_PEOPLE, api_services_put,
     "Roll a service to a new spec (JSON or YAML)"},
    {"POST", "/v1/jobs/{job}/proxy-session", R_PEOPLE, api_jobs_proxy_session,
     "A one-time URL that opens a notebook's or service's proxy in a browser"},
    {"POST", "/v1/jobs/{job}/resume", R_PEOPLE, api_jobs_resume,
     "Resume a notebook suspended for idleness"},
    {"GET", "/v1/jobs/{job}/metrics", R_PEOPLE, api_jobs_metrics,
     "A job's GPU utilisation and memory over time, per replica and for the job"},
    {"POST", "/v1/nodes", R_ADMIN | R_JOIN | R_AGENT, api_nodes_register,
     "Register a node; answers its new agent and control tokens"},
    {"GET", "/v1/nodes", R_PEOPLE, api_nodes_list, "List nodes with their GPUs"},
    {"GET", "/v1/nodes/{node}", R_PEOPLE, api_nodes_get, "Get a node"},
    {"POST", "/v1/nodes/{node}/heartbeat", R_AGENT | R_ADMIN, api_nodes_heartbeat,
     "An agent's heartbeat: replica states and GPU readings in, desired replicas out"},
    {"GET", "/v1/nodes/{node}/desired", R_AGENT | R_ADMIN, api_nodes_desired,
     "A node's desired replicas; with version and wait, a long-poll for their next change"},
    {"POST", "/v1/nodes/{node}/cordon", R_STAFF, api_nodes_cordon, "Stop placing work on a node"},
    {"POST", "/v1/nodes/{node}/drain", R_STAFF, api_nodes_drain,
     "Cordon a node and requeue the jobs on it"},
    {"POST", "/v1/nodes/{node}/uncordon", R_STAFF, api_nodes_uncordon,
     "Let work be placed on a node again"},
    {"POST", "/v1/nodes/{node}/taints", R_STAFF, api_nodes_taint,
     "Add or remove a node's taints; a NoExecute taint requeues the jobs that do not tolerate it"},
    {"PUT", "/v1/nodes/{node}/taints", R_STAFF, api_nodes_taints_put, "Set a node's taints"},
    {"POST", "/v1/nodes/{node}/check", R_STAFF, api_nodes_check,
     "Ask a node's agent for a health check"},
    {"POST", "/v1/nodes/{node}/credential", R_ADMIN, api_nodes_admit,
     "Re-admit a known node: a new agent token, every older one revoked"},
    {"POST", "/v1/nodes/{node}/gpus/{gpu}/drain", R_STAFF, api_nodes_gpu_drain,
     "Take one GPU out of service"},
    {"POST", "/v1/nodes/{node}/gpus/{gpu}/undrain", R_STAFF, api_nodes_gpu_undrain,
     "Return a drained GPU to service"},
    {"GET", "/v1/tenants", R_PEOPLE, api_tenants_list, "List tenants with quota use"},
    {"POST", "/v1/tenants", R_ADMIN, api_tenants_create, "Create a tenant"},
    {"GET", "/v1/tenants/{tenant}", R_PEOPLE, api_tenants_get, "Get a tenant"},
    {"PUT", "/v1/tenants/{tenant}", R_ADMIN, api_tenants_update, "Change a tenant's quota"},
    {"DELETE", "/v1/tenants/{tenant}", R_ADMIN, api_tenants_delete,
     "Delete a tenant without active jobs"},
    {"GET", "/v1/tenants/{tenant}/metrics", R_PEOPLE, api_tenants_metrics,
     "A tenant's GPUs and GPU memory allocated over time"},
    {"GET", "/v1/tenants/{tenant}/registries", R_PEOPLE, api_registries_list,
     "A tenant's image registry credentials (never their passwords)"},
    {"PUT", "/v1/tenants/{tenant}/registries/{registry}", R_STAFF, api_registries_put,
     "Set a tenant's credentials for an image registry"},
    {"DELETE", "/v1/tenants/{tenant}/registries/{registry}", R_STAFF, api_registries_delete,
     "Delete a tenant's credentials for an image registry"},
    {"GET", "/v1/queues", R_PEOPLE, api_queues_list, "List queues with their use"},
    {"POST", "/v1/queues", R_STAFF, api_queues_create, "Create a queue"},
    {"GET", "/v1/queues/{queue}", R_PEOPLE, api_queues_get, "Get a queue"},
    {"PUT", "/v1/queues/{queue}", R_STAFF, api_queues_update, "Change a queue"},
    {"DELETE", "/v1/queues/{queue}", R_STAFF, api_queues_delete,
     "Delete a queue without active jobs"},
    {"GET", "/v1/priorityclasses", R_PEOPLE, api_pclasses_list, "List priority classes"},
    {"POST", "/v1/priorityclasses", R_STAFF, api_pclasses_create, "Create a priority class"},
    {"GET", "/v1/priorityclasses/{class}", R_PEOPLE, api_pclasses_get, "Get a priority class"},
    {"PUT", "/v1/priorityclasses/{class}", R_STAFF, api_pclasses_update, "Change a priority class"},
    {"DELETE", "/v1/priorityclasses/{class}", R_STAFF, api_pclasses_delete,
     "Delete a priority class no active job uses"},
    {"GET", "/v1/volumes", R_PEOPLE, api_volumes_list, "List volumes"},
    {"POST", "/v1/volumes", R_STAFF, api_volumes_create, "Register a volume (a host directory)"},
    {"GET", "/v1/volumes/{volume}", R_PEOPLE, api_volumes_get, "Get a volume"},
    {"PUT", "/v1/volumes/{volume}", R_STAFF, api_volumes_update, "Change a volume"},
    {"DELETE", "/v1/volumes/{volume}", R_STAFF, api_volumes_delete,
     "Delete a volume no active job uses"},
    {"GET", "/v1/tokens", R_ADMIN, api_tokens_list, "List tokens (never their secrets)"},
    {"POST", "/v1/tokens", R_ADMIN, api_tokens_create, "Create a token; the secret is shown once"},
    {"DELETE", "/v1/tokens/{token}", R_ADMIN, api_tokens_revoke, "Revoke a token"},
    {"GET", "/v1/audit", R_ADMIN, api_audit_list, "The audit log: who changed what, and when"},
    {"GET", "/v1/usage", R_PEOPLE, api_usage,
     "Metered usage and cost by tenant, queue, node, job or GPU model"},
    {"GET", "/v1/alerts", R_PEOPLE, api_alerts_list, "The controller's active alerts"},
    /* The web dashboard (api_ui.c): static files, no token (the page holds no data; the API
     * calls it makes carry the user's token). */
    {"GET", "/", R_ANYONE, api_ui_root, "A redirect to the web dashboard"},
    {"GET", "/ui", R_ANYONE, api_ui_redirect, "A redirect to /ui/"},
    {"GET", "/ui/", R_ANYONE, api_ui_index, "The web dashboard"},
    {"GET", "/ui/{path...}", R_ANYONE, api_ui_file, "A file of the web dashboard"},
    {NULL, NULL, 0, NULL, NULL},
};

void api_reply(api_req *rq, int status, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (doc && !text) {
        gp_http_respond_error(rq->resp, GP_ENOMEM, "out of memory");
        return;
    }
    gp_http_response_set_body(rq->resp, status, "application/json", text, text ? strlen(text) : 0);
}

void api_error(api_req *rq, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gp_http_respond_error(rq->resp, code, "%s", msg);
}

void api_diag(api_req *rq, const gp_diag *d)
{
    gp_http_respond_diag(rq->resp, d);
}

void api_run(api_req *rq, ctl_op *op)
{
    ctl_audit_prepare(op, &rq->who, rq->http, rq->route ? rq->route->pattern : NULL, rq->params[0],
                      rq->params[1]);
    if (ctl_run_op(rq->g, op) < 0) {
        api_diag(rq, &op->diag);
        return;
    }
    api_reply(rq, op->status ? op->status : 200, op->result);
    op->result = NULL;
}

/* A request whose op runs without holding its server thread (api_run_async): what its answer and
 * its audit record need, copied out of the request. op comes first: done gets &op. */
typedef struct api_pending {
    ctl_op op;
    gpupoold *g;
    gp_http_deferred *dr;
    void *arg;
    void (*fini)(void *arg);
    ctl_principal who;
    char method[16];
    char *path;
    char ref[API_MAX_PARAMS][sizeof(((api_req *)0)->param_buf[0])];
    char *body; /* the request's body, when the audit record shows it */
    int route;  /* index in api_routes, for the metrics */
    int64_t t0_us;
} api_pending;

static void pending_free(api_pending *p)
{
    if (p->fini) {
        p->fini(p->arg);
    }
    free(p->path);
    free(p->body);
    free(p);
}

/* Builds the answer of p's op on its connection's thread (resp NULL: it goes nowhere), and frees
 * p. */
static void pending_answer(void *ctx, gp_http_response *resp)
{
    api_pending *p = ctx;
    ctl_op *op = &p->op;
    if (resp) {
        api_req rq = {.g = p->g, .resp = resp};
        if (op->rc < 0) {
            api_diag(&rq, &op->diag);
        } else {
            api_reply(&rq, op->status ? op->status : 200, op->result);
            op->result = NULL;
        }
        ctl_metrics_http(&p->g->metrics, p->route, p->method, resp->status,
                         ctl_metrics_now_us() - p->t0_us);
    }
    json_decref(op->result);
    pending_free(p);
}

/* The committer's call once the op's group is committed (or failed): the answer is built and
 * sent by the connection's thread, so the committer goes on to the next group at once. */
static void pending_done(ctl_op *op)
{
    api_pending *p = (api_pending *)op;
    gp_http_deferred_finish_with(p->dr, pending_answer, p);
}

/* Copies what the audit record points to in the request into p. */
static void pending_audit(api_pending *p, const api_req *rq)
{
    ctl_op_audit *a = &p->op.audit;
    ctl_audit_prepare(&p->op, &rq->who, rq->http, rq->route ? rq->route->pattern : NULL,
                      rq->params[0], rq->params[1]);
    p->who = rq->who;
    a->who = &p->who;
    snprintf(p->method, sizeof(p->method), "%s", rq->http->method);
    a->method = p->method;
    a->path = p->path;
    for (int i = 0; i < 2 && i < API_MAX_PARAMS; i++) {
        const char *ref = i == 0 ? a->ref : a->ref2;
        if (ref) {
            snprintf(p->ref[i], sizeof(p->ref[i]), "%s", ref);
            *(i == 0 ? &a->ref : &a->ref2) = p->ref[i];
        }
    }
    if (a->body) {
        size_t len;
        p->body = gp_http_request_take_body(rq->http, &len);
        a->body = p->body;
        a->body_len = p->body ? len : 0;
    }
}

void api_run_async(api_req *rq, const ctl_op *op, void *arg, void (*fini)(void *arg))
{
    api_pending *p = calloc(1, sizeof(*p));
    char *path = p ? strdup(rq->http->path) : NULL;
    if (!path) {
        free(p);
        fini(arg);
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    *p = (api_pending){.op = *op, .g = rq->g, .arg = arg, .fini = fini, .path = path};
    p->op.arg = arg;
    p->route = rq->route ? (int)(rq->route - api_routes) : -1;
    p->t0_us = ctl_metrics_now_us();
    pending_audit(p, rq);
    /* awaited: a server that stops sends the op's own answer, never a 503 for a change made */
    p->dr = gp_http_defer_awaited(rq->http, rq->resp);
    if (!p->dr) { /* the answer is set: the server is stopping, or out of memory */
        pending_free(p);
        return;
    }
    ctl_run_op_async(rq->g, &p->op, pending_done);
}

int64_t api_scope(const api_req *rq)
{
    return rq->who.role == CTL_ROLE_USER ? rq->who.tenant_id : 0;
}

bool api_scrape_full(const api_req *rq)
{
    return rq->who.role != CTL_ROLE_NONE;
}

json_t *api_body(api_req *rq)
{
    const char *type = gp_http_request_header(rq->http, "Content-Type");
    json_t *doc = NULL;
    if (type && (strstr(type, "yaml") || strstr(type, "YAML"))) {
        gp_diag d;
        gp_diag_clear(&d);
        if (gp_yaml_to_json(rq->http->body, rq->http->body_len, &doc, &d) < 0) {
            api_diag(rq, &d);
            return NULL;
        }
    } else {
        gp_diag d;
        gp_diag_clear(&d);
        if (gp_json_check_depth(rq->http->body, rq->http->body_len, GP_JSON_MAX_DEPTH, &d) < 0) {
            api_error(rq, d.code, "body: %s", d.msg);
            return NULL;
        }
        json_error_t err;
        doc = json_loadb(rq->http->body, rq->http->body_len, JSON_REJECT_DUPLICATES, &err);
        if (!doc) {
            api_error(rq, GP_EPARSE, "body: line %d, column %d: %s", err.line, err.column,
                      err.text);
            return NULL;
        }
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        api_error(rq, GP_EINVAL, "body: must be an object");
        return NULL;
    }
    return doc;
}

int api_read_body(api_req *rq, int (*read)(json_t *doc, void *arg, gp_diag *d), void *arg)
{
    json_t *doc = api_body(rq);
    if (!doc) {
        return -1;
    }
    gp_diag d;
    gp_diag_clear(&d);
    int rc = read(doc, arg, &d);
    json_decref(doc);
    if (rc < 0) {
        api_diag(rq, &d);
        return -1;
    }
    return 0;
}

/* Matches path against pattern, filling rq->params. A parameter takes one segment ("{job}"),
 * or with "..." after its name ("{path...}", last in the pattern) the rest of the path, slashes
 * included; either must not be empty. */
static bool match(const char *pattern, const char *path, api_req *rq)
{
    int np = 0;
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            bool rest = close - p > 4 && strncmp(close - 3, "...", 3) == 0;
            const char *slash = rest ? NULL : strchr(s, '/');
            size_t n = slash ? (size_t)(slash - s) : strlen(s);
            if (n == 0 || n >= sizeof(rq->param_buf[0]) || np >= API_MAX_PARAMS) {
                return false;
            }
            memcpy(rq->param_buf[np], s, n);
            rq->param_buf[np][n] = 0;
            rq->params[np] = rq->param_buf[np];
            np++;
            p = close + 1;
            s += n;
        } else if (*p++ != *s++) {
            return false;
        }
    }
    return !*p && !*s;
}

int api_authenticate(api_req *rq)
{
    const char *h = gp_http_request_header(rq->http, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0 || !h[7]) {
        api_error(rq, GP_EAUTH, "Authorization: a bearer token is required");
        return GP_EAUTH;
    }
    char hash[GP_TOKEN_HASH_HEX];
    if (gp_token_hash(h + 7, hash) < 0) {
        api_error(rq, GP_EINTERNAL, "cannot hash the token");
        return GP_EINTERNAL;
    }
    bool ok = ctl_auth_lookup(rq->g, hash, ctl_now_ms(), &rq->who) == 0;
    if (!ok) {
        api_error(rq, GP_EAUTH, "Authorization: the token is unknown, expired or revoked");
        return GP_EAUTH;
    }
    return 0;
}

/* ---- Rate limits ----
 *
 * Users are limited per tenant (api.rate_limit), so that one tenant's flood leaves the others
 * their share; admin, operator and join tokens per token (api.token_rate_limit); agent tokens
 * never, since a refused heartbeat would make a healthy node look dead. The limiters are made
 * from the controller's config on first use and live as long as the process: gpupoold runs one
 * controller per process (main.c). */
typedef struct api_limits {
    gp_ratelimit *tenant; /* keyed by tenant id */
    gp_ratelimit *token;  /* keyed by token id */
} api_limits;

#define LIMIT_KEYS 65536 /* buckets kept per limiter (see ratelimit.h: memory stays bounded) */

static _Atomic(api_limits *) limits;
static pthread_mutex_t limits_lock = PTHREAD_MUTEX_INITIALIZER;

/* The limiters; NULL when they could not be made (no memory): requests then go unlimited. */
static api_limits *limits_get(const gp_ctl_config *cfg)
{
    api_limits *l = atomic_load_explicit(&limits, memory_order_acquire);
    if (l) {
        return l;
    }
    pthread_mutex_lock(&limits_lock);
    l = atomic_load_explicit(&limits, memory_order_relaxed);
    if (!l && (l = calloc(1, sizeof(*l))) != NULL) {
        const double rate = cfg->api.rate_limit, token_rate = cfg->api.token_rate_limit;
        int rc = gp_ratelimit_new(rate, cfg->api.rate_burst, LIMIT_KEYS, &l->tenant);
        if (rc == 0) {
            rc = gp_ratelimit_new(token_rate, cfg->api.token_rate_burst, LIMIT_KEYS, &l->token);
        }
        if (rc != 0) {
            gp_ratelimit_free(l->tenant);
            free(l);
            l = NULL;
            GP_LOG(GP_LOG_ERROR, "http", "rate limits off: cannot make the limiters");
        } else {
            atomic_store_explicit(&limits, l, memory_order_release);
        }
    }
    pthread_mutex_unlock(&limits_lock);
    return l;
}

/* Takes one request from the caller's bucket: true, or false after answering 429. */
static bool within_rate(api_req *rq)
{
    const ctl_principal *w = &rq->who;
    api_limits *l = w->role == CTL_ROLE_AGENT ? NULL : limits_get(rq->g->cfg);
    if (!l) {
        return true;
    }
    bool user = w->role == CTL_ROLE_USER;
    int64_t retry_ms = 0;
    if (gp_ratelimit_take(user ? l->tenant : l->token, user ? w->tenant_id : w->token_id,
                          gp_mono_ms(), &retry_ms) == 0) {
        return true;
    }
    long long secs = (long long)((retry_ms + 999) / 1000);
    if (user) {
        api_error(rq, GP_EUNAVAIL,
                  "rate limit: tenant %s made more than %g requests per second "
                  "(api.rate_limit); retry in %llds",
                  w->tenant, rq->g->cfg->api.rate_limit, secs);
    } else {
        api_error(rq, GP_EUNAVAIL,
                  "rate limit: token %s made more than %g requests per second "
                  "(api.token_rate_limit); retry in %llds",
                  w->name, rq->g->cfg->api.token_rate_limit, secs);
    }
    rq->resp->status = 429;
    char value[32];
    snprintf(value, sizeof(value), "%lld", secs);
    gp_http_response_add_header(rq->resp, "Retry-After", value);
    GP_LOG(GP_LOG_DEBUG, "http", "method=%s path=%s status=429 role=%s token=%s", rq->http->method,
           rq->http->path, ctl_role_name(w->role), w->name);
    return false;
}

/* Matches the route, checks the caller and runs the handler; *route is set once matched. */
static void dispatch(void *ctx, const gp_http_request *req, gp_http_response *resp,
                     const api_route **route)
{
    api_req rq;
    memset(&rq, 0, sizeof(rq));
    rq.g = ctx;
    rq.http = req;
    rq.resp = resp;
    if (px_path_match(req->path, rq.param_buf[0], sizeof(rq.param_buf[0]))) {
        rq.params[0] = rq.param_buf[0]; /* any method, its own authentication (proxy.c) */
        char lead[CTL_HA_URL_MAX];
        if (ctl_ha_get(&rq.g->ha, lead, sizeof(lead)) == CTL_HA_FOLLOWER) {
            ctl_ha_redirect(lead, req->path, req->target,
                            resp); /* sessions live in the leader's memory */
            return;
        }
        api_jobs_proxy(&rq);
        return;
    }
    if (px_service_path_match(req->path, rq.param_buf[0], sizeof(rq.param_buf[0]))) {
        rq.params[0] = rq.param_buf[0]; /* a service's address: the same, balanced (proxy.c) */
        char lead[CTL_HA_URL_MAX];
        if (ctl_ha_get(&rq.g->ha, lead, sizeof(lead)) == CTL_HA_FOLLOWER) {
            ctl_ha_redirect(lead, req->path, req->target, resp);
            return;
        }
        api_services_proxy(&rq);
        return;
    }
    const api_route *hit = NULL;
    char allow[64] = "";
    for (const api_route *r = api_routes; r->method && !hit; r++) {
        if (match(r->pattern, req->path, &rq)) {
            if (strcmp(r->method, req->method) == 0) {
                hit = r;
            } else if (strlen(allow) + strlen(r->method) + 3 < sizeof(allow)) {
                strcat(strcat(allow, allow[0] ? ", " : ""), r->method);
            }
        }
    }
    if (!hit) {
        if (allow[0]) {
            api_error(&rq, GP_EINVAL, "%s %s: method not allowed (allowed: %s)", req->method,
                      req->path, allow);
            resp->status = 405;
            gp_http_response_add_header(resp, "Allow", allow);
        } else {
            api_error(&rq, GP_ENOENT, "%s: no such endpoint", req->path);
        }
        return;
    }
    match(hit->pattern, req->path, &rq);
    rq.route = *route = hit;
    char leader[CTL_HA_URL_MAX];
    if (ctl_ha_get(&rq.g->ha, leader, sizeof(leader)) == CTL_HA_FOLLOWER &&
        !ctl_ha_follower_serves(hit->method, hit->pattern)) {
        ctl_ha_redirect(leader, req->path, req->target,
                        resp); /* before authentication: no token needed */
        return;
    }
    unsigned roles = hit->roles;
    if (roles == R_SCRAPE) {
        /* Without metrics.auth a token is still checked when one is given: it unlocks the
         * per-tenant labels (api_scrape_full). */
        bool given = gp_http_request_header(req, "Authorization") != NULL;
        roles = rq.g->cfg->metrics.auth || given ? R_SCRAPERS : R_ANYONE;
    }
    if (roles != R_ANYONE) {
        if (api_authenticate(&rq) < 0 || !within_rate(&rq)) {
            return;
        }
        if (!(roles & (1u << rq.who.role))) {
            api_error(&rq, GP_EPERM, "%s %s: not allowed for role %s", req->method, hit->pattern,
                      ctl_role_name(rq.who.role));
            return;
        }
    }
    hit->handler(&rq);
    GP_LOG(GP_LOG_DEBUG, "http", "method=%s path=%s status=%d role=%s", req->method, req->path,
           resp->status, ctl_role_name(rq.who.role));
}

size_t ctl_http_body_limit(void *ctx, const char *method, const char *path)
{
    (void)method;
    const gpupoold *g = ctx;
    char ref[sizeof(((api_req *)0)->param_buf[0])]; /* as the router matches them */
    if (px_path_match(path, ref, sizeof(ref)) || px_service_path_match(path, ref, sizeof(ref))) {
        return (size_t)g->cfg->proxy.max_body;
    }
    return 0; /* http.max_body */
}

/* Every request's duration is observed by its route's pattern (gpupool_http_request_duration_
 * seconds); a deferred answer (a long-poll that waits: no status yet) is not. */
void ctl_http_handle(void *ctx, const gp_http_request *req, gp_http_response *resp)
{
    gpupoold *g = ctx;
    const api_route *route = NULL;
    int64_t t0 = ctl_metrics_now_us();
    dispatch(ctx, req, resp, &route);
    if (resp->status != 0) {
        ctl_metrics_http(&g->metrics, route ? (int)(route - api_routes) : -1, req->method,
                         resp->status, ctl_metrics_now_us() - t0);
    }
}

void api_healthz(api_req *rq)
{
    api_reply(rq, 200, json_pack("{s:s}", "status", "ok"));
}

void api_readyz(api_req *rq)
{
    if (!rq->g->ready) {
        api_error(rq, GP_EUNAVAIL, "not ready");
        return;
    }
    char leader[CTL_HA_URL_MAX];
    ctl_ha_role role = ctl_ha_get(&rq->g->ha, leader, sizeof(leader));
    json_t *doc = json_pack("{s:s, s:s}", "status", "ready", "role", ctl_ha_role_name(role));
    if (role == CTL_HA_FOLLOWER) {
        json_object_set_new(doc, "leader", leader[0] ? json_string(leader) : json_null());
    }
    api_reply(rq, 200, doc);
}

void api_whoami(api_req *rq)
{
    json_t *doc =
        json_pack("{s:s, s:s}", "role", ctl_role_name(rq->who.role), "token", rq->who.name);
    ctl_read_lock(rq->g);
    ctl_tenant *t = ctl_tenant_by_id(&rq->g->st, rq->who.tenant_id);
    ctl_node *n = ctl_node_by_id(&rq->g->st, rq->who.node_id);
    json_object_set_new(doc, "tenant", t ? json_string(t->lim.name) : json_null());
    json_object_set_new(doc, "node", n ? json_string(n->name) : json_null());
    ctl_read_unlock(rq->g);
    api_reply(rq, 200, doc);
}
