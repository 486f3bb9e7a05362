/*
 * shimslot.h - a GPU slot as the launch path uses it (shimslot.c): its masks,
 * the partition behind them, the slot of a launching context, the launch
 * counters' stripe. Private to the shim; what is inline here runs on every
 * launch.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMSLOT_H
#define NVT_SHIMSLOT_H

#include "core/segment.h"
#include "core/topo.h"
#include "shimstate.h"

/* Publishes m as the masks of sm (the holder of sm->updating, or a
 * single-threaded caller). */
void shim_publish(struct slot_masks *sm, const struct hw_masks *m);
/* Records the partition behind the masks just published (same rule). */
void shim_remember(struct slot_masks *sm, const struct nvt_slot_view *view);
/* The last partition remembered. Returns 0, or -1 if none was. */
int shim_recall(const struct slot_masks *sm, struct nvt_slot_view *out);
/* The masks of view's partition into out, from prev. Returns 0, or -1 when
 * the partition cannot be used (out keeps prev's masks). */
int shim_compute(const struct hw_masks *prev, const struct nvt_slot_view *view, struct hw_masks *out);
/* Sets out's cluster fields for launches on the TPCs of enabled. */
void shim_cluster_masks(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			struct hw_masks *out);

/*
 * This thread's last context that has a slot, and that slot: a context's slot
 * never changes once found (a fork keeps every slot where it was), and a
 * thread usually launches in one context. A hit is one compare with a
 * thread-local word; the table of contexts is shared and was charged 30-50 ns
 * a launch by an rdtsc breakdown on an H100 host
 * (docs/bench/launch-2026-11-22-cost/).
 */
struct shim_last_ctx {
	const void *ctx;
	int slot;
};
extern __thread struct shim_last_ctx shim_last_ctx __attribute__((tls_model("initial-exec")));

/* The slot of ctx when it is not this thread's last context (slow path). */
int shim_slot_lookup(const void *ctx);

/* Returns the slot of the GPU that ctx launches on, or -1 if it has none
 * (the task's segment exists). */
static inline int shim_slot_of(const void *ctx)
{
	if (__builtin_expect(ctx && ctx == shim_last_ctx.ctx, 1))
		return shim_last_ctx.slot;
	return shim_slot_lookup(ctx);
}

/* The slot of CUDA device dev's GPU, or -1 (slow path: the driver asked once per ordinal, and
 * again for one without a slot after a writer gave a GPU one). */
int shim_device_slot(CUdevice dev);

/* ctx's id (cuCtxGetId: a context made again at the address of one that went has a new one),
 * or 0 where the driver has none. */
unsigned long long shim_ctx_id(void *ctx);

/* Whether what was made in context had (id: its id then, 0 where the driver gives none) must be
 * made again before it is used while ctx is current: a context at had's address of another id is
 * a new one (a primary context comes back at its address, and what was made in the old one must
 * never be used: docs/hardware-facts.md), and after *suspect (the GPU's primary context went
 * since: a reset, a last release) had may be the one that went, unless it is another context
 * still there (its id the same) or ids cannot tell. Clears *suspect where had is kept. */
int shim_ctx_gone(void *had, unsigned long long id, int *suspect, void *ctx);

/* After a cuDevicePrimaryCtxRelease of device dev that succeeded: the slot of dev's GPU if that
 * was its primary context's last release (the context, and what was made in it, is gone: the
 * driver says it is not active), else -1 (slow path). */
int shim_primary_gone(CUdevice dev);

/* The slot of a context's GPU, or -1 (as the launch path finds it). */
static inline int shim_slot_of_ctx(const void *ctx)
{
	return shim.seg ? shim_slot_of(ctx) : -1;
}

/* This thread's launch-counter stripe plus one (0: none yet); see nvtaskset.h. */
extern __thread unsigned shim_thread_stripe __attribute__((tls_model("initial-exec")));

static inline unsigned shim_launch_stripe(void)
{
	if (__builtin_expect(!shim_thread_stripe, 0))
		shim_thread_stripe = __atomic_fetch_add(&shim.launch_threads, 1, __ATOMIC_RELAXED) + 1;
	return shim_thread_stripe - 1;
}

#endif /* NVT_SHIMSLOT_H */
