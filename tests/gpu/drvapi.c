/* drvapi.c - a CUDA driver API program linked against libcuda directly (no
 * cudart): loads a PTX kernel that records %smid and prints the SMs used.
 * "drvapi time" prints the median time of a 4224-block spin kernel. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char ptx[] =
	".version 7.8\n.target sm_90\n.address_size 64\n"
	".visible .entry rec(.param .u64 out)\n{\n"
	"	.reg .b32 %r<4>;\n	.reg .b64 %rd<5>;\n"
	"	mov.u32 %r1, %smid;\n	mov.u32 %r2, %ctaid.x;\n"
	"	ld.param.u64 %rd1, [out];\n	cvta.to.global.u64 %rd2, %rd1;\n"
	"	mul.wide.u32 %rd3, %r2, 4;\n	add.s64 %rd4, %rd2, %rd3;\n"
	"	st.global.u32 [%rd4], %r1;\n	ret;\n}\n"
	".visible .entry spin(.param .u64 cycles)\n{\n"
	"	.reg .pred %p<2>;\n	.reg .b64 %rd<6>;\n"
	"	ld.param.u64 %rd1, [cycles];\n	mov.u64 %rd2, %clock64;\n"
	"L: mov.u64 %rd3, %clock64;\n	sub.s64 %rd4, %rd3, %rd2;\n"
	"	setp.lt.u64 %p1, %rd4, %rd1;\n	@%p1 bra L;\n	ret;\n}\n";

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CK(x) do { CUresult r_ = (x); if (r_) { printf("driver error %d at line %d\n", r_, __LINE__); return 2; } } while (0)

int main(int argc, char **argv)
{
	CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction fn; CUdeviceptr out;
	int nsm, blocks, seen[1024] = {0}, first = 1;
	CK(cuInit(0)); CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, ptx)); CK(cuModuleGetFunction(&fn, mod, "rec"));
	if (argc > 1 && !strcmp(argv[1], "time")) {
		CUfunction sp; unsigned long long cycles = 500000; double t[7];
		void *args[] = {&cycles};
		CK(cuModuleGetFunction(&sp, mod, "spin"));
		for (int i = 0; i < 7; i++) {
			double t0 = now();
			CK(cuLaunchKernel(sp, 4224, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
			CK(cuCtxSynchronize());
			t[i] = (now() - t0) * 1e3;
		}
		for (int i = 0; i < 7; i++) for (int j = i + 1; j < 7; j++) if (t[j] < t[i]) { double x = t[i]; t[i] = t[j]; t[j] = x; }
		printf("median_ms=%.3f\n", t[3]);
		return 0;
	}
	blocks = nsm * 64;
	CK(cuMemAlloc(&out, blocks * sizeof(int)));
	void *params[] = {&out};
	CK(cuLaunchKernel(fn, blocks, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
	CK(cuCtxSynchronize());
	int *h = malloc(blocks * sizeof(int));
	CK(cuMemcpyDtoH(h, out, blocks * sizeof(int)));
	for (int i = 0; i < blocks; i++) if (h[i] >= 0 && h[i] < 1024) seen[h[i]] = 1;
	printf("sms=");
	for (int s = 0; s < 1024; s++) if (seen[s]) { int e = s; while (e + 1 < 1024 && seen[e + 1]) e++; printf(first ? "%d" : ",%d", s); if (e > s) printf("-%d", e); first = 0; s = e; }
	printf("\n");
	return 0;
}
