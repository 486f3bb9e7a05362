/* rmgone: what the NVIDIA driver answers a control naming a client that is gone (its file
 * closed), one of another open file, and an object that does not exist. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "gpu/nvrm.h"

static int alloc_client(int fd, uint32_t *h)
{
	struct nvrm_alloc64 a;
	memset(&a, 0, sizeof(a));
	a.cls = NVRM_CLASS_ROOT;
	int rc = ioctl(fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_ALLOC, struct nvrm_alloc64), &a);
	printf("alloc root: rc %d status 0x%x handle 0x%x (root field 0x%x)\n", rc, a.status, a.object, a.root);
	*h = a.object ? a.object : a.root;
	return rc || a.status;
}

static void control(const char *what, int fd, uint32_t client, uint32_t object)
{
	struct nvrm_timeslice ts;
	struct nvrm_control c;
	memset(&ts, 0, sizeof(ts));
	memset(&c, 0, sizeof(c));
	c.client = client;
	c.object = object;
	c.cmd = NVRM_TSG_GET_TIMESLICE;
	c.params = (uint64_t)(uintptr_t)&ts;
	c.params_size = sizeof(ts);
	int rc = ioctl(fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_CONTROL, struct nvrm_control), &c);
	printf("%-58s rc %d status 0x%x\n", what, rc, c.status);
}

int main(void)
{
	uint32_t h1, h2;
	int fd1 = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC), fd2;
	if (fd1 < 0 || alloc_client(fd1, &h1))
		return 1;
	control("own client, no such object (fd1)", fd1, h1, 0xcafe0001);
	control("own client, the client itself as object (fd1)", fd1, h1, h1);
	fd2 = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	if (fd2 < 0 || alloc_client(fd2, &h2))
		return 1;
	control("fd1's client through fd2 (fd1 open)", fd2, h1, 0xcafe0001);
	control("a client never made (fd2)", fd2, 0xc1dead00, 0xcafe0001);
	close(fd1);
	control("fd1's client through fd2, fd1 closed", fd2, h1, 0xcafe0001);
	fd1 = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	printf("reopened: fd %d\n", fd1);
	control("fd1's old client through the reopened fd1", fd1, h1, 0xcafe0001);
	close(fd1);
	close(fd2);
	return 0;
}
