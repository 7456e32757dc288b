/*
 * gpupool-run: the supervisor of one job replica, started by gpupool-agent.
 *
 * This file is the shell: options (a table: name, argument, help), the spec file, logging, exit
 * statuses. The work is in supervise.c; the contract of the state directory in replica_dir.h.
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/run_spec.h"
#include "agent/supervise.h"
#include "base/log.h"

#ifndef GP_VERSION
#define GP_VERSION "dev"
#endif

extern char **environ;

enum { EXIT_RECORDED = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

#define MAX_MASKS 32

typedef struct run_args {
    const char *state_dir, *spec, *user, *cgroup_root, *log_level, *share_library, *checkpoint_root;
    const char *runtime, *podman;
    long long grace_s, log_max, pids_limit;
    const char *masks[MAX_MASKS];
    int nmasks;
} run_args;

typedef struct option_row {
    const char *name;
    const char *arg; /* NULL: a flag */
    const char *help;
} option_row;

static const option_row options[] = {
    {"--state-dir", "DIR", "the replica's state directory (required; created if missing)"},
    {"--spec", "FILE", "the desired-replica JSON written by the agent (required)"},
    {"--user", "NAME", "run the job as this user (needs root unless it is the current user)"},
    {"--grace", "SECONDS", "SIGTERM to SIGKILL on a stop (default 10)"},
    {"--log-max", "BYTES",
     "cap of stdout.log and stderr.log, rotated once to .1 (default 64 MiB;"
     " 0 = no cap)"},
    {"--cgroup-root", "DIR", "where cgroups are mounted (default /sys/fs/cgroup)"},
    {"--share-library", "PATH",
     "libgpushare.so, preloaded into fractional replicas (default: ../lib/ beside this program)"},
    {"--checkpoint-root", "DIR",
     "the job's GPUPOOL_CHECKPOINT_DIR is DIR/JOB when the spec names none (default: none)"},
    {"--runtime", "podman|none",
     "podman: the job runs in a sandbox (default, or GPUPOOL_RUNTIME); none: as a host process"
     " (no image)"},
    {"--podman", "PATH", "the podman program (default: podman in PATH)"},
    {"--mask", "PATH",
     "hide this host path from a job over the host root (repeatable; its own state directory"
     " always is)"},
    {"--pids-limit", "N", "the most processes and threads of the job (default 4096; 0: podman's)"},
    {"--log-level", "LEVEL", "debug, info, warn, error or off (default info)"},
    {"--help", NULL, "this text"},
    {"--version", NULL, "the version"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: gpupool-run --state-dir DIR --spec FILE [--user NAME] [--grace SECONDS]\n"
               "                   [--log-max BYTES] [--cgroup-root DIR] [--log-level LEVEL]\n"
               "                   [--share-library PATH] [--checkpoint-root DIR]\n"
               "                   [--runtime podman|none] [--podman PATH] [--mask PATH]...\n"
               "                   [--pids-limit N]\n\n"
               "Supervises one replica of a gpupool job: runs its command in a podman sandbox\n"
               "(its image, or the host's root read-only; a non-root user, no capabilities; see\n"
               "src/agent/sandbox.h) or, with --runtime none, in a new session on the host, with\n"
               "its GPUs (CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES = the GPU UUIDs), its\n"
               "environment and CPU/memory limits (cgroup v2, else v1, where permitted); writes\n"
               "its stdout/stderr to DIR/stdout.log and DIR/stderr.log with a size cap; records\n"
               "DIR/supervisor.pid, DIR/child.pid and DIR/status.json (state running, exited or\n"
               "killed; exit code or signal; start and end times) atomically. SIGTERM or SIGINT\n"
               "stops the job: SIGTERM to its process group, SIGKILL after --grace seconds. When\n"
               "the job's main process exits, what it left in its group is killed.\n"
               "The spec's fields: src/agent/run_spec.h; the state directory: "
               "src/agent/replica_dir.h.\n\n");
    for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
        char left[40];
        snprintf(left, sizeof(left), "%s%s%s", options[i].name, options[i].arg ? " " : "",
                 options[i].arg ? options[i].arg : "");
        fprintf(f, "  %-22s %s\n", left, options[i].help);
    }
    fprintf(f, "\nExit status: 0 once the job's end is recorded (whatever its exit code, also when "
               "its\ncommand could not be executed); 2 for bad arguments or a bad spec; 1 when "
               "the\nsupervisor could not work (state directory, another supervisor).\n");
}

/* One line on stderr naming what is wrong; returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "gpupool-run: %s\n", msg);
    return EXIT_USAGE;
}

static int number(const char *name, const char *text, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > max) {
        return bad("%s: must be an integer from 0 to %lld", name, max);
    }
    *out = v;
    return 0;
}

/* Stores value under the option name; EXIT_USAGE (reported) for a bad value. */
static int set_option(run_args *a, const char *name, const char *value)
{
    const char **slot = strcmp(name, "--state-dir") == 0         ? &a->state_dir
                        : strcmp(name, "--spec") == 0            ? &a->spec
                        : strcmp(name, "--user") == 0            ? &a->user
                        : strcmp(name, "--cgroup-root") == 0     ? &a->cgroup_root
                        : strcmp(name, "--log-level") == 0       ? &a->log_level
                        : strcmp(name, "--share-library") == 0   ? &a->share_library
                        : strcmp(name, "--checkpoint-root") == 0 ? &a->checkpoint_root
                        : strcmp(name, "--runtime") == 0         ? &a->runtime
                        : strcmp(name, "--podman") == 0          ? &a->podman
                                                                 : NULL;
    if (slot) {
        *slot = value;
        return *value ? 0 : bad("%s: must not be empty", name);
    }
    if (strcmp(name, "--mask") == 0) {
        if (value[0] != '/' || strchr(value, ':')) {
            return bad("--mask %s: must be an absolute path without ':'", value);
        }
        if (a->nmasks == MAX_MASKS) {
            return bad("--mask: at most %d", MAX_MASKS);
        }
        a->masks[a->nmasks++] = value;
        return 0;
    }
    if (strcmp(name, "--grace") == 0) {
        return number(name, value, 86400, &a->grace_s);
    }
    if (strcmp(name, "--pids-limit") == 0) {
        return number(name, value, 1 << 30, &a->pids_limit);
    }
    return number(name, value, (long long)1 << 50, &a->log_max);
}

/* Parses argv into a. Returns -1 to go on, or the exit status (help, version, errors). */
static int parse_args(int argc, char **argv, run_args *a)
{
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *eq = strchr(argv[i], '=');
        size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
        snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), argv[i]);
        const option_row *row = NULL;
        for (size_t k = 0; k < sizeof(options) / sizeof(options[0]) && !row; k++) {
            row = strcmp(options[k].name, name) == 0 ? &options[k] : NULL;
        }
        if (!row) {
            return bad("%s: unknown option (see --help)", argv[i]);
        }
        if (!row->arg) {
            if (strcmp(name, "--help") == 0) {
                usage(stdout);
            } else {
                printf("gpupool-run %s\n", GP_VERSION);
            }
            return EXIT_RECORDED;
        }
        const char *value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!value) {
            return bad("%s: needs a value (%s)", name, row->arg);
        }
        int rc = set_option(a, name, value);
        if (rc) {
            return rc;
        }
    }
    if (!a->state_dir || !a->spec) {
        return bad("%s: required (see --help)", a->state_dir ? "--spec" : "--state-dir");
    }
    if (strcmp(a->runtime, "podman") != 0 && strcmp(a->runtime, "none") != 0) {
        return bad("--runtime %s: must be podman or none", a->runtime);
    }
    return -1;
}

int main(int argc, char **argv)
{
    const char *runtime = getenv("GPUPOOL_RUNTIME"); /* as gpupool-agent's --runtime */
    run_args a = {.cgroup_root = "/sys/fs/cgroup",
                  .grace_s = 10,
                  .log_max = 64LL << 20,
                  .runtime = runtime && runtime[0] ? runtime : "podman",
                  .pids_limit = 4096};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        return rc;
    }
    gp_log_level level = GP_LOG_INFO;
    if (a.log_level && gp_log_parse_level(a.log_level, &level) < 0) {
        return bad("--log-level %s: must be debug, info, warn, error or off", a.log_level);
    }
    gp_log_set_level(level);
    /* Paths given to podman, which runs from /, must not depend on where we were started. */
    char state_abs[4096];
    if (a.state_dir[0] != '/') {
        char cwd[3800];
        if (!getcwd(cwd, sizeof(cwd))) {
            return bad("--state-dir %s: the current directory is unknown", a.state_dir);
        }
        snprintf(state_abs, sizeof(state_abs), "%s/%s", cwd, a.state_dir);
        a.state_dir = state_abs;
    }
    gp_diag d;
    gp_diag_clear(&d);
    gp_run_spec *spec = NULL;
    char lib[4096] = "";
    if (a.share_library) {
        snprintf(lib, sizeof(lib), "%s", a.share_library);
    } else {
        /* ../lib/libgpushare.so beside this program, as the build and the packages lay it out */
        char self[3800];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        self[n > 0 ? n : 0] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            char rel[4096], *abs = NULL;
            snprintf(rel, sizeof(rel), "%s/../lib/libgpushare.so", self);
            snprintf(lib, sizeof(lib), "%s", (abs = realpath(rel, NULL)) ? abs : rel);
            free(abs);
        }
    }
    gp_sup_opts o = {.share_library = lib,
                     .state_dir = a.state_dir,
                     .grace_s = (int)a.grace_s,
                     .log_max = a.log_max,
                     .cgroup_root = a.cgroup_root,
                     .checkpoint_root = a.checkpoint_root,
                     .environ_ = environ};
    bool sandbox = strcmp(a.runtime, "podman") == 0;
    gp_runtime rt;
    char host[256] = "";
    if (sandbox) {
        gp_runtime_find(a.podman, a.cgroup_root, &rt); /* a miss is the replica's record */
        gethostname(host, sizeof(host) - 1);
        o.runtime = &rt;
        o.masks = a.masks;
        o.nmasks = a.nmasks;
        o.pids_limit = a.pids_limit;
        o.hostname = host;
    }
    if (gp_run_spec_load(a.spec, &spec, &d) < 0 ||
        (sandbox ? gp_sup_user_resolve_sandbox(a.user, &o.user, &d)
                 : gp_sup_user_resolve(a.user, &o.user, &d)) < 0 ||
        (sandbox && gp_sup_user_map(&o.user, &spec->userns, &d) < 0)) {
        gp_run_spec_free(spec);
        return bad("%s", d.msg);
    }
    o.spec = spec;
    rc = gp_sup_run(&o, &d);
    if (rc < 0) {
        GP_LOG(GP_LOG_ERROR, "run", "%s", d.msg);
    }
    gp_run_spec_free(spec);
    return rc < 0 ? EXIT_FAILED : EXIT_RECORDED;
}
