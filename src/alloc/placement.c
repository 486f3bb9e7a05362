/*
 * placement.c - what the other tasks hold on a GPU, the memory half to pick
 * in, and -n's pick from one look (placement.h). The claim protocol
 * (reserve.c) scans with nvt_held_scan, so a dry run counts what a start
 * counts.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "placement.h"
#include "core/membw.h"
#include "core/prio.h"
#include "core/gpusel.h"
#include "core/tpcset.h"
#include "seg/segfile.h"
#include "os/proc.h"
#include "core/ptree.h"
#include "core/text.h"
#include "core/grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Scanning the other tasks -------------------------------------------- */

static int held_push(struct nvt_held_list *l, const struct nvt_held *h, pid_t pid)
{
	size_t cap = l->cap; /* the two grow alike */
	struct nvt_held *v = nvt_grow(l->v, (size_t)l->n, &cap, sizeof(*v), 16);
	pid_t *pids;

	if (!v)
		return -1;
	l->v = v;
	pids = nvt_grow(l->pids, (size_t)l->n, &l->cap, sizeof(*pids), 16);
	if (!pids)
		return -1;
	l->pids = pids;
	l->pids[l->n] = pid;
	l->v[l->n++] = *h;
	return 0;
}

/* Collects the SET slots that handle h's task (pid) has on the GPUs of
 * uuids into found, and those on every TPC that hold a GPU memory limit (no
 * TPCs: for --mem-exclusive's sum). Returns 0, or -1 (ENOMEM). */
static int scan_task(const struct nvt_seg_handle *h, pid_t pid, const uint8_t *const *uuids,
		     int n, struct nvt_held_list *found)
{
	struct nvt_slot_status status;
	struct nvt_held held;

	nvt_claimer_of(&h->head, &held.who);
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct nvt_slot_view view;
		uint8_t uuid[16];
		int i = 0, rc;

		if (nvt_seg_slot_gpu(h, g, uuid) || nvt_uuid_is_zero(uuid))
			continue;
		while (i < n && memcmp(uuid, uuids[i], 16))
			i++;
		if (i == n)
			continue;
		/* An unsettled slot (its sequence stayed odd) counts as held
		 * by its owner, every TPC a copy showed, like a live task's
		 * partition: never as a claim in progress, so a segment left so
		 * can neither stall nor fail another start. */
		rc = nvt_seg_read(h, g, &view, &status);
		if (rc == NVT_SEG_SHORT || memcmp(view.uuid, uuids[i], 16) ||
		    (view.state != NVT_SLOT_SET && !view.mem_limit))
			continue;
		held.mem_limit = view.mem_limit;
		held.claim = rc == 0 && (view.flags & NVT_SLOTF_CLAIM);
		held.prio = view.prio;
		if (view.state != NVT_SLOT_SET) {
			nvt_set_clear(&held.tpcs);
			held.claim = 0;
			if (held_push(&found[i], &held, pid))
				return -1;
			continue;
		}
		/* A task with a priority holds its own partition, whatever an
		 * agent lets it use now (guarded); a borrowing one the TPCs it
		 * borrows too, which go back only when an agent (or, past the
		 * lease, its own shim) says so: its lender may have ended. So
		 * do the TPCs a task that yields in its shim says its launches
		 * borrow now (its lender may have ended since its last launch). */
		if (view.prio.prio != NVT_PRIO_NONE) {
			nvt_prio_own_of(&view, &held.tpcs);
			if (rc || view.prio.mode == NVT_MODE_BORROWING) /* unsettled: any copy's too */
				nvt_set_or(&held.tpcs, &held.tpcs, &view.tpcs);
			if (status.yield.state == NVT_YS_BORROWING)
				nvt_set_or(&held.tpcs, &held.tpcs, &status.yield.borrowed);
		} else {
			held.tpcs = view.tpcs;
		}
		if (held_push(&found[i], &held, pid))
			return -1;
	}
	return 0;
}

/* What scan_named passes to named_task for each file. */
struct named_scan {
	pid_t pid;
	const struct nvt_claimer *me;
	const uint8_t *const *uuids;
	int n;
	struct nvt_held_list *found;
};

/* scan_task for one file that names the task (nvt_seg_each_named), unless it is claimer me's. */
static int named_task(const struct nvt_seg_handle *h, void *arg)
{
	const struct named_scan *s = arg;
	struct nvt_claimer who;

	nvt_claimer_of(&h->head, &who);
	if ((!s->me || nvt_claimer_cmp(&who, s->me)) && scan_task(h, s->pid, s->uuids, s->n, s->found)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The tasks held as scan_task counts them, by every file whose header names pid
 * (nvt_seg_each_named), those of claimer me passed over. Returns 0, or -1 with errno set (no
 * memory, or a directory that may hold such a file could not be read). */
static int scan_named(const char *base, pid_t pid, const struct nvt_claimer *me, const uint8_t *const *uuids,
		      int n, struct nvt_held_list *found)
{
	struct named_scan s = {pid, me, uuids, n, found};

	return nvt_seg_each_named(base, pid, named_task, &s);
}

int nvt_held_scan(const char *base, const struct nvt_claimer *me, const uint8_t *const *uuids,
		  int n, struct nvt_held_list *found)
{
	pid_t *pids;
	int count = nvt_seg_tasks(base, 1, &pids), failed = 0;

	for (int i = 0; i < n; i++)
		found[i].n = 0;
	if (count < 0 && errno == ENOENT)
		return 0; /* no task has run yet */
	if (count < 0)
		return -1;
	for (int k = 0; k < count && !failed; k++) {
		struct nvt_seg_handle h;
		struct nvt_claimer who;
		int rc;

		/* Gone, no (current) segment, one still being made (not ours to
		 * read) or not one we know: it holds nothing. One its user holds a
		 * lease on cannot be read, and must not fail others' claims: its
		 * user hides her own task's TPCs, no more than a task started
		 * without nvtaskset would. Anything else (EMFILE, say) may hide a
		 * task's partition: never read as free. */
		rc = nvt_seg_open(base, pids[k], 0, &h);
		/* Which file it uses could not be told in time (its maps, read beside a rival
		 * file, came late: its user can hold them): every file that names it holds, so
		 * that her stall neither fails the claim nor frees the task's TPCs. */
		if (rc == NVT_SEG_ESYS && h.sys_errno == ETIMEDOUT) {
			if (scan_named(base, pids[k], me, uuids, n, found))
				failed = 1;
			continue;
		}
		if (rc == NVT_SEG_ESYS) {
			failed = 1;
			break;
		}
		if (rc)
			continue;
		nvt_claimer_of(&h.head, &who);
		if ((!me || nvt_claimer_cmp(&who, me)) && scan_task(&h, pids[k], uuids, n, found)) {
			errno = ENOMEM;
			failed = 1;
		}
		nvt_seg_close(&h);
	}
	free(pids);
	return failed ? -1 : 0;
}

void nvt_held_union(const struct nvt_held_list *l, struct nvt_tpcset *out)
{
	nvt_set_clear(out);
	for (int i = 0; i < l->n; i++)
		nvt_set_or(out, out, &l->v[i].tpcs);
}

void nvt_held_free(struct nvt_held_list *lists, int n)
{
	for (int i = 0; i < n; i++) {
		free(lists[i].v);
		free(lists[i].pids);
		memset(&lists[i], 0, sizeof(lists[i]));
	}
}

static int pid_order(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* Most TPCs first, then by PID. */
static int holder_order(const void *a, const void *b)
{
	const struct nvt_holder *x = a, *y = b;

	if (x->tpcs != y->tpcs)
		return x->tpcs > y->tpcs ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int nvt_held_holders(const struct nvt_held_list *l, const struct nvt_tpcset *region,
		     struct nvt_holder *out, int max)
{
	struct nvt_holder *all = l->n ? calloc((size_t)l->n, sizeof(*all)) : NULL;
	int n = 0;

	if (l->n && !all)
		return -1;
	/* A task's entries (one a file that names it) count together, each TPC once. */
	for (int k = 0; k < l->n; k++) {
		struct nvt_tpcset mine, in;
		int seen = 0;
		nvt_set_clear(&mine);
		for (int j = 0; j < l->n; j++) {
			if (l->pids[j] != l->pids[k])
				continue;
			seen |= j < k;
			nvt_set_or(&mine, &mine, &l->v[j].tpcs);
		}
		nvt_set_and(&in, &mine, region);
		if (!seen && nvt_set_count(&in))
			all[n++] = (struct nvt_holder){l->pids[k], nvt_set_count(&in)};
	}
	if (n)
		qsort(all, (size_t)n, sizeof(*all), holder_order);
	for (int k = 0; k < n && k < max; k++)
		out[k] = all[k];
	free(all);
	return n;
}

/* The index in set (sorted, n) of the top of set[i]'s tree: its farthest ancestor in set
 * (up: each one's nearest, nvt_links_nearest), or i. */
static size_t tree_top(const pid_t *set, const pid_t *up, size_t n, size_t i)
{
	for (int depth = 0; up[i] && depth < NVT_TREE_MAX_DEPTH; depth++) {
		const pid_t *at = bsearch(&up[i], set, n, sizeof(*set), pid_order);
		if (!at)
			break;
		i = (size_t)(at - set);
	}
	return i;
}

/* Drops from out (n) the tasks of tree's tree (those found, tree among them), as -l tells
 * trees apart. Returns how many stay, or -1 with errno set. */
static int drop_own_tree(pid_t tree, const struct nvt_held_list *found, int n_found,
			 struct nvt_clash *out, int n)
{
	struct nvt_proc_link *links = NULL;
	size_t n_set = 1;
	pid_t *set, *up;
	int n_links = nvt_proc_links(&links), kept = 0;

	if (n_links < 0)
		return -1;
	nvt_links_sort(links, (size_t)n_links);
	for (int i = 0; i < n_found; i++)
		n_set += (size_t)found[i].n;
	set = malloc(2 * n_set * sizeof(*set));
	if (!set) {
		free(links);
		return -1;
	}
	up = set + n_set;
	n_set = 0;
	set[n_set++] = tree;
	for (int i = 0; i < n_found; i++)
		for (int k = 0; k < found[i].n; k++)
			set[n_set++] = found[i].pids[k];
	qsort(set, n_set, sizeof(*set), pid_order);
	nvt_links_nearest(links, (size_t)n_links, set, n_set, up);
	for (int k = 0; k < n; k++) {
		const pid_t *a = bsearch(&tree, set, n_set, sizeof(*set), pid_order);
		const pid_t *b = bsearch(&out[k].pid, set, n_set, sizeof(*set), pid_order);
		if (!a || !b || tree_top(set, up, n_set, (size_t)(a - set)) !=
					tree_top(set, up, n_set, (size_t)(b - set)))
			out[kept++] = out[k];
	}
	free(set);
	free(links);
	return kept;
}

int nvt_placement_clashes(const char *base, pid_t tree, const struct nvt_slot_view *parts, int n,
			  struct nvt_clash *out)
{
	static struct nvt_clash found_clashes[NVT_MAX_GPUS * NVT_CLASHES_MAX];
	struct nvt_held_list found[NVT_MAX_GPUS];
	const uint8_t *uuids[NVT_MAX_GPUS] = {0};
	int n_clashes = 0, kept;

	memset(found, 0, sizeof(found));
	for (int i = 0; i < n && i < NVT_MAX_GPUS; i++)
		uuids[i] = parts[i].uuid;
	if (nvt_held_scan(base, NULL, uuids, n, found)) {
		nvt_held_free(found, n);
		return -1;
	}
	for (int i = 0; i < n && i < NVT_MAX_GPUS; i++)
		for (int k = 0; k < found[i].n && parts[i].state == NVT_SLOT_SET; k++) {
			struct nvt_clash *c = &found_clashes[n_clashes];
			const struct nvt_held *h = &found[i].v[k];
			if (h->claim || found[i].pids[k] == tree ||
			    n_clashes == (int)(sizeof(found_clashes) / sizeof(found_clashes[0])) ||
			    !nvt_prio_clash(&parts[i].tpcs, &parts[i].prio, &h->tpcs, &h->prio, &c->both))
				continue;
			c->pid = found[i].pids[k];
			c->part = i;
			n_clashes++;
		}
	kept = n_clashes ? drop_own_tree(tree, found, n, found_clashes, n_clashes) : 0;
	nvt_held_free(found, n);
	for (int k = 0; k < kept && k < NVT_CLASHES_MAX; k++)
		out[k] = found_clashes[k];
	return kept;
}

/* What the tasks but me hold on gpu, into others. Returns 0, or -1 with why. */
static int others_of(const char *base, const struct nvt_placement_gpu *gpu,
		     const struct nvt_claimer *me, struct nvt_tpcset *others, pid_t *whole, char *why,
		     size_t len)
{
	struct nvt_held_list held = {0};
	const uint8_t *uuids[1] = {gpu->uuid};
	int k;

	if (nvt_held_scan(base, me, uuids, 1, &held)) {
		snprintf(why, len, "cannot list the tasks in %s: %s", base, strerror(errno));
		nvt_held_free(&held, 1);
		return -1;
	}
	nvt_held_union(&held, others);
	k = nvt_claim_whole_gpu_holder(gpu->topo, held.v, held.n);
	*whole = k < 0 ? 0 : held.pids[k];
	nvt_held_free(&held, 1);
	return 0;
}

void nvt_placement_whole_gpu_why(pid_t whole, char *why, size_t len)
{
	size_t n = strlen(why);

	if (whole > 0 && n < len)
		snprintf(why + n, len - n, " (pid %ld holds every TPC with a priority, as --priority "
			 "without a partition does: give it fewer first, e.g. nvtaskset -p -g GPCS %ld)",
			 (long)whole, (long)whole);
}

/* ---- The memory half -------------------------------------------------------- */

int nvt_placement_near(const struct nvt_placement_gpu *gpu, const struct nvt_placement_ask *ask,
		       const struct nvt_tpcset *avail, const struct nvt_tpcset *others,
		       int claiming, struct nvt_near *near, char *why, size_t len)
{
	const struct nvt_gpu_topology *g = gpu->halves;
	struct nvt_tpcset in;
	char gpcs[NVT_LIST_TEXT_MAX];
	int h = ask->half;

	memset(near, 0, sizeof(*near));
	if (h == NVT_PLACEMENT_ANY_HALF)
		return NVT_NEAR_CHOSEN;
	if (!g || !g->halves_measured)
		return nvt_why(why, len, "the memory halves of GPU %d are not known: 'nvtaskset "
			       "--calibrate' measures them (as root: for every user)", g ? g->index : -1);
	if (!nvt_membw_known(&g->halves))
		return nvt_why(why, len, "GPU %d shows no memory halves: its bandwidth probe found "
			       "no neighbour that cost clearly more than another ('nvtaskset "
			       "--calibrate' measures again)", g->index);
	if (h == NVT_HALF_UNKNOWN) {
		h = nvt_membw_auto_half(gpu->topo, &g->halves, avail, others, ask->count);
		if (h == NVT_HALF_UNKNOWN)
			return NVT_NEAR_NEITHER;
	}
	nvt_membw_half_tpcs(gpu->topo, &g->halves, h, &near->tpcs);
	nvt_set_and(&in, &near->tpcs, avail);
	nvt_membw_gpcs_text(&g->halves, h, gpcs, sizeof(gpcs));
	if (ask->half != NVT_HALF_UNKNOWN && !claiming && nvt_set_count(&in) < ask->count)
		return nvt_why(why, len, "cannot pick %u TPCs in memory half %d of GPU %d (GPCs %s): "
			       "only %u %s free", ask->count, h, g->index, gpcs, nvt_set_count(&in),
			       nvt_set_count(&in) == 1 ? "is" : "are");
	near->mode = ask->half == NVT_HALF_UNKNOWN ? NVT_NEAR_PREFER : NVT_NEAR_ONLY;
	return NVT_NEAR_CHOSEN;
}

int nvt_placement_near_for_claim(const char *base, const struct nvt_placement_gpu *gpu,
				 const struct nvt_placement_ask *ask, const struct nvt_claimer *me,
				 struct nvt_near *near, char *why, size_t len)
{
	struct nvt_tpcset avail, others;
	pid_t whole;

	memset(near, 0, sizeof(*near));
	if (ask->half == NVT_PLACEMENT_ANY_HALF)
		return NVT_NEAR_CHOSEN;
	nvt_topo_all(gpu->topo, &avail);
	if (others_of(base, gpu, me, &others, &whole, why, len))
		return -1;
	nvt_set_andnot(&avail, &avail, &others);
	return nvt_placement_near(gpu, ask, &avail, &others, 1, near, why, len);
}

/* ---- -n's pick from one look ------------------------------------------------ */

int nvt_placement_once(const char *base, const struct nvt_placement_gpu *gpu,
		       const struct nvt_placement_ask *ask, const struct nvt_claimer *me,
		       struct nvt_tpcset *out, int *neither, char *why, size_t len)
{
	struct nvt_pick want = {.count = ask->count, .strategy = ask->strategy};
	struct nvt_tpcset avail, others;
	pid_t whole = 0;
	int rc;

	nvt_set_clear(&others);
	nvt_topo_all(gpu->topo, &avail);
	if ((ask->exclude_running || ask->half == NVT_HALF_UNKNOWN) &&
	    others_of(base, gpu, me, &others, &whole, why, len))
		return -1;
	if (ask->exclude_running)
		nvt_set_andnot(&avail, &avail, &others);
	if (ask->count > gpu->topo->n_tpcs)
		return nvt_why(why, len, "cannot pick %u TPCs: %s has %u", ask->count, gpu->name,
			       gpu->topo->n_tpcs);
	rc = nvt_placement_near(gpu, ask, &avail, &others, 0, &want.near, why, len);
	if (rc < 0)
		return -1;
	if (neither)
		*neither = rc == NVT_NEAR_NEITHER;
	if (nvt_pick_tpcs(gpu->topo, &want, &avail, out) == 0)
		return 0;
	if (want.near.mode == NVT_NEAR_ONLY)
		return nvt_why(why, len, "cannot pick %u TPCs in the memory half asked for", ask->count);
	nvt_why(why, len, "cannot pick %u TPCs: only %u %s free of other tasks", ask->count,
		nvt_set_count(&avail), nvt_set_count(&avail) == 1 ? "is" : "are");
	if (ask->exclude_running)
		nvt_placement_whole_gpu_why(whole, why, len);
	return -1;
}
