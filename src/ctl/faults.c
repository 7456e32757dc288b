/*
 * The XID table and the recurrence rules (see faults.h).
 */
#include "ctl/faults.h"

#include <jansson.h>
#include <string.h>

typedef enum rule_kind {
    K_IGNORE,
    K_APP,
    K_FATAL,
    K_DBE,
    K_KEEP_OUT, /* keep the jobs, out of service */
    K_RETIRE,
    K_NVLINK,
    K_NODE,
    K_SBE,
    K_CONTAINED,
    K_CTX,
} rule_kind;

typedef struct rule {
    int xid;
    rule_kind kind;
    const char *what;
} rule;

static const rule rules[] = {
    {13, K_APP, "graphics engine exception"},
    {31, K_APP, "GPU memory page fault"},
    {68, K_APP, "video processor exception"},
    {69, K_APP, "graphics engine class error"},
    {43, K_IGNORE, "GPU stopped processing"},
    {45, K_IGNORE, "preemptive cleanup"},
    {8, K_FATAL, "GPU stopped"},
    {46, K_FATAL, "GPU timed out"},
    {48, K_DBE, "double-bit ECC error"},
    {62, K_FATAL, "internal micro-controller halt"},
    {63, K_KEEP_OUT, "ECC page retirement or row remapping recorded"},
    {64, K_RETIRE, "row remapping failed"},
    {74, K_NVLINK, "NVLink error"},
    {79, K_NODE, "GPU fell off the bus"},
    {92, K_SBE, "high single-bit ECC error rate"},
    {94, K_CONTAINED, "contained ECC error"},
    {95, K_FATAL, "uncontained ECC error"},
    {109, K_CTX, "context-switch timeout"},
    {119, K_FATAL, "GSP RPC timeout"},
    {120, K_FATAL, "GSP error"},
    {140, K_FATAL, "unrecovered ECC error"},
    {143, K_FATAL, "GPU initialisation error"},
    {154, K_KEEP_OUT, "GPU recovery action changed"},
};

/* Records now in times (newest first) and returns how many of them fall within 24 h. */
static int record(int64_t *times, int64_t now)
{
    memmove(times + 1, times, sizeof(*times) * (CTL_FAULT_KEEP - 1));
    times[0] = now;
    int n = 0;
    for (int i = 0; i < CTL_FAULT_KEEP; i++) {
        n += times[i] > 0 && now - times[i] < CTL_FAULT_DAY;
    }
    return n;
}

void ctl_fault_decide(int xid, ctl_gpu_faults *h, int64_t now, ctl_fault_action *out)
{
    memset(out, 0, sizeof(*out));
    out->what = "unknown XID";
    const rule *r = NULL;
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        if (rules[i].xid == xid) {
            r = &rules[i];
        }
    }
    if (!r) {
        return;
    }
    out->known = true;
    out->what = r->what;
    switch (r->kind) {
    case K_IGNORE:
        break;
    case K_APP:
        out->jobs = CTL_JOBS_FAIL;
        out->drain_gpu = record(h->app_ms, now) >= 3;
        break;
    case K_FATAL:
        out->jobs = CTL_JOBS_RESTART;
        out->drain_gpu = true;
        break;
    case K_DBE:
        out->jobs = CTL_JOBS_RESTART;
        out->drain_gpu = true;
        out->retire = ++h->dbe >= 2;
        break;
    case K_KEEP_OUT:
        out->drain_gpu = true;
        break;
    case K_RETIRE:
        out->jobs = CTL_JOBS_RESTART;
        out->drain_gpu = out->retire = true;
        break;
    case K_NVLINK:
        out->jobs = CTL_JOBS_RESTART_MULTI;
        out->drain_gpu = true;
        break;
    case K_NODE:
        out->jobs = CTL_JOBS_RESTART;
        out->drain_gpu = out->drain_node = true;
        break;
    case K_SBE:
        out->drain_gpu = record(h->sbe_ms, now) >= 3;
        break;
    case K_CONTAINED:
        out->jobs = CTL_JOBS_FAIL;
        out->drain_gpu = true;
        break;
    case K_CTX:
        out->jobs = CTL_JOBS_FAIL;
        out->drain_gpu = record(h->ctx_ms, now) >= 2;
        break;
    }
}

static json_t *times_doc(const int64_t *t)
{
    json_t *a = json_array();
    for (int i = 0; i < CTL_FAULT_KEEP && t[i] > 0; i++) {
        json_array_append_new(a, json_integer(t[i]));
    }
    return a;
}

json_t *ctl_gpu_faults_doc(const ctl_gpu_faults *h)
{
    if (!h->app_ms[0] && !h->ctx_ms[0] && !h->sbe_ms[0] && !h->dbe) {
        return NULL;
    }
    return json_pack("{s:o, s:o, s:o, s:i}", "app_ms", times_doc(h->app_ms), "ctx_ms",
                     times_doc(h->ctx_ms), "sbe_ms", times_doc(h->sbe_ms), "dbe", h->dbe);
}

static void read_times(json_t *a, int64_t *t)
{
    for (size_t i = 0; i < CTL_FAULT_KEEP && i < json_array_size(a); i++) {
        json_t *v = json_array_get(a, i);
        t[i] = json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 0;
    }
}

void ctl_gpu_faults_read(json_t *doc, ctl_gpu_faults *h)
{
    memset(h, 0, sizeof(*h));
    if (!json_is_object(doc)) {
        return;
    }
    read_times(json_object_get(doc, "app_ms"), h->app_ms);
    read_times(json_object_get(doc, "ctx_ms"), h->ctx_ms);
    read_times(json_object_get(doc, "sbe_ms"), h->sbe_ms);
    json_t *dbe = json_object_get(doc, "dbe");
    h->dbe =
        json_is_integer(dbe) && json_integer_value(dbe) > 0 && json_integer_value(dbe) < 1000000
            ? (int)json_integer_value(dbe)
            : 0;
}
