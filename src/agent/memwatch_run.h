/*
 * The GPU memory watch's own thread: every interval it lists the node's running replicas,
 * measures through NVML what each fractional replica's processes hold on its GPUs (by cgroup,
 * else session and ancestry; usage.h), feeds the watch (memwatch.h), and stops the replicas the
 * watch answers (gp_replicas_stop with the reason: the supervisor stops the job and records it).
 *
 * A thread of its own, not the agent's round: a round waits on the controller (a heartbeat that
 * hangs holds it up to its time-out), and the watch must answer within interval + grace whatever
 * the controller does. What it shares with the round is read-only (the NVML handle, the
 * inventory, the state directory's path) or made for concurrent writers (replica directories:
 * files replaced by rename; a stop twice is a stop).
 *
 * Ownership: gp_memwatch_run_start borrows cfg's pointers for the thread's life (until
 * gp_memwatch_run_stop, which joins it and frees everything).
 */
#ifndef GP_AGENT_MEMWATCH_RUN_H
#define GP_AGENT_MEMWATCH_RUN_H

#include "agent/nvml.h"
#include "gpupool/error.h"

#include <stdint.h>

typedef struct gp_memwatch_run_config {
    const char *state_dir;    /* the agent's (replicas/ below it) */
    const gp_nvml *nvml;      /* the agent's handle */
    const gp_nvml_inv *inv;   /* GPU count and UUIDs (for the reasons) */
    int64_t interval_ms;      /* between passes, > 0 */
    int64_t grace_ms;         /* above a limit this long: stop (memwatch.h) */
    int64_t started_grace_ms; /* gp_replicas_scan's: how long a replica may take to start */
} gp_memwatch_run_config;

typedef struct gp_memwatch_run gp_memwatch_run;

/* Starts the thread; its first pass runs at once. GP_EINVAL (interval), GP_ENOMEM, GP_EIO (no
 * thread) with d set; *out is NULL on failure. */
int gp_memwatch_run_start(const gp_memwatch_run_config *cfg, gp_memwatch_run **out, gp_diag *d);

/* Stops and joins the thread, frees everything. Accepts NULL. */
void gp_memwatch_run_stop(gp_memwatch_run *r);

#endif
