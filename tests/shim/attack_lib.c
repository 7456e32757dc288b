/*
 * libgpattack.so: what a job would load to reach the driver around libgpushare.so. It links
 * libcuda.so.1 and calls it directly, and calls dlsym, both bound however the dynamic linker
 * binds this object: opened with RTLD_DEEPBIND it binds its own dependencies first (the real
 * driver, libc's dlsym); dlmopen'd into a new namespace it never sees the preloaded library.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "shim/cuda_types.h"

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult gp_attack_alloc(CUdeviceptr *p, size_t bytes);
void *gp_attack_dlsym(void *handle, const char *name);

__attribute__((visibility("default"))) CUresult gp_attack_alloc(CUdeviceptr *p, size_t bytes)
{
    return cuMemAlloc_v2(p, bytes);
}

__attribute__((visibility("default"))) void *gp_attack_dlsym(void *handle, const char *name)
{
    return dlsym(handle, name);
}
