/*
 * proc.c - see proc.h.
 *
 * Over 500 lines on purpose: the one reader of processes' /proc files, each
 * read a few lines beside the reads it shares (status, stat, the links; their
 * parsers, pure, in core/ptree.c).
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

/* ---- Reading /proc files whole --------------------------------------------------- */

/*
 * A /proc file is read to its end, whatever its length, never cut: a status
 * of a process in thousands of supplementary groups (LDAP users, podman's
 * --group-add, a pod's supplementalGroups) is longer than any buffer one
 * would pick, and its Groups line comes before NSpid. Records (lines, or the
 * NUL-separated strings of environ) longer than RECORD_MAX - 1 bytes are
 * given cut, saying so; those nvtaskset reads are far shorter (an NSpid line
 * of 32 namespaces is 360 bytes, a maps line a path of PATH_MAX and 80 bytes),
 * and one it needs that comes cut is malformed, never taken in part.
 */
#define RECORD_MAX 8192

/* Called for each record (NUL-terminated, without its separator); cut: it was
 * longer, this is its start. Returns 0 to go on, anything else to stop. */
typedef int (*record_fn)(char *record, int cut, void *arg);

/* Calls each for every record of the file path, separated by sep. Returns
 * each's value where it stopped the read, 0 at the end, or -1 with errno set
 * (the file cannot be opened or read). */
static int each_record(const char *path, char sep, record_fn each, void *arg)
{
	char buf[RECORD_MAX];
	size_t have = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc = 0, skipping = 0, saved;

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *rec = buf, *end;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (got == 0)
			break;
		have += (size_t)got;
		buf[have] = '\0';
		while ((end = memchr(rec, sep, have - (size_t)(rec - buf)))) {
			*end = '\0';
			rc = skipping ? 0 : each(rec, 0, arg);
			skipping = 0;
			if (rc)
				goto done;
			rec = end + 1;
		}
		have -= (size_t)(rec - buf);
		memmove(buf, rec, have);
		if (have == sizeof(buf) - 1) { /* longer than the buffer: its start, then skipped */
			buf[have] = '\0';
			rc = skipping ? 0 : each(buf, 1, arg);
			if (rc)
				goto done;
			skipping = 1;
			have = 0;
		}
	}
	buf[have] = '\0';
	if (have && !skipping)
		rc = each(buf, 0, arg); /* the last, without its separator */
done:
	close(fd);
	return rc;
}

/* Reads all of the file path into buf (len bytes, NUL-terminated), or fails
 * with EFBIG where it does not fit: never a part taken for the whole. Returns
 * its length, or -1 with errno set. */
static ssize_t read_whole(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), saved;
	size_t have = 0;
	ssize_t got;
	char more;

	if (fd < 0)
		return -1;
	do {
		size_t want = len - 1 - have;
		got = want ? read(fd, buf + have, want) : read(fd, &more, 1);
		if (got > 0 && !want) {
			got = -1;
			errno = EFBIG;
		} else if (got > 0) {
			have += (size_t)got;
			/* A /proc file (seq_file) reads short only at its end: a line read
			 * short and whole needs no second read to say so. */
			if ((size_t)got < want && buf[have - 1] == '\n')
				break;
		}
	} while (got > 0 || (got < 0 && errno == EINTR));
	saved = errno;
	close(fd);
	if (got < 0) {
		errno = saved;
		return -1;
	}
	buf[have] = '\0';
	return (ssize_t)have;
}

/* Takes a line of a /proc/PID/status (nvt_status_line: core/ptree.c parses it). */
static int status_line(char *line, int cut, void *arg)
{
	return nvt_status_line(line, cut, arg);
}

/* Reads the lines of /proc/PID/status (pid 0: /proc/self/status) that s->want
 * names, to the end of the file if need be. A read that found its task released
 * is read again, once: a reaped process's file is gone by then (ENOENT), while
 * the leader that another thread's exec replaced leaves its PID to that thread.
 * Returns 0, or -1 with errno set (ESRCH: reaped while read; EINVAL: a line
 * asked for is malformed, or Uid or Tgid is missing: nvt_status_verdict). */
static int status_read(pid_t pid, struct nvt_status *s)
{
	char path[64];
	unsigned want = s->want;
	int err = ESRCH;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	for (int round = 0; round < 2 && err == ESRCH; round++) {
		memset(s, 0, sizeof(*s));
		s->want = want;
		if (each_record(path, '\n', status_line, s) < 0)
			return -1;
		err = nvt_status_verdict(s);
	}
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* ---- Identity -------------------------------------------------------------------- */

/* /proc/PID/WHAT, or /proc/self/WHAT for pid 0, into path (64 bytes). */
static void self_or_pid(pid_t pid, const char *what, char path[64])
{
	if (pid)
		snprintf(path, 64, "/proc/%ld/%s", (long)pid, what);
	else
		snprintf(path, 64, "/proc/self/%s", what);
}

/* One process's /proc files, for the reads of core/ptree.c's nvt_stat_settle and
 * nvt_status_settle. */
struct pid_files {
	pid_t pid;      /* 0: this process's */
	uint64_t pidns; /* its PID namespace's inode (0: not readable), read by pid_ns */
};

static int pid_stat(void *arg, struct nvt_stat *st)
{
	const struct pid_files *f = arg;
	/* 52 fields and a command name: about 1.2 KB at most. */
	char path[64], buf[4096];

	self_or_pid(f->pid, "stat", path);
	if (read_whole(path, buf, sizeof(buf)) < 0)
		return -1;
	if (nvt_stat_parse(buf, st)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static int pid_status(void *arg, struct nvt_status *s)
{
	return status_read(((const struct pid_files *)arg)->pid, s);
}

/* Between the two stats too: the namespace link of the process the status was. */
static void pid_ns(void *arg)
{
	struct pid_files *f = arg;

	f->pidns = nvt_proc_pidns(f->pid);
}

/* Reads and parses /proc/PID/stat (pid 0: /proc/self/stat), whose state tells
 * (nvt_stat_settle). Returns 0, or -1 with errno set (ESRCH for a zombie; EAGAIN:
 * replaced between reads NVT_STAT_ROUNDS times running). */
static int stat_at(pid_t pid, struct nvt_stat *st)
{
	struct pid_files f = {pid, 0};
	struct nvt_proc_reads r = {pid_stat, pid_status, NULL, &f};

	return nvt_stat_settle(&r, st);
}

int nvt_proc_stat(pid_t pid, struct nvt_stat *st)
{
	return stat_at(pid, st);
}

int nvt_proc_start_time(pid_t pid, uint64_t *start_time)
{
	struct nvt_stat st;

	if (pid <= 0) { /* no process (not this one: /proc has no PID 0) */
		errno = ENOENT;
		return -1;
	}
	if (stat_at(pid, &st))
		return -1;
	*start_time = st.start_time;
	return 0;
}

int nvt_proc_euid(pid_t pid, uid_t *euid)
{
	struct nvt_status s = {.want = NVT_STATUS_UID};

	/* The Uid line comes early (after Name, Umask, State, Tgid, Ngid, Pid,
	 * PPid, TracerPid): the read stops there. */
	if (status_read(pid, &s))
		return -1;
	*euid = (uid_t)s.uid[1];
	return 0;
}

int nvt_proc_inode(pid_t pid, const char *what, uint64_t *dev, uint64_t *ino)
{
	char path[64];
	struct stat st;

	self_or_pid(pid, what, path);
	if (stat(path, &st))
		return -1;
	if (dev)
		*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int nvt_proc_ns_open(pid_t pid, const char *what)
{
	char path[64];

	self_or_pid(pid, what, path);
	return open(path, O_RDONLY | O_CLOEXEC);
}

ssize_t nvt_proc_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	self_or_pid(pid, "exe", path);
	n = len ? readlink(path, buf, len) : -1;
	if (n < 0)
		return -1;
	if ((size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	buf[n] = '\0';
	return n;
}

int nvt_proc_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *ent;
	DIR *dir;
	int n = 0;

	self_or_pid(pid, "fd", path);
	if (!(dir = opendir(path)))
		return -1;
	while ((ent = readdir(dir)))
		n += ent->d_name[0] != '.';
	closedir(dir);
	return pid ? n : n - 1; /* this process's: not the directory's own descriptor */
}

int nvt_proc_shares(pid_t pid, const char *what)
{
	uint64_t dev, ino, my_dev, my_ino;

	if (nvt_proc_inode(pid, what, &dev, &ino) || nvt_proc_inode(0, what, &my_dev, &my_ino))
		return -1;
	return dev == my_dev && ino == my_ino;
}

uint64_t nvt_own_pidns(void)
{
	uint64_t ino;

	return nvt_proc_inode(0, "ns/pid", NULL, &ino) ? 0 : ino;
}

uint64_t nvt_proc_pidns(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld/ns/pid", (long)pid);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

int nvt_procfs_own(void)
{
	struct nvt_status s = {.want = NVT_STATUS_NSPID};

	/* NSpid lists the PIDs from /proc's namespace down to ours: one field
	 * when /proc is our namespace's (a container with its own /proc, or the host). */
	if (status_read(0, &s))
		return errno == ENOENT ? 0 : -1; /* no /proc at all: not ours */
	return s.nspid_fields == 1;
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

int nvt_procfs_shows_all(int own)
{
	return own == 1 && nvt_own_pidns() == NVT_INIT_PIDNS && (geteuid() == 0 || !nvt_proc_hidden(1));
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
	struct nvt_status s = {.want = NVT_STATUS_UID | NVT_STATUS_NSPID};
	struct pid_files f = {pid, 0};
	struct nvt_proc_reads r = {pid_stat, pid_status, pid_ns, &f};
	struct nvt_stat st;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	if (pid <= 0) { /* no process (not this one: /proc has no PID 0) */
		errno = ENOENT;
		return -1;
	}
	/* Users and namespace read between two stats of one process: never one process's
	 * users with the start time of another that took its PID meanwhile. */
	if (nvt_status_settle(&r, &s, &st))
		return -1;
	for (int i = 0; i < 4; i++)
		out->uid[i] = (uid_t)s.uid[i];
	out->nested = s.nspid_fields > 1;
	/* (kernels before 4.1 have no NSpid) */
	out->ns_pid = s.nspid_fields ? (pid_t)s.nspid : pid;
	out->start_time = st.start_time;
	/* Reading the namespace link needs ptrace access (the task's user or root). */
	out->pidns = f.pidns;
	if (!out->pidns && !out->nested && nvt_procfs_is_own())
		out->pidns = nvt_own_pidns();
	return 0;
}

int nvt_proc_each(int (*each)(pid_t pid, void *arg), void *arg)
{
	return nvt_proc_each_in("/proc", each, arg);
}

int nvt_proc_each_in(const char *dir, int (*each)(pid_t pid, void *arg), void *arg)
{
	struct dirent *ent;
	DIR *proc = opendir(dir);
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
	char path[64], text[4096];
	struct nvt_proc_link *bigger;
	struct nvt_stat st;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (read_whole(path, text, sizeof(text)) < 0)
		/* Ended meanwhile: skip. Out of descriptors or memory: a list
		 * without this process would hide it (and its tasks) from -a -p
		 * and -l, so fail. */
		return errno == ENOENT || errno == ESRCH ? 0 : -1;
	/* A line that says 'Z' is kept: its parent is known (and a leader whose threads
	 * live is a running process). */
	if (nvt_stat_parse(text, &st))
		return 0; /* not a stat line: ended while read */
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
	struct nvt_status s = {.want = NVT_STATUS_TGID};

	if (status_read(tid, &s))
		return -1;
	*tgid = (pid_t)s.tgid;
	return 0;
}

/* What nvt_proc_env looks for, and where it puts the value. */
struct env_find {
	const char *name;
	size_t name_len;
	char *buf;
	size_t len;
};

static int env_var(char *var, int cut, void *arg)
{
	struct env_find *f = arg;

	(void)cut; /* a value longer than the read's buffer comes cut, as buf would cut it */
	if (strncmp(var, f->name, f->name_len) || var[f->name_len] != '=')
		return 0;
	snprintf(f->buf, f->len, "%s", var + f->name_len + 1);
	return 1;
}

int nvt_proc_env(pid_t pid, const char *name, char *buf, size_t len)
{
	struct env_find f = {name, strlen(name), buf, len};
	char path[64];

	/* The whole environment, however long: a variable past any buffer's end is still found. */
	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	return each_record(path, '\0', env_var, &f) == 1 ? 0 : -1;
}

int nvt_proc_uid_map(pid_t pid, char *buf, size_t len)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%ld/uid_map", (long)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/uid_map");
	return read_whole(path, buf, len) < 0 ? -1 : 0;
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
	char path[64], *text = NULL;
	size_t size = 16384;
	ssize_t n = -1;

	/* Whole: one line for each cgroup hierarchy, each up to a path long. */
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)pid);
	for (; size <= ((size_t)1 << 26); size *= 4) {
		char *bigger = realloc(text, size);
		if (!bigger)
			break;
		text = bigger;
		n = read_whole(path, text, size);
		if (n >= 0 || errno != EFBIG)
			break;
	}
	n = n < 0 ? -1 : nvt_cgroup_container(text, (size_t)n, id, len);
	free(text);
	return (int)n;
}

/* What nvt_proc_maps gathers: each's verdicts. */
struct maps_walk {
	int (*each)(const char *line, void *arg);
	void *arg;
	int found;
};

static int maps_line(char *line, int cut, void *arg)
{
	struct maps_walk *w = arg;
	int r = cut ? -1 : w->each(line, w->arg); /* a line longer than the buffer: skipped */

	if (r == 0)
		w->found = 0;
	return r == 1;
}

int nvt_proc_maps(pid_t pid, int (*each)(const char *line, void *arg), void *arg)
{
	struct maps_walk w = {each, arg, -1};
	char path[64];
	int rc;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	rc = each_record(path, '\n', maps_line, &w);
	return rc < 0 ? -1 : rc == 1 ? 1 : w.found;
}
