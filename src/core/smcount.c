/*
 * smcount.c - the SM count a partitioned program is told, whether a
 * cooperative grid fits, and --sm-limit's rules (smcount.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "smcount.h"
#include "tpcset.h"

static const char *const mode_names[] = {"partition", "follow", "gpu", "fit"};

int nvt_sm_count_parse(const char *text, int *mode)
{
	if (!text || !*text) {
		*mode = NVT_SM_COUNT_PARTITION;
		return 0;
	}
	for (int m = 0; m < (int)(sizeof(mode_names) / sizeof(mode_names[0])); m++) {
		if (!strcmp(text, mode_names[m])) {
			*mode = m;
			return 0;
		}
	}
	return -1;
}

const char *nvt_sm_count_name(int mode)
{
	return mode >= 0 && mode < (int)(sizeof(mode_names) / sizeof(mode_names[0])) ? mode_names[mode]
										      : "?";
}

unsigned nvt_topo_sms(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs)
{
	unsigned n = 0;

	for (unsigned t = 0; t < topo->n_tpcs && t < NVT_MAX_TPCS; t++)
		n += (unsigned)nvt_set_has(tpcs, t);
	return n * NVT_SMS_PER_TPC;
}

unsigned nvt_sm_count_fit(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs)
{
	struct nvt_tpcset all, in;
	unsigned sms = nvt_topo_sms(topo, tpcs), fit = sms;

	nvt_topo_all(topo, &all);
	nvt_set_and(&in, tpcs, &all);
	if (!topo->n_gpcs || nvt_topo_validate(topo) || nvt_set_count(&in) == nvt_set_count(&all))
		return sms;
	/* Clusters of u TPCs, k = 2u SMs, up to 16 (as nvt_cluster_aligned counts):
	 * floor(c / k) <= H while c <= k H + k - 1. A size no GPC of the partition
	 * holds once (H = 0) bounds nothing: no grid of such clusters runs inside it
	 * whatever the count (the shim runs it on whole GPCs), and its bound, k - 1,
	 * would take most SMs from every other kernel. */
	for (unsigned u = 1; u <= NVT_CLUSTER_BLOCK; u *= 2) {
		unsigned k = u * NVT_SMS_PER_TPC, held = nvt_topo_cluster_capacity(topo, &in, u);
		if (held && k * held + k - 1 < fit)
			fit = k * held + k - 1;
	}
	return fit;
}

/* Clusters of cluster CTAs, b to an SM, that GPCs of per_gpc[] TPCs hold at once. */
static uint64_t clusters_held(const unsigned per_gpc[NVT_MAX_GPCS], unsigned n_gpcs, unsigned b,
			      unsigned cluster)
{
	uint64_t held = 0;

	for (unsigned g = 0; g < n_gpcs && g < NVT_MAX_GPCS; g++)
		held += (uint64_t)per_gpc[g] * NVT_SMS_PER_TPC * b / cluster;
	return held;
}

int nvt_cluster_count_told(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs,
			   unsigned cluster, int driver)
{
	/* More CTAs to an SM than an SM ever holds (Hopper: 32) are not looked for. */
	enum { MAX_PER_SM = 64 };
	struct nvt_tpcset all, in;
	unsigned whole[NVT_MAX_GPCS], part[NVT_MAX_GPCS], b = 1;
	uint64_t held;

	if (driver <= 0 || !cluster || !topo->n_gpcs || nvt_topo_validate(topo))
		return driver;
	nvt_topo_all(topo, &all);
	nvt_set_and(&in, tpcs, &all);
	if (nvt_set_count(&in) == nvt_set_count(&all))
		return driver;
	nvt_topo_gpc_counts(topo, &all, whole);
	nvt_topo_gpc_counts(topo, &in, part);
	while (b < MAX_PER_SM && clusters_held(whole, topo->n_gpcs, b, cluster) < (uint64_t)driver)
		b++;
	held = clusters_held(part, topo->n_gpcs, b, cluster);
	return held >= (uint64_t)driver ? driver : (int)held;
}

unsigned nvt_disable_sms(const uint32_t disable[NVT_TMD_MASK_WORDS])
{
	unsigned on = 0;

	for (unsigned i = 0; i < NVT_HW_BITS / 32; i++)
		on += 32u - (unsigned)__builtin_popcount(disable[i]);
	return on * NVT_SMS_PER_TPC;
}

int nvt_sm_count_told(int driver_sms, unsigned partition_sms)
{
	if (!partition_sms || driver_sms <= 0 || (unsigned)driver_sms <= partition_sms)
		return driver_sms;
	return (int)partition_sms;
}

int nvt_coop_fits(uint64_t blocks, unsigned per_sm, unsigned sms)
{
	return blocks <= (uint64_t)(per_sm ? per_sm : 1) * sms;
}

int nvt_sm_limit_percent(const struct nvt_slot_view *parts, int n)
{
	unsigned best = 0; /* in 1/10000 */

	for (int i = 0; i < n; i++) {
		struct nvt_tpcset all, used;
		unsigned share;
		nvt_topo_all(&parts[i].topo, &all);
		if (!nvt_set_count(&all))
			continue;
		nvt_set_and(&used, &all, &parts[i].tpcs);
		share = parts[i].state == NVT_SLOT_SET
				? 10000 * nvt_set_count(&used) / nvt_set_count(&all)
				: 10000;
		if (share > best)
			best = share;
	}
	best = (best + 99) / 100;
	return best < 1 ? 1 : best > 100 ? 100 : (int)best;
}

int nvt_cluster_aligned(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs)
{
	unsigned count = nvt_set_count(tpcs);

	for (unsigned u = 2; u <= NVT_CLUSTER_BLOCK; u *= 2)
		if (nvt_topo_cluster_capacity(topo, tpcs, u) != count / u)
			return 0;
	return 1;
}

int nvt_sm_limit_leaves_idle(const struct nvt_slot_view *parts, int n)
{
	for (int i = 0; i < n; i++)
		if (parts[i].state == NVT_SLOT_SET &&
		    nvt_topo_partial_gpcs(&parts[i].topo, &parts[i].tpcs) > 1 &&
		    !nvt_cluster_aligned(&parts[i].topo, &parts[i].tpcs))
			return 1;
	return 0;
}

int nvt_sm_limit_strategy(int given, enum nvt_strategy *strategy)
{
	if (!given)
		*strategy = NVT_CLUSTERS;
	return *strategy == NVT_SPREAD ? -1 : 0;
}
