/*
 * GPU set selection by interconnect. A node without NVLink and without distinct NUMA nodes
 * takes the fast path (lowest indexes): every set is equal there.
 */
#include "gpupool/topology.h"

#include "core/cluster_impl.h"

static int popcount32(uint32_t x)
{
    return __builtin_popcount(x);
}

gp_topo_score gp_topology_score(const gp_cluster *c, int node, uint32_t set)
{
    gp_topo_score s = {0, 0};
    const gp_node *n = &c->nodes[node];
    for (int i = 0; i < n->ngpus; i++) {
        if (!(set & (1u << i))) {
            continue;
        }
        const gp_gpu *a = cluster_gpu_const(c, node, i);
        uint32_t later = set & ~((2u << i) - 1u);
        s.nvlink_pairs += popcount32(a->nvlink & later);
        for (int j = i + 1; j < n->ngpus; j++) {
            if ((later & (1u << j)) && a->numa >= 0 &&
                cluster_gpu_const(c, node, j)->numa == a->numa) {
                s.numa_pairs++;
            }
        }
    }
    return s;
}

static int better(gp_topo_score a, gp_topo_score b)
{
    return a.nvlink_pairs != b.nvlink_pairs ? a.nvlink_pairs > b.nvlink_pairs
                                            : a.numa_pairs > b.numa_pairs;
}

static int flat_topology(const gp_cluster *c, int node)
{
    const gp_node *n = &c->nodes[node];
    int numa = -2;
    for (int i = 0; i < n->ngpus; i++) {
        const gp_gpu *u = cluster_gpu_const(c, node, i);
        if (u->nvlink) {
            return 0;
        }
        if (numa == -2) {
            numa = u->numa;
        } else if (u->numa != numa) {
            return 0;
        }
    }
    return 1;
}

static uint32_t lowest(uint32_t candidates, int count)
{
    uint32_t set = 0;
    for (int i = 0; i < 32 && count > 0; i++) {
        if (candidates & (1u << i)) {
            set |= 1u << i;
            count--;
        }
    }
    return set;
}

/* Spreads the low `count` bits of a compact index pattern over the candidate positions. */
static uint32_t expand(uint32_t pattern, const int *pos)
{
    uint32_t set = 0;
    for (int k = 0; pattern; k++, pattern >>= 1) {
        if (pattern & 1u) {
            set |= 1u << pos[k];
        }
    }
    return set;
}

static uint32_t exhaustive(const gp_cluster *c, int node, uint32_t candidates, int count)
{
    int pos[32], m = 0;
    for (int i = 0; i < 32; i++) {
        if (candidates & (1u << i)) {
            pos[m++] = i;
        }
    }
    uint32_t best = 0;
    gp_topo_score best_score = {-1, -1};
    /* Gosper's hack: every m-bit pattern with count bits set, in increasing order, so the
     * first best found is the one with the lowest indexes. */
    for (uint32_t p = (1u << count) - 1u; p < (1u << m);) {
        uint32_t set = expand(p, pos);
        gp_topo_score s = gp_topology_score(c, node, set);
        if (better(s, best_score)) {
            best = set;
            best_score = s;
        }
        uint32_t lo = p & (0u - p), r = p + lo;
        p = (((r ^ p) >> 2) / lo) | r;
    }
    return best;
}

static uint32_t greedy(const gp_cluster *c, int node, uint32_t candidates, int count)
{
    uint32_t best = 0;
    gp_topo_score best_score = {-1, -1};
    for (int seed = 0; seed < 32; seed++) {
        if (!(candidates & (1u << seed))) {
            continue;
        }
        uint32_t set = 1u << seed;
        for (int k = 1; k < count; k++) {
            uint32_t pick = 0;
            gp_topo_score ps = {-1, -1};
            for (int i = 0; i < 32; i++) {
                uint32_t b = 1u << i;
                if ((candidates & b) && !(set & b)) {
                    gp_topo_score s = gp_topology_score(c, node, set | b);
                    if (better(s, ps)) {
                        ps = s;
                        pick = b;
                    }
                }
            }
            set |= pick;
        }
        gp_topo_score s = gp_topology_score(c, node, set);
        if (better(s, best_score)) {
            best = set;
            best_score = s;
        }
    }
    return best;
}

int gp_topology_pick(const gp_cluster *c, int node, uint32_t candidates, int count,
                     uint32_t *chosen)
{
    if (count < 1) {
        return GP_EINVAL;
    }
    int m = popcount32(candidates);
    if (m < count) {
        return GP_ENOSPC;
    }
    if (m == count || count == 1 || flat_topology(c, node)) {
        *chosen = lowest(candidates, count);
    } else if (m <= 16) {
        *chosen = exhaustive(c, node, candidates, count);
    } else {
        *chosen = greedy(c, node, candidates, count);
    }
    return 0;
}
