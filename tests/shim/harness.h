/*
 * Harness of the libgpushare.so tests (harness.c): checks, the driver API as a program sees it,
 * and child processes run with the library preloaded.
 *
 * A test is one program run, `shim_test CASE`, in its own temporary directory. The case runs in
 * the driver process, which does not preload the library; it prepares what it needs (a region
 * file) and runs bodies, `shim_test --child BODY`, as fresh processes with LD_PRELOAD set to the
 * library, LD_LIBRARY_PATH to the fake driver, and the environment the case chose: the library
 * reads its configuration at load, so a body's environment must exist before it starts.
 */
#ifndef GP_TESTS_SHIM_HARNESS_H
#define GP_TESTS_SHIM_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "shim/cuda_types.h"

/* ---- checks: print both values, then end the process with status 1 ---- */

void gp_t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            gp_t_fail(__FILE__, __LINE__, "%s", #c);                                               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ != b_) {                                                                            \
            gp_t_fail(__FILE__, __LINE__, "%s == %s: %llu != %llu", #a, #b, a_, b_);               \
        }                                                                                          \
    } while (0)

#define CHECK_LE(a, b)                                                                             \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ > b_) {                                                                             \
            gp_t_fail(__FILE__, __LINE__, "%s <= %s: %llu > %llu", #a, #b, a_, b_);                \
        }                                                                                          \
    } while (0)

/* In a process forked from a body: fail with _exit, not exit. */
void gp_t_in_fork(void);

/* ---- the driver API, loaded the way programs load it ---- */

typedef enum gp_t_loader {
    GP_T_DIRECT,    /* linked against libcuda.so.1 (shim_test only) */
    GP_T_DLSYM,     /* dlopen("libcuda.so.1") + dlsym */
    GP_T_GETPROC,   /* dlsym("cuGetProcAddress"), then everything through it */
    GP_T_GETPROC_V2 /* the same with cuGetProcAddress_v2 */
} gp_t_loader;

typedef struct gp_t_api {
    CUresult (*Init)(unsigned int);
    CUresult (*CtxCreate)(CUcontext *, unsigned int, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxDestroy)(CUcontext);
    CUresult (*StreamCreate)(CUstream *, unsigned int);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemAllocPitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
    CUresult (*MemAllocManaged)(CUdeviceptr *, size_t, unsigned int);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
    CUresult (*MemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
    CUresult (*MemPoolCreate)(CUmemoryPool *, const CUmemPoolProps *);
    CUresult (*MemPoolDestroy)(CUmemoryPool);
    CUresult (*DeviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
    CUresult (*MemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                          unsigned long long);
    CUresult (*MemRelease)(CUmemGenericAllocationHandle);
    CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                       unsigned long long);
    CUresult (*MemUnmap)(CUdeviceptr, size_t);
    CUresult (*ArrayCreate)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
    CUresult (*Array3DCreate)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
    CUresult (*ArrayDestroy)(CUarray);
    CUresult (*MipmappedArrayCreate)(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *,
                                     unsigned int);
    CUresult (*MipmappedArrayDestroy)(CUmipmappedArray);
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*DeviceTotalMem)(size_t *, CUdevice);
    CUresult (*LaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*LaunchCooperativeKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
                                        unsigned int, unsigned int, unsigned int, unsigned int,
                                        CUstream, void **);
    CUresult (*MemAllocLegacy)(unsigned int *, unsigned int);
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    /* The fake's own counters (not CUDA). */
    uint64_t (*FakeUsage)(int);
    unsigned long (*FakeLaunches)(void);
    uint64_t (*FakeNow)(void);                         /* CLOCK_MONOTONIC, ns */
    uint64_t (*FakeBusy)(int dev, uint64_t, uint64_t); /* busy ns of dev in [from, to) */
} gp_t_api;

/* Fills *a with the loader (the loader named by GP_TEST_LOADER when loader < 0); every field
 * must resolve. Returns the dlopen handle of libcuda.so.1. */
void *gp_t_load(gp_t_api *a, int loader);
/* cuInit, then a context on device 0, current. */
CUcontext gp_t_start(const gp_t_api *a);
/* A new context on dev, current; kept until the process exits (reachable for the leak check). */
CUcontext gp_t_context(const gp_t_api *a, int dev);
/* Free memory cuMemGetInfo_v2 reports (and its total). */
uint64_t gp_t_free(const gp_t_api *a, uint64_t *total);
/* Path of the shared object an address lies in ("" if none). */
const char *gp_t_object_of(void *addr);
/* Symbol name at an address ("" if none). */
const char *gp_t_symbol_of(void *addr);
void *gp_t_fnptr(void (*f)(void));

/* ---- the driver side ---- */

/* The test's temporary directory (driver and bodies). */
const char *gp_t_dir(void);
/* Creates the temporary directory, removed at exit. */
void gp_t_make_dir(void);

/* A named test case or child body. */
typedef struct gp_t_entry {
    const char *name;
    void (*fn)(void);
} gp_t_entry;

/* The main of a test program: `PROG CASE` runs a case (in a fresh test directory), `PROG --list`
 * lists them, `PROG --child BODY` runs a body in a child the case started (LD_PRELOAD is
 * dropped for what the child starts itself). Returns the exit status. */
int gp_t_main(int argc, char **argv, const gp_t_entry *cases, size_t ncases,
              const gp_t_entry *bodies, size_t nbodies);
/* The exit status of a test that could not run here (ctest's SKIP_RETURN_CODE). */
#define GP_T_SKIP 77

/* Runs a body with the library preloaded and extra "NAME=VALUE" variables (NULL-terminated);
 * its stderr goes to DIR/<body>-<n>.err. Returns the exit status (128+signal if killed). Two of
 * the variables are the harness's: GP_TEST_RUN_DIR=DIR runs the body in a mount namespace of its
 * own with DIR as /run, GP_TEST_AS_USER=ID as that user and group (both need root); a body that
 * cannot be run so exits GP_T_SKIP, and gp_t_expect then ends the test with it. */
int gp_t_run(const char *body, const char *const *env, char *err_path, size_t err_len);
/* Runs a body and requires status 0 (prints its stderr otherwise). */
void gp_t_expect(const char *body, const char *const *env);
/* The stderr file of the last body run. */
const char *gp_t_last_err(void);
/* Occurrences of needle in a file. */
int gp_t_count_in_file(const char *path, const char *needle);

#endif
