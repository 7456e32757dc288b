/*
 * Running helper programs (contract in cmd.h): fork, exec, one poll loop over the two pipes
 * with a deadline on CLOCK_MONOTONIC.
 */
#define _GNU_SOURCE /* pipe2, close_range, execvpe */

#include "agent/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void gp_cmd_child_reset(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++) {
        signal(sig, SIG_DFL);
    }
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
        long max = sysconf(_SC_OPEN_MAX);
        for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++) {
            fcntl(fd, F_SETFD, FD_CLOEXEC);
        }
    }
}

/* In the child: stdin /dev/null, stdout and stderr to out and err (-1: /dev/null), exec. */
static void child_exec(char *const *argv, char *const *env, int out, int err)
{
    setpgid(0, 0);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out >= 0 ? out : null, 1) < 0 ||
        dup2(err >= 0 ? err : null, 2) < 0) {
        _exit(127);
    }
    gp_cmd_child_reset();
    execvpe(argv[0], argv, env ? env : environ);
    dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

pid_t gp_cmd_spawn(char *const *argv, char *const *env, int out_fd, int err_fd)
{
    pid_t pid = fork();
    if (pid == 0) {
        child_exec(argv, env, out_fd, err_fd);
    }
    return pid;
}

/* Appends n bytes to the captured stdout (up to max). */
static void keep_out(gp_cmd_result *r, size_t *len, size_t max, const char *buf, size_t n)
{
    if (!r->out || *len >= max) {
        return;
    }
    size_t take = n < max - *len ? n : max - *len;
    memcpy(r->out + *len, buf, take);
    *len += take;
    r->out[*len] = '\0';
}

/* Keeps the last bytes of stderr. */
static void keep_err(gp_cmd_result *r, const char *buf, size_t n)
{
    size_t cap = sizeof(r->err) - 1, have = strlen(r->err);
    if (n >= cap) {
        memcpy(r->err, buf + n - cap, cap);
        r->err[cap] = '\0';
        return;
    }
    if (have + n > cap) {
        memmove(r->err, r->err + (have + n - cap), cap - n);
        have = cap - n;
    }
    memcpy(r->err + have, buf, n);
    r->err[have + n] = '\0';
}

/* Reads both pipes until EOF or the deadline, reaping pid meanwhile (*ws its status, *reaped
 * once it is). A program that exited while something it started holds the pipes (podman's
 * conmon) is given a moment more, not the whole time. True when the deadline passed. */
static bool collect(int fds[2], pid_t pid, gp_cmd_result *r, size_t out_max, int64_t deadline,
                    int *ws, bool *reaped)
{
    size_t len = 0;
    char buf[16384];
    while (fds[0] >= 0 || fds[1] >= 0) {
        if (!*reaped && waitpid(pid, ws, WNOHANG) == pid) {
            *reaped = true;
            int64_t soon = mono_ms() + 500;
            deadline = soon < deadline ? soon : deadline;
        }
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            return !*reaped;
        }
        struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
        if (poll(p, 2, left > 100 ? 100 : (int)left) <= 0) {
            continue;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i] < 0 || !p[i].revents) {
                continue;
            }
            ssize_t n = read(fds[i], buf, sizeof(buf));
            if (n <= 0 && !(n < 0 && errno == EINTR)) {
                close(fds[i]);
                fds[i] = -1;
            } else if (n > 0 && i == 0) {
                keep_out(r, &len, out_max, buf, (size_t)n);
            } else if (n > 0) {
                keep_err(r, buf, (size_t)n);
            }
        }
    }
    return false;
}

static void close_pair(int p[2])
{
    for (int i = 0; i < 2; i++) {
        if (p[i] >= 0) {
            close(p[i]);
        }
        p[i] = -1;
    }
}

int gp_cmd_run(char *const *argv, char *const *env, int timeout_ms, size_t out_max,
               gp_cmd_result *r, gp_diag *d)
{
    memset(r, 0, sizeof(*r));
    r->status = -1;
    if (out_max > 0 && !(r->out = calloc(1, out_max + 1))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int o[2] = {-1, -1}, e[2] = {-1, -1};
    if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0) {
        int err = errno;
        close_pair(o);
        close_pair(e);
        return gp_diag_set(d, GP_EIO, "%s: %s", argv[0], strerror(err));
    }
    pid_t pid = gp_cmd_spawn(argv, env, o[1], e[1]);
    int err = errno;
    close(o[1]);
    close(e[1]);
    if (pid < 0) {
        close(o[0]);
        close(e[0]);
        return gp_diag_set(d, GP_EIO, "%s: fork: %s", argv[0], strerror(err));
    }
    int fds[2] = {o[0], e[0]}, ws = 0;
    bool reaped = false;
    r->timed_out = collect(fds, pid, r, out_max, mono_ms() + timeout_ms, &ws, &reaped);
    if (r->timed_out) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    close_pair(fds);
    while (!reaped && waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    r->status = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
    return 0;
}

void gp_cmd_result_fini(gp_cmd_result *r)
{
    free(r->out);
    r->out = NULL;
}

void gp_cmd_last_line(const char *text, char *buf, size_t cap)
{
    buf[0] = '\0';
    const char *end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ')) {
        end--;
    }
    const char *start = end;
    while (start > text && start[-1] != '\n') {
        start--;
    }
    snprintf(buf, cap, "%.*s", (int)(end - start), start);
}
