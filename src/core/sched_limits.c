/*
 * Usage and limits: what each tenant and queue holds, whether a job may be placed under its
 * tenant's quota and its queue's capability and guarantee, and the DRF share that orders queues.
 *
 * Usage is computed from the running jobs at the start of a cycle and kept current as jobs are
 * placed and evicted, so every check is O(1) in the number of jobs (O(models) for per-model
 * quotas).
 *
 * Quota checks before placement are exact for GPU compute and conservative per model: a model
 * may be used only when all replicas could land on it within its quota (and within the GPU
 * memory quota, at the model's memory). After placement, the exact usage of the chosen GPUs is
 * checked again (limits_post_check), so no limit is ever exceeded.
 *
 * Borrowing. A queue's guarantee is what it is owed; a job whose placement takes its queue past
 * the guarantee borrows, and only preemptible jobs may. GPU compute counts whenever the
 * guarantee sets it (>= 0; 0 = owed none); GPU memory, CPU and memory only where the guarantee
 * sets them above 0, so "owed 16 GPUs" does not make every job that needs a CPU a borrower. A
 * field of -1 is unlimited. A dimension counts only for jobs that use it.
 */
#include "core/sched_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void reasonf(char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, SCHED_REASON, fmt, ap);
    va_end(ap);
}

void reason_copy(char *reason, const char *from)
{
    size_t n = strnlen(from, SCHED_REASON - 1);
    memcpy(reason, from, n);
    reason[n] = '\0';
}

void fmt_gpus(char *buf, size_t size, int64_t milli)
{
    int64_t a = milli < 0 ? -milli : milli;
    int64_t frac = a % GP_MILLI_PER_GPU;
    if (frac == 0) {
        snprintf(buf, size, "%lld", (long long)(milli / GP_MILLI_PER_GPU));
        return;
    }
    int digits = 3;
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    snprintf(buf, size, "%s%lld.%0*lld", milli < 0 ? "-" : "", (long long)(a / GP_MILLI_PER_GPU),
             digits, (long long)frac);
}

void gp_sched_fmt_gpus(char *buf, size_t size, int64_t milli)
{
    fmt_gpus(buf, size, milli);
}

static bool whole_gib(int64_t limit_mib)
{
    return limit_mib > 0 && limit_mib % 1024 == 0;
}

const char *gp_sched_mem_unit(int64_t limit_mib)
{
    return whole_gib(limit_mib) ? "GiB" : "MiB";
}

void gp_sched_fmt_mem(char *buf, size_t size, int64_t mib, int64_t limit_mib)
{
    if (!whole_gib(limit_mib) || mib % 1024 == 0) {
        snprintf(buf, size, "%lld", (long long)(whole_gib(limit_mib) ? mib / 1024 : mib));
        return;
    }
    /* hundredths of a GiB, rounded up (away from 0), so that a use that breaks a limit still
     * reads as breaking it and a small one does not read as none; trailing zeros dropped */
    int64_t h = (mib * 100 + (mib < 0 ? -1023 : 1023)) / 1024;
    int64_t a = h < 0 ? -h : h;
    if (a % 100 == 0) {
        snprintf(buf, size, "%lld", (long long)(h / 100));
    } else if (a % 10 == 0) {
        snprintf(buf, size, "%s%lld.%lld", h < 0 ? "-" : "", (long long)(a / 100),
                 (long long)(a % 100 / 10));
    } else {
        snprintf(buf, size, "%s%lld.%02lld", h < 0 ? "-" : "", (long long)(a / 100),
                 (long long)(a % 100));
    }
}

void fmt_cores(char *buf, size_t size, int64_t milli)
{
    fmt_gpus(buf, size, milli); /* same arithmetic: 1000 per core */
}

void fmt_mib(char *buf, size_t size, int64_t mib)
{
    if (mib >= 1024 && mib % 1024 == 0) {
        snprintf(buf, size, "%lld GiB", (long long)(mib / 1024));
    } else {
        snprintf(buf, size, "%lld MiB", (long long)mib);
    }
}

static int mig_compute_slices(const char *profile)
{
    int n = 0;
    for (const char *p = profile; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (*p - '0');
    }
    return n;
}

static int64_t mig_milli_of(int compute_slices)
{
    return ((int64_t)compute_slices * GP_MILLI_PER_GPU + GP_MIG_COMPUTE_SLICES - 1) /
           GP_MIG_COMPUTE_SLICES;
}

int64_t req_gpu_milli(const gp_request *r)
{
    switch (r->kind) {
    case GP_REQ_WHOLE:
        return (int64_t)r->gpu_count * GP_MILLI_PER_GPU;
    case GP_REQ_FRACTION:
        return r->gpu_milli;
    case GP_REQ_MIG:
        return mig_milli_of(mig_compute_slices(r->mig_profile));
    default:
        return 0;
    }
}

gp_res gp_sched_usage(const gp_cluster *c, const gp_assignment *a, int *model)
{
    gp_res r = {0, 0, a->cpu_milli, a->memory_mib};
    int m = -1;
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        const gp_gpu *u = gp_cluster_gpu(c, a->node, s->gpu);
        if (!u) {
            continue;
        }
        if (m < 0) {
            m = u->model;
        }
        if (s->mig_start >= 0) {
            r.gpu_milli += mig_milli_of(s->mig_compute_slices);
            r.gpu_mem_mib += u->mem_mib * s->mig_memory_slices / GP_MIG_MEMORY_SLICES;
        } else {
            r.gpu_milli += s->milli;
            r.gpu_mem_mib += s->mem_mib;
        }
    }
    if (model) {
        *model = m;
    }
    return r;
}

/* Per-model milli-GPU of an assignment, added into per_model (sign +-1). */
static void model_usage(const gp_cluster *c, const gp_assignment *a, int64_t *per_model, int sign)
{
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        const gp_gpu *u = gp_cluster_gpu(c, a->node, s->gpu);
        if (u) {
            int64_t milli = s->mig_start >= 0 ? mig_milli_of(s->mig_compute_slices) : s->milli;
            per_model[u->model] += sign * milli;
        }
    }
}

static void res_add(gp_res *a, const gp_res *b, int sign)
{
    a->gpu_milli += sign * b->gpu_milli;
    a->gpu_mem_mib += sign * b->gpu_mem_mib;
    a->cpu_milli += sign * b->cpu_milli;
    a->memory_mib += sign * b->memory_mib;
}

void limits_account(cycle *cy, int tenant, int queue, const gp_assignment *a, int sign)
{
    gp_res u = gp_sched_usage(cy->c, a, NULL);
    tenant_use *t = &cy->tu[tenant];
    t->gpu_milli += sign * u.gpu_milli;
    t->gpu_mem_mib += sign * u.gpu_mem_mib;
    model_usage(cy->c, a, t->model_milli, sign);
    res_add(&cy->qu[queue], &u, sign);
}

double limits_share(const cycle *cy, int queue)
{
    const gp_res *u = &cy->qu[queue];
    double s = 0.0;
    if (cy->cap_gpu > 0 && (double)u->gpu_milli / cy->cap_gpu > s) {
        s = (double)u->gpu_milli / cy->cap_gpu;
    }
    if (cy->cap_cpu > 0 && (double)u->cpu_milli / cy->cap_cpu > s) {
        s = (double)u->cpu_milli / cy->cap_cpu;
    }
    if (cy->cap_mem > 0 && (double)u->memory_mib / cy->cap_mem > s) {
        s = (double)u->memory_mib / cy->cap_mem;
    }
    double w = cy->in->queues[queue].weight;
    return s / (w > 0 ? w : 1.0);
}

int limits_init(cycle *cy)
{
    const gp_sched_input *in = cy->in;
    cy->tu = calloc((size_t)(in->ntenants ? in->ntenants : 1), sizeof(tenant_use));
    cy->qu = calloc((size_t)(in->nqueues ? in->nqueues : 1), sizeof(gp_res));
    cy->share = calloc((size_t)(in->nqueues ? in->nqueues : 1), sizeof(double));
    cy->run = calloc((size_t)(in->nrunning ? in->nrunning : 1), sizeof(run_job));
    if (!cy->tu || !cy->qu || !cy->share || !cy->run) {
        return GP_ENOMEM;
    }
    cy->cap_gpu = (double)gp_cluster_gpu_milli_capacity(cy->c);
    for (int n = 0; n < cy->c->nnodes; n++) {
        cy->cap_cpu += (double)cy->c->nodes[n].cpu_milli;
        cy->cap_mem += (double)cy->c->nodes[n].memory_mib;
    }
    for (int r = 0; r < in->nrunning; r++) {
        const gp_sched_job *j = &in->running[r];
        for (int k = 0; k < j->replicas; k++) {
            gp_res u = gp_sched_usage(cy->c, &j->assignments[k], NULL);
            res_add(&cy->run[r].use, &u, 1);
            limits_account(cy, j->tenant, j->queue, &j->assignments[k], 1);
        }
        cy->run[r].gpus = cy->run[r].use.gpu_milli;
    }
    for (int q = 0; q < in->nqueues; q++) {
        cy->share[q] = limits_share(cy, q);
    }
    return 0;
}

void limits_fini(cycle *cy)
{
    free(cy->tu);
    free(cy->qu);
    free(cy->share);
    free(cy->run);
}

/* ---- guarantee ---- */

/* Whether dimension value g of a guarantee counts (see the file comment). */
static bool counts(int64_t g, bool gpu_compute)
{
    return gpu_compute ? g >= 0 : g > 0;
}

static bool borrows(const gp_res *g, const gp_res *use, const gp_res *need)
{
    return (need->gpu_milli > 0 && counts(g->gpu_milli, true) &&
            use->gpu_milli + need->gpu_milli > g->gpu_milli) ||
           (need->gpu_mem_mib > 0 && counts(g->gpu_mem_mib, false) &&
            use->gpu_mem_mib + need->gpu_mem_mib > g->gpu_mem_mib) ||
           (need->cpu_milli > 0 && counts(g->cpu_milli, false) &&
            use->cpu_milli + need->cpu_milli > g->cpu_milli) ||
           (need->memory_mib > 0 && counts(g->memory_mib, false) &&
            use->memory_mib + need->memory_mib > g->memory_mib);
}

bool limits_queue_above_guarantee(const cycle *cy, int queue)
{
    const gp_res *g = &cy->in->queues[queue].guarantee, *u = &cy->qu[queue];
    return (counts(g->gpu_milli, true) && u->gpu_milli > g->gpu_milli) ||
           (counts(g->gpu_mem_mib, false) && u->gpu_mem_mib > g->gpu_mem_mib) ||
           (counts(g->cpu_milli, false) && u->cpu_milli > g->cpu_milli) ||
           (counts(g->memory_mib, false) && u->memory_mib > g->memory_mib);
}

void limits_reclaim_reason(const cycle *cy, const job_ctx *jc, char *reason)
{
    const gp_sched_queue *q = &cy->in->queues[jc->job->queue];
    char owed[32], uses[32];
    fmt_gpus(uses, sizeof(uses), cy->qu[jc->job->queue].gpu_milli);
    if (q->guarantee.gpu_milli >= 0) {
        fmt_gpus(owed, sizeof(owed), q->guarantee.gpu_milli);
        reasonf(reason, "reclaimed: queue %s is owed %s GPUs, uses %s (job %lld)", q->name, owed,
                uses, (long long)jc->job->id);
    } else {
        reasonf(reason, "reclaimed: queue %s is within its guarantee, uses %s GPUs (job %lld)",
                q->name, uses, (long long)jc->job->id);
    }
}

/* ---- checks before placement ---- */

/* GPU compute and memory one replica of r takes on model m; false when m cannot hold it. */
static bool need_on_model(const cycle *cy, const gp_request *r, int m, int64_t *milli, int64_t *mem)
{
    const gp_gpu_model *gm = &cy->c->models[m];
    *milli = req_gpu_milli(r);
    switch (r->kind) {
    case GP_REQ_WHOLE:
        *mem = gm->mem_mib * r->gpu_count;
        return true;
    case GP_REQ_FRACTION:
        *mem = r->gpu_mem_mib;
        return true;
    case GP_REQ_MIG: {
        const gp_mig_profile *p =
            gm->mig == GP_MIG_NONE ? NULL : gp_mig_find(gm->mig, r->mig_profile);
        *mem = p ? gm->mem_mib * p->memory_slices / GP_MIG_MEMORY_SLICES : 0;
        return p != NULL;
    }
    default:
        *mem = 0;
        return true;
    }
}

enum { BLOCK_NONE, BLOCK_MODEL, BLOCK_MEM, BLOCK_QMEM };

/* Models the job may use under per-model quota, GPU memory quota and queue GPU memory
 * capability (*usable); *block says what blocked the first model refused; *min_mem the least
 * GPU memory the job takes on a usable model. */
static void usable_models(const cycle *cy, const job_ctx *jc, uint64_t *usable, int *block,
                          int *block_model, int64_t *min_mem)
{
    const gp_sched_job *j = jc->job;
    const gp_sched_tenant *t = &cy->in->tenants[j->tenant];
    const tenant_use *tu = &cy->tu[j->tenant];
    const gp_res *cap = &cy->in->queues[j->queue].capability, *qu = &cy->qu[j->queue];
    *usable = 0;
    *block = BLOCK_NONE;
    *block_model = -1;
    *min_mem = -1;
    for (int m = 0; m < cy->nmodels; m++) {
        int64_t milli, mem;
        if ((j->req.allowed_models && !(j->req.allowed_models & (1ull << m))) ||
            !need_on_model(cy, &j->req, m, &milli, &mem)) {
            continue;
        }
        milli *= j->replicas;
        mem *= j->replicas;
        int b = BLOCK_NONE;
        if (t->quota_model_milli[m] >= 0 && tu->model_milli[m] + milli > t->quota_model_milli[m]) {
            b = BLOCK_MODEL;
        } else if (t->quota_gpu_mem_mib >= 0 && tu->gpu_mem_mib + mem > t->quota_gpu_mem_mib) {
            b = BLOCK_MEM;
        } else if (cap->gpu_mem_mib >= 0 && qu->gpu_mem_mib + mem > cap->gpu_mem_mib) {
            b = BLOCK_QMEM;
        }
        if (b == BLOCK_NONE) {
            *usable |= 1ull << m;
            if (*min_mem < 0 || mem < *min_mem) {
                *min_mem = mem;
            }
        } else if (*block == BLOCK_NONE) {
            *block = b;
            *block_model = m;
        }
    }
}

#define NEVER_TEXT ", more than it can ever get"

/* "quota: tenant a uses 120 of 128 GiB GPU memory; the job needs 16 GiB" in the quota's unit. */
static void mem_quota_reason(const gp_sched_tenant *t, int64_t used, int64_t need, bool never,
                             char *reason)
{
    int64_t quota = t->quota_gpu_mem_mib;
    const char *unit = gp_sched_mem_unit(quota);
    char a[32], b[32], n[32];
    gp_sched_fmt_mem(a, sizeof(a), used, quota);
    gp_sched_fmt_mem(b, sizeof(b), quota, quota);
    gp_sched_fmt_mem(n, sizeof(n), need, quota);
    reasonf(reason, "quota: tenant %s uses %s of %s %s GPU memory; the job needs %s %s%s", t->name,
            a, b, unit, n, unit, never ? NEVER_TEXT : "");
}

/* "queue q: capability 128 GiB GPU memory, uses 120 GiB; the job needs 16 GiB". */
static void mem_capability_reason(const gp_sched_queue *q, int64_t used, int64_t need, bool never,
                                  char *reason)
{
    int64_t cap = q->capability.gpu_mem_mib;
    const char *unit = gp_sched_mem_unit(cap);
    char a[32], b[32], n[32];
    gp_sched_fmt_mem(a, sizeof(a), cap, cap);
    gp_sched_fmt_mem(b, sizeof(b), used, cap);
    gp_sched_fmt_mem(n, sizeof(n), need, cap);
    reasonf(reason, "queue %s: capability %s %s GPU memory, uses %s %s; the job needs %s %s%s",
            q->name, a, unit, b, unit, n, unit, never ? NEVER_TEXT : "");
}

static void model_reason(const cycle *cy, const job_ctx *jc, int block, int m, char *reason)
{
    const gp_sched_job *j = jc->job;
    const gp_sched_tenant *t = &cy->in->tenants[j->tenant];
    const tenant_use *tu = &cy->tu[j->tenant];
    const gp_sched_queue *q = &cy->in->queues[j->queue];
    int64_t milli, mem;
    need_on_model(cy, &j->req, m, &milli, &mem);
    milli *= j->replicas;
    mem *= j->replicas;
    if (block == BLOCK_MODEL) {
        char a[32], b[32], n[32];
        fmt_gpus(a, sizeof(a), tu->model_milli[m]);
        fmt_gpus(b, sizeof(b), t->quota_model_milli[m]);
        fmt_gpus(n, sizeof(n), milli);
        reasonf(reason, "quota: tenant %s uses %s of %s %s GPUs; the job needs %s%s", t->name, a, b,
                cy->c->models[m].name, n, milli > t->quota_model_milli[m] ? NEVER_TEXT : "");
    } else if (block == BLOCK_MEM) {
        mem_quota_reason(t, tu->gpu_mem_mib, mem, mem > t->quota_gpu_mem_mib, reason);
    } else {
        mem_capability_reason(q, cy->qu[j->queue].gpu_mem_mib, mem, mem > q->capability.gpu_mem_mib,
                              reason);
    }
}

static bool tenant_milli_ok(cycle *cy, const gp_sched_job *j, int64_t need, char *reason)
{
    const gp_sched_tenant *t = &cy->in->tenants[j->tenant];
    tenant_use *tu = &cy->tu[j->tenant];
    int64_t used = tu->gpu_milli;
    if (t->quota_gpu_milli < 0 || used + need <= t->quota_gpu_milli) {
        return true;
    }
    if (tu->refused_set && tu->refused_used == used && tu->refused_need == need) {
        reason_copy(reason, tu->refused);
        return false;
    }
    char u[32], q[32], n[32];
    fmt_gpus(u, sizeof(u), used);
    fmt_gpus(q, sizeof(q), t->quota_gpu_milli);
    fmt_gpus(n, sizeof(n), need);
    if (need > t->quota_gpu_milli) {
        reasonf(reason, "quota: tenant %s has a quota of %s GPUs; the job needs %s" NEVER_TEXT,
                t->name, q, n);
    } else {
        reasonf(reason, "quota: tenant %s uses %s of %s GPUs; the job needs %s", t->name, u, q, n);
    }
    tu->refused_set = true;
    tu->refused_used = used;
    tu->refused_need = need;
    reason_copy(tu->refused, reason);
    return false;
}

/* Queue capability over GPU compute, CPU and memory (GPU memory is per model, above). */
static bool capability_ok(const cycle *cy, const gp_sched_job *j, const gp_res *need, char *reason)
{
    static const char *const what[3] = {"GPUs", "CPU cores", "memory"};
    const gp_sched_queue *q = &cy->in->queues[j->queue];
    const gp_res *cap = &q->capability, *u = &cy->qu[j->queue];
    const int64_t caps[3] = {cap->gpu_milli, cap->cpu_milli, cap->memory_mib};
    const int64_t used[3] = {u->gpu_milli, u->cpu_milli, u->memory_mib};
    const int64_t needs[3] = {need->gpu_milli, need->cpu_milli, need->memory_mib};
    for (int d = 0; d < 3; d++) {
        if (caps[d] < 0 || used[d] + needs[d] <= caps[d]) {
            continue;
        }
        char a[32], b[32], n[32];
        void (*fmt)(char *, size_t, int64_t) = d == 0 ? fmt_gpus : d == 1 ? fmt_cores : fmt_mib;
        fmt(a, sizeof(a), caps[d]);
        fmt(b, sizeof(b), used[d]);
        fmt(n, sizeof(n), needs[d]);
        reasonf(reason, "queue %s: capability %s %s, uses %s; the job needs %s%s", q->name, a,
                what[d], b, n, needs[d] > caps[d] ? NEVER_TEXT : "");
        return false;
    }
    return true;
}

static void borrow_reason(const cycle *cy, const gp_sched_job *j, const gp_res *need, char *reason)
{
    const gp_sched_queue *q = &cy->in->queues[j->queue];
    char a[32], b[32], n[32];
    fmt_gpus(a, sizeof(a), q->guarantee.gpu_milli);
    fmt_gpus(b, sizeof(b), cy->qu[j->queue].gpu_milli);
    fmt_gpus(n, sizeof(n), need->gpu_milli);
    reasonf(reason,
            "borrowing: queue %s would pass its guarantee (owed %s GPUs, uses %s; the job needs "
            "%s) and the job is not preemptible",
            q->name, a, b, n);
}

bool limits_check(cycle *cy, job_ctx *jc, char *reason)
{
    const gp_sched_job *j = jc->job;
    gp_res need = {req_gpu_milli(&j->req) * j->replicas, 0, j->req.cpu_milli * j->replicas,
                   j->req.memory_mib * j->replicas};
    if (!tenant_milli_ok(cy, j, need.gpu_milli, reason)) {
        return false;
    }
    jc->limit_models = j->req.allowed_models;
    if (j->req.kind != GP_REQ_NONE) {
        uint64_t usable;
        int block, model;
        int64_t min_mem;
        usable_models(cy, jc, &usable, &block, &model, &min_mem);
        if (usable == 0 && block != BLOCK_NONE) {
            model_reason(cy, jc, block, model, reason);
            return false;
        }
        if (usable != 0 && block != BLOCK_NONE) {
            jc->limit_models = usable;
        }
        need.gpu_mem_mib = min_mem > 0 ? min_mem : 0;
    }
    if (!capability_ok(cy, j, &need, reason)) {
        return false;
    }
    bool borrowing = borrows(&cy->in->queues[j->queue].guarantee, &cy->qu[j->queue], &need);
    if (borrowing && !j->preemptible) {
        borrow_reason(cy, j, &need, reason);
        return false;
    }
    jc->reclaim = !borrowing;
    return true;
}

bool limits_post_check(cycle *cy, const job_ctx *jc, const gp_assignment *a, int n, char *reason)
{
    const gp_sched_job *j = jc->job;
    const gp_sched_tenant *t = &cy->in->tenants[j->tenant];
    const tenant_use *tu = &cy->tu[j->tenant];
    gp_res need = {0, 0, 0, 0};
    int64_t per_model[GP_MAX_MODELS] = {0};
    for (int k = 0; k < n; k++) {
        gp_res u = gp_sched_usage(cy->c, &a[k], NULL);
        res_add(&need, &u, 1);
        model_usage(cy->c, &a[k], per_model, 1);
    }
    if (!tenant_milli_ok(cy, j, need.gpu_milli, reason)) {
        return false;
    }
    for (int m = 0; m < cy->nmodels; m++) {
        if (per_model[m] > 0 && t->quota_model_milli[m] >= 0 &&
            tu->model_milli[m] + per_model[m] > t->quota_model_milli[m]) {
            model_reason(cy, jc, BLOCK_MODEL, m, reason);
            return false;
        }
    }
    if (t->quota_gpu_mem_mib >= 0 && tu->gpu_mem_mib + need.gpu_mem_mib > t->quota_gpu_mem_mib) {
        mem_quota_reason(t, tu->gpu_mem_mib, need.gpu_mem_mib, false, reason);
        return false;
    }
    const gp_sched_queue *q = &cy->in->queues[j->queue];
    if (q->capability.gpu_mem_mib >= 0 &&
        cy->qu[j->queue].gpu_mem_mib + need.gpu_mem_mib > q->capability.gpu_mem_mib) {
        mem_capability_reason(q, cy->qu[j->queue].gpu_mem_mib, need.gpu_mem_mib, false, reason);
        return false;
    }
    if (!capability_ok(cy, j, &need, reason)) {
        return false;
    }
    if (!j->preemptible && borrows(&cy->in->queues[j->queue].guarantee, &cy->qu[j->queue], &need)) {
        borrow_reason(cy, j, &need, reason);
        return false;
    }
    return true;
}
