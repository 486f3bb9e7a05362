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

enum want { WANT_DIR, WANT_EXEC };

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Checks what st describes (name: its path) as a directory on the way
 * (sticky_ok: a sticky one may let others write) or as the end. Returns 0,
 * or -1 with why.
 */
static int check(const struct stat *st, const char *name, int sticky_ok, char *why, size_t len)
{
	int sticky = sticky_ok && (st->st_mode & S_ISVTX);

	if (st->st_uid != 0)
		return fail(why, len, "%s belongs to uid %lu, not root", name, (unsigned long)st->st_uid);
	if ((st->st_mode & S_IWOTH) && !sticky)
		return fail(why, len, "every user may write in %s (mode %04o)", name,
			    (unsigned)(st->st_mode & 07777));
	if ((st->st_mode & S_IWGRP) && st->st_gid != 0 && !sticky)
		return fail(why, len, "group %lu may write in %s (mode %04o)", (unsigned long)st->st_gid,
			    name, (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Checks the end of the path: what was asked, root's, and only root's to write. */
static int check_end(const struct stat *st, const char *name, enum want want, char *why,
		     size_t len)
{
	if (want == WANT_DIR && !S_ISDIR(st->st_mode))
		return fail(why, len, "%s is not a directory", name);
	if (want == WANT_EXEC && !S_ISREG(st->st_mode))
		return fail(why, len, "%s is not a regular file", name);
	if (want == WANT_EXEC && !(st->st_mode & S_IXUSR))
		return fail(why, len, "%s is not executable", name);
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

static int walk(const char *path, enum want want, mode_t mode, char *real, size_t real_len,
		char *why, size_t len)
{
	char rest[PATH_MAX], done[PATH_MAX] = "", name[PATH_MAX + NAME_MAX + 2];
	int fds[MAX_DEPTH + 1], depth = 0, links = 0, rc = -1, ended = 0;
	const char *p;
	struct stat st;

	if (!path || path[0] != '/' || strlen(path) >= sizeof(rest))
		return fail(why, len, "'%s' is not an absolute path", path ? path : "");
	snprintf(rest, sizeof(rest), "%s", path);
	fds[0] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fds[0] < 0 || fstat(fds[0], &st)) {
		fail(why, len, "cannot open /: %s", strerror(errno));
		goto out;
	}
	if (check(&st, "/", 1, why, len))
		goto out;
	for (p = rest; !ended;) {
		char comp[NAME_MAX + 1], target[PATH_MAX], spliced[PATH_MAX];
		size_t n;
		ssize_t t;
		int last, fd, missing;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			fail(why, len, "%s has a name longer than %d bytes", path, NAME_MAX);
			goto out;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		last = !p[strspn(p, "/")];
		snprintf(name, sizeof(name), "%s/%s", done, comp);
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			/* done has no links: ".." is its parent. */
			if (comp[1] && depth > 0) {
				close(fds[depth--]);
				*strrchr(done, '/') = '\0';
			}
			continue;
		}
		missing = fstatat(fds[depth], comp, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
		if (missing == ENOENT && want == WANT_DIR && mode) {
			if (make_dir(fds[depth], comp, mode)) {
				fail(why, len, "cannot make %s: %s", name, strerror(errno));
				goto out;
			}
			missing = fstatat(fds[depth], comp, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
		}
		if (missing) {
			fail(why, len, "%s: %s", name, strerror(missing));
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			/* A link root made in a directory of root's: go where it points. */
			if (st.st_uid != 0) {
				fail(why, len, "%s is a symbolic link of uid %lu", name,
				     (unsigned long)st.st_uid);
				goto out;
			}
			t = readlinkat(fds[depth], comp, target, sizeof(target) - 1);
			if (t <= 0 || ++links > MAX_LINKS) {
				fail(why, len, "cannot follow the symbolic link %s", name);
				goto out;
			}
			target[t] = '\0';
			if (snprintf(spliced, sizeof(spliced), "%s/%s", target, p) >= (int)sizeof(spliced)) {
				fail(why, len, "%s is too long once its links are followed", path);
				goto out;
			}
			if (target[0] == '/') {
				while (depth > 0)
					close(fds[depth--]);
				done[0] = '\0';
			}
			snprintf(rest, sizeof(rest), "%s", spliced);
			p = rest;
			continue;
		}
		if (append(done, sizeof(done), comp)) {
			fail(why, len, "%s is too long", path);
			goto out;
		}
		if (last) {
			if (check_end(&st, done, want, why, len))
				goto out;
			ended = 1;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			fail(why, len, "%s is not a directory", done);
			goto out;
		}
		if (check(&st, done, 1, why, len))
			goto out;
		if (depth == MAX_DEPTH) {
			fail(why, len, "%s is too deep", path);
			goto out;
		}
		fd = openat(fds[depth], comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			struct stat opened;
			if (fstat(fd, &opened) || opened.st_dev != st.st_dev || opened.st_ino != st.st_ino) {
				close(fd);
				fd = -1;
				errno = EAGAIN; /* replaced between the look and the open */
			}
		}
		if (fd < 0) {
			fail(why, len, "cannot open %s: %s", done, strerror(errno));
			goto out;
		}
		fds[++depth] = fd;
	}
	/* A path that ends in "/", "." or "..": the end is the directory we are in. */
	if (!ended) {
		if (fstat(fds[depth], &st)) {
			fail(why, len, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (check_end(&st, done[0] ? done : "/", want, why, len))
			goto out;
	}
	if (snprintf(real, real_len, "%s", done[0] ? done : "/") >= (int)real_len) {
		fail(why, len, "%s is too long", done);
		goto out;
	}
	rc = 0;
out:
	while (depth >= 0) {
		if (fds[depth] >= 0)
			close(fds[depth]);
		depth--;
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
