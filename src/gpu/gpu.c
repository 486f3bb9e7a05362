/*
 * gpu.c - driver queries in a child process.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "gpu.h"
#include "nvtaskset.h"
#include "cuda_driver.h"
#include "os/child.h"
#include "os/sysutil.h"

#include <dlfcn.h>
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

#define LOOKUP(var, type, name)                                                   \
	do {                                                                      \
		var = (type)dlsym(lib, name);                                     \
		if (!var) {                                                       \
			snprintf(info->error, sizeof(info->error),                \
				 "libcuda.so.1 lacks %s", name);                  \
			return -1;                                                \
		}                                                                 \
	} while (0)

/* As CHECK, for the enumeration child: records the error and jumps to fail. */
#define CHECK_OR(call, what)                                                      \
	do {                                                                      \
		int rc_ = (call);                                                 \
		if (rc_) {                                                        \
			snprintf(info->error, sizeof(info->error), "%s failed: error %d (%s)", \
				 what, rc_, cu_error_name(rc_));                  \
			goto fail;                                                \
		}                                                                 \
	} while (0)

#define CHECK(call, what)                                                         \
	do {                                                                      \
		int rc_ = (call);                                                 \
		if (rc_) {                                                        \
			snprintf(info->error, sizeof(info->error), "%s failed: error %d (%s)", \
				 what, rc_, cu_error_name(rc_));                  \
			return -1;                                                \
		}                                                                 \
	} while (0)

/* The driver entry points the queries use. */
struct driver {
	nvt_cuInit_fn init;
	nvt_cuDeviceGetCount_fn get_count;
	nvt_cuDeviceGet_fn get_device;
	nvt_cuDeviceGetAttribute_fn get_attr;
	nvt_cuDeviceGetUuid_fn get_uuid;
	nvt_cuDeviceGetName_fn get_name;
	nvt_cuDriverGetVersion_fn get_version;
};

/* Runs in the child: loads and initialises the driver. */
static int open_driver(struct driver *cu, struct nvt_gpu_info *info)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(info->error, sizeof(info->error), "cannot load the CUDA driver: %s",
			 dlerror());
		return -1;
	}
	LOOKUP(cu->init, nvt_cuInit_fn, "cuInit");
	LOOKUP(cu->get_count, nvt_cuDeviceGetCount_fn, "cuDeviceGetCount");
	LOOKUP(cu->get_device, nvt_cuDeviceGet_fn, "cuDeviceGet");
	LOOKUP(cu->get_attr, nvt_cuDeviceGetAttribute_fn, "cuDeviceGetAttribute");
	LOOKUP(cu->get_uuid, nvt_cuDeviceGetUuid_fn, "cuDeviceGetUuid");
	LOOKUP(cu->get_name, nvt_cuDeviceGetName_fn, "cuDeviceGetName");
	LOOKUP(cu->get_version, nvt_cuDriverGetVersion_fn, "cuDriverGetVersion");
	CHECK(cu->init(0), "cuInit");
	CHECK(cu->get_version(&info->driver_version), "cuDriverGetVersion");
	CHECK(cu->get_count(&info->device_count), "cuDeviceGetCount");
	return 0;
}

/* Runs in the child. */
static int query(const unsigned char *want, struct nvt_gpu_info *info)
{
	struct driver cu;
	CUdevice dev;
	CUuuid uuid;
	int ordinal;

	if (open_driver(&cu, info))
		return -1;
	for (ordinal = 0; ordinal < info->device_count; ordinal++) {
		CHECK(cu.get_device(&dev, ordinal), "cuDeviceGet");
		CHECK(cu.get_uuid(&uuid, dev), "cuDeviceGetUuid");
		if (!memcmp(uuid.bytes, want, 16))
			break;
	}
	if (ordinal == info->device_count) {
		snprintf(info->error, sizeof(info->error), NVT_GPU_NOT_VISIBLE " (%d GPU%s visible)",
			 info->device_count, info->device_count == 1 ? "" : "s");
		return -1;
	}
	info->ordinal = ordinal;
	memcpy(info->uuid, uuid.bytes, sizeof(info->uuid));
	CHECK(cu.get_attr(&info->sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
	      "cuDeviceGetAttribute");
	CHECK(cu.get_attr(&info->cc_major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
	      "cuDeviceGetAttribute");
	CHECK(cu.get_attr(&info->cc_minor, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
	      "cuDeviceGetAttribute");
	CHECK(cu.get_name(info->name, (int)sizeof(info->name) - 1, dev), "cuDeviceGetName");
	info->name[sizeof(info->name) - 1] = '\0';
	if (info->sms < 1 || info->sms > 2 * 256) {
		snprintf(info->error, sizeof(info->error), "implausible SM count %d", info->sms);
		return -1;
	}
	return 0;
}

struct query_ctx {
	const unsigned char *uuid; /* NULL: enumerate */
};

/* Never join (or wait for) an MPS server just to read attributes. */
static void avoid_mps(void)
{
	setenv(NVT_ENV_MPS_PIPE_DIR, "/nonexistent/nvtaskset-no-mps", 1);
}

/* Runs in the child. */
static void query_in_child(void *ctx, void *result)
{
	struct nvt_gpu_info *info = result;

	avoid_mps();
	if (query(((struct query_ctx *)ctx)->uuid, info) == 0)
		info->error[0] = '\0';
	else if (!info->error[0])
		snprintf(info->error, sizeof(info->error), "query failed");
}

/* Words for a failed child call, in error (len bytes). Returns -1. */
static int child_failure(int rc, int timeout_ms, char *error, size_t len)
{
	switch (rc) {
	case NVT_CHILD_TIMEOUT:
		snprintf(error, len, "the CUDA driver did not answer within %d s", timeout_ms / 1000);
		break;
	case NVT_CHILD_ESYS:
		snprintf(error, len, "cannot start a process: %s", strerror(errno));
		break;
	default:
		snprintf(error, len, "the driver query process failed");
	}
	return -1;
}

int nvt_gpu_query(const unsigned char uuid[16], int timeout_ms, struct nvt_gpu_info *info)
{
	struct query_ctx ctx = {uuid};
	int rc = nvt_child_call(query_in_child, &ctx, info, sizeof(*info), timeout_ms);

	if (rc != NVT_CHILD_OK)
		return child_failure(rc, timeout_ms, info->error, sizeof(info->error));
	info->error[sizeof(info->error) - 1] = '\0';
	info->name[sizeof(info->name) - 1] = '\0';
	return info->error[0] ? -1 : 0;
}

/* Runs in the child. */
static void enumerate_in_child(void *ctx, void *result)
{
	struct nvt_gpu_list *list = result;
	struct nvt_gpu_info info_store, *info = &info_store;
	struct driver cu;
	CUdevice dev;
	CUuuid uuid;

	(void)ctx;
	avoid_mps();
	memset(info, 0, sizeof(*info));
	if (open_driver(&cu, info))
		goto fail;
	for (int i = 0; i < info->device_count && i < NVT_MACHINE_GPUS; i++) {
		CHECK_OR(cu.get_device(&dev, i), "cuDeviceGet");
		CHECK_OR(cu.get_uuid(&uuid, dev), "cuDeviceGetUuid");
		CHECK_OR(cu.get_name(list->gpu[i].name, (int)sizeof(list->gpu[i].name) - 1, dev),
			 "cuDeviceGetName");
		memcpy(list->gpu[i].uuid, uuid.bytes, 16);
		list->count = i + 1;
	}
	list->error[0] = '\0';
	return;
fail:
	list->count = 0;
	snprintf(list->error, sizeof(list->error), "%s", info->error[0] ? info->error : "query failed");
}

int nvt_gpu_enumerate(int timeout_ms, struct nvt_gpu_list *out)
{
	int rc = nvt_child_call(enumerate_in_child, NULL, out, sizeof(*out), timeout_ms);

	if (rc != NVT_CHILD_OK)
		return child_failure(rc, timeout_ms, out->error, sizeof(out->error));
	out->error[sizeof(out->error) - 1] = '\0';
	if (out->count < 0 || out->count > NVT_MACHINE_GPUS) {
		snprintf(out->error, sizeof(out->error), "the driver query process failed");
		return -1;
	}
	for (int i = 0; i < out->count; i++)
		out->gpu[i].name[sizeof(out->gpu[i].name) - 1] = '\0';
	return out->error[0] ? -1 : 0;
}
