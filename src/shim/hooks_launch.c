/*
 * Kernel launches: passed through the compute limit's hook point (throttle.h) to the driver.
 */
#include "shim/shim.h"

#include "shim/throttle.h"

static uint64_t grid(unsigned int x, unsigned int y, unsigned int z)
{
    return (uint64_t)x * y * z;
}

static void before(CUfunction f, CUstream s, uint64_t blocks, uint64_t threads, int coop)
{
    gp_launch l = {f, s, blocks, threads, coop};
    gp_throttle_before_launch(&l);
}

static CUresult launch(gp_fn_cuLaunchKernel real, CUfunction f, unsigned int gx, unsigned int gy,
                       unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
                       unsigned int shm, CUstream s, void **params, void **extra)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    before(f, s, grid(gx, gy, gz), grid(bx, by, bz), 0);
    return real(f, gx, gy, gz, bx, by, bz, shm, s, params, extra);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra)
{
    return launch(GP_REAL(cuLaunchKernel), f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                  blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                             unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                             unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                             void **kernelParams, void **extra)
{
    return launch(GP_REAL(cuLaunchKernel_ptsz), f, gridDimX, gridDimY, gridDimZ, blockDimX,
                  blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

static CUresult launch_ex(gp_fn_cuLaunchKernelEx real, const CUlaunchConfig *config, CUfunction f,
                          void **params, void **extra)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (config) {
        before(f, config->hStream, grid(config->gridDimX, config->gridDimY, config->gridDimZ),
               grid(config->blockDimX, config->blockDimY, config->blockDimZ), 0);
    }
    return real(config, f, params, extra);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                          void **extra)
{
    return launch_ex(GP_REAL(cuLaunchKernelEx), config, f, kernelParams, extra);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                               void **extra)
{
    return launch_ex(GP_REAL(cuLaunchKernelEx_ptsz), config, f, kernelParams, extra);
}

static CUresult launch_coop(gp_fn_cuLaunchCooperativeKernel real, CUfunction f, unsigned int gx,
                            unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                            unsigned int bz, unsigned int shm, CUstream s, void **params)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    before(f, s, grid(gx, gy, gz), grid(bx, by, bz), 1);
    return real(f, gx, gy, gz, bx, by, bz, shm, s, params);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX,
                                   unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams)
{
    return launch_coop(GP_REAL(cuLaunchCooperativeKernel), f, gridDimX, gridDimY, gridDimZ,
                       blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX,
                                        unsigned int blockDimY, unsigned int blockDimZ,
                                        unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams)
{
    return launch_coop(GP_REAL(cuLaunchCooperativeKernel_ptsz), f, gridDimX, gridDimY, gridDimZ,
                       blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams);
}
