/*
 * The strict member readers of the wire codecs (wire_read.h).
 */
#include "net/wire_read.h"

#include <math.h>
#include <string.h>

/* "path.key", or "key" at the top, for messages. */
#define AT(path) (path), (path)[0] ? "." : ""

int gp__wire_members(json_t *o, const char *path, const char *const *names, gp_diag *d)
{
    int rc = gp__wire_object(o, path, d);
    const char *key;
    json_t *v;
    json_object_foreach(rc == 0 ? o : NULL, key, v)
    {
        bool ok = false;
        for (int i = 0; names[i] && !ok; i++) {
            ok = strcmp(key, names[i]) == 0;
        }
        if (!ok) {
            return gp_diag_set(d, GP_EINVAL, "%s%s%.64s: unknown field", AT(path), key);
        }
    }
    return rc;
}

int gp__wire_object(json_t *o, const char *path, gp_diag *d)
{
    if (!json_is_object(o)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", path[0] ? path : "body");
    }
    return 0;
}

int gp__wire_int(json_t *o, const char *path, const char *key, int64_t lo, int64_t hi,
                 bool required, int64_t *out, gp_diag *d)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        return required ? gp_diag_set(d, GP_EINVAL, "%s%s%s: required", AT(path), key) : 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        return gp_diag_set(d, GP_EINVAL, "%s%s%s: must be an integer between %lld and %lld",
                           AT(path), key, (long long)lo, (long long)hi);
    }
    *out = json_integer_value(v);
    return 0;
}

int gp__wire_i(json_t *o, const char *path, const char *key, int lo, int hi, bool required,
               int *out, gp_diag *d)
{
    int64_t v = *out;
    int rc = gp__wire_int(o, path, key, lo, hi, required, &v, d);
    *out = (int)v;
    return rc;
}

int gp__wire_num(json_t *o, const char *path, const char *key, double lo, double hi, double *out,
                 gp_diag *d)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        return 0;
    }
    double x = json_number_value(v);
    if (!json_is_number(v) || !isfinite(x) || x < lo || x > hi) {
        return gp_diag_set(d, GP_EINVAL, "%s%s%s: must be a number between %g and %g", AT(path),
                           key, lo, hi);
    }
    *out = x;
    return 0;
}

/* The string member key of o, NULL when absent or null; GP_EINVAL when not a string without NUL
 * of at most max bytes. */
static int string_of(json_t *o, const char *path, const char *key, bool required, size_t max,
                     json_t **out, gp_diag *d)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        return required ? gp_diag_set(d, GP_EINVAL, "%s%s%s: required", AT(path), key) : 0;
    }
    if (!json_is_string(v) || json_string_length(v) > max ||
        strlen(json_string_value(v)) != json_string_length(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s%s%s: must be a string of at most %zu bytes", AT(path),
                           key, max);
    }
    *out = v;
    return 0;
}

int gp__wire_str(json_t *o, const char *path, const char *key, bool required, char *out, size_t cap,
                 gp_diag *d)
{
    json_t *v;
    int rc = string_of(o, path, key, required, cap - 1, &v, d);
    if (rc == 0 && v) {
        memcpy(out, json_string_value(v), json_string_length(v) + 1);
    }
    return rc;
}

int gp__wire_strdup(json_t *o, const char *path, const char *key, bool required, size_t max,
                    char **out, gp_diag *d)
{
    json_t *v;
    int rc = string_of(o, path, key, required, max, &v, d);
    if (rc == 0 && v && !(*out = strdup(json_string_value(v)))) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    return rc;
}

int gp__wire_bool(json_t *o, const char *path, const char *key, bool *out, gp_diag *d)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        return 0;
    }
    if (!json_is_boolean(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s%s%s: must be true or false", AT(path), key);
    }
    *out = json_is_true(v);
    return 0;
}

int gp__wire_list(json_t *o, const char *path, const char *key, size_t max, json_t **out,
                  gp_diag *d)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        return 0;
    }
    if (!json_is_array(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s%s%s: must be a list", AT(path), key);
    }
    if (json_array_size(v) > max) {
        return gp_diag_set(d, GP_EINVAL, "%s%s%s: at most %zu entries", AT(path), key, max);
    }
    *out = v;
    return 0;
}
