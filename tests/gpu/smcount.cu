// smcount.cu - the SM count a program under nvtaskset is told, every way a
// CUDA program asks, and cooperative grids sized by it (tests/gpu/smcount.sh).
//   smcount                 prints "rt=N props=N drv=N proc=N": cudaDeviceGetAttribute,
//                           cudaGetDeviceProperties, cuDeviceGetAttribute (linked), and the
//                           entry point cudaGetDriverEntryPoint hands out (cuGetProcAddress)
//   smcount wait FILE       the same, then again once FILE exists
//   smcount coop [ex]       a grid of (blocks an SM) x (SMs reported) blocks whose blocks all
//                           wait for each other at a barrier: cudaLaunchCooperativeKernel, or
//                           cudaLaunchKernelEx with the cooperative attribute ("ex"); prints
//                           "coop grid=G ok sms=LIST" or "coop grid=G HANG" (the barrier gave up
//                           after 10 s: not every block was resident at once)
//   smcount coop-wait FILE [ex]   sized first, launched once FILE exists
// Every launch is bounded: the barrier gives up after 10 s, the host after 20 s.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(2); } } while (0)

// Every block arrives, then waits until all have (or 10 s of the GPU's clock passed).
__global__ void barrier(unsigned *arrived, int *smid, int *gave_up, long long limit)
{
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  if (threadIdx.x == 0) {
    smid[blockIdx.x] = s;
    __threadfence();
    atomicAdd(arrived, 1);
    long long t0 = clock64();
    while (*(volatile unsigned *)arrived < gridDim.x) {
      if (clock64() - t0 > limit) { atomicExch(gave_up, 1); break; }
    }
  }
  __syncthreads();
}

__global__ void touch_gpu(void) {}

static int exists(const char *p) { return access(p, F_OK) == 0; }

static void counts(void)
{
  int rt = -1, drv = -1, proc = -1;
  cudaDeviceProp p;
  CUresult (*attr)(int *, CUdevice_attribute, CUdevice) = NULL;
  cudaDriverEntryPointQueryResult q;

  CK(cudaDeviceGetAttribute(&rt, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaGetDeviceProperties(&p, 0));
  if (cuDeviceGetAttribute(&drv, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0)) drv = -1;
  if (cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", (void **)&attr, 12000, cudaEnableDefault, &q) ==
          cudaSuccess && attr &&
      attr(&proc, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0))
    proc = -1;
  printf("rt=%d props=%d drv=%d proc=%d\n", rt, p.multiProcessorCount, drv, proc);
  fflush(stdout);
}

static void print_sms(std::vector<int> v)
{
  std::sort(v.begin(), v.end()); v.erase(std::unique(v.begin(), v.end()), v.end());
  printf(" sms=");
  for (size_t i = 0; i < v.size(); i++) {
    size_t j = i; while (j + 1 < v.size() && v[j + 1] == v[j] + 1) j++;
    printf(i ? ",%d" : "%d", v[i]); if (j > i) printf("-%d", v[j]); i = j;
  }
}

static int coop(const char *wait_file, int ex)
{
  int sms, per_sm, clock_khz, *smid, *gave_up, h_gave_up = 0;
  unsigned *arrived;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, barrier, 256, 0));
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  int grid = sms * per_sm;
  long long limit = 10000LL * clock_khz;  // 10 s of SM clock
  CK(cudaMalloc(&arrived, sizeof(unsigned)));
  CK(cudaMalloc(&smid, grid * sizeof(int)));
  CK(cudaMalloc(&gave_up, sizeof(int)));
  CK(cudaMemset(arrived, 0, sizeof(unsigned)));
  CK(cudaMemset(gave_up, 0, sizeof(int)));
  CK(cudaDeviceSynchronize());
  if (wait_file) {
    printf("sized grid=%d\n", grid);
    fflush(stdout);
    while (!exists(wait_file)) usleep(2000);
  }
  void *args[] = {&arrived, &smid, &gave_up, &limit};
  if (ex) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeCooperative;
    a[0].val.cooperative = 1;
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(256);
    cfg.attrs = a;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelExC(&cfg, (const void *)barrier, args));
  } else {
    CK(cudaLaunchCooperativeKernel((const void *)barrier, dim3(grid), dim3(256), args, 0, 0));
  }
  CK(cudaDeviceSynchronize());
  std::vector<int> h(grid);
  CK(cudaMemcpy(h.data(), smid, grid * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&h_gave_up, gave_up, sizeof(int), cudaMemcpyDeviceToHost));
  printf("coop grid=%d %s", grid, h_gave_up ? "HANG" : "ok");
  print_sms(h);
  printf("\n");
  return h_gave_up ? 3 : 0;
}

int main(int argc, char **argv)
{
  alarm(20);  // nothing here takes that long unless a launch waits for ever
  if (argc == 1) { counts(); return 0; }
  if (argc == 3 && !strcmp(argv[1], "wait")) {
    counts();
    while (!exists(argv[2])) usleep(2000);
    counts();
    // After a launch too (a line the checks of the counts do not read: it says whether a
    // count that did not follow a -p follows once the program launches).
    printf("after a launch: ");
    touch_gpu<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    counts();
    return 0;
  }
  if (!strcmp(argv[1], "coop")) return coop(NULL, argc > 2 && !strcmp(argv[2], "ex"));
  if (!strcmp(argv[1], "coop-wait") && argc >= 3) return coop(argv[2], argc > 3 && !strcmp(argv[3], "ex"));
  fprintf(stderr, "smcount: bad arguments\n");
  return 2;
}
