/* The agent's metrics text (src/agent/metrics.c): dcgm-exporter's family names and labels in
 * their order, job labels only on a GPU held whole by one replica, MIG devices with GPU_I_PROFILE
 * and GPU_I_ID, readings NVML did not give left out (never 0; a family with no sample at all has
 * no header either), label values escaped, slices of every kind with their own labels, the
 * agent's own families, every family written once with its samples together, and the hand-over
 * (gp_metrics) rendering what was published last. */
#include "agent/metrics.h"
#include "tests/unit/harness.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every reading unknown. */
static void unknown(gp_nvml_readings *r)
{
    memset(r, 0xff, sizeof(*r)); /* every int and int64_t -1 */
    r->power_w = -1;
    r->power_limit_w = -1;
}

static void gpu(gp_metrics_gpu *g, int index, const char *uuid, const char *bus)
{
    memset(g, 0, sizeof(*g));
    g->index = index;
    snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
    snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", bus);
    snprintf(g->model, sizeof(g->model), "NVIDIA A100-SXM4-80GB");
    g->sampled = true;
    unknown(&g->r);
}

static void job(gp_metrics_job *j, const char *name, int64_t id, const char *tenant,
                const char *queue)
{
    snprintf(j->name, sizeof(j->name), "%s", name);
    j->id = id;
    snprintf(j->tenant, sizeof(j->tenant), "%s", tenant);
    snprintf(j->queue, sizeof(j->queue), "%s", queue);
}

/*
 * GPU 0: held whole by job train (7); every reading known.
 * GPU 1: shared by two fractions; a few readings unknown; no job labels.
 * GPU 2: MIG mode, two MIG devices (one held by job mig-job), no whole-GPU utilisation.
 * GPU 3: lost (not sampled), its last XID 79.
 */
static gp_metrics_snapshot *snapshot(void)
{
    gp_metrics_snapshot *s = gp_metrics_snapshot_new(4);
    assert_non_null(s);
    snprintf(s->node, sizeof(s->node), "node-1");
    snprintf(s->version, sizeof(s->version), "1.2.3");
    snprintf(s->driver_version, sizeof(s->driver_version), "550.54.15");
    snprintf(s->cuda_version, sizeof(s->cuda_version), "12.4");
    s->ngpus = 4;
    gpu(&s->gpus[0], 0, "GPU-aaaa", "00000000:07:00.0");
    gpu(&s->gpus[1], 1, "GPU-bbbb", "00000000:0F:00.0");
    gpu(&s->gpus[2], 2, "GPU-cccc", "00000000:47:00.0");
    gpu(&s->gpus[3], 3, "GPU-dddd", "00000000:4E:00.0");
    gp_nvml_readings *r = &s->gpus[0].r;
    *r = (gp_nvml_readings){.util_gpu = 87,
                            .util_memory = 40,
                            .util_encoder = -1,
                            .util_decoder = 3,
                            .memory_used_mib = 4096,
                            .memory_free_mib = 77184,
                            .memory_reserved_mib = 640,
                            .temperature_c = 61,
                            .memory_temperature_c = 67,
                            .power_w = 212.5,
                            .power_limit_w = 400,
                            .energy_mj = 123456789012,
                            .sm_clock_mhz = 1410,
                            .memory_clock_mhz = 1593,
                            .pcie_replays = 2,
                            .nvlink_replay = 0,
                            .nvlink_recovery = 1,
                            .nvlink_crc_flit = 5,
                            .nvlink_crc_data = 6,
                            .thermal_violation_us = 250000,
                            .clock_reasons = 0x41,
                            .remapped_correctable = 0,
                            .remapped_uncorrectable = 1,
                            .remap_failure = 0,
                            .ecc_corrected = 3,
                            .ecc_uncorrected = 0};
    s->gpus[0].held = true;
    job(&s->gpus[0].job, "train", 7, "team-a", "batch");
    s->gpus[1].r.util_gpu = 50;
    s->gpus[1].r.temperature_c = 44;
    s->gpus[1].r.memory_used_mib = 9000;
    s->gpus[2].r.temperature_c = 50;
    s->gpus[2].nmig = 2;
    gp_nvml_mig_reading mig[2] = {
        {"MIG-1111", "3g.40gb", 1, 40192, 1024, 39168, -1},
        {"MIG-2222", "1g.10gb", 3, 9856, 0, 9856, -1},
    };
    memcpy(s->gpus[2].mig, mig, sizeof(mig));
    s->gpus[2].mig_held[0] = true;
    job(&s->gpus[2].mig_job[0], "mig-job", 9, "team-b", "default");
    s->gpus[3].sampled = false;
    s->gpus[0].last_xid = 0;
    s->gpus[1].last_xid = 0;
    s->gpus[2].last_xid = -1; /* no XID events: left out */
    s->gpus[3].last_xid = 79;

    s->nslices = 4;
    s->slices[0] = (gp_metrics_slice){.gpu = 0,
                                      .replica = 0,
                                      .kind = GP_METRICS_WHOLE,
                                      .milli = 1000,
                                      .gpu_instance = -1,
                                      .used_bytes = INT64_C(3000) << 20,
                                      .limit_bytes = INT64_C(81920) << 20,
                                      .util_ratio = 0.87};
    job(&s->slices[0].job, "train", 7, "team-a", "batch");
    s->slices[1] = (gp_metrics_slice){.gpu = 1,
                                      .replica = 2,
                                      .kind = GP_METRICS_FRACTION,
                                      .milli = 500,
                                      .gpu_instance = -1,
                                      .used_bytes = INT64_C(700) << 20,
                                      .limit_bytes = INT64_C(10240) << 20,
                                      .util_ratio = 0.37};
    job(&s->slices[1].job, "we\"ird\\name\n", 8, "team-a", "");
    s->slices[2] = (gp_metrics_slice){.gpu = 1,
                                      .replica = 0,
                                      .kind = GP_METRICS_FRACTION,
                                      .milli = 250,
                                      .gpu_instance = -1,
                                      .used_bytes = -1,
                                      .limit_bytes = INT64_C(5120) << 20,
                                      .util_ratio = -1};
    job(&s->slices[2].job, "small", 10, "team-c", "interactive");
    s->slices[3] = (gp_metrics_slice){.gpu = 2,
                                      .replica = 0,
                                      .kind = GP_METRICS_MIG,
                                      .profile = "3g.40gb",
                                      .gpu_instance = 1,
                                      .used_bytes = INT64_C(1024) << 20,
                                      .limit_bytes = INT64_C(40192) << 20,
                                      .util_ratio = -1};
    job(&s->slices[3].job, "mig-job", 9, "team-b", "default");
    s->heartbeat_failures = 4;
    s->replicas[GP_LOCAL_RUNNING] = 4;
    s->replicas[GP_LOCAL_EXITED] = 1;
    return s;
}

/* The text of s (a new string). */
static char *text_of(const gp_metrics_snapshot *s)
{
    gp_prom p;
    gp_prom_init(&p);
    gp_metrics_write(s, true, &p);
    const char *t = gp_prom_text(&p);
    assert_non_null(t);
    char *copy = strdup(t);
    gp_prom_fini(&p);
    return copy;
}

static void has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = strstr(text, line); p; p = strstr(p + 1, line)) {
        if ((p == text || p[-1] == '\n') && p[n] == '\n') {
            return;
        }
    }
    fail_msg("missing line:\n%s\nin:\n%s", line, text);
}

/* No line starts with prefix. */
static void no_line(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, prefix, n) == 0) {
            const char *end = strchr(p, '\n');
            fail_msg("unexpected line: %.*s", (int)(end ? end - p : (long)strlen(p)), p);
        }
    }
}

#define GPU0                                                                                       \
    "gpu=\"0\",UUID=\"GPU-aaaa\",pci_bus_id=\"00000000:07:00.0\",device=\"nvidia0\","              \
    "modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"node-1\",hostname=\"node-1\""
#define JOB0 "gpupool_job=\"train\",gpupool_job_id=\"7\",tenant=\"team-a\",queue=\"batch\""
#define GPU1                                                                                       \
    "gpu=\"1\",UUID=\"GPU-bbbb\",pci_bus_id=\"00000000:0F:00.0\",device=\"nvidia1\","              \
    "modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"node-1\",hostname=\"node-1\""
#define GPU2                                                                                       \
    "gpu=\"2\",UUID=\"GPU-cccc\",pci_bus_id=\"00000000:47:00.0\",device=\"nvidia2\","              \
    "modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"node-1\",hostname=\"node-1\""
#define GPU3                                                                                       \
    "gpu=\"3\",UUID=\"GPU-dddd\",pci_bus_id=\"00000000:4E:00.0\",device=\"nvidia3\","              \
    "modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"node-1\",hostname=\"node-1\""

/* Every reading of a GPU held whole, with the job's labels after the device's, in order. */
static void test_gpu_held_whole(void **state)
{
    (void)state;
    gp_metrics_snapshot *s = snapshot();
    char *t = text_of(s);
    has_line(t, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).");
    has_line(t, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge");
    has_line(t, "DCGM_FI_DEV_GPU_UTIL{" GPU0 "," JOB0 "} 87");
    has_line(t, "DCGM_FI_DEV_MEM_COPY_UTIL{" GPU0 "," JOB0 "} 40");
    has_line(t, "DCGM_FI_DEV_DEC_UTIL{" GPU0 "," JOB0 "} 3");
    has_line(t, "DCGM_FI_DEV_FB_USED{" GPU0 "," JOB0 "} 4096");
    has_line(t, "DCGM_FI_DEV_FB_FREE{" GPU0 "," JOB0 "} 77184");
    has_line(t, "DCGM_FI_DEV_FB_RESERVED{" GPU0 "," JOB0 "} 640");
    has_line(t, "DCGM_FI_DEV_GPU_TEMP{" GPU0 "," JOB0 "} 61");
    has_line(t, "DCGM_FI_DEV_MEMORY_TEMP{" GPU0 "," JOB0 "} 67");
    has_line(t, "DCGM_FI_DEV_POWER_USAGE{" GPU0 "," JOB0 "} 212.5");
    has_line(t, "DCGM_FI_DEV_POWER_MGMT_LIMIT{" GPU0 "," JOB0 "} 400");
    has_line(t, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter");
    has_line(t, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" GPU0 "," JOB0 "} 123456789012");
    has_line(t, "DCGM_FI_DEV_SM_CLOCK{" GPU0 "," JOB0 "} 1410");
    has_line(t, "DCGM_FI_DEV_MEM_CLOCK{" GPU0 "," JOB0 "} 1593");
    has_line(t, "DCGM_FI_DEV_XID_ERRORS{" GPU0 "," JOB0 "} 0");
    has_line(t, "# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter");
    has_line(t, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{" GPU0 "," JOB0 "} 2");
    has_line(t, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{" GPU0 "," JOB0 "} 5");
    has_line(t, "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL{" GPU0 "," JOB0 "} 6");
    has_line(t, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL{" GPU0 "," JOB0 "} 0");
    has_line(t, "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL{" GPU0 "," JOB0 "} 1");
    has_line(t, "# TYPE DCGM_FI_DEV_THERMAL_VIOLATION counter");
    has_line(t, "DCGM_FI_DEV_THERMAL_VIOLATION{" GPU0 "," JOB0 "} 250000");
    has_line(t, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{" GPU0 "," JOB0 "} 65");
    has_line(t, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS{" GPU0 "," JOB0 "} 0");
    has_line(t, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{" GPU0 "," JOB0 "} 1");
    has_line(t, "DCGM_FI_DEV_ROW_REMAP_FAILURE{" GPU0 "," JOB0 "} 0");
    has_line(t, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{" GPU0 "," JOB0 "} 3");
    has_line(t, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{" GPU0 "," JOB0 "} 0");
    free(t);
    gp_metrics_snapshot_free(s);
}

/* A shared GPU has no job labels; what NVML did not give has no sample; a family nobody has a
 * reading for has no header; a lost GPU shows only its last XID. */
static void test_absent_and_shared(void **state)
{
    (void)state;
    gp_metrics_snapshot *s = snapshot();
    char *t = text_of(s);
    has_line(t, "DCGM_FI_DEV_GPU_UTIL{" GPU1 "} 50");
    has_line(t, "DCGM_FI_DEV_GPU_TEMP{" GPU1 "} 44");
    has_line(t, "DCGM_FI_DEV_XID_ERRORS{" GPU1 "} 0");
    no_line(t, "DCGM_FI_DEV_MEMORY_TEMP{gpu=\"1\"");
    no_line(t, "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\"");
    no_line(t, "DCGM_FI_DEV_FB_FREE{gpu=\"1\"");
    /* nobody has an encoder reading: no family at all */
    no_line(t, "# HELP DCGM_FI_DEV_ENC_UTIL");
    no_line(t, "DCGM_FI_DEV_ENC_UTIL");
    /* GPU 2 (MIG mode) has no utilisation and no XID events; GPU 3 is lost */
    no_line(t, "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\"");
    no_line(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"2\"");
    has_line(t, "DCGM_FI_DEV_XID_ERRORS{" GPU3 "} 79");
    no_line(t, "DCGM_FI_DEV_GPU_TEMP{gpu=\"3\"");
    no_line(t, "DCGM_FI_DEV_FB_USED{gpu=\"3\"");
    /* nothing reads 0 for what is unknown: the shared GPU's reserve, for one */
    no_line(t, "DCGM_FI_DEV_FB_RESERVED{gpu=\"1\"");
    no_line(t, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL");
    free(t);
    gp_metrics_snapshot_free(s);
}

/* MIG devices: the per-device families NVML answers for them, GPU_I_PROFILE and GPU_I_ID after
 * the device's labels, the job's on the one a replica runs on. */
static void test_mig_devices(void **state)
{
    (void)state;
    gp_metrics_snapshot *s = snapshot();
    char *t = text_of(s);
    has_line(t, "DCGM_FI_DEV_FB_USED{" GPU2 ",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\","
                "gpupool_job=\"mig-job\",gpupool_job_id=\"9\",tenant=\"team-b\","
                "queue=\"default\"} 1024");
    has_line(t, "DCGM_FI_DEV_FB_FREE{" GPU2 ",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"3\"} 9856");
    has_line(t, "DCGM_FI_DEV_FB_USED{" GPU2 ",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"3\"} 0");
    has_line(t, "DCGM_FI_DEV_GPU_TEMP{" GPU2 "} 50");
    no_line(t, "DCGM_FI_DEV_GPU_TEMP{" GPU2 ",GPU_I");
    no_line(t, "DCGM_FI_DEV_GPU_UTIL{" GPU2);
    free(t);
    gp_metrics_snapshot_free(s);
}

/* Slices: gpupool's labels, milli for fractions, the MIG instance for MIG slices, escaped
 * values, empty labels left out, unknown values without a sample. */
static void test_slices(void **state)
{
    (void)state;
    gp_metrics_snapshot *s = snapshot();
    char *t = text_of(s);
    has_line(t, "# TYPE gpupool_slice_memory_used_bytes gauge");
    has_line(t, "gpupool_slice_memory_used_bytes{gpu=\"0\",UUID=\"GPU-aaaa\",Hostname=\"node-1\","
                "gpupool_job=\"train\",gpupool_job_id=\"7\",replica=\"0\",tenant=\"team-a\","
                "queue=\"batch\",kind=\"gpu\"} 3145728000");
    has_line(t, "gpupool_slice_memory_limit_bytes{gpu=\"1\",UUID=\"GPU-bbbb\",Hostname=\"node-1\","
                "gpupool_job=\"we\\\"ird\\\\name\\n\",gpupool_job_id=\"8\",replica=\"2\","
                "tenant=\"team-a\",kind=\"fraction\",milli=\"500\"} 10737418240");
    has_line(t, "gpupool_slice_utilization_ratio{gpu=\"1\",UUID=\"GPU-bbbb\",Hostname=\"node-1\","
                "gpupool_job=\"we\\\"ird\\\\name\\n\",gpupool_job_id=\"8\",replica=\"2\","
                "tenant=\"team-a\",kind=\"fraction\",milli=\"500\"} 0.37");
    has_line(t, "gpupool_slice_memory_limit_bytes{gpu=\"1\",UUID=\"GPU-bbbb\",Hostname=\"node-1\","
                "gpupool_job=\"small\",gpupool_job_id=\"10\",replica=\"0\",tenant=\"team-c\","
                "queue=\"interactive\",kind=\"fraction\",milli=\"250\"} 5368709120");
    no_line(t, "gpupool_slice_memory_used_bytes{gpu=\"1\",UUID=\"GPU-bbbb\",Hostname=\"node-1\","
               "gpupool_job=\"small\"");
    no_line(t, "gpupool_slice_utilization_ratio{gpu=\"1\",UUID=\"GPU-bbbb\",Hostname=\"node-1\","
               "gpupool_job=\"small\"");
    has_line(t, "gpupool_slice_memory_limit_bytes{gpu=\"2\",UUID=\"GPU-cccc\",Hostname=\"node-1\","
                "gpupool_job=\"mig-job\",gpupool_job_id=\"9\",replica=\"0\",tenant=\"team-b\","
                "queue=\"default\",kind=\"mig\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\"} "
                "42144366592");
    no_line(t, "gpupool_slice_utilization_ratio{gpu=\"2\"");
    free(t);
    gp_metrics_snapshot_free(s);
}

static void test_agent_families(void **state)
{
    (void)state;
    gp_metrics_snapshot *s = snapshot();
    char *t = text_of(s);
    has_line(t, "gpupool_agent_info{version=\"1.2.3\",driver_version=\"550.54.15\","
                "cuda_version=\"12.4\",Hostname=\"node-1\"} 1");
    has_line(t, "# TYPE gpupool_agent_heartbeat_failures_total counter");
    has_line(t, "gpupool_agent_heartbeat_failures_total 4");
    has_line(t, "gpupool_agent_replicas{state=\"starting\"} 0");
    has_line(t, "gpupool_agent_replicas{state=\"running\"} 4");
    has_line(t, "gpupool_agent_replicas{state=\"exited\"} 1");
    has_line(t, "gpupool_agent_replicas{state=\"killed\"} 0");
    has_line(t, "gpupool_agent_replicas{state=\"lost\"} 0");
    free(t);
    /* a node without GPUs or replicas, versions unknown: the agent's families only */
    gp_metrics_snapshot *e = gp_metrics_snapshot_new(0);
    snprintf(e->node, sizeof(e->node), "cpu-only");
    t = text_of(e);
    has_line(t, "gpupool_agent_info{Hostname=\"cpu-only\"} 1");
    no_line(t, "DCGM_");
    no_line(t, "gpupool_slice_");
    no_line(t, "# HELP DCGM_");
    free(t);
    gp_metrics_snapshot_free(e);
    gp_metrics_snapshot_free(s);
}

/* Each family has one HELP and one TYPE line, before its samples, and its samples are together
 * (a family split in two is refused by Prometheus). */
static void test_families_once(void **state)
{
    (void)state;
    gp_metrics_snapshot *s = snapshot();
    char *t = text_of(s);
    char seen[64][96];
    int nseen = 0;
    char current[96] = "";
    int samples = 0;
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        char name[96];
        if (strncmp(line, "# HELP ", 7) == 0) {
            sscanf(line + 7, "%95s", name);
            for (int i = 0; i < nseen; i++) {
                if (strcmp(seen[i], name) == 0) {
                    fail_msg("family %s written twice", name);
                }
            }
            assert_true(nseen < 64);
            snprintf(seen[nseen++], sizeof(seen[0]), "%s", name);
            snprintf(current, sizeof(current), "%s", name);
            continue;
        }
        if (line[0] == '#') {
            assert_int_equal(strncmp(line, "# TYPE ", 7), 0);
            assert_int_equal(strncmp(line + 7, current, strlen(current)), 0);
            continue;
        }
        size_t n = strcspn(line, "{ ");
        if (strlen(current) != n || strncmp(line, current, n) != 0) {
            fail_msg("sample outside its family (%s): %s", current, line);
        }
        samples++;
    }
    assert_true(nseen >= 30);
    assert_true(samples > 40);
    free(t);
    gp_metrics_snapshot_free(s);
}

/* Without jobs (an anonymous scraper of an open /metrics) the GPUs' samples keep their device
 * labels, and nothing names a job, a tenant or a queue: the slice families are left out. */
static void test_pool_wide(void **state)
{
    (void)state;
    gp_metrics_snapshot *s = snapshot();
    gp_prom p;
    gp_prom_init(&p);
    gp_metrics_write(s, false, &p);
    const char *t = gp_prom_text(&p);
    assert_non_null(t);
    has_line(t, "DCGM_FI_DEV_GPU_UTIL{" GPU0 "} 87");
    has_line(t, "gpupool_agent_heartbeat_failures_total 4");
    const char *hidden[] = {"tenant=", "queue=", "gpupool_job",
                            "team-a",  "team-b", "gpupool_slice_"};
    for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
        if (strstr(t, hidden[i])) {
            fail_msg("%s in the pool-wide page:\n%s", hidden[i], t);
        }
    }
    gp_prom_fini(&p);
    gp_metrics_snapshot_free(s);
}

/* The hand-over renders nothing before the first snapshot, then the latest one published. */
static void test_publish(void **state)
{
    (void)state;
    gp_metrics *m = gp_metrics_new();
    assert_non_null(m);
    gp_prom p;
    gp_prom_init(&p);
    gp_metrics_render(m, true, &p);
    assert_string_equal(gp_prom_text(&p), "");
    gp_prom_fini(&p);
    gp_metrics_snapshot *a = snapshot();
    a->heartbeat_failures = 1;
    gp_metrics_publish(m, a);
    gp_metrics_snapshot *b = snapshot();
    b->heartbeat_failures = 2;
    char *want = text_of(b);
    gp_metrics_publish(m, b); /* a is freed */
    gp_prom_init(&p);
    gp_metrics_render(m, true, &p);
    assert_string_equal(gp_prom_text(&p), want);
    assert_non_null(strstr(gp_prom_text(&p), "\ngpupool_agent_heartbeat_failures_total 2\n"));
    gp_prom_fini(&p);
    free(want);
    gp_metrics_free(m);
    gp_metrics_free(NULL);
    gp_metrics_snapshot_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_held_whole), cmocka_unit_test(test_absent_and_shared),
        cmocka_unit_test(test_mig_devices),    cmocka_unit_test(test_slices),
        cmocka_unit_test(test_agent_families), cmocka_unit_test(test_families_once),
        cmocka_unit_test(test_publish),        cmocka_unit_test(test_pool_wide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
