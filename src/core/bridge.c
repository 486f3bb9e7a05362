/*
 * bridge.c - when a high time-sliced task bridges its waits (core/bridge.h,
 * "The bridge"): which tasks, and which waits by what the task's earlier ones
 * taught. Pure code: no I/O, no allocation, no globals.
 *
 * SPDX-License-Identifier: MIT
 */
#include "bridge.h"
#include "yield.h"

#include <string.h>

int nvt_bridge_wanted(unsigned prio, uint32_t yield, const char *connections, const char *word)
{
	if (prio != NVT_PRIO_HIGH || !(yield & NVT_YIELD_SLICE))
		return NVT_BRIDGE_NOT_SLICED;
	if (word && !strcmp(word, "0"))
		return NVT_BRIDGE_TURNED_OFF;
	if (!connections || strcmp(connections, "1"))
		return NVT_BRIDGE_CONNECTIONS;
	return word && strcmp(word, "1") ? NVT_BRIDGE_BAD_WORD : NVT_BRIDGE_ON;
}

/* The upper bound of each range of gaps but the last (longer), in us: the lingers a bridge may have. */
static const uint32_t gap_bound_us[NVT_BRIDGE_GAPS - 1] = {20, 30, 40, 50, 70, 100, 150, 200,
								   NVT_BRIDGE_LINGER_US};

void nvt_bridge_gap(struct nvt_bridge_learn *l, uint64_t gap_ns)
{
	int r = 0;

	while (r < NVT_BRIDGE_GAPS - 1 && gap_ns > (uint64_t)gap_bound_us[r] * 1000)
		r++;
	for (int i = 0; i < NVT_BRIDGE_GAPS; i++) {
		uint32_t in = i == r ? NVT_BRIDGE_ONE : 0;
		l->share[i] = l->waits ? l->share[i] - l->share[i] / 16 + in / 16 : in;
	}
	uint32_t soon = r < NVT_BRIDGE_GAPS - 1 ? 1000 : 0;
	l->soon_pm = l->waits ? l->soon_pm - l->soon_pm / 8 + soon / 8 : soon;
	if (l->waits < UINT32_MAX)
		l->waits++;
}

uint32_t nvt_bridge_linger_us(const struct nvt_bridge_learn *l)
{
	uint64_t total = 0, caught = 0, caught_cost = 0;
	uint32_t best = 0;

	/* Nothing learnt yet, or half the recent gaps or more within the whole linger: all of it
	 * (a service's steps, whose host may be slow for a while: a shorter linger would miss
	 * those gaps). */
	if (!l->waits || l->soon_pm >= NVT_BRIDGE_ON_PM)
		return NVT_BRIDGE_LINGER_US;
	for (int i = 0; i < NVT_BRIDGE_GAPS; i++)
		total += l->share[i];
	/* Costs to the lower task in share x us: a gap the linger catches costs it at most its
	 * range's bound and the margin, one it does not the linger and the two switches; a wait
	 * not bridged costs it the two switches. */
	for (int i = 0; i < NVT_BRIDGE_GAPS - 1; i++) {
		uint64_t linger = gap_bound_us[i];
		caught += l->share[i];
		caught_cost += (uint64_t)l->share[i] * (linger + NVT_BRIDGE_MARGIN_US);
		if (caught && caught_cost + (total - caught) * (linger + NVT_BRIDGE_SWITCHES_US) <=
				      total * NVT_BRIDGE_SWITCHES_US)
			best = (uint32_t)linger;
	}
	return best;
}

int nvt_bridge_replays(uint32_t *pm, int replayed)
{
	uint32_t v = replayed ? 1000 : 0;

	*pm = *pm - *pm / 8 + v / 8;
	return *pm >= NVT_BRIDGE_REPLAY_PM;
}

int nvt_bridge_on(int why)
{
	return why == NVT_BRIDGE_ON || why == NVT_BRIDGE_BAD_WORD;
}

/* An environment word of 0 or 1 as one of three answers (unset, "0", "1"); -1 for another. */
static int word01(const char *word, int unset, int zero, int one)
{
	if (!word)
		return unset;
	if (!strcmp(word, "0"))
		return zero;
	if (!strcmp(word, "1"))
		return one;
	return -1;
}

int nvt_bridge_hold_mode(const char *word)
{
	return word01(word, NVT_BRIDGE_HOLD_LEARN, NVT_BRIDGE_HOLD_NEVER, NVT_BRIDGE_HOLD_ALWAYS);
}

uint32_t nvt_bridge_hold_median(const struct nvt_bridge_hold *h, int held)
{
	uint32_t v[NVT_BRIDGE_HOLD_LAST], k = h->n[held ? 1 : 0];

	if (k > NVT_BRIDGE_HOLD_LAST)
		k = NVT_BRIDGE_HOLD_LAST;
	if (!k)
		return 0;
	memcpy(v, h->step_us[held ? 1 : 0], sizeof(v));
	for (uint32_t a = 1; a < k; a++)
		for (uint32_t b = a; b > 0 && v[b - 1] > v[b]; b--) {
			uint32_t t = v[b];
			v[b] = v[b - 1];
			v[b - 1] = t;
		}
	return v[k / 2];
}

/* 1 if steps of a_us beat steps of b_us (the other way's). */
static int beats(uint64_t a_us, uint64_t b_us)
{
	return a_us + NVT_BRIDGE_HOLD_GAIN_US < b_us && a_us * 16 < b_us * 15;
}

/* The better way by the medians (1: held): the way taken stays until the other beats it (a
 * noisy host's steps do not turn it back and forth); released before any was taken. */
static int better_way(const struct nvt_bridge_hold *h)
{
	uint32_t rel = nvt_bridge_hold_median(h, 0), held = nvt_bridge_hold_median(h, 1);

	return h->period && h->best ? !beats(rel, held) : beats(held, rel);
}

void nvt_bridge_hold_learn(struct nvt_bridge_hold *h, int held, uint64_t step_ns)
{
	uint64_t us = step_ns / 1000;
	int i = held ? 1 : 0, learnt = h->n[0] >= NVT_BRIDGE_HOLD_FIRST && h->n[1] >= NVT_BRIDGE_HOLD_FIRST;

	if (us > NVT_BRIDGE_HOLD_MAX_US)
		us = NVT_BRIDGE_HOLD_MAX_US;
	/* A try that beat the better way's median: the next bridge tries again (a changed task or
	 * neighbour is learnt in a few steps, not a few tries apart). */
	if (learnt) {
		int best = better_way(h);
		if (i != best && beats(us, nvt_bridge_hold_median(h, best)))
			h->again = 1;
	}
	h->step_us[i][h->n[i] % NVT_BRIDGE_HOLD_LAST] = (uint32_t)us;
	/* (wraps back onto a multiple of the ring's length) */
	h->n[i] = h->n[i] + 1 == 2 * NVT_BRIDGE_HOLD_LAST ? NVT_BRIDGE_HOLD_LAST : h->n[i] + 1;
}

int nvt_bridge_hold_next(struct nvt_bridge_hold *h, int mode, int *learn)
{
	uint32_t period = NVT_BRIDGE_HOLD_TRY, tick = h->bridges < UINT32_MAX ? h->bridges++ : h->bridges;
	int best, other;

	*learn = mode == NVT_BRIDGE_HOLD_LEARN && tick >= NVT_BRIDGE_HOLD_SKIP;
	if (mode == NVT_BRIDGE_HOLD_NEVER || mode == NVT_BRIDGE_HOLD_ALWAYS)
		return mode == NVT_BRIDGE_HOLD_ALWAYS;
	/* Learning: released first (not learnt from), then alternating, then the way measured
	 * less until each was measured NVT_BRIDGE_HOLD_FIRST times. */
	if (tick < NVT_BRIDGE_HOLD_SKIP)
		return 0;
	if (tick < NVT_BRIDGE_HOLD_SKIP + 2 * NVT_BRIDGE_HOLD_FIRST)
		return (int)((tick - NVT_BRIDGE_HOLD_SKIP) & 1);
	if (h->n[0] < NVT_BRIDGE_HOLD_FIRST || h->n[1] < NVT_BRIDGE_HOLD_FIRST)
		return h->n[1] < h->n[0];
	best = better_way(h);
	other = !best;
	if (h->again) {
		h->again = 0;
		return other;
	}
	/* The tries start again where the way turned or the better way's median moved by more
	 * than an eighth since the last try (a batch came or went, the steps changed): the next
	 * within a period (half of one at first), never later than it was due (a median that
	 * keeps moving must not put the tries off for good); the other way far worse, a period
	 * twice as long. */
	uint32_t cur = nvt_bridge_hold_median(h, best);
	if (!h->period || (uint32_t)best != h->best || (uint64_t)cur * 8 < (uint64_t)h->base_us * 7 ||
	    (uint64_t)cur * 8 > (uint64_t)h->base_us * 9) {
		if (nvt_bridge_hold_median(h, other) > (uint64_t)cur + NVT_BRIDGE_HOLD_FAR_US)
			period = NVT_BRIDGE_HOLD_TRY_SLOW;
		uint32_t first = h->period ? period : period / 2;
		if (!h->period || h->left > first)
			h->left = first;
		h->period = period;
		h->best = (uint32_t)best;
		h->base_us = cur;
	}
	if (h->left) {
		h->left--;
		return best;
	}
	/* A try; each one that does not turn the way puts the next a period twice as long on. */
	if (h->period < NVT_BRIDGE_HOLD_TRY_MAX)
		h->period *= 2;
	h->left = h->period - 1;
	h->base_us = cur;
	return other;
}

uint64_t nvt_bridge_rearm(uint64_t ret_ns, uint64_t armed_ns, uint64_t last_ns, uint64_t now)
{
	const uint64_t span = (uint64_t)NVT_BRIDGE_HELD_SPAN_US * 1000, every = (uint64_t)NVT_BRIDGE_REARM_US * 1000;

	if (now < ret_ns || now < armed_ns)
		return 0;
	/* Within the step's span: a new bridge once every NVT_BRIDGE_REARM_US, while that much of
	 * the span is left. */
	if (now - ret_ns < span)
		return now - armed_ns >= every && span - (now - ret_ns) >= every ? span - (now - ret_ns) : 0;
	/* Past it (every bridge of the chain has ended): the first launch after the wait (a
	 * request's first step, its wait long returned) starts one; a step whose host is slower
	 * than the span goes on unheld. */
	return !last_ns || last_ns < ret_ns ? span : 0;
}

int nvt_bridge_chain_mode(const char *word)
{
	return word01(word, NVT_BRIDGE_CHAIN_SEEN, NVT_BRIDGE_CHAIN_NEVER, NVT_BRIDGE_CHAIN_ALWAYS);
}

int nvt_bridge_chain_step(uint32_t launches, uint64_t span_ns)
{
	return launches >= NVT_BRIDGE_CHAIN_LAUNCHES && span_ns >= (uint64_t)NVT_BRIDGE_REARM_US * 1000;
}

int nvt_bridge_chain_seen(struct nvt_bridge_chain *c, int qualifies)
{
	uint32_t such;

	if (c->steps < UINT32_MAX)
		c->steps++;
	if (c->in_window >= NVT_BRIDGE_CHAIN_WINDOW || c->such > c->in_window) /* (not one of ours) */
		c->in_window = c->such = 0;
	c->such += qualifies != 0;
	if (++c->in_window < NVT_BRIDGE_CHAIN_WINDOW)
		return 0;
	such = c->such;
	c->in_window = c->such = 0;
	if (such > c->best)
		c->best = such;
	return such >= NVT_BRIDGE_CHAIN_NEED;
}

int nvt_bridge_poll_look(struct nvt_bridge_poll *p, int g, const void *obj, uint64_t noted, int launched, int done,
			 uint64_t now_ns)
{
	const uint64_t look = (uint64_t)NVT_BRIDGE_POLL_LOOK_US * 1000;
	int same = p->have && p->obj == obj && p->obj_noted == noted;
	int mine = p->waiting && p->g == g && p->noted == noted && p->wobj == obj;
	/* (a look of its own shortly before: another object's, in a loop of several) */
	int first = !p->have || now_ns - p->seen_ns > look;

	if (launched) {
		p->have = 0;
		return NVT_BRIDGE_POLL_NONE; /* the program launched since: its request goes on */
	}
	if (done) {
		/* (another object's "done", an idle stream's, leaves this one's poll as it was) */
		if (same) {
			p->fast = now_ns - p->seen_ns <= look;
			p->have = 0;
		}
		if (!mine)
			return NVT_BRIDGE_POLL_NONE;
		p->waiting = 0;
		return NVT_BRIDGE_POLL_RETURNED;
	}
	/* A tentative wait becomes a full one where its next look (as far off as this one from the
	 * last) and a whole linger after it may come after its cap. */
	uint64_t due = now_ns - p->begun_ns + (now_ns - p->seen_ns) + (uint64_t)NVT_BRIDGE_LINGER_US * 1000;
	int full = same && due > (uint64_t)NVT_BRIDGE_POLL_CAP_US * 1000;

	p->have = 1;
	p->obj = obj;
	p->obj_noted = noted;
	p->seen_ns = now_ns;
	if (mine)
		return p->tentative && full ? NVT_BRIDGE_POLL_FULL : NVT_BRIDGE_POLL_NONE;
	if (same)
		return NVT_BRIDGE_POLL_BEGIN;
	return p->fast && first ? NVT_BRIDGE_POLL_TENTATIVE : NVT_BRIDGE_POLL_NONE;
}

void nvt_bridge_poll_begun(struct nvt_bridge_poll *p, int g, uint64_t noted, int act)
{
	p->waiting = 1;
	p->tentative = act == NVT_BRIDGE_POLL_TENTATIVE;
	if (act != NVT_BRIDGE_POLL_FULL)
		p->begun_ns = p->seen_ns;
	p->g = g;
	p->noted = noted;
	p->wobj = p->obj;
}

int nvt_bridge_copy_by_kernel(const struct nvt_bridge_copy *c)
{
	enum { HOST = 1, DEVICE = 2 }; /* CUmemorytype (gpu/cuda_driver.h's NVT_CU_MEMORYTYPE_*) */

	if (!c->bytes || c->bytes > NVT_BRIDGE_COPY_MAX || c->capturing || c->dst_managed || c->src_managed ||
	    c->host_fns)
		return 0;
	/* The source whole inside one allocation of this GPU that this context reads. */
	if (c->src_type != DEVICE || c->src_ordinal != c->ordinal || !c->src_ours || c->src < c->src_start ||
	    c->src - c->src_start > c->src_size || c->src_size - (c->src - c->src_start) < c->bytes)
		return 0;
	/* The destination pinned host memory, one mapping from its first byte to its last. */
	if (c->dst_type[0] != HOST || c->dst_type[1] != HOST || !c->dst_dev[0])
		return 0;
	return c->dst_dev[1] >= c->dst_dev[0] && c->dst_dev[1] - c->dst_dev[0] == c->bytes - 1;
}

int nvt_bridge_ctx_seen(struct nvt_bridge_ctx *c, int taken_in)
{
	if (c->off)
		return 1;
	if (taken_in)
		c->score += NVT_BRIDGE_CTX_LONG;
	else if (c->score)
		c->score--;
	if (c->score < NVT_BRIDGE_CTX_OFF) {
		if (c->stops && ++c->on >= nvt_bridge_ctx_pause(c)) {
			c->stops--;
			c->on = 0;
		}
		return 0;
	}
	c->score = NVT_BRIDGE_CTX_OFF;
	c->off = 1;
	c->skipped = 0;
	c->on = 0;
	if (c->stops < UINT32_MAX)
		c->stops++;
	return 1;
}

void nvt_bridge_clock_sample(struct nvt_bridge_clock *c, uint64_t gpu_ns, uint64_t host_ns, int tight)
{
	int64_t off = (int64_t)(gpu_ns - host_ns);
	uint64_t grow = NVT_BRIDGE_CLOCK_DRIFT_NS;

	/* The least seen, allowed to grow a little a sample and with the time since the last (the
	 * clocks drift apart). */
	if (c->known && host_ns > c->host_ns) {
		uint64_t since = host_ns - c->host_ns;
		grow += since > UINT64_MAX / NVT_BRIDGE_CLOCK_PPM ? NVT_BRIDGE_CLOCK_GROW_NS
								 : since * NVT_BRIDGE_CLOCK_PPM / 1000000;
		if (grow > NVT_BRIDGE_CLOCK_GROW_NS)
			grow = NVT_BRIDGE_CLOCK_GROW_NS;
	}
	if (c->known && off > c->off_ns + (int64_t)grow)
		off = c->off_ns + (int64_t)grow;
	c->off_ns = off;
	if (!c->known || host_ns > c->host_ns)
		c->host_ns = host_ns;
	c->known = 1;
	if (tight) {
		c->tight = 1;
		c->age = 0;
	} else if (c->age < UINT32_MAX) {
		c->age++;
	}
}

int nvt_bridge_ctx_taken_in(const struct nvt_bridge_clock *c, int capped, uint64_t end_ns, uint64_t host_ns)
{
	int64_t late;

	if (!capped || !c->known || !c->tight || c->age > NVT_BRIDGE_CLOCK_FRESH)
		return capped;
	/* How long after the bridge's end, in the host's clock, the wait returned. */
	late = (int64_t)(host_ns - (end_ns - (uint64_t)c->off_ns));
	return late <= (int64_t)NVT_BRIDGE_CTX_PROMPT_US * 1000;
}

uint32_t nvt_bridge_ctx_pause(const struct nvt_bridge_ctx *c)
{
	uint32_t doublings = c->stops ? c->stops - 1 : 0;

	if (doublings > NVT_BRIDGE_CTX_RETRY_DOUBLINGS)
		doublings = NVT_BRIDGE_CTX_RETRY_DOUBLINGS;
	return (uint32_t)NVT_BRIDGE_CTX_RETRY << doublings;
}

int nvt_bridge_ctx_cpus_enough(int cpus)
{
	return cpus >= NVT_BRIDGE_CTX_MIN_CPUS;
}

int nvt_bridge_ctx_may(struct nvt_bridge_ctx *c)
{
	if (!c->off)
		return 1;
	if (++c->skipped < nvt_bridge_ctx_pause(c))
		return 0;
	c->off = 0;
	c->score = NVT_BRIDGE_CTX_OFF - NVT_BRIDGE_CTX_LONG;
	return 1;
}
