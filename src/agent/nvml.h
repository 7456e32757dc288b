/*
 * GPU discovery and monitoring through NVML, loaded with dlopen.
 *
 * gp_nvml_open loads an NVML library (the driver's libnvidia-ml.so.1, or another path such as
 * the mock libgpupool-nvml-mock.so), resolves every function the agent uses through one table
 * (GP_NVML_FUNCS in nvml_abi.h), initialises NVML and keeps the device handles. Nothing is
 * linked against NVML, so the agent starts on hosts without a driver and says why NVML is
 * unusable instead of failing to load.
 *
 * Lifetimes and threads: a gp_nvml is read-only after gp_nvml_open; NVML itself is thread-safe,
 * so gp_nvml_inventory, gp_nvml_sample and an event set may be used from different threads at
 * once. An event set must be closed before the gp_nvml it came from. Several gp_nvml may be open
 * at once (NVML counts its initialisations). gp_nvml_mig_ensure (mig.h) changes a GPU's MIG
 * layout; an inventory taken meanwhile may see it half done.
 *
 * Errors: 0 or a negative GP_E* code, with what failed (the NVML function, the GPU, NVML's own
 * message) in the gp_diag. NVML codes map to GP_EUNAVAIL for GPU_IS_LOST (the GPU fell off the
 * bus) and DRIVER_NOT_LOADED, GP_ENOTSUP for NOT_SUPPORTED, GP_EPERM for NO_PERMISSION,
 * GP_ENOENT for NOT_FOUND, GP_ENOMEM for MEMORY, GP_ESTATE for UNINITIALIZED and IN_USE,
 * GP_ENOSPC for INSUFFICIENT_RESOURCES, GP_EINVAL for INVALID_ARGUMENT, and GP_EIO for the rest.
 */
#ifndef GP_AGENT_NVML_H
#define GP_AGENT_NVML_H

#include "agent/check.h"
#include "gpupool/error.h"
#include "gpupool/model.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The library gp_nvml_open loads when given no path. */
#define GP_NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"
/* At most this many GPUs per node (the controller's limit) and MIG devices per GPU. */
#define GP_NVML_MAX_GPUS GP_MAX_GPUS_PER_NODE
#define GP_NVML_MAX_MIG  7

typedef struct gp_nvml gp_nvml;

typedef struct gp_nvml_mig {
    char uuid[96];      /* "MIG-…" */
    char profile[32];   /* "1g.10gb", from the device name; "" when the name carries none */
    int64_t memory_mib; /* total memory of the instance */
    /* Its GPU instance: id, and placement in memory slices (start 0..7, size 1, 2, 4 or 8).
     * -1 when NVML does not tell (a driver without the GPU instance API, or a caller without
     * the privileges nvmlDeviceGetGpuInstanceById needs). */
    int gpu_instance;
    int start;
    int size;
    /* Its compute instance's id within the GPU instance (nvmlDeviceGetComputeInstanceId); -1 when
     * NVML does not tell. With gpu_instance and the parent GPU's minor it names the MIG
     * capability device files a container needs (cdi.h). */
    int compute_instance;
} gp_nvml_mig;

typedef struct gp_nvml_gpu {
    int index;           /* NVML index */
    char uuid[96];       /* "GPU-…" */
    char name[96];       /* model as NVML reports it: "NVIDIA A100-SXM4-80GB", "Tesla T4" */
    int64_t memory_mib;  /* total memory */
    char pci_bus_id[32]; /* "00000000:07:00.0" */
    int numa;            /* NUMA node nearest the GPU; -1 unknown */
    int minor;           /* device minor number (/dev/nvidia<minor>); -1 when NVML does not tell */
    /* Bit j: an NVLink connects this GPU with GPU j, directly or through an NVSwitch fabric (all
     * GPUs attached to the NVSwitches reach each other). Symmetric; never the GPU's own bit. */
    uint32_t nvlink;
    int mig_mode; /* current MIG mode: 0 off, 1 on, -1 the GPU has no MIG */
    int nmig;     /* MIG devices present (mig_mode 1 only) */
    gp_nvml_mig mig[GP_NVML_MAX_MIG];
} gp_nvml_gpu;

typedef struct gp_nvml_inv {
    char driver_version[80]; /* "550.54.15" */
    char cuda_version[16];   /* CUDA version the driver supports: "12.4" */
    int ngpus;
    gp_nvml_gpu gpus[GP_NVML_MAX_GPUS];
} gp_nvml_inv;

/* One sample of a GPU. A field NVML cannot give for this GPU (NOT_SUPPORTED and similar, e.g.
 * utilisation of a GPU in MIG mode, ECC on a GPU without it, or a function the driver's library
 * lacks) is -1. Counters count since the driver loaded. */
typedef struct gp_nvml_readings {
    int util_gpu;                /* percent */
    int util_memory;             /* percent of time memory was read or written */
    int util_encoder;            /* percent */
    int util_decoder;            /* percent */
    int64_t memory_used_mib;     /* device memory in use (v2: without the driver's reserve) */
    int64_t memory_free_mib;     /* free device memory */
    int64_t memory_reserved_mib; /* kept by the driver; -1 without nvmlDeviceGetMemoryInfo_v2 */
    int temperature_c;           /* GPU die */
    int memory_temperature_c;    /* HBM (field NVML_FI_DEV_MEMORY_TEMP) */
    double power_w;              /* board power draw */
    double power_limit_w;        /* the power management limit */
    int64_t energy_mj;           /* total energy consumed, millijoules */
    int sm_clock_mhz;
    int memory_clock_mhz;
    int64_t pcie_replays; /* PCIe replay counter */
    /* NVLink error counters, summed over the GPU's active links (-1: no NVLink, or none read) */
    int64_t nvlink_replay, nvlink_recovery, nvlink_crc_flit, nvlink_crc_data;
    int64_t thermal_violation_us; /* time the clocks were held down for thermal reasons */
    int64_t clock_reasons;        /* nvmlClocksEventReason* bits: why the clocks are held down */
    /* Row remapping: rows remapped for correctable and uncorrectable errors, and 1 when a remap
     * failed (the GPU must be replaced). */
    int64_t remapped_correctable, remapped_uncorrectable, remap_failure;
    int64_t ecc_corrected;   /* volatile counts (since the driver loaded) */
    int64_t ecc_uncorrected; /* likewise */
} gp_nvml_readings;

/* A MIG device present now, with its memory (and utilisation, where NVML answers it for MIG
 * devices: it does not, today). */
typedef struct gp_nvml_mig_reading {
    char uuid[96];    /* "MIG-…" */
    char profile[32]; /* "1g.10gb"; "" when the name carries none */
    int gpu_instance; /* its GPU instance's id; -1 when NVML does not tell */
    int64_t memory_total_mib, memory_used_mib, memory_free_mib; /* -1: no reading */
    int util_gpu;                                               /* percent; -1 */
} gp_nvml_mig_reading;

/* A process's utilisation of a GPU over the period asked for (nvmlDeviceGetProcessUtilization;
 * the mean of its samples). */
typedef struct gp_nvml_proc_util {
    int pid;
    int sm;     /* percent of the GPU's SMs */
    int memory; /* percent of time memory was read or written for it */
} gp_nvml_proc_util;

/* An XID reported by the driver. */
typedef struct gp_nvml_event {
    int gpu;          /* index; -1 when the event named a device this handle does not know */
    int xid;          /* 999: an XID the driver could not decode */
    int gpu_instance; /* MIG GPU instance the XID is attributed to; -1 none */
} gp_nvml_event;

typedef struct gp_nvml_events gp_nvml_events;

/*
 * Loads the NVML library at path (GP_NVML_DEFAULT_LIBRARY when path is NULL or empty; the agent
 * passes GPUPOOL_NVML_LIBRARY here), resolves its functions, calls nvmlInit_v2 and takes the
 * device handles. *out receives the handle (free with gp_nvml_close). Errors: GP_ENOENT (the
 * library cannot be loaded; the message names the path and dlerror), GP_ENOTSUP (a required
 * function is missing; the message names it), GP_ERANGE (more than GP_NVML_MAX_GPUS GPUs), or
 * the mapping of NVML's code when nvmlInit_v2 or nvmlDeviceGetCount_v2 fails (the message has
 * nvmlErrorString's text). *out is NULL on failure.
 */
int gp_nvml_open(const char *path, gp_nvml **out, gp_diag *d);
/*
 * Like gp_nvml_open, but a GPU whose handle NVML does not give (it fell off the bus, ...) does
 * not fail the call: its handle is left unset, gp_nvml_count still counts it, and only
 * gp_nvml_health and gp_nvml_close may be used with the result (the health check must describe a
 * node with a lost GPU instead of refusing it).
 */
int gp_nvml_open_partial(const char *path, gp_nvml **out, gp_diag *d);
/* nvmlShutdown and dlclose. Accepts NULL. */
void gp_nvml_close(gp_nvml *h);
/* Number of GPUs (fixed for the life of h). */
int gp_nvml_count(const gp_nvml *h);
/* The path that was loaded. Owned by h. */
const char *gp_nvml_path(const gp_nvml *h);
/* The file the dynamic linker actually loaded for it, into out (cap bytes): a name like
 * "libnvidia-ml.so.1" resolved through the ld cache (absolute), or the path given (relative when
 * it was). 0, or GP_ENOENT when the linker does not tell, GP_ERANGE when cap is too small. */
int gp_nvml_loaded_file(const gp_nvml *h, char *out, size_t cap);

/*
 * Fills *inv with the driver and every GPU. NUMA comes from nvmlDeviceGetMemoryAffinity (node
 * scope; the lowest node when several are equally near); NVLink peers from the active links'
 * remote PCI addresses, mapped to local GPU indexes, and from links to NVSwitches; MIG devices
 * from the GPU's MIG handles, each with its GPU instance's id and placement (nvmlDeviceGet-
 * GpuInstanceId, nvmlDeviceGetGpuInstanceById, nvmlGpuInstanceGetInfo; -1 where NVML answers
 * NOT_SUPPORTED or NO_PERMISSION) and its compute instance's id; the minor number from
 * nvmlDeviceGetMinorNumber (-1 where the library lacks it or answers an error: the GPU is then
 * left out of the CDI spec, cdi.h). Any other NVML failure on a GPU fails the whole call (a GPU
 * that cannot be described must not be offered): the message names the GPU and the function. On
 * failure *inv is unspecified.
 */
int gp_nvml_inventory(const gp_nvml *h, gp_nvml_inv *inv, gp_diag *d);

/*
 * Samples GPU gpu (0 ≤ gpu < gp_nvml_count) (nvml_sample.c). GP_EUNAVAIL when the GPU is lost (fell
 * off the bus), GP_EINVAL for a bad index, GP_ESTATE when NVML is not initialised; any other NVML
 * failure of one reading only sets that field to -1, and so does an optional function the library
 * lacks. Memory comes from nvmlDeviceGetMemoryInfo_v2 when the library has it (with the driver's
 * reserve), else from v1; the NVLink counters are summed over the links nvmlDeviceGetNvLinkState
 * reports active; the clock reasons from nvmlDeviceGetCurrentClocksEventReasons, else from its
 * older name ...ThrottleReasons; the thermal violation time from nvmlDeviceGetViolationStatus
 * (NVML_PERF_POLICY_THERMAL, nanoseconds, given in microseconds).
 */
int gp_nvml_sample(const gp_nvml *h, int gpu, gp_nvml_readings *out, gp_diag *d);

/*
 * The MIG devices of GPU gpu now (a GPU not in MIG mode, or a driver without MIG, has none):
 * up to cap of them into out[], *n how many. Readings NVML does not give are -1. Errors: GP_EINVAL
 * for a bad index, GP_EUNAVAIL when the GPU is lost; *n is 0 then.
 */
int gp_nvml_sample_mig(const gp_nvml *h, int gpu, gp_nvml_mig_reading *out, int cap, int *n,
                       gp_diag *d);

/*
 * The processes using GPU gpu and their utilisation since *since_us (a CPU timestamp in
 * microseconds; 0: whatever the driver still holds), merged per process (the mean of its
 * samples); up to cap into out[], *n how many. A process that did nothing in the period is not
 * listed (NVML lists only those with samples). *since_us becomes the newest sample's timestamp,
 * to pass next time. Errors: GP_ENOTSUP when the library lacks nvmlDeviceGetProcessUtilization or
 * the GPU does not support it (a GPU in MIG mode), GP_EINVAL for a bad index, GP_ENOMEM, else the
 * mapping of NVML's code; *n is 0 then.
 */
int gp_nvml_process_util(const gp_nvml *h, int gpu, uint64_t *since_us, gp_nvml_proc_util *out,
                         int cap, int *n, gp_diag *d);

/*
 * What the health check reads (check.h), now: the driver version, the GPU count, and for each GPU
 * (handles taken again by index, so a GPU lost since gp_nvml_open shows) its UUID, NVLink states,
 * MIG and ECC modes (current and pending), uncorrected ECC counts (volatile and aggregate),
 * remapped rows, pending page retirement, and NVML's recovery action (field
 * NVML_FI_DEV_GET_GPU_RECOVERY_ACTION). Never fails: a reading NVML does not give is marked in
 * *out (GP_AVAIL_MISSING when the library lacks the optional function, as drivers older than the
 * function do; GP_AVAIL_NOT_SUPPORTED when the GPU lacks the feature; GP_AVAIL_FAILED otherwise),
 * and any GPU_IS_LOST marks the GPU lost. *out is overwritten; driver_loaded is set.
 */
void gp_nvml_health(const gp_nvml *h, gp_check_readings *out);

/* A compute process on a GPU (nvmlDeviceGetComputeRunningProcesses_v3). */
typedef struct gp_nvml_process {
    int pid;          /* as NVML reports it: the host's PID namespace */
    int64_t used_mib; /* GPU memory it uses; -1 when NVML cannot tell (NVML_VALUE_NOT_AVAILABLE) */
    int gpu_instance; /* MIG GPU instance it runs in; -1 when none */
} gp_nvml_process;

/*
 * The compute processes running on GPU gpu (0 ≤ gpu < gp_nvml_count): up to cap of them into
 * out[], *n how many were written. NVML is asked with a buffer that grows while it answers
 * INSUFFICIENT_SIZE (processes may start between two calls), a few times at most. Errors:
 * GP_EINVAL for a bad index, GP_ENOTSUP when the driver lacks the function, GP_ENOMEM, GP_ERANGE
 * when more than cap processes run (out[] then holds the first cap and *n is cap), else the
 * mapping of NVML's code (GP_EUNAVAIL for a lost GPU); *n is 0 on the other errors.
 */
int gp_nvml_processes(const gp_nvml *h, int gpu, gp_nvml_process *out, int cap, int *n, gp_diag *d);

/*
 * XID events of every GPU. gp_nvml_events_open creates an NVML event set and registers every GPU
 * for nvmlEventTypeXidCriticalError; a GPU that does not support it (or is lost) is skipped, and
 * the call fails only when none could be registered. *out is NULL on failure.
 */
int gp_nvml_events_open(const gp_nvml *h, gp_nvml_events **out, gp_diag *d);
/* Waits up to timeout_ms for the next event: 1 and *ev filled, 0 when the time passed with none,
 * or a negative GP_E* code. */
int gp_nvml_events_wait(gp_nvml_events *e, unsigned int timeout_ms, gp_nvml_event *ev, gp_diag *d);
/* Frees the event set. Accepts NULL. */
void gp_nvml_events_close(gp_nvml_events *e);

/*
 * For the agent's other NVML modules (mig.c, nvml_sample.c), which include agent/nvml_abi.h for the
 * types: the resolved function table (optional functions the library lacks are NULL), the handle of
 * GPU gpu (0 ≤ gpu < gp_nvml_count), and the failure recorder every NVML error goes through: it
 * records "GPU <gpu>: <fname>: <NVML's message> (NVML <rc>)" (gpu -1: the library's path instead
 * of the GPU) and returns the mapped GP_E* code. All borrowed from h.
 */
const struct gp_nvml_fns *gp_nvml_fns(const gp_nvml *h);
struct nvmlDevice_st *gp_nvml_device(const gp_nvml *h, int gpu);
int gp_nvml_fail(const gp_nvml *h, gp_diag *d, int nvml_rc, int gpu, const char *fname);
/* The MIG profile in a MIG device's name ("NVIDIA A100-SXM4-40GB MIG 1g.5gb" -> "1g.5gb"), into
 * out (len bytes); "" when the name carries none. */
void gp_nvml_profile_of(const char *name, char *out, size_t len);

/*
 * The controller's node registration document (see src/ctl/node.c):
 *   {"name", "address", "cpu_milli", "memory_mib", "labels",
 *    "gpus": [{"index", "uuid", "model", "memory_mib", "numa", "nvlink": [peers], "mig"}]}
 * with model the NVML name as reported and mig true for a GPU in MIG mode. The host's CPU and
 * memory come from the caller; labels (an object of strings) is borrowed and may be NULL.
 * Returns a new reference, or NULL when out of memory.
 */
json_t *gp_nvml_node_doc(const gp_nvml_inv *inv, const char *name, const char *address,
                         int64_t cpu_milli, int64_t memory_mib, json_t *labels);

#endif
