/*
 * shimpreempt.h - preemptive priorities in the shim (shimpreempt.c;
 * docs/priorities.md, "Preemption"): the timeslice of this process's channel
 * groups on each GPU slot, and the thread that holds them off the GPU while a
 * higher task's request is open. Private to the shim; features layer.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMPREEMPT_H
#define NVT_SHIMPREEMPT_H

#include "nvtaskset.h"

/* At set-up, once the segment's slots are filled: what each slot's priority and words ask. */
void shim_preempt_setup(void);
/*
 * In an MPS server that nvtaskset started for a priority level
 * (NVT_ENV_MPS_SERVER: prio, the level's words): its clients' work runs in its
 * channel groups, which get the level's timeslice; a slot of its segment per
 * GPU it makes groups on, added as they appear.
 */
void shim_preempt_server(const struct nvt_slot_prio *prio);
/* In a forked child: no thread, no groups of its own yet. */
void shim_preempt_after_fork(void);

#endif /* NVT_SHIMPREEMPT_H */
