/*
 * shimbridge.c - the bridge between a high time-sliced task's synchronised
 * steps (docs/priorities.md, "Preemption"; core/bridge.h says why and when).
 * Over 500 lines on purpose: the bridge's kernels, its copies by a kernel and
 * its report share one module per context and one lock, made and torn down
 * together.
 *
 * When a thread of the task begins to wait for its work (a stream's, an
 * event's or the context's synchronisation) and its recent waits teach a linger (core/bridge.h:
 * how soon a launch followed them), the shim queues on a stream of its own a
 * one-thread kernel (nvt_bridge) and an empty one behind it. The kernel runs until the host's
 * next launch on this GPU plus a margin, or the linger after the wait
 * returned, or the cap: the task's context keeps work pending between its
 * steps, so the GPU does not switch to a lower context there, and the next
 * step (on the same hardware queue: CUDA_DEVICE_MAX_CONNECTIONS=1, which
 * nvtaskset sets for such a task) is queued behind it. The host talks to it
 * through two words of a page of its own that the GPU reads: the last wait
 * that returned, the last wait whose bridge may end (once released, a bridge
 * stays released).
 *
 * A context synchronisation waits for every stream of its context, a bridge queued before it
 * too: its bridge is queued by a thread of the shim's own (ctx_bridger) just after the wait
 * began, which the wait does not wait for (core/bridge.h, "Context synchronisations"); with a
 * cap of its own, and not for a while once the waits show they took it in.
 *
 * Every launch (but those of a held bridge's thread) and graph replay
 * releases the bridge (one store: with one
 * hardware queue, whatever the program queues waits behind it, so another
 * thread's kernels must not wait for this thread's next step), and so does
 * every wait's start and every copy to the host that waits (what it waits for
 * may be queued behind the bridge); a context synchronisation releases every
 * bridge first (it waits for this stream too). After a graph replay returns
 * the bridge goes on until the host's next call (a launch, a copy, a wait, a
 * replay) plus the margin, at most NVT_BRIDGE_LATE_US: a replay's work may reach
 * the GPU tens of us after the replay returns, later when the host is slow
 * (core/bridge.h). Work queued behind it that is
 * not a launch and not waited for (an event only polled) waits at most the
 * linger. The kernels and the stream are made in the waiting thread's context
 * at its first bridged wait (its stream capture relaxed meanwhile), again
 * after that context is destroyed or reset; the page is never unmapped, so the
 * host's stores stay harmless whatever the contexts do. What the waits teach
 * is learnt in the slow path the launch path takes after a wait
 * (shim_yield_launched) and at a wait that follows a wait; the kernels this
 * file launches are not taken for the program's (tls).
 *
 * A bridge may be held (core/bridge.h, "Held steps"): then the launches of the
 * thread whose wait queued it (on that GPU slot) do not release it, and that
 * thread's next step queues behind it until its wait (on any GPU) or another
 * release (or the linger ends). Whether the next bridge is held is learnt from the steps
 * that began while their bridge was on, timed here from the return of the
 * wait before each to its own wait's return. A held step's bridges are
 * chained (core/bridge.h, "Held steps chained"): at the return of a kernel
 * launch call of the held thread (the API callback, where launching is
 * allowed), a new held bridge is queued behind it and the last released; the
 * launch calls are followed (shimyield.c) once held steps were seen that a
 * chain would have shortened, or from the start (NVTASKSET_BRIDGE_REARM=1).
 *
 * A small copy to the host on a stream (core/bridge.h, NVT_BRIDGE_COPY_MAX)
 * is done by a kernel of the same module (nvt_copy), launched on the copy's
 * stream at the copy's entry as the program's own launch, and the driver's
 * copy is then made one of 0 bytes (an argument changed on entry is the one
 * the call uses): on the H100 a copy engine's copy between two steps let the
 * GPU switch to the lower context until it ended, the kernel's does not
 * (docs/hardware-facts.md). Anything that fails
 * turns the bridge off for the process, said once: the program runs as
 * without it.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/bridge.h"
#include "os/clock.h"
#include "os/proc.h"
#include "shimbridge.h"
#include "shimbridgeptx.h"
#include "shimdriver.h"
#include "shimslot.h"
#include "shimstate.h"

#define PAGE 4096
#define NVT_BRIDGE_REMAKES 4 /* context_went's bound: a driver that refuses for another reason */

/* NVTASKSET_BRIDGE_TRACE: each bridge's record (the kernel writes it as it ends) and each copy
 * by a kernel's start on the GPU, in the words' mapping after its first page, the last
 * TRACE_N of each; the host's times beside them (struct trace); written at exit. */
#define TRACE_N 16384
#define TRACE_REC_OFF PAGE
#define TRACE_COPY_OFF (TRACE_REC_OFF + TRACE_N * sizeof(struct trace_rec))
#define TRACE_BYTES (TRACE_COPY_OFF + TRACE_N * sizeof(uint64_t))
/* Untraced, a context synchronisation's bridge writes its record in the words' first page, the
 * last CTX_RECS of them from CTX_REC_OFF: whether it ran to its cap before the wait returned
 * (ctx_returned). */
#define CTX_REC_OFF 2048
#define CTX_RECS 16
_Static_assert(CTX_REC_OFF >= 64 && CTX_REC_OFF + CTX_RECS * sizeof(struct trace_rec) <= PAGE,
	       "the records of context synchronisations' bridges fit the words' page after the words");
/* The host's side (CLOCK_MONOTONIC ns, 0: not yet), by seq and by copy, modulo TRACE_N. */
struct trace {
	struct {
		uint32_t seq;
		uint64_t wait, ret, rel; /* the wait began (the bridge queued), returned, first release */
		uint64_t call;           /* the first call after a replay that returned */
		uint32_t held;           /* 1: held (core/bridge.h, "Held steps") */
	} b[TRACE_N];
	uint64_t copy[TRACE_N]; /* each copy by a kernel queued */
	uint64_t copies;
};

/* The bridge of one GPU slot, made in one context. */
struct bslot {
	void *ctx;           /* NULL: not made (yet, or since its context went) */
	unsigned long long ctx_id; /* ctx's id (cuCtxGetId; 0: the driver has none) */
	int suspect;         /* its GPU's primary context went since (reset, last release):
			      * shim_ctx_gone tells whether ctx went with it */
	CUfunction fn, nop, copy;
	CUstream stream;
	struct trace *tr;    /* NVTASKSET_BRIDGE_TRACE's host side; NULL: not traced */
	/* [0]: the last wait that returned, [1]: released up to, [3]: graph replays being queued
	 * (the kernel goes on while there are any), [4]: the last wait whose step's replay was
	 * queued, [5]: 1 from a replay's return to the host's next call (a replay's work may reach
	 * the GPU late), [6]: the launches of held bridges' threads (each restarts the held
	 * bridge's linger), [7]: the bridges up to this seq end once released, without their
	 * margin (the next bridge is queued behind them: launch_capped). A page of the shim's own, never
	 * unmapped, registered with each context the bridge is made in: the host's stores stay
	 * harmless once a context is gone. */
	volatile uint32_t *w;
	CUdeviceptr dw;
	uint32_t seq;        /* the last wait bridged */
	uint64_t ret_ns;     /* when a wait last returned; 0: none since the last launch */
	/* struct nvt_bridge_learn, word by word (relaxed): two threads that each took a ret_ns may
	 * learn at once and a wait read it meanwhile; a mixed copy still gives a linger of the
	 * ranges' bounds, or 0. */
	uint32_t share[NVT_BRIDGE_GAPS], soon_pm, waits;
	uint32_t replayed;   /* a replay was queued since the last wait */
	/* w[5] holds a token, a count of the replays queued (never 0), so that a clear by
	 * compare-and-swap takes only the one it means; ctx_kept: the token a context
	 * synchronisation's wait kept for its bridge (under b.lock), which ctx_bridge_queue clears
	 * once that bridge is queued. */
	uint32_t replay_tok, ctx_kept;
	uint32_t replay_pm;  /* nvt_bridge_replays' average (under b.lock) */
	uint32_t replay_now; /* what it said for the last bridge (shim_bridge_extend's; under b.lock) */
	/* Held steps (core/bridge.h): held, the seq of the last bridge if it is held (0: not);
	 * learns, that seq if its step may be learnt from; linger_ns, that bridge's linger;
	 * measured, the seq of the last bridge whose step's first launch came while it was on
	 * (that step is measured); hold, what measured steps taught (under b.lock). */
	uint32_t held, learns, measured;
	uint64_t linger_ns;
	struct nvt_bridge_hold hold;
	/* Held steps chained (core/bridge.h): chain, the seq of the bridge whose wait began the
	 * chain (its thread's tls.owns; every bridge a wait queues begins one); chain_ret_ns,
	 * when that wait returned (or the chain began at a request's first launch); armed_ns,
	 * when its last bridge was queued or its wait returned (a request's chain: 150 us on, its
	 * switch-in). Written by the chain's thread. */
	uint32_t chain;
	uint64_t chain_ret_ns, armed_ns;
	uint32_t held_at; /* w[6] when the last held bridge was queued */
	/* nvt_bridge_chain_seen's (under b.lock, by the owner of the last held bridge at its next
	 * wait) */
	struct nvt_bridge_chain seen;
};

/* Read by the launch path (shimbridge.h). */
int shim_bridge_on;

/* NVTASKSET_BRIDGE_DEBUG: what the waits did, said at exit (relaxed counters, the wait path's). */
#define GAP_BUCKETS 6
static const uint64_t gap_us[GAP_BUCKETS - 1] = {50, 100, 300, 1000, 10000};
static struct {
	int on;
	const char *trace;          /* NVTASKSET_BRIDGE_TRACE's path (trace_path); NULL: none */
	uint64_t waits, bridged, unarmed, short_linger, by_kernel, replays, held;
	uint64_t rearmed, chains;   /* held bridges queued behind a launch: in a step, at a request's start */
	uint64_t ctx_bridged;       /* context synchronisations' bridges ctx_bridger queued */
	uint64_t ctx_late[GAP_BUCKETS]; /* ... from the wait's start to the launch's return: under
				      * each of gap_us, more */
	uint64_t ctx_moved;         /* ... times the thread moved off the waiting thread's CPU */
	uint64_t ctx_on_waiter;     /* ... queued on the CPU the waiting thread ran on at the hand */
	uint64_t measured[2];       /* measured steps: released, held */
	uint64_t gaps[GAP_BUCKETS]; /* wait return to the next launch: under each of gap_us, more */
	uint64_t after_wait;        /* a wait after a wait */
	uint64_t made_full;         /* tentative polled waits made full (shim_bridge_extend) */
	uint64_t followed_at;       /* waits when the launch calls began to be followed */
	int inherited;              /* followed since before a fork */
} dbg;

static void count(uint64_t *c)
{
	if (dbg.on)
		__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static char trace_path[4096];

static struct {
	pthread_mutex_t lock; /* making a slot's objects, launching its bridges */
	int broken;           /* something failed: off for good */
	int hold_mode;        /* enum nvt_bridge_hold_mode (NVTASKSET_BRIDGE_HOLD) */
	int remade;           /* bridges made again after their context went unseen (context_went) */
	int chain_mode;       /* enum nvt_bridge_chain_mode (NVTASKSET_BRIDGE_REARM) */
	int following;        /* 1: launch calls followed, held steps chained */
	uint32_t chain_due;   /* 1: the held steps seen say the launch calls are to be followed */
	struct bslot s[NVT_MAX_GPUS];
} b = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The wait this thread bridged (its seq, 0: none), and whether it launches the bridge; owns,
 * on slot owns_slot: the bridge this thread's last wait queued (0: none; its own launches do not
 * release it, or the bridges chained after it, while they are held); ret_ns: when its last wait
 * returned; measuring: the wait now in progress ends a measured step (held: 2, released: 1, not
 * measured: 0) on slot measure_slot, which began at step_ns; last_ns: its last launch call of
 * a held chain (shim_bridge_launch_done); rel_seq: the bridge its last launch released (another
 * thread's chain may have queued a later one before that launch's kernel). */
static __thread struct {
	uint32_t seq, owns;
	int slot, owns_slot;
	int launching;
	int measuring, measure_slot;
	uint64_t ret_ns, step_ns, last_ns;
	uint32_t rel_seq;
	int ctx_wait; /* the wait bridged (seq) is a context synchronisation's */
	pid_t tid;    /* the thread's id, once asked (0: not yet) */
} tls __attribute__((tls_model("initial-exec")));

static pid_t own_tid(void)
{
	if (!tls.tid)
		tls.tid = (pid_t)syscall(SYS_gettid);
	return tls.tid;
}

static void turn_off(const char *what, int rc)
{
	b.broken = 1;
	if (shim_first_time(WARN_BRIDGE))
		shim_warn("%s failed (error %d): this task's synchronised steps are not bridged, and "
			  "each pays the GPU's switches to lower tasks and back",
			  what, rc);
}

/* The words' mapping: a page, or with the trace the records' room after it. */
static size_t map_bytes(void)
{
	return dbg.trace ? TRACE_BYTES : PAGE;
}

/* Makes the slot's objects in ctx (under b.lock). Returns 0, or -1 (the bridge turned off). */
static int build(struct bslot *s, void *ctx)
{
	CUmodule module;
	void *host;
	int rc;

	if (!shim_cu.module_load || !shim_cu.module_function || !shim_cu.stream_create ||
	    !shim_cu.launch_kernel || !shim_cu.host_register || !shim_cu.host_device_ptr) {
		turn_off("finding the driver's module and launch calls", -1);
		return -1;
	}
	if ((rc = shim_cu.module_load(&module, nvt_bridge_ptx))) {
		turn_off("loading the bridge kernel", rc);
		return -1;
	}
	if ((rc = shim_cu.module_function(&s->fn, module, "nvt_bridge")) ||
	    (rc = shim_cu.module_function(&s->nop, module, "nvt_bridge_nop")) ||
	    (rc = shim_cu.module_function(&s->copy, module, "nvt_copy"))) {
		turn_off("finding the bridge kernel", rc);
		return -1;
	}
	if ((rc = shim_cu.stream_create(&s->stream, NVT_CU_STREAM_NON_BLOCKING))) {
		turn_off("making the bridge's stream", rc);
		return -1;
	}
	if (dbg.trace && !s->tr && !(s->tr = calloc(1, sizeof(*s->tr)))) {
		turn_off("making the bridge's trace", -1);
		return -1;
	}
	host = (void *)s->w;
	if (!host) {
		host = mmap(NULL, map_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (host == MAP_FAILED) {
			turn_off("mapping the bridge's words", -1);
			return -1;
		}
	}
	__atomic_store_n(&s->w, (volatile uint32_t *)host, __ATOMIC_RELEASE);
	/* Registered already: by a context of this process that is still there (portable), after
	 * a reset of another GPU's. */
	rc = shim_cu.host_register(host, map_bytes(), NVT_CU_MEMHOSTREGISTER_PORTABLE | NVT_CU_MEMHOSTREGISTER_DEVICEMAP);
	if ((rc && rc != NVT_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) ||
	    (rc = shim_cu.host_device_ptr(&s->dw, host, 0))) {
		turn_off("mapping the bridge's words", rc);
		return -1;
	}
	s->ctx = ctx;
	s->ctx_id = shim_ctx_id(ctx);
	return 0;
}

/* The slot's objects in ctx (under b.lock). Returns 0 if it can bridge there. Where the context
 * they were made in went (shim_ctx_gone) they are made again, with this thread's stream capture
 * relaxed (another thread capturing a graph in the global mode is not disturbed by the module
 * load and the registration: on an H100 a registration there failed, 900, and ended that
 * capture). */
static int made(struct bslot *s, void *ctx)
{
	int mode = NVT_CU_STREAM_CAPTURE_MODE_RELAXED, rc;

	/* (without ids, a created context's bridge so dropped stays behind in it, unused: its
	 * module and stream) */
	if (s->ctx && shim_ctx_gone(s->ctx, s->ctx_id, &s->suspect, ctx))
		s->ctx = NULL;
	if (s->ctx)
		return s->ctx == ctx ? 0 : -1; /* one context a GPU: a second one waits unbridged */
	s->suspect = 0;
	if (!shim_cu.capture_mode || shim_cu.capture_mode(&mode))
		return build(s, ctx);
	rc = build(s, ctx);
	shim_cu.capture_mode(&mode);
	return rc;
}

void shim_bridge_setup(uint8_t prio, uint32_t yield)
{
	int why = nvt_bridge_wanted(prio, yield, secure_getenv(NVT_ENV_CUDA_CONNECTIONS),
				    secure_getenv(NVT_ENV_BRIDGE));
	if (why == NVT_BRIDGE_BAD_WORD && shim_first_time(WARN_BRIDGE))
		shim_warn("%s is neither 0 nor 1: its steps are bridged", NVT_ENV_BRIDGE);
	if (why == NVT_BRIDGE_CONNECTIONS && shim_first_time(WARN_BRIDGE))
		shim_warn("%s=%s: this task's synchronised steps are not bridged (that needs 1), so each "
			  "pays the GPU's switches to lower tasks and back; %s=0 says this is wanted",
			  NVT_ENV_CUDA_CONNECTIONS, secure_getenv(NVT_ENV_CUDA_CONNECTIONS) ?: "(unset)",
			  NVT_ENV_BRIDGE);
	shim_bridge_on = nvt_bridge_on(why);
	const char *hold = secure_getenv(NVT_ENV_BRIDGE_HOLD);
	b.hold_mode = nvt_bridge_hold_mode(hold);
	if (b.hold_mode < 0) {
		if (shim_bridge_on)
			shim_warn("%s is neither 0 nor 1: whether its steps hold their bridge is learnt",
				  NVT_ENV_BRIDGE_HOLD);
		b.hold_mode = NVT_BRIDGE_HOLD_LEARN;
	}
	const char *rearm = secure_getenv(NVT_ENV_BRIDGE_REARM);
	b.chain_mode = nvt_bridge_chain_mode(rearm);
	if (b.chain_mode < 0) {
		if (shim_bridge_on)
			shim_warn("%s is neither 0 nor 1: held steps are chained once seen", NVT_ENV_BRIDGE_REARM);
		b.chain_mode = NVT_BRIDGE_CHAIN_SEEN;
	}
	b.following = b.chain_mode == NVT_BRIDGE_CHAIN_ALWAYS;
	const char *debug = secure_getenv(NVT_ENV_BRIDGE_DEBUG);
	dbg.on = debug && *debug && strcmp(debug, "0") != 0;
	const char *trace = secure_getenv(NVT_ENV_BRIDGE_TRACE);
	dbg.trace = NULL;
	if (trace && *trace) {
		/* A copy: the program may change its environment before the trace is written. */
		if (strlen(trace) + 24 > sizeof(trace_path))
			shim_warn("%s is too long: no trace", NVT_ENV_BRIDGE_TRACE);
		else
			dbg.trace = strcpy(trace_path, trace);
	}
}

/* Stores v in *word unless it holds a later one already (seq order, wrapping). */
static void store_max(volatile uint32_t *word, uint32_t v)
{
	uint32_t cur = __atomic_load_n(word, __ATOMIC_RELAXED);

	while ((int32_t)(v - cur) > 0 &&
	       !__atomic_compare_exchange_n(word, &cur, v, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* The trace's time t for the host's side of seq (its first: 0 until then), if it is seq's. */
static void trace_time(struct trace *tr, uint32_t seq, size_t field)
{
	uint64_t zero = 0, *t;

	if (!tr || !seq || __atomic_load_n(&tr->b[seq % TRACE_N].seq, __ATOMIC_RELAXED) != seq)
		return;
	t = field == 0	 ? &tr->b[seq % TRACE_N].ret
	    : field == 1 ? &tr->b[seq % TRACE_N].rel
			 : &tr->b[seq % TRACE_N].call;
	if (!__atomic_load_n(t, __ATOMIC_RELAXED))
		__atomic_compare_exchange_n(t, &zero, nvt_clock_ns(), 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Releases slot g's bridge; how: REL_NOW, it may end without waiting for its step's replay (a
 * replay was queued, or what comes next must not wait behind it); unless REL_KEEP, a call of
 * the host's (a replay's work waits no longer for one: w[5], this slot's); REL_CALL, only that
 * (a launch of a held bridge's own thread). */
#define REL_NOW 1
#define REL_KEEP 2
#define REL_CALL 4
static uint32_t release(int g, int how)
{
	volatile uint32_t *w = __atomic_load_n(&b.s[g].w, __ATOMIC_ACQUIRE);
	uint32_t seq;

	/* A bridge's own kernels do not release it. */
	if (!w || tls.launching)
		return 0;
	seq = __atomic_load_n(&b.s[g].seq, __ATOMIC_ACQUIRE);
	if (!(how & REL_KEEP) && __atomic_load_n(&w[5], __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&w[5], 0, __ATOMIC_RELEASE) && __builtin_expect(dbg.trace != NULL, 0))
		trace_time(__atomic_load_n(&b.s[g].tr, __ATOMIC_ACQUIRE), seq, 2);
	if (how & REL_CALL)
		return 0;
	store_max(&w[1], seq);
	if (how & REL_NOW)
		store_max(&w[4], seq);
	if (__builtin_expect(dbg.trace != NULL, 0))
		trace_time(__atomic_load_n(&b.s[g].tr, __ATOMIC_ACQUIRE), seq, 1);
	return seq;
}

int shim_bridge_release(int g)
{
	uint32_t seq, held;

	if (tls.launching)
		return 1; /* a bridge's own kernel */
	/* A held bridge goes on through its own thread's step (core/bridge.h, "Held steps"). The
	 * seq first (acquire): the chain and held read after it are at least as new as the bridge
	 * it names (a later wait's bridge is not taken for this thread's). */
	seq = __atomic_load_n(&b.s[g].seq, __ATOMIC_ACQUIRE);
	held = __atomic_load_n(&b.s[g].held, __ATOMIC_RELAXED);

	if (held && held == seq && tls.owns && tls.owns == __atomic_load_n(&b.s[g].chain, __ATOMIC_RELAXED) &&
	    tls.owns_slot == g) {
		/* Its step goes on: its linger starts again (the kernel looks for a change; a
		 * released one does not). */
		volatile uint32_t *w = __atomic_load_n(&b.s[g].w, __ATOMIC_ACQUIRE);
		if (w && !tls.launching && (int32_t)(__atomic_load_n(&w[1], __ATOMIC_RELAXED) - seq) < 0)
			__atomic_add_fetch(&w[6], 1, __ATOMIC_RELEASE);
		release(g, REL_CALL);
	} else {
		tls.rel_seq = release(g, 0);
	}
	return 0;
}

void shim_bridge_release_now(int g)
{
	release(g, REL_NOW);
}

void shim_bridge_graph_launch(int g, int enter, int queued)
{
	volatile uint32_t *w = __atomic_load_n(&b.s[g].w, __ATOMIC_ACQUIRE);

	if (!w || tls.launching)
		return;
	if (enter) {
		__atomic_add_fetch(&w[3], 1, __ATOMIC_RELEASE);
		if (__atomic_load_n(&w[5], __ATOMIC_RELAXED)) /* a call: the last replay's work is handed over */
			release(g, 0);
		return;
	}
	/* Its work may reach the GPU tens of us later, later when the host is slow (PyTorch's
	 * replays, H200, docs/hardware-facts.md): the bridge goes on until the host's next call
	 * (a margin after it), at most NVT_BRIDGE_LATE_US after the kernel sees this. Set before
	 * the replays in flight go down, so that the kernel always sees one of them. */
	if (queued) {
		uint32_t tok = __atomic_add_fetch(&b.s[g].replay_tok, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&w[5], tok ? tok : __atomic_add_fetch(&b.s[g].replay_tok, 1, __ATOMIC_RELAXED),
				 __ATOMIC_RELEASE);
	}
	/* (never below 0: a replay that began before the words existed) */
	uint32_t cur = __atomic_load_n(&w[3], __ATOMIC_RELAXED);
	while (cur && !__atomic_compare_exchange_n(&w[3], &cur, cur - 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	if (queued) {
		__atomic_store_n(&b.s[g].replayed, 1, __ATOMIC_RELAXED);
		count(&dbg.replays);
	}
	release(g, REL_NOW | (queued ? REL_KEEP : 0));
}

/* What the waits of slot s taught so far. */
static struct nvt_bridge_learn learnt(const struct bslot *s)
{
	struct nvt_bridge_learn l;

	for (int i = 0; i < NVT_BRIDGE_GAPS; i++)
		l.share[i] = __atomic_load_n(&s->share[i], __ATOMIC_RELAXED);
	l.soon_pm = __atomic_load_n(&s->soon_pm, __ATOMIC_RELAXED);
	l.waits = __atomic_load_n(&s->waits, __ATOMIC_RELAXED);
	return l;
}

/* A launch (or a wait) came gap_ns after a wait returned. */
static void learn(struct bslot *s, uint64_t gap_ns)
{
	struct nvt_bridge_learn l = learnt(s);

	nvt_bridge_gap(&l, gap_ns);
	if (dbg.on) {
		int i = 0;
		if (gap_ns == UINT64_MAX)
			count(&dbg.after_wait);
		else {
			while (i < GAP_BUCKETS - 1 && gap_ns >= gap_us[i] * 1000)
				i++;
			count(&dbg.gaps[i]);
		}
	}
	for (int i = 0; i < NVT_BRIDGE_GAPS; i++)
		__atomic_store_n(&s->share[i], l.share[i], __ATOMIC_RELAXED);
	__atomic_store_n(&s->soon_pm, l.soon_pm, __ATOMIC_RELAXED);
	__atomic_store_n(&s->waits, l.waits, __ATOMIC_RELAXED);
}

/* A wait begins on slot g (its last bridge released): it ends a measured step (core/bridge.h,
 * "Held steps") if this thread's last wait queued the last bridge, may learn from it, and the
 * step began while that bridge was on; the step is timed from that wait's return. */
static void measure_begin(struct bslot *s, int g)
{
	uint32_t last = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

	tls.measuring = 0;
	if (last && tls.owns && tls.owns == __atomic_load_n(&s->chain, __ATOMIC_RELAXED) && tls.owns_slot == g &&
	    tls.ret_ns &&
	    __atomic_load_n(&s->measured, __ATOMIC_RELAXED) == last &&
	    __atomic_load_n(&s->learns, __ATOMIC_RELAXED) == last) {
		tls.measuring = __atomic_load_n(&s->held, __ATOMIC_RELAXED) == last ? 2 : 1;
		tls.measure_slot = g;
		tls.step_ns = tls.ret_ns;
	}
	/* This thread owns a bridge again only if this wait queues one. */
	tls.owns = 0;
}

/* A wait begins on slot g: the step before it, if this thread's last wait queued the last
 * bridge and it was held and a launch came since that wait returned, counts toward following the
 * launch calls (held steps chained) where a chain would have shortened it. */
static void chain_seen(struct bslot *s, int g)
{
	uint32_t last = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	volatile uint32_t *w = __atomic_load_n(&s->w, __ATOMIC_ACQUIRE);
	uint64_t now;

	if (!last || !w || tls.owns != last || tls.owns_slot != g || !tls.ret_ns ||
	    __atomic_load_n(&s->held, __ATOMIC_RELAXED) != last || __atomic_load_n(&s->ret_ns, __ATOMIC_RELAXED))
		return;
	now = nvt_clock_ns();
	int step = nvt_bridge_chain_step(__atomic_load_n(&w[6], __ATOMIC_RELAXED) - __atomic_load_n(&s->held_at, __ATOMIC_RELAXED),
					 now > tls.ret_ns ? now - tls.ret_ns : 0);
	/* (statistics: dropped while another thread holds the lock) */
	if (pthread_mutex_trylock(&b.lock))
		return;
	if (nvt_bridge_chain_seen(&s->seen, step))
		__atomic_store_n(&b.chain_due, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&b.lock);
}

void shim_bridge_chains_not_followed(void)
{
	b.chain_mode = NVT_BRIDGE_CHAIN_NEVER;
	__atomic_store_n(&b.following, 0, __ATOMIC_RELAXED);
}

int shim_bridge_chains_due(void)
{
	if (b.chain_mode != NVT_BRIDGE_CHAIN_SEEN || !shim_bridge_on || b.broken ||
	    !__atomic_load_n(&b.chain_due, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&b.following, __ATOMIC_RELAXED))
		return 0;
	/* (once: the first thread to see it) */
	if (__atomic_exchange_n(&b.following, 1, __ATOMIC_RELAXED))
		return 0;
	dbg.followed_at = __atomic_load_n(&dbg.waits, __ATOMIC_RELAXED);
	return 1;
}

/* The trace's slot of bridge seq (held or not) ready before the seq is published (a release
 * fills it); returns where the kernel writes its record. Under b.lock. */
static CUdeviceptr trace_begin(struct bslot *s, uint32_t seq, int held)
{
	struct trace_rec *r = (struct trace_rec *)((char *)s->w + TRACE_REC_OFF) + seq % TRACE_N;

	r->seq = 0;
	s->tr->b[seq % TRACE_N].ret = s->tr->b[seq % TRACE_N].rel = s->tr->b[seq % TRACE_N].call = 0;
	s->tr->b[seq % TRACE_N].wait = nvt_clock_ns();
	s->tr->b[seq % TRACE_N].held = (uint32_t)held;
	__atomic_store_n(&s->tr->b[seq % TRACE_N].seq, seq, __ATOMIC_RELEASE);
	return s->dw + TRACE_REC_OFF + (seq % TRACE_N) * sizeof(struct trace_rec);
}

/* Where bridge seq of slot s writes its record as it ends (trace_begin's, else the ring of context
 * synchronisations' bridges): the host's address. */
static struct trace_rec *rec_of(const struct bslot *s, uint32_t seq)
{
	if (s->tr)
		return (struct trace_rec *)((char *)s->w + TRACE_REC_OFF) + seq % TRACE_N;
	return (struct trace_rec *)((char *)s->w + CTX_REC_OFF) + seq % CTX_RECS;
}

/* A context synchronisation's bridge seq of slot s writes its record in the ring (untraced):
 * cleared, and the GPU's address. */
static CUdeviceptr ctx_rec_begin(struct bslot *s, uint32_t seq)
{
	__atomic_store_n(&rec_of(s, seq)->seq, 0, __ATOMIC_RELAXED);
	return s->dw + CTX_REC_OFF + (seq % CTX_RECS) * sizeof(struct trace_rec);
}

/* A launch of slot s's bridge answered rc: if that says the context it was made in is gone (a
 * primary context's last release the shim did not see: its handles answer 400 on an H100,
 * docs/hardware-facts.md), it is made again at the next wait, NVT_BRIDGE_REMAKES times at most
 * (under b.lock). Returns 1 if so. */
static int context_went(struct bslot *s, int rc)
{
	if ((rc != NVT_CUDA_ERROR_INVALID_HANDLE && rc != NVT_CUDA_ERROR_CONTEXT_IS_DESTROYED &&
	     rc != NVT_CUDA_ERROR_INVALID_CONTEXT) ||
	    b.remade >= NVT_BRIDGE_REMAKES)
		return 0;
	b.remade++;
	s->ctx = NULL;
	return 1;
}

static int launch_capped(struct bslot *s, uint32_t seq, uint64_t cap, uint64_t linger, uint64_t hspan,
			 uint32_t replay, CUdeviceptr rec);

/* Queues bridge seq of slot s and the empty kernel behind it (under b.lock; tls.launching set):
 * ends linger after its wait returned (or the held thread's launches last moved w[6]), at most
 * hspan after it saw the return; replay: it waits for its step's replay; rec: its trace record
 * (0: none). Returns 0; 1 if only the bridge was queued, -1 if not even it (the bridge then
 * turned off). */
static int launch_bridge(struct bslot *s, uint32_t seq, uint64_t linger, uint64_t hspan, uint32_t replay,
			 CUdeviceptr rec)
{
	return launch_capped(s, seq, (uint64_t)NVT_BRIDGE_CAP_MS * 1000000, linger, hspan, replay, rec);
}

/* As launch_bridge, the bridge's kernel ending cap ns after its start at most. */
static int launch_capped(struct bslot *s, uint32_t seq, uint64_t cap, uint64_t linger, uint64_t hspan,
			 uint32_t replay, CUdeviceptr rec)
{
	uint64_t margin = (uint64_t)NVT_BRIDGE_MARGIN_US * 1000,
		 span = (uint64_t)NVT_BRIDGE_SPAN_US * 1000, late = (uint64_t)NVT_BRIDGE_LATE_US * 1000;
	void *args[10] = {&s->dw, &seq, &cap, &linger, &margin, &span, &replay, &rec, &late, &hspan};
	int rc = shim_cu.launch_kernel(s->fn, 1, 1, 1, 1, 1, 1, 0, s->stream, args, NULL);

	if (rc) {
		if (!context_went(s, rc))
			turn_off("launching the bridge", rc);
		return -1;
	}
	/* Without the empty kernel behind it the bridge alone is switched out. */
	if ((rc = shim_cu.launch_kernel(s->nop, 1, 1, 1, 1, 1, 1, 0, s->stream, NULL, NULL))) {
		turn_off("launching the bridge", rc);
		return 1;
	}
	/* Queued: the bridges before it on this stream have it and its empty kernel behind them,
	 * work the GPU sees, and need no margin after their release any more. */
	store_max(&s->w[7], seq - 1);
	return 0;
}

/* A wait on slot g begins: this thread's held bridge on another GPU (core/bridge.h, "Held steps")
 * ends, as at its own wait. Its step there is queued (the host waits now) and runs while the
 * host waits here: held, it would wait for this wait and the host's next call on that GPU (a
 * program that runs one step on two GPUs and waits on each in turn). */
static void release_held_elsewhere(int g)
{
	int o = tls.owns_slot;
	uint32_t seq;

	if (!tls.owns || o == g || o < 0 || o >= NVT_MAX_GPUS)
		return;
	seq = __atomic_load_n(&b.s[o].seq, __ATOMIC_ACQUIRE);
	if (seq && __atomic_load_n(&b.s[o].held, __ATOMIC_RELAXED) == seq &&
	    tls.owns == __atomic_load_n(&b.s[o].chain, __ATOMIC_RELAXED))
		release(o, REL_NOW);
}

/* A context synchronisation's bridge handed over: its context, the kernel's words, when, and the
 * waiting thread (its id, and the CPU it ran on then). */
struct ctx_hand {
	void *ctx;
	uint32_t seq, replay;
	uint64_t linger, hspan, hand_ns;
	CUdeviceptr rec;
	int cpu;
	pid_t tid;
};

/* Context synchronisations bridged (core/bridge.h, "Context synchronisations"): their bridges are
 * queued by a thread of the shim's own (ctx_bridger), which a wait's start hands its bridge to;
 * started at the first such wait. Lock order: b.lock, then cb.lock. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int started;         /* the thread runs (a forked child starts its own) */
	int busy;            /* it is inside the driver: the program's exit waits for it */
	int quit;            /* the program exits: no more bridges */
	int off;             /* the thread could not start: not bridged for good */
	int few_cpus;        /* the waiting thread and the thread may run on too few CPUs
			      * (core/bridge.h): not bridged while so (ctx_cpus_enough) */
	pid_t tid;           /* the thread's id, once it runs (0: not yet) */
	int cpus_told;       /* they were read (at the first such wait; a forked child's again) */
	uint32_t few_waits;  /* such waits since they were last read, too few */
	int at_exit;         /* ctx_bridger_at_exit registered (once for the parent and its children) */
	struct nvt_bridge_ctx ctl; /* whether they are bridged now (under cb.lock) */
	int ctl_off;         /* ctl.off, read without the lock (relaxed) */
	/* Each slot's bridge handed over (h.seq 0: none); and the last one the thread queued there,
	 * and when (for the wait's return). Waits on two GPUs at once (two threads, or one in turn)
	 * each get theirs. */
	struct {
		struct ctx_hand h;
		uint32_t queued_seq;
		/* The GPU's clock told from the host's (core/bridge.h) by this slot's context
		 * synchronisations' bridges: when each was queued (q_ns, just before) and its wait
		 * returned (ret_ns), by seq in the records' ring; the last one's seq. */
		struct nvt_bridge_clock clock;
		uint32_t last_seq, ret_seq[CTX_RECS], q_seq[CTX_RECS];
		uint32_t sampled[CTX_RECS]; /* each bridge's record read once for the clock */
		uint64_t ret_ns[CTX_RECS], q_ns[CTX_RECS];
	} job[NVT_MAX_GPUS];
	int pending; /* slots whose seq is not 0 */
	/* Each slot's last context synchronisation whose thread left the shim's callback (its
	 * bridge's seq; the driver takes the wait's measure after), and when. */
	uint32_t left[NVT_MAX_GPUS];
	uint64_t left_ns[NVT_MAX_GPUS];
} cb = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};
#define CTX_EXIT_WAIT_MS 1000

/* What program_cpus gathers, thread by thread. */
struct thread_cpus {
	cpu_set_t *cpus;
	pid_t but;
	int n;
};

static int thread_cpus_one(pid_t tid, void *arg)
{
	struct thread_cpus *t = arg;
	cpu_set_t one;

	if (tid != t->but && sched_getaffinity(tid, sizeof(one), &one) == 0) {
		CPU_OR(t->cpus, t->cpus, &one);
		t->n++;
	}
	return 0;
}

/* Into cpus, the CPUs the program's threads may run on now, all but the shim's thread (but):
 * a waiting thread pinned to one CPU beside others that are not is bridged from theirs, a
 * program whose threads are all on one CPU (taskset -a -p, or threads that inherited a pin) is
 * not. Returns how many threads were read, or -1 (no /proc/self/task). */
static int program_cpus(cpu_set_t *cpus, pid_t but)
{
	struct thread_cpus t = {cpus, but, 0};

	CPU_ZERO(cpus);
	return nvt_proc_each_in("/proc/self/task", thread_cpus_one, &t) < 0 ? -1 : t.n;
}

/* One turn of a spin loop: the CPU told so where it has a word for it. */
static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* The shim's thread runs on the CPU the waiting thread ran on at its hand (h): it moves to the
 * other CPUs it or that thread may run on (their affinities now, one set from outside included),
 * or, where there are none, the task's context synchronisations are not bridged until the
 * waiting thread's CPUs are read again (ctx_cpus_enough; core/bridge.h). Returns 0 (moved), or
 * -1: not this bridge (no other CPU, or the move failed: it would be queued on the waiting
 * thread's). */
static int ctx_move_away(const struct ctx_hand *h)
{
	cpu_set_t waiter, away;

	if (h->cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(away), &away))
		return -1;
	if (sched_getaffinity(h->tid, sizeof(waiter), &waiter) == 0)
		CPU_OR(&away, &away, &waiter);
	CPU_CLR(h->cpu, &away);
	if (!CPU_COUNT(&away)) {
		pthread_mutex_lock(&cb.lock);
		__atomic_store_n(&cb.few_cpus, 1, __ATOMIC_RELAXED);
		cb.few_waits = 0;
		pthread_mutex_unlock(&cb.lock);
		if (dbg.on)
			shim_note("bridge: context synchronisations not bridged from now on: the task's "
				  "threads may run on one CPU only");
		return -1;
	}
	if (sched_setaffinity(0, sizeof(away), &away))
		return -1;
	count(&dbg.ctx_moved);
	return 0;
}

/* Waits until NVT_BRIDGE_CTX_AFTER_US after the waiting thread left the shim's callback (the
 * driver takes the wait's measure of the work before it then: core/bridge.h) and after the
 * thread moved off that thread's CPU; spins, then sleeps a little each turn (a waiting thread
 * the host keeps from its CPU). Returns 0, or -1: not this bridge (ctx_move_away said so, or the
 * wait never left the callback within NVT_BRIDGE_CTX_CAP_US, or a later wait came). */
static int ctx_wait_measured(int g, const struct ctx_hand *h)
{
	struct timespec nap = {0, 20000};
	uint64_t from = 0, moved = 0, now;
	int looked = 0;

	for (;;) {
		if (!looked && h->cpu >= 0 && sched_getcpu() == h->cpu) {
			looked = 1; /* (once a bridge) */
			if (ctx_move_away(h))
				return -1;
			moved = nvt_clock_ns();
			if (from && from < moved)
				from = moved;
		}
		if (__atomic_load_n(&cb.quit, __ATOMIC_RELAXED))
			return -1;
		now = nvt_clock_ns();
		/* (left only grows: a later wait's leaving says this one's thread left too, or is
		 * about to, its bridge superseded) */
		if (!from && (int32_t)(__atomic_load_n(&cb.left[g], __ATOMIC_ACQUIRE) - h->seq) >= 0) {
			from = __atomic_load_n(&cb.left_ns[g], __ATOMIC_RELAXED);
			from = from > moved ? from : moved;
		}
		if (from && now >= from + (uint64_t)NVT_BRIDGE_CTX_AFTER_US * 1000)
			return 0;
		if (!from && (now - h->hand_ns >= (uint64_t)NVT_BRIDGE_CTX_CAP_US * 1000 ||
			      __atomic_load_n(&b.s[g].seq, __ATOMIC_ACQUIRE) != h->seq))
			return -1;
		if (now - h->hand_ns < (uint64_t)NVT_BRIDGE_CTX_SPIN_US * 1000)
			spin_pause();
		else
			nanosleep(&nap, NULL);
	}
}

/* The handed-over bridge, queued in its context by the thread (h: cb's copied under cb.lock):
 * not if its wait's bridge is not the slot's last any more, or released already (the wait
 * returned and the next launch came: it would only hold that launch back), or its context went,
 * or the thread could not leave the waiting thread's CPU. Then the last bridge, kept for the
 * host's next call (wait_begins), may end. */
static void ctx_bridge_queue(int g, const struct ctx_hand *h)
{
	struct bslot *s = &b.s[g];
	uint32_t seq = h->seq;
	int away = ctx_wait_measured(g, h) == 0;

	pthread_mutex_lock(&b.lock);
	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != seq || !s->w) {
		pthread_mutex_unlock(&b.lock);
		return;
	}
	/* Made current under the lock, once the slot says its context is still there: a context's
	 * destruction begins under it (shim_bridge_context_gone), a primary context's reset or last
	 * release once this section is done (shim_bridge_slots_going); no call may use a context
	 * while or after it is destroyed (cuda.h). (Made current every time: a context at the
	 * address of one that went may be another.) */
	/* Released already (the wait returned, and a launch or a replay came): w[5] is no longer the
	 * one wait_begins kept, but a later replay's. */
	int kept = (int32_t)(__atomic_load_n(&s->w[1], __ATOMIC_RELAXED) - seq) < 0;
	if (away && !b.broken && s->ctx == h->ctx && !s->suspect && kept && shim_cu.ctx_set_current(h->ctx) == 0) {
		tls.launching = 1;
		if (h->cpu >= 0 && sched_getcpu() == h->cpu)
			count(&dbg.ctx_on_waiter);
		uint64_t before = nvt_clock_ns(); /* (the kernel starts after this) */
		if (launch_capped(s, seq, (uint64_t)NVT_BRIDGE_CTX_CAP_US * 1000, h->linger, h->hspan, h->replay,
				  h->rec) >= 0) {
			uint64_t now = nvt_clock_ns();
			pthread_mutex_lock(&cb.lock);
			cb.job[g].queued_seq = seq;
			cb.job[g].q_seq[seq % CTX_RECS] = seq;
			cb.job[g].q_ns[seq % CTX_RECS] = before;
			pthread_mutex_unlock(&cb.lock);
			count(&dbg.ctx_bridged);
			int k = 0;
			while (k < GAP_BUCKETS - 1 && now - h->hand_ns >= gap_us[k] * 1000)
				k++;
			count(&dbg.ctx_late[k]);
		}
		tls.launching = 0;
	}
	/* Only the token kept: released while the bridge was being queued (a slow launch, a busy
	 * host), the host's next replay may have set another since. */
	uint32_t tok = s->ctx_kept;
	if (kept && tok)
		__atomic_compare_exchange_n(&s->w[5], &tok, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&b.lock);
}

static void *ctx_bridger(void *unused)
{
	cpu_set_t cpus;

	(void)unused;
	/* The CPUs of the program's other threads, its starter's among them (program_cpus; the
	 * kernel leaves out those its cpuset does not have; an affinity set on it from outside
	 * within these few calls is replaced). */
	if (program_cpus(&cpus, own_tid()) > 0)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	pthread_mutex_lock(&cb.lock);
	cb.tid = own_tid();
	for (;;) {
		while (!cb.pending && !cb.quit)
			pthread_cond_wait(&cb.wake, &cb.lock);
		if (cb.quit)
			break;
		int g = 0; /* the oldest handed over (pending says there is one) */
		for (int o = 1; o < NVT_MAX_GPUS; o++)
			if (cb.job[o].h.seq && (!cb.job[g].h.seq || cb.job[o].h.hand_ns < cb.job[g].h.hand_ns))
				g = o;
		if (!cb.job[g].h.seq) {
			cb.pending = 0;
			continue;
		}
		struct ctx_hand h = cb.job[g].h;
		cb.job[g].h.seq = 0;
		cb.pending--;
		__atomic_store_n(&cb.busy, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&cb.lock);
		ctx_bridge_queue(g, &h);
		pthread_mutex_lock(&cb.lock);
		__atomic_store_n(&cb.busy, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&cb.lock);
	return NULL;
}

/* At exit (before the libraries' destructors, the driver's among them): the thread queues no more
 * bridges and is out of the driver, or CTX_EXIT_WAIT_MS passed. */
static void ctx_bridger_at_exit(void)
{
	struct timespec ms = {0, 1000000};
	uint64_t until = nvt_clock_ns() + (uint64_t)CTX_EXIT_WAIT_MS * 1000000;

	pthread_mutex_lock(&cb.lock);
	cb.quit = 1;
	pthread_cond_signal(&cb.wake);
	pthread_mutex_unlock(&cb.lock);
	while (__atomic_load_n(&cb.busy, __ATOMIC_ACQUIRE) && nvt_clock_ns() < until)
		nanosleep(&ms, NULL);
}

/* Starts ctx_bridger (under cb.lock), signals blocked there. Returns 0, or -1 (said once). */
static int ctx_bridger_start(void)
{
	pthread_t thread;
	pthread_attr_t attr;
	sigset_t all, old;
	int rc = -1;

	if ((cb.at_exit || atexit(ctx_bridger_at_exit) == 0) && pthread_attr_init(&attr) == 0) {
		cb.at_exit = 1;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&thread, &attr, ctx_bridger, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	if (rc) {
		cb.off = 1;
		if (shim_first_time(WARN_BRIDGE))
			shim_warn("cannot start a thread: this task's context synchronisations are not bridged");
		return -1;
	}
	cb.started = 1;
	return 0;
}

/* Hands bridge seq of slot g, made in ctx, to ctx_bridger (under b.lock). Returns 0 if handed. */
static int ctx_bridge_hand(int g, void *ctx, uint32_t seq, uint64_t linger, uint64_t hspan, uint32_t replay,
			   CUdeviceptr rec)
{
	int rc = -1, cpu = sched_getcpu();
	pid_t tid = own_tid();

	pthread_mutex_lock(&cb.lock);
	if (!cb.off && !cb.quit && (cb.started || ctx_bridger_start() == 0)) {
		/* (one not queued yet on this slot is not the slot's last bridge any more) */
		cb.pending += !cb.job[g].h.seq;
		cb.job[g].h = (struct ctx_hand){.ctx = ctx, .seq = seq, .replay = replay, .linger = linger,
						.hspan = hspan, .hand_ns = nvt_clock_ns(), .rec = rec,
						.cpu = cpu, .tid = tid};
		pthread_cond_signal(&cb.wake);
		rc = 0;
	}
	pthread_mutex_unlock(&cb.lock);
	return rc;
}

/* How many CPUs the waiting thread (the caller) and the shim's thread may run on together (under
 * cb.lock): that thread's affinity once it runs (its moves narrow it; one set on it from outside
 * counts), else those of the program's threads (ctx_bridger starts with them). -1 where the
 * caller's is not read. */
static int ctx_cpus_count(void)
{
	cpu_set_t cpus, other;

	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return -1;
	if (cb.started && cb.tid) {
		if (sched_getaffinity(cb.tid, sizeof(other), &other) == 0)
			CPU_OR(&cpus, &cpus, &other);
	} else if (program_cpus(&other, 0) > 0) {
		CPU_OR(&cpus, &cpus, &other);
	}
	return CPU_COUNT(&cpus);
}

/* A context synchronisation begins: may the waiting thread and the shim's run on enough CPUs
 * (core/bridge.h)? Read at the first such wait, before the bridge's module is made (a task on
 * one CPU never makes it), and while too few, again every NVT_BRIDGE_CTX_RETRY such waits: a
 * program that lets itself run on more later is bridged from then on. */
static int ctx_cpus_enough(void)
{
	int few, was, n;

	if (__atomic_load_n(&cb.cpus_told, __ATOMIC_ACQUIRE) && !__atomic_load_n(&cb.few_cpus, __ATOMIC_RELAXED))
		return 1;
	pthread_mutex_lock(&cb.lock);
	was = cb.few_cpus;
	if (cb.cpus_told && was && ++cb.few_waits < NVT_BRIDGE_CTX_RETRY) {
		pthread_mutex_unlock(&cb.lock);
		return 0;
	}
	cb.few_waits = 0;
	n = ctx_cpus_count();
	few = n >= 0 && !nvt_bridge_ctx_cpus_enough(n);
	__atomic_store_n(&cb.few_cpus, few, __ATOMIC_RELAXED);
	__atomic_store_n(&cb.cpus_told, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cb.lock);
	if (was && !few && dbg.on)
		shim_note("bridge: context synchronisations bridged again: the waiting thread may run on "
			  "more CPUs now");
	return !few;
}

/* A context synchronisation begins: may its bridge be queued (core/bridge.h: stopped for a
 * while after waits that took their bridges in)? */
static int ctx_bridging(void)
{
	int may;

	if (__atomic_load_n(&cb.off, __ATOMIC_RELAXED) || !ctx_cpus_enough())
		return 0;
	if (!__atomic_load_n(&cb.ctl_off, __ATOMIC_RELAXED))
		return 1;
	pthread_mutex_lock(&cb.lock);
	may = nvt_bridge_ctx_may(&cb.ctl);
	__atomic_store_n(&cb.ctl_off, (int)cb.ctl.off, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cb.lock);
	if (may && dbg.on)
		shim_note("bridge: context synchronisations bridged again (a try)");
	return may;
}

/* A wait on slot g begins; by_thread: a context synchronisation, whose bridge ctx_bridger queues
 * (it is not held; cap_us is not its cap); else its bridge's cap is cap_us. */
static void wait_begins(int g, void *ctx, int still_bridged, int by_thread, uint64_t cap_us)
{
	struct bslot *s;
	uint32_t seq;
	uint64_t linger, hspan;
	CUdeviceptr rec = 0;
	uint32_t replay;

	tls.seq = 0;
	tls.measuring = 0;
	if (!shim_bridge_on || b.broken || g < 0 || g >= NVT_MAX_GPUS || tls.launching)
		return;
	/* What was queued behind the last bridge may be what this wait waits for. A context
	 * synchronisation's keeps waiting for the host's next call after a replay (w[5]) until
	 * ctx_bridger has queued the next bridge: a replay's work may reach the GPU late, and
	 * nothing else would be queued meanwhile (PyTorch's steps paid the switches in about half
	 * its steps without). */
	release(g, by_thread ? REL_NOW | REL_KEEP : REL_NOW);
	release_held_elsewhere(g);
	s = &b.s[g];
	if (b.chain_mode == NVT_BRIDGE_CHAIN_SEEN && !__atomic_load_n(&b.following, __ATOMIC_RELAXED))
		chain_seen(s, g);
	measure_begin(s, g);
	/* A wait after a wait, no launch between: not followed soon. */
	if (__atomic_exchange_n(&s->ret_ns, 0, __ATOMIC_RELAXED))
		learn(s, UINT64_MAX);
	if (!still_bridged || (by_thread && !ctx_bridging()))
		return;
	pthread_mutex_lock(&b.lock);
	struct nvt_bridge_learn l = learnt(s);
	count(&dbg.waits);
	linger = (uint64_t)nvt_bridge_linger_us(&l) * 1000;
	int arm = linger != 0;
	replay = (uint32_t)nvt_bridge_replays(&s->replay_pm, __atomic_exchange_n(&s->replayed, 0, __ATOMIC_RELAXED));
	if (!arm)
		count(&dbg.unarmed);
	if (!arm || b.broken || made(s, ctx)) {
		pthread_mutex_unlock(&b.lock);
		return;
	}
	seq = s->seq + 1;
	if (!seq)
		seq = 1;
	int learns = 0, held = by_thread ? 0 : nvt_bridge_hold_next(&s->hold, b.hold_mode, &learns);
	__atomic_store_n(&s->held, held ? seq : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->learns, learns ? seq : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->linger_ns, linger, __ATOMIC_RELAXED);
	__atomic_store_n(&s->held_at, __atomic_load_n(&s->w[6], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	if (s->tr)
		rec = trace_begin(s, seq, held);
	else if (by_thread)
		rec = ctx_rec_begin(s, seq);
	/* Published before the kernels are queued: a launch of another thread meanwhile then
	 * releases this bridge too early (it runs the margin), never leaves it unreleased. */
	__atomic_store_n(&s->chain, seq, __ATOMIC_RELAXED);
	s->replay_now = replay;
	__atomic_store_n(&s->seq, seq, __ATOMIC_RELEASE);
	/* (a held step's launches restart its linger; another's once at most, in a race) */
	hspan = held ? (uint64_t)NVT_BRIDGE_HELD_SPAN_US * 1000 : (uint64_t)NVT_BRIDGE_CAP_MS * 1000000;
	tls.launching = 1;
	/* (queued where only the empty kernel failed: the wait is its bridge's) */
	if (by_thread)
		s->ctx_kept = s->w ? __atomic_load_n(&s->w[5], __ATOMIC_ACQUIRE) : 0;
	if (by_thread ? ctx_bridge_hand(g, ctx, seq, linger, hspan, replay, rec) == 0
		      : launch_capped(s, seq, cap_us * 1000, linger, hspan, replay, rec) >= 0) {
		tls.seq = seq;
		tls.ctx_wait = by_thread;
		tls.owns = seq;
		tls.owns_slot = tls.slot = g;
		count(&dbg.bridged);
		if (held)
			count(&dbg.held);
		if (linger < (uint64_t)NVT_BRIDGE_LINGER_US * 1000)
			count(&dbg.short_linger);
	}
	tls.launching = 0;
	pthread_mutex_unlock(&b.lock);
}

void shim_bridge_wait(int g, void *ctx, int still_bridged)
{
	wait_begins(g, ctx, still_bridged, 0, (uint64_t)NVT_BRIDGE_CAP_MS * 1000);
}

void shim_bridge_wait_capped(int g, void *ctx, int still_bridged, uint64_t cap_us)
{
	wait_begins(g, ctx, still_bridged, 0, cap_us);
}

void shim_bridge_extend(int g, void *ctx)
{
	struct bslot *s;
	uint32_t seq, next;

	if (!shim_bridge_on || b.broken || g < 0 || g >= NVT_MAX_GPUS || tls.launching || tls.ctx_wait)
		return;
	s = &b.s[g];
	pthread_mutex_lock(&b.lock);
	seq = s->seq;
	next = seq + 1 ? seq + 1 : 1;
	if (seq && tls.seq == seq && tls.slot == g && s->ctx == ctx && !s->suspect && s->w &&
	    (int32_t)(__atomic_load_n(&s->w[1], __ATOMIC_RELAXED) - seq) < 0) {
		uint32_t held = __atomic_load_n(&s->held, __ATOMIC_RELAXED) == seq;
		uint64_t hspan = held ? (uint64_t)NVT_BRIDGE_HELD_SPAN_US * 1000 : (uint64_t)NVT_BRIDGE_CAP_MS * 1000000;
		/* The wait's state moves to the next seq, as wait_begins would have set it. */
		__atomic_store_n(&s->held, held ? next : 0, __ATOMIC_RELAXED);
		if (__atomic_load_n(&s->learns, __ATOMIC_RELAXED) == seq)
			__atomic_store_n(&s->learns, next, __ATOMIC_RELAXED);
		CUdeviceptr rec = s->tr ? trace_begin(s, next, (int)held) : 0;
		if (__atomic_load_n(&s->chain, __ATOMIC_RELAXED) == seq)
			__atomic_store_n(&s->chain, next, __ATOMIC_RELAXED);
		__atomic_store_n(&s->seq, next, __ATOMIC_RELEASE);
		tls.launching = 1;
		if (launch_capped(s, next, (uint64_t)NVT_BRIDGE_CAP_MS * 1000000, s->linger_ns, hspan, s->replay_now,
				  rec) >= 0) {
			tls.seq = tls.owns = next;
			count(&dbg.made_full);
		}
		tls.launching = 0;
		/* Another thread's launch that read the old seq released the first only: this one too. */
		if ((int32_t)(__atomic_load_n(&s->w[1], __ATOMIC_ACQUIRE) - seq) >= 0)
			store_max(&s->w[1], next);
	}
	pthread_mutex_unlock(&b.lock);
}

void shim_bridge_ctx_wait(int g, void *ctx, int still_bridged)
{
	if (!shim_bridge_on)
		return;
	/* (it waits for its context's streams only: another GPU's bridge, in another context, goes
	 * on) */
	wait_begins(g, ctx, still_bridged, 1, 0);
	/* Not handed to ctx_bridger: the last bridge waits for no call any more either. */
	if (!tls.seq) {
		release(g, REL_NOW);
		return;
	}
	/* Handed: the callback ends here, the driver takes the wait's measure next. (The latest
	 * seq only: two threads' waits on one GPU may leave in either order; the time, written
	 * first, is the later one's or later.) */
	uint32_t was = __atomic_load_n(&cb.left[g], __ATOMIC_RELAXED);
	__atomic_store_n(&cb.left_ns[g], nvt_clock_ns(), __ATOMIC_RELAXED);
	while ((int32_t)(tls.seq - was) > 0 &&
	       !__atomic_compare_exchange_n(&cb.left[g], &was, tls.seq, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* The record of bridge seq of slot g (a context synchronisation's), if it ended: its start, after
 * it was queued, and when it saw its wait return, after the host said so, tell the GPU's clock
 * from the host's (under cb.lock). */
static void clock_sample(int g, uint32_t seq)
{
	const struct trace_rec *r = seq ? rec_of(&b.s[g], seq) : NULL;
	unsigned k = seq % CTX_RECS;

	if (!r || cb.job[g].sampled[k] == seq || __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != seq)
		return;
	cb.job[g].sampled[k] = seq;
	if (cb.job[g].q_seq[k] == seq && r->start)
		nvt_bridge_clock_sample(&cb.job[g].clock, r->start, cb.job[g].q_ns[k], 0);
	if (cb.job[g].ret_seq[k] == seq && r->saw_ret)
		nvt_bridge_clock_sample(&cb.job[g].clock, r->saw_ret, cb.job[g].ret_ns[k], 1);
}

/* This thread's context synchronisation on slot g returned at now, its bridge handed to
 * ctx_bridger: did the wait take the bridge in (core/bridge.h)? */
static void ctx_returned(int g, uint64_t now)
{
	const struct bslot *s = &b.s[g];
	const struct trace_rec *r;
	int capped, taken_in, judged, stopped = 0;
	uint32_t pause = 0, seq = tls.seq;

	pthread_mutex_lock(&cb.lock);
	/* The last one's bridge, ended by now, and this one's, if it ended: when they started (and
	 * the last one saw its wait return) tell the clocks apart. */
	clock_sample(g, cb.job[g].last_seq);
	clock_sample(g, tls.seq);
	cb.job[g].last_seq = tls.seq;
	cb.job[g].ret_seq[tls.seq % CTX_RECS] = tls.seq;
	cb.job[g].ret_ns[tls.seq % CTX_RECS] = now;
	/* Ended at its cap, never released, just before the wait returned: the wait waited for it.
	 * One the wait did not take in still runs, or ended beside a long last kernel well before. */
	r = rec_of(s, tls.seq);
	capped = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) == tls.seq && r->reason == TR_CAP;
	taken_in = nvt_bridge_ctx_taken_in(&cb.job[g].clock, capped, capped ? r->end : 0, now);
	/* Its bridge queued before the wait returned */
	judged = cb.job[g].queued_seq == tls.seq && !cb.ctl.off;
	if (judged && nvt_bridge_ctx_seen(&cb.ctl, taken_in)) {
		__atomic_store_n(&cb.ctl_off, 1, __ATOMIC_RELAXED);
		stopped = 1;
		pause = nvt_bridge_ctx_pause(&cb.ctl);
	}
	pthread_mutex_unlock(&cb.lock);
	/* (said without the lock: a full stderr must not hold the other threads' waits; each
	 * said with its bridge's seq, as the driver's record has it) */
	if (judged && taken_in && dbg.on)
		shim_note("bridge: context synchronisation of bridge %u took it in", seq);
	if (stopped && dbg.on)
		shim_note("bridge: context synchronisations not bridged from now on (for %u waits): their "
			  "waits took in the bridges, which ran to their cap (%d us; the last: bridge %u)",
			  pause, NVT_BRIDGE_CTX_CAP_US, seq);
}

void shim_bridge_returned(int g)
{
	struct bslot *s;
	uint64_t now = nvt_clock_ns();

	if (g >= 0 && g < NVT_MAX_GPUS && shim_bridge_on)
		__atomic_store_n(&b.s[g].ret_ns, now, __ATOMIC_RELAXED);
	if (tls.measuring) {
		int held = tls.measuring == 2;
		/* Only statistics: dropped while another thread holds the lock (making a bridge). */
		if (pthread_mutex_trylock(&b.lock) == 0) {
			nvt_bridge_hold_learn(&b.s[tls.measure_slot].hold, held, now > tls.step_ns ? now - tls.step_ns : 0);
			pthread_mutex_unlock(&b.lock);
			count(&dbg.measured[held]);
		}
		tls.measuring = 0;
	}
	tls.ret_ns = now;
	if (!tls.seq)
		return;
	if (tls.ctx_wait)
		ctx_returned(tls.slot, now);
	s = &b.s[tls.slot];
	/* A held chain's step begins (core/bridge.h, "Held steps chained"). */
	if (tls.seq == __atomic_load_n(&s->chain, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->chain_ret_ns, now, __ATOMIC_RELAXED);
		__atomic_store_n(&s->armed_ns, now, __ATOMIC_RELAXED);
	}
	/* The latest wait that returned (another thread's may have returned after it). */
	store_max(&s->w[0], tls.seq);
	trace_time(s->tr, tls.seq, 0);
	tls.seq = 0;
}

void shim_bridge_launched(int g)
{
	struct bslot *s;
	uint64_t ret;

	if (!shim_bridge_on || tls.launching || g < 0 || g >= NVT_MAX_GPUS)
		return;
	s = &b.s[g];
	/* What the waits teach: was this launch soon after the last one returned? */
	ret = __atomic_exchange_n(&s->ret_ns, 0, __ATOMIC_RELAXED);
	if (ret) {
		uint64_t now = nvt_clock_ns(), gap = now > ret ? now - ret : 0;
		uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		/* This step began while the last bridge was on: its wait is measured (held steps). */
		if (seq && gap < __atomic_load_n(&s->linger_ns, __ATOMIC_RELAXED))
			__atomic_store_n(&s->measured, seq, __ATOMIC_RELAXED);
		learn(s, gap);
	}
}

int shim_bridge_chains(void)
{
	return shim_bridge_on && b.chain_mode == NVT_BRIDGE_CHAIN_ALWAYS;
}

int shim_bridge_launch_wanted(void)
{
	return !tls.launching && (tls.owns || tls.rel_seq);
}

/* Queues held bridge seq + 1 of slot s behind this thread's launch, its held span hspan (under
 * b.lock, in the bridge's context), and releases bridge seq: what was queued behind it runs
 * while the host goes on. fresh: a request's first launch begins the chain at now (its step is
 * not learnt from); else the step goes on and so does what measures it. */
static void chain_bridge(struct bslot *s, uint32_t seq, uint64_t hspan, uint64_t now, int fresh)
{
	volatile uint32_t *w = s->w;
	uint32_t next = seq + 1 ? seq + 1 : 1;
	CUdeviceptr rec = s->tr ? trace_begin(s, next, 1) : 0;

	store_max(&w[1], seq);
	if (fresh) {
		__atomic_store_n(&s->chain_ret_ns, now, __ATOMIC_RELAXED);
		__atomic_store_n(&s->learns, 0, __ATOMIC_RELAXED);
	} else {
		uint32_t cur = seq;
		__atomic_compare_exchange_n(&s->learns, &cur, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		cur = seq;
		__atomic_compare_exchange_n(&s->measured, &cur, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	/* (a request's chain: not again before its context is back, core/bridge.h) */
	__atomic_store_n(&s->armed_ns, now + (fresh ? (uint64_t)NVT_BRIDGE_CHAIN_FIRST_US * 1000 : 0), __ATOMIC_RELAXED);
	__atomic_store_n(&s->held, next, __ATOMIC_RELAXED);
	/* Its wait has returned: the kernel lingers from its start. Published before the kernels
	 * are queued (as a wait's bridge). */
	store_max(&w[0], next);
	__atomic_store_n(&s->seq, next, __ATOMIC_RELEASE);
	tls.launching = 1;
	if (launch_bridge(s, next, __atomic_load_n(&s->linger_ns, __ATOMIC_RELAXED), hspan, 0, rec) >= 0)
		count(fresh ? &dbg.chains : &dbg.rearmed);
	tls.launching = 0;
}

void shim_bridge_launch_done(int g, void *ctx)
{
	struct bslot *s;
	volatile uint32_t *w;
	uint32_t seq;
	uint64_t now, last, hspan;

	if (!shim_bridge_on || !__atomic_load_n(&b.following, __ATOMIC_RELAXED) || b.broken || tls.launching ||
	    g < 0 || g >= NVT_MAX_GPUS)
		return;
	s = &b.s[g];
	seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	if (!seq || !(w = __atomic_load_n(&s->w, __ATOMIC_ACQUIRE)))
		return;
	if (!tls.owns || tls.owns_slot != g || tls.owns != __atomic_load_n(&s->chain, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&s->held, __ATOMIC_RELAXED) != seq) {
		/* Another thread's launch: a bridge chained after it released the last one may have
		 * been queued before its kernel, which then waits behind it: released again. */
		if (tls.rel_seq && tls.rel_seq != seq && (int32_t)(__atomic_load_n(&w[1], __ATOMIC_RELAXED) - seq) < 0)
			tls.rel_seq = release(g, 0);
		return;
	}
	now = nvt_clock_ns();
	last = tls.last_ns;
	/* Released (a wait, a copy, a replay, another thread), or its wait not returned: none. */
	if ((int32_t)(__atomic_load_n(&w[1], __ATOMIC_RELAXED) - seq) >= 0 ||
	    (int32_t)(__atomic_load_n(&w[0], __ATOMIC_RELAXED) - seq) < 0) {
		tls.last_ns = now;
		return;
	}
	uint64_t ret = __atomic_load_n(&s->chain_ret_ns, __ATOMIC_RELAXED);
	hspan = nvt_bridge_rearm(ret, __atomic_load_n(&s->armed_ns, __ATOMIC_RELAXED), last, now);
	/* (the lock only makes objects and queues bridges: a busy one skips this launch, which then
	 * does not count as the launch before the next: a request's chain may begin there) */
	if (hspan && pthread_mutex_trylock(&b.lock))
		return;
	tls.last_ns = now;
	if (!hspan)
		return;
	if (s->ctx == ctx && !b.broken && __atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq &&
	    (int32_t)(__atomic_load_n(&w[1], __ATOMIC_RELAXED) - seq) < 0)
		chain_bridge(s, seq, hspan, now, hspan == (uint64_t)NVT_BRIDGE_HELD_SPAN_US * 1000 && now - ret >= hspan);
	pthread_mutex_unlock(&b.lock);
}

void shim_bridge_release_all(void)
{
	if (!shim_bridge_on)
		return;
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		release(g, REL_NOW);
}

void shim_bridge_slots_going(void)
{
	if (!shim_bridge_on)
		return;
	shim_bridge_release_all();
	/* (ctx_bridger's section that made a context current and launched there is over; a later
	 * one finds its bridge released) */
	pthread_mutex_lock(&b.lock);
	pthread_mutex_unlock(&b.lock);
}

void shim_bridge_context_gone(void *ctx)
{
	if (!shim_bridge_on)
		return;
	pthread_mutex_lock(&b.lock);
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		if (b.s[g].ctx && b.s[g].ctx == ctx) {
			/* Its kernels end with it; made() starts again in the next one. */
			release(g, REL_NOW);
			b.s[g].ctx = NULL;
		}
	pthread_mutex_unlock(&b.lock);
}

void shim_bridge_slot_gone(int g)
{
	if (!shim_bridge_on || g < 0 || g >= NVT_MAX_GPUS)
		return;
	pthread_mutex_lock(&b.lock);
	if (b.s[g].ctx) {
		release(g, REL_NOW);
		b.s[g].suspect = 1; /* made() tells whether it was made in the context that went */
	}
	pthread_mutex_unlock(&b.lock);
}

/* What the driver says of the host memory at ptr: its type, where this context's kernels reach
 * it, whether it is managed (each 0 where the driver does not say). */
static void dst_facts(CUdeviceptr ptr, unsigned *type, uint64_t *dev, int *managed)
{
	int attr[3] = {NVT_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, NVT_CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
		       NVT_CU_POINTER_ATTRIBUTE_IS_MANAGED};
	unsigned t = 0, m = 0;
	CUdeviceptr d = 0;
	void *data[3] = {&t, &d, &m};

	if (shim_cu.pointer_attributes(3, attr, data, ptr))
		return;
	*type = t;
	*dev = d;
	*managed |= m != 0;
}

/* ... and of the GPU memory at src, in context ctx (struct nvt_bridge_copy's). */
static void src_facts(struct nvt_bridge_copy *c, CUdeviceptr src, void *ctx)
{
	int attr[6] = {NVT_CU_POINTER_ATTRIBUTE_CONTEXT,	  NVT_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		       NVT_CU_POINTER_ATTRIBUTE_IS_MANAGED,	  NVT_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		       NVT_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, NVT_CU_POINTER_ATTRIBUTE_RANGE_SIZE};
	void *owner = NULL;
	unsigned type = 0, managed = 0;
	int ordinal = -2, flags = 0;
	CUdeviceptr start = 0;
	size_t size = 0;
	void *data[6] = {&owner, &type, &managed, &ordinal, &start, &size};

	c->src = src;
	if (shim_cu.pointer_attributes(6, attr, data, src))
		return;
	c->src_type = type;
	c->src_managed = managed != 0;
	c->src_ordinal = ordinal;
	c->src_start = start;
	c->src_size = size;
	/* Memory of no context (the virtual memory API's, a pool's): as this context may read it. */
	c->src_ours = owner ? owner == ctx
			    : !shim_cu.pointer_attribute(&flags, NVT_CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, src) &&
				      (flags & 1);
}

/* 1 once the task queued a host function (shim_bridge_copies_off; core/bridge.h's rule). */
static int copies_off;

void shim_bridge_copies_off(void)
{
	if (!__atomic_load_n(&copies_off, __ATOMIC_RELAXED))
		__atomic_store_n(&copies_off, 1, __ATOMIC_RELAXED);
}

void shim_bridge_copy(int g, void *ctx, NVT_MEMCPY_ASYNC_ARGS *a, int ptsz, int still_bridged)
{
	struct nvt_bridge_copy c = {0};
	CUstream stream;
	CUfunction fn;
	int status = 1, rc;
	void *args[4];
	uint64_t bytes;
	CUdeviceptr stamp = 0;

	if (!shim_bridge_on || b.broken || tls.launching || g < 0 || g >= NVT_MAX_GPUS || !a->bytes ||
	    a->bytes > NVT_BRIDGE_COPY_MAX || !shim_cu.pointer_attribute || !shim_cu.pointer_attributes ||
	    !shim_cu.stream_capturing || !shim_cu.ctx_device || !still_bridged)
		return;
	c.bytes = bytes = a->bytes;
	c.host_fns = __atomic_load_n(&copies_off, __ATOMIC_RELAXED);
	stream = ptsz && !a->stream ? NVT_CU_STREAM_PER_THREAD : a->stream;
	c.capturing = shim_cu.stream_capturing(stream, &status) || status;
	c.ordinal = -1;
	if (c.capturing || shim_cu.ctx_device(&c.ordinal))
		return;
	dst_facts(a->dst, &c.dst_type[0], &c.dst_dev[0], &c.dst_managed);
	dst_facts(a->dst + bytes - 1, &c.dst_type[1], &c.dst_dev[1], &c.dst_managed);
	src_facts(&c, a->src, ctx);
	if (!nvt_bridge_copy_by_kernel(&c))
		return;
	pthread_mutex_lock(&b.lock);
	rc = b.broken || made(&b.s[g], ctx);
	fn = b.s[g].copy;
	if (!rc && b.s[g].tr) {
		uint64_t i = b.s[g].tr->copies++ % TRACE_N;
		b.s[g].tr->copy[i] = nvt_clock_ns();
		stamp = b.s[g].dw + TRACE_COPY_OFF + i * sizeof(uint64_t);
		((uint64_t *)((char *)b.s[g].w + TRACE_COPY_OFF))[i] = 0;
	}
	pthread_mutex_unlock(&b.lock);
	if (rc)
		return;
	args[0] = &c.dst_dev[0];
	args[1] = &a->src;
	args[2] = &bytes;
	args[3] = &stamp;
	/* The program's work on its stream, launched as its own: the launch path gives it the
	 * task's partition and releases the last bridge. */
	if (shim_cu.launch_kernel(fn, 1, 1, 1, 128, 1, 1, 0, stream, args, NULL) == 0) {
		a->bytes = 0; /* the driver's copy of nothing: queued after the kernel, it waits for no engine */
		count(&dbg.by_kernel);
	}
}

/* The trace of slot g's bridges and copies to f; counts what ended how (enum trace_reason's
 * index; [0]: no record from the GPU yet). */
static void trace_write(FILE *f, int g, uint64_t ends[5])
{
	const struct bslot *s = &b.s[g];
	const struct trace_rec *r = (const struct trace_rec *)((const char *)s->w + TRACE_REC_OFF);
	const volatile uint64_t *gpu = (const volatile uint64_t *)((const char *)s->w + TRACE_COPY_OFF);
	static const char *const why[5] = {"none", "released", "linger", "cap", "next"};

	for (uint32_t i = 0; i < TRACE_N; i++) {
		uint32_t seq = s->tr->b[i].seq, reason = 0;
		if (!seq)
			continue;
		struct trace_rec rec = {0};
		if (__atomic_load_n(&r[i].seq, __ATOMIC_ACQUIRE) == seq) {
			rec = r[i];
			reason = rec.reason >= TR_RELEASED && rec.reason <= TR_NEXT ? rec.reason : 0;
		}
		ends[reason]++;
		fprintf(f, "bridge gpu=%d seq=%u wait=%llu ret=%llu rel=%llu call=%llu end=%s start=%llu "
			   "saw_ret=%llu saw_rel=%llu held=%llu stop=%llu way=%s\n",
			g, seq, (unsigned long long)s->tr->b[i].wait, (unsigned long long)s->tr->b[i].ret,
			(unsigned long long)s->tr->b[i].rel, (unsigned long long)s->tr->b[i].call, why[reason],
			(unsigned long long)rec.start,
			(unsigned long long)rec.saw_ret, (unsigned long long)rec.saw_rel,
			(unsigned long long)rec.last, (unsigned long long)rec.end,
			s->tr->b[i].held ? "held" : "released");
	}
	for (uint64_t i = 0; i < TRACE_N && i < s->tr->copies; i++)
		fprintf(f, "copy gpu=%d queued=%llu start=%llu\n", g, (unsigned long long)s->tr->copy[i],
			(unsigned long long)gpu[i]);
}

/* NVTASKSET_BRIDGE_TRACE: the trace to PATH.PID (a new file), and a line that says where, if it
 * made a bridge. */
static void trace_report(void)
{
	char path[4096];
	uint64_t ends[5] = {0};
	int fd;
	FILE *f;
	int any = 0;

	/* A process that made no bridge (one its task started that never used CUDA: a compiler
	 * XLA runs, a shell) writes none. */
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		any |= __atomic_load_n(&b.s[g].tr, __ATOMIC_ACQUIRE) && __atomic_load_n(&b.s[g].w, __ATOMIC_ACQUIRE);
	if (!any)
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s.%ld", dbg.trace, (long)getpid()) >= sizeof(path)) {
		shim_warn("%s is too long: no trace", NVT_ENV_BRIDGE_TRACE);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		shim_warn("cannot write the bridge's trace to %s (a new file): %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "# nvtaskset bridge trace pid=%ld: host times CLOCK_MONOTONIC ns (wait: the bridge "
		   "queued, ret: the wait returned, rel: its first release, call: the first call after a "
		   "replay), GPU times %%globaltimer ns\n",
		(long)getpid());
	/* No lock: at exit a thread may hold it inside the driver for good. Only made() sets the
	 * pointers read here, once, and never frees what they point to. */
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		if (__atomic_load_n(&b.s[g].tr, __ATOMIC_ACQUIRE) && __atomic_load_n(&b.s[g].w, __ATOMIC_ACQUIRE))
			trace_write(f, g, ends);
	if (fclose(f)) {
		shim_warn("cannot write the bridge's trace to %s: %s", path, strerror(errno));
		return;
	}
	shim_note("bridge trace: of %llu bridges, %llu ended released, %llu released behind the next, "
		  "%llu at the linger, %llu at the cap, %llu not yet (no record); in %s",
		  (unsigned long long)(ends[0] + ends[TR_RELEASED] + ends[TR_NEXT] + ends[TR_LINGER] + ends[TR_CAP]),
		  (unsigned long long)ends[TR_RELEASED], (unsigned long long)ends[TR_NEXT],
		  (unsigned long long)ends[TR_LINGER], (unsigned long long)ends[TR_CAP],
		  (unsigned long long)ends[0], path);
}

void shim_bridge_report(void)
{
	if (dbg.trace && shim_bridge_on)
		trace_report();
	if (!dbg.on || !shim_bridge_on)
		return;
	shim_note("bridge: %llu waits, %llu bridged (%llu with a linger below %d us), %llu not (the "
		  "launches after its waits came too late to pay for one); %llu "
		  "copies by its kernel; %llu graph replays seen; the next launch after a wait came within "
		  "50/100/300/1000/10000 us: %llu/%llu/%llu/%llu/%llu, later: %llu, never (a wait came "
		  "first): %llu; %llu tentative polled waits made full",
		  (unsigned long long)dbg.waits, (unsigned long long)dbg.bridged,
		  (unsigned long long)dbg.short_linger, NVT_BRIDGE_LINGER_US, (unsigned long long)dbg.unarmed,
		  (unsigned long long)dbg.by_kernel,
		  (unsigned long long)dbg.replays,
		  (unsigned long long)dbg.gaps[0], (unsigned long long)dbg.gaps[1],
		  (unsigned long long)dbg.gaps[2], (unsigned long long)dbg.gaps[3],
		  (unsigned long long)dbg.gaps[4], (unsigned long long)dbg.gaps[5],
		  (unsigned long long)dbg.after_wait, (unsigned long long)dbg.made_full);
	if (dbg.ctx_bridged || cb.off || cb.few_cpus || cb.ctl.off)
		shim_note("bridge: %llu context synchronisations' bridges queued by the shim's thread, within "
			  "50/100/300/1000/10000 us of the wait's start: %llu/%llu/%llu/%llu/%llu, later: %llu; "
			  "the thread moved off the waiting thread's CPU %llu times, queued %llu on it%s",
			  (unsigned long long)dbg.ctx_bridged, (unsigned long long)dbg.ctx_late[0],
			  (unsigned long long)dbg.ctx_late[1], (unsigned long long)dbg.ctx_late[2],
			  (unsigned long long)dbg.ctx_late[3], (unsigned long long)dbg.ctx_late[4],
			  (unsigned long long)dbg.ctx_late[5], (unsigned long long)dbg.ctx_moved,
			  (unsigned long long)dbg.ctx_on_waiter,
			  cb.few_cpus ? "; context synchronisations not bridged: the waiting thread may run on one "
					"CPU only"
			  : cb.off || cb.ctl.off ? "; context synchronisations not bridged now"
						 : "");
	if (!dbg.held && !dbg.measured[0] && !dbg.measured[1])
		return;
	shim_note("bridge: %llu bridges held; steps measured: %llu released, %llu held; held bridges "
		  "chained behind a launch: %llu in a step, %llu at a request's start",
		  (unsigned long long)dbg.held, (unsigned long long)dbg.measured[0],
		  (unsigned long long)dbg.measured[1], (unsigned long long)dbg.rearmed,
		  (unsigned long long)dbg.chains);
	if (b.chain_mode == NVT_BRIDGE_CHAIN_ALWAYS)
		shim_note("bridge: launch calls followed from the start");
	else if (b.chain_mode == NVT_BRIDGE_CHAIN_NEVER || !__atomic_load_n(&b.following, __ATOMIC_RELAXED))
		shim_note("bridge: launch calls not followed");
	else if (dbg.inherited)
		shim_note("bridge: launch calls followed since before the fork");
	else
		shim_note("bridge: launch calls followed from wait %llu on",
			  (unsigned long long)dbg.followed_at);
	/* (no lock, as trace_report: a racing copy still gives medians of what was measured) */
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		const struct nvt_bridge_hold *h = &b.s[g].hold;
		if (h->n[0] || h->n[1])
			shim_note("bridge: GPU slot %d: the median of its last measured steps %u us released, "
				  "%u us held",
				  g, nvt_bridge_hold_median(h, 0), nvt_bridge_hold_median(h, 1));
		if (b.s[g].seen.steps)
			shim_note("bridge: GPU slot %d: %u held steps seen; a chain would have shortened at "
				  "most %u of a window of %d (%d needed)",
				  g, b.s[g].seen.steps, b.s[g].seen.best, NVT_BRIDGE_CHAIN_WINDOW,
				  NVT_BRIDGE_CHAIN_NEED);
	}
}

int shim_bridge_launching(void)
{
	return tls.launching;
}

void shim_bridge_after_fork(void)
{
	/* The parent's context, stream and registration are not the child's (its pages are
	 * copies, registered again). */
	pthread_mutex_init(&b.lock, NULL);
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		volatile uint32_t *w = b.s[g].w;
		memset(&b.s[g], 0, sizeof(b.s[g]));
		if (w) {
			w[0] = w[1] = w[3] = w[4] = w[5] = w[7] = 0; /* its seqs start again */
			b.s[g].w = w;
		}
	}
	/* (the parent's thread is not the child's: started again at the child's first such wait) */
	pthread_mutex_init(&cb.lock, NULL);
	pthread_cond_init(&cb.wake, NULL);
	cb.started = cb.busy = cb.quit = 0;
	cb.tid = 0;
	/* (its CPUs are told again at its first such wait: it may run on others than its parent) */
	cb.few_cpus = cb.cpus_told = 0;
	cb.few_waits = 0;
	memset(cb.job, 0, sizeof(cb.job));
	memset(cb.left, 0, sizeof(cb.left));
	/* (the child's waits teach it their own: it may wait for other work than its parent's) */
	memset(&cb.ctl, 0, sizeof(cb.ctl));
	cb.ctl_off = 0;
	cb.pending = 0;
	tls.seq = tls.owns = 0;
	tls.launching = tls.measuring = 0;
	tls.ret_ns = tls.last_ns = 0;
	tls.rel_seq = 0;
	tls.tid = 0; /* (the child's thread is another) */
	int on = dbg.on; /* the child reports (and traces) its own */
	const char *trace = dbg.trace;
	memset(&dbg, 0, sizeof(dbg));
	dbg.on = on;
	dbg.inherited = __atomic_load_n(&b.following, __ATOMIC_RELAXED);
	dbg.trace = trace;
}
