/* GPU discovery through NVML (src/agent/nvml.c) against the mock NVML library
 * (libgpupool-nvml-mock.so): the shipped inventories are discovered as written, bad inventories
 * and libraries fail with errors that say where, the control file injects XIDs, a GPU falling
 * off the bus, spikes, busy MIG instances, processes using GPU memory and the faults the health
 * check reads (gp_nvml_health: ECC errors, row remaps, NVLink links down, pending mode changes,
 * the driver version, recovery actions), with clear errors for bad commands, and the
 * registration document is one the
 * controller accepts. MIG instances on demand (src/agent/mig.c): reused, created, replaced, or
 * refused with the layout left as it was. */
#include "agent/discover.h"
#include "agent/mig.h"
#include "agent/nvml.h"
#include "agent/nvml_abi.h"
#include "ctl/ctl.h"
#include "net/yaml_json.h"
#include "tests/unit/harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef GP_NVML_MOCK
#error "GP_NVML_MOCK: the path of libgpupool-nvml-mock.so"
#endif

static char tmpdir[] = "/tmp/gp-test-nvml-XXXXXX";
/* MOCK_MAX_PROCS of src/nvml-mock/mock.h: processes the control file runs per GPU. */
#define MOCK_PROCS_LIMIT 32

#define INV(name) GP_INVENTORIES "/" name

static void write_file(const char *path, const char *text, const char *mode)
{
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void tmp_path(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", tmpdir, name);
}

/* The handles a test has open: closed after each test, so that a failed test (which returns
 * before closing) does not leave NVML initialised with its inventory for the next ones. */
static gp_nvml *opened[4];

static void close_mock(gp_nvml *h)
{
    for (int i = 0; i < 4; i++) {
        opened[i] = opened[i] == h ? NULL : opened[i];
    }
    gp_nvml_close(h);
}

static int close_all(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        close_mock(opened[i]);
    }
    return 0;
}

/* Opens the mock on inventory; control (a path or NULL) is the control file. */
static gp_nvml *open_mock(const char *inventory, const char *control)
{
    setenv("GPUPOOL_NVML_MOCK_INVENTORY", inventory, 1);
    if (control) {
        setenv("GPUPOOL_NVML_MOCK_CONTROL", control, 1);
    } else {
        unsetenv("GPUPOOL_NVML_MOCK_CONTROL");
    }
    gp_nvml *h = NULL;
    gp_diag d;
    int rc = gp_nvml_open(GP_NVML_MOCK, &h, &d);
    if (rc != 0) {
        fail_msg("gp_nvml_open(%s): %s \"%s\"", inventory, gp_strerror_name(rc), d.msg);
    }
    for (int i = 0; i < 4; i++) {
        if (!opened[i]) {
            opened[i] = h;
            break;
        }
    }
    return h;
}

static void discover(gp_nvml *h, gp_nvml_inv *inv)
{
    gp_diag d;
    int rc = gp_nvml_inventory(h, inv, &d);
    if (rc != 0) {
        fail_msg("gp_nvml_inventory: %s \"%s\"", gp_strerror_name(rc), d.msg);
    }
}

/* A GPU field of the inventory file: the GPU's own, else the defaults'. */
static json_t *field(json_t *top, json_t *gpu, const char *key)
{
    json_t *v = json_object_get(gpu, key);
    return v ? v : json_object_get(json_object_get(top, "defaults"), key);
}

/* Compares one GPU's MIG devices with its `mig:` entry. */
static void check_mig(const gp_nvml_gpu *g, json_t *mig)
{
    json_t *inst = json_object_get(mig, "instances");
    assert_int_equal(g->mig_mode, mig ? json_is_true(json_object_get(mig, "enabled")) : -1);
    assert_int_equal(g->nmig, (int)json_array_size(inst));
    for (int k = 0; k < g->nmig; k++) {
        json_t *m = json_array_get(inst, (size_t)k);
        assert_string_equal(g->mig[k].uuid, json_string_value(json_object_get(m, "uuid")));
        assert_string_equal(g->mig[k].profile, json_string_value(json_object_get(m, "profile")));
        assert_int_equal(g->mig[k].memory_mib,
                         json_integer_value(json_object_get(m, "memory_mib")));
        json_t *start = json_object_get(m, "start");
        if (start) {
            assert_int_equal(g->mig[k].start, json_integer_value(start));
        }
        assert_int_equal(g->mig[k].gpu_instance, k + 1); /* ids in listed order */
        assert_int_equal(g->mig[k].compute_instance, 0); /* one taking all of it */
    }
}

/* Discovery must report exactly what the inventory file says. */
static void check_against_file(const gp_nvml_inv *inv, const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    json_t *top = NULL;
    gp_diag d;
    assert_int_equal(gp_yaml_to_json(text, len, &top, &d), 0);
    json_t *gpus = json_object_get(top, "gpus");
    assert_int_equal(inv->ngpus, (int)json_array_size(gpus));
    uint32_t switched = 0;
    for (int i = 0; i < inv->ngpus; i++) {
        json_t *g = json_array_get(gpus, (size_t)i);
        switched |= json_integer_value(field(top, g, "nvswitch_links")) > 0 ? 1u << i : 0;
    }
    for (int i = 0; i < inv->ngpus; i++) {
        const gp_nvml_gpu *got = &inv->gpus[i];
        json_t *g = json_array_get(gpus, (size_t)i);
        assert_int_equal(got->index, i);
        assert_string_equal(got->uuid, json_string_value(field(top, g, "uuid")));
        assert_string_equal(got->name, json_string_value(field(top, g, "name")));
        assert_int_equal(got->memory_mib, json_integer_value(field(top, g, "memory_mib")));
        assert_string_equal(got->pci_bus_id, json_string_value(field(top, g, "pci_bus_id")));
        json_t *numa = field(top, g, "numa");
        assert_int_equal(got->numa, numa ? json_integer_value(numa) : -1);
        json_t *minor = json_object_get(g, "minor"); /* default: the index */
        assert_int_equal(got->minor, minor ? json_integer_value(minor) : i);
        uint32_t want = switched & (1u << i) ? switched & ~(1u << i) : 0;
        size_t k;
        json_t *p;
        json_array_foreach(field(top, g, "nvlink"), k, p)
        {
            want |= 1u << json_integer_value(p);
        }
        assert_int_equal(got->nvlink, want);
        json_t *mig = field(top, g, "mig");
        check_mig(got, json_is_object(mig) ? mig : NULL);
    }
    for (int i = 0; i < inv->ngpus; i++) { /* symmetric */
        for (int j = 0; j < inv->ngpus; j++) {
            assert_int_equal(!!(inv->gpus[i].nvlink & (1u << j)),
                             !!(inv->gpus[j].nvlink & (1u << i)));
        }
    }
    json_decref(top);
}

static void test_dgx(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("dgx-a100.yaml"), NULL);
    static gp_nvml_inv inv;
    discover(h, &inv);
    check_against_file(&inv, INV("dgx-a100.yaml"));
    assert_string_equal(inv.driver_version, "550.54.15");
    assert_string_equal(inv.cuda_version, "12.4");
    assert_int_equal(inv.ngpus, 8);
    for (int i = 0; i < 8; i++) {
        assert_string_equal(inv.gpus[i].name, "NVIDIA A100-SXM4-80GB");
        assert_int_equal(inv.gpus[i].memory_mib, 81920);
        assert_int_equal(inv.gpus[i].numa, i < 4 ? 0 : 1);
        assert_int_equal(inv.gpus[i].nvlink, 0xffu & ~(1u << i)); /* all-to-all via NVSwitch */
        assert_int_equal(inv.gpus[i].mig_mode, 0);
    }
    assert_string_equal(inv.gpus[0].uuid, "GPU-4b1a7e2c-0f3d-4c55-9a61-3e1f0b6a7c01");
    assert_string_equal(inv.gpus[7].pci_bus_id, "00000000:BD:00.0");
    close_mock(h);
}

static void test_t4(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"), NULL);
    static gp_nvml_inv inv;
    discover(h, &inv);
    check_against_file(&inv, INV("pcie-t4.yaml"));
    assert_int_equal(inv.ngpus, 4);
    for (int i = 0; i < 4; i++) {
        assert_string_equal(inv.gpus[i].name, "Tesla T4");
        assert_int_equal(inv.gpus[i].nvlink, 0);
        assert_int_equal(inv.gpus[i].mig_mode, -1);
        assert_int_equal(inv.gpus[i].numa, i / 2);
    }
    close_mock(h);
}

static void test_h100_mig(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), NULL);
    static gp_nvml_inv inv;
    discover(h, &inv);
    check_against_file(&inv, INV("h100-mig.yaml"));
    assert_int_equal(inv.ngpus, 4);
    static const int mode[] = {1, 1, 1, 0}, nmig[] = {4, 7, 0, 0};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(inv.gpus[i].name, "NVIDIA H100 80GB HBM3");
        assert_int_equal(inv.gpus[i].nvlink, 0xfu & ~(1u << i)); /* direct links */
        assert_int_equal(inv.gpus[i].mig_mode, mode[i]);
        assert_int_equal(inv.gpus[i].nmig, nmig[i]);
    }
    assert_string_equal(inv.gpus[0].mig[0].profile, "3g.40gb");
    assert_string_equal(inv.gpus[0].mig[1].profile, "2g.20gb");
    assert_string_equal(inv.gpus[1].mig[6].profile, "1g.10gb");
    assert_string_equal(inv.gpus[1].mig[6].uuid, "MIG-0e1f2a3b-4c5d-5e6f-a07b-9c0d1e2f3a17");
    assert_int_equal(inv.gpus[0].mig[0].memory_mib, 40192);
    /* Placements: GPU 0 is full (3g at 4-7, 2g at 0-1, 1g at 2 and 3), GPU 1 has 1g at 0..6. */
    static const int start0[] = {4, 0, 2, 3}, size0[] = {4, 2, 1, 1};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(inv.gpus[0].mig[k].start, start0[k]);
        assert_int_equal(inv.gpus[0].mig[k].size, size0[k]);
        assert_int_equal(inv.gpus[0].mig[k].gpu_instance, k + 1);
    }
    for (int k = 0; k < 7; k++) {
        assert_int_equal(inv.gpus[1].mig[k].start, k);
        assert_int_equal(inv.gpus[1].mig[k].size, 1);
    }
    /* A GPU in MIG mode has no whole-GPU utilisation; the others do. */
    gp_nvml_readings r;
    gp_diag d;
    assert_int_equal(gp_nvml_sample(h, 0, &r, &d), 0);
    assert_int_equal(r.util_gpu, -1);
    assert_int_equal(r.temperature_c >= 35 && r.temperature_c <= 70, 1);
    assert_int_equal(gp_nvml_sample(h, 3, &r, &d), 0);
    assert_true(r.util_gpu == 0 || r.util_gpu == 100);
    close_mock(h);
}

static void test_sample_patterns(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"), NULL);
    gp_nvml_readings r;
    gp_diag d;
    for (int i = 0; i < gp_nvml_count(h); i++) {
        assert_int_equal(gp_nvml_sample(h, i, &r, &d), 0);
        assert_true(r.util_gpu == 0 || r.util_gpu == 35 || r.util_gpu == 80); /* step */
        assert_int_equal(r.util_memory, 15);                                  /* constant */
        assert_int_equal(r.memory_used_mib, 1024);
        assert_true(r.temperature_c >= 34 && r.temperature_c <= 68); /* sine */
        assert_true(r.power_w >= 12 && r.power_w <= 68);
        assert_int_equal(r.sm_clock_mhz, 1590);
        assert_int_equal(r.memory_clock_mhz, 5000);
        assert_int_equal(r.ecc_corrected, 0);
        assert_int_equal(r.ecc_uncorrected, 0);
    }
    assert_int_equal(gp_nvml_sample(h, 4, &r, &d), GP_EINVAL);
    close_mock(h);
}

static void test_missing_library(void **state)
{
    (void)state;
    gp_nvml *h = (gp_nvml *)1;
    gp_diag d;
    assert_int_equal(gp_nvml_open("/nonexistent/dir/libnvidia-ml.so.1", &h, &d), GP_ENOENT);
    assert_null(h);
    assert_non_null(strstr(d.msg, "/nonexistent/dir/libnvidia-ml.so.1"));
}

static void test_missing_symbol(void **state)
{
    (void)state;
    gp_nvml *h = (gp_nvml *)1;
    gp_diag d;
    assert_int_equal(gp_nvml_open(GP_NVML_STUB, &h, &d), GP_ENOTSUP);
    assert_null(h);
    if (!strstr(d.msg, "lacks nvmlShutdown") || !strstr(d.msg, GP_NVML_STUB)) {
        fail_msg("message \"%s\" names neither nvmlShutdown nor the library", d.msg);
    }
}

/* An inventory that must make nvmlInit_v2 fail with a message containing "FILE" + where. */
static void expect_bad(const char *yaml, const char *where)
{
    char path[256], want[512];
    tmp_path(path, sizeof(path), "bad.yaml");
    write_file(path, yaml, "w");
    setenv("GPUPOOL_NVML_MOCK_INVENTORY", path, 1);
    gp_nvml *h = NULL;
    gp_diag d;
    int rc = gp_nvml_open(GP_NVML_MOCK, &h, &d);
    snprintf(want, sizeof(want), "%s%s", path, where);
    if (rc == 0 || !strstr(d.msg, want)) {
        close_mock(h);
        fail_msg("got %s \"%s\", expected a failure with \"%s\"", gp_strerror_name(rc), d.msg,
                 want);
    }
    assert_null(h);
}

#define T4(extra)                                                                                  \
    "gpus:\n"                                                                                      \
    "  - uuid: GPU-0\n"                                                                            \
    "    name: Tesla T4\n"                                                                         \
    "    memory_mib: 15360\n" extra

/* One H100 in MIG mode with the instances in extra (items start on line 8). */
#define H100(extra)                                                                                \
    "gpus:\n"                                                                                      \
    "  - uuid: GPU-0\n"                                                                            \
    "    name: NVIDIA H100 80GB HBM3\n"                                                            \
    "    memory_mib: 81559\n"                                                                      \
    "    mig:\n"                                                                                   \
    "      enabled: true\n"                                                                        \
    "      instances:\n" extra

static void test_bad_inventories(void **state)
{
    (void)state;
    expect_bad(T4("    colour: red\n"), ":5: gpus[0].colour: unknown field");
    expect_bad("gpus:\n  - uuid: GPU-0\n    name: Tesla T4\n    memory_mib: 15GB\n",
               ":4: gpus[0].memory_mib: must be an integer");
    expect_bad(T4("    nvlink: [1]\n  - uuid: GPU-1\n    name: Tesla T4\n    memory_mib: 15360\n"
                  "    nvlink: [0, 5]\n"),
               ":9: gpus[1].nvlink[1]: no GPU 5 (the inventory has 2)");
    expect_bad(T4("    nvlink: [1]\n  - uuid: GPU-1\n    name: Tesla T4\n    memory_mib: 15360\n"),
               ":5: gpus[0].nvlink: GPU 1 does not list GPU 0 back");
    expect_bad("driver: 1\n" T4(""), ":1: driver: unknown field");
    expect_bad("defaults: {nmae: x}\n" T4(""), ":1: defaults.nmae: unknown field");
    expect_bad("defaults: {uuid: GPU-9}\n" T4(""), ":1: defaults.uuid: must be given per GPU");
    expect_bad(T4("    mig: {enabled: true}\n"), ":5: gpus[0].mig: Tesla T4 has no MIG");
    expect_bad("gpus:\n  - uuid: GPU-0\n    name: NVIDIA A100-SXM4-40GB\n    memory_mib: 40960\n"
               "    mig:\n      enabled: true\n      instances:\n"
               "        - {uuid: MIG-0, profile: 1g.20gb}\n",
               ":8: gpus[0].mig.instances[0].profile: NVIDIA A100-SXM4-40GB has no MIG profile");
    expect_bad(T4("    temperature: {kind: square}\n"),
               ":5: gpus[0].temperature.kind: must be constant, sine or step");
    expect_bad(T4("    utilization: 140\n"), ":5: gpus[0].utilization: must be a number from 0");
    expect_bad(T4("  - uuid: GPU-0\n    name: Tesla T4\n    memory_mib: 1\n"),
               ":5: gpus[1].uuid: GPU-0 is also GPU 0's");
    /* Device minor numbers: /dev/nvidia0..254 (255 is nvidiactl), one per GPU. */
    expect_bad(T4("    minor: 255\n"), ":5: gpus[0].minor: must be an integer from 0 to 254");
    expect_bad(T4("  - uuid: GPU-1\n    name: Tesla T4\n    memory_mib: 1\n    minor: 0\n"),
               ":8: gpus[1].minor: 0 is also GPU 0's");
    expect_bad("defaults: {minor: 1}\n" T4(""), ":1: defaults.minor: must be given per GPU");
    expect_bad("gpus:\n  - uuid: GPU-0\n    name: [\n", ":4:1: ");
    expect_bad("gpus:\n  - uuid: GPU-0\n    memory_mib: 1\n", ":2: gpus[0]: name: required");
    /* MIG placements: overlapping or illegal starts, no room left. */
    expect_bad(H100("        - {uuid: MIG-a, profile: 3g.40gb, start: 0}\n"
                    "        - {uuid: MIG-b, profile: 2g.20gb, start: 2}\n"),
               ":9: gpus[0].mig.instances[1].start: memory slices 2-3 overlap "
               "gpus[0].mig.instances[0] (3g.40gb at memory slices 0-3)");
    expect_bad(H100("        - {uuid: MIG-a, profile: 3g.40gb, start: 2}\n"),
               ":8: gpus[0].mig.instances[0].start: 3g.40gb cannot start at memory slice 2 "
               "(legal starts: 0, 4)");
    expect_bad(H100("        - {uuid: MIG-a, profile: 1g.10gb, start: 8}\n"),
               ":8: gpus[0].mig.instances[0].start: must be an integer from 0 to 7");
    expect_bad(H100("        - {uuid: MIG-a, profile: 3g.40gb}\n"
                    "        - {uuid: MIG-b, profile: 3g.40gb}\n"
                    "        - {uuid: MIG-c, profile: 1g.10gb}\n"),
               ":10: gpus[0].mig.instances[2]: no legal start of 1g.10gb is free");
    expect_bad(H100("        - {uuid: MIG-a, profile: 4g.40gb}\n"
                    "        - {uuid: MIG-b, profile: 2g.20gb}\n"
                    "        - {uuid: MIG-c, profile: 2g.20gb}\n"),
               ":10: gpus[0].mig.instances[2]: no legal start of 2g.20gb is free");
}

static void test_no_inventory(void **state)
{
    (void)state;
    gp_nvml *h = NULL;
    gp_diag d;
    setenv("GPUPOOL_NVML_MOCK_INVENTORY", "/nonexistent/inventory.yaml", 1);
    assert_int_equal(gp_nvml_open(GP_NVML_MOCK, &h, &d), GP_EUNAVAIL);
    assert_non_null(strstr(d.msg, "/nonexistent/inventory.yaml"));
    unsetenv("GPUPOOL_NVML_MOCK_INVENTORY");
    assert_int_equal(gp_nvml_open(GP_NVML_MOCK, &h, &d), GP_EUNAVAIL);
    assert_non_null(strstr(d.msg, "GPUPOOL_NVML_MOCK_INVENTORY is not set"));
}

static void expect_event(gp_nvml_events *e, int gpu, int xid)
{
    gp_nvml_event ev = {-2, -2, -2};
    gp_diag d;
    int rc = gp_nvml_events_wait(e, 5000, &ev, &d);
    if (rc != 1 || ev.gpu != gpu || ev.xid != xid) {
        fail_msg("wait: %d (%s), gpu %d xid %d; expected gpu %d xid %d", rc, d.msg, ev.gpu, ev.xid,
                 gpu, xid);
    }
    assert_int_equal(ev.gpu_instance, -1);
}

static void test_control_xid(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-xid");
    write_file(ctl, "", "w");
    gp_nvml *h = open_mock(INV("dgx-a100.yaml"), ctl);
    gp_nvml_events *e = NULL;
    gp_diag d;
    gp_nvml_event ev;
    assert_int_equal(gp_nvml_events_open(h, &e, &d), 0);
    assert_int_equal(gp_nvml_events_wait(e, 0, &ev, &d), 0); /* nothing yet */
    write_file(ctl, "xid 3 48\n", "a");
    expect_event(e, 3, 48);
    /* Bad lines are reported and skipped; the good ones after them still run. */
    write_file(ctl, "# a comment\nbogus 1\nxid 9 13\nxid 1\nxid 1 13\n", "a");
    expect_event(e, 1, 13);
    assert_int_equal(gp_nvml_events_wait(e, 50, &ev, &d), 0);
    /* A line is run once its newline is written. */
    write_file(ctl, "xid 0 31", "a");
    assert_int_equal(gp_nvml_events_wait(e, 50, &ev, &d), 0);
    write_file(ctl, "\n", "a");
    expect_event(e, 0, 31);
    gp_nvml_events_close(e);
    close_mock(h);
}

static void test_control_fall_off(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-fall");
    write_file(ctl, "", "w");
    gp_nvml *h = open_mock(INV("dgx-a100.yaml"), ctl);
    gp_nvml_events *e = NULL;
    gp_diag d;
    gp_nvml_readings r;
    assert_int_equal(gp_nvml_events_open(h, &e, &d), 0);
    assert_int_equal(gp_nvml_sample(h, 2, &r, &d), 0);
    write_file(ctl, "fall-off 2\n", "a");
    assert_int_equal(gp_nvml_sample(h, 2, &r, &d), GP_EUNAVAIL);
    assert_non_null(strstr(d.msg, "GPU 2"));
    assert_non_null(strstr(d.msg, "GPU is lost"));
    assert_int_equal(gp_nvml_sample(h, 1, &r, &d), 0); /* the others carry on */
    expect_event(e, 2, 79);
    static gp_nvml_inv inv;
    assert_int_equal(gp_nvml_inventory(h, &inv, &d), GP_EUNAVAIL);
    gp_nvml_events_close(e);
    close_mock(h);
}

static void test_control_spikes(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-spike");
    write_file(ctl, "temp 1 95\nutil 0 77\npower 3 399.5\n", "w");
    gp_nvml *h = open_mock(INV("dgx-a100.yaml"), ctl);
    gp_nvml_readings r;
    gp_diag d;
    assert_int_equal(gp_nvml_sample(h, 1, &r, &d), 0);
    assert_int_equal(r.temperature_c, 95);
    assert_int_equal(gp_nvml_sample(h, 0, &r, &d), 0);
    assert_int_equal(r.util_gpu, 77);
    assert_int_equal(gp_nvml_sample(h, 3, &r, &d), 0);
    assert_true(r.power_w == 399.5);
    /* A spike with a duration ends: the pattern (38..61 C) is back afterwards. */
    write_file(ctl, "temp 1 120 0.05\n", "a");
    assert_int_equal(gp_nvml_sample(h, 1, &r, &d), 0);
    assert_int_equal(r.temperature_c, 120);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    assert_int_equal(gp_nvml_sample(h, 1, &r, &d), 0);
    assert_true(r.temperature_c >= 38 && r.temperature_c <= 61);
    close_mock(h);
}

/* Runs what the control file ctl has gained (through a process query on h) with stderr in a
 * file, and returns what the mock wrote there (static storage). */
static const char *mock_stderr(gp_nvml *h, const char *ctl, const char *lines)
{
    static char text[4096];
    char path[256];
    tmp_path(path, sizeof(path), "mock-stderr");
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w+");
    assert_non_null(f);
    assert_true(saved >= 0 && dup2(fileno(f), 2) == 2);
    write_file(ctl, lines, "a");
    gp_nvml_process procs[4];
    int n = 0;
    gp_diag d;
    gp_nvml_processes(h, 0, procs, 4, &n, &d);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    text[len] = '\0';
    fclose(f);
    return text;
}

static void expect_line(const char *text, const char *want)
{
    if (!strstr(text, want)) {
        fail_msg("the mock's stderr lacks \"%s\":\n%s", want, text);
    }
}

/* proc and proc-gone make processes use GPU memory; gp_nvml_processes lists them, growing its
 * buffer past the first one, and says when the caller's array is too small. */
static void test_control_procs(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-procs");
    write_file(ctl, "proc 1 4321 2048\nproc 1 99 -\n", "w");
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"), ctl);
    gp_nvml_process p[40];
    int n = -1;
    gp_diag d;
    assert_int_equal(gp_nvml_processes(h, 0, p, 40, &n, &d), 0);
    assert_int_equal(n, 0);
    assert_int_equal(gp_nvml_processes(h, 1, p, 40, &n, &d), 0);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].pid, 4321);
    assert_int_equal(p[0].used_mib, 2048);
    assert_int_equal(p[0].gpu_instance, -1);
    assert_int_equal(p[1].pid, 99);
    assert_int_equal(p[1].used_mib, -1); /* NVML cannot tell */
    /* A second proc for the same PID changes its memory; proc-gone ends it. */
    write_file(ctl, "proc 1 4321 512\nproc-gone 1 99\n", "a");
    assert_int_equal(gp_nvml_processes(h, 1, p, 40, &n, &d), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].used_mib, 512);
    /* More processes than the first buffer holds: the query grows it. */
    char lines[2048] = "";
    for (int k = 0; k < 19; k++) {
        char line[64];
        snprintf(line, sizeof(line), "proc 2 %d %d\n", 1000 + k, k);
        strcat(lines, line);
    }
    write_file(ctl, lines, "a");
    assert_int_equal(gp_nvml_processes(h, 2, p, 40, &n, &d), 0);
    assert_int_equal(n, 19);
    for (int k = 0; k < 19; k++) {
        assert_int_equal(p[k].pid, 1000 + k);
        assert_int_equal(p[k].used_mib, k);
    }
    /* More than the caller asked for: the first ones, and an error that says so. */
    assert_int_equal(gp_nvml_processes(h, 2, p, 5, &n, &d), GP_ERANGE);
    assert_int_equal(n, 5);
    assert_non_null(strstr(d.msg, "GPU 2: 19 processes, more than the 5 asked for"));
    assert_int_equal(gp_nvml_processes(h, 4, p, 5, &n, &d), GP_EINVAL);
    assert_int_equal(n, 0);
    /* Bad commands: a clear message each, and the process list as it was. */
    const char *err = mock_stderr(h, ctl,
                                  "proc 1 77\nproc 9 77 10\nproc 1 0 10\nproc 1 7.5 10\n"
                                  "proc 1 77 lots\nproc 1 77 -3\nproc 1 77 1.5\n"
                                  "proc-gone 1 555\nproc-gone 1\nprocs 1 2 3\n");
    expect_line(err, "control-procs:24: proc: takes 3 arguments, got 2");
    expect_line(err, "control-procs:25: proc: no GPU 9 (the inventory has 4)");
    expect_line(err, "control-procs:26: proc: PID 0 must be a positive integer");
    expect_line(err, "control-procs:27: proc: PID 7.5 must be a positive integer");
    expect_line(err, "control-procs:28: proc: 'lots' is not a number");
    expect_line(err, "control-procs:29: proc: MIB -3 must be a whole number 0..16777216, or - "
                     "(NVML cannot tell)");
    expect_line(err, "control-procs:30: proc: MIB 1.5 must be a whole number");
    expect_line(err, "control-procs:31: proc-gone: GPU 1 runs no process 555 (proc GPU PID MIB "
                     "starts one)");
    expect_line(err, "control-procs:32: proc-gone: takes 2 arguments, got 1");
    expect_line(err, "control-procs:33: unknown command 'procs' (xid, fall-off, temp, util, "
                     "power, mig-busy, mig-idle, mig-destroy, proc, proc-gone, ecc, remap, "
                     "nvlink, "
                     "mig-pending, ecc-pending, retire-pending, recovery, driver, proc-util, "
                     "encoder, decoder, throttle, pcie-replay, nvlink-errors)");
    assert_int_equal(gp_nvml_processes(h, 1, p, 40, &n, &d), 0);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].used_mib, 512);
    /* The mock's limit per GPU. */
    lines[0] = '\0';
    for (int k = 19; k < MOCK_PROCS_LIMIT + 1; k++) {
        char line[64];
        snprintf(line, sizeof(line), "proc 2 %d 1\n", 1000 + k);
        strcat(lines, line);
    }
    err = mock_stderr(h, ctl, lines);
    expect_line(err, "proc: GPU 2 already runs 32 processes (the mock's limit)");
    assert_int_equal(gp_nvml_processes(h, 2, p, 40, &n, &d), 0);
    assert_int_equal(n, MOCK_PROCS_LIMIT);
    close_mock(h);
}

/* The health check's readings (gp_nvml_health) of a GPU with nothing wrong on the DGX inventory:
 * every reading read, 12 NVLink links active, MIG off, ECC on, nothing pending. */
static void expect_healthy_gpu(const gp_check_gpu *g, int i)
{
    if (!g->visible || g->lost) {
        fail_msg("GPU %d: visible %d, lost %d (%s)", i, g->visible, g->lost, g->error);
    }
    assert_int_equal(strncmp(g->uuid, "GPU-", 4), 0);
    assert_int_equal(g->nvlink, GP_AVAIL_READ);
    assert_int_equal(g->nlinks, 12);
    assert_int_equal(g->links_up, 0xfff);
    assert_int_equal(g->mig, GP_AVAIL_READ);
    assert_int_equal(g->mig_current, 0);
    assert_int_equal(g->mig_pending, 0);
    assert_int_equal(g->ecc_mode, GP_AVAIL_READ);
    assert_int_equal(g->ecc_current, 1);
    assert_int_equal(g->ecc_pending, 1);
    assert_int_equal(g->ecc, GP_AVAIL_READ);
    assert_int_equal(g->dbe_volatile, 0);
    assert_int_equal(g->dbe_aggregate, 0);
    assert_int_equal(g->remap, GP_AVAIL_READ);
    assert_int_equal(g->remap_pending + g->remap_failed, 0);
    assert_int_equal(g->retired, GP_AVAIL_READ);
    assert_int_equal(g->retired_pending, 0);
    assert_int_equal(g->recovery, GP_AVAIL_READ);
    assert_int_equal(g->recovery_action, 0);
}

/* The health faults of the control file reach the readings the check takes. */
static void test_control_health(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-health");
    write_file(ctl, "", "w");
    gp_nvml *h = open_mock(INV("dgx-a100.yaml"), ctl);
    static gp_check_readings r;
    gp_nvml_health(h, &r);
    assert_int_equal(r.driver_loaded, 1);
    assert_string_equal(r.driver_version, "550.54.15");
    assert_int_equal(r.count, 8);
    assert_int_equal(r.ngpus, 8);
    for (int i = 0; i < 8; i++) {
        expect_healthy_gpu(&r.gpus[i], i);
    }
    assert_string_equal(r.gpus[0].uuid, "GPU-4b1a7e2c-0f3d-4c55-9a61-3e1f0b6a7c01");
    write_file(ctl,
               "ecc 5 2\nremap 0 1 0\nnvlink 3 2 down\nnvlink 3 11 down\nmig-pending 1 1\n"
               "ecc-pending 2 1\nretire-pending 4 1\nrecovery 6 2\ndriver 470.129.06\n",
               "a");
    gp_nvml_health(h, &r);
    assert_string_equal(r.driver_version, "470.129.06");
    assert_int_equal(r.gpus[5].dbe_volatile, 2);
    assert_int_equal(r.gpus[5].dbe_aggregate, 2);
    assert_int_equal(r.gpus[0].remap_pending, 1);
    assert_int_equal(r.gpus[0].remap_failed, 0);
    assert_int_equal(r.gpus[0].remap_uncorrectable, 1);
    assert_int_equal(r.gpus[3].nlinks, 12);
    assert_int_equal(r.gpus[3].links_up, 0xfff & ~(1u << 2) & ~(1u << 11));
    assert_int_equal(r.gpus[1].mig_current, 0);
    assert_int_equal(r.gpus[1].mig_pending, 1);
    assert_int_equal(r.gpus[2].ecc_current, 1);
    assert_int_equal(r.gpus[2].ecc_pending, 0);
    assert_int_equal(r.gpus[4].retired_pending, 1);
    assert_int_equal(r.gpus[6].recovery_action, 2);
    expect_healthy_gpu(&r.gpus[7], 7); /* the others are untouched */
    static gp_nvml_inv inv;
    discover(h, &inv);
    assert_string_equal(inv.driver_version, "470.129.06");
    /* The volatile count drops at a driver reload; the lifetime count only grows. */
    write_file(ctl, "ecc 5 0\n", "a");
    gp_nvml_health(h, &r);
    assert_int_equal(r.gpus[5].dbe_volatile, 0);
    assert_int_equal(r.gpus[5].dbe_aggregate, 2);
    write_file(ctl, "ecc 5 3\nremap 0 0 1\nnvlink 3 2 up\nmig-pending 1 0\nrecovery 6 0\n", "a");
    gp_nvml_health(h, &r);
    assert_int_equal(r.gpus[5].dbe_aggregate, 5);
    assert_int_equal(r.gpus[0].remap_pending, 0);
    assert_int_equal(r.gpus[0].remap_failed, 1);
    assert_int_equal(r.gpus[3].links_up, 0xfff & ~(1u << 11));
    assert_int_equal(r.gpus[1].mig_pending, 0);
    assert_int_equal(r.gpus[6].recovery_action, 0);
    /* A GPU falling off the bus: lost in the readings, the others still read, and the check
     * says so. */
    write_file(ctl, "fall-off 7\n", "a");
    gp_nvml_health(h, &r);
    assert_int_equal(r.count, 8);
    assert_int_equal(r.gpus[7].visible, 0);
    assert_int_equal(r.gpus[7].lost, 1);
    assert_non_null(strstr(r.gpus[7].error, "GPU is lost"));
    assert_int_equal(r.gpus[6].visible, 1);
    static gp_check_result res;
    gp_check_evaluate(&r, NULL, &res);
    assert_int_equal(res.status[GP_CHECK_GPU_VISIBLE], GP_CHECK_FAIL);
    assert_int_equal(res.status[GP_CHECK_REMAPPED_ROWS], GP_CHECK_FAIL);
    close_mock(h);
    /* A lost GPU fails gp_nvml_open (a GPU that cannot be described is not offered) but not
     * gp_nvml_open_partial, whose health readings name it. */
    setenv("GPUPOOL_NVML_MOCK_INVENTORY", INV("dgx-a100.yaml"), 1);
    setenv("GPUPOOL_NVML_MOCK_CONTROL", ctl, 1);
    gp_diag d;
    h = (gp_nvml *)1;
    assert_int_equal(gp_nvml_open(GP_NVML_MOCK, &h, &d), GP_EUNAVAIL);
    assert_null(h);
    assert_non_null(strstr(d.msg, "GPU 7"));
    assert_int_equal(gp_nvml_open_partial(GP_NVML_MOCK, &h, &d), 0);
    opened[0] = h;
    assert_int_equal(gp_nvml_count(h), 8);
    gp_nvml_health(h, &r);
    assert_int_equal(r.gpus[7].lost, 1);
    assert_non_null(strstr(r.gpus[7].error, "nvmlDeviceGetHandleByIndex_v2: GPU is lost"));
    assert_string_equal(r.driver_version, "470.129.06"); /* the whole file ran again */
    close_mock(h);
}

/* A PCIe node: no NVLink, no MIG (not supported, so skipped by the check); bad health commands
 * say what is wrong and change nothing. */
static void test_control_health_errors(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-health-bad");
    write_file(ctl, "", "w");
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"), ctl);
    static gp_check_readings r;
    gp_nvml_health(h, &r);
    assert_int_equal(r.ngpus, 4);
    assert_int_equal(r.gpus[0].nvlink, GP_AVAIL_NOT_SUPPORTED);
    assert_int_equal(r.gpus[0].nlinks, 0);
    assert_int_equal(r.gpus[0].mig, GP_AVAIL_NOT_SUPPORTED);
    assert_int_equal(r.gpus[0].ecc, GP_AVAIL_READ);
    const char *err = mock_stderr(h, ctl,
                                  "ecc 0 1.5\nremap 0 2 0\nremap 0 1\nnvlink 0 0 down\n"
                                  "mig-pending 0 1\ndriver abc\ndriver\nrecovery 0 5\n"
                                  "ecc-pending 9 1\nretire-pending 1 x\nnvlink 0 1 sideways\n");
    expect_line(err, "control-health-bad:1: ecc: 1.5 must be a whole number 0..1000000000000");
    expect_line(err, "control-health-bad:2: remap: 2 must be a whole number 0..1");
    expect_line(err, "control-health-bad:3: remap: takes 3 arguments, got 2");
    expect_line(err, "control-health-bad:4: nvlink: GPU 0 has no link 0 (it has 0)");
    expect_line(err, "control-health-bad:5: mig-pending: GPU 0 has no MIG");
    expect_line(err, "control-health-bad:6: driver: 'abc' must be a version of digits and dots");
    expect_line(err, "control-health-bad:7: driver: takes 1 argument, got 0");
    expect_line(err, "control-health-bad:8: recovery: 5 must be a whole number 0..4");
    expect_line(err, "control-health-bad:9: ecc-pending: no GPU 9 (the inventory has 4)");
    expect_line(err, "control-health-bad:10: retire-pending: 'x' is not a number");
    expect_line(err, "control-health-bad:11: nvlink: 'sideways' must be up or down");
    gp_nvml_health(h, &r);
    assert_string_equal(r.driver_version, "550.54.15");
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r.gpus[i].dbe_volatile, 0);
        assert_int_equal(r.gpus[i].remap_pending + r.gpus[i].remap_failed, 0);
        assert_int_equal(r.gpus[i].recovery_action, 0);
    }
    close_mock(h);
    /* A link past the GPU's own. */
    tmp_path(ctl, sizeof(ctl), "control-health");
    write_file(ctl, "", "w");
    h = open_mock(INV("dgx-a100.yaml"), ctl);
    err = mock_stderr(h, ctl, "nvlink 0 12 down\n");
    expect_line(err, "nvlink: GPU 0 has no link 12 (it has 12)");
    close_mock(h);
}

/* Calls into the mock by its C ABI, as any NVML client would (struct gp_nvml_fns). */
/* Every function of GP_NVML_FUNCS from lib: the mock must have them all. */
static void load_fns(void *lib, struct gp_nvml_fns *f)
{
#define GP_NVML_RESOLVE(ret, name, params, required)                                               \
    do {                                                                                           \
        void *p_ = dlsym(lib, #name);                                                              \
        if (!p_) {                                                                                 \
            fail_msg("the mock lacks %s", #name);                                                  \
        }                                                                                          \
        memcpy(&f->name, &p_, sizeof(p_));                                                         \
    } while (0);
    GP_NVML_FUNCS(GP_NVML_RESOLVE)
#undef GP_NVML_RESOLVE
}

static void test_abi_errors(void **state)
{
    (void)state;
    void *lib = dlopen(GP_NVML_MOCK, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    struct gp_nvml_fns f;
    load_fns(lib, &f);
    assert_null(dlsym(lib, "gp_diag_set")); /* only NVML is exported */
    assert_null(dlsym(lib, "gp_yaml_to_json"));

    unsigned int n = 0, cur, pend, t;
    nvmlDevice_t dev = NULL;
    nvmlEnableState_t on;
    assert_int_equal(f.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(f.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
    setenv("GPUPOOL_NVML_MOCK_INVENTORY", INV("pcie-t4.yaml"), 1);
    unsetenv("GPUPOOL_NVML_MOCK_CONTROL");
    assert_int_equal(f.nvmlInit_v2(), NVML_SUCCESS);
    assert_int_equal(f.nvmlDeviceGetCount_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    assert_int_equal(n, 4);
    assert_int_equal(f.nvmlDeviceGetHandleByIndex_v2(4, &dev), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlDeviceGetHandleByIndex_v2(0, &dev), NVML_SUCCESS);
    assert_int_equal(f.nvmlDeviceGetNvLinkState(dev, 0, &on), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(f.nvmlDeviceGetMigMode(dev, &cur, &pend), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(f.nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_COUNT, &t),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlDeviceGetTemperature((nvmlDevice_t)&n, NVML_TEMPERATURE_GPU, &t),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_string_equal(f.nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
    /* The health functions: field values answer per entry; NULL arguments are refused. */
    nvmlFieldValue_t fv[2];
    memset(fv, 0, sizeof(fv));
    fv[0].fieldId = 1;
    fv[1].fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
    fv[1].value.uiVal = 77;
    assert_int_equal(f.nvmlDeviceGetFieldValues(dev, 2, fv), NVML_SUCCESS);
    assert_int_equal(fv[0].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(fv[1].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(fv[1].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
    assert_int_equal(fv[1].value.uiVal, NVML_GPU_RECOVERY_ACTION_NONE);
    assert_true(fv[1].timestamp > 0);
    assert_int_equal(f.nvmlDeviceGetFieldValues(dev, 0, fv), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlDeviceGetFieldValues(dev, 1, NULL), NVML_ERROR_INVALID_ARGUMENT);
    unsigned int rows[4];
    assert_int_equal(f.nvmlDeviceGetRemappedRows(dev, &rows[0], &rows[1], &rows[2], NULL),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlDeviceGetRemappedRows(dev, &rows[0], &rows[1], &rows[2], &rows[3]),
                     NVML_SUCCESS);
    nvmlEnableState_t e1, e2;
    assert_int_equal(f.nvmlDeviceGetEccMode(dev, &e1, NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlDeviceGetEccMode(dev, &e1, &e2), NVML_SUCCESS);
    assert_int_equal(e1, NVML_FEATURE_ENABLED);
    assert_int_equal(f.nvmlDeviceGetRetiredPagesPendingStatus(dev, NULL),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlDeviceGetRetiredPagesPendingStatus(dev, &e1), NVML_SUCCESS);
    assert_int_equal(e1, NVML_FEATURE_DISABLED);

    assert_int_equal(f.nvmlInit_v2(), NVML_SUCCESS); /* counted */
    assert_int_equal(f.nvmlShutdown(), NVML_SUCCESS);
    assert_int_equal(f.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    assert_int_equal(f.nvmlShutdown(), NVML_SUCCESS);
    assert_int_equal(f.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
    dlclose(lib);
}

/* The direct NVLink list path (a ring of 4), a handle per open, and the inventory's own control
 * file (relative to the inventory). */
static void test_direct_links(void **state)
{
    (void)state;
    char path[256];
    tmp_path(path, sizeof(path), "ring.yaml");
    write_file(path,
               "control: ring-control\n"
               "defaults: {name: Tesla V100-SXM2-32GB, memory_mib: 32768}\n"
               "gpus:\n"
               "  - {uuid: GPU-a, nvlink: [1, 1, 3, 3]}\n"
               "  - {uuid: GPU-b, nvlink: [0, 0, 2, 2]}\n"
               "  - {uuid: GPU-c, nvlink: [1, 1, 3, 3]}\n"
               "  - {uuid: GPU-d, nvlink: [2, 2, 0, 0]}\n",
               "w");
    gp_nvml *h = open_mock(path, NULL);
    gp_nvml *h2 = open_mock(path, NULL);
    static gp_nvml_inv inv;
    discover(h, &inv);
    close_mock(h2); /* NVML stays up for h */
    discover(h, &inv);
    static const uint32_t want[] = {0xa, 0x5, 0xa, 0x5};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(inv.gpus[i].nvlink, want[i]);
        assert_int_equal(inv.gpus[i].numa, -1);
        assert_int_equal(inv.gpus[i].mig_mode, -1);
    }
    assert_string_equal(inv.gpus[2].pci_bus_id, "00000000:12:00.0");
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "ring-control");
    write_file(ctl, "temp 3 88\n", "w");
    gp_nvml_readings r;
    gp_diag d;
    assert_int_equal(gp_nvml_sample(h, 3, &r, &d), 0);
    assert_int_equal(r.temperature_c, 88);
    assert_int_equal(gp_nvml_sample(h, 2, &r, &d), 0);
    assert_int_equal(r.temperature_c, 35); /* the default */
    close_mock(h);
}

static void test_node_doc(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), NULL);
    static gp_nvml_inv inv;
    discover(h, &inv);
    close_mock(h);
    json_t *labels = json_pack("{s:s}", "zone", "a");
    json_t *doc = gp_nvml_node_doc(&inv, "gpu-01", "10.0.0.1:7071", 128000, 1048576, labels);
    json_decref(labels);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "gpu-01");
    assert_string_equal(json_string_value(json_object_get(doc, "address")), "10.0.0.1:7071");
    assert_int_equal(json_integer_value(json_object_get(doc, "cpu_milli")), 128000);
    assert_int_equal(json_integer_value(json_object_get(doc, "memory_mib")), 1048576);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "labels"), "zone")),
                        "a");
    json_t *gpus = json_object_get(doc, "gpus");
    assert_int_equal(json_array_size(gpus), 4);
    json_t *g3 = json_array_get(gpus, 3);
    assert_string_equal(json_string_value(json_object_get(g3, "uuid")), inv.gpus[3].uuid);
    assert_string_equal(json_string_value(json_object_get(g3, "model")), "NVIDIA H100 80GB HBM3");
    assert_int_equal(json_integer_value(json_object_get(g3, "memory_mib")), 81559);
    assert_int_equal(json_integer_value(json_object_get(g3, "numa")), 1);
    assert_true(json_is_false(json_object_get(g3, "mig")));
    assert_true(json_is_true(json_object_get(json_array_get(gpus, 0), "mig")));
    json_t *links = json_object_get(g3, "nvlink");
    assert_int_equal(json_array_size(links), 3);
    assert_int_equal(json_integer_value(json_array_get(links, 2)), 2);

    /* The controller takes it as it is. */
    ctl_state st;
    memset(&st, 0, sizeof(st));
    st.cluster = gp_cluster_new();
    assert_non_null(st.cluster);
    gp_diag d;
    int rc = ctl_state_add_node(&st, 1, "gpu-01", doc, &d);
    if (rc != 0) {
        fail_msg("the controller refused the document: %s", d.msg);
    }
    assert_int_equal(st.nodes[0].ngpus, 4);
    assert_int_equal(st.nodes[0].gpus[3].nvlink, 0x7);
    assert_true(st.nodes[0].gpus[0].mig);
    assert_int_equal(st.nodes[0].gpus[2].numa, 1);
    ctl_state_clear(&st);
    json_decref(doc);
}

/* gpupool-agent discover's document: the inventory as discovered, MIG devices, readings, and
 * readings NVML cannot give (utilisation of a GPU in MIG mode) left out. */
static void test_describe(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), NULL);
    static gp_nvml_inv inv;
    discover(h, &inv);
    json_t *doc = gp_nvml_describe(h, &inv);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "library")), GP_NVML_MOCK);
    assert_string_equal(json_string_value(json_object_get(doc, "driver_version")),
                        inv.driver_version);
    json_t *gpus = json_object_get(doc, "gpus");
    assert_int_equal(json_array_size(gpus), inv.ngpus);
    json_t *g0 = json_array_get(gpus, 0), *g3 = json_array_get(gpus, 3);
    assert_string_equal(json_string_value(json_object_get(g0, "uuid")), inv.gpus[0].uuid);
    assert_string_equal(json_string_value(json_object_get(g0, "pci_bus_id")),
                        inv.gpus[0].pci_bus_id);
    assert_string_equal(json_string_value(json_object_get(g0, "mig_mode")), "on");
    assert_string_equal(json_string_value(json_object_get(g3, "mig_mode")), "off");
    json_t *mig = json_object_get(g0, "mig");
    assert_int_equal(json_array_size(mig), inv.gpus[0].nmig);
    json_t *m0 = json_array_get(mig, 0);
    assert_string_equal(json_string_value(json_object_get(m0, "uuid")), inv.gpus[0].mig[0].uuid);
    assert_int_equal(json_integer_value(json_object_get(m0, "start")), 4);
    assert_int_equal(json_integer_value(json_object_get(m0, "size")), 4);
    assert_int_equal(json_integer_value(json_object_get(m0, "gpu_instance")), 1);
    assert_int_equal(json_integer_value(json_object_get(m0, "compute_instance")), 0);
    assert_int_equal(json_integer_value(json_object_get(g3, "minor")), inv.gpus[3].minor);
    assert_int_equal(json_array_size(json_object_get(g3, "nvlink")), 3);
    gp_nvml_readings r;
    gp_diag d;
    assert_int_equal(gp_nvml_sample(h, 3, &r, &d), 0);
    json_t *r0 = json_object_get(g0, "readings"), *r3 = json_object_get(g3, "readings");
    assert_null(json_object_get(r0, "utilization"));
    assert_non_null(json_object_get(r3, "utilization"));
    assert_int_equal(json_integer_value(json_object_get(r3, "memory_used_mib")), r.memory_used_mib);
    json_decref(doc);
    close_mock(h);

    /* A library that does not load: an error naming it, nothing printed. */
    char path[256];
    tmp_path(path, sizeof(path), "describe.json");
    FILE *out = fopen(path, "w+");
    assert_non_null(out);
    gp_diag_clear(&d);
    assert_int_equal(gp_nvml_discover("/nonexistent/libnvidia-ml.so.1", out, &d), GP_ENOENT);
    assert_non_null(strstr(d.msg, "/nonexistent/libnvidia-ml.so.1"));
    assert_int_equal(ftell(out), 0);
    /* The mock through the same entry point: a JSON document with every GPU. */
    assert_int_equal(gp_nvml_discover(GP_NVML_MOCK, out, &d), 0);
    rewind(out);
    json_error_t err;
    json_t *back = json_loadf(out, 0, &err);
    fclose(out);
    unlink(path);
    assert_non_null(back);
    assert_int_equal(json_array_size(json_object_get(back, "gpus")), inv.ngpus);
    json_decref(back);
}

/* ---- MIG instances on demand (src/agent/mig.c) ---- */

/* gp_nvml_mig_ensure that must succeed; the UUID goes to uuid (96 bytes). */
static void ensure_ok(gp_nvml *h, int gpu, const char *profile, int start, char *uuid)
{
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_nvml_mig_ensure(h, gpu, profile, start, uuid, 96, &d);
    if (rc != 0) {
        fail_msg("ensure GPU %d %s at %d: %s \"%s\"", gpu, profile, start, gp_strerror_name(rc),
                 d.msg);
    }
    assert_int_equal(strncmp(uuid, "MIG-", 4), 0);
}

/* gp_nvml_mig_ensure that must fail with code and a message containing want. */
static void ensure_fails(gp_nvml *h, int gpu, const char *profile, int start, int code,
                         const char *want)
{
    gp_diag d;
    gp_diag_clear(&d);
    char uuid[96] = "x";
    int rc = gp_nvml_mig_ensure(h, gpu, profile, start, uuid, sizeof(uuid), &d);
    if (rc != code || !strstr(d.msg, want)) {
        fail_msg("ensure GPU %d %s at %d: got %s \"%s\", expected %s with \"%s\"", gpu, profile,
                 start, gp_strerror_name(rc), d.msg, gp_strerror_name(code), want);
    }
    assert_string_equal(uuid, "");
}

/* The MIG device of inv's GPU gpu starting at memory slice start, or NULL. */
static const gp_nvml_mig *mig_at(const gp_nvml_inv *inv, int gpu, int start)
{
    for (int k = 0; k < inv->gpus[gpu].nmig; k++) {
        if (inv->gpus[gpu].mig[k].start == start) {
            return &inv->gpus[gpu].mig[k];
        }
    }
    return NULL;
}

/* Every MIG device of a is in b, the same, and the other way round. */
static void same_migs(const gp_nvml_inv *a, const gp_nvml_inv *b)
{
    assert_int_equal(a->ngpus, b->ngpus);
    for (int i = 0; i < a->ngpus; i++) {
        assert_int_equal(a->gpus[i].nmig, b->gpus[i].nmig);
        for (int k = 0; k < a->gpus[i].nmig; k++) {
            const gp_nvml_mig *x = &a->gpus[i].mig[k], *y = mig_at(b, i, x->start);
            assert_non_null(y);
            assert_string_equal(x->uuid, y->uuid);
            assert_string_equal(x->profile, y->profile);
            assert_int_equal(x->size, y->size);
        }
    }
}

/* An instance of the same profile at the same start is reused: same UUID, nothing changes. */
static void test_mig_reuse(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), NULL);
    static gp_nvml_inv before, after;
    discover(h, &before);
    char uuid[96];
    ensure_ok(h, 0, "3g.40gb", 4, uuid);
    assert_string_equal(uuid, "MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c01");
    ensure_ok(h, 0, "1g.10gb", 3, uuid);
    assert_string_equal(uuid, "MIG-3d4e5f6a-7b8c-5d9e-bf0a-2b3c4d5e6f04");
    ensure_ok(h, 1, "1g.10gb", 5, uuid);
    assert_string_equal(uuid, "MIG-9d0e1f2a-3b4c-5d5e-9f6a-8b9c0d1e2f16");
    discover(h, &after);
    same_migs(&before, &after);
    /* A buffer too small for the UUID. */
    gp_diag d;
    assert_int_equal(gp_nvml_mig_ensure(h, 0, "3g.40gb", 4, uuid, 20, &d), GP_ERANGE);
    close_mock(h);
}

/* On the empty GPU 2: new instances at the placements asked for, visible in the inventory; the
 * UUIDs are new, unique, and the same in a fresh process state. */
static void test_mig_create(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), NULL);
    static gp_nvml_inv inv;
    char a[96], b[96], again[96];
    ensure_ok(h, 2, "3g.40gb", 4, a);
    ensure_ok(h, 2, "1g.10gb", 1, b);
    assert_string_not_equal(a, b);
    discover(h, &inv);
    assert_int_equal(inv.gpus[2].nmig, 2);
    const gp_nvml_mig *m = mig_at(&inv, 2, 4);
    assert_non_null(m);
    assert_string_equal(m->uuid, a);
    assert_string_equal(m->profile, "3g.40gb");
    assert_int_equal(m->size, 4);
    assert_int_equal(m->memory_mib, 40960);
    m = mig_at(&inv, 2, 1);
    assert_non_null(m);
    assert_string_equal(m->uuid, b);
    assert_string_equal(m->profile, "1g.10gb");
    assert_int_equal(m->size, 1);
    for (int i = 0; i < 2; i++) { /* no other device has these UUIDs */
        for (int k = 0; k < inv.gpus[i].nmig; k++) {
            assert_string_not_equal(inv.gpus[i].mig[k].uuid, a);
            assert_string_not_equal(inv.gpus[i].mig[k].uuid, b);
        }
    }
    ensure_ok(h, 2, "3g.40gb", 4, again); /* now reused */
    assert_string_equal(again, a);
    close_mock(h);
    h = open_mock(INV("h100-mig.yaml"), NULL); /* the inventory again, from the file */
    ensure_ok(h, 2, "3g.40gb", 4, again);
    assert_string_equal(again, a);
    close_mock(h);
}

/* A GPU instance left bare, or split into smaller compute instances (by another tool), is
 * reused with one compute instance taking all of it. */
static void test_mig_reuse_partial(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), NULL);
    void *lib = dlopen(GP_NVML_MOCK, RTLD_NOW | RTLD_LOCAL); /* the same library and state */
    assert_non_null(lib);
    struct gp_nvml_fns f;
    load_fns(lib, &f);
    nvmlDevice_t g2 = NULL;
    nvmlGpuInstance_t bare = NULL, split = NULL;
    nvmlComputeInstance_t ci = NULL;
    assert_int_equal(f.nvmlDeviceGetHandleByIndex_v2(2, &g2), NVML_SUCCESS);
    nvmlGpuInstancePlacement_t at = {0, 1};
    assert_int_equal(f.nvmlDeviceCreateGpuInstanceWithPlacement(g2, 19, &at, &bare),
                     NVML_SUCCESS); /* 1g.10gb at 0, no compute instance */
    at = (nvmlGpuInstancePlacement_t){4, 4};
    assert_int_equal(f.nvmlDeviceCreateGpuInstanceWithPlacement(g2, 9, &at, &split),
                     NVML_SUCCESS); /* 3g.40gb at 4 as 1c + 2c */
    assert_int_equal(f.nvmlGpuInstanceCreateComputeInstance(split, 0, &ci), NVML_SUCCESS);
    assert_int_equal(f.nvmlGpuInstanceCreateComputeInstance(split, 1, &ci), NVML_SUCCESS);
    static gp_nvml_inv inv;
    discover(h, &inv);
    assert_int_equal(inv.gpus[2].nmig, 2);
    assert_string_equal(inv.gpus[2].mig[0].profile, ""); /* "MIG 1c.3g.40gb" */
    char a[96], b[96];
    ensure_ok(h, 2, "1g.10gb", 0, a);
    ensure_ok(h, 2, "3g.40gb", 4, b);
    discover(h, &inv);
    assert_int_equal(inv.gpus[2].nmig, 2);
    assert_string_equal(mig_at(&inv, 2, 0)->uuid, a);
    assert_string_equal(mig_at(&inv, 2, 0)->profile, "1g.10gb");
    assert_string_equal(mig_at(&inv, 2, 4)->uuid, b);
    assert_string_equal(mig_at(&inv, 2, 4)->profile, "3g.40gb");
    assert_int_equal(mig_at(&inv, 2, 4)->gpu_instance, 2); /* the same GPU instances */
    assert_int_equal(mig_at(&inv, 2, 0)->gpu_instance, 1);
    dlclose(lib);
    close_mock(h);
}

/* Idle instances in the way are replaced; the others stay as they were. */
static void test_mig_replace(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), NULL);
    static gp_nvml_inv before, after;
    discover(h, &before);
    char uuid[96];
    ensure_ok(h, 1, "3g.40gb", 0, uuid); /* over the 1g instances at 0, 1, 2 and 3 */
    discover(h, &after);
    assert_int_equal(after.gpus[1].nmig, 4);
    const gp_nvml_mig *m = mig_at(&after, 1, 0);
    assert_non_null(m);
    assert_string_equal(m->uuid, uuid);
    assert_string_equal(m->profile, "3g.40gb");
    assert_int_equal(m->size, 4);
    for (int k = 1; k < 4; k++) {
        assert_null(mig_at(&after, 1, k));
    }
    for (int k = 4; k < 7; k++) {
        assert_string_equal(mig_at(&after, 1, k)->uuid, before.gpus[1].mig[k].uuid);
    }
    for (int k = 0; k < 4; k++) {
        assert_string_not_equal(uuid, before.gpus[1].mig[k].uuid);
    }
    assert_int_equal(after.gpus[0].nmig, 4); /* other GPUs untouched */
    /* A 2g over 2g.20gb at 0-1 of GPU 0 is that instance; a 2g at 2 replaces both 1g there. */
    ensure_ok(h, 0, "2g.20gb", 2, uuid);
    discover(h, &after);
    assert_int_equal(after.gpus[0].nmig, 3);
    assert_string_equal(mig_at(&after, 0, 2)->uuid, uuid);
    assert_string_equal(mig_at(&after, 0, 0)->uuid, before.gpus[0].mig[1].uuid);
    assert_string_equal(mig_at(&after, 0, 4)->uuid, before.gpus[0].mig[0].uuid);
    /* The whole GPU: everything goes. */
    ensure_ok(h, 0, "7g.80gb", 0, uuid);
    discover(h, &after);
    assert_int_equal(after.gpus[0].nmig, 1);
    assert_string_equal(after.gpus[0].mig[0].profile, "7g.80gb");
    assert_int_equal(after.gpus[0].mig[0].size, 8);
    close_mock(h);
}

/* An instance a process runs on is not destroyed, and nothing else is either. */
static void test_mig_busy(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-mig");
    write_file(ctl, "mig-busy 1 2 777\n", "w");
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), ctl);
    static gp_nvml_inv before, after;
    discover(h, &before);
    ensure_fails(h, 1, "3g.40gb", 0, GP_ESTATE,
                 "GPU 1: GPU instance 3 (1g.10gb at memory slice 2) is in use by process 777");
    discover(h, &after);
    same_migs(&before, &after);
    /* Nor is it handed to a job while the process runs there. */
    ensure_fails(h, 1, "1g.10gb", 2, GP_ESTATE,
                 "GPU 1: GPU instance 3 (1g.10gb at memory slice 2) is in use by process 777; it "
                 "is not handed on until that ends");
    /* Once the process has ended, the instance is reused as it is, or replaced. */
    write_file(ctl, "mig-idle 1 2\n", "a");
    char uuid[96];
    ensure_ok(h, 1, "1g.10gb", 2, uuid);
    assert_string_equal(uuid, before.gpus[1].mig[2].uuid);
    ensure_ok(h, 1, "3g.40gb", 0, uuid);
    discover(h, &after);
    assert_int_equal(after.gpus[1].nmig, 4);
    close_mock(h);
}

/* mig-destroy: another tool destroys a GPU instance (refused while a process runs there); its
 * MIG device is gone, the others stay, and the ids of what stays are unchanged. */
static void test_mig_destroy(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-mig-destroy");
    write_file(ctl, "", "w");
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), ctl);
    static gp_nvml_inv before, after;
    discover(h, &before);
    const char *err = mock_stderr(h, ctl, "mig-busy 1 3 888\nmig-destroy 1 3\nmig-destroy 1 7\n");
    expect_line(err, "control-mig-destroy:2: mig-destroy: process 888 runs on that GPU instance");
    expect_line(err, "control-mig-destroy:3: mig-destroy: GPU 1 has no GPU instance starting at "
                     "memory slice 7");
    discover(h, &after);
    same_migs(&before, &after);
    write_file(ctl, "mig-idle 1 3\nmig-destroy 1 3\n", "a");
    discover(h, &after);
    assert_int_equal(after.gpus[1].nmig, 6);
    for (int k = 0, j = 0; k < 7; k++) {
        if (before.gpus[1].mig[k].start == 3) {
            continue;
        }
        assert_string_equal(after.gpus[1].mig[j].uuid, before.gpus[1].mig[k].uuid);
        assert_int_equal(after.gpus[1].mig[j].gpu_instance, before.gpus[1].mig[k].gpu_instance);
        j++;
    }
    assert_int_equal(after.gpus[0].nmig, before.gpus[0].nmig);
    close_mock(h);
}

/* The GPU instances there are, by start, with the busy ones marked: what the agent reports. */
static void test_mig_instances(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-mig-list");
    write_file(ctl, "mig-busy 1 2 777\n", "w");
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), ctl);
    gp_nvml_gi gi[8];
    int n = -1;
    gp_diag d;
    assert_int_equal(gp_nvml_mig_instances(h, 0, gi, 8, &n, &d), 0);
    assert_int_equal(n, 4);
    static const char *const profiles[] = {"2g.20gb", "1g.10gb", "1g.10gb", "3g.40gb"};
    static const int starts[] = {0, 2, 3, 4}, sizes[] = {2, 1, 1, 4};
    for (int k = 0; k < 4; k++) {
        assert_string_equal(gi[k].profile, profiles[k]);
        assert_int_equal(gi[k].start, starts[k]);
        assert_int_equal(gi[k].size, sizes[k]);
        assert_false(gi[k].busy);
    }
    assert_int_equal(gp_nvml_mig_instances(h, 1, gi, 8, &n, &d), 0);
    assert_int_equal(n, 7);
    for (int k = 0; k < 7; k++) {
        assert_int_equal(gi[k].start, k);
        assert_int_equal(gi[k].busy, k == 2);
    }
    assert_int_equal(gp_nvml_mig_instances(h, 2, gi, 8, &n, &d), 0);
    assert_int_equal(n, 0);
    assert_int_equal(gp_nvml_mig_instances(h, 1, gi, 6, &n, &d), GP_ERANGE);
    assert_int_equal(n, 0);
    assert_int_equal(gp_nvml_mig_instances(h, 3, gi, 8, &n, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "not in MIG mode"));
    assert_int_equal(gp_nvml_mig_instances(h, 4, gi, 8, &n, &d), GP_EINVAL);
    close_mock(h);
}

/* Refusals: no MIG or MIG off, unknown profile, illegal start; the layout stays. */
static void test_mig_refusals(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"), NULL);
    static gp_nvml_inv before, after;
    discover(h, &before);
    ensure_fails(h, 3, "1g.10gb", 0, GP_EINVAL, "GPU 3: not in MIG mode");
    ensure_fails(h, 1, "2g.10gb", 0, GP_EINVAL,
                 "GPU 1: no MIG profile '2g.10gb' (the GPU offers: 1g.10gb, 2g.20gb, 3g.40gb, "
                 "4g.40gb, 7g.80gb, 1g.20gb)");
    ensure_fails(h, 1, "3g.40gb", 2, GP_EINVAL,
                 "GPU 1: 3g.40gb cannot start at memory slice 2 (its legal starts: 0, 4)");
    ensure_fails(h, 1, "1g.10gb", 7, GP_EINVAL, "legal starts: 0, 1, 2, 3, 4, 5, 6");
    ensure_fails(h, 1, "1g.10gb", -1, GP_EINVAL, "cannot start at memory slice -1");
    ensure_fails(h, 4, "1g.10gb", 0, GP_EINVAL, "GPU 4: no such GPU");
    ensure_fails(h, 1, "", 0, GP_EINVAL, "no MIG profile given");
    discover(h, &after);
    same_migs(&before, &after);
    close_mock(h);
    h = open_mock(INV("pcie-t4.yaml"), NULL);
    ensure_fails(h, 0, "1g.10gb", 0, GP_EINVAL, "GPU 0: the GPU has no MIG");
    close_mock(h);
}

/* The mock's MIG functions by their C ABI: the codes the real driver answers with. */
static void test_mig_abi(void **state)
{
    (void)state;
    char ctl[256];
    tmp_path(ctl, sizeof(ctl), "control-mig-abi");
    write_file(ctl, "", "w");
    setenv("GPUPOOL_NVML_MOCK_INVENTORY", INV("h100-mig.yaml"), 1);
    setenv("GPUPOOL_NVML_MOCK_CONTROL", ctl, 1);
    void *lib = dlopen(GP_NVML_MOCK, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    struct gp_nvml_fns f;
    load_fns(lib, &f);
    assert_int_equal(f.nvmlInit_v2(), NVML_SUCCESS);
    nvmlDevice_t g1 = NULL, g2 = NULL, g3 = NULL, m = NULL;
    assert_int_equal(f.nvmlDeviceGetHandleByIndex_v2(1, &g1), NVML_SUCCESS);
    assert_int_equal(f.nvmlDeviceGetHandleByIndex_v2(2, &g2), NVML_SUCCESS);
    assert_int_equal(f.nvmlDeviceGetHandleByIndex_v2(3, &g3), NVML_SUCCESS);
    /* Profiles: index -> id, name, slices; the version is checked. */
    nvmlGpuInstanceProfileInfo_v2_t p;
    memset(&p, 0, sizeof(p));
    assert_int_equal(f.nvmlDeviceGetGpuInstanceProfileInfoV(g1, 0, &p),
                     NVML_ERROR_INVALID_ARGUMENT); /* as the real driver */
    p.version = nvmlGpuInstanceProfileInfo_v2;
    assert_int_equal(
        f.nvmlDeviceGetGpuInstanceProfileInfoV(g1, NVML_GPU_INSTANCE_PROFILE_3_SLICE, &p),
        NVML_SUCCESS);
    assert_string_equal(p.name, "MIG 3g.40gb");
    assert_int_equal(p.id, 9);
    assert_int_equal(p.sliceCount, 3);
    assert_int_equal(p.instanceCount, 2);
    assert_int_equal(
        f.nvmlDeviceGetGpuInstanceProfileInfoV(g1, NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2, &p),
        NVML_SUCCESS);
    assert_string_equal(p.name, "MIG 1g.20gb");
    assert_int_equal(
        f.nvmlDeviceGetGpuInstanceProfileInfoV(g1, NVML_GPU_INSTANCE_PROFILE_6_SLICE, &p),
        NVML_ERROR_NOT_SUPPORTED);
    nvmlGpuInstancePlacement_t pl[8];
    unsigned int n = 0;
    assert_int_equal(f.nvmlDeviceGetGpuInstancePossiblePlacements_v2(g1, 9, NULL, &n),
                     NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(f.nvmlDeviceGetGpuInstancePossiblePlacements_v2(g1, 9, pl, &n), NVML_SUCCESS);
    assert_int_equal(pl[1].start, 4);
    assert_int_equal(pl[1].size, 4);
    /* Creation: illegal placement, overlap, MIG off. */
    nvmlGpuInstance_t gi = NULL, gi2 = NULL;
    nvmlGpuInstancePlacement_t at = {2, 4};
    assert_int_equal(f.nvmlDeviceCreateGpuInstanceWithPlacement(g2, 9, &at, &gi),
                     NVML_ERROR_INVALID_ARGUMENT);
    at.start = 4;
    assert_int_equal(f.nvmlDeviceCreateGpuInstanceWithPlacement(g3, 9, &at, &gi),
                     NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(f.nvmlDeviceCreateGpuInstanceWithPlacement(g2, 9, &at, &gi), NVML_SUCCESS);
    at = (nvmlGpuInstancePlacement_t){5, 1};
    assert_int_equal(f.nvmlDeviceCreateGpuInstanceWithPlacement(g2, 19, &at, &gi2),
                     NVML_ERROR_INSUFFICIENT_RESOURCES);
    nvmlGpuInstanceInfo_t info;
    assert_int_equal(f.nvmlGpuInstanceGetInfo(gi, &info), NVML_SUCCESS);
    assert_int_equal(info.id, 1);
    assert_int_equal(info.profileId, 9);
    assert_true(info.device == g2);
    assert_int_equal(info.placement.start, 4);
    /* A bare GPU instance makes no MIG device; a compute instance does. */
    assert_int_equal(f.nvmlDeviceGetMigDeviceHandleByIndex(g2, 0, &m), NVML_ERROR_NOT_FOUND);
    nvmlComputeInstanceProfileInfo_t cp;
    assert_int_equal(f.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                         gi, NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE,
                         NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &cp),
                     NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(f.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                         gi, NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE,
                         NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &cp),
                     NVML_SUCCESS);
    assert_int_equal(cp.instanceCount, 3);
    nvmlComputeInstance_t ci = NULL, ci2 = NULL;
    assert_int_equal(f.nvmlGpuInstanceCreateComputeInstance(gi, 0, &ci), NVML_SUCCESS);
    assert_int_equal(f.nvmlGpuInstanceCreateComputeInstance(gi, 1, &ci2), NVML_SUCCESS);
    assert_int_equal(f.nvmlGpuInstanceCreateComputeInstance(gi, 0, &ci2),
                     NVML_ERROR_INSUFFICIENT_RESOURCES); /* its 3 slices are taken */
    char name[96];
    unsigned int id = 99;
    assert_int_equal(f.nvmlDeviceGetMigDeviceHandleByIndex(g2, 0, &m), NVML_SUCCESS);
    assert_int_equal(f.nvmlDeviceGetName(m, name, sizeof(name)), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA H100 80GB HBM3 MIG 1c.3g.40gb");
    assert_int_equal(f.nvmlDeviceGetGpuInstanceId(m, &id), NVML_SUCCESS);
    assert_int_equal(id, 1);
    assert_int_equal(f.nvmlDeviceGetGpuInstanceId(g2, &id), NVML_ERROR_NOT_SUPPORTED);
    /* Destruction: compute instances first; a busy one is IN_USE, and listed as a process. */
    assert_int_equal(f.nvmlGpuInstanceDestroy(gi), NVML_ERROR_IN_USE);
    write_file(ctl, "mig-busy 2 4\n", "a");
    nvmlProcessInfo_t procs[4];
    n = 0;
    assert_int_equal(f.nvmlDeviceGetComputeRunningProcesses_v3(g2, &n, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1);
    n = 4;
    assert_int_equal(f.nvmlDeviceGetComputeRunningProcesses_v3(g2, &n, procs), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(procs[0].pid, 4242);
    assert_int_equal(procs[0].gpuInstanceId, 1);
    assert_int_equal(f.nvmlComputeInstanceDestroy(ci), NVML_ERROR_IN_USE);
    write_file(ctl, "mig-idle 2 4\n", "a");
    assert_int_equal(f.nvmlComputeInstanceDestroy(ci), NVML_SUCCESS);
    assert_int_equal(f.nvmlComputeInstanceDestroy(ci), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlComputeInstanceDestroy(ci2), NVML_SUCCESS);
    assert_int_equal(f.nvmlGpuInstanceDestroy(gi), NVML_SUCCESS);
    assert_int_equal(f.nvmlGpuInstanceGetInfo(gi, &info), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f.nvmlDeviceGetGpuInstanceById(g2, 1, &gi), NVML_ERROR_NOT_FOUND);
    assert_int_equal(f.nvmlShutdown(), NVML_SUCCESS);
    dlclose(lib);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const files[] = {
        "bad.yaml",           "ring.yaml",           "control-xid", "control-fall",
        "control-spike",      "ring-control",        "control-mig", "control-mig-list",
        "control-mig-abi",    "control-procs",       "mock-stderr", "control-health",
        "control-health-bad", "control-mig-destroy", NULL};
    char path[256];
    for (int i = 0; files[i]; i++) {
        tmp_path(path, sizeof(path), files[i]);
        unlink(path);
    }
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_dgx, close_all),
        cmocka_unit_test_teardown(test_t4, close_all),
        cmocka_unit_test_teardown(test_h100_mig, close_all),
        cmocka_unit_test_teardown(test_sample_patterns, close_all),
        cmocka_unit_test_teardown(test_missing_library, close_all),
        cmocka_unit_test_teardown(test_missing_symbol, close_all),
        cmocka_unit_test_teardown(test_bad_inventories, close_all),
        cmocka_unit_test_teardown(test_no_inventory, close_all),
        cmocka_unit_test_teardown(test_control_xid, close_all),
        cmocka_unit_test_teardown(test_control_fall_off, close_all),
        cmocka_unit_test_teardown(test_control_spikes, close_all),
        cmocka_unit_test_teardown(test_control_procs, close_all),
        cmocka_unit_test_teardown(test_control_health, close_all),
        cmocka_unit_test_teardown(test_control_health_errors, close_all),
        cmocka_unit_test_teardown(test_abi_errors, close_all),
        cmocka_unit_test_teardown(test_direct_links, close_all),
        cmocka_unit_test_teardown(test_node_doc, close_all),
        cmocka_unit_test_teardown(test_describe, close_all),
        cmocka_unit_test_teardown(test_mig_reuse, close_all),
        cmocka_unit_test_teardown(test_mig_create, close_all),
        cmocka_unit_test_teardown(test_mig_reuse_partial, close_all),
        cmocka_unit_test_teardown(test_mig_replace, close_all),
        cmocka_unit_test_teardown(test_mig_busy, close_all),
        cmocka_unit_test_teardown(test_mig_destroy, close_all),
        cmocka_unit_test_teardown(test_mig_instances, close_all),
        cmocka_unit_test_teardown(test_mig_refusals, close_all),
        cmocka_unit_test_teardown(test_mig_abi, close_all),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
