/*
 * Kernel and graph launches: passed through the compute limit (throttle.h) to the driver. A
 * launch is never refused here: the throttle may only delay it.
 */
#include "shim/shim.h"

#include "shim/throttle.h"

static void before(CUstream s, int ptds)
{
    gp_launch l = {s, ptds};
    gp_throttle_before_launch(&l);
}

static CUresult launch(gp_fn_cuLaunchKernel real, int ptds, CUfunction f, unsigned int gx,
                       unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                       unsigned int bz, unsigned int shm, CUstream s, void **params, void **extra)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    before(s, ptds);
    return real(f, gx, gy, gz, bx, by, bz, shm, s, params, extra);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra)
{
    return launch(GP_REAL(cuLaunchKernel), 0, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                  blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                             unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                             unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                             void **kernelParams, void **extra)
{
    return launch(GP_REAL(cuLaunchKernel_ptsz), 1, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                  blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

static CUresult launch_ex(gp_fn_cuLaunchKernelEx real, int ptds, const CUlaunchConfig *config,
                          CUfunction f, void **params, void **extra)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (config) {
        before(config->hStream, ptds);
    }
    return real(config, f, params, extra);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                          void **extra)
{
    return launch_ex(GP_REAL(cuLaunchKernelEx), 0, config, f, kernelParams, extra);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                               void **extra)
{
    return launch_ex(GP_REAL(cuLaunchKernelEx_ptsz), 1, config, f, kernelParams, extra);
}

static CUresult launch_coop(gp_fn_cuLaunchCooperativeKernel real, int ptds, CUfunction f,
                            unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                            unsigned int by, unsigned int bz, unsigned int shm, CUstream s,
                            void **params)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    before(s, ptds);
    return real(f, gx, gy, gz, bx, by, bz, shm, s, params);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX,
                                   unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams)
{
    return launch_coop(GP_REAL(cuLaunchCooperativeKernel), 0, f, gridDimX, gridDimY, gridDimZ,
                       blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX,
                                        unsigned int blockDimY, unsigned int blockDimZ,
                                        unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams)
{
    return launch_coop(GP_REAL(cuLaunchCooperativeKernel_ptsz), 1, f, gridDimX, gridDimY, gridDimZ,
                       blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams);
}

/* A graph launch runs its kernels without passing through the hooks: it is throttled as one
 * launch, whose cost the gate learns like a kernel's. */
static CUresult launch_graph(gp_fn_cuGraphLaunch real, int ptds, CUgraphExec g, CUstream s)
{
    if (!real) {
        return CUDA_ERROR_NOT_FOUND;
    }
    before(s, ptds);
    return real(g, s);
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    return launch_graph(GP_REAL(cuGraphLaunch), 0, hGraphExec, hStream);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    return launch_graph(GP_REAL(cuGraphLaunch_ptsz), 1, hGraphExec, hStream);
}
