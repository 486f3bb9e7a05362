/*
 * gpu.c - driver queries in a child process.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "gpu.h"
#include "cuda_driver.h"
#include "sysutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cu_error_name(int rc)
{
	switch (rc) {
	case 3: return "driver not initialised";
	case 35: return "the driver is older than the CUDA runtime needs";
	case 46: return "devices unavailable (busy or exclusive)";
	case 100: return "no CUDA-capable device";
	case 101: return "invalid device ordinal";
	case 999: return "unknown error";
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

#define CHECK(call, what)                                                         \
	do {                                                                      \
		int rc_ = (call);                                                 \
		if (rc_) {                                                        \
			snprintf(info->error, sizeof(info->error), "%s failed: error %d (%s)", \
				 what, rc_, cu_error_name(rc_));                  \
			return -1;                                                \
		}                                                                 \
	} while (0)

/* Runs in the child. */
static int query(int ordinal, struct nvt_gpu_info *info)
{
	nvt_cuInit_fn cu_init;
	nvt_cuDeviceGetCount_fn get_count;
	nvt_cuDeviceGet_fn get_device;
	nvt_cuDeviceGetAttribute_fn get_attr;
	nvt_cuDeviceGetUuid_fn get_uuid;
	nvt_cuDeviceGetName_fn get_name;
	nvt_cuDriverGetVersion_fn get_version;
	CUdevice dev;
	CUuuid uuid;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(info->error, sizeof(info->error), "cannot load the CUDA driver: %s",
			 dlerror());
		return -1;
	}
	LOOKUP(cu_init, nvt_cuInit_fn, "cuInit");
	LOOKUP(get_count, nvt_cuDeviceGetCount_fn, "cuDeviceGetCount");
	LOOKUP(get_device, nvt_cuDeviceGet_fn, "cuDeviceGet");
	LOOKUP(get_attr, nvt_cuDeviceGetAttribute_fn, "cuDeviceGetAttribute");
	LOOKUP(get_uuid, nvt_cuDeviceGetUuid_fn, "cuDeviceGetUuid");
	LOOKUP(get_name, nvt_cuDeviceGetName_fn, "cuDeviceGetName");
	LOOKUP(get_version, nvt_cuDriverGetVersion_fn, "cuDriverGetVersion");
	CHECK(cu_init(0), "cuInit");
	CHECK(get_version(&info->driver_version), "cuDriverGetVersion");
	CHECK(get_count(&info->device_count), "cuDeviceGetCount");
	if (ordinal < 0 || ordinal >= info->device_count) {
		snprintf(info->error, sizeof(info->error), "there is no GPU %d (%d visible)", ordinal,
			 info->device_count);
		return -1;
	}
	CHECK(get_device(&dev, ordinal), "cuDeviceGet");
	CHECK(get_attr(&info->sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
	      "cuDeviceGetAttribute");
	CHECK(get_attr(&info->cc_major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
	      "cuDeviceGetAttribute");
	CHECK(get_attr(&info->cc_minor, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
	      "cuDeviceGetAttribute");
	CHECK(get_uuid(&uuid, dev), "cuDeviceGetUuid");
	memcpy(info->uuid, uuid.bytes, sizeof(info->uuid));
	CHECK(get_name(info->name, (int)sizeof(info->name) - 1, dev), "cuDeviceGetName");
	info->name[sizeof(info->name) - 1] = '\0';
	if (info->sms < 1 || info->sms > 2 * 256) {
		snprintf(info->error, sizeof(info->error), "implausible SM count %d", info->sms);
		return -1;
	}
	return 0;
}

struct query_ctx {
	int ordinal;
};

/* Runs in the child. */
static void query_in_child(void *ctx, void *result)
{
	struct nvt_gpu_info *info = result;

	/* Never join (or wait for) an MPS server just to read attributes. */
	setenv("CUDA_MPS_PIPE_DIRECTORY", "/nonexistent/nvtaskset-no-mps", 1);
	if (query(((struct query_ctx *)ctx)->ordinal, info) == 0)
		info->error[0] = '\0';
	else if (!info->error[0])
		snprintf(info->error, sizeof(info->error), "query failed");
}

int nvt_gpu_query(int ordinal, int timeout_ms, struct nvt_gpu_info *info)
{
	struct query_ctx ctx = {ordinal};

	switch (nvt_child_call(query_in_child, &ctx, info, sizeof(*info), timeout_ms)) {
	case NVT_CHILD_OK:
		break;
	case NVT_CHILD_TIMEOUT:
		snprintf(info->error, sizeof(info->error),
			 "the CUDA driver did not answer within %d s", timeout_ms / 1000);
		return -1;
	case NVT_CHILD_ESYS:
		snprintf(info->error, sizeof(info->error), "cannot start a process: %s",
			 strerror(errno));
		return -1;
	default:
		snprintf(info->error, sizeof(info->error), "the driver query process failed");
		return -1;
	}
	info->error[sizeof(info->error) - 1] = '\0';
	info->name[sizeof(info->name) - 1] = '\0';
	return info->error[0] ? -1 : 0;
}

void nvt_gpu_uuid_text(const unsigned char u[16], char *buf)
{
	sprintf(buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		u[15]);
}
