/*
 * proc.c - see proc.h.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc.h"
#include "core/cdi.h"
#include "core/grow.h"
#include "sysutil.h"

/* Reads and parses a /proc/PID/stat file. Returns 0, or -1 with errno set
 * (ESRCH for a zombie: gone, as far as partitions go). */
static int stat_at(const char *path, struct nvt_stat *st)
{
	char buf[1024];

	if (nvt_read_file(path, buf, sizeof(buf), 0) < 0)
		return -1;
	if (nvt_stat_parse(buf, st)) {
		errno = EINVAL;
		return -1;
	}
	if (st->state == 'Z' || st->state == 'X') {
		errno = ESRCH;
		return -1;
	}
	return 0;
}

static int start_time_at(const char *path, uint64_t *start_time)
{
	struct nvt_stat st;

	if (stat_at(path, &st))
		return -1;
	*start_time = st.start_time;
	return 0;
}

int nvt_proc_stat(pid_t pid, struct nvt_stat *st)
{
	char path[64];

	if (pid == 0)
		return stat_at("/proc/self/stat", st);
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	return stat_at(path, st);
}

int nvt_proc_start_time(pid_t pid, uint64_t *start_time)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	return start_time_at(path, start_time);
}

int nvt_proc_euid(pid_t pid, uid_t *euid)
{
	char path[64], buf[2048];
	const char *line;
	unsigned long real, effective;

	/* The Uid: line comes early (after Name, Umask, State, Tgid, Ngid, Pid,
	 * PPid, TracerPid): the start of the file holds it. */
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (nvt_read_file(path, buf, sizeof(buf), 0) < 0)
		return -1;
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%lu %lu", &real, &effective) != 2) {
		errno = EINVAL;
		return -1;
	}
	*euid = (uid_t)effective;
	return 0;
}

/* Counts the fields of the "NSpid:" line of a status text and returns the last, or 0. */
static long nspid_of(const char *status, int *fields)
{
	const char *line = strstr(status, "\nNSpid:");
	long last = 0;
	char *end;

	*fields = 0;
	if (!line)
		return 0;
	for (const char *p = line + 7; *p && *p != '\n'; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		last = v;
		(*fields)++;
	}
	return last;
}

uint64_t nvt_own_pidns(void)
{
	struct stat st;
	return stat("/proc/self/ns/pid", &st) ? 0 : (uint64_t)st.st_ino;
}

int nvt_procfs_own(void)
{
	char buf[16384];
	int fields;

	/* NSpid lists the PIDs from /proc's namespace down to ours: one field
	 * when /proc is our namespace's (a container with its own /proc, or the host). */
	if (nvt_read_file("/proc/self/status", buf, sizeof(buf), 0) < 0)
		return errno == ENOENT ? 0 : -1; /* no /proc at all: not ours */
	nspid_of(buf, &fields);
	return fields == 1;
}

int nvt_procfs_is_own(void)
{
	return nvt_procfs_own() == 1;
}

int nvt_proc_hidden(pid_t pid)
{
	/* /proc hides it (hidepid=2: another user's process), but the kernel
	 * knows it: kill(pid, 0) finds it (EPERM, or 0 for one we may signal). */
	return nvt_procfs_is_own() && (kill(pid, 0) == 0 || errno == EPERM);
}

int nvt_proc_pidfd(pid_t pid, uint64_t start_time)
{
#ifdef SYS_pidfd_open
	uint64_t now;
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		return -1;
	/* Opened first, checked after: the PID was this process's when it was
	 * opened if it still is now (a PID is not given again before its
	 * process is reaped, and a pidfd keeps its process, not its PID). */
	if (nvt_proc_start_time(pid, &now) || now != start_time) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
#else
	(void)pid;
	(void)start_time;
	errno = ENOSYS;
	return -1;
#endif
}

int nvt_pidfd_alive(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};
	int n = poll(&p, 1, 0);

	if (n < 0)
		return -1;
	return !(n > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)));
}

int nvt_proc_info(pid_t pid, struct nvt_proc *out)
{
	char path[64], buf[16384];
	const char *line;
	unsigned long u[4];
	struct stat st;
	long ns_pid;
	int fields;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (nvt_read_file(path, buf, sizeof(buf), 0) < 0)
		return -1;
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) != 4) {
		errno = EINVAL;
		return -1;
	}
	for (int i = 0; i < 4; i++)
		out->uid[i] = (uid_t)u[i];
	ns_pid = nspid_of(buf, &fields);
	out->nested = fields > 1;
	out->ns_pid = fields ? (pid_t)ns_pid : pid; /* kernels before 4.1 have no NSpid */
	if (nvt_proc_start_time(pid, &out->start_time))
		return -1;
	/* Reading the namespace link needs ptrace access (the task's user or root). */
	snprintf(path, sizeof(path), "/proc/%ld/ns/pid", (long)pid);
	if (stat(path, &st) == 0)
		out->pidns = (uint64_t)st.st_ino;
	else if (!out->nested && nvt_procfs_is_own())
		out->pidns = nvt_own_pidns();
	return 0;
}


int nvt_proc_each(int (*each)(pid_t pid, void *arg), void *arg)
{
	struct dirent *ent;
	DIR *proc = opendir("/proc");
	int rc = 0, saved;

	if (!proc)
		return -1;
	while (!rc && (ent = readdir(proc))) {
		char *end;
		long pid = strtol(ent->d_name, &end, 10);

		if (*end || end == ent->d_name || pid <= 0)
			continue;
		rc = each((pid_t)pid, arg);
	}
	saved = errno;
	closedir(proc);
	errno = saved;
	return rc;
}

/* What nvt_proc_links gathers. */
struct links {
	struct nvt_proc_link *v;
	size_t n, cap;
};

static int link_one(pid_t pid, void *arg)
{
	struct links *l = arg;
	char path[64], text[1024];
	struct nvt_proc_link *bigger;
	struct nvt_stat st;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (nvt_read_file(path, text, sizeof(text), 0) < 0)
		/* Ended meanwhile: skip. Out of descriptors or memory: a list
		 * without this process would hide it (and its tasks) from -a -p
		 * and -l, so fail. */
		return errno == ENOENT || errno == ESRCH ? 0 : -1;
	if (nvt_stat_parse(text, &st))
		return 0; /* a zombie's, or ended while read */
	bigger = nvt_grow(l->v, l->n, &l->cap, sizeof(*bigger), 256);
	if (!bigger) {
		errno = ENOMEM;
		return -1;
	}
	l->v = bigger;
	l->v[l->n].pid = st.pid;
	l->v[l->n++].ppid = st.ppid;
	return 0;
}

int nvt_proc_links(struct nvt_proc_link **links)
{
	struct links l = {NULL, 0, 0};

	*links = NULL;
	if (nvt_proc_each(link_one, &l)) {
		int saved = errno;
		free(l.v);
		errno = saved;
		return -1;
	}
	nvt_links_sort(l.v, l.n);
	*links = l.v;
	return (int)l.n;
}

int nvt_proc_tgid(pid_t tid, pid_t *tgid)
{
	char path[64], status[4096], *line;
	long v;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
	if (nvt_read_file(path, status, sizeof(status), 0) < 0)
		return -1;
	line = strstr(status, "\nTgid:");
	if (!line || sscanf(line + 6, "%ld", &v) != 1 || v <= 0) {
		errno = EINVAL;
		return -1;
	}
	*tgid = (pid_t)v;
	return 0;
}

int nvt_proc_env(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	static char env[65536];
	size_t n = strlen(name);
	ssize_t got;

	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	got = nvt_read_file(path, env, sizeof(env), 0);
	if (got <= 0)
		return -1;
	for (char *p = env; p < env + got; p += strlen(p) + 1)
		if (!strncmp(p, name, n) && p[n] == '=') {
			snprintf(buf, len, "%s", p + n + 1);
			return 0;
		}
	return -1;
}

ssize_t nvt_proc_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	return nvt_read_file(path, buf, len, 0);
}

ssize_t nvt_proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	return nvt_read_file(path, buf, len, 0);
}

int nvt_proc_container(pid_t pid, char *id, size_t len)
{
	char path[64], text[8192];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)pid);
	n = nvt_read_file(path, text, sizeof(text), 0);
	return n < 0 ? -1 : nvt_cgroup_container(text, (size_t)n, id, len);
}

int nvt_proc_maps(pid_t pid, int (*each)(const char *line, void *arg), void *arg)
{
	char path[64], buf[8192];
	size_t have = 0;
	int fd, found = -1, skip = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *end;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
		buf[have] = '\0';
		while ((end = strchr(line, '\n'))) {
			int r;
			*end = '\0';
			r = skip ? -1 : each(line, arg);
			skip = 0;
			if (r == 1) {
				close(fd);
				return 1;
			}
			if (r == 0)
				found = 0;
			line = end + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1) { /* a line longer than the buffer: skipped */
			have = 0;
			skip = 1;
		}
	}
	close(fd);
	return found;
}
