// oob.cu - an MPS client whose kernel writes to an address nothing maps
// (paper 000, Pitfall 2: a fatal fault in one MPS client may end the others).
// The page at 0x1000 is never mapped: a write 1 GiB past a buffer once landed
// in another client's memory of the MPS server's shared address space and did
// not fault (H100, driver 580, 2026-11-23, with CUDA's own channel count).
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
__global__ void bad(int *p) { p[threadIdx.x] = 1; }
int main() {
  int *d; cudaMalloc(&d, 4);
  bad<<<1, 64>>>((int *)(uintptr_t)0x1000);  // an argument: the compiler cannot see it
  cudaError_t e = cudaDeviceSynchronize();
  printf("oob: %s\n", cudaGetErrorString(e));
  cudaFree(d);
  return e ? 1 : 0;
}
