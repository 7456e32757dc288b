/*
 * The compute limit against a real GPU (ctest label gpu; exit 77, skipped, without one).
 *
 *   gpu_core_check LIBGPUSHARE [LIMIT [POLICY]]      (defaults: 30 strict)
 *   LD_PRELOAD=LIB GPUPOOL_GPU_CORE_LIMIT=30 GPUPOOL_GPU_CORE_POLICY=strict gpu_core_check
 *   gpu_core_check --probe                           (what NVML reports, no library, no check)
 *
 * GP_CORE_CHECK_VERBOSE=1 prints NVML's samples during the limited run, as --probe does.
 *
 * Runs itself as a job would run: a child process with LIBGPUSHARE preloaded,
 * GPUPOOL_GPU_CORE_LIMIT=LIMIT and GPUPOOL_GPU_CORE_POLICY=POLICY, which loads a PTX kernel that
 * spins for a number of clock cycles (about GP_CORE_CHECK_KERNEL_US microseconds, default 2000)
 * and launches it back to back on one stream, asynchronously, for GP_CORE_CHECK_SECONDS
 * (default 14). The parent, without the library and without a CUDA context, polls NVML every
 * 100 ms: the child's per-process SM utilisation (its samples summed over the sample periods
 * the samples of all processes span) and the device's utilisation, after a warm-up of 4 s. It
 * prints
 *
 *   gpu_core_check: requested=30 policy=strict achieved=29.8 device=30.1 source=process
 *
 * and passes when achieved is within 10 points of the limit. A first run without a limit must
 * show a busy GPU (at least 70%), or the measurement itself is not trusted and the check fails.
 * With policy "default" and no other process on the GPU the limit does not apply: the check
 * then expects the unlimited figure (at least 70%). With GP_CORE_CHECK_FOREIGN=1 another child,
 * without the library, keeps the GPU busy during the limited run (a second tenant): the default
 * policy then applies the limit too, and the check expects it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim/cuda_types.h"

#define WARMUP_S  4.0
#define TOLERANCE 10.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "gpu_core_check: no %s\n", name);
        exit(1);
    }
    return p;
}

#define LOAD(lib, var, name) memcpy(&var, &(void *){sym(lib, name)}, sizeof(void *))

static double env_num(const char *name, double def)
{
    const char *v = getenv(name);
    return v && *v ? atof(v) : def;
}

/* ---- the child: a kernel that spins, launched back to back ---- */

/* One thread per block spins until clock64 has advanced by `cycles`. */
static const char ptx_fmt[] = ".version 7.0\n"
                              ".target %s\n"
                              ".address_size 64\n"
                              ".visible .entry spin(.param .u64 cycles)\n"
                              "{\n"
                              "    .reg .pred %%p;\n"
                              "    .reg .b64 %%rd<5>;\n"
                              "    ld.param.u64 %%rd1, [cycles];\n"
                              "    mov.u64 %%rd2, %%clock64;\n"
                              "LOOP:\n"
                              "    mov.u64 %%rd3, %%clock64;\n"
                              "    sub.s64 %%rd4, %%rd3, %%rd2;\n"
                              "    setp.lt.u64 %%p, %%rd4, %%rd1;\n"
                              "    @%%p bra LOOP;\n"
                              "    ret;\n"
                              "}\n";

typedef struct cuda {
    CUresult (*init)(unsigned int);
    CUresult (*dev_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*load_data)(void **, const void *);
    CUresult (*get_function)(CUfunction *, void *, const char *);
    CUresult (*attr)(int *, int, CUdevice);
    CUresult (*launch)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                       unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
    CUresult (*sync)(void);
} cuda;

#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16

static int child(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        return 77;
    }
    cuda c;
    LOAD(lib, c.init, "cuInit");
    LOAD(lib, c.dev_get, "cuDeviceGet");
    LOAD(lib, c.retain, "cuDevicePrimaryCtxRetain");
    LOAD(lib, c.set_current, "cuCtxSetCurrent");
    LOAD(lib, c.load_data, "cuModuleLoadData");
    LOAD(lib, c.get_function, "cuModuleGetFunction");
    LOAD(lib, c.attr, "cuDeviceGetAttribute");
    LOAD(lib, c.launch, "cuLaunchKernel");
    LOAD(lib, c.sync, "cuCtxSynchronize");
    CUdevice dev;
    CUcontext ctx;
    if (c.init(0) != CUDA_SUCCESS || c.dev_get(&dev, 0) != CUDA_SUCCESS ||
        c.retain(&ctx, dev) != CUDA_SUCCESS || c.set_current(ctx) != CUDA_SUCCESS) {
        fprintf(stderr, "child: no device\n");
        return 77;
    }
    void *mod = NULL;
    static const char *const targets[] = {"sm_75", "sm_70"};
    char ptx[sizeof(ptx_fmt) + 16];
    CUresult rc = CUDA_ERROR_UNKNOWN;
    for (size_t i = 0; i < 2 && rc != CUDA_SUCCESS; i++) {
        snprintf(ptx, sizeof(ptx), ptx_fmt, targets[i]);
        rc = c.load_data(&mod, ptx);
    }
    CUfunction f;
    if (rc != CUDA_SUCCESS || c.get_function(&f, mod, "spin") != CUDA_SUCCESS) {
        fprintf(stderr, "child: cuModuleLoadData: %d\n", (int)rc);
        return 1;
    }
    int sms = 1;
    c.attr(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    unsigned int blocks = (unsigned int)(sms > 0 ? sms : 1);
    /* Calibrate: cycles per microsecond, from one kernel of 10^7 cycles. */
    unsigned long long cycles = 10000000ULL;
    void *params[] = {&cycles};
    c.launch(f, blocks, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
    c.sync();
    double t0 = now_s();
    c.launch(f, blocks, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
    c.sync();
    double per_us = (double)cycles / ((now_s() - t0) * 1e6);
    double kernel_us = env_num("GP_CORE_CHECK_KERNEL_US", 2000);
    cycles = (unsigned long long)(per_us * kernel_us);
    double seconds = env_num("GP_CORE_CHECK_SECONDS", 14);
    unsigned long n = 0;
    double end = now_s() + seconds;
    while (now_s() < end) {
        rc = c.launch(f, blocks, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
        if (rc != CUDA_SUCCESS) {
            fprintf(stderr, "child: launch %lu failed: %d\n", n, (int)rc);
            return 1;
        }
        n++;
    }
    c.sync();
    fprintf(stderr, "child: %lu launches of %.0f us (%u blocks, %.0f cycles/us)\n", n, kernel_us,
            blocks, per_us);
    return 0;
}

/* ---- the parent: NVML ---- */

typedef struct nvml {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*proc_util)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *,
                              unsigned long long);
    nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlDevice_t dev;
} nvml;

typedef struct measure {
    double proc, device; /* percent; proc < 0: no per-process samples */
} measure;

#define MAX_SAMPLES 256

/* Runs the child with env (NULL-terminated "NAME=VALUE" list) and measures it. */
static int run_child(const nvml *n, char **argv, const char *const *env, int probe, measure *m)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        setenv("GP_CORE_CHECK_CHILD", "1", 1);
        for (size_t i = 0; env[i]; i++) {
            putenv((char *)env[i]);
        }
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    /* NVML gives one sample per period and busy process (with two processes time-sliced on
     * the GPU, a period's sample may name only one of them): the child's utilisation is the
     * sum of its samples over the number of periods, which the samples of any process span. */
    double start = now_s(), child_sum = 0, dev_sum = 0;
    unsigned long long last_seen = 0, prev_ts = 0, first_ts = 0, last_ts = 0, period = 0;
    unsigned long long prev_any = 0;
    unsigned int dev_n = 0;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        int measuring = now_s() - start >= WARMUP_S;
        nvmlProcessUtilizationSample_t s[MAX_SAMPLES];
        unsigned int count = MAX_SAMPLES;
        nvmlReturn_t rc = n->proc_util(n->dev, s, &count, last_seen);
        for (unsigned int i = 0; rc == NVML_SUCCESS && i < count && i < MAX_SAMPLES; i++) {
            if (probe) {
                printf("probe t=%.3f pid=%u%s ts=%llu sm=%u mem=%u\n", now_s() - start, s[i].pid,
                       s[i].pid == (unsigned int)pid ? "(child)" : "", s[i].timeStamp, s[i].smUtil,
                       s[i].memUtil);
            }
            unsigned long long t = s[i].timeStamp;
            last_seen = t > last_seen ? t : last_seen;
            if (prev_any && t > prev_any && (period == 0 || t - prev_any < period)) {
                period = t - prev_any;
            }
            prev_any = t > prev_any ? t : prev_any;
            if (!measuring) {
                continue;
            }
            first_ts = first_ts == 0 || t < first_ts ? t : first_ts;
            last_ts = t > last_ts ? t : last_ts;
            if (s[i].pid == (unsigned int)pid && t > prev_ts) {
                child_sum += s[i].smUtil;
                prev_ts = t;
            }
        }
        if (probe && rc != NVML_SUCCESS) {
            printf("probe t=%.3f process utilisation: %d\n", now_s() - start, (int)rc);
        }
        nvmlUtilization_t u;
        if (n->util(n->dev, &u) == NVML_SUCCESS && measuring) {
            dev_sum += u.gpu;
            dev_n++;
            if (probe) {
                printf("probe t=%.3f device gpu=%u\n", now_s() - start, u.gpu);
            }
        }
    }
    m->proc = period && last_ts > first_ts
                  ? child_sum / ((double)(last_ts - first_ts + period) / (double)period)
                  : -1;
    m->device = dev_n ? dev_sum / dev_n : -1;
    if (!WIFEXITED(status)) {
        return -1;
    }
    return WEXITSTATUS(status);
}

static const char *source(const measure *m)
{
    return m->proc >= 0 ? "process" : "device";
}

static double achieved(const measure *m)
{
    return m->proc >= 0 ? m->proc : m->device;
}

int main(int argc, char **argv)
{
    if (getenv("GP_CORE_CHECK_CHILD")) {
        return child();
    }
    int probe = argc == 2 && strcmp(argv[1], "--probe") == 0;
    /* Without arguments, as a job is run: LD_PRELOAD names the library and the limit comes
     * from GPUPOOL_GPU_CORE_LIMIT / GPUPOOL_GPU_CORE_POLICY (bench/gpu_share.sh runs it so). */
    static char lib[4096], limit[32], policy[32];
    const char *l = getenv("GPUPOOL_GPU_CORE_LIMIT"), *pol = getenv("GPUPOOL_GPU_CORE_POLICY");
    snprintf(lib, sizeof(lib), "%s",
             argc > 1               ? argv[1]
             : getenv("LD_PRELOAD") ? getenv("LD_PRELOAD")
                                    : "");
    snprintf(limit, sizeof(limit), "%s", argc > 2 ? argv[2] : l && *l ? l : "30");
    snprintf(policy, sizeof(policy), "%s", argc > 3 ? argv[3] : pol && *pol ? pol : "strict");
    if (argc > 4 || (!probe && !lib[0])) {
        fprintf(stderr, "usage: %s [LIBGPUSHARE [LIMIT [POLICY]]] | --probe\n", argv[0]);
        return 2;
    }
    /* The children get exactly the limits chosen here. */
    unsetenv("GPUPOOL_GPU_CORE_LIMIT");
    unsetenv("GPUPOOL_GPU_CORE_POLICY");
    unsetenv("CUDA_DEVICE_SM_LIMIT");
    unsetenv("GPUPOOL_SHARE_REGION");
    void *nv = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!dlopen("libcuda.so.1", RTLD_NOW) || !nv) {
        printf("gpu_core_check: no driver, skipped\n");
        return 77;
    }
    nvml n;
    LOAD(nv, n.init, "nvmlInit_v2");
    LOAD(nv, n.handle, "nvmlDeviceGetHandleByIndex_v2");
    LOAD(nv, n.proc_util, "nvmlDeviceGetProcessUtilization");
    LOAD(nv, n.util, "nvmlDeviceGetUtilizationRates");
    if (n.init() != NVML_SUCCESS || n.handle(0, &n.dev) != NVML_SUCCESS) {
        printf("gpu_core_check: NVML has no device, skipped\n");
        return 77;
    }
    unsetenv("CUDA_VISIBLE_DEVICES");
    measure m;
    if (probe) {
        const char *none[] = {NULL};
        int rc = run_child(&n, argv, none, 1, &m);
        printf("probe: child exit %d, process=%.1f device=%.1f\n", rc, m.proc, m.device);
        return rc;
    }
    static char preload[4200], lim_var[64], pol_var[64];
    snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", lib);
    snprintf(lim_var, sizeof(lim_var), "GPUPOOL_GPU_CORE_LIMIT=%s", limit);
    snprintf(pol_var, sizeof(pol_var), "GPUPOOL_GPU_CORE_POLICY=%s", policy);

    /* Without a limit: the GPU must be busy, or the measurement is not trusted. */
    const char *free_env[] = {preload, NULL};
    int rc = run_child(&n, argv, free_env, 0, &m);
    printf("gpu_core_check: requested=none achieved=%.1f device=%.1f source=%s\n", achieved(&m),
           m.device, source(&m));
    if (rc == 77) {
        return 77;
    }
    int ok = rc == 0 && achieved(&m) >= 70;

    /* A second tenant: the same kernel loop, without the library, a little longer. */
    int foreign = env_num("GP_CORE_CHECK_FOREIGN", 0) != 0;
    pid_t tenant = -1;
    if (foreign) {
        static char secs[64];
        snprintf(secs, sizeof(secs), "GP_CORE_CHECK_SECONDS=%.0f",
                 env_num("GP_CORE_CHECK_SECONDS", 14) + 4);
        fflush(NULL);
        tenant = fork();
        if (tenant == 0) {
            setenv("GP_CORE_CHECK_CHILD", "1", 1);
            putenv(secs);
            execv("/proc/self/exe", argv);
            _exit(127);
        }
        sleep(1);
    }
    const char *env[] = {preload, lim_var, pol_var, NULL};
    rc = run_child(&n, argv, env, env_num("GP_CORE_CHECK_VERBOSE", 0) != 0, &m);
    if (tenant > 0) {
        kill(tenant, SIGTERM);
        waitpid(tenant, NULL, 0);
    }
    double want = strcmp(policy, "strict") == 0 || foreign ? atof(limit) : -1;
    double got = achieved(&m);
    printf("gpu_core_check: requested=%s policy=%s%s achieved=%.1f device=%.1f source=%s\n", limit,
           policy, foreign ? " (second tenant)" : "", got, m.device, source(&m));
    ok = ok && rc == 0 &&
         (want < 0 ? got >= 70 : got >= want - TOLERANCE && got <= want + TOLERANCE);
    printf("gpu_core_check: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
