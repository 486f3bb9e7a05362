/*
 * segment.h - the control segment's sequence lock, on plain memory.
 * Pure code: works on any buffer, shared or not (see nvtaskset.h).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGMENT_H
#define NVT_SEGMENT_H

#include <stddef.h>
#include <stdint.h>
#include "nvtaskset.h"

/* A consistent copy of one GPU slot. */
struct nvt_slot_view {
	uint64_t seq;
	uint32_t state; /* enum nvt_slot_state */
	uint32_t flags; /* NVT_SLOTF_* */
	uint8_t uuid[16]; /* the slot's GPU; all zero: a free slot */
	struct nvt_tpcset tpcs;
	struct nvt_topology topo;
	struct nvt_slot_prio prio; /* priority, own partition (nvtaskset.h) */
	uint64_t mem_limit; /* GPU memory limit in bytes; 0: none (nvtaskset.h) */
};

enum nvt_segment_check {
	NVT_SEG_VALID = 0,
	NVT_SEG_BAD_MAGIC = -1,   /* not a control segment */
	NVT_SEG_BAD_VERSION = -2, /* a layout this build does not know */
	NVT_SEG_BAD_SIZE = -3,    /* truncated or inconsistent */
};

/* Fills a fresh segment header for pid; every slot is NVT_SLOT_UNSET. */
void nvt_segment_init(struct nvt_segment *seg, int32_t pid, uint32_t uid, uint64_t start_time);

/* Checks the header of a segment of mapped_bytes bytes. Returns enum nvt_segment_check. */
int nvt_segment_check(const struct nvt_segment *seg, size_t mapped_bytes);

/*
 * The sequence lock itself, on any words: copies words 64-bit words from src
 * to dst in one try and returns 0 if *seq was even and unchanged throughout
 * (storing it in *seen), else -1. Inline: the launch path reads its masks
 * through it at every launch, where a call and a loop of unknown length cost
 * ~80 instructions for 7 words (tests/bench/launchpath.py).
 */
static inline int nvt_seq_read(const uint64_t *seq, const uint64_t *src, uint64_t *dst,
			       size_t words, uint64_t *seen)
{
	uint64_t before = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

	if (before & 1)
		return -1;
	for (size_t w = 0; w < words; w++)
		dst[w] = __atomic_load_n(&src[w], __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(seq, __ATOMIC_RELAXED) != before)
		return -1;
	*seen = before;
	return 0;
}
/* Writer side (callers exclude each other): returns the new, even, seq. */
uint64_t nvt_seq_write(uint64_t *seq, uint64_t *dst, const uint64_t *src, size_t words);

/* Returns the slot's sequence number (acquire load). */
uint64_t nvt_slot_seq(const struct nvt_gpu_slot *slot);

/*
 * Copies a slot consistently, trying at most tries times. Returns 0 on
 * success, -1 if every try overlapped a writer (or a writer died mid-write).
 * Never blocks.
 */
int nvt_slot_read(const struct nvt_gpu_slot *slot, struct nvt_slot_view *out, int tries);

/*
 * Publishes view's state, flags, uuid, tpcs, topo and prio in slot (view->seq is not
 * used). The caller must exclude other writers (the CLI holds the writer's
 * lock, see nvtaskset.h).
 * Readers never see a mix of old and new. A slot left mid-write by a dead
 * writer is recovered. Returns the new seq.
 */
uint64_t nvt_slot_write(struct nvt_gpu_slot *slot, const struct nvt_slot_view *view);

/*
 * 1 if a and b give a launch the same masks: the same state, TPCs and topology (what the
 * shim's masks are made of; a priority alone changes none of them).
 */
int nvt_slot_same_masks(const struct nvt_slot_view *a, const struct nvt_slot_view *b);

/*
 * Copies the GPU a slot is for. A slot's GPU is written once, when a writer
 * gives it a free slot, and never changes after: no sequence lock is needed,
 * and a slot that a dead writer left half-written still names its GPU.
 */
void nvt_slot_uuid(const struct nvt_gpu_slot *slot, uint8_t uuid[16]);
/* Returns the index of the slot that holds uuid, or -1. */
int nvt_segment_find_gpu(const struct nvt_segment *seg, const uint8_t uuid[16]);
/* Returns the index of the first free slot, or -1. */
int nvt_segment_free_slot(const struct nvt_segment *seg);
/* Announces that a free slot was given a GPU (see nvt_segment.slots_gen). */
void nvt_segment_bump_gen(struct nvt_segment *seg);
uint64_t nvt_segment_gen(const struct nvt_segment *seg);
/*
 * Gives each GPU of views (n; each with its uuid) that seg has no slot for a
 * free slot holding that view, and announces it (slots_gen). The caller
 * excludes other writers (nvt_slot_write). Returns how many it added; GPUs
 * left over when the slots run out get none.
 */
int nvt_segment_add_gpus(struct nvt_segment *seg, const struct nvt_slot_view *views, int n);

/*
 * The slots a reader found unsettled in a row (their sequence odd or moving through every try
 * it makes), and when it found the last. One is a writer preempted inside it; more are dead
 * writers or a user who leaves her segments so: past NVT_SEG_YIELD_STREAK a reader reads each
 * at once, without yielding (on a busy machine each yield may last every runnable task's turn:
 * 1000 such slots cost a claim minutes). A retry that finds a slot settled ends the streak, and
 * a full streak ends NVT_SEG_STREAK_NS after its last slot (readers read the clock for it only
 * once it is full). Pure: the caller keeps one a thread and gives the time.
 */
#define NVT_SEG_YIELD_STREAK 4
#define NVT_SEG_STREAK_NS 1000000000u
struct nvt_unsettled_streak {
	unsigned slots;   /* unsettled in a row, at most NVT_SEG_YIELD_STREAK */
	uint64_t last_ns; /* when the last was found, in nanoseconds of a monotonic clock */
};
/* 1 if a reader yields between its tries of an unsettled slot: the streak is not full. */
int nvt_streak_yields(const struct nvt_unsettled_streak *streak);
/* Ends a full streak whose last slot was found more than NVT_SEG_STREAK_NS before now_ns. */
void nvt_streak_expire(struct nvt_unsettled_streak *streak, uint64_t now_ns);
/* Counts a slot found unsettled at now_ns. */
void nvt_streak_unsettled(struct nvt_unsettled_streak *streak, uint64_t now_ns);
/* A retry found a slot settled: the streak ends. */
void nvt_streak_settled(struct nvt_unsettled_streak *streak);

/* What the shim reports about a slot (outside the sequence lock). */
struct nvt_slot_status {
	uint64_t applied;     /* applied_seq */
	uint64_t rejected;    /* rejected_seq */
	uint64_t launches;    /* kernel launches counted */
	uint64_t graph_stale; /* graph kernels on an earlier partition */
	uint64_t mem_used;    /* GPU memory its shim counts (bytes) */
	uint64_t mem_refused; /* allocations refused for its limit */
	struct nvt_slot_activity act; /* its requests, as its shim reports them */
	struct nvt_slot_yield yield;  /* how it yields now */
};

/* Shim-side status words (relaxed; the task writes them, and a writer that changes a slot's
 * priority alone carries applied_seq over: nvt_seg_write). */
void nvt_slot_set_applied(struct nvt_gpu_slot *slot, uint64_t seq);
void nvt_slot_set_rejected(struct nvt_gpu_slot *slot, uint64_t seq);
/*
 * One more kernel launch on this slot's GPU, counted in stripe (the calling
 * thread's own, below NVT_LAUNCH_STRIPES - 1, is added to without a locked
 * instruction; any higher value means the shared last stripe): no lock, no
 * system call.
 */
void nvt_slot_count_launch(struct nvt_gpu_slot *slot, unsigned stripe);
/* The launches counted in a slot (or a copy of one): the sum of its stripes. */
uint64_t nvt_slot_launches(const struct nvt_gpu_slot *slot);
void nvt_slot_set_graph_stale(struct nvt_gpu_slot *slot, uint64_t kernels);
/* The GPU memory limit the slot holds (one relaxed load: a single word needs
 * no sequence lock); 0: none. */
uint64_t nvt_slot_mem_limit(const struct nvt_gpu_slot *slot);

#endif /* NVT_SEGMENT_H */
