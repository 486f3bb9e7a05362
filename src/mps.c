/*
 * mps.c - the MPS control daemon ([ECRTS25] section 5.2; docs/hardware-facts.md, 6).
 *
 * The daemon writes its PID to nvidia-cuda-mps-control.pid in its pipe
 * directory; "echo quit | nvidia-cuda-mps-control" stops it.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "mps.h"
#include "mpslog.h"
#include "sysutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CONTROL "nvidia-cuda-mps-control"
#define PID_FILE "nvidia-cuda-mps-control.pid"

/* Where NVIDIA's installers put the MPS binaries, after $PATH. */
static const char *const driver_dirs[] = {
	"/usr/local/nvidia/bin", "/usr/bin", "/usr/sbin", "/usr/local/bin",
	"/usr/lib/nvidia", "/opt/nvidia/bin",
};

static void dir_from_env(char *buf, size_t len, const char *name, const char *fallback)
{
	const char *v = getenv(name);
	snprintf(buf, len, "%s", v && *v ? v : fallback);
}

static int find_in(const char *dir, size_t dir_len, char *out, size_t len)
{
	int n = snprintf(out, len, "%.*s/" CONTROL, (int)dir_len, dir);
	return n > 0 && (size_t)n < len && access(out, X_OK) == 0;
}

void nvt_mps_setup(struct nvt_mps *mps)
{
	const char *path = getenv("PATH");

	memset(mps, 0, sizeof(*mps));
	dir_from_env(mps->pipe_dir, sizeof(mps->pipe_dir), "CUDA_MPS_PIPE_DIRECTORY",
		     "/tmp/nvidia-mps");
	dir_from_env(mps->log_dir, sizeof(mps->log_dir), "CUDA_MPS_LOG_DIRECTORY",
		     "/var/log/nvidia-mps");
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		if (n && find_in(path, n, mps->control, sizeof(mps->control)))
			return;
		path = end ? end + 1 : NULL;
	}
	for (size_t i = 0; i < sizeof(driver_dirs) / sizeof(driver_dirs[0]); i++)
		if (find_in(driver_dirs[i], strlen(driver_dirs[i]), mps->control,
			    sizeof(mps->control)))
			return;
	mps->control[0] = '\0';
}

/* Returns 1 if pid is alive and its command name starts with "nvidia-cuda-mps". */
static int is_mps_process(pid_t pid)
{
	char path[64], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return strncmp(comm, "nvidia-cuda-mps", 15) == 0;
}

pid_t nvt_mps_daemon(const struct nvt_mps *mps)
{
	char path[512], text[32] = "";
	char *end;
	long pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/" PID_FILE, mps->pipe_dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(text, sizeof(text), f))
		text[0] = '\0';
	fclose(f);
	errno = 0;
	pid = strtol(text, &end, 10);
	if (errno || end == text || pid <= 0 || pid > 0x3fffffff)
		return 0;
	return is_mps_process((pid_t)pid) ? (pid_t)pid : 0;
}

static int make_dir(const char *dir, char *error, size_t len)
{
	if (nvt_mkdirs(dir, 0755) == 0)
		return 0;
	snprintf(error, len, "cannot create the MPS directory %s: %s", dir, strerror(errno));
	return -1;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* Runs the control binary with args, input on stdin; returns its exit status or -1. */
static int run_control(struct nvt_mps *mps, const char *arg, const char *input)
{
	int in[2], status;
	pid_t child;

	if (pipe2(in, O_CLOEXEC))
		return -1;
	child = fork();
	if (child < 0) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	if (child == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(in[0], STDIN_FILENO);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			if (!input)
				dup2(null, STDERR_FILENO); /* the daemon's own chatter */
		}
		setenv("CUDA_MPS_PIPE_DIRECTORY", mps->pipe_dir, 1);
		setenv("CUDA_MPS_LOG_DIRECTORY", mps->log_dir, 1);
		unsetenv("LD_PRELOAD"); /* the daemon needs no partition */
		if (arg)
			execl(mps->control, mps->control, arg, (char *)NULL);
		else
			execl(mps->control, mps->control, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	if (input && write(in[1], input, strlen(input)) < 0) {
		/* the child reports its own failure */
	}
	close(in[1]);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int nvt_mps_start(struct nvt_mps *mps, int timeout_ms)
{
	int rc;

	if (!mps->control[0]) {
		snprintf(mps->error, sizeof(mps->error),
			 "cannot find " CONTROL " in PATH or the driver's directories");
		return -1;
	}
	if (make_dir(mps->pipe_dir, mps->error, sizeof(mps->error)) ||
	    make_dir(mps->log_dir, mps->error, sizeof(mps->error)))
		return -1;
	rc = run_control(mps, "-d", NULL);
	if (rc != 0) {
		snprintf(mps->error, sizeof(mps->error),
			 "%.300s -d failed (exit status %d); see %.300s/control.log", mps->control, rc,
			 mps->log_dir);
		return -1;
	}
	for (int waited = 0; waited < timeout_ms; waited += 20) {
		if (nvt_mps_daemon(mps))
			return 0;
		sleep_ms(20);
	}
	snprintf(mps->error, sizeof(mps->error),
		 "the MPS control daemon did not come up within %d ms; see %s/control.log",
		 timeout_ms, mps->log_dir);
	return -1;
}

int nvt_mps_stop(struct nvt_mps *mps, int timeout_ms)
{
	pid_t pid = nvt_mps_daemon(mps);

	if (!pid)
		return 0;
	if (!mps->control[0]) {
		snprintf(mps->error, sizeof(mps->error),
			 "cannot find " CONTROL " to stop daemon %ld", (long)pid);
		return -1;
	}
	if (run_control(mps, NULL, "quit\n") != 0) {
		snprintf(mps->error, sizeof(mps->error), "\"echo quit | %.300s\" failed", mps->control);
		return -1;
	}
	for (int waited = 0; waited < timeout_ms; waited += 20) {
		if (kill(pid, 0) && errno == ESRCH)
			return 0;
		if (!is_mps_process(pid))
			return 0;
		sleep_ms(20);
	}
	snprintf(mps->error, sizeof(mps->error),
		 "the MPS control daemon (pid %ld) is still running after %d ms", (long)pid,
		 timeout_ms);
	return -1;
}

int nvt_mps_query(struct nvt_mps *mps, const char *command, char *out, size_t len, int timeout_ms)
{
	int in[2], res[2], status;
	size_t got = 0;
	pid_t child;

	if (!mps->control[0] || len == 0)
		return -1;
	if (pipe2(in, O_CLOEXEC))
		return -1;
	if (pipe2(res, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return -1;
	}
	child = fork();
	if (child < 0) {
		close(in[0]);
		close(in[1]);
		close(res[0]);
		close(res[1]);
		return -1;
	}
	if (child == 0) {
		int null = open("/dev/null", O_WRONLY);
		setpgid(0, 0); /* so that a timeout ends whatever it started */
		dup2(in[0], STDIN_FILENO);
		dup2(res[1], STDOUT_FILENO);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		setenv("CUDA_MPS_PIPE_DIRECTORY", mps->pipe_dir, 1);
		setenv("CUDA_MPS_LOG_DIRECTORY", mps->log_dir, 1);
		unsetenv("LD_PRELOAD");
		execl(mps->control, mps->control, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(res[1]);
	if (write(in[1], command, strlen(command)) < 0 || write(in[1], "\n", 1) < 0) {
		/* the child reports its own failure */
	}
	close(in[1]);
	int waited = 0;
	for (;;) {
		struct pollfd pfd = {res[0], POLLIN, 0};
		ssize_t n;
		if (poll(&pfd, 1, 100) == 0) {
			waited += 100;
			if (waited >= timeout_ms)
				break;
			continue;
		}
		n = read(res[0], out + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (got += (size_t)n) >= len - 1)
			break;
	}
	out[got] = '\0';
	close(res[0]);
	/* The answer is complete at EOF; the process may take a moment more to exit. */
	while (waitpid(child, &status, WNOHANG) == 0) {
		if (waited >= timeout_ms) {
			kill(-child, SIGKILL); /* a wedged daemon must not hang nvtaskset */
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
			return -1;
		}
		sleep_ms(10);
		waited += 10;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Effective uid of pid, or (uid_t)-1. */
static uid_t process_uid(pid_t pid)
{
	char path[64], line[256];
	unsigned long ruid, euid;
	uid_t uid = (uid_t)-1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return uid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %lu %lu", &ruid, &euid) == 2)
			uid = (uid_t)euid;
	fclose(f);
	return uid;
}

int nvt_mps_clients(struct nvt_mps *mps, uid_t uid, pid_t *server, int *clients, int timeout_ms)
{
	char answer[16384];
	long servers[NVT_MPS_MAX_PIDS];
	int counts[NVT_MPS_MAX_PIDS], n;

	*server = 0;
	*clients = 0;
	/* One "ps" lists every client with its server: one round trip, which
	 * matters on every task's start. */
	if (nvt_mps_query(mps, "ps", answer, sizeof(answer), timeout_ms))
		return -1;
	n = nvt_mps_parse_ps(answer, servers, counts, NVT_MPS_MAX_PIDS);
	if (n < 0)
		return -1;
	for (int i = 0; i < n && i < NVT_MPS_MAX_PIDS; i++) {
		if (process_uid((pid_t)servers[i]) == uid) {
			*server = (pid_t)servers[i];
			*clients = counts[i];
			break;
		}
	}
	return 0;
}

int nvt_mps_read_log(const struct nvt_mps *mps, char *buf, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%.300s/server.log", mps->log_dir);
	return nvt_read_file(path, buf, len, 1) < 0 ? -1 : 0;
}
