// lat.cu - the latency-critical task L of the priorities benchmark.
//   lat MODE PERIOD_MS DUTIES PERIODS OUT.csv
// MODE compute: 16 blocks of 256 threads spinning ~20 us; memory: 16 blocks of
// 1024 threads copying 64 MB. For each duty D in DUTIES (comma list, percent;
// 100 = back to back) L sleeps one period, then runs PERIODS periods: a burst
// of jobs (launch + cudaStreamSynchronize, timed on the host) during the first
// D% of each period, idle for the rest. Writes one line per job:
//   duty,period,job,t_us,lat_us,gt_ns    (t_us: job start from the run's start)
// and comment lines: "# gt_offset_ns=G" (globaltimer - CLOCK_MONOTONIC), "# sms=..."
// (the SMs L's kernels ran on), "# phase D BEGIN_NS END_NS" (CLOCK_MONOTONIC).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "lat: %s: %s\n", #x, cudaGetErrorString(e_)); return 2; } } while (0)

static __device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}
static __device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }

struct rec { unsigned long long gt; unsigned long long sms[3]; };

__device__ void mark(rec *r) {
  if (threadIdx.x == 0) {
    unsigned s = smid();
    atomicOr(&r->sms[s / 64], 1ull << (s % 64));
    if (blockIdx.x == 0) r->gt = gtimer();
  }
}

__global__ void spin(long long cycles, rec *r) {
  mark(r);
  long long t0 = clock64();
  while (clock64() - t0 < cycles) { }
}

__global__ void copy(const float4 *in, float4 *out, size_t n, rec *r) {
  mark(r);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = __ldcs(in + i);
}

static long long now_ns() {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
static void sleep_until(long long t) {
  struct timespec ts = {(time_t)(t / 1000000000ll), (long)(t % 1000000000ll)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) { }
}

struct job { int duty, period, n; long long t; float lat; int slot; };

int main(int argc, char **argv) {
  if (argc != 6 || (strcmp(argv[1], "compute") && strcmp(argv[1], "memory"))) {
    fprintf(stderr, "usage: lat compute|memory PERIOD_MS DUTIES PERIODS OUT.csv\n");
    return 2;
  }
  int memory = !strcmp(argv[1], "memory");
  long long period = (long long)(atof(argv[2]) * 1e6);
  int periods = atoi(argv[4]);
  std::vector<int> duties;
  for (char *p = strtok(argv[3], ","); p; p = strtok(NULL, ",")) duties.push_back(atoi(p));
  int khz; CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  long long cycles = 20ll * khz / 1000;  // ~20 us
  size_t bytes = 64ull << 20, n = bytes / sizeof(float4);
  float4 *in = NULL, *out = NULL;
  const int NREC = 1 << 20;
  rec *r, *hr = (rec *)calloc(NREC, sizeof(rec));
  CK(cudaMalloc(&r, NREC * sizeof(rec)));
  CK(cudaMemset(r, 0, NREC * sizeof(rec)));
  if (memory) { CK(cudaMalloc(&in, bytes)); CK(cudaMalloc(&out, bytes)); CK(cudaMemset(in, 0, bytes)); }
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int slot = 0;
  auto launch = [&](void) -> cudaError_t {
    rec *x = r + (slot++ % NREC);
    if (memory) copy<<<16, 1024, 0, s>>>(in, out, n, x); else spin<<<16, 256, 0, s>>>(cycles, x);
    return cudaStreamSynchronize(s);
  };
  // Warm-up, then the offset of globaltimer to CLOCK_MONOTONIC from the fastest of 20 jobs.
  long long best = 1ll << 62, off = 0;
  for (int i = 0; i < 30; i++) {
    long long a = now_ns(); int k = slot; CK(launch()); long long b = now_ns();
    rec h; CK(cudaMemcpy(&h, r + k, sizeof h, cudaMemcpyDeviceToHost));
    if (i >= 10 && b - a < best) { best = b - a; off = (long long)h.gt - a; }  // kernel starts just after launch
  }
  std::vector<job> jobs; jobs.reserve(1 << 20);
  std::vector<long long> pb, pe;
  long long t_run = now_ns();
  for (size_t d = 0; d < duties.size(); d++) {
    long long base = now_ns() + period, burst = period * duties[d] / 100;
    pb.push_back(base);
    for (int p = 0; p < periods; p++) {
      long long start = base + p * period, end = start + burst;
      sleep_until(start);
      for (int j = 0;; j++) {
        long long a = now_ns();
        if (a >= end && j > 0) break;
        int k = slot; CK(launch()); long long b = now_ns();
        jobs.push_back({duties[d], p, j, a, (float)((b - a) / 1e3), k});
        if (jobs.size() >= (size_t)NREC - 64) break;
      }
    }
    pe.push_back(now_ns());
  }
  size_t used = slot < NREC ? slot : NREC;
  CK(cudaMemcpy(hr, r, used * sizeof(rec), cudaMemcpyDeviceToHost));
  unsigned long long sms[3] = {0, 0, 0};
  for (size_t i = 0; i < used; i++) for (int w = 0; w < 3; w++) sms[w] |= hr[i].sms[w];
  FILE *f = fopen(argv[5], "w");
  if (!f) { perror(argv[5]); return 2; }
  fprintf(f, "# lat %s period_ms=%s periods=%d run_start_ns=%lld\n# gt_offset_ns=%lld (+-%lld)\n# sms=", argv[1], argv[2], periods, t_run, off, best / 2);
  for (int i = 0; i < 192; i++) if (sms[i / 64] >> (i % 64) & 1) fprintf(f, "%d ", i);
  fprintf(f, "\n");
  for (size_t d = 0; d < duties.size(); d++) fprintf(f, "# phase %d %lld %lld\n", duties[d], pb[d], pe[d]);
  fprintf(f, "duty,period,job,t_us,lat_us,gt_ns\n");
  for (auto &j : jobs)
    fprintf(f, "%d,%d,%d,%.1f,%.2f,%llu\n", j.duty, j.period, j.n, (j.t - t_run) / 1e3, j.lat, hr[j.slot % NREC].gt);
  fclose(f);
  return 0;
}
