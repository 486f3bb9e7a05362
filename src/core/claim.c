/*
 * claim.c - the rules of race-free TPC allocation, as pure functions. See
 * claim.h, and src/alloc/reserve.c for the protocol and why it is safe.
 *
 * SPDX-License-Identifier: MIT
 */
#include "claim.h"
#include "memlimit.h"
#include "tpcset.h"

void nvt_claimer_of(const struct nvt_segment *seg, struct nvt_claimer *out)
{
	out->start_time = seg->start_time;
	out->pidns = seg->pidns;
	out->pid = seg->pid;
}

int nvt_claimer_cmp(const struct nvt_claimer *a, const struct nvt_claimer *b)
{
	if (a->start_time != b->start_time)
		return a->start_time < b->start_time ? -1 : 1;
	if (a->pidns != b->pidns)
		return a->pidns < b->pidns ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return 0;
}

static int overlaps(const struct nvt_tpcset *a, const struct nvt_tpcset *b)
{
	struct nvt_tpcset both;

	nvt_set_and(&both, a, b);
	return nvt_set_count(&both) > 0;
}

static int pick_in(const struct nvt_topology *topo, const struct nvt_pick *want,
		   const struct nvt_tpcset *avail, struct nvt_tpcset *out)
{
	if (want->gpcs)
		return nvt_topo_pick_gpcs(topo, avail, want->gpcs, want->count, out) < 0 ? -1 : 0;
	return nvt_topo_pick(topo, avail, want->count, want->strategy, out);
}

/* What of avail want may take: all of it, or its near TPCs only. */
static const struct nvt_tpcset *usable(const struct nvt_pick *want, const struct nvt_tpcset *avail,
				       struct nvt_tpcset *buf)
{
	if (want->near.mode != NVT_NEAR_ONLY)
		return avail;
	nvt_set_and(buf, avail, &want->near.tpcs);
	return buf;
}

int nvt_pick_tpcs(const struct nvt_topology *topo, const struct nvt_pick *want,
		  const struct nvt_tpcset *avail, struct nvt_tpcset *out)
{
	struct nvt_tpcset in;

	if (want->near.mode != NVT_NEAR_NONE) {
		nvt_set_and(&in, avail, &want->near.tpcs);
		if (pick_in(topo, want, &in, out) == 0)
			return 0;
		if (want->near.mode == NVT_NEAR_ONLY)
			return -1;
	}
	return pick_in(topo, want, avail, out);
}

/* How many TPCs of avail (with want->gpcs: whole GPCs) there are. */
static unsigned free_units(const struct nvt_topology *topo, const struct nvt_pick *want,
			   const struct nvt_tpcset *all_avail)
{
	struct nvt_tpcset buf;
	const struct nvt_tpcset *avail = usable(want, all_avail, &buf);
	unsigned whole = 0;

	if (!want->gpcs)
		return nvt_set_count(avail);
	for (unsigned g = 0; g < topo->n_gpcs; g++) {
		struct nvt_tpcset one, gpc, missing;
		nvt_set_clear(&one);
		nvt_set_add(&one, g);
		if (nvt_topo_gpc_tpcs(topo, &one, &gpc))
			continue;
		nvt_set_andnot(&missing, &gpc, avail);
		whole += nvt_set_count(&gpc) && !nvt_set_count(&missing);
	}
	return whole;
}

/* Whether want fits in avail at all. */
static int fits(const struct nvt_topology *topo, const struct nvt_pick *want,
		const struct nvt_tpcset *avail)
{
	struct nvt_tpcset unused, buf;

	if (want->gpcs)
		return nvt_pick_tpcs(topo, want, avail, &unused) == 0;
	return nvt_set_count(usable(want, avail, &buf)) >= want->count;
}

int nvt_claim_step(const struct nvt_topology *topo, const struct nvt_pick *want,
		   const struct nvt_claimer *me, const struct nvt_tpcset *mine,
		   const struct nvt_held *held, int n, int claims_taken, struct nvt_tpcset *next,
		   unsigned *free_out)
{
	/* partitions: confirmed (and, with claims_taken, every claim); earlier
	 * and later: other claimers' claims, by their order against me. */
	struct nvt_tpcset partitions, confirmed, earlier, later, blocked, avail, all;

	nvt_set_clear(&partitions);
	nvt_set_clear(&confirmed);
	nvt_set_clear(&earlier);
	nvt_set_clear(&later);
	for (int i = 0; i < n; i++) {
		int order = nvt_claimer_cmp(&held[i].who, me);
		if (order == 0)
			continue; /* the caller's own segment */
		if (!held[i].claim)
			nvt_set_or(&confirmed, &confirmed, &held[i].tpcs);
		if (!held[i].claim || claims_taken)
			nvt_set_or(&partitions, &partitions, &held[i].tpcs);
		else if (order < 0)
			nvt_set_or(&earlier, &earlier, &held[i].tpcs);
		else
			nvt_set_or(&later, &later, &held[i].tpcs);
	}
	nvt_topo_all(topo, &all);
	if (free_out) {
		nvt_set_andnot(&avail, &all, &confirmed);
		*free_out = free_units(topo, want, &avail);
	}
	if (mine && nvt_set_count(mine)) {
		nvt_set_or(&blocked, &partitions, &earlier);
		if (!overlaps(mine, &blocked))
			return overlaps(mine, &later) ? NVT_STEP_WAIT : NVT_STEP_CONFIRM;
	}
	nvt_set_andnot(&avail, &all, &partitions);
	if (!fits(topo, want, &avail)) {
		/* Claims counted as partitions: would it fit without them? */
		nvt_set_andnot(&avail, &all, &confirmed);
		return claims_taken && fits(topo, want, &avail) ? NVT_STEP_STUCK : NVT_STEP_FULL;
	}
	/* Clear of every other task if it can be; else clear of what the
	 * later claimers claim only (they yield); else wait for the earlier. */
	nvt_set_andnot(&avail, &avail, &earlier);
	nvt_set_andnot(&blocked, &avail, &later);
	if (nvt_pick_tpcs(topo, want, &blocked, next) == 0 ||
	    nvt_pick_tpcs(topo, want, &avail, next) == 0)
		return NVT_STEP_CLAIM;
	return NVT_STEP_WITHDRAW;
}

/* a + b, at most UINT64_MAX. */
static uint64_t add_capped(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int nvt_claim_mem_step(uint64_t gpu_bytes, uint64_t want, const struct nvt_claimer *me,
		       const struct nvt_held *held, int n, int claims_taken, uint64_t *given_out)
{
	uint64_t firm = 0, later = 0;

	for (int i = 0; i < n; i++) {
		int order = nvt_claimer_cmp(&held[i].who, me);
		if (order == 0)
			continue; /* the caller's own segment */
		if (!held[i].claim || claims_taken || order < 0)
			firm = add_capped(firm, held[i].mem_limit);
		else
			later = add_capped(later, held[i].mem_limit);
	}
	if (given_out)
		*given_out = firm;
	if (!nvt_memlimit_has_room(gpu_bytes, firm, want))
		return NVT_STEP_FULL;
	return nvt_memlimit_has_room(gpu_bytes, add_capped(firm, later), want) ? NVT_STEP_CONFIRM
									       : NVT_STEP_WAIT;
}

int nvt_claim_whole_gpu_holder(const struct nvt_topology *topo, const struct nvt_held *held, int n)
{
	for (int k = 0; k < n; k++)
		if (!held[k].claim && held[k].prio.prio != NVT_PRIO_NONE && topo->n_tpcs &&
		    nvt_set_count(&held[k].tpcs) >= topo->n_tpcs)
			return k;
	return -1;
}
