/*
 * segcontainer.h - containers' run directories (segcontainer.c). Side effects: files.
 * Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGCONTAINER_H
#define NVT_SEGCONTAINER_H

#include "segfile.h"

/*
 * A container given a CDI device by root's runtime keeps its tasks'
 * segments in a directory of its own, base/containers/ID/run (ID: the OCI
 * container id), which the device's hook makes and binds at the container's
 * /run/nvtaskset: the container sees nothing else of base. Beside it,
 * base/containers/ID/pidns (root's, out of the container's reach) holds the
 * inode of the container's PID namespace, and on a line of its own its first
 * process's host PID and start time: a segment under run/ is trusted
 * only for a process of that namespace (its file named for it, and the
 * process in it where the reader may see its namespace: root always), so
 * nothing a container writes there names a process outside it.
 * base/containers and each ID directory are root's, written by nobody else:
 * anything else there is passed over (a user may make base/containers first
 * in the shared directory: the hook renames hers aside).
 */
/* The most containers a listing reads (only root makes them). */
#define NVT_CONTAINERS_MAX 4096

struct nvt_seg_container {
	char id[NVT_CONTAINER_ID_MAX + 1];
	uint64_t pidns; /* its PID namespace's inode */
	pid_t init;     /* its first process, as the host's /proc numbers it; 0: not recorded */
	uint64_t init_start; /* that process's start time (field 22 of /proc/PID/stat) */
};
/* 1 if id is a container id to make a directory for: 1 to NVT_CONTAINER_ID_MAX of
 * [A-Za-z0-9_.-], not starting with '.'. */
int nvt_seg_container_id_valid(const char *id);
/* Writes base/containers/ID/run. Returns 0, or -1 if it does not fit. */
int nvt_seg_container_base(char *buf, size_t len, const char *base, const char *id);
/* Opens uid's run directory (nvt_userdir_open) under container id's run directory, or under
 * base itself where id is "". Returns its fd, or -1 with errno set. */
int nvt_seg_container_userdir_open(const char *base, const char *id, uid_t uid);
/*
 * Reads the containers of base into *out (malloc'd; the caller frees it):
 * each ID directory of base/containers that is root's and written by nobody
 * else, whose pidns file is root's too. Entries that fail the check are
 * counted in *bad (and, the first, named in bad_name: "containers" itself, or
 * its entry). Returns how many, 0 where base has no containers directory, or
 * -1 with errno set.
 */
int nvt_seg_container_list(const char *base, struct nvt_seg_container **out, int *bad, char *bad_name,
			size_t bad_len);
/*
 * Makes c's directory under base (root's, for a CDI hook): base/containers
 * (a squatter's entry renamed aside), containers/ID (0755), its pidns file,
 * and run (mode 1777: any user of the container makes her run directory
 * there). One there already must record c->pidns. Returns 0, or -1 with the
 * reason in why.
 */
int nvt_seg_container_make(const char *base, const struct nvt_seg_container *c, char *why, size_t len);
/*
 * Removes container id's directory under base, and what its tasks left in
 * it, whatever its depth: without recursion, never through a link nor into a
 * mount point (what it holds stays), relative to directory fds. Returns 0, or
 * -1 with errno set (ENOENT: none).
 */
int nvt_seg_container_remove(const char *base, const char *id);
/* Opens directory name of dirfd on dirfd's own mount, never through a link. Returns its fd, or
 * -1 with errno set (EXDEV: a mount point; ELOOP: a link). */
int nvt_seg_container_open_below(int dirfd, const char *name);

#endif /* NVT_SEGCONTAINER_H */
