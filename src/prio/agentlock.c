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

/* Opens name, a regular file of uid's in uid's run directory (never through a link; a
 * FIFO there must not hang us: O_NONBLOCK) for reading. Returns its fd (st its fstat), or -1. */
static int open_users_file(const char *base, uid_t uid, const char *name, struct stat *st)
{
	int dirfd = nvt_userdir_open(base, uid), fd;

	if (dirfd < 0)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dirfd);
	if (fd >= 0 && (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != uid)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

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

	/* Remove the pid file while holding the lock: it names us. The status file is the
	 * lock holder's (the next agent writes its own at once): none stays behind. */
	if (dirfd >= 0) {
		if (fd >= 0)
			unlinkat(dirfd, NVT_AGENT_STATUS_NAME, 0);
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
	int fd = len ? open_users_file(base, uid, NVT_AGENT_LOG_NAME, &st) : -1;

	if (fd < 0)
		return 0;
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

_Static_assert(NVT_AGENT_MAX_TASKS == 1024, "the table's size in why_texts");
static const char *const why_words[NVT_AGENT_WHYS] = {"none", "table-full", "files", "unreadable",
						       "lock-held"};
static const char *const why_texts[NVT_AGENT_WHYS] = {
	"-",
	"its table of tasks with a priority is full (1024)",
	"it is out of file descriptors",
	"it cannot open the task's segment (its user holds a lease on it, say)",
	"the segment's writer's lock stays held: it cannot change the task",
};

const char *nvt_agent_why_word(unsigned why)
{
	return why < NVT_AGENT_WHYS ? why_words[why] : "?";
}

const char *nvt_agent_why_text(unsigned why)
{
	return why < NVT_AGENT_WHYS ? why_texts[why] : "?";
}

int nvt_agent_status_write(const char *base, const struct nvt_agent_note *notes, int n)
{
	static const char tmp[] = NVT_AGENT_STATUS_NAME ".new";
	char dir[512], why[200], line[64];
	int dirfd = nvt_userdir_own(base, dir, sizeof(dir), why, sizeof(why)), fd, ok, len;

	if (dirfd < 0)
		return -1;
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		int saved = errno;
		close(dirfd);
		errno = saved;
		return -1;
	}
	ok = fchmod(fd, 0644) == 0;
	len = snprintf(line, sizeof(line), "nvtaskset-agent-status 1\n");
	ok = ok && write(fd, line, (size_t)len) == len;
	for (int i = 0; i < n && ok; i++) {
		len = snprintf(line, sizeof(line), "unfollowed %ld %s\n", (long)notes[i].pid,
			       nvt_agent_why_word(notes[i].why));
		ok = write(fd, line, (size_t)len) == len;
	}
	close(fd);
	ok = ok && renameat(dirfd, tmp, dirfd, NVT_AGENT_STATUS_NAME) == 0;
	if (!ok)
		unlinkat(dirfd, tmp, 0);
	close(dirfd);
	return ok ? 0 : -1;
}

int nvt_agent_status_read(const char *base, uid_t uid, struct nvt_agent_note *out, int max)
{
	char text[8192], *line, *next;
	struct stat st;
	ssize_t len;
	int fd = open_users_file(base, uid, NVT_AGENT_STATUS_NAME, &st), n = 0;

	if (fd < 0)
		return 0;
	len = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	if (len <= 0)
		return 0;
	text[len] = '\0';
	next = text;
	line = strsep(&next, "\n");
	if (strcmp(line, "nvtaskset-agent-status 1"))
		return 0;
	while ((line = strsep(&next, "\n")) && n < max) {
		char word[32], *end;
		long pid;
		unsigned why;
		if (strncmp(line, "unfollowed ", 11))
			continue;
		errno = 0;
		pid = strtol(line + 11, &end, 10);
		if (errno || end == line + 11 || *end != ' ' || pid <= 0 || pid > INT32_MAX ||
		    sscanf(end + 1, "%31s", word) != 1)
			continue;
		for (why = 1; why < NVT_AGENT_WHYS && strcmp(word, why_words[why]); why++)
			;
		if (why == NVT_AGENT_WHYS)
			continue;
		out[n].pid = (pid_t)pid;
		out[n++].why = why;
	}
	return n;
}
