/*
 * Whether a job could ever run (gpupool/feasible.h), and the scheduler's reason for one that
 * could not.
 *
 * Fixed cases on a small pool (a DGX-like node of 8 NVLinked A100-80GB, a node of 4 T4, an
 * H100 node with NVLink pairs) check each refusal and its exact message: unknown models, MIG
 * profiles no GPU offers, more GPUs than a node has, require-nvlink, a fraction's memory, CPU,
 * memory, gangs, the limits, and a job from an image with no container runtime in the pool
 * (where it is placed and why it waits). A randomized case (seeded; GP_TEST_SEED=S runs one seed)
 * checks the contract against the scheduler itself: on an empty pool the scheduler places a
 * single replica exactly when the check says it could run, and never places a gang the check
 * refuses.
 */
#include "gpupool/feasible.h"
#include "gpupool/rng.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1024

typedef struct pool {
    gp_cluster *c;
    int a100, t4, h100;
    int dgx, tnode, hgx;
} pool;

static void pool_init(pool *p)
{
    p->c = gp_cluster_new();
    p->a100 = gp_cluster_model(p->c, "NVIDIA A100-SXM4-80GB", 80 * GIB);
    p->t4 = gp_cluster_model(p->c, "Tesla T4", 15 * GIB);
    p->h100 = gp_cluster_model(p->c, "NVIDIA H100 80GB HBM3", 81559);
    gp_gpu_spec s[8];
    for (int i = 0; i < 8; i++) {
        s[i] = (gp_gpu_spec){.model = p->a100, .numa = i / 4, .nvlink = 0xffu & ~(1u << i)};
    }
    p->dgx = gp_cluster_add_node(p->c, "dgx", 128000, 1024 * GIB, 8, s);
    p->tnode = fx_node(p->c, "t4", 32000, 128 * GIB, 4, p->t4);
    for (int i = 0; i < 4; i++) {
        s[i] = (gp_gpu_spec){.model = p->h100, .numa = 0, .nvlink = 1u << (i ^ 1)};
    }
    p->hgx = gp_cluster_add_node(p->c, "hgx", 64000, 512 * GIB, 4, s);
    assert_true(p->dgx >= 0 && p->tnode >= 0 && p->hgx >= 0);
}

static gp_feasible_job job_of(const gp_request *r, int replicas, const char (*models)[GP_NAME_MAX],
                              int nmodels)
{
    return (gp_feasible_job){.req = r,
                             .replicas = replicas,
                             .topology = GP_TOPO_ANY,
                             .models = models,
                             .nmodels = nmodels};
}

/* Expects the pool check of j to answer want (0 or the exact message). */
static void expect_pool(const pool *p, const int *nodes, int n, const gp_feasible_job *j,
                        const char *want)
{
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_feasible_pool(p->c, nodes, n, j, &d);
    if (!want) {
        if (rc != 0) {
            fail_msg("refused: %s", d.msg);
        }
        return;
    }
    if (rc != GP_EINVAL || strcmp(d.msg, want) != 0) {
        fail_msg("rc %d, message\n  \"%s\", expected\n  \"%s\"", rc, d.msg, want);
    }
}

static void test_models(void **state)
{
    (void)state;
    pool p;
    pool_init(&p);
    gp_request r = fx_whole(0, 8);
    const char one[1][GP_NAME_MAX] = {"A100-40GB"};
    gp_feasible_job j = job_of(&r, 1, one, 1);
    expect_pool(&p, NULL, 0, &j,
                "resources.gpu_models[0]: no node has model \"A100-40GB\"; models in the pool: "
                "NVIDIA A100-SXM4-80GB, Tesla T4, NVIDIA H100 80GB HBM3");
    const char two[2][GP_NAME_MAX] = {"A100-40GB", "B200"};
    j = job_of(&r, 1, two, 2);
    expect_pool(&p, NULL, 0, &j,
                "resources.gpu_models: no node has any of \"A100-40GB\", \"B200\"; models in the "
                "pool: NVIDIA A100-SXM4-80GB, Tesla T4, NVIDIA H100 80GB HBM3");
    /* Short names and NVML's names of models the pool has. */
    const char *ok[] = {"A100-80GB", "a100", "NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char m[1][GP_NAME_MAX];
        snprintf(m[0], GP_NAME_MAX, "%s", ok[i]);
        j = job_of(&r, 1, (const char(*)[GP_NAME_MAX])m, 1);
        expect_pool(&p, NULL, 0, &j, NULL);
    }
    /* One known name among unknown ones is enough. */
    const char mixed[2][GP_NAME_MAX] = {"B200", "T4"};
    gp_request r1 = fx_whole(0, 1);
    j = job_of(&r1, 1, mixed, 2);
    expect_pool(&p, NULL, 0, &j, NULL);
    /* The nodes that count: without the DGX, no node has an A100. */
    const int others[2] = {p.tnode, p.hgx};
    const char a[1][GP_NAME_MAX] = {"A100-80GB"};
    j = job_of(&r1, 1, a, 1);
    expect_pool(&p, others, 2, &j,
                "resources.gpu_models[0]: no node has model \"A100-80GB\"; models in the pool: "
                "Tesla T4, NVIDIA H100 80GB HBM3");
    /* No node at all: nothing to judge against. */
    expect_pool(&p, others, 0, &j, NULL);
    gp_cluster_free(p.c);
}

/* A node that is down, cordoned or drained still counts as it is built. */
static void test_state_ignored(void **state)
{
    (void)state;
    pool p;
    pool_init(&p);
    gp_cluster_set_schedulable(p.c, p.dgx, false);
    for (int g = 0; g < 8; g++) {
        gp_cluster_set_gpu_avail(p.c, p.dgx, g, GP_GPU_OUT);
    }
    gp_cluster_set_window(p.c, p.dgx, 0);
    gp_request r = fx_whole(0, 8);
    const char a[1][GP_NAME_MAX] = {"A100-80GB"};
    gp_feasible_job j = job_of(&r, 1, a, 1);
    j.topology = GP_TOPO_REQUIRE_NVLINK;
    expect_pool(&p, NULL, 0, &j, NULL);
    gp_cluster_free(p.c);
}

static void test_shapes(void **state)
{
    (void)state;
    pool p;
    pool_init(&p);
    const char t4[1][GP_NAME_MAX] = {"T4"};
    const char h100[1][GP_NAME_MAX] = {"H100"};
    gp_request r = fx_mig("9g.99gb");
    gp_feasible_job j = job_of(&r, 1, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "resources.mig_profile: no GPU in the pool has MIG profile \"9g.99gb\"; profiles "
                "in the pool: 7g.80gb, 4g.40gb, 3g.40gb, 2g.20gb, 1g.20gb, 1g.10gb");
    r = fx_mig("1g.5gb"); /* an A100-40GB profile */
    expect_pool(&p, NULL, 0, &j,
                "resources.mig_profile: no GPU in the pool has MIG profile \"1g.5gb\"; profiles in "
                "the pool: 7g.80gb, 4g.40gb, 3g.40gb, 2g.20gb, 1g.20gb, 1g.10gb");
    r = fx_mig("1g.10gb");
    expect_pool(&p, NULL, 0, &j, NULL);
    j = job_of(&r, 1, t4, 1);
    expect_pool(&p, NULL, 0, &j,
                "resources.mig_profile: no GPU of the allowed models in the pool has MIG profile "
                "\"1g.10gb\"; no GPU of them is MIG-capable");

    r = fx_whole(0, 16);
    j = job_of(&r, 1, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "resources.gpus: the job asks for 16 GPUs per replica, but no node has more than "
                "8 GPUs");
    r = fx_whole(0, 8);
    j = job_of(&r, 1, t4, 1);
    expect_pool(&p, NULL, 0, &j,
                "resources.gpus: the job asks for 8 GPUs per replica, but no node has more than 4 "
                "GPUs of the allowed models");

    r = fx_whole(0, 4);
    j = job_of(&r, 1, h100, 1);
    j.topology = GP_TOPO_REQUIRE_NVLINK;
    expect_pool(&p, NULL, 0, &j,
                "topology: require-nvlink needs 4 GPUs of the allowed models pairwise "
                "NVLink-connected on one node, but no node has more than 2");
    j = job_of(&r, 1, t4, 1);
    j.topology = GP_TOPO_REQUIRE_NVLINK;
    expect_pool(&p, NULL, 0, &j,
                "topology: require-nvlink needs 4 GPUs of the allowed models pairwise "
                "NVLink-connected on one node, but no node has more than 1");
    j.topology = GP_TOPO_PREFER_NVLINK; /* a preference is no requirement */
    expect_pool(&p, NULL, 0, &j, NULL);
    j = job_of(&r, 1, NULL, 0);
    j.topology = GP_TOPO_REQUIRE_NVLINK; /* the DGX has them */
    expect_pool(&p, NULL, 0, &j, NULL);
    r = fx_whole(0, 2);
    j = job_of(&r, 1, h100, 1);
    j.topology = GP_TOPO_REQUIRE_NVLINK;
    expect_pool(&p, NULL, 0, &j, NULL);

    r = fx_frac(0, 500);
    r.gpu_mem_mib = 100 * GIB;
    j = job_of(&r, 1, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "resources.gpu_memory_mib: the job asks for 100 GiB of one GPU, but the largest "
                "GPU has 80 GiB");
    r.gpu_mem_mib = 16 * GIB;
    j = job_of(&r, 1, t4, 1);
    expect_pool(&p, NULL, 0, &j,
                "resources.gpu_memory_mib: the job asks for 16 GiB of one GPU, but the largest GPU "
                "of the allowed models has 15 GiB");

    r = fx_whole(200000, 1);
    j = job_of(&r, 1, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "resources.cpu_milli: the job asks for 200 CPU cores per replica, but no node with "
                "the GPUs the job asks for has more than 128");
    r = fx_whole(64000, 1);
    j = job_of(&r, 1, t4, 1);
    expect_pool(&p, NULL, 0, &j,
                "resources.cpu_milli: the job asks for 64 CPU cores per replica, but no node with "
                "the GPUs the job asks for has more than 32");
    r = fx_none(0, 2048 * GIB);
    j = job_of(&r, 1, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "resources.memory_mib: the job asks for 2048 GiB of memory per replica, but no "
                "node has more than 1024 GiB");
    gp_cluster_free(p.c);
}

static void test_gangs(void **state)
{
    (void)state;
    pool p;
    pool_init(&p);
    const char t4[1][GP_NAME_MAX] = {"T4"};
    gp_request r = fx_whole(0, 8);
    gp_feasible_job j = job_of(&r, 3, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "replicas: 3 replicas placed together, but the pool has room for at most 1 of them "
                "at once");
    r = fx_whole(0, 4);
    j = job_of(&r, 4, NULL, 0); /* 2 on the DGX, 1 on each other node */
    expect_pool(&p, NULL, 0, &j, NULL);
    j = job_of(&r, 5, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "replicas: 5 replicas placed together, but the pool has room for at most 4 of them "
                "at once");
    r = fx_frac(0, 500);
    j = job_of(&r, 9, t4, 1); /* two halves on each of 4 T4 */
    expect_pool(&p, NULL, 0, &j,
                "replicas: 9 replicas placed together, but the pool has room for at most 8 of them "
                "at once");
    r = fx_mig("3g.40gb");
    j = job_of(&r, 24, NULL, 0); /* two per A100 and H100 */
    expect_pool(&p, NULL, 0, &j, NULL);
    j = job_of(&r, 25, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "replicas: 25 replicas placed together, but the pool has room for at most 24 of "
                "them at once");
    r = fx_whole(40000, 1); /* CPU: 3 on the DGX, 1 on the H100 node */
    j = job_of(&r, 5, NULL, 0);
    expect_pool(&p, NULL, 0, &j,
                "replicas: 5 replicas placed together, but the pool has room for at most 4 of them "
                "at once");
    gp_cluster_free(p.c);
}

static gp_sched_tenant tenant(const char *name)
{
    gp_sched_tenant t;
    memset(&t, 0, sizeof(t));
    snprintf(t.name, sizeof(t.name), "%s", name);
    t.quota_gpu_milli = t.quota_gpu_mem_mib = -1;
    for (int m = 0; m < GP_MAX_MODELS; m++) {
        t.quota_model_milli[m] = -1;
    }
    return t;
}

static gp_sched_queue queue(const char *name)
{
    gp_sched_queue q;
    memset(&q, 0, sizeof(q));
    snprintf(q.name, sizeof(q.name), "%s", name);
    q.weight = 1;
    q.guarantee = (gp_res){-1, -1, -1, -1};
    q.capability = (gp_res){-1, -1, -1, -1};
    return q;
}

static void expect_limits(const pool *p, const gp_feasible_job *j, const gp_sched_tenant *t,
                          const gp_sched_queue *q, const char *want)
{
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_feasible_limits(p->c, j, t, q, &d);
    if (!want ? rc != 0 : (rc != GP_EINVAL || strcmp(d.msg, want) != 0)) {
        fail_msg("rc %d, message\n  \"%s\", expected\n  \"%s\"", rc, d.msg, want ? want : "");
    }
}

static void test_limits(void **state)
{
    (void)state;
    pool p;
    pool_init(&p);
    const char a100[1][GP_NAME_MAX] = {"A100-80GB"};
    gp_sched_tenant t = tenant("team-a");
    gp_sched_queue q = queue("q");
    gp_request r = fx_whole(0, 4);
    gp_feasible_job j = job_of(&r, 2, NULL, 0);
    expect_limits(&p, &j, &t, &q, NULL);
    expect_limits(&p, &j, NULL, NULL, NULL);
    t.quota_gpu_milli = 4000;
    expect_limits(&p, &j, &t, &q,
                  "resources.gpus: the job needs 8 GPUs in all, more than tenant team-a's quota of "
                  "4 GPUs");
    t.quota_gpu_milli = -1;
    /* Per model: the A100 quota holds 2; the job may still use the others. */
    t.quota_model_milli[p.a100] = 2000;
    expect_limits(&p, &j, &t, &q, NULL);
    j = job_of(&r, 2, a100, 1);
    expect_limits(&p, &j, &t, &q,
                  "resources.gpus: the job needs 8 NVIDIA A100-SXM4-80GB GPUs in all, more than "
                  "tenant team-a's quota of 2 for that model");
    t.quota_model_milli[p.t4] = t.quota_model_milli[p.h100] = 2000;
    j = job_of(&r, 2, NULL, 0);
    expect_limits(&p, &j, &t, &q,
                  "resources.gpus: the job needs 8 NVIDIA A100-SXM4-80GB GPUs in all, more than "
                  "tenant team-a's quota of 2 for that model (and no other allowed model has "
                  "room)");
    t = tenant("team-a");
    /* GPU memory: whole GPUs count their model's. */
    t.quota_gpu_mem_mib = 100 * GIB;
    r = fx_whole(0, 2);
    j = job_of(&r, 1, a100, 1);
    expect_limits(&p, &j, &t, &q,
                  "resources.gpus: the job needs 160 GiB of GPU memory in all (on NVIDIA "
                  "A100-SXM4-80GB), more than tenant team-a's quota of 100 GiB");
    r = fx_frac(0, 100);
    r.gpu_mem_mib = 40 * GIB;
    j = job_of(&r, 3, NULL, 0);
    expect_limits(&p, &j, &t, &q,
                  "resources.gpu_memory_mib: the job needs 120 GiB of GPU memory in all, more than "
                  "tenant team-a's quota of 100 GiB");
    /* The same on a pool with no model yet. */
    gp_cluster *empty = gp_cluster_new();
    pool none = {.c = empty};
    expect_limits(&none, &j, &t, &q,
                  "resources.gpu_memory_mib: the job needs 120 GiB of GPU memory in all, more than "
                  "tenant team-a's quota of 100 GiB");
    gp_cluster_free(empty);
    t = tenant("team-a");
    /* The queue's capability and guarantee. */
    q.capability = (gp_res){4000, -1, 8000, -1};
    r = fx_whole(0, 8);
    j = job_of(&r, 1, NULL, 0);
    expect_limits(&p, &j, &t, &q, "queue: queue q may hold at most 4 GPUs; the job needs 8 in all");
    r = fx_whole(16000, 1);
    expect_limits(&p, &j, &t, &q,
                  "queue: queue q may hold at most 8 CPU cores; the job needs 16 in all");
    q = queue("q");
    q.guarantee = (gp_res){4000, 0, 0, 0};
    r = fx_whole(64000, 8);
    expect_limits(&p, &j, &t, &q,
                  "preemptible: the job needs 8 GPUs in all, more than queue q is owed (4 GPUs); "
                  "only a preemptible job may go beyond its queue's guarantee");
    j.preemptible = true;
    expect_limits(&p, &j, &t, &q, NULL);
    gp_cluster_free(p.c);
}

static void test_why(void **state)
{
    (void)state;
    assert_string_equal(gp_feasible_why("resources.gpu_models[0]: no node has model \"X\""),
                        "no node has model \"X\"");
    assert_string_equal(gp_feasible_why("replicas: 3 replicas"), "3 replicas");
    assert_string_equal(gp_feasible_why("no field here: at all"), "no field here: at all");
    assert_string_equal(gp_feasible_why("plain"), "plain");
}

/* ---- the scheduler ---- */

typedef struct world {
    gp_cluster *c;
    gp_scheduler *s;
    gp_sched_tenant t;
    gp_sched_queue q;
    const int *pool_nodes;
    int npool;
} world;

static void w_start(world *w, gp_cluster *c)
{
    memset(w, 0, sizeof(*w));
    w->c = c;
    w->t = tenant("team-a");
    w->q = queue("q");
    gp_sched_config cfg;
    gp_sched_config_default(&cfg);
    assert_int_equal(gp_sched_new(c, &cfg, &w->s, NULL), 0);
}

static gp_sched_job pending(int64_t id, gp_request r, int replicas)
{
    gp_sched_job j;
    memset(&j, 0, sizeof(j));
    j.id = id;
    j.submit_ms = id;
    j.replicas = replicas;
    j.req = r;
    j.gpu_policy = GP_GPU_DEFAULT;
    return j;
}

/* One cycle over jobs; copies each job's reason ("" when placed) into reasons. */
static void run_cycle(world *w, const gp_sched_job *jobs, int n, char (*reasons)[256])
{
    gp_sched_input in = {.queues = &w->q,
                         .nqueues = 1,
                         .tenants = &w->t,
                         .ntenants = 1,
                         .pending = jobs,
                         .npending = n,
                         .pool_nodes = w->pool_nodes,
                         .npool_nodes = w->npool,
                         .now_ms = 1000,
                         .seed = 1};
    gp_sched_result r;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_sched_cycle(w->s, &in, &r, &d), 0);
    for (int i = 0; i < n; i++) {
        reasons[i][0] = '\0';
        for (int k = 0; k < r.nwaiting; k++) {
            if (r.waiting[k].job_id == jobs[i].id) {
                snprintf(reasons[i], 256, "%s", r.waiting[k].reason);
            }
        }
    }
    assert_int_equal(gp_sched_revert(w->s, &in, &r), 0);
    gp_sched_result_fini(&r);
}

static void test_sched_reasons(void **state)
{
    (void)state;
    pool p;
    pool_init(&p);
    world w;
    w_start(&w, p.c);
    const char x[1][GP_NAME_MAX] = {"A100-40GB"};
    gp_sched_job jobs[6];
    gp_request none_model = fx_whole(0, 1);
    none_model.allowed_models = 1ull << (GP_MAX_MODELS - 1); /* as the spec's request makes it */
    jobs[0] = pending(1, none_model, 1);
    jobs[0].allow_unschedulable = true;
    jobs[0].model_names = x;
    jobs[0].nmodel_names = 1;
    jobs[1] = pending(2, fx_whole(0, 16), 1);
    jobs[2] = pending(3, fx_whole(0, 8), 3); /* each fits a node, together never */
    jobs[3] = pending(4, fx_whole(0, 1), 1);
    w.t.quota_model_milli[p.t4] = 0;
    gp_request t4 = fx_whole(0, 1);
    t4.allowed_models = 1ull << p.t4;
    jobs[4] = pending(5, t4, 1);
    jobs[4].allow_unschedulable = true;
    char reasons[5][256];
    run_cycle(&w, jobs, 5, reasons);
    assert_string_equal(reasons[0],
                        "unschedulable: no node has model \"A100-40GB\"; models in the pool: "
                        "NVIDIA A100-SXM4-80GB, Tesla T4, NVIDIA H100 80GB HBM3 (allowed to wait)");
    assert_string_equal(reasons[1], "unschedulable: the job asks for 16 GPUs per replica, but no "
                                    "node has more than 8 GPUs");
    assert_string_equal(reasons[2], "unschedulable: 3 replicas placed together, but the pool has "
                                    "room for at most 1 of them at once");
    assert_string_equal(reasons[3], "");
    assert_string_equal(reasons[4], "unschedulable: the job needs 1 Tesla T4 GPUs in all, more "
                                    "than tenant team-a's quota of 0 for that model (allowed to "
                                    "wait)");
    gp_sched_free(w.s);

    /* Nodes down are not capacity now, but they count: the job waits for capacity. */
    jobs[5] = pending(6, fx_whole(0, 8), 1);
    gp_cluster_set_schedulable(p.c, p.dgx, false);
    w_start(&w, p.c);
    run_cycle(&w, &jobs[5], 1, reasons);
    assert_non_null(strstr(reasons[0], "no node could hold it even when empty"));
    assert_null(strstr(reasons[0], "unschedulable"));
    gp_sched_free(w.s);

    /* Only the registered nodes count: without the DGX the same job can never run. */
    const int others[2] = {p.tnode, p.hgx};
    w_start(&w, p.c);
    w.pool_nodes = others;
    w.npool = 2;
    run_cycle(&w, &jobs[5], 1, reasons);
    assert_string_equal(reasons[0], "unschedulable: the job asks for 8 GPUs per replica, but no "
                                    "node has more than 4 GPUs");
    gp_sched_free(w.s);
    gp_cluster_free(p.c);
}

/* A job from an image needs a node with a container runtime: in the pool check, in placement,
 * and in the reason it waits with. */
static void test_runtime(void **state)
{
    (void)state;
    pool p;
    pool_init(&p);
    gp_request r = fx_whole(0, 1);
    r.needs = GP_CAP_IMAGES;
    gp_feasible_job j = job_of(&r, 1, NULL, 0);
    expect_pool(&p, NULL, 0, &j, GP_FEASIBLE_NO_RUNTIME);
    assert_string_equal(gp_feasible_why(GP_FEASIBLE_NO_RUNTIME),
                        "no node can run images (no container runtime)");
    assert_int_equal(gp_cluster_set_caps(p.c, p.hgx, GP_CAP_IMAGES), 0);
    assert_int_equal(gp_cluster_set_caps(p.c, 99, GP_CAP_IMAGES), GP_EINVAL);
    expect_pool(&p, NULL, 0, &j, NULL);
    const int others[2] = {p.dgx, p.tnode}; /* only the registered nodes count */
    expect_pool(&p, others, 2, &j, GP_FEASIBLE_NO_RUNTIME);

    /* Placed on the node that can run it, though the others score alike or better. */
    world w;
    w_start(&w, p.c);
    gp_sched_job jobs[2] = {pending(1, r, 1), pending(2, fx_whole(0, 1), 1)};
    gp_sched_input in = {.queues = &w.q,
                         .nqueues = 1,
                         .tenants = &w.t,
                         .ntenants = 1,
                         .pending = jobs,
                         .npending = 2,
                         .now_ms = 1000,
                         .seed = 1};
    gp_sched_result res;
    gp_diag d;
    assert_int_equal(gp_sched_cycle(w.s, &in, &res, &d), 0);
    assert_int_equal(res.nplaced, 2);
    for (int i = 0; i < res.nplaced; i++) {
        if (res.placed[i].job_id == 1) {
            assert_int_equal(res.placed[i].replicas[0].node, p.hgx);
        }
    }
    assert_int_equal(gp_sched_revert(w.s, &in, &res), 0);
    gp_sched_result_fini(&res);
    gp_sched_free(w.s);

    /* Its only runtime node down: it waits, saying why; a job without an image is placed. */
    gp_cluster_set_schedulable(p.c, p.hgx, false);
    w_start(&w, p.c);
    char reasons[2][256];
    run_cycle(&w, jobs, 2, reasons);
    if (strncmp(reasons[0], "capacity: no node can run images (no container runtime)", 55) != 0) {
        fail_msg("reason: %s", reasons[0]);
    }
    assert_string_equal(reasons[1], "");
    gp_sched_free(w.s);
    /* With no runtime in the pool at all it can never run (unless it may wait). */
    gp_cluster_set_caps(p.c, p.hgx, 0);
    gp_cluster_set_schedulable(p.c, p.hgx, true);
    jobs[0].allow_unschedulable = true;
    w_start(&w, p.c);
    run_cycle(&w, jobs, 1, reasons);
    assert_string_equal(reasons[0], "unschedulable: no node can run images (no container "
                                    "runtime) (allowed to wait)");
    gp_sched_free(w.s);
    gp_cluster_free(p.c);
}

/* ---- the contract, against the scheduler ---- */

static gp_cluster *random_pool(gp_rng *g)
{
    static const struct {
        const char *name;
        int64_t mem;
    } kinds[] = {
        {"NVIDIA A100-SXM4-80GB", 81920},
        {"NVIDIA A100-PCIE-40GB", 40960},
        {"NVIDIA H100 80GB HBM3", 81559},
        {"Tesla T4", 15360},
    };
    gp_cluster *c = gp_cluster_new();
    gp_cluster_set_dynamic_mig(c, true);
    int nnodes = 1 + (int)gp_rng_below(g, 4);
    for (int n = 0; n < nnodes; n++) {
        int ngpus = (int)gp_rng_below(g, 9);
        int k = (int)gp_rng_below(g, 4);
        int m = gp_cluster_model(c, kinds[k].name, kinds[k].mem);
        gp_gpu_spec s[8];
        for (int i = 0; i < ngpus; i++) {
            s[i] = (gp_gpu_spec){.model = m, .numa = -1};
        }
        for (int i = 0; i < ngpus; i++) {
            for (int o = i + 1; o < ngpus; o++) {
                if (gp_rng_below(g, 3) == 0) {
                    s[i].nvlink |= 1u << o;
                    s[o].nvlink |= 1u << i;
                }
            }
        }
        char name[16];
        snprintf(name, sizeof(name), "n%d", n);
        int64_t cpu = 8000 * (int64_t)(1 + gp_rng_below(g, 8));
        int idx = gp_cluster_add_node(c, name, cpu, 64 * GIB * (int64_t)(1 + gp_rng_below(g, 4)),
                                      ngpus, s);
        assert_true(idx >= 0);
        gp_cluster_set_caps(c, idx, gp_rng_below(g, 4) ? GP_CAP_IMAGES : 0);
    }
    return c;
}

static gp_request random_request(gp_rng *g, const gp_cluster *c)
{
    static const char *const profiles[] = {"1g.10gb", "3g.40gb", "7g.80gb",
                                           "1g.5gb",  "3g.20gb", "9g.99gb"};
    gp_request r;
    switch (gp_rng_below(g, 4)) {
    case 0:
        r = fx_whole(0, 1 + (int)gp_rng_below(g, 8));
        break;
    case 1:
        r = fx_frac(0, 1 + (int)gp_rng_below(g, 1000));
        r.gpu_mem_mib = gp_rng_below(g, 2) ? GIB * (int64_t)gp_rng_below(g, 90) : 0;
        break;
    case 2:
        r = fx_mig(profiles[gp_rng_below(g, 6)]);
        break;
    default:
        r = fx_none(0, 0);
    }
    r.cpu_milli = 2000 * (int64_t)gp_rng_below(g, 12);
    r.memory_mib = 8 * GIB * (int64_t)gp_rng_below(g, 12);
    if (r.kind != GP_REQ_NONE && gp_rng_below(g, 3) == 0) {
        r.allowed_models = 1ull << gp_rng_below(g, (uint64_t)gp_cluster_model_count(c));
    }
    r.needs = gp_rng_below(g, 3) == 0 ? GP_CAP_IMAGES : 0;
    return r;
}

static void test_contract(void **state)
{
    (void)state;
    const char *env = getenv("GP_TEST_SEED");
    uint64_t first = env ? strtoull(env, NULL, 10) : 1, last = env ? first : 1000;
    int refused = 0, placed = 0;
    for (uint64_t seed = first; seed <= last; seed++) {
        gp_rng g;
        gp_rng_seed(&g, seed);
        gp_cluster *c = random_pool(&g);
        gp_sched_job job = pending(1, random_request(&g, c), 1 + (int)gp_rng_below(&g, 3));
        job.topology = gp_rng_below(&g, 2) ? GP_TOPO_REQUIRE_NVLINK : GP_TOPO_ANY;
        gp_feasible_job fj = {.req = &job.req, .replicas = job.replicas, .topology = job.topology};
        gp_diag d;
        gp_diag_clear(&d);
        bool feasible = gp_feasible_pool(c, NULL, 0, &fj, &d) == 0;
        world w;
        w_start(&w, c);
        char reason[1][256];
        run_cycle(&w, &job, 1, reason);
        bool was_placed = reason[0][0] == '\0';
        if (was_placed && !feasible) {
            fail_msg("seed %llu: placed, but refused: %s", (unsigned long long)seed, d.msg);
        }
        if (job.replicas == 1 && feasible && !was_placed) {
            fail_msg("seed %llu: judged feasible, but not placed on the empty pool: %s",
                     (unsigned long long)seed, reason[0]);
        }
        if (!feasible && strncmp(reason[0], "unschedulable: ", 15) != 0) {
            fail_msg("seed %llu: refused (%s), but waits for \"%s\"", (unsigned long long)seed,
                     d.msg, reason[0]);
        }
        refused += !feasible;
        placed += was_placed;
        gp_sched_free(w.s);
        gp_cluster_free(c);
    }
    print_message("test_contract: seeds %llu..%llu (GP_TEST_SEED), %d refused, %d placed\n",
                  (unsigned long long)first, (unsigned long long)last, refused, placed);
    if (!env) {
        assert_true(refused > 100 && placed > 100); /* both sides were exercised */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_models),        cmocka_unit_test(test_state_ignored),
        cmocka_unit_test(test_shapes),        cmocka_unit_test(test_gangs),
        cmocka_unit_test(test_limits),        cmocka_unit_test(test_why),
        cmocka_unit_test(test_sched_reasons), cmocka_unit_test(test_contract),
        cmocka_unit_test(test_runtime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
