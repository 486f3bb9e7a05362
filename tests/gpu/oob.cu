// oob.cu - an MPS client whose kernel writes far out of bounds (paper 000,
// Pitfall 2: a fatal fault in one MPS client may end the others).
#include <cuda_runtime.h>
#include <stdio.h>
__global__ void bad(int *p) { p[(size_t)threadIdx.x * 1000000007ULL] = 1; }
int main() {
  int *d; cudaMalloc(&d, 4);
  bad<<<1, 64>>>(d);
  cudaError_t e = cudaDeviceSynchronize();
  printf("oob: %s\n", cudaGetErrorString(e));
  return e ? 1 : 0;
}
