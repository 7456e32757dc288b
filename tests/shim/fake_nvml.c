/*
 * A fake NVML (built as libnvidia-ml.so.1 beside the fake libcuda.so.1): two devices of 16 GiB,
 * 1 GiB of which used, with fixed UUIDs; just what libgpushare.so's NVML hooks and the tests
 * call.
 *
 * Utilisation comes from the fake driver's busy time (gp_fake_busy_ns; this library links the
 * fake libcuda.so.1), like the real driver's sampling: every PERIOD_NS (on the monotonic clock)
 * a sample of the period just ended, kept in a ring. nvmlDeviceGetProcessUtilization returns
 * the samples newer than lastSeenTimeStamp, one per process that was busy in the period: this
 * process (smUtil = percent of the period its device was busy) and the foreign processes of
 * GP_FAKE_NVML_FOREIGN ("pid:util[,pid:util...]", a constant smUtil each), which also appear in
 * nvmlDeviceGetComputeRunningProcesses_v3 beside this process. GP_FAKE_NVML_NO_PROCESS_UTIL=1
 * makes per-process utilisation NVML_ERROR_NOT_SUPPORTED (as on some GPUs and vGPUs);
 * nvmlDeviceGetUtilizationRates reports the last period, this process and foreign ones summed.
 * GP_FAKE_NVML_INIT_FAIL=1 makes nvmlInit_v2 fail.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim/cuda_types.h"

#define EXPORT __attribute__((visibility("default")))
#define NDEV   2
#define TOTAL  (16ULL << 30)
#define USED   (1ULL << 30)

struct nvmlDevice_st {
    unsigned int index;
};

static struct nvmlDevice_st devices[NDEV] = {{0}, {1}};

static int valid(nvmlDevice_t d)
{
    return d == &devices[0] || d == &devices[1];
}

/* ---- utilisation ---- */

uint64_t gp_fake_now_ns(void);
uint64_t gp_fake_busy_ns(int dev, uint64_t from, uint64_t to);

#define PERIOD_NS   (100ull * 1000 * 1000)
#define RING        32
#define MAX_FOREIGN 8

typedef struct sample {
    unsigned long long ts; /* us */
    unsigned int util;     /* this process */
} sample;

typedef struct history {
    uint64_t next; /* end of the next period to sample; 0: not started */
    sample ring[RING];
    unsigned int head, count;
} history;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static history hist[NDEV];
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static unsigned int foreign_pid[MAX_FOREIGN], foreign_util[MAX_FOREIGN];
static int nforeign, no_process_util;

static void read_env(void)
{
    const char *v = getenv("GP_FAKE_NVML_FOREIGN");
    while (v && *v && nforeign < MAX_FOREIGN) {
        unsigned int pid, util;
        if (sscanf(v, "%u:%u", &pid, &util) != 2) {
            break;
        }
        foreign_pid[nforeign] = pid;
        foreign_util[nforeign++] = util;
        v = strchr(v, ',');
        v = v ? v + 1 : NULL;
    }
    v = getenv("GP_FAKE_NVML_NO_PROCESS_UTIL");
    no_process_util = v && strcmp(v, "1") == 0;
}

/* Samples every period ended since the last call (at most RING of them). */
static void sample_periods(int dev)
{
    history *h = &hist[dev];
    uint64_t now = gp_fake_now_ns();
    if (h->next == 0) {
        h->next = now / PERIOD_NS * PERIOD_NS; /* the period just ended is sampled now */
    }
    if (now >= h->next + RING * PERIOD_NS) {
        h->next = (now / PERIOD_NS - RING + 1) * PERIOD_NS;
    }
    for (; h->next <= now; h->next += PERIOD_NS) {
        uint64_t busy = gp_fake_busy_ns(dev, h->next - PERIOD_NS, h->next);
        h->ring[h->head] =
            (sample){h->next / 1000, (unsigned int)((busy * 100 + PERIOD_NS / 2) / PERIOD_NS)};
        h->head = (h->head + 1) % RING;
        h->count += h->count < RING;
    }
}

static unsigned int last_period_util(int dev)
{
    const history *h = &hist[dev];
    unsigned int u = h->count ? h->ring[(h->head + RING - 1) % RING].util : 0;
    for (int i = 0; i < nforeign; i++) {
        u += foreign_util[i];
    }
    return u > 100 ? 100 : u;
}

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                    nvmlProcessUtilizationSample_t *utilization,
                                                    unsigned int *processSamplesCount,
                                                    unsigned long long lastSeenTimeStamp)
{
    pthread_once(&env_once, read_env);
    if (!valid(device) || !processSamplesCount) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (no_process_util) {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    pthread_mutex_lock(&mu);
    history *h = &hist[device->index];
    sample_periods((int)device->index);
    nvmlProcessUtilizationSample_t out[RING * (MAX_FOREIGN + 1)];
    unsigned int n = 0;
    for (unsigned int i = 0; i < h->count; i++) {
        const sample *sm = &h->ring[(h->head + RING - h->count + i) % RING];
        if (sm->ts <= lastSeenTimeStamp) {
            continue;
        }
        if (sm->util) {
            out[n++] =
                (nvmlProcessUtilizationSample_t){(unsigned int)getpid(), sm->ts, sm->util, 0, 0, 0};
        }
        for (int f = 0; f < nforeign; f++) {
            if (foreign_util[f]) {
                out[n++] = (nvmlProcessUtilizationSample_t){
                    foreign_pid[f], sm->ts, foreign_util[f], 0, 0, 0};
            }
        }
    }
    pthread_mutex_unlock(&mu);
    if (n == 0) {
        return NVML_ERROR_NOT_FOUND;
    }
    if (!utilization || *processSamplesCount < n) {
        *processSamplesCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(utilization, out, n * sizeof(*out));
    *processSamplesCount = n;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                            unsigned int *infoCount,
                                                            nvmlProcessInfo_t *infos)
{
    pthread_once(&env_once, read_env);
    if (!valid(device) || !infoCount) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    unsigned int n = 1 + (unsigned int)nforeign;
    if (!infos || *infoCount < n) {
        *infoCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    infos[0] = (nvmlProcessInfo_t){(unsigned int)getpid(), 0, ~0u, ~0u};
    for (int f = 0; f < nforeign; f++) {
        infos[1 + f] = (nvmlProcessInfo_t){foreign_pid[f], 0, ~0u, ~0u};
    }
    *infoCount = n;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                  nvmlUtilization_t *utilization)
{
    pthread_once(&env_once, read_env);
    if (!valid(device) || !utilization) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&mu);
    sample_periods((int)device->index);
    utilization->gpu = last_period_util((int)device->index);
    utilization->memory = 0;
    pthread_mutex_unlock(&mu);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    char want[96];
    for (unsigned int i = 0; uuid && device && i < NDEV; i++) {
        snprintf(want, sizeof(want), "GPU-00000000-0000-4000-8000-00000000000%u", i);
        if (strcmp(uuid, want) == 0) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* GP_FAKE_NVML_INIT_FAIL=1: NVML is there but unusable (no driver, no permission). */
EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    const char *v = getenv("GP_FAKE_NVML_INIT_FAIL");
    return v && strcmp(v, "1") == 0 ? NVML_ERROR_UNKNOWN : NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    *count = NDEV;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (index >= NDEV) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *device = &devices[index];
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    if (!valid(device)) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *index = device->index;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    if (!valid(device) || !uuid) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    snprintf(uuid, length, "GPU-00000000-0000-4000-8000-00000000000%u", device->index);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    if (!valid(device) || !memory) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    memory->total = TOTAL;
    memory->used = USED;
    memory->free = TOTAL - USED;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    if (!valid(device) || !memory) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (memory->version != nvmlMemory_v2) {
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    memory->total = TOTAL;
    memory->reserved = 0;
    memory->used = USED;
    memory->free = TOTAL - USED;
    return NVML_SUCCESS;
}
