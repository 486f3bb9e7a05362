/*
 * shimpreempt.c - preemptive priorities in the shim (docs/priorities.md,
 * "Preemption"): the timeslice of this process's channel groups on each GPU
 * slot.
 *
 * A task started with a priority and the word slice runs in a context apart
 * from other levels' tasks (its level's MPS server, or its own), so that the
 * GPU's scheduler time-slices between them and switches inside running
 * kernels (instruction-level preemption, which libcuda asks for and gets).
 * Its groups' timeslice (shimchan.c sets it) says how soon a switch comes: a
 * task below high 5 us, so that a higher task's request waits ~0.1-0.3 ms for
 * the GPU beside persistent GEMMs; a high task 20 ms, so that a lower task's
 * turn seldom interrupts a request. A thread of the lower task's own, started
 * with its first group, follows the higher tasks as the launch path's
 * yielding does (shimyield.c: their segments, its own user's and root's),
 * every NVT_SHARE_POLL_US while there are any: beside higher tasks that never
 * idle (nvt_preempt_share) its groups run at NVT_SLICE_SHARE_US, a share of
 * the GPU; it publishes the groups, their timeslice and the state in its slot.
 * A control the driver refuses is said once.
 *
 * The launch path is untouched: the thread reads shared memory and issues
 * controls on its own process's groups. In an MPS server of a level
 * (shim_preempt_server) the server's groups are its clients'.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "core/gpusel.h"
#include "core/segment.h"
#include "core/yield.h"
#include "gpu/nvrm.h"
#include "seg/segfile.h"
#include "shimpreempt.h"
#include "shimchan.h"
#include "shimstate.h"
#include "shimyield.h"
#include "os/clock.h"

#define IDLE_POLL_MS 20     /* no higher task followed: look again this often */

/* One GPU slot of this process. */
struct pslot {
	uint64_t cfg_seq;        /* the slot's seq that cfg was read at; 0: never */
	uint8_t uuid[16];
	uint8_t prio;
	struct nvt_yield_cfg cfg;
	int slice;               /* its word (with a priority) */
	uint32_t asked_us;       /* the timeslice asked of shimchan; 0: none */
	int share;               /* asked the share's timeslice */
	struct nvt_share looks;  /* whether higher tasks never idle */
};

static struct {
	pthread_mutex_t lock;    /* started, new GPUs */
	int started;
	int server;              /* an MPS server of a level */
	int single;              /* one GPU slot: its timeslice also for groups of no known GPU */
	struct nvt_slot_prio server_prio;
	uint8_t new_gpu[NVT_MAX_GPUS][16];
	int n_new;
	struct pslot s[NVT_MAX_GPUS];
} pre = {.lock = PTHREAD_MUTEX_INITIALIZER};


/* Asks shimchan for slot p's timeslice now (the share's beside busy higher tasks). */
static void ask_timeslice(struct pslot *p)
{
	uint32_t us = nvt_preempt_timeslice(p->prio, &p->cfg, p->share);

	/* Words changed (-p) and slice went: libcuda's own again. */
	if (!us && p->asked_us)
		us = NVRM_LIBCUDA_TIMESLICE_US;
	if (us == p->asked_us)
		return;
	p->asked_us = us;
	if (pre.single)
		shim_chan_timeslice(NULL, us);
	if (shim_chan_timeslice(p->uuid, us) < 0 && shim_first_time(WARN_PREEMPT))
		shim_warn("the driver refused this task's channel groups a timeslice of %u us: "
			  "tasks of higher priority may wait for its work", (unsigned)us);
}

/* Reads slot g's priority and words again if a writer changed them. */
static void configure(struct pslot *p, int g)
{
	struct nvt_slot_view view;
	uint64_t seq = nvt_slot_seq(&shim.seg->gpu[g]);

	if (seq == p->cfg_seq || (seq & 1) || nvt_slot_read(&shim.seg->gpu[g], &view, 4))
		return;
	p->cfg_seq = seq;
	memcpy(p->uuid, view.uuid, 16);
	p->prio = view.prio.prio;
	nvt_yield_cfg_of(&view.prio, &p->cfg);
	p->slice = p->prio != NVT_PRIO_NONE && (p->cfg.yield & NVT_YIELD_SLICE);
	ask_timeslice(p);
}

static void publish(int g, const struct pslot *p)
{
	struct nvt_slot_yield *y = &shim.seg->gpu[g].yield;
	struct shim_chan_gpu_stats st;

	shim_chan_stats(p->uuid, &st);
	if (st.status && shim_first_time(WARN_PREEMPT))
		shim_warn("the CUDA driver refused a control on this task's channel groups (status "
			  "%#x): tasks of higher priority may wait up to its default timeslice for its work",
			  (unsigned)st.status);
	__atomic_store_n(&y->groups, st.groups, __ATOMIC_RELAXED);
	__atomic_store_n(&y->timeslice_us, st.timeslice_us, __ATOMIC_RELAXED);
	__atomic_store_n(&y->rm_status, st.status, __ATOMIC_RELAXED);
}

/* Beside higher tasks that never idle: the share's timeslice; back once they idle. */
static void follow_share(struct pslot *p, const struct nvt_watched *w, int n, uint64_t now)
{
	int busy = 0, share;

	for (int i = 0; i < n && !busy; i++)
		busy = nvt_watched_busy(&w[i], now);
	share = nvt_preempt_share(&p->looks, busy, now);
	if (share != p->share) {
		p->share = share;
		ask_timeslice(p);
	}
}

/* One look at slot g. Returns how long until the next (ns). */
static uint64_t step(int g, uint64_t now)
{
	struct pslot *p = &pre.s[g];
	struct nvt_watched w[SHIM_YIELD_WATCH_MAX];
	int n = 0;

	configure(p, g);
	if (!p->slice)
		return (uint64_t)IDLE_POLL_MS * 1000000;
	if (p->prio < NVT_PRIO_HIGH) {
		n = shim_yield_higher(g, w, now);
		follow_share(p, w, n, now);
	}
	publish(g, p);
	shim_yield_show(g, n ? NVT_YS_SLICED : NVT_YS_NONE, now);
	return n ? NVT_SHARE_POLL_US * 1000ull : (uint64_t)IDLE_POLL_MS * 1000000;
}

/* An MPS server: a slot for each GPU its groups appeared on. */
static void add_server_slots(void)
{
	struct nvt_slot_view view;
	int n;

	pthread_mutex_lock(&pre.lock);
	n = pre.n_new;
	pre.n_new = 0;
	for (int i = 0; i < n; i++) {
		if (nvt_uuid_is_zero(pre.new_gpu[i]))
			continue; /* its GPU is not known: its timeslice only (the default's) */
		memset(&view, 0, sizeof(view));
		memcpy(view.uuid, pre.new_gpu[i], 16);
		view.state = NVT_SLOT_UNSET;
		view.prio = pre.server_prio;
		if (nvt_seg_own_add_gpus(&shim.own, &view, 1) < 0 && shim_first_time(WARN_PREEMPT))
			shim_warn("cannot add a GPU to this MPS server's control segment: its clients "
				  "keep no share of the GPU beside tasks of higher priority that never idle");
	}
	pthread_mutex_unlock(&pre.lock);
}

static void *run(void *unused)
{
	(void)unused;
	for (;;) {
		uint64_t now = nvt_clock_ns(), sleep = (uint64_t)IDLE_POLL_MS * 1000000;
		struct timespec ts;

		if (pre.server)
			add_server_slots();
		for (int g = 0; g < NVT_MAX_GPUS; g++) {
			uint8_t uuid[16];
			nvt_slot_uuid(&shim.seg->gpu[g], uuid);
			if (!nvt_uuid_is_zero(uuid)) {
				uint64_t next = step(g, now);
				sleep = next < sleep ? next : sleep;
			}
		}
		ts.tv_sec = (time_t)(sleep / 1000000000u);
		ts.tv_nsec = (long)(sleep % 1000000000u);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* A channel group of a GPU appeared (under shimchan's lock: only noted here). The thread starts
 * with the first: a process that never makes one needs none. */
static void on_new_gpu(const uint8_t uuid[16])
{
	pthread_t thread;
	pthread_attr_t attr;

	pthread_mutex_lock(&pre.lock);
	if (pre.server && pre.n_new < NVT_MAX_GPUS)
		memcpy(pre.new_gpu[pre.n_new++], uuid, 16);
	if (!pre.started && pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pre.started = pthread_create(&thread, &attr, run, NULL) == 0;
		pthread_attr_destroy(&attr);
		if (!pre.started && shim_first_time(WARN_PREEMPT))
			shim_warn("cannot start a thread: this task keeps no share of the GPU beside "
				  "tasks of higher priority that never idle");
	}
	pthread_mutex_unlock(&pre.lock);
}

void shim_preempt_setup(void)
{
	int any = 0, slots = 0, last = -1;

	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t uuid[16];
		nvt_slot_uuid(&shim.seg->gpu[g], uuid);
		if (nvt_uuid_is_zero(uuid))
			continue;
		configure(&pre.s[g], g);
		any |= pre.s[g].slice;
		slots++;
		last = g;
	}
	if (!any)
		return;
	/* One GPU: its groups' timeslice also where the driver does not say their GPU. */
	if (slots == 1 && (pre.single = 1))
		shim_chan_timeslice(NULL, pre.s[last].asked_us);
	shim_chan_on_new_gpu(on_new_gpu);
}

void shim_preempt_server(const struct nvt_slot_prio *prio)
{
	struct nvt_yield_cfg cfg;

	pre.server = 1;
	pre.server_prio = *prio;
	nvt_yield_cfg_of(prio, &cfg);
	shim_chan_on_new_gpu(on_new_gpu);
	/* Every GPU's groups, before their slot is made. */
	shim_chan_timeslice(NULL, nvt_preempt_timeslice(prio->prio, &cfg, 0));
}

void shim_preempt_after_fork(void)
{
	pthread_mutex_init(&pre.lock, NULL);
	pre.started = 0;
	pre.n_new = 0;
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		pre.s[g].cfg_seq = 0;
	shim_chan_after_fork();
}
