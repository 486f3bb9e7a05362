// smctrl.cu - libsmctrl's interface through nvtaskset (include/libsmctrl.h),
// checked by reading %smid back. Built against build/lib/nvtaskset/libsmctrl.so.
//   smctrl all             every scenario below, one line each:
//                          "NAME sms=LIST" (the SMs the launch ran on), and
//                          for thread-block clusters "NAME sms=LIST want=LIST"
//   smctrl inside LIST     global mask enabling LIST (a TPC list "a-b,c");
//                          prints "inside sms=LIST"
//   smctrl rate N          launches per second of N tiny kernels on a stream,
//                          before any libsmctrl call and then with a global and
//                          a stream mask set: "rate plain=R masked=R"
//   smctrl loop STOP STATE stream mask enabling TPCs 0-15 on a stream of its
//                          own; launches until file STOP exists, writing the
//                          SMs of the latest launch to STATE when they change
// A launch that does not finish within 10 s is reported as HANG (exit 3).
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <string>
#include <thread>
#include <vector>
#include "libsmctrl.h"

__global__ void record(int *sm_out, unsigned long long *t_out, long long spin) {
  unsigned s;
  unsigned long long t0, t1;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long c0 = clock64();
  while (clock64() - c0 < spin) {}
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (threadIdx.x == 0) {
    sm_out[blockIdx.x] = s;
    if (t_out) { t_out[2 * blockIdx.x] = t0; t_out[2 * blockIdx.x + 1] = t1; }
  }
}

#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(2); } } while (0)

static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void wait_done(cudaStream_t s) {
  double t0 = now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) { printf("CUDA error %s\n", cudaGetErrorString(e)); exit(2); }
    if (now() - t0 > 10) { printf("HANG\n"); fflush(stdout); _exit(3); }
    usleep(100);
  }
}
static std::string list_of(std::vector<int> v) {
  std::sort(v.begin(), v.end()); v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out; char buf[32];
  for (size_t i = 0; i < v.size(); i++) {
    size_t j = i; while (j + 1 < v.size() && v[j + 1] == v[j] + 1) j++;
    snprintf(buf, sizeof(buf), i ? ",%d" : "%d", v[i]); out += buf;
    if (j > i) { snprintf(buf, sizeof(buf), "-%d", v[j]); out += buf; }
    i = j;
  }
  return out;
}
// The enable mask of a TPC list "a-b,c" as a libsmctrl disable mask.
static uint128_t disable_all_but(const char *list) {
  uint128_t on = 0; char *end; const char *p = list;
  while (*p) {
    long a = strtol(p, &end, 10), b = a;
    if (*end == '-') b = strtol(end + 1, &end, 10);
    for (long t = a; t <= b; t++) on |= (uint128_t)1 << t;
    p = *end == ',' ? end + 1 : end;
  }
  return ~on;
}

static int nsm, nblocks;
static int *d_sm;

// One launch of 8 blocks per SM on stream s by the runtime's <<<>>>; its SMs.
static std::string run(cudaStream_t s, long long spin = 20000) {
  std::vector<int> h(nblocks);
  record<<<nblocks, 128, 0, s>>>(d_sm, nullptr, spin); CK(cudaGetLastError()); wait_done(s);
  CK(cudaMemcpy(h.data(), d_sm, nblocks * sizeof(int), cudaMemcpyDeviceToHost));
  return list_of(h);
}
static std::string fetch(int *d) {
  std::vector<int> h(nblocks);
  CK(cudaMemcpy(h.data(), d, nblocks * sizeof(int), cudaMemcpyDeviceToHost));
  return list_of(h);
}
static void line(const char *name, const std::string &sms) { printf("%s sms=%s\n", name, sms.c_str()); fflush(stdout); }

// Two streams on disjoint TPCs at once: prints each's SMs and whether their
// kernels overlapped in time.
static void two_streams(void) {
  cudaStream_t a, b; int *d2; unsigned long long *ta, *tb;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  libsmctrl_set_stream_mask_ext(a, disable_all_but("0-7"));
  libsmctrl_set_stream_mask_ext(b, disable_all_but("8-15"));
  CK(cudaMalloc(&d2, nblocks * sizeof(int)));
  CK(cudaMalloc(&ta, 2 * nblocks * sizeof(*ta))); CK(cudaMalloc(&tb, 2 * nblocks * sizeof(*tb)));
  int n = 16 * 8; // 8 blocks per SM of 16 SMs: each kernel runs long
  record<<<n, 128, 0, a>>>(d_sm, ta, 20000000);
  record<<<n, 128, 0, b>>>(d2, tb, 20000000);
  CK(cudaGetLastError()); wait_done(a); wait_done(b);
  std::vector<unsigned long long> ha(2 * n), hb(2 * n);
  CK(cudaMemcpy(ha.data(), ta, 2 * n * sizeof(*ta), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), tb, 2 * n * sizeof(*tb), cudaMemcpyDeviceToHost));
  std::vector<int> sa(n), sb(n);
  CK(cudaMemcpy(sa.data(), d_sm, n * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(sb.data(), d2, n * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned long long a0 = ~0ull, a1 = 0, b0 = ~0ull, b1 = 0;
  for (int i = 0; i < n; i++) {
    a0 = std::min(a0, ha[2 * i]); a1 = std::max(a1, ha[2 * i + 1]);
    b0 = std::min(b0, hb[2 * i]); b1 = std::max(b1, hb[2 * i + 1]);
  }
  unsigned long long lo = std::max(a0, b0), hi = std::min(a1, b1);
  line("two-streams-a", list_of(sa)); line("two-streams-b", list_of(sb));
  printf("two-streams overlap_ms=%.2f a_ms=%.2f b_ms=%.2f\n", hi > lo ? (hi - lo) / 1e6 : 0.0,
         (a1 - a0) / 1e6, (b1 - b0) / 1e6);
  libsmctrl_set_stream_mask_ext(a, 0); libsmctrl_set_stream_mask_ext(b, 0);
  CK(cudaFree(d2)); CK(cudaFree(ta)); CK(cudaFree(tb));
}

// The driver API's launches (cuLaunchKernel, cuLaunchKernelEx) on a masked stream.
static void driver_launches(cudaStream_t s) {
  cudaFunction_t rf; CK(cudaGetFuncBySymbol(&rf, (const void *)record));
  CUfunction f = (CUfunction)rf;
  unsigned long long *none = nullptr; long long spin = 20000;
  void *args[] = {&d_sm, &none, &spin};
  libsmctrl_set_stream_mask_ext(s, disable_all_but("30-33"));
  if (cuLaunchKernel(f, nblocks, 1, 1, 128, 1, 1, 0, (CUstream)s, args, nullptr)) { printf("cuLaunchKernel failed\n"); exit(2); }
  wait_done(s); line("driver-cuLaunchKernel", fetch(d_sm));
  CUlaunchConfig cfg; memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimX = nblocks; cfg.gridDimY = cfg.gridDimZ = 1; cfg.blockDimX = 128; cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = (CUstream)s;
  libsmctrl_set_stream_mask_ext(s, disable_all_but("34-35"));
  if (cuLaunchKernelEx(&cfg, f, args, nullptr)) { printf("cuLaunchKernelEx failed\n"); exit(2); }
  wait_done(s); line("driver-cuLaunchKernelEx", fetch(d_sm));
  cudaLaunchConfig_t rc; memset(&rc, 0, sizeof(rc));
  rc.gridDim = dim3(nblocks); rc.blockDim = dim3(128); rc.stream = s;
  libsmctrl_set_stream_mask_ext(s, disable_all_but("36-37"));
  CK(cudaLaunchKernelEx(&rc, record, d_sm, none, spin));
  wait_done(s); line("runtime-cudaLaunchKernelEx", fetch(d_sm));
  libsmctrl_set_stream_mask_ext(s, 0);
}

// A graph captured from a masked stream, replayed after the mask changed.
static void graph_capture(cudaStream_t s) {
  cudaGraph_t g; cudaGraphExec_t x;
  libsmctrl_set_stream_mask_ext(s, disable_all_but("20-23"));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  record<<<nblocks, 128, 0, s>>>(d_sm, nullptr, 20000);
  CK(cudaStreamEndCapture(s, &g));
  libsmctrl_set_stream_mask_ext(s, disable_all_but("50-51"));
  CK(cudaGraphInstantiate(&x, g, 0));
  CK(cudaGraphLaunch(x, s)); wait_done(s); line("graph-captured", fetch(d_sm));
  CK(cudaGraphLaunch(x, s)); wait_done(s); line("graph-replay", fetch(d_sm));
  line("stream-after-capture", run(s));
  libsmctrl_set_stream_mask_ext(s, 0);
  CK(cudaGraphExecDestroy(x)); CK(cudaGraphDestroy(g));
}

// SMs 2t and 2t+1 of each TPC t enabled by the disable mask m.
static std::string sms_of(uint128_t m) {
  std::vector<int> v;
  for (int t = 0; t < 128; t++) if (!((m >> t) & 1)) { v.push_back(2 * t); v.push_back(2 * t + 1); }
  return list_of(v);
}

// Thread-block clusters of 4 under a global mask: exactly on the mask's TPCs
// where one GPC of them holds a cluster (one block per SM), else on the whole
// GPCs the mask touches. "cluster-NAME sms=LIST want=LIST", the wanted SMs
// from libsmctrl_get_gpc_info_ext (chip-independent).
static void clusters(cudaStream_t s) {
  uint32_t ngpc = 0; uint128_t *gpc;
  if (libsmctrl_get_gpc_info_ext(&ngpc, &gpc, 0)) { printf("cluster no GPCs\n"); return; }
  uint128_t fit = 0, spread = 0, whole = 0;
  for (uint32_t g = 0; g < ngpc && !fit; g++)  // 4 TPCs of the first GPC that has 4
    if (__builtin_popcountll((uint64_t)gpc[g]) + __builtin_popcountll((uint64_t)(gpc[g] >> 64)) >= 4)
      for (int t = 0, n = 0; t < 128 && n < 4; t++) if ((gpc[g] >> t) & 1) { fit |= (uint128_t)1 << t; n++; }
  for (uint32_t g = 0, n = 0; g < ngpc && n < 2; g++)  // one TPC in each of two GPCs
    for (int t = 0; t < 128; t++) if ((gpc[g] >> t) & 1) { spread |= (uint128_t)1 << t; whole |= gpc[g]; n++; break; }
  cudaLaunchConfig_t c; memset(&c, 0, sizeof(c));
  cudaLaunchAttribute a; memset(&a, 0, sizeof(a));
  a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = 4; a.val.clusterDim.y = a.val.clusterDim.z = 1;
  c.gridDim = dim3(nblocks / 4 * 4); c.blockDim = dim3(128); c.stream = s; c.attrs = &a; c.numAttrs = 1;
  unsigned long long *none = nullptr; long long spin = 20000;
  const struct { const char *name; uint128_t on, want; } cases[] = {
    {"cluster-fits", fit, fit}, {"cluster-widened", spread, whole}};
  for (const auto &k : cases) {
    libsmctrl_set_global_mask_ext(~k.on);
    CK(cudaLaunchKernelEx(&c, record, d_sm, none, spin)); wait_done(s);
    printf("%s sms=%s want=%s\n", k.name, fetch(d_sm).c_str(), sms_of(~k.want).c_str()); fflush(stdout);
  }
  libsmctrl_set_global_mask(0);
}

static void queries(void) {
  uint32_t n = 0, ngpc = 0; uint64_t *m64; uint128_t *m128;
  int rc = libsmctrl_get_tpc_info_cuda(&n, 0);
  printf("tpc_info_cuda rc=%d tpcs=%u\n", rc, n);
  rc = libsmctrl_get_tpc_info(&n, 0);
  printf("tpc_info rc=%d tpcs=%u\n", rc, n);
  rc = libsmctrl_get_gpc_info_ext(&ngpc, &m128, 0);
  printf("gpc_info_ext rc=%d gpcs=%u", rc, ngpc);
  for (uint32_t i = 0; !rc && i < ngpc; i++) printf(" %llx:%016llx", (unsigned long long)(m128[i] >> 64), (unsigned long long)m128[i]);
  printf("\n");
  rc = libsmctrl_get_gpc_info(&ngpc, &m64, 0);
  printf("gpc_info rc=%d\n", rc);
  rc = libsmctrl_get_tpc_info_cuda(&n, 99);
  printf("tpc_info_cuda_bad_device rc=%d\n", rc);
}

static void all(void) {
  cudaStream_t s, s2; CK(cudaStreamCreate(&s)); CK(cudaStreamCreate(&s2));
  queries();
  line("baseline", run(s));
  libsmctrl_set_global_mask(~0xfull); line("global64-0-3", run(s));
  libsmctrl_set_global_mask_ext(disable_all_but("16-19")); line("global-16-19", run(s));
  libsmctrl_set_global_mask_ext(disable_all_but("60-65")); line("global-60-65", run(s));
  libsmctrl_set_next_mask_ext(disable_all_but("5")); line("next-5", run(s));
  line("after-next", run(s));
  libsmctrl_set_next_mask(~(1ull << 40)); line("next64-40", run(s));
  libsmctrl_set_stream_mask_ext(s2, disable_all_but("62-65")); line("stream-62-65", run(s2));
  libsmctrl_set_stream_mask(s2, ~0xf0ull); line("stream64-4-7", run(s2));
  line("other-stream-global", run(s));
  libsmctrl_set_stream_mask_ext(nullptr, disable_all_but("9")); line("null-stream-9", run(nullptr));
  libsmctrl_set_stream_mask_ext(cudaStreamPerThread, disable_all_but("11")); line("per-thread-stream-11", run(cudaStreamPerThread));
  libsmctrl_set_global_mask_ext(~(uint128_t)0); line("global-none-enabled", run(s));
  libsmctrl_set_global_mask(0); line("global-cleared", run(s));
  // A thread of its own: the next mask is per thread; streams are not.
  std::thread t([&] { libsmctrl_set_next_mask_ext(disable_all_but("12")); line("thread-next-12", run(s2)); });
  t.join();
  two_streams();
  driver_launches(s2);
  graph_capture(s2);
  clusters(s);
  CK(cudaStreamDestroy(s)); CK(cudaStreamDestroy(s2));
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: smctrl all | inside LIST | loop STOP STATE\n"); return 1; }
  CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  nblocks = nsm * 8;
  CK(cudaMalloc(&d_sm, nblocks * sizeof(int)));
  if (!strcmp(argv[1], "all")) { all(); return 0; }
  if (!strcmp(argv[1], "inside") && argc == 3) {
    libsmctrl_set_global_mask_ext(disable_all_but(argv[2]));
    line("inside", run(0)); return 0;
  }
  if (!strcmp(argv[1], "rate") && argc == 3) {
    int n = atoi(argv[2]); cudaStream_t s; CK(cudaStreamCreate(&s));
    double r[2];
    for (int pass = 0; pass < 2; pass++) {
      if (pass) { libsmctrl_set_global_mask_ext(disable_all_but("0-63")); libsmctrl_set_stream_mask_ext(s, disable_all_but("0-31")); }
      record<<<1, 32, 0, s>>>(d_sm, nullptr, 0); wait_done(s);
      double t0 = now();
      for (int i = 0; i < n; i++) record<<<1, 32, 0, s>>>(d_sm, nullptr, 0);
      wait_done(s);
      r[pass] = n / (now() - t0);
    }
    printf("rate plain=%.0f masked=%.0f\n", r[0], r[1]);
    return 0;
  }
  if (!strcmp(argv[1], "loop") && argc == 4) {
    cudaStream_t s; CK(cudaStreamCreate(&s));
    libsmctrl_set_stream_mask_ext(s, disable_all_but("0-15"));
    std::string last;
    while (access(argv[2], F_OK) != 0) {
      std::string now_sms = run(s);
      if (now_sms != last) {
        std::string tmp = std::string(argv[3]) + ".tmp";
        FILE *f = fopen(tmp.c_str(), "w"); if (!f) return 2;
        fprintf(f, "%s\n", now_sms.c_str()); fclose(f); rename(tmp.c_str(), argv[3]);
        last = now_sms;
      }
      usleep(2000);
    }
    return 0;
  }
  fprintf(stderr, "usage: smctrl all | inside LIST | loop STOP STATE\n"); return 1;
}
