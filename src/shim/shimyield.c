/*
 * shimyield.c - priorities in the shim (docs/priorities.md, "Yielding").
 * Over 500 lines on purpose: the activity a task publishes, the higher tasks
 * it finds and the yielding before its launches share one private state per
 * GPU slot (struct yslot; its yielding part under y.lock), which the launch
 * calls' callbacks read.
 *
 * Every task started with a priority publishes its activity in its own slot
 * (struct nvt_slot_activity): a request begins with a launch while the task
 * is idle (the launch callback, or a graph replay) and ends with a
 * synchronisation that the driver-API callbacks show on return. That costs a
 * high task one load per launch, plus a clock read once per request.
 *
 * A task of lower priority that yields also follows its own launch calls
 * (their entry and return callbacks, about 0.5 us a launch): before each one
 * it finds the higher tasks on its GPU (their segments, mapped read-only:
 * its own user's and root's only, looked for again every
 * NVT_YIELD_RESCAN_MS), asks core/yield.c whether to launch, and waits while
 * the answer is no: while a higher task is busy (gate), from shortly before a
 * periodic one's request is due (ahead), and until its own work in flight
 * would take at most bound_us (bound: it records an event after each of its
 * launches and counts those not yet done). A yielding task's launching
 * threads take a mutex to decide, and sleep without it: holding its launches
 * back is the point, holding them back past the bound is not.
 * No launch waits longer than NVT_YIELD_MAX_HOLD_MS, and a higher task that
 * dies or stops reporting is forgotten (core/yield.c's limits): a lower task
 * is never left waiting.
 *
 * What a higher task's file says is trusted only as an estimate: its own
 * user or root wrote it, and the worst it can do is hold this task back
 * within those limits. Its owner could shrink it under the mapping (SIGBUS
 * here): the owner is this task's own user or root.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/prio.h"
#include "core/yield.h"
#include "core/gpusel.h"
#include "core/tpcset.h"
#include "os/proc.h"
#include "seg/segfile.h"
#include "shimbridge.h"
#include "shimdriver.h"
#include "shimlease.h"
#include "shimslot.h"
#include "shimstate.h"
#include "shimyield.h"
#include "os/clock.h"

#define NVT_YIELD_RESCAN_MS 250 /* looks for higher tasks at most this often */
#define WATCH_MAX 8             /* higher tasks followed per GPU */
#define FILES_PER_SCAN 64       /* segment files read per look */
#define RING 64                 /* launches in flight counted */
#define POLL_NS 20000           /* sleep between two looks at its own work in flight */
#define GATE_POLL_NS 50000      /* ... at the higher tasks while they hold it back */

/* The calls that end a request (their return), and the launch calls a yielding task
 * holds back (their entry). */
static const int sync_ids[] = {
	NVT_CBID_cuCtxSynchronize,	 NVT_CBID_cuCtxSynchronize_v2,	NVT_CBID_cuStreamSynchronize,
	NVT_CBID_cuStreamSynchronize_ptsz, NVT_CBID_cuEventSynchronize, NVT_CBID_cuStreamQuery,
	NVT_CBID_cuStreamQuery_ptsz,	 NVT_CBID_cuMemcpyDtoH,		NVT_CBID_cuMemcpyDtoH_v2,
	NVT_CBID_cuMemcpyDtoH_v2_ptds,
};
static const int launch_ids[] = {
	NVT_CBID_cuLaunchKernel,	     NVT_CBID_cuLaunchKernel_ptsz, NVT_CBID_cuLaunchCooperativeKernel,
	NVT_CBID_cuLaunchCooperativeKernel_ptsz, NVT_CBID_cuLaunchKernelEx,    NVT_CBID_cuLaunchKernelEx_ptsz,
	NVT_CBID_cuGraphLaunch,	     NVT_CBID_cuGraphLaunch_ptsz,
};
/* A yielding task's: contexts that go (its events go with them). */
static const int ctx_ids[] = {
	NVT_CBID_cuCtxDestroy_v2, NVT_CBID_cuDevicePrimaryCtxReset_v2, NVT_CBID_cuDevicePrimaryCtxRelease_v2,
	NVT_CBID_cuCtxDestroy,	  NVT_CBID_cuDevicePrimaryCtxReset,    NVT_CBID_cuDevicePrimaryCtxRelease,
};
/* A bridging task's (shimbridge.c): contexts that go, graph replays. */
static const int bridge_ids[] = {
	NVT_CBID_cuCtxDestroy_v2, NVT_CBID_cuDevicePrimaryCtxReset_v2, NVT_CBID_cuDevicePrimaryCtxRelease_v2,
	NVT_CBID_cuCtxDestroy,	  NVT_CBID_cuDevicePrimaryCtxReset,    NVT_CBID_cuDevicePrimaryCtxRelease,
	NVT_CBID_cuGraphLaunch,	  NVT_CBID_cuGraphLaunch_ptsz,
};
/* ... its kernel launch calls, where its held steps are chained (shimbridge.c) ... */
static const int chain_ids[] = {
	NVT_CBID_cuLaunchKernel,		 NVT_CBID_cuLaunchKernel_ptsz, NVT_CBID_cuLaunchCooperativeKernel,
	NVT_CBID_cuLaunchCooperativeKernel_ptsz, NVT_CBID_cuLaunchKernelEx,    NVT_CBID_cuLaunchKernelEx_ptsz,
};
/* ... and its copies to the host on a stream (a kernel may do them: shimbridge.c). */
static const int copy_ids[] = {
	NVT_CBID_cuMemcpyDtoHAsync_v2, NVT_CBID_cuMemcpyDtoHAsync_v2_ptsz, NVT_CBID_cuMemcpyAsync,
	NVT_CBID_cuMemcpyAsync_ptsz,
};
#define N_IDS(a) (sizeof(a) / sizeof((a)[0]))

/* A higher task followed on one GPU. */
struct watch {
	const struct nvt_segment *seg; /* mapped read-only */
	int slot;
	uid_t owner;               /* whose run directory holds its file */
	char name[64];             /* its file's name there */
	dev_t dev;
	ino_t ino;
	pid_t pid;                 /* its process, as our /proc numbers it */
	uint64_t start;            /* and its start time */
	int pidfd;                 /* a pidfd of it; -1: none (its start time is read instead) */
	dev_t pidfd_dev;           /* what that descriptor is, to tell it from one the host */
	ino_t pidfd_ino;           /* reused after closing ours */
	uint64_t begins, launches; /* as last seen */
	uint64_t moved_ns;
	uint64_t seq;              /* its slot's seq when found */
};

/* This process on one GPU slot. */
struct yslot {
	/* Yielding (under y.lock): */
	uint64_t cfg_seq;          /* slot seq that cfg was read at; 0: never */
	struct nvt_yield_cfg cfg;
	uint8_t prio;
	uint8_t uuid[16];
	int yields;                /* holds its launches back (nvt_yield_by_shim) */
	struct watch w[WATCH_MAX];
	int n_w;
	uint64_t next_scan_ns;
	unsigned scan_from[2];     /* where the next look begins: its user's run directory, root's */
	CUevent ev[RING];
	uint64_t rec_ns[RING];
	unsigned head, tail;       /* events recorded, and done */
	void *ev_ctx;              /* the context the events are of; NULL: none yet */
	unsigned long long ev_id;  /* its id (0: the driver has none) */
	int ev_suspect;            /* its GPU's primary context went since (reset, last release) */
	uint32_t ev_gen;           /* the events' generation: one more each time they are dropped */
	int ev_broken;
	uint64_t done_ns;          /* when the last event was seen done */
	uint64_t launch_ns;        /* how long one of its launches runs (moving average) */
	uint32_t state;            /* enum nvt_yield_state, as published */
	/* Borrowing: masks of its partition and the lending higher tasks' own ones. */
	struct hw_masks borrow;
	struct nvt_tpcset borrow_tpcs; /* the TPCs of those masks */
	struct nvt_tpcset published;   /* the TPCs its slot says it borrows (yield.borrowed) */
	int borrow_ok;             /* borrow holds masks for the partition of cfg_seq */
	struct nvt_slot_view own;  /* its partition, as read at cfg_seq */
};

static struct {
	pthread_mutex_t lock;
	struct yslot s[NVT_MAX_GPUS];
} y = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The launch this thread is in: its slot, whether to record its end, and
 * whether it runs on the borrowed TPCs too (the launch callback asks). */
static __thread struct {
	int slot;
	int record;
	int in_shim;
	int borrow;
	uint32_t ev_gen; /* the slot's events' generation when record was decided */
} tls __attribute__((tls_model("initial-exec"))); /* as the launch path's (shimslot.h) */

/* Read by the launch path (shimyield.h, shim.c). */
int shim_yield_tracking;
int shim_yield_following;
int shim_yield_idle[NVT_MAX_GPUS];


/* Sleeps ns without y.lock (held before and after): a mutex is not fair, and
 * a thread that slept under it kept the others past their bound (8 launching
 * threads waited 400 ms). */
static void pause_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};

	pthread_mutex_unlock(&y.lock);
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&y.lock);
}

/* ---- Activity (every task started with a priority) ------------------------- */

/* Copies the slot's activity, applies fn at now, and stores it back (relaxed). */
static void act_update(int g, void (*fn)(struct nvt_slot_activity *, uint64_t))
{
	struct nvt_slot_activity *a = &shim.seg->gpu[g].act, copy;
	uint64_t *dst = (uint64_t *)a, *src = (uint64_t *)&copy;

	for (size_t i = 0; i < sizeof(copy) / 8; i++)
		src[i] = __atomic_load_n(&dst[i], __ATOMIC_RELAXED);
	fn(&copy, nvt_clock_ns());
	for (size_t i = 0; i < sizeof(copy) / 8; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
}

void shim_yield_launched(int g)
{
	/* A bridge's kernels (shimbridge.c) are not the program's: they begin nothing. */
	if (shim_bridge_launching())
		return;
	/* Of threads launching at once, one begins the request. */
	if (!__atomic_exchange_n(&shim_yield_idle[g], 0, __ATOMIC_ACQ_REL))
		return;
	act_update(g, nvt_act_begin);
	shim_bridge_launched(g);
}

static void synchronized(int g)
{
	if (g < 0 || g >= NVT_MAX_GPUS || __atomic_exchange_n(&shim_yield_idle[g], 1, __ATOMIC_ACQ_REL))
		return;
	act_update(g, nvt_act_end);
}

void shim_yield_ended(int g)
{
	if (shim_yield_tracking)
		synchronized(g);
}

int shim_yield_own_call(void)
{
	return tls.in_shim;
}

/* Defined below, where the bridge's other calls are. */
static int current_slot(void **ctx);
static int still_bridged(int g);
static void follow_chains(void);

/* This thread's polls (shim_yield_polled; core/bridge.h's rule). */
static __thread struct nvt_bridge_poll poll __attribute__((tls_model("initial-exec")));

int shim_yield_polled(int g, const void *obj, uint64_t noted, int done)
{
	void *ctx;
	int launched = nvt_slot_launches(&shim.seg->gpu[g]) != noted;
	int act = nvt_bridge_poll_look(&poll, g, obj, noted, launched, done, nvt_clock_ns());

	if (act == NVT_BRIDGE_POLL_RETURNED)
		shim_bridge_returned(g);
	if (act == NVT_BRIDGE_POLL_FULL && shim_bridge_on && current_slot(&ctx) == g) {
		shim_bridge_extend(g, ctx);
		nvt_bridge_poll_begun(&poll, g, noted, act);
	}
	if ((act == NVT_BRIDGE_POLL_BEGIN || act == NVT_BRIDGE_POLL_TENTATIVE) && shim_bridge_on &&
	    current_slot(&ctx) == g) {
		shim_bridge_wait_capped(g, ctx, still_bridged(g),
					act == NVT_BRIDGE_POLL_TENTATIVE ? NVT_BRIDGE_POLL_CAP_US : NVT_BRIDGE_CAP_MS * 1000);
		if (shim_bridge_chains_due())
			follow_chains();
		nvt_bridge_poll_begun(&poll, g, noted, act);
	}
	return !launched && done;
}

/* A slot of this process got its GPU (set-up, fork): it is idle, and tracked. */
void shim_yield_slot_ready(int g)
{
	struct nvt_slot_activity *a = &shim.seg->gpu[g].act;
	const char *cp = secure_getenv(NVT_ENV_MPS_CLIENT_PRIORITY);
	char *end;
	long v;

	if (!shim_yield_tracking)
		return;
	shim_yield_idle[g] = 1;
	memset(a, 0, sizeof(*a));
	a->flags = NVT_ACT_TRACKED;
	if (cp && *cp) {
		errno = 0;
		v = strtol(cp, &end, 10);
		if (!errno && !*end && v >= 0 && v < 16)
			a->client_prio = (uint32_t)v + 1;
	}
}

/* ---- Finding the higher tasks ---------------------------------------------- */

/*
 * A higher task is a file that the one trust rule of src/seg/ passes in its
 * look mode (NVT_TRUST_LOOK, segfile.h): a live process of this task's own
 * user or root's, found by its file's name (this PID namespace, or one below
 * it), with the start time its header records, running as its file's owner
 * now. A followed task is checked again at every look whatever the
 * directory holds (its file, its process, its user), and before every
 * launch that would borrow its TPCs (its pidfd): one that ended is dropped
 * within a look, and never lends.
 */

/* 1 if w's descriptor is still the pidfd we opened (the host may have closed
 * it, and another file got its number). */
static int pidfd_ours(const struct watch *w)
{
	struct stat st;

	return w->pidfd >= 0 && fstat(w->pidfd, &st) == 0 && st.st_dev == w->pidfd_dev &&
	       st.st_ino == w->pidfd_ino;
}

/* 1 if w's process has not ended: by its pidfd, else by its start time. */
static int alive(const struct watch *w)
{
	uint64_t start;

	if (w->pidfd >= 0)
		return nvt_pidfd_alive(w->pidfd) == 1;
	return nvt_proc_start_time(w->pid, &start) == 0 && start == w->start;
}

static void forget(struct watch *w)
{
	munmap((void *)w->seg, sizeof(struct nvt_segment));
	if (pidfd_ours(w))
		close(w->pidfd);
	w->pidfd = -1;
}

/* 1 if followed task w is still the higher task it was: its file in its run
 * directory dirfd, its process alive and its file's owner's, its slot
 * unchanged (a partition or priority that changed is found again if it
 * still counts). */
static int still_there(struct watch *w, int dirfd)
{
	const struct nvt_gpu_slot *slot = &w->seg->gpu[w->slot];
	struct stat st;
	uint64_t start;
	uid_t euid;

	if (w->pidfd >= 0 && !pidfd_ours(w))
		w->pidfd = -1; /* not ours any more: the start time tells */
	return dirfd >= 0 && fstatat(dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       st.st_dev == w->dev && st.st_ino == w->ino && alive(w) &&
	       nvt_proc_start_time(w->pid, &start) == 0 && start == w->start &&
	       nvt_proc_euid(w->pid, &euid) == 0 && euid == w->owner &&
	       __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) == w->seq;
}

/* 1 if followed task w has never launched on its GPU (nor replayed a graph). */
static int never_launched(const struct watch *w)
{
	const struct nvt_gpu_slot *slot = &w->seg->gpu[w->slot];

	return nvt_slot_launches(slot) == 0 && __atomic_load_n(&slot->act.begins, __ATOMIC_RELAXED) == 0;
}

/* The followed task whose place a higher task that launches may take: one that
 * never launched (the service's idle helpers that inherited its priority).
 * Returns its index, or -1. */
static int idle_place(const struct yslot *s)
{
	for (int i = 0; i < s->n_w; i++)
		if (never_launched(&s->w[i]))
			return i;
	return -1;
}

/*
 * What the look wants of a file (wanted() of the trust rule): a slot for its
 * GPU with a priority above its own, and room for it: a free place, or, for a
 * task that has launched, the place of one that never did. So a service's
 * idle children, which inherit its priority with its slot, never keep the
 * service itself out of the WATCH_MAX places.
 */
struct candidate {
	const struct yslot *s;
	int slot;
	int replace;               /* the place it takes; -1: a free one */
	struct nvt_slot_view view;
};

static int has_higher_slot(int fd, const struct nvt_segment *head, void *arg)
{
	struct candidate *c = arg;
	struct nvt_slot_status status;

	(void)head;
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		if (nvt_seg_pread_slot(fd, g, &c->view, &status) == 0 &&
		    !memcmp(c->view.uuid, c->s->uuid, 16) && c->view.prio.prio > c->s->prio) {
			c->slot = g;
			c->replace = -1;
			if (c->s->n_w < WATCH_MAX)
				return 1;
			if (!status.launches && !status.act.begins)
				return 0;
			c->replace = idle_place(c->s);
			return c->replace >= 0;
		}
	return 0;
}

/* 1 if s follows the file name of uid's run directory already. */
static int followed(const struct yslot *s, uid_t uid, const char *name)
{
	for (int i = 0; i < s->n_w; i++)
		if (s->w[i].owner == uid && !strcmp(s->w[i].name, name))
			return 1;
	return 0;
}

/*
 * Looks at one segment file of uid's run directory dirfd: a higher task on
 * s's GPU (the trust rule's look mode) is followed (mapped, with a pidfd of
 * its process). Returns 1 if it is followed now.
 */
static int look_at(struct yslot *s, int dirfd, uid_t uid, const char *name)
{
	static struct nvt_seg_trust t; /* under y.lock: a segment is ~10 kB, the stack is the host's */
	struct candidate c = {s, -1, -1, {0}};
	struct stat pst;
	struct watch *w;
	uint64_t pidns;
	pid_t pid;
	void *map;

	if (nvt_seg_name_parse(name, &pidns, &pid) ||
	    (pid == shim.own.pid && pidns == shim.own.pidns) || followed(s, uid, name))
		return 0;
	memset(&t, 0, sizeof(t));
	t.owner = uid;
	t.flags = NVT_TRUST_LOOK;
	t.oflags = O_RDONLY;
	t.base = shim.base;
	/* Where /proc numbers PIDs as this process's namespace does. */
	t.own_pidns = shim.own.proc_pid == shim.own.pid ? shim.own.pidns : 0;
	t.wanted = has_higher_slot;
	t.arg = &c;
	if (nvt_seg_trust(dirfd, name, &t))
		return 0;
	map = mmap(NULL, sizeof(struct nvt_segment), PROT_READ, MAP_SHARED, t.fd, 0);
	close(t.fd);
	if (map == MAP_FAILED)
		return 0;
	if (c.replace >= 0) {
		w = &s->w[c.replace];
		forget(w);
	} else {
		w = &s->w[s->n_w++];
	}
	*w = (struct watch){.seg = map, .slot = c.slot, .owner = uid, .dev = t.st.st_dev,
			    .ino = t.st.st_ino, .pid = t.proc.pid, .start = t.proc.start_time,
			    .seq = c.view.seq};
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->pidfd = nvt_proc_pidfd(w->pid, w->start);
	if (w->pidfd >= 0 && fstat(w->pidfd, &pst) == 0) {
		w->pidfd_dev = pst.st_dev;
		w->pidfd_ino = pst.st_ino;
	} else if (w->pidfd >= 0) {
		close(w->pidfd);
		w->pidfd = -1;
	}
	return 1;
}

/*
 * Looks at uid's run directory for higher tasks on s's GPU: keeps those it
 * follows there that are still there, then looks at FILES_PER_SCAN names
 * from *from on (a place that moves on each look, one for each directory,
 * so that every file is looked at within a few looks however many the
 * directories hold, and files that cannot be read never keep the others
 * from being found).
 */
static void scan_dir(struct yslot *s, uid_t uid, unsigned *from)
{
	int dirfd = nvt_userdir_open(shim.base, uid), fd, kept = 0, budget = FILES_PER_SCAN;
	struct dirent *e = NULL;
	DIR *d;
	unsigned k = 0;

	for (int i = 0; i < s->n_w; i++) {
		if (s->w[i].owner == uid && !still_there(&s->w[i], dirfd)) {
			forget(&s->w[i]);
			continue;
		}
		s->w[kept++] = s->w[i];
	}
	s->n_w = kept;
	if (dirfd < 0)
		return;
	fd = dup(dirfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		close(dirfd);
		return;
	}
	while (budget > 0 && (e = readdir(d))) {
		if (strncmp(e->d_name, NVT_SEG_PREFIX, strlen(NVT_SEG_PREFIX)) || k++ < *from)
			continue;
		budget--;
		look_at(s, dirfd, uid, e->d_name);
	}
	/* The end of the directory: the next look begins again at its start. */
	*from = e ? *from + FILES_PER_SCAN : 0;
	closedir(d);
	close(dirfd);
}

/* Finds the higher tasks on s's GPU again; forgets those gone or changed. */
static void rescan(struct yslot *s, uint64_t now)
{
	s->next_scan_ns = now + (uint64_t)NVT_YIELD_RESCAN_MS * 1000000;
	s->borrow_ok = 0;
	scan_dir(s, geteuid(), &s->scan_from[0]);
	if (geteuid() != 0)
		scan_dir(s, 0, &s->scan_from[1]);
}

/* ---- Yielding --------------------------------------------------------------- */

/* Reads slot g's priority and yield settings again if a writer changed them. */
static void configure(struct yslot *s, int g)
{
	struct nvt_slot_view view;
	uint64_t seq = nvt_slot_seq(&shim.seg->gpu[g]);

	if (seq == s->cfg_seq || (seq & 1) || nvt_slot_read(&shim.seg->gpu[g], &view, 4))
		return;
	s->cfg_seq = seq;
	s->own = view;
	s->borrow_ok = 0;
	s->prio = view.prio.prio;
	memcpy(s->uuid, view.uuid, 16);
	nvt_yield_cfg_of(&view.prio, &s->cfg);
	s->yields = nvt_yield_by_shim(s->prio, s->cfg.yield);
	s->next_scan_ns = 0;
}

static void publish(int g, struct yslot *s, uint32_t state, uint64_t now)
{
	struct nvt_slot_yield *p = &shim.seg->gpu[g].yield;

	__atomic_store_n(&p->watching, (uint32_t)s->n_w, __ATOMIC_RELAXED);
	if (state == s->state)
		return;
	s->state = state;
	__atomic_store_n(&p->since_ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&p->state, state, __ATOMIC_RELEASE);
}

/*
 * Says in its slot that its launches borrow s->borrow_tpcs, before the
 * lenders are checked alive and the launch runs: a claim that reads the slot
 * after a lender ended counts those TPCs as held. The set changes only while
 * the state says it does not borrow (a reader never takes half of one set
 * for the other).
 */
static void publish_borrowing(int g, struct yslot *s, uint64_t now)
{
	struct nvt_slot_yield *p = &shim.seg->gpu[g].yield;

	if (memcmp(&s->published, &s->borrow_tpcs, sizeof(s->published))) {
		publish(g, s, NVT_YS_RUNNING, now);
		for (size_t i = 0; i < sizeof(p->borrowed.w) / 8; i++)
			__atomic_store_n(&p->borrowed.w[i], s->borrow_tpcs.w[i], __ATOMIC_RELAXED);
		s->published = s->borrow_tpcs;
	}
	publish(g, s, NVT_YS_BORROWING, now);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The higher tasks as core/yield.c takes them; notes when their counters move. */
static int watched(struct yslot *s, struct nvt_watched *out, uint64_t now)
{
	for (int i = 0; i < s->n_w; i++) {
		const struct nvt_gpu_slot *slot = &s->w[i].seg->gpu[s->w[i].slot];
		const uint64_t *src = (const uint64_t *)&slot->act;
		uint64_t *dst = (uint64_t *)&out[i].act, launches = 0;

		for (size_t k = 0; k < sizeof(out[i].act) / 8; k++)
			dst[k] = __atomic_load_n(&src[k], __ATOMIC_RELAXED);
		for (int k = 0; k < NVT_LAUNCH_STRIPES; k++)
			launches += __atomic_load_n(&slot->launches[k], __ATOMIC_RELAXED);
		if (out[i].act.begins != s->w[i].begins || launches != s->w[i].launches)
			s->w[i].moved_ns = now;
		s->w[i].begins = out[i].act.begins;
		s->w[i].launches = launches;
		out[i].moved_ns = s->w[i].moved_ns;
	}
	return s->n_w;
}

/* Counts this slot's launches whose events are done; learns how long one runs
 * from those seen done while waiting (timely). Returns those still in flight. */
static unsigned in_flight(struct yslot *s, int waiting, uint64_t now)
{
	uint64_t start = 0;
	unsigned done = 0;

	while (s->tail != s->head) {
		unsigned i = s->tail % RING;
		int rc;
		tls.in_shim = 1;
		rc = shim_cu.event_query(s->ev[i]);
		tls.in_shim = 0;
		if (rc == NVT_CUDA_ERROR_NOT_READY)
			break;
		if (!done++)
			start = s->rec_ns[i] > s->done_ns ? s->rec_ns[i] : s->done_ns;
		s->tail++;
	}
	if (!done)
		return s->head - s->tail;
	/* Those seen done at one look ran one after the other since start. */
	if (waiting && now > start) {
		uint64_t took = (now - start) / done;
		s->launch_ns = nvt_yield_launch_avg(s->launch_ns, took);
	}
	s->done_ns = now;
	return s->head - s->tail;
}

/* Slot s's events are gone with their context (or left in one this task may not come back to):
 * none is queried or recorded again. */
static void drop_events(struct yslot *s)
{
	s->ev_ctx = NULL;
	s->head = s->tail = 0;
	s->ev_suspect = 0;
	s->ev_gen++; /* a launch that decided to record in them does not (after_launch) */
}

/* Makes the events of slot s in the current context ctx (under y.lock). Returns 0, or -1. Where
 * the context they were made in went (shim_ctx_gone) they are made again, and the old ones never
 * used (they went with their context). */
static int make_events(struct yslot *s, void *ctx)
{
	int gone;

	if (s->ev_broken)
		return -1;
	tls.in_shim = 1;
	gone = s->ev_ctx && shim_ctx_gone(s->ev_ctx, s->ev_id, &s->ev_suspect, ctx);
	tls.in_shim = 0;
	if (gone)
		drop_events(s);
	if (s->ev_ctx)
		return s->ev_ctx == ctx ? 0 : -1; /* another context: not bounded */
	tls.in_shim = 1;
	for (int i = 0; i < RING; i++)
		if (shim_cu.event_create(&s->ev[i], NVT_CU_EVENT_DISABLE_TIMING)) {
			s->ev_broken = 1;
			break;
		}
	tls.in_shim = 0;
	if (s->ev_broken) {
		if (shim_first_time(WARN_YIELD))
			shim_warn("cannot make CUDA events: this task's work in flight is not bounded");
		return -1;
	}
	s->ev_ctx = ctx;
	s->ev_suspect = 0;
	tls.in_shim = 1;
	s->ev_id = shim_ctx_id(ctx);
	tls.in_shim = 0;
	return 0;
}

/* A context call a yielding task follows (ctx_ids): a context destroyed takes its events with
 * it (dropped as the call begins: none is used once it may be gone); a primary context reset or
 * released the last time may have (when the call returned). */
static void ring_context_api(int cbid, const void *data)
{
	struct shim_api_call call;
	int g;

	if (shim_api_call(cbid, data, &call))
		return;
	if (cbid == NVT_CBID_cuCtxDestroy_v2 || cbid == NVT_CBID_cuCtxDestroy) {
		if (call.site != NVT_CB_API_SITE_ENTER)
			return;
		pthread_mutex_lock(&y.lock);
		for (g = 0; g < NVT_MAX_GPUS; g++)
			if (y.s[g].ev_ctx && y.s[g].ev_ctx == call.args[0])
				drop_events(&y.s[g]);
		pthread_mutex_unlock(&y.lock);
		return;
	}
	if (call.site != NVT_CB_API_SITE_EXIT || call.result)
		return;
	g = cbid == NVT_CBID_cuDevicePrimaryCtxRelease_v2 || cbid == NVT_CBID_cuDevicePrimaryCtxRelease
		    ? shim_primary_gone(((const NVT_DEVICE_ARGS *)call.args)->dev)
		    : shim_device_slot(((const NVT_DEVICE_ARGS *)call.args)->dev);
	if (g < 0)
		return;
	pthread_mutex_lock(&y.lock);
	if (y.s[g].ev_ctx) {
		y.s[g].ev_suspect = 1;
		y.s[g].ev_gen++; /* (a launch that decided to record may be of the context that went) */
	}
	pthread_mutex_unlock(&y.lock);
}

/*
 * The masks of s's partition and the own partitions of the higher tasks it
 * follows that lend. Returns 0, or -1 if there is nothing to borrow.
 */
static int borrow_masks(struct yslot *s)
{
	struct nvt_slot_view view = s->own, theirs;
	struct hw_masks none;
	int n = nvt_set_count(&view.tpcs);

	if (s->borrow_ok)
		return s->borrow_ok > 0 ? 0 : -1;
	s->borrow_ok = -1;
	if (view.state != NVT_SLOT_SET)
		return -1; /* it has every TPC already */
	for (int i = 0; i < s->n_w; i++) {
		struct nvt_tpcset own;
		if (nvt_slot_read(&s->w[i].seg->gpu[s->w[i].slot], &theirs, 4) ||
		    (theirs.prio.flags & NVT_PRIOF_NO_LEND))
			continue;
		nvt_prio_own_of(&theirs, &own);
		nvt_set_or(&view.tpcs, &view.tpcs, &own);
	}
	memset(&none, 0, sizeof(none));
	if ((int)nvt_set_count(&view.tpcs) == n || shim_compute(&none, &view, &s->borrow))
		return -1;
	s->borrow_tpcs = view.tpcs;
	s->borrow_ok = 1;
	return 0;
}

/*
 * Whether this launch on slot g may run on the lending tasks' TPCs too: every
 * higher task idle, periodic, not overdue, and its next request due later
 * than this launch's work would take to drain (ahead), so that the TPCs are
 * free again in time; and alive, checked after the slot says it borrows.
 */
static int may_borrow(int g, struct yslot *s, const struct nvt_watched *w, uint64_t now, uint64_t ahead)
{
	if (!(s->cfg.yield & NVT_YIELD_BORROW) || !s->n_w)
		return 0;
	for (int i = 0; i < s->n_w; i++)
		if (!nvt_act_may_lend(&w[i].act, now, ahead + s->launch_ns))
			return 0;
	if (borrow_masks(s))
		return 0;
	publish_borrowing(g, s, now);
	/* A task that ended lends nothing: its TPCs may be another's by now.
	 * The next launch looks again, and drops it. */
	for (int i = 0; i < s->n_w; i++)
		if (!alive(&s->w[i])) {
			s->next_scan_ns = 0;
			publish(g, s, NVT_YS_RUNNING, now);
			return 0;
		}
	return 1;
}

int shim_yield_borrow(int g, struct hw_masks *m)
{
	struct yslot *s = &y.s[g];

	/* Only for the partition it was computed for: a writer may have moved it. */
	if (!tls.borrow || tls.slot != g || s->borrow.seg_seq != m->seg_seq)
		return 0;
	*m = s->borrow;
	return 1;
}

/* Entry of a launch call on slot g: wait as the higher tasks' activity says. */
static void before_launch(int g, void *ctx)
{
	struct yslot *s = &y.s[g];
	struct nvt_watched w[WATCH_MAX];
	uint64_t now = nvt_clock_ns(), start = now, wake, limit;
	int verdict, bounded, waited_bound = 0;

	pthread_mutex_lock(&y.lock);
	configure(s, g);
	if (!s->yields) {
		publish(g, s, NVT_YS_NONE, now);
		pthread_mutex_unlock(&y.lock);
		return;
	}
	if (now >= s->next_scan_ns)
		rescan(s, now);
	limit = start + (uint64_t)NVT_YIELD_MAX_HOLD_MS * 1000000;
	/* Both conditions at once: a request that begins while this launch
	 * waits for its own work to drain holds it back too. */
	for (;;) {
		uint64_t ahead = s->launch_ns > s->cfg.bound_ns ? s->launch_ns : s->cfg.bound_ns;
		int n = watched(s, w, now);
		verdict = nvt_yield_verdict(&s->cfg, w, n, now, ahead, &wake);
		bounded = n && verdict != NVT_YV_BESIDE && (s->cfg.yield & NVT_YIELD_BOUND) &&
			  make_events(s, ctx) == 0;
		if (now >= limit)
			break;
		if (verdict == NVT_YV_GATE || verdict == NVT_YV_AHEAD) {
			publish(g, s, verdict == NVT_YV_GATE ? NVT_YS_GATED : NVT_YS_AHEAD, now);
			pause_ns(wake > now && wake - now < GATE_POLL_NS ? wake - now : GATE_POLL_NS);
			waited_bound = 0;
		} else if (bounded && in_flight(s, waited_bound, now) >=
					      nvt_yield_inflight(s->cfg.bound_ns, s->launch_ns, RING - 1)) {
			/* Its own work in flight: at most bound_ns of it beside a higher task.
			 * Only launches seen done while it waits tell how long one runs. */
			publish(g, s, NVT_YS_BOUND, now);
			pause_ns(POLL_NS);
			waited_bound = 1;
		} else {
			break;
		}
		now = nvt_clock_ns();
	}
	tls.record = bounded && s->head - s->tail < RING;
	tls.ev_gen = s->ev_gen;
	tls.borrow = verdict == NVT_YV_GO && now < limit &&
		     may_borrow(g, s, w, now, s->launch_ns > s->cfg.bound_ns ? s->launch_ns : s->cfg.bound_ns);
	if (now > start) {
		struct nvt_slot_yield *p = &shim.seg->gpu[g].yield;
		__atomic_store_n(&p->held_ns, p->held_ns + (now - start), __ATOMIC_RELAXED);
		__atomic_store_n(&p->holds, p->holds + 1, __ATOMIC_RELAXED);
	}
	publish(g, s, !s->n_w ? NVT_YS_NONE : verdict == NVT_YV_BESIDE ? NVT_YS_BESIDE :
			     tls.borrow ? NVT_YS_BORROWING : NVT_YS_RUNNING, now);
	pthread_mutex_unlock(&y.lock);
}

/* Return of a launch call that was allowed: record its end on its stream. */
static void after_launch(int g, void *stream)
{
	struct yslot *s = &y.s[g];

	pthread_mutex_lock(&y.lock);
	/* (another thread may have dropped its events since before_launch, or seen a primary
	 * context they may live in go: a new generation) */
	if (s->ev_gen == tls.ev_gen && s->ev_ctx && s->head - s->tail < RING) {
		unsigned i = s->head % RING;
		int rc;
		tls.in_shim = 1;
		rc = shim_cu.event_record(s->ev[i], stream);
		tls.in_shim = 0;
		if (rc == 0) {
			s->rec_ns[i] = nvt_clock_ns();
			s->head++;
		}
	}
	pthread_mutex_unlock(&y.lock);
}

/* The stream of a followed launch call's arguments. */
static void *stream_of(int cbid, void *const *args)
{
	void *stream;

	switch (cbid) {
	case NVT_CBID_cuGraphLaunch:
	case NVT_CBID_cuGraphLaunch_ptsz:
		stream = args[1];
		break;
	case NVT_CBID_cuLaunchKernelEx:
	case NVT_CBID_cuLaunchKernelEx_ptsz: {
		const NVT_LAUNCH_CONFIG *c = ((const NVT_LAUNCH_KERNEL_EX_ARGS *)args)->config;
		stream = c ? c->stream : NULL;
		break;
	}
	default:
		stream = ((const NVT_LAUNCH_KERNEL_ARGS *)args)->stream;
		break;
	}
	if (!stream && (cbid == NVT_CBID_cuLaunchKernel_ptsz || cbid == NVT_CBID_cuLaunchKernelEx_ptsz ||
			cbid == NVT_CBID_cuGraphLaunch_ptsz || cbid == NVT_CBID_cuLaunchCooperativeKernel_ptsz))
		stream = NVT_CU_STREAM_PER_THREAD;
	return stream;
}

/* The calls of sync_ids and launch_ids that set-up enabled, bridge_ids, chain_ids, copy_ids and
 * ctx_ids. */
static struct shim_calls sync_calls, launch_calls, bridge_calls, chain_calls, copy_calls, ctx_calls;
/* The driver's enabling call and the shim's subscriber handle (set-up): chain_ids are enabled
 * later, once held steps were seen that chains would shorten. */
static nvt_cb_enable_fn chains_enable;
static uint32_t chains_handle;

/* 1 while follow_chain_calls runs: the program's exit waits for it (FOLLOW_EXIT_WAIT_MS at most),
 * so that the driver is not torn down while it is inside the driver's enabling call. */
static int follow_busy;
#define FOLLOW_EXIT_WAIT_MS 1000

static void *follow_chain_calls(void *unused)
{
	int ok = 1;

	(void)unused;
	for (size_t i = 0; i < N_IDS(chain_ids); i++)
		ok &= shim_calls_follow(&chain_calls, chains_enable, chains_handle, chain_ids[i]) == 0;
	if (!ok && shim_first_time(WARN_BRIDGE))
		shim_warn("the CUDA driver does not report every launch call: held steps are not chained "
			  "behind all of them");
	__atomic_store_n(&follow_busy, 0, __ATOMIC_RELEASE);
	return NULL;
}

/* At exit (before the libraries' destructors, the driver's among them): the thread that
 * enables the launch calls is done, or FOLLOW_EXIT_WAIT_MS passed. */
static void follow_done_at_exit(void)
{
	struct timespec ms = {0, 1000000};
	uint64_t until = nvt_clock_ns() + (uint64_t)FOLLOW_EXIT_WAIT_MS * 1000000;

	while (__atomic_load_n(&follow_busy, __ATOMIC_ACQUIRE) && nvt_clock_ns() < until)
		nanosleep(&ms, NULL);
}

/* Enables chain_ids from a thread of its own, signals blocked there, as profilers enable theirs
 * from their own threads while a program runs (H100, driver 580: docs/hardware-facts.md, "What
 * following the launch calls costs"); enabling them from inside the driver's callback this
 * runs in was never tried on a driver. */
static void follow_chains(void)
{
	pthread_t thread;
	pthread_attr_t attr;
	sigset_t all, old;
	int rc = -1;

	if (chains_enable && atexit(follow_done_at_exit) == 0 && pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		__atomic_store_n(&follow_busy, 1, __ATOMIC_RELEASE);
		rc = pthread_create(&thread, &attr, follow_chain_calls, NULL);
		if (rc)
			__atomic_store_n(&follow_busy, 0, __ATOMIC_RELEASE);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	if (rc) {
		shim_bridge_chains_not_followed();
		if (shim_first_time(WARN_BRIDGE))
			shim_warn("cannot start a thread: held steps are not chained");
	}
}

/* The slot of the calling thread's current context, or -1. */
static int current_slot(void **ctx)
{
	*ctx = NULL;
	if (!shim_cu.ctx_current || shim_cu.ctx_current(ctx) || !*ctx)
		return -1;
	return shim_slot_of_ctx(*ctx);
}

/* 1 if slot g's task is still one whose waits are bridged (-p may have changed its words). */
static int still_bridged(int g)
{
	struct yslot *s = &y.s[g];
	int yes;

	pthread_mutex_lock(&y.lock);
	configure(s, g);
	yes = nvt_bridge_on(nvt_bridge_wanted(s->prio, s->cfg.yield, "1", NULL));
	pthread_mutex_unlock(&y.lock);
	return yes;
}

/* The calls a bridging task follows besides its waits: a context that goes (destroyed, reset,
 * or released the last time) takes its bridges with it; a graph replay holds the last one
 * while it is queued and releases it once queued
 * (its kernels come to the launch path only where shimgraph follows the graph). */
static void bridge_api(int cbid, const void *data)
{
	struct shim_api_call call;
	void *ctx;
	int g;

	if (shim_api_call(cbid, data, &call))
		return;
	if (shim_calls_has(&chain_calls, cbid)) {
		/* Behind a held step's launch, a new held bridge where one is due; behind another
		 * thread's, none left holding its kernel. */
		if (call.site == NVT_CB_API_SITE_EXIT && call.result == 0 && shim_bridge_launch_wanted() &&
		    (g = current_slot(&ctx)) >= 0)
			shim_bridge_launch_done(g, ctx);
	} else if (cbid == NVT_CBID_cuGraphLaunch || cbid == NVT_CBID_cuGraphLaunch_ptsz) {
		if ((g = current_slot(&ctx)) >= 0)
			shim_bridge_graph_launch(g, call.site == NVT_CB_API_SITE_ENTER, call.result == 0);
	} else if (shim_calls_has(&copy_calls, cbid)) {
		/* Queued now (or, to pageable memory, waited for): not behind a bridge. */
		if (call.site == NVT_CB_API_SITE_ENTER && (g = current_slot(&ctx)) >= 0) {
			shim_bridge_release_now(g);
			NVT_MEMCPY_ASYNC_ARGS *a = (NVT_MEMCPY_ASYNC_ARGS *)(uintptr_t)call.args;
			if (a->bytes && a->bytes <= NVT_BRIDGE_COPY_MAX) /* (the lock of still_bridged) */
				shim_bridge_copy(g, ctx, a,
						 cbid == NVT_CBID_cuMemcpyDtoHAsync_v2_ptsz ||
							 cbid == NVT_CBID_cuMemcpyAsync_ptsz,
						 still_bridged(g));
		}
	} else if (cbid == NVT_CBID_cuCtxDestroy_v2 || cbid == NVT_CBID_cuCtxDestroy) {
		if (call.site == NVT_CB_API_SITE_ENTER)
			shim_bridge_context_gone(call.args[0]);
	} else {
		/* A primary context's reset, or its last release, destroys it once its work ends (the
		 * bridges end first), and with it a bridge made there. */
		int release = cbid == NVT_CBID_cuDevicePrimaryCtxRelease_v2 || cbid == NVT_CBID_cuDevicePrimaryCtxRelease;
		CUdevice dev = ((const NVT_DEVICE_ARGS *)call.args)->dev;
		if (call.site == NVT_CB_API_SITE_ENTER)
			shim_bridge_slots_going();
		else if (call.result == 0 && (g = release ? shim_primary_gone(dev) : shim_device_slot(dev)) >= 0)
			shim_bridge_slot_gone(g);
	}
}

/* A stream query (call) answered: a polled stream's wait begun or returned from (shim_yield_polled;
 * a success also ends the request, in shim_yield_api). */
static void stream_queried(int cbid, const struct shim_api_call *call)
{
	void *ctx, *stream = call->args[0];
	int g;

	/* (0 names this thread's default stream in the _ptsz form, the legacy stream in the other) */
	if (!stream && cbid == NVT_CBID_cuStreamQuery_ptsz)
		stream = NVT_CU_STREAM_PER_THREAD;
	if (call->site == NVT_CB_API_SITE_EXIT && (call->result == 0 || call->result == NVT_CUDA_ERROR_NOT_READY) &&
	    (g = current_slot(&ctx)) >= 0)
		shim_yield_polled(g, stream, nvt_slot_launches(&shim.seg->gpu[g]), call->result == 0);
}

void shim_yield_api(int cbid, const void *data)
{
	struct shim_api_call call;
	void *const *args, *ctx;
	int site, result, g, launch_call;

	/* The callback also gets the calls others follow (cuLaunchKernelEx around every such
	 * launch, graph launches): a task without a priority follows none here, and a tracked
	 * one reads the block of its own calls only (tests/bench/launchpath.py, the -ex forms). */
	if (!shim_yield_tracking || tls.in_shim)
		return;
	if (shim_bridge_on && (shim_calls_has(&bridge_calls, cbid) || shim_calls_has(&copy_calls, cbid) ||
			       shim_calls_has(&chain_calls, cbid))) {
		bridge_api(cbid, data);
		return;
	}
	if (shim_calls_has(&ctx_calls, cbid)) {
		ring_context_api(cbid, data);
		return;
	}
	launch_call = shim_yield_following && shim_calls_has(&launch_calls, cbid);
	if ((!launch_call && !shim_calls_has(&sync_calls, cbid)) || shim_api_call(cbid, data, &call))
		return;
	args = call.args;
	site = call.site;
	result = call.result;
	if (launch_call) {
		if (site == NVT_CB_API_SITE_ENTER) {
			tls.slot = -1;
			tls.record = 0;
			tls.borrow = 0;
			if ((g = current_slot(&ctx)) < 0)
				return;
			tls.slot = g;
			before_launch(g, ctx);
		} else {
			if (tls.slot >= 0 && tls.record && result == 0)
				after_launch(tls.slot, stream_of(cbid, args));
			tls.record = 0;
			tls.borrow = 0;
		}
		return;
	}
	if (cbid == NVT_CBID_cuStreamQuery || cbid == NVT_CBID_cuStreamQuery_ptsz) {
		stream_queried(cbid, &call);
	} else if (site == NVT_CB_API_SITE_ENTER) {
		if (!shim_bridge_on)
			return;
		if (cbid == NVT_CBID_cuCtxSynchronize || cbid == NVT_CBID_cuCtxSynchronize_v2) {
			/* (it waits for the bridges' stream too) */
			if ((g = current_slot(&ctx)) >= 0)
				shim_bridge_ctx_wait(g, ctx, still_bridged(g));
			else
				shim_bridge_release_all();
		} else if ((g = current_slot(&ctx)) < 0)
			return;
		else if (cbid == NVT_CBID_cuStreamSynchronize || cbid == NVT_CBID_cuStreamSynchronize_ptsz ||
			 cbid == NVT_CBID_cuEventSynchronize) {
			shim_bridge_wait(g, ctx, still_bridged(g));
			if (shim_bridge_chains_due())
				follow_chains();
		} else
			shim_bridge_release_now(g); /* a copy: queued now, it must not wait behind a bridge */
		return;
	} else if (shim_bridge_on) {
		shim_bridge_returned(current_slot(&ctx));
	}
	if (site != NVT_CB_API_SITE_EXIT || result != 0)
		return;
	/* A synchronisation returned: the task's request (on this GPU) ended. */
	shim_lease_check(); /* (TPCs a dead agent lent: shimlease.c) */
	if ((g = current_slot(&ctx)) >= 0) {
		synchronized(g);
		return;
	}
	for (g = 0; g < NVT_MAX_GPUS; g++)
		synchronized(g);
}

/*
 * At set-up: a task started with a priority (prio: its level) publishes its
 * activity; one below high also follows its launch calls to yield.
 */
void shim_yield_setup(nvt_cb_enable_fn enable, uint32_t handle, uint8_t prio, uint32_t yield)
{
	int ok = 1;

	if (prio == NVT_PRIO_NONE)
		return;
	for (size_t i = 0; i < N_IDS(sync_ids); i++)
		ok &= shim_calls_follow(&sync_calls, enable, handle, sync_ids[i]) == 0;
	if (!ok || !shim_cu.ctx_current) {
		if (shim_first_time(WARN_YIELD))
			shim_warn("the CUDA driver does not report synchronisations: this task's "
				  "requests cannot be followed, and tasks of lower priority hold back "
				  "for %d ms after each of its launches instead",
				  NVT_YIELD_HOLD_MS);
		return;
	}
	shim_yield_tracking = 1;
	shim_bridge_setup(prio, yield);
	for (size_t i = 0; i < N_IDS(bridge_ids) && shim_bridge_on; i++)
		if (shim_calls_follow(&bridge_calls, enable, handle, bridge_ids[i])) {
			/* Without them a graph replay waits out the linger, a context that goes leaves
			 * its bridge behind: no bridge. */
			shim_bridge_on = 0;
			if (shim_first_time(WARN_BRIDGE))
				shim_warn("the CUDA driver does not report the calls the bridge follows: this "
					  "task's synchronised steps are not bridged");
		}
	/* Its kernel launch calls, where its held steps are chained: from the start with
	 * NVTASKSET_BRIDGE_REARM=1, else once held steps are seen that chains would shorten
	 * (following them costs each launch, core/bridge.h). */
	chains_enable = enable;
	chains_handle = handle;
	for (size_t i = 0; i < N_IDS(chain_ids) && shim_bridge_chains(); i++)
		shim_calls_follow(&chain_calls, enable, handle, chain_ids[i]);
	/* Without them its copies are the driver's (each may let the GPU switch away). */
	for (size_t i = 0; i < N_IDS(copy_ids) && shim_bridge_on; i++)
		shim_calls_follow(&copy_calls, enable, handle, copy_ids[i]);
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		if (!nvt_uuid_is_zero(shim.seg->gpu[g].uuid))
			shim_yield_slot_ready(g);
	if (!nvt_yield_by_shim(prio, yield))
		return;
	for (size_t i = 0; i < N_IDS(launch_ids) && ok; i++)
		ok &= shim_calls_follow(&launch_calls, enable, handle, launch_ids[i]) == 0;
	if (!ok || !shim_cu.event_create || !shim_cu.event_record || !shim_cu.event_query) {
		if (shim_first_time(WARN_YIELD))
			shim_warn("the CUDA driver does not report launch calls: this task does not hold "
				  "back for tasks of higher priority");
		return;
	}
	shim_yield_following = 1;
	/* A context destroyed takes its events with it: without these the events stay those of a
	 * context that went, bounding nothing in the next (one made again at the same address is
	 * told apart by its id all the same). */
	for (size_t i = 0; i < N_IDS(ctx_ids); i++)
		shim_calls_follow(&ctx_calls, enable, handle, ctx_ids[i]);
}

int shim_yield_higher(int g, struct nvt_watched *out, uint64_t now)
{
	struct yslot *s = &y.s[g];
	int n;

	pthread_mutex_lock(&y.lock);
	configure(s, g);
	if (now >= s->next_scan_ns)
		rescan(s, now);
	n = watched(s, out, now);
	pthread_mutex_unlock(&y.lock);
	return n;
}

void shim_yield_show(int g, uint32_t state, uint64_t now)
{
	struct yslot *s = &y.s[g];

	pthread_mutex_lock(&y.lock);
	if (!s->yields)
		publish(g, s, state, now);
	pthread_mutex_unlock(&y.lock);
}

/* In a forked child (single-threaded): its own state, no events of the parent's context. */
void shim_yield_after_fork(void)
{
	pthread_mutex_init(&y.lock, NULL);
	shim_bridge_after_fork();
	poll.waiting = poll.have = poll.fast = 0; /* (its bridge is the parent's) */
	__atomic_store_n(&follow_busy, 0, __ATOMIC_RELEASE); /* (the thread is the parent's) */
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		drop_events(&y.s[g]);
		y.s[g].cfg_seq = 0;
		/* Its own segment says nothing yet (a new file). */
		y.s[g].state = NVT_YS_NONE;
		memset(&y.s[g].published, 0, sizeof(y.s[g].published));
	}
}
