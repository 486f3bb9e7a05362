/*
 * bridge.c - when a high time-sliced task bridges its waits (core/yield.h,
 * "The bridge"): which tasks, and which waits by what the task's earlier ones
 * taught. Pure code: no I/O, no allocation, no globals.
 *
 * SPDX-License-Identifier: MIT
 */
#include "yield.h"

#include <string.h>

int nvt_bridge_wanted(unsigned prio, uint32_t yield, const char *connections, const char *word)
{
	if (prio != NVT_PRIO_HIGH || !(yield & NVT_YIELD_SLICE))
		return NVT_BRIDGE_NOT_SLICED;
	if (word && !strcmp(word, "0"))
		return NVT_BRIDGE_TURNED_OFF;
	if (!connections || strcmp(connections, "1"))
		return NVT_BRIDGE_CONNECTIONS;
	return word && strcmp(word, "1") ? NVT_BRIDGE_BAD_WORD : NVT_BRIDGE_ON;
}

void nvt_bridge_gap(struct nvt_bridge_learn *l, uint64_t gap_ns)
{
	uint32_t soon = gap_ns <= (uint64_t)NVT_BRIDGE_LINGER_US * 1000 ? 1000 : 0;

	if (!l->waits)
		l->soon_pm = soon;
	else
		l->soon_pm = l->soon_pm - l->soon_pm / 8 + soon / 8;
	if (l->waits < UINT32_MAX)
		l->waits++;
}

int nvt_bridge_replays(uint32_t *pm, int replayed)
{
	uint32_t v = replayed ? 1000 : 0;

	*pm = *pm - *pm / 8 + v / 8;
	return *pm >= NVT_BRIDGE_REPLAY_PM;
}

int nvt_bridge_arm(const struct nvt_bridge_learn *l)
{
	return !l->waits || l->soon_pm >= NVT_BRIDGE_ON_PM;
}

int nvt_bridge_on(int why)
{
	return why == NVT_BRIDGE_ON || why == NVT_BRIDGE_BAD_WORD;
}

int nvt_bridge_copy_by_kernel(const struct nvt_bridge_copy *c)
{
	enum { HOST = 1, DEVICE = 2 }; /* CUmemorytype (gpu/cuda_driver.h's NVT_CU_MEMORYTYPE_*) */

	if (!c->bytes || c->bytes > NVT_BRIDGE_COPY_MAX || c->capturing || c->dst_managed || c->src_managed)
		return 0;
	/* The source whole inside one allocation of this GPU that this context reads. */
	if (c->src_type != DEVICE || c->src_ordinal != c->ordinal || !c->src_ours || c->src < c->src_start ||
	    c->src - c->src_start > c->src_size || c->src_size - (c->src - c->src_start) < c->bytes)
		return 0;
	/* The destination pinned host memory, one mapping from its first byte to its last. */
	if (c->dst_type[0] != HOST || c->dst_type[1] != HOST || !c->dst_dev[0])
		return 0;
	return c->dst_dev[1] >= c->dst_dev[0] && c->dst_dev[1] - c->dst_dev[0] == c->bytes - 1;
}
