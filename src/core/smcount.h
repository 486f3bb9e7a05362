/*
 * smcount.h - the SM count a partitioned program is told, and whether a
 * cooperative grid fits on a partition (docs/usage.md, "The SM count a
 * program sees"); --sm-limit's rules: MPS's active thread percentage for a
 * partition, the pick it implies, and when MPS's limit leaves SMs idle.
 * Pure code: no I/O, no allocation, no globals.
 *
 * Terms: a task's partition holds TPCs of two SMs each (every GPU since
 * Volta); the driver's count is what cuDeviceGetAttribute answers for the
 * whole GPU (or for MPS's active thread percentage); the count told is what
 * the shim answers in its place.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SMCOUNT_H
#define NVT_SMCOUNT_H

#include <stdint.h>
#include "nvtaskset.h"
#include "segment.h"
#include "tmd.h"
#include "topo.h"

/* SMs of a TPC on every GPU whose TPCs nvtaskset masks (Volta and later). */
#define NVT_SMS_PER_TPC 2

/* What NVT_ENV_SM_COUNT asks for. */
enum nvt_sm_count_mode {
	NVT_SM_COUNT_PARTITION = 0, /* the partition's count at the first query, kept after */
	NVT_SM_COUNT_FOLLOW = 1,    /* the partition's count at each query */
	NVT_SM_COUNT_GPU = 2,       /* the driver's count: the shim answers nothing */
	NVT_SM_COUNT_FIT = 3,       /* as partition, the count nvt_sm_count_fit gives */
};

/*
 * Parses NVT_ENV_SM_COUNT's value: "partition", "follow", "gpu" or "fit"; NULL or
 * "" is the default (partition). Returns 0 with *mode set, or -1 (mode
 * unchanged) for anything else.
 */
int nvt_sm_count_parse(const char *text, int *mode);
/* The word of a mode ("partition", ...), or "?". */
const char *nvt_sm_count_name(int mode);

/* SMs of the TPCs of tpcs that the GPU of topo has. */
unsigned nvt_topo_sms(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs);

/*
 * The count NVT_SM_COUNT_FIT tells for partition tpcs of the GPU of topo: the
 * largest c, at most the partition's SMs, such that for every cluster size k
 * of 2, 4, 8 and 16 SMs that some GPC holds, floor(c / k) clusters fit at
 * once in its GPCs (a GPC holds floor(its SMs of tpcs / k); a cluster lies
 * inside one GPC; a size no GPC holds bounds nothing). A
 * persistent grid of c / k clusters then runs in one wave: told 84 on 42
 * TPCs whose GPCs hold 20 clusters of 4, it would launch 21. The
 * partition's SMs where the GPCs are unknown or topo is malformed, and for a
 * partition of every TPC the GPU has (the driver's count, as without
 * nvtaskset); 0 for an empty partition.
 */
unsigned nvt_sm_count_fit(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs);

/*
 * What a program that asks how many clusters of cluster CTAs fit at once
 * (cuOccupancyMaxActiveClusters) is told on partition tpcs of the GPU of
 * topo, the driver having answered driver for the whole GPU (or MPS's share
 * of it). A cluster lies inside one GPC; its CTAs, b to an SM, take
 * ceil(cluster / b) SMs there, so a GPC of s SMs of the partition holds
 * floor(s b / cluster). b is the fewest CTAs to an SM for which the whole
 * GPU's GPCs hold driver clusters (1 for cuBLAS's Hopper GEMMs, whose CTA
 * takes an SM's shared memory; an MPS share's lower answer gives a b no
 * larger than the kernel's). Told: the partition's clusters, at most
 * driver's; 0 for a size none of its GPCs holds, as MPS's share of 8 SMs
 * answers for clusters of 16 (cuDNN then picks a smaller cluster; told 1,
 * its convolutions took 2x MPS's time on 4 TPCs of an H200). Libraries
 * size persistent grids of clusters by this answer (cuBLAS asks for every
 * size from 1 to 30 CTAs; docs/hardware-facts.md, "What libraries ask
 * about clusters"), as MPS's share
 * answers for its own SMs. The driver's answer for a partition of every TPC,
 * a malformed topology or one without GPCs, and driver <= 0 or cluster 0.
 */
int nvt_cluster_count_told(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs,
			   unsigned cluster, int driver);

/*
 * SMs that a TMD disable mask (set bit = slot disabled; nvt_topo_disable's
 * form, where every bit below NVT_HW_BITS that names no enabled TPC is set)
 * leaves enabled.
 */
unsigned nvt_disable_sms(const uint32_t disable[NVT_TMD_MASK_WORDS]);

/*
 * The count to tell a program that asks for its GPU's SMs: the partition's
 * (partition_sms SMs) where it has one and the driver's is larger, else the
 * driver's (driver_sms; MPS's percentage may already have lowered it).
 * partition_sms 0: no partition.
 */
int nvt_sm_count_told(int driver_sms, unsigned partition_sms);

/*
 * Whether a cooperative grid of blocks blocks, of which per_sm fit on one SM
 * at once (0: unknown, counted as 1, which every launchable kernel reaches),
 * can be resident all at once on sms SMs: its blocks wait for each other at
 * grid-wide barriers, so a grid that does not fit waits forever.
 */
int nvt_coop_fits(uint64_t blocks, unsigned per_sm, unsigned sms);

/* ---- --sm-limit: MPS's active thread percentage for a partition ---- */

/*
 * The percentage for a task with partitions parts[0..n-1]: the largest share
 * of its GPU's TPCs that one of them holds (an unpartitioned slot holds all),
 * rounded up, from 1 to 100.
 */
int nvt_sm_limit_percent(const struct nvt_slot_view *parts, int n);

/*
 * Whether tpcs holds as many clusters of 4, 8 and 16 SMs as an MPS share of
 * its size (all its GPCs but one hold a multiple of 16 SMs, as -n's clusters
 * picks do). Such partitions took part of two or three GPCs at 42-60 TPCs on
 * an H100 and kept every SM under MPS's limit (docs/bench/clusters-2026-11-22/).
 */
int nvt_cluster_aligned(const struct nvt_topology *topo, const struct nvt_tpcset *tpcs);

/*
 * Whether MPS's limit on top of parts[0..n-1] may leave some of their SMs
 * idle: a partition (state NVT_SLOT_SET) takes part of several GPCs and is
 * not cluster-aligned (on an H100, TPCs 0-7, one in each of 8 GPCs, ran on 4
 * of their 16 SMs; docs/hardware-facts.md, 12). Whole GPCs keep them all.
 */
int nvt_sm_limit_leaves_idle(const struct nvt_slot_view *parts, int n);

/*
 * The strategy -n picks with under --sm-limit: *strategy as given (given 1:
 * --strategy was), else clusters: MPS's share holds floor(SMs / k) clusters
 * of k SMs, packed picks of whole GPCs of 18 SMs hold fewer, and libraries
 * size persistent grids for MPS's count (docs/bench/clusters-2026-11-22/).
 * Returns 0, or -1 for spread, which --sm-limit refuses: MPS's limit on a
 * partition of a few TPCs of every GPC leaves most of them idle (on an H100,
 * 4 of 16 SMs).
 */
int nvt_sm_limit_strategy(int given, enum nvt_strategy *strategy);

#endif /* NVT_SMCOUNT_H */
