/*
 * Running a helper program (podman, skopeo) and collecting what it says.
 *
 * The child gets /dev/null as stdin, an empty signal mask and default dispositions (the
 * supervisor blocks signals it reads from a signalfd; a program must not inherit that), every
 * descriptor above 2 closed on exec, and a process group of its own, which gets SIGKILL when
 * the time runs out. The caller's environment, unless env is given.
 */
#ifndef GP_AGENT_CMD_H
#define GP_AGENT_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "gpupool/error.h"

typedef struct gp_cmd_result {
    int status;     /* exit status; 128 + N when killed by signal N; -1 when it never ran */
    bool timed_out; /* killed for running past the time */
    char *out;      /* stdout, NUL-terminated (at most out_max bytes kept: the first ones) */
    char err[2048]; /* stderr, its last bytes, NUL-terminated */
} gp_cmd_result;

/* Runs argv (argv[0] a path or a name looked up in PATH) for at most timeout_ms, capturing up
 * to out_max bytes of stdout (0: discarded) and the end of stderr. env: the child's environment
 * (NULL: the caller's). Returns 0 once it ran (whatever its status: see r->status), GP_EIO with
 * d set when it could not be started. r->out is malloc'd (gp_cmd_result_fini). */
int gp_cmd_run(char *const *argv, char *const *env, int timeout_ms, size_t out_max,
               gp_cmd_result *r, gp_diag *d);
void gp_cmd_result_fini(gp_cmd_result *r);

/* The last non-empty line of text into buf (without its newline; "" when none). */
void gp_cmd_last_line(const char *text, char *buf, size_t cap);

/* Starts argv in a process group of its own, stdin /dev/null and stdout/stderr to the file
 * descriptors given (-1: /dev/null), not waiting for it (the caller reaps it). env as above.
 * Returns the pid, or -1 with errno set. */
pid_t gp_cmd_spawn(char *const *argv, char *const *env, int out_fd, int err_fd);

/* The child's side of a start: empty signal mask, default dispositions, descriptors above 2
 * closed on exec. Used between fork and exec. */
void gp_cmd_child_reset(void);

#endif
