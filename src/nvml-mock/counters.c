/*
 * The exported readings that add up over time or depend on others (see mock.h): energy, thermal
 * violation time, PCIe replays, NVLink error counters, the reasons the clocks are held down,
 * encoder and decoder utilisation, the power limit, memory with the driver's reserve (v2), and
 * per-process utilisation.
 *
 * What moves them: energy integrates the power reading (its pattern, or the control file's
 * `power`) between calls; `throttle GPU MICROSECONDS` adds thermal violation time and holds the
 * hardware thermal slowdown reason for that long; `pcie-replay GPU COUNT` and `nvlink-errors GPU
 * LINK COUNT [KIND]` add to their counters; `proc-util GPU PID PERCENT` sets a process's
 * utilisation. The clock reasons follow the other readings: idle at 0% utilisation, software
 * thermal slowdown at 87 °C and above, software power cap at the power limit.
 */
#include "nvml-mock/mock.h"

#include <math.h>
#include <string.h>

/* The temperature the mock's GPUs slow down at (software thermal slowdown). */
#define SLOWDOWN_C 87

/* The power management limit in W: the inventory's, else the power pattern's peak rounded up to
 * 10 W (at least 70 W, a T4's). */
static unsigned int power_limit_w(nvmlDevice_t d)
{
    if (d->power_limit_w > 0) {
        return (unsigned int)d->power_limit_w;
    }
    const mock_pattern *p = &d->pattern[MOCK_POWER];
    double peak = p->kind == MOCK_SINE ? p->max : p->values[0];
    for (int i = 1; p->kind == MOCK_STEP && i < p->nvalues; i++) {
        peak = fmax(peak, p->values[i]);
    }
    unsigned int w = (unsigned int)ceil(peak / 10) * 10;
    return w < 70 ? 70 : w;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, ANY_DEVICE);
    if (rc == NVML_SUCCESS && !memory) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && memory->version != nvmlMemory_v2) {
        rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    if (rc == NVML_SUCCESS) {
        unsigned long long total = (unsigned long long)device->memory_mib << 20;
        unsigned long long reserved = mock_reserved_bytes(device);
        unsigned long long used =
            device->parent ? 0 : (unsigned long long)mock_reading_uint(device, MOCK_MEM_USED) << 20;
        memory->total = total;
        memory->reserved = reserved;
        memory->used = used + reserved < total ? used : total - reserved;
        memory->free = total - reserved - memory->used;
    }
    return mock_leave(s, rc);
}

/* Encoder or decoder utilisation: a GPU without the engine (encoder: false) answers
 * NOT_SUPPORTED, and so does a MIG device. */
static nvmlReturn_t video_util(nvmlDevice_t device, mock_reading r, unsigned int *utilization,
                               unsigned int *samplingPeriodUs)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && (!utilization || !samplingPeriodUs)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && r == MOCK_ENC_UTIL && !device->encoder) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        *utilization = mock_reading_uint(device, r);
        *samplingPeriodUs = 167000;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
    return video_util(device, MOCK_ENC_UTIL, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
    return video_util(device, MOCK_DEC_UTIL, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !limit) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        *limit = power_limit_w(device) * 1000; /* milliwatts */
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !energy) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        double now = mock_now();
        if (device->energy_at > 0 && now > device->energy_at) {
            device->energy_mj +=
                fmax(mock_value(device, MOCK_POWER), 0) * (now - device->energy_at) * 1000;
        }
        device->energy_at = now;
        *energy = (unsigned long long)device->energy_mj;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int *value)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !value) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        *value = (unsigned int)device->pcie_replays;
    }
    return mock_leave(s, rc);
}

/* Like the other NVLink queries: NOT_SUPPORTED without NVLink, INVALID_ARGUMENT past the GPU's
 * links or for an unknown counter. */
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                             nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long *counterValue)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && device->nlinks == 0) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    } else if (rc == NVML_SUCCESS && (link >= (unsigned int)device->nlinks || !counterValue ||
                                      (unsigned int)counter >= NVML_NVLINK_ERROR_COUNT)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        /* DL_ECC_DATA is never injected: always 0 */
        *counterValue = counter < 4 ? device->nvlink_errors[link][counter] : 0;
    }
    return mock_leave(s, rc);
}

/* Thermal: what throttle commands added; power: never; the other policies are NOT_SUPPORTED. */
nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                          nvmlViolationTime_t *violTime)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS &&
        (!violTime || (unsigned int)perfPolicyType >= NVML_PERF_POLICY_COUNT)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && perfPolicyType != NVML_PERF_POLICY_THERMAL &&
               perfPolicyType != NVML_PERF_POLICY_POWER) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        violTime->referenceTime = (unsigned long long)(mock_now() * 1e6);
        violTime->violationTime =
            perfPolicyType == NVML_PERF_POLICY_THERMAL ? device->thermal_ns : 0;
    }
    return mock_leave(s, rc);
}

static unsigned long long clock_reasons(nvmlDevice_t d)
{
    unsigned long long r = 0;
    if (mock_reading_uint(d, MOCK_UTIL) == 0 && !d->mig_enabled) {
        r |= nvmlClocksEventReasonGpuIdle;
    }
    if (mock_value(d, MOCK_TEMPERATURE) >= SLOWDOWN_C) {
        r |= nvmlClocksEventReasonSwThermalSlowdown;
    }
    if (mock_value(d, MOCK_POWER) >= power_limit_w(d)) {
        r |= nvmlClocksEventReasonSwPowerCap;
    }
    if (mock_now() < d->throttled_until) {
        r |= nvmlClocksThrottleReasonHwThermalSlowdown;
    }
    return r;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *clocksEventReasons)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !clocksEventReasons) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        *clocksEventReasons = clock_reasons(device);
    }
    return mock_leave(s, rc);
}

/* The name drivers before R535 have (newer ones keep it too). */
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *clocksThrottleReasons)
{
    return nvmlDeviceGetCurrentClocksEventReasons(device, clocksThrottleReasons);
}

/*
 * One sample per process with utilisation above 0 (proc-util), stamped now; none when the caller
 * saw this moment already (lastSeenTimeStamp). As NVML: NOT_FOUND when there is no sample,
 * INSUFFICIENT_SIZE with the count needed when utilization is NULL or too small, NOT_SUPPORTED on
 * a MIG device or a GPU in MIG mode.
 */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    unsigned long long now_us = (unsigned long long)(mock_now() * 1e6);
    unsigned int want = 0;
    if (rc == NVML_SUCCESS && !processSamplesCount) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && device->mig_enabled) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    const mock_proc_util *pu = rc == NVML_SUCCESS ? s->inv->putil[device->index] : NULL;
    int npu = rc == NVML_SUCCESS && lastSeenTimeStamp < now_us ? s->inv->nputil[device->index] : 0;
    for (int k = 0; k < npu; k++) {
        want += pu[k].percent > 0;
    }
    if (rc == NVML_SUCCESS && want == 0) {
        rc = NVML_ERROR_NOT_FOUND;
    } else if (rc == NVML_SUCCESS && (!utilization || *processSamplesCount < want)) {
        rc = NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE || rc == NVML_ERROR_NOT_FOUND) {
        *processSamplesCount = want;
    }
    for (int k = 0, n = 0; rc == NVML_SUCCESS && k < npu; k++) {
        if (pu[k].percent > 0) {
            utilization[n++] = (nvmlProcessUtilizationSample_t){
                pu[k].pid, now_us, pu[k].percent, pu[k].percent / 2, 0, 0};
        }
    }
    return mock_leave(s, rc);
}
