/*
 * An open-addressing hash map from uint64_t keys to uint64_t values, for the placer's caches.
 *
 * Linear probing over a power-of-two table kept at most half full; no deletion, only clear.
 * The key UINT64_MAX is reserved (marks empty slots). Owns its table.
 */
#ifndef GP_CORE_U64MAP_H
#define GP_CORE_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gp_u64map {
    uint64_t *keys;
    uint64_t *vals;
    size_t cap; /* power of two, or 0 */
    size_t count;
} gp_u64map;

void gp_u64map_init(gp_u64map *m);
void gp_u64map_fini(gp_u64map *m);
void gp_u64map_clear(gp_u64map *m);
/* Finds key; true and *val set when present. */
bool gp_u64map_get(const gp_u64map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces key; 0 or GP_ENOMEM (then the map is unchanged). */
int gp_u64map_put(gp_u64map *m, uint64_t key, uint64_t val);

/* A well-mixed 64-bit hash of a 64-bit value (the SplitMix64 finaliser). */
static inline uint64_t gp_hash64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif
