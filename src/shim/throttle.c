/*
 * The compute limit's hook point (see throttle.h). Stores the limit; does not throttle yet.
 */
#include "shim/throttle.h"

#include <stdatomic.h>

static atomic_uint limit_percent;
static atomic_uint limit_policy;

void gp_throttle_configure(uint32_t core_percent, uint32_t core_policy)
{
    atomic_store(&limit_percent, core_percent);
    atomic_store(&limit_policy, core_policy);
}

void gp_throttle_limit(uint32_t *core_percent, uint32_t *core_policy)
{
    *core_percent = atomic_load(&limit_percent);
    *core_policy = atomic_load(&limit_policy);
}

void gp_throttle_before_launch(const gp_launch *l)
{
    (void)l; /* the kernel-launch throttle goes here */
}
