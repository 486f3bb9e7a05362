/*
 * agentint.h - the priority agent's internals, private to src/prio: its
 * state (the task table, its notes, the files it knows hold nothing to
 * follow), shared by the loop that decides and writes (agent.c) and the
 * table that follows the run directories' tasks (agenttable.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_AGENTINT_H
#define NVT_AGENTINT_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "agent.h"
#include "core/tpcset.h"
#include "seg/segfile.h"

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

/* ---- The loop's (agent.c) ---- */

/* Says what the agent did (its options' event callback; nothing when quiet). */
void agent_event(const struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Notes that the task of pid (with a priority) cannot be followed, for why; said once. */
void agent_note(struct agent *a, pid_t pid, unsigned why);
/* Writes the notes to the status file for -l, if they changed. */
void agent_publish_notes(struct agent *a);
/* The task of pid is followed now, or gone: its note (of any why, or of why only) goes. */
void agent_unnote(struct agent *a, pid_t pid, unsigned why);

/* ---- The task table's (agenttable.c) ---- */

/* Drops task t: its segment closed, its slots forgotten; the next look opens it afresh if it is still there. */
void agent_drop_task(struct task *t);
/* Opens the writer's lock file of t's run directory for a write (nvt_seg_lock says
 * why, through h.lock_errno, if it cannot). */
void agent_open_lock(struct agent *a, struct task *t);
/*
 * Looks at the run directories (a user's agent at its own: it manages no other's):
 * follows new tasks, forgets ended ones, reads the files it does not follow that are
 * new or changed, and some of the others again (a priority may be written through a
 * mapping, which changes no time of the file). Returns 0, or NVT_AGENT_ROOT_RUNS (a
 * user's agent, while root's runs).
 */
int agent_scan(struct agent *a, int64_t hold_ns);
/* Takes what view says of its priority and own partition into s. */
void agent_take_view(struct slot *s, const struct nvt_slot_view *view);
/* Lets the writer's lock of t go (nvt_seg_lock took it and mapped the segment), and
 * closes the lock file: a task followed holds one descriptor, its segment. */
void agent_unlock_task(struct task *t);

#endif /* NVT_AGENTINT_H */
