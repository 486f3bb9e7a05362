// ctxbridge.cu - can a step waited for by the context (cudaDeviceSynchronize) be bridged?
//   ctxbridge snap                  a 2 ms kernel, then cudaDeviceSynchronize; another thread queues a
//                                   5 ms kernel D us after the call (D = 0, 2, 5, 10, 20, 50): when the
//                                   synchronisation returned, how long that launch call took
//   ctxbridge steps MODE N [D]      N requests (10 ms apart) of 8 steps of 16 one-block 12 us kernels, each
//                                   step waited for by MODE: stream, ctx, or ctxbridge (ctx, and a bridge
//                                   queued by a helper thread D us after the call: a kernel spinning on a host
//                                   word until the host's next launch, plus 20 us, or 2 ms; an empty kernel
//                                   behind it; both on a stream of their own). Prints later steps p50/p90, the
//                                   synchronisation's p50/p99 and the bridges' ends by cause.
//   ctxbridge batch STOP            CTAs spinning 200 us, two an SM, until file STOP exists
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <vector>
static __device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void spin(unsigned long long ns) { unsigned long long t0 = gt(); while (gt() - t0 < ns) ; }
__global__ void nop() {}
// Runs until *rel >= seq (then 20 us more) or cap ns; out[0] = 1 if released, 2 if capped.
__global__ void bridge(volatile unsigned *rel, unsigned seq, unsigned long long cap, unsigned *out) {
	unsigned long long t0 = gt();
	while ((int)(*rel - seq) < 0) {
		if (gt() - t0 > cap) { out[0] = 2; return; }
		__nanosleep(1000);
	}
	unsigned long long t1 = gt();
	while (gt() - t1 < 20000) ;
	out[0] = 1;
}
static unsigned long long now() { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000ull + ts.tv_nsec; }
static void spin_us(long us) { unsigned long long t = now(); while (now() - t < us * 1000ull) ; }
#define CK(x) do { cudaError_t e = (x); if (e) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
static cudaStream_t s1, sb;
static std::atomic<unsigned long long> go{0};
static std::atomic<int> quit{0};
static long delay_us;
static unsigned long long launch_ns;
static volatile unsigned *rel_h; static unsigned *rel_d; static unsigned *out_h, *out_d;
static std::atomic<unsigned> bseq{0};
static std::atomic<int> launched{0};
static int mode_snap;
static void *helper(void *) {
	for (;;) {
		unsigned long long t;
		while (!(t = go.load()) && !quit.load()) ;
		if (quit.load()) return NULL;
		go = 0;
		while (now() - t < delay_us * 1000ull) ;
		unsigned long long a = now();
		if (mode_snap) spin<<<1, 32, 0, sb>>>(5000000ull);
		else { unsigned q = bseq.load(); bridge<<<1, 1, 0, sb>>>(rel_d, q, 2000000ull, out_d + q % 4096); nop<<<1, 1, 0, sb>>>(); }
		launch_ns = now() - a;
		launched = 1;
	}
}
static double pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v[(size_t)(p * (v.size() - 1))]; }

int main(int argc, char **argv) {
	if (argc < 3) return 2;
	CK(cudaSetDevice(0));
	if (!strcmp(argv[1], "batch")) {
		int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
		for (long n = 0; access(argv[2], F_OK); n++) { spin<<<sms * 2, 256>>>(200000); if (n % 8 == 7) CK(cudaStreamSynchronize(0)); }
		return 0;
	}
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
	CK(cudaHostAlloc((void **)&rel_h, 4096 * 4 * 2, cudaHostAllocMapped));
	out_h = (unsigned *)rel_h + 16;
	CK(cudaHostGetDevicePointer((void **)&rel_d, (void *)rel_h, 0)); out_d = rel_d + 16;
	*rel_h = 0;
	pthread_t th; pthread_create(&th, NULL, helper, NULL);
	spin<<<1, 32, 0, s1>>>(1000); CK(cudaDeviceSynchronize());
	if (!strcmp(argv[1], "snap")) {
		mode_snap = 1;
		for (long d : {0L, 2L, 5L, 10L, 20L, 50L}) {
			for (int i = 0; i < 5; i++) {
				delay_us = d;
				spin<<<1, 32, 0, s1>>>(2000000ull);
				launched = 0;
				unsigned long long a = now(); go = a;
				CK(cudaDeviceSynchronize());
				unsigned long long r = now();
				while (!launched.load()) ;
				spin_us(200);
				CK(cudaDeviceSynchronize());
				printf("delay %ld us: returned after %.0f us (waited for the later kernel: %s); its launch call took %.1f us\n", d, (r - a) / 1e3, (r - a) > 4000000 ? "yes" : "no", launch_ns / 1e3);
			}
		}
		quit = 1; pthread_join(th, NULL);
		return 0;
	}
	const char *mode = argv[2]; int N = atoi(argv[3]); delay_us = argc > 4 ? atol(argv[4]) : 10;
	int ctx = strcmp(mode, "stream") != 0, bridged = !strcmp(mode, "ctxbridge");
	std::vector<double> steps, syncs; int released = 0, capped = 0, seqs = 0;
	unsigned long long next = now();
	for (int i = 0; i < N + 20; i++) {
		next += 10000000ull;
		while (now() < next) ;
		unsigned long long t = now(), prev = t;
		for (int k = 0; k < 8; k++) {
			*rel_h = bseq.load(); // the host's next launch: the last bridge may end
			for (int j = 0; j < 16; j++) spin<<<1, 32, 0, s1>>>(12000);
			unsigned long long w = now();
			if (bridged) { bseq++; launched = 0; go = w; }
			if (ctx) CK(cudaDeviceSynchronize()); else CK(cudaStreamSynchronize(s1));
			unsigned long long r = now();
			if (i >= 20) { syncs.push_back((r - w) / 1e3); if (k) steps.push_back((r - prev) / 1e3); }
			prev = r;
			while (bridged && !launched.load()) ;
		}
		*rel_h = bseq.load();
	}
	CK(cudaDeviceSynchronize());
	for (unsigned s = 1; s <= bseq.load(); s++) { seqs++; if (out_h[s % 4096] == 1) released++; else if (out_h[s % 4096] == 2) capped++; }
	printf("%s D=%ld: later steps p50 %.0f p90 %.0f us; synchronisation p50 %.0f p99 %.0f us; bridges %d: ended by a release %d, by the cap %d\n",
	       mode, delay_us, pct(steps, .5), pct(steps, .9), pct(syncs, .5), pct(syncs, .99), seqs, released, capped);
	quit = 1; pthread_join(th, NULL);
	return 0;
}
