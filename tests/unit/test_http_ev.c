/*
 * The gpupool program's HTTP client (net/http_client_impl.h with http_client_pick_ev.c): what
 * the evhttp transport does beyond the client tests it shares with libcurl (test_http_evhttp,
 * test_servers_evhttp), against a raw TCP server on 127.0.0.1 that records the bytes it gets:
 * the request as sent (Host, token, JSON type and length, the caller's headers, a "Name:" header
 * dropped), a kept connection the server closed between two calls (the second call opens a new
 * one instead of failing), the call's deadline and the connect phase's (a POST then goes on to
 * the next server: nothing was sent), and a proxy in the environment (the call then goes
 * through libcurl, to the proxy).
 */
#include "gpupool/error.h"
#include "net/http_client.h"
#include "tests/unit/harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef enum raw_mode { RAW_KEEP, RAW_CLOSE_EACH, RAW_SILENT } raw_mode;

typedef struct raw {
    raw_mode mode;
    int lfd, port, serve; /* serve: requests to answer before the thread ends */
    pthread_t th;
    char first[8192]; /* the first request's bytes */
    atomic_int accepted, answered, closed;
} raw;

/* Reads one request (head, then a Content-Length body) into buf. Its length, or -1 at EOF. */
static int read_request(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    char *end = NULL;
    while (!(end = strstr(buf, "\r\n\r\n"))) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r <= 0) {
            return -1;
        }
        n += (size_t)r;
        buf[n] = '\0';
    }
    const char *cl = strstr(buf, "Content-Length: ");
    size_t want = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 16, NULL, 10) : 0);
    while (n < want) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r <= 0) {
            return -1;
        }
        n += (size_t)r;
        buf[n] = '\0';
    }
    return (int)n;
}

static void *raw_main(void *arg)
{
    raw *s = arg;
    static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 "Content-Length: 11\r\n\r\n{\"ok\":true}";
    while (atomic_load(&s->answered) < s->serve) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0) {
            break;
        }
        atomic_fetch_add(&s->accepted, 1);
        char buf[8192] = "";
        while (atomic_load(&s->answered) < s->serve && read_request(fd, buf, sizeof(buf)) > 0) {
            if (!s->first[0]) {
                memcpy(s->first, buf, sizeof(s->first));
            }
            if (s->mode == RAW_SILENT) {
                char rest[64];
                while (read(fd, rest, sizeof(rest)) > 0) {
                }
                break;
            }
            assert_true(write(fd, answer, sizeof(answer) - 1) == (ssize_t)(sizeof(answer) - 1));
            atomic_fetch_add(&s->answered, 1);
            memset(buf, 0, sizeof(buf));
            if (s->mode == RAW_CLOSE_EACH) {
                break;
            }
        }
        close(fd);
        atomic_fetch_add(&s->closed, 1);
    }
    return NULL;
}

static void raw_start(raw *s, raw_mode mode, int serve, int backlog)
{
    memset(s, 0, sizeof(*s));
    s->mode = mode;
    s->serve = serve;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(s->lfd, backlog), 0);
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&sa, &len), 0);
    s->port = ntohs(sa.sin_port);
    if (serve > 0) {
        assert_int_equal(pthread_create(&s->th, NULL, raw_main, s), 0);
    }
}

static void raw_stop(raw *s)
{
    shutdown(s->lfd, SHUT_RDWR);
    if (s->serve > 0) {
        pthread_join(s->th, NULL);
    }
    close(s->lfd);
}

static void wait_for(atomic_int *v, int want)
{
    struct timespec ts = {0, 1000000};
    for (int i = 0; i < 10000 && atomic_load(v) < want; i++) {
        nanosleep(&ts, NULL);
    }
    assert_int_equal(atomic_load(v), want);
}

static gp_http_client *client(int port, const char *token)
{
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/", port);
    gp_http_client *c = NULL;
    gp_diag d;
    assert_int_equal(gp_http_client_new(url, token, &c, &d), 0);
    return c;
}

static void test_request_as_sent(void **state)
{
    (void)state;
    raw s;
    raw_start(&s, RAW_KEEP, 1, 8);
    gp_http_client *c = client(s.port, "tok-1");
    const char *hdrs[] = {"Idempotency-Key: k1", "X-Dropped:", NULL};
    int status = 0;
    char *body = NULL;
    size_t len = 0;
    gp_diag d;
    assert_int_equal(
        gp_http_call(c, "POST", "/v1/jobs?x=1", "{\"a\":1}", 7, hdrs, &status, &body, &len, &d), 0);
    assert_int_equal(status, 200);
    assert_string_equal(body, "{\"ok\":true}");
    assert_int_equal(len, 11);
    free(body);
    raw_stop(&s);
    const char *r = s.first;
    assert_true(strncmp(r, "POST /api/v1/jobs?x=1 HTTP/1.1\r\n", 32) == 0);
    char host[64];
    snprintf(host, sizeof(host), "\r\nHost: 127.0.0.1:%d\r\n", s.port);
    assert_non_null(strstr(r, host));
    assert_non_null(strstr(r, "\r\nAuthorization: Bearer tok-1\r\n"));
    assert_non_null(strstr(r, "\r\nContent-Type: application/json\r\n"));
    assert_non_null(strstr(r, "\r\nContent-Length: 7\r\n"));
    assert_non_null(strstr(r, "\r\nIdempotency-Key: k1\r\n"));
    assert_null(strstr(r, "X-Dropped"));
    /* evhttp carried it: libcurl adds an Accept header to every request */
    assert_null(strstr(r, "Accept:"));
    assert_non_null(strstr(r, "\r\n\r\n{\"a\":1}"));
    gp_http_client_free(c);
}

/* The server closes the kept connection after each answer: every call still gets its answer,
 * on a connection of its own. */
static void test_closed_connection_not_reused(void **state)
{
    (void)state;
    raw s;
    raw_start(&s, RAW_CLOSE_EACH, 3, 8);
    gp_http_client *c = client(s.port, NULL);
    for (int i = 1; i <= 3; i++) {
        int status = 0;
        char *body = NULL;
        gp_diag d;
        gp_diag_clear(&d);
        /* a POST: never sent twice, so a dead connection must be seen before sending */
        int rc = gp_http_call(c, "POST", "/x", "{}", 2, NULL, &status, &body, NULL, &d);
        if (rc != 0) {
            fail_msg("call %d: %s", i, d.msg);
        }
        assert_int_equal(status, 200);
        free(body);
        wait_for(&s.closed, i);
    }
    assert_int_equal(atomic_load(&s.accepted), 3);
    gp_http_client_free(c);
    raw_stop(&s);
}

/* A kept connection serves the next call. */
static void test_connection_kept(void **state)
{
    (void)state;
    raw s;
    raw_start(&s, RAW_KEEP, 3, 8);
    gp_http_client *c = client(s.port, NULL);
    for (int i = 0; i < 3; i++) {
        int status = 0;
        char *body = NULL;
        gp_diag d;
        assert_int_equal(gp_http_call(c, "GET", "/x", NULL, 0, NULL, &status, &body, NULL, &d), 0);
        assert_int_equal(status, 200);
        free(body);
    }
    assert_int_equal(atomic_load(&s.accepted), 1);
    gp_http_client_free(c);
    raw_stop(&s);
}

static void test_deadlines(void **state)
{
    (void)state;
    /* Connected, the request read, never answered: the call's deadline. */
    raw s;
    raw_start(&s, RAW_SILENT, 1, 8);
    gp_http_client *c = client(s.port, NULL);
    gp_http_client_set_timeout(c, 300, 200);
    int status = 0;
    char *body = NULL;
    gp_diag d;
    assert_int_equal(gp_http_call(c, "GET", "/slow", NULL, 0, NULL, &status, &body, NULL, &d),
                     GP_EIO);
    assert_null(body);
    assert_non_null(strstr(d.msg, "GET http://127.0.0.1:"));
    assert_non_null(strstr(d.msg, "/api/slow: Operation timed out after 300 milliseconds"));
    gp_http_client_free(c);
    raw_stop(&s);
}

/* A server whose accept queue is full (backlog 0, one connection waiting) never completes a
 * connect: the connect phase's deadline ends the attempt, and since nothing was sent a POST goes
 * on to the next server of the list. */
static void test_connect_deadline(void **state)
{
    (void)state;
    raw full, good;
    raw_start(&full, RAW_KEEP, 0, 0);
    raw_start(&good, RAW_KEEP, 1, 8);
    int filler = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)full.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(filler, (struct sockaddr *)&sa, sizeof(sa)), 0);
    gp_http_client *c = client(full.port, NULL);
    gp_http_client_set_timeout(c, 10000, 200);
    int status = 0;
    char *body = NULL;
    gp_diag d;
    assert_int_equal(gp_http_call(c, "POST", "/x", "{}", 2, NULL, &status, &body, NULL, &d),
                     GP_EIO);
    assert_non_null(strstr(d.msg, "/api/x: Connection timed out after 200 milliseconds"));
    gp_http_client_free(c);

    char list[128];
    snprintf(list, sizeof(list), "http://127.0.0.1:%d,http://127.0.0.1:%d", full.port, good.port);
    assert_int_equal(gp_http_client_new_servers(list, NULL, &c, &d), 0);
    gp_http_client_set_timeout(c, 10000, 200);
    gp_http_client_set_failover(c, 1, 0);
    assert_int_equal(gp_http_call(c, "POST", "/x", "{}", 2, NULL, &status, &body, NULL, &d), 0);
    assert_int_equal(status, 200);
    free(body);
    assert_int_equal(atomic_load(&good.answered), 1);
    gp_http_client_free(c);
    close(filler);
    raw_stop(&good);
    raw_stop(&full);
}

/* With a proxy in the environment the call goes through libcurl, to the proxy. */
static void test_proxy_through_curl(void **state)
{
    (void)state;
    raw proxy;
    raw_start(&proxy, RAW_KEEP, 1, 8);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", proxy.port);
    assert_int_equal(setenv("http_proxy", url, 1), 0);
    assert_int_equal(unsetenv("no_proxy"), 0);
    assert_int_equal(unsetenv("NO_PROXY"), 0);
    gp_http_client *c = NULL;
    gp_diag d;
    assert_int_equal(gp_http_client_new("http://gpupool.invalid:7070", NULL, &c, &d), 0);
    int status = 0;
    char *body = NULL;
    assert_int_equal(gp_http_call(c, "GET", "/v1/x", NULL, 0, NULL, &status, &body, NULL, &d), 0);
    assert_int_equal(status, 200);
    free(body);
    gp_http_client_free(c);
    raw_stop(&proxy);
    unsetenv("http_proxy");
    assert_true(strncmp(proxy.first, "GET http://gpupool.invalid:7070/v1/x HTTP/1.1\r\n", 47) == 0);
}

int main(void)
{
    assert_int_equal(gp_http_client_global_init(), 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_as_sent),
        cmocka_unit_test(test_closed_connection_not_reused),
        cmocka_unit_test(test_connection_kept),
        cmocka_unit_test(test_deadlines),
        cmocka_unit_test(test_connect_deadline),
        cmocka_unit_test(test_proxy_through_curl),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    gp_http_client_global_cleanup();
    return rc;
}
