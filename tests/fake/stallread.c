/*
 * stallread.c - preloaded into a reader of /proc (the exporter, -l, top), it stands in for a
 * process whose memory stalls its readers: an open of /proc/PID/cmdline or /proc/PID/environ
 * (or of each of the files STALLREAD_FILES names, words split by spaces: "maps environ") of a
 * process named STALLREAD_COMM (its /proc/PID/comm) waits until the reader is killed, as a
 * read under the memory map's lock of a process whose user keeps it held waits (one of her
 * threads faulting on a FUSE file of hers whose reads she never answers). Each open of her
 * cmdline, environ or maps, stalled or not, is appended as "open PID FILE" to STALLREAD_OPENS,
 * so that a test counts a reader's reads.
 * Before it waits it appends "stalled PID FILE by READER" to STALLREAD_LOG, so that a test sees
 * the stall happen (READER: the process that waits, a viewer's child). With STALLREAD_UNKILLABLE
 * set, the reader keeps SIGKILL from such a process (as where such a wait ignores it). Test code:
 * it calls the next definitions through dlsym.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

/* 1 if file is one of the words of files. */
static int named(const char *files, const char *file)
{
	size_t n = strlen(file);

	for (const char *p = files; *p; p += strcspn(p, " ")) {
		p += strspn(p, " ");
		if (!strncmp(p, file, n) && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	}
	return 0;
}

/* Appends "WHAT PID FILE" to the file log names, if it is set. */
static void note(const char *log, const char *what, long pid, const char *file)
{
	FILE *out;

	if (log && (out = REAL(fopen)(log, "a"))) {
		fprintf(out, "%s %ld %s\n", what, pid, file);
		fclose(out);
	}
}

/* Waits for good if path is a memory file of a process named STALLREAD_COMM. */
static void maybe_stall(const char *path)
{
	const char *want = getenv("STALLREAD_COMM"), *log = getenv("STALLREAD_LOG");
	const char *files = getenv("STALLREAD_FILES");
	char file[16], comm_path[64], comm[64] = "";
	long pid;
	FILE *f, *out;

	if (!files)
		files = "cmdline environ";
	if (!want || !path || sscanf(path, "/proc/%ld/%15s", &pid, file) != 2 ||
	    !(named(files, file) || named("cmdline environ maps", file)))
		return;
	snprintf(comm_path, sizeof(comm_path), "/proc/%ld/comm", pid);
	f = REAL(fopen)(comm_path, "r");
	if (!f)
		return;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	if (strcmp(comm, want))
		return;
	note(getenv("STALLREAD_OPENS"), "open", pid, file);
	if (!named(files, file))
		return;
	if (log && (out = REAL(fopen)(log, "a"))) {
		fprintf(out, "stalled %ld %s by %ld\n", pid, file, (long)getpid());
		fclose(out);
	}
	for (;;)
		pause();
}

/* 1 if pid is a process whose read stalled ("stalled ... by PID" in STALLREAD_LOG). */
static int stalled_reader(pid_t pid)
{
	const char *log = getenv("STALLREAD_LOG");
	char line[128];
	long by;
	int found = 0;
	FILE *f = log ? REAL(fopen)(log, "r") : NULL;

	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, " by ");
		found = at && sscanf(at, " by %ld", &by) == 1 && by == (long)pid;
	}
	if (f)
		fclose(f);
	return found;
}

/* With STALLREAD_UNKILLABLE set, a SIGKILL sent to a process whose read stalled is not
 * delivered: it stays in its read, as a read whose wait SIGKILL does not end stays (kernels
 * where the memory map's lock is taken unkillably). */
int kill(pid_t pid, int sig)
{
	if (sig == SIGKILL && pid > 0 && getenv("STALLREAD_UNKILLABLE") && stalled_reader(pid))
		return 0;
	return REAL(kill)(pid, sig);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	maybe_stall(path);
	return REAL(open)(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	maybe_stall(path);
	return REAL(openat)(dir, path, flags, mode);
}
