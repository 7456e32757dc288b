/*
 * Tenants, queues and priority classes: their documents (what the API shows and the store
 * keeps) and the strict readers that turn a document back into the scheduler's limits.
 *
 *   tenant:  {"quota": {"gpus": 16, "gpu_memory_mib": 655360, "models": {"A100-80GB": 8}},
 *             "priority_classes": ["normal", "high"], "queues": ["default", "batch"],
 *             "allow_privileged": false}
 *   queue:   {"weight": 2, "guarantee": {"gpus": 8}, "capability": {"gpus": 32, "cpu_milli": ..,
 *             "memory_mib": .., "gpu_memory_mib": ..}, "reclaimable": true}
 *   class:   {"value": 1000, "preemption_policy": "PreemptLowerPriority", "description": ".."}
 *
 * Absent limits are unlimited (quota, capability). A queue without a guarantee takes part in
 * no borrowing: its jobs run wherever there is room and are never reclaimed. A queue with one
 * (even {"gpus": 0}) is owed that much; what it holds beyond it is borrowed, which only
 * preemptible jobs may do, and which queues below their guarantee reclaim.
 *
 * A tenant's grants bound what its users submit with (api_jobs.c): a list names the priority
 * classes (queues) allowed; absent or null, only the configured default one. The readers check
 * their shape only; that each name exists is checked against the state when a tenant is
 * written (ctl_tenant_grants_check), and a class or queue a tenant lists cannot be deleted.
 * allow_privileged (default false) lets its users submit privileged jobs (api_jobs.c).
 */
#include "ctl/ctl.h"
#include "ctl/doc.h"
#include "gpupool/modelname.h"

#include <string.h>

static const char *const res_fields[] = {"gpus", "gpu_memory_mib", "cpu_milli", "memory_mib", NULL};

/* Reads a resource vector at obj[key]; absent fields take dflt. */
static int read_res(json_t *obj, const char *path, const char *key, int64_t dflt, gp_res *out,
                    gp_diag *d)
{
    gp_res r = {dflt, dflt, dflt, dflt};
    json_t *v = json_object_get(obj, key);
    if (v && !json_is_null(v)) {
        char p[128];
        doc_path(p, sizeof(p), path, key);
        int rc = doc_check_fields(v, p, res_fields, d);
        if (rc == 0) {
            rc = doc_gpus(v, p, "gpus", &r.gpu_milli, d);
        }
        if (rc == 0) {
            rc = doc_int(v, p, "gpu_memory_mib", 0, INT64_MAX / 4, &r.gpu_mem_mib, d);
        }
        if (rc == 0) {
            rc = doc_int(v, p, "cpu_milli", 0, INT64_MAX / 4, &r.cpu_milli, d);
        }
        if (rc == 0) {
            rc = doc_int(v, p, "memory_mib", 0, INT64_MAX / 4, &r.memory_mib, d);
        }
        if (rc < 0) {
            return rc;
        }
    }
    *out = r;
    return 0;
}

/* A resource vector's document: fields at -1 (unlimited) are left out. */
static json_t *res_doc(const gp_res *r)
{
    json_t *o = json_object();
    if (r->gpu_milli >= 0) {
        json_object_set_new(o, "gpus", doc_gpus_value(r->gpu_milli));
    }
    if (r->gpu_mem_mib >= 0) {
        json_object_set_new(o, "gpu_memory_mib", json_integer(r->gpu_mem_mib));
    }
    if (r->cpu_milli >= 0) {
        json_object_set_new(o, "cpu_milli", json_integer(r->cpu_milli));
    }
    if (r->memory_mib >= 0) {
        json_object_set_new(o, "memory_mib", json_integer(r->memory_mib));
    }
    return o;
}

static int read_models(json_t *quota, json_t **out, gp_diag *d)
{
    json_t *m = json_object_get(quota, "models");
    json_t *res = json_object();
    if (m && !json_is_null(m)) {
        if (!json_is_object(m)) {
            json_decref(res);
            return gp_diag_set(d, GP_EINVAL, "quota.models: must be an object of GPU counts");
        }
        const char *model;
        json_t *v;
        json_object_foreach(m, model, v)
        {
            char p[128];
            snprintf(p, sizeof(p), "quota.models");
            int64_t milli = -1;
            int rc = strlen(model) >= GP_NAME_MAX || !model[0]
                         ? gp_diag_set(d, GP_EINVAL, "quota.models: bad model name")
                         : doc_gpus(m, p, model, &milli, d);
            if (rc < 0) {
                json_decref(res);
                return rc;
            }
            json_object_set_new(res, model, json_integer(milli));
        }
    }
    *out = res;
    return 0;
}

#define GRANTS_MAX 64 /* names per list */

const char *ctl_grant_field(ctl_grant k)
{
    return k == CTL_GRANT_CLASS ? "priority_classes" : "queues";
}

const char *ctl_grant_kind(ctl_grant k)
{
    return k == CTL_GRANT_CLASS ? "priority class" : "queue";
}

/* Reads doc[field of k]: a list of distinct names, or absent/null (*out NULL). */
static int read_grants(json_t *doc, ctl_grant k, json_t **out, gp_diag *d)
{
    const char *field = ctl_grant_field(k);
    json_t *v = json_object_get(doc, field);
    *out = NULL;
    if (!v || json_is_null(v)) {
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) > GRANTS_MAX) {
        return gp_diag_set(d, GP_EINVAL, "%s: must be a list of at most %d %s names", field,
                           GRANTS_MAX, ctl_grant_kind(k));
    }
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        const char *s = json_string_value(x);
        if (!s || strlen(s) >= GP_NAME_MAX || !doc_name_valid(s)) {
            return gp_diag_set(d, GP_EINVAL, "%s[%zu]: must be a %s name", field, i,
                               ctl_grant_kind(k));
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(json_string_value(json_array_get(v, j)), s) == 0) {
                return gp_diag_set(d, GP_EINVAL, "%s[%zu]: %s is listed twice", field, i, s);
            }
        }
    }
    *out = json_copy(v);
    return *out ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

bool ctl_tenant_lists(const ctl_tenant *t, ctl_grant k, const char *name)
{
    size_t i;
    json_t *x;
    json_array_foreach(t->grants[k], i, x)
    {
        if (strcmp(json_string_value(x), name) == 0) {
            return true;
        }
    }
    return false;
}

bool ctl_tenant_granted(const ctl_tenant *t, ctl_grant k, const char *name, const char *dflt)
{
    return t->grants[k] ? ctl_tenant_lists(t, k, name) : strcmp(name, dflt) == 0;
}

int ctl_tenant_grants_check(ctl_state *st, const ctl_tenant *t, gp_diag *d)
{
    for (int k = 0; k < CTL_NGRANTS; k++) {
        size_t i;
        json_t *x;
        json_array_foreach(t->grants[k], i, x)
        {
            const char *s = json_string_value(x);
            bool found = k == CTL_GRANT_CLASS ? ctl_pclass_by_name(st, s) != NULL
                                              : ctl_queue_by_name(st, s) != NULL;
            if (!found) {
                return gp_diag_set(d, GP_EINVAL, "%s[%zu]: no %s named %s",
                                   ctl_grant_field((ctl_grant)k), i, ctl_grant_kind((ctl_grant)k),
                                   s);
            }
        }
    }
    return 0;
}

int ctl_tenant_from_doc(const char *name, json_t *doc, ctl_tenant *out, gp_diag *d)
{
    static const char *const top[] = {
        "name", "quota", "priority_classes", "queues", "allow_privileged", NULL};
    static const char *const qf[] = {"gpus", "gpu_memory_mib", "models", NULL};
    ctl_tenant t;
    memset(&t, 0, sizeof(t));
    snprintf(t.lim.name, sizeof(t.lim.name), "%s", name);
    t.lim.quota_gpu_milli = -1;
    t.lim.quota_gpu_mem_mib = -1;
    int rc = doc_check_fields(doc, "", top, d);
    json_t *quota = json_object_get(doc, "quota");
    if (rc == 0 && quota && !json_is_null(quota)) {
        rc = doc_check_fields(quota, "quota", qf, d);
        if (rc == 0) {
            rc = doc_gpus(quota, "quota", "gpus", &t.lim.quota_gpu_milli, d);
        }
        if (rc == 0) {
            rc = doc_int(quota, "quota", "gpu_memory_mib", 0, INT64_MAX / 4,
                         &t.lim.quota_gpu_mem_mib, d);
        }
    }
    if (rc == 0) {
        rc = read_models(quota ? quota : doc, &t.quota_models, d);
    }
    for (int k = 0; rc == 0 && k < CTL_NGRANTS; k++) {
        rc = read_grants(doc, (ctl_grant)k, &t.grants[k], d);
    }
    if (rc == 0) {
        rc = doc_bool(doc, "", "allow_privileged", &t.allow_privileged, d);
    }
    if (rc < 0) {
        ctl_tenant_fini(&t);
        return rc;
    }
    for (int m = 0; m < GP_MAX_MODELS; m++) {
        t.lim.quota_model_milli[m] = -1;
    }
    *out = t;
    return 0;
}

void ctl_tenant_fini(ctl_tenant *t)
{
    json_decref(t->quota_models);
    t->quota_models = NULL;
    for (int k = 0; k < CTL_NGRANTS; k++) {
        json_decref(t->grants[k]);
        t->grants[k] = NULL;
    }
}

void ctl_tenant_limits(const ctl_state *st, const ctl_tenant *t, gp_sched_tenant *out)
{
    *out = t->lim;
    int rank[GP_MAX_MODELS] = {0};
    int n = gp_cluster_model_count(st->cluster);
    const char *key;
    json_t *v;
    json_object_foreach(t->quota_models, key, v)
    {
        int64_t milli = json_integer_value(v);
        for (int m = 0; m < n && m < GP_MAX_MODELS; m++) {
            const gp_gpu_model *info = gp_cluster_model_info(st->cluster, m);
            int r = gp_model_name_match(key, info->name, info->mem_mib);
            if (r > 0 && (r > rank[m] || (r == rank[m] && milli < out->quota_model_milli[m]))) {
                rank[m] = r;
                out->quota_model_milli[m] = milli;
            }
        }
    }
}

json_t *ctl_tenant_doc(const ctl_state *st, const ctl_tenant *t)
{
    (void)st;
    json_t *quota = json_object();
    if (t->lim.quota_gpu_milli >= 0) {
        json_object_set_new(quota, "gpus", doc_gpus_value(t->lim.quota_gpu_milli));
    }
    if (t->lim.quota_gpu_mem_mib >= 0) {
        json_object_set_new(quota, "gpu_memory_mib", json_integer(t->lim.quota_gpu_mem_mib));
    }
    json_t *models = json_object();
    const char *model;
    json_t *v;
    json_object_foreach(t->quota_models, model, v)
    {
        json_object_set_new(models, model, doc_gpus_value(json_integer_value(v)));
    }
    json_object_set_new(quota, "models", models);
    json_t *doc = json_pack("{s:s, s:o, s:b}", "name", t->lim.name, "quota", quota,
                            "allow_privileged", t->allow_privileged);
    for (int k = 0; doc && k < CTL_NGRANTS; k++) {
        if (t->grants[k]) {
            json_object_set_new(doc, ctl_grant_field((ctl_grant)k), json_copy(t->grants[k]));
        }
    }
    return doc;
}

int ctl_queue_from_doc(const char *name, json_t *doc, ctl_queue *out, gp_diag *d)
{
    static const char *const top[] = {"name",       "weight",      "guarantee",
                                      "capability", "reclaimable", NULL};
    ctl_queue q;
    memset(&q, 0, sizeof(q));
    snprintf(q.q.name, sizeof(q.q.name), "%s", name);
    q.q.weight = 1;
    q.q.reclaimable = true;
    int rc = doc_check_fields(doc, "", top, d);
    if (rc == 0) {
        rc = doc_num(doc, "", "weight", 0.001, 1e6, &q.q.weight, d);
    }
    if (rc == 0) {
        rc = read_res(doc, "", "guarantee", -1, &q.q.guarantee, d);
    }
    if (rc == 0) {
        rc = read_res(doc, "", "capability", -1, &q.q.capability, d);
    }
    if (rc == 0) {
        rc = doc_bool(doc, "", "reclaimable", &q.q.reclaimable, d);
    }
    if (rc < 0) {
        return rc;
    }
    *out = q;
    return 0;
}

json_t *ctl_queue_doc(const ctl_queue *q)
{
    return json_pack("{s:s, s:f, s:o, s:o, s:b}", "name", q->q.name, "weight", q->q.weight,
                     "guarantee", res_doc(&q->q.guarantee), "capability", res_doc(&q->q.capability),
                     "reclaimable", q->q.reclaimable);
}

int ctl_pclass_from_doc(const char *name, json_t *doc, ctl_pclass *out, gp_diag *d)
{
    static const char *const top[] = {"name", "value", "preemption_policy", "description", NULL};
    ctl_pclass p;
    memset(&p, 0, sizeof(p));
    snprintf(p.name, sizeof(p.name), "%s", name);
    int64_t value = 0;
    char policy[32] = "Never";
    int rc = doc_check_fields(doc, "", top, d);
    if (rc == 0) {
        rc = doc_int(doc, "", "value", -1000000000, 1000000000, &value, d);
    }
    if (rc == 0) {
        rc = doc_str(doc, "", "preemption_policy", policy, sizeof(policy), d);
    }
    if (rc == 0 && strcmp(policy, "Never") != 0 && strcmp(policy, "PreemptLowerPriority") != 0) {
        rc = gp_diag_set(d, GP_EINVAL, "preemption_policy: must be PreemptLowerPriority or Never");
    }
    if (rc == 0) {
        rc = doc_str(doc, "", "description", p.description, sizeof(p.description), d);
    }
    if (rc < 0) {
        return rc;
    }
    p.value = (int32_t)value;
    p.preempt = strcmp(policy, "PreemptLowerPriority") == 0;
    *out = p;
    return 0;
}

json_t *ctl_pclass_doc(const ctl_pclass *p)
{
    return json_pack("{s:s, s:i, s:s, s:s}", "name", p->name, "value", (json_int_t)p->value,
                     "preemption_policy", p->preempt ? "PreemptLowerPriority" : "Never",
                     "description", p->description);
}
