/*
 * The GPU memory watch: the agent's check, from outside the job, that a fractional replica keeps
 * to its GPU memory limit. The enforcement library preloaded into the job (libgpushare) is the
 * first line; a process can bypass it (static linking, raw ioctls, a child started without
 * LD_PRELOAD), so the agent also measures what the job's processes hold according to NVML and
 * stops a replica that stays above its limit.
 *
 * Pure: no clock, no I/O. Each round the caller measures, per running replica and per GPU it
 * holds, the GPU memory its processes use, and passes that with the replica's limit on that GPU
 * and the time (gp_memwatch_observe). The watch remembers since when each (replica, GPU) has
 * been above its limit and answers the replicas to stop: those above their limit on one GPU at
 * every observation for at least the grace period. Rules:
 *   - used > limit starts the timer of that (replica, GPU) at the first such observation;
 *   - used <= limit, or no reading (used < 0), resets it: only continuous evidence counts, so a
 *     missed measurement never kills a job;
 *   - above since t0 and now - t0 >= grace: stop, with a reason naming the GPU, the use, the
 *     limit and how long ("GPU memory 12288 MiB on GPU 0 (GPU-…) above the replica's limit of
 *     10240 MiB for 30 s");
 *   - a GPU without a limit (limit_mib <= 0: a whole GPU, a MIG slice) is never watched;
 *   - each replica is answered once (the caller stops it; it stays in the input until its
 *     processes are gone); a replica missing from an observation is forgotten.
 *
 * Ownership: a gp_memwatch owns its state (gp_memwatch_new/free); inputs are borrowed for the
 * call. Not thread-safe: one caller (the agent's round).
 */
#ifndef GP_AGENT_MEMWATCH_H
#define GP_AGENT_MEMWATCH_H

#include "agent/converge.h"
#include "gpupool/error.h"
#include "gpupool/model.h"

#include <stdint.h>

#define GP_MEMWATCH_MAX_GPUS   GP_MAX_GPUS_PER_NODE
#define GP_MEMWATCH_REASON_MAX 224

/* One GPU of a replica at one observation. */
typedef struct gp_memwatch_gpu {
    int index;         /* NVML index, 0..GP_MEMWATCH_MAX_GPUS-1 (others are ignored) */
    const char *uuid;  /* "GPU-…", for the reason; borrowed; NULL when unknown */
    int64_t limit_mib; /* the replica's GPU memory limit on it; <= 0: none, not watched */
    int64_t used_mib;  /* what the replica's processes use on it; -1: no reading */
} gp_memwatch_gpu;

typedef struct gp_memwatch_replica {
    gp_replica_key key;
    int ngpus;
    gp_memwatch_gpu gpus[GP_MEMWATCH_MAX_GPUS];
} gp_memwatch_replica;

/* A replica to stop, and why (one line for people). */
typedef struct gp_memwatch_stop {
    gp_replica_key key;
    char reason[GP_MEMWATCH_REASON_MAX];
} gp_memwatch_stop;

typedef struct gp_memwatch gp_memwatch;

/* A watch that stops after grace_ms (>= 0; 0: at the first observation above) above a limit.
 * GP_EINVAL for a negative grace, GP_ENOMEM; *out is NULL on failure. */
int gp_memwatch_new(int64_t grace_ms, gp_memwatch **out);
/* Accepts NULL. */
void gp_memwatch_free(gp_memwatch *w);

/*
 * One observation at now_ms (any monotonic clock, never going back) of every running replica
 * (reps[0..n), n >= 0; a key listed twice is one replica). Writes up to cap replicas to stop into
 * out, in the order of reps, and returns how many; a replica that did not fit is answered at a
 * later observation. GP_ENOMEM (the observation is then not taken into account) when the state
 * cannot grow.
 */
int gp_memwatch_observe(gp_memwatch *w, int64_t now_ms, const gp_memwatch_replica *reps, int n,
                        gp_memwatch_stop *out, int cap);

#endif
