/*
 * Job arrays and dependencies (spec fields array and after_ok; the rules: gpupool/array.h).
 *
 * The model. A job array is a controller object like a service (service.h): the job the user
 * submitted, never scheduled itself, that owns one child job per index, named NAME-INDEX, of the
 * same tenant, queue and priority class, whose spec is the array's without array and after_ok;
 * a child's status records its owner and index, and the agent gives its processes
 * GPUPOOL_ARRAY_INDEX, SLURM_ARRAY_TASK_ID (the index) and SLURM_ARRAY_JOB_ID (the array's id).
 * Children are made lazily, in index order, while fewer than %MAX of them are active (not
 * ended): so at most MAX ever hold resources at once, and a large array costs little until it
 * runs. The array's status stores how many it made, so a restarted controller carries on.
 *
 * Each scheduling cycle (ctl_batch_tick), before the scheduler:
 *   - a waiting job (or array) with after_ok: while a dependency is active it stays Pending with
 *     the reason "waiting for NAME" and the scheduler skips it (ctl_job_deps); as soon as one
 *     ended other than Succeeded (or is gone) it is Cancelled, reason and event DependencyFailed
 *     "NAME ended Failed" (an array cancels its children with it);
 *   - an array whose dependencies succeeded is Running; it makes children up to its limit; its
 *     reason shows its progress ("6 children: 1 pending, 2 running, 3 succeeded, 0 failed");
 *     once every child ended it ends Succeeded when all succeeded, else Failed (event
 *     ArrayDone). A job that depends on an array waits for all its children.
 * Cancelling an array cancels its active children (ctl_array_cancel_children).
 *
 * Layer: changes. Runs in the committer, in its transactions (store first, then memory).
 */
#ifndef GP_CTL_ARRAY_H
#define GP_CTL_ARRAY_H

#include "ctl/context.h"

/* What an array's children are doing. */
typedef struct ctl_array_counts {
    int total; /* indices of the array */
    int made;  /* children made so far */
    int pending, running, succeeded, failed, cancelled;
} ctl_array_counts;

/* Counts arr's children. Under the lock. */
void ctl_array_count(ctl_state *st, const ctl_job *arr, ctl_array_counts *c);

/* Cancels arr's active children (why: their reason). */
int ctl_array_cancel_children(gpupoold *g, const ctl_job *arr, const char *why, gp_diag *d);

/* Dependencies and arrays, as above, in one transaction when something is to be done. */
int ctl_batch_tick(gpupoold *g, int64_t now, gp_diag *d);

#endif
