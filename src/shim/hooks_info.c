/*
 * What the job is told: memory information (cuMemGetInfo_v2, cuDeviceTotalMem_v2, NVML) shows a
 * limited device as a device of the limit's size, and cuGetProcAddress hands out our hooks.
 *
 * Reported for a limited device: total = min(limit, real total); free = total - usage of the
 * replica, 0 when usage reaches or passes the limit (never a wrapped, huge value), and never more
 * than the driver's own free memory.
 */
#include "shim/shim.h"

#include <limits.h>
#include <string.h>

#include "shim/config.h"

typedef struct mem_view {
    uint64_t total, free, used;
} mem_view;

/* Fills *v for dev from the real total/free. 1 if dev is limited (v filled), 0 if the real
 * values stand. */
static int limited_view(int dev, uint64_t real_total, uint64_t real_free, mem_view *v)
{
    int m = gp_shim_mode();
    uint64_t limit, used;
    if (m == GP_MODE_OFF) {
        return 0;
    }
    if (m == GP_MODE_ON) {
        if (!gp_acct_limited(dev, &limit)) {
            return 0;
        }
        if (gp_acct_usage(dev, &used) == 0) {
            v->total = limit < real_total ? limit : real_total;
            v->used = used < v->total ? used : v->total;
            v->free = used >= v->total ? 0 : v->total - used;
            if (v->free > real_free) {
                v->free = real_free;
            }
            return 1;
        }
    }
    /* Enforcement failed (at start or reading the region now): open shows the real values,
     * closed shows nothing free. */
    gp_shim_report_failure();
    if (!gp_shim_fail_closed()) {
        return 0;
    }
    v->total = real_total;
    v->free = 0;
    v->used = real_total;
    return 1;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    gp_fn_cuMemGetInfo_v2 real = GP_REAL(cuMemGetInfo_v2);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(free_bytes, total_bytes);
    int dev;
    mem_view v;
    if (rc == CUDA_SUCCESS && free_bytes && total_bytes &&
        gp_shim_current_device(&dev) == CUDA_SUCCESS &&
        limited_view(dev, *total_bytes, *free_bytes, &v)) {
        *total_bytes = (size_t)v.total;
        *free_bytes = (size_t)v.free;
    }
    return rc;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    gp_fn_cuDeviceTotalMem_v2 real = GP_REAL(cuDeviceTotalMem_v2);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(bytes, dev);
    mem_view v;
    if (rc == CUDA_SUCCESS && bytes && limited_view(dev, *bytes, *bytes, &v)) {
        *bytes = (size_t)v.total;
    }
    return rc;
}

/* ---- NVML ---- */

int gp_shim_cuda_ordinal(nvmlDevice_t device)
{
    gp_fn_nvmlDeviceGetIndex get_index = GP_REAL(nvmlDeviceGetIndex);
    gp_fn_nvmlDeviceGetUUID get_uuid = GP_REAL(nvmlDeviceGetUUID);
    unsigned int index = UINT_MAX;
    if (!get_index || get_index(device, &index) != NVML_SUCCESS) {
        index = UINT_MAX;
    }
    const char *visible = gp_shim_visible_devices();
    if (!visible) {
        return index == UINT_MAX ? -1 : (int)index;
    }
    char uuid[96];
    if (!get_uuid || get_uuid(device, uuid, sizeof(uuid)) != NVML_SUCCESS) {
        uuid[0] = '\0';
    }
    return gp_shim_visible_position(visible, uuid[0] ? uuid : NULL, index);
}

/* Rewrites an NVML memory report (v1 or v2 fields) in place for a limited device; 1 if it did. */
static int nvml_limit(nvmlDevice_t device, unsigned long long *total,
                      unsigned long long *free_bytes, unsigned long long *used)
{
    if (gp_shim_mode() == GP_MODE_OFF) {
        return 0;
    }
    int dev = gp_shim_cuda_ordinal(device);
    mem_view v;
    if (dev < 0 || !limited_view(dev, *total, *free_bytes, &v)) {
        return 0;
    }
    *total = v.total;
    *free_bytes = v.free;
    *used = v.total - v.free;
    return 1;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    gp_fn_nvmlDeviceGetMemoryInfo real = GP_REAL(nvmlDeviceGetMemoryInfo);
    if (!real) {
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    }
    nvmlReturn_t rc = real(device, memory);
    if (rc == NVML_SUCCESS && memory) {
        nvml_limit(device, &memory->total, &memory->free, &memory->used);
    }
    return rc;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    gp_fn_nvmlDeviceGetMemoryInfo_v2 real = GP_REAL(nvmlDeviceGetMemoryInfo_v2);
    if (!real) {
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    }
    nvmlReturn_t rc = real(device, memory);
    if (rc == NVML_SUCCESS && memory &&
        nvml_limit(device, &memory->total, &memory->free, &memory->used)) {
        memory->reserved = 0;
    }
    return rc;
}

/* ---- cuGetProcAddress ---- */

static void substitute(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags)
{
    if (!pfn || !*pfn) {
        return;
    }
    gp_voidfn hook = gp_shim_getproc_hook(symbol, cuda_version, flags, (gp_voidfn)(uintptr_t)*pfn);
    if (hook) {
        *pfn = (void *)(uintptr_t)hook;
    }
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    gp_fn_cuGetProcAddress real = GP_REAL(cuGetProcAddress);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(symbol, pfn, cudaVersion, flags);
    if (rc == CUDA_SUCCESS) {
        substitute(symbol, pfn, cudaVersion, flags);
    }
    return rc;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    gp_fn_cuGetProcAddress_v2 real = GP_REAL(cuGetProcAddress_v2);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (rc == CUDA_SUCCESS) {
        substitute(symbol, pfn, cudaVersion, flags);
    }
    return rc;
}
