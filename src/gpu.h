/*
 * gpu.h - asking the CUDA driver about a GPU, from a short-lived child
 * process so that the CLI itself never initialises CUDA (it execs the task
 * next) and a wedged driver cannot hang it. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_GPU_H
#define NVT_GPU_H

struct nvt_gpu_info {
	int device_count;
	int sms;
	int cc_major, cc_minor;
	int driver_version; /* e.g. 13000 */
	char name[128];
	unsigned char uuid[16];
	char error[256]; /* why the query failed */
};

/*
 * Queries CUDA device ordinal (0 = the first visible). Waits at most
 * timeout_ms. Returns 0, or -1 with info->error describing the failure.
 */
int nvt_gpu_query(int ordinal, int timeout_ms, struct nvt_gpu_info *info);

/* Formats uuid as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (buf >= 41 bytes). */
void nvt_gpu_uuid_text(const unsigned char uuid[16], char *buf);

#endif /* NVT_GPU_H */
