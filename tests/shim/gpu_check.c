/*
 * libgpushare.so against the real driver (ctest label gpu; exit 77, skipped, without one).
 *
 *   gpu_check LIBGPUSHARE
 *
 * creates a region with a 512 MiB limit on device 0 in a temporary directory, then runs itself
 * with the library preloaded, the way a job runs: the driver is loaded with dlopen + dlsym and
 * cuGetProcAddress_v2, and every allocation path is checked at the limit (limit + 1 refused,
 * exactly the limit granted, the free gives it back), with what CUDA and NVML report.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shim/cuda_types.h"
#include "shim/region.h"

#define LIMIT (512ULL << 20)

static int failures;

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s == %s: %llu != %llu\n", __FILE__, __LINE__, #a, #b,    \
                    a_, b_);                                                                       \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void *lib;

static void *fn(const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "FAIL: no %s\n", name);
        exit(1);
    }
    return p;
}

#define LOAD(var, name) memcpy(&var, &(void *){fn(name)}, sizeof(void *))

static int in_shim(void *p)
{
    Dl_info info;
    return dladdr(p, &info) && info.dli_fname && strstr(info.dli_fname, "libgpushare");
}

static int child(void)
{
    lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        return 77;
    }
    CUresult (*init)(unsigned int), (*dev_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice), (*set_current)(CUcontext);
    CUresult (*getproc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    CUresult (*alloc)(CUdeviceptr *, size_t), (*mfree)(CUdeviceptr);
    CUresult (*info)(size_t *, size_t *), (*total_mem)(size_t *, CUdevice);
    CUresult (*stream_create)(CUstream *, unsigned int), (*sync)(CUstream);
    CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream), (*free_async)(CUdeviceptr, CUstream);
    CUresult (*pool_create)(CUmemoryPool *, const CUmemPoolProps *);
    CUresult (*pool_alloc)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*unmap)(CUdeviceptr, size_t);
    CUresult (*array_create)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *), (*array_destroy)(CUarray);
    LOAD(init, "cuInit");
    LOAD(dev_get, "cuDeviceGet");
    LOAD(retain, "cuDevicePrimaryCtxRetain");
    LOAD(set_current, "cuCtxSetCurrent");
    LOAD(getproc, "cuGetProcAddress_v2");
    LOAD(mfree, "cuMemFree_v2");
    LOAD(info, "cuMemGetInfo_v2");
    LOAD(total_mem, "cuDeviceTotalMem_v2");
    LOAD(stream_create, "cuStreamCreate");
    LOAD(sync, "cuStreamSynchronize");
    LOAD(free_async, "cuMemFreeAsync");
    LOAD(pool_create, "cuMemPoolCreate");
    LOAD(pool_alloc, "cuMemAllocFromPoolAsync");
    LOAD(create, "cuMemCreate");
    LOAD(release, "cuMemRelease");
    LOAD(reserve, "cuMemAddressReserve");
    LOAD(map, "cuMemMap");
    LOAD(unmap, "cuMemUnmap");
    LOAD(array_create, "cuArrayCreate_v2");
    LOAD(array_destroy, "cuArrayDestroy");
    CUdevice dev;
    CUcontext ctx;
    CHECK_EQ(init(0), CUDA_SUCCESS);
    CHECK_EQ(dev_get(&dev, 0), CUDA_SUCCESS);
    CHECK_EQ(retain(&ctx, dev), CUDA_SUCCESS);
    CHECK_EQ(set_current(ctx), CUDA_SUCCESS);

    /* cuGetProcAddress_v2 hands out the hooks, per-thread variants included. */
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    CHECK_EQ(getproc("cuMemAlloc", &p, 12000, 0, &st), CUDA_SUCCESS);
    CHECK_EQ(in_shim(p), 1);
    memcpy(&alloc, &p, sizeof(p));
    CHECK_EQ(
        getproc("cuMemAllocAsync", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st),
        CUDA_SUCCESS);
    CHECK_EQ(in_shim(p), 1);
    memcpy(&alloc_async, &p, sizeof(p));
    CHECK_EQ(getproc("cuLaunchKernel", &p, 12000, 0, &st), CUDA_SUCCESS);
    CHECK_EQ(in_shim(p), 1);

    size_t f = 0, t = 0;
    CHECK_EQ(info(&f, &t), CUDA_SUCCESS);
    CHECK_EQ(t, LIMIT);
    CHECK_EQ(f, LIMIT);
    CHECK_EQ(total_mem(&t, dev), CUDA_SUCCESS);
    CHECK_EQ(t, LIMIT);

    CUdeviceptr d, e;
    CHECK_EQ(alloc(&d, LIMIT + 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(alloc(&d, LIMIT), CUDA_SUCCESS);
    CHECK_EQ(info(&f, &t), CUDA_SUCCESS);
    CHECK_EQ(f, 0);
    CHECK_EQ(alloc(&e, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(mfree(d), CUDA_SUCCESS);

    CUstream s;
    CHECK_EQ(stream_create(&s, 0), CUDA_SUCCESS);
    CHECK_EQ(alloc_async(&d, LIMIT + 1, s), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(alloc_async(&d, LIMIT, s), CUDA_SUCCESS);
    CHECK_EQ(alloc_async(&e, 1, s), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(free_async(d, s), CUDA_SUCCESS);
    CHECK_EQ(sync(s), CUDA_SUCCESS);

    CUmemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = dev;
    CUmemoryPool pool;
    CHECK_EQ(pool_create(&pool, &props), CUDA_SUCCESS);
    CHECK_EQ(pool_alloc(&d, LIMIT + 1, pool, s), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(pool_alloc(&d, LIMIT, pool, s), CUDA_SUCCESS);
    CHECK_EQ(pool_alloc(&e, 1, pool, s), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(free_async(d, s), CUDA_SUCCESS);
    CHECK_EQ(sync(s), CUDA_SUCCESS);

    /* VMM: created, mapped, released while mapped: charged until unmapped. */
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CHECK_EQ(create(&h, LIMIT + (2u << 20), &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(create(&h, LIMIT, &prop, 0), CUDA_SUCCESS);
    CHECK_EQ(reserve(&va, LIMIT, 0, 0, 0), CUDA_SUCCESS);
    CHECK_EQ(map(va, LIMIT, 0, h, 0), CUDA_SUCCESS);
    CHECK_EQ(release(h), CUDA_SUCCESS);
    CHECK_EQ(alloc(&e, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(unmap(va, LIMIT), CUDA_SUCCESS);
    CHECK_EQ(alloc(&e, LIMIT), CUDA_SUCCESS);
    CHECK_EQ(mfree(e), CUDA_SUCCESS);

    /* A 2-D array of floats, 16384 x 8192: exactly the limit by the library's estimate. */
    CUarray a;
    CUDA_ARRAY_DESCRIPTOR over = {16384, 8193, CU_AD_FORMAT_FLOAT, 1};
    CUDA_ARRAY_DESCRIPTOR exact = {16384, 8192, CU_AD_FORMAT_FLOAT, 1};
    CHECK_EQ(array_create(&a, &over), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(array_create(&a, &exact), CUDA_SUCCESS);
    CHECK_EQ(alloc(&e, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ(array_destroy(a), CUDA_SUCCESS);

    /* NVML sees the same device. */
    void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (nvml) {
        nvmlReturn_t (*ninit)(void), (*handle)(unsigned int, nvmlDevice_t *);
        nvmlReturn_t (*meminfo)(nvmlDevice_t, nvmlMemory_t *);
        void *q = dlsym(nvml, "nvmlInit_v2");
        memcpy(&ninit, &q, sizeof(q));
        q = dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2");
        memcpy(&handle, &q, sizeof(q));
        q = dlsym(nvml, "nvmlDeviceGetMemoryInfo");
        memcpy(&meminfo, &q, sizeof(q));
        nvmlDevice_t nd;
        nvmlMemory_t m;
        CHECK_EQ(ninit(), NVML_SUCCESS);
        CHECK_EQ(handle(0, &nd), NVML_SUCCESS);
        CHECK_EQ(alloc(&d, LIMIT / 4), CUDA_SUCCESS);
        CHECK_EQ(meminfo(nd, &m), NVML_SUCCESS);
        CHECK_EQ(m.total, LIMIT);
        CHECK_EQ(m.free, LIMIT - LIMIT / 4);
        CHECK_EQ(mfree(d), CUDA_SUCCESS);
    }
    printf("gpu_check: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (getenv("GP_GPU_CHECK_CHILD")) {
        return child();
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBGPUSHARE\n", argv[0]);
        return 2;
    }
    void *probe = dlopen("libcuda.so.1", RTLD_NOW);
    if (!probe) {
        printf("gpu_check: no driver, skipped\n");
        return 77;
    }
    char dir[] = "/tmp/gpu-check-XXXXXX", path[64], region[96], preload[1024];
    if (!mkdtemp(dir)) {
        return 1;
    }
    snprintf(path, sizeof(path), "%s/region", dir);
    gp_share_limits lim;
    memset(&lim, 0, sizeof(lim));
    lim.ndevices = 1;
    lim.mem_bytes[0] = LIMIT;
    int rc = gp_share_region_create(path, &lim, (uid_t)-1, (gid_t)-1);
    if (rc == 0) {
        snprintf(region, sizeof(region), "GPUPOOL_SHARE_REGION=%s", path);
        snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", argv[1]);
        putenv(region);
        putenv(preload);
        putenv("GP_GPU_CHECK_CHILD=1");
        unsetenv("CUDA_VISIBLE_DEVICES");
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            execv("/proc/self/exe", argv);
            _exit(127);
        }
        int st = 0;
        rc = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    unlink(path);
    rmdir(dir);
    return rc;
}
