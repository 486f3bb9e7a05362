/*
 * segwalk.c - a walk down a directory tree without recursion (segwalk.h).
 * Side effects: fstat, and openat2 of "..". Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segwalk.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

ino_t nvt_seg_walk_inode(int fd)
{
	struct stat st;
	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* Room for one more step down. Returns 0, or -1 (out of memory). */
static int walk_room(struct nvt_seg_walk *w)
{
	size_t cap = w->cap ? 2 * w->cap : 64;
	ino_t *ino;
	long *pos;

	if (w->depth + 1 < w->cap)
		return 0;
	ino = realloc(w->ino, cap * sizeof(*ino));
	if (!ino)
		return -1;
	w->ino = ino;
	pos = realloc(w->pos, cap * sizeof(*pos));
	if (!pos)
		return -1;
	w->pos = pos;
	w->cap = cap;
	return 0;
}

int nvt_seg_walk_start(struct nvt_seg_walk *w, int top)
{
	ino_t ino = nvt_seg_walk_inode(top);

	w->depth = 0;
	if (!ino || walk_room(w))
		return -1;
	w->ino[0] = ino;
	w->pos[0] = -1;
	return 0;
}

int nvt_seg_walk_down(struct nvt_seg_walk *w, int sub)
{
	if (walk_room(w))
		return -1;
	w->depth++;
	w->ino[w->depth] = nvt_seg_walk_inode(sub);
	w->pos[w->depth] = -1;
	return 0;
}

int nvt_seg_walk_up(struct nvt_seg_walk *w, int cur)
{
	struct open_how how;
	int up;

	if (w->depth == 0) {
		close(cur);
		return -1;
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	up = (int)syscall(SYS_openat2, cur, "..", &how, sizeof(how));
	close(cur);
	w->depth--;
	if (up >= 0 && nvt_seg_walk_inode(up) == w->ino[w->depth])
		return up;
	if (up >= 0)
		close(up);
	return -1;
}

void nvt_seg_walk_free(struct nvt_seg_walk *w)
{
	free(w->ino);
	free(w->pos);
	memset(w, 0, sizeof(*w));
}
