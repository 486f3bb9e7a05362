/*
 * driver.c - the command's table of CUDA driver entry points (driver.h):
 * each one's name written once, beside the field it fills.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "driver.h"
#include "core/text.h"

#include <dlfcn.h>
#include <string.h>

struct nvt_driver nvt_cu;

#define ENTRY(field, name, needed) {offsetof(struct nvt_driver, field), name, needed}

static const struct {
	size_t at;        /* the field's offset in struct nvt_driver */
	const char *name; /* the driver's name of the entry point */
	int needed;       /* 0: may be missing (a newer call) */
} entries[] = {
	ENTRY(init, "cuInit", 1),
	ENTRY(version, "cuDriverGetVersion", 1),
	ENTRY(device_count, "cuDeviceGetCount", 1),
	ENTRY(device_get, "cuDeviceGet", 1),
	ENTRY(device_uuid, "cuDeviceGetUuid", 1),
	ENTRY(device_name, "cuDeviceGetName", 1),
	ENTRY(attribute, "cuDeviceGetAttribute", 1),
	ENTRY(total_mem, "cuDeviceTotalMem_v2", 1),
	ENTRY(ctx_retain, "cuDevicePrimaryCtxRetain", 1),
	ENTRY(ctx_release, "cuDevicePrimaryCtxRelease_v2", 1),
	ENTRY(ctx_set, "cuCtxSetCurrent", 1),
	ENTRY(sync, "cuCtxSynchronize", 1),
	ENTRY(module_load, "cuModuleLoadData", 1),
	ENTRY(module_function, "cuModuleGetFunction", 1),
	ENTRY(func_attribute, "cuFuncSetAttribute", 1),
	ENTRY(mem_alloc, "cuMemAlloc_v2", 1),
	ENTRY(mem_free, "cuMemFree_v2", 1),
	ENTRY(copy_dtoh, "cuMemcpyDtoH_v2", 1),
	ENTRY(copy_htod, "cuMemcpyHtoD_v2", 1),
	ENTRY(stream_create, "cuStreamCreate", 1),
	ENTRY(launch, "cuLaunchKernel", 1),
	ENTRY(launch_ex, "cuLaunchKernelEx", 0),
	ENTRY(export_table, "cuGetExportTable", 1),
};
_Static_assert(sizeof(entries) / sizeof(entries[0]) == sizeof(struct nvt_driver) / sizeof(void *),
	       "every entry point of struct nvt_driver has its name");

int nvt_driver_open(char *why, size_t len)
{
	static int loaded;
	void *lib;

	if (loaded)
		return 0;
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return nvt_why(why, len, "cannot load the CUDA driver: %s", dlerror());
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		void *fn = dlsym(lib, entries[i].name);
		if (!fn && entries[i].needed)
			return nvt_why(why, len, "libcuda.so.1 lacks %s", entries[i].name);
		memcpy((char *)&nvt_cu + entries[i].at, &fn, sizeof(fn));
	}
	loaded = 1;
	return 0;
}
