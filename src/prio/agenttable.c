/*
 * agenttable.c - the priority agent's table of tasks (agentint.h): a look at
 * the run directories (agent_scan) opens the tasks with a priority it may
 * manage, reads what it does not follow in bounded turns, and drops what
 * ended; each task's slots are read whole (agent_take_view). agent.c polls
 * and writes them.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "agentint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/gpusel.h"
#include "core/prio.h"
#include "os/clock.h"

/* Takes what view says of its priority and own partition into s. */
void agent_take_view(struct slot *s, const struct nvt_slot_view *view)
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
			agent_take_view(s, &view);
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

void agent_drop_task(struct task *t)
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
void agent_unlock_task(struct task *t)
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
void agent_open_lock(struct agent *a, struct task *t)
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
			agent_event(a, "pid %ld runs as uid %lu in uid %lu's segment: its priority counts as "
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
		agent_note(a, pid, rc == NVT_SEG_ELEASED ? NVT_AGENT_WHY_UNREADABLE : open_failure());
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
			agent_unnote(a, pid, 0);
		return 1; /* (the file the task uses, if another, is looked at by itself) */
	}
	if (a->n >= NVT_AGENT_MAX_TASKS) {
		agent_note(a, pid, NVT_AGENT_WHY_TABLE_FULL);
		return 0;
	}
	/* A descriptor a task: those it needs for its own work stay free (or it could not
	 * even list the run directories, and would follow nobody new, unseen). */
	if (a->fd_base + a->n + NVT_AGENT_FD_RESERVE >= a->fd_limit) {
		agent_note(a, pid, NVT_AGENT_WHY_FILES);
		return 0;
	}
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->seen = 1;
	rc = nvt_seg_open(a->o->base, pid, 1, &t->h);
	if (rc) {
		if (rc == NVT_SEG_ESYS || rc == NVT_SEG_ELEASED)
			agent_note(a, pid, rc == NVT_SEG_ELEASED ? NVT_AGENT_WHY_UNREADABLE : open_failure());
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
	agent_unnote(a, pid, 0);
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
			agent_note(a, e->pid, NVT_AGENT_WHY_UNREADABLE);
		else if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			agent_note(a, e->pid, NVT_AGENT_WHY_FILES);
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
			agent_drop_task(t);
			continue;
		}
		if (!t->ignored)
			update_owner(a, t);
		if (!t->ignored && !t->managed && (read_task(t, a->now, hold_ns) || !t->managed)) {
			agent_drop_task(t);
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
int agent_scan(struct agent *a, int64_t hold_ns)
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
	agent_publish_notes(a);
	return root_runs ? NVT_AGENT_ROOT_RUNS : 0;
}

