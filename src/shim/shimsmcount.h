/*
 * shimsmcount.h - the SM count a program is told, and cooperative launches its
 * partition cannot hold (shimsmcount.c). Private to the shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMSMCOUNT_H
#define NVT_SHIMSMCOUNT_H

#include <stdint.h>

#include "gpu/cuda_driver.h"
#include "shimstate.h"

void shim_smcount_setup(nvt_cb_enable_fn enable, uint32_t handle);
/* A driver-API callback (domain 6): cuDeviceGetAttribute's return, and the
 * cooperative launch calls' entry and return. */
void shim_smcount_api(int cbid, const void *data);
/* The cooperative launch this thread is making (blocks 0: none), noted by
 * its launch call's entry callback; per_sm: the blocks an SM holds (0: unknown). */
struct shim_coop {
	uint64_t blocks;
	unsigned per_sm;
};
extern __thread struct shim_coop shim_coop __attribute__((tls_model("initial-exec")));
/* The launch path, for a cooperative launch on masks m: returns 1 (and warns
 * once) when m's SMs cannot hold its grid, which must then run on every TPC. */
int shim_smcount_coop_spills(const struct hw_masks *m);
/* cuDeviceGetAttribute as the driver answers it, for the shim's own questions. */
CUresult shim_smcount_driver_attribute(int *value, int attribute, CUdevice dev);

#endif /* NVT_SHIMSMCOUNT_H */
