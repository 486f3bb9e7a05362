// Probe app (not part of nvtaskset): can a graph exec's kernels be made to take a new mask
// in place (no new exec)? Run under gcb.so with PROBE_MASK=1 (the launch callback writes
// probe_mask0 into every TMD it sees).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>
#include <dlfcn.h>
#include <cuda.h>
#include <cuda_runtime.h>
#define NB 1056
__global__ void rec(int *out, int tag) {
  unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  long t0 = clock64(); while (clock64() - t0 < 20000) {}
  if (!threadIdx.x) out[blockIdx.x] = sm + 1000 * tag;
}
__global__ void tiny(int *x) { if (!threadIdx.x && !blockIdx.x) (*x)++; }
__global__ void nop() {}
template <class T> static T sym(const char *n) { return (T)dlsym(RTLD_DEFAULT, n); }
static int nsm(int *d) { static int h[NB]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost); std::set<int> s; for (int i = 0; i < NB; i++) if (h[i] >= 0) s.insert(h[i] % 1000); return (int)s.size(); }
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static std::vector<cudaGraphNode_t> nodes_of(cudaGraph_t g) { size_t n = 0; cudaGraphGetNodes(g, nullptr, &n); std::vector<cudaGraphNode_t> v(n); cudaGraphGetNodes(g, v.data(), &n); return v; }
// A clone of g whose kernel nodes all run nop.
static cudaGraph_t dummy_of(cudaGraph_t g) {
  cudaGraph_t c; cudaGraphClone(&c, g);
  for (auto n : nodes_of(c)) { cudaGraphNodeType t; cudaGraphNodeGetType(n, &t); if (t != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams p = {}; p.func = (void *)nop; p.gridDim = dim3(1); p.blockDim = dim3(1); p.kernelParams = nullptr; cudaError_t e = cudaGraphKernelNodeSetParams(n, &p); if (e) printf("dummy set rc=%d\n", e); }
  return c;
}
int main() {
  uint32_t *mask0 = sym<uint32_t *>("probe_mask0");
  auto nl = sym<int (*)(void)>("probe_nlaunch");
  if (!mask0 || !nl) { printf("run under gcb.so\n"); return 1; }
  cudaStream_t st; cudaStreamCreate(&st);
  int *d[3]; for (int i = 0; i < 3; i++) cudaMalloc(&d[i], NB * 4);
  cudaGraph_t g; cudaGraphExec_t ge;
  cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < 3; i++) rec<<<NB, 64, 0, st>>>(d[i], 1);
  cudaStreamEndCapture(st, &g);
  cudaGraphInstantiate(&ge, g, 0);
  *mask0 = 0xfffffffe; cudaGraphLaunch(ge, st); cudaStreamSynchronize(st);
  printf("start sms=%d,%d,%d cb=%d (2 = TPC0)\n", nsm(d[0]), nsm(d[1]), nsm(d[2]), nl());
  cudaGraph_t C; cudaGraphClone(&C, g); cudaGraph_t D = dummy_of(C);
  cudaGraphExecUpdateResultInfo info;
  // V1: update to the dummy graph and back, no launch between.
  *mask0 = 0xfffffffc; int c0 = nl();
  cudaError_t e1 = cudaGraphExecUpdate(ge, D, &info), e2 = cudaGraphExecUpdate(ge, C, &info);
  cudaGraphLaunch(ge, st); cudaStreamSynchronize(st);
  printf("V1 update dummy+back rc=%d,%d sms=%d,%d,%d cb+%d (4 = refreshed)\n", e1, e2, nsm(d[0]), nsm(d[1]), nsm(d[2]), nl() - c0);
  // V2: per-node set params to nop and back.
  *mask0 = 0xfffffff8; c0 = nl();
  auto gn = nodes_of(g), cn = nodes_of(C);
  for (size_t i = 0; i < gn.size(); i++) {
    cudaKernelNodeParams orig, p = {}; cudaGraphKernelNodeGetParams(cn[i], &orig);
    p.func = (void *)nop; p.gridDim = dim3(1); p.blockDim = dim3(1);
    cudaError_t a = cudaGraphExecKernelNodeSetParams(ge, gn[i], &p), b = cudaGraphExecKernelNodeSetParams(ge, gn[i], &orig);
    if (a || b) printf("V2 rc=%d,%d\n", a, b);
  }
  cudaGraphLaunch(ge, st); cudaStreamSynchronize(st);
  printf("V2 setparams nop+back sms=%d,%d,%d cb+%d (6 = refreshed)\n", nsm(d[0]), nsm(d[1]), nsm(d[2]), nl() - c0);
  // V3: per-node set params with other shared memory and back.
  *mask0 = 0xfffffff0; c0 = nl();
  for (size_t i = 0; i < gn.size(); i++) {
    cudaKernelNodeParams orig; cudaGraphKernelNodeGetParams(cn[i], &orig); cudaKernelNodeParams p = orig; p.sharedMemBytes += 1024;
    cudaGraphExecKernelNodeSetParams(ge, gn[i], &p); cudaGraphExecKernelNodeSetParams(ge, gn[i], &orig);
  }
  cudaGraphLaunch(ge, st); cudaStreamSynchronize(st);
  printf("V3 setparams smem+back sms=%d,%d,%d cb+%d (8 = refreshed)\n", nsm(d[0]), nsm(d[1]), nsm(d[2]), nl() - c0);
  // V4: a disabled node stays disabled across the refresh of V1?
  *mask0 = 0xffffffe0; c0 = nl();
  cudaGraphNodeSetEnabled(ge, gn[0], 0);
  cudaMemset(d[0], 0xff, NB * 4);
  cudaGraphExecUpdate(ge, D, &info); cudaGraphExecUpdate(ge, C, &info);
  cudaGraphLaunch(ge, st); cudaStreamSynchronize(st);
  unsigned en = 9; cudaGraphNodeGetEnabled(ge, gn[0], &en);
  printf("V4 node0 disabled then refresh: node0 ran sms=%d (0 = stayed disabled) enabled=%u node1 sms=%d (10 = refreshed) cb+%d\n", nsm(d[0]), en, nsm(d[1]), nl() - c0);
  cudaGraphNodeSetEnabled(ge, gn[0], 1);
  // V5: exec-level kernel param change by the app, then refresh from C (stale!) would undo it:
  // V5 measures cost instead: refresh of graphs of 1, 20 and 200 kernel nodes.
  int *x; cudaMalloc(&x, 4);
  for (int n : {1, 20, 200}) {
    cudaGraph_t h; cudaGraphExec_t he;
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal); for (int i = 0; i < n; i++) tiny<<<1, 32, 0, st>>>(x); cudaStreamEndCapture(st, &h);
    cudaGraphInstantiate(&he, h, 0); cudaGraph_t hc; cudaGraphClone(&hc, h); cudaGraph_t hd = dummy_of(hc);
    for (int i = 0; i < 50; i++) cudaGraphLaunch(he, st); cudaStreamSynchronize(st);
    double tr = 0, tl = 0, tp = 0; int reps = 20;
    for (int r = 0; r < reps; r++) {
      double t0 = now(); cudaGraphExecUpdate(he, hd, &info); cudaGraphExecUpdate(he, hc, &info); double t1 = now();
      cudaGraphLaunch(he, st); cudaStreamSynchronize(st); double t2 = now();
      cudaGraphLaunch(he, st); cudaStreamSynchronize(st); double t3 = now();
      tr += t1 - t0; tl += t2 - t1; tp += t3 - t2;
    }
    printf("V5 nodes=%d refresh(2 updates)=%.1f us, first replay after=%.1f us, plain replay=%.1f us\n", n, tr / reps * 1e6, tl / reps * 1e6, tp / reps * 1e6);
  }
  // V6: instantiate cost of a shadow exec (alternative design), same sizes.
  for (int n : {1, 20, 200}) {
    cudaGraph_t h; cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal); for (int i = 0; i < n; i++) tiny<<<1, 32, 0, st>>>(x); cudaStreamEndCapture(st, &h);
    double t0 = now(); cudaGraphExec_t he; cudaGraphInstantiate(&he, h, 0); double t1 = now(); cudaGraphLaunch(he, st); cudaStreamSynchronize(st); double t2 = now();
    printf("V6 nodes=%d instantiate=%.1f us first launch=%.1f us\n", n, (t1 - t0) * 1e6, (t2 - t1) * 1e6);
  }
  return 0;
}
