/*
 * reserve.h - a task's partition placed in its control segment before it
 * starts, and race-free allocation of TPCs that no other live task holds.
 *
 * Used by the nvtaskset command (just before it execs the COMMAND: the
 * program's shim adopts the segment, so the partition the command line gave
 * is the one the program gets, even inside another task's partition) and by
 * the Slurm plugin (in slurmstepd, for a job step's tasks); and by the
 * command's -p -n COUNT --exclude-running, which moves a running task to TPCs
 * claimed the same way (nvt_reserve_move).
 *
 * Allocation needs no lock file that another user could hold: a claimer
 * writes its pick into its own segment flagged NVT_SLOTF_CLAIM, then reads
 * every live task's segment (every user's); it confirms the pick (clears the
 * flag) only when no other claim or partition overlaps it. Of two
 * overlapping claimers at least one sees the other (each writes before it
 * reads); the one that sees a confirmed partition, or an earlier claimer
 * (by start time, PID namespace, PID), picks again without those TPCs. A
 * pick is held while the segment's process lives (or its descendants, which
 * copy their parent's partition), and is free once they are gone, also after
 * kill -9: segments of dead processes are ignored.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_RESERVE_H
#define NVT_RESERVE_H

#include <stddef.h>
#include <stdint.h>

#include "nvtaskset.h"
#include "seg/segfile.h"
#include "core/segment.h"
#include "core/topo.h"
#include "core/claim.h"
#include "alloc/placement.h"

/* What to pick on one GPU. */
struct nvt_claim_gpu {
	uint8_t uuid[16];
	struct nvt_topology topo;
	unsigned count;             /* TPCs to pick, >= 1; 0: the task uses this GPU
				     * unpartitioned (its slot holds NVT_SLOT_UNSET) */
	unsigned gpcs;              /* 0, or pick this many whole GPCs that hold at
				     * most count TPCs together (nvt_topo_pick_gpcs) */
	enum nvt_strategy strategy; /* without gpcs: as nvt_topo_pick */
	struct nvt_slot_prio prio;  /* a start's priority (nvt_reserve_claim; own is set to the pick) */
	struct nvt_near near;       /* -n --memory-half: where to pick (mode 0: anywhere) */
	uint64_t mem_limit;         /* the GPU memory limit the claim gives (bytes; 0: none) */
	/* --mem-exclusive: mem_limit must fit in gpu_mem beside the limits other tasks
	 * hold on the GPU (nvt_claim_mem_step), or the claim fails (NVT_RESERVE_FULL) */
	int mem_exclusive;
	uint64_t gpu_mem;           /* the GPU's memory, bytes */
};

enum nvt_reserve_rc {
	NVT_RESERVE_OK = 0,
	NVT_RESERVE_ERROR = -1, /* the segment cannot be made or read; why says */
	NVT_RESERVE_FULL = -2,  /* fewer TPCs than asked are free on a GPU, or (mem_exclusive) its
				 * memory is given; why says which and how many */
	NVT_RESERVE_TIMEOUT = -3, /* other claimers kept overlapping for timeout_ms */
};

/*
 * Makes (or replaces) the calling process's control segment in its user's
 * run directory under base so that it holds views (n GPUs, n <=
 * NVT_MAX_GPUS, each with its uuid, none twice) in slots 0 .. n-1, no flags
 * set. own describes the file (to remove it, nvt_seg_remove) and maps it.
 * A program the process execs adopts it (its shim finds a segment that names
 * its own PID), so call it last before the exec. The caller must be no task
 * whose shim is active (the nvtaskset command, slurmstepd): that shim would
 * keep the segment it mapped. Returns 0, or NVT_RESERVE_ERROR with why.
 */
int nvt_reserve_prepare(const char *base, const struct nvt_slot_view *views, int n,
			struct nvt_seg_own *own, char *why, size_t len);

/* Who holds the TPCs of the GPU a claim found too full (NVT_RESERVE_FULL for want of TPCs),
 * as its last scan found them (nvt_held_holders: in the memory half asked for, where one is). */
#define NVT_RESERVE_HOLDERS_MAX 8
struct nvt_reserve_holders {
	int gpu;   /* req's index of that GPU; -1: no GPU was short of TPCs (n is 0) */
	int n;     /* how many tasks hold its TPCs, all of them */
	struct nvt_holder task[NVT_RESERVE_HOLDERS_MAX]; /* the first n, most TPCs first */
};

/*
 * Picks req[i].count TPCs on each GPU req[i] (n GPUs) that no live task
 * holds, every user's, race-free against other callers on this node, and
 * holds them in the calling process's control segment (made or replaced as
 * by nvt_reserve_prepare; slot i is GPU req[i]). out[i] gets GPU i's partition
 * (state NVT_SLOT_SET; NVT_SLOT_UNSET where req[i].count is 0). Other
 * claimers' overlapping claims are waited for up to timeout_ms, then counted
 * as taken; re-picks end after as long again (at least a second).
 * Returns enum nvt_reserve_rc. On failure the segment is withdrawn and
 * removed, and own->seg is NULL; with NVT_RESERVE_FULL, why says how many
 * TPCs (or whole GPCs) are free (naming the GPU by UUID when several are
 * claimed), and holders (unless NULL) which tasks hold the others.
 */
int nvt_reserve_claim(const char *base, const struct nvt_claim_gpu *req, int n, int timeout_ms,
		      struct nvt_slot_view *out, struct nvt_seg_own *own,
		      struct nvt_reserve_holders *holders, char *why, size_t len);

/*
 * --mem-exclusive's rule from one look, as --dry-run tells it: whether the
 * memory limit of each GPU req[i] (n GPUs) that -n claims on (count > 0, where
 * mem_exclusive) fits beside the limits every live task holds there, claims
 * in progress too. Returns enum nvt_reserve_rc: OK, FULL with why in the
 * words nvt_reserve_claim refuses with, or ERROR.
 */
int nvt_reserve_mem_look(const char *base, const struct nvt_claim_gpu *req, int n, char *why,
			 size_t len);

/*
 * Moves a running task to req[i].count TPCs on each GPU req[i] (n GPUs) that
 * no other live task holds, race-free as nvt_reserve_claim: the picks are claimed in
 * the task's own slots (NVT_SLOTF_CLAIM, then confirmed), the task's identity
 * (its segment's header) orders it among the claimers, and its own
 * partitions, which it gives up, do not count as taken. h: the task's
 * segment, open for writing and locked (nvt_seg_lock); the caller closes it.
 * prev[i]: what GPU i's slot holds now (state NVT_SLOT_UNSET, uuid req[i]'s,
 * when the task has no slot for it). req[i].count 0: GPU i is left as it is.
 * out[i] gets GPU i's partition as written (prev[i] where count is 0).
 * Returns enum nvt_reserve_rc; on failure the slots hold prev again (what
 * the task had; another claimer may have taken some of those TPCs while
 * the task's slot showed a claim instead). holders (NULL: not asked): who
 * holds the TPCs of the GPU too full, as nvt_reserve_claim tells.
 *
 * A claim is written where the task reads its partition, so the task may
 * launch on a pick before it is confirmed, and a process it starts meanwhile
 * copies the pick (as a partition: NVT_SLOTF_CLAIM is not copied); a pick
 * that is given up is then held by that process. It lasts milliseconds
 * unless other claimers keep overlapping.
 */
int nvt_reserve_move(const char *base, struct nvt_seg_handle *h, const struct nvt_claim_gpu *req,
		     int n, const struct nvt_slot_view *prev, int timeout_ms,
		     struct nvt_slot_view *out, struct nvt_reserve_holders *holders, char *why,
		     size_t len);

#endif /* NVT_RESERVE_H */
