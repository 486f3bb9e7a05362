/*
 * fakeprobe.c - the fake driver's modules, memory and the one kernel it can
 * run for real: nvtaskset's calibration probe (PTX entry nvt_probe_smid),
 * whose blocks store the SM they ran on, or a kernel of another name that
 * does the same (docs/examples/prog.c's). See fakecuda.h.
 * Over 500 lines on purpose: the kernels it loads (the probe, the hog, the
 * bridge's) share its module loading and their handles, which the bridge's
 * model (its words, records and log) is kept with.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeint.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int probe_function; /* the address is the CUfunction of nvt_probe_smid */
static char probe_name[64] = "nvt_probe_smid"; /* its entry's name, as its PTX gives it */
/* nvtaskset-hog's copy kernel (PTX entry nvt_hog): each launch takes 1 ms and
 * writes the TPCs it ran on to $FAKECUDA_HOG_STATE. */
static int hog_module, hog_function;
/* The bridge between a high time-sliced task's steps (PTX entries nvt_bridge, nvt_bridge_nop),
 * one of each GPU: each launch appends a line to $FAKECUDA_BRIDGE_LOG, with the words the host
 * wrote so far and the GPU it ran on. Its copy to the host (PTX entry nvt_copy) is done here (a
 * memcpy) and logged. A process that waits on two GPUs has two bridges, one made in a context of
 * each: their handles are the device's own (a launch of one in another device's context
 * answers 400). */
#define BRIDGE_DEVICES 8 /* fakecuda.c's MAX_DEVICES */
struct bridge_rec {
	uint32_t seq, reason;
	uint64_t start, saw_ret, saw_rel, end, last;
};
/* A bridge kernel queued on a GPU that has not ended, as the GPU runs it (struct fbridge's run,
 * in their order on the bridge's stream): its words and seq, its record (the shim's
 * NVTASKSET_BRIDGE_TRACE, or a context synchronisation's ring; NULL: none), when it starts (one
 * behind another: not before that one ended) and its cap (params[2]: it ends cap ns after its
 * start, released or not); its linger and held span (params[3], params[9]: unreleased, it ends
 * linger after it saw its wait return, w[0] >= seq, or after w[6] last moved since, at most
 * hspan after it saw the return). What the host wrote is seen as the host writes it, in the
 * callbacks of its driver calls (bridge_note, after them): when w[0] reached seq (ret_at), w[1]
 * (rel_at), and when w[6] last moved after the return (moved_at; w6: its value then); 0: not. */
struct frun {
	const volatile uint32_t *w;
	uint32_t seq;
	struct bridge_rec *rec;
	uint64_t start, cap, linger, hspan;
	uint32_t w6;
	uint64_t ret_at, rel_at, moved_at;
};
#define RUNS 4 /* a wait's bridge and the one that makes it full, with room */
static struct fbridge {
	int module, function, nop, copy; /* their addresses are this GPU's handles */
	/* The primary context generation its module was loaded in, + 1 (0: not in a primary
	 * context): launched after that context was destroyed, its kernels answer 400. */
	unsigned generation;
	/* The words of the last bridge launched, and its seq: each other launch on this GPU logs
	 * them after its callbacks ("app"), as the host had written them by then. */
	const volatile uint32_t *words;
	uint32_t seq, dry_seq;
	/* The bridges queued and not ended yet (bridge_settle ends them; under runs_lock), and the
	 * last one that ended unreleased, at its linger or its cap (0: none since the last was
	 * queued): the GPU switched away from the context then. */
	struct frun run[RUNS];
	int runs;
	uint32_t dry;
} bridges[BRIDGE_DEVICES];
static pthread_mutex_t runs_lock = PTHREAD_MUTEX_INITIALIZER;
static int queued; /* runs of every GPU (under runs_lock; read without it to skip a look) */

/* The GPU whose bridge kernel f is, or -1. */
static int bridge_dev_of(const void *f)
{
	for (int d = 0; d < BRIDGE_DEVICES; d++)
		if (f == &bridges[d].function || f == &bridges[d].nop || f == &bridges[d].copy)
			return d;
	return -1;
}

/* The bridge of the calling thread's current GPU. */
static struct fbridge *bridge_here(void)
{
	int d = fake_device();

	return &bridges[d >= 0 && d < BRIDGE_DEVICES ? d : 0];
}

INTERNAL int fake_is_probe(const void *f)
{
	return f == &probe_function;
}

INTERNAL int fake_is_hog(const void *f)
{
	return f == &hog_function;
}

INTERNAL int fake_is_bridge(const void *f)
{
	return bridge_dev_of(f) >= 0;
}

/* %globaltimer: the host's CLOCK_MONOTONIC far ahead, as a GPU's is of it (a shim that mixed the
 * two clocks up would show). */
#define GPU_CLOCK_AHEAD 1700000000000000000ull
#define GPU(t) ((t) + GPU_CLOCK_AHEAD)

static uint64_t fake_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Word i of w has reached seq. */
static int reached(const volatile uint32_t *w, int i, uint32_t seq)
{
	return (int32_t)(w[i] - seq) >= 0;
}

/* The first bridge of x's run ends at end, for reason why (enum trace_reason's number: 1
 * released, 2 its linger, 3 its cap, 4 released with the next behind it), its record written as
 * the kernel writes it (saw_ret, saw_rel, last: 0 for never; CLOCK_MONOTONIC for %globaltimer);
 * the one behind it starts then at the earliest (under runs_lock). */
static void run_end(struct fbridge *x, uint64_t end, uint32_t why, uint64_t saw_ret, uint64_t saw_rel, uint64_t last)
{
	struct frun r = x->run[0];

	if (r.rec) {
		r.rec->start = GPU(r.start);
		r.rec->saw_ret = saw_ret ? GPU(saw_ret) : 0;
		r.rec->saw_rel = saw_rel ? GPU(saw_rel) : 0;
		r.rec->end = GPU(end);
		r.rec->last = last ? GPU(last) : 0;
		r.rec->reason = why;
		__atomic_store_n(&r.rec->seq, r.seq, __ATOMIC_RELEASE);
	}
	if (why == 2 || why == 3)
		x->dry = r.seq;
	memmove(&x->run[0], &x->run[1], (size_t)--x->runs * sizeof(x->run[0]));
	__atomic_store_n(&queued, queued - 1, __ATOMIC_RELAXED);
	if (x->runs && x->run[0].start < end)
		x->run[0].start = end;
}

/* When bridge r saw its wait return (0: not yet): as the host said so, not before its start. */
static uint64_t saw_ret(const struct frun *r)
{
	return r->ret_at && r->ret_at < r->start ? r->start : r->ret_at;
}

/* When bridge r, unreleased, ends at its linger (UINT64_MAX: its wait has not returned): the
 * linger after it saw the return, or after the held thread's launches last moved w[6] since, at
 * most hspan after the return (as nvt_bridge's WAITING reads its words). */
static uint64_t linger_end(const struct frun *r)
{
	uint64_t ret = saw_ret(r), from;

	if (!ret)
		return UINT64_MAX;
	from = (r->moved_at > ret ? r->moved_at : ret) + r->linger;
	return from < ret + r->hspan ? from : ret + r->hspan;
}

/* What GPU x's bridges did by now, as the GPU runs them one after the other (under runs_lock):
 * the first one, not released when its linger ended (linger_end: its wait returned) or its cap
 * came (start + cap), ended then (reason 2 or 3), and the GPU switched away from the context;
 * with releases, one the host released ended at the release (seen at rel_at, else now; at its
 * start, if later: it saw the release as it started), at once where another is queued behind it
 * or being queued (queuing: the release just made by the next bridge's wait; the shim says so
 * in w[7] within the margin: reason 4), else after the margin (reason 1). */
static void bridge_settle(struct fbridge *x, uint64_t now, int releases, int queuing)
{
	while (x->runs) {
		const struct frun *r = &x->run[0];
		int released = reached(r->w, 1, r->seq);
		uint64_t t = released && r->rel_at ? r->rel_at : now, lg = linger_end(r), cap = r->start + r->cap;
		if (t < r->start)
			t = r->start;
		if (lg <= t && lg <= cap) {
			run_end(x, lg, 2, saw_ret(r), 0, 0);
		} else if (released && t <= cap) {
			if (!releases)
				return;
			int next = queuing || x->runs > 1 || reached(r->w, 7, r->seq);
			/* (it saw the return where the return came before the release) */
			uint64_t ret = saw_ret(r) && saw_ret(r) < t ? saw_ret(r) : 0;
			run_end(x, t + (next ? 0 : 20000), next ? 4 : 1, ret, t, t);
		} else if (now >= cap) {
			run_end(x, cap, 3, saw_ret(r) && saw_ret(r) < cap ? saw_ret(r) : 0, 0, 0);
		} else {
			return;
		}
	}
}

/* What the host wrote to GPU x's bridges' words in the callbacks that just ran (under
 * runs_lock): each bridge that ended by now ended first (a w[6] moved after its linger ended
 * restarts nothing), then the ones still queued see the wait's return, their release and the
 * held thread's launches (w[6]; one not started yet reads it at its start). */
static void bridge_note(struct fbridge *x, uint64_t now)
{
	bridge_settle(x, now, 0, 0);
	for (int i = 0; i < x->runs; i++) {
		struct frun *r = &x->run[i];
		uint32_t w6 = r->w[6];
		if (!r->ret_at && reached(r->w, 0, r->seq))
			r->ret_at = now;
		if (!r->rel_at && reached(r->w, 1, r->seq))
			r->rel_at = now;
		if (w6 != r->w6) {
			r->w6 = w6;
			if (r->ret_at && now >= r->start)
				r->moved_at = now;
		}
	}
}

/* Each GPU's bridges, now: settled (ended where they reached their linger or cap unreleased)
 * or, with note, what the callbacks wrote to their words seen. */
static void bridges_now(int note)
{
	uint64_t now;

	if (!__atomic_load_n(&queued, __ATOMIC_RELAXED))
		return;
	now = fake_ns();
	pthread_mutex_lock(&runs_lock);
	for (int d = 0; d < BRIDGE_DEVICES; d++)
		if (note)
			bridge_note(&bridges[d], now);
		else
			bridge_settle(&bridges[d], now, 0, 0);
	pthread_mutex_unlock(&runs_lock);
}

/* An API call's callbacks begin (its entry's or its return's): each GPU's bridges that reached
 * their linger or their cap unreleased ended there (the host releases a bridge in a callback,
 * after this look: one the host releases later ran to its linger or cap all the same). */
INTERNAL void fake_bridge_look(void)
{
	bridges_now(0);
}

/* An API call's callbacks ended: what they wrote to the bridges' words is seen now. */
INTERNAL void fake_bridge_noted(void)
{
	bridges_now(1);
}

/* A forked child: the parent's GPU work is not its own (its bridges end in the parent). */
static void runs_forget(void)
{
	pthread_mutex_init(&runs_lock, NULL);
	for (int d = 0; d < BRIDGE_DEVICES; d++)
		bridges[d].runs = 0;
	queued = 0;
}

__attribute__((constructor)) static void runs_at_fork(void)
{
	pthread_atfork(NULL, NULL, runs_forget);
}

/* The last bridge launched on this GPU when this thread's launch began: its log line names that
 * one (a bridge another thread launches meanwhile is not the one this launch's callbacks saw),
 * and what the host had released of it then (before the launch's callbacks: "was"). */
static __thread uint32_t app_seq, app_was;

INTERNAL void fake_bridge_app_enter(void)
{
	const struct fbridge *x = bridge_here();

	app_seq = x->seq;
	app_was = x->words ? x->words[1] : 0;
}

INTERNAL void fake_bridge_app_launch(void)
{
	const char *path = getenv("FAKECUDA_BRIDGE_LOG");
	struct fbridge *x = bridge_here();
	const char *extra = NULL;
	FILE *log;

	/* FAKECUDA_DRY_US=N: the first launch of a step that finds its bridge released, or ended
	 * unreleased (at its linger or its cap), makes its stream N us later, as the GPU's switches
	 * to a lower task and back do where the host is slower than its kernels; FAKECUDA_HELD_US=N
	 * the same for one that finds it held (a step whose kernels wait for its host). What the
	 * launch's callbacks wrote is seen first. */
	uint64_t now = fake_ns();
	pthread_mutex_lock(&runs_lock);
	bridge_note(x, now);
	bridge_settle(x, now, 1, 0);
	if (x->words && x->seq != x->dry_seq) {
		extra = getenv(reached(x->words, 1, x->seq) || x->dry == x->seq ? "FAKECUDA_DRY_US" : "FAKECUDA_HELD_US");
		x->dry_seq = x->seq;
	}
	pthread_mutex_unlock(&runs_lock);
	if (extra && *extra) {
		char *end;
		unsigned long us = strtoul(extra, &end, 10);
		if (!*end && us <= 10000000)
			fake_stream_dry((uint64_t)us * 1000);
	}
	if (!x->words || !path || !(log = fopen(path, "a")))
		return;
	fprintf(log, "app pid=%ld seq=%u released=%u replayed=%u tid=%ld pending=%u calls=%u dev=%d was=%u ended=%u\n",
		(long)getpid(), app_seq, x->words[1], x->words[4], (long)syscall(SYS_gettid), (unsigned)(x->words[5] != 0), x->words[6],
		(int)(x - bridges), app_was, x->words[7]);
	fclose(log);
}

INTERNAL void fake_bridge_waiting(int look)
{
	const char *path = getenv("FAKECUDA_BRIDGE_LOG");
	FILE *log;

	if (!path || !(log = fopen(path, "a")))
		return;
	fprintf(log, "%s pid=%ld dev=%d bridges=", look ? "look" : "wait", (long)getpid(), fake_device());
	for (int d = 0; d < BRIDGE_DEVICES; d++)
		if (bridges[d].words)
			fprintf(log, "%d:%u/%u/%u,", d, bridges[d].seq, bridges[d].words[1], (unsigned)(bridges[d].words[5] != 0));
	fprintf(log, "\n");
	fclose(log);
}

/* A context synchronisation takes its measure of the work before it (after its callbacks): this
 * GPU's last bridge, queued by then and not released, is in it, and the wait lasts to the
 * bridge's cap. Returns when the cap ends (CLOCK_MONOTONIC), or 0: no such bridge. */
INTERNAL uint64_t fake_bridge_measured_until(void)
{
	struct fbridge *x = bridge_here();
	uint64_t until = 0;

	pthread_mutex_lock(&runs_lock);
	for (int i = 0; i < x->runs; i++)
		if (x->run[i].seq == x->seq && !reached(x->run[i].w, 1, x->seq))
			until = x->run[i].start + x->run[i].cap;
	pthread_mutex_unlock(&runs_lock);
	return until;
}

/* A context synchronisation took this GPU's last bridge in (FAKECUDA_CTXSYNC_US): unreleased, it
 * ran to its cap, the wait with it, and writes its record (reason 3: the cap) as the wait
 * returns. */
INTERNAL void fake_bridge_taken_in(void)
{
	struct fbridge *x = bridge_here();

	pthread_mutex_lock(&runs_lock);
	/* (the first of its run: the wait's start released the ones before it) */
	if (x->runs && x->run[0].seq == x->seq && !reached(x->run[0].w, 1, x->seq))
		run_end(x, fake_ns(), 3, 0, 0, 0);
	pthread_mutex_unlock(&runs_lock);
}

/* A graph replay: between its API callbacks (after 0: the words as the host wrote them by then,
 * with the replays in flight), or after all of them (after 1: as the host left them until its
 * next call, with the word that holds the bridge until then). */
static void replay_log(int after)
{
	const char *path = getenv("FAKECUDA_BRIDGE_LOG");
	const struct fbridge *x = bridge_here();
	FILE *log;

	if (!x->words || !path || !(log = fopen(path, "a")))
		return;
	fprintf(log, "%s pid=%ld seq=%u released=%u replayed=%u %s=%u\n", after ? "replayed" : "replay",
		(long)getpid(), x->seq, x->words[1], x->words[4], after ? "pending" : "inflight",
		after ? (unsigned)(x->words[5] != 0) : x->words[3]); /* (w[5]: a token, set or not) */
	fclose(log);
}

INTERNAL void fake_bridge_replay(void)
{
	replay_log(0);
}

INTERNAL void fake_bridge_replayed(void)
{
	replay_log(1);
}

/* The bridge's kernels made in a primary context since destroyed answer 400, as stale handles
 * do on an H100, and so do those launched in another GPU's context (a function of another
 * context's module); FAKECUDA_BRIDGE_FAIL_RC=N: every launch of the bridge kernel answers N;
 * FAKECUDA_BRIDGE_FAIL_CHAINED=N: the Nth launch of the bridge kernel whose wait had returned
 * already (a bridge chained behind a launch: core/bridge.h) fails, as a launch out of resources
 * would. Returns the launch's error, 0 for the others. */
INTERNAL int fake_bridge_refused(const void *f, void **params)
{
	static unsigned chained;
	const char *at = getenv("FAKECUDA_BRIDGE_FAIL_CHAINED"), *rc = getenv("FAKECUDA_BRIDGE_FAIL_RC");
	const volatile uint32_t *w;
	int d = bridge_dev_of(f);

	if (d < 0)
		return 0;
	if (d != fake_device()) {
		fprintf(stderr, "fakecuda: GPU %d's bridge kernel launched in GPU %d's context\n", d, fake_device());
		return NVT_CUDA_ERROR_INVALID_HANDLE;
	}
	/* Made in a primary context since destroyed: the driver's answer to a stale handle (on an
	 * H100 a program also died of it, 2 times in 5: FAKECUDA_STALE_ABORT=1 makes it so). */
	if (bridges[d].generation && bridges[d].generation != fake_primary_generation(d) + 1) {
		if (getenv("FAKECUDA_STALE_ABORT")) {
			fprintf(stderr, "fakecuda: a kernel of a destroyed context launched\n");
			abort();
		}
		return NVT_CUDA_ERROR_INVALID_HANDLE;
	}
	/* FAKECUDA_BRIDGE_FAIL_RC=N: every bridge launch answers N. */
	if (f == &bridges[d].function && rc && *rc)
		return (int)strtol(rc, NULL, 10);
	if (f != &bridges[d].function || !at || !params || !params[0] || !params[1])
		return 0;
	w = (const volatile uint32_t *)(uintptr_t)*(uint64_t *)params[0];
	if ((int32_t)(w[0] - *(uint32_t *)params[1]) < 0)
		return 0;
	return ++chained == strtoul(at, NULL, 10) ? 701 /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */ : 0;
}

/* Bridge kernels being launched by a thread other than the program's first (FAKECUDA_BRIDGE_DELAY_US). */
static int bridge_launching;

/* The driver's teardown at exit (its destructor) while another thread is inside a bridge's launch:
 * what a real driver would free under that thread; the fake dies of it. */
__attribute__((destructor)) static void bridge_at_teardown(void)
{
	if (__atomic_load_n(&bridge_launching, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "fakecuda: the driver torn down while a thread launches a bridge\n");
		abort();
	}
}

/* FAKECUDA_BRIDGE_BESIDE=N: the bridge launched now is one of every Nth, which starts at once. */
static int bridge_beside(void)
{
	static unsigned long launched;
	const char *every = getenv("FAKECUDA_BRIDGE_BESIDE");
	unsigned long n = every && *every ? strtoul(every, NULL, 10) : 0;
	unsigned long k = __atomic_add_fetch(&launched, 1, __ATOMIC_RELAXED);

	return every && *every && k % (n ? n : 1) == 0;
}

/* Bridge kernel launch (w, seq, cap, linger, margin, span, replay, trace, late, hspan) queued on
 * GPU x, behind the ones that have not ended: it starts once the work queued before it is done,
 * or (FAKECUDA_BRIDGE_BESIDE) at once, beside the step's last kernel once that one's blocks are
 * placed, and not before the bridge before it ended. */
static void bridge_queue(struct fbridge *x, void **params)
{
	uint64_t now = fake_ns(), ahead = fake_context_done_at();
	struct frun r = {(const volatile uint32_t *)(uintptr_t)*(uint64_t *)params[0], *(uint32_t *)params[1],
			 params[7] ? (void *)(uintptr_t)*(uint64_t *)params[7] : NULL, now, *(uint64_t *)params[2],
			 *(uint64_t *)params[3], *(uint64_t *)params[9], 0, 0, 0, 0};

	/* (a bridge chained behind a launch: its wait returned already, and it lingers from its
	 * start) */
	r.w6 = r.w[6];
	if (reached(r.w, 0, r.seq))
		r.ret_at = now;

	if (!bridge_beside() && ahead > now)
		r.start = ahead;
	pthread_mutex_lock(&runs_lock);
	bridge_settle(x, now, 1, 1);
	if (x->runs == RUNS) { /* (more than the shim queues: the oldest forgotten, unrecorded) */
		memmove(&x->run[0], &x->run[1], (RUNS - 1) * sizeof(x->run[0]));
		x->runs--;
		__atomic_store_n(&queued, queued - 1, __ATOMIC_RELAXED);
	}
	x->run[x->runs++] = r;
	__atomic_store_n(&queued, queued + 1, __ATOMIC_RELAXED);
	x->words = r.w;
	x->seq = r.seq;
	x->dry = 0;
	pthread_mutex_unlock(&runs_lock);
}

INTERNAL void fake_run_bridge(const void *f, void **params)
{
	const char *path = getenv("FAKECUDA_BRIDGE_LOG");
	struct fbridge *x = &bridges[bridge_dev_of(f)];
	FILE *log;

	if (f == &x->copy && params[3] && *(uint64_t *)params[3]) /* (..., stamp) */
		*(volatile uint64_t *)(uintptr_t)*(uint64_t *)params[3] = GPU(fake_ns());
	/* FAKECUDA_BRIDGE_DELAY_US=N: a bridge's launch from a thread other than the program's first
	 * takes N us, during which the driver's teardown must not come (bridge_at_teardown). */
	if (f == &x->function && getenv("FAKECUDA_BRIDGE_DELAY_US") && syscall(SYS_gettid) != getpid()) {
		long us = strtol(getenv("FAKECUDA_BRIDGE_DELAY_US"), NULL, 10);
		struct timespec t = {us / 1000000, us % 1000000 * 1000};
		__atomic_add_fetch(&bridge_launching, 1, __ATOMIC_ACQ_REL);
		nanosleep(&t, NULL);
		__atomic_sub_fetch(&bridge_launching, 1, __ATOMIC_ACQ_REL);
	}
	if (f == &x->function)
		bridge_queue(x, params);
	/* (dst, src, n): the bytes as the GPU copies them, from its memory to mapped host memory,
	 * logged or not. */
	if (f == &x->copy)
		memcpy((void *)(uintptr_t)*(uint64_t *)params[0], (const void *)(uintptr_t)*(uint64_t *)params[1],
		       *(uint64_t *)params[2]);
	if (!path || !(log = fopen(path, "a")))
		return;
	if (f == &x->copy) {
		uint64_t n = *(uint64_t *)params[2];
		fprintf(log, "copy pid=%ld bytes=%llu stream=%p dev=%d\n", (long)getpid(), (unsigned long long)n,
			fake_launch_stream(), (int)(x - bridges));
	} else if (f == &x->nop) {
		fprintf(log, "nop pid=%ld dev=%d\n", (long)getpid(), (int)(x - bridges));
	} else {
		/* (w, seq, cap, linger, margin, span, replay, trace, late, hspan): the words as the
		 * host wrote them until now. */
		const volatile uint32_t *w = (const volatile uint32_t *)(uintptr_t)*(uint64_t *)params[0];
		fprintf(log, "bridge pid=%ld seq=%u cap_ns=%llu linger_ns=%llu margin_ns=%llu span_ns=%llu replay=%u "
			     "returned=%u released=%u late_ns=%llu pending=%u hspan_ns=%llu calls=%u tid=%ld dev=%d\n",
			(long)getpid(), *(uint32_t *)params[1], (unsigned long long)*(uint64_t *)params[2],
			(unsigned long long)*(uint64_t *)params[3], (unsigned long long)*(uint64_t *)params[4],
			(unsigned long long)*(uint64_t *)params[5], *(uint32_t *)params[6], w[0], w[1],
			(unsigned long long)*(uint64_t *)params[8], (unsigned)(w[5] != 0), (unsigned long long)*(uint64_t *)params[9],
			w[6], (long)syscall(SYS_gettid), (int)(x - bridges));
	}
	fclose(log);
}

INTERNAL void fake_run_hog(const struct fakecuda_launch *rec)
{
	const char *path = getenv("FAKECUDA_HOG_STATE");

	if (path) {
		char tmp[4096];
		FILE *f;
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		f = fopen(tmp, "w");
		if (f) {
			int first = 1;
			for (int t = 0; t < 256; t++)
				if ((rec->ran_tpcs[t / 64] >> (t % 64)) & 1) {
					fprintf(f, "%s%d", first ? "" : ",", t);
					first = 0;
				}
			fprintf(f, "\n");
			if (!fclose(f))
				rename(tmp, path);
		}
	}
	usleep(1000);
}

API int cuModuleLoadData(void **module, const void *image)
{
	if (getenv("FAKECUDA_LOG")) {
		FILE *log = fopen(getenv("FAKECUDA_LOG"), "a");
		if (log) {
			fprintf(log, "module pid=%ld\n", (long)getpid());
			fclose(log);
		}
	}
	const char *ptx = image;
	/* The bridge: a one-thread wait on two host words, bounded by %globaltimer, and an empty
	 * kernel. FAKECUDA_BRIDGE=noptx: a driver that cannot load it. */
	if (strstr(ptx, ".entry nvt_bridge(") && strstr(ptx, ".entry nvt_bridge_nop(")) {
		const char *b = getenv("FAKECUDA_BRIDGE");
		if ((b && !strcmp(b, "noptx")) || !strstr(ptx, ".target sm_") || !strstr(ptx, "%globaltimer") ||
		    !strstr(ptx, "ld.volatile.global.u32") || !strstr(ptx, "nanosleep") ||
		    !strstr(ptx, ".entry nvt_copy(") || !strstr(ptx, "st.global.u8") || !strstr(ptx, "membar.sys"))
			return NVT_CUDA_ERROR_INVALID_PTX;
		struct fbridge *x = bridge_here();
		int d = (int)(x - bridges);
		*module = &x->module;
		x->generation = fake_current_context() == fake_primary_context(d) ? fake_primary_generation(d) + 1 : 0;
		return 0;
	}
	/* The hog: a grid-stride copy of 16-byte words. */
	if (strstr(ptx, ".entry nvt_hog(") && strstr(ptx, ".target sm_") &&
	    strstr(ptx, "ld.global.v4.u32") && strstr(ptx, "st.global.v4.u32")) {
		*module = &hog_module;
		return 0;
	}
	/* The bandwidth probe: a timed grid-stride copy that counts its words. */
	if (strstr(ptx, ".entry nvt_membw(") && getenv("FAKECUDA_MEMBW") &&
	    !strcmp(getenv("FAKECUDA_MEMBW"), "noptx"))
		return NVT_CUDA_ERROR_INVALID_PTX; /* a driver that cannot load the probe */
	if (strstr(ptx, ".entry nvt_membw(") && strstr(ptx, ".target sm_") &&
	    strstr(ptx, "%globaltimer") && strstr(ptx, "atom.global.add.u64") &&
	    strstr(ptx, "ld.global.v4.u32")) {
		*module = fake_membw_module();
		return 0;
	}
	/* A kernel whose blocks store %smid at out[blockIdx.x]: the probe, or one like it. */
	const char *entry = strstr(ptx, ".entry ");
	size_t name_len = entry ? strcspn(entry + 7, "( \t\n") : 0;
	if (!name_len || name_len >= sizeof(probe_name) || !strstr(ptx, ".target sm_") ||
	    !strstr(ptx, "%smid"))
		return NVT_CUDA_ERROR_INVALID_PTX;
	memcpy(probe_name, entry + 7, name_len);
	probe_name[name_len] = '\0';
	*module = &probe_function;
	return 0;
}

API int cuModuleGetFunction(void **fn, void *module, const char *name)
{
	if (module == fake_membw_module())
		return fake_membw_function(module, name, fn);
	if (module == &hog_module && !strcmp(name, "nvt_hog")) {
		*fn = &hog_function;
		return 0;
	}
	for (int d = 0; d < BRIDGE_DEVICES; d++)
		if (module == &bridges[d].module && (!strcmp(name, "nvt_bridge") || !strcmp(name, "nvt_bridge_nop") ||
						     !strcmp(name, "nvt_copy"))) {
			*fn = !strcmp(name, "nvt_bridge") ? (void *)&bridges[d].function
			      : !strcmp(name, "nvt_copy") ? (void *)&bridges[d].copy
							  : (void *)&bridges[d].nop;
			return 0;
		}
	if (module != &probe_function || strcmp(name, probe_name))
		return NVT_CUDA_ERROR_NOT_FOUND;
	*fn = &probe_function;
	return 0;
}

API int cuFuncSetAttribute(void *fn, int attribute, int value)
{
	(void)attribute, (void)value;
	return fn == &probe_function ? 0 : 400;
}

static __thread int capture_mode; /* the calling thread's: CU_STREAM_CAPTURE_MODE_GLOBAL (0) */

INTERNAL int fake_capture_mode(void)
{
	return capture_mode;
}

/* The calling thread's stream capture mode (it captures nothing here). */
API int cuThreadExchangeStreamCaptureMode(int *mode)
{
	int was = capture_mode;

	if (!mode || *mode < 0 || *mode > 2)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	capture_mode = *mode;
	*mode = was;
	return 0;
}

API int cuMemHostGetDevicePointer_v2(uint64_t *dev, void *host, unsigned flags)
{
	if (!dev || !host || flags)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	*dev = (uint64_t)(uintptr_t)host;
	return 0;
}

API int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes)
{
	memcpy((void *)(uintptr_t)dst, src, bytes);
	return 0;
}

API int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes)
{
	memcpy(dst, (void *)(uintptr_t)src, bytes);
	return 0;
}

/* The SMs a launch may use, given its TMD after the callbacks. */
static int allowed_sms(int dev, const struct fakecuda_launch *rec, int *sms)
{
	int n = 0;
	for (int t = 0; t < fake_tpcs(dev); t++)
		if ((rec->ran_tpcs[t / 64] >> (t % 64)) & 1) {
			sms[n++] = 2 * t;
			sms[n++] = 2 * t + 1;
		}
	return n;
}

/* Runs the probe: block b stores the SM it ran on; clusters stay in a GPC. */
INTERNAL int fake_run_probe(int dev, const struct fakecuda_launch *rec, unsigned blocks,
			   unsigned cluster, void **params)
{
	static unsigned launches; /* for rotating block placement */
	unsigned *out = (unsigned *)(uintptr_t)*(uint64_t *)params[0];
	int sms[512], n = allowed_sms(dev, rec, sms);
	int rot = (int)(__atomic_fetch_add(&launches, 1, __ATOMIC_RELAXED) * 7);

	if (cluster <= 1) {
		for (unsigned b = 0; b < blocks; b++)
			out[b] = (unsigned)sms[(b + (unsigned)rot) % (unsigned)n];
		return 0;
	}
	for (unsigned c = 0; c < blocks / cluster; c++) {
		int eligible[64], n_el = 0, members[512], m, g;
		for (g = 0; g < fake_gpcs(dev); g++) {
			m = 0;
			for (int i = 0; i < n; i++)
				m += fake_gpc_of(dev, sms[i] / 2) == g;
			if (m >= (int)cluster)
				eligible[n_el++] = g;
		}
		if (!n_el)
			return 1; /* no GPC can hold such a cluster */
		g = eligible[(c + (unsigned)rot) % (unsigned)n_el];
		m = 0;
		for (int i = 0; i < n; i++)
			if (fake_gpc_of(dev, sms[i] / 2) == g)
				members[m++] = sms[i];
		for (unsigned j = 0; j < cluster; j++)
			out[c * cluster + j] =
				(unsigned)members[((int)(c * cluster + j) + rot) % m];
	}
	return 0;
}
