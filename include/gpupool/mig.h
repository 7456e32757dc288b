/*
 * MIG geometry: the GPU instance profiles of the MIG-capable GPUs and their legal placements.
 *
 * A MIG-capable GPU has 7 compute slices and 8 memory slices. A profile takes a number of compute
 * slices and a contiguous run of memory slices that must start at one of the profile's legal
 * start slices (as `nvidia-smi mig -lgipp` reports them). Two instances may not share a memory
 * slice, and the compute slices in use never exceed 7. Pure tables and arithmetic; no state.
 */
#ifndef GPUPOOL_MIG_H
#define GPUPOOL_MIG_H

#include "gpupool/error.h"

#include <stdbool.h>
#include <stdint.h>

#define GP_MIG_COMPUTE_SLICES 7
#define GP_MIG_MEMORY_SLICES  8

typedef enum gp_mig_geometry {
    GP_MIG_NONE = 0,
    GP_MIG_A100_40GB,
    GP_MIG_A100_80GB,
    GP_MIG_H100_80GB,
    GP_MIG_GEOMETRY_COUNT
} gp_mig_geometry;

typedef struct gp_mig_profile {
    const char *name;     /* "1g.10gb" */
    int id;               /* nvidia-smi GPU instance profile id */
    int compute_slices;   /* 1, 2, 3, 4 or 7 */
    int memory_slices;    /* 1, 2, 4 or 8 */
    int max_instances;    /* as the driver reports it */
    uint8_t legal_starts; /* bit s: the instance may start at memory slice s */
} gp_mig_profile;

/* Name of a geometry ("A100-80GB"); "none" for GP_MIG_NONE. */
const char *gp_mig_geometry_name(gp_mig_geometry g);
/* Geometry of a GPU model name: matches "A100-SXM4-40GB", "A100-40GB", "A100 80GB PCIe",
 * "H100-80GB", "NVIDIA H100 80GB HBM3" and the like; GP_MIG_NONE when the model has no MIG. */
gp_mig_geometry gp_mig_geometry_of_model(const char *model);
/* The profiles of a geometry, in descending size; *count receives their number (0 for NONE). */
const gp_mig_profile *gp_mig_profiles(gp_mig_geometry g, int *count);
/* The profile of geometry g named name, or NULL when g has none by that name. */
const gp_mig_profile *gp_mig_find(gp_mig_geometry g, const char *name);
/* Whether name has the syntax of a MIG profile ("<c>g.<m>gb"), whatever the GPU. */
int gp_mig_name_valid(const char *name);

/* Memory-slice mask an instance of p covers when it starts at slice start. */
static inline uint8_t gp_mig_mask(const gp_mig_profile *p, int start)
{
    return (uint8_t)(((1u << p->memory_slices) - 1u) << start);
}

/*
 * The legal start slice for a new instance of p on a GPU whose used memory slices are mem_used
 * and whose used compute slices number compute_used; -1 when none is legal. Among legal starts it
 * picks the one that keeps the most room for large profiles: the highest start first, so the
 * low slices that 4g/7g instances need stay free as long as possible.
 */
int gp_mig_choose_start(const gp_mig_profile *p, uint8_t mem_used, int compute_used);

/*
 * The GPU instances that exist on a GPU (its layout), as its agent reports them.
 *
 * A layout is kept in 8 bytes, one per memory slice: byte s describes the instance that starts
 * at slice s (0: none starts there). Its low bits hold the profile's index in the geometry's
 * table plus one; GP_MIG_SLOT_BLOCKED marks an instance that something outside gpupool uses (or
 * of a profile variant gpupool does not make, like "1g.10gb+me"): the placement neither reuses
 * nor destroys it.
 */
#define GP_MIG_SLOT_PROFILE 0x0f
#define GP_MIG_SLOT_BLOCKED 0x80

typedef struct gp_mig_instance {
    char profile[16]; /* "1g.10gb", a name of the geometry's table */
    int start;        /* its first memory slice */
    bool blocked;     /* used outside gpupool: never reused or destroyed */
} gp_mig_instance;

/* The profile of a layout byte of geometry g; NULL when no instance starts there. */
const gp_mig_profile *gp_mig_slot_profile(gp_mig_geometry g, uint8_t slot);

/*
 * Checks n instances (0 <= n <= GP_MIG_MEMORY_SLICES) as the layout of a GPU of geometry g and,
 * when out is not NULL, encodes them into out[GP_MIG_MEMORY_SLICES] (the form above). Every
 * profile must be in g's table and start at one of its legal starts; two instances may not share
 * a memory slice, and their compute slices add up to at most 7. 0, or GP_EINVAL with d naming
 * the first bad instance ("[2]: 3g.40gb cannot start at memory slice 2 (legal: 0, 4)"); out is
 * then unchanged.
 */
int gp_mig_layout_encode(gp_mig_geometry g, const gp_mig_instance *in, int n, uint8_t *out,
                         gp_diag *d);

#endif
