/*
 * segscan.h - listing tasks (segscan.c): the run directories' segment files,
 * tidied or not, what a listing passes over, and each file as found. Side effects: files.
 * Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGSCAN_H
#define NVT_SEGSCAN_H

#include "segfile.h"

/*
 * Lists the tasks with a segment in any user's run directory under base:
 * their PIDs as the caller's /proc numbers them (a container's tasks by their
 * host PIDs), ascending, in *pids (malloc'd; the caller frees it). With tidy,
 * removes the files of processes that are gone, or that a newer segment of the
 * same process replaced, from the run directories the caller may write (its
 * own; all for root). A process whose file could not be told from a rival in
 * time (its maps, read in a child, came late: segfile.h) is listed, that file
 * never removed: a late answer never fails the listing. Returns the count, or
 * -1 with errno set.
 */
int nvt_seg_tasks(const char *base, int tidy, pid_t **pids);

/*
 * What a listing passes over, and why (enum nvt_seg_skip_kind): an entry of
 * the directory of run directories named like a run directory (nvtaskset-UID)
 * that is not one to read, and a run directory crowded with names of other
 * PID namespaces' processes. Anyone may make such an entry in the shared
 * directory: it never fails a listing, nor hides another user's tasks (a run
 * directory holds its own user's segments only).
 */
enum nvt_seg_skip_kind {
	NVT_SKIP_LINK,       /* a symbolic link (owner: its owner) */
	NVT_SKIP_NOT_DIR,    /* a file of another type (mode: its type) */
	NVT_SKIP_OWNER,      /* a directory of another user's (owner), not uid's */
	NVT_SKIP_WRITABLE,   /* a directory others may write in (mode) */
	NVT_SKIP_UNREADABLE, /* uid's, but the caller may not read it or look into it (mode) */
	NVT_SKIP_CROWDED,    /* count files named for PIDs of namespaces the caller may not
			      * read, past the processes of those PIDs in sight, were not read */
	NVT_SKIP_CONTAINER,  /* base/containers (container ""), or a container's directory
			      * in it: not root's, or written by others (uid: none) */
	NVT_SKIP_FOREIGN,    /* count files of a container's run directory named for
			      * processes of another PID namespace than the container's */
	NVT_SKIP_CLOSED,     /* a container's run directory the caller may not look into
			      * (its root may chmod it; mode: its mode, uid: none) */
};
struct nvt_seg_skip {
	char container[NVT_CONTAINER_ID_MAX + 1]; /* under base/containers/ID/run; "": base */
	uid_t uid;   /* the run directory's name's */
	int kind;    /* enum nvt_seg_skip_kind */
	uid_t owner; /* the entry's */
	mode_t mode; /* the entry's (type and permissions) */
	int count;   /* NVT_SKIP_CROWDED: files not read */
};
#define NVT_SEG_SKIPPED_KEPT 16
struct nvt_seg_skipped {
	int n; /* entries passed over, all told (v holds the first NVT_SEG_SKIPPED_KEPT) */
	struct nvt_seg_skip v[NVT_SEG_SKIPPED_KEPT];
};
/* nvt_seg_tasks, and what it passed over into *skipped (NULL: not asked). */
int nvt_seg_tasks_skipped(const char *base, int tidy, pid_t **pids, struct nvt_seg_skipped *skipped);


/* A file named like a segment in a run directory, as a listing found it. */
struct nvt_seg_entry {
	pid_t pid;             /* the live process it names, as the caller's /proc numbers it */
	uid_t uid;             /* whose run directory */
	char container[NVT_CONTAINER_ID_MAX + 1]; /* under base/containers/ID/run; "": base */
	dev_t dev;
	ino_t ino;
	struct timespec ctime; /* its status's last change (any write but through a mapping) */
	char name[64];
	int ambiguous;         /* its header fits several processes that the caller cannot tell
				* apart (containers' first processes started in one clock tick),
				* pid being one of them, or pid's maps, read to tell it from a rival,
				* came late: never removed as another's */
};
/*
 * Lists the files named like a segment of a live process in the run directory
 * of user only, or of every user (only == (uid_t)-1), without opening them:
 * a directory read and an fstatat a file (their PIDs resolved as nvt_seg_tasks
 * does). Which file a task uses, and whether it is a segment at all, is the
 * caller's to find out (nvt_seg_entry_open, nvt_seg_open). Ascending by PID,
 * malloc'd in *out (the caller frees it). Returns the count, or -1 with errno set.
 */
int nvt_seg_list(const char *base, uid_t only, struct nvt_seg_entry **out);
/* Opens the run directory that holds e's file (nvt_userdir_open under base, or under its
 * container's). Returns its fd, or -1 with errno set. */
int nvt_seg_entry_dir(const char *base, const struct nvt_seg_entry *e);
/*
 * Opens e's file for reading (O_NOFOLLOW, O_NONBLOCK) if it is still the one
 * listed: a regular file of e->uid's, same device and inode. Returns its fd, or
 * -1 with errno set (ESTALE: another file by now; EWOULDBLOCK: its user holds a
 * lease on it; EMFILE, ...).
 */
int nvt_seg_entry_open(const char *base, const struct nvt_seg_entry *e);

#endif /* NVT_SEGSCAN_H */
