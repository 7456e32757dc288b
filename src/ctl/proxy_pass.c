/*
 * The proxy's pass (see proxy.h): one worker thread per proxied request. The request is deferred
 * (it holds no HTTP thread while the worker waits); the worker
 *   1. takes an idle tunnel to the replica's port from the pool (proxy_pool.h), or connects to
 *      the node's agent and asks for a new one (agent/tunnel.h);
 *   2. sends the request through it and reads the job's response head (a reused tunnel that
 *      the job closed meanwhile, found when the request cannot be sent or nothing at all comes
 *      back, is replaced once by a fresh one when the request may be sent again: idempotent,
 *      or not sent whole);
 *   3. answers the deferred request: an upgrade (WebSocket) whose bytes it then relays both
 *      ways, or a streamed body it keeps reading from the tunnel (chunked coding decoded) into
 *      a buffer the HTTP server drains (http_server.h's streams).
 * The buffer and its flags are under the pass's lock; the stream's read and free callbacks and
 * the worker meet there. The pass is freed by the last of the worker and the stream.
 *
 * Keep-alive: the tunnel goes back to the pool only when the exchange ended cleanly and the
 * connection to the job is still in a known state: an HTTP/1.1 answer without Connection:
 * close, its body framed by Content-Length or the chunked coding (or none), read to its exact
 * end with nothing after it, and the client still there; never after an upgrade, a body read to
 * the end of the stream, or any error.
 */
#include "ctl/proxy.h"

#include "base/clock.h"
#include "base/log.h"
#include "ctl/proxy_http.h"
#include "ctl/proxy_pool.h"
#include "ctl/proxy_state.h"
#include "net/relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define DIAL_TIMEOUT_MS 5000
#define AGENT_HEAD_S    15  /* the agent answers the tunnel at once */
#define UPSTREAM_HEAD_S 300 /* a job may think before it answers */
#define UPSTREAM_IDLE_S 600 /* a body that stalls this long is cut */
#define HEAD_MAX        (64 * 1024)
#define PX_BUF          (64 * 1024)

typedef enum { BODY_NONE, BODY_LENGTH, BODY_CHUNKED, BODY_CLOSE } body_framing;

typedef struct px_pass {
    px_target *t;
    ctl_proxy *ps;
    int slot;
    gp_http_deferred *dr;
    int fd; /* the tunnel */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* the body on its way: buf[off..len) */
    char buf[PX_BUF];
    size_t off, len;
    bool eof, failed, closed; /* closed: the stream was freed */
    bool reused;              /* the tunnel came from the pool */
    bool keep;                /* the answer leaves the tunnel reusable if its body ends well */
    gp_http_stream *stream;
    int refs;
    /* an upgrade: the client's socket once handed over (-2 until then, -1 when it failed) */
    int client;
    gp_http_upgraded *up;
    char *extra;
    size_t extra_len;
    int64_t touched_ms;
} px_pass;

static void pass_unref(px_pass *p)
{
    pthread_mutex_lock(&p->lock);
    bool last = --p->refs == 0;
    pthread_mutex_unlock(&p->lock);
    if (!last) {
        return;
    }
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    free(p->t->head);
    free(p->t->body);
    free(p->t);
    free(p->extra);
    free(p);
}

static void touch(px_pass *p)
{
    int64_t now = ctl_now_ms();
    if (now - p->touched_ms >= 1000) { /* once a second is enough for the idle stop */
        p->touched_ms = now;
        ctl_proxy_touch(p->ps, p->t->job, now);
    }
}

static void answer_error(px_pass *p, int code, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void answer_error(px_pass *p, int code, int status, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gp_http_response resp = {.content_type = "application/json"};
    gp_http_respond_error(&resp, code, "%s", msg);
    if (status) {
        resp.status = status;
    }
    gp_http_deferred_finish(p->dr, &resp);
    p->dr = NULL;
}

/* ---- the connection to the agent ---------------------------------------------------------- */

static int dial(const char *host, int port, char *err, size_t cap)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    int rc = getaddrinfo(host, ps, &hints, &ai);
    if (rc != 0) {
        snprintf(err, cap, "%s", gai_strerror(rc));
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        e = errno;
        if (e == EINPROGRESS) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            int n = poll(&pf, 1, DIAL_TIMEOUT_MS);
            socklen_t len = sizeof(e);
            e = n == 0                                                         ? ETIMEDOUT
                : n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0 ? errno
                                                                               : e;
        }
    }
    freeaddrinfo(ai);
    if (e != 0) {
        snprintf(err, cap, "%s", strerror(e));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    int on = 1; /* a request's head and body go out at once, also on a kept tunnel */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    return fd;
}

/* Acknowledges what was read at once (Linux resets the option as it goes), so that the sender's
 * Nagle algorithm (an agent's relay before it set TCP_NODELAY) does not wait on a delayed ACK. */
static void quickack(int fd)
{
    int on = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof(on));
}

static void recv_timeout(int fd, int seconds)
{
    struct timeval tv = {seconds, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static bool send_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w <= 0 && !(w < 0 && errno == EINTR)) {
            return false;
        }
        if (w > 0) {
            b += w;
            n -= (size_t)w;
        }
    }
    return true;
}

/* Reads a response head (into *head, malloc'd, NUL-terminated; *head_len its length) and what
 * came after it (*rest, *rest_len, in the same allocation), starting with the pre_len bytes of
 * pre (what came after an earlier head). 0, -2 when the connection was closed (or reset) before
 * a single byte came, or -1 (closed later, timed out, too large). */
static int read_head(int fd, const char *pre, size_t pre_len, char **head, size_t *head_len,
                     char **rest, size_t *rest_len)
{
    char *b = malloc(HEAD_MAX + 1);
    size_t n = pre_len < HEAD_MAX ? pre_len : HEAD_MAX, end = 0;
    bool closed = false;
    if (b && n) {
        memcpy(b, pre, n);
    }
    while (b && !(end = px_head_end(b, n)) && n < HEAD_MAX) {
        ssize_t r = recv(fd, b + n, HEAD_MAX - n, 0);
        quickack(fd);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            closed = r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
            break;
        }
        n += (size_t)r; /* a read may fill the buffer with the head and the body's start */
    }
    if (!b || !end) {
        free(b);
        return closed && n == 0 ? -2 : -1;
    }
    b[n] = '\0';
    *head = b;
    *head_len = end;
    *rest = b + end;
    *rest_len = n - end;
    return 0;
}

/* The agent's error message from its JSON answer, into msg. */
static void agent_message(const char *body, char *msg, size_t cap)
{
    const char *m = strstr(body, "\"message\":\"");
    snprintf(msg, cap, "%s", m ? m + 11 : "no tunnel");
    char *q = strchr(msg, '"');
    if (q) {
        *q = '\0';
    }
}

/* Replaces the pass's tunnel (closing the one it had). */
static void set_tunnel(px_pass *p, int fd)
{
    pthread_mutex_lock(&p->lock);
    int old = p->fd;
    p->fd = fd;
    pthread_mutex_unlock(&p->lock);
    ctl_proxy_worker_socket(p->ps, p->slot, fd);
    if (old >= 0) {
        close(old);
    }
}

/* Step 1 without the pool: a new tunnel from the node's agent into p->fd. 0, or -1 after
 * answering. */
static int open_tunnel(px_pass *p)
{
    px_target *t = p->t;
    char err[256];
    int fd = dial(t->agent_host, t->agent_port, err, sizeof(err));
    if (fd < 0) {
        answer_error(p, GP_EUNAVAIL, 502, "job %lld: node %s's agent (%s:%d) cannot be reached: %s",
                     (long long)t->job, t->node, t->agent_host, t->agent_port, err);
        return -1;
    }
    set_tunnel(p, fd);
    p->reused = false;
    char ask[512], *raw = NULL, *rest = NULL;
    size_t hl, rest_len;
    px_head h;
    int n = snprintf(ask, sizeof(ask),
                     "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
                     "Connection: Upgrade\r\nUpgrade: gpupool-tunnel\r\n\r\n",
                     t->tunnel, t->agent_host, t->agent_port, t->token);
    recv_timeout(fd, AGENT_HEAD_S);
    if (n >= (int)sizeof(ask) || !send_all(fd, ask, (size_t)n) ||
        read_head(fd, NULL, 0, &raw, &hl, &rest, &rest_len) != 0 ||
        px_head_parse(raw, hl, &h) != 0) {
        free(raw);
        answer_error(p, GP_EUNAVAIL, 502, "job %lld: node %s's agent gave no tunnel",
                     (long long)t->job, t->node);
        return -1;
    }
    if (h.status != 101) {
        char msg[300];
        agent_message(rest, msg, sizeof(msg));
        free(raw);
        answer_error(p, GP_EUNAVAIL, 503, "job %lld: port %d cannot be reached: %s",
                     (long long)t->job, t->port, msg);
        return -1;
    }
    /* the tunnel is open: the job's own bytes from here (the agent sends none of its own after
     * its 101, and the job none before it has the request) */
    free(raw);
    return 0;
}

/* Step 2 on the current tunnel: 0 with the head parsed into h (pointing into *raw, the
 * caller's to free) and the bytes after it; -2 when the tunnel was found closed (the request
 * could not be sent, *sent false, or nothing at all came back); -1 for another failure. */
static int send_and_read(px_pass *p, px_head *h, char **raw, char **rest, size_t *rest_len,
                         bool *sent)
{
    px_target *t = p->t;
    *raw = NULL;
    *rest_len = 0;
    recv_timeout(p->fd, UPSTREAM_HEAD_S);
    *sent = send_all(p->fd, t->head, t->head_len) &&
            (t->body_len == 0 || send_all(p->fd, t->body, t->body_len));
    if (!*sent) {
        return -2;
    }
    char *prev = NULL;
    size_t hl;
    int rc = 0;
    do { /* interim answers (100 Continue, 103) are not passed on; what followed one is kept */
        free(prev);
        prev = *raw;
        *raw = NULL;
        rc = read_head(p->fd, *rest_len ? *rest : NULL, *rest_len, raw, &hl, rest, rest_len);
        if (rc == 0 && px_head_parse(*raw, hl, h) != 0) {
            rc = -1;
        }
        rc = rc == -2 && prev ? -1 : rc; /* after an interim answer, something did come */
    } while (rc == 0 && h->status < 200 && h->status != 101);
    free(prev);
    return rc;
}

/* Steps 1 and 2: the tunnel, the request, the job's response head. 0 with the head parsed into
 * h (pointing into *raw, the caller's to free) and the bytes after it, or -1 after answering. */
static int exchange(px_pass *p, px_head *h, char **raw, char **rest, size_t *rest_len)
{
    px_target *t = p->t;
    int fd = px_pool_take(ctl_proxy_tunnels(p->ps), &t->key, gp_mono_ms());
    if (fd >= 0) {
        set_tunnel(p, fd);
        p->reused = true;
    } else if (open_tunnel(p) != 0) {
        return -1;
    }
    bool sent = false;
    int rc = send_and_read(p, h, raw, rest, rest_len, &sent);
    if (rc == -2 && p->reused && (t->retry_ok || !sent)) {
        GP_LOG(GP_LOG_DEBUG, "proxy", "job=%lld a kept tunnel was closed by the job: a new one",
               (long long)t->job);
        free(*raw);
        *raw = NULL;
        if (open_tunnel(p) != 0) {
            return -1;
        }
        rc = send_and_read(p, h, raw, rest, rest_len, &sent);
    }
    free(t->body); /* up to proxy.max_body: not held while the job answers */
    t->body = NULL;
    if (rc != 0) {
        free(*raw);
        *raw = NULL;
        if (!sent) {
            answer_error(p, GP_EUNAVAIL, 502, "job %lld: the request could not be sent",
                         (long long)t->job);
        } else {
            answer_error(p, GP_EUNAVAIL, 502,
                         "job %lld: no valid HTTP answer from port %d within %d s",
                         (long long)t->job, t->port, UPSTREAM_HEAD_S);
        }
        return -1;
    }
    return 0;
}

/* ---- answering ---------------------------------------------------------------------------- */

/* Copies the job's headers that may pass into resp (hop-by-hop ones and cookies for other paths
 * dropped). */
static void pass_headers(px_pass *p, const px_head *h, gp_http_response *resp, bool upgrade)
{
    char prefix[96], cookie[8192];
    snprintf(prefix, sizeof(prefix), "/v1/jobs/%lld/proxy/", (long long)p->t->job);
    for (int i = 0; i < h->nheaders; i++) {
        const char *n = h->name[i], *v = h->value[i];
        bool keep_hop =
            upgrade && (strcasecmp(n, "Upgrade") == 0 || strcasecmp(n, "Connection") == 0);
        if (px_hop_header(n) && !keep_hop) {
            continue;
        }
        if (strcasecmp(n, "Set-Cookie") == 0) {
            if (!px_set_cookie_scope(v, prefix, PX_COOKIE, cookie, sizeof(cookie))) {
                GP_LOG(GP_LOG_INFO, "proxy", "job=%lld Set-Cookie dropped (a Domain, or %s)",
                       (long long)p->t->job, PX_COOKIE);
                continue;
            }
            v = cookie;
        }
        if (gp_http_response_add_header(resp, n, v) == GP_ENOSPC) {
            GP_LOG(GP_LOG_WARN, "proxy", "job=%lld answer header dropped: more than %d",
                   (long long)p->t->job, GP_HTTP_MAX_HEADERS);
        }
    }
}

static long stream_read(void *ctx, gp_http_stream *stream, char *out, size_t max)
{
    px_pass *p = ctx;
    pthread_mutex_lock(&p->lock);
    p->stream = stream;
    long n = 0;
    if (p->off < p->len) {
        n = (long)(p->len - p->off < max ? p->len - p->off : max);
        memcpy(out, p->buf + p->off, (size_t)n);
        p->off += (size_t)n;
        if (p->off == p->len) {
            p->off = p->len = 0;
        }
        pthread_cond_signal(&p->cond);
    } else if (p->failed) {
        n = -1;
    } else if (p->eof) {
        n = GP_HTTP_STREAM_END;
    }
    pthread_mutex_unlock(&p->lock);
    return n;
}

static void stream_free(void *ctx)
{
    px_pass *p = ctx;
    pthread_mutex_lock(&p->lock);
    p->closed = true;
    p->stream = NULL;
    if (!p->eof && p->fd >= 0) {
        shutdown(p->fd, SHUT_RDWR); /* the worker's read ends */
    }
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pass_unref(p);
}

/* Appends decoded body bytes (waiting for room) and wakes the stream. false once closed. */
static bool put(px_pass *p, const char *data, size_t n)
{
    pthread_mutex_lock(&p->lock);
    while (n > 0 && !p->closed) {
        if (p->len == sizeof(p->buf)) {
            pthread_cond_wait(&p->cond, &p->lock);
            continue;
        }
        size_t room = sizeof(p->buf) - p->len;
        size_t k = n < room ? n : room;
        memcpy(p->buf + p->len, data, k);
        p->len += k;
        data += k;
        n -= k;
        if (p->stream) {
            gp_http_stream_wake(p->stream);
        }
    }
    bool open = !p->closed;
    pthread_mutex_unlock(&p->lock);
    return open;
}

static void finish_body(px_pass *p, bool failed)
{
    pthread_mutex_lock(&p->lock);
    p->eof = true;
    p->failed = failed;
    if (p->stream) {
        gp_http_stream_wake(p->stream);
    }
    pthread_mutex_unlock(&p->lock);
}

/* The job's answer was read to its exact end and the tunnel may carry another request (p->keep):
 * back to the pool now, before the client has the answer's last bytes (its next request then
 * finds it there). Not when the client went away first (stream_free shut the tunnel down). */
static void release_tunnel(px_pass *p)
{
    pthread_mutex_lock(&p->lock);
    int fd = p->keep && !p->closed ? p->fd : -1;
    if (fd >= 0) {
        p->fd = -1;
    }
    pthread_mutex_unlock(&p->lock);
    if (fd >= 0) {
        ctl_proxy_worker_socket(p->ps, p->slot, -1);
        px_pool_put(ctl_proxy_tunnels(p->ps), &p->t->key, fd, gp_mono_ms());
    }
}

/* Decodes one piece of the body (*in, *n: consumed) into what the client gets (*data, *len);
 * *end once the body's end was read, *extra when bytes came after it. false: malformed. */
static bool decode(body_framing f, px_chunks *ch, unsigned long long *left, const char **in,
                   size_t *n, char *dec, const char **data, size_t *len, bool *end, bool *extra)
{
    if (f == BODY_CHUNKED) {
        long d = px_chunks_feed(ch, *in, *n, dec);
        *in += *n;
        *n = 0;
        *data = dec;
        *len = d > 0 ? (size_t)d : 0;
        *end = ch->done;
        *extra = ch->extra > 0;
        return d >= 0;
    }
    size_t k = f == BODY_LENGTH && *n > *left ? (size_t)*left : *n;
    *data = *in;
    *len = k;
    *left -= f == BODY_LENGTH ? k : 0;
    *end = f == BODY_LENGTH && *left == 0;
    *extra = *end && *n > k;
    *in += k;
    *n = *end ? 0 : *n - k;
    return true;
}

/* Step 3 for a body: reads it from the tunnel until its end. */
static void pump_body(px_pass *p, body_framing f, unsigned long long length, const char *rest,
                      size_t rest_len)
{
    static const size_t piece = 16 * 1024;
    char *raw = malloc(piece), *dec = malloc(piece);
    px_chunks ch = {0};
    bool failed = !raw || !dec, end = f == BODY_LENGTH && length == 0;
    unsigned long long left = length;
    const char *in = rest;
    size_t n = rest_len;
    recv_timeout(p->fd, UPSTREAM_IDLE_S);
    while (!failed && !end) {
        if (n == 0) {
            ssize_t r = recv(p->fd, raw, piece, 0);
            quickack(p->fd);
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r <= 0) {
                failed = f != BODY_CLOSE || r < 0;
                break;
            }
            in = raw;
            n = (size_t)r;
        }
        touch(p);
        while (!failed && !end && n > 0) {
            const char *data;
            size_t len;
            bool extra = false;
            size_t k = n < piece ? n : piece, k_left = k;
            failed = !decode(f, &ch, &left, &in, &k_left, dec, &data, &len, &end, &extra);
            n -= k - k_left;
            if (end && !extra && n == 0) {
                release_tunnel(p);
            }
            failed = failed || (len > 0 && !put(p, data, len));
        }
    }
    if (end && rest_len == 0 && length == 0 && f == BODY_LENGTH) {
        release_tunnel(p); /* Content-Length: 0 */
    }
    free(raw);
    free(dec);
    finish_body(p, failed);
}

static void on_client(void *ctx, int fd, const char *extra, size_t extra_len, gp_http_upgraded *h)
{
    px_pass *p = ctx;
    pthread_mutex_lock(&p->lock);
    p->client = fd;
    p->up = h;
    if (fd >= 0 && extra_len > 0 && (p->extra = malloc(extra_len)) != NULL) {
        memcpy(p->extra, extra, extra_len);
        p->extra_len = extra_len;
    }
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static void on_relay_data(void *ctx)
{
    touch(ctx);
}

/* Step 3 for an upgrade: answers 101, waits for the client's socket, relays. */
static void pass_upgrade(px_pass *p, const px_head *h, const char *rest, size_t rest_len)
{
    gp_http_response resp = {0};
    gp_http_response_set_upgrade(&resp, on_client, p);
    pass_headers(p, h, &resp, true);
    gp_http_deferred_finish(p->dr, &resp);
    p->dr = NULL;
    pthread_mutex_lock(&p->lock);
    while (p->client == -2) {
        pthread_cond_wait(&p->cond, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    if (p->client < 0) {
        return;
    }
    recv_timeout(p->fd, 0);
    if (p->extra_len == 0 || send_all(p->fd, p->extra, p->extra_len)) {
        gp_relay_run(p->fd, p->client, rest, rest_len, on_relay_data, p);
    }
    gp_http_upgraded_close(p->up);
}

/* Whether a Connection header's list names "close". */
static bool has_close(const char *list)
{
    for (const char *q = list; *q;) {
        q += strspn(q, " \t,");
        size_t len = strcspn(q, " \t,");
        if (len == 5 && strncasecmp(q, "close", 5) == 0) {
            return true;
        }
        q += len;
    }
    return false;
}

static bool names_chunked(const char *te)
{
    for (const char *p = te; *p; p++) {
        if (strncasecmp(p, "chunked", 7) == 0) {
            return true;
        }
    }
    return false;
}

/* Step 3 for an ordinary answer: status and headers now, the body streamed. */
static void pass_answer(px_pass *p, const px_head *h, const char *rest, size_t rest_len)
{
    const char *te = px_head_get(h, "Transfer-Encoding");
    const char *cl = px_head_get(h, "Content-Length");
    body_framing f = BODY_CLOSE;
    unsigned long long length = 0;
    if (p->t->head_only || h->status == 204 || h->status == 304) {
        f = BODY_NONE;
    } else if (te && names_chunked(te)) {
        f = BODY_CHUNKED;
    } else if (cl) {
        char *end;
        length = strtoull(cl, &end, 10);
        f = *cl && !*end ? BODY_LENGTH : BODY_CLOSE;
    }
    const char *conn = px_head_get(h, "Connection");
    pthread_mutex_lock(&p->lock);
    p->keep = !p->t->upgrade && h->minor >= 1 && !(conn && has_close(conn)) && f != BODY_CLOSE;
    pthread_mutex_unlock(&p->lock);
    if (f == BODY_NONE && rest_len == 0) {
        release_tunnel(p);
    }
    gp_http_response resp = {0};
    if (f == BODY_NONE) {
        resp.status = h->status;
    } else {
        pthread_mutex_lock(&p->lock);
        p->refs++; /* the stream's */
        pthread_mutex_unlock(&p->lock);
        gp_http_response_set_stream(&resp, h->status, NULL,
                                    f == BODY_LENGTH ? (long long)length : -1, stream_read,
                                    stream_free, p);
    }
    resp.content_type = NULL; /* the job's, among its headers */
    pass_headers(p, h, &resp, false);
    gp_http_deferred_finish(p->dr, &resp);
    p->dr = NULL;
    if (f != BODY_NONE) {
        pump_body(p, f, length, rest, rest_len);
    }
}

static void *pass_main(void *arg)
{
    px_pass *p = arg;
    px_head h;
    char *raw = NULL, *rest = NULL;
    size_t rest_len = 0;
    touch(p);
    if (exchange(p, &h, &raw, &rest, &rest_len) == 0) {
        if (h.status == 101 && p->t->upgrade) {
            pass_upgrade(p, &h, rest, rest_len);
        } else if (h.status == 101) {
            answer_error(p, GP_EUNAVAIL, 502, "job %lld: switched protocols unasked",
                         (long long)p->t->job);
        } else {
            pass_answer(p, &h, rest, rest_len);
        }
    }
    free(raw);
    ctl_proxy_worker_socket(p->ps, p->slot, -1);
    pthread_mutex_lock(&p->lock);
    int fd = p->fd;
    p->fd = -1;
    pthread_mutex_unlock(&p->lock);
    if (fd >= 0) { /* not released to the pool */
        close(fd);
    }
    ctl_proxy_worker_leave(p->ps, p->slot);
    pass_unref(p);
    return NULL;
}

void px_pass_start(px_target *t, const gp_http_request *req, gp_http_response *resp)
{
    ctl_proxy *ps = t->g->proxy;
    px_pass *p = calloc(1, sizeof(*p));
    int slot = -1;
    if (!p || !ps || !ctl_proxy_worker_enter(ps, t->tenant, &slot)) {
        gp_http_respond_error(resp, GP_EUNAVAIL,
                              "proxy: too many requests under way (at most %d, %d of a "
                              "tenant's); try again later",
                              PX_MAX_WORKERS, PX_MAX_PER_TENANT);
        free(p);
        free(t->head);
        free(t->body);
        free(t);
        return;
    }
    *p = (px_pass){.t = t, .ps = ps, .slot = slot, .fd = -1, .refs = 1, .client = -2};
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    p->dr = gp_http_defer(req, resp);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (!p->dr || pthread_create(&th, &attr, pass_main, p) != 0) {
        if (p->dr) {
            answer_error(p, GP_ENOMEM, 0, "proxy: no thread for the request");
        }
        ctl_proxy_worker_leave(ps, slot);
        pass_unref(p);
    }
    pthread_attr_destroy(&attr);
}
