/*
 * Tests of libgpushare.so against the fake driver (see harness.h for how a test runs).
 *
 * `shim_test CASE` runs one case; the cases are registered with ctest one by one (label shim).
 * Each of HAMi-core's known escapes (../shared/REFERENCE.md section 4) that applies to this
 * library has a case here: stream-ordered and pool allocations, VMM, charging the right device,
 * free never wrapping, a 0666 region, the environment switching enforcement off, exit() in the
 * library (every failure path below ends with the process still running). So has each way
 * around the library a job tried: libc's own dlsym reached through dlvsym or a lookup
 * in libc's handle, dlmopen, RTLD_DEEPBIND, the limits rewritten, the usage zeroed, the region
 * broken (0666, a symbolic link, deleted, of the job's own user, every slot taken: all refuse),
 * and a process started with an empty environment.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "userns.h"
#include "shim/region.h"

#define MIB        (1ULL << 20)
#define L0         (8 * MIB)  /* device 0's limit */
#define L1         (16 * MIB) /* device 1's limit */
#define FAKE_TOTAL (16ULL << 30)

static gp_t_api api;

static void start(void)
{
    gp_t_load(&api, -1);
    gp_t_start(&api);
}

/* ---- allocation paths ---- */

enum path {
    P_ALLOC,
    P_PITCH,
    P_MANAGED,
    P_ASYNC,
    P_POOL,
    P_VMM,
    P_ARRAY,
    P_ARRAY3D,
    P_MIPMAP,
    P_COUNT
};
static const char *const path_names[P_COUNT] = {"alloc", "pitch", "managed", "async", "pool",
                                                "vmm",   "array", "array3d", "mipmap"};

typedef struct held {
    CUdeviceptr p, va;
    CUarray arr;
    CUmipmappedArray mip;
    size_t size;
} held;

static CUstream stream;
static CUmemoryPool pool;

static CUmemAllocationProp vmm_prop(int dev)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    return prop;
}

static CUresult path_alloc(int path, uint64_t bytes, held *h)
{
    memset(h, 0, sizeof(*h));
    h->size = bytes;
    size_t pitch;
    CUDA_ARRAY_DESCRIPTOR d2 = {bytes, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1};
    CUDA_ARRAY3D_DESCRIPTOR d3 = {bytes, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0};
    switch (path) {
    case P_ALLOC:
        return api.MemAlloc(&h->p, bytes);
    case P_PITCH:
        /* Rows of 8 KiB (a multiple of the fake's 512-byte pitch) when the size allows. */
        if (bytes % 8192 == 0) {
            return api.MemAllocPitch(&h->p, &pitch, 8192, bytes / 8192, 4);
        }
        return api.MemAllocPitch(&h->p, &pitch, bytes, 1, 1);
    case P_MANAGED:
        return api.MemAllocManaged(&h->p, bytes, 1);
    case P_ASYNC:
        return api.MemAllocAsync(&h->p, bytes, stream);
    case P_POOL:
        return api.MemAllocFromPoolAsync(&h->p, bytes, pool, stream);
    case P_VMM: {
        CUmemAllocationProp prop = vmm_prop(0);
        CUmemGenericAllocationHandle mh;
        CUresult rc = api.MemCreate(&mh, bytes, &prop, 0);
        if (rc != CUDA_SUCCESS) {
            return rc;
        }
        CHECK_EQ(api.MemAddressReserve(&h->va, bytes, 0, 0, 0), CUDA_SUCCESS);
        CHECK_EQ(api.MemMap(h->va, bytes, 0, mh, 0), CUDA_SUCCESS);
        /* Released while mapped, as PyTorch and llama.cpp do: the memory lives on. */
        CHECK_EQ(api.MemRelease(mh), CUDA_SUCCESS);
        return CUDA_SUCCESS;
    }
    case P_ARRAY:
        return api.ArrayCreate(&h->arr, &d2);
    case P_ARRAY3D:
        return api.Array3DCreate(&h->arr, &d3);
    case P_MIPMAP:
        return api.MipmappedArrayCreate(&h->mip, &d3, 1);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

static void path_free(int path, held *h)
{
    switch (path) {
    case P_ASYNC:
    case P_POOL:
        CHECK_EQ(api.MemFreeAsync(h->p, stream), CUDA_SUCCESS);
        break;
    case P_VMM:
        CHECK_EQ(api.MemUnmap(h->va, h->size), CUDA_SUCCESS);
        break;
    case P_ARRAY:
    case P_ARRAY3D:
        CHECK_EQ(api.ArrayDestroy(h->arr), CUDA_SUCCESS);
        break;
    case P_MIPMAP:
        CHECK_EQ(api.MipmappedArrayDestroy(h->mip), CUDA_SUCCESS);
        break;
    default:
        CHECK_EQ(api.MemFree(h->p), CUDA_SUCCESS);
    }
}

static void make_stream_and_pool(void)
{
    CUmemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CHECK_EQ(api.StreamCreate(&stream, 0), CUDA_SUCCESS);
    CHECK_EQ(api.MemPoolCreate(&pool, &props), CUDA_SUCCESS);
}

/* limit + 1 fails, exactly the limit succeeds, nothing more fits, the free gives it back. */
static void check_path(int path)
{
    held h, h2;
    fprintf(stderr, "path %s\n", path_names[path]);
    CHECK_EQ(path_alloc(path, L0 + 1, &h), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.FakeUsage(0), 0);
    CHECK_EQ(path_alloc(path, L0, &h), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), 0);
    CHECK_EQ(path_alloc(path, 1, &h2), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.MemAlloc(&h2.p, 1), CUDA_ERROR_OUT_OF_MEMORY);
    path_free(path, &h);
    CHECK_EQ(gp_t_free(&api, NULL), L0);
    CHECK_EQ(api.FakeUsage(0), 0);
    CHECK_EQ(path_alloc(path, L0, &h), CUDA_SUCCESS);
    path_free(path, &h);
    CHECK_EQ(gp_t_free(&api, NULL), L0);
}

static void body_paths(void)
{
    start();
    make_stream_and_pool();
    uint64_t total;
    CHECK_EQ(gp_t_free(&api, &total), L0);
    CHECK_EQ(total, L0);
    for (int p = 0; p < P_COUNT; p++) {
        check_path(p);
    }
}

/* Mipmapped arrays are charged the sum of their levels. */
static void body_mipmap_levels(void)
{
    start();
    CUDA_ARRAY3D_DESCRIPTOR d = {1024, 1024, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0};
    CUmipmappedArray m;
    CHECK_EQ(api.MipmappedArrayCreate(&m, &d, 11), CUDA_SUCCESS);
    uint64_t levels = 0;
    for (int l = 0; l < 11; l++) {
        levels += (1024ULL >> l) * (1024ULL >> l);
    }
    CHECK_EQ(gp_t_free(&api, NULL), L0 - levels);
    CHECK_EQ(api.MipmappedArrayDestroy(m), CUDA_SUCCESS);
    /* 3-D, 4 channels of float: 64 x 64 x 64 x 16 bytes = 4 MiB at level 0. */
    CUDA_ARRAY3D_DESCRIPTOR big = {64, 64, 64, CU_AD_FORMAT_FLOAT, 4, 0};
    CHECK_EQ(api.MipmappedArrayCreate(&m, &big, 1), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), L0 - 4 * MIB);
    CUmipmappedArray m2;
    CHECK_EQ(api.MipmappedArrayCreate(&m2, &big, 2), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.MipmappedArrayDestroy(m), CUDA_SUCCESS);
    /* Sparse arrays get their memory from cuMemCreate: not charged at creation. */
    CUDA_ARRAY3D_DESCRIPTOR sparse = {1 << 20, 1024, 0, CU_AD_FORMAT_FLOAT, 4, CUDA_ARRAY3D_SPARSE};
    CUarray a;
    CHECK_EQ(gp_t_free(&api, NULL), L0);
    CHECK_EQ(api.Array3DCreate(&a, &sparse), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), L0);
    CHECK_EQ(api.ArrayDestroy(a), CUDA_SUCCESS);
}

/* Allocations are charged to the device they land on (HAMi-core charged the current one). */
static void body_devices(void)
{
    start();
    CUstream s1;
    CUcontext ctx1 = gp_t_context(&api, 1);
    CHECK_EQ(api.StreamCreate(&s1, 0), CUDA_SUCCESS);
    CUcontext ctx0 = gp_t_context(&api, 0);
    /* Current: device 0 (limit L0); the stream's device 1 (limit L1). */
    CUdeviceptr p, q, r;
    CHECK_EQ(api.MemAllocAsync(&p, L0 + 1, s1), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), L0);
    CUmemoryPool pool1, def1;
    CUmemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 1;
    CHECK_EQ(api.MemPoolCreate(&pool1, &props), CUDA_SUCCESS);
    CHECK_EQ(api.MemAllocFromPoolAsync(&q, MIB, pool1, NULL), CUDA_SUCCESS);
    CHECK_EQ(api.DeviceGetDefaultMemPool(&def1, 1), CUDA_SUCCESS);
    CHECK_EQ(api.MemAllocFromPoolAsync(&r, MIB, def1, NULL), CUDA_SUCCESS);
    CUmemAllocationProp prop = vmm_prop(1);
    CUmemGenericAllocationHandle h;
    CHECK_EQ(api.MemCreate(&h, MIB, &prop, 0), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), L0);
    CHECK_EQ(api.CtxSetCurrent(ctx1), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), L1 - (L0 + 1) - 3 * MIB);
    /* Device 1 is nearly full now, device 0 untouched. */
    CUdeviceptr no;
    CHECK_EQ(api.MemAllocAsync(&no, L1, s1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.CtxSetCurrent(ctx0), CUDA_SUCCESS);
    CUdeviceptr x, y;
    CHECK_EQ(api.MemAlloc(&x, L0), CUDA_SUCCESS);
    /* A host pool is not device memory. */
    CUmemoryPool host;
    props.location.type = CU_MEM_LOCATION_TYPE_HOST;
    props.location.id = 0;
    CHECK_EQ(api.MemPoolCreate(&host, &props), CUDA_SUCCESS);
    CHECK_EQ(api.MemAllocFromPoolAsync(&y, L1, host, NULL), CUDA_SUCCESS);
    CHECK_EQ(api.MemFreeAsync(y, NULL), CUDA_SUCCESS);
    CHECK_EQ(api.MemFree(x), CUDA_SUCCESS);
    CHECK_EQ(api.MemFreeAsync(p, s1), CUDA_SUCCESS);
    CHECK_EQ(api.MemFreeAsync(q, s1), CUDA_SUCCESS);
    CHECK_EQ(api.MemFreeAsync(r, s1), CUDA_SUCCESS);
    CHECK_EQ(api.MemRelease(h), CUDA_SUCCESS);
    CHECK_EQ(api.CtxSetCurrent(ctx1), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), L1);
    CHECK_EQ(api.StreamDestroy(s1), CUDA_SUCCESS);
    CHECK_EQ(api.MemPoolDestroy(pool1), CUDA_SUCCESS);
    CHECK_EQ(api.MemPoolDestroy(host), CUDA_SUCCESS);
}

static void check_nvml(int index, uint64_t total, uint64_t free_bytes)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    CHECK(h != NULL);
    nvmlReturn_t (*init)(void) = (nvmlReturn_t(*)(void))(uintptr_t)dlsym(h, "nvmlInit_v2");
    nvmlReturn_t (*get)(unsigned int, nvmlDevice_t *) = (nvmlReturn_t(*)(
        unsigned int, nvmlDevice_t *))(uintptr_t)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    nvmlReturn_t (*info)(nvmlDevice_t, nvmlMemory_t *) =
        (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_t *))(uintptr_t)dlsym(h,
                                                                        "nvmlDeviceGetMemoryInfo");
    nvmlReturn_t (*info2)(nvmlDevice_t, nvmlMemory_v2_t *) = (nvmlReturn_t(*)(
        nvmlDevice_t, nvmlMemory_v2_t *))(uintptr_t)dlsym(h, "nvmlDeviceGetMemoryInfo_v2");
    CHECK(init && get && info && info2);
    CHECK(strstr(gp_t_object_of((void *)(uintptr_t)info), "libgpushare") != NULL);
    nvmlDevice_t d;
    CHECK_EQ(init(), NVML_SUCCESS);
    CHECK_EQ(get((unsigned int)index, &d), NVML_SUCCESS);
    nvmlMemory_t m;
    CHECK_EQ(info(d, &m), NVML_SUCCESS);
    CHECK_EQ(m.total, total);
    CHECK_EQ(m.free, free_bytes);
    CHECK_EQ(m.used, total - free_bytes);
    nvmlMemory_v2_t m2;
    memset(&m2, 0, sizeof(m2));
    m2.version = nvmlMemory_v2;
    CHECK_EQ(info2(d, &m2), NVML_SUCCESS);
    CHECK_EQ(m2.total, total);
    CHECK_EQ(m2.free, free_bytes);
    CHECK_EQ(m2.used + m2.reserved, total - free_bytes);
}

static void body_meminfo(void)
{
    start();
    uint64_t total;
    CHECK_EQ(gp_t_free(&api, &total), L0);
    CHECK_EQ(total, L0);
    size_t t = 0;
    CHECK_EQ(api.DeviceTotalMem(&t, 0), CUDA_SUCCESS);
    CHECK_EQ(t, L0);
    CHECK_EQ(api.DeviceTotalMem(&t, 1), CUDA_SUCCESS);
    CHECK_EQ(t, L1);
    CUdeviceptr p;
    CHECK_EQ(api.MemAlloc(&p, L0 / 2), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), L0 / 2);
    check_nvml(0, L0, L0 / 2);
    check_nvml(1, L1, L1);
}

/* NVML devices are matched to CUDA's by CUDA_VISIBLE_DEVICES (uuid): NVML device 1 is the job's
 * device 0; NVML device 0 is not the job's and keeps its real values. */
static void body_nvml_visible(void)
{
    start();
    check_nvml(1, L0, L0);
    check_nvml(0, FAKE_TOTAL, FAKE_TOTAL - (1ULL << 30));
}

/* Usage above the limit (here charged from outside) shows nothing free, never a wrapped value. */
static void body_over_limit(void)
{
    start();
    uint64_t total;
    CHECK_EQ(gp_t_free(&api, &total), 0);
    CHECK_EQ(total, L0);
    CUdeviceptr p;
    CHECK_EQ(api.MemAlloc(&p, 1), CUDA_ERROR_OUT_OF_MEMORY);
    check_nvml(0, L0, 0);
}

/* Exactly the limit of device 0, and not a byte more. */
static void body_over_limit_free(void)
{
    start();
    CUdeviceptr p, q;
    CHECK_EQ(api.MemAlloc(&p, L0 + 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.MemAlloc(&p, L0), CUDA_SUCCESS);
    CHECK_EQ(api.MemAlloc(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.MemFree(p), CUDA_SUCCESS);
}

/* ---- several processes ---- */

static void pipe_write(int fd, char c)
{
    CHECK_EQ(write(fd, &c, 1), 1);
}

static char pipe_read(int fd)
{
    char c = 0;
    CHECK_EQ(read(fd, &c, 1), 1);
    return c;
}

static int wait_status(pid_t pid)
{
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A forked process: its own context and slot; holds `bytes` until told, then exits normally. */
static pid_t holder(uint64_t bytes, int *ready, int *go)
{
    int up[2], down[2];
    CHECK(pipe(up) == 0 && pipe(down) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        gp_t_in_fork();
        close(up[0]);
        close(down[1]);
        CUdeviceptr p;
        gp_t_context(&api, 0);
        CHECK_EQ(api.MemAlloc(&p, bytes), CUDA_SUCCESS);
        pipe_write(up[1], 'A');
        pipe_read(down[0]);
        CHECK_EQ(api.MemFree(p), CUDA_SUCCESS);
        exit(0); /* runs the library's destructor: the slot is freed */
    }
    close(up[1]);
    close(down[0]);
    *ready = up[0];
    *go = down[1];
    return pid;
}

static void body_multiprocess(void)
{
    start();
    CUdeviceptr p0, p1, p2, x;
    CHECK_EQ(api.MemAlloc(&p0, L0 / 8), CUDA_SUCCESS);
    int ready, go;
    pid_t a = holder(L0 * 3 / 4, &ready, &go);
    CHECK_EQ(pipe_read(ready), 'A');
    /* The other process holds 3/4: this one cannot take half. */
    CHECK_EQ(api.MemAlloc(&x, L0 / 2), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.MemAlloc(&p1, L0 / 8), CUDA_SUCCESS);
    CHECK_EQ(gp_t_free(&api, NULL), 0);
    pipe_write(go, 'G');
    CHECK_EQ(wait_status(a), 0);
    /* Its memory is back, and its exit did not touch this process's slot. */
    CHECK_EQ(gp_t_free(&api, NULL), L0 * 3 / 4);
    CHECK_EQ(api.MemAlloc(&p2, L0 * 3 / 4), CUDA_SUCCESS);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        gp_t_in_fork();
        gp_t_context(&api, 0);
        _exit(api.MemAlloc(&x, 1) == CUDA_ERROR_OUT_OF_MEMORY ? 0 : 1);
    }
    CHECK_EQ(wait_status(c), 0);
    CHECK_EQ(api.MemFree(p0), CUDA_SUCCESS);
    CHECK_EQ(api.MemFree(p1), CUDA_SUCCESS);
    CHECK_EQ(api.MemFree(p2), CUDA_SUCCESS);
    /* Four processes at once, a quarter each: together exactly the limit. */
    int r[4], g[4];
    pid_t k[4];
    for (int i = 0; i < 4; i++) {
        k[i] = holder(L0 / 4, &r[i], &g[i]);
        CHECK_EQ(pipe_read(r[i]), 'A');
    }
    CHECK_EQ(api.MemAlloc(&x, 1), CUDA_ERROR_OUT_OF_MEMORY);
    for (int i = 0; i < 4; i++) {
        pipe_write(g[i], 'G');
        CHECK_EQ(wait_status(k[i]), 0);
    }
    CHECK_EQ(gp_t_free(&api, NULL), L0);
}

/* A process killed with SIGKILL holding memory: its usage is reclaimed (its slot too: the region
 * has two slots, this process's and one for each child in turn). */
static void body_kill(void)
{
    start();
    for (int round = 0; round < 4; round++) {
        int ready, go;
        pid_t k = holder(L0, &ready, &go);
        CHECK_EQ(pipe_read(ready), 'A');
        CUdeviceptr p;
        CHECK_EQ(api.MemAlloc(&p, 1), CUDA_ERROR_OUT_OF_MEMORY);
        CHECK(kill(k, SIGKILL) == 0);
        CHECK_EQ(wait_status(k), 128 + SIGKILL);
        CHECK_EQ(api.MemAlloc(&p, L0), CUDA_SUCCESS);
        CHECK_EQ(api.MemFree(p), CUDA_SUCCESS);
        close(ready);
        close(go);
    }
}

/* A region with one slot, held by this process: a child cannot have one. */
static void body_no_slot(void)
{
    start();
    CUdeviceptr p;
    CHECK_EQ(api.MemAlloc(&p, MIB), CUDA_SUCCESS);
    int want_closed = getenv("GP_TEST_EXPECT_CLOSED") != NULL;
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        gp_t_in_fork();
        gp_t_context(&api, 0);
        CUresult rc = api.MemAlloc(&p, L0);
        _exit(rc == (want_closed ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS) ? 0 : 1);
    }
    CHECK_EQ(wait_status(c), 0);
}

/* ---- configuration ---- */

/* With a region, the job's own variables change nothing, even set before the first call. */
static void body_tamper(void)
{
    setenv("GPUPOOL_GPU_MEMORY_LIMIT_MIB", "100000", 1);
    setenv("CUDA_DEVICE_MEMORY_LIMIT", "100g", 1);
    setenv("CUDA_DEVICE_MEMORY_LIMIT_0", "100g", 1);
    setenv("CUDA_DISABLE_CONTROL", "true", 1);
    setenv("GPUPOOL_SHARE_ON_ERROR", "open", 1);
    unsetenv("GPUPOOL_SHARE_REGION");
    start();
    CUdeviceptr p;
    CHECK_EQ(api.MemAlloc(&p, L0 + 1), CUDA_ERROR_OUT_OF_MEMORY);
    uint64_t total;
    CHECK_EQ(gp_t_free(&api, &total), L0);
    CHECK_EQ(total, L0);
}

/* Without a region: limits from the environment, per device. */
static void body_env_limits(void)
{
    start();
    CUdeviceptr p, q;
    CHECK_EQ(api.MemAlloc(&p, L0 + 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.MemAlloc(&p, L0), CUDA_SUCCESS);
    gp_t_context(&api, 1);
    uint64_t total;
    CHECK_EQ(gp_t_free(&api, &total), L1);
    CHECK_EQ(total, L1);
    CHECK_EQ(api.MemAlloc(&q, L1 + 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(api.MemAlloc(&q, L1), CUDA_SUCCESS);
    CHECK_EQ(api.MemFree(q), CUDA_SUCCESS);
    CHECK_EQ(api.MemFree(p), CUDA_SUCCESS);
}

static void body_no_limits(void)
{
    start();
    CUdeviceptr p;
    CHECK_EQ(api.MemAlloc(&p, 64 * MIB), CUDA_SUCCESS);
    uint64_t total;
    CHECK_EQ(gp_t_free(&api, &total), FAKE_TOTAL - 64 * MIB);
    CHECK_EQ(total, FAKE_TOTAL);
    unsigned int legacy;
    CHECK_EQ(api.MemAllocLegacy(&legacy, 4096), CUDA_SUCCESS);
    CHECK_EQ(api.MemFree(p), CUDA_SUCCESS);
}

/* Enforcement impossible (bad region), policy open: the job runs, unlimited. */
static void body_fail_open(void)
{
    start();
    make_stream_and_pool();
    held h;
    for (int p = 0; p < P_COUNT; p++) {
        CHECK_EQ(path_alloc(p, L0 + 1, &h), CUDA_SUCCESS);
        path_free(p, &h);
    }
    uint64_t total;
    CHECK_EQ(gp_t_free(&api, &total), FAKE_TOTAL);
    CHECK_EQ(total, FAKE_TOTAL);
}

/* Policy closed: every allocation refused, nothing shown free. */
static void body_fail_closed(void)
{
    start();
    make_stream_and_pool();
    held h;
    for (int p = 0; p < P_COUNT; p++) {
        CHECK_EQ(path_alloc(p, 1, &h), CUDA_ERROR_OUT_OF_MEMORY);
    }
    unsigned int legacy;
    CHECK_EQ(api.MemAllocLegacy(&legacy, 4096), CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ(gp_t_free(&api, NULL), 0);
    CHECK_EQ(api.FakeUsage(0), 0);
}

/* A process that does not use CUDA (the job's shell, its tools). */
static void body_quiet(void)
{
}

/* ---- interception ---- */

static int in_shim(void *fn)
{
    return strstr(gp_t_object_of(fn), "libgpushare") != NULL;
}

/* dlsym: hooked names give hooks, others the real thing, and RTLD_NEXT keeps its meaning. */
static void body_dlsym(void)
{
    /* From this program, the object after it is the preloaded library: its dlsym is next. */
    void *next = dlsym(RTLD_NEXT, "dlsym");
    CHECK(next != NULL);
    CHECK(in_shim(next));
#ifndef GP_DIRECT
    /* libcuda.so.1 not loaded yet: no CUDA symbol, although the library exports the hooks. */
    CHECK(dlsym(RTLD_DEFAULT, "cuMemAlloc_v2") == NULL);
    CHECK(dlsym(RTLD_DEFAULT, "cuGetProcAddress") == NULL);
#endif
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    CHECK(h != NULL);
    CHECK(in_shim(dlsym(h, "cuMemAlloc_v2")));
    CHECK(in_shim(dlsym(RTLD_DEFAULT, "cuMemAlloc_v2")));
    CHECK(in_shim(dlsym(h, "cuGetProcAddress_v2")));
    void *getdev = dlsym(h, "cuCtxGetDevice");
    CHECK(getdev != NULL && !in_shim(getdev));
    CHECK(dlsym(h, "cuNoSuchFunction") == NULL);
    CHECK(dlerror() != NULL);
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    CHECK(libc != NULL && dlsym(libc, "cuMemAlloc_v2") == NULL);
    start();
    CUdeviceptr p;
    CHECK_EQ(api.MemAlloc(&p, L0 + 1), CUDA_ERROR_OUT_OF_MEMORY);
}

/* cuGetProcAddress: versions, flags, itself. */
static void body_getproc(void)
{
    start();
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    CUresult (*gp)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    void *sym = dlsym(h, "cuGetProcAddress_v2");
    memcpy(&gp, &sym, sizeof(sym));
    CUdriverProcAddressQueryResult st;
    void *fn = NULL;
    CHECK_EQ(gp("cuMemAllocAsync", &fn, 12040, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st),
             CUDA_SUCCESS);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
    CHECK(strcmp(gp_t_symbol_of(fn), "cuMemAllocAsync_ptsz") == 0);
    CUresult (*async)(CUdeviceptr *, size_t, CUstream);
    memcpy(&async, &fn, sizeof(fn));
    CUdeviceptr p;
    CHECK_EQ(async(&p, L0 + 1, NULL), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(gp("cuMemAlloc", &fn, 2000, 0, &st), CUDA_SUCCESS);
    CHECK(strcmp(gp_t_symbol_of(fn), "cuMemAlloc") == 0 && in_shim(fn));
    CHECK_EQ(gp("cuMemAlloc", &fn, 12040, 0, &st), CUDA_SUCCESS);
    CHECK(strcmp(gp_t_symbol_of(fn), "cuMemAlloc_v2") == 0 && in_shim(fn));
    CHECK_EQ(gp("cuGetProcAddress", &fn, 12000, 0, &st), CUDA_SUCCESS);
    CHECK(strcmp(gp_t_symbol_of(fn), "cuGetProcAddress_v2") == 0 && in_shim(fn));
    CHECK_EQ(gp("cuGetProcAddress", &fn, 11030, 0, &st), CUDA_SUCCESS);
    CHECK(strcmp(gp_t_symbol_of(fn), "cuGetProcAddress") == 0 && in_shim(fn));
    CHECK_EQ(gp("cuLaunchKernel", &fn, 12040, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st),
             CUDA_SUCCESS);
    CHECK(strcmp(gp_t_symbol_of(fn), "cuLaunchKernel_ptsz") == 0);
    CHECK_EQ(gp("cuCtxGetDevice", &fn, 12040, 0, &st), CUDA_SUCCESS);
    CHECK(!in_shim(fn));
    CHECK_EQ(gp("cuNoSuchFunction", &fn, 12040, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK_EQ(gp("cuMemAllocAsync", &fn, 11000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CHECK_EQ(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

/* The legacy 32-bit entry points are refused while a limit applies. */
static void body_legacy(void)
{
    start();
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    unsigned int p = 0, pitch = 0;
    CHECK_EQ(api.MemAllocLegacy(&p, 4096), CUDA_ERROR_NOT_SUPPORTED);
    CUresult (*pitched)(unsigned int *, unsigned int *, unsigned int, unsigned int, unsigned int);
    void *sym = dlsym(h, "cuMemAllocPitch");
    memcpy(&pitched, &sym, sizeof(sym));
    CHECK_EQ(pitched(&p, &pitch, 64, 64, 4), CUDA_ERROR_NOT_SUPPORTED);
    CUresult (*array)(CUarray *, const void *);
    sym = dlsym(h, "cuArrayCreate");
    memcpy(&array, &sym, sizeof(sym));
    CUarray a;
    CUDA_ARRAY_DESCRIPTOR d = {64, 64, CU_AD_FORMAT_FLOAT, 1};
    CHECK_EQ(array(&a, &d), CUDA_ERROR_NOT_SUPPORTED);
}

/* Launches pass through the throttle's hook point to the driver. */
static void body_launch(void)
{
    start();
    unsigned long before = api.FakeLaunches();
    CHECK_EQ(api.LaunchKernel(NULL, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
    CHECK_EQ(api.LaunchKernelEx(&cfg, NULL, NULL, NULL), CUDA_SUCCESS);
    CHECK_EQ(api.LaunchCooperativeKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL), CUDA_SUCCESS);
    CHECK_EQ(api.FakeLaunches() - before, 3);
}

/* ---- ways around the library ---- */

/* glibc's version of a dynamic-linking function that the running libc has: the newest first. */
static void *libc_version(void *handle, const char *name, const char **version)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.3.4", "GLIBC_2.2.5"};
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        void *f = dlvsym(handle, name, versions[i]);
        if (f) {
            *version = versions[i];
            return f;
        }
    }
    return NULL;
}

typedef void *(*dlsym_fn)(void *, const char *);

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GP_HAS_ASAN 1
#endif
#endif
#ifndef GP_HAS_ASAN
#define GP_HAS_ASAN 0
#endif
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

/* libc's own lookup functions are never handed out: every way of asking for dlsym, dlvsym,
 * dlopen or dlmopen gives ours, and dlvsym of a hooked name gives the hook. Through each, an
 * allocation past the limit is refused. */
static void body_dlvsym(void)
{
    start();
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(libc != NULL && cuda != NULL);
    static const char *const names[] = {"dlsym", "dlvsym", "dlopen", "dlmopen"};
    void *handles[] = {libc, RTLD_DEFAULT, RTLD_NEXT};
    for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
        for (size_t h = 0; h < sizeof(handles) / sizeof(handles[0]); h++) {
            const char *v = "";
            void *by_name = dlsym(handles[h], names[n]);
            void *by_version = libc_version(handles[h], names[n], &v);
            if (!by_name || !in_shim(by_name) || !by_version || !in_shim(by_version)) {
                gp_t_fail(__FILE__, __LINE__, "%s in handle %zu: %s / %s@%s", names[n], h,
                          gp_t_object_of(by_name), gp_t_object_of(by_version), v);
            }
        }
    }
    /* libc's dlsym, as the job asked for it, on the driver's handle: the hook. */
    const char *v = "";
    dlsym_fn ds;
    void *sym = libc_version(libc, "dlsym", &v);
    memcpy(&ds, &sym, sizeof(sym));
    CUresult (*alloc)(CUdeviceptr *, size_t);
    void *fn = ds(cuda, "cuMemAlloc_v2");
    CHECK(in_shim(fn));
    memcpy(&alloc, &fn, sizeof(fn));
    CUdeviceptr p;
    CHECK_EQ(alloc(&p, L0 + 1), CUDA_ERROR_OUT_OF_MEMORY);
    /* dlvsym of the driver's functions: never the real ones (an unversioned driver has none to
     * give: glibc matches a version only). */
    dlvsym_fn dv;
    sym = libc_version(RTLD_DEFAULT, "dlvsym", &v);
    memcpy(&dv, &sym, sizeof(sym));
    static const char *const hooked[] = {"cuMemAlloc_v2", "cuGetProcAddress_v2", "cuMemCreate",
                                         "cuMemAllocAsync"};
    for (size_t i = 0; i < sizeof(hooked) / sizeof(hooked[0]); i++) {
        fn = dv(cuda, hooked[i], "GLIBC_2.2.5");
        if (fn && !in_shim(fn)) {
            gp_t_fail(__FILE__, __LINE__, "dlvsym %s: %s", hooked[i], gp_t_object_of(fn));
        }
    }
    /* libc's dlvsym of libc's dlsym, then the driver through it. */
    sym = dv(libc, "dlsym", v);
    CHECK(in_shim(sym));
    memcpy(&ds, &sym, sizeof(sym));
    fn = ds(cuda, "cuMemAlloc_v2");
    memcpy(&alloc, &fn, sizeof(fn));
    CHECK_EQ(alloc(&p, L0 + 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(alloc(&p, L0), CUDA_SUCCESS);
    CHECK_EQ(api.MemFree(p), CUDA_SUCCESS);
    /* Functions the library does not hook stay the driver's. */
    fn = ds(cuda, "cuCtxGetDevice");
    CHECK(fn != NULL && !in_shim(fn));
}

/* While a limit applies, no new namespace: the driver loaded there would not have the library. */
static void body_dlmopen(void)
{
    start();
    dlerror();
    CHECK(dlmopen(LM_ID_NEWLM, "libcuda.so.1", RTLD_NOW | RTLD_LOCAL) == NULL);
    const char *e = dlerror();
    CHECK(e != NULL && strstr(e, "dlmopen into a new namespace is refused") != NULL);
    CHECK(dlmopen(LM_ID_NEWLM, "libgpattack.so", RTLD_NOW) == NULL);
    /* Through libc's dlmopen, looked up in libc: ours. */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    void *(*dm)(Lmid_t, const char *, int);
    void *sym = dlsym(libc, "dlmopen");
    memcpy(&dm, &sym, sizeof(sym));
    CHECK(dm(LM_ID_NEWLM, "libgpattack.so", RTLD_NOW) == NULL);
    /* The base namespace is dlopen's: allowed, and hooked. */
    void *base = dlmopen(LM_ID_BASE, "libcuda.so.1", RTLD_NOW);
    CHECK(base != NULL && in_shim(dlsym(base, "cuMemAlloc_v2")));
}

/* Without a limit nothing is refused: a new namespace loads. */
static void body_dlmopen_free(void)
{
    void *h = dlmopen(LM_ID_NEWLM, "libm.so.6", RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL);
    CHECK(dlsym(h, "cos") != NULL);
}

/* RTLD_DEEPBIND is dropped while a limit applies: a library linked against the driver binds to
 * our hooks and our dlsym, as any other. (A sanitizer runtime refuses RTLD_DEEPBIND itself.) */
static void body_deepbind(void)
{
#if defined(__SANITIZE_ADDRESS__) || GP_HAS_ASAN
    fprintf(stderr, "deepbind: not with a sanitizer runtime\n");
#else
    start();
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    void *h = dlopen("libgpattack.so", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    CHECK(cuda != NULL && h != NULL);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    void *sym = dlsym(h, "gp_attack_alloc");
    memcpy(&alloc, &sym, sizeof(sym));
    CUdeviceptr p;
    CHECK_EQ(alloc(&p, L0 + 1), CUDA_ERROR_OUT_OF_MEMORY);
    dlsym_fn ds;
    sym = dlsym(h, "gp_attack_dlsym");
    memcpy(&ds, &sym, sizeof(sym));
    CHECK(in_shim(ds(cuda, "cuMemAlloc_v2")));
    CHECK(in_shim(ds(RTLD_DEFAULT, "dlsym")));
#endif
}

/* What a job's process can do to its region files: it cannot write, replace or chmod the limits;
 * zeroing the usage it can write does not let this process past its limit. */
static void body_region_tamper(void)
{
    start();
    const char *path = getenv("GPUPOOL_SHARE_REGION");
    char lpath[512];
    snprintf(lpath, sizeof(lpath), "%s" GP_SHARE_LIMITS_SUFFIX, path);
    if (getuid() != 0) {
        CHECK(open(lpath, O_WRONLY) < 0);
        CHECK(chmod(lpath, 0666) != 0);
        CHECK(unlink(lpath) != 0);
    }
    CUdeviceptr p, q;
    CHECK_EQ(api.MemAlloc(&p, L0), CUDA_SUCCESS);
    /* Totals and slots zeroed (everything after the lock), as a job could. */
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    size_t from = 64 + sizeof(pthread_mutex_t);
    char *zero = calloc(1, (size_t)st.st_size);
    CHECK(zero != NULL);
    CHECK_EQ(pwrite(fd, zero, (size_t)st.st_size - from, (off_t)from),
             (ssize_t)((size_t)st.st_size - from));
    free(zero);
    close(fd);
    CHECK_EQ(api.MemAlloc(&q, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(gp_t_free(&api, NULL), 0);
    CHECK_EQ(api.MemFree(p), CUDA_SUCCESS);
    CHECK_EQ(api.MemAlloc(&q, L0), CUDA_SUCCESS);
    CHECK_EQ(api.MemAlloc(&p, 1), CUDA_ERROR_OUT_OF_MEMORY);
}

/* ---- threads ---- */

#define THREADS 16
#define ROUNDS  2000
#define TL      (64 * MIB)

static CUcontext shared_ctx;
static int refused_any, granted_any;
static pthread_mutex_t tmu = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    unsigned int seed = 1000u + (unsigned int)(uintptr_t)arg;
    CUstream s;
    CHECK_EQ(api.CtxSetCurrent(shared_ctx), CUDA_SUCCESS);
    CHECK_EQ(api.StreamCreate(&s, 0), CUDA_SUCCESS);
    CUdeviceptr held_p[32];
    int async[32], n = 0, refused = 0, granted = 0;
    for (int i = 0; i < ROUNDS; i++) {
        if (n == 32 || (n > 0 && rand_r(&seed) % 3 == 0)) {
            n--;
            CHECK_EQ(async[n] ? api.MemFreeAsync(held_p[n], s) : api.MemFree(held_p[n]),
                     CUDA_SUCCESS);
            continue;
        }
        size_t size = 4096 + (size_t)rand_r(&seed) % (TL / 8);
        async[n] = rand_r(&seed) % 2;
        CUresult rc =
            async[n] ? api.MemAllocAsync(&held_p[n], size, s) : api.MemAlloc(&held_p[n], size);
        CHECK(rc == CUDA_SUCCESS || rc == CUDA_ERROR_OUT_OF_MEMORY);
        /* What the "hardware" holds never passes the limit. */
        CHECK_LE(api.FakeUsage(0), TL);
        if (rc == CUDA_SUCCESS) {
            n++;
            granted++;
        } else {
            refused++;
        }
    }
    while (n > 0) {
        n--;
        CHECK_EQ(api.MemFree(held_p[n]), CUDA_SUCCESS);
    }
    CHECK_EQ(api.StreamDestroy(s), CUDA_SUCCESS);
    pthread_mutex_lock(&tmu);
    refused_any += refused;
    granted_any += granted;
    pthread_mutex_unlock(&tmu);
    return NULL;
}

static void body_threads(void)
{
    start();
    shared_ctx = gp_t_context(&api, 0);
    fprintf(stderr, "threads: seeds 1000..%d\n", 1000 + THREADS - 1);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
    }
    fprintf(stderr, "threads: granted=%d refused=%d\n", granted_any, refused_any);
    CHECK(refused_any > 0 && granted_any > 0);
    CHECK_EQ(api.FakeUsage(0), 0);
    CHECK_EQ(gp_t_free(&api, NULL), TL);
}

/* ---- the driver side: cases ---- */

static char region_path[300];

static void make_region(uint64_t l0, uint64_t l1, int on_error, uint32_t nslots)
{
    gp_share_limits lim;
    memset(&lim, 0, sizeof(lim));
    lim.ndevices = 2;
    lim.mem_bytes[0] = l0;
    lim.mem_bytes[1] = l1;
    lim.on_error = (uint32_t)on_error;
    lim.nslots = nslots;
    snprintf(region_path, sizeof(region_path), "%s/region", gp_t_dir());
    CHECK_EQ(gp_share_region_create(region_path, &lim, (uid_t)-1, (gid_t)-1), 0);
}

static char region_env[400];

static const char *region_var(void)
{
    snprintf(region_env, sizeof(region_env), "GPUPOOL_SHARE_REGION=%s", region_path);
    return region_env;
}

static void case_paths(const char *loader)
{
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
    char l[64];
    snprintf(l, sizeof(l), "GP_TEST_LOADER=%s", loader);
    const char *env[] = {region_var(), l, NULL};
    gp_t_expect("paths", env);
    /* Many refusals, one log line. */
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "event=alloc_refused"), 1);
}

static void case_paths_dlsym(void)
{
    case_paths("dlsym");
}

static void case_paths_getproc(void)
{
    case_paths("getproc");
}

static void case_paths_getproc_v2(void)
{
    case_paths("getproc_v2");
}

#ifdef GP_DIRECT
static void case_paths_direct(void)
{
    case_paths("direct");
}
#endif

static void with_region(const char *body)
{
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
    const char *env[] = {region_var(), NULL};
    gp_t_expect(body, env);
}

static void case_mipmap(void)
{
    with_region("mipmap_levels");
}

static void case_devices(void)
{
    with_region("devices");
}

static void case_meminfo(void)
{
    with_region("meminfo");
}

static void case_nvml_visible(void)
{
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
    const char *env[] = {region_var(),
                         "CUDA_VISIBLE_DEVICES=GPU-00000000-0000-4000-8000-000000000001", NULL};
    gp_t_expect("nvml_visible", env);
}

static void case_multiprocess(void)
{
    with_region("multiprocess");
}

static void case_kill(void)
{
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 2);
    const char *env[] = {region_var(), NULL};
    gp_t_expect("kill", env);
}

/* Every slot taken: refused, whatever the region's on_error (gpupool-run writes open) and the
 * environment say. */
static void case_no_slot(void)
{
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 1);
    const char *open_env[] = {region_var(), "GP_TEST_EXPECT_CLOSED=1",
                              "GPUPOOL_SHARE_ON_ERROR=open", NULL};
    gp_t_expect("no_slot", open_env);
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "event=no_slot"), 1);
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "policy=closed"), 1);
    make_region(L0, L1, GP_SHARE_FAIL_CLOSED, 1);
    const char *closed_env[] = {region_var(), "GP_TEST_EXPECT_CLOSED=1", NULL};
    gp_t_expect("no_slot", closed_env);
}

static void case_tamper(void)
{
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
    const char *env[] = {region_var(),
                         "GPUPOOL_GPU_MEMORY_LIMIT_MIB=100000",
                         "GPUPOOL_GPU_MEMORY_LIMIT_MIB_0=100000",
                         "CUDA_DEVICE_MEMORY_LIMIT=100g",
                         "CUDA_DEVICE_MEMORY_LIMIT_0=100g",
                         "CUDA_DISABLE_CONTROL=true",
                         "GPU_CORE_UTILIZATION_POLICY=disable",
                         NULL};
    gp_t_expect("tamper", env);
}

static void case_env_limits(void)
{
    const char *env[] = {"GPUPOOL_GPU_MEMORY_LIMIT_MIB=8", "CUDA_DEVICE_MEMORY_LIMIT_1=16m", NULL};
    gp_t_expect("env_limits", env);
    /* HAMi-core's names alone: bytes without a suffix. */
    const char *alias[] = {"CUDA_DEVICE_MEMORY_LIMIT=8388608", "GPUPOOL_GPU_MEMORY_LIMIT_MIB_1=16",
                           NULL};
    gp_t_expect("env_limits", alias);
    const char *none[] = {NULL};
    gp_t_expect("no_limits", none);
    /* A malformed limit: enforcement failed, the policy decides. */
    const char *bad_open[] = {"GPUPOOL_GPU_MEMORY_LIMIT_MIB=8x", NULL};
    gp_t_expect("fail_open", bad_open);
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "event=config_invalid"), 1);
    const char *bad_closed[] = {"GPUPOOL_GPU_MEMORY_LIMIT_MIB=8x", "GPUPOOL_SHARE_ON_ERROR=closed",
                                NULL};
    gp_t_expect("fail_closed", bad_closed);
}

/* A region that was given fails closed, whatever GPUPOOL_SHARE_ON_ERROR says. */
static void expect_closed(void)
{
    const char *env_open[] = {region_var(), "GPUPOOL_SHARE_ON_ERROR=open", NULL};
    gp_t_expect("fail_closed", env_open);
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "event=region_unusable"), 1);
    const char *env_none[] = {region_var(), NULL};
    gp_t_expect("fail_closed", env_none);
}

static void case_region_perms(void)
{
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
    char lpath[320];
    snprintf(lpath, sizeof(lpath), "%s" GP_SHARE_LIMITS_SUFFIX, region_path);
    struct stat st;
    CHECK(stat(region_path, &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK_EQ(st.st_mode & 07777, 0660);
    CHECK_EQ(st.st_uid, getuid());
    CHECK(stat(lpath, &st) == 0);
    CHECK_EQ(st.st_mode & 07777, 0640);
    gp_share_region *r;
    CHECK_EQ(gp_share_region_open(region_path, &r), 0);
    gp_share_region_free(r);
    if (gp_t_can_be_others()) {
        /* As root (gpupool-run): the owner and group asked for. */
        gp_share_limits lim;
        memset(&lim, 0, sizeof(lim));
        char other[320], olimits[340];
        snprintf(other, sizeof(other), "%s/owned", gp_t_dir());
        snprintf(olimits, sizeof(olimits), "%s" GP_SHARE_LIMITS_SUFFIX, other);
        CHECK_EQ(gp_share_region_create(other, &lim, 4242, 4343), 0);
        CHECK(stat(other, &st) == 0);
        CHECK_EQ(st.st_uid, 4242);
        CHECK_EQ(st.st_gid, 4343);
        CHECK_EQ(st.st_mode & 07777, 0660);
        CHECK(stat(olimits, &st) == 0);
        CHECK_EQ(st.st_uid, 4242);
        CHECK_EQ(st.st_gid, 4343);
        CHECK_EQ(st.st_mode & 07777, 0640);
    }
    /* The usage writable by others (HAMi-core's 0666), the limits writable by the group: refused,
     * and the job's allocations with it. */
    CHECK(chmod(region_path, 0666) == 0);
    CHECK_EQ(gp_share_region_open(region_path, &r), GP_EPERM);
    CHECK(r == NULL);
    expect_closed();
    CHECK(chmod(region_path, 0660) == 0);
    CHECK(chmod(lpath, 0660) == 0);
    expect_closed();
    /* Symbolic links in place of either file. */
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
    char moved[340];
    snprintf(moved, sizeof(moved), "%s.moved", region_path);
    CHECK(rename(region_path, moved) == 0 && symlink(moved, region_path) == 0);
    expect_closed();
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
    snprintf(moved, sizeof(moved), "%s.moved", lpath);
    CHECK(rename(lpath, moved) == 0 && symlink(moved, lpath) == 0);
    expect_closed();
}

static void patch_file(const char *path, long offset, uint32_t value)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    CHECK(fseek(f, offset, SEEK_SET) == 0);
    CHECK_EQ(fwrite(&value, sizeof(value), 1, f), 1);
    CHECK(fclose(f) == 0);
}

/* A region with a wrong magic, a wrong version, too short, raised limits (the old single-file
 * layout's offset), another region's usage, or either file missing: refused, and the job's
 * allocations with it whatever its environment says; a process that does not use CUDA neither
 * opens the region nor logs. */
static void case_region_invalid(void)
{
    char lpath[320];
    for (int variant = 0; variant < 7; variant++) {
        make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
        snprintf(lpath, sizeof(lpath), "%s" GP_SHARE_LIMITS_SUFFIX, region_path);
        gp_share_region *r;
        int want = GP_EPARSE;
        if (variant == 0) {
            patch_file(region_path, 0, 0x12345678u);
        } else if (variant == 1) {
            patch_file(lpath, 4, GP_SHARE_VERSION + 1);
            want = GP_ENOTSUP;
        } else if (variant == 2) {
            CHECK(truncate(region_path, 100) == 0);
        } else if (variant == 3) {
            patch_file(lpath, 48, 0xffffffffu); /* device 0's limit raised */
            patch_file(lpath, 52, 0xffffffffu);
            want = 0;
        } else if (variant == 4) {
            gp_share_limits lim;
            memset(&lim, 0, sizeof(lim));
            char other[320];
            snprintf(other, sizeof(other), "%s/other", gp_t_dir());
            CHECK_EQ(gp_share_region_create(other, &lim, (uid_t)-1, (gid_t)-1), 0);
            CHECK(rename(other, region_path) == 0);
        } else if (variant == 5) {
            CHECK(unlink(region_path) == 0);
            want = GP_ENOENT;
        } else {
            CHECK(unlink(lpath) == 0);
            want = GP_ENOENT;
        }
        if (want == 0) {
            /* Only someone who can write the limits file raises the limit: root, here. */
            CHECK_EQ(gp_share_region_open(region_path, &r), 0);
            gp_share_region_free(r);
            continue;
        }
        CHECK_EQ(gp_share_region_open(region_path, &r), want);
        expect_closed();
        const char *env_closed[] = {region_var(), NULL};
        gp_t_expect("quiet", env_closed);
        CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "gpushare:"), 0);
    }
}

/* The region's files as the job's user sees them (needs root, to be another user): owned by
 * root with the job's group, they hold it to its limit, and it can neither write nor chmod nor
 * remove the limits; owned by the job's own user, or the limits writable by the job's group,
 * they are not trusted and its allocations are refused. */
static void case_region_owner(void)
{
    if (!gp_t_can_be_others()) {
        printf("skipped: needs root\n");
        exit(GP_T_SKIP);
    }
    CHECK(chmod(gp_t_dir(), 0711) == 0);
    gp_share_limits lim;
    memset(&lim, 0, sizeof(lim));
    lim.ndevices = 2;
    lim.mem_bytes[0] = L0;
    lim.mem_bytes[1] = L1;
    snprintf(region_path, sizeof(region_path), "%s/region", gp_t_dir());
    CHECK_EQ(gp_share_region_create(region_path, &lim, 0, 4242), 0);
    const char *env[] = {region_var(), "GP_TEST_AS_USER=4242", NULL};
    gp_t_expect("region_tamper", env);
    char lpath[320];
    snprintf(lpath, sizeof(lpath), "%s" GP_SHARE_LIMITS_SUFFIX, region_path);
    CHECK(chmod(lpath, 0660) == 0);
    const char *closed[] = {region_var(), "GP_TEST_AS_USER=4242", "GPUPOOL_SHARE_ON_ERROR=open",
                            NULL};
    gp_t_expect("fail_closed", closed);
    CHECK_EQ(gp_share_region_create(region_path, &lim, 4242, 4242), 0);
    gp_t_expect("fail_closed", closed);
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "event=region_unusable"), 1);
}

/* The job zeroes the usage it can write: this process stays within its limit (as root, who may
 * write anything; case_region_owner does it as the job's user). */
static void case_region_tamper(void)
{
    with_region("region_tamper");
}

/* A process started with an empty environment (LD_PRELOAD aside: the sandbox preloads through
 * /etc/ld.so.preload) finds the sandbox's region at GP_SHARE_REGION_DEFAULT, which wins over
 * GPUPOOL_SHARE_REGION. Needs a mount namespace (root), for a /run of its own. */
static void case_default_region(void)
{
    char run[300], gpdir[320];
    snprintf(run, sizeof(run), "%s/run", gp_t_dir());
    snprintf(gpdir, sizeof(gpdir), "%s/gpupool", run);
    CHECK(mkdir(run, 0755) == 0 && mkdir(gpdir, 0755) == 0);
    gp_share_limits lim;
    memset(&lim, 0, sizeof(lim));
    lim.ndevices = 2;
    lim.mem_bytes[0] = L0;
    lim.mem_bytes[1] = L1;
    char path[400];
    snprintf(path, sizeof(path), "%s/share.region", gpdir);
    CHECK_EQ(gp_share_region_create(path, &lim, (uid_t)-1, (gid_t)-1), 0);
    char run_var[340];
    snprintf(run_var, sizeof(run_var), "GP_TEST_RUN_DIR=%s", run);
    const char *bare[] = {run_var, NULL};
    gp_t_expect("over_limit_free", bare);
    /* A bigger region named in the environment changes nothing. */
    make_region(4 * L0, L1, GP_SHARE_FAIL_OPEN, 0);
    const char *named[] = {run_var, region_var(), "GPUPOOL_GPU_MEMORY_LIMIT_MIB=100000", NULL};
    gp_t_expect("over_limit_free", named);
    /* The default's limits file present but unusable (here: not a regular file): closed. */
    char lpath[420];
    snprintf(lpath, sizeof(lpath), "%s" GP_SHARE_LIMITS_SUFFIX, path);
    CHECK(unlink(lpath) == 0 && mkdir(lpath, 0700) == 0);
    gp_t_expect("fail_closed", bare);
}

static void case_dlvsym(void)
{
    with_region("dlvsym");
}

static void case_dlmopen(void)
{
    with_region("dlmopen");
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "event=dlmopen_refused"), 1);
    const char *none[] = {NULL};
    gp_t_expect("dlmopen_free", none);
}

static void case_deepbind(void)
{
    with_region("deepbind");
}

static void case_over_limit(void)
{
    make_region(L0, L1, GP_SHARE_FAIL_OPEN, 0);
    gp_share_region *r;
    CHECK_EQ(gp_share_region_open(region_path, &r), 0);
    int slot;
    CHECK_EQ(gp_share_region_attach(r, &slot), 0);
    CHECK_EQ(gp_share_region_charge(r, slot, 0, 2 * L0), 0);
    const char *env[] = {region_var(), NULL};
    gp_t_expect("over_limit", env);
    CHECK_EQ(gp_share_region_detach(r, slot), 0);
    gp_share_region_free(r);
}

static void case_dlsym(void)
{
    with_region("dlsym");
}

static void case_getproc(void)
{
    with_region("getproc");
}

static void case_legacy(void)
{
    with_region("legacy");
}

static void case_launch(void)
{
    with_region("launch");
}

static void case_threads(void)
{
    make_region(TL, TL, GP_SHARE_FAIL_OPEN, 0);
    const char *env[] = {region_var(), NULL};
    gp_t_expect("threads", env);
}

/* ---- tables ---- */

static const gp_t_entry bodies[] = {
    {"paths", body_paths},
    {"mipmap_levels", body_mipmap_levels},
    {"devices", body_devices},
    {"meminfo", body_meminfo},
    {"nvml_visible", body_nvml_visible},
    {"over_limit", body_over_limit},
    {"multiprocess", body_multiprocess},
    {"kill", body_kill},
    {"no_slot", body_no_slot},
    {"tamper", body_tamper},
    {"env_limits", body_env_limits},
    {"no_limits", body_no_limits},
    {"fail_open", body_fail_open},
    {"fail_closed", body_fail_closed},
    {"quiet", body_quiet},
    {"dlsym", body_dlsym},
    {"getproc", body_getproc},
    {"legacy", body_legacy},
    {"launch", body_launch},
    {"threads", body_threads},
    {"over_limit_free", body_over_limit_free},
    {"dlvsym", body_dlvsym},
    {"dlmopen", body_dlmopen},
    {"dlmopen_free", body_dlmopen_free},
    {"deepbind", body_deepbind},
    {"region_tamper", body_region_tamper},
};

static const gp_t_entry cases[] = {
    {"paths_dlsym", case_paths_dlsym},
    {"paths_getproc", case_paths_getproc},
    {"paths_getproc_v2", case_paths_getproc_v2},
#ifdef GP_DIRECT
    {"paths_direct", case_paths_direct},
#endif
    {"mipmap", case_mipmap},
    {"devices", case_devices},
    {"meminfo", case_meminfo},
    {"nvml_visible", case_nvml_visible},
    {"over_limit", case_over_limit},
    {"multiprocess", case_multiprocess},
    {"kill", case_kill},
    {"no_slot", case_no_slot},
    {"tamper", case_tamper},
    {"env_limits", case_env_limits},
    {"region_perms", case_region_perms},
    {"region_invalid", case_region_invalid},
    {"dlsym", case_dlsym},
    {"getproc", case_getproc},
    {"legacy", case_legacy},
    {"launch", case_launch},
    {"threads", case_threads},
    {"dlvsym", case_dlvsym},
    {"dlmopen", case_dlmopen},
    {"deepbind", case_deepbind},
    {"region_tamper", case_region_tamper},
    {"region_owner", case_region_owner},
    {"default_region", case_default_region},
};

int main(int argc, char **argv)
{
    return gp_t_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]), bodies,
                     sizeof(bodies) / sizeof(bodies[0]));
}
