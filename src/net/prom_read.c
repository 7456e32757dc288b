/*
 * The one reader of the Prometheus text format (prom.h): the samples of one metric, summed.
 * A line is `name[{labels}] value [timestamp]`; the labels are skipped as a quoted-string-aware
 * scan so a `}` inside a label value does not end them.
 */
#include "net/prom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Past the label set starting at p ('{'), or NULL when it does not close before end. */
static const char *skip_labels(const char *p, const char *end)
{
    bool quoted = false;
    for (p++; p < end; p++) {
        if (quoted && *p == '\\' && p + 1 < end) {
            p++;
        } else if (*p == '"') {
            quoted = !quoted;
        } else if (!quoted && *p == '}') {
            return p + 1;
        }
    }
    return NULL;
}

/* The value of one line when it is a sample of name: 1 with *v set, else 0. */
static int line_value(const char *p, const char *end, const char *name, size_t nlen, double *v)
{
    if ((size_t)(end - p) <= nlen || memcmp(p, name, nlen) != 0) {
        return 0;
    }
    p += nlen;
    if (*p == '{') {
        p = skip_labels(p, end);
    } else if (*p != ' ' && *p != '\t') {
        return 0; /* a longer name: name_total, name_bucket */
    }
    while (p && p < end && (*p == ' ' || *p == '\t')) {
        p++;
    }
    if (!p || p >= end) {
        return 0;
    }
    char num[64];
    size_t n = 0;
    while (p < end && *p != ' ' && *p != '\t' && n < sizeof(num) - 1) {
        num[n++] = *p++;
    }
    num[n] = '\0';
    char *stop = NULL;
    double x = strtod(num, &stop);
    if (n == 0 || !stop || *stop != '\0' || !isfinite(x)) {
        return 0;
    }
    *v = x;
    return 1;
}

int gp_prom_read_sum(const char *text, size_t len, const char *name, double *out)
{
    size_t nlen = strlen(name);
    const char *p = text, *end = text + len;
    double sum = 0;
    int found = 0;
    while (p < end && nlen > 0) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) {
            eol = end;
        }
        double v;
        if (*p != '#' && line_value(p, eol, name, nlen, &v)) {
            sum += v;
            found = 1;
        }
        p = eol + 1;
    }
    if (!found || !isfinite(sum)) {
        return 0; /* samples that add up past a double's range say nothing */
    }
    *out = sum;
    return 1;
}
