/*
 * child.c - child processes under a time limit (see child.h).
 *
 * Over 500 lines in one file: every way of running a child here (a program, a call, a batch
 * of calls, a bounded read of a task's environment) shares the same fork, descriptor, kill
 * and reaping rules, kept in one place so that they agree.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "child.h"
#include "clock.h"
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static void close_pair(int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	fds[0] = fds[1] = -1;
}

/* In the child: sets up its streams as c->flags says, runs fn, exits. */
static void in_child(const struct nvt_child *c, int in_fd, int out_fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (c->flags & NVT_CHILD_GROUP)
		setpgid(0, 0); /* so that a timeout ends whatever it started */
	if (in_fd >= 0)
		dup2(in_fd, STDIN_FILENO);
	else if (!(c->flags & NVT_CHILD_STDIO) && null >= 0)
		dup2(null, STDIN_FILENO);
	if (c->flags & NVT_CHILD_STDOUT)
		dup2(out_fd, STDOUT_FILENO);
	else if (!(c->flags & NVT_CHILD_STDIO) && null >= 0)
		dup2(null, STDOUT_FILENO);
	if (c->flags & NVT_CHILD_STDERR_OUT)
		dup2(out_fd, STDERR_FILENO);
	else if (!(c->flags & (NVT_CHILD_STDIO | NVT_CHILD_STDERR)) && null >= 0)
		dup2(null, STDERR_FILENO);
	c->fn(c->ctx, out_fd);
	_exit(0);
}

/* Keeps n bytes of output: the first ones, or with NVT_CHILD_TAIL the last. */
static void keep(struct nvt_child *c, const char *data, size_t n)
{
	size_t cap = c->output_len - 1;

	if (!(c->flags & NVT_CHILD_TAIL)) {
		if (n > cap - c->got)
			n = cap - c->got;
		memcpy(c->output + c->got, data, n);
		c->got += n;
		return;
	}
	if (n >= cap) {
		memcpy(c->output, data + n - cap, cap);
		c->got = cap;
		return;
	}
	if (c->got + n > cap) {
		size_t drop = c->got + n - cap;
		memmove(c->output, c->output + drop, c->got - drop);
		c->got -= drop;
	}
	memcpy(c->output + c->got, data, n);
	c->got += n;
}

/* Reads what the pipe holds now. Returns 1 at end of file. */
static int drain(struct nvt_child *c)
{
	char chunk[4096];

	for (;;) {
		ssize_t n = read(c->out_fd, chunk, sizeof(chunk));
		if (n > 0) {
			if (c->output && c->output_len > 1)
				keep(c, chunk, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n == 0 || (n < 0 && errno != EAGAIN);
	}
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void nvt_child_stop(struct nvt_child *c)
{
	if (c->pid <= 0)
		return;
	if (c->flags & NVT_CHILD_GROUP)
		kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	close_fd(&c->out_fd);
	close_fd(&c->pid_fd);
	c->pid = 0;
}

int nvt_child_wait(struct nvt_child *c)
{
	for (;;) {
		struct pollfd pfd[2] = {{c->out_fd, POLLIN, 0}, {c->pid_fd, POLLIN, 0}};
		long left = c->deadline_ms - nvt_clock_ms();
		pid_t done;

		if (left < 0)
			left = 0;
		/* Without a pidfd (kernels before 5.3) the end is looked for each ms. */
		if (c->pid_fd < 0 && left > 1)
			left = 1;

		if (poll(pfd, 2, (int)left) > 0 && (pfd[0].revents & (POLLIN | POLLHUP)) && drain(c))
			close_fd(&c->out_fd);
		done = waitpid(c->pid, &c->status, WNOHANG);
		if (done == c->pid) {
			if (c->out_fd >= 0)
				drain(c); /* what it wrote before it ended */
			if ((c->flags & (NVT_CHILD_GROUP | NVT_CHILD_REAP)) ==
			    (NVT_CHILD_GROUP | NVT_CHILD_REAP))
				kill(-c->pid, SIGKILL); /* what it left behind */
			close_fd(&c->out_fd);
			close_fd(&c->pid_fd);
			c->pid = 0;
			if (c->output && c->output_len)
				c->output[c->got] = '\0';
			return NVT_CHILD_OK;
		}
		if ((done < 0 && errno != EINTR) || nvt_clock_ms() >= c->deadline_ms)
			break;
	}
	nvt_child_stop(c);
	if (c->output && c->output_len)
		c->output[c->got] = '\0';
	return NVT_CHILD_TIMEOUT;
}

int nvt_child_start(struct nvt_child *c)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	size_t input_len = c->input ? strlen(c->input) : 0;
	pid_t child;

	c->got = 0;
	c->status = 0;
	c->pid = 0;
	c->out_fd = c->pid_fd = -1;
	c->deadline_ms = nvt_clock_ms() + c->timeout_ms;
	if (c->output && c->output_len)
		c->output[0] = '\0';
	if (input_len > NVT_CHILD_INPUT_MAX) {
		errno = EINVAL;
		return NVT_CHILD_ESYS;
	}
	if (c->input && (pipe2(in, O_CLOEXEC) ||
			 write(in[1], c->input, input_len) != (ssize_t)input_len)) {
		close_pair(in);
		return NVT_CHILD_ESYS;
	}
	close_fd(&in[1]);
	if (pipe2(out, O_CLOEXEC)) {
		close_pair(in);
		return NVT_CHILD_ESYS;
	}
	child = fork();
	if (child < 0) {
		int saved = errno;
		close_pair(in);
		close_pair(out);
		errno = saved;
		return NVT_CHILD_ESYS;
	}
	if (child == 0) {
		close(out[0]);
		in_child(c, in[0], out[1]);
	}
	if (c->flags & NVT_CHILD_GROUP)
		setpgid(child, child); /* before any kill of the group, whoever runs first */
	close_pair(in);
	close(out[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	c->pid = child;
	c->out_fd = out[0];
#ifdef SYS_pidfd_open
	c->pid_fd = (int)syscall(SYS_pidfd_open, child, 0);
#endif
	return NVT_CHILD_OK;
}

int nvt_child_run(struct nvt_child *c)
{
	int rc = nvt_child_start(c);

	return rc == NVT_CHILD_OK ? nvt_child_wait(c) : rc;
}

struct call {
	void (*fn)(void *ctx, void *result);
	void *ctx, *result;
	size_t size;
};

static void call_in_child(void *ctx, int out_fd)
{
	struct call *call = ctx;

	call->fn(call->ctx, call->result);
	if (write(out_fd, call->result, call->size) != (ssize_t)call->size)
		_exit(2);
}

int nvt_child_call(void (*fn)(void *ctx, void *result), void *ctx, void *result,
		   size_t result_size, int timeout_ms)
{
	/* cppcheck-suppress ctuuninitvar ; result is only kept here, and zeroed below */
	struct call call = {fn, ctx, result, result_size};
	/* One byte more than the result: the runner keeps a NUL's room. */
	char *buf = malloc(result_size + 1);
	struct nvt_child c = {.fn = call_in_child, .ctx = &call, .output = buf,
			      .output_len = result_size + 1, .flags = NVT_CHILD_STDIO,
			      .timeout_ms = timeout_ms};
	int rc;

	memset(result, 0, result_size);
	if (!buf)
		return NVT_CHILD_ESYS;
	rc = nvt_child_run(&c);
	if (rc == NVT_CHILD_OK) {
		if (c.got == result_size && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0)
			memcpy(result, buf, result_size);
		else
			rc = NVT_CHILD_FAILED;
	}
	free(buf);
	return rc;
}

/* ---- Batches of calls that may stall (nvt_child_batch) ----------------------------------- */

/* The children batches left stalled, reaped once they end. */
static struct {
	pthread_mutex_t lock;
	pid_t pid[NVT_CHILD_LEFT_MAX];
	int n;
} left_behind = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Reaps the left children that have ended (under left_behind.lock). A PID that is no child
 * (ECHILD: the host reaps its children itself) is forgotten. */
static void reap_left_locked(void)
{
	for (int i = 0; i < left_behind.n;) {
		pid_t r = waitpid(left_behind.pid[i], NULL, WNOHANG);
		if (r == 0 || (r < 0 && errno == EINTR))
			i++;
		else
			left_behind.pid[i] = left_behind.pid[--left_behind.n];
	}
}

/* 1 if another child may be left stalled. */
static int room_to_leave(void)
{
	int room;

	pthread_mutex_lock(&left_behind.lock);
	reap_left_locked();
	room = left_behind.n < NVT_CHILD_LEFT_MAX;
	pthread_mutex_unlock(&left_behind.lock);
	return room;
}

int nvt_child_left_alive(pid_t pid)
{
	int alive = 0;

	pthread_mutex_lock(&left_behind.lock);
	reap_left_locked();
	for (int i = 0; i < left_behind.n; i++)
		alive |= pid > 0 && left_behind.pid[i] == pid;
	pthread_mutex_unlock(&left_behind.lock);
	return alive;
}

/* Kills the child pid, stalled at a call, and leaves it: its PID, or 0 where it has ended
 * already (reaped here). A child no room is left for is not remembered: it is reaped by no
 * one (a zombie once it ends), as a left one is while the caller makes no batch. */
static pid_t leave(pid_t pid)
{
	kill(pid, SIGKILL);
	if (waitpid(pid, NULL, WNOHANG) == pid)
		return 0;
	pthread_mutex_lock(&left_behind.lock);
	if (left_behind.n < NVT_CHILD_LEFT_MAX)
		left_behind.pid[left_behind.n++] = pid;
	pthread_mutex_unlock(&left_behind.lock);
	return pid;
}

/* Closes every descriptor from lowest on (before Linux 5.9, which has no close_range, those
 * below the descriptor limit, or below 65536 where the limit is higher). */
static void close_from(int lowest)
{
	struct rlimit lim;
	long last = 65536;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowest, ~0u, 0u) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < 65536)
		last = (long)lim.rlim_cur;
	for (long fd = lowest; fd < last; fd++)
		close((int)fd);
}

/* In a batch's child: its descriptors set (the report's on 3, nothing else of the caller's),
 * then b's calls from `from` on, a byte written to the report after each. Never returns. */
static void batch_child(const struct nvt_child_batch *b, unsigned char *shared, size_t from,
			int report)
{
	int keep = fcntl(report, F_DUPFD, 3), null = open("/dev/null", O_RDWR);

	if (keep < 0 || null < 0)
		_exit(1);
	for (int fd = 0; fd < 3; fd++)
		if (fd != null)
			dup2(null, fd);
	if (keep != 3 && dup2(keep, 3) != 3)
		_exit(1);
	close_from(4);
	for (size_t i = from; i < b->n; i++) {
		b->fn(b->ctx, i, shared + i * b->result_size);
		if (write(3, "", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* 1 if process pid is runnable (waiting for a CPU, or on one). */
static int runnable(pid_t pid)
{
	struct nvt_stat st;

	return nvt_proc_stat(pid, &st) == 0 && st.state == 'R';
}

/* Reads the child's reports: marks the calls that returned, from *next on. Returns 1 at the
 * end of its reports (it ended), else 0. */
static int take_reports(struct nvt_child_batch *b, int fd, size_t *next)
{
	char bytes[256];

	for (;;) {
		ssize_t got = read(fd, bytes, sizeof(bytes));
		if (got == 0)
			return 1;
		if (got < 0)
			return errno != EINTR && errno != EAGAIN;
		for (ssize_t k = 0; k < got && *next < b->n; k++)
			b->done[(*next)++] = 1;
	}
}

/* Runs b's calls from *next on in one child until it ends, a call stalls or the batch's end
 * (CLOCK_MONOTONIC ms) comes; *next is then the first call not made. Returns 2 if the end came
 * in a call, 1 if a call stalled (or the child died in it), 0 if every call returned, -1 with
 * errno set when no child could be started. */
static int batch_run(struct nvt_child_batch *b, unsigned char *shared, size_t *next, int64_t end)
{
	int fds[2], busy = 0, ended = 0;
	int64_t deadline;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		batch_child(b, shared, *next, fds[1]);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	deadline = nvt_clock_ms() + b->stall_ms;
	while (!ended) {
		struct pollfd p = {fds[0], POLLIN, 0};
		int64_t wait = (deadline < end ? deadline : end) - nvt_clock_ms();
		size_t before = *next;
		if (poll(&p, 1, wait > 0 ? (int)wait : 0) > 0) {
			ended = take_reports(b, fds[0], next);
			if (*next != before)
				deadline = nvt_clock_ms() + b->stall_ms, busy = 0;
			continue;
		}
		int64_t now = nvt_clock_ms();
		if (now < deadline && now < end)
			continue;
		if (now < end && busy++ < NVT_CHILD_BUSY_TIMES && runnable(pid)) {
			deadline = now + b->stall_ms;
			continue;
		}
		close(fds[0]);
		if (*next >= b->n) { /* every call returned; only its end was late */
			leave(pid);
			return 0;
		}
		b->left[*next] = leave(pid);
		if (b->stalled)
			b->stalled[*next] = 1;
		(*next)++;
		return now >= end ? 2 : 1;
	}
	close(fds[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (*next == b->n)
		return 0;
	(*next)++; /* (it died in this call: a crash, a signal) */
	return 1;
}

int nvt_child_batch(struct nvt_child_batch *b)
{
	size_t bytes = b->n * b->result_size, next = 0;
	int stalls = 0, returned = 0, rc = 0, max_stalls = b->max_stalls > 0 ? b->max_stalls : 1;
	int64_t end = b->budget_ms > 0 ? nvt_clock_ms() + b->budget_ms : INT64_MAX;
	unsigned char *shared;

	memset(b->done, 0, b->n);
	memset(b->left, 0, b->n * sizeof(*b->left));
	if (b->stalled)
		memset(b->stalled, 0, b->n);
	if (!b->n)
		return 0;
	if (!room_to_leave()) {
		errno = EAGAIN;
		return -1;
	}
	shared = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -1;
	while (next < b->n && stalls < max_stalls && rc >= 0 && rc != 2 && (next == 0 || room_to_leave())) {
		rc = batch_run(b, shared, &next, end);
		stalls += rc > 0;
	}
	for (size_t i = 0; i < b->n; i++)
		if (b->done[i]) {
			memcpy((unsigned char *)b->results + i * b->result_size,
			       shared + i * b->result_size, b->result_size);
			returned++;
		}
	munmap(shared, bytes ? bytes : 1);
	if (rc < 0 && next == 0)
		return -1;
	return returned;
}

struct env_bounded {
	pid_t pid;
	const char *name;
};
struct env_found {
	int rc;
	char text[NVT_PROC_ENV_BOUNDED_MAX];
};

/* In a child: nvt_proc_env of ctx (struct env_bounded) into result (struct env_found). */
static void env_in_child(void *ctx, size_t i, void *result)
{
	const struct env_bounded *b = ctx;
	struct env_found *f = result;

	(void)i;
	f->rc = nvt_proc_env(b->pid, b->name, f->text, sizeof(f->text));
}

int nvt_proc_env_bounded(pid_t pid, const char *name, char *buf, size_t len, int timeout_ms)
{
	struct env_bounded b = {pid, name};
	struct env_found f = {.rc = -1};
	unsigned char done = 0;
	pid_t left = 0;
	/* A batch of one call: its child, killed when it stalls or at timeout_ms, is left, not
	 * waited for (where the read's wait does not end at SIGKILL, a wait for it would not
	 * end either); one that returned is reaped. */
	struct nvt_child_batch one = {.fn = env_in_child, .ctx = &b, .n = 1, .result_size = sizeof(f),
				      .results = &f, .stall_ms = timeout_ms, .max_stalls = 1,
				      .budget_ms = timeout_ms, .done = &done, .left = &left};

	if (!len || timeout_ms <= 0)
		return -1;
	if (nvt_child_batch(&one) != 1 || f.rc)
		return -1;
	f.text[sizeof(f.text) - 1] = '\0';
	snprintf(buf, len, "%s", f.text);
	return strlen(f.text) < len ? 0 : -1;
}

struct command_found {
	ssize_t n;
	char text[NVT_PROC_COMMAND_BOUNDED_MAX];
};

/* In a child: nvt_proc_cmdline of ctx (a pid_t) into result (struct command_found). */
static void command_in_child(void *ctx, size_t i, void *result)
{
	struct command_found *f = result;

	(void)i;
	f->n = nvt_proc_cmdline(*(const pid_t *)ctx, f->text, sizeof(f->text));
}

int nvt_proc_command_bounded(pid_t pid, char *buf, size_t len, int timeout_ms)
{
	struct command_found f = {.n = -1};
	unsigned char done = 0;
	pid_t left = 0;
	/* A batch of one call, as nvt_proc_env_bounded's. */
	struct nvt_child_batch one = {.fn = command_in_child, .ctx = &pid, .n = 1,
				      .result_size = sizeof(f), .results = &f, .stall_ms = timeout_ms,
				      .max_stalls = 1, .budget_ms = timeout_ms, .done = &done,
				      .left = &left};
	ssize_t n;

	if (!len)
		return -1;
	if (timeout_ms > 0 && nvt_child_batch(&one) == 1 && f.n > 0) {
		n = f.n < (ssize_t)sizeof(f.text) ? f.n : (ssize_t)sizeof(f.text);
		n = n < (ssize_t)len ? n : (ssize_t)len - 1;
		memcpy(buf, f.text, (size_t)n);
		while (n && buf[n - 1] == '\0')
			n--;
		for (ssize_t k = 0; k < n; k++)
			if (buf[k] == '\0')
				buf[k] = ' ';
		buf[n] = '\0';
		if (n)
			return 0;
	}
	n = nvt_proc_comm(pid, buf, len);
	if (n <= 0)
		return -1;
	buf[n < (ssize_t)len ? n : (ssize_t)len - 1] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* ---- A process's maps, read in a child (nvt_proc_maps_bounded) ---------------------------- */

int nvt_stalled_seen(struct nvt_stalled *m, pid_t pid, uint64_t start_time, int remember)
{
	int64_t now = nvt_clock_ms();
	int found = -1, oldest = 0;

	pthread_mutex_lock(&m->lock);
	for (int i = 0; i < m->n;) {
		if (now - m->proc[i].at_ms >= (int64_t)m->backoff_s * 1000) {
			m->proc[i] = m->proc[--m->n];
			continue;
		}
		if (m->proc[i].pid == pid && m->proc[i].start_time == start_time)
			found = i;
		if (m->proc[i].at_ms < m->proc[oldest].at_ms)
			oldest = i;
		i++;
	}
	if (remember) {
		if (found < 0)
			found = m->n < NVT_STALLED_MAX ? m->n++ : oldest;
		m->proc[found].pid = pid;
		m->proc[found].start_time = start_time;
		m->proc[found].at_ms = now;
	}
	pthread_mutex_unlock(&m->lock);
	return found >= 0;
}

/* The processes whose reads of maps stalled lately. */
static struct nvt_stalled maps_late = NVT_STALLED_INIT(NVT_PROC_MAPS_BACKOFF_S);

struct maps_read {
	pid_t pid;
	int (*each)(const char *line, void *arg);
	void *arg;
};

/* In a child: nvt_proc_maps of ctx (struct maps_read) into result (an int). */
static void maps_in_child(void *ctx, size_t i, void *result)
{
	const struct maps_read *r = ctx;
	int found = nvt_proc_maps(r->pid, r->each, r->arg);

	(void)i;
	memcpy(result, &found, sizeof(found));
}

int nvt_proc_maps_bounded(pid_t pid, int (*each)(const char *line, void *arg), void *arg)
{
	struct maps_read r = {pid, each, arg};
	struct nvt_stat st;
	unsigned char done = 0, stalled = 0;
	pid_t left = 0;
	int found = -1;
	struct nvt_child_batch b = {.fn = maps_in_child, .ctx = &r, .n = 1, .result_size = sizeof(found),
				    .results = &found, .stall_ms = NVT_PROC_MAPS_STALL_MS, .max_stalls = 1,
				    .budget_ms = NVT_PROC_MAPS_BUDGET_MS, .done = &done, .left = &left,
				    .stalled = &stalled};

	/* (its stat, read without its memory map's lock: which process it is) */
	if (nvt_proc_stat(pid, &st))
		return errno == ENOENT || errno == ESRCH ? -1 : NVT_PROC_MAPS_LATE;
	if (nvt_stalled_seen(&maps_late, pid, st.start_time, 0))
		return NVT_PROC_MAPS_LATE;
	if (nvt_child_batch(&b) < 0)
		return NVT_PROC_MAPS_LATE;
	if (done)
		return found;
	if (stalled)
		nvt_stalled_seen(&maps_late, pid, st.start_time, 1);
	return NVT_PROC_MAPS_LATE;
}
