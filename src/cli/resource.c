/*
 * The kinds `gpupool get` shows and their table columns (see resource.h). Each cell function
 * reads the server's document as src/ctl writes it; a missing field prints "-", never a crash,
 * so that an older or newer server still gets a table.
 */
#include "cli/resource.h"

#include "cli/cli.h"
#include "cli/client.h"

#include <string.h>

/* ---- jobs ---- */

void gp_cli_node_taints(const json_t *node, char *buf, size_t cap)
{
    size_t i, used = 0;
    json_t *t;
    buf[0] = '\0';
    json_array_foreach(json_object_get(node, "taints"), i, t)
    {
        const char *value = gp_out_str(t, "value");
        int n = snprintf(buf + used, cap - used, "%s%s%s%s:%s", used ? "," : "",
                         gp_out_str(t, "key"), *value ? "=" : "", value, gp_out_str(t, "effect"));
        if (n < 0 || (size_t)n >= cap - used) {
            break;
        }
        used += (size_t)n;
    }
}

void gp_cli_job_gpus(const json_t *job, char *buf, size_t cap)
{
    const json_t *res = json_object_get(json_object_get(job, "spec"), "resources");
    char per[64] = "-", num[32];
    const json_t *gpus = json_object_get(res, "gpus");
    const json_t *milli = json_object_get(res, "gpu_milli");
    const json_t *mem = json_object_get(res, "gpu_memory_mib");
    const char *mig = gp_out_str(res, "mig_profile");
    if (gpus) {
        gp_out_number(gpus, per, sizeof(per));
    } else if (mig[0]) {
        snprintf(per, sizeof(per), "%s", mig);
    } else if (milli || mem) {
        char m[32] = "";
        if (milli) {
            gp_out_milli(json_integer_value(milli), num, sizeof(num));
        }
        if (mem) {
            gp_out_mib(json_integer_value(mem), m, sizeof(m));
        }
        snprintf(per, sizeof(per), "%s%s%s", milli ? num : "", milli && mem ? "/" : "", m);
    }
    json_int_t replicas = json_integer_value(json_object_get(job, "replicas"));
    if (replicas > 1) {
        snprintf(buf, cap, "%lldx%s", (long long)replicas, per);
    } else {
        snprintf(buf, cap, "%s", per);
    }
}

static void c_id(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_number(json_object_get(j, "id"), buf, cap);
}

static void c_name(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(j, "name"));
}

static void c_tenant(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(j, "tenant"));
}

static void c_queue(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(j, "queue"));
}

static void c_state(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(j, "state"));
}

static void c_job_gpus(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_cli_job_gpus(j, buf, cap);
}

static void c_job_age(const json_t *j, int64_t now, char *buf, size_t cap)
{
    gp_out_age(now, gp_out_int(j, "submit_time_ms"), buf, cap);
}

static void c_reason(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(j, "reason"));
}

/* The distinct nodes of the placement, comma-separated. */
static void c_job_nodes(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    size_t i, used = 0;
    const json_t *r;
    buf[0] = '\0';
    json_array_foreach(json_object_get(j, "placement"), i, r)
    {
        const char *node = gp_out_str(r, "node");
        size_t len = strlen(node);
        const char *hit = strstr(buf, node);
        if (hit && (hit == buf || hit[-1] == ',') && (hit[len] == ',' || hit[len] == '\0')) {
            continue;
        }
        int n = snprintf(buf + used, cap - used, "%s%s", used ? "," : "", node);
        if (n < 0 || (size_t)n >= cap - used) {
            break;
        }
        used += (size_t)n;
    }
}

static void c_priority(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_number(json_object_get(j, "priority"), buf, cap);
}

static void c_pclass(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(j, "priority_class"));
}

/* The image, shortened to IMAGE_COLUMN_MAX (describe job shows it whole); "-" for none. */
#define IMAGE_COLUMN_MAX 40

static void c_job_image(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_image(json_string_value(json_object_get(json_object_get(j, "spec"), "image")),
                 IMAGE_COLUMN_MAX, buf, cap);
}

/* The labels of a job's spec, "app=web,tier=db" ("" shown "-" for none). */
static void c_job_labels(const json_t *j, int64_t now, char *buf, size_t cap)
{
    (void)now;
    const char *k;
    json_t *v;
    size_t used = 0;
    buf[0] = '\0';
    json_object_foreach(json_object_get(json_object_get(j, "spec"), "labels"), k, v)
    {
        int n = snprintf(buf + used, cap - used, "%s%s=%s", used ? "," : "", k,
                         json_string_value(v) ? json_string_value(v) : "");
        if (n < 0 || (size_t)n >= cap - used) {
            break;
        }
        used += (size_t)n;
    }
}

static const gp_cli_column job_cols[] = {
    {"ID", 0, c_id},
    {"NAME", 0, c_name},
    {"TENANT", 0, c_tenant},
    {"QUEUE", 0, c_queue},
    {"STATE", 0, c_state},
    {"GPUS", 0, c_job_gpus},
    {"AGE", 0, c_job_age},
    {"NODES", 1, c_job_nodes},
    {"CLASS", 1, c_pclass},
    {"PRIORITY", 1, c_priority},
    {"IMAGE", 1, c_job_image},
    {"REASON", 0, c_reason},
    {"LABELS", GP_COL_LABELS, c_job_labels},
    {NULL, 0, NULL},
};

/* ---- nodes ---- */

/* The state and every mark that keeps work off the node: "Ready", "Ready,Cordoned",
 * "NotReady,Draining,Fenced", "Ready,Unhealthy". */
static void c_node_state(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    const char *unhealthy = gp_out_str(n, "unhealthy");
    snprintf(buf, cap, "%s%s%s%s", gp_out_str(n, "state"),
             json_is_true(json_object_get(n, "draining"))   ? ",Draining"
             : json_is_true(json_object_get(n, "cordoned")) ? ",Cordoned"
                                                            : "",
             json_is_true(json_object_get(n, "fenced")) ? ",Fenced" : "",
             unhealthy[0] ? ",Unhealthy" : "");
}

/* The GPUs out of service by index: "3,5"; a retired one "3(retired)"; "" when none. */
static void c_drained(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    size_t i, used = 0;
    const json_t *g;
    buf[0] = '\0';
    json_array_foreach(json_object_get(n, "gpus"), i, g)
    {
        const json_t *dr = json_object_get(g, "drained");
        if (!json_is_object(dr)) {
            continue;
        }
        int w = snprintf(buf + used, cap - used, "%s%zu%s", used ? "," : "", i,
                         json_is_true(json_object_get(dr, "retired")) ? "(retired)" : "");
        if (w < 0 || (size_t)w >= cap - used) {
            break;
        }
        used += (size_t)w;
    }
}

/* A maintenance drain scheduled for later: "in 2h". */
static void c_drains(const json_t *n, int64_t now, char *buf, size_t cap)
{
    gp_out_until(now, gp_out_int(n, "drain_deadline_ms"), buf, cap);
}

static void c_drain_at(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_time(gp_out_int(n, "drain_deadline_ms"), buf, cap);
}

static void c_schedulable(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", json_is_true(json_object_get(n, "schedulable")) ? "true" : "false");
}

static void c_node_gpus(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%zu", json_array_size(json_object_get(n, "gpus")));
}

static void c_allocated(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_number(json_object_get(json_object_get(n, "allocated"), "gpus"), buf, cap);
}

/* "2xA100-80GB,1xH100" in the order the models first appear. */
static void c_models(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    const json_t *gpus = json_object_get(n, "gpus");
    size_t used = 0, count = json_array_size(gpus);
    buf[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        const char *model = gp_out_str(json_array_get(gpus, i), "model");
        int seen = 0, same = 0;
        for (size_t k = 0; k < count; k++) {
            int eq = strcmp(gp_out_str(json_array_get(gpus, k), "model"), model) == 0;
            seen |= eq && k < i;
            same += eq;
        }
        int w =
            seen ? 0 : snprintf(buf + used, cap - used, "%s%dx%s", used ? "," : "", same, model);
        if (w < 0 || (size_t)w >= cap - used) {
            break;
        }
        used += (size_t)w;
    }
}

static void c_cpu(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%g", (double)gp_out_int(n, "cpu_milli") / 1000.0);
}

static void c_memory(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_mib(gp_out_int(n, "memory_mib"), buf, cap);
}

static void c_address(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(n, "address"));
}

static void c_heartbeat(const json_t *n, int64_t now, char *buf, size_t cap)
{
    gp_out_age(now, gp_out_int(n, "heartbeat_ms"), buf, cap);
}

/* The container runtime: "podman/runc"; "" (shown "-") when none. */
static void c_runtime(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    const json_t *rt = json_object_get(n, "runtime");
    buf[0] = '\0';
    if (json_is_object(rt)) {
        snprintf(buf, cap, "%s/%s", gp_out_str(rt, "engine"), gp_out_str(rt, "oci_runtime"));
    }
}

/* The node's taints as kubectl writes them: "dedicated=ml:NoSchedule,spot:PreferNoSchedule". */
static void c_taints(const json_t *n, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_cli_node_taints(n, buf, cap);
}

static const gp_cli_column node_cols[] = {
    {"NAME", 0, c_name},
    {"STATE", 0, c_node_state},
    {"SCHEDULABLE", 0, c_schedulable},
    {"GPUS", 0, c_node_gpus},
    {"DRAINED-GPUS", 0, c_drained},
    {"ALLOCATED", 0, c_allocated},
    {"MODELS", 0, c_models},
    {"DRAINS", 0, c_drains},
    {"TAINTS", 0, c_taints},
    {"DRAIN-AT", 1, c_drain_at},
    {"CPU", 1, c_cpu},
    {"MEMORY", 1, c_memory},
    {"RUNTIME", 1, c_runtime},
    {"HEARTBEAT", 1, c_heartbeat},
    {"ADDRESS", 1, c_address},
    {NULL, 0, NULL},
};

/* ---- queues, tenants, priority classes, tokens ---- */

static void gpus_at(const json_t *obj, const char *key, const char *none, char *buf, size_t cap)
{
    const json_t *v = json_object_get(json_object_get(obj, key), "gpus");
    if (v) {
        gp_out_number(v, buf, cap);
    } else {
        snprintf(buf, cap, "%s", none);
    }
}

static void c_weight(const json_t *q, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_number(json_object_get(q, "weight"), buf, cap);
}

static void c_guarantee(const json_t *q, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gpus_at(q, "guarantee", "0", buf, cap);
}

static void c_capability(const json_t *q, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gpus_at(q, "capability", "unlimited", buf, cap);
}

static void c_used(const json_t *q, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gpus_at(q, "usage", "0", buf, cap);
}

static void c_used_mem(const json_t *q, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_mib(gp_out_int(json_object_get(q, "usage"), "gpu_memory_mib"), buf, cap);
}

static void c_pending(const json_t *q, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_number(json_object_get(q, "pending"), buf, cap);
}

static void c_reclaimable(const json_t *q, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", json_is_false(json_object_get(q, "reclaimable")) ? "false" : "true");
}

static const gp_cli_column queue_cols[] = {
    {"NAME", 0, c_name},
    {"WEIGHT", 0, c_weight},
    {"GUARANTEE", 0, c_guarantee},
    {"CAPABILITY", 0, c_capability},
    {"USED", 0, c_used},
    {"USED-GPU-MEMORY", 1, c_used_mem},
    {"PENDING", 0, c_pending},
    {"RECLAIMABLE", 0, c_reclaimable},
    {NULL, 0, NULL},
};

static void c_quota(const json_t *t, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gpus_at(t, "quota", "unlimited", buf, cap);
}

static void c_quota_mem(const json_t *t, int64_t now, char *buf, size_t cap)
{
    (void)now;
    const json_t *v = json_object_get(json_object_get(t, "quota"), "gpu_memory_mib");
    if (v) {
        gp_out_mib(json_integer_value(v), buf, cap);
    } else {
        snprintf(buf, cap, "unlimited");
    }
}

static void c_quota_models(const json_t *t, int64_t now, char *buf, size_t cap)
{
    (void)now;
    const char *model;
    const json_t *v;
    size_t used = 0;
    buf[0] = '\0';
    json_object_foreach(json_object_get(json_object_get(t, "quota"), "models"), model, v)
    {
        char num[32];
        gp_out_number(v, num, sizeof(num));
        int w = snprintf(buf + used, cap - used, "%s%s=%s", used ? "," : "", model, num);
        if (w < 0 || (size_t)w >= cap - used) {
            break;
        }
        used += (size_t)w;
    }
}

static void c_privileged(const json_t *t, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s",
             json_is_true(json_object_get(t, "allow_privileged")) ? "true" : "false");
}

static const gp_cli_column tenant_cols[] = {
    {"NAME", 0, c_name},
    {"QUOTA-GPUS", 0, c_quota},
    {"QUOTA-GPU-MEMORY", 0, c_quota_mem},
    {"MODEL-QUOTAS", 0, c_quota_models},
    {"USED-GPUS", 0, c_used},
    {"USED-GPU-MEMORY", 1, c_used_mem},
    {"PENDING", 0, c_pending},
    {"PRIVILEGED", 1, c_privileged},
    {NULL, 0, NULL},
};

static void c_value(const json_t *p, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_number(json_object_get(p, "value"), buf, cap);
}

static void c_preemption(const json_t *p, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(p, "preemption_policy"));
}

static void c_description(const json_t *p, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(p, "description"));
}

static const gp_cli_column pclass_cols[] = {
    {"NAME", 0, c_name},
    {"VALUE", 0, c_value},
    {"PREEMPTION", 0, c_preemption},
    {"DESCRIPTION", 0, c_description},
    {NULL, 0, NULL},
};

static void c_path(const json_t *v, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(v, "path"));
}

static void c_mode(const json_t *v, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", json_is_true(json_object_get(v, "read_only")) ? "ro" : "rw");
}

static void c_active(const json_t *v, int64_t now, char *buf, size_t cap)
{
    (void)now;
    gp_out_number(json_object_get(v, "active_jobs"), buf, cap);
}

static const gp_cli_column volume_cols[] = {
    {"NAME", 0, c_name},
    {"PATH", 0, c_path},
    {"MODE", 0, c_mode},
    {"JOBS", 0, c_active},
    {"DESCRIPTION", 1, c_description},
    {NULL, 0, NULL},
};

static void c_role(const json_t *t, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(t, "role"));
}

static void c_node(const json_t *t, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", gp_out_str(t, "node"));
}

static void c_created(const json_t *t, int64_t now, char *buf, size_t cap)
{
    gp_out_age(now, gp_out_int(t, "created_ms"), buf, cap);
}

static void c_expires(const json_t *t, int64_t now, char *buf, size_t cap)
{
    int64_t at = gp_out_int(t, "expires_ms");
    gp_out_time(at, buf, cap);
    if (at > 0 && at <= now) {
        snprintf(buf, cap, "expired");
    } else if (at <= 0) {
        snprintf(buf, cap, "never");
    }
}

static void c_revoked(const json_t *t, int64_t now, char *buf, size_t cap)
{
    (void)now;
    snprintf(buf, cap, "%s", json_is_true(json_object_get(t, "revoked")) ? "true" : "false");
}

static const gp_cli_column token_cols[] = {
    {"ID", 0, c_id},           {"NAME", 0, c_name},       {"ROLE", 0, c_role},
    {"TENANT", 0, c_tenant},   {"NODE", 0, c_node},       {"AGE", 0, c_created},
    {"EXPIRES", 0, c_expires}, {"REVOKED", 0, c_revoked}, {NULL, 0, NULL},
};

static const gp_cli_kind kinds[] = {
    {"job", "jobs", NULL, "/v1/jobs", 1, 0, job_cols},
    {"node", "nodes", NULL, "/v1/nodes", 0, 0, node_cols},
    {"queue", "queues", NULL, "/v1/queues", 0, 0, queue_cols},
    {"tenant", "tenants", NULL, "/v1/tenants", 0, 0, tenant_cols},
    {"priorityclass", "priorityclasses", "pc", "/v1/priorityclasses", 0, 0, pclass_cols},
    {"volume", "volumes", "vol", "/v1/volumes", 0, 0, volume_cols},
    {"token", "tokens", NULL, "/v1/tokens", 0, 1, token_cols},
};

#define NKINDS ((int)(sizeof(kinds) / sizeof(kinds[0])))

const gp_cli_kind *gp_cli_kind_find(const char *word)
{
    for (int i = 0; i < NKINDS; i++) {
        const gp_cli_kind *k = &kinds[i];
        if (strcmp(word, k->singular) == 0 || strcmp(word, k->plural) == 0 ||
            (k->alias && strcmp(word, k->alias) == 0)) {
            return k;
        }
    }
    return NULL;
}

const char *gp_cli_kind_list(void)
{
    return "jobs, nodes, queues, tenants, priorityclasses (pc), volumes (vol), tokens";
}

int gp_cli_kind_table(const gp_cli_kind *k, int show, const json_t *items, int header,
                      int64_t now_ms, FILE *f)
{
    const char *headers[32];
    const gp_cli_column *cols[32];
    int n = 0;
    for (const gp_cli_column *c = k->cols; c->header && n < 32; c++) {
        if (!c->wide || (c->wide & show)) {
            cols[n] = c;
            headers[n++] = c->header;
        }
    }
    gp_out_table *t = gp_out_table_new(headers, n);
    if (!t) {
        return -1;
    }
    int64_t now = now_ms ? now_ms : gp_out_now_ms();
    char cells[32][256];
    const char *row[32];
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item)
    {
        for (int c = 0; c < n; c++) {
            cells[c][0] = '\0';
            cols[c]->cell(item, now, cells[c], sizeof(cells[c]));
            row[c] = cells[c];
        }
        if (gp_out_table_add(t, row) < 0) {
            gp_out_table_free(t);
            return -1;
        }
    }
    if (header) {
        gp_out_table_print(t, f, 0);
    } else {
        gp_out_table_print_body(t, f, 0);
    }
    gp_out_table_free(t);
    return 0;
}

int gp_cli_kind_print(const gp_cli_kind *k, gp_out_format format, json_t *items, FILE *f)
{
    return gp_cli_kind_print_labels(k, format, items, false, f);
}

int gp_cli_kind_print_labels(const gp_cli_kind *k, gp_out_format format, json_t *items, bool labels,
                             FILE *f)
{
    if (format == GP_OUT_TABLE || format == GP_OUT_WIDE) {
        int show = (format == GP_OUT_WIDE ? GP_COL_WIDE : 0) | (labels ? GP_COL_LABELS : 0);
        return gp_cli_kind_table(k, show, items, 1, 0, f);
    }
    json_t *doc = json_pack("{s:O}", "items", items);
    int rc = doc ? gp_out_doc(f, format, doc) : -1;
    json_decref(doc);
    return rc;
}

int gp_cli_kind_get(gp_cli_conn *c, const gp_cli_kind *k, const char *name, json_t **doc)
{
    if (!k->list_only) {
        return gp_cli_get_doc(c, k->path, name, doc);
    }
    json_t *list;
    *doc = NULL;
    int rc = gp_cli_call(c, "GET", k->path, NULL, &list);
    if (rc != 0) {
        return rc;
    }
    size_t i;
    json_t *item;
    char id[32];
    json_array_foreach(json_object_get(list, "items"), i, item)
    {
        gp_out_number(json_object_get(item, "id"), id, sizeof(id));
        if (strcmp(id, name) == 0 || strcmp(gp_out_str(item, "name"), name) == 0) {
            *doc = json_incref(item);
            break;
        }
    }
    json_decref(list);
    if (!*doc) {
        fprintf(stderr, "gpupool: %s %s: not found\n", k->singular, name);
        return GP_EXIT_FAILURE;
    }
    return 0;
}
