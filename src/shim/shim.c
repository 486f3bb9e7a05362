/*
 * shim.c - the hub of the library every partitioned CUDA process loads
 * (LD_PRELOAD, or the drop-in libcuda.so.1 wrapper): the driver's callback,
 * which set-up (shimsetup.c) registers before the program can launch
 * anything. It rewrites each kernel's TPC disable mask from the process's
 * control segment, and hands the driver-API callbacks to the features that
 * follow them (yielding, graphs, the SM count, libsmctrl's masks). It is the
 * top of the shim's layers: it calls the features and the slot's helpers
 * (shimslot.c) below it, and none of them calls it (shimstate.h).
 *
 * Each GPU has its own slot in the segment, found by the GPU's UUID. The
 * launch path takes no lock, makes no system call and allocates nothing: it
 * finds the launching context's slot (shimslot.h: one compare with a
 * thread-local word), compares its slot's sequence number with that of the
 * masks it computed last and, when they match, copies at most 36 bytes into
 * the TMD. Only the first launch in a context asks the driver which GPU it is
 * for, and only the first launch after a change translates the new partition.
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
#include <stdint.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"
#include "nvtaskset.h"
#include "core/segment.h"
#include "core/tmd.h"
#include "shim.h"
#include "shimgraph.h"
#include "shimhostfn.h"
#include "shimmem.h"
#include "shimslot.h"
#include "shimsmctrl.h"
#include "shimsmcount.h"
#include "shimstate.h"
#include "shimyield.h"

/* ---- The masks of a launch -------------------------------------------- */

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

/* ---- The launch callback ------------------------------------------------ */

/*
 * Timers for measuring the launch path (make B=build-timers
 * CPPFLAGS=-DNVT_SHIM_TIMERS; x86-64): each part's rdtsc cycles are summed
 * (without atomics: time one launching thread) and printed per launch, in
 * ns, at exit. Each part includes ~20 ns of rdtsc itself. Never in a build
 * that is shipped.
 */
#ifdef NVT_SHIM_TIMERS
#include <x86intrin.h>
#include "os/clock.h"
enum { TM_SLOT, TM_COUNT, TM_MASKS, TM_GRAPH, TM_CLUSTER, TM_WRITE, TM_PARTS };
static const char *const timer_names[TM_PARTS] = {"find slot", "count", "masks", "graph check",
						  "cluster check", "write mask"};
static uint64_t timer_sum[TM_PARTS], timer_launches, timer_tsc0, timer_ns0;
#define TIMER_START() uint64_t timer_prev = __rdtsc()
#define TIMER_PART(p) do { uint64_t t_ = __rdtsc(); timer_sum[p] += t_ - timer_prev; timer_prev = t_; } while (0)
#define TIMER_LAUNCH() (timer_launches++)

__attribute__((constructor)) static void timers_start(void)
{
	timer_ns0 = nvt_clock_ns();
	timer_tsc0 = __rdtsc();
}

__attribute__((destructor)) static void timers_report(void)
{
	double ns = (double)(nvt_clock_ns() - timer_ns0);
	double per_cycle = ns / (double)(__rdtsc() - timer_tsc0);

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
			if (shim_hostfn_follows(cbid))
				shim_hostfn_api(cbid, params);
			shim_graph_api(cbid, params);
			shim_smcount_api(cbid, params);
			if (shim_mem_follows(cbid))
				shim_mem_api(cbid, params);
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
	g = shim_slot_of(((void *const *)params)[NVT_CB_PARAMS_CTX_WORD]);
	TIMER_PART(TM_SLOT);
	if (g < 0) {
		if (shim_graph_busy())
			shim_graph_kernel(-1, 0);
		if (__builtin_expect(shim_smctrl_on(), 0))
			shim_smctrl_launch(-1, NULL, tmd, NULL); /* consumes a next mask; warns */
		return;
	}
	TIMER_LAUNCH();
	shim_count_launch(g, 0);
	TIMER_PART(TM_COUNT);
	current_masks(g, &m);
	/* Only a task that follows its launch calls may borrow (a high task never does). */
	if (__builtin_expect(shim_yield_following, 0))
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
	if (__builtin_expect(shim_coop.blocks != 0, 0) && shim_smcount_coop_spills(&m))
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
