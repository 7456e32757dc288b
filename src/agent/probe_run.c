/*
 * The prober (probe.h): a thread per probe of a replica. Each waits initial_delay_s, then runs
 * an attempt every period_s and counts it against the thresholds under the prober's lock. The
 * waits are on a monotonic condition variable, so gp_prober_stop wakes them at once; an attempt
 * under way ends within its timeout, and the stop joins the threads after it.
 */
#define _GNU_SOURCE
#include "agent/probe.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct worker {
    struct gp_prober *owner;
    gp_probe_conf conf; /* path and command are the worker's copies */
    char *metric;       /* the scrape's metric name; NULL: a probe */
    gp_probe_state st;
    bool used, started;
    pthread_t th;
} worker;

struct gp_prober {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    int attempts;
    gp_probe_target t; /* exec_prefix and exec_dir are the prober's copies */
    worker w[3];       /* readiness, liveness, scrape */
    bool has_metric;
    double metric;
};

static char **copy_argv(const char *const *v)
{
    size_t n = 0;
    while (v && v[n]) {
        n++;
    }
    char **out = calloc(n + 1, sizeof(*out));
    for (size_t i = 0; out && i < n; i++) {
        if (!(out[i] = strdup(v[i]))) {
            for (size_t j = 0; j < i; j++) {
                free(out[j]);
            }
            free(out);
            return NULL;
        }
    }
    return out;
}

static void free_argv(const char *const *v)
{
    for (size_t i = 0; v && v[i]; i++) {
        free((char *)v[i]);
    }
    free((void *)v);
}

static bool conf_ok(const gp_probe_conf *c)
{
    if (c->period_s < 1 || c->timeout_s < 1 || c->initial_delay_s < 0 || c->failure_threshold < 1 ||
        c->success_threshold < 1) {
        return false;
    }
    if (c->kind == GP_PROBE_KIND_EXEC) {
        return c->command && c->command[0];
    }
    return c->port >= 1 && c->port <= 65535;
}

/* Waits s seconds or until stopped; true when stopped. Called with mu held. */
static bool wait_s(gp_prober *p, int s)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += s;
    while (!p->stop) {
        if (pthread_cond_timedwait(&p->cv, &p->mu, &until) == ETIMEDOUT) {
            break;
        }
    }
    return p->stop;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    gp_prober *p = w->owner;
    pthread_mutex_lock(&p->mu);
    bool stopped = wait_s(p, w->conf.initial_delay_s);
    while (!stopped) {
        pthread_mutex_unlock(&p->mu);
        char msg[GP_PROBE_MSG_MAX];
        double v = 0;
        int ok = w->metric ? gp_probe_scrape(&p->t, w->conf.port, w->conf.path, w->metric,
                                             w->conf.timeout_s * 1000, &v, msg, sizeof(msg))
                           : gp_probe_once(&w->conf, &p->t, msg, sizeof(msg));
        pthread_mutex_lock(&p->mu);
        if (w->metric) {
            p->has_metric = ok == 1;
            p->metric = v;
        } else {
            gp_probe_state_observe(&w->st, &w->conf, ok == 1, msg);
            p->attempts++;
        }
        stopped = wait_s(p, w->conf.period_s);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int worker_init(worker *w, gp_prober *p, const gp_probe_conf *c, bool initially)
{
    gp_probe_state_init(&w->st, true);
    if (!c || c->kind == GP_PROBE_KIND_NONE) {
        return 0;
    }
    if (!conf_ok(c)) {
        return GP_EINVAL;
    }
    w->owner = p;
    w->conf = *c;
    w->conf.path = NULL;
    w->conf.command = NULL;
    if ((c->path && !(w->conf.path = strdup(c->path))) ||
        (c->command && !(w->conf.command = (const char *const *)copy_argv(c->command)))) {
        return GP_ENOMEM;
    }
    gp_probe_state_init(&w->st, initially);
    w->used = true;
    return 0;
}

/* The scrape as a worker: an HTTP "probe" whose answer is read for the metric. */
static int scrape_init(worker *w, gp_prober *p, const gp_probe_scrape_conf *c)
{
    if (!c) {
        return 0;
    }
    gp_probe_conf as = {.kind = GP_PROBE_KIND_HTTP,
                        .port = c->port,
                        .path = c->path,
                        .period_s = c->period_s,
                        .timeout_s = c->period_s,
                        .failure_threshold = 1,
                        .success_threshold = 1};
    if (!c->name || !c->name[0]) {
        return GP_EINVAL;
    }
    int rc = worker_init(w, p, &as, true);
    if (rc == 0 && !(w->metric = strdup(c->name))) {
        rc = GP_ENOMEM;
    }
    return rc;
}

static void worker_fini(worker *w)
{
    free(w->metric);
    free((char *)w->conf.path);
    free_argv(w->conf.command);
}

int gp_prober_start(const gp_probe_conf *readiness, const gp_probe_conf *liveness,
                    const gp_probe_scrape_conf *scrape, const gp_probe_target *t, gp_prober **out)
{
    *out = NULL;
    gp_prober *p = calloc(1, sizeof(*p));
    if (!p) {
        return GP_ENOMEM;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&p->mu, NULL);
    if (t) {
        p->t = *t;
        p->t.exec_prefix = NULL;
        p->t.exec_dir = NULL;
    }
    int rc = 0;
    if (t &&
        ((t->exec_prefix && !(p->t.exec_prefix = (const char *const *)copy_argv(t->exec_prefix))) ||
         (t->exec_dir && !(p->t.exec_dir = strdup(t->exec_dir))))) {
        rc = GP_ENOMEM;
    }
    if (rc == 0) {
        rc = worker_init(&p->w[0], p, readiness, false);
    }
    if (rc == 0) {
        rc = worker_init(&p->w[1], p, liveness, true);
    }
    if (rc == 0) {
        rc = scrape_init(&p->w[2], p, scrape);
    }
    for (int i = 0; rc == 0 && i < 3; i++) {
        if (p->w[i].used) {
            if (pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]) != 0) {
                rc = GP_ENOMEM;
            } else {
                p->w[i].started = true;
            }
        }
    }
    if (rc != 0) {
        gp_prober_stop(p);
        return rc;
    }
    *out = p;
    return 0;
}

void gp_prober_status(gp_prober *p, gp_probe_status *out)
{
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&p->mu);
    out->ready = p->w[0].st.pass;
    out->alive = p->w[1].st.pass;
    out->attempts = p->attempts;
    out->has_metric = p->has_metric;
    out->metric = p->metric;
    const char *why = !out->alive ? p->w[1].st.last : p->w[0].st.last;
    snprintf(out->why, sizeof(out->why), "%s", why);
    pthread_mutex_unlock(&p->mu);
}

void gp_prober_stop(gp_prober *p)
{
    if (!p) {
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < 3; i++) {
        if (p->w[i].started) {
            pthread_join(p->w[i].th, NULL);
        }
        worker_fini(&p->w[i]);
    }
    free_argv(p->t.exec_prefix);
    free((char *)p->t.exec_dir);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
