/*
 * NVML through dlopen: the symbol table, discovery (inventory), the health check's readings,
 * processes and XID events (sampling is in nvml_sample.c, through the same table).
 *
 * Every NVML function is called through h->fn, filled from GP_NVML_FUNCS by one loop over a
 * table of names and offsets, so adding a function is one line in nvml_abi.h. Optional functions
 * may be NULL; every use checks. Nothing here has writable static data: all state is in the
 * gp_nvml (read-only after open) and the gp_nvml_events.
 */
#define _GNU_SOURCE /* dlinfo and struct link_map: the file NVML was loaded from */
#include "agent/nvml.h"
#include "agent/nvml_abi.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp_nvml {
    void *dl;
    char path[256];
    struct gp_nvml_fns fn; /* one pointer per NVML function, named like the function */
    int ndev;
    nvmlDevice_t dev[GP_NVML_MAX_GPUS];
};

struct gp_nvml_events {
    const gp_nvml *h;
    nvmlEventSet_t set;
};

struct sym {
    const char *name;
    size_t offset; /* of the pointer in struct gp_nvml_fns */
    int required;
};

static const struct sym syms[] = {
#define GP_NVML_SYM(ret, name, params, required)                                                   \
    {#name, offsetof(struct gp_nvml_fns, name), required},
    GP_NVML_FUNCS(GP_NVML_SYM)
#undef GP_NVML_SYM
};

static int map_rc(nvmlReturn_t rc)
{
    switch (rc) {
    case NVML_SUCCESS:
        return 0;
    case NVML_ERROR_GPU_IS_LOST:
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return GP_EUNAVAIL;
    case NVML_ERROR_NOT_SUPPORTED:
        return GP_ENOTSUP;
    case NVML_ERROR_NO_PERMISSION:
        return GP_EPERM;
    case NVML_ERROR_NOT_FOUND:
        return GP_ENOENT;
    case NVML_ERROR_MEMORY:
        return GP_ENOMEM;
    case NVML_ERROR_UNINITIALIZED:
    case NVML_ERROR_IN_USE:
        return GP_ESTATE;
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
        return GP_ENOSPC;
    case NVML_ERROR_INVALID_ARGUMENT:
        return GP_EINVAL;
    default:
        return GP_EIO;
    }
}

/* Records an NVML failure of fname on GPU gpu (-1: not about one GPU). */
static int fail(const gp_nvml *h, gp_diag *d, nvmlReturn_t rc, int gpu, const char *fname)
{
    const char *msg = h->fn.nvmlErrorString ? h->fn.nvmlErrorString(rc) : NULL;
    if (gpu >= 0) {
        return gp_diag_set(d, map_rc(rc), "GPU %d: %s: %s (NVML %d)", gpu, fname,
                           msg ? msg : "error", (int)rc);
    }
    return gp_diag_set(d, map_rc(rc), "%s: %s: %s (NVML %d)", h->path, fname, msg ? msg : "error",
                       (int)rc);
}

int gp_nvml_fail(const gp_nvml *h, gp_diag *d, int nvml_rc, int gpu, const char *fname)
{
    return fail(h, d, (nvmlReturn_t)nvml_rc, gpu, fname);
}

const struct gp_nvml_fns *gp_nvml_fns(const gp_nvml *h)
{
    return &h->fn;
}

nvmlDevice_t gp_nvml_device(const gp_nvml *h, int gpu)
{
    return h->dev[gpu];
}

/* Resolves every symbol of the table; the first missing required one fails. */
static int resolve(gp_nvml *h, gp_diag *d)
{
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *p = dlsym(h->dl, syms[i].name);
        if (!p && syms[i].required) {
            return gp_diag_set(d, GP_ENOTSUP,
                               "NVML library %s lacks %s (a driver too old for gpupool?)", h->path,
                               syms[i].name);
        }
        /* POSIX guarantees that object and function pointers convert through memcpy. */
        memcpy((char *)&h->fn + syms[i].offset, &p, sizeof(p));
    }
    return 0;
}

/* Takes every GPU's handle; with partial, a GPU whose handle NVML refuses is left NULL. */
static int take_handles(gp_nvml *h, bool partial, gp_diag *d)
{
    unsigned int n = 0;
    nvmlReturn_t rc = h->fn.nvmlDeviceGetCount_v2(&n);
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, -1, "nvmlDeviceGetCount_v2");
    }
    if (n > GP_NVML_MAX_GPUS) {
        return gp_diag_set(d, GP_ERANGE, "%s: %u GPUs; gpupool handles at most %d per node",
                           h->path, n, GP_NVML_MAX_GPUS);
    }
    for (unsigned int i = 0; i < n; i++) {
        rc = h->fn.nvmlDeviceGetHandleByIndex_v2(i, &h->dev[i]);
        if (rc != NVML_SUCCESS && partial) {
            h->dev[i] = NULL;
        } else if (rc != NVML_SUCCESS) {
            return fail(h, d, rc, (int)i, "nvmlDeviceGetHandleByIndex_v2");
        }
    }
    h->ndev = (int)n;
    return 0;
}

static int open_nvml(const char *path, bool partial, gp_nvml **out, gp_diag *d)
{
    *out = NULL;
    if (!path || !*path) {
        path = GP_NVML_DEFAULT_LIBRARY;
    }
    gp_nvml *h = calloc(1, sizeof(*h));
    if (!h) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    snprintf(h->path, sizeof(h->path), "%s", path);
    h->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h->dl) {
        const char *why = dlerror();
        int rc = gp_diag_set(d, GP_ENOENT, "cannot load NVML library %s: %s", path,
                             why ? why : "unknown error");
        free(h);
        return rc;
    }
    int rc = resolve(h, d);
    if (rc == 0) {
        nvmlReturn_t nrc = h->fn.nvmlInit_v2();
        if (nrc != NVML_SUCCESS) {
            rc = fail(h, d, nrc, -1, "nvmlInit_v2");
        } else if ((rc = take_handles(h, partial, d)) < 0) {
            h->fn.nvmlShutdown();
        }
    }
    if (rc < 0) {
        dlclose(h->dl);
        free(h);
        return rc;
    }
    *out = h;
    return 0;
}

int gp_nvml_open(const char *path, gp_nvml **out, gp_diag *d)
{
    return open_nvml(path, false, out, d);
}

int gp_nvml_open_partial(const char *path, gp_nvml **out, gp_diag *d)
{
    return open_nvml(path, true, out, d);
}

void gp_nvml_close(gp_nvml *h)
{
    if (!h) {
        return;
    }
    h->fn.nvmlShutdown();
    dlclose(h->dl);
    free(h);
}

int gp_nvml_count(const gp_nvml *h)
{
    return h->ndev;
}

const char *gp_nvml_path(const gp_nvml *h)
{
    return h->path;
}

int gp_nvml_loaded_file(const gp_nvml *h, char *out, size_t cap)
{
    struct link_map *lm = NULL;
    if (dlinfo(h->dl, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !lm->l_name[0]) {
        return GP_ENOENT;
    }
    return snprintf(out, cap, "%s", lm->l_name) < (int)cap ? 0 : GP_ERANGE;
}

/* ---- inventory ---- */

static int same_pci(const nvmlPciInfo_t *a, const nvmlPciInfo_t *b)
{
    return a->domain == b->domain && a->bus == b->bus && a->device == b->device;
}

/* The NUMA node nearest the GPU: the lowest node of its memory affinity; -1 when unknown. */
static int numa_of(const gp_nvml *h, nvmlDevice_t dev)
{
    unsigned long set[4] = {0};
    if (!h->fn.nvmlDeviceGetMemoryAffinity ||
        h->fn.nvmlDeviceGetMemoryAffinity(dev, 4, set, NVML_AFFINITY_SCOPE_NODE) != NVML_SUCCESS) {
        return -1;
    }
    const int bits = (int)(8 * sizeof(set[0]));
    for (int i = 0; i < 4 * bits; i++) {
        if (set[i / bits] & (1ul << (i % bits))) {
            return i;
        }
    }
    return -1;
}

/*
 * Walks GPU i's links: a link to another GPU sets that GPU's bit in *peers (its remote PCI
 * address is matched against pci[]), a link to an NVSwitch sets *switched. A GPU without NVLink
 * answers NOT_SUPPORTED; the first index past its links answers INVALID_ARGUMENT. Without
 * nvmlDeviceGetNvLinkRemoteDeviceType (older drivers) a switch is not recognised: its links match
 * no GPU's address and add no peer.
 */
static int links_of(const gp_nvml *h, int i, const nvmlPciInfo_t *pci, uint32_t *peers,
                    int *switched, gp_diag *d)
{
    for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        nvmlEnableState_t on = NVML_FEATURE_DISABLED;
        nvmlReturn_t rc = h->fn.nvmlDeviceGetNvLinkState(h->dev[i], l, &on);
        if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) {
            break;
        }
        if (rc != NVML_SUCCESS) {
            return fail(h, d, rc, i, "nvmlDeviceGetNvLinkState");
        }
        if (on != NVML_FEATURE_ENABLED) {
            continue;
        }
        nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
        if (h->fn.nvmlDeviceGetNvLinkRemoteDeviceType &&
            h->fn.nvmlDeviceGetNvLinkRemoteDeviceType(h->dev[i], l, &type) == NVML_SUCCESS &&
            type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
            *switched = 1;
            continue;
        }
        nvmlPciInfo_t remote;
        memset(&remote, 0, sizeof(remote));
        rc = h->fn.nvmlDeviceGetNvLinkRemotePciInfo_v2(h->dev[i], l, &remote);
        if (rc != NVML_SUCCESS) {
            return fail(h, d, rc, i, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
        }
        for (int j = 0; j < h->ndev; j++) {
            if (j != i && same_pci(&remote, &pci[j])) {
                *peers |= UINT32_C(1) << j;
            }
        }
    }
    return 0;
}

/* Peers of every GPU: direct links, all-to-all among NVSwitch-attached GPUs, made symmetric. */
static int nvlink_all(const gp_nvml *h, gp_nvml_inv *inv, const nvmlPciInfo_t *pci, gp_diag *d)
{
    uint32_t switched = 0;
    for (int i = 0; i < h->ndev; i++) {
        int sw = 0;
        int rc = links_of(h, i, pci, &inv->gpus[i].nvlink, &sw, d);
        if (rc < 0) {
            return rc;
        }
        switched |= sw ? UINT32_C(1) << i : 0;
    }
    for (int i = 0; i < h->ndev; i++) {
        if (switched & (UINT32_C(1) << i)) {
            inv->gpus[i].nvlink |= switched & ~(UINT32_C(1) << i);
        }
        for (int j = 0; j < h->ndev; j++) {
            if (inv->gpus[i].nvlink & (UINT32_C(1) << j)) {
                inv->gpus[j].nvlink |= UINT32_C(1) << i;
            }
        }
    }
    return 0;
}

void gp_nvml_profile_of(const char *name, char *out, size_t len)
{
    const char *p = NULL;
    for (const char *s = strstr(name, " MIG "); s; s = strstr(s + 1, " MIG ")) {
        p = s + 5;
    }
    snprintf(out, len, "%s", p && gp_mig_name_valid(p) ? p : "");
}

/* The id and placement of MIG device m's GPU instance; -1 each where NVML cannot tell (older
 * drivers, or an unprivileged caller: nvmlDeviceGetGpuInstanceById needs root). */
static int placement_of(const gp_nvml *h, int i, nvmlDevice_t m, gp_nvml_mig *mig, gp_diag *d)
{
    mig->gpu_instance = mig->start = mig->size = -1;
    if (!h->fn.nvmlDeviceGetGpuInstanceId || !h->fn.nvmlDeviceGetGpuInstanceById ||
        !h->fn.nvmlGpuInstanceGetInfo) {
        return 0;
    }
    unsigned int id = 0;
    nvmlGpuInstance_t gi = NULL;
    nvmlGpuInstanceInfo_t info;
    memset(&info, 0, sizeof(info));
    const char *what = "nvmlDeviceGetGpuInstanceId";
    nvmlReturn_t rc = h->fn.nvmlDeviceGetGpuInstanceId(m, &id);
    if (rc == NVML_SUCCESS) {
        mig->gpu_instance = (int)id;
        what = "nvmlDeviceGetGpuInstanceById";
        rc = h->fn.nvmlDeviceGetGpuInstanceById(h->dev[i], id, &gi);
    }
    if (rc == NVML_SUCCESS) {
        what = "nvmlGpuInstanceGetInfo";
        rc = h->fn.nvmlGpuInstanceGetInfo(gi, &info);
    }
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_NO_PERMISSION) {
        return 0;
    }
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, i, what);
    }
    mig->start = (int)info.placement.start;
    mig->size = (int)info.placement.size;
    return 0;
}

/* The id of MIG device m's compute instance; -1 where NVML does not tell. */
static int compute_instance_of(const gp_nvml *h, nvmlDevice_t m)
{
    unsigned int id = 0;
    if (!h->fn.nvmlDeviceGetComputeInstanceId ||
        h->fn.nvmlDeviceGetComputeInstanceId(m, &id) != NVML_SUCCESS) {
        return -1;
    }
    return (int)id;
}

static int mig_devices(const gp_nvml *h, int i, gp_nvml_gpu *g, gp_diag *d)
{
    unsigned int max = 0;
    nvmlReturn_t rc = h->fn.nvmlDeviceGetMaxMigDeviceCount(h->dev[i], &max);
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, i, "nvmlDeviceGetMaxMigDeviceCount");
    }
    for (unsigned int k = 0; k < max && g->nmig < GP_NVML_MAX_MIG; k++) {
        nvmlDevice_t m;
        rc = h->fn.nvmlDeviceGetMigDeviceHandleByIndex(h->dev[i], k, &m);
        if (rc == NVML_ERROR_NOT_FOUND) {
            continue;
        }
        gp_nvml_mig *mig = &g->mig[g->nmig];
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
        nvmlMemory_t mem;
        const char *what = "nvmlDeviceGetMigDeviceHandleByIndex";
        if (rc == NVML_SUCCESS) {
            what = "nvmlDeviceGetUUID";
            rc = h->fn.nvmlDeviceGetUUID(m, mig->uuid, sizeof(mig->uuid));
        }
        if (rc == NVML_SUCCESS) {
            what = "nvmlDeviceGetName";
            rc = h->fn.nvmlDeviceGetName(m, name, sizeof(name));
        }
        if (rc == NVML_SUCCESS) {
            what = "nvmlDeviceGetMemoryInfo";
            rc = h->fn.nvmlDeviceGetMemoryInfo(m, &mem);
        }
        if (rc != NVML_SUCCESS) {
            return fail(h, d, rc, i, what);
        }
        gp_nvml_profile_of(name, mig->profile, sizeof(mig->profile));
        mig->memory_mib = (int64_t)(mem.total >> 20);
        int prc = placement_of(h, i, m, mig, d);
        if (prc < 0) {
            return prc;
        }
        mig->compute_instance = compute_instance_of(h, m);
        g->nmig++;
    }
    return 0;
}

static int mig_of(const gp_nvml *h, int i, gp_nvml_gpu *g, gp_diag *d)
{
    g->mig_mode = -1;
    if (!h->fn.nvmlDeviceGetMigMode || !h->fn.nvmlDeviceGetMaxMigDeviceCount ||
        !h->fn.nvmlDeviceGetMigDeviceHandleByIndex) {
        return 0; /* a driver from before MIG */
    }
    unsigned int cur = 0, pending = 0;
    nvmlReturn_t rc = h->fn.nvmlDeviceGetMigMode(h->dev[i], &cur, &pending);
    if (rc == NVML_ERROR_NOT_SUPPORTED) {
        return 0;
    }
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, i, "nvmlDeviceGetMigMode");
    }
    g->mig_mode = cur == NVML_DEVICE_MIG_ENABLE;
    return g->mig_mode ? mig_devices(h, i, g, d) : 0;
}

/* Identity, memory, PCI address and NUMA node of GPU i. */
static int describe(const gp_nvml *h, int i, gp_nvml_gpu *g, nvmlPciInfo_t *pci, gp_diag *d)
{
    nvmlMemory_t mem;
    g->index = i;
    nvmlReturn_t rc = h->fn.nvmlDeviceGetUUID(h->dev[i], g->uuid, sizeof(g->uuid));
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, i, "nvmlDeviceGetUUID");
    }
    rc = h->fn.nvmlDeviceGetName(h->dev[i], g->name, sizeof(g->name));
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, i, "nvmlDeviceGetName");
    }
    rc = h->fn.nvmlDeviceGetMemoryInfo(h->dev[i], &mem);
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, i, "nvmlDeviceGetMemoryInfo");
    }
    g->memory_mib = (int64_t)(mem.total >> 20);
    rc = h->fn.nvmlDeviceGetPciInfo_v3(h->dev[i], pci);
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, i, "nvmlDeviceGetPciInfo_v3");
    }
    _Static_assert(sizeof(g->pci_bus_id) == sizeof(pci->busId), "bus id buffers");
    memcpy(g->pci_bus_id, pci->busId, sizeof(g->pci_bus_id));
    g->pci_bus_id[sizeof(g->pci_bus_id) - 1] = '\0';
    g->numa = numa_of(h, h->dev[i]);
    unsigned int minor = 0;
    g->minor = h->fn.nvmlDeviceGetMinorNumber &&
                       h->fn.nvmlDeviceGetMinorNumber(h->dev[i], &minor) == NVML_SUCCESS &&
                       minor <= INT_MAX
                   ? (int)minor
                   : -1;
    return mig_of(h, i, g, d);
}

int gp_nvml_inventory(const gp_nvml *h, gp_nvml_inv *inv, gp_diag *d)
{
    memset(inv, 0, sizeof(*inv));
    nvmlReturn_t rc =
        h->fn.nvmlSystemGetDriverVersion(inv->driver_version, sizeof(inv->driver_version));
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, -1, "nvmlSystemGetDriverVersion");
    }
    int cuda = 0;
    rc = h->fn.nvmlSystemGetCudaDriverVersion(&cuda);
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, -1, "nvmlSystemGetCudaDriverVersion");
    }
    unsigned int c = cuda < 0 ? 0u : (unsigned int)cuda; /* 12040 for 12.4 */
    snprintf(inv->cuda_version, sizeof(inv->cuda_version), "%u.%u", (c / 1000) % 1000,
             (c % 1000) / 10);
    nvmlPciInfo_t pci[GP_NVML_MAX_GPUS];
    memset(pci, 0, sizeof(pci));
    for (int i = 0; i < h->ndev; i++) {
        int grc = describe(h, i, &inv->gpus[i], &pci[i], d);
        if (grc < 0) {
            return grc;
        }
    }
    inv->ngpus = h->ndev;
    return nvlink_all(h, inv, pci, d);
}

/* ---- the health check's readings ---- */

/* How a reading came back; GPU_IS_LOST also marks the GPU lost. */
static gp_check_avail avail(nvmlReturn_t rc, gp_check_gpu *g)
{
    switch (rc) {
    case NVML_SUCCESS:
        return GP_AVAIL_READ;
    case NVML_ERROR_NOT_SUPPORTED:
        return GP_AVAIL_NOT_SUPPORTED;
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return GP_AVAIL_MISSING;
    case NVML_ERROR_GPU_IS_LOST:
        g->lost = 1;
        return GP_AVAIL_FAILED;
    default:
        return GP_AVAIL_FAILED;
    }
}

/* Links 0.. until the GPU has no more (INVALID_ARGUMENT past its last; NOT_SUPPORTED at link 0
 * for a GPU without NVLink). */
static void health_links(const gp_nvml *h, nvmlDevice_t dev, gp_check_gpu *g)
{
    g->nvlink = GP_AVAIL_NOT_SUPPORTED;
    for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        nvmlEnableState_t on = NVML_FEATURE_DISABLED;
        nvmlReturn_t rc = h->fn.nvmlDeviceGetNvLinkState(dev, l, &on);
        if (rc == NVML_ERROR_INVALID_ARGUMENT || (rc == NVML_ERROR_NOT_SUPPORTED && l > 0)) {
            break; /* past the GPU's links */
        }
        if (rc != NVML_SUCCESS) {
            g->nvlink = avail(rc, g);
            return;
        }
        g->nvlink = GP_AVAIL_READ;
        g->nlinks = (int)l + 1;
        g->links_up |= on == NVML_FEATURE_ENABLED ? UINT32_C(1) << l : 0;
    }
}

/* The modes (current and pending) of MIG and ECC. */
static void health_modes(const gp_nvml *h, nvmlDevice_t dev, gp_check_gpu *g)
{
    unsigned int cur = 0, pend = 0;
    g->mig = h->fn.nvmlDeviceGetMigMode ? avail(h->fn.nvmlDeviceGetMigMode(dev, &cur, &pend), g)
                                        : GP_AVAIL_MISSING;
    g->mig_current = cur == NVML_DEVICE_MIG_ENABLE;
    g->mig_pending = pend == NVML_DEVICE_MIG_ENABLE;
    nvmlEnableState_t ecur = NVML_FEATURE_DISABLED, epend = NVML_FEATURE_DISABLED;
    g->ecc_mode = h->fn.nvmlDeviceGetEccMode
                      ? avail(h->fn.nvmlDeviceGetEccMode(dev, &ecur, &epend), g)
                      : GP_AVAIL_MISSING;
    g->ecc_current = ecur == NVML_FEATURE_ENABLED;
    g->ecc_pending = epend == NVML_FEATURE_ENABLED;
}

/* Uncorrected ECC counts, remapped rows and pending page retirement. */
static void health_memory(const gp_nvml *h, nvmlDevice_t dev, gp_check_gpu *g)
{
    unsigned long long n = 0;
    g->ecc = avail(h->fn.nvmlDeviceGetTotalEccErrors(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                                     NVML_VOLATILE_ECC, &n),
                   g);
    g->dbe_volatile = g->ecc == GP_AVAIL_READ ? (int64_t)n : 0;
    g->dbe_aggregate = -1;
    if (g->ecc == GP_AVAIL_READ &&
        h->fn.nvmlDeviceGetTotalEccErrors(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                          NVML_AGGREGATE_ECC, &n) == NVML_SUCCESS) {
        g->dbe_aggregate = (int64_t)n;
    }
    unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
    g->remap = h->fn.nvmlDeviceGetRemappedRows
                   ? avail(h->fn.nvmlDeviceGetRemappedRows(dev, &corr, &unc, &pending, &failed), g)
                   : GP_AVAIL_MISSING;
    g->remap_correctable = corr;
    g->remap_uncorrectable = unc;
    g->remap_pending = pending != 0;
    g->remap_failed = failed != 0;
    nvmlEnableState_t retire = NVML_FEATURE_DISABLED;
    g->retired = h->fn.nvmlDeviceGetRetiredPagesPendingStatus
                     ? avail(h->fn.nvmlDeviceGetRetiredPagesPendingStatus(dev, &retire), g)
                     : GP_AVAIL_MISSING;
    g->retired_pending = retire == NVML_FEATURE_ENABLED;
}

/* NVML's recovery action, a field value (drivers before R570 do not know the field). */
static void health_recovery(const gp_nvml *h, nvmlDevice_t dev, gp_check_gpu *g)
{
    if (!h->fn.nvmlDeviceGetFieldValues) {
        g->recovery = GP_AVAIL_MISSING;
        return;
    }
    nvmlFieldValue_t fv;
    memset(&fv, 0, sizeof(fv));
    fv.fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
    nvmlReturn_t rc = h->fn.nvmlDeviceGetFieldValues(dev, 1, &fv);
    if (rc == NVML_SUCCESS) {
        rc = fv.nvmlReturn;
    }
    /* An unknown field id is the driver's INVALID_ARGUMENT: a driver without it. */
    g->recovery = rc == NVML_ERROR_INVALID_ARGUMENT ? GP_AVAIL_MISSING : avail(rc, g);
    switch (fv.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
        g->recovery_action = (int)fv.value.ulVal;
        break;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        g->recovery_action = (int)fv.value.ullVal;
        break;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        g->recovery_action = (int)fv.value.sllVal;
        break;
    case NVML_VALUE_TYPE_SIGNED_INT:
        g->recovery_action = fv.value.siVal;
        break;
    default:
        g->recovery_action = (int)fv.value.uiVal;
        break;
    }
}

static void health_gpu(const gp_nvml *h, unsigned int i, gp_check_gpu *g)
{
    nvmlDevice_t dev = NULL;
    const char *what = "nvmlDeviceGetHandleByIndex_v2";
    nvmlReturn_t rc = h->fn.nvmlDeviceGetHandleByIndex_v2(i, &dev);
    if (rc == NVML_SUCCESS) {
        what = "nvmlDeviceGetUUID";
        rc = h->fn.nvmlDeviceGetUUID(dev, g->uuid, sizeof(g->uuid));
    }
    if (rc != NVML_SUCCESS) {
        const char *msg = h->fn.nvmlErrorString ? h->fn.nvmlErrorString(rc) : NULL;
        snprintf(g->error, sizeof(g->error), "%s: %s (NVML %d)", what, msg ? msg : "error",
                 (int)rc);
        g->uuid[0] = '\0';
        g->lost = rc == NVML_ERROR_GPU_IS_LOST;
        return;
    }
    g->visible = 1;
    health_links(h, dev, g);
    health_modes(h, dev, g);
    health_memory(h, dev, g);
    health_recovery(h, dev, g);
}

void gp_nvml_health(const gp_nvml *h, gp_check_readings *out)
{
    gp_check_readings_init(out);
    out->driver_loaded = 1;
    if (h->fn.nvmlSystemGetDriverVersion(out->driver_version, sizeof(out->driver_version)) !=
        NVML_SUCCESS) {
        out->driver_version[0] = '\0';
    }
    unsigned int n = 0;
    nvmlReturn_t rc = h->fn.nvmlDeviceGetCount_v2(&n);
    if (rc != NVML_SUCCESS) {
        const char *msg = h->fn.nvmlErrorString ? h->fn.nvmlErrorString(rc) : NULL;
        snprintf(out->count_error, sizeof(out->count_error), "nvmlDeviceGetCount_v2: %s (NVML %d)",
                 msg ? msg : "error", (int)rc);
        return;
    }
    out->count = (int)n;
    out->ngpus = n > GP_CHECK_MAX_GPUS ? GP_CHECK_MAX_GPUS : (int)n;
    for (int i = 0; i < out->ngpus; i++) {
        health_gpu(h, (unsigned int)i, &out->gpus[i]);
    }
}

/* ---- processes ---- */

/* usedGpuMemory when NVML cannot tell (e.g. without the privileges to see other users'). */
/* The first buffer, and how many times a buffer found too small is grown. */
#define PROCS_FIRST 16
#define PROCS_TRIES 4

/* Asks NVML for gpu's processes into *buf (the caller's first, else one malloc'd here: the
 * caller frees it when it is not first); *count how many. */
static nvmlReturn_t list_processes(const gp_nvml *h, int gpu, nvmlProcessInfo_t *first,
                                   nvmlProcessInfo_t **buf, unsigned int *count)
{
    unsigned int room = PROCS_FIRST;
    *buf = first;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    for (int t = 0; t <= PROCS_TRIES && rc == NVML_ERROR_INSUFFICIENT_SIZE; t++) {
        if (t > 0) {
            /* *count is what NVML needed; leave room for processes that start meanwhile. */
            unsigned int want = (*count > room ? *count : 2 * room) + 8;
            if (*buf != first) {
                free(*buf);
            }
            *buf = malloc(sizeof(**buf) * want);
            if (!*buf) {
                return NVML_ERROR_MEMORY;
            }
            room = want;
        }
        *count = room;
        rc = h->fn.nvmlDeviceGetComputeRunningProcesses_v3(h->dev[gpu], count, *buf);
    }
    return rc;
}

int gp_nvml_processes(const gp_nvml *h, int gpu, gp_nvml_process *out, int cap, int *n, gp_diag *d)
{
    *n = 0;
    if (gpu < 0 || gpu >= h->ndev) {
        return gp_diag_set(d, GP_EINVAL, "GPU %d: no such GPU (%d present)", gpu, h->ndev);
    }
    if (!h->fn.nvmlDeviceGetComputeRunningProcesses_v3) {
        return gp_diag_set(d, GP_ENOTSUP,
                           "%s lacks nvmlDeviceGetComputeRunningProcesses_v3 (a driver older "
                           "than R510?): per-process GPU memory is unknown",
                           h->path);
    }
    nvmlProcessInfo_t first[PROCS_FIRST], *buf = NULL;
    unsigned int count = 0;
    nvmlReturn_t rc = list_processes(h, gpu, first, &buf, &count);
    int result = 0;
    if (rc == NVML_ERROR_MEMORY && !buf) {
        result = gp_diag_set(d, GP_ENOMEM, "GPU %d: processes: out of memory", gpu);
    } else if (rc != NVML_SUCCESS) {
        result = fail(h, d, rc, gpu, "nvmlDeviceGetComputeRunningProcesses_v3");
    }
    for (unsigned int i = 0; result == 0 && i < count && (int)i < cap; i++) {
        const nvmlProcessInfo_t *p = &buf[i];
        out[i].pid = (int)p->pid;
        out[i].used_mib =
            p->usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ? -1 : (int64_t)(p->usedGpuMemory >> 20);
        out[i].gpu_instance = p->gpuInstanceId == ~0u ? -1 : (int)p->gpuInstanceId;
        (*n)++;
    }
    if (result == 0 && count > (unsigned int)(cap > 0 ? cap : 0)) {
        result = gp_diag_set(d, GP_ERANGE, "GPU %d: %u processes, more than the %d asked for", gpu,
                             count, cap);
    }
    if (buf && buf != first) {
        free(buf);
    }
    return result;
}

/* ---- events ---- */

int gp_nvml_events_open(const gp_nvml *h, gp_nvml_events **out, gp_diag *d)
{
    *out = NULL;
    gp_nvml_events *e = calloc(1, sizeof(*e));
    if (!e) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    e->h = h;
    nvmlReturn_t rc = h->fn.nvmlEventSetCreate(&e->set);
    if (rc != NVML_SUCCESS) {
        free(e);
        return fail(h, d, rc, -1, "nvmlEventSetCreate");
    }
    int registered = 0;
    nvmlReturn_t last = NVML_ERROR_NOT_SUPPORTED;
    for (int i = 0; i < h->ndev; i++) {
        rc = h->fn.nvmlDeviceRegisterEvents(h->dev[i], nvmlEventTypeXidCriticalError, e->set);
        if (rc == NVML_SUCCESS) {
            registered++;
        } else {
            last = rc;
        }
    }
    if (registered == 0 && h->ndev > 0) {
        h->fn.nvmlEventSetFree(e->set);
        free(e);
        return fail(h, d, last, -1, "nvmlDeviceRegisterEvents (no GPU takes XID events)");
    }
    *out = e;
    return 0;
}

int gp_nvml_events_wait(gp_nvml_events *e, unsigned int timeout_ms, gp_nvml_event *ev, gp_diag *d)
{
    const gp_nvml *h = e->h;
    nvmlEventData_t data;
    memset(&data, 0, sizeof(data));
    nvmlReturn_t rc = h->fn.nvmlEventSetWait_v2(e->set, &data, timeout_ms);
    if (rc == NVML_ERROR_TIMEOUT) {
        return 0;
    }
    if (rc != NVML_SUCCESS) {
        return fail(h, d, rc, -1, "nvmlEventSetWait_v2");
    }
    ev->gpu = -1;
    for (int i = 0; i < h->ndev; i++) {
        if (h->dev[i] == data.device) {
            ev->gpu = i;
        }
    }
    ev->xid = data.eventData > 999 ? 999 : (int)data.eventData;
    ev->gpu_instance = data.gpuInstanceId == ~0u ? -1 : (int)data.gpuInstanceId;
    return 1;
}

void gp_nvml_events_close(gp_nvml_events *e)
{
    if (e) {
        e->h->fn.nvmlEventSetFree(e->set);
        free(e);
    }
}

/* ---- registration document ---- */

static json_t *gpu_doc(const gp_nvml_gpu *g)
{
    json_t *links = json_array();
    for (int j = 0; links && j < GP_NVML_MAX_GPUS; j++) {
        if ((g->nvlink & (UINT32_C(1) << j)) && json_array_append_new(links, json_integer(j))) {
            json_decref(links);
            links = NULL;
        }
    }
    if (!links) {
        return NULL;
    }
    return json_pack("{s:i, s:s, s:s, s:I, s:i, s:o, s:b}", "index", g->index, "uuid", g->uuid,
                     "model", g->name, "memory_mib", (json_int_t)g->memory_mib, "numa", g->numa,
                     "nvlink", links, "mig", g->mig_mode == 1);
}

json_t *gp_nvml_node_doc(const gp_nvml_inv *inv, const char *name, const char *address,
                         int64_t cpu_milli, int64_t memory_mib, json_t *labels)
{
    json_t *gpus = json_array();
    for (int i = 0; gpus && i < inv->ngpus; i++) {
        json_t *g = gpu_doc(&inv->gpus[i]);
        if (!g || json_array_append_new(gpus, g)) {
            json_decref(gpus);
            gpus = NULL;
        }
    }
    if (!gpus) {
        return NULL;
    }
    json_t *lab = labels ? json_incref(labels) : json_object();
    return json_pack("{s:s, s:s, s:I, s:I, s:o, s:o}", "name", name, "address", address,
                     "cpu_milli", (json_int_t)cpu_milli, "memory_mib", (json_int_t)memory_mib,
                     "labels", lab, "gpus", gpus);
}
