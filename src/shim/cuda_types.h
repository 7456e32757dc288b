/*
 * The part of the CUDA driver API (cuda.h) and NVML API (nvml.h) that libgpushare.so needs,
 * declared here so that neither header is needed to build.
 *
 * Every declaration matches the vendor header of CUDA 12.x and NVML 12.x on LP64 Linux: the
 * same names, the same enumeration values, the same member order. Structures whose layout the
 * library reads or the fake driver fills are checked by static assertions on their size and on
 * the offsets of the members read. Only what is used is declared; an opaque handle is a pointer
 * to an incomplete structure, exactly as in cuda.h.
 */
#ifndef GP_SHIM_CUDA_TYPES_H
#define GP_SHIM_CUDA_TYPES_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

/* ---- CUDA driver API ---- */

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef uint64_t cuuint64_t;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUarray_st *CUarray;
typedef struct CUmipmappedArray_st *CUmipmappedArray;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlaunchAttribute_st CUlaunchAttribute;
typedef struct CUmod_st *CUmodule;
typedef struct CUgraphExec_st *CUgraphExec;

typedef struct CUuuid_st {
    char bytes[16];
} CUuuid;

/* Stream capture (CUDA graphs): a capturing stream runs nothing, and synchronising it would
 * invalidate the capture. */
typedef enum CUstreamCaptureStatus_enum {
    CU_STREAM_CAPTURE_STATUS_NONE = 0,
    CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
    CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2
} CUstreamCaptureStatus;

typedef enum CUstreamCaptureMode_enum {
    CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    CU_STREAM_CAPTURE_MODE_RELAXED = 2
} CUstreamCaptureMode;

/* The special stream handles of cuda.h. */
#define CU_STREAM_LEGACY     ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

/* cuGetProcAddress flags and the symbol status of cuGetProcAddress_v2. */
typedef enum CUdriverProcAddress_flags_enum {
    CU_GET_PROC_ADDRESS_DEFAULT = 0,
    CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,
    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1
} CUdriverProcAddress_flags;

typedef enum CUdriverProcAddressQueryResult_enum {
    CU_GET_PROC_ADDRESS_SUCCESS = 0,
    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} CUdriverProcAddressQueryResult;

typedef enum CUarray_format_enum {
    CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
    CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
    CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
    CU_AD_FORMAT_SIGNED_INT8 = 0x08,
    CU_AD_FORMAT_SIGNED_INT16 = 0x09,
    CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
    CU_AD_FORMAT_HALF = 0x10,
    CU_AD_FORMAT_FLOAT = 0x20,
    CU_AD_FORMAT_BC1_UNORM = 0x91,
    CU_AD_FORMAT_BC7_UNORM_SRGB = 0x9e
} CUarray_format;

/* CUDA_ARRAY3D_DESCRIPTOR.Flags that matter for accounting. */
#define CUDA_ARRAY3D_LAYERED          0x01
#define CUDA_ARRAY3D_SPARSE           0x40
#define CUDA_ARRAY3D_DEFERRED_MAPPING 0x80

typedef struct CUDA_ARRAY_DESCRIPTOR_st {
    size_t Width;
    size_t Height;
    CUarray_format Format;
    unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;

typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
    size_t Width;
    size_t Height;
    size_t Depth;
    CUarray_format Format;
    unsigned int NumChannels;
    unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

typedef enum CUmemLocationType_enum {
    CU_MEM_LOCATION_TYPE_INVALID = 0,
    CU_MEM_LOCATION_TYPE_DEVICE = 1,
    CU_MEM_LOCATION_TYPE_HOST = 2,
    CU_MEM_LOCATION_TYPE_HOST_NUMA = 3,
    CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 4
} CUmemLocationType;

typedef enum CUmemAllocationType_enum {
    CU_MEM_ALLOCATION_TYPE_INVALID = 0,
    CU_MEM_ALLOCATION_TYPE_PINNED = 1
} CUmemAllocationType;

typedef enum CUmemAllocationHandleType_enum {
    CU_MEM_HANDLE_TYPE_NONE = 0,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
} CUmemAllocationHandleType;

typedef struct CUmemLocation_st {
    CUmemLocationType type;
    int id;
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
    CUmemAllocationType type;
    CUmemAllocationHandleType requestedHandleTypes;
    CUmemLocation location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} CUmemAllocationProp;

/* CUDA 12.2 split the tail of reserved[64] into maxSize and usage; the size and the members
 * read here did not move. */
typedef struct CUmemPoolProps_st {
    CUmemAllocationType allocType;
    CUmemAllocationHandleType handleTypes;
    CUmemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps;

typedef struct CUlaunchConfig_st {
    unsigned int gridDimX;
    unsigned int gridDimY;
    unsigned int gridDimZ;
    unsigned int blockDimX;
    unsigned int blockDimY;
    unsigned int blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr is 64-bit on LP64");
static_assert(sizeof(CUresult) == 4, "CUresult is an int-sized enum");
static_assert(sizeof(CUDA_ARRAY_DESCRIPTOR) == 24, "CUDA_ARRAY_DESCRIPTOR layout");
static_assert(offsetof(CUDA_ARRAY_DESCRIPTOR, NumChannels) == 20, "CUDA_ARRAY_DESCRIPTOR");
static_assert(sizeof(CUDA_ARRAY3D_DESCRIPTOR) == 40, "CUDA_ARRAY3D_DESCRIPTOR layout");
static_assert(offsetof(CUDA_ARRAY3D_DESCRIPTOR, Flags) == 32, "CUDA_ARRAY3D_DESCRIPTOR");
static_assert(sizeof(CUmemLocation) == 8, "CUmemLocation layout");
static_assert(sizeof(CUmemAllocationProp) == 32, "CUmemAllocationProp layout");
static_assert(offsetof(CUmemAllocationProp, location) == 8, "CUmemAllocationProp.location");
static_assert(sizeof(CUmemPoolProps) == 88, "CUmemPoolProps layout");
static_assert(offsetof(CUmemPoolProps, location) == 8, "CUmemPoolProps.location");
static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout");
static_assert(sizeof(CUuuid) == 16, "CUuuid layout");
static_assert(offsetof(CUlaunchConfig, hStream) == 32, "CUlaunchConfig.hStream");

/* ---- NVML ---- */

typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;

#define nvmlMemory_v2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

typedef struct nvmlUtilization_st {
    unsigned int gpu;    /* percent of time a kernel ran, over the last sample period */
    unsigned int memory; /* percent of time device memory was read or written */
} nvmlUtilization_t;

/* nvmlDeviceGetProcessUtilization: one sample per process with a non-zero utilisation in a
 * sample period; timeStamp is a CPU time in microseconds. */
typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* nvmlDeviceGetComputeRunningProcesses_v3 (nvmlProcessInfo_v2_t in nvml.h). */
typedef struct nvmlProcessInfo_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t layout");
static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");
static_assert(offsetof(nvmlMemory_v2_t, free) == 24, "nvmlMemory_v2_t.free");
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t");
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16, "smUtil");
static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t layout");

#endif
