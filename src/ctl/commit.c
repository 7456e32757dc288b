/*
 * The committer: one thread runs every change, grouping those that arrive together into one
 * store transaction (see server.h).
 *
 * Invariant: memory equals what the store has committed whenever the state lock is free. A
 * group holds the lock from BEGIN to COMMIT and is one transaction of the runner (txn.h), each op
 * a step of it: an op that fails is rolled back to its savepoint and has not touched memory; an
 * op whose audit record cannot be written after it ran is rolled back too, and memory reloaded;
 * a COMMIT that fails reloads memory from the store. Long-poll
 * waiters of desired documents are woken (ctl_desired_publish) after the commit, before the
 * lock is released, so what they are answered has been committed. Alerts raised by a change
 * (notify.h) go to the sender likewise, after the commit; those of a rolled-back op or group are
 * dropped.
 */
#include "ctl/audit.h"
#include "base/clock.h"
#include "ctl/leader.h"
#include "ctl/notify.h"
#include "ctl/proxy_pool.h"
#include "ctl/proxy_state.h"
#include "ctl/server.h"

#include "base/log.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t ctl_now_ms(void)
{
    return gp_wall_ms();
}

void ctl_state_lock(ctl_state *st)
{
    __atomic_add_fetch(&st->lock_wanted, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&st->lock);
    __atomic_sub_fetch(&st->lock_wanted, 1, __ATOMIC_SEQ_CST);
}

void ctl_state_unlock(ctl_state *st)
{
    pthread_mutex_unlock(&st->lock);
}

void ctl_read_lock(gpupoold *g)
{
    ctl_state_lock(&g->st);
}

void ctl_read_unlock(gpupoold *g)
{
    ctl_state_unlock(&g->st);
}

/* The longest the committer waits for the threads waiting for the state lock to get it before
 * it takes the lock for its next group. */
#define LET_IN_MAX_US 2000

/* Before the committer takes the state lock: lets the threads waiting for it go first, for up to
 * LET_IN_MAX_US (each of them takes it when the lock is free and the committer yields). */
static void let_waiters_in(ctl_state *st)
{
    for (int us = 0; us < LET_IN_MAX_US && __atomic_load_n(&st->lock_wanted, __ATOMIC_SEQ_CST) > 0;
         us += 50) {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

/* One op, a step of its group: run, then its audit record in the same savepoint. A record that
 * cannot be written undoes the change, and memory, which run may already have changed (its own
 * record, or one of several placements it ended), is reloaded by the runner. */
static int op_step(ctl_txn *tx, void *arg, gp_diag *d)
{
    ctl_op *op = arg;
    gpupoold *g = tx->g;
    g->op_now = op;
    int rc = op->run(g, op, d);
    if (rc == 0) {
        rc = ctl_audit_op(g, op, d);
        tx->dirty = rc < 0;
    }
    tx->dirty |= op->audit.failed || (rc < 0 && op->dirty);
    g->op_now = NULL;
    return rc;
}

typedef struct group {
    ctl_op *ops;
    bool kick, by_change; /* by_change: a kick not by a node's own report */
} group;

/* The body of a group: each op in its own step; an op that fails fails alone. */
static int group_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    (void)d;
    group *gr = arg;
    for (ctl_op *op = gr->ops; op; op = op->next) {
        gp_diag_clear(&op->diag);
        op->status = op->status ? op->status : 200;
        op->rc = ctl_txn_step(tx, op_step, op, &op->diag);
        if (op->rc < 0 && op->diag.code == 0) {
            gp_diag_set(&op->diag, op->rc, "%s", gp_strerror(op->rc));
        }
        if (op->rc < 0) {
            json_decref(op->result);
            op->result = NULL;
        }
        gr->kick |= op->rc == 0 && op->kick;
        gr->by_change |= op->rc == 0 && op->kick && !op->node_kick;
    }
    return 0;
}

/* Runs a group of ops in one transaction. When it does not commit, every op fails: with the
 * BEGIN's error, or, when the COMMIT failed, as unavailable (memory was reloaded). */
static void run_group(gpupoold *g, ctl_op *ops)
{
    let_waiters_in(&g->st);
    pthread_mutex_lock(&g->st.lock);
    gp_diag d;
    gp_diag_clear(&d);
    group gr = {.ops = ops, .kick = false};
    bool ran = false;
    int rc = ctl_txn_run(g, "group of changes", CTL_TXN_MEMORY, group_body, &gr, &ran, &d);
    for (ctl_op *op = ops; rc < 0 && op; op = op->next) {
        json_decref(op->result);
        op->result = NULL;
        op->rc = ran ? GP_EUNAVAIL : rc;
        if (ran) {
            gp_diag_set(&op->diag, GP_EUNAVAIL, "the store failed to commit: %s; retry", d.msg);
        } else {
            op->diag = d;
        }
    }
    bool kick = rc == 0 ? gr.kick : ran;
    bool by_change = rc == 0 ? gr.by_change : ran;
    ctl_auth_refresh(g);
    ctl_desired_publish(&g->st);
    pthread_mutex_unlock(&g->st.lock);
    atomic_fetch_add(&g->stats.groups, 1);
    ctl_op *async = NULL, **at = &async;
    pthread_mutex_lock(&g->qlock);
    for (ctl_op *op = ops, *next; op; op = next) {
        next = op->next; /* a waiter may free its op once done is set and the lock released */
        if (op->on_done) {
            *at = op;
            at = &op->next;
        } else {
            op->done = true;
        }
    }
    *at = NULL;
    g->kicked |= kick;
    g->kicked_by_change |= by_change;
    pthread_cond_broadcast(&g->donecond);
    pthread_mutex_unlock(&g->qlock);
    for (ctl_op *op = async, *next; op; op = next) {
        next = op->next; /* done frees op */
        atomic_fetch_add(&g->stats.ops, 1);
        op->on_done(op);
    }
}

/* Placements and evictions made so far: a cycle that leaves them unchanged changed nothing. */
static long long decisions(gpupoold *g)
{
    return atomic_load(&g->stats.placed) + atomic_load(&g->stats.evicted);
}

static void cycle(gpupoold *g)
{
    int64_t t0_us = ctl_metrics_now_us();
    long long decided = decisions(g);
    gp_diag d;
    gp_diag_clear(&d);
    let_waiters_in(&g->st);
    pthread_mutex_lock(&g->st.lock);
    ctl_check_liveness(g);
    int rc = ctl_schedule(g, &d);
    ctl_auth_refresh(g); /* the cycle may have reloaded memory */
    ctl_notify_nodes(g, ctl_now_ms());
    ctl_notify_publish(g);
    ctl_desired_publish(&g->st);
    pthread_mutex_unlock(&g->st.lock);
    if (rc < 0) {
        GP_LOG(GP_LOG_ERROR, "sched", "cycle failed: %s", d.msg);
    }
    g->last_cycle_ms = gp_mono_ms();
    g->futile_cycles = decisions(g) == decided ? g->futile_cycles + 1 : 0;
    if (g->proxy) { /* idle upstream tunnels past their time, or closed by the job */
        px_pool_sweep(ctl_proxy_tunnels(g->proxy), g->last_cycle_ms);
    }
    int64_t us = ctl_metrics_now_us() - t0_us;
    atomic_fetch_add(&g->stats.cycles, 1);
    atomic_store(&g->stats.cycle_us_last, us);
    ctl_metrics_cycle(&g->metrics, us);
}

int64_t ctl_cycle_due_ms(const ctl_cycle_clock *c)
{
    int64_t due = c->last_ms + c->interval_ms;
    int64_t gap = c->last_us / 1000 * CTL_KICK_GAP_CYCLES;
    gap = gap > CTL_KICK_GAP_MS ? gap : CTL_KICK_GAP_MS;
    int64_t most = gap > CTL_KICK_GAP_FUTILE_MS ? gap : CTL_KICK_GAP_FUTILE_MS;
    for (int i = 0; !c->by_change && i < c->futile && gap < most; i++) {
        gap = gap * 2 < most ? gap * 2 : most;
    }
    int64_t soon = c->last_ms + gap;
    return c->kicked && soon < due ? soon : due;
}

/* Under g->qlock. */
static int64_t cycle_due_ms(gpupoold *g)
{
    ctl_cycle_clock c = {.last_ms = g->last_cycle_ms,
                         .interval_ms = g->cfg->scheduler.interval_ms,
                         .last_us = atomic_load(&g->stats.cycle_us_last),
                         .futile = g->futile_cycles,
                         .kicked = g->kicked,
                         .by_change = g->kicked_by_change};
    return ctl_cycle_due_ms(&c);
}

static void wait_until(gpupoold *g, int64_t due)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wait = due - gp_mono_ms();
    ts.tv_sec += wait / 1000;
    ts.tv_nsec += (wait % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&g->qcond, &g->qlock, &ts);
}

static void *committer_main(void *arg)
{
    gpupoold *g = arg;
    pthread_mutex_lock(&g->qlock);
    for (;;) {
        while (!g->head && !g->stop && gp_mono_ms() < cycle_due_ms(g)) {
            wait_until(g, cycle_due_ms(g));
        }
        if (g->stop && !g->head) {
            break;
        }
        ctl_op *ops = g->head;
        g->head = g->tail = NULL;
        if (ops) {
            pthread_mutex_unlock(&g->qlock);
            run_group(g, ops);
            pthread_mutex_lock(&g->qlock);
        }
        if (gp_mono_ms() >= cycle_due_ms(g)) {
            g->kicked = g->kicked_by_change = false;
            pthread_mutex_unlock(&g->qlock);
            cycle(g);
            pthread_mutex_lock(&g->qlock);
        }
    }
    pthread_mutex_unlock(&g->qlock);
    return NULL;
}

/* Queues op; false (op->rc set) when the controller is shutting down. Under g->qlock. */
static bool enqueue(gpupoold *g, ctl_op *op)
{
    op->done = false;
    op->next = NULL;
    if (!g->running) {
        op->rc = gp_diag_set(&op->diag, GP_EUNAVAIL, "the controller is shutting down");
        return false;
    }
    if (g->tail) {
        g->tail->next = op;
    } else {
        g->head = op;
    }
    g->tail = op;
    pthread_cond_signal(&g->qcond);
    return true;
}

void ctl_run_op_async(gpupoold *g, ctl_op *op, void (*done)(ctl_op *op))
{
    op->on_done = done;
    pthread_mutex_lock(&g->qlock);
    bool queued = enqueue(g, op);
    pthread_mutex_unlock(&g->qlock);
    if (!queued) {
        done(op);
    }
}

int ctl_run_op(gpupoold *g, ctl_op *op)
{
    op->on_done = NULL;
    pthread_mutex_lock(&g->qlock);
    if (!enqueue(g, op)) {
        pthread_mutex_unlock(&g->qlock);
        return op->rc;
    }
    while (!op->done) {
        pthread_cond_wait(&g->donecond, &g->qlock);
    }
    pthread_mutex_unlock(&g->qlock);
    atomic_fetch_add(&g->stats.ops, 1);
    return op->rc;
}

bool ctl_run_memory(gpupoold *g, int (*fn)(gpupoold *g, void *arg), void *arg)
{
    pthread_mutex_lock(&g->qlock);
    bool running = g->running;
    pthread_mutex_unlock(&g->qlock);
    char leader[CTL_HA_URL_MAX];
    if (!running || ctl_deposed(g) || ctl_ha_get(&g->ha, leader, sizeof(leader)) != CTL_HA_LEADER) {
        return false;
    }
    /* Never waits for the lock: a group holds it through its fsync, and a server thread waiting
     * for it would hold up every connection it serves (submits for the next group among them);
     * a waiter would also delay each group (let_waiters_in). */
    if (pthread_mutex_trylock(&g->st.lock) != 0) {
        return false;
    }
    int rc = g->stale ? -1 : fn(g, arg); /* stale: the committer answers (503) */
    if (rc >= 0) {
        ctl_desired_publish(&g->st);
    }
    ctl_state_unlock(&g->st);
    if (rc > 0) {
        ctl_kick_node(g);
    }
    return rc >= 0;
}

static void kick(gpupoold *g, bool by_change)
{
    pthread_mutex_lock(&g->qlock);
    /* a pending kick covers this one, unless this one may not wait: the committer is told */
    if (!g->kicked || (by_change && !g->kicked_by_change)) {
        g->kicked = true;
        g->kicked_by_change |= by_change;
        pthread_cond_signal(&g->qcond);
    }
    pthread_mutex_unlock(&g->qlock);
}

void ctl_kick(gpupoold *g)
{
    kick(g, true);
}

void ctl_kick_node(gpupoold *g)
{
    kick(g, false);
}

int ctl_committer_start(gpupoold *g, gp_diag *d)
{
    pthread_mutex_init(&g->qlock, NULL);
    pthread_cond_init(&g->qcond, NULL);
    pthread_cond_init(&g->donecond, NULL);
    g->running = true;
    g->last_cycle_ms = gp_mono_ms();
    if (pthread_create(&g->committer, NULL, committer_main, g) != 0) {
        g->running = false;
        return gp_diag_set(d, GP_EIO, "cannot start the committer thread");
    }
    return 0;
}

void ctl_committer_stop(gpupoold *g)
{
    pthread_mutex_lock(&g->qlock);
    if (!g->running) {
        pthread_mutex_unlock(&g->qlock);
        return;
    }
    g->stop = true;
    g->running = false;
    pthread_cond_signal(&g->qcond);
    pthread_mutex_unlock(&g->qlock);
    pthread_join(g->committer, NULL);
    pthread_cond_destroy(&g->qcond);
    pthread_cond_destroy(&g->donecond);
    pthread_mutex_destroy(&g->qlock);
}

void ctl_auth_refresh(gpupoold *g)
{
    ctl_state *st = &g->st;
    if ((g->auth.e && g->auth.gen == st->auth_gen) || (g->auth.e && g->stale)) {
        /* unchanged; or memory is not loaded (the store is away): the table stays as it was, so
         * callers get 503 from the transaction that finds the store away, not 401 */
        return;
    }
    /* Appended and revoked tokens in place: what a group changes costs its tokens. */
    pthread_mutex_lock(&g->auth_lock);
    int rc = ctl_auth_table_follow(&g->auth, st);
    pthread_mutex_unlock(&g->auth_lock);
    if (rc <= 0) {
        return; /* caught up; or out of memory: the next group goes on */
    }
    /* Reloaded, or a change the table cannot follow: built anew outside the lock. */
    ctl_auth_table t = {0};
    if (ctl_auth_table_build(&t, st) < 0) {
        return; /* keep the old table; the next group retries */
    }
    pthread_mutex_lock(&g->auth_lock);
    ctl_auth_table old = g->auth;
    g->auth = t;
    pthread_mutex_unlock(&g->auth_lock);
    ctl_auth_table_fini(&old);
}

/* The table is sorted by hash: a binary search, however many (revoked) tokens accumulate. Hashes
 * of 256-bit random secrets are compared, so the comparison's timing reveals nothing usable. */
int ctl_auth_lookup(gpupoold *g, const char *hash, int64_t now, ctl_principal *out)
{
    int rc = GP_EAUTH;
    pthread_mutex_lock(&g->auth_lock);
    const ctl_auth_entry *e = ctl_auth_table_find(&g->auth, hash);
    if (e && !e->revoked && (!e->expires_ms || e->expires_ms > now)) {
        *out = e->who;
        rc = 0;
    }
    pthread_mutex_unlock(&g->auth_lock);
    return rc;
}
