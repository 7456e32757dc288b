/*
 * MIG instances on demand: the agent makes the MIG device the controller placed a job on exist,
 * and learns its UUID, which is what the job must be shown (CUDA_VISIBLE_DEVICES=MIG-…). It also
 * lists the GPU instances there are, which it reports to the controller so that a MIG request
 * goes to an idle instance of its profile before anything is destroyed (gp_nvml_mig_instances).
 *
 * The controller owns the layout of every GPU in MIG mode: for a MIG request its scheduler picks
 * a profile ("1g.10gb") and the memory slice the instance starts at (the tables and legal starts
 * are in include/gpupool/mig.h), and sends the agent {"index", "uuid" (the parent GPU),
 * "mig_start"} with the job's "mig_profile". Whatever else is on the GPU and in the way is left
 * over from jobs that ended, from another tool, or from the inventory the machine came with; the
 * agent replaces it unless something still runs there.
 *
 * Uses only NVML (through gp_nvml's function table); never changes MIG mode itself.
 */
#ifndef GP_AGENT_MIG_H
#define GP_AGENT_MIG_H

#include "agent/nvml.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Makes sure GPU gpu (0 ≤ gpu < gp_nvml_count(h), in MIG mode) has a MIG device of profile
 * ("1g.10gb", as include/gpupool/mig.h and the job spec spell it) whose GPU instance starts at
 * memory slice start, and writes that device's UUID ("MIG-…") into uuid (cap bytes, NUL
 * terminated).
 *
 *   - A GPU instance of that profile at that start is reused: its MIG device's UUID comes back
 *     unchanged. If it has no compute instance, one taking the whole GPU instance is created; if
 *     it is split into smaller compute instances, they are replaced by one whole one. It is not
 *     reused while a process runs on it (GP_ESTATE, as below): a job never shares its instance
 *     with whatever ran there before (the agent's next round tries again).
 *   - Otherwise every GPU instance whose memory slices overlap the wanted ones is destroyed
 *     (compute instances first), a GPU instance is created at exactly that placement
 *     (nvmlDeviceCreateGpuInstanceWithPlacement) with one compute instance taking all of it, and
 *     the new MIG device's UUID comes back. Instances that do not overlap are left alone.
 *
 * Errors (0 on success, else a negative code with the reason in *d):
 *   GP_EINVAL  gpu out of range; the GPU has no MIG or is not in MIG mode; the driver offers no
 *              profile of that name on this GPU (the message lists those it offers); start is not
 *              a legal start of the profile (the message lists the legal ones).
 *   GP_ESTATE  the instance to reuse, or one that would have to be destroyed, is in use (a process
 *              runs on it, or
 *              NVML answers IN_USE): the message names the GPU instance (id, profile, start) and
 *              the process when known. When the processes are known beforehand (NVML lists them
 *              to a privileged caller) nothing has been changed; if NVML only says so while
 *              destroying, the message also names what was already destroyed.
 *   GP_ENOSPC  the GPU instances that stay would leave no room (compute slices, or the
 *              profile's instance count); nothing changed. Also NVML's INSUFFICIENT_RESOURCES.
 *   GP_ENOTSUP the NVML library lacks a MIG management function (the message names it).
 *   GP_ERANGE  cap is too small for the UUID.
 *   other      the mapping of any other NVML failure (see nvml.h), naming the GPU and function.
 * A GPU instance created by this call is destroyed again when its compute instance cannot be
 * created. uuid is "" on failure.
 *
 * Threads: call from one thread only (the agent calls it from its loop thread). NVML itself is
 * thread-safe, but two calls at once on one GPU would race on its layout, and a gp_nvml_inventory
 * taken meanwhile on another thread may see the layout half changed. Needs the privileges NVML's
 * MIG management needs (root, or the MIG capability device files).
 */
int gp_nvml_mig_ensure(gp_nvml *h, int gpu, const char *profile, int start, char *uuid, size_t cap,
                       gp_diag *d);

/* A GPU instance that exists on a GPU in MIG mode. */
typedef struct gp_nvml_gi {
    int id;           /* its GPU instance id */
    char profile[32]; /* "1g.10gb": the driver's profile name without "MIG " ("1g.10gb+me") */
    int start, size;  /* its placement, in memory slices */
    bool busy;        /* NVML lists a process on it (only a privileged caller sees them) */
} gp_nvml_gi;

/*
 * The GPU instances of GPU gpu (in MIG mode), by start: up to cap into out[], *n how many.
 * Errors: GP_EINVAL (gpu out of range, the GPU has no MIG or is not in MIG mode), GP_ENOTSUP (the
 * library lacks a GPU instance function), GP_ERANGE (more than cap instances), else the mapping
 * of an NVML failure; *n is 0 then. Changes nothing; the same thread rule as gp_nvml_mig_ensure.
 */
int gp_nvml_mig_instances(gp_nvml *h, int gpu, gp_nvml_gi *out, int cap, int *n, gp_diag *d);

#endif
