/*
 * shimmem.h - GPU memory per task: counted from the calls that take and free
 * it, held to the slot's limit, told to the program (shimmem.c). Private to
 * the shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMMEM_H
#define NVT_SHIMMEM_H

#include <stdint.h>

#include "gpu/cuda_driver.h"

/* Enables the driver-API callbacks of the GPU memory calls (set-up, once). */
void shim_mem_setup(nvt_cb_enable_fn enable, uint32_t handle);
/* A driver-API callback (domain 6) of one of those calls. */
void shim_mem_api(int cbid, const void *data);
/* In a forked child: it holds no GPU memory. */
void shim_mem_after_fork(void);

/* The callback ids shim_mem_api follows, a bit each: the hub asks before it
 * calls, so that the launch calls' callbacks pay one test of a word. */
#define SHIM_MEM_ID_WORDS 16
extern uint64_t shim_mem_ids[SHIM_MEM_ID_WORDS];
static inline int shim_mem_follows(int cbid)
{
	return cbid >= 0 && cbid < SHIM_MEM_ID_WORDS * 64 &&
	       (shim_mem_ids[cbid / 64] >> (cbid % 64) & 1);
}

#endif /* NVT_SHIMMEM_H */
