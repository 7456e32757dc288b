/*
 * What NVML reports about this machine, as one JSON document: `gpupool-agent discover` prints it
 * so an operator sees exactly what the agent would register (the first thing to look at when a
 * GPU is missing from the pool), and the GPU results in docs/results/ are generated from it.
 *
 *   {"library": PATH, "driver_version", "cuda_version",
 *    "gpus": [{"index", "uuid", "name", "memory_mib", "pci_bus_id", "numa", "minor",
 *              "nvlink": [peer indexes], "mig_mode": "off"|"on"|"unsupported",
 *              "mig": [{"uuid", "profile", "memory_mib", "gpu_instance", "start", "size",
 *                       "compute_instance"}],
 *              "readings": {"utilization", "memory_utilization", "memory_used_mib",
 *                           "temperature_c", "power_w", "sm_clock_mhz", "memory_clock_mhz",
 *                           "ecc_corrected", "ecc_uncorrected"} | {"error": MESSAGE}}]}
 *
 * "gpu_instance" is the MIG device's GPU instance id, "start" and "size" its placement in memory
 * slices (as `nvidia-smi mig -lgi` shows it), "compute_instance" its compute instance's id.
 * "minor" is the GPU's device minor number (/dev/nvidia<minor>). A reading NVML cannot give for a
 * GPU (-1 in gp_nvml_readings) is left out of "readings", and so is a placement NVML does not
 * tell (an unprivileged caller) out of its MIG device, and a minor or id it does not tell.
 */
#ifndef GP_AGENT_DISCOVER_H
#define GP_AGENT_DISCOVER_H

#include "agent/nvml.h"

/* The document above for the handle h and its inventory inv (from gp_nvml_inventory); readings
 * are sampled now. Returns a new reference, or NULL when out of memory. */
json_t *gp_nvml_describe(const gp_nvml *h, const gp_nvml_inv *inv);

/*
 * Opens NVML at library (NULL or "": the driver's), takes the inventory and prints the document
 * to out, indented. Returns 0, or a negative GP_E* code with the reason in *d (nothing printed).
 */
int gp_nvml_discover(const char *library, FILE *out, gp_diag *d);

#endif
