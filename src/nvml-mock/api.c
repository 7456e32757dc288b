/*
 * The exported NVML functions and the library's one piece of process state (the MIG instance
 * functions are in instances.c).
 *
 * Every function takes the state's lock, answers NVML_ERROR_UNINITIALIZED while no nvmlInit_v2
 * is in force, runs new control-file commands, and checks its handle: an unknown handle is
 * INVALID_ARGUMENT, a GPU that fell off the bus (or a MIG device on it) GPU_IS_LOST, and a query
 * that does not apply (MIG on a T4, NVLink on a PCIe card, a GPU-only query on a MIG device,
 * utilisation of a GPU in MIG mode) NOT_SUPPORTED, as the real library answers.
 */
#include "nvml-mock/mock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The process state (see mock.h): the only writable static data of the library. */
static mock_state st = {.lock = PTHREAD_MUTEX_INITIALIZER};

mock_state *mock_enter(void)
{
    pthread_mutex_lock(&st.lock);
    if (st.refs == 0) {
        pthread_mutex_unlock(&st.lock);
        return NULL;
    }
    mock_control_poll(&st);
    return &st;
}

nvmlReturn_t mock_leave(mock_state *s, nvmlReturn_t rc)
{
    pthread_mutex_unlock(&s->lock);
    return rc;
}

nvmlReturn_t mock_check(const mock_state *s, nvmlDevice_t d, int gpu_only)
{
    const mock_inv *inv = s->inv;
    int known = 0;
    for (int i = 0; i < inv->ngpus && !known; i++) {
        known = d == &inv->gpus[i];
        for (int k = 0; k < MOCK_MAX_MIG && !known; k++) {
            known = d == &inv->cis[i][k].dev && inv->cis[i][k].gi;
        }
    }
    if (!known) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if ((d->parent ? d->parent : d)->lost) {
        return NVML_ERROR_GPU_IS_LOST;
    }
    return gpu_only && d->parent ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

static nvmlReturn_t copy(char *dst, unsigned int len, const char *src)
{
    size_t n = strlen(src) + 1;
    if (!dst) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (n > len) {
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(dst, src, n);
    return NVML_SUCCESS;
}

unsigned int mock_reading_uint(nvmlDevice_t d, mock_reading r)
{
    double v = mock_value(d, r);
    return v <= 0 ? 0u : (unsigned int)lround(v);
}

unsigned long long mock_reserved_bytes(nvmlDevice_t d)
{
    /* about what a real driver keeps: 0.8% of the GPU, 120 MiB of a T4's 15 GiB */
    return d->parent ? 0 : ((unsigned long long)d->memory_mib << 20) / 128;
}

/* ---- init, shutdown, errors ---- */

static const char *std_message(nvmlReturn_t rc)
{
    switch (rc) {
#define GP_NVML_RETURN_CASE(name, value, msg)                                                      \
    case NVML_##name:                                                                              \
        return msg;
        GP_NVML_RETURN_MAP(GP_NVML_RETURN_CASE)
#undef GP_NVML_RETURN_CASE
    }
    return "Unknown Error";
}

/* Records why nvmlInit_v2 failed (nvmlErrorString gives it) and says it on stderr once. */
static nvmlReturn_t init_failed(nvmlReturn_t rc, const char *why)
{
    st.init_rc = rc;
    snprintf(st.init_err, sizeof(st.init_err), "%s: %s", std_message(rc), why);
    if (strcmp(st.reported, why) != 0) {
        snprintf(st.reported, sizeof(st.reported), "%s", why);
        fprintf(stderr, "gpupool-nvml-mock: %s\n", why);
    }
    return rc;
}

/* The control file: GPUPOOL_NVML_MOCK_CONTROL, else the inventory's control. */
static void control_init(mock_inv *inv)
{
    const char *env = getenv("GPUPOOL_NVML_MOCK_CONTROL");
    memset(&st.ctl, 0, sizeof(st.ctl));
    snprintf(st.ctl.path, sizeof(st.ctl.path), "%s", env && *env ? env : inv->control);
}

nvmlReturn_t nvmlInit_v2(void)
{
    pthread_mutex_lock(&st.lock);
    if (st.refs > 0) {
        st.refs++;
        pthread_mutex_unlock(&st.lock);
        return NVML_SUCCESS;
    }
    const char *path = getenv("GPUPOOL_NVML_MOCK_INVENTORY");
    char why[1024];
    nvmlReturn_t rc = NVML_ERROR_DRIVER_NOT_LOADED;
    mock_inv *inv = calloc(1, sizeof(*inv));
    if (!inv) {
        rc = init_failed(NVML_ERROR_MEMORY, "out of memory");
    } else if (!path || !*path) {
        rc = init_failed(rc, "GPUPOOL_NVML_MOCK_INVENTORY is not set: no inventory to read");
    } else if ((rc = mock_inv_load(path, inv, why, sizeof(why))) != NVML_SUCCESS) {
        rc = init_failed(rc, why);
    }
    if (rc != NVML_SUCCESS) {
        free(inv);
    } else {
        st.inv = inv;
        st.refs = 1;
        st.init_rc = NVML_SUCCESS;
        control_init(inv);
    }
    pthread_mutex_unlock(&st.lock);
    return rc;
}

nvmlReturn_t nvmlShutdown(void)
{
    pthread_mutex_lock(&st.lock);
    if (st.refs == 0) {
        pthread_mutex_unlock(&st.lock);
        return NVML_ERROR_UNINITIALIZED;
    }
    if (--st.refs == 0) {
        while (st.sets) {
            struct nvmlEventSet_st *next = st.sets->next;
            free(st.sets);
            st.sets = next;
        }
        free(st.inv);
        st.inv = NULL;
    }
    pthread_mutex_unlock(&st.lock);
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    pthread_mutex_lock(&st.lock);
    const char *msg = result != NVML_SUCCESS && result == st.init_rc ? st.init_err : NULL;
    pthread_mutex_unlock(&st.lock);
    return msg ? msg : std_message(result);
}

/* ---- system and identity ---- */

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    ENTER();
    return mock_leave(s, copy(version, length, s->inv->driver));
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    ENTER();
    if (!cudaDriverVersion) {
        return mock_leave(s, NVML_ERROR_INVALID_ARGUMENT);
    }
    *cudaDriverVersion = s->inv->cuda;
    return mock_leave(s, NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    ENTER();
    if (!deviceCount) {
        return mock_leave(s, NVML_ERROR_INVALID_ARGUMENT);
    }
    *deviceCount = (unsigned int)s->inv->ngpus;
    return mock_leave(s, NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    ENTER();
    if (!device || index >= (unsigned int)s->inv->ngpus) {
        return mock_leave(s, NVML_ERROR_INVALID_ARGUMENT);
    }
    if (s->inv->gpus[index].lost) {
        return mock_leave(s, NVML_ERROR_GPU_IS_LOST);
    }
    *device = &s->inv->gpus[index];
    return mock_leave(s, NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, ANY_DEVICE);
    return mock_leave(s, rc == NVML_SUCCESS ? copy(uuid, length, device->uuid) : rc);
}

/* The inventory's minor (/dev/nvidia<minor>); a MIG device has none of its own. */
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !minorNumber) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        *minorNumber = (unsigned int)device->minor;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, ANY_DEVICE);
    return mock_leave(s, rc == NVML_SUCCESS ? copy(name, length, device->name) : rc);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, ANY_DEVICE);
    if (rc == NVML_SUCCESS && !memory) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        /* v1's used includes the driver's reserve (v2 tells it apart) */
        unsigned long long total = (unsigned long long)device->memory_mib << 20;
        unsigned long long used =
            device->parent ? 0
                           : ((unsigned long long)mock_reading_uint(device, MOCK_MEM_USED) << 20) +
                                 mock_reserved_bytes(device);
        memory->total = total;
        memory->used = used < total ? used : total;
        memory->free = total - memory->used;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !pci) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        memset(pci, 0, sizeof(*pci));
        snprintf(pci->busId, sizeof(pci->busId), "%s", device->bus_id);
        snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0",
                 device->domain & 0xffffu, device->bus & 0xffu, device->device & 0x1fu);
        pci->domain = device->domain;
        pci->bus = device->bus;
        pci->device = device->device;
        pci->pciDeviceId = (unsigned int)device->pci_device_id;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t device, unsigned int nodeSetSize,
                                         unsigned long *nodeSet, nvmlAffinityScope_t scope)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    const unsigned int bits = 8 * sizeof(unsigned long);
    if (rc == NVML_SUCCESS &&
        (!nodeSet || nodeSetSize == 0 || scope > NVML_AFFINITY_SCOPE_SOCKET)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && device->numa < 0) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    } else if (rc == NVML_SUCCESS && (unsigned long long)device->numa >= nodeSetSize * bits) {
        rc = NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (rc == NVML_SUCCESS) {
        memset(nodeSet, 0, nodeSetSize * sizeof(*nodeSet));
        nodeSet[device->numa / bits] = 1ul << (device->numa % bits);
    }
    return mock_leave(s, rc);
}

/* ---- NVLink ---- */

/* Checks a GPU and one of its links. */
static nvmlReturn_t check_link(const mock_state *s, nvmlDevice_t device, unsigned int link)
{
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && device->nlinks == 0) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    } else if (rc == NVML_SUCCESS && link >= (unsigned int)device->nlinks) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    return rc;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t *isActive)
{
    ENTER();
    nvmlReturn_t rc = check_link(s, device, link);
    if (rc == NVML_SUCCESS && !isActive) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        *isActive = device->links_down & (UINT32_C(1) << link) ? NVML_FEATURE_DISABLED
                                                               : NVML_FEATURE_ENABLED;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci)
{
    ENTER();
    nvmlReturn_t rc = check_link(s, device, link);
    if (rc == NVML_SUCCESS && !pci) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        int peer = device->link_peer[link];
        /* An NVSwitch: six of them, each link of a GPU to one, in turn. */
        const struct nvmlDevice_st *p = peer >= 0 ? &s->inv->gpus[peer] : NULL;
        unsigned int bus = p ? p->bus : 0xC0 + link % 6;
        memset(pci, 0, sizeof(*pci));
        pci->domain = p ? p->domain : 0;
        pci->bus = bus;
        pci->device = p ? p->device : 0;
        pci->pciDeviceId = p ? (unsigned int)p->pci_device_id : 0x1AF110DEu;
        snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", pci->domain, bus & 0xffu,
                 pci->device & 0x1fu);
        snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0",
                 pci->domain & 0xffffu, bus & 0xffu, pci->device & 0x1fu);
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                 nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType)
{
    ENTER();
    nvmlReturn_t rc = check_link(s, device, link);
    if (rc == NVML_SUCCESS && !pNvLinkDeviceType) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        *pNvLinkDeviceType = device->link_peer[link] >= 0 ? NVML_NVLINK_DEVICE_TYPE_GPU
                                                          : NVML_NVLINK_DEVICE_TYPE_SWITCH;
    }
    return mock_leave(s, rc);
}

/* ---- MIG ---- */

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && (!currentMode || !pendingMode)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->mig_capable) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        *currentMode = (unsigned int)device->mig_enabled;
        *pendingMode = (unsigned int)(device->mig_enabled ^ device->mig_pending_change);
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !count) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->mig_capable) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        *count = MOCK_MAX_MIG;
    }
    return mock_leave(s, rc);
}

/* The MIG devices in the order their compute instances were created: the inventory's first. */
static struct nvmlComputeInstance_st *mig_by_index(nvmlDevice_t g, unsigned int index)
{
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        const struct nvmlComputeInstance_st *ci = &g->cis[k];
        unsigned int rank = 0;
        for (int j = 0; ci->gi && j < MOCK_MAX_MIG; j++) {
            rank += g->cis[j].gi && g->cis[j].seq < ci->seq;
        }
        if (ci->gi && rank == index) {
            return &g->cis[k];
        }
    }
    return NULL;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *migDevice)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    struct nvmlComputeInstance_st *ci = NULL;
    if (rc == NVML_SUCCESS && (!migDevice || index >= MOCK_MAX_MIG)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->mig_enabled) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    } else if (rc == NVML_SUCCESS && !(ci = mig_by_index(device, index))) {
        rc = NVML_ERROR_NOT_FOUND;
    }
    if (rc == NVML_SUCCESS) {
        *migDevice = &ci->dev;
    }
    return mock_leave(s, rc);
}

/* ---- readings ---- */

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !utilization) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && device->mig_enabled) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        utilization->gpu = mock_reading_uint(device, MOCK_UTIL);
        utilization->memory = mock_reading_uint(device, MOCK_MEM_UTIL);
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int *temp)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && (!temp || sensorType != NVML_TEMPERATURE_GPU)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        *temp = mock_reading_uint(device, MOCK_TEMPERATURE);
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !power) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        double w = mock_value(device, MOCK_POWER);
        *power = w <= 0 ? 0u : (unsigned int)lround(w * 1000); /* milliwatts */
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && (!clock || (unsigned int)type >= NVML_CLOCK_COUNT)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        int64_t mhz = type == NVML_CLOCK_MEM     ? device->mem_clock_mhz
                      : type == NVML_CLOCK_VIDEO ? device->sm_clock_mhz * 9 / 10
                                                 : device->sm_clock_mhz;
        *clock = (unsigned int)mhz;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType,
                                         unsigned long long *eccCounts)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS &&
        (!eccCounts || (unsigned int)errorType >= NVML_MEMORY_ERROR_TYPE_COUNT ||
         (unsigned int)counterType >= NVML_ECC_COUNTER_TYPE_COUNT)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->ecc) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        int64_t n = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ? device->ecc_corrected
                    : counterType == NVML_AGGREGATE_ECC ? device->ecc_uncorrected_aggregate
                                                        : device->ecc_uncorrected;
        *eccCounts = (unsigned long long)n;
    }
    return mock_leave(s, rc);
}

/* ---- health: ECC mode, remapped rows, retired pages, field values ---- */

/* ECC is on; a pending change (ecc-pending) turns it off at the next reset. */
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current,
                                  nvmlEnableState_t *pending)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && (!current || !pending)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->ecc) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        *current = NVML_FEATURE_ENABLED;
        *pending = device->ecc_pending_change ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
    }
    return mock_leave(s, rc);
}

/* Every GPU with ECC remaps rows; remap sets the pending and failure flags (one uncorrectable row
 * remapped while either is set). */
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows,
                                       unsigned int *uncRows, unsigned int *isPending,
                                       unsigned int *failureOccurred)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && (!corrRows || !uncRows || !isPending || !failureOccurred)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->ecc) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        *corrRows = 0;
        *uncRows = device->remap_pending || device->remap_failed ? 1u : 0u;
        *isPending = (unsigned int)device->remap_pending;
        *failureOccurred = (unsigned int)device->remap_failed;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device,
                                                    nvmlEnableState_t *isPending)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && !isPending) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->ecc) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        *isPending = device->retire_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    }
    return mock_leave(s, rc);
}

/* Only NVML_FI_DEV_GET_GPU_RECOVERY_ACTION and NVML_FI_DEV_MEMORY_TEMP (a few degrees above the
 * GPU's) are known; every other field's entry answers NOT_SUPPORTED (the call itself succeeds, as
 * NVML's does). */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t *values)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && (valuesCount <= 0 || !values)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    long long now_us = (long long)(mock_now() * 1e6);
    for (int i = 0; rc == NVML_SUCCESS && i < valuesCount; i++) {
        nvmlFieldValue_t *v = &values[i];
        v->timestamp = now_us;
        v->latencyUsec = 0;
        if (v->fieldId == NVML_FI_DEV_GET_GPU_RECOVERY_ACTION) {
            v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
            v->value.uiVal = device->recovery;
            v->nvmlReturn = NVML_SUCCESS;
        } else if (v->fieldId == NVML_FI_DEV_MEMORY_TEMP) {
            v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
            v->value.uiVal = mock_reading_uint(device, MOCK_TEMPERATURE) + 6;
            v->nvmlReturn = NVML_SUCCESS;
        } else {
            v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        }
    }
    return mock_leave(s, rc);
}

/* ---- events ---- */

static int known_set(const mock_state *s, nvmlEventSet_t set)
{
    for (const struct nvmlEventSet_st *p = s->sets; p; p = p->next) {
        if (p == set) {
            return 1;
        }
    }
    return 0;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    ENTER();
    struct nvmlEventSet_st *e = set ? calloc(1, sizeof(*e)) : NULL;
    if (!e) {
        return mock_leave(s, set ? NVML_ERROR_MEMORY : NVML_ERROR_INVALID_ARGUMENT);
    }
    e->next = s->sets;
    s->sets = e;
    *set = e;
    return mock_leave(s, NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    unsigned long long supported = nvmlEventTypeXidCriticalError;
    if (rc == NVML_SUCCESS && device->ecc) {
        supported |= nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError;
    }
    if (rc == NVML_SUCCESS && !known_set(s, set)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && (eventTypes & ~supported)) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        set->mask[device->index] |= eventTypes;
    }
    return mock_leave(s, rc);
}

/* Polls (the control file runs on each look) until an event is queued or the time is up. */
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    double deadline = mock_now() + timeoutms / 1000.0;
    for (;;) {
        ENTER();
        if (!data || !known_set(s, set)) {
            return mock_leave(s, NVML_ERROR_INVALID_ARGUMENT);
        }
        if (set->n > 0) {
            *data = set->queue[set->head];
            set->head = (set->head + 1) % MOCK_QUEUE;
            set->n--;
            return mock_leave(s, NVML_SUCCESS);
        }
        mock_leave(s, NVML_SUCCESS);
        double left = deadline - mock_now();
        if (left <= 0) {
            return NVML_ERROR_TIMEOUT;
        }
        struct timespec ts = {0, (long)(fmin(left, 0.01) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    ENTER();
    for (struct nvmlEventSet_st **p = &s->sets; *p; p = &(*p)->next) {
        if (*p == set) {
            *p = set->next;
            free(set);
            return mock_leave(s, NVML_SUCCESS);
        }
    }
    return mock_leave(s, NVML_ERROR_INVALID_ARGUMENT);
}
