// channels.cu - paper 000's Fig. 8 (MPS Pitfall 4): KERNELS single-block
// kernels, kernel k on stream k % STREAMS, each spinning SPIN_MS on the GPU's
// global timer, launched back to back after one warm-up kernel per stream.
// With fewer channels (CUDA_DEVICE_MAX_CONNECTIONS) than streams, streams share
// a channel and their kernels run one after another.
//   channels STREAMS KERNELS SPIN_MS
// Prints a line per kernel: "kernel=K stream=S launch_us=L start_us=B end_us=E"
// (launch: host time the launch call returned, from the first launch's start;
// start/end: GPU time, from the first kernel's start), then
// "makespan_ms=M overlap=O" (O: the kernels' summed run time / makespan).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void spin(unsigned long long ns, unsigned long long *out)
{
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); while (t - t0 < ns);
  out[0] = t0;
  out[1] = t;
}

static double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

#define CK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "channels: %s\n", cudaGetErrorString(e_)); return 2; } } while (0)

int main(int argc, char **argv)
{
  if (argc != 4) { fprintf(stderr, "usage: channels STREAMS KERNELS SPIN_MS\n"); return 2; }
  int streams = atoi(argv[1]), kernels = atoi(argv[2]);
  unsigned long long ns = (unsigned long long)(atof(argv[3]) * 1e6);
  if (streams < 1 || streams > 64 || kernels < 1 || kernels > 1024) return 2;
  cudaStream_t *s = (cudaStream_t *)calloc(streams, sizeof(*s));
  unsigned long long *dev, *host = (unsigned long long *)calloc(2 * kernels, sizeof(*host));
  double *launch = (double *)calloc(kernels, sizeof(*launch));
  CK(cudaMalloc(&dev, 2 * kernels * sizeof(*dev)));
  for (int i = 0; i < streams; i++) {
    CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    spin<<<1, 32, 0, s[i]>>>(1000, dev); // warm-up: the stream's channel in use
  }
  CK(cudaDeviceSynchronize());
  double t0 = now_us();
  for (int k = 0; k < kernels; k++) {
    spin<<<1, 32, 0, s[k % streams]>>>(ns, dev + 2 * k);
    launch[k] = now_us() - t0;
  }
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(host, dev, 2 * kernels * sizeof(*dev), cudaMemcpyDeviceToHost));
  unsigned long long first = host[0], last = host[1];
  double busy = 0;
  for (int k = 0; k < kernels; k++) {
    if (host[2 * k] < first) first = host[2 * k];
    if (host[2 * k + 1] > last) last = host[2 * k + 1];
    busy += (host[2 * k + 1] - host[2 * k]) / 1e3;
  }
  for (int k = 0; k < kernels; k++)
    printf("kernel=%d stream=%d launch_us=%.1f start_us=%.1f end_us=%.1f\n", k, k % streams,
           launch[k], (host[2 * k] - first) / 1e3, (host[2 * k + 1] - first) / 1e3);
  printf("makespan_ms=%.3f overlap=%.2f\n", (last - first) / 1e6, busy / ((last - first) / 1e3));
  return 0;
}
