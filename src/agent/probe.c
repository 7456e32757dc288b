/*
 * Probes (probe.h): one attempt of each kind, the thresholds, and the prober's threads.
 *
 * Every attempt has a deadline: the connection is non-blocking and polled, the HTTP answer is
 * read until its status line with poll, and an exec probe's process group is killed when it
 * overruns. A probe's thread sleeps on a condition variable, so stopping it is immediate between
 * attempts.
 */
#define _GNU_SOURCE
#include "agent/probe.h"

#include "base/clock.h"
#include "net/prom.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- one attempt ---- */

static int local_connect(int port, int timeout_ms, char *msg, size_t cap)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(msg, cap, "socket: %s", strerror(errno));
        return GP_EIO;
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
        snprintf(msg, cap, "connect: %s", strerror(errno));
        close(fd);
        return GP_EIO;
    }
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int r = poll(&p, 1, timeout_ms);
    int err = 0;
    socklen_t len = sizeof(err);
    if (r == 0) {
        snprintf(msg, cap, "connect: timed out after %d ms", timeout_ms);
        close(fd);
        return GP_EIO;
    }
    if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        snprintf(msg, cap, "connect: %s", strerror(r < 0 ? errno : err ? err : EIO));
        close(fd);
        return GP_EIO;
    }
    return fd;
}

static int open_conn(const gp_probe_conf *p, const gp_probe_target *t, int timeout_ms, char *msg,
                     size_t cap)
{
    if (t && t->connect) {
        return t->connect(t->connect_ctx, p->port, timeout_ms, msg, cap);
    }
    return local_connect(p->port, timeout_ms, msg, cap);
}

static int left_ms(int64_t deadline)
{
    int64_t l = deadline - gp_mono_ms();
    return l < 0 ? 0 : (int)l;
}

/* Writes all of buf before the deadline (the socket may be blocking or not). */
static int send_all(int fd, const char *buf, size_t n, int64_t deadline)
{
    size_t off = 0;
    while (off < n) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, left_ms(deadline)) <= 0) {
            return -1;
        }
        ssize_t w = send(fd, buf + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            return -1;
        }
        off += w > 0 ? (size_t)w : 0;
    }
    return 0;
}

/* Reads until the status line is complete: the status code, -1 on timeout, -2 otherwise. */
static int read_status(int fd, int64_t deadline)
{
    char buf[256];
    size_t n = 0;
    while (n < sizeof(buf) - 1) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, left_ms(deadline));
        if (r == 0) {
            return -1;
        }
        ssize_t got = r > 0 ? recv(fd, buf + n, sizeof(buf) - 1 - n, MSG_DONTWAIT) : -1;
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        n += (size_t)got;
        buf[n] = '\0';
        if (strchr(buf, '\n')) {
            break;
        }
    }
    buf[n] = '\0';
    int code = 0;
    if (sscanf(buf, "HTTP/%*d.%*d %3d", &code) != 1 || code < 100 || code > 599) {
        return -2;
    }
    return code;
}

static int probe_http(const gp_probe_conf *p, const gp_probe_target *t, char *msg, size_t cap)
{
    int64_t deadline = gp_mono_ms() + (int64_t)p->timeout_s * 1000;
    int fd = open_conn(p, t, p->timeout_s * 1000, msg, cap);
    if (fd < 0) {
        return 0;
    }
    char req[1200];
    int len = snprintf(req, sizeof(req),
                       "GET %s HTTP/1.0\r\nHost: localhost:%d\r\nUser-Agent: gpupool-probe\r\n"
                       "Connection: close\r\n\r\n",
                       p->path && p->path[0] ? p->path : "/", p->port);
    if (len < 0 || (size_t)len >= sizeof(req)) {
        close(fd);
        snprintf(msg, cap, "path too long");
        return 0;
    }
    int code = send_all(fd, req, (size_t)len, deadline) == 0 ? read_status(fd, deadline) : -3;
    close(fd);
    if (code == -1) {
        snprintf(msg, cap, "HTTP GET %s: timed out after %d s", p->path ? p->path : "/",
                 p->timeout_s);
        return 0;
    }
    if (code < 0) {
        snprintf(msg, cap, "HTTP GET %s: no HTTP answer", p->path ? p->path : "/");
        return 0;
    }
    if (code < 200 || code > 399) {
        snprintf(msg, cap, "HTTP GET %s: status %d", p->path ? p->path : "/", code);
        return 0;
    }
    return 1;
}

static int probe_tcp(const gp_probe_conf *p, const gp_probe_target *t, char *msg, size_t cap)
{
    int fd = open_conn(p, t, p->timeout_s * 1000, msg, cap);
    if (fd < 0) {
        return 0;
    }
    close(fd);
    return 1;
}

/* The child of an exec probe: its own process group, no stdio, the target's user. Only
 * async-signal-safe calls (the agent has threads). */
static void exec_child(const gp_probe_target *t, char *const *argv, int devnull, int ns)
{
    setpgid(0, 0);
    if (ns >= 0 && setns(ns, CLONE_NEWNET) != 0) {
        _exit(126);
    }
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    if (t && t->exec_dir && chdir(t->exec_dir) != 0) {
        _exit(126);
    }
    if (t && t->drop_to &&
        (setgroups(0, NULL) != 0 || setgid(t->gid) != 0 || setuid(t->uid) != 0)) {
        _exit(126);
    }
    execvp(argv[0], argv);
    _exit(127);
}

static int probe_exec(const gp_probe_conf *p, const gp_probe_target *t, char *msg, size_t cap)
{
    size_t npre = 0, ncmd = 0;
    while (t && t->exec_prefix && t->exec_prefix[npre]) {
        npre++;
    }
    while (p->command && p->command[ncmd]) {
        ncmd++;
    }
    char **argv = calloc(npre + ncmd + 1, sizeof(*argv));
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (!argv || devnull < 0 || ncmd == 0) {
        free(argv);
        if (devnull >= 0) {
            close(devnull);
        }
        snprintf(msg, cap, "exec: cannot start");
        return 0;
    }
    for (size_t i = 0; i < npre; i++) {
        argv[i] = (char *)t->exec_prefix[i];
    }
    for (size_t i = 0; i < ncmd; i++) {
        argv[npre + i] = (char *)p->command[i];
    }
    int ns = t && t->netns_fd ? t->netns_fd(t->connect_ctx) : -1;
    if (t && t->netns_fd && ns < 0) {
        free(argv);
        close(devnull);
        snprintf(msg, cap, "exec %s: the replica's network namespace is not there", p->command[0]);
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        exec_child(t, argv, devnull, ns);
    }
    free(argv);
    close(devnull);
    if (ns >= 0) {
        close(ns);
    }
    if (pid < 0) {
        snprintf(msg, cap, "exec: fork: %s", strerror(errno));
        return 0;
    }
    int64_t deadline = gp_mono_ms() + (int64_t)p->timeout_s * 1000;
    int st = 0;
    pid_t w;
    while ((w = waitpid(pid, &st, WNOHANG)) == 0 && gp_mono_ms() < deadline) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (w == 0) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        snprintf(msg, cap, "exec %s: timed out after %d s", p->command[0], p->timeout_s);
        return 0;
    }
    if (w < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(msg, cap, "exec %s: %s %d", p->command[0],
                 w > 0 && WIFSIGNALED(st) ? "signal" : "exit",
                 w < 0             ? -1
                 : WIFSIGNALED(st) ? WTERMSIG(st)
                                   : WEXITSTATUS(st));
        return 0;
    }
    return 1;
}

/* Reads the whole answer (until the server closes) into buf[0..cap-1], NUL-terminated: its
 * length, -1 on timeout, -2 when it does not fit or the read fails. */
static ssize_t read_all(int fd, int64_t deadline, char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, left_ms(deadline));
        if (r == 0) {
            return -1;
        }
        ssize_t got = r > 0 ? recv(fd, buf + n, cap - 1 - n, MSG_DONTWAIT) : -1;
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            continue;
        }
        if (got < 0) {
            return -2;
        }
        if (got == 0) {
            break;
        }
        n += (size_t)got;
        if (n == cap - 1) {
            return -2;
        }
    }
    buf[n] = '\0';
    return (ssize_t)n;
}

int gp_probe_scrape(const gp_probe_target *t, int port, const char *path, const char *name,
                    int timeout_ms, double *value, char *msg, size_t cap)
{
    msg[0] = '\0';
    gp_probe_conf c = {.kind = GP_PROBE_KIND_HTTP, .port = port, .path = path};
    int64_t deadline = gp_mono_ms() + timeout_ms;
    int fd = open_conn(&c, t, timeout_ms, msg, cap);
    if (fd < 0) {
        return 0;
    }
    char req[1200];
    int len = snprintf(req, sizeof(req),
                       "GET %s HTTP/1.0\r\nHost: localhost:%d\r\nUser-Agent: gpupool-scrape\r\n"
                       "Accept: text/plain\r\nConnection: close\r\n\r\n",
                       path && path[0] ? path : "/metrics", port);
    char *buf = malloc(GP_PROBE_SCRAPE_MAX);
    ssize_t n = -2;
    if (buf && len > 0 && (size_t)len < sizeof(req) &&
        send_all(fd, req, (size_t)len, deadline) == 0) {
        n = read_all(fd, deadline, buf, GP_PROBE_SCRAPE_MAX);
    }
    close(fd);
    int code = 0;
    const char *body = n > 0 ? strstr(buf, "\r\n\r\n") : NULL;
    int found = 0;
    if (n == -1) {
        snprintf(msg, cap, "scrape: timed out after %d ms", timeout_ms);
    } else if (!body || sscanf(buf, "HTTP/%*d.%*d %3d", &code) != 1 || code != 200) {
        snprintf(msg, cap, "scrape: %s", code ? "status not 200" : "no HTTP answer");
    } else {
        body += 4;
        found = gp_prom_read_sum(body, (size_t)(buf + n - body), name, value);
        if (!found) {
            snprintf(msg, cap, "scrape: no sample of %s", name);
        }
    }
    free(buf);
    return found;
}

int gp_probe_once(const gp_probe_conf *p, const gp_probe_target *t, char *msg, size_t cap)
{
    msg[0] = '\0';
    switch (p->kind) {
    case GP_PROBE_KIND_HTTP:
        return probe_http(p, t, msg, cap);
    case GP_PROBE_KIND_TCP:
        return probe_tcp(p, t, msg, cap);
    case GP_PROBE_KIND_EXEC:
        return probe_exec(p, t, msg, cap);
    default:
        return 1;
    }
}

/* ---- thresholds ---- */

void gp_probe_state_init(gp_probe_state *s, bool pass)
{
    memset(s, 0, sizeof(*s));
    s->pass = pass;
}

bool gp_probe_state_observe(gp_probe_state *s, const gp_probe_conf *p, bool success,
                            const char *msg)
{
    bool was = s->pass;
    if (success) {
        s->failures = 0;
        s->successes++;
        if (s->successes >= p->success_threshold) {
            s->pass = true;
        }
    } else {
        s->successes = 0;
        s->failures++;
        snprintf(s->last, sizeof(s->last), "%s", msg ? msg : "");
        if (s->failures >= p->failure_threshold) {
            s->pass = false;
        }
    }
    return s->pass != was;
}
