/*
 * claim.h - the rules of race-free TPC allocation (src/alloc/reserve.c), as pure
 * functions: the order of claimers, and what one round of the protocol does
 * on one GPU given what a scan of the other tasks found. No system calls, so
 * that every case can be tested on plain values (tests/unit/test_claim.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLAIM_H
#define NVT_CLAIM_H

#include <stdint.h>

#include "nvtaskset.h"
#include "topo.h"

/* A segment's owner, as its header names it: the keys claims are settled by. */
struct nvt_claimer {
	uint64_t start_time; /* field 22 of /proc/<pid>/stat */
	uint64_t pidns;      /* inode of its PID namespace */
	int32_t pid;         /* as its namespace numbers it */
};

/* The claimer a segment's header names. */
void nvt_claimer_of(const struct nvt_segment *seg, struct nvt_claimer *out);

/*
 * Orders claimers: the process that started first is earlier; equal start
 * times (a clock tick holds many starts) by PID namespace, then PID. Returns
 * <0 if a is earlier than b, >0 if later, 0 if they are the same process.
 */
int nvt_claimer_cmp(const struct nvt_claimer *a, const struct nvt_claimer *b);

/* What another live task holds on one GPU, as a scan read it. */
struct nvt_held {
	struct nvt_claimer who;
	int claim;               /* NVT_SLOTF_CLAIM: a pick not confirmed yet */
	struct nvt_tpcset tpcs;  /* its TPCs (a slot in state NVT_SLOT_SET; none for a
				  * slot on every TPC, found for its memory limit) */
	struct nvt_slot_prio prio; /* the slot's priority (its own partition in prio.own) */
	uint64_t mem_limit;      /* its GPU memory limit there (bytes; 0: none given) */
};

/* What one round does on one GPU. */
enum nvt_claim_step {
	NVT_STEP_CONFIRM = 0, /* keep the pick: nothing of another task overlaps it */
	NVT_STEP_WAIT,        /* keep it and scan again: only later claimers' claims overlap */
	NVT_STEP_CLAIM,       /* claim *next instead (the first pick, or a new one) */
	NVT_STEP_WITHDRAW,    /* hold nothing and scan again: the TPCs fit only once
			       * earlier claimers' claims are gone */
	NVT_STEP_FULL,        /* what it asks is not free of other tasks' partitions */
	NVT_STEP_STUCK,       /* claims_taken, and the TPCs fit only without others' claims */
};

/* What a claimer picks on one GPU. */
/* Where a pick goes (-n --memory-half, core/membw.h): only among tpcs, or
 * there first and elsewhere when it does not fit there. */
enum nvt_near_mode { NVT_NEAR_NONE, NVT_NEAR_PREFER, NVT_NEAR_ONLY };
struct nvt_near {
	enum nvt_near_mode mode;
	struct nvt_tpcset tpcs;
};

struct nvt_pick {
	unsigned count;             /* TPCs to pick; with gpcs, the most TPCs those GPCs may hold */
	unsigned gpcs;              /* 0, or how many whole GPCs to pick (nvt_topo_pick_gpcs) */
	enum nvt_strategy strategy; /* without gpcs: as nvt_topo_pick */
	struct nvt_near near;       /* mode NVT_NEAR_NONE (0): anywhere */
};

/*
 * Picks want among avail: want->count TPCs (nvt_topo_pick with its strategy),
 * or want->gpcs whole GPCs of at most want->count TPCs; in want->near's TPCs
 * first if asked (only there with NVT_NEAR_ONLY). Every pick of nvtaskset is
 * this one: -n's start, claim and dry run, the Slurm plugin's, --plan's.
 * Returns 0, or -1 if it does not fit.
 */
int nvt_pick_tpcs(const struct nvt_topology *topo, const struct nvt_pick *want,
		  const struct nvt_tpcset *avail, struct nvt_tpcset *out);

/*
 * Decides one GPU's step after a scan. me: the caller; mine: its current
 * claim on the GPU, or NULL when it holds none; held: the n SET slots that
 * other live tasks have on the GPU (claims and partitions); want: what to
 * pick. claims_taken: the caller waited long enough, so every other claim
 * counts as a partition (a claimer stopped mid-protocol holds its TPCs, and
 * is waited for no longer).
 *
 * A pick that a partition or an earlier claimer's claim overlaps is picked
 * again; one that only later claimers' claims overlap is kept (those yield
 * to it); one that nothing overlaps is confirmed. A new pick avoids every
 * TPC another task holds if it can, else only partitions and earlier
 * claimers' claims (so the earliest claimer is never kept out by later
 * ones), else it waits (NVT_STEP_WITHDRAW) while earlier claims may still go.
 * With want->gpcs every pick is that many whole GPCs, never topped up from
 * others: the GPU is full when the TPCs free of partitions hold no such GPCs.
 *
 * Returns enum nvt_claim_step; next gets the pick to claim (NVT_STEP_CLAIM);
 * free_out, if not NULL, how many TPCs (with want->gpcs: whole GPCs) are free of
 * other tasks' partitions (and, with claims_taken, of their claims).
 */
int nvt_claim_step(const struct nvt_topology *topo, const struct nvt_pick *want,
		   const struct nvt_claimer *me, const struct nvt_tpcset *mine,
		   const struct nvt_held *held, int n, int claims_taken, struct nvt_tpcset *next,
		   unsigned *free_out);

/*
 * The first of held (n) that holds every TPC of topo with a priority (a --priority task without a
 * partition: time-sliced on the whole GPU), or -1: a claim beside it finds nothing free until it
 * is given a partition. Claims in progress are not counted.
 */
int nvt_claim_whole_gpu_holder(const struct nvt_topology *topo, const struct nvt_held *held, int n);

/*
 * Decides whether a claimer's GPU memory limit (want bytes, on a GPU of
 * gpu_bytes) fits beside the limits other live tasks hold there (held, n),
 * by the rule of nvt_memlimit_has_room (--mem-exclusive), once its TPCs are
 * settled (NVT_STEP_CONFIRM). Confirmed limits and earlier claimers' claims
 * count (with claims_taken, every claim): what does not fit beside them is
 * NVT_STEP_FULL; what fits beside them but not beside later claimers' claims
 * as well is NVT_STEP_WAIT (those see this one's claim, and yield); else
 * NVT_STEP_CONFIRM. So two claimers never both confirm limits that together
 * exceed the GPU (the argument of src/alloc/reserve.c). A task given no limit
 * is not counted: it may take any memory. given_out, if not NULL, gets the
 * sum that counted (saturating). Returns enum nvt_claim_step.
 */
int nvt_claim_mem_step(uint64_t gpu_bytes, uint64_t want, const struct nvt_claimer *me,
		       const struct nvt_held *held, int n, int claims_taken, uint64_t *given_out);

#endif /* NVT_CLAIM_H */
