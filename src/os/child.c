/*
 * child.c - child processes under a time limit (see child.h).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "child.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
