/*
 * gpupoold: the controller process — its state, the committer that serialises every change,
 * the scheduling cycle, and the HTTP API.
 *
 * Changes (API writes, scheduling cycles, agent reports) are ctl_op values run by one thread,
 * the committer. Handler threads enqueue an op and wait (ctl_run_op), or enqueue it with a
 * function the committer calls once it is committed (ctl_run_op_async: an HTTP handler defers
 * its answer and frees its thread); the committer takes every op queued,
 * runs them in one store transaction (a savepoint each) under the state lock and commits once,
 * then wakes the waiters and calls the done functions: many concurrent submits cost one fsync
 * (group commit), and none is answered before its COMMIT. After a group,
 * when a cycle was asked for (ctl_kick) or the scheduling interval has passed, the committer runs
 * a scheduling cycle and commits its decisions in their own transaction.
 *
 * Reads take the state lock (ctl_read_lock) and never the store, except job events, which are
 * read through a second store connection (WAL readers do not block the writer).
 */
#ifndef GP_CTL_SERVER_H
#define GP_CTL_SERVER_H

#include "ctl/context.h"
#include "ctl/txn.h"

/* Locks the data directory (datalock.h), opens the store, loads the state (creating the
 * defaults and the admin token on first start), and starts the committer. GP_ESTATE (another
 * gpupoold holds the data directory; d names its pid), GP_EIO and friends with d set. */
int ctl_start(gpupoold *g, const gp_ctl_config *cfg, gp_diag *d);
/* What ctl_start_with calls on the committer's store once it is open, before anything is read:
 * it may replace *s with a store wrapping it (which then owns it). 0, or an error with d set
 * (the start fails). Tests wrap the store in one that fails on purpose (store/store_fault.h). */
typedef int (*ctl_store_wrap_fn)(void *ctx, gp_store **s, gp_diag *d);
/* ctl_start, with the committer's store wrapped by wrap(ctx, ...) (NULL: as ctl_start). */
int ctl_start_with(gpupoold *g, const gp_ctl_config *cfg, ctl_store_wrap_fn wrap, void *ctx,
                   gp_diag *d);
/* Stops the committer (finishing queued ops), closes the store, releases the data directory. */
void ctl_stop(gpupoold *g);

/* The leader's part of a start (startup.c), under the state lock: loads the state, writes the
 * first start's defaults, loads again, gives every node a grace period for its agent to report
 * (a takeover's heartbeat clock starts now, not at zero), sets up the scheduler, metering and
 * the authentication table. Placements and their epochs are loaded as stored: running
 * replicas are untouched. The committer is started separately. On failure nothing it set up
 * is left running (d set). */
int ctl_lead_load(gpupoold *g, gp_diag *d);

/* The committer thread (commit.c), started and stopped by ctl_start and ctl_stop. */
int ctl_committer_start(gpupoold *g, gp_diag *d);
void ctl_committer_stop(gpupoold *g);
/* Marks nodes whose agent has been silent past nodes.heartbeat_timeout NotReady (memory only;
 * the committer calls it before each cycle). */
void ctl_check_liveness(gpupoold *g);

/* Runs op through the committer and waits for it. Returns op->rc. */
int ctl_run_op(gpupoold *g, ctl_op *op);
/* Queues op to the committer and returns at once, holding no thread while it waits. done(op) is
 * called exactly once: on the committer thread after the op's group committed (op->rc 0) or
 * failed (op->rc < 0, op->diag set), with no lock held; or at once on the caller's thread when
 * the controller is shutting down (GP_EUNAVAIL). From then on op is done's: the committer no
 * longer touches it. done must not wait for the committer (no ctl_run_op) and should be quick:
 * it delays the next group. The committer runs the ops queued when it stops, so a queued op is
 * always done. */
void ctl_run_op_async(gpupoold *g, ctl_op *op, void (*done)(ctl_op *op));
/* Runs fn(g, arg) on the caller's thread under the state lock, beside the committer: no store
 * transaction, no queue. For a change of memory only (nothing the store keeps), so that memory
 * still equals what the store has committed once the lock is released. fn returns -1 when it
 * declined, having changed nothing (the caller then goes through the committer), 0 when it
 * applied, 1 when it applied and a scheduling cycle is due (ctl_kick_node: the node's news).
 * Long-poll waiters of desired documents that moved are woken before the lock is released. Returns
 * false, without running fn or having it decline, unless this controller leads with its committer
 * running and its memory loaded (a follower, a deposed leader, a stopping one or a stale memory:
 * the committer's path answers as it does), and when the state lock is held (a group, a cycle, a
 * reader): it never waits for the lock. True when fn applied. */
bool ctl_run_memory(gpupoold *g, int (*fn)(gpupoold *g, void *arg), void *arg);
/* Asks for a scheduling cycle soon. Kicks coalesce: one pending kick stands for every kick made
 * before the cycle starts (ctl_cycle_due_ms says when that is). */
void ctl_kick(gpupoold *g);
/* The same for a node's own report (a heartbeat applied in memory): it may wait out a run of
 * cycles that found nothing to do. */
void ctl_kick_node(gpupoold *g);

/* When the committer runs its next cycle. */
typedef struct ctl_cycle_clock {
    int64_t last_ms;     /* when the last cycle ended (monotonic ms) */
    int64_t interval_ms; /* scheduler.interval */
    int64_t last_us;     /* how long the last cycle took */
    int futile;          /* cycles in a row that placed and evicted nothing */
    bool kicked;         /* a cycle was asked for since the last one started */
    bool by_change;      /* ... by a change other than a node's own report (ctl_kick) */
} ctl_cycle_clock;

/* The monotonic time the next cycle is due: the interval after the last one; when kicked, soon
 * after it, but no sooner than CTL_KICK_GAP_MS nor CTL_KICK_GAP_CYCLES times the last cycle's
 * duration (a cycle's cost grows with the pool: a stream of changes still gets most of the
 * committer). Each cycle in a row that changed nothing doubles that gap, up to
 * CTL_KICK_GAP_FUTILE_MS: kicks that keep finding nothing to place (nodes flapping on a starved
 * machine) coalesce into fewer cycles, and the first cycle that places or evicts something
 * brings the gap back. Only nodes' own reports wait so: a kick by any other change (a submit, a
 * quota raised, a node uncordoned, a job ended: by_change) is due at the kick gap whatever came
 * before, since it may be what lets the held work run. Pure. */
int64_t ctl_cycle_due_ms(const ctl_cycle_clock *c);
#define CTL_KICK_GAP_MS        50
#define CTL_KICK_GAP_CYCLES    4
#define CTL_KICK_GAP_FUTILE_MS 1000

/* Rebuilds the authentication table when the tokens or tenants changed (under the state lock). */
void ctl_auth_refresh(gpupoold *g);
/* The principal of a token hash: 0, or GP_EAUTH (unknown, expired or revoked). */
int ctl_auth_lookup(gpupoold *g, const char *hash, int64_t now, ctl_principal *out);

/* Runs one scheduling cycle now (the committer calls it; so do tests through an op). */
int ctl_schedule(gpupoold *g, gp_diag *d);
void ctl_cycle_buf_free(struct ctl_cycle_buf *b);

/* The HTTP handler of the whole API (router.c); ctx is the gpupoold. */
void ctl_http_handle(void *ctx, const gp_http_request *req, gp_http_response *resp);
/* The HTTP server's body_limit (router.c): proxy.max_body for the proxy's paths (proxy.h), 0
 * (http.max_body) for the rest. */
size_t ctl_http_body_limit(void *ctx, const char *method, const char *path);

#endif
