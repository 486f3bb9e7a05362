// launch.cu - launch overhead and start-up probes for nvtaskset's benchmarks.
//   launch rate N REPS   enqueue N empty <<<1,1>>> kernels REPS times; prints the
//                        median microseconds per launch (enqueue only, and with sync)
//   launch batches N REPS
//                        enqueues N empty kernels (fewer than the queue holds),
//                        waits for them untimed, REPS times: prints the 10th
//                        percentile and the median microseconds per launch of
//                        the enqueue alone (the host's time, little touched by
//                        the GPU or by preemption)
//   launch batches-ex N REPS
//                        the same through cudaLaunchKernelEx (the driver's
//                        cuLaunchKernelEx, whose calls the shim follows to find
//                        cooperative launches)
//   launch startup       runs one empty kernel and prints CLOCK_MONOTONIC (ns) when
//                        it has completed: the harness subtracts its spawn time
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

__global__ void empty() {}

static long long now_ns() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
#define CK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "CUDA: %s\n", cudaGetErrorString(e_)); return 2; } } while (0)

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "startup")) {
    empty<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    printf("first_kernel_done_ns=%lld\n", now_ns());
    return 0;
  }
  if (argc == 4 && !strcmp(argv[1], "rate")) {
    int n = atoi(argv[2]), reps = atoi(argv[3]);
    std::vector<double> enq, all;
    empty<<<1, 1>>>(); CK(cudaDeviceSynchronize());
    for (int r = 0; r < reps; r++) {
      long long t0 = now_ns();
      for (int i = 0; i < n; i++) empty<<<1, 1>>>();
      long long t1 = now_ns();
      CK(cudaDeviceSynchronize());
      long long t2 = now_ns();
      enq.push_back((t1 - t0) / 1e3 / n); all.push_back((t2 - t0) / 1e3 / n);
    }
    std::sort(enq.begin(), enq.end()); std::sort(all.begin(), all.end());
    printf("enqueue_us=%.4f total_us=%.4f\n", enq[reps / 2], all[reps / 2]);
    return 0;
  }
  if (argc == 4 && (!strcmp(argv[1], "batches") || !strcmp(argv[1], "batches-ex"))) {
    int n = atoi(argv[2]), reps = atoi(argv[3]), ex = !strcmp(argv[1], "batches-ex");
    std::vector<double> enq;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(1);
    empty<<<1, 1>>>(); CK(cudaDeviceSynchronize());
    for (int r = 0; r < reps; r++) {
      long long t0 = now_ns();
      if (ex)
        for (int i = 0; i < n; i++) cudaLaunchKernelEx(&cfg, empty);
      else
        for (int i = 0; i < n; i++) empty<<<1, 1>>>();
      long long t1 = now_ns();
      CK(cudaDeviceSynchronize());
      enq.push_back((t1 - t0) / 1e3 / n);
    }
    std::sort(enq.begin(), enq.end());
    printf("p10_us=%.4f median_us=%.4f\n", enq[reps / 10], enq[reps / 2]);
    return 0;
  }
  fprintf(stderr, "usage: launch rate N REPS | launch batches[-ex] N REPS | launch startup\n");
  return 2;
}
