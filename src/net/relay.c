/*
 * Relay between two sockets (contract in relay.h): one poll loop over both, each direction
 * copied through a small buffer; a direction whose source ended is half-closed on its sink.
 */
#include "net/relay.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_BUF (64 * 1024)

static bool write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* TCP options, set where they apply (not on a Unix socket; errors ignored). */
static void tcp_opt(int fd, int opt)
{
    int on = 1;
    (void)setsockopt(fd, IPPROTO_TCP, opt, &on, sizeof(on));
}

/* One piece from `from` to `to`: 1 passed, 0 at the end of from's stream, -1 on an error. The
 * read is acknowledged at once (Linux resets TCP_QUICKACK as it goes): a sender that writes an
 * answer's head and body apart (Nagle's algorithm on a kept connection) would otherwise wait
 * for the delayed ACK, some 40 ms, before its second write comes. */
static int pass(int from, int to, char *buf)
{
    ssize_t n = recv(from, buf, RELAY_BUF, 0);
    tcp_opt(from, TCP_QUICKACK);
    if (n < 0 && errno == EINTR) {
        return 1;
    }
    if (n < 0) {
        return -1;
    }
    if (n == 0) {
        shutdown(to, SHUT_WR);
        return 0;
    }
    return write_all(to, buf, (size_t)n) ? 1 : -1;
}

void gp_relay_run(int a, int b, const char *first, size_t first_len, void (*on_data)(void *ctx),
                  void *ctx)
{
    char *buf = malloc(RELAY_BUF);
    if (!buf || (first_len > 0 && !write_all(b, first, first_len))) {
        free(buf);
        return;
    }
    tcp_opt(a, TCP_NODELAY); /* each piece passed on as it comes */
    tcp_opt(b, TCP_NODELAY);
    bool a_open = true, b_open = true; /* a -> b, b -> a */
    while (a_open || b_open) {
        struct pollfd p[2] = {{.fd = a_open ? a : -1, .events = POLLIN},
                              {.fd = b_open ? b : -1, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            int r = i == 0 ? pass(a, b, buf) : pass(b, a, buf);
            if (r < 0) {
                a_open = b_open = false;
                break;
            }
            if (r == 0) {
                *(i == 0 ? &a_open : &b_open) = false;
            } else if (on_data) {
                on_data(ctx);
            }
        }
    }
    free(buf);
}
