/*
 * Differential test of assignment and release: random operations run on the real cluster and
 * on a naive model written independently (per-slice ownership, no caching, no cleverness); the
 * two must accept and refuse the same operations and end in the same state. Some GPUs are
 * partitioned by an operator and get random MIG layouts (what an agent reports) between the
 * operations: the naive model knows nothing of layouts, since assignment and release must not
 * depend on them; and a MIG share chosen against a layout (gp_gpu_share_for) must always be
 * accepted. Seeds 1..N run by default; GP_TEST_SEED=S runs one seed. Every seed is printed so a
 * failure can be replayed.
 */
#include "gpupool/model.h"
#include "gpupool/mig.h"
#include "gpupool/rng.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>

#define NODES    6
#define GPUS     4
#define OPS      4000
#define LIVE_MAX 256

typedef struct naive_gpu {
    int milli_free;
    int64_t mem_free;
    int holders;
    int mig;            /* partitioned */
    int dynamic;        /* partitioned by an allocation */
    int slice_owner[8]; /* instances per memory slice (0 or 1) */
    int compute_used;
    int instances;
} naive_gpu;

typedef struct naive {
    int64_t cpu_free[NODES], mem_free[NODES];
    naive_gpu gpu[NODES][GPUS];
} naive;

static const int64_t CPU = 32000, MEM = 65536, GMEM = 81920;

static int naive_mig_legal(const gp_gpu_share *s)
{
    int n;
    const gp_mig_profile *p = gp_mig_profiles(GP_MIG_A100_80GB, &n);
    for (int i = 0; i < n; i++) {
        if (p[i].compute_slices == s->mig_compute_slices &&
            p[i].memory_slices == s->mig_memory_slices && s->mig_start >= 0 && s->mig_start < 8 &&
            (p[i].legal_starts >> s->mig_start) & 1) {
            return 1;
        }
    }
    return 0;
}

static int naive_assign(naive *m, const gp_assignment *a)
{
    if (a->node < 0 || a->node >= NODES) {
        return GP_EINVAL;
    }
    int used[GPUS] = {0};
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        if (s->gpu >= GPUS || used[s->gpu]++) {
            return GP_EINVAL;
        }
        if (s->mig_start >= 0 ? !naive_mig_legal(s) || s->milli || s->mem_mib
                              : s->milli < 0 || s->milli > 1000 || s->mem_mib < 0 ||
                                    (s->milli == 0 && s->mem_mib == 0)) {
            return GP_EINVAL;
        }
    }
    if (a->cpu_milli > m->cpu_free[a->node] || a->memory_mib > m->mem_free[a->node]) {
        return GP_ENOSPC;
    }
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        naive_gpu *g = &m->gpu[a->node][s->gpu];
        if (s->mig_start < 0) {
            if (g->mig || s->milli > g->milli_free || s->mem_mib > g->mem_free) {
                return GP_ENOSPC;
            }
            continue;
        }
        if (!g->mig && (g->holders || g->milli_free != 1000)) {
            return GP_ENOSPC;
        }
        for (int k = s->mig_start; k < s->mig_start + s->mig_memory_slices; k++) {
            if (g->mig && g->slice_owner[k]) {
                return GP_ENOSPC;
            }
        }
        if (g->mig && g->compute_used + s->mig_compute_slices > 7) {
            return GP_ENOSPC;
        }
    }
    m->cpu_free[a->node] -= a->cpu_milli;
    m->mem_free[a->node] -= a->memory_mib;
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        naive_gpu *g = &m->gpu[a->node][s->gpu];
        if (s->mig_start < 0) {
            g->milli_free -= s->milli;
            g->mem_free -= s->mem_mib;
            g->holders++;
            continue;
        }
        if (!g->mig) {
            g->mig = g->dynamic = 1;
        }
        for (int k = s->mig_start; k < s->mig_start + s->mig_memory_slices; k++) {
            g->slice_owner[k] = 1;
        }
        g->compute_used += s->mig_compute_slices;
        g->instances++;
    }
    return 0;
}

static void naive_release(naive *m, const gp_assignment *a)
{
    m->cpu_free[a->node] += a->cpu_milli;
    m->mem_free[a->node] += a->memory_mib;
    for (int i = 0; i < a->nshares; i++) {
        const gp_gpu_share *s = &a->shares[i];
        naive_gpu *g = &m->gpu[a->node][s->gpu];
        if (s->mig_start < 0) {
            g->milli_free += s->milli;
            g->mem_free += s->mem_mib;
            g->holders--;
            continue;
        }
        for (int k = s->mig_start; k < s->mig_start + s->mig_memory_slices; k++) {
            g->slice_owner[k] = 0;
        }
        g->compute_used -= s->mig_compute_slices;
        if (--g->instances == 0 && g->dynamic) {
            g->mig = g->dynamic = 0;
        }
    }
}

static void compare(const gp_cluster *c, const naive *m, uint64_t seed, int op)
{
    for (int n = 0; n < NODES; n++) {
        const gp_node *node = gp_cluster_node(c, n);
        if (node->cpu_free != m->cpu_free[n] || node->mem_free != m->mem_free[n]) {
            fail_msg("seed %llu op %d node %d: cpu %lld/%lld mem %lld/%lld (real/naive)",
                     (unsigned long long)seed, op, n, (long long)node->cpu_free,
                     (long long)m->cpu_free[n], (long long)node->mem_free,
                     (long long)m->mem_free[n]);
        }
        for (int g = 0; g < GPUS; g++) {
            const gp_gpu *u = gp_cluster_gpu(c, n, g);
            const naive_gpu *v = &m->gpu[n][g];
            uint8_t mask = 0;
            for (int k = 0; k < 8; k++) {
                mask |= (uint8_t)(v->slice_owner[k] << k);
            }
            if (u->milli_free != v->milli_free || u->mem_free_mib != v->mem_free ||
                (u->mode == GP_GPU_MIG) != v->mig || u->mig_compute_used != v->compute_used ||
                (v->mig && u->mig_mem_used != mask)) {
                fail_msg("seed %llu op %d node %d gpu %d differs", (unsigned long long)seed, op, n,
                         g);
            }
        }
    }
    gp_diag d;
    if (gp_cluster_check(c, &d) != 0) {
        fail_msg("seed %llu op %d: %s", (unsigned long long)seed, op, d.msg);
    }
}

static gp_assignment random_assignment(gp_rng *rng)
{
    gp_assignment a;
    memset(&a, 0, sizeof(a));
    a.node = (int)gp_rng_below(rng, NODES + 1) - (gp_rng_below(rng, 50) == 0); /* sometimes bad */
    if (a.node >= NODES) {
        a.node = NODES - 1;
    }
    a.cpu_milli = (int64_t)gp_rng_below(rng, 12000);
    a.memory_mib = (int64_t)gp_rng_below(rng, 20000);
    a.nshares = (int)gp_rng_below(rng, 4);
    int mig = gp_rng_below(rng, 3) == 0;
    for (int i = 0; i < a.nshares; i++) {
        gp_gpu_share *s = &a.shares[i];
        s->gpu = (uint8_t)gp_rng_below(rng, GPUS + (gp_rng_below(rng, 40) == 0));
        s->mig_start = -1;
        if (mig) {
            int n;
            const gp_mig_profile *p = gp_mig_profiles(GP_MIG_A100_80GB, &n);
            const gp_mig_profile *pick = &p[gp_rng_below(rng, (uint64_t)n)];
            s->mig_start = (int8_t)gp_rng_below(rng, 8);
            s->mig_memory_slices = (int8_t)pick->memory_slices;
            s->mig_compute_slices = (int8_t)pick->compute_slices;
            s->mig_reused = (uint8_t)gp_rng_below(rng, 2); /* informational: ignored */
            s->mig_destroys = (uint8_t)gp_rng_below(rng, 256);
        } else {
            s->milli = (int32_t)gp_rng_below(rng, 1002);
            s->mem_mib = gp_rng_below(rng, 2) ? (int64_t)gp_rng_below(rng, 40000) : 0;
        }
    }
    return a;
}

/* GPU g of node n is partitioned by an operator (stays in MIG mode, takes layouts). */
static int operator_gpu(int n, int g)
{
    return g == GPUS - 1 && n % 2 == 0;
}

/* A random valid layout: instances added at random while they fit; some blocked. */
static void random_layout(gp_cluster *c, gp_rng *rng, uint64_t seed, int op)
{
    int n = 0, node = 2 * (int)gp_rng_below(rng, NODES / 2), count;
    const gp_mig_profile *p = gp_mig_profiles(GP_MIG_A100_80GB, &count);
    gp_mig_instance in[GP_MIG_MEMORY_SLICES];
    for (int tries = 0; tries < 12 && n < GP_MIG_MEMORY_SLICES; tries++) {
        const gp_mig_profile *pick = &p[gp_rng_below(rng, (uint64_t)count)];
        memset(&in[n], 0, sizeof(in[n]));
        snprintf(in[n].profile, sizeof(in[n].profile), "%s", pick->name);
        in[n].start = (int)gp_rng_below(rng, 8);
        in[n].blocked = gp_rng_below(rng, 4) == 0;
        if (gp_mig_layout_encode(GP_MIG_A100_80GB, in, n + 1, NULL, NULL) == 0) {
            n++;
        }
    }
    gp_diag d;
    if (gp_cluster_set_mig_layout(c, node, GPUS - 1, in, n, &d) != 0) {
        fail_msg("seed %llu op %d: layout refused: %s", (unsigned long long)seed, op, d.msg);
    }
}

/* A MIG assignment chosen against the layouts, or a random one when none fits. */
static gp_assignment chosen_mig(const gp_cluster *c, gp_rng *rng)
{
    int count;
    const gp_mig_profile *p = gp_mig_profiles(GP_MIG_A100_80GB, &count);
    gp_request r;
    memset(&r, 0, sizeof(r));
    r.kind = GP_REQ_MIG;
    snprintf(r.mig_profile, sizeof(r.mig_profile), "%s",
             p[gp_rng_below(rng, (uint64_t)count)].name);
    gp_assignment a;
    memset(&a, 0, sizeof(a));
    a.node = 2 * (int)gp_rng_below(rng, NODES / 2);
    if (gp_gpu_share_for(c, a.node, GPUS - 1, &r, &a.shares[0]) == 0) {
        a.nshares = 1;
    }
    return a;
}

static void run_seed(uint64_t seed)
{
    printf("differential: seed %llu\n", (unsigned long long)seed);
    gp_cluster *c = gp_cluster_new();
    int model = gp_cluster_model(c, "A100-SXM4-80GB", GMEM);
    naive m;
    memset(&m, 0, sizeof(m));
    for (int n = 0; n < NODES; n++) {
        char name[16];
        snprintf(name, sizeof(name), "n%d", n);
        fx_node(c, name, CPU, MEM, GPUS, model);
        m.cpu_free[n] = CPU;
        m.mem_free[n] = MEM;
        for (int g = 0; g < GPUS; g++) {
            m.gpu[n][g].milli_free = 1000;
            m.gpu[n][g].mem_free = GMEM;
            if (operator_gpu(n, g)) {
                assert_int_equal(gp_cluster_enable_mig(c, n, g), 0);
                m.gpu[n][g].mig = 1;
            }
        }
    }
    gp_cluster_set_dynamic_mig(c, true);
    gp_assignment live[LIVE_MAX];
    int nlive = 0, accepted = 0, mig_accepted = 0;
    gp_rng rng;
    gp_rng_seed(&rng, seed);
    for (int op = 0; op < OPS; op++) {
        if (gp_rng_below(&rng, 25) == 0) {
            random_layout(c, &rng, seed, op);
        }
        if (nlive > 0 && (gp_rng_below(&rng, 3) == 0 || nlive == LIVE_MAX)) {
            int k = (int)gp_rng_below(&rng, (uint64_t)nlive);
            if (gp_cluster_release(c, &live[k]) != 0) {
                fail_msg("seed %llu op %d: release of a live assignment refused",
                         (unsigned long long)seed, op);
            }
            naive_release(&m, &live[k]);
            live[k] = live[--nlive];
        } else {
            bool chosen = gp_rng_below(&rng, 6) == 0;
            gp_assignment a = chosen ? chosen_mig(c, &rng) : random_assignment(&rng);
            naive copy = m;
            int want = naive_assign(&copy, &a);
            int got = gp_cluster_assign(c, &a);
            if (chosen && a.nshares && got != 0) {
                fail_msg("seed %llu op %d: a MIG share chosen against the layout refused (%s)",
                         (unsigned long long)seed, op, gp_strerror_name(got));
            }
            if ((want == 0) != (got == 0)) {
                fail_msg("seed %llu op %d: assign returned %s, the naive model %s",
                         (unsigned long long)seed, op, gp_strerror_name(got),
                         gp_strerror_name(want));
            }
            if (got == 0) {
                m = copy;
                live[nlive++] = a;
                accepted++;
                mig_accepted += a.nshares > 0 && a.shares[0].mig_start >= 0;
            }
        }
        compare(c, &m, seed, op);
    }
    /* The operations must exercise acceptance, not only refusals. */
    printf("differential: seed %llu: %d assignments accepted (%d MIG)\n", (unsigned long long)seed,
           accepted, mig_accepted);
    assert_true(accepted > OPS / 10);
    assert_true(mig_accepted > 10);
    /* Release everything: back to an empty cluster. */
    while (nlive > 0) {
        assert_int_equal(gp_cluster_release(c, &live[--nlive]), 0);
    }
    assert_int_equal(gp_cluster_gpu_milli_allocated(c), 0);
    for (int n = 0; n < NODES; n++) {
        assert_int_equal(gp_cluster_node(c, n)->cpu_free, CPU);
        assert_int_equal(gp_cluster_node(c, n)->tag_mask, 0);
        for (int g = 0; g < GPUS; g++) {
            assert_int_equal(gp_cluster_gpu(c, n, g)->mode,
                             operator_gpu(n, g) ? GP_GPU_MIG : GP_GPU_FULL);
        }
    }
    gp_cluster_free(c);
}

static void test_differential(void **state)
{
    (void)state;
    const char *env = getenv("GP_TEST_SEED");
    if (env) {
        run_seed(strtoull(env, NULL, 10));
        return;
    }
    for (uint64_t seed = 1; seed <= 25; seed++) {
        run_seed(seed);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_differential)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
