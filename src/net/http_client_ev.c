/*
 * The evhttp transport of the HTTP client (http_client_impl.h): plain http:// through libevent's
 * HTTP client, which does the protocol (request line, headers, Content-Length and chunked
 * bodies, keep-alive). What is ours: resolving the host (every address in turn while none
 * accepts the connection, as libcurl does), the deadlines of the call and of its connect phase,
 * the response size limit, and telling a failure before the connection came up (the request
 * never left: safe to send elsewhere) from one after it.
 *
 * Per-client state: one event base and at most one connection, kept between attempts while they
 * go to the same base URL and the server has not closed it (checked before each reuse, as
 * libcurl does). Single-threaded like every client (http_client.h). SIGPIPE is ignored during
 * an attempt (a server that closes while the request is written gives an error, not a signal)
 * and restored after it.
 */
#include "net/http_client_impl.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/http_struct.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define HEADERS_MAX ((ev_ssize_t)1 << 20)
#define HOST_MAX    256

typedef struct ev_conn {
    struct event_base *base;
    struct evhttp_connection *evcon; /* NULL: none open */
    char origin[GP_SERVERS_URL_MAX]; /* the base URL evcon was opened for */
} ev_conn;

/* The parts of a base URL "http://authority[/prefix]". */
typedef struct target {
    char authority[HOST_MAX]; /* as written: the Host header */
    char host[HOST_MAX];      /* without IPv6 brackets */
    char port[8];
    const char *prefix; /* "" or "/prefix", in the base string */
} target;

/* One attempt's progress, written by the callbacks. */
typedef struct attempt_state {
    struct evhttp_request *req; /* NULL once libevent has freed it */
    int done;
    int connected;     /* the connection came up (closecb, or an answer) */
    int err;           /* an evhttp_request_error + 1, or 0 */
    int sys_errno;     /* errno when the failure was reported */
    int timed_out;     /* 1: the whole call's deadline, 2: the connect phase's */
    gp_http_resp *out; /* the answer, filled by on_done */
    const char *base;
    int oom;
    int server_closes; /* the answer ends the connection (HTTP/1.0, Connection: close) */
} attempt_state;

static int parse_target(const char *base, target *t)
{
    const char *a = base + strlen("http://");
    size_t n = strcspn(a, "/");
    if (n == 0 || n >= sizeof(t->authority)) {
        return -1;
    }
    memcpy(t->authority, a, n);
    t->authority[n] = '\0';
    t->prefix = a + n;
    const char *colon = strrchr(t->authority, ':');
    const char *close = strrchr(t->authority, ']');
    size_t hl = colon && (!close || colon > close) ? (size_t)(colon - t->authority) : n;
    snprintf(t->port, sizeof(t->port), "%s", hl < n ? colon + 1 : "80");
    if (t->authority[0] == '[' && hl >= 2 && t->authority[hl - 1] == ']') {
        memcpy(t->host, t->authority + 1, hl - 2);
        t->host[hl - 2] = '\0';
    } else {
        memcpy(t->host, t->authority, hl);
        t->host[hl] = '\0';
    }
    return t->host[0] && t->port[0] ? 0 : -1;
}

static int method_type(const char *m, enum evhttp_cmd_type *out)
{
    static const struct {
        const char *name;
        enum evhttp_cmd_type type;
    } map[] = {{"GET", EVHTTP_REQ_GET},       {"POST", EVHTTP_REQ_POST},
               {"HEAD", EVHTTP_REQ_HEAD},     {"PUT", EVHTTP_REQ_PUT},
               {"DELETE", EVHTTP_REQ_DELETE}, {"OPTIONS", EVHTTP_REQ_OPTIONS},
               {"PATCH", EVHTTP_REQ_PATCH}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (strcmp(m, map[i].name) == 0) {
            *out = map[i].type;
            return 0;
        }
    }
    return -1;
}

int gp__http_ev_handles(const char *base, const char *method)
{
    enum evhttp_cmd_type type;
    return strncasecmp(base, "http://", 7) == 0 && method_type(method, &type) == 0;
}

static void close_evcon(ev_conn *c)
{
    if (c->evcon) {
        evhttp_connection_free(c->evcon);
        c->evcon = NULL;
    }
    c->origin[0] = '\0';
}

/* Whether the open connection can take another request: still connected, and nothing to read
 * (a server that closed it, or sent what nobody asked for, makes it readable). */
static int evcon_alive(struct evhttp_connection *evcon)
{
    evutil_socket_t fd = bufferevent_getfd(evhttp_connection_get_bufferevent(evcon));
    if (fd < 0) {
        return 0;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 0;
}

static void on_close(struct evhttp_connection *evcon, void *arg)
{
    (void)evcon;
    attempt_state *st = arg;
    st->connected = 1;
}

static void on_error(enum evhttp_request_error err, void *arg)
{
    attempt_state *st = arg;
    st->sys_errno = errno;
    st->err = (int)err + 1;
    st->req = NULL;
    st->done = 1;
}

/* The absolute form of a Location header, resolved against the base URL's origin. */
static char *absolute_location(const char *base, const char *loc)
{
    if (strncasecmp(loc, "http://", 7) == 0 || strncasecmp(loc, "https://", 8) == 0) {
        return strdup(loc);
    }
    size_t origin = strlen("http://") + strcspn(base + strlen("http://"), "/");
    const char *sep = loc[0] == '/' ? "" : "/";
    size_t n = origin + strlen(sep) + strlen(loc) + 1;
    char *s = malloc(n);
    if (s) {
        snprintf(s, n, "%.*s%s%s", (int)origin, base, sep, loc);
    }
    return s;
}

static void on_done(struct evhttp_request *req, void *arg)
{
    attempt_state *st = arg;
    int code = req ? evhttp_request_get_response_code(req) : 0;
    st->done = 1;
    st->req = NULL;
    if (!req || code == 0) {
        if (!st->err) {
            /* Called back without an error: libevent 2.1 ends a request so only when the
             * connect was refused (its evhttp_connection_cb tests errno for ECONNREFUSED, then
             * closes the socket, which overwrites errno); any other connect failure reaches
             * on_error first with errno restored. */
            st->sys_errno = ECONNREFUSED;
            st->err = (int)EVREQ_HTTP_EOF + 1;
        }
        return;
    }
    st->connected = 1;
    /* libevent 2.1 keeps a connection the server is about to close after an HTTP/1.0 answer
     * without keep-alive: it must not be reused. */
    const char *conn = evhttp_find_header(evhttp_request_get_input_headers(req), "Connection");
    st->server_closes = conn ? strcasecmp(conn, "close") == 0
                             : req->major < 1 || (req->major == 1 && req->minor < 1);
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    const char *loc = evhttp_find_header(evhttp_request_get_input_headers(req), "Location");
    gp_http_resp *out = st->out;
    out->status = code;
    out->body = malloc(len + 1);
    if (!out->body ||
        (code / 100 == 3 && loc && !(out->location = absolute_location(st->base, loc)))) {
        st->oom = 1;
        return;
    }
    evbuffer_remove(in, out->body, len);
    out->body[len] = '\0';
    out->len = len;
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    attempt_state *st = arg;
    if (st->req) {
        st->timed_out = 1;
        evhttp_cancel_request(st->req);
        st->req = NULL;
        st->done = 1;
    }
}

/* The connect phase's deadline: cancels the request while its connection is not up yet. */
static void on_connect_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    attempt_state *st = arg;
    if (!st->req || st->connected) {
        return;
    }
    struct evhttp_connection *evcon = evhttp_request_get_connection(st->req);
    evutil_socket_t s = evcon ? bufferevent_getfd(evhttp_connection_get_bufferevent(evcon)) : -1;
    struct sockaddr_storage peer;
    socklen_t len = sizeof(peer);
    if (s >= 0 && getpeername(s, (struct sockaddr *)&peer, &len) == 0) {
        st->connected = 1;
        return;
    }
    st->timed_out = 2;
    evhttp_cancel_request(st->req);
    st->req = NULL;
    st->done = 1;
}

static int add_headers(struct evhttp_request *req, const target *t, const gp_http_req *rq)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    char name[128], len[32];
    if (evhttp_add_header(h, "Host", t->authority) < 0) {
        return -1;
    }
    for (size_t i = 0; rq->headers && rq->headers[i]; i++) {
        const char *line = rq->headers[i], *colon = strchr(line, ':');
        const char *value = colon + 1 + strspn(colon + 1, " \t");
        if ((size_t)(colon - line) >= sizeof(name)) {
            return -1;
        }
        if (!*value) { /* "Name:" sends no such header, as with libcurl */
            continue;
        }
        snprintf(name, sizeof(name), "%.*s", (int)(colon - line), line);
        if (evhttp_add_header(h, name, value) < 0) {
            return -1;
        }
    }
    int sends_body = rq->body || strcmp(rq->method, "POST") == 0 ||
                     strcmp(rq->method, "PUT") == 0 || strcmp(rq->method, "PATCH") == 0;
    if (sends_body) {
        snprintf(len, sizeof(len), "%zu", rq->body ? rq->len : 0);
        if (evhttp_add_header(h, "Content-Length", len) < 0 ||
            (rq->body && evbuffer_add(evhttp_request_get_output_buffer(req), rq->body, rq->len))) {
            return -1;
        }
    }
    return 0;
}

static struct evhttp_connection *open_evcon(ev_conn *c, const struct addrinfo *ai,
                                            const gp_http_req *rq)
{
    char addr[64], port[16]; /* numeric: an IPv6 address at most */
    if (getnameinfo(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        return NULL;
    }
    struct evhttp_connection *evcon =
        evhttp_connection_base_new(c->base, NULL, addr, (unsigned short)atoi(port));
    if (!evcon) {
        return NULL;
    }
    /* libevent's own inactivity timeout (50 s unless set) must not cut a call shorter than
     * ours; the deadlines are the timers of run_request. */
    struct timeval tv = {rq->timeout_ms > 0 ? rq->timeout_ms / 1000 + 1 : 86400 * 365, 0};
    evhttp_connection_set_timeout_tv(evcon, &tv);
    evhttp_connection_set_retries(evcon, 0);
    evhttp_connection_set_max_body_size(evcon, (ev_ssize_t)GP_HTTP_RESP_MAX);
    evhttp_connection_set_max_headers_size(evcon, HEADERS_MAX);
    evhttp_connection_set_flags(evcon, EVHTTP_CON_READ_ON_WRITE_ERROR);
    return evcon;
}

static struct event *start_timer(struct event_base *base, long ms, event_callback_fn fn,
                                 attempt_state *st)
{
    if (ms <= 0) {
        return NULL;
    }
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    struct event *ev = evtimer_new(base, fn, st);
    if (ev && evtimer_add(ev, &tv) < 0) {
        event_free(ev);
        ev = NULL;
    }
    return ev;
}

/* Sends the request on c->evcon (connecting it when it is not) and runs the event loop until
 * the answer, a failure or a deadline. 0 with st filled, or GP_ENOMEM. */
static int run_request(ev_conn *c, const target *t, const char *uri, const gp_http_req *rq,
                       attempt_state *st)
{
    enum evhttp_cmd_type type = EVHTTP_REQ_GET;
    method_type(rq->method, &type);
    struct evhttp_request *req = evhttp_request_new(on_done, st);
    if (!req) {
        return GP_ENOMEM;
    }
    evhttp_request_set_error_cb(req, on_error);
    if (add_headers(req, t, rq) < 0) {
        evhttp_request_free(req);
        return GP_ENOMEM;
    }
    st->req = req;
    evhttp_connection_set_closecb(c->evcon, on_close, st);
    struct event *deadline = start_timer(c->base, rq->timeout_ms, on_deadline, st);
    struct event *connect_deadline = start_timer(c->base, rq->connect_ms, on_connect_deadline, st);
    int rc = 0;
    if (evhttp_make_request(c->evcon, req, type, uri) != 0) {
        if (!st->done) { /* not queued, never called back: still ours */
            evhttp_request_free(req);
            st->req = NULL;
            st->done = 1;
            st->err = (int)EVREQ_HTTP_EOF + 1;
            st->sys_errno = errno;
        }
    }
    while (!st->done) {
        if (event_base_loop(c->base, EVLOOP_ONCE) != 0) { /* nothing left to wait for */
            st->done = 1;
            st->err = (int)EVREQ_HTTP_BUFFER_ERROR + 1;
        }
    }
    if (st->req) {
        evhttp_cancel_request(st->req);
        st->req = NULL;
    }
    if (c->evcon) {
        evhttp_connection_set_closecb(c->evcon, NULL, NULL);
    }
    if (deadline) {
        event_free(deadline);
    }
    if (connect_deadline) {
        event_free(connect_deadline);
    }
    return rc;
}

/* The diagnosis of a failed attempt (st->err or st->timed_out set); its outcome in out. */
static int failure(const attempt_state *st, const char *base, const gp_http_req *rq,
                   const char *url, gp_http_resp *out, gp_diag *d)
{
    int err = st->err - 1;
    out->outcome = st->connected ? GP_SERVERS_MAYBE_SENT : GP_SERVERS_UNSENT;
    if (st->timed_out == 2) {
        return gp_diag_set(d, GP_EIO, "%s %s: Connection timed out after %ld milliseconds",
                           rq->method, url, rq->connect_ms);
    }
    if (st->timed_out || (st->err && err == EVREQ_HTTP_TIMEOUT)) {
        return gp_diag_set(d, GP_EIO, "%s %s: Operation timed out after %ld milliseconds",
                           rq->method, url, rq->timeout_ms);
    }
    if (!st->connected) {
        int e = st->sys_errno;
        return gp_diag_set(d, GP_EIO, "connect to %s: %s", base,
                           e && e != EAGAIN && e != EINPROGRESS ? strerror(e)
                                                                : "Could not connect");
    }
    if (err == EVREQ_HTTP_DATA_TOO_LONG) {
        out->outcome = GP_SERVERS_ANSWER;
        return gp_diag_set(d, GP_EIO, "%s %s: response larger than %zu bytes", rq->method, url,
                           GP_HTTP_RESP_MAX);
    }
    return gp_diag_set(d, GP_EIO, "%s %s: %s", rq->method, url,
                       err == EVREQ_HTTP_INVALID_HEADER ? "invalid HTTP answer"
                       : err == EVREQ_HTTP_EOF
                           ? "the server closed the connection without an answer"
                           : "connection error");
}

/* Whether an attempt on a kept connection ended with it closed and no answer at all. */
static int reused_and_lost(const attempt_state *st)
{
    return !st->timed_out && !st->oom && st->err == (int)EVREQ_HTTP_EOF + 1;
}

static ev_conn *conn_new(void)
{
    ev_conn *c = calloc(1, sizeof(*c));
    struct event_config *cfg = event_config_new();
    if (c && cfg) {
        /* One thread, and no EVENT_* variables changing the backend under the client. */
        event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK | EVENT_BASE_FLAG_IGNORE_ENV);
        c->base = event_base_new_with_config(cfg);
    }
    if (cfg) {
        event_config_free(cfg);
    }
    if (c && !c->base) {
        free(c);
        c = NULL;
    }
    return c;
}

/* Opens a connection to one address after another until one comes up (or a failure other than
 * the connection's), sending the request on it. */
static int connect_and_send(ev_conn *c, const char *base, const target *t, const char *uri,
                            const gp_http_req *rq, attempt_state *st, gp_diag *d)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(t->host, t->port, &hints, &res);
    if (gai != 0) {
        st->out->outcome = GP_SERVERS_UNSENT;
        return gp_diag_set(d, GP_EIO, "%s %s%s: Could not resolve host: %s (%s)", rq->method, base,
                           rq->path, t->host, gai_strerror(gai));
    }
    int rc = 0;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        memset(st, 0, offsetof(attempt_state, out));
        if (!(c->evcon = open_evcon(c, ai, rq))) {
            rc = GP_ENOMEM;
            break;
        }
        snprintf(c->origin, sizeof(c->origin), "%s", base);
        if ((rc = run_request(c, t, uri, rq, st)) < 0 || st->connected || st->timed_out) {
            break;
        }
        close_evcon(c); /* never came up: the next address */
    }
    freeaddrinfo(res);
    return rc < 0 ? gp_diag_set(d, rc, "http call: out of memory") : 1;
}

static int ev_attempt(void **state, const char *base, const gp_http_req *rq, gp_http_resp *out,
                      gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    target t;
    if (parse_target(base, &t) < 0) {
        return gp_diag_set(d, GP_EINVAL, "url %s: bad host or port", base);
    }
    if (!*state && !(*state = conn_new())) {
        return gp_diag_set(d, GP_ENOMEM, "http client: cannot start libevent");
    }
    ev_conn *c = *state;
    size_t n = strlen(t.prefix) + strlen(rq->path) + 1, un = strlen(base) + strlen(rq->path) + 1;
    char *uri = malloc(n), *url = malloc(un);
    if (!uri || !url) {
        free(uri);
        free(url);
        return gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    }
    snprintf(uri, n, "%s%s", t.prefix, rq->path);
    snprintf(url, un, "%s%s", base, rq->path);
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);

    attempt_state st = {.out = out, .base = base};
    int rc = 0;
    if (c->evcon && (strcmp(c->origin, base) != 0 || !evcon_alive(c->evcon))) {
        close_evcon(c);
    }
    if (c->evcon) {
        rc = run_request(c, &t, uri, rq, &st);
        rc = rc < 0 ? gp_diag_set(d, rc, "http call: out of memory") : 1;
        if (rc > 0 && reused_and_lost(&st)) {
            /* The server closed the kept connection as the request went out, before any
             * answer: sent again once on a new connection, as libcurl does. */
            close_evcon(c);
            memset(&st, 0, offsetof(attempt_state, out));
        }
    }
    if (!c->evcon) {
        rc = connect_and_send(c, base, &t, uri, rq, &st, d);
    }
    if (rc > 0 && st.oom) {
        rc = gp_diag_set(d, GP_ENOMEM, "http call: out of memory");
    } else if (rc > 0 && (st.err || st.timed_out)) {
        rc = failure(&st, base, rq, url, out, d);
    } else if (rc > 0) {
        rc = 0;
    }
    if (rc < 0 || st.server_closes) {
        close_evcon(c);
    }
    if (rc < 0) {
        free(out->body);
        free(out->location);
        out->body = out->location = NULL;
    }
    sigaction(SIGPIPE, &old, NULL);
    free(uri);
    free(url);
    return rc;
}

static void ev_close(void *state)
{
    ev_conn *c = state;
    if (c) {
        close_evcon(c);
        event_base_free(c->base);
        free(c);
    }
}

const gp_http_transport gp__http_ev = {"evhttp", 1, ev_attempt, ev_close};
