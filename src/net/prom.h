/*
 * The Prometheus text exposition format (version 0.0.4), written by the agent's and the
 * controller's /metrics.
 *
 * A gp_prom is a growing text buffer. Each metric family starts with gp_prom_family (its # HELP
 * and # TYPE lines), followed by its samples; a family must be written once, with all its samples
 * together (promtool refuses a family split in two). Label values are escaped (backslash, double
 * quote, newline); names are the caller's constants and are not checked. Values print as integers
 * when they are whole and below 2^53, else with the fewest significant digits (15 to 17) that
 * read back as the same double; NaN and ±Inf as Prometheus spells them.
 * Running out of memory makes the buffer unusable: gp_prom_text then answers NULL.
 *
 * gp_prom_hist is a fixed-bucket histogram updated with atomics, so request handlers observe
 * without a lock while a scrape reads it (a scrape may see a sum a few observations ahead of its
 * count; Prometheus tolerates that).
 */
#ifndef GP_NET_PROM_H
#define GP_NET_PROM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The content type of the format, for the response's Content-Type. */
#define GP_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef struct gp_prom {
    char *buf;
    size_t len, cap;
    bool oom;
} gp_prom;

void gp_prom_init(gp_prom *p);
void gp_prom_fini(gp_prom *p);
/* The text written so far (owned by p; NUL-terminated), or NULL after running out of memory. */
const char *gp_prom_text(const gp_prom *p);

/* # HELP name help / # TYPE name type; type is "gauge", "counter" or "histogram". */
void gp_prom_family(gp_prom *p, const char *name, const char *type, const char *help);
/* One sample: name{k1="v1",...} value. labels: pairs of key and value ending with NULL (NULL
 * itself: no labels); a pair whose value is NULL is left out. */
void gp_prom_sample(gp_prom *p, const char *name, const char *const *labels, double value);

/* Upper bounds of a histogram's buckets, ascending; +Inf is implied. */
#define GP_PROM_HIST_MAX 16
typedef struct gp_prom_hist {
    int nbounds;
    double bounds[GP_PROM_HIST_MAX];
    atomic_ullong counts[GP_PROM_HIST_MAX + 1]; /* per bucket (not cumulative); last: +Inf */
    atomic_ullong sum_us;                       /* the sum, in millionths of the unit */
} gp_prom_hist;

/* bounds: n (1..GP_PROM_HIST_MAX) ascending upper bounds. */
void gp_prom_hist_init(gp_prom_hist *h, const double *bounds, int n);
/* Counts one observation (negative counts as 0). Thread-safe. */
void gp_prom_hist_observe(gp_prom_hist *h, double value);
/* Writes name_bucket{labels,le=...} (cumulative), name_sum and name_count; the family line is
 * the caller's (gp_prom_family with "histogram"). */
void gp_prom_hist_write(gp_prom *p, const char *name, const char *const *labels,
                        const gp_prom_hist *h);

/* Reading a scrape (prom_read.c): the sum of the samples of metric `name` (any labels) in the
 * exposition text[0..len), into *out. A service exposes the metric its autoscaler follows this
 * way (a gauge: in-flight requests, requests per second it computes itself). Comments, other
 * metrics and lines that do not parse are skipped; a sample whose value is not a finite number
 * counts as absent. 1 with *out set when at least one sample was found, else 0. */
int gp_prom_read_sum(const char *text, size_t len, const char *name, double *out);

#endif
