/*
 * Metering (see meter.h): the ledger's rows opened and closed with their placements, the used
 * figures of open rows in memory, their periodic write, and the check at start.
 *
 * The used figures are kept in an array sorted by (epoch, job, replica): a new placement has the
 * highest epoch so far, so opening a row appends; a lookup is a binary search. An entry whose
 * placement has ended stays until the next tick drops it. Entries are memory only and survive a
 * reload of the state (a failed commit): an entry made for a placement whose commit then failed
 * matches no live placement and is dropped at the next tick.
 */
#include "ctl/meter.h"

#include "base/log.h"
#include "ctl/changes.h"
#include "ctl/txn.h"
#include "ctl/prices.h"
#include "gpupool/mig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct meter_entry {
    int64_t epoch, job_id;
    int replica;
    int64_t milli_total; /* the row's GPUs x milli */
    int64_t last_ms;     /* the replica's previous report (or when tracking began) */
    int64_t used_pct;    /* percent x GPU-milli x ms: / 100 is the used figure */
    int64_t stored;      /* the used figure the ledger has */
} meter_entry;

struct ctl_meter {
    ctl_prices *prices; /* NULL: no price table */
    meter_entry *e;
    int n, cap;
    int64_t last_flush_ms;
};

/* ---- the entries ---- */

static int cmp_key(const meter_entry *e, int64_t epoch, int64_t job, int replica)
{
    if (e->epoch != epoch) {
        return e->epoch < epoch ? -1 : 1;
    }
    if (e->job_id != job) {
        return e->job_id < job ? -1 : 1;
    }
    return (e->replica > replica) - (e->replica < replica);
}

/* The index of the entry, or -(where it would go) - 1. */
static int find(const struct ctl_meter *m, int64_t epoch, int64_t job, int replica)
{
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = cmp_key(&m->e[mid], epoch, job, replica);
        if (c == 0) {
            return mid;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return -lo - 1;
}

/* The entry of the placement, made (zeroed but for its key) when missing; NULL when out of
 * memory (the replica then goes unmetered for use, never for allocation). */
static meter_entry *entry(struct ctl_meter *m, int64_t epoch, int64_t job, int replica)
{
    int i = find(m, epoch, job, replica);
    if (i >= 0) {
        return &m->e[i];
    }
    i = -i - 1;
    if (m->n == m->cap) {
        int ncap = m->cap ? m->cap * 2 : 64;
        meter_entry *ne = realloc(m->e, sizeof(*ne) * (size_t)ncap);
        if (!ne) {
            return NULL;
        }
        m->e = ne;
        m->cap = ncap;
    }
    memmove(&m->e[i + 1], &m->e[i], sizeof(*m->e) * (size_t)(m->n - i));
    m->n++;
    m->e[i] = (meter_entry){.epoch = epoch, .job_id = job, .replica = replica};
    return &m->e[i];
}

static int64_t used_of(const meter_entry *e)
{
    int64_t u = e ? e->used_pct / 100 : 0;
    return e && e->stored > u ? e->stored : u;
}

/* Whether (job, replica, epoch) is a placement memory holds. */
static bool live(ctl_state *st, int64_t job, int replica, int64_t epoch)
{
    const ctl_job *j = ctl_job_by_id(st, job);
    return j && j->replicas && replica >= 0 && replica < j->spec.replicas &&
           j->replicas[replica].epoch == epoch;
}

/* ---- rows ---- */

/* The MIG profile of a share: the job's, else the geometry's profile of that size. */
static void mig_profile(const ctl_job *j, const char *model, const gp_gpu_share *s, char *buf,
                        size_t cap)
{
    snprintf(buf, cap, "%s", j->spec.mig_profile);
    int n = 0;
    const gp_mig_profile *p = buf[0] ? NULL : gp_mig_profiles(gp_mig_geometry_of_model(model), &n);
    for (int i = 0; i < n; i++) {
        if (p[i].compute_slices == s->mig_compute_slices &&
            p[i].memory_slices == s->mig_memory_slices) {
            snprintf(buf, cap, "%s", p[i].name);
            return;
        }
    }
}

/* The ledger row of replica r of j as placed by rep. */
static void fill(gpupoold *g, const ctl_job *j, int r, const ctl_replica *rep, gp_usage_rec *rec)
{
    memset(rec, 0, sizeof(*rec));
    const ctl_tenant *t = ctl_tenant_by_id(&g->st, j->tenant_id);
    const ctl_node *n = ctl_node_by_id(&g->st, rep->node_id);
    const gp_assignment *a = &rep->a;
    rec->job_id = j->id;
    rec->replica = r;
    rec->epoch = rep->epoch;
    rec->tenant_id = j->tenant_id;
    snprintf(rec->tenant, sizeof(rec->tenant), "%s", t ? t->lim.name : "?");
    snprintf(rec->queue, sizeof(rec->queue), "%s", j->spec.queue);
    rec->node_id = rep->node_id;
    snprintf(rec->node, sizeof(rec->node), "%s", n ? n->name : "?");
    rec->gpus = a->nshares;
    rec->cpu_milli = a->cpu_milli;
    rec->memory_mib = a->memory_mib;
    snprintf(rec->kind, sizeof(rec->kind), "%s", gp_meter_kind_name(GP_METER_WHOLE));
    if (a->nshares == 0) {
        return;
    }
    const gp_gpu_share *s = &a->shares[0];
    if (n && s->gpu < n->ngpus) {
        snprintf(rec->model, sizeof(rec->model), "%s", n->gpus[s->gpu].model);
    }
    if (s->mig_start >= 0) {
        snprintf(rec->kind, sizeof(rec->kind), "%s", gp_meter_kind_name(GP_METER_MIG));
        rec->milli = s->mig_compute_slices * 1000 / GP_MIG_COMPUTE_SLICES;
        mig_profile(j, rec->model, s, rec->mig_profile, sizeof(rec->mig_profile));
    } else if (s->milli < 1000) {
        snprintf(rec->kind, sizeof(rec->kind), "%s", gp_meter_kind_name(GP_METER_FRACTION));
        rec->milli = s->milli;
    } else {
        rec->milli = 1000;
    }
}

int ctl_meter_open(gpupoold *g, const ctl_job *j, const ctl_replica *replicas, int n, int64_t now,
                   gp_diag *d)
{
    for (int r = 0; r < n; r++) {
        gp_usage_rec rec;
        fill(g, j, r, &replicas[r], &rec);
        rec.start_ms = now;
        int rc = gp_store_usage_open(g->store, &rec, d);
        if (rc < 0) {
            return rc;
        }
        meter_entry *e = g->meter ? entry(g->meter, rec.epoch, j->id, r) : NULL;
        if (e) {
            /* Anew, even when a placement whose commit failed left one with this key. */
            *e = (meter_entry){.epoch = rec.epoch,
                               .job_id = j->id,
                               .replica = r,
                               .milli_total = (int64_t)rec.gpus * rec.milli,
                               .last_ms = now};
        }
    }
    return 0;
}

int ctl_meter_close(gpupoold *g, const ctl_job *j, int64_t now, gp_diag *d)
{
    for (int r = 0; j->replicas && r < j->spec.replicas; r++) {
        const ctl_replica *rep = &j->replicas[r];
        int i = g->meter ? find(g->meter, rep->epoch, j->id, r) : -1;
        int64_t used = used_of(i >= 0 ? &g->meter->e[i] : NULL);
        gp_diag why;
        gp_diag_clear(&why);
        int rc = gp_store_usage_close(g->store, j->id, r, rep->epoch, now, used, &why);
        if (rc == GP_ENOENT) {
            /* A live placement without its row: record it from the job's start, so its time is
             * not lost, and say so. */
            gp_usage_rec rec;
            fill(g, j, r, rep, &rec);
            rec.start_ms = j->start_ms > 0 && j->start_ms <= now ? j->start_ms : now;
            rec.end_ms = now > rec.start_ms ? now : rec.start_ms;
            rec.used_gpu_milli_ms = used;
            gp_diag_clear(&why);
            rc = gp_store_usage_open(g->store, &rec, &why);
            GP_LOG(GP_LOG_ERROR, "meter",
                   "job=%lld replica=%d epoch=%lld: no open usage record when its placement "
                   "ended; %s",
                   (long long)j->id, r, (long long)rep->epoch,
                   rc == 0 ? "recorded it from the job's start" : why.msg);
            rc = rc == GP_EEXIST ? 0 : rc; /* closed before: not counted twice */
        }
        if (rc < 0) {
            return gp_diag_set(d, rc, "%s", why.msg);
        }
    }
    return 0;
}

void ctl_meter_report(gpupoold *g, const ctl_job *j, int r, int util, int64_t now)
{
    if (!g->meter || !j->replicas || r < 0 || r >= j->spec.replicas) {
        return;
    }
    const ctl_replica *rep = &j->replicas[r];
    int i = find(g->meter, rep->epoch, j->id, r);
    meter_entry *e = i >= 0 ? &g->meter->e[i] : entry(g->meter, rep->epoch, j->id, r);
    if (!e) {
        return;
    }
    if (i < 0) { /* not seen at its opening: counted from now on */
        gp_usage_rec rec;
        fill(g, j, r, rep, &rec);
        e->milli_total = (int64_t)rec.gpus * rec.milli;
        e->last_ms = now;
    }
    int64_t dt = now - e->last_ms, cap = g->cfg->nodes.heartbeat_timeout_ms;
    dt = dt < 0 ? 0 : dt > cap ? cap : dt;
    if (util > 0) {
        e->used_pct += (int64_t)(util > 100 ? 100 : util) * dt * e->milli_total;
    }
    e->last_ms = now > e->last_ms ? now : e->last_ms;
}

/* ---- the tick ---- */

typedef struct flush {
    bool *dead; /* per entry: its placement has ended (dropped from the table once committed) */
    int64_t now;
} flush;

/* The flush's writes (the store only: the table changes once they are committed). */
static int flush_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    flush *f = arg;
    struct ctl_meter *m = tx->g->meter;
    int rc = 0;
    for (int i = 0; rc == 0 && i < m->n; i++) {
        meter_entry *e = &m->e[i];
        if (live(tx->st, e->job_id, e->replica, e->epoch)) {
            if (used_of(e) > e->stored) {
                rc = gp_store_usage_set_used(tx->store, e->job_id, e->replica, e->epoch, used_of(e),
                                             d);
            }
            continue;
        }
        /* Ended: its row was closed with its placement, unless memory dropped the placement
         * by itself (a placement found incomplete when the state was reloaded). */
        f->dead[i] = true;
        gp_diag why;
        int c = gp_store_usage_close(tx->store, e->job_id, e->replica, e->epoch, f->now, used_of(e),
                                     &why);
        if (c == 0) {
            GP_LOG(GP_LOG_WARN, "meter",
                   "job=%lld replica=%d epoch=%lld: usage record still open after its placement "
                   "was dropped; closed now",
                   (long long)e->job_id, e->replica, (long long)e->epoch);
        }
        rc = c == GP_ENOENT ? 0 : c < 0 ? gp_diag_set(d, c, "%s", why.msg) : 0;
    }
    return rc;
}

int ctl_meter_tick(gpupoold *g, int64_t now, gp_diag *d)
{
    struct ctl_meter *m = g->meter;
    if (!m || now - m->last_flush_ms < g->cfg->billing.used_flush_ms) {
        return 0;
    }
    m->last_flush_ms = now;
    flush f = {.dead = calloc((size_t)m->n + 1, sizeof(bool)), .now = now};
    int rc = f.dead ? ctl_txn_run(g, "usage flush", CTL_TXN_STORE, flush_body, &f, NULL, d)
                    : gp_diag_set(d, GP_ENOMEM, "out of memory");
    if (rc < 0) {
        free(f.dead);
        return rc;
    }
    int k = 0;
    for (int i = 0; i < m->n; i++) {
        if (!f.dead[i]) {
            m->e[i].stored = used_of(&m->e[i]);
            m->e[k++] = m->e[i];
        }
    }
    m->n = k;
    free(f.dead);
    return 0;
}

/* ---- start ---- */

typedef struct open_rows {
    gp_usage_rec *v;
    int n, cap;
} open_rows;

static int collect(void *ctx, const gp_usage_rec *r)
{
    open_rows *o = ctx;
    if (o->n == o->cap) {
        int ncap = o->cap ? o->cap * 2 : 64;
        gp_usage_rec *nv = realloc(o->v, sizeof(*nv) * (size_t)ncap);
        if (!nv) {
            return GP_ENOMEM;
        }
        o->v = nv;
        o->cap = ncap;
    }
    o->v[o->n++] = *r;
    return 0;
}

typedef struct free_find {
    int64_t epoch;
    int64_t time_ms; /* 0: not found */
} free_find;

static int find_free(void *ctx, const gp_audit_rec *r)
{
    free_find *f = ctx;
    json_t *detail = json_loads(r->detail, 0, NULL);
    json_int_t epoch = json_integer_value(json_object_get(detail, "epoch"));
    json_decref(detail);
    if (epoch == f->epoch) {
        f->time_ms = r->time_ms;
        return 1; /* found: stop */
    }
    return 0;
}

/* The events that end a placement (ctl_job_end_placement's and the scheduler's evictions). */
static const char *const end_events[] = {"Preempted",   "Requeued",      "Restarting",
                                         "Succeeded",   "Failed",        "Cancelled",
                                         "IdleStopped", "IdleSuspended", NULL};

typedef struct event_find {
    int64_t start_ms;
    bool placed;     /* its Scheduled event was seen */
    int64_t time_ms; /* 0: not found */
} event_find;

static int find_end_event(void *ctx, const gp_event_rec *ev)
{
    event_find *f = ctx;
    if (strcmp(ev->type, "Scheduled") == 0) {
        f->placed = ev->time_ms == f->start_ms;
        return 0;
    }
    for (int i = 0; f->placed && end_events[i]; i++) {
        if (strcmp(ev->type, end_events[i]) == 0) {
            f->time_ms = ev->time_ms;
            return 1; /* found: stop */
        }
    }
    return 0;
}

/* When the placement of an open row without a live placement ended: the event that ended it
 * (written at the same time as the row's end would have been), else its placement.free audit
 * record, else the end of its job, else now. */
static int64_t ended_at(gpupoold *g, const gp_usage_rec *row, int64_t now, const char **source)
{
    event_find ef = {row->start_ms, false, 0};
    gp_store_event_each(g->store, row->job_id, 0, 0, find_end_event, &ef, NULL);
    if (ef.time_ms >= row->start_ms && ef.time_ms > 0) {
        *source = "the event that ended its placement";
        return ef.time_ms;
    }
    char object[48];
    snprintf(object, sizeof(object), "job/%lld", (long long)row->job_id);
    gp_audit_filter f = {
        .since_ms = row->start_ms > 0 ? row->start_ms : 0,
        .object = object,
        .action = "placement.free",
    };
    free_find ff = {row->epoch, 0};
    gp_store_audit_each(g->store, &f, find_free, &ff, NULL);
    if (ff.time_ms >= row->start_ms && ff.time_ms > 0) {
        *source = "its placement.free record";
        return ff.time_ms;
    }
    const ctl_job *j = ctl_job_by_id(&g->st, row->job_id);
    if (j && ctl_job_state_final(j->state) && j->end_ms >= row->start_ms) {
        *source = "its job's end";
        return j->end_ms;
    }
    *source = "the controller's start";
    return now > row->start_ms ? now : row->start_ms;
}

static int reconcile_rows(gpupoold *g, struct ctl_meter *m, open_rows *o, int64_t now, gp_diag *d)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < o->n; i++) {
        const gp_usage_rec *row = &o->v[i];
        if (live(&g->st, row->job_id, row->replica, row->epoch)) {
            meter_entry *e = entry(m, row->epoch, row->job_id, row->replica);
            if (!e) {
                return gp_diag_set(d, GP_ENOMEM, "out of memory");
            }
            e->milli_total = (int64_t)row->gpus * row->milli;
            e->last_ms = now;
            e->used_pct = row->used_gpu_milli_ms * 100;
            e->stored = row->used_gpu_milli_ms;
            continue;
        }
        const char *source;
        int64_t end = ended_at(g, row, now, &source);
        rc = gp_store_usage_close(g->store, row->job_id, row->replica, row->epoch, end,
                                  row->used_gpu_milli_ms, d);
        GP_LOG(GP_LOG_WARN, "meter",
               "job=%lld replica=%d epoch=%lld: usage record open without its placement; closed "
               "at %lld (%s)",
               (long long)row->job_id, row->replica, (long long)row->epoch, (long long)end, source);
    }
    /* Placements without an open row: made before the ledger existed. */
    ctl_state *st = &g->st;
    for (int i = 0; rc == 0 && i < st->njobs; i++) {
        const ctl_job *j = st->jobs[i];
        for (int r = 0; rc == 0 && j->replicas && r < j->spec.replicas; r++) {
            const ctl_replica *rep = &j->replicas[r];
            if (find(m, rep->epoch, j->id, r) >= 0) {
                continue;
            }
            gp_usage_rec rec;
            fill(g, j, r, rep, &rec);
            rec.start_ms = j->start_ms > 0 && j->start_ms <= now ? j->start_ms : now;
            rc = gp_store_usage_open(g->store, &rec, d);
            meter_entry *e = rc == 0 ? entry(m, rep->epoch, j->id, r) : NULL;
            if (e) {
                e->milli_total = (int64_t)rec.gpus * rec.milli;
                e->last_ms = now;
            }
            if (rc == 0) {
                GP_LOG(GP_LOG_INFO, "meter",
                       "job=%lld replica=%d epoch=%lld: placement without a usage record; "
                       "recorded from the job's start",
                       (long long)j->id, r, (long long)rep->epoch);
            }
        }
    }
    return rc;
}

typedef struct reconcile_txn {
    struct ctl_meter *m;
    open_rows *o;
    int64_t now;
} reconcile_txn;

static int reconcile_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    reconcile_txn *x = arg;
    return reconcile_rows(tx->g, x->m, x->o, x->now, d);
}

/* At start, before the meter is g's: a failure fails the start, so the table it filled goes. */
static int reconcile(gpupoold *g, struct ctl_meter *m, int64_t now, gp_diag *d)
{
    open_rows o = {NULL, 0, 0};
    gp_usage_filter f = {.open_only = 1};
    int rc = gp_store_usage_each(g->store, &f, collect, &o, d);
    if (rc == GP_ENOMEM) {
        gp_diag_set(d, rc, "out of memory");
    }
    if (rc == 0) {
        reconcile_txn x = {.m = m, .o = &o, .now = now};
        rc = ctl_txn_run(g, "usage reconcile", CTL_TXN_STORE, reconcile_body, &x, NULL, d);
    }
    free(o.v);
    return rc;
}

int ctl_meter_start(gpupoold *g, gp_diag *d)
{
    struct ctl_meter *m = calloc(1, sizeof(*m));
    if (!m) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int64_t now = ctl_now_ms();
    m->last_flush_ms = now;
    int rc = 0;
    const char *path = g->cfg->billing.price_table;
    if (path[0]) {
        rc = ctl_prices_load(path, &m->prices, d);
        if (rc == 0) {
            GP_LOG(GP_LOG_INFO, "meter", "price table %s: currency=%s prices=%d", path,
                   m->prices->p.currency, m->prices->p.nentries);
        }
    }
    if (rc == 0) {
        rc = reconcile(g, m, now, d);
    }
    g->meter = m; /* ctl_meter_stop frees it either way */
    return rc;
}

void ctl_meter_stop(gpupoold *g)
{
    struct ctl_meter *m = g->meter;
    if (!m) {
        return;
    }
    ctl_prices_free(m->prices);
    free(m->e);
    free(m);
    g->meter = NULL;
}

const gp_meter_prices *ctl_meter_prices(const gpupoold *g)
{
    return g->meter && g->meter->prices ? &g->meter->prices->p : NULL;
}

int64_t ctl_meter_used(const gpupoold *g, int64_t job, int replica, int64_t epoch, int64_t stored)
{
    int i = g->meter ? find(g->meter, epoch, job, replica) : -1;
    int64_t used = i >= 0 ? used_of(&g->meter->e[i]) : 0;
    return used > stored ? used : stored;
}
