/*
 * segleft.c - what containers leave (segfile.h, "What containers leave"):
 * which containers' directories (segcontainer.c) outlived their container (its
 * first process, recorded beside its PID namespace, ended), how much each
 * holds, and their removal by a hook of root's runtime. Side effects: reads
 * /proc and the directories; removes where asked. Returns codes; never
 * prints.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segfile.h"
#include "segwalk.h"
#include "os/sysutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Which containers are gone ------------------------------------------------ */

int nvt_seg_container_gone(const struct nvt_seg_container *v, int n, char *gone)
{
	int own;

	if (n <= 0)
		return 0;
	memset(gone, 0, (size_t)n);
	own = nvt_procfs_own();
	if (own < 0)
		return -1;
	/* (root: nothing is hidden from it) */
	if (geteuid() != 0 || !nvt_procfs_shows_all(own)) {
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

/*
 * Counts the entries of directory fd (on device dev: a mount point is none of the
 * container's) into size, from where w's reading of it stopped; stops at a subdirectory it may
 * go into, opened in *sub, its place kept. Returns 1 (a subdirectory in *sub), 0 (fd is
 * counted), or -1 (the bound, or fd cannot be read).
 */
static int size_level(int fd, dev_t dev, struct nvt_seg_walk *w, struct nvt_seg_container_size *size, int *sub)
{
	DIR *dir = nvt_opendir_fd(fd);
	struct dirent *ent;
	int rc = 0;

	if (!dir)
		return -1;
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
		if (S_ISDIR(st.st_mode) && (*sub = nvt_seg_container_open_below(fd, ent->d_name)) >= 0) {
			w->pos[w->depth] = telldir(dir);
			rc = 1;
			break;
		}
	}
	closedir(dir);
	return rc;
}

/* Opens directory fd's parent, never through a link nor across a mount. Returns its fd, or -1. */
/* Opens base/containers/ID, root's and written by nobody else. Returns its fd, or -1. */
static int open_ctr(const char *base, const char *id)
{
	char path[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32];
	struct stat st;
	int fd;

	if (!nvt_seg_container_id_valid(id) ||
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

int nvt_seg_container_size(const char *base, const char *id, struct nvt_seg_container_size *size)
{
	struct nvt_seg_walk w = {0};
	struct stat top;
	int cur = open_ctr(base, id), sub = -1, step;

	memset(size, 0, sizeof(*size));
	if (cur < 0)
		return -1;
	if (fstat(cur, &top) || nvt_seg_walk_start(&w, cur)) {
		close(cur);
		nvt_seg_walk_free(&w);
		return -1;
	}
	while (cur >= 0) {
		step = size_level(cur, top.st_dev, &w, size, &sub);
		if (step == 1) {
			close(cur);
			cur = sub;
			if (nvt_seg_walk_down(&w, sub))
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
		cur = nvt_seg_walk_up(&w, cur);
	}
	if (cur >= 0)
		close(cur);
	nvt_seg_walk_free(&w);
	return 0;
}

/* ---- Removing what gone containers left ----------------------------------------- */

int nvt_seg_container_tidy(const char *base)
{
	char bad_name[NVT_CONTAINER_ID_MAX + 1], *gone;
	struct nvt_seg_container *v;
	int bad, n = nvt_seg_container_list(base, &v, &bad, bad_name, sizeof(bad_name)), removed = 0, err;

	if (n <= 0) {
		free(v);
		return n;
	}
	gone = calloc((size_t)n, 1);
	if (!gone || nvt_seg_container_gone(v, n, gone)) {
		err = gone ? errno : ENOMEM;
		free(gone);
		free(v);
		errno = err;
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (gone[i] && nvt_seg_container_remove(base, v[i].id) == 0)
			removed++;
	free(gone);
	free(v);
	return removed;
}
