/*
 * The job spec's labels, annotations and placement fields (node_selector, tolerations, spread,
 * anti_affinity): their parsing with the field's path in every error, canonical form, equality
 * and cleanup. Maps (labels, annotations, node_selector) are kept sorted by key, so equal maps
 * compare equal whatever order they were written in, and encode in one order.
 */
#include "gpupool/constraint.h"
#include "gpupool/jobspec.h"
#include "net/jobspec_impl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABELS       64
#define MAX_ANNOTATIONS  64
#define MAX_SELECTOR     32
#define MAX_TOLERATIONS  32
#define MAX_SPREAD       8
#define MAX_SKEW         4096
#define ANNOTATION_BYTES 4096

static const char *const operator_names[] = {"Exists", "Equal"};

/* ---- maps of string to string ---- */

static void kv_free(gp_kv *kv, int n)
{
    for (int i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const gp_kv *)a)->key, ((const gp_kv *)b)->key);
}

/* A string value of at most max bytes without NUL; label: a label value. */
static int map_value(json_t *val, const char *sub, bool label, size_t max, gp_diag *d)
{
    if (!json_is_string(val)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a string", sub);
    }
    size_t n = json_string_length(val);
    const char *s = json_string_value(val);
    if (n > max || memchr(s, '\0', n)) {
        return gp_diag_set(d, GP_EINVAL, "%s: at most %zu bytes", sub, max);
    }
    if (label && !gp_label_value_ok(s)) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s: a label value: at most 63 of [A-Za-z0-9-_.], alphanumeric at "
                           "both ends, or empty",
                           sub);
    }
    return 0;
}

/* Parses object v into a sorted list; label: values are label values (else text up to max). */
static int map_parse(json_t *v, const char *path, int cap, bool label, size_t max, gp_kv **out,
                     int *nout, gp_diag *d)
{
    if (!json_is_object(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object of strings", path);
    }
    if ((int)json_object_size(v) > cap) {
        return gp_diag_set(d, GP_EINVAL, "%s: at most %d entries", path, cap);
    }
    gp_kv *kv = calloc(json_object_size(v) + 1, sizeof(gp_kv));
    if (!kv) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int n = 0, rc = 0;
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val)
    {
        char sub[384];
        snprintf(sub, sizeof(sub), "%s.%s", path, key);
        if (!gp_label_key_ok(key)) {
            rc = gp_diag_set(d, GP_EINVAL,
                             "%s: a key is [prefix/]name: a DNS subdomain prefix, a name of at "
                             "most 63 of [A-Za-z0-9-_.], alphanumeric at both ends",
                             sub);
            break;
        }
        if ((rc = map_value(val, sub, label, max, d)) < 0) {
            break;
        }
        kv[n].key = strdup(key);
        kv[n].value = strdup(json_string_value(val));
        n++;
        if (!kv[n - 1].key || !kv[n - 1].value) {
            rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc < 0) {
        kv_free(kv, n);
        return rc;
    }
    qsort(kv, (size_t)n, sizeof(gp_kv), kv_cmp);
    kv_free(*out, *nout); /* a field given twice (YAML merge) keeps the last */
    *out = kv;
    *nout = n;
    return 0;
}

static int f_labels(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return map_parse(v, path, MAX_LABELS, true, GP_LABEL_VALUE_MAX - 1, &s->labels, &s->nlabels, d);
}

static int f_annotations(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return map_parse(v, path, MAX_ANNOTATIONS, false, ANNOTATION_BYTES, &s->annotations,
                     &s->nannotations, d);
}

static int f_selector(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return map_parse(v, path, MAX_SELECTOR, true, GP_LABEL_VALUE_MAX - 1, &s->place.selector,
                     &s->place.nselector, d);
}

/* ---- tolerations ---- */

static void tolerations_free(gp_toleration *t, int n)
{
    for (int i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
    }
    free(t);
}

static int opt_string(json_t *o, const char *name, const char *path, json_t **out, gp_diag *d)
{
    json_t *v = json_object_get(o, name);
    *out = json_is_null(v) ? NULL : v;
    if (*out && !json_is_string(*out)) {
        return gp_diag_set(d, GP_EINVAL, "%s.%s: must be a string", path, name);
    }
    return 0;
}

static int toleration_check(json_t *o, const char *path, gp_diag *d)
{
    if (!json_is_object(o)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", path);
    }
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val)
    {
        if (strcmp(key, "key") != 0 && strcmp(key, "operator") != 0 && strcmp(key, "value") != 0 &&
            strcmp(key, "effect") != 0) {
            return gp_diag_set(d, GP_EINVAL, "%s.%s: unknown field", path, key);
        }
    }
    return 0;
}

/* One toleration; on success *t owns its strings. */
static int toleration(json_t *o, const char *path, gp_toleration *t, gp_diag *d)
{
    json_t *key, *op, *value, *effect;
    int rc = toleration_check(o, path, d);
    if (rc == 0) {
        rc = opt_string(o, "key", path, &key, d);
    }
    if (rc == 0) {
        rc = opt_string(o, "operator", path, &op, d);
    }
    if (rc == 0) {
        rc = opt_string(o, "value", path, &value, d);
    }
    if (rc == 0) {
        rc = opt_string(o, "effect", path, &effect, d);
    }
    if (rc < 0) {
        return rc;
    }
    const char *ks = key ? json_string_value(key) : NULL;
    if (ks && !gp_label_key_ok(ks)) {
        return gp_diag_set(d, GP_EINVAL, "%s.key: must be a label key ([prefix/]name)", path);
    }
    int opi = 1; /* Equal, Kubernetes' default */
    if (op && js_enum(op, "", operator_names, 2, &opi, d) < 0) {
        return gp_diag_set(d, GP_EINVAL, "%s.operator: must be Exists or Equal", path);
    }
    t->effect = GP_TAINT_ANY;
    if (effect && (t->effect = gp_taint_effect_parse(json_string_value(effect))) < 0) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s.effect: must be NoSchedule, PreferNoSchedule or NoExecute", path);
    }
    t->equal = opi == 1;
    if (t->equal && !ks) {
        return gp_diag_set(d, GP_EINVAL, "%s.key: required with operator Equal", path);
    }
    if (!t->equal && value && json_string_length(value) > 0) {
        return gp_diag_set(d, GP_EINVAL, "%s.value: must be empty with operator Exists", path);
    }
    const char *vs = value ? json_string_value(value) : "";
    if (t->equal && !gp_label_value_ok(vs)) {
        return gp_diag_set(d, GP_EINVAL, "%s.value: must be a label value", path);
    }
    t->key = ks ? strdup(ks) : NULL;
    t->value = t->equal ? strdup(vs) : NULL;
    if ((ks && !t->key) || (t->equal && !t->value)) {
        free(t->key);
        free(t->value);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    return 0;
}

static int f_tolerations(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_array(v) || json_array_size(v) > MAX_TOLERATIONS) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a list of at most %d tolerations", path,
                           MAX_TOLERATIONS);
    }
    gp_toleration *t = calloc(json_array_size(v) + 1, sizeof(gp_toleration));
    if (!t) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int n = 0;
    for (size_t i = 0; i < json_array_size(v); i++, n++) {
        char sub[256];
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        int rc = toleration(json_array_get(v, i), sub, &t[i], d);
        if (rc < 0) {
            tolerations_free(t, n);
            return rc;
        }
    }
    tolerations_free(s->place.tolerations, s->place.ntolerations);
    s->place.tolerations = t;
    s->place.ntolerations = n;
    return 0;
}

/* ---- spread, anti_affinity ---- */

static void spread_free(gp_spread *sp, int n)
{
    for (int i = 0; i < n; i++) {
        free(sp[i].topology_key);
    }
    free(sp);
}

static int spread_one(json_t *o, const char *path, const gp_spread *before, int n, gp_spread *out,
                      gp_diag *d)
{
    if (!json_is_object(o)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", path);
    }
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val)
    {
        if (strcmp(key, "topology_key") != 0 && strcmp(key, "max_skew") != 0) {
            return gp_diag_set(d, GP_EINVAL, "%s.%s: unknown field", path, key);
        }
    }
    json_t *tk = json_object_get(o, "topology_key");
    if (!json_is_string(tk) || !gp_label_key_ok(json_string_value(tk))) {
        return gp_diag_set(d, GP_EINVAL, "%s.topology_key: required, a label key", path);
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(before[i].topology_key, json_string_value(tk)) == 0) {
            return gp_diag_set(d, GP_EINVAL, "%s.topology_key: given twice", path);
        }
    }
    char sub[288];
    snprintf(sub, sizeof(sub), "%s.max_skew", path);
    json_t *ms = json_object_get(o, "max_skew");
    if (!ms) {
        return gp_diag_set(d, GP_EINVAL, "%s: required", sub);
    }
    int rc = js_int32(ms, sub, 1, MAX_SKEW, &out->max_skew, d);
    if (rc < 0) {
        return rc;
    }
    out->topology_key = strdup(json_string_value(tk));
    return out->topology_key ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

static int f_spread(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_array(v) || json_array_size(v) > MAX_SPREAD) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a list of at most %d constraints", path,
                           MAX_SPREAD);
    }
    gp_spread *sp = calloc(json_array_size(v) + 1, sizeof(gp_spread));
    if (!sp) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int n = 0;
    for (size_t i = 0; i < json_array_size(v); i++, n++) {
        char sub[256];
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        int rc = spread_one(json_array_get(v, i), sub, sp, n, &sp[i], d);
        if (rc < 0) {
            spread_free(sp, n);
            return rc;
        }
    }
    spread_free(s->place.spread, s->place.nspread);
    s->place.spread = sp;
    s->place.nspread = n;
    return 0;
}

static int f_anti_affinity(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_boolean(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be true or false", path);
    }
    s->place.anti_affinity = json_is_true(v);
    return 0;
}

const field js_place_fields[] = {
    {"labels", f_labels},          {"annotations", f_annotations},
    {"node_selector", f_selector}, {"tolerations", f_tolerations},
    {"spread", f_spread},          {"anti_affinity", f_anti_affinity},
};
const int js_place_nfields = (int)(sizeof(js_place_fields) / sizeof(js_place_fields[0]));

/* ---- canonical form ---- */

static json_t *map_json(enc *e, const gp_kv *kv, int n)
{
    json_t *o = json_object();
    for (int i = 0; i < n; i++) {
        js_put(e, o, kv[i].key, json_string(kv[i].value));
    }
    return o;
}

static json_t *toleration_json(enc *e, const gp_toleration *t)
{
    json_t *o = json_object();
    if (t->key) {
        js_put(e, o, "key", json_string(t->key));
    }
    js_put(e, o, "operator", json_string(operator_names[t->equal]));
    if (t->equal) {
        js_put(e, o, "value", json_string(t->value));
    }
    if (t->effect != GP_TAINT_ANY) {
        js_put(e, o, "effect", json_string(gp_taint_effect_name(t->effect)));
    }
    return o;
}

void js_place_encode(enc *e, json_t *o, const gp_jobspec *s)
{
    const gp_constraints *k = &s->place;
    if (s->nlabels) {
        js_put(e, o, "labels", map_json(e, s->labels, s->nlabels));
    }
    if (s->nannotations) {
        js_put(e, o, "annotations", map_json(e, s->annotations, s->nannotations));
    }
    if (k->nselector) {
        js_put(e, o, "node_selector", map_json(e, k->selector, k->nselector));
    }
    if (k->ntolerations) {
        json_t *a = json_array();
        for (int i = 0; i < k->ntolerations; i++) {
            if (!a || json_array_append_new(a, toleration_json(e, &k->tolerations[i])) < 0) {
                e->failed = true;
            }
        }
        js_put(e, o, "tolerations", a);
    }
    if (k->nspread) {
        json_t *a = json_array();
        for (int i = 0; i < k->nspread; i++) {
            json_t *x = json_pack("{s:s, s:i}", "topology_key", k->spread[i].topology_key,
                                  "max_skew", k->spread[i].max_skew);
            if (!a || json_array_append_new(a, x) < 0) {
                e->failed = true;
            }
        }
        js_put(e, o, "spread", a);
    }
    if (k->anti_affinity) {
        js_put(e, o, "anti_affinity", json_true());
    }
}

/* ---- equality and cleanup ---- */

static bool same_opt(const char *a, const char *b)
{
    return (a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0);
}

static bool same_map(const gp_kv *a, int na, const gp_kv *b, int nb)
{
    if (na != nb) {
        return false;
    }
    for (int i = 0; i < na; i++) {
        if (strcmp(a[i].key, b[i].key) != 0 || strcmp(a[i].value, b[i].value) != 0) {
            return false;
        }
    }
    return true;
}

static bool same_constraints(const gp_constraints *a, const gp_constraints *b)
{
    if (a->ntolerations != b->ntolerations || a->nspread != b->nspread ||
        a->anti_affinity != b->anti_affinity ||
        !same_map(a->selector, a->nselector, b->selector, b->nselector)) {
        return false;
    }
    for (int i = 0; i < a->ntolerations; i++) {
        const gp_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (x->equal != y->equal || x->effect != y->effect || !same_opt(x->key, y->key) ||
            !same_opt(x->value, y->value)) {
            return false;
        }
    }
    for (int i = 0; i < a->nspread; i++) {
        if (a->spread[i].max_skew != b->spread[i].max_skew ||
            strcmp(a->spread[i].topology_key, b->spread[i].topology_key) != 0) {
            return false;
        }
    }
    return true;
}

bool js_place_equal(const gp_jobspec *a, const gp_jobspec *b)
{
    return same_map(a->labels, a->nlabels, b->labels, b->nlabels) &&
           same_map(a->annotations, a->nannotations, b->annotations, b->nannotations) &&
           same_constraints(&a->place, &b->place);
}

void js_place_fini(gp_jobspec *s)
{
    kv_free(s->labels, s->nlabels);
    kv_free(s->annotations, s->nannotations);
    kv_free(s->place.selector, s->place.nselector);
    tolerations_free(s->place.tolerations, s->place.ntolerations);
    spread_free(s->place.spread, s->place.nspread);
    s->labels = s->annotations = NULL;
    s->nlabels = s->nannotations = 0;
    memset(&s->place, 0, sizeof(s->place));
}
