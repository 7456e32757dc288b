/*
 * Clocks in milliseconds: the monotonic clock (intervals, deadlines) and the wall clock (times
 * that are stored or shown).
 */
#ifndef GP_BASE_CLOCK_H
#define GP_BASE_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC, in ms. */
int64_t gp_mono_ms(void);
/* CLOCK_REALTIME: milliseconds since the epoch. */
int64_t gp_wall_ms(void);

#endif
