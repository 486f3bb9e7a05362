/*
 * prog.c - a program written for libsmctrl, README's example. It masks its kernels to TPCs
 * 0-3 with libsmctrl's global mask, launches one kernel whose blocks store the SM they ran
 * on, and prints the TPCs they ran on (TPC t holds SMs 2t and 2t+1).
 *
 * In nvtaskset's libsmctrl a mask names the TPCs users see (nvtaskset's numbers, as -c
 * takes them), and applies within the task's partition: started plainly, its kernels run
 * on TPCs 0-3; under `nvtaskset -g 1 ./prog`, on those of TPCs 0-3 that GPC 1 holds (the
 * mask and the partition both); under a partition that holds none of them, on the
 * partition (a mask that leaves no TPC is not applied, and nvtaskset warns once).
 *
 *   cc -o prog docs/examples/prog.c $(pkg-config --cflags --libs libsmctrl) -lcuda
 *
 * It needs no CUDA toolkit: the kernel is PTX, which the driver compiles, and the few
 * driver calls it makes are declared below.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <libsmctrl.h>

/* The CUDA driver's calls this program makes, as cuda.h declares them. */
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
typedef unsigned long long CUdeviceptr;
CUresult cuInit(unsigned flags);
CUresult cuDeviceGet(CUdevice *dev, int ordinal);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name);
CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr ptr);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes);
CUresult cuCtxSynchronize(void);
CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned shared, CUstream stream, void **params,
			void **extra);

/* Thread 0 of each block stores the SM it runs on (%smid) at out[blockIdx.x]. */
static const char kernel_ptx[] = ".version 7.0\n"
				 ".target sm_70\n"
				 ".address_size 64\n"
				 ".visible .entry where_it_ran(.param .u64 out)\n"
				 "{\n"
				 "	.reg .pred %p<2>;\n"
				 "	.reg .b32 %r<4>;\n"
				 "	.reg .b64 %rd<5>;\n"
				 "	mov.u32 %r1, %tid.x;\n"
				 "	setp.ne.u32 %p1, %r1, 0;\n"
				 "	@%p1 bra DONE;\n"
				 "	mov.u32 %r2, %smid;\n"
				 "	mov.u32 %r3, %ctaid.x;\n"
				 "	ld.param.u64 %rd1, [out];\n"
				 "	cvta.to.global.u64 %rd2, %rd1;\n"
				 "	mul.wide.u32 %rd3, %r3, 4;\n"
				 "	add.s64 %rd4, %rd2, %rd3;\n"
				 "	st.global.u32 [%rd4], %r2;\n"
				 "DONE:\n"
				 "	ret;\n"
				 "}\n";

#define BLOCKS 256

static int check(CUresult rc, const char *what)
{
	if (rc)
		fprintf(stderr, "prog: %s: CUDA error %d\n", what, rc);
	return rc != 0;
}

/* Prints the TPCs of the SMs in sms (n of them), as a list: "0-3", "1,9". */
static void print_tpcs(const unsigned *sms, int n)
{
	static unsigned char ran[1024];
	int first = 1;

	for (int i = 0; i < n; i++)
		if (sms[i] / 2 < sizeof(ran))
			ran[sms[i] / 2] = 1;
	for (int t = 0; t < (int)sizeof(ran); t++) {
		int end = t;
		if (!ran[t])
			continue;
		while (end + 1 < (int)sizeof(ran) && ran[end + 1])
			end++;
		printf(end > t ? "%s%d-%d" : "%s%d", first ? "" : ",", t, end);
		first = 0;
		t = end;
	}
}

int main(void)
{
	unsigned sms[BLOCKS];
	uint32_t tpcs = 0;
	CUdevice dev;
	CUcontext ctx;
	CUmodule module;
	CUfunction fn;
	CUdeviceptr out;
	void *params[] = {&out};

	/* A set bit disables its TPC: every kernel launched from here on may use TPCs 0-3. */
	libsmctrl_set_global_mask(~0xfull);
	if (libsmctrl_get_tpc_info_cuda(&tpcs, 0)) {
		fprintf(stderr, "prog: libsmctrl_get_tpc_info_cuda failed\n");
		return 1;
	}
	if (check(cuInit(0), "cuInit") || check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
	    check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
	    check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
	    check(cuModuleLoadData(&module, kernel_ptx), "cuModuleLoadData") ||
	    check(cuModuleGetFunction(&fn, module, "where_it_ran"), "cuModuleGetFunction") ||
	    check(cuMemAlloc_v2(&out, sizeof(sms)), "cuMemAlloc") ||
	    check(cuLaunchKernel(fn, BLOCKS, 1, 1, 32, 1, 1, 0, NULL, params, NULL), "cuLaunchKernel") ||
	    check(cuCtxSynchronize(), "cuCtxSynchronize") ||
	    check(cuMemcpyDtoH_v2(sms, out, sizeof(sms)), "cuMemcpyDtoH"))
		return 1;
	cuMemFree_v2(out);
	printf("GPU 0 has %u TPCs; masked to TPCs 0-3, this program's kernel ran on TPCs ", tpcs);
	print_tpcs(sms, BLOCKS);
	printf("\n");
	return 0;
}
