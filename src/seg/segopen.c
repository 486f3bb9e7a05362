/*
 * segopen.c - the CLI's side of control segments: finding a process's
 * segment and reading it by copies (writing it under its lock: segwrite.c).
 *
 * Reading is open to everyone, takes no lock and never maps the file (a user
 * who shrinks her file cannot make root's nvtaskset fault); writing is for the
 * segment's user and root, under the writer's lock in the run directory's
 * lock file (nvtaskset.h), with a fault turned into an error.
 *
 * Over 500 lines on purpose: opening another process's segment by name, by
 * header and after an exec shares its trust and retries.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "core/gpusel.h"
#include "segopen.h"
#include "core/segment.h"
#include "os/sysutil.h"

#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How telling an error is when several run directories were tried. */
static int rank(int rc)
{
	switch (rc) {
	case NVT_SEG_OK: return 5;
	case NVT_SEG_EVERSION:
	case NVT_SEG_ECORRUPT: return 4;
	/* A directory or file that could not be tried (EMFILE, say) may hold
	 * it: never "no task" then. */
	case NVT_SEG_ESYS:
	case NVT_SEG_ELEASED: return 3;
	case NVT_SEG_EPERM: return 2;
	case NVT_SEG_EMAKING: return 1;
	default: return 0;
	}
}

int nvt_seg_errno_kept(int kept, int e)
{
	return !kept || kept == ETIMEDOUT ? e : kept;
}

static void keep_sys_errno(struct nvt_seg_handle *h, int e)
{
	h->sys_errno = nvt_seg_errno_kept(h->sys_errno, e);
}

/* The most files find_by_header takes for one process: a user who fills her
 * run directory with copies of one header hides her own task so, no other's
 * (a run directory holds its own user's segments only). */
#define FIND_MAX 64

/* What alike_one counts: processes before p (by PID) that a header cannot tell from p, and
 * that run as uid (whose run directory holds the files). */
struct alike {
	const struct nvt_proc *p;
	uid_t uid;
	int before;
	int err; /* why a process could not be read (EMFILE): no answer */
};

static int alike_one(pid_t pid, void *arg)
{
	struct alike *a = arg;
	struct nvt_proc q;
	uint64_t start;

	if (pid >= a->p->pid)
		return 0;
	/* The start time first (one read): most processes differ there. */
	if (nvt_proc_start_time(pid, &start)) {
		if (errno != ENOENT && errno != ESRCH && !a->err)
			a->err = errno;
		return 0;
	}
	if (start != a->p->start_time)
		return 0;
	if (nvt_proc_info(pid, &q)) {
		if (errno != ENOENT && errno != ESRCH && !a->err)
			a->err = errno;
		return 0;
	}
	a->before += q.nested && !q.pidns && q.ns_pid == a->p->ns_pid && q.start_time == a->p->start_time &&
		     (q.uid[0] == a->uid || q.uid[1] == a->uid || q.uid[2] == a->uid || q.uid[3] == a->uid);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * When p's namespace cannot be read (another user's task in a container),
 * finds its segment in dirfd (uid's run directory) by the PID and start time
 * its header records. Processes of other namespaces with the same PID there
 * and the same start time (containers started in one clock tick) cannot be
 * told apart so: the k-th of them by PID that runs as uid takes the k-th such
 * file by name, so that each file is one task's (a listing gives each file
 * to one of them too: nvt_seg_listed_name, which nvt_seg_open asks first).
 * Returns 0, -1 (none), or -2 with errno set (the directory, a file or a
 * process could not be read).
 */
static int find_by_header(const char *base, int dirfd, uid_t uid, const struct nvt_proc *p, char *name,
			  size_t len)
{
	char found[FIND_MAX][64];
	struct alike a = {p, uid, 0, 0};
	struct nvt_seg_trust t;
	struct dirent *ent;
	DIR *dir = nvt_opendir_fd(dirfd);
	int n = 0, failed = 0;

	if (!dir)
		return -2;
	memset(&t, 0, sizeof(t));
	t.owner = uid;
	t.oflags = O_RDONLY;
	while (!failed && n < FIND_MAX && (ent = readdir(dir))) {
		uint64_t pidns;
		pid_t ns_pid;
		int rc;

		if (nvt_seg_name_parse(ent->d_name, &pidns, &ns_pid) || ns_pid != p->ns_pid)
			continue;
		t.who = nvt_seg_who_of(base, p, pidns);
		rc = nvt_seg_trust(dirfd, ent->d_name, &t);
		if (rc == NVT_TRUST_OK) {
			close(t.fd);
			snprintf(found[n++], sizeof(found[0]), "%.63s", ent->d_name);
		} else if (rc == NVT_TRUST_ESYS) {
			failed = 1; /* (a lease, or one being made: not this one to us) */
		}
	}
	closedir(dir);
	if (failed)
		return -2;
	if (n > 1) {
		qsort(found, (size_t)n, sizeof(found[0]), by_name);
		if (nvt_proc_each(alike_one, &a) < 0 || a.err) {
			errno = a.err ? a.err : errno;
			return -2;
		}
	}
	if (!n || a.before >= n)
		return -1;
	snprintf(name, len, "%s", found[a.before]);
	return 0;
}

/* What the last listing gave by header (nvt_seg_listed_keep). */
static struct nvt_seg_listed *last_named;
static size_t n_last_named;

void nvt_seg_listed_keep(struct nvt_seg_listed *v, size_t n)
{
	free(last_named);
	last_named = v;
	n_last_named = n;
}

int nvt_seg_listed_name(pid_t pid, uid_t uid, char *name, size_t len)
{
	for (size_t i = 0; i < n_last_named; i++)
		if (last_named[i].pid == pid && last_named[i].uid == uid) {
			snprintf(name, len, "%s", last_named[i].name);
			return 0;
		}
	return -1;
}

/* What a trust verdict means to the CLI (enum nvt_seg_err). */
static int seg_err_of(int trust_rc)
{
	switch (trust_rc) {
	case NVT_TRUST_OK: return NVT_SEG_OK;
	case NVT_TRUST_DENIED: return NVT_SEG_EPERM;
	case NVT_TRUST_LEASED: return NVT_SEG_ELEASED;
	case NVT_TRUST_ESYS: return NVT_SEG_ESYS;
	case NVT_TRUST_MAKING: return NVT_SEG_EMAKING;
	case NVT_TRUST_VERSION: return NVT_SEG_EVERSION;
	case NVT_TRUST_CORRUPT: return NVT_SEG_ECORRUPT;
	/* Left by an earlier process with this PID, or one that the process
	 * does not use (forged by the user it became), or no segment at all. */
	default: return NVT_SEG_ENOTASK;
	}
}

/* Tries uid's run directory for p's segment. Returns enum nvt_seg_err
 * (NVT_SEG_EMAKING: a file there that its maker has not filled yet). */
static int open_in(const char *base, uid_t uid, const struct nvt_proc *p, int writable,
		   struct nvt_seg_handle *h)
{
	int may_write = geteuid() == 0 || geteuid() == uid;
	struct nvt_seg_trust t;
	char name[64];
	int dirfd, rc;

	dirfd = nvt_userdir_open(base, uid);
	if (dirfd < 0)
		return errno == EACCES ? NVT_SEG_EPERM : errno == ENOENT ? NVT_SEG_ENOTASK : NVT_SEG_ESYS;
	memset(&t, 0, sizeof(t));
	t.owner = uid;
	t.oflags = writable && may_write ? O_RDWR : O_RDONLY;
	t.who = nvt_seg_who_of(base, p, 0);
	/* Where its namespace cannot be read: the file the last listing gave it, if that is
	 * still its; else a search by header. */
	if (p->pidns)
		rc = nvt_seg_name(name, sizeof(name), p->pidns, p->ns_pid);
	else if (nvt_seg_listed_name(p->pid, uid, name, sizeof(name)) == 0 &&
		 nvt_seg_trust(dirfd, name, &t) == NVT_TRUST_OK)
		rc = 1; /* trusted already */
	else
		rc = find_by_header(base, dirfd, uid, p, name, sizeof(name));
	if (rc < 0) {
		close(dirfd);
		return rc == -2 ? NVT_SEG_ESYS : NVT_SEG_ENOTASK;
	}
	rc = rc == 1 ? NVT_SEG_OK : seg_err_of(nvt_seg_trust(dirfd, name, &t));
	if (rc == NVT_SEG_EVERSION)
		h->found_version = t.head.version;
	if (rc == NVT_SEG_OK && writable && !may_write) {
		close(t.fd);
		rc = NVT_SEG_EPERM;
	}
	if (rc) {
		int err = errno;
		close(dirfd);
		errno = err;
		return rc;
	}
	if (writable) {
		h->lock_fd = nvt_lock_open(dirfd, uid);
		h->lock_errno = h->lock_fd < 0 ? errno : 0;
	}
	close(dirfd);
	h->fd = t.fd;
	h->owner = uid;
	h->writable = writable;
	h->head = t.head;
	h->dev = t.st.st_dev;
	h->ino = t.st.st_ino;
	return NVT_SEG_OK;
}

/*
 * For a reader, the segment of a live process that /proc hides (mounted
 * hidepid=2: another user's): its owner and start time cannot be read, so
 * each run directory is tried for the file of its PID in our namespace, and
 * a valid segment there that names the PID is taken. One left by an earlier
 * process of that PID counts too: its partition is held a little longer,
 * never given away while its task may run. Returns enum nvt_seg_err.
 */
static int open_hidden(const char *base, pid_t pid, struct nvt_seg_handle *h)
{
	struct nvt_proc p;
	struct dirent *ent;
	int best = NVT_SEG_ENOTASK;
	DIR *dir;

	memset(&p, 0, sizeof(p));
	p.pid = p.ns_pid = pid;
	p.pidns = nvt_own_pidns();
	p.hidden = 1;
	if (!p.pidns || !(dir = opendir(base)))
		return NVT_SEG_ESYS;
	while ((ent = readdir(dir))) {
		uid_t uid;
		int rc;

		if (nvt_userdir_name_parse(ent->d_name, &uid))
			continue;
		rc = open_in(base, uid, &p, 0, h);
		if (rc == NVT_SEG_ESYS)
			keep_sys_errno(h, errno);
		if (rc == NVT_SEG_OK) {
			closedir(dir);
			h->pid = pid;
			h->task_uid = uid;
			return rc;
		}
		if (rank(rc) > rank(best))
			best = rc;
	}
	closedir(dir);
	if (best == NVT_SEG_ESYS)
		errno = h->sys_errno;
	return best;
}

int nvt_seg_handle_dir(const char *base, const struct nvt_seg_handle *h)
{
	return nvt_seg_container_userdir_open(base, h->container, h->owner);
}

/* The users whose run directories may hold p's segment, in the order looked: its effective
 * uid now, then its real, saved and filesystem uids (the users it may have been when it made
 * the segment), then root (a program that dropped root after starting); each once. Returns how
 * many (1 to 5). */
static int seg_users(const struct nvt_proc *p, uid_t out[5])
{
	const uid_t all[5] = {p->uid[1], p->uid[0], p->uid[2], p->uid[3], 0};
	int n = 0;

	for (int i = 0; i < 5; i++) {
		int seen = 0;
		for (int j = 0; j < n; j++)
			seen |= out[j] == all[i];
		if (!seen)
			out[n++] = all[i];
	}
	return n;
}

/*
 * Looks for p's segment in the run directories (of the n users in order: seg_users's)
 * of each container of base recorded with p's PID namespace (any, where the
 * caller may not read p's: the file named for the container's). Returns enum
 * nvt_seg_err as open_in, the most telling (rank) into *best.
 */
static int open_in_containers(const char *base, const struct nvt_proc *p, const uid_t *order, int n,
			      int writable, struct nvt_seg_handle *h, int *best, uint32_t *version)
{
	char dir[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32], bad_name[2];
	struct nvt_seg_container *v;
	int count = nvt_seg_container_list(base, &v, &(int){0}, bad_name, sizeof(bad_name)), rc;

	if (count < 0) {
		keep_sys_errno(h, errno);
		if (rank(NVT_SEG_ESYS) > rank(*best))
			*best = NVT_SEG_ESYS;
		return *best;
	}
	for (int c = 0; c < count; c++) {
		struct nvt_proc q = *p;

		if ((p->pidns && p->pidns != v[c].pidns) || nvt_seg_container_base(dir, sizeof(dir), base, v[c].id))
			continue;
		q.pidns = v[c].pidns;
		for (int i = 0; i < n; i++) {
			rc = open_in(dir, order[i], &q, writable, h);
			if (rc == NVT_SEG_ESYS)
				keep_sys_errno(h, errno);
			if (rc == NVT_SEG_OK) {
				snprintf(h->container, sizeof(h->container), "%s", v[c].id);
				free(v);
				return rc;
			}
			if (rank(rc) > rank(*best)) {
				*best = rc;
				*version = h->found_version;
			}
		}
	}
	free(v);
	return *best;
}

int nvt_seg_open(const char *base, pid_t pid, int writable, struct nvt_seg_handle *h)
{
	struct timespec pause = {0, 1000000};
	struct nvt_proc p;
	uid_t order[5] = {0};
	int n_order;
	uint32_t version = 0;
	int best = NVT_SEG_ENOTASK;

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	h->lock_fd = -1;
	h->pid = pid;
	if (pid <= 0)
		return NVT_SEG_ENOPROC;
	if (nvt_proc_info(pid, &p)) {
		if (errno == ENOENT && nvt_proc_hidden(pid))
			return writable ? NVT_SEG_EPERM : open_hidden(base, pid, h);
		return errno == ENOENT || errno == ESRCH ? NVT_SEG_ENOPROC : NVT_SEG_ESYS;
	}
	/* To write: while a segment is being made in the directory of the
	 * task's user (its shim, after an exec to that user, copying the segment
	 * from before it), wait a little for it: a change written into the old
	 * one now may or may not be copied. Then look as usual (a program that
	 * called setuid() itself keeps root's segment). */
	for (int waited = 0; writable && waited < NVT_SEG_MAKING_WAIT_MS; waited++) {
		int rc = open_in(base, p.uid[1], &p, writable, h);
		if (rc == NVT_SEG_OK) {
			h->pid = pid;
			h->task_uid = p.uid[1];
			return rc;
		}
		if (rc != NVT_SEG_EMAKING)
			break;
		nanosleep(&pause, NULL);
		if (nvt_proc_info(pid, &p))
			return errno == ENOENT || errno == ESRCH ? NVT_SEG_ENOPROC : NVT_SEG_ESYS;
	}
	n_order = seg_users(&p, order);
	for (int i = 0; i < n_order; i++) {
		int rc = open_in(base, order[i], &p, writable, h);
		if (rc == NVT_SEG_ESYS)
			keep_sys_errno(h, errno);
		if (rc == NVT_SEG_OK) {
			h->pid = pid;
			h->task_uid = p.uid[1];
			return rc;
		}
		if (rank(rc) > rank(best)) {
			best = rc;
			version = h->found_version;
		}
	}
	/* A container's task (a process of a namespace below ours). */
	if (p.nested && open_in_containers(base, &p, order, n_order, writable, h, &best, &version) == NVT_SEG_OK) {
		h->pid = pid;
		h->task_uid = p.uid[1];
		return NVT_SEG_OK;
	}
	h->task_uid = p.uid[1];
	h->found_version = version;
	if (best == NVT_SEG_ESYS)
		errno = h->sys_errno;
	return best;
}

int nvt_seg_superseded(const char *base, const struct nvt_seg_handle *h)
{
	struct nvt_seg_trust t;
	struct nvt_proc p;
	char name[64], dir[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32];
	int dirfd, found;

	if (nvt_proc_info(h->pid, &p) || p.uid[1] == h->owner)
		return 0;
	/* (a container's task: the run directories of its container) */
	if (h->container[0]) {
		if (nvt_seg_container_base(dir, sizeof(dir), base, h->container))
			return 0;
		base = dir;
	}
	dirfd = nvt_userdir_open(base, p.uid[1]);
	if (dirfd < 0)
		return 0;
	if (p.pidns ? nvt_seg_name(name, sizeof(name), p.pidns, p.ns_pid)
		    : find_by_header(base, dirfd, p.uid[1], &p, name, sizeof(name))) {
		close(dirfd);
		return 0;
	}
	/* The task's user's file, with the header of this very process (not a
	 * leftover of an earlier process of this PID). One without a header yet
	 * has copied nothing so far: it will copy what we wrote. */
	memset(&t, 0, sizeof(t));
	t.owner = p.uid[1];
	t.oflags = O_RDONLY;
	t.who = nvt_seg_who_of(base, &p, 0);
	found = nvt_seg_trust(dirfd, name, &t) == NVT_TRUST_OK;
	close(dirfd);
	if (!found)
		return 0;
	close(t.fd);
	return t.st.st_dev != h->dev || t.st.st_ino != h->ino;
}

int nvt_seg_read(const struct nvt_seg_handle *h, int gpu, struct nvt_slot_view *view,
		 struct nvt_slot_status *status)
{
	return nvt_seg_pread_slot(h->fd, gpu, view, status);
}

int nvt_seg_discard_own(const char *base)
{
	char name[64];
	struct stat st;
	uint64_t pidns = nvt_own_pidns();
	int dirfd, rc = 0;

	/* Named as the shim names it (nvt_seg_create): our PID namespace and PID. */
	if (!pidns || nvt_seg_name(name, sizeof(name), pidns, getpid()))
		return 0; /* no shim could have made one either */
	dirfd = nvt_userdir_open(base, geteuid());
	if (dirfd < 0)
		return errno == ENOENT ? 0 : -1;
	/* The directory is ours and nobody else writes in it: what we stat is
	 * what we unlink. Only a regular file of ours; never follow a link. */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && unlinkat(dirfd, name, 0) &&
		    errno != ENOENT)
			rc = -1;
	} else if (errno != ENOENT) {
		rc = -1;
	}
	close(dirfd);
	return rc;
}

/* What named_in walks: the process, and what to call for each file that names it. */
struct named_walk {
	const char *base;      /* the directory of run directories being read */
	const char *container; /* its container's id, or "" */
	const struct nvt_proc *p;
	int (*each)(const struct nvt_seg_handle *h, void *arg);
	void *arg;
};

/* Calls w->each for the file name of uid's run directory dirfd if its header names w->p (the
 * header decides). Returns each's, or 0, or -1 with errno set where the file could not be tried
 * (EMFILE, say): it may hold the task's partition, as in nvt_seg_open. */
static int named_one(const struct named_walk *w, int dirfd, uid_t uid, const char *name)
{
	/* ~10 kB each: static, as the other opens' (the command is single-threaded here) */
	static struct nvt_seg_trust t;
	static struct nvt_seg_handle h;
	int rc;

	memset(&t, 0, sizeof(t));
	t.owner = uid;
	t.oflags = O_RDONLY;
	t.flags = NVT_TRUST_HEADER_DECIDES;
	t.who = nvt_seg_who_of(w->base, w->p, 0);
	rc = nvt_seg_trust(dirfd, name, &t);
	if (rc == NVT_TRUST_ESYS)
		return -1;
	if (rc != NVT_TRUST_OK)
		return 0;
	memset(&h, 0, sizeof(h));
	h.fd = t.fd;
	h.lock_fd = -1;
	h.pid = w->p->pid;
	h.owner = uid;
	h.task_uid = w->p->uid[1];
	h.head = t.head;
	h.dev = t.st.st_dev;
	h.ino = t.st.st_ino;
	snprintf(h.container, sizeof(h.container), "%s", w->container);
	rc = w->each(&h, w->arg);
	nvt_seg_close(&h);
	return rc;
}

/* named_one for the files of the run directories under w->base of w->p's uids and root's: the
 * file named for its PID namespace, or where that is not ours to read, each file the last
 * listing gave it by header (nvt_seg_listed_keep). Returns each's first non-zero, or 0, or -1
 * with errno set where a run directory could not be tried (not one that is not there or not
 * ours to read: as nvt_seg_open). */
static int named_in(const struct named_walk *w)
{
	const struct nvt_proc *p = w->p;
	uid_t order[5] = {0};
	char name[64];
	int rc = 0, n = seg_users(p, order);

	for (int i = 0; i < n && !rc; i++) {
		int dirfd = nvt_userdir_open(w->base, order[i]);
		if (dirfd < 0) {
			if (errno == ENOENT || errno == EACCES)
				continue;
			return -1;
		}
		if (p->pidns && nvt_seg_name(name, sizeof(name), p->pidns, p->ns_pid) == 0)
			rc = named_one(w, dirfd, order[i], name);
		for (size_t k = 0; !p->pidns && !rc && k < n_last_named; k++)
			if (last_named[k].pid == p->pid && last_named[k].uid == order[i])
				rc = named_one(w, dirfd, order[i], last_named[k].name);
		close(dirfd);
	}
	return rc;
}

int nvt_seg_each_named(const char *base, pid_t pid, int (*each)(const struct nvt_seg_handle *h, void *arg),
		       void *arg)
{
	char dir[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32], bad_name[2];
	struct named_walk w = {base, "", NULL, each, arg};
	struct nvt_seg_container *v;
	struct nvt_proc p;
	int count, rc;

	if (nvt_proc_info(pid, &p))
		return errno == ENOENT || errno == ESRCH ? 0 : -1; /* gone: it holds nothing */
	w.p = &p;
	rc = named_in(&w);
	if (rc || !p.nested)
		return rc;
	/* A container's task: the run directories of each container of its PID namespace (of
	 * any, where that is not ours to read), as nvt_seg_open looks. */
	count = nvt_seg_container_list(base, &v, &(int){0}, bad_name, sizeof(bad_name));
	if (count < 0)
		return -1;
	for (int c = 0; c < count && !rc; c++) {
		struct nvt_proc q = p;
		if ((p.pidns && p.pidns != v[c].pidns) || nvt_seg_container_base(dir, sizeof(dir), base, v[c].id))
			continue;
		q.pidns = v[c].pidns;
		w.base = dir;
		w.container = v[c].id;
		w.p = &q;
		rc = named_in(&w);
	}
	free(v);
	return rc;
}

void nvt_seg_close(struct nvt_seg_handle *h)
{
	if (h->seg)
		munmap(h->seg, sizeof(struct nvt_segment));
	if (h->locked)
		nvt_lock_byte(h->lock_fd, h->head.pidns, h->head.pid, F_UNLCK);
	if (h->lock_fd >= 0)
		close(h->lock_fd);
	if (h->fd >= 0)
		close(h->fd);
	h->seg = NULL;
	h->fd = -1;
	h->lock_fd = -1;
	h->locked = 0;
}

int nvt_seg_slot_gpu(const struct nvt_seg_handle *h, int gpu, uint8_t uuid[16])
{
	struct nvt_gpu_slot slot;

	/* A slot's GPU is written once (nvt_slot_uuid): any moment's copy names it. */
	if (nvt_seg_pread_slot_raw(h->fd, gpu, &slot))
		return -1;
	memcpy(uuid, slot.uuid, 16);
	return 0;
}

int nvt_seg_read_used(const struct nvt_seg_handle *h, int gpu, struct nvt_slot_view *view,
		      struct nvt_slot_status *status)
{
	uint8_t uuid[16];

	if (nvt_seg_slot_gpu(h, gpu, uuid) || nvt_uuid_is_zero(uuid))
		return -1;
	return nvt_seg_read(h, gpu, view, status) || nvt_uuid_is_zero(view->uuid) ? -1 : 0;
}

int nvt_seg_find_slot(const struct nvt_seg_handle *h, const uint8_t uuid[16])
{
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t each[16];
		if (nvt_seg_slot_gpu(h, g, each) == 0 && !nvt_uuid_is_zero(each) &&
		    !memcmp(each, uuid, 16))
			return g;
	}
	return -1;
}

int nvt_seg_free_slot_of(const struct nvt_seg_handle *h)
{
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t each[16];
		if (nvt_seg_slot_gpu(h, g, each) == 0 && nvt_uuid_is_zero(each))
			return g;
	}
	return -1;
}
