/* The scheduler: order, limits, gangs, preemption and reclaim, backfill, revert, placement
 * constraints, and a randomized run checking every limit after every cycle. */
#include "gpupool/placement.h"
#include "gpupool/sched.h"
#include "gpupool/topology.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXJOBS 40000
#define GIB     1024

/* ---- a small world: cluster, queues, tenants, running and pending jobs ---- */

typedef struct world {
    gp_cluster *c;
    gp_scheduler *s;
    gp_sched_config cfg;
    gp_sched_queue q[8];
    int nq;
    gp_sched_tenant t[8];
    int nt;
    gp_sched_job *run;
    int nrun;
    gp_sched_job *pend;
    int npend;
    const double *util;
    const double *cost;
    const int64_t *drain_at;
    int64_t now;
    uint64_t seed;
} world;

static void w_init(world *w)
{
    memset(w, 0, sizeof(*w));
    w->c = gp_cluster_new();
    gp_sched_config_default(&w->cfg);
    w->run = calloc(MAXJOBS, sizeof(gp_sched_job));
    w->pend = calloc(MAXJOBS, sizeof(gp_sched_job));
    assert_non_null(w->run);
    assert_non_null(w->pend);
    w->seed = 1;
}

static void w_start(world *w)
{
    assert_int_equal(gp_sched_new(w->c, &w->cfg, &w->s, NULL), 0);
}

static void w_fini(world *w)
{
    for (int i = 0; i < w->nrun; i++) {
        free((void *)w->run[i].assignments);
    }
    free(w->run);
    free(w->pend);
    gp_sched_free(w->s);
    gp_cluster_free(w->c);
}

static int add_queue(world *w, const char *name, double weight, int64_t guarantee_milli,
                     int64_t capability_milli)
{
    gp_sched_queue *q = &w->q[w->nq];
    memset(q, 0, sizeof(*q));
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->weight = weight;
    q->guarantee = (gp_res){guarantee_milli, -1, -1, -1};
    q->capability = (gp_res){capability_milli, -1, -1, -1};
    q->reclaimable = true;
    return w->nq++;
}

static int add_tenant(world *w, const char *name, int64_t quota_milli)
{
    gp_sched_tenant *t = &w->t[w->nt];
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->quota_gpu_milli = quota_milli;
    t->quota_gpu_mem_mib = -1;
    for (int m = 0; m < GP_MAX_MODELS; m++) {
        t->quota_model_milli[m] = -1;
    }
    return w->nt++;
}

static gp_sched_job mkjob(int64_t id, int tenant, int queue, int prio, gp_request req, int replicas)
{
    gp_sched_job j;
    memset(&j, 0, sizeof(j));
    j.id = id;
    j.tenant = tenant;
    j.queue = queue;
    j.priority = prio;
    snprintf(j.priority_class, sizeof(j.priority_class), "p%d", prio);
    j.submit_ms = id;
    j.replicas = replicas;
    j.req = req;
    j.gpu_policy = GP_GPU_DEFAULT;
    return j;
}

static void submit(world *w, gp_sched_job j)
{
    assert_true(w->npend < MAXJOBS);
    w->pend[w->npend++] = j;
}

/* A running job holding count whole GPUs from first on node. */
static void run_whole(world *w, gp_sched_job j, int node, int first, int count, int64_t start)
{
    gp_assignment *a = calloc(1, sizeof(*a));
    a->node = node;
    a->cpu_milli = j.req.cpu_milli;
    a->memory_mib = j.req.memory_mib;
    for (int i = 0; i < count; i++) {
        a->shares[a->nshares++] =
            (gp_gpu_share){.gpu = (uint8_t)(first + i),
                           .milli = 1000,
                           .mem_mib = gp_cluster_gpu(w->c, node, first + i)->mem_mib,
                           .mig_start = -1};
    }
    assert_int_equal(gp_cluster_assign(w->c, a), 0);
    j.replicas = 1;
    j.start_ms = start;
    j.assignments = a;
    w->run[w->nrun++] = j;
}

/* A running fraction of gpu on node. */
static void run_frac(world *w, gp_sched_job j, int node, int gpu, int milli)
{
    gp_assignment *a = calloc(1, sizeof(*a));
    a->node = node;
    a->cpu_milli = j.req.cpu_milli;
    a->nshares = 1;
    a->shares[0] = (gp_gpu_share){.gpu = (uint8_t)gpu, .milli = milli, .mig_start = -1};
    assert_int_equal(gp_cluster_assign(w->c, a), 0);
    j.replicas = 1;
    j.assignments = a;
    w->run[w->nrun++] = j;
}

static gp_sched_input input_of(const world *w)
{
    return (gp_sched_input){.queues = w->q,
                            .nqueues = w->nq,
                            .tenants = w->t,
                            .ntenants = w->nt,
                            .running = w->run,
                            .nrunning = w->nrun,
                            .pending = w->pend,
                            .npending = w->npend,
                            .gpu_util = w->util,
                            .model_cost = w->cost,
                            .drain_at_ms = w->drain_at,
                            .now_ms = w->now,
                            .seed = w->seed};
}

static void cycle(world *w, gp_sched_result *r)
{
    gp_sched_input in = input_of(w);
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_sched_cycle(w->s, &in, r, &d);
    if (rc != 0) {
        fprintf(stderr, "cycle: %s\n", d.msg);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(gp_cluster_check(w->c, &d), 0);
    assert_int_equal(r->nplaced + r->nwaiting, w->npend);
}

/* The controller could not commit: the cluster goes back, the jobs stay pending. */
static void revert(world *w, gp_sched_result *r)
{
    gp_sched_input in = input_of(w);
    gp_diag d;
    assert_int_equal(gp_sched_revert(w->s, &in, r), 0);
    assert_int_equal(gp_cluster_check(w->c, &d), 0);
    gp_sched_result_fini(r);
}

static int find_job(const gp_sched_job *jobs, int n, int64_t id)
{
    for (int i = 0; i < n; i++) {
        if (jobs[i].id == id) {
            return i;
        }
    }
    return -1;
}

static void drop(gp_sched_job *jobs, int *n, int i)
{
    jobs[i] = jobs[--*n];
}

/* Makes the world what the controller would commit: placed jobs run, victims are gone. */
static void apply(world *w, const gp_sched_result *r)
{
    for (int e = 0; e < r->nevicted; e++) {
        int i = find_job(w->run, w->nrun, r->evicted[e].job_id);
        assert_true(i >= 0);
        free((void *)w->run[i].assignments);
        drop(w->run, &w->nrun, i);
    }
    for (int p = 0; p < r->nplaced; p++) {
        int i = find_job(w->pend, w->npend, r->placed[p].job_id);
        assert_true(i >= 0);
        gp_sched_job j = w->pend[i];
        drop(w->pend, &w->npend, i);
        gp_assignment *a = malloc(sizeof(gp_assignment) * (size_t)j.replicas);
        memcpy(a, r->placed[p].replicas, sizeof(gp_assignment) * (size_t)j.replicas);
        j.assignments = a;
        j.start_ms = w->now;
        w->run[w->nrun++] = j;
    }
}

/* The job ends: its assignments go back to the cluster. */
static void finish(world *w, int64_t id)
{
    int i = find_job(w->run, w->nrun, id);
    assert_true(i >= 0);
    for (int k = 0; k < w->run[i].replicas; k++) {
        assert_int_equal(gp_cluster_release(w->c, &w->run[i].assignments[k]), 0);
    }
    free((void *)w->run[i].assignments);
    drop(w->run, &w->nrun, i);
}

static const gp_sched_placement *placed(const gp_sched_result *r, int64_t id)
{
    for (int i = 0; i < r->nplaced; i++) {
        if (r->placed[i].job_id == id) {
            return &r->placed[i];
        }
    }
    return NULL;
}

static const char *waiting(const gp_sched_result *r, int64_t id)
{
    for (int i = 0; i < r->nwaiting; i++) {
        if (r->waiting[i].job_id == id) {
            return r->waiting[i].reason;
        }
    }
    return NULL;
}

static bool evicted(const gp_sched_result *r, int64_t id)
{
    for (int i = 0; i < r->nevicted; i++) {
        if (r->evicted[i].job_id == id) {
            return true;
        }
    }
    return false;
}

static void assert_reason(const gp_sched_result *r, int64_t id, const char *part)
{
    const char *why = waiting(r, id);
    if (!why || !strstr(why, part)) {
        fprintf(stderr, "job %lld: reason \"%s\" lacks \"%s\"\n", (long long)id,
                why ? why : "(placed)", part);
        fail();
    }
}

static int nodes_a100(world *w, int n, int gpus)
{
    int m = gp_cluster_model(w->c, "A100-80GB", 80 * GIB);
    char name[32];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        fx_node(w->c, name, 64000, 512 * GIB, gpus, m);
    }
    return m;
}

/* ---- order ---- */

static void test_priority_order(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 1, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    submit(&w, mkjob(1, t, q, 0, fx_whole(0, 8), 1));   /* first in, low priority */
    submit(&w, mkjob(2, t, q, 100, fx_whole(0, 8), 1)); /* later, higher */
    gp_sched_result r;
    cycle(&w, &r);
    assert_non_null(placed(&r, 2));
    assert_reason(&r, 1, "capacity");
    gp_sched_result_fini(&r);
    w_fini(&w);
}

static void test_drf_order(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 1, 8);
    int qa = add_queue(&w, "light", 1, -1, -1), qb = add_queue(&w, "heavy", 3, -1, -1);
    int t = add_tenant(&w, "t", -1);
    w.cfg.backfill = false;
    w_start(&w);
    for (int i = 0; i < 8; i++) {
        submit(&w, mkjob(1 + i, t, qa, 0, fx_whole(0, 1), 1));  /* submitted first */
        submit(&w, mkjob(11 + i, t, qb, 0, fx_whole(0, 1), 1)); /* later */
    }
    gp_sched_result r;
    cycle(&w, &r);
    /* Shares a/8 and b/24: A, B, B, B, A, B, B, B. */
    int a = 0, b = 0;
    for (int i = 0; i < r.nplaced; i++) {
        a += r.placed[i].job_id <= 8;
        b += r.placed[i].job_id > 8;
    }
    assert_int_equal(a, 2);
    assert_int_equal(b, 6);
    assert_int_equal(r.placed[0].job_id, 1);
    assert_int_equal(r.placed[1].job_id, 11);
    gp_sched_result_fini(&r);
    w_fini(&w);
}

/* ---- limits ---- */

static void check_tenant_usage(const world *w, int tenant, int64_t *milli, int64_t *mem,
                               int64_t *per_model)
{
    *milli = *mem = 0;
    memset(per_model, 0, sizeof(int64_t) * GP_MAX_MODELS);
    for (int i = 0; i < w->nrun; i++) {
        if (w->run[i].tenant != tenant) {
            continue;
        }
        for (int k = 0; k < w->run[i].replicas; k++) {
            int model;
            gp_res u = gp_sched_usage(w->c, &w->run[i].assignments[k], &model);
            *milli += u.gpu_milli;
            *mem += u.gpu_mem_mib;
            if (model >= 0) {
                per_model[model] += u.gpu_milli;
            }
        }
    }
}

static void test_quota(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    int a100 = nodes_a100(&w, 4, 8);
    int h100 = gp_cluster_model(w.c, "H100-80GB", 80 * GIB);
    fx_node(w.c, "h0", 64000, 512 * GIB, 8, h100);
    int q = add_queue(&w, "q", 1, -1, -1);
    int ta = add_tenant(&w, "team-a", 16000), tb = add_tenant(&w, "team-b", -1);
    int tc = add_tenant(&w, "team-c", -1);
    w.t[tb].quota_model_milli[a100] = 4000;
    w.t[tc].quota_gpu_mem_mib = 3 * 80 * GIB;
    w_start(&w);
    gp_request only_a100 = fx_whole(0, 1);
    only_a100.allowed_models = 1ull << a100;
    for (int i = 0; i < 40; i++) {
        submit(&w, mkjob(100 + i, ta, q, 0, fx_whole(0, 1), 1));
        submit(&w, mkjob(200 + i, tb, q, 0, only_a100, 1));
        submit(&w, mkjob(300 + i, tc, q, 0, fx_frac(0, 500), 1));
        w.pend[w.npend - 1].req.gpu_mem_mib = 40 * GIB;
    }
    gp_sched_result r;
    cycle(&w, &r);
    apply(&w, &r);
    int64_t milli, mem, per_model[GP_MAX_MODELS];
    check_tenant_usage(&w, ta, &milli, &mem, per_model);
    assert_int_equal(milli, 16000);
    check_tenant_usage(&w, tb, &milli, &mem, per_model);
    assert_int_equal(per_model[a100], 4000);
    check_tenant_usage(&w, tc, &milli, &mem, per_model);
    assert_int_equal(mem, 6 * 40 * GIB);
    /* In the units the quotas were set in: GPUs and GiB, not milli-GPU and MiB. */
    assert_reason(&r, 139, "quota: tenant team-a uses 16 of 16 GPUs; the job needs 1");
    assert_reason(&r, 239, "quota: tenant team-b uses 4 of 4 A100-80GB GPUs; the job needs 1");
    assert_reason(&r, 339,
                  "quota: tenant team-c uses 240 of 240 GiB GPU memory; the job needs 40 GiB");
    gp_sched_result_fini(&r);
    /* A job larger than the whole quota waits with a reason saying so. */
    submit(&w, mkjob(999, ta, q, 0, fx_whole(0, 8), 3));
    cycle(&w, &r);
    assert_reason(&r, 999,
                  "unschedulable: the job needs 24 GPUs in all, more than tenant team-a's quota "
                  "of 16 GPUs");
    gp_sched_result_fini(&r);
    w_fini(&w);
}

/* A job allowing several models moves to another model when one's quota is used up; the
 * exact usage of the chosen GPUs (here larger than the model's nominal memory) is checked too. */
/* Each job a quota holds back is told the tenant's use at its turn and its own need, whatever
 * the jobs before it were told: jobs of two tenants in turn, needs that repeat, a use that grows
 * between two refusals of the same need. */
static void test_quota_reasons_each_job(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 4, 8);
    int q = add_queue(&w, "q", 1, -1, -1);
    int ta = add_tenant(&w, "team-a", 4000), tb = add_tenant(&w, "team-b", 4000);
    w_start(&w);
    static const int gpus[] = {3, 2, 2, 1, 2, 2};
    for (int i = 0; i < 6; i++) {
        submit(&w, mkjob(10 + i, ta, q, 0, fx_whole(0, gpus[i]), 1));
        submit(&w, mkjob(20 + i, tb, q, 0, fx_whole(0, gpus[i]), 1));
    }
    gp_sched_result r;
    cycle(&w, &r);
    assert_reason(&r, 11, "quota: tenant team-a uses 3 of 4 GPUs; the job needs 2");
    assert_reason(&r, 12, "quota: tenant team-a uses 3 of 4 GPUs; the job needs 2");
    assert_reason(&r, 21, "quota: tenant team-b uses 3 of 4 GPUs; the job needs 2");
    assert_reason(&r, 14, "quota: tenant team-a uses 4 of 4 GPUs; the job needs 2");
    assert_reason(&r, 15, "quota: tenant team-a uses 4 of 4 GPUs; the job needs 2");
    assert_reason(&r, 25, "quota: tenant team-b uses 4 of 4 GPUs; the job needs 2");
    gp_sched_result_fini(&r);
    w_fini(&w);
}

static void test_quota_models_exact(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    int a100 = nodes_a100(&w, 1, 8);
    int h100 = gp_cluster_model(w.c, "H100-80GB", 80 * GIB);
    fx_node(w.c, "h0", 64000, 512 * GIB, 8, h100);
    int x = gp_cluster_model(w.c, "X-80GB", 80 * GIB);
    gp_gpu_spec big[2] = {{.model = x, .numa = -1, .mem_mib = 96 * GIB},
                          {.model = x, .numa = -1, .mem_mib = 96 * GIB}};
    gp_cluster_add_node(w.c, "big", 64000, 512 * GIB, 2, big);
    double cost[3] = {0};
    cost[a100] = 1.0; /* A100 first */
    cost[h100] = 2.0;
    cost[x] = 5.0;
    w.cost = cost;
    int q = add_queue(&w, "q", 1, -1, -1);
    int tb = add_tenant(&w, "team-b", -1), tm = add_tenant(&w, "team-m", -1);
    w.t[tb].quota_model_milli[a100] = 2000;
    w.t[tm].quota_gpu_mem_mib = 180 * GIB;
    w_start(&w);
    for (int i = 0; i < 6; i++) {
        submit(&w, mkjob(1 + i, tb, q, 0, fx_whole(0, 1), 1));
    }
    gp_sched_result r;
    cycle(&w, &r);
    assert_int_equal(r.nplaced, 6); /* 2 on A100, the rest on H100 */
    apply(&w, &r);
    gp_sched_result_fini(&r);
    int64_t milli, mem, per_model[GP_MAX_MODELS];
    check_tenant_usage(&w, tb, &milli, &mem, per_model);
    assert_int_equal(per_model[a100], 2000);
    assert_int_equal(per_model[h100], 4000);
    /* team-m may use only the 96 GiB GPUs: the second would pass 180 GiB. */
    gp_request r96 = fx_whole(0, 1);
    r96.allowed_models = 1ull << x;
    submit(&w, mkjob(10, tm, q, 0, r96, 1));
    submit(&w, mkjob(11, tm, q, 0, r96, 1));
    cycle(&w, &r);
    assert_non_null(placed(&r, 10));
    assert_reason(&r, 11,
                  "quota: tenant team-m uses 96 of 180 GiB GPU memory; the job needs 96 GiB");
    gp_sched_result_fini(&r);
    w_fini(&w);
}

/* Quota and capability reasons keep the unit of the limit: fractions of GPUs exact to a
 * thousandth, GPU memory in GiB when the limit is whole GiB (usage to two decimals), else MiB. */
static void test_quota_units(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 4, 8);
    int q = add_queue(&w, "q", 1, -1, -1), qm = add_queue(&w, "qm", 1, -1, -1);
    w.q[qm].capability.gpu_mem_mib = 100 * GIB;
    int tf = add_tenant(&w, "team-f", 1500), tg = add_tenant(&w, "team-g", -1);
    int tm = add_tenant(&w, "team-m", -1), tq = add_tenant(&w, "team-q", -1);
    w.t[tg].quota_gpu_mem_mib = 128 * GIB;
    w.t[tm].quota_gpu_mem_mib = 1000;
    w_start(&w);
    for (int i = 0; i < 4; i++) {
        submit(&w, mkjob(10 + i, tf, q, 0, fx_frac(0, 500), 1)); /* 0.5 GPU each */
        submit(&w, mkjob(20 + i, tg, q, 0, fx_frac(0, 100), 1));
        w.pend[w.npend - 1].req.gpu_mem_mib = 40 * GIB + 512; /* 40.5 GiB each */
        submit(&w, mkjob(30 + i, tm, q, 0, fx_frac(0, 100), 1));
        w.pend[w.npend - 1].req.gpu_mem_mib = 400;
        submit(&w, mkjob(40 + i, tq, qm, 0, fx_whole(0, 1), 1)); /* 80 GiB each */
    }
    gp_sched_result r;
    cycle(&w, &r);
    assert_reason(&r, 13, "quota: tenant team-f uses 1.5 of 1.5 GPUs; the job needs 0.5");
    assert_reason(&r, 23,
                  "quota: tenant team-g uses 121.5 of 128 GiB GPU memory; the job needs 40.5 GiB");
    assert_reason(&r, 32,
                  "quota: tenant team-m uses 800 of 1000 MiB GPU memory; the job needs 400 MiB");
    assert_reason(&r, 41,
                  "queue qm: capability 100 GiB GPU memory, uses 80 GiB; the job needs 80 GiB");
    gp_sched_result_fini(&r);
    char buf[32];
    gp_sched_fmt_gpus(buf, sizeof(buf), 12345);
    assert_string_equal(buf, "12.345");
    gp_sched_fmt_mem(buf, sizeof(buf), 1, 1024); /* rounded up: a use is never shown as none */
    assert_string_equal(buf, "0.01");
    gp_sched_fmt_mem(buf, sizeof(buf), 1536 + 10, 2048);
    assert_string_equal(buf, "1.51");
    assert_string_equal(gp_sched_mem_unit(-1), "MiB");
    w_fini(&w);
}

/* A job kept off free nodes only by their maintenance deadlines says so, with the deadline in
 * UTC (the stored one when given) and how long the job may run; not "capacity: ...". */
static void test_maintenance_reason(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 3, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w.now = INT64_C(1746100800000); /* 2025-05-01T12:00:00Z */
    gp_sched_job full = mkjob(1, t, q, 0, fx_whole(0, 8), 1);
    full.max_runtime_ms = 4 * 3600000;
    run_whole(&w, full, 0, 0, 8, w.now);
    /* n1 drains at 14:00; n2 at 13:00:27.345, the stored deadline (its window is rounded) */
    assert_int_equal(gp_cluster_set_window(w.c, 1, 2 * 3600000), 0);
    assert_int_equal(gp_cluster_set_window(w.c, 2, 3600000 + 27000), 0);
    int64_t drain_at[3] = {0, 0, w.now + 3600000 + 27345};
    w.drain_at = drain_at;
    w_start(&w);
    gp_sched_job j = mkjob(10, t, q, 0, fx_whole(0, 8), 1);
    j.max_runtime_ms = j.req.runtime_ms = 3 * 3600000;
    submit(&w, j);
    submit(&w, mkjob(11, t, q, 0, fx_whole(0, 8), 1)); /* no max runtime */
    j = mkjob(12, t, q, 0, fx_whole(0, 1), 1);
    j.max_runtime_ms = j.req.runtime_ms = 90 * 60000; /* ends before n1's deadline */
    submit(&w, j);
    j = mkjob(13, t, q, 0, fx_whole(0, 8), 1);
    j.max_runtime_ms = j.req.runtime_ms = 2 * 3600000 + 1000;
    submit(&w, j);
    submit(&w, mkjob(14, t, q, 0, fx_whole(0, 8), 2)); /* a gang: one drained node is not enough */
    gp_sched_result r;
    cycle(&w, &r);
    assert_reason(&r, 10,
                  "maintenance: n1 drains at 14:00 UTC and the job may run 3h; 1 more node that "
                  "could hold it drains by then");
    assert_reason(&r, 11, "maintenance: n1 drains at 14:00 UTC and the job sets no max runtime");
    assert_non_null(placed(&r, 12));
    assert_int_equal(placed(&r, 12)->replicas[0].node, 1);
    assert_reason(&r, 13, "maintenance: n2 drains at 13:00:27 UTC and the job may run 2h1s");
    assert_true(strstr(waiting(&r, 13), "more node") == NULL);
    assert_reason(&r, 14, "gang: needs 2 replicas");
    gp_sched_result_fini(&r);
    w_fini(&w);

    /* Without a stored deadline: now + the window; another UTC day shows its date. */
    w_init(&w);
    nodes_a100(&w, 1, 8);
    q = add_queue(&w, "q", 1, -1, -1);
    t = add_tenant(&w, "t", -1);
    w.now = INT64_C(1709163000000); /* 2024-02-28T23:30:00Z */
    assert_int_equal(gp_cluster_set_window(w.c, 0, 3600000), 0);
    w_start(&w);
    submit(&w, mkjob(1, t, q, 0, fx_whole(0, 1), 1));
    cycle(&w, &r);
    assert_reason(&r, 1,
                  "maintenance: n0 drains at 2024-02-29 00:30 UTC and the job sets no max runtime");
    gp_sched_result_fini(&r);
    w_fini(&w);
}

static void test_capability(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 2, 8);
    int q = add_queue(&w, "research", 1, -1, 8000), t = add_tenant(&w, "t", -1);
    w_start(&w);
    for (int i = 0; i < 12; i++) {
        submit(&w, mkjob(1 + i, t, q, 0, fx_whole(0, 1), 1));
    }
    gp_sched_result r;
    cycle(&w, &r);
    assert_int_equal(r.nplaced, 8);
    assert_reason(&r, 12, "queue research: capability 8 GPUs, uses 8; the job needs 1");
    gp_sched_result_fini(&r);
    w_fini(&w);
}

static void test_borrowing(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 2, 8);
    int q = add_queue(&w, "q", 1, 4000, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    submit(&w, mkjob(1, t, q, 0, fx_whole(0, 8), 1)); /* beyond the guarantee, not preemptible */
    gp_sched_job p = mkjob(2, t, q, 0, fx_whole(0, 8), 1);
    p.preemptible = true;
    submit(&w, p);
    submit(&w, mkjob(3, t, q, 0, fx_whole(0, 1), 1)); /* within it, but job 2 borrows */
    gp_sched_result r;
    cycle(&w, &r);
    assert_reason(&r, 3, "borrowing: queue q would pass its guarantee");
    /* More than the whole guarantee: it could never run. */
    assert_reason(&r, 1,
                  "unschedulable: the job needs 8 GPUs in all, more than queue q is owed "
                  "(4 GPUs)");
    assert_non_null(placed(&r, 2));
    gp_sched_result_fini(&r);
    w_fini(&w);
}

/* ---- gangs ---- */

static void snapshot(const gp_cluster *c, int64_t *out)
{
    int k = 0;
    for (int n = 0; n < gp_cluster_node_count(c); n++) {
        const gp_node *node = gp_cluster_node(c, n);
        out[k++] = node->cpu_free;
        out[k++] = node->mem_free;
        out[k++] = node->schedulable;
        for (int g = 0; g < node->ngpus; g++) {
            const gp_gpu *u = gp_cluster_gpu(c, n, g);
            out[k++] = u->milli_free;
            out[k++] = u->mem_free_mib;
            out[k++] = u->mode << 16 | u->mig_mem_used << 8 | u->mig_compute_used;
            out[k++] = u->holders;
        }
    }
    out[k++] = gp_cluster_gpu_milli_allocated(c);
}

static size_t snapshot_size(const gp_cluster *c)
{
    return sizeof(int64_t) *
           (size_t)(3 * gp_cluster_node_count(c) + 4 * gp_cluster_gpu_count(c) + 1);
}

static void test_gang_all_or_nothing(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 4, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    run_whole(&w, mkjob(1, t, q, 0, fx_whole(0, 8), 1), 0, 0, 8, 0);
    submit(&w, mkjob(2, t, q, 0, fx_whole(8000, 8), 4));
    int64_t *before = malloc(snapshot_size(w.c)), *after = malloc(snapshot_size(w.c));
    snapshot(w.c, before);
    gp_sched_result r;
    cycle(&w, &r);
    assert_int_equal(r.nplaced, 0);
    assert_reason(&r, 2, "gang: needs 4 replicas");
    assert_reason(&r, 2, "room for 3");
    gp_sched_result_fini(&r);
    snapshot(w.c, after);
    assert_memory_equal(before, after, snapshot_size(w.c));
    /* Three fit: all placed, on three distinct nodes. */
    w.pend[0].replicas = 3;
    cycle(&w, &r);
    const gp_sched_placement *p = placed(&r, 2);
    assert_non_null(p);
    assert_int_equal(p->nreplicas, 3);
    assert_true(p->replicas[0].node != p->replicas[1].node);
    gp_sched_result_fini(&r);
    free(before);
    free(after);
    w_fini(&w);
}

/* ---- preemption and reclaim ---- */

static gp_sched_job low(int64_t id, int t, int q, bool preemptible)
{
    gp_sched_job j = mkjob(id, t, q, 10, fx_whole(0, 1), 1);
    j.preemptible = preemptible;
    return j;
}

static gp_sched_job high(int64_t id, int t, int q, gp_request req)
{
    gp_sched_job j = mkjob(id, t, q, 1000, req, 1);
    j.can_preempt = true;
    snprintf(j.priority_class, sizeof(j.priority_class), "high");
    return j;
}

static void test_preempt_cheapest(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 2, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    run_whole(&w, low(1, t, q, true), 0, 0, 4, 100);
    run_whole(&w, low(2, t, q, true), 0, 4, 2, 200);
    run_whole(&w, low(3, t, q, true), 0, 6, 2, 300);
    run_whole(&w, low(4, t, q, true), 1, 0, 8, 100);
    submit(&w, high(10, t, q, fx_whole(0, 2)));
    w.now = 1000;
    gp_sched_result r;
    cycle(&w, &r);
    /* Two GPUs: job 3 (2 GPUs, started last) is cheapest. */
    assert_int_equal(r.nevicted, 1);
    assert_true(evicted(&r, 3));
    assert_non_null(placed(&r, 10));
    assert_non_null(
        strstr(r.evicted[0].reason, "preempted by job 10 (priority class high, 1000 > 10)"));
    assert_int_equal(r.evicted[0].for_job_id, 10);
    apply(&w, &r);
    gp_sched_result_fini(&r);
    /* Four GPUs: job 1 alone (4 GPUs, one job) beats jobs 2 + job 10's... job 10 is high. */
    submit(&w, high(11, t, q, fx_whole(0, 4)));
    cycle(&w, &r);
    assert_int_equal(r.nevicted, 1);
    assert_true(evicted(&r, 1));
    apply(&w, &r);
    gp_sched_result_fini(&r);
    /* Never evicts without placing: no node has 100 cores. */
    submit(&w, high(12, t, q, fx_whole(100000, 1)));
    cycle(&w, &r);
    assert_int_equal(r.nevicted, 0);
    assert_reason(&r, 12, "unschedulable: the job asks for 100 CPU cores per replica");
    gp_sched_result_fini(&r);
    w_fini(&w);
}

static void test_preempt_spares_unneeded(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 1, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    /* 8 one-GPU victims; the job needs 3: exactly 3 are evicted, the most recent ones. */
    for (int i = 0; i < 8; i++) {
        run_whole(&w, low(1 + i, t, q, true), 0, i, 1, 100 * i);
    }
    submit(&w, high(20, t, q, fx_whole(0, 3)));
    w.now = 10000;
    gp_sched_result r;
    cycle(&w, &r);
    assert_int_equal(r.nevicted, 3);
    assert_true(evicted(&r, 8) && evicted(&r, 7) && evicted(&r, 6));
    gp_sched_result_fini(&r);
    w_fini(&w);
}

static void test_no_victims(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 1, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    run_whole(&w, low(1, t, q, false), 0, 0, 8, 0); /* not preemptible */
    submit(&w, high(2, t, q, fx_whole(0, 1)));
    gp_sched_job never = high(3, t, q, fx_whole(0, 1)); /* PreemptNever class */
    never.can_preempt = false;
    submit(&w, never);
    gp_sched_result r;
    cycle(&w, &r);
    assert_int_equal(r.nevicted, 0);
    assert_reason(&r, 2, "would not make room");
    gp_sched_result_fini(&r);
    /* Now preemptible: the PreemptNever job still evicts nobody. */
    w.run[0].preemptible = true;
    w.npend = 0;
    submit(&w, never);
    cycle(&w, &r);
    assert_int_equal(r.nevicted, 0);
    assert_reason(&r, 3, "capacity");
    gp_sched_result_fini(&r);
    /* max_preemptions 0: no preemption at all. */
    gp_sched_free(w.s);
    w.cfg.max_preemptions = 0;
    w_start(&w);
    w.npend = 0;
    submit(&w, high(4, t, q, fx_whole(0, 1)));
    cycle(&w, &r);
    assert_int_equal(r.nevicted, 0);
    gp_sched_result_fini(&r);
    w_fini(&w);
}

static void test_reclaim(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 2, 8);
    int qa = add_queue(&w, "research", 1, 8000, -1), qb = add_queue(&w, "batch", 1, 0, -1);
    int t = add_tenant(&w, "t", -1);
    w_start(&w);
    /* batch borrows the whole pool with preemptible jobs of higher priority. */
    for (int i = 0; i < 4; i++) {
        gp_sched_job j = mkjob(1 + i, t, qb, 500, fx_whole(0, 4), 1);
        j.preemptible = true;
        run_whole(&w, j, i / 2, (i % 2) * 4, 4, 100 * i);
    }
    submit(&w, mkjob(10, t, qa, 0, fx_whole(0, 8), 1)); /* owed 8, not preemptible */
    w.now = 1000;
    gp_sched_result r;
    cycle(&w, &r);
    assert_non_null(placed(&r, 10));
    assert_int_equal(r.nevicted, 2);
    assert_non_null(
        strstr(r.evicted[0].reason, "reclaimed: queue research is owed 8 GPUs, uses 0"));
    apply(&w, &r);
    gp_sched_result_fini(&r);
    /* research is at its guarantee: a further job cannot reclaim (and may not borrow). */
    gp_sched_job more = mkjob(11, t, qa, 0, fx_whole(0, 4), 1);
    more.preemptible = true;
    submit(&w, more);
    cycle(&w, &r);
    assert_int_equal(r.nevicted, 0);
    gp_sched_result_fini(&r);
    w_fini(&w);
}

/* ---- backfill ---- */

static void test_backfill(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 2, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    gp_sched_job r1 = mkjob(1, t, q, 0, fx_whole(0, 4), 1);
    r1.max_runtime_ms = 1000;
    run_whole(&w, r1, 0, 0, 4, 0);                                   /* ends at 1000 */
    run_whole(&w, mkjob(2, t, q, 0, fx_whole(0, 8), 1), 1, 0, 8, 0); /* never ends */
    w.now = 100;
    submit(&w, mkjob(17, t, q, 0, fx_whole(0, 8), 1)); /* the large job, first in order */
    gp_sched_job small = mkjob(18, t, q, 0, fx_whole(0, 2), 1);
    small.max_runtime_ms = 500; /* ends at 600 <= 1000 */
    submit(&w, small);
    submit(&w, mkjob(19, t, q, 0, fx_whole(0, 2), 1)); /* unbounded */
    gp_sched_job longer = mkjob(20, t, q, 0, fx_whole(0, 2), 1);
    longer.max_runtime_ms = 5000; /* ends after the shadow time */
    submit(&w, longer);
    gp_sched_result r;
    cycle(&w, &r);
    assert_int_equal(r.reserved_job, 17);
    assert_int_equal(r.shadow_ms, 1000);
    assert_reason(&r, 17, "holds the backfill reservation");
    assert_non_null(placed(&r, 18));
    assert_reason(&r, 19,
                  "backfill: waiting behind job 17, which holds the reservation until "
                  "00:00:01 UTC");
    assert_reason(&r, 20, "backfill: waiting behind job 17");
    assert_true(gp_cluster_node(w.c, 0)->schedulable); /* given back */
    apply(&w, &r);
    gp_sched_result_fini(&r);
    /* Running jobs end: the large job starts before the small one behind it. */
    w.now = 1000;
    finish(&w, 1);
    finish(&w, 18);
    cycle(&w, &r);
    const gp_sched_placement *p = placed(&r, 17);
    assert_non_null(p);
    assert_int_equal(p->replicas[0].node, 0);
    gp_sched_result_fini(&r);
    w_fini(&w);
}

/* ---- revert ---- */

static void test_revert(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 3, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    for (int i = 0; i < 3; i++) {
        run_whole(&w, low(1 + i, t, q, true), i, 0, 6, 0);
    }
    run_frac(&w, mkjob(9, t, q, 0, fx_frac(0, 300), 1), 2, 7, 300);
    submit(&w, high(10, t, q, fx_whole(0, 8)));
    for (int i = 0; i < 5; i++) {
        submit(&w, mkjob(20 + i, t, q, 0, fx_frac(1000, 400), 1));
    }
    submit(&w, mkjob(30, t, q, 0, fx_whole(0, 8), 1));
    int64_t *before = malloc(snapshot_size(w.c)), *after = malloc(snapshot_size(w.c));
    snapshot(w.c, before);
    gp_sched_result r;
    cycle(&w, &r);
    assert_true(r.nplaced > 1);
    assert_int_equal(r.nevicted, 1);
    snapshot(w.c, after);
    assert_memory_not_equal(before, after, snapshot_size(w.c));
    gp_sched_input in = input_of(&w);
    assert_int_equal(gp_sched_revert(w.s, &in, &r), 0);
    gp_diag d;
    assert_int_equal(gp_cluster_check(w.c, &d), 0);
    snapshot(w.c, after);
    assert_memory_equal(before, after, snapshot_size(w.c));
    gp_sched_result_fini(&r);
    /* The next cycle decides the same way (the scheduler's state followed the revert). */
    cycle(&w, &r);
    assert_int_equal(r.nevicted, 1);
    gp_sched_result_fini(&r);
    free(before);
    free(after);
    w_fini(&w);
}

/* ---- placement constraints ---- */

static void test_require_nvlink(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        world w;
        w_init(&w);
        int m = gp_cluster_model(w.c, "A100-80GB", 80 * GIB);
        gp_gpu_spec s[8];
        for (int g = 0; g < 8; g++) {
            s[g] = (gp_gpu_spec){.model = m, .numa = -1, .nvlink = 0};
        }
        gp_cluster_add_node(w.c, "pcie", 64000, 512 * GIB, 8, s);
        for (int g = 4; g < 8; g++) { /* GPUs 4-7 fully connected */
            s[g].nvlink = 0xF0u & ~(1u << g);
        }
        gp_cluster_add_node(w.c, "nvl", 64000, 512 * GIB, 8, s);
        int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
        w.seed = seed;
        w_start(&w);
        gp_sched_job j = mkjob(1, t, q, 0, fx_whole(0, 4), 1);
        j.topology = GP_TOPO_REQUIRE_NVLINK;
        submit(&w, j);
        j.id = 2;
        submit(&w, j); /* no second set of 4 connected GPUs */
        gp_sched_result r;
        cycle(&w, &r);
        const gp_sched_placement *p = placed(&r, 1);
        assert_non_null(p);
        assert_int_equal(p->replicas[0].node, 1);
        for (int i = 0; i < 4; i++) {
            assert_true(p->replicas[0].shares[i].gpu >= 4);
        }
        assert_reason(&r, 2, "4 free NVLink-connected GPUs");
        gp_sched_result_fini(&r);
        w_fini(&w);
    }
}

static void test_cheaper_model(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 10; seed++) {
        world w;
        w_init(&w);
        int h = gp_cluster_model(w.c, "H100-80GB", 80 * GIB);
        int a = gp_cluster_model(w.c, "A100-80GB", 80 * GIB);
        fx_node(w.c, "h", 64000, 512 * GIB, 8, h);
        fx_node(w.c, "a", 64000, 512 * GIB, 4, a);
        double cost[2] = {0};
        cost[h] = 4.0;
        cost[a] = 1.5;
        w.cost = cost;
        w.seed = seed;
        int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
        w_start(&w);
        for (int i = 0; i < 3; i++) { /* 2 + 2 fit the A100 node; the third goes to H100 */
            submit(&w, mkjob(1 + i, t, q, 0, fx_whole(0, 2), 1));
        }
        gp_sched_result r;
        cycle(&w, &r);
        assert_int_equal(r.nplaced, 3);
        assert_int_equal(placed(&r, 1)->replicas[0].node, 1);
        assert_int_equal(placed(&r, 2)->replicas[0].node, 1);
        assert_int_equal(placed(&r, 3)->replicas[0].node, 0);
        gp_sched_result_fini(&r);
        w_fini(&w);
    }
}

static void test_hot_gpu(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 2, 1);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w.cfg.gpu_policy = GP_GPU_PACKING;
    w_start(&w);
    run_frac(&w, mkjob(1, t, q, 0, fx_frac(0, 300), 1), 0, 0, 300); /* binpack would pick it */
    double util[2] = {95.0, 5.0};
    w.util = util;
    submit(&w, mkjob(2, t, q, 0, fx_frac(0, 300), 1));
    gp_sched_result r;
    cycle(&w, &r);
    assert_int_equal(placed(&r, 2)->replicas[0].node, 1);
    revert(&w, &r);
    /* Without utilisation data the fuller node wins. */
    w.util = NULL;
    cycle(&w, &r);
    assert_int_equal(placed(&r, 2)->replicas[0].node, 0);
    revert(&w, &r);
    /* Hot everywhere: still placed (a hot GPU is used when nothing else fits). */
    util[1] = 99.0;
    w.util = util;
    cycle(&w, &r);
    assert_non_null(placed(&r, 2));
    revert(&w, &r);
    w_fini(&w);
}

/* binpack takes the fuller node, spread the emptier; GPU spread takes the emptier GPU. */
static void test_node_and_gpu_policies(void **state)
{
    (void)state;
    for (int spread = 0; spread < 2; spread++) {
        world w;
        w_init(&w);
        nodes_a100(&w, 2, 2);
        int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
        w.cfg.node_policy = spread ? GP_NODE_SPREAD : GP_NODE_BINPACK;
        w.cfg.gpu_policy = spread ? GP_GPU_SPREAD : GP_GPU_PACKING;
        w_start(&w);
        run_frac(&w, mkjob(1, t, q, 0, fx_frac(0, 500), 1), 1, 0, 500);
        submit(&w, mkjob(2, t, q, 0, fx_frac(0, 200), 1));
        gp_sched_result r;
        cycle(&w, &r);
        const gp_assignment *a = &placed(&r, 2)->replicas[0];
        assert_int_equal(a->node, spread ? 0 : 1);
        assert_int_equal(a->shares[0].gpu, 0); /* packing: the used GPU; spread: node 0 GPU 0 */
        revert(&w, &r);
        /* On one node: packing joins the used GPU, GPU spread takes the empty one. */
        gp_cluster_set_schedulable(w.c, 0, false);
        cycle(&w, &r);
        a = &placed(&r, 2)->replicas[0];
        assert_int_equal(a->node, 1);
        assert_int_equal(a->shares[0].gpu, spread ? 1 : 0);
        revert(&w, &r);
        w_fini(&w);
    }
}

static void test_mig(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 1, 2);
    assert_int_equal(gp_cluster_enable_mig(w.c, 0, 1), 0);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    submit(&w, mkjob(1, t, q, 0, fx_mig("1g.10gb"), 1));
    gp_sched_result r;
    cycle(&w, &r);
    const gp_sched_placement *p = placed(&r, 1);
    if (!p) {
        fprintf(stderr, "mig: %s\n", waiting(&r, 1));
    }
    assert_non_null(p);
    assert_int_equal(p->replicas[0].nshares, 1);
    assert_int_equal(p->replicas[0].shares[0].gpu, 1);
    assert_true(p->replicas[0].shares[0].mig_start >= 0);
    int model;
    gp_res u = gp_sched_usage(w.c, &p->replicas[0], &model);
    assert_int_equal(u.gpu_milli, 143); /* 1/7, rounded up */
    assert_int_equal(u.gpu_mem_mib, 10 * GIB);
    assert_int_equal(model, 0);
    gp_sched_result_fini(&r);
    w_fini(&w);
}

static void test_names_and_input(void **state)
{
    (void)state;
    gp_node_policy np;
    gp_gpu_policy gp;
    assert_int_equal(gp_node_policy_parse("spread", &np), 0);
    assert_int_equal(np, GP_NODE_SPREAD);
    assert_string_equal(gp_node_policy_name(GP_NODE_BINPACK), "binpack");
    for (int i = 0; i < 4; i++) {
        assert_int_equal(gp_gpu_policy_parse(gp_gpu_policy_name((gp_gpu_policy)i), &gp), 0);
        assert_int_equal(gp, i);
    }
    assert_int_equal(gp_gpu_policy_parse("best", &gp), GP_EINVAL);
    gp_sched_config cfg;
    gp_sched_config_default(&cfg);
    assert_int_equal(cfg.gpu_policy, GP_GPU_FRAGMENTATION);
    assert_int_equal(cfg.max_preemptions, 64);
    world w;
    w_init(&w);
    nodes_a100(&w, 1, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    submit(&w, mkjob(1, t, q + 5, 0, fx_whole(0, 1), 1)); /* no such queue */
    gp_sched_input in = input_of(&w);
    gp_sched_result r;
    gp_diag d;
    assert_int_equal(gp_sched_cycle(w.s, &in, &r, &d), GP_EINVAL);
    w.pend[0].queue = q;
    w.pend[0].req.gpu_count = 0; /* invalid request: waits with a reason */
    cycle(&w, &r);
    assert_reason(&r, 1, "invalid request");
    gp_sched_result_fini(&r);
    w_fini(&w);
}

/* ---- randomized ---- */

static gp_request random_request(gp_rng *rng, int nmodels)
{
    gp_request r;
    switch (gp_rng_below(rng, 5)) {
    case 0:
        r = fx_none(1000 * (int64_t)(1 + gp_rng_below(rng, 8)), GIB);
        break;
    case 1:
        r = fx_frac(1000, 100 * (int)(1 + gp_rng_below(rng, 9)));
        break;
    case 2:
        r = fx_mig(gp_rng_below(rng, 2) ? "1g.10gb" : "3g.40gb");
        break;
    default: {
        int64_t cpu = 2000 * (int64_t)(1 + gp_rng_below(rng, 4));
        r = fx_whole(cpu, 1 << gp_rng_below(rng, 4));
        break;
    }
    }
    if (gp_rng_below(rng, 4) == 0) {
        r.allowed_models = 1ull << gp_rng_below(rng, (uint64_t)nmodels);
    }
    return r;
}

static gp_sched_job random_job(world *w, gp_rng *rng, int64_t id)
{
    /* one draw per statement: argument evaluation order differs between compilers */
    int tenant = (int)gp_rng_below(rng, (uint64_t)w->nt);
    int queue = (int)gp_rng_below(rng, (uint64_t)w->nq);
    int prio = (int)gp_rng_below(rng, 3) * 100;
    gp_request req = random_request(rng, 2);
    int replicas = 1 + (int)gp_rng_below(rng, 2);
    gp_sched_job j = mkjob(id, tenant, queue, prio, req, replicas);
    j.submit_ms = w->now;
    j.preemptible = gp_rng_below(rng, 2);
    j.can_preempt = gp_rng_below(rng, 3) == 0;
    j.topology = (gp_topology_pref)gp_rng_below(rng, 3);
    j.gpu_policy = (gp_gpu_policy)((int)gp_rng_below(rng, 5) - 1);
    j.max_runtime_ms = gp_rng_below(rng, 2) ? 1000 * (int64_t)(1 + gp_rng_below(rng, 20)) : 0;
    return j;
}

static void random_world(world *w, gp_rng *rng)
{
    int a = gp_cluster_model(w->c, "A100-80GB", 80 * GIB);
    int h = gp_cluster_model(w->c, "H100-80GB", 80 * GIB);
    gp_cluster_set_dynamic_mig(w->c, true);
    for (int n = 0; n < 12; n++) {
        gp_gpu_spec s[8];
        for (int g = 0; g < 8; g++) {
            s[g] = (gp_gpu_spec){.model = n % 3 ? a : h, .numa = g / 4, .nvlink = 0};
            if (n % 2) {
                s[g].nvlink = 0xFFu & ~(1u << g);
            }
        }
        char name[16];
        snprintf(name, sizeof(name), "n%d", n);
        gp_cluster_add_node(w->c, name, 64000, 512 * GIB, 8, s);
    }
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "q%d", i);
        int q = add_queue(w, name, 1 + i, i == 2 ? -1 : 8000 * (int64_t)i, i == 0 ? 48000 : -1);
        w->q[q].reclaimable = i != 1 || gp_rng_below(rng, 2);
        snprintf(name, sizeof(name), "t%d", i);
        int t = add_tenant(w, name, i == 2 ? -1 : 24000 + 16000 * (int64_t)i);
        w->t[t].quota_gpu_mem_mib = i == 1 ? 30 * 80 * GIB : -1;
        w->t[t].quota_model_milli[h] = i == 0 ? 12000 : -1;
    }
    w->cfg.max_preemptions = 1 + (int)gp_rng_below(rng, 6);
    w->cfg.gpu_policy = (gp_gpu_policy)gp_rng_below(rng, 4);
    w->cfg.node_policy = (gp_node_policy)gp_rng_below(rng, 2);
}

/* Recomputes usage from the running jobs and checks every limit. */
static void check_limits(const world *w)
{
    for (int t = 0; t < w->nt; t++) {
        int64_t milli, mem, per_model[GP_MAX_MODELS];
        check_tenant_usage(w, t, &milli, &mem, per_model);
        assert_true(w->t[t].quota_gpu_milli < 0 || milli <= w->t[t].quota_gpu_milli);
        assert_true(w->t[t].quota_gpu_mem_mib < 0 || mem <= w->t[t].quota_gpu_mem_mib);
        for (int m = 0; m < GP_MAX_MODELS; m++) {
            assert_true(w->t[t].quota_model_milli[m] < 0 ||
                        per_model[m] <= w->t[t].quota_model_milli[m]);
        }
    }
    for (int q = 0; q < w->nq; q++) {
        int64_t all = 0, fixed = 0;
        for (int i = 0; i < w->nrun; i++) {
            for (int k = 0; w->run[i].queue == q && k < w->run[i].replicas; k++) {
                int64_t g = gp_sched_usage(w->c, &w->run[i].assignments[k], NULL).gpu_milli;
                all += g;
                fixed += w->run[i].preemptible ? 0 : g;
            }
        }
        assert_true(w->q[q].capability.gpu_milli < 0 || all <= w->q[q].capability.gpu_milli);
        /* only preemptible jobs borrow beyond the guarantee */
        assert_true(w->q[q].guarantee.gpu_milli < 0 || fixed <= w->q[q].guarantee.gpu_milli);
    }
}

static void check_result(const world *w, const gp_sched_result *r)
{
    assert_true(r->nevicted <= w->cfg.max_preemptions);
    for (int e = 0; e < r->nevicted; e++) {
        int i = find_job(w->run, w->nrun, r->evicted[e].job_id);
        assert_true(i >= 0);
        assert_true(w->run[i].preemptible);
        assert_non_null(placed(r, r->evicted[e].for_job_id));
    }
}

static void random_ends(world *w, gp_rng *rng)
{
    for (int i = w->nrun - 1; i >= 0; i--) {
        const gp_sched_job *j = &w->run[i];
        bool due = j->max_runtime_ms > 0 && j->start_ms + j->max_runtime_ms <= w->now;
        if (due || gp_rng_below(rng, 10) == 0) {
            finish(w, j->id);
        }
    }
}

static void test_randomized(void **state)
{
    (void)state;
    uint64_t seed = 0x5eedu;
    const char *env = getenv("GP_TEST_SEED");
    if (env) {
        seed = strtoull(env, NULL, 0);
    }
    printf("test_randomized: seed %llu (GP_TEST_SEED)\n", (unsigned long long)seed);
    gp_rng rng;
    gp_rng_seed(&rng, seed);
    world w;
    w_init(&w);
    random_world(&w, &rng);
    w_start(&w);
    int64_t next_id = 1;
    double util[12 * 8];
    for (int i = 0; i < 12 * 8; i++) {
        util[i] = (double)gp_rng_below(&rng, 100);
    }
    double cost[2] = {2.0, 3.0};
    w.cost = cost;
    int nplaced = 0, nevicted = 0, nreserved = 0;
    for (int round = 0; round < 150; round++) {
        w.now = 1000 * (int64_t)round;
        w.seed = gp_rng_next(&rng);
        w.util = round % 3 == 0 ? util : NULL;
        int arrivals = (int)gp_rng_below(&rng, 12);
        for (int k = 0; k < arrivals && w.npend < 300; k++) {
            submit(&w, random_job(&w, &rng, next_id++));
        }
        gp_sched_result r;
        cycle(&w, &r);
        check_result(&w, &r);
        nplaced += r.nplaced;
        nevicted += r.nevicted;
        nreserved += r.reserved_job != 0;
        if (gp_rng_below(&rng, 8) == 0) { /* the commit failed: revert */
            gp_sched_input in = input_of(&w);
            assert_int_equal(gp_sched_revert(w.s, &in, &r), 0);
            gp_diag d;
            assert_int_equal(gp_cluster_check(w.c, &d), 0);
        } else {
            apply(&w, &r);
        }
        gp_sched_result_fini(&r);
        check_limits(&w);
        random_ends(&w, &rng);
    }
    printf("test_randomized: %d placed, %d evicted, %d reservations\n", nplaced, nevicted,
           nreserved);
    w_fini(&w);
}

/* A larger synthetic cycle: 1,000 nodes, 10,000 pending jobs of a few shapes (the benchmark
 * bench/sched_bench runs the 10,000 x 100,000 case and times it; here only correctness). */
static void test_synthetic_large(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    nodes_a100(&w, 1000, 8);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w_start(&w);
    gp_rng rng;
    gp_rng_seed(&rng, 7);
    for (int i = 0; i < 10000; i++) {
        gp_request req = i % 3 ? fx_whole(4000, 1 << gp_rng_below(&rng, 4))
                               : fx_frac(2000, 250 * (int)(1 + gp_rng_below(&rng, 3)));
        submit(&w, mkjob(1 + i, t, q, (int)gp_rng_below(&rng, 3), req, 1));
    }
    gp_sched_result r;
    cycle(&w, &r);
    assert_true(r.nplaced > 1000);
    int64_t used = 0;
    for (int p = 0; p < r.nplaced; p++) {
        used += gp_sched_usage(w.c, &r.placed[p].replicas[0], NULL).gpu_milli;
    }
    assert_int_equal(used, gp_cluster_gpu_milli_allocated(w.c));
    gp_sched_result_fini(&r);
    w_fini(&w);
}

/* The fragmentation policy is fitted to the cluster: an unpinned half GPU leaves the only T4,
 * which the next job (pinned to T4) needs, and takes the partly used G2 GPU instead. The target
 * (8 halves, 2 pinned) is the one of test_ours_fitted_protects_scarce_hosts (test_policies.c),
 * where unfitted weights send the half to the T4. */
static void test_fragmentation_keeps_pinned_hosts(void **state)
{
    (void)state;
    world w;
    w_init(&w);
    int t4 = gp_cluster_model(w.c, "T4", 0), g2 = gp_cluster_model(w.c, "G2", 0);
    fx_node(w.c, "t4", 64000, 1 << 18, 1, t4);
    fx_node(w.c, "g2a", 64000, 1 << 18, 1, g2);
    fx_node(w.c, "g2b", 64000, 1 << 18, 1, g2);
    fx_node(w.c, "g2c", 64000, 1 << 18, 1, g2);
    int q = add_queue(&w, "q", 1, -1, -1), t = add_tenant(&w, "t", -1);
    w.cfg.gpu_policy = GP_GPU_FRAGMENTATION;
    w_start(&w);
    run_frac(&w, mkjob(100, t, q, 0, fx_frac(0, 100), 1), 1, 0, 100); /* g2a: 900 left */
    run_whole(&w, mkjob(101, t, q, 0, fx_whole(0, 1), 1), 2, 0, 1, 0);
    run_whole(&w, mkjob(102, t, q, 0, fx_whole(0, 1), 1), 3, 0, 1, 0);
    gp_request pinned = fx_whole(0, 1);
    pinned.allowed_models = 1ull << t4;
    submit(&w, mkjob(1, t, q, 0, fx_frac(0, 500), 1));
    submit(&w, mkjob(2, t, q, 0, pinned, 1));
    submit(&w, mkjob(3, t, q, 0, pinned, 1));
    for (int id = 4; id <= 10; id++) {
        submit(&w, mkjob(id, t, q, 0, fx_frac(0, 500), 1));
    }
    gp_sched_result r;
    cycle(&w, &r);
    assert_non_null(placed(&r, 1));
    assert_int_equal(placed(&r, 1)->replicas[0].node, 1);
    assert_non_null(placed(&r, 2));
    assert_int_equal(placed(&r, 2)->replicas[0].node, 0);
    revert(&w, &r);
    w_fini(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_drf_order),
        cmocka_unit_test(test_quota),
        cmocka_unit_test(test_quota_reasons_each_job),
        cmocka_unit_test(test_quota_models_exact),
        cmocka_unit_test(test_quota_units),
        cmocka_unit_test(test_maintenance_reason),
        cmocka_unit_test(test_capability),
        cmocka_unit_test(test_borrowing),
        cmocka_unit_test(test_gang_all_or_nothing),
        cmocka_unit_test(test_preempt_cheapest),
        cmocka_unit_test(test_preempt_spares_unneeded),
        cmocka_unit_test(test_no_victims),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_backfill),
        cmocka_unit_test(test_revert),
        cmocka_unit_test(test_require_nvlink),
        cmocka_unit_test(test_cheaper_model),
        cmocka_unit_test(test_hot_gpu),
        cmocka_unit_test(test_node_and_gpu_policies),
        cmocka_unit_test(test_mig),
        cmocka_unit_test(test_names_and_input),
        cmocka_unit_test(test_randomized),
        cmocka_unit_test(test_synthetic_large),
        cmocka_unit_test(test_fragmentation_keeps_pinned_hosts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
