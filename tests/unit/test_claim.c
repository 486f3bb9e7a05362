/* Unit tests: the rules of race-free allocation (src/core/claim.c), one round at a
 * time, then the whole protocol among simulated claimers whose reads and
 * writes interleave at random. SPDX-License-Identifier: MIT */
#include "check.h"
#include "core/claim.h"
#include "core/topo.h"
#include "core/tpcset.h"

#include <stdlib.h>

static struct nvt_topology topo8;
/* 8 TPCs in GPCs of 4 (0-3), 2 (4-5), 1 (6) and 1 (7). */
static struct nvt_topology gpcs8;
static const struct nvt_pick two = {.count = 2, .strategy = NVT_PACKED},
			      two_spread = {.count = 2, .strategy = NVT_SPREAD};

static struct nvt_tpcset list(const char *text)
{
	struct nvt_tpcset set;
	CHECK(nvt_parse_list(text, NVT_MAX_TPCS, &set) == 0);
	return set;
}

static int same(const struct nvt_tpcset *set, const char *text)
{
	struct nvt_tpcset want = list(text);
	return nvt_set_equal(set, &want);
}

static struct nvt_claimer who(uint64_t start, uint64_t ns, int32_t pid)
{
	struct nvt_claimer c = {start, ns, pid};
	return c;
}

static struct nvt_held held(struct nvt_claimer w, int claim, const char *tpcs)
{
	struct nvt_held h;
	memset(&h, 0, sizeof(h));
	h.who = w;
	h.claim = claim;
	h.tpcs = list(tpcs);
	h.mem_limit = 0;
	return h;
}

/* A slot holding a memory limit of gib GiB (and no TPCs: on every TPC). */
static struct nvt_held held_mem(struct nvt_claimer w, int claim, uint64_t gib)
{
	struct nvt_held h = {0};
	h.who = w;
	h.claim = claim;
	nvt_set_clear(&h.tpcs);
	h.mem_limit = gib << 30;
	return h;
}

/* --mem-exclusive's rule, one round at a time. */
static void test_mem_steps(void)
{
	struct nvt_claimer me = who(1000, 7, 50), early = who(999, 7, 60), late = who(1000, 7, 51);
	const uint64_t gpu = 80ull << 30, g16 = 16ull << 30;
	struct nvt_held h[4] = {0};
	uint64_t given = 7;

	/* Nothing given: it fits, and nothing counted. */
	CHECK(nvt_claim_mem_step(gpu, g16, &me, h, 0, 0, &given) == NVT_STEP_CONFIRM && given == 0);
	/* 64G confirmed and 16G asked: exactly the GPU. */
	h[0] = held_mem(early, 0, 64);
	CHECK(nvt_claim_mem_step(gpu, g16, &me, h, 1, 0, &given) == NVT_STEP_CONFIRM &&
	      given == 64ull << 30);
	CHECK(nvt_claim_mem_step(gpu, g16 + 1, &me, h, 1, 0, NULL) == NVT_STEP_FULL);
	/* A confirmed limit of a later task counts as much as an earlier one's. */
	h[0] = held_mem(late, 0, 70);
	CHECK(nvt_claim_mem_step(gpu, g16, &me, h, 1, 0, NULL) == NVT_STEP_FULL);
	/* An earlier claimer's claim counts; a later one's makes it wait, unless taken. */
	h[0] = held_mem(early, 1, 70);
	CHECK(nvt_claim_mem_step(gpu, g16, &me, h, 1, 0, NULL) == NVT_STEP_FULL);
	h[0] = held_mem(late, 1, 70);
	CHECK(nvt_claim_mem_step(gpu, g16, &me, h, 1, 0, &given) == NVT_STEP_WAIT && given == 0);
	CHECK(nvt_claim_mem_step(gpu, g16, &me, h, 1, 1, NULL) == NVT_STEP_FULL);
	/* Tasks without a limit are not counted; the caller's own slot neither. */
	h[0] = held_mem(early, 0, 0);
	h[1] = held_mem(me, 0, 80);
	h[2] = held_mem(late, 0, 32);
	h[3] = held(early, 0, "0-3");
	CHECK(nvt_claim_mem_step(gpu, 48ull << 30, &me, h, 4, 0, &given) == NVT_STEP_CONFIRM &&
	      given == 32ull << 30);
	/* Sums past 64 bits saturate: never fit. */
	h[0] = held_mem(early, 0, 0);
	h[0].mem_limit = UINT64_MAX;
	h[1] = held_mem(late, 0, 1);
	CHECK(nvt_claim_mem_step(gpu, 1, &me, h, 2, 0, &given) == NVT_STEP_FULL && given == UINT64_MAX);
}

static void test_order(void)
{
	struct nvt_claimer a = who(100, 5, 900), b = who(101, 1, 1), c = who(100, 6, 2),
			   d = who(100, 5, 901);

	/* Start time first, then PID namespace, then PID. */
	CHECK(nvt_claimer_cmp(&a, &b) < 0 && nvt_claimer_cmp(&b, &a) > 0);
	CHECK(nvt_claimer_cmp(&a, &c) < 0 && nvt_claimer_cmp(&c, &a) > 0);
	CHECK(nvt_claimer_cmp(&a, &d) < 0 && nvt_claimer_cmp(&d, &a) > 0);
	CHECK(nvt_claimer_cmp(&c, &b) < 0);
	CHECK(nvt_claimer_cmp(&a, &a) == 0);
	/* Values past 32 bits and 63 bits compare as numbers. */
	b = who(1ull << 40, 0, 0);
	c = who(UINT64_MAX, 0, 0);
	CHECK(nvt_claimer_cmp(&a, &b) < 0 && nvt_claimer_cmp(&b, &c) < 0);
}

static void test_steps(void)
{
	struct nvt_claimer me = who(1000, 7, 50), early = who(999, 7, 60), late = who(1000, 7, 51);
	struct nvt_tpcset mine, next;
	struct nvt_held h[4] = {0};
	unsigned free_tpcs = 99;

	/* Nothing held: the first pick (identity topology, packed: the lowest TPCs). */
	CHECK(nvt_claim_step(&topo8, &two, &me, NULL, h, 0, 0, &next, &free_tpcs) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0-1") && free_tpcs == 8);
	/* A pick that nothing overlaps is confirmed; one that a partition, or an
	 * earlier claimer's claim, overlaps is picked again clear of everything. */
	mine = list("0-1");
	h[0] = held(late, 1, "4-5");
	CHECK(nvt_claim_step(&topo8, &two, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CONFIRM);
	h[0] = held(late, 0, "1");
	h[1] = held(late, 1, "2");
	CHECK(nvt_claim_step(&topo8, &two, &me, &mine, h, 2, 0, &next, &free_tpcs) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0,3") && free_tpcs == 7);
	h[0] = held(early, 1, "1-2");
	CHECK(nvt_claim_step(&topo8, &two, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0,3"));
	/* Only a later claimer's claim overlaps: keep it and wait; after the
	 * timeout (claims_taken) it is taken, and the pick moves. */
	h[0] = held(late, 1, "1");
	CHECK(nvt_claim_step(&topo8, &two, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_WAIT);
	CHECK(nvt_claim_step(&topo8, &two, &me, &mine, h, 1, 1, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0,2"));
	/* The caller's own segment, should a scan return it, is nobody's. */
	h[0] = held(me, 0, "0-1");
	CHECK(nvt_claim_step(&topo8, &two, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CONFIRM);
	/* Full: fewer free of partitions than asked, whatever claims say. */
	h[0] = held(early, 0, "0-6");
	CHECK(nvt_claim_step(&topo8, &two, &me, &mine, h, 1, 0, &next, &free_tpcs) ==
	      NVT_STEP_FULL);
	CHECK(free_tpcs == 1);
	CHECK(nvt_claim_step(&topo8, &two, &me, NULL, h, 1, 1, &next, &free_tpcs) ==
	      NVT_STEP_FULL);
	/* Room only under an earlier claimer's claim: hold nothing and wait. */
	h[0] = held(early, 1, "0-6");
	CHECK(nvt_claim_step(&topo8, &two, &me, NULL, h, 1, 0, &next, &free_tpcs) ==
	      NVT_STEP_WITHDRAW);
	CHECK(free_tpcs == 8);
	CHECK(nvt_claim_step(&topo8, &two, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_WITHDRAW);
	/* ... and after the timeout that is no longer worth waiting for. */
	CHECK(nvt_claim_step(&topo8, &two, &me, NULL, h, 1, 1, &next, &free_tpcs) ==
	      NVT_STEP_STUCK);
	CHECK(free_tpcs == 8);
	/* Room only under a later claimer's claim: the earlier claims it anyway
	 * (the later yields), so that it is never kept out by later claimers. */
	h[0] = held(late, 1, "0-6");
	CHECK(nvt_claim_step(&topo8, &two, &me, NULL, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0-1"));
	CHECK(nvt_claim_step(&topo8, &two, &me, NULL, h, 1, 1, &next, NULL) ==
	      NVT_STEP_STUCK);
	/* Clear of every claim when there is room, even a later claimer's. */
	h[0] = held(late, 1, "0-3");
	h[1] = held(early, 1, "4");
	CHECK(nvt_claim_step(&topo8, &two, &me, NULL, h, 2, 0, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "5-6"));
	/* Spread and GPCs come from nvt_topo_pick. */
	CHECK(nvt_claim_step(&topo8, &two_spread, &me, NULL, h, 0, 0, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(nvt_set_count(&next) == 2);
}

/* Whether set is n whole GPCs of topo and nothing else. */
static int whole_gpcs(const struct nvt_topology *topo, const struct nvt_tpcset *set, unsigned n)
{
	unsigned gpcs = 0;

	for (unsigned g = 0; g < topo->n_gpcs; g++) {
		unsigned size = 0, in = 0;
		for (unsigned t = 0; t < topo->n_tpcs; t++)
			if (topo->gpc[t] == g) {
				size++;
				in += nvt_set_has(set, t);
			}
		if (in && in != size)
			return 0;
		gpcs += in > 0;
	}
	return gpcs == n;
}

static void test_gpc_steps(void)
{
	struct nvt_claimer me = who(1000, 7, 50), early = who(999, 7, 60), late = who(1000, 7, 51);
	const struct nvt_pick one = {.count = 4, .gpcs = 1, .strategy = NVT_PACKED},
			      two_gpcs = {.count = 2, .gpcs = 2, .strategy = NVT_PACKED},
			      four = {.count = 4, .strategy = NVT_PACKED};
	struct nvt_tpcset mine, next;
	struct nvt_held h[2] = {0};
	unsigned free_units = 99;

	/* The largest GPC that fits: 0-3; two of at most 2 TPCs: the lone ones. */
	CHECK(nvt_claim_step(&gpcs8, &one, &me, NULL, h, 0, 0, &next, &free_units) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0-3") && free_units == 4);
	CHECK(nvt_claim_step(&gpcs8, &two_gpcs, &me, NULL, h, 0, 0, &next, NULL) == NVT_STEP_CLAIM);
	CHECK(same(&next, "6-7"));
	/* A later claimer's claim on TPC 0: GPC 0 is not clear of it, GPC 4-5
	 * is; a packed pick of 4 TPCs would take 1-3 and a TPC of another GPC. */
	h[0] = held(late, 1, "0");
	CHECK(nvt_claim_step(&gpcs8, &one, &me, NULL, h, 1, 0, &next, NULL) == NVT_STEP_CLAIM);
	CHECK(same(&next, "4-5"));
	CHECK(nvt_claim_step(&gpcs8, &four, &me, NULL, h, 1, 0, &next, NULL) == NVT_STEP_CLAIM);
	CHECK(!whole_gpcs(&gpcs8, &next, 1) && !whole_gpcs(&gpcs8, &next, 2));
	/* Partitions in every GPC but the lone 7: one whole GPC free, not two. */
	h[0] = held(early, 0, "0,4,6");
	CHECK(nvt_claim_step(&gpcs8, &two_gpcs, &me, NULL, h, 1, 0, &next, &free_units) ==
	      NVT_STEP_FULL);
	CHECK(free_units == 1);
	/* An earlier claimer's claim: wait for it; after the timeout it is taken. */
	h[0] = held(early, 1, "6");
	CHECK(nvt_claim_step(&gpcs8, &two_gpcs, &me, NULL, h, 1, 0, &next, NULL) ==
	      NVT_STEP_WITHDRAW);
	CHECK(nvt_claim_step(&gpcs8, &two_gpcs, &me, NULL, h, 1, 1, &next, NULL) == NVT_STEP_STUCK);
	/* A whole pick that nothing overlaps is confirmed. */
	mine = list("6-7");
	h[0] = held(late, 1, "0-3");
	CHECK(nvt_claim_step(&gpcs8, &two_gpcs, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CONFIRM);
	/* GPCs unknown: no whole GPC fits. */
	CHECK(nvt_claim_step(&topo8, &one, &me, NULL, h, 0, 0, &next, NULL) == NVT_STEP_FULL);
}

/* ---- The protocol among simulated claimers ------------------------------- */

#define SIM_MAX 32

/* A claimer and its slot. A scan reads the others' slots one by one, with
 * any other claimer's action between two reads; a decision and the write it
 * makes are one action, as are the reads of one slot (the sequence lock). */
struct sim {
	struct nvt_claimer who;
	int state;           /* 0 scanning, 1 confirmed, 2 full */
	int has_claim;       /* the slot holds a pick */
	int confirmed;
	struct nvt_tpcset tpcs;
	int next_read;       /* the next claimer whose slot the scan reads */
	struct nvt_held seen[SIM_MAX];
	int n_seen;
};

static unsigned sim_seed;

static unsigned sim_rand(void)
{
	sim_seed = sim_seed * 1103515245u + 12345u;
	return sim_seed >> 16;
}

/* One action of claimer c, which picks want on topo. */
static void sim_act(struct sim *s, int n, int c, const struct nvt_topology *topo,
		    const struct nvt_pick *want)
{
	struct sim *me = &s[c];
	struct nvt_tpcset next;
	int step;

	if (me->next_read < n) {
		const struct sim *o = &s[me->next_read++];
		if (o != me && o->has_claim) {
			me->seen[me->n_seen].who = o->who;
			me->seen[me->n_seen].claim = !o->confirmed;
			me->seen[me->n_seen++].tpcs = o->tpcs;
		}
		return;
	}
	step = nvt_claim_step(topo, want, &me->who, me->has_claim ? &me->tpcs : NULL,
			      me->seen, me->n_seen, 0, &next, NULL);
	if (step == NVT_STEP_CONFIRM) {
		me->confirmed = 1;
		me->state = 1;
	} else if (step == NVT_STEP_CLAIM) {
		me->tpcs = next;
		me->has_claim = 1;
	} else if (step == NVT_STEP_WITHDRAW) {
		me->has_claim = 0;
	} else if (step == NVT_STEP_FULL) {
		me->has_claim = 0;
		me->state = 2;
	}
	me->next_read = 0;
	me->n_seen = 0;
}

/* Runs n claimers that each pick want on topo; returns how many confirmed,
 * or -1 if two confirmed picks overlap, one is not what was asked, or the
 * claimers did not finish. */
static int simulate_pick(int n, const struct nvt_topology *topo, const struct nvt_pick *want,
			 unsigned seed)
{
	struct sim s[SIM_MAX];
	int active = n, confirmed = 0;

	sim_seed = seed;
	for (int c = 0; c < n; c++) {
		memset(&s[c], 0, sizeof(s[c]));
		/* Some start in the same clock tick; PIDs out of start order. */
		s[c].who = who(100 + sim_rand() % 4, 1 + sim_rand() % 2, (int32_t)(1000 - c));
	}
	for (long t = 0; active && t < 1000000; t++) {
		int c = (int)(sim_rand() % (unsigned)n);
		if (s[c].state)
			continue;
		sim_act(s, n, c, topo, want);
		active -= s[c].state != 0;
	}
	if (active)
		return -1;
	for (int a = 0; a < n; a++) {
		if (s[a].state != 1)
			continue;
		confirmed++;
		if (!want->gpcs ? nvt_set_count(&s[a].tpcs) != want->count :
				  !whole_gpcs(topo, &s[a].tpcs, want->gpcs))
			return -1;
		for (int b = 0; b < a; b++) {
			struct nvt_tpcset both;
			nvt_set_and(&both, &s[a].tpcs, &s[b].tpcs);
			if (s[b].state == 1 && nvt_set_count(&both))
				return -1;
		}
	}
	return confirmed;
}

/* Runs n claimers of count TPCs each on 8 TPCs (see simulate_pick). */
static int simulate(int n, unsigned count, unsigned seed)
{
	struct nvt_pick want = {.count = count, .strategy = NVT_PACKED};

	return simulate_pick(n, &topo8, &want, seed);
}

static void test_simulated(void)
{
	int bad = 0;

	for (unsigned seed = 1; seed <= 2000; seed++) {
		/* Room for all: all confirm, on disjoint TPCs. */
		bad += simulate(4, 2, seed) != 4;
		bad += simulate(8, 1, seed) != 8;
		/* Room for four of five: four confirm, the fifth finds the GPU full. */
		bad += simulate(5, 2, seed) != 4;
	}
	CHECK(bad == 0);
	/* Whole GPCs: of gpcs8's four GPCs, two claimers of two GPCs (of at
	 * most 6 TPCs) each get two; a third finds no two whole GPCs left. */
	bad = 0;
	for (unsigned seed = 1; seed <= 2000; seed++) {
		struct nvt_pick gpcs = {.count = 6, .gpcs = 2, .strategy = NVT_PACKED},
				one = {.count = 8, .gpcs = 1, .strategy = NVT_PACKED};
		bad += simulate_pick(2, &gpcs8, &gpcs, seed) != 2;
		bad += simulate_pick(3, &gpcs8, &gpcs, seed) != 2;
		bad += simulate_pick(5, &gpcs8, &one, seed) != 4;
	}
	CHECK(bad == 0);
}

/* -n --memory-half: a pick only in, or first in, a set of TPCs. */
static void test_near(void)
{
	struct nvt_claimer me = who(1000, 7, 50), other = who(999, 7, 60);
	struct nvt_pick want = {.count = 2, .strategy = NVT_PACKED};
	struct nvt_tpcset next;
	struct nvt_held h[1] = {0};
	unsigned free_units = 99;

	/* Only in GPCs 4-5 and 6 (TPCs 4-6): the pick lies there. */
	want.near.mode = NVT_NEAR_ONLY;
	want.near.tpcs = list("4-6");
	CHECK(nvt_claim_step(&gpcs8, &want, &me, NULL, h, 0, 0, &next, &free_units) == NVT_STEP_CLAIM);
	CHECK(same(&next, "4-5") && free_units == 3);
	/* Another task holds 4-5: one TPC is left there, so it does not fit, and
	 * the count of what is free is of the near TPCs only. */
	h[0] = held(other, 0, "4-5");
	CHECK(nvt_claim_step(&gpcs8, &want, &me, NULL, h, 1, 0, &next, &free_units) == NVT_STEP_FULL);
	CHECK(free_units == 1);
	/* Preferred, not required: elsewhere when the near TPCs cannot hold it. */
	want.near.mode = NVT_NEAR_PREFER;
	CHECK(nvt_claim_step(&gpcs8, &want, &me, NULL, h, 1, 0, &next, &free_units) == NVT_STEP_CLAIM);
	CHECK(same(&next, "6-7") && free_units == 6);
	/* And there when they can. */
	want.near.tpcs = list("0-3");
	CHECK(nvt_claim_step(&gpcs8, &want, &me, NULL, h, 1, 0, &next, NULL) == NVT_STEP_CLAIM);
	CHECK(nvt_set_count(&next) == 2 && nvt_set_highest(&next) <= 3);
	/* Whole GPCs, only among the near TPCs: GPC 0 (0-3) is whole there, 4-5 is held. */
	want = (struct nvt_pick){.count = 4, .gpcs = 1, .strategy = NVT_PACKED};
	want.near.mode = NVT_NEAR_ONLY;
	want.near.tpcs = list("0-3,6");
	CHECK(nvt_claim_step(&gpcs8, &want, &me, NULL, h, 1, 0, &next, NULL) == NVT_STEP_CLAIM);
	CHECK(same(&next, "0-3"));
	want.near.tpcs = list("4-5");
	CHECK(nvt_claim_step(&gpcs8, &want, &me, NULL, h, 1, 0, &next, NULL) == NVT_STEP_FULL);
}

int main(void)
{
	nvt_topo_identity(&topo8, 8);
	nvt_topo_identity(&gpcs8, 8);
	gpcs8.n_gpcs = 4;
	for (unsigned t = 0; t < 8; t++)
		gpcs8.gpc[t] = t < 4 ? 0 : t < 6 ? 1 : t - 4;
	test_order();
	test_steps();
	test_mem_steps();
	test_gpc_steps();
	test_near();
	test_simulated();
	return CHECK_DONE();
}
