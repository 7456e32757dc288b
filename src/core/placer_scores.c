/*
 * The placer's score cache (placer.h): per request shape, linear probing over a power-of-two
 * table of class ids kept at most half full. Ids and scores live in two arrays so a probe walks
 * 4-byte ids only. No deletion: a table is dropped whole (placer_scores_clear, or the limit).
 */
#include "core/placer.h"

#include <stdlib.h>
#include <string.h>

void placer_scores_init(placer_scores *s, size_t limit)
{
    memset(s, 0, sizeof(*s));
    s->limit = limit;
}

static void drop_tables(placer_scores *s)
{
    for (int i = 0; i < s->nshapes; i++) {
        free(s->shapes[i].ids);
        free(s->shapes[i].vals);
    }
    free(s->shapes);
    s->shapes = NULL;
    s->nshapes = 0;
    s->total = 0;
}

void placer_scores_fini(placer_scores *s)
{
    drop_tables(s);
}

void placer_scores_clear(placer_scores *s)
{
    drop_tables(s);
}

static uint32_t slot_of(uint32_t id, uint32_t cap)
{
    /* Fibonacci hashing: the top bits of id times 2^32 / phi spread dense ids evenly. */
    return (id * 0x9e3779b1u) >> (32 - __builtin_ctz(cap));
}

bool placer_scores_get(const placer_scores *s, int shape, int cls, double *out)
{
    if (shape >= s->nshapes) {
        return false;
    }
    const placer_shape_scores *t = &s->shapes[shape];
    if (t->cap == 0) {
        return false;
    }
    uint32_t id = (uint32_t)cls + 1;
    for (uint32_t i = slot_of(id, t->cap);; i = (i + 1) & (t->cap - 1)) {
        if (t->ids[i] == id) {
            *out = t->vals[i];
            return true;
        }
        if (t->ids[i] == 0) {
            return false;
        }
    }
}

static void insert(placer_shape_scores *t, uint32_t id, double val)
{
    uint32_t i = slot_of(id, t->cap);
    while (t->ids[i] != 0 && t->ids[i] != id) {
        i = (i + 1) & (t->cap - 1);
    }
    t->count += t->ids[i] == 0;
    t->ids[i] = id;
    t->vals[i] = val;
}

/* Makes room for one more entry; false on out of memory (t unchanged). */
static bool reserve(placer_shape_scores *t)
{
    if ((t->count + 1) * 2 <= t->cap) {
        return true;
    }
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    placer_shape_scores n = {calloc(cap, sizeof(uint32_t)), malloc(cap * sizeof(double)), cap, 0};
    if (!n.ids || !n.vals) {
        free(n.ids);
        free(n.vals);
        return false;
    }
    for (uint32_t i = 0; i < t->cap; i++) {
        if (t->ids[i] != 0) {
            insert(&n, t->ids[i], t->vals[i]);
        }
    }
    free(t->ids);
    free(t->vals);
    *t = n;
    return true;
}

void placer_scores_put(placer_scores *s, int shape, int cls, double val)
{
    if (s->total >= s->limit) {
        drop_tables(s);
    }
    if (shape >= s->nshapes) {
        int n = s->nshapes ? s->nshapes : 16;
        while (n <= shape) {
            n *= 2;
        }
        placer_shape_scores *sh = realloc(s->shapes, sizeof(*sh) * (size_t)n);
        if (!sh) {
            return;
        }
        memset(sh + s->nshapes, 0, sizeof(*sh) * (size_t)(n - s->nshapes));
        s->shapes = sh;
        s->nshapes = n;
    }
    placer_shape_scores *t = &s->shapes[shape];
    if (!reserve(t)) {
        return;
    }
    uint32_t before = t->count;
    insert(t, (uint32_t)cls + 1, val);
    s->total += t->count - before;
}

void placer_scores_prune(placer_scores *s, int (*map)(void *ctx, int cls), void *ctx)
{
    s->total = 0;
    for (int i = 0; i < s->nshapes; i++) {
        placer_shape_scores *t = &s->shapes[i], n = {NULL, NULL, 64, 0};
        uint32_t kept = 0;
        for (uint32_t k = 0; k < t->cap; k++) {
            kept += t->ids[k] != 0 && map(ctx, (int)t->ids[k] - 1) >= 0;
        }
        while (n.cap < kept * 2) {
            n.cap *= 2;
        }
        n.ids = kept ? calloc(n.cap, sizeof(uint32_t)) : NULL;
        n.vals = kept ? malloc(n.cap * sizeof(double)) : NULL;
        if (!n.ids || !n.vals) { /* nothing kept, or out of memory: the shape starts afresh */
            free(n.ids);
            free(n.vals);
            n = (placer_shape_scores){NULL, NULL, 0, 0};
        }
        for (uint32_t k = 0; n.cap && k < t->cap; k++) {
            int to = t->ids[k] != 0 ? map(ctx, (int)t->ids[k] - 1) : -1;
            if (to >= 0) {
                insert(&n, (uint32_t)to + 1, t->vals[k]);
            }
        }
        free(t->ids);
        free(t->vals);
        *t = n;
        s->total += n.count;
    }
}

size_t placer_scores_bytes(const placer_scores *s)
{
    size_t b = sizeof(placer_shape_scores) * (size_t)s->nshapes;
    for (int i = 0; i < s->nshapes; i++) {
        b += (size_t)s->shapes[i].cap * (sizeof(uint32_t) + sizeof(double));
    }
    return b;
}
