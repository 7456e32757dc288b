/*
 * The compute limit's sampler: one thread that measures, through NVML, what the gates
 * (throttle.c) need, every TICK_NS:
 *
 *   - whether a process outside the replica competes for each device the process launched on:
 *     one of its utilisation samples showed it busy in the last FOREIGN_HOLD_NS (a tenant that
 *     only holds a context takes no SM time, so the default policy does not limit for it);
 *     without per-process samples, whether one has a compute context at all
 *     (nvmlDeviceGetComputeRunningProcesses_v3). Under the default policy that switches the
 *     gate on and off;
 *   - the replica's utilisation: nvmlDeviceGetProcessUtilization gives one sample per busy
 *     process per NVML sample period (200 ms on an H100), smUtil = percent of the period in
 *     which a kernel of the process ran. The replica is this process and the pids of the
 *     region's slots. Each sample is weighted by the time it covers (the period, or less since
 *     the process's previous sample), and a window of WINDOW_NS gives
 *     util = sum(smUtil x span) / (100 x window span), fed back to the gate;
 *   - without per-process samples (NVML_ERROR_NOT_SUPPORTED), the device's utilisation
 *     (nvmlDeviceGetUtilizationRates), used only while no other process is on the device.
 *
 * The thread is started by the first launch under a limit, detached, with every signal
 * blocked (the program's handlers never run on it). It owns the monitors; the mutex only
 * guards starting and stopping. An atexit handler asks it to stop and waits for it at most
 * STOP_WAIT_NS, before the libraries' destructors run (NVML's included): a sampler stuck in a
 * driver call is left behind, never waited for.
 *
 * Nothing here fails a launch: without NVML (library missing, nvmlInit failing, device not
 * found) the gates get shared = -1 (under the default policy: limit, since no other tenant can
 * be ruled out) and no feedback (the open-loop duty cycle holds), and the log says so once.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim/region.h"
#include "shim/shim.h"
#include "shim/throttle.h"

#define MS                (1000ull * 1000)
#define TICK_NS           (100 * MS)
#define WINDOW_NS         (1000 * MS)
#define FOREIGN_HOLD_NS   (5000 * MS)
#define STOP_WAIT_NS      (300 * MS)
#define FIRST_REPORT_WINS 3
#define REPORT_GAP_NS     (10000 * MS)
#define REPORT_GAP_MAX_NS (600000 * MS)
#define DEFAULT_PERIOD_US 200000ull
#define MIN_PERIOD_US     10000ull
#define MAX_PIDS          256
#define MAX_TRACKED       64
#define STACK_SAMPLES     64
#define MAX_SAMPLES       65536
#define PROCESSES         64

typedef struct pid_ts {
    unsigned int pid;
    unsigned long long ts;
} pid_ts;

typedef struct monitor {
    int resolved; /* 0: not yet; 1: h is the device; -1: NVML does not know it */
    nvmlDevice_t h;
    int per_process;              /* 0: the device's utilisation instead */
    int shared;                   /* last answer given to the gate */
    uint64_t foreign_at;          /* when a busy foreign process was last seen; 0: never */
    unsigned long long last_seen; /* newest sample timestamp (us) */
    unsigned long long ref;       /* newest timestamp before the window; 0: first window */
    unsigned long long period_us; /* NVML's sample period as observed; 0: not yet */
    pid_ts prev[MAX_TRACKED];     /* each of our pids' latest sample */
    int nprev;
    unsigned int busy[MAX_TRACKED]; /* our pids busy in the window */
    int nbusy;
    double area; /* sum of smUtil x us over our samples in the window */
    double dev_sum;
    unsigned int dev_n;
    uint64_t window_start;
    /* Reporting: the windows measured since the last report. */
    double ach_sum;
    unsigned int ach_n, windows;
    uint64_t last_report, report_gap;
} monitor;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static int cv_ready, stopping, running;
static atomic_int started;

/* Only the sampler thread touches these. */
static monitor mons[GP_SHARE_MAX_DEVICES];
static pid_t ours[MAX_PIDS];
static int nours;
static uint64_t pids_at;
static int nvml_state; /* 0: not tried; 1: initialised; -1: unusable */

/* ---- the replica ---- */

/* This process, and the processes of the region's slots (a private region is this process's
 * alone). Refreshed once a window. */
static void refresh_pids(uint64_t now)
{
    if (pids_at && now - pids_at < WINDOW_NS) {
        return;
    }
    pids_at = now;
    ours[0] = getpid();
    nours = 1;
    gp_share_region *r = gp_shim_region();
    int n = 0;
    if (r && !gp_share_region_is_private(r) &&
        gp_share_region_pids(r, ours + 1, MAX_PIDS - 1, &n) == 0) {
        nours += n;
    }
}

static int is_ours(unsigned int pid)
{
    for (int i = 0; i < nours; i++) {
        if ((unsigned int)ours[i] == pid) {
            return 1;
        }
    }
    return 0;
}

/* ---- NVML ---- */

static int nvml_ready(void)
{
    if (nvml_state == 0) {
        gp_fn_nvmlInit_v2 init = GP_REAL(nvmlInit_v2);
        nvmlReturn_t rc = init ? init() : NVML_ERROR_FUNCTION_NOT_FOUND;
        nvml_state = rc == NVML_SUCCESS ? 1 : -1;
        if (nvml_state < 0) {
            gp_shim_log_once(GP_EV_CORE_UNMEASURED, "event=core_unmeasured reason=nvml error=%d",
                             (int)rc);
        }
    }
    return nvml_state > 0;
}

/* NVML's handle of CUDA device dev: by the UUID CUDA reports, else by CUDA_VISIBLE_DEVICES
 * order (gp_shim_cuda_ordinal). */
static int resolve(int dev, nvmlDevice_t *h)
{
    gp_fn_cuDeviceGetUuid_v2 uuid2 = GP_REAL(cuDeviceGetUuid_v2);
    gp_fn_cuDeviceGetUuid uuid1 = GP_REAL(cuDeviceGetUuid);
    gp_fn_nvmlDeviceGetHandleByUUID by_uuid = GP_REAL(nvmlDeviceGetHandleByUUID);
    CUuuid u;
    if (by_uuid &&
        ((uuid2 && uuid2(&u, dev) == CUDA_SUCCESS) || (uuid1 && uuid1(&u, dev) == CUDA_SUCCESS))) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        char s[64];
        snprintf(s, sizeof(s),
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
        if (by_uuid(s, h) == NVML_SUCCESS) {
            return 1;
        }
    }
    gp_fn_nvmlDeviceGetCount_v2 count = GP_REAL(nvmlDeviceGetCount_v2);
    gp_fn_nvmlDeviceGetHandleByIndex_v2 by_index = GP_REAL(nvmlDeviceGetHandleByIndex_v2);
    unsigned int n = 0;
    if (!count || !by_index || count(&n) != NVML_SUCCESS) {
        return 0;
    }
    for (unsigned int i = 0; i < n; i++) {
        if (by_index(i, h) == NVML_SUCCESS && gp_shim_cuda_ordinal(*h) == dev) {
            return 1;
        }
    }
    return 0;
}

/* 1 if a process outside the replica has a compute context on the device, 0 if none, -1 if
 * NVML cannot tell. */
static int foreign_running(nvmlDevice_t h)
{
    gp_fn_nvmlDeviceGetComputeRunningProcesses_v3 list =
        GP_REAL(nvmlDeviceGetComputeRunningProcesses_v3);
    nvmlProcessInfo_t infos[PROCESSES];
    unsigned int n = PROCESSES;
    nvmlReturn_t rc = list ? list(h, &n, infos) : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        return 1; /* more processes than the replica could have slots for here */
    }
    if (rc != NVML_SUCCESS) {
        return -1;
    }
    for (unsigned int i = 0; i < n && i < PROCESSES; i++) {
        if (infos[i].pid != 0 && !is_ours(infos[i].pid)) {
            return 1;
        }
    }
    return 0;
}

/* ---- per-process utilisation ---- */

static pid_ts *track(monitor *m, unsigned int pid)
{
    int oldest = 0;
    for (int i = 0; i < m->nprev; i++) {
        if (m->prev[i].pid == pid) {
            return &m->prev[i];
        }
        oldest = m->prev[i].ts < m->prev[oldest].ts ? i : oldest;
    }
    int slot = m->nprev < MAX_TRACKED ? m->nprev++ : oldest;
    m->prev[slot].pid = pid;
    m->prev[slot].ts = 0;
    return &m->prev[slot];
}

static void mark_busy(monitor *m, unsigned int pid)
{
    for (int i = 0; i < m->nbusy; i++) {
        if (m->busy[i] == pid) {
            return;
        }
    }
    if (m->nbusy < MAX_TRACKED) {
        m->busy[m->nbusy++] = pid;
    }
}

/* One sample of one of our processes: the time it covers is NVML's period, or less since the
 * process's previous sample, and not before the window. */
static void account(monitor *m, const nvmlProcessUtilizationSample_t *s)
{
    pid_ts *p = track(m, s->pid);
    if (p->ts && s->timeStamp > p->ts) {
        unsigned long long d = s->timeStamp - p->ts;
        if (d >= MIN_PERIOD_US && (m->period_us == 0 || d < m->period_us)) {
            m->period_us = d;
        }
    }
    unsigned long long span = m->period_us ? m->period_us : DEFAULT_PERIOD_US;
    if (p->ts && s->timeStamp > p->ts && s->timeStamp - p->ts < span) {
        span = s->timeStamp - p->ts;
    }
    if (m->ref && s->timeStamp - m->ref < span) {
        span = s->timeStamp - m->ref;
    }
    p->ts = s->timeStamp;
    m->area += (double)s->smUtil * (double)span;
    if (s->smUtil) {
        mark_busy(m, s->pid);
    }
}

enum { READ_OK, READ_UNSUPPORTED, READ_ERROR };

/* The samples since the last seen: ours accounted, a busy foreign one sets *foreign. */
static int read_samples(monitor *m, int *foreign)
{
    gp_fn_nvmlDeviceGetProcessUtilization pu = GP_REAL(nvmlDeviceGetProcessUtilization);
    if (!pu) {
        return READ_UNSUPPORTED;
    }
    nvmlProcessUtilizationSample_t stack[STACK_SAMPLES], *buf = stack;
    unsigned int n = STACK_SAMPLES;
    nvmlReturn_t rc = pu(m->h, buf, &n, m->last_seen);
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE && n > STACK_SAMPLES && n < MAX_SAMPLES) {
        n += 16;
        buf = malloc(n * sizeof(*buf));
        rc = buf ? pu(m->h, buf, &n, m->last_seen) : NVML_ERROR_INSUFFICIENT_SIZE;
    }
    int result = READ_OK;
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) {
        result = READ_UNSUPPORTED;
    } else if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_FOUND) {
        result = READ_ERROR; /* NOT_FOUND: no sample since the last seen */
    } else if (rc == NVML_SUCCESS) {
        unsigned long long newest = m->last_seen;
        for (unsigned int i = 0; i < n; i++) {
            const nvmlProcessUtilizationSample_t *s = &buf[i];
            if (s->timeStamp <= m->last_seen) {
                continue;
            }
            newest = s->timeStamp > newest ? s->timeStamp : newest;
            if (is_ours(s->pid)) {
                account(m, s);
            } else if (s->smUtil) {
                *foreign = 1;
            }
        }
        m->last_seen = newest;
    }
    if (buf != stack) {
        free(buf);
    }
    return result;
}

/* ---- windows and reports ---- */

static void report(int dev, monitor *m, uint64_t now, int final)
{
    if (m->ach_n == 0) {
        return;
    }
    int due = final || (m->last_report ? now - m->last_report >= m->report_gap
                                       : m->windows >= FIRST_REPORT_WINS);
    if (!due) {
        return;
    }
    if (m->last_report) {
        m->report_gap =
            m->report_gap * 2 > REPORT_GAP_MAX_NS ? REPORT_GAP_MAX_NS : m->report_gap * 2;
    }
    m->last_report = now;
    gp_throttle_stats st;
    gp_throttle_stats_get(dev, &st);
    gp_shim_log("event=core_report dev=%d limit=%u policy=%s throttling=%d achieved=%.1f "
                "rate=%.2f source=%s windows=%u",
                dev, st.percent, st.policy == GP_SHARE_CORE_STRICT ? "strict" : "default",
                st.active, 100.0 * m->ach_sum / m->ach_n, st.rate,
                m->per_process ? "process" : "device", m->ach_n);
    m->ach_sum = 0;
    m->ach_n = 0;
}

static void finish_window(int dev, monitor *m, uint64_t now)
{
    double util = -1;
    unsigned int share = 1;
    if (m->per_process) {
        if (m->ref) {
            unsigned long long span = m->last_seen > m->ref ? m->last_seen - m->ref : 0;
            util = span ? m->area / 100.0 / (double)span : 0.0;
            share = m->nbusy ? (unsigned int)m->nbusy : 1;
        }
    } else if (m->shared == 0 && m->dev_n) {
        util = m->dev_sum / m->dev_n / 100.0;
    }
    if (util >= 0) {
        gp_throttle_feedback(dev, util, share);
        m->ach_sum += util;
        m->ach_n++;
    }
    m->windows++;
    report(dev, m, now, 0);
    m->ref = m->last_seen;
    m->area = 0;
    m->nbusy = 0;
    m->dev_sum = 0;
    m->dev_n = 0;
    m->window_start = now;
}

static void monitor_tick(int dev, monitor *m, uint64_t now)
{
    if (m->resolved == 0) {
        m->resolved = resolve(dev, &m->h) ? 1 : -1;
        m->per_process = 1;
        m->window_start = now;
        m->report_gap = REPORT_GAP_NS;
        if (m->resolved < 0) {
            gp_shim_log_once(GP_EV_CORE_UNMEASURED, "event=core_unmeasured reason=device dev=%d",
                             dev);
        }
    }
    if (m->resolved < 0) {
        gp_throttle_set_shared(dev, -1);
        return;
    }
    int foreign = 0;
    if (m->per_process && read_samples(m, &foreign) == READ_UNSUPPORTED) {
        m->per_process = 0;
        gp_shim_log_once(GP_EV_CORE_FALLBACK,
                         "event=core_util_fallback dev=%d source=device "
                         "reason=no_per_process_utilization",
                         dev);
    }
    if (!m->per_process) {
        gp_fn_nvmlDeviceGetUtilizationRates rates = GP_REAL(nvmlDeviceGetUtilizationRates);
        nvmlUtilization_t u;
        if (rates && rates(m->h, &u) == NVML_SUCCESS) {
            m->dev_sum += u.gpu;
            m->dev_n++;
        }
    }
    if (foreign) {
        m->foreign_at = now;
    }
    if (m->per_process) {
        m->shared = m->foreign_at && now - m->foreign_at < FOREIGN_HOLD_NS;
    } else {
        m->shared = foreign_running(m->h);
    }
    gp_throttle_set_shared(dev, m->shared);
    if (now - m->window_start >= WINDOW_NS) {
        finish_window(dev, m, now);
    }
}

static void tick(void)
{
    uint32_t used = gp_throttle_devices();
    if (!used) {
        return;
    }
    if (!nvml_ready()) {
        for (int dev = 0; dev < GP_SHARE_MAX_DEVICES; dev++) {
            if (used & (1u << dev)) {
                gp_throttle_set_shared(dev, -1);
            }
        }
        return;
    }
    uint64_t now = gp_throttle_now_ns();
    refresh_pids(now);
    for (int dev = 0; dev < GP_SHARE_MAX_DEVICES; dev++) {
        if (used & (1u << dev)) {
            monitor_tick(dev, &mons[dev], now);
        }
    }
}

/* ---- the thread ---- */

static void *sampler_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!stopping) {
        pthread_mutex_unlock(&mu);
        tick();
        pthread_mutex_lock(&mu);
        if (!stopping) {
            struct timespec ts = gp_throttle_timespec(gp_throttle_now_ns() + TICK_NS);
            pthread_cond_timedwait(&cv, &mu, &ts);
        }
    }
    pthread_mutex_unlock(&mu);
    uint64_t now = gp_throttle_now_ns();
    for (int dev = 0; dev < GP_SHARE_MAX_DEVICES; dev++) {
        report(dev, &mons[dev], now, 1);
    }
    pthread_mutex_lock(&mu);
    running = 0;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void stop_at_exit(void)
{
    pthread_mutex_lock(&mu);
    if (running) {
        stopping = 1;
        pthread_cond_broadcast(&cv);
        struct timespec ts = gp_throttle_timespec(gp_throttle_now_ns() + STOP_WAIT_NS);
        while (running && pthread_cond_timedwait(&cv, &mu, &ts) == 0) {
        }
    }
    pthread_mutex_unlock(&mu);
}

void gp_throttle_sampler_start(void)
{
    if (atomic_load_explicit(&started, memory_order_acquire)) {
        return;
    }
    pthread_mutex_lock(&mu);
    if (!atomic_load(&started)) {
        if (!cv_ready) {
            gp_throttle_cond_init(&cv);
            cv_ready = 1;
            atexit(stop_at_exit);
        }
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_attr_t a;
        pthread_t t;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        stopping = 0;
        running = pthread_create(&t, &a, sampler_main, NULL) == 0;
        pthread_attr_destroy(&a);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!running) {
            gp_shim_log_once(GP_EV_CORE_UNMEASURED, "event=core_unmeasured reason=thread");
            for (int dev = 0; dev < GP_SHARE_MAX_DEVICES; dev++) {
                gp_throttle_set_shared(dev, -1);
            }
        }
        atomic_store_explicit(&started, 1, memory_order_release);
    }
    pthread_mutex_unlock(&mu);
}

void gp_throttle_sampler_forked(void)
{
    pthread_mutex_init(&mu, NULL);
    if (cv_ready) {
        gp_throttle_cond_init(&cv);
    }
    stopping = 0;
    running = 0;
    atomic_store(&started, 0);
    memset(mons, 0, sizeof(mons));
    nours = 0;
    pids_at = 0;
    nvml_state = 0; /* the child initialises NVML for itself */
}
