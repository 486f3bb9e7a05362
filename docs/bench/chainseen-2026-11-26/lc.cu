// Launch cost probe: steps of K launches of a kernel with 10 arguments and a long (templated)
// name, then a stream synchronisation; GAP_US of host spin before each launch. Prints the
// median and p90 of the host time of a step's launches (per launch, ns) and of a whole step (us).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>
template <typename T, int N, bool B>
__global__ void long_named_kernel_for_probe(T *a, const T *b, const T *c, int n, float s, float t,
                                            long m, T *d, int k, double u) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] * s + c[i] * t + (T)(m + k + u) + (B ? d[i] : (T)N);
}
static double now_ns() {
  return (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}
int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 2000, k = argc > 2 ? atoi(argv[2]) : 16;
  double gap = argc > 3 ? atof(argv[3]) * 1000 : 0;
  float *a, *b, *c, *d;
  int n = 4096;
  cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&c, n * 4); cudaMalloc(&d, n * 4);
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  std::vector<double> per_launch, per_step;
  for (int s = 0; s < steps + 100; s++) {
    double t0 = now_ns(), tl = 0;
    for (int i = 0; i < k; i++) {
      if (gap > 0) { double e = now_ns() + gap; while (now_ns() < e) {} }
      double l0 = now_ns();
      long_named_kernel_for_probe<float, 7, true><<<n / 256, 256, 0, st>>>(a, b, c, n, 1.f, 2.f, 3, d, 4, 5.0);
      tl += now_ns() - l0;
    }
    cudaStreamSynchronize(st);
    double t1 = now_ns();
    if (s >= 100) { per_launch.push_back(tl / k); per_step.push_back((t1 - t0) / 1000); }
  }
  auto q = [](std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[(size_t)(p * (v.size() - 1))]; };
  printf("launch_ns p50 %.0f p90 %.0f step_us p50 %.1f p90 %.1f\n", q(per_launch, .5), q(per_launch, .9), q(per_step, .5), q(per_step, .9));
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : 1;
}
