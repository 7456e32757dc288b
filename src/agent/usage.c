/*
 * Per-replica GPU memory and utilisation (see usage.h).
 */
#include "agent/usage.h"

#include "agent/cgroup.h"
#include "base/log.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* At most this many processes per GPU are looked at each round (a GPU runs far fewer). */
#define USAGE_PROCS 256

/* GPU processes of no replica reported already (pid and GPU), the last this many. */
#define USAGE_REPORTED 128

struct gp_usage {
    bool procs_warned;                    /* a failed process list was logged at WARN already */
    bool util_warned;                     /* likewise a failed per-process utilisation */
    uint64_t util_seen[GP_NVML_MAX_GPUS]; /* newest per-process sample taken, per GPU (µs) */
    uint64_t reported[USAGE_REPORTED];    /* (gpu << 32) | pid of strays logged; a ring */
    int nreported;
};

gp_usage *gp_usage_new(void)
{
    return calloc(1, sizeof(gp_usage));
}

void gp_usage_free(gp_usage *u)
{
    free(u);
}

/* The entry of reps[o] for GPU gpu; -1 when it has none. */
static int entry_of(const gp_replica_watch *w, int gpu)
{
    for (int g = 0; g < w->use.ngpus; g++) {
        if (w->use.gpus[g].index == gpu) {
            return g;
        }
    }
    return -1;
}

/* The replica (index in reps) process pid belongs to: by its cgroup first (replica or container
 * processes, whatever their session and parents; cgroup.h), else by session and ancestry
 * (gp_replicas_owner: a replica that runs without a cgroup). -1 when none; why in why. */
static int owner(const gp_replica_watch *reps, int n, pid_t pid, char *why, size_t cap)
{
    gp_cgroup_replica cr;
    char path[256];
    int rc = gp_cgroup_owner_of(pid, &cr, path, sizeof(path));
    if (rc == 1) {
        for (int i = 0; i < n; i++) {
            const gp_replica_key *k = &reps[i].use.key;
            if (k->job == cr.job && k->replica == cr.replica && k->epoch == cr.epoch) {
                return i;
            }
        }
        snprintf(why, cap, "cgroup %s of no running replica", path);
        return -1;
    }
    int o = gp_replicas_owner(reps, n, pid);
    if (o < 0) {
        snprintf(why, cap, "%s", rc == GP_ENOENT ? "gone" : "in no replica's cgroup or session");
    }
    return o;
}

/* Logs a GPU process of no replica, once per process and GPU (while it is among the last
 * USAGE_REPORTED). */
static void report_stray(gp_usage *u, int gpu, const gp_nvml_process *p, const char *why)
{
    uint64_t id = (uint64_t)gpu << 32 | (uint32_t)p->pid;
    int kept = u->nreported < USAGE_REPORTED ? u->nreported : USAGE_REPORTED;
    for (int i = 0; i < kept; i++) {
        if (u->reported[i] == id) {
            return;
        }
    }
    u->reported[u->nreported++ % USAGE_REPORTED] = id;
    if (u->nreported >= 2 * USAGE_REPORTED) {
        u->nreported -= USAGE_REPORTED;
    }
    GP_LOG(GP_LOG_WARN, "agent",
           "memwatch gpu=%d pid=%u used_mib=%lld: a GPU process of no replica (%s)", gpu, p->pid,
           (long long)p->used_mib, why);
}

/* Adds what each process on GPU gpu uses to the replica it belongs to (its entry for that GPU,
 * unless a MIG slice: those are measured on the MIG device); when NVML cannot list them, those
 * entries read -1 (no reading). Logs the count of processes of no replica, and of replicas'
 * processes on a GPU not theirs, at debug level; with report, each process of no replica once
 * at WARN. */
static void measure_memory(gp_usage *u, const gp_nvml *h, int gpu, gp_replica_watch *reps, int n,
                           bool report)
{
    gp_nvml_process procs[USAGE_PROCS];
    int np = 0, stray = 0, foreign = 0;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_nvml_processes(h, gpu, procs, USAGE_PROCS, &np, &d);
    if (rc < 0 && rc != GP_ERANGE) {
        GP_LOG(u->procs_warned ? GP_LOG_DEBUG : GP_LOG_WARN, "agent",
               "memwatch: no GPU memory per process: %s", d.msg);
        u->procs_warned = true;
        for (int i = 0; i < n; i++) {
            int g = entry_of(&reps[i], gpu);
            if (g >= 0 && reps[i].gpus[g].mig_start < 0) {
                reps[i].use.gpus[g].used_mib = -1;
            }
        }
        return;
    }
    for (int p = 0; p < np; p++) {
        char why[320] = "";
        int o = owner(reps, n, (pid_t)procs[p].pid, why, sizeof(why));
        int g = o >= 0 ? entry_of(&reps[o], gpu) : -1;
        stray += o < 0;
        if (o < 0 && report && strcmp(why, "gone") != 0) {
            report_stray(u, gpu, &procs[p], why);
        }
        foreign += o >= 0 && g < 0;
        if (g >= 0 && reps[o].gpus[g].mig_start < 0 && procs[p].used_mib > 0) {
            reps[o].use.gpus[g].used_mib += procs[p].used_mib;
        }
    }
    GP_LOG(GP_LOG_DEBUG, "agent", "memwatch gpu=%d processes=%d of_no_replica=%d on_foreign_gpu=%d",
           gpu, np, stray, foreign);
}

/* The fractions on GPU gpu get the sum of their processes' utilisation (slice_util); left -1
 * when NVML gives no per-process figures. */
static void measure_util(gp_usage *u, const gp_nvml *h, int gpu, gp_replica_watch *reps, int n)
{
    gp_nvml_proc_util procs[USAGE_PROCS];
    int np = 0;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_nvml_process_util(h, gpu, &u->util_seen[gpu], procs, USAGE_PROCS, &np, &d);
    if (rc < 0) {
        GP_LOG(u->util_warned || rc == GP_ENOTSUP ? GP_LOG_DEBUG : GP_LOG_WARN, "agent",
               "usage: no GPU utilisation per process (the GPU's is used instead): %s", d.msg);
        u->util_warned = true;
        return;
    }
    for (int i = 0; i < n; i++) {
        int g = entry_of(&reps[i], gpu);
        if (g >= 0 && reps[i].gpus[g].mig_start < 0 && reps[i].gpus[g].milli < 1000) {
            reps[i].gpus[g].slice_util = 0;
        }
    }
    for (int p = 0; p < np; p++) {
        int o = gp_replicas_owner(reps, n, (pid_t)procs[p].pid);
        int g = o >= 0 ? entry_of(&reps[o], gpu) : -1;
        if (g >= 0 && reps[o].gpus[g].slice_util >= 0) {
            int sum = reps[o].gpus[g].slice_util + procs[p].sm;
            reps[o].gpus[g].slice_util = sum > 100 ? 100 : sum;
        }
    }
}

/* A MIG slice: memory and utilisation of the MIG device with its UUID. */
static void measure_mig(const gp_metrics_gpu *gpu, gp_memwatch_gpu *w, gp_replica_gpu *r)
{
    w->used_mib = -1;
    for (int m = 0; r->mig_uuid[0] && m < gpu->nmig; m++) {
        if (strcmp(gpu->mig[m].uuid, r->mig_uuid) == 0) {
            w->used_mib = gpu->mig[m].memory_used_mib;
            r->util = r->slice_util = gpu->mig[m].util_gpu;
        }
    }
}

void gp_usage_measure(gp_usage *u, const gp_nvml *h, const gp_metrics_snapshot *snap,
                      gp_replica_watch *reps, int n)
{
    uint64_t held = 0, shared = 0; /* bit g: a replica runs on GPU g outside MIG; a fraction */
    for (int i = 0; i < n; i++) {
        for (int g = 0; g < reps[i].use.ngpus; g++) {
            int idx = reps[i].use.gpus[g].index;
            const gp_replica_gpu *r = &reps[i].gpus[g];
            if (idx >= 0 && idx < snap->ngpus && r->mig_start < 0) {
                held |= UINT64_C(1) << idx;
                shared |= r->milli < 1000 ? UINT64_C(1) << idx : 0;
            }
        }
    }
    for (int g = 0; g < snap->ngpus; g++) {
        if (held & (UINT64_C(1) << g)) {
            measure_memory(u, h, g, reps, n, false);
        }
        if (shared & (UINT64_C(1) << g)) {
            measure_util(u, h, g, reps, n);
        }
    }
    for (int i = 0; i < n; i++) {
        for (int g = 0; g < reps[i].use.ngpus; g++) {
            int idx = reps[i].use.gpus[g].index;
            gp_replica_gpu *r = &reps[i].gpus[g];
            if (idx < 0 || idx >= snap->ngpus) {
                continue;
            }
            const gp_metrics_gpu *gpu = &snap->gpus[idx];
            int gpu_util = gpu->sampled ? gpu->r.util_gpu : -1;
            if (r->mig_start >= 0) {
                measure_mig(gpu, &reps[i].use.gpus[g], r);
            } else if (r->milli < 1000) {
                r->util = r->slice_util >= 0 ? r->slice_util : gpu_util;
            } else {
                r->util = r->slice_util = gpu_util;
            }
        }
    }
}

void gp_usage_measure_memory(gp_usage *u, const gp_nvml *h, int ngpus, gp_replica_watch *reps,
                             int n)
{
    uint64_t limited = 0; /* bit g: a replica has a GPU memory limit on GPU g */
    for (int i = 0; i < n; i++) {
        for (int g = 0; g < reps[i].use.ngpus; g++) {
            int idx = reps[i].use.gpus[g].index;
            if (idx >= 0 && idx < ngpus && idx < GP_NVML_MAX_GPUS &&
                reps[i].use.gpus[g].limit_mib > 0) {
                limited |= UINT64_C(1) << idx;
            }
        }
    }
    for (int g = 0; g < ngpus && g < GP_NVML_MAX_GPUS; g++) {
        if (limited & (UINT64_C(1) << g)) {
            measure_memory(u, h, g, reps, n, true);
        }
    }
}
