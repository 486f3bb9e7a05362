/*
 * topopick.c - choosing TPCs for the user (-n, claims, the Slurm plugin):
 * the picking part of topo.h, apart from the topology's maths and text
 * forms (topo.c). Pure code.
 *
 * SPDX-License-Identifier: MIT
 */
#include "topo.h"
#include "tpcset.h"

#include <stdlib.h>
#include <string.h>

/* ---- Choosing TPCs for the user (-n) --------------------------------- */

static const char *const strategy_names[] = {
	[NVT_PACKED] = "packed", [NVT_SPREAD] = "spread", [NVT_CLUSTERS] = "clusters"};

int nvt_strategy_parse(const char *text, enum nvt_strategy *out)
{
	for (unsigned s = 0; s < sizeof(strategy_names) / sizeof(strategy_names[0]); s++)
		if (text && !strcmp(text, strategy_names[s])) {
			*out = (enum nvt_strategy)s;
			return 0;
		}
	return -1;
}

const char *nvt_strategy_name(enum nvt_strategy s)
{
	return (unsigned)s < sizeof(strategy_names) / sizeof(strategy_names[0]) ? strategy_names[s]
										  : "packed";
}

/* Takes up to want TPCs of GPC g (lowest first) from avail into out. */
static unsigned take_from_gpc(const struct nvt_topology *topo, struct nvt_tpcset *avail, unsigned g,
			      unsigned want, struct nvt_tpcset *out)
{
	unsigned taken = 0;
	for (unsigned t = 0; t < topo->n_tpcs && taken < want; t++) {
		if (topo->gpc[t] == g && nvt_set_has(avail, t)) {
			nvt_set_add(out, t);
			avail->w[t / 64] &= ~((uint64_t)1 << (t % 64));
			taken++;
		}
	}
	return taken;
}

static int pick_without_gpcs(const struct nvt_topology *topo, const struct nvt_tpcset *avail,
			     unsigned count, enum nvt_strategy strategy, struct nvt_tpcset *out)
{
	unsigned list[NVT_MAX_TPCS], n = 0;

	for (unsigned t = 0; t < topo->n_tpcs; t++)
		if (nvt_set_has(avail, t))
			list[n++] = t;
	if (n < count)
		return -1;
	for (unsigned i = 0; i < count; i++)
		nvt_set_add(out, list[strategy == NVT_SPREAD ? (unsigned)((uint64_t)i * n / count) : i]);
	return 0;
}

/* Free TPCs of each GPC in avail (a topology that is not nvt_topo_validate's counts
 * only the TPCs and GPCs inside the arrays). */
void nvt_topo_gpc_counts(const struct nvt_topology *topo, const struct nvt_tpcset *avail,
			 unsigned free_[NVT_MAX_GPCS])
{
	memset(free_, 0, NVT_MAX_GPCS * sizeof(free_[0]));
	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++)
		if (topo->gpc[t] < NVT_MAX_GPCS)
			free_[topo->gpc[t]] += (unsigned)nvt_set_has(avail, t);
}

/*
 * NVT_CLUSTERS: a GPC of s SMs holds floor(s / k) clusters of k SMs, so a
 * partition holds as many as an MPS share of its size, floor(SMs / k) (as
 * measured on an H100), when all its GPCs but one take a multiple of 16 SMs.
 */
static int pick_clusters(const struct nvt_topology *topo, struct nvt_tpcset *avail, unsigned count,
			 struct nvt_tpcset *out)
{
	unsigned free_[NVT_MAX_GPCS], n_g = topo->n_gpcs, left = count;

	while (left > 0) {
		unsigned pick = n_g, amount = 0;
		nvt_topo_gpc_counts(topo, avail, free_);
		if (left >= NVT_CLUSTER_BLOCK) {
			/* A block: from the GPC that leaves the fewest TPCs over. */
			for (unsigned g = 0; g < n_g; g++)
				if (free_[g] >= NVT_CLUSTER_BLOCK &&
				    (pick == n_g || free_[g] % NVT_CLUSTER_BLOCK < free_[pick] % NVT_CLUSTER_BLOCK))
					pick = g;
			amount = NVT_CLUSTER_BLOCK;
		}
		if (pick == n_g) {
			/* The rest in one GPC: the one with the fewest to spare. */
			for (unsigned g = 0; g < n_g; g++)
				if (free_[g] >= left && (pick == n_g || free_[g] < free_[pick]))
					pick = g;
			amount = left;
		}
		if (pick == n_g) {
			/* Scattered: an even share of the GPC with the most free. */
			for (unsigned g = 0; g < n_g; g++)
				if (free_[g] && (pick == n_g || free_[g] > free_[pick]))
					pick = g;
			if (pick == n_g)
				return -1;
			amount = free_[pick] < left ? free_[pick] : left;
			if (amount > 1 && amount % 2)
				amount--;
		}
		left -= take_from_gpc(topo, avail, pick, amount, out);
	}
	return 0;
}

unsigned nvt_topo_cluster_capacity(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs,
				   unsigned cluster_tpcs)
{
	struct nvt_tpcset all, in;
	unsigned per[NVT_MAX_GPCS], sum = 0;

	if (!cluster_tpcs)
		return 0;
	nvt_topo_all(topo, &all);
	nvt_set_and(&in, tpcs, &all);
	if (!topo->n_gpcs)
		return nvt_set_count(&in) / cluster_tpcs;
	nvt_topo_gpc_counts(topo, &in, per);
	for (unsigned g = 0; g < topo->n_gpcs && g < NVT_MAX_GPCS; g++)
		sum += per[g] / cluster_tpcs;
	return sum;
}

/* NVT_SPREAD: one TPC of each GPC in turn. */
static int pick_spread(const struct nvt_topology *topo, struct nvt_tpcset *avail, unsigned count,
		       struct nvt_tpcset *out)
{
	unsigned taken = 0;

	while (taken < count) {
		unsigned before = taken;
		for (unsigned g = 0; g < topo->n_gpcs && taken < count; g++)
			taken += take_from_gpc(topo, avail, g, 1, out);
		if (taken == before)
			return -1;
	}
	return 0;
}

/* Packed's top-up from taken to count TPCs: first the GPC that alone holds the rest
 * (the smallest such), else the fullest GPCs one after another. */
static int top_up(const struct nvt_topology *topo, struct nvt_tpcset *avail, unsigned taken,
		  unsigned count, struct nvt_tpcset *out)
{
	unsigned free_[NVT_MAX_GPCS], n_g = topo->n_gpcs;

	while (taken < count) {
		unsigned want = count - taken, pick = n_g, pick_free = 0;
		nvt_topo_gpc_counts(topo, avail, free_);
		for (unsigned g = 0; g < n_g; g++)
			if (free_[g] >= want && (pick == n_g || free_[g] < pick_free))
				pick = g, pick_free = free_[g];
		if (pick == n_g)
			for (unsigned g = 0; g < n_g; g++)
				if (free_[g] > pick_free)
					pick = g, pick_free = free_[g];
		if (pick == n_g)
			return -1;
		taken += take_from_gpc(topo, avail, pick, want, out);
	}
	return 0;
}

/*
 * NVT_PACKED: best[g][s] = fewest whole free GPCs among the first g that add
 * up to s TPCs (0/1 knapsack; a later GPC replaces an earlier choice only if
 * strictly better, so ties keep the lower GPCs); the largest sum up to count
 * is taken, then topped up.
 */
static int pick_packed(const struct nvt_topology *topo, struct nvt_tpcset *avail, unsigned count,
		       struct nvt_tpcset *out)
{
	unsigned char best[NVT_MAX_GPCS + 1][NVT_MAX_TPCS + 1]; /* 16.7 KiB */
	unsigned size[NVT_MAX_GPCS] = {0}, free_[NVT_MAX_GPCS], n_g = topo->n_gpcs;
	unsigned s, sum, taken = 0;

	for (unsigned t = 0; t < topo->n_tpcs; t++)
		size[topo->gpc[t]]++;
	nvt_topo_gpc_counts(topo, avail, free_);
	memset(best[0], 0xff, sizeof(best[0]));
	best[0][0] = 0;
	for (unsigned g = 0; g < n_g; g++) {
		memcpy(best[g + 1], best[g], sizeof(best[g]));
		if (free_[g] != size[g])
			continue; /* not whole */
		for (s = size[g]; s <= count; s++)
			if (best[g][s - size[g]] != 0xff && best[g][s - size[g]] + 1 < best[g + 1][s])
				best[g + 1][s] = (unsigned char)(best[g][s - size[g]] + 1);
	}
	for (sum = count; best[n_g][sum] == 0xff; sum--)
		;
	for (unsigned g = n_g, left = sum; g-- > 0 && left > 0;) {
		if (best[g + 1][left] != best[g][left]) {
			taken += take_from_gpc(topo, avail, g, size[g], out);
			left -= size[g];
		}
	}
	return top_up(topo, avail, taken, count, out);
}

int nvt_topo_pick(const struct nvt_topology *topo, const struct nvt_tpcset *available,
		  unsigned count, enum nvt_strategy strategy, struct nvt_tpcset *out)
{
	struct nvt_tpcset avail, all;

	nvt_topo_all(topo, &all);
	nvt_set_and(&avail, available, &all);
	nvt_set_clear(out);
	if (count == 0 || nvt_set_count(&avail) < count)
		return -1;
	if (!topo->n_gpcs)
		return pick_without_gpcs(topo, &avail, count, strategy, out);
	if (strategy == NVT_CLUSTERS)
		return pick_clusters(topo, &avail, count, out);
	if (strategy == NVT_SPREAD)
		return pick_spread(topo, &avail, count, out);
	return pick_packed(topo, &avail, count, out);
}

/* A GPC's size, for sorting: its TPC count and number. */
struct gpc_size {
	unsigned tpcs, gpc;
};

static int by_size_down(const void *a, const void *b)
{
	const struct gpc_size *x = a, *y = b;

	if (x->tpcs != y->tpcs)
		return x->tpcs < y->tpcs ? 1 : -1;
	return x->gpc < y->gpc ? -1 : x->gpc > y->gpc;
}

int nvt_topo_pick_gpcs(const struct nvt_topology *topo, const struct nvt_tpcset *available,
		       unsigned n, unsigned max_tpcs, struct nvt_tpcset *out)
{
	struct gpc_size whole[NVT_MAX_GPCS];
	unsigned count = 0;

	nvt_set_clear(out);
	if (!topo->n_gpcs || topo->n_gpcs > NVT_MAX_GPCS || n == 0)
		return -1;
	for (unsigned g = 0; g < topo->n_gpcs; g++) {
		unsigned size = 0, missing = 0;
		for (unsigned t = 0; t < topo->n_tpcs; t++)
			if (topo->gpc[t] == g) {
				size++;
				missing += !nvt_set_has(available, t);
			}
		if (size && !missing)
			whole[count++] = (struct gpc_size){size, g};
	}
	if (count < n)
		return -1;
	qsort(whole, count, sizeof(whole[0]), by_size_down);
	/* The largest n, else the smallest n: whole[0..n-1] or whole[count-n..]. */
	for (int largest = 1; largest >= 0; largest--) {
		unsigned first = largest ? 0 : count - n, sum = 0;
		for (unsigned i = first; i < first + n; i++)
			sum += whole[i].tpcs;
		if (sum > max_tpcs)
			continue;
		for (unsigned t = 0; t < topo->n_tpcs; t++)
			for (unsigned i = first; i < first + n; i++)
				if (topo->gpc[t] == whole[i].gpc)
					nvt_set_add(out, t);
		return (int)sum;
	}
	return -1;
}
