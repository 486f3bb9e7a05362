/*
 * progpath.h - the program a command line names, found as execvp(3) would find it, so that
 * a command that cannot run is refused before anything is started for it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_PROGPATH_H
#define NVT_PROGPATH_H

#include <stddef.h>

/*
 * Finds the program execvp would run for name: name itself where it holds a '/', else the
 * first executable regular file name in a directory of PATH (unset: the system's default
 * path; an empty entry: the current directory). A directory of PATH that cannot be
 * searched is passed over (as a shell does: execvp would go on past it too). Writes the
 * program's path to path (len). Returns 0, or -1 with errno: ENOENT (there is none),
 * EACCES (a file of that name that cannot be executed, and none that can), ENAMETOOLONG.
 */
int nvt_progpath_find(const char *name, char *path, size_t len);

#endif
