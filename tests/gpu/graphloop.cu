// graphloop.cu - replays a CUDA graph over and over and logs, per replay, its
// host start/end (CLOCK_MONOTONIC ns), its time, and the TPCs the blocks of its
// first and last kernel node ran on (from %smid). For nvtaskset's GPU tests of
// graphs following partition changes.
//   graphloop [--nodes K] [--driver] [--child] [--update N] [--setparams N]
//             [--stop FILE] [--out FILE] [--blocks B] [--spin CYCLES] [--iters N]
//   graphloop --cost  replay costs of graphs of 1 and 20 tiny kernels (mean us per
//             replay); with NVTASKSET=path under nvtaskset, also the first replay
//             after a partition change (it runs "nvtaskset -p" on itself).
// --driver builds the graph by hand through the driver API (else: stream capture
// through the runtime); --child puts the kernels into a child graph node;
// --update N: every N replays, cudaGraphExecUpdate from a freshly captured
// identical graph; --setparams N: every N replays, change node 0's argument
// through cudaGraphExecKernelNodeSetParams (the kernel writes it: checked).
// A replay that does not finish within 10 s is reported as HANG (exit 3).
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <vector>

__global__ void spin(int *out, long long cycles, int tag) {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  if (threadIdx.x == 0) out[blockIdx.x] = (int)s + (tag << 16);
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}

__global__ void tiny(int *x) { if (!threadIdx.x && !blockIdx.x) (*x)++; }
static long long now_ns() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
#define CK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "graphloop: %s: %s\n", #x, cudaGetErrorString(e_)); exit(4); } } while (0)

static int nodes = 3, blocks = 1056, driver = 0, child = 0;
static long long cycles = 200000;
static std::vector<int *> bufs;
static int tag0 = 1;

static cudaGraph_t build(cudaStream_t st) {
  cudaGraph_t g;
  if (!driver) {
    cudaGraph_t inner;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < nodes; i++) spin<<<blocks, 128, 0, st>>>(bufs[i], cycles, i == 0 ? tag0 : 0);
    CK(cudaStreamEndCapture(st, &inner));
    if (!child) return inner;
    CK(cudaGraphCreate(&g, 0)); cudaGraphNode_t n; CK(cudaGraphAddChildGraphNode(&n, g, nullptr, 0, inner));
    return g;
  }
  CUgraph dg; cuGraphCreate(&dg, 0);
  CUgraph target = dg, inner = nullptr;
  if (child) { cuGraphCreate(&inner, 0); target = inner; }
  CUfunction f; cudaGetFuncBySymbol((cudaFunction_t *)&f, (const void *)spin);
  CUgraphNode prev = nullptr;
  for (int i = 0; i < nodes; i++) {
    static int tags[64]; tags[i] = i == 0 ? tag0 : 0;
    void *args[] = {&bufs[i], &cycles, &tags[i]};
    CUDA_KERNEL_NODE_PARAMS p = {}; p.func = f; p.gridDimX = blocks; p.gridDimY = p.gridDimZ = 1; p.blockDimX = 128; p.blockDimY = p.blockDimZ = 1; p.kernelParams = args;
    CUgraphNode n; if (cuGraphAddKernelNode(&n, target, prev ? &prev : nullptr, prev ? 1 : 0, &p)) { fprintf(stderr, "graphloop: cuGraphAddKernelNode failed\n"); exit(4); }
    prev = n;
  }
  if (child) { CUgraphNode n; cuGraphAddChildGraphNode(&n, dg, nullptr, 0, inner); cuGraphDestroy(inner); }
  return (cudaGraph_t)dg;
}

static void tpcs(const std::vector<int> &h, char *buf, size_t len, int *tag) {
  bool tpc[256] = {false};
  for (int b = 0; b < blocks; b++) { int s = h[b] & 0xffff; if (h[b] >= 0 && s < 512) tpc[s / 2] = true; }
  *tag = h[0] >> 16;
  size_t n = 0; buf[0] = 0;
  for (int t = 0, first = 1; t < 256; t++) if (tpc[t]) {
    int u = t; while (u + 1 < 256 && tpc[u + 1]) u++;
    n += snprintf(buf + n, len - n, first ? "%d" : ",%d", t); if (u > t) n += snprintf(buf + n, len - n, "-%d", u); first = 0; t = u;
  }
}

static int cost(void) {
  cudaStream_t st; CK(cudaStreamCreate(&st));
  int *x; CK(cudaMalloc(&x, 4));
  cudaGraph_t g1, g20; cudaGraphExec_t e1, e20;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal)); tiny<<<1, 32, 0, st>>>(x); CK(cudaStreamEndCapture(st, &g1));
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal)); for (int i = 0; i < 20; i++) tiny<<<1, 32, 0, st>>>(x); CK(cudaStreamEndCapture(st, &g20));
  CK(cudaGraphInstantiate(&e1, g1, 0)); CK(cudaGraphInstantiate(&e20, g20, 0));
  for (int i = 0; i < 2000; i++) { cudaGraphLaunch(e1, st); cudaGraphLaunch(e20, st); }
  CK(cudaStreamSynchronize(st));
  for (int r = 0; r < 3; r++) {
    long long t = now_ns(); for (int i = 0; i < 20000; i++) cudaGraphLaunch(e1, st); CK(cudaStreamSynchronize(st)); double a = (now_ns() - t) / 20000.0 / 1e3;
    t = now_ns(); for (int i = 0; i < 5000; i++) cudaGraphLaunch(e20, st); CK(cudaStreamSynchronize(st)); double b = (now_ns() - t) / 5000.0 / 1e3;
    printf("cost replay1_us=%.4f replay20_us=%.4f\n", a, b);
  }
  const char *nvt = getenv("NVTASKSET");
  if (nvt && *nvt) {
    std::vector<double> after, plain;
    char cmd[4096];
    for (int i = 0; i < 21; i++) {
      snprintf(cmd, sizeof(cmd), "%s -p -c %s %d >/dev/null", nvt, i % 2 ? "0-32" : "0-65", (int)getpid());
      if (system(cmd)) { fprintf(stderr, "graphloop: %s failed\n", cmd); return 4; }
      long long t = now_ns(); CK(cudaGraphLaunch(e20, st)); CK(cudaStreamSynchronize(st)); double a = (now_ns() - t) / 1e3;
      t = now_ns(); CK(cudaGraphLaunch(e20, st)); CK(cudaStreamSynchronize(st)); double b = (now_ns() - t) / 1e3;
      if (i) { after.push_back(a); plain.push_back(b); }
    }
    std::sort(after.begin(), after.end()); std::sort(plain.begin(), plain.end());
    printf("change replay20 first_after_change_us=%.1f next_us=%.1f (medians of 20)\n", after[10], plain[10]);
  }
  return 0;
}

int main(int argc, char **argv) {
  long iters = 0, update = 0, setparams = 0;
  if (argc == 2 && !strcmp(argv[1], "--cost")) return cost();
  const char *stop = NULL, *outp = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--driver")) { driver = 1; continue; }
    if (!strcmp(argv[i], "--child")) { child = 1; continue; }
    if (i + 1 >= argc) break;
    if (!strcmp(argv[i], "--nodes")) nodes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--update")) update = atol(argv[++i]);
    else if (!strcmp(argv[i], "--setparams")) setparams = atol(argv[++i]);
    else if (!strcmp(argv[i], "--stop")) stop = argv[++i];
    else if (!strcmp(argv[i], "--out")) outp = argv[++i];
    else if (!strcmp(argv[i], "--blocks")) blocks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--spin")) cycles = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--iters")) iters = atol(argv[++i]);
  }
  if (nodes < 1 || nodes > 64) return 2;
  FILE *out = outp ? fopen(outp, "w") : stdout;
  cudaStream_t st; CK(cudaStreamCreate(&st));
  bufs.resize(nodes);
  for (int i = 0; i < nodes; i++) CK(cudaMalloc(&bufs[i], blocks * sizeof(int)));
  cudaGraph_t g = build(st);
  cudaGraphExec_t ge; CK(cudaGraphInstantiate(&ge, g, 0));
  std::vector<int> h(blocks);
  for (long it = 0; iters == 0 || it < iters; it++) {
    struct stat sb;
    if (stop && stat(stop, &sb) == 0) break;
    if (update && it && it % update == 0) {
      cudaGraph_t g2 = build(st); cudaGraphExecUpdateResultInfo info;
      CK(cudaGraphExecUpdate(ge, g2, &info)); CK(cudaGraphDestroy(g2));
    }
    if (setparams && it && it % setparams == 0 && !child) {
      tag0 = tag0 % 100 + 1;
      cudaGraphNode_t ns[64]; size_t nn = 64; CK(cudaGraphGetNodes(g, ns, &nn));
      cudaKernelNodeParams kp; CK(cudaGraphKernelNodeGetParams(ns[0], &kp));
      void *args[] = {&bufs[0], &cycles, &tag0}; kp.kernelParams = args;
      CK(cudaGraphExecKernelNodeSetParams(ge, ns[0], &kp));
    }
    long long t0 = now_ns();
    CK(cudaGraphLaunch(ge, st));
    for (;;) {
      cudaError_t e = cudaStreamQuery(st);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) { fprintf(stderr, "graphloop: replay failed: %s\n", cudaGetErrorString(e)); return 4; }
      if (now_ns() - t0 > 10000000000LL) { fprintf(stderr, "graphloop: HANG\n"); _exit(3); }
    }
    long long t1 = now_ns();
    char first[512], last[512]; int tagf, tagl;
    CK(cudaMemcpy(h.data(), bufs[0], blocks * sizeof(int), cudaMemcpyDeviceToHost)); tpcs(h, first, sizeof(first), &tagf);
    CK(cudaMemcpy(h.data(), bufs[nodes - 1], blocks * sizeof(int), cudaMemcpyDeviceToHost)); tpcs(h, last, sizeof(last), &tagl);
    fprintf(out, "%lld %lld %.4f %s %s tag=%d want=%d\n", t0, t1, (t1 - t0) / 1e6, first, last, tagf, tag0);
    fflush(out);
  }
  return 0;
}
