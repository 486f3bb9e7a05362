/*
 * probe.h - the CUDA driver as the probes of calibrate.c (the TPC map and
 * GPCs) and membw.c (memory halves) call it, in their child process outside
 * MPS: a table of driver entry points, loaded once, and the launch callback
 * that writes each probe launch's TPC mask.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PROBE_H
#define NVT_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include "cuda_driver.h"
#include "core/tmd.h"
#include "core/text.h"

struct nvt_probe_cu {
	nvt_cuInit_fn init;
	nvt_cuDeviceGet_fn device_get;
	nvt_cuDeviceGetAttribute_fn attribute;
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
	nvt_cuLaunchKernel_fn launch;
	nvt_cuLaunchKernelEx_fn launch_ex;
	nvt_cuStreamCreate_fn stream_create;
	nvt_cuMemcpyHtoD_fn copy_htod;
	nvt_cuGetExportTable_fn export_table;
};

extern struct nvt_probe_cu nvt_cu;

/* Returns -1 from the caller, the reason in r->error, when a driver call fails. */
#define NVT_CU_CHECK(r, call, what)                                                   \
	do {                                                                          \
		CUresult rc_ = (call);                                                \
		if (rc_)                                                              \
			return nvt_why((r)->error, sizeof((r)->error),                \
				       "%s failed: CUDA error %d", what, rc_);        \
	} while (0)

/* Loads the driver into nvt_cu and subscribes the probes' launch callback.
 * Returns 0, or -1 with the reason in why. */
int nvt_probe_open(char *why, size_t len);

/* Whether the callback saw launches and wrote every mask asked for since the
 * process began (a TMD of another layout is left alone and counted). */
int nvt_probe_masks_applied(void);

/* Every later launch of this thread runs with disable (hardware mask bits
 * of TMD layout layout; NVT_TMD_NONE: the launch is left alone). */
void nvt_probe_mask(unsigned layout, const uint32_t disable[NVT_TMD_MASK_WORDS]);

#endif /* NVT_PROBE_H */
