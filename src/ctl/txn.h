/*
 * The transaction runner: every store transaction of the controller runs through ctl_txn_run.
 * It owns BEGIN, COMMIT and ROLLBACK; the alerts the transaction raises (notify.h: pending until
 * it commits, published then, dropped when it rolls back); and the reload of memory from the
 * store when a transaction that changed memory is rolled back, so that memory never holds what
 * the store lost.
 *
 * A body runs inside the transaction with a narrow context (ctl_txn). There are two kinds:
 *
 *   CTL_TXN_MEMORY  the body changes memory as it goes (each change: the store first, then
 *                   memory). When anything after BEGIN fails — the body or the COMMIT — the
 *                   transaction is rolled back and memory reloaded from the store.
 *   CTL_TXN_STORE   the body writes the store only; the caller applies its decision to memory
 *                   once ctl_txn_run returned 0. A failure rolls back and leaves memory alone.
 *
 * Steps (ctl_txn_step) put one change of a body in a savepoint: a failed step is rolled back to
 * it, with the alerts it raised, and memory is reloaded when the step says it had changed memory
 * before it failed (tx->dirty); that reload reads the transaction's own writes so far, so memory
 * equals the store at the savepoint. The rest of the body goes on.
 *
 * Every outcome leaves memory equal to what the store holds (committed, or for a step the open
 * transaction); when even the reload fails the controller stops being ready (g->ready).
 *
 * Threads: the committer, under the state lock; or ctl_start before the committer runs.
 */
#ifndef GP_CTL_TXN_H
#define GP_CTL_TXN_H

#include "ctl/context.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ctl_txn {
    gpupoold *g;              /* for changes that need more than what follows */
    gp_store *store;          /* the committer's connection, in the transaction */
    ctl_state *st;            /* memory */
    const gp_ctl_config *cfg; /* the configuration */
    int64_t now;              /* the wall clock at BEGIN, in ms */
    bool dirty; /* set by a failing step that changed memory first: the step's reload */
} ctl_txn;

/* A body or a step: 0, or a negative GP_E* with d set. */
typedef int (*ctl_txn_fn)(ctl_txn *tx, void *arg, gp_diag *d);

typedef enum ctl_txn_kind {
    CTL_TXN_MEMORY, /* the body changes memory: any failure after BEGIN reloads it */
    CTL_TXN_STORE,  /* the body writes the store only: a failure leaves memory alone */
} ctl_txn_kind;

/* Runs body(tx, arg) in one transaction (what: its name in the log, "scheduling cycle").
 * 0 once committed (alerts raised in it published). Otherwise the negative code with d set;
 * *ran (may be NULL) says whether the body was run and returned 0 (then the COMMIT failed), so
 * a caller can tell a failed BEGIN or body from a failed COMMIT. A COMMIT that fails is logged
 * here. */
int ctl_txn_run(gpupoold *g, const char *what, ctl_txn_kind kind, ctl_txn_fn body, void *arg,
                bool *ran, gp_diag *d);

/* Inside a body: runs fn(tx, arg) in a savepoint (see above). fn sets tx->dirty before it fails
 * when it had changed memory. Returns fn's result, or the savepoint's error. */
int ctl_txn_step(ctl_txn *tx, ctl_txn_fn fn, void *arg, gp_diag *d);

/* A tick over jobs: pick(g, j, now) says, under the state, which jobs have work; then one
 * CTL_TXN_MEMORY transaction (what: its name) runs step on each in its own step (arg: a
 * ctl_tick with the job's id and now; the step finds the job again and checks it still
 * applies). A failed step is logged and rolled back, the others stay. No transaction when no
 * job was picked. 0, or the transaction's error. */
typedef struct ctl_tick {
    int64_t id;
    int64_t now;
} ctl_tick;
int ctl_txn_each_job(gpupoold *g, const char *what,
                     bool (*pick)(gpupoold *g, const ctl_job *j, int64_t now), ctl_txn_fn step,
                     int64_t now, gp_diag *d);

/* Loads memory again from the store (what the connection sees: committed data, or inside a
 * transaction its writes so far), gives nodes their grace period and rebuilds the scheduler;
 * when that fails the controller stops being ready. The runner calls it; tests do too. */
void ctl_reload(gpupoold *g);

/* Rebuilds the scheduler over the current cluster model (after a load: the old one points into
 * the cluster model the load freed). */
int ctl_sched_reset(gpupoold *g, gp_diag *d);

/* How long one transaction of a scheduling cycle may spend writing its decisions, in ms; 0: no
 * bound (a store of its own: nothing but readers waits for it). A leader on a shared store
 * (leased) renews its lease under the state lock that the transaction holds, so a renewal can
 * wait for a whole transaction: it gets a quarter of what the lease leaves beyond one renewal
 * interval (3 s and 1 s: 500 ms), so that the renewal still comes in time on a slow store with
 * a large backlog; past it the transaction commits what it wrote and the next one goes on.
 * Pure. */
int64_t ctl_cycle_txn_budget_ms(int64_t lease_ttl_ms, int64_t renew_interval_ms, bool leased);
/* The deadline (gp_mono_ms) of a transaction of g's cycle starting now: now plus that budget, or
 * 0 for none. */
int64_t ctl_cycle_txn_deadline(gpupoold *g);
/* Whether a deadline of ctl_cycle_txn_deadline has passed (never for 0). */
bool ctl_cycle_txn_spent(int64_t deadline);

#endif
