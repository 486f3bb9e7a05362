/*
 * fakeappsms.c - fakeapp's modes that ask for the SM count and launch
 * cooperative grids sized by it, as a CUDA program and its runtime do:
 *
 *   fakeapp sms                     for each device: "dev=D sms=N proc=M", N the
 *                                   count cuDeviceGetAttribute (as the build finds
 *                                   it: dlsym or linked) answers, M the count of the
 *                                   entry point cuGetProcAddress_v2 hands out (as
 *                                   cudart fetches every driver call)
 *   fakeapp sms-on GO               device 0's "sms=N proc=M", then, once file GO
 *                                   exists, again
 *   fakeapp coop BLOCK [ex]         a cooperative grid sized as CUDA's guides size
 *                                   one: the SM count (proc) times the blocks of
 *                                   BLOCK threads an SM holds; launched with
 *                                   cuLaunchCooperativeKernel, or cuLaunchKernelEx
 *                                   and the cooperative attribute ("ex"); prints
 *                                   "grid=G rc=R tpcs=LIST hung=H"; exit status 1
 *                                   if it failed or hung
 *   fakeapp coop-on GO BLOCK [ex]   the same, sized before file GO exists and
 *                                   launched after
 *   fakeapp clusters BLOCK SMEM     "cK=N ..." for clusters of K = 1, 2, 4, 8 and
 *                                   16 CTAs of BLOCK threads and SMEM bytes of
 *                                   shared memory: the N that
 *                                   cuOccupancyMaxActiveClusters says fit at once
 *                                   on device 0 (-1: it failed), as cuBLAS asks
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeapp.h"
#include "fakecuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16

/* The driver calls these modes make: name, then the parameter list. */
#define DRIVER_CALLS(X)                                                                            \
	X(cuDeviceGetCount, (int *))                                                                \
	X(cuDeviceGetAttribute, (int *, int, int))                                                  \
	X(cuGetProcAddress_v2, (const char *, void **, int, uint64_t, int *))                       \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *, void *, int, size_t))                \
	X(cuLaunchCooperativeKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned,     \
				      unsigned, unsigned, void *, void **))                         \
	X(cuLaunchKernelEx, (const NVT_LAUNCH_CONFIG *, void *, void **, void **))                  \
	X(cuOccupancyMaxActiveClusters, (int *, void *, const NVT_LAUNCH_CONFIG *))

#define TYPEDEF(name, params) typedef CUresult name##_ft params;
DRIVER_CALLS(TYPEDEF)
#define POINTER(name, params) static name##_ft *p_##name;
DRIVER_CALLS(POINTER)
static fakecuda_last_launch_fn p_last;

#ifdef USE_DLOPEN
#include <dlfcn.h>
#define LOAD(name, params) p_##name = (name##_ft *)dlsym(fakeapp_lib, #name);
#define LOADED(name, params) &&p_##name
static void load(void)
{
	DRIVER_CALLS(LOAD)
	p_last = (fakecuda_last_launch_fn)dlsym(fakeapp_lib, "fakecuda_last_launch");
	if (!(p_last DRIVER_CALLS(LOADED))) {
		fprintf(stderr, "fakeapp: symbol missing behind the libcuda.so.1 handle\n");
		exit(2);
	}
}
#else
#define DECLARE(name, params) name##_ft name;
DRIVER_CALLS(DECLARE)
#define LOAD(name, params) p_##name = name;
static void load(void)
{
	DRIVER_CALLS(LOAD)
	p_last = fakecuda_last_launch;
}
#endif

/* Device dev's SM count through the entry point cuGetProcAddress_v2 gives,
 * or -1. */
static int proc_sms(int dev)
{
	cuDeviceGetAttribute_ft *attr = NULL;
	int status = -1, sms = -1;

	if (p_cuGetProcAddress_v2("cuDeviceGetAttribute", (void **)&attr, 13000, 0, &status) || !attr ||
	    status || attr(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
		return -1;
	return sms;
}

static int direct_sms(int dev)
{
	int sms = -1;
	return p_cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) ? -1 : sms;
}

static void wait_for(const char *path)
{
	struct timespec pause = {0, 2000000};
	while (!exists(path))
		nanosleep(&pause, NULL);
}

struct coop_grid {
	int ex;
	unsigned block;
	uint64_t blocks;
};

/* Sizes a cooperative grid of block threads a block for device 0. Returns 0 or -1. */
static int size_grid(struct coop_grid *g)
{
	int sms = proc_sms(0), per_sm = 0;

	if (sms <= 0 || p_cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (void *)1, (int)g->block, 0))
		return -1;
	g->blocks = (uint64_t)sms * (uint64_t)per_sm;
	return 0;
}

static int launch_grid(const struct coop_grid *g)
{
	struct fakecuda_launch rec;
	char list[1200] = "-";
	int rc;

	if (g->ex) {
		NVT_LAUNCH_ATTRIBUTE attr = {.id = NVT_LAUNCH_ATTRIBUTE_COOPERATIVE, .value.cooperative = 1};
		NVT_LAUNCH_CONFIG cfg = {0};
		cfg.grid[0] = (unsigned)g->blocks;
		cfg.grid[1] = cfg.grid[2] = cfg.block[1] = cfg.block[2] = 1;
		cfg.block[0] = g->block;
		cfg.attrs = &attr;
		cfg.num_attrs = 1;
		rc = p_cuLaunchKernelEx(&cfg, (void *)1, NULL, NULL);
	} else {
		rc = p_cuLaunchCooperativeKernel((void *)1, (unsigned)g->blocks, 1, 1, g->block, 1, 1, 0, NULL,
						 NULL);
	}
	memset(&rec, 0, sizeof(rec));
	if (p_last(&rec) == 0)
		tpcs_text(rec.ran_tpcs, list, sizeof(list));
	printf("grid=%llu rc=%d tpcs=%s hung=%d\n", (unsigned long long)g->blocks, rc, list, rec.hung);
	fflush(stdout);
	return rc || rec.hung ? 1 : 0;
}

int sms_main(int argc, char **argv)
{
	load();
	if (!strcmp(argv[0], "sms") && argc == 1) {
		int n = 0;
		if (p_cuDeviceGetCount(&n))
			return 2;
		for (int d = 0; d < n; d++)
			printf("dev=%d sms=%d proc=%d\n", d, direct_sms(d), proc_sms(d));
		return 0;
	}
	if (!strcmp(argv[0], "sms-on") && argc == 2) {
		printf("sms=%d proc=%d\n", direct_sms(0), proc_sms(0));
		fflush(stdout);
		wait_for(argv[1]);
		printf("sms=%d proc=%d\n", direct_sms(0), proc_sms(0));
		return 0;
	}
	if ((!strcmp(argv[0], "coop") && (argc == 2 || argc == 3)) ||
	    (!strcmp(argv[0], "coop-on") && (argc == 3 || argc == 4))) {
		int on = !strcmp(argv[0], "coop-on");
		struct coop_grid g = {0};
		g.block = (unsigned)arg_number("BLOCK", argv[1 + on], 10, 1, 65536);
		g.ex = argc == 3 + on && !strcmp(argv[2 + on], "ex");
		if (size_grid(&g)) {
			fprintf(stderr, "fakeapp: cannot size the grid\n");
			return 2;
		}
		if (on) {
			printf("sized=%llu\n", (unsigned long long)g.blocks);
			fflush(stdout);
			wait_for(argv[1]);
		}
		return launch_grid(&g);
	}
	if (!strcmp(argv[0], "clusters") && argc == 3) {
		unsigned block = (unsigned)arg_number("BLOCK", argv[1], 10, 1, 65536);
		unsigned smem = (unsigned)arg_number("SMEM", argv[2], 10, 0, 1L << 30);

		for (unsigned k = 1; k <= 16; k *= 2) {
			NVT_LAUNCH_ATTRIBUTE attr = {.id = NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
			NVT_LAUNCH_CONFIG cfg = {0};
			int n = -1;
			attr.value.cluster_dim[0] = k;
			attr.value.cluster_dim[1] = attr.value.cluster_dim[2] = 1;
			cfg.grid[0] = k;
			cfg.grid[1] = cfg.grid[2] = cfg.block[1] = cfg.block[2] = 1;
			cfg.block[0] = block;
			cfg.shared_mem = smem;
			cfg.attrs = &attr;
			cfg.num_attrs = 1;
			if (p_cuOccupancyMaxActiveClusters(&n, (void *)1, &cfg))
				n = -1;
			printf("%sc%u=%d", k > 1 ? " " : "", k, n);
		}
		printf("\n");
		return 0;
	}
	fprintf(stderr, "fakeapp: bad arguments\n");
	return 2;
}
