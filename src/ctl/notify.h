/*
 * Alerts from the controller to Alertmanager-compatible receivers (alerts.alertmanager): the
 * events an operator wants told about without a Prometheus rule in between, posted as
 * Alertmanager API v2 alerts (POST URL/api/v2/alerts, a JSON array).
 *
 * What is sent, with labels alertname, severity, source="gpupoold" and those of the object:
 *   GpuDrained              warning   Hostname, gpu, UUID, model; resolved by the undrain
 *   JobRestartedAfterFault  warning   gpupool_job, gpupool_job_id, tenant, queue
 *   NodeLost                critical  Hostname; while the node stays lost, resolved when it
 *                                     reports again (or is deleted)
 *   TenantQuotaExhausted    warning   tenant; while jobs of the tenant wait for its quota (the
 *                                     reason class "quota" of metrics.h; not a job the quota can
 *                                     never hold), resolved when none do
 *   and what others raise through ctl_notify (JobIdleStopped).
 * The job labels are gpupool_job and gpupool_job_id, as on the agents' metrics, so that one
 * Alertmanager route matches both. annotations: summary, description; generatorURL: the
 * object's API URL under alerts.external_url (none when it is empty).
 *
 * Events and conditions. An event (a drain, a restart) is sent once, with endsAt its start plus
 * alerts.resolve_after: Alertmanager resolves it by itself. A condition (a lost node, a tenant
 * blocked by its quota) is looked at after every scheduling cycle: it is sent when it starts,
 * sent again every half of alerts.resolve_after while it lasts (endsAt moves on each time, so it
 * never lapses while true), and sent resolved (endsAt now) when it ends. The conditions are
 * kept in memory only: a restarted controller sends those still true again, which Alertmanager
 * merges with what it has.
 *
 * Only committed changes are told. An event is raised (ctl_notify) inside the committer's
 * transaction, under the state lock, and kept in a pending list; the committer publishes the
 * list once the transaction commits (ctl_notify_publish) and drops what a rolled-back savepoint
 * or transaction raised (ctl_notify_mark / ctl_notify_rollback). Raising and publishing never
 * block and do no I/O: they build the alert's JSON document and move it to the sender's queue.
 *
 * The sender is one thread. Its queue is bounded (CTL_NOTIFY_QUEUE alerts): when full, the
 * oldest alert is dropped and counted failed, and the sender logs the drops. Each receiver has
 * its own place in the queue, so one that is down delays no other: the sender posts up to
 * CTL_NOTIFY_BATCH alerts at a time to each; a transport error or a 5xx answer is retried with
 * exponential backoff (ctl_notify_next_try) until alerts.retry_max has passed since the first
 * failure, then the batch is counted failed for that receiver and dropped; a 4xx answer (the
 * receiver refuses the alerts) is counted failed at once.
 *
 * Counters (g->metrics.alerts_sent and alerts_failed: gpupool_alerts_sent_total and
 * gpupool_alerts_failed_total), per receiver and alert: sent when a receiver took it; failed
 * when dropped from the full queue, given up after retry_max, or refused.
 *
 * Active alerts: every published alert also goes to the list of active alerts (alerts_active.h,
 * GET /v1/alerts), whether or not receivers are configured: with alerts.alertmanager empty the
 * notifier still raises, watches the conditions and publishes, only no sender thread runs and
 * nothing is sent.
 *
 * Threads: everything below but start, stop and ctl_notify_active runs in the committer with
 * the state lock held. Before ctl_notify_start (tests that start no notifier) g->notify is NULL
 * and all of it does nothing.
 */
#ifndef GP_CTL_NOTIFY_H
#define GP_CTL_NOTIFY_H

#include "ctl/context.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_NOTIFY_QUEUE 1024 /* alerts waiting for the sender, at most */
#define CTL_NOTIFY_BATCH 64   /* alerts per POST, at most */
#define CTL_NOTIFY_URLS  8    /* receivers, at most (alerts.alertmanager's bound) */

/* One alert, as its raiser describes it. Everything is borrowed for the call only: ctl_notify
 * copies what it needs. */
typedef struct ctl_alert {
    const char *name;        /* alertname, e.g. "JobIdleStopped"; required */
    const char *severity;    /* "critical", "warning" or "info"; NULL: "warning" */
    const ctl_node *node;    /* label Hostname; NULL: none */
    const ctl_gpu_info *gpu; /* one of node->gpus: labels gpu, UUID, model; NULL: none */
    const ctl_job *job;      /* labels gpupool_job, gpupool_job_id, queue, tenant; NULL: none */
    const char *tenant;      /* label tenant, when there is no job; NULL: none */
    const char *summary;     /* one line */
    const char *description; /* what happened, why, what follows */
    int64_t starts_ms;       /* wall clock; 0: now */
    int64_t ends_ms;         /* 0: starts_ms + alerts.resolve_after */
    bool resolved;           /* the condition is over: endsAt is now */
} ctl_alert;

/* What the alert's document needs besides the alert. */
typedef struct ctl_alert_ctx {
    int64_t now_ms;
    int64_t resolve_after_ms;
    const char *external_url; /* "" or NULL: no generatorURL */
    const char *job_tenant;   /* the job's tenant name (a->job); NULL: none */
} ctl_alert_ctx;

/* The alert as Alertmanager's API v2 takes it: {"labels", "annotations", "startsAt", "endsAt",
 * "generatorURL"}; empty labels and annotations are left out. Pure. New reference, or NULL
 * when out of memory or a->name is missing. */
json_t *ctl_alert_doc(const ctl_alert *a, const ctl_alert_ctx *c);

/* "2024-05-01T12:00:00.250Z" for a wall-clock time in ms (buf: at least 32 bytes). Pure. */
void ctl_notify_time(int64_t ms, char *buf, size_t cap);

/* The pause before try number attempt + 1 after attempt failed ones (attempt >= 1): 1 s, 2 s,
 * 4 s, ... at most 60 s. Pure. */
int64_t ctl_notify_backoff_ms(int attempt);
/* When to try again after attempt failed tries, the first failed at first_ms, the latest at
 * now_ms: now_ms + the backoff, or -1 when that is more than retry_max_ms after first_ms (give
 * up). Pure. */
int64_t ctl_notify_next_try(int64_t first_ms, int attempt, int64_t now_ms, int64_t retry_max_ms);

/* Makes the notifier (g->notify), and starts the sender when g->cfg->alerts.alertmanager names
 * receivers. 0, or GP_ENOMEM / GP_EINVAL (a URL the HTTP client refuses) / GP_EIO with d set
 * (g->notify NULL). */
int ctl_notify_start(gpupoold *g, gp_diag *d);
/* Stops the sender after one last try of what is queued (no retries), frees the notifier. After
 * the committer has stopped. */
void ctl_notify_stop(gpupoold *g);

/* Raises an alert: pending until the transaction commits (committer, state lock). Ops (API
 * requests, heartbeats) need nothing more: the committer rolls back what a failed op raised. A
 * transaction of the cycle's own (ctl_recovery_tick's kind) takes ctl_notify_mark before BEGIN
 * and calls ctl_notify_rollback with it when it rolls back. */
void ctl_notify(gpupoold *g, const ctl_alert *a);
/* The pending list's length, to roll back to (savepoints). */
size_t ctl_notify_mark(gpupoold *g);
/* Drops what was raised after mark (the savepoint or transaction was rolled back). */
void ctl_notify_rollback(gpupoold *g, size_t mark);
/* Hands the pending alerts to the active list and the sender (their transaction committed). */
void ctl_notify_publish(gpupoold *g);

/* The active alerts at now_ms, as ctl_alerts_active_list answers them (tenant not NULL: a
 * user's view); {"items": []} without a notifier. Any thread, between start and stop. New
 * reference, or NULL when out of memory. */
json_t *ctl_notify_active(gpupoold *g, const char *tenant, int64_t now_ms);

/* The conditions, raised, repeated or resolved as they start, last or end; published with the
 * next ctl_notify_publish. Lost nodes: after every cycle. Tenants whose jobs wait for their
 * quota: from the reasons of a scheduling cycle's waiting jobs (NULL, 0: none waits). */
void ctl_notify_nodes(gpupoold *g, int64_t now_ms);
void ctl_notify_quota(gpupoold *g, const gp_sched_wait *waiting, int nwaiting, int64_t now_ms);

/* The events this file knows how to describe, raised by their places in the committer. */
/* GPU gpu of n went out of service (resolved: came back; since_ms: when it was drained). */
void ctl_notify_gpu_drained(gpupoold *g, const ctl_node *n, int gpu, bool resolved,
                            int64_t since_ms);
/* Job j was put back in its queue after a fault (cause: what happened). */
void ctl_notify_job_restarted(gpupoold *g, const ctl_job *j, const char *cause);
/* Job j was stopped for being idle (idle.h) on node (its first replica's; "" unknown). */
void ctl_notify_job_idle(gpupoold *g, const ctl_job *j, const char *node, const char *why);

#endif
