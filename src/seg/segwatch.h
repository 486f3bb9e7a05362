/*
 * segwatch.h - waiting for a task to leave (segwatch.c): a watch on the run
 * directories under base (each user's, and base for one that comes) that
 * wakes when a segment file goes (a task that ends removes its own; -l tidies
 * a dead task's) or comes by a rename, or a run directory comes. A task
 * killed leaves its file, and -p moves a task through its mapping: no event
 * says so, so a caller looks again after a bounded time too. Open it before
 * the look whose answer it waits to change, so that no change between the two
 * is lost. Side effects: an inotify descriptor. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGWATCH_H
#define NVT_SEGWATCH_H

#include "segfile.h"

#define NVT_SEG_WATCH_DIRS 4096 /* run directories watched at most (the bounded look finds others) */
struct nvt_seg_watch {
	int fd;           /* the inotify descriptor; -1: none (a wait is a sleep) */
	int base_wd;      /* base's watch */
	int n_dirs;       /* run directories watched */
	const char *base; /* the caller's, kept while the watch is */
};
/* Returns 0, or -1 with errno set (w->fd is -1: a wait sleeps its time out). */
int nvt_seg_watch_open(const char *base, struct nvt_seg_watch *w);
/* Waits up to timeout_ms for a change (a run directory that comes is watched from then on).
 * Returns 1 (changed), 0 (none, or a signal), or -1 with errno set. */
int nvt_seg_watch_wait(struct nvt_seg_watch *w, int timeout_ms);
void nvt_seg_watch_close(struct nvt_seg_watch *w);

#endif /* NVT_SEGWATCH_H */
