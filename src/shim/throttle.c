/*
 * The compute limit's gates: one per device, each a duty cycle (duty.h) that launching threads
 * pass through (see throttle.h for the contract, docs/gpushare.md for the reasoning).
 *
 * Locking: each gate has a mutex and a condition variable (monotonic clock). The mutex guards
 * the gate's state and its gp_duty; it is never held across a driver call or a wait. A gate is
 * OPEN (launches pass), CLOSING (one thread is synchronising its stream to end the phase) or
 * CLOSED (until duty.reopen). `cycle` counts closes: a thread synchronises its own stream at
 * most once per cycle. No thread-local storage: the library needs nothing from ld.so. `active` says
 * whether the gate applies (strict policy: always; default: while the sampler sees another process
 * on the GPU); it is read without the lock on the fast path and changed under it.
 *
 * Fork: the handlers take every gate's mutex around fork(); the child gets fresh gates and no
 * sampler (a new one starts at its first launch).
 */
#define _GNU_SOURCE
#include "shim/throttle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "shim/duty.h"
#include "shim/region.h"
#include "shim/shim.h"

enum { GATE_OPEN, GATE_CLOSING, GATE_CLOSED };

#define NAP_MIN_NS       (20ull * 1000)
#define NAP_MAX_NS       (200ull * 1000)
#define DRAIN_TIMEOUT_NS (1000ull * 1000 * 1000)

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;
    uint64_t cycle;
    gp_duty duty;
    atomic_int active;
} gate;

static atomic_uint limit_percent;
static atomic_uint limit_policy;
static atomic_int enabled; /* a limit applies: 1..99 percent */
static atomic_uint used_devices;
static gate gates[GP_SHARE_MAX_DEVICES];

uint64_t gp_throttle_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct timespec gp_throttle_timespec(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    return ts;
}

void gp_throttle_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
}

static void gate_init(gate *g, uint32_t percent, int active)
{
    pthread_mutex_init(&g->mu, NULL);
    gp_throttle_cond_init(&g->cv);
    g->state = GATE_OPEN;
    g->cycle = 0;
    gp_duty_init(&g->duty, percent, 0);
    atomic_store(&g->active, active);
}

/* Whether prepare took the gates (glibc runs fork handlers one fork at a time). The gates are
 * taken only once `enabled` shows them initialised (acquire): the handlers are registered
 * just before that. */
static int fork_locked;

static void atfork_prepare(void)
{
    fork_locked = atomic_load_explicit(&enabled, memory_order_acquire);
    for (int i = 0; fork_locked && i < GP_SHARE_MAX_DEVICES; i++) {
        pthread_mutex_lock(&gates[i].mu);
    }
}

static void atfork_parent(void)
{
    for (int i = GP_SHARE_MAX_DEVICES - 1; fork_locked && i >= 0; i--) {
        pthread_mutex_unlock(&gates[i].mu);
    }
}

static void atfork_child(void)
{
    if (!fork_locked) {
        return;
    }
    uint32_t percent = atomic_load(&limit_percent);
    int strict = atomic_load(&limit_policy) == GP_SHARE_CORE_STRICT;
    for (int i = 0; i < GP_SHARE_MAX_DEVICES; i++) {
        gate_init(&gates[i], percent, strict);
    }
    atomic_store(&used_devices, 0);
    gp_throttle_sampler_forked();
}

void gp_throttle_configure(uint32_t core_percent, uint32_t core_policy)
{
    atomic_store(&limit_percent, core_percent);
    atomic_store(&limit_policy, core_policy);
    if (core_percent == 0 || core_percent >= 100) {
        return;
    }
    /* Strict gates apply from the first launch; default ones once the sampler has seen another
     * process (a lone job is not held back while the first NVML answer is pending). */
    for (int i = 0; i < GP_SHARE_MAX_DEVICES; i++) {
        gate_init(&gates[i], core_percent, core_policy == GP_SHARE_CORE_STRICT);
    }
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    atomic_store_explicit(&enabled, 1, memory_order_release);
}

void gp_throttle_limit(uint32_t *core_percent, uint32_t *core_policy)
{
    *core_percent = atomic_load(&limit_percent);
    *core_policy = atomic_load(&limit_policy);
}

uint32_t gp_throttle_devices(void)
{
    return atomic_load(&used_devices);
}

/* ---- the driver calls a gate makes ---- */

static CUstream sync_handle(const gp_launch *l)
{
    return l->stream == NULL && l->ptds ? CU_STREAM_PER_THREAD : l->stream;
}

/* A stream being captured into a graph runs nothing now; one we cannot ask about is left
 * alone too. */
static int capturing(const gp_launch *l)
{
    gp_fn_cuStreamIsCapturing is = GP_REAL(cuStreamIsCapturing);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (!is) {
        return 0; /* a driver before CUDA 10 has no graphs */
    }
    return is(sync_handle(l), &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static void nap(uint64_t ns)
{
    struct timespec ts = gp_throttle_timespec(ns);
    nanosleep(&ts, NULL);
}

/* Waits for the work queued on the launch's stream: polls cuStreamQuery with naps growing from
 * NAP_MIN_NS to NAP_MAX_NS (so the end is seen within NAP_MAX_NS; sleeping until the expected
 * end instead would make every measurement at least the estimate, and the estimate could only
 * grow). Not cuStreamSynchronize: a kernel that waits for something the
 * program does after this launch returns (a flag in mapped memory, a host function that takes
 * a lock the launching thread holds) would never end, so the wait gives up after
 * DRAIN_TIMEOUT_NS. 1 if the stream drained or the wait gave up (the GPU was busy until now);
 * 0 if it could not wait (the launch proceeds regardless: an error the stream holds is the
 * program's to see). */
static int drain(const gp_launch *l)
{
    gp_fn_cuStreamQuery query = GP_REAL(cuStreamQuery);
    gp_fn_cuThreadExchangeStreamCaptureMode exchange = GP_REAL(cuThreadExchangeStreamCaptureMode);
    if (!query || capturing(l)) {
        return 0;
    }
    /* Relaxed: another thread's capture in global mode would otherwise forbid the query. */
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    int swapped = exchange && exchange(&mode) == CUDA_SUCCESS;
    uint64_t start = gp_throttle_now_ns(), step = NAP_MIN_NS;
    CUresult rc = query(sync_handle(l));
    while (rc == CUDA_ERROR_NOT_READY && gp_throttle_now_ns() - start < DRAIN_TIMEOUT_NS) {
        nap(step);
        step = step * 2 < NAP_MAX_NS ? step * 2 : NAP_MAX_NS;
        rc = query(sync_handle(l));
    }
    if (swapped) {
        exchange(&mode);
    }
    return rc == CUDA_SUCCESS || rc == CUDA_ERROR_NOT_READY;
}

/* ---- the gate ---- */

static void wait_until(gate *g, uint64_t deadline)
{
    struct timespec ts = gp_throttle_timespec(deadline);
    pthread_cond_timedwait(&g->cv, &g->mu, &ts);
}

/* Ends the open phase: synchronises the stream (without the lock), then closes the duty
 * cycle. Called and returns with the lock held; *drained: the cycle the thread drained in. */
static void close_phase(gate *g, const gp_launch *l, uint64_t *drained)
{
    g->state = GATE_CLOSING;
    *drained = ++g->cycle;
    pthread_mutex_unlock(&g->mu);
    uint64_t t0 = gp_throttle_now_ns();
    int ok = drain(l);
    uint64_t t1 = ok ? gp_throttle_now_ns() : t0;
    pthread_mutex_lock(&g->mu);
    gp_duty_close(&g->duty, t0, t1);
    g->state = GATE_CLOSED;
    pthread_cond_broadcast(&g->cv);
}

/* A thread that finds the gate closing or closed drains its own stream once per cycle, so
 * that no queued work runs through the pause; if it had to wait, the pause covers that. */
static void drain_own(gate *g, const gp_launch *l, uint64_t *drained)
{
    uint64_t cycle = g->cycle;
    *drained = cycle;
    pthread_mutex_unlock(&g->mu);
    uint64_t t0 = gp_throttle_now_ns();
    int ok = drain(l);
    uint64_t t1 = gp_throttle_now_ns();
    pthread_mutex_lock(&g->mu);
    if (ok && t1 >= t0 + GP_DUTY_DRAINED_NS && g->cycle == cycle && g->state == GATE_CLOSED) {
        gp_duty_extend(&g->duty, t1);
    }
}

/* Returns once the launch may go. Called and returns with the lock held. The cycle a thread
 * drained in is kept for this launch only: a later launch cannot find the same cycle closed
 * (the gate reopens before the launch goes, and the next close is a new cycle). */
static void pass(gate *g, const gp_launch *l)
{
    uint64_t drained = UINT64_MAX;
    while (atomic_load(&g->active)) {
        uint64_t now = gp_throttle_now_ns();
        if (g->state == GATE_OPEN) {
            if (gp_duty_admit(&g->duty, now)) {
                gp_duty_launched(&g->duty, now);
                return;
            }
            close_phase(g, l, &drained);
        } else if (drained != g->cycle) {
            drain_own(g, l, &drained);
        } else if (g->state == GATE_CLOSED && now >= g->duty.reopen) {
            g->state = GATE_OPEN;
            gp_duty_open(&g->duty);
        } else {
            g->duty.waited = 1;
            if (g->state == GATE_CLOSING) {
                pthread_cond_wait(&g->cv, &g->mu);
            } else {
                wait_until(g, g->duty.reopen);
            }
        }
    }
}

void gp_throttle_before_launch(const gp_launch *l)
{
    if (!atomic_load_explicit(&enabled, memory_order_acquire)) {
        return;
    }
    gp_throttle_sampler_start();
    int dev = -1;
    if (gp_shim_stream_device(l->stream, &dev) != CUDA_SUCCESS || dev < 0 ||
        dev >= GP_SHARE_MAX_DEVICES) {
        return; /* no context: the launch fails in the driver, nothing to throttle */
    }
    atomic_fetch_or(&used_devices, 1u << dev);
    gate *g = &gates[dev];
    if (!atomic_load(&g->active) || capturing(l)) {
        return;
    }
    pthread_mutex_lock(&g->mu);
    pass(g, l);
    pthread_mutex_unlock(&g->mu);
}

/* ---- what the sampler tells the gates ---- */

void gp_throttle_set_shared(int dev, int shared)
{
    if (!atomic_load(&enabled) || dev < 0 || dev >= GP_SHARE_MAX_DEVICES) {
        return;
    }
    gate *g = &gates[dev];
    int want = atomic_load(&limit_policy) == GP_SHARE_CORE_STRICT || shared != 0;
    if (atomic_load(&g->active) == want) {
        return; /* only the sampler changes it */
    }
    pthread_mutex_lock(&g->mu);
    if (want && g->state != GATE_CLOSING) {
        g->state = GATE_OPEN;
        gp_duty_restart(&g->duty);
    }
    atomic_store(&g->active, want);
    pthread_cond_broadcast(&g->cv); /* waiting launches go when it switches off */
    pthread_mutex_unlock(&g->mu);
}

void gp_throttle_feedback(int dev, double util, unsigned int busy_processes)
{
    if (!atomic_load(&enabled) || dev < 0 || dev >= GP_SHARE_MAX_DEVICES) {
        return;
    }
    gate *g = &gates[dev];
    pthread_mutex_lock(&g->mu);
    if (atomic_load(&g->active)) {
        gp_duty_feedback(&g->duty, gp_throttle_now_ns(), util, busy_processes);
    }
    pthread_mutex_unlock(&g->mu);
}

void gp_throttle_stats_get(int dev, gp_throttle_stats *out)
{
    out->percent = atomic_load(&limit_percent);
    out->policy = atomic_load(&limit_policy);
    out->active = 0;
    out->rate = 1.0;
    out->est_us = 0;
    out->cycles = 0;
    if (!atomic_load(&enabled) || dev < 0 || dev >= GP_SHARE_MAX_DEVICES) {
        return;
    }
    gate *g = &gates[dev];
    pthread_mutex_lock(&g->mu);
    out->active = atomic_load(&g->active);
    out->rate = g->duty.rate;
    out->est_us = g->duty.est_ns / 1000.0;
    out->cycles = g->duty.cycles;
    pthread_mutex_unlock(&g->mu);
}
