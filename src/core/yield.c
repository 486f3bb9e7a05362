/*
 * yield.c - how a lower task yields to higher ones: the pure rules (see
 * yield.h and docs/priorities.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include "yield.h"
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	uint32_t bit;
} words[] = {
	{"gate", NVT_YIELD_GATE},     {"bound", NVT_YIELD_BOUND},   {"ahead", NVT_YIELD_AHEAD},
	{"client", NVT_YIELD_CLIENT}, {"borrow", NVT_YIELD_BORROW}, {"guard", NVT_YIELD_GUARD},
	{"any", NVT_YIELD_ANY},       {"slice", NVT_YIELD_SLICE},
};
#define N_WORDS (sizeof(words) / sizeof(words[0]))

/* A decimal from 1 to max, the whole of text. Returns 0, or -1. */
static int number(const char *text, uint64_t max, uint32_t *out)
{
	uint64_t v;
	const char *end = nvt_decimal(text, max, &v);

	if (!end || *end || v < 1)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int nvt_yield_item(const char *item, struct nvt_slot_prio *p, char *why, size_t len)
{
	const char *eq = strchr(item, '=');
	size_t name_len = eq ? (size_t)(eq - item) : strlen(item);

	if (!eq && !strcmp(item, "none")) {
		p->yield = 0;
		return 0;
	}
	if (!eq && !strcmp(item, "default")) {
		p->yield |= NVT_YIELD_DEFAULT;
		return 0;
	}
	if (!eq && !strcmp(item, "protect")) {
		p->yield |= NVT_YIELD_PROTECT;
		return 0;
	}
	if (name_len == 4 && !strncmp(item, "duty", 4)) {
		if (!eq || number(eq + 1, 100, &p->duty_pct))
			return nvt_why(why, len, "duty= takes a share of time from 1 to 100 (%%)");
		return 0;
	}
	for (size_t i = 0; i < N_WORDS; i++) {
		if (strlen(words[i].name) != name_len || strncmp(item, words[i].name, name_len))
			continue;
		if (eq && words[i].bit == NVT_YIELD_BOUND) {
			if (number(eq + 1, NVT_YIELD_MAX_US, &p->bound_us))
				return nvt_why(why, len, "bound= takes microseconds from 1 to 1000000");
		} else if (eq && words[i].bit == NVT_YIELD_AHEAD) {
			if (number(eq + 1, NVT_YIELD_MAX_US, &p->ahead_us))
				return nvt_why(why, len, "ahead= takes microseconds from 1 to 1000000");
		} else if (eq && words[i].bit == NVT_YIELD_SLICE) {
			if (number(eq + 1, NVT_SLICE_MAX_US, &p->slice_us))
				return nvt_why(why, len, "slice= takes microseconds from 1 to 1000000");
		} else if (eq) {
			return nvt_why(why, len, "only bound, ahead, slice and duty take a value");
		}
		p->yield |= words[i].bit;
		return 0;
	}
	{
		/* What a slip was meant as (did you mean). */
		const char *all[N_WORDS + 4] = {"duty", "protect", "default", "none"};
		int near;
		for (size_t i = 0; i < N_WORDS; i++)
			all[4 + i] = words[i].name;
		near = nvt_nearest_word(item, name_len, all, N_WORDS + 4);
		return nvt_why(why, len, "unknown word '%.*s'%s%s%s: the words are gate, bound[=US], "
			       "ahead[=US], client, borrow, guard, any, slice[=US], duty=PCT, protect, "
			       "default and none",
			       (int)(name_len < 40 ? name_len : 40), item,
			       near < 0 ? "" : " (did you mean '", near < 0 ? "" : all[near],
			       near < 0 ? "" : "'?)");
	}
}

int nvt_yield_parse(const char *list, struct nvt_slot_prio *p, char *why, size_t len)
{
	char copy[256], *item, *save = NULL;
	struct nvt_slot_prio out = *p;

	if (!list || !*list || strlen(list) >= sizeof(copy))
		return nvt_why(why, len, "an empty or overlong list");
	strcpy(copy, list);
	out.yield = 0;
	out.flags &= (uint8_t)~NVT_PRIOF_AUTO;
	out.bound_us = out.ahead_us = out.duty_pct = out.slice_us = 0;
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		/* default: a start's words without --yield (nvt_prio_given); none clears it too */
		if (!strcmp(item, "none"))
			out.flags &= (uint8_t)~NVT_PRIOF_AUTO;
		if (!strcmp(item, "default"))
			out.flags |= NVT_PRIOF_AUTO;
		else if (nvt_yield_item(item, &out, why, len))
			return -1;
	}
	*p = out;
	return 0;
}

int nvt_yield_format(const struct nvt_slot_prio *p, char sep, char *buf, size_t len)
{
	size_t used = 0;
	int n;

	if (!len)
		return -1;
	buf[0] = '\0';
	if (!(p->yield & NVT_YIELD_ALL)) {
		n = snprintf(buf, len, "none");
		return n < 0 || (size_t)n >= len ? -1 : n;
	}
	for (size_t i = 0; i < N_WORDS; i++) {
		if (!(p->yield & words[i].bit))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? (char[]){sep, 0} : "", words[i].name);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
		if (words[i].bit == NVT_YIELD_BOUND && p->bound_us)
			n = snprintf(buf + used, len - used, "=%u", (unsigned)p->bound_us);
		else if (words[i].bit == NVT_YIELD_AHEAD && p->ahead_us)
			n = snprintf(buf + used, len - used, "=%u", (unsigned)p->ahead_us);
		else if (words[i].bit == NVT_YIELD_SLICE && p->slice_us)
			n = snprintf(buf + used, len - used, "=%u", (unsigned)p->slice_us);
		else
			n = 0;
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	if (p->duty_pct) {
		n = snprintf(buf + used, len - used, "%cduty=%u", sep, (unsigned)p->duty_pct);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	return (int)used;
}

static const char *const state_names[NVT_YS_STATES] = {
	"-", "running", "gated", "ahead", "bound", "borrowing", "beside", "sliced"};

const char *nvt_yield_state_name(unsigned state)
{
	return state < NVT_YS_STATES ? state_names[state] : "?";
}

void nvt_yield_cfg_of(const struct nvt_slot_prio *p, struct nvt_yield_cfg *c)
{
	c->yield = p->yield & NVT_YIELD_ALL;
	c->bound_ns = (uint64_t)(p->bound_us ? p->bound_us : NVT_YIELD_BOUND_US) * 1000;
	c->ahead_ns = (uint64_t)p->ahead_us * 1000;
	c->duty_pm = (p->duty_pct ? p->duty_pct : NVT_YIELD_DUTY_PCT) * 10;
	c->slice_us = p->slice_us ? p->slice_us : NVT_SLICE_LOW_US;
}

int nvt_yield_by_shim(unsigned prio, uint32_t yield)
{
	return prio != NVT_PRIO_NONE && prio < NVT_PRIO_HIGH &&
	       (yield & (NVT_YIELD_GATE | NVT_YIELD_BOUND | NVT_YIELD_AHEAD | NVT_YIELD_BORROW)) != 0;
}

uint32_t nvt_yield_not_taken(const struct nvt_slot_prio *start, unsigned prio, uint32_t want)
{
	const uint32_t shim_ways =
		NVT_YIELD_GATE | NVT_YIELD_BOUND | NVT_YIELD_AHEAD | NVT_YIELD_BORROW | NVT_YIELD_ANY;
	uint32_t had = start->prio == NVT_PRIO_NONE ? 0 : start->yield, lost = 0;

	if (prio == NVT_PRIO_NONE)
		return 0;
	if (prio < NVT_PRIO_HIGH && !nvt_yield_by_shim(start->prio, had))
		lost |= want & shim_ways;
	if (prio < NVT_PRIO_HIGH && (want & NVT_YIELD_CLIENT) && !(had & NVT_YIELD_CLIENT))
		lost |= NVT_YIELD_CLIENT;
	if ((want & NVT_YIELD_SLICE) && !(had & NVT_YIELD_SLICE))
		lost |= NVT_YIELD_SLICE;
	return lost;
}

uint32_t nvt_yield_refused(const struct nvt_slot_prio *start, unsigned prio, uint32_t want)
{
	uint32_t lost = nvt_yield_not_taken(start, prio, want);

	return lost & (start->prio == NVT_PRIO_NONE ? ~0u : ~(uint32_t)NVT_YIELD_CLIENT);
}

uint32_t nvt_yield_taken_away(const struct nvt_slot_prio *now, uint32_t want)
{
	if (now->prio == NVT_PRIO_NONE)
		return 0;
	return now->yield & NVT_YIELD_SLICE & ~want;
}

/* A moving average with weight 1/8; the first sample sets it. */
static uint64_t average(uint64_t avg, uint64_t sample, uint64_t count)
{
	if (count <= 1)
		return sample;
	return avg - avg / 8 + sample / 8;
}

/*
 * Whether gap (far from period) continues a run of gaps at a new rate: on
 * the same side of period, all within a quarter of each other. Returns 1 when
 * the run is NVT_ACT_SHIFT long: the averages then start afresh at its level.
 * Arrivals at random (Poisson) rarely give three gaps within a quarter of
 * each other on one side of the mean; a periodic service whose rate changed
 * gives nothing else. By the averages alone a service going from back to
 * back to a 10 % duty looks periodic again after ~25 requests (on an H100 its
 * first 12 requests, 55 ms, waited behind a neighbour's work:
 * docs/priorities.md).
 */
static int shifted(struct nvt_slot_activity *a, uint64_t gap, uint64_t period)
{
	uint32_t up = gap > period ? NVT_ACT_SHIFT_UP : 0, n = a->shifts & ~NVT_ACT_SHIFT_UP;
	uint64_t lo = n && gap > a->shift_min_ns ? a->shift_min_ns : gap;
	uint64_t hi = n && gap < a->shift_max_ns ? a->shift_max_ns : gap;

	if ((gap > period ? gap - period : period - gap) * 2 <= period) {
		a->shifts = 0; /* near the period: no new rate */
		return 0;
	}
	if (!n || (a->shifts & NVT_ACT_SHIFT_UP) != up || (hi - lo) * 4 > hi)
		lo = hi = gap, n = 0; /* a run of one: this gap */
	a->shift_min_ns = lo;
	a->shift_max_ns = hi;
	a->shifts = (n + 1) | up;
	if (n + 1 < NVT_ACT_SHIFT)
		return 0;
	a->shifts = 0;
	return 1;
}

void nvt_act_begin(struct nvt_slot_activity *a, uint64_t now)
{
	uint64_t n = a->begins + 1, idle = a->ends == a->begins && now > a->end_ns ? now - a->end_ns : 0;

	a->idle_us = idle / 1000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(idle / 1000);

	if (a->begins && now > a->begin_ns) {
		uint64_t gap = now - a->begin_ns, period = a->period_ns;
		if (n > 2 && shifted(a, gap, period)) {
			a->period_ns = (a->shift_min_ns + a->shift_max_ns) / 2;
			a->jitter_ns = (a->shift_max_ns - a->shift_min_ns) / 2;
			a->begin_ns = now;
			a->begins = n;
			return;
		}
		/* A pause (the service idle for a while) is not its period: it
		 * counts as four periods at most. */
		if (n > 2 && gap > 4 * period)
			gap = 4 * period;
		if (n > 2)
			a->jitter_ns = average(a->jitter_ns, gap > period ? gap - period : period - gap, n - 1);
		a->period_ns = average(period, gap, n - 1);
	}
	a->begin_ns = now;
	a->begins = n;
}

/*
 * The mean busy time after one more request of busy ns: down fast (to a
 * request under a quarter of it at once, else halfway), up with weight 1/8.
 * Taken too long, it makes a service look busy too much of the time to be
 * waited for: on an H100, 30 warm-up requests of 11 ms before a request of
 * 0.5 ms every 5 ms kept its neighbour from waiting for its first ~24
 * requests. Taken too short, the neighbour waits a little more.
 */
static uint64_t busy_average(uint64_t avg, uint64_t busy, uint64_t count)
{
	if (count <= 1 || busy * 4 < avg)
		return busy;
	if (busy < avg)
		return avg - (avg - busy) / 2;
	return average(avg, busy, count);
}

void nvt_act_end(struct nvt_slot_activity *a, uint64_t now)
{
	a->end_ns = now;
	/* Every request begun ends (not ends + 1): a begin and an end stored at once by two threads
	 * (the driver's thread ends a request when a host function runs) may keep one's counts and
	 * lose the other's; the counts agree again at the next end. */
	a->ends = a->begins;
	if (now >= a->begin_ns)
		a->busy_ns = busy_average(a->busy_ns, now - a->begin_ns, a->ends);
}

uint32_t nvt_act_duty_pm(const struct nvt_slot_activity *a)
{
	uint64_t pm;

	if (a->begins < NVT_YIELD_LEARN || !a->period_ns)
		return 0;
	pm = a->busy_ns * 1000 / a->period_ns;
	return pm > 1000 ? 1000 : (uint32_t)pm;
}

int nvt_act_periodic(const struct nvt_slot_activity *a)
{
	return a->begins >= NVT_YIELD_LEARN && a->period_ns && a->jitter_ns * 8 <= a->period_ns;
}

/*
 * Its share of time busy as a yielding task weighs it: the average, or its
 * latest request's (busy time against busy plus the idle time before it) when
 * that is less. A service that went from back to back to a request every
 * 20 ms is waited for from its first sparse request on, not only once the
 * averages have followed (three requests that would run beside the
 * neighbour's work, as if the service were still busy all the time).
 */
static uint32_t duty_now_pm(const struct nvt_slot_activity *a)
{
	uint32_t avg = nvt_act_duty_pm(a);
	uint64_t busy = a->busy_ns, span = busy + (uint64_t)a->idle_us * 1000, pm;

	if (!avg || !a->idle_us || !span)
		return avg;
	pm = busy * 1000 / span;
	return pm < avg ? (uint32_t)pm : avg;
}

int nvt_act_may_lend(const struct nvt_slot_activity *a, uint64_t now, uint64_t need_ns)
{
	uint64_t due;

	if (a->begins != a->ends || !nvt_act_periodic(a) || now < a->begin_ns)
		return 0;
	due = a->begin_ns + a->period_ns;
	/* Overdue: its request may begin at any moment. Quiet for over four
	 * periods: paused, its TPCs are free until it comes back. */
	if (now >= due && now < a->begin_ns + 4 * a->period_ns)
		return 0;
	while (due <= now)
		due += a->period_ns;
	return due - now >= need_ns;
}

/* Whether watched task w is busy at now. */
static int busy(const struct nvt_watched *w, uint64_t now)
{
	uint64_t quiet = now > w->moved_ns ? now - w->moved_ns : 0;

	if (!(w->act.flags & NVT_ACT_TRACKED))
		return quiet < (uint64_t)NVT_YIELD_HOLD_MS * 1000000;
	return w->act.begins != w->act.ends && quiet < (uint64_t)NVT_YIELD_STALE_MS * 1000000;
}

/*
 * A request still open after NVT_YIELD_OPEN_MS: a task whose shim never sees
 * its requests end (it never synchronises, or waits by polling) counts as busy
 * all the time, so a lower task launches beside it instead of being held back
 * for good.
 */
static int open_too_long(const struct nvt_slot_activity *a, uint64_t now)
{
	return (a->flags & NVT_ACT_TRACKED) && a->begins != a->ends && now > a->begin_ns &&
	       now - a->begin_ns > (uint64_t)NVT_YIELD_OPEN_MS * 1000000;
}

/*
 * The next time a periodic task's request is due after now - slack, from its
 * last begin; 0 if it is not periodic, or quiet for over four periods (gone,
 * or paused: foresee nothing).
 */
static uint64_t next_due(const struct nvt_slot_activity *a, uint64_t now, uint64_t slack)
{
	uint64_t due;

	if (!nvt_act_periodic(a) || now > a->begin_ns + 4 * a->period_ns)
		return 0;
	due = a->begin_ns + a->period_ns;
	while (due + slack <= now)
		due += a->period_ns;
	return due;
}

int nvt_yield_verdict(const struct nvt_yield_cfg *c, const struct nvt_watched *w, int n,
		      uint64_t now, uint64_t ahead_ns, uint64_t *wake)
{
	int verdict = NVT_YV_GO, beside = 0, followed = 0;
	uint64_t until = 0;

	for (int i = 0; i < n; i++) {
		const struct nvt_slot_activity *a = &w[i].act;
		int is_busy = busy(&w[i], now);
		uint64_t slack, due, hold;

		if (duty_now_pm(a) > c->duty_pm || open_too_long(a, now)) {
			beside |= is_busy;
			continue; /* busy too much of the time to wait for */
		}
		if (!(c->yield & NVT_YIELD_ANY) && !nvt_act_periodic(a)) {
			beside = 1;
			continue; /* requests at random: nothing to foresee, nothing to gain */
		}
		followed++;
		if (is_busy && (c->yield & NVT_YIELD_GATE)) {
			/* Look again soon: its end is seen in its segment. */
			verdict = NVT_YV_GATE;
			until = until && until < now + 1000000 ? until : now + 1000000;
			continue;
		}
		if (is_busy || !(c->yield & NVT_YIELD_AHEAD))
			continue;
		slack = a->jitter_ns * 2 > 100000 ? a->jitter_ns * 2 : 100000;
		if (!(due = next_due(a, now, slack)))
			continue;
		/* Its own ahead= up to half the period; the learnt one up to a quarter. */
		hold = c->ahead_ns ? c->ahead_ns : ahead_ns;
		if (hold > a->period_ns / (c->ahead_ns ? 2 : 4))
			hold = a->period_ns / (c->ahead_ns ? 2 : 4);
		if (now + hold < due)
			continue;
		if (verdict != NVT_YV_GATE)
			verdict = NVT_YV_AHEAD;
		if (!until || due + slack < until)
			until = due + slack;
	}
	if (verdict == NVT_YV_GO && (beside || (n && !followed)))
		verdict = NVT_YV_BESIDE;
	*wake = until;
	return verdict;
}

uint32_t nvt_preempt_timeslice(unsigned prio, const struct nvt_yield_cfg *c, int share)
{
	if (prio == NVT_PRIO_NONE || !(c->yield & NVT_YIELD_SLICE))
		return 0;
	if (prio >= NVT_PRIO_HIGH)
		return c->slice_us > NVT_SLICE_HIGH_US ? c->slice_us : NVT_SLICE_HIGH_US;
	return share && c->slice_us < NVT_SLICE_SHARE_US ? NVT_SLICE_SHARE_US : c->slice_us;
}

int nvt_watched_busy(const struct nvt_watched *w, uint64_t now)
{
	return busy(w, now);
}

int nvt_preempt_share(struct nvt_share *s, int is_busy, uint64_t now)
{
	uint32_t pm;

	if (!s->window_ns) {
		s->window_ns = now;
		s->last_pm = ~0u;
	}
	s->looks++;
	s->busy += is_busy != 0;
	if (now - s->window_ns < (uint64_t)NVT_SHARE_WINDOW_MS * 1000000)
		return s->on;
	pm = s->busy * 1000 / s->looks;
	if (!s->on && pm >= NVT_SHARE_ON_PM && s->last_pm != ~0u && s->last_pm >= NVT_SHARE_ON_PM)
		s->on = 1;
	else if (s->on && pm < NVT_SHARE_OFF_PM)
		s->on = 0;
	s->last_pm = pm;
	s->window_ns = now;
	s->busy = s->looks = 0;
	return s->on;
}

uint64_t nvt_yield_launch_avg(uint64_t avg, uint64_t sample)
{
	if (!avg)
		return sample;
	if (sample > avg)
		return avg + (sample - avg) / 2;
	return avg - avg / 8 + sample / 8;
}

unsigned nvt_yield_inflight(uint64_t bound_ns, uint64_t launch_ns, unsigned max)
{
	uint64_t k;

	if (!launch_ns)
		return 1;
	k = bound_ns / launch_ns;
	if (k < 1)
		k = 1;
	return k > max ? max : (unsigned)k;
}
