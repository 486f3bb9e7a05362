/*
 * segfile.c - control segment files: names, run directories and their
 * writers' lock files, /proc facts, and reading segments by copies. See
 * nvtaskset.h for the layout and segfile.h for the rules; segown.c makes the
 * calling process's own segment.
 *
 * Every file is reached through a checked directory descriptor (openat with
 * O_NOFOLLOW), opened O_NONBLOCK and its type checked before it is read, so a
 * FIFO or a link where a segment should be never blocks or redirects us.
 *
 * Over 500 lines on purpose: the sequence-lock reader and its bounded yields sit beside the
 * names and checks every reader shares, which split would spread one rule over two files.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "core/gpusel.h"
#include "core/ptree.h"
#include "segfile.h"
#include "core/segment.h"
#include "core/tpcset.h"
#include "os/clock.h"
#include "os/proc.h"
#include "os/sysutil.h"
#include "core/text.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define HEADER_BYTES offsetof(struct nvt_segment, gpu)
/* Where slot gpu lies in the file: the segment's layout, known here alone. */
#define SLOT_AT(gpu) ((off_t)(HEADER_BYTES + (size_t)(gpu) * sizeof(struct nvt_gpu_slot)))

const char *nvt_rundir(void)
{
	const char *dir = secure_getenv(NVT_ENV_RUNDIR);
	struct stat st;

	if (dir && dir[0] == '/' && strlen(dir) < NVT_RUNDIR_MAX)
		return dir;
	/* One that containers can mount (nvtaskset --cdi makes it): only root can
	 * make it in /run, and every user may make a run directory in it, as in
	 * /dev/shm. */
	if (lstat(NVT_SHARED_RUNDIR, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
	    (st.st_mode & 07777) == NVT_SHARED_RUNDIR_MODE)
		return NVT_SHARED_RUNDIR;
	return NVT_DEFAULT_RUNDIR;
}

int nvt_userdir_path(char *buf, size_t len, const char *base, uid_t uid)
{
	int n = snprintf(buf, len, "%s/" NVT_USERDIR_PREFIX "%lu", base, (unsigned long)uid);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

int nvt_seg_name(char *buf, size_t len, uint64_t pidns, pid_t ns_pid)
{
	int n = snprintf(buf, len, NVT_SEG_PREFIX "%llu.%ld", (unsigned long long)pidns, (long)ns_pid);
	return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* nvt_decimal without a leading zero (names are written one way only). */
static const char *parse_decimal(const char *p, uint64_t max, uint64_t *out)
{
	return *p == '0' ? NULL : nvt_decimal(p, max, out);
}

int nvt_seg_name_parse(const char *name, uint64_t *pidns, pid_t *ns_pid)
{
	uint64_t ns, pid;
	const char *p;

	if (strncmp(name, NVT_SEG_PREFIX, strlen(NVT_SEG_PREFIX)))
		return -1;
	p = parse_decimal(name + strlen(NVT_SEG_PREFIX), UINT64_MAX, &ns);
	if (!p || *p != '.')
		return -1;
	p = parse_decimal(p + 1, 0x3fffffff, &pid);
	if (!p || *p)
		return -1;
	*pidns = ns;
	*ns_pid = (pid_t)pid;
	return 0;
}

int nvt_userdir_name_parse(const char *name, uid_t *uid)
{
	uint64_t v;
	const char *p;

	if (strncmp(name, NVT_USERDIR_PREFIX, strlen(NVT_USERDIR_PREFIX)))
		return -1;
	p = name + strlen(NVT_USERDIR_PREFIX);
	if (p[0] == '0' && p[1] == '\0') {
		*uid = 0;
		return 0;
	}
	p = parse_decimal(p, 0xfffffffeu, &v);
	if (!p || *p)
		return -1;
	*uid = (uid_t)v;
	return 0;
}

/* ---- Checks and reads ---------------------------------------------------------- */

int nvt_userdir_check(int dirfd, uid_t uid, char *why, size_t len)
{
	struct stat st;

	if (fstat(dirfd, &st)) {
		snprintf(why, len, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, len, "it is not a directory");
		return -1;
	}
	if (st.st_uid != uid) {
		snprintf(why, len, "it belongs to uid %lu, not to uid %lu", (unsigned long)st.st_uid,
			 (unsigned long)uid);
		return -1;
	}
	if (st.st_mode & 022) {
		snprintf(why, len, "others may write in it: mode %04o", (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

int nvt_seg_pread_header(int fd, struct nvt_segment *head)
{
	struct stat st;

	memset(head, 0, sizeof(*head));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return NVT_SEG_BAD_SIZE;
	if (pread(fd, head, HEADER_BYTES, 0) != (ssize_t)HEADER_BYTES)
		return NVT_SEG_BAD_SIZE;
	return nvt_segment_check(head, (size_t)st.st_size);
}

/* Copies the fields of a slot's copy into view and status. */
static void take_copy(const struct nvt_gpu_slot *copy, struct nvt_slot_view *view,
		      struct nvt_slot_status *status)
{
	view->seq = copy->seq;
	view->state = copy->state;
	view->flags = copy->flags;
	memcpy(view->uuid, copy->uuid, sizeof(view->uuid));
	view->tpcs = copy->tpcs;
	view->topo = copy->topo;
	view->prio = copy->prio;
	view->mem_limit = copy->mem_limit;
	if (status) {
		status->applied = copy->applied_seq;
		status->rejected = copy->rejected_seq;
		status->launches = nvt_slot_launches(copy);
		status->graph_stale = copy->graph_stale;
		status->mem_used = copy->mem_used;
		status->mem_refused = copy->mem_refused;
		status->act = copy->act;
		status->yield = copy->yield;
	}
}

int nvt_seg_pread_whole(int fd, struct nvt_segment *copy)
{
	return pread(fd, copy, sizeof(*copy), 0) == (ssize_t)sizeof(*copy) ? 0 : -1;
}

int nvt_seg_pread_slot_raw(int fd, int gpu, struct nvt_gpu_slot *slot)
{
	if (gpu < 0 || gpu >= NVT_MAX_GPUS)
		return -1;
	return pread(fd, slot, sizeof(*slot), SLOT_AT(gpu)) == (ssize_t)sizeof(*slot) ? 0 : -1;
}

/* The slots this thread read unsettled in a row (core/segment.h: past a few, it yields no more). */
static _Thread_local struct nvt_unsettled_streak unsettled_streak;

static void streak_expire(void)
{
	/* (The clock read only once the streak is full: most reads find no slot unsettled.) */
	if (!nvt_streak_yields(&unsettled_streak))
		nvt_streak_expire(&unsettled_streak, nvt_clock_ns());
}

int nvt_seg_pread_slot(int fd, int gpu, struct nvt_slot_view *view, struct nvt_slot_status *status)
{
	off_t at = SLOT_AT(gpu);
	struct nvt_gpu_slot copy;
	struct nvt_tpcset seen;
	uint64_t before, after;
	int set = 0;

	if (gpu < 0 || gpu >= NVT_MAX_GPUS)
		return NVT_SEG_SHORT;
	nvt_set_clear(&seen);
	streak_expire();
	/* The sequence lock by copies: seq, the slot, seq again. Each pread is
	 * a system call, so the three reads happen in this order. A writer
	 * writes a slot in well under a microsecond; one that was preempted
	 * inside it runs again after a yield or two. A sequence that stays odd
	 * (a writer that died inside, or a user who leaves her own segments
	 * so) costs each reader NVT_SEG_READ_TRIES tries, no more. */
	for (int tries = 0; tries < NVT_SEG_READ_TRIES; tries++) {
		if (tries >= 2 && nvt_streak_yields(&unsettled_streak))
			sched_yield();
		if (pread(fd, &before, 8, at) != 8 || pread(fd, &copy, sizeof(copy), at) != sizeof(copy) ||
		    pread(fd, &after, 8, at) != 8)
			return NVT_SEG_SHORT;
		if (!(before & 1) && copy.seq == before && after == before) {
			if (tries)
				nvt_streak_settled(&unsettled_streak);
			take_copy(&copy, view, status);
			return NVT_SEG_READ_OK;
		}
		if (copy.state == NVT_SLOT_SET) {
			nvt_set_or(&seen, &seen, &copy.tpcs);
			set = 1;
		}
	}
	/* Unsettled: the last copy, holding every TPC a copy held. */
	nvt_streak_unsettled(&unsettled_streak, nvt_clock_ns());
	take_copy(&copy, view, status);
	if (set) {
		view->state = NVT_SLOT_SET;
		view->tpcs = seen;
	}
	return NVT_SEG_UNSETTLED;
}

int nvt_seg_being_made(int fd, const struct stat *st)
{
	struct nvt_segment head;

	return (st->st_mode & 07777) == NVT_SEG_NEW_MODE &&
	       (st->st_size == 0 || nvt_seg_pread_header(fd, &head) != NVT_SEG_VALID);
}

/* ---- Is this file the segment a process uses? ---------------------------- */

/* What one line of /proc/PID/maps says about st: 1 it maps st's file (by
 * dev:inode, or a segment of st's name in st's owner's run directory: what
 * overlayfs shows may differ from stat), 0 it maps another segment file, -1
 * no segment file. */
static int maps_line(const char *line, const struct stat *st, const char *name)
{
	unsigned maj, min;
	unsigned long long inode;
	char dir[32];
	const char *path, *leaf;
	size_t n;
	int off = 0;
	uint64_t ns;
	pid_t pid;
	char base[64];

	if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %n", &maj, &min, &inode, &off) != 3 || !off ||
	    !inode)
		return -1;
	path = line + off;
	leaf = strrchr(path, '/');
	if (!leaf)
		return -1;
	n = strcspn(leaf + 1, " ");
	if (n >= sizeof(base))
		return -1;
	memcpy(base, leaf + 1, n);
	base[n] = '\0';
	if (nvt_seg_name_parse(base, &ns, &pid))
		return -1;
	if (makedev(maj, min) == st->st_dev && inode == (unsigned long long)st->st_ino)
		return 1;
	/* " (deleted)": a file that is not the one of that name now. */
	if (strcmp(base, name) || strstr(leaf, " (deleted)"))
		return 0;
	snprintf(dir, sizeof(dir), "/" NVT_USERDIR_PREFIX "%lu/", (unsigned long)st->st_uid);
	return leaf - path >= (ptrdiff_t)strlen(dir) - 1 &&
	       !strncmp(leaf - strlen(dir) + 1, dir, strlen(dir));
}

/* What maps_file looks for. */
struct maps_want {
	const struct stat *st;
	const char *name;
};

static int maps_want_line(const char *line, void *arg)
{
	const struct maps_want *w = arg;
	return maps_line(line, w->st, w->name);
}

/* How a process's maps are read: in this process unless its program chose a reader
 * (nvt_seg_maps_reader). */
static nvt_seg_maps_fn *maps_reader = nvt_proc_maps;

void nvt_seg_maps_reader(nvt_seg_maps_fn *reader)
{
	maps_reader = reader ? reader : nvt_proc_maps;
}

/* 1 if pid maps st's file, 0 if it maps other segment files but not it, -1
 * if its maps cannot be read (another user's, or gone) or show none,
 * NVT_PROC_MAPS_LATE if the reader gave up on the read. */
static int maps_file(pid_t pid, const struct stat *st, const char *name)
{
	struct maps_want w = {st, name};
	return maps_reader(pid, maps_want_line, &w);
}

/* 1 if a run directory under who->base of one of who's uids or root's, other
 * than owner's, holds a file called name (a rival of owner's); 1 also when
 * that cannot be told. */
static int has_rival(const struct nvt_seg_who *who, uid_t owner, const char *name)
{
	uid_t uids[5] = {who->uid[0], who->uid[1], who->uid[2], who->uid[3], 0};
	char dir[256], path[320];
	struct stat st;

	for (int i = 0; i < 5; i++) {
		int seen = uids[i] == owner;
		for (int j = 0; j < i; j++)
			seen |= uids[j] == uids[i];
		if (seen)
			continue;
		if (nvt_userdir_path(dir, sizeof(dir), who->base, uids[i]) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
			return 1;
		if (lstat(path, &st) == 0 || errno != ENOENT)
			return 1;
	}
	return 0;
}

int nvt_seg_is_its(const struct nvt_segment *head, const char *name, const struct stat *st,
		   const struct nvt_seg_who *who)
{
	if (head->pid != who->id.pid || (who->id.pidns && head->pidns != who->id.pidns) ||
	    (!who->any_start && head->start_time != who->id.start_time) || head->uid != st->st_uid)
		return 0;
	int maps;

	/* Where a process's maps can be read (its user and root), a process
	 * that maps a segment file is decided by it: a header is public and
	 * can be forged (in the run directory of a user the process became). */
	if (who->proc_pid <= 0 || (who->base && !has_rival(who, st->st_uid, name)))
		return 1;
	/* The read waits for the process's memory map's lock, which its user can keep held
	 * (segfile.h): root's -l, -p, top and the exporter meet it where she writes a rival
	 * of root's file of a task that became her. Not read in time, the header cannot
	 * decide: hers may be forged, and root's file may be the one from before an exec to
	 * her, which the task no longer maps (her shim's copy is its segment). So no answer:
	 * neither trusted nor judged a leftover to remove (the task is counted unreadable,
	 * not hidden), asked again at the next read. */
	maps = maps_file(who->proc_pid, st, name);
	if (maps != NVT_PROC_MAPS_LATE)
		return maps != 0;
	errno = ETIMEDOUT;
	return -1;
}

/* ---- Run directories and their writers' lock files ---------------------------- */

int nvt_userdir_open(const char *base, uid_t uid)
{
	char dir[256], why[128];
	int fd;

	if (nvt_userdir_path(dir, sizeof(dir), base, uid)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ENOTDIR || errno == ELOOP))
		errno = ENOENT; /* a file or link anyone may put there: no run directory */
	if (fd >= 0 && nvt_userdir_check(fd, uid, why, sizeof(why))) {
		close(fd);
		errno = ENOENT; /* not a run directory we trust: as if there were none */
		return -1;
	}
	return fd;
}

int nvt_lock_open(int dirfd, uid_t uid)
{
	uid_t me = geteuid();
	struct stat st;
	int fd;

	for (int attempt = 0; attempt < 2; attempt++) {
		fd = openat(dirfd, NVT_LOCK_NAME, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && (me == uid || me == 0)) {
			fd = openat(dirfd, NVT_LOCK_NAME,
				    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
				    NVT_LOCK_MODE);
			if (fd < 0 && errno == EEXIST)
				continue; /* made meanwhile: open that one */
			/* Root makes it for the directory's user, whose writers use it too. */
			if (fd >= 0 && ((me != uid && fchown(fd, uid, (gid_t)-1)) ||
					fchmod(fd, NVT_LOCK_MODE))) {
				int saved = errno;
				close(fd);
				errno = saved;
				return -1;
			}
		}
		if (fd < 0 && errno != ELOOP)
			return -1;
		/* A FIFO opened O_RDWR does not block; anything but a regular
		 * file of uid's that only uid (and root) can open is refused. (Its
		 * links do not matter: whatever its names, nobody else can open
		 * it; and another user who may hard-link it must not make us
		 * refuse it.) */
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid &&
		    !(st.st_mode & 077))
			return fd;
		if (fd >= 0)
			close(fd);
		/* Its user replaces a bad one (nobody else can have made it). */
		if (me != uid || attempt || unlinkat(dirfd, NVT_LOCK_NAME, 0)) {
			errno = EPERM;
			return -1;
		}
	}
	errno = EPERM;
	return -1;
}

int nvt_lock_byte_wait(int fd, uint64_t pidns, pid_t pid)
{
	struct timespec pause = {0, 1000000};

	for (int waited = 0;; waited++) {
		if (nvt_lock_byte(fd, pidns, pid, F_WRLCK) == 0)
			return 0;
		if ((errno != EAGAIN && errno != EINTR) || waited >= NVT_SEG_CREATE_WAIT_MS)
			return -1;
		nanosleep(&pause, NULL);
	}
}

int nvt_lock_byte(int fd, uint64_t pidns, pid_t pid, short type)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)nvt_seg_lock_byte(pidns, pid);
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno == EACCES)
		errno = EAGAIN; /* POSIX allows either for a conflict */
	return -1;
}

int nvt_seg_unlink_judged(int dirfd, uid_t uid, const char *name, dev_t dev, ino_t ino,
			  const struct timespec *ctime)
{
	uint64_t pidns;
	pid_t pid;
	int lock_fd, removed = 0;

	if (nvt_seg_name_parse(name, &pidns, &pid) || (lock_fd = nvt_lock_open(dirfd, uid)) < 0)
		return 0;
	if (nvt_lock_byte(lock_fd, pidns, pid, F_WRLCK) == 0) {
		removed = nvt_unlink_same(dirfd, name, dev, ino, ctime);
		nvt_lock_byte(lock_fd, pidns, pid, F_UNLCK);
	}
	close(lock_fd);
	return removed;
}
