/*
 * shimbridge.h - the bridge between a high time-sliced task's synchronised
 * steps (shimbridge.c). Called by shimyield.c, which follows the task's
 * waits and launches.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMBRIDGE_H
#define NVT_SHIMBRIDGE_H

#include <stdint.h>

#include "gpu/cuda_driver.h"

/* At set-up of a task with priority prio and yield words yield: whether it bridges. */
void shim_bridge_setup(uint8_t prio, uint32_t yield);
/* A thread begins to wait (a stream's or an event's synchronisation) in context ctx on GPU
 * slot g: the last bridge may end; bridge this wait if the task still is high and time-sliced
 * (still_bridged: -p may have changed that) and its waits are followed soon. */
void shim_bridge_wait(int g, void *ctx, int still_bridged);
/* As shim_bridge_wait, the bridge's kernel ending cap_us after its start at most (a tentative
 * polled wait's, core/bridge.h). */
void shim_bridge_wait_capped(int g, void *ctx, int still_bridged, uint64_t cap_us);
/* This thread's wait on slot g in context ctx, bridged by shim_bridge_wait_capped and neither
 * returned nor released, becomes a full one: a second bridge (the next seq, the same linger,
 * hold and replay, the whole cap) queued behind the first on the bridge's stream, which then
 * ends without its margin once released, as any bridge with another behind it. No wait is
 * begun, learnt or counted. */
void shim_bridge_extend(int g, void *ctx);
/* As shim_bridge_wait, for a context synchronisation (cuCtxSynchronize) in context ctx on slot
 * g: its bridge is queued by a thread of the shim's own just after the wait began (it waits for
 * the work queued before it began only), never held. Releases slot g's last bridge once the
 * next one is queued. */
void shim_bridge_ctx_wait(int g, void *ctx, int still_bridged);
/* That wait returned (slot g, or -1: not known). */
void shim_bridge_returned(int g);
/* The first launch on slot g after a wait (the launch path's slow path, lock-free): what the
 * waits teach. */
void shim_bridge_launched(int g);
/* The process bridges its waits (set-up): the launch path then releases at every launch. */
extern int shim_bridge_on;
/* A launch on slot g (the launch path: one store), or a wait's start: the last bridge may end,
 * once what is queued now is queued. Returns 1 where the launch is a bridge's own kernel (not
 * the program's: it releases nothing, and counts as none of the task's launches), else 0. */
int shim_bridge_release(int g);
/* A graph replay on slot g begins (enter) or ends (queued: it succeeded): while one is being
 * queued the released bridge goes on (it may be the step's bulk, after small kernels); once
 * it ends, the bridge may end. */
void shim_bridge_graph_launch(int g, int enter, int queued);
/* As shim_bridge_release, and the bridge ends without waiting for its step's replay: a wait's
 * start, a copy, a context synchronisation (what comes next must not wait behind it). */
void shim_bridge_release_now(int g);
/* A context synchronisation begins: every bridge may end (it waits for them too). */
void shim_bridge_release_all(void);
/* A primary context's reset or release begins: every bridge released, and the shim's thread out
 * of any context it made current to launch one. */
void shim_bridge_slots_going(void);
/* Context ctx is destroyed: the bridges made in it are made again in the next. */
void shim_bridge_context_gone(void *ctx);
/* GPU slot g's primary context is gone (its reset, its last release): its bridge ends, and is
 * made again at the next wait unless that wait is in the context it was made in, of the same id
 * (a created context's). */
void shim_bridge_slot_gone(int g);
/* A copy to the host on a stream (entry of cuMemcpyDtoHAsync_v2, cuMemcpyAsync, or their _ptsz
 * forms: ptsz) in context ctx on slot g, arguments a, by a task that still bridges
 * (still_bridged: -p may have changed that): done by a kernel where core/bridge.h says so, a's
 * bytes then set to 0. */
void shim_bridge_copy(int g, void *ctx, NVT_MEMCPY_ASYNC_ARGS *a, int ptsz, int still_bridged);
/* The task queued a host function (shimhostfn.c): from now on its copies are the driver's
 * (core/bridge.h, nvt_bridge_copy_by_kernel). */
void shim_bridge_copies_off(void);
/* Held steps are chained from the start (core/bridge.h, NVTASKSET_BRIDGE_REARM=1): the set-up
 * follows the launch calls for shim_bridge_launch_done. */
int shim_bridge_chains(void);
/* 1, once (to the first thread to ask after it happened): enough held steps were seen that a
 * chain would have shortened (core/bridge.h): the launch calls are to be followed from now on. */
int shim_bridge_chains_due(void);
/* They could not be followed (no thread to enable them): held steps are not chained. */
void shim_bridge_chains_not_followed(void);
/* 1 if a launch call of this thread may matter to chains: its last wait queued a bridge, or its
 * last launch released one. */
int shim_bridge_launch_wanted(void);
/* A kernel launch call of this thread on slot g, in context ctx, returned: behind a held step's
 * launch, a new held bridge where one is due (core/bridge.h, "Held steps chained"); another
 * thread's, the bridge chained meanwhile released too. */
void shim_bridge_launch_done(int g, void *ctx);
/* 1 while this thread launches a bridge (its launches are not the program's). */
int shim_bridge_launching(void);
/* At exit: what the waits did (NVTASKSET_BRIDGE_DEBUG). */
void shim_bridge_report(void);
/* In a forked child. */
void shim_bridge_after_fork(void);

#endif /* NVT_SHIMBRIDGE_H */
