/* hostfn.c - a CUDA driver API program (no cudart) that waits for its work by host functions,
 * as JAX does, or by polling an event (tests/gpu/hostfn.sh):
 *   hostfn serve N PERIOD_US WORK_US [callback|query]   N requests PERIOD_US apart, each a
 *       one-block spin kernel of WORK_US, then a host function (cuLaunchHostFunc; callback:
 *       cuStreamAddCallback) that sets a flag the host spins on, no driver call in the wait
 *       (query: an event recorded after the kernel, and cuEventQuery until it answers success);
 *       prints "hostfn: N requests, wait p50 P us p99 Q us, fn ran R" (a request's latency
 *       from its launch to the flag or the query's success; R: the waits that ended so).
 *   hostfn batch SECS WORK_US                      spin kernels of WORK_US on every SM back to
 *       back for SECS, a stream synchronisation every 8 (a batch job that never idles). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char ptx[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".visible .entry spin(.param .u64 ns)\n{\n"
	"	.reg .pred %p<2>;\n	.reg .b64 %rd<6>;\n"
	"	ld.param.u64 %rd1, [ns];\n	mov.u64 %rd2, %globaltimer;\n"
	"L: mov.u64 %rd3, %globaltimer;\n	sub.s64 %rd4, %rd3, %rd2;\n"
	"	setp.lt.u64 %p1, %rd4, %rd1;\n	@%p1 bra L;\n	ret;\n}\n";

#define CK(x) do { CUresult r_ = (x); if (r_) { printf("hostfn: driver error %d at line %d\n", r_, __LINE__); return 2; } } while (0)

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static volatile int flag;
static int ran;

static void done_fn(void *user)
{
	(void)user;
	ran++;
	__atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
}

static void done_cb(CUstream s, CUresult status, void *user)
{
	(void)s;
	(void)status;
	done_fn(user);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction fn; CUstream s;
	int nsm;
	if (argc < 4)
		return 1;
	CK(cuInit(0)); CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, ptx)); CK(cuModuleGetFunction(&fn, mod, "spin"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	if (!strcmp(argv[1], "batch")) {
		unsigned long long ns = strtoull(argv[3], NULL, 10) * 1000;
		void *args[] = {&ns};
		double end = now_us() + atof(argv[2]) * 1e6;
		for (long i = 1; now_us() < end; i++) {
			CK(cuLaunchKernel(fn, nsm * 4, 1, 1, 128, 1, 1, 0, s, args, NULL));
			if (i % 8 == 0)
				CK(cuStreamSynchronize(s));
		}
		CK(cuStreamSynchronize(s));
		return 0;
	}
	if (strcmp(argv[1], "serve") || argc < 5)
		return 1;
	int n = atoi(argv[2]), cb = argc > 5 && !strcmp(argv[5], "callback");
	int query = argc > 5 && !strcmp(argv[5], "query");
	CUevent ev;
	double period = atof(argv[3]), *lat = calloc(n, sizeof(double));
	unsigned long long ns = strtoull(argv[4], NULL, 10) * 1000;
	void *args[] = {&ns};
	if (!lat)
		return 2;
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	for (int w = 0; w < 5; w++) { /* warm-up: the module loaded, the first launches made */
		CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
		CK(cuStreamSynchronize(s));
	}
	double next = now_us();
	for (int i = 0; i < n; i++) {
		next += period;
		while (now_us() < next)
			;
		double t0 = now_us();
		flag = 0;
		CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
		if (query) {
			CUresult r;
			CK(cuEventRecord(ev, s));
			while ((r = cuEventQuery(ev)) == CUDA_ERROR_NOT_READY)
				;
			CK(r);
			ran++;
		} else if (cb)
			CK(cuStreamAddCallback(s, done_cb, NULL, 0));
		else
			CK(cuLaunchHostFunc(s, done_fn, NULL));
		while (!query && !__atomic_load_n(&flag, __ATOMIC_ACQUIRE))
			;
		lat[i] = now_us() - t0;
	}
	CK(cuStreamSynchronize(s));
	qsort(lat, n, sizeof(double), cmp);
	printf("hostfn: %d requests, wait p50 %.0f us p99 %.0f us, fn ran %d\n", n, lat[n / 2],
	       lat[(int)(0.99 * (n - 1))], ran);
	return ran == n + 0 ? 0 : 3;
}
