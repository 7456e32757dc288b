/*
 * The controller's proxy to notebooks and services (see proxy.h): who may pass, to which
 * replica, and the request head the job gets.
 *
 * Who: the job's own tenant only. A user token of the tenant (Authorization: Bearer), or the
 * session cookie a one-time code from POST /v1/jobs/{job}/proxy-session was exchanged for (a
 * GET with ?gp_code=...: answered 303 to the same URL without the code, with the cookie). A user
 * of another tenant gets 404, as for any job it cannot see; an admin or operator 403: their
 * tokens do not open a tenant's notebook. The controller's credentials never reach the job: the
 * Authorization header and the proxy's cookie are removed before the request is passed on.
 */
#include "ctl/proxy.h"
#include "ctl/service.h"

#include "ctl/proxy_http.h"
#include "ctl/proxy_state.h"
#include "net/token.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool px_path_match(const char *path, char *job, size_t cap)
{
    static const char pre[] = "/v1/jobs/";
    if (strncmp(path, pre, sizeof(pre) - 1) != 0) {
        return false;
    }
    const char *ref = path + sizeof(pre) - 1;
    const char *slash = strchr(ref, '/');
    if (!slash || slash == ref || (size_t)(slash - ref) >= cap ||
        strncmp(slash, "/proxy", 6) != 0 || (slash[6] != '/' && slash[6] != '\0')) {
        return false;
    }
    memcpy(job, ref, (size_t)(slash - ref));
    job[slash - ref] = '\0';
    return true;
}

/* Who may pass: a tenant, and for a session or a code the one job it opens. */
typedef struct px_who {
    int64_t tenant; /* the caller's tenant */
    int64_t job;    /* a session's or code's job; 0: a token (any job of the tenant) */
    bool from_code; /* the request exchanges a one-time code */
} px_who;

static int who_from_token(api_req *rq, px_who *w)
{
    if (api_authenticate(rq) < 0) {
        return GP_EAUTH;
    }
    if (rq->who.role == CTL_ROLE_USER) {
        w->tenant = rq->who.tenant_id;
        return 0;
    }
    if (rq->who.role == CTL_ROLE_ADMIN || rq->who.role == CTL_ROLE_OPERATOR) {
        ctl_read_lock(rq->g);
        bool known = ctl_job_find(&rq->g->st, rq->params[0], 0) != NULL;
        ctl_read_unlock(rq->g);
        if (!known) {
            api_error(rq, GP_ENOENT, "job %s: not found", rq->params[0]);
            return GP_ENOENT;
        }
    }
    api_error(rq, GP_EPERM,
              "proxy: only a user token of the job's tenant opens it (role %s does not: a "
              "notebook or service is its tenant's alone)",
              ctl_role_name(rq->who.role));
    return GP_EPERM;
}

/* Fills w from the request's token, session cookie or one-time code: 0, or an error answered. */
static int who_is(api_req *rq, px_who *w)
{
    memset(w, 0, sizeof(*w));
    if (gp_http_request_header(rq->http, "Authorization")) {
        return who_from_token(rq, w);
    }
    char value[PX_SECRET_MAX];
    const char *cookies = gp_http_request_header(rq->http, "Cookie");
    int64_t now = ctl_now_ms();
    if (cookies && px_cookie_get(cookies, PX_COOKIE, value, sizeof(value)) &&
        ctl_proxy_session_find(rq->g->proxy, value, now, &w->tenant, &w->job)) {
        return 0;
    }
    const char *code = gp_http_request_query(rq->http, "gp_code");
    if (code && strcmp(rq->http->method, "GET") == 0) {
        if (ctl_proxy_code_take(rq->g->proxy, code, now, &w->tenant, &w->job)) {
            w->from_code = true;
            return 0;
        }
        api_error(rq, GP_EAUTH,
                  "gp_code: unknown, used or expired (a code opens the proxy once, within %d "
                  "s): ask POST /v1/jobs/%s/proxy-session for another",
                  PX_CODE_TTL_MS / 1000, rq->params[0]);
        return GP_EAUTH;
    }
    api_error(rq, GP_EAUTH,
              "Authorization: a bearer token of the job's tenant, or the session cookie that "
              "POST /v1/jobs/%s/proxy-session opens",
              rq->params[0]);
    return GP_EAUTH;
}

/* Where the 303 after the exchange goes: the request's target under the job's numeric prefix
 * (the cookie's path), less its gp_code parameter. */
static void without_code(const char *target, int64_t job, char *out, size_t cap)
{
    const char *q = strchr(target, '?');
    size_t n = q ? (size_t)(q - target) : strlen(target);
    const char *rest = strstr(target, "/proxy/");
    rest = rest && rest < target + n ? rest + 7 : target + n;
    snprintf(out, cap, "/v1/jobs/%lld/proxy/%.*s", (long long)job, (int)(target + n - rest), rest);
    if (!q) {
        return;
    }
    char sep = '?';
    for (const char *p = q + 1; *p;) {
        size_t len = strcspn(p, "&");
        bool code = strncmp(p, "gp_code=", 8) == 0 || (len == 7 && strncmp(p, "gp_code", 7) == 0);
        if (len > 0 && !code) {
            size_t at = strlen(out);
            snprintf(out + at, cap - at, "%c%.*s", sep, (int)len, p);
            sep = '&';
        }
        p += len + (p[len] == '&');
    }
}

/* The 303 that trades a one-time code for the session cookie. */
static void open_session(api_req *rq, const px_who *w)
{
    char cookie[PX_SECRET_MAX];
    if (ctl_proxy_session_make(rq->g->proxy, w->tenant, w->job, ctl_now_ms(), cookie) != 0) {
        api_error(rq, GP_EIO, "proxy: no random bytes for a session");
        return;
    }
    char set[256], location[GP_HTTP_MAX_URI + 1];
    snprintf(set, sizeof(set),
             PX_COOKIE "=%s; Path=/v1/jobs/%lld/proxy/; Max-Age=%lld; HttpOnly; SameSite=Lax%s",
             cookie, (long long)w->job, PX_SESSION_TTL_MS / 1000, rq->http->tls ? "; Secure" : "");
    without_code(rq->http->target, w->job, location, sizeof(location));
    gp_http_response_set_body(rq->resp, 303, NULL, NULL, 0);
    gp_http_response_add_header(rq->resp, "Set-Cookie", set);
    gp_http_response_add_header(rq->resp, "Location", location);
    gp_http_response_add_header(rq->resp, "Cache-Control", "no-store");
}

/* Whether the job serves through the proxy; an error answered if not. Under the read lock. */
static bool servable(api_req *rq, const ctl_job *j)
{
    if (j->spec.job_kind != GP_JOB_NOTEBOOK && j->spec.job_kind != GP_JOB_SERVICE) {
        api_error(rq, GP_EINVAL,
                  "job %s: a batch job has nothing to proxy (kind notebook or "
                  "service with a port)",
                  rq->params[0]);
        return false;
    }
    if (j->spec.port <= 0) {
        api_error(rq, GP_EINVAL, "job %s: it declares no port", rq->params[0]);
        return false;
    }
    if (j->state != CTL_RUNNING || !j->replicas) {
        api_error(rq, GP_EUNAVAIL, "job %s is %s, not running: nothing serves it now",
                  rq->params[0], ctl_job_state_name(j->state));
        return false;
    }
    return true;
}

/* The replica to pass to: replica 0 for a notebook; for a service one of those running, in
 * turn. -1 when none runs. */
static int pick_replica(const ctl_job *j)
{
    static _Atomic unsigned turn;
    int n = j->spec.job_kind == GP_JOB_NOTEBOOK ? 1 : j->spec.replicas;
    unsigned start = j->spec.job_kind == GP_JOB_NOTEBOOK ? 0 : turn++;
    for (int k = 0; k < n; k++) {
        int r = (int)((start + (unsigned)k) % (unsigned)n);
        if (strcmp(j->replicas[r].state, "Running") == 0) {
            return r;
        }
    }
    return -1;
}

/* Fills t's destination from the state; an error answered when the job cannot be reached.
 * A Suspended notebook answers nothing yet: GP_ESTATE with t->job set, for the caller to resume
 * it. A service (service.h) passes to one of its ready replica jobs in turn (t->job is that
 * job's); *asked is the job the request named (the service's). */
static int locate(api_req *rq, const px_who *w, px_target *t, int64_t *asked)
{
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    ctl_job *j = ctl_job_find(st, rq->params[0], w->tenant);
    int rc = GP_EINVAL, r = -1;
    const ctl_node *n = NULL;
    static _Atomic unsigned service_turn;
    ctl_job *svc = j && ctl_job_is_service(j) ? j : NULL;
    *asked = j ? j->id : 0;
    if (svc && !(w->job && j->id != w->job)) { /* balanced over its ready replica jobs */
        j = ctl_service_pick(st, svc, service_turn++);
    }
    if (svc && !j) {
        rc = GP_EUNAVAIL;
        api_error(rq, rc, "service %s: no replica is ready", rq->params[0]);
    } else if (!j || (w->job && *asked != w->job)) {
        rc = GP_ENOENT;
        api_error(rq, rc, "job %s: not found", rq->params[0]);
    } else if (j->state == CTL_SUSPENDED) { /* a notebook: only they are suspended */
        rc = GP_ESTATE;
        t->job = j->id;
    } else if (servable(rq, j) && (r = pick_replica(j)) < 0) {
        rc = GP_EUNAVAIL;
        api_error(rq, rc, "job %s: no replica is running yet", rq->params[0]);
    } else if (r >= 0) {
        n = ctl_node_by_id(st, j->replicas[r].node_id);
        char host[128];
        const char *colon = n ? strrchr(n->address, ':') : NULL;
        if (!n || !colon || !ctl_node_host(n, host, sizeof(host))) {
            rc = GP_EUNAVAIL;
            api_error(rq, rc, "job %s: its node has no address to reach it through", rq->params[0]);
        } else {
            rc = 0;
            t->job = j->id;
            t->tenant = j->tenant_id;
            t->port = j->spec.port;
            t->agent_port = atoi(colon + 1);
            snprintf(t->agent_host, sizeof(t->agent_host), "%s", host);
            snprintf(t->token, sizeof(t->token), "%s", n->control_token);
            snprintf(t->node, sizeof(t->node), "%s", n->name);
            snprintf(t->tunnel, sizeof(t->tunnel), "/v1/replicas/%lld-%d-%lld/tunnel?port=%d",
                     (long long)j->id, r, (long long)j->replicas[r].epoch, j->spec.port);
            t->key = (px_pool_key){.tenant = t->tenant,
                                   .job = j->id,
                                   .replica = r,
                                   .epoch = j->replicas[r].epoch,
                                   .port = t->port};
            snprintf(t->key.agent, sizeof(t->key.agent), "%s:%d", host, t->agent_port);
        }
    }
    ctl_read_unlock(rq->g);
    return rc;
}

/* ---- the request head the job gets ---- */

typedef struct head_buf {
    char *p;
    size_t len, cap;
    bool failed;
} head_buf;

static void add(head_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(head_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->failed || n < 0) {
        b->failed = true;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->len + (size_t)n + 1) * 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static int copy_header(void *ctx, const char *name, const char *value)
{
    head_buf *b = ctx;
    if (px_hop_header(name) || strcasecmp(name, "Authorization") == 0 ||
        strcasecmp(name, "Expect") == 0 || strcasecmp(name, "Forwarded") == 0 ||
        strncasecmp(name, "X-Forwarded-", 12) == 0) {
        return 0;
    }
    if (strcasecmp(name, "Cookie") == 0) {
        size_t cap = strlen(value) + 1;
        char *kept = malloc(cap);
        if (kept && px_cookie_strip(value, PX_COOKIE, kept, cap) > 0) {
            add(b, "Cookie: %s\r\n", kept);
        }
        free(kept);
        return 0;
    }
    add(b, "%s: %s\r\n", name, value);
    return 0;
}

static bool has_token(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        p += strspn(p, " \t,");
        size_t len = strcspn(p, " \t,");
        if (len == n && strncasecmp(p, word, n) == 0) {
            return true;
        }
        p += len;
    }
    return false;
}

/* The head passed to the job: method and target unchanged, the client's headers less the
 * controller's credentials and the connection's own, and the X-Forwarded-* set. */
static int build_head(api_req *rq, px_target *t, const char *target, const char *prefix)
{
    const gp_http_request *req = rq->http;
    const char *up = gp_http_request_header(req, "Upgrade");
    t->upgrade = up && has_token(gp_http_request_header(req, "Connection"), "upgrade");
    t->head_only = strcmp(req->method, "HEAD") == 0;
    static const char *const idempotent[] = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"};
    for (size_t i = 0; i < sizeof(idempotent) / sizeof(idempotent[0]); i++) {
        t->retry_ok = t->retry_ok || strcmp(req->method, idempotent[i]) == 0;
    }
    head_buf b = {0};
    add(&b, "%s %s HTTP/1.1\r\n", req->method, target);
    gp_http_request_each_header(req, copy_header, &b);
    const char *host = gp_http_request_header(req, "Host");
    add(&b, "X-Forwarded-For: %s\r\nX-Forwarded-Proto: %s\r\n", req->remote_addr,
        req->tls ? "https" : "http");
    if (host && !strpbrk(host, "\r\n")) {
        add(&b, "X-Forwarded-Host: %s\r\n", host);
    }
    add(&b, "X-Forwarded-Prefix: %s\r\n", prefix);
    if (req->body_len > 0 || strcmp(req->method, "POST") == 0 || strcmp(req->method, "PUT") == 0 ||
        strcmp(req->method, "PATCH") == 0) {
        add(&b, "Content-Length: %zu\r\n", req->body_len);
    }
    if (t->upgrade) {
        add(&b, "Connection: Upgrade\r\nUpgrade: %s\r\n\r\n", up);
    } else {
        add(&b, "\r\n"); /* HTTP/1.1 keeps the tunnel open for the next request (proxy_pool.h) */
    }
    if (b.failed) {
        free(b.p);
        api_error(rq, GP_ENOMEM, "out of memory");
        return GP_ENOMEM;
    }
    /* the body moves to the pass (up to proxy.max_body: not copied) */
    t->body = gp_http_request_take_body(req, &t->body_len);
    t->head = b.p;
    t->head_len = b.len;
    return 0;
}

/* A Suspended notebook asked for: resumed, and the caller told to come back once it runs. */
static void resume_then_retry(api_req *rq, const px_who *w, int64_t job)
{
    gp_diag d;
    gp_diag_clear(&d);
    const char *who = rq->who.name[0] ? rq->who.name : "its proxy";
    if (px_resume(rq->g, job, w->tenant, who, &d) != 0 && d.code != GP_ESTATE) {
        api_diag(rq, &d);
        return;
    }
    api_error(rq, GP_EUNAVAIL,
              "job %s was suspended for idleness and is resuming: retry once it runs",
              rq->params[0]);
    gp_http_response_add_header(rq->resp, "Retry-After", "5");
}

/* A pass: under /v1/jobs/{job}/proxy (the path unchanged), or under /v1/services/{service} (the
 * prefix stripped: the job sees the path below it). */
static void pass(api_req *rq, bool service_path)
{
    if (!rq->g->proxy) {
        api_error(rq, GP_EUNAVAIL, "proxy: not available");
        return;
    }
    const char *path = rq->http->path;
    size_t plen = strlen(path);
    if (!service_path && plen >= 6 && strcmp(path + plen - 6, "/proxy") == 0) {
        char location[600]; /* the base URL ends with '/' */
        snprintf(location, sizeof(location), "%.500s/", path);
        gp_http_response_set_body(rq->resp, 308, NULL, NULL, 0);
        gp_http_response_add_header(rq->resp, "Location", location);
        return;
    }
    px_who w;
    if (who_is(rq, &w) != 0) {
        return;
    }
    px_target *t = calloc(1, sizeof(*t));
    if (!t) {
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    t->g = rq->g;
    int64_t asked = 0;
    int rc = locate(rq, &w, t, &asked);
    if (rc == GP_ESTATE) {
        resume_then_retry(rq, &w, t->job);
    }
    if (rc != 0) {
        free(t);
        return;
    }
    ctl_proxy_touch(rq->g->proxy, t->job, ctl_now_ms());
    if (w.from_code) {
        w.job = asked;
        free(t);
        open_session(rq, &w);
        return;
    }
    char prefix[GP_JOB_NAME_MAX + 32];
    const char *target = rq->http->target;
    if (service_path) {
        snprintf(prefix, sizeof(prefix), "/v1/services/%s", rq->params[0]);
        target += strlen(prefix); /* the router matched it: what follows starts with '/' */
    } else {
        snprintf(prefix, sizeof(prefix), "/v1/jobs/%lld/proxy", (long long)asked);
    }
    if (build_head(rq, t, target, prefix) != 0) {
        free(t);
        return;
    }
    px_pass_start(t, rq->http, rq->resp);
}

void api_jobs_proxy(api_req *rq)
{
    pass(rq, false);
}

void api_services_proxy(api_req *rq)
{
    pass(rq, true);
}

bool px_service_path_match(const char *path, char *name, size_t cap)
{
    static const char pre[] = "/v1/services/";
    if (strncmp(path, pre, sizeof(pre) - 1) != 0) {
        return false;
    }
    const char *ref = path + sizeof(pre) - 1;
    const char *slash = strchr(ref, '/');
    if (!slash || slash == ref || (size_t)(slash - ref) >= cap) {
        return false;
    }
    memcpy(name, ref, (size_t)(slash - ref));
    name[slash - ref] = '\0';
    return true;
}

void api_jobs_proxy_session(api_req *rq)
{
    if (rq->who.role != CTL_ROLE_USER) {
        ctl_read_lock(rq->g);
        bool known = ctl_job_find(&rq->g->st, rq->params[0], 0) != NULL;
        ctl_read_unlock(rq->g);
        if (!known) {
            api_error(rq, GP_ENOENT, "job %s: not found", rq->params[0]);
        } else {
            api_error(rq, GP_EPERM,
                      "proxy: only a user token of the job's tenant opens it (role %s does not: "
                      "a notebook or service is its tenant's alone)",
                      ctl_role_name(rq->who.role));
        }
        return;
    }
    ctl_read_lock(rq->g);
    ctl_job *j = ctl_job_find(&rq->g->st, rq->params[0], rq->who.tenant_id);
    int64_t id = j ? j->id : 0;
    bool kind = j && (j->spec.job_kind == GP_JOB_NOTEBOOK || j->spec.job_kind == GP_JOB_SERVICE);
    bool suspended = j && j->state == CTL_SUSPENDED;
    ctl_read_unlock(rq->g);
    if (!j) {
        api_error(rq, GP_ENOENT, "job %s: not found", rq->params[0]);
        return;
    }
    if (!kind) {
        api_error(rq, GP_EINVAL, "job %s: a batch job has nothing to proxy", rq->params[0]);
        return;
    }
    gp_diag d;
    gp_diag_clear(&d);
    if (suspended && px_resume(rq->g, id, rq->who.tenant_id, rq->who.name, &d) != 0 &&
        d.code != GP_ESTATE) {
        api_diag(rq, &d);
        return;
    }
    char code[PX_SECRET_MAX];
    if (!rq->g->proxy ||
        ctl_proxy_code_make(rq->g->proxy, rq->who.tenant_id, id, ctl_now_ms(), code) != 0) {
        api_error(rq, GP_EUNAVAIL, "proxy: no code can be made now");
        return;
    }
    char url[200];
    snprintf(url, sizeof(url), "/v1/jobs/%lld/proxy/?gp_code=%s", (long long)id, code);
    api_reply(rq, 200,
              json_pack("{s:s, s:i, s:b}", "url", url, "expires_in_s", PX_CODE_TTL_MS / 1000,
                        "resumed", suspended));
}
