/*
 * inject.c - a fault injector for nvtaskset's fault suite (tests/faults/run.sh),
 * loaded with LD_PRELOAD before the shim.
 *
 * It counts the calls that a full disk or a full descriptor table could fail
 * and fails (or kills the process at) one of them:
 *
 *   FAULT_ERRNO=ENOSPC  calls that allocate space under FAULT_PREFIX (a path
 *                       prefix, ':'-separated): open/openat with O_CREAT,
 *                       mkdir/mkdirat, write/pwrite on such a file, ftruncate,
 *                       fallocate/posix_fallocate, rename/link/symlink.
 *   FAULT_ERRNO=EMFILE  calls that make a descriptor: open/openat (anywhere),
 *                       fopen, opendir, dup/dup2/dup3, pipe/pipe2.
 *   FAULT_AT=N          the Nth such call fails (1 = the first); 0 or unset:
 *                       none, only counted. FAULT_STICKY=1: it and every later
 *                       one fail (a disk that stays full).
 *   FAULT_KILL=1        instead of failing, the process kills itself with
 *                       SIGKILL at that call (kill -9 at that point).
 *   FAULT_EXE=NAME      only in processes whose executable is named NAME.
 *   FAULT_LOG=FILE      each process appends "PID EXE CALLS INJECTED" at exit,
 *                       and "inject PID CALL N" when it injects (FAULT_TRACE=1:
 *                       "call PID CALL N" at each call it counts).
 *
 * Test code: it may print, and it calls the next definitions through dlsym.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

enum kind { SPACE, DESCRIPTOR };

static int active = -1;  /* -1: not set up yet */
static int want_errno;   /* ENOSPC or EMFILE */
static long fault_at, calls, injected;
static int sticky, kill_mode;
static char prefixes[1024];
static __thread int inside;
static __thread const char *trace_path; /* the path of the call being counted, for FAULT_TRACE */

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static void log_line(const char *fmt, ...)
{
	const char *path = getenv("FAULT_LOG");
	char line[512];
	va_list ap;
	int fd, n;

	if (!path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	if (n > 0 && syscall(SYS_write, fd, line, (size_t)n) < 0) {
		/* a test log: nothing to do */
	}
	syscall(SYS_close, fd);
}

static const char *exe_name(void)
{
	static char exe[256];
	ssize_t n;

	if (exe[0])
		return exe;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	return strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
}

static void setup(void)
{
	const char *e = getenv("FAULT_ERRNO"), *at = getenv("FAULT_AT"), *only = getenv("FAULT_EXE");
	const char *pre = getenv("FAULT_PREFIX");

	active = 0;
	if (!e || (only && strcmp(only, exe_name())))
		return;
	want_errno = !strcmp(e, "EMFILE") ? EMFILE : ENOSPC;
	fault_at = at ? strtol(at, NULL, 10) : 0;
	sticky = getenv("FAULT_STICKY") && !strcmp(getenv("FAULT_STICKY"), "1");
	kill_mode = getenv("FAULT_KILL") && !strcmp(getenv("FAULT_KILL"), "1");
	snprintf(prefixes, sizeof(prefixes), "%s", pre ? pre : "");
	active = 1;
}

__attribute__((destructor)) static void report(void)
{
	if (active == 1)
		log_line("%ld %s %ld %ld\n", (long)getpid(), exe_name(), calls, injected);
}

static int under_prefix(const char *path)
{
	char copy[1024], *save = NULL;

	if (!path)
		return 0;
	snprintf(copy, sizeof(copy), "%s", prefixes);
	for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
		if (*p && !strncmp(path, p, strlen(p)))
			return 1;
	return 0;
}

static int fd_under_prefix(int fd)
{
	char link[64], path[1024];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return under_prefix(path);
}

/* Counts an eligible call; returns 1 if it must fail (errno set). */
static int fault(enum kind kind, int eligible, const char *call)
{
	if (active < 0)
		setup();
	const char *path = trace_path;

	trace_path = NULL;
	if (!active || inside || !eligible || (kind == SPACE) != (want_errno == ENOSPC))
		return 0;
	calls++;
	if (getenv("FAULT_TRACE"))
		log_line("call %ld %s %ld %s\n", (long)getpid(), call, calls, path ? path : "");
	if (!fault_at || calls < fault_at || (calls > fault_at && !sticky))
		return 0;
	injected++;
	log_line("inject %ld %s %ld %s\n", (long)getpid(), call, calls, path ? path : "");
	if (kill_mode)
		kill(getpid(), SIGKILL);
	errno = want_errno;
	return 1;
}

static int space_path(const char *path)
{
	int r;

	inside++;
	r = under_prefix(path);
	inside--;
	return r;
}

static int space_fd(int fd)
{
	int r;

	inside++;
	r = fd_under_prefix(fd);
	inside--;
	return r;
}

static int at_path(int dirfd, const char *path)
{
	char full[1024], link[64], dir[900];
	ssize_t n;

	if (!path)
		return 0;
	if (path[0] == '/' || dirfd == AT_FDCWD)
		return space_path(path);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
	inside++;
	n = readlink(link, dir, sizeof(dir) - 1);
	inside--;
	if (n <= 0)
		return 0;
	dir[n] = '\0';
	snprintf(full, sizeof(full), "%s/%s", dir, path);
	return space_path(full);
}

#define OPEN_MODE(flags)                                                                   \
	mode_t mode = 0;                                                                   \
	if ((flags) & (O_CREAT | __O_TMPFILE)) {                                           \
		va_list ap;                                                                \
		va_start(ap, flags);                                                       \
		mode = va_arg(ap, mode_t);                                                 \
		va_end(ap);                                                                \
	}

int open(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	trace_path = path;
	if (fault(DESCRIPTOR, 1, "open") || fault(SPACE, (flags & O_CREAT) && space_path(path), "open"))
		return -1;
	return REAL(open)(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	if (fault(DESCRIPTOR, 1, "open") || fault(SPACE, (flags & O_CREAT) && space_path(path), "open"))
		return -1;
	return REAL(open64)(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	trace_path = path;
	if (fault(DESCRIPTOR, 1, "openat") ||
	    fault(SPACE, (flags & O_CREAT) && at_path(dirfd, path), "openat"))
		return -1;
	return REAL(openat)(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	if (fault(DESCRIPTOR, 1, "openat") ||
	    fault(SPACE, (flags & O_CREAT) && at_path(dirfd, path), "openat"))
		return -1;
	return REAL(openat64)(dirfd, path, flags, mode);
}

FILE *fopen(const char *path, const char *how)
{
	trace_path = path;
	if (fault(DESCRIPTOR, 1, "fopen") || fault(SPACE, how[0] != 'r' && space_path(path), "fopen"))
		return NULL;
	return REAL(fopen)(path, how);
}

FILE *fopen64(const char *path, const char *how)
{
	if (fault(DESCRIPTOR, 1, "fopen") || fault(SPACE, how[0] != 'r' && space_path(path), "fopen"))
		return NULL;
	return REAL(fopen64)(path, how);
}

DIR *opendir(const char *path)
{
	trace_path = path;
	if (fault(DESCRIPTOR, 1, "opendir"))
		return NULL;
	return REAL(opendir)(path);
}

int dup(int fd)
{
	return fault(DESCRIPTOR, 1, "dup") ? -1 : REAL(dup)(fd);
}

int dup2(int fd, int to)
{
	return fault(DESCRIPTOR, 1, "dup2") ? -1 : REAL(dup2)(fd, to);
}

int dup3(int fd, int to, int flags)
{
	return fault(DESCRIPTOR, 1, "dup3") ? -1 : REAL(dup3)(fd, to, flags);
}

int pipe(int fds[2])
{
	return fault(DESCRIPTOR, 1, "pipe") ? -1 : REAL(pipe)(fds);
}

int pipe2(int fds[2], int flags)
{
	return fault(DESCRIPTOR, 1, "pipe2") ? -1 : REAL(pipe2)(fds, flags);
}

int mkdir(const char *path, mode_t mode)
{
	return fault(SPACE, space_path(path), "mkdir") ? -1 : REAL(mkdir)(path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
	return fault(SPACE, at_path(dirfd, path), "mkdirat") ? -1 : REAL(mkdirat)(dirfd, path, mode);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return fault(SPACE, fd > 2 && space_fd(fd), "write") ? -1 : REAL(write)(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t at)
{
	return fault(SPACE, space_fd(fd), "pwrite") ? -1 : REAL(pwrite)(fd, buf, n, at);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t at)
{
	return fault(SPACE, space_fd(fd), "pwrite") ? -1 : REAL(pwrite64)(fd, buf, n, at);
}

int ftruncate(int fd, off_t len)
{
	return fault(SPACE, space_fd(fd), "ftruncate") ? -1 : REAL(ftruncate)(fd, len);
}

int ftruncate64(int fd, off64_t len)
{
	return fault(SPACE, space_fd(fd), "ftruncate") ? -1 : REAL(ftruncate64)(fd, len);
}

int fallocate(int fd, int mode, off_t at, off_t len)
{
	return fault(SPACE, space_fd(fd), "fallocate") ? -1 : REAL(fallocate)(fd, mode, at, len);
}

int fallocate64(int fd, int mode, off64_t at, off64_t len)
{
	return fault(SPACE, space_fd(fd), "fallocate") ? -1 : REAL(fallocate64)(fd, mode, at, len);
}

int posix_fallocate(int fd, off_t at, off_t len)
{
	/* It returns the error rather than setting errno. */
	return fault(SPACE, space_fd(fd), "posix_fallocate") ? ENOSPC
							      : REAL(posix_fallocate)(fd, at, len);
}

int posix_fallocate64(int fd, off64_t at, off64_t len)
{
	return fault(SPACE, space_fd(fd), "posix_fallocate") ? ENOSPC
							      : REAL(posix_fallocate64)(fd, at, len);
}

int rename(const char *from, const char *to)
{
	return fault(SPACE, space_path(to), "rename") ? -1 : REAL(rename)(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	return fault(SPACE, at_path(tofd, to), "renameat") ? -1 : REAL(renameat)(fromfd, from, tofd, to);
}

int link(const char *from, const char *to)
{
	return fault(SPACE, space_path(to), "link") ? -1 : REAL(link)(from, to);
}

int linkat(int fromfd, const char *from, int tofd, const char *to, int flags)
{
	return fault(SPACE, at_path(tofd, to), "linkat") ? -1
							 : REAL(linkat)(fromfd, from, tofd, to, flags);
}

int symlink(const char *target, const char *path)
{
	return fault(SPACE, space_path(path), "symlink") ? -1 : REAL(symlink)(target, path);
}

/* What _FORTIFY_SOURCE turns open and openat without a mode into. */
int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
	trace_path = path;
	if (fault(DESCRIPTOR, 1, "open") || fault(SPACE, (flags & O_CREAT) && space_path(path), "open"))
		return -1;
	return REAL(__open_2)(path, flags);
}

int __openat_2(int dirfd, const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags)
{
	trace_path = path;
	if (fault(DESCRIPTOR, 1, "openat") ||
	    fault(SPACE, (flags & O_CREAT) && at_path(dirfd, path), "openat"))
		return -1;
	return REAL(__openat_2)(dirfd, path, flags);
}
