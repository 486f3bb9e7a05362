// Probe app (not part of nvtaskset): graph lifecycle, rewrite+refresh, exec swap, replay cost.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
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
template <class T> static T sym(const char *n) { return (T)dlsym(RTLD_DEFAULT, n); }
static int nsm(int *d) { static int h[NB]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost); std::set<int> s; for (int i = 0; i < NB; i++) s.insert(h[i] % 1000); return (int)s.size(); }
static int tagof(int *d) { int h; cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost); return h / 1000; }
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "all";
  auto ntmd = sym<int (*)(void)>("probe_ntmd");
  auto rewrite = sym<void (*)(uint32_t, uint32_t)>("probe_rewrite");
  auto verbose = sym<void (*)(int)>("probe_verbose");
  void **swap_to = sym<void **>("probe_swap_to");
  int *record = sym<int *>("probe_record");
  int *swapped = sym<int *>("probe_swapped");
  cudaStream_t st; cudaStreamCreate(&st);
  int *d[3]; for (int i = 0; i < 3; i++) cudaMalloc(&d[i], NB * 4);
  if (!strcmp(mode, "all")) {
    // T1: a 3-kernel graph, its lifecycle.
    cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal);
    for (int i = 0; i < 3; i++) rec<<<NB, 64, 0, st>>>(d[i], 1);
    cudaStreamEndCapture(st, &g);
    if (record) *record = 1;
    fprintf(stderr, "APP instantiate\n"); cudaGraphInstantiate(&ge, g, 0);
    fprintf(stderr, "APP upload\n"); cudaGraphUpload(ge, st); cudaStreamSynchronize(st);
    fprintf(stderr, "APP launch x2\n"); for (int i = 0; i < 2; i++) cudaGraphLaunch(ge, st); cudaStreamSynchronize(st);
    printf("T1 tmds=%d sms=%d,%d,%d\n", ntmd ? ntmd() : -1, nsm(d[0]), nsm(d[1]), nsm(d[2]));
    if (verbose) verbose(0);
    if (record) *record = 0;
    // T2: rewrite remembered host TMDs, then refresh by set-params / exec update.
    cudaGraphNode_t nodes[8]; size_t nn = 8; cudaGraphGetNodes(g, nodes, &nn);
    if (rewrite) {
      rewrite(0, 0); // all TPCs
      cudaGraphLaunch(ge, st); cudaStreamSynchronize(st); printf("T2a after rewrite only sms=%d\n", nsm(d[0]));
      for (size_t i = 0; i < nn; i++) { cudaKernelNodeParams kp; cudaGraphKernelNodeGetParams(nodes[i], &kp); cudaError_t e = cudaGraphExecKernelNodeSetParams(ge, nodes[i], &kp); if (e) printf("setparams rc=%d\n", e); }
      cudaGraphLaunch(ge, st); cudaStreamSynchronize(st); printf("T2b after rewrite+setparams sms=%d,%d,%d\n", nsm(d[0]), nsm(d[1]), nsm(d[2]));
      rewrite(0xfffffffe, 0xffffffff); // TPC0 only
      cudaGraphExecUpdateResultInfo info; cudaError_t e = cudaGraphExecUpdate(ge, g, &info);
      cudaGraphLaunch(ge, st); cudaStreamSynchronize(st); printf("T2c after rewrite+execupdate rc=%d sms=%d,%d,%d\n", e, nsm(d[0]), nsm(d[1]), nsm(d[2]));
      rewrite(0, 0);
      cudaGraphUpload(ge, st); cudaGraphLaunch(ge, st); cudaStreamSynchronize(st); printf("T2d after rewrite+upload sms=%d\n", nsm(d[0]));
      // node enable toggle
      rewrite(0xfffffffe, 0xffffffff);
      cudaGraphNodeSetEnabled(ge, nodes[0], 0); cudaGraphNodeSetEnabled(ge, nodes[0], 1);
      cudaGraphLaunch(ge, st); cudaStreamSynchronize(st); printf("T2e after rewrite+disable/enable sms=%d\n", nsm(d[0]));
    }
    // T3: swap the exec in cuGraphLaunch's enter callback.
    cudaGraph_t ga, gb; cudaGraphExec_t ea, eb;
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal); rec<<<NB, 64, 0, st>>>(d[0], 2); cudaStreamEndCapture(st, &ga);
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal); rec<<<NB, 64, 0, st>>>(d[0], 3); cudaStreamEndCapture(st, &gb);
    cudaGraphInstantiate(&ea, ga, 0); cudaGraphInstantiate(&eb, gb, 0);
    cudaGraphLaunch(ea, st); cudaGraphLaunch(eb, st); cudaStreamSynchronize(st);
    printf("T3 handles ea=%p eb=%p ga=%p gb=%p st=%p\n", (void*)ea, (void*)eb, (void*)ga, (void*)gb, (void*)st);
    if (swap_to) {
      *sym<void **>("probe_swap_from") = (void *)ea;
      if (verbose) verbose(1);
      *swap_to = (void *)eb;
      cudaError_t e = cudaGraphLaunch(ea, st); cudaStreamSynchronize(st);
      printf("T3 runtime launch of A with swap to B: rc=%d tag=%d (2=A 3=B) swapped=%d\n", e, tagof(d[0]), *swapped);
      CUresult r = cuGraphLaunch((CUgraphExec)ea, (CUstream)st); cudaStreamSynchronize(st);
      printf("T3 driver launch of A with swap to B: rc=%d tag=%d swapped=%d\n", r, tagof(d[0]), *swapped);
      *swap_to = NULL; if (verbose) verbose(0);
      cudaGraphLaunch(ea, st); cudaStreamSynchronize(st); printf("T3 no swap tag=%d\n", tagof(d[0]));
    }
    // T5: set params to another function and back: does the launch callback fire, is the mask new?
    {
      auto nl = sym<int (*)(void)>("probe_nlaunch");
      int before = nl ? nl() : -1;
      cudaKernelNodeParams kp; cudaGraphKernelNodeGetParams(nodes[0], &kp);
      cudaKernelNodeParams kt = kp; kt.func = (void *)tiny; static int *xx; cudaMalloc(&xx, 4); void *targs[] = {&xx}; kt.kernelParams = targs;
      kt.gridDim = dim3(1); kt.blockDim = dim3(32);
      uint32_t *m0 = sym<uint32_t *>("probe_mask0"); if (m0) *m0 = 0xfffffffc; // TPCs 0,1 from now on
      cudaError_t e1 = cudaGraphExecKernelNodeSetParams(ge, nodes[0], &kt);
      cudaGraphLaunch(ge, st); cudaStreamSynchronize(st);
      cudaError_t e2 = cudaGraphExecKernelNodeSetParams(ge, nodes[0], &kp);
      cudaGraphLaunch(ge, st); cudaStreamSynchronize(st);
      printf("T5 func swap rc=%d,%d callbacks %d -> %d sms=%d,%d (4 = new mask applied)\n", e1, e2, before, nl ? nl() : -1, nsm(d[0]), nsm(d[1]));
    }
    // T3b: device graph? conditional? skip. Destroy of the graph after instantiate: does the exec keep working.
    cudaGraphDestroy(ga); cudaGraphLaunch(ea, st); cudaStreamSynchronize(st); printf("T3b after graph destroy tag=%d err=%d\n", tagof(d[0]), cudaGetLastError());
  }
  if (!strcmp(mode, "cost")) {
    // T4: replay cost of a 1-kernel graph and a 20-kernel graph, and plain launches.
    int *x; cudaMalloc(&x, 4);
    cudaGraph_t g1, g20; cudaGraphExec_t e1, e20;
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal); tiny<<<1, 32, 0, st>>>(x); cudaStreamEndCapture(st, &g1);
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal); for (int i = 0; i < 20; i++) tiny<<<1, 32, 0, st>>>(x); cudaStreamEndCapture(st, &g20);
    cudaGraphInstantiate(&e1, g1, 0); cudaGraphInstantiate(&e20, g20, 0);
    for (int i = 0; i < 1000; i++) { cudaGraphLaunch(e1, st); cudaGraphLaunch(e20, st); tiny<<<1, 32, 0, st>>>(x); }
    cudaStreamSynchronize(st);
    for (int r = 0; r < 3; r++) {
      double t = now(); for (int i = 0; i < 20000; i++) cudaGraphLaunch(e1, st); cudaStreamSynchronize(st); double a = (now() - t) / 20000 * 1e6;
      t = now(); for (int i = 0; i < 5000; i++) cudaGraphLaunch(e20, st); cudaStreamSynchronize(st); double b = (now() - t) / 5000 * 1e6;
      t = now(); for (int i = 0; i < 20000; i++) tiny<<<1, 32, 0, st>>>(x); cudaStreamSynchronize(st); double c = (now() - t) / 20000 * 1e6;
      printf("T4 round %d us: replay1=%.3f replay20=%.3f plain=%.3f\n", r, a, b, c);
    }
  }
  return 0;
}
