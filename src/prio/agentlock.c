/*
 * agentlock.c - one priority agent per user: a lock file only that user and
 * root can open (NVT_AGENT_LOCK_NAME, mode 0600), and a pid file anyone can
 * read (NVT_AGENT_PID_NAME), in the user's run directory. See agent.h.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvtaskset.h"
#include "os/proc.h"
#include "os/sysutil.h"
#include "seg/segfile.h"

int nvt_agent_lock(const char *base, int *fd, char *why, size_t len)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	char text[64], dir[512];
	struct stat st;
	uint64_t start = 0;
	int dirfd = nvt_userdir_own(base, dir, sizeof(dir), why, len), lock, pidfd, n;

	if (dirfd < 0)
		return -1;
	lock = openat(dirfd, NVT_AGENT_LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (lock < 0 || fstat(lock, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		snprintf(why, len, "%s/%s: %s", dir, NVT_AGENT_LOCK_NAME,
			 lock < 0 ? strerror(errno) : "not a file of its own that only it may read");
		if (lock >= 0)
			close(lock);
		close(dirfd);
		return -1;
	}
	/* An open file description lock: the kernel drops it when the agent dies. */
	if (fcntl(lock, F_OFD_SETLK, &fl)) {
		int saved = errno;
		close(lock);
		close(dirfd);
		if (saved == EAGAIN || saved == EACCES)
			return 1;
		snprintf(why, len, "%s/%s: %s", dir, NVT_AGENT_LOCK_NAME, strerror(saved));
		return -1;
	}
	/* The pid file: written anew (never through a link), public to read. */
	nvt_proc_start_time(getpid(), &start);
	n = snprintf(text, sizeof(text), "%ld %llu\n", (long)getpid(), (unsigned long long)start);
	unlinkat(dirfd, NVT_AGENT_PID_NAME ".new", 0);
	pidfd = openat(dirfd, NVT_AGENT_PID_NAME ".new", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0644);
	if (pidfd >= 0) {
		int ok = fchmod(pidfd, 0644) == 0 && write(pidfd, text, (size_t)n) == n;
		close(pidfd);
		if (!ok || renameat(dirfd, NVT_AGENT_PID_NAME ".new", dirfd, NVT_AGENT_PID_NAME))
			unlinkat(dirfd, NVT_AGENT_PID_NAME ".new", 0);
	}
	close(dirfd);
	*fd = lock;
	return 0;
}

void nvt_agent_unlock(const char *base, int fd)
{
	pid_t pid;
	int dirfd = nvt_userdir_open(base, geteuid());

	/* Remove the pid file while holding the lock: it names us. */
	if (dirfd >= 0) {
		if (nvt_agent_running(base, geteuid(), &pid) && pid == getpid())
			unlinkat(dirfd, NVT_AGENT_PID_NAME, 0);
		close(dirfd);
	}
	if (fd >= 0)
		close(fd);
}

int nvt_agent_running(const char *base, uid_t uid, pid_t *pid)
{
	uint64_t start, want;
	uid_t euid;
	pid_t v;
	int dirfd = nvt_userdir_open(base, uid);

	if (dirfd < 0)
		return 0;
	v = nvt_pid_file_read(dirfd, NVT_AGENT_PID_NAME, uid, 0, NULL, &want);
	close(dirfd);
	/* A live process of that user's, started then: not a PID reused since. */
	if (!v || nvt_proc_start_time(v, &start) || start != want || nvt_proc_euid(v, &euid) ||
	    euid != uid)
		return 0;
	*pid = v;
	return 1;
}

int nvt_agent_log_open(const char *base)
{
	char dir[512], why[200];
	struct stat st;
	int dirfd = nvt_userdir_own(base, dir, sizeof(dir), why, sizeof(why)), fd, saved;

	if (dirfd < 0)
		return -1;
	fd = openat(dirfd, NVT_AGENT_LOG_NAME,
		    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	saved = errno;
	close(dirfd);
	if (fd < 0) {
		errno = saved;
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	/* Started afresh when long (if that fails, it grows on: no harm). */
	if (st.st_size > NVT_AGENT_LOG_MAX && ftruncate(fd, 0) != 0)
		errno = 0;
	fchmod(fd, 0644);
	return fd;
}

int nvt_agent_log_last(const char *base, uid_t uid, char *line, size_t len)
{
	char text[1024], *end, *start;
	struct stat st;
	off_t at;
	ssize_t n;
	int dirfd = nvt_userdir_open(base, uid), fd;

	if (dirfd < 0 || len == 0)
		return 0;
	/* O_NONBLOCK: a FIFO in its place must not hang us; its type is checked next. */
	fd = openat(dirfd, NVT_AGENT_LOG_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dirfd);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != uid) {
		close(fd);
		return 0;
	}
	at = st.st_size > (off_t)sizeof(text) - 1 ? st.st_size - (off_t)sizeof(text) + 1 : 0;
	n = pread(fd, text, sizeof(text) - 1, at);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	end = text + n;
	while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	if (end == text)
		return 0;
	start = strrchr(text, '\n');
	start = start ? start + 1 : text;
	snprintf(line, len, "%s", start);
	return 1;
}
