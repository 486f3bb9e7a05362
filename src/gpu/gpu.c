/*
 * gpu.c - driver queries in a child process.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "gpu.h"
#include "nvtaskset.h"
#include "driver.h"
#include "os/child.h"
#include "os/sysutil.h"
#include "core/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cu_error_name(int rc)
{
	switch (rc) {
	case NVT_CUDA_ERROR_NOT_INITIALIZED: return "driver not initialised";
	case NVT_CUDA_ERROR_INSUFFICIENT_DRIVER: return "the driver is older than the CUDA runtime needs";
	case NVT_CUDA_ERROR_DEVICES_UNAVAILABLE: return "devices unavailable (busy or exclusive)";
	case NVT_CUDA_ERROR_NO_DEVICE: return "no CUDA-capable device";
	case NVT_CUDA_ERROR_INVALID_DEVICE: return "invalid device ordinal";
	case NVT_CUDA_ERROR_UNKNOWN: return "unknown error";
	default: return "driver error";
	}
}

/* As CHECK, for the enumeration child: records the error and jumps to fail. */
#define CHECK_OR(call, what)                                                      \
	do {                                                                      \
		int rc_ = (call);                                                 \
		if (rc_) {                                                        \
			snprintf(why, len, "%s failed: error %d (%s)", \
				 what, rc_, cu_error_name(rc_));                  \
			goto fail;                                                \
		}                                                                 \
	} while (0)

#define CHECK(call, what)                                                         \
	do {                                                                      \
		int rc_ = (call);                                                 \
		if (rc_) {                                                        \
			snprintf(why, len, "%s failed: error %d (%s)", \
				 what, rc_, cu_error_name(rc_));                  \
			return -1;                                                \
		}                                                                 \
	} while (0)

/* Runs in the child: loads and initialises the driver. Returns 0, or -1 with the reason in why. */
static int open_driver(struct nvt_gpu_info *info, char *why, size_t len)
{
	if (nvt_driver_open(why, len))
		return -1;
	CHECK(nvt_cu.init(0), "cuInit");
	CHECK(nvt_cu.version(&info->driver_version), "cuDriverGetVersion");
	CHECK(nvt_cu.device_count(&info->device_count), "cuDeviceGetCount");
	return 0;
}

/* Runs in the child. Returns 0, or -1 with the reason in why. */
static int query(const unsigned char *want, struct nvt_gpu_info *info, char *why, size_t len)
{
	CUdevice dev;
	CUuuid uuid;
	int ordinal;

	if (open_driver(info, why, len))
		return -1;
	for (ordinal = 0; ordinal < info->device_count; ordinal++) {
		CHECK(nvt_cu.device_get(&dev, ordinal), "cuDeviceGet");
		CHECK(nvt_cu.device_uuid(&uuid, dev), "cuDeviceGetUuid");
		if (!memcmp(uuid.bytes, want, 16))
			break;
	}
	if (ordinal == info->device_count) {
		snprintf(why, len, NVT_GPU_NOT_VISIBLE " (%d GPU%s visible)",
			 info->device_count, info->device_count == 1 ? "" : "s");
		return -1;
	}
	info->ordinal = ordinal;
	memcpy(info->uuid, uuid.bytes, sizeof(info->uuid));
	CHECK(nvt_cu.attribute(&info->sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
	      "cuDeviceGetAttribute");
	CHECK(nvt_cu.attribute(&info->cc_major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
	      "cuDeviceGetAttribute");
	CHECK(nvt_cu.attribute(&info->cc_minor, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
	      "cuDeviceGetAttribute");
	CHECK(nvt_cu.device_name(info->name, (int)sizeof(info->name) - 1, dev), "cuDeviceGetName");
	{
		size_t total = 0;
		CHECK(nvt_cu.total_mem(&total, dev), "cuDeviceTotalMem");
		info->total_mem = total;
	}
	info->name[sizeof(info->name) - 1] = '\0';
	if (info->sms < 1 || info->sms > 2 * 256) {
		snprintf(why, len, "implausible SM count %d", info->sms);
		return -1;
	}
	return 0;
}

struct query_ctx {
	const unsigned char *uuid; /* NULL: enumerate */
};

/* What a child sends back: its answer, and why there is none ("" when there is). */
struct query_answer {
	struct nvt_gpu_info info;
	char why[256];
};
struct enumerate_answer {
	struct nvt_gpu_list list;
	char why[256];
};

/* Never join (or wait for) an MPS server just to read attributes. */
static void avoid_mps(void)
{
	setenv(NVT_ENV_MPS_PIPE_DIR, "/nonexistent/nvtaskset-no-mps", 1);
}

/* Runs in the child. */
static void query_in_child(void *ctx, void *result)
{
	struct query_answer *a = result;

	avoid_mps();
	if (query(((struct query_ctx *)ctx)->uuid, &a->info, a->why, sizeof(a->why)) == 0)
		a->why[0] = '\0';
	else if (!a->why[0])
		snprintf(a->why, sizeof(a->why), "query failed");
}

/* Words for a failed child call, in why (len bytes). Returns -1. */
static int child_failure(int rc, int timeout_ms, char *why, size_t len)
{
	switch (rc) {
	case NVT_CHILD_TIMEOUT:
		snprintf(why, len, "the CUDA driver did not answer within %d s", timeout_ms / 1000);
		break;
	case NVT_CHILD_ESYS:
		snprintf(why, len, "cannot start a process: %s", strerror(errno));
		break;
	default:
		snprintf(why, len, "the driver query process failed");
	}
	return -1;
}

int nvt_gpu_query(const unsigned char uuid[16], int timeout_ms, struct nvt_gpu_info *info,
		  char *why, size_t len)
{
	struct query_ctx ctx = {uuid};
	struct query_answer a;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = nvt_child_call(query_in_child, &ctx, &a, sizeof(a), timeout_ms);
	if (rc != NVT_CHILD_OK)
		return child_failure(rc, timeout_ms, why, len);
	a.why[sizeof(a.why) - 1] = '\0';
	a.info.name[sizeof(a.info.name) - 1] = '\0';
	*info = a.info;
	if (a.why[0])
		return nvt_why(why, len, "%s", a.why);
	return 0;
}

/* Runs in the child. */
static void enumerate_in_child(void *ctx, void *result)
{
	struct enumerate_answer *a = result;
	struct nvt_gpu_list *list = &a->list;
	struct nvt_gpu_info info_store, *info = &info_store;
	char *why = a->why;
	size_t len = sizeof(a->why);
	CUdevice dev;
	CUuuid uuid;

	(void)ctx;
	avoid_mps();
	memset(info, 0, sizeof(*info));
	if (open_driver(info, why, len))
		goto fail;
	for (int i = 0; i < info->device_count && i < NVT_MACHINE_GPUS; i++) {
		CHECK_OR(nvt_cu.device_get(&dev, i), "cuDeviceGet");
		CHECK_OR(nvt_cu.device_uuid(&uuid, dev), "cuDeviceGetUuid");
		CHECK_OR(nvt_cu.device_name(list->gpu[i].name, (int)sizeof(list->gpu[i].name) - 1, dev),
			 "cuDeviceGetName");
		memcpy(list->gpu[i].uuid, uuid.bytes, 16);
		list->count = i + 1;
	}
	why[0] = '\0';
	return;
fail:
	list->count = 0;
	if (!why[0])
		snprintf(why, len, "query failed");
}

int nvt_gpu_enumerate(int timeout_ms, struct nvt_gpu_list *out, char *why, size_t len)
{
	static struct enumerate_answer a; /* ~7 kB; the command enumerates from one thread */
	int rc;

	memset(&a, 0, sizeof(a));
	rc = nvt_child_call(enumerate_in_child, NULL, &a, sizeof(a), timeout_ms);
	if (rc != NVT_CHILD_OK)
		return child_failure(rc, timeout_ms, why, len);
	a.why[sizeof(a.why) - 1] = '\0';
	if (a.list.count < 0 || a.list.count > NVT_MACHINE_GPUS)
		return nvt_why(why, len, "the driver query process failed");
	for (int i = 0; i < a.list.count; i++)
		a.list.gpu[i].name[sizeof(a.list.gpu[i].name) - 1] = '\0';
	*out = a.list;
	if (a.why[0])
		return nvt_why(why, len, "%s", a.why);
	return 0;
}
