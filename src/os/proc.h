/*
 * proc.h - what /proc says about processes: identity (PID namespace, PID,
 * start time, users), parents, environment, threads. The one module that
 * reads /proc for the rest of nvtaskset (os/proc.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PROC_H
#define NVT_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "core/ptree.h"

/* Inode of the initial PID namespace (PROC_PID_INIT_INO, include/linux/proc_ns.h). */
#define NVT_INIT_PIDNS 0xeffffffcu

/* What the caller's /proc says about a process. */
struct nvt_proc {
	pid_t pid;           /* as the caller's /proc numbers it */
	pid_t ns_pid;        /* as its own PID namespace numbers it */
	int nested;          /* it lives in a PID namespace below /proc's */
	uint64_t pidns;      /* inode of its PID namespace; 0 if not readable */
	uint64_t start_time; /* field 22 of /proc/<pid>/stat */
	uid_t uid[4];        /* real, effective, saved, filesystem */
	int hidden;          /* alive, but /proc hides it (hidepid): no start time, no uids */
};

/*
 * A zombie, to the readers of a process's identity below, is a process that has ended and
 * not been reaped: its stat says 'Z' (or 'X') and no other thread of its group lives. A
 * thread-group leader that has ended while other threads of its group live (main called
 * pthread_exit, or another thread calls exec) reads 'Z' too, and is alive: its process runs.
 */
/* Reads field 22 (start time) of /proc/<pid>/stat. Returns 0, or -1 with
 * errno set (ESRCH for a zombie; EAGAIN: its state would not tell). */
int nvt_proc_start_time(pid_t pid, uint64_t *start_time);
/* Reads /proc/<pid>/stat (pid 0: /proc/self/stat, whose PID says which PID
 * namespace /proc numbers in). Returns 0 (state 'Z' for a leader whose group lives),
 * or -1 with errno set (ESRCH for a zombie; EAGAIN: its state would not tell). */
int nvt_proc_stat(pid_t pid, struct nvt_stat *st);
/* Reads the effective uid of pid from /proc/<pid>/status. Returns 0, or -1 with errno set. */
int nvt_proc_euid(pid_t pid, uid_t *euid);
/* Fills out for pid from /proc: its users and namespace read between two stats that name
 * one process (nvt_status_settle). Returns 0, or -1 with errno set (ENOENT or ESRCH: no such
 * process; EAGAIN: its PID changed hands, or it was replaced, at every read: no answer). */
int nvt_proc_info(pid_t pid, struct nvt_proc *out);
/*
 * The inode of /proc/PID/WHAT (pid 0: this process's): one of its namespaces
 * ("ns/pid", "ns/user", "ns/mnt") or its executable ("exe"), into *ino (and
 * the file system's device into *dev, if dev is not NULL). Returns 0, or -1
 * with errno set.
 */
int nvt_proc_inode(pid_t pid, const char *what, uint64_t *dev, uint64_t *ino);
/* Opens /proc/PID/WHAT (pid 0: this process's) read-only, close-on-exec: a namespace's file for
 * setns(2). Returns the descriptor, or -1 with errno set. */
int nvt_proc_ns_open(pid_t pid, const char *what);
/* The path of process pid's executable (pid 0: this process's), NUL-terminated in buf. Returns
 * its length, or -1 with errno set (ENAMETOOLONG: it does not fit). */
ssize_t nvt_proc_exe(pid_t pid, char *buf, size_t len);
/* How many descriptors process pid (0: this one) has open. Returns it, or -1 with errno set. */
int nvt_proc_fd_count(pid_t pid);
/* Whether process pid and this one have the same WHAT (nvt_proc_inode: device and inode alike):
 * 1 or 0, or -1 with errno set. */
int nvt_proc_shares(pid_t pid, const char *what);
/* Inode of the caller's PID namespace, or 0. */
uint64_t nvt_own_pidns(void);
/* Inode of pid's PID namespace (/proc/PID/ns/pid: its user's or root's to read), or 0 with
 * errno set (ENOENT: gone). A zombie's is its namespace still. */
uint64_t nvt_proc_pidns(pid_t pid);
/* 1 if /proc shows the caller's own PID namespace (it can judge PIDs in it). */
int nvt_procfs_is_own(void);
/* The same: 1, 0, or -1 with errno set when /proc/self cannot be read
 * (EMFILE, say: not an answer). */
int nvt_procfs_own(void);
/* 1 if pid lives although /proc does not show it (mounted hidepid=2: another
 * user's process), 0 if it is gone or cannot be told. */
int nvt_proc_hidden(pid_t pid);
/*
 * 1 if every process of every PID namespace is in the caller's sight, else 0: /proc is its
 * own (own: what nvt_procfs_own answered), its PID namespace is the initial one, and /proc
 * hides no process from it (hidepid=2 hides other users' from all but root; /proc/1, root's,
 * is the test of it). The scans of the run directories and the judging of containers that
 * are gone (seg/) ask it.
 */
int nvt_procfs_shows_all(int own);

/*
 * Opens a pidfd (O_CLOEXEC) for pid if its start time is start_time: the
 * process itself, never another one that got its PID later. Returns the fd,
 * or -1 with errno set (ESRCH: gone, a zombie, or another process; ENOSYS or
 * EPERM: the kernel, or a seccomp filter, gives none).
 */
int nvt_proc_pidfd(pid_t pid, uint64_t start_time);
/* 1 if the process of pidfd fd has not ended (a zombie has ended), 0 if it has,
 * -1 with errno set. */
int nvt_pidfd_alive(int fd);

/* Copies the value of variable name in pid's environment (/proc/PID/environ,
 * readable by its user and root) to buf. Returns 0, or -1 if unset or unreadable. */
int nvt_proc_env(pid_t pid, const char *name, char *buf, size_t len);

/* The process (thread group) that thread tid belongs to, from /proc/TID/status
 * (readable for a thread that /proc does not list). Returns 0, or -1 with errno set. */
int nvt_proc_tgid(pid_t tid, pid_t *tgid);

/*
 * Lists every process /proc shows with its parent, sorted by PID, in *links
 * (malloc'd; the caller frees it). Processes that end meanwhile are left out;
 * one that cannot be read for another reason (EMFILE, ENOMEM) fails the whole
 * list. Returns the count, or -1 with errno set.
 */
int nvt_proc_links(struct nvt_proc_link **links);

/*
 * Calls each(pid, arg) for every process /proc lists, in its order, until
 * each returns non-zero. Returns that value (0 when every process was seen),
 * or -1 with errno set when /proc cannot be read; errno is each's when it
 * stopped the walk.
 */
int nvt_proc_each(int (*each)(pid_t pid, void *arg), void *arg);
/* As nvt_proc_each, for the numbered entries of dir ("/proc/self/task": this process's threads,
 * each given its thread id). */
int nvt_proc_each_in(const char *dir, int (*each)(pid_t pid, void *arg), void *arg);

/* Reads pid's uid_map (pid 0: the caller's) whole into buf. Returns 0, or -1
 * with errno set (EFBIG: longer than len - 1 bytes). */
int nvt_proc_uid_map(pid_t pid, char *buf, size_t len);
/* A uid_map's longest text: 340 lines (the kernel's limit) of three numbers. */
#define NVT_UID_MAP_MAX (340 * 33 + 1)

/* Reads pid's command line (NUL-separated words) into buf, as nvt_read_file.
 * Returns the bytes read, or -1 with errno set. */
ssize_t nvt_proc_cmdline(pid_t pid, char *buf, size_t len);
/* Reads pid's command name (/proc/PID/comm, with its newline) into buf, as
 * nvt_read_file. Returns the bytes read, or -1 with errno set. */
ssize_t nvt_proc_comm(pid_t pid, char *buf, size_t len);

/* The container pid runs in, as its cgroup names it (nvt_cgroup_container): the
 * first 12 digits of its id into id (len >= NVT_CONTAINER_ID_TEXT). Returns 0,
 * or -1 if none is named or /proc/PID/cgroup cannot be read. */
int nvt_proc_container(pid_t pid, char *id, size_t len);

/*
 * Calls each for every line of /proc/PID/maps (readable by pid's user and
 * root) until one returns 1 (a line longer than 8 KiB is skipped). Returns
 * 1 if one did, else 0 if one returned 0, else -1 (also when the maps
 * cannot be read).
 */
int nvt_proc_maps(pid_t pid, int (*each)(const char *line, void *arg), void *arg);
/* What a reader of maps that gives up on a read returns where it did not end in time
 * (os/child.h's nvt_proc_maps_bounded): nvt_proc_maps itself never does. */
#define NVT_PROC_MAPS_LATE (-2)

#endif /* NVT_PROC_H */
