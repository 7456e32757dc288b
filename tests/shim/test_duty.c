/*
 * The compute limit's controller (src/shim/duty.c) on a simulated GPU, in simulated time: no
 * clock, no thread, the same answer on every machine.
 *
 * The simulation is what throttle.c does on one stream: a program launches kernels of one
 * duration, each launch costing the CPU launch_ns and followed by gap_ns of the program's own
 * work; the GPU runs them in order, and the driver blocks a launch while more than queue_ns of
 * work is queued. When the controller closes a phase, the stream is synchronised (it returns
 * SYNC_NS after the GPU is idle) and the launch waits for the reopening. Every simulated second
 * the utilisation of that second (times a bias, standing for NVML's view) is fed back.
 */
#include "shim/duty.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

#define US      1000ull
#define MS      (1000 * US)
#define S       (1000 * MS)
#define SYNC_NS (5 * US)
#define WINDOW  S

typedef struct sim {
    gp_duty d;
    uint64_t kernel_ns, launch_ns, gap_ns, queue_ns;
    double bias;
    int feedback;
    /* state */
    uint64_t now, gpu_until, scheduled;
    uint64_t next_window, window_busy;
    uint64_t from, to, busy_from, busy_to;
    uint64_t max_wait;
} sim;

static void sim_init(sim *s, uint32_t percent, uint64_t kernel_ns)
{
    memset(s, 0, sizeof(*s));
    gp_duty_init(&s->d, percent, 0);
    s->kernel_ns = kernel_ns;
    s->launch_ns = 4 * US;
    s->queue_ns = 1024 * kernel_ns; /* the driver's queue holds about 1024 launches */
    s->bias = 1.0;
    s->feedback = 1;
    s->next_window = WINDOW;
}

/* GPU time done by time t, for now <= t with no launch in between: what was done by now, and
 * from now on the queue runs without a gap until gpu_until. */
static uint64_t busy_at(const sim *s, uint64_t t)
{
    uint64_t pending = s->gpu_until > s->now ? s->gpu_until - s->now : 0;
    uint64_t done = s->scheduled - pending;
    uint64_t end = s->gpu_until < t ? s->gpu_until : t;
    return done + (end > s->now ? end - s->now : 0);
}

static void advance(sim *s, uint64_t t)
{
    while (s->next_window <= t) {
        uint64_t b = busy_at(s, s->next_window);
        if (s->feedback) {
            gp_duty_feedback(&s->d, s->next_window, s->bias * (double)(b - s->window_busy) / WINDOW,
                             1);
        }
        s->window_busy = b;
        s->next_window += WINDOW;
    }
    if (s->from > s->now && s->from <= t) {
        s->busy_from = busy_at(s, s->from);
    }
    if (s->to > s->now && s->to <= t) {
        s->busy_to = busy_at(s, s->to);
    }
    s->now = t > s->now ? t : s->now;
}

static void launch(sim *s)
{
    uint64_t start = s->gpu_until > s->now ? s->gpu_until : s->now;
    s->gpu_until = start + s->kernel_ns;
    s->scheduled += s->kernel_ns;
    advance(s, s->now + s->launch_ns);
    if (s->gpu_until > s->now + s->queue_ns) {
        advance(s, s->gpu_until - s->queue_ns); /* the launch queue is full */
    }
    advance(s, s->now + s->gap_ns);
}

/* One launch through the gate (throttle.c's pass() on one thread). */
static void gate_launch(sim *s)
{
    while (!gp_duty_admit(&s->d, s->now)) {
        uint64_t t0 = s->now;
        advance(s, (s->gpu_until > s->now ? s->gpu_until : s->now) + SYNC_NS);
        uint64_t reopen = gp_duty_close(&s->d, t0, s->now);
        if (reopen > s->now) {
            s->d.waited = 1;
            s->max_wait = reopen - s->now > s->max_wait ? reopen - s->now : s->max_wait;
            advance(s, reopen);
        }
        gp_duty_open(&s->d);
    }
    gp_duty_launched(&s->d, s->now);
    launch(s);
}

/* Runs until `until`; returns the GPU's busy percent over [from, until). */
static double run(sim *s, uint64_t from, uint64_t until)
{
    s->from = from;
    s->to = until;
    while (s->now < until) {
        gate_launch(s);
    }
    return 100.0 * (double)(s->busy_to - s->busy_from) / (double)(until - from);
}

/* A single stream of back-to-back kernels is held to the limit, for kernels from 10 us to
 * 200 ms and limits from 10% to 90%. */
static void test_limits(void **state)
{
    (void)state;
    static const uint32_t percents[] = {10, 30, 50, 90};
    static const uint64_t kernels[] = {10 * US, 100 * US, 2 * MS, 5 * MS, 40 * MS, 200 * MS};
    for (size_t p = 0; p < sizeof(percents) / sizeof(percents[0]); p++) {
        for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
            sim s;
            sim_init(&s, percents[p], kernels[k]);
            /* Long kernels make long cycles: average over more of them. */
            uint64_t until = kernels[k] >= 40 * MS ? 200 * S : 40 * S;
            double got = run(&s, 10 * S, until);
            printf("limit=%u kernel_us=%llu busy=%.2f rate=%.3f\n", percents[p],
                   (unsigned long long)(kernels[k] / US), got, s.d.rate);
            assert_true(got >= percents[p] - 2.0 && got <= percents[p] + 2.0);
        }
    }
}

/* The open loop alone (no feedback) holds a busy stream to the limit within a point. */
static void test_open_loop(void **state)
{
    (void)state;
    sim s;
    sim_init(&s, 30, 2 * MS);
    s.feedback = 0;
    double got = run(&s, 1 * S, 20 * S);
    assert_true(got >= 29.0 && got <= 31.0);
    /* A phase of 2 ms kernels holds 15 ms of work: no launch waits much longer than the pause
     * it pays for. */
    assert_true(s.max_wait <= 45 * MS);
}

/* A program that leaves the GPU idle between kernels (a 1 ms kernel every 3 ms: 33%
 * unthrottled): held to 30% through the feedback, and not held below its own use by a limit of
 * 50%. */
static void test_cpu_bound(void **state)
{
    (void)state;
    sim s;
    sim_init(&s, 30, 1 * MS);
    s.gap_ns = 3 * MS - s.launch_ns;
    double got = run(&s, 15 * S, 60 * S);
    printf("cpu-bound limit=30 busy=%.2f rate=%.3f\n", got, s.d.rate);
    assert_true(got >= 27.0 && got <= 33.0);
    sim_init(&s, 50, 1 * MS);
    s.gap_ns = 3 * MS - s.launch_ns;
    got = run(&s, 15 * S, 60 * S);
    printf("cpu-bound limit=50 busy=%.2f rate=%.3f\n", got, s.d.rate);
    assert_true(got >= 31.0);
}

/* NVML seeing 25% more than the truth: the feedback holds what NVML sees to the limit. */
static void test_biased_measurement(void **state)
{
    (void)state;
    sim s;
    sim_init(&s, 40, 2 * MS);
    s.bias = 1.25;
    double got = run(&s, 15 * S, 60 * S);
    printf("biased busy=%.2f (seen %.2f) rate=%.3f\n", got, got * 1.25, s.d.rate);
    assert_true(got * 1.25 >= 38.0 && got * 1.25 <= 42.0);
}

/* The first phase holds one launch (nothing measured yet); the next phases learn the cost. */
static void test_first_phase(void **state)
{
    (void)state;
    gp_duty d;
    gp_duty_init(&d, 30, 0);
    assert_true(gp_duty_admit(&d, 1000));
    gp_duty_launched(&d, 1000);
    assert_false(gp_duty_admit(&d, 2000));
    /* The sync waited 2 ms: one launch took 2 ms; closed for 2 ms * 7/3. */
    uint64_t reopen = gp_duty_close(&d, 2000, 2000 + 2 * MS);
    assert_true(d.est_ns > 1.9 * MS && d.est_ns < 2.1 * MS);
    assert_true(reopen >= 2000 + 2 * MS + 4 * MS && reopen <= 2000 + 2 * MS + 5 * MS);
    gp_duty_open(&d);
    /* 15 ms of budget at 2 ms a launch: 8 launches. */
    int n = 0;
    for (uint64_t t = reopen; gp_duty_admit(&d, t); t += 10 * US) {
        gp_duty_launched(&d, t);
        n++;
    }
    assert_int_equal(n, 8);
}

/* After the program paused, the idle time counts as the pause: the gate reopens at once. */
static void test_idle_counts(void **state)
{
    (void)state;
    sim s;
    sim_init(&s, 30, 2 * MS);
    run(&s, 1 * S, 2 * S);
    advance(&s, s.now + 10 * S); /* the program does something else */
    uint64_t t0 = s.now;
    assert_false(gp_duty_admit(&s.d, t0)); /* the old phase's time is up: closed first */
    uint64_t reopen = gp_duty_close(&s.d, t0, t0 + SYNC_NS);
    assert_true(reopen <= t0);
}

/* Another stream that drained later grows the pause; an earlier one does not. */
static void test_extend(void **state)
{
    (void)state;
    gp_duty d;
    gp_duty_init(&d, 50, 0);
    gp_duty_launched(&d, 0);
    uint64_t reopen = gp_duty_close(&d, 1 * MS, 10 * MS); /* busy 10 ms: closed until 20 ms */
    assert_int_equal(reopen, 20 * MS);
    assert_int_equal(gp_duty_extend(&d, 5 * MS), 20 * MS);
    assert_int_equal(gp_duty_extend(&d, 15 * MS), 30 * MS);
}

/* Switched on over a deep queue: the first phase drains it, without a pause for it and without
 * taking it for the cost of a launch. */
static void test_restart(void **state)
{
    (void)state;
    gp_duty d;
    gp_duty_init(&d, 30, 0);
    gp_duty_launched(&d, 0);
    gp_duty_close(&d, 1 * MS, 3 * MS); /* 3 ms for one launch */
    gp_duty_open(&d);
    double est = d.est_ns;
    gp_duty_restart(&d);
    assert_true(gp_duty_admit(&d, 20 * MS));
    gp_duty_launched(&d, 20 * MS);
    assert_false(gp_duty_admit(&d, 20 * MS + 10 * US));
    /* Two seconds of work queued before: drained, the gate reopens at once. */
    assert_int_equal(gp_duty_close(&d, 21 * MS, 2 * S), 2 * S);
    assert_true(d.est_ns == est);
    gp_duty_open(&d);
    assert_true(gp_duty_admit(&d, 2 * S));
    gp_duty_launched(&d, 2 * S);
    assert_true(gp_duty_admit(&d, 2 * S + 10 * US)); /* back to phases of many launches */
}

/* The rate is raised only when launches waited, lowered always, and kept in [limit/4, 1]. */
static void test_feedback_bounds(void **state)
{
    (void)state;
    gp_duty d;
    gp_duty_init(&d, 40, 0);
    gp_duty_feedback(&d, 0, 0.1, 1);
    assert_true(d.rate == 0.4); /* below the limit but nobody waited: no credit */
    d.waited = 1;
    gp_duty_feedback(&d, 0, 0.1, 1);
    assert_true(d.rate > 0.5 && d.rate < 0.6);
    for (int i = 0; i < 20; i++) {
        d.waited = 1;
        gp_duty_feedback(&d, 0, 0.0, 1);
    }
    assert_true(d.rate == 1.0);
    for (int i = 0; i < 20; i++) {
        gp_duty_feedback(&d, 0, 1.0, 1);
    }
    assert_true(d.rate == 0.1);
    /* Two busy processes each correct half the error. */
    gp_duty_init(&d, 40, 0);
    gp_duty_feedback(&d, 0, 0.6, 2);
    assert_true(d.rate > 0.34 && d.rate < 0.36);
    /* Rate 1: everything passes, nothing is synchronised. */
    d.rate = 1.0;
    gp_duty_launched(&d, 0);
    assert_true(gp_duty_admit(&d, 10 * S));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits),      cmocka_unit_test(test_open_loop),
        cmocka_unit_test(test_cpu_bound),   cmocka_unit_test(test_biased_measurement),
        cmocka_unit_test(test_first_phase), cmocka_unit_test(test_idle_counts),
        cmocka_unit_test(test_extend),      cmocka_unit_test(test_feedback_bounds),
        cmocka_unit_test(test_restart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
