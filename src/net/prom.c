/*
 * The Prometheus text exposition format (see prom.h).
 */
#include "net/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_prom_init(gp_prom *p)
{
    memset(p, 0, sizeof(*p));
}

void gp_prom_fini(gp_prom *p)
{
    free(p->buf);
    memset(p, 0, sizeof(*p));
}

const char *gp_prom_text(const gp_prom *p)
{
    return p->oom ? NULL : (p->buf ? p->buf : "");
}

static bool reserve(gp_prom *p, size_t more)
{
    if (p->oom) {
        return false;
    }
    if (p->len + more + 1 <= p->cap) {
        return true;
    }
    size_t cap = p->cap ? p->cap : 4096;
    while (cap < p->len + more + 1) {
        cap *= 2;
    }
    char *nb = realloc(p->buf, cap);
    if (!nb) {
        p->oom = true;
        return false;
    }
    p->buf = nb;
    p->cap = cap;
    return true;
}

static void put(gp_prom *p, const char *s, size_t n)
{
    if (reserve(p, n)) {
        memcpy(p->buf + p->len, s, n);
        p->len += n;
        p->buf[p->len] = 0;
    }
}

static void puts_(gp_prom *p, const char *s)
{
    put(p, s, strlen(s));
}

/* Writes s with backslash, double quote and newline escaped (label values, HELP text). */
static void put_escaped(gp_prom *p, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\') {
            puts_(p, "\\\\");
        } else if (*s == '\n') {
            puts_(p, "\\n");
        } else if (*s == '"' && quote) {
            puts_(p, "\\\"");
        } else {
            put(p, s, 1);
        }
    }
}

/* v as the format spells it, in num (40 bytes are enough). */
static void format_value(double v, char *num, size_t cap)
{
    if (isnan(v)) {
        snprintf(num, cap, "NaN");
    } else if (isinf(v)) {
        snprintf(num, cap, "%s", v > 0 ? "+Inf" : "-Inf");
    } else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(num, cap, "%.0f", v);
    } else {
        /* the shortest text that reads back as v: 0.001551, not 0.0015510000000000001 */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(num, cap, "%.*g", prec, v);
            if (strtod(num, NULL) == v) {
                break;
            }
        }
    }
}

static void put_value(gp_prom *p, double v)
{
    char num[40];
    format_value(v, num, sizeof(num));
    puts_(p, num);
}

void gp_prom_family(gp_prom *p, const char *name, const char *type, const char *help)
{
    puts_(p, "# HELP ");
    puts_(p, name);
    puts_(p, " ");
    put_escaped(p, help, false);
    puts_(p, "\n# TYPE ");
    puts_(p, name);
    puts_(p, " ");
    puts_(p, type);
    puts_(p, "\n");
}

/* name{labels[,extra_key="extra_value"]} value */
static void sample(gp_prom *p, const char *name, const char *suffix, const char *const *labels,
                   const char *extra_key, const char *extra_value, double value)
{
    puts_(p, name);
    puts_(p, suffix);
    bool open = false;
    for (int i = 0; labels && labels[i]; i += 2) {
        if (!labels[i + 1]) {
            continue;
        }
        puts_(p, open ? "," : "{");
        open = true;
        puts_(p, labels[i]);
        puts_(p, "=\"");
        put_escaped(p, labels[i + 1], true);
        puts_(p, "\"");
    }
    if (extra_key) {
        puts_(p, open ? "," : "{");
        open = true;
        puts_(p, extra_key);
        puts_(p, "=\"");
        puts_(p, extra_value);
        puts_(p, "\"");
    }
    puts_(p, open ? "} " : " ");
    put_value(p, value);
    puts_(p, "\n");
}

void gp_prom_sample(gp_prom *p, const char *name, const char *const *labels, double value)
{
    sample(p, name, "", labels, NULL, NULL, value);
}

void gp_prom_hist_init(gp_prom_hist *h, const double *bounds, int n)
{
    memset(h, 0, sizeof(*h));
    h->nbounds = n < 1 ? 1 : n > GP_PROM_HIST_MAX ? GP_PROM_HIST_MAX : n;
    for (int i = 0; i < h->nbounds; i++) {
        h->bounds[i] = bounds[i];
    }
    for (int i = 0; i <= GP_PROM_HIST_MAX; i++) {
        atomic_init(&h->counts[i], 0);
    }
    atomic_init(&h->sum_us, 0);
}

void gp_prom_hist_observe(gp_prom_hist *h, double value)
{
    if (!(value > 0)) {
        value = 0;
    }
    int b = 0;
    while (b < h->nbounds && value > h->bounds[b]) {
        b++;
    }
    atomic_fetch_add_explicit(&h->counts[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, (unsigned long long)llround(value * 1e6),
                              memory_order_relaxed);
}

void gp_prom_hist_write(gp_prom *p, const char *name, const char *const *labels,
                        const gp_prom_hist *h)
{
    unsigned long long cum = 0;
    char le[40];
    for (int b = 0; b <= h->nbounds; b++) {
        cum += atomic_load_explicit(&h->counts[b], memory_order_relaxed);
        format_value(b < h->nbounds ? h->bounds[b] : INFINITY, le, sizeof(le));
        sample(p, name, "_bucket", labels, "le", le, (double)cum);
    }
    double sum = (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6;
    sample(p, name, "_sum", labels, NULL, NULL, sum);
    sample(p, name, "_count", labels, NULL, NULL, (double)cum);
}
