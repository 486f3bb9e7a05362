/*
 * segscan.c - listing the tasks with a segment in every run directory
 * (nvt_seg_tasks), and tidying the files of processes that are gone or that
 * do not use them. Split from segopen.c, whose opening and identity checks
 * it uses. Side effects: reads run directories and /proc; removes stale
 * files where the caller may. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segfile.h"
#include "core/grow.h"
#include "core/segment.h"
#include "os/sysutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Listing tasks --------------------------------------------------------------- */

struct scan {
	struct nvt_seg_entry *v;
	size_t n, cap;
	struct nvt_proc *nested; /* processes in namespaces below ours, read once */
	size_t n_nested, nested_cap;
	int nested_read;
	int nested_errno; /* why they could not be read; 0 if they were */
};

static int push(struct scan *s, const struct nvt_seg_entry *e)
{
	struct nvt_seg_entry *v = nvt_grow(s->v, s->n, &s->cap, sizeof(*v), 64);

	if (!v)
		return -1;
	s->v = v;
	s->v[s->n++] = *e;
	return 0;
}

/* Keeps pid if it lives in a namespace below /proc's. */
static int nested_one(pid_t pid, void *arg)
{
	struct scan *s = arg;
	struct nvt_proc p, *v;

	if (nvt_proc_info(pid, &p)) {
		/* Gone meanwhile, or hidden; anything else (EMFILE) is no answer. */
		if (errno != ENOENT && errno != ESRCH && !s->nested_errno)
			s->nested_errno = errno;
		return 0;
	}
	if (!p.nested)
		return 0;
	v = nvt_grow(s->nested, s->n_nested, &s->nested_cap, sizeof(*v), 64);
	if (!v) {
		s->nested_errno = ENOMEM;
		return 1;
	}
	s->nested = v;
	s->nested[s->n_nested++] = p;
	return 0;
}

/* Reads every process of a namespace below /proc's. Returns 0 or -1. */
static int read_nested(struct scan *s)
{
	s->nested_read = 1;
	if (nvt_proc_each(nested_one, s) < 0) {
		s->nested_errno = errno;
		return -1;
	}
	return 0;
}

/* The PID (ours) of the process a segment of another namespace (in uid's
 * run directory dirfd) names, 0 if none, or -1 with errno set when the
 * processes could not be read. */
static pid_t resolve_nested(struct scan *s, int dirfd, uid_t uid, const char *name, uint64_t pidns,
			    pid_t ns_pid)
{
	if (!s->nested_read)
		read_nested(s);
	for (size_t i = 0; i < s->n_nested; i++) {
		const struct nvt_proc *p = &s->nested[i];
		struct nvt_seg_trust t;
		int match;

		if (p->ns_pid != ns_pid)
			continue;
		if (p->pidns)
			match = p->pidns == pidns;
		else {
			/* Its namespace is not ours to read: trust PID and start time. */
			memset(&t, 0, sizeof(t));
			t.owner = uid;
			t.oflags = O_RDONLY;
			t.who = nvt_seg_who_of(NULL, p, pidns);
			match = nvt_seg_trust(dirfd, name, &t) == NVT_TRUST_OK;
			if (match)
				close(t.fd);
		}
		if (match)
			return p->pid;
	}
	if (s->nested_errno) {
		errno = s->nested_errno;
		return -1;
	}
	return 0;
}

/*
 * Collects the segments of uid's run directory; removes those of dead
 * processes if tidy. see_own: nvt_procfs_own(). Returns 0, or -1 with errno
 * set when a task may have been missed (EMFILE, ENOMEM: never "no task").
 */
static int scan_userdir(struct scan *s, const char *base, uid_t uid, int tidy, int see_own)
{
	uint64_t own_ns = nvt_own_pidns();
	int see_all = see_own && own_ns == NVT_INIT_PIDNS, rc = 0, err;
	struct dirent *ent;
	int dirfd, copy;
	DIR *dir;

	dirfd = nvt_userdir_open(base, uid);
	if (dirfd < 0) /* none, or not one we trust; or not ours to read */
		return errno == ENOENT || errno == EACCES ? 0 : -1;
	copy = dup(dirfd);
	if (copy < 0 || !(dir = fdopendir(copy))) {
		err = errno;
		if (copy >= 0)
			close(copy);
		close(dirfd);
		errno = err;
		return -1;
	}
	while ((ent = readdir(dir))) {
		struct nvt_seg_entry e;
		struct stat st;
		uint64_t pidns;
		pid_t ns_pid;

		if (nvt_seg_name_parse(ent->d_name, &pidns, &ns_pid))
			continue;
		memset(&e, 0, sizeof(e));
		if (pidns == own_ns && see_own) {
			if (kill(ns_pid, 0) && errno == ESRCH) {
				if (tidy)
					unlinkat(dirfd, ent->d_name, 0);
				continue;
			}
			e.pid = ns_pid;
		} else {
			e.pid = resolve_nested(s, dirfd, uid, ent->d_name, pidns, ns_pid);
			if (e.pid < 0) {
				rc = -1;
				break;
			}
			if (!e.pid) {
				/* From the initial namespace every process is in sight: none has it. */
				if (tidy && see_all)
					unlinkat(dirfd, ent->d_name, 0);
				continue;
			}
		}
		if (fstatat(dirfd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT)
				continue; /* removed meanwhile */
			rc = -1;
			break;
		}
		e.uid = uid;
		e.dev = st.st_dev;
		e.ino = st.st_ino;
		e.ctime = st.st_ctim;
		snprintf(e.name, sizeof(e.name), "%.63s", ent->d_name);
		if (push(s, &e)) {
			errno = ENOMEM;
			rc = -1;
			break;
		}
	}
	err = errno;
	closedir(dir);
	close(dirfd);
	errno = err;
	return rc;
}

/* Opens e's file for reading, never through a link. Returns its fd, or -1
 * with errno set (0 if its run directory cannot be used). */
static int open_entry(const char *base, const struct nvt_seg_entry *e)
{
	int dirfd = nvt_userdir_open(base, e->uid), fd, err;

	if (dirfd < 0) {
		errno = 0;
		return -1;
	}
	fd = openat(dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	err = errno;
	close(dirfd);
	errno = err;
	return fd;
}

/* 1 if entry e is a leftover: a valid segment that process e->pid does not
 * use (an earlier process's with its PID, or one forged for it). */
static int replaced(const char *base, const struct nvt_seg_entry *e)
{
	struct nvt_seg_trust t;
	struct nvt_proc p;
	uint64_t pidns;
	pid_t ns_pid;
	int dirfd, rc;

	if (nvt_proc_info(e->pid, &p))
		return (errno == ESRCH || errno == ENOENT) && !nvt_proc_hidden(e->pid);
	if (nvt_seg_name_parse(e->name, &pidns, &ns_pid) || (dirfd = nvt_userdir_open(base, e->uid)) < 0)
		return 0;
	memset(&t, 0, sizeof(t));
	t.owner = e->uid;
	t.oflags = O_RDONLY;
	/* Its namespace as its name says (p's may not be ours to read). */
	t.who = nvt_seg_who_of(base, &p, pidns);
	rc = nvt_seg_trust(dirfd, e->name, &t);
	close(dirfd);
	if (rc == NVT_TRUST_OK)
		close(t.fd);
	return rc == NVT_TRUST_NOT_ITS;
}

/* 1 if e is a file its maker has not filled in yet (see nvt_seg_being_made). */
static int entry_being_made(const char *base, const struct nvt_seg_entry *e)
{
	struct stat st;
	int fd = open_entry(base, e), made;

	if (fd < 0)
		return errno == EACCES; /* mode 0600: not ours to read, so not filled in */
	made = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == e->dev &&
	       st.st_ino == e->ino && nvt_seg_being_made(fd, &st);
	close(fd);
	return made;
}

static void remove_entry(const char *base, const struct nvt_seg_entry *e)
{
	int dirfd = nvt_userdir_open(base, e->uid);

	if (dirfd < 0)
		return;
	nvt_unlink_same(dirfd, e->name, e->dev, e->ino);
	close(dirfd);
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct nvt_seg_entry *)a)->pid, y = ((const struct nvt_seg_entry *)b)->pid;
	return (x > y) - (x < y);
}

/* Collects the segment files of uid only's run directory, or of every user's
 * ((uid_t)-1), into s, ascending by PID; tidies as scan_userdir. Returns 0 or -1. */
static int collect(struct scan *s, const char *base, uid_t only, int tidy)
{
	struct dirent *ent;
	uid_t me = geteuid();
	DIR *dir;
	int see_own;

	see_own = nvt_procfs_own();
	if (see_own < 0)
		return -1;
	dir = opendir(base);
	if (!dir)
		return -1;
	while ((ent = readdir(dir))) {
		uid_t uid;
		if (nvt_userdir_name_parse(ent->d_name, &uid) == 0 && (only == (uid_t)-1 || uid == only) &&
		    scan_userdir(s, base, uid, tidy && (me == 0 || me == uid), see_own)) {
			int err = errno;
			closedir(dir);
			free(s->v);
			free(s->nested);
			errno = err;
			return -1;
		}
	}
	closedir(dir);
	free(s->nested);
	s->nested = NULL;
	if (s->n) /* (no list at all when no file: qsort's base must not be NULL) */
		qsort(s->v, s->n, sizeof(*s->v), by_pid);
	return 0;
}

int nvt_seg_list(const char *base, uid_t only, struct nvt_seg_entry **out)
{
	struct scan s = {0};

	*out = NULL;
	if (collect(&s, base, only, 0))
		return -1;
	if (!s.v && !(s.v = malloc(sizeof(*s.v))))
		return -1;
	*out = s.v;
	return (int)s.n;
}

int nvt_seg_entry_open(const char *base, const struct nvt_seg_entry *e)
{
	struct stat st;
	int fd = open_entry(base, e);

	if (fd < 0) {
		if (!errno)
			errno = ENOENT; /* its run directory is not one to use now */
		return -1;
	}
	if (fstat(fd, &st)) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != e->uid || st.st_dev != e->dev || st.st_ino != e->ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

int nvt_seg_tasks(const char *base, int tidy, pid_t **pids)
{
	struct scan s = {0};
	uid_t me = geteuid();
	size_t n_out = 0;
	pid_t *out;

	*pids = NULL;
	if (collect(&s, base, (uid_t)-1, tidy))
		return -1;
	out = malloc((s.n ? s.n : 1) * sizeof(*out));
	if (!out) {
		free(s.v);
		return -1;
	}
	for (size_t i = 0; i < s.n;) {
		struct nvt_seg_handle h;
		struct stat st;
		size_t j = i;
		int rc = nvt_seg_open(base, s.v[i].pid, 0, &h), settled;

		while (j < s.n && s.v[j].pid == s.v[i].pid)
			j++;
		/* The segment the process uses now, filled and opened to readers: until
		 * then, its shim may still be copying the one from before an exec. */
		settled = rc == NVT_SEG_OK && fstat(h.fd, &st) == 0 &&
			  (st.st_mode & 07777) != NVT_SEG_NEW_MODE;
		if (rc != NVT_SEG_ENOTASK && rc != NVT_SEG_ENOPROC)
			out[n_out++] = s.v[i].pid;
		for (size_t k = i; k < j; k++) {
			const struct nvt_seg_entry *e = &s.v[k];
			/* Gone meanwhile; replaced by the segment the process uses now (an
			 * exec to another user); or left by an earlier process with the PID.
			 * Never one its user's shim is still making (the read looked past
			 * it, to the segment from before the exec): kept while it lives. */
			int stale = rc == NVT_SEG_ENOPROC ||
				    (settled && (e->dev != h.dev || e->ino != h.ino) &&
				     !(e->uid == h.task_uid && entry_being_made(base, e))) ||
				    (rc == NVT_SEG_ENOTASK && replaced(base, e));
			if (stale && tidy && (me == 0 || me == e->uid))
				remove_entry(base, e);
		}
		if (rc == NVT_SEG_OK)
			nvt_seg_close(&h);
		i = j;
	}
	free(s.v);
	*pids = out;
	return (int)n_out;
}
