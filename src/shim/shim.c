/*
 * shim.c - the library every partitioned CUDA process loads (LD_PRELOAD, or
 * the drop-in libcuda.so.1 wrapper). It registers the driver's launch
 * callback before the program can launch anything and rewrites each kernel's
 * TPC disable mask from the process's control segment.
 * Over 500 lines on purpose: the launch path and what it reads (the mask
 * buffers, the table of contexts) in one file, so that what runs on every
 * launch can be read, and checked lock-free, in one place (set-up, fork and
 * exit: shimsetup.c).
 *
 * Each GPU has its own slot in the segment, found by the GPU's UUID. The
 * launch path takes no lock, makes no system call and allocates nothing: it
 * finds the launching context in a small table, compares its slot's sequence
 * number with that of the masks it computed last and, when they match,
 * copies at most 36 bytes into the TMD. Only the first launch in a context
 * asks the driver which GPU it is for, and only the first launch after a
 * change translates the new partition.
 *
 * A mask is written only in the TMD layout that calibration verified on the
 * GPU (the topology's tmd_layout) and only into a TMD whose version byte is
 * that layout's; any other launch runs untouched, with one warning.
 *
 * The shim never ends or breaks its host: anything unexpected is reported
 * once on stderr and the program runs unpartitioned. But it fails closed
 * where it can: once a GPU's partition is known, a slot it cannot read (a
 * writer stopped inside it) or a fork in the middle of a change leaves
 * launches on the last partition known, never on all TPCs.
 *
 * It reads its environment with secure_getenv: in a setuid program the
 * environment belongs to the caller, so there the defaults apply.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"
#include "shimstate.h"
#include "core/gpusel.h"
#include "nvtaskset.h"
#include "seg/segfile.h"
#include "core/segment.h"
#include "core/tmd.h"
#include "core/topo.h"
#include "core/tpcset.h"

struct shim_state shim;

/* ---- Warnings ----------------------------------------------------------- */

/* Writes prefix and the message as one line on stderr; keeps errno. */
static void say(const char *prefix, const char *fmt, va_list ap)
{
	char line[512];
	int n, saved = errno;

	n = snprintf(line, sizeof(line), "%s", prefix);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nothing sensible to do */
	}
	errno = saved;
}

void shim_warn(const char *fmt, ...)
{
	va_list ap;

	if (shim.quiet)
		return;
	va_start(ap, fmt);
	say("nvtaskset: warning: ", fmt, ap);
	va_end(ap);
}

void shim_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("nvtaskset: ", fmt, ap);
	va_end(ap);
}

/* Returns 1 the first time it is called for kind, else 0. */
int shim_first_time(enum warn_kind kind)
{
	return !(__atomic_fetch_or(&shim.warned, (unsigned)kind, __ATOMIC_RELAXED) & (unsigned)kind);
}

/* ---- Mask buffers ------------------------------------------------------- */

static int read_current(const struct slot_masks *sm, struct hw_masks *out)
{
	for (int tries = 0; tries < 4; tries++) {
		unsigned i = __atomic_load_n(&sm->current, __ATOMIC_ACQUIRE);
		const struct mask_buffer *b = &sm->buf[i & 1];
		union mask_words copy;
		uint64_t seen;

		if (nvt_seq_read(&b->seq, (const uint64_t *)&b->masks, copy.w, MASK_WORDS, &seen) == 0) {
			*out = copy.m;
			return 0;
		}
	}
	return -1;
}

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

/* Slow path: slot g changed since its masks were computed. */
static void refresh(int g, struct hw_masks *m)
{
	struct nvt_gpu_slot *slot = &shim.seg->gpu[g];
	struct slot_masks *sm = &shim.masks[g];
	struct nvt_slot_view view;
	struct hw_masks next;
	int mine = !__atomic_exchange_n(&sm->updating, 1, __ATOMIC_ACQUIRE), ok;

	/* m holds the current masks (possibly stale): they are the fallback. */
	if (nvt_slot_read(slot, &view, 4)) {
		/* A writer is inside, or died there: keep launching on what we had. */
		if (mine)
			__atomic_store_n(&sm->updating, 0, __ATOMIC_RELEASE);
		return;
	}
	shim_smctrl_topology(g, &view.topo);
	ok = shim_compute(m, &view, &next) == 0;
	if (!ok) {
		nvt_slot_set_rejected(slot, view.seq);
		if (shim_first_time(WARN_REJECTED))
			shim_warn("pid %ld: refused a partition that enables no working TPC (or is "
			     "malformed); launches keep the previous partition",
			     (long)getpid());
	}
	if (mine) {
		shim_publish(sm, &next);
		if (ok) {
			shim_remember(sm, &view);
			/* Every launch from now on uses it: only now is it applied. */
			nvt_slot_set_applied(slot, view.seq);
		}
		__atomic_store_n(&sm->updating, 0, __ATOMIC_RELEASE);
	}
	*m = next;
}

/* Returns the masks for slot g's current partition. */
static void current_masks(int g, struct hw_masks *m)
{
	uint64_t seq = nvt_slot_seq(&shim.seg->gpu[g]);

	if (read_current(&shim.masks[g], m)) {
		/* Two updates raced this read: start from the partition the task
		 * started with (never from "untouched") and refresh. */
		*m = shim.masks[g].initial;
	}
	if (m->seg_seq == seq || (seq & 1))
		return; /* up to date, or a writer is inside: use what we have */
	refresh(g, m);
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

	if (!shim.ctx_get_device || !shim.device_get_uuid || shim.ctx_get_device(&dev) ||
	    shim.device_get_uuid(&uuid, dev)) {
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

/*
 * This thread's last context that has a slot, and that slot: a context's slot
 * never changes once found (a fork keeps every slot where it was), and a
 * thread usually launches in one context. A hit is one compare with a
 * thread-local word; the table below is shared and was charged 30-50 ns a
 * launch by an rdtsc breakdown on an H100 host (docs/bench/launch-2026-11-22-cost/).
 */
static __thread struct {
	const void *ctx;
	int slot;
} last_ctx __attribute__((tls_model("initial-exec")));

/* Returns the slot of the GPU that ctx launches on, or -1 if it has none. */
static int slot_of(const void *ctx)
{
	unsigned n;
	int g;

	if (__builtin_expect(ctx && ctx == last_ctx.ctx, 1))
		return last_ctx.slot;
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
			last_ctx.slot = e->slot;
			last_ctx.ctx = ctx;
			return e->slot;
		}
		if (e->gen == nvt_segment_gen(shim.seg))
			return -1;
		break; /* no slot then, but a GPU was given one since: look again */
	}
	g = lookup_slot(ctx, nvt_segment_gen(shim.seg));
	if (g >= 0) {
		last_ctx.slot = g;
		last_ctx.ctx = ctx;
	}
	return g;
}

/* ---- The launch callback ------------------------------------------------ */

/*
 * Timers for measuring the launch path (make B=build-timers
 * CPPFLAGS=-DNVT_SHIM_TIMERS; x86-64): each part's rdtsc cycles are summed
 * (without atomics: time one launching thread) and printed per launch, in
 * ns, at exit. Each part includes ~20 ns of rdtsc itself. Never in a build
 * that is shipped.
 */
#ifdef NVT_SHIM_TIMERS
#include <time.h>
#include <x86intrin.h>
enum { TM_SLOT, TM_COUNT, TM_MASKS, TM_GRAPH, TM_CLUSTER, TM_WRITE, TM_PARTS };
static const char *const timer_names[TM_PARTS] = {"find slot", "count", "masks", "graph check",
						  "cluster check", "write mask"};
static uint64_t timer_sum[TM_PARTS], timer_launches, timer_tsc0;
static struct timespec timer_t0;
#define TIMER_START() uint64_t timer_prev = __rdtsc()
#define TIMER_PART(p) do { uint64_t t_ = __rdtsc(); timer_sum[p] += t_ - timer_prev; timer_prev = t_; } while (0)
#define TIMER_LAUNCH() (timer_launches++)

__attribute__((constructor)) static void timers_start(void)
{
	clock_gettime(CLOCK_MONOTONIC, &timer_t0);
	timer_tsc0 = __rdtsc();
}

__attribute__((destructor)) static void timers_report(void)
{
	struct timespec t1;
	double ns, per_cycle;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (double)(t1.tv_sec - timer_t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - timer_t0.tv_nsec);
	per_cycle = ns / (double)(__rdtsc() - timer_tsc0);
	if (!timer_launches)
		return;
	shim_note("timers: %llu launches; ns per launch:", (unsigned long long)timer_launches);
	for (int p = 0; p < TM_PARTS; p++)
		shim_note("timers:   %-13s %.1f", timer_names[p],
			  (double)timer_sum[p] * per_cycle / (double)timer_launches);
}
#else
#define TIMER_START() do {} while (0)
#define TIMER_PART(p) do {} while (0)
#define TIMER_LAUNCH() do {} while (0)
#endif

/* This thread's launch-counter stripe plus one (0: none yet); see nvtaskset.h. */
static __thread unsigned thread_stripe __attribute__((tls_model("initial-exec")));

static unsigned launch_stripe(void)
{
	if (__builtin_expect(!thread_stripe, 0))
		thread_stripe = __atomic_fetch_add(&shim.launch_threads, 1, __ATOMIC_RELAXED) + 1;
	return thread_stripe - 1;
}

/*
 * A launch whose clusters (cluster CTAs, one GPC each) the partition cannot
 * hold would never run: rather than hang, run it on the whole GPCs the
 * partition touches, or, if even those are too small, on every TPC.
 */
static void place_cluster_launch(const struct hw_masks *m, void *tmd, unsigned cluster)
{
	int whole_gpcs = cluster <= m->gpc_room;

	if (whole_gpcs)
		nvt_tmd_write(m->layout, tmd, m->gpc_disable);
	if (shim_first_time(WARN_CLUSTER))
		shim_warn("pid %ld: a kernel launched thread-block clusters of %u blocks, which must share "
		     "one GPC, but this task's partition has at most %u SMs in any GPC; such "
		     "kernels run on %s instead of waiting forever. Give the task whole GPCs (-g) "
		     "to keep them inside its partition",
		     (long)getpid(), cluster, m->cluster_room,
		     whole_gpcs ? "the whole GPCs its partition touches" : "every TPC of the GPU");
}

void shim_count_launch(int slot)
{
	if (slot >= 0 && slot < NVT_MAX_GPUS && shim.seg) {
		nvt_slot_count_launch(&shim.seg->gpu[slot], launch_stripe());
		if (__builtin_expect(shim_yield_tracking, 0))
			shim_yield_launched(slot);
	}
}

int shim_slot_of_ctx(const void *ctx)
{
	return shim.seg ? slot_of(ctx) : -1;
}

void shim_on_launch(void *user, int domain, int cbid, const void *params)
{
	const uint32_t *size = params;
	void *tmd;
	struct hw_masks m;
	unsigned cluster;
	int g;

	(void)user;
	if (domain != NVT_CB_DOMAIN_LAUNCH || cbid != NVT_CB_ID_LAUNCH) {
		if (domain == NVT_CB_DOMAIN_API) {
			shim_yield_api(cbid, params);
			shim_graph_api(cbid, params);
			shim_sms_api(cbid, params);
		}
		if (domain == NVT_CB_DOMAIN_API || domain == NVT_CB_DOMAIN_RUNTIME)
			shim_smctrl_api(domain, cbid, params);
		return;
	}
	if (!params || *size < NVT_CB_PARAMS_MIN_SIZE ||
	    !(tmd = ((void *const *)params)[NVT_CB_PARAMS_TMD_WORD])) {
		if (shim_first_time(WARN_PARAMS))
			shim_warn("unexpected launch callback parameters (size %u); launches run "
			     "unpartitioned",
			     params ? *size : 0);
		return;
	}
	TIMER_START();
	g = slot_of(((void *const *)params)[NVT_CB_PARAMS_CTX_WORD]);
	TIMER_PART(TM_SLOT);
	if (g < 0) {
		if (shim_graph_busy())
			shim_graph_kernel(-1, 0);
		if (__builtin_expect(shim_smctrl_on(), 0))
			shim_smctrl_launch(-1, NULL, tmd, NULL); /* consumes a next mask; warns */
		return;
	}
	TIMER_LAUNCH();
	nvt_slot_count_launch(&shim.seg->gpu[g], launch_stripe());
	if (__builtin_expect(shim_yield_tracking, 0))
		shim_yield_launched(g);
	TIMER_PART(TM_COUNT);
	current_masks(g, &m);
	if (__builtin_expect(shim_yield_tracking, 0))
		shim_yield_borrow(g, &m);
	TIMER_PART(TM_MASKS);
	if (shim_graph_busy())
		shim_graph_kernel(g, m.seg_seq);
	TIMER_PART(TM_GRAPH);
	if (__builtin_expect(shim_smctrl_on(), 0))
		shim_smctrl_launch(g, &m, tmd, shim_graph_smctrl_mask());
	if (m.state != NVT_SLOT_SET)
		return;
	if (m.layout == NVT_TMD_NONE) {
		if (shim_first_time(WARN_TMD_UNVERIFIED))
			shim_warn("no TMD layout was verified by calibration on this GPU, so launches run "
			     "unpartitioned (nvtaskset --calibrate tells why)");
		return;
	}
	/* A cooperative grid these TPCs cannot hold would wait forever: every TPC runs it. */
	if (__builtin_expect(shim_coop.blocks != 0, 0) && shim_sms_coop_spills(&m))
		return;
	if (nvt_tmd_is(m.layout, tmd) && (cluster = nvt_tmd_cluster_size(m.layout, tmd)) > m.cluster_room) {
		place_cluster_launch(&m, tmd, cluster);
		return;
	}
	TIMER_PART(TM_CLUSTER);
	if (nvt_tmd_write(m.layout, tmd, m.disable) && shim_first_time(WARN_TMD_MISMATCH))
		shim_warn("a launch's TMD has version 0x%02x at byte %u, not the %s layout that "
		     "calibration verified on this GPU; such launches run unpartitioned",
		     ((const uint8_t *)tmd)[nvt_tmd_version_offset(m.layout)],
		     nvt_tmd_version_offset(m.layout), nvt_tmd_layout_name(m.layout));
	TIMER_PART(TM_WRITE);
}
