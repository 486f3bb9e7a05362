/*
 * rootpath.c - paths that only root can change (see rootpath.h).
 *
 * The walk goes from / down, one directory descriptor at a time, looking at
 * each entry without following it (fstatat AT_SYMLINK_NOFOLLOW, openat
 * O_NOFOLLOW): a name that another user could make point elsewhere is
 * refused before anything below it is trusted.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "rootpath.h"
#include "core/text.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40
#define MAX_DEPTH 64

enum want { WANT_DIR, WANT_EXEC, WANT_MOUNT_POINT };

/*
 * Checks what st describes (name: its path) as a directory on the way
 * (sticky_ok: a sticky one may let others write) or as the end. Returns 0,
 * or -1 with why.
 */
static int check(const struct stat *st, const char *name, int sticky_ok, char *why, size_t len)
{
	int sticky = sticky_ok && (st->st_mode & S_ISVTX);

	if (st->st_uid != 0)
		return nvt_why(why, len, "%s belongs to uid %lu, not root", name, (unsigned long)st->st_uid);
	if ((st->st_mode & S_IWOTH) && !sticky)
		return nvt_why(why, len, "every user may write in %s (mode %04o)", name,
			       (unsigned)(st->st_mode & 07777));
	if ((st->st_mode & S_IWGRP) && st->st_gid != 0 && !sticky)
		return nvt_why(why, len, "group %lu may write in %s (mode %04o)", (unsigned long)st->st_gid,
			       name, (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Checks the end of the path: what was asked, root's, and only root's to write. */
static int check_end(const struct stat *st, const char *name, enum want want, char *why,
		     size_t len)
{
	if (want != WANT_EXEC && !S_ISDIR(st->st_mode))
		return nvt_why(why, len, "%s is not a directory", name);
	if (want == WANT_EXEC && !S_ISREG(st->st_mode))
		return nvt_why(why, len, "%s is not a regular file", name);
	if (want == WANT_EXEC && !(st->st_mode & S_IXUSR))
		return nvt_why(why, len, "%s is not executable", name);
	/* (a mount point's own mode is hidden by what is mounted on it) */
	if (want == WANT_MOUNT_POINT && st->st_uid != 0)
		return nvt_why(why, len, "%s belongs to uid %lu, not root", name, (unsigned long)st->st_uid);
	if (want == WANT_MOUNT_POINT)
		return 0;
	return check(st, name, 0, why, len);
}

/* Appends "/comp" to done (the path walked so far, "" for /). Returns 0 or -1. */
static int append(char *done, size_t size, const char *comp)
{
	size_t n = strlen(done);
	int w = snprintf(done + n, size - n, "/%s", comp);

	return w < 0 || (size_t)w >= size - n ? -1 : 0;
}

/* Makes directory comp in dir, root's, with mode (whatever the umask). */
static int make_dir(int dir, const char *comp, mode_t mode)
{
	int fd;

	if (mkdirat(dir, comp, mode) && errno != EEXIST)
		return -1;
	fd = openat(dir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fchmod(fd, mode)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Where a walk is: the path left (rest, from p), the part walked (done, no
 * links) and an O_PATH descriptor for each directory of it. */
struct walk {
	const char *path; /* as given, for messages */
	char rest[PATH_MAX], done[PATH_MAX];
	const char *p;
	int fds[MAX_DEPTH + 1], depth, links;
};

/* Follows the symbolic link comp (in the directory walked to, st its
 * lstat): the rest of the path goes on from where it points. Returns 0 or -1. */
static int follow_link(struct walk *w, const char *comp, const char *name, const struct stat *st,
		       char *why, size_t len)
{
	char target[PATH_MAX], spliced[PATH_MAX];
	ssize_t t;

	/* A link root made in a directory of root's: go where it points. */
	if (st->st_uid != 0)
		return nvt_why(why, len, "%s is a symbolic link of uid %lu", name,
			       (unsigned long)st->st_uid);
	t = readlinkat(w->fds[w->depth], comp, target, sizeof(target) - 1);
	if (t <= 0 || ++w->links > MAX_LINKS)
		return nvt_why(why, len, "cannot follow the symbolic link %s", name);
	target[t] = '\0';
	if (snprintf(spliced, sizeof(spliced), "%s/%s", target, w->p) >= (int)sizeof(spliced))
		return nvt_why(why, len, "%s is too long once its links are followed", w->path);
	if (target[0] == '/') {
		while (w->depth > 0)
			close(w->fds[w->depth--]);
		w->done[0] = '\0';
	}
	snprintf(w->rest, sizeof(w->rest), "%s", spliced);
	w->p = w->rest;
	return 0;
}

/* Goes into directory comp (st its lstat, done names it now): checked,
 * opened, and the same one as looked at. Returns 0 or -1. */
static int enter_dir(struct walk *w, const char *comp, const struct stat *st, char *why, size_t len)
{
	int fd;

	if (!S_ISDIR(st->st_mode))
		return nvt_why(why, len, "%s is not a directory", w->done);
	if (check(st, w->done, 1, why, len))
		return -1;
	if (w->depth == MAX_DEPTH)
		return nvt_why(why, len, "%s is too deep", w->path);
	fd = openat(w->fds[w->depth], comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		struct stat opened;
		if (fstat(fd, &opened) || opened.st_dev != st->st_dev || opened.st_ino != st->st_ino) {
			close(fd);
			fd = -1;
			errno = EAGAIN; /* replaced between the look and the open */
		}
	}
	if (fd < 0)
		return nvt_why(why, len, "cannot open %s: %s", w->done, strerror(errno));
	w->fds[++w->depth] = fd;
	return 0;
}

/* Looks at comp in the directory walked to (making it where asked) into st. Returns 0 or -1. */
static int look(struct walk *w, const char *comp, const char *name, enum want want, mode_t mode,
		struct stat *st, char *why, size_t len)
{
	int missing = fstatat(w->fds[w->depth], comp, st, AT_SYMLINK_NOFOLLOW) ? errno : 0;

	if (missing == ENOENT && want == WANT_DIR && mode) {
		if (make_dir(w->fds[w->depth], comp, mode))
			return nvt_why(why, len, "cannot make %s: %s", name, strerror(errno));
		missing = fstatat(w->fds[w->depth], comp, st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
	}
	return missing ? nvt_why(why, len, "%s: %s", name, strerror(missing)) : 0;
}

/*
 * One step of the walk: the next name of the path. Returns 0 to go on, 1
 * when the path's last name was checked (st), or -1.
 */
static int walk_step(struct walk *w, enum want want, mode_t mode, struct stat *st, char *why,
		     size_t len)
{
	char comp[NAME_MAX + 1], name[PATH_MAX + NAME_MAX + 2];
	size_t n;
	int last;

	n = strcspn(w->p, "/");
	if (n > NAME_MAX)
		return nvt_why(why, len, "%s has a name longer than %d bytes", w->path, NAME_MAX);
	memcpy(comp, w->p, n);
	comp[n] = '\0';
	w->p += n;
	last = !w->p[strspn(w->p, "/")];
	snprintf(name, sizeof(name), "%s/%s", w->done, comp);
	if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
		/* done has no links: ".." is its parent. */
		if (comp[1] && w->depth > 0) {
			close(w->fds[w->depth--]);
			*strrchr(w->done, '/') = '\0';
		}
		return 0;
	}
	if (look(w, comp, name, want, mode, st, why, len))
		return -1;
	if (S_ISLNK(st->st_mode))
		return follow_link(w, comp, name, st, why, len);
	if (append(w->done, sizeof(w->done), comp))
		return nvt_why(why, len, "%s is too long", w->path);
	if (last)
		return check_end(st, w->done, want, why, len) ? -1 : 1;
	return enter_dir(w, comp, st, why, len);
}

static int walk(const char *path, enum want want, mode_t mode, char *real, size_t real_len,
		char *why, size_t len)
{
	struct walk w;
	int rc = -1, step = 0;
	struct stat st;

	if (!path || path[0] != '/' || strlen(path) >= sizeof(w.rest))
		return nvt_why(why, len, "'%s' is not an absolute path", path ? path : "");
	memset(&w, 0, sizeof(w));
	w.path = path;
	snprintf(w.rest, sizeof(w.rest), "%s", path);
	w.p = w.rest;
	w.fds[0] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w.fds[0] < 0 || fstat(w.fds[0], &st)) {
		nvt_why(why, len, "cannot open /: %s", strerror(errno));
		goto out;
	}
	if (check(&st, "/", 1, why, len))
		goto out;
	while (step == 0) {
		while (*w.p == '/')
			w.p++;
		if (!*w.p)
			break;
		step = walk_step(&w, want, mode, &st, why, len);
	}
	if (step < 0)
		goto out;
	/* A path that ends in "/", "." or "..": the end is the directory we are in. */
	if (step == 0) {
		if (fstat(w.fds[w.depth], &st)) {
			nvt_why(why, len, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (check_end(&st, w.done[0] ? w.done : "/", want, why, len))
			goto out;
	}
	if (snprintf(real, real_len, "%s", w.done[0] ? w.done : "/") >= (int)real_len) {
		nvt_why(why, len, "%s is too long", w.done);
		goto out;
	}
	rc = 0;
out:
	while (w.depth >= 0) {
		if (w.fds[w.depth] >= 0)
			close(w.fds[w.depth]);
		w.depth--;
	}
	return rc;
}

int nvt_root_dir(const char *path, mode_t mode, char *real, size_t real_len, char *why,
		 size_t len)
{
	return walk(path, WANT_DIR, mode, real, real_len, why, len);
}

int nvt_root_exec(const char *path, char *real, size_t real_len, char *why, size_t len)
{
	return walk(path, WANT_EXEC, 0, real, real_len, why, len);
}

int nvt_root_mount_point(const char *path, char *real, size_t real_len, char *why, size_t len)
{
	return walk(path, WANT_MOUNT_POINT, 0, real, real_len, why, len);
}
