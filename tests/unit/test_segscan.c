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
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
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

static char born_name[64]; /* the file named for a process that starts once it is judged */
static int ns_cmd[2] = {-1, -1}, ns_ack[2] = {-1, -1}; /* to and from a namespace's PID 1 */

/* Has the PID 1 of the namespace start_namespace made fork a process (its PID 2 the first
 * time), and waits until it runs. */
static void born(void)
{
	char b = 'f';

	if (write(ns_cmd[1], &b, 1) != 1 || read(ns_ack[0], &b, 1) != 1)
		fprintf(stderr, "the namespace's PID 1 forked nothing\n");
}

/* openat(2), but the sweep's hold of born_name (O_PATH, once it judged the file a leftover)
 * starts the process it is named for: one that starts after the processes were read. */
int openat(int dirfd, const char *name, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (born_name[0] && (flags & O_PATH) && !strcmp(name, born_name)) {
		born_name[0] = '\0';
		born();
	}
	return (int)syscall(SYS_openat, dirfd, name, flags, mode);
}

/*
 * Starts a process that makes a PID namespace (and, for an ordinary user, a user namespace)
 * and runs as its PID 1, forking a process on each byte of ns_cmd (acknowledged on ns_ack),
 * until ns_cmd ends. Returns the namespace's inode, or 0 where none can be made; its maker's
 * PID in *maker.
 */
static uint64_t start_namespace(pid_t *maker)
{
	int report[2];
	pid_t one = 0;
	uint64_t ns;
	char b;

	if (pipe(ns_cmd) || pipe(ns_ack) || pipe(report))
		return 0;
	*maker = fork();
	if (*maker == 0) {
		close(ns_cmd[1]);
		close(ns_ack[0]);
		if (unshare(CLONE_NEWPID | (geteuid() ? CLONE_NEWUSER : 0)) || (one = fork()) < 0)
			_exit(1);
		if (one > 0) {
			ssize_t w = write(report[1], &one, sizeof(one));
			waitpid(one, NULL, 0);
			_exit(w != (ssize_t)sizeof(one));
		}
		while (read(ns_cmd[0], &b, 1) == 1) {
			pid_t child = fork();
			if (child == 0)
				for (;;)
					pause();
			if (write(ns_ack[1], &b, 1) != 1)
				break;
		}
		_exit(0); /* its namespace's processes end with it */
	}
	close(ns_cmd[0]);
	close(ns_ack[1]);
	close(report[1]);
	if (*maker < 0 || read(report[0], &one, sizeof(one)) != (ssize_t)sizeof(one))
		one = 0;
	close(report[0]);
	ns = one > 0 ? nvt_proc_pidns(one) : 0;
	return ns;
}

/* Ends start_namespace's processes. */
static void stop_namespace(pid_t maker)
{
	close(ns_cmd[1]);
	close(ns_ack[0]);
	if (maker > 0)
		waitpid(maker, NULL, 0);
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

/* An empty file of name in the run directory; its inode, or 0. */
static ino_t make_file(const char *name)
{
	int fd = openat(userdir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ino_t ino = fd >= 0 ? inode_of(name) : 0;

	if (fd >= 0)
		close(fd);
	return ino;
}

/*
 * Files named for another PID namespace: one whose process starts after the sweep read the
 * processes (once it judged the file) stays; one that no process has goes.
 */
static void namespaces(const char *base)
{
	char gone_name[64], name[64];
	pid_t maker = -1, *pids = NULL;
	uint64_t ns = start_namespace(&maker);
	ino_t born_ino;

	if (!ns) {
		printf("%s: no PID namespace could be made here: its part is not run\n", __FILE__);
		stop_namespace(maker);
		return;
	}
	nvt_seg_name(name, sizeof(name), ns, 2); /* the namespace's first process after its PID 1 */
	nvt_seg_name(gone_name, sizeof(gone_name), ns, 3999999);
	born_ino = make_file(name);
	CHECK(born_ino != 0 && make_file(gone_name) != 0);
	snprintf(born_name, sizeof(born_name), "%s", name);
	CHECK(nvt_seg_tasks(base, 1, &pids) >= 0);
	free(pids);
	if (nvt_procfs_shows_all(nvt_procfs_own())) {
		CHECK(born_name[0] == '\0'); /* judged a leftover, and its process started */
		CHECK(inode_of(name) == born_ino);
		CHECK(inode_of(gone_name) == 0);
	} else {
		/* Not every process in sight (nvt_procfs_shows_all): neither is removed. */
		printf("%s: /proc does not show every process to this user: files of other PID "
		       "namespaces are kept, and the part that removes one is not run\n", __FILE__);
		CHECK(inode_of(name) == born_ino && inode_of(gone_name) != 0);
	}
	born_name[0] = '\0';
	unlinkat(userdir_fd, name, 0);
	unlinkat(userdir_fd, gone_name, 0);
	stop_namespace(maker);
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
	namespaces(base);
	unlinkat(userdir_fd, NVT_LOCK_NAME, 0);
	close(userdir_fd);
	rmdir(dir);
	rmdir(base);
	return CHECK_DONE();
}
