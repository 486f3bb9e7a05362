/*
 * fakeappioctl.c - fakeapp rm-ioctl FORM: after a launch (the fake libcuda's
 * RM objects made, FAKECUDA_RM=1), issues one RM request that the kernel
 * refuses, as a program may (an ioctl numbered like the RM's on another file,
 * a block that is not there or only partly, a size that is not the
 * structure's), and prints what came back: "FORM=ERRNO" (ENOTTY, EFAULT,
 * EINVAL...) or "FORM=ok status=0xS"; then "after=ok us=N", the compute
 * group's timeslice read back through the driver's descriptor (the process
 * and its RM are whole). Under the shim and tests/fake/fakerm.c
 * (tests/e2e/preempt.sh).
 *
 *   null-control        a control naming the compute group's SET_TIMESLICE, on /dev/null
 *   null-control-fault  a control whose block is not mapped, on /dev/null
 *   null-alloc-fault, null-free-fault   the same for an allocation and a free
 *   other-alloc-fault   an allocation whose block is not mapped, on /dev/full (fakerm.c: another
 *                       driver's node, which answers 0 and reads no block)
 *   other-control-fault an allocation with a block of zeros there, then a control whose block
 *                       is not mapped
 *   control-fault       a control whose block is not mapped, on the driver's descriptor
 *   control-cut         the group's SET_TIMESLICE whose block's last 16 bytes are not mapped
 *   control-readonly    the group's SET_TIMESLICE in a read-only page (the status cannot
 *                       be written back)
 *   control-params-fault  the group's SET_TIMESLICE whose timeslice block is not mapped
 *   control-short, alloc-short, free-short  a block of 16, 16 and 8 bytes, that size in the
 *                       request, at the end of a page
 *   alloc-fault, free-fault  an allocation and a free whose block is not mapped
 *
 * fakeapp reopen STOP STATE (rm_reopen_other): after a launch, the driver's descriptor closed
 * and /dev/null opened on its number (a program that closes a descriptor it did not open, then
 * opens a file); then "loop".
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakeapp.h"
#include "gpu/nvrm.h"

#define FAKE_CLIENT 0xc1d00001u /* fakermcalls.c's client */
#define PAGE 4096

/* The fake libcuda's descriptor of its device node (/dev/zero: fakermcalls.c), or -1. */
static int driver_fd(void)
{
	char path[300], target[64];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int fd = -1;

	while (d && (e = readdir(d)) && fd < 0) {
		ssize_t n;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = '\0', !strcmp(target, "/dev/zero")))
			fd = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return fd;
}

static int control(int fd, uint32_t object, uint32_t cmd, void *params, uint32_t size, uint32_t *status)
{
	struct nvrm_control c = {FAKE_CLIENT, object, cmd, 0, (uint64_t)(uintptr_t)params, size, 0};
	int rc = ioctl(fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_CONTROL, struct nvrm_control), &c);

	*status = c.status;
	return rc;
}

/* The handle of the first channel group (the compute group), found by asking each of the
 * fake's first handles for its timeslice; 0 if none answers. */
static uint32_t compute_group(int fd)
{
	for (uint32_t h = 0x5c000001u; h < 0x5c000040u; h++) {
		struct nvrm_timeslice ts = {0};
		uint32_t status;
		if (control(fd, h, NVRM_TSG_GET_TIMESLICE, &ts, sizeof(ts), &status) == 0 && status == NVRM_OK)
			return h;
	}
	return 0;
}

static void said(const char *form, int rc, uint32_t status)
{
	if (rc)
		printf("%s=%s\n", form, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
	else
		printf("%s=ok status=%#x\n", form, status);
	fflush(stdout);
}

int rm_reopen_other(void)
{
	int fd = driver_fd(), other;

	if (fd < 0 || close(fd))
		return -1;
	other = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (other >= 0 && other != fd && (dup2(other, fd) != fd || close(other)))
		return -1;
	return other < 0 ? -1 : 0;
}

int rm_ioctl_main(const char *form)
{
	static struct nvrm_timeslice ts = {NVRM_LIBCUDA_TIMESLICE_US};
	char *pages = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *none = pages + PAGE, *last = pages + PAGE - 16; /* (the page after `last` is none) */
	int fd = driver_fd(), null = open("/dev/null", O_RDWR | O_CLOEXEC), rc = -1;
	int other = open("/dev/full", O_RDWR | O_CLOEXEC);
	uint32_t group = fd >= 0 ? compute_group(fd) : 0, status = 0;
	struct nvrm_control set = {FAKE_CLIENT, group, NVRM_TSG_SET_TIMESLICE, 0, (uint64_t)(uintptr_t)&ts,
				   sizeof(ts), 0x5eed};
	unsigned long control32 = _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_CONTROL, struct nvrm_control);

	if (pages == MAP_FAILED || null < 0 || other < 0 || !group || mprotect(none, PAGE, PROT_NONE)) {
		fprintf(stderr, "fakeapp: rm-ioctl: no driver descriptor or group (FAKECUDA_RM=1, fakerm.so)\n");
		return 2;
	}
	errno = 0;
	if (!strcmp(form, "null-control"))
		rc = ioctl(null, control32, &set), status = set.status;
	else if (!strcmp(form, "null-control-fault"))
		rc = ioctl(null, control32, none);
	else if (!strcmp(form, "null-alloc-fault"))
		rc = ioctl(null, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_ALLOC, struct nvrm_alloc64), none);
	else if (!strcmp(form, "null-free-fault"))
		rc = ioctl(null, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_FREE, struct nvrm_free), none);
	else if (!strcmp(form, "other-alloc-fault"))
		rc = ioctl(other, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_ALLOC, struct nvrm_alloc64), none);
	else if (!strcmp(form, "other-control-fault")) {
		static struct nvrm_alloc64 zeros;
		rc = ioctl(other, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_ALLOC, struct nvrm_alloc64), &zeros);
		if (rc == 0)
			rc = ioctl(other, control32, none);
	}
	else if (!strcmp(form, "control-fault"))
		rc = ioctl(fd, control32, none);
	else if (!strcmp(form, "control-cut"))
		rc = (memcpy(last, &set, 16), ioctl(fd, control32, last));
	else if (!strcmp(form, "control-readonly")) {
		memcpy(pages + 2 * PAGE, &set, sizeof(set));
		mprotect(pages + 2 * PAGE, PAGE, PROT_READ);
		rc = ioctl(fd, control32, pages + 2 * PAGE);
		status = ((struct nvrm_control *)(pages + 2 * PAGE))->status;
	} else if (!strcmp(form, "control-params-fault")) {
		set.params = (uint64_t)(uintptr_t)none;
		rc = ioctl(fd, control32, &set), status = set.status;
	} else if (!strcmp(form, "control-short"))
		rc = (memcpy(last, &set, 16), ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, NVRM_IOCTL_MAGIC,
							   NVRM_ESC_CONTROL, 16), last));
	else if (!strcmp(form, "alloc-short"))
		rc = (memset(last, 0, 16), ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, NVRM_IOCTL_MAGIC,
							  NVRM_ESC_ALLOC, 16), last));
	else if (!strcmp(form, "free-short"))
		rc = (memset(last + 8, 0, 8), ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, NVRM_IOCTL_MAGIC,
							     NVRM_ESC_FREE, 8), last + 8));
	else if (!strcmp(form, "alloc-fault"))
		rc = ioctl(fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_ALLOC, struct nvrm_alloc64), none);
	else if (!strcmp(form, "free-fault"))
		rc = ioctl(fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_FREE, struct nvrm_free), none);
	else
		return 2;
	said(form, rc, status);
	ts.timeslice_us = 0;
	rc = control(fd, group, NVRM_TSG_GET_TIMESLICE, &ts, sizeof(ts), &status);
	if (rc || status != NVRM_OK)
		return 1;
	printf("after=ok us=%llu\n", (unsigned long long)ts.timeslice_us);
	return 0;
}
