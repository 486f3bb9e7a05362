/*
 * shimsmctrlapi.c - what the shim exports for libsmctrl.so (src/shim/libsmctrl.c):
 * the mask setters, which hand logical masks to shimsmctrl.c, and the GPC and
 * TPC queries, answered from the calibrated topology nvtaskset gave the task
 * (shimsmctrlmaps.c; slow path: the driver is asked which GPU a CUDA ordinal
 * is).
 * include/libsmctrl.h states the semantics.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "gpu/cuda_driver.h"
#include "libsmctrl.h"
#include "nvtaskset.h"
#include "core/topo.h"
#include "shimsmctrl.h"
#include "shimsmctrlapi.h"
#include "shimsmctrlmaps.h"
#include "shimsmcount.h"

#define EXPORT NVT_SMCTRL_EXPORT

/* ---- Setting masks ---------------------------------------------------------------- */

/* libsmctrl: a 64-bit mask other than 0 disables TPCs 64 and up too. */
static void widen64(uint64_t mask, uint64_t out[3])
{
	out[0] = mask;
	out[1] = mask ? ~0ull : 0; /* libsmctrl: a 64-bit mask disables TPCs 64 and up */
	out[2] = mask != 0;
}

static void widen128(uint128_t mask, uint64_t out[3])
{
	out[0] = (uint64_t)mask;
	out[1] = (uint64_t)(mask >> 64);
	out[2] = mask != 0;
}

EXPORT void nvtaskset_smctrl_set_global_mask(uint64_t mask)
{
	uint64_t w[3];
	widen64(mask, w);
	shim_smctrl_set_global(w);
}

EXPORT void nvtaskset_smctrl_set_global_mask_ext(uint128_t mask)
{
	uint64_t w[3];
	widen128(mask, w);
	shim_smctrl_set_global(w);
}

EXPORT void nvtaskset_smctrl_set_stream_mask(void *stream, uint64_t mask)
{
	uint64_t w[3];
	widen64(mask, w);
	shim_smctrl_set_stream(stream, w);
}

EXPORT void nvtaskset_smctrl_set_stream_mask_ext(void *stream, uint128_t mask)
{
	uint64_t w[3];
	widen128(mask, w);
	shim_smctrl_set_stream(stream, w);
}

EXPORT void nvtaskset_smctrl_set_next_mask(uint64_t mask)
{
	uint64_t w[3];
	widen64(mask, w);
	shim_smctrl_set_next(w);
}

EXPORT void nvtaskset_smctrl_set_next_mask_ext(uint128_t mask)
{
	uint64_t w[3];
	widen128(mask, w);
	shim_smctrl_set_next(w);
}


/* ---- Queries -------------------------------------------------------------------------- */

EXPORT int nvtaskset_smctrl_get_tpc_info_cuda(uint32_t *num_tpcs, int cuda_dev)
{
	static struct nvt_topology topo;
	int sms = 0, major = 0, rc;

	if (!num_tpcs)
		return EINVAL;
	rc = shim_smctrl_device_topology(cuda_dev, &topo);
	if (rc == 0) {
		*num_tpcs = topo.n_tpcs;
		return 0;
	}
	if (rc != ENOENT)
		return rc;
	/* Without calibration: the SMs of TPCs of two (every GPU since Volta). */
	if (shim_smcount_driver_attribute(&sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
					  cuda_dev) ||
	    shim_smcount_driver_attribute(&major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
					  cuda_dev))
		return EIO;
	if (major < 7)
		return ENOTSUP;
	*num_tpcs = (uint32_t)sms / 2;
	return 0;
}

EXPORT int nvtaskset_smctrl_get_tpc_info(uint32_t *num_tpcs, int dev)
{
	return nvtaskset_smctrl_get_tpc_info_cuda(num_tpcs, dev);
}

/* Per device (ordinals below NVT_MAX_GPUS): what the GPC queries return. */
static uint128_t gpc_masks_ext[NVT_MAX_GPUS][NVT_MAX_GPCS];
static uint64_t gpc_masks[NVT_MAX_GPUS][NVT_MAX_GPCS];

EXPORT int nvtaskset_smctrl_get_gpc_info_ext(uint32_t *num_enabled_gpcs, uint128_t **tpcs_for_gpc,
					      int dev)
{
	static struct nvt_topology topo;
	int rc;

	if (num_enabled_gpcs)
		*num_enabled_gpcs = 0; /* as libsmctrl: callers print it whatever the result */
	if (!num_enabled_gpcs || !tpcs_for_gpc || dev < 0 || dev >= NVT_MAX_GPUS)
		return EINVAL;
	if ((rc = shim_smctrl_device_topology(dev, &topo)))
		return rc;
	if (!topo.n_gpcs || topo.n_gpcs > NVT_MAX_GPCS)
		return ENODATA; /* GPCs unknown: before Hopper, calibration cannot see them */
	if (topo.n_tpcs > 128)
		return ERANGE;
	memset(gpc_masks_ext[dev], 0, sizeof(gpc_masks_ext[dev]));
	for (unsigned t = 0; t < topo.n_tpcs; t++)
		gpc_masks_ext[dev][topo.gpc[t]] |= (uint128_t)1 << t;
	*num_enabled_gpcs = topo.n_gpcs;
	*tpcs_for_gpc = gpc_masks_ext[dev];
	return 0;
}

/* As libsmctrl's own (2025): ERANGE where a GPC holds a TPC above 63, which
 * a 64-bit mask cannot name (an H100's TPCs 64 and 65): the _ext form answers. */
EXPORT int nvtaskset_smctrl_get_gpc_info(uint32_t *num_enabled_gpcs, uint64_t **tpcs_for_gpc, int dev)
{
	uint128_t *ext;
	uint32_t n;
	int rc;

	if (num_enabled_gpcs)
		*num_enabled_gpcs = 0;
	if (!num_enabled_gpcs || !tpcs_for_gpc)
		return EINVAL;
	if ((rc = nvtaskset_smctrl_get_gpc_info_ext(&n, &ext, dev)))
		return rc;
	for (uint32_t i = 0; i < n; i++) {
		if (ext[i] >> 64)
			return ERANGE; /* a GPC holds a TPC above 63: use the _ext form */
		gpc_masks[dev][i] = (uint64_t)ext[i];
	}
	*num_enabled_gpcs = n;
	*tpcs_for_gpc = gpc_masks[dev];
	return 0;
}
