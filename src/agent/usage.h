/*
 * What each running replica uses of its GPUs, measured once per agent round for two readers: the
 * heartbeat's per-replica "util" and the slice metrics (metrics.h); and, memory alone, every
 * interval for the GPU memory watch (memwatch_run.h).
 *
 *   GPU memory (use.gpus[].used_mib of gp_replica_watch, MiB): on a whole GPU or a share of one,
 *     what NVML's process list says the replica's processes hold there (a process belongs to
 *     the replica its cgroup names, else the one gp_replicas_owner names); on a MIG slice, what
 *     the MIG device's memory info says is in use. -1 when NVML cannot tell (the list failed, or
 *     no MIG device has the slice's UUID).
 *   utilisation (gpus[].util and slice_util, percent, -1 unknown):
 *     - a whole GPU: the GPU's, as sampled this round (both);
 *     - a fraction: the sum of its processes' SM utilisation since the last round
 *       (nvmlDeviceGetProcessUtilization; a process NVML has no sample of did nothing), at most
 *       100; when NVML gives no per-process figures, util falls back to the GPU's (the controller
 *       then sees the GPU's activity, as idle_ms does) and slice_util stays -1 (a metric of the
 *       slice must not show its neighbours' work);
 *     - a MIG slice: the MIG device's utilisation when NVML gives one (drivers today do not).
 *
 * Ownership: a gp_usage holds what carries over between rounds (the timestamp of the last
 * per-process sample of each GPU, whether a failed process query was logged); inputs are
 * borrowed for the call. Not thread-safe: the agent's round only.
 */
#ifndef GP_AGENT_USAGE_H
#define GP_AGENT_USAGE_H

#include "agent/metrics.h"
#include "agent/nvml.h"
#include "agent/replicas.h"

typedef struct gp_usage gp_usage;

/* NULL when out of memory. */
gp_usage *gp_usage_new(void);
/* Accepts NULL. */
void gp_usage_free(gp_usage *u);

/*
 * Measures every replica of reps[0..n) (filled by gp_replicas_watch_info: used_mib 0, util -1)
 * in place. snap holds this round's readings: each GPU's utilisation (gpus[g].r.util_gpu when
 * sampled) and MIG devices; GPU indexes past snap->ngpus are left unmeasured. Failures are
 * logged, never returned: what could not be measured stays unknown.
 */
void gp_usage_measure(gp_usage *u, const gp_nvml *h, const gp_metrics_snapshot *snap,
                      gp_replica_watch *reps, int n);

/*
 * For the GPU memory watch alone: the GPU memory (use.gpus[].used_mib) of every replica of
 * reps[0..n) on each GPU below ngpus where one of them has a limit; nothing else. A process is
 * the replica's whose cgroup holds it (cgroup.h: the job's and its containers' processes, even
 * those that left its session and its supervisor's tree), else the one whose session or
 * ancestry it is in; each process of no replica on such a GPU is logged once at WARN
 * ("memwatch gpu=G pid=P used_mib=M: a GPU process of no replica (why)").
 */
void gp_usage_measure_memory(gp_usage *u, const gp_nvml *h, int ngpus, gp_replica_watch *reps,
                             int n);

#endif
