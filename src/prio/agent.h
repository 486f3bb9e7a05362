/*
 * agent.h - the priority agent (docs/priorities.md): polls the launch
 * counters that managed tasks' shims publish in their control segments, and
 * sets each managed task's current partition by the rules of core/prio.c,
 * through the writers' path (writer's lock, sequence lock) that -p uses.
 * Side effects: files, /proc, signals' flag. Returns codes; never prints
 * (events go to a callback).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_AGENT_H
#define NVT_AGENT_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "agentbeat.h"

/*
 * The defaults, in one place, as the H100 benchmark chose them
 * (docs/bench/prio-2026-11-23/, docs/priorities.md "Defaults"): a guard of 8
 * TPCs is one GPC, which kept a memory-bound higher task's p99 at 1.18-1.20x
 * of alone beside a streaming hog (two GPCs: 1.58-1.87x); a hold of 2 ms gave
 * the lower task 4-6% more than 20 ms with no flapping, 5 ms leaves room for
 * a host's gaps between launches; polling every 100 us instead of 500 us did
 * not shorten the reaction, which the lower task's step in flight bounds.
 */
#define NVT_AGENT_POLL_US 500       /* between two looks at the launch counters */
#define NVT_AGENT_HOLD_MS 5         /* a task launched within this long is active */
#define NVT_AGENT_GUARD 8           /* TPCs a guarded task keeps, unless it says */
#define NVT_AGENT_RESCAN_MS 100     /* looks for new and ended tasks at most this often */
#define NVT_AGENT_IDLE_EXIT_S 10    /* an agent started by the command ends after this long without a managed task */
#define NVT_AGENT_RESTORE_MS 2000   /* the most an ending agent spends giving own partitions back */
#define NVT_AGENT_RESTORE_ROUND_MS 10 /* between its rounds of tries (none waits) */
/* Bounds on one agent's work, whatever users leave in their run directories. */
#define NVT_AGENT_MAX_TASKS 1024    /* tasks with a priority it follows at once */
#define NVT_AGENT_READS_PER_SCAN 1024 /* files it does not follow, new or changed, it reads per look */
#define NVT_AGENT_REREADS_PER_SCAN 64 /* and files it knew hold no priority, read again in turn */
#define NVT_AGENT_OPENS_PER_SCAN 64 /* tasks with a priority it does not follow that it opens per look */
#define NVT_AGENT_MAX_NOTES 4096    /* tasks it cannot follow that it keeps a note of */
#define NVT_AGENT_LOCK_TRIES 64     /* polls a writer's lock is held before it says so */
#define NVT_AGENT_FD_RESERVE 6      /* descriptors kept free for its own work (listing the
				     * run directories, a write, its status file) */
/* Files of an agent in its user's run directory. */
#define NVT_AGENT_LOCK_NAME "agent.lock" /* mode 0600: one agent per user */
#define NVT_AGENT_LOG_NAME "agent.log"   /* mode 0644: what an agent a command started said */
#define NVT_AGENT_LOG_MAX 65536          /* bytes it keeps before starting it afresh */
/* Mode 0644: the tasks with a priority the agent cannot follow, one a line,
 * "unfollowed PID WORD" (WORD: nvt_agent_why_word), after a first line
 * "nvtaskset-agent-status 1"; written anew when they change, read by -l, removed when the
 * agent ends (nvt_agent_unlock). */
#define NVT_AGENT_STATUS_NAME "agent.status"

/* Why an agent does not follow a task with a priority. */
enum nvt_agent_why {
	NVT_AGENT_WHY_NONE = 0,
	NVT_AGENT_WHY_TABLE_FULL,  /* NVT_AGENT_MAX_TASKS tasks with a priority followed already */
	NVT_AGENT_WHY_FILES,       /* out of file descriptors (or memory) to open it */
	NVT_AGENT_WHY_UNREADABLE,  /* its segment cannot be opened now (a lease on it, say) */
	NVT_AGENT_WHY_LOCK_HELD,   /* its writer's lock stays held: it cannot change it */
	NVT_AGENT_WHYS
};
/* A word for why ("table-full", "files", ...) and a sentence for people. */
const char *nvt_agent_why_word(unsigned why);
const char *nvt_agent_why_text(unsigned why);

/* A task an agent says it cannot follow. */
struct nvt_agent_note {
	pid_t pid;
	unsigned why; /* enum nvt_agent_why */
};

struct nvt_agent_opts {
	const char *base;       /* the directory of run directories */
	unsigned poll_us;       /* 50 .. 1000000 */
	unsigned hold_ms;       /* 1 .. 3600000 */
	unsigned default_guard; /* 1 .. NVT_MAX_TPCS */
	unsigned idle_exit_s;   /* 0: never */
	/*
	 * Root's agent: compare every user's priorities with every other user's
	 * (--across-users). Otherwise each user's tasks are decided among her own
	 * and root's tasks only: no user's priority shrinks another user's task.
	 */
	int across_users;
	/* Set (by a signal handler) to stop: the agent restores every task it changed. */
	volatile sig_atomic_t *stop;
	/* Called for each change made, and for notable events (NULL: none). */
	void (*event)(void *arg, const char *text);
	void *event_arg;
	/* Called for what it cannot do (a task it cannot follow or change; NULL: event). */
	void (*warn)(void *arg, const char *text);
};

enum nvt_agent_rc {
	NVT_AGENT_STOPPED = 0,   /* *stop was set */
	NVT_AGENT_IDLE = 1,      /* idle_exit_s without a managed task */
	NVT_AGENT_ROOT_RUNS = 2, /* (scan) root's agent runs */
	NVT_AGENT_STOPPED_LEFT = 3, /* *stop was set; some slots kept what it gave them (said) */
	NVT_AGENT_ERROR = -1,    /* errno says why */
};

/*
 * Runs the agent until *stop or idleness. The caller holds the agent lock
 * (nvt_agent_lock). A user's agent stands by (writes nothing) while root's
 * agent runs, and manages its user's tasks again when that ends. Before it
 * returns, every task it changed has its own partition back (those it may
 * still write), unless it was standing by. Returns enum nvt_agent_rc.
 */
int nvt_agent_run(const struct nvt_agent_opts *o);

/*
 * Takes the caller's agent lock in its run directory under base (making the
 * directory and the lock file if need be; root's recovers a directory another
 * user made first, as its tasks' shims do) and, on success, writes its pid
 * file. Returns 0 (held: *fd keeps it; nvt_agent_unlock lets it go), 1 if
 * another agent of the caller's holds it, or -1 with the reason in why.
 */
int nvt_agent_lock(const char *base, int *fd, char *why, size_t len);
/* Lets the lock fd go (-1: none held), removing the pid file that names the caller and, with
 * the lock held, the status file. */
void nvt_agent_unlock(const char *base, int fd);
/*
 * The agent of user uid, if one runs: 1 and its PID in *pid (its pid file
 * names a live process of uid's with that start time), else 0. Anyone may
 * ask about anyone's (root's, to stand down).
 */
int nvt_agent_running(const char *base, uid_t uid, pid_t *pid);
/*
 * The log of an agent a command starts (its stderr): NVT_AGENT_LOG_NAME in the
 * caller's run directory, appended to (started afresh past NVT_AGENT_LOG_MAX).
 * Returns its fd, or -1 with errno set.
 */
int nvt_agent_log_open(const char *base);
/*
 * The last line of user uid's agent log (a file of uid's, never through a
 * link) into line. Returns 1 if there is one, else 0.
 */
int nvt_agent_log_last(const char *base, uid_t uid, char *line, size_t len);
/*
 * Writes the caller's NVT_AGENT_STATUS_NAME anew (mode 0644, by a rename) with
 * the n notes. Returns 0, or -1 with errno set.
 */
int nvt_agent_status_write(const char *base, const struct nvt_agent_note *notes, int n);
/*
 * Reads user uid's NVT_AGENT_STATUS_NAME (a file of uid's, never through a
 * link): at most max notes into out. Returns how many, 0 if there is none.
 */
int nvt_agent_status_read(const char *base, uid_t uid, struct nvt_agent_note *out, int max);

#endif /* NVT_AGENT_H */
