// cluster.cu - how many thread-block clusters of each size a process's SMs run
// at once (do a packed partition's GPCs hold fewer clusters than an
// MPS client's SMs, which lie in every GPC?). Usage: cluster [MAX], MAX the
// largest cluster size to try (default 16).
//
// For cluster sizes 1, 2, 4, 8 and 16 (16 is non-portable: skipped when
// refused; a size whose max_active_clusters is 0 is skipped too), a kernel of 128 threads per block with more than half of an SM's
// shared memory (so one block per SM):
//   - cudaOccupancyMaxActiveClusters for it;
//   - "wave": 2112 blocks (16 x 132), each spinning SPIN clock64 cycles;
//   - "persistent": max_active_clusters x cluster size blocks, sharing the
//     same total work (2112 x 8 units of SPIN / 8 cycles, strided over the
//     grid), so its time shows how many SMs really ran at once.
// Every block records its SM (%smid) and its start and end (%globaltimer,
// ns): peak = most blocks running at one moment, avg = the blocks' busy time
// over the kernel's span (the mean number of busy SMs).
// Prints one line per cluster size:
//   cluster=C sm_count=S smem=B max_active_clusters=M max_active_blocks=M*C
//   wave_ms=.. distinct_sms=.. wave_peak=.. wave_avg=.. unit_us=..
//   p_grid=.. persistent_ms=.. p_distinct_sms=.. p_peak=.. p_avg=..
//   sms=LIST p_sms=LIST
// (times: median of 5 launches after one warm-up, cudaEvent). A launch that
// does not finish within 10 s prints HANG and exits 3; another CUDA error
// prints "CUDA error ..." and exits 2.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

static const int WAVE_BLOCKS = 16 * 132;  // divisible by 1, 2, 4, 8, 16
static const long long SPIN = 200000;      // cycles per block in the wave kernel (~0.1 ms)
static const int SPLIT = 8;                // the persistent kernel's units: SPIN / SPLIT cycles
static const int REPS = 5;

__global__ void work(unsigned *sm, unsigned long long *t0, unsigned long long *t1, int units,
                     long long unit_cycles) {
  extern __shared__ int pad[];
  unsigned s;
  unsigned long long g0, g1;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  if (unit_cycles < 0) pad[threadIdx.x] = 0;  // keeps the dynamic shared memory "used"
  for (int u = blockIdx.x; u < units; u += gridDim.x) {
    long long c0 = clock64();
    while (clock64() - c0 < unit_cycles) {}
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  if (threadIdx.x == 0) {
    sm[blockIdx.x] = s;
    t0[blockIdx.x] = g0;
    t1[blockIdx.x] = g1;
  }
}

#define CK(x)                                                                                    \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_) {                                                                                    \
      printf("CUDA error %s at %s:%d (%s)\n", cudaGetErrorString(e_), __FILE__, __LINE__, #x); \
      fflush(stdout);                                                                            \
      exit(2);                                                                                   \
    }                                                                                            \
  } while (0)

static cudaStream_t st;

static double now() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// Polls the stream: HANG (exit 3) after 10 s, exit 2 on an error.
static void wait_done() {
  double t0 = now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(st);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) {
      printf("CUDA error %s (kernel)\n", cudaGetErrorString(e));
      fflush(stdout);
      exit(2);
    }
    if (now() - t0 > 10) {
      printf("HANG\n");
      fflush(stdout);
      _exit(3);
    }
    usleep(100);
  }
}

static std::string list_of(std::vector<unsigned> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  char buf[32];
  for (size_t i = 0; i < v.size(); i++) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) j++;
    if (j > i)
      snprintf(buf, sizeof(buf), "%s%u-%u", i ? "," : "", v[i], v[j]);
    else
      snprintf(buf, sizeof(buf), "%s%u", i ? "," : "", v[i]);
    out += buf;
    i = j;
  }
  return out.empty() ? "none" : out;
}

struct result {
  double ms;
  int distinct, peak;
  double avg, unit_us;
  std::string sms;
};

// Peak and mean number of blocks running at once, from their start and end.
static void concurrency(const std::vector<unsigned long long> &a, const std::vector<unsigned long long> &b,
                        int *peak, double *avg) {
  std::vector<std::pair<unsigned long long, int>> ev;
  unsigned long long lo = ~0ull, hi = 0;
  double busy = 0;
  for (size_t i = 0; i < a.size(); i++) {
    ev.push_back({a[i], 1});
    ev.push_back({b[i], -1});
    lo = std::min(lo, a[i]);
    hi = std::max(hi, b[i]);
    busy += (double)(b[i] - a[i]);
  }
  std::sort(ev.begin(), ev.end());  // at one time, ends (-1) before starts (+1)
  int cur = 0;
  *peak = 0;
  for (auto &e : ev) {
    cur += e.second;
    *peak = std::max(*peak, cur);
  }
  *avg = hi > lo ? busy / (double)(hi - lo) : 0;
}

// Launches work on grid blocks in clusters of cs, a warm-up and REPS timed
// runs. Returns the launch's error when the first launch is refused (then
// nothing ran), else exits on an error.
static cudaError_t run(int cs, int grid, int units, long long unit_cycles, int smem, unsigned *d_sm,
                       unsigned long long *d_t0, unsigned long long *d_t1, result *r) {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = cs;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(128);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cfg.attrs = at;
  cfg.numAttrs = 1;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int i = 0; i < REPS + 1; i++) {
    CK(cudaEventRecord(e0, st));
    cudaError_t e = cudaLaunchKernelEx(&cfg, work, d_sm, d_t0, d_t1, units, unit_cycles);
    if (e != cudaSuccess) {
      if (i > 0) CK(e);
      (void)cudaGetLastError();
      wait_done();  // the recorded event
      CK(cudaEventDestroy(e0));
      CK(cudaEventDestroy(e1));
      return e;
    }
    CK(cudaEventRecord(e1, st));
    wait_done();
    float t;
    CK(cudaEventElapsedTime(&t, e0, e1));
    if (i > 0) ms.push_back(t);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  r->ms = ms[ms.size() / 2];
  std::vector<unsigned> h_sm(grid);
  std::vector<unsigned long long> a(grid), b(grid);
  CK(cudaMemcpy(h_sm.data(), d_sm, grid * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(a.data(), d_t0, grid * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(b.data(), d_t1, grid * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  std::vector<unsigned> u(h_sm);
  std::sort(u.begin(), u.end());
  r->distinct = (int)(std::unique(u.begin(), u.end()) - u.begin());
  r->sms = list_of(h_sm);
  concurrency(a, b, &r->peak, &r->avg);
  std::vector<double> d(grid);
  for (int i = 0; i < grid; i++) d[i] = (double)(b[i] - a[i]) / 1e3;
  std::sort(d.begin(), d.end());
  r->unit_us = d[d.size() / 2];
  return cudaSuccess;
}

int main(int argc, char **argv) {
  int max_cs = argc > 1 ? atoi(argv[1]) : 16;
  int nsm, per_sm, optin;
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  int smem = std::min(optin, per_sm / 2 + 8192);  // two blocks never fit in one SM
  CK(cudaFuncSetAttribute(work, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(work, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  unsigned *d_sm;
  unsigned long long *d_t0, *d_t1;
  CK(cudaMalloc(&d_sm, WAVE_BLOCKS * sizeof(unsigned)));
  CK(cudaMalloc(&d_t0, WAVE_BLOCKS * sizeof(unsigned long long)));
  CK(cudaMalloc(&d_t1, WAVE_BLOCKS * sizeof(unsigned long long)));
  const int sizes[] = {1, 2, 4, 8, 16};
  for (int cs : sizes) {
    if (cs > max_cs) break;
    printf("cluster=%d sm_count=%d smem=%d ", cs, nsm, smem);
    fflush(stdout);
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = cs;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(cs);
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    int mac = 0;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&mac, (void *)work, &cfg);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      if (cs != 16) CK(e);
      printf("skipped=occupancy:%s\n", cudaGetErrorName(e));
      fflush(stdout);
      continue;
    }
    printf("max_active_clusters=%d max_active_blocks=%d ", mac, mac * cs);
    if (mac == 0) {  // it could not run: a launch might wait forever
      printf("skipped=no_active_clusters\n");
      fflush(stdout);
      continue;
    }
    fflush(stdout);
    result w, p;
    e = run(cs, WAVE_BLOCKS, WAVE_BLOCKS, SPIN, smem, d_sm, d_t0, d_t1, &w);
    if (e != cudaSuccess) {
      if (cs != 16) CK(e);
      printf("skipped=launch:%s\n", cudaGetErrorName(e));
      fflush(stdout);
      continue;
    }
    printf("wave_ms=%.3f distinct_sms=%d wave_peak=%d wave_avg=%.1f unit_us=%.1f ", w.ms, w.distinct,
           w.peak, w.avg, w.unit_us);
    fflush(stdout);
    if (mac * cs <= WAVE_BLOCKS) {
      e = run(cs, mac * cs, WAVE_BLOCKS * SPLIT, SPIN / SPLIT, smem, d_sm, d_t0, d_t1, &p);
      if (e != cudaSuccess) {
        if (cs != 16) CK(e);
        printf("p_grid=%d persistent=skipped:%s sms=%s\n", mac * cs, cudaGetErrorName(e), w.sms.c_str());
        fflush(stdout);
        continue;
      }
      printf("p_grid=%d persistent_ms=%.3f p_distinct_sms=%d p_peak=%d p_avg=%.1f sms=%s p_sms=%s\n",
             mac * cs, p.ms, p.distinct, p.peak, p.avg, w.sms.c_str(), p.sms.c_str());
    } else {
      printf("p_grid=%d persistent=skipped sms=%s\n", mac * cs, w.sms.c_str());
    }
    fflush(stdout);
  }
  CK(cudaFree(d_sm));
  CK(cudaFree(d_t0));
  CK(cudaFree(d_t1));
  CK(cudaStreamDestroy(st));
  return 0;
}
