/*
 * segleft.h - what containers leave in the run directory (segleft.c).
 *
 * A container is stopped once its first process ended (the runtime's poststop
 * hooks run then): the init of its PID namespace, whose end ends every process
 * in it. A directory whose recorded first process is gone outlived its
 * container: its poststop hook did not run (a runtime killed, a host that lost
 * power, a hook that failed). Not the namespace's inode: the kernel gives a
 * dead namespace's inode to the next one made (measured: the next
 * container's, within a second).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGLEFT_H
#define NVT_SEGLEFT_H

#include <stdint.h>

struct nvt_seg_container; /* segcontainer.h */

/*
 * Which of containers v (n, nvt_seg_container_list's) are gone: gone[i] is 1 where
 * v[i]'s first process (PID and start time) no longer runs, else 0 (0 too
 * where none is recorded). Only root in the initial PID namespace, with /proc
 * its own, judges: its /proc numbers PIDs as the hooks recorded them, and
 * shows every process. Returns 0, or -1 with errno set (EPERM: not such a
 * reader; another errno: a process that could not be read, so none is
 * judged gone).
 */
int nvt_seg_container_gone(const struct nvt_seg_container *v, int n, char *gone);
/* The most entries nvt_seg_container_size looks at (a --cdi run directory holds 65,536 files). */
#define NVT_CTR_SIZE_ENTRIES 131072
struct nvt_seg_container_size {
	uint64_t bytes;   /* the space its entries take: their blocks (a file of several links, its share) */
	uint64_t entries; /* files, directories and the rest, counted */
	int whole;        /* 1: every entry counted; 0: the walk stopped at its bound, or was turned back */
};
/*
 * Counts what container id's directory under base holds into *size: a walk
 * without recursion (two descriptors at a time, back up through "..", each
 * step checked against the way down: a directory moved away ends the walk),
 * never through a link nor into a mount point, at most NVT_CTR_SIZE_ENTRIES
 * entries. Returns 0, or -1 with errno set (ENOENT: none).
 */
int nvt_seg_container_size(const char *base, const char *id, struct nvt_seg_container_size *size);
/*
 * Removes the directories of containers under base that are gone
 * (nvt_seg_container_gone): a hook of root's runtime tidies what a container whose
 * poststop hook never ran left. Returns how many it removed, or -1 with
 * errno set (none judged).
 */
int nvt_seg_container_tidy(const char *base);

#endif /* NVT_SEGLEFT_H */
