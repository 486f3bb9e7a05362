/*
 * gpu.h - asking the CUDA driver about a GPU, from a short-lived child
 * process so that the CLI itself never initialises CUDA (it execs the task
 * next) and a wedged driver cannot hang it. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_GPU_H
#define NVT_GPU_H

#include "cuda_driver.h"
#include <stddef.h>
#include <stdint.h>

struct nvt_gpu_info {
	int ordinal; /* CUDA's device ordinal in this environment */
	int device_count;
	int sms;
	int cc_major, cc_minor;
	int driver_version; /* e.g. 13000 */
	uint64_t total_mem; /* bytes of memory (cuDeviceTotalMem) */
	char name[128];
	unsigned char uuid[16];
};

/*
 * Queries the CUDA device whose UUID is uuid (among those this environment
 * makes visible). Waits at most timeout_ms. Returns 0, or -1 with the reason
 * in why (NVT_GPU_NOT_VISIBLE at its start when CUDA sees no such GPU).
 */
int nvt_gpu_query(const unsigned char uuid[16], int timeout_ms, struct nvt_gpu_info *info,
		  char *why, size_t len);
#define NVT_GPU_NOT_VISIBLE "not visible to CUDA"

/* The GPUs CUDA sees, in its order. */
struct nvt_gpu_list {
	int count;
	struct {
		unsigned char uuid[16];
		char name[96];
	} gpu[NVT_MACHINE_GPUS];
};

/* Lists the GPUs CUDA sees. Returns 0, or -1 with the reason in why. */
int nvt_gpu_enumerate(int timeout_ms, struct nvt_gpu_list *out, char *why, size_t len);

#endif /* NVT_GPU_H */
