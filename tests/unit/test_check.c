/* The node health check's rules (src/agent/check.c) on hand-made readings: every check passes on
 * a healthy node; each fault gives its finding with the right check, GPU and severity; a reading
 * the library cannot give makes its check unknown (never failed), a feature no GPU has makes it
 * skipped; a lost GPU counts only for gpu_visible; NVLink links seen before and lost are fatal;
 * driver versions compare by number; the JSON documents carry every check and finding. */
#include "agent/check.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

static gp_check_readings rd;
static gp_check_expect ex;
static gp_check_result res;

/* n healthy GPUs: 12 NVLink links each (all active), MIG off, ECC on, nothing pending. */
static void healthy(int n)
{
    gp_check_readings_init(&rd);
    gp_check_expect_init(&ex);
    rd.driver_loaded = 1;
    snprintf(rd.driver_version, sizeof(rd.driver_version), "550.54.15");
    rd.count = rd.ngpus = n;
    for (int i = 0; i < n; i++) {
        gp_check_gpu *g = &rd.gpus[i];
        g->visible = 1;
        snprintf(g->uuid, sizeof(g->uuid), "GPU-%d", i);
        g->nvlink = GP_AVAIL_READ;
        g->nlinks = 12;
        g->links_up = 0xfff;
        g->mig = g->ecc_mode = g->ecc = g->remap = g->retired = g->recovery = GP_AVAIL_READ;
        g->ecc_current = g->ecc_pending = 1;
        g->dbe_aggregate = 0;
    }
}

static void evaluate(void)
{
    gp_check_evaluate(&rd, &ex, &res);
}

static void expect_status(gp_check_id c, gp_check_status want)
{
    if (res.status[c] != want) {
        fail_msg("check %s: status %s (%s), expected %s", gp_check_name(c),
                 gp_check_status_name(res.status[c]), res.detail[c], gp_check_status_name(want));
    }
}

/* The only finding is of check c, on GPU gpu, with severity sev and a message containing text. */
static void expect_only(gp_check_id c, int gpu, gp_check_severity sev, const char *text)
{
    if (res.nfindings != 1) {
        fail_msg("%d findings, expected 1 (%s)", res.nfindings,
                 res.nfindings ? res.findings[0].message : "none");
    }
    const gp_check_finding *f = &res.findings[0];
    assert_string_equal(gp_check_name(f->check), gp_check_name(c));
    assert_int_equal(f->gpu, gpu);
    assert_string_equal(gp_check_severity_name(f->severity), gp_check_severity_name(sev));
    if (!strstr(f->message, text)) {
        fail_msg("message \"%s\" lacks \"%s\"", f->message, text);
    }
    assert_int_equal(res.fatal, sev == GP_CHECK_FATAL);
    expect_status(c, GP_CHECK_FAIL);
    for (int k = 0; k < GP_CHECK_COUNT; k++) { /* the others pass */
        if (k != (int)c) {
            expect_status((gp_check_id)k, GP_CHECK_PASS);
        }
    }
}

static void test_healthy(void **state)
{
    (void)state;
    healthy(8);
    ex.gpus = 8;
    snprintf(ex.driver_min, sizeof(ex.driver_min), "535.104.05");
    snprintf(ex.driver_seen, sizeof(ex.driver_seen), "550.54.15");
    evaluate();
    assert_int_equal(res.nfindings, 0);
    assert_int_equal(res.fatal, 0);
    for (int c = 0; c < GP_CHECK_COUNT; c++) {
        expect_status((gp_check_id)c, GP_CHECK_PASS);
    }
    assert_string_equal(res.detail[GP_CHECK_DRIVER], "550.54.15");
    assert_string_equal(res.detail[GP_CHECK_GPU_COUNT], "8 GPUs");
    assert_string_equal(res.detail[GP_CHECK_NVLINK], "96 links active");
    /* No expectations at all: the same. */
    gp_check_evaluate(&rd, NULL, &res);
    assert_int_equal(res.nfindings, 0);
}

static void test_names(void **state)
{
    (void)state;
    static const char *const want[] = {
        "driver",   "gpu_count",  "gpu_visible",   "nvlink",        "mig_mode",
        "ecc_mode", "ecc_errors", "remapped_rows", "retired_pages", "recovery_action"};
    assert_int_equal(GP_CHECK_COUNT, 10);
    for (int c = 0; c < GP_CHECK_COUNT; c++) {
        assert_string_equal(gp_check_name((gp_check_id)c), want[c]);
    }
    assert_string_equal(gp_check_status_name(GP_CHECK_SKIPPED), "skipped");
    assert_string_equal(gp_check_severity_name(GP_CHECK_FATAL), "fatal");
    assert_string_equal(gp_check_severity_name(GP_CHECK_WARNING), "warning");
}

static void test_not_loaded(void **state)
{
    (void)state;
    gp_check_readings_init(&rd);
    gp_check_expect_init(&ex);
    snprintf(rd.driver_error, sizeof(rd.driver_error), "cannot load NVML library /x.so");
    evaluate();
    expect_status(GP_CHECK_DRIVER, GP_CHECK_FAIL);
    for (int c = GP_CHECK_GPU_COUNT; c < GP_CHECK_COUNT; c++) {
        expect_status((gp_check_id)c, GP_CHECK_UNKNOWN);
    }
    assert_int_equal(res.nfindings, 1);
    assert_int_equal(res.fatal, 1);
    assert_int_equal(res.findings[0].gpu, -1);
    assert_non_null(strstr(res.findings[0].message, "cannot load NVML library /x.so"));
}

static void test_version_cmp(void **state)
{
    (void)state;
    int c = 99;
    assert_int_equal(gp_check_version_cmp("550.54.15", "535.104", &c), 0);
    assert_true(c > 0);
    assert_int_equal(gp_check_version_cmp("535.54.15", "535.104", &c), 0);
    assert_true(c < 0); /* by number, not by text */
    assert_int_equal(gp_check_version_cmp("535", "535.0.0", &c), 0);
    assert_int_equal(c, 0);
    assert_int_equal(gp_check_version_cmp("535.104.05", "535.104.5", &c), 0);
    assert_int_equal(c, 0);
    assert_int_equal(gp_check_version_cmp("9.1", "10", &c), 0);
    assert_true(c < 0);
    c = 99;
    static const char *const bad[] = {"", "abc", "1..2", "1.", ".1", "550.54.15-beta", "1.-2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (gp_check_version_cmp(bad[i], "1", &c) != GP_EINVAL ||
            gp_check_version_cmp("1", bad[i], &c) != GP_EINVAL) {
            fail_msg("\"%s\" accepted as a version", bad[i]);
        }
    }
    assert_int_equal(c, 99);
}

static void test_driver(void **state)
{
    (void)state;
    healthy(2);
    snprintf(ex.driver_min, sizeof(ex.driver_min), "555");
    evaluate();
    expect_only(GP_CHECK_DRIVER, -1, GP_CHECK_FATAL,
                "driver 550.54.15 is older than the required 555");
    snprintf(ex.driver_min, sizeof(ex.driver_min), "550.54.15");
    evaluate();
    assert_int_equal(res.nfindings, 0);
    /* A version that cannot be read or compared: a warning, not fatal. */
    rd.driver_version[0] = '\0';
    evaluate();
    expect_only(GP_CHECK_DRIVER, -1, GP_CHECK_WARNING, "cannot be read");
    assert_string_equal(res.detail[GP_CHECK_DRIVER], "version unknown");
    snprintf(rd.driver_version, sizeof(rd.driver_version), "550.54.15-custom");
    evaluate();
    expect_only(GP_CHECK_DRIVER, -1, GP_CHECK_WARNING, "cannot be compared");
    /* Changed since the agent started. */
    healthy(2);
    snprintf(ex.driver_seen, sizeof(ex.driver_seen), "535.104.05");
    evaluate();
    expect_only(GP_CHECK_DRIVER, -1, GP_CHECK_WARNING,
                "the driver is now 550.54.15; the agent started with 535.104.05");
}

static void test_count(void **state)
{
    (void)state;
    healthy(7);
    ex.gpus = 8;
    evaluate();
    expect_only(GP_CHECK_GPU_COUNT, -1, GP_CHECK_FATAL, "NVML counts 7 GPUs, 8 expected");
    /* NVML cannot count: fatal, and nothing else can be checked. */
    healthy(0);
    rd.count = -1;
    snprintf(rd.count_error, sizeof(rd.count_error), "nvmlDeviceGetCount_v2: Unknown Error");
    evaluate();
    assert_int_equal(res.nfindings, 1);
    expect_status(GP_CHECK_GPU_COUNT, GP_CHECK_FAIL);
    assert_non_null(strstr(res.findings[0].message, "nvmlDeviceGetCount_v2: Unknown Error"));
    for (int c = GP_CHECK_GPU_VISIBLE; c < GP_CHECK_COUNT; c++) {
        expect_status((gp_check_id)c, GP_CHECK_UNKNOWN);
    }
    /* No GPUs at all, none expected: nothing to check per GPU. */
    healthy(0);
    evaluate();
    assert_int_equal(res.nfindings, 0);
    expect_status(GP_CHECK_GPU_VISIBLE, GP_CHECK_PASS);
    expect_status(GP_CHECK_ECC_ERRORS, GP_CHECK_SKIPPED);
    assert_string_equal(res.detail[GP_CHECK_ECC_ERRORS], "no GPU to check");
}

static void test_lost(void **state)
{
    (void)state;
    healthy(4);
    gp_check_gpu *g = &rd.gpus[2];
    g->lost = 1;
    g->dbe_volatile = 5; /* readings of a lost GPU do not count */
    g->links_up = 0;     /* nor its links */
    ex.links_up[2] = 0xfff;
    evaluate();
    expect_only(GP_CHECK_GPU_VISIBLE, 2, GP_CHECK_FATAL, "GPU 2 GPU-2 fell off the bus");
    assert_string_equal(res.detail[GP_CHECK_GPU_VISIBLE], "on GPU 2");
    assert_string_equal(res.detail[GP_CHECK_ECC_ERRORS], "3 GPUs");
    /* A GPU whose handle NVML refuses: not visible. */
    healthy(4);
    rd.gpus[1].visible = 0;
    rd.gpus[1].uuid[0] = '\0';
    snprintf(rd.gpus[1].error, sizeof(rd.gpus[1].error), "nvmlDeviceGetUUID: Unknown Error");
    evaluate();
    expect_only(GP_CHECK_GPU_VISIBLE, 1, GP_CHECK_FATAL,
                "GPU 1 does not answer: nvmlDeviceGetUUID: Unknown Error");
    /* Every GPU lost: the per-GPU checks have none left to check. */
    healthy(2);
    rd.gpus[0].lost = rd.gpus[1].lost = 1;
    evaluate();
    assert_int_equal(res.nfindings, 2);
    assert_int_equal(res.fatal, 2);
    expect_status(GP_CHECK_REMAPPED_ROWS, GP_CHECK_SKIPPED);
}

static void test_nvlink(void **state)
{
    (void)state;
    /* A link that was active before and is down now: fatal, naming the links. */
    healthy(8);
    for (int i = 0; i < 8; i++) {
        ex.links_up[i] = 0xfff;
    }
    rd.gpus[3].links_up = 0xfff & ~(1u << 2) & ~(1u << 7);
    evaluate();
    expect_only(GP_CHECK_NVLINK, 3, GP_CHECK_FATAL, "NVLink links 2, 7 down (active before");
    /* Without that memory: inactive links beside active ones are a warning. */
    gp_check_expect_init(&ex);
    evaluate();
    expect_only(GP_CHECK_NVLINK, 3, GP_CHECK_WARNING,
                "NVLink links 2, 7 inactive while 10 others are active");
    /* A GPU whose links are all inactive and were never seen active: nothing to say. */
    healthy(2);
    rd.gpus[1].links_up = 0;
    evaluate();
    assert_int_equal(res.nfindings, 0);
    assert_string_equal(res.detail[GP_CHECK_NVLINK], "12 links active");
    /* GPUs without NVLink: skipped, not passed. */
    healthy(4);
    for (int i = 0; i < 4; i++) {
        rd.gpus[i].nvlink = GP_AVAIL_NOT_SUPPORTED;
        rd.gpus[i].nlinks = 0;
        rd.gpus[i].links_up = 0;
    }
    evaluate();
    assert_int_equal(res.nfindings, 0);
    expect_status(GP_CHECK_NVLINK, GP_CHECK_SKIPPED);
    assert_string_equal(res.detail[GP_CHECK_NVLINK], "no GPU has it");
}

static void test_remember_links(void **state)
{
    (void)state;
    healthy(3);
    rd.gpus[0].links_up = 0x3;
    rd.gpus[1].lost = 1; /* a lost GPU's links are not remembered */
    rd.gpus[1].links_up = 0xff;
    rd.gpus[2].nvlink = GP_AVAIL_FAILED;
    gp_check_remember_links(&rd, &ex);
    assert_int_equal(ex.links_up[0], 0x3);
    assert_int_equal(ex.links_up[1], 0);
    assert_int_equal(ex.links_up[2], 0);
    rd.gpus[0].links_up = 0x4; /* a union over the checks */
    gp_check_remember_links(&rd, &ex);
    assert_int_equal(ex.links_up[0], 0x7);
    /* Link 0 going down later is now fatal. */
    rd.gpus[0].links_up = 0x6;
    rd.gpus[1].lost = 0;
    rd.gpus[2].nvlink = GP_AVAIL_READ;
    rd.gpus[0].nlinks = 3;
    evaluate();
    assert_int_equal(res.status[GP_CHECK_NVLINK], GP_CHECK_FAIL);
    assert_non_null(strstr(res.findings[0].message, "NVLink link 0 down"));
}

static void test_modes(void **state)
{
    (void)state;
    healthy(4);
    rd.gpus[1].mig_current = 0;
    rd.gpus[1].mig_pending = 1;
    evaluate();
    expect_only(GP_CHECK_MIG_MODE, 1, GP_CHECK_WARNING,
                "MIG mode is off and will be on after a reset: reset the GPU");
    healthy(4);
    rd.gpus[2].ecc_pending = 0;
    evaluate();
    expect_only(GP_CHECK_ECC_MODE, 2, GP_CHECK_WARNING, "ECC is on and will be off after a reset");
}

static void test_ecc(void **state)
{
    (void)state;
    healthy(4);
    rd.gpus[3].dbe_volatile = 2;
    rd.gpus[3].dbe_aggregate = 7;
    evaluate();
    expect_only(GP_CHECK_ECC_ERRORS, 3, GP_CHECK_FATAL,
                "2 uncorrected (double-bit) ECC errors since the driver loaded (XID 48)");
    healthy(4);
    rd.gpus[0].dbe_aggregate = 1;
    evaluate();
    expect_only(GP_CHECK_ECC_ERRORS, 0, GP_CHECK_WARNING,
                "1 uncorrected ECC error over the GPU's life");
    healthy(4);
    rd.gpus[0].dbe_aggregate = -1; /* that counter unreadable: nothing to say */
    evaluate();
    assert_int_equal(res.nfindings, 0);
}

static void test_remap_retire(void **state)
{
    (void)state;
    healthy(4);
    rd.gpus[0].remap_failed = 1;
    rd.gpus[0].remap_pending = 1;
    rd.gpus[0].remap_uncorrectable = 3;
    evaluate();
    expect_only(GP_CHECK_REMAPPED_ROWS, 0, GP_CHECK_FATAL,
                "row remapping failed (XID 64; 3 rows remapped");
    healthy(4);
    rd.gpus[2].remap_pending = 1;
    evaluate();
    expect_only(GP_CHECK_REMAPPED_ROWS, 2, GP_CHECK_WARNING, "a row remap is pending (XID 63)");
    healthy(4);
    rd.gpus[1].retired_pending = 1;
    evaluate();
    expect_only(GP_CHECK_RETIRED_PAGES, 1, GP_CHECK_WARNING, "page retirement is pending");
}

static void test_recovery(void **state)
{
    (void)state;
    static const char *const what[] = {"", "reset the GPU", "reboot the node", "drain peer-to-peer",
                                       "reduced capacity"};
    for (int a = 1; a <= 4; a++) {
        healthy(2);
        rd.gpus[1].recovery_action = a;
        evaluate();
        expect_only(GP_CHECK_RECOVERY_ACTION, 1, GP_CHECK_FATAL, what[a]);
    }
    healthy(2);
    rd.gpus[0].recovery_action = 9;
    evaluate();
    expect_only(GP_CHECK_RECOVERY_ACTION, 0, GP_CHECK_FATAL, "9 (not known to gpupool)");
}

/* Readings the library cannot give: unknown, never a finding. */
static void test_unreadable(void **state)
{
    (void)state;
    healthy(4);
    for (int i = 0; i < 4; i++) {
        rd.gpus[i].remap = GP_AVAIL_MISSING;
        rd.gpus[i].remap_failed = 1; /* ignored: not read */
        rd.gpus[i].recovery = GP_AVAIL_MISSING;
        rd.gpus[i].mig = GP_AVAIL_NOT_SUPPORTED;
        rd.gpus[i].mig_pending = 1; /* likewise */
    }
    rd.gpus[2].ecc_mode = GP_AVAIL_FAILED;
    rd.gpus[3].retired = GP_AVAIL_NOT_SUPPORTED; /* the others read: pass */
    evaluate();
    assert_int_equal(res.nfindings, 0);
    assert_int_equal(res.fatal, 0);
    expect_status(GP_CHECK_REMAPPED_ROWS, GP_CHECK_UNKNOWN);
    assert_string_equal(res.detail[GP_CHECK_REMAPPED_ROWS],
                        "nvmlDeviceGetRemappedRows is missing from the NVML library (an older "
                        "driver)");
    expect_status(GP_CHECK_RECOVERY_ACTION, GP_CHECK_UNKNOWN);
    expect_status(GP_CHECK_MIG_MODE, GP_CHECK_SKIPPED);
    expect_status(GP_CHECK_ECC_MODE, GP_CHECK_UNKNOWN);
    assert_string_equal(res.detail[GP_CHECK_ECC_MODE], "nvmlDeviceGetEccMode failed on GPU 2");
    expect_status(GP_CHECK_RETIRED_PAGES, GP_CHECK_PASS);
    assert_string_equal(res.detail[GP_CHECK_RETIRED_PAGES], "3 GPUs");
    /* A finding on another GPU still fails the check. */
    rd.gpus[0].ecc_pending = 0;
    evaluate();
    expect_status(GP_CHECK_ECC_MODE, GP_CHECK_FAIL);
}

/* Several faults at once: one finding each, in check order then GPU order; fatal counted. */
static void test_many(void **state)
{
    (void)state;
    healthy(8);
    ex.gpus = 8;
    rd.gpus[7].lost = 1;
    rd.gpus[5].dbe_volatile = 1;
    rd.gpus[0].remap_failed = 1;
    rd.gpus[1].remap_pending = 1;
    rd.gpus[6].recovery_action = 2;
    evaluate();
    assert_int_equal(res.nfindings, 5);
    assert_int_equal(res.fatal, 4);
    static const struct {
        gp_check_id c;
        int gpu;
    } want[] = {{GP_CHECK_GPU_VISIBLE, 7},
                {GP_CHECK_ECC_ERRORS, 5},
                {GP_CHECK_REMAPPED_ROWS, 0},
                {GP_CHECK_REMAPPED_ROWS, 1},
                {GP_CHECK_RECOVERY_ACTION, 6}};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(res.findings[k].check, want[k].c);
        assert_int_equal(res.findings[k].gpu, want[k].gpu);
    }
    assert_string_equal(res.detail[GP_CHECK_REMAPPED_ROWS], "on GPUs 0, 1");
}

static void test_json(void **state)
{
    (void)state;
    healthy(2);
    rd.gpus[1].remap_failed = 1;
    rd.gpus[0].retired_pending = 1;
    evaluate();
    json_t *f = gp_check_findings_json(&res);
    assert_non_null(f);
    assert_int_equal(json_array_size(f), 2);
    const char *check = NULL, *sev = NULL, *msg = NULL;
    int gpu = -5;
    assert_int_equal(json_unpack(json_array_get(f, 0), "{s:s, s:i, s:s, s:s !}", "check", &check,
                                 "gpu", &gpu, "severity", &sev, "message", &msg),
                     0);
    assert_string_equal(check, "remapped_rows");
    assert_int_equal(gpu, 1);
    assert_string_equal(sev, "fatal");
    assert_non_null(strstr(msg, "row remapping failed"));
    json_decref(f);

    json_t *doc = gp_check_result_json(&res, &rd);
    assert_non_null(doc);
    int ok = -1, fatal = -1, warnings = -1, count = -1;
    const char *version = NULL;
    json_t *checks = NULL, *findings = NULL;
    assert_int_equal(json_unpack(doc, "{s:b, s:i, s:i, s:s, s:i, s:o, s:o !}", "ok", &ok, "fatal",
                                 &fatal, "warnings", &warnings, "driver_version", &version,
                                 "gpu_count", &count, "checks", &checks, "findings", &findings),
                     0);
    assert_false(ok);
    assert_int_equal(fatal, 1);
    assert_int_equal(warnings, 1);
    assert_string_equal(version, "550.54.15");
    assert_int_equal(count, 2);
    assert_int_equal(json_array_size(checks), GP_CHECK_COUNT);
    assert_int_equal(json_array_size(findings), 2);
    for (int c = 0; c < GP_CHECK_COUNT; c++) {
        const char *name = NULL, *status = NULL, *det = NULL;
        assert_int_equal(json_unpack(json_array_get(checks, (size_t)c), "{s:s, s:s, s:s !}",
                                     "check", &name, "status", &status, "detail", &det),
                         0);
        assert_string_equal(name, gp_check_name((gp_check_id)c));
        assert_string_equal(
            status, c == GP_CHECK_REMAPPED_ROWS || c == GP_CHECK_RETIRED_PAGES ? "fail" : "pass");
    }
    json_decref(doc);
    /* A healthy node: ok, and no conditions. */
    healthy(2);
    evaluate();
    doc = gp_check_result_json(&res, &rd);
    assert_true(json_is_true(json_object_get(doc, "ok")));
    json_decref(doc);
    f = gp_check_findings_json(&res);
    assert_int_equal(json_array_size(f), 0);
    json_decref(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_not_loaded),
        cmocka_unit_test(test_version_cmp),
        cmocka_unit_test(test_driver),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_lost),
        cmocka_unit_test(test_nvlink),
        cmocka_unit_test(test_remember_links),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_ecc),
        cmocka_unit_test(test_remap_retire),
        cmocka_unit_test(test_recovery),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_many),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
