/*
 * shimrm.c - this process's channel groups, through the kernel module's RM
 * interface (src/gpu/nvrm.h; docs/priorities.md, "Preemption").
 *
 * libcuda allocates its channel groups (TSGs: the unit the GPU's scheduler
 * time-slices between contexts), their channels, and the device and
 * subdevice they belong to with ioctls on /dev/nvidiactl, and schedules them
 * with controls. The shim exports ioctl(2): for the requests of the RM (type
 * 'F') it follows those objects of its own process, and
 * gives each channel group the timeslice asked for its GPU: at its
 * allocation, after every schedule or bind of it or of its channels, and in
 * place of libcuda's own SET_TIMESLICE, which gives the compute group
 * 2048 us right after scheduling it (a timeslice set only at allocation did
 * not hold; rewriting libcuda's call alone was enough: H200, driver 580,
 * docs/hardware-facts.md).
 * The controls go through the descriptor libcuda allocated the object with,
 * on handles of its own client: only this process's own objects. A group's
 * GPU is its subdevice's UUID (GET_GID_INFO). Every other ioctl goes on
 * untouched, and nothing here runs until shimpreempt.c asks for a timeslice.
 * Not the launch path: libcuda's RM calls are its slow path
 * (allocation, scheduling), and the lock is taken only for the calls on
 * channel groups and channels.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpu/nvrm.h"
#include "shimrm.h"
#include "shimstate.h"

#define EXPORT __attribute__((visibility("default")))
#define RM_OBJECTS 1024 /* devices, subdevices, groups and channels followed (PyTorch: ~30) */
#define RM_GPUS 17     /* NVT_MAX_GPUS and one for groups whose GPU is not known */

struct rm_obj {
	int fd;
	uint32_t client, handle, parent, cls;
	int gpu;         /* groups: index in rm.gpu; -1: not yet known */
	uint8_t uuid[16]; /* subdevices: their GPU, once asked */
	int asked;       /* subdevices: 1 asked and known, -1 asked and not known */
};

struct rm_gpu {
	uint8_t uuid[16];     /* all zero: groups whose GPU is not known */
	int want;             /* a timeslice of its own was asked (else rm.default_us) */
	uint32_t want_us;
	int seen;             /* a group of it appeared (rm.on_new_gpu was told) */
	uint32_t applied_us;  /* the driver's record after the last set, read back */
	uint32_t status;      /* the last failure's status */
};

typedef int (*ioctl_fn)(int, unsigned long, ...);

static struct {
	ioctl_fn next;
	int on;               /* following (a timeslice was asked, or GPUs are watched) */
	pthread_mutex_t lock;
	struct rm_obj obj[RM_OBJECTS];
	int n_obj;
	struct rm_gpu gpu[RM_GPUS];
	int n_gpu;
	uint32_t default_us;  /* for GPUs without a timeslice of their own; 0: the driver's */
	void (*on_new_gpu)(const uint8_t uuid[16]);
} rm = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const uint8_t no_uuid[16];

/* The C library's ioctl (another interposer's, if one comes after the shim); the system call
 * itself before the dynamic linker can say (an ioctl from an earlier constructor). */
static int next_ioctl(int fd, unsigned long request, unsigned long arg)
{
	ioctl_fn next = __atomic_load_n(&rm.next, __ATOMIC_ACQUIRE);

	if (!next)
		return (int)syscall(SYS_ioctl, fd, request, arg);
	return next(fd, request, arg);
}

__attribute__((constructor)) static void find_next_ioctl(void)
{
	__atomic_store_n(&rm.next, (ioctl_fn)dlsym(RTLD_NEXT, "ioctl"), __ATOMIC_RELEASE);
}

/* Issues control cmd on object o through o's descriptor. Returns its status (~0: the ioctl failed). */
static uint32_t control(const struct rm_obj *o, uint32_t cmd, void *params, uint32_t size)
{
	struct nvrm_control c = {o->client, o->handle, cmd, 0, (uint64_t)(uintptr_t)params, size, 0};

	if (next_ioctl(o->fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_CONTROL, struct nvrm_control),
		       (unsigned long)&c))
		return ~0u;
	return c.status;
}

static struct rm_obj *find(uint32_t client, uint32_t handle)
{
	for (int i = 0; i < rm.n_obj; i++)
		if (rm.obj[i].client == client && rm.obj[i].handle == handle)
			return &rm.obj[i];
	return NULL;
}

/* The channel group object o is or belongs to (a channel's parent), or NULL. */
static struct rm_obj *group_of(uint32_t client, uint32_t handle)
{
	struct rm_obj *o = find(client, handle);

	if (o && nvrm_is_channel_class(o->cls))
		o = find(client, o->parent);
	return o && o->cls == NVRM_CLASS_CHANNEL_GROUP ? o : NULL;
}

static int gpu_index(const uint8_t uuid[16], int make)
{
	for (int i = 0; i < rm.n_gpu; i++)
		if (!memcmp(rm.gpu[i].uuid, uuid, 16))
			return i;
	if (!make || rm.n_gpu == RM_GPUS)
		return -1;
	memset(&rm.gpu[rm.n_gpu], 0, sizeof(rm.gpu[0]));
	memcpy(rm.gpu[rm.n_gpu].uuid, uuid, 16);
	return rm.n_gpu++;
}

static uint32_t want_of(const struct rm_gpu *g)
{
	return g->want ? g->want_us : rm.default_us;
}

/* The GPU of a group allocated under parent: its subdevice's UUID, asked once. */
static int gpu_of_parent(uint32_t client, uint32_t parent)
{
	struct rm_obj *p = find(client, parent), *sub = NULL;
	int i;

	if (p && p->cls == NVRM_CLASS_SUBDEVICE)
		sub = p;
	for (i = 0; !sub && p && p->cls == NVRM_CLASS_DEVICE && i < rm.n_obj; i++)
		if (rm.obj[i].client == client && rm.obj[i].parent == parent &&
		    rm.obj[i].cls == NVRM_CLASS_SUBDEVICE)
			sub = &rm.obj[i];
	if (sub && !sub->asked) {
		struct nvrm_gid_info gid;
		memset(&gid, 0, sizeof(gid));
		gid.flags = NVRM_GID_BINARY;
		sub->asked = control(sub, NVRM_SUBDEVICE_GET_GID_INFO, &gid, sizeof(gid)) == NVRM_OK &&
					     gid.length == 16
				     ? 1
				     : -1;
		if (sub->asked > 0)
			memcpy(sub->uuid, gid.data, 16);
	}
	i = gpu_index(sub && sub->asked > 0 ? sub->uuid : no_uuid, 1);
	if (i >= 0 && !rm.gpu[i].seen) {
		rm.gpu[i].seen = 1;
		if (rm.on_new_gpu)
			rm.on_new_gpu(rm.gpu[i].uuid);
	}
	return i;
}

/* Gives group t its GPU's timeslice, and reads the driver's record back. Returns the status. */
static uint32_t set_timeslice(struct rm_obj *t)
{
	struct rm_gpu *g = &rm.gpu[t->gpu];
	struct nvrm_timeslice ts = {want_of(g)}, back = {0};
	uint32_t status;

	if (!ts.timeslice_us)
		return NVRM_OK;
	status = control(t, NVRM_TSG_SET_TIMESLICE, &ts, sizeof(ts));
	if (status == NVRM_OK)
		status = control(t, NVRM_TSG_GET_TIMESLICE, &back, sizeof(back));
	if (status == NVRM_OK && back.timeslice_us != ts.timeslice_us)
		status = NVRM_ERR_NOT_SUPPORTED; /* the driver kept another value */
	if (status != NVRM_OK)
		g->status = status;
	else
		g->applied_us = (uint32_t)back.timeslice_us;
	return status;
}

static void on_alloc(int fd, const void *arg, unsigned size)
{
	uint32_t root, parent, object, cls, status;
	struct rm_obj *o;

	if (size == sizeof(struct nvrm_alloc64)) {
		const struct nvrm_alloc64 *a = arg;
		root = a->root, parent = a->parent, object = a->object, cls = a->cls, status = a->status;
	} else if (size == sizeof(struct nvrm_alloc)) {
		const struct nvrm_alloc *a = arg;
		root = a->root, parent = a->parent, object = a->object, cls = a->cls, status = a->status;
	} else {
		return;
	}
	if (status != NVRM_OK || (cls != NVRM_CLASS_DEVICE && cls != NVRM_CLASS_SUBDEVICE &&
				  cls != NVRM_CLASS_CHANNEL_GROUP && !nvrm_is_channel_class(cls)))
		return;
	pthread_mutex_lock(&rm.lock);
	if (rm.n_obj == RM_OBJECTS && cls == NVRM_CLASS_CHANNEL_GROUP && shim_first_time(WARN_PREEMPT))
		shim_warn("too many driver objects to follow: this task's newer channel groups keep the "
			  "driver's timeslice");
	if (rm.n_obj < RM_OBJECTS && !find(root, object)) {
		o = &rm.obj[rm.n_obj++];
		*o = (struct rm_obj){.fd = fd, .client = root, .handle = object, .parent = parent,
				     .cls = cls, .gpu = -1};
		if (cls == NVRM_CLASS_CHANNEL_GROUP && (o->gpu = gpu_of_parent(root, parent)) >= 0)
			set_timeslice(o);
		else if (cls == NVRM_CLASS_CHANNEL_GROUP)
			rm.n_obj--; /* no room for its GPU: not followed */
	}
	pthread_mutex_unlock(&rm.lock);
}

/* Forgets object handle of client and everything under it (a client: all of its objects). */
static void on_free(uint32_t client, uint32_t handle)
{
	int removed;

	pthread_mutex_lock(&rm.lock);
	for (int i = 0; i < rm.n_obj; i++)
		if (rm.obj[i].client == client && (rm.obj[i].handle == handle || handle == client))
			rm.obj[i].cls = ~0u;
	do {
		removed = 0;
		for (int i = 0; i < rm.n_obj; i++) {
			struct rm_obj *p = find(client, rm.obj[i].parent);
			if (rm.obj[i].cls != ~0u && p && p->cls == ~0u)
				rm.obj[i].cls = ~0u, removed = 1;
		}
	} while (removed);
	for (int i = 0, kept = 0; i <= rm.n_obj; i++) {
		if (i == rm.n_obj) {
			rm.n_obj = kept;
			break;
		}
		if (rm.obj[i].cls != ~0u)
			rm.obj[kept++] = rm.obj[i];
	}
	pthread_mutex_unlock(&rm.lock);
}

static int is_group_command(uint32_t cmd)
{
	return cmd == NVRM_TSG_GPFIFO_SCHEDULE || cmd == NVRM_TSG_BIND || cmd == NVRM_TSG_SET_TIMESLICE ||
	       cmd == NVRM_CHANNEL_GPFIFO_SCHEDULE || cmd == NVRM_CHANNEL_BIND;
}

/* libcuda's control c on one of its groups or channels: its own SET_TIMESLICE carries the
 * timeslice asked instead; after a schedule or bind the group gets it again (on driver 580
 * rewriting libcuda's call was enough; a schedule that resets it would be caught too). */
static int on_control(int fd, unsigned long request, struct nvrm_control *c)
{
	struct nvrm_control mine;
	struct nvrm_timeslice ts;
	struct rm_obj *t;
	int rc;

	pthread_mutex_lock(&rm.lock);
	t = group_of(c->client, c->object);
	if (t && c->cmd == NVRM_TSG_SET_TIMESLICE && c->params_size == sizeof(ts) &&
	    (ts.timeslice_us = want_of(&rm.gpu[t->gpu]))) {
		mine = *c;
		mine.params = (uint64_t)(uintptr_t)&ts;
		rc = next_ioctl(fd, request, (unsigned long)&mine);
		c->status = mine.status;
		if (!rc && mine.status == NVRM_OK)
			rm.gpu[t->gpu].applied_us = (uint32_t)ts.timeslice_us;
		pthread_mutex_unlock(&rm.lock);
		return rc;
	}
	pthread_mutex_unlock(&rm.lock);
	rc = next_ioctl(fd, request, (unsigned long)c);
	if (rc || c->status != NVRM_OK || c->cmd == NVRM_TSG_SET_TIMESLICE)
		return rc;
	pthread_mutex_lock(&rm.lock);
	if ((t = group_of(c->client, c->object)))
		set_timeslice(t);
	pthread_mutex_unlock(&rm.lock);
	return rc;
}

EXPORT int ioctl(int fd, unsigned long request, ...)
{
	unsigned long arg;
	va_list ap;

	va_start(ap, request);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (!__atomic_load_n(&rm.on, __ATOMIC_ACQUIRE) || _IOC_TYPE(request) != NVRM_IOCTL_MAGIC || !arg)
		return next_ioctl(fd, request, arg);
	switch (_IOC_NR(request)) {
	case NVRM_ESC_CONTROL: {
		struct nvrm_control *c = (struct nvrm_control *)arg;
		if (_IOC_SIZE(request) != sizeof(*c) || !is_group_command(c->cmd))
			break;
		return on_control(fd, request, c);
	}
	case NVRM_ESC_ALLOC: {
		int rc = next_ioctl(fd, request, arg);
		if (!rc)
			on_alloc(fd, (const void *)arg, _IOC_SIZE(request));
		return rc;
	}
	case NVRM_ESC_FREE: {
		const struct nvrm_free *f = (const struct nvrm_free *)arg;
		int rc = next_ioctl(fd, request, arg);
		if (!rc && _IOC_SIZE(request) == sizeof(*f) && f->status == NVRM_OK)
			on_free(f->root, f->object);
		return rc;
	}
	}
	return next_ioctl(fd, request, arg);
}

int shim_rm_timeslice(const uint8_t uuid[16], uint32_t timeslice_us)
{
	int n = 0, failed = 0, g = -1;

	pthread_mutex_lock(&rm.lock);
	if (!uuid)
		rm.default_us = timeslice_us;
	else if ((g = gpu_index(uuid, 1)) >= 0)
		rm.gpu[g].want = 1, rm.gpu[g].want_us = timeslice_us;
	__atomic_store_n(&rm.on, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < rm.n_obj; i++) {
		struct rm_obj *t = &rm.obj[i];
		if (t->cls != NVRM_CLASS_CHANNEL_GROUP || (uuid ? t->gpu != g : rm.gpu[t->gpu].want))
			continue;
		failed |= set_timeslice(t) != NVRM_OK;
		n++;
	}
	pthread_mutex_unlock(&rm.lock);
	return failed ? -1 : n;
}

void shim_rm_stats(const uint8_t uuid[16], struct shim_rm_gpu_stats *out)
{
	int g;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&rm.lock);
	if ((g = gpu_index(uuid, 0)) >= 0) {
		for (int i = 0; i < rm.n_obj; i++)
			out->groups += rm.obj[i].cls == NVRM_CLASS_CHANNEL_GROUP && rm.obj[i].gpu == g;
		out->timeslice_us = rm.gpu[g].applied_us;
		out->status = rm.gpu[g].status;
	}
	pthread_mutex_unlock(&rm.lock);
}

void shim_rm_on_new_gpu(void (*fn)(const uint8_t uuid[16]))
{
	pthread_mutex_lock(&rm.lock);
	rm.on_new_gpu = fn;
	__atomic_store_n(&rm.on, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rm.lock);
}

void shim_rm_after_fork(void)
{
	pthread_mutex_init(&rm.lock, NULL);
	rm.n_obj = 0;
	for (int i = 0; i < rm.n_gpu; i++)
		rm.gpu[i].seen = 0, rm.gpu[i].applied_us = 0, rm.gpu[i].status = 0;
}
