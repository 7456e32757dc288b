/*
 * HTTP client (http_client.h): arguments, headers and failover over a server list. Each attempt
 * goes through the transport gp__http_transport_for() picks for its base URL
 * (http_client_impl.h); every transport keeps its own per-client state (a connection) between
 * calls, so a connection is reused while the calls go to the same server.
 */
#include "net/http_client.h"

#include "net/http_client_impl.h"
#include "net/servers.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Headers a request carries besides the caller's: Authorization, Content-Type. */
#define FIXED_HEADERS 2

struct gp_http_client {
    void *conn[GP_HTTP_TRANSPORTS]; /* each transport's state, made by its first attempt */
    const gp_http_transport *used[GP_HTTP_TRANSPORTS]; /* who made conn[i], to close it */
    char *base;                                        /* without trailing '/' */
    char *auth;                                        /* "Authorization: Bearer TOKEN" or NULL */
    char *ca_file;                                     /* or NULL: the system's store */
    long timeout_ms, connect_ms;
    int nservers;       /* 0: the one base URL; else a server list with failover */
    gp_servers servers; /* with nservers */
    gp_failover fo;     /* where the next call starts, kept between calls */
};

int gp_http_client_global_init(void)
{
    return gp__http_transports_init();
}

void gp_http_client_global_cleanup(void)
{
    gp__http_transports_cleanup();
}

int gp_http_client_new(const char *base_url, const char *token, gp_http_client **out, gp_diag *d)
{
    *out = NULL;
    if (!base_url ||
        (strncasecmp(base_url, "http://", 7) != 0 && strncasecmp(base_url, "https://", 8) != 0)) {
        return gp_diag_set(d, GP_EINVAL, "url %s: must start with http:// or https://",
                           base_url ? base_url : "(null)");
    }
    if (token && (!*token || strpbrk(token, "\r\n"))) {
        return gp_diag_set(d, GP_EINVAL, "token: must be non-empty, one line");
    }
    gp_http_client *c = calloc(1, sizeof(*c));
    if (!c) {
        return gp_diag_set(d, GP_ENOMEM, "http client: out of memory");
    }
    c->timeout_ms = 30000;
    c->connect_ms = 10000;
    c->base = strdup(base_url);
    if (token) {
        size_t n = strlen(token) + sizeof("Authorization: Bearer ");
        c->auth = malloc(n);
        if (c->auth) {
            snprintf(c->auth, n, "Authorization: Bearer %s", token);
        }
    }
    if (!c->base || (token && !c->auth)) {
        gp_http_client_free(c);
        return gp_diag_set(d, GP_ENOMEM, "http client: out of memory");
    }
    size_t n = strlen(c->base);
    while (n > 0 && c->base[n - 1] == '/') {
        c->base[--n] = '\0';
    }
    *out = c;
    return 0;
}

int gp_http_client_new_servers(const char *servers, const char *token, gp_http_client **out,
                               gp_diag *d)
{
    gp_servers list;
    *out = NULL;
    int rc = gp_servers_parse(servers, &list, d);
    if (rc < 0 || (rc = gp_http_client_new(list.url[0], token, out, d)) < 0) {
        return rc;
    }
    (*out)->servers = list;
    (*out)->nservers = list.n;
    gp_failover_init(&(*out)->fo, list.n);
    return 0;
}

void gp_http_client_set_failover(gp_http_client *c, int rounds, int backoff_ms)
{
    c->fo.rounds = rounds < 1 ? 1 : rounds;
    c->fo.backoff_ms = backoff_ms < 0 ? 0 : backoff_ms;
}

const char *gp_http_client_server(const gp_http_client *c)
{
    return c->nservers ? c->servers.url[c->fo.current] : c->base;
}

void gp_http_client_free(gp_http_client *c)
{
    if (!c) {
        return;
    }
    for (int i = 0; i < GP_HTTP_TRANSPORTS; i++) {
        if (c->used[i]) {
            c->used[i]->close(c->conn[i]);
        }
    }
    free(c->base);
    free(c->auth);
    free(c->ca_file);
    free(c);
}

int gp_http_client_set_ca_file(gp_http_client *c, const char *path)
{
    char *p = NULL;
    if (path && !(p = strdup(path))) {
        return GP_ENOMEM;
    }
    free(c->ca_file);
    c->ca_file = p;
    return 0;
}

void gp_http_client_set_timeout(gp_http_client *c, long timeout_ms, long connect_ms)
{
    c->timeout_ms = timeout_ms < 0 ? 0 : timeout_ms;
    c->connect_ms = connect_ms < 0 ? 0 : connect_ms;
}

/* The headers of a request: the caller's (checked), then Authorization and Content-Type (JSON
 * with a body unless the caller gave one). *out is malloc'd (the strings are borrowed). */
static int build_headers(const gp_http_client *c, const char *body, const char *const *extra,
                         const char ***out)
{
    size_t n = 0;
    int has_type = 0;
    for (; extra && extra[n]; n++) {
        if (strpbrk(extra[n], "\r\n") || !strchr(extra[n], ':')) {
            return GP_EINVAL;
        }
        has_type |= strncasecmp(extra[n], "Content-Type:", 13) == 0;
    }
    const char **h = malloc((n + FIXED_HEADERS + 1) * sizeof(*h));
    if (!h) {
        return GP_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        h[k++] = extra[i];
    }
    if (c->auth) {
        h[k++] = c->auth;
    }
    if (body && !has_type) {
        h[k++] = "Content-Type: application/json";
    }
    h[k] = NULL;
    *out = h;
    return 0;
}

static int attempt(gp_http_client *c, const char *base, const gp_http_req *rq, gp_http_resp *out,
                   gp_diag *d)
{
    const gp_http_transport *t = gp__http_transport_for(base, rq->method);
    c->used[t->slot] = t;
    return t->attempt(&c->conn[t->slot], base, rq, out, d);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* The attempts of one call over the server list (servers.h); the last attempt's result is the
 * call's. */
static int call_servers(gp_http_client *c, const gp_http_req *rq, const char *const *extra,
                        gp_http_resp *out, gp_diag *d)
{
    int safe = gp_servers_request_safe(rq->method, extra);
    gp_failover_begin(&c->fo);
    for (;;) {
        int rc = attempt(c, c->servers.url[c->fo.current], rq, out, d);
        if (rc < 0 && rc != GP_EIO) {
            return rc;
        }
        int hint = -1;
        gp_servers_outcome o = rc < 0 ? out->outcome
                                      : gp_servers_classify(&c->servers, out->status, out->location,
                                                            out->body, out->len, &hint);
        int wait = gp_failover_after(&c->fo, o, hint, safe);
        if (wait < 0) {
            return rc;
        }
        free(out->body);
        free(out->location);
        out->body = out->location = NULL;
        gp_diag_clear(d);
        if (wait > 0) {
            sleep_ms(wait);
        }
    }
}

int gp_http_call(gp_http_client *c, const char *method, const char *path_and_query,
                 const char *body, size_t len, const char *const *extra_headers, int *status,
                 char **resp_body, size_t *resp_len, gp_diag *d)
{
    *resp_body = NULL;
    if (!method || !*method || strpbrk(method, " \r\n") || !path_and_query ||
        strpbrk(path_and_query, " \r\n")) {
        return gp_diag_set(d, GP_EINVAL, "http call: bad method or path");
    }
    const char **headers = NULL;
    int rc = build_headers(c, body, extra_headers, &headers);
    if (rc != 0) {
        return rc == GP_EINVAL ? gp_diag_set(d, rc, "http call: bad extra header")
                               : gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    gp_http_req rq = {method,  path_and_query, body,          len,
                      headers, c->timeout_ms,  c->connect_ms, c->ca_file};
    gp_http_resp r = {0};
    rc = c->nservers ? call_servers(c, &rq, extra_headers, &r, d) : attempt(c, c->base, &rq, &r, d);
    free(headers);
    free(r.location);
    if (rc < 0) {
        return rc;
    }
    *status = r.status;
    *resp_body = r.body;
    if (resp_len) {
        *resp_len = r.len;
    }
    return 0;
}
