/*
 * segtrust.h - the one rule for trusting another process's segment file
 * (segtrust.c). Side effects: files.
 * Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGTRUST_H
#define NVT_SEGTRUST_H

#include "segfile.h"

/*
 * The rule, every check of which applies unless a caller's flag says
 * otherwise: the file is opened O_NOFOLLOW | O_NONBLOCK (never through a
 * link, never blocking on a FIFO); it is a regular file of the run
 * directory's user that nobody else may write; it is filled in (not one its
 * shim is still making); it is one whole segment of this layout, whose header
 * names that user; and it is the segment of the process: its header names
 * the process's PID namespace, PID and start time, and where the process's
 * maps can be read and tell anything apart, the process maps this file
 * (nvt_seg_is_its).
 *
 * NVT_TRUST_HEADER_DECIDES drops the maps check: the header alone says which
 * process the file is for. A caller may drop it where the file's owner is
 * trusted as far as the file can mislead it: the shim's look at higher tasks
 * reads its own user's and root's files only (a forged header there misleads
 * a task of the forger's own, or is root's), and reading each higher task's
 * maps at every look would cost it ~100 KB of text each; a process adopting
 * its own segment after an exec maps none yet.
 *
 * NVT_TRUST_BY_NAME takes the process from the file's name (PID namespace and
 * PID) instead of the caller: it must be alive in the caller's /proc, in the
 * caller's PID namespace (own_pidns) or one below it, where /proc shows it
 * (a walk of /proc); a file of a namespace out of sight, or of a process
 * that is gone, or whose PID another process has now (the start time), is
 * NVT_TRUST_NO_PROC. The process found is in proc.
 *
 * NVT_TRUST_RUNS_AS_OWNER (with BY_NAME) adds a check: the process runs as
 * the file's owner now (its effective uid), in any PID namespace. A task of
 * root's that became a user by setuid() keeps using root's segment, and can
 * still write it through its mapping: what it says there is that user's,
 * not root's (priorities).
 *
 * NVT_TRUST_LOOK is the shim's look at higher tasks (docs/priorities.md): a
 * higher task is a live process of the looking task's own user or root's,
 * found by its file's name, that runs as its file's owner, its header
 * trusted without the maps.
 */
#define NVT_TRUST_HEADER_DECIDES 0x1u
#define NVT_TRUST_BY_NAME 0x2u
#define NVT_TRUST_RUNS_AS_OWNER 0x4u
#define NVT_TRUST_LOOK (NVT_TRUST_HEADER_DECIDES | NVT_TRUST_BY_NAME | NVT_TRUST_RUNS_AS_OWNER)

/* What to trust (the caller's part) and what was found (nvt_seg_trust's). */
struct nvt_seg_trust {
	uid_t owner;             /* the run directory's user: the file must be theirs */
	unsigned flags;          /* NVT_TRUST_* */
	int oflags;              /* O_RDONLY or O_RDWR */
	struct nvt_seg_who who;  /* the process (not with NVT_TRUST_BY_NAME) */
	const char *base;        /* with NVT_TRUST_BY_NAME: for nvt_seg_who's base */
	uint64_t own_pidns;      /* with NVT_TRUST_BY_NAME: the caller's PID namespace where
				  * /proc numbers PIDs as it does; 0: look for every process */
	/* Called once the file is a whole segment of owner's, before its
	 * process is looked for (a walk of /proc for another namespace's):
	 * 0 turns it down (NVT_TRUST_UNWANTED). NULL: every one is wanted. */
	int (*wanted)(int fd, const struct nvt_segment *head, void *arg);
	void *arg;
	/* Found: */
	int fd;                  /* open (the caller closes it) if trusted, else -1 */
	struct stat st;
	struct nvt_segment head; /* the header (slots not read) */
	struct nvt_proc proc;    /* with NVT_TRUST_BY_NAME: the process */
};

enum nvt_seg_trust_rc {
	NVT_TRUST_OK = 0,
	NVT_TRUST_NONE = -1,        /* no such file, or no segment of the directory's user's: a
				     * link, not a regular file, another owner's, writable by others */
	NVT_TRUST_DENIED = -2,      /* not ours to open (EACCES: being made, or not ours to write) */
	NVT_TRUST_LEASED = -3,      /* its user holds a lease on it: it cannot be opened now */
	NVT_TRUST_ESYS = -4,        /* a system call failed, errno says why (ETIMEDOUT: the
				     * process's maps were not read in time): no answer */
	NVT_TRUST_MAKING = -5,      /* its maker has not filled it in yet */
	NVT_TRUST_VERSION = -6,     /* a segment of another layout (head.version) */
	NVT_TRUST_CORRUPT = -7,     /* not one whole, well-formed segment of owner's */
	NVT_TRUST_NOT_ITS = -8,     /* a segment that the process does not use: an earlier
				     * process's of its PID, or forged */
	NVT_TRUST_NO_PROC = -9,     /* BY_NAME: no live process it names is in sight */
	NVT_TRUST_NOT_OWNERS = -10, /* RUNS_AS_OWNER: the process runs as another user now */
	NVT_TRUST_UNWANTED = -11,   /* the caller's wanted() turned it down */
};

/*
 * Opens the file name of run directory dirfd (t->owner's) and checks it by
 * the rule above, less what t->flags drop. Returns enum nvt_seg_trust_rc:
 * NVT_TRUST_OK with t->fd open and t->st, t->head (and t->proc) filled in.
 */
int nvt_seg_trust(int dirfd, const char *name, struct nvt_seg_trust *t);

/* Who p is, for nvt_seg_is_its; pidns: its namespace (p's own if 0). */
struct nvt_seg_who nvt_seg_who_of(const char *base, const struct nvt_proc *p, uint64_t pidns);

#endif /* NVT_SEGTRUST_H */
