/*
 * The controller's counters and histograms (see metrics.h), and the classes their labels take:
 * XID severities from the fault table, reason classes of waiting jobs.
 */
#include "ctl/metrics.h"

#include "base/log.h"
#include "ctl/faults.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ctl_metrics_xid {
    char host[64];
    int gpu, xid;
    const char *severity;
    long long count;
};

struct ctl_metrics_http {
    int route; /* -1: unmatched */
    int method;
    int code;
    gp_prom_hist h;
};

/* Scheduling cycles: from half a millisecond to ten seconds. */
static const double cycle_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                      0.1,    0.25,  0.5,    1,     2.5,  5,     10};
/* API requests: from a millisecond to thirty seconds (long-polls that wait are answered later,
 * outside the handler, and are not observed). */
static const double http_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                     0.25,  0.5,    1,     2.5,  5,     10,   30};

static const char *const methods[] = {"GET",   "HEAD",    "POST",   "PUT",
                                      "PATCH", "OPTIONS", "DELETE", "OTHER"};
#define NMETHODS ((int)(sizeof(methods) / sizeof(methods[0])))

const char *ctl_restart_cause_name(ctl_restart_cause c)
{
    static const char *const names[CTL_RESTART_NCAUSES] = {"xid",  "node-lost", "maintenance",
                                                           "hung", "health",    "other"};
    return c >= 0 && c < CTL_RESTART_NCAUSES ? names[c] : "other";
}

void ctl_metrics_init(ctl_metrics *m)
{
    memset(m, 0, sizeof(*m));
    atomic_init(&m->alerts_sent, 0);
    atomic_init(&m->heartbeats_memory, 0);
    atomic_init(&m->heartbeats_store, 0);
    atomic_init(&m->alerts_failed, 0);
    for (int i = 0; i < CTL_RESTART_NCAUSES; i++) {
        atomic_init(&m->restarts[i], 0);
    }
    gp_prom_hist_init(&m->cycle, cycle_bounds,
                      (int)(sizeof(cycle_bounds) / sizeof(cycle_bounds[0])));
    pthread_mutex_init(&m->lock, NULL);
    atomic_init(&m->nhttp, 0);
    atomic_init(&m->warned, false);
}

void ctl_metrics_fini(ctl_metrics *m)
{
    free(m->xid);
    m->xid = NULL;
    m->nxid = m->capxid = 0;
    int n = atomic_load(&m->nhttp);
    for (int i = 0; i < n; i++) {
        free(m->http[i]);
        m->http[i] = NULL;
    }
    atomic_store(&m->nhttp, 0);
    pthread_mutex_destroy(&m->lock);
}

int64_t ctl_metrics_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void ctl_metrics_cycle(ctl_metrics *m, int64_t us)
{
    gp_prom_hist_observe(&m->cycle, (double)us / 1e6);
}

void ctl_metrics_restart(ctl_metrics *m, ctl_restart_cause c)
{
    if (c >= 0 && c < CTL_RESTART_NCAUSES) {
        atomic_fetch_add(&m->restarts[c], 1);
    }
}

/* Logs the first observation dropped for want of a series. */
static void dropped(ctl_metrics *m, const char *family)
{
    if (!atomic_exchange(&m->warned, true)) {
        GP_LOG(GP_LOG_WARN, "metrics",
               "family=%s series cap reached: further new label sets are not counted", family);
    }
}

const char *ctl_metrics_xid_severity(int xid)
{
    ctl_gpu_faults fresh;
    memset(&fresh, 0, sizeof(fresh));
    ctl_fault_action a;
    ctl_fault_decide(xid, &fresh, 1, &a); /* what the table does the first time */
    if (a.drain_gpu || a.drain_node || a.retire || a.jobs == CTL_JOBS_RESTART ||
        a.jobs == CTL_JOBS_RESTART_MULTI) {
        return "fatal";
    }
    return a.jobs == CTL_JOBS_FAIL ? "job" : "info";
}

void ctl_metrics_xid(ctl_metrics *m, const char *host, int gpu, int xid)
{
    pthread_mutex_lock(&m->lock);
    struct ctl_metrics_xid *e = NULL;
    for (int i = 0; i < m->nxid && !e; i++) {
        struct ctl_metrics_xid *x = &m->xid[i];
        if (x->gpu == gpu && x->xid == xid && strncmp(x->host, host, sizeof(x->host) - 1) == 0) {
            e = x;
        }
    }
    if (!e && m->nxid < CTL_METRICS_MAX_SERIES) {
        if (m->nxid == m->capxid) {
            int cap = m->capxid ? m->capxid * 2 : 16;
            struct ctl_metrics_xid *nx = realloc(m->xid, sizeof(*nx) * (size_t)cap);
            if (nx) {
                m->xid = nx;
                m->capxid = cap;
            }
        }
        if (m->nxid < m->capxid) {
            e = &m->xid[m->nxid++];
            snprintf(e->host, sizeof(e->host), "%s", host);
            e->gpu = gpu;
            e->xid = xid;
            e->severity = ctl_metrics_xid_severity(xid);
            e->count = 0;
        }
    }
    if (e) {
        e->count++;
    }
    pthread_mutex_unlock(&m->lock);
    if (!e) {
        dropped(m, "gpupool_xid_errors_total");
    }
}

static int method_index(const char *method)
{
    for (int i = 0; i < NMETHODS - 1; i++) {
        if (strcmp(method, methods[i]) == 0) {
            return i;
        }
    }
    return NMETHODS - 1;
}

/* The series of (route, method, code), made when new; NULL past the cap or out of memory.
 * Entries are only ever appended and never move, so a reader that loaded nhttp may use the
 * first nhttp without the lock. */
static struct ctl_metrics_http *http_series(ctl_metrics *m, int route, int method, int code)
{
    int n = atomic_load_explicit(&m->nhttp, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        struct ctl_metrics_http *e = m->http[i];
        if (e->route == route && e->method == method && e->code == code) {
            return e;
        }
    }
    pthread_mutex_lock(&m->lock);
    struct ctl_metrics_http *e = NULL;
    int now = atomic_load_explicit(&m->nhttp, memory_order_relaxed);
    for (int i = n; i < now && !e; i++) { /* added meanwhile */
        struct ctl_metrics_http *x = m->http[i];
        if (x->route == route && x->method == method && x->code == code) {
            e = x;
        }
    }
    if (!e && now < CTL_METRICS_MAX_HTTP && (e = malloc(sizeof(*e))) != NULL) {
        e->route = route;
        e->method = method;
        e->code = code;
        gp_prom_hist_init(&e->h, http_bounds, (int)(sizeof(http_bounds) / sizeof(http_bounds[0])));
        m->http[now] = e;
        atomic_store_explicit(&m->nhttp, now + 1, memory_order_release);
    }
    pthread_mutex_unlock(&m->lock);
    return e;
}

void ctl_metrics_http(ctl_metrics *m, int route, const char *method, int code, int64_t us)
{
    struct ctl_metrics_http *e = http_series(m, route < 0 ? -1 : route, method_index(method), code);
    if (e) {
        gp_prom_hist_observe(&e->h, (double)us / 1e6);
    } else {
        dropped(m, "gpupool_http_request_duration_seconds");
    }
}

/* ---- reason classes ----
 * The reasons come from the scheduler (src/core/sched*.c: "quota: tenant a uses ...", "capacity:
 * no node has ...") and from the controller (restarts, requeues, new jobs). A reason that says
 * the job can never be placed as things stand is "no-fit", whatever limit it names. */
typedef struct reason_rule {
    bool anywhere; /* text may appear anywhere; else the reason starts with it */
    const char *text;
    const char *cls;
} reason_rule;

static const reason_rule reason_rules[] = {
    {false, "unschedulable:", "no-fit"}, /* feasible.h: could never run */
    {true, "no node could hold it even when empty", "no-fit"},
    {true, "more than it can ever get", "no-fit"},
    {false, "quota:", "quota"},
    {false, "borrowing:", "queue"},
    {true, ": capability ", "queue"},
    {false, "capacity:", "capacity"},
    {false, "maintenance:", "maintenance"},
    {false, "gang:", "gang"},
    {false, "backfill:", "backfill"},
    {false, "preempted by", "priority"},
    {false, "reclaimed:", "reclaimed"},
    {false, "restarting", "restarting"},
    {false, "requeued", "requeued"},
    {false, "waiting for the next scheduling cycle", "new"},
    {false, "invalid", "invalid"},
    {true, ": does not exist", "invalid"},
};

const char *ctl_metrics_reason_class(const char *reason)
{
    for (size_t i = 0; i < sizeof(reason_rules) / sizeof(reason_rules[0]); i++) {
        const reason_rule *r = &reason_rules[i];
        if (r->anywhere ? strstr(reason, r->text) != NULL
                        : strncmp(reason, r->text, strlen(r->text)) == 0) {
            return r->cls;
        }
    }
    return "other";
}

/* ---- the text ---- */

static void write_counter(gp_prom *p, const char *name, const char *help, long long v)
{
    gp_prom_family(p, name, "counter", help);
    gp_prom_sample(p, name, NULL, (double)v);
}

void ctl_metrics_write(ctl_metrics *m, gp_prom *p, const char *(*route_pattern)(int route))
{
    gp_prom_family(p, "gpupool_scheduler_cycle_seconds", "histogram",
                   "Duration of the controller's scheduling cycles.");
    gp_prom_hist_write(p, "gpupool_scheduler_cycle_seconds", NULL, &m->cycle);

    gp_prom_family(p, "gpupool_job_restarts_total", "counter",
                   "Jobs put back in their queue after a fault they did not cause, by cause.");
    for (int c = 0; c < CTL_RESTART_NCAUSES; c++) {
        const char *labels[] = {"cause", ctl_restart_cause_name((ctl_restart_cause)c), NULL};
        gp_prom_sample(p, "gpupool_job_restarts_total", labels,
                       (double)atomic_load(&m->restarts[c]));
    }

    gp_prom_family(p, "gpupool_xid_errors_total", "counter",
                   "XID errors reported by agents, by node, GPU, XID and severity (fatal, job, "
                   "info).");
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->nxid; i++) {
        const struct ctl_metrics_xid *x = &m->xid[i];
        char gpu[16], xid[16];
        snprintf(gpu, sizeof(gpu), "%d", x->gpu);
        snprintf(xid, sizeof(xid), "%d", x->xid);
        const char *labels[] = {"Hostname", x->host,    "gpu",       gpu, "xid",
                                xid,        "severity", x->severity, NULL};
        gp_prom_sample(p, "gpupool_xid_errors_total", labels, (double)x->count);
    }
    pthread_mutex_unlock(&m->lock);

    gp_prom_family(p, "gpupool_http_request_duration_seconds", "histogram",
                   "Duration of API requests, by route pattern, method and status code.");
    int n = atomic_load_explicit(&m->nhttp, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const struct ctl_metrics_http *e = m->http[i];
        char code[16];
        snprintf(code, sizeof(code), "%d", e->code);
        const char *route = e->route < 0 ? "unmatched" : route_pattern(e->route);
        const char *labels[] = {"route", route, "method", methods[e->method], "code", code, NULL};
        gp_prom_hist_write(p, "gpupool_http_request_duration_seconds", labels, &e->h);
    }

    gp_prom_family(p, "gpupool_heartbeats_total", "counter",
                   "Agents' heartbeats by how they were applied: memory (nothing to store, "
                   "answered at once) or store (through the committer and a transaction).");
    const char *mem_labels[] = {"path", "memory", NULL}, *store_labels[] = {"path", "store", NULL};
    gp_prom_sample(p, "gpupool_heartbeats_total", mem_labels,
                   (double)atomic_load(&m->heartbeats_memory));
    gp_prom_sample(p, "gpupool_heartbeats_total", store_labels,
                   (double)atomic_load(&m->heartbeats_store));

    write_counter(p, "gpupool_alerts_sent_total", "Notifications delivered to Alertmanager.",
                  atomic_load(&m->alerts_sent));
    write_counter(p, "gpupool_alerts_failed_total",
                  "Notifications Alertmanager could not be given (after retries).",
                  atomic_load(&m->alerts_failed));
}
