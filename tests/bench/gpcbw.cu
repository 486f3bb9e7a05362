// gpcbw.cu - does where a partition's SMs lie (packed into few GPCs, or spread
// over all of them) change what they can do? For the size benchmark.
//   gpcbw stream MIB REPS   reads MIB MiB (float4, grid-stride, 4224 blocks of
//                           256 threads: the same work whatever the SM count
//                           reported) REPS times: median ms and GB/s
//   gpcbw fma ITERS REPS    a dependent-FMA loop in the same grid: median ms
// Runs on whatever partition or MPS share it was started with; prints one
// line "sms=N mode=M median_ms=T gbps=G".
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "CUDA: %s\n", cudaGetErrorString(e_)); return 2; } } while (0)

__global__ void stream(const float4 *in, size_t n, float *out) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = __ldcs(in + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) out[0] = acc;  // never true for zeros: keeps the loads
}

__global__ void fma_loop(int iters, float *out) {
  float a = threadIdx.x, b = 1.0001f, c = 0.9999f;
  for (int i = 0; i < iters; i++) a = fmaf(a, b, c);
  if (a == 1234.5f) out[0] = a;
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "stream") && strcmp(argv[1], "fma"))) {
    fprintf(stderr, "usage: gpcbw stream MIB REPS | gpcbw fma ITERS REPS\n");
    return 2;
  }
  long arg = strtol(argv[2], NULL, 10);
  int reps = atoi(argv[3]), sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int blocks = 4224;  // 32 per SM of a whole H100, fixed
  size_t bytes = (size_t)arg << 20;
  float4 *in = NULL;
  float *out = NULL;
  CK(cudaMalloc(&out, sizeof(float)));
  if (!strcmp(argv[1], "stream")) {
    CK(cudaMalloc(&in, bytes));
    CK(cudaMemset(in, 0, bytes));
  }
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < reps + 2; r++) {
    CK(cudaEventRecord(a));
    if (in)
      stream<<<blocks, 256>>>(in, bytes / sizeof(float4), out);
    else
      fma_loop<<<blocks, 256>>>((int)arg, out);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t;
    CK(cudaEventElapsedTime(&t, a, b));
    if (r >= 2) ms.push_back(t);  // two warm-ups
  }
  std::sort(ms.begin(), ms.end());
  float med = ms[ms.size() / 2];
  printf("sms=%d mode=%s median_ms=%.4f gbps=%.1f\n", sms, argv[1], med, in ? bytes / (med * 1e6) : 0.0);
  return 0;
}
