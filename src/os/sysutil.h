/*
 * sysutil.h - small system helpers shared by the CLI's modules: creating
 * directories, reading small files, listing processes (children: child.h).
 * Side effects; return codes, never print.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SYSUTIL_H
#define NVT_SYSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "core/ptree.h"

/* Creates dir and its missing parents with mode. Returns 0, or -1 with errno set. */
int nvt_mkdirs(const char *dir, mode_t mode);

/*
 * Reads a small regular file into buf (NUL-terminated): its start, or with
 * tail set its last len-1 bytes. Never blocks on a FIFO: anything but a
 * regular file gives EINVAL. Returns the bytes read, or -1 with errno set.
 */
ssize_t nvt_read_file(const char *path, char *buf, size_t len, int tail);

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

#endif /* NVT_SYSUTIL_H */
