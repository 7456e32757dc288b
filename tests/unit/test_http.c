/*
 * HTTP server and client, end to end on 127.0.0.1 with ephemeral ports: round trips of every
 * method, query and header lookup, the body limit (by Content-Length; a chunked body is refused
 * as it starts), the API's error shape, concurrency, stop semantics, listen and connect errors,
 * TLS with a certificate made at test time (skipped when the openssl binary is missing),
 * deferred answers (finished from another thread, many waiting on a small pool, finished after
 * the client left, pending at stop), the request head limit (431 before the body is read, also
 * past libmicrohttpd's own buffer) and slow clients (a silent or trickling connection is closed
 * after the timeout while other clients, keep-alive connections and deferred answers go on).
 */
#define _DEFAULT_SOURCE /* mkdtemp, usleep */
#include "gpupool/error.h"
#include "net/http_client.h"
#include "net/http_accept.h"
#include "net/http_server.h"
#include "tests/unit/harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_BODY 1024
#define NTHREADS 20
#define NREQS    50
#define ECHO_FMT                                                                                   \
    "method=%s\npath=%s\nq=%s\nx=%s\nflag=%s\nQ=%s\nh=%s\nauth=%s\nremote=%s\nlen=%zu\n"

typedef struct echo_ctx {
    atomic_int calls;
    atomic_int slow_started, slow_done;
} echo_ctx;

static const char *or_none(const char *s)
{
    return s ? s : "(none)";
}

/* Echoes the request as "key=value" lines followed by the body; a few paths do more. */
static void echo_handler(void *ctx, const gp_http_request *req, gp_http_response *resp)
{
    echo_ctx *ec = ctx;
    atomic_fetch_add(&ec->calls, 1);
    if (strcmp(req->path, "/error") == 0) {
        gp_http_respond_error(resp, GP_EINVAL, "replicas: must be between %d and %d", 1, 4096);
        return;
    }
    if (strcmp(req->path, "/nostatus") == 0) {
        return;
    }
    if (strcmp(req->path, "/big/take") == 0) { /* the body, taken, is the answer */
        size_t len = 99;
        char *b = gp_http_request_take_body(req, &len);
        assert_true(b == NULL ? len == 0 : b[len] == '\0');
        size_t again = 99;
        assert_null(gp_http_request_take_body(req, &again));
        assert_int_equal(again, 0);
        gp_http_response_set_body(resp, 200, "application/octet-stream", b, len);
        return;
    }
    if (strcmp(req->path, "/head") == 0) {
        char *out = malloc(64);
        assert_non_null(out);
        int n = snprintf(out, 64, "head=%zu", req->header_bytes);
        gp_http_response_set_body(resp, 200, "text/plain", out, (size_t)n);
        return;
    }
    if (strcmp(req->path, "/slow") == 0) {
        atomic_store(&ec->slow_started, 1);
        usleep(300 * 1000);
        atomic_store(&ec->slow_done, 1);
    }
    if (strcmp(req->path, "/headers") == 0) {
        assert_int_equal(gp_http_response_add_header(resp, "Location", "/v1/jobs/7"), 0);
        assert_int_equal(gp_http_response_add_header(resp, "Retry-After", "5"), 0);
        assert_int_equal(gp_http_response_add_header(resp, "X-Bad", "a\r\nb"), GP_EINVAL);
    }
    const char *q = gp_http_request_query(req, "q"), *x = gp_http_request_query(req, "x");
    const char *flag = gp_http_request_query(req, "flag"), *Q = gp_http_request_query(req, "Q");
    const char *h = gp_http_request_header(req, "x-test");
    const char *auth = gp_http_request_header(req, "AUTHORIZATION");
    int n =
        snprintf(NULL, 0, ECHO_FMT, req->method, req->path, or_none(q), or_none(x), or_none(flag),
                 or_none(Q), or_none(h), or_none(auth), req->remote_addr, req->body_len);
    char *out = malloc((size_t)n + req->body_len + 1);
    assert_non_null(out);
    snprintf(out, (size_t)n + 1, ECHO_FMT, req->method, req->path, or_none(q), or_none(x),
             or_none(flag), or_none(Q), or_none(h), or_none(auth), req->remote_addr, req->body_len);
    memcpy(out + n, req->body, req->body_len);
    assert_int_equal(req->body[req->body_len], '\0');
    gp_http_response_set_body(resp, 200, "text/plain", out, (size_t)n + req->body_len);
}

static gp_http_server *start_echo_cfg(echo_ctx *ec, const char *cert, const char *key,
                                      size_t max_header, unsigned timeout_s)
{
    gp_http_server_config cfg = {
        .host = "127.0.0.1",
        .threads = 4,
        .max_body = MAX_BODY,
        .max_header = max_header,
        .timeout_s = timeout_s,
        .tls_cert_file = cert,
        .tls_key_file = key,
    };
    gp_http_server *srv = NULL;
    gp_diag d;
    int rc = gp_http_server_start(&cfg, echo_handler, ec, &srv, &d);
    if (rc != 0) {
        fprintf(stderr, "start: %s\n", d.msg);
    }
    assert_int_equal(rc, 0);
    assert_true(gp_http_server_port(srv) > 0);
    return srv;
}

static gp_http_server *start_echo(echo_ctx *ec, const char *cert, const char *key)
{
    return start_echo_cfg(ec, cert, key, 0, 30);
}

static gp_http_client *client_for(gp_http_server *srv, const char *scheme, const char *token)
{
    char url[64];
    snprintf(url, sizeof(url), "%s://127.0.0.1:%d", scheme, gp_http_server_port(srv));
    gp_http_client *c = NULL;
    gp_diag d;
    assert_int_equal(gp_http_client_new(url, token, &c, &d), 0);
    return c;
}

/* One call that must succeed at the transport level; returns the body (caller frees). */
static char *call(gp_http_client *c, const char *method, const char *path, const char *body,
                  size_t len, const char *const *headers, int *status)
{
    char *out = NULL;
    size_t out_len = 0;
    gp_diag d;
    int rc = gp_http_call(c, method, path, body, len, headers, status, &out, &out_len, &d);
    if (rc != 0) {
        fprintf(stderr, "call %s %s: %s\n", method, path, d.msg);
    }
    assert_int_equal(rc, 0);
    assert_non_null(out);
    assert_int_equal(out[out_len], '\0');
    return out;
}

static int count_fds(void)
{
    int n = 0;
    DIR *dir = opendir("/proc/self/fd");
    assert_non_null(dir);
    while (readdir(dir)) {
        n++;
    }
    closedir(dir);
    return n;
}

/* Sends raw bytes on a new connection; returns the socket. */
static int raw_send(int port, const char *req, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        assert_true(w > 0);
        off += (size_t)w;
    }
    return fd;
}

/* Sends more raw bytes on fd. */
static void raw_send_more(int fd, const char *data, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, data + off, len - off, MSG_NOSIGNAL);
        assert_true(w > 0);
        off += (size_t)w;
    }
}

/* Reads the whole answer on fd (the request asked the server to close) and closes fd. Returns
 * the malloc'd response text. */
static char *raw_read(int fd)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    ssize_t r;
    while ((r = recv(fd, buf + n, cap - 1 - n, 0)) > 0) {
        n += (size_t)r;
        assert_true(n < cap - 1);
    }
    buf[n] = '\0';
    close(fd);
    return buf;
}

/* Sends raw bytes on a new connection and reads the whole answer (the request asks the server
 * to close). Returns the malloc'd response text. */
static char *raw_exchange(int port, const char *req, size_t len)
{
    return raw_read(raw_send(port, req, len));
}

static void test_methods(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo(&ec, NULL, NULL);
    gp_http_client *c = client_for(srv, "http", "gpu_secret");
    const char *methods[] = {"GET", "POST", "PUT", "DELETE", "PATCH"};
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        int status = 0;
        const char *body = strcmp(methods[i], "GET") == 0 ? NULL : "{\"a\": 1}";
        char *out =
            call(c, methods[i], "/v1/jobs/a%20b", body, body ? strlen(body) : 0, NULL, &status);
        assert_int_equal(status, 200);
        char want[64];
        snprintf(want, sizeof(want), "method=%s\n", methods[i]);
        assert_non_null(strstr(out, want));
        assert_non_null(strstr(out, "path=/v1/jobs/a b\n"));
        assert_non_null(strstr(out, "auth=Bearer gpu_secret\n"));
        assert_non_null(strstr(out, "remote=127.0.0.1\n"));
        if (body) {
            assert_non_null(strstr(out, "len=8\n{\"a\": 1}"));
        } else {
            assert_non_null(strstr(out, "len=0\n"));
        }
        free(out);
    }
    /* A body with a NUL in it arrives whole. */
    int status = 0;
    char *out = call(c, "POST", "/bin", "a\0b", 3, NULL, &status);
    assert_non_null(strstr(out, "len=3\n"));
    free(out);
    assert_int_equal(atomic_load(&ec.calls), 6);
    gp_http_client_free(c);
    gp_http_server_stop(srv);
}

static void test_query_and_headers(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo(&ec, NULL, NULL);
    gp_http_client *c = client_for(srv, "http", NULL);
    const char *hdrs[] = {"X-TEST: Hello There", "Idempotency-Key: k1", NULL};
    int status = 0;
    char *out = call(c, "GET", "/q?q=a%20b%26c%3D&x=1+2&flag&Q=upper", NULL, 0, hdrs, &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(out, "path=/q\n"));
    assert_non_null(strstr(out, "q=a b&c=\n"));
    assert_non_null(strstr(out, "x=1 2\n"));
    assert_non_null(strstr(out, "flag=\n"));
    assert_non_null(strstr(out, "Q=upper\n"));
    assert_non_null(strstr(out, "h=Hello There\n"));
    assert_non_null(strstr(out, "auth=(none)\n"));
    free(out);

    out = call(c, "GET", "/q?x=only", NULL, 0, NULL, &status);
    assert_non_null(strstr(out, "q=(none)\n"));
    assert_non_null(strstr(out, "Q=(none)\n"));
    assert_non_null(strstr(out, "h=(none)\n"));
    free(out);

    /* A header with a line break is refused before anything is sent. */
    const char *bad[] = {"X-A: 1\r\nX-B: 2", NULL};
    char *resp = NULL;
    gp_diag d;
    assert_int_equal(gp_http_call(c, "GET", "/", NULL, 0, bad, &status, &resp, NULL, &d),
                     GP_EINVAL);
    assert_null(resp);
    gp_http_client_free(c);
    gp_http_server_stop(srv);
}

static void test_response_shapes(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo(&ec, NULL, NULL);
    gp_http_client *c = client_for(srv, "http", NULL);
    int status = 0;
    char *out = call(c, "POST", "/error", "{}", 2, NULL, &status);
    assert_int_equal(status, 400);
    assert_string_equal(out, "{\"error\":{\"code\":\"GP_EINVAL\","
                             "\"message\":\"replicas: must be between 1 and 4096\"}}");
    free(out);
    out = call(c, "GET", "/nostatus", NULL, 0, NULL, &status);
    assert_int_equal(status, 500);
    assert_non_null(strstr(out, "\"GP_EINTERNAL\""));
    free(out);
    gp_http_client_free(c);

    const char *req = "GET /headers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    out = raw_exchange(gp_http_server_port(srv), req, strlen(req));
    assert_non_null(strstr(out, "HTTP/1.1 200"));
    assert_non_null(strstr(out, "\r\nLocation: /v1/jobs/7\r\n"));
    assert_non_null(strstr(out, "\r\nRetry-After: 5\r\n"));
    assert_non_null(strstr(out, "\r\nContent-Type: text/plain\r\n"));
    assert_null(strstr(out, "X-Bad"));
    free(out);
    gp_http_server_stop(srv);
}

static void test_body_limit(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo(&ec, NULL, NULL);
    gp_http_client *c = client_for(srv, "http", NULL);
    char *big = malloc(MAX_BODY + 2);
    assert_non_null(big);
    memset(big, 'a', MAX_BODY + 1);
    big[MAX_BODY + 1] = '\0';

    int status = 0;
    char *out = call(c, "POST", "/echo", big, MAX_BODY, NULL, &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(out, "len=1024\n"));
    free(out);
    assert_int_equal(atomic_load(&ec.calls), 1);

    out = call(c, "POST", "/echo", big, MAX_BODY + 1, NULL, &status);
    assert_int_equal(status, 413);
    assert_non_null(strstr(out, "{\"error\":{\"code\":\"GP_ETOOBIG\""));
    free(out);
    assert_int_equal(atomic_load(&ec.calls), 1);

    /* The same client goes on working after the server closed that connection. */
    out = call(c, "GET", "/after", NULL, 0, NULL, &status);
    assert_int_equal(status, 200);
    free(out);
    assert_int_equal(atomic_load(&ec.calls), 2);
    gp_http_client_free(c);

    /* Chunked: no Content-Length, so its size is known only at its end: refused as it starts
     * (413, closed), whatever its size; the handler never runs. */
    int port = gp_http_server_port(srv);
    const char *head = "POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    size_t cap = strlen(head) + MAX_BODY + 64;
    char *req = malloc(cap);
    assert_non_null(req);
    for (int extra = 0; extra <= 1; extra++) {
        memset(big, 'b', MAX_BODY);
        int n = snprintf(req, cap, "%s%x\r\n", head, MAX_BODY - 10);
        memcpy(req + n, big, MAX_BODY - 10);
        n += MAX_BODY - 10;
        n += snprintf(req + n, cap - (size_t)n, "\r\n%x\r\n%.*s\r\n0\r\n\r\n", 10 + extra,
                      10 + extra, big);
        out = raw_exchange(port, req, (size_t)n);
        assert_non_null(strstr(out, "HTTP/1.1 413"));
        assert_non_null(strstr(out, "chunked transfer coding is not accepted"));
        free(out);
    }
    assert_int_equal(atomic_load(&ec.calls), 2);
    free(req);
    free(big);
    gp_http_server_stop(srv);
}

#define BIG_BODY (64 * 1024)

/* The body_limit of test_body_limit_per_request: BIG_BODY under /big/, max_body elsewhere. */
static size_t big_paths(void *ctx, const char *method, const char *path)
{
    atomic_fetch_add(&((echo_ctx *)ctx)->slow_started, 1); /* counts the calls */
    (void)method;
    return strncmp(path, "/big/", 5) == 0 ? BIG_BODY : 0;
}

/* cfg.body_limit gives some paths their own limit, judged per request before the body is read;
 * the other paths keep max_body. A taken body is the handler's. */
static void test_body_limit_per_request(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server_config cfg = {
        .host = "127.0.0.1", .threads = 2, .max_body = MAX_BODY, .body_limit = big_paths};
    gp_http_server *srv = NULL;
    gp_diag d;
    assert_int_equal(gp_http_server_start(&cfg, echo_handler, &ec, &srv, &d), 0);
    gp_http_client *c = client_for(srv, "http", NULL);
    char *big = malloc(BIG_BODY + 1);
    assert_non_null(big);
    for (size_t i = 0; i <= BIG_BODY; i++) {
        big[i] = (char)('a' + i % 26);
    }
    int status = 0;
    char *out = call(c, "PUT", "/big/x", big, BIG_BODY, NULL, &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(out, "len=65536\n"));
    assert_int_equal(memcmp(strstr(out, "len=65536\n") + 10, big, BIG_BODY), 0);
    free(out);
    out = call(c, "PUT", "/big/x", big, BIG_BODY + 1, NULL, &status);
    assert_int_equal(status, 413);
    assert_non_null(strstr(out, "larger than 65536 bytes"));
    free(out);
    /* the other paths keep max_body */
    out = call(c, "PUT", "/small", big, MAX_BODY + 1, NULL, &status);
    assert_int_equal(status, 413);
    assert_non_null(strstr(out, "larger than 1024 bytes"));
    free(out);
    out = call(c, "PUT", "/small", big, MAX_BODY, NULL, &status);
    assert_int_equal(status, 200);
    free(out);
    /* a body taken by the handler (kept past its call without a copy) */
    size_t len = 0;
    out = NULL;
    assert_int_equal(
        gp_http_call(c, "POST", "/big/take", big, 50000, NULL, &status, &out, &len, &d), 0);
    assert_int_equal(status, 200);
    assert_int_equal(len, 50000);
    assert_int_equal(memcmp(out, big, 50000), 0);
    free(out);
    out = call(c, "POST", "/big/take", NULL, 0, NULL, &status);
    assert_int_equal(status, 200);
    free(out);
    assert_int_equal(atomic_load(&ec.calls), 4);
    assert_true(atomic_load(&ec.slow_started) >= 6); /* once per request */
    gp_http_client_free(c);
    free(big);
    gp_http_server_stop(srv);
}

/* cfg.max_large_bodies bounds the bytes of large bodies in progress at once: a second large
 * body while the first is still coming is answered 503 before it is read; small bodies pass;
 * once the first has its answer, its share is given back. */
static void test_large_bodies_bound(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server_config cfg = {.host = "127.0.0.1",
                                 .threads = 2,
                                 .max_body = MAX_BODY,
                                 .body_limit = big_paths,
                                 .max_large_bodies = BIG_BODY + BIG_BODY / 2};
    gp_http_server *srv = NULL;
    gp_diag d;
    assert_int_equal(gp_http_server_start(&cfg, echo_handler, &ec, &srv, &d), 0);
    int port = gp_http_server_port(srv);
    char *big = malloc(BIG_BODY);
    assert_non_null(big);
    memset(big, 'z', BIG_BODY);
    /* the first large body: its head and a few bytes, the rest held back */
    char head[160];
    int n = snprintf(head, sizeof(head),
                     "PUT /big/first HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Content-Length: %d\r\n\r\n",
                     BIG_BODY);
    int before = atomic_load(&ec.slow_started);
    int fd = raw_send(port, head, (size_t)n);
    raw_send_more(fd, big, 10);
    while (atomic_load(&ec.slow_started) == before) {
        usleep(1000); /* until the server has judged its head */
    }
    usleep(50000);
    gp_http_client *c = client_for(srv, "http", NULL);
    int status = 0;
    char *out = call(c, "PUT", "/big/second", big, BIG_BODY, NULL, &status);
    assert_int_equal(status, 503);
    assert_non_null(strstr(out, "too many large bodies in progress"));
    free(out);
    out = call(c, "PUT", "/small", big, MAX_BODY, NULL, &status); /* not a large body */
    assert_int_equal(status, 200);
    free(out);
    raw_send_more(fd, big + 10, BIG_BODY - 10);
    char status_line[16] = "";
    assert_int_equal(recv(fd, status_line, 12, MSG_WAITALL), 12);
    assert_string_equal(status_line, "HTTP/1.1 200");
    char sink[4096];
    while (recv(fd, sink, sizeof(sink), 0) > 0) {
        /* the rest of its answer, to its end: the request is then complete */
    }
    close(fd);
    out = call(c, "PUT", "/big/second", big, BIG_BODY, NULL, &status); /* its share is back */
    assert_int_equal(status, 200);
    free(out);
    gp_http_client_free(c);
    free(big);
    gp_http_server_stop(srv);
}

typedef struct worker {
    int port, id, ok;
    char err[600];
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", w->port);
    gp_http_client *c = NULL;
    gp_diag d;
    if (gp_http_client_new(url, NULL, &c, &d) != 0) {
        snprintf(w->err, sizeof(w->err), "new: %s", d.msg);
        return NULL;
    }
    for (int i = 0; i < NREQS; i++) {
        char body[64], path[64], want[64];
        snprintf(body, sizeof(body), "t%d-r%d", w->id, i);
        snprintf(path, sizeof(path), "/w?q=%d", i);
        snprintf(want, sizeof(want), "q=%d\n", i);
        int status = 0;
        char *out = NULL;
        if (gp_http_call(c, "POST", path, body, strlen(body), NULL, &status, &out, NULL, &d) != 0) {
            snprintf(w->err, sizeof(w->err), "call: %s", d.msg);
            break;
        }
        if (status == 200 && strstr(out, want) && strstr(out, body)) {
            w->ok++;
        }
        free(out);
    }
    gp_http_client_free(c);
    return NULL;
}

static void test_concurrent_clients(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo(&ec, NULL, NULL);
    pthread_t th[NTHREADS];
    worker w[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (worker){.port = gp_http_server_port(srv), .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        if (w[i].err[0]) {
            fprintf(stderr, "worker %d: %s\n", i, w[i].err);
        }
        assert_int_equal(w[i].ok, NREQS);
    }
    assert_int_equal(atomic_load(&ec.calls), NTHREADS * NREQS);
    gp_http_server_stop(srv);
}

static void *slow_client(void *arg)
{
    gp_http_client *c = arg;
    int status = 0;
    char *out = NULL;
    gp_diag d;
    /* Answered or cut by the stop: both are fine, the test is about the handler. */
    if (gp_http_call(c, "GET", "/slow", NULL, 0, NULL, &status, &out, NULL, &d) == 0) {
        free(out);
    }
    return NULL;
}

static void test_stop(void **state)
{
    (void)state;
    gp_http_server_stop(NULL);
    int fds = count_fds();
    echo_ctx ec = {0};
    gp_http_server_stop(start_echo(&ec, NULL, NULL)); /* idle */
    assert_int_equal(count_fds(), fds);

    /* Stop while a handler runs: it returns before stop does. */
    gp_http_server *srv = start_echo(&ec, NULL, NULL);
    gp_http_client *c = client_for(srv, "http", NULL);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, slow_client, c), 0);
    for (int i = 0; i < 1000 && !atomic_load(&ec.slow_started); i++) {
        usleep(10 * 1000);
    }
    assert_true(atomic_load(&ec.slow_started));
    gp_http_server_stop(srv);
    assert_true(atomic_load(&ec.slow_done));
    pthread_join(th, NULL);
    gp_http_client_free(c);
}

static void test_listen_and_connect_errors(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo(&ec, NULL, NULL);
    int port = gp_http_server_port(srv);
    int fds = count_fds();
    gp_http_server_config cfg = {.host = "127.0.0.1", .port = port, .max_body = 1};
    gp_http_server *other = NULL;
    gp_diag d;
    assert_int_equal(gp_http_server_start(&cfg, echo_handler, &ec, &other, &d), GP_EIO);
    assert_null(other);
    char want[128];
    snprintf(want, sizeof(want), "listen 127.0.0.1:%d: Address already in use", port);
    assert_string_equal(d.msg, want);
    assert_int_equal(count_fds(), fds);

    cfg.port = 0;
    cfg.max_body = 0;
    assert_int_equal(gp_http_server_start(&cfg, echo_handler, &ec, &other, &d), GP_EINVAL);
    cfg.max_body = 1;
    cfg.port = 65536;
    assert_int_equal(gp_http_server_start(&cfg, echo_handler, &ec, &other, &d), GP_EINVAL);
    assert_string_equal(d.msg, "port: must be between 0 and 65535");
    gp_http_server_stop(srv);

    /* The port is free now: nothing listens there. */
    char url[32];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    gp_http_client *c = NULL;
    assert_int_equal(gp_http_client_new(url, NULL, &c, &d), 0);
    int status = 0;
    char *out = NULL;
    assert_int_equal(gp_http_call(c, "GET", "/x", NULL, 0, NULL, &status, &out, NULL, &d), GP_EIO);
    assert_null(out);
    snprintf(want, sizeof(want), "connect to %s: Connection refused", url);
    assert_string_equal(d.msg, want);
    gp_http_client_free(c);
    assert_int_equal(gp_http_client_new("ftp://x", NULL, &c, &d), GP_EINVAL);
    assert_null(c);
}

static void rm_dir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_tls(void **state)
{
    (void)state;
    if (system("command -v openssl >/dev/null 2>&1") != 0) {
        fprintf(stderr, "openssl binary missing: TLS test skipped\n");
        skip();
    }
    char dir[] = "/tmp/gp-test-http-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[1024], cert[128], key[128];
    snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
    snprintf(key, sizeof(key), "%s/key.pem", dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout %s -out %s -days 1 -subj /CN=127.0.0.1 "
             "-addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
             key, cert);
    assert_int_equal(system(cmd), 0);

    echo_ctx ec = {0};
    gp_http_server *srv = start_echo(&ec, cert, key);
    gp_http_client *c = client_for(srv, "https", "gpu_tls");
    assert_int_equal(gp_http_client_set_ca_file(c, cert), 0);
    int status = 0;
    char *out = call(c, "POST", "/tls?q=1", "{}", 2, NULL, &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(out, "auth=Bearer gpu_tls\n"));
    assert_non_null(strstr(out, "len=2\n{}"));
    free(out);
    gp_http_client_free(c);

    /* Without the CA the certificate is refused; plain HTTP to the TLS port fails too. */
    c = client_for(srv, "https", NULL);
    gp_diag d;
    assert_int_equal(gp_http_call(c, "GET", "/", NULL, 0, NULL, &status, &out, NULL, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "GET https://127.0.0.1:"));
    assert_non_null(strstr(d.msg, "certificate"));
    gp_http_client_free(c);
    c = client_for(srv, "http", NULL);
    gp_http_client_set_timeout(c, 10000, 10000);
    assert_int_equal(gp_http_call(c, "GET", "/", NULL, 0, NULL, &status, &out, NULL, &d), GP_EIO);
    gp_http_client_free(c);
    assert_int_equal(atomic_load(&ec.calls), 1);
    gp_http_server_stop(srv);

    /* A certificate given as the key: MHD refuses to start, and the socket is not leaked. */
    int fds = count_fds();
    gp_http_server_config cfg = {.max_body = 1, .tls_cert_file = cert, .tls_key_file = cert};
    assert_int_equal(gp_http_server_start(&cfg, echo_handler, &ec, &srv, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "http server 127.0.0.1:"));
    assert_non_null(strstr(d.msg, "x509"));
    assert_null(srv);
    assert_int_equal(count_fds(), fds);
    cfg.tls_key_file = NULL;
    assert_int_equal(gp_http_server_start(&cfg, echo_handler, &ec, &srv, &d), GP_EINVAL);
    rm_dir(dir);
}

/* ---- deferred answers ---- */

#define NDEFER 200

typedef struct defer_ctx {
    pthread_mutex_t lock;
    gp_http_deferred *dr[NDEFER + 8];
    char q[NDEFER + 8][16]; /* each request's q, copied: the request is gone once deferred */
    int n;
    atomic_int plain;
} defer_ctx;

/* /defer?q=X defers (the handle kept in the context); /now defers and finishes at once, from the
 * handler; anything else is answered at once with "plain". */
static void defer_handler(void *ctx, const gp_http_request *req, gp_http_response *resp)
{
    defer_ctx *dc = ctx;
    if (strcmp(req->path, "/defer") == 0) {
        const char *q = gp_http_request_query(req, "q");
        gp_http_deferred *dr = gp_http_defer(req, resp);
        if (!dr) {
            return;
        }
        gp_http_response_set_body(resp, 500, NULL, strdup("ignored"), 7); /* freed, not sent */
        pthread_mutex_lock(&dc->lock);
        assert_true(dc->n < NDEFER + 8);
        snprintf(dc->q[dc->n], sizeof(dc->q[0]), "%s", q ? q : "");
        dc->dr[dc->n++] = dr;
        pthread_mutex_unlock(&dc->lock);
        return;
    }
    if (strcmp(req->path, "/now") == 0) {
        gp_http_deferred *dr = gp_http_defer(req, resp);
        assert_non_null(dr);
        gp_http_response r = {.content_type = "text/plain"};
        gp_http_response_set_body(&r, 201, NULL, strdup("at once"), 7);
        gp_http_deferred_finish(dr, &r);
        assert_null(r.body);
        return;
    }
    atomic_fetch_add(&dc->plain, 1);
    gp_http_response_set_body(resp, 200, "text/plain", strdup("plain"), 5);
}

static gp_http_server *start_defer_timeout(defer_ctx *dc, int threads, unsigned timeout_s)
{
    memset(dc, 0, sizeof(*dc));
    pthread_mutex_init(&dc->lock, NULL);
    gp_http_server_config cfg = {
        .host = "127.0.0.1", .threads = threads, .max_body = MAX_BODY, .timeout_s = timeout_s};
    gp_http_server *srv = NULL;
    gp_diag d;
    assert_int_equal(gp_http_server_start(&cfg, defer_handler, dc, &srv, &d), 0);
    return srv;
}

static gp_http_server *start_defer(defer_ctx *dc, int threads)
{
    return start_defer_timeout(dc, threads, 30);
}

static int deferred_count(defer_ctx *dc)
{
    pthread_mutex_lock(&dc->lock);
    int n = dc->n;
    pthread_mutex_unlock(&dc->lock);
    return n;
}

/* Waits (up to 10 s) until at least n requests are deferred. */
static void wait_deferred(defer_ctx *dc, int n)
{
    for (int i = 0; i < 1000 && deferred_count(dc) < n; i++) {
        usleep(10 * 1000);
    }
    assert_true(deferred_count(dc) >= n);
}

/* Finishes handle i with 200 and body "done-Q" (Q: the request's q). */
static void finish_one(defer_ctx *dc, int i)
{
    char body[32];
    int n = snprintf(body, sizeof(body), "done-%s", dc->q[i]);
    gp_http_response r = {.content_type = "text/plain"};
    gp_http_response_set_body(&r, 200, NULL, strdup(body), (size_t)n);
    assert_int_equal(gp_http_response_add_header(&r, "X-Deferred", "yes"), 0);
    gp_http_deferred_finish(dc->dr[i], &r);
}

static int send_defer(int port, int q)
{
    char req[128];
    int n = snprintf(req, sizeof(req),
                     "GET /defer?q=%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", q);
    return raw_send(port, req, (size_t)n);
}

typedef struct finisher {
    defer_ctx *dc;
    int from, to;
    int delay_ms;
} finisher;

static void *finisher_main(void *arg)
{
    finisher *f = arg;
    usleep((useconds_t)f->delay_ms * 1000);
    wait_deferred(f->dc, f->to); /* (under the context's lock: the handles are then visible) */
    for (int i = f->from; i < f->to; i++) {
        finish_one(f->dc, i);
    }
    return NULL;
}

static void test_defer_finish_from_thread(void **state)
{
    (void)state;
    defer_ctx dc;
    gp_http_server *srv = start_defer(&dc, 2);
    gp_http_client *c = client_for(srv, "http", NULL);
    /* Finished inside the handler: answered as if never deferred. */
    int status = 0;
    char *out = call(c, "GET", "/now", NULL, 0, NULL, &status);
    assert_int_equal(status, 201);
    assert_string_equal(out, "at once");
    free(out);

    /* Finished from another thread while the client waits. */
    finisher f = {&dc, 0, 1, 0};
    int fd = send_defer(gp_http_server_port(srv), 7);
    wait_deferred(&dc, 1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, finisher_main, &f), 0);
    out = raw_read(fd);
    pthread_join(th, NULL);
    assert_non_null(strstr(out, "HTTP/1.1 200"));
    assert_non_null(strstr(out, "X-Deferred: yes"));
    assert_non_null(strstr(out, "\r\n\r\ndone-7"));
    assert_null(strstr(out, "ignored"));
    free(out);

    /* The same client connection (kept alive) goes on working after a deferred answer. */
    f = (finisher){&dc, 1, 2, 50};
    assert_int_equal(pthread_create(&th, NULL, finisher_main, &f), 0);
    out = call(c, "GET", "/defer?q=8", NULL, 0, NULL, &status);
    pthread_join(th, NULL);
    assert_int_equal(status, 200);
    assert_string_equal(out, "done-8");
    free(out);
    out = call(c, "GET", "/x", NULL, 0, NULL, &status);
    assert_string_equal(out, "plain");
    free(out);
    gp_http_client_free(c);
    gp_http_server_stop(srv);
    pthread_mutex_destroy(&dc.lock);
}

static void test_defer_many_small_pool(void **state)
{
    (void)state;
    defer_ctx dc;
    gp_http_server *srv = start_defer(&dc, 2);
    int port = gp_http_server_port(srv);
    int fds[NDEFER];
    for (int i = 0; i < NDEFER; i++) {
        fds[i] = send_defer(port, i);
    }
    wait_deferred(&dc, NDEFER);
    /* Two threads, 200 requests waiting: others are still answered. */
    gp_http_client *c = client_for(srv, "http", NULL);
    for (int i = 0; i < 20; i++) {
        int status = 0;
        char *out = call(c, "GET", "/x", NULL, 0, NULL, &status);
        assert_int_equal(status, 200);
        assert_string_equal(out, "plain");
        free(out);
    }
    gp_http_client_free(c);
    /* Finished from two threads at once; every client gets its own answer. */
    finisher f[2] = {{&dc, 0, NDEFER / 2, 0}, {&dc, NDEFER / 2, NDEFER, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_create(&th[i], NULL, finisher_main, &f[i]), 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    for (int i = 0; i < NDEFER; i++) {
        char *out = raw_read(fds[i]);
        char want[32];
        snprintf(want, sizeof(want), "\r\n\r\ndone-%d", i);
        assert_non_null(strstr(out, "HTTP/1.1 200"));
        assert_non_null(strstr(out, want));
        free(out);
    }
    gp_http_server_stop(srv);
    pthread_mutex_destroy(&dc.lock);
}

static void test_defer_client_gone(void **state)
{
    (void)state;
    defer_ctx dc;
    gp_http_server *srv = start_defer(&dc, 1);
    int port = gp_http_server_port(srv);
    int a = send_defer(port, 1), b = send_defer(port, 2);
    wait_deferred(&dc, 2);
    /* Both clients leave; one answer comes while the server runs, the other after it stopped
     * (the stopped server's memory lives until then). ASan checks both. */
    close(a);
    close(b);
    usleep(50 * 1000);
    int i1 = strcmp(dc.q[0], "1") == 0 ? 0 : 1;
    finish_one(&dc, i1);
    gp_http_client *c = client_for(srv, "http", NULL);
    int status = 0;
    char *out = call(c, "GET", "/x", NULL, 0, NULL, &status);
    assert_string_equal(out, "plain");
    free(out);
    gp_http_client_free(c);
    gp_http_server_stop(srv);
    finish_one(&dc, 1 - i1);
    pthread_mutex_destroy(&dc.lock);
}

static void test_defer_stop_pending(void **state)
{
    (void)state;
    int fds0 = count_fds();
    defer_ctx dc;
    gp_http_server *srv = start_defer(&dc, 2);
    int port = gp_http_server_port(srv);
    int fds[8];
    for (int i = 0; i < 8; i++) {
        fds[i] = send_defer(port, i);
    }
    wait_deferred(&dc, 8);
    finish_one(&dc, 0);       /* one answered before the stop */
    gp_http_server_stop(srv); /* returns with 7 handles still held */
    /* Each waiting client got 503 from the stop; the one finished before it, its answer. */
    int first = atoi(dc.q[0]);
    for (int i = 0; i < 8; i++) {
        char *out = raw_read(fds[i]);
        if (i == first) {
            assert_non_null(strstr(out, "HTTP/1.1 200"));
            assert_non_null(strstr(out, "done-"));
        } else {
            assert_non_null(strstr(out, "HTTP/1.1 503"));
            assert_non_null(strstr(out, "the server is stopping"));
        }
        free(out);
    }
    for (int i = 1; i < 8; i++) {
        finish_one(&dc, i); /* after the stop: frees only */
    }
    assert_int_equal(count_fds(), fds0);
    pthread_mutex_destroy(&dc.lock);
}

/* ---- limits on clients ---- */

#define HEAD_MAX 2048

/* A request whose head carries `pad` bytes of padding, with a body of body_len bytes. */
static char *padded_request(size_t pad, size_t body_len, size_t *len)
{
    size_t cap = pad + body_len + 256;
    char *req = malloc(cap);
    assert_non_null(req);
    int n = snprintf(req, cap,
                     "%s /head HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\nX-Pad: ",
                     body_len ? "POST" : "GET", body_len);
    memset(req + n, 'p', pad);
    n += (int)pad;
    n += snprintf(req + n, cap - (size_t)n, "\r\n\r\n");
    memset(req + n, 'b', body_len);
    *len = (size_t)n + body_len;
    return req;
}

static char *padded_exchange(int port, size_t pad, size_t body_len)
{
    size_t len = 0;
    char *req = padded_request(pad, body_len, &len);
    char *out = raw_exchange(port, req, len);
    free(req);
    return out;
}

static void test_header_limit(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo_cfg(&ec, NULL, NULL, HEAD_MAX, 30);
    int port = gp_http_server_port(srv);

    /* Under the limit: served, and the handler sees the head's size. */
    char *out = padded_exchange(port, HEAD_MAX - 200, 0);
    assert_non_null(strstr(out, "HTTP/1.1 200"));
    const char *h = strstr(out, "head=");
    assert_non_null(h);
    size_t head = strtoul(h + 5, NULL, 10);
    assert_true(head > HEAD_MAX - 200 && head <= HEAD_MAX);
    free(out);
    assert_int_equal(atomic_load(&ec.calls), 1);

    /* Over it: 431 in the API's shape, with or without a body, and the handler never runs. */
    for (size_t body = 0; body <= 500; body += 500) {
        out = padded_exchange(port, HEAD_MAX + 100, body);
        assert_non_null(strstr(out, "HTTP/1.1 431"));
        assert_non_null(strstr(out, "{\"error\":{\"code\":\"GP_ETOOBIG\""));
        assert_non_null(strstr(out, "request headers"));
        free(out);
    }
    /* Far over it, past what a connection buffers: still 431 (libmicrohttpd's own). */
    out = padded_exchange(port, 200 * 1024, 0);
    assert_non_null(strstr(out, "HTTP/1.1 431"));
    free(out);
    assert_int_equal(atomic_load(&ec.calls), 1);

    /* Clients go on being served. */
    gp_http_client *c = client_for(srv, "http", NULL);
    int status = 0;
    out = call(c, "GET", "/after", NULL, 0, NULL, &status);
    assert_int_equal(status, 200);
    free(out);
    gp_http_client_free(c);
    gp_http_server_stop(srv);

    /* The default limit, and the bound on what may be asked. */
    srv = start_echo(&ec, NULL, NULL);
    out = padded_exchange(gp_http_server_port(srv), GP_HTTP_MAX_HEADER - 500, 0);
    assert_non_null(strstr(out, "HTTP/1.1 200"));
    free(out);
    out = padded_exchange(gp_http_server_port(srv), GP_HTTP_MAX_HEADER + 100, 0);
    assert_non_null(strstr(out, "HTTP/1.1 431"));
    free(out);
    gp_http_server_stop(srv);
    gp_http_server_config cfg = {.max_body = 1, .max_header = GP_HTTP_MAX_HEADER_LIMIT + 1};
    gp_diag d;
    assert_int_equal(gp_http_server_start(&cfg, echo_handler, &ec, &srv, &d), GP_EINVAL);
    assert_null(srv);
}

/* Waits up to ms for the server to close fd: true when it did (end of stream or reset). */
static bool closed_within(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, ms) <= 0) {
        return false;
    }
    char buf[256];
    ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno == ECONNRESET);
}

typedef struct trickler {
    int port;
    bool cut; /* the server closed the connection */
    int sent; /* bytes sent before that */
} trickler;

/* Sends a request's head one byte every 100 ms, for up to 10 s, until the server hangs up. */
static void *trickle_main(void *arg)
{
    trickler *t = arg;
    const char *start = "GET /trickle HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    int fd = raw_send(t->port, start, strlen(start));
    for (int i = 0; i < 100 && !t->cut; i++) {
        if (send(fd, "s", 1, MSG_NOSIGNAL) != 1) {
            t->cut = true;
            break;
        }
        t->sent++;
        t->cut = closed_within(fd, 100);
    }
    close(fd);
    return NULL;
}

typedef struct steady {
    int port, ok, calls;
} steady;

/* One keep-alive client: 40 requests, 50 ms apart (2 s, longer than the timeout). */
static void *steady_main(void *arg)
{
    steady *s = arg;
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", s->port);
    gp_http_client *c = NULL;
    gp_diag d;
    assert_int_equal(gp_http_client_new(url, NULL, &c, &d), 0);
    for (int i = 0; i < 40; i++) {
        int status = 0;
        char *out = NULL;
        s->calls++;
        if (gp_http_call(c, "GET", "/steady", NULL, 0, NULL, &status, &out, NULL, &d) == 0 &&
            status == 200) {
            s->ok++;
        }
        free(out);
        usleep(50 * 1000);
    }
    gp_http_client_free(c);
    return NULL;
}

static void test_slow_clients(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo_cfg(&ec, NULL, NULL, 0, 1);
    int port = gp_http_server_port(srv);
    trickler t = {.port = port};
    steady s = {.port = port};
    pthread_t tt, st;
    assert_int_equal(pthread_create(&tt, NULL, trickle_main, &t), 0);
    assert_int_equal(pthread_create(&st, NULL, steady_main, &s), 0);
    /* Half a request, then silence: closed (libmicrohttpd's idle timeout). */
    const char *half = "GET /half HTTP/1.1\r\nHost: x\r\n";
    int fd = raw_send(port, half, strlen(half));
    assert_true(closed_within(fd, 10000));
    close(fd);
    /* Nothing at all after connecting: closed as well. */
    fd = raw_send(port, "", 0);
    assert_true(closed_within(fd, 10000));
    close(fd);
    pthread_join(tt, NULL);
    pthread_join(st, NULL);
    /* A byte every 100 ms keeps libmicrohttpd's idle timer from firing: the request deadline
     * closes it long before the 100 bytes are out. */
    assert_true(t.cut);
    assert_true(t.sent < 100);
    /* Meanwhile the steady client's keep-alive connection was served throughout. */
    assert_int_equal(s.ok, s.calls);
    assert_int_equal(atomic_load(&ec.calls), s.calls);
    gp_http_server_stop(srv);
}

static void test_slow_deferred_not_cut(void **state)
{
    (void)state;
    /* A deferred answer may take longer than the timeout: the client sent its request in time. */
    defer_ctx dc;
    gp_http_server *srv = start_defer_timeout(&dc, 2, 1);
    finisher f = {&dc, 0, 1, 2500};
    int fd = send_defer(gp_http_server_port(srv), 5);
    wait_deferred(&dc, 1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, finisher_main, &f), 0);
    char *out = raw_read(fd);
    pthread_join(th, NULL);
    assert_non_null(strstr(out, "HTTP/1.1 200"));
    assert_non_null(strstr(out, "\r\n\r\ndone-5"));
    free(out);
    gp_http_server_stop(srv);
    pthread_mutex_destroy(&dc.lock);
}

/* The edge: a request target over the limits is 414 at once (2,000 query parameters used to
 * exhaust libmicrohttpd's pool and hang for the timeout); a chunked body is 413 and the
 * connection closed at once, even when its chunk declares 2^64-1 bytes and stalls; a connection
 * whose first bytes are not HTTP is closed at once. The server's timeout is 30 s: a close
 * within 5 s is not the timeout. Normal and keep-alive requests go on working. */
static void test_edge(void **state)
{
    (void)state;
    echo_ctx ec = {0};
    gp_http_server *srv = start_echo(&ec, NULL, NULL);
    int port = gp_http_server_port(srv);
    size_t cap = 64 * 1024;
    char *req = malloc(cap);
    assert_non_null(req);

    int n = snprintf(req, cap, "GET /echo?");
    for (int i = 0; i < 2000; i++) {
        n += snprintf(req + n, cap - (size_t)n, i ? "&a" : "a");
    }
    n += snprintf(req + n, cap - (size_t)n, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    char *out = raw_exchange(port, req, (size_t)n);
    assert_non_null(strstr(out, "HTTP/1.1 414"));
    assert_non_null(strstr(out, "query string: 2000 parameters, more than the 64 accepted"));
    free(out);

    n = snprintf(req, cap, "GET /echo?q=%09000d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                 7);
    out = raw_exchange(port, req, (size_t)n);
    assert_non_null(strstr(out, "HTTP/1.1 414"));
    assert_non_null(strstr(out, "request line: 9012 bytes, more than the 8192 accepted"));
    free(out);

    n = snprintf(req, cap, "GET /echo?q=1");
    for (int i = 1; i < GP_HTTP_MAX_QUERY_PARAMS; i++) {
        n += snprintf(req + n, cap - (size_t)n, "&a%d=1", i);
    }
    n += snprintf(req + n, cap - (size_t)n, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    out = raw_exchange(port, req, (size_t)n);
    assert_non_null(strstr(out, "HTTP/1.1 200"));
    assert_non_null(strstr(out, "q=1\n"));
    free(out);

    /* A chunk declaring 2^64-1 bytes, then silence: 413 and closed at once (not held until the
     * timeout); the same with the chunk's data streaming past max_body. */
    for (int stream = 0; stream <= 1; stream++) {
        n = snprintf(req, cap,
                     "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "FFFFFFFFFFFFFFFF\r\n");
        size_t data = stream ? MAX_BODY + 1 : 10;
        memset(req + n, 'c', data);
        n += (int)data;
        int fd = raw_send(port, req, (size_t)n);
        out = raw_read(fd);
        assert_non_null(strstr(out, "HTTP/1.1 413"));
        assert_non_null(strstr(out, "GP_ETOOBIG"));
        free(out);
    }

    /* A TLS ClientHello on the plain port, and binary garbage: closed at once, no answer. */
    static const unsigned char hello[] = {0x16, 0x03, 0x01, 0x00, 0xc4, 0x01, 0x00, 0x00,
                                          0xc0, 0x03, 0x03, 0x9a, 0x11, 0x00, 0x00, 0x00};
    static const unsigned char garbage[] = {0x00, 0x01, 0xff, 0xfe, 0x7f, 'G', 'E', 'T'};
    int fd = raw_send(port, (const char *)hello, sizeof(hello));
    assert_true(closed_within(fd, 5000));
    close(fd);
    fd = raw_send(port, (const char *)garbage, sizeof(garbage));
    assert_true(closed_within(fd, 5000));
    close(fd);
    assert_int_equal(atomic_load(&ec.calls), 1);

    /* Normal requests on one keep-alive connection still work. */
    gp_http_client *c = client_for(srv, "http", NULL);
    for (int i = 0; i < 3; i++) {
        int status = 0;
        out = call(c, "GET", "/echo?q=ok", NULL, 0, NULL, &status);
        assert_int_equal(status, 200);
        free(out);
    }
    gp_http_client_free(c);
    assert_int_equal(atomic_load(&ec.calls), 4);
    free(req);
    gp_http_server_stop(srv);
}

/* What the acceptor lets through, byte by byte. */
static void test_sniff(void **state)
{
    (void)state;
    const unsigned char *u = (const unsigned char *)"GET / HTTP/1.1";
    assert_int_equal(gp_http_sniff(u, 0, false), GP_SNIFF_MORE);
    assert_int_equal(gp_http_sniff(u, 2, false), GP_SNIFF_MORE);
    assert_int_equal(gp_http_sniff(u, 4, false), GP_SNIFF_OK);
    assert_int_equal(gp_http_sniff((const unsigned char *)"\r\nPOST /", 8, false), GP_SNIFF_OK);
    assert_int_equal(gp_http_sniff((const unsigned char *)"M-SEARCH *", 10, false), GP_SNIFF_OK);
    assert_int_equal(gp_http_sniff((const unsigned char *)" GET", 4, false), GP_SNIFF_BAD);
    assert_int_equal(gp_http_sniff((const unsigned char *)"get /", 5, false), GP_SNIFF_BAD);
    assert_int_equal(gp_http_sniff((const unsigned char *)"\x16\x03\x01", 3, false), GP_SNIFF_BAD);
    assert_int_equal(gp_http_sniff((const unsigned char *)"ABCDEFGHIJKLMNOPQ ", 18, false),
                     GP_SNIFF_BAD);
    unsigned char crlf[GP_HTTP_SNIFF_BYTES];
    memset(crlf, '\n', sizeof(crlf));
    assert_int_equal(gp_http_sniff(crlf, sizeof(crlf) - 1, false), GP_SNIFF_MORE);
    assert_int_equal(gp_http_sniff(crlf, sizeof(crlf), false), GP_SNIFF_BAD);
    assert_int_equal(gp_http_sniff((const unsigned char *)"\x16\x03", 2, true), GP_SNIFF_OK);
    assert_int_equal(gp_http_sniff(u, 4, true), GP_SNIFF_BAD);
}

/* The Prefer header (RFC 7240): the preference named, with the value asked for, wherever it is
 * in the list; case, spaces, quotes and parameters do not matter; a near miss is no. */
static void test_prefer(void **state)
{
    (void)state;
    assert_true(gp_http_prefers("return=minimal", "return", "minimal"));
    assert_true(gp_http_prefers("respond-async, RETURN = \"Minimal\" ; x=1", "return", "minimal"));
    assert_true(gp_http_prefers("wait=10,return=minimal", "return", "minimal"));
    assert_true(gp_http_prefers("respond-async", "respond-async", NULL));
    assert_false(gp_http_prefers("return=representation", "return", "minimal"));
    assert_false(gp_http_prefers("return=minimalist", "return", "minimal"));
    assert_false(gp_http_prefers("areturn=minimal", "return", "minimal"));
    assert_false(gp_http_prefers("x; return=minimal", "return", "minimal")); /* a parameter */
    assert_false(gp_http_prefers("return", "return", "minimal"));
    assert_false(gp_http_prefers("", "return", "minimal"));
    assert_false(gp_http_prefers(NULL, "return", "minimal"));
    /* the first of the name decides */
    assert_false(gp_http_prefers("return=representation, return=minimal", "return", "minimal"));
}

int main(void)
{
    if (gp_http_client_global_init() != 0) {
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefer),
        cmocka_unit_test(test_methods),
        cmocka_unit_test(test_query_and_headers),
        cmocka_unit_test(test_response_shapes),
        cmocka_unit_test(test_body_limit),
        cmocka_unit_test(test_body_limit_per_request),
        cmocka_unit_test(test_large_bodies_bound),
        cmocka_unit_test(test_concurrent_clients),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_listen_and_connect_errors),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_defer_finish_from_thread),
        cmocka_unit_test(test_defer_many_small_pool),
        cmocka_unit_test(test_defer_client_gone),
        cmocka_unit_test(test_defer_stop_pending),
        cmocka_unit_test(test_header_limit),
        cmocka_unit_test(test_slow_clients),
        cmocka_unit_test(test_slow_deferred_not_cut),
        cmocka_unit_test(test_edge),
        cmocka_unit_test(test_sniff),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gp_http_client_global_cleanup();
    return rc;
}
