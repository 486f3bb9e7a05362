// startup.cu - what a user's small CUDA program does first (the start-up
// benchmark, tests/bench/startup.py): allocate, run one kernel, copy back.
//   startup          on the current device
//   startup all      on every device the process sees, in turn
// Prints nothing; exits 0 when every copy holds what the kernel wrote.
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

__global__ void fill(int *p, int n, int v)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + i;
}

int main(int argc, char **argv)
{
  enum { N = 1 << 20 };
  static int host[N];
  int devices = 1;

  if (argc > 1 && !strcmp(argv[1], "all") && cudaGetDeviceCount(&devices)) return 2;
  for (int d = 0; d < devices; d++) {
    int *dev;
    cudaError_t e;
    if (devices > 1) cudaSetDevice(d);
    if ((e = cudaMalloc(&dev, sizeof(host))) ||
        (fill<<<N / 256, 256>>>(dev, N, d), (e = cudaGetLastError())) ||
        (e = cudaMemcpy(host, dev, sizeof(host), cudaMemcpyDeviceToHost))) {
      fprintf(stderr, "startup: device %d: %s\n", d, cudaGetErrorString(e));
      return 2;
    }
    if (host[N - 1] != d + N - 1) {
      fprintf(stderr, "startup: device %d: wrong result\n", d);
      return 3;
    }
    cudaFree(dev);
  }
  return 0;
}
