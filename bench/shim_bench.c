/*
 * Micro-benchmark of libgpushare.so: nanoseconds per cuMemAlloc_v2 + cuMemFree_v2 pair and per
 * cuLaunchKernel, through the fake driver (tests/shim/fake_cuda.c), with and without the library.
 *
 *   shim_bench --shim PATH --fake-dir DIR [--iters N]
 *
 * runs itself once per mode, each a fresh process (the library is preloaded or not at start):
 *   nolib        the fake driver alone
 *   passthrough  the library preloaded, no limit configured
 *   env          limits from the environment (a private region)
 *   region       limits from a region file, as gpupool-run sets it up
 * and prints one line per mode and operation:
 *   shim_bench mode=M op=alloc_free|launch iters=N ns_per_call=X
 * The fake driver's own cost (a malloc and a free per pair) is in every mode; the difference
 * between modes is the library's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim/cuda_types.h"
#include "shim/region.h"

extern char **environ;

typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*ctx_fn)(CUcontext *, unsigned int, CUdevice);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, CUstream, void **, void **);

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "shim_bench: no %s\n", name);
        exit(1);
    }
    return p;
}

static int measure(const char *mode, long iters)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "shim_bench: %s\n", dlerror());
        return 1;
    }
    init_fn init;
    ctx_fn ctx_create;
    alloc_fn alloc;
    free_fn release;
    launch_fn launch;
    void *p = sym(h, "cuInit");
    memcpy(&init, &p, sizeof(p));
    p = sym(h, "cuCtxCreate_v2");
    memcpy(&ctx_create, &p, sizeof(p));
    p = sym(h, "cuMemAlloc_v2");
    memcpy(&alloc, &p, sizeof(p));
    p = sym(h, "cuMemFree_v2");
    memcpy(&release, &p, sizeof(p));
    p = sym(h, "cuLaunchKernel");
    memcpy(&launch, &p, sizeof(p));
    CUcontext ctx;
    if (init(0) != CUDA_SUCCESS || ctx_create(&ctx, 0, 0) != CUDA_SUCCESS) {
        fprintf(stderr, "shim_bench: no context\n");
        return 1;
    }
    for (int pass = 0; pass < 2; pass++) { /* the first pass warms up */
        double t0 = now_ns();
        for (long i = 0; i < iters; i++) {
            CUdeviceptr d;
            if (alloc(&d, 4096) != CUDA_SUCCESS || release(d) != CUDA_SUCCESS) {
                fprintf(stderr, "shim_bench: allocation failed\n");
                return 1;
            }
        }
        double t1 = now_ns();
        for (long i = 0; i < iters; i++) {
            launch(NULL, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
        }
        double t2 = now_ns();
        if (pass == 1) {
            printf("shim_bench mode=%s op=alloc_free iters=%ld ns_per_call=%.1f\n", mode, iters,
                   (t1 - t0) / (double)iters);
            printf("shim_bench mode=%s op=launch iters=%ld ns_per_call=%.1f\n", mode, iters,
                   (t2 - t1) / (double)iters);
        }
    }
    return 0;
}

/* Runs this program in one mode with the given extra variables. */
static int run_mode(const char *self, const char *mode, long iters, const char *const *vars)
{
    size_t n = 0, k = 0, extra = 0;
    while (environ[n]) {
        n++;
    }
    while (vars[extra]) {
        extra++;
    }
    char **envp = calloc(n + extra + 1, sizeof(*envp));
    if (!envp) {
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
            strncmp(environ[i], "LD_LIBRARY_PATH=", 16) != 0 &&
            strncmp(environ[i], "GPUPOOL_", 8) != 0 && strncmp(environ[i], "CUDA_", 5) != 0) {
            envp[k++] = environ[i];
        }
    }
    for (size_t i = 0; i < extra; i++) {
        envp[k++] = (char *)vars[i];
    }
    char count[32];
    snprintf(count, sizeof(count), "%ld", iters);
    char *argv[] = {(char *)self, "--mode", (char *)mode, "--iters", count, NULL};
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execve(self, argv, envp);
        _exit(127);
    }
    free(envp);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) {
        return 1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
    const char *shim = NULL, *fake = NULL, *mode = NULL;
    long iters = 200000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--shim") == 0) {
            shim = argv[i + 1];
        } else if (strcmp(argv[i], "--fake-dir") == 0) {
            fake = argv[i + 1];
        } else if (strcmp(argv[i], "--iters") == 0) {
            iters = atol(argv[i + 1]);
        } else if (strcmp(argv[i], "--mode") == 0) {
            mode = argv[i + 1];
        }
    }
    if (mode) {
        return measure(mode, iters);
    }
    if (!shim || !fake || iters <= 0) {
        fprintf(stderr, "usage: %s --shim LIBGPUSHARE --fake-dir DIR [--iters N]\n", argv[0]);
        return 2;
    }
    char dir[] = "/tmp/shim-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char region[64], preload[1024], libpath[1024], region_var[96];
    snprintf(region, sizeof(region), "%s/region", dir);
    snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", shim);
    snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s", fake);
    snprintf(region_var, sizeof(region_var), "GPUPOOL_SHARE_REGION=%s", region);
    gp_share_limits lim;
    memset(&lim, 0, sizeof(lim));
    lim.ndevices = 2;
    lim.mem_bytes[0] = lim.mem_bytes[1] = 1ULL << 30;
    int rc = gp_share_region_create(region, &lim, (uid_t)-1, (gid_t)-1);
    const char *nolib[] = {libpath, NULL};
    const char *passthrough[] = {libpath, preload, NULL};
    const char *env[] = {libpath, preload, "GPUPOOL_GPU_MEMORY_LIMIT_MIB=1024", NULL};
    const char *with_region[] = {libpath, preload, region_var, NULL};
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (rc == 0 && n > 0) {
        self[n] = '\0';
        rc = run_mode(self, "nolib", iters, nolib) ||
             run_mode(self, "passthrough", iters, passthrough) ||
             run_mode(self, "env", iters, env) || run_mode(self, "region", iters, with_region);
    } else {
        rc = 1;
    }
    unlink(region);
    rmdir(dir);
    return rc;
}
