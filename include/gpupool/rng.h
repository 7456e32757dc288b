/*
 * A deterministic pseudo-random generator whose whole state is a value the caller owns.
 *
 * libgpcore never calls rand() or reads a clock: where a decision needs chance (the Random
 * policy, tie-breaks, the simulator's sampling and shuffles) the caller passes a gp_rng seeded
 * from its own input, so every run is reproducible from its seed. SplitMix64 (Steele, Lea and
 * Flood 2014): tiny state, full 2^64 period, good statistical quality for this use.
 */
#ifndef GPUPOOL_RNG_H
#define GPUPOOL_RNG_H

#include <stdint.h>

typedef struct gp_rng {
    uint64_t state;
} gp_rng;

static inline void gp_rng_seed(gp_rng *r, uint64_t seed)
{
    r->state = seed;
}

static inline uint64_t gp_rng_next(gp_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n) for n >= 1, without modulo bias (rejection of the short tail). */
static inline uint64_t gp_rng_below(gp_rng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
        uint64_t x = gp_rng_next(r);
        if (x < limit) {
            return x % n;
        }
    }
}

/* Uniform double in [0, 1). */
static inline double gp_rng_unit(gp_rng *r)
{
    return (double)(gp_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
