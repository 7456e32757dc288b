/*
 * Private parts of the placer (placer.c), shared with its tests.
 *
 * placer_fit: what a node class offers, in a few words, so that a request the class cannot
 * hold is passed over without a look at the score cache or at the node. It is a necessary
 * condition of gp_node_fits, never a sufficient one: placer_fit_may() false implies
 * gp_node_fits() false for every member of the class; true means "look closer".
 *
 * placer_scores: the score cache, one small open-addressing table per request shape (keyed by
 * class id), so a decision probes one table that stays warm instead of a map over every
 * (class, shape) pair. Its entries are bounded in number (placer_scores_init's limit): the
 * placer prunes it to the classes that have members when it reaches the limit, and carries the
 * scores of surviving classes over when it renumbers its classes (placer_scores_prune); should a
 * put find it full all the same, every table is dropped and scores are computed again.
 *
 * Pure: no I/O, no clock, no globals.
 */
#ifndef GP_CORE_PLACER_H
#define GP_CORE_PLACER_H

#include "gpupool/model.h"
#include "gpupool/placement.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct placer_fit {
    int64_t cpu_free, mem_free;
    int64_t window_ms;   /* as gp_node.window_ms */
    uint64_t models;     /* as gp_node.models */
    int64_t max_gpu_mem; /* most memory left on one GPU in FULL mode taking allocations */
    int32_t max_milli;   /* most compute left on one such GPU */
    uint32_t caps;       /* as gp_node.caps */
    uint8_t whole;       /* GPUs that look empty and take allocations (spares counted) */
    bool schedulable;
} placer_fit;

/* The summary of node's current state. */
void placer_fit_of(const gp_cluster *c, int node, placer_fit *out);

/* False when no node summarised by f can hold r (see above). */
static inline bool placer_fit_may(const placer_fit *f, const gp_request *r)
{
    if (!f->schedulable || f->cpu_free < r->cpu_milli || f->mem_free < r->memory_mib ||
        (f->caps & r->needs) != r->needs) {
        return false;
    }
    if (f->window_ms >= 0 && (r->runtime_ms <= 0 || r->runtime_ms > f->window_ms)) {
        return false;
    }
    switch (r->kind) {
    case GP_REQ_NONE:
        return true;
    case GP_REQ_WHOLE:
        return (!r->allowed_models || (f->models & r->allowed_models)) && f->whole >= r->gpu_count;
    case GP_REQ_FRACTION:
        return (!r->allowed_models || (f->models & r->allowed_models)) &&
               f->max_milli >= r->gpu_milli &&
               (r->gpu_mem_mib <= 0 || f->max_gpu_mem >= r->gpu_mem_mib);
    default:
        return !r->allowed_models || (f->models & r->allowed_models);
    }
}

typedef struct placer_shape_scores {
    uint32_t *ids; /* class id + 1; 0: empty slot */
    double *vals;
    uint32_t cap; /* power of two, or 0 */
    uint32_t count;
} placer_shape_scores;

typedef struct placer_scores {
    placer_shape_scores *shapes; /* indexed by request id */
    int nshapes;
    size_t total; /* entries over all shapes */
    size_t limit; /* most entries kept */
} placer_scores;

void placer_scores_init(placer_scores *s, size_t limit);
void placer_scores_fini(placer_scores *s);
/* Forgets every score (keeps nothing allocated). */
void placer_scores_clear(placer_scores *s);
/* The cached score of class cls for request shape; true when present. */
bool placer_scores_get(const placer_scores *s, int shape, int cls, double *out);
/* Caches it. A failure to allocate only costs a later recompute; past the limit, every table is
 * dropped first. */
void placer_scores_put(placer_scores *s, int shape, int cls, double val);
/* Keeps the entry of class cls as the entry of class map(ctx, cls), or drops it when that is
 * negative; each table is shrunk to fit what it keeps. map must be one-to-one on what it keeps. */
void placer_scores_prune(placer_scores *s, int (*map)(void *ctx, int cls), void *ctx);
/* Bytes held by the tables. */
size_t placer_scores_bytes(const placer_scores *s);

/* For tests. Plain: every live class is checked with gp_node_fits and scored afresh, without
 * the summaries or the cache, the straightforward scan the fast path must agree with decision
 * for decision. */
void gp_placer_set_plain(gp_placer *pl, bool plain);
/* The score cache's limit in entries (default PLACER_SCORES_MAX); clears the cache. */
void gp_placer_set_cache_limit(gp_placer *pl, size_t entries);
/* Entries and bytes the score cache holds now. */
void gp_placer_cache_usage(const gp_placer *pl, size_t *entries, size_t *bytes);
/* Classes kept beyond four per node before all are rebuilt (default 1024), and how many times
 * they were rebuilt. */
void gp_placer_set_spare_classes(gp_placer *pl, int spare);
long gp_placer_rebuilds(const gp_placer *pl);

/* The default limit: 2^22 entries, at most 48 bytes each (12 bytes per slot, tables between a
 * quarter and half full): at most 192 MiB, about 112 MiB when full in placement_bench. Enough
 * for the scores of every live class for 1,000 shapes on 10,000 nodes (about a quarter of the
 * classes fit a given shape); the single map it replaced took 256 MiB. */
#define PLACER_SCORES_MAX ((size_t)1 << 22)

#endif
