/*
 * agent.c - the priority agent's loop (see agent.h, docs/priorities.md).
 * Over 600 lines on purpose: the loop, its task table and its writes share
 * the agent's state, which one file keeps private (agentlock.c holds the rest).
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
#include "agent.h"

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

/* One GPU slot of a task, as the agent follows it. */
struct slot {
	int index;               /* in the segment */
	struct nvt_slot_view view; /* the last consistent copy */
	struct nvt_tpcset own;   /* its own partition (nvt_prio_own_of) */
	uint64_t launches;
	int64_t active_until;    /* active while the clock is before this */
	int managed;             /* a priority, and an own partition known */
	int settled;             /* view is what the segment holds */
	int changed;             /* we gave it a partition other than own */
	uint64_t written_seq;    /* the seq of our last write until a launch applied it; 0: none */
	int64_t written_ns;      /* when we wrote it */
	int was_active;          /* as the last decision saw it */
	uint64_t decided_seq;    /* view.seq the last decision left in place; 0: decide again */
	int lock_fails;          /* writes in a row that found the writer's lock held */
};

struct task {
	pid_t pid;
	uid_t owner;             /* whose priority its priority is (nvt_prio_owner) */
	struct nvt_seg_handle h; /* writable */
	int n;
	struct slot s[NVT_MAX_GPUS];
	int managed;             /* some slot is */
	int ignored;             /* dropped (h closed): out of the table at the next look */
	int retry;               /* dropped: looked at afresh at the next look */
	int seen;                /* listed by the last look */
};

/* A task with a priority the agent cannot follow (or change), and why. */
struct note {
	pid_t pid;
	unsigned why; /* enum nvt_agent_why */
};

/* A file named like a segment that holds nothing to follow (no priority, no segment of
 * the task it names, not the agent's to manage), as it was when the agent read it. */
struct known {
	dev_t dev;
	ino_t ino;
	pid_t pid;
	uid_t uid;
	struct timespec ctime;
};

/*
 * The table holds the tasks with a priority that it follows (an open segment
 * each, and nothing else: the writer's lock file is opened for a write only).
 * The files it does not follow it remembers by device, inode and ctime (known),
 * and holds nothing of them: each look lists the run directories without
 * opening a file, reads the new or changed files (a new task, or a priority
 * that -p wrote, which changes the ctime), NVT_AGENT_READS_PER_SCAN a look,
 * then NVT_AGENT_REREADS_PER_SCAN of the known ones in turn (a priority written
 * through a mapping that was written before changes no time of the file). What it
 * cannot follow it notes: said once (warn), and kept in its status file for -l.
 */
struct agent {
	const struct nvt_agent_opts *o;
	struct task *tasks;
	int n;
	struct note *notes;
	int n_notes, notes_changed;
	int spare_fd;    /* /dev/null, let go to write the status file when out of descriptors */
	int fd_base;     /* descriptors open before it followed any task */
	int fd_limit;    /* RLIMIT_NOFILE */
	int64_t now, next_scan, idle_since;
	unsigned rotate[2]; /* where the next look starts reading files it does not follow
			     * (new or changed ones; known ones) */
	struct known *known; /* the files the last look knew hold nothing to follow, sorted */
	int n_known;
	int dirty;       /* decide at the next poll whatever the slots say (tasks came or went) */
};


/* The processor time this thread has used. */
static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void event(const struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void event(const struct agent *a, const char *fmt, ...)
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
static void note(struct agent *a, pid_t pid, unsigned why)
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
static void unnote(struct agent *a, pid_t pid, unsigned why)
{
	for (int i = 0; i < a->n_notes; i++)
		if (a->notes[i].pid == pid && (!why || a->notes[i].why == why)) {
			a->notes[i] = a->notes[--a->n_notes];
			a->notes_changed = 1;
			return;
		}
}

/* Writes the notes to the status file for -l, if they changed. */
static void publish_notes(struct agent *a)
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

/* Takes what view says of its priority and own partition into s. */
static void take_view(struct slot *s, const struct nvt_slot_view *view)
{
	s->view = *view;
	s->settled = 1;
	nvt_prio_own_of(view, &s->own);
	s->managed = view->prio.prio != NVT_PRIO_NONE && nvt_set_count(&s->own) > 0;
}

/*
 * Reads the GPU slots of t again: the whole file by one pread, then, for each
 * slot whose sequence number moved, a sequence-locked copy. A slot mid-write
 * keeps what was read before (unsettled); one that a writer keeps odd costs
 * no more than that. Returns 0, or -1 if the file is no segment any more.
 */
static int read_task(struct task *t, int64_t now, int64_t hold_ns)
{
	static struct nvt_segment copy;
	struct slot old[NVT_MAX_GPUS];
	int n_old = t->n;

	if (nvt_seg_pread_whole(t->h.fd, &copy))
		return -1;
	memcpy(old, t->s, sizeof(old));
	t->n = 0;
	t->managed = 0;
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct nvt_slot_status st;
		struct nvt_slot_view view;
		struct slot *s = &t->s[t->n];
		const struct slot *was = NULL;
		uint64_t seq = copy.gpu[g].seq;
		int rc = -1;

		for (int i = 0; i < n_old; i++)
			if (old[i].index == g)
				was = &old[i];
		if (was && was->settled && seq == was->view.seq) {
			*s = *was; /* unchanged */
		} else if (!(seq & 1) && (rc = nvt_seg_read(&t->h, g, &view, &st)) == 0) {
			if (nvt_uuid_is_zero(view.uuid))
				continue; /* a free slot */
			if (was) {
				*s = *was; /* keeps its activity and what we did */
			} else {
				/* New to us: active now if it launched at all (protect first). */
				memset(s, 0, sizeof(*s));
				s->launches = st.launches;
				s->active_until = st.launches ? now + hold_ns : 0;
			}
			s->index = g;
			take_view(s, &view);
		} else if (rc == NVT_SEG_SHORT) {
			return -1;
		} else if (was) {
			*s = *was; /* a writer inside it (or one that died there): next look */
			s->settled = 0;
		} else {
			continue;
		}
		t->managed |= s->managed;
		t->n++;
	}
	return 0;
}

static void drop_task(struct task *t)
{
	if (!t->ignored)
		nvt_seg_close(&t->h);
	t->ignored = 1;
	t->retry = 1; /* open it afresh at the next look, if it is still there */
	t->n = 0;
	t->managed = 0;
}

/* Lets the writer's lock of t go (nvt_seg_lock took it and mapped the segment), and
 * closes the lock file: a task followed holds one descriptor, its segment. */
static void unlock_task(struct task *t)
{
	if (t->h.seg)
		munmap(t->h.seg, sizeof(struct nvt_segment));
	t->h.seg = NULL;
	if (t->h.locked)
		nvt_lock_byte(t->h.lock_fd, t->h.head.pidns, t->h.head.pid, F_UNLCK);
	t->h.locked = 0;
	if (t->h.lock_fd >= 0)
		close(t->h.lock_fd);
	t->h.lock_fd = -1;
}

/* Opens the writer's lock file of t's run directory for a write (nvt_seg_lock says
 * why, through h.lock_errno, if it cannot). */
static void open_lock(struct agent *a, struct task *t)
{
	int dirfd;

	if (t->h.lock_fd >= 0)
		return;
	dirfd = nvt_seg_handle_dir(a->o->base, &t->h);
	t->h.lock_fd = dirfd < 0 ? -1 : nvt_lock_open(dirfd, t->h.owner);
	t->h.lock_errno = t->h.lock_fd < 0 ? errno : 0;
	if (dirfd >= 0)
		close(dirfd);
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

	open_lock(a, t);
	rc = nvt_seg_lock(&t->h, wait_ms);
	if (rc) {
		int err = errno;
		unlock_task(t);
		if (rc == NVT_SEG_ECORRUPT || rc == NVT_SEG_ENOTASK)
			drop_task(t);
		/* Another writer keeps it (its user's -p, or a lock she holds for ever), or
		 * no descriptor for the lock file: tried again at each poll, and said. */
		if (rc == NVT_SEG_EBUSY && ++s->lock_fails == NVT_AGENT_LOCK_TRIES)
			note(a, t->pid, NVT_AGENT_WHY_LOCK_HELD);
		if (rc == NVT_SEG_ESYS && (err == EMFILE || err == ENFILE))
			note(a, t->pid, NVT_AGENT_WHY_FILES);
		return -1;
	}
	if (s->lock_fails >= NVT_AGENT_LOCK_TRIES)
		unnote(a, t->pid, NVT_AGENT_WHY_LOCK_HELD);
	s->lock_fails = 0;
	unnote(a, t->pid, NVT_AGENT_WHY_FILES);
	/* Under the lock no live writer is inside: what was read is still so? */
	if (nvt_seg_read(&t->h, s->index, &now, NULL) || now.seq != s->view.seq) {
		unlock_task(t);
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
		take_view(s, &now);
	else
		s->settled = 0;
	unlock_task(t);
	if (rc) {
		drop_task(t);
		return -1;
	}
	s->changed = !nvt_set_equal(tpcs, &s->own) || mode != NVT_MODE_OWN;
	s->written_seq = s->settled ? s->view.seq : 0;
	s->written_ns = (int64_t)nvt_clock_ns();
	nvt_format_list(tpcs, list, sizeof(list));
	event(a, "pid %ld slot %d: TPCs %s (%s)", (long)t->pid, s->index, list, nvt_prio_mode_name(mode));
	return 0;
}

/* Reads slot s's sequence number and launches; again whole if a writer moved it. */
static void poll_slot(struct agent *a, struct task *t, struct slot *s, int64_t hold_ns)
{
	struct nvt_gpu_slot copy;
	uint64_t launches;

	if (nvt_seg_pread_slot_raw(t->h.fd, s->index, &copy)) {
		drop_task(t); /* its owner shrank the file */
		return;
	}
	launches = nvt_slot_launches(&copy);
	/* The task's first launch on what we wrote (its shim reports it): the reaction's
	 * second half, in the log (within a poll of when it happened). */
	if (s->written_seq && copy.applied_seq == s->written_seq) {
		event(a, "pid %ld slot %d: applied within %lld us of the write", (long)t->pid, s->index,
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
			drop_task(t);
			return;
		}
		if (rc) {
			s->settled = 0; /* a writer inside (or one that died there): next poll */
			return;
		}
		take_view(s, &view);
		if (!s->managed)
			a->dirty = 1; /* it lost its priority: the others are decided again */
	}
}

/*
 * Whose priority t's priority is: its segment's user, unless the process runs as
 * another user than root's segment says (nvt_prio_owner), read from /proc at each
 * look. A change is said once, and decided again. Returns 0, or -1 if the process
 * cannot be read (it keeps what it had; a task that ended is dropped at the look).
 */
static int update_owner(struct agent *a, struct task *t)
{
	struct nvt_proc p;
	uid_t owner;

	if (nvt_proc_info(t->pid, &p) || p.hidden)
		return -1;
	owner = nvt_prio_owner(t->h.owner, p.uid[0], p.uid[1]);
	if (owner != t->owner) {
		if (owner != t->h.owner)
			event(a, "pid %ld runs as uid %lu in uid %lu's segment: its priority counts as "
			      "uid %lu's", (long)t->pid, (unsigned long)p.uid[1], (unsigned long)t->h.owner,
			      (unsigned long)owner);
		t->owner = owner;
		a->dirty = 1;
	}
	return 0;
}

/* May this agent manage the task open as h? Root's manages every user's, a user's her own. */
static int may_manage(const struct nvt_seg_handle *h)
{
	return geteuid() == 0 || h->owner == geteuid();
}

/* Why a segment could not be opened (NVT_SEG_ESYS, errno): out of descriptors, or else. */
static unsigned open_failure(void)
{
	return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? NVT_AGENT_WHY_FILES
								      : NVT_AGENT_WHY_UNREADABLE;
}

/* Whether some slot of the segment open as h has a priority (or is mid-write: it may).
 * One pread; -1 if the file is no segment. */
static int has_priority(const struct nvt_seg_handle *h)
{
	static struct nvt_segment copy;

	if (nvt_seg_pread_whole(h->fd, &copy))
		return -1;
	for (int g = 0; g < NVT_MAX_GPUS; g++)
		if (!nvt_uuid_is_zero(copy.gpu[g].uuid) &&
		    (copy.gpu[g].prio.prio != NVT_PRIO_NONE || (copy.gpu[g].seq & 1)))
			return 1;
	return 0;
}

/*
 * Looks at the task of e, which the agent does not follow: follows it (a new entry of
 * the table) if its segment is e's file, has a priority and is the agent's to manage;
 * notes it if it has one and cannot be followed (table full, out of descriptors,
 * unreadable). Returns 1 if e's file holds nothing to follow (no priority, not the
 * segment the task uses, not the agent's), else 0 (followed, noted, or a next look).
 */
static int check_task(struct agent *a, const struct nvt_seg_entry *e, int64_t hold_ns)
{
	struct nvt_seg_handle probe;
	struct task *t = &a->tasks[a->n];
	pid_t pid = e->pid;
	int rc, has, its;

	/* Read-only first: that never waits for a segment being made. */
	rc = nvt_seg_open(a->o->base, pid, 0, &probe);
	if (rc == NVT_SEG_ESYS || rc == NVT_SEG_ELEASED) {
		/* It may have a priority: cannot tell. */
		note(a, pid, rc == NVT_SEG_ELEASED ? NVT_AGENT_WHY_UNREADABLE : open_failure());
		return 0;
	}
	if (rc == NVT_SEG_EMAKING)
		return 0; /* the next look */
	if (rc)
		return 1; /* gone, or no segment of that task: looked at again if it changes */
	its = probe.dev == e->dev && probe.ino == e->ino;
	has = may_manage(&probe) ? has_priority(&probe) : 0;
	nvt_seg_close(&probe);
	if (has <= 0 || !its) {
		if (has <= 0)
			unnote(a, pid, 0);
		return 1; /* (the file the task uses, if another, is looked at by itself) */
	}
	if (a->n >= NVT_AGENT_MAX_TASKS) {
		note(a, pid, NVT_AGENT_WHY_TABLE_FULL);
		return 0;
	}
	/* A descriptor a task: those it needs for its own work stay free (or it could not
	 * even list the run directories, and would follow nobody new, unseen). */
	if (a->fd_base + a->n + NVT_AGENT_FD_RESERVE >= a->fd_limit) {
		note(a, pid, NVT_AGENT_WHY_FILES);
		return 0;
	}
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->seen = 1;
	rc = nvt_seg_open(a->o->base, pid, 1, &t->h);
	if (rc) {
		if (rc == NVT_SEG_ESYS || rc == NVT_SEG_ELEASED)
			note(a, pid, rc == NVT_SEG_ELEASED ? NVT_AGENT_WHY_UNREADABLE : open_failure());
		return 0;
	}
	/* The lock file is opened for each write only (see unlock_task). */
	if (t->h.lock_fd >= 0)
		close(t->h.lock_fd);
	t->h.lock_fd = -1;
	t->owner = t->h.owner;
	if (read_task(t, a->now, hold_ns) || !t->managed) {
		nvt_seg_close(&t->h);
		return 0;
	}
	unnote(a, pid, 0);
	a->n++;
	return 0;
}

/* Whether e changed within the last second: its ctime may not yet show a change made
 * within the same tick of the file system's clock, so what is read now is not kept. */
static int changing(const struct nvt_seg_entry *e)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return e->ctime.tv_sec >= now.tv_sec - 1;
}

/*
 * Reads the file of e, which no task the agent follows uses (one pread, no mapping,
 * no look at the process): only if a slot has a priority is the task looked at whole
 * (check_task, at most NVT_AGENT_OPENS_PER_SCAN a look, counted in *opens). Returns
 * 1 if the file holds nothing to follow, else 0 (followed, noted, or the next look).
 */
static int read_file(struct agent *a, const struct nvt_seg_entry *e, int *opens, int64_t hold_ns)
{
	static struct nvt_segment copy;
	int fd = nvt_seg_entry_open(a->o->base, e), has = 0, noted = 0, rc;

	if (fd < 0) {
		/* A lease on it, or out of descriptors: it may have a priority, cannot tell. Gone
		 * meanwhile: the next look lists what is there. Anything else (a FIFO, a link,
		 * another user's file, one replaced meanwhile) is nothing to follow while the
		 * file listed stays as it is (a new one has another inode). */
		if (errno == EWOULDBLOCK)
			note(a, e->pid, NVT_AGENT_WHY_UNREADABLE);
		else if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			note(a, e->pid, NVT_AGENT_WHY_FILES);
		else if (errno != ENOENT && errno != EINTR)
			return !changing(e);
		return 0;
	}
	if (nvt_seg_pread_whole(fd, &copy) == 0)
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			has |= !nvt_uuid_is_zero(copy.gpu[g].uuid) && copy.gpu[g].prio.prio != NVT_PRIO_NONE;
	close(fd);
	for (int i = 0; i < a->n_notes && !noted; i++)
		noted = a->notes[i].pid == e->pid;
	/* A task noted before is looked at whole: its note goes only if its segment says so. */
	if (!has && !noted)
		rc = 1;
	else if (*opens >= NVT_AGENT_OPENS_PER_SCAN)
		return 0;
	else {
		++*opens;
		rc = check_task(a, e, hold_ns);
	}
	return rc && !changing(e);
}

static int by_file(const void *x, const void *y)
{
	const struct known *a = x, *b = y;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->uid > b->uid) - (a->uid < b->uid);
}

static struct known known_of(const struct nvt_seg_entry *e)
{
	return (struct known){e->dev, e->ino, e->pid, e->uid, e->ctime};
}

/* Whether the last look knew that e's file, as it is now, holds nothing to follow. */
static int is_known(const struct agent *a, const struct nvt_seg_entry *e)
{
	struct known key = known_of(e);
	const struct known *k = bsearch(&key, a->known, (size_t)a->n_known, sizeof(key), by_file);

	return k && k->ctime.tv_sec == e->ctime.tv_sec && k->ctime.tv_nsec == e->ctime.tv_nsec;
}

static int by_pid(const void *x, const void *y)
{
	const struct task *a = x, *b = y;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int by_entry_pid(const void *x, const void *y)
{
	pid_t a = ((const struct nvt_seg_entry *)x)->pid, b = ((const struct nvt_seg_entry *)y)->pid;

	return (a > b) - (a < b);
}

/* The task of pid among the first n (sorted by PID), or NULL. */
static struct task *find_task(struct agent *a, int n, pid_t pid)
{
	struct task key = {.pid = pid};

	return bsearch(&key, a->tasks, (size_t)n, sizeof(*a->tasks), by_pid);
}

/* What a look does with a file it lists. */
enum { FOLLOWED, NEW, KNOWN };

/*
 * Reads the files e[0..n-1] that what[] marks NEW, then some of those it marks KNOWN,
 * marking each read one FOLLOWED or KNOWN: the new and changed files first (a task
 * that started: read at the first look however many tasks without a priority run),
 * then the known ones in turn; each from a place that moves on each look, so that
 * files that cannot be read now (a lease, one being made) never starve the others.
 */
static void read_in_turn(struct agent *a, struct nvt_seg_entry *e, int n, uint8_t *what,
			 int64_t hold_ns)
{
	int reads = 0, opens = 0;

	for (int pass = 0; pass < 2; pass++) {
		int want = pass ? KNOWN : NEW;
		int limit = pass ? reads + NVT_AGENT_REREADS_PER_SCAN : NVT_AGENT_READS_PER_SCAN;
		unsigned from = n ? a->rotate[pass] % (unsigned)n : 0;
		for (int k = 0; k < n; k++) {
			unsigned at = (from + (unsigned)k) % (unsigned)n;
			if (what[at] != want)
				continue;
			if (reads >= limit) {
				a->rotate[pass] = at; /* the next look starts here */
				break;
			}
			reads++;
			what[at] = read_file(a, &e[at], &opens, hold_ns) ? KNOWN : FOLLOWED;
		}
	}
}

/* Drops the notes of tasks that are not among e[0..n-1] (sorted by PID): they ended. */
static void drop_ended_notes(struct agent *a, const struct nvt_seg_entry *e, int n)
{
	for (int i = 0; i < a->n_notes; i++) {
		struct nvt_seg_entry key = {.pid = a->notes[i].pid};
		if (!bsearch(&key, e, (size_t)n, sizeof(*e), by_entry_pid)) {
			a->notes[i--] = a->notes[--a->n_notes];
			a->notes_changed = 1;
		}
	}
}

/*
 * Forgets the tasks this look did not see, those whose file was removed (an exec
 * to another user, or a PID reused: the next look opens the new one) and those that
 * lost their priority (looked at in turn again); sorts the rest. sorted: how many
 * of a->tasks were sorted by PID before this look.
 */
static void forget_tasks(struct agent *a, int sorted, int64_t hold_ns)
{
	struct stat st;
	int kept = 0;

	for (int i = 0; i < a->n; i++) {
		struct task *t = &a->tasks[i];
		int gone = !t->seen || t->retry ||
			   (!t->ignored && (fstat(t->h.fd, &st) || st.st_nlink == 0));
		if (gone) {
			drop_task(t);
			continue;
		}
		if (!t->ignored)
			update_owner(a, t);
		if (!t->ignored && !t->managed && (read_task(t, a->now, hold_ns) || !t->managed)) {
			drop_task(t);
			continue;
		}
		a->tasks[kept++] = *t;
	}
	a->dirty |= kept != a->n || a->n != sorted;
	a->n = kept;
	if (a->n)
		qsort(a->tasks, (size_t)a->n, sizeof(*a->tasks), by_pid);
}

/*
 * Looks at the run directories (a user's agent at its own: it manages no other's):
 * follows new tasks, forgets ended ones, reads the files it does not follow that are
 * new or changed, and some of the others again (a priority may be written through a
 * mapping, which changes no time of the file). Returns 0, or NVT_AGENT_ROOT_RUNS (a
 * user's agent, while root's runs).
 */
static int scan(struct agent *a, int64_t hold_ns)
{
	struct nvt_seg_entry *e = NULL;
	pid_t root_agent;
	uid_t only = geteuid() == 0 ? (uid_t)-1 : geteuid();
	int n = nvt_seg_list(a->o->base, only, &e), sorted = a->n;
	int root_runs = geteuid() != 0 && nvt_agent_running(a->o->base, 0, &root_agent);
	struct known *known;
	uint8_t *what;

	known = n < 0 ? NULL : malloc(((size_t)n + 1) * sizeof(*known));
	what = known ? calloc((size_t)n + 1, 1) : NULL;
	if (!what) {
		free(known);
		free(e);
		return root_runs ? NVT_AGENT_ROOT_RUNS : 0; /* unreadable for now: keep what we follow */
	}
	for (int i = 0; i < a->n; i++)
		a->tasks[i].seen = 0;
	for (int k = 0; k < n; k++) {
		struct task *t = find_task(a, sorted, e[k].pid);
		if (t)
			t->seen = 1;
		what[k] = t ? FOLLOWED : is_known(a, &e[k]) ? KNOWN : NEW;
	}
	read_in_turn(a, e, n, what, hold_ns);
	free(a->known);
	a->known = known;
	a->n_known = 0;
	for (int k = 0; k < n; k++)
		if (what[k] == KNOWN)
			known[a->n_known++] = known_of(&e[k]);
	if (a->n_known) /* (qsort's base must not be NULL) */
		qsort(a->known, (size_t)a->n_known, sizeof(*a->known), by_file);
	free(what);
	drop_ended_notes(a, e, n); /* (e is sorted by PID) */
	free(e);
	forget_tasks(a, sorted, hold_ns);
	publish_notes(a);
	return root_runs ? NVT_AGENT_ROOT_RUNS : 0;
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
		take_view(s, &view);
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
	event(a, on ? "root's agent runs: standing by" : "root's agent ended: managing again");
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
			int root_runs = scan(&a, hold_ns) == NVT_AGENT_ROOT_RUNS;
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
		drop_task(&a.tasks[i]);
	free(a.tasks);
	free(a.notes);
	free(a.known);
	if (a.spare_fd >= 0)
		close(a.spare_fd);
	return rc;
}
