// hog.cu - the streaming hog H of the priorities benchmark.
//   hog MIB KERNELS STOP READY OUT_PREFIX [record]
// Each step launches KERNELS copies of MIB MiB (1056 blocks x 1024 threads,
// grid-stride) and synchronises once: its run-ahead is one step. Until the
// file STOP exists; writes READY after its first two steps. Writes
// OUT_PREFIX.steps (CLOCK_MONOTONIC ns at each step's end, "# bytes_per_step=B")
// and, with "record", OUT_PREFIX.kernels: per kernel its first block's start
// and last block's end (%globaltimer ns) and the SMs its blocks ran on (%smid,
// 3 hex words), and "# gt_offset_ns=G" (globaltimer - CLOCK_MONOTONIC). Inside
// MPS %smid is virtual (docs/hardware-facts.md): the SM words tell placement only
// outside MPS; prio.py does not ask for records and times reactions from host clocks.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "hog: %s: %s\n", #x, cudaGetErrorString(e_)); return 2; } } while (0)

static __device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t;
}
static __device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }

struct rec { unsigned long long start, end, sms[3]; };

__global__ void copy(const float4 *in, float4 *out, size_t n, rec *r) {
  if (r && threadIdx.x == 0) {
    unsigned s = smid();
    atomicMin(&r->start, gtimer());
    atomicOr(&r->sms[s / 64], 1ull << (s % 64));
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = __ldcs(in + i);
  if (r) {
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&r->end, gtimer());
  }
}

static long long now_ns() {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) {
    fprintf(stderr, "usage: hog MIB KERNELS STOP READY OUT_PREFIX [record]\n");
    return 2;
  }
  size_t bytes = (size_t)atol(argv[1]) << 20, n = bytes / sizeof(float4);
  int kernels = atoi(argv[2]), record = argc == 7;
  const char *stop = argv[3], *ready = argv[4];
  float4 *in, *out;
  CK(cudaMalloc(&in, bytes)); CK(cudaMalloc(&out, bytes)); CK(cudaMemset(in, 0, bytes));
  const size_t NREC = 1 << 20;
  rec *r = NULL;
  if (record) {
    CK(cudaMalloc(&r, NREC * sizeof(rec)));
    CK(cudaMemset(r, 0, NREC * sizeof(rec)));
    // start fields to all ones (atomicMin)
    std::vector<rec> init(NREC); for (auto &x : init) { x.start = ~0ull; x.end = 0; x.sms[0] = x.sms[1] = x.sms[2] = 0; }
    CK(cudaMemcpy(r, init.data(), NREC * sizeof(rec), cudaMemcpyHostToDevice));
  }
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<long long> steps; steps.reserve(1 << 22);
  size_t k = 0;
  struct stat st;
  long long off = 0, best = 1ll << 62;
  for (long step = 0; stat(stop, &st) != 0; step++) {
    long long a = now_ns();
    for (int i = 0; i < kernels; i++, k++)
      copy<<<1056, 1024, 0, s>>>(in, out, n, record && k < NREC ? r + k : NULL);
    CK(cudaStreamSynchronize(s));
    long long b = now_ns();
    steps.push_back(b);
    if (step == 1) { FILE *f = fopen(ready, "w"); if (f) fclose(f); }
    if (record && step < 20 && k <= NREC) {  // offset from the first kernel of a step: starts just after a
      rec h; CK(cudaMemcpy(&h, r + k - kernels, sizeof h, cudaMemcpyDeviceToHost));
      if (step >= 2 && (long long)h.start - a < best) { best = (long long)h.start - a; off = best; }
    }
  }
  char path[4096];
  snprintf(path, sizeof path, "%s.steps", argv[5]);
  FILE *f = fopen(path, "w");
  if (!f) { perror(path); return 2; }
  fprintf(f, "# bytes_per_step=%zu kernels_per_step=%d\n", 2 * bytes * kernels, kernels);
  for (long long t : steps) fprintf(f, "%lld\n", t);
  fclose(f);
  if (record) {
    size_t used = k < NREC ? k : NREC;
    std::vector<rec> h(used);
    CK(cudaMemcpy(h.data(), r, used * sizeof(rec), cudaMemcpyDeviceToHost));
    snprintf(path, sizeof path, "%s.kernels", argv[5]);
    f = fopen(path, "w");
    if (!f) { perror(path); return 2; }
    fprintf(f, "# gt_offset_ns=%lld (upper bound: launch to first block)\n", off);
    for (auto &x : h) fprintf(f, "%llu %llu %llx %llx %llx\n", x.start, x.end, x.sms[0], x.sms[1], x.sms[2]);
    fclose(f);
  }
  return 0;
}
