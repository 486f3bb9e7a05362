/*
 * test_segscan.c - the sweep of run directories (src/seg/segscan.c): a file
 * judged a dead process's is removed only if it is still the file judged.
 * This program's own kill() stands in for the moment between the judgement
 * and the removal: when the sweep asks whether the file's process is alive,
 * a new process of that PID (as its shim does: unlink the leftover, make its
 * own) replaces the file before the answer (ESRCH) comes back. Its unlinkat()
 * stands in for the moment between the sweep's last look at the file and its
 * removal: a maker that takes the segment's writer's lock replaces it there.
 * Its opendir() counts the sweep's walks of /proc (and fails one on demand),
 * and its fstatat() can give a new file the inode number of the one it
 * replaced, as a file system that reuses freed numbers at once does. Its
 * open() and openat() fail one path or name on demand (EMFILE), for the walk
 * of the files that name a task.
 * Over 500 lines on purpose: its cases share the interposed calls above and
 * the run directory main makes (split, each part would repeat them).
 * Run with "namespaces", it runs only the part that needs a PID namespace of
 * its own and a /proc that shows every process: a skip (77) where it cannot.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
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
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "os/proc.h"
#include "seg/segfile.h"
#include "seg/segopen.h"
#include "seg/segscan.h"

static int userdir_fd = -1;
static pid_t replaced_pid;       /* the PID whose file kill() replaces, once; 0: none */
static char replaced_name[64];   /* its file's name */
static ino_t replacement_ino;    /* the inode of the file kill() made */
static char window_name[64];     /* the file unlinkat() is asked to remove: a maker comes first */
static int maker_came;           /* 1: the maker took the writer's lock and made its file first */
static ino_t maker_ino;          /* the inode of the maker's file */
static int proc_walks;           /* opendir("/proc") calls */
static int failed_walk;          /* the walk of /proc that fails (EMFILE), counting from 1; 0: none */
static pid_t vanishing_pid;      /* the PID whose first look (kill 0) finds it alive, then ends it */
static int swap_armed;           /* 1: the next open of the writer's lock replaces swap_name */
static char swap_name[64];       /* the file replaced then, by one that fstatat gives its inode */
static ino_t swap_ino;           /* swap_name's first file's inode, that fstatat gives the new one */
static ino_t swap_new_ino;       /* the new file's own inode */
static char emfile_path[160];    /* open() of this path fails (EMFILE); "": none */
static char emfile_name[64];     /* openat() of this name fails (EMFILE); "": none */

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

/* The mode an open's flags say follows them in ap (O_CREAT, O_TMPFILE), or 0. */
static mode_t mode_of(int flags, va_list *ap)
{
	return flags & (O_CREAT | O_TMPFILE) ? (mode_t)va_arg(*ap, int) : 0;
}

/* openat(2), but the sweep's hold of born_name (O_PATH, once it judged the file a leftover)
 * starts the process it is named for: one that starts after the processes were read. */
int openat(int dirfd, const char *name, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, &ap);
	va_end(ap);
	if (emfile_name[0] && !strcmp(name, emfile_name)) {
		errno = EMFILE;
		return -1;
	}
	if (born_name[0] && (flags & O_PATH) && !strcmp(name, born_name)) {
		born_name[0] = '\0';
		born();
	}
	if (swap_armed && !strcmp(name, NVT_LOCK_NAME)) {
		/* A new process of the PID replaces the leftover, a clock tick or more after it
		 * was made; its file gets the leftover's inode number (fstatat below). */
		struct timespec tick = {0, 20 * 1000 * 1000};
		struct stat st;
		int fd;
		swap_armed = 0;
		syscall(SYS_unlinkat, dirfd, swap_name, 0);
		nanosleep(&tick, NULL);
		fd = (int)syscall(SYS_openat, dirfd, swap_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 && fstat(fd, &st) == 0)
			swap_new_ino = st.st_ino;
		if (fd >= 0)
			close(fd);
	}
	return (int)syscall(SYS_openat, dirfd, name, flags, mode);
}

/* The fortified openat(2) of a call whose flags are not constant: openat's above. */
int __openat_2(int dirfd, const char *name, int flags)
{
	return openat(dirfd, name, flags);
}

/* open(2), but emfile_path's fails (EMFILE). */
int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, &ap);
	va_end(ap);
	if (emfile_path[0] && !strcmp(path, emfile_path)) {
		errno = EMFILE;
		return -1;
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

/* fstatat(2), but swap_name's new file (swap_new_ino) shows swap_ino, its leftover's. */
int fstatat(int dirfd, const char *name, struct stat *st, int flags)
{
	static int (*real)(int, const char *, struct stat *, int);
	int rc;

	if (!real)
		real = (int (*)(int, const char *, struct stat *, int))dlsym(RTLD_NEXT, "fstatat");
	rc = real(dirfd, name, st, flags);
	if (rc == 0 && swap_new_ino && st->st_ino == swap_new_ino && !strcmp(name, swap_name))
		st->st_ino = swap_ino;
	return rc;
}

/* opendir(3), counting the walks of /proc; failed_walk's fails (EMFILE). */
DIR *opendir(const char *path)
{
	static DIR *(*real)(const char *);

	if (!real)
		real = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
	if (!strcmp(path, "/proc") && ++proc_walks == failed_walk) {
		errno = EMFILE;
		return NULL;
	}
	return real(path);
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

/* kill(2), but for replaced_pid's first look (signal 0): its file is replaced first; for
 * vanishing_pid's, it is alive, and ends before the answer comes back. */
int kill(pid_t pid, int sig)
{
	if (pid == vanishing_pid && sig == 0) {
		int rc = (int)syscall(SYS_kill, pid, 0);
		vanishing_pid = 0;
		syscall(SYS_kill, pid, SIGKILL);
		waitpid(pid, NULL, 0);
		swap_armed = 1;
		return rc;
	}
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
		CHECK_SKIP("no PID namespace could be made here");
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
		CHECK(inode_of(name) == born_ino && inode_of(gone_name) != 0);
		CHECK_SKIP("needs root (an ordinary user's sweep is not taken to see every process): the "
			   "sweep's removal of another PID namespace's file is not checked");
	}
	born_name[0] = '\0';
	unlinkat(userdir_fd, name, 0);
	unlinkat(userdir_fd, gone_name, 0);
	stop_namespace(maker);
}

/* A PID namespace's number that no process has (a namespace inode is far above it). */
#define NO_NS 7ull

/*
 * Files named for another PID namespace that no process has: judged against the processes
 * read again once a scan, however many run directories hold them; when that second read
 * fails, the listing stands and they stay, for a later sweep.
 */
static void second_read(const char *base, const char *other_dir)
{
	char name[64], other_name[64];
	int other_fd = -1, walks;
	pid_t *pids = NULL;

	if (!nvt_procfs_shows_all(nvt_procfs_own())) {
		CHECK_SKIP("needs root (an ordinary user's sweep is not taken to see every process): no "
			   "file of another PID namespace is removed");
		return;
	}
	nvt_seg_name(name, sizeof(name), NO_NS, 5);
	CHECK(make_file(name) != 0);
	/* Another user's run directory with such a file too, where root can make one. */
	if (geteuid() == 0 && mkdir(other_dir, 0755) == 0 && chown(other_dir, 65534, 65534) == 0)
		other_fd = open(other_dir, O_RDONLY | O_DIRECTORY);
	if (other_fd >= 0) {
		nvt_seg_name(other_name, sizeof(other_name), NO_NS, 6);
		close(openat(other_fd, other_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
		CHECK(fstatat(other_fd, other_name, &(struct stat){0}, 0) == 0);
	} else {
		CHECK_SKIP("another user's run directory cannot be made here (needs root): the "
			   "second read once a scan is checked with one run directory");
	}
	/* The second read fails: nothing removed, the listing stands (whichever run directory
	 * is read first, the other's files are judged against the first read). */
	proc_walks = 0;
	failed_walk = 2;
	CHECK(nvt_seg_tasks(base, 1, &pids) == 0);
	free(pids);
	CHECK(proc_walks == 2);
	CHECK(inode_of(name) != 0);
	if (other_fd >= 0)
		CHECK(fstatat(other_fd, other_name, &(struct stat){0}, 0) == 0);
	failed_walk = 0;
	/* One walk to read the processes, one more to read them again, whatever the number of
	 * run directories. */
	proc_walks = 0;
	CHECK(nvt_seg_tasks(base, 1, &pids) == 0);
	free(pids);
	walks = proc_walks;
	CHECK(walks == 2);
	CHECK(inode_of(name) == 0);
	if (other_fd >= 0) {
		CHECK(fstatat(other_fd, other_name, &(struct stat){0}, 0) == -1 && errno == ENOENT);
		unlinkat(other_fd, NVT_LOCK_NAME, 0);
		close(other_fd);
		rmdir(other_dir);
	}
}

/*
 * A leftover whose process ends between the scan and the removal (nvt_seg_tasks' remove_entry,
 * which does not hold the file): a new file put at its name meanwhile, with the leftover's
 * inode number (a file system that reuses freed numbers at once), stays, by its ctime.
 */
static void reused_inode(const char *base)
{
	pid_t child = fork(), *pids = NULL;

	if (child == 0) {
		for (;;)
			pause();
	}
	CHECK(child > 0);
	if (child <= 0)
		return;
	nvt_seg_name(swap_name, sizeof(swap_name), nvt_own_pidns(), child);
	swap_ino = make_file(swap_name);
	CHECK(swap_ino != 0);
	vanishing_pid = child;
	CHECK(nvt_seg_tasks(base, 1, &pids) == 0);
	free(pids);
	CHECK(vanishing_pid == 0 && !swap_armed && swap_new_ino != 0);
	CHECK(inode_of(swap_name) == swap_ino); /* the new file stays (as fstatat shows it) */
	swap_new_ino = 0;
	unlinkat(userdir_fd, swap_name, 0);
	if (vanishing_pid) { /* (never looked at) */
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
}

/* The error an open answers (seg/segopen.h): a late maps read never hides another system error,
 * whatever came first; among late answers or among others, the first stays. */
static void errno_kept(void)
{
	CHECK(nvt_seg_errno_kept(0, ETIMEDOUT) == ETIMEDOUT);
	CHECK(nvt_seg_errno_kept(0, EMFILE) == EMFILE);
	CHECK(nvt_seg_errno_kept(EMFILE, ETIMEDOUT) == EMFILE);
	CHECK(nvt_seg_errno_kept(ETIMEDOUT, EMFILE) == EMFILE);
	CHECK(nvt_seg_errno_kept(ETIMEDOUT, ETIMEDOUT) == ETIMEDOUT);
	CHECK(nvt_seg_errno_kept(EMFILE, EACCES) == EMFILE);
}

/* nvt_seg_each_named's each: counts the files. */
static int count_named(const struct nvt_seg_handle *h, void *arg)
{
	(void)h;
	++*(int *)arg;
	return 0;
}

/* The walk of the files that name a task (seg/segopen.h: nvt_seg_each_named) fails where its
 * run directory (dir) or the file named for it could not be tried for a system error (EMFILE):
 * either may hold the task's partition. An empty file of its name (no header) is no file of its. */
static void each_named_fails(const char *base, const char *dir)
{
	char name[64];
	int fd, n = 0, rc;

	nvt_seg_name(name, sizeof(name), nvt_own_pidns(), getpid());
	fd = openat(userdir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	snprintf(emfile_path, sizeof(emfile_path), "%s", dir);
	errno = 0;
	rc = nvt_seg_each_named(base, getpid(), count_named, &n);
	CHECK(rc == -1 && errno == EMFILE);
	emfile_path[0] = '\0';
	snprintf(emfile_name, sizeof(emfile_name), "%s", name);
	errno = 0;
	rc = nvt_seg_each_named(base, getpid(), count_named, &n);
	CHECK(rc == -1 && errno == EMFILE);
	emfile_name[0] = '\0';
	CHECK(nvt_seg_each_named(base, getpid(), count_named, &n) == 0 && n == 0);
	unlinkat(userdir_fd, name, 0);
}

int main(int argc, char **argv)
{
	char base[] = "/tmp/nvt-segscan.XXXXXX", dir[128], other_dir[128];
	int only_namespaces = argc == 2 && !strcmp(argv[1], "namespaces"), rc;
	pid_t *pids = NULL;
	int fd;

	if (!mkdtemp(base) || chmod(base, 0755))
		return perror("mkdtemp"), 1;
	snprintf(dir, sizeof(dir), "%s/nvtaskset-%u", base, (unsigned)geteuid());
	if (mkdir(dir, 0755) || chmod(dir, 0755) || (userdir_fd = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
		return perror(dir), 1;
	snprintf(other_dir, sizeof(other_dir), "%s/nvtaskset-65534", base);
	errno_kept();
	if (!only_namespaces)
		each_named_fails(base, dir);
	if (only_namespaces) {
		namespaces(base);
		goto out;
	}
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
	second_read(base, other_dir);
	reused_inode(base);
out:
	unlinkat(userdir_fd, NVT_LOCK_NAME, 0);
	close(userdir_fd);
	rmdir(dir);
	rmdir(base);
	rc = CHECK_DONE();
	/* The namespaces part: a part of it that could not run makes it a skip. */
	if (only_namespaces && rc == 0 && check_skipped) {
		printf("SKIPPED: %s\n", check_skip_why);
		return 77;
	}
	return rc;
}
