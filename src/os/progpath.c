/*
 * progpath.c - the program a command line names, found as execvp(3) would find it.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/progpath.h"

/* Returns 0 if path is a file this process may execute, else -1 with errno (EACCES for one
 * that exists but is a directory or not executable). */
static int runnable(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	if (!S_ISREG(st.st_mode) || access(path, X_OK)) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

int nvt_progpath_find(const char *name, char *path, size_t len)
{
	const char *dirs = getenv("PATH"), *dir, *end;
	char fallback[256];
	int denied = 0;
	size_t dir_len;
	int n;

	if (!*name) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(name, '/')) {
		if ((size_t)snprintf(path, len, "%s", name) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return runnable(path);
	}
	if (!dirs) {
		size_t got = confstr(_CS_PATH, fallback, sizeof(fallback));
		dirs = got && got <= sizeof(fallback) ? fallback : "/bin:/usr/bin";
	}
	for (dir = dirs;; dir = end + 1) {
		end = strchrnul(dir, ':');
		dir_len = (size_t)(end - dir);
		n = dir_len ? snprintf(path, len, "%.*s/%s", (int)dir_len, dir, name) :
			      snprintf(path, len, "%s", name);
		if (n >= 0 && (size_t)n < len) {
			if (runnable(path) == 0)
				return 0;
			/* A file there that cannot run; not an unreadable directory, as a shell. */
			if (errno == EACCES && access(path, F_OK) == 0)
				denied = 1;
		}
		if (!*end)
			break;
	}
	errno = denied ? EACCES : ENOENT;
	return -1;
}
