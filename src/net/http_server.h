/*
 * HTTP server: a thin wrapper over libmicrohttpd that carries gpupoold's JSON API.
 *
 * The wrapper does transport only: it listens (optionally with TLS), reads each request's whole
 * body up to its limit (cfg.max_body, or what cfg.body_limit says for that request), calls one
 * handler with the complete request, and sends what the handler put in the response: a body, a body
 * streamed from a source as it comes ("Streamed bodies"), or a protocol upgrade that hands the
 * handler's taker the socket ("Upgrades"). Routing, methods, authentication and parsing are the
 * handler's business. A body larger than its limit (known from Content-Length) is answered 413 with
 * the API's error shape and the handler is never called; a chunked request body is refused at once
 * (413, connection closed). The body's buffer grows as its bytes arrive (doubling, up to the
 * Content-Length), so a connection holds about what its client has sent, not what its
 * Content-Length announces.
 *
 * Limits on clients, all answered before the handler is called:
 *   - a request line over GP_HTTP_MAX_URI bytes or a query of more than
 *     GP_HTTP_MAX_QUERY_PARAMS parameters is answered 414 (code GP_ETOOBIG);
 *   - a connection whose first bytes are not an HTTP request line (or, on a TLS port, not a TLS
 *     handshake) is closed at once (http_accept.h);
 *   - a request head (request line and header fields) larger than max_header is answered 431
 *     with the API's error shape (code GP_ETOOBIG) before its body is read. libmicrohttpd keeps
 *     a head in a per-connection buffer of max_header plus 16 KiB; a head too large for even
 *     that is answered 431 by libmicrohttpd itself (its own short HTML body). A head within a
 *     few hundred bytes of filling that buffer leaves libmicrohttpd no room to answer at all,
 *     and the connection is closed (libmicrohttpd 0.9.75);
 *   - slow clients: a connection must deliver each whole request (head and body) within
 *     timeout_s of its opening or of the end of its previous answer, and is closed otherwise,
 *     however it trickles bytes in meanwhile (libmicrohttpd's own timeout only closes
 *     connections that are silent for timeout_s). The time the handler takes, or a deferred
 *     request waits, does not count. A watchdog thread checks a few times per timeout_s, so a
 *     connection is closed within about timeout_s + timeout_s/4.
 *
 * Threads: the server runs a pool of cfg.threads threads (epoll), each serving many connections.
 * The handler runs on these threads, concurrently with itself, and may block (e.g. until a group
 * commit): while it does, the other connections of that thread wait, so size the pool for the
 * number of handlers expected to block at once. A handler that must wait long (a long-poll)
 * defers its answer instead (gp_http_defer below): the request then holds no thread while it
 * waits. gp_http_server_port may be called from any thread; gp_http_server_stop from one
 * thread, once, not from a handler.
 *
 * Ownership: the request and everything it points to are borrowed for the duration of the
 * handler call. The response's body becomes the wrapper's when set (it is freed with free());
 * extra headers are copied. gp_http_server_start copies what it needs from the config.
 */
#ifndef GP_NET_HTTP_SERVER_H
#define GP_NET_HTTP_SERVER_H

#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>

/* How many extra headers (Location, Retry-After, ...) one response may carry (a proxied answer
 * carries the upstream's). */
#define GP_HTTP_MAX_HEADERS 32

/* The largest request head accepted when the config sets none, and the most max_header may be
 * (bytes): each connection reserves max_header plus 16 KiB. */
#define GP_HTTP_MAX_HEADER       (64 * 1024)
#define GP_HTTP_MAX_HEADER_LIMIT (1024 * 1024)

/* The longest request line (method, space, request target with its query; the version is not
 * counted) and the most query parameters accepted: past either, 414 with the API's error shape
 * before the headers are judged. A request line past even libmicrohttpd's buffer (max_header
 * plus 16 KiB) gets libmicrohttpd's own 414. */
#define GP_HTTP_MAX_URI          8192
#define GP_HTTP_MAX_QUERY_PARAMS 64

typedef struct gp_http_server gp_http_server;

typedef struct gp_http_server_config {
    const char *host;  /* numeric address or name to bind; NULL means "127.0.0.1" */
    int port;          /* 0 picks a free port: see gp_http_server_port() */
    int threads;       /* pool size; <= 0 means 4 */
    size_t max_body;   /* largest request body accepted, in bytes */
    size_t max_header; /* largest request head accepted, in bytes; 0: GP_HTTP_MAX_HEADER */
    const char *max_header_setting; /* what sets max_header, named in the 431's message
                                       ("http.max_header_bytes"); NULL: none named */
    unsigned timeout_s;        /* time to send a request, and idle timeout, in s; 0 means none */
    const char *tls_cert_file; /* PEM certificate chain; with tls_key_file, enables HTTPS */
    const char *tls_key_file;  /* PEM private key (unencrypted) */
    /* Optional: the largest body accepted for one request, when some paths need another limit
     * than max_body (a proxy's). Called once per request when its head is in, before its body
     * is read, on a pool thread (concurrently with itself), with the handler's ctx and the
     * request's method and path (as gp_http_request has them); 0 means max_body. Must not
     * block. NULL: max_body for every request. */
    size_t (*body_limit)(void *ctx, const char *method, const char *path);
    /* Optional: the most bytes that bodies above max_body (declared by their Content-Length)
     * may add up to over the requests in progress at once, from their head until their answer
     * is sent. A large body past it is answered 503 (GP_EUNAVAIL, Retry-After: 1) before it is
     * read, so clients that are not even authenticated yet cannot make the server hold more.
     * 0: no bound. */
    size_t max_large_bodies;
} gp_http_server_config;

/* One complete request, borrowed by the handler for the duration of the call. */
typedef struct gp_http_request {
    const char *method; /* "GET", "POST", ... as sent */
    const char *path;   /* percent-decoded path without the query string ("%00" is left
                           undecoded, here and in query values: a NUL never cuts them short) */
    const char *body;   /* body plus a terminating NUL (the body may contain NULs); "" if none */
    size_t body_len;    /* body length without the terminating NUL */
    const char *remote_addr; /* numeric address of the peer, e.g. "127.0.0.1" or "::1" */
    size_t header_bytes;     /* size of the request head: request line and header fields */
    const char *target;      /* the request target as sent: path and query, not decoded */
    bool tls;                /* it came over TLS */
    void *impl;              /* private to the wrapper */
} gp_http_request;

typedef struct gp_http_stream gp_http_stream;

/* A streamed body's source (see "Streamed bodies" below). read copies up to max bytes into buf
 * and returns how many (> 0), 0 when it has none yet, GP_HTTP_STREAM_END at the end of the body,
 * or another negative value to abort (the connection is closed mid-body). free is called exactly
 * once when the wrapper is done with the source (body sent, aborted, client gone, server
 * stopped, or the response never sent). */
#define GP_HTTP_STREAM_END (-1000)
typedef long (*gp_http_stream_read)(void *ctx, gp_http_stream *stream, char *buf, size_t max);

/* An upgrade's taker (see "Upgrades" below): called once, with the connection's socket (fd >= 0)
 * after the 101 was sent, or with fd -1 when the upgrade will not happen (client gone, server
 * stopping); extra holds bytes the client sent after its request head (to be treated as the
 * first bytes read from fd). */
typedef struct gp_http_upgraded gp_http_upgraded;
typedef void (*gp_http_upgrade_fn)(void *ctx, int fd, const char *extra, size_t extra_len,
                                   gp_http_upgraded *h);

/* What the handler answers. All fields start zeroed except content_type. A status left at 0, or
 * outside 100..599, is answered 500 GP_EINTERNAL ("handler set no status") instead. */
typedef struct gp_http_response {
    int status;               /* HTTP status, e.g. 200 */
    char *body;               /* malloc'd; owned (and freed) by the wrapper; may be NULL */
    size_t body_len;          /* bytes of body to send */
    const char *content_type; /* static storage; default "application/json"; sent if a body */
    int nheaders;
    char *header_name[GP_HTTP_MAX_HEADERS]; /* copies made by gp_http_response_add_header */
    char *header_value[GP_HTTP_MAX_HEADERS];
    /* A streamed body instead of body (set with gp_http_response_set_stream): */
    gp_http_stream_read stream_read;
    void (*stream_free)(void *ctx);
    void *stream_ctx;
    long long stream_len; /* bytes it will give, -1: unknown (chunked to HTTP/1.1 clients) */
    /* An upgrade (set with gp_http_response_set_upgrade): */
    gp_http_upgrade_fn upgrade;
    void *upgrade_ctx;
} gp_http_response;

/* Called once per request, after the whole body is in, on a pool thread. */
typedef void (*gp_http_handler)(void *ctx, const gp_http_request *req, gp_http_response *resp);

/* Value of query parameter `name` (case-sensitive, percent-decoded, '+' read as a space), "" for
 * a parameter without '=', NULL if absent. The first one wins if repeated. Borrowed like req. */
const char *gp_http_request_query(const gp_http_request *req, const char *name);
/* Value of header `name` (name compared case-insensitively), NULL if absent. Borrowed. */
const char *gp_http_request_header(const gp_http_request *req, const char *name);
/* Whether a Prefer header's value (RFC 7240; NULL: none) asks for the preference name with the
 * value (NULL: any value, or none): gp_http_prefers(h, "return", "minimal"). The first
 * preference of that name decides; names and the value compare case-insensitively; a quoted
 * value is unquoted; parameters after ';' are ignored. Pure (src/net/http_prefer.c). */
bool gp_http_prefers(const char *prefer, const char *name, const char *value);
/* Takes the request's body buffer: the caller owns it (free() it), and *len is its length (a
 * NUL follows it). NULL with *len 0 when the request has no body (or it was taken already).
 * Afterwards req->body must not be read (it pointed into the buffer). Saves a copy when the
 * handler keeps the body past its call (a deferred answer). */
char *gp_http_request_take_body(const gp_http_request *req, size_t *len);
/* Calls fn for each header field of req in the order sent (repeated fields one by one); stops
 * when fn returns non-zero. Name and value are borrowed like req. */
void gp_http_request_each_header(const gp_http_request *req,
                                 int (*fn)(void *ctx, const char *name, const char *value),
                                 void *ctx);

/* Sets status and body; the response takes ownership of body (malloc'd, or NULL) and frees the
 * body it held before. content_type NULL keeps the current one. */
void gp_http_response_set_body(gp_http_response *resp, int status, const char *content_type,
                               char *body, size_t len);
/* Adds an extra header (copies both strings). Returns 0, GP_EINVAL for an empty name or a CR or
 * LF in either string, GP_ENOSPC past GP_HTTP_MAX_HEADERS, GP_ENOMEM. */
int gp_http_response_add_header(gp_http_response *resp, const char *name, const char *value);
/* Answers an error in the API's one shape,
 *   {"error": {"code": "GP_EINVAL", "message": "replicas: must be between 1 and 4096"}}
 * with status gp_error_http_status(code). The message is printf-formatted and JSON-escaped.
 * Returns 0, or GP_ENOMEM (the response then carries the status and no body). */
int gp_http_respond_error(gp_http_response *resp, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same from a diag: its code and message. */
int gp_http_respond_diag(gp_http_response *resp, const gp_diag *d);

/* ---- Streamed bodies ----
 *
 * A response whose body is produced while it is sent (a proxy passing on what its upstream
 * sends). gp_http_response_set_stream sets status and source (dropping any body; the source's
 * free is then the response's to call: it runs even when the response is replaced or never
 * sent). When the wrapper sends the body, it calls read on the connection's pool thread. When
 * read returns 0 the connection is suspended (it holds no thread and does not time out) until
 * the source calls gp_http_stream_wake(stream) from any thread: call it whenever data may have
 * come after a read that returned 0 (a wake before the suspension is not lost). wake may be
 * called until free is called, not during or after: a source calls wake under a lock its free
 * also takes. gp_http_server_stop aborts the streams still suspended (read is not called again;
 * free is). The response carries a Content-Length when stream_len >= 0, else the chunked coding
 * (HTTP/1.1) or the end of the connection (HTTP/1.0) ends the body. A streamed response has a
 * Content-Type only when content_type is set (a proxy may pass its upstream's as a header). */
void gp_http_response_set_stream(gp_http_response *resp, int status, const char *content_type,
                                 long long len, gp_http_stream_read read, void (*free_fn)(void *),
                                 void *ctx);
void gp_http_stream_wake(gp_http_stream *stream);

/* ---- Upgrades ----
 *
 * gp_http_response_set_upgrade makes resp a 101 Switching Protocols; add the Upgrade header
 * (e.g. "websocket") and any other the protocol needs. Once the 101 is sent, fn gets the
 * connection's socket (in blocking mode) on a pool thread and must return at once (hand the socket
 * to a thread of its own). The socket is the caller's to read and write (on a TLS port the wrapper
 * relays it: the caller sees plain bytes) until it calls gp_http_upgraded_close(h), exactly once,
 * from any thread; never close(fd) itself. gp_http_server_stop shuts the sockets of the upgrades
 * still open down (reads then see the end of the stream) and waits until every one is closed with
 * gp_http_upgraded_close. fn is called with fd -1 (h NULL) when the upgrade does not happen. */
void gp_http_response_set_upgrade(gp_http_response *resp, gp_http_upgrade_fn fn, void *ctx);
void gp_http_upgraded_close(gp_http_upgraded *h);

/* ---- Deferred answers ----
 *
 * A handler that cannot answer yet (it waits for a change) calls gp_http_defer and returns; the
 * connection is suspended and its pool thread serves other connections meanwhile. Later any
 * thread answers with gp_http_deferred_finish; the connection is resumed on its pool thread and
 * the answer sent.
 *
 *   - gp_http_defer is called from the handler, at most once per request. On success the
 *     wrapper ignores resp (what it holds is freed when the handler returns) and the request
 *     (req and all it points to) is gone once the handler returns: copy what the answer needs.
 *   - The handle is the caller's until gp_http_deferred_finish, which must be called exactly
 *     once per handle, from any thread, even from the handler itself before it returns (the
 *     answer is then sent as if never deferred). A handle never finished is leaked and keeps its
 *     connection open until the server stops.
 *   - A client that goes away is not noticed while its request waits (MHD does not watch a
 *     suspended connection): the answer goes nowhere and everything is freed once sent.
 *   - gp_http_server_stop answers every request still deferred 503 GP_EUNAVAIL ("the server is
 *     stopping") and closes its connection without waiting for the handle's owner, except those
 *     deferred with gp_http_defer_awaited, whose owner's answer it waits for and sends. Handles
 * still held stay valid: finishing them afterwards only frees them (the last one frees what is left
 *     of the stopped server). */
typedef struct gp_http_deferred gp_http_deferred;

/* Defers the answer of req (see above). Returns the handle, or NULL with resp already set to an
 * error (503 GP_EUNAVAIL when the server is stopping, 500 when out of memory or called twice):
 * the handler then just returns. */
gp_http_deferred *gp_http_defer(const gp_http_request *req, gp_http_response *resp);
/* The same for an answer stop must not replace: one that says whether a change was made (a 503
 * would tell the client it was not). gp_http_server_stop waits until such a request is finished
 * by its owner (or its client went away) and sends that answer, instead of answering it 503: the
 * owner must finish it whatever happens, and soon. */
gp_http_deferred *gp_http_defer_awaited(const gp_http_request *req, gp_http_response *resp);
/* Answers a deferred request with resp (status, body, headers, as a handler sets them) and ends
 * the caller's hold on the handle (dr is invalid afterwards). What resp holds becomes the
 * wrapper's: resp is left empty. Safe after the client went away or the server stopped. */
void gp_http_deferred_finish(gp_http_deferred *dr, gp_http_response *resp);

/* Builds a deferred request's answer (gp_http_deferred_finish_with): fills resp as a handler
 * would (content_type starts "application/json"). Called with resp NULL when the answer goes
 * nowhere (the server answered 503 when stopping, or the connection closed first): it then only
 * frees what ctx holds. */
typedef void (*gp_http_answer_fn)(void *ctx, gp_http_response *resp);
/* As gp_http_deferred_finish, but the answer is built by build(ctx, resp) on the connection's
 * pool thread just before it is sent, so that the finishing thread (one that must stay quick)
 * does not build it. build is called exactly once, perhaps before this returns (resp NULL when
 * the answer goes nowhere). */
void gp_http_deferred_finish_with(gp_http_deferred *dr, gp_http_answer_fn build, void *ctx);

/* Binds, listens and starts the pool. handler and ctx must stay valid until
 * gp_http_server_stop returns. Returns 0 and *out, or GP_EINVAL (bad config), GP_EIO (e.g.
 * "listen 127.0.0.1:7070: Address already in use", unreadable TLS files, start failure),
 * GP_ENOTSUP (TLS asked but libmicrohttpd built without it), GP_ENOMEM; *out is then NULL. */
int gp_http_server_start(const gp_http_server_config *cfg, gp_http_handler handler, void *ctx,
                         gp_http_server **out, gp_diag *d);
/* The port actually listened on (the chosen one when cfg.port was 0). */
int gp_http_server_port(const gp_http_server *srv);
/* Stops accepting, answers the deferred requests (see above), waits for the handlers in flight
 * to return, closes every connection and frees the server (what deferred handles still held
 * need lives on until they are finished). Accepts NULL. */
void gp_http_server_stop(gp_http_server *srv);

#endif
