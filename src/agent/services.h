/*
 * The agent's side of services and notebooks: a prober (probe.h) per running replica whose
 * spec.json carries a readiness or liveness probe, or a service's Prometheus metric
 * (spec.autoscale.metric prometheus), started when the replica is first seen Running and stopped
 * when it is no longer running.
 *
 * Each round (gp_svc_round): a replica whose liveness fails is stopped with the reason
 * "LivenessFailed: <the probe's last failure>" (gp_replicas_stop): it is reported Failed with
 * that reason, and the controller restarts it by the restart path (an event ReplicaUnhealthy).
 * Heartbeats carry per replica (gp_svc_report) "ready" (a replica of a notebook or service: its
 * readiness, true when it has no readiness probe; absent for batch jobs) and "metric" (the last
 * scrape's value, when it found the metric).
 *
 * Where the probes reach the replica: over the host (--runtime none) connections go to
 * 127.0.0.1 and exec probes run the command in the replica's work directory, as the agent's
 * --user when one is set; in a sandbox exec probes run through `podman exec CONTAINER`.
 *
 * Threads: gp_svc_round and gp_svc_report from the agent's round only; the probers' threads
 * are their own (probe.h).
 */
#ifndef GP_AGENT_SERVICES_H
#define GP_AGENT_SERVICES_H

#include "agent/converge.h"
#include "agent/runtime.h"

#include <stdbool.h>

typedef struct gp_svc gp_svc;

/* What the probes need of the agent. Borrowed; must outlive the gp_svc. */
typedef struct gp_svc_env {
    const char *state_dir;
    const char *user;     /* the agent's --user ("" none): an exec probe over the host runs
                             as it */
    const gp_runtime *rt; /* NULL: jobs run over the host */
} gp_svc_env;

/* A new, empty table; NULL when out of memory. */
gp_svc *gp_svc_new(const gp_svc_env *env);
/* Stops every prober and frees s. Accepts NULL. */
void gp_svc_free(gp_svc *s);

/* Probers for the running replicas of local[0..nlocal) that need one, none for the others;
 * replicas whose liveness failed are stopped (logged). */
void gp_svc_round(gp_svc *s, const gp_local_replica *local, int nlocal);

/* The report of replica k: *ready -1 (not a notebook's or service's), 0 or 1; *has_metric and
 * *metric the last scrape. */
void gp_svc_report(gp_svc *s, const gp_replica_key *k, int *ready, bool *has_metric,
                   double *metric);

#endif
