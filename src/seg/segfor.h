/*
 * segfor.h - another process's segment, made before its program runs
 * (segfor.c): a CDI hook's, for a container's first process. Side effects: files.
 * Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGFOR_H
#define NVT_SEGFOR_H

#include "segfile.h"

enum nvt_seg_make_for_rc {
	NVT_SEG_MADE = 0,         /* made, for the program pid execs to adopt */
	NVT_SEG_MADE_ALREADY = 1, /* a segment that names pid was there: left as it is */
};
/*
 * Makes the control segment of process pid (as the caller's /proc numbers
 * it; a container's first process, which the runtime holds before its
 * exec): in uid's run directory under base (made uid's where missing, as
 * its shim would), owned by uid and gid, its header naming pid (PID
 * namespace, PID there, start time), slots 0 .. n-1 holding views (each
 * with its uuid), under the writer's lock. The program pid execs as uid
 * adopts it. A file of that name that a process gone left is replaced.
 * Root's, or uid's own. Returns enum nvt_seg_make_for_rc, or -1 with the
 * reason in why.
 */
int nvt_seg_make_for(const char *base, pid_t pid, uid_t uid, gid_t gid,
		     const struct nvt_slot_view *views, int n, char *why, size_t len);

#endif /* NVT_SEGFOR_H */
