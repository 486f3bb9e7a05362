/*
 * shimstate.c - the bottom of the shim: the state its files share (struct
 * shim_state, shimstate.h) and its warnings, each kind said once per process.
 * Every other file of the shim may call it; it calls none of them.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "shimstate.h"

struct shim_state shim;

/* Writes prefix and the message as one line on stderr; keeps errno. */
static void say(const char *prefix, const char *fmt, va_list ap)
{
	char line[512];
	int n, saved = errno;

	n = snprintf(line, sizeof(line), "%s", prefix);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	/* One line, whatever a value from the environment or a task holds. */
	for (int i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nothing sensible to do */
	}
	errno = saved;
}

void shim_warn(const char *fmt, ...)
{
	va_list ap;

	if (shim.quiet)
		return;
	va_start(ap, fmt);
	say("nvtaskset: warning: ", fmt, ap);
	va_end(ap);
}

void shim_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("nvtaskset: ", fmt, ap);
	va_end(ap);
}

/* Returns 1 the first time it is called for kind, else 0. */
int shim_first_time(enum warn_kind kind)
{
	return !(__atomic_fetch_or(&shim.warned, (unsigned)kind, __ATOMIC_RELAXED) & (unsigned)kind);
}
