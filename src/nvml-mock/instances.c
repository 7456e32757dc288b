/*
 * MIG management: GPU instances and compute instances, created and destroyed in memory, and the
 * MIG devices (one per compute instance) they make.
 *
 * The geometry is that of include/gpupool/mig.h (A100-40GB, A100-80GB, H100-80GB): a GPU
 * instance profile takes compute slices and a run of memory slices starting at one of its legal
 * starts; instances may not share a memory slice, and their compute slices never exceed 7.
 * Profile indexes (NVML_GPU_INSTANCE_PROFILE_*) map to the table by compute slices, the
 * single-slice profile with two memory slices being REV2, as on the real parts; profile ids are
 * the table's (nvidia-smi's). A GPU instance holds compute instances of 1, 2, 3, 4 or 7 slices up
 * to its own (a 4-slice one no 3-slice compute instance), their slices adding up to at most its
 * own.
 *
 * What the real driver refuses, the mock refuses with the same code: an illegal placement is
 * INVALID_ARGUMENT, an overlapping one INSUFFICIENT_RESOURCES, destroying a compute instance a
 * process runs on (the control file's mig-busy) or a GPU instance that still has compute
 * instances IN_USE. GPU instance functions on a GPU whose MIG mode is off answer NOT_SUPPORTED;
 * the profile queries answer for any MIG-capable GPU.
 */
#include "nvml-mock/mock.h"

#include <stdio.h>
#include <string.h>

#define BUSY_MEMORY (256ull << 20) /* what a busy instance's process uses */

/* ---- helpers (lock held) ---- */

unsigned int mock_gi_profile_index(const gp_mig_profile *p)
{
    switch (p->compute_slices) {
    case 1:
        return p->memory_slices == 2 ? NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2
                                     : NVML_GPU_INSTANCE_PROFILE_1_SLICE;
    case 2:
        return NVML_GPU_INSTANCE_PROFILE_2_SLICE;
    case 3:
        return NVML_GPU_INSTANCE_PROFILE_3_SLICE;
    case 4:
        return NVML_GPU_INSTANCE_PROFILE_4_SLICE;
    default:
        return NVML_GPU_INSTANCE_PROFILE_7_SLICE;
    }
}

int64_t mock_profile_mib(const struct nvmlDevice_st *g, const gp_mig_profile *p)
{
    int gb = 0;
    sscanf(p->name, "%*dg.%dgb", &gb);
    int64_t mib = (int64_t)gb * 1024;
    return mib < g->memory_mib ? mib : g->memory_mib;
}

uint8_t mock_memory_used(const struct nvmlDevice_st *g)
{
    uint8_t used = 0;
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        used |= g->gi[k].gpu ? gp_mig_mask(g->gi[k].profile, (int)g->gi[k].start) : 0;
    }
    return used;
}

int mock_compute_used(const struct nvmlDevice_st *g)
{
    int used = 0;
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        used += g->gi[k].gpu ? g->gi[k].profile->compute_slices : 0;
    }
    return used;
}

static int gi_with_id(const struct nvmlDevice_st *g, unsigned int id)
{
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        if (g->gi[k].gpu && g->gi[k].id == id) {
            return k;
        }
    }
    return -1;
}

nvmlReturn_t mock_gi_create(struct nvmlDevice_st *g, const gp_mig_profile *p, unsigned int start,
                            struct nvmlGpuInstance_st **out)
{
    if (start >= GP_MIG_MEMORY_SLICES || !(p->legal_starts & (1u << start))) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    int same = 0, slot = -1;
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        same += g->gi[k].gpu && g->gi[k].profile == p;
        slot = slot < 0 && !g->gi[k].gpu ? k : slot;
    }
    if ((mock_memory_used(g) & gp_mig_mask(p, (int)start)) || slot < 0 ||
        mock_compute_used(g) + p->compute_slices > GP_MIG_COMPUTE_SLICES ||
        same >= p->max_instances) {
        return NVML_ERROR_INSUFFICIENT_RESOURCES;
    }
    unsigned int id = 1;
    while (gi_with_id(g, id) >= 0) {
        id++;
    }
    struct nvmlGpuInstance_st *gi = &g->gi[slot];
    *gi = (struct nvmlGpuInstance_st){g, p, id, start, 0};
    *out = gi;
    return NVML_SUCCESS;
}

/* Compute slices of compute instance profile i; 0 for one the mock has no geometry for. */
static unsigned int ci_slices(unsigned int i)
{
    static const unsigned int slices[NVML_COMPUTE_INSTANCE_PROFILE_COUNT] = {1, 2, 3, 4, 7};
    return i < NVML_COMPUTE_INSTANCE_PROFILE_COUNT ? slices[i] : 0;
}

/* Whether a GPU instance of p can hold a compute instance of profile i. */
static int ci_fits(const gp_mig_profile *p, unsigned int i)
{
    unsigned int s = ci_slices(i), g = (unsigned int)p->compute_slices;
    return s > 0 && s <= g && !(g == 4 && s == 3);
}

unsigned int mock_ci_whole_profile(const gp_mig_profile *p)
{
    for (unsigned int i = 0; i < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; i++) {
        if (ci_slices(i) == (unsigned int)p->compute_slices) {
            return i;
        }
    }
    return NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE;
}

/* FNV-1a over s, then the serial mixed in (splitmix64's finaliser). */
static uint64_t hash(const char *s, uint64_t serial)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    h += serial * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

static int uuid_taken(const mock_inv *inv, const char *uuid)
{
    for (int i = 0; i < inv->ngpus; i++) {
        for (int k = 0; k < MOCK_MAX_MIG; k++) {
            if (inv->cis[i][k].gi && strcmp(inv->cis[i][k].dev.uuid, uuid) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

/* "MIG-xxxxxxxx-xxxx-5xxx-8xxx-xxxxxxxxxxxx" from the GPU's UUID and its serial. */
static void make_uuid(const mock_inv *inv, struct nvmlDevice_st *g, char *out, size_t len)
{
    do {
        g->serial++;
        uint64_t a = hash(g->uuid, g->serial), b = hash(g->uuid, ~(uint64_t)g->serial);
        snprintf(out, len, "MIG-%08x-%04x-5%03x-8%03x-%012llx", (unsigned int)(a >> 32),
                 (unsigned int)(a >> 16) & 0xffffu, (unsigned int)a & 0xfffu,
                 (unsigned int)(b >> 48) & 0xfffu, (unsigned long long)(b & 0xffffffffffffull));
    } while (uuid_taken(inv, out));
}

static int ci_with_id(const struct nvmlGpuInstance_st *gi, unsigned int id)
{
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        if (gi->gpu->cis[k].gi == gi && gi->gpu->cis[k].id == id) {
            return 1;
        }
    }
    return 0;
}

nvmlReturn_t mock_ci_create(mock_inv *inv, struct nvmlGpuInstance_st *gi, unsigned int profile,
                            const char *uuid, int64_t memory_mib,
                            struct nvmlComputeInstance_st **out)
{
    struct nvmlDevice_st *g = gi->gpu;
    if (!ci_fits(gi->profile, profile)) {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    unsigned int used = 0, id = 0;
    int slot = -1;
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        used += g->cis[k].gi == gi ? g->cis[k].slices : 0;
        slot = slot < 0 && !g->cis[k].gi ? k : slot;
    }
    if (slot < 0 || used + ci_slices(profile) > (unsigned int)gi->profile->compute_slices) {
        return NVML_ERROR_INSUFFICIENT_RESOURCES;
    }
    while (ci_with_id(gi, id)) { /* the lowest id free in gi */
        id++;
    }
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    int whole = ci_slices(profile) == (unsigned int)gi->profile->compute_slices;
    int w = whole ? snprintf(name, sizeof(name), "%s MIG %s", g->name, gi->profile->name)
                  : snprintf(name, sizeof(name), "%s MIG %uc.%s", g->name, ci_slices(profile),
                             gi->profile->name);
    if (w < 0 || w >= (int)sizeof(name)) {
        return NVML_ERROR_INSUFFICIENT_SIZE; /* a GPU name too long for a MIG device's */
    }
    char id_buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    if (uuid) {
        snprintf(id_buf, sizeof(id_buf), "%s", uuid);
    } else {
        make_uuid(inv, g, id_buf, sizeof(id_buf)); /* before the slot is taken: it must differ
                                                      from every MIG device's but its own */
    }
    struct nvmlComputeInstance_st *ci = &g->cis[slot];
    *ci = (struct nvmlComputeInstance_st){gi, id, profile, ci_slices(profile), ++g->seq, {0}};
    ci->dev.parent = g;
    ci->dev.ci = ci;
    ci->dev.index = slot;
    ci->dev.memory_mib = memory_mib > 0 ? memory_mib : mock_profile_mib(g, gi->profile);
    memcpy(ci->dev.name, name, sizeof(name));
    memcpy(ci->dev.uuid, id_buf, sizeof(id_buf));
    *out = ci;
    return NVML_SUCCESS;
}

struct nvmlGpuInstance_st *mock_gi_at(mock_inv *inv, int gpu, unsigned int start)
{
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        if (inv->gis[gpu][k].gpu && inv->gis[gpu][k].start == start) {
            return &inv->gis[gpu][k];
        }
    }
    return NULL;
}

/* ---- handle checks ---- */

/* A GPU the GPU instance functions may change: known, on the bus, MIG mode on. */
static nvmlReturn_t check_mig_gpu(const mock_state *s, nvmlDevice_t d)
{
    nvmlReturn_t rc = mock_check(s, d, GPU_ONLY);
    return rc == NVML_SUCCESS && !d->mig_enabled ? NVML_ERROR_NOT_SUPPORTED : rc;
}

static nvmlReturn_t check_gi(const mock_state *s, nvmlGpuInstance_t gi)
{
    for (int i = 0; i < s->inv->ngpus; i++) {
        for (int k = 0; k < MOCK_MAX_MIG; k++) {
            if (gi == &s->inv->gis[i][k] && gi->gpu) {
                return gi->gpu->lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
            }
        }
    }
    return NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t check_ci(const mock_state *s, nvmlComputeInstance_t ci)
{
    for (int i = 0; i < s->inv->ngpus; i++) {
        for (int k = 0; k < MOCK_MAX_MIG; k++) {
            if (ci == &s->inv->cis[i][k] && ci->gi) {
                return ci->gi->gpu->lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
            }
        }
    }
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* The profile of GPU g with id; NULL when its geometry has none. */
static const gp_mig_profile *profile_by_id(const struct nvmlDevice_st *g, unsigned int id)
{
    int n = 0;
    const gp_mig_profile *p = gp_mig_profiles(g->geo, &n);
    for (int i = 0; i < n; i++) {
        if ((unsigned int)p[i].id == id) {
            return &p[i];
        }
    }
    return NULL;
}

/* ---- GPU instance profiles and placements ---- */

/* Streaming multiprocessors per compute slice. */
static unsigned int sm_per_slice(const struct nvmlDevice_st *g)
{
    return g->geo == GP_MIG_H100_80GB ? 16 : 14;
}

static void fill_profile(const struct nvmlDevice_st *g, const gp_mig_profile *p,
                         nvmlGpuInstanceProfileInfo_v2_t *info)
{
    unsigned int c = (unsigned int)p->compute_slices, m = (unsigned int)p->memory_slices;
    info->id = (unsigned int)p->id;
    info->isP2pSupported = 0;
    info->sliceCount = c;
    info->instanceCount = (unsigned int)p->max_instances;
    info->multiprocessorCount = c * sm_per_slice(g);
    info->copyEngineCount = c;
    info->decoderCount = m * 5 / 8;
    info->encoderCount = 0;
    info->jpegCount = c == GP_MIG_COMPUTE_SLICES;
    info->ofaCount = c == GP_MIG_COMPUTE_SLICES;
    info->memorySizeMB = (unsigned long long)mock_profile_mib(g, p);
    memset(info->name, 0, sizeof(info->name));
    snprintf(info->name, sizeof(info->name), "MIG %s", p->name);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t *info)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    if (rc == NVML_SUCCESS && (!info || profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && info->version != nvmlGpuInstanceProfileInfo_v2) {
        rc = NVML_ERROR_INVALID_ARGUMENT; /* as the real driver answers (seen on an H100) */
    } else if (rc == NVML_SUCCESS && !device->mig_capable) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    int n = 0;
    const gp_mig_profile *p = rc == NVML_SUCCESS ? gp_mig_profiles(device->geo, &n) : NULL;
    int found = -1;
    for (int i = 0; i < n && found < 0; i++) {
        found = mock_gi_profile_index(&p[i]) == profile ? i : -1;
    }
    if (rc == NVML_SUCCESS && found < 0) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        fill_profile(device, &p[found], info);
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device,
                                                           unsigned int profileId,
                                                           nvmlGpuInstancePlacement_t *placements,
                                                           unsigned int *count)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, GPU_ONLY);
    const gp_mig_profile *p = NULL;
    if (rc == NVML_SUCCESS && !device->mig_capable) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    } else if (rc == NVML_SUCCESS && (!count || !(p = profile_by_id(device, profileId)))) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    unsigned int n = 0;
    for (unsigned int start = 0; rc == NVML_SUCCESS && start < GP_MIG_MEMORY_SLICES; start++) {
        if (p->legal_starts & (1u << start)) {
            if (placements) {
                placements[n] = (nvmlGpuInstancePlacement_t){start, (unsigned int)p->memory_slices};
            }
            n++;
        }
    }
    if (rc == NVML_SUCCESS) {
        *count = n;
    }
    return mock_leave(s, rc);
}

/* ---- GPU instances ---- */

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
                                       nvmlGpuInstance_t *gpuInstances, unsigned int *count)
{
    ENTER();
    nvmlReturn_t rc = check_mig_gpu(s, device);
    const gp_mig_profile *p = NULL;
    if (rc == NVML_SUCCESS &&
        (!gpuInstances || !count || !(p = profile_by_id(device, profileId)))) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    unsigned int n = 0;
    for (int k = 0; rc == NVML_SUCCESS && k < MOCK_MAX_MIG; k++) {
        if (device->gi[k].gpu && device->gi[k].profile == p) {
            gpuInstances[n++] = &device->gi[k];
        }
    }
    if (rc == NVML_SUCCESS) {
        *count = n;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
                                          nvmlGpuInstance_t *gpuInstance)
{
    ENTER();
    nvmlReturn_t rc = check_mig_gpu(s, device);
    int k = rc == NVML_SUCCESS ? gi_with_id(device, id) : -1;
    if (rc == NVML_SUCCESS && !gpuInstance) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && k < 0) {
        rc = NVML_ERROR_NOT_FOUND;
    }
    if (rc == NVML_SUCCESS) {
        *gpuInstance = &device->gi[k];
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info)
{
    ENTER();
    nvmlReturn_t rc = check_gi(s, gpuInstance);
    if (rc == NVML_SUCCESS && !info) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        memset(info, 0, sizeof(*info));
        info->device = gpuInstance->gpu;
        info->id = gpuInstance->id;
        info->profileId = (unsigned int)gpuInstance->profile->id;
        info->placement.start = gpuInstance->start;
        info->placement.size = (unsigned int)gpuInstance->profile->memory_slices;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
                                                      const nvmlGpuInstancePlacement_t *placement,
                                                      nvmlGpuInstance_t *gpuInstance)
{
    ENTER();
    nvmlReturn_t rc = check_mig_gpu(s, device);
    const gp_mig_profile *p = NULL;
    if (rc == NVML_SUCCESS &&
        (!placement || !gpuInstance || !(p = profile_by_id(device, profileId)) ||
         placement->size != (unsigned int)p->memory_slices)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        rc = mock_gi_create(device, p, placement->start, gpuInstance);
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance)
{
    ENTER();
    nvmlReturn_t rc = check_gi(s, gpuInstance);
    for (int k = 0; rc == NVML_SUCCESS && k < MOCK_MAX_MIG; k++) {
        rc = gpuInstance->gpu->cis[k].gi == gpuInstance ? NVML_ERROR_IN_USE : rc;
    }
    if (rc == NVML_SUCCESS && gpuInstance->busy_pid) {
        rc = NVML_ERROR_IN_USE;
    }
    if (rc == NVML_SUCCESS) {
        memset(gpuInstance, 0, sizeof(*gpuInstance));
    }
    return mock_leave(s, rc);
}

/* ---- compute instances ---- */

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance,
                                                          unsigned int profile,
                                                          unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t *info)
{
    ENTER();
    nvmlReturn_t rc = check_gi(s, gpuInstance);
    if (rc == NVML_SUCCESS && (!info || profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT ||
                               engProfile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !ci_fits(gpuInstance->profile, profile)) {
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    if (rc == NVML_SUCCESS) {
        const gp_mig_profile *p = gpuInstance->profile;
        unsigned int c = ci_slices(profile), g = (unsigned int)p->compute_slices;
        memset(info, 0, sizeof(*info));
        info->id = profile;
        info->sliceCount = c;
        info->instanceCount = g / c;
        info->multiprocessorCount = c * sm_per_slice(gpuInstance->gpu);
        info->sharedCopyEngineCount = g;
        info->sharedDecoderCount = (unsigned int)p->memory_slices * 5 / 8;
        info->sharedJpegCount = g == GP_MIG_COMPUTE_SLICES;
        info->sharedOfaCount = g == GP_MIG_COMPUTE_SLICES;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance,
                                                unsigned int profileId,
                                                nvmlComputeInstance_t *computeInstances,
                                                unsigned int *count)
{
    ENTER();
    nvmlReturn_t rc = check_gi(s, gpuInstance);
    if (rc == NVML_SUCCESS &&
        (!computeInstances || !count || profileId >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    unsigned int n = 0;
    for (int k = 0; rc == NVML_SUCCESS && k < MOCK_MAX_MIG; k++) {
        struct nvmlComputeInstance_st *ci = &gpuInstance->gpu->cis[k];
        if (ci->gi == gpuInstance && ci->profile == profileId) {
            computeInstances[n++] = ci;
        }
    }
    if (rc == NVML_SUCCESS) {
        *count = n;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance,
                                                  unsigned int profileId,
                                                  nvmlComputeInstance_t *computeInstance)
{
    ENTER();
    nvmlReturn_t rc = check_gi(s, gpuInstance);
    if (rc == NVML_SUCCESS &&
        (!computeInstance || profileId >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT)) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    if (rc == NVML_SUCCESS) {
        rc = mock_ci_create(s->inv, gpuInstance, profileId, NULL, 0, computeInstance);
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance)
{
    ENTER();
    nvmlReturn_t rc = check_ci(s, computeInstance);
    if (rc == NVML_SUCCESS && computeInstance->gi->busy_pid) {
        rc = NVML_ERROR_IN_USE;
    }
    if (rc == NVML_SUCCESS) {
        memset(computeInstance, 0, sizeof(*computeInstance));
    }
    return mock_leave(s, rc);
}

/* ---- MIG devices and processes ---- */

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, ANY_DEVICE);
    if (rc == NVML_SUCCESS && !id) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->parent) {
        rc = NVML_ERROR_NOT_SUPPORTED; /* not a MIG device */
    }
    if (rc == NVML_SUCCESS) {
        *id = device->ci->gi->id;
    }
    return mock_leave(s, rc);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, ANY_DEVICE);
    if (rc == NVML_SUCCESS && !id) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    } else if (rc == NVML_SUCCESS && !device->parent) {
        rc = NVML_ERROR_NOT_SUPPORTED; /* not a MIG device */
    }
    if (rc == NVML_SUCCESS) {
        *id = device->ci->id;
    }
    return mock_leave(s, rc);
}

/* The compute instance a process on gi runs in: gi's first. */
static unsigned int first_ci(const struct nvmlGpuInstance_st *gi)
{
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        if (gi->gpu->cis[k].gi == gi) {
            return gi->gpu->cis[k].id;
        }
    }
    return 0;
}

/* The processes the control file runs: on a GPU all of its busy GPU instances' and its proc
 * processes, on a MIG device its own GPU instance's. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    ENTER();
    nvmlReturn_t rc = mock_check(s, device, ANY_DEVICE);
    if (rc == NVML_SUCCESS && !infoCount) {
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    nvmlProcessInfo_t found[MOCK_MAX_MIG + MOCK_MAX_PROCS];
    unsigned int n = 0;
    struct nvmlDevice_st *g = rc != NVML_SUCCESS ? NULL : device->parent ? device->parent : device;
    for (int k = 0; g && g->mig_enabled && k < MOCK_MAX_MIG; k++) {
        const struct nvmlGpuInstance_st *gi = &g->gi[k];
        if (gi->gpu && gi->busy_pid && (!device->parent || device->ci->gi == gi)) {
            found[n++] = (nvmlProcessInfo_t){gi->busy_pid, BUSY_MEMORY, gi->id, first_ci(gi)};
        }
    }
    for (int k = 0; g && !device->parent && k < s->inv->nprocs[g->index]; k++) {
        const mock_proc *p = &s->inv->procs[g->index][k];
        found[n++] = (nvmlProcessInfo_t){p->pid, p->bytes, ~0u, ~0u};
    }
    if (rc == NVML_SUCCESS && (*infoCount < n || (!infos && n > 0))) {
        rc = NVML_ERROR_INSUFFICIENT_SIZE;
    } else if (rc == NVML_SUCCESS && n > 0) {
        memcpy(infos, found, n * sizeof(found[0]));
    }
    if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE) {
        *infoCount = n;
    }
    return mock_leave(s, rc);
}
