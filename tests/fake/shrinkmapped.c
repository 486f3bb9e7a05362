/*
 * shrinkmapped.c - preloaded into a writer of other users' control segments (the priority
 * agent), it stands in for a segment's owner who shrinks her file at the worst moment: the
 * first shared mapping of a file named nvtaskset.* that the process makes is followed at once
 * by the file's truncation to nothing, before the caller touches the mapping (the owner may
 * truncate her file at any time; a process that maps it faults past its end). It says
 * "shrinkmapped: shrank NAME" on stderr first, so that a test sees it happen. Test code: it
 * calls the next definition through dlsym.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

/* 1 if fd is a file named nvtaskset.* (a control segment). */
static int is_segment(int fd, char *name, size_t len)
{
	char link[64], path[4096];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(name, len, "%.200s", base);
	return !strncmp(base, "nvtaskset.", 10);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static int shrank;
	void *p = REAL(mmap)(addr, len, prot, flags, fd, off);
	char name[256];

	if (p == MAP_FAILED || !(flags & MAP_SHARED) || fd < 0 || !is_segment(fd, name, sizeof(name)) ||
	    __atomic_exchange_n(&shrank, 1, __ATOMIC_SEQ_CST))
		return p;
	fprintf(stderr, "shrinkmapped: shrank %s\n", name);
	if (ftruncate(fd, 0))
		perror("shrinkmapped: ftruncate");
	return p;
}
