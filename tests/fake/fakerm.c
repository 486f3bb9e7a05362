/*
 * fakerm.c - the kernel side of the fake driver's RM (src/gpu/nvrm.h), a
 * library preloaded after the shim (LD_PRELOAD=SHIM:fakerm.so): it answers
 * the RM ioctls (type 'F') that the fake libcuda (fakermcalls.c) and the
 * shim make, as the kernel module does as far as nvtaskset's tests need:
 * objects by client and handle, a channel group's timeslice (1024 us when
 * made) and whether it is scheduled, a subdevice's UUID. A client is made
 * with the first object allocated under it (the fake libcuda allocates no
 * NV01_ROOT), and freed with its handle's free. The objects made on a
 * descriptor are freed when it is closed, as the module frees a file's
 * clients at its release. A client belongs to the file it was made on: a
 * request on another file names no client of that file. The fake takes the
 * file to be the descriptor (its number, in this process): it cannot tell a
 * dup of a descriptor, which shares the file, from another file, so a request
 * through a dup names no client, and the client's objects are freed at the
 * close of the descriptor they were made on, not at the file's last close.
 * Checks as the real one does: GPFIFO_SCHEDULE's block is 3 bytes (2 is
 * NV_ERR_INVALID_ARGUMENT, as driver 580 answered), a timeslice of 0 is
 * refused, a control naming a client not made on the descriptor it comes on
 * (one of another open file, one never made, one whose file was closed, or
 * that client through the node opened again on the same number) is
 * NV_ERR_INVALID_CLIENT, and one naming no such object of a client of that
 * descriptor NV_ERR_OBJECT_NOT_FOUND, as an H100 with driver 580 answered
 * (docs/bench/gpuchecks-2026-11-27, rmgone.c); a free naming a client not
 * made on its descriptor, and an allocation under a client of another of
 * the process's descriptors, are NV_ERR_INVALID_CLIENT too (not measured;
 * the fake libcuda allocates no NV01_ROOT, so an allocation under a client
 * made nowhere makes it). As the
 * kernel module's nvidia_ioctl, it answers only on its device node (the
 * fake's /dev/nvidiactl is /dev/zero: fakermcalls.c; fstat(2) answers for it
 * as the kernel does for /dev/nvidiactl, a character device 195:255; on any
 * other descriptor the kernel answers, ENOTTY for /dev/null), copies the parameter block in and out as
 * copy_from_user and copy_to_user do (EFAULT where they would fault; a
 * control's own block unreadable is NV_ERR_INVALID_ADDRESS in its status), and
 * refuses a block of another size than the request's structure (EINVAL). An
 * object belongs to the process that allocated it: a forked child's copy of
 * this table answers its parent's handles as unknown (NV_ERR_INVALID_CLIENT:
 * the child's own client holds none of them).
 *
 *   FAKERM_LOG=FILE     append a line per allocation and per timeslice
 *                       control ("pid=P set-timeslice group=H us=V status=S"),
 *                       per RM request on a descriptor of another file, which
 *                       the kernel refuses ("pid=P other-file fd=N nr=0xNR"),
 *                       per control naming a client not made on its
 *                       descriptor (status=0x23) or no such object of one
 *                       (0x57: "pid=P unknown object client=C handle=H
 *                       cmd=X status=S"),
 *                       per close of a descriptor objects were made on ("pid=P
 *                       closed fd=N freed=K"), and at exit each group's final
 *                       state ("pid=P final group=H us=V scheduled=B")
 *   FAKERM_REFUSE=CMD   controls CMD (hex) answer NV_ERR_NOT_SUPPORTED (2080014a:
 *                       a subdevice that does not say its GPU's UUID)
 *
 * /dev/full stands for another driver's node whose requests of type 'F' share
 * the RM's numbers and take no block: every one of them answers 0 there,
 * its argument not read.
 *
 * Other ioctls go to the C library's.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gpu/nvrm.h"

#define OBJECTS 1024
#define BLOCK_MAX 512 /* the largest parameter block copied (GET_GID_INFO's is 268 bytes) */
#define NVRM_ERR_INVALID_ADDRESS 0x1eu

struct object {
	uint32_t client, handle, parent, cls;
	pid_t pid; /* the process that allocated it */
	int fd;    /* the descriptor it was allocated on */
	uint64_t timeslice_us;
	int scheduled;
	uint8_t uuid[16];
};

static struct {
	pthread_mutex_t lock;
	struct object o[OBJECTS];
	int n;
} rm = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* In a forked child: another thread may have held the lock. */
static void forked_child(void)
{
	pthread_mutex_init(&rm.lock, NULL);
}

__attribute__((constructor)) static void watch_fork(void)
{
	pthread_atfork(NULL, NULL, forked_child);
}

static void say(const char *fmt, ...)
{
	const char *path = getenv("FAKERM_LOG");
	FILE *f;
	va_list ap;

	if (!path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "pid=%d ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* Object handle of client, made by this process on descriptor fd (the fake's file: a client
 * answers only on its own), or NULL. */
static struct object *find(int fd, uint32_t client, uint32_t handle)
{
	for (int i = 0; i < rm.n; i++)
		if (rm.o[i].client == client && rm.o[i].handle == handle && rm.o[i].pid == getpid() &&
		    rm.o[i].fd == fd)
			return &rm.o[i];
	return NULL;
}

/* 1 if this process made client on a descriptor other than fd, else 0. */
static int client_elsewhere(int fd, uint32_t client)
{
	for (int i = 0; i < rm.n; i++)
		if (rm.o[i].client == client && rm.o[i].handle == client && rm.o[i].pid == getpid() &&
		    rm.o[i].fd != fd)
			return 1;
	return 0;
}

/* copy_from_user and copy_to_user: 0, or -1 where the process may not read (write) there. */
static int copy_in(void *to, const void *from, size_t n)
{
	struct iovec local = {to, n}, remote = {(void *)from, n};
	return syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

static int copy_out(void *to, const void *from, size_t n)
{
	struct iovec local = {(void *)from, n}, remote = {to, n};
	return syscall(SYS_process_vm_writev, getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

static uint32_t alloc(struct nvrm_alloc64 *a, int fd)
{
	struct object *o;
	int client = !find(fd, a->root, a->root);

	if (client && client_elsewhere(fd, a->root))
		return NVRM_ERR_INVALID_CLIENT; /* (a client of another file) */
	if (find(fd, a->root, a->object) || rm.n + client >= OBJECTS)
		return 0x16; /* NV_ERR_INSERT_DUPLICATE_NAME, or no room */
	if (client) /* (its client, made with its first object) */
		rm.o[rm.n++] = (struct object){.client = a->root, .handle = a->root, .cls = NVRM_CLASS_ROOT,
					       .pid = getpid(), .fd = fd};
	o = &rm.o[rm.n++];
	memset(o, 0, sizeof(*o));
	o->client = a->root, o->handle = a->object, o->parent = a->parent, o->cls = a->cls;
	o->pid = getpid(), o->fd = fd;
	o->timeslice_us = NVRM_DEFAULT_TIMESLICE_US;
	if (a->cls == NVRM_CLASS_SUBDEVICE && a->params_size >= 20 && a->alloc_params &&
	    copy_in(o->uuid, (const uint8_t *)(uintptr_t)a->alloc_params + 4, 16))
		memset(o->uuid, 0, 16);
	say("alloc class=%#x handle=%#x parent=%#x", a->cls, a->object, a->parent);
	return NVRM_OK;
}

static uint32_t refused(uint32_t cmd)
{
	const char *r = getenv("FAKERM_REFUSE");
	return r && strtoul(r, NULL, 16) == cmd ? NVRM_ERR_NOT_SUPPORTED : NVRM_OK;
}

static uint32_t control_on(struct object *o, const struct nvrm_control *c, void *p, uint32_t status)
{
	switch (c->cmd) {
	case NVRM_TSG_SET_TIMESLICE:
		if (c->params_size != sizeof(struct nvrm_timeslice))
			return 0x1f;
		if (!((struct nvrm_timeslice *)p)->timeslice_us)
			status = 0x1f;
		if (status == NVRM_OK)
			o->timeslice_us = ((struct nvrm_timeslice *)p)->timeslice_us;
		say("set-timeslice group=%#x us=%llu status=%#x", o->handle,
		    (unsigned long long)((struct nvrm_timeslice *)p)->timeslice_us, status);
		return status;
	case NVRM_TSG_GET_TIMESLICE:
		if (c->params_size != sizeof(struct nvrm_timeslice))
			return 0x1f;
		((struct nvrm_timeslice *)p)->timeslice_us = o->timeslice_us;
		return NVRM_OK;
	case NVRM_TSG_GPFIFO_SCHEDULE:
		if (c->params_size != sizeof(struct nvrm_schedule))
			return 0x1f;
		if (status == NVRM_OK)
			o->scheduled = ((struct nvrm_schedule *)p)->enable != 0;
		return status;
	case NVRM_SUBDEVICE_GET_GID_INFO: {
		struct nvrm_gid_info *g = p;
		if (o->cls != NVRM_CLASS_SUBDEVICE || c->params_size != sizeof(*g))
			return 0x1f;
		if (status == NVRM_OK) {
			g->length = 16;
			memcpy(g->data, o->uuid, 16);
		}
		return status;
	}
	}
	return status;
}

/* A control on descriptor fd: its parameter block copied in, run, and copied back, as the RM
 * does. */
static uint32_t control(int fd, struct nvrm_control *c)
{
	struct object *o = find(fd, c->client, c->object);
	void *user = (void *)(uintptr_t)c->params;
	uint64_t block[BLOCK_MAX / 8];
	uint32_t status;

	if (!o) {
		status = find(fd, c->client, c->client) ? NVRM_ERR_OBJECT_NOT_FOUND : NVRM_ERR_INVALID_CLIENT;
		say("unknown object client=%#x handle=%#x cmd=%#x status=%#x", c->client, c->object, c->cmd,
		    status);
		return status;
	}
	if (o->cls != NVRM_CLASS_CHANNEL_GROUP && (c->cmd >> 16) == (NVRM_TSG_SET_TIMESLICE >> 16))
		return NVRM_ERR_NOT_SUPPORTED;
	if (!user || c->params_size > sizeof(block))
		return 0x1f;
	if (copy_in(block, user, c->params_size))
		return NVRM_ERR_INVALID_ADDRESS;
	status = control_on(o, c, block, refused(c->cmd));
	if (copy_out(user, block, c->params_size))
		return NVRM_ERR_INVALID_ADDRESS;
	return status;
}

/* Frees handle of client (made on descriptor fd) and everything under it (the client: all its
 * objects). */
static uint32_t release(int fd, uint32_t client, uint32_t handle)
{
	int changed = 1, kept = 0;

	say("free handle=%#x", handle);
	if (!find(fd, client, client))
		return NVRM_ERR_INVALID_CLIENT;
	for (int i = 0; i < rm.n; i++)
		if (rm.o[i].client == client && rm.o[i].pid == getpid() && rm.o[i].fd == fd &&
		    (rm.o[i].handle == handle || handle == client))
			rm.o[i].cls = ~0u;
	while (changed) {
		changed = 0;
		for (int i = 0; i < rm.n; i++) {
			struct object *p = find(fd, client, rm.o[i].parent);
			if (rm.o[i].cls != ~0u && p && p->cls == ~0u)
				rm.o[i].cls = ~0u, changed = 1;
		}
	}
	for (int i = 0; i < rm.n; i++)
		if (rm.o[i].cls != ~0u)
			rm.o[kept++] = rm.o[i];
	rm.n = kept;
	return NVRM_OK;
}

#define FAKE_NODE makedev(1, 5)      /* /dev/zero: the fake's /dev/nvidiactl */
#define DRIVER_NODE makedev(195, 255) /* what fstat says of it, as of the real one */
#define OTHER_NODE makedev(1, 7)      /* /dev/full: another driver's node */

/* fstat(2), the fake's node answered as /dev/nvidiactl is. */
static int node_stat(int fd, struct stat *st)
{
	static int (*next)(int, struct stat *);

	if (!next)
		next = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
	if ((next ? next(fd, st) : (int)syscall(SYS_fstat, fd, st)) != 0)
		return -1;
	if (S_ISCHR(st->st_mode) && st->st_rdev == FAKE_NODE)
		st->st_rdev = DRIVER_NODE;
	return 0;
}

__attribute__((visibility("default"))) int fstat(int fd, struct stat *st)
{
	return node_stat(fd, st);
}

__attribute__((visibility("default"))) int fstat64(int fd, struct stat64 *st)
{
	return node_stat(fd, (struct stat *)st);
}

/* 1 if fd is on node rdev (a character device). */
static int on_node(int fd, dev_t rdev)
{
	struct stat st;
	return node_stat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == rdev;
}

/* 1 if fd is the fake's device node (/dev/zero: fakermcalls.c). */
static int is_device(int fd)
{
	return on_node(fd, DRIVER_NODE);
}

/* 1 if size is that of request nr's parameter block (ALLOC: either structure), else 0. */
static int size_ok(unsigned nr, size_t size)
{
	return nr == NVRM_ESC_ALLOC ? size == sizeof(struct nvrm_alloc64) || size == sizeof(struct nvrm_alloc)
	       : nr == NVRM_ESC_CONTROL ? size == sizeof(struct nvrm_control)
	       : nr == NVRM_ESC_FREE	? size == sizeof(struct nvrm_free)
					: 0;
}

/* An RM request on the device: the block copied in, answered, copied out. Returns the ioctl's
 * result. */
static int answer(int fd, unsigned long request, void *arg)
{
	union {
		struct nvrm_alloc64 a64;
		struct nvrm_alloc a;
		struct nvrm_control c;
		struct nvrm_free f;
	} in;
	size_t size = _IOC_SIZE(request);

	if (size > sizeof(in) || copy_in(&in, arg, size)) {
		errno = size > sizeof(in) ? EINVAL : EFAULT;
		return -1;
	}
	if (!size_ok(_IOC_NR(request), size)) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&rm.lock);
	if (_IOC_NR(request) == NVRM_ESC_ALLOC && size == sizeof(in.a)) {
		struct nvrm_alloc64 wide = {in.a.root, in.a.parent, in.a.object, in.a.cls, in.a.alloc_params, 0,
					    in.a.params_size, 0, 0, 0};
		in.a.status = alloc(&wide, fd);
	} else if (_IOC_NR(request) == NVRM_ESC_ALLOC) {
		in.a64.status = alloc(&in.a64, fd);
	} else if (_IOC_NR(request) == NVRM_ESC_CONTROL) {
		in.c.status = control(fd, &in.c);
	} else {
		in.f.status = release(fd, in.f.root, in.f.object);
	}
	pthread_mutex_unlock(&rm.lock);
	if (copy_out(arg, &in, size)) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...)
{
	static int (*next)(int, unsigned long, ...);
	unsigned long arg;
	va_list ap;

	va_start(ap, request);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (_IOC_TYPE(request) == NVRM_IOCTL_MAGIC && is_device(fd))
		return answer(fd, request, (void *)arg);
	if (_IOC_TYPE(request) == NVRM_IOCTL_MAGIC && on_node(fd, OTHER_NODE))
		return 0;
	if (_IOC_TYPE(request) == NVRM_IOCTL_MAGIC)
		say("other-file fd=%d nr=%#x", fd, (unsigned)_IOC_NR(request));
	if (!next)
		next = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	return next ? next(fd, request, arg) : (int)syscall(SYS_ioctl, fd, request, arg);
}

/* The module frees the clients of a file (and their objects) at its release: the fake at the
 * close of the descriptor they were made on. */
__attribute__((visibility("default"))) int close(int fd)
{
	static int (*next)(int);
	int err = errno, kept = 0, freed = 0;

	if (is_device(fd)) {
		pthread_mutex_lock(&rm.lock);
		for (int i = 0; i < rm.n; i++)
			if (rm.o[i].pid == getpid() && rm.o[i].fd == fd)
				freed++;
			else
				rm.o[kept++] = rm.o[i];
		rm.n = kept;
		pthread_mutex_unlock(&rm.lock);
		if (freed)
			say("closed fd=%d freed=%d", fd, freed);
	}
	errno = err;
	if (!next)
		next = (int (*)(int))dlsym(RTLD_NEXT, "close");
	return next ? next(fd) : (int)syscall(SYS_close, fd);
}

__attribute__((destructor)) static void final_state(void)
{
	for (int i = 0; i < rm.n; i++)
		if (rm.o[i].cls == NVRM_CLASS_CHANNEL_GROUP && rm.o[i].pid == getpid())
			say("final group=%#x us=%llu scheduled=%d", rm.o[i].handle,
			    (unsigned long long)rm.o[i].timeslice_us, rm.o[i].scheduled);
}
