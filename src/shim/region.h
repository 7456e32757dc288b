/*
 * The shared region: the limits of one job replica, and the GPU memory each of its processes
 * holds. Two files, so that the job can write its usage and only read its limits:
 *
 *   PATH.limits  the limits (magic "GPSL", version, slot count, per-device memory limits, core
 *                limit and policy, a random region id). Written once by gpupool-run, owned by
 *                it (root), mode 0640 with the job's group: the job reads it and cannot write,
 *                replace or chmod it. The library copies it at open; nothing else is trusted.
 *   PATH         the usage (magic "GPSR", version, layout, the same region id), then the lock
 *                and the per-device totals, then nslots slots {pid, start time, usage per
 *                device}. Mode 0660 with the job's group: every process of the replica maps it
 *                MAP_SHARED and updates its slot.
 *
 * Trust. A region is used only when both files are regular files (never followed through a
 * symbolic link), the limits file is writable by its owner alone, its owner is root or another
 * user than the caller's (a file the job's user owns could have been written by the job; a job
 * running as root is trusted with root's files, as it could write anything anyway), the usage
 * file is not writable by others and has the same owner as the limits file (a file the job put
 * in its place is refused), and both carry the same region id. Every offset comes from the slot
 * count of the limits file; nothing read from the usage file is trusted but as usage.
 *
 * Usage only ever denies. The job can write the usage file: zeroing it cannot raise a limit (the
 * limits are elsewhere) but could hide what other processes hold. So each process also keeps in
 * its own memory what it charged to its slot, and an admission checks the larger of the region's
 * total and that: no single process passes its limit, whatever the file says. What several
 * processes hold together beyond the limit after such tampering is the agent's NVML watch's to
 * catch (memwatch.h). Garbage in the file denies (saturated usage) or at worst stalls the job's
 * own allocations (a lock held forever times out after GP_SHARE_LOCK_TIMEOUT_S: an error, which
 * the library answers by refusing).
 *
 * Every access to the slots holds the lock (a pthread mutex, PTHREAD_PROCESS_SHARED +
 * PTHREAD_MUTEX_ROBUST). A process that dies holding it leaves it to the next locker
 * (EOWNERDEAD), which marks it consistent and recomputes the totals from the slots: each update
 * is a handful of stores to one slot, and a half-claimed slot looks like a dead process and is
 * reclaimed.
 *
 * A slot belongs to a process identified by its pid and its start time (field 22 of
 * /proc/PID/stat), so a recycled pid does not inherit a dead process's usage. The slots of dead
 * processes (kill(pid, 0) fails with ESRCH, the start time differs, or the process is a zombie)
 * are reclaimed when a slot is needed, when usage is summed for reporting, and before an
 * allocation is refused.
 *
 * This module is pure C over libc: gpupool-run links it (the static library gpshareregion), and
 * libgpushare.so compiles it in. Functions return 0 or a negative GP_E* code (gpupool/error.h).
 * A gp_share_region is owned by its opener and freed with gp_share_region_free(); it is safe to
 * use from several threads (the lock serialises slot updates; the rest is read-only after open).
 */
#ifndef GP_SHIM_REGION_H
#define GP_SHIM_REGION_H

#include <stdint.h>
#include <sys/types.h>

#include "gpupool/error.h"

#define GP_SHARE_MAGIC         0x52535047u /* "GPSR" in a little-endian file: the usage */
#define GP_SHARE_LIMITS_MAGIC  0x4c535047u /* "GPSL": the limits */
#define GP_SHARE_VERSION       2u
#define GP_SHARE_LIMITS_SUFFIX ".limits"
/* Where the sandbox puts a replica's region (and PATH.limits beside it). When its limits file
 * exists, the library uses it whatever GPUPOOL_SHARE_REGION says: a process started with an
 * empty environment is held to the same limits. */
#define GP_SHARE_REGION_DEFAULT "/run/gpupool/share.region"
/* A lock held longer than this (never legitimately: updates take microseconds) is an error. */
#define GP_SHARE_LOCK_TIMEOUT_S 5
#define GP_SHARE_MAX_DEVICES    16
#define GP_SHARE_DEFAULT_SLOTS  128u
#define GP_SHARE_MAX_SLOTS      4096u
/* A device whose limit is GP_SHARE_UNLIMITED is not limited (nor tracked). */
#define GP_SHARE_UNLIMITED UINT64_MAX

/* What happens when the library cannot enforce (region unusable, no slot, out of memory) without
 * a region, limits from the environment. A region that was given always fails closed: its
 * on_error is recorded, and ignored. */
typedef enum gp_share_on_error {
    GP_SHARE_FAIL_OPEN = 0,  /* let allocations through (the job runs, unlimited) */
    GP_SHARE_FAIL_CLOSED = 1 /* refuse allocations with CUDA_ERROR_OUT_OF_MEMORY */
} gp_share_on_error;

/* How a compute limit is applied (by the kernel-launch throttle, see throttle.h). */
typedef enum gp_share_core_policy {
    GP_SHARE_CORE_DEFAULT = 0, /* limit only while other tenants share the GPU */
    GP_SHARE_CORE_STRICT = 1   /* limit always */
} gp_share_core_policy;

typedef struct gp_share_limits {
    /* Devices 0..ndevices-1 (CUDA ordinals as the job sees them) have an entry; a device at or
     * past ndevices was not given to the replica and gets a limit of 0. */
    uint32_t ndevices;
    uint64_t mem_bytes[GP_SHARE_MAX_DEVICES]; /* bytes, or GP_SHARE_UNLIMITED */
    uint32_t core_percent;                    /* 1..100; 0: no compute limit */
    uint32_t core_policy;                     /* gp_share_core_policy */
    uint32_t on_error;                        /* gp_share_on_error */
    uint32_t nslots;                          /* processes at once; 0: GP_SHARE_DEFAULT_SLOTS */
} gp_share_limits;

typedef struct gp_share_region gp_share_region;

/* Writes a new region file at path (atomically: a temporary file in the same directory, then
 * rename), mode 0660, owned by owner:group ((uid_t)-1 / (gid_t)-1: leave as created). Replaces
 * an existing file; processes still mapping the old one keep it. Errors: GP_EINVAL (limits out of
 * range), GP_EPERM (chown refused), GP_EIO. */
int gp_share_region_create(const char *path, const gp_share_limits *lim, uid_t owner, gid_t group);

/* Opens and validates a region file, maps it and copies its header. *out is owned by the caller
 * (NULL on failure). Errors: GP_ENOENT, GP_EPERM (writable by others, not a regular file),
 * GP_EPARSE (wrong magic, layout or size), GP_ENOTSUP (other version), GP_EIO. */
int gp_share_region_open(const char *path, gp_share_region **out);

/* A region in private memory with the same semantics and no file: a process without a region
 * file accounts against it (its own processes only). */
int gp_share_region_new_private(const gp_share_limits *lim, gp_share_region **out);

/* Unmaps and frees; accepts NULL. Does not detach slots. */
void gp_share_region_free(gp_share_region *r);

/* The limits copied at open. */
const gp_share_limits *gp_share_region_limits(const gp_share_region *r);

/* Limit of one device: mem_bytes[dev] for 0 <= dev < ndevices, else 0 (not given). */
uint64_t gp_share_region_limit(const gp_share_region *r, int dev);

/* Claims a slot for the calling process (pid and start time). A slot that already carries this
 * pid and start time belongs to an earlier image of the same process (before exec) and is taken
 * over with its usage cleared. The slot becomes this handle's own: what is charged to it is also
 * counted in the handle (process memory), and its admissions never exceed a limit by that count
 * whatever the file says. Errors: GP_ENOSPC (every slot held by a live process), GP_EIO. */
int gp_share_region_attach(gp_share_region *r, int *slot);
/* The same for a given pid and start time (tests; gpupool-run accounting for a helper). */
int gp_share_region_attach_pid(gp_share_region *r, pid_t pid, uint64_t start_time, int *slot);
/* Frees a slot (its usage no longer counts). */
int gp_share_region_detach(gp_share_region *r, int slot);

/* Adds bytes to slot's usage of dev if the sum over all live slots stays within the device's
 * limit (exactly the limit is allowed); dead slots are reclaimed before refusing.
 * Errors: GP_ENOSPC (over the limit), GP_EINVAL, GP_EIO. */
int gp_share_region_reserve(gp_share_region *r, int slot, int dev, uint64_t bytes);
/* Adds bytes unconditionally (saturating): memory the process holds whether or not it fits. */
int gp_share_region_charge(gp_share_region *r, int slot, int dev, uint64_t bytes);
/* Subtracts bytes (never below zero). */
int gp_share_region_release(gp_share_region *r, int slot, int dev, uint64_t bytes);

/* Usage of dev summed over live slots (saturating), after reclaiming dead ones. */
int gp_share_region_usage(gp_share_region *r, int dev, uint64_t *out);

/* The pids of the slots in use (up to max, in *n), without reclaiming dead ones: the processes
 * of the replica, for the compute limit's per-process utilisation. 0 or GP_EIO. */
int gp_share_region_pids(gp_share_region *r, pid_t *pids, int max, int *n);

/* After fork(), in the child, for a private region: the copied slots and lock belong to the
 * parent; this clears them. */
void gp_share_region_reset_private(gp_share_region *r);
/* After fork(), in the child: the handle's own slot and count were the parent's; forgets them
 * (and for a private region, clears it as above). */
void gp_share_region_forked(gp_share_region *r);
/* 1 for a private region. */
int gp_share_region_is_private(const gp_share_region *r);

/* A process's start time and state: gp_proc_stat_read (src/base/procstat.h). */

#endif
