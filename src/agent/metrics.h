/*
 * The agent's Prometheus metrics (GET /metrics on its HTTP endpoint, logserve.h): what NVML
 * reads of every GPU under dcgm-exporter's names and labels, so dashboards and alert rules
 * written for dcgm-exporter work unchanged; gpupool's own per-replica slice figures (GPU memory,
 * its limit, utilisation) for fractional, MIG and whole-GPU replicas; and the agent itself. The
 * names, labels and units are listed in docs/metrics.md ("Agent").
 *
 * A gp_metrics_snapshot is everything one scrape shows, filled by the agent's round from the
 * readings the round takes anyway (one NVML sample per GPU per round, not one per scrape: a
 * scrape never waits on NVML, and scraping often costs the GPUs nothing). gp_metrics_write turns
 * a snapshot into the text exposition format: pure, so tests build snapshots by hand.
 *
 * gp_metrics is the hand-over between the round and the HTTP threads: the round publishes a new
 * snapshot (gp_metrics_publish takes it), scrapes render the latest under the same mutex.
 *
 * Rules of the text:
 *   - a reading that is unknown (-1 in gp_nvml_readings, or the GPU not sampled this round) has
 *     no sample: never a made-up 0;
 *   - per-GPU samples carry gpu, UUID, pci_bus_id, device ("nvidia<index>"), modelName,
 *     Hostname and hostname, in that order, then gpupool_job, gpupool_job_id, tenant and queue
 *     when one replica holds the whole GPU (a GPU shared by fractions carries none: the slice
 *     samples do); a MIG device's samples add GPU_I_PROFILE and GPU_I_ID (and the job labels of
 *     the replica on it);
 *   - a label whose value is unknown ("") is left out.
 */
#ifndef GP_AGENT_METRICS_H
#define GP_AGENT_METRICS_H

#include "agent/converge.h"
#include "agent/nvml.h"
#include "net/prom.h"

#include <stdbool.h>
#include <stdint.h>

#define GP_METRICS_LABEL_MAX 128

/* The job a replica belongs to, as its labels carry it. */
typedef struct gp_metrics_job {
    char name[GP_METRICS_LABEL_MAX]; /* gpupool_job; "" unknown */
    int64_t id;                      /* gpupool_job_id */
    char tenant[GP_METRICS_LABEL_MAX];
    char queue[GP_METRICS_LABEL_MAX];
} gp_metrics_job;

typedef struct gp_metrics_gpu {
    int index;
    char uuid[96];
    char pci_bus_id[32];
    char model[96]; /* as NVML names it: modelName */
    bool sampled;   /* readings were taken this round; false: identity only (the GPU is lost) */
    gp_nvml_readings r;
    int last_xid; /* the last XID since the agent started, 0 none; -1: no XID events */
    bool held;    /* one replica holds the whole GPU; job says whose */
    gp_metrics_job job;
    int nmig; /* its MIG devices this round */
    gp_nvml_mig_reading mig[GP_NVML_MAX_MIG];
    bool mig_held[GP_NVML_MAX_MIG]; /* a replica runs on that MIG device; mig_job says whose */
    gp_metrics_job mig_job[GP_NVML_MAX_MIG];
} gp_metrics_gpu;

typedef enum gp_metrics_kind {
    GP_METRICS_WHOLE = 0, /* kind="gpu" */
    GP_METRICS_FRACTION,  /* kind="fraction" */
    GP_METRICS_MIG,       /* kind="mig" */
} gp_metrics_kind;

/* What one running replica uses of one GPU (or share, or MIG device). */
typedef struct gp_metrics_slice {
    int gpu; /* index into the snapshot's GPUs */
    gp_metrics_job job;
    int replica;
    gp_metrics_kind kind;
    int milli;           /* fraction: thousandths of the GPU */
    char profile[32];    /* mig: "1g.10gb"; "" unknown */
    int gpu_instance;    /* mig: GPU instance id; -1 unknown */
    int64_t used_bytes;  /* GPU memory its processes use; -1 unknown */
    int64_t limit_bytes; /* what it may use: the share's memory, the MIG device's or the GPU's;
                            -1 unknown */
    double util_ratio;   /* 0..1, its own processes' (a fraction) or the device's; < 0 unknown */
} gp_metrics_slice;

/* Local replica states counted by gpupool_agent_replicas{state}, by gp_local_state. */
#define GP_METRICS_NSTATES (GP_LOCAL_LOST + 1)

typedef struct gp_metrics_snapshot {
    char node[64];           /* Hostname, hostname */
    char version[32];        /* the agent's */
    char driver_version[80]; /* "" unknown */
    char cuda_version[16];
    int ngpus;
    gp_metrics_gpu gpus[GP_NVML_MAX_GPUS];
    int nslices, cap_slices;
    gp_metrics_slice *slices;   /* owned */
    int64_t heartbeat_failures; /* rounds whose heartbeat did not reach the controller */
    int replicas[GP_METRICS_NSTATES];
} gp_metrics_snapshot;

/* A zeroed snapshot with room for cap_slices slices (>= 0); NULL when out of memory. */
gp_metrics_snapshot *gp_metrics_snapshot_new(int cap_slices);
/* Accepts NULL. */
void gp_metrics_snapshot_free(gp_metrics_snapshot *s);
/* The name gpupool_agent_replicas gives a state ("starting", "running", "exited", "killed",
 * "lost"). */
const char *gp_metrics_state_name(gp_local_state st);

/* Writes s in the text exposition format (every family with HELP and TYPE, each family's samples
 * together). Running out of memory shows in p (gp_prom_text answers NULL). Without jobs (an
 * anonymous scraper of an open /metrics) nothing names a job, a tenant or a queue: the GPUs'
 * samples carry no job labels and the per-replica slice families are left out. */
void gp_metrics_write(const gp_metrics_snapshot *s, bool jobs, gp_prom *p);

typedef struct gp_metrics gp_metrics;

/* A hand-over with no snapshot yet (a scrape then gets an empty page). NULL when out of
 * memory. */
gp_metrics *gp_metrics_new(void);
/* Accepts NULL; no scrape may be running. */
void gp_metrics_free(gp_metrics *m);
/* Replaces the published snapshot with s (taken: freed by m later). Thread-safe. */
void gp_metrics_publish(gp_metrics *m, gp_metrics_snapshot *s);
/* Writes the latest snapshot into p, holding the lock meanwhile. Thread-safe. */
void gp_metrics_render(gp_metrics *m, bool jobs, gp_prom *p);

#endif
