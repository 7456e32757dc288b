/*
 * The compute limit: a kernel-launch throttle that holds a replica to a percentage of a GPU.
 *
 * Every launch hook (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel, cuGraphLaunch
 * and their per-thread-stream variants) calls gp_throttle_before_launch() before passing the
 * launch to the driver. The limit (percent of a GPU, and the policy: default = only while a
 * process outside the replica competes for the GPU, strict = always) is read at start-up from
 * the region header or the environment.
 *
 * How (docs/gpushare.md has the reasoning):
 *   - each device has a gate: a duty cycle over GPU time (duty.h). Launches pass while the
 *     phase's budget lasts; the launch that finds it spent synchronises its own stream (the
 *     queued work must finish, or it would run through the pause), and the gate stays closed
 *     for the pause the duty cycle asks for. Other threads that reach a closed gate synchronise
 *     their own streams once and wait (a condition variable on the monotonic clock).
 *   - a sampler thread (throttle_sampler.c), started at the first launch, reads NVML every
 *     100 ms: the replica's per-process SM utilisation (the pids of the region's slots, or this
 *     process), whether a process outside the replica was busy on the GPU in the last 5 s (or,
 *     without per-process figures, has a context on it), and feeds the measured
 *     utilisation of each 1 s window back into the gate's rate. Without per-process figures it
 *     falls back to the device's utilisation while no other process uses the GPU, and says so
 *     once in the log.
 *   - it logs `event=core_report` lines (requested against achieved), the first after three
 *     windows, then at growing intervals (10 s doubling to 10 min), and one at exit.
 *
 * Contract of gp_throttle_before_launch(): called on the launching thread, concurrently from
 * many threads, before the driver sees the launch; it may block (that is how launches are
 * delayed) but never fails the launch, and takes no lock of the allocation paths (only the
 * gate's own mutex, never held across a driver call or a wait). A launch into a stream that is
 * being captured (CUDA graphs) passes untouched: it runs nothing now, and synchronising a
 * capturing stream would invalidate the capture. Its own synchronisations run in the relaxed
 * capture mode, so they do not break another thread's capture.
 */
#ifndef GP_SHIM_THROTTLE_H
#define GP_SHIM_THROTTLE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "shim/cuda_types.h"

typedef struct gp_launch {
    CUstream stream;
    int ptds; /* launched through a _ptsz entry point: a NULL stream is the per-thread stream */
} gp_launch;

/* Sets the limit (percent 0..100, 0 or 100 = none; gp_share_core_policy); once at start-up. */
void gp_throttle_configure(uint32_t core_percent, uint32_t core_policy);
/* Limit currently configured. */
void gp_throttle_limit(uint32_t *core_percent, uint32_t *core_policy);
void gp_throttle_before_launch(const gp_launch *l);

/* ---- between the gates and the sampler ---- */

/* The clock both sides use: CLOCK_MONOTONIC in nanoseconds, a time on it as a timespec (for
 * nanosleep and for deadlines), and a condition variable whose timed waits use it. */
uint64_t gp_throttle_now_ns(void);
struct timespec gp_throttle_timespec(uint64_t ns);
void gp_throttle_cond_init(pthread_cond_t *cv);

/* Bit i: device i has seen a launch while a limit is set. */
uint32_t gp_throttle_devices(void);
/* Whether a process outside the replica competes for dev: 1, 0, or -1 when it cannot be told
 * (counts as 1). Under the default policy this switches the gate on and off; strict keeps it
 * on. Called by the sampler only. */
void gp_throttle_set_shared(int dev, int shared);
/* The replica's utilisation of dev over the last window (fraction) and how many of its
 * processes were busy in it: adjusts the gate's rate (gp_duty_feedback). */
void gp_throttle_feedback(int dev, double util, unsigned int busy_processes);

typedef struct gp_throttle_stats {
    uint32_t percent, policy;
    int active;      /* the gate applies now */
    double rate;     /* the fraction of time the gate allows */
    double est_us;   /* learned GPU time of a launch */
    uint64_t cycles; /* phases closed */
} gp_throttle_stats;
void gp_throttle_stats_get(int dev, gp_throttle_stats *out);

/* The sampler (throttle_sampler.c): started once, by the first launch under a limit; stopped
 * at exit (an atexit handler waits for it at most a few hundred milliseconds). */
void gp_throttle_sampler_start(void);
/* After fork, in the child: the thread is gone. */
void gp_throttle_sampler_forked(void);

#endif
