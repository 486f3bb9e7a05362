/*
 * sysutil.h - small system helpers shared by the CLI's modules: running a
 * function in a child process under a time limit, creating directories,
 * reading small files, listing processes. Side effects; return codes, never print.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SYSUTIL_H
#define NVT_SYSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "core/ptree.h"

enum nvt_child_rc {
	NVT_CHILD_OK = 0,
	NVT_CHILD_TIMEOUT, /* killed after timeout_ms */
	NVT_CHILD_FAILED,  /* crashed or exited without a whole result */
	NVT_CHILD_ESYS,    /* pipe or fork failed; errno says why */
};

/*
 * Runs fn(ctx, result) in a forked child and copies the result_size bytes
 * it leaves in result back to the caller's result. The child is killed if it
 * takes longer than timeout_ms. Returns enum nvt_child_rc; result is zeroed
 * unless NVT_CHILD_OK.
 */
int nvt_child_call(void (*fn)(void *ctx, void *result), void *ctx, void *result,
		   size_t result_size, int timeout_ms);

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
 * (malloc'd; the caller frees it). Processes that end meanwhile are left out.
 * Returns the count, or -1 with errno set.
 */
int nvt_proc_links(struct nvt_proc_link **links);

#endif /* NVT_SYSUTIL_H */
