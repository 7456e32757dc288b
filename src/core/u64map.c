/*
 * The u64 -> u64 open-addressing map. Invariant: count <= cap / 2, so probes stay short and a
 * free slot always exists.
 */
#include "core/u64map.h"

#include "gpupool/error.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY UINT64_MAX

void gp_u64map_init(gp_u64map *m)
{
    memset(m, 0, sizeof(*m));
}

void gp_u64map_fini(gp_u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

void gp_u64map_clear(gp_u64map *m)
{
    if (m->cap) {
        memset(m->keys, 0xff, m->cap * sizeof(uint64_t));
    }
    m->count = 0;
}

bool gp_u64map_get(const gp_u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap) {
        return false;
    }
    size_t mask = m->cap - 1;
    for (size_t i = gp_hash64(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return true;
        }
        if (m->keys[i] == EMPTY) {
            return false;
        }
    }
}

static void insert(uint64_t *keys, uint64_t *vals, size_t cap, uint64_t key, uint64_t val)
{
    size_t mask = cap - 1;
    size_t i = gp_hash64(key) & mask;
    while (keys[i] != EMPTY && keys[i] != key) {
        i = (i + 1) & mask;
    }
    keys[i] = key;
    vals[i] = val;
}

static int resize(gp_u64map *m, size_t cap)
{
    uint64_t *keys = malloc(cap * sizeof(uint64_t));
    uint64_t *vals = malloc(cap * sizeof(uint64_t));
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return GP_ENOMEM;
    }
    memset(keys, 0xff, cap * sizeof(uint64_t));
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] != EMPTY) {
            insert(keys, vals, cap, m->keys[i], m->vals[i]);
        }
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

int gp_u64map_put(gp_u64map *m, uint64_t key, uint64_t val)
{
    if ((m->count + 1) * 2 > m->cap) {
        int rc = resize(m, m->cap ? m->cap * 2 : 64);
        if (rc < 0) {
            return rc;
        }
    }
    size_t mask = m->cap - 1;
    size_t i = gp_hash64(key) & mask;
    while (m->keys[i] != EMPTY && m->keys[i] != key) {
        i = (i + 1) & mask;
    }
    if (m->keys[i] == EMPTY) {
        m->count++;
    }
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}
