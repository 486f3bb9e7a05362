/*
 * bridge.h - the bridge between a high time-sliced task's synchronised steps
 * (core/bridge.c; the shim's part: shim/shimbridge.c): which tasks bridge,
 * which waits by what their earlier ones taught, held and chained steps,
 * context synchronisations, and copies by a kernel. Pure code: no I/O, no
 * allocation, no globals. yield.h includes it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_BRIDGE_H
#define NVT_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include "nvtaskset.h"

/*
 * The bridge between a high time-sliced task's synchronised steps
 * (docs/priorities.md, "Preemption"; docs/hardware-facts.md): the GPU switches
 * to a runnable lower context as soon as the high one's work runs dry, and
 * the next step, queued on a channel with nothing pending, waits for the
 * switch back (~0.3 ms on an H100). A one-thread kernel with an empty one
 * queued behind it, on a stream of the task's own, keeps work pending while
 * the host reads a step's result and queues the next: it runs from the
 * wait's start until NVT_BRIDGE_MARGIN_US after the next step's first launch
 * (then that step is queued behind it: with one hardware queue,
 * CUDA_DEVICE_MAX_CONNECTIONS=1, it is on the same channel), or
 * NVT_BRIDGE_LINGER_US after the wait returned, or NVT_BRIDGE_CAP_MS at most.
 * It goes on while a graph replay is being queued, and in a task whose steps
 * replay a graph (NVT_BRIDGE_REPLAY_PM of its recent waits were followed by
 * one) until that step's replay is queued, but at most NVT_BRIDGE_SPAN_US
 * after the first launch: a step that queues small work (its inputs' copies, a
 * kernel) before its replay, with host time between, otherwise runs that work
 * dry before the graph arrives (the timeline on an H100, 2026-11-25: 344
 * against 98 us a step, 99 alone). After a replay it goes on until the
 * host's next call (a margin after it), at most NVT_BRIDGE_LATE_US: a PyTorch
 * replay's work reached the GPU up to ~60 us after the replay returned, late
 * where the host was slow, and a step whose next call came 30 us or more
 * after its replay paid the switches (H200, 2026-11-26: 70 of 2100 later
 * steps; 0-1 with the wait for the next call). How long a bridge waits for
 * the next launch after its wait returned (its linger) is learnt from the
 * task's recent gaps between a wait's return and the next launch: all of
 * NVT_BRIDGE_LINGER_US while half of them or more were within it (a
 * service's steps, whose host may be slow for a while; an average of the
 * last few waits, NVT_BRIDGE_ON_PM); else the longest of
 * the shorter ranges' bounds whose expected cost to the lower task (a caught
 * gap and the margin; an uncaught one the linger and the two switches) is no
 * more than the two switches that an unbridged wait costs it; none such: not
 * bridged. A service of one step a request whose requests sometimes queue
 * (the next one starts at once after a short host gap) gets a short linger
 * (H200, 2026-11-26: a queued one-step request paid the two switches, 586
 * against 437 us a fresh one); one whose next launch comes milliseconds later
 * none (it does not keep the GPU from the lower task).
 */
#define NVT_BRIDGE_LINGER_US 300 /* two switches (~290 us): a longer gap costs the lower task more */
#define NVT_BRIDGE_SWITCHES_US 300 /* what a step that idles costs the lower task (H100 ~290) */
#define NVT_BRIDGE_MARGIN_US 20  /* 2 and 10 us let the channel run dry before the step came */
#define NVT_BRIDGE_SPAN_US 150   /* what the first kernels of a step may wait behind the bridge */
#define NVT_BRIDGE_LATE_US 60    /* how late a replay's work came (a host that only polls waits it) */
#define NVT_BRIDGE_REPLAY_PM 750 /* steps that alternate a replay and none never reach it */
#define NVT_BRIDGE_CAP_MS 50
#define NVT_BRIDGE_ON_PM 500
/* The gaps learnt: up to 20, 30, 40, 50, 70, 100, 150, 200 and NVT_BRIDGE_LINGER_US us (the
 * lingers a bridge may have: close above the gaps a host shows), and longer. */
#define NVT_BRIDGE_GAPS 10
#define NVT_BRIDGE_ONE (1u << 16) /* a share of all the gaps, in 1/65536 */
enum nvt_bridge_why {
	NVT_BRIDGE_ON = 0,
	NVT_BRIDGE_NOT_SLICED = 1,  /* not a high task with slice: nothing to bridge */
	NVT_BRIDGE_TURNED_OFF = 2,  /* NVTASKSET_BRIDGE=0 */
	NVT_BRIDGE_CONNECTIONS = 3, /* CUDA_DEVICE_MAX_CONNECTIONS is not 1 */
	NVT_BRIDGE_BAD_WORD = 4,    /* NVTASKSET_BRIDGE is neither 0 nor 1: bridged */
};
/*
 * Whether a task of priority prio with yield words yield (NVT_YIELD_*) bridges
 * its waits, given the environment's CUDA_DEVICE_MAX_CONNECTIONS (connections)
 * and NVTASKSET_BRIDGE (word), either NULL when unset. Returns enum
 * nvt_bridge_why; nvt_bridge_on says whether that bridges.
 */
int nvt_bridge_wanted(unsigned prio, uint32_t yield, const char *connections, const char *word);
/* 1 if why (nvt_bridge_wanted's) bridges: ON, and BAD_WORD (said, and bridged). */
int nvt_bridge_on(int why);
/* The waits of a task, as the bridge learns them: how soon the next launch followed. */
struct nvt_bridge_learn {
	uint32_t share[NVT_BRIDGE_GAPS]; /* moving averages (weight 1/16, in NVT_BRIDGE_ONE) of the
					  * gaps in each range */
	uint32_t soon_pm;                /* moving average (weight 1/8, per mille) of "within the
					  * whole linger": quicker to come back after a slow spell */
	uint32_t waits;                  /* learnt from; 0: none yet (the first waits teach) */
};
/* A wait began; replayed: a graph replay was queued since the wait before. *pm: the moving
 * average (weight 1/8, per mille) of that. Returns 1 if the next bridge waits for the step's
 * replay (*pm >= NVT_BRIDGE_REPLAY_PM). */
int nvt_bridge_replays(uint32_t *pm, int replayed);
/* A launch came gap_ns after a wait returned (UINT64_MAX: a wait came first). */
void nvt_bridge_gap(struct nvt_bridge_learn *l, uint64_t gap_ns);
/* The next wait's linger in us (NVT_BRIDGE_LINGER_US before anything was learnt); 0: the next
 * wait is not bridged. */
uint32_t nvt_bridge_linger_us(const struct nvt_bridge_learn *l);
/*
 * A thread that polls for its work (cuEventQuery of an event recorded after the task's last
 * launch, cuStreamQuery of a busy stream) waits as one that synchronises does: its wait begins
 * at its second "not ready" in a row of the same object with no launch between (a single look,
 * a watchdog's or an allocator's, begins no full wait), and the look that finds the work done
 * returns from it. A loop that sleeps between its looks often finds its step done at its
 * second: a thread whose last "not ready" before a "done" of the same object came at most
 * NVT_BRIDGE_POLL_LOOK_US before it (fast) begins a tentative wait at the first look of its
 * next poll (no "not ready" of its own since its last "done" or launch, or none in the
 * NVT_BRIDGE_POLL_LOOK_US before): its bridge ends NVT_BRIDGE_POLL_CAP_US after its start at
 * most (the next look comes within the first of those, the linger after its return within the
 * rest), and a later "not ready" of the same object makes it a full one (a second bridge of
 * the whole cap queued behind the first, no new wait) where the next look (as far off as that
 * one from the one before) and a whole linger after it could come after the cap. Only a "done"
 * of the object waited for returns a wait (one whose end the thread learns from another
 * object, a stream queried idle, is held until the slot's next launch or wait, or the
 * bridge's cap). A bridge held from a look to the next holds the GPU for half the gap between
 * them on average: up to two switches' worth apart that costs the lower task no more than the
 * switches an unbridged step costs it; a look that no other follows costs it
 * NVT_BRIDGE_POLL_CAP_US at most.
 */
#define NVT_BRIDGE_POLL_LOOK_US (2 * NVT_BRIDGE_SWITCHES_US)
#define NVT_BRIDGE_POLL_CAP_US (NVT_BRIDGE_POLL_LOOK_US + NVT_BRIDGE_LINGER_US)
struct nvt_bridge_poll {
	const void *obj;    /* the object of the last "not ready" (have: 1) */
	uint64_t obj_noted; /* the launch count it was noted at */
	uint64_t seen_ns;   /* when */
	int have;
	int fast;           /* learnt: see above */
	int waiting;        /* a wait begun (nvt_bridge_poll_begun) on slot g at launch count noted */
	int tentative;      /* ... at a first look (seen_ns then: begun_ns) */
	uint64_t begun_ns;
	int g;
	uint64_t noted;
	const void *wobj;   /* the object it waits for */
};
enum nvt_bridge_poll_act {
	NVT_BRIDGE_POLL_NONE = 0,
	NVT_BRIDGE_POLL_BEGIN = 1,     /* a full wait begins (the caller says so by nvt_bridge_poll_begun) */
	NVT_BRIDGE_POLL_RETURNED = 2,  /* the wait begun returns */
	NVT_BRIDGE_POLL_TENTATIVE = 3, /* a tentative wait begins (its bridge capped) */
	NVT_BRIDGE_POLL_FULL = 4,      /* the tentative wait begun becomes a full one */
};
/* A look of this thread at obj (an event or a stream) on slot g, whose work was noted at launch
 * count noted; launched: the slot launched since; done: the look found it done; now_ns: the
 * monotonic clock. Returns enum nvt_bridge_poll_act. */
int nvt_bridge_poll_look(struct nvt_bridge_poll *p, int g, const void *obj, uint64_t noted, int launched, int done,
			 uint64_t now_ns);
/* The wait of act (NVT_BRIDGE_POLL_BEGIN, _TENTATIVE or _FULL) began, or became full, on slot g
 * at launch count noted, at the look that said so (of the object that look was of). */
void nvt_bridge_poll_begun(struct nvt_bridge_poll *p, int g, uint64_t noted, int act);
/*
 * Held steps. A step whose host is slower than its kernels (an eager program
 * that launches op by op) runs its context dry at the first gap between its
 * launches, its bridge released or not, and pays the two switches inside the
 * step (H200, 2026-11-26: 451-454 us a step of 16 short kernels 5-20 us apart
 * beside a batch, against 134-364 alone). A held bridge is not released by the
 * launches of the thread whose wait queued it: that thread's next step queues
 * behind it until something else releases it (the step's wait, a copy to the
 * host, a graph replay, a context synchronisation, another thread's launch or
 * wait) or its linger ends, then runs at once, after its host instead of beside
 * it. Each of that thread's launches starts the held bridge's linger again, up
 * to NVT_BRIDGE_HELD_SPAN_US after the wait returned: a step whose host
 * outlasts the linger, its launches closer together than the linger, stays held
 * (a gap that long costs the lower task less than the two switches), and one
 * whose host is slower still is not held all through. Which is faster depends
 * on the step and on whether a lower task is runnable, so each way is measured:
 * a step whose first launch came while its bridge was on is timed from the wait
 * before it returned to its own wait's return (the whole step: a call that
 * waited behind a held bridge counts), and the way taken (released at first)
 * turns where the median of the other way's last NVT_BRIDGE_HOLD_LAST steps
 * beats its own by NVT_BRIDGE_HOLD_GAIN_US and by a sixteenth (a median: one
 * step that a busy host or a batch's long kernel made slow does not turn the
 * way; a margin both ways: a noisy host's steps do not turn it back and forth).
 * A task's first NVT_BRIDGE_HOLD_SKIP bridges are released and not learnt from
 * (its first steps were slow either way: H100, 2026-11-26, a held service's
 * first five), the next 2 x NVT_BRIDGE_HOLD_FIRST alternate. Then the other way
 * is tried after NVT_BRIDGE_HOLD_TRY / 2 bridges, and each try that does not
 * turn the way puts the next a period twice as long on (NVT_BRIDGE_HOLD_TRY,
 * then 2, 4... times it, up to NVT_BRIDGE_HOLD_TRY_MAX: a try costs its step
 * the worse way's time); a try that beat the better way's median is tried again
 * at once. Where the way turns or the better way's median moved by more than an
 * eighth since the last try (a batch that comes shows in released steps at
 * once; one that goes, while steps are held, at the next try), the period
 * starts again at NVT_BRIDGE_HOLD_TRY (NVT_BRIDGE_HOLD_TRY_SLOW while the other
 * way took NVT_BRIDGE_HOLD_FAR_US longer) and the next try comes within it,
 * never later than it was due (a median that keeps moving does not put the
 * tries off). NVT_ENV_BRIDGE_HOLD fixes the way (for measuring).
 */
#define NVT_BRIDGE_HOLD_TRY 16
#define NVT_BRIDGE_HOLD_TRY_SLOW 32
#define NVT_BRIDGE_HOLD_TRY_MAX 1024 /* a try in under 1 % of requests of 8 steps */
#define NVT_BRIDGE_HOLD_GAIN_US 20
#define NVT_BRIDGE_HOLD_FAR_US 100
#define NVT_BRIDGE_HOLD_LAST 5
#define NVT_BRIDGE_HOLD_FIRST 3
#define NVT_BRIDGE_HOLD_SKIP 8
#define NVT_BRIDGE_HOLD_MAX_US 1000000 /* a measured step counts at most this */
#define NVT_BRIDGE_HELD_SPAN_US 1000     /* a held step's host: about three of NVT_BRIDGE_SWITCHES_US */
/*
 * Held steps chained. Held to its
 * wait, a step's kernels run after its host, not beside it: an eager PyTorch
 * step took 429 us held against 264 on a static partition (H100, 2026-11-26,
 * docs/bench/shipped-2026-11-26, run V3). Chained, at a launch of the held
 * step's thread once NVT_BRIDGE_REARM_US passed since its bridge was queued (or
 * its wait returned), the shim queues a new held bridge behind that launch and
 * releases the old one: the kernels queued so far run while the host goes on,
 * and the context keeps work pending. The chain keeps the held span: each new
 * bridge is given what is left of NVT_BRIDGE_HELD_SPAN_US since the step's wait
 * returned (counted by its kernel from its start, so work queued ahead of it
 * moves its end that much later), and none is queued with less than
 * NVT_BRIDGE_REARM_US of it left. A step whose
 * first launch comes after its chain is over (a request's first step,
 * NVT_BRIDGE_HELD_SPAN_US or more after the wait before it returned), where held
 * steps are the way learnt, starts a chain the same way behind that launch; a
 * host slower than the span goes on unheld; that chain is first chained again
 * NVT_BRIDGE_CHAIN_FIRST_US + NVT_BRIDGE_REARM_US after it began. Each new
 * bridge costs the host two launches and may add its margin to the step: every
 * 50 us, steps of 16 kernels 40 us apart took 786 against 764 us unchained, and
 * steps whose 4 kernels came 40 us after their first 142 against 117. Chains
 * need the task's kernel launch calls followed, which costs every launch: a
 * PyTorch token-by-token service (no chain: its replay releases the held
 * bridge) took 3 % longer a request at p50 and more at p99 with them followed
 * from its start (H100, 2026-11-26, docs/bench/chained-2026-11-26, run V12),
 * where an eager one's p50 fell by 4-30 % in eight of ten cells (runs V8, V9,
 * V11), and with them followed from wait 541 on (a few eager steps of its set-up
 * counted) one had 4 of 150 requests over 8 ms against none (H100, 2026-11-26,
 * docs/bench/chainseen-2026-11-26, run P3). So by default (NVT_ENV_BRIDGE_REARM
 * unset) the launch calls are followed only once the task's held steps are, as
 * it runs, steps a chain would shorten: NVT_BRIDGE_CHAIN_NEED of a window of
 * NVT_BRIDGE_CHAIN_WINDOW of its held steps (windows one after another, none
 * overlapping), each such step with NVT_BRIDGE_CHAIN_LAUNCHES or more launches
 * of its thread behind its unreleased held bridge and NVT_BRIDGE_REARM_US or
 * more of its host from its wait's return to its next wait; a wait with no
 * launch since the last one returned is no step. A service that replays graphs
 * (its replay releases the held bridge) never gets there, nor one whose set-up
 * runs a few eager steps, nor one whose steps are such half the time (one window
 * in ~100000 would be, at random). "1" follows them from the start, "0" never.
 */
#define NVT_BRIDGE_REARM_US 100
/* A request's chain counts as queued this long after it began (so it is chained again
 * NVT_BRIDGE_REARM_US later): until its context is back on the GPU (the switch-in, ~150-200 us)
 * nothing runs, and each bridge chained meanwhile adds its margin to the step (H100,
 * 2026-11-26, docs/bench/chained-2026-11-26: a first step of 16 kernels 5 us apart 330 us
 * chained every 50 us from the start against 267 unchained). */
#define NVT_BRIDGE_CHAIN_FIRST_US 150
/*
 * At a launch at now of the thread of a held chain whose step began (its wait
 * returned, or the chain started) at ret_ns and whose last bridge was queued at
 * armed_ns, after that thread's launch before at last_ns (0: none): the held
 * span, in ns, of a bridge to queue behind it now, or 0 for none. Past the span
 * (the chain over), a new chain at the first launch after the wait (last_ns
 * before ret_ns: a request's first launch, its wait long returned).
 */
uint64_t nvt_bridge_rearm(uint64_t ret_ns, uint64_t armed_ns, uint64_t last_ns, uint64_t now);
#define NVT_BRIDGE_CHAIN_LAUNCHES 4
#define NVT_BRIDGE_CHAIN_WINDOW 32
#define NVT_BRIDGE_CHAIN_NEED 28
/* Held steps judged (nvt_bridge_chain_seen): all of them, and the current window's. */
struct nvt_bridge_chain {
	uint32_t steps;     /* up to UINT32_MAX */
	uint32_t in_window; /* steps of the current window */
	uint32_t such;      /* of them, steps a chain would have shortened */
	uint32_t best;      /* the most such in a window that ended */
};
enum nvt_bridge_chain_mode { NVT_BRIDGE_CHAIN_SEEN, NVT_BRIDGE_CHAIN_NEVER, NVT_BRIDGE_CHAIN_ALWAYS };
/* NVT_ENV_BRIDGE_REARM's word (NULL: unset) as enum nvt_bridge_chain_mode; -1 if neither "0" nor
 * "1" (then NVT_BRIDGE_CHAIN_SEEN, said). */
int nvt_bridge_chain_mode(const char *word);
/* A held step whose thread launched launches kernels behind its unreleased held bridge ended (its
 * next wait began) span_ns after its wait returned: 1 if a chain would have shortened it (it
 * counts toward following the launch calls). */
int nvt_bridge_chain_step(uint32_t launches, uint64_t span_ns);
/* A held step ended, one a chain would have shortened (qualifies: nvt_bridge_chain_step) or
 * not: counts it in c. Returns 1 if the window it ends had NVT_BRIDGE_CHAIN_NEED such (the
 * launch calls are now to be followed). */
int nvt_bridge_chain_seen(struct nvt_bridge_chain *c, int qualifies);
enum nvt_bridge_hold_mode { NVT_BRIDGE_HOLD_LEARN, NVT_BRIDGE_HOLD_NEVER, NVT_BRIDGE_HOLD_ALWAYS };
struct nvt_bridge_hold {
	/* [0] released by launches, [1] held: the last measured steps (a ring, n[i] in all) */
	uint32_t step_us[2][NVT_BRIDGE_HOLD_LAST];
	uint32_t n[2];
	uint32_t bridges; /* bridges decided (up to UINT32_MAX) */
	uint32_t again;   /* 1: the last try beat the better way; the next bridge tries again */
	uint32_t period;  /* bridges from one try to the next (0: none yet) */
	uint32_t left;    /* bridges of the better way before the next try */
	uint32_t best;    /* the better way (1: held) and its median at the last try */
	uint32_t base_us;
};
/* NVT_ENV_BRIDGE_HOLD's word (NULL: unset) as enum nvt_bridge_hold_mode; -1 if neither "0" nor
 * "1" (then learnt, said). */
int nvt_bridge_hold_mode(const char *word);
/* A measured step, held (1) or not (0), that took step_ns. */
void nvt_bridge_hold_learn(struct nvt_bridge_hold *h, int held, uint64_t step_ns);
/* Whether the next bridge is held (mode: enum nvt_bridge_hold_mode); *learn: whether its step
 * may be learnt from. Advances the tries' clock. */
int nvt_bridge_hold_next(struct nvt_bridge_hold *h, int mode, int *learn);
/* The median of way held's (1) or released's (0) last measured steps, in us (0: none). */
uint32_t nvt_bridge_hold_median(const struct nvt_bridge_hold *h, int held);
/*
 * Context synchronisations (cuCtxSynchronize: PyTorch's torch.cuda.synchronize()).
 * One waits for every stream of the context, a bridge queued before it too, so
 * its bridge is queued by a thread of the shim's own just after the wait
 * began: a context synchronisation waits for the work queued before it began,
 * not for what another thread queues after (H100, driver 580.159.04,
 * 2026-11-26: a 5 ms kernel queued 0-1000 us after the call began was never
 * waited for in 45 tries; steps of 16 short kernels so bridged took 246-249 us
 * beside a time-sliced batch against 526-529 unbridged and 227 alone). Should
 * the driver take such a bridge in (a thread of the shim's slower than the
 * wait's start), the wait lasts the bridge's cap, NVT_BRIDGE_CTX_CAP_US from
 * the bridge's start, and the bridge's record says it ended at its cap just
 * before the wait returned (never released: its thread was waiting;
 * nvt_bridge_ctx_taken_in). A bridge the wait did not take in still runs when
 * the wait returns, or ended at its cap beside a long last kernel of the step
 * well before the wait returned. Each wait that took its
 * bridge in scores NVT_BRIDGE_CTX_LONG, each other wait takes one off, and
 * once the score reaches NVT_BRIDGE_CTX_OFF the process's context
 * synchronisations are not bridged for a while (four such waits in a row, or
 * one in eight for long).
 */
#define NVT_BRIDGE_CTX_CAP_US 5000
/* ... and queued no sooner than this after the wait began: a thread that queued it within a few
 * microseconds (spinning for the wait) had it taken in (H100, run C8: waits of 5 ms, and the
 * bridging stopped); one woken from a condition variable queued it 10-300 us after and did not,
 * in runs C3-C8). */
#define NVT_BRIDGE_CTX_AFTER_US 20
/* ... measured from when the waiting thread left the shim's callback (the driver's measure comes
 * after it; a thread the host kept from its CPU meanwhile would have its bridge taken in): the
 * shim's thread spins for it NVT_BRIDGE_CTX_SPIN_US from the hand, then sleeps a little each
 * turn, and queues no bridge for a wait that has not left the callback within
 * NVT_BRIDGE_CTX_CAP_US. */
#define NVT_BRIDGE_CTX_SPIN_US 200
/* ... by a thread that may run on another CPU than the wait's: a task that may run on one CPU
 * only (a cpuset of one: taskset -c N, --cpuset-cpus; a CPU quota is not seen), as the first
 * waiting thread's affinity united with the shim's thread's say at its first wait (before that
 * thread runs, with the program's other threads': it starts on theirs, so a waiting thread alone
 * pinned to one CPU is bridged from the others' CPUs, and a program whose threads are all on one
 * CPU then, a pin inherited or set from outside, is not; a pin of the program's threads set
 * later leaves the shim's thread where it is; a forked child's read again; before the bridge's
 * module is made), has them not bridged, read again every NVT_BRIDGE_CTX_RETRY such waits while
 * so (a program that lets itself run on more later).
 * There the woken thread took the CPU from the waiting one before the wait had taken
 * its measure, and every wait took its bridge in, to the bridge's cap, until the judgement
 * stopped them, and again at each try (H100,
 * 2026-11-27, docs/bench/gpuchecks-2026-11-27, runs G5-G6: a service of small steps pinned to
 * one CPU, requests 17.8-18.1 ms at p99, 3.05-3.11 not bridged, 1.41-1.44 unpinned and
 * bridged; in MPS and outside). A task on more CPUs whose two threads meet on one (the
 * scheduler woke the shim's thread on the waiting one's) has the shim's thread move off it
 * before the bridge is queued, to the other CPUs it or the waiting thread may run on then
 * (their affinities, read at the move), and wait
 * NVT_BRIDGE_CTX_AFTER_US from the move as well; a move that fails skips the bridge, and where
 * no other CPU is left the task's context synchronisations are not bridged until the waiting
 * thread's CPUs are read again, as above (H100, 2026-11-28, docs/bench/gpuchecks-2026-11-28,
 * runs G7-G12: the shim's thread pinned to the waiting thread's CPU, or two CPUs of which one
 * busy: requests 17.8-18.2 ms at p99 without the move, 1.47-3.72 with it, later steps 76-81 us
 * at p50). */
#define NVT_BRIDGE_CTX_MIN_CPUS 2
#define NVT_BRIDGE_CTX_LONG 8
#define NVT_BRIDGE_CTX_OFF 32
/* Stopped, they are tried again after NVT_BRIDGE_CTX_RETRY context synchronisations, twice as
 * many after each stop up to NVT_BRIDGE_CTX_RETRY << NVT_BRIDGE_CTX_RETRY_DOUBLINGS: what took
 * the bridges in (a host thread slow for a while) may pass. A try begins one such wait short of
 * the stop: a driver that always takes them in costs one capped wait a try. Bridged for as many
 * waits as the pause they would get, they count one stop less. */
#define NVT_BRIDGE_CTX_RETRY 256
#define NVT_BRIDGE_CTX_RETRY_DOUBLINGS 6
struct nvt_bridge_ctx {
	uint32_t score;   /* waits that took their bridge in score NVT_BRIDGE_CTX_LONG, others -1 */
	uint32_t off;     /* 1: not bridged now */
	uint32_t stops;   /* how often they stopped (one less after each pause's worth of waits on) */
	uint32_t skipped; /* waits not bridged since the last stop */
	uint32_t on;      /* waits bridged since the last try, or since stops last went down */
};
/* A bridged context synchronisation returned, having taken its bridge in (taken_in: 1) or not:
 * c moves. Returns 1 if context synchronisations are not to be bridged from now on (c->off). */
int nvt_bridge_ctx_seen(struct nvt_bridge_ctx *c, int taken_in);
/*
 * Whether a bridge that ended at its cap was taken in: its wait returned within
 * NVT_BRIDGE_CTX_PROMPT_US of the bridge's end. A bridge the wait did not take in may end at its
 * cap too: the GPU runs a kernel of another stream beside the step's last one once that one's
 * blocks are all placed (one hardware queue orders launches, not kernels), so beside a last
 * kernel that runs on for more than the cap. The bridge's times are the GPU's (%globaltimer):
 * the host's clock is told from them by the bridges' records (struct nvt_bridge_clock: the
 * least of a bridge's start less the host's time just before it was queued, and of its seeing
 * its wait return less the host's time of the return, allowed to grow NVT_BRIDGE_CLOCK_DRIFT_NS
 * a sample and NVT_BRIDGE_CLOCK_PPM of the host's time since the last, at most
 * NVT_BRIDGE_CLOCK_GROW_NS at once: the clocks drift apart by their crystals' error, tens of
 * parts per million, and samples may come seconds apart).
 */
#define NVT_BRIDGE_CTX_PROMPT_US 1000
#define NVT_BRIDGE_CLOCK_DRIFT_NS 1000
#define NVT_BRIDGE_CLOCK_PPM 100
#define NVT_BRIDGE_CLOCK_GROW_NS 250000
#define NVT_BRIDGE_CLOCK_FRESH 64 /* samples since the last tight one that still trust the clock */
struct nvt_bridge_clock {
	int64_t off_ns; /* the GPU's clock less the host's, and the least delay seen */
	int known;      /* 0: no sample yet */
	int tight;      /* a tight sample was seen (a bridge that saw its wait return: ~1 us late) */
	uint32_t age;   /* samples since the last tight one */
	uint64_t host_ns; /* the latest host time sampled */
};
/* A bridge did something at gpu_ns (its clock: started, saw its wait return) no sooner than the
 * host's host_ns (just before it queued it, when it stored the return); tight: it saw the
 * return (a start may come long after the queueing, behind the step's work). */
void nvt_bridge_clock_sample(struct nvt_bridge_clock *c, uint64_t gpu_ns, uint64_t host_ns, int tight);
/* A context synchronisation returned at host_ns; its bridge ended (at the GPU's end_ns) at its
 * cap before (capped: 1) or not. Returns 1 if the wait took the bridge in: capped, and, where c
 * had a tight sample in its last NVT_BRIDGE_CLOCK_FRESH, the wait returned within
 * NVT_BRIDGE_CTX_PROMPT_US of the bridge's end (else the record alone says so: loose samples
 * alone could put the end too early, and a driver that takes every bridge in would never be
 * told so). */
int nvt_bridge_ctx_taken_in(const struct nvt_bridge_clock *c, int capped, uint64_t end_ns, uint64_t host_ns);
/* How many context synchronisations go unbridged after c's last stop. */
uint32_t nvt_bridge_ctx_pause(const struct nvt_bridge_ctx *c);
/* A context synchronisation begins: returns 1 if it may be bridged (a try may begin). */
int nvt_bridge_ctx_may(struct nvt_bridge_ctx *c);
/* Whether a task whose waiting thread may run on cpus CPUs has its context synchronisations
 * bridged (NVT_BRIDGE_CTX_MIN_CPUS). */
int nvt_bridge_ctx_cpus_enough(int cpus);

/*
 * A bridged task's copy to the host on a stream (a step's token, read by the
 * host after an event or a synchronisation) is done by a kernel, on the
 * compute engine, where a copy engine would do it: the step's stream then
 * waits for no copy engine, which leaves the channel blocked on a semaphore
 * with nothing runnable on the compute engine, and the GPU switches to the
 * lower context until the copy ends (docs/hardware-facts.md). Only a copy of
 * at most NVT_BRIDGE_COPY_MAX bytes, from this GPU's memory whole to pinned
 * host memory that the GPU maps whole, on a stream that captures no graph;
 * every other copy is the driver's.
 */
#define NVT_BRIDGE_COPY_MAX 4096
/* What the shim found of a copy, through the driver (each left 0 where the driver does not say:
 * pageable memory, a query that failed). */
struct nvt_bridge_copy {
	uint64_t bytes;
	int capturing;               /* the stream captures (or cannot be asked): 1 */
	unsigned dst_type[2];        /* CUmemorytype of dst's first and last byte */
	uint64_t dst_dev[2];         /* where a kernel of this context reaches them */
	int dst_managed;             /* either is managed memory */
	unsigned src_type;           /* CUmemorytype of src */
	int src_ordinal, ordinal;    /* the GPU src is on, and the context's */
	int src_ours;                /* src's context is this one, or (no context: the virtual
				      * memory API's, a pool's) this context may read it */
	int src_managed;
	uint64_t src_start, src_size; /* src's allocation */
	uint64_t src;
	int host_fns;                /* the task queued a host function (it waits for its steps
				      * by them, unbridged: JAX) */
};
/* 1 if a kernel does the copy c. Not for a task that queued a host function: its waits are not
 * bridged, so the kernel's copy keeps nothing on the GPU for it, and beside GEMM training it made
 * JAX's steps that read the token slower (H100: 1125-1188 us a step against 810-1012 with the
 * driver's copies, run T4 of docs/bench/jaxshare-2026-11-27). */
int nvt_bridge_copy_by_kernel(const struct nvt_bridge_copy *c);

#endif /* NVT_BRIDGE_H */
