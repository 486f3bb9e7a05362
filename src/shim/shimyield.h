/*
 * shimyield.h - priorities in the shim (shimyield.c; docs/priorities.md,
 * "Yielding"): the activity a task publishes, and a lower task's launches
 * held back for higher ones. Private to the shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMYIELD_H
#define NVT_SHIMYIELD_H

#include <stdint.h>

#include "gpu/cuda_driver.h"
#include "core/segment.h"
#include "shimslot.h"
#include "core/yield.h"
#include "shimbridge.h"
#include "shimstate.h"

extern int shim_yield_tracking; /* started with a priority: follows its requests */
/* Follows its launch calls to yield (a task below high whose words ask it): only such a
 * task's launches may borrow (shim_yield_borrow). */
extern int shim_yield_following;
/*
 * Per GPU slot: 1 while a tracked task has no request open, so that its next launch begins
 * one; never 1 in a task that is not tracked. The launch path reads this one word (relaxed)
 * and calls out only at a request's first launch: the clock read and the activity's stores
 * are once a request, not once a launch.
 */
extern int shim_yield_idle[NVT_MAX_GPUS];
/* The first launch (or replay) on slot g since it went idle: a request begins. */
void shim_yield_launched(int g);
/* The work slot g's task queued is done (a host function of its ran, or a query found done an
 * event recorded after its last launch: shimhostfn.c): its request there ends, as at a
 * synchronisation's return. */
void shim_yield_ended(int g);
/* 1 while this thread is in a driver call of the shim's own (its events: not the program's). */
int shim_yield_own_call(void);
/*
 * A query on slot g answered (done: success, else "not ready"): of event obj (shimhostfn.c; noted:
 * the slot's launches at its record) or of stream obj (noted: the launches now). Where no launch
 * came since noted, a look that core/bridge.h's rule (nvt_bridge_poll_look) says begins a wait
 * begins it, as a synchronisation's entry (its bridge is queued), and "done" returns from the
 * wait it began. Returns 1 where the request ends (done, and no launch since
 * noted; a bridge's own kernels are no launches: shim_count_launch).
 */
int shim_yield_polled(int g, const void *obj, uint64_t noted, int done);
/* Slot g got its GPU: it starts idle and, if tracked, says so. */
void shim_yield_slot_ready(int g);
/* A driver-API callback (domain 6) of a call it follows. */
void shim_yield_api(int cbid, const void *data);
void shim_yield_setup(nvt_cb_enable_fn enable, uint32_t handle, uint8_t prio, uint32_t yield);
void shim_yield_after_fork(void);
/* Higher tasks a slot follows at most (the size of shim_yield_higher's out). */
#define SHIM_YIELD_WATCH_MAX 8
/*
 * The higher tasks on slot g now, their activity copied into out (room for
 * SHIM_YIELD_WATCH_MAX), after a look for them if one is due: for
 * shimpreempt.c's thread, which follows them without launching. Returns how
 * many.
 */
int shim_yield_higher(int g, struct nvt_watched *out, uint64_t now);
/* Shows state (enum nvt_yield_state) in slot g's yield unless its launches yield and say
 * their own (gated, bound, ...). */
void shim_yield_show(int g, uint32_t state, uint64_t now);
/* The launch this thread makes on slot g may borrow (NVT_YIELD_BORROW): m
 * becomes its masks with the lenders' TPCs. Returns 1 if it did. */
int shim_yield_borrow(int g, struct hw_masks *m);

/*
 * A launch on slot g of this task's segment (the launch path), or a graph
 * replay (its kernels' callbacks came at its upload): counted in the slot's
 * launch counters, which a priority agent and lower tasks read, and a
 * request begins if the task was idle.
 */
static inline void shim_count_launch(int g, int replay)
{
	/* (a replay's own callbacks release the bridge; a bridge's own kernels are not counted, so
	 * that the count says whether the program launched since an event's record: shimbridge.c,
	 * shimhostfn.c) */
	if (__builtin_expect(shim_bridge_on, 0) && !replay && shim_bridge_release(g))
		return;
	nvt_slot_count_launch(&shim.seg->gpu[g], shim_launch_stripe());
	if (__builtin_expect(__atomic_load_n(&shim_yield_idle[g], __ATOMIC_RELAXED), 0))
		shim_yield_launched(g);
}

#endif /* NVT_SHIMYIELD_H */
