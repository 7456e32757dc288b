/*
 * --since, times of lines and timestamps for gpupool logs (see logtext.h).
 */
#include "cli/logtext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Days since 1970-01-01 of a civil date (proleptic Gregorian; H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

/* n decimal digits at s into *v. */
static int digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

static int parse_rfc3339(const char *s, int64_t *ms)
{
    int y, mo, d, h, mi, sec;
    if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
        digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
        s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &sec)) {
        return -1;
    }
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60) {
        return -1;
    }
    const char *p = s + 19;
    int64_t frac = 0;
    if (*p == '.') {
        int n = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, n++) {
            if (n < 3) {
                frac = frac * 10 + (*p - '0');
            }
        }
        if (n == 0) {
            return -1;
        }
        for (; n < 3; n++) {
            frac *= 10;
        }
    }
    int64_t offset_s = 0;
    if ((*p == 'Z' || *p == 'z') && p[1] == '\0') {
        offset_s = 0;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int oh, om;
        if (digits(p + 1, 2, &oh) || digits(p + 4, 2, &om) || oh > 23 || om > 59) {
            return -1;
        }
        offset_s = (*p == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    } else {
        return -1;
    }
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset_s;
    *ms = secs * 1000 + frac;
    return 0;
}

int gp_logs_parse_since(const char *s, int64_t now_ms, int64_t *since_ms)
{
    static const char units[] = "smhd";
    static const int64_t mult[] = {1, 60, 3600, 86400};
    if (!s || !*s) {
        return -1;
    }
    if (parse_rfc3339(s, since_ms) == 0) {
        return 0;
    }
    int64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > INT64_C(1) << 40) {
            return -1;
        }
        v = v * 10 + (*p - '0');
    }
    const char *u = *p ? strchr(units, *p) : units;
    if (p == s || v <= 0 || !u || (*p && p[1]) ||
        v > INT64_C(100) * 365 * 86400 / mult[u - units]) {
        return -1; /* also more than a hundred years */
    }
    *since_ms = now_ms - v * mult[u - units] * 1000;
    return 0;
}

void gp_logs_format_time(int64_t ms, char *buf, size_t cap)
{
    int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
    int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
    int64_t rem = secs - days * 86400;
    int y, m, d;
    civil_from_days(days, &y, &m, &d);
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d, (int)(rem / 3600),
             (int)(rem / 60 % 60), (int)(rem % 60), (int)(ms - secs * 1000));
}

long gp_logs_times_add(gp_logs_times *t, const char *text, size_t len)
{
    size_t used = 0;
    for (;;) {
        const char *nl = memchr(text + used, '\n', len - used);
        if (!nl) {
            return (long)used;
        }
        long long off, ms;
        char line[64];
        size_t n = (size_t)(nl - (text + used));
        snprintf(line, sizeof(line), "%.*s", (int)(n < 63 ? n : 63), text + used);
        used += n + 1;
        char tail;
        if (n >= 63 || sscanf(line, "%lld %lld%c", &off, &ms, &tail) != 2 || off < 0) {
            continue;
        }
        if (t->n == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 64;
            int64_t *o = realloc(t->off, cap * sizeof(*o));
            if (!o) {
                return -1;
            }
            t->off = o;
            int64_t *m = realloc(t->ms, cap * sizeof(*m));
            if (!m) {
                return -1;
            }
            t->ms = m;
            t->cap = cap;
        }
        t->off[t->n] = off;
        t->ms[t->n++] = ms;
    }
}

int64_t gp_logs_times_at(const gp_logs_times *t, int64_t offset)
{
    size_t lo = 0, hi = t->n; /* the first record after offset is at hi */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->off[mid] <= offset) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo ? t->ms[lo - 1] : 0;
}

void gp_logs_times_fini(gp_logs_times *t)
{
    free(t->off);
    free(t->ms);
    *t = (gp_logs_times){0};
}
