/*
 * Harness of the libgpushare.so tests (see harness.h).
 */
#define _GNU_SOURCE
#include "harness.h"
#include "userns.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef GP_DIRECT
#include "shim/hooks.h"
/* The symbols, for the program linked against libcuda.so.1. */
#define GP_X(lib, kind, ret, name, gpname, minver, flags, params) ret name params;
GP_SHIM_FUNCTIONS(GP_X)
#undef GP_X
CUresult cuInit(unsigned int);
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuCtxDestroy_v2(CUcontext);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuMemPoolDestroy(CUmemoryPool);
CUresult cuMemAddressReserve(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
uint64_t gp_fake_usage(int);
unsigned long gp_fake_launches(void);
uint64_t gp_fake_now_ns(void);
uint64_t gp_fake_busy_ns(int, uint64_t, uint64_t);
#define ADDR(sym) ((void (*)(void))sym)
#else
#define ADDR(sym) NULL
#endif

extern char **environ;

static int in_fork;
static char dir[256];
static char last_err[512];

void gp_t_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    if (in_fork) {
        _exit(1);
    }
    exit(1);
}

void gp_t_in_fork(void)
{
    in_fork = 1;
}

void *gp_t_fnptr(void (*f)(void))
{
    return (void *)(uintptr_t)f;
}

/* ---- the API ---- */

typedef struct field {
    size_t off;
    const char *sym, *gpname;
    int gpver;
    void (*direct)(void);
} field;

#define F(member, sym, gpname, ver)                                                                \
    {                                                                                              \
        offsetof(gp_t_api, member), #sym, gpname, ver, ADDR(sym)                                   \
    }
static const field fields[] = {
    F(Init, cuInit, "cuInit", 12040),
    F(CtxCreate, cuCtxCreate_v2, "cuCtxCreate", 12040),
    F(CtxSetCurrent, cuCtxSetCurrent, "cuCtxSetCurrent", 12040),
    F(CtxDestroy, cuCtxDestroy_v2, "cuCtxDestroy", 12040),
    F(StreamCreate, cuStreamCreate, "cuStreamCreate", 12040),
    F(StreamDestroy, cuStreamDestroy_v2, "cuStreamDestroy", 12040),
    F(MemAlloc, cuMemAlloc_v2, "cuMemAlloc", 12040),
    F(MemAllocPitch, cuMemAllocPitch_v2, "cuMemAllocPitch", 12040),
    F(MemAllocManaged, cuMemAllocManaged, "cuMemAllocManaged", 12040),
    F(MemFree, cuMemFree_v2, "cuMemFree", 12040),
    F(MemAllocAsync, cuMemAllocAsync, "cuMemAllocAsync", 12040),
    F(MemAllocFromPoolAsync, cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 12040),
    F(MemFreeAsync, cuMemFreeAsync, "cuMemFreeAsync", 12040),
    F(MemPoolCreate, cuMemPoolCreate, "cuMemPoolCreate", 12040),
    F(MemPoolDestroy, cuMemPoolDestroy, "cuMemPoolDestroy", 12040),
    F(DeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 12040),
    F(MemCreate, cuMemCreate, "cuMemCreate", 12040),
    F(MemRelease, cuMemRelease, "cuMemRelease", 12040),
    F(MemAddressReserve, cuMemAddressReserve, "cuMemAddressReserve", 12040),
    F(MemMap, cuMemMap, "cuMemMap", 12040),
    F(MemUnmap, cuMemUnmap, "cuMemUnmap", 12040),
    F(ArrayCreate, cuArrayCreate_v2, "cuArrayCreate", 12040),
    F(Array3DCreate, cuArray3DCreate_v2, "cuArray3DCreate", 12040),
    F(ArrayDestroy, cuArrayDestroy, "cuArrayDestroy", 12040),
    F(MipmappedArrayCreate, cuMipmappedArrayCreate, "cuMipmappedArrayCreate", 12040),
    F(MipmappedArrayDestroy, cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy", 12040),
    F(MemGetInfo, cuMemGetInfo_v2, "cuMemGetInfo", 12040),
    F(DeviceTotalMem, cuDeviceTotalMem_v2, "cuDeviceTotalMem", 12040),
    F(LaunchKernel, cuLaunchKernel, "cuLaunchKernel", 12040),
    F(LaunchKernelEx, cuLaunchKernelEx, "cuLaunchKernelEx", 12040),
    F(LaunchCooperativeKernel, cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 12040),
    F(MemAllocLegacy, cuMemAlloc, "cuMemAlloc", 2000),
    F(GraphLaunch, cuGraphLaunch, "cuGraphLaunch", 12040),
    F(FakeUsage, gp_fake_usage, "", 0),
    F(FakeLaunches, gp_fake_launches, "", 0),
    F(FakeNow, gp_fake_now_ns, "", 0),
    F(FakeBusy, gp_fake_busy_ns, "", 0),
};

static int loader_from_env(void)
{
    const char *l = getenv("GP_TEST_LOADER");
    if (!l || strcmp(l, "dlsym") == 0) {
        return GP_T_DLSYM;
    }
    if (strcmp(l, "direct") == 0) {
        return GP_T_DIRECT;
    }
    if (strcmp(l, "getproc") == 0) {
        return GP_T_GETPROC;
    }
    if (strcmp(l, "getproc_v2") == 0) {
        return GP_T_GETPROC_V2;
    }
    gp_t_fail(__FILE__, __LINE__, "unknown GP_TEST_LOADER %s", l);
}

void *gp_t_load(gp_t_api *a, int loader)
{
    if (loader < 0) {
        loader = loader_from_env();
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        gp_t_fail(__FILE__, __LINE__, "dlopen libcuda.so.1: %s", dlerror());
    }
    CUresult (*gp1)(const char *, void **, int, cuuint64_t) = NULL;
    CUresult (*gp2)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
        NULL;
    void *p = dlsym(h, loader == GP_T_GETPROC ? "cuGetProcAddress" : "cuGetProcAddress_v2");
    CHECK(p != NULL);
    memcpy(loader == GP_T_GETPROC ? (void *)&gp1 : (void *)&gp2, &p, sizeof(p));
    memset(a, 0, sizeof(*a));
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const field *f = &fields[i];
        void *fn = NULL;
        if (loader == GP_T_DIRECT) {
            fn = f->direct ? gp_t_fnptr(f->direct) : NULL;
        } else if (loader == GP_T_DLSYM || !f->gpname[0]) {
            fn = dlsym(h, f->sym);
        } else if (loader == GP_T_GETPROC) {
            CHECK_EQ(gp1(f->gpname, &fn, f->gpver, 0), CUDA_SUCCESS);
        } else {
            CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
            CHECK_EQ(gp2(f->gpname, &fn, f->gpver, 0, &st), CUDA_SUCCESS);
            CHECK_EQ(st, CU_GET_PROC_ADDRESS_SUCCESS);
        }
        if (!fn) {
            gp_t_fail(__FILE__, __LINE__, "loader %d: no %s", loader, f->sym);
        }
        memcpy((char *)a + f->off, &fn, sizeof(fn));
    }
    return h;
}

static CUcontext contexts[64];
static int ncontexts;

CUcontext gp_t_context(const gp_t_api *a, int dev)
{
    CUcontext ctx = NULL;
    CHECK(ncontexts < 64);
    CHECK_EQ(a->CtxCreate(&ctx, 0, dev), CUDA_SUCCESS);
    contexts[ncontexts++] = ctx;
    return ctx;
}

CUcontext gp_t_start(const gp_t_api *a)
{
    CHECK_EQ(a->Init(0), CUDA_SUCCESS);
    return gp_t_context(a, 0);
}

uint64_t gp_t_free(const gp_t_api *a, uint64_t *total)
{
    size_t f = 0, t = 0;
    CHECK_EQ(a->MemGetInfo(&f, &t), CUDA_SUCCESS);
    if (total) {
        *total = t;
    }
    return f;
}

const char *gp_t_object_of(void *addr)
{
    Dl_info info;
    return dladdr(addr, &info) && info.dli_fname ? info.dli_fname : "";
}

const char *gp_t_symbol_of(void *addr)
{
    Dl_info info;
    return dladdr(addr, &info) && info.dli_sname ? info.dli_sname : "";
}

/* ---- the driver side ---- */

const char *gp_t_dir(void)
{
    if (!dir[0]) {
        const char *d = getenv("GP_TEST_DIR");
        snprintf(dir, sizeof(dir), "%s", d ? d : "");
    }
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_dir(void)
{
    if (dir[0]) {
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
}

void gp_t_make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/gpushare-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        gp_t_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
    }
    atexit(remove_dir);
}

static int ours(const char *var)
{
    static const char *const prefixes[] = {"LD_PRELOAD=", "LD_LIBRARY_PATH=", "GPUPOOL_",
                                           "CUDA_",       "GPU_CORE_",        "GP_TEST_"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        if (strncmp(var, prefixes[i], strlen(prefixes[i])) == 0) {
            return 1;
        }
    }
    return 0;
}

static const char *env_value(const char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; env && env[i]; i++) {
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=') {
            return env[i] + n + 1;
        }
    }
    return NULL;
}

/* In the child: a mount namespace of its own in which run_dir is /run. */
static int private_run(const char *run_dir)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount(run_dir, "/run", NULL, MS_BIND | MS_REC, NULL) != 0) {
        fprintf(stderr, "no private /run: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* In the child: user and group uid, without supplementary groups. */
static int become(const char *user)
{
    unsigned long id = strtoul(user, NULL, 10);
    if (setgroups(0, NULL) != 0 || setgid((gid_t)id) != 0 || setuid((uid_t)id) != 0) {
        fprintf(stderr, "cannot become user %s: %s\n", user, strerror(errno));
        return -1;
    }
    return 0;
}

int gp_t_run(const char *body, const char *const *env, char *err_path, size_t err_len)
{
    static int runs;
    char preload[512], libpath[512], tdir[300];
    snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", GP_SHIM_LIB);
    snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s", GP_FAKE_DIR);
    snprintf(tdir, sizeof(tdir), "GP_TEST_DIR=%s", dir);
    size_t n = 0, extra = 0;
    while (environ[n]) {
        n++;
    }
    while (env && env[extra]) {
        extra++;
    }
    char **envp = calloc(n + extra + 4, sizeof(*envp));
    CHECK(envp != NULL);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ours(environ[i])) {
            envp[k++] = environ[i];
        }
    }
    envp[k++] = preload;
    envp[k++] = libpath;
    envp[k++] = tdir;
    for (size_t i = 0; i < extra; i++) {
        envp[k++] = (char *)env[i];
    }
    envp[k] = NULL;
    snprintf(err_path, err_len, "%s/%s-%d.err", dir, body, runs++);
    const char *run_dir = env_value(env, "GP_TEST_RUN_DIR");
    const char *as_user = env_value(env, "GP_TEST_AS_USER");
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
            _exit(125);
        }
        if ((run_dir && private_run(run_dir) != 0) || (as_user && become(as_user) != 0)) {
            _exit(GP_T_SKIP);
        }
        char *argv[] = {"shim_test", "--child", (char *)body, NULL};
        execve("/proc/self/exe", argv, envp);
        _exit(126);
    }
    free(envp);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        CHECK(errno == EINTR);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void print_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return;
    }
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        fprintf(stderr, "  | %s", line);
    }
    fclose(f);
}

void gp_t_expect(const char *body, const char *const *env)
{
    int st = gp_t_run(body, env, last_err, sizeof(last_err));
    if (st == GP_T_SKIP &&
        (env_value(env, "GP_TEST_RUN_DIR") || env_value(env, "GP_TEST_AS_USER"))) {
        print_file(last_err);
        printf("skipped: body %s cannot run as asked\n", body);
        exit(GP_T_SKIP);
    }
    if (st != 0) {
        fprintf(stderr, "body %s exited with %d; its stderr:\n", body, st);
        print_file(last_err);
        gp_t_fail(__FILE__, __LINE__, "body %s failed", body);
    }
}

const char *gp_t_last_err(void)
{
    return last_err;
}

int gp_t_count_in_file(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return -1;
    }
    int count = 0;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        count += strstr(line, needle) != NULL;
    }
    fclose(f);
    return count;
}

static int run_entry(const gp_t_entry *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].name, name) == 0) {
            t[i].fn();
            return 0;
        }
    }
    fprintf(stderr, "unknown test %s\n", name);
    return 2;
}

int gp_t_main(int argc, char **argv, const gp_t_entry *cases, size_t ncases,
              const gp_t_entry *bodies, size_t nbodies)
{
    if (argc == 3 && strcmp(argv[1], "--child") == 0) {
        alarm(60);
        /* Loaded already; programs this one starts (a sanitizer's symbolizer) go without. */
        unsetenv("LD_PRELOAD");
        return run_entry(bodies, nbodies, argv[2]);
    }
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < ncases; i++) {
            printf("%s\n", cases[i].name);
        }
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE | --list | --child BODY\n", argv[0]);
        return 2;
    }
    /* Regions are trusted when root owns them: as another user, be root of a namespace. */
    gp_t_become_root();
    gp_t_make_dir();
    int rc = run_entry(cases, ncases, argv[1]);
    if (rc == 0) {
        printf("ok %s\n", argv[1]);
    }
    return rc;
}
