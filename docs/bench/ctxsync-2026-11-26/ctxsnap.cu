// ctxsnap.cu - does cuCtxSynchronize wait for work another thread queues after it began?
// Thread A: a 2 ms kernel on stream 1, then cudaDeviceSynchronize at t0. Thread B: DELAY us
// after t0, a 5 ms kernel on stream 2 (non-blocking). Prints when A's synchronisation returned.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <atomic>
static __device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void spin(unsigned long long ns) { unsigned long long t0 = gt(); while (gt() - t0 < ns) ; }
static unsigned long long now() { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000ull + ts.tv_nsec; }
static std::atomic<unsigned long long> t0{0};
static cudaStream_t s1, s2;
static long delay_us;
static void *b(void *) {
	unsigned long long t;
	while (!(t = t0.load())) ;
	while (now() - t < delay_us * 1000ull) ;
	spin<<<1, 32, 0, s2>>>(5000000ull);
	return NULL;
}
int main(int argc, char **argv) {
	cudaSetDevice(0);
	cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
	cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
	spin<<<1, 32, 0, s1>>>(1000); cudaDeviceSynchronize();
	for (long d : {100L, 300L, 1000L}) {
		delay_us = d;
		for (int i = 0; i < 5; i++) {
			pthread_t th; t0 = 0;
			pthread_create(&th, NULL, b, NULL);
			spin<<<1, 32, 0, s1>>>(2000000ull);
			unsigned long long a = now(); t0 = a;
			cudaDeviceSynchronize();
			unsigned long long r = now();
			pthread_join(th, NULL);
			cudaDeviceSynchronize();
			printf("delay %ld us: cudaDeviceSynchronize returned after %.0f us (2 ms kernel before it; a 5 ms one queued %ld us after it began)\n", d, (r - a) / 1e3, d);
		}
	}
	return 0;
}
