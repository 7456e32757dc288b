/*
 * The part of the NVML C ABI that gpupool uses, declared by us (NVIDIA's nvml.h is not needed to
 * build, and we load libnvidia-ml.so.1 with dlopen anyway).
 *
 * Everything here must match the real library bit for bit: names, versioned symbols (nvmlInit_v2,
 * nvmlDeviceGetPciInfo_v3, ...), enum values, struct layouts and buffer sizes are those of
 * NVIDIA's public nvml.h (API version 12 and later). Struct layouts are pinned by the static
 * assertions at the end. Two users share this header:
 *
 *   - src/agent/nvml.c resolves every function of GP_NVML_FUNCS with dlsym into a table of
 *     pointers, struct gp_nvml_fns (no direct calls, so the agent runs on hosts without a
 *     driver); src/agent/mig.c calls the MIG management functions through the same table;
 *   - src/nvml-mock defines the same functions; the prototypes below make the compiler check
 *     that its definitions have exactly the real signatures.
 */
#ifndef GP_AGENT_NVML_ABI_H
#define GP_AGENT_NVML_ABI_H

#include <stddef.h>

/* X(NAME, value, message): the return codes (nvmlReturn_t) and the text nvmlErrorString gives. */
#define GP_NVML_RETURN_MAP(X)                                                                      \
    X(SUCCESS, 0, "Success")                                                                       \
    X(ERROR_UNINITIALIZED, 1, "Uninitialized")                                                     \
    X(ERROR_INVALID_ARGUMENT, 2, "Invalid Argument")                                               \
    X(ERROR_NOT_SUPPORTED, 3, "Not Supported")                                                     \
    X(ERROR_NO_PERMISSION, 4, "Insufficient Permissions")                                          \
    X(ERROR_ALREADY_INITIALIZED, 5, "Already Initialized")                                         \
    X(ERROR_NOT_FOUND, 6, "Not Found")                                                             \
    X(ERROR_INSUFFICIENT_SIZE, 7, "Insufficient Size")                                             \
    X(ERROR_INSUFFICIENT_POWER, 8, "Insufficient External Power")                                  \
    X(ERROR_DRIVER_NOT_LOADED, 9, "Driver Not Loaded")                                             \
    X(ERROR_TIMEOUT, 10, "Timeout")                                                                \
    X(ERROR_IRQ_ISSUE, 11, "Interrupt request issue")                                              \
    X(ERROR_LIBRARY_NOT_FOUND, 12, "NVML Shared Library Not Found")                                \
    X(ERROR_FUNCTION_NOT_FOUND, 13, "Function Not Found")                                          \
    X(ERROR_CORRUPTED_INFOROM, 14, "Corrupted infoROM")                                            \
    X(ERROR_GPU_IS_LOST, 15, "GPU is lost")                                                        \
    X(ERROR_RESET_REQUIRED, 16, "GPU requires restart")                                            \
    X(ERROR_OPERATING_SYSTEM, 17, "GPU access blocked by the operating system")                    \
    X(ERROR_LIB_RM_VERSION_MISMATCH, 18, "Driver/library version mismatch")                        \
    X(ERROR_IN_USE, 19, "In use by another client")                                                \
    X(ERROR_MEMORY, 20, "Insufficient Memory")                                                     \
    X(ERROR_NO_DATA, 21, "No data")                                                                \
    X(ERROR_VGPU_ECC_NOT_SUPPORTED, 22, "vGPU operation not available with ECC enabled")           \
    X(ERROR_INSUFFICIENT_RESOURCES, 23, "Insufficient resources")                                  \
    X(ERROR_FREQ_NOT_SUPPORTED, 24, "Frequency not supported")                                     \
    X(ERROR_ARGUMENT_VERSION_MISMATCH, 25, "Argument version mismatch")                            \
    X(ERROR_DEPRECATED, 26, "Deprecated")                                                          \
    X(ERROR_NOT_READY, 27, "Not ready")                                                            \
    X(ERROR_GPU_NOT_FOUND, 28, "GPU not found")                                                    \
    X(ERROR_INVALID_STATE, 29, "Invalid state")                                                    \
    X(ERROR_UNKNOWN, 999, "Unknown Error")

typedef enum nvmlReturn_enum {
#define GP_NVML_RETURN_ENUM(name, value, msg) NVML_##name = (value),
    GP_NVML_RETURN_MAP(GP_NVML_RETURN_ENUM)
#undef GP_NVML_RETURN_ENUM
} nvmlReturn_t;

/* Opaque handles. The real library and the mock each define the structs behind them. A MIG
 * device is an nvmlDevice_t too; a GPU instance and a compute instance have handles of their own.
 */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;

/* Buffer sizes of the string getters (large enough for every value the driver returns). */
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE        96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE        96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE     32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE  16
/* Links a GPU may have (18 on H100); an index past a GPU's own count is INVALID_ARGUMENT. */
#define NVML_NVLINK_MAX_LINKS 18

/* nvmlDeviceGetMigMode modes. */
#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE  1

/*
 * GPU instance profiles: the `profile` argument of nvmlDeviceGetGpuInstanceProfileInfoV is one of
 * these indexes; the info it fills carries the profile id (nvidia-smi's "ID", 19 for 1g.10gb on
 * an H100) that the other GPU instance functions take. REV2 is the single-slice profile with
 * twice the memory (1g.20gb on 80 GB parts). Newer headers append more (GFX, NO_ME, ALL_ME
 * variants) and raise the count; their names never match a plain "<c>g.<m>gb" profile.
 */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE      0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE      0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE      0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE      0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE      0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE      0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE      0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 0x8
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 0x9
#define NVML_GPU_INSTANCE_PROFILE_COUNT        0xA

/* Compute instance profiles (indexes, and also the ids the compute instance functions take). */
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE      0x0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE      0x1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE      0x2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE      0x3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE      0x4
#define NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE      0x5
#define NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE      0x6
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT        0x8

/* Engine profiles of compute instances: all engines of the GPU instance shared. */
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_COUNT  0x1

/* Event types (nvmlDeviceRegisterEvents mask, nvmlEventData_t.eventType). */
#define nvmlEventTypeSingleBitEccError 0x0000000000000001LL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002LL
#define nvmlEventTypePState            0x0000000000000004LL
#define nvmlEventTypeXidCriticalError  0x0000000000000008LL

typedef struct nvmlPciInfo_st {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* "0000:07:00.0" */
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;                       /* device id << 16 | vendor id */
    unsigned int pciSubSystemId;                    /* added in NVML 2.285 */
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "00000000:07:00.0" (filled by _v3) */
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
    unsigned long long total; /* bytes */
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu;    /* percent of time a kernel ran, over the last sample period */
    unsigned int memory; /* percent of time device memory was read or written */
} nvmlUtilization_t;

typedef enum nvmlEnableState_enum {
    NVML_FEATURE_DISABLED = 0,
    NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlTemperatureSensors_enum {
    NVML_TEMPERATURE_GPU = 0,
    NVML_TEMPERATURE_COUNT
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
    NVML_CLOCK_GRAPHICS = 0,
    NVML_CLOCK_SM = 1,
    NVML_CLOCK_MEM = 2,
    NVML_CLOCK_VIDEO = 3,
    NVML_CLOCK_COUNT
} nvmlClockType_t;

typedef enum nvmlMemoryErrorType_enum {
    NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
    NVML_MEMORY_ERROR_TYPE_COUNT
} nvmlMemoryErrorType_t;

typedef enum nvmlEccCounterType_enum {
    NVML_VOLATILE_ECC = 0,  /* since the last driver load */
    NVML_AGGREGATE_ECC = 1, /* over the GPU's life */
    NVML_ECC_COUNTER_TYPE_COUNT
} nvmlEccCounterType_t;

/* Scope of nvmlDeviceGetMemoryAffinity: the NUMA nodes (or sockets) nearest to the GPU. */
typedef unsigned int nvmlAffinityScope_t;
#define NVML_AFFINITY_SCOPE_NODE   0
#define NVML_AFFINITY_SCOPE_SOCKET 1

typedef enum nvmlIntNvLinkDeviceType_enum {
    NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
    NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
    NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
    NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF
} nvmlIntNvLinkDeviceType_t;

/* The layout nvmlEventSetWait_v2 fills (v1 stopped after eventData). */
typedef struct nvmlEventData_st {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;   /* the XID for nvmlEventTypeXidCriticalError (999: unknown) */
    unsigned int gpuInstanceId;     /* MIG: the instance the XID is attributed to; else ~0u */
    unsigned int computeInstanceId; /* likewise */
} nvmlEventData_t;

/* Where a GPU instance lies: its first memory slice and the number of memory slices. */
typedef struct nvmlGpuInstancePlacement_st {
    unsigned int start;
    unsigned int size;
} nvmlGpuInstancePlacement_t;

/* nvmlDeviceGetGpuInstanceProfileInfoV's answer; the caller sets version first. */
typedef struct nvmlGpuInstanceProfileInfo_v2_st {
    unsigned int version; /* nvmlGpuInstanceProfileInfo_v2 */
    unsigned int id;      /* the profile id the other GPU instance functions take */
    unsigned int isP2pSupported;
    unsigned int sliceCount;    /* compute slices (the "g" of "3g.40gb") */
    unsigned int instanceCount; /* at most this many instances of the profile per GPU */
    unsigned int multiprocessorCount;
    unsigned int copyEngineCount;
    unsigned int decoderCount;
    unsigned int encoderCount;
    unsigned int jpegCount;
    unsigned int ofaCount;
    unsigned long long memorySizeMB;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE]; /* "MIG 1g.10gb" */
} nvmlGpuInstanceProfileInfo_v2_t;

/* A versioned struct's version word: its size, and the version in the top byte. */
#define GP_NVML_STRUCT_VERSION(type, ver) (unsigned int)(sizeof(type) | ((unsigned int)(ver) << 24))
#define nvmlGpuInstanceProfileInfo_v2     GP_NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v2_t, 2)

typedef struct nvmlGpuInstanceInfo_st {
    nvmlDevice_t device; /* the parent GPU */
    unsigned int id;     /* GPU instance id, unique on the GPU */
    unsigned int profileId;
    nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
    unsigned int id;
    unsigned int sliceCount; /* compute slices of the GPU instance it takes */
    unsigned int instanceCount;
    unsigned int multiprocessorCount;
    unsigned int sharedCopyEngineCount;
    unsigned int sharedDecoderCount;
    unsigned int sharedEncoderCount;
    unsigned int sharedJpegCount;
    unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
    unsigned int start;
    unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceInfo_st {
    nvmlDevice_t device;           /* the parent GPU */
    nvmlGpuInstance_t gpuInstance; /* the GPU instance it belongs to */
    unsigned int id;               /* compute instance id, unique in its GPU instance */
    unsigned int profileId;
    nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

/* A process using a GPU (nvmlDeviceGetComputeRunningProcesses_v3). On a GPU in MIG mode the
 * instance ids say where it runs; otherwise they are ~0u. */
typedef struct nvmlProcessInfo_st {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

/* usedGpuMemory when NVML cannot tell (e.g. without the privileges to see the process). */
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

/* Field values (nvmlDeviceGetFieldValues): the caller sets fieldId (and scopeId) of each entry;
 * NVML fills the rest, with a return code per entry (a field the driver does not know answers
 * its own error, the call itself still SUCCESS). */
typedef enum nvmlValueType_enum {
    NVML_VALUE_TYPE_DOUBLE = 0,
    NVML_VALUE_TYPE_UNSIGNED_INT = 1,
    NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
    NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
    NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
    NVML_VALUE_TYPE_SIGNED_INT = 5,
    NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
    NVML_VALUE_TYPE_COUNT
} nvmlValueType_t;

typedef union nvmlValue_st {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
    unsigned int fieldId;
    unsigned int scopeId; /* e.g. the link of an NVLink field */
    long long timestamp;  /* microseconds since 1970 */
    long long latencyUsec;
    nvmlValueType_t valueType;
    nvmlReturn_t nvmlReturn; /* this entry's result: value is valid only on SUCCESS */
    nvmlValue_t value;
} nvmlFieldValue_t;

/* The field with what the driver says must be done to recover the GPU (drivers from R570;
 * earlier ones answer the entry with an error): one of nvmlDeviceGpuRecoveryAction_t. */
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230

typedef enum nvmlDeviceGpuRecoveryAction_s {
    NVML_GPU_RECOVERY_ACTION_NONE = 0,
    NVML_GPU_RECOVERY_ACTION_GPU_RESET = 1,
    NVML_GPU_RECOVERY_ACTION_NODE_REBOOT = 2,
    NVML_GPU_RECOVERY_ACTION_DRAIN_P2P = 3,
    NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET = 4
} nvmlDeviceGpuRecoveryAction_t;

/* Memory temperature (HBM parts), a field value: degrees C; drivers or GPUs without a memory
 * sensor answer the entry with an error. */
#define NVML_FI_DEV_MEMORY_TEMP 82

/* nvmlDeviceGetMemoryInfo_v2's answer (drivers from R510); the caller sets version first.
 * reserved is what the driver keeps for itself; used excludes it (v1's used includes it). */
typedef struct nvmlMemory_v2_st {
    unsigned int version; /* nvmlMemory_v2 */
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;

#define nvmlMemory_v2 GP_NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2)

/* The NVLink error counters (nvmlDeviceGetNvLinkErrorCounter), per link since the driver
 * loaded. */
typedef enum nvmlNvLinkErrorCounter_enum {
    NVML_NVLINK_ERROR_DL_REPLAY = 0,   /* data link transmit replays */
    NVML_NVLINK_ERROR_DL_RECOVERY = 1, /* data link transmit recoveries */
    NVML_NVLINK_ERROR_DL_CRC_FLIT = 2, /* receive flow control digit CRC errors */
    NVML_NVLINK_ERROR_DL_CRC_DATA = 3, /* receive data CRC errors */
    NVML_NVLINK_ERROR_DL_ECC_DATA = 4,
    NVML_NVLINK_ERROR_COUNT
} nvmlNvLinkErrorCounter_t;

/* The policies nvmlDeviceGetViolationStatus reports how long they held the clocks down for. */
typedef enum nvmlPerfPolicyType_enum {
    NVML_PERF_POLICY_POWER = 0,
    NVML_PERF_POLICY_THERMAL = 1,
    NVML_PERF_POLICY_SYNC_BOOST = 2,
    NVML_PERF_POLICY_BOARD_LIMIT = 3,
    NVML_PERF_POLICY_LOW_UTILIZATION = 4,
    NVML_PERF_POLICY_RELIABILITY = 5,
    NVML_PERF_POLICY_TOTAL_APP_CLOCKS = 10,
    NVML_PERF_POLICY_TOTAL_BASE_CLOCKS = 11,
    NVML_PERF_POLICY_COUNT
} nvmlPerfPolicyType_t;

typedef struct nvmlViolationTime_st {
    unsigned long long referenceTime; /* CPU timestamp, microseconds */
    unsigned long long violationTime; /* nanoseconds held below the application clocks */
} nvmlViolationTime_t;

/* Some bits of nvmlDeviceGetCurrentClocksEventReasons (called ...ThrottleReasons before R535;
 * the names are those of the current header). */
#define nvmlClocksEventReasonGpuIdle              0x0000000000000001ULL
#define nvmlClocksEventReasonSwPowerCap           0x0000000000000004ULL
#define nvmlClocksEventReasonSwThermalSlowdown    0x0000000000000020ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x0000000000000040ULL

/* One sample of nvmlDeviceGetProcessUtilization: a process's share of the GPU's engines over
 * the driver's last sample period (percent). */
typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp; /* CPU timestamp, microseconds */
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/*
 * X(return type, symbol, (parameters), required): the functions gpupool calls. Optional ones
 * (0) are absent from older drivers; the agent then does without what they give (see nvml.h).
 */
/* clang-format off */
#define GP_NVML_FUNCS(X)                                                                           \
    X(nvmlReturn_t, nvmlInit_v2, (void), 1)                                                        \
    X(nvmlReturn_t, nvmlShutdown, (void), 1)                                                       \
    X(const char *, nvmlErrorString, (nvmlReturn_t result), 1)                                     \
    X(nvmlReturn_t, nvmlSystemGetDriverVersion, (char *version, unsigned int length), 1)           \
    X(nvmlReturn_t, nvmlSystemGetCudaDriverVersion, (int *cudaDriverVersion), 1)                   \
    X(nvmlReturn_t, nvmlDeviceGetCount_v2, (unsigned int *deviceCount), 1)                         \
    X(nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t *device), 1)  \
    X(nvmlReturn_t, nvmlDeviceGetUUID, (nvmlDevice_t device, char *uuid, unsigned int length), 1)  \
    X(nvmlReturn_t, nvmlDeviceGetName, (nvmlDevice_t device, char *name, unsigned int length), 1)  \
    X(nvmlReturn_t, nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t *memory), 1)       \
    X(nvmlReturn_t, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t *pci), 1)         \
    X(nvmlReturn_t, nvmlDeviceGetMemoryAffinity,                                                   \
      (nvmlDevice_t device, unsigned int nodeSetSize, unsigned long *nodeSet,                      \
       nvmlAffinityScope_t scope),                                                                 \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlDeviceGetNvLinkState,                                                      \
      (nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive), 1)                    \
    X(nvmlReturn_t, nvmlDeviceGetNvLinkRemotePciInfo_v2,                                           \
      (nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci), 1)                             \
    X(nvmlReturn_t, nvmlDeviceGetNvLinkRemoteDeviceType,                                           \
      (nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType), 0)   \
    X(nvmlReturn_t, nvmlDeviceGetMigMode,                                                          \
      (nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode), 0)              \
    X(nvmlReturn_t, nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t device, unsigned int *count), 0) \
    X(nvmlReturn_t, nvmlDeviceGetMigDeviceHandleByIndex,                                           \
      (nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice), 0)                       \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int *id), 0)        \
    X(nvmlReturn_t, nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int *id), 0)    \
    X(nvmlReturn_t, nvmlDeviceGetMinorNumber, (nvmlDevice_t device, unsigned int *minorNumber), 0) \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstanceById,                                                  \
      (nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t *gpuInstance), 0)                   \
    X(nvmlReturn_t, nvmlGpuInstanceGetInfo,                                                        \
      (nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info), 0)                             \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfoV,                                          \
      (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_v2_t *info), 0)       \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstancePossiblePlacements_v2,                                 \
      (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstancePlacement_t *placements,        \
       unsigned int *count),                                                                       \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstances,                                                     \
      (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstances,               \
       unsigned int *count),                                                                       \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlDeviceCreateGpuInstanceWithPlacement,                                      \
      (nvmlDevice_t device, unsigned int profileId, const nvmlGpuInstancePlacement_t *placement,   \
       nvmlGpuInstance_t *gpuInstance),                                                            \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlGpuInstanceDestroy, (nvmlGpuInstance_t gpuInstance), 0)                    \
    X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceProfileInfo,                                  \
      (nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,               \
       nvmlComputeInstanceProfileInfo_t *info),                                                    \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstances,                                            \
      (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                                      \
       nvmlComputeInstance_t *computeInstances, unsigned int *count),                              \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlGpuInstanceCreateComputeInstance,                                          \
      (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                                      \
       nvmlComputeInstance_t *computeInstance),                                                    \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlComputeInstanceDestroy, (nvmlComputeInstance_t computeInstance), 0)        \
    X(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v3,                                       \
      (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos), 0)                 \
    X(nvmlReturn_t, nvmlDeviceGetUtilizationRates,                                                 \
      (nvmlDevice_t device, nvmlUtilization_t *utilization), 1)                                    \
    X(nvmlReturn_t, nvmlDeviceGetTemperature,                                                      \
      (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp), 1)           \
    X(nvmlReturn_t, nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int *power), 1)        \
    X(nvmlReturn_t, nvmlDeviceGetClockInfo,                                                        \
      (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock), 1)                         \
    X(nvmlReturn_t, nvmlDeviceGetTotalEccErrors,                                                   \
      (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType,     \
       unsigned long long *eccCounts),                                                             \
      1)                                                                                           \
    X(nvmlReturn_t, nvmlDeviceGetEccMode,                                                          \
      (nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending), 0)            \
    X(nvmlReturn_t, nvmlDeviceGetRemappedRows,                                                     \
      (nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,                         \
       unsigned int *isPending, unsigned int *failureOccurred),                                    \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlDeviceGetRetiredPagesPendingStatus,                                        \
      (nvmlDevice_t device, nvmlEnableState_t *isPending), 0)                                      \
    X(nvmlReturn_t, nvmlDeviceGetFieldValues,                                                      \
      (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values), 0)                         \
    X(nvmlReturn_t, nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t device, nvmlMemory_v2_t *memory), 0) \
    X(nvmlReturn_t, nvmlDeviceGetEncoderUtilization,                                               \
      (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs), 0)         \
    X(nvmlReturn_t, nvmlDeviceGetDecoderUtilization,                                               \
      (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs), 0)         \
    X(nvmlReturn_t, nvmlDeviceGetPowerManagementLimit, (nvmlDevice_t device, unsigned int *limit), \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlDeviceGetTotalEnergyConsumption,                                           \
      (nvmlDevice_t device, unsigned long long *energy), 0)                                        \
    X(nvmlReturn_t, nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t device, unsigned int *value), 0) \
    X(nvmlReturn_t, nvmlDeviceGetNvLinkErrorCounter,                                               \
      (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,                   \
       unsigned long long *counterValue),                                                          \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlDeviceGetViolationStatus,                                                  \
      (nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType, nvmlViolationTime_t *violTime),  \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlDeviceGetCurrentClocksEventReasons,                                        \
      (nvmlDevice_t device, unsigned long long *clocksEventReasons), 0)                            \
    X(nvmlReturn_t, nvmlDeviceGetCurrentClocksThrottleReasons,                                     \
      (nvmlDevice_t device, unsigned long long *clocksThrottleReasons), 0)                         \
    X(nvmlReturn_t, nvmlDeviceGetProcessUtilization,                                               \
      (nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,                           \
       unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp),                   \
      0)                                                                                           \
    X(nvmlReturn_t, nvmlEventSetCreate, (nvmlEventSet_t *set), 1)                                  \
    X(nvmlReturn_t, nvmlDeviceRegisterEvents,                                                      \
      (nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set), 1)                 \
    X(nvmlReturn_t, nvmlEventSetWait_v2,                                                           \
      (nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms), 1)                      \
    X(nvmlReturn_t, nvmlEventSetFree, (nvmlEventSet_t set), 1)
/* clang-format on */

/* Exported with default visibility: the mock builds with hidden visibility for everything else. */
#define GP_NVML_PROTO(ret, name, params, required)                                                 \
    __attribute__((visibility("default"))) ret name params;
GP_NVML_FUNCS(GP_NVML_PROTO)
#undef GP_NVML_PROTO

/* The agent's table of pointers to these functions: src/agent/nvml.c fills it with dlsym (an
 * optional function the library lacks stays NULL) and src/agent/mig.c calls through it. */
struct gp_nvml_fns {
#define GP_NVML_PTR(ret, name, params, required) ret(*name) params;
    GP_NVML_FUNCS(GP_NVML_PTR)
#undef GP_NVML_PTR
};

/* The layouts of the real header (x86-64 and aarch64 LP64). */
_Static_assert(offsetof(nvmlPciInfo_t, domain) == 16, "nvmlPciInfo_t layout");
_Static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t layout");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t size");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t size");
_Static_assert(offsetof(nvmlEventData_t, gpuInstanceId) == 24, "nvmlEventData_t layout");
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t size");
_Static_assert(sizeof(nvmlGpuInstancePlacement_t) == 8, "nvmlGpuInstancePlacement_t size");
_Static_assert(offsetof(nvmlGpuInstanceProfileInfo_v2_t, memorySizeMB) == 48,
               "nvmlGpuInstanceProfileInfo_v2_t layout");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_v2_t) == 152,
               "nvmlGpuInstanceProfileInfo_v2_t size");
_Static_assert(nvmlGpuInstanceProfileInfo_v2 == 0x02000098u, "nvmlGpuInstanceProfileInfo_v2");
_Static_assert(offsetof(nvmlGpuInstanceInfo_t, placement) == 16, "nvmlGpuInstanceInfo_t layout");
_Static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24, "nvmlGpuInstanceInfo_t size");
_Static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36,
               "nvmlComputeInstanceProfileInfo_t size");
_Static_assert(sizeof(nvmlComputeInstanceInfo_t) == 32, "nvmlComputeInstanceInfo_t size");
_Static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8, "nvmlProcessInfo_t layout");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t size");
_Static_assert(offsetof(nvmlMemory_v2_t, reserved) == 16, "nvmlMemory_v2_t layout");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t size");
_Static_assert(nvmlMemory_v2 == 0x02000028u, "nvmlMemory_v2");
_Static_assert(sizeof(nvmlViolationTime_t) == 16, "nvmlViolationTime_t size");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8,
               "nvmlProcessUtilizationSample_t layout");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t size");
_Static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t size");
_Static_assert(offsetof(nvmlFieldValue_t, valueType) == 24, "nvmlFieldValue_t layout");
_Static_assert(offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t layout");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t size");

#endif
