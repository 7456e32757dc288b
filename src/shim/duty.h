/*
 * The compute limit's controller: a duty cycle over GPU time, pure (no clock, no driver, no
 * globals), so that it can be tested on a simulated GPU (tests/shim/test_duty.c).
 *
 * Model. A replica held to a fraction f of a GPU may keep the GPU busy for f of the wall time.
 * Kernel launches are asynchronous, so delaying launches is not enough: work already queued
 * would run through any pause. The controller therefore works in phases:
 *
 *   open    launches pass. Each is charged the GPU time a launch is expected to take (est_ns,
 *           learned from measurements, below); the phase ends when the charge reaches the
 *           budget, rate * period_ns, or when that much wall time has passed since its first
 *           launch. The first launch of a phase always passes.
 *   closed  the thread whose launch found the budget spent synchronises its stream (the
 *           caller does that; see throttle.c), so the work of the phase is done when the sync
 *           returns: the phase kept the GPU busy for at most busy = end - start, end being
 *           when the GPU went idle. The gate then stays closed until end + busy * (1/rate - 1),
 *           so the phase and its pause together keep the GPU busy `rate` of the time. Idle time
 *           before the sync (the program paused) counts towards the pause: after a long idle
 *           the gate reopens at once.
 *
 * Learning the cost of a launch: a phase whose sync had to wait (the GPU was still busy) ran
 * busy/launches per launch; est_ns follows that (halfway per phase). A phase whose sync did not
 * wait shows only an upper bound, which can lower est_ns but not raise it. Until a first
 * measurement, a phase holds one launch. The estimate is per gate, not per kernel: a program
 * that switches from short kernels to long ones queues too much in one phase, which the pause
 * after it pays back (the average holds; one cycle is long), and the next phase has learned.
 *
 * Feedback: the open-loop cycle holds a single busy stream to `rate` exactly; measured
 * utilisation (NVML, see throttle.c) corrects the rest (programs that leave the GPU idle
 * within a phase, several processes in one replica, what NVML counts): every window,
 * rate += gain * (target - measured), clamped to [target / 4, 1]. The rate is raised only when
 * launches had to wait in that window, or wait through it (a program that does not use its
 * share does not earn credit for later), and lowered always.
 *
 * Times are nanoseconds on one monotonic clock. A gp_duty is not locked: its owner serialises.
 */
#ifndef GP_SHIM_DUTY_H
#define GP_SHIM_DUTY_H

#include <stdint.h>

/* Period of one open + closed cycle at the target rate: short against NVML's sample period
 * (200 ms on an H100, so each sample sees several cycles), long against a sync (microseconds). */
#define GP_DUTY_PERIOD_NS (50ull * 1000 * 1000)
/* A sync that returned sooner than this did not wait for the GPU. */
#define GP_DUTY_DRAINED_NS (50ull * 1000)
/* Integral gain of the feedback, per window. */
#define GP_DUTY_GAIN 0.5

typedef struct gp_duty {
    double target;      /* the limit, a fraction in (0, 1] */
    double rate;        /* the fraction the gate allows, adjusted by feedback */
    uint64_t period_ns; /* one cycle at `rate` */
    double est_ns;      /* expected GPU time of one launch; 0: not measured yet */
    /* The open phase. */
    uint64_t start; /* first launch of the phase */
    uint64_t last;  /* latest launch */
    double charged; /* est_ns summed over the phase's launches */
    uint32_t launches;
    /* The last closed phase. */
    uint64_t closed_start, closed_end, reopen;
    int closed;  /* between gp_duty_close and gp_duty_open */
    int restart; /* the next phase only drains what was queued before (gp_duty_restart) */
    int waited;  /* a launch waited since the last feedback */
    uint64_t cycles;
} gp_duty;

/* A controller for percent (1..100) of a GPU; period_ns 0 means GP_DUTY_PERIOD_NS. */
void gp_duty_init(gp_duty *d, uint32_t percent, uint64_t period_ns);
/* May a launch at `now` join the open phase? 1: yes (then gp_duty_launched); 0: close it. */
int gp_duty_admit(const gp_duty *d, uint64_t now);
void gp_duty_launched(gp_duty *d, uint64_t now);
/* The phase was closed: a sync started at sync_start returned at sync_end (sync_end ==
 * sync_start when no sync could be made). Learns, and returns when the gate reopens. */
uint64_t gp_duty_close(gp_duty *d, uint64_t sync_start, uint64_t sync_end);
/* Another stream of the closed phase drained at `end` (a later sync that waited): the pause
 * grows to cover it. Returns the new reopen time. */
uint64_t gp_duty_extend(gp_duty *d, uint64_t end);
/* Starts a new open phase (the first launch sets its start). */
void gp_duty_open(gp_duty *d);
/* The gate starts to apply to streams that may hold work queued while it did not (the default
 * policy switching on): the next phase holds one launch and ends by draining that work, with
 * no pause and nothing learned from it (it was not this cycle's). */
void gp_duty_restart(gp_duty *d);
/* Feedback at `now`: utilisation measured over the last window, a fraction (may exceed 1 when
 * several processes add up); share: how many processes of the replica the window saw use the
 * GPU (1 when unknown), each correcting its part. Launches count as waiting when one waited in
 * the window or the gate is closed until after `now` (a launch waits through it). */
void gp_duty_feedback(gp_duty *d, uint64_t now, double measured, unsigned int share);

#endif
