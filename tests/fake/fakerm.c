/*
 * fakerm.c - the kernel side of the fake driver's RM (src/gpu/nvrm.h), a
 * library preloaded after the shim (LD_PRELOAD=SHIM:fakerm.so): it answers
 * the RM ioctls (type 'F') that the fake libcuda (fakermcalls.c) and the
 * shim make, as the kernel module does as far as nvtaskset's tests need:
 * objects by client and handle, a channel group's timeslice (1024 us when
 * made) and whether it is scheduled, a subdevice's UUID. Checks as the real
 * one does: GPFIFO_SCHEDULE's block is 3 bytes (2 is NV_ERR_INVALID_ARGUMENT,
 * as driver 580 answered), a timeslice of 0 is refused, a control on an
 * unknown object is NV_ERR_INVALID_OBJECT_HANDLE. An object belongs to the
 * process that allocated it: a forked child's copy of this table answers its
 * parent's handles as unknown (the child's own client holds none of them).
 *
 *   FAKERM_LOG=FILE     append a line per allocation and per timeslice
 *                       control ("pid=P set-timeslice group=H us=V status=S"),
 *                       and at exit each group's final state ("pid=P final
 *                       group=H us=V scheduled=B")
 *   FAKERM_REFUSE=CMD   controls CMD (hex) answer NV_ERR_NOT_SUPPORTED (2080014a:
 *                       a subdevice that does not say its GPU's UUID)
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
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpu/nvrm.h"

#define OBJECTS 1024

struct object {
	uint32_t client, handle, parent, cls;
	pid_t pid; /* the process that allocated it */
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

static struct object *find(uint32_t client, uint32_t handle)
{
	for (int i = 0; i < rm.n; i++)
		if (rm.o[i].client == client && rm.o[i].handle == handle && rm.o[i].pid == getpid())
			return &rm.o[i];
	return NULL;
}

static uint32_t alloc(struct nvrm_alloc64 *a)
{
	struct object *o;

	if (find(a->root, a->object) || rm.n == OBJECTS)
		return 0x16; /* NV_ERR_INSERT_DUPLICATE_NAME, or no room */
	o = &rm.o[rm.n++];
	memset(o, 0, sizeof(*o));
	o->client = a->root, o->handle = a->object, o->parent = a->parent, o->cls = a->cls;
	o->pid = getpid();
	o->timeslice_us = NVRM_DEFAULT_TIMESLICE_US;
	if (a->cls == NVRM_CLASS_SUBDEVICE && a->params_size >= 20 && a->alloc_params)
		memcpy(o->uuid, (const uint8_t *)(uintptr_t)a->alloc_params + 4, 16);
	say("alloc class=%#x handle=%#x parent=%#x", a->cls, a->object, a->parent);
	return NVRM_OK;
}

static uint32_t refused(uint32_t cmd)
{
	const char *r = getenv("FAKERM_REFUSE");
	return r && strtoul(r, NULL, 16) == cmd ? NVRM_ERR_NOT_SUPPORTED : NVRM_OK;
}

static uint32_t control(struct nvrm_control *c)
{
	struct object *o = find(c->client, c->object);
	void *p = (void *)(uintptr_t)c->params;
	uint32_t status = refused(c->cmd);

	if (!o) {
		say("unknown object=%#x cmd=%#x", c->object, c->cmd);
		return NVRM_ERR_INVALID_OBJECT_HANDLE;
	}
	if (o->cls != NVRM_CLASS_CHANNEL_GROUP && (c->cmd >> 16) == (NVRM_TSG_SET_TIMESLICE >> 16))
		return NVRM_ERR_NOT_SUPPORTED;
	switch (c->cmd) {
	case NVRM_TSG_SET_TIMESLICE:
		if (c->params_size != sizeof(struct nvrm_timeslice) || !p)
			return 0x1f;
		if (!((struct nvrm_timeslice *)p)->timeslice_us)
			status = 0x1f;
		if (status == NVRM_OK)
			o->timeslice_us = ((struct nvrm_timeslice *)p)->timeslice_us;
		say("set-timeslice group=%#x us=%llu status=%#x", o->handle,
		    (unsigned long long)((struct nvrm_timeslice *)p)->timeslice_us, status);
		return status;
	case NVRM_TSG_GET_TIMESLICE:
		if (c->params_size != sizeof(struct nvrm_timeslice) || !p)
			return 0x1f;
		((struct nvrm_timeslice *)p)->timeslice_us = o->timeslice_us;
		return NVRM_OK;
	case NVRM_TSG_GPFIFO_SCHEDULE:
		if (c->params_size != sizeof(struct nvrm_schedule) || !p)
			return 0x1f;
		if (status == NVRM_OK)
			o->scheduled = ((struct nvrm_schedule *)p)->enable != 0;
		return status;
	case NVRM_SUBDEVICE_GET_GID_INFO: {
		struct nvrm_gid_info *g = p;
		if (o->cls != NVRM_CLASS_SUBDEVICE || c->params_size != sizeof(*g) || !g)
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

/* Frees handle of client and everything under it (the client: all its objects). */
static uint32_t release(uint32_t client, uint32_t handle)
{
	int changed = 1, kept = 0;

	say("free handle=%#x", handle);
	for (int i = 0; i < rm.n; i++)
		if (rm.o[i].client == client && rm.o[i].pid == getpid() &&
		    (rm.o[i].handle == handle || handle == client))
			rm.o[i].cls = ~0u;
	while (changed) {
		changed = 0;
		for (int i = 0; i < rm.n; i++) {
			struct object *p = find(client, rm.o[i].parent);
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

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...)
{
	static int (*next)(int, unsigned long, ...);
	unsigned long arg;
	va_list ap;
	int rc = 0;

	va_start(ap, request);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (_IOC_TYPE(request) != NVRM_IOCTL_MAGIC || !arg) {
		if (!next)
			next = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
		return next ? next(fd, request, arg) : (int)syscall(SYS_ioctl, fd, request, arg);
	}
	pthread_mutex_lock(&rm.lock);
	switch (_IOC_NR(request)) {
	case NVRM_ESC_ALLOC:
		((struct nvrm_alloc64 *)arg)->status = alloc((struct nvrm_alloc64 *)arg);
		break;
	case NVRM_ESC_CONTROL:
		((struct nvrm_control *)arg)->status = control((struct nvrm_control *)arg);
		break;
	case NVRM_ESC_FREE:
		((struct nvrm_free *)arg)->status = release(((struct nvrm_free *)arg)->root,
							    ((struct nvrm_free *)arg)->object);
		break;
	default:
		rc = -1;
	}
	pthread_mutex_unlock(&rm.lock);
	return rc;
}

__attribute__((destructor)) static void final_state(void)
{
	for (int i = 0; i < rm.n; i++)
		if (rm.o[i].cls == NVRM_CLASS_CHANNEL_GROUP && rm.o[i].pid == getpid())
			say("final group=%#x us=%llu scheduled=%d", rm.o[i].handle,
			    (unsigned long long)rm.o[i].timeslice_us, rm.o[i].scheduled);
}
