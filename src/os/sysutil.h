/*
 * sysutil.h - small system helpers shared by the CLI's modules: creating
 * directories and reading them, reading small files and PID files
 * (children: child.h).
 * Side effects; return codes, never print.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SYSUTIL_H
#define NVT_SYSUTIL_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "core/ptree.h"

/* Creates dir and its missing parents with mode. Returns 0, or -1 with errno set. */
int nvt_mkdirs(const char *dir, mode_t mode);

/*
 * Reads a small regular file into buf (NUL-terminated): its start, or with
 * tail set its last len-1 bytes. Never blocks on a FIFO: anything but a
 * regular file gives EINVAL. Returns the bytes read, or -1 with errno set.
 */
ssize_t nvt_read_file(const char *path, char *buf, size_t len, int tail);

/*
 * Writes len bytes of buf at offset at of fd, however many writes it takes
 * (a write cut short, EINTR). Returns 0, or -1 with errno set (ENOSPC for a
 * write that wrote nothing).
 */
int nvt_pwrite_all(int fd, const void *buf, size_t len, off_t at);
/* The same at fd's position (a pipe, a terminal, standard output). */
int nvt_write_all(int fd, const void *buf, size_t len);

/*
 * Whether dir is the root of a file system of its own (not its parent's: a
 * mount there, not a directory of the file system it lies on) mounted with
 * every ST_* flag of st_flags (statvfs's: ST_NOSUID, ST_NODEV, ST_NOEXEC).
 * Returns 1, 0, or -1 with errno set.
 */
int nvt_fs_is_own(const char *dir, unsigned long st_flags);
/* Mounts a tmpfs on dir, nosuid, nodev and noexec, with options (mode=, size=,
 * nr_inodes=). Returns 0, or -1 with errno set. */
int nvt_fs_mount_tmpfs(const char *dir, const char *options);
/* Unmounts what is mounted on dir (never through a link at its end). Returns 0, or -1 with
 * errno set. */
int nvt_fs_unmount(const char *dir);

/*
 * The directory open on dirfd, for readdir from its start, through a copy of
 * dirfd (dup; fdopendir makes it close-on-exec): dirfd stays open for the
 * caller's *at calls, and closedir closes the copy alone. The copy shares
 * dirfd's reading position, which this rewinds. dirfd must be open for
 * reading (not O_PATH).
 * Returns the DIR, or NULL with errno set.
 */
DIR *nvt_opendir_fd(int dirfd);

/*
 * Removes name from the directory dirfd if it is still the file dev, ino (not
 * one put in its place since, nor what a link there points to) and, unless
 * ctime is NULL, its status last changed at ctime: a caller that does not
 * hold the file (an fd kept open from when it looked) gives the ctime it saw,
 * since a file system that reuses a freed inode's number at once (ext4) may
 * give it to a file made at the name meanwhile, whose ctime is its making's.
 * The look and the removal are two system calls: whoever may write in dirfd
 * can put another file at name between them, and that one goes. Callers in a
 * run directory hold the segment's writer's lock around it
 * (nvt_seg_unlink_judged), which keeps nvtaskset's own makers out; the
 * directory's user, the only other who may write there, can swap only her
 * own files. Returns 1 if it removed name, else 0.
 */
int nvt_unlink_same(int dirfd, const char *name, dev_t dev, ino_t ino, const struct timespec *ctime);

/* What nvt_pid_file_read also takes: a file of root's, a file with more than one link. */
enum nvt_pid_file_flags { NVT_PID_FILE_ROOT = 1, NVT_PID_FILE_LINKED = 2 };

/*
 * Reads a PID file of a shared directory: name in the directory dirfd (or a
 * path, with AT_FDCWD), opened without following a link or blocking on a
 * FIFO; only a regular file owned by uid (or, with NVT_PID_FILE_ROOT, by
 * root) counts, its owner wrote it: nobody else could have put it there; and
 * unless NVT_PID_FILE_LINKED, only one with one link. Its text is the PID's
 * digits, then with start " START\n" (the writer's start time, into
 * *start), without start whatever its writer adds. Returns the PID (> 0)
 * with the file's owner in *owner (unless NULL), or 0: no such file, or not
 * such text. Whether the process lives is the caller's question (the PID
 * may be reused).
 */
pid_t nvt_pid_file_read(int dirfd, const char *name, uid_t uid, int flags, uid_t *owner,
			uint64_t *start);

/*
 * Renames entry leaf of basefd (st: its lstat), another user's made where
 * root's belongs, aside as LEAF.squatted.UID.INODE.RANDOM: no name that is
 * read, and none its owner can take first (she knows her uid and inode; a
 * name of hers there would fail the rename); the new name into name (len;
 * NULL: not wanted). Root only (the shared directory is sticky). Returns 0,
 * or -1 with errno set.
 */
int nvt_rename_aside(int basefd, const char *leaf, const struct stat *st, char *name, size_t len);

#endif /* NVT_SYSUTIL_H */
