/*
 * The HTTP server's front door: it owns the listening socket, accepts connections, and hands a
 * connection to libmicrohttpd only once its first bytes look like what the port speaks (an HTTP
 * request line on a plain port, a TLS handshake record on a TLS port). A connection whose first
 * bytes are anything else (a TLS ClientHello on the plain port, binary garbage, plain HTTP on
 * the TLS port) is closed at once instead of being held by libmicrohttpd until its idle timeout,
 * which waits for a line end that may never come. A connection that sends nothing is closed
 * after the server's request timeout, as libmicrohttpd would.
 *
 * Private to src/net (http_server.c). One thread; the first bytes are only peeked (MSG_PEEK),
 * so libmicrohttpd reads the whole stream as the client sent it.
 */
#ifndef GP_NET_HTTP_ACCEPT_H
#define GP_NET_HTTP_ACCEPT_H

#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* What the first bytes of a connection say (gp_http_sniff). */
typedef enum gp_http_sniff_verdict {
    GP_SNIFF_MORE = 0, /* too few bytes to tell yet */
    GP_SNIFF_OK = 1,   /* the start of what the port speaks */
    GP_SNIFF_BAD = -1, /* something else: close */
} gp_http_sniff_verdict;

/* The most bytes gp_http_sniff needs to decide: past this many undecided bytes it says BAD. */
#define GP_HTTP_SNIFF_BYTES 32

/* Judges the first n bytes of a connection. Plain: optional empty lines (CR, LF), then a
 * method of 1..16 characters from A-Z, 0-9, '-', '_', then a space. TLS: a handshake record
 * (first byte 0x16). Pure. */
gp_http_sniff_verdict gp_http_sniff(const unsigned char *p, size_t n, bool tls);

typedef struct gp_http_acceptor gp_http_acceptor;

/* Hands over an accepted, non-blocking socket whose first bytes passed; takes ownership of fd
 * (closes it on failure too). */
typedef void (*gp_http_accept_fn)(void *ctx, int fd, const struct sockaddr *sa, socklen_t len);

/* Starts the accept thread on listen_fd (a listening, non-blocking socket, owned by the acceptor
 * from now on, even on failure). timeout_ms (> 0) bounds the wait for the first bytes. Returns
 * 0 and *out, or GP_EIO / GP_ENOMEM with *out NULL. */
int gp_http_acceptor_start(int listen_fd, bool tls, int64_t timeout_ms, gp_http_accept_fn hand,
                           void *ctx, gp_http_acceptor **out, gp_diag *d);
/* Stops the thread, closes the listening socket and every connection not handed over yet, and
 * frees the acceptor. Accepts NULL. */
void gp_http_acceptor_stop(gp_http_acceptor *a);

#endif
