/*
 * The sandbox of a replica: how gpupool-run asks podman to run the job. Pure: from the run spec,
 * the node's runtime settings and the host paths gpupool-run prepared, it decides what the job
 * sees (the layout) and the `podman run` command line; gpupool-run does the I/O.
 *
 * What every job gets (the tests in tests/unit/test_sandbox.c hold each line):
 *   - a root filesystem: its image, or without one the host's root through a read-only overlay
 *     (`--rootfs /:O --read-only`: the overlay's upper layer takes the mount points, so nothing
 *     is created on the host; submounts of the host are not part of the overlay), with fresh
 *     tmpfs at /tmp, /var/tmp and /run (without copying the host's files up) and the masks
 *     (below) hiding the agent's files;
 *   - a user namespace mapping the container's ids 0..size-1 onto the tenant's host range
 *     (idmap.h; `--uidmap 0:BASE:SIZE --gidmap 0:BASE:SIZE`) when the job has one (gpupool-run
 *     gives one to image jobs; a job over the host root gets its host uid as uid instead);
 *   - a non-root user (uid:gid), no capabilities (`--cap-drop all`), no-new-privileges, podman's
 *     default seccomp profile less the ways into new namespaces (seccomp.h; never unconfined), its
 * own PID, IPC and UTS namespaces, the host network (`--network host`, with the host's name) unless
 * the spec asks for a private one or the job is a notebook or service
 *     (`--network slirp4netns:allow_host_loopback=false`: its own namespace with outbound access;
 *     not podman's bridge, where containers of other tenants reach each other; nothing on the
 *     node connects in, and the job cannot reach the node's loopback);
 *   - limits: `--pids-limit`, `--memory`/`--cpus` from the replica's request (absent: none),
 *     explicit `--ulimit nofile` and `nproc` (the caller's own limits: podman's defaults need
 *     CAP_SYS_RESOURCE), /dev/shm of half its memory (1 GiB without a memory limit);
 *   - mounts (container path <- host path): GP_SANDBOX_WORK <- the replica's work directory
 *     (read-write; the working directory when the spec names none, for a job over the host
 *     root), the spec's working_dir at its own path for a job over the host root (read-write;
 *     for an image job working_dir is a directory of the image), GP_SANDBOX_CHECKPOINT <- the
 *     checkpoint directory, GP_SANDBOX_DATA/NAME <- each volume (read-only where asked: a bind
 *     mount the job cannot remount, having no CAP_SYS_ADMIN), GP_SANDBOX_HOSTFILE <- a gang's
 *     hostfile (read-only), a fraction's share region (shim/region.h): its usage file at
 *     GP_SANDBOX_SHARE_REGION (read-write: the job records its usage there) and its limits file
 *     at GP_SANDBOX_SHARE_LIMITS (read-only: a bind mount the job cannot remount; the file is
 *     root's, so it cannot chmod it either), GP_SHARE_REGION_DEFAULT, where libgpushare looks
 *     whatever the environment says, and GP_SANDBOX_SHARE_LIBRARY <- libgpushare.so (read-only)
 *     named by a read-only /etc/ld.so.preload, so every dynamically linked process of the job
 *     loads it, an `env -i` one included. Nothing else of the host: never the agent's state
 *     directory or its tokens;
 *   - `--init` (catatonit, when the node has it) as PID 1: it hands SIGTERM to the job and reaps
 *     orphans; when the job's main process ends, the PID namespace and everything in it go;
 *   - `--cgroup-parent`: its processes live under the replica's cgroup (cgroup.h names it);
 *   - the container named `gpupool-J-R-E-HASH` (gp_sandbox_name), labelled with the job,
 *     replica, epoch and state directory, `--rm`, `--pull never` (gpupool-run pulls first),
 *     `--log-driver passthrough`: the job writes straight into gpupool-run's pipes.
 * A privileged job (spec privileged, allowed for its tenant by an admin) gets `--privileged`
 * instead of `--cap-drop all`, no-new-privileges and the seccomp profile, which would take back
 * what it asked for: every capability of its user namespace and every device of the node (so
 * its GPU limits do not hold: CUDA_VISIBLE_DEVICES and libgpushare are no fence). Everything
 * else above still holds: an image job's user namespace (its root is the tenant's host range,
 * not the host's root; a job over the host root has none, so its capabilities are the host's),
 * its user, namespaces, limits, cgroup, mounts and masks.
 * The job's environment is read from an env file (0600, in the state directory the job never
 * sees); a value with a line break cannot be written there and goes on the command line. A
 * fraction's job never gets LD_AUDIT (an audit library sees every symbol binding and could
 * route the driver's functions around libgpushare): gp_sandbox_env_kept drops it from the file,
 * and `--unsetenv LD_AUDIT` from the image's environment.
 */
#ifndef GP_AGENT_SANDBOX_H
#define GP_AGENT_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/idmap.h"
#include "agent/run_spec.h"
#include "gpupool/error.h"
#include "shim/region.h"

/* Where the job finds what gpupool-run prepared, inside the sandbox. */
#define GP_SANDBOX_WORK          "/gpupool/work"
#define GP_SANDBOX_CHECKPOINT    "/gpupool/checkpoint"
#define GP_SANDBOX_HOSTFILE      "/gpupool/hostfile"
#define GP_SANDBOX_SHARE_REGION  GP_SHARE_REGION_DEFAULT /* the usage, read-write */
#define GP_SANDBOX_SHARE_LIMITS  GP_SHARE_REGION_DEFAULT GP_SHARE_LIMITS_SUFFIX /* read-only */
#define GP_SANDBOX_SHARE_LIBRARY "/gpupool/lib/libgpushare.so"
#define GP_SANDBOX_PRELOAD       "/etc/ld.so.preload"
#define GP_SANDBOX_DATA          "/data"
#define GP_SANDBOX_NAME_MAX      96
#define GP_SANDBOX_MAX_MOUNTS    (8 + 64) /* ours, and the most volumes a spec has */

/* Host paths gpupool-run prepared for the job; NULL where it does not apply. Borrowed. */
typedef struct gp_sandbox_host {
    const char *workdir;       /* the replica's work directory (always) */
    const char *checkpoint;    /* the checkpoint directory */
    const char *hostfile;      /* gangs */
    const char *share_region;  /* fractions: the region's usage file */
    const char *share_limits;  /* fractions: its limits file (share_region + ".limits") */
    const char *share_library; /* fractions: libgpushare.so */
    const char *preload;       /* fractions: a file naming GP_SANDBOX_SHARE_LIBRARY */
} gp_sandbox_host;

typedef struct gp_sandbox_mount {
    const char *src; /* host path (borrowed from the spec or gp_sandbox_host) */
    char dst[1100];  /* container path */
    bool ro;
} gp_sandbox_mount;

/* What the job sees. */
typedef struct gp_sandbox_layout {
    gp_sandbox_mount mounts[GP_SANDBOX_MAX_MOUNTS];
    int nmounts;
    const char *workdir; /* the job's working directory in the sandbox; NULL: the image's */
    char data_dir[16];   /* GP_SANDBOX_DATA when the job has volumes, else "" */
    gp_run_paths paths;  /* container paths for gp_run_env_build */
} gp_sandbox_layout;

/* Fills out from the spec (its image decides whether the host root is used) and h. GP_EINVAL
 * with d naming the field when a path cannot be given to podman (it holds ',', which podman's
 * --mount syntax cannot carry). */
int gp_sandbox_layout_make(const gp_run_spec *s, const gp_sandbox_host *h, gp_sandbox_layout *out,
                           gp_diag *d);

/* A resource limit: -1 is unlimited. */
typedef struct gp_sandbox_rlimit {
    int64_t soft, hard;
} gp_sandbox_rlimit;

/* How podman runs on this node (runtime.h detects it). Borrowed strings. */
typedef struct gp_sandbox_node {
    const char *podman;         /* the program */
    const char *oci_runtime;    /* runc | crun */
    const char *cgroup_manager; /* cgroupfs */
    const char *init_path;      /* catatonit; NULL: no init */
    const char *hostname;       /* the host's name (host network) */
    gp_sandbox_rlimit nofile, nproc;
    int64_t pids_limit;       /* 0: podman's default */
    const char *const *masks; /* host paths hidden from a job over the host root */
    int nmasks;
    const char *seccomp; /* the seccomp profile (seccomp.h); NULL: podman's default */
} gp_sandbox_node;

/* This replica's container. Borrowed strings. */
typedef struct gp_sandbox_job {
    const char *name;          /* gp_sandbox_name */
    const char *state_dir;     /* the replica's directory (a label) */
    const char *cgroup_parent; /* e.g. /gpupool/job1-r0-e1-p42; NULL: podman's */
    const char *env_file;      /* the job's variables; NULL: none */
    char *const *env_args;     /* "NAME=VALUE" given with --env (NULL-terminated; may be NULL) */
    uid_t uid;                 /* the job's user and group inside the container */
    gid_t gid;
    gp_idmap userns; /* the tenant's host ids (idmap.h): the container's 0..size-1 are
                      * base..base+size-1 (--uidmap, --gidmap); size 0: no user namespace */
    int grace_s;     /* SIGTERM to SIGKILL on a stop */
    const char *const *device_args; /* more arguments for the GPUs (CDI); may be NULL */
} gp_sandbox_job;

/* The container's name: gpupool-JOB-REPLICA-EPOCH-HASH, HASH the FNV-1a of state_dir (eight hex
 * digits), so two agents on one machine never collide and anyone who knows the replica's
 * directory finds it. buf has GP_SANDBOX_NAME_MAX bytes. */
void gp_sandbox_name(int64_t job, int replica, int64_t epoch, const char *state_dir, char *buf);

/* The `podman run` command line (NULL-terminated; free with gp_sandbox_argv_free). GP_EINVAL
 * with d naming what cannot be passed safely (an image that looks like an option, a mask with
 * ':'), GP_ENOMEM. */
int gp_sandbox_argv(const gp_sandbox_node *n, const gp_sandbox_job *j, const gp_run_spec *s,
                    const gp_sandbox_layout *l, char ***out, gp_diag *d);
void gp_sandbox_argv_free(char **argv);

/* Whether the job gets NAME=VALUE: not LD_AUDIT when the layout has a share region. */
bool gp_sandbox_env_kept(const gp_sandbox_layout *l, const char *entry);

/* Whether NAME=VALUE can go into podman's env file: a value without a line break (the file is
 * read line by line) and not ending in a carriage return (dropped by the reader). */
bool gp_sandbox_env_file_ok(const char *entry);

#endif
