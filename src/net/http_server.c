/*
 * HTTP server over libmicrohttpd (MHD). We bind and listen ourselves, so that a failure names
 * the address and the errno (MHD only says that it failed), then hand the socket to MHD, which
 * runs a pool of epoll threads over it and closes it when stopped.
 *
 * MHD calls the access handler several times per request: first with the headers (where an
 * oversized Content-Length is answered at once), then once per piece of body, then once with no
 * data when the request is complete, which is when our handler runs. Per-request state lives in
 * MHD's con_cls and is freed by the completion callback, whatever way the request ended.
 *
 * Deferred answers: after a handler deferred, the access handler suspends the connection (MHD
 * allows that only there) unless the answer came already. gp_http_deferred_finish stores the
 * answer and resumes the connection; MHD then calls the access handler once more, which sends
 * it. A handle (gp_http_deferred) has two holders, the caller until it finishes and the
 * connection until MHD completes it, and is freed by the last one; every field of it is guarded
 * by the server's dlock. The server's memory likewise outlives gp_http_server_stop while handles
 * are held. MHD must not be stopped with a suspended connection, so stop answers every pending
 * handle and resumes its connection first, and waits for resumes other threads are making.
 *
 * Streams and upgrades: a streamed response is MHD's content-reader response over the caller's
 * source; a reader with nothing yet suspends the connection and the source's wake resumes it
 * (the stream's fields under dlock). An upgrade is MHD's upgrade response; the request's state
 * remembers it, so that a taker whose upgrade never happens is told so when the request
 * completes. MHD takes its own lock in suspend and resume and holds it when it calls
 * on_completed (which takes dlock), so suspensions and resumes are never made under dlock: a
 * wake or an answer that comes while a connection is being suspended is left to the thread
 * suspending it, which resumes it at once.
 *
 * Slow clients: every connection is tracked from MHD's connection-start notice to its
 * connection-closed notice (the track is the connection's socket context). A track holds the
 * deadline by which the connection's current request must be in: set at the start and again
 * after each answer, cleared when a request is complete (or answered early). A watchdog thread
 * shuts down the socket of a track past its deadline; MHD then reads the end of the stream and
 * closes the connection itself, so the socket is never closed by us. MHD gives the closed notice
 * before it closes the socket, and the notice and the watchdog both hold tlock, so the watchdog
 * never touches a socket number that has been closed and reused.
 */
#include "net/http_server.h"
#include "net/http_accept.h"
#include "base/clock.h"

#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TLS_FILE_MAX (1 << 20)

#include "net/http_server_impl.h"

/* ---- Responses ---------------------------------------------------------------------------- */

static void release_extras(gp_http_response *resp);

void gp_http_response_set_body(gp_http_response *resp, int status, const char *content_type,
                               char *body, size_t len)
{
    release_extras(resp);
    if (resp->body != body) {
        free(resp->body);
    }
    resp->status = status;
    resp->body = body;
    resp->body_len = body ? len : 0;
    if (content_type) {
        resp->content_type = content_type;
    }
}

int gp_http_response_add_header(gp_http_response *resp, const char *name, const char *value)
{
    if (!name || !*name || !value || strpbrk(name, "\r\n:") || strpbrk(value, "\r\n")) {
        return GP_EINVAL;
    }
    if (resp->nheaders >= GP_HTTP_MAX_HEADERS) {
        return GP_ENOSPC;
    }
    char *n = strdup(name);
    char *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return GP_ENOMEM;
    }
    resp->header_name[resp->nheaders] = n;
    resp->header_value[resp->nheaders] = v;
    resp->nheaders++;
    return 0;
}

static int respond_error_msg(gp_http_response *resp, int code, const char *msg)
{
    int status = gp_error_http_status(code);
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", gp_strerror_name(code), "message",
                          msg ? msg : "");
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!text) {
        gp_http_response_set_body(resp, status, NULL, NULL, 0);
        return GP_ENOMEM;
    }
    /* jansson allocates with malloc unless told otherwise (we never do), so free() matches. */
    gp_http_response_set_body(resp, status, "application/json", text, strlen(text));
    return 0;
}

int gp_http_respond_error(gp_http_response *resp, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return respond_error_msg(resp, code, msg);
}

int gp_http_respond_diag(gp_http_response *resp, const gp_diag *d)
{
    return respond_error_msg(resp, d->code ? d->code : GP_EINTERNAL,
                             d->msg[0] ? d->msg : gp_strerror(d->code));
}

static void response_fini(gp_http_response *resp)
{
    free(resp->body);
    resp->body = NULL;
    if (resp->stream_free) {
        resp->stream_free(resp->stream_ctx);
    }
    resp->stream_read = NULL;
    resp->stream_free = NULL;
    resp->stream_ctx = NULL;
    if (resp->upgrade) {
        resp->upgrade(resp->upgrade_ctx, -1, NULL, 0, NULL);
    }
    resp->upgrade = NULL;
    resp->upgrade_ctx = NULL;
    for (int i = 0; i < resp->nheaders; i++) {
        free(resp->header_name[i]);
        free(resp->header_value[i]);
    }
    resp->nheaders = 0;
}

/* Releases a response's stream and upgrade, if any, as response_fini does. */
static void release_extras(gp_http_response *resp)
{
    gp_http_response tmp = {.stream_free = resp->stream_free,
                            .stream_ctx = resp->stream_ctx,
                            .upgrade = resp->upgrade,
                            .upgrade_ctx = resp->upgrade_ctx};
    resp->stream_read = NULL;
    resp->stream_free = NULL;
    resp->stream_ctx = NULL;
    resp->upgrade = NULL;
    resp->upgrade_ctx = NULL;
    response_fini(&tmp);
}

void gp_http_response_set_stream(gp_http_response *resp, int status, const char *content_type,
                                 long long len, gp_http_stream_read read, void (*free_fn)(void *),
                                 void *ctx)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    release_extras(resp);
    resp->status = status;
    if (content_type) {
        resp->content_type = content_type;
    }
    resp->stream_read = read;
    resp->stream_free = free_fn;
    resp->stream_ctx = ctx;
    resp->stream_len = len < 0 ? -1 : len;
}

void gp_http_response_set_upgrade(gp_http_response *resp, gp_http_upgrade_fn fn, void *ctx)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    release_extras(resp);
    resp->status = 101;
    resp->upgrade = fn;
    resp->upgrade_ctx = ctx;
}

/* The MHD response for resp: a buffer, a stream or an upgrade. */
static struct MHD_Response *make_response(gp_http_server *srv, struct MHD_Connection *conn,
                                          conn_state *st, gp_http_response *resp)
{
    struct MHD_Response *r;
    if (resp->upgrade && resp->status == 101 && st) {
        return gp__http_upgrade_response(srv, st, resp);
    }
    bool streamed = resp->stream_read != NULL;
    if (streamed) {
        r = gp__http_stream_response(srv, conn, resp);
    } else if (resp->body && resp->body_len > 0) {
        r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
        if (r) {
            resp->body = NULL; /* MHD frees it with free() */
        }
    } else {
        return MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    const char *type = resp->content_type ? resp->content_type
                       : streamed || !r   ? NULL
                                          : "application/json";
    if (type && MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES) {
        GP_LOG(GP_LOG_WARN, "http", "content type refused: %s", resp->content_type);
    }
    return r;
}

/* Queues resp on conn and releases everything resp holds. st is the request's state (NULL for
 * answers made before the request was set up: they cannot be upgrades). */
static enum MHD_Result send_response(gp_http_server *srv, struct MHD_Connection *conn,
                                     conn_state *st, gp_http_response *resp)
{
    if (resp->status < 100 || resp->status > 599 || (resp->status == 101 && !resp->upgrade) ||
        (resp->upgrade && resp->status != 101)) {
        int bad = resp->status;
        response_fini(resp);
        if (bad == 0) {
            respond_error_msg(resp, GP_EINTERNAL, "handler set no status");
        } else {
            gp_http_respond_error(resp, GP_EINTERNAL, "handler set status %d", bad);
        }
    }
    struct MHD_Response *r = make_response(srv, conn, st, resp);
    if (!r) {
        response_fini(resp);
        return MHD_NO;
    }
    for (int i = 0; i < resp->nheaders; i++) {
        if (MHD_add_response_header(r, resp->header_name[i], resp->header_value[i]) != MHD_YES) {
            GP_LOG(GP_LOG_WARN, "http", "header refused: %s", resp->header_name[i]);
        }
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp->status, r);
    MHD_destroy_response(r);
    response_fini(resp);
    return ret;
}

static enum MHD_Result answer_too_big(struct MHD_Connection *conn, conn_state *st, size_t max)
{
    gp_http_response resp = {.content_type = "application/json"};
    gp_http_respond_error(&resp, GP_ETOOBIG, "request body larger than %zu bytes", max);
    st->answered = 1;
    return send_response(NULL, conn, NULL, &resp);
}

/* A large body while others fill max_large_bodies: 503, to be sent again in a moment. */
static enum MHD_Result answer_busy(struct MHD_Connection *conn, conn_state *st, size_t n)
{
    gp_http_response resp = {.content_type = "application/json"};
    gp_http_respond_error(&resp, GP_EUNAVAIL,
                          "request body of %zu bytes: too many large bodies in progress; retry", n);
    gp_http_response_add_header(&resp, "Retry-After", "1");
    st->answered = 1;
    return send_response(NULL, conn, NULL, &resp);
}

/* ---- Requests ----------------------------------------------------------------------------- */

typedef struct query_find {
    const char *name;
    size_t name_len;
    const char *value;
} query_find;

static enum MHD_Result query_iter(void *cls, enum MHD_ValueKind kind, const char *key,
                                  size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    (void)value_size;
    query_find *q = cls;
    if (key_size == q->name_len && memcmp(key, q->name, key_size) == 0) {
        q->value = value ? value : "";
        return MHD_NO; /* stop: the first one wins */
    }
    return MHD_YES;
}

const char *gp_http_request_query(const gp_http_request *req, const char *name)
{
    /* MHD_lookup_connection_value compares keys without case; parameters are case-sensitive. */
    query_find q = {name, strlen(name), NULL};
    const req_impl *ri = req->impl;
    MHD_get_connection_values_n(ri->conn, MHD_GET_ARGUMENT_KIND, query_iter, &q);
    return q.value;
}

const char *gp_http_request_header(const gp_http_request *req, const char *name)
{
    const req_impl *ri = req->impl;
    return MHD_lookup_connection_value(ri->conn, MHD_HEADER_KIND, name);
}

char *gp_http_request_take_body(const gp_http_request *req, size_t *len)
{
    const req_impl *ri = req->impl;
    char *b = ri->st->body;
    *len = b ? ri->st->len : 0;
    ri->st->body = NULL;
    ri->st->len = ri->st->cap = 0;
    return b;
}

static void remote_address(struct MHD_Connection *conn, char *buf, size_t cap)
{
    snprintf(buf, cap, "?");
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr) {
        return;
    }
    const struct sockaddr *sa = ci->client_addr;
    socklen_t len =
        sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (getnameinfo(sa, len, buf, (socklen_t)cap, NULL, 0, NI_NUMERICHOST) != 0) {
        snprintf(buf, cap, "?");
    }
}

/* Appends a piece of body, the buffer grown (doubling) to at most max + 1 bytes; 0, or -1 when
 * past max (or out of memory). */
static int append_body(conn_state *st, const char *data, size_t n, size_t max)
{
    if (n > max - st->len) {
        return -1;
    }
    if (st->len + n + 1 > st->cap) {
        size_t cap = st->cap ? st->cap : 4096;
        while (cap < st->len + n + 1) {
            cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
        }
        if (cap > max + 1) {
            cap = max + 1;
        }
        char *b = realloc(st->body, cap);
        if (!b) {
            return -1;
        }
        st->body = b;
        st->cap = cap;
    }
    memcpy(st->body + st->len, data, n);
    st->len += n;
    st->body[st->len] = '\0';
    return 0;
}

/* ---- Slow clients ------------------------------------------------------------------------ */

/* Sets the deadline of conn's track: now + timeout when `arm`, none otherwise. */
static void track_deadline(gp_http_server *srv, struct MHD_Connection *conn, bool arm)
{
    if (srv->timeout_ms <= 0) {
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_track *t = ci ? ci->socket_context : NULL;
    if (!t) {
        return;
    }
    pthread_mutex_lock(&srv->tlock);
    t->deadline_ms = arm ? gp_mono_ms() + srv->timeout_ms : 0;
    pthread_mutex_unlock(&srv->tlock);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    gp_http_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn_track *t = ci ? calloc(1, sizeof(*t)) : NULL;
        *socket_context = t;
        if (!t) {
            return; /* untracked: only MHD's idle timeout applies to it */
        }
        t->fd = ci->connect_fd;
        pthread_mutex_lock(&srv->tlock);
        t->deadline_ms = srv->timeout_ms > 0 ? gp_mono_ms() + srv->timeout_ms : 0;
        t->next = srv->tracks;
        if (srv->tracks) {
            srv->tracks->prev = t;
        }
        srv->tracks = t;
        pthread_mutex_unlock(&srv->tlock);
        return;
    }
    conn_track *t = *socket_context;
    if (!t) {
        return;
    }
    pthread_mutex_lock(&srv->tlock);
    if (t->prev) {
        t->prev->next = t->next;
    } else {
        srv->tracks = t->next;
    }
    if (t->next) {
        t->next->prev = t->prev;
    }
    pthread_mutex_unlock(&srv->tlock);
    free(t);
    *socket_context = NULL;
}

static void log_cut(int fd, int64_t timeout_ms)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char addr[64] = "?";
    if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0) {
        getnameinfo((struct sockaddr *)&ss, len, addr, sizeof(addr), NULL, 0, NI_NUMERICHOST);
    }
    GP_LOG(GP_LOG_WARN, "http", "slow client closed: peer=%s no whole request within %lldms", addr,
           (long long)timeout_ms);
}

/* Shuts down the connections past their deadline, a few times per timeout. */
static void *watchdog_main(void *arg)
{
    gp_http_server *srv = arg;
    int64_t tick = srv->timeout_ms / 4;
    tick = tick < 50 ? 50 : tick > 1000 ? 1000 : tick;
    pthread_mutex_lock(&srv->tlock);
    while (!srv->watch_stop) {
        int64_t now = gp_mono_ms();
        for (conn_track *t = srv->tracks; t; t = t->next) {
            if (t->deadline_ms && !t->cut && now >= t->deadline_ms) {
                log_cut(t->fd, srv->timeout_ms); /* while the peer's address can be read */
                shutdown(t->fd, SHUT_RDWR);
                t->cut = true;
            }
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        int64_t ns = until.tv_nsec + tick * 1000000;
        until.tv_sec += ns / 1000000000;
        until.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&srv->tcond, &srv->tlock, &until);
    }
    pthread_mutex_unlock(&srv->tlock);
    return NULL;
}

static void watchdog_stop(gp_http_server *srv)
{
    if (!srv->watching) {
        return;
    }
    pthread_mutex_lock(&srv->tlock);
    srv->watch_stop = true;
    pthread_cond_signal(&srv->tcond);
    pthread_mutex_unlock(&srv->tlock);
    pthread_join(srv->watchdog, NULL);
    srv->watching = false;
}

/* ---- Requests, continued ------------------------------------------------------------------ */

static enum MHD_Result answer_head_too_big(gp_http_server *srv, struct MHD_Connection *conn,
                                           conn_state *st, size_t size)
{
    gp_http_response resp = {.content_type = "application/json"};
    if (srv->max_header_setting[0]) {
        gp_http_respond_error(&resp, GP_ETOOBIG, "request headers: %zu bytes, more than %s (%zu)",
                              size, srv->max_header_setting, srv->max_header);
    } else {
        gp_http_respond_error(&resp, GP_ETOOBIG,
                              "request headers: %zu bytes, more than the %zu accepted", size,
                              srv->max_header);
    }
    resp.status = 431;
    st->answered = 1;
    return send_response(srv, conn, st, &resp);
}

static size_t head_size(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return ci ? ci->header_size : 0;
}

/* libmicrohttpd's URI log callback: the raw request target, before libmicrohttpd splits the
 * query into one record per parameter. Those records come from the connection's fixed memory
 * pool; when a query of thousands of parameters exhausts it, libmicrohttpd 0.9.75 tries to
 * answer in a pool that has no room left and the connection hangs until its timeout. So a
 * target over GP_HTTP_MAX_URI bytes or GP_HTTP_MAX_QUERY_PARAMS parameters has its query cut
 * off here, in libmicrohttpd's own buffer (which it modifies itself right after: it is writable
 * and the request's own), and is answered 414 by on_headers. What this returns becomes the
 * request's con_cls; on_completed frees it. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    conn_state *st = calloc(1, sizeof(*st));
    if (!st) {
        return NULL; /* on_access allocates it, the limits unchecked */
    }
    st->uri_len = strlen(uri);
    st->target = strdup(uri);
    char *q = strchr(uri, '?');
    if (q) {
        st->nparams = 1;
        for (const char *p = q + 1; *p; p++) {
            st->nparams += *p == '&' || *p == ';';
        }
    }
    if (q && (st->uri_len > GP_HTTP_MAX_URI || st->nparams > GP_HTTP_MAX_QUERY_PARAMS)) {
        q[1] = '\0'; /* libmicrohttpd then parses an empty query */
    }
    return st;
}

/* 414 for a request target over the limits (see on_uri); "" when within them. */
static enum MHD_Result answer_uri_too_long(struct MHD_Connection *conn, conn_state *st,
                                           const char *method)
{
    gp_http_response resp = {.content_type = "application/json"};
    size_t line = strlen(method) + 1 + st->uri_len;
    if (line > GP_HTTP_MAX_URI) {
        gp_http_respond_error(&resp, GP_ETOOBIG,
                              "request line: %zu bytes, more than the %d accepted", line,
                              GP_HTTP_MAX_URI);
    } else {
        gp_http_respond_error(&resp, GP_ETOOBIG,
                              "query string: %zu parameters, more than the %d accepted",
                              st->nparams, GP_HTTP_MAX_QUERY_PARAMS);
    }
    resp.status = 414;
    st->answered = 1;
    return send_response(NULL, conn, NULL, &resp);
}

/* Whether a Transfer-Encoding value names the chunked coding (names are case-insensitive). */
static bool names_chunked(const char *te)
{
    for (const char *p = te; *p; p++) {
        if (strncasecmp(p, "chunked", 7) == 0) {
            return true;
        }
    }
    return false;
}

/* A request body with the chunked transfer coding is refused as it starts: 413 and the
 * connection closed at once. Its size is known only when it ends, and libmicrohttpd 0.9.75 never
 * shows the size a chunk declares, so a chunk of "FFFFFFFFFFFFFFFF" bytes that then stalls would
 * hold the connection until the slow-client deadline; every client of the API sends a
 * Content-Length (at most max_body) instead. libmicrohttpd refuses to queue a response while a
 * body is being received, so on a plain connection the 413 is written to the socket here
 * (libmicrohttpd has nothing queued on it) and the connection is then closed by returning
 * MHD_NO. On TLS the bytes would have to go through the TLS session, which libmicrohttpd owns:
 * the connection is just closed. */
static enum MHD_Result refuse_chunked_body(gp_http_server *srv, struct MHD_Connection *conn,
                                           conn_state *st)
{
    track_deadline(srv, conn, false);
    st->answered = 1;
    free(st->body);
    st->body = NULL;
    st->len = st->cap = 0;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!srv->tls_cert && ci) {
        gp_http_response resp = {.content_type = "application/json"};
        gp_http_respond_error(&resp, GP_ETOOBIG,
                              "request body: the chunked transfer coding is not accepted; send "
                              "a Content-Length (at most %zu bytes)",
                              st->limit);
        char head[160];
        int n = snprintf(head, sizeof(head),
                         "HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n"
                         "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                         resp.body_len);
        /* Best effort: a few hundred bytes into an idle socket's send buffer. */
        if (send(ci->connect_fd, head, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n && resp.body) {
            (void)!send(ci->connect_fd, resp.body, resp.body_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        shutdown(ci->connect_fd, SHUT_WR);
        response_fini(&resp);
    }
    GP_LOG(GP_LOG_WARN, "http", "chunked request body: 413, closed");
    return MHD_NO;
}

/* First call of a request: headers are in, no body yet. */
static enum MHD_Result on_headers(gp_http_server *srv, struct MHD_Connection *conn, conn_state *st,
                                  const char *url, const char *method)
{
    st->started = true;
    st->limit = srv->max_body;
    if (srv->body_limit) {
        size_t lim = srv->body_limit(srv->ctx, method, url);
        st->limit = lim > 0 && lim < SIZE_MAX / 2 ? lim : srv->max_body;
    }
    if (strlen(method) + 1 + st->uri_len > GP_HTTP_MAX_URI ||
        st->nparams > GP_HTTP_MAX_QUERY_PARAMS) {
        track_deadline(srv, conn, false);
        return answer_uri_too_long(conn, st, method);
    }
    size_t head = head_size(conn);
    if (head > srv->max_header) {
        track_deadline(srv, conn, false);
        return answer_head_too_big(srv, conn, st, head);
    }
    const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
    if (te && names_chunked(te)) {
        return refuse_chunked_body(srv, conn, st);
    }
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (!cl) {
        return MHD_YES;
    }
    /* MHD has already refused a malformed Content-Length with 400. */
    errno = 0;
    unsigned long long n = strtoull(cl, NULL, 10);
    if (errno || n > st->limit) {
        track_deadline(srv, conn, false);
        return answer_too_big(conn, st, st->limit);
    }
    if (n > srv->max_body && srv->max_large_bodies > 0) {
        size_t used = __atomic_add_fetch(&srv->large_bodies, (size_t)n, __ATOMIC_SEQ_CST);
        if (used > srv->max_large_bodies) {
            __atomic_sub_fetch(&srv->large_bodies, (size_t)n, __ATOMIC_SEQ_CST);
            track_deadline(srv, conn, false);
            return answer_busy(conn, st, (size_t)n);
        }
        st->reserved = (size_t)n;
    }
    st->declared = (size_t)n; /* the buffer grows as the bytes come (append_body) */
    return MHD_YES;
}

/* ---- Deferred answers --------------------------------------------------------------------- */

static void pending_unlink(gp_http_server *srv, gp_http_deferred *dr)
{
    if (dr->awaited && --srv->awaited == 0) {
        pthread_cond_broadcast(&srv->dcond);
    }
    dr->awaited = false;
    if (dr->prev) {
        dr->prev->next = dr->next;
    } else {
        srv->pending = dr->next;
    }
    if (dr->next) {
        dr->next->prev = dr->prev;
    }
    dr->prev = dr->next = NULL;
}

/* Under dlock: stores the answer (taking what resp holds) and says whether the connection must
 * be resumed (by the caller, after counting itself in srv->resuming). */
static bool answer_locked(gp_http_deferred *dr, gp_http_response *resp)
{
    dr->resp = *resp;
    memset(resp, 0, sizeof(*resp));
    dr->answered = true;
    pending_unlink(dr->srv, dr);
    bool resume = dr->suspended && dr->conn;
    dr->resume_asked = dr->suspending;
    dr->suspended = false;
    return resume;
}

static void deferred_free(gp_http_deferred *dr)
{
    if (dr->build) { /* answered with a builder, never sent */
        dr->build(dr->build_ctx, NULL);
    }
    response_fini(&dr->resp);
    free(dr);
}

static gp_http_deferred *defer(const gp_http_request *req, gp_http_response *resp, bool awaited)
{
    const req_impl *ri = req->impl;
    gp_http_server *srv = ri->srv;
    if (ri->st->dr) {
        gp_http_respond_error(resp, GP_EINTERNAL, "request deferred twice");
        return NULL;
    }
    gp_http_deferred *dr = calloc(1, sizeof(*dr));
    if (!dr) {
        gp_http_respond_error(resp, GP_ENOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_lock(&srv->dlock);
    if (srv->stopping) {
        pthread_mutex_unlock(&srv->dlock);
        free(dr);
        gp_http_respond_error(resp, GP_EUNAVAIL, "the server is stopping");
        return NULL;
    }
    *dr = (gp_http_deferred){
        .srv = srv, .conn = ri->conn, .held = true, .awaited = awaited, .next = srv->pending};
    if (srv->pending) {
        srv->pending->prev = dr;
    }
    srv->pending = dr;
    srv->handles++;
    srv->awaited += awaited;
    pthread_mutex_unlock(&srv->dlock);
    ri->st->dr = dr;
    return dr;
}

gp_http_deferred *gp_http_defer(const gp_http_request *req, gp_http_response *resp)
{
    return defer(req, resp, false);
}

gp_http_deferred *gp_http_defer_awaited(const gp_http_request *req, gp_http_response *resp)
{
    return defer(req, resp, true);
}

static void server_free(gp_http_server *srv);

/* Finishes dr with resp, or with an answer build will make (then resp is empty). */
static void finish(gp_http_deferred *dr, gp_http_response *resp, gp_http_answer_fn build, void *ctx)
{
    gp_http_server *srv = dr->srv;
    pthread_mutex_lock(&srv->dlock);
    bool resume = false, nowhere = dr->answered;
    if (!dr->answered) {
        resume = answer_locked(dr, resp);
        dr->build = build;
        dr->build_ctx = ctx;
        if (srv->stopping && dr->conn && !dr->draining) { /* stop waits for it to be sent */
            dr->draining = true;
            srv->draining++;
        }
    }
    response_fini(resp); /* answered by stop already: this answer goes nowhere */
    struct MHD_Connection *conn = dr->conn;
    dr->held = false;
    srv->handles--;
    srv->resuming += resume;
    bool free_dr = !dr->conn;
    bool free_srv = srv->stopped && srv->handles == 0;
    pthread_mutex_unlock(&srv->dlock);
    if (nowhere && build) {
        build(ctx, NULL);
    }
    if (free_dr) {
        deferred_free(dr);
    }
    if (resume) {
        /* The connection stays suspended, so alive, until this call: stop waits for it. */
        MHD_resume_connection(conn);
        pthread_mutex_lock(&srv->dlock);
        if (--srv->resuming == 0) {
            pthread_cond_broadcast(&srv->dcond);
        }
        pthread_mutex_unlock(&srv->dlock);
    }
    if (free_srv) {
        server_free(srv);
    }
}

void gp_http_deferred_finish(gp_http_deferred *dr, gp_http_response *resp)
{
    finish(dr, resp, NULL, NULL);
}

void gp_http_deferred_finish_with(gp_http_deferred *dr, gp_http_answer_fn build, void *ctx)
{
    gp_http_response resp = {.content_type = "application/json"};
    finish(dr, &resp, build, ctx);
}

/* The final call of a deferred request: suspends the connection until the answer comes, or
 * sends the answer that came. */
static enum MHD_Result deferred_step(gp_http_server *srv, struct MHD_Connection *conn,
                                     conn_state *st)
{
    gp_http_deferred *dr = st->dr;
    pthread_mutex_lock(&srv->dlock);
    if (!dr->answered) {
        bool go = !dr->suspended && !dr->suspending;
        dr->suspending |= go;
        pthread_mutex_unlock(&srv->dlock);
        if (go) {
            /* MHD's own lock is taken outside dlock: MHD holds it when it calls on_completed,
             * which takes dlock. An answer that comes meanwhile is left to this thread. */
            MHD_suspend_connection(conn);
            pthread_mutex_lock(&srv->dlock);
            dr->suspending = false;
            bool again = dr->resume_asked;
            dr->resume_asked = false;
            dr->suspended = !again;
            pthread_mutex_unlock(&srv->dlock);
            if (again) {
                MHD_resume_connection(conn);
            }
        }
        return MHD_YES;
    }
    gp_http_response resp = dr->resp;
    memset(&dr->resp, 0, sizeof(dr->resp));
    gp_http_answer_fn build = dr->build;
    dr->build = NULL;
    pthread_mutex_unlock(&srv->dlock);
    if (build) {
        build(dr->build_ctx, &resp);
    }
    st->answered = 1;
    return send_response(srv, conn, st, &resp);
}

/* MHD is done with a deferred request's connection: its hold on the handle ends. */
static void deferred_release(gp_http_server *srv, gp_http_deferred *dr)
{
    pthread_mutex_lock(&srv->dlock);
    if (!dr->answered) { /* closed while waiting: nothing can be sent any more */
        dr->answered = true;
        pending_unlink(srv, dr);
    }
    dr->conn = NULL;
    dr->suspended = false;
    if (dr->draining) {
        dr->draining = false;
        if (--srv->draining == 0) {
            pthread_cond_broadcast(&srv->dcond);
        }
    }
    bool free_dr = !dr->held;
    pthread_mutex_unlock(&srv->dlock);
    if (free_dr) {
        deferred_free(dr);
    }
}

/* How long stop lets resumed connections send their 503 before MHD closes them all. */
#define STOP_DRAIN_MS 1000

/* Stop, before MHD stops: no new deferrals; every pending request is answered 503 and its
 * connection resumed, except the awaited ones, whose owners' answers are waited for; resumes made
 * by other threads are waited for, and so are the answers (up to STOP_DRAIN_MS: MHD closes
 * connections without sending what they have queued). */
static void deferred_stop(gp_http_server *srv)
{
    gp_http_deferred *resume = NULL;
    pthread_mutex_lock(&srv->dlock);
    srv->stopping = true;
    for (gp_http_deferred *dr = srv->pending, *next; dr; dr = next) {
        next = dr->next;
        if (dr->awaited) {
            continue; /* its owner answers it */
        }
        gp_http_response resp = {.content_type = "application/json"};
        gp_http_respond_error(&resp, GP_EUNAVAIL, "the server is stopping");
        if (answer_locked(dr, &resp)) {
            dr->resume_next = resume;
            dr->draining = true;
            srv->draining++;
            resume = dr;
        }
    }
    while (srv->resuming > 0 || srv->awaited > 0) {
        pthread_cond_wait(&srv->dcond, &srv->dlock);
    }
    pthread_mutex_unlock(&srv->dlock);
    while (resume) {
        /* Read before resuming: once resumed, MHD may complete and free the handle. */
        gp_http_deferred *next = resume->resume_next;
        MHD_resume_connection(resume->conn);
        resume = next;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += STOP_DRAIN_MS / 1000;
    pthread_mutex_lock(&srv->dlock);
    int rc = 0;
    while (srv->draining > 0 && rc == 0) {
        rc = pthread_cond_timedwait(&srv->dcond, &srv->dlock, &until);
    }
    pthread_mutex_unlock(&srv->dlock);
}

static enum MHD_Result dispatch(gp_http_server *srv, struct MHD_Connection *conn, conn_state *st,
                                const char *url, const char *method)
{
    char addr[64];
    remote_address(conn, addr, sizeof(addr));
    req_impl ri = {conn, srv, st};
    gp_http_request req = {
        .method = method,
        .path = url,
        .body = st->body ? st->body : "",
        .body_len = st->len,
        .remote_addr = addr,
        .header_bytes = head_size(conn),
        .target = st->target ? st->target : url,
        .tls = srv->tls_cert != NULL,
        .impl = &ri,
    };
    gp_http_response resp = {.content_type = "application/json"};
    srv->handler(srv->ctx, &req, &resp);
    if (st->dr) {
        response_fini(&resp);
        return deferred_step(srv, conn, st);
    }
    st->answered = 1;
    return send_response(srv, conn, st, &resp);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
    (void)version;
    gp_http_server *srv = cls;
    conn_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof(*st));
        if (!st) {
            return MHD_NO;
        }
        *con_cls = st;
    }
    if (!st->started) {
        return on_headers(srv, conn, st, url, method);
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (st->answered) {
            return MHD_YES; /* answered early (e.g. 431): the body is read and dropped */
        }
        if (append_body(st, upload_data, n, st->declared) != 0) {
            return MHD_NO; /* past the Content-Length checked at the start: cannot happen */
        }
        return MHD_YES;
    }
    if (st->answered) {
        return MHD_YES;
    }
    if (st->dr) { /* resumed: the answer is in */
        return deferred_step(srv, conn, st);
    }
    track_deadline(srv, conn, false); /* the whole request is in */
    return dispatch(srv, conn, st, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    conn_state *st = *con_cls;
    if (!st || !st->up || !st->up->fired) {
        track_deadline(cls, conn, true); /* the next request on this connection */
    }
    if (st) {
        if (st->reserved) {
            gp_http_server *srv = cls;
            __atomic_sub_fetch(&srv->large_bodies, st->reserved, __ATOMIC_SEQ_CST);
        }
        if (st->dr) {
            deferred_release(cls, st->dr);
        }
        gp__http_upgrade_release(st);
        free(st->target);
        free(st->body);
        free(st);
        *con_cls = NULL;
    }
}

__attribute__((format(printf, 2, 0))) static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    gp_http_server *srv = cls;
    char msg[256];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.')) {
        msg[--n] = '\0';
    }
    pthread_mutex_lock(&srv->log_lock);
    int keep = srv->starting; /* the first message goes into the diag, none to the log */
    if (keep && !srv->start_err[0]) {
        snprintf(srv->start_err, sizeof(srv->start_err), "%s", msg);
    }
    pthread_mutex_unlock(&srv->log_lock);
    if (!keep) {
        GP_LOG(GP_LOG_WARN, "http", "libmicrohttpd: %s", msg);
    }
}

typedef struct header_walk {
    int (*fn)(void *ctx, const char *name, const char *value);
    void *ctx;
} header_walk;

static enum MHD_Result header_iter(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    header_walk *w = cls;
    return w->fn(w->ctx, key, value ? value : "") ? MHD_NO : MHD_YES;
}

void gp_http_request_each_header(const gp_http_request *req,
                                 int (*fn)(void *ctx, const char *name, const char *value),
                                 void *ctx)
{
    const req_impl *ri = req->impl;
    header_walk w = {fn, ctx};
    MHD_get_connection_values(ri->conn, MHD_HEADER_KIND, header_iter, &w);
}

/* ---- Lifecycle ---------------------------------------------------------------------------- */

static int read_pem(const char *path, char **out, gp_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return gp_diag_set(d, GP_EIO, "tls: open %s: %s", path, strerror(errno));
    }
    char *buf = malloc(TLS_FILE_MAX + 1);
    if (!buf) {
        fclose(f);
        return gp_diag_set(d, GP_ENOMEM, "tls: out of memory");
    }
    size_t n = fread(buf, 1, TLS_FILE_MAX + 1, f);
    int err = ferror(f);
    fclose(f);
    if (err || n == 0 || n > TLS_FILE_MAX) {
        free(buf);
        return gp_diag_set(d, GP_EIO, "tls: read %s: %s", path,
                           err      ? "read error"
                           : n == 0 ? "empty file"
                                    : "larger than 1 MiB");
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* A connection whose first bytes passed the acceptor: libmicrohttpd takes it (and closes it if
 * it cannot). */
static void hand_over(void *ctx, int fd, const struct sockaddr *sa, socklen_t len)
{
    gp_http_server *srv = ctx;
    if (MHD_add_connection(srv->mhd, fd, sa, len) != MHD_YES) {
        GP_LOG(GP_LOG_WARN, "http", "connection dropped: libmicrohttpd: %s", strerror(errno));
    }
}

/* Binds and listens on host:port; returns the socket or a negative GP_E* code. */
static int listen_on(const char *host, int port, gp_diag *d)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_STREAM,
        .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
    };
    struct addrinfo *ai = NULL;
    char port_str[16];
    snprintf(port_str, sizeof(port_str), "%d", port);
    int rc = getaddrinfo(host, port_str, &hints, &ai);
    if (rc != 0) {
        return gp_diag_set(d, GP_EINVAL, "listen %s:%d: %s", host, port, gai_strerror(rc));
    }
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
        }
        freeaddrinfo(ai);
        return gp_diag_set(d, GP_EIO, "listen %s:%d: %s", host, port, strerror(e));
    }
    freeaddrinfo(ai);
    return fd;
}

static int bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        return -1;
    }
    if (ss.ss_family == AF_INET6) {
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int check_config(const gp_http_server_config *cfg, gp_http_handler handler, gp_diag *d)
{
    if (!cfg || !handler) {
        return gp_diag_set(d, GP_EINVAL, "http server: config and handler are required");
    }
    if (cfg->port < 0 || cfg->port > 65535) {
        return gp_diag_set(d, GP_EINVAL, "port: must be between 0 and 65535");
    }
    if (cfg->max_body == 0 || cfg->max_body >= SIZE_MAX / 2) {
        return gp_diag_set(d, GP_EINVAL, "max_body: must be positive");
    }
    if (cfg->max_header > GP_HTTP_MAX_HEADER_LIMIT) {
        return gp_diag_set(d, GP_EINVAL, "max_header: must be at most %d bytes",
                           GP_HTTP_MAX_HEADER_LIMIT);
    }
    if (!cfg->tls_cert_file != !cfg->tls_key_file) {
        return gp_diag_set(d, GP_EINVAL, "tls: both a certificate and a key file are needed");
    }
    if (cfg->tls_cert_file && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        return gp_diag_set(d, GP_ENOTSUP, "tls: libmicrohttpd was built without TLS");
    }
    return 0;
}

static void server_free(gp_http_server *srv)
{
    free(srv->tls_cert);
    free(srv->tls_key);
    pthread_mutex_destroy(&srv->log_lock);
    pthread_mutex_destroy(&srv->dlock);
    pthread_cond_destroy(&srv->dcond);
    pthread_mutex_destroy(&srv->tlock);
    pthread_cond_destroy(&srv->tcond);
    free(srv);
}

static int hex_value(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Percent-decodes s in place, like libmicrohttpd's own MHD_http_unescape, except that "%00" is
 * left as it is: a decoded NUL would silently cut the path or value at that point. */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    char *out = s;
    for (const char *p = s; *p; p++) {
        int hi = p[0] == '%' ? hex_value(p[1]) : -1;
        int lo = hi >= 0 ? hex_value(p[2]) : -1;
        if (lo >= 0 && (hi | lo) != 0) {
            *out++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *out++ = *p;
        }
    }
    *out = '\0';
    return (size_t)(out - s);
}

static int start_daemon(gp_http_server *srv, const gp_http_server_config *cfg, const char *host,
                        gp_diag *d)
{
    /* No listening socket: the acceptor (http_accept.h) owns it and adds connections. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET |
                     MHD_ALLOW_UPGRADE;
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls_cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    if (srv->tls_cert) {
        flags |= MHD_USE_TLS;
    } else {
        tls[0].option = MHD_OPTION_END;
    }
    /* Room for a head up to HEAD_SLACK over max_header, so that a head over the limit still
     * reaches on_headers and gets the API's 431, with the answer and the body's pieces beside
     * it. (libmicrohttpd zeroes the pool between requests: keep it no larger than that.) */
    size_t pool = srv->max_header + HEAD_SLACK;
    srv->starting = 1;
    srv->mhd = MHD_start_daemon(
        flags, 0, NULL, NULL, on_access, srv, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)(cfg->threads > 0 ? cfg->threads : 4), MHD_OPTION_CONNECTION_TIMEOUT,
        cfg->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    pthread_mutex_lock(&srv->log_lock);
    srv->starting = 0;
    pthread_mutex_unlock(&srv->log_lock);
    if (!srv->mhd) {
        return gp_diag_set(d, GP_EIO, "http server %s:%d: %s", host, srv->port,
                           srv->start_err[0] ? srv->start_err : "libmicrohttpd failed to start");
    }
    if (srv->timeout_ms > 0) {
        int rc = pthread_create(&srv->watchdog, NULL, watchdog_main, srv);
        if (rc != 0) {
            MHD_stop_daemon(srv->mhd);
            srv->mhd = NULL;
            return gp_diag_set(d, GP_EIO, "http server %s:%d: watchdog thread: %s", host, srv->port,
                               strerror(rc));
        }
        srv->watching = true;
    }
    return 0;
}

int gp_http_server_start(const gp_http_server_config *cfg, gp_http_handler handler, void *ctx,
                         gp_http_server **out, gp_diag *d)
{
    *out = NULL;
    int rc = check_config(cfg, handler, d);
    if (rc != 0) {
        return rc;
    }
    gp_http_server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        return gp_diag_set(d, GP_ENOMEM, "http server: out of memory");
    }
    pthread_mutex_init(&srv->log_lock, NULL);
    pthread_mutex_init(&srv->dlock, NULL);
    pthread_cond_init(&srv->dcond, NULL);
    pthread_mutex_init(&srv->tlock, NULL);
    pthread_cond_init(&srv->tcond, NULL);
    srv->handler = handler;
    srv->ctx = ctx;
    srv->max_body = cfg->max_body;
    srv->body_limit = cfg->body_limit;
    srv->max_large_bodies = cfg->max_large_bodies;
    srv->max_header = cfg->max_header ? cfg->max_header : GP_HTTP_MAX_HEADER;
    snprintf(srv->max_header_setting, sizeof(srv->max_header_setting), "%s",
             cfg->max_header_setting ? cfg->max_header_setting : "");
    srv->timeout_ms = (int64_t)cfg->timeout_s * 1000;
    if (cfg->tls_cert_file && ((rc = read_pem(cfg->tls_cert_file, &srv->tls_cert, d)) != 0 ||
                               (rc = read_pem(cfg->tls_key_file, &srv->tls_key, d)) != 0)) {
        server_free(srv);
        return rc;
    }
    const char *host = cfg->host ? cfg->host : "127.0.0.1";
    int fd = listen_on(host, cfg->port, d);
    if (fd < 0) {
        server_free(srv);
        return fd;
    }
    srv->port = bound_port(fd);
    rc = start_daemon(srv, cfg, host, d);
    if (rc != 0) {
        close(fd);
        server_free(srv);
        return rc;
    }
    /* The first bytes of a connection get the request timeout, or a minute when none is set. */
    int64_t first_ms = srv->timeout_ms > 0 ? srv->timeout_ms : 60000;
    rc = gp_http_acceptor_start(fd, srv->tls_cert != NULL, first_ms, hand_over, srv, &srv->acceptor,
                                d);
    if (rc != 0) { /* the acceptor closed fd */
        watchdog_stop(srv);
        MHD_stop_daemon(srv->mhd);
        server_free(srv);
        return rc;
    }
    *out = srv;
    return 0;
}

int gp_http_server_port(const gp_http_server *srv)
{
    return srv->port;
}

void gp_http_server_stop(gp_http_server *srv)
{
    if (!srv) {
        return;
    }
    gp_http_acceptor_stop(srv->acceptor); /* no new connections */
    deferred_stop(srv);
    gp__http_streams_stop(srv);
    watchdog_stop(srv);
    /* Joins the pool threads, so every handler in flight has returned; closes the socket and
     * every connection, whose closed notices free their tracks. */
    MHD_stop_daemon(srv->mhd);
    pthread_mutex_lock(&srv->dlock);
    srv->stopped = true;
    bool last = srv->handles == 0;
    pthread_mutex_unlock(&srv->dlock);
    if (last) {
        server_free(srv);
    }
}
