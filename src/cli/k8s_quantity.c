/*
 * Kubernetes quantities: a signed decimal (or exponent) number and a suffix, binary (Ki Mi Gi
 * Ti Pi Ei), decimal (n u m k M G T P E) or none. Values are taken as long double and rounded
 * up as the kubelet does; anything past 2^62 is refused.
 */
#include "cli/k8s.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QTY_MAX 4.0e18L

typedef struct suffix {
    const char *s;
    long double mult;
} suffix;

static const suffix suffixes[] = {
    {"Ki", 1024.0L},
    {"Mi", 1048576.0L},
    {"Gi", 1073741824.0L},
    {"Ti", 1099511627776.0L},
    {"Pi", 1125899906842624.0L},
    {"Ei", 1152921504606846976.0L},
    {"n", 1e-9L},
    {"u", 1e-6L},
    {"m", 1e-3L},
    {"", 1.0L},
    {"k", 1e3L},
    {"M", 1e6L},
    {"G", 1e9L},
    {"T", 1e12L},
    {"P", 1e15L},
    {"E", 1e18L},
    {NULL, 0},
};

/* The number part: [+]digits[.digits][e[+-]digits] (or .digits). Its length, or 0. */
static size_t number_len(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+') {
        i++;
    }
    while (isdigit((unsigned char)s[i])) {
        i++, digits++;
    }
    if (s[i] == '.') {
        i++;
        while (isdigit((unsigned char)s[i])) {
            i++, digits++;
        }
    }
    if (digits == 0) {
        return 0;
    }
    if ((s[i] == 'e' || s[i] == 'E') &&
        (isdigit((unsigned char)s[i + 1]) ||
         ((s[i + 1] == '+' || s[i + 1] == '-') && isdigit((unsigned char)s[i + 2])))) {
        i += 2;
        while (isdigit((unsigned char)s[i])) {
            i++;
        }
    }
    return i;
}

/* The quantity v as a value and whether it had a suffix. 0, or -1. */
static int quantity(const json_t *v, long double *out, int *suffixed)
{
    *suffixed = 0;
    if (json_is_integer(v) || json_is_real(v)) {
        long double x = (long double)json_number_value(v);
        if (!(x >= 0 && x <= QTY_MAX)) {
            return -1;
        }
        *out = x;
        return 0;
    }
    const char *s = json_string_value(v);
    if (!s) {
        return -1;
    }
    size_t n = number_len(s);
    if (n == 0 || n > 64) {
        return -1;
    }
    char num[72];
    memcpy(num, s, n);
    num[n] = '\0';
    for (const suffix *x = suffixes; x->s; x++) {
        if (strcmp(s + n, x->s) == 0) {
            long double val = strtold(num, NULL) * x->mult;
            if (!(val >= 0 && val <= QTY_MAX)) {
                return -1;
            }
            *out = val;
            *suffixed = x->s[0] != '\0';
            return 0;
        }
    }
    return -1;
}

/* x rounded up, with a margin for decimal fractions that binary cannot hold (0.1 * 1000). */
static long long round_up(long double x)
{
    long double r = roundl(x);
    if (fabsl(x - r) < 1e-9L * (r > 1 ? r : 1)) {
        return (long long)r;
    }
    return (long long)ceill(x);
}

int gp_k8s_cpu_milli(const json_t *v, long long *milli)
{
    long double x;
    int suffixed;
    if (quantity(v, &x, &suffixed) < 0) {
        return -1;
    }
    *milli = round_up(x * 1000.0L);
    return 0;
}

int gp_k8s_mib(const json_t *v, long long *mib)
{
    long double x;
    int suffixed;
    if (quantity(v, &x, &suffixed) < 0) {
        return -1;
    }
    *mib = round_up(x / 1048576.0L);
    return 0;
}

int gp_k8s_gpu_mib(const json_t *v, long long *mib)
{
    long double x;
    int suffixed;
    if (quantity(v, &x, &suffixed) < 0) {
        return -1;
    }
    *mib = suffixed ? round_up(x / 1048576.0L) : round_up(x);
    return 0;
}

int gp_k8s_count_value(const json_t *v, long long *n)
{
    long double x;
    int suffixed;
    if (quantity(v, &x, &suffixed) < 0 || x != floorl(x)) {
        return -1;
    }
    *n = (long long)x;
    return 0;
}
