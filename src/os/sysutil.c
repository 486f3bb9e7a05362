/*
 * sysutil.c - directories, small files, processes.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "sysutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

