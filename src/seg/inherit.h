/*
 * inherit.h - where a new task's partitions come from: the shim's side.
 *
 * A forked child copies its parent's segment in its fork handler, and a
 * program exec'd in the same process adopts the segment its PID had. A
 * process that makes a new segment (it did not fork from a task: posix_spawn,
 * vfork, clone without fork handlers, as Python's subprocess, multiprocessing's
 * "spawn" and "forkserver" and dash start programs) takes the partitions of
 * the process it was before an exec that changed its user, else those of its
 * nearest ancestor with a segment it trusts, else the environment's. The rule
 * in full is in docs/design.md ("Made"; nvtaskset.h states it briefly).
 *
 * Reads other processes' segments as the CLI does: through a checked run
 * directory, O_NOFOLLOW | O_NONBLOCK, type and owner checked before any read,
 * by copies (pread), never mapped; the segment must name that very process
 * (PID namespace, PID, start time). Never blocks, and takes no lock that
 * another user could hold. Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_INHERIT_H
#define NVT_INHERIT_H

#include "nvtaskset.h"
#include "core/ptree.h"
#include "segfile.h"
#include "core/segment.h"

/* Ancestors looked at, at most: a few reads of /proc each, once at start. */
#define NVT_INHERIT_MAX_DEPTH 32

/* Partitions read from another segment. */
struct nvt_inherited {
	int n;                                /* slots that name a GPU */
	int slot[NVT_MAX_GPUS];               /* their indices in the segment read */
	struct nvt_slot_view view[NVT_MAX_GPUS];
	pid_t from;                           /* the process read */
};

enum nvt_inherit_rc {
	NVT_INHERIT_UNUSABLE = -1, /* found, but a slot was mid-write or refused */
	NVT_INHERIT_NONE = 0,      /* none found */
	NVT_INHERIT_FOUND = 1,     /* out holds its partitions (possibly none) */
};

/*
 * After an exec that changed the user (setpriv, gosu), the segment this very
 * process had lies in root's run directory: reads its partitions (slots a
 * dead writer left half-written are left out). own is the new segment.
 * Returns enum nvt_inherit_rc (never UNUSABLE).
 */
int nvt_inherit_same_pid(const char *base, const struct nvt_seg_own *own, struct nvt_inherited *out);

/*
 * Reads the partitions of the calling process's nearest ancestor that has a
 * live segment in the run directory of the caller's effective user or of
 * root, following parent PIDs in /proc (only where /proc numbers PIDs as the
 * caller's namespace does), at most NVT_INHERIT_MAX_DEPTH of them, never
 * past PID 1 or out of the PID namespace, nor past stop (NULL: no such
 * ancestor), whose own segment is still read. A process whose parent lies
 * outside its PID namespace (one that podman exec started in a container)
 * looks at the namespace's PID 1 (the container's first process). own is the caller's new
 * segment (its PID namespace; its PID and parent as nvt_seg_create read them
 * in /proc). Reads /proc/PID/status only of ancestors with a file of their
 * segment's name. Returns enum nvt_inherit_rc. Never blocks:
 * an ancestor whose segment is still being made (its shim is filling it:
 * docs/design.md, "Published") reads as UNUSABLE.
 */
int nvt_inherit_ancestor(const char *base, const struct nvt_seg_own *own,
			 const struct nvt_proc_id *stop, struct nvt_inherited *out);

#endif /* NVT_INHERIT_H */
