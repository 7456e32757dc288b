/*
 * Internals of libgpushare.so shared by its files (nothing here is exported but the hooks).
 *
 *   dlsym.c        the function table generated from hooks.h; dlsym, dlvsym, dlopen, dlmopen
 *   elfsym.c       libc's dynamic-linking functions found without calling them
 *   shim.c         start-up (configuration, region), the real libraries, logging, fork
 *   acct.c         the allocation table and the accounting against the region
 *   hooks_mem.c    allocation and free hooks
 *   hooks_info.c   memory information (cuMemGetInfo, NVML) and cuGetProcAddress
 *   hooks_launch.c kernel and graph launches, passed through the compute limit (throttle.h)
 *   throttle.c     the compute limit's gates, one duty cycle (duty.c) per device
 *   throttle_sampler.c  the thread that measures utilisation through NVML for the gates
 *
 * Locking: the region has its own lock (region.h); the allocation table one mutex (acct.c);
 * neither is held while the other is taken, nor across a driver call. The compute limit has a
 * mutex per device gate (throttle.c) and one for its sampler's state (throttle_sampler.c),
 * independent of the others; the sampler thread takes the region's lock briefly to list the
 * replica's processes, never while holding its own.
 */
#ifndef GP_SHIM_SHIM_H
#define GP_SHIM_SHIM_H

#include <stdint.h>

#include "shim/cuda_types.h"
#include "shim/hooks.h"

#define GP_EXPORT __attribute__((visibility("default")))

typedef void (*gp_voidfn)(void);
typedef void *(*gp_dlsym_fn)(void *handle, const char *name);
typedef void *(*gp_dlopen_fn)(const char *file, int mode);

enum gp_lib { GP_LIB_CUDA = 0, GP_LIB_NVML = 1, GP_LIB_COUNT };

/* GP_FN_<name>: the index of each row of hooks.h. */
enum gp_fn_index {
#define GP_X(lib, kind, ret, name, gpname, minver, flags, params) GP_FN_##name,
    GP_SHIM_FUNCTIONS(GP_X)
#undef GP_X
        GP_FN_COUNT
};

/* gp_fn_<name>: the type of each function. */
#define GP_X(lib, kind, ret, name, gpname, minver, flags, params) typedef ret(*gp_fn_##name) params;
GP_SHIM_FUNCTIONS(GP_X)
#undef GP_X

/* The hooks, exported under the real names. */
#define GP_PROTO_HOOK(ret, name, params) GP_EXPORT ret name params;
#define GP_PROTO_CALL(ret, name, params)
#define GP_X(lib, kind, ret, name, gpname, minver, flags, params) GP_PROTO_##kind(ret, name, params)
GP_SHIM_FUNCTIONS(GP_X)
#undef GP_X

typedef struct gp_fn_info {
    const char *name;   /* exported symbol */
    const char *gpname; /* cuGetProcAddress name, "" if none */
    int minver;
    unsigned char lib, hooked, ptds;
} gp_fn_info;

/* The rows of hooks.h and the hook of each (NULL for CALL rows); dlsym.c. */
extern const gp_fn_info gp_shim_fns[GP_FN_COUNT];
extern const gp_voidfn gp_shim_hooks[GP_FN_COUNT];

/* libc's dlsym and dlopen (never ours; dlsym.c finds them through elfsym.h); NULL only if
 * glibc has none. The library's own dlopen calls go straight to libc's. */
gp_dlsym_fn gp_shim_real_dlsym(void);
gp_dlopen_fn gp_shim_real_dlopen(void);

/* The real function of a row, loading its library on first use; NULL when the library or the
 * symbol is missing. GP_REAL(name) gives it its type. */
gp_voidfn gp_shim_real(int index);
#define GP_REAL(name) ((gp_fn_##name)gp_shim_real(GP_FN_##name))

/* cuGetProcAddress support: the hook to return in place of fn (a real function), or NULL. Matches
 * by address first, then by name, version and flags. */
gp_voidfn gp_shim_getproc_hook(const char *symbol, int cuda_version, cuuint64_t flags,
                               gp_voidfn fn);

/* Start-up, once: the environment is read by the library's constructor, the region opened and
 * the mode decided on the first hook that needs them (gp_shim_mode calls this). */
void gp_shim_init(void);

/* ---- enforcement state (shim.c) ---- */

enum gp_mode {
    GP_MODE_OFF = 0,   /* no limit configured: pass everything through */
    GP_MODE_ON = 1,    /* limits enforced against the region */
    GP_MODE_FAILED = 2 /* enforcement impossible: the on-error policy decides */
};

int gp_shim_mode(void);
int gp_shim_fail_closed(void); /* the on-error policy is "closed" (always, with a region) */
/* 1 while a limit applies or enforcement failed closed: dlmopen into a new namespace is refused
 * and RTLD_DEEPBIND dropped (dlsym.c). Decides the mode (opens the region) on first use. */
int gp_shim_confine_loading(void);
/* In GP_MODE_FAILED: logs (once) why enforcement failed at start-up. */
void gp_shim_report_failure(void);
struct gp_share_region *gp_shim_region(void);
/* This process's slot in the region (attached on first use); -1 when none could be had. */
int gp_shim_slot(void);
/* The region no longer has slot as ours: the next gp_shim_slot() claims another. */
void gp_shim_slot_lost(int slot);
/* CUDA_VISIBLE_DEVICES as read at start, or NULL if unset. */
const char *gp_shim_visible_devices(void);

/* ---- logging: one line per kind of event, the first time it happens ---- */

enum gp_event {
    GP_EV_REFUSED,
    GP_EV_REGION,
    GP_EV_CONFIG,
    GP_EV_NO_SLOT,
    GP_EV_LOCK,
    GP_EV_TABLE,
    GP_EV_DEVICE,
    GP_EV_LIBRARY,
    GP_EV_LEGACY,
    GP_EV_CORE_UNMEASURED, /* the compute limit cannot measure utilisation */
    GP_EV_CORE_FALLBACK,   /* ... measures the whole device, not the replica's processes */
    GP_EV_DLMOPEN,         /* a dlmopen into a new namespace was refused */
    GP_EV_DEEPBIND,        /* RTLD_DEEPBIND was dropped from a dlopen */
    GP_EV_COUNT
};
void gp_shim_log_once(int event, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line, every time (periodic reports; the caller limits the rate). */
void gp_shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 while the event has not been logged (to skip gathering what the line would say). */
int gp_shim_log_wanted(int event);

/* ---- accounting (acct.c) ---- */

typedef enum gp_key_kind {
    GP_KEY_PTR = 1, /* linear, managed and stream-ordered allocations */
    GP_KEY_ARRAY,
    GP_KEY_MIPMAP,
    GP_KEY_VMM,  /* cuMemCreate handles; aux: live mappings, released: cuMemRelease seen */
    GP_KEY_MAP,  /* cuMemMap ranges; aux: the handle mapped */
    GP_KEY_POOL, /* memory pools; dev: the pool's device (-1: not device memory) */
} gp_key_kind;

/* A reservation made before a driver call. */
typedef struct gp_charge {
    int dev;
    uint64_t bytes;
    int tracked; /* reserved in the region: settle or cancel it */
} gp_charge;

/* May bytes be allocated on dev? 0: yes (call the driver, then gp_acct_settle); GP_ENOSPC:
 * return CUDA_ERROR_OUT_OF_MEMORY without calling the driver. */
int gp_acct_admit(int dev, uint64_t bytes, gp_charge *c);
/* Widens an admitted charge to total bytes (cuMemAllocPitch learns its size from the driver).
 * GP_ENOSPC: the difference does not fit (the charge is unchanged). */
int gp_acct_grow(gp_charge *c, uint64_t total);
/* After the driver call: on success records (kind, key) so that the free finds its size; on
 * failure gives the reservation back. Returns GP_ENOMEM when the record could not be kept and
 * the policy is closed: the caller frees the allocation and returns CUDA_ERROR_OUT_OF_MEMORY. */
int gp_acct_settle(gp_charge *c, int ok, gp_key_kind kind, uint64_t key);

/* A record taken out of the table before a free is passed to the driver. */
typedef struct gp_taken {
    int found;
    gp_key_kind kind;
    uint64_t key, bytes, aux;
    int dev;
} gp_taken;
void gp_acct_take(gp_key_kind kind, uint64_t key, gp_taken *t);
/* ok: the driver freed it, release the usage; else put the record back. */
void gp_acct_finish(gp_taken *t, int ok);

void gp_acct_pool_set(CUmemoryPool pool, int dev);
int gp_acct_pool_device(CUmemoryPool pool, int *dev); /* 0 if known */

/* VMM: a handle stays charged until it is released and no longer mapped. */
void gp_acct_vmm_map(CUmemGenericAllocationHandle h, CUdeviceptr ptr, size_t size);
void gp_acct_vmm_unmap(CUdeviceptr ptr, size_t size);
void gp_acct_vmm_release_begin(CUmemGenericAllocationHandle h, gp_taken *t);
void gp_acct_vmm_release_end(gp_taken *t, int ok);

/* The limit of dev: 1 and *limit if dev is limited, 0 if not. */
int gp_acct_limited(int dev, uint64_t *limit);
/* Usage of dev over the replica; 0 or a negative code. */
int gp_acct_usage(int dev, uint64_t *usage);

/* Fork: prepare/parent/child handlers of the table (shim.c registers them). */
void gp_acct_atfork_prepare(void);
void gp_acct_atfork_parent(void);
void gp_acct_atfork_child(void);

/* The CUDA ordinal of an NVML device: its place in CUDA_VISIBLE_DEVICES (by uuid or index), or
 * its NVML index when that is unset. -1: the job's CUDA does not see it (hooks_info.c). */
int gp_shim_cuda_ordinal(nvmlDevice_t device);

/* The device an allocation lands on: the current context's, or the stream's context's. */
CUresult gp_shim_current_device(int *dev);
CUresult gp_shim_stream_device(CUstream s, int *dev);

#endif
