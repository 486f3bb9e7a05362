/*
 * reserve.c - a task's partition in its control segment before it starts,
 * and race-free allocation of TPCs that no other live task holds (see
 * reserve.h). Side effects: the caller's own segment, reading every task's.
 * Returns codes; never prints.
 *
 * The protocol (the rules of each round are pure: src/claim.c):
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
 * that every claim counts as taken, and they pick around it or fail.
 *
 * Progress: the earliest claimer still at work yields to nobody's claim, and
 * may claim over later claimers' picks (they yield within a round), so it
 * confirms unless the GPU is full; then the next earliest, and so on.
 * Claimers that die (kill -9 included) are gone from every scan: nvt_seg_open
 * checks the PID and its start time.
 *
 * A slot that every read finds mid-write (a writer died inside it, or its
 * owner keeps rewriting it) delays a confirmation by a few rounds, then is
 * read as empty, as nvtaskset -l would.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "reserve.h"
#include "claim.h"
#include "gpusel.h"
#include "tpcset.h"

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
/* Scans in a row that may find a slot mid-write before it is read as empty. */
#define UNSURE_ROUNDS 20
/* Sleep between scans while waiting for other claimers: 1 ms to this, at random. */
#define WAIT_MAX_US 4000

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
		if (rc < 0)
			return -1;
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

int nvt_seg_prepare(const char *base, const struct nvt_slot_view *views, int n,
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

/* ---- Scanning the other tasks -------------------------------------------- */

/* What a scan found on one GPU. */
struct held_list {
	struct nvt_held *v;
	int n, cap;
};

static int held_push(struct held_list *l, const struct nvt_held *h)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		struct nvt_held *v = realloc(l->v, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *h;
	return 0;
}

/* Collects the SET slots that handle h's task has on the GPUs of req into
 * found. Returns 0, 1 if a slot was mid-write on every try, -1 (ENOMEM). */
static int scan_task(const struct nvt_seg_handle *h, const struct nvt_claim_gpu *req, int n,
		     struct held_list *found)
{
	struct nvt_held held;
	int unsure = 0;

	held.who.start_time = h->head.start_time;
	held.who.pidns = h->head.pidns;
	held.who.pid = h->head.pid;
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct nvt_slot_view view;
		uint8_t uuid[16];
		int i = 0, rc;

		if (nvt_seg_slot_gpu(h, g, uuid) || nvt_uuid_is_zero(uuid))
			continue;
		while (i < n && memcmp(uuid, req[i].uuid, 16))
			i++;
		if (i == n)
			continue;
		rc = nvt_seg_read(h, g, &view, NULL);
		if (rc == -1)
			unsure = 1;
		if (rc || view.state != NVT_SLOT_SET || memcmp(view.uuid, req[i].uuid, 16))
			continue;
		held.claim = !!(view.flags & NVT_SLOTF_CLAIM);
		held.tpcs = view.tpcs;
		if (held_push(&found[i], &held))
			return -1;
	}
	return unsure;
}

/*
 * Reads every live task's slots on the GPUs of req, every user's, except
 * the caller's (me). Returns 0, 1 if some slot was mid-write on every try,
 * or -1 with errno set.
 */
static int scan(const char *base, const struct nvt_claimer *me, const struct nvt_claim_gpu *req,
		int n, struct held_list *found)
{
	pid_t *pids;
	int count = nvt_seg_tasks(base, 1, &pids), unsure = 0;

	if (count < 0)
		return -1;
	for (int i = 0; i < n; i++)
		found[i].n = 0;
	for (int k = 0; k < count && unsure >= 0; k++) {
		struct nvt_seg_handle h;
		struct nvt_claimer who;
		int rc;

		/* Gone, or no (current) segment: it holds nothing. */
		if (nvt_seg_open(base, pids[k], 0, &h))
			continue;
		who.start_time = h.head.start_time;
		who.pidns = h.head.pidns;
		who.pid = h.head.pid;
		if (nvt_claimer_cmp(&who, me)) {
			rc = scan_task(&h, req, n, found);
			if (rc < 0)
				errno = ENOMEM;
			unsure = rc < 0 ? -1 : unsure | rc;
		}
		nvt_seg_close(&h);
	}
	free(pids);
	return unsure;
}

/* ---- Claiming -------------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleeps 1 ms to WAIT_MAX_US, at random: claimers that met do not meet again in step. */
static void backoff(unsigned *seed)
{
	long us = 1000 + (long)(rand_r(seed) % (WAIT_MAX_US - 1000 + 1));
	struct timespec ts = {0, us * 1000};

	nanosleep(&ts, NULL);
}

/* Publishes out[i] in the caller's slot i. */
static void publish(struct nvt_seg_own *own, const struct nvt_slot_view *out, int i)
{
	nvt_slot_write(&own->seg->gpu[i], &out[i]);
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

int nvt_claim(const char *base, const struct nvt_claim_gpu *req, int n, int timeout_ms,
	      struct nvt_slot_view *out, struct nvt_seg_own *own, char *why, size_t len)
{
	const uint8_t *uuids[NVT_MAX_GPUS];
	struct held_list found[NVT_MAX_GPUS];
	struct nvt_claimer me;
	long long start = now_ms(), deadline, end;
	unsigned seed, free_tpcs;
	struct nvt_seg_new fresh;
	int rc = NVT_RESERVE_ERROR, unsure_rounds = 0;
	char where[64];

	for (int i = 0; i < n && i < NVT_MAX_GPUS; i++)
		uuids[i] = req[i].uuid;
	if (check_uuids(uuids, n, why, len))
		return NVT_RESERVE_ERROR;
	if (make_own(base, own, &fresh, why, len))
		return NVT_RESERVE_ERROR;
	/* Other claimers must see our claims from the first: open to readers
	 * now, and writers (nvtaskset -p) wait until we are done. */
	nvt_seg_publish(&fresh);
	me.start_time = own->seg->start_time;
	me.pidns = own->seg->pidns;
	me.pid = own->seg->pid;
	seed = (unsigned)getpid() ^ (unsigned)start;
	if (timeout_ms < 0)
		timeout_ms = 0;
	/* Until deadline, later claimers that overlap are waited for; then
	 * every claim counts as taken, and end bounds the re-picks. */
	deadline = start + timeout_ms;
	end = deadline + (timeout_ms > 1000 ? timeout_ms : 1000);
	/* Each GPU's slot, holding nothing yet: those of count 0 stay so. */
	memset(found, 0, sizeof(found));
	for (int i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		memcpy(out[i].uuid, req[i].uuid, 16);
		out[i].topo = req[i].topo;
		out[i].state = NVT_SLOT_UNSET;
		publish(own, out, i);
	}
	for (;;) {
		int claims_taken = now_ms() >= deadline, settled = 1, changed = 0, unsure;

		if (now_ms() >= end) {
			snprintf(why, len, "cannot pick TPCs: other starting tasks kept claiming the "
				 "same TPCs for %g s", (double)(end - start) / 1000.0);
			rc = NVT_RESERVE_TIMEOUT;
			goto fail;
		}
		unsure = scan(base, &me, req, n, found);
		if (unsure < 0) {
			snprintf(why, len, "cannot list the tasks in %s: %s", base, strerror(errno));
			goto fail;
		}
		unsure_rounds = unsure ? unsure_rounds + 1 : 0;
		for (int i = 0; i < n; i++) {
			struct nvt_tpcset next;
			int step;

			if (!req[i].count)
				continue;
			step = nvt_claim_step(&req[i].topo, req[i].count, req[i].strategy, &me,
					      out[i].state == NVT_SLOT_SET ? &out[i].tpcs : NULL,
					      found[i].v, found[i].n, claims_taken, &next, &free_tpcs);
			gpu_words(req, n, i, where, sizeof(where));
			switch (step) {
			case NVT_STEP_CONFIRM:
				break;
			case NVT_STEP_WAIT:
				settled = 0;
				break;
			case NVT_STEP_CLAIM:
				out[i].state = NVT_SLOT_SET;
				out[i].flags = NVT_SLOTF_CLAIM;
				out[i].tpcs = next;
				publish(own, out, i);
				settled = 0;
				changed = 1;
				break;
			case NVT_STEP_WITHDRAW:
				if (out[i].state == NVT_SLOT_SET) {
					out[i].state = NVT_SLOT_UNSET;
					out[i].flags = 0;
					nvt_set_clear(&out[i].tpcs);
					publish(own, out, i);
				}
				settled = 0;
				break;
			case NVT_STEP_FULL:
				snprintf(why, len, "cannot pick %u TPCs%s: only %u %s free of other tasks",
					 req[i].count, where, free_tpcs, free_tpcs == 1 ? "is" : "are");
				rc = NVT_RESERVE_FULL;
				goto fail;
			default: /* NVT_STEP_STUCK */
				snprintf(why, len, "cannot pick %u TPCs%s: %u %s free of other tasks' "
					 "partitions, but other starting tasks held claims on them for "
					 "%g s", req[i].count, where, free_tpcs,
					 free_tpcs == 1 ? "is" : "are", timeout_ms / 1000.0);
				rc = NVT_RESERVE_TIMEOUT;
				goto fail;
			}
		}
		if (settled && (!unsure || unsure_rounds > UNSURE_ROUNDS))
			break;
		/* Past the deadline no order breaks ties (every claim counts as
		 * taken): claimers that moved apart at once must not meet again. */
		if (!changed || claims_taken)
			backoff(&seed);
	}
	/* The scan that ended the loop came after every claim was written. */
	for (int i = 0; i < n; i++) {
		out[i].flags = 0;
		if (req[i].count)
			publish(own, out, i);
	}
	rc = NVT_RESERVE_OK;
	goto done;
fail:
	for (int i = 0; i < n; i++) {
		out[i].state = NVT_SLOT_UNSET;
		out[i].flags = 0;
		nvt_set_clear(&out[i].tpcs);
		publish(own, out, i);
	}
	nvt_seg_remove(own);
	munmap(own->seg, sizeof(*own->seg));
	own->seg = NULL;
done:
	nvt_seg_unlock(&fresh);
	for (int i = 0; i < n; i++)
		free(found[i].v);
	if (rc == NVT_RESERVE_OK)
		nvt_seg_sweep(own, SWEEP_MAX);
	return rc;
}
