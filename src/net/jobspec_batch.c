/*
 * The job spec's batch-pipeline fields (jobspec.h): array (gpupool/array.h), after_ok and
 * shm_size_mib; parsed from the top-level table of jobspec.c, checked together once every field
 * is read, encoded in the canonical form and compared.
 */
#include "net/jobspec_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int js_f_array(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_string(v)) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a string such as \"0-99%%10\"", path);
    }
    return gp_array_parse(json_string_value(v), json_string_length(v), path, &s->array, d);
}

int js_f_after_ok(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > GP_JOB_MAX_AFTER_OK) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a list of 1 to %d job names or ids", path,
                           GP_JOB_MAX_AFTER_OK);
    }
    size_t n = json_array_size(v);
    char name[GP_JOB_NAME_MAX];
    for (size_t i = 0; i < n; i++) {
        char sub[280];
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        int rc = js_ident(json_array_get(v, i), sub, name, sizeof(name), d);
        if (rc < 0) {
            return rc;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(json_string_value(json_array_get(v, k)), name) == 0) {
                return gp_diag_set(d, GP_EINVAL, "%s: %s is named twice", sub, name);
            }
        }
    }
    char **list = NULL;
    int rc = js_strings(v, path, 1, &list, d);
    if (rc == 0) {
        js_batch_fini_after_ok(s);
        s->after_ok = list;
    }
    return rc;
}

int js_f_shm_size(json_t *v, const char *path, gp_jobspec *s, gp_diag *d)
{
    return js_int(v, path, 1, GP_JOB_MAX_SHM_MIB, &s->shm_size_mib, d);
}

int js_batch_finish(const gp_jobspec *s, gp_diag *d)
{
    if (s->array.nitems > 0 && s->job_kind != GP_JOB_BATCH) {
        return gp_diag_set(d, GP_EINVAL, "array: only for a batch job (kind: %s)",
                           gp_job_kind_name(s->job_kind));
    }
    for (char **p = s->after_ok; p && *p; p++) {
        if (strcmp(*p, s->name) == 0) {
            return gp_diag_set(d, GP_EINVAL, "after_ok[%d]: a job cannot wait for itself",
                               (int)(p - s->after_ok));
        }
    }
    return 0;
}

void js_batch_encode(enc *e, json_t *o, const gp_jobspec *s)
{
    if (s->array.nitems > 0) {
        char buf[GP_ARRAY_TEXT_MAX];
        e->failed |= gp_array_format(&s->array, buf, sizeof(buf)) != 0;
        js_put(e, o, "array", json_string(buf));
    }
    if (s->after_ok && s->after_ok[0]) {
        js_put(e, o, "after_ok", js_string_list(e, s->after_ok));
    }
    if (s->shm_size_mib > 0) {
        js_put(e, o, "shm_size_mib", json_integer(s->shm_size_mib));
    }
}

bool js_batch_equal(const gp_jobspec *a, const gp_jobspec *b)
{
    return gp_array_equal(&a->array, &b->array) && js_same_list(a->after_ok, b->after_ok) &&
           a->shm_size_mib == b->shm_size_mib;
}

void js_batch_fini_after_ok(gp_jobspec *s)
{
    for (char **p = s->after_ok; p && *p; p++) {
        free(*p);
    }
    free(s->after_ok);
    s->after_ok = NULL;
}

void js_batch_fini(gp_jobspec *s)
{
    js_batch_fini_after_ok(s);
}
