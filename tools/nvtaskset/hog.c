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
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/gpusel.h"
#include "gpu/cuda_driver.h"
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

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p) {
		fprintf(stderr, "nvtaskset-hog: the CUDA driver has no %s\n", name);
		exit(EXIT_FAILURE);
	}
	return p;
}

static void check(CUresult rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "nvtaskset-hog: %s failed (CUDA error %d)\n", what, rc);
		exit(EXIT_FAILURE);
	}
}

/* The device whose UUID is text, or exits. */
static CUdevice find_device(void *lib, const char *text)
{
	nvt_cuDeviceGetCount_fn count = (nvt_cuDeviceGetCount_fn)sym(lib, "cuDeviceGetCount");
	nvt_cuDeviceGet_fn get = (nvt_cuDeviceGet_fn)sym(lib, "cuDeviceGet");
	nvt_cuDeviceGetUuid_fn uuid_of = (nvt_cuDeviceGetUuid_fn)sym(lib, "cuDeviceGetUuid");
	uint8_t want[16];
	int n = 0;

	if (nvt_uuid_parse(text, want)) {
		fprintf(stderr, "nvtaskset-hog: '%s' is not a GPU UUID\n", text);
		exit(EXIT_FAILURE);
	}
	check(count(&n), "cuDeviceGetCount");
	for (int i = 0; i < n; i++) {
		CUdevice dev;
		CUuuid u;
		if (!get(&dev, i) && !uuid_of(&u, dev) && !memcmp(u.bytes, want, 16))
			return dev;
	}
	fprintf(stderr, "nvtaskset-hog: no CUDA device has UUID %s\n", text);
	exit(EXIT_FAILURE);
}

int main(int argc, char **argv)
{
	void *lib, *module;
	nvt_cuInit_fn init;
	nvt_cuDeviceGetAttribute_fn attribute;
	CUdevice dev;
	CUcontext ctx;
	CUfunction fn;
	CUdeviceptr src, dst;
	uint64_t n16 = HOG_BYTES / 16;
	int sms = 0, major = 0;
	char ptx[4096];
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
	lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "nvtaskset-hog: cannot load the CUDA driver: %s\n", dlerror());
		return EXIT_FAILURE;
	}
	init = (nvt_cuInit_fn)sym(lib, "cuInit");
	attribute = (nvt_cuDeviceGetAttribute_fn)sym(lib, "cuDeviceGetAttribute");
	check(init(0), "cuInit");
	dev = find_device(lib, argv[1]);
	check(attribute(&sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute");
	check(attribute(&major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
	      "cuDeviceGetAttribute");
	check(((nvt_cuDevicePrimaryCtxRetain_fn)sym(lib, "cuDevicePrimaryCtxRetain"))(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(((nvt_cuCtxSetCurrent_fn)sym(lib, "cuCtxSetCurrent"))(ctx), "cuCtxSetCurrent");
	snprintf(ptx, sizeof(ptx), ".version %s\n.target %s\n.address_size 64\n%s",
		 major >= 9 ? "7.8" : "7.0", major >= 9 ? "sm_90" : major == 8 ? "sm_80" : "sm_70",
		 hog_body);
	check(((nvt_cuModuleLoadData_fn)sym(lib, "cuModuleLoadData"))(&module, ptx), "loading the hog kernel");
	check(((nvt_cuModuleGetFunction_fn)sym(lib, "cuModuleGetFunction"))(&fn, module, "nvt_hog"),
	      "cuModuleGetFunction");
	check(((nvt_cuMemAlloc_fn)sym(lib, "cuMemAlloc_v2"))(&src, HOG_BYTES), "cuMemAlloc");
	check(((nvt_cuMemAlloc_fn)sym(lib, "cuMemAlloc_v2"))(&dst, HOG_BYTES), "cuMemAlloc");
	nvt_cuLaunchKernel_fn launch = (nvt_cuLaunchKernel_fn)sym(lib, "cuLaunchKernel");
	nvt_cuCtxSynchronize_fn sync = (nvt_cuCtxSynchronize_fn)sym(lib, "cuCtxSynchronize");
	for (;;) {
		/* Four blocks of 1024 threads per SM: every SM it may use streams. */
		check(launch(fn, (unsigned)sms * 4, 1, 1, 1024, 1, 1, 0, NULL, params, NULL),
		      "cuLaunchKernel");
		check(sync(), "cuCtxSynchronize");
	}
}
