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

#endif /* NVT_SYSUTIL_H */
