/*
 * HTTP server: streamed bodies and upgrades, end to end on 127.0.0.1. A stream whose source has
 * nothing yet suspends its connection until the source wakes it (chunked and with a length, from
 * the handler and from a deferred answer); an upgrade hands the socket (with the bytes the
 * client sent after its head) to its taker, which echoes, also on a TLS port (the wrapper relays
 * the session; the taker sees plain bytes); stop aborts a waiting stream and shuts an open
 * upgrade down, and every source and taker is released exactly once.
 */
#define _DEFAULT_SOURCE /* usleep */
#include "gpupool/error.h"
#include "net/http_server.h"
#include "tests/unit/harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* A source fed by a producer thread: pieces appended under lock, then wake. */
typedef struct feed {
    pthread_mutex_t lock;
    char buf[256];
    size_t len, off;
    bool end;
    gp_http_stream *stream; /* known after the first read */
    bool freed;
    atomic_int *frees;
} feed;

static atomic_int g_frees;
static atomic_int g_upgrade_gone;
static atomic_int g_echoes; /* echo takers still running */

static long feed_read(void *ctx, gp_http_stream *stream, char *buf, size_t max)
{
    feed *f = ctx;
    pthread_mutex_lock(&f->lock);
    f->stream = stream;
    long n = 0;
    if (f->off < f->len) {
        n = (long)(f->len - f->off < max ? f->len - f->off : max);
        memcpy(buf, f->buf + f->off, (size_t)n);
        f->off += (size_t)n;
    } else if (f->end) {
        n = GP_HTTP_STREAM_END;
    }
    pthread_mutex_unlock(&f->lock);
    return n;
}

static void feed_free(void *ctx)
{
    feed *f = ctx;
    pthread_mutex_lock(&f->lock);
    f->freed = true;
    f->stream = NULL;
    pthread_mutex_unlock(&f->lock);
    atomic_fetch_add(&g_frees, 1);
}

/* Appends text (end: and ends the body) and wakes the stream if it read already. */
static void feed_put(feed *f, const char *text, bool end)
{
    pthread_mutex_lock(&f->lock);
    size_t n = strlen(text);
    memcpy(f->buf + f->len, text, n);
    f->len += n;
    f->end = end;
    if (f->stream && !f->freed) {
        gp_http_stream_wake(f->stream);
    }
    pthread_mutex_unlock(&f->lock);
}

static void *producer_main(void *arg)
{
    feed *f = arg;
    usleep(100 * 1000); /* the connection is suspended by now (or the wake is kept) */
    feed_put(f, "second,", false);
    usleep(50 * 1000);
    feed_put(f, "third", true);
    return NULL;
}

typedef struct srv_ctx {
    feed feed;
    pthread_t producer;
    bool producing;
    gp_http_deferred *dr;
    bool known_len;
} srv_ctx;

/* An upgrade's taker: echoes what it reads (the extra bytes first) until the end. */
typedef struct echo_up {
    int fd;
    gp_http_upgraded *h;
    char extra[64];
    size_t extra_len;
} echo_up;

static void *echo_main(void *arg)
{
    echo_up *e = arg;
    if (e->extra_len) {
        send(e->fd, e->extra, e->extra_len, MSG_NOSIGNAL);
    }
    char buf[256];
    ssize_t n;
    while ((n = recv(e->fd, buf, sizeof(buf), 0)) > 0 &&
           !(n >= 4 && memcmp(buf + n - 4, "bye!", 4) == 0)) {
        send(e->fd, buf, (size_t)n, MSG_NOSIGNAL);
    }
    gp_http_upgraded_close(e->h);
    free(e);
    atomic_fetch_sub(&g_echoes, 1);
    return NULL;
}

/* Waits until every echo taker has seen its client's end (or "bye!") and closed its upgrade: a
 * server stopped before that closes the sockets under the taker's feet (stopping with open
 * upgrades is test_stop_with_open_streams's case, not these tests'). */
static void wait_echoes_done(void)
{
    for (int i = 0; i < 2000 && atomic_load(&g_echoes) > 0; i++) {
        usleep(10000);
    }
    assert_int_equal(atomic_load(&g_echoes), 0);
}

static void on_upgraded(void *ctx, int fd, const char *extra, size_t extra_len, gp_http_upgraded *h)
{
    (void)ctx;
    if (fd < 0) {
        atomic_fetch_add(&g_upgrade_gone, 1);
        return;
    }
    echo_up *e = calloc(1, sizeof(*e));
    e->fd = fd;
    e->h = h;
    e->extra_len = extra_len < sizeof(e->extra) ? extra_len : sizeof(e->extra);
    memcpy(e->extra, extra, e->extra_len);
    pthread_t t;
    atomic_fetch_add(&g_echoes, 1);
    pthread_create(&t, NULL, echo_main, e);
    pthread_detach(t);
}

static void handler(void *ctx, const gp_http_request *req, gp_http_response *resp)
{
    srv_ctx *sc = ctx;
    if (strcmp(req->path, "/upgrade") == 0) {
        gp_http_response_set_upgrade(resp, on_upgraded, NULL);
        gp_http_response_add_header(resp, "Upgrade", "echo");
        return;
    }
    if (strcmp(req->path, "/upgrade-not") == 0) { /* set, then replaced by an error */
        gp_http_response_set_upgrade(resp, on_upgraded, NULL);
        gp_http_respond_error(resp, GP_EINVAL, "no");
        return;
    }
    feed_put(&sc->feed, "first,", false);
    if (strcmp(req->path, "/deferred") == 0) {
        gp_http_deferred *dr = gp_http_defer(req, resp);
        pthread_mutex_lock(&sc->feed.lock);
        sc->dr = dr;
        pthread_mutex_unlock(&sc->feed.lock);
        return;
    }
    gp_http_response_set_stream(resp, 200, "text/plain", sc->known_len ? 19 : -1, feed_read,
                                feed_free, &sc->feed);
    if (strcmp(req->path, "/stall") != 0) {
        sc->producing = pthread_create(&sc->producer, NULL, producer_main, &sc->feed) == 0;
    }
}

static unsigned timeout_s = 5;

static gp_http_server *start_tls(srv_ctx *sc, const char *cert, const char *key)
{
    memset(sc, 0, sizeof(*sc));
    pthread_mutex_init(&sc->feed.lock, NULL);
    gp_http_server_config cfg = {.port = 0,
                                 .threads = 2,
                                 .max_body = 1024,
                                 .timeout_s = timeout_s,
                                 .tls_cert_file = cert,
                                 .tls_key_file = key};
    gp_http_server *srv = NULL;
    gp_diag d = {0};
    assert_int_equal(gp_http_server_start(&cfg, handler, sc, &srv, &d), 0);
    return srv;
}

static gp_http_server *start(srv_ctx *sc)
{
    return start_tls(sc, NULL, NULL);
}

static void finish(srv_ctx *sc)
{
    if (sc->producing) {
        pthread_join(sc->producer, NULL);
    }
    pthread_mutex_destroy(&sc->feed.lock);
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* Sends text and reads until the peer closes, or until `until` appears. */
static char *exchange(int fd, const char *text, const char *until)
{
    assert_int_equal(send(fd, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
    static char buf[8192];
    size_t n = 0;
    ssize_t r;
    buf[0] = 0;
    while (n < sizeof(buf) - 1 && (r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0)) > 0) {
        n += (size_t)r;
        buf[n] = 0;
        if (until && strstr(buf, until)) {
            break;
        }
    }
    return buf;
}

static void test_stream_chunked(void **state)
{
    (void)state;
    srv_ctx sc;
    gp_http_server *srv = start(&sc);
    atomic_store(&g_frees, 0);
    int fd = connect_to(gp_http_server_port(srv));
    char *got = exchange(fd, "GET /s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", NULL);
    close(fd);
    assert_non_null(strstr(got, "HTTP/1.1 200"));
    assert_non_null(strstr(got, "Transfer-Encoding: chunked"));
    assert_non_null(strstr(got, "Content-Type: text/plain"));
    assert_non_null(strstr(got, "first,"));
    assert_non_null(strstr(got, "second,"));
    assert_non_null(strstr(got, "third"));
    assert_non_null(strstr(got, "\r\n0\r\n\r\n")); /* the last chunk */
    gp_http_server_stop(srv);
    finish(&sc);
    assert_int_equal(atomic_load(&g_frees), 1);
}

static void test_stream_length(void **state)
{
    (void)state;
    srv_ctx sc;
    gp_http_server *srv = start(&sc);
    sc.known_len = true;
    atomic_store(&g_frees, 0);
    int fd = connect_to(gp_http_server_port(srv));
    char *got = exchange(fd, "GET /s HTTP/1.1\r\nHost: x\r\n\r\n", "third");
    close(fd);
    assert_non_null(strstr(got, "Content-Length: 19"));
    assert_null(strstr(got, "chunked"));
    assert_non_null(strstr(got, "\r\n\r\nfirst,second,third"));
    gp_http_server_stop(srv);
    finish(&sc);
    assert_int_equal(atomic_load(&g_frees), 1);
}

static void *finish_deferred_main(void *arg)
{
    srv_ctx *sc = arg;
    gp_http_deferred *dr = NULL;
    while (!dr) {
        usleep(10 * 1000);
        pthread_mutex_lock(&sc->feed.lock);
        dr = sc->dr;
        pthread_mutex_unlock(&sc->feed.lock);
    }
    gp_http_response resp = {.content_type = "application/json"};
    gp_http_response_set_stream(&resp, 201, "text/plain", -1, feed_read, feed_free, &sc->feed);
    gp_http_response_add_header(&resp, "X-From", "deferred");
    gp_http_deferred_finish(dr, &resp);
    producer_main(&sc->feed);
    return NULL;
}

static void test_stream_deferred(void **state)
{
    (void)state;
    srv_ctx sc;
    gp_http_server *srv = start(&sc);
    atomic_store(&g_frees, 0);
    pthread_t t;
    pthread_create(&t, NULL, finish_deferred_main, &sc);
    int fd = connect_to(gp_http_server_port(srv));
    char *got =
        exchange(fd, "GET /deferred HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", NULL);
    close(fd);
    pthread_join(t, NULL);
    assert_non_null(strstr(got, "HTTP/1.1 201"));
    assert_non_null(strstr(got, "X-From: deferred"));
    assert_non_null(strstr(got, "first,"));
    assert_non_null(strstr(got, "third"));
    gp_http_server_stop(srv);
    finish(&sc);
    assert_int_equal(atomic_load(&g_frees), 1);
}

static void test_upgrade_echo(void **state)
{
    (void)state;
    srv_ctx sc;
    gp_http_server *srv = start(&sc);
    int fd = connect_to(gp_http_server_port(srv));
    char *got = exchange(fd,
                         "GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                         "Upgrade: echo\r\n\r\nearly-bytes;",
                         "early-bytes;");
    assert_non_null(strstr(got, "HTTP/1.1 101"));
    assert_non_null(strstr(got, "Upgrade: echo"));
    got = exchange(fd, "ping-pong", "ping-pong");
    assert_string_equal(got, "ping-pong");
    got = exchange(fd, "more", "more");
    assert_string_equal(got, "more");
    close(fd);
    /* an upgrade replaced by an error before it was sent tells its taker */
    atomic_store(&g_upgrade_gone, 0);
    fd = connect_to(gp_http_server_port(srv));
    got = exchange(fd, "GET /upgrade-not HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", NULL);
    close(fd);
    assert_non_null(strstr(got, "HTTP/1.1 400"));
    assert_int_equal(atomic_load(&g_upgrade_gone), 1);
    wait_echoes_done();
    gp_http_server_stop(srv);
    finish(&sc);
}

static char *tls_exchange(SSL *ssl, const char *text, const char *until);

/* An upgraded connection silent for longer than the server's timeout stays open (a notebook's
 * kernel WebSocket may be quiet for minutes), with or without TLS. */
static void idle_upgrade(const char *cert, const char *key)
{
    timeout_s = 1;
    srv_ctx sc;
    gp_http_server *srv = start_tls(&sc, cert, key);
    timeout_s = 5;
    int fd = connect_to(gp_http_server_port(srv));
    SSL_CTX *ctx = cert ? SSL_CTX_new(TLS_client_method()) : NULL;
    SSL *ssl = ctx ? SSL_new(ctx) : NULL;
    if (ssl) {
        SSL_set_fd(ssl, fd);
        assert_int_equal(SSL_connect(ssl), 1);
    }
    const char *req = "GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                      "Upgrade: echo\r\n\r\n";
    char *got = ssl ? tls_exchange(ssl, req, "\r\n\r\n") : exchange(fd, req, "\r\n\r\n");
    assert_non_null(strstr(got, "HTTP/1.1 101"));
    sleep(3); /* three times the timeout, silent */
    got = ssl ? tls_exchange(ssl, "still-there", "still-there")
              : exchange(fd, "still-there", "still-there");
    assert_string_equal(got, "still-there");
    if (ssl) {
        SSL_free(ssl);
        SSL_CTX_free(ctx);
    }
    close(fd);
    gp_http_server_stop(srv);
    finish(&sc);
}

/* Stop with a stream waiting for data and an upgrade open: both are ended, nothing hangs. */
static void test_stop_with_open_streams(void **state)
{
    (void)state;
    srv_ctx sc;
    gp_http_server *srv = start(&sc);
    atomic_store(&g_frees, 0);
    int port = gp_http_server_port(srv);
    int up = connect_to(port);
    char *got = exchange(up,
                         "GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                         "Upgrade: echo\r\n\r\n",
                         "\r\n\r\n");
    assert_non_null(strstr(got, "HTTP/1.1 101"));
    int st = connect_to(port);
    got = exchange(st, "GET /stall HTTP/1.1\r\nHost: x\r\n\r\n", "first,");
    assert_non_null(strstr(got, "first,"));
    usleep(100 * 1000); /* suspended waiting for more */
    gp_http_server_stop(srv);
    assert_int_equal(atomic_load(&g_frees), 1);
    char c;
    assert_true(recv(up, &c, 1, 0) <= 0);
    close(up);
    close(st);
    finish(&sc);
}

/* Reads over TLS until `until` appears; the text so far. */
static char *tls_exchange(SSL *ssl, const char *text, const char *until)
{
    assert_int_equal(SSL_write(ssl, text, (int)strlen(text)), (int)strlen(text));
    static char buf[4096];
    int n = 0, r;
    buf[0] = 0;
    while (n < (int)sizeof(buf) - 1 && (r = SSL_read(ssl, buf + n, (int)sizeof(buf) - 1 - n)) > 0) {
        n += r;
        buf[n] = 0;
        if (strstr(buf, until)) {
            break;
        }
    }
    return buf;
}

/* An upgrade on a TLS port: the taker reads and writes plain bytes, the client sees TLS. */
static void test_upgrade_tls(void **state)
{
    (void)state;
    if (system("command -v openssl >/dev/null 2>&1") != 0) {
        skip();
    }
    char dir[] = "/tmp/gp-test-stream-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[1024], cert[128], key[128];
    snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
    snprintf(key, sizeof(key), "%s/key.pem", dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout %s -out %s -days 1 -subj /CN=127.0.0.1 >/dev/null 2>&1",
             key, cert);
    assert_int_equal(system(cmd), 0);
    srv_ctx sc;
    gp_http_server *srv = start_tls(&sc, cert, key);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(ctx);
    SSL *ssl = SSL_new(ctx);
    int fd = connect_to(gp_http_server_port(srv));
    SSL_set_fd(ssl, fd);
    assert_int_equal(SSL_connect(ssl), 1);
    char *got = tls_exchange(ssl,
                             "GET /upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n"
                             "Upgrade: echo\r\n\r\nfirst;",
                             "first;");
    assert_non_null(strstr(got, "HTTP/1.1 101"));
    got = tls_exchange(ssl, "over-tls", "over-tls");
    assert_string_equal(got, "over-tls");
    /* over TLS the taker is not told of the client's end until the server stops: it ends on a
     * word of its own */
    assert_int_equal(SSL_write(ssl, "bye!", 4), 4);
    wait_echoes_done();
    SSL_shutdown(ssl);
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    close(fd);
    wait_echoes_done();
    gp_http_server_stop(srv);
    finish(&sc);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_upgrade_idle(void **state)
{
    (void)state;
    idle_upgrade(NULL, NULL);
    if (system("command -v openssl >/dev/null 2>&1") != 0) {
        return;
    }
    char dir[] = "/tmp/gp-test-idle-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[1024], cert[128], key[128];
    snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
    snprintf(key, sizeof(key), "%s/key.pem", dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout %s -out %s -days 1 -subj /CN=127.0.0.1 >/dev/null 2>&1",
             key, cert);
    assert_int_equal(system(cmd), 0);
    idle_upgrade(cert, key);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_chunked),         cmocka_unit_test(test_stream_length),
        cmocka_unit_test(test_stream_deferred),        cmocka_unit_test(test_upgrade_echo),
        cmocka_unit_test(test_stop_with_open_streams), cmocka_unit_test(test_upgrade_tls),
        cmocka_unit_test(test_upgrade_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
