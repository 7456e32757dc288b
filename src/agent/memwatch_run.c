/*
 * The GPU memory watch's thread (see memwatch_run.h).
 */
#include "agent/memwatch_run.h"

#include "agent/memwatch.h"
#include "agent/replicas.h"
#include "agent/usage.h"
#include "base/clock.h"
#include "base/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct gp_memwatch_run {
    gp_memwatch_run_config cfg;
    gp_memwatch *watch;
    gp_usage *usage;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* signalled by stop */
    bool stop;
};

/* The running replicas that hold a GPU memory limit somewhere, as gp_replicas_watch_info gives
 * them (one gone meanwhile is skipped quietly: the round sees it too) into *out (malloc'd),
 * *n of them. GP_EIO when the replicas cannot be listed (the pass is skipped: a missed
 * observation forgets nothing), GP_ENOMEM. */
static int limited_replicas(const gp_memwatch_run *r, gp_replica_watch **out, int *n)
{
    gp_local_replica *local = NULL;
    int nlocal = 0;
    gp_diag d;
    gp_diag_clear(&d);
    *out = NULL;
    *n = 0;
    if (gp_replicas_scan(r->cfg.state_dir, r->cfg.started_grace_ms, &local, &nlocal, &d) < 0) {
        GP_LOG(GP_LOG_DEBUG, "agent", "memwatch: %s", d.msg);
        return GP_EIO;
    }
    gp_replica_watch *reps = calloc((size_t)nlocal + 1, sizeof(*reps));
    for (int i = 0; reps && i < nlocal; i++) {
        if (local[i].state != GP_LOCAL_RUNNING ||
            gp_replicas_watch_info(r->cfg.state_dir, &local[i].key, &reps[*n], &d) < 0) {
            continue;
        }
        bool limited = false;
        for (int g = 0; g < reps[*n].use.ngpus; g++) {
            gp_memwatch_gpu *w = &reps[*n].use.gpus[g];
            w->uuid = w->index >= 0 && w->index < r->cfg.inv->ngpus
                          ? r->cfg.inv->gpus[w->index].uuid
                          : NULL;
            limited |= w->limit_mib > 0;
        }
        *n += limited;
    }
    free(local);
    *out = reps;
    return reps ? 0 : GP_ENOMEM;
}

/* Stops the replicas the watch answers, with the reason. */
static void stop_replicas(const gp_memwatch_run *r, const gp_memwatch_stop *stops, int nstop)
{
    for (int i = 0; i < nstop; i++) {
        gp_diag d;
        gp_diag_clear(&d);
        GP_LOG(GP_LOG_WARN, "agent", "memwatch stop job=%lld replica=%d epoch=%lld: %s",
               (long long)stops[i].key.job, stops[i].key.replica, (long long)stops[i].key.epoch,
               stops[i].reason);
        if (gp_replicas_stop(r->cfg.state_dir, &stops[i].key, false, stops[i].reason, &d) < 0) {
            GP_LOG(GP_LOG_WARN, "agent", "memwatch: stopping job=%lld replica=%d failed: %s",
                   (long long)stops[i].key.job, stops[i].key.replica, d.msg);
        }
    }
}

/* One pass: measure, observe, stop. */
static void pass(gp_memwatch_run *r)
{
    int n = 0;
    gp_replica_watch *reps = NULL;
    int rc = limited_replicas(r, &reps, &n);
    if (rc == GP_EIO) {
        return;
    }
    gp_memwatch_replica *use = calloc((size_t)n + 1, sizeof(*use));
    gp_memwatch_stop *stops = calloc((size_t)n + 1, sizeof(*stops));
    int nstop = GP_ENOMEM;
    if (rc == 0 && use && stops) {
        gp_usage_measure_memory(r->usage, r->cfg.nvml, r->cfg.inv->ngpus, reps, n);
        for (int i = 0; i < n; i++) {
            use[i] = reps[i].use;
        }
        nstop = gp_memwatch_observe(r->watch, gp_mono_ms(), use, n, stops, n);
    }
    if (nstop < 0) {
        GP_LOG(GP_LOG_WARN, "agent", "memwatch: out of memory");
    } else {
        stop_replicas(r, stops, nstop);
    }
    free(reps);
    free(use);
    free(stops);
}

static void *loop(void *arg)
{
    gp_memwatch_run *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        pthread_mutex_unlock(&r->mu);
        pass(r);
        pthread_mutex_lock(&r->mu);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        int64_t ns = until.tv_nsec + (r->cfg.interval_ms % 1000) * 1000000;
        until.tv_sec += (time_t)(r->cfg.interval_ms / 1000 + ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        while (!r->stop && pthread_cond_timedwait(&r->cv, &r->mu, &until) != ETIMEDOUT) {
        }
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void release(gp_memwatch_run *r)
{
    gp_memwatch_free(r->watch);
    gp_usage_free(r->usage);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

int gp_memwatch_run_start(const gp_memwatch_run_config *cfg, gp_memwatch_run **out, gp_diag *d)
{
    *out = NULL;
    if (cfg->interval_ms <= 0) {
        return gp_diag_set(d, GP_EINVAL, "memory watch interval: %lld ms",
                           (long long)cfg->interval_ms);
    }
    gp_memwatch_run *r = calloc(1, sizeof(*r));
    if (!r) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    r->cfg = *cfg;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    r->usage = gp_usage_new();
    if (!r->usage || gp_memwatch_new(cfg->grace_ms, &r->watch) < 0) {
        release(r);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc = pthread_create(&r->thread, NULL, loop, r);
    if (rc != 0) {
        release(r);
        return gp_diag_set(d, GP_EIO, "memory watch thread: error %d", rc);
    }
    *out = r;
    return 0;
}

void gp_memwatch_run_stop(gp_memwatch_run *r)
{
    if (!r) {
        return;
    }
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    release(r);
}
