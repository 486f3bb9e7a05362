/*
 * segwalk.h - a walk down a directory tree without recursion (segwalk.c):
 * the way it came, one inode per directory from the top, and where its
 * reading of each goes on; steps down, and back up through "..", checked
 * against the way down. The removal of a container's directory (segcontainer.c)
 * and the count of what it holds (segleft.c) walk this way, so that no depth
 * runs a stack out and a directory moved out from under a walk is noticed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGWALK_H
#define NVT_SEGWALK_H

#include <stddef.h>
#include <sys/types.h>

/* The way down: ino[0] the top's inode, ino[depth] the directory the walk is in; pos[i] where
 * the reading of directory i goes on (telldir's value; -1: from its start). */
struct nvt_seg_walk {
	ino_t *ino;
	long *pos;
	size_t depth, cap;
};

/* The inode of the file open on fd, or 0 (fstat failed). */
ino_t nvt_seg_walk_inode(int fd);
/* Starts w at the directory open on top (its way: top alone). Returns 0, or -1 (out of memory,
 * or top's inode unread). */
int nvt_seg_walk_start(struct nvt_seg_walk *w, int top);
/* Goes one down, into the directory open on sub. Returns 0, or -1 (out of memory). */
int nvt_seg_walk_down(struct nvt_seg_walk *w, int sub);
/*
 * Goes one up from the directory open on cur (closed here), through "..", never through a link
 * nor across a mount. Returns the directory above opened, or -1: none (w at its top), it could
 * not be opened, or it is not the one the walk came down from (moved meanwhile).
 */
int nvt_seg_walk_up(struct nvt_seg_walk *w, int cur);
/* Frees w's way (w may be walked again after nvt_seg_walk_start). */
void nvt_seg_walk_free(struct nvt_seg_walk *w);

#endif
