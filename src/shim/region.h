/*
 * The shared region: the memory limits of one job replica and the GPU memory each of its
 * processes holds, in one file that every process of the replica maps MAP_SHARED.
 *
 * gpupool-run creates the file with gp_share_region_create() before the job starts; the job's
 * processes (through libgpushare.so) open it, claim one slot each, and charge and release their
 * allocations against it. The header (magic, version, layout, per-device limits, core limit,
 * policies) is written once, at creation, and is authoritative: the library never writes it and
 * copies it at open, so a later change to the file does not reach processes already running.
 *
 * Layout (version 1, native byte order and alignment; the creator and the job share a machine):
 *
 *   offset 0            header       (magic "GPSR", version, sizes, limits)
 *   lock_offset         the lock     a pthread mutex, PTHREAD_PROCESS_SHARED +
 * PTHREAD_MUTEX_ROBUST, and under it the usage totals per device slots_offset        nslots slots
 * {pid, start time, usage per device}
 *
 * Every access to the slots holds the lock. A process that dies holding it leaves it to the next
 * locker (EOWNERDEAD), which marks it consistent: each update is a handful of stores to one slot,
 * and a half-claimed slot looks like a dead process and is reclaimed.
 *
 * A slot belongs to a process identified by its pid and its start time (field 22 of
 * /proc/PID/stat), so a recycled pid does not inherit a dead process's usage. The slots of dead
 * processes (kill(pid, 0) fails with ESRCH, the start time differs, or the process is a zombie)
 * are reclaimed when a slot is needed, when usage is summed for reporting, and before an
 * allocation is refused.
 *
 * Permissions: the file is created mode 0660 with the owner and group given (the job's group, so
 * its processes can update their slots, and no other user can). A region that is writable by
 * others is refused at open (HAMi-core created its accounting file 0666).
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

#define GP_SHARE_MAGIC         0x52535047u /* "GPSR" in a little-endian file */
#define GP_SHARE_VERSION       1u
#define GP_SHARE_MAX_DEVICES   16
#define GP_SHARE_DEFAULT_SLOTS 128u
#define GP_SHARE_MAX_SLOTS     4096u
/* A device whose limit is GP_SHARE_UNLIMITED is not limited (nor tracked). */
#define GP_SHARE_UNLIMITED UINT64_MAX

/* What happens when the library cannot enforce (region unusable, no slot, out of memory). */
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
 * over with its usage cleared. Errors: GP_ENOSPC (every slot held by a live process), GP_EIO. */
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
/* 1 for a private region. */
int gp_share_region_is_private(const gp_share_region *r);

/* A process's start time and state: gp_proc_stat_read (src/base/procstat.h). */

#endif
