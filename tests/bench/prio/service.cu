// service.cu - the latency-critical service L of the priorities benchmark, without PyTorch.
//   service KINDS READY PLAN OUT.csv [measure]
// The shapes of service.py: per kind a CUDA graph of 16 kernels, one per bf16 4096x4096
// layer (weights shared by the kinds, 32 MiB each): decode = a GEMV-like pass per layer (a
// warp per row reads the 32 MiB weight: memory-bound), prefill = batch 512 in 128x128 tensor-
// core tiles (WMMA: compute-bound). A request is cudaGraphLaunch + cudaStreamSynchronize.
// tbt (token by token) = the decode graph TBT_STEPS (8) times, each step followed by a host-
// side sampler: an argmax kernel over the output, its index copied to the host, synchronised.
// The protocol (READY, PLAN, the phases, OUT.csv) is service.py's; priolib.py describes the
// files. Exit 2: a CUDA error; 3: no plan.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <mma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <string>
#include <vector>

using namespace nvcuda;

#define CK(x) do { cudaError_t e_ = (x); if (e_) { fprintf(stderr, "service: %s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)

enum { DIM = 4096, LAYERS = 16, BATCH = 512, TILE = 128, KT = 32, LDS = KT + 8, TBT_STEPS = 8 };
enum { DECODE, PREFILL, TBT, NKINDS };  // the plan's kinds (priolib.KINDS)
static const char *const kind_name[NKINDS] = {"decode", "prefill", "tbt"};
typedef __nv_bfloat16 bf16;

__global__ void init(bf16 *p, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    p[i] = __float2bfloat16(((h & 0xffff) / 65536.0f - 0.5f) * scale);
  }
}

// y = W x: warp r reads row r of W (8 KB) in 16-byte loads.
__global__ void gemv(const bf16 *__restrict__ w, const bf16 *__restrict__ x, bf16 *__restrict__ y) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (row >= DIM) return;
  const uint4 *wr = (const uint4 *)(w + (size_t)row * DIM), *xv = (const uint4 *)x;
  float acc = 0.f;
#pragma unroll 4  // several loads in flight per warp
  for (int it = 0; it < DIM / 8 / 32; it++) {
    int i = lane + it * 32;
    uint4 a = __ldcs(wr + i), b = xv[i];
    const __nv_bfloat162 *a2 = (const __nv_bfloat162 *)&a, *b2 = (const __nv_bfloat162 *)&b;
    for (int j = 0; j < 4; j++) {
      float2 fa = __bfloat1622float2(a2[j]), fb = __bfloat1622float2(b2[j]);
      acc += fa.x * fb.x + fa.y * fb.y;
    }
  }
  for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[row] = __float2bfloat16(acc);
}

// Y[m][n] = sum_k X[m][k] W[n][k] (a linear layer), X: BATCH x DIM, W: DIM x DIM, both
// k-contiguous. A block: a 128x128 tile of Y, 8 warps of 64x32 (4x2 16x16 fragments).
__global__ void __launch_bounds__(256) gemm(const bf16 *__restrict__ x, const bf16 *__restrict__ w,
                                            bf16 *__restrict__ y) {
  __shared__ __align__(128) bf16 as[TILE][LDS];
  __shared__ __align__(128) bf16 bs[TILE][LDS];
  __shared__ __align__(128) float st[8][16 * 16];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = warp / 4, wn = warp % 4;
  int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
  for (int k0 = 0; k0 < DIM; k0 += KT) {
    for (int v = threadIdx.x; v < TILE * KT / 8; v += blockDim.x) {  // 512 16-byte pieces a tile
      int r = v / (KT / 8), c = v % (KT / 8) * 8;
      *(uint4 *)&as[r][c] = *(const uint4 *)(x + (size_t)(m0 + r) * DIM + k0 + c);
      *(uint4 *)&bs[r][c] = *(const uint4 *)(w + (size_t)(n0 + r) * DIM + k0 + c);
    }
    __syncthreads();
    for (int kk = 0; kk < KT; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> fa[4];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> fb[2];
      for (int i = 0; i < 4; i++) wmma::load_matrix_sync(fa[i], &as[wm * 64 + i * 16][kk], LDS);
      for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], &bs[wn * 32 + j * 16][kk], LDS);
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++) {
      wmma::store_matrix_sync(st[warp], acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 256; e += 32) {
        int r = m0 + wm * 64 + i * 16 + e / 16, c = n0 + wn * 32 + j * 16 + e % 16;
        y[(size_t)r * DIM + c] = __float2bfloat16(st[warp][e]);
      }
      __syncwarp();
    }
}

// The sampler: *idx = the index of y's largest of DIM values (the lowest such index). One
// block of 1024 threads.
__global__ void __launch_bounds__(1024) argmax(const bf16 *__restrict__ y, int *idx) {
  __shared__ float sv[1024];
  __shared__ int si[1024];
  int t = threadIdx.x, bi = t;
  float best = -INFINITY;
  for (int i = t; i < DIM; i += blockDim.x) {
    float v = __bfloat162float(y[i]);
    if (v > best) { best = v; bi = i; }
  }
  sv[t] = best; si[t] = bi;
  __syncthreads();
  for (int s = blockDim.x / 2; s; s >>= 1) {
    if (t < s && (sv[t + s] > sv[t] || (sv[t + s] == sv[t] && si[t + s] < si[t]))) { sv[t] = sv[t + s]; si[t] = si[t + s]; }
    __syncthreads();
  }
  if (t == 0) *idx = si[0];
}

static long long now_ns() {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
// Sleep to within a millisecond, then spin: a late wake-up would count as L's latency.
static void sleep_until(long long t) {
  long long d = t - now_ns();
  if (d > 1500000) {
    long long u = t - 1000000;
    struct timespec ts = {(time_t)(u / 1000000000ll), (long)(u % 1000000000ll)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) { }
  }
  while (now_ns() < t) { }
}

struct phase {
  std::string label, arrival;
  int kind, duty;
  long long dur, begin, end;
  std::vector<long long> offs;
  std::vector<float> sched_us, lat_us;
};

static cudaStream_t stream;
static cudaGraphExec_t graphs[2];  // decode (tbt's step too), prefill
static const bf16 *decode_out;     // the decode graph's output (DIM values)
static int *dev_idx, *host_idx;    // the sampler's index (host_idx: pinned)

static int kind_of(const char *name) {
  for (int k = 0; k < NKINDS; k++)
    if (!strcmp(name, kind_name[k])) return k;
  return -1;
}

static void request(int k) {
  if (k != TBT) {
    CK(cudaGraphLaunch(graphs[k], stream));
    CK(cudaStreamSynchronize(stream));
    return;
  }
  for (int i = 0; i < TBT_STEPS; i++) {
    CK(cudaGraphLaunch(graphs[DECODE], stream));
    argmax<<<1, 1024, 0, stream>>>(decode_out, dev_idx);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(host_idx, dev_idx, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    if (*host_idx < 0 || *host_idx >= DIM) { fprintf(stderr, "service: sampler index %d\n", *host_idx); exit(2); }
  }
}

static cudaGraphExec_t capture(int prefill, bf16 *const *w, bf16 *a, bf16 *b) {
  cudaGraph_t g;
  cudaGraphExec_t e;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int l = 0; l < LAYERS; l++) {
    bf16 *in = l % 2 ? b : a, *out = l % 2 ? a : b;
    if (prefill) gemm<<<dim3(DIM / TILE, BATCH / TILE), 256, 0, stream>>>(in, w[l], out);
    else gemv<<<DIM / 8, 256, 0, stream>>>(w[l], in, out);
  }
  CK(cudaStreamEndCapture(stream, &g));
  CK(cudaGraphInstantiate(&e, g, 0));
  return e;
}

static double measure(int k) {
  std::vector<double> lat;
  long long end = now_ns() + 500000000ll;
  while (now_ns() < end || lat.size() < 20) {
    long long a = now_ns();
    request(k);
    lat.push_back((now_ns() - a) / 1e3);
  }
  std::sort(lat.begin(), lat.end());
  size_t n = lat.size();
  return n % 2 ? lat[n / 2] : (lat[n / 2 - 1] + lat[n / 2]) / 2;
}

static bool read_plan(const char *path, long long *gap, std::vector<phase> &ph) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  int n;
  bool ok = fscanf(f, "plan %lld %d", gap, &n) == 2 && n >= 0;
  for (int i = 0; ok && i < n; i++) {
    char lab[64], kind[16], arr[16];
    int cnt;
    phase p;
    ok = fscanf(f, " phase %63s %15s %15s %d %lld %d", lab, kind, arr, &p.duty, &p.dur, &cnt) == 6 &&
         cnt >= 0 && kind_of(kind) >= 0;
    p.label = lab; p.kind = kind_of(kind); p.arrival = arr;
    for (int j = 0; ok && j < cnt; j++) {
      long long o;
      ok = fscanf(f, "%lld", &o) == 1;
      p.offs.push_back(o);
    }
    ph.push_back(p);
  }
  fclose(f);
  return ok;
}

// priolib.run_phases, the same rules.
static void run(long long gap, std::vector<phase> &ph) {
  long long prev = now_ns();
  for (auto &p : ph) {
    int k = p.kind;
    p.begin = std::max(prev, now_ns()) + gap;
    printf("phase %s %lld\n", p.label.c_str(), p.begin);
    fflush(stdout);
    if (p.arrival == "closed") {
      sleep_until(p.begin);
      for (;;) {
        long long s = now_ns();
        if (s >= p.begin + p.dur) break;
        request(k);
        p.sched_us.push_back((s - p.begin) / 1e3f);
        p.lat_us.push_back((now_ns() - s) / 1e3f);
      }
    } else {
      long long deadline = p.begin + p.dur + p.dur / 2 + 200000000ll;
      for (size_t i = 0; i < p.offs.size(); i++) {
        long long sched = p.begin + p.offs[i], now = now_ns();
        if (now < sched) {
          sleep_until(sched);
        } else if (now > deadline) {
          for (size_t j = i; j < p.offs.size(); j++) {
            p.sched_us.push_back(p.offs[j] / 1e3f);
            p.lat_us.push_back(-(now - p.begin - p.offs[j]) / 1e3f);
          }
          break;
        }
        request(k);
        p.sched_us.push_back(p.offs[i] / 1e3f);
        p.lat_us.push_back((now_ns() - sched) / 1e3f);
      }
    }
    prev = p.end = now_ns();
  }
}

int main(int argc, char **argv) {
  if ((argc != 5 && argc != 6) || (argc == 6 && strcmp(argv[5], "measure"))) {
    fprintf(stderr, "usage: service KINDS READY PLAN OUT.csv [measure]\n");
    return 2;
  }
  const char *ready = argv[2], *plan = argv[3], *out = argv[4];
  bool kinds[NKINDS] = {false, false, false};
  std::string list = argv[1];
  for (size_t a = 0; a <= list.size();) {
    size_t b = list.find(',', a);
    if (b == std::string::npos) b = list.size();
    int k = kind_of(list.substr(a, b - a).c_str());
    if (k < 0) { fprintf(stderr, "service: KINDS: a comma list of decode, prefill, tbt\n"); return 2; }
    kinds[k] = true;
    a = b + 1;
  }
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CK(cudaMalloc(&dev_idx, sizeof(int)));
  CK(cudaMallocHost((void **)&host_idx, sizeof(int)));
  bf16 *w[LAYERS], *a, *b;
  for (int l = 0; l < LAYERS; l++) {
    CK(cudaMalloc(&w[l], (size_t)DIM * DIM * sizeof(bf16)));
    init<<<1024, 256, 0, stream>>>(w[l], (size_t)DIM * DIM, 1234u + l, 2.0f / 64);
  }
  CK(cudaMalloc(&a, (size_t)BATCH * DIM * sizeof(bf16)));
  CK(cudaMalloc(&b, (size_t)BATCH * DIM * sizeof(bf16)));
  init<<<1024, 256, 0, stream>>>(a, (size_t)BATCH * DIM, 99u, 2.0f);
  CK(cudaStreamSynchronize(stream));
  decode_out = LAYERS % 2 ? b : a;  // capture(): layer l writes b when l is even
  if (kinds[DECODE] || kinds[TBT]) graphs[DECODE] = capture(0, w, a, b);
  if (kinds[PREFILL]) graphs[PREFILL] = capture(1, w, a, b);
  for (int k = 0; k < NKINDS; k++)
    if (kinds[k])
      for (int i = 0; i < 30; i++) request(k);
  double svc[NKINDS] = {0, 0, 0};
  bool meas = argc == 6;
  std::string tmp = std::string(ready) + ".tmp";
  FILE *f = fopen(tmp.c_str(), "w");
  if (!f) { perror(tmp.c_str()); return 2; }
  for (int k = 0; k < NKINDS; k++)
    if (meas && kinds[k]) {
      svc[k] = measure(k);
      fprintf(f, "%s %.1f\n", kind_name[k], svc[k]);
    }
  if (!meas) fprintf(f, "ok\n");
  fclose(f);
  rename(tmp.c_str(), ready);
  struct stat st;
  for (long long end = now_ns() + 300000000000ll; stat(plan, &st) != 0; ) {
    if (now_ns() > end) { fprintf(stderr, "service: no plan %s\n", plan); return 3; }
    usleep(10000);
  }
  long long gap;
  std::vector<phase> ph;
  if (!read_plan(plan, &gap, ph)) { fprintf(stderr, "service: bad plan %s\n", plan); return 3; }
  for (auto &p : ph)
    if (!kinds[p.kind]) { fprintf(stderr, "service: plan needs %s\n", kind_name[p.kind]); return 3; }
  run(gap, ph);
  f = fopen(out, "w");
  if (!f) { perror(out); return 2; }
  fprintf(f, "# l impl=cuda\n# service_us");
  for (int k = 0; k < NKINDS; k++)
    if (meas && kinds[k]) fprintf(f, " %s=%.1f", kind_name[k], svc[k]);
  fprintf(f, " measured=%d\n", meas ? 1 : 0);
  for (auto &p : ph) {
    size_t dropped = 0;
    for (float l : p.lat_us) dropped += l < 0;
    fprintf(f, "# phase %s %lld %lld %zu %zu\n", p.label.c_str(), p.begin, p.end, p.lat_us.size() - dropped, dropped);
  }
  fprintf(f, "phase,sched_us,lat_us\n");
  for (size_t i = 0; i < ph.size(); i++)
    for (size_t j = 0; j < ph[i].lat_us.size(); j++) fprintf(f, "%zu,%.1f,%.1f\n", i, ph[i].sched_us[j], ph[i].lat_us[j]);
  fclose(f);
  return 0;
}
