/* Sampling through NVML (src/agent/nvml_sample.c) against the mock NVML library: every reading of
 * a GPU (memory v2 with the reserve, encoder and decoder, memory temperature, power limit,
 * energy, PCIe replays, NVLink errors over active links, thermal violation time, clock reasons,
 * remapped rows), moved by the mock's control commands (throttle, pcie-replay, nvlink-errors,
 * encoder, proc-util); readings a GPU does not have are -1; MIG devices with their memory;
 * per-process utilisation since a timestamp; a lost GPU fails every call. */
#include "agent/nvml.h"
#include "agent/nvml_abi.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef GP_NVML_MOCK
#error "GP_NVML_MOCK: the path of libgpupool-nvml-mock.so"
#endif

#define INV(name) GP_INVENTORIES "/" name

static char tmpdir[] = "/tmp/gp-test-nvml-sample-XXXXXX";
static char ctl[300];
static gp_nvml *opened;

/* Opens the mock over inventory with a fresh, empty control file (ctl). */
static gp_nvml *open_mock(const char *inventory)
{
    FILE *f = fopen(ctl, "w");
    assert_non_null(f);
    fclose(f);
    setenv("GPUPOOL_NVML_MOCK_INVENTORY", inventory, 1);
    setenv("GPUPOOL_NVML_MOCK_CONTROL", ctl, 1);
    gp_diag d;
    int rc = gp_nvml_open(GP_NVML_MOCK, &opened, &d);
    if (rc != 0) {
        fail_msg("gp_nvml_open(%s): %s", inventory, d.msg);
    }
    return opened;
}

static int close_mock(void **state)
{
    (void)state;
    gp_nvml_close(opened);
    opened = NULL;
    return 0;
}

static void control(const char *line)
{
    FILE *f = fopen(ctl, "a");
    assert_non_null(f);
    fprintf(f, "%s\n", line);
    fclose(f);
}

static gp_nvml_readings sample(gp_nvml *h, int gpu)
{
    gp_nvml_readings r;
    gp_diag d;
    int rc = gp_nvml_sample(h, gpu, &r, &d);
    if (rc != 0) {
        fail_msg("gp_nvml_sample(%d): %s", gpu, d.msg);
    }
    return r;
}

/* A T4 (pcie-t4.yaml): every reading the mock has, none made up for what it lacks (NVLink). */
static void test_every_reading(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"));
    gp_nvml_readings r = sample(h, 0);
    assert_int_equal(r.memory_used_mib, 1024);
    assert_int_equal(r.memory_reserved_mib, 15360 / 128);
    assert_int_equal(r.memory_free_mib, 15360 - 1024 - 15360 / 128);
    assert_int_equal(r.util_encoder, 0);
    assert_int_equal(r.util_decoder, 0);
    assert_true(r.temperature_c >= 34 && r.temperature_c <= 68);
    assert_true(r.memory_temperature_c >= r.temperature_c);
    assert_true(r.power_limit_w == 70); /* the power pattern's peak, 68 W, rounded up */
    assert_true(r.energy_mj >= 0);
    assert_int_equal(r.pcie_replays, 0);
    assert_int_equal(r.thermal_violation_us, 0);
    assert_true(r.clock_reasons >= 0);
    assert_int_equal(r.remapped_correctable, 0);
    assert_int_equal(r.remapped_uncorrectable, 0);
    assert_int_equal(r.remap_failure, 0);
    /* a PCIe card has no NVLink: no counters, not 0 */
    assert_int_equal(r.nvlink_replay, -1);
    assert_int_equal(r.nvlink_recovery, -1);
    assert_int_equal(r.nvlink_crc_flit, -1);
    assert_int_equal(r.nvlink_crc_data, -1);
    /* energy only grows */
    gp_nvml_readings later = sample(h, 0);
    assert_true(later.energy_mj >= r.energy_mj);
}

/* The control commands move what they should, on the GPU they name only. */
static void test_counters_follow_control(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"));
    control("throttle 1 3600000000"); /* an hour: the slowdown bit stays for the test */
    control("pcie-replay 2 3");
    control("pcie-replay 2 2");
    control("encoder 3 41");
    control("decoder 3 12");
    control("remap 0 1 0");
    gp_nvml_readings r = sample(h, 1);
    assert_int_equal(r.thermal_violation_us, 3600000000);
    assert_true(r.clock_reasons & (int64_t)nvmlClocksThrottleReasonHwThermalSlowdown);
    assert_int_equal(sample(h, 0).thermal_violation_us, 0);
    assert_false(sample(h, 0).clock_reasons & (int64_t)nvmlClocksThrottleReasonHwThermalSlowdown);
    assert_int_equal(sample(h, 2).pcie_replays, 5);
    assert_int_equal(sample(h, 1).pcie_replays, 0);
    r = sample(h, 3);
    assert_int_equal(r.util_encoder, 41);
    assert_int_equal(r.util_decoder, 12);
    assert_int_equal(sample(h, 0).remapped_uncorrectable, 1);
    /* software thermal slowdown at 87 C and above, power cap at the limit */
    control("temp 2 90");
    control("power 2 70");
    r = sample(h, 2);
    assert_true(r.clock_reasons & (int64_t)nvmlClocksEventReasonSwThermalSlowdown);
    assert_true(r.clock_reasons & (int64_t)nvmlClocksEventReasonSwPowerCap);
    assert_int_equal(r.memory_temperature_c, 96);
}

/* NVLink errors are summed over the active links: a link that goes down no longer counts. */
static void test_nvlink_errors(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("dgx-a100.yaml"));
    gp_nvml_readings r = sample(h, 0);
    assert_int_equal(r.nvlink_crc_flit, 0);
    assert_int_equal(r.nvlink_crc_data, 0);
    control("nvlink-errors 0 2 4 crc-flit");
    control("nvlink-errors 0 5 3 crc-flit");
    control("nvlink-errors 0 5 7");
    control("nvlink-errors 0 1 2 replay");
    control("nvlink-errors 0 1 1 recovery");
    r = sample(h, 0);
    assert_int_equal(r.nvlink_crc_flit, 7);
    assert_int_equal(r.nvlink_crc_data, 7); /* the default kind */
    assert_int_equal(r.nvlink_replay, 2);
    assert_int_equal(r.nvlink_recovery, 1);
    assert_int_equal(sample(h, 1).nvlink_crc_flit, 0);
    control("nvlink 0 5 down");
    r = sample(h, 0);
    assert_int_equal(r.nvlink_crc_flit, 4);
    assert_int_equal(r.nvlink_crc_data, 0);
}

/* MIG devices: identity and memory from the MIG handles; no utilisation; none off MIG. */
static void test_mig_devices(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("h100-mig.yaml"));
    gp_nvml_mig_reading m[GP_NVML_MAX_MIG];
    int n = 0;
    gp_diag d;
    assert_int_equal(gp_nvml_sample_mig(h, 0, m, GP_NVML_MAX_MIG, &n, &d), 0);
    assert_int_equal(n, 4);
    assert_string_equal(m[0].uuid, "MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c01");
    assert_string_equal(m[0].profile, "3g.40gb");
    assert_int_equal(m[0].gpu_instance, 1);
    assert_int_equal(m[0].memory_total_mib, 40192);
    assert_int_equal(m[0].memory_used_mib + m[0].memory_free_mib, 40192);
    assert_int_equal(m[0].util_gpu, -1);
    assert_string_equal(m[3].profile, "1g.10gb");
    assert_int_equal(m[3].gpu_instance, 4);
    /* the caller's room bounds it */
    assert_int_equal(gp_nvml_sample_mig(h, 1, m, 3, &n, &d), 0);
    assert_int_equal(n, 3);
    assert_int_equal(gp_nvml_sample_mig(h, 3, m, GP_NVML_MAX_MIG, &n, &d), 0);
    assert_int_equal(n, 0);
    assert_int_equal(gp_nvml_sample_mig(h, 9, m, GP_NVML_MAX_MIG, &n, &d), GP_EINVAL);
    /* a GPU in MIG mode has no whole-GPU utilisation */
    assert_int_equal(sample(h, 0).util_gpu, -1);
}

/* Per-process utilisation: the processes with samples since the timestamp; the timestamp moves
 * on, so the same samples are not taken twice; a GPU in MIG mode has none. */
static void test_process_util(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"));
    gp_nvml_proc_util p[8];
    int n = -1;
    uint64_t since = 0;
    gp_diag d;
    assert_int_equal(gp_nvml_process_util(h, 1, &since, p, 8, &n, &d), 0);
    assert_int_equal(n, 0); /* no process did anything: NVML's NOT_FOUND */
    control("proc-util 1 4001 37");
    control("proc-util 1 4002 20");
    control("proc-util 1 4003 5");
    control("proc-util 1 4003 0"); /* ended */
    control("proc-util 2 4004 90");
    assert_int_equal(gp_nvml_process_util(h, 1, &since, p, 8, &n, &d), 0);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].pid, 4001);
    assert_int_equal(p[0].sm, 37);
    assert_int_equal(p[0].memory, 18);
    assert_int_equal(p[1].pid, 4002);
    assert_int_equal(p[1].sm, 20);
    assert_true(since > 0);
    /* asked again from the newest sample on: nothing new yet, or new samples only */
    uint64_t before = since;
    assert_int_equal(gp_nvml_process_util(h, 1, &since, p, 8, &n, &d), 0);
    assert_true(since >= before);
    /* the caller's room bounds it */
    uint64_t zero = 0;
    assert_int_equal(gp_nvml_process_util(h, 1, &zero, p, 1, &n, &d), 0);
    assert_int_equal(n, 1);
    close_mock(NULL);
    h = open_mock(INV("h100-mig.yaml"));
    since = 0;
    assert_int_equal(gp_nvml_process_util(h, 0, &since, p, 8, &n, &d), GP_ENOTSUP);
    assert_int_equal(n, 0);
}

/* A GPU off the bus fails every sampling call; the others carry on. */
static void test_lost_gpu(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"));
    control("fall-off 2");
    gp_nvml_readings r;
    gp_nvml_mig_reading m[GP_NVML_MAX_MIG];
    gp_nvml_proc_util p[4];
    int n = 0;
    uint64_t since = 0;
    gp_diag d;
    assert_int_equal(gp_nvml_sample(h, 2, &r, &d), GP_EUNAVAIL);
    assert_non_null(strstr(d.msg, "GPU 2"));
    assert_int_equal(gp_nvml_sample_mig(h, 2, m, GP_NVML_MAX_MIG, &n, &d), GP_EUNAVAIL);
    assert_int_equal(gp_nvml_process_util(h, 2, &since, p, 4, &n, &d), GP_EUNAVAIL);
    r = sample(h, 1);
    assert_int_equal(r.memory_used_mib, 1024);
}

static void test_bad_control_lines(void **state)
{
    (void)state;
    gp_nvml *h = open_mock(INV("pcie-t4.yaml"));
    /* bad lines are reported on stderr and ignored: nothing moves */
    control("throttle 1 -5");
    control("pcie-replay 9 1");
    control("nvlink-errors 0 0 1"); /* a T4 has no links */
    control("proc-util 1 4001 101");
    control("nvlink-errors 0 0 1 sideways");
    gp_nvml_readings r = sample(h, 1);
    assert_int_equal(r.thermal_violation_us, 0);
    assert_int_equal(r.pcie_replays, 0);
    gp_nvml_proc_util p[4];
    int n = 0;
    uint64_t since = 0;
    gp_diag d;
    assert_int_equal(gp_nvml_process_util(h, 1, &since, p, 4, &n, &d), 0);
    assert_int_equal(n, 0);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir)) {
        return -1;
    }
    snprintf(ctl, sizeof(ctl), "%s/control", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(ctl);
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_every_reading, close_mock),
        cmocka_unit_test_teardown(test_counters_follow_control, close_mock),
        cmocka_unit_test_teardown(test_nvlink_errors, close_mock),
        cmocka_unit_test_teardown(test_mig_devices, close_mock),
        cmocka_unit_test_teardown(test_process_util, close_mock),
        cmocka_unit_test_teardown(test_lost_gpu, close_mock),
        cmocka_unit_test_teardown(test_bad_control_lines, close_mock),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
