/*
 * prio.c - priorities on top of partitions: the pure rules (see prio.h and
 * docs/priorities.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include "prio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/tpcset.h"
#include "core/yield.h"

/* Pseudo GPC of TPCs whose GPC the topology does not know: picked last. */
#define UNKNOWN_GPC NVT_MAX_GPCS

/* The GPC of TPC t, or UNKNOWN_GPC. */
static unsigned gpc_of(const struct nvt_topology *topo, unsigned t)
{
	if (!topo || !topo->n_gpcs || topo->gpc[t] == NVT_NONE || topo->gpc[t] >= NVT_MAX_GPCS)
		return UNKNOWN_GPC;
	return topo->gpc[t];
}

/*
 * The GPC to take from next, or -1: GPCs with no TPC of avoid first; among
 * them the smallest that holds all of what is left to pick (one GPC, least
 * left over), else the fullest; then the lowest number.
 */
static int next_gpc(const unsigned *count, const int *avoided, unsigned left)
{
	int best = -1;

	for (int g = 0; g < UNKNOWN_GPC; g++) {
		int better;
		if (!count[g])
			continue;
		if (best < 0 || avoided[g] != avoided[best]) {
			better = best < 0 || avoided[g] < avoided[best];
		} else if (count[g] >= left && count[best] >= left) {
			better = count[g] < count[best];
		} else {
			better = count[g] > count[best] && count[best] < left;
		}
		if (better)
			best = g;
	}
	if (best < 0 && count[UNKNOWN_GPC])
		best = UNKNOWN_GPC;
	return best;
}

unsigned nvt_prio_pack(const struct nvt_topology *topo, const struct nvt_tpcset *avail,
		       const struct nvt_tpcset *avoid, unsigned budget, struct nvt_tpcset *out)
{
	unsigned count[UNKNOWN_GPC + 1] = {0}, left = budget, picked = 0;
	int avoided[UNKNOWN_GPC + 1] = {0};

	nvt_set_clear(out);
	for (unsigned t = 0; t < NVT_MAX_TPCS; t++) {
		if (nvt_set_has(avail, t))
			count[gpc_of(topo, t)]++;
		if (avoid && nvt_set_has(avoid, t))
			avoided[gpc_of(topo, t)] = 1;
	}
	while (left) {
		int g = next_gpc(count, avoided, left);
		if (g < 0)
			break;
		for (unsigned t = 0; t < NVT_MAX_TPCS && left; t++)
			if (nvt_set_has(avail, t) && gpc_of(topo, t) == (unsigned)g) {
				nvt_set_add(out, t);
				left--;
				picked++;
			}
		count[g] = 0;
	}
	return picked;
}

/* The union of the own partitions of tasks above prio: those active (want_active 1),
 * idle and lending (0). */
static void higher_union(const struct nvt_prio_task *t, int n, uint8_t prio, int want_active,
			 struct nvt_tpcset *out)
{
	nvt_set_clear(out);
	for (int i = 0; i < n; i++) {
		if (t[i].prio <= prio)
			continue;
		if (want_active ? !t[i].active : t[i].active || (t[i].flags & NVT_PRIOF_NO_LEND))
			continue;
		nvt_set_or(out, out, &t[i].own);
	}
}

/* Every TPC of the GPCs that set touches (TPCs of unknown GPC: none). */
static void gpcs_of(const struct nvt_topology *topo, const struct nvt_tpcset *set, struct nvt_tpcset *out)
{
	int touched[UNKNOWN_GPC + 1] = {0};

	for (unsigned t = 0; t < NVT_MAX_TPCS; t++)
		if (nvt_set_has(set, t))
			touched[gpc_of(topo, t)] = 1;
	touched[UNKNOWN_GPC] = 0;
	nvt_set_clear(out);
	for (unsigned t = 0; t < NVT_MAX_TPCS; t++)
		if (touched[gpc_of(topo, t)])
			nvt_set_add(out, t);
}

/*
 * Guarded: at most budget TPCs of own outside active, away from held; never
 * in a GPC an active higher task uses while own has TPCs elsewhere (a GPC's
 * SMs share its resources, and a cluster launch that does not fit a
 * partition runs on the whole GPCs it touches: src/shim/shim.c).
 */
static void guard_task(const struct nvt_topology *topo, struct nvt_prio_task *task, unsigned budget,
		       const struct nvt_tpcset *active, const struct nvt_tpcset *held)
{
	struct nvt_tpcset avail, shared, apart;

	nvt_set_andnot(&avail, &task->own, active);
	gpcs_of(topo, active, &shared);
	nvt_set_andnot(&apart, &avail, &shared);
	if (nvt_set_count(&apart))
		avail = apart;
	if (!nvt_set_count(&avail)) {
		/* Never empty: one TPC of own, in a GPC the active tasks use least. */
		nvt_prio_pack(topo, &task->own, held, 1, &task->tpcs);
		task->mode = NVT_MODE_SQUEEZED;
		return;
	}
	nvt_prio_pack(topo, &avail, held, budget ? budget : NVT_MAX_TPCS, &task->tpcs);
	task->mode = nvt_set_equal(&task->tpcs, &task->own) ? NVT_MODE_OWN : NVT_MODE_GUARDED;
}

void nvt_prio_decide(const struct nvt_topology *topo, unsigned default_guard,
		     struct nvt_prio_task *t, int n)
{
	struct nvt_tpcset active, lent, held, extra;

	for (int i = 0; i < n; i++) {
		t[i].tpcs = t[i].own;
		t[i].mode = NVT_MODE_OWN;
		t[i].lent = 0;
	}
	for (int i = 0; i < n; i++) {
		struct nvt_prio_task *task = &t[i];
		if (!nvt_prio_needs_agent(task->prio, task->yield))
			continue;
		higher_union(t, n, task->prio, 1, &active);
		if (nvt_set_count(&active)) {
			/* Away from every higher task's GPCs, active or not. */
			nvt_set_clear(&held);
			for (int j = 0; j < n; j++)
				if (t[j].prio > task->prio)
					nvt_set_or(&held, &held, &t[j].own);
			guard_task(topo, task, task->guard ? task->guard : default_guard, &active, &held);
			continue;
		}
		higher_union(t, n, task->prio, 0, &lent);
		nvt_set_andnot(&extra, &lent, &task->own);
		if (!nvt_set_count(&extra))
			continue;
		nvt_set_or(&task->tpcs, &task->own, &lent);
		task->mode = NVT_MODE_BORROWING;
		for (int j = 0; j < n; j++)
			if (t[j].prio > task->prio && !t[j].active && !(t[j].flags & NVT_PRIOF_NO_LEND))
				t[j].lent = 1;
	}
	for (int i = 0; i < n; i++)
		if (t[i].lent && t[i].mode == NVT_MODE_OWN)
			t[i].mode = NVT_MODE_LENDING;
}

void nvt_prio_own_of(const struct nvt_slot_view *view, struct nvt_tpcset *own)
{
	if (nvt_set_count(&view->prio.own)) {
		*own = view->prio.own;
		return;
	}
	if (view->state == NVT_SLOT_SET) {
		*own = view->tpcs;
		return;
	}
	nvt_set_clear(own);
	if (view->topo.n_tpcs && view->topo.n_tpcs <= NVT_MAX_TPCS)
		nvt_set_fill(own, view->topo.n_tpcs);
}

static const char *const prio_names[NVT_PRIO_LEVELS] = {"-", "low", "normal", "high"};
static const char *const mode_names[NVT_PRIO_MODES] = {"own", "guarded", "borrowing", "lending",
						       "squeezed"};

int nvt_prio_parse(const char *text, uint8_t *prio)
{
	for (unsigned p = NVT_PRIO_LOW; p < NVT_PRIO_LEVELS; p++)
		if (!strcasecmp(text, prio_names[p])) {
			*prio = (uint8_t)p;
			return 0;
		}
	return -1;
}

/* The word of NVT_PRIO_NONE where it is said or given (-p, --priority none). */
#define PRIO_NONE_WORD "none"

int nvt_prio_parse_given(const char *text, uint8_t *prio)
{
	if (!strcasecmp(text, PRIO_NONE_WORD)) {
		*prio = NVT_PRIO_NONE;
		return 0;
	}
	return nvt_prio_parse(text, prio);
}

const char *nvt_prio_name(unsigned prio)
{
	return prio < NVT_PRIO_LEVELS ? prio_names[prio] : "-";
}

const char *nvt_prio_word(unsigned prio)
{
	return prio == NVT_PRIO_NONE ? PRIO_NONE_WORD : nvt_prio_name(prio);
}

uint32_t nvt_prio_default_yield(uint8_t level, int whole_gpu, uint32_t guard)
{
	return level != NVT_PRIO_NONE && whole_gpu && !guard ? NVT_YIELD_SLICE : NVT_YIELD_DEFAULT;
}

void nvt_prio_resolve(struct nvt_slot_prio *prio, int partitioned)
{
	if (!(prio->flags & NVT_PRIOF_AUTO))
		return;
	prio->flags &= (uint8_t)~NVT_PRIOF_AUTO;
	prio->yield = nvt_prio_default_yield(prio->prio, !partitioned, prio->guard);
	nvt_prio_imply_guard(prio);
}

void nvt_prio_keep_slice(struct nvt_slot_prio *given, const struct nvt_slot_prio *old)
{
	if (old->prio == NVT_PRIO_NONE || !(old->yield & NVT_YIELD_SLICE))
		return;
	given->yield = old->yield;
	given->bound_us = old->bound_us;
	given->ahead_us = old->ahead_us;
	given->duty_pct = old->duty_pct;
	given->slice_us = old->slice_us;
}

uint32_t nvt_prio_for_running(struct nvt_slot_prio *given, const struct nvt_slot_prio *start,
			      const struct nvt_slot_prio *now)
{
	uint32_t lost, guard = given->guard, keep = now->yield;

	if (given->prio == NVT_PRIO_NONE)
		return 0;
	if (given->prio == NVT_PRIO_HIGH)
		keep &= ~NVT_YIELD_GUARD; /* nothing is higher: the agent never guards it */
	/* (its words now are kept whatever start says: -p writes no word a start did not set up,
	 * client aside, so they were its start's or asked for; and start may be unknown, its
	 * environment overwritten or unreadable, and read as none) */
	if (now->prio != NVT_PRIO_NONE && keep) {
		given->yield = keep | (guard ? NVT_YIELD_GUARD : 0);
		given->guard = guard ? guard : now->guard;
		given->bound_us = now->bound_us;
		given->ahead_us = now->ahead_us;
		given->duty_pct = now->duty_pct;
		given->slice_us = now->slice_us;
		return 0;
	}
	lost = nvt_yield_not_taken(start, given->prio, given->yield);
	given->yield &= ~lost;
	if (given->prio < NVT_PRIO_HIGH && !given->yield)
		given->yield = NVT_YIELD_GUARD;
	return lost;
}

int nvt_prio_yield_default_alone(const struct nvt_slot_prio *yield)
{
	return (yield->flags & NVT_PRIOF_AUTO) && !(yield->yield & NVT_YIELD_ALL) &&
	       !yield->bound_us && !yield->ahead_us && !yield->duty_pct && !yield->slice_us;
}

void nvt_prio_given(uint8_t level, int no_lend, uint32_t guard, const struct nvt_slot_prio *yield,
		    int whole_gpu, struct nvt_slot_prio *given)
{
	memset(given, 0, sizeof(*given));
	if (yield)
		*given = *yield;
	if (!yield || (yield->flags & NVT_PRIOF_AUTO))
		given->yield |= nvt_prio_default_yield(level, whole_gpu, guard);
	given->prio = level;
	given->flags = no_lend ? NVT_PRIOF_NO_LEND : 0;
	given->guard = guard;
	given->mode = NVT_MODE_OWN;
	nvt_set_clear(&given->own);
	nvt_prio_imply_guard(given);
}

const char *nvt_prio_mode_name(unsigned mode)
{
	return mode < NVT_PRIO_MODES ? mode_names[mode] : "?";
}

int nvt_prio_env_parse(const char *text, struct nvt_slot_prio *prio)
{
	char copy[NVT_PRIO_ENV_TEXT_MAX], *item, *save = NULL;
	struct nvt_slot_prio out = *prio;
	int first = 1;

	if (!text || strlen(text) >= sizeof(copy))
		return -1;
	strcpy(copy, text);
	out.flags = 0;
	out.guard = 0;
	out.mode = NVT_MODE_OWN;
	out.yield = NVT_YIELD_DEFAULT;
	out.bound_us = out.ahead_us = out.duty_pct = out.slice_us = out.reserved2 = 0;
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save), first = 0) {
		if (first) {
			if (nvt_prio_parse(item, &out.prio))
				return -1;
		} else if (!strcmp(item, "yield=auto")) {
			out.flags |= NVT_PRIOF_AUTO; /* the default by partition: nvt_prio_resolve */
			out.yield = NVT_YIELD_DEFAULT;
		} else if (!strncmp(item, "yield=", 6)) {
			char *word, *save2 = NULL;
			out.flags &= ~NVT_PRIOF_AUTO;
			out.yield = 0;
			for (word = strtok_r(item + 6, "+", &save2); word; word = strtok_r(NULL, "+", &save2))
				if (nvt_yield_item(word, &out, NULL, 0))
					return -1;
		} else if (!strncmp(item, "bound=", 6) || !strncmp(item, "ahead=", 6) ||
			   !strncmp(item, "duty=", 5)) {
			uint32_t keep = out.yield; /* a value alone adds no word */
			if (nvt_yield_item(item, &out, NULL, 0))
				return -1;
			out.yield = keep;
		} else if (!strcmp(item, "no-lend")) {
			out.flags |= NVT_PRIOF_NO_LEND;
		} else if (!strncmp(item, "guard=", 6)) {
			char *end;
			long v;
			errno = 0;
			v = strtol(item + 6, &end, 10);
			if (errno || end == item + 6 || *end || v < 1 || v > NVT_MAX_TPCS)
				return -1;
			out.guard = (uint32_t)v;
		} else {
			return -1;
		}
	}
	if (first)
		return -1;
	nvt_prio_imply_guard(&out); /* (as Slurm's --gpu-priority=low,guard=9 gives it) */
	*prio = out;
	return 0;
}

int nvt_prio_env_format(const struct nvt_slot_prio *prio, char *buf, size_t len)
{
	char guard[24] = "", yield[96] = "";
	struct nvt_slot_prio words = *prio;
	int n;

	if (prio->guard)
		snprintf(guard, sizeof(guard), ",guard=%u", (unsigned)prio->guard);
	if ((prio->yield & NVT_YIELD_ALL) != (NVT_YIELD_DEFAULT | (prio->guard ? NVT_YIELD_GUARD : 0)) ||
	    prio->bound_us || prio->ahead_us || prio->duty_pct || (prio->flags & NVT_PRIOF_AUTO)) {
		words.duty_pct = 0;
		memcpy(yield, ",yield=", 7);
		if (prio->flags & NVT_PRIOF_AUTO)
			snprintf(yield + 7, sizeof(yield) - 7, "auto");
		else if (nvt_yield_format(&words, '+', yield + 7, sizeof(yield) - 7) < 0)
			return -1;
		/* Values that no word of its carries (a value alone adds no word). */
		if (prio->bound_us && !(prio->yield & NVT_YIELD_BOUND))
			snprintf(yield + strlen(yield), sizeof(yield) - strlen(yield), ",bound=%u",
				 (unsigned)prio->bound_us);
		if (prio->ahead_us && !(prio->yield & NVT_YIELD_AHEAD))
			snprintf(yield + strlen(yield), sizeof(yield) - strlen(yield), ",ahead=%u",
				 (unsigned)prio->ahead_us);
		if (prio->duty_pct)
			snprintf(yield + strlen(yield), sizeof(yield) - strlen(yield), ",duty=%u",
				 (unsigned)prio->duty_pct);
	}
	n = snprintf(buf, len, "%s%s%s%s", nvt_prio_name(prio->prio), guard,
		     prio->flags & NVT_PRIOF_NO_LEND ? ",no-lend" : "", yield);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int nvt_prio_mps_level(const struct nvt_slot_view *parts, int n, char *server, size_t len)
{
	struct nvt_slot_prio level;
	uint8_t prio = n > 0 ? parts[0].prio.prio : NVT_PRIO_NONE;

	for (int i = 0; i < n; i++)
		if (parts[i].prio.prio != prio || !(parts[i].prio.yield & NVT_YIELD_SLICE) ||
		    parts[i].prio.slice_us != parts[0].prio.slice_us)
			prio = NVT_PRIO_NONE;
	if (prio == NVT_PRIO_NONE || !server)
		return prio;
	memset(&level, 0, sizeof(level));
	level.prio = prio;
	level.yield = NVT_YIELD_SLICE;
	level.slice_us = parts[0].prio.slice_us;
	return nvt_prio_env_format(&level, server, len) < 0 ? -1 : prio;
}

void nvt_prio_carry(struct nvt_slot_view *want, const struct nvt_slot_view *old,
		    const struct nvt_slot_prio *given)
{
	if (old)
		want->prio = old->prio; /* -p MASK keeps the task's priority */
	if (given)
		want->prio = *given; /* its mode and own partition follow */
	/* What a writer gives is the task's own partition; the agent starts from it. */
	want->prio.mode = NVT_MODE_OWN;
	nvt_set_clear(&want->prio.own);
	if (want->prio.prio != NVT_PRIO_NONE)
		nvt_prio_own_of(want, &want->prio.own); /* its TPCs, or all when unpartitioned */
}

int nvt_prio_needs_agent(unsigned prio, uint32_t yield)
{
	return prio != NVT_PRIO_NONE && (yield & NVT_YIELD_GUARD);
}

int nvt_prio_may_share(const struct nvt_slot_prio *a, const struct nvt_slot_prio *b)
{
	if (a->prio == NVT_PRIO_NONE || b->prio == NVT_PRIO_NONE)
		return 0;
	return a->prio != b->prio || ((a->yield & NVT_YIELD_SLICE) && (b->yield & NVT_YIELD_SLICE));
}

unsigned nvt_prio_clash(const struct nvt_tpcset *a_tpcs, const struct nvt_slot_prio *a,
			const struct nvt_tpcset *b_tpcs, const struct nvt_slot_prio *b,
			struct nvt_tpcset *both)
{
	nvt_set_clear(both);
	if (nvt_prio_may_share(a, b))
		return 0;
	nvt_set_and(both, a->prio != NVT_PRIO_NONE ? &a->own : a_tpcs,
		    b->prio != NVT_PRIO_NONE ? &b->own : b_tpcs);
	return nvt_set_count(both);
}

void nvt_prio_imply_guard(struct nvt_slot_prio *p)
{
	if (p->guard)
		p->yield |= NVT_YIELD_GUARD;
}

int nvt_prio_guard_fits(uint32_t guard, const struct nvt_topology *topo)
{
	return !guard || !topo->n_tpcs || guard <= topo->n_tpcs;
}

uid_t nvt_prio_owner(uid_t seg_uid, uid_t real_uid, uid_t effective_uid)
{
	if (seg_uid != 0)
		return seg_uid;
	return real_uid != 0 ? real_uid : effective_uid;
}
