// spmd.cu - one process, steps on two GPUs (launches on GPU 0, then GPU 1, a wait on each in turn),
// beside a time-sliced batch on both GPUs; and the batch itself.
//   spmd serve K KERNEL_US GAP_US STEPS   prints step times (host, us) p50/p90/p99 and, per step,
//                                         when GPU 1's first kernel started against GPU 0's wait's return
//   spmd batch STOPFILE                   spinning CTAs (200 us) on every SM of both GPUs until STOPFILE
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <vector>

static __device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void spin(unsigned long long ns, unsigned long long *stamp) {
	unsigned long long t0 = gt();
	while (gt() - t0 < ns) ;
	if (stamp && threadIdx.x == 0) { stamp[0] = t0; stamp[1] = gt(); }
}
__global__ void stampk(unsigned long long *out) { *out = gt(); }
static unsigned long long host_ns() { struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts); return ts.tv_sec * 1000000000ull + ts.tv_nsec; }
static void host_spin(unsigned us) { unsigned long long t = host_ns(); while (host_ns() - t < us * 1000ull) ; }
#define CK(x) do { cudaError_t e = (x); if (e) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

int main(int argc, char **argv) {
	if (argc >= 3 && !strcmp(argv[1], "batch")) {
		cudaStream_t s[2]; int sms[2];
		for (int g = 0; g < 2; g++) { CK(cudaSetDevice(g)); CK(cudaStreamCreateWithFlags(&s[g], cudaStreamNonBlocking)); cudaDeviceGetAttribute(&sms[g], cudaDevAttrMultiProcessorCount, g); }
		for (long n = 0; access(argv[2], F_OK); n++) {
			for (int g = 0; g < 2; g++) { CK(cudaSetDevice(g)); spin<<<sms[g] * 2, 256, 0, s[g]>>>(200000, NULL); }
			if (n % 8 == 7) for (int g = 0; g < 2; g++) CK(cudaStreamSynchronize(s[g]));
		}
		return 0;
	}
	if (argc < 6) { fprintf(stderr, "usage\n"); return 2; }
	int K = atoi(argv[2]); unsigned kus = atoi(argv[3]), gap = atoi(argv[4]); int steps = atoi(argv[5]);
	cudaStream_t s[2]; unsigned long long *stamp[2], *dstamp[2]; long long off[2];
	for (int g = 0; g < 2; g++) {
		CK(cudaSetDevice(g)); CK(cudaStreamCreateWithFlags(&s[g], cudaStreamNonBlocking));
		CK(cudaHostAlloc(&stamp[g], 64 * 16, cudaHostAllocMapped | cudaHostAllocPortable));
		CK(cudaHostGetDevicePointer(&dstamp[g], stamp[g], 0));
		// globaltimer against the host's clock: the launch with the shortest round trip
		long long best = 1ll << 62; off[g] = 0;
		for (int i = 0; i < 50; i++) {
			unsigned long long t0 = host_ns(); stampk<<<1, 1, 0, s[g]>>>(dstamp[g] + 100); CK(cudaStreamSynchronize(s[g])); unsigned long long t1 = host_ns();
			if ((long long)(t1 - t0) < best) { best = t1 - t0; off[g] = (long long)stamp[g][100] - (long long)(t0 + t1) / 2; }
		}
		fprintf(stderr, "gpu %d: globaltimer - host %lld ns (round trip %lld ns)\n", g, off[g], best);
	}
	std::vector<double> step, lead, span1;
	for (int n = 0; n < steps + 20; n++) {
		unsigned long long t0 = host_ns();
		for (int g = 0; g < 2; g++) {
			CK(cudaSetDevice(g));
			for (int k = 0; k < K; k++) {
				if (k) host_spin(gap);
				spin<<<1, 32, 0, s[g]>>>(kus * 1000ull, k == 0 ? dstamp[g] : k == K - 1 ? dstamp[g] + 2 : NULL);
			}
		}
		CK(cudaSetDevice(0)); CK(cudaStreamSynchronize(s[0]));
		unsigned long long w0 = host_ns();
		CK(cudaSetDevice(1)); CK(cudaStreamSynchronize(s[1]));
		unsigned long long t1 = host_ns();
		if (n < 20) continue;
		step.push_back((t1 - t0) / 1e3);
		// GPU 1's first kernel's start against GPU 0's wait's return (negative: before it)
		lead.push_back(((long long)(stamp[1][0] - off[1]) - (long long)w0) / 1e3);
		span1.push_back((stamp[1][3] - stamp[1][0]) / 1e3);
		host_spin(200); // the host between steps
	}
	auto pct = [](std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[(size_t)(p * (v.size() - 1))]; };
	printf("step_us p50 %.1f p90 %.1f p99 %.1f | gpu1_start_vs_wait0_return_us p10 %.1f p50 %.1f p90 %.1f | gpu1_span_us p50 %.1f p90 %.1f\n",
	       pct(step, .5), pct(step, .9), pct(step, .99), pct(lead, .1), pct(lead, .5), pct(lead, .9), pct(span1, .5), pct(span1, .9));
	return 0;
}
