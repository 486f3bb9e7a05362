// interfere.cu - continuous interference for the enforcement benchmark (after
// the paper's mandelbrot and random_walk tasks).
//   interfere compute STOP   FMA-heavy blocks on every SM it may use, until file STOP exists
//   interfere memory STOP    dependent random reads over 4 GiB (memory-bound), until STOP
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

__global__ void compute(float *out, int iters) {
  float x = threadIdx.x * 1e-3f, y = blockIdx.x * 1e-3f, zr = 0, zi = 0;
  for (int i = 0; i < iters; i++) { float t = zr * zr - zi * zi + x; zi = 2 * zr * zi + y; zr = t; zr = fminf(zr, 2.f); zi = fminf(zi, 2.f); }
  if (zr == 12345.f) out[0] = zi;
}

__global__ void walk(const unsigned *buf, size_t mask, unsigned *out, int steps) {
  size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 2654435761u & mask;
  unsigned acc = 0;
  for (int s = 0; s < steps; s++) { unsigned v = buf[i]; acc += v; i = (i * 6364136223846793005ull + v + 1442695040888963407ull) & mask; }
  if (acc == 0xdeadbeef) out[0] = acc;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  struct stat st;
  int dev_sms; cudaDeviceGetAttribute(&dev_sms, cudaDevAttrMultiProcessorCount, 0);
  float *f; unsigned *u, *buf; cudaMalloc(&f, 4); cudaMalloc(&u, 4);
  size_t words = (size_t)1 << 30;  // 4 GiB
  if (!strcmp(argv[1], "memory")) { if (cudaMalloc(&buf, words * 4)) { fprintf(stderr, "no memory\n"); return 2; } cudaMemset(buf, 1, words * 4); }
  long launches = 0;
  while (stat(argv[2], &st) != 0) {
    if (!strcmp(argv[1], "compute")) compute<<<dev_sms * 8, 256>>>(f, 20000);
    else walk<<<dev_sms * 8, 256>>>(buf, words - 1, u, 2000);
    cudaError_t e = cudaDeviceSynchronize();
    if (e) { fprintf(stderr, "interfere: %s\n", cudaGetErrorString(e)); return 3; }
    launches++;
  }
  printf("launches=%ld\n", launches);
  return 0;
}
