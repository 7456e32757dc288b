/*
 * The replicas this agent started and has not yet reported up, so that a replica is reported
 * Running as soon as it runs rather than at the next heartbeat: after a converge started
 * replicas, the agent looks at their directories every few milliseconds, and once one of them
 * is no longer starting (its supervisor wrote its first record: running, or already ended) it
 * heartbeats at once. Replicas that come up together go out in the same heartbeat, so the
 * starts of many replicas cost a few heartbeats, not one each.
 *
 * The watch lasts GP_STARTS_WATCH_MS after the last start: a replica still starting by then (an
 * image being pulled) is reported by the regular heartbeats. At most GP_STARTS_MAX replicas are
 * watched; later ones are left to the regular heartbeats.
 *
 * Pure: no I/O, no clock (the caller gives the time); the agent's one thread uses it.
 */
#ifndef GP_AGENT_STARTS_H
#define GP_AGENT_STARTS_H

#include "agent/converge.h"

#define GP_STARTS_WATCH_MS 3000
#define GP_STARTS_MAX      1024

typedef struct gp_starts {
    gp_replica_key keys[GP_STARTS_MAX]; /* started, not reported up yet */
    int n;
    int64_t until_ms; /* the watch ends then (the caller's monotonic clock) */
} gp_starts;

/* Records that k was started at now_ms (the watch then lasts GP_STARTS_WATCH_MS from now). */
void gp_starts_add(gp_starts *s, const gp_replica_key *k, int64_t now_ms);

/* Judges the watched replicas against what their directories say (local, from
 * gp_replicas_scan): 1 when one of them is no longer starting (a heartbeat is due now), 0 when
 * all still start (look again soon), -1 when none is watched (none started, or the watch ended:
 * it is then cleared). A watched replica without a directory counts as starting. */
int gp_starts_due(gp_starts *s, const gp_local_replica *local, int nlocal, int64_t now_ms);

/* After a heartbeat reported local: forgets the watched replicas it reported up (those no
 * longer starting, or gone). */
void gp_starts_reported(gp_starts *s, const gp_local_replica *local, int nlocal);

#endif
