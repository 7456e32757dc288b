/*
 * The GPU memory watch (rules in memwatch.h).
 *
 * State: one track per replica seen at the last observation, holding since when each of its
 * GPUs (by NVML index) has been above the limit (-1: not above) and whether it was answered
 * already. Tracks are an unsorted array: a node runs tens of replicas, so a linear search is
 * cheaper than anything cleverer. A track whose replica is missing from an observation is
 * removed, so the array never holds more than the replicas of the last observation.
 */
#include "agent/memwatch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct track {
    gp_replica_key key;
    int64_t since[GP_MEMWATCH_MAX_GPUS]; /* first observation above the limit; -1: not above */
    bool stopped;                        /* answered already */
    uint64_t seen;                       /* the observation that last listed it */
} track;

struct gp_memwatch {
    int64_t grace_ms;
    uint64_t generation; /* observations so far */
    track *tracks;
    int n, cap;
};

int gp_memwatch_new(int64_t grace_ms, gp_memwatch **out)
{
    *out = NULL;
    if (grace_ms < 0) {
        return GP_EINVAL;
    }
    gp_memwatch *w = calloc(1, sizeof(*w));
    if (!w) {
        return GP_ENOMEM;
    }
    w->grace_ms = grace_ms;
    *out = w;
    return 0;
}

void gp_memwatch_free(gp_memwatch *w)
{
    if (w) {
        free(w->tracks);
        free(w);
    }
}

/* The track of key; a new one (nothing above, not answered) when there is none. The caller has
 * made room for it. */
static track *track_of(gp_memwatch *w, const gp_replica_key *key)
{
    for (int i = 0; i < w->n; i++) {
        if (gp_replica_key_equal(&w->tracks[i].key, key)) {
            return &w->tracks[i];
        }
    }
    track *t = &w->tracks[w->n++];
    memset(t, 0, sizeof(*t));
    t->key = *key;
    for (int g = 0; g < GP_MEMWATCH_MAX_GPUS; g++) {
        t->since[g] = -1;
    }
    return t;
}

static int reserve(gp_memwatch *w, int more)
{
    if (more <= w->cap - w->n) {
        return 0;
    }
    int cap = w->n + more;
    track *p = realloc(w->tracks, sizeof(*p) * (size_t)cap);
    if (!p) {
        return GP_ENOMEM;
    }
    w->tracks = p;
    w->cap = cap;
    return 0;
}

/* Updates t from one listing of its replica at now; returns the GPU (its position in r->gpus)
 * above its limit for the whole grace period, or -1. */
static int update(const gp_memwatch *w, track *t, const gp_memwatch_replica *r, int64_t now)
{
    int64_t since[GP_MEMWATCH_MAX_GPUS];
    for (int g = 0; g < GP_MEMWATCH_MAX_GPUS; g++) {
        since[g] = -1; /* a GPU not listed, without a limit or a reading is not above */
    }
    int over = -1;
    for (int i = 0; i < r->ngpus && i < GP_MEMWATCH_MAX_GPUS; i++) {
        const gp_memwatch_gpu *g = &r->gpus[i];
        if (g->index < 0 || g->index >= GP_MEMWATCH_MAX_GPUS || g->limit_mib <= 0 ||
            g->used_mib <= g->limit_mib) {
            continue;
        }
        since[g->index] = t->since[g->index] >= 0 ? t->since[g->index] : now;
        if (over < 0 && now - since[g->index] >= w->grace_ms) {
            over = i;
        }
    }
    memcpy(t->since, since, sizeof(since));
    return over;
}

static void describe(const gp_memwatch_gpu *g, int64_t for_ms, char *buf, size_t cap)
{
    char uuid[112] = "";
    if (g->uuid && g->uuid[0]) {
        snprintf(uuid, sizeof(uuid), " (%.96s)", g->uuid);
    }
    snprintf(buf, cap,
             "GPU memory %lld MiB on GPU %d%s above the replica's limit of %lld MiB for "
             "%lld s",
             (long long)g->used_mib, g->index, uuid, (long long)g->limit_mib,
             (long long)(for_ms / 1000));
}

int gp_memwatch_observe(gp_memwatch *w, int64_t now_ms, const gp_memwatch_replica *reps, int n,
                        gp_memwatch_stop *out, int cap)
{
    if (n > 0 && reserve(w, n) < 0) {
        return GP_ENOMEM;
    }
    w->generation++;
    int nout = 0;
    for (int i = 0; i < n; i++) {
        track *t = track_of(w, &reps[i].key);
        t->seen = w->generation;
        int over = update(w, t, &reps[i], now_ms);
        if (over >= 0 && !t->stopped && nout < cap) {
            const gp_memwatch_gpu *g = &reps[i].gpus[over];
            out[nout].key = t->key;
            describe(g, now_ms - t->since[g->index], out[nout].reason, sizeof(out[nout].reason));
            nout++;
            t->stopped = true;
        }
    }
    /* Forget the replicas this observation did not list. */
    int keep = 0;
    for (int i = 0; i < w->n; i++) {
        if (w->tracks[i].seen == w->generation) {
            w->tracks[keep++] = w->tracks[i];
        }
    }
    w->n = keep;
    return nout;
}
