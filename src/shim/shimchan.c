/*
 * shimchan.c - this process's channel groups, through the kernel module's RM
 * interface (src/gpu/nvrm.h; docs/priorities.md, "Preemption").
 *
 * libcuda allocates its channel groups (TSGs: the unit the GPU's scheduler
 * time-slices between contexts), their channels, and the device and
 * subdevice they belong to with ioctls on /dev/nvidiactl, and schedules them
 * with controls. The shim exports ioctl(2): for the requests of the RM (type
 * 'F') it follows those objects of its own process, and
 * gives each channel group the timeslice asked for its GPU: at its
 * allocation, after every schedule or bind of it or of its channels, and
 * right after libcuda's own SET_TIMESLICE, which gives the compute group
 * 2048 us right after scheduling it (a timeslice set only at allocation did
 * not hold; rewriting libcuda's call was enough: H200, driver 580,
 * docs/hardware-facts.md; the later of two sets is the one the module keeps).
 * The controls go through the descriptor libcuda allocated the object with,
 * on handles of its own client: only this process's own objects. The shim
 * does not follow close(2): before each control of its own it checks that
 * the descriptor still names the file the object was made on (its device,
 * inode and node, fstat'd at the allocation); one that names another file
 * (the number reused after a close) gets no control, and the objects made on
 * it are forgotten, as the driver frees a file's objects when it is closed.
 * Another open of the driver's own node on that number is the same file to
 * fstat: there the control names a client of the closed file, and the driver
 * answers that it knows no such client or object (NV_ERR_INVALID_CLIENT,
 * _INVALID_OBJECT_HANDLE, _INVALID_OBJECT_PARENT, _OBJECT_NOT_FOUND; so too
 * for an object freed any other way the shim did not see): the object (for a
 * client, the client's objects on that file) is forgotten, never asked again,
 * and not counted as a refusal. An allocation the driver answers on a handle
 * the shim has a record of (of any class) shows that record stale: it goes,
 * with what was under it, and the new object is followed. A group's GPU is
 * its subdevice's UUID (GET_GID_INFO). Every other ioctl goes on untouched,
 * and nothing here runs until shimpreempt.c asks for a timeslice.
 * The hook reads nothing the kernel has not read first: each request goes to
 * the kernel as the caller made it, and only one it answered (0: it copied the
 * block in and out) on the driver's own node is looked at after: an allocation
 * on a character device of the driver's major (fstat'd before the block is
 * read), a control or a free on a descriptor the driver answered one on; another
 * driver's file answering the same number has nothing read. An ioctl the kernel
 * refuses (ENOTTY on another file, EFAULT for a block that is not there, EINVAL
 * for a size that is not the structure's) fails as it would without the shim.
 * Not the launch path: libcuda's RM calls are its slow path
 * (allocation, scheduling), and the lock is taken only for allocations and
 * for the calls on channel groups and channels.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gpu/nvrm.h"
#include "shimchan.h"
#include "shimstate.h"

#define EXPORT __attribute__((visibility("default")))
#define RM_OBJECTS 1024 /* devices, subdevices, groups and channels followed (PyTorch: ~30) */
#define RM_GPUS 17     /* NVT_MAX_GPUS and one for groups whose GPU is not known */
#define RM_FDS 65536   /* descriptors below this one are followed (libcuda opens its early) */

struct rm_obj {
	int fd;
	dev_t dev, rdev;  /* the file fd named at the allocation (fstat) */
	ino_t ino;
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
	uint64_t driver_fd[RM_FDS / 64]; /* bit fd: the driver answered an allocation on fd */
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

/* A control's answer where o's descriptor names another file now: none was issued. */
#define RM_CLOSED 0xfffffffeu

/* 1 if descriptor fd names the file an object was made on (dev, ino, rdev). */
static int same_file(int fd, dev_t dev, ino_t ino, dev_t rdev)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino && st.st_rdev == rdev;
}

/* Issues control cmd on object o through o's descriptor. Returns its status (~0: the ioctl
 * failed; RM_CLOSED: the descriptor names another file than o was made on, and nothing was
 * issued). */
static uint32_t control(const struct rm_obj *o, uint32_t cmd, void *params, uint32_t size)
{
	struct nvrm_control c = {o->client, o->handle, cmd, 0, (uint64_t)(uintptr_t)params, size, 0};

	if (!same_file(o->fd, o->dev, o->ino, o->rdev))
		return RM_CLOSED;
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

/* An object's class once it is gone: drop_gone removes it. */
#define GONE ~0u

/* Removes the objects marked GONE and every object under one (in the table's order kept). */
static void drop_gone(void)
{
	int removed = 0, kept = 0;

	for (int i = 0; i < rm.n_obj && !removed; i++)
		removed = rm.obj[i].cls == GONE;
	if (!removed)
		return; /* (one look: an allocation's usual case) */
	do {
		removed = 0;
		for (int i = 0; i < rm.n_obj; i++) {
			struct rm_obj *p = find(rm.obj[i].client, rm.obj[i].parent);
			if (rm.obj[i].cls != GONE && p && p->cls == GONE)
				rm.obj[i].cls = GONE, removed = 1;
		}
	} while (removed);
	for (int i = 0; i < rm.n_obj; i++)
		if (rm.obj[i].cls != GONE)
			rm.obj[kept++] = rm.obj[i];
	rm.n_obj = kept;
}

/* Marks GONE (drop_gone removes them) the objects made on o's descriptor and file: all of them, or
 * (client_only) those of o's client. */
static void gone_on_file(const struct rm_obj *o, int client_only)
{
	struct rm_obj at = *o; /* (o itself is marked in the loop) */

	for (int i = 0; i < rm.n_obj; i++)
		if (rm.obj[i].fd == at.fd && rm.obj[i].dev == at.dev && rm.obj[i].ino == at.ino &&
		    rm.obj[i].rdev == at.rdev && (!client_only || rm.obj[i].client == at.client))
			rm.obj[i].cls = GONE;
}

/* What a control on o answered says o is gone: its descriptor names another file now (RM_CLOSED:
 * the file o was made on was closed, and the driver freed what was made on it), or the driver knows
 * its client no more (that client's objects on o's file go), or o no more (o and what is under it
 * go). Those are marked GONE, never asked again; an allocation that reuses their handles is
 * followed. Returns 1 if o is gone, else 0 (a refusal: o stays). */
static int gone(struct rm_obj *o, uint32_t status)
{
	switch (status) {
	case RM_CLOSED:
		gone_on_file(o, 0);
		return 1;
	case NVRM_ERR_INVALID_CLIENT:
		gone_on_file(o, 1);
		return 1;
	case NVRM_ERR_INVALID_OBJECT_HANDLE:
	case NVRM_ERR_INVALID_OBJECT_PARENT:
	case NVRM_ERR_OBJECT_NOT_FOUND:
		o->cls = GONE;
		return 1;
	}
	return 0;
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
		uint32_t status;
		memset(&gid, 0, sizeof(gid));
		gid.flags = NVRM_GID_BINARY;
		status = control(sub, NVRM_SUBDEVICE_GET_GID_INFO, &gid, sizeof(gid));
		sub->asked = status == NVRM_OK && gid.length == 16 ? 1 : -1;
		if (!gone(sub, status) && sub->asked > 0)
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

/* A group's set that found it gone (gone()): it is marked GONE, and not counted as refused. */
#define RM_GONE 0xfffffffdu

/* Gives group t its GPU's timeslice, and reads the driver's record back. Returns the status
 * (RM_GONE: t is gone, marked GONE with what went with it). */
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
	if (gone(t, status))
		return RM_GONE;
	if (status == NVRM_OK && back.timeslice_us != ts.timeslice_us)
		status = NVRM_ERR_NOT_SUPPORTED; /* the driver kept another value */
	if (status != NVRM_OK)
		g->status = status;
	else
		g->applied_us = (uint32_t)back.timeslice_us;
	return status;
}

/* The allocation the driver answered on fd, whose file st is (one of the driver's nodes): its
 * block arg of size bytes. */
static void on_alloc(int fd, const struct stat *st, const void *arg, unsigned size)
{
	uint32_t root, parent, object, cls, status;
	struct rm_obj *o;
	int followed;

	if (size == sizeof(struct nvrm_alloc64)) {
		const struct nvrm_alloc64 *a = arg;
		root = a->root, parent = a->parent, object = a->object, cls = a->cls, status = a->status;
	} else if (size == sizeof(struct nvrm_alloc)) {
		const struct nvrm_alloc *a = arg;
		root = a->root, parent = a->parent, object = a->object, cls = a->cls, status = a->status;
	} else {
		return;
	}
	if (status != NVRM_OK)
		return;
	followed = cls == NVRM_CLASS_DEVICE || cls == NVRM_CLASS_SUBDEVICE ||
		   cls == NVRM_CLASS_CHANNEL_GROUP || nvrm_is_channel_class(cls);
	pthread_mutex_lock(&rm.lock);
	/* The driver made root's handle object: a record of that handle is of an object it freed
	 * without the shim seeing it (its file closed), and goes, with what was under it. */
	if ((o = find(root, object)))
		o->cls = GONE;
	drop_gone();
	if (!followed) {
		pthread_mutex_unlock(&rm.lock);
		return;
	}
	if (rm.n_obj == RM_OBJECTS && cls == NVRM_CLASS_CHANNEL_GROUP && shim_first_time(WARN_PREEMPT))
		shim_warn("too many driver objects to follow: this task's newer channel groups keep the "
			  "driver's timeslice");
	if (rm.n_obj < RM_OBJECTS) {
		o = &rm.obj[rm.n_obj++];
		*o = (struct rm_obj){.fd = fd, .dev = st->st_dev, .rdev = st->st_rdev, .ino = st->st_ino,
				     .client = root, .handle = object, .parent = parent, .cls = cls,
				     .gpu = -1};
		if (cls == NVRM_CLASS_CHANNEL_GROUP && (o->gpu = gpu_of_parent(root, parent)) >= 0)
			set_timeslice(o);
		else if (cls == NVRM_CLASS_CHANNEL_GROUP)
			rm.n_obj--; /* no room for its GPU: not followed */
		drop_gone();
	}
	pthread_mutex_unlock(&rm.lock);
}

/* Forgets object handle of client and everything under it (a client: all of its objects). */
static void on_free(uint32_t client, uint32_t handle)
{
	pthread_mutex_lock(&rm.lock);
	for (int i = 0; i < rm.n_obj; i++)
		if (rm.obj[i].client == client && (rm.obj[i].handle == handle || handle == client))
			rm.obj[i].cls = GONE;
	drop_gone();
	pthread_mutex_unlock(&rm.lock);
}

static int is_group_command(uint32_t cmd)
{
	return cmd == NVRM_TSG_GPFIFO_SCHEDULE || cmd == NVRM_TSG_BIND || cmd == NVRM_TSG_SET_TIMESLICE ||
	       cmd == NVRM_CHANNEL_GPFIFO_SCHEDULE || cmd == NVRM_CHANNEL_BIND;
}

/* Whether fd is open on one of the driver's nodes (a character device of its major number), its
 * file into *st; nothing of an ioctl's block is read before. */
static int driver_node(int fd, struct stat *st)
{
	return fstat(fd, st) == 0 && S_ISCHR(st->st_mode) && major(st->st_rdev) == NVRM_DEVICE_MAJOR;
}

/* The kernel answered an allocation on fd: the driver's if its file is (driver_node), else not. */
static void note_driver_fd(int fd, int driver)
{
	if (fd < 0 || fd >= RM_FDS)
		return;
	if (driver)
		__atomic_fetch_or(&rm.driver_fd[fd / 64], 1ull << (fd % 64), __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&rm.driver_fd[fd / 64], ~(1ull << (fd % 64)), __ATOMIC_RELAXED);
}

static int is_driver_fd(int fd)
{
	return fd >= 0 && fd < RM_FDS &&
	       (__atomic_load_n(&rm.driver_fd[fd / 64], __ATOMIC_RELAXED) >> (fd % 64) & 1);
}

/* libcuda's control c, answered on fd (the kernel read and wrote c): after a schedule or bind
 * of one of its groups or channels, and after its own SET_TIMESLICE, the group gets the
 * timeslice asked again (on driver 580, setting it after libcuda's own call was enough; a
 * schedule that resets it is caught too). */
static void after_control(int fd, const struct nvrm_control *c)
{
	struct rm_obj *t;

	if (c->status != NVRM_OK || !is_group_command(c->cmd))
		return;
	pthread_mutex_lock(&rm.lock);
	if ((t = group_of(c->client, c->object)) && t->fd == fd && set_timeslice(t) == RM_GONE)
		drop_gone();
	pthread_mutex_unlock(&rm.lock);
}

EXPORT int ioctl(int fd, unsigned long request, ...)
{
	unsigned long arg;
	va_list ap;
	int rc, err;

	va_start(ap, request);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	rc = next_ioctl(fd, request, arg);
	/* (errno is the kernel's: nothing below runs after a refusal, and what runs after an
	 * answer keeps it) */
	if (rc || !__atomic_load_n(&rm.on, __ATOMIC_ACQUIRE) || _IOC_TYPE(request) != NVRM_IOCTL_MAGIC ||
	    !arg)
		return rc;
	err = errno;
	switch (_IOC_NR(request)) {
	case NVRM_ESC_CONTROL:
		if (_IOC_SIZE(request) == sizeof(struct nvrm_control) && is_driver_fd(fd))
			after_control(fd, (const struct nvrm_control *)arg);
		break;
	case NVRM_ESC_ALLOC: {
		struct stat st;
		int driver = driver_node(fd, &st);
		note_driver_fd(fd, driver);
		if (driver)
			on_alloc(fd, &st, (const void *)arg, _IOC_SIZE(request));
		break;
	}
	case NVRM_ESC_FREE: {
		const struct nvrm_free *f = (const struct nvrm_free *)arg;
		if (_IOC_SIZE(request) == sizeof(*f) && is_driver_fd(fd) && f->status == NVRM_OK)
			on_free(f->root, f->object);
		break;
	}
	}
	errno = err;
	return rc;
}

int shim_chan_timeslice(const uint8_t uuid[16], uint32_t timeslice_us)
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
		uint32_t status;
		/* (a group marked GONE meanwhile is passed over: drop_gone after) */
		if (t->cls != NVRM_CLASS_CHANNEL_GROUP || (uuid ? t->gpu != g : rm.gpu[t->gpu].want))
			continue;
		status = set_timeslice(t);
		failed |= status != NVRM_OK && status != RM_GONE;
		n += status != RM_GONE;
	}
	drop_gone();
	pthread_mutex_unlock(&rm.lock);
	return failed ? -1 : n;
}

void shim_chan_stats(const uint8_t uuid[16], struct shim_chan_gpu_stats *out)
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

void shim_chan_on_new_gpu(void (*fn)(const uint8_t uuid[16]))
{
	pthread_mutex_lock(&rm.lock);
	rm.on_new_gpu = fn;
	__atomic_store_n(&rm.on, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rm.lock);
}

void shim_chan_after_fork(void)
{
	pthread_mutex_init(&rm.lock, NULL);
	rm.n_obj = 0;
	for (int i = 0; i < rm.n_gpu; i++)
		rm.gpu[i].seen = 0, rm.gpu[i].applied_us = 0, rm.gpu[i].status = 0;
}
