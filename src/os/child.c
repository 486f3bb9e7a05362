/*
 * child.c - child processes under a time limit (see child.h).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
	if (!(c->flags & (NVT_CHILD_STDIO | NVT_CHILD_STDERR)) && null >= 0)
		dup2(null, STDERR_FILENO);
	c->fn(c->ctx, out_fd);
	_exit(0);
}

/* Reads what the pipe holds now into c->output. Returns 1 at end of file or when full. */
static int drain(struct nvt_child *c, int fd)
{
	char sink[512];

	for (;;) {
		int room = c->output && c->got + 1 < c->output_len;
		ssize_t n = room ? read(fd, c->output + c->got, c->output_len - 1 - c->got)
				 : read(fd, sink, sizeof(sink));
		if (n > 0) {
			if (room)
				c->got += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n == 0 || (n < 0 && errno != EAGAIN);
	}
}

/* Waits for the child (reading its output meanwhile) until it ends or the deadline. */
static int wait_child(struct nvt_child *c, pid_t child, int out_fd, long deadline)
{
	for (;;) {
		long left = deadline - now_ms();
		pid_t done;

		if (out_fd >= 0) {
			struct pollfd pfd = {out_fd, POLLIN, 0};
			if (poll(&pfd, 1, left < 10 ? (left > 0 ? (int)left : 0) : 10) > 0 && drain(c, out_fd)) {
				close(out_fd);
				out_fd = -1;
			}
		} else if (left > 0) {
			struct timespec pause = {0, (left < 5 ? left : 5) * 1000000L};
			nanosleep(&pause, NULL);
		}
		done = waitpid(child, &c->status, WNOHANG);
		if (done == child) {
			if (out_fd >= 0) {
				drain(c, out_fd); /* what it wrote before it ended */
				close(out_fd);
			}
			return NVT_CHILD_OK;
		}
		if (done < 0 && errno != EINTR)
			break;
		if (now_ms() >= deadline)
			break;
	}
	if (c->flags & NVT_CHILD_GROUP)
		kill(-child, SIGKILL);
	kill(child, SIGKILL);
	while (waitpid(child, &c->status, 0) < 0 && errno == EINTR)
		;
	if (out_fd >= 0)
		close(out_fd);
	return NVT_CHILD_TIMEOUT;
}

int nvt_child_run(struct nvt_child *c)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1};
	size_t input_len = c->input ? strlen(c->input) : 0;
	long deadline = now_ms() + c->timeout_ms;
	pid_t child;
	int rc;

	c->got = 0;
	c->status = 0;
	if (input_len > NVT_CHILD_INPUT_MAX) {
		errno = EINVAL;
		return NVT_CHILD_ESYS;
	}
	if (c->input && (pipe2(in, O_CLOEXEC) ||
			 write(in[1], c->input, input_len) != (ssize_t)input_len)) {
		close_pair(in);
		return NVT_CHILD_ESYS;
	}
	if (in[1] >= 0) {
		close(in[1]);
		in[1] = -1;
	}
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
	close_pair(in);
	close(out[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	rc = wait_child(c, child, out[0], deadline);
	if (c->output && c->output_len)
		c->output[c->got] = '\0';
	return rc;
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
	struct call call = {fn, ctx, result, result_size};
	/* One byte more than the result: the runner keeps a NUL's room. */
	char *buf = malloc(result_size + 1);
	struct nvt_child c = {call_in_child, &call, NULL, buf, result_size + 1, NVT_CHILD_STDIO,
			      timeout_ms, 0, 0};
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
