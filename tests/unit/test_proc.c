/* Unit tests of os/proc.c on real processes: a process whose main thread has ended while
 * another thread lives, or whose other thread calls exec, reads as alive; a zombie reads as
 * gone; a process whose reads say no more (doctored: linked with --wrap=nvt_stat_settle and
 * --wrap=nvt_status_settle) is no answer to the readers and their callers.
 * SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "check.h"
#include "os/proc.h"
#include "seg/segopen.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Children that call exec, each read this many times at most while it runs. */
#define EXEC_CHILDREN 300
#define EXEC_READS 2000

/* Polls at most this long for a child to reach a state (10 ms a try). */
#define WAIT_TRIES 1000

/* The state field of /proc/PID/stat, read without os/proc.c ('-': none). */
static char stat_state(pid_t pid)
{
	char path[64], text[4096], *close;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "r")))
		return '-';
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	close = strrchr(text, ')');
	return close && close[1] == ' ' ? close[2] : '-';
}

/* The Threads count of /proc/PID/status, read without os/proc.c (-1: none). */
static long status_threads(pid_t pid)
{
	char path[64], line[256];
	long threads = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %ld", &threads) == 1)
			break;
	fclose(f);
	return threads;
}

/* Waits (bounded) until pid's stat says state and its status counts threads threads. Returns 1
 * when it does, 0 if it never did. */
static int wait_for(pid_t pid, char state, long threads)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};

	for (int i = 0; i < WAIT_TRIES; i++) {
		if (stat_state(pid) == state && status_threads(pid) == threads)
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

static void *wait_for_eof(void *arg)
{
	char byte;

	while (read(*(int *)arg, &byte, 1) > 0)
		;
	return NULL;
}

/*
 * 1 if this kernel has pidfd_open; else 0, and the checks of nvt_proc_pidfd, whose -1 then
 * says nothing, are a part skipped (said once).
 */
static int pidfd_here(void)
{
	static int here = -1;

	if (here < 0) {
#ifdef SYS_pidfd_open
		int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		here = fd >= 0 || errno != ENOSYS;
		if (fd >= 0)
			close(fd);
#else
		here = 0;
#endif
		if (!here)
			CHECK_SKIP("pidfd_open is missing here: nvt_proc_pidfd's answers are not checked");
	}
	return here;
}

/* Checks that every reader of a process's identity says pid is alive, started at start. */
static void check_alive(pid_t pid, uint64_t start)
{
	struct nvt_stat st;
	struct nvt_proc p;
	uint64_t now = 0;
	int fd;

	CHECK(nvt_proc_start_time(pid, &now) == 0 && now == start);
	CHECK(nvt_proc_stat(pid, &st) == 0 && st.pid == pid && st.start_time == start);
	CHECK(nvt_proc_info(pid, &p) == 0 && p.pid == pid && p.start_time == start);
	if (!pidfd_here())
		return;
	fd = nvt_proc_pidfd(pid, start);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(nvt_pidfd_alive(fd) == 1);
		close(fd);
	}
}

/* Checks that the readers say pid is gone. */
static void check_gone(pid_t pid, uint64_t start)
{
	struct nvt_stat st;
	struct nvt_proc p;
	uint64_t now;

	CHECK(nvt_proc_start_time(pid, &now) == -1 && (errno == ESRCH || errno == ENOENT));
	CHECK(nvt_proc_stat(pid, &st) == -1 && (errno == ESRCH || errno == ENOENT));
	CHECK(nvt_proc_info(pid, &p) == -1 && (errno == ESRCH || errno == ENOENT));
	if (pidfd_here())
		CHECK(nvt_proc_pidfd(pid, start) == -1 && errno == ESRCH);
}

/* A child whose main thread calls pthread_exit while its second thread waits for the end of a
 * pipe: alive until the pipe is closed, then a zombie, gone. */
static void test_main_thread_ended(void)
{
	uint64_t start = 0;
	int pipe_fd[2];
	pid_t child;

	CHECK(pipe(pipe_fd) == 0);
	child = fork();
	if (child == 0) {
		pthread_t waiter;
		close(pipe_fd[1]);
		if (pthread_create(&waiter, NULL, wait_for_eof, &pipe_fd[0]))
			_exit(1);
		pthread_exit(NULL);
	}
	close(pipe_fd[0]);
	CHECK(child > 0 && nvt_proc_start_time(child, &start) == 0);
	CHECK(wait_for(child, 'Z', 2));
	check_alive(child, start);
	close(pipe_fd[1]);
	CHECK(wait_for(child, 'Z', 1));
	check_gone(child, start);
	CHECK(waitpid(child, NULL, 0) == child);
}

/* A child that waits for a signal (its PID, or -1). */
static pid_t paused_child(void)
{
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	return child;
}

/* A child of one thread that has ended: a zombie, gone. */
static void test_zombie(void)
{
	pid_t child = paused_child();
	uint64_t start = 0;

	CHECK(child > 0 && nvt_proc_start_time(child, &start) == 0);
	kill(child, SIGKILL);
	CHECK(wait_for(child, 'Z', 1));
	check_gone(child, start);
	CHECK(waitpid(child, NULL, 0) == child);
}

/* ---- Reads doctored ------------------------------------------------------------------ */

/* The PID whose reads are doctored (0: none), and how: each stat read says 'Z' and each status
 * read after one a live task of one thread (an exec by another thread ended between every two
 * reads: nvt_exited_verdict's REPLACED); or each stat read a later start time (the PID taken
 * by another process between every two reads). */
static pid_t doctored_pid;
static enum { REPLACED_EACH_ROUND, ANOTHER_EACH_READ } doctored_how;
static uint64_t doctored_reads;

/* The reads os/proc.c gave, and whether the last stat read was doctored_pid's. */
struct doctor {
	const struct nvt_proc_reads *real;
	int ours;
};

static int doctored_stat(void *arg, struct nvt_stat *st)
{
	struct doctor *d = arg;

	if (d->real->stat(d->real->arg, st))
		return -1;
	d->ours = doctored_pid && st->pid == doctored_pid;
	if (d->ours && doctored_how == REPLACED_EACH_ROUND)
		st->state = 'Z';
	if (d->ours && doctored_how == ANOTHER_EACH_READ)
		st->start_time += ++doctored_reads;
	return 0;
}

static int doctored_status(void *arg, struct nvt_status *s)
{
	struct doctor *d = arg;

	if (d->real->status(d->real->arg, s))
		return -1;
	if (d->ours && doctored_how == REPLACED_EACH_ROUND) {
		s->state = 'R';
		s->threads = 1;
	}
	return 0;
}

static void doctored_between(void *arg)
{
	struct doctor *d = arg;

	d->real->between(d->real->arg);
}

int __real_nvt_stat_settle(const struct nvt_proc_reads *r, struct nvt_stat *st);
int __wrap_nvt_stat_settle(const struct nvt_proc_reads *r, struct nvt_stat *st);
int __real_nvt_status_settle(const struct nvt_proc_reads *r, struct nvt_status *s, struct nvt_stat *st);
int __wrap_nvt_status_settle(const struct nvt_proc_reads *r, struct nvt_status *s, struct nvt_stat *st);

int __wrap_nvt_stat_settle(const struct nvt_proc_reads *r, struct nvt_stat *st)
{
	struct doctor d = {r, 0};
	struct nvt_proc_reads doctored = {doctored_stat, doctored_status, NULL, &d};

	return __real_nvt_stat_settle(&doctored, st);
}

int __wrap_nvt_status_settle(const struct nvt_proc_reads *r, struct nvt_status *s, struct nvt_stat *st)
{
	struct doctor d = {r, 0};
	struct nvt_proc_reads doctored = {doctored_stat, doctored_status,
					  r->between ? doctored_between : NULL, &d};

	return __real_nvt_status_settle(&doctored, s, st);
}

/* Checks that every reader of pid's identity, and nvt_seg_open, has no answer (EAGAIN): not
 * alive with a start time or users (a misread), nor gone (ENOENT, ESRCH: a caller drops it). */
static void check_no_answer(pid_t pid, uint64_t start, int stat_too)
{
	struct nvt_seg_handle h;
	struct nvt_stat st;
	struct nvt_proc p;
	uint64_t now = 0;

	errno = 0;
	CHECK(nvt_proc_info(pid, &p) == -1 && errno == EAGAIN);
	/* -p and the views: an error said (ESYS), never "no such process". */
	errno = 0;
	CHECK(nvt_seg_open("/nonexistent", pid, 1, &h) == NVT_SEG_ESYS && errno == EAGAIN);
	if (!stat_too)
		return;
	errno = 0;
	CHECK(nvt_proc_start_time(pid, &now) == -1 && errno == EAGAIN && now == 0);
	errno = 0;
	CHECK(nvt_proc_stat(pid, &st) == -1 && errno == EAGAIN);
	if (pidfd_here())
		CHECK(nvt_proc_pidfd(pid, start) == -1);
}

/* A child whose reads are doctored: no answer; then, undoctored, alive. */
static void test_no_answer(void)
{
	pid_t child = paused_child();
	uint64_t start = 0;

	CHECK(child > 0 && nvt_proc_start_time(child, &start) == 0);
	doctored_pid = child;
	doctored_how = REPLACED_EACH_ROUND;
	check_no_answer(child, start, 1);
	/* Its start time changes at every read: its status would be nobody's for sure. */
	doctored_how = ANOTHER_EACH_READ;
	check_no_answer(child, start, 0);
	doctored_pid = 0;
	check_alive(child, start);
	kill(child, SIGKILL);
	CHECK(waitpid(child, NULL, 0) == child);
}

static const char *self_path;
static char ready_fd_text[16];

static void *exec_self(void *arg)
{
	(void)arg;
	execl(self_path, self_path, "--ready", ready_fd_text, (char *)NULL);
	_exit(127);
}

/* Children whose second thread calls exec (the leader reads 'Z' until the exec takes its PID,
 * and is released, the thread taking its PID): read while each runs, not one read says gone. */
static void test_exec_from_thread(void)
{
	long gone = 0, ready = 0;

	for (int i = 0; i < EXEC_CHILDREN; i++) {
		int pipe_fd[2];
		uint64_t start;
		pid_t child;

		if (pipe(pipe_fd))
			break;
		snprintf(ready_fd_text, sizeof(ready_fd_text), "%d", pipe_fd[1]);
		child = fork();
		if (child == 0) {
			pthread_t execer;
			close(pipe_fd[0]);
			if (pthread_create(&execer, NULL, exec_self, NULL))
				_exit(1);
			pause();
		}
		close(pipe_fd[1]);
		for (int k = 0; child > 0 && k < EXEC_READS; k++) {
			struct pollfd p = {pipe_fd[0], POLLIN, 0};
			struct nvt_proc info;
			if (nvt_proc_start_time(child, &start))
				gone++;
			if (nvt_proc_info(child, &info))
				gone++;
			if (poll(&p, 1, 0) == 1) { /* the new image runs */
				ready++;
				break;
			}
		}
		close(pipe_fd[0]);
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
	}
	if (gone)
		fprintf(stderr, "%ld reads of a process that calls exec said gone\n", gone);
	CHECK(gone == 0);
	CHECK(ready > 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--ready")) { /* the image a thread's exec starts */
		char *end;
		long fd = strtol(argv[2], &end, 10);
		if (*end || end == argv[2] || write((int)fd, "", 1) != 1)
			return 1;
		pause();
		return 0;
	}
	self_path = "/proc/self/exe";
	test_main_thread_ended();
	test_zombie();
	test_no_answer();
	test_exec_from_thread();
	return CHECK_DONE();
}
