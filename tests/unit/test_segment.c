/* Unit tests: the control segment's sequence lock. SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/segment.h"
#include "core/topo.h"
#include "core/tpcset.h"

#include <pthread.h>
#include <stdlib.h>

static struct nvt_segment seg;

static void test_header(void)
{
	nvt_segment_init(&seg, 1234, 1000, 987654321);
	CHECK(nvt_segment_check(&seg, sizeof(seg)) == NVT_SEG_VALID);
	CHECK(seg.pid == 1234 && seg.uid == 1000 && seg.start_time == 987654321);
	CHECK(seg.gpu[0].state == NVT_SLOT_UNSET && seg.gpu[NVT_MAX_GPUS - 1].seq == 0);
	CHECK(nvt_segment_check(&seg, sizeof(seg) - 1) == NVT_SEG_BAD_SIZE);
	CHECK(nvt_segment_check(&seg, 8) == NVT_SEG_BAD_SIZE);
	seg.version = NVT_SEG_VERSION - 1;
	CHECK(nvt_segment_check(&seg, sizeof(seg)) == NVT_SEG_BAD_VERSION);
	seg.version = NVT_SEG_VERSION + 1;
	CHECK(nvt_segment_check(&seg, sizeof(seg)) == NVT_SEG_BAD_VERSION);
	seg.version = NVT_SEG_VERSION;
	seg.size = 17;
	CHECK(nvt_segment_check(&seg, sizeof(seg)) == NVT_SEG_BAD_SIZE);
	seg.size = sizeof(seg);
	seg.max_gpus = 4;
	CHECK(nvt_segment_check(&seg, sizeof(seg)) == NVT_SEG_BAD_SIZE);
	seg.max_gpus = NVT_MAX_GPUS;
	seg.magic = 0;
	CHECK(nvt_segment_check(&seg, sizeof(seg)) == NVT_SEG_BAD_MAGIC);
}

/* Writes a SET partition of tpcs on topo into slot (no GPU named). */
static uint64_t write_set(struct nvt_gpu_slot *slot, const struct nvt_tpcset *tpcs,
			  const struct nvt_topology *topo)
{
	struct nvt_slot_view v;

	memset(&v, 0, sizeof(v));
	v.state = NVT_SLOT_SET;
	v.tpcs = *tpcs;
	v.topo = *topo;
	return nvt_slot_write(slot, &v);
}

static void test_write_read(void)
{
	struct nvt_gpu_slot *slot;
	struct nvt_slot_view v;
	struct nvt_tpcset s;
	struct nvt_topology t;
	uint64_t seq;

	nvt_segment_init(&seg, 1, 0, 0);
	slot = &seg.gpu[0];
	CHECK(nvt_slot_read(slot, &v, 1) == 0 && v.seq == 0 && v.state == NVT_SLOT_UNSET);
	nvt_parse_list("3-9", NVT_MAX_TPCS, &s);
	nvt_topo_identity(&t, 66);
	seq = write_set(slot, &s, &t);
	CHECK(seq == 2 && nvt_slot_seq(slot) == 2);
	CHECK(nvt_slot_read(slot, &v, 1) == 0);
	CHECK(v.seq == 2 && v.state == NVT_SLOT_SET && nvt_set_equal(&v.tpcs, &s));
	CHECK(memcmp(&v.topo, &t, sizeof(t)) == 0);
	CHECK(write_set(slot, &s, &t) == 4);

	/* A writer that died mid-write leaves seq odd: readers give up (never
	 * block) and the next writer recovers the slot. */
	slot->seq = 5;
	CHECK(nvt_slot_read(slot, &v, 50) == -1);
	CHECK(write_set(slot, &s, &t) == 8);
	CHECK(nvt_slot_read(slot, &v, 1) == 0 && v.seq == 8);

	nvt_slot_set_applied(slot, 8);
	nvt_slot_set_rejected(slot, 6);
	CHECK(slot->applied_seq == 8 && slot->rejected_seq == 6);
	/* Writes to one GPU's slot leave the others alone. */
	CHECK(seg.gpu[1].seq == 0 && seg.gpu[1].state == NVT_SLOT_UNSET);
}

/* A writer flips between two partitions whose parts are tied together;
 * readers must never see one part of each. */
static struct {
	int stop;
	long reads, torn, busy;
} race;

static void *writer(void *arg)
{
	struct nvt_tpcset a, b;
	struct nvt_topology ta, tb;
	(void)arg;
	nvt_parse_list("0-31", NVT_MAX_TPCS, &a);
	nvt_parse_list("32-65,100-255", NVT_MAX_TPCS, &b);
	nvt_topo_identity(&ta, 32);
	nvt_topo_identity(&tb, 66);
	for (int i = 0; i < 300000; i++)
		write_set(&seg.gpu[0], i & 1 ? &b : &a, i & 1 ? &tb : &ta);
	__atomic_store_n(&race.stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reader(void *arg)
{
	long reads = 0, torn = 0, busy = 0;
	(void)arg;
	while (!__atomic_load_n(&race.stop, __ATOMIC_ACQUIRE)) {
		struct nvt_slot_view v;
		if (nvt_slot_read(&seg.gpu[0], &v, 1)) {
			busy++;
			continue;
		}
		reads++;
		unsigned n = nvt_set_count(&v.tpcs);
		if (v.seq == 0)
			continue;
		if (!((n == 32 && v.topo.n_tpcs == 32 && nvt_set_highest(&v.tpcs) == 31) ||
		      (n == 190 && v.topo.n_tpcs == 66 && v.topo.hw_bit[65] == 65)))
			torn++;
	}
	__atomic_fetch_add(&race.reads, reads, __ATOMIC_RELAXED);
	__atomic_fetch_add(&race.torn, torn, __ATOMIC_RELAXED);
	__atomic_fetch_add(&race.busy, busy, __ATOMIC_RELAXED);
	return NULL;
}

static void test_race(void)
{
	pthread_t w, r[3];

	nvt_segment_init(&seg, 1, 0, 0);
	for (int i = 0; i < 3; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pthread_join(w, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	printf("race: %ld consistent reads, %ld refused mid-write, %ld torn\n", race.reads, race.busy,
	       race.torn);
	CHECK(race.reads > 0);
	CHECK(race.torn == 0);
}

/* What a launch's masks are made of: a priority alone changes none of it. */
static void test_same_masks(void)
{
	struct nvt_slot_view a = {0}, b;

	a.state = NVT_SLOT_SET;
	nvt_parse_list("3-9", NVT_MAX_TPCS, &a.tpcs);
	nvt_topo_identity(&a.topo, 66);
	b = a;
	b.prio.prio = NVT_PRIO_LOW;
	b.prio.yield = NVT_YIELD_GATE | NVT_YIELD_CLIENT;
	b.seq = 8;
	CHECK(nvt_slot_same_masks(&a, &b));
	nvt_parse_list("3-8", NVT_MAX_TPCS, &b.tpcs);
	CHECK(!nvt_slot_same_masks(&a, &b));
	b = a;
	b.state = NVT_SLOT_UNSET;
	CHECK(!nvt_slot_same_masks(&a, &b));
	b = a;
	nvt_topo_identity(&b.topo, 64);
	CHECK(!nvt_slot_same_masks(&a, &b));
}

/* Slots found unsettled: a reader yields for the first NVT_SEG_YIELD_STREAK in a row, then for
 * none until a retry finds one settled or NVT_SEG_STREAK_NS pass without one (the times given
 * here, no clock read: the boundary is the nanosecond past the second). */
static void test_unsettled_streak(void)
{
	const uint64_t t0 = 5000000000u, second = NVT_SEG_STREAK_NS;
	struct nvt_unsettled_streak streak = {0};
	uint64_t last = t0;

	for (int i = 0; i < NVT_SEG_YIELD_STREAK; i++) {
		CHECK(nvt_streak_yields(&streak));
		nvt_streak_unsettled(&streak, last = t0 + (uint64_t)i * 1000);
	}
	CHECK(!nvt_streak_yields(&streak));
	nvt_streak_unsettled(&streak, last += second / 2); /* a fifth, half a second on */
	CHECK(!nvt_streak_yields(&streak));
	nvt_streak_expire(&streak, last);
	CHECK(!nvt_streak_yields(&streak));
	nvt_streak_expire(&streak, last + second); /* a second after the last: not more than one */
	CHECK(!nvt_streak_yields(&streak));
	nvt_streak_expire(&streak, last + second + 1);
	CHECK(nvt_streak_yields(&streak));
	/* Ended: NVT_SEG_YIELD_STREAK more slots are yielded for again, and no more. */
	for (int i = 0; i < NVT_SEG_YIELD_STREAK; i++) {
		CHECK(nvt_streak_yields(&streak));
		nvt_streak_unsettled(&streak, last + second + 2);
	}
	CHECK(!nvt_streak_yields(&streak));
	/* A retry that found a slot settled ends it at once, whatever the time. */
	nvt_streak_settled(&streak);
	CHECK(nvt_streak_yields(&streak));
}

int main(void)
{
	test_header();
	test_write_read();
	test_race();
	test_same_masks();
	test_unsettled_streak();
	return CHECK_DONE();
}
