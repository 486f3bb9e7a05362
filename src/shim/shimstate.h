/*
 * shimstate.h - the bottom of the shim (shimstate.c): the state its files
 * share, its once-per-kind warnings, the API callback block as read, the
 * tables keyed by a pointer. Private to the shim.
 *
 * The shim's files are in layers, lowest first (the Makefile's SHIM_LAYERS;
 * tests/e2e/layers.sh checks with tools/dev/layers.py, and docs/design.md
 * draws them): a file calls and includes only files of its own layer or of
 * those below it, without circles. Each file's functions are declared in
 * the header of its name.
 *   state     shimstate (this state, the warnings), shimdriver (the driver's
 *             entry points, one table), shimslot (a GPU slot's
 *             masks and the slot of a context, which the launch path and
 *             the features share), shimchan (the process's channel groups,
 *             through the driver's RM ioctls)
 *   features  shimlease, shimyield (priorities), shimpreempt (time-sliced
 *             priorities: channel groups' timeslices), shimmem (GPU memory
 *             per task), shimsmcount (the SM count,
 *             cooperative launches), shimsmctrlmaps, shimsmctrl,
 *             shimsmctrlapi (libsmctrl's masks), shimgraph (CUDA graphs)
 *   hub       shim (the driver's callback: the launch path, and the API
 *             callbacks handed to the features)
 *   setup     shimsetup (set-up, fork, exit: registers the hub)
 * libsmctrl.c is libsmctrl.so's own, above them all: it calls the exports
 * of shimsmctrlapi.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMSTATE_H
#define NVT_SHIMSTATE_H

#include <stdint.h>
#include <sys/types.h>

#include "gpu/cuda_driver.h"
#include "nvtaskset.h"
#include "seg/segfile.h"
#include "core/segment.h"
#include "core/tmd.h"
#include "core/topo.h"

/* Masks ready for the launch path, and the slot sequence they belong to. */
struct hw_masks {
	uint64_t seg_seq;
	uint32_t state;  /* enum nvt_slot_state; SET: disable enables a working TPC */
	uint32_t layout; /* enum nvt_tmd_layout calibration verified; NONE: never write */
	uint32_t disable[NVT_TMD_MASK_WORDS];
	/* Clusters: the most SMs the partition has in one GPC (UINT32_MAX: GPCs
	 * unknown), and the partition grown to the whole GPCs it touches. */
	uint32_t cluster_room;
	uint32_t gpc_room;
	uint32_t gpc_disable[NVT_TMD_MASK_WORDS];
};
#define MASK_WORDS (sizeof(struct hw_masks) / 8)
union mask_words {
	struct hw_masks m;
	uint64_t w[MASK_WORDS];
};

/* Two buffers: the updater fills the one readers do not use, then flips. */
struct mask_buffer {
	uint64_t seq; /* odd while being written */
	struct hw_masks masks;
};

enum warn_kind {
	WARN_TMD_UNVERIFIED = 1 << 0,
	WARN_TMD_MISMATCH = 1 << 1,
	WARN_PARAMS = 1 << 2,
	WARN_REJECTED = 1 << 3,
	WARN_NO_DEVICE = 1 << 4,
	WARN_CONTEXTS = 1 << 5,
	WARN_CLUSTER = 1 << 6,
	WARN_GRAPH = 1 << 7,
	WARN_GRAPH_PARAMS = 1 << 8,
	WARN_SMCTRL = 1 << 9,         /* libsmctrl masks without a calibrated map */
	WARN_SMCTRL_API = 1 << 10,    /* launch calls not reported as expected */
	WARN_SMCTRL_EMPTY = 1 << 11,  /* a mask enabling no TPC of the partition */
	WARN_SMCTRL_CLUSTER = 1 << 12,
	WARN_SMCTRL_FULL = 1 << 13,   /* stream or graph table full */
	WARN_YIELD = 1 << 14,         /* yielding to higher tasks cannot work as asked */
	WARN_LEASE = 1 << 15,         /* TPCs a dead agent lent went back */
	WARN_COOP = 1 << 16,          /* a cooperative grid ran outside the partition */
	WARN_SMS_API = 1 << 17,       /* the SM count's and cooperative launches' callbacks unreadable */
	WARN_PREEMPT = 1 << 18,       /* a channel-group control refused, or no thread to hold */
	WARN_MEM = 1 << 19,           /* GPU memory cannot be counted as it should */
	WARN_BRIDGE = 1 << 20,        /* a time-sliced task's steps cannot be bridged */
};

/* The partition behind published masks, which a forked child copies. */
#define VIEW_WORDS (sizeof(struct nvt_slot_view) / 8)
_Static_assert(sizeof(struct nvt_slot_view) % 8 == 0, "a slot view is whole words");
union view_words {
	struct nvt_slot_view v;
	uint64_t w[VIEW_WORDS];
};
struct view_buffer {
	uint64_t seq;
	union view_words view;
};

/* The masks of one GPU slot: the updater fills the buffer readers do not use. */
struct slot_masks {
	struct mask_buffer buf[2];
	unsigned current; /* index of the buffer readers use */
	int updating;     /* try-lock of the single updater */
	/* What launches fall back on: never "unpartitioned" once a partition is known. */
	struct hw_masks initial;          /* the partition the task (or child) started with */
	struct nvt_slot_view initial_view;
	struct view_buffer known[2];      /* the partition of the published masks */
	unsigned known_current;
};

/*
 * Contexts seen so far and the slot of each one's GPU (-1: none, as of
 * segment generation gen). Entries are only appended: a reader scans
 * [0, n_ctx) and trusts an entry once its ctx is published.
 */
#define MAX_CONTEXTS 64
struct ctx_entry {
	const void *ctx; /* published last (release) */
	int slot;
	uint64_t gen;
};

struct shim_state {
	int quiet;
	int active; /* callback registered */
	int seg_shared; /* seg is a file other processes can see */
	pid_t seg_pid;  /* the process whose file seg is: never trust the file for it */
	char base[256]; /* the directory of run directories */
	struct nvt_seg_own own;
	struct nvt_segment *seg;
	struct slot_masks masks[NVT_MAX_GPUS];
	struct ctx_entry ctx[MAX_CONTEXTS];
	unsigned n_ctx;
	unsigned launch_threads; /* threads given a launch-counter stripe so far */
	unsigned warned;   /* enum warn_kind bits */
	uint64_t warned_gpus; /* GPUs (by device ordinal < 64) already warned about */
};
extern struct shim_state shim;

/* A well-mixed hash of a pointer (the finaliser of MurmurHash3), for the
 * shim's open-addressed tables of graph execs and streams. */
static inline uint64_t shim_ptr_hash(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/*
 * A set of driver-API calls (their callback ids), a bit each: the calls a feature follows,
 * added as its set-up enables them. The callback gets every call any feature follows
 * (cuLaunchKernelEx around every such launch, in every task), and each feature asks whether
 * the call is its own: one load, where searching a table of ids cost ~140 instructions a
 * callback (tests/bench/launchpath.py, the -ex forms).
 */
#define SHIM_CALL_BITS 1024
struct shim_calls {
	uint64_t w[SHIM_CALL_BITS / 64];
};

static inline int shim_calls_has(const struct shim_calls *set, int cbid)
{
	/* (relaxed: a set may gain calls while others are followed, shimyield.c's chain_ids) */
	return cbid >= 0 && cbid < SHIM_CALL_BITS &&
	       (__atomic_load_n(&set->w[cbid / 64], __ATOMIC_RELAXED) >> (cbid % 64) & 1);
}

/* Enables the API callback of call cbid (enable: the driver's, on the shim's subscriber
 * handle) and adds it to set. Returns 0, or -1 (the driver refused, or the id is past
 * SHIM_CALL_BITS: not followed). */
static inline int shim_calls_follow(struct shim_calls *set, nvt_cb_enable_fn enable, uint32_t handle,
				    int cbid)
{
	if (cbid < 0 || cbid >= SHIM_CALL_BITS || enable(1, handle, NVT_CB_DOMAIN_API, cbid))
		return -1;
	__atomic_fetch_or(&set->w[cbid / 64], 1ull << (cbid % 64), __ATOMIC_RELAXED);
	return 0;
}

/* What the driver's API callback block says of a call (gpu/cuda_driver.h). */
struct shim_api_call {
	void *const *args; /* the call's arguments, in order */
	int site;          /* NVT_CB_API_SITE_ENTER or _EXIT */
	int result;        /* the call's CUresult (on return) */
};

/* Reads the API callback block data of call cbid into call. Returns 0, or
 * -1 when it is not the block measured (too short, another call's, without
 * arguments or result). */
static inline int shim_api_call(int cbid, const void *data, struct shim_api_call *call)
{
	void *const *w = data;
	uint64_t id;

	if (!data || *(const uint32_t *)data < NVT_CB_API_MIN_SIZE)
		return -1;
	id = (uint64_t)(uintptr_t)w[NVT_CB_API_ID_WORD];
	if ((uint32_t)id != (uint32_t)cbid || !(call->args = w[NVT_CB_API_ARGS_WORD]) ||
	    !w[NVT_CB_API_RESULT_WORD])
		return -1;
	call->site = (int)(id >> 32);
	call->result = *(const int *)w[NVT_CB_API_RESULT_WORD];
	return 0;
}

/*
 * The shim's tables keyed by a pointer (graph execs, libsmctrl's streams):
 * n entries of size bytes (n a power of two), open-addressed from the key's
 * hash, each entry's first member its key (void *): NULL where never used,
 * SHIM_TABLE_GONE where removed. Lookups take no lock and make no call (the
 * launch path): an entry's key is stored last, with release.
 */
#define SHIM_TABLE_GONE ((void *)~(uintptr_t)0)

static inline void **shim_table_at(void *table, size_t size, size_t i)
{
	return (void **)((char *)table + i * size);
}

/* The entry of key, or NULL. */
static inline void *shim_table_find(void *table, size_t n, size_t size, const void *key)
{
	size_t i = (size_t)shim_ptr_hash(key) & (n - 1);

	for (size_t k = 0; k < n; k++, i = (i + 1) & (n - 1)) {
		void *at = __atomic_load_n(shim_table_at(table, size, i), __ATOMIC_ACQUIRE);
		if (at == key)
			return shim_table_at(table, size, i);
		if (!at)
			return NULL;
	}
	return NULL;
}

/*
 * Takes an entry for key, without a lock: the first free or removed one on
 * its way, which then holds mark (key itself, or a value no lookup asks for
 * while the caller fills the entry and stores key after). Returns it, or
 * NULL when the table is full.
 */
static inline void *shim_table_claim(void *table, size_t n, size_t size, const void *key, void *mark)
{
	size_t i = (size_t)shim_ptr_hash(key) & (n - 1);

	for (size_t k = 0; k < n; k++, i = (i + 1) & (n - 1)) {
		void **entry = shim_table_at(table, size, i);
		void *at = __atomic_load_n(entry, __ATOMIC_ACQUIRE);
		if ((!at || at == SHIM_TABLE_GONE) &&
		    __atomic_compare_exchange_n(entry, &at, mark, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return entry;
	}
	return NULL;
}

/*
 * Removes entry (of key's table) for a caller that makes every change to the
 * table under one lock: marks it removed, then frees it and the removed ones
 * before it if the entry after it was never used (no key's search goes past
 * a never-used entry, so none goes through them), so that removals do not
 * leave a table whose searches for an absent key pass every entry.
 */
static inline void shim_table_remove(void *table, size_t n, size_t size, void *entry)
{
	size_t i = (size_t)((char *)entry - (char *)table) / size;

	__atomic_store_n((void **)entry, SHIM_TABLE_GONE, __ATOMIC_RELEASE);
	if (__atomic_load_n(shim_table_at(table, size, (i + 1) & (n - 1)), __ATOMIC_ACQUIRE))
		return;
	for (size_t k = 0; k < n; k++, i = (i - 1) & (n - 1)) {
		void **at = shim_table_at(table, size, i);
		if (__atomic_load_n(at, __ATOMIC_ACQUIRE) != SHIM_TABLE_GONE)
			break;
		__atomic_store_n(at, NULL, __ATOMIC_RELEASE);
	}
}

/* Warnings: one line on stderr, unless NVTASKSET_QUIET. */
void shim_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line on stderr even when quiet (debugging output someone asked for). */
void shim_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Returns 1 the first time it is called for kind, else 0. */
int shim_first_time(enum warn_kind kind);

#endif /* NVT_SHIMSTATE_H */
