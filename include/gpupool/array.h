/*
 * Job arrays and dependencies: the pure rules (no I/O), shared by the job spec's parser, the
 * controller and the CLI.
 *
 * An array spec, like Slurm's --array: a list of items, each N, N-M or N-M:S (every S-th index
 * from N up to M), separated by commas, then optionally %MAX, the most children that may be
 * active (not ended) at once: "0-99%10", "1,3,5-7", "0-20:5%2". Indices are 0..GP_ARRAY_INDEX_MAX
 * (a child is named NAME-INDEX); items must go up: each starts above the last index of the one
 * before (so no index repeats). At most GP_ARRAY_MAX_ITEMS items and GP_ARRAY_MAX_COUNT indices
 * (an operator's limit, jobs.max_array_size, is usually lower).
 *
 * The canonical text (gp_array_format) writes each item in its shortest form ("5" for 5-5, "0-9"
 * for 0-9:1) and parses back to an equal array.
 */
#ifndef GPUPOOL_ARRAY_H
#define GPUPOOL_ARRAY_H

#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_ARRAY_INDEX_MAX 9999999
#define GP_ARRAY_MAX_ITEMS 64
#define GP_ARRAY_MAX_COUNT 1000000
/* The longest canonical text (64 items of "9999999-9999999:9999999," and "%1000000"). */
#define GP_ARRAY_TEXT_MAX 1600

typedef struct gp_array_item {
    int start, end, step; /* start <= end, step >= 1 */
} gp_array_item;

/* nitems 0: not an array. */
typedef struct gp_job_array {
    int nitems;
    gp_array_item items[GP_ARRAY_MAX_ITEMS];
    int max_running; /* 0: no limit */
} gp_job_array;

/* Parses text (len bytes; NUL bytes refused) into *out (written only on success). 0, or
 * GP_EINVAL with path named in d ("array: ..."). */
int gp_array_parse(const char *text, size_t len, const char *path, gp_job_array *out, gp_diag *d);
/* The canonical text of a (nitems > 0) into buf; 0, or GP_ERANGE when cap is too small. */
int gp_array_format(const gp_job_array *a, char *buf, size_t cap);
/* How many indices a has. */
int64_t gp_array_count(const gp_job_array *a);
/* The k-th index of a (0 <= k < gp_array_count(a)), in order. */
int gp_array_at(const gp_job_array *a, int64_t k);
bool gp_array_equal(const gp_job_array *a, const gp_job_array *b);

/* ---- dependencies (after_ok) ---- */

/* What a dependency is now, as the decision needs it. */
typedef enum gp_dep_state {
    GP_DEP_ACTIVE = 0,    /* not ended yet */
    GP_DEP_SUCCEEDED = 1, /* ended well */
    GP_DEP_FAILED = 2,    /* ended Failed */
    GP_DEP_CANCELLED = 3, /* ended Cancelled */
    GP_DEP_GONE = 4,      /* no longer known (deleted): can never succeed */
} gp_dep_state;

typedef enum gp_dep_verdict {
    GP_DEPS_READY = 0, /* every dependency succeeded (or there are none) */
    GP_DEPS_WAIT = 1,  /* *which: the first one still active */
    GP_DEPS_FAIL = 2,  /* *which: the first one that ended other than Succeeded */
} gp_dep_verdict;

/* The verdict over deps[0..n): FAIL as soon as one ended badly (even while others are still
 * active), else WAIT while one is active, else READY. *which is the index it is about (-1 for
 * READY). */
gp_dep_verdict gp_deps_decide(const gp_dep_state *deps, int n, int *which);

#endif
