/*
 * yield.h - how a task of lower priority yields to higher ones on its GPU
 * (docs/priorities.md, "Yielding"): the words of --yield and of the priority's
 * text, the activity a managed task's shim publishes (requests, their period
 * and busy time), and the verdict a yielding task's shim reaches before each
 * launch from the higher tasks' activity. Pure code: no I/O, no allocation,
 * no globals.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_YIELD_H
#define NVT_YIELD_H

#include <stddef.h>
#include <stdint.h>
#include "nvtaskset.h"
#include "bridge.h" /* the bridge between a high time-sliced task's steps */

/*
 * The defaults (docs/priorities.md, "`--yield protect` and borrowing,
 * measured"): never worse than a static partition for either task, on the
 * H100's measurements. Holding back protects a periodic service but costs
 * the lower task 20-31 % of its steps, so it is a choice (protect), not a
 * default.
 */
#define NVT_YIELD_DEFAULT NVT_YIELD_CLIENT
#define NVT_YIELD_PROTECT (NVT_YIELD_GATE | NVT_YIELD_BOUND | NVT_YIELD_AHEAD | NVT_YIELD_CLIENT)
/* Timeslices (us) of channel groups (docs/priorities.md, "Preemption"). A task below high with
 * slice: slice_us, by default NVT_SLICE_LOW_US (5 us bounded a service's wait to 0.1-0.2 ms
 * beside persistent GEMMs on the H200, docs/hardware-facts.md); a high one: NVT_SLICE_HIGH_US,
 * so that a lower task's turn seldom interrupts a request. */
#define NVT_SLICE_LOW_US 5
#define NVT_SLICE_HIGH_US 20000
#define NVT_SLICE_MAX_US 1000000
#define NVT_YIELD_BOUND_US 1000 /* work in flight beside a higher task */
#define NVT_YIELD_DUTY_PCT 50   /* hold back only for higher tasks busy at most half the time */
/* Limits that keep a yielding task going whatever the higher tasks do. */
#define NVT_YIELD_MAX_HOLD_MS 100 /* the longest one launch waits */
#define NVT_YIELD_STALE_MS 200    /* a busy task whose counters stay still this long is not busy */
#define NVT_YIELD_HOLD_MS 5       /* an untracked task is busy this long after a launch */
#define NVT_YIELD_OPEN_MS 1000    /* a request open this long: its task counts as busy all the time */
#define NVT_YIELD_MAX_US 1000000  /* the largest bound= and ahead= */
/* Requests seen before a task's period counts (ahead) and its duty share. */
#define NVT_YIELD_LEARN 4

/*
 * Parses one item of --yield (or of the '+'-separated yield= of the
 * priority's text) into p: "gate", "bound[=US]", "ahead[=US]", "client",
 * "borrow", "guard", "any", "slice[=US]", "duty=PCT", "protect", "none"
 * (no way: clears every word), or "default" (the default words). A word adds to p->yield; "bound=US",
 * "ahead=US" and "slice=US" also set the value. Returns 0, or -1 with the
 * reason in why (NULL, 0: none wanted).
 */
int nvt_yield_item(const char *item, struct nvt_slot_prio *p, char *why, size_t len);
/*
 * Parses a whole --yield list ("gate,bound=500"): the task yields in these
 * ways only. "default" there is the words a start gives without --yield, by
 * partition (nvt_prio_default_yield): it sets NVT_PRIOF_AUTO in p->flags, and
 * nvt_prio_given adds them (alone: nvt_prio_yield_default_alone). Returns 0,
 * or -1 with the reason in why (NULL, 0: none wanted).
 */
int nvt_yield_parse(const char *list, struct nvt_slot_prio *p, char *why, size_t len);
/* Writes p's yield words ("gate,bound,ahead,client", "none"). Returns the length or -1. */
int nvt_yield_format(const struct nvt_slot_prio *p, char sep, char *buf, size_t len);
/* "gated", "running", ... for enum nvt_yield_state; "?" for others. */
const char *nvt_yield_state_name(unsigned state);

/* The effective values of p (its own, or the defaults), in ns and per mille. */
struct nvt_yield_cfg {
	uint32_t yield;    /* NVT_YIELD_* */
	uint64_t bound_ns; /* 0: no bound */
	uint64_t ahead_ns; /* 0: as long as the task's own work in flight takes */
	uint32_t duty_pm;
	uint32_t slice_us; /* its channel groups' timeslice with NVT_YIELD_SLICE (below high) */
};
void nvt_yield_cfg_of(const struct nvt_slot_prio *p, struct nvt_yield_cfg *c);
/*
 * 1 if a task of priority prio (enum nvt_prio) that yields in the ways yield
 * (NVT_YIELD_*) holds its own launches back in its shim: a priority below
 * high, and a way that is the shim's (gate, bound, ahead, borrow: client is
 * MPS's, guard the agent's). Its shim then follows its launch calls.
 */
int nvt_yield_by_shim(unsigned prio, uint32_t yield);
/*
 * The ways of want (NVT_YIELD_*) that a running task given level prio by -p would not take up,
 * its shim having been set up by start (the priority its start gave it; prio NVT_PRIO_NONE:
 * started without one). Gate, bound, ahead, borrow and any need a shim that follows its launch
 * calls (nvt_yield_by_shim at its start); client is MPS's, fixed when its context was made;
 * slice needs a task started with slice (its shim follows its channel groups). Guard is the
 * agent's, taken up by every task. 0 for prio NVT_PRIO_NONE and for a high task's client.
 */
uint32_t nvt_yield_not_taken(const struct nvt_slot_prio *start, unsigned prio, uint32_t want);
/*
 * The ways of want that -p refuses on such a task, changing nothing: those nvt_yield_not_taken
 * finds, but client on a task started with a priority. That one is written with a warning that
 * it does not take effect: it is how -p takes slice away, and its MPS client priority stays as
 * its start made it. On a task started without one it would change nothing. A start refuses
 * no combination of words: its task is set up for those it is given (nvt_yield_refused of
 * those words as its start is 0), so a start and -p agree on which words go together.
 */
uint32_t nvt_yield_refused(const struct nvt_slot_prio *start, unsigned prio, uint32_t want);
/*
 * The ways of now (a running task's priority and words) that -p --yield want takes away with a
 * change its words do not show: slice, whose channel groups go back to libcuda's own timeslice,
 * beside other levels' tasks instead of time-sliced against them (a task given a priority and
 * no partition is time-sliced by default). -p does it, and says so; 0 if none.
 */
uint32_t nvt_yield_taken_away(const struct nvt_slot_prio *now, uint32_t want);

/* A request began, or ended, at now: updates a's counts and averages (an end ends every request
 * begun: ends = begins). */
void nvt_act_begin(struct nvt_slot_activity *a, uint64_t now);
void nvt_act_end(struct nvt_slot_activity *a, uint64_t now);
/* Its share of time busy, per mille (0 until NVT_YIELD_LEARN requests). */
uint32_t nvt_act_duty_pm(const struct nvt_slot_activity *a);
/* 1 if its requests come periodically enough to foresee the next one. */
int nvt_act_periodic(const struct nvt_slot_activity *a);
/*
 * 1 if a lower task may run work of need_ns on its TPCs at now: it is idle,
 * periodic, its request of this period has begun (not overdue), and its next
 * one is due need_ns or more from now. A task quiet for over four periods
 * (paused) lends too.
 */
int nvt_act_may_lend(const struct nvt_slot_activity *a, uint64_t now, uint64_t need_ns);

/* A higher task as a yielding shim sees it before a launch. */
struct nvt_watched {
	struct nvt_slot_activity act; /* a copy of its activity */
	uint64_t moved_ns;            /* when its begins or launches last moved, as seen */
};

enum nvt_yield_verdict {
	NVT_YV_GO = 0,     /* launch */
	NVT_YV_GATE = 1,   /* wait: a higher task is busy */
	NVT_YV_AHEAD = 2,  /* wait: a periodic higher task's request is due */
	NVT_YV_BESIDE = 3, /* launch: the busy ones are busy too much of the time to wait for */
};

/*
 * Before a launch at now, with w[0..n-1] the higher tasks on its GPU: whether
 * to launch (GO, BESIDE) or wait (GATE, AHEAD) and, when waiting, until when
 * at the latest (*wake: look again by then). ahead_ns: how long before a due
 * request to hold (the caller's learned value when c->ahead_ns is 0).
 * Returns enum nvt_yield_verdict.
 */
int nvt_yield_verdict(const struct nvt_yield_cfg *c, const struct nvt_watched *w, int n,
		      uint64_t now, uint64_t ahead_ns, uint64_t *wake);

/*
 * NVT_SLICE_SHARE_US: the timeslice of a lower task beside higher tasks that
 * never idle (nvt_preempt_share): it keeps a share of the GPU (about
 * SHARE / (SHARE + the higher task's) when both are busy) instead of 5 us
 * against a higher task's 20 ms. Its shim's thread looks every
 * NVT_SHARE_POLL_US while it follows higher tasks.
 */
#define NVT_SLICE_SHARE_US 2048
#define NVT_SHARE_POLL_US 1000

/*
 * The timeslice (us) for the channel groups of a task of priority prio
 * (enum nvt_prio) with c's words: NVT_SLICE_HIGH_US for a high task (c->slice_us
 * where longer: a request held longer than 20 ms is switched inside), c->slice_us
 * below (NVT_SLICE_SHARE_US with share: higher tasks that never idle, unless
 * slice_us is longer); 0 (the driver's own) without NVT_YIELD_SLICE or a
 * priority.
 */
uint32_t nvt_preempt_timeslice(unsigned prio, const struct nvt_yield_cfg *c, int share);
/*
 * A share for a lower task beside higher tasks that never idle (its timeslice
 * NVT_SLICE_SHARE_US instead of 5 us, so that it keeps running): taken when in
 * each of the last two windows of NVT_SHARE_WINDOW_MS a higher task was busy
 * at NVT_SHARE_ON_PM or more of the looks, given back after a window under
 * NVT_SHARE_OFF_PM. By the looks themselves, not by the averages a service
 * publishes: a warm-up, or a request answered token by token, made those say
 * "busy most of the time" for a few requests, and a share then let the batch
 * task keep the GPU ~2 ms a step (H200, 2026-11-24: token-by-token p99 34 ms
 * against 8 ms).
 */
#define NVT_SHARE_WINDOW_MS 500
#define NVT_SHARE_ON_PM 900
#define NVT_SHARE_OFF_PM 500
struct nvt_share {
	uint64_t window_ns; /* when the current window began; 0: none yet */
	uint32_t busy, looks;
	uint32_t last_pm;   /* the window before: its busy looks per mille (-1u: none) */
	int on;
};
/* One look at now (busy: a higher task busy). Returns 1 while the share is on. */
int nvt_preempt_share(struct nvt_share *s, int busy, uint64_t now);
/* 1 if watched task w is busy at now (its request open and its counters moving). */
int nvt_watched_busy(const struct nvt_watched *w, uint64_t now);

/*
 * How long one of a yielding task's launches runs, after one more sample: up
 * fast (halfway to a longer sample), down slowly (weight 1/8). Too short an
 * estimate lets too much work into flight and leads too little ahead of a
 * due request; a first sample from a short set-up kernel took ~20 requests
 * of the H100's benchmark to grow out of with weight 1/8 both ways.
 */
uint64_t nvt_yield_launch_avg(uint64_t avg, uint64_t sample);
/*
 * How many launches may be in flight so that they take at most bound_ns,
 * given that one takes launch_ns (0: not known yet): at least 1, at most max.
 */
unsigned nvt_yield_inflight(uint64_t bound_ns, uint64_t launch_ns, unsigned max);

#endif /* NVT_YIELD_H */
