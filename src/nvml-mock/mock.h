/*
 * libgpupool-nvml-mock.so: the NVML C API (the functions of GP_NVML_FUNCS, with their real names
 * and ABI) answered from an inventory file, so the agent's real NVML code path runs on machines
 * without GPUs.
 *
 *   inventory.c  reads and validates the inventory (YAML): GPUs, topology, MIG, patterns
 *   control.c    the runtime control file (XIDs, a GPU falling off the bus, spikes, busy MIG
 *                instances, processes using GPU memory and their utilisation, the faults the
 *                health check reads: ECC errors, row remaps, NVLink links down, pending mode
 *                changes, the driver's version, recovery actions; thermal throttling, PCIe
 *                replays, NVLink errors), patterns
 *   api.c        the exported functions and the process state
 *   counters.c   the exported readings that add up over time (energy, violations, replays,
 *                NVLink errors), clock reasons, memory v2, and per-process utilisation
 *   instances.c  MIG: GPU instances, compute instances and the MIG devices they make, created and
 *                destroyed in memory (the exported functions and the helpers inventory.c uses)
 *
 * Process state: the library keeps everything in one static struct in api.c (a mock_state),
 * guarded by its mutex; every exported function takes the lock, so the mock is thread-safe like
 * NVML. nvmlInit_v2 reads the inventory named by GPUPOOL_NVML_MOCK_INVENTORY (the mock stands in
 * for the driver, so it may read the environment); the last nvmlShutdown frees it. Each process
 * reads the inventory on its own; nothing is shared between processes. Only the NVML functions
 * are exported (the library builds with hidden visibility).
 */
#ifndef GP_NVML_MOCK_H
#define GP_NVML_MOCK_H

#include "agent/nvml_abi.h"
#include "gpupool/mig.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define MOCK_MAX_GPUS  32
#define MOCK_MAX_MIG   7 /* GPU instances, and compute instances (MIG devices), per GPU */
#define MOCK_MAX_STEPS 8
#define MOCK_QUEUE     64
#define MOCK_PATH_MAX  1024
#define MOCK_MAX_PROCS 32 /* processes the control file runs per GPU (proc) */

/* usedGpuMemory when NVML cannot tell (not in nvml_abi.h: only the process list uses it). */

/* Readings that follow a pattern over time (and may be overridden from the control file). */
typedef enum mock_reading {
    MOCK_UTIL = 0,    /* percent */
    MOCK_MEM_UTIL,    /* percent */
    MOCK_MEM_USED,    /* MiB */
    MOCK_TEMPERATURE, /* Celsius */
    MOCK_POWER,       /* W */
    MOCK_ENC_UTIL,    /* percent */
    MOCK_DEC_UTIL,    /* percent */
    MOCK_READING_COUNT
} mock_reading;

typedef enum mock_pattern_kind { MOCK_CONSTANT = 0, MOCK_SINE, MOCK_STEP } mock_pattern_kind;

/* constant: values[0]; sine: between min and max with period_s; step: values[] in turn, each
 * held period_s. Time is the wall clock, so every process sees the same phase. */
typedef struct mock_pattern {
    mock_pattern_kind kind;
    double min, max, period_s;
    int nvalues;
    double values[MOCK_MAX_STEPS];
} mock_pattern;

typedef struct mock_override {
    int active;
    double value;
    double until; /* wall-clock seconds; 0: until replaced */
} mock_override;

/* A GPU or a MIG device (parent set). The NVML handle is a pointer to one of these. */
struct nvmlDevice_st {
    struct nvmlDevice_st *parent;
    struct nvmlComputeInstance_st *ci; /* MIG device: the compute instance it is */
    int index;                         /* GPU index; for a MIG device its slot on the parent */
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    int64_t memory_mib;
    /* The rest is for GPUs only. */
    char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "00000000:07:00.0" */
    unsigned int domain, bus, device;
    int64_t pci_device_id;
    int64_t numa;           /* -1: the GPU reports no affinity */
    int64_t minor;          /* device minor number: /dev/nvidia<minor> (default: the index) */
    int64_t nvswitch_links; /* links to the NVSwitch fabric, after the direct ones */
    int nlinks;
    int link_peer[NVML_NVLINK_MAX_LINKS]; /* GPU index, or -1 for an NVSwitch */
    int mig_capable, mig_enabled;
    gp_mig_geometry geo;                /* of the model name: the MIG profile table */
    struct nvmlGpuInstance_st *gi;      /* MOCK_MAX_MIG slots (mock_inv.gis[index]) */
    struct nvmlComputeInstance_st *cis; /* MOCK_MAX_MIG slots (mock_inv.cis[index]) */
    unsigned int seq;                   /* compute instances created so far */
    unsigned int serial;                /* MIG UUIDs made so far */
    mock_pattern pattern[MOCK_READING_COUNT];
    mock_override override[MOCK_READING_COUNT];
    int64_t sm_clock_mhz, mem_clock_mhz;
    int64_t power_limit_w; /* the power management limit; 0: the power pattern's peak */
    int encoder;           /* has a video encoder (utilisation readable) */
    /* Counters since nvmlInit_v2: energy, integrated over the power readings at each call;
     * thermal violation time and PCIe replays (throttle, pcie-replay); NVLink errors per link and
     * nvmlNvLinkErrorCounter_t (nvlink-errors). */
    double energy_mj, energy_at; /* and the wall-clock second it was brought up to */
    unsigned long long thermal_ns;
    double throttled_until; /* wall-clock second the last throttle ends: hardware slowdown */
    unsigned long long pcie_replays;
    unsigned long long nvlink_errors[NVML_NVLINK_MAX_LINKS][4];
    int ecc;
    int64_t ecc_corrected, ecc_uncorrected; /* volatile counts */
    int64_t ecc_uncorrected_aggregate;      /* over the GPU's life: at least the volatile one */
    /* What the health check reads, set from the control file (ecc, remap, nvlink, mig-pending,
     * ecc-pending, retire-pending, recovery). */
    uint32_t links_down;    /* bit l: link l is inactive */
    int mig_pending_change; /* the MIG mode flips at the next reset */
    int ecc_pending_change; /* likewise the ECC mode */
    int remap_pending, remap_failed;
    int retire_pending;
    unsigned int recovery; /* nvmlDeviceGpuRecoveryAction_t */
    int lost;              /* fell off the bus */
};

/* A GPU instance (the handle is a pointer to one). Slots never move, so the handles of the
 * others stay valid when one is destroyed; a free slot has no gpu. */
struct nvmlGpuInstance_st {
    struct nvmlDevice_st *gpu;
    const gp_mig_profile *profile;
    unsigned int id;       /* 1.., the lowest free one when created */
    unsigned int start;    /* first memory slice */
    unsigned int busy_pid; /* 0, or a process the control file says runs on it */
};

/* A compute instance and the MIG device it makes (dev). A free slot has no gi. */
struct nvmlComputeInstance_st {
    struct nvmlGpuInstance_st *gi;
    unsigned int id;      /* 0.. within its GPU instance */
    unsigned int profile; /* NVML_COMPUTE_INSTANCE_PROFILE_* (also its profile id) */
    unsigned int slices;  /* compute slices */
    unsigned int seq;     /* creation order: MIG device indexes follow it */
    struct nvmlDevice_st dev;
};

/* A process's utilisation of a GPU (proc-util GPU PID PERCENT). */
typedef struct mock_proc_util {
    unsigned int pid;
    unsigned int percent;
} mock_proc_util;

/* A compute process the control file runs on a GPU (proc GPU PID MIB). */
typedef struct mock_proc {
    unsigned int pid;
    unsigned long long bytes; /* NVML_VALUE_NOT_AVAILABLE: NVML cannot tell */
} mock_proc;

typedef struct mock_inv {
    char path[MOCK_PATH_MAX];
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    int cuda; /* 12040 for 12.4 */
    char control[MOCK_PATH_MAX];
    int ngpus;
    struct nvmlDevice_st gpus[MOCK_MAX_GPUS];
    struct nvmlGpuInstance_st gis[MOCK_MAX_GPUS][MOCK_MAX_MIG];
    struct nvmlComputeInstance_st cis[MOCK_MAX_GPUS][MOCK_MAX_MIG];
    int nprocs[MOCK_MAX_GPUS]; /* processes of proc commands, per GPU, in the order added */
    mock_proc procs[MOCK_MAX_GPUS][MOCK_MAX_PROCS];
    int nputil[MOCK_MAX_GPUS]; /* processes of proc-util commands, per GPU */
    mock_proc_util putil[MOCK_MAX_GPUS][MOCK_MAX_PROCS];
} mock_inv;

struct nvmlEventSet_st {
    struct nvmlEventSet_st *next;
    unsigned long long mask[MOCK_MAX_GPUS]; /* event types registered per GPU */
    nvmlEventData_t queue[MOCK_QUEUE];
    int head, n;
};

typedef struct mock_control {
    char path[MOCK_PATH_MAX]; /* "" when there is no control file */
    dev_t dev;
    ino_t ino;
    off_t done; /* bytes of complete lines already run */
    long line;  /* lines already run */
} mock_control;

typedef struct mock_state {
    pthread_mutex_t lock;
    int refs;      /* nvmlInit_v2 calls not yet shut down */
    mock_inv *inv; /* while refs > 0 */
    mock_control ctl;
    struct nvmlEventSet_st *sets;
    nvmlReturn_t init_rc; /* the last failed nvmlInit_v2, with its detail */
    char init_err[1200];
    char reported[1200]; /* the last detail written to stderr (each is written once) */
} mock_state;

/* Takes the state's lock and runs new control lines; NULL (unlocked) while NVML is not
 * initialised. mock_leave unlocks and returns rc. */
mock_state *mock_enter(void);
nvmlReturn_t mock_leave(mock_state *s, nvmlReturn_t rc);

#define ENTER()                                                                                    \
    mock_state *s = mock_enter();                                                                  \
    if (!s) {                                                                                      \
        return NVML_ERROR_UNINITIALIZED;                                                           \
    }

enum { ANY_DEVICE = 0, GPU_ONLY = 1 };
/* INVALID_ARGUMENT for a handle the mock does not know, GPU_IS_LOST when its GPU fell off the
 * bus, NOT_SUPPORTED for a MIG device where gpu_only; else SUCCESS. */
nvmlReturn_t mock_check(const mock_state *s, nvmlDevice_t d, int gpu_only);

/* ---- MIG (instances.c); all with the lock held, or on an inventory not yet published ---- */

/* The NVML_GPU_INSTANCE_PROFILE_* index of profile p (1g with two memory slices: REV2). */
unsigned int mock_gi_profile_index(const gp_mig_profile *p);
/* The memory of an instance of p on GPU g: the profile's GB in MiB, at most the GPU's. */
int64_t mock_profile_mib(const struct nvmlDevice_st *g, const gp_mig_profile *p);
/* Memory slices (bit s: slice s) and compute slices the GPU instances of g take. */
uint8_t mock_memory_used(const struct nvmlDevice_st *g);
int mock_compute_used(const struct nvmlDevice_st *g);
/* Creates a GPU instance of p at start on g: INVALID_ARGUMENT for a start p does not allow,
 * INSUFFICIENT_RESOURCES when it overlaps another, or the compute slices, the profile's instance
 * count or the slots run out. */
nvmlReturn_t mock_gi_create(struct nvmlDevice_st *g, const gp_mig_profile *p, unsigned int start,
                            struct nvmlGpuInstance_st **out);
/* Creates a compute instance of profile (NVML_COMPUTE_INSTANCE_PROFILE_*) in gi and its MIG
 * device: uuid, else a generated one ("MIG-" + UUID, unique in inv, the same for the same
 * sequence of calls); memory_mib, else the GPU instance's. NOT_SUPPORTED for a profile the GPU
 * instance cannot hold, INSUFFICIENT_RESOURCES when its compute slices run out. */
nvmlReturn_t mock_ci_create(mock_inv *inv, struct nvmlGpuInstance_st *gi, unsigned int profile,
                            const char *uuid, int64_t memory_mib,
                            struct nvmlComputeInstance_st **out);
/* The compute instance profile taking all of a GPU instance of p. */
unsigned int mock_ci_whole_profile(const gp_mig_profile *p);
/* The GPU instance of GPU gpu starting at memory slice start, or NULL. */
struct nvmlGpuInstance_st *mock_gi_at(mock_inv *inv, int gpu, unsigned int start);

/* Reads the inventory at path into *inv. NVML_SUCCESS, or an error with "FILE:LINE: FIELD:
 * problem" in err: NVML_ERROR_DRIVER_NOT_LOADED when the file cannot be read, else
 * NVML_ERROR_UNKNOWN. */
nvmlReturn_t mock_inv_load(const char *path, mock_inv *inv, char *err, size_t errlen);

/* Runs the control file's new complete lines (call with the lock held). */
void mock_control_poll(mock_state *st);
/* Queues an XID event of GPU gpu on every event set registered for it. */
void mock_post_xid(mock_state *st, int gpu, unsigned long long xid);
/* The value of reading r of GPU g now (override, else pattern). */
double mock_value(struct nvmlDevice_st *g, mock_reading r);
/* Wall-clock seconds. */
double mock_now(void);
/* The reading r of GPU g rounded to a whole non-negative number (api.c). */
unsigned int mock_reading_uint(nvmlDevice_t g, mock_reading r);
/* The memory the driver keeps for itself on device d (bytes): a GPU's small reserve, none on a
 * MIG device (api.c). */
unsigned long long mock_reserved_bytes(nvmlDevice_t d);

#endif
