/*
 * A fake NVML (built as libnvidia-ml.so.1 beside the fake libcuda.so.1): two devices of 16 GiB,
 * 1 GiB of which used, with fixed UUIDs; just what libgpushare.so's NVML hooks and the tests
 * call.
 */
#include <stdio.h>
#include <string.h>

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

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    return NVML_SUCCESS;
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
