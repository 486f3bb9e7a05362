// oob.cu - an MPS client whose kernel writes far out of bounds (paper 000,
// Pitfall 2: a fatal fault in one MPS client may end the others).
#include <cuda_runtime.h>
#include <stdio.h>
__global__ void bad(int *p) { p[(1ULL << 28) + threadIdx.x] = 1; }  // 1 GiB past a 4-byte buffer
int main() {
  int *d; cudaMalloc(&d, 4);
  bad<<<1, 64>>>(d);
  cudaError_t e = cudaDeviceSynchronize();
  printf("oob: %s\n", cudaGetErrorString(e));
  return e ? 1 : 0;
}
