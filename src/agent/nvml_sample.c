/*
 * Sampling through NVML (see nvml.h): a GPU's readings, its MIG devices' memory, and per-process
 * utilisation. Everything goes through the function table of nvml.c (gp_nvml_fns); a reading
 * whose optional function the library lacks stays -1, so an older driver still gives what it
 * has. Only a lost GPU (or NVML shut down, or a handle NVML does not know) fails a whole sample:
 * any other failure of one reading leaves that reading out.
 */
#include "agent/nvml.h"
#include "agent/nvml_abi.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A sample in progress: the GPU, its handle and the table. */
typedef struct sampler {
    const gp_nvml *h;
    const struct gp_nvml_fns *fn;
    nvmlDevice_t dev;
    int gpu;
    gp_diag *d;
} sampler;

/* 0 when a reading's failure rc only makes its field unknown; else the error, recorded in d.
 * A lost GPU, NVML shut down, or a handle NVML does not know fail the whole sample; for optional
 * readings (strict false) only a lost GPU does: an older driver may answer a newer query with
 * INVALID_ARGUMENT. */
static int fatal(const sampler *s, nvmlReturn_t rc, bool strict, const char *fname)
{
    if (rc == NVML_ERROR_GPU_IS_LOST ||
        (strict && (rc == NVML_ERROR_UNINITIALIZED || rc == NVML_ERROR_INVALID_ARGUMENT))) {
        return gp_nvml_fail(s->h, s->d, rc, s->gpu, fname);
    }
    return 0;
}

/* Calls an NVML reading into rc; returns from the sampling function when it is fatal. */
#define READ(call, strict, fname)                                                                  \
    do {                                                                                           \
        rc = (call);                                                                               \
        int frc_ = rc == NVML_SUCCESS ? 0 : fatal(s, rc, (strict), (fname));                       \
        if (frc_ < 0) {                                                                            \
            return frc_;                                                                           \
        }                                                                                          \
    } while (0)

/* An optional function: read only when the library has it (rc stays NOT_SUPPORTED otherwise). */
#define READ_OPT(fnname, ...)                                                                      \
    do {                                                                                           \
        rc = NVML_ERROR_FUNCTION_NOT_FOUND;                                                        \
        if (s->fn->fnname) {                                                                       \
            READ(s->fn->fnname(__VA_ARGS__), false, #fnname);                                      \
        }                                                                                          \
    } while (0)

static void unknown_all(gp_nvml_readings *r)
{
    *r = (gp_nvml_readings){
        .util_gpu = -1,
        .util_memory = -1,
        .util_encoder = -1,
        .util_decoder = -1,
        .memory_used_mib = -1,
        .memory_free_mib = -1,
        .memory_reserved_mib = -1,
        .temperature_c = -1,
        .memory_temperature_c = -1,
        .power_w = -1,
        .power_limit_w = -1,
        .energy_mj = -1,
        .sm_clock_mhz = -1,
        .memory_clock_mhz = -1,
        .pcie_replays = -1,
        .nvlink_replay = -1,
        .nvlink_recovery = -1,
        .nvlink_crc_flit = -1,
        .nvlink_crc_data = -1,
        .thermal_violation_us = -1,
        .clock_reasons = -1,
        .remapped_correctable = -1,
        .remapped_uncorrectable = -1,
        .remap_failure = -1,
        .ecc_corrected = -1,
        .ecc_uncorrected = -1,
    };
}

/* A field value's number, whatever its type. */
static int64_t field_int(const nvmlFieldValue_t *fv)
{
    switch (fv->valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
        return (int64_t)fv->value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
        return (int64_t)fv->value.ulVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        return (int64_t)fv->value.ullVal;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        return (int64_t)fv->value.sllVal;
    case NVML_VALUE_TYPE_SIGNED_INT:
        return fv->value.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
        return fv->value.usVal;
    default:
        return fv->value.uiVal;
    }
}

/* Utilisation of the engines: SMs and memory (required), encoder and decoder. */
static int sample_util(const sampler *s, gp_nvml_readings *out)
{
    nvmlReturn_t rc;
    nvmlUtilization_t util;
    READ(s->fn->nvmlDeviceGetUtilizationRates(s->dev, &util), true,
         "nvmlDeviceGetUtilizationRates");
    out->util_gpu = rc == NVML_SUCCESS ? (int)util.gpu : -1;
    out->util_memory = rc == NVML_SUCCESS ? (int)util.memory : -1;
    unsigned int v = 0, period = 0;
    READ_OPT(nvmlDeviceGetEncoderUtilization, s->dev, &v, &period);
    out->util_encoder = rc == NVML_SUCCESS ? (int)v : -1;
    READ_OPT(nvmlDeviceGetDecoderUtilization, s->dev, &v, &period);
    out->util_decoder = rc == NVML_SUCCESS ? (int)v : -1;
    return 0;
}

/* Device memory: v2 (with the reserve) when the library has it and the driver takes it, else v1;
 * and the memory's temperature, a field value. */
static int sample_memory(const sampler *s, gp_nvml_readings *out)
{
    nvmlReturn_t rc;
    nvmlMemory_v2_t m2;
    memset(&m2, 0, sizeof(m2));
    m2.version = nvmlMemory_v2;
    READ_OPT(nvmlDeviceGetMemoryInfo_v2, s->dev, &m2);
    if (rc == NVML_SUCCESS) {
        out->memory_used_mib = (int64_t)(m2.used >> 20);
        out->memory_free_mib = (int64_t)(m2.free >> 20);
        out->memory_reserved_mib = (int64_t)(m2.reserved >> 20);
    } else {
        nvmlMemory_t mem;
        READ(s->fn->nvmlDeviceGetMemoryInfo(s->dev, &mem), true, "nvmlDeviceGetMemoryInfo");
        out->memory_used_mib = rc == NVML_SUCCESS ? (int64_t)(mem.used >> 20) : -1;
        out->memory_free_mib = rc == NVML_SUCCESS ? (int64_t)(mem.free >> 20) : -1;
    }
    nvmlFieldValue_t fv;
    memset(&fv, 0, sizeof(fv));
    fv.fieldId = NVML_FI_DEV_MEMORY_TEMP;
    READ_OPT(nvmlDeviceGetFieldValues, s->dev, 1, &fv);
    if (rc == NVML_SUCCESS && fv.nvmlReturn == NVML_SUCCESS) {
        out->memory_temperature_c = (int)field_int(&fv);
    }
    return 0;
}

/* Temperature, power, energy and clocks. */
static int sample_power(const sampler *s, gp_nvml_readings *out)
{
    nvmlReturn_t rc;
    unsigned int v = 0;
    READ(s->fn->nvmlDeviceGetTemperature(s->dev, NVML_TEMPERATURE_GPU, &v), true,
         "nvmlDeviceGetTemperature");
    out->temperature_c = rc == NVML_SUCCESS ? (int)v : -1;
    READ(s->fn->nvmlDeviceGetPowerUsage(s->dev, &v), true, "nvmlDeviceGetPowerUsage");
    out->power_w = rc == NVML_SUCCESS ? v / 1000.0 : -1;
    READ_OPT(nvmlDeviceGetPowerManagementLimit, s->dev, &v);
    out->power_limit_w = rc == NVML_SUCCESS ? v / 1000.0 : -1;
    unsigned long long e = 0;
    READ_OPT(nvmlDeviceGetTotalEnergyConsumption, s->dev, &e);
    out->energy_mj = rc == NVML_SUCCESS ? (int64_t)e : -1;
    READ(s->fn->nvmlDeviceGetClockInfo(s->dev, NVML_CLOCK_SM, &v), true, "nvmlDeviceGetClockInfo");
    out->sm_clock_mhz = rc == NVML_SUCCESS ? (int)v : -1;
    READ(s->fn->nvmlDeviceGetClockInfo(s->dev, NVML_CLOCK_MEM, &v), true, "nvmlDeviceGetClockInfo");
    out->memory_clock_mhz = rc == NVML_SUCCESS ? (int)v : -1;
    return 0;
}

/* The four NVLink error counters, each summed over the active links; a counter no active link
 * answered stays -1 (and all do on a GPU without NVLink). */
static int sample_nvlink(const sampler *s, gp_nvml_readings *out)
{
    if (!s->fn->nvmlDeviceGetNvLinkErrorCounter) {
        return 0;
    }
    int64_t *sums[] = {&out->nvlink_replay, &out->nvlink_recovery, &out->nvlink_crc_flit,
                       &out->nvlink_crc_data};
    const nvmlNvLinkErrorCounter_t which[] = {
        NVML_NVLINK_ERROR_DL_REPLAY, NVML_NVLINK_ERROR_DL_RECOVERY, NVML_NVLINK_ERROR_DL_CRC_FLIT,
        NVML_NVLINK_ERROR_DL_CRC_DATA};
    nvmlReturn_t rc;
    for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        nvmlEnableState_t on = NVML_FEATURE_DISABLED;
        rc = s->fn->nvmlDeviceGetNvLinkState(s->dev, l, &on);
        if (rc == NVML_ERROR_GPU_IS_LOST) {
            return gp_nvml_fail(s->h, s->d, rc, s->gpu, "nvmlDeviceGetNvLinkState");
        }
        if (rc != NVML_SUCCESS) {
            break; /* past the GPU's links (INVALID_ARGUMENT), or no NVLink (NOT_SUPPORTED) */
        }
        for (int c = 0; on == NVML_FEATURE_ENABLED && c < 4; c++) {
            unsigned long long n = 0;
            READ(s->fn->nvmlDeviceGetNvLinkErrorCounter(s->dev, l, which[c], &n), false,
                 "nvmlDeviceGetNvLinkErrorCounter");
            if (rc == NVML_SUCCESS) {
                *sums[c] = (*sums[c] < 0 ? 0 : *sums[c]) + (int64_t)n;
            }
        }
    }
    return 0;
}

/* Why and how long the clocks were held down, PCIe replays, remapped rows. */
static int sample_faults(const sampler *s, gp_nvml_readings *out)
{
    nvmlReturn_t rc;
    nvmlViolationTime_t vt;
    memset(&vt, 0, sizeof(vt));
    READ_OPT(nvmlDeviceGetViolationStatus, s->dev, NVML_PERF_POLICY_THERMAL, &vt);
    out->thermal_violation_us = rc == NVML_SUCCESS ? (int64_t)(vt.violationTime / 1000) : -1;
    unsigned long long reasons = 0;
    if (s->fn->nvmlDeviceGetCurrentClocksEventReasons) {
        READ_OPT(nvmlDeviceGetCurrentClocksEventReasons, s->dev, &reasons);
    } else {
        READ_OPT(nvmlDeviceGetCurrentClocksThrottleReasons, s->dev, &reasons);
    }
    out->clock_reasons = rc == NVML_SUCCESS ? (int64_t)reasons : -1;
    unsigned int v = 0;
    READ_OPT(nvmlDeviceGetPcieReplayCounter, s->dev, &v);
    out->pcie_replays = rc == NVML_SUCCESS ? (int64_t)v : -1;
    unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
    READ_OPT(nvmlDeviceGetRemappedRows, s->dev, &corr, &unc, &pending, &failed);
    if (rc == NVML_SUCCESS) {
        out->remapped_correctable = corr;
        out->remapped_uncorrectable = unc;
        out->remap_failure = failed != 0;
    }
    return 0;
}

static int sample_ecc(const sampler *s, gp_nvml_readings *out)
{
    unsigned long long ce = 0, ue = 0;
    nvmlReturn_t rc;
    READ(s->fn->nvmlDeviceGetTotalEccErrors(s->dev, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                                            NVML_VOLATILE_ECC, &ce),
         true, "nvmlDeviceGetTotalEccErrors");
    out->ecc_corrected = rc == NVML_SUCCESS ? (int64_t)ce : -1;
    READ(s->fn->nvmlDeviceGetTotalEccErrors(s->dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                            NVML_VOLATILE_ECC, &ue),
         true, "nvmlDeviceGetTotalEccErrors");
    out->ecc_uncorrected = rc == NVML_SUCCESS ? (int64_t)ue : -1;
    return 0;
}

/* The sampler of GPU gpu; GP_EINVAL for a bad index. */
static int sampler_of(const gp_nvml *h, int gpu, sampler *s, gp_diag *d)
{
    int n = gp_nvml_count(h);
    if (gpu < 0 || gpu >= n) {
        return gp_diag_set(d, GP_EINVAL, "GPU %d: no such GPU (%d present)", gpu, n);
    }
    *s = (sampler){h, gp_nvml_fns(h), gp_nvml_device(h, gpu), gpu, d};
    return 0;
}

int gp_nvml_sample(const gp_nvml *h, int gpu, gp_nvml_readings *out, gp_diag *d)
{
    sampler s;
    unknown_all(out);
    int rc = sampler_of(h, gpu, &s, d);
    if (rc == 0) {
        rc = sample_util(&s, out);
    }
    if (rc == 0) {
        rc = sample_memory(&s, out);
    }
    if (rc == 0) {
        rc = sample_power(&s, out);
    }
    if (rc == 0) {
        rc = sample_nvlink(&s, out);
    }
    if (rc == 0) {
        rc = sample_faults(&s, out);
    }
    return rc == 0 ? sample_ecc(&s, out) : rc;
}

/* ---- MIG devices ---- */

/* One MIG device m: identity, memory, utilisation; a failure of one reading leaves it -1. */
static int sample_one_mig(const sampler *s, nvmlDevice_t m, gp_nvml_mig_reading *out)
{
    nvmlReturn_t rc;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
    memset(out, 0, sizeof(*out));
    out->gpu_instance = -1;
    out->memory_total_mib = out->memory_used_mib = out->memory_free_mib = -1;
    out->util_gpu = -1;
    READ(s->fn->nvmlDeviceGetUUID(m, out->uuid, sizeof(out->uuid)), true, "nvmlDeviceGetUUID");
    if (rc != NVML_SUCCESS) {
        out->uuid[0] = '\0';
    }
    READ(s->fn->nvmlDeviceGetName(m, name, sizeof(name)), true, "nvmlDeviceGetName");
    gp_nvml_profile_of(rc == NVML_SUCCESS ? name : "", out->profile, sizeof(out->profile));
    unsigned int id = 0;
    READ_OPT(nvmlDeviceGetGpuInstanceId, m, &id);
    out->gpu_instance = rc == NVML_SUCCESS ? (int)id : -1;
    nvmlMemory_t mem;
    READ(s->fn->nvmlDeviceGetMemoryInfo(m, &mem), true, "nvmlDeviceGetMemoryInfo");
    if (rc == NVML_SUCCESS) {
        out->memory_total_mib = (int64_t)(mem.total >> 20);
        out->memory_used_mib = (int64_t)(mem.used >> 20);
        out->memory_free_mib = (int64_t)(mem.free >> 20);
    }
    nvmlUtilization_t util;
    READ(s->fn->nvmlDeviceGetUtilizationRates(m, &util), false, "nvmlDeviceGetUtilizationRates");
    out->util_gpu = rc == NVML_SUCCESS ? (int)util.gpu : -1;
    return 0;
}

int gp_nvml_sample_mig(const gp_nvml *h, int gpu, gp_nvml_mig_reading *out, int cap, int *n,
                       gp_diag *d)
{
    sampler s;
    *n = 0;
    int rc = sampler_of(h, gpu, &s, d);
    if (rc < 0) {
        return rc;
    }
    const struct gp_nvml_fns *fn = s.fn;
    if (!fn->nvmlDeviceGetMigMode || !fn->nvmlDeviceGetMaxMigDeviceCount ||
        !fn->nvmlDeviceGetMigDeviceHandleByIndex) {
        return 0; /* a driver from before MIG: none */
    }
    unsigned int cur = 0, pending = 0, max = 0;
    nvmlReturn_t nrc = fn->nvmlDeviceGetMigMode(s.dev, &cur, &pending);
    if (nrc == NVML_SUCCESS && cur == NVML_DEVICE_MIG_ENABLE) {
        nrc = fn->nvmlDeviceGetMaxMigDeviceCount(s.dev, &max);
    }
    if (nrc == NVML_ERROR_GPU_IS_LOST) {
        return gp_nvml_fail(h, d, nrc, gpu, "nvmlDeviceGetMigMode");
    }
    for (unsigned int k = 0; nrc == NVML_SUCCESS && k < max && *n < cap; k++) {
        nvmlDevice_t m = NULL;
        nvmlReturn_t mrc = fn->nvmlDeviceGetMigDeviceHandleByIndex(s.dev, k, &m);
        if (mrc == NVML_ERROR_GPU_IS_LOST) {
            *n = 0;
            return gp_nvml_fail(h, d, mrc, gpu, "nvmlDeviceGetMigDeviceHandleByIndex");
        }
        if (mrc != NVML_SUCCESS) {
            continue; /* NOT_FOUND: no device at that index */
        }
        if ((rc = sample_one_mig(&s, m, &out[*n])) < 0) {
            *n = 0;
            return rc;
        }
        (*n)++;
    }
    return 0;
}

/* ---- per-process utilisation ---- */

/* Samples a process of the period may come several times: the mean of each one's. */
static int merge_samples(const nvmlProcessUtilizationSample_t *smp, unsigned int count,
                         gp_nvml_proc_util *out, int cap, uint64_t *newest)
{
    int n = 0;
    int *nsamples = calloc((size_t)cap + 1, sizeof(*nsamples));
    if (!nsamples) {
        return GP_ENOMEM;
    }
    for (unsigned int i = 0; i < count; i++) {
        int k = 0;
        while (k < n && out[k].pid != (int)smp[i].pid) {
            k++;
        }
        if (k == n && n == cap) {
            continue; /* more processes than asked for */
        }
        if (k == n) {
            out[n++] = (gp_nvml_proc_util){(int)smp[i].pid, 0, 0};
        }
        /* running sums for now; divided below */
        out[k].sm += (int)smp[i].smUtil;
        out[k].memory += (int)smp[i].memUtil;
        nsamples[k]++;
        *newest = smp[i].timeStamp > *newest ? smp[i].timeStamp : *newest;
    }
    for (int k = 0; k < n; k++) {
        out[k].sm /= nsamples[k];
        out[k].memory /= nsamples[k];
    }
    free(nsamples);
    return n;
}

/* Asks for the samples: first how many there are, then into a buffer with room for a few that
 * come meanwhile. NOT_FOUND (no process used the GPU in the period) is no samples. */
static nvmlReturn_t read_samples(const sampler *s, unsigned long long since,
                                 nvmlProcessUtilizationSample_t **buf, unsigned int *count)
{
    *buf = NULL;
    *count = 0;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    for (int t = 0; t < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; t++) {
        unsigned int room = *count;
        if (t > 0) {
            free(*buf);
            room = *count + 8;
            *buf = malloc(sizeof(**buf) * room);
            if (!*buf) {
                return NVML_ERROR_MEMORY;
            }
        }
        *count = room;
        rc = s->fn->nvmlDeviceGetProcessUtilization(s->dev, *buf, count, since);
    }
    if (rc == NVML_ERROR_NOT_FOUND) {
        *count = 0;
        rc = NVML_SUCCESS;
    }
    return rc;
}

int gp_nvml_process_util(const gp_nvml *h, int gpu, uint64_t *since_us, gp_nvml_proc_util *out,
                         int cap, int *n, gp_diag *d)
{
    sampler s;
    *n = 0;
    int rc = sampler_of(h, gpu, &s, d);
    if (rc < 0) {
        return rc;
    }
    if (!s.fn->nvmlDeviceGetProcessUtilization) {
        return gp_diag_set(d, GP_ENOTSUP, "%s lacks nvmlDeviceGetProcessUtilization",
                           gp_nvml_path(h));
    }
    nvmlProcessUtilizationSample_t *buf = NULL;
    unsigned int count = 0;
    nvmlReturn_t nrc = read_samples(&s, *since_us, &buf, &count);
    if (nrc == NVML_ERROR_MEMORY && !buf) {
        rc = gp_diag_set(d, GP_ENOMEM, "GPU %d: process utilisation: out of memory", gpu);
    } else if (nrc != NVML_SUCCESS) {
        rc = gp_nvml_fail(h, d, nrc, gpu, "nvmlDeviceGetProcessUtilization");
    } else if (count > 0) {
        uint64_t newest = *since_us;
        rc = merge_samples(buf, count, out, cap, &newest);
        *n = rc > 0 ? rc : 0;
        *since_us = newest;
        rc = rc < 0 ? gp_diag_set(d, rc, "GPU %d: process utilisation: out of memory", gpu) : 0;
    }
    free(buf);
    return rc;
}
