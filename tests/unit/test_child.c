/*
 * test_child.c - batches of calls in children (src/os/child.c's nvt_child_batch), on calls of
 * its own that return, stall (wait until killed, as a read of memory a FUSE file backs may
 * wait), crash, or keep their child runnable for longer than a stall's time: the calls after a
 * stalled one are made, at most max_stalls stall, a stalled call's child is left and ends
 * killed, a crash costs its call alone, a runnable child is waited for until the batch's budget
 * is spent, and a child holds none
 * of the caller's descriptors, its stdout on /dev/null. And a process's maps read in a child
 * (nvt_proc_maps_bounded): as nvt_proc_maps where the read returns, NVT_PROC_MAPS_LATE within
 * its bound where it stalls, and at once, unread, for that process while it backs off; and a
 * variable of a process's environment read in a child, which is reaped.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "check.h"
#include "os/child.h"
#include "os/clock.h"
#include "os/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 6
#define STALL_MS 100

/* What each call does: 'r' returns, 's' stalls, 'c' crashes, 'b' keeps its child runnable for
 * 3 stall times, then returns. */
struct plan {
	const char *what;
	int caller_fd; /* one of the caller's descriptors, not close-on-exec */
};

struct answer {
	size_t number;      /* the call's index + 1 */
	int caller_fd_open; /* the caller's descriptor is open in the child */
	int stdout_null;    /* the child's stdout is /dev/null */
};

static void call(void *ctx, size_t i, void *result)
{
	const struct plan *p = ctx;
	struct answer *a = result;
	struct stat out, null;

	if (p->what[i] == 's')
		for (;;)
			pause();
	if (p->what[i] == 'c')
		kill(getpid(), SIGSEGV);
	if (p->what[i] == 'b') {
		int64_t end = nvt_clock_ms() + 3 * STALL_MS;
		while (nvt_clock_ms() < end)
			;
	}
	a->number = i + 1;
	a->caller_fd_open = fcntl(p->caller_fd, F_GETFD) >= 0;
	a->stdout_null = !fstat(STDOUT_FILENO, &out) && !stat("/dev/null", &null) &&
			 S_ISCHR(out.st_mode) && out.st_rdev == null.st_rdev;
}

/* Each call's stall flag (nvt_child_batch's stalled) of the last run. */
static unsigned char stalled[N];

/* Runs plan what (N calls) with max_stalls within budget_ms (0: none); returns
 * nvt_child_batch's answer. */
static int run_within(const char *what, int max_stalls, int budget_ms, struct answer *a, unsigned char *done,
		      pid_t *left)
{
	int fds[2];
	struct plan p = {what, -1};
	struct nvt_child_batch b = {.fn = call, .ctx = &p, .n = N, .result_size = sizeof(*a),
				    .results = a, .stall_ms = STALL_MS, .max_stalls = max_stalls,
				    .budget_ms = budget_ms, .done = done, .left = left, .stalled = stalled};
	int rc;

	memset(a, 0, N * sizeof(*a));
	CHECK(pipe(fds) == 0);
	/* (Above 3, where a child keeps the pipe it reports on.) */
	p.caller_fd = fcntl(fds[0], F_DUPFD, 20);
	CHECK(p.caller_fd >= 20);
	rc = nvt_child_batch(&b);
	close(p.caller_fd);
	close(fds[0]);
	close(fds[1]);
	return rc;
}

static int run(const char *what, int max_stalls, struct answer *a, unsigned char *done, pid_t *left)
{
	return run_within(what, max_stalls, 0, a, done, left);
}

/* Waits (10 s at most) for a left child to end, killed. Returns 1 once it has. */
static int ends(pid_t pid)
{
	for (int tries = 0; tries < 1000; tries++) {
		struct timespec tick = {0, 10000000};
		if (!nvt_child_left_alive(pid))
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

static void test_returns_and_stalls(void)
{
	struct answer a[N];
	unsigned char done[N];
	pid_t left[N];
	int64_t began = nvt_clock_ms();

	/* The stalled call costs its result; the calls after it run in a new child, the busy one
	 * waited for. */
	CHECK(run("rrsrbr", 2, a, done, left) == 5);
	CHECK(nvt_clock_ms() - began >= STALL_MS);
	for (size_t i = 0; i < N; i++) {
		CHECK(done[i] == (i != 2));
		CHECK(a[i].number == (done[i] ? i + 1 : 0));
		CHECK(!done[i] || (!a[i].caller_fd_open && a[i].stdout_null));
		CHECK(i == 2 || left[i] == 0);
		CHECK(stalled[i] == (i == 2));
	}
	CHECK(ends(left[2]));
	CHECK(!nvt_child_left_alive(0) && !nvt_child_left_alive(getpid()));
}

static void test_most_stalls(void)
{
	struct answer a[N];
	unsigned char done[N];
	pid_t left[N];

	/* Two may stall: the third call's child is the last; nothing after it runs. */
	CHECK(run("srsrrr", 2, a, done, left) == 1);
	CHECK(!done[0] && done[1] && !done[2] && !done[3] && !done[5]);
	CHECK(ends(left[0]) && ends(left[2]));
	/* One: the first call's stall ends the batch. */
	CHECK(run("srrrrr", 1, a, done, left) == 0);
	CHECK(!done[1] && a[1].number == 0);
	CHECK(ends(left[0]));
}

static void test_crash(void)
{
	struct answer a[N];
	unsigned char done[N];
	pid_t left[N];

	CHECK(run("rcrrrr", 2, a, done, left) == 5);
	CHECK(done[0] && !done[1] && done[2] && done[5] && a[5].number == 6);
	CHECK(left[1] == 0 && !stalled[1]); /* (dead, reaped: nothing left; no stall) */
}

/* Calls that return, each slowly (a busy child, 3 stall times), but never stall: the batch's
 * budget ends the call it comes in (a stall, its child left) and the calls after it. */
static void test_budget(void)
{
	struct answer a[N];
	unsigned char done[N];
	pid_t left[N];
	int64_t began = nvt_clock_ms();

	CHECK(run_within("bbbbbb", 2, 5 * STALL_MS, a, done, left) == 1);
	CHECK(nvt_clock_ms() - began < 5 * STALL_MS + 3 * STALL_MS);
	CHECK(done[0] && !done[1] && stalled[1] && !done[2] && !stalled[2] && !done[5]);
	CHECK(ends(left[1]));
	/* Without a budget all of them return. */
	CHECK(run("bbrrrr", 2, a, done, left) == N);
}

/* A line of maps: 1 at the first (the read returned), or, with stall set, waits until killed. */
static int stall_maps;
static int maps_line(const char *line, void *arg)
{
	(void)line;
	(void)arg;
	while (stall_maps)
		pause();
	return 1;
}

/* An environment read in a child (nvt_proc_env_bounded): the variable as the process started
 * with it (main's TEST_CHILD_ENV), and its child reaped: no child, no zombie, is left. */
static void test_env_bounded(void)
{
	char text[NVT_PROC_ENV_BOUNDED_MAX];

	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	CHECK(nvt_proc_env_bounded(getpid(), "TEST_CHILD_ENV", text, sizeof(text), 1000) == 0);
	CHECK_STR(text, "set");
	CHECK(nvt_proc_env_bounded(getpid(), "TEST_CHILD_NONE", text, sizeof(text), 1000) == -1);
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
}

static void test_maps_bounded(void)
{
	int64_t began;
	pid_t gone = fork();

	CHECK(gone >= 0);
	if (gone == 0)
		_exit(0);
	CHECK(waitpid(gone, NULL, 0) == gone);
	CHECK(nvt_proc_maps_bounded(gone, maps_line, NULL) == -1);
	CHECK(nvt_proc_maps_bounded(getpid(), maps_line, NULL) == 1);
	stall_maps = 1;
	began = nvt_clock_ms();
	CHECK(nvt_proc_maps_bounded(getpid(), maps_line, NULL) == NVT_PROC_MAPS_LATE);
	CHECK(nvt_clock_ms() - began >= NVT_PROC_MAPS_STALL_MS);
	/* (its bound, with a busy machine's slack for the fork and the kill) */
	CHECK(nvt_clock_ms() - began < NVT_PROC_MAPS_BUDGET_MS + 2000);
	/* Backing off: not read (a read now would return 1). */
	stall_maps = 0;
	CHECK(nvt_proc_maps_bounded(getpid(), maps_line, NULL) == NVT_PROC_MAPS_LATE);
}

int main(int argc, char **argv)
{
	/* (again, with a variable of its start's environment for test_env_bounded to read) */
	if (argc == 1 && !getenv("TEST_CHILD_ENV")) {
		setenv("TEST_CHILD_ENV", "set", 1);
		execl("/proc/self/exe", argv[0], "again", (char *)NULL);
		CHECK(!"exec of itself");
		return CHECK_DONE();
	}
	test_returns_and_stalls();
	test_most_stalls();
	test_crash();
	test_budget();
	test_env_bounded();
	test_maps_bounded();
	return CHECK_DONE();
}
