/*
 * Network namespaces of notebooks and services (src/agent/netns.c): a child in a namespace of
 * its own (gp_netns_unshare) listens on 127.0.0.1; gp_netns_connect reaches it there while the
 * same port on the caller's 127.0.0.1 is refused, and the calling thread stays in its own
 * namespace. Bad arguments and a process that is gone are refused. Skipped without the
 * privilege to make a namespace (CAP_SYS_ADMIN).
 */
#define _GNU_SOURCE
#include "agent/netns.h"
#include "tests/unit/harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int ns_port; /* free on the caller's 127.0.0.1 when the test starts */

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &len), 0);
    close(s);
    return ntohs(sa.sin_port);
}

/* The child: its own namespace, a listener on 127.0.0.1:ns_port answering "in-ns" to each
 * connection. Reports readiness (or why not) on ready. */
static void child(int ready)
{
    char c = 'n';
    if (gp_netns_unshare() != 0) {
        (void)!write(ready, &c, 1);
        _exit(0);
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)ns_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(s, 4) != 0) {
        (void)!write(ready, &c, 1);
        _exit(1);
    }
    c = 'y';
    (void)!write(ready, &c, 1);
    for (;;) {
        int fd = accept(s, NULL, NULL);
        if (fd >= 0) {
            (void)!write(fd, "in-ns", 5);
            close(fd);
        }
    }
}

static ino_t my_netns(void)
{
    struct stat sb;
    assert_int_equal(stat("/proc/thread-self/ns/net", &sb), 0);
    return sb.st_ino;
}

static void test_connect(void **state)
{
    (void)state;
    ns_port = free_port();
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child(p[1]);
    }
    close(p[1]);
    char c = 0;
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    if (c != 'y') {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fprintf(stderr, "no network namespace can be made here: skipped\n");
        skip();
    }
    ino_t before = my_netns();
    int fd = -1;
    gp_diag d = {0};
    assert_int_equal(gp_netns_connect(pid, ns_port, 2000, &fd, &d), 0);
    char buf[8] = {0};
    assert_int_equal(read(fd, buf, sizeof(buf) - 1), 5);
    assert_string_equal(buf, "in-ns");
    close(fd);
    assert_true(my_netns() == before); /* the caller never changed namespace */

    /* the same port on the caller's own 127.0.0.1: nothing there */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)ns_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_not_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(s);

    /* another port in its namespace: refused, with the reason */
    assert_int_equal(gp_netns_connect(pid, ns_port + 1, 2000, &fd, &d), GP_EUNAVAIL);
    assert_int_equal(fd, -1);
    assert_non_null(strstr(d.msg, "refused"));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* gone */
    assert_int_equal(gp_netns_connect(pid, ns_port, 2000, &fd, &d), GP_ENOENT);
    assert_int_equal(gp_netns_connect(1, 0, 2000, &fd, &d), GP_EINVAL);
    assert_int_equal(gp_netns_connect(0, 80, 2000, &fd, &d), GP_EINVAL);
    assert_int_equal(gp_netns_connect(1, 65536, 2000, &fd, &d), GP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_connect)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
