// The memory limit of libgpushare on a real GPU, through the CUDA runtime as applications use it
// (the runtime finds the driver's functions with cuGetProcAddress, so this also exercises that
// path). Run with LD_PRELOAD=libgpushare.so and a limit (GPUPOOL_GPU_MEMORY_LIMIT_MIB, or a
// region); the expected limit in MiB is the first argument.
//
// Checks, each printed as "check=NAME result=pass|FAIL ...":
//   cudaMemGetInfo reports the limit as the total;
//   cudaMalloc: what is free succeeds, one byte more fails, and a free gives it back;
//   cudaMallocAsync (the stream-ordered pool), cudaMallocManaged and VMM (cuMemCreate) are
//   held to the same limit.
// Exit status: 0 all passed, 1 a check failed, 77 no GPU here (skipped).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

static int failures = 0;

static void check(const char *name, bool ok, const char *fmt = "", long long a = 0,
                  long long b = 0)
{
    printf("check=%s result=%s ", name, ok ? "pass" : "FAIL");
    printf(fmt, a, b);
    printf("\n");
    failures += !ok;
}

static size_t free_now()
{
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    return f;
}

static void *get_driver(const char *name)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
        return nullptr;
    }
    return fn;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s LIMIT_MIB\n", argv[0]);
        return 2;
    }
    const size_t limit = (size_t)strtoull(argv[1], nullptr, 10) << 20;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("skip: no GPU\n");
        return 77;
    }
    cudaFree(0); // the context
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    check("meminfo_total_is_limit", t == limit, "total=%lld limit=%lld", (long long)t,
          (long long)limit);
    check("meminfo_free_within_total", f <= t, "free=%lld total=%lld", (long long)f, (long long)t);

    // cudaMalloc: exactly what is free, then one byte more.
    void *p = nullptr, *q = nullptr;
    f = free_now();
    cudaError_t e = cudaMalloc(&q, f + 1);
    check("malloc_over_fails", e == cudaErrorMemoryAllocation, "free=%lld err=%lld", (long long)f,
          (long long)e);
    cudaGetLastError();
    e = cudaMalloc(&p, f);
    check("malloc_exactly_free", e == cudaSuccess, "bytes=%lld err=%lld", (long long)f,
          (long long)e);
    e = cudaMalloc(&q, 1 << 20);
    check("malloc_when_full_fails", e == cudaErrorMemoryAllocation, "err=%lld", (long long)e);
    cudaGetLastError();
    cudaFree(p);
    check("free_gives_back", free_now() >= f, "free=%lld", (long long)free_now());

    // cudaMallocAsync from the default pool.
    cudaStream_t s;
    cudaStreamCreate(&s);
    f = free_now();
    e = cudaMallocAsync(&q, f + (1 << 20), s);
    check("malloc_async_over_fails", e == cudaErrorMemoryAllocation, "err=%lld", (long long)e);
    cudaGetLastError();
    e = cudaMallocAsync(&p, f / 2, s);
    check("malloc_async_within", e == cudaSuccess, "err=%lld", (long long)e);
    check("malloc_async_counted", free_now() <= f - f / 2, "free=%lld", (long long)free_now());
    cudaFreeAsync(p, s);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);

    // Managed memory.
    f = free_now();
    e = cudaMallocManaged(&q, f + (1 << 20));
    check("malloc_managed_over_fails", e == cudaErrorMemoryAllocation, "err=%lld", (long long)e);
    cudaGetLastError();
    e = cudaMallocManaged(&p, 64 << 20);
    check("malloc_managed_within", e == cudaSuccess, "err=%lld", (long long)e);
    cudaFree(p);

    // Virtual memory management: physical allocations through cuMemCreate.
    typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t,
                                  const CUmemAllocationProp *, unsigned long long);
    typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
    typedef CUresult (*gran_fn)(size_t *, const CUmemAllocationProp *,
                                CUmemAllocationGranularity_flags);
    create_fn create = (create_fn)get_driver("cuMemCreate");
    release_fn release = (release_fn)get_driver("cuMemRelease");
    gran_fn gran = (gran_fn)get_driver("cuMemGetAllocationGranularity");
    if (create && release && gran) {
        CUmemAllocationProp prop = {};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        size_t g = 0;
        gran(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        f = free_now();
        size_t over = (f / g + 1) * g, within = (f / 2 / g) * g;
        CUmemGenericAllocationHandle h = 0;
        CUresult r = create(&h, over, &prop, 0);
        check("vmm_over_fails", r == CUDA_ERROR_OUT_OF_MEMORY, "bytes=%lld err=%lld",
              (long long)over, (long long)r);
        r = create(&h, within, &prop, 0);
        check("vmm_within", r == CUDA_SUCCESS, "bytes=%lld err=%lld", (long long)within,
              (long long)r);
        check("vmm_counted", free_now() <= f - within, "free=%lld", (long long)free_now());
        if (r == CUDA_SUCCESS) {
            release(h);
        }
        check("vmm_release_gives_back", free_now() >= f, "free=%lld", (long long)free_now());
    } else {
        check("vmm_entry_points", false, "cuGetProcAddress gave no cuMemCreate");
    }
    printf("failures=%d\n", failures);
    return failures ? 1 : 0;
}
