/*
 * hog.c - nvtaskset-hog: a memory-bandwidth hog for `nvtaskset --profile
 * --beside-hog`. It copies one buffer into another with every block it may
 * have, again and again, until it is ended (or its parent is). A PTX
 * kernel compiled by the driver: no CUDA toolkit needed. Started by
 * --profile as `nvtaskset -c REST nvtaskset-hog GPU-UUID`, so its shim keeps
 * it on the TPCs the profiled command does not use.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/gpusel.h"
#include "gpu/driver.h"
#include "gpu/ptx.h"

/* Two buffers of this size: far beyond any cache (H100: 50 MB of L2). */
#define HOG_BYTES (256u << 20)

/* dst[i] = src[i] in 16-byte words, a grid-stride loop. */
static const char hog_body[] =
	".visible .entry nvt_hog(.param .u64 src, .param .u64 dst, .param .u64 n16)\n"
	"{\n"
	"  .reg .pred %p;\n"
	"  .reg .b32 %r<12>;\n"
	"  .reg .b64 %rd<12>;\n"
	"  ld.param.u64 %rd1, [src];\n"
	"  ld.param.u64 %rd2, [dst];\n"
	"  ld.param.u64 %rd3, [n16];\n"
	"  cvta.to.global.u64 %rd1, %rd1;\n"
	"  cvta.to.global.u64 %rd2, %rd2;\n"
	NVT_PTX_GRID_STRIDE
	"LOOP:\n"
	"  setp.ge.u64 %p, %rd4, %rd3;\n"
	"  @%p bra DONE;\n"
	"  shl.b64 %rd6, %rd4, 4;\n"
	"  add.u64 %rd7, %rd1, %rd6;\n"
	"  add.u64 %rd8, %rd2, %rd6;\n"
	"  ld.global.v4.u32 {%r7, %r8, %r9, %r10}, [%rd7];\n"
	"  st.global.v4.u32 [%rd8], {%r7, %r8, %r9, %r10};\n"
	"  add.u64 %rd4, %rd4, %rd5;\n"
	"  bra LOOP;\n"
	"DONE:\n"
	"  ret;\n"
	"}\n";

static void check(CUresult rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "nvtaskset-hog: %s failed (CUDA error %d)\n", what, rc);
		exit(EXIT_FAILURE);
	}
}

/* The device whose UUID is text, or exits. */
static CUdevice find_device(const char *text)
{
	uint8_t want[16];
	int n = 0;

	if (nvt_uuid_parse(text, want)) {
		fprintf(stderr, "nvtaskset-hog: '%s' is not a GPU UUID\n", text);
		exit(EXIT_FAILURE);
	}
	check(nvt_cu.device_count(&n), "cuDeviceGetCount");
	for (int i = 0; i < n; i++) {
		CUdevice dev;
		CUuuid u;
		if (!nvt_cu.device_get(&dev, i) && !nvt_cu.device_uuid(&u, dev) && !memcmp(u.bytes, want, 16))
			return dev;
	}
	fprintf(stderr, "nvtaskset-hog: no CUDA device has UUID %s\n", text);
	exit(EXIT_FAILURE);
}

int main(int argc, char **argv)
{
	CUmodule module;
	CUdevice dev;
	CUcontext ctx;
	CUfunction fn;
	CUdeviceptr src, dst;
	uint64_t n16 = HOG_BYTES / 16;
	int sms = 0, major = 0;
	char ptx[4096], why[256];
	void *params[] = {&src, &dst, &n16};

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: nvtaskset-hog GPU-UUID (started by nvtaskset --profile "
				"--beside-hog)\n");
		return argc == 2 && !strcmp(argv[1], "--help") ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	/* Never outlive the profiler that started it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return EXIT_FAILURE;
	if (nvt_driver_open(why, sizeof(why))) {
		fprintf(stderr, "nvtaskset-hog: %s\n", why);
		return EXIT_FAILURE;
	}
	check(nvt_cu.init(0), "cuInit");
	dev = find_device(argv[1]);
	check(nvt_cu.attribute(&sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
	      "cuDeviceGetAttribute");
	check(nvt_cu.attribute(&major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
	      "cuDeviceGetAttribute");
	check(nvt_cu.ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(nvt_cu.ctx_set(ctx), "cuCtxSetCurrent");
	snprintf(ptx, sizeof(ptx), ".version %s\n.target %s\n.address_size 64\n%s",
		 major >= 9 ? "7.8" : "7.0", major >= 9 ? "sm_90" : major == 8 ? "sm_80" : "sm_70",
		 hog_body);
	check(nvt_cu.module_load(&module, ptx), "loading the hog kernel");
	check(nvt_cu.module_function(&fn, module, "nvt_hog"), "cuModuleGetFunction");
	check(nvt_cu.mem_alloc(&src, HOG_BYTES), "cuMemAlloc");
	check(nvt_cu.mem_alloc(&dst, HOG_BYTES), "cuMemAlloc");
	for (;;) {
		/* Four blocks of 1024 threads per SM: every SM it may use streams. */
		check(nvt_cu.launch(fn, (unsigned)sms * 4, 1, 1, 1024, 1, 1, 0, NULL, params, NULL),
		      "cuLaunchKernel");
		check(nvt_cu.sync(), "cuCtxSynchronize");
	}
}
