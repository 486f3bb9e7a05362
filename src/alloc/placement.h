/*
 * placement.h - where a partition of COUNT TPCs goes on a GPU: what the
 * other live tasks hold there (one scan, counted as the claim protocol
 * counts it), the memory half to pick in, and the pick itself. Every front
 * end places through here: the command's start (its claim, reserve.h),
 * --dry-run, -n without --exclude-running, -p -n, the Slurm plugin and
 * --plan. Side effects: reading the tasks' control segments. Returns codes
 * and fills a reason; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PLACEMENT_H
#define NVT_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvtaskset.h"
#include "core/claim.h"
#include "core/topo.h"
#include "gpu/gpus.h"

/* ---- What the other tasks hold ---- */

/* What a scan found on one GPU: each task's SET slot there, and its PID as listed. */
struct nvt_held_list {
	struct nvt_held *v;
	pid_t *pids;
	int n;
	size_t cap;
};

/*
 * Reads every live task's slots on the n GPUs uuids[0..n-1] into found[i]
 * (emptied first), every user's, but those of the claimer me (NULL: none).
 * What it counts as held is what a claim must keep clear of: confirmed
 * partitions and claims (held.claim); a slot that every read finds mid-write
 * (unsettled), as held by its owner, every TPC a copy showed; a task with a
 * priority by its own partition, whatever an agent lets it use now. Returns
 * 0 (nothing held when no task has run yet), or -1 with errno set: a task
 * that could not be read (EMFILE, say) is never taken for free.
 */
int nvt_held_scan(const char *base, const struct nvt_claimer *me, const uint8_t *const *uuids,
		  int n, struct nvt_held_list *found);
/* A live task whose partition shares TPCs with one being given (nvt_placement_clashes). */
struct nvt_clash {
	pid_t pid;              /* as the caller's /proc numbers it */
	int part;               /* the index of the partition given that it shares with */
	struct nvt_tpcset both; /* the TPCs they share */
};
#define NVT_CLASHES_MAX 8
/*
 * The live tasks, every user's, whose partitions share TPCs with the n
 * partitions given, parts (one task's: uuid, state, tpcs, prio), against the
 * design (nvt_prio_clash: not tasks of different priority levels, nor two
 * time-sliced ones); claims not confirmed yet and the tasks of tree's tree
 * (tree itself: a start's own process, -p's task; and the tasks of the tree
 * of processes it is in, which copy a partition from the task above them)
 * do not count. The first NVT_CLASHES_MAX into out. Returns how many were
 * found, or -1 with errno set.
 */
int nvt_placement_clashes(const char *base, pid_t tree, const struct nvt_slot_view *parts, int n,
			  struct nvt_clash *out);

/* The TPCs of every entry of l, claims too. */
void nvt_held_union(const struct nvt_held_list *l, struct nvt_tpcset *out);
/* Frees the n lists' entries (the lists themselves are the caller's). */
void nvt_held_free(struct nvt_held_list *lists, int n);

/* A task that holds TPCs on a GPU, and how many of those in question. */
struct nvt_holder {
	pid_t pid;     /* as the caller's /proc numbers it */
	unsigned tpcs; /* the TPCs of the region it holds (claims too) */
};
/*
 * The tasks of l that hold TPCs of region, each once (its entries' TPCs together), most TPCs
 * first, then by PID: the first max into out. Returns how many there are, all of them.
 */
int nvt_held_holders(const struct nvt_held_list *l, const struct nvt_tpcset *region,
		     struct nvt_holder *out, int max);

/* ---- What to place ---- */

/* Memory halves (core/membw.h): 0, 1, NVT_HALF_UNKNOWN (auto), or this: none asked. */
#define NVT_PLACEMENT_ANY_HALF (-2)

/* What a front end asks of one GPU. */
struct nvt_placement_ask {
	unsigned count;             /* TPCs to pick, >= 1 */
	enum nvt_strategy strategy; /* as nvt_topo_pick */
	int exclude_running;        /* clear of what the other tasks hold (nvt_held_scan) */
	int half;                   /* NVT_PLACEMENT_ANY_HALF, 0, 1 or NVT_HALF_UNKNOWN (auto) */
};

/* The GPU placed on. */
struct nvt_placement_gpu {
	const uint8_t *uuid;
	const struct nvt_topology *topo;
	/* With a half asked for: the GPU as nvt_gpu_topology loaded it, its
	 * halves read (nvt_gpu_read_halves); else NULL. */
	const struct nvt_gpu_topology *halves;
	const char *name; /* in messages: "this GPU", "GPU 1" */
};

/* nvt_placement_near's outcomes besides -1 (an error, why says). */
enum nvt_near_rc {
	NVT_NEAR_CHOSEN = 0,  /* near says where to pick (mode NVT_NEAR_NONE: anywhere) */
	NVT_NEAR_NEITHER = 1, /* auto: neither half has count TPCs free; pick from both
			       * (a front end may warn) */
};

/*
 * Where ask picks on gpu (-n --memory-half): near gets the TPCs of the half
 * asked for (NVT_NEAR_ONLY), or with auto of the half where others (what
 * the other tasks hold) leave most room among those with ask->count TPCs of
 * avail (NVT_NEAR_PREFER). Without a half asked, mode NVT_NEAR_NONE.
 * claiming: the claim protocol decides whether the half has room (it sees
 * claims and priorities), so a half asked for is not refused here for want
 * of it. Returns enum nvt_near_rc, or -1 with why (the halves were not
 * measured, none were found, or the half is too small).
 */
int nvt_placement_near(const struct nvt_placement_gpu *gpu, const struct nvt_placement_ask *ask,
		       const struct nvt_tpcset *avail, const struct nvt_tpcset *others,
		       int claiming, struct nvt_near *near, char *why, size_t len);

/*
 * -n's pick from one look at the other tasks, claiming nothing (--dry-run,
 * -n without --exclude-running, -p -n): ask->count TPCs of gpu, clear of
 * what the tasks but me hold if ask->exclude_running (what a claim would
 * keep clear of, at this moment), in the memory half asked for. *neither
 * is set (if not NULL) when auto found no half with room. Returns 0, or -1
 * with why.
 */
int nvt_placement_once(const char *base, const struct nvt_placement_gpu *gpu,
		       const struct nvt_placement_ask *ask, const struct nvt_claimer *me,
		       struct nvt_tpcset *out, int *neither, char *why, size_t len);

/*
 * Where a claim of ask on gpu (nvt_claim_gpu.near) picks: nvt_placement_near
 * with avail what the tasks but me leave free now. Returns as nvt_placement_near.
 */
int nvt_placement_near_for_claim(const char *base, const struct nvt_placement_gpu *gpu,
				 const struct nvt_placement_ask *ask, const struct nvt_claimer *me,
				 struct nvt_near *near, char *why, size_t len);

/* Appends to why, when whole names a task (> 0), that it holds every TPC of the GPU with a
 * priority and no partition (nvt_claim_whole_gpu_holder), and how to make room. */
void nvt_placement_whole_gpu_why(pid_t whole, char *why, size_t len);

#endif /* NVT_PLACEMENT_H */
