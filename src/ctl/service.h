/*
 * Services (kind: service): replicas of an image with a port, kept healthy by probes, replaced
 * one by one, rolled to a new spec without dropping below the minimum ready, and scaled.
 *
 * The model. A service is a controller object: the job of kind service the user submitted,
 * never scheduled itself. At submission it is stored Running with revision 1 and no placement
 * (ctl_job_is_service). It owns replica jobs of one replica each, named NAME-N (N counts up per
 * service, never reused), of the same tenant, queue and priority class, whose status records
 * their owner and the revision of the service's spec they run. A replica job's spec is the
 * service's with replicas 1, restart_policy always and max_restarts 1000 (and
 * autoscale.min_replicas 1: the agent reads the metric to scrape from it), so scheduling,
 * quotas, metering, logs and restarts are the batch path's: a replica that fails or fails its
 * liveness probe is restarted by its restart policy; one that ends for good (its restarts used
 * up, cancelled by hand) is replaced. Everything is stored (the service's revision, replica
 * count, counter, rollout start and current spec in its status document), so a restarted
 * controller carries on; readiness and metric values are memory only and come back with the next
 * heartbeats.
 *
 * Each scheduling cycle (ctl_services_tick), per service:
 *   - no rollout under way: replica jobs of the current revision are created up to the
 *     replica count (event ReplicaCreated) and the surplus cancelled, the ones not ready first,
 *     then the newest (ReplicaStopped);
 *   - a rollout (revisions older than the service's remain): new replicas are created while the
 *     new revision has fewer than the count and the total is below count + max_surge; old ones
 *     that are not ready are stopped; a ready old one is stopped only while the ready replicas
 *     stay at or above count - max_unavailable (RollingUpdate events say each step). A new
 *     revision with no replica ready services.progress_deadline after the rollout began is
 *     reported once (RolloutStalled): the old replicas keep serving, and the rollout goes on if
 *     the new ones become ready. RolloutComplete when the last old replica is gone;
 *   - autoscaling (autoscale.enabled, no rollout under way): the HPA decision of
 *     gpupool/autoscale.h at most once a second, with the stabilisation windows of the spec,
 *     over the metric of the ready replicas: a Prometheus gauge, the mean of the last value the
 *     agent scraped from each; GPU utilisation or GPU memory utilisation, their mean over the
 *     last CTL_SERVICE_METRIC_WINDOW_S in the jobs' history (ctl/history.h; none with the
 *     history off, history.max_jobs 0, and then no scaling). A change of the replica count is
 * stored with an event ScaledUp or ScaledDown giving the metric, its value and the decision;
 *   - the service's reason says "R of N replicas ready (revision V)".
 * Events go to the service's history (and ReplicaUnhealthy to the replica job's as well).
 *
 * Balancing: ANY /v1/services/{name}/... goes through the proxy (proxy.h) to a ready replica
 * job chosen by ctl_service_pick in turn; GET /v1/services/{name} publishes the ready ones
 * (api_services.c). Each pick scans the jobs (as the reconciliation does).
 *
 * An update (ctl_service_update; POST /v1/jobs?update=true with the service's name, or
 * PUT /v1/services/{name}) replaces the spec: a new revision when it differs, a no-op when it is
 * the same. Cancelling a service cancels its replica jobs (ctl_service_cancel_replicas).
 *
 * Layer: changes. Runs in the committer, in its transactions (store first, then memory).
 */
#ifndef GP_CTL_SERVICE_H
#define GP_CTL_SERVICE_H

#include "ctl/context.h"

/* The window the autoscaler averages GPU utilisation and memory utilisation over (history.h). */
#define CTL_SERVICE_METRIC_WINDOW_S 10

/* The longest service name: its replica jobs add "-N" (up to 7 digits) within GP_JOB_NAME_MAX. */
#define CTL_SERVICE_NAME_MAX 48

/* j (just added, Pending, of kind service) becomes a service: revision 1, its replica count,
 * stored Running. */
int ctl_service_create(gpupoold *g, ctl_job *j, gp_diag *d);

/* A new spec for service svc (spec is taken on success: zeroed). *changed: whether it started a
 * new revision (false: the same spec). */
int ctl_service_update(gpupoold *g, ctl_job *svc, gp_jobspec *spec, bool *changed, gp_diag *d);

/* Cancels svc's active replica jobs (why: their reason). */
int ctl_service_cancel_replicas(gpupoold *g, const ctl_job *svc, const char *why, gp_diag *d);

/* Reconciles every service (see above), in its own transaction when something is to be done. */
int ctl_services_tick(gpupoold *g, int64_t now, gp_diag *d);

/* A replica job is ready: Running, its agent reporting its readiness probe passing. */
bool ctl_service_replica_ready(const ctl_job *r);

/* The replica job a request to svc goes to: its turn-th ready one (modulo their number; the
 * caller counts turns, round robin), or NULL when none is ready. Under the read lock. */
ctl_job *ctl_service_pick(ctl_state *st, const ctl_job *svc, unsigned turn);

/* The service's replica jobs that are not over, oldest first: *out malloc'd (caller frees), the
 * count returned (GP_ENOMEM). */
int ctl_service_replicas(ctl_state *st, const ctl_job *svc, ctl_job ***out);

/* Frees the autoscalers' memory (ctl_stop). */
void ctl_services_free(gpupoold *g);

#endif
