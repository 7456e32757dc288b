/*
 * Placement throughput on a synthetic pool: N nodes x G GPUs (default 10,000 x 8, 96 cores,
 * 768 GiB each), FGD (or --policy), a pod mix shaped like the Alibaba trace (CPU-only, fractions
 * of one GPU, whole GPUs, 2/4/8-GPU gangs). Two phases:
 *   fill:   place pods until the pool is --fill (default 0.9) allocated by GPU;
 *   steady: --steady (default 20,000) rounds of releasing a random running pod and placing a
 *           new one, the state a long-running controller lives in.
 * Prints one machine-readable line per phase:
 *   placement_bench phase=fill policy=fgd nodes=10000 gpus=8 placements=... seconds=... per_sec=...
 */
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
    {0, 0, GP_REQ_NONE, 0, 0, 0.13},           {8000, 32768, GP_REQ_WHOLE, 1, 0, 0.45},
    {6000, 24576, GP_REQ_FRACTION, 1, 810, 0.13}, {4000, 16384, GP_REQ_FRACTION, 1, 470, 0.09},
    {4000, 16384, GP_REQ_FRACTION, 1, 320, 0.05}, {8000, 30720, GP_REQ_FRACTION, 1, 650, 0.04},
    {2000, 8192, GP_REQ_FRACTION, 1, 230, 0.03},  {16000, 65536, GP_REQ_WHOLE, 2, 0, 0.03},
    {32000, 131072, GP_REQ_WHOLE, 4, 0, 0.03},    {64000, 262144, GP_REQ_WHOLE, 8, 0, 0.02},
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

int main(int argc, char **argv)
{
    int nodes = 10000, gpus = 8, steady = 20000;
    double fill = 0.9;
    const char *policy = "fgd";
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'}, {"gpus", required_argument, NULL, 'g'},
        {"fill", required_argument, NULL, 'f'},  {"steady", required_argument, NULL, 's'},
        {"policy", required_argument, NULL, 'p'}, {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (ch) {
        case 'n': nodes = atoi(optarg); break;
        case 'g': gpus = atoi(optarg); break;
        case 'f': fill = atof(optarg); break;
        case 's': steady = atoi(optarg); break;
        case 'p': policy = optarg; break;
        default:
            fprintf(stderr, "usage: %s [--nodes N] [--gpus G] [--fill F] [--steady N] "
                            "[--policy NAME]\n", argv[0]);
            return 2;
        }
    }
    if (nodes < 1 || gpus < 1 || gpus > GP_MAX_GPUS_PER_NODE || fill <= 0 || fill > 1) {
        fprintf(stderr, "placement_bench: bad --nodes/--gpus/--fill\n");
        return 2;
    }
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
    gp_workload_item items[NMIX];
    for (int i = 0; i < NMIX; i++) {
        items[i] = (gp_workload_item){request_of(&mix[i]), mix[i].share};
    }
    gp_workload w = {items, NMIX};
    gp_policy *p;
    gp_placer *pl;
    gp_diag d;
    if (gp_policy_new(policy, &w, &p, &d) < 0) {
        fprintf(stderr, "placement_bench: %s\n", d.msg);
        return 2;
    }
    gp_placer_new(c, p, &pl);
    gp_rng rng;
    gp_rng_seed(&rng, 42);
    size_t cap = (size_t)nodes * (size_t)gpus * 2 + 16, nlive = 0;
    gp_assignment *live = malloc(sizeof(gp_assignment) * cap);
    long placed = 0, failed = 0, seen = 0, scored = 0;
    gp_place_info info;
    double t0 = now();
    int64_t capacity = gp_cluster_gpu_milli_capacity(c);
    while ((double)gp_cluster_gpu_milli_allocated(c) < fill * (double)capacity && nlive < cap) {
        gp_request r = draw(&rng);
        gp_assignment a;
        int rc = gp_placer_place(pl, &r, &rng, &a, &info);
        seen += info.classes_seen;
        scored += info.classes_scored;
        if (rc == 0 && gp_cluster_assign(c, &a) == 0) {
            live[nlive++] = a;
            placed++;
        } else if (++failed > 1000) {
            break;
        }
    }
    double t1 = now();
    printf("placement_bench phase=fill policy=%s nodes=%d gpus=%d placements=%ld failed=%ld "
           "allocated_pct=%.1f classes_per_decision=%.1f scored_per_decision=%.1f seconds=%.3f "
           "per_sec=%.0f\n",
           policy, nodes, gpus, placed, failed,
           100.0 * (double)gp_cluster_gpu_milli_allocated(c) / (double)capacity,
           (double)seen / (double)(placed + failed), (double)scored / (double)(placed + failed),
           t1 - t0, (double)(placed + failed) / (t1 - t0));
    seen = scored = 0;
    long decisions = 0;
    for (int i = 0; i < steady && nlive > 0; i++) {
        size_t k = (size_t)gp_rng_below(&rng, nlive);
        gp_cluster_release(c, &live[k]);
        live[k] = live[--nlive];
        gp_request r = draw(&rng);
        gp_assignment a;
        decisions++;
        int rc = gp_placer_place(pl, &r, &rng, &a, &info);
        seen += info.classes_seen;
        scored += info.classes_scored;
        if (rc == 0 && gp_cluster_assign(c, &a) == 0) {
            live[nlive++] = a;
        }
    }
    double t2 = now();
    printf("placement_bench phase=steady policy=%s nodes=%d gpus=%d placements=%ld "
           "classes_per_decision=%.1f scored_per_decision=%.1f seconds=%.3f per_sec=%.0f\n",
           policy, nodes, gpus, decisions, (double)seen / (double)decisions,
           (double)scored / (double)decisions, t2 - t1, (double)decisions / (t2 - t1));
    free(live);
    gp_placer_free(pl);
    gp_policy_free(p);
    gp_cluster_free(c);
    return 0;
}
