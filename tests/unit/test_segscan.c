/*
 * test_segscan.c - the sweep of run directories (src/seg/segscan.c): a file
 * judged a dead process's is removed only if it is still the file judged.
 * This program's own kill() stands in for the moment between the judgement
 * and the removal: when the sweep asks whether the file's process is alive,
 * a new process of that PID (as its shim does: unlink the leftover, make its
 * own) replaces the file before the answer (ESRCH) comes back.
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

	unlinkat(userdir_fd, replaced_name, 0);
	close(userdir_fd);
	rmdir(dir);
	rmdir(base);
	return CHECK_DONE();
}
