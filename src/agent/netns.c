/*
 * Network namespaces of notebook and service replicas (contract in netns.h).
 *
 * setns(2) changes the namespace of the calling thread only, so gp_netns_connect does it on a
 * short-lived thread of its own: the agent's other threads (its HTTP server's pool, its rounds)
 * stay in the node's namespace whatever happens. The socket is made inside; the connection is
 * then completed (with its timeout) on the caller's thread.
 */
#define _GNU_SOURCE
#include "agent/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int gp_netns_unshare(void)
{
    if (unshare(CLONE_NEWNET) != 0) {
        return -errno;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        return -errno;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    int rc = 0;
    if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
        rc = -errno;
    } else {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) {
            rc = -errno;
        }
    }
    close(s);
    return rc;
}

typedef struct ns_job {
    int nsfd;
    int sock; /* out */
    int err;  /* errno of the step that failed, 0 */
    const char *step;
} ns_job;

/* On its own thread: enter the namespace, make the socket. The thread ends there, so its being
 * in another namespace never matters to anyone else. */
static void *in_namespace(void *arg)
{
    ns_job *j = arg;
    if (setns(j->nsfd, CLONE_NEWNET) != 0) {
        j->err = errno;
        j->step = "setns";
        return NULL;
    }
    j->sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (j->sock < 0) {
        j->err = errno;
        j->step = "socket";
    }
    return NULL;
}

/* Makes a socket in the namespace of pid; its fd, or a negative GP_E* code with d set. */
static int socket_in(pid_t pid, gp_diag *d)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/ns/net", (long)pid);
    ns_job j = {.nsfd = open(path, O_RDONLY | O_CLOEXEC), .sock = -1};
    if (j.nsfd < 0) {
        return gp_diag_set(d, GP_ENOENT, "process %ld: no network namespace (%s)", (long)pid,
                           strerror(errno));
    }
    pthread_t t;
    int rc = pthread_create(&t, NULL, in_namespace, &j);
    if (rc != 0) {
        close(j.nsfd);
        return gp_diag_set(d, GP_EIO, "namespace thread: %s", strerror(rc));
    }
    pthread_join(t, NULL);
    close(j.nsfd);
    if (j.sock < 0) {
        return gp_diag_set(d, GP_EIO, "process %ld's network namespace: %s: %s", (long)pid,
                           j.step ? j.step : "?", strerror(j.err));
    }
    return j.sock;
}

int gp_netns_connect(pid_t pid, int port, int timeout_ms, int *fd, gp_diag *d)
{
    *fd = -1;
    if (pid <= 0 || port < 1 || port > 65535) {
        return gp_diag_set(d, GP_EINVAL, "port: must be between 1 and 65535");
    }
    int s = socket_in(pid, d);
    if (s < 0) {
        return s;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int err = 0;
    if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
            struct pollfd p = {.fd = s, .events = POLLOUT};
            int n = poll(&p, 1, timeout_ms);
            socklen_t len = sizeof(err);
            if (n == 0) {
                err = ETIMEDOUT;
            } else if (n < 0 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
                err = errno;
            }
        }
    }
    if (err != 0) {
        close(s);
        return gp_diag_set(d, GP_EUNAVAIL, "connect 127.0.0.1:%d in the replica's namespace: %s",
                           port, strerror(err));
    }
    int fl = fcntl(s, F_GETFL);
    if (fl < 0 || fcntl(s, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        close(s);
        return gp_diag_set(d, GP_EIO, "fcntl: %s", strerror(errno));
    }
    *fd = s;
    return 0;
}
