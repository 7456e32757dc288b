/*
 * Probes of a service's replicas (agent/probe.h) against real local sockets and processes: HTTP
 * (2xx/3xx pass, 5xx, refused and a server that never answers fail), TCP, exec (exit status, a
 * command that overruns is killed, the prefix and working directory), the connect function, the
 * thresholds, and the prober's threads (readiness turns ready, liveness turns dead, a stop while
 * a probe hangs returns).
 */
#define _GNU_SOURCE
#include "agent/probe.h"
#include "tests/unit/harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A loopback server answering every connection with status (0: never answers, holds it). */
typedef struct server {
    int fd, port, status;
    const char *body; /* the answer's body (status 200 only) */
    pthread_t th;
    int served;
} server;

static void *serve(void *arg)
{
    server *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0) {
            return NULL;
        }
        s->served++;
        char buf[1024];
        ssize_t n = recv(c, buf, sizeof(buf), 0);
        (void)n;
        if (s->status == 0) {
            struct timespec ts = {3, 0};
            nanosleep(&ts, NULL);
        } else {
            char out[128];
            int len = snprintf(out, sizeof(out), "HTTP/1.0 %d X\r\n\r\n", s->status);
            ssize_t w = send(c, out, (size_t)len, MSG_NOSIGNAL);
            if (s->body) {
                w = send(c, s->body, strlen(s->body), MSG_NOSIGNAL);
            }
            (void)w;
        }
        close(c);
    }
}

static int listen_any(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void server_start(server *s, int status)
{
    memset(s, 0, sizeof(*s));
    s->status = status;
    s->fd = listen_any(&s->port);
    assert_int_equal(pthread_create(&s->th, NULL, serve, s), 0);
}

static void server_stop(server *s)
{
    shutdown(s->fd, SHUT_RDWR);
    close(s->fd);
    pthread_join(s->th, NULL);
}

/* A port nobody listens on. */
static int closed_port(void)
{
    int port;
    close(listen_any(&port));
    return port;
}

static gp_probe_conf conf(gp_probe_kind kind, int port)
{
    return (gp_probe_conf){.kind = kind,
                           .port = port,
                           .path = "/healthz",
                           .period_s = 1,
                           .timeout_s = 1,
                           .failure_threshold = 1,
                           .success_threshold = 1};
}

static void test_http(void **state)
{
    (void)state;
    char msg[GP_PROBE_MSG_MAX];
    int codes[] = {200, 204, 302, 404, 503};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        server s;
        server_start(&s, codes[i]);
        gp_probe_conf c = conf(GP_PROBE_KIND_HTTP, s.port);
        int ok = gp_probe_once(&c, NULL, msg, sizeof(msg));
        assert_int_equal(ok, codes[i] < 400 ? 1 : 0);
        if (!ok) {
            char want[32];
            snprintf(want, sizeof(want), "status %d", codes[i]);
            assert_non_null(strstr(msg, want));
        }
        server_stop(&s);
    }
    gp_probe_conf c = conf(GP_PROBE_KIND_HTTP, closed_port());
    assert_int_equal(gp_probe_once(&c, NULL, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "refused"));
}

static void test_http_timeout(void **state)
{
    (void)state;
    server s;
    server_start(&s, 0);
    gp_probe_conf c = conf(GP_PROBE_KIND_HTTP, s.port);
    char msg[GP_PROBE_MSG_MAX];
    assert_int_equal(gp_probe_once(&c, NULL, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "timed out after 1 s"));
    server_stop(&s);
}

static void test_tcp(void **state)
{
    (void)state;
    char msg[GP_PROBE_MSG_MAX];
    server s;
    server_start(&s, 200);
    gp_probe_conf c = conf(GP_PROBE_KIND_TCP, s.port);
    assert_int_equal(gp_probe_once(&c, NULL, msg, sizeof(msg)), 1);
    server_stop(&s);
    c.port = closed_port();
    assert_int_equal(gp_probe_once(&c, NULL, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "connect"));
}

/* The target's connect function is how a probe reaches a replica's network namespace. */
typedef struct redirect {
    int to_port, calls, asked_port;
} redirect;

static int redirect_connect(void *ctx, int port, int timeout_ms, char *msg, size_t cap)
{
    redirect *r = ctx;
    r->calls++;
    r->asked_port = port;
    (void)timeout_ms;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->to_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        snprintf(msg, cap, "redirect failed");
        close(fd);
        return -8;
    }
    return fd;
}

static void test_connect_fn(void **state)
{
    (void)state;
    server s;
    server_start(&s, 200);
    redirect r = {.to_port = s.port};
    gp_probe_target t = {.connect = redirect_connect, .connect_ctx = &r};
    gp_probe_conf c = conf(GP_PROBE_KIND_HTTP, 8080);
    char msg[GP_PROBE_MSG_MAX];
    assert_int_equal(gp_probe_once(&c, &t, msg, sizeof(msg)), 1);
    c.kind = GP_PROBE_KIND_TCP;
    assert_int_equal(gp_probe_once(&c, &t, msg, sizeof(msg)), 1);
    assert_int_equal(r.calls, 2);
    assert_int_equal(r.asked_port, 8080);
    server_stop(&s);
    r.to_port = closed_port();
    assert_int_equal(gp_probe_once(&c, &t, msg, sizeof(msg)), 0);
    assert_string_equal(msg, "redirect failed");
}

static void test_exec(void **state)
{
    (void)state;
    char msg[GP_PROBE_MSG_MAX];
    const char *ok[] = {"true", NULL};
    const char *bad[] = {"sh", "-c", "exit 3", NULL};
    const char *slow[] = {"sleep", "30", NULL};
    const char *missing[] = {"/nonexistent/probe", NULL};
    gp_probe_conf c = conf(GP_PROBE_KIND_EXEC, 0);
    c.command = ok;
    assert_int_equal(gp_probe_once(&c, NULL, msg, sizeof(msg)), 1);
    c.command = bad;
    assert_int_equal(gp_probe_once(&c, NULL, msg, sizeof(msg)), 0);
    assert_string_equal(msg, "exec sh: exit 3");
    c.command = missing;
    assert_int_equal(gp_probe_once(&c, NULL, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "exit 127"));
    c.command = slow;
    assert_int_equal(gp_probe_once(&c, NULL, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "timed out after 1 s"));
    /* The prefix comes first and the command runs in the target's directory. */
    const char *pre[] = {"env", "PROBE_MARK=1", NULL};
    const char *where[] = {"sh", "-c", "test \"$PWD\" = /tmp && test \"$PROBE_MARK\" = 1", NULL};
    gp_probe_target t = {.exec_prefix = pre, .exec_dir = "/tmp"};
    c.command = where;
    assert_int_equal(gp_probe_once(&c, &t, msg, sizeof(msg)), 1);
    t.exec_dir = "/";
    assert_int_equal(gp_probe_once(&c, &t, msg, sizeof(msg)), 0);
}

/* The service's metric scraped in Prometheus text: summed over labels; a missing metric, a
 * status other than 200 and a closed port give no value. */
static void test_scrape(void **state)
{
    (void)state;
    server s;
    memset(&s, 0, sizeof(s));
    s.status = 200;
    s.body = "# TYPE inflight gauge\ninflight{a=\"1\"} 2\ninflight{a=\"2\"} 5\n";
    s.fd = listen_any(&s.port);
    assert_int_equal(pthread_create(&s.th, NULL, serve, &s), 0);
    char msg[GP_PROBE_MSG_MAX];
    double v = 0;
    assert_int_equal(
        gp_probe_scrape(NULL, s.port, "/metrics", "inflight", 1000, &v, msg, sizeof(msg)), 1);
    assert_true(v == 7.0);
    assert_int_equal(gp_probe_scrape(NULL, s.port, NULL, "absent", 1000, &v, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "no sample of absent"));
    server_stop(&s);
    server_start(&s, 500);
    assert_int_equal(gp_probe_scrape(NULL, s.port, NULL, "inflight", 1000, &v, msg, sizeof(msg)),
                     0);
    server_stop(&s);
    assert_int_equal(
        gp_probe_scrape(NULL, closed_port(), NULL, "inflight", 1000, &v, msg, sizeof(msg)), 0);
}

/* An exec probe enters the network namespace the target gives (here the test's own); without
 * one to enter it fails without running the command. */
static int own_netns(void *ctx)
{
    (void)ctx;
    return open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
}

static int no_netns(void *ctx)
{
    (void)ctx;
    return -1;
}

static void test_exec_netns(void **state)
{
    (void)state;
    char msg[GP_PROBE_MSG_MAX];
    const char *ok[] = {"true", NULL};
    gp_probe_conf c = conf(GP_PROBE_KIND_EXEC, 0);
    c.command = ok;
    gp_probe_target t = {.netns_fd = own_netns};
    if (geteuid() == 0) { /* setns needs CAP_SYS_ADMIN */
        assert_int_equal(gp_probe_once(&c, &t, msg, sizeof(msg)), 1);
    }
    t.netns_fd = no_netns;
    assert_int_equal(gp_probe_once(&c, &t, msg, sizeof(msg)), 0);
    assert_non_null(strstr(msg, "network namespace is not there"));
}

static void test_thresholds(void **state)
{
    (void)state;
    gp_probe_conf c = conf(GP_PROBE_KIND_TCP, 1);
    c.failure_threshold = 3;
    c.success_threshold = 2;
    gp_probe_state s;
    gp_probe_state_init(&s, false);
    assert_false(gp_probe_state_observe(&s, &c, true, NULL));
    assert_false(s.pass);
    assert_true(gp_probe_state_observe(&s, &c, true, NULL));
    assert_true(s.pass);
    /* Two failures, a success between: the count starts again. */
    assert_false(gp_probe_state_observe(&s, &c, false, "a"));
    assert_false(gp_probe_state_observe(&s, &c, false, "b"));
    assert_false(gp_probe_state_observe(&s, &c, true, NULL));
    assert_false(gp_probe_state_observe(&s, &c, false, "c"));
    assert_false(gp_probe_state_observe(&s, &c, false, "d"));
    assert_true(s.pass);
    assert_true(gp_probe_state_observe(&s, &c, false, "e"));
    assert_false(s.pass);
    assert_string_equal(s.last, "e");
    /* One success does not make it pass again with a threshold of 2. */
    assert_false(gp_probe_state_observe(&s, &c, true, NULL));
    assert_false(s.pass);
}

/* Polls the prober until cond holds on its status or 20 s pass (a bound, not a timing). */
static gp_probe_status wait_status(gp_prober *p, bool want_ready, bool want_alive)
{
    gp_probe_status st;
    for (int i = 0; i < 400; i++) {
        gp_prober_status(p, &st);
        if (st.ready == want_ready && st.alive == want_alive) {
            return st;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fail_msg("prober: ready %d alive %d, wanted %d %d", st.ready, st.alive, want_ready, want_alive);
    return st;
}

static void test_prober(void **state)
{
    (void)state;
    server s;
    server_start(&s, 200);
    gp_probe_conf ready = conf(GP_PROBE_KIND_HTTP, s.port);
    gp_probe_conf live = conf(GP_PROBE_KIND_TCP, closed_port());
    live.failure_threshold = 2;
    gp_prober *p = NULL;
    assert_int_equal(gp_prober_start(&ready, &live, NULL, NULL, &p), 0);
    gp_probe_status st;
    gp_prober_status(p, &st);
    assert_true(st.alive); /* alive until proven otherwise */
    st = wait_status(p, true, false);
    assert_non_null(strstr(st.why, "connect"));
    gp_prober_stop(p);
    server_stop(&s);

    /* Without probes: ready and alive at once. */
    assert_int_equal(gp_prober_start(NULL, NULL, NULL, NULL, &p), 0);
    gp_prober_status(p, &st);
    assert_true(st.ready && st.alive);
    gp_prober_stop(p);

    /* A bad probe is refused. */
    gp_probe_conf badc = conf(GP_PROBE_KIND_TCP, 0);
    assert_int_equal(gp_prober_start(&badc, NULL, NULL, NULL, &p), -1);
    assert_null(p);
}

/* The prober scrapes the service's metric each period. */
static void test_prober_scrape(void **state)
{
    (void)state;
    server s;
    memset(&s, 0, sizeof(s));
    s.status = 200;
    s.body = "load 2.5\n";
    s.fd = listen_any(&s.port);
    assert_int_equal(pthread_create(&s.th, NULL, serve, &s), 0);
    gp_probe_scrape_conf sc = {.port = s.port, .path = "/metrics", .name = "load", .period_s = 1};
    gp_prober *p = NULL;
    assert_int_equal(gp_prober_start(NULL, NULL, &sc, NULL, &p), 0);
    gp_probe_status st = {0};
    for (int i = 0; i < 400 && !st.has_metric; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        gp_prober_status(p, &st);
    }
    assert_true(st.has_metric);
    assert_true(st.metric == 2.5);
    assert_true(st.ready && st.alive);
    gp_prober_stop(p);
    server_stop(&s);
    gp_probe_scrape_conf bad = {.port = 80, .name = "", .period_s = 1};
    assert_int_equal(gp_prober_start(NULL, NULL, &bad, NULL, &p), -1);
}

/* A stop while an attempt hangs returns once the attempt's timeout ends. */
static void test_prober_stop_hung(void **state)
{
    (void)state;
    server s;
    server_start(&s, 0);
    gp_probe_conf ready = conf(GP_PROBE_KIND_HTTP, s.port);
    gp_prober *p = NULL;
    assert_int_equal(gp_prober_start(&ready, NULL, NULL, NULL, &p), 0);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    gp_probe_status st;
    gp_prober_status(p, &st);
    assert_false(st.ready);
    gp_prober_stop(p);
    server_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http),          cmocka_unit_test(test_http_timeout),
        cmocka_unit_test(test_tcp),           cmocka_unit_test(test_connect_fn),
        cmocka_unit_test(test_exec),          cmocka_unit_test(test_scrape),
        cmocka_unit_test(test_exec_netns),    cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_prober),        cmocka_unit_test(test_prober_stop_hung),
        cmocka_unit_test(test_prober_scrape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
