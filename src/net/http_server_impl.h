/*
 * The HTTP server's private parts, shared by its files: http_server.c (requests, responses,
 * deferred answers, slow clients, the lifecycle) and http_stream.c (streamed bodies and
 * upgrades). Nothing outside src/net/http_*.c includes this.
 */
#ifndef GP_NET_HTTP_SERVER_IMPL_H
#define GP_NET_HTTP_SERVER_IMPL_H

#include "net/http_accept.h"
#include "net/http_server.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Per-connection memory beyond max_header (see start_daemon). */
#define HEAD_SLACK (16 * 1024)

/* One connection, for the slow-client watchdog; under the server's tlock. */
typedef struct conn_track {
    int fd;
    int64_t deadline_ms; /* monotonic; 0: none (a request is being handled or answered) */
    bool cut;            /* the watchdog shut it down */
    struct conn_track *prev, *next;
} conn_track;

struct gp_http_server {
    struct MHD_Daemon *mhd;
    gp_http_acceptor *acceptor; /* owns the listening socket; hands connections to mhd */
    gp_http_handler handler;
    void *ctx;
    size_t max_body;
    size_t (*body_limit)(void *ctx, const char *method, const char *path);
    size_t max_large_bodies; /* 0: no bound */
    size_t large_bodies;     /* declared bytes of the large bodies in progress (atomic) */
    size_t max_header;
    char max_header_setting[64]; /* "" when the config names none */
    int64_t timeout_ms;          /* time for a whole request; 0: none */
    int port;
    char *tls_cert; /* PEM text, kept for the daemon's lifetime */
    char *tls_key;
    pthread_mutex_t log_lock; /* guards starting and start_err */
    int starting;
    char start_err[256]; /* first MHD message while starting, for the diag */
    /* deferred answers, under dlock */
    pthread_mutex_t dlock;
    pthread_cond_t dcond;      /* resuming dropped to 0 */
    gp_http_deferred *pending; /* deferred and not answered yet */
    int handles;               /* handles not finished by their caller */
    int resuming;              /* MHD_resume_connection calls in progress */
    int draining;              /* connections stop resumed to send its 503, still open */
    int awaited;               /* pending handles stop waits for (gp_http_defer_awaited) */
    bool stopping;             /* no new deferrals */
    bool stopped;              /* MHD stopped: the last handle frees the server */
    /* streams and upgrades, under dlock */
    gp_http_stream *streams;    /* every stream whose response exists */
    gp_http_upgraded *upgrades; /* every upgraded connection not closed yet */
    /* the slow-client watchdog, under tlock */
    pthread_mutex_t tlock;
    pthread_cond_t tcond; /* watch_stop set */
    conn_track *tracks;   /* every open connection */
    bool watch_stop;
    bool watching; /* the watchdog thread was started */
    pthread_t watchdog;
};

struct gp_http_deferred {
    gp_http_server *srv;
    struct MHD_Connection *conn; /* NULL once MHD completed the request */
    gp_http_response resp;       /* the answer, once answered */
    gp_http_answer_fn build;     /* finish_with's builder of resp, until it is called */
    void *build_ctx;
    bool answered;                 /* resp holds the answer (from finish, or from stop) */
    bool suspended;                /* the connection is suspended and no resume was asked */
    bool suspending;               /* its thread is suspending it (outside dlock) */
    bool resume_asked;             /* answered while suspending: its thread resumes it */
    bool held;                     /* the caller has not finished it */
    bool draining;                 /* counted in srv->draining */
    bool awaited;                  /* stop waits for its answer (counted in srv->awaited) */
    gp_http_deferred *prev, *next; /* in srv->pending while not answered */
    gp_http_deferred *resume_next; /* stop's list of connections to resume */
};

struct gp_http_stream {
    gp_http_server *srv;
    struct MHD_Connection *conn;
    gp_http_stream_read read;
    void (*free_fn)(void *ctx);
    void *ctx;
    bool suspended;  /* the connection is suspended waiting for a wake */
    bool suspending; /* its thread is suspending it (outside dlock) */
    bool woken;      /* a wake came since the last read began */
    bool aborted;    /* the server stops: read no more */
    gp_http_stream *prev, *next;
    gp_http_stream *stop_next; /* stop's list of streams to resume */
};

/* An upgrade asked for: lives from the response's creation until the request completes. */
typedef struct upgrade_req {
    gp_http_server *srv;
    gp_http_upgrade_fn fn;
    void *ctx;
    bool fired; /* fn was called */
} upgrade_req;

struct gp_http_upgraded {
    gp_http_server *srv;
    struct MHD_UpgradeResponseHandle *urh;
    int fd;
    gp_http_upgraded *prev, *next;
};

/* Per-request state (MHD's con_cls). */
typedef struct conn_state {
    char *body;
    size_t len, cap;
    size_t limit;         /* this request's body limit (max_body or body_limit's) */
    size_t reserved;      /* its share of large_bodies, given back when it completes */
    size_t declared;      /* its Content-Length (at most limit) */
    size_t uri_len;       /* raw request target as sent (path and query) */
    char *target;         /* a copy of it (NULL when it could not be made) */
    size_t nparams;       /* query parameters in it */
    bool started;         /* on_headers ran */
    int answered;         /* a response is already queued */
    gp_http_deferred *dr; /* the handler deferred the answer */
    upgrade_req *up;      /* the answer is an upgrade */
} conn_state;

/* What gp_http_request.impl points to. */
typedef struct req_impl {
    struct MHD_Connection *conn;
    gp_http_server *srv;
    conn_state *st;
} req_impl;

/* ---- http_stream.c ---- */

/* The MHD response of a streamed answer: the stream takes resp's source (its free then runs
 * when MHD is done). NULL when out of memory (resp keeps the source). */
struct MHD_Response *gp__http_stream_response(gp_http_server *srv, struct MHD_Connection *conn,
                                              gp_http_response *resp);
/* The MHD response of an upgrade: st takes resp's taker. NULL when out of memory. */
struct MHD_Response *gp__http_upgrade_response(gp_http_server *srv, conn_state *st,
                                               gp_http_response *resp);
/* The request completes: a taker whose upgrade never happened is told (fd -1). */
void gp__http_upgrade_release(conn_state *st);
/* Stop, before MHD stops: waiting streams aborted and resumed; upgraded sockets shut down and
 * their takers' closes waited for. */
void gp__http_streams_stop(gp_http_server *srv);

#endif
