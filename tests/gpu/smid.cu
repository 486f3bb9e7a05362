// smid.cu - records which SMs run a kernel's blocks (GPU tests of nvtaskset).
//   smid                 16 blocks per SM; prints "sms=LIST"
//   smid cluster N       clusters of N one-block-per-SM blocks; prints "cluster=N sms=LIST"
//   smid time N          median ms of a 1056-block spin kernel over N runs
//   smid devices         on every device, from the main thread and then from a
//                        thread of its own: prints "dev=D sms=LIST" each time
// A launch that does not finish within 10 s is reported as HANG (exit 3).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <thread>
#include <vector>

__global__ void record(int *out, long long spin) {
  extern __shared__ int pad[];
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  if (threadIdx.x == 0) out[blockIdx.x] = s;
  if (spin < 0) pad[0] = 0;  // keeps the dynamic shared memory "used"
  long long t0 = clock64();
  while (clock64() - t0 < spin) {}
}

#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(2); } } while (0)

static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void wait_done() {
  double t0 = now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(0);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) { printf("CUDA error %s\n", cudaGetErrorString(e)); exit(2); }
    if (now() - t0 > 10) { printf("HANG\n"); fflush(stdout); _exit(3); }
    usleep(100);
  }
}
static void print_list(const char *key, std::vector<int> v) {
  std::sort(v.begin(), v.end()); v.erase(std::unique(v.begin(), v.end()), v.end());
  printf("%s=", key);
  for (size_t i = 0; i < v.size(); i++) {
    size_t j = i; while (j + 1 < v.size() && v[j + 1] == v[j] + 1) j++;
    printf(i ? ",%d" : "%d", v[i]); if (j > i) printf("-%d", v[j]); i = j;
  }
  printf("\n");
}

// Runs the 16-blocks-per-SM kernel on device dev; prints its SMs.
static void on_device(int dev) {
  int nsm; CK(cudaSetDevice(dev));
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
  int n = nsm * 16, *d; CK(cudaMalloc(&d, n * sizeof(int)));
  std::vector<int> h(n);
  record<<<n, 128>>>(d, 20000); CK(cudaGetLastError()); wait_done();
  CK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  char key[32]; snprintf(key, sizeof(key), "dev=%d sms", dev);
  print_list(key, h); fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "devices")) {
    int n; CK(cudaGetDeviceCount(&n));
    for (int dev = 0; dev < n; dev++) on_device(dev);
    for (int dev = 0; dev < n; dev++) { std::thread t(on_device, dev); t.join(); }
    return 0;
  }
  int nsm; CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  int max_blocks = nsm * 16; int *d; CK(cudaMalloc(&d, max_blocks * sizeof(int)));
  std::vector<int> h(max_blocks);
  if (argc == 1) {
    record<<<max_blocks, 128>>>(d, 20000); CK(cudaGetLastError()); wait_done();
    CK(cudaMemcpy(h.data(), d, max_blocks * sizeof(int), cudaMemcpyDeviceToHost));
    print_list("sms", h); return 0;
  }
  if (argc == 3 && !strcmp(argv[1], "cluster")) {
    int cs = atoi(argv[2]), smem = 150 * 1024;
    CK(cudaFuncSetAttribute(record, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CK(cudaFuncSetAttribute(record, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {}; cfg.blockDim = 128; cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute a[1]; a[0].id = cudaLaunchAttributeClusterDimension;
    a[0].val.clusterDim.x = cs; a[0].val.clusterDim.y = 1; a[0].val.clusterDim.z = 1;
    cfg.attrs = a; cfg.numAttrs = 1; cfg.gridDim = cs * 8;
    CK(cudaLaunchKernelEx(&cfg, record, d, (long long)200000)); wait_done();
    CK(cudaMemcpy(h.data(), d, cs * 8 * sizeof(int), cudaMemcpyDeviceToHost));
    h.resize(cs * 8); printf("cluster=%d ", cs); print_list("sms", h); return 0;
  }
  if (argc == 3 && !strcmp(argv[1], "time")) {
    int runs = atoi(argv[2]); std::vector<double> t;
    for (int i = 0; i < runs + 2; i++) {
      double t0 = now(); record<<<1056, 128>>>(d, 1000000); wait_done();
      if (i >= 2) t.push_back((now() - t0) * 1e3);
    }
    std::sort(t.begin(), t.end()); printf("median_ms=%.3f\n", t[t.size() / 2]); return 0;
  }
  fprintf(stderr, "usage: smid [cluster N | time N]\n"); return 2;
}
