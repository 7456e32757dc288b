/*
 * Tests of the compute limit (throttle.h) against the fake driver and the fake NVML, whose
 * kernels keep the fake GPU busy for GP_FAKE_KERNEL_US each (see fake_cuda.c, fake_nvml.c and
 * harness.h for how a test runs).
 *
 * Every case runs the body `loop`: threads launch kernels back to back for WARMUP_NS +
 * MEASURE_NS, every launch must succeed and reach the driver, and the fake GPU's busy fraction
 * over the last MEASURE_NS must lie in [GP_TEST_MIN_PCT, GP_TEST_MAX_PCT]. The bounds are the
 * feature (a limit of 30 within 10 points), not a speed: the fake GPU's time is wall-clock
 * time, so a loaded machine delays the launching threads, which the controller's feedback
 * absorbs; the warm-up covers its first windows.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "shim/region.h"

#define MS          (1000ull * 1000)
#define WARMUP_NS   (2000 * MS)
#define MEASURE_NS  (2500 * MS)
#define MAX_WORKERS 8

static gp_t_api api;
static CUcontext shared_ctx;
static uint64_t deadline;
static char last_job_err[500]; /* the stderr of the last job run_job ran */

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

/* ---- bodies ---- */

typedef struct worker {
    int kind; /* which entry point: kernel, Ex, cooperative, graph */
    unsigned long launches;
    CUstream stream; /* here, not only on the thread's stack: a forked child still sees it */
} worker;

static CUresult launch_one(int kind, CUstream s)
{
    CUlaunchConfig cfg;
    switch (kind) {
    case 1:
        memset(&cfg, 0, sizeof(cfg));
        cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 64;
        cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
        cfg.hStream = s;
        return api.LaunchKernelEx(&cfg, NULL, NULL, NULL);
    case 2:
        return api.LaunchCooperativeKernel(NULL, 8, 1, 1, 128, 1, 1, 0, s, NULL);
    case 3:
        return api.GraphLaunch((CUgraphExec)(uintptr_t)0x1000, s);
    default:
        return api.LaunchKernel(NULL, 132, 1, 1, 128, 1, 1, 0, s, NULL, NULL);
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    CHECK_EQ(api.CtxSetCurrent(shared_ctx), CUDA_SUCCESS);
    if (w->kind != 0) {
        CHECK_EQ(api.StreamCreate(&w->stream, 0), CUDA_SUCCESS);
    }
    CUstream s = w->stream;
    while (api.FakeNow() < deadline) {
        CUresult rc = launch_one(w->kind, s);
        if (rc != CUDA_SUCCESS) {
            gp_t_fail(__FILE__, __LINE__, "launch %lu (kind %d) failed: %d", w->launches, w->kind,
                      (int)rc);
        }
        w->launches++;
    }
    if (s) {
        w->stream = NULL;
        CHECK_EQ(api.StreamDestroy(s), CUDA_SUCCESS);
    }
    return NULL;
}

/* GP_TEST_THREADS threads (1: kernels on the legacy stream; more: each its own stream and entry
 * point, the four in turn). */
static void body_loop(void)
{
    int n = env_int("GP_TEST_THREADS", 1);
    int lo = env_int("GP_TEST_MIN_PCT", 0), hi = env_int("GP_TEST_MAX_PCT", 100);
    CHECK(n >= 1 && n <= MAX_WORKERS);
    gp_t_load(&api, -1);
    gp_t_start(&api);
    shared_ctx = gp_t_context(&api, 0);
    unsigned long before = api.FakeLaunches();
    uint64_t t0 = api.FakeNow();
    deadline = t0 + WARMUP_NS + MEASURE_NS;
    worker w[MAX_WORKERS];
    pthread_t t[MAX_WORKERS];
    for (int i = 0; i < n; i++) {
        w[i] = (worker){n == 1 ? 0 : i % 4, 0, NULL};
        CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
    }
    unsigned long total = 0;
    for (int i = 0; i < n; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        total += w[i].launches;
    }
    CHECK_EQ(api.FakeLaunches() - before, total);
    uint64_t from = t0 + WARMUP_NS, to = deadline;
    double pct = 100.0 * (double)api.FakeBusy(0, from, to) / (double)(to - from);
    fprintf(stderr, "loop: threads=%d launches=%lu busy=%.1f%% expected=[%d,%d]\n", n, total, pct,
            lo, hi);
    if (pct < lo || pct > hi) {
        gp_t_fail(__FILE__, __LINE__, "busy %.1f%% outside [%d, %d]", pct, lo, hi);
    }
}

/* Forks while threads pass the gates: the child (which the fake driver lets use CUDA) gets
 * working gates and a sampler of its own, and exits normally (the exit handler stops its
 * sampler); nothing deadlocks. */
static void body_fork(void)
{
    gp_t_load(&api, -1);
    gp_t_start(&api);
    shared_ctx = gp_t_context(&api, 0);
    deadline = api.FakeNow() + 1500 * MS;
    worker w[2] = {{0, 0, NULL}, {1, 0, NULL}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
    }
    for (int i = 0; i < 10; i++) {
        usleep(50 * 1000);
        fflush(NULL);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            gp_t_in_fork();
            CHECK_EQ(api.CtxSetCurrent(shared_ctx), CUDA_SUCCESS);
            for (int k = 0; k < 5; k++) {
                CHECK_EQ(launch_one(0, NULL), CUDA_SUCCESS);
            }
            exit(0);
        }
        int st;
        CHECK(waitpid(pid, &st, 0) == pid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    for (int i = 0; i < 2; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
    }
}

/* ---- cases ---- */

#define KERNEL_2MS   "GP_FAKE_KERNEL_US=2000"
#define STRICT_30    "GPUPOOL_GPU_CORE_LIMIT=30", "GPUPOOL_GPU_CORE_POLICY=strict"
#define AROUND_30    "GP_TEST_MIN_PCT=20", "GP_TEST_MAX_PCT=40"
#define UNTHROTTLED  "GP_TEST_MIN_PCT=90", "GP_TEST_MAX_PCT=100"
#define FOREIGN_BUSY "GP_FAKE_NVML_FOREIGN=1:40"

static void expect_report(const char *policy, int throttling)
{
    char line[128];
    snprintf(line, sizeof(line), "event=core_report dev=0 limit=30 policy=%s throttling=%d", policy,
             throttling);
    CHECK(gp_t_count_in_file(gp_t_last_err(), line) >= 1);
}

/* Without a limit the fake GPU is kept busy (and the library stays out of the way). */
static void case_unlimited(void)
{
    const char *env[] = {KERNEL_2MS, UNTHROTTLED, NULL};
    gp_t_expect("loop", env);
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "gpushare:"), 0);
}

/* Strict: a lone process is held to its limit, and the log reports it. */
static void case_strict(void)
{
    const char *env[] = {KERNEL_2MS, STRICT_30, AROUND_30, NULL};
    gp_t_expect("loop", env);
    expect_report("strict", 1);
}

/* Many short kernels: the phase holds hundreds of launches, and still 30%. */
static void case_short(void)
{
    const char *env[] = {"GP_FAKE_KERNEL_US=50", STRICT_30, AROUND_30, NULL};
    gp_t_expect("loop", env);
}

/* Default policy, alone on the GPU: no throttling. */
static void case_default_alone(void)
{
    const char *env[] = {KERNEL_2MS, "GPUPOOL_GPU_CORE_LIMIT=30", UNTHROTTLED, NULL};
    gp_t_expect("loop", env);
    expect_report("default", 0);
}

/* Default policy with another process on the GPU: limited. */
static void case_default_shared(void)
{
    const char *env[] = {KERNEL_2MS, "GPUPOOL_GPU_CORE_LIMIT=30", FOREIGN_BUSY, AROUND_30, NULL};
    gp_t_expect("loop", env);
    expect_report("default", 1);
}

/* Default policy beside a process that holds a context but runs nothing: no throttling. */
static void case_default_idle_foreign(void)
{
    const char *env[] = {KERNEL_2MS, "GPUPOOL_GPU_CORE_LIMIT=30", "GP_FAKE_NVML_FOREIGN=1:0",
                         UNTHROTTLED, NULL};
    gp_t_expect("loop", env);
    expect_report("default", 0);
}

/* Eight threads on their own streams through every launch entry point: each launch goes
 * through, and the sum is held to the limit. */
static void case_threads(void)
{
    const char *env[] = {KERNEL_2MS, STRICT_30, AROUND_30, "GP_TEST_THREADS=8", NULL};
    gp_t_expect("loop", env);
}

/* No per-process utilisation: the device's utilisation stands in, and the log says so once. */
static void case_fallback(void)
{
    const char *env[] = {KERNEL_2MS, STRICT_30, AROUND_30, "GP_FAKE_NVML_NO_PROCESS_UTIL=1", NULL};
    gp_t_expect("loop", env);
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "event=core_util_fallback"), 1);
    expect_report("strict", 1);
}

/* NVML unusable: the open-loop duty cycle still holds; under the default policy another
 * tenant cannot be ruled out, so the limit applies. */
static void case_unmeasured(void)
{
    const char *env[] = {KERNEL_2MS, "GPUPOOL_GPU_CORE_LIMIT=30", "GP_FAKE_NVML_INIT_FAIL=1",
                         AROUND_30, NULL};
    gp_t_expect("loop", env);
    CHECK_EQ(gp_t_count_in_file(gp_t_last_err(), "event=core_unmeasured reason=nvml"), 1);
}

static void case_fork(void)
{
    const char *env[] = {KERNEL_2MS, STRICT_30, NULL};
    gp_t_expect("fork", env);
}

/* With a region, the processes of its slots are the replica, not other tenants: a busy process
 * that holds a slot does not switch the default policy on; one that does not, does. */
static void case_region(void)
{
    gp_share_limits lim;
    memset(&lim, 0, sizeof(lim));
    lim.ndevices = 2;
    lim.mem_bytes[0] = lim.mem_bytes[1] = GP_SHARE_UNLIMITED;
    lim.core_percent = 30;
    lim.core_policy = GP_SHARE_CORE_DEFAULT;
    char path[320], region_var[400], member[64];
    snprintf(path, sizeof(path), "%s/region", gp_t_dir());
    CHECK_EQ(gp_share_region_create(path, &lim, (uid_t)-1, (gid_t)-1), 0);
    gp_share_region *r;
    int slot;
    CHECK_EQ(gp_share_region_open(path, &r), 0);
    CHECK_EQ(gp_share_region_attach(r, &slot), 0);
    snprintf(region_var, sizeof(region_var), "GPUPOOL_SHARE_REGION=%s", path);
    snprintf(member, sizeof(member), "GP_FAKE_NVML_FOREIGN=%d:40", (int)getpid());
    const char *ours[] = {KERNEL_2MS, region_var, member, UNTHROTTLED, NULL};
    gp_t_expect("loop", ours);
    const char *theirs[] = {KERNEL_2MS, region_var, FOREIGN_BUSY, AROUND_30, NULL};
    gp_t_expect("loop", theirs);
    CHECK_EQ(gp_share_region_detach(r, slot), 0);
    gp_share_region_free(r);
}

/* ---- files a sandboxed job runs ----
 *
 * gpupool-run starts the job in a podman sandbox over the host's root, where /tmp, /var/tmp
 * and /run are the sandbox's own: a build tree there (a CI clone under /tmp) is not seen. The
 * job's program and the fake driver are copied into a directory under /var/lib, which the
 * sandbox shows read-only, removed at exit. */
static char stage_dir[256];

static void unstage(void)
{
    if (!stage_dir[0]) {
        return;
    }
    const char *names[] = {"job", "libcuda.so.1", "libnvidia-ml.so.1"};
    for (int i = 0; i < 3; i++) {
        char path[320];
        snprintf(path, sizeof(path), "%s/%s", stage_dir, names[i]);
        unlink(path);
    }
    rmdir(stage_dir);
}

static void copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    CHECK(in >= 0 && out >= 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        CHECK(write(out, buf, (size_t)n) == n);
    }
    CHECK(n == 0);
    close(in);
    CHECK(close(out) == 0);
}

/* The staging directory with this program as "job" and the fake driver (libcuda.so.1,
 * libnvidia-ml.so.1) beside it. */
static const char *stage(void)
{
    if (stage_dir[0]) {
        return stage_dir;
    }
    mkdir("/var/lib/gpupool-tests", 0755);
    snprintf(stage_dir, sizeof(stage_dir), "/var/lib/gpupool-tests/shim-core.XXXXXX");
    CHECK(mkdtemp(stage_dir) != NULL);
    CHECK(chmod(stage_dir, 0755) == 0);
    atexit(unstage);
    char self[1024], path[320];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    CHECK(n > 0);
    self[n] = '\0';
    snprintf(path, sizeof(path), "%s/job", stage_dir);
    copy_file(self, path);
    const char *libs[] = {"libcuda.so.1", "libnvidia-ml.so.1"};
    for (int i = 0; i < 2; i++) {
        snprintf(self, sizeof(self), "%s/%s", GP_FAKE_DIR, libs[i]);
        snprintf(path, sizeof(path), "%s/%s", stage_dir, libs[i]);
        copy_file(self, path);
    }
    return stage_dir;
}

/* ---- a job as gpupool-run starts it ----
 *
 * gpupool-run (GP_RUN_BIN) with the desired replica the controller gives a fraction of
 * `{gpu_milli: 300, compute_policy: POLICY}` (its gpu_share: a 30% cap and the policy), alone on
 * the fake GPU: gpupool-run writes the share region, preloads the library and sets the job's
 * environment, exactly as on a node; the job is this program's `loop` body. The region alone
 * carries the policy: nothing else tells the library. */
static void run_job(const char *policy, const char *lo, const char *hi)
{
    char spec[4096], spec_path[400], state[400], self[400], asan[600] = "", ubsan[600] = "";
    const char *dir = stage();
    snprintf(self, sizeof(self), "%s/job", dir);
    const char *a = getenv("ASAN_OPTIONS"), *u = getenv("UBSAN_OPTIONS");
    if (a && !strpbrk(a, "\"\\")) {
        snprintf(asan, sizeof(asan), "\"ASAN_OPTIONS\": \"%s\", ", a);
    }
    if (u && !strpbrk(u, "\"\\")) {
        snprintf(ubsan, sizeof(ubsan), "\"UBSAN_OPTIONS\": \"%s\", ", u);
    }
    snprintf(spec, sizeof(spec),
             "{\"job\": 7, \"name\": \"lone\", \"replica\": 0, \"epoch\": 1,"
             " \"gpus\": [{\"index\": 0, \"uuid\": \"GPU-00000000-0000-4000-8000-000000000000\","
             " \"milli\": 300, \"memory_mib\": 0, \"mig_start\": -1}],"
             " \"gpu_share\": {\"memory_mib\": 0, \"core_percent\": 30, \"core_policy\": \"%s\"},"
             " \"spec\": {\"command\": [\"%s\", \"--child\", \"loop\"],"
             " \"env\": {%s%s\"LD_LIBRARY_PATH\": \"%s\", \"GP_FAKE_KERNEL_US\": \"2000\","
             " \"GP_TEST_MIN_PCT\": \"%s\", \"GP_TEST_MAX_PCT\": \"%s\"}}}\n",
             policy, self, asan, ubsan, dir, lo, hi);
    snprintf(spec_path, sizeof(spec_path), "%s/%s.json", gp_t_dir(), policy);
    snprintf(state, sizeof(state), "%s/%s", gp_t_dir(), policy);
    FILE *f = fopen(spec_path, "w");
    CHECK(f != NULL);
    fputs(spec, f);
    CHECK(fclose(f) == 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        unsetenv("LD_PRELOAD");
        execl(GP_RUN_BIN, "gpupool-run", "--state-dir", state, "--spec", spec_path,
              "--share-library", GP_SHIM_LIB, (char *)NULL);
        _exit(126);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    char status[500], err[500];
    snprintf(status, sizeof(status), "%s/status.json", state);
    snprintf(err, sizeof(err), "%s/stderr.log", state);
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
             gp_t_count_in_file(status, "\"exit_code\": 0,") == 1;
    if (!ok) {
        fprintf(stderr, "gpupool-run: status %d\n", st);
        char sup[500];
        snprintf(sup, sizeof(sup), "%s/supervisor.log", state);
        const char *files[] = {status, sup, err};
        for (int i = 0; i < 3; i++) {
            FILE *g = fopen(files[i], "r");
            char line[1024];
            fprintf(stderr, "--- %s\n", files[i]);
            while (g && fgets(line, sizeof(line), g)) {
                fprintf(stderr, "  | %s", line);
            }
            if (g) {
                fclose(g);
            }
        }
        gp_t_fail(__FILE__, __LINE__, "the %s job failed", policy);
    }
    snprintf(last_job_err, sizeof(last_job_err), "%s", err);
}

/* A lone strict job is held to its cap. */
static void case_job_strict(void)
{
    run_job("strict", "20", "40");
    CHECK(gp_t_count_in_file(last_job_err, "event=core_report dev=0 limit=30 policy=strict "
                                           "throttling=1") >= 1);
}

/* A lone shared job is not: nobody else is busy on its GPU. */
static void case_job_shared(void)
{
    run_job("shared", "90", "100");
    CHECK(gp_t_count_in_file(last_job_err, "event=core_report dev=0 limit=30 policy=default "
                                           "throttling=0") >= 1);
}

/* ---- tables ---- */

static const gp_t_entry bodies[] = {
    {"loop", body_loop},
    {"fork", body_fork},
};

static const gp_t_entry cases[] = {
    {"unlimited", case_unlimited},
    {"strict", case_strict},
    {"short", case_short},
    {"default_alone", case_default_alone},
    {"default_shared", case_default_shared},
    {"default_idle_foreign", case_default_idle_foreign},
    {"threads", case_threads},
    {"fallback", case_fallback},
    {"unmeasured", case_unmeasured},
    {"region", case_region},
    {"fork", case_fork},
    {"job_strict", case_job_strict},
    {"job_shared", case_job_shared},
};

int main(int argc, char **argv)
{
    return gp_t_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]), bodies,
                     sizeof(bodies) / sizeof(bodies[0]));
}
