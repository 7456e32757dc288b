/*
 * GET /metrics: gpupoold's Prometheus metrics (names and meaning: docs/metrics.md); and
 * GET /v1/sd/prometheus: the agents as Prometheus http_sd targets. Both need a scraper's token
 * (metrics, admin or operator) unless metrics.auth is off; then a request without a token gets
 * the pool-wide figures only: jobs by state and reason, but no tenant or queue label and no
 * per-tenant quota series (names of other tenants and their work are not for anyone who
 * reaches the port).
 *
 * A scrape copies what it reports out of the state under the state lock, aggregated as it
 * goes (counts per label set, per GPU model, per tenant; one row per node and per drained GPU),
 * so the lock is held for one pass over jobs and GPUs and no formatting; the text is written
 * after the lock is released. Counters kept as things happen (ctl_metrics) are read without
 * the state lock.
 *
 * Series of gauges come and go with what they count: a label set with no job is left out,
 * except GPU and node states (every state of every model, 0 included) and quota use (every
 * tenant).
 */
#include "ctl/api.h"

#include "net/prom.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef GP_VERSION
#define GP_VERSION "unknown"
#endif

/* ---- counts per label set ---- */

#define NKEYS 3

typedef struct row {
    char k[NKEYS][GP_NAME_MAX]; /* label values */
    double v;
} row;

/* Rows by their label values, in order of first appearance (open addressing over indexes). */
typedef struct table {
    row *rows;
    int n, cap;
    int *slot; /* index + 1; 0 = empty */
    int nslot;
    bool oom;
} table;

static uint64_t hash_keys(const char *const *k)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < NKEYS; i++) {
        for (const char *s = k[i] ? k[i] : ""; *s; s++) {
            h = (h ^ (unsigned char)*s) * 1099511628211ull;
        }
        h = (h ^ 0xff) * 1099511628211ull; /* separator: ("ab","") differs from ("a","b") */
    }
    return h;
}

static bool same(const row *r, const char *const *k)
{
    for (int i = 0; i < NKEYS; i++) {
        if (strncmp(r->k[i], k[i] ? k[i] : "", GP_NAME_MAX - 1) != 0) {
            return false;
        }
    }
    return true;
}

static bool rehash(table *t)
{
    int nslot = t->nslot ? t->nslot * 2 : 64;
    int *slot = calloc((size_t)nslot, sizeof(*slot));
    if (!slot) {
        return false;
    }
    for (int i = 0; i < t->n; i++) {
        const char *k[NKEYS] = {t->rows[i].k[0], t->rows[i].k[1], t->rows[i].k[2]};
        size_t s = hash_keys(k) & (size_t)(nslot - 1);
        while (slot[s]) {
            s = (s + 1) & (size_t)(nslot - 1);
        }
        slot[s] = i + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    return true;
}

/* The row of (a, b, c), added with value init when new; NULL when out of memory. */
static row *table_get(table *t, const char *a, const char *b, const char *c, double init)
{
    const char *k[NKEYS] = {a, b, c};
    if ((t->n + 1) * 2 > t->nslot && !rehash(t)) {
        t->oom = true;
        return NULL;
    }
    size_t s = hash_keys(k) & (size_t)(t->nslot - 1);
    while (t->slot[s]) {
        row *r = &t->rows[t->slot[s] - 1];
        if (same(r, k)) {
            return r;
        }
        s = (s + 1) & (size_t)(t->nslot - 1);
    }
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 32;
        row *nr = realloc(t->rows, sizeof(*nr) * (size_t)cap);
        if (!nr) {
            t->oom = true;
            return NULL;
        }
        t->rows = nr;
        t->cap = cap;
    }
    row *r = &t->rows[t->n];
    for (int i = 0; i < NKEYS; i++) {
        snprintf(r->k[i], sizeof(r->k[i]), "%s", k[i] ? k[i] : "");
    }
    r->v = init;
    t->slot[s] = ++t->n;
    return r;
}

static void table_fini(table *t)
{
    free(t->rows);
    free(t->slot);
}

/* ---- what a scrape copies out of the state ---- */

enum { GPU_ALLOCATED, GPU_FREE, GPU_DRAINED, GPU_SPARE, GPU_UNAVAILABLE, GPU_NSTATES };
static const char *const gpu_state_names[GPU_NSTATES] = {"allocated", "free", "drained", "spare",
                                                         "unavailable"};

enum { NODE_READY, NODE_NOTREADY, NODE_LOST, NODE_CORDONED, NODE_DRAINING, NODE_NSTATES };
static const char *const node_state_names[NODE_NSTATES] = {"Ready", "NotReady", "Lost", "Cordoned",
                                                           "Draining"};

typedef struct model_agg {
    char name[GP_NAME_MAX];
    int gpus[GPU_NSTATES];
    int64_t in_service, allocated, free, stranded; /* milli-GPU */
} model_agg;

typedef struct drained_gpu {
    char host[GP_NAME_MAX];
    int gpu;
    char uuid[96];
    char model[GP_NAME_MAX];
} drained_gpu;

typedef struct node_row {
    char name[GP_NAME_MAX];
    int state;
    bool ready;
} node_row;

typedef struct tenant_row {
    int64_t id;
    char name[GP_NAME_MAX];
    int64_t used, quota; /* milli-GPU; quota -1: unlimited */
} tenant_row;

typedef struct snap {
    table jobs;    /* state, queue, tenant -> jobs */
    table pending; /* reason class, queue, tenant -> waiting jobs */
    table oldest;  /* queue, tenant -> earliest submit time (ms) of a waiting job */
    int nmodels;
    model_agg models[GP_MAX_MODELS];
    drained_gpu *drained;
    int ndrained;
    node_row *nodes;
    int nnodes;
    tenant_row *tenants;
    int ntenants;
    int64_t now_ms;
    bool full; /* per-tenant labels (an authenticated scraper) */
    bool oom;
} snap;

static void snap_fini(snap *s)
{
    table_fini(&s->jobs);
    table_fini(&s->pending);
    table_fini(&s->oldest);
    free(s->drained);
    free(s->nodes);
    free(s->tenants);
}

/* A node's state, one of node_state_names: not heard from past nodes.lost_timeout is Lost,
 * past nodes.heartbeat_timeout NotReady; a Ready node being drained or cordoned is counted
 * as that. Under the state lock. */
static int node_state(const gpupoold *g, const ctl_node *n, int64_t now)
{
    if (!n->ready) {
        return now - n->heartbeat_ms > g->cfg->nodes.lost_timeout_ms ? NODE_LOST : NODE_NOTREADY;
    }
    return n->draining ? NODE_DRAINING : n->cordoned ? NODE_CORDONED : NODE_READY;
}

static int tenant_cmp(const void *a, const void *b)
{
    const tenant_row *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static tenant_row *tenant_of(snap *s, int64_t id)
{
    tenant_row key = {.id = id};
    return bsearch(&key, s->tenants, (size_t)s->ntenants, sizeof(key), tenant_cmp);
}

static void copy_tenants(ctl_state *st, snap *s)
{
    s->tenants = calloc((size_t)st->ntenants + 1, sizeof(*s->tenants));
    if (!s->tenants) {
        s->oom = true;
        return;
    }
    for (int i = 0; i < st->ntenants; i++) {
        tenant_row *t = &s->tenants[s->ntenants++];
        t->id = st->tenants[i].id;
        snprintf(t->name, sizeof(t->name), "%s", st->tenants[i].lim.name);
        t->quota = st->tenants[i].lim.quota_gpu_milli;
    }
    qsort(s->tenants, (size_t)s->ntenants, sizeof(*s->tenants), tenant_cmp);
}

/* Jobs per state, waiting jobs per reason class and their age, GPUs held per tenant. */
static void copy_jobs(ctl_state *st, snap *s)
{
    for (int i = 0; i < st->njobs; i++) {
        const ctl_job *j = st->jobs[i];
        tenant_row *t = tenant_of(s, j->tenant_id);
        const char *tenant = !s->full ? NULL : t ? t->name : "";
        const char *queue = s->full ? j->spec.queue : NULL;
        row *r = table_get(&s->jobs, ctl_job_state_name(j->state), queue, tenant, 0);
        if (r) {
            r->v++;
        }
        if (ctl_job_state_waits(j->state)) {
            r = table_get(&s->pending, ctl_metrics_reason_class(j->reason), queue, tenant, 0);
            if (r) {
                r->v++;
            }
            r = table_get(&s->oldest, queue, tenant, NULL, (double)j->submit_ms);
            if (r && (double)j->submit_ms < r->v) {
                r->v = (double)j->submit_ms;
            }
        }
        for (int k = 0; t && j->replicas && k < j->spec.replicas; k++) {
            t->used += gp_sched_usage(st->cluster, &j->replicas[k].a, NULL).gpu_milli;
        }
    }
    s->oom |= s->jobs.oom || s->pending.oom || s->oldest.oom;
}

/* Counts GPU k of n in its model's aggregate. Each GPU has one state, the first that applies:
 * drained (out of service), allocated (holds any allocation), unavailable (its node takes no new
 * work: NotReady, cordoned, draining, fenced, unhealthy), spare (held back for restarts), free.
 * GPUs allocated, spare or free are in service: the ratios are over them. */
static void count_gpu(snap *s, const ctl_node *n, const gp_node *cn, const gp_gpu *cg, int k,
                      model_agg *m)
{
    const ctl_gpu_info *gi = &n->gpus[k];
    int64_t alloc =
        cg->mode == GP_GPU_MIG ? (int64_t)cg->mig_compute_used * 1000 / 7 : 1000 - cg->milli_free;
    bool held = alloc > 0 || cg->holders > 0 || cg->mig_instances > 0;
    int state = gi->drained        ? GPU_DRAINED
                : held             ? GPU_ALLOCATED
                : !cn->schedulable ? GPU_UNAVAILABLE
                : gi->spare        ? GPU_SPARE
                                   : GPU_FREE;
    m->gpus[state]++;
    if (state != GPU_DRAINED && state != GPU_UNAVAILABLE) { /* in service */
        m->in_service += 1000;
        m->allocated += alloc;
        m->free += 1000 - alloc;
        m->stranded += alloc > 0 && alloc < 1000 ? 1000 - alloc : 0;
    }
    if (gi->drained && s->drained) {
        drained_gpu *d = &s->drained[s->ndrained++];
        snprintf(d->host, sizeof(d->host), "%s", n->name);
        d->gpu = k;
        snprintf(d->uuid, sizeof(d->uuid), "%s", gi->uuid);
        snprintf(d->model, sizeof(d->model), "%s", m->name);
    }
}

/* GPUs per model and state, the drained ones, and the nodes. */
static void copy_nodes(gpupoold *g, snap *s)
{
    ctl_state *st = &g->st;
    const gp_cluster *c = st->cluster;
    s->nmodels = gp_cluster_model_count(c);
    for (int m = 0; m < s->nmodels && m < GP_MAX_MODELS; m++) {
        snprintf(s->models[m].name, sizeof(s->models[m].name), "%s",
                 gp_cluster_model_info(c, m)->name);
    }
    int ndrained = 0;
    for (int i = 0; i < st->nnodes; i++) {
        for (int k = 0; k < st->nodes[i].ngpus; k++) {
            ndrained += st->nodes[i].gpus[k].drained;
        }
    }
    s->drained = calloc((size_t)ndrained + 1, sizeof(*s->drained));
    s->nodes = calloc((size_t)st->nnodes + 1, sizeof(*s->nodes));
    if (!s->drained || !s->nodes) {
        s->oom = true;
        return;
    }
    for (int i = 0; i < st->nnodes; i++) {
        const ctl_node *n = &st->nodes[i];
        const gp_node *cn = gp_cluster_node(c, n->cl);
        node_row *nr = &s->nodes[s->nnodes++];
        snprintf(nr->name, sizeof(nr->name), "%s", n->name);
        nr->ready = n->ready;
        nr->state = node_state(g, n, s->now_ms);
        for (int k = 0; k < n->ngpus; k++) {
            const gp_gpu *cg = gp_cluster_gpu(c, n->cl, k);
            if (cg->model < s->nmodels && cg->model < GP_MAX_MODELS) {
                count_gpu(s, n, cn, cg, k, &s->models[cg->model]);
            }
        }
    }
}

static void copy_state(gpupoold *g, bool full, snap *s)
{
    memset(s, 0, sizeof(*s));
    s->full = full;
    s->now_ms = ctl_now_ms();
    ctl_read_lock(g);
    copy_tenants(&g->st, s);
    if (!s->oom) {
        copy_jobs(&g->st, s);
        copy_nodes(g, s);
    }
    ctl_read_unlock(g);
}

/* ---- the text ---- */

static void write_table(gp_prom *p, const char *name, const table *t, const char *const *keys,
                        double (*value)(const snap *, double), const snap *s)
{
    for (int i = 0; i < t->n; i++) {
        const row *r = &t->rows[i];
        const char *labels[2 * NKEYS + 1];
        int n = 0;
        for (int k = 0; k < NKEYS && keys[k]; k++) {
            labels[n++] = keys[k];
            labels[n++] = r->k[k];
        }
        labels[n] = NULL;
        gp_prom_sample(p, name, labels, value ? value(s, r->v) : r->v);
    }
}

static double age_seconds(const snap *s, double submit_ms)
{
    double age = ((double)s->now_ms - submit_ms) / 1000.0;
    return age > 0 ? age : 0;
}

static void write_jobs(gp_prom *p, const snap *s, gpupoold *g)
{
    static const char *const job_keys[] = {"state", "queue", "tenant"};
    static const char *const pending_keys[] = {"reason", "queue", "tenant"};
    static const char *const oldest_keys[] = {"queue", "tenant", NULL};
    static const char *const pool_job_keys[] = {"state", NULL, NULL};
    static const char *const pool_pending_keys[] = {"reason", NULL, NULL};
    static const char *const pool_oldest_keys[] = {NULL, NULL, NULL};
    gp_prom_family(p, "gpupool_jobs", "gauge", "Jobs by state, queue and tenant.");
    write_table(p, "gpupool_jobs", &s->jobs, s->full ? job_keys : pool_job_keys, NULL, s);
    gp_prom_family(p, "gpupool_jobs_pending", "gauge",
                   "Jobs waiting for a placement (Pending or Preempted), by the class of the "
                   "reason they wait, queue and tenant.");
    write_table(p, "gpupool_jobs_pending", &s->pending, s->full ? pending_keys : pool_pending_keys,
                NULL, s);
    gp_prom_family(p, "gpupool_job_pending_oldest_seconds", "gauge",
                   "Time since the submission of the oldest waiting job, by queue and tenant.");
    write_table(p, "gpupool_job_pending_oldest_seconds", &s->oldest,
                s->full ? oldest_keys : pool_oldest_keys, age_seconds, s);

    gp_prom_family(p, "gpupool_scheduler_cycles_total", "counter", "Scheduling cycles run.");
    gp_prom_sample(p, "gpupool_scheduler_cycles_total", NULL,
                   (double)atomic_load(&g->stats.cycles));
    gp_prom_family(p, "gpupool_commit_groups_total", "counter",
                   "Groups of changes the committer ran, each one store transaction.");
    gp_prom_sample(p, "gpupool_commit_groups_total", NULL, (double)atomic_load(&g->stats.groups));
    gp_prom_family(p, "gpupool_placements_total", "counter", "Jobs placed by the scheduler.");
    gp_prom_sample(p, "gpupool_placements_total", NULL, (double)atomic_load(&g->stats.placed));
    gp_prom_family(p, "gpupool_evictions_total", "counter",
                   "Jobs evicted by the scheduler (preempted or reclaimed).");
    gp_prom_sample(p, "gpupool_evictions_total", NULL, (double)atomic_load(&g->stats.evicted));
}

static double ratio(int64_t a, int64_t b)
{
    return b > 0 ? (double)a / (double)b : 0;
}

static void write_gpus(gp_prom *p, const snap *s)
{
    gp_prom_family(p, "gpupool_gpus", "gauge",
                   "GPUs by model and state (allocated, free, drained, spare, unavailable).");
    for (int m = 0; m < s->nmodels; m++) {
        for (int k = 0; k < GPU_NSTATES; k++) {
            const char *labels[] = {"model", s->models[m].name, "state", gpu_state_names[k], NULL};
            gp_prom_sample(p, "gpupool_gpus", labels, s->models[m].gpus[k]);
        }
    }
    gp_prom_family(p, "gpupool_gpu_allocation_ratio", "gauge",
                   "Allocated GPU compute over the compute of GPUs in service (allocated, free "
                   "or spare), by model.");
    for (int m = 0; m < s->nmodels; m++) {
        const char *labels[] = {"model", s->models[m].name, NULL};
        gp_prom_sample(p, "gpupool_gpu_allocation_ratio", labels,
                       ratio(s->models[m].allocated, s->models[m].in_service));
    }
    gp_prom_family(p, "gpupool_gpu_fragmentation_ratio", "gauge",
                   "Free GPU compute stranded on partly used GPUs over the free GPU compute of "
                   "GPUs in service, by model.");
    for (int m = 0; m < s->nmodels; m++) {
        const char *labels[] = {"model", s->models[m].name, NULL};
        gp_prom_sample(p, "gpupool_gpu_fragmentation_ratio", labels,
                       ratio(s->models[m].stranded, s->models[m].free));
    }
    gp_prom_family(p, "gpupool_gpu_drained", "gauge",
                   "1 for each GPU out of service (drained or retired).");
    for (int i = 0; i < s->ndrained; i++) {
        const drained_gpu *d = &s->drained[i];
        char gpu[16];
        snprintf(gpu, sizeof(gpu), "%d", d->gpu);
        const char *labels[] = {"Hostname", d->host, "gpu",    gpu, "UUID",
                                d->uuid,    "model", d->model, NULL};
        gp_prom_sample(p, "gpupool_gpu_drained", labels, 1);
    }
}

static void write_nodes(gp_prom *p, const snap *s)
{
    gp_prom_family(p, "gpupool_node_ready", "gauge",
                   "1 when the node's agent reports in time, else 0.");
    int count[NODE_NSTATES] = {0};
    for (int i = 0; i < s->nnodes; i++) {
        const char *labels[] = {"Hostname", s->nodes[i].name, NULL};
        gp_prom_sample(p, "gpupool_node_ready", labels, s->nodes[i].ready);
        count[s->nodes[i].state]++;
    }
    gp_prom_family(p, "gpupool_nodes", "gauge",
                   "Nodes by state (Ready, NotReady, Lost, Cordoned, Draining); each node counts "
                   "once.");
    for (int k = 0; k < NODE_NSTATES; k++) {
        const char *labels[] = {"state", node_state_names[k], NULL};
        gp_prom_sample(p, "gpupool_nodes", labels, count[k]);
    }
}

static void write_quota(gp_prom *p, const snap *s)
{
    gp_prom_family(p, "gpupool_quota_used_gpus", "gauge",
                   "GPUs held by the tenant's jobs (compute, in whole GPUs).");
    for (int i = 0; i < s->ntenants; i++) {
        const char *labels[] = {"tenant", s->tenants[i].name, NULL};
        gp_prom_sample(p, "gpupool_quota_used_gpus", labels, (double)s->tenants[i].used / 1000);
    }
    gp_prom_family(p, "gpupool_quota_limit_gpus", "gauge",
                   "The tenant's GPU quota in whole GPUs (absent when unlimited).");
    for (int i = 0; i < s->ntenants; i++) {
        const char *labels[] = {"tenant", s->tenants[i].name, NULL};
        if (s->tenants[i].quota >= 0) {
            gp_prom_sample(p, "gpupool_quota_limit_gpus", labels,
                           (double)s->tenants[i].quota / 1000);
        }
    }
    gp_prom_family(p, "gpupool_quota_used_ratio", "gauge",
                   "GPUs held over the tenant's GPU quota (absent when unlimited or 0; above 1 "
                   "when a quota was lowered under running jobs).");
    for (int i = 0; i < s->ntenants; i++) {
        const char *labels[] = {"tenant", s->tenants[i].name, NULL};
        if (s->tenants[i].quota > 0) {
            gp_prom_sample(p, "gpupool_quota_used_ratio", labels,
                           ratio(s->tenants[i].used, s->tenants[i].quota));
        }
    }
}

static const char *route_pattern(int route)
{
    return api_routes[route].pattern;
}

void api_metrics(api_req *rq)
{
    snap s;
    copy_state(rq->g, api_scrape_full(rq), &s);
    gp_prom p;
    gp_prom_init(&p);
    if (!s.oom) {
        const char *build[] = {"version", GP_VERSION, NULL};
        gp_prom_family(&p, "gpupool_build_info", "gauge", "gpupoold's version; always 1.");
        gp_prom_sample(&p, "gpupool_build_info", build, 1);
        write_jobs(&p, &s, rq->g);
        write_gpus(&p, &s);
        write_nodes(&p, &s);
        if (s.full) { /* per tenant */
            write_quota(&p, &s);
        }
        ctl_metrics_write(&rq->g->metrics, &p, route_pattern);
    }
    snap_fini(&s);
    if (s.oom || !gp_prom_text(&p)) {
        gp_prom_fini(&p);
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    size_t len = p.len;
    char *body = p.buf; /* the response takes the buffer */
    p.buf = NULL;
    gp_http_response_set_body(rq->resp, 200, GP_PROM_CONTENT_TYPE, body, len);
    gp_prom_fini(&p);
}

/* ---- service discovery ---- */

/* The GPU models of n, distinct, joined with ",". */
static void node_models(ctl_state *st, const ctl_node *n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    uint64_t seen = 0;
    for (int k = 0; k < n->ngpus; k++) {
        int m = gp_cluster_gpu(st->cluster, n->cl, k)->model;
        if (m >= 64 || (seen & (1ull << m))) {
            continue;
        }
        seen |= 1ull << m;
        int w = snprintf(buf + len, cap - len, "%s%s", len ? "," : "",
                         gp_cluster_model_info(st->cluster, m)->name);
        if (w < 0 || (size_t)w >= cap - len) {
            break;
        }
        len += (size_t)w;
    }
}

void api_sd_prometheus(api_req *rq)
{
    json_t *targets = json_array();
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    int64_t now = ctl_now_ms();
    for (int i = 0; targets && i < st->nnodes; i++) {
        const ctl_node *n = &st->nodes[i];
        char host[128], models[256];
        if (!ctl_node_host(n, host, sizeof(host))) {
            continue; /* registered without a reachable address */
        }
        node_models(st, n, models, sizeof(models));
        json_t *labels =
            json_pack("{s:s, s:s, s:s, s:s}", "Hostname", n->name, "__meta_gpupool_node", n->name,
                      "__meta_gpupool_model", models, "__meta_gpupool_state",
                      node_state_names[node_state(rq->g, n, now)]);
        json_t *entry = json_pack("{s:[s], s:o}", "targets", n->address, "labels", labels);
        if (!entry || json_array_append_new(targets, entry) < 0) {
            json_decref(targets);
            targets = NULL;
        }
    }
    ctl_read_unlock(rq->g);
    if (!targets) {
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    api_reply(rq, 200, targets);
}
