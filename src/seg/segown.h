/*
 * segown.h - the calling process's own segment (segown.c): the shim's, and
 * the one the CLI makes for its COMMAND. Side effects: files.
 * Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGOWN_H
#define NVT_SEGOWN_H

#include "segfile.h"

struct nvt_seg_own {
	struct nvt_segment *seg; /* mapped shared */
	char dir[256];           /* its run directory */
	char name[64];
	pid_t pid;
	uint64_t pidns;
	dev_t dev;               /* identity of the file, to remove only ours */
	ino_t ino;
	/* /proc/self/stat as nvt_seg_create read it (once): our PID and our
	 * parent's as /proc numbers them; 0 if it could not be read. */
	pid_t proc_pid;
	pid_t proc_ppid;
};

/* A segment being made (see "Published" in docs/design.md). */
struct nvt_seg_new {
	int fd;      /* the file, until it is open to readers; else -1 */
	int lock_fd; /* the run directory's lock file while we hold the lock; else -1 */
	uint64_t pidns;
	pid_t pid;
};

enum nvt_seg_create_rc {
	NVT_SEG_CREATED = 0, /* new and empty, not yet open to readers, locked: see fresh */
	NVT_SEG_ADOPTED = 1, /* this process exec'd: its segment, partitions kept */
};

/*
 * Makes the calling process's segment in its user's run directory under
 * base, or adopts the one it had before an exec. A stale file of that name is
 * removed and made anew, never truncated (it may still be mapped). A new one
 * is made holding the writer's lock (waiting for it at most
 * NVT_SEG_CREATE_WAIT_MS, then without it) and with mode NVT_SEG_NEW_MODE:
 * fill it, then nvt_seg_unlock(fresh). Returns enum nvt_seg_create_rc (fresh
 * is only used with NVT_SEG_CREATED), or -1 with own->dir set and the reason
 * in why.
 */
int nvt_seg_create(const char *base, struct nvt_seg_own *own, struct nvt_seg_new *fresh, char *why,
		   size_t len);
/* The longest nvt_seg_create waits for a writer's lock that someone else holds. */
#define NVT_SEG_CREATE_WAIT_MS 100
/* Opens a new segment to readers (mode NVT_SEG_MODE), keeping the lock. */
void nvt_seg_publish(struct nvt_seg_new *fresh);
/* Publishes a new segment if need be, and lets its writer's lock go. */
void nvt_seg_unlock(struct nvt_seg_new *fresh);
/*
 * Gives the GPUs of views (n) that own's segment has no slot for a slot each
 * (nvt_segment_add_gpus), holding the segment's writer's lock as any writer
 * does: a program nvtaskset did not start adds the GPUs it sets libsmctrl
 * masks on. Returns how many it added, or -1 with errno set (EBUSY: another
 * writer held the lock for NVT_SEG_CREATE_WAIT_MS).
 */
int nvt_seg_own_add_gpus(const struct nvt_seg_own *own, const struct nvt_slot_view *views, int n);
/* Removes own's file if it is still ours (the mapping stays). */
void nvt_seg_remove(const struct nvt_seg_own *own);
/*
 * Removes, from own's run directory, segments of processes of the caller's
 * PID namespace that are gone or whose PID was reused: children that ended
 * with _exit ran no destructor. Judges at most max_judged of them, from a
 * place in the directory picked at random each time (so that repeated calls
 * visit every one), at most 11 system calls each (hold the file, kill 0, read
 * /proc/PID/stat, read the header, let go); removing one costs 9 more (the
 * caller's uid, and nvt_seg_unlink_judged's 8: the writer's lock, a look, the
 * unlink); reading the directory's names costs a few more. Counted with
 * strace of a start beside a live task's file and a dead one's, 2026-11-27.
 */
void nvt_seg_sweep(const struct nvt_seg_own *own, int max_judged);

/*
 * Opens the caller's own run directory under base (its path into dir), making
 * it if need be; root's recovers from another user who made it first (the
 * squatter's entry renamed aside). Returns its fd, or -1 with the reason in why.
 */
int nvt_userdir_own(const char *base, char *dir, size_t dir_len, char *why, size_t len);

#endif /* NVT_SEGOWN_H */
