/*
 * The Prefer request header (RFC 7240): a comma-separated list of preferences, each a token with
 * an optional value ("return=minimal", "respond-async", "wait=10") and parameters after ';'
 * that this reader ignores. Names compare case-insensitively; a value may be quoted.
 */
#include "net/http_server.h"

#include <string.h>
#include <strings.h>

/* [p, end) without the spaces and tabs around it. */
static void trim(const char **p, const char **end)
{
    while (*p < *end && (**p == ' ' || **p == '\t')) {
        (*p)++;
    }
    while (*end > *p && ((*end)[-1] == ' ' || (*end)[-1] == '\t')) {
        (*end)--;
    }
}

/* Whether [p, end) is s, case-insensitively. */
static bool equal(const char *p, const char *end, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(end - p) == n && strncasecmp(p, s, n) == 0;
}

bool gp_http_prefers(const char *prefer, const char *name, const char *value)
{
    for (const char *p = prefer; p && *p;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *pref_end = semi ? semi : end; /* the preference without its parameters */
        const char *eq = memchr(p, '=', (size_t)(pref_end - p));
        const char *n0 = p, *n1 = eq ? eq : pref_end;
        trim(&n0, &n1);
        if (equal(n0, n1, name)) {
            const char *v0 = eq ? eq + 1 : pref_end, *v1 = pref_end;
            trim(&v0, &v1);
            if (v1 - v0 >= 2 && *v0 == '"' && v1[-1] == '"') {
                v0++;
                v1--;
            }
            return value ? equal(v0, v1, value) : true;
        }
        p = comma ? comma + 1 : end;
    }
    return false;
}
