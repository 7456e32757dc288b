/*
 * The compute limit's hook point.
 *
 * Every kernel launch hook (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel and their
 * per-thread-stream variants) calls gp_throttle_before_launch() before passing the launch to the
 * driver. The limit itself (percent of a GPU, and the policy: default = only while other tenants
 * use the GPU, strict = always) is read at start-up from the region header or the environment
 * and kept here; the throttle that delays launches to hold a replica to its share is a separate
 * piece of work and is not implemented yet: today the call returns at once.
 *
 * Contract for the throttle: called on the launching thread, concurrently from many threads,
 * before the driver sees the launch; it may block (that is how launches are delayed) but must
 * never fail the launch nor take a lock the allocation paths hold.
 */
#ifndef GP_SHIM_THROTTLE_H
#define GP_SHIM_THROTTLE_H

#include <stdint.h>

#include "shim/cuda_types.h"

typedef struct gp_launch {
    CUfunction f;
    CUstream stream;
    uint64_t blocks;            /* grid size */
    uint64_t threads_per_block; /* block size */
    int cooperative;
} gp_launch;

/* Sets the limit (percent 0..100, 0 = none; gp_share_core_policy); called once at start-up. */
void gp_throttle_configure(uint32_t core_percent, uint32_t core_policy);
/* Limit currently configured (for tests and the throttle). */
void gp_throttle_limit(uint32_t *core_percent, uint32_t *core_policy);
void gp_throttle_before_launch(const gp_launch *l);

#endif
