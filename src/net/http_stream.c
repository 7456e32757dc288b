/*
 * The HTTP server's streamed bodies and upgrades (contracts in http_server.h; how they meet
 * MHD's suspensions and its lock in http_server.c's opening comment).
 */
#include "net/http_server_impl.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static void stream_unlink(gp_http_server *srv, gp_http_stream *x)
{
    if (x->prev) {
        x->prev->next = x->next;
    } else {
        srv->streams = x->next;
    }
    if (x->next) {
        x->next->prev = x->prev;
    }
}

/* MHD's content reader: the source's bytes, or a suspension until its wake. */
static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    gp_http_stream *x = cls;
    gp_http_server *srv = x->srv;
    pthread_mutex_lock(&srv->dlock);
    bool aborted = x->aborted;
    x->woken = false;
    pthread_mutex_unlock(&srv->dlock);
    if (aborted) {
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    long n = x->read(x->ctx, x, buf, max);
    if (n > 0) {
        return (ssize_t)(n > (long)max ? (long)max : n);
    }
    if (n == GP_HTTP_STREAM_END) {
        return MHD_CONTENT_READER_END_OF_STREAM;
    }
    if (n < 0) {
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    pthread_mutex_lock(&srv->dlock);
    if (x->aborted) {
        pthread_mutex_unlock(&srv->dlock);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    bool go = !x->woken;
    x->suspending = go;
    pthread_mutex_unlock(&srv->dlock);
    if (go) { /* outside dlock, as in deferred_step */
        MHD_suspend_connection(x->conn);
        pthread_mutex_lock(&srv->dlock);
        x->suspending = false;
        bool again = x->woken || x->aborted; /* a wake or stop came meanwhile */
        x->suspended = !again;
        pthread_mutex_unlock(&srv->dlock);
        if (again) {
            MHD_resume_connection(x->conn);
        }
    }
    return 0; /* called again once resumed (at once when a wake came meanwhile) */
}

static void stream_done(void *cls)
{
    gp_http_stream *x = cls;
    gp_http_server *srv = x->srv;
    if (x->free_fn) {
        x->free_fn(x->ctx); /* no wake is in progress or made after this */
    }
    pthread_mutex_lock(&srv->dlock);
    stream_unlink(srv, x);
    pthread_mutex_unlock(&srv->dlock);
    free(x);
}

void gp_http_stream_wake(gp_http_stream *x)
{
    gp_http_server *srv = x->srv;
    pthread_mutex_lock(&srv->dlock);
    bool resume = x->suspended && !x->aborted;
    x->suspended = false;
    x->woken = true;
    srv->resuming += resume;
    pthread_mutex_unlock(&srv->dlock);
    if (resume) {
        MHD_resume_connection(x->conn);
        pthread_mutex_lock(&srv->dlock);
        if (--srv->resuming == 0) {
            pthread_cond_broadcast(&srv->dcond);
        }
        pthread_mutex_unlock(&srv->dlock);
    }
}

struct MHD_Response *gp__http_stream_response(gp_http_server *srv, struct MHD_Connection *conn,
                                              gp_http_response *resp)
{
    gp_http_stream *x = calloc(1, sizeof(*x));
    if (!x) {
        return NULL;
    }
    *x = (gp_http_stream){.srv = srv,
                          .conn = conn,
                          .read = resp->stream_read,
                          .free_fn = resp->stream_free,
                          .ctx = resp->stream_ctx};
    uint64_t size = resp->stream_len >= 0 ? (uint64_t)resp->stream_len : MHD_SIZE_UNKNOWN;
    struct MHD_Response *r =
        MHD_create_response_from_callback(size, 16 * 1024, stream_reader, x, stream_done);
    if (!r) {
        free(x);
        return NULL;
    }
    resp->stream_read = NULL; /* the stream's now: stream_done frees it */
    resp->stream_free = NULL;
    resp->stream_ctx = NULL;
    pthread_mutex_lock(&srv->dlock);
    x->next = srv->streams;
    if (srv->streams) {
        srv->streams->prev = x;
    }
    srv->streams = x;
    pthread_mutex_unlock(&srv->dlock);
    return r;
}

static void upgraded_unlink(gp_http_server *srv, gp_http_upgraded *h)
{
    if (h->prev) {
        h->prev->next = h->next;
    } else {
        srv->upgrades = h->next;
    }
    if (h->next) {
        h->next->prev = h->prev;
    }
}

static void on_upgrade(void *cls, struct MHD_Connection *conn, void *con_cls, const char *extra,
                       size_t extra_len, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
    (void)cls;
    (void)conn;
    conn_state *st = con_cls;
    upgrade_req *u = st ? st->up : NULL;
    if (!u) { /* cannot happen: the response was made with the request's state */
        MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
        return;
    }
    u->fired = true;
    gp_http_upgraded *h = calloc(1, sizeof(*h));
    if (!h) {
        MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
        u->fn(u->ctx, -1, NULL, 0, NULL);
        return;
    }
    gp_http_server *srv = u->srv;
    *h = (gp_http_upgraded){.srv = srv, .urh = urh, .fd = sock};
    int fl = fcntl(sock, F_GETFL);
    if (fl >= 0) {
        (void)fcntl(sock, F_SETFL, fl & ~O_NONBLOCK); /* the taker's, blocking */
    }
    pthread_mutex_lock(&srv->dlock);
    h->next = srv->upgrades;
    if (srv->upgrades) {
        srv->upgrades->prev = h;
    }
    srv->upgrades = h;
    pthread_mutex_unlock(&srv->dlock);
    u->fn(u->ctx, sock, extra, extra_len, h);
}

void gp_http_upgraded_close(gp_http_upgraded *h)
{
    gp_http_server *srv = h->srv;
    MHD_upgrade_action(h->urh, MHD_UPGRADE_ACTION_CLOSE);
    pthread_mutex_lock(&srv->dlock);
    upgraded_unlink(srv, h);
    if (!srv->upgrades) {
        pthread_cond_broadcast(&srv->dcond);
    }
    pthread_mutex_unlock(&srv->dlock);
    free(h);
}

struct MHD_Response *gp__http_upgrade_response(gp_http_server *srv, conn_state *st,
                                               gp_http_response *resp)
{
    upgrade_req *u = calloc(1, sizeof(*u));
    struct MHD_Response *r = u ? MHD_create_response_for_upgrade(on_upgrade, NULL) : NULL;
    if (!r) {
        free(u);
        return NULL;
    }
    *u = (upgrade_req){.srv = srv, .fn = resp->upgrade, .ctx = resp->upgrade_ctx};
    resp->upgrade = NULL; /* the request's now: fired, or told -1 when it completes */
    resp->upgrade_ctx = NULL;
    st->up = u;
    return r;
}

/* The request completes: an upgrade that never happened tells its taker. */
void gp__http_upgrade_release(conn_state *st)
{
    upgrade_req *u = st->up;
    if (u && !u->fired) {
        u->fn(u->ctx, -1, NULL, 0, NULL);
    }
    free(u);
    st->up = NULL;
}

/* Stop, before MHD stops: streams waiting for data are aborted and resumed; upgraded sockets are
 * shut down and their takers' closes waited for. */
void gp__http_streams_stop(gp_http_server *srv)
{
    gp_http_stream *resume = NULL;
    pthread_mutex_lock(&srv->dlock);
    for (gp_http_stream *x = srv->streams; x; x = x->next) {
        x->aborted = true;
        if (x->suspended) { /* it stays suspended, so alive, until resumed below */
            x->suspended = false;
            x->stop_next = resume;
            resume = x;
        }
    }
    pthread_mutex_unlock(&srv->dlock);
    while (resume) {
        gp_http_stream *next = resume->stop_next; /* read before: resumed, it may be freed */
        MHD_resume_connection(resume->conn);
        resume = next;
    }
    pthread_mutex_lock(&srv->dlock);
    for (gp_http_upgraded *h = srv->upgrades; h; h = h->next) {
        shutdown(h->fd, SHUT_RDWR);
    }
    while (srv->upgrades) {
        pthread_cond_wait(&srv->dcond, &srv->dlock);
    }
    pthread_mutex_unlock(&srv->dlock);
}
