/*
 * segtrust.c - the one rule for trusting a file of a run directory as
 * another process's control segment (nvt_seg_trust, segfile.h). Every place
 * that opens a segment it did not make goes through it: the CLI's open
 * (segopen.c: to read or write, by header, the superseded check), listing
 * and tidying (segscan.c), inheriting (inherit.c), adopting after an exec
 * (segown.c), and the shim's look at higher tasks (shim/shimyield.c). A
 * caller that needs less of the rule names the check it drops by a flag,
 * whose comment says why it may.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segtrust.h"
#include "core/segment.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct nvt_seg_who nvt_seg_who_of(const char *base, const struct nvt_proc *p, uint64_t pidns)
{
	struct nvt_seg_who who;

	memset(&who, 0, sizeof(who));
	who.proc_pid = p->pid;
	who.id.pidns = pidns ? pidns : p->pidns;
	who.id.pid = p->ns_pid;
	who.id.start_time = p->start_time;
	who.any_start = p->hidden;
	who.base = p->hidden ? NULL : base;
	memcpy(who.uid, p->uid, sizeof(who.uid));
	return who;
}

/* What a failed open says: nothing there, not ours to open, leased, or no answer. */
static int open_failed(int err)
{
	/* (ELOOP: a link; ENXIO: a socket or a FIFO nobody reads; EACCES: a
	 * segment still being made (mode 0600), or not ours to write;
	 * EWOULDBLOCK: its user holds a lease on it, which O_NONBLOCK does not
	 * wait to break. Anything else, EMFILE say, is no answer.) */
	errno = err;
	return err == ENOENT || err == ELOOP || err == ENXIO || err == ENOTDIR ? NVT_TRUST_NONE
	       : err == EACCES						   ? NVT_TRUST_DENIED
	       : err == EWOULDBLOCK					   ? NVT_TRUST_LEASED
										   : NVT_TRUST_ESYS;
}

/* What find_nested looks for: a process of another PID namespace. */
struct nested_want {
	uint64_t pidns;
	pid_t ns_pid;
	uint64_t start_time;
	struct nvt_proc *found;
	int err; /* why a process could not be read (EMFILE): no answer */
};

static int nested_one(pid_t pid, void *arg)
{
	struct nested_want *w = arg;
	struct nvt_proc p;

	if (nvt_proc_info(pid, &p)) {
		if (errno != ENOENT && errno != ESRCH && !w->err)
			w->err = errno;
		return 0;
	}
	/* Its namespace, where we may read it; else the PID and start time the
	 * header records (another user's task in a container). */
	if (p.ns_pid != w->ns_pid || (p.pidns ? p.pidns != w->pidns : p.start_time != w->start_time))
		return 0;
	*w->found = p;
	return 1;
}

/*
 * The live process that a segment named for (pidns, ns_pid) names, as the
 * caller's /proc shows it, into *p: directly in the caller's PID namespace
 * (own_pidns, where /proc numbers PIDs as it does), else among every process
 * /proc shows (one in a namespace below the caller's). Returns 0, or
 * NVT_TRUST_NO_PROC (none: gone, a zombie, or out of sight), or
 * NVT_TRUST_ESYS with errno set.
 */
static int find_process(uint64_t own_pidns, uint64_t pidns, pid_t ns_pid, uint64_t start_time,
			struct nvt_proc *p)
{
	struct nested_want w = {pidns, ns_pid, start_time, p, 0};
	int rc;

	if (own_pidns && pidns == own_pidns) {
		if (nvt_proc_info(ns_pid, p) == 0)
			return p->pidns && p->pidns != pidns ? NVT_TRUST_NO_PROC : 0;
		/* Gone or a zombie; or hidden (hidepid=2: its start time cannot
		 * be told, so it cannot be trusted as the header's process). */
		return errno == ENOENT || errno == ESRCH ? NVT_TRUST_NO_PROC : NVT_TRUST_ESYS;
	}
	rc = nvt_proc_each(nested_one, &w);
	if (rc == 1)
		return 0;
	if (rc < 0 || w.err) {
		errno = rc < 0 ? errno : w.err;
		return NVT_TRUST_ESYS;
	}
	return NVT_TRUST_NO_PROC;
}

/* The checks of the file itself, on t->fd: type, owner, mode, filled in, a
 * whole segment of this layout that its owner made. Returns 0 or enum
 * nvt_seg_trust_rc. */
static int check_file(struct nvt_seg_trust *t)
{
	/* Made by the directory's user (O_NOFOLLOW: not a symbolic link) and
	 * written by nobody else. Its link count does not matter: another user
	 * who may hard-link it (fs.protected_hardlinks=0) adds a name
	 * elsewhere, which must not hide the task; and a file of another
	 * user's linked here fails the owner check. */
	if (fstat(t->fd, &t->st))
		return open_failed(errno);
	if (!S_ISREG(t->st.st_mode) || t->st.st_uid != t->owner || (t->st.st_mode & 022))
		return NVT_TRUST_NONE;
	/* Empty and mode 0600 while its shim is still making it. */
	if (nvt_seg_being_made(t->fd, &t->st))
		return NVT_TRUST_MAKING;
	if (t->st.st_size == 0)
		return NVT_TRUST_NONE;
	switch (nvt_seg_pread_header(t->fd, &t->head)) {
	case NVT_SEG_VALID:
		break;
	case NVT_SEG_BAD_VERSION:
		return NVT_TRUST_VERSION;
	default:
		return NVT_TRUST_CORRUPT;
	}
	if ((size_t)t->st.st_size != sizeof(struct nvt_segment) || t->head.uid != t->owner)
		return NVT_TRUST_CORRUPT;
	return 0;
}

/* The checks of the process: the one the file names (NVT_TRUST_BY_NAME: found
 * in /proc) and, with NVT_TRUST_RUNS_AS_OWNER, its user. Returns 0 or enum
 * nvt_seg_trust_rc. */
static int check_process(struct nvt_seg_trust *t, const char *name)
{
	struct nvt_seg_who who = t->who;
	uint64_t pidns;
	pid_t ns_pid;
	int rc, its;

	if (t->flags & NVT_TRUST_BY_NAME) {
		if (nvt_seg_name_parse(name, &pidns, &ns_pid))
			return NVT_TRUST_NONE;
		rc = find_process(t->own_pidns, pidns, ns_pid, t->head.start_time, &t->proc);
		if (rc)
			return rc;
		who = nvt_seg_who_of(t->base, &t->proc, pidns);
	}
	if (t->flags & NVT_TRUST_HEADER_DECIDES)
		who.proc_pid = 0;
	its = nvt_seg_is_its(&t->head, name, &t->st, &who);
	if (its < 0)
		return NVT_TRUST_ESYS; /* (its maps not read in time: no answer) */
	if (!its)
		return (t->flags & NVT_TRUST_BY_NAME) ? NVT_TRUST_NO_PROC : NVT_TRUST_NOT_ITS;
	if ((t->flags & NVT_TRUST_RUNS_AS_OWNER) && (t->proc.hidden || t->proc.uid[1] != t->owner))
		return NVT_TRUST_NOT_OWNERS;
	return 0;
}

int nvt_seg_trust(int dirfd, const char *name, struct nvt_seg_trust *t)
{
	int rc, err;

	t->fd = -1;
	memset(&t->head, 0, sizeof(t->head));
	if (t->flags & NVT_TRUST_BY_NAME)
		memset(&t->proc, 0, sizeof(t->proc));
	/* O_NONBLOCK: a FIFO in its place must not hang us; its type is checked next. */
	t->fd = openat(dirfd, name, t->oflags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0)
		return open_failed(errno);
	rc = check_file(t);
	if (!rc && t->wanted && !t->wanted(t->fd, &t->head, t->arg))
		rc = NVT_TRUST_UNWANTED;
	if (!rc)
		rc = check_process(t, name);
	if (rc) {
		err = errno;
		close(t->fd);
		t->fd = -1;
		errno = err;
	}
	return rc;
}
