// Kernel-launch throughput on a real GPU: N launches of an empty kernel on one stream, timed
// from the first launch to the end of the synchronisation, best of R rounds; and the CPU time
// the launching thread spent per launch in the launch loop (CLOCK_THREAD_CPUTIME_ID, least of
// the rounds): what an interception library adds is host work, and the thread's CPU time is
// less disturbed by the GPU's queue and the machine's other load than the wall clock. Run it
// with and without LD_PRELOAD=libgpushare.so to see what interception costs (bench/gpu_share.sh
// does). Prints key=value lines; exit 77 when there is no GPU.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

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
    double best = 0, best_cpu = 0;
    for (int r = 0; r < rounds; r++) {
        struct timespec c0, c1;
        auto t0 = std::chrono::steady_clock::now();
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        for (int i = 0; i < n; i++) {
            empty_kernel<<<1, 1, 0, s>>>();
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        cudaStreamSynchronize(s);
        double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        double rate = n / sec;
        double cpu = ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / n;
        printf("round=%d launches=%d seconds=%.4f launches_per_s=%.0f cpu_ns_per_launch=%.1f\n", r,
               n, sec, rate, cpu);
        best = rate > best ? rate : best;
        best_cpu = best_cpu == 0 || cpu < best_cpu ? cpu : best_cpu;
    }
    cudaError_t e = cudaGetLastError();
    printf("best_launches_per_s=%.0f best_cpu_ns_per_launch=%.1f error=%d\n", best, best_cpu,
           (int)e);
    return e == cudaSuccess ? 0 : 1;
}
