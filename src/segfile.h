/*
 * segfile.h - control segment files and the /proc facts that validate them.
 * Side effects: files, mmap, /proc. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGFILE_H
#define NVT_SEGFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "nvtaskset.h"

enum nvt_seg_err {
	NVT_SEG_OK = 0,
	NVT_SEG_ENOPROC,  /* no such process */
	NVT_SEG_ENOTASK,  /* the process has no (current) control segment */
	NVT_SEG_EPERM,    /* caller is neither the task's owner nor root */
	NVT_SEG_EVERSION, /* segment of another version (see found_version) */
	NVT_SEG_ECORRUPT, /* not a well-formed control segment */
	NVT_SEG_EBUSY,    /* another writer holds the segment */
	NVT_SEG_ESYS,     /* a system call failed; errno says why */
};

/* An open, mapped control segment. */
struct nvt_seg_handle {
	int fd;
	pid_t pid;
	uid_t owner; /* effective uid of the task */
	struct nvt_segment *seg;
	uint32_t found_version; /* with NVT_SEG_EVERSION */
};

/* Returns the run directory: $NVTASKSET_RUNDIR if it is an absolute path, else the default. */
const char *nvt_rundir(void);

/* Writes <rundir>/nvtaskset.<pid>. Returns 0, or -1 if it does not fit. */
int nvt_seg_path(char *buf, size_t len, const char *rundir, pid_t pid);

/* Reads field 22 (start time) of /proc/<pid>/stat. Returns 0, or -1 with
 * errno set (ESRCH for a zombie). */
int nvt_proc_start_time(pid_t pid, uint64_t *start_time);
/* Reads the effective uid of pid from /proc/<pid>/status. Returns 0 or -1. */
int nvt_proc_euid(pid_t pid, uid_t *euid);

/*
 * Shim side: creates (or, after an exec in the same process, adopts) the
 * calling process's segment. On success returns the mapping and sets
 * *adopted to 1 if an existing segment of this very process was kept;
 * returns NULL with errno set on failure.
 */
struct nvt_segment *nvt_seg_create(const char *rundir, int *adopted);

/*
 * CLI side: opens pid's segment for reading (writable = 0) or for writing.
 * Checks that the caller may (owner or root), that the file belongs to the
 * task's user and that it describes this very process (pid and start time).
 * Returns enum nvt_seg_err.
 */
int nvt_seg_open(const char *rundir, pid_t pid, int writable, struct nvt_seg_handle *h);
/* Takes the writer lock, waiting at most timeout_ms. Returns enum nvt_seg_err. */
int nvt_seg_lock(struct nvt_seg_handle *h, int timeout_ms);
void nvt_seg_close(struct nvt_seg_handle *h);

/*
 * Lists the PIDs that have a segment file in rundir, ascending, at most max.
 * Returns how many were found (may exceed max), or -1 with errno set.
 */
int nvt_seg_scan(const char *rundir, pid_t *pids, int max);

#endif /* NVT_SEGFILE_H */
