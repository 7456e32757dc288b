/*
 * Allocation and free hooks: every way the driver API hands out device memory.
 *
 * Each allocation hook finds the device the memory lands on, admits the size (refusing with
 * CUDA_ERROR_OUT_OF_MEMORY, without calling the driver, when it would cross the limit), calls the
 * driver and settles (acct.c). Sizes the call does not state are estimated: arrays from their
 * descriptors (arrays_bytes), pitched allocations from width x height, corrected to pitch x height
 * once the driver has chosen the pitch.
 *
 * Devices: the current context's (linear, managed, arrays), the stream's context's (stream-ordered
 * allocations), the pool's location (cuMemAllocFromPoolAsync, when we saw the pool created or
 * looked up), the allocation properties' location (cuMemCreate). Memory whose location is the
 * host (host pools, host VMM allocations) is not device memory and is not counted.
 *
 * Stream-ordered frees release at the call, not when the stream reaches them; pools keep freed
 * memory cached, which we do not count either (docs/gpushare.md: limits count what the job has
 * allocated and not freed), so cuMemPoolTrimTo changes nothing here and is not hooked.
 */
#include "shim/shim.h"

#include <stdint.h>

#include "shim/region.h"

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Bytes per element of an array format; unknown formats are charged the widest element. */
static uint64_t element_bytes(CUarray_format f, unsigned int channels)
{
    uint64_t ch = channels ? channels : 1;
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return ch;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2 * ch;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4 * ch;
    default:
        /* Block-compressed formats hold at most a byte per texel. */
        if (f >= CU_AD_FORMAT_BC1_UNORM && f <= CU_AD_FORMAT_BC7_UNORM_SRGB) {
            return 1;
        }
        return 16;
    }
}

static uint64_t at_least_1(uint64_t v)
{
    return v ? v : 1;
}

/* Bytes of an array of w x h x d elements (h, d: 0 for fewer dimensions). */
static uint64_t array_bytes(uint64_t w, uint64_t h, uint64_t d, CUarray_format f,
                            unsigned int channels)
{
    uint64_t n = mul_sat(mul_sat(at_least_1(w), at_least_1(h)), at_least_1(d));
    return mul_sat(n, element_bytes(f, channels));
}

static uint64_t array3d_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    /* Sparse and deferred-mapping arrays get their memory from cuMemCreate, counted there. */
    if (d->Flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)) {
        return 0;
    }
    return array_bytes(d->Width, d->Height, d->Depth, d->Format, d->NumChannels);
}

/* All levels of a mipmapped array: each halves width, height and (unless layered) depth. */
static uint64_t mipmap_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned int levels)
{
    if (d->Flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)) {
        return 0;
    }
    uint64_t sum = 0;
    unsigned int n = levels ? levels : 1;
    for (unsigned int l = 0; l < n; l++) {
        unsigned int s = l < 63 ? l : 63;
        uint64_t w = at_least_1(d->Width >> s);
        uint64_t h = d->Height ? at_least_1(d->Height >> s) : 0;
        uint64_t dd =
            d->Depth && !(d->Flags & CUDA_ARRAY3D_LAYERED) ? at_least_1(d->Depth >> s) : d->Depth;
        sum = add_sat(sum, array_bytes(w, h, dd, d->Format, d->NumChannels));
    }
    return sum;
}

/* ---- the common steps ---- */

static int off(void)
{
    return gp_shim_mode() == GP_MODE_OFF;
}

static CUresult admit(int dev, uint64_t bytes, gp_charge *c)
{
    if (bytes == 0) {
        /* The driver refuses empty allocations itself; nothing to count. */
        c->dev = dev;
        c->bytes = 0;
        c->tracked = 0;
        return CUDA_SUCCESS;
    }
    return gp_acct_admit(dev, bytes, c) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Gives back an allocation we cannot account for (fail-closed). */
static void undo(gp_key_kind kind, uint64_t key)
{
    switch (kind) {
    case GP_KEY_PTR: {
        gp_fn_cuMemFree_v2 f = GP_REAL(cuMemFree_v2);
        if (f) {
            f((CUdeviceptr)key);
        }
        break;
    }
    case GP_KEY_ARRAY: {
        gp_fn_cuArrayDestroy f = GP_REAL(cuArrayDestroy);
        if (f) {
            f((CUarray)(uintptr_t)key);
        }
        break;
    }
    case GP_KEY_MIPMAP: {
        gp_fn_cuMipmappedArrayDestroy f = GP_REAL(cuMipmappedArrayDestroy);
        if (f) {
            f((CUmipmappedArray)(uintptr_t)key);
        }
        break;
    }
    case GP_KEY_VMM: {
        gp_fn_cuMemRelease f = GP_REAL(cuMemRelease);
        if (f) {
            f((CUmemGenericAllocationHandle)key);
        }
        break;
    }
    default:
        break;
    }
}

static CUresult settle(gp_charge *c, CUresult rc, gp_key_kind kind, uint64_t key)
{
    if (gp_acct_settle(c, rc == CUDA_SUCCESS, kind, key) != 0) {
        undo(kind, key);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return rc;
}

static CUresult free_tracked(gp_key_kind kind, uint64_t key, CUresult (*call)(uint64_t, void *),
                             void *arg)
{
    gp_taken t;
    gp_acct_take(kind, key, &t);
    CUresult rc = call(key, arg);
    gp_acct_finish(&t, rc == CUDA_SUCCESS);
    return rc;
}

/* ---- linear memory ---- */

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    gp_fn_cuMemAlloc_v2 real = GP_REAL(cuMemAlloc_v2);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(dptr, bytesize);
    }
    int dev;
    gp_charge c;
    CUresult rc = gp_shim_current_device(&dev);
    if (rc != CUDA_SUCCESS || (rc = admit(dev, bytesize, &c)) != CUDA_SUCCESS) {
        return rc;
    }
    rc = real(dptr, bytesize);
    return settle(&c, rc, GP_KEY_PTR, rc == CUDA_SUCCESS ? *dptr : 0);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
{
    gp_fn_cuMemAllocPitch_v2 real = GP_REAL(cuMemAllocPitch_v2);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    }
    int dev;
    gp_charge c;
    CUresult rc = gp_shim_current_device(&dev);
    if (rc != CUDA_SUCCESS ||
        (rc = admit(dev, mul_sat(WidthInBytes, Height), &c)) != CUDA_SUCCESS) {
        return rc;
    }
    rc = real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    if (rc == CUDA_SUCCESS && gp_acct_grow(&c, mul_sat(*pPitch, Height)) != 0) {
        /* The padding chosen by the driver crosses the limit. */
        gp_fn_cuMemFree_v2 f = GP_REAL(cuMemFree_v2);
        if (f) {
            f(*dptr);
        }
        gp_acct_settle(&c, 0, GP_KEY_PTR, 0);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return settle(&c, rc, GP_KEY_PTR, rc == CUDA_SUCCESS ? *dptr : 0);
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    gp_fn_cuMemAllocManaged real = GP_REAL(cuMemAllocManaged);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(dptr, bytesize, flags);
    }
    /* Managed memory may migrate, but it is charged in full to the current device. */
    int dev;
    gp_charge c;
    CUresult rc = gp_shim_current_device(&dev);
    if (rc != CUDA_SUCCESS || (rc = admit(dev, bytesize, &c)) != CUDA_SUCCESS) {
        return rc;
    }
    rc = real(dptr, bytesize, flags);
    return settle(&c, rc, GP_KEY_PTR, rc == CUDA_SUCCESS ? *dptr : 0);
}

static CUresult call_free(uint64_t key, void *arg)
{
    return ((gp_fn_cuMemFree_v2)(uintptr_t)arg)((CUdeviceptr)key);
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    gp_fn_cuMemFree_v2 real = GP_REAL(cuMemFree_v2);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(dptr);
    }
    return free_tracked(GP_KEY_PTR, dptr, call_free, (void *)(uintptr_t)real);
}

/* ---- stream-ordered allocation ---- */

typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*alloc_pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);

static CUresult alloc_async(alloc_async_fn real, CUdeviceptr *dptr, size_t bytesize, CUstream s)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(dptr, bytesize, s);
    }
    /* The stream's device, not the current one (HAMi-core charged the wrong device). */
    int dev;
    gp_charge c;
    CUresult rc = gp_shim_stream_device(s, &dev);
    if (rc != CUDA_SUCCESS || (rc = admit(dev, bytesize, &c)) != CUDA_SUCCESS) {
        return rc;
    }
    rc = real(dptr, bytesize, s);
    return settle(&c, rc, GP_KEY_PTR, rc == CUDA_SUCCESS ? *dptr : 0);
}

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return alloc_async(GP_REAL(cuMemAllocAsync), dptr, bytesize, hStream);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return alloc_async(GP_REAL(cuMemAllocAsync_ptsz), dptr, bytesize, hStream);
}

static CUresult alloc_pool(alloc_pool_fn real, CUdeviceptr *dptr, size_t bytesize,
                           CUmemoryPool pool, CUstream s)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(dptr, bytesize, pool, s);
    }
    int dev;
    gp_charge c;
    CUresult rc = CUDA_SUCCESS;
    if (gp_acct_pool_device(pool, &dev) != 0) {
        rc = gp_shim_stream_device(s, &dev); /* a pool we did not see made */
    }
    if (rc == CUDA_SUCCESS && dev < 0) {
        return real(dptr, bytesize, pool, s); /* a host pool */
    }
    if (rc != CUDA_SUCCESS || (rc = admit(dev, bytesize, &c)) != CUDA_SUCCESS) {
        return rc;
    }
    rc = real(dptr, bytesize, pool, s);
    return settle(&c, rc, GP_KEY_PTR, rc == CUDA_SUCCESS ? *dptr : 0);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream)
{
    return alloc_pool(GP_REAL(cuMemAllocFromPoolAsync), dptr, bytesize, pool, hStream);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream)
{
    return alloc_pool(GP_REAL(cuMemAllocFromPoolAsync_ptsz), dptr, bytesize, pool, hStream);
}

typedef struct free_async_args {
    free_async_fn fn;
    CUstream stream;
} free_async_args;

static CUresult call_free_async(uint64_t key, void *arg)
{
    free_async_args *a = arg;
    return a->fn((CUdeviceptr)key, a->stream);
}

static CUresult free_async(free_async_fn real, CUdeviceptr dptr, CUstream s)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(dptr, s);
    }
    free_async_args a = {real, s};
    return free_tracked(GP_KEY_PTR, dptr, call_free_async, &a);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    return free_async(GP_REAL(cuMemFreeAsync), dptr, hStream);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    return free_async(GP_REAL(cuMemFreeAsync_ptsz), dptr, hStream);
}

static int location_device(const CUmemLocation *l)
{
    return l->type == CU_MEM_LOCATION_TYPE_DEVICE ? l->id : -1;
}

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    gp_fn_cuMemPoolCreate real = GP_REAL(cuMemPoolCreate);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(pool, poolProps);
    if (rc == CUDA_SUCCESS && poolProps && !off()) {
        gp_acct_pool_set(*pool, location_device(&poolProps->location));
    }
    return rc;
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    gp_fn_cuDeviceGetDefaultMemPool real = GP_REAL(cuDeviceGetDefaultMemPool);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(pool_out, dev);
    if (rc == CUDA_SUCCESS && !off()) {
        gp_acct_pool_set(*pool_out, dev);
    }
    return rc;
}

CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    gp_fn_cuDeviceGetMemPool real = GP_REAL(cuDeviceGetMemPool);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(pool, dev);
    if (rc == CUDA_SUCCESS && !off()) {
        gp_acct_pool_set(*pool, dev);
    }
    return rc;
}

/* ---- virtual memory management ---- */

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags)
{
    gp_fn_cuMemCreate real = GP_REAL(cuMemCreate);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    int dev = prop ? location_device(&prop->location) : -1;
    if (off() || dev < 0) {
        return real(handle, size, prop, flags);
    }
    gp_charge c;
    CUresult rc = admit(dev, size, &c);
    if (rc != CUDA_SUCCESS) {
        return rc;
    }
    rc = real(handle, size, prop, flags);
    return settle(&c, rc, GP_KEY_VMM, rc == CUDA_SUCCESS ? *handle : 0);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    gp_fn_cuMemRelease real = GP_REAL(cuMemRelease);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(handle);
    }
    gp_taken t;
    gp_acct_vmm_release_begin(handle, &t);
    CUresult rc = real(handle);
    gp_acct_vmm_release_end(&t, rc == CUDA_SUCCESS);
    return rc;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    gp_fn_cuMemMap real = GP_REAL(cuMemMap);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(ptr, size, offset, handle, flags);
    if (rc == CUDA_SUCCESS && !off()) {
        gp_acct_vmm_map(handle, ptr, size);
    }
    return rc;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    gp_fn_cuMemUnmap real = GP_REAL(cuMemUnmap);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    CUresult rc = real(ptr, size);
    if (rc == CUDA_SUCCESS && !off()) {
        gp_acct_vmm_unmap(ptr, size);
    }
    return rc;
}

/* ---- arrays ---- */

CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
    gp_fn_cuArrayCreate_v2 real = GP_REAL(cuArrayCreate_v2);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off() || !pAllocateArray) {
        return real(pHandle, pAllocateArray);
    }
    const CUDA_ARRAY_DESCRIPTOR *d = pAllocateArray;
    int dev;
    gp_charge c;
    CUresult rc = gp_shim_current_device(&dev);
    if (rc != CUDA_SUCCESS ||
        (rc = admit(dev, array_bytes(d->Width, d->Height, 0, d->Format, d->NumChannels), &c)) !=
            CUDA_SUCCESS) {
        return rc;
    }
    rc = real(pHandle, pAllocateArray);
    return settle(&c, rc, GP_KEY_ARRAY, rc == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*pHandle : 0);
}

CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
    gp_fn_cuArray3DCreate_v2 real = GP_REAL(cuArray3DCreate_v2);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off() || !pAllocateArray) {
        return real(pHandle, pAllocateArray);
    }
    int dev;
    gp_charge c;
    CUresult rc = gp_shim_current_device(&dev);
    if (rc != CUDA_SUCCESS ||
        (rc = admit(dev, array3d_bytes(pAllocateArray), &c)) != CUDA_SUCCESS) {
        return rc;
    }
    rc = real(pHandle, pAllocateArray);
    return settle(&c, rc, GP_KEY_ARRAY, rc == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*pHandle : 0);
}

static CUresult call_array_destroy(uint64_t key, void *arg)
{
    return ((gp_fn_cuArrayDestroy)(uintptr_t)arg)((CUarray)(uintptr_t)key);
}

CUresult cuArrayDestroy(CUarray hArray)
{
    gp_fn_cuArrayDestroy real = GP_REAL(cuArrayDestroy);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(hArray);
    }
    return free_tracked(GP_KEY_ARRAY, (uint64_t)(uintptr_t)hArray, call_array_destroy,
                        (void *)(uintptr_t)real);
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                unsigned int numMipmapLevels)
{
    gp_fn_cuMipmappedArrayCreate real = GP_REAL(cuMipmappedArrayCreate);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off() || !pMipmappedArrayDesc) {
        return real(pHandle, pMipmappedArrayDesc, numMipmapLevels);
    }
    int dev;
    gp_charge c;
    CUresult rc = gp_shim_current_device(&dev);
    if (rc != CUDA_SUCCESS ||
        (rc = admit(dev, mipmap_bytes(pMipmappedArrayDesc, numMipmapLevels), &c)) != CUDA_SUCCESS) {
        return rc;
    }
    rc = real(pHandle, pMipmappedArrayDesc, numMipmapLevels);
    return settle(&c, rc, GP_KEY_MIPMAP, rc == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*pHandle : 0);
}

static CUresult call_mipmap_destroy(uint64_t key, void *arg)
{
    return ((gp_fn_cuMipmappedArrayDestroy)(uintptr_t)arg)((CUmipmappedArray)(uintptr_t)key);
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
    gp_fn_cuMipmappedArrayDestroy real = GP_REAL(cuMipmappedArrayDestroy);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (off()) {
        return real(hMipmappedArray);
    }
    return free_tracked(GP_KEY_MIPMAP, (uint64_t)(uintptr_t)hMipmappedArray, call_mipmap_destroy,
                        (void *)(uintptr_t)real);
}

/* ---- legacy 32-bit entry points ---- */

/* Pre-CUDA-3.2 programs only; nothing current calls them. While a limit applies they are
 * refused rather than counted (fail closed). */
static int legacy_allowed(void)
{
    int m = gp_shim_mode();
    if (m == GP_MODE_OFF) {
        return 1;
    }
    if (m == GP_MODE_FAILED) {
        gp_shim_report_failure();
        if (!gp_shim_fail_closed()) {
            return 1;
        }
    }
    gp_shim_log_once(GP_EV_LEGACY, "event=legacy_refused");
    return 0;
}

CUresult cuMemAlloc(unsigned int *dptr, unsigned int bytesize)
{
    gp_fn_cuMemAlloc real = GP_REAL(cuMemAlloc);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    return legacy_allowed() ? real(dptr, bytesize) : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemAllocPitch(unsigned int *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
                         unsigned int Height, unsigned int ElementSizeBytes)
{
    gp_fn_cuMemAllocPitch real = GP_REAL(cuMemAllocPitch);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    return legacy_allowed() ? real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes)
                            : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuArrayCreate(CUarray *pHandle, const void *pAllocateArray)
{
    gp_fn_cuArrayCreate real = GP_REAL(cuArrayCreate);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    return legacy_allowed() ? real(pHandle, pAllocateArray) : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuArray3DCreate(CUarray *pHandle, const void *pAllocateArray)
{
    gp_fn_cuArray3DCreate real = GP_REAL(cuArray3DCreate);
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    return legacy_allowed() ? real(pHandle, pAllocateArray) : CUDA_ERROR_NOT_SUPPORTED;
}
