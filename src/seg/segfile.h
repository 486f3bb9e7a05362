/*
 * segfile.h - control segment files, their run directories, and the /proc
 * facts that validate them. Side effects: files, mmap, /proc. Returns codes;
 * never prints.
 *
 * segfile.c's: the names, checks and reads both sides share, the identity
 * check (nvt_seg_is_its) and the writers' lock files. Each other file of
 * src/seg has a header of its own; eight of them (segtrust.h, segown.h,
 * segfor.h, segopen.h, segcontainer.h, segleft.h, segscan.h, segwrite.h)
 * this one includes after its own part, for callers that use several.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGFILE_H
#define NVT_SEGFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include "nvtaskset.h"
#include "core/ptree.h"
#include "core/segment.h"
#include "os/proc.h"

enum nvt_seg_err {
	NVT_SEG_OK = 0,
	NVT_SEG_ENOPROC = -1,  /* no such process */
	NVT_SEG_ENOTASK = -2,  /* the process has no (current) control segment */
	NVT_SEG_EPERM = -3,    /* caller is neither the segment's user nor root */
	NVT_SEG_EVERSION = -4, /* segment of another version (see found_version) */
	NVT_SEG_ECORRUPT = -5, /* not a well-formed control segment */
	NVT_SEG_EBUSY = -6,    /* another writer holds the segment */
	NVT_SEG_ESYS = -7,     /* a system call failed; errno says why */
	NVT_SEG_EMAKING = -8,  /* its segment is not filled in yet (a shim making it, or one that died) */
	NVT_SEG_ELEASED = -9,  /* its user holds a lease on its segment: it cannot be opened now */
};


/* Containers' run directories (segcontainer.c, below): base/containers/ID/run. */
#define NVT_CONTAINERS_DIR "containers"
#define NVT_CONTAINER_PIDNS "pidns"
#define NVT_CONTAINER_RUN "run"
/* The longest container id taken (podman's and Docker's are 64). */
#define NVT_CONTAINER_ID_MAX 128

/* Returns the directory of run directories: $NVTASKSET_RUNDIR if it is an
 * absolute path (secure_getenv: not in a setuid program), else the default. */
const char *nvt_rundir(void);

/* Writes <base>/nvtaskset-<uid>. Returns 0, or -1 if it does not fit. */
int nvt_userdir_path(char *buf, size_t len, const char *base, uid_t uid);
/* Writes nvtaskset.<pidns>.<ns_pid>. Returns 0, or -1 if it does not fit. */
int nvt_seg_name(char *buf, size_t len, uint64_t pidns, pid_t ns_pid);
/* Parses a segment file name. Returns 0, or -1 if name is not one. */
int nvt_seg_name_parse(const char *name, uint64_t *pidns, pid_t *ns_pid);
/* Parses a run directory name "nvtaskset-<uid>". Returns 0, or -1. */
int nvt_userdir_name_parse(const char *name, uid_t *uid);

/*
 * Checks an open run directory: a directory of uid's that nobody else may
 * write in. Returns 0, or -1 with the reason in why.
 */
int nvt_userdir_check(int dirfd, uid_t uid, char *why, size_t len);

/* Opens uid's run directory under base (read-only) if it passes the check
 * above. Returns its fd, or -1 with errno set (ENOENT when it fails the check, or is no
 * directory: a file or link in its place). */
int nvt_userdir_open(const char *base, uid_t uid);


/*
 * Opens the writers' lock file (NVT_LOCK_NAME) of uid's run directory dirfd
 * for writing, if it is a regular file of uid's that nobody else may open
 * (mode NVT_LOCK_MODE or less). The caller, uid or root, makes it if it
 * is missing (root gives it to uid); uid also replaces one that fails the
 * check. Returns its fd, or -1 with errno set.
 */
int nvt_lock_open(int dirfd, uid_t uid);
/*
 * Takes (type F_WRLCK) or releases (F_UNLCK) the writer's lock of segment
 * pidns.pid on the lock file fd, without waiting. Returns 0, or -1 with errno
 * set (EAGAIN: another writer holds it).
 */
int nvt_lock_byte(int fd, uint64_t pidns, pid_t pid, short type);
/*
 * Takes the writer's lock of segment pidns.pid on the lock file fd, waiting
 * at most NVT_SEG_CREATE_WAIT_MS while another writer holds it: a segment's
 * maker then goes on without it (nvt_seg_create). Returns 0, or -1 with
 * errno set (EAGAIN: still held).
 */
int nvt_lock_byte_wait(int fd, uint64_t pidns, pid_t pid);

/*
 * Removes the segment file name of uid's run directory dirfd, judged a
 * leftover, if it is still the file dev, ino (and, unless ctime is NULL, of
 * that ctime: nvt_unlink_same), holding the writer's lock of the segment the
 * name is for while it looks and removes: a maker of a new segment of that
 * name (nvt_seg_create, nvt_seg_make_for) holds that lock while it removes
 * the leftover and makes its own file, so that the file looked at is the one
 * removed. Held by another (a maker, a writer), or the lock file not to be
 * opened or made (nvt_lock_open: one of the wrong type, owner or mode, a
 * full file system): the file stays, for a later sweep. The caller, uid or
 * root, makes the lock file if it is missing. Costs 8 system calls (the
 * caller's uid, open and check the lock file, lock, look, unlink, unlock,
 * close: strace of the shim's sweep, 2026-11-27), 2 more when it makes the
 * lock file (3 when root makes another user's). Returns 1 if it removed the
 * file, else 0.
 */
int nvt_seg_unlink_judged(int dirfd, uid_t uid, const char *name, dev_t dev, ino_t ino,
			  const struct timespec *ctime);

/*
 * Copies slot gpu of the segment open as fd by pread, as a sequence-lock
 * reader: never maps the file, so its owner cannot make the caller fault.
 * Returns enum nvt_seg_read_rc: NVT_SEG_UNSETTLED if each of
 * NVT_SEG_READ_TRIES tries met a writer (one that died mid-write, or a
 * segment its user leaves so), with view the last copy, state NVT_SLOT_SET
 * and every TPC that a copy held where one held any (what allocation counts
 * as held by its owner); NVT_SEG_SHORT if the file is shorter than a segment.
 * A thread yields the CPU between tries only until it has read a few slots
 * unsettled in a row (none settled by a retry since).
 */
enum nvt_seg_read_rc {
	NVT_SEG_READ_OK = 0,
	NVT_SEG_UNSETTLED = -1, /* every read met a writer: view is what a copy showed */
	NVT_SEG_SHORT = -2,     /* the file is shorter than a segment: view says nothing */
};
#define NVT_SEG_READ_TRIES 8
int nvt_seg_pread_slot(int fd, int gpu, struct nvt_slot_view *view, struct nvt_slot_status *status);
/* 1 if fd (a regular file of its run directory's user, st its fstat) is a
 * segment still being made: mode NVT_SEG_NEW_MODE, and no header yet
 * (nvtaskset.h, "Making a segment"). */
int nvt_seg_being_made(int fd, const struct stat *st);
/* Reads and checks the header of the segment open as fd. Returns enum
 * nvt_segment_check, or NVT_SEG_BAD_SIZE if it cannot be read. */
int nvt_seg_pread_header(int fd, struct nvt_segment *head);
/*
 * A moment's look, by one pread and no sequence lock, for what a reader may
 * take from any moment (which slots name a GPU or hold a priority, their
 * sequence numbers and launch counts; a slot's GPU, written once): the
 * whole segment open as fd into copy (unchecked), or slot gpu as it is into
 * slot. This file alone knows where a slot lies (nvt_seg_pread_slot reads
 * one sequence-locked). Return 0, or -1 if the file is shorter (or gpu is
 * no slot).
 */
int nvt_seg_pread_whole(int fd, struct nvt_segment *copy);
int nvt_seg_pread_slot_raw(int fd, int gpu, struct nvt_gpu_slot *slot);

/* Who a segment should name (nvt_seg_is_its). */
struct nvt_seg_who {
	pid_t proc_pid;          /* as the caller's /proc numbers it (its maps); 0: none */
	struct nvt_proc_id id;   /* PID namespace (0: not known), PID in it, start time */
	int any_start;           /* the start time is not known (/proc hides it) */
	/* Where another run directory may hold a rival file of the same name:
	 * under base, those of uid[] and root's. NULL: any may (read maps). */
	const char *base;
	uid_t uid[4];            /* the process's real, effective, saved, fs uids */
};

/*
 * The one identity check, "is this file the segment process who uses?", for
 * a valid segment named name (open, st its fstat, head its header): 1 if its
 * header names the process (PID namespace, PID, start time) and the file's
 * owner, and, where the caller may read the process's /proc/PID/maps (its
 * user and root) and the process maps any segment file, the file is one it
 * maps (dev:inode, or that name in its owner's run directory). A header is
 * public: another user can forge one, for a process that became her, in
 * her own run directory; what the process maps cannot be forged. Where maps
 * cannot be read or show no segment (between an exec and its shim's start),
 * the header decides. So does it, without reading maps, where who->base is
 * set and no run directory of who->uid[] or root's but the file's own holds
 * a file of that name: no rival, nothing to tell apart. Where the maps reader
 * (nvt_seg_maps_reader) gave up on the read, nothing can tell: no answer, for a
 * file of root's too (it may be the one from before an exec to her user, which
 * the process no longer maps). Returns 1, 0, or -1 with errno ETIMEDOUT (no
 * answer: the caller neither trusts the file nor removes it as a leftover).
 */
int nvt_seg_is_its(const struct nvt_segment *head, const char *name, const struct stat *st,
		   const struct nvt_seg_who *who);

/*
 * How nvt_seg_is_its reads a process's maps: a reader that returns as os/proc.h's
 * nvt_proc_maps, or NVT_PROC_MAPS_LATE where it gave up on the read. The read waits for
 * the process's memory map's lock, which its user can keep held for good (one of her
 * threads faulting on a FUSE file of hers whose reads she never answers, another asking
 * to map), and the user whose task became her can make such a read happen (a rival file
 * in her run directory). Unless a program chooses (NULL: the default), the read is
 * nvt_proc_maps in the calling process: the shim's (inherit.c's look at its ancestors at
 * its start), which never forks. The command (its -l, -p, top, --metrics, agent and
 * claims) and the exporter, whoever runs them, choose os/child.h's nvt_proc_maps_bounded
 * at their start, before any thread; so does the Slurm plugin before a step's placement.
 * A late answer fails no listing and frees no TPCs: a listing (segscan.c) lists the
 * process with the file and never removes it, a claim counts every file whose header
 * names the process as held (segopen.h's nvt_seg_each_named), a view counts the task
 * unreadable.
 */
typedef int nvt_seg_maps_fn(pid_t pid, int (*each)(const char *line, void *arg), void *arg);
void nvt_seg_maps_reader(nvt_seg_maps_fn *reader);

/* The other files' headers (one a file: segtrust.h, segown.h, segfor.h, segopen.h, segwrite.h,
 * segcontainer.h, segscan.h), for the callers that include this one for them all. */
#endif /* NVT_SEGFILE_H */

#include "segtrust.h"
#include "segown.h"
#include "segfor.h"
#include "segopen.h"
#include "segcontainer.h"
#include "segleft.h"
#include "segscan.h"
#include "segwrite.h"
