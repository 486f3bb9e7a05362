// loop.cu - launches a timed spin kernel over and over and logs, per launch,
// its host start/end (CLOCK_MONOTONIC ns), its time, and the TPCs its
// blocks ran on (from %smid). For nvtaskset's end-to-end GPU tests.
//   loop [--iters N] [--stop FILE] [--blocks B] [--spin CYCLES] [--sleep-us U] [--out FILE]
// Stops after N launches (0: until FILE exists). A launch that does not
// finish within 10 s is reported as HANG (exit 3).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <vector>

__global__ void spin(int *out, long long cycles) {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  if (threadIdx.x == 0) out[blockIdx.x] = s;
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}

static long long now_ns() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }

int main(int argc, char **argv) {
  long iters = 0, blocks = 4224, sleep_us = 0; long long cycles = 500000;
  const char *stop = NULL, *outp = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--iters")) iters = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--stop")) stop = argv[i + 1];
    else if (!strcmp(argv[i], "--blocks")) blocks = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--spin")) cycles = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--sleep-us")) sleep_us = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--out")) outp = argv[i + 1];
  }
  FILE *out = outp ? fopen(outp, "w") : stdout;
  int *d; cudaError_t e = cudaMalloc(&d, blocks * sizeof(int));
  if (e) { fprintf(stderr, "loop: cudaMalloc: %s\n", cudaGetErrorString(e)); return 2; }
  std::vector<int> h(blocks);
  for (long it = 0; iters == 0 || it < iters; it++) {
    struct stat st;
    if (stop && stat(stop, &st) == 0) break;
    long long t0 = now_ns();
    spin<<<blocks, 128>>>(d, cycles);
    for (;;) {
      e = cudaStreamQuery(0);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) { fprintf(stderr, "loop: kernel failed: %s\n", cudaGetErrorString(e)); return 4; }
      if (now_ns() - t0 > 10000000000LL) { fprintf(stderr, "loop: HANG\n"); _exit(3); }
    }
    long long t1 = now_ns();
    e = cudaMemcpy(h.data(), d, blocks * sizeof(int), cudaMemcpyDeviceToHost);
    if (e) { fprintf(stderr, "loop: copy: %s\n", cudaGetErrorString(e)); return 4; }
    bool tpc[256] = {false};
    for (long b = 0; b < blocks; b++) if (h[b] >= 0 && h[b] < 512) tpc[h[b] / 2] = true;
    fprintf(out, "%lld %lld %.4f ", t0, t1, (t1 - t0) / 1e6);
    for (int t = 0, first = 1; t < 256; t++) if (tpc[t]) {
      int u = t; while (u + 1 < 256 && tpc[u + 1]) u++;
      fprintf(out, first ? "%d" : ",%d", t); if (u > t) fprintf(out, "-%d", u); first = 0; t = u;
    }
    fprintf(out, "\n"); fflush(out);
    if (sleep_us) usleep(sleep_us);
  }
  return 0;
}
