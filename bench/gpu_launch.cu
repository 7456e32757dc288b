// Kernel-launch throughput on a real GPU: N launches of an empty kernel on one stream, timed
// from the first launch to the end of the synchronisation, best of R rounds. Run it with and
// without LD_PRELOAD=libgpushare.so to see what interception costs (bench/gpu_share.sh does).
// Prints key=value lines; exit 77 when there is no GPU.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void empty_kernel() {}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000, rounds = argc > 2 ? atoi(argv[2]) : 5;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("skip: no GPU\n");
        return 77;
    }
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int i = 0; i < 1000; i++) { // warm up
        empty_kernel<<<1, 1, 0, s>>>();
    }
    cudaStreamSynchronize(s);
    double best = 0;
    for (int r = 0; r < rounds; r++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; i++) {
            empty_kernel<<<1, 1, 0, s>>>();
        }
        cudaStreamSynchronize(s);
        double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double rate = n / sec;
        printf("round=%d launches=%d seconds=%.4f launches_per_s=%.0f\n", r, n, sec, rate);
        best = rate > best ? rate : best;
    }
    cudaError_t e = cudaGetLastError();
    printf("best_launches_per_s=%.0f error=%d\n", best, (int)e);
    return e == cudaSuccess ? 0 : 1;
}
