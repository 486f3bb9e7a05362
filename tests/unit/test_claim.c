/* Unit tests: the rules of race-free allocation (src/claim.c), one round at a
 * time, then the whole protocol among simulated claimers whose reads and
 * writes interleave at random. SPDX-License-Identifier: MIT */
#include "check.h"
#include "claim.h"
#include "topo.h"
#include "tpcset.h"

#include <stdlib.h>

static struct nvt_topology topo8;

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
	h.who = w;
	h.claim = claim;
	h.tpcs = list(tpcs);
	return h;
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
	struct nvt_held h[4] = {{{0, 0, 0}, 0, {{0}}}};
	unsigned free_tpcs = 99;

	/* Nothing held: the first pick (identity topology, packed: the lowest TPCs). */
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, NULL, h, 0, 0, &next, &free_tpcs) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0-1") && free_tpcs == 8);
	/* A pick that nothing overlaps is confirmed; one that a partition, or an
	 * earlier claimer's claim, overlaps is picked again clear of everything. */
	mine = list("0-1");
	h[0] = held(late, 1, "4-5");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CONFIRM);
	h[0] = held(late, 0, "1");
	h[1] = held(late, 1, "2");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, &mine, h, 2, 0, &next, &free_tpcs) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0,3") && free_tpcs == 7);
	h[0] = held(early, 1, "1-2");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0,3"));
	/* Only a later claimer's claim overlaps: keep it and wait; after the
	 * timeout (claims_taken) it is taken, and the pick moves. */
	h[0] = held(late, 1, "1");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_WAIT);
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, &mine, h, 1, 1, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0,2"));
	/* The caller's own segment, should a scan return it, is nobody's. */
	h[0] = held(me, 0, "0-1");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CONFIRM);
	/* Full: fewer free of partitions than asked, whatever claims say. */
	h[0] = held(early, 0, "0-6");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, &mine, h, 1, 0, &next, &free_tpcs) ==
	      NVT_STEP_FULL);
	CHECK(free_tpcs == 1);
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, NULL, h, 1, 1, &next, &free_tpcs) ==
	      NVT_STEP_FULL);
	/* Room only under an earlier claimer's claim: hold nothing and wait. */
	h[0] = held(early, 1, "0-6");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, NULL, h, 1, 0, &next, &free_tpcs) ==
	      NVT_STEP_WITHDRAW);
	CHECK(free_tpcs == 8);
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, &mine, h, 1, 0, &next, NULL) ==
	      NVT_STEP_WITHDRAW);
	/* ... and after the timeout that is no longer worth waiting for. */
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, NULL, h, 1, 1, &next, &free_tpcs) ==
	      NVT_STEP_STUCK);
	CHECK(free_tpcs == 8);
	/* Room only under a later claimer's claim: the earlier claims it anyway
	 * (the later yields), so that it is never kept out by later claimers. */
	h[0] = held(late, 1, "0-6");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, NULL, h, 1, 0, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "0-1"));
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, NULL, h, 1, 1, &next, NULL) ==
	      NVT_STEP_STUCK);
	/* Clear of every claim when there is room, even a later claimer's. */
	h[0] = held(late, 1, "0-3");
	h[1] = held(early, 1, "4");
	CHECK(nvt_claim_step(&topo8, 2, NVT_PACKED, &me, NULL, h, 2, 0, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(same(&next, "5-6"));
	/* Spread and GPCs come from nvt_topo_pick. */
	CHECK(nvt_claim_step(&topo8, 2, NVT_SPREAD, &me, NULL, h, 0, 0, &next, NULL) ==
	      NVT_STEP_CLAIM);
	CHECK(nvt_set_count(&next) == 2);
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

/* One action of claimer c. */
static void sim_act(struct sim *s, int n, int c, unsigned count)
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
	step = nvt_claim_step(&topo8, count, NVT_PACKED, &me->who, me->has_claim ? &me->tpcs : NULL,
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

/* Runs n claimers of count TPCs each on 8 TPCs; returns how many confirmed,
 * or -1 if two confirmed picks overlap or the claimers did not finish. */
static int simulate(int n, unsigned count, unsigned seed)
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
		sim_act(s, n, c, count);
		active -= s[c].state != 0;
	}
	if (active)
		return -1;
	for (int a = 0; a < n; a++) {
		if (s[a].state != 1)
			continue;
		confirmed++;
		for (int b = 0; b < a; b++) {
			struct nvt_tpcset both;
			nvt_set_and(&both, &s[a].tpcs, &s[b].tpcs);
			if (s[b].state == 1 && nvt_set_count(&both))
				return -1;
		}
	}
	return confirmed;
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
}

int main(void)
{
	nvt_topo_identity(&topo8, 8);
	test_order();
	test_steps();
	test_simulated();
	return CHECK_DONE();
}
