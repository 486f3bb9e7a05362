/* cudart_stub.c - just enough of the CUDA runtime to run service.cu's host code without a GPU
 * (selftest.sh: nvcc -cudart none service.cu cudart_stub.c): kernels do nothing; a graph
 * launch "runs" until the stream's synchronise for fake.py's service time of the CUDA L
 * (550 us decode, a tbt step too, 3100 us prefill) times PRIO_FAKE_X; a graph is prefill when a kernel
 * named gemm was captured into it. Arguments the stub does not use are left undeclared
 * (the caller cleans them up). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NFUN 16

static const void *fun_host[NFUN];
static const char *fun_name[NFUN];
static int nfun, capturing, captured_gemm, pending = -1;

void **__cudaRegisterFatBinary(void *fat)
{
	static void *handle;
	(void)fat;
	return &handle;
}

void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }

void __cudaRegisterFunction(void **h, const char *host, char *dev, const char *name)
{
	(void)h;
	(void)dev;
	if (nfun < NFUN) {
		fun_host[nfun] = host;
		fun_name[nfun++] = name;
	}
}

unsigned __cudaPushCallConfiguration(void) { return 0; }

struct dim3_ { unsigned x, y, z; };

int __cudaPopCallConfiguration(struct dim3_ *grid, struct dim3_ *block, size_t *smem, void **stream)
{
	*grid = *block = (struct dim3_){1, 1, 1};
	*smem = 0;
	*stream = NULL;
	return 0;
}

int __cudaGetKernel(const void **handle, const void *fun)
{
	*handle = fun;
	return 0;
}

int __cudaLaunchKernel(const void *handle)
{
	for (int i = 0; i < nfun; i++)
		if (fun_host[i] == handle && capturing && strstr(fun_name[i], "gemm"))
			captured_gemm = 1;
	return 0;
}

int cudaMalloc(void **p, size_t n)
{
	(void)n;
	*p = calloc(1, 64);
	return 0;
}

int cudaMallocHost(void **p, size_t n)
{
	(void)n;
	*p = calloc(1, 64);
	return 0;
}

int cudaGetLastError(void) { return 0; }

/* Only the sampler's index (4 bytes, from memory of cudaMalloc's 64 zeroed bytes). */
int cudaMemcpyAsync(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n < 64 ? n : 64);
	return 0;
}

int cudaStreamCreateWithFlags(void **s, unsigned flags)
{
	(void)flags;
	*s = (void *)1;
	return 0;
}

const char *cudaGetErrorString(int e)
{
	(void)e;
	return "cudart stub error";
}

int cudaStreamBeginCapture(void *s, int mode)
{
	(void)s;
	(void)mode;
	capturing = 1;
	captured_gemm = 0;
	return 0;
}

int cudaStreamEndCapture(void *s, void **graph)
{
	(void)s;
	capturing = 0;
	*graph = (void *)(intptr_t)(captured_gemm + 1);
	return 0;
}

int cudaGraphInstantiate(void **exec, void *graph)
{
	*exec = graph;
	return 0;
}

int cudaGraphLaunch(void *exec)
{
	pending = (int)(intptr_t)exec - 1;
	return 0;
}

int cudaStreamSynchronize(void *s)
{
	const char *x = getenv("PRIO_FAKE_X");
	double us = pending == 1 ? 3100 : pending == 0 ? 550 : 0;
	long long ns = (long long)(us * (x ? atof(x) : 1.0) * 1000);
	struct timespec ts = {ns / 1000000000, ns % 1000000000};

	(void)s;
	pending = -1;
	if (ns > 0)
		nanosleep(&ts, NULL);
	return 0;
}
