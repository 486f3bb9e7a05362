/*
 * segwatch.c - waiting for a task to leave: a watch (inotify) on the run
 * directories under base that wakes when a segment file goes (a task that
 * ends: its shim removes its own; -l's tidying of a dead task's) or a
 * user's run directory comes (then watched too). What no event tells (a task
 * killed, whose file stays; -p moving a task, written through a mapping) the
 * caller finds by looking again after a bounded time. Side effects: an
 * inotify descriptor. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segwatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* A file that goes, or comes by a rename; in base, a directory that comes. */
#define DIR_EVENTS (IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW)
#define BASE_EVENTS (IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW)

/* Watches base's entry name if it is a user's run directory. (One that cannot be watched,
 * another user's that we may not read, is found by the caller's bounded look.) */
static void watch_userdir(struct nvt_seg_watch *w, const char *name)
{
	char path[4096];
	uid_t uid;

	if (w->n_dirs < NVT_SEG_WATCH_DIRS && !nvt_userdir_name_parse(name, &uid) &&
	    snprintf(path, sizeof(path), "%s/%s", w->base, name) < (int)sizeof(path))
		w->n_dirs += inotify_add_watch(w->fd, path, DIR_EVENTS) >= 0;
}

int nvt_seg_watch_open(const char *base, struct nvt_seg_watch *w)
{
	struct dirent *ent;
	DIR *dir;

	memset(w, 0, sizeof(*w));
	w->base = base;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		return -1;
	w->base_wd = inotify_add_watch(w->fd, base, BASE_EVENTS);
	if (w->base_wd < 0) {
		int err = errno;
		nvt_seg_watch_close(w);
		errno = err;
		return -1;
	}
	dir = opendir(base);
	while (dir && (ent = readdir(dir)))
		watch_userdir(w, ent->d_name);
	if (dir)
		closedir(dir);
	return 0;
}

int nvt_seg_watch_wait(struct nvt_seg_watch *w, int timeout_ms)
{
	char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p = {.fd = w->fd, .events = POLLIN};
	int rc = poll(w->fd >= 0 ? &p : NULL, w->fd >= 0, timeout_ms);
	ssize_t n;

	if (rc <= 0)
		return rc < 0 && errno != EINTR ? -1 : 0;
	/* Drained: what came meanwhile is one change; a run directory that came is watched. */
	while ((n = read(w->fd, events, sizeof(events))) > 0)
		for (char *at = events; at < events + n;) {
			const struct inotify_event *e = (const struct inotify_event *)at;
			if (e->wd == w->base_wd && e->len)
				watch_userdir(w, e->name);
			at += sizeof(*e) + e->len;
		}
	return 1;
}

void nvt_seg_watch_close(struct nvt_seg_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}
