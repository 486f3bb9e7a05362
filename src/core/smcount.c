/*
 * smcount.c - the SM count a partitioned program is told, and whether a
 * cooperative grid fits (smcount.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "smcount.h"
#include "tpcset.h"

static const char *const mode_names[] = {"partition", "follow", "gpu"};

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
