/* Rounds of synchronised steps (2 launches of a small kernel, a stream synchronisation), the
 * device's primary context released (its last release: retained once) and retained again
 * between rounds; prints each round's context handle and its step p50 (us). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda.h>
#include <dlfcn.h>
static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
	".visible .entry inc(.param .u64 a)\n{\n .reg .b64 %rd<3>;\n .reg .b32 %r<2>;\n"
	" ld.param.u64 %rd1, [a];\n cvta.to.global.u64 %rd2, %rd1;\n ld.global.u32 %r1, [%rd2];\n"
	" add.s32 %r1, %r1, 1;\n st.global.u32 [%rd2], %r1;\n ret;\n}\n";
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("%s: error %d\n", #x, (int)r_); return 1; } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(void) {
	static double st[300];
	CK(cuInit(0));
	for (int r = 0; r < 3; r++) {
		CUcontext ctx; CUmodule m; CUfunction f; CUstream s; CUdeviceptr a; unsigned v = 0;
		CK(cuDevicePrimaryCtxRetain(&ctx, 0));
		CK(cuCtxSetCurrent(ctx));
		CK(cuModuleLoadData(&m, ptx));
		CK(cuModuleGetFunction(&f, m, "inc"));
		CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
		CK(cuMemAlloc(&a, 4));
		CK(cuMemsetD32(a, 0, 1));
		void *args[] = {&a};
		for (int i = 0; i < 300; i++) {
			double t0 = now();
			CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
			CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
			CK(cuStreamSynchronize(s));
			st[i] = now() - t0;
		}
		CK(cuMemcpyDtoH(&v, a, 4));
		qsort(st, 300, sizeof(st[0]), cmp);
		printf("round %d context %p value %u step p50 %.1f us\n", r, (void *)ctx, v, st[150]);
		fflush(stdout);
		if (getenv("REL_V1")) { /* the unversioned export, by its old name */
			CUresult (*v1)(CUdevice) = (CUresult (*)(CUdevice))dlsym(RTLD_DEFAULT, "cuDevicePrimaryCtxRelease");
			if (!v1) { printf("no cuDevicePrimaryCtxRelease\n"); return 1; }
			CK(v1(0));
		} else {
			CK(cuDevicePrimaryCtxRelease(0));
		}
	}
	return 0;
}
