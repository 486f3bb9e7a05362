// gemm.cu - a cuBLAS bf16 GEMM (fp32 accumulation), the benchmarks' victim.
//   gemm times N ITERS   prints each iteration's time in ms (CUDA events), one a line
//   gemm median N ITERS  prints the median ms of ITERS iterations
//   gemm serve N         for each line "K" on stdin prints the median of K iterations:
//                        a harness can re-partition the process between batches
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "CUDA: %s\n", cudaGetErrorString(e_)); exit(2); } } while (0)

static cublasHandle_t h;
static __nv_bfloat16 *a, *b, *c;
static int n;
static cudaEvent_t e0, e1;

__global__ void fill(__nv_bfloat16 *p, size_t count, unsigned seed) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < count) p[i] = __float2bfloat16(((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f);
}

static float one() {
  const float alpha = 1.0f, beta = 0.0f;
  CK(cudaEventRecord(e0));
  if (cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n,
                   &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublasGemmEx failed\n"); exit(2);
  }
  CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
  float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); return ms;
}

static float median(int iters) {
  std::vector<float> t;
  for (int i = 0; i < iters; i++) t.push_back(one());
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: gemm times|median|serve N [ITERS]\n"); return 2; }
  n = atoi(argv[2]);
  size_t count = (size_t)n * n;
  CK(cudaMalloc(&a, count * 2)); CK(cudaMalloc(&b, count * 2)); CK(cudaMalloc(&c, count * 2));
  fill<<<(count + 255) / 256, 256>>>(a, count, 1); fill<<<(count + 255) / 256, 256>>>(b, count, 2);
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublasCreate failed\n"); return 2; }
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  one(); one();  // warm up
  if (!strcmp(argv[1], "times") && argc == 4) {
    int iters = atoi(argv[3]);
    for (int i = 0; i < iters; i++) printf("%.4f\n", one());
  } else if (!strcmp(argv[1], "median") && argc == 4) {
    printf("median_ms=%.4f\n", median(atoi(argv[3])));
  } else if (!strcmp(argv[1], "serve")) {
    printf("ready\n"); fflush(stdout);
    int k;
    while (scanf("%d", &k) == 1 && k > 0) { one(); printf("%.4f\n", median(k)); fflush(stdout); }
  } else {
    return 2;
  }
  return 0;
}
