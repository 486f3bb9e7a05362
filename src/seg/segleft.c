/*
 * segleft.c - what containers leave (segfile.h, "What containers leave"):
 * which containers' directories (segctr.c) outlived their container (its
 * first process, recorded beside its PID namespace, ended), how much each
 * holds, and their removal by a hook of root's runtime. Side effects: reads
 * /proc and the directories; removes where asked. Returns codes; never
 * prints.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- Which containers are gone ------------------------------------------------ */

int nvt_seg_ctr_gone(const struct nvt_seg_ctr *v, int n, char *gone)
{
	int own;

	if (n <= 0)
		return 0;
	memset(gone, 0, (size_t)n);
	own = nvt_procfs_own();
	if (own < 0)
		return -1;
	if (geteuid() != 0 || !own || nvt_own_pidns() != NVT_INIT_PIDNS) {
		errno = EPERM;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		uint64_t start;

		if (!v[i].init)
			continue; /* (none recorded: not judged) */
		if (nvt_proc_start_time(v[i].init, &start) == 0) {
			gone[i] = start != v[i].init_start; /* its PID is another process's */
			continue;
		}
		/* Ended (ESRCH: a zombie, ended too); anything else is no answer. */
		if (errno != ENOENT && errno != ESRCH)
			return -1;
		gone[i] = 1;
	}
	return 0;
}

/* ---- How much a container's directory holds ------------------------------------- */

/* A size walk's way down: the inode of each directory from the top to the one it is in, and
 * where its reading of each goes on (telldir; -1: from the start). */
struct size_walk {
	ino_t *ino;
	long *pos;
	size_t depth, cap;
};

static ino_t inode_of(int fd)
{
	struct stat st;
	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* Goes one down, into the directory of inode ino. Returns 0, or -1 (out of memory). */
static int size_down(struct size_walk *w, ino_t ino)
{
	if (w->depth + 1 >= w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		ino_t *inos = realloc(w->ino, cap * sizeof(*inos));
		long *pos;

		if (!inos)
			return -1;
		w->ino = inos;
		pos = realloc(w->pos, cap * sizeof(*pos));
		if (!pos)
			return -1;
		w->pos = pos;
		w->cap = cap;
	}
	w->depth++;
	w->ino[w->depth] = ino;
	w->pos[w->depth] = -1;
	return 0;
}

/*
 * Counts the entries of directory fd (on device dev: a mount point is none of the
 * container's) into size, from where w's reading of it stopped; stops at a subdirectory it may
 * go into, opened in *sub, its place kept. Returns 1 (a subdirectory in *sub), 0 (fd is
 * counted), or -1 (the bound, or fd cannot be read).
 */
static int size_level(int fd, dev_t dev, struct size_walk *w, struct nvt_seg_ctr_size *size, int *sub)
{
	int copy = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
	struct dirent *ent;
	DIR *dir;

	if (copy < 0 || !(dir = fdopendir(copy))) {
		if (copy >= 0)
			close(copy);
		return -1;
	}
	if (w->pos[w->depth] >= 0)
		seekdir(dir, w->pos[w->depth]);
	while ((ent = readdir(dir))) {
		struct stat st;

		if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, ".."))
			continue;
		if (size->entries >= NVT_CTR_SIZE_ENTRIES) {
			rc = -1;
			break;
		}
		if (fstatat(fd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) || st.st_dev != dev)
			continue; /* removed meanwhile; a mount point */
		size->entries++;
		/* A file of several links takes its share: links within the directory add up to it. */
		size->bytes += (uint64_t)st.st_blocks * 512 /
			       (S_ISDIR(st.st_mode) || st.st_nlink < 1 ? 1 : st.st_nlink);
		if (S_ISDIR(st.st_mode) && (*sub = nvt_seg_ctr_open_below(fd, ent->d_name)) >= 0) {
			w->pos[w->depth] = telldir(dir);
			rc = 1;
			break;
		}
	}
	closedir(dir);
	return rc;
}

/* Opens directory fd's parent, never through a link nor across a mount. Returns its fd, or -1. */
static int open_up(int fd)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, fd, "..", &how, sizeof(how));
}

/* Opens base/containers/ID, root's and written by nobody else. Returns its fd, or -1. */
static int open_ctr(const char *base, const char *id)
{
	char path[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32];
	struct stat st;
	int fd;

	if (!nvt_seg_ctr_id_valid(id) ||
	    snprintf(path, sizeof(path), "%s/" NVT_CONTAINERS_DIR "/%s", base, id) >= (int)sizeof(path)) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & 022))) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int nvt_seg_ctr_size(const char *base, const char *id, struct nvt_seg_ctr_size *size)
{
	struct size_walk w = {0};
	struct stat top;
	int cur = open_ctr(base, id), sub = -1, step;

	memset(size, 0, sizeof(*size));
	if (cur < 0)
		return -1;
	if (fstat(cur, &top) || size_down(&w, top.st_ino)) {
		close(cur);
		free(w.ino);
		free(w.pos);
		return -1;
	}
	w.depth = 0; /* (the top: the way's first step) */
	w.ino[0] = top.st_ino;
	w.pos[0] = -1;
	while (cur >= 0) {
		step = size_level(cur, top.st_dev, &w, size, &sub);
		if (step == 1) {
			ino_t ino = inode_of(sub);
			close(cur);
			cur = sub;
			if (size_down(&w, ino))
				break;
			continue;
		}
		if (step < 0)
			break;
		if (w.depth == 0) {
			size->whole = 1;
			break;
		}
		/* Counted: back up to where it was found, unless it was moved meanwhile. */
		sub = open_up(cur);
		close(cur);
		cur = sub;
		w.depth--;
		if (cur >= 0 && inode_of(cur) != w.ino[w.depth])
			break;
	}
	if (cur >= 0)
		close(cur);
	free(w.ino);
	free(w.pos);
	return 0;
}

/* ---- Removing what gone containers left ----------------------------------------- */

int nvt_seg_ctr_tidy(const char *base)
{
	char bad_name[NVT_CONTAINER_ID_MAX + 1], *gone;
	struct nvt_seg_ctr *v;
	int bad, n = nvt_seg_ctr_list(base, &v, &bad, bad_name, sizeof(bad_name)), removed = 0, err;

	if (n <= 0) {
		free(v);
		return n;
	}
	gone = calloc((size_t)n, 1);
	if (!gone || nvt_seg_ctr_gone(v, n, gone)) {
		err = gone ? errno : ENOMEM;
		free(gone);
		free(v);
		errno = err;
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (gone[i] && nvt_seg_ctr_remove(base, v[i].id) == 0)
			removed++;
	free(gone);
	free(v);
	return removed;
}
