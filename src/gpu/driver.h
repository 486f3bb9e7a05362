/*
 * driver.h - the CUDA driver's entry points as the command's code calls
 * them: one table, each entry looked up once by its name (driver.c), for
 * gpu.c's queries, the probes of calibrate.c and bwprobe.c, and
 * nvtaskset-hog. It is filled in the child processes that ask the driver
 * (gpu.h), never in the command itself, which execs the task next. The
 * shim has a table of its own (src/shim/shimdriver.h): it finds the driver
 * in the library its host loaded, not by loading one.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_DRIVER_H
#define NVT_DRIVER_H

#include <stddef.h>
#include "cuda_driver.h"

struct nvt_driver {
	nvt_cuInit_fn init;
	nvt_cuDriverGetVersion_fn version;
	nvt_cuDeviceGetCount_fn device_count;
	nvt_cuDeviceGet_fn device_get;
	nvt_cuDeviceGetUuid_fn device_uuid;
	nvt_cuDeviceGetName_fn device_name;
	nvt_cuDeviceGetAttribute_fn attribute;
	nvt_cuDeviceTotalMem_fn total_mem;
	nvt_cuDevicePrimaryCtxRetain_fn ctx_retain;
	nvt_cuDevicePrimaryCtxRelease_fn ctx_release;
	nvt_cuCtxSetCurrent_fn ctx_set;
	nvt_cuCtxSynchronize_fn sync;
	nvt_cuModuleLoadData_fn module_load;
	nvt_cuModuleGetFunction_fn module_function;
	nvt_cuFuncSetAttribute_fn func_attribute;
	nvt_cuMemAlloc_fn mem_alloc;
	nvt_cuMemFree_fn mem_free;
	nvt_cuMemcpyDtoH_fn copy_dtoh;
	nvt_cuMemcpyHtoD_fn copy_htod;
	nvt_cuStreamCreate_fn stream_create;
	nvt_cuLaunchKernel_fn launch;
	nvt_cuLaunchKernelEx_fn launch_ex; /* NULL where the driver has none (before CUDA 12.0) */
	nvt_cuGetExportTable_fn export_table;
};

/* The table, filled by nvt_driver_open. */
extern struct nvt_driver nvt_cu;

/* Loads libcuda.so.1 and looks up every entry point of nvt_cu (once per
 * process; cuLaunchKernelEx may be missing). Returns 0, or -1 with the
 * reason in why. */
int nvt_driver_open(char *why, size_t len);

#endif /* NVT_DRIVER_H */
