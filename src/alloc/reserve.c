/*
 * reserve.c - a task's partition in its control segment before it starts,
 * and race-free allocation of TPCs that no other live task holds (see
 * reserve.h). Side effects: the caller's own segment, reading every task's.
 * Returns codes; never prints.
 *
 * The protocol (the rules of each round are pure: src/core/claim.c):
 *
 *   1. The claimer makes its own segment and reads every live task's slots
 *      on its GPUs, every user's (nvt_seg_tasks, nvt_seg_open, nvt_seg_read).
 *   2. It picks TPCs clear of what it read and writes the pick into its
 *      own slot with NVT_SLOTF_CLAIM set.
 *   3. It reads every live task's slots again. If a confirmed partition, or
 *      the claim of an earlier claimer (started first: start time, then PID
 *      namespace, then PID from the segment header), overlaps its pick, it
 *      picks again without those TPCs and goes back to 3, having written the
 *      new claim first. If only later claimers' claims overlap it, it sleeps
 *      a little and goes back to 3: they yield to it. If nothing overlaps, it
 *      clears the flag: the pick is confirmed, a partition like any other.
 *
 * Why two overlapping picks are never both confirmed: say X and Y confirm
 * picks that overlap. Each wrote its final claim before the scan that let it
 * confirm, and kept it (as a claim, then as the confirmed partition) from
 * then on. Say X's final claim was written first. Y's final scan began after
 * Y's final write, so after X's: X's file was in its run directory, and its
 * slot already held that claim or its confirmation. Y's scan saw it overlap,
 * and Y could not confirm. So of two overlapping claimers at least one sees
 * the other, and the one that sees a partition or an earlier claimer yields;
 * the one that sees only a later claimer waits for it, and never confirms
 * while the overlap lasts. The argument needs the later writer to see the
 * earlier one's file: claimers must see each other's processes in /proc
 * (not so across containers with PID namespaces and /proc of their own, or
 * with hidepid).
 *
 * No lock is shared, so nobody (another user holding a lock file, say) can
 * stop the others. A claimer stopped mid-way keeps its claim: later
 * claimers pick around it at once, and those that can only fit on its TPCs
 * (or that started earlier and claimed over it) wait up to timeout_ms; after
 * that every claim counts as taken, and they pick around it or fail. They
 * give up re-picking timeout_ms later (at least 1 s), and only once they have
 * run NVT_CLAIM_LATE_ROUNDS rounds past the deadline: a claimer that a loaded
 * host (hundreds of busy processes on two cores) lets scan only once in that
 * time is not failed for rounds it never ran; alone past the deadline it
 * confirms in two (a claim, then its confirmation).
 *
 * Progress: the earliest claimer still at work yields to nobody's claim, and
 * may claim over later claimers' picks (they yield within a round), so it
 * confirms unless the GPU is full; then the next earliest, and so on.
 * Claimers that die (kill -9 included) are gone from every scan: nvt_seg_open
 * checks the PID and its start time.
 *
 * Moving a running task (nvt_reserve_move, nvtaskset -p -n COUNT
 * --exclude-running) runs the same rounds with the task as the claimer: its
 * picks go into its own slots, its segment's header orders it, and the scans
 * pass over its segment (the partitions it gives up). While it holds no
 * claim its slot shows its partition from before the move. Its claims sit
 * where its program reads its partition, so it may launch on one before it
 * is confirmed, and a process it starts meanwhile copies it (reserve.h).
 *
 * A slot that every read finds mid-write (a writer died inside it, or its
 * owner leaves it so) is unsettled after NVT_SEG_READ_TRIES tries: it
 * counts as held by its owner, every TPC a copy showed, like a confirmed
 * partition, never as a claim. So it costs a scan a few reads, never a
 * round, and nobody's segments can stall or fail another user's start.
 *
 * Over 500 lines on purpose: the rounds of a start and of a move, and
 * --dry-run's one look at the memory rule (nvt_reserve_mem_look), share
 * the steps and their words; this comment is the protocol's proof.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "reserve.h"
#include "placement.h"
#include "core/prio.h"
#include "core/claim.h"
#include "core/memlimit.h"
#include "core/gpusel.h"
#include "core/tpcset.h"
#include "os/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Segments of the caller's user judged when one is made (nvt_seg_sweep), as
 * a task's start does, with more room: nvtaskset runs less often. */
#define SWEEP_MAX 256
/* Sleep between scans while waiting for other claimers: 1 ms to this, at random. */
#define WAIT_MAX_US 4000
/* Rounds a claimer runs past its deadline before it may give up (see the top of this file):
 * two confirm a claimer alone; the rest let claimers that met there move apart. */
#define NVT_CLAIM_LATE_ROUNDS 4

/* ---- The caller's own segment -------------------------------------------- */

/* Makes the caller's segment anew and empty, holding its writer's lock (see
 * nvt_seg_create): one the process had (before an exec, or from an earlier
 * call) is replaced. */
static int make_own(const char *base, struct nvt_seg_own *own, struct nvt_seg_new *fresh, char *why,
		    size_t len)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int rc = nvt_seg_create(base, own, fresh, why, len);
		if (rc == NVT_SEG_CREATED)
			return 0;
		if (rc < 0) {
			/* A full run directory (ENOSPC, EDQUOT) is no control
			 * segment: say where, once. */
			char inner[256];
			snprintf(inner, sizeof(inner), "%s", why);
			snprintf(why, len, "cannot create its control segment in %s: %s", own->dir, inner);
			return -1;
		}
		/* NVT_SEG_ADOPTED: its partitions are not the ones asked for now. */
		nvt_seg_remove(own);
		munmap(own->seg, sizeof(*own->seg));
		own->seg = NULL;
	}
	snprintf(why, len, "cannot replace %s/%s", own->dir, own->name);
	return -1;
}

/* 0 if each of n uuids names a GPU, none twice; else -1 with why. */
static int check_uuids(const uint8_t *const *uuids, int n, char *why, size_t len)
{
	if (n < 0 || n > NVT_MAX_GPUS) {
		snprintf(why, len, "%d GPUs: a control segment holds at most %d", n, NVT_MAX_GPUS);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (nvt_uuid_is_zero(uuids[i])) {
			snprintf(why, len, "GPU %d has no UUID", i);
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (!memcmp(uuids[i], uuids[j], 16)) {
				char text[NVT_UUID_TEXT_MAX];
				nvt_uuid_format(uuids[i], text);
				snprintf(why, len, "GPU %s is named twice", text);
				return -1;
			}
	}
	return 0;
}

int nvt_reserve_prepare(const char *base, const struct nvt_slot_view *views, int n,
			struct nvt_seg_own *own, char *why, size_t len)
{
	const uint8_t *uuids[NVT_MAX_GPUS];
	struct nvt_seg_new fresh;

	for (int i = 0; i < n && i < NVT_MAX_GPUS; i++)
		uuids[i] = views[i].uuid;
	if (check_uuids(uuids, n, why, len) || make_own(base, own, &fresh, why, len))
		return NVT_RESERVE_ERROR;
	for (int i = 0; i < n; i++) {
		struct nvt_slot_view v = views[i];
		v.flags = 0;
		nvt_slot_write(&own->seg->gpu[i], &v);
	}
	nvt_seg_unlock(&fresh); /* open to readers now, filled */
	/* As a task's start does: children that ended with _exit left files. */
	nvt_seg_sweep(own, SWEEP_MAX);
	return NVT_RESERVE_OK;
}

/* ---- Claiming -------------------------------------------------------------- */


/* Sleeps 1 ms to WAIT_MAX_US, at random: claimers that met do not meet again in step. */
static void backoff(unsigned *seed)
{
	long us = 1000 + (long)(rand_r(seed) % (WAIT_MAX_US - 1000 + 1));
	struct timespec ts = {0, us * 1000};

	nanosleep(&ts, NULL);
}

/*
 * Where a claimer's picks go: its own new segment (a start), or the segment
 * of a running task it moves. idle[i] is what GPU i's slot holds while no
 * claim is there: nothing (a start) or the task's partition before the move.
 */
struct claim_target {
	/* Writes view into the slot of GPU i. Returns 0, or -1 with why. */
	int (*write)(struct claim_target *t, int i, const struct nvt_slot_view *view, char *why,
		     size_t len);
	struct nvt_seg_own *own;   /* a start */
	struct nvt_seg_handle *h;  /* a move: locked */
	int slot[NVT_MAX_GPUS];    /* a move: GPU i's slot in h (-1: none yet) */
	const struct nvt_slot_view *idle;
};

static int write_own(struct claim_target *t, int i, const struct nvt_slot_view *view, char *why,
		     size_t len)
{
	(void)why, (void)len;
	nvt_slot_write(&t->own->seg->gpu[i], view);
	return 0;
}

static int write_moved(struct claim_target *t, int i, const struct nvt_slot_view *view, char *why,
		       size_t len)
{
	int fresh = t->slot[i] < 0, rc;

	if (fresh && (t->slot[i] = nvt_seg_free_slot_of(t->h)) < 0) {
		snprintf(why, len, "it already has partitions on %d GPUs, the most a task can have",
			 NVT_MAX_GPUS);
		return -1;
	}
	rc = nvt_seg_write(t->h, t->slot[i], view, fresh);
	if (rc == NVT_SEG_OK)
		return 0;
	snprintf(why, len, "cannot write its control segment (%s)",
		 rc == NVT_SEG_ENOTASK ? "it was replaced" : "it is corrupt");
	return -1;
}

/* " on GPU <UUID>" when several GPUs are claimed, else "". */
static void gpu_words(const struct nvt_claim_gpu *req, int n, int i, char *buf, size_t len)
{
	char uuid[NVT_UUID_TEXT_MAX];
	int claimed = 0;

	for (int k = 0; k < n; k++)
		claimed += req[k].count > 0;
	nvt_uuid_format(req[i].uuid, uuid);
	if (claimed > 1)
		snprintf(buf, len, " on %s", uuid);
	else
		buf[0] = '\0';
}

/* What req asks, in words: "16 TPCs", "2 whole GPCs of at most 18 TPCs". */
static void asked(const struct nvt_claim_gpu *req, char *buf, size_t len)
{
	if (req->gpcs)
		snprintf(buf, len, "%u whole GPC%s of at most %u TPCs", req->gpcs,
			 req->gpcs == 1 ? "" : "s", req->count);
	else
		snprintf(buf, len, "%u TPCs", req->count);
}

/* One claimer's run of rounds: what it asks, and what it holds so far. */
struct claim_run {
	const struct nvt_claimer *me;
	const struct nvt_claim_gpu *req;
	int n, timeout_ms;
	struct claim_target *t;
	struct nvt_slot_view *out;
	const uint8_t *uuids[NVT_MAX_GPUS];
	struct nvt_held_list found[NVT_MAX_GPUS];
	int claimed[NVT_MAX_GPUS];
	struct nvt_reserve_holders *holders; /* NULL: not asked */
};

/* --mem-exclusive, once GPU i's TPCs are settled (*step NVT_STEP_CONFIRM): the memory
 * limit's own step (nvt_claim_mem_step) into *step, and why it is refused. */
static void memory_step(const struct claim_run *r, int i, int claims_taken, int *step, char *why,
			size_t len)
{
	const struct nvt_claim_gpu *req = &r->req[i];
	char want[NVT_MEM_TEXT_MAX], given[NVT_MEM_TEXT_MAX], gpu[NVT_MEM_TEXT_MAX];
	char where[64];
	uint64_t held;

	if (!req->mem_exclusive || *step != NVT_STEP_CONFIRM)
		return;
	*step = nvt_claim_mem_step(req->gpu_mem, req->mem_limit, r->me, r->found[i].v, r->found[i].n,
				   claims_taken, &held);
	if (*step != NVT_STEP_FULL)
		return;
	gpu_words(r->req, r->n, i, where, sizeof(where));
	snprintf(why, len, "cannot give a GPU memory limit of %s%s beside the limits other tasks hold "
		 "there (%s of its %s; --mem-exclusive)", nvt_memlimit_format(req->mem_limit, want,
		 sizeof(want)), where, nvt_memlimit_format(held, given, sizeof(given)),
		 nvt_memlimit_format(req->gpu_mem, gpu, sizeof(gpu)));
	*step = -1; /* said: not the TPCs' message */
}

/* Why GPU i has too few free TPCs (free_units of unit), naming a task on every TPC of it with a
 * priority (time-sliced there: nothing is free until it is given a partition). */
static void full_why(const struct claim_run *r, int i, const char *what, const char *where,
		     unsigned free_units, const char *unit, char *why, size_t len)
{
	const struct nvt_claim_gpu *req = &r->req[i];
	int whole = nvt_claim_whole_gpu_holder(&req->topo, r->found[i].v, r->found[i].n);

	snprintf(why, len, "cannot pick %s%s: only %u%s %s free of other tasks%s", what, where,
		 free_units, unit, free_units == 1 ? "is" : "are",
		 req->near.mode == NVT_NEAR_ONLY ? " in the memory half asked for" : "");
	nvt_placement_whole_gpu_why(whole < 0 ? 0 : r->found[i].pids[whole], why, len);
	if (r->holders) {
		struct nvt_tpcset region;
		if (req->near.mode == NVT_NEAR_ONLY)
			region = req->near.tpcs;
		else
			nvt_topo_all(&req->topo, &region);
		r->holders->gpu = i;
		r->holders->n = nvt_held_holders(&r->found[i], &region, r->holders->task,
						 NVT_RESERVE_HOLDERS_MAX);
		if (r->holders->n < 0)
			r->holders->n = 0; /* (no memory: the message names none) */
	}
}

/*
 * A round's step for GPU i (nvt_claim_step): confirm, wait, claim a pick or
 * withdraw it, or give up. Clears *settled while the claim is not settled,
 * sets *changed when a new pick was written. Returns NVT_RESERVE_OK, or the
 * failure with why.
 */
static int gpu_step(struct claim_run *r, int i, int claims_taken, int *settled, int *changed,
		    char *why, size_t len)
{
	const struct nvt_claim_gpu *req = &r->req[i];
	struct nvt_slot_view *out = &r->out[i];
	struct nvt_pick want = {.count = req->count, .gpcs = req->gpcs, .strategy = req->strategy,
				.near = req->near};
	char where[64], what[80];
	struct nvt_tpcset next;
	unsigned free_units;
	const char *unit;
	int step;

	step = nvt_claim_step(&req->topo, &want, r->me, r->claimed[i] ? &out->tpcs : NULL,
			      r->found[i].v, r->found[i].n, claims_taken, &next, &free_units);
	memory_step(r, i, claims_taken, &step, why, len);
	if (step < 0)
		return NVT_RESERVE_FULL;
	gpu_words(r->req, r->n, i, where, sizeof(where));
	asked(req, what, sizeof(what));
	/* "only 2 are free", "only 1 whole GPC is free" */
	unit = !req->gpcs ? "" : free_units == 1 ? " whole GPC" : " whole GPCs";
	switch (step) {
	case NVT_STEP_CONFIRM:
		return NVT_RESERVE_OK;
	case NVT_STEP_WAIT:
		*settled = 0;
		return NVT_RESERVE_OK;
	case NVT_STEP_CLAIM:
		*out = r->t->idle[i];
		out->state = NVT_SLOT_SET;
		out->flags = NVT_SLOTF_CLAIM;
		out->tpcs = next;
		out->topo = req->topo;
		out->mem_limit = req->mem_limit; /* claimed with the pick, and counted as a claim */
		if (out->prio.prio != NVT_PRIO_NONE) {
			out->prio.own = next; /* the task's own partition now */
			out->prio.mode = NVT_MODE_OWN;
		}
		r->claimed[i] = 1;
		*settled = 0;
		*changed = 1;
		return r->t->write(r->t, i, out, why, len) ? NVT_RESERVE_ERROR : NVT_RESERVE_OK;
	case NVT_STEP_WITHDRAW:
		*settled = 0;
		if (!r->claimed[i])
			return NVT_RESERVE_OK;
		*out = r->t->idle[i];
		r->claimed[i] = 0;
		return r->t->write(r->t, i, out, why, len) ? NVT_RESERVE_ERROR : NVT_RESERVE_OK;
	case NVT_STEP_FULL:
		full_why(r, i, what, where, free_units, unit, why, len);
		return NVT_RESERVE_FULL;
	default: /* NVT_STEP_STUCK */
		snprintf(why, len, "cannot pick %s%s: %u%s %s free of other tasks' partitions, but "
			 "other starting tasks held claims on them for %g s", what, where, free_units,
			 unit, free_units == 1 ? "is" : "are", r->timeout_ms / 1000.0);
		return NVT_RESERVE_TIMEOUT;
	}
}

/* Confirms every pick (rc 0), or on failure (rc) writes back what the slots held. */
static int claim_end(struct claim_run *r, int rc, char *why, size_t len)
{
	for (int i = 0; i < r->n && rc == NVT_RESERVE_OK; i++) {
		if (!r->req[i].count)
			continue;
		r->out[i].flags = 0;
		if (r->t->write(r->t, i, &r->out[i], why, len))
			rc = NVT_RESERVE_ERROR;
	}
	for (int i = 0; i < r->n && rc != NVT_RESERVE_OK; i++) {
		char ignored[8];
		if (!r->req[i].count)
			continue;
		r->out[i] = r->t->idle[i];
		if (r->claimed[i])
			r->t->write(r->t, i, &r->out[i], ignored, sizeof(ignored));
	}
	nvt_held_free(r->found, r->n);
	return rc;
}

/*
 * The protocol's rounds (see the top of this file) for the claimer me, its
 * picks going to t. out[i] holds t->idle[i] on entry, and on return the
 * confirmed partition (written), or t->idle[i] again (written back) when it
 * fails. Returns enum nvt_reserve_rc.
 */
static int claim_rounds(const char *base, const struct nvt_claimer *me, const struct nvt_claim_gpu *req,
			int n, int timeout_ms, struct claim_target *t, struct nvt_slot_view *out,
			struct nvt_reserve_holders *holders, char *why, size_t len)
{
	struct claim_run r;
	long long start = nvt_clock_ms(), deadline, end;
	int late = 0; /* rounds begun past the deadline */
	unsigned seed;

	memset(&r, 0, sizeof(r));
	r.me = me, r.req = req, r.n = n, r.t = t, r.out = out, r.holders = holders;
	if (holders) {
		holders->gpu = -1;
		holders->n = 0;
	}
	for (int i = 0; i < n; i++)
		r.uuids[i] = req[i].uuid;
	r.timeout_ms = timeout_ms = timeout_ms < 0 ? 0 : timeout_ms;
	seed = (unsigned)getpid() ^ (unsigned)start;
	/* Until deadline, later claimers that overlap are waited for; then
	 * every claim counts as taken, and end bounds the re-picks. */
	deadline = start + timeout_ms;
	end = deadline + (timeout_ms > 1000 ? timeout_ms : 1000);
	for (;;) {
		int claims_taken = nvt_clock_ms() >= deadline, settled = 1, changed = 0, rc;

		if (nvt_clock_ms() >= end && late >= NVT_CLAIM_LATE_ROUNDS) {
			snprintf(why, len, "cannot pick TPCs: other starting tasks kept claiming the "
				 "same TPCs for %g s", (double)(end - start) / 1000.0);
			return claim_end(&r, NVT_RESERVE_TIMEOUT, why, len);
		}
		late += claims_taken;
		if (nvt_held_scan(base, me, r.uuids, n, r.found)) {
			snprintf(why, len, "cannot list the tasks in %s: %s", base, strerror(errno));
			return claim_end(&r, NVT_RESERVE_ERROR, why, len);
		}
		for (int i = 0; i < n; i++)
			if (req[i].count &&
			    (rc = gpu_step(&r, i, claims_taken, &settled, &changed, why, len)))
				return claim_end(&r, rc, why, len);
		if (settled)
			break;
		/* Past the deadline no order breaks ties (every claim counts as
		 * taken): claimers that moved apart at once must not meet again. */
		if (!changed || claims_taken)
			backoff(&seed);
	}
	/* The scan that ended the loop came after every claim was written. */
	return claim_end(&r, NVT_RESERVE_OK, why, len);
}

int nvt_reserve_mem_look(const char *base, const struct nvt_claim_gpu *req, int n, char *why,
			 size_t len)
{
	/* No claimer: the caller holds no segment, so every task's limit is another's. */
	static const struct nvt_claimer nobody;
	struct claim_run r;
	int rc = NVT_RESERVE_OK;

	memset(&r, 0, sizeof(r));
	r.me = &nobody, r.req = req, r.n = n;
	for (int i = 0; i < n; i++)
		r.uuids[i] = req[i].uuid;
	if (nvt_held_scan(base, NULL, r.uuids, n, r.found)) {
		snprintf(why, len, "cannot list the tasks in %s: %s", base, strerror(errno));
		return NVT_RESERVE_ERROR;
	}
	for (int i = 0; i < n && rc == NVT_RESERVE_OK; i++) {
		/* As a claim past its deadline: every claim in progress counts as taken. */
		int step = NVT_STEP_CONFIRM;
		if (req[i].count)
			memory_step(&r, i, 1, &step, why, len);
		if (step < 0)
			rc = NVT_RESERVE_FULL;
	}
	nvt_held_free(r.found, n);
	return rc;
}

int nvt_reserve_claim(const char *base, const struct nvt_claim_gpu *req, int n, int timeout_ms,
		      struct nvt_slot_view *out, struct nvt_seg_own *own,
		      struct nvt_reserve_holders *holders, char *why, size_t len)
{
	static struct nvt_slot_view idle[NVT_MAX_GPUS];
	const uint8_t *uuids[NVT_MAX_GPUS];
	struct claim_target t = {.write = write_own, .own = own, .idle = idle};
	struct nvt_claimer me;
	struct nvt_seg_new fresh;
	int rc;

	for (int i = 0; i < n && i < NVT_MAX_GPUS; i++)
		uuids[i] = req[i].uuid;
	if (check_uuids(uuids, n, why, len))
		return NVT_RESERVE_ERROR;
	if (make_own(base, own, &fresh, why, len))
		return NVT_RESERVE_ERROR;
	/* Other claimers must see our claims from the first: open to readers
	 * now, and writers (nvtaskset -p) wait until we are done. */
	nvt_seg_publish(&fresh);
	nvt_claimer_of(own->seg, &me);
	/* Each GPU's slot, holding nothing yet: those of count 0 stay so. */
	for (int i = 0; i < n; i++) {
		memset(&idle[i], 0, sizeof(idle[i]));
		memcpy(idle[i].uuid, req[i].uuid, 16);
		idle[i].topo = req[i].topo;
		idle[i].state = NVT_SLOT_UNSET;
		idle[i].prio = req[i].prio;
		/* A GPU claimed on gets its limit with the claim, never before it. */
		idle[i].mem_limit = req[i].count ? 0 : req[i].mem_limit;
		out[i] = idle[i];
		write_own(&t, i, &out[i], why, len);
	}
	rc = claim_rounds(base, &me, req, n, timeout_ms, &t, out, holders, why, len);
	if (rc != NVT_RESERVE_OK) {
		nvt_seg_remove(own);
		munmap(own->seg, sizeof(*own->seg));
		own->seg = NULL;
	}
	nvt_seg_unlock(&fresh);
	if (rc == NVT_RESERVE_OK)
		nvt_seg_sweep(own, SWEEP_MAX);
	return rc;
}

int nvt_reserve_move(const char *base, struct nvt_seg_handle *h, const struct nvt_claim_gpu *req,
		     int n, const struct nvt_slot_view *prev, int timeout_ms,
		     struct nvt_slot_view *out, struct nvt_reserve_holders *holders, char *why,
		     size_t len)
{
	const uint8_t *uuids[NVT_MAX_GPUS];
	struct claim_target t = {.write = write_moved, .h = h, .idle = prev};
	struct nvt_claimer me;

	for (int i = 0; i < n && i < NVT_MAX_GPUS; i++)
		uuids[i] = req[i].uuid;
	if (check_uuids(uuids, n, why, len))
		return NVT_RESERVE_ERROR;
	if (!h->seg) {
		snprintf(why, len, "its control segment is not locked for writing");
		return NVT_RESERVE_ERROR;
	}
	/* The task is the claimer: its segment's header orders it among the
	 * others, and the scans pass over its own slots (the partitions it
	 * gives up). */
	nvt_claimer_of(&h->head, &me);
	for (int i = 0; i < n; i++) {
		t.slot[i] = nvt_seg_find_slot(h, req[i].uuid);
		out[i] = prev[i];
	}
	return claim_rounds(base, &me, req, n, timeout_ms, &t, out, holders, why, len);
}
