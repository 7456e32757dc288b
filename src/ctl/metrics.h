/*
 * gpupoold's Prometheus metrics: the counters and histograms the controller updates as things
 * happen (ctl_metrics, one per gpupoold), and the text GET /metrics answers (metrics.c), which
 * adds gauges read from the state at scrape time. The names and labels are the contract of
 * docs/metrics.md; alert rules depend on them.
 *
 * Counters live in memory only: they start at 0 when gpupoold starts, as Prometheus expects of
 * a counter (rate() and increase() handle the reset).
 *
 * Labelled series are bounded: at most CTL_METRICS_MAX_SERIES XID series (Hostname, gpu, xid)
 * and CTL_METRICS_MAX_HTTP request-duration series (route, method, code). Routes are the route
 * table's patterns, so they are few; an observation that would need a series past the cap is
 * dropped (and logged once). Restart causes are a fixed set.
 *
 * Thread safety: every function here may be called from any thread. The plain counters are
 * atomics; the series tables have their own mutex, never held while waiting for anything else,
 * so the committer (XIDs, restarts) and request handlers (HTTP durations) never wait on a
 * scrape for longer than a copy of the table.
 */
#ifndef GP_CTL_METRICS_H
#define GP_CTL_METRICS_H

#include "net/prom.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define CTL_METRICS_MAX_SERIES 4096 /* XID series (Hostname, gpu, xid) */
#define CTL_METRICS_MAX_HTTP   1024 /* request-duration series (route, method, code) */

/* Why a job restarted after something it did not cause (gpupool_job_restarts_total{cause}). */
typedef enum ctl_restart_cause {
    CTL_RESTART_XID = 0,     /* an XID on one of its GPUs */
    CTL_RESTART_NODE_LOST,   /* its node went silent past nodes.lost_timeout */
    CTL_RESTART_MAINTENANCE, /* its node's maintenance deadline */
    CTL_RESTART_HUNG,        /* a replica reported hung */
    CTL_RESTART_HEALTH,      /* a health check drained one of its GPUs */
    CTL_RESTART_OTHER,       /* none of the above (a cause added without a class) */
    CTL_RESTART_NCAUSES,
} ctl_restart_cause;

/* "xid", "node-lost", "maintenance", "hung", "health", "other". */
const char *ctl_restart_cause_name(ctl_restart_cause c);

struct ctl_metrics_xid;
struct ctl_metrics_http;

typedef struct ctl_metrics {
    /* The Alertmanager notifier's: notifications delivered, and those that failed (after its
     * retries). Incremented with atomic_fetch_add by the notifier. */
    atomic_llong alerts_sent;
    atomic_llong alerts_failed;
    atomic_llong restarts[CTL_RESTART_NCAUSES];
    /* Agents' heartbeats accepted for processing: applied in memory under the state lock (they
     * changed nothing the store keeps), or queued to the committer (api_nodes.c). */
    atomic_llong heartbeats_memory;
    atomic_llong heartbeats_store;
    gp_prom_hist cycle; /* scheduling cycle duration, seconds */
    /* the series tables */
    pthread_mutex_t lock;
    struct ctl_metrics_xid *xid; /* array of nxid */
    int nxid, capxid;
    struct ctl_metrics_http *http[CTL_METRICS_MAX_HTTP]; /* each allocated once, never moved */
    atomic_int nhttp;                                    /* published entries of http */
    atomic_bool warned;                                  /* a series was dropped (logged once) */
} ctl_metrics;

/* gpupoold's start and stop (ctl_start, ctl_stop); fini frees the series. */
void ctl_metrics_init(ctl_metrics *m);
void ctl_metrics_fini(ctl_metrics *m);

/* A monotonic clock in microseconds, for durations. */
int64_t ctl_metrics_now_us(void);

/* One scheduling cycle took us microseconds. */
void ctl_metrics_cycle(ctl_metrics *m, int64_t us);
/* A job was put back in its queue after a fault of cause c. */
void ctl_metrics_restart(ctl_metrics *m, ctl_restart_cause c);
/* An agent reported XID xid on GPU gpu of node host (the severity comes from the fault table:
 * fatal, job or info). */
void ctl_metrics_xid(ctl_metrics *m, const char *host, int gpu, int xid);
/* A request took us microseconds and was answered code. route: the index of its route in
 * api_routes, or -1 when it matched none; method: the request's (only GET, HEAD, POST, PUT,
 * DELETE, PATCH and OPTIONS are told apart, others count as "OTHER"). */
void ctl_metrics_http(ctl_metrics *m, int route, const char *method, int code, int64_t us);

/* Writes the families of m (the cycle histogram, restarts, XIDs, request durations, alerts);
 * route_pattern names a route index of ctl_metrics_http. */
void ctl_metrics_write(ctl_metrics *m, gp_prom *p, const char *(*route_pattern)(int route));

/* The severity class of an XID by the fault table (faults.h): "fatal" (the GPU or node is taken
 * out of service, or its jobs are restarted elsewhere), "job" (the jobs on the GPU fail: an
 * application fault) or "info" (only counted: unknown XIDs, companions of another error, and
 * those acted on only when they recur). */
const char *ctl_metrics_xid_severity(int xid);
/* The class of a waiting job's reason (ctl_job.reason, as the scheduler or the controller wrote
 * it), for gpupool_jobs_pending{reason}: "quota", "queue", "capacity", "maintenance", "gang",
 * "no-fit", "backfill", "priority", "reclaimed", "restarting", "requeued", "new", "invalid" or
 * "other". */
const char *ctl_metrics_reason_class(const char *reason);

#endif
