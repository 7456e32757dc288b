/*
 * The one list of driver functions libgpushare.so intercepts or calls.
 *
 * Each row is X(lib, kind, ret, name, gpname, minver, flags, params):
 *   lib     CUDA (libcuda.so.1) or NVML (libnvidia-ml.so.1): where the real function lives;
 *   kind    HOOK: exported under its real name, returned by our dlsym and by our
 *           cuGetProcAddress in place of the real one; CALL: only called by the library;
 *   ret     return type; name: the symbol as exported by the real library;
 *   gpname  the name cuGetProcAddress is asked for (no _v2/_ptsz suffix), "" if none;
 *   minver  the lowest cudaVersion argument for which cuGetProcAddress(gpname) means this
 *           symbol (cuda.h's versioned #defines: cuMemAlloc means cuMemAlloc_v2 from 3020);
 *   flags   GP_PTDS: the per-thread-default-stream variant (cuGetProcAddress flag
 *           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM), else 0;
 *   params  the parameter list, exactly as in cuda.h / nvml.h.
 *
 * From this list shim.h generates the function-pointer types, the indices of the table of real
 * functions (resolved lazily from the real library, shim.c) and the prototypes of the hooks;
 * dlsym.c generates the table that both dlsym and cuGetProcAddress consult (names, versions,
 * flags, hooks). A hook is written once, in hooks_mem.c, hooks_info.c or
 * hooks_launch.c; adding a row without writing its hook fails at link time.
 *
 * Legacy rows (minver 0, names without _v2) are the pre-CUDA-3.2 entry points with 32-bit sizes
 * that libcuda still exports: while a limit applies they refuse (see hooks_mem.c), so that
 * dlsym(h, "cuMemAlloc") is not a way around the limit.
 */
#ifndef GP_SHIM_HOOKS_H
#define GP_SHIM_HOOKS_H

#define GP_PTDS 1

#define GP_SHIM_FUNCTIONS(X)                                                                       \
    /* Entry-point lookup. */                                                                      \
    X(CUDA, HOOK, CUresult, cuGetProcAddress, "cuGetProcAddress", 11030, 0,                        \
      (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags))                         \
    X(CUDA, HOOK, CUresult, cuGetProcAddress_v2, "cuGetProcAddress", 12000, 0,                     \
      (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,                          \
       CUdriverProcAddressQueryResult *symbolStatus))                                              \
    /* Linear device memory. */                                                                    \
    X(CUDA, HOOK, CUresult, cuMemAlloc_v2, "cuMemAlloc", 3020, 0,                                  \
      (CUdeviceptr * dptr, size_t bytesize))                                                       \
    X(CUDA, HOOK, CUresult, cuMemAllocPitch_v2, "cuMemAllocPitch", 3020, 0,                        \
      (CUdeviceptr * dptr, size_t * pPitch, size_t WidthInBytes, size_t Height,                    \
       unsigned int ElementSizeBytes))                                                             \
    X(CUDA, HOOK, CUresult, cuMemAllocManaged, "cuMemAllocManaged", 6000, 0,                       \
      (CUdeviceptr * dptr, size_t bytesize, unsigned int flags))                                   \
    X(CUDA, HOOK, CUresult, cuMemFree_v2, "cuMemFree", 3020, 0, (CUdeviceptr dptr))                \
    /* Stream-ordered allocation and memory pools. */                                              \
    X(CUDA, HOOK, CUresult, cuMemAllocAsync, "cuMemAllocAsync", 11020, 0,                          \
      (CUdeviceptr * dptr, size_t bytesize, CUstream hStream))                                     \
    X(CUDA, HOOK, CUresult, cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, GP_PTDS,               \
      (CUdeviceptr * dptr, size_t bytesize, CUstream hStream))                                     \
    X(CUDA, HOOK, CUresult, cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, 0,          \
      (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream))                  \
    X(CUDA, HOOK, CUresult, cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020,        \
      GP_PTDS, (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream))         \
    X(CUDA, HOOK, CUresult, cuMemFreeAsync, "cuMemFreeAsync", 11020, 0,                            \
      (CUdeviceptr dptr, CUstream hStream))                                                        \
    X(CUDA, HOOK, CUresult, cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020, GP_PTDS,                 \
      (CUdeviceptr dptr, CUstream hStream))                                                        \
    X(CUDA, HOOK, CUresult, cuMemPoolCreate, "cuMemPoolCreate", 11020, 0,                          \
      (CUmemoryPool * pool, const CUmemPoolProps *poolProps))                                      \
    X(CUDA, HOOK, CUresult, cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 11020, 0,      \
      (CUmemoryPool * pool_out, CUdevice dev))                                                     \
    X(CUDA, HOOK, CUresult, cuDeviceGetMemPool, "cuDeviceGetMemPool", 11020, 0,                    \
      (CUmemoryPool * pool, CUdevice dev))                                                         \
    /* Virtual memory management: physical allocations and their mappings. */                      \
    X(CUDA, HOOK, CUresult, cuMemCreate, "cuMemCreate", 10020, 0,                                  \
      (CUmemGenericAllocationHandle * handle, size_t size, const CUmemAllocationProp *prop,        \
       unsigned long long flags))                                                                  \
    X(CUDA, HOOK, CUresult, cuMemRelease, "cuMemRelease", 10020, 0,                                \
      (CUmemGenericAllocationHandle handle))                                                       \
    X(CUDA, HOOK, CUresult, cuMemMap, "cuMemMap", 10020, 0,                                        \
      (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,           \
       unsigned long long flags))                                                                  \
    X(CUDA, HOOK, CUresult, cuMemUnmap, "cuMemUnmap", 10020, 0, (CUdeviceptr ptr, size_t size))    \
    /* Arrays. */                                                                                  \
    X(CUDA, HOOK, CUresult, cuArrayCreate_v2, "cuArrayCreate", 3020, 0,                            \
      (CUarray * pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray))                            \
    X(CUDA, HOOK, CUresult, cuArray3DCreate_v2, "cuArray3DCreate", 3020, 0,                        \
      (CUarray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray))                          \
    X(CUDA, HOOK, CUresult, cuArrayDestroy, "cuArrayDestroy", 2000, 0, (CUarray hArray))           \
    X(CUDA, HOOK, CUresult, cuMipmappedArrayCreate, "cuMipmappedArrayCreate", 5000, 0,             \
      (CUmipmappedArray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,             \
       unsigned int numMipmapLevels))                                                              \
    X(CUDA, HOOK, CUresult, cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy", 5000, 0,           \
      (CUmipmappedArray hMipmappedArray))                                                          \
    /* Legacy 32-bit entry points (refused while a limit applies). */                              \
    X(CUDA, HOOK, CUresult, cuMemAlloc, "cuMemAlloc", 0, 0,                                        \
      (unsigned int *dptr, unsigned int bytesize))                                                 \
    X(CUDA, HOOK, CUresult, cuMemAllocPitch, "cuMemAllocPitch", 0, 0,                              \
      (unsigned int *dptr, unsigned int *pPitch, unsigned int WidthInBytes, unsigned int Height,   \
       unsigned int ElementSizeBytes))                                                             \
    X(CUDA, HOOK, CUresult, cuArrayCreate, "cuArrayCreate", 0, 0,                                  \
      (CUarray * pHandle, const void *pAllocateArray))                                             \
    X(CUDA, HOOK, CUresult, cuArray3DCreate, "cuArray3DCreate", 0, 0,                              \
      (CUarray * pHandle, const void *pAllocateArray))                                             \
    /* What the job is told about memory. */                                                       \
    X(CUDA, HOOK, CUresult, cuMemGetInfo_v2, "cuMemGetInfo", 3020, 0,                              \
      (size_t * free_bytes, size_t * total_bytes))                                                 \
    X(CUDA, HOOK, CUresult, cuDeviceTotalMem_v2, "cuDeviceTotalMem", 3020, 0,                      \
      (size_t * bytes, CUdevice dev))                                                              \
    /* Kernel and graph launches: the hook point of the compute limit (throttle.h). */             \
    X(CUDA, HOOK, CUresult, cuLaunchKernel, "cuLaunchKernel", 4000, 0,                             \
      (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,          \
       unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                     \
       unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra))          \
    X(CUDA, HOOK, CUresult, cuLaunchKernel_ptsz, "cuLaunchKernel", 7000, GP_PTDS,                  \
      (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,          \
       unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                     \
       unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra))          \
    X(CUDA, HOOK, CUresult, cuLaunchKernelEx, "cuLaunchKernelEx", 11060, 0,                        \
      (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra))             \
    X(CUDA, HOOK, CUresult, cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 11060, GP_PTDS,             \
      (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra))             \
    X(CUDA, HOOK, CUresult, cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 9000, 0,       \
      (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,          \
       unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                     \
       unsigned int sharedMemBytes, CUstream hStream, void **kernelParams))                        \
    X(CUDA, HOOK, CUresult, cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 9000,     \
      GP_PTDS,                                                                                     \
      (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,          \
       unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                     \
       unsigned int sharedMemBytes, CUstream hStream, void **kernelParams))                        \
    X(CUDA, HOOK, CUresult, cuGraphLaunch, "cuGraphLaunch", 10000, 0,                              \
      (CUgraphExec hGraphExec, CUstream hStream))                                                  \
    X(CUDA, HOOK, CUresult, cuGraphLaunch_ptsz, "cuGraphLaunch", 10000, GP_PTDS,                   \
      (CUgraphExec hGraphExec, CUstream hStream))                                                  \
    /* Called, not hooked: which device an allocation lands on. */                                 \
    X(CUDA, CALL, CUresult, cuCtxGetDevice, "", 0, 0, (CUdevice * device))                         \
    X(CUDA, CALL, CUresult, cuCtxGetCurrent, "", 0, 0, (CUcontext * pctx))                         \
    X(CUDA, CALL, CUresult, cuCtxPushCurrent_v2, "", 0, 0, (CUcontext ctx))                        \
    X(CUDA, CALL, CUresult, cuCtxPopCurrent_v2, "", 0, 0, (CUcontext * pctx))                      \
    X(CUDA, CALL, CUresult, cuStreamGetCtx, "", 0, 0, (CUstream hStream, CUcontext * pctx))        \
    /* Called, not hooked: the compute limit's synchronisation and device identity. */             \
    X(CUDA, CALL, CUresult, cuStreamQuery, "", 0, 0, (CUstream hStream))                           \
    X(CUDA, CALL, CUresult, cuStreamIsCapturing, "", 0, 0,                                         \
      (CUstream hStream, CUstreamCaptureStatus * captureStatus))                                   \
    X(CUDA, CALL, CUresult, cuThreadExchangeStreamCaptureMode, "", 0, 0,                           \
      (CUstreamCaptureMode * mode))                                                                \
    X(CUDA, CALL, CUresult, cuDeviceGetUuid_v2, "", 0, 0, (CUuuid * uuid, CUdevice dev))           \
    X(CUDA, CALL, CUresult, cuDeviceGetUuid, "", 0, 0, (CUuuid * uuid, CUdevice dev))              \
    /* NVML. */                                                                                    \
    X(NVML, HOOK, nvmlReturn_t, nvmlDeviceGetMemoryInfo, "", 0, 0,                                 \
      (nvmlDevice_t device, nvmlMemory_t * memory))                                                \
    X(NVML, HOOK, nvmlReturn_t, nvmlDeviceGetMemoryInfo_v2, "", 0, 0,                              \
      (nvmlDevice_t device, nvmlMemory_v2_t * memory))                                             \
    X(NVML, CALL, nvmlReturn_t, nvmlDeviceGetUUID, "", 0, 0,                                       \
      (nvmlDevice_t device, char *uuid, unsigned int length))                                      \
    X(NVML, CALL, nvmlReturn_t, nvmlDeviceGetIndex, "", 0, 0,                                      \
      (nvmlDevice_t device, unsigned int *index))                                                  \
    /* NVML, for the compute limit's measurements. */                                              \
    X(NVML, CALL, nvmlReturn_t, nvmlInit_v2, "", 0, 0, (void))                                     \
    X(NVML, CALL, nvmlReturn_t, nvmlDeviceGetCount_v2, "", 0, 0, (unsigned int *deviceCount))      \
    X(NVML, CALL, nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2, "", 0, 0,                           \
      (unsigned int index, nvmlDevice_t *device))                                                  \
    X(NVML, CALL, nvmlReturn_t, nvmlDeviceGetHandleByUUID, "", 0, 0,                               \
      (const char *uuid, nvmlDevice_t *device))                                                    \
    X(NVML, CALL, nvmlReturn_t, nvmlDeviceGetProcessUtilization, "", 0, 0,                         \
      (nvmlDevice_t device, nvmlProcessUtilizationSample_t * utilization,                          \
       unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp))                   \
    X(NVML, CALL, nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v3, "", 0, 0,                 \
      (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos))                    \
    X(NVML, CALL, nvmlReturn_t, nvmlDeviceGetUtilizationRates, "", 0, 0,                           \
      (nvmlDevice_t device, nvmlUtilization_t * utilization))

#endif
