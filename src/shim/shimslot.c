/*
 * shimslot.c - a GPU slot as the launch path uses it: the masks it computed
 * for the slot's partition (two buffers under a sequence number, so that
 * launches read them without a lock), the partition behind them (which a
 * forked child falls back on), and the slot of a launching context (a table
 * of the contexts seen, and each thread's last one). Below the features
 * (yielding, libsmctrl's masks, the SM count) and the launch callback, which
 * all call it (shimstate.h's layers).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"
#include "core/gpusel.h"
#include "core/segment.h"
#include "core/topo.h"
#include "core/tpcset.h"
#include "shimdriver.h"
#include "shimstate.h"
#include "shimslot.h"

__thread struct shim_last_ctx shim_last_ctx __attribute__((tls_model("initial-exec")));
__thread unsigned shim_thread_stripe __attribute__((tls_model("initial-exec")));

/* ---- Mask buffers ------------------------------------------------------- */

/* Only the holder of sm->updating (or a single-threaded caller) may publish. */
void shim_publish(struct slot_masks *sm, const struct hw_masks *m)
{
	unsigned next = (__atomic_load_n(&sm->current, __ATOMIC_RELAXED) + 1) & 1;
	struct mask_buffer *b = &sm->buf[next];
	union mask_words src = {.m = *m};

	nvt_seq_write(&b->seq, (uint64_t *)&b->masks, src.w, MASK_WORDS);
	__atomic_store_n(&sm->current, next, __ATOMIC_RELEASE);
}

/* Records the partition behind the masks just published (same rule as publish). */
void shim_remember(struct slot_masks *sm, const struct nvt_slot_view *view)
{
	unsigned next = (__atomic_load_n(&sm->known_current, __ATOMIC_RELAXED) + 1) & 1;
	struct view_buffer *b = &sm->known[next];
	union view_words src = {.v = *view};

	nvt_seq_write(&b->seq, b->view.w, src.w, VIEW_WORDS);
	__atomic_store_n(&sm->known_current, next, __ATOMIC_RELEASE);
}

/* In a forked child: the last partition remembered. A fork in the middle of
 * shim_remember() leaves that buffer odd; the other one holds the one before.
 * Returns 0, or -1 if none was ever remembered. */
int shim_recall(const struct slot_masks *sm, struct nvt_slot_view *out)
{
	unsigned current = __atomic_load_n(&sm->known_current, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < 2; i++) {
		const struct view_buffer *b = &sm->known[(current + i) & 1];
		union view_words copy;
		uint64_t seen;
		if (nvt_seq_read(&b->seq, b->view.w, copy.w, VIEW_WORDS, &seen) == 0 && seen) {
			*out = copy.v;
			return 0;
		}
	}
	return -1;
}

/*
 * Derives the masks for a slot snapshot. A partition that enables no working
 * TPC, or comes with a malformed topology, keeps the previous masks: such a
 * launch would never complete (docs/hardware-facts.md, section 5).
 */
int shim_compute(const struct hw_masks *prev, const struct nvt_slot_view *view,
		   struct hw_masks *out)
{
	uint32_t disable[NVT_TMD_MASK_WORDS];

	*out = *prev;
	out->seg_seq = view->seq;
	if (view->state == NVT_SLOT_UNSET) {
		out->state = NVT_SLOT_UNSET;
		return 0;
	}
	if (view->state != NVT_SLOT_SET || nvt_topo_validate(&view->topo))
		return -1;
	if (!nvt_topo_disable(&view->topo, &view->tpcs, disable))
		return -1;
	out->state = NVT_SLOT_SET;
	out->layout = view->topo.tmd_layout;
	memcpy(out->disable, disable, sizeof(disable));
	shim_cluster_masks(&view->topo, &view->tpcs, out);
	return 0;
}

/*
 * A cluster must fit in one GPC: launches whose clusters the TPCs enabled
 * cannot hold would wait for SMs forever (seen on an H100: cuBLAS's clusters
 * of 4 on 1 or 2 lone TPCs). Prepares where they may run instead: the whole
 * GPCs enabled touches. Allocation-free (libsmctrl's masks call it on the
 * launch path).
 */
void shim_cluster_masks(const struct nvt_topology *topo, const struct nvt_tpcset *enabled,
			struct hw_masks *out)
{
	struct nvt_tpcset gpcs;

	out->cluster_room = nvt_topo_cluster_room(topo, enabled, &gpcs);
	if (!out->cluster_room)
		out->cluster_room = UINT32_MAX;
	out->gpc_room = nvt_topo_cluster_room(topo, &gpcs, NULL);
	if (!nvt_topo_disable(topo, &gpcs, out->gpc_disable))
		out->gpc_room = 0;
}

/* ---- Which GPU a launch is for ------------------------------------------ */

/*
 * Slow path, once per context (and again for a context without a slot after
 * a writer gave a GPU a new slot): asks the driver for the context's device
 * and UUID, and finds the slot that holds it. The callback runs on the
 * launching thread with its context current, where cuCtxGetDevice answers
 * for that context (measured on two H200s, driver 580: docs/hardware-facts.md).
 */
static int lookup_slot(const void *ctx, uint64_t gen)
{
	CUdevice dev = -1;
	CUuuid uuid;
	int g = -1;
	unsigned i;

	if (!shim_cu.ctx_device || !shim_cu.device_uuid || shim_cu.ctx_device(&dev) ||
	    shim_cu.device_uuid(&uuid, dev)) {
		if (shim_first_time(WARN_NO_DEVICE))
			shim_warn("cannot ask the CUDA driver which GPU a launch is for; launches whose "
			     "GPU is unknown run unpartitioned");
		return -1;
	}
	g = nvt_segment_find_gpu(shim.seg, (const uint8_t *)uuid.bytes);
	/* Slots fill from the first: with none in use the task is simply not
	 * partitioned (the wrapper without nvtaskset), and nothing is amiss. */
	if (g < 0 && nvt_segment_free_slot(shim.seg) != 0 && dev >= 0 && dev < 64 &&
	    !(__atomic_fetch_or(&shim.warned_gpus, 1ull << dev, __ATOMIC_RELAXED) & (1ull << dev))) {
		char text[NVT_UUID_TEXT_MAX];
		nvt_uuid_format((const uint8_t *)uuid.bytes, text);
		shim_warn("pid %ld: no partition for GPU %s (CUDA device %d): its launches run "
		     "unpartitioned",
		     (long)getpid(), text, dev);
	}
	i = __atomic_fetch_add(&shim.n_ctx, 0, __ATOMIC_RELAXED);
	if (!ctx) {
		/* Not seen with the real driver: answer, but remember nothing. */
	} else if (i < MAX_CONTEXTS) {
		/* Claim an entry; another thread may add the same context: harmless. */
		i = __atomic_fetch_add(&shim.n_ctx, 1, __ATOMIC_ACQ_REL);
		if (i < MAX_CONTEXTS) {
			shim.ctx[i].slot = g;
			shim.ctx[i].gen = gen;
			__atomic_store_n(&shim.ctx[i].ctx, ctx, __ATOMIC_RELEASE);
		}
	} else if (shim_first_time(WARN_CONTEXTS)) {
		shim_warn("more than %d CUDA contexts: later ones find their GPU slowly", MAX_CONTEXTS);
	}
	return g;
}

/* The slot of ctx when it is not this thread's last context (shim_slot_of). */
int shim_slot_lookup(const void *ctx)
{
	unsigned n;
	int g;

	/* An entry being added reads NULL until published: never match it. */
	if (!ctx)
		return lookup_slot(NULL, nvt_segment_gen(shim.seg));

	n = __atomic_load_n(&shim.n_ctx, __ATOMIC_ACQUIRE);

	if (n > MAX_CONTEXTS)
		n = MAX_CONTEXTS;
	/* Newest first: a context looked up again supersedes its older entry. */
	for (unsigned i = n; i-- > 0;) {
		const struct ctx_entry *e = &shim.ctx[i];
		if (__atomic_load_n(&e->ctx, __ATOMIC_ACQUIRE) != ctx)
			continue;
		/* The generation only for a context without a slot: reading the
		 * segment's header on every launch cost ~0.2 us on an H100 host
		 * (docs/bench/launch-2026-11-22-cost/). */
		if (e->slot >= 0) {
			shim_last_ctx.slot = e->slot;
			shim_last_ctx.ctx = ctx;
			return e->slot;
		}
		if (e->gen == nvt_segment_gen(shim.seg))
			return -1;
		break; /* no slot then, but a GPU was given one since: look again */
	}
	g = lookup_slot(ctx, nvt_segment_gen(shim.seg));
	if (g >= 0) {
		shim_last_ctx.slot = g;
		shim_last_ctx.ctx = ctx;
	}
	return g;
}

/* slot + 1 of each CUDA ordinal's GPU (0: not known), and the segment's generation + 1 when one
 * had none (a writer may give its GPU a slot since). */
#define DEV_ORDINALS 64
static int dev_slot[DEV_ORDINALS];
static uint64_t dev_none[DEV_ORDINALS];

int shim_device_slot(CUdevice dev)
{
	uint64_t gen;
	CUuuid uuid;
	int g;

	if (!shim.seg || dev < 0)
		return -1;
	gen = nvt_segment_gen(shim.seg);
	if (dev < DEV_ORDINALS) {
		if ((g = __atomic_load_n(&dev_slot[dev], __ATOMIC_ACQUIRE)) > 0)
			return g - 1;
		if (__atomic_load_n(&dev_none[dev], __ATOMIC_ACQUIRE) == gen + 1)
			return -1;
	}
	g = !shim_cu.device_uuid || shim_cu.device_uuid(&uuid, dev)
		    ? -1
		    : nvt_segment_find_gpu(shim.seg, (const uint8_t *)uuid.bytes);
	if (dev < DEV_ORDINALS) {
		if (g >= 0)
			__atomic_store_n(&dev_slot[dev], g + 1, __ATOMIC_RELEASE);
		else
			__atomic_store_n(&dev_none[dev], gen + 1, __ATOMIC_RELEASE);
	}
	return g;
}

unsigned long long shim_ctx_id(void *ctx)
{
	unsigned long long id = 0;

	return shim_cu.ctx_id && shim_cu.ctx_id(ctx, &id) == 0 ? id : 0;
}

int shim_ctx_gone(void *had, unsigned long long id, int *suspect, void *ctx)
{
	if (*suspect && had != ctx && id && shim_ctx_id(had) == id)
		*suspect = 0; /* a context of the task's own, still there */
	if (*suspect && (had != ctx || !id))
		return 1;
	if (had == ctx && id && shim_ctx_id(ctx) != id)
		return 1;
	if (had == ctx)
		*suspect = 0;
	return 0;
}

int shim_primary_gone(CUdevice dev)
{
	unsigned flags = 0;
	int active = 1;

	if (!shim.seg || !shim_cu.primary_state || shim_cu.primary_state(dev, &flags, &active) || active)
		return -1;
	return shim_device_slot(dev);
}
