/*
 * segfor.c - the control segment of another process, made for it before its
 * program runs: a CDI hook (nvtaskset --cdi-hook, docs/containers.md) makes
 * the segment of a container's first process while the runtime holds it
 * before its exec, and the program's shim adopts it as its own (an exec'd
 * program adopts its PID's segment: nvtaskset.h). Made with the public
 * pieces of segfile.c, as nvt_seg_create makes one: the writer's lock held,
 * mode NVT_SEG_NEW_MODE until whole. See segfile.h. Side effects: files,
 * /proc. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segfor.h"
#include "core/segment.h"
#include "core/text.h"
#include "os/sysutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Attempts root makes at another user's run directory when someone else made that name first,
 * or it vanished between two looks (a user making and removing it in a loop). */
#define RECLAIM_TRIES 16

/* Sets the entry leaf of basefd aside (nvt_rename_aside) unless it is uid's directory (a bad
 * mode, say: uid's to mend). Returns 0 to try again (set aside, or gone since), -1 to stop. */
static int set_aside(int basefd, const char *leaf, uid_t uid)
{
	struct stat st;

	if (fstatat(basefd, leaf, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -1;
	if (st.st_uid == uid && S_ISDIR(st.st_mode))
		return -1;
	if (nvt_rename_aside(basefd, leaf, &st, NULL, 0))
		return errno == ENOENT ? 0 : -1;
	return 0;
}

/* Opens uid's run directory under base, making it uid's (mode
 * NVT_USERDIR_MODE) where it is missing. Another user's entry in its place (a
 * container's run directory is mode 1777 on the host: any user may make
 * nvtaskset-UID there while the hook works, and keep the container from
 * starting) is renamed aside, as root's own run directory's squatter is
 * (nvt_userdir_own). Returns its fd, or -1 with why. */
static int userdir_for(const char *base, uid_t uid, gid_t gid, char *dir, size_t dir_len, char *why,
		       size_t len)
{
	const char *leaf;
	int basefd, dirfd = -1, made;

	if (uid == geteuid()) /* the caller's own (root's recovers from a squatter) */
		return nvt_userdir_own(base, dir, dir_len, why, len);
	/* Only root may make another user's (anyone else would make it her own). */
	if (geteuid() != 0)
		return nvt_why(why, len, "only root makes the segment of another user's process");
	if (nvt_userdir_path(dir, dir_len, base, uid))
		return nvt_why(why, len, "path too long");
	leaf = strrchr(dir, '/') + 1;
	basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (basefd < 0)
		return nvt_why(why, len, "%s: %s", base, strerror(errno));
	for (int attempt = 0; attempt < RECLAIM_TRIES; attempt++) {
		made = mkdirat(basefd, leaf, NVT_USERDIR_MODE) == 0;
		if (!made && errno != EEXIST) {
			nvt_why(why, len, "cannot make %s: %s", dir, strerror(errno));
			break;
		}
		dirfd = openat(basefd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dirfd < 0 && errno == ENOENT) {
			nvt_why(why, len, "%s: %s", dir, strerror(errno));
			continue; /* removed since: make it again */
		} else if (dirfd < 0) {
			nvt_why(why, len, "%s: %s", dir,
				errno == ENOTDIR || errno == ELOOP ? "it is not a directory" : strerror(errno));
		} else if (made && (fchown(dirfd, uid, gid) || fchmod(dirfd, NVT_USERDIR_MODE))) {
			/* Made here: the user's, as the user's own shim would have made it. */
			nvt_why(why, len, "cannot give %s to uid %lu: %s", dir, (unsigned long)uid,
				strerror(errno));
			close(dirfd);
			dirfd = -1;
			break;
		} else if (nvt_userdir_check(dirfd, uid, why, len) == 0) {
			break;
		} else {
			char inner[256];
			snprintf(inner, sizeof(inner), "%s", why);
			nvt_why(why, len, "%s: %s", dir, inner);
			close(dirfd);
			dirfd = -1;
		}
		if (set_aside(basefd, leaf, uid))
			break;
	}
	close(basefd);
	return dirfd;
}

/* 1 if the file name in dirfd is already uid's segment of p (a second call
 * for the same process), by the one rule (nvt_seg_trust). The header decides:
 * p has not started its program yet, so it maps no segment to tell by. */
static int names_already(const char *base, int dirfd, const char *name, uid_t uid,
			 const struct nvt_proc *p)
{
	struct nvt_seg_trust t;

	memset(&t, 0, sizeof(t));
	t.owner = uid;
	t.flags = NVT_TRUST_HEADER_DECIDES;
	t.oflags = O_RDONLY;
	t.who = nvt_seg_who_of(base, p, p->pidns);
	if (nvt_seg_trust(dirfd, name, &t) != NVT_TRUST_OK)
		return 0;
	close(t.fd);
	return 1;
}

/* Takes the writer's lock of segment pidns.pid in dirfd's lock file (waiting
 * at most NVT_SEG_CREATE_WAIT_MS, then going on without it, as
 * nvt_seg_create does). Returns the lock file's fd (locked) or -1. */
static int lock_for(int dirfd, uid_t uid, uint64_t pidns, pid_t pid)
{
	int fd = nvt_lock_open(dirfd, uid);

	if (fd >= 0 && nvt_lock_byte_wait(fd, pidns, pid) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

int nvt_seg_make_for(const char *base, pid_t pid, uid_t uid, gid_t gid,
		     const struct nvt_slot_view *views, int n, char *why, size_t len)
{
	static struct nvt_segment seg;
	char dir[256], name[64];
	struct nvt_proc p;
	int dirfd, fd = -1, lock_fd, rc = -1;

	if (n < 0 || n > NVT_MAX_GPUS)
		return nvt_why(why, len, "%d GPUs: a control segment holds at most %d", n, NVT_MAX_GPUS);
	if (nvt_proc_info(pid, &p) || !p.pidns || !p.ns_pid)
		return nvt_why(why, len, "cannot read process %ld in /proc: %s", (long)pid,
			       strerror(errno ? errno : ENOENT));
	dirfd = userdir_for(base, uid, gid, dir, sizeof(dir), why, len);
	if (dirfd < 0)
		return -1;
	nvt_seg_name(name, sizeof(name), p.pidns, p.ns_pid);
	lock_fd = lock_for(dirfd, uid, p.pidns, p.ns_pid);
	for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
		fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			    NVT_SEG_NEW_MODE);
		if (fd >= 0 || errno != EEXIST)
			break;
		if (names_already(base, dirfd, name, uid, &p)) {
			rc = NVT_SEG_MADE_ALREADY;
			goto out;
		}
		/* A process gone left it (its PID namespace's inode is used again). */
		if (unlinkat(dirfd, name, 0) && errno != ENOENT)
			break;
	}
	if (fd < 0) {
		nvt_why(why, len, "cannot create %s/%s: %s", dir, name, strerror(errno));
		goto out;
	}
	nvt_segment_init(&seg, (int32_t)p.ns_pid, (uint32_t)uid, p.start_time);
	seg.pidns = p.pidns;
	for (int i = 0; i < n; i++)
		nvt_slot_write(&seg.gpu[i], &views[i]);
	if (fchown(fd, uid, gid) || fchmod(fd, NVT_SEG_NEW_MODE) ||
	    nvt_pwrite_all(fd, &seg, sizeof(seg), 0) || fchmod(fd, NVT_SEG_MODE)) {
		nvt_why(why, len, "cannot write %s/%s: %s", dir, name, strerror(errno));
		unlinkat(dirfd, name, 0);
		goto out;
	}
	rc = NVT_SEG_MADE;
out:
	if (fd >= 0)
		close(fd);
	if (lock_fd >= 0) {
		nvt_lock_byte(lock_fd, p.pidns, p.ns_pid, F_UNLCK);
		close(lock_fd);
	}
	close(dirfd);
	return rc;
}
