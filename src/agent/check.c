/*
 * The node health check's rules: readings and expectations → findings and a status per check
 * (see check.h). Every per-GPU check has one rule function and one row in per_gpu[], which also
 * names the NVML function its reading comes from (for "unknown" details).
 */
#include "agent/check.h"

#include "gpupool/error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[GP_CHECK_COUNT] = {
#define GP_CHECK_NAME(id, name) name,
    GP_CHECK_LIST(GP_CHECK_NAME)
#undef GP_CHECK_NAME
};

const char *gp_check_name(gp_check_id id)
{
    return (unsigned)id < GP_CHECK_COUNT ? names[id] : "?";
}

const char *gp_check_status_name(gp_check_status s)
{
    switch (s) {
    case GP_CHECK_PASS:
        return "pass";
    case GP_CHECK_FAIL:
        return "fail";
    case GP_CHECK_UNKNOWN:
        return "unknown";
    case GP_CHECK_SKIPPED:
        return "skipped";
    }
    return "?";
}

const char *gp_check_severity_name(gp_check_severity s)
{
    return s == GP_CHECK_FATAL ? "fatal" : "warning";
}

void gp_check_readings_init(gp_check_readings *r)
{
    memset(r, 0, sizeof(*r));
    r->count = -1;
}

void gp_check_expect_init(gp_check_expect *e)
{
    memset(e, 0, sizeof(*e));
    e->gpus = -1;
}

void gp_check_remember_links(const gp_check_readings *r, gp_check_expect *e)
{
    for (int i = 0; i < r->ngpus && i < GP_CHECK_MAX_GPUS; i++) {
        const gp_check_gpu *g = &r->gpus[i];
        if (g->visible && !g->lost && g->nvlink == GP_AVAIL_READ) {
            e->links_up[i] |= g->links_up;
        }
    }
}

/* DIGITS(.DIGITS)*: the parts into v (at most cap), their count; -1 when malformed. */
static int version_parts(const char *s, unsigned long *v, int cap)
{
    int n = 0;
    for (;;) {
        if (!isdigit((unsigned char)*s) || n == cap) {
            return -1;
        }
        char *end;
        v[n++] = strtoul(s, &end, 10);
        if (*end == '\0') {
            return n;
        }
        if (*end != '.') {
            return -1;
        }
        s = end + 1;
    }
}

int gp_check_version_cmp(const char *a, const char *b, int *cmp)
{
    unsigned long va[8], vb[8];
    int na = version_parts(a, va, 8), nb = version_parts(b, vb, 8);
    if (na < 0 || nb < 0) {
        return GP_EINVAL;
    }
    for (int i = 0; i < na || i < nb; i++) {
        unsigned long x = i < na ? va[i] : 0, y = i < nb ? vb[i] : 0;
        if (x != y) {
            *cmp = x < y ? -1 : 1;
            return 0;
        }
    }
    *cmp = 0;
    return 0;
}

__attribute__((format(printf, 5, 6))) static void add(gp_check_result *res, gp_check_id c, int gpu,
                                                      gp_check_severity sev, const char *fmt, ...)
{
    if (res->nfindings == GP_CHECK_MAX_FINDINGS) {
        return; /* cannot happen: at most one per check and GPU (see check.h) */
    }
    gp_check_finding *f = &res->findings[res->nfindings++];
    f->check = c;
    f->gpu = gpu;
    f->severity = sev;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof(f->message), fmt, ap);
    va_end(ap);
    res->fatal += sev == GP_CHECK_FATAL;
    res->status[c] = GP_CHECK_FAIL;
}

__attribute__((format(printf, 3, 4))) static void detail(gp_check_result *res, gp_check_id c,
                                                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->detail[c], sizeof(res->detail[c]), fmt, ap);
    va_end(ap);
}

/* The detail of a failed check: "on GPU 3", "on GPUs 0, 5" (its findings say the rest). */
static void findings_on(gp_check_result *res, gp_check_id c)
{
    char list[96] = "";
    size_t n = 0;
    int count = 0;
    for (int k = 0; k < res->nfindings && n < sizeof(list); k++) {
        if (res->findings[k].check == c && res->findings[k].gpu >= 0) {
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%d", count ? ", " : "",
                                  res->findings[k].gpu);
            count++;
        }
    }
    detail(res, c, "on GPU%s %s", count == 1 ? "" : "s", list);
}

/* ---- node-wide checks ---- */

static void check_driver(const gp_check_readings *r, const gp_check_expect *e, gp_check_result *res)
{
    const char *v = r->driver_version;
    detail(res, GP_CHECK_DRIVER, "%s", v[0] ? v : "version unknown");
    int cmp = 0;
    if (e->driver_min[0] && !v[0]) {
        add(res, GP_CHECK_DRIVER, -1, GP_CHECK_WARNING,
            "the driver version cannot be read: it cannot be compared with the required %s",
            e->driver_min);
    } else if (e->driver_min[0] && gp_check_version_cmp(v, e->driver_min, &cmp) < 0) {
        add(res, GP_CHECK_DRIVER, -1, GP_CHECK_WARNING,
            "driver version %s cannot be compared with the required %s", v, e->driver_min);
    } else if (e->driver_min[0] && cmp < 0) {
        add(res, GP_CHECK_DRIVER, -1, GP_CHECK_FATAL,
            "driver %s is older than the required %s: upgrade the driver", v, e->driver_min);
    }
    if (e->driver_seen[0] && v[0] && strcmp(v, e->driver_seen) != 0) {
        add(res, GP_CHECK_DRIVER, -1, GP_CHECK_WARNING,
            "the driver is now %s; the agent started with %s: restart the agent", v,
            e->driver_seen);
    }
}

static void check_count(const gp_check_readings *r, const gp_check_expect *e, gp_check_result *res)
{
    if (r->count < 0) {
        detail(res, GP_CHECK_GPU_COUNT, "unknown");
        add(res, GP_CHECK_GPU_COUNT, -1, GP_CHECK_FATAL, "NVML cannot count the GPUs: %s",
            r->count_error[0] ? r->count_error : "error");
        return;
    }
    detail(res, GP_CHECK_GPU_COUNT, "%d GPU%s", r->count, r->count == 1 ? "" : "s");
    if (e->gpus >= 0 && r->count != e->gpus) {
        add(res, GP_CHECK_GPU_COUNT, -1, GP_CHECK_FATAL,
            "NVML counts %d GPU%s, %d expected: a GPU is missing from the bus or the driver",
            r->count, r->count == 1 ? "" : "s", e->gpus);
    }
}

/* Whether GPU i counts for the per-GPU checks. */
static int usable(const gp_check_gpu *g)
{
    return g->visible && !g->lost;
}

static void check_visible(const gp_check_readings *r, gp_check_result *res)
{
    int ok = 0;
    for (int i = 0; i < r->ngpus; i++) {
        const gp_check_gpu *g = &r->gpus[i];
        if (usable(g)) {
            ok++;
        } else if (g->lost) {
            add(res, GP_CHECK_GPU_VISIBLE, i, GP_CHECK_FATAL,
                "GPU %d%s%s fell off the bus (NVML: GPU is lost, XID 79): drain the node and "
                "requeue its jobs",
                i, g->uuid[0] ? " " : "", g->uuid);
        } else {
            add(res, GP_CHECK_GPU_VISIBLE, i, GP_CHECK_FATAL, "GPU %d does not answer: %s", i,
                g->error[0] ? g->error : "error");
        }
    }
    if (res->status[GP_CHECK_GPU_VISIBLE] == GP_CHECK_FAIL) {
        findings_on(res, GP_CHECK_GPU_VISIBLE);
    } else {
        detail(res, GP_CHECK_GPU_VISIBLE, "%d of %d GPU%s answer", ok, r->ngpus,
               r->ngpus == 1 ? "" : "s");
    }
}

/* ---- per-GPU checks: one rule each, called for a GPU whose reading was read ---- */

/* "3" or "3, 5, 7" for the bits of mask. */
static const char *link_list(uint32_t mask, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int l = 0; l < 32 && n < len; l++) {
        if (mask & (UINT32_C(1) << l)) {
            n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? ", " : "", l);
        }
    }
    return buf;
}

static int popcount32(uint32_t x)
{
    int n = 0;
    for (; x; x &= x - 1) {
        n++;
    }
    return n;
}

static void rule_nvlink(const gp_check_gpu *g, int i, const gp_check_expect *e,
                        gp_check_result *res)
{
    char list[128];
    uint32_t all = g->nlinks >= 32 ? UINT32_MAX : (UINT32_C(1) << g->nlinks) - 1;
    uint32_t lost = e->links_up[i] & ~g->links_up;
    uint32_t inactive = all & ~g->links_up;
    if (lost) {
        add(res, GP_CHECK_NVLINK, i, GP_CHECK_FATAL,
            "NVLink link%s %s down (active before, XID 74): fail its multi-GPU jobs, drain, "
            "reset",
            popcount32(lost) == 1 ? "" : "s", link_list(lost, list, sizeof(list)));
    } else if (g->links_up && inactive) {
        add(res, GP_CHECK_NVLINK, i, GP_CHECK_WARNING,
            "NVLink link%s %s inactive while %d other%s active",
            popcount32(inactive) == 1 ? "" : "s", link_list(inactive, list, sizeof(list)),
            popcount32(g->links_up), popcount32(g->links_up) == 1 ? " is" : "s are");
    }
}

static const char *on_off(int mode)
{
    return mode ? "on" : "off";
}

static void rule_mig(const gp_check_gpu *g, int i, const gp_check_expect *e, gp_check_result *res)
{
    (void)e;
    if (g->mig_current != g->mig_pending) {
        add(res, GP_CHECK_MIG_MODE, i, GP_CHECK_WARNING,
            "MIG mode is %s and will be %s after a reset: reset the GPU when idle",
            on_off(g->mig_current), on_off(g->mig_pending));
    }
}

static void rule_ecc_mode(const gp_check_gpu *g, int i, const gp_check_expect *e,
                          gp_check_result *res)
{
    (void)e;
    if (g->ecc_current != g->ecc_pending) {
        add(res, GP_CHECK_ECC_MODE, i, GP_CHECK_WARNING,
            "ECC is %s and will be %s after a reset: reset the GPU when idle",
            on_off(g->ecc_current), on_off(g->ecc_pending));
    }
}

static void rule_ecc(const gp_check_gpu *g, int i, const gp_check_expect *e, gp_check_result *res)
{
    (void)e;
    if (g->dbe_volatile > 0) {
        add(res, GP_CHECK_ECC_ERRORS, i, GP_CHECK_FATAL,
            "%lld uncorrected (double-bit) ECC error%s since the driver loaded (XID 48): stop its "
            "jobs, drain, reset",
            (long long)g->dbe_volatile, g->dbe_volatile == 1 ? "" : "s");
    } else if (g->dbe_aggregate > 0) {
        add(res, GP_CHECK_ECC_ERRORS, i, GP_CHECK_WARNING,
            "%lld uncorrected ECC error%s over the GPU's life (none since the driver loaded)",
            (long long)g->dbe_aggregate, g->dbe_aggregate == 1 ? "" : "s");
    }
}

static void rule_remap(const gp_check_gpu *g, int i, const gp_check_expect *e, gp_check_result *res)
{
    (void)e;
    if (g->remap_failed) {
        add(res, GP_CHECK_REMAPPED_ROWS, i, GP_CHECK_FATAL,
            "row remapping failed (XID 64; %lld row%s remapped for uncorrectable errors): drain, "
            "reset, retire the GPU",
            (long long)g->remap_uncorrectable, g->remap_uncorrectable == 1 ? "" : "s");
    } else if (g->remap_pending) {
        add(res, GP_CHECK_REMAPPED_ROWS, i, GP_CHECK_WARNING,
            "a row remap is pending (XID 63): reset the GPU when idle");
    }
}

static void rule_retired(const gp_check_gpu *g, int i, const gp_check_expect *e,
                         gp_check_result *res)
{
    (void)e;
    if (g->retired_pending) {
        add(res, GP_CHECK_RETIRED_PAGES, i, GP_CHECK_WARNING,
            "a page retirement is pending: reset the GPU when idle");
    }
}

static void rule_recovery(const gp_check_gpu *g, int i, const gp_check_expect *e,
                          gp_check_result *res)
{
    (void)e;
    static const char *const what[] = {
        [GP_CHECK_RECOVERY_GPU_RESET] = "reset the GPU",
        [GP_CHECK_RECOVERY_NODE_REBOOT] = "reboot the node",
        [GP_CHECK_RECOVERY_DRAIN_P2P] = "drain peer-to-peer (NVLink) traffic, then check again",
        [GP_CHECK_RECOVERY_DRAIN_AND_RESET] = "the GPU runs at reduced capacity: drain, then reset",
    };
    int a = g->recovery_action;
    if (a == GP_CHECK_RECOVERY_NONE) {
        return;
    }
    if (a > 0 && a < (int)(sizeof(what) / sizeof(what[0]))) {
        add(res, GP_CHECK_RECOVERY_ACTION, i, GP_CHECK_FATAL, "NVML recovery action %d: %s", a,
            what[a]);
    } else {
        add(res, GP_CHECK_RECOVERY_ACTION, i, GP_CHECK_FATAL,
            "NVML recovery action %d (not known to gpupool): see the driver's documentation", a);
    }
}

typedef void (*rule_fn)(const gp_check_gpu *g, int i, const gp_check_expect *e,
                        gp_check_result *res);

static const struct per_gpu {
    gp_check_id id;
    size_t avail; /* offset of its gp_check_avail in gp_check_gpu */
    const char *function;
    rule_fn rule;
} per_gpu[] = {
    {GP_CHECK_NVLINK, offsetof(gp_check_gpu, nvlink), "nvmlDeviceGetNvLinkState", rule_nvlink},
    {GP_CHECK_MIG_MODE, offsetof(gp_check_gpu, mig), "nvmlDeviceGetMigMode", rule_mig},
    {GP_CHECK_ECC_MODE, offsetof(gp_check_gpu, ecc_mode), "nvmlDeviceGetEccMode", rule_ecc_mode},
    {GP_CHECK_ECC_ERRORS, offsetof(gp_check_gpu, ecc), "nvmlDeviceGetTotalEccErrors", rule_ecc},
    {GP_CHECK_REMAPPED_ROWS, offsetof(gp_check_gpu, remap), "nvmlDeviceGetRemappedRows",
     rule_remap},
    {GP_CHECK_RETIRED_PAGES, offsetof(gp_check_gpu, retired),
     "nvmlDeviceGetRetiredPagesPendingStatus", rule_retired},
    {GP_CHECK_RECOVERY_ACTION, offsetof(gp_check_gpu, recovery),
     "nvmlDeviceGetFieldValues (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)", rule_recovery},
};

static gp_check_avail avail_of(const gp_check_gpu *g, size_t off)
{
    gp_check_avail a;
    memcpy(&a, (const char *)g + off, sizeof(a));
    return a;
}

/* Runs check p on every usable GPU, then sets its status from what could be read. */
static void run_per_gpu(const struct per_gpu *p, const gp_check_readings *r,
                        const gp_check_expect *e, gp_check_result *res)
{
    int nread = 0, nusable = 0, missing = 0, failed = -1, links = 0;
    for (int i = 0; i < r->ngpus; i++) {
        const gp_check_gpu *g = &r->gpus[i];
        if (!usable(g)) {
            continue;
        }
        nusable++;
        switch (avail_of(g, p->avail)) {
        case GP_AVAIL_READ:
            nread++;
            links += popcount32(g->links_up);
            p->rule(g, i, e, res);
            break;
        case GP_AVAIL_MISSING:
            missing = 1;
            break;
        case GP_AVAIL_FAILED:
            failed = failed < 0 ? i : failed;
            break;
        case GP_AVAIL_NOT_SUPPORTED:
            break;
        }
    }
    gp_check_id c = p->id;
    if (res->status[c] == GP_CHECK_FAIL) {
        findings_on(res, c);
        return;
    }
    if (missing) {
        res->status[c] = GP_CHECK_UNKNOWN;
        detail(res, c, "%s is missing from the NVML library (an older driver)", p->function);
    } else if (failed >= 0) {
        res->status[c] = GP_CHECK_UNKNOWN;
        detail(res, c, "%s failed on GPU %d", p->function, failed);
    } else if (nread > 0 && c == GP_CHECK_NVLINK) {
        detail(res, c, "%d link%s active", links, links == 1 ? "" : "s");
    } else if (nread > 0) {
        detail(res, c, "%d GPU%s", nread, nread == 1 ? "" : "s");
    } else {
        res->status[c] = GP_CHECK_SKIPPED;
        detail(res, c, nusable ? "no GPU has it" : "no GPU to check");
    }
}

void gp_check_evaluate(const gp_check_readings *r, const gp_check_expect *e, gp_check_result *out)
{
    gp_check_expect none;
    if (!e) {
        gp_check_expect_init(&none);
        e = &none;
    }
    memset(out, 0, sizeof(*out));
    if (!r->driver_loaded) {
        for (int c = 0; c < GP_CHECK_COUNT; c++) {
            out->status[c] = GP_CHECK_UNKNOWN;
            detail(out, (gp_check_id)c, "NVML did not load");
        }
        detail(out, GP_CHECK_DRIVER, "not loaded");
        add(out, GP_CHECK_DRIVER, -1, GP_CHECK_FATAL, "NVML does not load: %s",
            r->driver_error[0] ? r->driver_error : "error");
        return;
    }
    check_driver(r, e, out);
    check_count(r, e, out);
    if (r->count < 0) {
        for (int c = GP_CHECK_GPU_VISIBLE; c < GP_CHECK_COUNT; c++) {
            out->status[c] = GP_CHECK_UNKNOWN;
            detail(out, (gp_check_id)c, "NVML cannot count the GPUs");
        }
        return;
    }
    check_visible(r, out);
    for (size_t k = 0; k < sizeof(per_gpu) / sizeof(per_gpu[0]); k++) {
        run_per_gpu(&per_gpu[k], r, e, out);
    }
}

/* ---- JSON ---- */

static json_t *finding_json(const gp_check_finding *f)
{
    return json_pack("{s:s, s:i, s:s, s:s}", "check", gp_check_name(f->check), "gpu", f->gpu,
                     "severity", gp_check_severity_name(f->severity), "message", f->message);
}

json_t *gp_check_findings_json(const gp_check_result *res)
{
    json_t *a = json_array();
    for (int i = 0; a && i < res->nfindings; i++) {
        json_t *f = finding_json(&res->findings[i]);
        if (!f || json_array_append_new(a, f) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *gp_check_result_json(const gp_check_result *res, const gp_check_readings *r)
{
    json_t *checks = json_array();
    for (int c = 0; checks && c < GP_CHECK_COUNT; c++) {
        json_t *o = json_pack("{s:s, s:s, s:s}", "check", gp_check_name((gp_check_id)c), "status",
                              gp_check_status_name(res->status[c]), "detail", res->detail[c]);
        if (!o || json_array_append_new(checks, o) < 0) {
            json_decref(checks);
            checks = NULL;
        }
    }
    json_t *findings = gp_check_findings_json(res);
    if (!checks || !findings) {
        json_decref(checks);
        json_decref(findings);
        return NULL;
    }
    return json_pack("{s:b, s:i, s:i, s:s, s:i, s:o, s:o}", "ok", res->fatal == 0, "fatal",
                     res->fatal, "warnings", res->nfindings - res->fatal, "driver_version",
                     r->driver_version, "gpu_count", r->count, "checks", checks, "findings",
                     findings);
}
