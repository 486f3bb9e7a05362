/*
 * gpu.c - driver queries in a child process.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "gpu.h"
#include "cuda_driver.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int nvt_gpu_query(int ordinal, int timeout_ms, struct nvt_gpu_info *info)
{
	int fds[2], status;
	size_t got = 0;
	long deadline;
	pid_t child;

	memset(info, 0, sizeof(*info));
	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(info->error, sizeof(info->error), "pipe: %s", strerror(errno));
		return -1;
	}
	child = fork();
	if (child < 0) {
		snprintf(info->error, sizeof(info->error), "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (child == 0) {
		struct nvt_gpu_info mine;
		memset(&mine, 0, sizeof(mine));
		close(fds[0]);
		/* Never join (or wait for) an MPS server just to read attributes. */
		setenv("CUDA_MPS_PIPE_DIRECTORY", "/nonexistent/nvtaskset-no-mps", 1);
		if (query(ordinal, &mine) == 0)
			mine.error[0] = '\0';
		else if (!mine.error[0])
			snprintf(mine.error, sizeof(mine.error), "query failed");
		if (write(fds[1], &mine, sizeof(mine)) != (ssize_t)sizeof(mine))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	deadline = now_ms() + timeout_ms;
	while (got < sizeof(*info)) {
		struct pollfd pfd = {fds[0], POLLIN, 0};
		long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)left) == 0) {
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
			close(fds[0]);
			memset(info, 0, sizeof(*info));
			snprintf(info->error, sizeof(info->error),
				 "the CUDA driver did not answer within %d s", timeout_ms / 1000);
			return -1;
		}
		n = read(fds[0], (char *)info + got, sizeof(*info) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	waitpid(child, &status, 0);
	if (got != sizeof(*info)) {
		memset(info, 0, sizeof(*info));
		snprintf(info->error, sizeof(info->error), "the driver query process %s",
			 WIFSIGNALED(status) ? "crashed" : "failed");
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
