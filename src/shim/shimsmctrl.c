/*
 * shimsmctrl.c - libsmctrl's programming interface (paper 002), inside the
 * shim: a program's own TPC masks (global, per stream, next launch) applied
 * within the partition nvtaskset gives the task, as sched_setaffinity()
 * applies within a cpuset. include/libsmctrl.h states the semantics; the
 * names a program calls are libsmctrl.so's, which forwards here
 * (src/shim/libsmctrl.c).
 *
 * Masks name logical TPCs (TPC t = SMs 2t and 2t+1, as %smid / 2 and every
 * NVIDIA tool number them): the shim translates them through the GPU's
 * calibrated map to the TMD's mask bits. A set bit disables a TPC; a mask of
 * 0 is "no mask" at that level; a 64-bit mask other than 0 disables TPCs 64
 * and up, an _ext mask TPCs 128 and up (libsmctrl's rule). The launch uses
 * the next mask if set, else its stream's, else the global one; what it
 * enables is ANDed with the partition. A mask that leaves no TPC of the
 * partition enabled is ignored for that launch (the partition applies, one
 * warning): never a launch on no TPC, which hangs (docs/hardware-facts.md, 5).
 *
 * Which stream a launch is for: the shim follows the driver API's and the
 * runtime API's kernel-launch calls through the callback table's API domains
 * (6 and 7). Their entry callback runs on the launching thread before the
 * driver builds the launch's TMD, so it notes the stream in a thread-local
 * word that the launch callback reads; the return callback clears it. This
 * reads only the calls' documented arguments (cuda.h, cuda_runtime_api.h),
 * never CUstream's private layout. Launches that no followed call brackets
 * (CUDA-internal kernels, graph uploads) have no stream: the global mask
 * applies. A graph captured from a stream keeps that stream's mask at the
 * end of its capture for each of its kernels (shimgraph.c asks here).
 *
 * The callbacks are enabled at the program's first libsmctrl call: programs
 * that never call it pay one load per launch. Setters take a mutex; the
 * launch path takes none, makes no system call and allocates nothing.
 *
 * Over 500 lines on purpose: the stream-mask table, its lock-free readers on
 * the launch path and its setters share file-static state (the exports are
 * in shimsmctrlapi.c, the GPUs' maps for programs nvtaskset did not start in
 * shimsmctrlmaps.c).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"
#include "nvtaskset.h"
#include "core/segment.h"
#include "core/tmd.h"
#include "core/gpusel.h"
#include "core/topo.h"
#include "shimslot.h"
#include "shimsmctrl.h"
#include "shimsmctrlmaps.h"
#include "shimstate.h"

/* The stream's place in the calls' argument blocks (cuda.h, CUDA 13.0). */
_Static_assert(offsetof(NVT_LAUNCH_KERNEL_ARGS, stream) == 40, "cuLaunchKernel_params");
_Static_assert(offsetof(NVT_LAUNCH_CONFIG, stream) == 32, "CUlaunchConfig");
_Static_assert(offsetof(NVT_RT_LAUNCH_KERNEL_ARGS, stream) == 48, "cudaLaunchKernel_v7000_params");
_Static_assert(offsetof(NVT_RT_LAUNCH_CONFIG, stream) == 32, "cudaLaunchConfig_t");

#define STREAMS 1024 /* streams with a mask at once; a power of two */
#define GRAPHS 256   /* captured graphs with a mask at once */
#define KEY_LEGACY ((const void *)NVT_CU_STREAM_LEGACY) /* and NULL */
#define KEY_PER_THREAD ((const void *)NVT_CU_STREAM_PER_THREAD)
#define MASK_WORDS_LOGICAL 3             /* disable bits 0-63, 64-127, and "set" */

/* A mask as launches read it: w[0..1] disable TPCs 0-127, w[2] != 0: set. */
struct mask_slot {
	uint64_t seq;
	uint64_t w[MASK_WORDS_LOGICAL];
};

struct stream_mask {
	void *stream; /* key (first): NULL free, SHIM_TABLE_GONE destroyed; published last */
	struct mask_slot mask;
};

_Static_assert(offsetof(struct stream_mask, stream) == 0, "a table entry starts with its key");

struct graph_mask {
	const void *graph; /* NULL: free */
	uint64_t w[2];
};

/* A GPU slot's map, for the launch path: filled once, then read only. */
struct slot_map {
	int ready; /* 0 empty, 1 being filled, 2 ready (release) */
	uint32_t n_tpcs;
	uint32_t layout;
	uint8_t hw_bit[128];
	uint32_t all_disable[NVT_TMD_MASK_WORDS]; /* every working TPC on */
	uint32_t beyond128[4];                     /* mask bits of TPCs 128 and up */
	struct nvt_topology topo;                  /* GPCs, for cluster launches */
};

static struct {
	int on; /* a libsmctrl call was made: launches look at the masks */
	int debug;
	pthread_mutex_t lock; /* setters */
	struct mask_slot global;
	struct stream_mask streams[STREAMS];
	struct graph_mask graphs[GRAPHS];
	struct slot_map maps[NVT_MAX_GPUS];
	/* NVTASKSET_SMCTRL_DEBUG: launches seen, and those with a stream known. */
	uint64_t launches, paired[2];
	nvt_cb_enable_fn enable;
	uint32_t handle;
	int followed[2]; /* the driver's and the runtime's launch calls are followed */
} sm = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The stream of the launch this thread is making, from the API callback. */
static __thread struct {
	const void *key;
	int domain; /* 0: none; NVT_CB_DOMAIN_API or NVT_CB_DOMAIN_RUNTIME */
} launching __attribute__((tls_model("initial-exec")));

/* The next-launch mask of this thread (w[2] != 0: set). */
static __thread uint64_t next_mask[3] __attribute__((tls_model("initial-exec")));

/* ---- Masks ---------------------------------------------------------------- */

static const void *stream_key(const void *stream)
{
	return stream ? stream : KEY_LEGACY;
}

/* Lock-free: the entry of key, or NULL. */
static struct stream_mask *find_stream(const void *key)
{
	return shim_table_find(sm.streams, STREAMS, sizeof(sm.streams[0]), key);
}

/* Under sm.lock: key's entry, claimed if new; NULL when the table is full. */
static struct stream_mask *claim_stream(const void *key)
{
	struct stream_mask *s = find_stream(key);

	return s ? s : shim_table_claim(sm.streams, STREAMS, sizeof(sm.streams[0]), key, (void *)key);
}

static int read_mask(const struct mask_slot *slot, uint64_t out[3])
{
	uint64_t seen;

	for (int tries = 0; tries < 4; tries++)
		if (nvt_seq_read(&slot->seq, slot->w, out, MASK_WORDS_LOGICAL, &seen) == 0)
			return 0;
	return -1; /* a setter kept writing: no mask this launch */
}

/* ---- GPU maps --------------------------------------------------------------------- */

/* Records slot g's calibrated map for the launch path (once: a slot's GPU
 * never changes). */
void shim_smctrl_topology(int g, const struct nvt_topology *topo)
{
	struct slot_map *map;
	struct nvt_tpcset all;
	int empty = 0;

	if (g < 0 || g >= NVT_MAX_GPUS || !(topo->flags & NVT_TOPO_CALIBRATED) ||
	    topo->tmd_layout == NVT_TMD_NONE || nvt_topo_validate(topo))
		return;
	map = &sm.maps[g];
	if (!__atomic_compare_exchange_n(&map->ready, &empty, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	map->topo = *topo;
	map->n_tpcs = topo->n_tpcs;
	map->layout = topo->tmd_layout;
	for (unsigned t = 0; t < 128; t++)
		map->hw_bit[t] = t < topo->n_tpcs ? topo->hw_bit[t] : 0;
	for (unsigned t = 128; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++) {
		uint8_t b = topo->hw_bit[t];
		if (b < NVT_HW_BITS)
			map->beyond128[b / 32] |= 1u << (b % 32);
	}
	nvt_topo_all(topo, &all);
	nvt_topo_disable(topo, &all, map->all_disable);
	__atomic_store_n(&map->ready, 2, __ATOMIC_RELEASE);
}

/* ---- Following launch calls ---------------------------------------------------- */

/* The calls followed: launches of the driver API (domain 6) and the runtime API
 * (domain 7), captures' ends, graphs' and streams' destruction. */
static const int driver_ids[] = {
	NVT_CBID_cuLaunchKernel, NVT_CBID_cuLaunchKernel_ptsz, NVT_CBID_cuLaunchCooperativeKernel,
	NVT_CBID_cuLaunchCooperativeKernel_ptsz, NVT_CBID_cuLaunchKernelEx, NVT_CBID_cuLaunchKernelEx_ptsz,
	NVT_CBID_cuStreamEndCapture, NVT_CBID_cuStreamEndCapture_ptsz, NVT_CBID_cuGraphDestroy, NVT_CBID_cuStreamDestroy,
	NVT_CBID_cuStreamDestroy_v2,
};
static const int runtime_ids[] = {
	NVT_CBID_cudaLaunchKernel, NVT_CBID_cudaLaunchKernel_ptsz, NVT_CBID_cudaLaunchCooperativeKernel,
	NVT_CBID_cudaLaunchKernelExC, NVT_CBID_cudaLaunchKernelExC_ptsz, NVT_CBID_cudaStreamEndCapture,
	NVT_CBID_cudaStreamEndCapture_ptsz, NVT_CBID_cudaGraphDestroy,
};

/* The stream key of a launch call's arguments; 0 if cbid is no launch. */
static int launch_stream(int domain, int cbid, const void *args, const void **key)
{
	const void *stream;
	int per_thread = 0;

	switch (domain == NVT_CB_DOMAIN_API ? cbid : -cbid) {
	case NVT_CBID_cuLaunchKernel_ptsz:
	case NVT_CBID_cuLaunchCooperativeKernel_ptsz:
		per_thread = 1;
		/* fall through */
	case NVT_CBID_cuLaunchKernel:
	case NVT_CBID_cuLaunchCooperativeKernel:
		stream = ((const NVT_LAUNCH_KERNEL_ARGS *)args)->stream;
		break;
	case NVT_CBID_cuLaunchKernelEx_ptsz:
		per_thread = 1;
		/* fall through */
	case NVT_CBID_cuLaunchKernelEx: {
		const NVT_LAUNCH_CONFIG *c = ((const NVT_LAUNCH_KERNEL_EX_ARGS *)args)->config;
		stream = c ? c->stream : NULL;
		break;
	}
	case -NVT_CBID_cudaLaunchKernel_ptsz:
		per_thread = 1;
		/* fall through */
	case -NVT_CBID_cudaLaunchKernel:
	case -NVT_CBID_cudaLaunchCooperativeKernel:
		stream = ((const NVT_RT_LAUNCH_KERNEL_ARGS *)args)->stream;
		break;
	case -NVT_CBID_cudaLaunchKernelExC_ptsz:
		per_thread = 1;
		/* fall through */
	case -NVT_CBID_cudaLaunchKernelExC: {
		const NVT_RT_LAUNCH_CONFIG *c = ((const NVT_RT_LAUNCH_KERNEL_EX_ARGS *)args)->config;
		stream = c ? c->stream : NULL;
		break;
	}
	default:
		return 0;
	}
	*key = !stream && per_thread ? KEY_PER_THREAD : stream_key(stream);
	return 1;
}

/* ---- Graphs captured from a stream with a mask ------------------------------------- */

/* Under sm.lock. */
static struct graph_mask *graph_entry(const void *graph, int claim)
{
	struct graph_mask *free_entry = NULL;

	for (int i = 0; i < GRAPHS; i++) {
		if (sm.graphs[i].graph == graph)
			return &sm.graphs[i];
		if (!sm.graphs[i].graph && !free_entry)
			free_entry = &sm.graphs[i];
	}
	if (claim && free_entry)
		free_entry->graph = graph;
	return claim ? free_entry : NULL;
}

/* A capture of the stream with key made graph: it keeps the stream's mask. */
static void captured(const void *key, const void *graph)
{
	struct stream_mask *s = find_stream(key);
	uint64_t w[3] = {0, 0, 0};
	struct graph_mask *e;

	if (s)
		read_mask(&s->mask, w);
	pthread_mutex_lock(&sm.lock);
	if (w[2]) {
		e = graph_entry(graph, 1);
		if (e) {
			e->w[0] = w[0];
			e->w[1] = w[1];
		} else if (shim_first_time(WARN_SMCTRL_FULL)) {
			shim_warn("more than %d captured CUDA graphs with a libsmctrl stream mask: later "
				  "ones run with the global mask",
				  GRAPHS);
		}
	} else if ((e = graph_entry(graph, 0))) {
		e->graph = NULL; /* a new graph at a destroyed one's address */
	}
	pthread_mutex_unlock(&sm.lock);
}

static void graph_destroyed(const void *graph)
{
	struct graph_mask *e;

	pthread_mutex_lock(&sm.lock);
	if ((e = graph_entry(graph, 0)))
		e->graph = NULL;
	pthread_mutex_unlock(&sm.lock);
}

/*
 * A stream is being destroyed: its mask goes with it. The driver gives its
 * handle to a later stream (a new stream then started with a dead one's
 * mask), and the table would fill with streams that are gone. The entry's
 * mask is cleared before its key is: a new stream that takes the entry
 * finds no mask until its own is set.
 */
static void stream_destroyed(const void *stream)
{
	static const uint64_t none[MASK_WORDS_LOGICAL];
	struct stream_mask *s;

	if (!stream)
		return;
	pthread_mutex_lock(&sm.lock);
	if ((s = find_stream(stream))) {
		nvt_seq_write(&s->mask.seq, s->mask.w, none, MASK_WORDS_LOGICAL);
		shim_table_remove(sm.streams, STREAMS, sizeof(sm.streams[0]), s);
	}
	pthread_mutex_unlock(&sm.lock);
}

int shim_smctrl_graph_mask(const void *graph, uint64_t mask[2])
{
	struct graph_mask *e;
	int found = 0;

	if (!__atomic_load_n(&sm.on, __ATOMIC_ACQUIRE) || !graph)
		return 0;
	pthread_mutex_lock(&sm.lock);
	if ((e = graph_entry(graph, 0))) {
		mask[0] = e->w[0];
		mask[1] = e->w[1];
		found = 1;
	}
	pthread_mutex_unlock(&sm.lock);
	return found;
}

/* ---- The API callbacks ------------------------------------------------------------- */

/* Whether this file follows call cbid of domain (6 or 7). */
static int followed_call(int domain, int cbid)
{
	const int *ids = domain == NVT_CB_DOMAIN_API ? driver_ids : runtime_ids;
	size_t n = domain == NVT_CB_DOMAIN_API ? sizeof(driver_ids) / sizeof(driver_ids[0])
					       : sizeof(runtime_ids) / sizeof(runtime_ids[0]);

	for (size_t i = 0; i < n; i++)
		if (ids[i] == cbid)
			return 1;
	return 0;
}

void shim_smctrl_api(int domain, int cbid, const void *data)
{
	struct shim_api_call call;
	const void *args, *key;
	int site;

	/* The callback also gets the calls others follow (graphs, the SM count: cuLaunchKernelEx
	 * around every such launch). Until a program sets a mask none is followed here: the
	 * calls are enabled then, and no stream or capture has a mask before (first_call). */
	if (!__atomic_load_n(&sm.on, __ATOMIC_ACQUIRE) || !followed_call(domain, cbid))
		return;
	if (shim_api_call(cbid, data, &call)) {
		if (shim_first_time(WARN_SMCTRL_API))
			shim_warn("unexpected API callback data (domain %d, call %d); libsmctrl stream "
				  "masks may not apply",
				  domain, cbid);
		return;
	}
	args = call.args;
	site = call.site;
	if (launch_stream(domain, cbid, args, &key)) {
		launching.key = site == NVT_CB_API_SITE_ENTER ? key : NULL;
		launching.domain = site == NVT_CB_API_SITE_ENTER ? domain : 0;
		return;
	}
	if (domain == NVT_CB_DOMAIN_API ? cbid == NVT_CBID_cuGraphDestroy : cbid == NVT_CBID_cudaGraphDestroy) {
		if (site == NVT_CB_API_SITE_ENTER)
			graph_destroyed(*(void *const *)args);
		return;
	}
	/* (At its entry: once it returned, a new stream may have its handle.) */
	if (domain == NVT_CB_DOMAIN_API && (cbid == NVT_CBID_cuStreamDestroy || cbid == NVT_CBID_cuStreamDestroy_v2)) {
		if (site == NVT_CB_API_SITE_ENTER)
			stream_destroyed(*(void *const *)args);
		return;
	}
	/* The end of a capture (the callback also gets the calls others follow). */
	if (domain == NVT_CB_DOMAIN_API ? cbid != NVT_CBID_cuStreamEndCapture && cbid != NVT_CBID_cuStreamEndCapture_ptsz
					: cbid != NVT_CBID_cudaStreamEndCapture && cbid != NVT_CBID_cudaStreamEndCapture_ptsz)
		return;
	if (site == NVT_CB_API_SITE_EXIT && call.result == 0) {
		const NVT_END_CAPTURE_ARGS *a = args;
		int ptsz = cbid == NVT_CBID_cuStreamEndCapture_ptsz || cbid == NVT_CBID_cudaStreamEndCapture_ptsz;
		if (a->graph && *a->graph)
			captured(!a->stream && ptsz ? KEY_PER_THREAD : stream_key(a->stream), *a->graph);
	}
}

/* ---- The launch path ----------------------------------------------------------------- */

/*
 * The program's mask for this launch (next, else the stream's, else the
 * global one) into w (w[2] != 0: one applies). graph_mask, if not NULL, is
 * the mask of the graph whose kernel this is. Consumes the next mask.
 */
static void launch_mask(const uint64_t *graph_mask, uint64_t w[3])
{
	const void *key = launching.key;

	if (next_mask[2]) {
		memcpy(w, next_mask, 3 * sizeof(w[0]));
		next_mask[2] = 0;
		return;
	}
	w[2] = 0;
	if (graph_mask) {
		w[0] = graph_mask[0];
		w[1] = graph_mask[1];
		w[2] = 1;
		return;
	}
	if (launching.domain) {
		struct stream_mask *s = find_stream(key);
		if (sm.debug)
			__atomic_add_fetch(&sm.paired[launching.domain == NVT_CB_DOMAIN_RUNTIME], 1,
					   __ATOMIC_RELAXED);
		if (s && read_mask(&s->mask, w) == 0 && w[2])
			return;
	}
	if (read_mask(&sm.global, w))
		w[2] = 0;
}

/* The mask bits of the TPCs below 128 that bits (of logical TPCs) names. */
static void hw_bits(const struct slot_map *map, const uint64_t bits[2], uint32_t out[4])
{
	out[0] = out[1] = out[2] = out[3] = 0;
	for (int i = 0; i < 2; i++)
		for (uint64_t b = bits[i]; b; b &= b - 1) {
			unsigned t = (unsigned)__builtin_ctzll(b) + 64u * (unsigned)i;
			uint8_t hw = map->hw_bit[t];
			out[hw / 32] |= 1u << (hw % 32);
		}
}

/*
 * A launch of thread-block clusters of cluster blocks under a mask that
 * leaves the TPCs disable names on: a cluster runs inside one GPC, and one
 * that no GPC of those TPCs holds would wait forever
 * (docs/hardware-facts.md, 5 and 10). Where the mask's TPCs hold it, they
 * run it; else the whole GPCs they touch do, as for a partition
 * (shim_cluster_masks); if even those are too small, the partition's own
 * rule applies (shim.c). Said once.
 */
static int cluster_launch(const struct slot_map *map, struct hw_masks *m,
			  const uint32_t disable[4], unsigned cluster)
{
	/* This thread's last answer: cuBLAS launches the same mask many times. */
	static __thread struct {
		const struct slot_map *map;
		uint32_t disable[4];
		uint32_t room, gpc_room, gpc_disable[4]; /* the mask bits of TPCs 0-127 */
	} last __attribute__((tls_model("initial-exec")));
	int widened;

	if (last.map != map || memcmp(last.disable, disable, sizeof(last.disable))) {
		struct nvt_tpcset on;
		struct hw_masks c;
		memset(&on, 0, sizeof(on));
		for (unsigned t = 0; t < map->n_tpcs && t < 128; t++)
			if (!((disable[map->hw_bit[t] / 32] >> (map->hw_bit[t] % 32)) & 1))
				on.w[t / 64] |= 1ull << (t % 64);
		shim_cluster_masks(&map->topo, &on, &c);
		last.map = map;
		memcpy(last.disable, disable, sizeof(last.disable));
		last.room = c.cluster_room;
		last.gpc_room = c.gpc_room;
		memcpy(last.gpc_disable, c.gpc_disable, sizeof(last.gpc_disable));
	}
	if (cluster <= last.room) {
		memcpy(m->disable, disable, sizeof(last.disable));
		m->cluster_room = last.room;
		return 0;
	}
	widened = cluster <= last.gpc_room;
	if (widened) {
		memcpy(m->disable, last.gpc_disable, sizeof(last.gpc_disable));
		m->cluster_room = last.gpc_room;
	}
	if (shim_first_time(WARN_SMCTRL_CLUSTER))
		shim_warn("pid %ld: a kernel launched thread-block clusters of %u blocks, which must "
			  "share one GPC, but its libsmctrl mask enables at most %u SMs in any GPC; such "
			  "launches run on %s instead of waiting forever",
			  (long)getpid(), cluster, last.room,
			  widened ? "the whole GPCs the mask touches" : "the task's partition");
	return 0;
}

/*
 * Narrows the launch's masks m (slot g) by the program's mask. Returns 0, or
 * -1 when the program's masks cannot apply (no calibrated map: m unchanged).
 */
int shim_smctrl_launch(int g, struct hw_masks *m, const void *tmd, const uint64_t *graph_mask)
{
	const struct slot_map *map;
	uint64_t w[3], named[2], off[2];
	uint32_t hw[4], disable[4];
	unsigned cluster;
	int enables = 0;

	if (sm.debug)
		__atomic_add_fetch(&sm.launches, 1, __ATOMIC_RELAXED);
	launch_mask(graph_mask, w);
	if (!w[2])
		return 0;
	map = g >= 0 && g < NVT_MAX_GPUS ? &sm.maps[g] : NULL;
	if (!map || __atomic_load_n(&map->ready, __ATOMIC_ACQUIRE) != 2) {
		if (shim_first_time(WARN_SMCTRL))
			shim_warn("pid %ld: libsmctrl masks need the GPU's calibrated TPC map, which this "
				  "task does not have; its launches run without them",
				  (long)getpid());
		return -1;
	}
	if (m->state != NVT_SLOT_SET) {
		/* No partition: the program's mask applies within the whole GPU. */
		m->state = NVT_SLOT_SET;
		m->layout = map->layout;
		memcpy(m->disable, map->all_disable, sizeof(m->disable));
		m->cluster_room = UINT32_MAX;
	}
	/* Count the named TPCs that exist, on and off; translate the fewer. */
	named[0] = map->n_tpcs >= 64 ? ~0ull : (1ull << map->n_tpcs) - 1;
	named[1] = map->n_tpcs >= 128 ? ~0ull : map->n_tpcs > 64 ? (1ull << (map->n_tpcs - 64)) - 1 : 0;
	off[0] = w[0] & named[0];
	off[1] = w[1] & named[1];
	if (__builtin_popcountll(off[0]) + __builtin_popcountll(off[1]) <=
	    __builtin_popcountll(named[0] & ~off[0]) + __builtin_popcountll(named[1] & ~off[1])) {
		hw_bits(map, off, hw);
		for (int i = 0; i < 4; i++)
			disable[i] = m->disable[i] | hw[i] | map->beyond128[i];
	} else {
		uint64_t on[2] = {named[0] & ~off[0], named[1] & ~off[1]};
		hw_bits(map, on, hw);
		for (int i = 0; i < 4; i++)
			disable[i] = m->disable[i] | ~hw[i];
	}
	for (int i = 0; i < 4; i++)
		enables |= ~disable[i] & ~map->all_disable[i];
	if (!enables) {
		if (shim_first_time(WARN_SMCTRL_EMPTY))
			shim_warn("pid %ld: a libsmctrl mask enables no TPC of this task's partition; such "
				  "launches run on the whole partition",
				  (long)getpid());
		return 0;
	}
	if (nvt_tmd_is(map->layout, tmd) && (cluster = nvt_tmd_cluster_size(map->layout, tmd)) > 1)
		return cluster_launch(map, m, disable, cluster);
	memcpy(m->disable, disable, sizeof(disable));
	return 0;
}

/*
 * Around fork(): the forking thread holds the setters' lock, so that no other
 * thread is inside a mask's sequence lock when the child is copied (the child
 * would keep that mask's sequence odd for ever, and launch without it). A
 * setter holds the lock for a few stores only.
 */
void shim_smctrl_before_fork(void)
{
	pthread_mutex_lock(&sm.lock);
}

void shim_smctrl_after_fork_in_parent(void)
{
	pthread_mutex_unlock(&sm.lock);
}

/* In a forked child: the lock taken before the fork, copied held. */
void shim_smctrl_after_fork(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

	sm.lock = fresh;
}

/* Whether launches must look at the program's masks (one load). */
int shim_smctrl_on(void)
{
	return __atomic_load_n(&sm.on, __ATOMIC_RELAXED);
}

void shim_smctrl_report(void)
{
	if (sm.debug && sm.on)
		shim_note("smctrl: %llu launches with libsmctrl masks in use; stream known for %llu "
			  "(driver API, followed: %s) and %llu (runtime API, followed: %s)",
			  (unsigned long long)sm.launches, (unsigned long long)sm.paired[0],
			  sm.followed[0] ? "yes" : "no", (unsigned long long)sm.paired[1],
			  sm.followed[1] ? "yes" : "no");
}

/* ---- Set-up, and the first libsmctrl call ----------------------------------------- */

void shim_smctrl_setup(nvt_cb_enable_fn enable, uint32_t handle)
{
	const char *debug = secure_getenv(NVT_ENV_SMCTRL_DEBUG);

	sm.enable = enable;
	sm.handle = handle;
	sm.debug = debug && *debug && strcmp(debug, "0") != 0;
}

/* Enables ids in domain; all or none. Returns 1 if all. */
static int enable_ids(int domain, const int *ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (sm.enable(1, sm.handle, domain, ids[i]))
			break;
	if (i == n)
		return 1;
	while (i-- > 0)
		sm.enable(0, sm.handle, domain, ids[i]);
	return 0;
}

/* Reads every named slot's map from the segment (slow path). */
static void fill_maps(void)
{
	static struct nvt_slot_view view;

	for (int g = 0; shim.seg && g < NVT_MAX_GPUS; g++) {
		uint8_t uuid[16];
		nvt_slot_uuid(&shim.seg->gpu[g], uuid);
		if (!nvt_uuid_is_zero(uuid) && nvt_slot_read(&shim.seg->gpu[g], &view, 100) == 0)
			shim_smctrl_topology(g, &view.topo);
	}
}

static void first_call(void)
{
	shim_smctrl_maps(); /* a program nvtaskset did not start: the GPUs' maps */
	pthread_mutex_lock(&sm.lock);
	fill_maps();
	pthread_mutex_unlock(&sm.lock);
	if (shim.active && sm.enable) {
		int drv = enable_ids(NVT_CB_DOMAIN_API, driver_ids, sizeof(driver_ids) / sizeof(driver_ids[0]));
		int rt = enable_ids(NVT_CB_DOMAIN_RUNTIME, runtime_ids,
				    sizeof(runtime_ids) / sizeof(runtime_ids[0]));
		sm.followed[0] = drv;
		sm.followed[1] = rt;
		if (!drv && !rt && shim_first_time(WARN_SMCTRL_API))
			shim_warn("the CUDA driver does not report launch calls; libsmctrl stream masks "
				  "do not apply (global and next-launch masks do)");
	}
	__atomic_store_n(&sm.on, 1, __ATOMIC_RELEASE);
}

static void turn_on(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!__atomic_load_n(&sm.on, __ATOMIC_ACQUIRE))
		pthread_once(&once, first_call);
}

/* ---- Setting masks ------------------------------------------------------------------ */

void shim_smctrl_set_global(const uint64_t w[3])
{
	turn_on();
	pthread_mutex_lock(&sm.lock);
	nvt_seq_write(&sm.global.seq, sm.global.w, w, MASK_WORDS_LOGICAL);
	pthread_mutex_unlock(&sm.lock);
}

void shim_smctrl_set_stream(const void *stream, const uint64_t w[3])
{
	struct stream_mask *s;

	turn_on();
	pthread_mutex_lock(&sm.lock);
	s = claim_stream(stream_key(stream));
	if (s)
		nvt_seq_write(&s->mask.seq, s->mask.w, w, MASK_WORDS_LOGICAL);
	pthread_mutex_unlock(&sm.lock);
	if (!s && shim_first_time(WARN_SMCTRL_FULL))
		shim_warn("more than %d CUDA streams with a libsmctrl mask: later ones use the global "
			  "mask",
			  STREAMS);
}

void shim_smctrl_set_next(const uint64_t w[3])
{
	turn_on();
	memcpy(next_mask, w, sizeof(next_mask));
}
