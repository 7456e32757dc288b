/*
 * Job arrays and dependencies (gpupool/array.h): the array syntax and the dependency verdict.
 * Pure: text in, structs out.
 */
#include "gpupool/array.h"

#include <stdio.h>
#include <string.h>

/* A decimal number of at most 7 digits at *p (advanced past it); -1 when there is none. */
static int number(const char **p, const char *end)
{
    int v = 0, digits = 0;
    while (*p < end && **p >= '0' && **p <= '9') {
        if (++digits > 7) {
            return -1;
        }
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    return digits ? v : -1;
}

/* One item N, N-M or N-M:S at *p. */
static int item(const char **p, const char *end, const char *path, gp_array_item *it, gp_diag *d)
{
    it->start = number(p, end);
    it->end = it->start;
    it->step = 1;
    if (it->start < 0) {
        return gp_diag_set(d, GP_EINVAL, "%s: expected an index (0 to %d) at '%.16s'", path,
                           GP_ARRAY_INDEX_MAX, *p);
    }
    if (*p < end && **p == '-') {
        (*p)++;
        it->end = number(p, end);
        if (it->end < it->start) {
            return gp_diag_set(d, GP_EINVAL, "%s: a range N-M needs M (0 to %d) at least N", path,
                               GP_ARRAY_INDEX_MAX);
        }
        if (*p < end && **p == ':') {
            (*p)++;
            it->step = number(p, end);
            if (it->step < 1) {
                return gp_diag_set(d, GP_EINVAL, "%s: a step :S must be 1 to %d", path,
                                   GP_ARRAY_INDEX_MAX);
            }
        }
    }
    return 0;
}

static int64_t item_count(const gp_array_item *it)
{
    return (it->end - it->start) / it->step + 1;
}

static int item_last(const gp_array_item *it)
{
    return it->start + (int)(item_count(it) - 1) * it->step;
}

/* %MAX at *p, the end of the text. */
static int max_running(const char **p, const char *end, const char *path, int *out, gp_diag *d)
{
    (*p)++;
    int v = number(p, end);
    if (v < 1 || v > GP_ARRAY_MAX_COUNT || *p != end) {
        return gp_diag_set(d, GP_EINVAL, "%s: %%MAX must be a number from 1 to %d, last", path,
                           GP_ARRAY_MAX_COUNT);
    }
    *out = v;
    return 0;
}

int gp_array_parse(const char *text, size_t len, const char *path, gp_job_array *out, gp_diag *d)
{
    gp_job_array a;
    memset(&a, 0, sizeof(a));
    const char *p = text, *end = text + len;
    int64_t count = 0;
    for (;;) {
        if (a.nitems == GP_ARRAY_MAX_ITEMS) {
            return gp_diag_set(d, GP_EINVAL, "%s: at most %d items", path, GP_ARRAY_MAX_ITEMS);
        }
        gp_array_item *it = &a.items[a.nitems];
        int rc = item(&p, end, path, it, d);
        if (rc < 0) {
            return rc;
        }
        if (a.nitems > 0 && it->start <= item_last(&a.items[a.nitems - 1])) {
            return gp_diag_set(d, GP_EINVAL,
                               "%s: items must go up (%d is not above the item before)", path,
                               it->start);
        }
        it->end = item_last(it); /* one form per set of indices: 0-10:3 is 0-9:3 */
        it->step = it->start == it->end ? 1 : it->step;
        a.nitems++;
        count += item_count(it);
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        break;
    }
    if (p < end && *p == '%') {
        int rc = max_running(&p, end, path, &a.max_running, d);
        if (rc < 0) {
            return rc;
        }
    }
    if (p != end) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s: unexpected '%.16s' (the form is START-END[:STEP][,...][%%MAX])",
                           path, p);
    }
    if (count > GP_ARRAY_MAX_COUNT) {
        return gp_diag_set(d, GP_EINVAL, "%s: at most %d indices", path, GP_ARRAY_MAX_COUNT);
    }
    *out = a;
    return 0;
}

int gp_array_format(const gp_job_array *a, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < a->nitems; i++) {
        const gp_array_item *it = &a->items[i];
        const char *sep = i ? "," : "";
        int w = it->start == it->end ? snprintf(buf + n, cap - n, "%s%d", sep, it->start)
                : it->step == 1
                    ? snprintf(buf + n, cap - n, "%s%d-%d", sep, it->start, it->end)
                    : snprintf(buf + n, cap - n, "%s%d-%d:%d", sep, it->start, it->end, it->step);
        if (w < 0 || (size_t)w >= cap - n) {
            return GP_ERANGE;
        }
        n += (size_t)w;
    }
    if (a->max_running > 0) {
        int w = snprintf(buf + n, cap - n, "%%%d", a->max_running);
        if (w < 0 || (size_t)w >= cap - n) {
            return GP_ERANGE;
        }
    }
    return 0;
}

int64_t gp_array_count(const gp_job_array *a)
{
    int64_t n = 0;
    for (int i = 0; i < a->nitems; i++) {
        n += item_count(&a->items[i]);
    }
    return n;
}

int gp_array_at(const gp_job_array *a, int64_t k)
{
    for (int i = 0; i < a->nitems; i++) {
        int64_t c = item_count(&a->items[i]);
        if (k < c) {
            return a->items[i].start + (int)k * a->items[i].step;
        }
        k -= c;
    }
    return -1;
}

bool gp_array_equal(const gp_job_array *a, const gp_job_array *b)
{
    if (a->nitems != b->nitems || a->max_running != b->max_running) {
        return false;
    }
    for (int i = 0; i < a->nitems; i++) {
        const gp_array_item *x = &a->items[i], *y = &b->items[i];
        if (x->start != y->start || x->end != y->end || x->step != y->step) {
            return false;
        }
    }
    return true;
}

gp_dep_verdict gp_deps_decide(const gp_dep_state *deps, int n, int *which)
{
    int waiting = -1;
    for (int i = 0; i < n; i++) {
        if (deps[i] != GP_DEP_ACTIVE && deps[i] != GP_DEP_SUCCEEDED) {
            *which = i;
            return GP_DEPS_FAIL;
        }
        if (deps[i] == GP_DEP_ACTIVE && waiting < 0) {
            waiting = i;
        }
    }
    *which = waiting;
    return waiting >= 0 ? GP_DEPS_WAIT : GP_DEPS_READY;
}
