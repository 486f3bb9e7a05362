/*
 * shimhostfn.h - a host function the task queues ends its request when it runs, and so does a
 * query that finds done an event recorded after its last launch (shimhostfn.c).
 * Private to the shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMHOSTFN_H
#define NVT_SHIMHOSTFN_H

#include <stdint.h>

#include "gpu/cuda_driver.h"
#include "shimstate.h"

/* Follows the host-function and event calls (set-up, after shim_yield_setup: a tracked task only). */
void shim_hostfn_setup(nvt_cb_enable_fn enable, uint32_t handle);
/* A driver-API callback (domain 6) of a call it follows (shim_hostfn_follows). */
void shim_hostfn_api(int cbid, const void *data);
/* The calls shim_hostfn_api follows: the hub asks before it calls, so that the other calls'
 * callbacks (a launch's, around every cuLaunchKernelEx) pay one test of a word. */
extern struct shim_calls shim_hostfn_calls;
static inline int shim_hostfn_follows(int cbid)
{
	return shim_calls_has(&shim_hostfn_calls, cbid);
}
/* In a forked child: no host function of its own is queued. */
void shim_hostfn_after_fork(void);

#endif /* NVT_SHIMHOSTFN_H */
