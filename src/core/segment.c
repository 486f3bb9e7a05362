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
#include "tpcset.h"

#include <stddef.h>
#include <string.h>

#define PAYLOAD_BEGIN offsetof(struct nvt_gpu_slot, state)
#define PAYLOAD_END offsetof(struct nvt_gpu_slot, applied_seq)
_Static_assert(sizeof(struct nvt_slot_prio) % 8 == 0, "the priority fields are word aligned");
#define PAYLOAD_WORDS ((PAYLOAD_END - PAYLOAD_BEGIN) / 8)

_Static_assert(offsetof(struct nvt_gpu_slot, uuid) % 8 == 0, "a slot's UUID is word aligned");
_Static_assert(PAYLOAD_BEGIN % 8 == 0 && PAYLOAD_END % 8 == 0, "slot payload is word aligned");
_Static_assert(sizeof(struct nvt_gpu_slot) % 8 == 0, "slots are word aligned");
_Static_assert(sizeof(uint64_t) == 8 && __atomic_always_lock_free(8, 0),
	       "the sequence lock needs lock-free 64-bit atomics");

/* The payload as the sequence lock moves it. */
struct payload {
	uint32_t state;
	uint32_t flags;
	uint8_t uuid[16];
	struct nvt_tpcset tpcs;
	struct nvt_topology topo;
	struct nvt_slot_prio prio;
	uint64_t mem_limit;
};
_Static_assert(sizeof(struct payload) == PAYLOAD_END - PAYLOAD_BEGIN, "payload matches the slot");

/* Word view of a payload (type punning through a union is defined in GNU C). */
union payload_words {
	struct payload p;
	uint64_t w[PAYLOAD_WORDS];
};

void nvt_segment_init(struct nvt_segment *seg, int32_t pid, uint32_t uid, uint64_t start_time)
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

int nvt_segment_check(const struct nvt_segment *seg, size_t mapped_bytes)
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

uint64_t nvt_seq_write(uint64_t *seq, uint64_t *dst, const uint64_t *src, size_t words)
{
	uint64_t now = __atomic_load_n(seq, __ATOMIC_RELAXED);
	/* Odd while writing; a dead writer may have left it odd already. */
	uint64_t odd = (now & 1) ? now + 2 : now + 1;

	__atomic_store_n(seq, odd, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (size_t w = 0; w < words; w++)
		__atomic_store_n(&dst[w], src[w], __ATOMIC_RELAXED);
	__atomic_store_n(seq, odd + 1, __ATOMIC_RELEASE);
	return odd + 1;
}

int nvt_slot_read(const struct nvt_gpu_slot *slot, struct nvt_slot_view *out, int tries)
{
	const uint64_t *src = (const uint64_t *)((const char *)slot + PAYLOAD_BEGIN);
	union payload_words copy;
	uint64_t seen;

	for (int i = 0; i < tries; i++) {
		if (nvt_seq_read(&slot->seq, src, copy.w, PAYLOAD_WORDS, &seen))
			continue;
		out->seq = seen;
		out->state = copy.p.state;
		out->flags = copy.p.flags;
		memcpy(out->uuid, copy.p.uuid, sizeof(out->uuid));
		out->tpcs = copy.p.tpcs;
		out->topo = copy.p.topo;
		out->prio = copy.p.prio;
		out->mem_limit = copy.p.mem_limit;
		return 0;
	}
	return -1;
}

uint64_t nvt_slot_write(struct nvt_gpu_slot *slot, const struct nvt_slot_view *view)
{
	union payload_words next;

	memset(&next, 0, sizeof(next));
	next.p.state = view->state;
	next.p.flags = view->flags;
	memcpy(next.p.uuid, view->uuid, sizeof(next.p.uuid));
	next.p.tpcs = view->tpcs;
	next.p.topo = view->topo;
	next.p.prio = view->prio;
	next.p.mem_limit = view->mem_limit;
	return nvt_seq_write(&slot->seq, (uint64_t *)((char *)slot + PAYLOAD_BEGIN), next.w,
			     PAYLOAD_WORDS);
}

int nvt_slot_same_masks(const struct nvt_slot_view *a, const struct nvt_slot_view *b)
{
	return a->state == b->state && nvt_set_equal(&a->tpcs, &b->tpcs) &&
	       !memcmp(&a->topo, &b->topo, sizeof(a->topo));
}

void nvt_slot_set_applied(struct nvt_gpu_slot *slot, uint64_t seq)
{
	__atomic_store_n(&slot->applied_seq, seq, __ATOMIC_RELEASE);
}

void nvt_slot_set_rejected(struct nvt_gpu_slot *slot, uint64_t seq)
{
	__atomic_store_n(&slot->rejected_seq, seq, __ATOMIC_RELEASE);
}

void nvt_slot_count_launch(struct nvt_gpu_slot *slot, unsigned stripe)
{
	uint64_t *n;

	if (stripe >= NVT_LAUNCH_STRIPES - 1) {
		__atomic_fetch_add(&slot->launches[NVT_LAUNCH_STRIPES - 1], 1, __ATOMIC_RELAXED);
		return;
	}
	/* This thread's own stripe: no other writer, so no locked instruction. */
	n = &slot->launches[stripe];
	__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

uint64_t nvt_slot_launches(const struct nvt_gpu_slot *slot)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < NVT_LAUNCH_STRIPES; i++)
		sum += slot->launches[i];
	return sum;
}

void nvt_slot_set_graph_stale(struct nvt_gpu_slot *slot, uint64_t kernels)
{
	__atomic_store_n(&slot->graph_stale, kernels, __ATOMIC_RELAXED);
}

uint64_t nvt_slot_mem_limit(const struct nvt_gpu_slot *slot)
{
	return __atomic_load_n(&slot->mem_limit, __ATOMIC_RELAXED);
}

static int uuid_zero(const uint8_t *u)
{
	for (int i = 0; i < 16; i++)
		if (u[i])
			return 0;
	return 1;
}

void nvt_slot_uuid(const struct nvt_gpu_slot *slot, uint8_t uuid[16])
{
	const uint64_t *words = (const uint64_t *)slot->uuid;
	uint64_t copy[2];

	copy[0] = __atomic_load_n(&words[0], __ATOMIC_RELAXED);
	copy[1] = __atomic_load_n(&words[1], __ATOMIC_RELAXED);
	memcpy(uuid, copy, 16);
}

int nvt_segment_find_gpu(const struct nvt_segment *seg, const uint8_t uuid[16])
{
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t each[16];
		nvt_slot_uuid(&seg->gpu[g], each);
		if (!uuid_zero(each) && memcmp(each, uuid, 16) == 0)
			return g;
	}
	return -1;
}

int nvt_segment_free_slot(const struct nvt_segment *seg)
{
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t each[16];
		nvt_slot_uuid(&seg->gpu[g], each);
		if (uuid_zero(each))
			return g;
	}
	return -1;
}

void nvt_segment_bump_gen(struct nvt_segment *seg)
{
	__atomic_fetch_add(&seg->slots_gen, 1, __ATOMIC_RELEASE);
}

uint64_t nvt_segment_gen(const struct nvt_segment *seg)
{
	return __atomic_load_n(&seg->slots_gen, __ATOMIC_ACQUIRE);
}

int nvt_segment_add_gpus(struct nvt_segment *seg, const struct nvt_slot_view *views, int n)
{
	int added = 0, g;

	for (int i = 0; i < n; i++) {
		if (uuid_zero(views[i].uuid) || nvt_segment_find_gpu(seg, views[i].uuid) >= 0)
			continue;
		if ((g = nvt_segment_free_slot(seg)) < 0)
			break;
		nvt_slot_write(&seg->gpu[g], &views[i]);
		nvt_segment_bump_gen(seg); /* after the write: a reader that sees it finds the slot */
		added++;
	}
	return added;
}

int nvt_streak_yields(const struct nvt_unsettled_streak *streak)
{
	return streak->slots < NVT_SEG_YIELD_STREAK;
}

void nvt_streak_expire(struct nvt_unsettled_streak *streak, uint64_t now_ns)
{
	if (!nvt_streak_yields(streak) && now_ns - streak->last_ns > NVT_SEG_STREAK_NS)
		streak->slots = 0;
}

void nvt_streak_unsettled(struct nvt_unsettled_streak *streak, uint64_t now_ns)
{
	streak->slots += nvt_streak_yields(streak);
	streak->last_ns = now_ns;
}

void nvt_streak_settled(struct nvt_unsettled_streak *streak)
{
	streak->slots = 0;
}
