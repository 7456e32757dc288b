/*
 * The controller's history of jobs and tenants (the series themselves: gpupool/history.h).
 *
 * What is kept, per job (history.max_jobs jobs):
 *   - the job as a whole: GPU utilisation (percent, the mean of its replicas'), GPU memory used
 *     (MiB, their sum) and GPU memory utilisation (percent: the memory used over the memory its
 *     replicas may use — a fraction's gpu_mem_mib, a MIG slice's memory, else the GPU's total);
 *   - each of its first CTL_HISTORY_REPLICAS replicas (a job of more than one replica) the same
 *     three series; a job of one replica has its job series only, which are the replica's.
 * Samples come from the agents' heartbeats (each running replica's "util" and "gpu_mem_mib",
 * net/wire.h): a replica's sample is recorded as it comes, and with it a sample of the job made
 * of the latest values of each of its replicas heard from within nodes.heartbeat_timeout.
 *
 * Per tenant (history.max_tenants): the GPUs allocated to its jobs (whole GPUs count 1, a
 * fraction its share, a MIG slice its compute slices over 7) and the GPU memory allocated (MiB),
 * sampled every 10 s by the scheduling loop from the placements held.
 *
 * Memory: each series has a fixed size (GP_HIST_SERIES_BYTES), made on its first sample; a job
 * has at most CTL_HISTORY_JOB_SERIES, a tenant CTL_HISTORY_TENANT_SERIES. When max_jobs jobs are
 * kept, a new one evicts the job that finished first, else the one kept longest. History lives
 * in memory only: a restart or a failover starts it empty. history.max_jobs 0 keeps none.
 *
 * Threads: every call takes the history's own lock for its duration (never the state lock), so
 * the committer records and request handlers read at the same time. Recording runs under the
 * state lock, inside the heartbeat's transaction when it has one (not part of it: a heartbeat
 * rolled back keeps its samples, readings, not state) or on the heartbeat's own thread when it
 * changes nothing the store keeps (api_nodes.c).
 */
#ifndef GP_CTL_HISTORY_H
#define GP_CTL_HISTORY_H

#include "ctl/context.h"
#include "gpupool/history.h"
#include "net/wire.h"

#include <stdbool.h>
#include <stdint.h>

#define CTL_HISTORY_REPLICAS      4 /* replicas with series of their own */
#define CTL_HISTORY_JOB_SERIES    (CTL_HIST_NJOB * (1 + CTL_HISTORY_REPLICAS))
#define CTL_HISTORY_TENANT_SERIES CTL_HIST_NTENANT
/* The most a job's history takes (its series; the entry itself is a few dozen bytes). */
#define CTL_HISTORY_JOB_BYTES    (CTL_HISTORY_JOB_SERIES * GP_HIST_SERIES_BYTES)
#define CTL_HISTORY_TENANT_BYTES (CTL_HISTORY_TENANT_SERIES * GP_HIST_SERIES_BYTES)
/* How often the tenants' allocation is sampled: the finest tier's step. */
#define CTL_HISTORY_TICK_MS 10000

/* A job's (or a replica's) series. */
typedef enum ctl_hist_metric {
    CTL_HIST_GPU_UTIL = 0, /* percent */
    CTL_HIST_GPU_MEM_UTIL, /* percent */
    CTL_HIST_GPU_MEM_MIB,  /* MiB */
    CTL_HIST_NJOB,
} ctl_hist_metric;

/* A tenant's series. */
typedef enum ctl_hist_tenant_metric {
    CTL_HIST_GPUS_ALLOCATED = 0,    /* GPUs */
    CTL_HIST_GPU_MEM_ALLOCATED_MIB, /* MiB */
    CTL_HIST_NTENANT,
} ctl_hist_tenant_metric;

/* "gpu_util", "gpu_mem_util", "gpu_mem_mib"; and the unit: "percent", "MiB". */
const char *ctl_hist_metric_name(ctl_hist_metric m);
const char *ctl_hist_metric_unit(ctl_hist_metric m);
/* GP_EINVAL for an unknown name. */
int ctl_hist_metric_parse(const char *s, ctl_hist_metric *out);
/* "gpus_allocated", "gpu_mem_allocated_mib"; units "GPUs", "MiB". */
const char *ctl_hist_tenant_metric_name(ctl_hist_tenant_metric m);
const char *ctl_hist_tenant_metric_unit(ctl_hist_tenant_metric m);

typedef struct ctl_history ctl_history;

/* From cfg's history.max_jobs and history.max_tenants. NULL when out of memory. */
ctl_history *ctl_history_new(const gp_ctl_config *cfg);
/* Accepts NULL. */
void ctl_history_free(ctl_history *h);

/* ---- recording (the committer) ---- */

/* The report w of replica r of job j (running, on node n, placed) at now: its sample and the
 * job's. Remembers w's values in j->replicas[r] for the job's next samples. Out of memory is
 * not an error: the sample is lost. */
void ctl_history_replica(gpupoold *g, ctl_job *j, int r, const ctl_node *n,
                         const gp_wire_replica *w, int64_t now);
/* The scheduling loop's tick: at most every CTL_HISTORY_TICK_MS, samples every tenant's
 * allocation and marks finished the jobs that ended or are gone (they are evicted first). Under
 * the state lock (the committer). */
void ctl_history_tick(gpupoold *g, int64_t now);

/* ---- reading (any thread) ---- */

/* The mean of metric m over [now_ms - window_s s, now_ms] across the jobs ids[0..n): their job
 * series (replica < 0), or replica `replica` of each (a job of one replica: its job series). 0
 * with *value; GP_ENOENT when none of them has a sample in the window; GP_EINVAL for a bad
 * metric or window. For the autoscaler: a service's replicas as jobs, or one job's replicas. */
int ctl_history_avg(gpupoold *g, const int64_t *ids, int n, int replica, ctl_hist_metric m,
                    int64_t window_s, int64_t now_ms, double *value);
/* ctl_history_avg of one job's series. */
int ctl_history_job_avg(gpupoold *g, int64_t job_id, ctl_hist_metric m, int64_t window_s,
                        int64_t now_ms, double *value);
/* Adds the points of p of metric m of jobs ids[0..n) (replica as for ctl_history_avg) to
 * out[0 .. p->npoints) (out accumulates). */
void ctl_history_fill(gpupoold *g, const int64_t *ids, int n, int replica, ctl_hist_metric m,
                      const gp_hist_plan *p, gp_hist_point *out);
/* Likewise for a tenant's series. */
void ctl_history_tenant_fill(gpupoold *g, int64_t tenant_id, ctl_hist_tenant_metric m,
                             const gp_hist_plan *p, gp_hist_point *out);
/* Which of job_id's replicas below nreplicas have series of their own: a bit per replica. */
unsigned ctl_history_replicas(gpupoold *g, int64_t job_id, int nreplicas);

#endif
