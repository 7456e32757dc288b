/*
 * HTTP client over libcurl. Each call resets the easy handle's options (curl_easy_reset keeps
 * live connections, the DNS cache and TLS sessions) and sets them all again, so nothing from one
 * call's method or body leaks into the next while the connection is still reused.
 */
#include "net/http_client.h"

#include "net/servers.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* A response larger than this is refused rather than exhausting memory. */
#define RESP_MAX ((size_t)1 << 30)

struct gp_http_client {
    CURL *h;
    char *base;    /* without trailing '/' */
    char *auth;    /* "Authorization: Bearer TOKEN" or NULL */
    char *ca_file; /* or NULL: the system's store */
    long timeout_ms, connect_ms;
    int nservers;       /* 0: the one base URL; else a server list with failover */
    gp_servers servers; /* with nservers */
    gp_failover fo;     /* where the next call starts, kept between calls */
};

typedef struct resp_buf {
    char *data;
    size_t len, cap;
    int too_big;
} resp_buf;

int gp_http_client_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : GP_EIO;
}

void gp_http_client_global_cleanup(void)
{
    curl_global_cleanup();
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
    c->h = curl_easy_init();
    if (token) {
        size_t n = strlen(token) + sizeof("Authorization: Bearer ");
        c->auth = malloc(n);
        if (c->auth) {
            snprintf(c->auth, n, "Authorization: Bearer %s", token);
        }
    }
    if (!c->base || !c->h || (token && !c->auth)) {
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
    if (c->h) {
        curl_easy_cleanup(c->h);
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

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    resp_buf *b = userdata;
    size_t n = size * nmemb;
    if (n > RESP_MAX - b->len) {
        b->too_big = 1;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        char *p = realloc(b->data, cap);
        if (!p) {
            return 0;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

/* Builds the header list; NULL with *rc set on failure. */
static struct curl_slist *build_headers(const gp_http_client *c, const char *body,
                                        const char *const *extra, int *rc)
{
    struct curl_slist *list = NULL, *next;
    int has_type = 0;
    *rc = 0;
    for (size_t i = 0; extra && extra[i]; i++) {
        if (strpbrk(extra[i], "\r\n") || !strchr(extra[i], ':')) {
            *rc = GP_EINVAL;
            break;
        }
        has_type |= strncasecmp(extra[i], "Content-Type:", 13) == 0;
        if (!(next = curl_slist_append(list, extra[i]))) {
            *rc = GP_ENOMEM;
            break;
        }
        list = next;
    }
    /* "Expect:" stops curl from waiting for 100 Continue before larger bodies: a round trip. */
    const char *fixed[] = {"Expect:", c->auth,
                           body && !has_type ? "Content-Type: application/json" : NULL};
    for (size_t i = 0; *rc == 0 && i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (fixed[i] && !(next = curl_slist_append(list, fixed[i]))) {
            *rc = GP_ENOMEM;
        } else if (fixed[i]) {
            list = next;
        }
    }
    if (*rc != 0) {
        curl_slist_free_all(list);
        return NULL;
    }
    return list;
}

static void set_method(CURL *h, const char *method, const char *body, size_t len)
{
    int sends_body = body || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
                     strcmp(method, "PATCH") == 0;
    if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (sends_body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
        if (strcmp(method, "POST") != 0) {
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        }
    } else if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
}

static int transport_error(const gp_http_client *c, const char *base, CURLcode cc,
                           const char *method, const char *url, const char *errbuf,
                           const resp_buf *b, gp_diag *d)
{
    if (cc == CURLE_COULDNT_CONNECT) {
        long os_errno = 0;
        curl_easy_getinfo(c->h, CURLINFO_OS_ERRNO, &os_errno);
        return gp_diag_set(d, GP_EIO, "connect to %s: %s", base,
                           os_errno ? strerror((int)os_errno)
                                    : (errbuf[0] ? errbuf : curl_easy_strerror(cc)));
    }
    if (b->too_big) {
        return gp_diag_set(d, GP_EIO, "%s %s: response larger than %zu bytes", method, url,
                           RESP_MAX);
    }
    return gp_diag_set(d, GP_EIO, "%s %s: %s", method, url,
                       errbuf[0] ? errbuf : curl_easy_strerror(cc));
}

/* Whether a failed transfer may have reached the server's handler: nothing of the request was
 * sent when the connection (or its TLS handshake) never came up. */
static gp_servers_outcome failure_outcome(CURL *h, CURLcode cc)
{
    long sent = 0;
    if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
        cc == CURLE_SSL_CONNECT_ERROR || cc == CURLE_PEER_FAILED_VERIFICATION) {
        return GP_SERVERS_UNSENT;
    }
    curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
    return sent > 0 ? GP_SERVERS_MAYBE_SENT : GP_SERVERS_UNSENT;
}

/* One attempt. The request of the call: method, path, body, headers. */
typedef struct call_req {
    const char *method, *path;
    const char *body;
    size_t len;
    struct curl_slist *headers;
    const char *const *extra; /* the caller's, to tell whether a retry is safe */
} call_req;

/* The answer of one attempt: status, body and Location (both malloc'd), or a transport failure
 * (rc GP_EIO with d set, *outcome telling whether the request may have been sent). */
typedef struct call_resp {
    int status;
    resp_buf b;
    char *location;
    gp_servers_outcome outcome;
} call_resp;

static int attempt(gp_http_client *c, const char *base, const call_req *rq, call_resp *out,
                   gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    size_t n = strlen(base) + strlen(rq->path) + 1;
    char *url = malloc(n);
    if (!url) {
        return gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    snprintf(url, n, "%s%s", base, rq->path);
    char errbuf[CURL_ERROR_SIZE] = "";
    CURL *h = c->h;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &out->b);
    if (c->ca_file) {
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    }
    set_method(h, rq->method, rq->body, rq->len);

    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    char *loc = NULL;
    if (cc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc);
    }
    /* The handle must not keep pointers to what is freed by the caller. */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    int rc = 0;
    if (cc != CURLE_OK) {
        out->outcome = out->b.too_big ? GP_SERVERS_ANSWER : failure_outcome(h, cc);
        rc = transport_error(c, base, cc, rq->method, url, errbuf, &out->b, d);
        free(out->b.data);
        out->b.data = NULL;
    } else if ((!out->b.data && !(out->b.data = calloc(1, 1))) ||
               (loc && !(out->location = strdup(loc)))) {
        free(out->b.data);
        out->b.data = NULL;
        rc = gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    out->status = (int)code;
    free(url);
    return rc;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* The attempts of one call over the server list (servers.h); the last attempt's result is the
 * call's. */
static int call_servers(gp_http_client *c, const call_req *rq, call_resp *out, gp_diag *d)
{
    int safe = gp_servers_request_safe(rq->method, rq->extra);
    gp_failover_begin(&c->fo);
    for (;;) {
        int rc = attempt(c, c->servers.url[c->fo.current], rq, out, d);
        if (rc < 0 && rc != GP_EIO) {
            return rc;
        }
        int hint = -1;
        gp_servers_outcome o = rc < 0 ? out->outcome
                                      : gp_servers_classify(&c->servers, out->status, out->location,
                                                            out->b.data, out->b.len, &hint);
        int wait = gp_failover_after(&c->fo, o, hint, safe);
        if (wait < 0) {
            return rc;
        }
        free(out->b.data);
        free(out->location);
        out->b.data = out->location = NULL;
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
    int rc = 0;
    call_req rq = {method, path_and_query, body, len, NULL, extra_headers};
    rq.headers = build_headers(c, body, extra_headers, &rc);
    if (rc != 0) {
        return rc == GP_EINVAL ? gp_diag_set(d, rc, "http call: bad extra header")
                               : gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    call_resp r;
    rc = c->nservers ? call_servers(c, &rq, &r, d) : attempt(c, c->base, &rq, &r, d);
    curl_slist_free_all(rq.headers);
    free(r.location);
    if (rc < 0) {
        return rc;
    }
    *status = r.status;
    *resp_body = r.b.data;
    if (resp_len) {
        *resp_len = r.b.len;
    }
    return 0;
}
