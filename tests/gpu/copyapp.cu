// copyapp.cu - copies to the host on a stream, checked byte by byte (make check-gpu-bridge):
// a bridged task's small ones are done by the shim's kernel (src/shim/shimbridge.c), the rest by
// the driver; either way the bytes must arrive. Sizes around NVT_BRIDGE_COPY_MAX (4096), to
// pinned memory (cudaHostAlloc, at an odd offset too), registered memory (cudaHostRegister)
// and pageable memory, from cudaMalloc's and managed memory, by cudaMemcpyAsync with the
// direction given and with cudaMemcpyDefault, on a stream of its own, the legacy one and the
// thread's own (cudaStreamPerThread), each followed by a kernel that overwrites the source
// (stream order: the copy must have read it first), and one copy captured in a graph and
// replayed. Prints "copyapp: N checked, M wrong"; exit status 1 if any was wrong. Of them, a
// bridged task's kernel does at least 1680: sizes up to 4096 (7) from cudaMalloc's memory to
// cudaHostAlloc's (2) by both calls on the three streams, 20 rounds.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "copyapp: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

__global__ void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

static unsigned long checked, wrong;

static void expect(const unsigned char *got, size_t n, unsigned seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != (unsigned char)(seed * 131 + i * 7 + (i >> 8))) {
			if (wrong++ < 10)
				fprintf(stderr, "copyapp: %s: %zu bytes: byte %zu wrong\n", what, n, i);
			return;
		}
	checked++;
}

int main(void)
{
	const size_t sizes[] = {1, 7, 8, 64, 1000, 4095, 4096, 4097, 65536};
	const size_t big = 65536 + 64;
	unsigned char *devs[2], *pinned, *pageable, *registered;
	cudaStream_t s;
	unsigned seed = 1;

	CK(cudaMalloc(&devs[0], big));
	CK(cudaMallocManaged(&devs[1], big));
	CK(cudaHostAlloc(&pinned, big, cudaHostAllocDefault));
	pageable = (unsigned char *)malloc(big);
	registered = (unsigned char *)malloc(big);
	if (!pageable || !registered)
		return 2;
	CK(cudaHostRegister(registered, big, cudaHostRegisterDefault));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int round = 0; round < 20; round++)
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			for (int to = 0; to < 4; to++)
				for (int kind = 0; kind < 2; kind++)
					for (int which = 0; which < 4; which++) {
						size_t n = sizes[k];
						unsigned char *dst = to == 0 ? pinned : to == 1 ? pinned + 3 : to == 2 ? registered : pageable;
						int legacy = which & 1, managed = which == 3;
						unsigned char *dev = devs[managed];
						cudaStream_t st = which == 2 ? cudaStreamPerThread : legacy ? (cudaStream_t)0 : s;
						char what[96];
						memset(dst, 0, n);
						fill<<<4, 128, 0, st>>>(dev, n, seed);
						CK(cudaMemcpyAsync(dst, dev, n, kind ? cudaMemcpyDefault : cudaMemcpyDeviceToHost, st));
						fill<<<4, 128, 0, st>>>(dev, n, seed + 1000); /* after the copy read it */
						CK(cudaStreamSynchronize(st));
						snprintf(what, sizeof(what), "to %d kind %d stream/source %d", to, kind, which);
						expect(dst, n, seed, what);
						seed++;
					}
	/* A copy captured in a graph: the driver's (a memcpy node), replayed. */
	cudaGraph_t g;
	cudaGraphExec_t ge;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CK(cudaMemcpyAsync(pinned, devs[0], 8, cudaMemcpyDeviceToHost, s));
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int i = 0; i < 20; i++) {
		memset(pinned, 0, 8);
		fill<<<1, 32, 0, s>>>(devs[0], 8, seed);
		CK(cudaGraphLaunch(ge, s));
		CK(cudaStreamSynchronize(s));
		expect(pinned, 8, seed++, "graph");
	}
	printf("copyapp: %lu checked, %lu wrong\n", checked, wrong);
	return wrong ? 1 : 0;
}
