/*
 * test_smcount.c - the SM count a partitioned program is told, and whether a
 * cooperative grid fits (src/core/smcount.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#include "h100_fixture.h"
#include "core/smcount.h"
#include "core/topo.h"
#include "core/tpcset.h"

static struct nvt_tpcset set_of(const char *list)
{
	struct nvt_tpcset s;
	nvt_set_clear(&s);
	CHECK(nvt_parse_list(list, NVT_MAX_TPCS, &s) == 0);
	return s;
}

static struct nvt_topology h100(void)
{
	struct nvt_topology t;
	nvt_topo_identity(&t, 66);
	for (unsigned i = 0; i < 66; i++) {
		t.hw_bit[i] = h100_bits[i];
		t.gpc[i] = h100_gpc(i);
	}
	t.n_gpcs = 12;
	t.flags = NVT_TOPO_CALIBRATED;
	t.tmd_layout = NVT_TMD_V04_00;
	t.cc_major = 9;
	return t;
}

static void test_words(void)
{
	int mode = -7;

	CHECK(nvt_sm_count_parse(NULL, &mode) == 0 && mode == NVT_SM_COUNT_PARTITION);
	CHECK(nvt_sm_count_parse("", &mode) == 0 && mode == NVT_SM_COUNT_PARTITION);
	CHECK(nvt_sm_count_parse("follow", &mode) == 0 && mode == NVT_SM_COUNT_FOLLOW);
	CHECK(nvt_sm_count_parse("gpu", &mode) == 0 && mode == NVT_SM_COUNT_GPU);
	CHECK(nvt_sm_count_parse("partition", &mode) == 0 && mode == NVT_SM_COUNT_PARTITION);
	CHECK(nvt_sm_count_parse("fit", &mode) == 0 && mode == NVT_SM_COUNT_FIT);
	/* Anything else is refused and changes nothing. */
	mode = NVT_SM_COUNT_FOLLOW;
	CHECK(nvt_sm_count_parse("GPU", &mode) == -1 && mode == NVT_SM_COUNT_FOLLOW);
	CHECK(nvt_sm_count_parse("0", &mode) == -1);
	CHECK(nvt_sm_count_parse("108", &mode) == -1);
	CHECK(nvt_sm_count_parse("gpu ", &mode) == -1);
	CHECK(nvt_sm_count_parse("follo", &mode) == -1 && mode == NVT_SM_COUNT_FOLLOW);
	CHECK(nvt_sm_count_parse("fits", &mode) == -1 && mode == NVT_SM_COUNT_FOLLOW);
	for (int m = 0; m < 4; m++) {
		int back = -1;
		CHECK(nvt_sm_count_parse(nvt_sm_count_name(m), &back) == 0 && back == m);
	}
	CHECK_STR(nvt_sm_count_name(4), "?");
	CHECK_STR(nvt_sm_count_name(-1), "?");
}

static void test_partition_sms(void)
{
	struct nvt_topology t = h100();
	struct nvt_tpcset s = set_of("0-3");
	uint32_t disable[NVT_TMD_MASK_WORDS];

	CHECK(nvt_topo_sms(&t, &s) == 8);
	s = set_of("0-65");
	CHECK(nvt_topo_sms(&t, &s) == 132);
	/* TPCs the GPU does not have count for nothing. */
	s = set_of("60-100");
	CHECK(nvt_topo_sms(&t, &s) == 12);
	nvt_set_clear(&s);
	CHECK(nvt_topo_sms(&t, &s) == 0);
	/* GPC 1 (8 TPCs), GPC 0 (4), GPCs 6 and 7 (9 each). */
	CHECK(nvt_topo_gpc_tpcs(&t, &(struct nvt_tpcset){{1ull << 1}}, &s) == 0);
	CHECK(nvt_topo_sms(&t, &s) == 16);
	CHECK(nvt_topo_gpc_tpcs(&t, &(struct nvt_tpcset){{1ull}}, &s) == 0);
	CHECK(nvt_topo_sms(&t, &s) == 8);
	CHECK(nvt_topo_gpc_tpcs(&t, &(struct nvt_tpcset){{(1ull << 6) | (1ull << 7)}}, &s) == 0);
	CHECK(nvt_topo_sms(&t, &s) == 36);

	/* A disable mask tells the same count, whatever map the bits went through. */
	s = set_of("0-3");
	CHECK(nvt_topo_disable(&t, &s, disable) == 4);
	CHECK(nvt_disable_sms(disable) == 8);
	s = set_of("5,17,40-45,62-65");
	CHECK(nvt_topo_disable(&t, &s, disable) == 12);
	CHECK(nvt_disable_sms(disable) == 24);
	nvt_topo_all(&t, &s);
	CHECK(nvt_topo_disable(&t, &s, disable) == 66);
	CHECK(nvt_disable_sms(disable) == 132);
	/* The words above NVT_HW_BITS (V05_00's upper half) are not TPCs of the mask. */
	disable[5] = 0;
	CHECK(nvt_disable_sms(disable) == 132);
}

/* What "fit" tells, worked out by hand: a TPC list, or GPCs (a bit each). */
/* A case's partition: the TPCs of list tpcs (NULL or "": none), or of the GPCs of mask gpcs. */
static struct nvt_tpcset case_set(const struct nvt_topology *t, const char *tpcs, uint64_t gpcs)
{
	struct nvt_tpcset s;
	nvt_set_clear(&s);
	if (tpcs && *tpcs)
		s = set_of(tpcs);
	if (gpcs)
		CHECK(nvt_topo_gpc_tpcs(t, &(struct nvt_tpcset){{gpcs}}, &s) == 0);
	return s;
}

static void test_fit_cases(void)
{
	static const struct {
		const char *tpcs;
		uint64_t gpcs;
		unsigned want;
		const char *why;
	} cases[] = {
		{NULL, 0xceull, 83, "GPCs of 16, 16, 16, 18, 18 SMs (84): 42 clusters of 2, 20 of 4 "
				     "(MPS's share of 84 holds 21), 10 of 8, 5 of 16: min(84, 85, 83, 87, 95)"},
		{NULL, 0x3eull, 80, "whole GPCs of 16 SMs leave no cluster over: their full count"},
		{NULL, 0x2ull, 16, "one GPC of 16 SMs"},
		{NULL, 0xc0ull, 35, "GPCs 6 and 7, 18 SMs each: 8 clusters of 4 (35 / 4), not 9"},
		{"1,9,17,2,10,18", 0, 11, "6 SMs in each of two GPCs: 2 clusters of 4 (11 / 4); "
					  "clusters of 8 and 16, which no GPC holds, bound nothing"},
		{"1,9,17,25", 0, 8, "4 TPCs of GPC 1: 2 clusters of 4 and 1 of 8 hold all 8 SMs"},
		{"5", 0, 2, "one TPC: only clusters of 2 SMs, and 1 of them fits"},
		{"", 0, 0, "no TPC"},
		{"0-65", 0, 132, "every TPC: the GPU's own count, as without nvtaskset"},
		{"0-70", 0, 132, "TPCs the GPU does not have are no others"},
	};
	struct nvt_topology t = h100(), bad;
	struct nvt_tpcset s;
	unsigned got;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = case_set(&t, cases[i].tpcs, cases[i].gpcs);
		got = nvt_sm_count_fit(&t, &s);
		CHECK(got == cases[i].want);
		if (got != cases[i].want)
			fprintf(stderr, "  %s: told %u, want %u\n", cases[i].why, got, cases[i].want);
	}
	/* GPCs unknown, or a topology that names a GPC it does not have: the partition's count. */
	nvt_topo_identity(&bad, 66);
	s = set_of("1,9,17,2,10,18");
	CHECK(nvt_sm_count_fit(&bad, &s) == 12);
	bad = t;
	bad.gpc[9] = 200;
	CHECK(nvt_sm_count_fit(&bad, &s) == 12);
	/* Counting clusters on such a topology stays inside its arrays (a build with
	 * -fsanitize=address sees a write past them): TPC 9, of a GPC past them, counts in
	 * none; TPCs 1 and 17 count. */
	s = set_of("1,9,17");
	CHECK(nvt_topo_cluster_capacity(&bad, &s, 1) == 2);
	bad.n_tpcs = 300;
	bad.n_gpcs = 200;
	CHECK(nvt_topo_cluster_capacity(&bad, &s, 1) == 2);
}

static unsigned fit_seed = 12345;

static unsigned fit_rand(void)
{
	fit_seed = fit_seed * 1103515245u + 12345u;
	return fit_seed >> 16;
}

/*
 * Every cluster size's bound, by brute force on random partitions of the
 * H100 map: the count told is the largest c up to the partition's SMs for
 * which floor(c / k) clusters of k SMs fit in its GPCs for k = 2, 4, 8, 16.
 */
static void test_fit_random(void)
{
	struct nvt_topology t = h100();

	for (int round = 0; round < 4000; round++) {
		struct nvt_tpcset s;
		unsigned per_gpc[12] = {0}, sms = 0, want = 0, odds = 1 + fit_rand() % 100;
		nvt_set_clear(&s);
		for (unsigned i = 0; i < 66; i++)
			if (fit_rand() % 100 < odds) {
				nvt_set_add(&s, i);
				per_gpc[h100_gpc(i)] += 2;
				sms += 2;
			}
		/* Every TPC: the GPU's count; else the first c down from sms that fits for every
		 * cluster size some GPC holds (0 always does). */
		for (unsigned c = sms, fits = 0; !fits; c--) {
			fits = 1;
			for (unsigned k = 2; k <= 16; k *= 2) {
				unsigned held = 0;
				for (unsigned g = 0; g < 12; g++)
					held += per_gpc[g] / k;
				fits &= !held || c / k <= held || sms == 132;
			}
			want = c;
		}
		CHECK(nvt_sm_count_fit(&t, &s) == want);
		if (nvt_sm_count_fit(&t, &s) != want) {
			fprintf(stderr, "round %d: %u SMs, told %u, want %u\n", round, sms,
				nvt_sm_count_fit(&t, &s), want);
			break;
		}
	}
}

static void test_told(void)
{
	CHECK(nvt_sm_count_told(132, 8) == 8);
	CHECK(nvt_sm_count_told(132, 132) == 132);
	CHECK(nvt_sm_count_told(132, 0) == 132);   /* no partition */
	CHECK(nvt_sm_count_told(108, 132) == 108); /* MPS's percentage is lower */
	CHECK(nvt_sm_count_told(108, 100) == 100);
	CHECK(nvt_sm_count_told(0, 8) == 0);       /* the driver's answer is kept as it is */
	CHECK(nvt_sm_count_told(-1, 8) == -1);
}

static void test_coop(void)
{
	/* 8 blocks an SM on 8 SMs: 64 fit, 65 never run together. */
	CHECK(nvt_coop_fits(64, 8, 8));
	CHECK(!nvt_coop_fits(65, 8, 8));
	/* A grid sized by the whole H100 (132 SMs) on a partition of 4 TPCs. */
	CHECK(!nvt_coop_fits(8 * 132, 8, 8));
	CHECK(nvt_coop_fits(8 * 132, 8, 132));
	/* Occupancy unknown: one block an SM. */
	CHECK(nvt_coop_fits(8, 0, 8) && !nvt_coop_fits(9, 0, 8));
	CHECK(nvt_coop_fits(0, 0, 0));
	CHECK(!nvt_coop_fits(1, 4, 0));
	CHECK(nvt_coop_fits(UINT32_MAX * 2ull, UINT32_MAX, 2));
	CHECK(!nvt_coop_fits(UINT32_MAX * 2ull + 1, UINT32_MAX, 2));
}

static struct nvt_slot_view view_of(const struct nvt_topology *topo, const char *list)
{
	struct nvt_slot_view v;

	memset(&v, 0, sizeof(v));
	v.topo = *topo;
	v.state = list ? NVT_SLOT_SET : NVT_SLOT_UNSET;
	if (list)
		v.tpcs = set_of(list);
	return v;
}

/* --sm-limit's percentage: the largest share of a GPU one partition holds, rounded up. */
static void test_sm_limit_percent(void)
{
	struct nvt_topology t = h100(), none;
	struct nvt_slot_view v[3];

	memset(&none, 0, sizeof(none));
	v[0] = view_of(&t, "0-32"); /* 33 of 66 */
	CHECK(nvt_sm_limit_percent(v, 1) == 50);
	v[0] = view_of(&t, "0-6"); /* 7 of 66: 10.6 % */
	CHECK(nvt_sm_limit_percent(v, 1) == 11);
	v[1] = view_of(&t, "0-32");
	CHECK(nvt_sm_limit_percent(v, 2) == 50); /* the larger share of two GPUs */
	v[1] = view_of(&t, NULL);                /* an unpartitioned GPU: all of it */
	CHECK(nvt_sm_limit_percent(v, 2) == 100);
	v[0] = view_of(&t, "0"); /* 1 of 66: 1.5 % */
	CHECK(nvt_sm_limit_percent(v, 1) == 2);
	v[0] = view_of(&t, "0-65,100"); /* a TPC the GPU does not have counts for nothing */
	CHECK(nvt_sm_limit_percent(v, 1) == 100);
	v[0] = view_of(&none, "0-3"); /* an unknown GPU is left out: at least 1 */
	CHECK(nvt_sm_limit_percent(v, 1) == 1);
	CHECK(nvt_sm_limit_percent(v, 0) == 1);
}

/* Whether MPS's limit leaves SMs of a partition idle, and the pick --sm-limit implies. */
static void test_sm_limit_rules(void)
{
	struct nvt_topology t = h100();
	struct nvt_slot_view v[2];
	struct nvt_tpcset gpc1 = set_of("1,9,17,25,32,39,46,53"), spread = set_of("0-7");
	struct nvt_tpcset block_and_rest = set_of("1,9,17,25,32,39,46,53,2,10");
	enum nvt_strategy s;

	/* A whole GPC of 8 TPCs holds 4 clusters of 4 SMs, 2 of 8, 1 of 16: as MPS's share. */
	CHECK(nvt_cluster_aligned(&t, &gpc1));
	/* One TPC in each of 8 GPCs holds no cluster of 4 SMs. */
	CHECK(!nvt_cluster_aligned(&t, &spread));
	/* A block of 8 and 2 TPCs of another GPC: 5 of 4 SMs, 2 of 8, 1 of 16 (10 / 8). */
	CHECK(nvt_cluster_aligned(&t, &block_and_rest));
	v[0] = view_of(&t, "0-7");
	CHECK(nvt_sm_limit_leaves_idle(v, 1));
	v[0] = view_of(&t, "1,9,17,25,32,39,46,53");
	CHECK(!nvt_sm_limit_leaves_idle(v, 1)); /* whole GPCs */
	v[0] = view_of(&t, "1,9,17,25,32,39,46,53,2,10");
	CHECK(!nvt_sm_limit_leaves_idle(v, 1)); /* part of one GPC only */
	v[0] = view_of(&t, "1,9,17,2,10,18");
	CHECK(nvt_sm_limit_leaves_idle(v, 1)); /* part of two, 3 TPCs each: 2 clusters of 4 SMs, not 3 */
	v[1] = view_of(&t, "0-7");
	v[1].state = NVT_SLOT_UNSET; /* an unpartitioned slot's TPCs do not count */
	v[0] = view_of(&t, "1,9,17,25,32,39,46,53");
	CHECK(!nvt_sm_limit_leaves_idle(v, 2));
	v[1].state = NVT_SLOT_SET;
	CHECK(nvt_sm_limit_leaves_idle(v, 2));

	s = NVT_PACKED; /* not given: clusters */
	CHECK(nvt_sm_limit_strategy(0, &s) == 0 && s == NVT_CLUSTERS);
	s = NVT_PACKED; /* given: kept */
	CHECK(nvt_sm_limit_strategy(1, &s) == 0 && s == NVT_PACKED);
	s = NVT_SPREAD;
	CHECK(nvt_sm_limit_strategy(1, &s) == -1 && s == NVT_SPREAD);
}

/* Clusters of k CTAs, b to an SM, that the TPCs of s hold at once on the H100 map. */
static unsigned held_by(const struct nvt_tpcset *s, unsigned b, unsigned k)
{
	unsigned per_gpc[12] = {0}, held = 0;
	for (unsigned i = 0; i < 66; i++)
		per_gpc[h100_gpc(i)] += 2u * (unsigned)nvt_set_has(s, i);
	for (unsigned g = 0; g < 12; g++)
		held += per_gpc[g] * b / k;
	return held;
}

static void test_clusters_told_cases(void)
{
	static const struct {
		const char *tpcs;
		uint64_t gpcs;
		unsigned cluster;
		int driver, want;
		const char *why;
	} cases[] = {
		{NULL, 0xceull, 4, 30, 20, "GPCs of 16, 16, 16, 18, 18 SMs: 4 + 4 + 4 + 4 + 4 clusters of 4 "
					   "CTAs of one SM (the whole GPU: 30)"},
		{NULL, 0xceull, 2, 66, 42, "the same, clusters of 2: 8 + 8 + 8 + 9 + 9"},
		{NULL, 0xceull, 16, 7, 5, "the same, clusters of 16: one in each GPC"},
		{NULL, 0xceull, 4, 21, 20, "MPS's share of 84 SMs answered 21: the partition holds 20"},
		{NULL, 0xceull, 4, 12, 12, "an answer below the partition's stays"},
		{NULL, 0xceull, 4, 264, 168, "8 CTAs to an SM (the whole GPU's 264 clusters of 4): "
					     "16 + 16 + 16 + 18 + 18 SMs hold 2 clusters each"},
		{"1,2,3,4", 0, 4, 30, 0, "4 TPCs in 4 GPCs: no GPC holds a cluster of 4 SMs, as MPS's share "
					   "of 8 SMs holds none of 16"},
		{"1,2,3,4", 0, 2, 66, 4, "4 TPCs in 4 GPCs: 4 clusters of 2"},
		{"1,9,17,25", 0, 4, 30, 2, "4 TPCs of GPC 1 (SM IDs stripe over GPCs): 2 clusters of 4"},
		{"0-65", 0, 4, 30, 30, "every TPC: the driver's answer"},
		{"0-70", 0, 4, 30, 30, "TPCs the GPU does not have are no others"},
		{"1-3", 0, 0, 30, 30, "no cluster dimension: the driver's answer"},
		{"1-3", 0, 4, 0, 0, "the driver said none fit"},
		{"1-3", 0, 4, -1, -1, "nor does a negative answer change"},
	};
	struct nvt_topology t = h100(), bad;
	struct nvt_tpcset s;
	int got;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = case_set(&t, cases[i].tpcs, cases[i].gpcs);
		got = nvt_cluster_count_told(&t, &s, cases[i].cluster, cases[i].driver);
		CHECK(got == cases[i].want);
		if (got != cases[i].want)
			fprintf(stderr, "  %s: told %d, want %d\n", cases[i].why, got, cases[i].want);
	}
	/* GPCs unknown, or a GPC number past the table: the driver's answer. */
	nvt_topo_identity(&bad, 66);
	s = set_of("1,9,17,2,10,18");
	CHECK(nvt_cluster_count_told(&bad, &s, 4, 30) == 30);
	bad = t;
	bad.gpc[9] = 200;
	CHECK(nvt_cluster_count_told(&bad, &s, 4, 30) == 30);
}

/*
 * By brute force on random partitions of the H100 map, for clusters of 1-16
 * CTAs and 1-16 of them to an SM: told what the partition's GPCs hold, at
 * most what the whole GPU's hold (the driver's answer outside MPS).
 */
static void test_clusters_told_random(void)
{
	struct nvt_topology t = h100();
	struct nvt_tpcset all;

	nvt_topo_all(&t, &all);
	for (int round = 0; round < 4000; round++) {
		struct nvt_tpcset s;
		unsigned odds = 1 + fit_rand() % 100, k = 1 + fit_rand() % 16, b = 1 + fit_rand() % 16;
		int driver, want;
		nvt_set_clear(&s);
		for (unsigned i = 0; i < 66; i++)
			if (fit_rand() % 100 < odds)
				nvt_set_add(&s, i);
		driver = (int)held_by(&all, b, k);
		want = nvt_set_count(&s) == 66 ? driver : (int)held_by(&s, b, k);
		CHECK(nvt_cluster_count_told(&t, &s, k, driver) == want);
		if (nvt_cluster_count_told(&t, &s, k, driver) != want) {
			fprintf(stderr, "round %d: %u TPCs, clusters of %u, %u to an SM: told %d, want %d\n", round,
				nvt_set_count(&s), k, b, nvt_cluster_count_told(&t, &s, k, driver), want);
			break;
		}
	}
}

int main(void)
{
	test_words();
	test_partition_sms();
	test_fit_cases();
	test_fit_random();
	test_clusters_told_cases();
	test_clusters_told_random();
	test_told();
	test_coop();
	test_sm_limit_percent();
	test_sm_limit_rules();
	return CHECK_DONE();
}
