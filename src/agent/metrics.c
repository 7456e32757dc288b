/*
 * The agent's metrics text (see metrics.h). The per-GPU families are one table: name, type, help
 * and where the value is in gp_nvml_readings (and in gp_nvml_mig_reading for those NVML also
 * answers for MIG devices), so adding a reading is one row.
 */
#include "agent/metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- snapshots ---- */

gp_metrics_snapshot *gp_metrics_snapshot_new(int cap_slices)
{
    gp_metrics_snapshot *s = calloc(1, sizeof(*s));
    if (s && cap_slices > 0 && !(s->slices = calloc((size_t)cap_slices, sizeof(*s->slices)))) {
        free(s);
        return NULL;
    }
    if (s) {
        s->cap_slices = cap_slices > 0 ? cap_slices : 0;
    }
    return s;
}

void gp_metrics_snapshot_free(gp_metrics_snapshot *s)
{
    if (s) {
        free(s->slices);
        free(s);
    }
}

const char *gp_metrics_state_name(gp_local_state st)
{
    static const char *const names[GP_METRICS_NSTATES] = {"starting", "running", "exited", "killed",
                                                          "lost"};
    return (unsigned int)st < GP_METRICS_NSTATES ? names[st] : "unknown";
}

/* ---- labels ---- */

/* Up to this many label pairs on one sample. */
#define MAX_PAIRS 16

typedef struct labels {
    const char *kv[2 * MAX_PAIRS + 1]; /* pairs, then NULL */
    int n;                             /* entries used in kv */
    char gpu[16], device[24], job_id[24], gi[16], replica[16], milli[16];
} labels;

/* Adds key=value; an empty or NULL value is left out (unknown). */
static void add(labels *l, const char *key, const char *value)
{
    if (value && value[0] && l->n + 2 < 2 * MAX_PAIRS + 1) {
        l->kv[l->n++] = key;
        l->kv[l->n++] = value;
    }
    l->kv[l->n] = NULL;
}

static void add_job(labels *l, const gp_metrics_job *j)
{
    add(l, "gpupool_job", j->name);
    snprintf(l->job_id, sizeof(l->job_id), "%" PRId64, j->id);
    add(l, "gpupool_job_id", j->id > 0 ? l->job_id : NULL);
    add(l, "tenant", j->tenant);
    add(l, "queue", j->queue);
}

/* The labels of GPU g's own samples, or of its MIG device m (-1: the GPU); with jobs, those of
 * the job holding it. */
static void gpu_labels(const gp_metrics_snapshot *s, const gp_metrics_gpu *g, int m, bool jobs,
                       labels *l)
{
    l->n = 0;
    snprintf(l->gpu, sizeof(l->gpu), "%d", g->index);
    snprintf(l->device, sizeof(l->device), "nvidia%d", g->index);
    add(l, "gpu", l->gpu);
    add(l, "UUID", g->uuid);
    add(l, "pci_bus_id", g->pci_bus_id);
    add(l, "device", l->device);
    add(l, "modelName", g->model);
    add(l, "Hostname", s->node);
    add(l, "hostname", s->node);
    if (m >= 0) {
        add(l, "GPU_I_PROFILE", g->mig[m].profile);
        snprintf(l->gi, sizeof(l->gi), "%d", g->mig[m].gpu_instance);
        add(l, "GPU_I_ID", g->mig[m].gpu_instance >= 0 ? l->gi : NULL);
        if (jobs && g->mig_held[m]) {
            add_job(l, &g->mig_job[m]);
        }
    } else if (jobs && g->held) {
        add_job(l, &g->job);
    }
}

/* ---- per-GPU families (dcgm-exporter's names) ---- */

typedef enum vtype { V_NONE = 0, V_INT, V_I64, V_DBL, V_XID } vtype;

typedef struct dev_family {
    const char *name, *type, *help;
    vtype t;        /* of the reading in gp_nvml_readings */
    size_t off;     /* its offset */
    vtype mig_t;    /* V_NONE: not read for MIG devices */
    size_t mig_off; /* offset in gp_nvml_mig_reading */
} dev_family;

#define R(f) offsetof(gp_nvml_readings, f)
#define M(f) offsetof(gp_nvml_mig_reading, f)

static const dev_family dev_families[] = {
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", V_INT, R(util_gpu), V_INT,
     M(util_gpu)},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", V_INT, R(util_memory),
     V_NONE, 0},
    {"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", V_INT, R(util_encoder), V_NONE,
     0},
    {"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", V_INT, R(util_decoder), V_NONE,
     0},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", V_I64, R(memory_free_mib),
     V_I64, M(memory_free_mib)},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", V_I64, R(memory_used_mib),
     V_I64, M(memory_used_mib)},
    {"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", V_I64,
     R(memory_reserved_mib), V_NONE, 0},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", V_INT, R(temperature_c), V_NONE,
     0},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", V_INT,
     R(memory_temperature_c), V_NONE, 0},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", V_DBL, R(power_w), V_NONE, 0},
    {"DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Power management limit (in W).", V_DBL,
     R(power_limit_w), V_NONE, 0},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since the driver loaded (in mJ).", V_I64, R(energy_mj), V_NONE, 0},
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", V_INT, R(sm_clock_mhz),
     V_NONE, 0},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", V_INT,
     R(memory_clock_mhz), V_NONE, 0},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge",
     "Value of the last XID error encountered since the agent started (0: none).", V_XID, 0, V_NONE,
     0},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", V_I64,
     R(pcie_replays), V_NONE, 0},
    {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink flow-control CRC errors (all active links).", V_I64,
     R(nvlink_crc_flit), V_NONE, 0},
    {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink data CRC errors (all active links).", V_I64, R(nvlink_crc_data),
     V_NONE, 0},
    {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink retries (all active links).", V_I64, R(nvlink_replay), V_NONE, 0},
    {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink recovery errors (all active links).", V_I64, R(nvlink_recovery),
     V_NONE, 0},
    {"DCGM_FI_DEV_THERMAL_VIOLATION", "counter",
     "Throttling duration due to thermal constraints (in us).", V_I64, R(thermal_violation_us),
     V_NONE, 0},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge",
     "Current clock throttle reasons (bitmask of NVML's clocks event reasons).", V_I64,
     R(clock_reasons), V_NONE, 0},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for correctable errors.", V_I64, R(remapped_correctable), V_NONE, 0},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for uncorrectable errors.", V_I64, R(remapped_uncorrectable), V_NONE,
     0},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed.", V_I64,
     R(remap_failure), V_NONE, 0},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.",
     V_I64, R(ecc_corrected), V_NONE, 0},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.",
     V_I64, R(ecc_uncorrected), V_NONE, 0},
};

#define NDEV_FAMILIES (sizeof(dev_families) / sizeof(dev_families[0]))

/* The value at off in rec as type t; < 0 when unknown. */
static double value_at(const void *rec, vtype t, size_t off)
{
    const char *p = (const char *)rec + off;
    int i;
    int64_t l;
    double v;
    switch (t) {
    case V_INT:
        memcpy(&i, p, sizeof(i));
        return i;
    case V_I64:
        memcpy(&l, p, sizeof(l));
        return (double)l;
    case V_DBL:
        memcpy(&v, p, sizeof(v));
        return v;
    default:
        return -1;
    }
}

static double gpu_value(const gp_metrics_gpu *g, const dev_family *f)
{
    if (f->t == V_XID) {
        return g->last_xid;
    }
    return g->sampled ? value_at(&g->r, f->t, f->off) : -1;
}

/* One family: its header and every GPU's (and MIG device's) sample; nothing when none has one. */
static void write_dev_family(const gp_metrics_snapshot *s, const dev_family *f, bool jobs,
                             gp_prom *p)
{
    bool any = false;
    labels l;
    for (int i = 0; i < s->ngpus; i++) {
        const gp_metrics_gpu *g = &s->gpus[i];
        double v = gpu_value(g, f);
        if (v >= 0) {
            if (!any) {
                gp_prom_family(p, f->name, f->type, f->help);
                any = true;
            }
            gpu_labels(s, g, -1, jobs, &l);
            gp_prom_sample(p, f->name, l.kv, v);
        }
        for (int m = 0; f->mig_t != V_NONE && m < g->nmig; m++) {
            v = value_at(&g->mig[m], f->mig_t, f->mig_off);
            if (v < 0) {
                continue;
            }
            if (!any) {
                gp_prom_family(p, f->name, f->type, f->help);
                any = true;
            }
            gpu_labels(s, g, m, jobs, &l);
            gp_prom_sample(p, f->name, l.kv, v);
        }
    }
}

/* ---- slices ---- */

static const char *const kind_names[] = {"gpu", "fraction", "mig"};

static void slice_labels(const gp_metrics_snapshot *s, const gp_metrics_slice *sl, labels *l)
{
    const gp_metrics_gpu *g = sl->gpu >= 0 && sl->gpu < s->ngpus ? &s->gpus[sl->gpu] : NULL;
    l->n = 0;
    snprintf(l->gpu, sizeof(l->gpu), "%d", sl->gpu);
    add(l, "gpu", l->gpu);
    add(l, "UUID", g ? g->uuid : NULL);
    add(l, "Hostname", s->node);
    add(l, "gpupool_job", sl->job.name);
    snprintf(l->job_id, sizeof(l->job_id), "%" PRId64, sl->job.id);
    add(l, "gpupool_job_id", sl->job.id > 0 ? l->job_id : NULL);
    snprintf(l->replica, sizeof(l->replica), "%d", sl->replica);
    add(l, "replica", l->replica);
    add(l, "tenant", sl->job.tenant);
    add(l, "queue", sl->job.queue);
    add(l, "kind", kind_names[(unsigned int)sl->kind < 3 ? sl->kind : 0]);
    if (sl->kind == GP_METRICS_FRACTION) {
        snprintf(l->milli, sizeof(l->milli), "%d", sl->milli);
        add(l, "milli", l->milli);
    } else if (sl->kind == GP_METRICS_MIG) {
        add(l, "GPU_I_PROFILE", sl->profile);
        snprintf(l->gi, sizeof(l->gi), "%d", sl->gpu_instance);
        add(l, "GPU_I_ID", sl->gpu_instance >= 0 ? l->gi : NULL);
    }
}

typedef enum slice_value { SV_USED = 0, SV_LIMIT, SV_UTIL } slice_value;

static double slice_value_of(const gp_metrics_slice *sl, slice_value which)
{
    switch (which) {
    case SV_USED:
        return (double)sl->used_bytes;
    case SV_LIMIT:
        return (double)sl->limit_bytes;
    default:
        return sl->util_ratio > 1 ? 1 : sl->util_ratio;
    }
}

static void write_slice_family(const gp_metrics_snapshot *s, const char *name, const char *help,
                               slice_value which, gp_prom *p)
{
    bool any = false;
    labels l;
    for (int i = 0; i < s->nslices; i++) {
        double v = slice_value_of(&s->slices[i], which);
        if (v < 0) {
            continue;
        }
        if (!any) {
            gp_prom_family(p, name, "gauge", help);
            any = true;
        }
        slice_labels(s, &s->slices[i], &l);
        gp_prom_sample(p, name, l.kv, v);
    }
}

/* ---- the agent ---- */

static void write_agent(const gp_metrics_snapshot *s, gp_prom *p)
{
    const char *info[] = {"version",         s->version,     "driver_version",
                          s->driver_version, "cuda_version", s->cuda_version,
                          "Hostname",        s->node,        NULL};
    for (int i = 1; info[i - 1]; i += 2) {
        info[i] = info[i][0] ? info[i] : NULL; /* unknown: left out */
    }
    gp_prom_family(p, "gpupool_agent_info", "gauge",
                   "The agent: its version, the driver's and the CUDA version it supports.");
    gp_prom_sample(p, "gpupool_agent_info", info, 1);
    gp_prom_family(p, "gpupool_agent_heartbeat_failures_total", "counter",
                   "Rounds whose heartbeat did not reach the controller.");
    gp_prom_sample(p, "gpupool_agent_heartbeat_failures_total", NULL,
                   (double)s->heartbeat_failures);
    gp_prom_family(p, "gpupool_agent_replicas", "gauge",
                   "Replicas on this node by the state their directories record.");
    for (int st = 0; st < GP_METRICS_NSTATES; st++) {
        const char *l[] = {"state", gp_metrics_state_name((gp_local_state)st), NULL};
        gp_prom_sample(p, "gpupool_agent_replicas", l, s->replicas[st]);
    }
}

void gp_metrics_write(const gp_metrics_snapshot *s, bool jobs, gp_prom *p)
{
    for (size_t f = 0; f < NDEV_FAMILIES; f++) {
        write_dev_family(s, &dev_families[f], jobs, p);
    }
    if (!jobs) {
        write_agent(s, p);
        return;
    }
    write_slice_family(s, "gpupool_slice_memory_used_bytes",
                       "GPU memory the replica's processes use on the GPU or MIG device (bytes).",
                       SV_USED, p);
    write_slice_family(s, "gpupool_slice_memory_limit_bytes",
                       "GPU memory the replica may use there (bytes): its share's, its MIG "
                       "device's or the whole GPU's.",
                       SV_LIMIT, p);
    write_slice_family(s, "gpupool_slice_utilization_ratio",
                       "Utilisation of the GPU by the replica's own processes (a fraction), or of "
                       "its MIG device or whole GPU (0..1).",
                       SV_UTIL, p);
    write_agent(s, p);
}

/* ---- the hand-over ---- */

struct gp_metrics {
    pthread_mutex_t lock;
    gp_metrics_snapshot *snap; /* NULL before the first round */
};

gp_metrics *gp_metrics_new(void)
{
    gp_metrics *m = calloc(1, sizeof(*m));
    if (m) {
        pthread_mutex_init(&m->lock, NULL);
    }
    return m;
}

void gp_metrics_free(gp_metrics *m)
{
    if (m) {
        gp_metrics_snapshot_free(m->snap);
        pthread_mutex_destroy(&m->lock);
        free(m);
    }
}

void gp_metrics_publish(gp_metrics *m, gp_metrics_snapshot *s)
{
    pthread_mutex_lock(&m->lock);
    gp_metrics_snapshot *old = m->snap;
    m->snap = s;
    pthread_mutex_unlock(&m->lock);
    gp_metrics_snapshot_free(old);
}

void gp_metrics_render(gp_metrics *m, bool jobs, gp_prom *p)
{
    pthread_mutex_lock(&m->lock);
    if (m->snap) {
        gp_metrics_write(m->snap, jobs, p);
    }
    pthread_mutex_unlock(&m->lock);
}
