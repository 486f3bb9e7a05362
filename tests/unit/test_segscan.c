/*
 * test_segscan.c - the sweep of run directories (src/seg/segscan.c): a file
 * judged a dead process's is removed only if it is still the file judged.
 * This program's own kill() stands in for the moment between the judgement
 * and the removal: when the sweep asks whether the file's process is alive,
 * a new process of that PID (as its shim does: unlink the leftover, make its
 * own) replaces the file before the answer (ESRCH) comes back. Its unlinkat()
 * stands in for the moment between the sweep's last look at the file and its
 * removal: a maker that takes the segment's writer's lock replaces it there.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "os/proc.h"
#include "seg/segfile.h"
#include "seg/segscan.h"

static int userdir_fd = -1;
static pid_t replaced_pid;       /* the PID whose file kill() replaces, once; 0: none */
static char replaced_name[64];   /* its file's name */
static ino_t replacement_ino;    /* the inode of the file kill() made */
static char window_name[64];     /* the file unlinkat() is asked to remove: a maker comes first */
static int maker_came;           /* 1: the maker took the writer's lock and made its file first */
static ino_t maker_ino;          /* the inode of the maker's file */

/* What a new process's shim does with a leftover of its PID's name: under the segment's
 * writer's lock, unlinks it and makes its own file. Returns 1 if it could take the lock. */
static int maker(const char *name)
{
	int lock_fd = nvt_lock_open(userdir_fd, geteuid()), fd, took;
	uint64_t pidns;
	pid_t pid;
	struct stat st;

	if (lock_fd < 0 || nvt_seg_name_parse(name, &pidns, &pid))
		return 0;
	took = nvt_lock_byte(lock_fd, pidns, pid, F_WRLCK) == 0;
	if (took) {
		syscall(SYS_unlinkat, userdir_fd, name, 0);
		fd = (int)syscall(SYS_openat, userdir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 && fstat(fd, &st) == 0)
			maker_ino = st.st_ino;
		if (fd >= 0)
			close(fd);
		nvt_lock_byte(lock_fd, pidns, pid, F_UNLCK);
	}
	close(lock_fd);
	return took;
}

/* unlinkat(2), but when the sweep removes window_name, a maker tries to replace it first:
 * the moment between the sweep's look at the name and its removal. */
int unlinkat(int dirfd, const char *name, int flags)
{
	if (window_name[0] && !strcmp(name, window_name)) {
		window_name[0] = '\0';
		maker_came = maker(name);
	}
	return (int)syscall(SYS_unlinkat, dirfd, name, flags);
}

/* kill(2), but for replaced_pid's first look (signal 0): its file is replaced first. */
int kill(pid_t pid, int sig)
{
	if (pid == replaced_pid && sig == 0) {
		struct stat st;
		int fd;
		replaced_pid = 0;
		unlinkat(userdir_fd, replaced_name, 0);
		fd = openat(userdir_fd, replaced_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 && fstat(fd, &st) == 0)
			replacement_ino = st.st_ino;
		if (fd >= 0)
			close(fd);
	}
	return (int)syscall(SYS_kill, pid, sig);
}

/* A PID no process has now: a child's, reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* The inode of name in the run directory, or 0 if it has none. */
static ino_t inode_of(const char *name)
{
	struct stat st;

	return fstatat(userdir_fd, name, &st, AT_SYMLINK_NOFOLLOW) ? 0 : st.st_ino;
}

int main(void)
{
	char base[] = "/tmp/nvt-segscan.XXXXXX", dir[128];
	pid_t *pids = NULL;
	int fd;

	if (!mkdtemp(base) || chmod(base, 0755))
		return perror("mkdtemp"), 1;
	snprintf(dir, sizeof(dir), "%s/nvtaskset-%u", base, (unsigned)geteuid());
	if (mkdir(dir, 0755) || chmod(dir, 0755) || (userdir_fd = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
		return perror(dir), 1;
	replaced_pid = dead_pid();
	nvt_seg_name(replaced_name, sizeof(replaced_name), nvt_own_pidns(), replaced_pid);
	fd = openat(userdir_fd, replaced_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);

	/* The sweep judged the leftover; the file a new process made meanwhile stays. */
	CHECK(nvt_seg_tasks(base, 1, &pids) == 0);
	free(pids);
	CHECK(replaced_pid == 0 && replacement_ino != 0);
	CHECK(inode_of(replaced_name) == replacement_ino);
	/* A leftover judged and still there goes. */
	CHECK(nvt_seg_tasks(base, 1, &pids) == 0);
	free(pids);
	CHECK(inode_of(replaced_name) == 0);

	/* A maker that comes between the sweep's look at a leftover and its removal waits for
	 * the writer's lock the sweep holds; its file, made once the sweep is done, stays. */
	nvt_seg_name(window_name, sizeof(window_name), nvt_own_pidns(), dead_pid());
	snprintf(replaced_name, sizeof(replaced_name), "%s", window_name);
	fd = openat(userdir_fd, window_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(nvt_seg_tasks(base, 1, &pids) == 0);
	free(pids);
	CHECK(window_name[0] == '\0'); /* the sweep removed it */
	CHECK(!maker_came);
	if (!maker_came)
		CHECK(maker(replaced_name));
	CHECK(maker_ino != 0 && inode_of(replaced_name) == maker_ino);

	unlinkat(userdir_fd, replaced_name, 0);
	unlinkat(userdir_fd, NVT_LOCK_NAME, 0);
	close(userdir_fd);
	rmdir(dir);
	rmdir(base);
	return CHECK_DONE();
}
