/*
 * segscan.c - listing the tasks with a segment in every run directory
 * (nvt_seg_tasks), and tidying the files of processes that are gone or that
 * do not use them. Split from segopen.c, whose opening and identity checks
 * it uses. Side effects: reads run directories and /proc; removes stale
 * files where the caller may. Returns codes; never prints.
 * Over 500 lines on purpose: what passes over a shared directory's entries,
 * tells other namespaces' files apart and tidies shares one private scan
 * state (struct scan), which a split would have to publish.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segscan.h"
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

/*
 * Files named for another PID namespace whose processes' namespaces the
 * caller may not read (another user's containers) are told apart by their
 * headers: one read per file, against every such process of that PID at
 * once. And no more files of one PID in one run directory than there are
 * such processes running as its user, and NVT_SEG_CROWD_SLACK (leftovers of
 * containers that ended), are read: a user who fills her run directory with
 * names of PID 1 in other namespaces costs others' listings a bounded number
 * of reads per process of hers, not one per file and process, and none for
 * other users' processes (she may hide her own containers' tasks so, never
 * another user's: a run directory holds only its user's segments). The
 * directory is named (NVT_SKIP_CROWDED).
 */
#define NVT_SEG_CROWD_SLACK 16

/*
 * Files named for another PID namespace that no process had when the
 * processes were read: a process that started after that read may have made
 * one since. Each is held (O_PATH) from the judgement on, with its run
 * directory; once every run directory's names are read, the processes are
 * read again, once a scan, and a file is removed only if none has it then
 * either: its maker made it before it was held, so started before that second
 * read, which shows it if it lives. At most NVT_SEG_DOUBTS_MAX in all a sweep
 * (the fds held, and one a run directory that holds one); the rest stay for a
 * later one, and so do all of them when the second read fails (EMFILE, say).
 * A user who plants such names in her own run directory costs root's -l or
 * claim one more walk of /proc, however many run directories hold them.
 */
#define NVT_SEG_DOUBTS_MAX 64

struct doubt {
	int held;       /* the file judged (O_PATH) */
	size_t dir;     /* its run directory: an index in doubt_dirs */
	char name[64];
	uint64_t pidns;
	pid_t ns_pid;
};

/* A run directory that holds a doubt: its own fd (a copy), and its user. */
struct doubt_dir {
	int fd;
	uid_t uid;
};

struct scan {
	struct nvt_seg_entry *v;
	size_t n, cap;
	struct nvt_proc *nested; /* processes in namespaces below ours, read once, by ns_pid */
	size_t n_nested, nested_cap;
	int nested_read;
	int nested_errno; /* why they could not be read; 0 if they were */
	int *reads;       /* in the run directory being read: header reads, at a PID's first process */
	char *taken;      /* in the run directory being read: nested processes given a file */
	struct nvt_seg_listed *named; /* the files given by header to processes (nvt_seg_listed_name) */
	size_t n_named, named_cap;
	int see_all;      /* every process of every namespace is in sight: what none has is stale */
	struct nvt_seg_skipped *skipped; /* NULL: not asked for */
	const struct nvt_seg_container *ctr; /* the container whose run directory is being read, or NULL */
	const char *base; /* the directory of run directories being read (base, or ctr's), for
			   * nvt_seg_is_its's look for a rival file; NULL: maps are read where they can be */
	int foreign;      /* in the run directory being read: files naming no process of ctr's */
	struct doubt doubts[NVT_SEG_DOUBTS_MAX]; /* of every run directory read */
	size_t n_doubts;
	struct doubt_dir doubt_dirs[NVT_SEG_DOUBTS_MAX];
	size_t n_doubt_dirs;
	int doubt_dir_set; /* the run directory being read is doubt_dirs' last */
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

/* Notes that the file name of uid's run directory was given to pid by its header. */
static int note_named(struct scan *s, pid_t pid, uid_t uid, const char *name)
{
	struct nvt_seg_listed *v = nvt_grow(s->named, s->n_named, &s->named_cap, sizeof(*v), 16);

	if (!v)
		return -1;
	s->named = v;
	v[s->n_named].pid = pid;
	v[s->n_named].uid = uid;
	snprintf(v[s->n_named++].name, sizeof(v->name), "%.63s", name);
	return 0;
}

/* Notes an entry passed over: kind (enum nvt_seg_skip_kind), its owner and mode. */
static void skip(struct scan *s, uid_t uid, int kind, uid_t owner, mode_t mode, int count)
{
	struct nvt_seg_skipped *k = s->skipped;

	if (!k)
		return;
	if (k->n < NVT_SEG_SKIPPED_KEPT) {
		struct nvt_seg_skip *e = &k->v[k->n];
		snprintf(e->container, sizeof(e->container), "%s", s->ctr ? s->ctr->id : "");
		e->uid = uid;
		e->kind = kind;
		e->owner = owner;
		e->mode = mode;
		e->count = count;
	}
	k->n++;
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

static int by_ns_pid(const void *a, const void *b)
{
	pid_t x = ((const struct nvt_proc *)a)->ns_pid, y = ((const struct nvt_proc *)b)->ns_pid;
	return (x > y) - (x < y);
}

/* Reads every process of a namespace below /proc's, by ns_pid. Returns 0 or -1. */
static int read_nested(struct scan *s)
{
	s->nested_read = 1;
	if (nvt_proc_each(nested_one, s) < 0) {
		s->nested_errno = errno;
		return -1;
	}
	if (s->n_nested)
		qsort(s->nested, s->n_nested, sizeof(*s->nested), by_ns_pid);
	s->reads = calloc(s->n_nested + 1, sizeof(*s->reads));
	s->taken = calloc(s->n_nested + 1, 1);
	if ((!s->reads || !s->taken) && !s->nested_errno)
		s->nested_errno = ENOMEM;
	return 0;
}

/* Frees what read_nested read. */
static void drop_nested(struct scan *s)
{
	free(s->nested);
	free(s->reads);
	free(s->taken);
	s->nested = NULL;
	s->reads = NULL;
	s->taken = NULL;
}

/*
 * Reads the processes of namespaces below /proc's again (read_nested), in
 * place of those read first only if every one could be read: otherwise the
 * first read stays, with no error kept in s (which would fail every later
 * resolve_nested). Returns 0, or -1 with errno set.
 */
static int reread_nested(struct scan *s)
{
	struct nvt_proc *nested = s->nested;
	size_t n_nested = s->n_nested, nested_cap = s->nested_cap;
	int *reads = s->reads, err;
	char *taken = s->taken;

	s->nested = NULL;
	s->reads = NULL;
	s->taken = NULL;
	s->n_nested = s->nested_cap = 0;
	s->nested_errno = 0;
	if (read_nested(s) == 0 && !s->nested_errno) {
		free(nested);
		free(reads);
		free(taken);
		return 0;
	}
	err = s->nested_errno ? s->nested_errno : errno;
	drop_nested(s);
	s->nested = nested;
	s->reads = reads;
	s->taken = taken;
	s->n_nested = n_nested;
	s->nested_cap = nested_cap;
	s->nested_errno = 0;
	errno = err;
	return -1;
}

/* The first of the nested processes whose ns_pid is ns_pid, or n_nested. */
static size_t first_of(const struct scan *s, pid_t ns_pid)
{
	size_t lo = 0, hi = s->n_nested;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->nested[mid].ns_pid < ns_pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether p runs as uid: any of its four uids (as segopen.c's alike_one counts). */
static int runs_as(const struct nvt_proc *p, uid_t uid)
{
	return p->uid[0] == uid || p->uid[1] == uid || p->uid[2] == uid || p->uid[3] == uid;
}

/* Which process a header is for, among those of a PID whose namespace the caller may not read. */
struct pick {
	struct scan *s;
	size_t lo, hi;
	uint64_t pidns;          /* the file's name's */
	uid_t uid;               /* whose run directory holds the file */
	struct nvt_seg_trust *t; /* its who is set to the process picked */
	size_t found;            /* the process's index in s->nested; hi: none */
	int alike;               /* how many processes the header fits */
};

/*
 * A wanted() of nvt_seg_trust: the process whose start time the header
 * records. One that runs as the run directory's user (runs_as) is taken
 * first: another user's container started in the same clock tick is not given
 * the file while one of the user's own fits (any fitting process is taken
 * when none does: a process that gave up the uid it made its segment as).
 * A user's own containers started in one clock tick have PID 1 and the same
 * start time: a header cannot tell them apart, so each file that fits goes to
 * one of them not given one yet (which one does not matter to a count;
 * segopen.c's find_by_header picks the same way for each process's own
 * view), and the entry is marked ambiguous: never removed.
 */
static int pick_one(int fd, const struct nvt_segment *head, void *arg)
{
	struct pick *k = arg;
	size_t other = k->hi; /* the first fitting process not given a file, of another user's */

	(void)fd;
	k->found = k->hi;
	k->alike = 0;
	if (head->pidns != k->pidns)
		return 0;
	for (size_t i = k->lo; i < k->hi; i++) {
		const struct nvt_proc *p = &k->s->nested[i];
		if (p->pidns || p->start_time != head->start_time)
			continue;
		k->alike++;
		if (k->s->taken[i])
			continue;
		if (runs_as(p, k->uid)) {
			if (k->found == k->hi)
				k->found = i;
		} else if (other == k->hi) {
			other = i;
		}
	}
	if (k->found == k->hi)
		k->found = other;
	if (k->found == k->hi)
		return 0;
	k->t->who = nvt_seg_who_of(k->s->base, &k->s->nested[k->found], k->pidns);
	return 1;
}

/* What resolve_nested found besides a process. */
enum { RESOLVED_NONE = 0, RESOLVED_ERROR = -1, RESOLVED_CROWDED = -2 };

/* Gives the file name of uid's run directory to the process k picked, as resolve_nested does;
 * *ambiguous set where never to remove it as another's (unsure: its header fits several
 * processes, or its process's maps were not read in time). Returns its PID, or RESOLVED_ERROR
 * (ENOMEM). */
static pid_t give(struct scan *s, const struct pick *k, uid_t uid, const char *name, int unsure,
		  int *ambiguous)
{
	s->taken[k->found] = 1;
	*ambiguous = unsure || k->alike > 1;
	if (note_named(s, s->nested[k->found].pid, uid, name)) {
		errno = ENOMEM;
		return RESOLVED_ERROR;
	}
	return s->nested[k->found].pid;
}

/*
 * The PID (ours) of the process that a file named for another namespace
 * (pidns, ns_pid; name in uid's run directory dirfd) is the segment of.
 * Returns it, or RESOLVED_NONE (no live process has it: a leftover),
 * RESOLVED_CROWDED (not read: see NVT_SEG_CROWD_SLACK; neither listed nor
 * removed), or RESOLVED_ERROR with errno set (the processes could not be read).
 */
static pid_t resolve_nested(struct scan *s, int dirfd, uid_t uid, const char *name, uint64_t pidns,
			    pid_t ns_pid, int *ambiguous)

{
	struct nvt_seg_trust t;
	struct pick k = {s, 0, 0, pidns, uid, &t, 0, 0};
	size_t hidden = 0, hers = 0; /* processes of that PID in namespaces not ours to read; uid's */
	int rc;

	if (!s->nested_read)
		read_nested(s);
	if (s->nested_errno) {
		errno = s->nested_errno;
		return RESOLVED_ERROR;
	}
	k.lo = first_of(s, ns_pid);
	for (k.hi = k.lo; k.hi < s->n_nested && s->nested[k.hi].ns_pid == ns_pid; k.hi++) {
		if (s->nested[k.hi].pidns == pidns)
			return s->nested[k.hi].pid;
		hidden += !s->nested[k.hi].pidns;
		hers += !s->nested[k.hi].pidns && runs_as(&s->nested[k.hi], uid);
	}
	if (!hidden)
		return RESOLVED_NONE;
	/* Processes of that PID whose namespaces are not ours to read: the header says which. */
	if (s->reads[k.lo] >= (int)hers + NVT_SEG_CROWD_SLACK)
		return RESOLVED_CROWDED;
	s->reads[k.lo]++;
	memset(&t, 0, sizeof(t));
	t.owner = uid;
	t.oflags = O_RDONLY;
	t.wanted = pick_one;
	t.arg = &k;
	k.found = k.hi; /* (none picked: a late open or fstat of the file itself names no process) */
	rc = nvt_seg_trust(dirfd, name, &t);
	if (rc == NVT_TRUST_OK) {
		close(t.fd);
		return give(s, &k, uid, name, 0, ambiguous);
	}
	/* Its header names the process picked, whose maps (read beside a rival file) came late:
	 * no answer, and no end of the listing. The process is listed with the file, so that
	 * its TPCs count as held (nvt_held_scan), and the file is never removed. */
	if (rc == NVT_TRUST_ESYS && errno == ETIMEDOUT && k.found < k.hi)
		return give(s, &k, uid, name, 1, ambiguous);
	if (rc == NVT_TRUST_ESYS)
		return RESOLVED_ERROR;
	/* A lease, one being made, or not ours to read: it may be theirs; so may a
	 * file that fits processes given one each already. */
	return rc == NVT_TRUST_LEASED || rc == NVT_TRUST_MAKING || rc == NVT_TRUST_DENIED || k.alike
		       ? RESOLVED_CROWDED
		       : RESOLVED_NONE;
}

/* One file of a run directory, as scan_userdir takes it. */
struct found {
	const char *name;
	uint64_t pidns;
	pid_t ns_pid;
};

/*
 * 1 if f, a file named for a process of our own PID namespace (in uid's run
 * directory dirfd), names none alive now (removed if tidy), 0 if it names one,
 * -1 with errno set. The file judged is taken before its process is looked
 * for, so that the removal takes that file only, never one that a new process
 * of its PID made meanwhile (its shim unlinks a leftover and makes a file of
 * its own, holding the writer's lock that nvt_seg_unlink_judged takes), and
 * held until then (O_PATH: nothing is opened for reading, a FIFO or a lease
 * stops nothing): a file system that gives a freed inode's number to the next
 * file (ext4 does at once) cannot give the new file this one's.
 */
static int own_leftover(int dirfd, uid_t uid, const struct found *f, int tidy)
{
	struct stat st;
	int held = -1, gone, err;

	if (tidy && ((held = openat(dirfd, f->name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		     fstat(held, &st))) {
		err = errno;
		if (held >= 0)
			close(held);
		errno = err;
		return errno == ENOENT ? 1 : -1; /* (removed meanwhile) */
	}
	gone = kill(f->ns_pid, 0) && errno == ESRCH;
	if (gone && tidy)
		nvt_seg_unlink_judged(dirfd, uid, f->name, st.st_dev, st.st_ino, NULL);
	if (held >= 0)
		close(held);
	return gone;
}

/* Holds f, named for another PID namespace, which no process had, and its run directory
 * (uid's dirfd), for settle_doubts (NVT_SEG_DOUBTS_MAX). */
static void doubt(struct scan *s, int dirfd, uid_t uid, const struct found *f)
{
	struct doubt *d = &s->doubts[s->n_doubts];

	if (s->n_doubts == NVT_SEG_DOUBTS_MAX ||
	    (!s->doubt_dir_set && s->n_doubt_dirs == NVT_SEG_DOUBTS_MAX))
		return; /* for a later sweep */
	if (!s->doubt_dir_set) {
		struct doubt_dir *dir = &s->doubt_dirs[s->n_doubt_dirs];
		dir->fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
		if (dir->fd < 0)
			return;
		dir->uid = uid;
		s->n_doubt_dirs++;
		s->doubt_dir_set = 1;
	}
	d->held = openat(dirfd, f->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (d->held < 0)
		return;
	d->dir = s->n_doubt_dirs - 1;
	snprintf(d->name, sizeof(d->name), "%.63s", f->name);
	d->pidns = f->pidns;
	d->ns_pid = f->ns_pid;
	s->n_doubts++;
}

/* Removes the files held in s->doubts that no process has when the processes are read
 * again, if remove and that read succeeds (reread_nested); lets go of them all. */
static void settle_doubts(struct scan *s, int remove)
{
	if (s->n_doubts && remove && reread_nested(s))
		remove = 0; /* kept, for a later sweep */
	for (size_t i = 0; i < s->n_doubts; i++) {
		struct doubt *d = &s->doubts[i];
		const struct doubt_dir *dir = &s->doubt_dirs[d->dir];
		struct stat st;
		int ambiguous = 0;

		/* A run directory's own count of header reads, and processes given a file. */
		if (remove && (i == 0 || d->dir != s->doubts[i - 1].dir)) {
			memset(s->reads, 0, (s->n_nested + 1) * sizeof(*s->reads));
			memset(s->taken, 0, s->n_nested + 1);
		}
		if (remove && fstat(d->held, &st) == 0 &&
		    resolve_nested(s, dir->fd, dir->uid, d->name, d->pidns, d->ns_pid, &ambiguous) ==
			    RESOLVED_NONE)
			nvt_seg_unlink_judged(dir->fd, dir->uid, d->name, st.st_dev, st.st_ino, NULL);
		close(d->held);
	}
	for (size_t i = 0; i < s->n_doubt_dirs; i++)
		close(s->doubt_dirs[i].fd);
	s->n_doubts = s->n_doubt_dirs = 0;
}

/* Adds f (in uid's run directory dirfd) to s if it names a live process;
 * removes it if it names none and tidy. Returns 0, or -1 with errno set
 * (EACCES: the directory is not ours to look into). */
static int scan_file(struct scan *s, int dirfd, uid_t uid, int tidy, int see_own, uint64_t own_ns,
		     const struct found *f, int *crowded)
{
	struct nvt_seg_entry e;
	struct stat st;
	int gone;

	memset(&e, 0, sizeof(e));
	/* A container's files name its own processes only: whatever else it writes
	 * there names nobody (counted, never read, never removed). */
	if (s->ctr && f->pidns != s->ctr->pidns) {
		s->foreign++;
		return 0;
	}
	if (s->ctr)
		snprintf(e.container, sizeof(e.container), "%s", s->ctr->id);
	if (f->pidns == own_ns && see_own) {
		if ((gone = own_leftover(dirfd, uid, f, tidy)))
			return gone < 0 ? -1 : 0;
		e.pid = f->ns_pid;
	} else {
		e.pid = resolve_nested(s, dirfd, uid, f->name, f->pidns, f->ns_pid, &e.ambiguous);
		if (e.pid == RESOLVED_ERROR)
			return -1;
		if (e.pid == RESOLVED_CROWDED) {
			(*crowded)++;
			return 0;
		}
		if (e.pid == RESOLVED_NONE) {
			/* Every process in sight, and none has it (its process could be told
			 * apart from every other: never one whose status could not be read):
			 * removed if none has it when the processes are read again. */
			if (tidy && s->see_all)
				doubt(s, dirfd, uid, f);
			return 0;
		}
	}
	if (fstatat(dirfd, f->name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -1; /* (removed meanwhile) */
	e.uid = uid;
	e.dev = st.st_dev;
	e.ino = st.st_ino;
	e.ctime = st.st_ctim;
	snprintf(e.name, sizeof(e.name), "%.63s", f->name);
	if (push(s, &e)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/*
 * Opens the entry name (nvtaskset-UID) of the directory of run directories
 * basefd as uid's run directory, if it is one to read: a directory of uid's
 * that nobody else may write in, and that the caller may read and look into.
 * Anything else is passed over and noted in s. Returns its fd, RESOLVED_NONE
 * (passed over, or gone), or -1 with errno set (EMFILE: no answer).
 */
static int open_userdir(struct scan *s, int basefd, const char *name, uid_t uid)
{
	int fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0 && errno == ENOENT)
		return RESOLVED_NONE; /* removed meanwhile */
	if (fd < 0 && errno != ENOTDIR && errno != ELOOP && errno != EACCES)
		return -1;
	if (fd < 0) {
		/* A link, a file of another type, or a directory not ours to read. */
		/* (EACCES: basefd, a container's run directory, became one the caller may not
		 * look into meanwhile: passed over, as scan_containers passes it over) */
		if (fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW))
			return errno == ENOENT || errno == EACCES ? RESOLVED_NONE : -1;
		skip(s, uid,
		     S_ISLNK(st.st_mode)   ? NVT_SKIP_LINK
		     : !S_ISDIR(st.st_mode) ? NVT_SKIP_NOT_DIR
		     : st.st_uid != uid     ? NVT_SKIP_OWNER
		     : (st.st_mode & 022)   ? NVT_SKIP_WRITABLE
					    : NVT_SKIP_UNREADABLE,
		     st.st_uid, st.st_mode, 0);
		return RESOLVED_NONE;
	}
	if (fstat(fd, &st)) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	if (st.st_uid != uid || (st.st_mode & 022) || faccessat(fd, ".", X_OK, AT_EACCESS)) {
		skip(s, uid,
		     st.st_uid != uid	   ? NVT_SKIP_OWNER
		     : (st.st_mode & 022) ? NVT_SKIP_WRITABLE
					  : NVT_SKIP_UNREADABLE,
		     st.st_uid, st.st_mode, 0);
		close(fd);
		return RESOLVED_NONE;
	}
	return fd;
}

/*
 * Collects the segments of run directory dirfd (uid's); removes those of dead
 * processes if tidy. see_own: nvt_procfs_own(). A directory whose files cannot
 * be looked at (its user took that right away meanwhile) is passed over, and
 * noted. Returns 0, or -1 with errno set when a task may have been missed
 * (EMFILE, ENOMEM: never "no task").
 */
static int scan_userdir(struct scan *s, int dirfd, uid_t uid, int tidy, int see_own)
{
	uint64_t own_ns = nvt_own_pidns();
	size_t first = s->n;
	int rc = 0, err, crowded = 0;
	struct dirent *ent;
	DIR *dir = nvt_opendir_fd(dirfd);

	if (!dir)
		return -1;
	if (s->reads)
		memset(s->reads, 0, (s->n_nested + 1) * sizeof(*s->reads));
	if (s->taken)
		memset(s->taken, 0, s->n_nested + 1);
	s->foreign = 0;
	s->doubt_dir_set = 0;
	while ((ent = readdir(dir))) {
		struct found f = {ent->d_name, 0, 0};

		if (nvt_seg_name_parse(ent->d_name, &f.pidns, &f.ns_pid))
			continue;
		rc = scan_file(s, dirfd, uid, tidy, see_own, own_ns, &f, &crowded);
		if (rc)
			break;
	}
	err = errno;
	closedir(dir);
	if (rc && s->doubt_dir_set) {
		/* Not read to its end: its doubts are let go, none removed (as its listing). */
		while (s->n_doubts && s->doubts[s->n_doubts - 1].dir == s->n_doubt_dirs - 1)
			close(s->doubts[--s->n_doubts].held);
		close(s->doubt_dirs[--s->n_doubt_dirs].fd);
	}
	if (rc && err == EACCES) {
		struct stat st;
		s->n = first; /* not ours to look into after all: none of it */
		skip(s, uid, NVT_SKIP_UNREADABLE, uid, fstat(dirfd, &st) ? 0 : st.st_mode, 0);
		return 0;
	}
	if (!rc && crowded)
		skip(s, uid, NVT_SKIP_CROWDED, uid, 0, crowded);
	if (!rc && s->foreign)
		skip(s, uid, NVT_SKIP_FOREIGN, uid, 0, s->foreign);
	errno = err;
	return rc;
}

int nvt_seg_entry_dir(const char *base, const struct nvt_seg_entry *e)
{
	return nvt_seg_container_userdir_open(base, e->container, e->uid);
}

/* Opens e's file for reading, never through a link. Returns its fd, or -1
 * with errno set (0 if its run directory cannot be used). */
static int open_entry(const char *base, const struct nvt_seg_entry *e)
{
	int dirfd = nvt_seg_entry_dir(base, e), fd, err;

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
	if (nvt_seg_name_parse(e->name, &pidns, &ns_pid) || (dirfd = nvt_seg_entry_dir(base, e)) < 0)
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

/*
 * Removes e's file if it is still the file the scan looked at: the same
 * device, inode and ctime. It is not held from then (a listing may hold
 * thousands), so a file system that gives a freed inode's number to the next
 * file (ext4 does at once) may give it to a file a new process of e's PID made
 * at the name meanwhile, whose ctime is that of its making: unless that fell
 * in the clock tick of the leftover's last change, it stays.
 */
static void remove_entry(const char *base, const struct nvt_seg_entry *e)
{
	int dirfd = nvt_seg_entry_dir(base, e);

	if (dirfd < 0)
		return;
	nvt_seg_unlink_judged(dirfd, e->uid, e->name, e->dev, e->ino, &e->ctime);
	close(dirfd);
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct nvt_seg_entry *)a)->pid, y = ((const struct nvt_seg_entry *)b)->pid;
	return (x > y) - (x < y);
}

/* Reads the run directories of directory basefd (base, or a container's, s->ctr) into s:
 * uid only's, or every user's ((uid_t)-1). Returns 0 or -1. */
static int scan_base(struct scan *s, int basefd, uid_t only, int tidy, int see_own)
{
	struct dirent *ent;
	uid_t me = geteuid();
	int rc = 0, err;
	DIR *dir = nvt_opendir_fd(basefd);

	if (!dir)
		return -1;
	while (!rc && (ent = readdir(dir))) {
		uid_t uid;
		int dirfd;

		if (nvt_userdir_name_parse(ent->d_name, &uid) || (only != (uid_t)-1 && uid != only))
			continue;
		dirfd = open_userdir(s, basefd, ent->d_name, uid);
		if (dirfd == RESOLVED_NONE)
			continue;
		rc = dirfd < 0 ? -1 : scan_userdir(s, dirfd, uid, tidy && (me == 0 || me == uid), see_own);
		err = errno;
		if (dirfd >= 0)
			close(dirfd);
		errno = err;
	}
	err = errno;
	closedir(dir);
	errno = err;
	return rc;
}

/* Reads the run directories of every container of base (nvt_seg_container_list) into s, as
 * scan_base. Returns 0 or -1. */
static int scan_containers(struct scan *s, const char *base, uid_t only, int tidy, int see_own)
{
	char dir[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32], bad_name[NVT_CONTAINER_ID_MAX + 1];
	struct nvt_seg_container *v, none = {0};
	int n, rc = 0, err;

	bad_name[0] = '\0';
	n = nvt_seg_container_list(base, &v, &(int){0}, bad_name, sizeof(bad_name));
	if (n < 0)
		return -1;
	if (bad_name[0]) {
		/* (named once: the first; "containers" itself when that is what fails) */
		snprintf(none.id, sizeof(none.id), "%s", strcmp(bad_name, NVT_CONTAINERS_DIR) ? bad_name : "");
		/* cppcheck-suppress autoVariables ; s->ctr is set to NULL before this returns */
		s->ctr = &none;
		skip(s, (uid_t)-1, NVT_SKIP_CONTAINER, 0, 0, 0);
	}
	for (int i = 0; !rc && i < n; i++) {
		int fd;

		if (nvt_seg_container_base(dir, sizeof(dir), base, v[i].id))
			continue;
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		s->ctr = &v[i];
		/* Its root may chmod it (a rootful container's /run/nvtaskset): one the caller may
		 * not read and look into is passed over and named, never the end of the listing. */
		if ((fd < 0 && errno == EACCES) || (fd >= 0 && faccessat(fd, ".", R_OK | X_OK, AT_EACCESS))) {
			struct stat st;
			skip(s, (uid_t)-1, NVT_SKIP_CLOSED, 0,
			     fd >= 0 ? (fstat(fd, &st) ? 0 : st.st_mode)
				     : (stat(dir, &st) ? 0 : st.st_mode), 0);
		} else if (fd >= 0) {
			s->base = dir;
			rc = scan_base(s, fd, only, tidy, see_own);
			s->base = base;
		}
		if (fd < 0)
			continue; /* removed meanwhile, or not made yet */
		err = errno;
		close(fd);
		errno = err;
	}
	s->ctr = NULL;
	err = errno;
	free(v);
	errno = err;
	return rc;
}

/* Collects the segment files of uid only's run directory, or of every user's
 * ((uid_t)-1), under base and its containers' (scan_containers) into s,
 * ascending by PID; tidies as scan_userdir. Returns 0 or -1. */
static int collect(struct scan *s, const char *base, uid_t only, int tidy)
{
	int see_own, basefd, rc, err;

	see_own = nvt_procfs_own();
	if (see_own < 0)
		return -1;
	s->see_all = nvt_procfs_shows_all(see_own);
	basefd = open(base, O_RDONLY | O_NONBLOCK | O_DIRECTORY | O_CLOEXEC); /* (as opendir opens it) */
	if (basefd < 0)
		return -1;
	s->base = base;
	rc = scan_base(s, basefd, only, tidy, see_own);
	if (!rc)
		rc = scan_containers(s, base, only, tidy, see_own);
	err = errno;
	close(basefd);
	/* (a doubt's run directory may be base's or a container's: maps are read where they can be) */
	s->base = NULL;
	settle_doubts(s, !rc);
	drop_nested(s);
	if (rc) {
		free(s->v);
		free(s->named);
		s->v = NULL;
		errno = err;
		return -1;
	}
	nvt_seg_listed_keep(s->named, s->n_named);
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
	return nvt_seg_tasks_skipped(base, tidy, pids, NULL);
}

int nvt_seg_tasks_skipped(const char *base, int tidy, pid_t **pids, struct nvt_seg_skipped *skipped)
{
	struct scan s = {0};
	uid_t me = geteuid();
	size_t n_out = 0;
	pid_t *out;

	*pids = NULL;
	s.skipped = skipped;
	if (skipped)
		skipped->n = 0;
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
			int stale = !e->ambiguous &&
				    (rc == NVT_SEG_ENOPROC ||
				     (settled && (e->dev != h.dev || e->ino != h.ino) &&
				      !(e->uid == h.task_uid && entry_being_made(base, e))) ||
				     (rc == NVT_SEG_ENOTASK && replaced(base, e)));
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
