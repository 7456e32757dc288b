/*
 * The transaction runner (see txn.h): BEGIN, the body, COMMIT; on failure ROLLBACK, the
 * transaction's alerts dropped and, when memory was changed, memory reloaded from the store.
 *
 * Invariant: when ctl_txn_run or ctl_txn_step returns, memory equals what the store's connection
 * sees, or g->stale is set (a reload failed) and no transaction runs until a reload succeeds.
 */
#include "ctl/txn.h"

#include "base/clock.h"
#include "base/log.h"
#include "ctl/notify.h"

#include <stdlib.h>

int ctl_sched_reset(gpupoold *g, gp_diag *d)
{
    gp_sched_free(g->sched);
    g->sched = NULL;
    gp_sched_config cfg;
    gp_ctl_config_sched(g->cfg, &cfg);
    return gp_sched_new(g->st.cluster, &cfg, &g->sched, d);
}

void ctl_reload(gpupoold *g)
{
    gp_diag d;
    gp_diag_clear(&d);
    int rc = ctl_state_load(&g->st, g->store, &d);
    if (rc == 0) {
        ctl_nodes_grace(&g->st, ctl_now_ms());
        rc = ctl_sched_reset(g, &d);
    }
    if (rc < 0) {
        /* The load left memory partial, and the old scheduler pointed into the freed model. */
        gp_sched_free(g->sched);
        g->sched = NULL;
        GP_LOG(GP_LOG_ERROR, "ctl", "reloading the state from the store: %s", d.msg);
        g->stale = true;
        g->ready = false;
        return;
    }
    if (g->stale) {
        GP_LOG(GP_LOG_INFO, "ctl", "state reloaded from the store");
        g->stale = false;
        g->ready = true;
    }
}

/* A reload that failed before is tried again before anything runs on what memory holds. */
static int fresh(gpupoold *g, gp_diag *d)
{
    if (g->stale) {
        ctl_reload(g);
    }
    return g->stale ? gp_diag_set(d, GP_EUNAVAIL,
                                  "the controller cannot load its state from the store; retry")
                    : 0;
}

int ctl_txn_run(gpupoold *g, const char *what, ctl_txn_kind kind, ctl_txn_fn body, void *arg,
                bool *ran, gp_diag *d)
{
    ctl_txn tx = {.g = g, .store = g->store, .st = &g->st, .cfg = g->cfg, .now = ctl_now_ms()};
    bool began = false, body_ok = false;
    size_t alerts = ctl_notify_mark(g);
    int rc = fresh(g, d);
    if (rc == 0) {
        rc = gp_store_begin(g->store, d);
        began = rc == 0;
        if (rc == GP_EIO) { /* the store is away (PostgreSQL restarting): a retry may work */
            GP_LOG(GP_LOG_ERROR, "ctl", "%s: begin: %s", what, d->msg);
            char why[sizeof(d->msg)];
            snprintf(why, sizeof(why), "%s", d->msg);
            rc = gp_diag_set(d, GP_EUNAVAIL, "the store is unavailable: %.400s; retry", why);
        }
    }
    if (began) {
        rc = body(&tx, arg, d);
        body_ok = rc == 0;
    }
    if (body_ok && (rc = gp_store_commit(g->store, d)) < 0) {
        GP_LOG(GP_LOG_ERROR, "ctl", "%s: commit: %s", what, d->msg);
    }
    if (ran) {
        *ran = body_ok;
    }
    if (rc == 0) {
        ctl_notify_publish(g);
        return 0;
    }
    if (d->code == 0) {
        gp_diag_set(d, rc, "%s", gp_strerror(rc));
    }
    if (began) {
        gp_store_rollback(g->store);
    }
    ctl_notify_rollback(g, alerts);
    if (began && kind == CTL_TXN_MEMORY) {
        ctl_reload(g); /* memory may hold some of the changes */
    }
    return rc;
}

int ctl_txn_step(ctl_txn *tx, ctl_txn_fn fn, void *arg, gp_diag *d)
{
    int rc = fresh(tx->g, d);
    if (rc == 0) {
        rc = gp_store_savepoint(tx->store, d);
    }
    if (rc < 0) {
        return rc;
    }
    size_t alerts = ctl_notify_mark(tx->g);
    tx->dirty = false;
    rc = fn(tx, arg, d);
    bool changed = rc == 0 || tx->dirty;
    if (rc == 0) {
        rc = gp_store_savepoint_release(tx->store, d);
    }
    if (rc < 0) {
        gp_store_savepoint_rollback(tx->store);
        ctl_notify_rollback(tx->g, alerts);
        if (changed) {
            ctl_reload(tx->g); /* what the transaction holds now, without this step */
        }
    }
    tx->dirty = false;
    return rc;
}

typedef struct each_job {
    const char *what;
    ctl_txn_fn step;
    ctl_tick *ticks;
    int n;
} each_job;

static int each_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    each_job *e = arg;
    for (int i = 0; i < e->n; i++) {
        gp_diag sd;
        gp_diag_clear(&sd);
        if (ctl_txn_step(tx, e->step, &e->ticks[i], &sd) < 0) {
            GP_LOG(GP_LOG_WARN, "txn", "%s: job=%lld: %s", e->what, (long long)e->ticks[i].id,
                   sd.msg);
        }
    }
    (void)d;
    return 0;
}

int ctl_txn_each_job(gpupoold *g, const char *what,
                     bool (*pick)(gpupoold *g, const ctl_job *j, int64_t now), ctl_txn_fn step,
                     int64_t now, gp_diag *d)
{
    each_job e = {what, step, NULL, 0};
    for (int i = 0; i < g->st.njobs; i++) {
        if (!pick(g, g->st.jobs[i], now)) {
            continue;
        }
        ctl_tick *t = realloc(e.ticks, (size_t)(e.n + 1) * sizeof(*t));
        if (!t) {
            free(e.ticks);
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
        e.ticks = t;
        e.ticks[e.n++] = (ctl_tick){g->st.jobs[i]->id, now};
    }
    int rc = e.n ? ctl_txn_run(g, what, CTL_TXN_MEMORY, each_body, &e, NULL, d) : 0;
    free(e.ticks);
    return rc;
}

int64_t ctl_cycle_txn_budget_ms(int64_t lease_ttl_ms, int64_t renew_interval_ms, bool leased)
{
    if (!leased) {
        return 0;
    }
    int64_t budget = (lease_ttl_ms - renew_interval_ms) / 4;
    return budget > 0 ? budget : 1;
}

int64_t ctl_cycle_txn_deadline(gpupoold *g)
{
    int64_t budget = ctl_cycle_txn_budget_ms(g->cfg->ha.lease_ttl_ms, g->cfg->ha.renew_interval_ms,
                                             atomic_load(&g->elect.leading));
    return budget > 0 ? gp_mono_ms() + budget : 0;
}

bool ctl_cycle_txn_spent(int64_t deadline)
{
    return deadline > 0 && gp_mono_ms() >= deadline;
}
