/*
 * Scheduling cycle time on a synthetic pool: N nodes x 8 GPUs (default 10,000, 96 cores and
 * 768 GiB each), 8 queues (weights 1..4, each guaranteed an eighth of the pool), 16 tenants
 * (each with a quota of an eighth of the pool), jobs shaped like the Alibaba trace (CPU-only,
 * fractions, 1/2/4/8 whole GPUs, a few 8-GPU gangs), three priorities (the top one preempts), half
 * of them preemptible. Two cycles:
 *   fill:  --fill (default 40,000) jobs on the empty pool; what it places becomes the running set;
 *   cycle: --pending (default 100,000) new jobs on that pool: the number a controller's cycle
 *          must handle in well under a second.
 * --diverse gives every job its own CPU, memory and GPU fraction (a worst case for the cache of
 * failed shapes). --placement labels the nodes (zone: 4 zones, gpu-type: half a100, half h100),
 * taints one node in 16 (dedicated=ml:NoSchedule) and gives one job in 10 a constraint
 * (gpupool/constraint.h): a node selector, a toleration, spread over zone, or anti-affinity
 * (mix=placement). Prints one machine-readable line per cycle:
 *   sched_cycle phase=cycle mix=trace nodes=10000 gpus=8 pending=100000 running=... placed=...
 * evicted=... waiting=... seconds=...
 */
#include "gpupool/constraint.h"
#include "gpupool/rng.h"
#include "gpupool/sched.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NQUEUES  8
#define NTENANTS 16

typedef struct shape {
    int64_t cpu, mem;
    int kind, count, milli, replicas;
    double share;
} shape;

static const shape mix[] = {
    {4000, 8192, GP_REQ_NONE, 0, 0, 1, 0.13},
    {8000, 32768, GP_REQ_WHOLE, 1, 0, 1, 0.43},
    {6000, 24576, GP_REQ_FRACTION, 1, 810, 1, 0.13},
    {4000, 16384, GP_REQ_FRACTION, 1, 470, 1, 0.09},
    {4000, 16384, GP_REQ_FRACTION, 1, 320, 1, 0.05},
    {8000, 30720, GP_REQ_FRACTION, 1, 650, 1, 0.04},
    {2000, 8192, GP_REQ_FRACTION, 1, 230, 1, 0.03},
    {16000, 65536, GP_REQ_WHOLE, 2, 0, 1, 0.03},
    {32000, 131072, GP_REQ_WHOLE, 4, 0, 1, 0.03},
    {64000, 262144, GP_REQ_WHOLE, 8, 0, 1, 0.02},
    {64000, 262144, GP_REQ_WHOLE, 8, 0, 4, 0.02},
};
#define NMIX ((int)(sizeof(mix) / sizeof(mix[0])))

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The constraints --placement gives one job in 10 (borrowed by the jobs). */
static gp_kv sel_a100[] = {{"gpu-type", "a100"}};
static gp_toleration tol_ml[] = {{"dedicated", true, "ml", GP_TAINT_NO_SCHEDULE}};
static gp_spread by_zone[] = {{"zone", 1}};
static const gp_constraints kinds[] = {
    {.selector = sel_a100, .nselector = 1},
    {.tolerations = tol_ml, .ntolerations = 1},
    {.spread = by_zone, .nspread = 1},
    {.anti_affinity = true},
};

/* diverse: every job its own CPU, memory and GPU fraction (many distinct shapes). */
static gp_sched_job draw(gp_rng *rng, int64_t id, int64_t t, bool diverse, bool placement)
{
    double u = gp_rng_unit(rng), acc = 0;
    const shape *s = &mix[NMIX - 1];
    for (int i = 0; i < NMIX; i++) {
        acc += mix[i].share;
        if (u < acc) {
            s = &mix[i];
            break;
        }
    }
    gp_sched_job j;
    memset(&j, 0, sizeof(j));
    j.id = id;
    j.tenant = (int)gp_rng_below(rng, NTENANTS);
    j.queue = j.tenant % NQUEUES;
    double p = gp_rng_unit(rng);
    j.priority = p < 0.8 ? 0 : p < 0.95 ? 100 : 1000;
    j.can_preempt = j.priority == 1000;
    snprintf(j.priority_class, sizeof(j.priority_class), "p%d", (int)j.priority);
    j.preemptible = gp_rng_below(rng, 2);
    j.submit_ms = t;
    j.replicas = s->replicas;
    j.req.cpu_milli = s->cpu;
    j.req.memory_mib = s->mem;
    j.req.kind = (gp_gpu_kind)s->kind;
    j.req.gpu_count = s->kind == GP_REQ_WHOLE ? s->count : 0;
    j.req.gpu_milli = s->milli;
    j.gpu_policy = GP_GPU_DEFAULT;
    j.max_runtime_ms = gp_rng_below(rng, 2) ? 3600000 * (int64_t)(1 + gp_rng_below(rng, 24)) : 0;
    if (diverse) {
        j.req.cpu_milli = 250 * (int64_t)(1 + gp_rng_below(rng, 256));
        j.req.memory_mib = 1024 * (int64_t)(1 + gp_rng_below(rng, 256));
        j.req.gpu_milli = s->kind == GP_REQ_FRACTION ? 1 + (int)gp_rng_below(rng, 999) : 0;
    }
    if (placement && gp_rng_below(rng, 10) == 0) {
        j.req.place = &kinds[gp_rng_below(rng, 4)];
    }
    return j;
}

typedef struct bench {
    int nodes, fill, pending;
    bool diverse, placement;
    gp_sched_config cfg;
    gp_cluster *c;
    gp_scheduler *s;
    gp_sched_queue q[NQUEUES];
    gp_sched_tenant t[NTENANTS];
    gp_sched_job *running;
    int nrunning;
} bench;

static void setup(bench *b)
{
    b->c = gp_cluster_new();
    int m = gp_cluster_model(b->c, "A100-80GB", 81920);
    gp_gpu_spec g[8];
    for (int i = 0; i < 8; i++) {
        g[i] = (gp_gpu_spec){.model = m, .numa = i / 4, .nvlink = 0xFFu & ~(1u << i)};
    }
    for (int n = 0; n < b->nodes; n++) {
        char name[32];
        snprintf(name, sizeof(name), "node-%05d", n);
        gp_cluster_add_node(b->c, name, 96000, 786432, 8, g);
        if (b->placement) {
            char zone[8];
            snprintf(zone, sizeof(zone), "z%d", n % 4);
            gp_cluster_set_label(b->c, n, "zone", zone);
            gp_cluster_set_label(b->c, n, "gpu-type", n % 2 ? "h100" : "a100");
        }
        if (b->placement && n % 16 == 0) {
            gp_taint t = {.key = "dedicated", .value = "ml", .effect = GP_TAINT_NO_SCHEDULE};
            gp_cluster_set_taints(b->c, n, &t, 1);
        }
    }
    int64_t pool = (int64_t)b->nodes * 8000;
    for (int i = 0; i < NQUEUES; i++) {
        snprintf(b->q[i].name, sizeof(b->q[i].name), "queue-%d", i);
        b->q[i].weight = 1 + i % 4;
        b->q[i].guarantee = (gp_res){pool / NQUEUES, -1, -1, -1};
        b->q[i].capability = (gp_res){-1, -1, -1, -1};
        b->q[i].reclaimable = true;
    }
    for (int i = 0; i < NTENANTS; i++) {
        snprintf(b->t[i].name, sizeof(b->t[i].name), "tenant-%d", i);
        b->t[i].quota_gpu_milli = pool / 8;
        b->t[i].quota_gpu_mem_mib = -1;
        for (int k = 0; k < GP_MAX_MODELS; k++) {
            b->t[i].quota_model_milli[k] = -1;
        }
    }
}

/* Runs one cycle over n new jobs and makes what it placed the running set. */
static int run(bench *b, const char *phase, int n, gp_rng *rng, int64_t *next_id, int64_t t)
{
    gp_sched_job *pending = malloc(sizeof(gp_sched_job) * (size_t)n);
    for (int i = 0; i < n; i++) {
        pending[i] = draw(rng, (*next_id)++, t, b->diverse, b->placement);
    }
    gp_sched_input in = {.queues = b->q,
                         .nqueues = NQUEUES,
                         .tenants = b->t,
                         .ntenants = NTENANTS,
                         .running = b->running,
                         .nrunning = b->nrunning,
                         .pending = pending,
                         .npending = n,
                         .now_ms = t,
                         .seed = gp_rng_next(rng)};
    gp_sched_result r;
    gp_diag d;
    double t0 = now();
    int rc = gp_sched_cycle(b->s, &in, &r, &d);
    double dt = now() - t0;
    if (rc < 0) {
        fprintf(stderr, "sched_bench: %s\n", d.msg);
        free(pending);
        return 1;
    }
    printf("sched_cycle phase=%s mix=%s nodes=%d gpus=8 pending=%d running=%d placed=%d "
           "evicted=%d waiting=%d seconds=%.4f\n",
           phase,
           b->diverse     ? "diverse"
           : b->placement ? "placement"
                          : "trace",
           b->nodes, n, b->nrunning, r.nplaced, r.nevicted, r.nwaiting, dt);
    /* The placed jobs join the running set (the victims are not removed: the next cycle is the
     * last one, and an evicted job's assignments are no longer on the cluster). */
    b->running = realloc(b->running, sizeof(gp_sched_job) * (size_t)(b->nrunning + r.nplaced));
    for (int p = 0; p < r.nplaced; p++) {
        int k = (int)(r.placed[p].job_id - pending[0].id); /* ids are consecutive */
        gp_sched_job j = pending[k];
        j.start_ms = t;
        j.assignments = r.placed[p].replicas;
        r.placed[p].replicas = NULL; /* now owned by the running set */
        b->running[b->nrunning++] = j;
    }
    gp_sched_result_fini(&r);
    free(pending);
    return 0;
}

static int parse(bench *b, int argc, char **argv)
{
    static const struct option opts[] = {
        {"nodes", required_argument, 0, 'n'},       {"fill", required_argument, 0, 'f'},
        {"pending", required_argument, 0, 'p'},     {"gpu-policy", required_argument, 0, 'g'},
        {"node-policy", required_argument, 0, 'o'}, {"diverse", no_argument, 0, 'd'},
        {"placement", no_argument, 0, 'l'},         {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'n') {
            b->nodes = atoi(optarg);
        } else if (c == 'f') {
            b->fill = atoi(optarg);
        } else if (c == 'p') {
            b->pending = atoi(optarg);
        } else if (c == 'd') {
            b->diverse = true;
        } else if (c == 'l') {
            b->placement = true;
        } else if (c == 'g' && gp_gpu_policy_parse(optarg, &b->cfg.gpu_policy) == 0) {
            continue;
        } else if (c == 'o' && gp_node_policy_parse(optarg, &b->cfg.node_policy) == 0) {
            continue;
        } else {
            fprintf(stderr, "usage: sched_bench [--nodes N] [--fill N] [--pending N] "
                            "[--gpu-policy P] [--node-policy P] [--diverse] [--placement]\n");
            return 2;
        }
    }
    return b->nodes > 0 && b->fill >= 0 && b->pending > 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    bench b;
    memset(&b, 0, sizeof(b));
    b.nodes = 10000;
    b.fill = 40000;
    b.pending = 100000;
    gp_sched_config_default(&b.cfg);
    int rc = parse(&b, argc, argv);
    if (rc) {
        return rc;
    }
    setup(&b);
    if (gp_sched_new(b.c, &b.cfg, &b.s, NULL) < 0) {
        return 1;
    }
    gp_rng rng;
    gp_rng_seed(&rng, 42);
    int64_t next_id = 1;
    rc = b.fill > 0 ? run(&b, "fill", b.fill, &rng, &next_id, 0) : 0;
    if (rc == 0) {
        rc = run(&b, "cycle", b.pending, &rng, &next_id, 60000);
    }
    for (int i = 0; i < b.nrunning; i++) {
        free((void *)b.running[i].assignments);
    }
    free(b.running);
    gp_sched_free(b.s);
    gp_cluster_free(b.c);
    return rc;
}
