/*
 * Choosing which GPUs of one node a multi-GPU request gets.
 *
 * Collective communication runs at the speed of the slowest link, so a set of GPUs is better the
 * more of its pairs are joined by NVLink; among sets with as many NVLink pairs, the more pairs
 * share a NUMA node (PCIe peer traffic and host memory stay local), the better; among equals,
 * the lowest GPU indexes win, so the choice is deterministic.
 */
#ifndef GPUPOOL_TOPOLOGY_H
#define GPUPOOL_TOPOLOGY_H

#include "gpupool/model.h"

#include <stdint.h>

/* Quality of a GPU set: compared by nvlink_pairs, then numa_pairs. */
typedef struct gp_topo_score {
    int nvlink_pairs;
    int numa_pairs;
} gp_topo_score;

/* Score of the GPUs of node named by the bit mask set. */
gp_topo_score gp_topology_score(const gp_cluster *c, int node, uint32_t set);

/*
 * Picks count GPUs among the bit mask candidates of node and returns their mask in *chosen.
 * Exhaustive over all subsets when there are at most 16 candidates (at most 12,870 subsets),
 * greedy beyond. GP_ENOSPC when fewer than count candidates; GP_EINVAL when count < 1.
 */
int gp_topology_pick(const gp_cluster *c, int node, uint32_t candidates, int count,
                     uint32_t *chosen);

#endif
