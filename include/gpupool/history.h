/*
 * Bounded, downsampled time series: the history of a job's GPU readings and of a tenant's
 * allocation, as the controller keeps it in memory.
 *
 * A series is three rings of buckets ("tiers"), each with a fixed step and a fixed number of
 * buckets: 10 s for the last hour, 2 min for the last day, 30 min for the last week (each ring
 * one bucket longer, so a window of exactly that length back from now is whole). A sample
 * goes into the bucket of its time in every tier; a bucket keeps the minimum, the maximum, the
 * sum and the number of its samples, so a coarser view keeps the extremes and an exact mean. So
 * a series has a fixed size (GP_HIST_SERIES_BYTES), whatever it is fed, and the oldest buckets
 * of each tier are overwritten as time moves on.
 *
 * Buckets are numbered by time: bucket k of a tier with step s holds [k*s, (k+1)*s) (ms since
 * the epoch), and lives in ring slot k mod n. A tier's head is the newest bucket it was given;
 * the buckets head-n+1 .. head are valid, anything older was overwritten. A sample older than a
 * tier's window is left out of that tier; one newer than the head moves the head and clears the
 * buckets skipped over.
 *
 * A store (gp_hist_store) holds the series of up to max_keys keys (job ids, tenant ids), each
 * with nseries series made on first use. When it is full, a new key evicts one: the finished
 * key that finished first, else the key added first.
 *
 * Pure: no clock (times are parameters), no I/O, no globals. Not thread-safe: the caller locks.
 */
#ifndef GPUPOOL_HISTORY_H
#define GPUPOOL_HISTORY_H

#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_HIST_NTIERS 3
/* The buckets of a series, every tier together (gp_hist_tiers). */
#define GP_HIST_BUCKETS (361 + 721 + 337)
/* The most points one query may ask for (a longer range needs a larger step). */
#define GP_HIST_MAX_POINTS 10000
/* The points a query gets when it names no step: the smallest step giving at most this many. */
#define GP_HIST_DEFAULT_POINTS 300

typedef struct gp_hist_tier {
    int64_t step_ms; /* bucket width */
    int nbuckets;    /* ring size: the tier covers step_ms * nbuckets */
    int offset;      /* its first bucket in gp_hist_series.b */
} gp_hist_tier;

/* The tiers, finest first. */
extern const gp_hist_tier gp_hist_tiers[GP_HIST_NTIERS];

typedef struct gp_hist_bucket {
    float min, max, sum;
    uint32_t n; /* samples; 0: empty */
} gp_hist_bucket;

typedef struct gp_hist_series {
    int64_t head[GP_HIST_NTIERS]; /* the newest bucket number of each tier; INT64_MIN: none */
    gp_hist_bucket b[GP_HIST_BUCKETS];
} gp_hist_series;

/* The memory of one series. */
#define GP_HIST_SERIES_BYTES sizeof(gp_hist_series)

/* An empty series. */
void gp_hist_series_init(gp_hist_series *s);
/* Adds the sample v taken at t_ms (>= 0) to every tier whose window still holds t_ms. A value
 * that is not finite is ignored. */
void gp_hist_add(gp_hist_series *s, int64_t t_ms, double v);

/* An accumulation of samples: the extremes, the sum and the count (0: no sample). */
typedef struct gp_hist_point {
    double min, max, sum;
    int64_t n;
} gp_hist_point;

/* An empty point (n 0). */
void gp_hist_point_clear(gp_hist_point *p);
/* The mean of p; 0 when empty. */
double gp_hist_point_mean(const gp_hist_point *p);

/* ---- queries ---- */

/* Which tier and points answer a range. */
typedef struct gp_hist_plan {
    int tier;         /* index in gp_hist_tiers */
    int64_t step_ms;  /* of the points: a whole multiple of the tier's step */
    int64_t first_ms; /* the first point's start: a multiple of step_ms */
    int npoints;      /* points first_ms + i*step_ms, i < npoints, the last holding to_ms */
} gp_hist_plan;

/*
 * Plans a query of [from_ms, to_ms] with points step_ms wide (0: the smallest of the tier's step
 * multiples giving at most GP_HIST_DEFAULT_POINTS points), against series whose newest data is
 * at ref_ms (the query's now, or when a job ended). The tier is the finest whose window (back
 * from ref_ms) reaches from_ms, else the coarsest; the step is rounded up to a multiple of its
 * step; the points are aligned to multiples of the step.
 * 0; GP_EINVAL when from_ms > to_ms or step_ms < 0; GP_ERANGE when the range would need more
 * than GP_HIST_MAX_POINTS points at the step asked for or at the step planned.
 */
int gp_hist_plan_make(int64_t ref_ms, int64_t from_ms, int64_t to_ms, int64_t step_ms,
                      gp_hist_plan *out);
/* Adds the buckets of s's planned tier to out[0 .. p->npoints), each to the point its start
 * falls in (out accumulates: call it for several series to aggregate them). s may be NULL. */
void gp_hist_fill(const gp_hist_series *s, const gp_hist_plan *p, gp_hist_point *out);
/* Adds to acc the buckets overlapping [from_ms, to_ms] of the finest tier of s that still holds
 * from_ms (else the coarsest). s may be NULL. */
void gp_hist_window(const gp_hist_series *s, int64_t from_ms, int64_t to_ms, gp_hist_point *acc);

/* ---- a store of series by key ---- */

typedef struct gp_hist_store gp_hist_store;

/* max_keys >= 1 keys of nseries (1..1024) series each. NULL when out of memory or a bound is
 * out of range. */
gp_hist_store *gp_hist_store_new(int max_keys, int nseries);
/* Accepts NULL. */
void gp_hist_store_free(gp_hist_store *h);
/* Series i of key for reading; NULL when the key or the series has none (no sample yet, or
 * evicted). Valid until the next change of the store. */
const gp_hist_series *gp_hist_store_get(const gp_hist_store *h, int64_t key, int i);
/* Series i of key for adding samples, made (with the key, evicting another when full) on first
 * use. NULL when out of memory (the store is unchanged) or i is out of range. */
gp_hist_series *gp_hist_store_open(gp_hist_store *h, int64_t key, int i);
/* Whether key has an entry. */
bool gp_hist_store_has(const gp_hist_store *h, int64_t key);
/* Marks key finished at end_ms: it is evicted before the keys not finished, the earliest end
 * first. No effect on an unknown key or one already finished. */
void gp_hist_store_finish(gp_hist_store *h, int64_t key, int64_t end_ms);
/* Whether key is marked finished; *end_ms (may be NULL) gets when. */
bool gp_hist_store_finished(const gp_hist_store *h, int64_t key, int64_t *end_ms);
/* Drops key and its series. */
void gp_hist_store_drop(gp_hist_store *h, int64_t key);
/* The keys held. */
int gp_hist_store_count(const gp_hist_store *h);
/* The keys, for a walk: the key of slot i (0 <= i < max_keys) into *key, false for a free slot. */
bool gp_hist_store_slot(const gp_hist_store *h, int i, int64_t *key);
int gp_hist_store_capacity(const gp_hist_store *h);

/* ---- text ---- */

/* A duration: a positive number with ms, s, m, h or d ("10s", "1.5m"), or whole seconds ("60").
 * 0 with *ms > 0, or GP_EINVAL. */
int gp_hist_parse_duration(const char *s, int64_t *ms);
/* A time: "now"; relative to now_ms: "-1h", "-90s", "now-15m"; unix seconds ("1714564800", with
 * an optional fraction); a date or an RFC 3339 time (gp_meter_parse_time). 0, or GP_EINVAL. */
int gp_hist_parse_time(const char *s, int64_t now_ms, int64_t *ms);

#endif
