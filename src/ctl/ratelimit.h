/*
 * Rate limits of the API: one token bucket per key (a tenant, a token), refilled at a steady
 * rate up to a burst. A request takes one token; with none left it is refused and told how long
 * until the next token, which becomes the Retry-After of a 429.
 *
 * Pure: the time is passed in (milliseconds of any monotonic clock), so tests drive the clock.
 * Thread-safe: every call takes the limiter's own mutex; nothing else is locked.
 *
 * Memory is bounded: at most max_keys buckets are kept. A bucket that has refilled to the burst
 * is the same as no bucket, so when the table is full those are dropped first; if every bucket
 * is still draining, the fullest one (the one whose key is furthest from its limit; the smallest
 * key among equals) is dropped, so the limiter forgets the least and never refuses a key for want
 * of room.
 *
 * Ownership: gp_ratelimit_new returns a limiter the caller frees with gp_ratelimit_free.
 */
#ifndef GP_CTL_RATELIMIT_H
#define GP_CTL_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

typedef struct gp_ratelimit gp_ratelimit;

/* Largest max_keys accepted. */
#define GP_RATELIMIT_MAX_KEYS (1 << 20)

/* A limiter of rate tokens per second (0: no limit, every take succeeds and nothing is kept),
 * burst tokens at most (>= 1), and at most max_keys buckets (1..GP_RATELIMIT_MAX_KEYS).
 * Returns 0 and *out, GP_EINVAL (rate negative or not finite, burst < 1, max_keys out of range)
 * or GP_ENOMEM; *out is NULL on failure. */
int gp_ratelimit_new(double rate, double burst, size_t max_keys, gp_ratelimit **out);
/* Frees the limiter. Accepts NULL. */
void gp_ratelimit_free(gp_ratelimit *rl);

/* Takes one token from key's bucket at time now_ms (a new key starts with a full bucket).
 * Returns 0 when the request may go on; GP_EUNAVAIL when the bucket is empty, with
 * *retry_after_ms (if not NULL) set to the milliseconds until a token will be there (>= 1).
 * A clock that goes backwards counts as no time passing. */
int gp_ratelimit_take(gp_ratelimit *rl, int64_t key, int64_t now_ms, int64_t *retry_after_ms);

/* Buckets kept now (for tests of the memory bound). */
size_t gp_ratelimit_size(gp_ratelimit *rl);
/* For tests: 0 when the table's invariants hold (the count matches the used slots, at most
 * max_keys of them, and every key is found from its home slot), else GP_EINTERNAL. */
int gp_ratelimit_check(gp_ratelimit *rl);

#endif
