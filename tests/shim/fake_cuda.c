/*
 * A fake CUDA driver (built as libcuda.so.1 in a test-only directory): CPU memory behind the
 * driver API that libgpushare.so hooks, so the library's real code paths run without a GPU.
 *
 * Two devices of 16 GiB each. Linear allocations are malloc'ed blocks (never touched, so they
 * cost address space, not memory) with a header that records size and device; stream-ordered
 * calls complete at once; pools, VMM handles and mappings, arrays and contexts are small
 * objects. The fake keeps its own per-device usage (gp_fake_usage) so tests can check what the
 * "hardware" saw, and counts kernel launches (gp_fake_launches).
 *
 * Time on the GPU: with GP_FAKE_KERNEL_US set, every kernel or graph launch keeps its device
 * busy that long, queued after the work already there (one queue per device, as if every kernel
 * filled the GPU); a launch returns at once, unless more than QUEUE_MAX_NS of work is queued,
 * then it blocks like the driver's full launch queue. cuStreamSynchronize and cuCtxSynchronize
 * wait until the device is idle; cuStreamQuery says whether it is. gp_fake_busy_ns(dev, from, to)
 * says how long the device was busy in a span of CLOCK_MONOTONIC (the fake NVML computes
 * utilisation from it; the tests check the compute limit against it). cuGetProcAddress and
 * cuGetProcAddress_v2 hand out the fake's functions by name, version and flags as the real driver
 * does. Linked with -Bsymbolic, like the real driver: its internal references never reach an
 * interposed function.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim/cuda_types.h"

#define EXPORT __attribute__((visibility("default")))
#define NDEV   2
#define TOTAL  (16ULL << 30)
#define MAGIC  0x66616b65636f6f6cULL

typedef void (*voidfn)(void);

struct CUctx_st {
    int dev;
};
struct CUstream_st {
    CUcontext ctx;
};
struct CUmemPoolHandle_st {
    int dev; /* -1: host */
};
struct CUarray_st {
    uint64_t bytes;
    int dev;
};
struct CUmipmappedArray_st {
    uint64_t bytes;
    int dev;
};

typedef struct block {
    uint64_t magic, bytes;
    int dev, pad;
    uint64_t pad2;
} block;

typedef struct vmm {
    uint64_t magic, bytes;
    int dev, released, maps;
} vmm;

typedef struct mapping {
    CUdeviceptr ptr;
    size_t size;
    vmm *v;
} mapping;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t usage[NDEV];
static atomic_ulong launches;
static struct CUctx_st primary[NDEV] = {{0}, {1}};
static struct CUmemPoolHandle_st default_pool[NDEV] = {{0}, {1}};
static _Thread_local CUcontext current;
static _Thread_local CUcontext ctx_stack[16];
static _Thread_local int ctx_depth;
static mapping maps[1024];
static CUdeviceptr next_va = 0x200000000000ULL;

EXPORT uint64_t gp_fake_usage(int dev);
EXPORT unsigned long gp_fake_launches(void);
EXPORT uint64_t gp_fake_now_ns(void);
EXPORT uint64_t gp_fake_busy_ns(int dev, uint64_t from, uint64_t to);

/* ---- time on the GPU ---- */

#define QUEUE_MAX_NS (100ull * 1000 * 1000)
#define SPANS        4096

typedef struct span {
    uint64_t start, end;
} span;

/* Busy spans of one device, oldest first in a ring, adjacent ones merged. */
typedef struct timeline {
    uint64_t busy_until;
    span spans[SPANS];
    unsigned int next, count;
} timeline;

static pthread_mutex_t gpu_mu = PTHREAD_MUTEX_INITIALIZER;
static timeline timelines[NDEV];

/* A process that forks while another of its threads runs a kernel must not give the child a
 * locked GPU (the child's launches would wait forever): the lock is taken across fork. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&gpu_mu);
}

static void fork_done(void)
{
    pthread_mutex_unlock(&gpu_mu);
}

__attribute__((constructor)) static void fork_safe(void)
{
    pthread_atfork(fork_prepare, fork_done, fork_done);
}
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;
static uint64_t kernel_ns;
static _Thread_local CUstreamCaptureMode capture_mode;

EXPORT uint64_t gp_fake_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void read_kernel_ns(void)
{
    const char *v = getenv("GP_FAKE_KERNEL_US");
    kernel_ns = v ? strtoull(v, NULL, 10) * 1000 : 0;
}

/* A kernel on dev: queued after the device's work; blocks while the queue is full. */
static void run_kernel(int dev)
{
    pthread_once(&kernel_once, read_kernel_ns);
    if (kernel_ns == 0 || dev < 0 || dev >= NDEV) {
        return;
    }
    timeline *t = &timelines[dev];
    pthread_mutex_lock(&gpu_mu);
    uint64_t now = gp_fake_now_ns();
    while (t->busy_until > now + QUEUE_MAX_NS) {
        uint64_t wait = t->busy_until - now - QUEUE_MAX_NS;
        pthread_mutex_unlock(&gpu_mu);
        sleep_ns(wait);
        pthread_mutex_lock(&gpu_mu);
        now = gp_fake_now_ns();
    }
    uint64_t start = t->busy_until > now ? t->busy_until : now;
    span *last = t->count ? &t->spans[(t->next + SPANS - 1) % SPANS] : NULL;
    if (last && last->end >= start) {
        last->end = start + kernel_ns;
    } else {
        t->spans[t->next] = (span){start, start + kernel_ns};
        t->next = (t->next + 1) % SPANS;
        t->count += t->count < SPANS;
    }
    t->busy_until = start + kernel_ns;
    pthread_mutex_unlock(&gpu_mu);
}

static void wait_idle(int dev)
{
    if (dev < 0 || dev >= NDEV) {
        return;
    }
    pthread_mutex_lock(&gpu_mu);
    uint64_t until = timelines[dev].busy_until;
    pthread_mutex_unlock(&gpu_mu);
    uint64_t now = gp_fake_now_ns();
    if (until > now) {
        sleep_ns(until - now);
    }
}

EXPORT uint64_t gp_fake_busy_ns(int dev, uint64_t from, uint64_t to)
{
    if (dev < 0 || dev >= NDEV || to <= from) {
        return 0;
    }
    uint64_t busy = 0;
    pthread_mutex_lock(&gpu_mu);
    const timeline *t = &timelines[dev];
    for (unsigned int i = 0; i < t->count; i++) {
        const span *sp = &t->spans[(t->next + SPANS - t->count + i) % SPANS];
        uint64_t a = sp->start > from ? sp->start : from, b = sp->end < to ? sp->end : to;
        busy += b > a ? b - a : 0;
    }
    pthread_mutex_unlock(&gpu_mu);
    return busy;
}

EXPORT uint64_t gp_fake_usage(int dev)
{
    pthread_mutex_lock(&mu);
    uint64_t u = dev >= 0 && dev < NDEV ? usage[dev] : 0;
    pthread_mutex_unlock(&mu);
    return u;
}

EXPORT unsigned long gp_fake_launches(void)
{
    return atomic_load(&launches);
}

static CUresult charge(int dev, uint64_t bytes)
{
    if (dev < 0) {
        return CUDA_SUCCESS; /* host memory */
    }
    if (dev >= NDEV) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&mu);
    if (bytes > TOTAL - usage[dev]) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        usage[dev] += bytes;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

static void uncharge(int dev, uint64_t bytes)
{
    if (dev < 0 || dev >= NDEV) {
        return;
    }
    pthread_mutex_lock(&mu);
    usage[dev] -= bytes;
    pthread_mutex_unlock(&mu);
}

static CUresult cur_dev(int *dev)
{
    if (!current) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    *dev = current->dev;
    return CUDA_SUCCESS;
}

static CUresult alloc_block(int dev, uint64_t bytes, CUdeviceptr *out)
{
    if (!out || bytes == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUresult rc = charge(dev, bytes);
    if (rc != CUDA_SUCCESS) {
        return rc;
    }
    block *b = bytes > SIZE_MAX - sizeof(block) ? NULL : malloc(sizeof(block) + bytes);
    if (!b) {
        uncharge(dev, bytes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    b->magic = MAGIC;
    b->bytes = bytes;
    b->dev = dev;
    *out = (CUdeviceptr)(uintptr_t)(b + 1);
    return CUDA_SUCCESS;
}

static CUresult free_block(CUdeviceptr p)
{
    if (!p) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    block *b = (block *)(uintptr_t)p - 1;
    if (b->magic != MAGIC) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    b->magic = 0;
    uncharge(b->dev, b->bytes);
    free(b);
    return CUDA_SUCCESS;
}

/* ---- initialisation, devices, contexts, streams ---- */

EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 12040;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal < 0 || ordinal >= NDEV) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *d = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    *n = NDEV;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    if (dev < 0 || dev >= NDEV || len <= 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    snprintf(name, (size_t)len, "Fake GPU %d", dev);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    if (dev < 0 || dev >= NDEV) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *bytes = TOTAL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    (void)flags;
    if (dev < 0 || dev >= NDEV) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    CUcontext c = malloc(sizeof(*c));
    if (!c) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    c->dev = dev;
    current = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    if (current == ctx) {
        current = NULL;
    }
    if (ctx < &primary[0] || ctx > &primary[NDEV - 1]) {
        free(ctx);
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    current = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    *pctx = current;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    int d;
    CUresult rc = cur_dev(&d);
    if (rc == CUDA_SUCCESS) {
        *device = d;
    }
    return rc;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    if (ctx_depth >= 16) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    ctx_stack[ctx_depth++] = current;
    current = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    if (ctx_depth == 0) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (pctx) {
        *pctx = current;
    }
    current = ctx_stack[--ctx_depth];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    if (dev < 0 || dev >= NDEV) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *pctx = &primary[dev];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    return dev < 0 || dev >= NDEV ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void)flags;
    if (!current) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    CUstream st = malloc(sizeof(*st));
    if (!st) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    st->ctx = current;
    *s = st;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    free(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx)
{
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
        *pctx = current;
        return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    }
    *pctx = s->ctx;
    return CUDA_SUCCESS;
}

static CUresult stream_dev(CUstream s, int *dev)
{
    CUcontext c;
    CUresult rc = cuStreamGetCtx(s, &c);
    if (rc == CUDA_SUCCESS) {
        *dev = c->dev;
    }
    return rc;
}

/* ---- linear memory ---- */

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    int dev;
    CUresult rc = cur_dev(&dev);
    return rc != CUDA_SUCCESS ? rc : alloc_block(dev, bytesize, dptr);
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                   size_t Height, unsigned int ElementSizeBytes)
{
    (void)ElementSizeBytes;
    int dev;
    CUresult rc = cur_dev(&dev);
    if (rc != CUDA_SUCCESS) {
        return rc;
    }
    if (WidthInBytes == 0 || Height == 0 || WidthInBytes > (1ULL << 40) || Height > (1ULL << 40)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    size_t pitch = (WidthInBytes + 511) / 512 * 512;
    rc = alloc_block(dev, (uint64_t)pitch * Height, dptr);
    if (rc == CUDA_SUCCESS) {
        *pPitch = pitch;
    }
    return rc;
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    (void)flags;
    return cuMemAlloc_v2(dptr, bytesize);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    return free_block(dptr);
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    int dev;
    CUresult rc = cur_dev(&dev);
    if (rc != CUDA_SUCCESS) {
        return rc;
    }
    *total_bytes = TOTAL;
    *free_bytes = TOTAL - gp_fake_usage(dev);
    return CUDA_SUCCESS;
}

/* ---- stream-ordered allocation, pools ---- */

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    int dev;
    CUresult rc = stream_dev(hStream, &dev);
    return rc != CUDA_SUCCESS ? rc : alloc_block(dev, bytesize, dptr);
}

EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return cuMemAllocAsync(dptr, bytesize, hStream);
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                        CUstream hStream)
{
    (void)hStream;
    if (!pool) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return alloc_block(pool->dev, bytesize, dptr);
}

EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                             CUstream hStream)
{
    return cuMemAllocFromPoolAsync(dptr, bytesize, pool, hStream);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    (void)hStream;
    return free_block(dptr);
}

EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    return cuMemFreeAsync(dptr, hStream);
}

EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    if (!pool || !props) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    int dev = props->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? props->location.id : -1;
    if (dev >= NDEV) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    CUmemoryPool p = malloc(sizeof(*p));
    if (!p) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    p->dev = dev;
    *pool = p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    if (pool < &default_pool[0] || pool > &default_pool[NDEV - 1]) {
        free(pool);
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    (void)pool;
    (void)minBytesToKeep;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    if (dev < 0 || dev >= NDEV) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *pool_out = &default_pool[dev];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    return cuDeviceGetDefaultMemPool(pool, dev);
}

/* ---- virtual memory management ---- */

static void vmm_put(vmm *v)
{
    if (v->released && v->maps == 0) {
        uncharge(v->dev, v->bytes);
        v->magic = 0;
        free(v);
    }
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags)
{
    (void)flags;
    if (!handle || !prop || size == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    int dev = prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
    CUresult rc = charge(dev, size);
    if (rc != CUDA_SUCCESS) {
        return rc;
    }
    vmm *v = calloc(1, sizeof(*v));
    if (!v) {
        uncharge(dev, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    v->magic = MAGIC;
    v->bytes = size;
    v->dev = dev;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)v;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    vmm *v = (vmm *)(uintptr_t)handle;
    if (!v || v->magic != MAGIC || v->released) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&mu);
    v->released = 1;
    pthread_mutex_unlock(&mu);
    vmm_put(v);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                    CUdeviceptr addr, unsigned long long flags)
{
    (void)alignment;
    (void)addr;
    (void)flags;
    pthread_mutex_lock(&mu);
    *ptr = next_va;
    next_va += (size + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    (void)ptr;
    (void)size;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    (void)offset;
    (void)flags;
    vmm *v = (vmm *)(uintptr_t)handle;
    if (!v || v->magic != MAGIC || v->released) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
        if (!maps[i].v) {
            maps[i] = (mapping){ptr, size, v};
            v->maps++;
            rc = CUDA_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    vmm *done[64];
    int ndone = 0;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
        if (maps[i].v && maps[i].ptr >= ptr && maps[i].ptr < ptr + size) {
            maps[i].v->maps--;
            if (ndone < 64) {
                done[ndone++] = maps[i].v;
            }
            maps[i].v = NULL;
        }
    }
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < ndone; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++) {
            dup |= done[j] == done[i];
        }
        if (!dup) {
            vmm_put(done[i]);
        }
    }
    return ndone ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- arrays ---- */

static uint64_t fake_elem(CUarray_format f, unsigned int ch)
{
    uint64_t c = ch ? ch : 1;
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return c;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2 * c;
    default:
        return 4 * c;
    }
}

static uint64_t one(uint64_t v)
{
    return v ? v : 1;
}

static CUresult new_array(uint64_t bytes, CUarray *out)
{
    int dev;
    CUresult rc = cur_dev(&dev);
    if (rc != CUDA_SUCCESS || (rc = charge(dev, bytes)) != CUDA_SUCCESS) {
        return rc;
    }
    CUarray a = malloc(sizeof(*a));
    if (!a) {
        uncharge(dev, bytes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->bytes = bytes;
    a->dev = dev;
    *out = a;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    if (!pHandle || !d || d->Width == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return new_array(d->Width * one(d->Height) * fake_elem(d->Format, d->NumChannels), pHandle);
}

EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!pHandle || !d || d->Width == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    /* Sparse and deferred-mapping arrays are backed later, by cuMemCreate allocations. */
    int backed_later = (d->Flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)) != 0;
    return new_array(backed_later ? 0
                                  : d->Width * one(d->Height) * one(d->Depth) *
                                        fake_elem(d->Format, d->NumChannels),
                     pHandle);
}

EXPORT CUresult cuArrayDestroy(CUarray a)
{
    if (!a) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    uncharge(a->dev, a->bytes);
    free(a);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                       unsigned int levels)
{
    if (!pHandle || !d || d->Width == 0 || levels == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    uint64_t bytes = 0;
    for (unsigned int l = 0; l < levels && l < 63; l++) {
        uint64_t h = d->Height ? one(d->Height >> l) : 1;
        uint64_t z = d->Depth ? one(d->Depth >> l) : 1;
        bytes += one(d->Width >> l) * h * z * fake_elem(d->Format, d->NumChannels);
    }
    int dev;
    CUresult rc = cur_dev(&dev);
    if (rc != CUDA_SUCCESS || (rc = charge(dev, bytes)) != CUDA_SUCCESS) {
        return rc;
    }
    CUmipmappedArray m = malloc(sizeof(*m));
    if (!m) {
        uncharge(dev, bytes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->bytes = bytes;
    m->dev = dev;
    *pHandle = m;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray m)
{
    if (!m) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    uncharge(m->dev, m->bytes);
    free(m);
    return CUDA_SUCCESS;
}

/* ---- legacy 32-bit entry points (succeed without memory: only refusal is tested) ---- */

EXPORT CUresult cuMemAlloc(unsigned int *dptr, unsigned int bytesize)
{
    if (!dptr || bytesize == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *dptr = 0x1000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocPitch(unsigned int *dptr, unsigned int *pPitch, unsigned int w,
                                unsigned int h, unsigned int e)
{
    (void)h;
    (void)e;
    *pPitch = w;
    *dptr = 0x1000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuArrayCreate(CUarray *pHandle, const void *d)
{
    (void)d;
    *pHandle = NULL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuArray3DCreate(CUarray *pHandle, const void *d)
{
    (void)d;
    *pHandle = NULL;
    return CUDA_SUCCESS;
}

/* ---- launches ---- */

static void launched(CUstream s)
{
    int dev;
    atomic_fetch_add(&launches, 1);
    if (stream_dev(s, &dev) == CUDA_SUCCESS) {
        run_kernel(dev);
    }
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz, unsigned int shm,
                               CUstream s, void **params, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shm;
    (void)params, (void)extra;
    launched(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                    unsigned int bx, unsigned int by, unsigned int bz,
                                    unsigned int shm, CUstream s, void **params, void **extra)
{
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, s, params, extra);
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params,
                                 void **extra)
{
    (void)f, (void)params, (void)extra;
    if (!config) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    launched(config->hStream);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params,
                                      void **extra)
{
    return cuLaunchKernelEx(config, f, params, extra);
}

EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                          unsigned int gz, unsigned int bx, unsigned int by,
                                          unsigned int bz, unsigned int shm, CUstream s,
                                          void **params)
{
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, s, params, NULL);
}

EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                               unsigned int gz, unsigned int bx, unsigned int by,
                                               unsigned int bz, unsigned int shm, CUstream s,
                                               void **params)
{
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, s, params, NULL);
}

EXPORT CUresult cuGraphLaunch(CUgraphExec g, CUstream s)
{
    if (!g) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    launched(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s)
{
    return cuGraphLaunch(g, s);
}

/* ---- synchronisation, capture, identity ---- */

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    int dev;
    CUresult rc = stream_dev(s, &dev);
    if (rc == CUDA_SUCCESS) {
        wait_idle(dev);
    }
    return rc;
}

EXPORT CUresult cuStreamQuery(CUstream s)
{
    int dev;
    CUresult rc = stream_dev(s, &dev);
    if (rc != CUDA_SUCCESS || dev < 0 || dev >= NDEV) {
        return rc;
    }
    pthread_mutex_lock(&gpu_mu);
    int busy = timelines[dev].busy_until > gp_fake_now_ns();
    pthread_mutex_unlock(&gpu_mu);
    return busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    int dev;
    CUresult rc = cur_dev(&dev);
    if (rc == CUDA_SUCCESS) {
        wait_idle(dev);
    }
    return rc;
}

/* No stream of the fake is ever captured. */
EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status)
{
    (void)s;
    if (!status) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    if (!mode) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUstreamCaptureMode old = capture_mode;
    capture_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* The UUID the fake NVML reports: GPU-00000000-0000-4000-8000-00000000000<dev>. */
EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    if (!uuid || dev < 0 || dev >= NDEV) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    memset(uuid, 0, sizeof(*uuid));
    uuid->bytes[6] = 0x40;
    uuid->bytes[8] = (char)0x80;
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid_v2(uuid, dev);
}

/* ---- cuGetProcAddress ---- */

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags, CUdriverProcAddressQueryResult *status);

typedef struct proc {
    const char *name;
    int minver, ptds;
    voidfn fn;
} proc;

#define P(name, ver, fn)                                                                           \
    {                                                                                              \
        name, ver, 0, (voidfn)fn                                                                   \
    }
#define PTDS(name, ver, fn)                                                                        \
    {                                                                                              \
        name, ver, 1, (voidfn)fn                                                                   \
    }
static const proc procs[] = {
    P("cuInit", 2000, cuInit),
    P("cuDriverGetVersion", 2020, cuDriverGetVersion),
    P("cuDeviceGet", 2000, cuDeviceGet),
    P("cuDeviceGetCount", 2000, cuDeviceGetCount),
    P("cuDeviceGetName", 2000, cuDeviceGetName),
    P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    P("cuCtxCreate", 3020, cuCtxCreate_v2),
    P("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    P("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    P("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    P("cuCtxGetDevice", 2000, cuCtxGetDevice),
    P("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    P("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    P("cuStreamCreate", 2000, cuStreamCreate),
    P("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    P("cuStreamGetCtx", 9020, cuStreamGetCtx),
    P("cuMemAlloc", 2000, cuMemAlloc),
    P("cuMemAlloc", 3020, cuMemAlloc_v2),
    P("cuMemAllocPitch", 2000, cuMemAllocPitch),
    P("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
    P("cuMemAllocManaged", 6000, cuMemAllocManaged),
    P("cuMemFree", 3020, cuMemFree_v2),
    P("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    P("cuMemAllocAsync", 11020, cuMemAllocAsync),
    PTDS("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
    P("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
    PTDS("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync_ptsz),
    P("cuMemFreeAsync", 11020, cuMemFreeAsync),
    PTDS("cuMemFreeAsync", 11020, cuMemFreeAsync_ptsz),
    P("cuMemPoolCreate", 11020, cuMemPoolCreate),
    P("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
    P("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo),
    P("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
    P("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool),
    P("cuMemCreate", 10020, cuMemCreate),
    P("cuMemRelease", 10020, cuMemRelease),
    P("cuMemAddressReserve", 10020, cuMemAddressReserve),
    P("cuMemAddressFree", 10020, cuMemAddressFree),
    P("cuMemMap", 10020, cuMemMap),
    P("cuMemUnmap", 10020, cuMemUnmap),
    P("cuArrayCreate", 2000, cuArrayCreate),
    P("cuArrayCreate", 3020, cuArrayCreate_v2),
    P("cuArray3DCreate", 2000, cuArray3DCreate),
    P("cuArray3DCreate", 3020, cuArray3DCreate_v2),
    P("cuArrayDestroy", 2000, cuArrayDestroy),
    P("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate),
    P("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy),
    P("cuLaunchKernel", 4000, cuLaunchKernel),
    PTDS("cuLaunchKernel", 7000, cuLaunchKernel_ptsz),
    P("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    PTDS("cuLaunchKernelEx", 11060, cuLaunchKernelEx_ptsz),
    P("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel),
    PTDS("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel_ptsz),
    P("cuGraphLaunch", 10000, cuGraphLaunch),
    PTDS("cuGraphLaunch", 10000, cuGraphLaunch_ptsz),
    P("cuStreamSynchronize", 2000, cuStreamSynchronize),
    P("cuStreamQuery", 2000, cuStreamQuery),
    P("cuCtxSynchronize", 2000, cuCtxSynchronize),
    P("cuStreamIsCapturing", 10000, cuStreamIsCapturing),
    P("cuThreadExchangeStreamCaptureMode", 10010, cuThreadExchangeStreamCaptureMode),
    P("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    P("cuGetProcAddress", 11030, cuGetProcAddress),
    P("cuGetProcAddress", 12000, cuGetProcAddress_v2),
};

/* Like the driver: the highest version not above cudaVersion, the per-thread variant when asked
 * for and one exists. */
static CUresult lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    int ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const proc *best = NULL;
    int known = 0;
    for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
        const proc *p = &procs[i];
        if (strcmp(p->name, symbol) != 0) {
            continue;
        }
        known = 1;
        if (p->minver > cudaVersion || (p->ptds && !ptds)) {
            continue;
        }
        if (!best || p->minver > best->minver || (p->ptds && !best->ptds)) {
            best = p;
        }
    }
    if (status) {
        *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
                  : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    if (!best) {
        *pfn = NULL;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = (void *)(uintptr_t)best->fn;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    if (!symbol || !pfn) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return lookup(symbol, pfn, cudaVersion, flags, NULL);
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return lookup(symbol, pfn, cudaVersion, flags, status);
}
