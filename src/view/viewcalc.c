/*
 * viewcalc.c - what a view says (view.h): a task's state and priority as
 * words, the rates between two views, and a GPU's map. Pure: it reads the
 * views it is given.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "core/prio.h"
#include "core/tpcset.h"
#include "core/yield.h"

/* Marks the idle tasks with a priority whose own TPCs a lower task of their GPU borrows. */
static void find_lenders(struct nvt_view *v)
{
	for (size_t a = 0; a < v->n_slots; a++) {
		struct nvt_view_slot *p = &v->slots[a];
		p->lending = 0;
		if (p->prio.prio == NVT_PRIO_NONE || p->prio.mode != NVT_MODE_OWN)
			continue;
		for (size_t b = 0; b < v->n_slots && !p->lending; b++) {
			const struct nvt_view_slot *q = &v->slots[b];
			struct nvt_tpcset both;
			if (q->gpu != p->gpu || q->prio.prio == NVT_PRIO_NONE || q->prio.prio >= p->prio.prio ||
			    (q->prio.mode != NVT_MODE_BORROWING && q->yield.state != NVT_YS_BORROWING))
				continue;
			nvt_set_and(&both, &q->current, &p->own);
			p->lending = nvt_set_count(&both) > 0;
		}
	}
}

/* Keeps the first of each task's slots on a GPU, the others dropped. The shim writes one slot
 * a GPU, but a task's user may write anything into her segment: a second slot of one GPU would
 * show the task twice on it in -l and top, and be a second series of the same labels in the
 * metrics, which Prometheus' client libraries refuse (node_exporter's textfile collector:
 * "was collected before with the same name and label values"). The first slot is the task's
 * on that GPU, for every viewer. */
static void one_slot_a_gpu(struct nvt_view *v)
{
	size_t kept = 0;

	for (size_t k = 0; k < v->n_tasks; k++) {
		struct nvt_view_task *t = &v->tasks[k];
		size_t first = kept;
		for (int i = 0; i < t->n_slots; i++) {
			size_t s = t->first_slot + (size_t)i, j = first;
			while (j < kept && v->slots[j].gpu != v->slots[s].gpu)
				j++;
			if (j < kept)
				continue;
			if (kept != s)
				v->slots[kept] = v->slots[s];
			kept++;
		}
		t->first_slot = first;
		t->n_slots = (int)(kept - first);
	}
	v->n_slots = kept;
}

void nvt_view_settle(struct nvt_view *v)
{
	one_slot_a_gpu(v);
	for (int i = 0; i < v->n_gpus; i++) {
		struct nvt_view_gpu *g = &v->gpus[i];
		nvt_set_clear(&g->working);
		nvt_set_clear(&g->held);
		nvt_set_clear(&g->borrowed);
		g->tasks = 0;
		for (unsigned t = 0; g->map_known && t < g->topo.n_tpcs && t < NVT_MAX_TPCS; t++)
			nvt_set_add(&g->working, t);
	}
	for (size_t s = 0; s < v->n_slots; s++) {
		const struct nvt_view_slot *slot = &v->slots[s];
		struct nvt_view_gpu *g = &v->gpus[slot->gpu];
		g->tasks++;
		if (!slot->partitioned)
			continue;
		nvt_set_or(&g->held, &g->held, &slot->own);
		nvt_set_or(&g->held, &g->held, &slot->current);
		nvt_set_or(&g->borrowed, &g->borrowed, &slot->borrowed);
	}
	find_lenders(v);
}

const struct nvt_view_task *nvt_view_task_of(const struct nvt_view *v, pid_t pid)
{
	size_t lo = 0, hi = v->n_tasks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v->tasks[mid].pid == pid)
			return &v->tasks[mid];
		if (v->tasks[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *nvt_view_state_word(const struct nvt_view_slot *s)
{
	if (s->prio.prio == NVT_PRIO_NONE)
		return "-";
	if (s->lending)
		return "lending";
	/* Its shim's own state while the agent leaves it its own TPCs: any state a shim
	 * publishes shows by its name, a newer one's too. */
	if (s->prio.mode == NVT_MODE_OWN && s->yield.state != NVT_YS_NONE)
		return nvt_yield_state_name(s->yield.state);
	return nvt_prio_mode_name(s->prio.mode);
}

int nvt_view_waiting(const struct nvt_view_slot *s)
{
	return s->prio.prio != NVT_PRIO_NONE && s->prio.mode == NVT_MODE_OWN &&
	       (s->yield.state == NVT_YS_GATED || s->yield.state == NVT_YS_AHEAD ||
		s->yield.state == NVT_YS_BOUND);
}

const char *nvt_view_prio_word(const struct nvt_view_slot *s)
{
	return s->prio.prio == NVT_PRIO_NONE ? "" : nvt_prio_name(s->prio.prio);
}

enum nvt_view_agent_state nvt_view_agent_state(const struct nvt_view *v, int i)
{
	const struct nvt_view_agent *a = &v->agents[i];
	int root_runs = 0;

	if (a->pid > 0)
		return NVT_VIEW_AGENT_RUNS;
	for (int k = 0; k < v->n_agents; k++)
		root_runs |= v->agents[k].uid == 0 && v->agents[k].pid > 0;
	return a->wanted && !root_runs ? NVT_VIEW_AGENT_MISSING : NVT_VIEW_AGENT_IDLE;
}

/* Per second, from counts a and b taken seconds apart (a counter that went back: 0). */
static double per_second(uint64_t a, uint64_t b, double seconds)
{
	return b >= a ? (double)(b - a) / seconds : 0;
}

void nvt_view_rates(const struct nvt_view *prev, const struct nvt_view *now, size_t s,
		    double *launches_per_s, double *waits_per_s)
{
	const struct nvt_view_slot *slot = &now->slots[s];
	const struct nvt_view_task *t = &now->tasks[slot->task], *was;
	double seconds;

	*launches_per_s = *waits_per_s = -1;
	was = prev && now->taken_ns > prev->taken_ns ? nvt_view_task_of(prev, t->pid) : NULL;
	/* (a PID another process's now is a task new since) */
	for (int i = 0; was && was->start_time == t->start_time && i < was->n_slots; i++) {
		const struct nvt_view_slot *old = &prev->slots[was->first_slot + (size_t)i];
		if (memcmp(prev->gpus[old->gpu].uuid, now->gpus[slot->gpu].uuid, 16))
			continue;
		seconds = (double)(now->taken_ns - prev->taken_ns) / 1e9;
		*launches_per_s = per_second(old->launches, slot->launches, seconds);
		*waits_per_s = per_second(old->yield.holds, slot->yield.holds, seconds);
		return;
	}
	/* The task's first view: since it started (its counters' zero). */
	if (!t->start_time || now->ticks_per_s <= 0)
		return;
	seconds = (double)now->boot_ns / 1e9 - (double)t->start_time / (double)now->ticks_per_s;
	if (seconds <= 0)
		return;
	*launches_per_s = per_second(0, slot->launches, seconds);
	*waits_per_s = per_second(0, slot->yield.holds, seconds);
}

int nvt_view_holder(const struct nvt_view *v, const struct nvt_view_map *map, size_t s)
{
	const struct nvt_view_slot *slot = &v->slots[s];

	if (slot->gpu != map->gpu || !slot->partitioned)
		return -1;
	for (int h = 0; h < map->n_parts; h++) {
		const struct nvt_view_slot *part = &v->slots[map->part[h]];
		if (nvt_set_equal(&part->own, &slot->own) &&
		    v->tasks[part->task].seg_owner == v->tasks[slot->task].seg_owner &&
		    (!v->tree || v->tree[part->task] == v->tree[slot->task] ||
		     nvt_prio_may_share(&part->prio, &slot->prio)))
			return h;
	}
	return -1;
}

/* The lowest TPC of set, or NVT_MAX_TPCS for none. */
static unsigned lowest(const struct nvt_tpcset *set)
{
	unsigned t = 0;

	while (t < NVT_MAX_TPCS && !nvt_set_has(set, t))
		t++;
	return t;
}

/* The view's partitions on map's GPU, each once (its first slot), by lowest TPC. */
static void find_parts(const struct nvt_view *v, struct nvt_view_map *map)
{
	for (size_t s = 0; s < v->n_slots; s++) {
		const struct nvt_view_slot *slot = &v->slots[s];
		unsigned low = lowest(&slot->own);
		int at = map->n_parts;
		if (slot->gpu != map->gpu)
			continue;
		if (!slot->partitioned) {
			map->n_everywhere++;
			continue;
		}
		if (low == NVT_MAX_TPCS || nvt_view_holder(v, map, s) >= 0)
			continue;
		/* Insertion by lowest TPC: a few dozen holders a GPU. */
		while (at > 0 && lowest(&v->slots[map->part[at - 1]].own) > low)
			at--;
		if (map->n_parts == NVT_VIEW_PARTS) {
			if (at == NVT_VIEW_PARTS)
				continue;
			map->n_parts--; /* the last makes room */
		}
		memmove(&map->part[at + 1], &map->part[at], (size_t)(map->n_parts - at) * sizeof(map->part[0]));
		map->part[at] = (int32_t)s;
		map->n_parts++;
	}
}

void nvt_view_map(const struct nvt_view *v, int gpu, struct nvt_view_map *map)
{
	memset(map, 0, sizeof(*map));
	map->gpu = gpu;
	for (unsigned t = 0; t < NVT_MAX_TPCS; t++)
		map->owner[t] = map->borrower[t] = NVT_VIEW_FREE;
	find_parts(v, map);
	for (int h = 0; h < map->n_parts; h++)
		for (unsigned t = 0; t < NVT_MAX_TPCS; t++)
			if (nvt_set_has(&v->slots[map->part[h]].own, t)) {
				map->holders[t]++;
				if (map->owner[t] == NVT_VIEW_FREE)
					map->owner[t] = h;
			}
	for (size_t s = 0; s < v->n_slots; s++) {
		const struct nvt_view_slot *slot = &v->slots[s];
		int h = nvt_view_holder(v, map, s);
		if (h < 0 || !nvt_set_count(&slot->borrowed))
			continue;
		for (unsigned t = 0; t < NVT_MAX_TPCS; t++)
			if (nvt_set_has(&slot->borrowed, t))
				map->borrower[t] = map->borrower[t] == NVT_VIEW_FREE || map->borrower[t] == h
							   ? h
							   : NVT_VIEW_SHARED;
	}
}

char nvt_view_symbol(int32_t h)
{
	if (h == NVT_VIEW_FREE)
		return '.';
	if (h < 0)
		return '*';
	return h < NVT_VIEW_SYMBOLS ? (char)('A' + h) : '#';
}

/* The TPCs slots a and b share against the design into both; 0 when none (tree: as
 * nvt_view_overlaps). */
static unsigned clash(const struct nvt_view *v, const pid_t *tree, size_t a, size_t b,
		      struct nvt_tpcset *both)
{
	const struct nvt_view_slot *x = &v->slots[a], *y = &v->slots[b];

	if (x->task == y->task || x->gpu != y->gpu || !x->partitioned || !y->partitioned ||
	    !tree[x->task] || !tree[y->task] || tree[x->task] == tree[y->task])
		return 0;
	/* Managed tasks by their own partitions: a borrowed or guarded one is the agent's doing. */
	if (nvt_prio_may_share(&x->prio, &y->prio))
		return 0;
	nvt_set_and(both, &x->own, &y->own);
	return nvt_set_count(both);
}

/* Slot a's record of v's overlaps into *o; 0 when it has none (tree: as nvt_view_overlaps). */
static int overlaps_of(const struct nvt_view *v, const pid_t *tree, size_t a,
		       struct nvt_view_overlap *o)
{
	o->slot = a;
	o->n_others = 0;
	nvt_set_clear(&o->both);
	for (size_t b = 0; b < v->n_slots; b++) {
		struct nvt_tpcset both;
		if (!clash(v, tree, a, b, &both))
			continue;
		if (o->n_others < NVT_VIEW_OVERLAP_NAMED)
			o->others[o->n_others] = b;
		o->n_others++;
		nvt_set_or(&o->both, &o->both, &both);
	}
	return o->n_others > 0;
}

int nvt_view_overlaps(const struct nvt_view *v, const pid_t *tree, struct nvt_view_overlap **out,
		      size_t *n)
{
	size_t room = 0;
	struct nvt_view_overlap o;

	*out = NULL;
	*n = 0;
	for (size_t a = 0; a < v->n_slots; a++) {
		if (!overlaps_of(v, tree, a, &o))
			continue;
		if (*n == room) {
			struct nvt_view_overlap *more;
			room = room ? 2 * room : 4;
			more = realloc(*out, room * sizeof(*more));
			if (!more) {
				free(*out);
				*out = NULL;
				*n = 0;
				return -1;
			}
			*out = more;
		}
		(*out)[(*n)++] = o;
	}
	return 0;
}
