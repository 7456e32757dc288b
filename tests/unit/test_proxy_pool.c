/*
 * The proxy's idle upstream tunnels (src/ctl/proxy_pool.c), with socket pairs for tunnels: a
 * tunnel is handed out only for the very target it was kept for (tenant, agent, job, replica,
 * epoch, port); an older epoch's are closed; one closed by its upstream, one with stray bytes,
 * one idle too long are closed, not handed out; the bounds; stop. A tunnel the pool closed is
 * seen from its peer (the end of the stream).
 */
#include "ctl/proxy_pool.h"
#include "tests/unit/harness.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static px_pool_key key_of(int64_t tenant, int64_t job, int replica, int64_t epoch, int port)
{
    px_pool_key k = {
        .tenant = tenant, .job = job, .replica = replica, .epoch = epoch, .port = port};
    snprintf(k.agent, sizeof(k.agent), "10.0.0.1:7071");
    return k;
}

/* A tunnel: [0] the pool's end, [1] the upstream's. */
static void pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* Whether the pool's end of the pair was closed: the upstream's end reads the end of stream. */
static bool closed_by_pool(int upstream)
{
    struct pollfd pf = {.fd = upstream, .events = POLLIN};
    if (poll(&pf, 1, 0) != 1) {
        return false;
    }
    char c;
    return recv(upstream, &c, 1, MSG_DONTWAIT) == 0;
}

static void test_bound_to_its_target(void **state)
{
    (void)state;
    px_pool *p = px_pool_new();
    assert_non_null(p);
    px_pool_key k = key_of(1, 10, 0, 5, 8888);
    int sv[2];
    pair(sv);
    px_pool_put(p, &k, sv[0], 1000);
    assert_int_equal(px_pool_count(p), 1);
    px_pool_key other[] = {key_of(2, 10, 0, 5, 8888), key_of(1, 11, 0, 5, 8888),
                           key_of(1, 10, 1, 5, 8888), key_of(1, 10, 0, 5, 8889)};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        assert_int_equal(px_pool_take(p, &other[i], 1000), -1);
    }
    px_pool_key agent = k;
    snprintf(agent.agent, sizeof(agent.agent), "10.0.0.2:7071");
    assert_int_equal(px_pool_take(p, &agent, 1000), -1);
    assert_int_equal(px_pool_count(p), 1); /* other targets leave it alone */
    assert_int_equal(px_pool_take(p, &k, 1001), sv[0]);
    assert_int_equal(px_pool_take(p, &k, 1001), -1); /* handed out once */
    assert_int_equal(px_pool_count(p), 0);
    assert_false(closed_by_pool(sv[1]));
    close(sv[0]);
    close(sv[1]);
    px_pool_free(p);
}

/* A restarted replica (a new epoch) never gets its old tunnels: they are closed when the new
 * epoch is asked for, and one of the old epoch given back later is closed at once. */
static void test_epoch(void **state)
{
    (void)state;
    px_pool *p = px_pool_new();
    px_pool_key old = key_of(1, 10, 0, 5, 8888), cur = key_of(1, 10, 0, 6, 8888);
    int a[2], b[2], c[2];
    pair(a);
    pair(b);
    pair(c);
    px_pool_put(p, &old, a[0], 0);
    assert_int_equal(px_pool_take(p, &cur, 1), -1);
    assert_int_equal(px_pool_count(p), 0);
    assert_true(closed_by_pool(a[1]));
    px_pool_put(p, &cur, b[0], 2);
    px_pool_put(p, &old, c[0], 3); /* taken before the restart, given back after */
    assert_int_equal(px_pool_count(p), 1);
    assert_true(closed_by_pool(c[1]));
    assert_int_equal(px_pool_take(p, &cur, 4), b[0]);
    close(b[0]);
    close(a[1]);
    close(b[1]);
    close(c[1]);
    px_pool_free(p);
}

/* Closed by the upstream, or bytes came unasked, or idle past PX_POOL_IDLE_MS: closed, not
 * handed out. */
static void test_dead_and_idle(void **state)
{
    (void)state;
    px_pool *p = px_pool_new();
    px_pool_key k = key_of(1, 10, 0, 5, 8888);
    int a[2], b[2], c[2];
    pair(a);
    pair(b);
    pair(c);
    px_pool_put(p, &k, a[0], 0);
    close(a[1]); /* the job closed its keep-alive connection */
    assert_int_equal(px_pool_take(p, &k, 1), -1);
    assert_int_equal(px_pool_count(p), 0);
    px_pool_put(p, &k, b[0], 0);
    assert_int_equal(send(b[1], "x", 1, 0), 1); /* stray bytes: no longer in a known state */
    assert_int_equal(px_pool_take(p, &k, 1), -1);
    assert_true(closed_by_pool(b[1]) || errno == ECONNRESET);
    px_pool_put(p, &k, c[0], 0);
    px_pool_sweep(p, PX_POOL_IDLE_MS - 1);
    assert_int_equal(px_pool_count(p), 1);
    px_pool_sweep(p, PX_POOL_IDLE_MS);
    assert_int_equal(px_pool_count(p), 0);
    assert_true(closed_by_pool(c[1]));
    close(b[1]);
    close(c[1]);
    px_pool_free(p);
}

/* At most PX_POOL_PER_TARGET per target and PX_POOL_MAX in all, the oldest closed past them;
 * the most recently kept is handed out first. */
static void test_bounds(void **state)
{
    (void)state;
    px_pool *p = px_pool_new();
    px_pool_key k = key_of(1, 10, 0, 5, 8888);
    int up[PX_POOL_PER_TARGET + 2], mine[PX_POOL_PER_TARGET + 2];
    for (int i = 0; i < PX_POOL_PER_TARGET + 2; i++) {
        int sv[2];
        pair(sv);
        mine[i] = sv[0];
        up[i] = sv[1];
        px_pool_put(p, &k, sv[0], i);
    }
    assert_int_equal(px_pool_count(p), PX_POOL_PER_TARGET);
    assert_true(closed_by_pool(up[0]) && closed_by_pool(up[1]));
    assert_false(closed_by_pool(up[2]));
    assert_int_equal(px_pool_take(p, &k, 20), mine[PX_POOL_PER_TARGET + 1]);
    close(mine[PX_POOL_PER_TARGET + 1]);
    px_pool_stop(p); /* closes what it holds; keeps nothing from now on */
    assert_int_equal(px_pool_count(p), 0);
    for (int i = 2; i < PX_POOL_PER_TARGET + 1; i++) {
        assert_true(closed_by_pool(up[i]));
    }
    int sv[2];
    pair(sv);
    px_pool_put(p, &k, sv[0], 30);
    assert_int_equal(px_pool_count(p), 0);
    assert_true(closed_by_pool(sv[1]));
    close(sv[1]);
    for (int i = 0; i < PX_POOL_PER_TARGET + 2; i++) {
        close(up[i]);
    }
    px_pool_free(p);

    p = px_pool_new();
    int first_up = -1;
    for (int i = 0; i < PX_POOL_MAX + 1; i++) {
        px_pool_key t = key_of(1, 100 + i, 0, 1, 8888);
        pair(sv);
        px_pool_put(p, &t, sv[0], i);
        if (i == 0) {
            first_up = sv[1];
        } else {
            close(sv[1]);
        }
    }
    assert_int_equal(px_pool_count(p), PX_POOL_MAX);
    assert_true(closed_by_pool(first_up)); /* the oldest of all */
    close(first_up);
    px_pool_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_to_its_target),
        cmocka_unit_test(test_epoch),
        cmocka_unit_test(test_dead_and_idle),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
