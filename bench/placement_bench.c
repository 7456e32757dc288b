/*
 * Placement throughput on a synthetic pool: N nodes x G GPUs (default 10,000 x 8, 96 cores,
 * 768 GiB each), FGD (or --policy), a pod mix shaped like the Alibaba trace (CPU-only, fractions
 * of one GPU, whole GPUs, 2/4/8-GPU gangs). Two phases:
 *   fill:   place pods until the pool is --fill (default 0.9) allocated by GPU;
 *   steady: --steady (default 20,000) rounds of releasing a random running pod and placing a
 *           new one, the state a long-running controller lives in.
 *   shapes: with --shapes N (0: skipped), the steady rounds again, each new pod drawn from N
 *           distinct request shapes (GPU fractions and memory, whole-GPU counts, CPU, memory):
 *           the cost of a decision, and of one for a shape the placer has not seen yet.
 * Prints one machine-readable line per phase:
 *   placement_bench phase=fill policy=fgd nodes=10000 gpus=8 placements=... seconds=... per_sec=...
 *   placement_bench phase=shapes ... shapes=1000 us_per_decision=... new_shape_us=...
 *                   seen_shape_us=... scored_per_decision=... cache_mib=...
 * and a digest of every decision taken (digest=, hex): two builds that decide alike print the
 * same digest, whatever their speed. Built with -DGP_BENCH_BASELINE it compiles against a
 * libgpcore older than the placer's score cache interface (bench/placement.sh measures a
 * baseline commit that way) and prints no cache_ fields.
 */
#ifndef GP_BENCH_BASELINE
#include "core/placer.h"
#endif
#include "gpupool/placement.h"
#include "gpupool/rng.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct shape {
    int64_t cpu, mem;
    int kind, count, milli;
    double share;
} shape;

/* Roughly the default trace's mix (shares of pods). */
static const shape mix[] = {
    {0, 0, GP_REQ_NONE, 0, 0, 0.13},
    {8000, 32768, GP_REQ_WHOLE, 1, 0, 0.45},
    {6000, 24576, GP_REQ_FRACTION, 1, 810, 0.13},
    {4000, 16384, GP_REQ_FRACTION, 1, 470, 0.09},
    {4000, 16384, GP_REQ_FRACTION, 1, 320, 0.05},
    {8000, 30720, GP_REQ_FRACTION, 1, 650, 0.04},
    {2000, 8192, GP_REQ_FRACTION, 1, 230, 0.03},
    {16000, 65536, GP_REQ_WHOLE, 2, 0, 0.03},
    {32000, 131072, GP_REQ_WHOLE, 4, 0, 0.03},
    {64000, 262144, GP_REQ_WHOLE, 8, 0, 0.02},
};
#define NMIX ((int)(sizeof(mix) / sizeof(mix[0])))

static gp_request request_of(const shape *s)
{
    gp_request r;
    memset(&r, 0, sizeof(r));
    r.cpu_milli = s->kind == GP_REQ_NONE ? 4000 : s->cpu;
    r.memory_mib = s->kind == GP_REQ_NONE ? 8192 : s->mem;
    r.kind = (gp_gpu_kind)s->kind;
    r.gpu_count = s->kind == GP_REQ_WHOLE ? s->count : 0;
    r.gpu_milli = s->milli;
    return r;
}

static gp_request draw(gp_rng *rng)
{
    double u = gp_rng_unit(rng), acc = 0;
    for (int i = 0; i < NMIX; i++) {
        acc += mix[i].share;
        if (u < acc) {
            return request_of(&mix[i]);
        }
    }
    return request_of(&mix[NMIX - 1]);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct bench {
    int nodes, gpus, steady, shapes;
    double fill;
    const char *policy;
    gp_cluster *c;
    gp_placer *pl;
    gp_rng rng;
    gp_assignment *live;
    size_t nlive, cap;
    uint64_t digest; /* of every decision, in order */
} bench;

/* Folds one decision (its result and, when placed, the node and shares) into b->digest. */
static void note(bench *b, int rc, const gp_assignment *a)
{
    uint64_t h = (uint64_t)(uint32_t)rc;
    if (rc == 0) {
        h = h * 31 + (uint64_t)a->node;
        for (int i = 0; i < a->nshares; i++) {
            h = h * 31 + (uint64_t)a->shares[i].gpu * 4096 + (uint64_t)a->shares[i].milli;
        }
    }
    b->digest = (b->digest ^ h) * 0x100000001b3ull;
}

static int parse(bench *b, int argc, char **argv)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'},
        {"gpus", required_argument, NULL, 'g'},
        {"fill", required_argument, NULL, 'f'},
        {"steady", required_argument, NULL, 's'},
        {"policy", required_argument, NULL, 'p'},
        {"shapes", required_argument, NULL, 'S'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            b->nodes = atoi(optarg);
            break;
        case 'g':
            b->gpus = atoi(optarg);
            break;
        case 'f':
            b->fill = atof(optarg);
            break;
        case 's':
            b->steady = atoi(optarg);
            break;
        case 'p':
            b->policy = optarg;
            break;
        case 'S':
            b->shapes = atoi(optarg);
            break;
        default:
            return -1;
        }
    }
    return b->nodes < 1 || b->shapes < 0 || b->gpus < 1 || b->gpus > GP_MAX_GPUS_PER_NODE ||
                   b->fill <= 0 || b->fill > 1
               ? -1
               : 0;
}

static gp_cluster *build(int nodes, int gpus)
{
    gp_cluster *c = gp_cluster_new();
    int model = gp_cluster_model(c, "H100", 81920);
    gp_gpu_spec spec[GP_MAX_GPUS_PER_NODE];
    for (int g = 0; g < gpus; g++) {
        spec[g] = (gp_gpu_spec){.model = model, .numa = g * 2 / gpus, .nvlink = 0};
    }
    for (int i = 0; i < nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "node-%05d", i);
        gp_cluster_add_node(c, name, 96000 * gpus / 8 + 32000, 786432, gpus, spec);
    }
    return c;
}

/* One decision; the placement is kept when it succeeds. Counts classes into *seen, *scored. */
static int place_one(bench *b, long *seen, long *scored)
{
    gp_request r = draw(&b->rng);
    gp_assignment a;
    gp_place_info info;
    int rc = gp_placer_place(b->pl, &r, &b->rng, &a, &info);
    note(b, rc, &a);
    *seen += info.classes_seen;
    *scored += info.classes_scored;
    if (rc == 0 && b->nlive < b->cap && gp_cluster_assign(b->c, &a) == 0) {
        b->live[b->nlive++] = a;
        return 0;
    }
    return -1;
}

static void fill_phase(bench *b)
{
    long placed = 0, failed = 0, seen = 0, scored = 0;
    int64_t capacity = gp_cluster_gpu_milli_capacity(b->c);
    double t0 = now();
    while ((double)gp_cluster_gpu_milli_allocated(b->c) < b->fill * (double)capacity &&
           b->nlive < b->cap && failed <= 1000) {
        if (place_one(b, &seen, &scored) == 0) {
            placed++;
        } else {
            failed++;
        }
    }
    double dt = now() - t0;
    long n = placed + failed;
    printf("placement_bench phase=fill policy=%s nodes=%d gpus=%d placements=%ld failed=%ld "
           "allocated_pct=%.1f classes_per_decision=%.1f scored_per_decision=%.1f seconds=%.3f "
           "per_sec=%.0f\n",
           b->policy, b->nodes, b->gpus, placed, failed,
           100.0 * (double)gp_cluster_gpu_milli_allocated(b->c) / (double)capacity,
           (double)seen / (double)n, (double)scored / (double)n, dt, (double)n / dt);
}

static void steady_phase(bench *b)
{
    long decisions = 0, seen = 0, scored = 0;
    double t0 = now();
    for (int i = 0; i < b->steady && b->nlive > 0; i++) {
        size_t k = (size_t)gp_rng_below(&b->rng, b->nlive);
        gp_cluster_release(b->c, &b->live[k]);
        b->live[k] = b->live[--b->nlive];
        place_one(b, &seen, &scored);
        decisions++;
    }
    double dt = now() - t0;
    printf("placement_bench phase=steady policy=%s nodes=%d gpus=%d placements=%ld "
           "classes_per_decision=%.1f scored_per_decision=%.1f seconds=%.3f per_sec=%.0f\n",
           b->policy, b->nodes, b->gpus, decisions, (double)seen / (double)decisions,
           (double)scored / (double)decisions, dt, (double)decisions / dt);
}

/* Shape i of the many-shapes phase: a GPU fraction (compute and memory), a whole-GPU count, or
 * CPU only, with CPU and memory of their own; distinct for distinct i. */
static gp_request shape_of(int i)
{
    gp_request r;
    memset(&r, 0, sizeof(r));
    r.cpu_milli = 500 + 250 * (i % 37);
    r.memory_mib = 1024 + 512 * (i % 53);
    switch (i % 8) {
    case 0:
        r.kind = GP_REQ_NONE;
        break;
    case 1:
    case 2:
        r.kind = GP_REQ_WHOLE;
        r.gpu_count = 1 << (i / 8 % 4); /* 1, 2, 4, 8 */
        break;
    default:
        r.kind = GP_REQ_FRACTION;
        r.gpu_milli = 50 + 10 * (i / 8 % 90);
        r.gpu_mem_mib = 1024 * (1 + i % 31);
        break;
    }
    r.cpu_milli += i / 1000; /* distinct beyond the cycles above */
    return r;
}

/* The steady rounds with a new pod drawn from b->shapes shapes; a shape's first decision is
 * timed apart. */
static void shapes_phase(bench *b)
{
    char *seen_shape = calloc((size_t)b->shapes, 1);
    long decisions = 0, fresh = 0, seen = 0, scored = 0;
    double t_all = 0, t_fresh = 0;
    for (int i = 0; i < b->steady && b->nlive > 0; i++) {
        size_t k = (size_t)gp_rng_below(&b->rng, b->nlive);
        gp_cluster_release(b->c, &b->live[k]);
        b->live[k] = b->live[--b->nlive];
        int sh = (int)gp_rng_below(&b->rng, (uint64_t)b->shapes);
        gp_request r = shape_of(sh);
        gp_assignment a;
        gp_place_info info;
        double t0 = now();
        int rc = gp_placer_place(b->pl, &r, &b->rng, &a, &info);
        double dt = now() - t0;
        note(b, rc, &a);
        seen += info.classes_seen;
        scored += info.classes_scored;
        t_all += dt;
        if (!seen_shape[sh]) {
            seen_shape[sh] = 1;
            fresh++;
            t_fresh += dt;
        }
        if (rc == 0 && b->nlive < b->cap && gp_cluster_assign(b->c, &a) == 0) {
            b->live[b->nlive++] = a;
        }
        decisions++;
    }
    char cache[64] = "";
#ifndef GP_BENCH_BASELINE
    size_t entries, bytes;
    gp_placer_cache_usage(b->pl, &entries, &bytes);
    snprintf(cache, sizeof(cache), " cache_entries=%zu cache_mib=%.1f", entries,
             (double)bytes / 1048576.0);
#endif
    double n = decisions ? (double)decisions : 1;
    printf("placement_bench phase=shapes policy=%s nodes=%d gpus=%d shapes=%d placements=%ld "
           "new_shapes=%ld us_per_decision=%.1f new_shape_us=%.1f seen_shape_us=%.1f "
           "allocated_pct=%.1f classes_per_decision=%.1f scored_per_decision=%.1f%s\n",
           b->policy, b->nodes, b->gpus, b->shapes, decisions, fresh,
           decisions ? t_all * 1e6 / (double)decisions : 0,
           fresh ? t_fresh * 1e6 / (double)fresh : 0,
           decisions > fresh ? (t_all - t_fresh) * 1e6 / (double)(decisions - fresh) : 0,
           100.0 * (double)gp_cluster_gpu_milli_allocated(b->c) /
               (double)gp_cluster_gpu_milli_capacity(b->c),
           (double)seen / n, (double)scored / n, cache);
    free(seen_shape);
}

int main(int argc, char **argv)
{
    bench b = {.nodes = 10000, .gpus = 8, .steady = 20000, .fill = 0.9, .policy = "fgd"};
    if (parse(&b, argc, argv) < 0) {
        fprintf(stderr,
                "usage: %s [--nodes N] [--gpus 1..32] [--fill 0..1] [--steady N] "
                "[--policy NAME] [--shapes N]\n",
                argv[0]);
        return 2;
    }
    b.c = build(b.nodes, b.gpus);
    gp_workload_item items[NMIX];
    for (int i = 0; i < NMIX; i++) {
        items[i] = (gp_workload_item){request_of(&mix[i]), mix[i].share};
    }
    gp_workload w = {items, NMIX};
    gp_policy *p;
    gp_diag d;
    if (gp_policy_new(b.policy, &w, &p, &d) < 0) {
        fprintf(stderr, "placement_bench: %s\n", d.msg);
        gp_cluster_free(b.c);
        return 2;
    }
    gp_placer_new(b.c, p, &b.pl);
    gp_rng_seed(&b.rng, 42);
    b.cap = (size_t)b.nodes * (size_t)b.gpus * 2 + 16;
    b.live = malloc(sizeof(gp_assignment) * b.cap);
    if (!b.live) {
        return 1;
    }
    fill_phase(&b);
    steady_phase(&b);
    if (b.shapes > 0) {
        shapes_phase(&b);
    }
    printf("placement_bench phase=end policy=%s digest=%016llx\n", b.policy,
           (unsigned long long)b.digest);
    free(b.live);
    gp_placer_free(b.pl);
    gp_policy_free(p);
    gp_cluster_free(b.c);
    return 0;
}
