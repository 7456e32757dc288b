/*
 * Clocks in milliseconds (clock.h).
 */
#include "base/clock.h"

#include <time.h>

static int64_t ms_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t gp_mono_ms(void)
{
    return ms_of(CLOCK_MONOTONIC);
}

int64_t gp_wall_ms(void)
{
    return ms_of(CLOCK_REALTIME);
}
