/* S1 probes. "low [v1]": 3 rounds of 400 launches of a 500 us spin kernel (a synchronisation
 * every 8), the primary context released (its last release) and retained between rounds; prints
 * each round's context and its launch calls' p50/mean/max (us): a task whose work in flight is
 * bounded waits in its launch calls. "serve SECONDS": a request of 4 short kernels and a
 * synchronisation every 20 ms. "idcost": ns per cuCtxGetId. "proc": which export
 * cuGetProcAddress gives for cuCtxDestroy at each version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda.h>
#include <dlfcn.h>
static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
	".visible .entry spin(.param .u64 ns)\n{\n .reg .b64 %rd<5>;\n .reg .pred %p;\n"
	" ld.param.u64 %rd1, [ns];\n mov.u64 %rd2, %globaltimer;\nL:\n mov.u64 %rd3, %globaltimer;\n"
	" sub.u64 %rd4, %rd3, %rd2;\n setp.lt.u64 %p, %rd4, %rd1;\n @%p bra L;\n ret;\n}\n";
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("%s: error %d\n", #x, (int)r_); return 1; } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv) {
	static double st[400];
	CUcontext ctx; CUmodule m; CUfunction f; CUstream s;
	if (argc < 2) return 2;
	CK(cuInit(0));
	if (!strcmp(argv[1], "proc")) {
		void *self = dlopen("libcuda.so.1", RTLD_NOW);
		void *v1 = dlsym(self, "cuCtxDestroy"), *v2 = dlsym(self, "cuCtxDestroy_v2");
		int vers[] = {3000, 3020, 3999, 4000, 11000, 13000};
		for (int i = 0; i < 6; i++) {
			void *p = NULL; CUdriverProcAddressQueryResult q = 0;
			CUresult r = cuGetProcAddress_v2("cuCtxDestroy", &p, vers[i], 0, &q);
			printf("proc cuCtxDestroy %d: rc %d query %d -> %s\n", vers[i], (int)r, (int)q,
			       !p ? "none" : p == v1 ? "cuCtxDestroy" : p == v2 ? "cuCtxDestroy_v2" : "other");
		}
		return 0;
	}
	CK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CK(cuCtxSetCurrent(ctx));
	if (!strcmp(argv[1], "idcost")) {
		unsigned long long id = 0; double t0 = now();
		for (int i = 0; i < 1000000; i++) CK(cuCtxGetId(ctx, &id));
		printf("cuCtxGetId: %.1f ns a call (id %llu)\n", (now() - t0) * 1000 / 1e6, id);
		return 0;
	}
	if (!strcmp(argv[1], "serve")) {
		double end = now() + atof(argv[2]) * 1e6, next = now();
		unsigned long long ns = 20000; void *args[] = {&ns}; int n = 0;
		CK(cuModuleLoadData(&m, ptx)); CK(cuModuleGetFunction(&f, m, "spin"));
		CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
		while (now() < end) {
			for (int k = 0; k < 4; k++) CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
			CK(cuStreamSynchronize(s)); n++;
			next += 20000; double w = next - now();
			if (w > 0) { struct timespec t = {0, (long)(w * 1000)}; nanosleep(&t, NULL); }
		}
		printf("serve: %d requests\n", n);
		return 0;
	}
	for (int r = 0; r < 3; r++) {
		unsigned long long ns = 500000; void *args[] = {&ns}; double sum = 0;
		if (r) { CK(cuDevicePrimaryCtxRetain(&ctx, 0)); CK(cuCtxSetCurrent(ctx)); }
		CK(cuModuleLoadData(&m, ptx)); CK(cuModuleGetFunction(&f, m, "spin"));
		CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
		for (int i = 0; i < 400; i++) {
			double t0 = now();
			CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
			st[i] = now() - t0; sum += st[i];
			if (i % 8 == 7) CK(cuStreamSynchronize(s));
		}
		CK(cuStreamSynchronize(s));
		qsort(st, 400, sizeof(st[0]), cmp);
		printf("round %d context %p launch call p50 %.1f mean %.1f max %.1f us\n", r, (void *)ctx, st[200], sum / 400, st[399]);
		fflush(stdout);
		if (argc > 2 && !strcmp(argv[2], "v1")) {
			CUresult (*v1)(CUdevice) = (CUresult (*)(CUdevice))dlsym(RTLD_DEFAULT, "cuDevicePrimaryCtxRelease");
			CK(v1(0));
		} else {
			CK(cuDevicePrimaryCtxRelease(0));
		}
	}
	return 0;
}
