/*
 * ptree.h - process trees: what a line of /proc/PID/stat, and the lines of
 * /proc/PID/status that nvtaskset reads, say about a process, a process's
 * identity as text, and trees built from (PID, parent) pairs (the nearest
 * ancestor of a task that is a task too, descendants, and the order -l shows
 * a tree in), and the order of the reads that tell one process's state and
 * users (the reads given by the caller). Pure code: works on plain text and
 * arrays; only nvt_tree_order allocates.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PTREE_H
#define NVT_PTREE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Parents followed at most, whatever the tree: a snapshot of /proc taken
 * while PIDs are reused can hold a loop. */
#define NVT_TREE_MAX_DEPTH 64

/* What /proc/PID/stat says about a process. */
struct nvt_stat {
	pid_t pid;           /* field 1, as the reader's /proc numbers it */
	char state;          /* field 3: 'R', 'S', ..., 'Z' for a zombie */
	pid_t ppid;          /* field 4: 0 when the parent is outside the PID namespace */
	uint64_t start_time; /* field 22, clock ticks after boot: tells PID reuse */
};

/* Parses the text of /proc/PID/stat (the command name may hold spaces and
 * parentheses). Returns 0, or -1 if text is not such a line. */
int nvt_stat_parse(const char *text, struct nvt_stat *out);

/* The lines of /proc/PID/status a reader may ask for (nvt_status_line). */
enum {
	NVT_STATUS_UID = 1,
	NVT_STATUS_TGID = 2,
	NVT_STATUS_NSPID = 4,
	NVT_STATUS_STATE = 8,
	NVT_STATUS_THREADS = 16,
};
/* What those lines say. The reader sets want (NVT_STATUS_*), the rest zero. */
struct nvt_status {
	unsigned want, seen;  /* NVT_STATUS_* */
	int malformed;        /* a line asked for was not one */
	int released;         /* a PID it asked for read 0: the process was reaped while read */
	unsigned long uid[4]; /* Uid: real, effective, saved, filesystem */
	long tgid;            /* Tgid */
	int nspid_fields;     /* how many PIDs NSpid lists (0: no NSpid, kernels before 4.1) */
	long nspid;           /* the last: the PID in the process's own namespace */
	char state;           /* State: 'R', 'S', ..., 'Z', 'X' (as field 3 of stat) */
	long threads;         /* Threads: its thread group's (0: its task released while read) */
};
/* Takes one line of a /proc/PID/status (NUL-terminated, without its newline; cut: it was
 * longer, this is its start) into s. Returns 1 when the rest need not be read, else 0. */
int nvt_status_line(const char *line, int cut, struct nvt_status *s);
/*
 * What the lines taken say, at the file's end: 0; ESRCH when the process was reaped while
 * its file was read (released: gone, never an error); else EINVAL when a line asked for is
 * malformed, or Uid or Tgid is missing (NSpid may be: kernels before 4.1).
 */
int nvt_status_verdict(const struct nvt_status *s);
/*
 * What a process whose stat line said 'Z' or 'X' is, from its status read just after (State and
 * Threads asked for; nvt_status_verdict said 0). A thread-group leader reads 'Z' while it has
 * exited and other threads of its group live (main called pthread_exit; or another thread calls
 * exec and waits for the leader to end before it takes the leader's PID): the process lives.
 */
enum nvt_exited {
	NVT_EXITED_GONE,     /* 'Z' with no other thread: a zombie */
	NVT_EXITED_LIVES,    /* other threads of its group live: the process lives */
	NVT_EXITED_REPLACED, /* a live task holds the PID now (an exec by another thread ended
				between the two reads, the task keeping the leader's start time):
				read stat again */
	NVT_EXITED_RELEASED, /* 'X', or no thread counted: the task read was being released, a
				zombie reaped or the leader that another thread's exec replaced:
				read stat again (no such file: gone) */
};
enum nvt_exited nvt_exited_verdict(const struct nvt_status *s);

/* The reads of one process's /proc files that the two functions below make (os/proc.c's, or a
 * test's). Each returns 0, or -1 with errno set. */
struct nvt_proc_reads {
	int (*stat)(void *arg, struct nvt_stat *st);    /* its stat line, parsed */
	int (*status)(void *arg, struct nvt_status *s); /* the lines of its status s->want names,
							   nvt_status_verdict 0 */
	void (*between)(void *arg); /* nvt_status_settle's: what else is read of the process
				       after its status, before the later stat (NULL: nothing) */
	void *arg;
};
/*
 * Rounds of nvt_stat_settle's reads at most. A round past the first follows a status read that
 * found the task behind the PID replaced or released (nvt_exited_verdict) between it and the stat
 * read: windows of microseconds, three in a row a process that does nothing else.
 */
#define NVT_STAT_ROUNDS 3
/*
 * The stat of one process, whose state tells: a stat that says 'Z' or 'X' (rare) pays a status
 * read (State and Threads; a leader whose thread group lives is alive), and a task replaced or
 * released between the two is read again. Returns 0, or -1 with errno set: a read's; ESRCH for
 * a zombie, and for a task still being released after NVT_STAT_ROUNDS rounds; EAGAIN for one
 * replaced that often: no answer, neither alive nor gone.
 */
int nvt_stat_settle(const struct nvt_proc_reads *r, struct nvt_stat *st);
/* Rounds of nvt_status_settle's reads at most: each round past the first follows a PID taken
 * by another process between its two stat reads. */
#define NVT_STATUS_ROUNDS 3
/*
 * The status lines s->want names, of the process that holds one PID through the read: stat
 * (nvt_stat_settle), status, then stat again, taken only where both stats name the same process
 * (PID and start time); else the status may be another's, one that took the PID meanwhile, and
 * all three are read again. Returns 0 (st: the later stat), or -1 with errno set (the reads';
 * EAGAIN: another process each of NVT_STATUS_ROUNDS rounds).
 */
int nvt_status_settle(const struct nvt_proc_reads *r, struct nvt_status *s, struct nvt_stat *st);

/* One process: its PID and its identity across PID reuse (and PID namespaces). */
struct nvt_proc_id {
	uint64_t pidns;      /* inode of its PID namespace */
	pid_t pid;           /* as that namespace numbers it */
	uint64_t start_time; /* field 22 of its /proc/PID/stat */
};
/* Longest text of nvt_ptree_id_format, NUL included. */
#define NVT_PROC_ID_TEXT_MAX 64
/* Writes "PIDNS.PID.START". Returns 0, or -1 if it does not fit. */
int nvt_ptree_id_format(const struct nvt_proc_id *id, char *buf, size_t len);
/* Parses that text (decimals, no sign, nothing else). Returns 0 or -1. */
int nvt_ptree_id_parse(const char *text, struct nvt_proc_id *out);

/* A process and its parent, as one /proc shows them. */
struct nvt_proc_link {
	pid_t pid;
	pid_t ppid; /* 0: none known */
};

/* Sorts links by PID, as the look-ups below need. */
void nvt_links_sort(struct nvt_proc_link *links, size_t n);
/* The parent of pid in sorted links, or 0 when pid is not among them. */
pid_t nvt_links_parent(const struct nvt_proc_link *links, size_t n, pid_t pid);
/* 1 if pid descends from root (through any processes) in sorted links, following at
 * most NVT_TREE_MAX_DEPTH parents; 0 otherwise (also for pid == root). */
int nvt_links_descends(const struct nvt_proc_link *links, size_t n, pid_t pid, pid_t root);
/*
 * For each of the n_set PIDs in set (sorted ascending): the nearest proper
 * ancestor of it in sorted links that is in set too, into up[i] (0: none).
 * Processes between them that are not in set count as links of the chain.
 */
void nvt_links_nearest(const struct nvt_proc_link *links, size_t n, const pid_t *set, size_t n_set,
		       pid_t *up);
/*
 * For each of the n_set PIDs in set (sorted ascending): the top of its tree
 * among set (the farthest ancestor in set along nvt_links_nearest's chain;
 * itself where none is), into tops[i]. up is room for n_set PIDs.
 */
void nvt_links_tops(const struct nvt_proc_link *links, size_t n, const pid_t *set, size_t n_set,
		    pid_t *up, pid_t *tops);

/*
 * The order a tree is shown in: node i has PID pid[i] and parent up[i] (a
 * PID; a node whose parent is none of the n nodes is a root). Fills order
 * (n node indices) with every node once, each parent before its children,
 * roots and siblings by PID, each subtree whole; and depth[i] with node i's
 * depth (0 for a root). Nodes on a loop of parents (a stale snapshot) are
 * shown as roots. Returns 0, or -1 if memory runs out.
 */
int nvt_tree_order(const pid_t *pid, const pid_t *up, size_t n, size_t *order, int *depth);

#endif /* NVT_PTREE_H */
