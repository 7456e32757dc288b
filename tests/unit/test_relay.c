/*
 * The relay (src/net/relay.c) between two TCP connections on 127.0.0.1: bytes pass both ways,
 * the end of one side's stream is passed on, and both of the relay's sockets have TCP_NODELAY
 * (a kept tunnel must not hold a small write back for an ACK).
 */
#include "net/relay.h"
#include "tests/unit/harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A connected TCP pair on 127.0.0.1: out[0] the client's end, out[1] the server's. */
static void tcp_pair(int out[2])
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(l >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
    out[0] = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(out[0], (struct sockaddr *)&sa, sizeof(sa)), 0);
    out[1] = accept(l, NULL, NULL);
    assert_true(out[1] >= 0);
    close(l);
}

static bool nodelay(int fd)
{
    int v = 0;
    socklen_t len = sizeof(v);
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
    return v != 0;
}

typedef struct relay_args {
    int a, b;
} relay_args;

static void *relay_main(void *arg)
{
    relay_args *r = arg;
    gp_relay_run(r->a, r->b, "first", 5, NULL, NULL);
    return NULL;
}

static void read_exact(int fd, char *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = recv(fd, buf + got, n - got, 0);
        assert_true(r > 0);
        got += (size_t)r;
    }
}

static void test_relay(void **state)
{
    (void)state;
    int x[2], y[2]; /* client x[0] - relay x[1] ... relay y[0] - server y[1] */
    tcp_pair(x);
    tcp_pair(y);
    assert_false(nodelay(x[1]));
    relay_args r = {x[1], y[0]};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, relay_main, &r), 0);
    char buf[16];
    read_exact(y[1], buf, 5);
    assert_memory_equal(buf, "first", 5);
    assert_int_equal(send(x[0], "ping", 4, 0), 4);
    read_exact(y[1], buf, 4);
    assert_memory_equal(buf, "ping", 4);
    assert_int_equal(send(y[1], "pong", 4, 0), 4);
    read_exact(x[0], buf, 4);
    assert_memory_equal(buf, "pong", 4);
    assert_true(nodelay(x[1]));
    assert_true(nodelay(y[0]));
    shutdown(x[0], SHUT_WR); /* the end of one side's stream reaches the other */
    assert_int_equal(recv(y[1], buf, sizeof(buf), 0), 0);
    shutdown(y[1], SHUT_WR);
    assert_int_equal(recv(x[0], buf, sizeof(buf), 0), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    for (int i = 0; i < 2; i++) {
        close(x[i]);
        close(y[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
