/*
 * CPU and memory limits of a replica through cgroups, where the kernel and our privileges allow.
 *
 * Under a root (default /sys/fs/cgroup; gpupool-run --cgroup-root changes it, which tests use):
 *  - cgroup v2 (ROOT/cgroup.controllers exists): ROOT/gpupool/NAME with cpu.max
 *    ("QUOTA 100000", QUOTA = cpu_milli * 100 microseconds per 100 ms period) and memory.max
 *    (memory_mib MiB). The cpu and memory controllers are enabled in ROOT/cgroup.subtree_control
 *    and ROOT/gpupool/cgroup.subtree_control; ROOT/gpupool itself never holds a process (the
 *    "no internal processes" rule).
 *  - else cgroup v1 (ROOT/cpu and/or ROOT/memory hierarchies): ROOT/cpu/gpupool/NAME with
 *    cpu.cfs_period_us 100000 and cpu.cfs_quota_us QUOTA; ROOT/memory/gpupool/NAME with
 *    memory.limit_in_bytes.
 *  - else, or when a directory or file cannot be written (not root, read-only /sys/fs/cgroup in
 *    a container), gp_cgroup_create fails with the reason and the caller runs the job without
 *    limits after logging a warning.
 * A limit of 0 means none: its controller is left alone; both 0 creates nothing.
 *
 * The supervisor creates the group before the job execs, moves the job's leader into it (its
 * descendants follow), kills what is left in it once the job is over (also processes that left
 * the job's process group), and removes it. A supervisor that is killed with SIGKILL leaves an
 * empty NAME directory behind; NAME carries the supervisor's PID so it never collides.
 *
 * gp_cgroup is embedded by the caller and holds only paths; no heap, no file descriptors.
 */
#ifndef GP_AGENT_CGROUP_H
#define GP_AGENT_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpupool/error.h"

typedef enum gp_cgroup_version {
    GP_CGROUP_NONE = 0,
    GP_CGROUP_V1 = 1,
    GP_CGROUP_V2 = 2,
} gp_cgroup_version;

#define GP_CGROUP_MAX_DIRS 2

typedef struct gp_cgroup {
    gp_cgroup_version version; /* GP_CGROUP_NONE: no group (none needed, or creation failed) */
    int ndirs;                 /* v2: 1; v1: one per controller used */
    char dirs[GP_CGROUP_MAX_DIRS][1024];
} gp_cgroup;

/* Which cgroup version ROOT offers (by its files; GP_CGROUP_NONE when neither). */
gp_cgroup_version gp_cgroup_detect(const char *root);

/* Creates ROOT's gpupool/NAME group(s) with the limits and fills cg (zeroed first). Returns 0
 * (cg->version GP_CGROUP_NONE when both limits are 0), or an error with d saying what could not
 * be written; then nothing is left behind and cg->version is GP_CGROUP_NONE. */
int gp_cgroup_create(gp_cgroup *cg, const char *root, const char *name, int64_t cpu_milli,
                     int64_t memory_mib, gp_diag *d);
/* Moves process pid (and its future children) into the group(s). No-op without a group. */
int gp_cgroup_add(const gp_cgroup *cg, pid_t pid, gp_diag *d);
/* Sends SIGKILL to every process in the group(s) (v2: cgroup.kill where the kernel has it).
 * Returns how many processes were found (0 for an empty or absent group). */
int gp_cgroup_kill(const gp_cgroup *cg);
/* Removes the group directories, waiting up to about a second for dying processes to leave.
 * No-op without a group. Returns 0 or GP_EIO (d names the directory). */
int gp_cgroup_remove(gp_cgroup *cg, gp_diag *d);
/* The directories, comma-separated, into buf ("" without a group). */
void gp_cgroup_describe(const gp_cgroup *cg, char *buf, size_t size);

/*
 * Which replica a process belongs to, by its cgroup (the GPU memory watch, memwatch.h).
 *
 * A replica's group is gpupool/NAME under each hierarchy's root, NAME = job<J>-r<R>-e<E>-p<P>
 * (P: its supervisor's pid), as gp_cgroup_name writes it; the supervisor's job and, in the
 * sandbox, the container's processes (podman --cgroup-parent) are in it or below it. A job
 * cannot leave its group (moving a process needs write access to another group's
 * cgroup.procs), so the group names the replica whatever the job does to its sessions and
 * parents. /proc/PID/cgroup shows paths from the reader's cgroup namespace root, which may lie
 * above the hierarchy's mount (a containerised agent): the pair of components "gpupool" and a
 * NAME is looked for anywhere in a path, and the first (outermost) pair counts, so a group the
 * job makes below its own never names another replica.
 */
typedef struct gp_cgroup_replica {
    int64_t job;
    int replica;
    int64_t epoch;
} gp_cgroup_replica;

/* NAME into buf. GP_ERANGE when it does not fit. */
int gp_cgroup_name(char *buf, size_t size, int64_t job, int replica, int64_t epoch, long pid);

/* Pure: the replica whose group the text of a /proc/PID/cgroup file names (lines
 * "ID:CONTROLLERS:PATH"; the first line that names one counts). 1 with *out and the line's path
 * (cut to cap) in path when one does, 0 when none does. */
int gp_cgroup_parse_owner(const char *text, gp_cgroup_replica *out, char *path, size_t cap);

/* The same for process pid (reads /proc/PID/cgroup). 1, 0, or GP_ENOENT when it is gone. */
int gp_cgroup_owner_of(pid_t pid, gp_cgroup_replica *out, char *path, size_t cap);

/* A sandboxed replica (sandbox.h) has no gp_cgroup of its own: podman's OCI runtime makes the
 * container's cgroups under ROOT's gpupool/NAME (--cgroup-parent /gpupool/NAME, NAME as the
 * supervisor names a replica's group) in every hierarchy: v2: ROOT/gpupool/NAME/libpod-ID (the
 * job) and .../conmon (podman's monitor); v1 and hybrid: ROOT/CONTROLLER/gpupool/NAME/libpod-ID
 * and .../conmon for every v1 controller (cpu, memory, pids, devices, ...), and in a hybrid host
 * the same under ROOT/unified. */

/* Removes what the runtime left of ROOT's gpupool/NAME, in every hierarchy, deepest first
 * (directories still holding processes get their SIGKILL and a second to go). */
void gp_cgroup_remove_named(const char *root, const char *name);
/* The replica's directories that hold its CPU and memory limits, comma-separated, into buf
 * (v2: ROOT/gpupool/NAME; v1: ROOT/cpu/gpupool/NAME,ROOT/memory/gpupool/NAME). */
void gp_cgroup_describe_named(const char *root, const char *name, char *buf, size_t size);

#endif
