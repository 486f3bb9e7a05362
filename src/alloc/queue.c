/*
 * queue.c - starts queued with --wait: the caller's record, and every user's read (see
 * queue.h). Side effects: the caller's own run directory; reads every user's.
 *
 * Every record is read as another user's could be: a regular file of its run directory's
 * user (a link, a FIFO, a file of another user's is passed over without being read, and
 * O_NONBLOCK keeps a FIFO from holding the open), of one link, of at most NVT_QUEUED_MAX
 * bytes, whose text parses whole (core/queuerec.c); and only while the process it names
 * lives with that start time and runs as that user, so that a record a killed start left,
 * or one naming another user's process, says nothing.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "queue.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/text.h"
#include "os/proc.h"
#include "os/sysutil.h"
#include "seg/segfile.h"
#include "seg/segown.h"

/*
 * Reads record name of uid's run directory dirfd into r if it is one to trust (queue.c's
 * head), its name's PID namespace and PID (pidns, pid) its text's; *st gets its status. Returns
 * 0, 1 (a record, but not of a live start), or -1 (no record to read: its type, owner,
 * links, size or text).
 */
static int read_record(int dirfd, const char *name, uid_t uid, uint64_t pidns, pid_t pid,
		       struct nvt_queuerec *r, struct stat *st)
{
	char text[NVT_QUEUED_MAX + 1];
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	uint64_t start;
	uid_t euid;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != uid || st->st_nlink != 1 ||
	    st->st_size > NVT_QUEUED_MAX) {
		close(fd);
		return -1;
	}
	n = read(fd, text, sizeof(text)); /* a fresh descriptor: from the start */
	close(fd);
	if (n <= 0 || n > NVT_QUEUED_MAX || nvt_queuerec_parse(text, (size_t)n, r) ||
	    r->pid != pid || r->pidns != pidns)
		return -1;
	if (nvt_proc_start_time(pid, &start) || start != r->start || nvt_proc_euid(pid, &euid) ||
	    euid != uid)
		return 1;
	return 0;
}

/* Whether record name (of pid; being made: new) of the caller's run directory dirfd (uid's) is
 * one a start killed while it waited left: its process gone, or another by now. */
static int left_by_killed(int dirfd, const char *name, uid_t uid, uint64_t pidns, pid_t pid,
			  int new, struct stat *st)
{
	struct nvt_queuerec r;

	if (pid == getpid())
		return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0; /* a PID's earlier user */
	if (new) /* (being made: only once its maker is gone) */
		return kill(pid, 0) && errno == ESRCH &&
		       fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0;
	return read_record(dirfd, name, uid, pidns, pid, &r, st) == 1 ||
	       (kill(pid, 0) && errno == ESRCH && fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0);
}

/* Removes the records of the caller's run directory dirfd that starts killed while they
 * waited left (at most NVT_QUEUE_JUDGED judged). */
static void sweep(int dirfd, uint64_t pidns)
{
	DIR *dir = nvt_opendir_fd(dirfd);
	struct dirent *e;
	int judged = 0;

	while (dir && judged < NVT_QUEUE_JUDGED && (e = readdir(dir))) {
		uint64_t ns;
		pid_t pid;
		struct stat st;
		int kind = nvt_queuerec_name_parse(e->d_name, &ns, &pid);
		if (kind < 0 || ns != pidns)
			continue;
		judged++;
		if (left_by_killed(dirfd, e->d_name, geteuid(), ns, pid, kind, &st))
			nvt_unlink_same(dirfd, e->d_name, st.st_dev, st.st_ino, &st.st_ctim);
	}
	if (dir)
		closedir(dir);
}

/* Writes text (n bytes) as the record name of dirfd, whole under its name being made first.
 * Returns 0, or -1 with errno set. */
static int write_record(int dirfd, const char *name, const char *text, size_t n)
{
	char tmp[64 + sizeof(NVT_QUEUED_NEW)];
	int fd, ok, saved;

	snprintf(tmp, sizeof(tmp), "%s%s", name, NVT_QUEUED_NEW);
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, NVT_QUEUED_MODE);
	if (fd < 0)
		return -1;
	ok = fchmod(fd, NVT_QUEUED_MODE) == 0 && nvt_pwrite_all(fd, text, n, 0) == 0;
	saved = errno;
	ok = close(fd) == 0 && ok;
	ok = ok && renameat(dirfd, tmp, dirfd, name) == 0;
	if (!ok) {
		saved = errno;
		unlinkat(dirfd, tmp, 0);
		errno = saved;
	}
	return ok ? 0 : -1;
}

/* The caller's record: its run directory (-1: none) and name there; the signals that remove
 * it, and what they did before. */
static int own_dirfd = -1;
static char own_name[64];
static const int leave_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_LEAVE_SIGNALS (sizeof(leave_signals) / sizeof(leave_signals[0]))
static struct sigaction before[N_LEAVE_SIGNALS];
static int handled[N_LEAVE_SIGNALS];

/* A signal that would end the process: the record goes first (unlinkat alone: safe in a
 * handler), then the signal ends it as it would have (SA_RESETHAND: its default again; it is
 * blocked in here, so it lands when the handler returns). */
static void leave_on_signal(int sig)
{
	int saved = errno;

	if (own_dirfd >= 0)
		unlinkat(own_dirfd, own_name, 0);
	raise(sig);
	errno = saved;
}

/* Handles each of leave_signals that the process does not ignore (nohup, a shell's background
 * job: those stay ignored). */
static void handle_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = leave_on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_LEAVE_SIGNALS; i++) {
		handled[i] = 0;
		if (sigaction(leave_signals[i], NULL, &before[i]) || before[i].sa_handler == SIG_IGN)
			continue;
		handled[i] = sigaction(leave_signals[i], &sa, NULL) == 0;
	}
}

int nvt_queue_enter(const char *base, struct nvt_queuerec *r, char *why, size_t len)
{
	char text[NVT_QUEUED_MAX + 1], dir[512];
	int n, dirfd;

	if (own_dirfd >= 0)
		return nvt_why(why, len, "this process has a record of a queued start already");
	r->pid = getpid();
	r->pidns = nvt_own_pidns();
	if (nvt_proc_start_time(r->pid, &r->start))
		return nvt_why(why, len, "cannot read its start time: %s", strerror(errno));
	n = nvt_queuerec_format(r, text, sizeof(text));
	if (n < 0 || nvt_queuerec_name(own_name, sizeof(own_name), r->pidns, r->pid, 0))
		return nvt_why(why, len, "the record of a queued start does not fit");
	dirfd = nvt_userdir_own(base, dir, sizeof(dir), why, len);
	if (dirfd < 0)
		return -1;
	sweep(dirfd, r->pidns);
	/* The handlers first: a signal from the moment the record is there removes it. */
	own_dirfd = dirfd;
	handle_signals();
	if (write_record(dirfd, own_name, text, (size_t)n)) {
		int saved = errno;
		nvt_queue_leave();
		return nvt_why(why, len, "cannot write %s/%s: %s", dir, own_name, strerror(saved));
	}
	return 0;
}

void nvt_queue_leave(void)
{
	sigset_t block, old;

	if (own_dirfd < 0)
		return;
	/* Blocked while the record goes and the handlers are given back: a signal meanwhile
	 * lands after, as it would have before the wait. */
	sigemptyset(&block);
	for (size_t i = 0; i < N_LEAVE_SIGNALS; i++)
		sigaddset(&block, leave_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	unlinkat(own_dirfd, own_name, 0);
	close(own_dirfd);
	own_dirfd = -1;
	for (size_t i = 0; i < N_LEAVE_SIGNALS; i++)
		if (handled[i])
			sigaction(leave_signals[i], &before[i], NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Adds uid's queued starts (its run directory dirfd; of PID namespace pidns) to *v (n, cap).
 * Returns 0, or -1 (out of memory). */
static int list_userdir(int dirfd, uid_t uid, uint64_t pidns, struct nvt_queued **v, size_t *n,
			size_t *cap)
{
	DIR *dir = nvt_opendir_fd(dirfd);
	struct dirent *e;
	int read = 0;

	while (dir && read < NVT_QUEUE_READ && (e = readdir(dir))) {
		struct nvt_queuerec r;
		struct stat st;
		uint64_t ns;
		pid_t pid;
		if (nvt_queuerec_name_parse(e->d_name, &ns, &pid) != 0 || ns != pidns)
			continue;
		read++;
		if (read_record(dirfd, e->d_name, uid, ns, pid, &r, &st))
			continue;
		struct nvt_queued *more = nvt_grow(*v, *n, cap, sizeof(**v), 8);
		if (!more) {
			closedir(dir);
			return -1;
		}
		*v = more;
		(*v)[*n].rec = r;
		(*v)[(*n)++].uid = uid;
	}
	if (dir)
		closedir(dir);
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct nvt_queued *)a)->rec.pid, y = ((const struct nvt_queued *)b)->rec.pid;

	return (x > y) - (x < y);
}

int nvt_queue_list(const char *base, struct nvt_queued **out)
{
	DIR *dir = opendir(base);
	struct nvt_queued *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t pidns = nvt_own_pidns();
	struct dirent *e;

	*out = NULL;
	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		uid_t uid;
		int dirfd;
		if (nvt_userdir_name_parse(e->d_name, &uid) || (dirfd = nvt_userdir_open(base, uid)) < 0)
			continue;
		if (list_userdir(dirfd, uid, pidns, &v, &n, &cap)) {
			close(dirfd);
			closedir(dir);
			free(v);
			errno = ENOMEM;
			return -1;
		}
		close(dirfd);
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), by_pid);
	*out = v;
	return (int)n;
}

int nvt_queue_find(const char *base, pid_t pid, struct nvt_queued *out)
{
	struct nvt_queued *v;
	int n = nvt_queue_list(base, &v), found = 0;

	for (int i = 0; i < n && !found; i++)
		if (v[i].rec.pid == pid) {
			*out = v[i];
			found = 1;
		}
	free(v);
	return found;
}
