/*
 * A node's taints: the list an operator sets (POST /v1/nodes/{node}/taints), kept in the node's
 * stored document as "taints": [{"key", "value", "effect"}] (left out when empty) and set on the
 * cluster model for the scheduler. A registration cannot set them; a node that registers again
 * keeps the ones it had. Key and value follow the label syntax (gpupool/constraint.h); one taint
 * per key and effect.
 */
#include "ctl/ctl.h"
#include "gpupool/constraint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int one(json_t *t, const char *path, gp_taint *out, gp_diag *d)
{
    if (!json_is_object(t)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be an object", path);
    }
    const char *k;
    json_t *v;
    json_object_foreach(t, k, v)
    {
        if (strcmp(k, "key") != 0 && strcmp(k, "value") != 0 && strcmp(k, "effect") != 0) {
            return gp_diag_set(d, GP_EINVAL, "%s.%s: unknown field", path, k);
        }
    }
    json_t *key = json_object_get(t, "key"), *value = json_object_get(t, "value");
    json_t *effect = json_object_get(t, "effect");
    memset(out, 0, sizeof(*out));
    if (!json_is_string(key) || !gp_label_key_ok(json_string_value(key))) {
        return gp_diag_set(d, GP_EINVAL, "%s.key: required, a label key ([prefix/]name)", path);
    }
    if (value && !json_is_null(value) &&
        (!json_is_string(value) || !gp_label_value_ok(json_string_value(value)))) {
        return gp_diag_set(
            d, GP_EINVAL, "%s.value: a label value (at most 63 of [A-Za-z0-9-_.], or empty)", path);
    }
    out->effect = json_is_string(effect) ? gp_taint_effect_parse(json_string_value(effect)) : -1;
    if (out->effect < 0) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s.effect: must be NoSchedule, PreferNoSchedule or NoExecute", path);
    }
    snprintf(out->key, sizeof(out->key), "%s", json_string_value(key));
    snprintf(out->value, sizeof(out->value), "%s",
             json_is_string(value) ? json_string_value(value) : "");
    return 0;
}

int ctl_taints_read(json_t *list, const char *path, gp_taint **out, int *n, gp_diag *d)
{
    *out = NULL;
    *n = 0;
    if (!list || json_is_null(list)) {
        return 0;
    }
    if (!json_is_array(list) || json_array_size(list) > CTL_MAX_TAINTS) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a list of at most %d taints", path,
                           CTL_MAX_TAINTS);
    }
    size_t count = json_array_size(list);
    gp_taint *t = calloc(count + 1, sizeof(gp_taint));
    if (!t) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < count; i++) {
        char sub[96];
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        int rc = one(json_array_get(list, i), sub, &t[i], d);
        for (size_t j = 0; rc == 0 && j < i; j++) {
            if (strcmp(t[j].key, t[i].key) == 0 && t[j].effect == t[i].effect) {
                rc = gp_diag_set(d, GP_EINVAL, "%s: %s:%s given twice", sub, t[i].key,
                                 gp_taint_effect_name(t[i].effect));
            }
        }
        if (rc < 0) {
            free(t);
            return rc;
        }
    }
    *out = t;
    *n = (int)count;
    return 0;
}

json_t *ctl_taints_doc(const gp_taint *t, int n)
{
    json_t *list = json_array();
    for (int i = 0; list && i < n; i++) {
        json_array_append_new(list,
                              json_pack("{s:s, s:s, s:s}", "key", t[i].key, "value", t[i].value,
                                        "effect", gp_taint_effect_name(t[i].effect)));
    }
    return list;
}

void ctl_taint_text(const gp_taint *t, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s:%s", t->key, t->value[0] ? "=" : "", t->value,
             gp_taint_effect_name(t->effect));
}
