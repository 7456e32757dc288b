/*
 * gp_nvml_mig_ensure (see mig.h): read the GPU's MIG layout from NVML, decide, then change it.
 *
 * Everything that can refuse the request without NVML's help is checked before anything is
 * changed: MIG mode, the profile (matched by name against what the driver offers), the start
 * (against the driver's possible placements), room for what stays, and processes running on the
 * instances to be destroyed. Only then are instances destroyed and created, so a refusal leaves
 * the GPU as it was. The exceptions are NVML answering IN_USE while destroying, which the
 * process list did not show (an unprivileged caller sees no processes): the error then says what
 * had already been destroyed; and NVML refusing the creation after the destroys, which the checks
 * make unlikely.
 *
 * All state lives in one mig_ctx on the stack for the length of a call; NVML handles are
 * not kept between calls (a destroyed instance's handles become invalid).
 */
#include "agent/mig.h"
#include "agent/nvml_abi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPU instances one GPU can hold: one per memory slice at most (8 on A100 and H100). */
#define MAX_GI 16
/* Possible placements of one profile (7 at most on A100 and H100). */
#define MAX_PLACEMENTS 32
/* Compute instances of one GPU instance: one per compute slice at most. */
#define MAX_CI 8

typedef struct gi_entry {
    nvmlGpuInstance_t handle;
    nvmlGpuInstanceInfo_t info;
    const nvmlGpuInstanceProfileInfo_v2_t *profile; /* in mig_ctx.profiles */
} gi_entry;

typedef struct mig_ctx {
    const gp_nvml *h;
    const struct gp_nvml_fns *fn;
    nvmlDevice_t dev;
    int gpu;
    gp_diag *d;
    int nprofiles; /* the profiles the driver offers on this GPU */
    nvmlGpuInstanceProfileInfo_v2_t profiles[NVML_GPU_INSTANCE_PROFILE_COUNT];
    int ngi; /* the GPU instances present */
    gi_entry gis[MAX_GI];
} mig_ctx;

/* The functions a call needs; the first one the library lacks, or NULL. */
static const char *missing(const struct gp_nvml_fns *fn)
{
#define GP_MIG_NEED(name)                                                                          \
    if (!fn->name) {                                                                               \
        return #name;                                                                              \
    }
    GP_MIG_NEED(nvmlDeviceGetMigMode)
    GP_MIG_NEED(nvmlDeviceGetMaxMigDeviceCount)
    GP_MIG_NEED(nvmlDeviceGetMigDeviceHandleByIndex)
    GP_MIG_NEED(nvmlDeviceGetGpuInstanceId)
    GP_MIG_NEED(nvmlDeviceGetGpuInstanceProfileInfoV)
    GP_MIG_NEED(nvmlDeviceGetGpuInstancePossiblePlacements_v2)
    GP_MIG_NEED(nvmlDeviceGetGpuInstances)
    GP_MIG_NEED(nvmlGpuInstanceGetInfo)
    GP_MIG_NEED(nvmlDeviceCreateGpuInstanceWithPlacement)
    GP_MIG_NEED(nvmlGpuInstanceDestroy)
    GP_MIG_NEED(nvmlGpuInstanceGetComputeInstanceProfileInfo)
    GP_MIG_NEED(nvmlGpuInstanceGetComputeInstances)
    GP_MIG_NEED(nvmlGpuInstanceCreateComputeInstance)
    GP_MIG_NEED(nvmlComputeInstanceDestroy)
#undef GP_MIG_NEED
    return NULL;
}

static int nvml_fail(const mig_ctx *c, nvmlReturn_t rc, const char *fname)
{
    return gp_nvml_fail(c->h, c->d, (int)rc, c->gpu, fname);
}

/* "1g.10gb" of a profile the driver names "MIG 1g.10gb". */
static const char *short_name(const nvmlGpuInstanceProfileInfo_v2_t *p)
{
    return strncmp(p->name, "MIG ", 4) == 0 ? p->name + 4 : p->name;
}

static int check_mig_mode(const mig_ctx *c)
{
    unsigned int cur = 0, pending = 0;
    nvmlReturn_t rc = c->fn->nvmlDeviceGetMigMode(c->dev, &cur, &pending);
    if (rc == NVML_ERROR_NOT_SUPPORTED) {
        return gp_diag_set(c->d, GP_EINVAL, "GPU %d: the GPU has no MIG", c->gpu);
    }
    if (rc != NVML_SUCCESS) {
        return nvml_fail(c, rc, "nvmlDeviceGetMigMode");
    }
    if (cur != NVML_DEVICE_MIG_ENABLE) {
        return gp_diag_set(c->d, GP_EINVAL,
                           "GPU %d: not in MIG mode (gpupool never changes MIG mode; an operator "
                           "enables it with nvidia-smi -i %d -mig 1)",
                           c->gpu, c->gpu);
    }
    return 0;
}

/* The profiles the driver offers on the GPU. An index the driver does not know (older drivers
 * have fewer) or a profile the GPU lacks is skipped. */
static int load_profiles(mig_ctx *c)
{
    c->nprofiles = 0;
    for (unsigned int i = 0; i < NVML_GPU_INSTANCE_PROFILE_COUNT; i++) {
        nvmlGpuInstanceProfileInfo_v2_t *p = &c->profiles[c->nprofiles];
        memset(p, 0, sizeof(*p));
        p->version = nvmlGpuInstanceProfileInfo_v2;
        nvmlReturn_t rc = c->fn->nvmlDeviceGetGpuInstanceProfileInfoV(c->dev, i, p);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) {
            continue;
        }
        if (rc != NVML_SUCCESS) {
            return nvml_fail(c, rc, "nvmlDeviceGetGpuInstanceProfileInfoV");
        }
        p->name[sizeof(p->name) - 1] = '\0';
        if (p->instanceCount > MAX_GI) {
            return gp_diag_set(c->d, GP_ERANGE, "GPU %d: profile %s allows %u instances (> %d)",
                               c->gpu, p->name, p->instanceCount, MAX_GI);
        }
        c->nprofiles++;
    }
    return 0;
}

static const nvmlGpuInstanceProfileInfo_v2_t *profile_by_name(const mig_ctx *c, const char *name)
{
    for (int i = 0; i < c->nprofiles; i++) {
        if (strcmp(short_name(&c->profiles[i]), name) == 0) {
            return &c->profiles[i];
        }
    }
    return NULL;
}

static int unknown_profile(const mig_ctx *c, const char *name)
{
    char offered[256] = "";
    size_t n = 0;
    for (int i = 0; i < c->nprofiles && n < sizeof(offered); i++) {
        n += (size_t)snprintf(offered + n, sizeof(offered) - n, "%s%s", i ? ", " : "",
                              short_name(&c->profiles[i]));
    }
    return gp_diag_set(c->d, GP_EINVAL, "GPU %d: no MIG profile '%s' (the GPU offers: %s)", c->gpu,
                       name, c->nprofiles ? offered : "none");
}

/* The placement of p that starts at memory slice start, from the driver's possible placements. */
static int legal_placement(const mig_ctx *c, const nvmlGpuInstanceProfileInfo_v2_t *p, int start,
                           nvmlGpuInstancePlacement_t *out)
{
    nvmlGpuInstancePlacement_t pl[MAX_PLACEMENTS];
    unsigned int n = MAX_PLACEMENTS;
    memset(pl, 0, sizeof(pl));
    nvmlReturn_t rc = c->fn->nvmlDeviceGetGpuInstancePossiblePlacements_v2(c->dev, p->id, pl, &n);
    if (rc != NVML_SUCCESS) {
        return nvml_fail(c, rc, "nvmlDeviceGetGpuInstancePossiblePlacements_v2");
    }
    char legal[128] = "";
    size_t len = 0;
    for (unsigned int i = 0; i < n && i < MAX_PLACEMENTS; i++) {
        if (start >= 0 && pl[i].start == (unsigned int)start) {
            *out = pl[i];
            return 0;
        }
        if (len < sizeof(legal)) {
            len += (size_t)snprintf(legal + len, sizeof(legal) - len, "%s%u", i ? ", " : "",
                                    pl[i].start);
        }
    }
    return gp_diag_set(c->d, GP_EINVAL,
                       "GPU %d: %s cannot start at memory slice %d (its legal starts: %s)", c->gpu,
                       short_name(p), start, n ? legal : "none");
}

/* Every GPU instance on the GPU, with its placement. */
static int load_instances(mig_ctx *c)
{
    c->ngi = 0;
    for (int i = 0; i < c->nprofiles; i++) {
        nvmlGpuInstance_t buf[MAX_GI];
        unsigned int n = 0;
        nvmlReturn_t rc = c->fn->nvmlDeviceGetGpuInstances(c->dev, c->profiles[i].id, buf, &n);
        if (rc != NVML_SUCCESS) {
            return nvml_fail(c, rc, "nvmlDeviceGetGpuInstances");
        }
        for (unsigned int k = 0; k < n && k < MAX_GI && c->ngi < MAX_GI; k++) {
            gi_entry *e = &c->gis[c->ngi];
            memset(e, 0, sizeof(*e));
            e->handle = buf[k];
            e->profile = &c->profiles[i];
            rc = c->fn->nvmlGpuInstanceGetInfo(buf[k], &e->info);
            if (rc != NVML_SUCCESS) {
                return nvml_fail(c, rc, "nvmlGpuInstanceGetInfo");
            }
            c->ngi++;
        }
    }
    return 0;
}

static int overlaps(const nvmlGpuInstancePlacement_t *a, const nvmlGpuInstancePlacement_t *b)
{
    return a->start < b->start + b->size && b->start < a->start + a->size;
}

/* "GPU instance 3 (1g.10gb at memory slice 2)" */
static const char *describe(const gi_entry *e, char *buf, size_t len)
{
    snprintf(buf, len, "GPU instance %u (%.24s at memory slice %u)", e->info.id,
             short_name(e->profile), e->info.placement.start);
    return buf;
}

/*
 * Which GPU instances a process runs on: bit k of *busy for c->gis[k], with the first such
 * process in pids[k]. NVML lists every process of a GPU in MIG mode, with its GPU instance, to a
 * privileged caller; when it cannot (NO_PERMISSION, NOT_SUPPORTED, an older driver) none is busy
 * as far as this can tell.
 */
static int busy_instances(const mig_ctx *c, uint32_t *busy, unsigned int *pids)
{
    *busy = 0;
    if (!c->fn->nvmlDeviceGetComputeRunningProcesses_v3) {
        return 0;
    }
    nvmlProcessInfo_t *procs = NULL;
    unsigned int n = 0;
    nvmlReturn_t rc = c->fn->nvmlDeviceGetComputeRunningProcesses_v3(c->dev, &n, NULL);
    for (int tries = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && tries < 4; tries++) {
        free(procs);
        n += 8; /* room for processes that start meanwhile */
        procs = calloc(n, sizeof(*procs));
        if (!procs) {
            return gp_diag_set(c->d, GP_ENOMEM, "out of memory");
        }
        rc = c->fn->nvmlDeviceGetComputeRunningProcesses_v3(c->dev, &n, procs);
    }
    int result = 0;
    if (rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_UNINITIALIZED) {
        result = nvml_fail(c, rc, "nvmlDeviceGetComputeRunningProcesses_v3");
    }
    for (unsigned int p = 0; rc == NVML_SUCCESS && procs && p < n; p++) {
        for (int k = 0; k < c->ngi; k++) {
            if (procs[p].gpuInstanceId == c->gis[k].info.id && !(*busy & (UINT32_C(1) << k))) {
                *busy |= UINT32_C(1) << k;
                pids[k] = procs[p].pid;
            }
        }
    }
    free(procs);
    return result;
}

/* Refuses, before anything changes, when a process runs on one of the GPU instances in victims
 * (bit k: c->gis[k]); what NVML cannot show is left to the destroy calls. */
static int check_idle(const mig_ctx *c, uint32_t victims, const char *then)
{
    uint32_t busy = 0;
    unsigned int pids[MAX_GI] = {0};
    int rc = victims ? busy_instances(c, &busy, pids) : 0;
    for (int k = 0; rc == 0 && k < c->ngi; k++) {
        if (victims & busy & (UINT32_C(1) << k)) {
            char what[96];
            rc = gp_diag_set(c->d, GP_ESTATE, "GPU %d: %s is in use by process %u; %s", c->gpu,
                             describe(&c->gis[k], what, sizeof(what)), pids[k], then);
        }
    }
    return rc;
}

/* The compute instances of GPU instance e (at most MAX_CI); *full: whether exactly one exists
 * and it takes the whole GPU instance. */
static int compute_instances(const mig_ctx *c, const gi_entry *e, nvmlComputeInstance_t *cis,
                             int *n, int *full)
{
    *n = 0;
    *full = 0;
    int whole = 0;
    for (unsigned int i = 0; i < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; i++) {
        nvmlComputeInstanceProfileInfo_t info;
        memset(&info, 0, sizeof(info));
        nvmlReturn_t rc = c->fn->nvmlGpuInstanceGetComputeInstanceProfileInfo(
            e->handle, i, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) {
            continue;
        }
        if (rc != NVML_SUCCESS) {
            return nvml_fail(c, rc, "nvmlGpuInstanceGetComputeInstanceProfileInfo");
        }
        nvmlComputeInstance_t buf[MAX_CI];
        unsigned int k = 0;
        rc = c->fn->nvmlGpuInstanceGetComputeInstances(e->handle, info.id, buf, &k);
        if (rc != NVML_SUCCESS) {
            return nvml_fail(c, rc, "nvmlGpuInstanceGetComputeInstances");
        }
        for (unsigned int j = 0; j < k && *n < MAX_CI; j++) {
            cis[(*n)++] = buf[j];
            whole += info.sliceCount == e->profile->sliceCount;
        }
    }
    *full = *n == 1 && whole == 1;
    return 0;
}

/* IN_USE from a destroy call: names the instance, and what this call already destroyed. */
static int in_use(const mig_ctx *c, const gi_entry *e, const char *fname, const char *done)
{
    char what[96];
    return gp_diag_set(c->d, GP_ESTATE, "GPU %d: %s is in use (%s: In use by another client)%s%s",
                       c->gpu, describe(e, what, sizeof(what)), fname,
                       *done ? "; already destroyed: " : "", done);
}

/* Destroys the compute instances of e, and e itself when with_gi. */
static int destroy(const mig_ctx *c, const gi_entry *e, int with_gi, const char *done)
{
    nvmlComputeInstance_t cis[MAX_CI];
    int n = 0, full = 0;
    int rc = compute_instances(c, e, cis, &n, &full);
    for (int k = 0; rc == 0 && k < n; k++) {
        nvmlReturn_t nrc = c->fn->nvmlComputeInstanceDestroy(cis[k]);
        if (nrc == NVML_ERROR_IN_USE) {
            return in_use(c, e, "nvmlComputeInstanceDestroy", done);
        }
        rc = nrc == NVML_SUCCESS ? 0 : nvml_fail(c, nrc, "nvmlComputeInstanceDestroy");
    }
    if (rc == 0 && with_gi) {
        nvmlReturn_t nrc = c->fn->nvmlGpuInstanceDestroy(e->handle);
        if (nrc == NVML_ERROR_IN_USE) {
            return in_use(c, e, "nvmlGpuInstanceDestroy", done);
        }
        rc = nrc == NVML_SUCCESS ? 0 : nvml_fail(c, nrc, "nvmlGpuInstanceDestroy");
    }
    return rc;
}

/* One compute instance taking all of GPU instance gi (of profile p). */
static int create_whole_ci(const mig_ctx *c, nvmlGpuInstance_t gi,
                           const nvmlGpuInstanceProfileInfo_v2_t *p)
{
    for (unsigned int i = 0; i < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; i++) {
        nvmlComputeInstanceProfileInfo_t info;
        memset(&info, 0, sizeof(info));
        nvmlReturn_t rc = c->fn->nvmlGpuInstanceGetComputeInstanceProfileInfo(
            gi, i, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) {
            continue;
        }
        if (rc != NVML_SUCCESS) {
            return nvml_fail(c, rc, "nvmlGpuInstanceGetComputeInstanceProfileInfo");
        }
        if (info.sliceCount != p->sliceCount) {
            continue;
        }
        nvmlComputeInstance_t ci = NULL;
        rc = c->fn->nvmlGpuInstanceCreateComputeInstance(gi, info.id, &ci);
        return rc == NVML_SUCCESS ? 0 : nvml_fail(c, rc, "nvmlGpuInstanceCreateComputeInstance");
    }
    return gp_diag_set(c->d, GP_ENOTSUP,
                       "GPU %d: no compute instance profile takes all %u slices of a %s instance",
                       c->gpu, p->sliceCount, short_name(p));
}

/* The UUID of the MIG device of GPU instance id (the one compute instance it has). */
static int uuid_of(const mig_ctx *c, unsigned int id, char *uuid, size_t cap)
{
    unsigned int max = 0;
    nvmlReturn_t rc = c->fn->nvmlDeviceGetMaxMigDeviceCount(c->dev, &max);
    if (rc != NVML_SUCCESS) {
        return nvml_fail(c, rc, "nvmlDeviceGetMaxMigDeviceCount");
    }
    for (unsigned int k = 0; k < max; k++) {
        nvmlDevice_t m = NULL;
        unsigned int gi = 0;
        rc = c->fn->nvmlDeviceGetMigDeviceHandleByIndex(c->dev, k, &m);
        if (rc == NVML_ERROR_NOT_FOUND) {
            continue;
        }
        if (rc != NVML_SUCCESS) {
            return nvml_fail(c, rc, "nvmlDeviceGetMigDeviceHandleByIndex");
        }
        rc = c->fn->nvmlDeviceGetGpuInstanceId(m, &gi);
        if (rc != NVML_SUCCESS) {
            return nvml_fail(c, rc, "nvmlDeviceGetGpuInstanceId");
        }
        if (gi != id) {
            continue;
        }
        char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        rc = c->fn->nvmlDeviceGetUUID(m, buf, sizeof(buf));
        if (rc != NVML_SUCCESS) {
            return nvml_fail(c, rc, "nvmlDeviceGetUUID");
        }
        if (strlen(buf) >= cap) {
            return gp_diag_set(c->d, GP_ERANGE, "GPU %d: MIG device UUID %s longer than %zu",
                               c->gpu, buf, cap - 1);
        }
        memcpy(uuid, buf, strlen(buf) + 1);
        return 0;
    }
    return gp_diag_set(c->d, GP_EIO, "GPU %d: GPU instance %u shows no MIG device", c->gpu, id);
}

/* Reuses GPU instance e: its one whole compute instance, else a new one replacing any smaller.
 * Refused while a process runs on it: a job never shares its instance with what ran before. */
static int reuse(const mig_ctx *c, int k, char *uuid, size_t cap)
{
    const gi_entry *e = &c->gis[k];
    nvmlComputeInstance_t cis[MAX_CI];
    int n = 0, full = 0;
    int rc = check_idle(c, UINT32_C(1) << k, "it is not handed on until that ends");
    if (rc == 0) {
        rc = compute_instances(c, e, cis, &n, &full);
    }
    if (rc == 0 && !full && n > 0) {
        rc = destroy(c, e, 0, "");
    }
    if (rc == 0 && !full) {
        rc = create_whole_ci(c, e->handle, e->profile);
    }
    return rc < 0 ? rc : uuid_of(c, e->info.id, uuid, cap);
}

/* Whether what stays (the GPU instances not in victims) leaves room for one more of p. */
static int check_room(const mig_ctx *c, uint32_t victims, const nvmlGpuInstanceProfileInfo_v2_t *p)
{
    unsigned int slices = 0, same = 0, total = 0;
    for (int i = 0; i < c->nprofiles; i++) {
        total = c->profiles[i].sliceCount > total ? c->profiles[i].sliceCount : total;
    }
    for (int k = 0; k < c->ngi; k++) {
        if (!(victims & (UINT32_C(1) << k))) {
            slices += c->gis[k].profile->sliceCount;
            same += c->gis[k].profile == p;
        }
    }
    if (slices + p->sliceCount > total || same + 1 > p->instanceCount) {
        return gp_diag_set(c->d, GP_ENOSPC,
                           "GPU %d: no room for %s: the instances that stay take %u of %u compute "
                           "slices and %u of at most %u %s instances; nothing changed",
                           c->gpu, short_name(p), slices, total, same, p->instanceCount,
                           short_name(p));
    }
    return 0;
}

/* Destroys the GPU instances in victims, then creates p at placement pl with a whole compute
 * instance. */
static int replace(const mig_ctx *c, uint32_t victims, const nvmlGpuInstanceProfileInfo_v2_t *p,
                   const nvmlGpuInstancePlacement_t *pl, char *uuid, size_t cap)
{
    char done[256] = "";
    size_t len = 0;
    for (int k = 0; k < c->ngi; k++) {
        if (!(victims & (UINT32_C(1) << k))) {
            continue;
        }
        int rc = destroy(c, &c->gis[k], 1, done);
        if (rc < 0) {
            return rc;
        }
        char what[96];
        if (len < sizeof(done)) {
            len += (size_t)snprintf(done + len, sizeof(done) - len, "%s%s", len ? ", " : "",
                                    describe(&c->gis[k], what, sizeof(what)));
        }
    }
    nvmlGpuInstance_t gi = NULL;
    nvmlReturn_t nrc = c->fn->nvmlDeviceCreateGpuInstanceWithPlacement(c->dev, p->id, pl, &gi);
    if (nrc != NVML_SUCCESS) {
        return nvml_fail(c, nrc, "nvmlDeviceCreateGpuInstanceWithPlacement");
    }
    nvmlGpuInstanceInfo_t info;
    memset(&info, 0, sizeof(info));
    nrc = c->fn->nvmlGpuInstanceGetInfo(gi, &info);
    int rc = nrc == NVML_SUCCESS ? 0 : nvml_fail(c, nrc, "nvmlGpuInstanceGetInfo");
    if (rc == 0) {
        rc = create_whole_ci(c, gi, p);
    }
    if (rc < 0) {
        c->fn->nvmlGpuInstanceDestroy(gi); /* leave no bare GPU instance behind */
        return rc;
    }
    return uuid_of(c, info.id, uuid, cap);
}

/* The request against the layout: reuse, or replace what overlaps. */
static int ensure(mig_ctx *c, const char *name, int start, char *uuid, size_t cap)
{
    const nvmlGpuInstanceProfileInfo_v2_t *p = profile_by_name(c, name);
    if (!p) {
        return unknown_profile(c, name);
    }
    nvmlGpuInstancePlacement_t want;
    int rc = legal_placement(c, p, start, &want);
    if (rc == 0) {
        rc = load_instances(c);
    }
    if (rc < 0) {
        return rc;
    }
    uint32_t victims = 0;
    for (int k = 0; k < c->ngi; k++) {
        const gi_entry *e = &c->gis[k];
        if (e->info.profileId == p->id && e->info.placement.start == want.start) {
            return reuse(c, k, uuid, cap);
        }
        victims |= overlaps(&e->info.placement, &want) ? UINT32_C(1) << k : 0;
    }
    if ((rc = check_room(c, victims, p)) < 0 ||
        (rc = check_idle(c, victims, "nothing changed")) < 0) {
        return rc;
    }
    return replace(c, victims, p, &want, uuid, cap);
}

/* c for GPU gpu of h; GP_EINVAL (d says) when there is no such GPU. */
static int mig_open(gp_nvml *h, int gpu, gp_diag *d, mig_ctx *c)
{
    if (gpu < 0 || gpu >= gp_nvml_count(h)) {
        return gp_diag_set(d, GP_EINVAL, "GPU %d: no such GPU (%d present)", gpu, gp_nvml_count(h));
    }
    memset(c, 0, sizeof(*c));
    c->h = h;
    c->fn = gp_nvml_fns(h);
    c->dev = gp_nvml_device(h, gpu);
    c->gpu = gpu;
    c->d = d;
    return 0;
}

int gp_nvml_mig_ensure(gp_nvml *h, int gpu, const char *profile, int start, char *uuid, size_t cap,
                       gp_diag *d)
{
    if (uuid && cap > 0) {
        uuid[0] = '\0';
    }
    if (!uuid || cap == 0) {
        return gp_diag_set(d, GP_ERANGE, "no room for the MIG device UUID");
    }
    mig_ctx c;
    int rc = mig_open(h, gpu, d, &c);
    if (rc == 0 && (!profile || !*profile)) {
        rc = gp_diag_set(d, GP_EINVAL, "GPU %d: no MIG profile given", gpu);
    }
    if (rc < 0) {
        return rc;
    }
    const char *lacks = missing(c.fn);
    rc = lacks ? gp_diag_set(d, GP_ENOTSUP, "NVML library %s lacks %s (MIG management)",
                             gp_nvml_path(h), lacks)
               : 0;
    if (rc == 0 && (rc = check_mig_mode(&c)) == 0 && (rc = load_profiles(&c)) == 0) {
        rc = ensure(&c, profile, start, uuid, cap);
    }
    if (rc < 0) {
        uuid[0] = '\0';
    }
    return rc;
}

int gp_nvml_mig_instances(gp_nvml *h, int gpu, gp_nvml_gi *out, int cap, int *n, gp_diag *d)
{
    *n = 0;
    mig_ctx c;
    int rc = mig_open(h, gpu, d, &c);
    if (rc < 0) {
        return rc;
    }
    if (!c.fn->nvmlDeviceGetMigMode || !c.fn->nvmlDeviceGetGpuInstanceProfileInfoV ||
        !c.fn->nvmlDeviceGetGpuInstances || !c.fn->nvmlGpuInstanceGetInfo) {
        return gp_diag_set(d, GP_ENOTSUP, "NVML library %s lacks the GPU instance functions",
                           gp_nvml_path(h));
    }
    uint32_t busy = 0;
    unsigned int pids[MAX_GI] = {0};
    rc = check_mig_mode(&c);
    rc = rc < 0 ? rc : load_profiles(&c);
    rc = rc < 0 ? rc : load_instances(&c);
    rc = rc < 0 ? rc : busy_instances(&c, &busy, pids);
    if (rc == 0 && c.ngi > cap) {
        rc = gp_diag_set(d, GP_ERANGE, "GPU %d: %d GPU instances (room for %d)", gpu, c.ngi, cap);
    }
    for (int k = 0; rc == 0 && k < c.ngi; k++) {
        const gi_entry *e = &c.gis[k];
        gp_nvml_gi g = {.id = (int)e->info.id,
                        .start = (int)e->info.placement.start,
                        .size = (int)e->info.placement.size,
                        .busy = (busy & (UINT32_C(1) << k)) != 0};
        snprintf(g.profile, sizeof(g.profile), "%.31s", short_name(e->profile));
        int at = (*n)++;
        for (; at > 0 && out[at - 1].start > g.start; at--) { /* by start */
            out[at] = out[at - 1];
        }
        out[at] = g;
    }
    if (rc < 0) {
        *n = 0;
    }
    return rc;
}
