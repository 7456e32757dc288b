/*
 * The accept thread (see http_accept.h). One epoll set holds the listening socket, an eventfd
 * that stops the thread, and the connections waiting for their first bytes. Those are watched
 * edge-triggered: the bytes are only peeked, so a level-triggered watch would fire again and
 * again while an undecided prefix ("GE") sits unread; each new arrival is one new edge.
 *
 * Invariants: a connection is in exactly one place (the waiting list, handed over, or closed);
 * the waiting list is touched by the thread only; at most MAX_WAITING connections wait (past
 * that a new one is closed at once, with a warning), so silent connections cannot hold an
 * unbounded number of descriptors.
 */
#define _GNU_SOURCE /* accept4 */
#include "net/http_accept.h"
#include "base/clock.h"
#include "base/log.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MAX_WAITING 4096
#define MAX_METHOD  16

typedef struct waiting {
    int fd;
    int64_t deadline_ms;
    struct sockaddr_storage addr;
    socklen_t addr_len;
    struct waiting *prev, *next;
} waiting;

struct gp_http_acceptor {
    int listen_fd, stop_fd, ep;
    bool tls;
    int64_t timeout_ms;
    gp_http_accept_fn hand;
    void *ctx;
    pthread_t thread;
    waiting *list;
    int nwaiting;
};

static bool method_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

gp_http_sniff_verdict gp_http_sniff(const unsigned char *p, size_t n, bool tls)
{
    if (n == 0) {
        return GP_SNIFF_MORE;
    }
    if (tls) {
        return p[0] == 0x16 ? GP_SNIFF_OK : GP_SNIFF_BAD;
    }
    size_t i = 0;
    while (i < n && (p[i] == '\r' || p[i] == '\n')) {
        i++;
    }
    size_t start = i;
    while (i < n && method_char(p[i]) && i - start < MAX_METHOD) {
        i++;
    }
    if (i < n) {
        return p[i] == ' ' && i > start ? GP_SNIFF_OK : GP_SNIFF_BAD;
    }
    return n >= GP_HTTP_SNIFF_BYTES ? GP_SNIFF_BAD : GP_SNIFF_MORE;
}

static void log_peer(const char *what, const waiting *w)
{
    char host[64] = "?";
    getnameinfo((const struct sockaddr *)&w->addr, w->addr_len, host, sizeof(host), NULL, 0,
                NI_NUMERICHOST);
    GP_LOG(GP_LOG_WARN, "http", "connection closed: peer=%s %s", host, what);
}

static void unlink_waiting(gp_http_acceptor *a, waiting *w)
{
    if (w->prev) {
        w->prev->next = w->next;
    } else {
        a->list = w->next;
    }
    if (w->next) {
        w->next->prev = w->prev;
    }
    a->nwaiting--;
    epoll_ctl(a->ep, EPOLL_CTL_DEL, w->fd, NULL);
}

/* Ends w's wait: hands its socket over or closes it. */
static void finish(gp_http_acceptor *a, waiting *w, bool hand)
{
    unlink_waiting(a, w);
    if (hand) {
        a->hand(a->ctx, w->fd, (const struct sockaddr *)&w->addr, w->addr_len);
    } else {
        close(w->fd);
    }
    free(w);
}

static void judge(gp_http_acceptor *a, waiting *w)
{
    unsigned char buf[GP_HTTP_SNIFF_BYTES];
    ssize_t n = recv(w->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        return;
    }
    if (n <= 0) { /* gone before a byte came */
        finish(a, w, false);
        return;
    }
    gp_http_sniff_verdict v = gp_http_sniff(buf, (size_t)n, a->tls);
    if (v == GP_SNIFF_BAD) {
        log_peer(a->tls ? "first bytes are not a TLS handshake"
                        : "first bytes are not an HTTP request",
                 w);
    }
    if (v != GP_SNIFF_MORE) {
        finish(a, w, v == GP_SNIFF_OK);
    }
}

static void accept_all(gp_http_acceptor *a)
{
    for (;;) {
        waiting *w = calloc(1, sizeof(*w));
        if (!w) {
            return;
        }
        w->addr_len = sizeof(w->addr);
        w->fd = accept4(a->listen_fd, (struct sockaddr *)&w->addr, &w->addr_len,
                        SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (w->fd < 0) {
            free(w);
            return; /* EAGAIN, or an error the next readiness retries */
        }
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = w};
        if (a->nwaiting >= MAX_WAITING || epoll_ctl(a->ep, EPOLL_CTL_ADD, w->fd, &ev) != 0) {
            log_peer("too many connections waiting for their first bytes", w);
            close(w->fd);
            free(w);
            continue;
        }
        w->deadline_ms = gp_mono_ms() + a->timeout_ms;
        w->next = a->list;
        if (a->list) {
            a->list->prev = w;
        }
        a->list = w;
        a->nwaiting++;
        judge(a, w); /* the bytes may be there already */
    }
}

static void expire(gp_http_acceptor *a)
{
    int64_t now = gp_mono_ms();
    waiting *w = a->list;
    while (w) {
        waiting *next = w->next;
        if (now >= w->deadline_ms) {
            log_peer("no request within the timeout", w);
            finish(a, w, false);
        }
        w = next;
    }
}

static void *accept_main(void *arg)
{
    gp_http_acceptor *a = arg;
    struct epoll_event evs[64];
    int tick = (int)(a->timeout_ms / 4 < 50     ? 50
                     : a->timeout_ms / 4 > 1000 ? 1000
                                                : a->timeout_ms / 4);
    for (;;) {
        int n = epoll_wait(a->ep, evs, 64, a->list ? tick : -1);
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &a->stop_fd) {
                return NULL;
            }
            if (p == &a->listen_fd) {
                accept_all(a);
            } else {
                judge(a, p);
            }
        }
        expire(a);
    }
}

static int add_fd(int ep, int fd, void *tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

int gp_http_acceptor_start(int listen_fd, bool tls, int64_t timeout_ms, gp_http_accept_fn hand,
                           void *ctx, gp_http_acceptor **out, gp_diag *d)
{
    *out = NULL;
    gp_http_acceptor *a = calloc(1, sizeof(*a));
    if (!a) {
        close(listen_fd);
        return gp_diag_set(d, GP_ENOMEM, "http server: out of memory");
    }
    *a = (gp_http_acceptor){
        .listen_fd = listen_fd, .tls = tls, .timeout_ms = timeout_ms, .hand = hand, .ctx = ctx};
    a->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    a->ep = epoll_create1(EPOLL_CLOEXEC);
    int rc = 0;
    if (a->stop_fd < 0 || a->ep < 0 || add_fd(a->ep, listen_fd, &a->listen_fd) != 0 ||
        add_fd(a->ep, a->stop_fd, &a->stop_fd) != 0) {
        rc = gp_diag_set(d, GP_EIO, "http server: accept thread: %s", strerror(errno));
    } else if ((rc = pthread_create(&a->thread, NULL, accept_main, a)) != 0) {
        rc = gp_diag_set(d, GP_EIO, "http server: accept thread: %s", strerror(rc));
    }
    if (rc != 0) {
        close(listen_fd);
        if (a->stop_fd >= 0) {
            close(a->stop_fd);
        }
        if (a->ep >= 0) {
            close(a->ep);
        }
        free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void gp_http_acceptor_stop(gp_http_acceptor *a)
{
    if (!a) {
        return;
    }
    uint64_t one = 1;
    if (write(a->stop_fd, &one, sizeof(one)) != sizeof(one)) {
        GP_LOG(GP_LOG_ERROR, "http", "accept thread: stop signal failed: %s", strerror(errno));
    }
    pthread_join(a->thread, NULL);
    while (a->list) {
        finish(a, a->list, false);
    }
    close(a->listen_fd);
    close(a->stop_fd);
    close(a->ep);
    free(a);
}
