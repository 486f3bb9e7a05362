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

typedef unsigned long long CUdeviceptr;
typedef void *CUmodule;


/* Layouts as in CUDA 12/13's cuda.h. */
struct launch_attribute {
	int id;
	char pad[4];
	union {
		char bytes[64];
		struct {
			unsigned x, y, z;
		} cluster_dim;
	} value;
};
struct launch_config {
	unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
	void *stream;
	struct launch_attribute *attrs;
	unsigned num_attrs;
};
#define LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4
#define FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED 14
#define DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97

struct nvt_probe_cu {
	CUresult (*init)(unsigned);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*attribute)(int *, int, CUdevice);
	CUresult (*ctx_retain)(CUcontext *, CUdevice);
	CUresult (*ctx_release)(CUdevice);
	CUresult (*ctx_set)(CUcontext);
	CUresult (*sync)(void);
	CUresult (*module_load)(CUmodule *, const void *);
	CUresult (*module_function)(CUfunction *, CUmodule, const char *);
	CUresult (*func_attribute)(CUfunction, int, int);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*mem_free)(CUdeviceptr);
	CUresult (*copy_dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, void *, void **, void **);
	CUresult (*launch_ex)(const struct launch_config *, CUfunction, void **, void **);
	CUresult (*stream_create)(CUstream *, unsigned);
	CUresult (*copy_htod)(CUdeviceptr, const void *, size_t);
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
