/*
 * Metering: the usage ledger of the store (one row per replica placement) kept in step with the
 * placements, and the "used" figure of each open row from the agents' utilisation reports.
 *
 * Allocated time. A placement's row opens in the transaction that commits the placement
 * (ctl_meter_open, beside its placement.allocate audit record) and closes in the transaction that
 * ends it (ctl_meter_close, beside placement.free: a job's end, a preemption, a requeue, a
 * fault, a cancel, an idle stop), at the time of the event that records the end. So the ledger
 * has exactly one open row per live placement, and a crash can never leave one without the
 * other. Billing runs from the commit of the placement (its GPUs are held from then) to the
 * commit of its end.
 *
 * At start (ctl_meter_start) open rows are checked against the placements: a row whose
 * placement is gone is closed at the placement's end (the time of the job event that ended it,
 * else of its placement.free audit record, else the job's end, else now) and reported in the
 * log; a placement without an open row (made before the ledger existed) gets one from the job's
 * start. At each write of the used figures, rows of placements that memory no longer holds are
 * checked the same way.
 *
 * Used time. Each heartbeat's replica report may carry "util", the replica's mean GPU
 * utilisation in percent; used GPU-milli x ms grows by util / 100 x the time since the replica's
 * previous report (at most nodes.heartbeat_timeout) x the row's GPU-milli. A report without util
 * counts as not used. The figure lives in memory, is written when the row closes, and otherwise
 * every billing.used_flush_interval (default a minute; ctl_meter_tick) — never a write per
 * heartbeat. A crash loses at most that much of the utilisation evidence of open rows; it never
 * loses allocated time.
 *
 * Threads: everything runs under the state lock, in the committer except ctl_meter_report (also
 * on a heartbeat's own thread when the heartbeat changes nothing the store keeps), ctl_meter_used
 * (any thread holding the lock) and ctl_meter_prices (set once at start, read-only after).
 */
#ifndef GP_CTL_METER_H
#define GP_CTL_METER_H

#include "ctl/context.h"
#include "gpupool/meter.h"

/* Loads billing.price_table (gpupoold does not start on a bad one) and reconciles the ledger
 * with the placements loaded in g->st, in one transaction. Before the committer starts. */
int ctl_meter_start(gpupoold *g, gp_diag *d);
void ctl_meter_stop(gpupoold *g);

/* Opens the rows of j's new placement (n replicas), started at now. In the placement's
 * transaction. */
int ctl_meter_open(gpupoold *g, const ctl_job *j, const ctl_replica *replicas, int n, int64_t now,
                   gp_diag *d);
/* Closes the rows of j's current placement (none: nothing) at now. In the transaction that ends
 * it. */
int ctl_meter_close(gpupoold *g, const ctl_job *j, int64_t now, gp_diag *d);
/* A report of j's replica r (a live placement) at now, with util percent (-1: none). */
void ctl_meter_report(gpupoold *g, const ctl_job *j, int r, int util, int64_t now);
/* Writes the used figures and checks ended placements when billing.used_flush_interval has
 * passed since the last time; in its own transaction. */
int ctl_meter_tick(gpupoold *g, int64_t now, gp_diag *d);

/* The price table; NULL when billing.price_table is empty. */
const gp_meter_prices *ctl_meter_prices(const gpupoold *g);
/* The used figure of an open row as memory has it (stored: what the ledger says). */
int64_t ctl_meter_used(const gpupoold *g, int64_t job, int replica, int64_t epoch, int64_t stored);

#endif
