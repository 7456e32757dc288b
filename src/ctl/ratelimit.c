/*
 * Token buckets in an open-addressing hash table (linear probing, at most half full, grown by
 * doubling). Buckets are removed with backward-shift deletion, so the table never holds
 * tombstones and a probe stops at the first empty slot. A bucket's tokens are brought up to
 * date only when its key is seen (or when room is made), from the time passed in.
 */
#include "ctl/ratelimit.h"

#include "gpupool/error.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* Slack for floating-point rounding: a bucket refilled for exactly the advertised wait holds a
 * whole token even if the sum came out a hair below 1, and a wait that computes to a hair over
 * a whole millisecond is not rounded up to the next one. */
#define TOKEN_EPS 1e-6

typedef struct bucket {
    int64_t key;
    int64_t last_ms; /* when tokens was last brought up to date */
    double tokens;
    bool used;
} bucket;

struct gp_ratelimit {
    pthread_mutex_t lock;
    double rate;  /* tokens per second; 0: no limit */
    double burst; /* the bucket's size */
    size_t max_keys;
    bucket *slots; /* cap entries; NULL until the first key */
    size_t cap;    /* a power of two, or 0 */
    size_t count;  /* used slots */
};

int gp_ratelimit_new(double rate, double burst, size_t max_keys, gp_ratelimit **out)
{
    *out = NULL;
    if (!isfinite(rate) || rate < 0 || !isfinite(burst) || burst < 1 || max_keys < 1 ||
        max_keys > GP_RATELIMIT_MAX_KEYS) {
        return GP_EINVAL;
    }
    gp_ratelimit *rl = calloc(1, sizeof(*rl));
    if (!rl) {
        return GP_ENOMEM;
    }
    pthread_mutex_init(&rl->lock, NULL);
    rl->rate = rate;
    rl->burst = burst;
    rl->max_keys = max_keys;
    *out = rl;
    return 0;
}

void gp_ratelimit_free(gp_ratelimit *rl)
{
    if (!rl) {
        return;
    }
    pthread_mutex_destroy(&rl->lock);
    free(rl->slots);
    free(rl);
}

static size_t hash(int64_t key)
{
    /* splitmix64's finaliser: ids are small consecutive integers, so spread them. */
    uint64_t x = (uint64_t)key;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (size_t)x;
}

/* The slot holding key, or the empty slot where it would go. cap > 0 and never full. */
static size_t probe(const gp_ratelimit *rl, int64_t key)
{
    size_t mask = rl->cap - 1;
    size_t i = hash(key) & mask;
    while (rl->slots[i].used && rl->slots[i].key != key) {
        i = (i + 1) & mask;
    }
    return i;
}

static int grow(gp_ratelimit *rl)
{
    size_t cap = rl->cap ? rl->cap * 2 : 16;
    bucket *old = rl->slots;
    size_t old_cap = rl->cap;
    bucket *slots = calloc(cap, sizeof(*slots));
    if (!slots) {
        return GP_ENOMEM;
    }
    rl->slots = slots;
    rl->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].used) {
            rl->slots[probe(rl, old[i].key)] = old[i];
        }
    }
    free(old);
    return 0;
}

/* Removes slot i, moving later entries of its probe run back so no probe breaks. */
static void remove_at(gp_ratelimit *rl, size_t i)
{
    size_t mask = rl->cap - 1;
    size_t j = i;
    for (;;) {
        rl->slots[i].used = false;
        for (;;) {
            j = (j + 1) & mask;
            if (!rl->slots[j].used) {
                rl->count--;
                return;
            }
            size_t home = hash(rl->slots[j].key) & mask;
            /* j's entry may fill the hole at i unless its home lies cyclically in (i, j]. */
            bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays) {
                break;
            }
        }
        rl->slots[i] = rl->slots[j];
        i = j;
    }
}

static void refill(const gp_ratelimit *rl, bucket *b, int64_t now_ms)
{
    if (now_ms > b->last_ms) {
        b->tokens += (double)(now_ms - b->last_ms) * rl->rate / 1000.0;
        if (b->tokens > rl->burst) {
            b->tokens = rl->burst;
        }
        b->last_ms = now_ms;
    }
}

/* The table holds max_keys buckets: drops those that are full again, or else the fullest (the
 * smallest key among equals, so that the choice does not depend on the table's layout). */
static void make_room(gp_ratelimit *rl, int64_t now_ms)
{
    size_t fullest = rl->cap;
    bool dropped = false;
    for (size_t i = 0; i < rl->cap;) {
        bucket *b = &rl->slots[i];
        if (!b->used) {
            i++;
            continue;
        }
        refill(rl, b, now_ms);
        if (b->tokens >= rl->burst - TOKEN_EPS) {
            remove_at(rl, i); /* an entry may have moved into i: look at it again */
            dropped = true;
            continue;
        }
        const bucket *f = fullest < rl->cap ? &rl->slots[fullest] : NULL;
        if (!f || b->tokens > f->tokens || (b->tokens == f->tokens && b->key < f->key)) {
            fullest = i;
        }
        i++;
    }
    if (!dropped && fullest < rl->cap) {
        remove_at(rl, fullest);
    }
}

int gp_ratelimit_take(gp_ratelimit *rl, int64_t key, int64_t now_ms, int64_t *retry_after_ms)
{
    if (rl->rate == 0) {
        return 0;
    }
    pthread_mutex_lock(&rl->lock);
    bucket *b = NULL;
    if (rl->cap) {
        size_t i = probe(rl, key);
        b = rl->slots[i].used ? &rl->slots[i] : NULL;
    }
    if (!b) {
        if (rl->count >= rl->max_keys) {
            make_room(rl, now_ms);
        }
        if ((rl->count + 1) * 2 > rl->cap && grow(rl) != 0) {
            pthread_mutex_unlock(&rl->lock);
            return 0; /* out of memory: let the request through rather than refuse everyone */
        }
        b = &rl->slots[probe(rl, key)];
        *b = (bucket){.key = key, .last_ms = now_ms, .tokens = rl->burst, .used = true};
        rl->count++;
    }
    refill(rl, b, now_ms);
    int rc = 0;
    if (b->tokens >= 1 - TOKEN_EPS) {
        b->tokens -= 1;
        if (b->tokens < 0) {
            b->tokens = 0;
        }
    } else {
        rc = GP_EUNAVAIL;
        if (retry_after_ms) {
            double ms = ceil((1 - b->tokens) * 1000.0 / rl->rate - TOKEN_EPS);
            *retry_after_ms = ms < 1 ? 1 : ms > 1e15 ? (int64_t)1e15 : (int64_t)ms;
        }
    }
    pthread_mutex_unlock(&rl->lock);
    return rc;
}

size_t gp_ratelimit_size(gp_ratelimit *rl)
{
    pthread_mutex_lock(&rl->lock);
    size_t n = rl->count;
    pthread_mutex_unlock(&rl->lock);
    return n;
}

int gp_ratelimit_check(gp_ratelimit *rl)
{
    pthread_mutex_lock(&rl->lock);
    size_t used = 0;
    bool ok = rl->count <= rl->max_keys && (rl->cap ? rl->count * 2 <= rl->cap : rl->count == 0);
    for (size_t i = 0; ok && i < rl->cap; i++) {
        if (rl->slots[i].used) {
            used++;
            ok = probe(rl, rl->slots[i].key) == i;
        }
    }
    ok = ok && used == rl->count;
    pthread_mutex_unlock(&rl->lock);
    return ok ? 0 : GP_EINTERNAL;
}
