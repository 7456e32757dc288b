/*
 * Start-up, the real libraries, the enforcement state, logging and fork handling.
 *
 * Start-up, in two steps, each once (pthread_once):
 *   - the library constructor reads the environment, so it is read as the process was started,
 *     before the program can change it (a hook that runs before the constructor, from another
 *     library's constructor, reads it first);
 *   - the first hook that needs it decides the mode, so a process that never uses CUDA (the
 *     job's shell) neither opens the region nor logs:
 *       a region given (GP_SHARE_REGION_DEFAULT's limits file exists, else GPUPOOL_SHARE_REGION
 *       is set): open the region; its limits file gives the limits. A region that cannot be
 *       used puts the library in GP_MODE_FAILED, closed (environment limits are NOT a
 *       fallback: they are the job's to set), and so does every later failure (no slot);
 *       no region: limits from the environment in a private region; none set: GP_MODE_OFF.
 * The real libcuda.so.1 / libnvidia-ml.so.1 are loaded on the first hook that calls into them.
 *
 * Nothing here exits or aborts: every failure ends in a mode and a log line.
 */
#define _GNU_SOURCE
#include "shim/shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/config.h"
#include "shim/region.h"
#include "shim/throttle.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static gp_shim_config config;
static int mode = GP_MODE_OFF;
static int fail_closed;
static gp_share_region *region;

static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int my_slot = -1;
static atomic_int slot_failed;

static atomic_bool logged[GP_EV_COUNT];

/* ---- logging ---- */

static void log_write(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static void log_write(const char *fmt, va_list ap)
{
    char buf[512];
    int n = snprintf(buf, sizeof(buf), "gpushare: pid=%d ", (int)getpid());
    if (n > 0 && (size_t)n < sizeof(buf)) {
        int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
        n = m < 0 ? n : n + m;
    }
    if (n < 0) {
        return;
    }
    if ((size_t)n >= sizeof(buf) - 1) {
        n = (int)sizeof(buf) - 2;
    }
    buf[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
    (void)w; /* nothing to do if stderr is gone */
}

void gp_shim_log_once(int event, const char *fmt, ...)
{
    if (event < 0 || event >= GP_EV_COUNT || atomic_exchange(&logged[event], 1)) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    log_write(fmt, ap);
    va_end(ap);
}

void gp_shim_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_write(fmt, ap);
    va_end(ap);
}

int gp_shim_log_wanted(int event)
{
    return event >= 0 && event < GP_EV_COUNT && !atomic_load(&logged[event]);
}

/* ---- start-up ---- */

static const char *env_get(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

static int any_limit(const gp_share_limits *lim)
{
    for (uint32_t i = 0; i < lim->ndevices; i++) {
        if (lim->mem_bytes[i] != GP_SHARE_UNLIMITED) {
            return 1;
        }
    }
    return 0;
}

/* Why enforcement failed at start-up, logged on the first call it affects (a process that
 * never uses CUDA, such as the job's shell, says nothing). */
static int failure_event = -1, failure_code;
static const char *failure_what = "";

static void failed(int event, int code, const char *what)
{
    mode = GP_MODE_FAILED;
    failure_event = event;
    failure_code = code;
    failure_what = what;
}

/* A region was given: whatever goes wrong from here on (the region unusable, no slot, no
 * memory for a record) refuses allocations. Neither the environment's GPUPOOL_SHARE_ON_ERROR
 * nor the region's on_error can open it: the job could have set or written either. */
static void start_region(void)
{
    fail_closed = 1;
    int rc = gp_share_region_open(config.region_path, &region);
    if (rc != 0) {
        failed(GP_EV_REGION, rc, config.region_path);
        return;
    }
    mode = GP_MODE_ON;
}

/* The sandbox's region, when its limits file is there (even as something unusable: then it was
 * meant, and fails closed), takes the place of GPUPOOL_SHARE_REGION: a process started with an
 * empty environment finds it too. */
static void find_region(void)
{
    struct stat st;
    if (lstat(GP_SHARE_REGION_DEFAULT GP_SHARE_LIMITS_SUFFIX, &st) == 0) {
        snprintf(config.region_path, sizeof(config.region_path), "%s", GP_SHARE_REGION_DEFAULT);
    }
}

static void start_env(void)
{
    fail_closed = config.on_error == GP_SHARE_FAIL_CLOSED;
    if (config.env_error) {
        failed(GP_EV_CONFIG, GP_EINVAL, config.bad_var);
        return;
    }
    if (!any_limit(&config.env_limits)) {
        mode = GP_MODE_OFF;
        return;
    }
    /* One slot: a forked child starts its own accounting (see atfork_child). */
    gp_share_limits lim = config.env_limits;
    lim.nslots = 1;
    int rc = gp_share_region_new_private(&lim, &region);
    if (rc != 0) {
        failed(GP_EV_REGION, rc, "(private)");
        return;
    }
    mode = GP_MODE_ON;
}

void gp_shim_report_failure(void)
{
    const char *policy = fail_closed ? "closed" : "open";
    if (failure_event == GP_EV_REGION) {
        gp_shim_log_once(GP_EV_REGION, "event=region_unusable path=%s error=%d policy=%s",
                         failure_what, failure_code, policy);
    } else if (failure_event == GP_EV_CONFIG) {
        gp_shim_log_once(GP_EV_CONFIG, "event=config_invalid variable=%s policy=%s", failure_what,
                         policy);
    }
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&slot_mu);
    gp_acct_atfork_prepare();
}

static void atfork_parent(void)
{
    gp_acct_atfork_parent();
    pthread_mutex_unlock(&slot_mu);
}

/* The child is a new process: its own slot, an empty allocation table (the parent's allocations
 * are not the child's to free), and for a private region, empty accounting. */
static void atfork_child(void)
{
    gp_acct_atfork_child();
    pthread_mutex_init(&slot_mu, NULL);
    atomic_store(&my_slot, -1);
    atomic_store(&slot_failed, 0);
    gp_share_region_forked(region);
}

/* The environment, as the process was started: read from the constructor. */
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static void read_config(void)
{
    gp_shim_config_load(&config, env_get, NULL);
}

/* The mode: on the first call that needs it (opens the region). */
static void start(void)
{
    pthread_once(&config_once, read_config);
    find_region();
    if (config.region_path[0]) {
        start_region();
    } else {
        start_env();
    }
    /* The compute limit: the region's, the environment's without a region, none if the region
     * is unusable. */
    const gp_share_limits *lim = region ? gp_share_region_limits(region) : NULL;
    if (!lim && !config.region_path[0]) {
        lim = &config.env_limits;
    }
    if (lim) {
        gp_throttle_configure(lim->core_percent, lim->core_policy);
    }
    if (mode != GP_MODE_OFF) {
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    }
}

void gp_shim_init(void)
{
    pthread_once(&init_once, start);
}

__attribute__((constructor)) static void shim_constructor(void)
{
    pthread_once(&config_once, read_config);
}

/* A process that exits cleanly frees its slot; the driver frees its memory. */
__attribute__((destructor)) static void shim_destructor(void)
{
    /* Frees still to come (other destructors) must not claim a new slot. */
    atomic_store(&slot_failed, 1);
    int slot = atomic_exchange(&my_slot, -1);
    if (region && slot >= 0) {
        gp_share_region_detach(region, slot);
    }
}

int gp_shim_mode(void)
{
    gp_shim_init();
    return mode;
}

int gp_shim_fail_closed(void)
{
    return fail_closed;
}

int gp_shim_confine_loading(void)
{
    int m = gp_shim_mode();
    return m == GP_MODE_ON || (m == GP_MODE_FAILED && fail_closed);
}

gp_share_region *gp_shim_region(void)
{
    return region;
}

const char *gp_shim_visible_devices(void)
{
    return config.visible_set ? config.visible_devices : NULL;
}

int gp_shim_slot(void)
{
    int s = atomic_load(&my_slot);
    if (s >= 0 || !region) {
        return s;
    }
    pthread_mutex_lock(&slot_mu);
    s = atomic_load(&my_slot);
    if (s < 0 && !atomic_load(&slot_failed)) {
        int rc = gp_share_region_attach(region, &s);
        if (rc == 0) {
            atomic_store(&my_slot, s);
        } else {
            /* Not retried on every call: a full region stays full while its processes live. */
            atomic_store(&slot_failed, 1);
            s = -1;
            gp_shim_log_once(GP_EV_NO_SLOT, "event=no_slot error=%d policy=%s", rc,
                             fail_closed ? "closed" : "open");
        }
    }
    pthread_mutex_unlock(&slot_mu);
    return s;
}

void gp_shim_slot_lost(int slot)
{
    atomic_compare_exchange_strong(&my_slot, &slot, -1);
}

/* ---- the real libraries ---- */

static const char *const lib_names[GP_LIB_COUNT] = {"libcuda.so.1", "libnvidia-ml.so.1"};
static pthread_once_t lib_once[GP_LIB_COUNT] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static gp_voidfn real_fns[GP_FN_COUNT];

static void load(int lib)
{
    gp_dlsym_fn rd = gp_shim_real_dlsym();
    gp_dlopen_fn od = gp_shim_real_dlopen();
    void *h = od ? od(lib_names[lib], RTLD_LAZY | RTLD_LOCAL) : NULL;
    if (!h || !rd) {
        gp_shim_log_once(GP_EV_LIBRARY, "event=library_missing library=%s", lib_names[lib]);
        return;
    }
    for (int i = 0; i < GP_FN_COUNT; i++) {
        if (gp_shim_fns[i].lib == lib) {
            real_fns[i] = (gp_voidfn)(uintptr_t)rd(h, gp_shim_fns[i].name);
        }
    }
}

static void load_cuda(void)
{
    load(GP_LIB_CUDA);
}

static void load_nvml(void)
{
    load(GP_LIB_NVML);
}

gp_voidfn gp_shim_real(int index)
{
    if (index < 0 || index >= GP_FN_COUNT) {
        return NULL;
    }
    gp_shim_init();
    int lib = gp_shim_fns[index].lib;
    pthread_once(&lib_once[lib], lib == GP_LIB_CUDA ? load_cuda : load_nvml);
    return real_fns[index];
}

gp_voidfn gp_shim_getproc_hook(const char *symbol, int cuda_version, cuuint64_t flags, gp_voidfn fn)
{
    if (!symbol || !fn) {
        return NULL;
    }
    /* By address: whatever variant the driver chose, if it is one we hook, ours replaces it. */
    for (int i = 0; i < GP_FN_COUNT; i++) {
        if (gp_shim_fns[i].hooked && gp_shim_fns[i].lib == GP_LIB_CUDA && real_fns[i] == fn) {
            return gp_shim_hooks[i];
        }
    }
    /* By name (a driver may hand out internal entry points, not its exports): among the rows
     * for this name that the version allows, the stream variant the flags ask for first, then
     * the highest minver. */
    int ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    int best = -1, best_score = -1;
    for (int i = 0; i < GP_FN_COUNT; i++) {
        const gp_fn_info *f = &gp_shim_fns[i];
        if (!f->hooked || f->lib != GP_LIB_CUDA || f->minver > cuda_version ||
            strcmp(f->gpname, symbol) != 0) {
            continue;
        }
        int score = (f->ptds == ptds) * 1000000 + f->minver;
        if (score > best_score) {
            best = i;
            best_score = score;
        }
    }
    return best >= 0 ? gp_shim_hooks[best] : NULL;
}

/* ---- devices ---- */

CUresult gp_shim_current_device(int *dev)
{
    gp_fn_cuCtxGetDevice get = GP_REAL(cuCtxGetDevice);
    if (!get) {
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    CUdevice d = 0;
    CUresult rc = get(&d);
    *dev = d;
    return rc;
}

CUresult gp_shim_stream_device(CUstream s, int *dev)
{
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
        return gp_shim_current_device(dev);
    }
    gp_fn_cuStreamGetCtx sctx = GP_REAL(cuStreamGetCtx);
    gp_fn_cuCtxGetCurrent cur = GP_REAL(cuCtxGetCurrent);
    gp_fn_cuCtxPushCurrent_v2 push = GP_REAL(cuCtxPushCurrent_v2);
    gp_fn_cuCtxPopCurrent_v2 pop = GP_REAL(cuCtxPopCurrent_v2);
    CUcontext ctx = NULL, now = NULL;
    if (!sctx || !cur || !push || !pop || sctx(s, &ctx) != CUDA_SUCCESS || !ctx ||
        cur(&now) != CUDA_SUCCESS || ctx == now) {
        return gp_shim_current_device(dev);
    }
    /* The stream belongs to another context: ask it for its device. */
    if (push(ctx) != CUDA_SUCCESS) {
        return gp_shim_current_device(dev);
    }
    CUresult rc = gp_shim_current_device(dev);
    CUcontext popped;
    pop(&popped);
    return rc;
}
