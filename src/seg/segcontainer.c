/*
 * segcontainer.c - containers' run directories (segfile.h, "Containers' run
 * directories"): reading which containers base holds and the PID namespace
 * each was recorded with, and making and removing one (a CDI hook's, as
 * root). Side effects: files. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segcontainer.h"
#include "segwalk.h"
#include "os/sysutil.h"
#include "core/grow.h"
#include "core/text.h"

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

int nvt_seg_container_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > NVT_CONTAINER_ID_MAX || id[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

int nvt_seg_container_base(char *buf, size_t len, const char *base, const char *id)
{
	int n = snprintf(buf, len, "%s/" NVT_CONTAINERS_DIR "/%s/" NVT_CONTAINER_RUN, base, id);
	return (n < 0 || (size_t)n >= len || !nvt_seg_container_id_valid(id)) ? -1 : 0;
}

int nvt_seg_container_userdir_open(const char *base, const char *id, uid_t uid)
{
	char dir[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32];

	if (!id[0])
		return nvt_userdir_open(base, uid);
	if (nvt_seg_container_base(dir, sizeof(dir), base, id)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return nvt_userdir_open(dir, uid);
}

/* 1 if fd is a directory of root's that nobody else may write in. */
static int roots_dir(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022);
}

/* What directory dirfd's pidns file (root's regular file) records into c: its PID namespace,
 * then, on a line of its own, the container's first process (its PID and start time; 0 0 where
 * the line is missing). Returns 0, or -1. */
static int read_pidns(int dirfd, struct nvt_seg_container *c)
{
	int fd = openat(dirfd, NVT_CONTAINER_PIDNS, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char text[96];
	struct stat st;
	ssize_t n = -1;
	const char *end;
	uint64_t pid;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022))
		n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	c->init = 0;
	c->init_start = 0;
	end = nvt_decimal(text, UINT64_MAX, &c->pidns);
	if (!end || (*end != '\n' && *end != '\0') || !c->pidns)
		return -1;
	if (*end && end[1]) {
		end = nvt_decimal(end + 1, INT32_MAX, &pid);
		if (!end || *end != ' ' || !(end = nvt_decimal(end + 1, UINT64_MAX, &c->init_start)) ||
		    (*end != '\n' && *end != '\0'))
			return -1;
		c->init = (pid_t)pid;
	}
	return 0;
}

/* What open_containers answers besides a descriptor (>= 0). */
enum nvt_seg_container_open_rc {
	NVT_SEG_CONTAINER_ESYS = -1,      /* errno says why */
	NVT_SEG_CONTAINER_NONE = -2,      /* base holds no containers directory */
	NVT_SEG_CONTAINER_UNTRUSTED = -3, /* one that is not root's alone (or no directory) */
};

/* Opens base/containers if it is root's and written by nobody else. Returns its fd, or enum
 * nvt_seg_container_open_rc. */
static int open_containers(const char *base)
{
	char path[NVT_RUNDIR_MAX + 32];
	int fd;

	if (snprintf(path, sizeof(path), "%s/" NVT_CONTAINERS_DIR, base) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NVT_SEG_CONTAINER_ESYS;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return NVT_SEG_CONTAINER_NONE;
	if (fd < 0)
		return errno == ENOTDIR || errno == ELOOP || errno == EACCES ? NVT_SEG_CONTAINER_UNTRUSTED
									      : NVT_SEG_CONTAINER_ESYS;
	if (!roots_dir(fd)) {
		close(fd);
		return NVT_SEG_CONTAINER_UNTRUSTED;
	}
	return fd;
}

static void note_bad(int *bad, char *bad_name, size_t bad_len, const char *name)
{
	if (!(*bad)++)
		snprintf(bad_name, bad_len, "%s", name);
}

int nvt_seg_container_list(const char *base, struct nvt_seg_container **out, int *bad, char *bad_name,
			size_t bad_len)
{
	struct nvt_seg_container *v = NULL, *grown;
	size_t n = 0, cap = 0;
	struct dirent *ent;
	int fd = open_containers(base), err;
	DIR *dir;

	*out = NULL;
	*bad = 0;
	if (bad_len)
		bad_name[0] = '\0';
	if (fd == NVT_SEG_CONTAINER_NONE)
		return 0;
	if (fd == NVT_SEG_CONTAINER_UNTRUSTED) {
		note_bad(bad, bad_name, bad_len, NVT_CONTAINERS_DIR);
		return 0;
	}
	if (fd < 0 || !(dir = fdopendir(fd))) {
		err = errno;
		if (fd >= 0)
			close(fd);
		errno = err;
		return -1;
	}
	while ((ent = readdir(dir)) && n < NVT_CONTAINERS_MAX) {
		struct nvt_seg_container c;
		int cfd;

		if (!nvt_seg_container_id_valid(ent->d_name))
			continue; /* ".", "..", and what the hook renamed aside */
		cfd = openat(dirfd(dir), ent->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK |
								   O_CLOEXEC);
		memset(&c, 0, sizeof(c));
		snprintf(c.id, sizeof(c.id), "%.128s", ent->d_name);
		if (cfd < 0 && errno == ENOENT)
			continue; /* removed meanwhile (a poststop hook) */
		if (cfd < 0 || !roots_dir(cfd) || read_pidns(cfd, &c)) {
			/* (a directory being made has no pidns file yet: not a container's yet) */
			if (cfd < 0 || !roots_dir(cfd))
				note_bad(bad, bad_name, bad_len, ent->d_name);
			if (cfd >= 0)
				close(cfd);
			continue;
		}
		close(cfd);
		grown = nvt_grow(v, n, &cap, sizeof(*v), 16);
		if (!grown) {
			free(v);
			closedir(dir);
			errno = ENOMEM;
			return -1;
		}
		v = grown;
		v[n++] = c;
	}
	closedir(dir);
	*out = v;
	return (int)n;
}

/* Makes directory name in dirfd, root's with mode, or takes the one there if it is root's
 * (its mode set to mode). Returns its fd, or -1 with errno set. */
static int make_dir(int dirfd, const char *name, mode_t mode)
{
	int fd;
	struct stat st;

	if (mkdirat(dirfd, name, 0700) && errno != EEXIST)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    ((st.st_mode & 07777) != mode && fchmod(fd, mode))) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int nvt_seg_container_make(const char *base, const struct nvt_seg_container *c, char *why, size_t len)
{
	char text[96], path[NVT_RUNDIR_MAX + 32];
	int basefd, ctrs = -1, dir = -1, run = -1, fd, rc = -1;
	struct nvt_seg_container had;
	struct stat st;

	if (!nvt_seg_container_id_valid(c->id))
		return nvt_why(why, len, "the container's id is no name for a directory: 1 to %d of "
				    "A-Z, a-z, 0-9, '_', '.' and '-', not starting with '.'",
			       NVT_CONTAINER_ID_MAX);
	basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (basefd < 0)
		return nvt_why(why, len, "cannot open %s: %s", base, strerror(errno));
	/* Another user's entry in its place (the shared directory is 1777): renamed aside, as root's
	 * run directory's squatter is. */
	if (fstatat(basefd, NVT_CONTAINERS_DIR, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (st.st_uid != 0 || !S_ISDIR(st.st_mode))) {
		if (nvt_rename_aside(basefd, NVT_CONTAINERS_DIR, &st, NULL, 0)) {
			nvt_why(why, len, "cannot rename aside %s/%s, uid %lu's: %s", base,
				NVT_CONTAINERS_DIR, (unsigned long)st.st_uid, strerror(errno));
			goto out;
		}
	}
	snprintf(path, sizeof(path), "%s/" NVT_CONTAINERS_DIR, base);
	ctrs = make_dir(basefd, NVT_CONTAINERS_DIR, 0755);
	if (ctrs < 0 || (dir = make_dir(ctrs, c->id, 0755)) < 0) {
		nvt_why(why, len, "cannot make %s%s%s, root's: %s", path, ctrs < 0 ? "" : "/",
			ctrs < 0 ? "" : c->id, strerror(errno));
		goto out;
	}
	snprintf(text, sizeof(text), "%llu\n%ld %llu\n", (unsigned long long)c->pidns, (long)c->init,
		 (unsigned long long)c->init_start);
	fd = openat(dir, NVT_CONTAINER_PIDNS, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST) {
		if (read_pidns(dir, &had) || had.pidns != c->pidns) {
			nvt_why(why, len, "%s/%s holds another container's directory", path, c->id);
			goto out;
		}
	} else if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fchmod(fd, 0644)) {
		nvt_why(why, len, "cannot write %s/%s/%s: %s", path, c->id, NVT_CONTAINER_PIDNS,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (fd >= 0)
		close(fd);
	run = make_dir(dir, NVT_CONTAINER_RUN, NVT_SHARED_RUNDIR_MODE);
	if (run < 0) {
		nvt_why(why, len, "cannot make %s/%s/%s, root's: %s", path, c->id, NVT_CONTAINER_RUN,
			strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (run >= 0)
		close(run);
	if (dir >= 0)
		close(dir);
	if (ctrs >= 0)
		close(ctrs);
	close(basefd);
	return rc;
}

int nvt_seg_container_open_below(int dirfd, const char *name)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	how.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

/* The most times a removal starts again from the top (a directory moved away while it was in
 * it), and the most entries it may leave (mount points) before it gives up. */
#define RM_RESTARTS 64
#define RM_LEFT 256

/* A removal's walk: the inodes of the directories from the top down to the one it is in (the
 * way back up, checked), and the entries it could not remove. */
struct rm_walk {
	struct nvt_seg_walk way;
	ino_t left[RM_LEFT];
	int n_left;
	ino_t emptied; /* the directory the walk came back up from, emptied */
};

static int left_has(const struct rm_walk *w, ino_t ino)
{
	for (int i = 0; i < w->n_left; i++)
		if (w->left[i] == ino)
			return 1;
	return 0;
}

/* Notes ino as staying. Returns 0, or -1 (too many). */
static int leave(struct rm_walk *w, ino_t ino)
{
	if (left_has(w, ino))
		return 0;
	if (w->n_left == RM_LEFT)
		return -1;
	w->left[w->n_left++] = ino;
	return 0;
}

/* Removes what directory fd holds but its subdirectories; returns the first subdirectory
 * that is not empty, opened (never through a link, nor into a mount point: those stay), in
 * *sub. Returns 1 (a subdirectory in *sub), 0 (fd holds nothing more it may remove), or -1
 * (something stays). */
static int empty_level(int fd, struct rm_walk *w, int *sub)
{
	DIR *dir = nvt_opendir_fd(fd);
	struct dirent *ent;
	int rc = 0;

	if (!dir)
		return -1;
	while ((ent = readdir(dir))) {
		if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, ".."))
			continue;
		if (left_has(w, ent->d_ino)) {
			rc = -1;
			continue;
		}
		if (unlinkat(fd, ent->d_name, 0) == 0 || errno == ENOENT ||
		    unlinkat(fd, ent->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			continue;
		/* A directory that is not empty: gone into (a link was unlinked above); a mount
		 * point (one that propagated from the container's mount namespace, or a host's:
		 * what it holds is no part of the container's directory) stays, and so does one
		 * emptied that would not go. */
		*sub = ent->d_ino == w->emptied ? -1 : nvt_seg_container_open_below(fd, ent->d_name);
		if (*sub >= 0) {
			closedir(dir);
			return 1;
		}
		if (leave(w, ent->d_ino))
			break;
		rc = -1;
	}
	closedir(dir);
	return rc;
}

/*
 * Removes everything in directory top, whatever its depth: without recursion
 * (a walk down and back up through "..", each step checked against the way
 * down: a directory moved out meanwhile sends the walk back to the top), with
 * two descriptors at a time, never through a link nor into a mount point
 * (RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS: those stay). Returns 0, or -1
 * (something stays).
 */
static int empty_tree(int top)
{
	struct rm_walk w = {0};
	int cur = -1, restarts = 0, rc = -1, step = -1, sub;

	if (nvt_seg_walk_start(&w.way, top)) {
		nvt_seg_walk_free(&w.way);
		return -1;
	}
	cur = dup(top);
	while (cur >= 0) {
		step = empty_level(cur, &w, &sub);
		if (step == 1) {
			if (nvt_seg_walk_down(&w.way, sub)) {
				close(sub);
				break;
			}
			close(cur);
			cur = sub;
			continue;
		}
		if (w.way.depth == 0) {
			rc = step;
			break;
		}
		/* Done with this one: back up, by "..", to the directory it was found in. */
		if (step && leave(&w, w.way.ino[w.way.depth]))
			break;
		w.emptied = step ? 0 : w.way.ino[w.way.depth];
		cur = nvt_seg_walk_up(&w.way, cur);
		if (cur >= 0)
			continue;
		/* Moved out from under the walk: from the top again. */
		if (++restarts > RM_RESTARTS)
			break;
		w.way.depth = 0;
		cur = dup(top);
	}
	if (cur >= 0)
		close(cur);
	nvt_seg_walk_free(&w.way);
	return rc;
}

int nvt_seg_container_remove(const char *base, const char *id)
{
	char path[NVT_RUNDIR_MAX + 32];
	int ctrs, dir, rc;

	if (!nvt_seg_container_id_valid(id)) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/" NVT_CONTAINERS_DIR, base);
	ctrs = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ctrs < 0)
		return -1;
	dir = roots_dir(ctrs) ? openat(ctrs, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (dir < 0) {
		if (errno != ENOENT)
			errno = EPERM;
		close(ctrs);
		return -1;
	}
	rc = roots_dir(dir) ? empty_tree(dir) : -1;
	close(dir);
	if (!rc && unlinkat(ctrs, id, AT_REMOVEDIR))
		rc = -1;
	close(ctrs);
	return rc;
}
