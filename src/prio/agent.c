/*
 * agent.c - the priority agent's loop (see agent.h, docs/priorities.md): it
 * polls the tasks it follows, decides and writes their partitions; the table
 * of those tasks, kept up with the run directories, is agenttable.c's, and
 * their shared state agentint.h's (agentlock.c holds the rest).
 * Over 500 lines on purpose: the poll, each GPU's decision and the writes it
 * leads to are one loop on one state.
 *
 * Each poll reads, by one pread per managed slot, the slot's sequence number
 * and launch counters; a slot whose sequence number moved is read again
 * whole (a writer changed its own partition or priority). A task whose
 * counters moved within the activity window is active. The rules of
 * core/prio.c then give each managed task its partition, and the agent
 * writes those that differ, taking the writer's lock without waiting (a
 * writer that holds it, -p or a shim making a segment, is the same user's
 * or root: the agent tries again at the next poll). The agent never writes
 * a task whose partition stays, so a higher task's shim sees nothing of it.
 * It decides only when something changed since the last decision (a task's
 * activity, a slot's sequence number, tasks that came or went): a steady
 * poll costs the preads alone.
 *
 * Bounded work: at most NVT_AGENT_MAX_TASKS tasks; a look at the run
 * directories lists them without opening a file, reads (one pread each) at
 * most NVT_AGENT_READS_PER_SCAN files it does not follow that are new or
 * changed since it read them and NVT_AGENT_REREADS_PER_SCAN others, opens
 * whole at most NVT_AGENT_OPENS_PER_SCAN tasks with a priority, and looks are
 * spaced at least ten times the processor time the last one took. Segments
 * that cannot be read consistently are skipped for this poll; a file its
 * owner shrank drops the task. Nothing waits on another user.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "agentint.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/prio.h"
#include "core/gpusel.h"
#include "core/tpcset.h"
#include "seg/segfile.h"
#include "os/clock.h"

/* The processor time this thread has used. */
static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void agent_event(const struct agent *a, const char *fmt, ...)
{
	char text[NVT_LIST_TEXT_MAX + 200];
	va_list ap;

	if (!a->o->event)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	a->o->event(a->o->event_arg, text);
}

/* What the agent cannot do: said even when it is quiet (its log keeps it). */
static void warn(const struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(const struct agent *a, const char *fmt, ...)
{
	void (*say)(void *, const char *) = a->o->warn ? a->o->warn : a->o->event;
	char text[256];
	va_list ap;

	if (!say)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	say(a->o->event_arg, text);
}

/* Notes that the task of pid (with a priority) cannot be followed, for why; said once. */
void agent_note(struct agent *a, pid_t pid, unsigned why)
{
	int i;

	for (i = 0; i < a->n_notes && a->notes[i].pid != pid; i++)
		;
	if (i < a->n_notes && a->notes[i].why == why)
		return;
	if (i == a->n_notes && a->n_notes == NVT_AGENT_MAX_NOTES)
		return; /* said for the first NVT_AGENT_MAX_NOTES, enough to see what is wrong */
	warn(a, "cannot follow pid %ld: %s", (long)pid, nvt_agent_why_text(why));
	a->notes[i] = (struct note){pid, why};
	a->n_notes += i == a->n_notes;
	a->notes_changed = 1;
}

/* The task of pid is followed now, or gone: its note (of any why, or of why only) goes. */
void agent_unnote(struct agent *a, pid_t pid, unsigned why)
{
	for (int i = 0; i < a->n_notes; i++)
		if (a->notes[i].pid == pid && (!why || a->notes[i].why == why)) {
			a->notes[i] = a->notes[--a->n_notes];
			a->notes_changed = 1;
			return;
		}
}

/* Writes the notes to the status file for -l, if they changed. */
void agent_publish_notes(struct agent *a)
{
	static struct nvt_agent_note out[NVT_AGENT_MAX_NOTES];

	if (!a->notes_changed)
		return;
	for (int i = 0; i < a->n_notes; i++)
		out[i] = (struct nvt_agent_note){a->notes[i].pid, a->notes[i].why};
	/* Out of descriptors is one thing it must be able to say. */
	if (a->spare_fd >= 0)
		close(a->spare_fd);
	if (nvt_agent_status_write(a->o->base, out, a->n_notes) == 0)
		a->notes_changed = 0;
	a->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/*
 * Gives slot s of t the partition tpcs and mode, unless a writer changed the
 * slot since the agent read it (it reads it again at the next poll). Waits
 * at most wait_ms for the writer's lock. Returns 0 if written.
 */
static int write_slot(struct agent *a, struct task *t, struct slot *s, const struct nvt_tpcset *tpcs,
		      uint8_t mode, int wait_ms)
{
	struct nvt_slot_view now, want;
	char list[NVT_LIST_TEXT_MAX];
	int rc;

	agent_open_lock(a, t);
	rc = nvt_seg_lock(&t->h, wait_ms);
	if (rc) {
		int err = errno;
		agent_unlock_task(t);
		if (rc == NVT_SEG_ECORRUPT || rc == NVT_SEG_ENOTASK)
			agent_drop_task(t);
		/* Another writer keeps it (its user's -p, or a lock she holds for ever), or
		 * no descriptor for the lock file: tried again at each poll, and said. */
		if (rc == NVT_SEG_EBUSY && ++s->lock_fails == NVT_AGENT_LOCK_TRIES)
			agent_note(a, t->pid, NVT_AGENT_WHY_LOCK_HELD);
		if (rc == NVT_SEG_ESYS && (err == EMFILE || err == ENFILE))
			agent_note(a, t->pid, NVT_AGENT_WHY_FILES);
		return -1;
	}
	if (s->lock_fails >= NVT_AGENT_LOCK_TRIES)
		agent_unnote(a, t->pid, NVT_AGENT_WHY_LOCK_HELD);
	s->lock_fails = 0;
	agent_unnote(a, t->pid, NVT_AGENT_WHY_FILES);
	/* Under the lock no live writer is inside: what was read is still so? */
	if (nvt_seg_read(&t->h, s->index, &now, NULL) || now.seq != s->view.seq) {
		agent_unlock_task(t);
		s->settled = 0;
		return -1;
	}
	want = now;
	want.state = NVT_SLOT_SET;
	want.tpcs = *tpcs;
	want.prio.mode = mode;
	/* An unpartitioned slot's own partition is every TPC: keep it so once tpcs is set. */
	if (!nvt_set_count(&want.prio.own))
		want.prio.own = s->own;
	rc = nvt_seg_write(&t->h, s->index, &want, 0);
	if (rc == 0 && nvt_seg_read(&t->h, s->index, &now, NULL) == 0)
		agent_take_view(s, &now);
	else
		s->settled = 0;
	agent_unlock_task(t);
	if (rc) {
		agent_drop_task(t);
		return -1;
	}
	s->changed = !nvt_set_equal(tpcs, &s->own) || mode != NVT_MODE_OWN;
	s->written_seq = s->settled ? s->view.seq : 0;
	s->written_ns = (int64_t)nvt_clock_ns();
	nvt_format_list(tpcs, list, sizeof(list));
	agent_event(a, "pid %ld slot %d: TPCs %s (%s)", (long)t->pid, s->index, list, nvt_prio_mode_name(mode));
	return 0;
}

/* Reads slot s's sequence number and launches; again whole if a writer moved it. */
static void poll_slot(struct agent *a, struct task *t, struct slot *s, int64_t hold_ns)
{
	struct nvt_gpu_slot copy;
	uint64_t launches;

	if (nvt_seg_pread_slot_raw(t->h.fd, s->index, &copy)) {
		agent_drop_task(t); /* its owner shrank the file */
		return;
	}
	launches = nvt_slot_launches(&copy);
	/* The task's first launch on what we wrote (its shim reports it): the reaction's
	 * second half, in the log (within a poll of when it happened). */
	if (s->written_seq && copy.applied_seq == s->written_seq) {
		agent_event(a, "pid %ld slot %d: applied within %lld us of the write", (long)t->pid, s->index,
		      (long long)((a->now - s->written_ns) / 1000));
		s->written_seq = 0;
	}
	if (launches != s->launches) {
		s->launches = launches;
		s->active_until = a->now + hold_ns;
	}
	if (copy.seq & 1) {
		s->settled = 0; /* a writer inside: next poll (no retries here) */
		return;
	}
	if (copy.seq != s->view.seq || !s->settled) {
		struct nvt_slot_view view;
		int rc = nvt_seg_read(&t->h, s->index, &view, NULL);
		if (rc == NVT_SEG_SHORT) {
			agent_drop_task(t);
			return;
		}
		if (rc) {
			s->settled = 0; /* a writer inside (or one that died there): next poll */
			return;
		}
		agent_take_view(s, &view);
		if (!s->managed)
			a->dirty = 1; /* it lost its priority: the others are decided again */
	}
}

/* The managed slots of one GPU (and one user), as nvt_prio_decide takes them. */
struct gpu_set {
	uint8_t uuid[16];
	const struct nvt_topology *topo;
	int n;
	struct nvt_prio_task in[NVT_AGENT_MAX_TASKS];
	struct task *task[NVT_AGENT_MAX_TASKS];
	struct slot *slot[NVT_AGENT_MAX_TASKS];
	int member[NVT_AGENT_MAX_TASKS]; /* decided here; 0: root's task, counted only */
};

/*
 * Whether task t takes part in the decision for the tasks of first's user
 * (members), counts in it (root's tasks, for another user's), or neither. A
 * container's tasks decide among their container's only: its root is root
 * there, not on the host, so its priorities count for no task outside it,
 * while the host root's count in every set.
 */
static int role_of(const struct agent *a, const struct task *t, const struct task *first)
{
	int here = !strcmp(t->h.container, first->h.container);

	if (here && (a->o->across_users || t->owner == first->owner))
		return 2; /* a member */
	return t->owner == 0 && (here || !t->h.container[0]); /* root's: counted, decided in root's own set */
}

/* Decides and writes the partitions of the managed slots on the GPU of slot first
 * (of its user, or with --across-users of every user, in its container or on the host). */
static void decide_gpu(struct agent *a, struct gpu_set *set, int first_task, int first_slot, int *done)
{
	const uint8_t *uuid = a->tasks[first_task].s[first_slot].view.uuid;
	const struct task *first = &a->tasks[first_task];

	set->n = 0;
	set->topo = NULL;
	memcpy(set->uuid, uuid, sizeof(set->uuid));
	for (int i = 0; i < a->n; i++) {
		struct task *t = &a->tasks[i];
		int role = t->ignored ? 0 : role_of(a, t, first);
		for (int k = 0; k < t->n && role; k++) {
			struct slot *s = &t->s[k];
			struct nvt_prio_task *p = &set->in[set->n];
			if (!s->managed || memcmp(s->view.uuid, set->uuid, 16) || set->n == NVT_AGENT_MAX_TASKS)
				continue;
			if (role == 2)
				done[i * NVT_MAX_GPUS + k] = 1;
			set->member[set->n] = role == 2;
			memset(p, 0, sizeof(*p));
			p->own = s->own;
			p->prio = s->view.prio.prio;
			p->flags = s->view.prio.flags;
			p->guard = s->view.prio.guard;
			p->yield = s->view.prio.yield;
			p->active = a->now < s->active_until;
			if (!set->topo && s->view.topo.n_tpcs)
				set->topo = &s->view.topo;
			set->task[set->n] = t;
			set->slot[set->n++] = s;
		}
	}
	nvt_prio_decide(set->topo, a->o->default_guard, set->in, set->n);
	for (int j = 0; j < set->n; j++) {
		struct slot *s = set->slot[j];
		/* Lending is no change to the lender: -l tells it from the borrowers. */
		uint8_t mode = set->in[j].mode == NVT_MODE_LENDING ? NVT_MODE_OWN : set->in[j].mode;
		if (!set->member[j] || !s->settled || set->task[j]->ignored)
			continue;
		s->was_active = set->in[j].active;
		s->decided_seq = s->view.seq;
		/* Nothing to write: the partition stays (an unpartitioned slot on its own TPCs too). */
		if ((s->view.state == NVT_SLOT_SET ? nvt_set_equal(&s->view.tpcs, &set->in[j].tpcs)
						   : nvt_set_equal(&s->own, &set->in[j].tpcs)) &&
		    s->view.prio.mode == mode)
			continue;
		if (write_slot(a, set->task[j], s, &set->in[j].tpcs, mode, 0))
			s->decided_seq = 0; /* not written (a writer held the lock): again next poll */
		else
			s->decided_seq = s->view.seq;
	}
}

/* Whether some managed slot changed since the last decision: its activity, or what it holds. */
static int needs_decision(struct agent *a)
{
	int dirty = a->dirty;

	for (int i = 0; i < a->n && !dirty; i++) {
		struct task *t = &a->tasks[i];
		for (int k = 0; k < t->n && !t->ignored; k++) {
			const struct slot *s = &t->s[k];
			if (s->managed && ((a->now < s->active_until) != s->was_active ||
					   s->view.seq != s->decided_seq))
				dirty = 1;
		}
	}
	a->dirty = 0;
	return dirty;
}

/* One poll: read every managed slot, then decide each GPU. Returns the managed slots. */
static int poll_all(struct agent *a, int64_t hold_ns)
{
	static struct gpu_set set;
	static int done[NVT_AGENT_MAX_TASKS * NVT_MAX_GPUS];
	int managed = 0;

	for (int i = 0; i < a->n; i++) {
		struct task *t = &a->tasks[i];
		for (int k = 0; k < t->n && !t->ignored; k++)
			if (t->s[k].managed)
				poll_slot(a, t, &t->s[k], hold_ns);
	}
	/* Deciding costs time square in the tasks of a GPU: only when something changed. */
	if (!needs_decision(a)) {
		for (int i = 0; i < a->n; i++)
			for (int k = 0; k < a->tasks[i].n && !a->tasks[i].ignored; k++)
				managed += a->tasks[i].s[k].managed;
		return managed;
	}
	memset(done, 0, sizeof(int) * (size_t)a->n * NVT_MAX_GPUS);
	for (int i = 0; i < a->n; i++) {
		struct task *t = &a->tasks[i];
		for (int k = 0; k < t->n && !t->ignored; k++) {
			if (!t->s[k].managed)
				continue;
			managed++;
			if (!done[i * NVT_MAX_GPUS + k])
				decide_gpu(a, &set, i, k, done);
		}
	}
	return managed;
}

/* Whether slot s of t holds its own partition (read again: what -p wrote meanwhile is its own). */
static int has_own_back(struct task *t, struct slot *s)
{
	struct nvt_slot_view view;

	if (nvt_seg_read(&t->h, s->index, &view, NULL) == 0)
		agent_take_view(s, &view);
	return !s->managed || (nvt_set_equal(&s->view.tpcs, &s->own) && s->view.prio.mode == NVT_MODE_OWN);
}

/*
 * Gives every slot the agent changed its own partition back, at most
 * NVT_AGENT_RESTORE_MS in all (a service must still stop in time). Every try
 * takes the writer's lock without waiting, in rounds NVT_AGENT_RESTORE_ROUND_MS
 * apart: a lock that one user holds for ever costs a few system calls a round,
 * never the other users' share of the time (waiting 300 ms a slot, 8 locked
 * segments of one user used it all up, and others' tasks stayed guarded).
 * Says which slots it could not give back. Returns how many.
 */
static int restore_all(struct agent *a)
{
	int64_t deadline = (int64_t)nvt_clock_ns() + (int64_t)NVT_AGENT_RESTORE_MS * 1000000;
	struct timespec round = {0, (long)NVT_AGENT_RESTORE_ROUND_MS * 1000000};
	int left;

	for (;;) {
		int last = (int64_t)nvt_clock_ns() >= deadline;
		left = 0;
		for (int i = 0; i < a->n; i++) {
			struct task *t = &a->tasks[i];
			for (int k = 0; k < t->n && !t->ignored; k++) {
				struct slot *s = &t->s[k];
				if (has_own_back(t, s) || write_slot(a, t, s, &s->own, NVT_MODE_OWN, 0) == 0 ||
				    t->ignored)
					continue;
				left++;
				if (last)
					warn(a, "pid %ld slot %d: not given its own partition back (a writer "
					     "holds its lock, or keeps it mid-write)", (long)t->pid, s->index);
			}
		}
		if (!left || last)
			return left;
		nanosleep(&round, NULL);
	}
}

/* The tasks with a managed slot, as last read (standing by: not polled). */
static int managed_tasks(const struct agent *a)
{
	int n = 0;

	for (int i = 0; i < a->n; i++)
		n += !a->tasks[i].ignored && a->tasks[i].managed;
	return n;
}

/*
 * A user's agent stands by while root's runs (on), writing nothing; when
 * root's ends (off), it reads every slot again (root's gave them their own
 * partitions back) and manages them again.
 */
static void enter_standby(struct agent *a, int on)
{
	for (int i = 0; i < a->n; i++)
		for (int k = 0; k < a->tasks[i].n; k++) {
			a->tasks[i].s[k].settled = 0;
			a->tasks[i].s[k].changed = 0;
		}
	a->dirty = 1;
	agent_event(a, on ? "root's agent runs: standing by" : "root's agent ended: managing again");
}

/* How many descriptors it has open now, and may have (fd_base, fd_limit). */
static void count_descriptors(struct agent *a)
{
	struct rlimit files;
	int n = nvt_proc_fd_count(0);

	a->fd_limit = getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < INT32_MAX
			      ? (int)files.rlim_cur : INT32_MAX;
	a->fd_base = n < 0 ? 3 : n; /* at least stdin, stdout, stderr */
}

int nvt_agent_run(const struct nvt_agent_opts *o)
{
	struct agent a = {.o = o};
	int64_t hold_ns = (int64_t)o->hold_ms * 1000000, scan_took = 0, next_beat = 0;
	struct timespec pause = {(time_t)(o->poll_us / 1000000), (long)(o->poll_us % 1000000) * 1000};
	int rc = NVT_AGENT_STOPPED, standby = 0;

	a.tasks = calloc(NVT_AGENT_MAX_TASKS, sizeof(*a.tasks));
	a.notes = calloc(NVT_AGENT_MAX_NOTES, sizeof(*a.notes));
	if (!a.tasks || !a.notes) {
		free(a.tasks);
		free(a.notes);
		return NVT_AGENT_ERROR;
	}
	a.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	a.notes_changed = 1; /* none yet: a status file of an earlier agent is replaced */
	count_descriptors(&a);
	a.now = (int64_t)nvt_clock_ns();
	a.idle_since = a.now;
	while (!*o->stop) {
		a.now = (int64_t)nvt_clock_ns();
		if (a.now >= next_beat) {
			nvt_agent_heartbeat(o->base);
			next_beat = a.now + (int64_t)NVT_AGENT_HEARTBEAT_MS * 1000000;
		}
		if (a.now >= a.next_scan) {
			int64_t every = (int64_t)NVT_AGENT_RESCAN_MS * 1000000, cpu = cpu_ns();
			int root_runs = agent_scan(&a, hold_ns) == NVT_AGENT_ROOT_RUNS;
			if (root_runs != standby)
				enter_standby(&a, root_runs);
			standby = root_runs;
			scan_took = cpu_ns() - cpu;
			/* A look that took long (many files) is made less often: by the processor
			 * time it took, not the time it waited for a processor on a busy machine
			 * (which spaced looks seconds apart at a load of 50). */
			a.next_scan = a.now + (every > 10 * scan_took ? every : 10 * scan_took);
			a.now = (int64_t)nvt_clock_ns();
		}
		if (standby ? managed_tasks(&a) : poll_all(&a, hold_ns))
			a.idle_since = a.now;
		else if (o->idle_exit_s && a.now - a.idle_since >= (int64_t)o->idle_exit_s * 1000000000) {
			rc = NVT_AGENT_IDLE;
			break;
		}
		if (standby) {
			/* Root's agent manages the tasks: look again at the next scan. */
			struct timespec until = {(time_t)((a.next_scan - a.now) / 1000000000),
						 (long)((a.next_scan - a.now) % 1000000000)};
			nanosleep(a.next_scan > a.now ? &until : &pause, NULL);
			continue;
		}
		nanosleep(&pause, NULL);
	}
	/* Standing by for root's agent: it manages these tasks now. */
	if (!standby && restore_all(&a) && rc == NVT_AGENT_STOPPED)
		rc = NVT_AGENT_STOPPED_LEFT;
	for (int i = 0; i < a.n; i++)
		agent_drop_task(&a.tasks[i]);
	free(a.tasks);
	free(a.notes);
	free(a.known);
	if (a.spare_fd >= 0)
		close(a.spare_fd);
	return rc;
}
