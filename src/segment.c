/*
 * segment.c - sequence lock over the control segment's GPU slots.
 *
 * The payload (state .. topo) is copied word by word with relaxed atomic
 * accesses, so a reader racing a writer reads stale or new words, never
 * undefined ones; the sequence check then throws such a copy away.
 *
 * SPDX-License-Identifier: MIT
 */
#include "segment.h"

#include <stddef.h>
#include <string.h>

#define PAYLOAD_BEGIN offsetof(struct nvt_gpu_slot, state)
#define PAYLOAD_END offsetof(struct nvt_gpu_slot, applied_seq)
#define PAYLOAD_WORDS ((PAYLOAD_END - PAYLOAD_BEGIN) / 8)

_Static_assert(PAYLOAD_BEGIN % 8 == 0 && PAYLOAD_END % 8 == 0, "slot payload is word aligned");
_Static_assert(sizeof(struct nvt_gpu_slot) % 8 == 0, "slots are word aligned");
_Static_assert(sizeof(uint64_t) == 8 && __atomic_always_lock_free(8, 0),
	       "the sequence lock needs lock-free 64-bit atomics");

/* The payload as the sequence lock moves it. */
struct payload {
	uint32_t state;
	uint32_t reserved;
	struct nvt_tpcset tpcs;
	struct nvt_topology topo;
};
_Static_assert(sizeof(struct payload) == PAYLOAD_END - PAYLOAD_BEGIN, "payload matches the slot");

/* Word view of a payload (type punning through a union is defined in GNU C). */
union payload_words {
	struct payload p;
	uint64_t w[PAYLOAD_WORDS];
};

void nvt_seg_init(struct nvt_segment *seg, int32_t pid, uint32_t uid, uint64_t start_time)
{
	memset(seg, 0, sizeof(*seg));
	seg->magic = NVT_SEG_MAGIC;
	seg->version = NVT_SEG_VERSION;
	seg->size = sizeof(*seg);
	seg->max_gpus = NVT_MAX_GPUS;
	seg->pid = pid;
	seg->uid = uid;
	seg->start_time = start_time;
}

int nvt_seg_check(const struct nvt_segment *seg, size_t mapped_bytes)
{
	if (mapped_bytes < offsetof(struct nvt_segment, gpu))
		return NVT_SEG_BAD_SIZE;
	if (seg->magic != NVT_SEG_MAGIC)
		return NVT_SEG_BAD_MAGIC;
	if (seg->version != NVT_SEG_VERSION)
		return NVT_SEG_BAD_VERSION;
	if (seg->size != sizeof(*seg) || mapped_bytes < sizeof(*seg) || seg->max_gpus != NVT_MAX_GPUS)
		return NVT_SEG_BAD_SIZE;
	return NVT_SEG_VALID;
}

uint64_t nvt_slot_seq(const struct nvt_gpu_slot *slot)
{
	return __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
}

int nvt_slot_read(const struct nvt_gpu_slot *slot, struct nvt_slot_view *out, int tries)
{
	const uint64_t *src = (const uint64_t *)((const char *)slot + PAYLOAD_BEGIN);
	union payload_words copy;

	for (int i = 0; i < tries; i++) {
		uint64_t before = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
		if (before & 1)
			continue;
		for (size_t w = 0; w < PAYLOAD_WORDS; w++)
			copy.w[w] = __atomic_load_n(&src[w], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) != before)
			continue;
		out->seq = before;
		out->state = copy.p.state;
		out->tpcs = copy.p.tpcs;
		out->topo = copy.p.topo;
		return 0;
	}
	return -1;
}

uint64_t nvt_slot_write(struct nvt_gpu_slot *slot, uint32_t state, const struct nvt_tpcset *tpcs,
			const struct nvt_topology *topo)
{
	uint64_t *dst = (uint64_t *)((char *)slot + PAYLOAD_BEGIN);
	union payload_words next;
	uint64_t seq = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED);
	/* Odd while writing; a dead writer may have left it odd already. */
	uint64_t odd = (seq & 1) ? seq + 2 : seq + 1;

	memset(&next, 0, sizeof(next));
	next.p.state = state;
	next.p.tpcs = *tpcs;
	next.p.topo = *topo;
	__atomic_store_n(&slot->seq, odd, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (size_t w = 0; w < PAYLOAD_WORDS; w++)
		__atomic_store_n(&dst[w], next.w[w], __ATOMIC_RELAXED);
	__atomic_store_n(&slot->seq, odd + 1, __ATOMIC_RELEASE);
	return odd + 1;
}

void nvt_slot_set_applied(struct nvt_gpu_slot *slot, uint64_t seq)
{
	__atomic_store_n(&slot->applied_seq, seq, __ATOMIC_RELEASE);
}

void nvt_slot_set_rejected(struct nvt_gpu_slot *slot, uint64_t seq)
{
	__atomic_store_n(&slot->rejected_seq, seq, __ATOMIC_RELEASE);
}

uint64_t nvt_slot_applied(const struct nvt_gpu_slot *slot)
{
	return __atomic_load_n(&slot->applied_seq, __ATOMIC_ACQUIRE);
}

uint64_t nvt_slot_rejected(const struct nvt_gpu_slot *slot)
{
	return __atomic_load_n(&slot->rejected_seq, __ATOMIC_ACQUIRE);
}
