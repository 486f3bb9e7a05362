/*
 * sysutil.c - directories, small files, processes.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "sysutil.h"
#include "core/text.h"
#include "os/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int nvt_mkdirs(const char *dir, mode_t mode)
{
	char partial[512];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(partial) || dir[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	for (size_t i = 1; i <= n; i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		memcpy(partial, dir, i);
		partial[i] = '\0';
		if (mkdir(partial, mode) && errno != EEXIST)
			return -1;
	}
	return 0;
}

/* Writes len bytes of buf to fd whole, at offset at (pwrite), or at its file offset where at
 * is negative (write): nvt_pwrite_all's and nvt_write_all's. */
static int write_whole(int fd, const void *buf, size_t len, off_t at)
{
	const char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t w = at < 0 ? write(fd, p + done, len - done)
				   : pwrite(fd, p + done, len - done, at + (off_t)done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -1;
		}
		done += (size_t)w;
	}
	return 0;
}

int nvt_pwrite_all(int fd, const void *buf, size_t len, off_t at)
{
	if (at < 0) { /* (as pwrite answers it) */
		errno = EINVAL;
		return -1;
	}
	return write_whole(fd, buf, len, at);
}

int nvt_write_all(int fd, const void *buf, size_t len)
{
	return write_whole(fd, buf, len, -1);
}

int nvt_fs_is_own(const char *dir, unsigned long st_flags)
{
	char parent[4096];
	struct stat st, up;
	struct statvfs vfs;

	if (snprintf(parent, sizeof(parent), "%s/..", dir) >= (int)sizeof(parent)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (lstat(dir, &st) || stat(parent, &up) || statvfs(dir, &vfs))
		return -1;
	return S_ISDIR(st.st_mode) && st.st_dev != up.st_dev && (vfs.f_flag & st_flags) == st_flags;
}

int nvt_fs_mount_tmpfs(const char *dir, const char *options)
{
	return mount("nvtaskset", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options);
}

int nvt_fs_unmount(const char *dir)
{
	return umount2(dir, UMOUNT_NOFOLLOW);
}

DIR *nvt_opendir_fd(int dirfd)
{
	/* dup, not fcntl's F_DUPFD_CLOEXEC: check-faults' injector (tests/faults/inject.c)
	 * fails dup with EMFILE, and fdopendir makes the copy close-on-exec. */
	int copy = dup(dirfd), err;
	DIR *dir;

	if (copy < 0)
		return NULL;
	dir = fdopendir(copy);
	if (!dir) {
		err = errno;
		close(copy);
		errno = err;
		return NULL;
	}
	rewinddir(dir);
	return dir;
}

int nvt_unlink_same(int dirfd, const char *name, dev_t dev, ino_t ino, const struct timespec *ctime)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev &&
	       st.st_ino == ino &&
	       (!ctime || (st.st_ctim.tv_sec == ctime->tv_sec && st.st_ctim.tv_nsec == ctime->tv_nsec)) &&
	       unlinkat(dirfd, name, 0) == 0;
}

ssize_t nvt_read_file(const char *path, char *buf, size_t len, int tail)
{
	/* Not blocking, and only regular files: a FIFO put where a file should
	 * be must not hang the reader. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;
	int saved;

	if (fd < 0)
		return -1;
	if (len == 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (tail) {
		off_t size = lseek(fd, 0, SEEK_END);
		if (size < 0 ||
		    lseek(fd, size > (off_t)len - 1 ? size - (off_t)len + 1 : 0, SEEK_SET) < 0) {
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
	}
	n = read(fd, buf, len - 1);
	saved = errno;
	close(fd);
	errno = saved;
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}


pid_t nvt_pid_file_read(int dirfd, const char *name, uid_t uid, int flags, uid_t *owner,
			uint64_t *start)
{
	/* O_NONBLOCK: a FIFO in its place must not hang us; its type is checked next. */
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char text[64];
	const char *end;
	struct stat st;
	uint64_t pid;
	ssize_t n;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_nlink != 1 && !(flags & NVT_PID_FILE_LINKED)) ||
	    (st.st_uid != uid && !(st.st_uid == 0 && (flags & NVT_PID_FILE_ROOT)))) {
		close(fd);
		return 0;
	}
	n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	/* PIDs fit in 22 bits (PID_MAX_LIMIT); INT32_MAX keeps pid_t's sign. */
	end = nvt_decimal(text, INT32_MAX, &pid);
	if (!end || !pid)
		return 0;
	if (start && (*end != ' ' || !(end = nvt_decimal(end + 1, UINT64_MAX, start)) || *end != '\n'))
		return 0;
	if (owner)
		*owner = st.st_uid;
	return (pid_t)pid;
}

int nvt_rename_aside(int basefd, const char *leaf, const struct stat *st, char *name, size_t len)
{
	char aside[NAME_MAX + 1];
	uint64_t random = 0;
	int n;

	/* (where the kernel has no random bytes yet, the clock: she cannot read it ahead either) */
	if (getrandom(&random, sizeof(random), GRND_NONBLOCK) != (ssize_t)sizeof(random))
		random = nvt_clock_ns() ^ ((uint64_t)getpid() << 32);
	n = snprintf(aside, sizeof(aside), "%s.squatted.%lu.%lu.%016llx", leaf,
		     (unsigned long)st->st_uid, (unsigned long)st->st_ino, (unsigned long long)random);
	if (n < 0 || (size_t)n >= sizeof(aside)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (renameat(basefd, leaf, basefd, aside))
		return -1;
	if (name && len)
		snprintf(name, len, "%s", aside);
	return 0;
}
