/*
 * The controller's history (ctl/history.h) as the heartbeat feeds it and the autoscaler reads
 * it: the job's samples made of its replicas' latest readings (stale ones left out), replica
 * series of their own, GPU memory utilisation against each share's limit (whole GPU, fraction,
 * MIG slice), the mean over a window across a set of jobs, and the refusals.
 */
#include "ctl/ctl.h"
#include "ctl/history.h"
#include "tests/unit/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define T0 INT64_C(1800000000000) /* a multiple of 10 s */

typedef struct fixture {
    gp_ctl_config cfg;
    gpupoold g;
    ctl_node node;
    ctl_job jobs[2];
} fixture;

static ctl_replica replicas0[2], replicas1[1];

/* Job 7: two replicas on whole GPUs 0 and 1 (16 GiB each); job 8: one replica, a fraction of GPU
 * 2 with 4 GiB, or a MIG slice of 2 of its 8 memory slices. */
static fixture *setup(bool mig)
{
    static fixture f;
    memset(&f, 0, sizeof(f));
    memset(replicas0, 0, sizeof(replicas0));
    memset(replicas1, 0, sizeof(replicas1));
    gp_ctl_config_default(&f.cfg);
    f.g.cfg = &f.cfg;
    f.g.history = ctl_history_new(&f.cfg);
    assert_non_null(f.g.history);
    f.node.id = 1;
    f.node.ngpus = 3;
    for (int i = 0; i < 3; i++) {
        f.node.gpus[i].mem_mib = 16384;
    }
    f.jobs[0].id = 7;
    f.jobs[0].spec.replicas = 2;
    f.jobs[0].replicas = replicas0;
    for (int r = 0; r < 2; r++) {
        replicas0[r].a.nshares = 1;
        replicas0[r].a.shares[0] =
            (gp_gpu_share){.gpu = (uint8_t)r, .milli = 1000, .mem_mib = 16384, .mig_start = -1};
    }
    f.jobs[1].id = 8;
    f.jobs[1].spec.replicas = 1;
    f.jobs[1].replicas = replicas1;
    replicas1[0].a.nshares = 1;
    replicas1[0].a.shares[0] =
        mig ? (gp_gpu_share){.gpu = 2,
                             .mig_start = 4,
                             .mig_memory_slices = 2,
                             .mig_compute_slices = 2}
            : (gp_gpu_share){.gpu = 2, .milli = 500, .mem_mib = 4096, .mig_start = -1};
    return &f;
}

static void teardown(fixture *f)
{
    ctl_history_free(f->g.history);
}

static void report(fixture *f, int job, int r, int util, int64_t mem, int64_t now)
{
    gp_wire_replica w = {.job = f->jobs[job].id, .replica = r, .util = util, .mem_mib = mem};
    ctl_history_replica(&f->g, &f->jobs[job], r, &f->node, &w, now);
}

static double avg(fixture *f, const int64_t *ids, int n, int replica, ctl_hist_metric m,
                  int64_t window_s, int64_t now)
{
    double v = -1;
    assert_int_equal(ctl_history_avg(&f->g, ids, n, replica, m, window_s, now, &v), 0);
    return v;
}

/* The job's sample is the mean (utilisation) and sum (memory) of its replicas' latest readings;
 * each replica has series of its own. */
static void test_job_and_replicas(void **state)
{
    (void)state;
    fixture *f = setup(false);
    const int64_t job = 7;
    report(f, 0, 0, 40, 4096, T0);     /* job: 40; memory 4096 of 16384 */
    report(f, 0, 1, 80, 8192, T0 + 1); /* job: 60; memory 12288 of 32768 */
    assert_true(fabs(avg(f, &job, 1, -1, CTL_HIST_GPU_UTIL, 60, T0 + 5) - 50) < 1e-6);
    assert_true(fabs(avg(f, &job, 1, 0, CTL_HIST_GPU_UTIL, 60, T0 + 5) - 40) < 1e-6);
    assert_true(fabs(avg(f, &job, 1, 1, CTL_HIST_GPU_UTIL, 60, T0 + 5) - 80) < 1e-6);
    assert_true(fabs(avg(f, &job, 1, -1, CTL_HIST_GPU_MEM_MIB, 60, T0 + 5) - (4096 + 12288) / 2.0) <
                1e-3);
    assert_true(fabs(avg(f, &job, 1, -1, CTL_HIST_GPU_MEM_UTIL, 60, T0 + 5) - (25 + 37.5) / 2) <
                1e-4);
    assert_true(fabs(avg(f, &job, 1, 1, CTL_HIST_GPU_MEM_UTIL, 60, T0 + 5) - 50) < 1e-4);
    double v;
    assert_int_equal(ctl_history_job_avg(&f->g, job, CTL_HIST_GPU_UTIL, 60, T0 + 5, &v), 0);
    assert_true(fabs(v - 50) < 1e-6);
    assert_int_equal(ctl_history_replicas(&f->g, job, 2), 3u);
    teardown(f);
}

/* A replica not heard from within nodes.heartbeat_timeout is left out of the job's samples; the
 * window reads only what is in it. */
static void test_stale_and_window(void **state)
{
    (void)state;
    fixture *f = setup(false);
    const int64_t job = 7;
    report(f, 0, 0, 10, -1, T0);
    int64_t later = T0 + f->cfg.nodes.heartbeat_timeout_ms + 10000;
    report(f, 0, 1, 90, -1, later); /* replica 0 is stale: the job's sample is 90 */
    assert_true(fabs(avg(f, &job, 1, -1, CTL_HIST_GPU_UTIL, 5, later) - 90) < 1e-6);
    double v;
    assert_int_equal(ctl_history_avg(&f->g, &job, 1, -1, CTL_HIST_GPU_MEM_MIB, 60, later, &v),
                     GP_ENOENT); /* no memory was reported */
    assert_int_equal(ctl_history_job_avg(&f->g, job, CTL_HIST_GPU_UTIL, 60, T0 + 3600 * 1000, &v),
                     GP_ENOENT); /* nothing in the window */
    assert_int_equal(ctl_history_job_avg(&f->g, 999, CTL_HIST_GPU_UTIL, 60, later, &v), GP_ENOENT);
    assert_int_equal(ctl_history_job_avg(&f->g, job, CTL_HIST_GPU_UTIL, 0, later, &v), GP_EINVAL);
    assert_int_equal(ctl_history_job_avg(&f->g, job, CTL_HIST_NJOB, 60, later, &v), GP_EINVAL);
    teardown(f);
}

/* Across a set of jobs (a service's replicas as jobs): the mean of all their samples. A job of
 * one replica answers for replica 0 with its job series. A fraction's memory limit is its
 * gpu_mem_mib, a MIG slice's its memory slices' part of the GPU. */
static void test_set_fraction_mig(void **state)
{
    (void)state;
    fixture *f = setup(false);
    const int64_t ids[] = {7, 8};
    report(f, 0, 0, 40, 0, T0);
    report(f, 0, 1, 80, 0, T0);
    report(f, 1, 0, 20, 1024, T0);
    /* job 7's samples 40 and 60, job 8's 20 */
    assert_true(fabs(avg(f, ids, 2, -1, CTL_HIST_GPU_UTIL, 60, T0 + 1) - 40) < 1e-6);
    assert_true(fabs(avg(f, &ids[1], 1, 0, CTL_HIST_GPU_UTIL, 60, T0 + 1) - 20) < 1e-6);
    assert_int_equal(ctl_history_replicas(&f->g, 8, 1), 0u);
    assert_true(fabs(avg(f, &ids[1], 1, -1, CTL_HIST_GPU_MEM_UTIL, 60, T0 + 1) - 25) < 1e-4);
    teardown(f);
    f = setup(true); /* 2 of 8 slices of 16384 MiB: 4096 */
    report(f, 1, 0, -1, 2048, T0);
    assert_true(fabs(avg(f, &ids[1], 1, -1, CTL_HIST_GPU_MEM_UTIL, 60, T0 + 1) - 50) < 1e-4);
    double v;
    assert_int_equal(ctl_history_job_avg(&f->g, 8, CTL_HIST_GPU_UTIL, 60, T0 + 1, &v), GP_ENOENT);
    teardown(f);
}

/* history.max_jobs 0 keeps nothing and answers nothing. */
static void test_off(void **state)
{
    (void)state;
    fixture *f = setup(false);
    ctl_history_free(f->g.history);
    f->cfg.history.max_jobs = 0;
    f->g.history = ctl_history_new(&f->cfg);
    assert_non_null(f->g.history);
    report(f, 0, 0, 40, 0, T0);
    double v;
    assert_int_equal(ctl_history_job_avg(&f->g, 7, CTL_HIST_GPU_UTIL, 60, T0, &v), GP_ENOENT);
    assert_int_equal(replicas0[0].hist_util, 40); /* the replica's latest is kept regardless */
    teardown(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_and_replicas),
        cmocka_unit_test(test_stale_and_window),
        cmocka_unit_test(test_set_fraction_mig),
        cmocka_unit_test(test_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
