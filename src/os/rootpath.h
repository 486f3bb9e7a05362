/*
 * rootpath.h - paths that only root can change, for what nvtaskset does as
 * root on a path it is given: the Slurm plugin's MPS control binary and the
 * MPS directories it makes and hands to every user's tasks, and the run
 * directory --cdi mounts a tmpfs on. A path is root's when every
 * directory on it, from /, belongs to root and lets nobody else write in
 * it, except that a sticky one (/tmp) may: nobody else can rename or
 * remove what root has there. Group write counts as others' unless the
 * group is root's. Symbolic links are followed only where they belong to
 * root, and the path returned has none.
 *
 * Side effects: reads directories (and, asked to, makes
 * them). Returns codes and a reason; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_OS_ROOTPATH_H
#define NVT_OS_ROOTPATH_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Checks that path (absolute) is a directory of root's that only root may
 * write in, on a path of root's. With mode (not 0), missing directories are
 * made, root's, with that mode. Copies the path without symbolic links to
 * real. Returns 0, or -1 with why (which names the directory at fault).
 */
int nvt_root_dir(const char *path, mode_t mode, char *real, size_t real_len, char *why,
		 size_t len);

/*
 * Checks that path (absolute) is an executable regular file of root's that
 * only root may write, on a path of root's. Copies the path without
 * symbolic links to real. Returns 0, or -1 with why.
 */
int nvt_root_exec(const char *path, char *real, size_t real_len, char *why, size_t len);

/*
 * Checks that path (absolute) is a directory of root's, of any mode (a file
 * system is to be mounted on it), on a path of root's. Copies the path
 * without symbolic links to real. Returns 0, or -1 with why.
 */
int nvt_root_mount_point(const char *path, char *real, size_t real_len, char *why, size_t len);

#endif /* NVT_OS_ROOTPATH_H */
