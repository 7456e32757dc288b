/*
 * Strict JSON document readers (see doc.h).
 */
#include "ctl/doc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void doc_path(char *buf, size_t cap, const char *path, const char *key)
{
    if (path && path[0]) {
        snprintf(buf, cap, "%s.%s", path, key);
    } else {
        snprintf(buf, cap, "%s", key);
    }
}

int doc_check_fields(json_t *obj, const char *path, const char *const *names, gp_diag *d)
{
    if (!json_is_object(obj)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", path && path[0] ? path : "body");
    }
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        bool known = false;
        for (int i = 0; names[i] && !known; i++) {
            known = strcmp(names[i], key) == 0;
        }
        if (!known) {
            char p[256];
            doc_path(p, sizeof(p), path, key);
            return gp_diag_set(d, GP_EINVAL, "%s: unknown field", p);
        }
    }
    return 0;
}

/* The member, or NULL when absent or null. */
static json_t *member(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

int doc_int(json_t *obj, const char *path, const char *key, int64_t lo, int64_t hi, int64_t *out,
            gp_diag *d)
{
    json_t *v = member(obj, key);
    if (!v) {
        return 0;
    }
    char p[256];
    doc_path(p, sizeof(p), path, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an integer between %lld and %lld", p,
                           (long long)lo, (long long)hi);
    }
    *out = json_integer_value(v);
    return 0;
}

int doc_num(json_t *obj, const char *path, const char *key, double lo, double hi, double *out,
            gp_diag *d)
{
    json_t *v = member(obj, key);
    if (!v) {
        return 0;
    }
    char p[256];
    doc_path(p, sizeof(p), path, key);
    double x = json_number_value(v);
    if (!json_is_number(v) || !isfinite(x) || x < lo || x > hi) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a number between %g and %g", p, lo, hi);
    }
    *out = x;
    return 0;
}

int doc_bool(json_t *obj, const char *path, const char *key, bool *out, gp_diag *d)
{
    json_t *v = member(obj, key);
    if (!v) {
        return 0;
    }
    if (!json_is_boolean(v)) {
        char p[256];
        doc_path(p, sizeof(p), path, key);
        return gp_diag_set(d, GP_EINVAL, "%s: must be true or false", p);
    }
    *out = json_is_true(v);
    return 0;
}

int doc_str(json_t *obj, const char *path, const char *key, char *out, size_t cap, gp_diag *d)
{
    json_t *v = member(obj, key);
    if (!v) {
        return 0;
    }
    char p[256];
    doc_path(p, sizeof(p), path, key);
    if (!json_is_string(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a string", p);
    }
    if (json_string_length(v) >= cap || strlen(json_string_value(v)) != json_string_length(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a string of at most %zu bytes", p, cap - 1);
    }
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

bool doc_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 63) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && i > 0 && i + 1 < n)) {
            return false;
        }
    }
    return true;
}

int doc_name(json_t *obj, const char *path, const char *key, char *out, size_t cap, gp_diag *d)
{
    char tmp[256] = "";
    int rc = doc_str(obj, path, key, tmp, sizeof(tmp), d);
    if (rc < 0 || !member(obj, key)) {
        return rc;
    }
    if (!doc_name_valid(tmp) || strlen(tmp) >= cap) {
        char p[256];
        doc_path(p, sizeof(p), path, key);
        return gp_diag_set(d, GP_EINVAL,
                           "%s: must be 1 to 63 characters a-z, 0-9 and '-', starting and "
                           "ending with a letter or digit",
                           p);
    }
    snprintf(out, cap, "%s", tmp);
    return 0;
}

int doc_gpus(json_t *obj, const char *path, const char *key, int64_t *milli, gp_diag *d)
{
    double g = -2;
    int rc = doc_num(obj, path, key, 0, 1e6, &g, d);
    if (rc < 0 || g == -2) {
        return rc;
    }
    double m = g * 1000.0;
    if (fabs(m - round(m)) > 1e-6) {
        char p[256];
        doc_path(p, sizeof(p), path, key);
        return gp_diag_set(d, GP_EINVAL, "%s: at most 3 decimals (a thousandth of a GPU)", p);
    }
    *milli = (int64_t)llround(m);
    return 0;
}

json_t *doc_gpus_value(int64_t milli)
{
    if (milli % 1000 == 0) {
        return json_integer(milli / 1000);
    }
    return json_real((double)milli / 1000.0);
}
