/*
 * segown.c - the calling process's own control segment: making it (holding
 * the writer's lock, mode 0600 until filled: "Published" in
 * docs/design.md) or adopting the one it had before an exec, opening it to
 * readers, removing it, and sweeping its user's leftovers. The shim makes
 * one for every task; the CLI makes the one its COMMAND adopts (reserve.c).
 * See segfile.h. Side effects: files, mmap, /proc. Returns codes; never
 * prints.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segown.h"
#include "core/segment.h"
#include "core/text.h"
#include "os/clock.h"
#include "os/sysutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Attempts root makes at its run directory when another user made it first. */
#define ROOT_RECLAIM_TRIES 4

/*
 * Root's run directory, found made by another user (a user who made
 * nvtaskset-0 first in the shared directory, or a file or link of that
 * name): root recovers by itself. It renames the squatter's entry aside
 * (nvt_rename_aside: no run directory's name, so nobody reads it as one; its
 * owner may remove it) and makes its own. Only root can
 * (the shared directory is sticky), and only root needs to: every user's
 * tasks and the Slurm plugin read root's segments. Returns 1 if it renamed
 * one, 0 if the entry is root's own (a bad mode is reported as before).
 */
static int reclaim_root_dir(int basefd, const char *leaf)
{
	struct stat st;

	if (geteuid() != 0 || fstatat(basefd, leaf, &st, AT_SYMLINK_NOFOLLOW) || st.st_uid == 0)
		return 0;
	return nvt_rename_aside(basefd, leaf, &st, NULL, 0) == 0;
}

int nvt_userdir_own(const char *base, char *dir, size_t dir_len, char *why, size_t len)
{
	uid_t uid = geteuid();
	const char *leaf;
	int basefd, dirfd = -1, made;

	if (nvt_userdir_path(dir, dir_len, base, uid)) {
		snprintf(why, len, "path too long");
		return -1;
	}
	leaf = strrchr(dir, '/') + 1;
	basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (basefd < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	for (int attempt = 0; attempt < ROOT_RECLAIM_TRIES; attempt++) {
		made = mkdirat(basefd, leaf, NVT_USERDIR_MODE) == 0;
		if (!made && errno != EEXIST) {
			snprintf(why, len, "%s", strerror(errno));
			break;
		}
		dirfd = openat(basefd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dirfd < 0) {
			snprintf(why, len, "%s", errno == ENOTDIR || errno == ELOOP ? "it is not a directory"
										: strerror(errno));
		} else {
			/* Partitions are public to read: undo a umask on the directory we made. */
			if (made)
				fchmod(dirfd, NVT_USERDIR_MODE);
			if (nvt_userdir_check(dirfd, uid, why, len) == 0)
				break;
			close(dirfd);
			dirfd = -1;
		}
		if (!reclaim_root_dir(basefd, leaf))
			break;
	}
	close(basefd);
	return dirfd;
}

/* Gives the new, empty file fd its segment's blocks before it is mapped: a
 * file sized by ftruncate alone has none, and a store through the mapping
 * into a page that a full filesystem (a tmpfs another user filled) cannot
 * give is a SIGBUS, not an error. posix_fallocate reserves them, or fails
 * with ENOSPC or EDQUOT; where it cannot be used (EOPNOTSUPP, EINVAL,
 * ENOSYS, EPERM), writing the zeros does. Returns 0, or -1 with errno set. */
static int allocate_blocks(int fd)
{
	static const char zeros[4096];
	size_t size = sizeof(struct nvt_segment), done = 0;
	int rc = posix_fallocate(fd, 0, (off_t)size);

	if (rc == 0)
		return 0;
	/* (ENOSYS, EPERM: no fallocate here, or a seccomp filter forbids it.) */
	if (rc != EOPNOTSUPP && rc != EINVAL && rc != ENOSYS && rc != EPERM) {
		errno = rc;
		return -1;
	}
	for (; done < size; done += sizeof(zeros))
		if (nvt_pwrite_all(fd, zeros, size - done < sizeof(zeros) ? size - done : sizeof(zeros),
				   (off_t)done))
			return -1;
	return 0;
}

/* Adopts the file name of dirfd if it is this very process's segment from
 * before an exec (its identity in *st); returns the mapping or NULL. */
static struct nvt_segment *adopt(int dirfd, const struct nvt_seg_own *own, uint64_t start, struct stat *st)
{
	/* ~10 kB, static: set-up (and a forked child's) is single-threaded. */
	static struct nvt_seg_trust t;
	void *p;

	/* No maps to read: this process just exec'd, so it maps no segment,
	 * and the header decides. */
	memset(&t, 0, sizeof(t));
	t.owner = geteuid();
	t.flags = NVT_TRUST_HEADER_DECIDES;
	t.oflags = O_RDWR;
	t.who.id = (struct nvt_proc_id){own->pidns, own->pid, start};
	if (nvt_seg_trust(dirfd, own->name, &t))
		return NULL;
	p = mmap(NULL, sizeof(struct nvt_segment), PROT_READ | PROT_WRITE, MAP_SHARED, t.fd, 0);
	close(t.fd);
	*st = t.st;
	return p == MAP_FAILED ? NULL : p;
}

/* Opens (making it if need be) the lock file of the caller's run directory
 * and takes the writer's lock of own's segment, waiting at most
 * NVT_SEG_CREATE_WAIT_MS. Returns the lock file's fd, or -1 with errno set
 * (the lock file cannot be used). *locked says whether the lock is held. */
static int take_own_lock(int dirfd, const struct nvt_seg_own *own, int *locked)
{
	int fd = nvt_lock_open(dirfd, geteuid());

	*locked = 0;
	if (fd < 0)
		return -1;
	/* Held already: by a writer of an earlier process of this PID (a CLI
	 * that opened its segment just before it ended), by one of another PID
	 * namespace whose byte is ours, or by an fd that a child inherited. It
	 * is our user's or root's: wait a little, then make the segment without
	 * it (a writer that then finds it may write beside us). */
	*locked = nvt_lock_byte_wait(fd, own->pidns, own->pid) == 0;
	return fd;
}

/*
 * Makes own's segment file (own->name) anew in dirfd, not open to readers
 * yet (NVT_SEG_NEW_MODE), its blocks allocated, and maps it into own (seg,
 * dev, ino). Returns its fd, or -1 with the reason in why (and no file of
 * its left behind).
 */
static int make_file(int dirfd, struct nvt_seg_own *own, char *why, size_t len)
{
	struct stat st;
	int fd = -1;
	void *p;

	for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
		fd = openat(dirfd, own->name,
			    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, NVT_SEG_NEW_MODE);
		if (fd >= 0 || errno != EEXIST)
			break;
		/* A dead process's leftover. Never truncate it: a process may
		 * still map it. Make it anew. */
		if (unlinkat(dirfd, own->name, 0) && errno != ENOENT)
			return nvt_why(why, len, "cannot replace %s: %s", own->name, strerror(errno));
	}
	if (fd < 0)
		return nvt_why(why, len, "%s", strerror(errno));
	/* Not open to readers until filled (nvt_seg_publish); the mode also
	 * undoes a umask that left us no access. */
	if (fchmod(fd, NVT_SEG_NEW_MODE) || allocate_blocks(fd) || fstat(fd, &st) ||
	    (p = mmap(NULL, sizeof(struct nvt_segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
		    MAP_FAILED) {
		nvt_why(why, len, "%s", strerror(errno));
		close(fd);
		unlinkat(dirfd, own->name, 0);
		return -1;
	}
	own->seg = p;
	own->dev = st.st_dev;
	own->ino = st.st_ino;
	return fd;
}

int nvt_seg_create(const char *base, struct nvt_seg_own *own, struct nvt_seg_new *fresh, char *why,
		   size_t len)
{
	struct nvt_stat self;
	uint64_t start;
	struct stat st;
	int dirfd, fd, locked;

	memset(own, 0, sizeof(*own));
	memset(fresh, 0, sizeof(*fresh));
	fresh->fd = fresh->lock_fd = -1;
	own->pid = getpid();
	own->pidns = nvt_own_pidns();
	/* Read once: the shim's search for an ancestor's partition uses it too. */
	if (!own->pidns || nvt_proc_stat(0, &self)) {
		snprintf(own->dir, sizeof(own->dir), "%s", base);
		snprintf(why, len, "cannot read /proc/self: %s", strerror(errno ? errno : ENOENT));
		return -1;
	}
	own->proc_pid = self.pid;
	own->proc_ppid = self.ppid;
	start = self.start_time;
	dirfd = nvt_userdir_own(base, own->dir, sizeof(own->dir), why, len);
	if (dirfd < 0)
		return -1;
	nvt_seg_name(own->name, sizeof(own->name), own->pidns, own->pid);
	/* This process before an exec: its segment, partitions and all. */
	own->seg = adopt(dirfd, own, start, &st);
	if (own->seg) {
		own->dev = st.st_dev;
		own->ino = st.st_ino;
		close(dirfd);
		return NVT_SEG_ADOPTED;
	}
	/* A new one, made holding the writer's lock: a writer that finds it
	 * waits until it is filled. */
	fresh->pidns = own->pidns;
	fresh->pid = own->pid;
	fresh->lock_fd = take_own_lock(dirfd, own, &locked);
	if (fresh->lock_fd < 0) {
		snprintf(why, len, "cannot use %s/%s: %s", own->dir, NVT_LOCK_NAME, strerror(errno));
		close(dirfd);
		return -1;
	}
	if (!locked) {
		close(fresh->lock_fd);
		fresh->lock_fd = -1;
	}
	fd = make_file(dirfd, own, why, len);
	close(dirfd);
	if (fd < 0) {
		nvt_seg_unlock(fresh);
		return -1;
	}
	nvt_segment_init(own->seg, (int32_t)own->pid, (uint32_t)geteuid(), start);
	own->seg->pidns = own->pidns;
	fresh->fd = fd;
	return NVT_SEG_CREATED;
}

void nvt_seg_publish(struct nvt_seg_new *fresh)
{
	if (fresh->fd < 0)
		return;
	fchmod(fresh->fd, NVT_SEG_MODE);
	close(fresh->fd);
	fresh->fd = -1;
}

void nvt_seg_unlock(struct nvt_seg_new *fresh)
{
	nvt_seg_publish(fresh);
	if (fresh->lock_fd < 0)
		return;
	/* Explicitly: a child forked meanwhile shares the open file, and with
	 * it the lock, until it closes it. */
	nvt_lock_byte(fresh->lock_fd, fresh->pidns, fresh->pid, F_UNLCK);
	close(fresh->lock_fd);
	fresh->lock_fd = -1;
}

int nvt_seg_own_add_gpus(const struct nvt_seg_own *own, const struct nvt_slot_view *views, int n)
{
	int dirfd = open(own->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int lock_fd, locked, added, saved;
	char why[128];

	if (dirfd < 0)
		return -1;
	/* Checked again: the lock file is the directory's. */
	if (nvt_userdir_check(dirfd, geteuid(), why, sizeof(why))) {
		close(dirfd);
		errno = EPERM;
		return -1;
	}
	lock_fd = take_own_lock(dirfd, own, &locked);
	saved = errno;
	close(dirfd);
	if (lock_fd < 0 || !locked) {
		if (lock_fd >= 0)
			close(lock_fd);
		errno = lock_fd < 0 ? saved : EBUSY;
		return -1;
	}
	added = nvt_segment_add_gpus(own->seg, views, n);
	nvt_lock_byte(lock_fd, own->pidns, own->pid, F_UNLCK);
	close(lock_fd);
	return added;
}

void nvt_seg_remove(const struct nvt_seg_own *own)
{
	int dirfd = open(own->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dirfd < 0)
		return;
	/* No writer's lock: the name is this living process's PID's, so no maker of another
	 * process puts a file there (a CDI hook's nvt_seg_make_for makes one before the
	 * program runs, and leaves one that names it). */
	nvt_unlink_same(dirfd, own->name, own->dev, own->ino, NULL);
	close(dirfd);
}

/* 1 if the segment file name in dirfd names a process that is gone or was replaced. */
static int is_stale(int dirfd, const char *name, pid_t pid)
{
	struct nvt_segment head;
	uint64_t start;
	int fd, stale;

	if (kill(pid, 0) && errno == ESRCH)
		return 1;
	if (nvt_proc_start_time(pid, &start))
		return errno == ESRCH || errno == ENOENT; /* a zombie, or gone meanwhile */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* A header that cannot be read may be one being made: leave it. */
	stale = nvt_seg_pread_header(fd, &head) == NVT_SEG_VALID && head.pid == pid &&
		head.start_time != start;
	close(fd);
	return stale;
}

/* Names read from a run directory per pass of the sweep, at most. */
#define SWEEP_SCAN_MAX 65536

/* 1 if name is a segment of another process of own's PID namespace; its PID in *pid. */
static int sweep_candidate(const struct nvt_seg_own *own, const char *name, pid_t *pid)
{
	uint64_t pidns;

	return nvt_seg_name_parse(name, &pidns, pid) == 0 && pidns == own->pidns && *pid != own->pid;
}

void nvt_seg_sweep(const struct nvt_seg_own *own, int max_judged)
{
	struct dirent *ent;
	uint64_t now_nsec;
	long n = 0, first, index = 0, judged = 0;
	DIR *dir;
	int dirfd;

	/* Only where /proc can tell whether a PID of our namespace is alive. */
	if (max_judged <= 0 || !nvt_procfs_is_own())
		return;
	dirfd = open(own->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return;
	dir = fdopendir(dirfd);
	if (!dir) {
		close(dirfd);
		return;
	}
	/* Reading names is cheap (one getdents per few hundred); judging one
	 * costs up to 11 system calls, removing one 9 more (segown.h): count
	 * them, then judge max_judged from a random place on, wrapping around.
	 * Every start thus costs about the same however many tasks the user
	 * runs, and leftovers go over a few. */
	for (long seen = 0; seen < SWEEP_SCAN_MAX && (ent = readdir(dir)); seen++) {
		pid_t pid;
		n += sweep_candidate(own, ent->d_name, &pid);
	}
	if (n == 0) {
		closedir(dir);
		return;
	}
	now_nsec = nvt_clock_ns() % 1000000000u; /* within its second: differs each time */
	first = (long)(((unsigned long)now_nsec ^ ((unsigned long)own->pid * 2654435761ul)) % (unsigned long)n);
	for (int pass = 0; pass < 2 && judged < max_judged && judged < n; pass++) {
		rewinddir(dir);
		index = 0;
		for (long seen = 0; seen < SWEEP_SCAN_MAX && judged < max_judged && (ent = readdir(dir));
		     seen++) {
			struct stat file;
			int held;
			pid_t pid;

			if (!sweep_candidate(own, ent->d_name, &pid))
				continue;
			/* The first pass judges from first on, the second up to it. */
			if (pass == 0 ? index++ < first : index++ >= first)
				continue;
			judged++;
			/* The file judged, not one a new process of a reused PID made
			 * meanwhile (it replaces a stale file with a new one): held from
			 * before the judgement (O_PATH, as segscan.c's own_leftover
			 * holds it, so its inode's number is no new file's), removed
			 * only if still there, under the writer's lock. */
			held = openat(dirfd, ent->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (held < 0)
				continue;
			if (fstat(held, &file) == 0 && is_stale(dirfd, ent->d_name, pid))
				nvt_seg_unlink_judged(dirfd, geteuid(), ent->d_name, file.st_dev, file.st_ino,
						      NULL);
			close(held);
		}
	}
	closedir(dir);
}
