/*
 * Configuration of libgpushare.so: the environment contract (docs/gpushare.md).
 *
 * The environment is read once, when the library is loaded, through a getter the caller passes
 * (getenv in the library, a table in the tests): what the process does to its environment later
 * changes nothing. GP_SHIM_ENV_TABLE lists every variable; it drives nothing but the check that
 * docs/gpushare.md documents each one, so the two cannot drift apart.
 *
 * Precedence: a region (GPUPOOL_SHARE_REGION) makes its header the only source of limits and
 * policies; the limit variables are then ignored. Without a region, per-device variables beat
 * the all-devices ones, and GPUPOOL_* beat the HAMi-core aliases. No variable turns enforcement
 * off (CUDA_DISABLE_CONTROL is not read).
 */
#ifndef GP_SHIM_CONFIG_H
#define GP_SHIM_CONFIG_H

#include <limits.h>
#include <stdint.h>

#include "shim/region.h"

/* X(name, help): the variables read, for the documentation check. A trailing _<i> stands for
 * the device index 0..15. */
#define GP_SHIM_ENV_TABLE(X)                                                                       \
    X("GPUPOOL_SHARE_REGION", "path of the shared region file; its header gives the limits")       \
    X("GPUPOOL_SHARE_ON_ERROR", "open|closed: allocations when enforcement fails (default open)")  \
    X("GPUPOOL_GPU_MEMORY_LIMIT_MIB", "memory limit of every visible device, MiB")                 \
    X("GPUPOOL_GPU_MEMORY_LIMIT_MIB_<i>", "memory limit of device i, MiB")                         \
    X("CUDA_DEVICE_MEMORY_LIMIT", "HAMi-core alias: bytes, or with a k/m/g suffix")                \
    X("CUDA_DEVICE_MEMORY_LIMIT_<i>", "HAMi-core alias for device i")                              \
    X("GPUPOOL_GPU_CORE_LIMIT", "compute limit, percent of a GPU (see throttle.h)")                \
    X("CUDA_DEVICE_SM_LIMIT", "HAMi-core alias of GPUPOOL_GPU_CORE_LIMIT")                         \
    X("GPUPOOL_GPU_CORE_POLICY", "default|shared|strict: how the compute limit applies")           \
    X("CUDA_VISIBLE_DEVICES", "which NVML device is which CUDA device (for NVML answers)")

typedef const char *(*gp_shim_getenv_fn)(void *ctx, const char *name);

typedef struct gp_shim_config {
    char region_path[PATH_MAX]; /* "" without a region */
    /* Limits from the environment (only used without a region): ndevices is
     * GP_SHARE_MAX_DEVICES, unset devices GP_SHARE_UNLIMITED. */
    gp_share_limits env_limits;
    int on_error;  /* gp_share_on_error from GPUPOOL_SHARE_ON_ERROR */
    int env_error; /* a limit variable could not be parsed: enforcement failed */
    char bad_var[64];
    char visible_devices[1024]; /* CUDA_VISIBLE_DEVICES; visible_set: it was set */
    int visible_set;
} gp_shim_config;

/* Fills *cfg from the environment. Never fails: a malformed value sets env_error and the name of
 * the variable in bad_var, and leaves that limit unset. */
void gp_shim_config_load(gp_shim_config *cfg, gp_shim_getenv_fn get, void *ctx);

/* Parses a HAMi-core size: decimal digits, optionally one of k/K, m/M, g/G (powers of 1024); no
 * suffix means bytes. 0 or an error otherwise. */
int gp_shim_parse_size(const char *s, uint64_t *out);
/* Parses a decimal MiB count into bytes. */
int gp_shim_parse_mib(const char *s, uint64_t *out);

/* Position of the NVML device uuid / index in a CUDA_VISIBLE_DEVICES list: the entry equal to
 * the uuid or a prefix of it ("GPU-8932f937"), or equal to the decimal index. -1 if not listed. */
int gp_shim_visible_position(const char *list, const char *uuid, unsigned int index);

#endif
