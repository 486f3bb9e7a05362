/*
 * fakermcalls.c - the fake driver's RM calls (src/gpu/nvrm.h), made as
 * libcuda 580 makes them (docs/hardware-facts.md, "Channel groups", H200):
 * with FAKECUDA_RM=1, a device's first context allocates its device and
 * subdevice objects, one compute channel group with two channels, schedules
 * it and then sets its timeslice to 2048 us (libcuda's own call), and three
 * copy groups with a channel each, scheduled. FAKECUDA_RM_LATE=N: the N-th
 * launch on a device allocates one more group (a library's, made late).
 * FAKECUDA_RM_REOPEN=N: the N-th launch on a device closes the descriptor and
 * opens the node again on its number (the kernel side frees what was made on
 * the closed file); the next launch makes the device's objects anew under the
 * same client (the driver may give a new client a freed one's handle), their
 * handles numbered on from the fifth of the first context's: some take handles
 * the freed objects of another kind had, and the first group's is left
 * unused. FAKECUDA_RM_REOPEN=N,new: under a new client, their handles those
 * of the first context. The
 * calls go through ioctl(2) on a descriptor of /dev/zero, the fake's
 * /dev/nvidiactl (a node any process may open, on which the kernel answers
 * ENOTTY), so that the shim, preloaded before tests/fake/fakerm.c's kernel
 * side, sees them as it sees the real ones; without that side they fail
 * (ENOTTY) and the fake goes on.
 * The subdevice's allocation carries its GPU's UUID after its id, for the
 * kernel side's GET_GID_INFO (a fake's own convention).
 * cuDevicePrimaryCtxReset frees the device's objects (NVRM_ESC_FREE on the
 * device: the kernel side frees what is under it), and the next launch makes
 * them anew. A forked child is a process of its own: its first launch
 * allocates its own objects under a client of its own, as a process's
 * libcuda does.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fakeint.h"
#include "gpu/nvrm.h"

#define FAKE_CLIENT 0xc1d00001u
#define FIRST_HANDLE 0x5c000001u
#define REOPEN_SKIP 4 /* FAKECUDA_RM_REOPEN's handles: from the fifth on */

static struct {
	pthread_mutex_t lock;
	int fd;
	uint32_t client;
	uint32_t next;
	uint32_t device[NVT_MACHINE_GPUS];
	unsigned launches[NVT_MACHINE_GPUS];
} rm = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .client = FAKE_CLIENT, .next = FIRST_HANDLE};

/* The fake's subdevice allocation block: NV2080_ALLOC_PARAMETERS and the GPU's UUID. */
struct fake_subdevice_params {
	uint32_t sub_device_id;
	uint8_t uuid[16];
};

/* In a forked child: none of its parent's objects are its own. */
static void forked_child(void)
{
	pthread_mutex_init(&rm.lock, NULL);
	rm.client = FAKE_CLIENT + (uint32_t)getpid();
	memset(rm.device, 0, sizeof(rm.device));
	memset(rm.launches, 0, sizeof(rm.launches));
}

__attribute__((constructor)) static void watch_fork(void)
{
	pthread_atfork(NULL, NULL, forked_child);
}

static int enabled(void)
{
	const char *v = getenv("FAKECUDA_RM");
	return v && !strcmp(v, "1");
}

static uint32_t rm_alloc(uint32_t parent, uint32_t cls, void *params, uint32_t size)
{
	struct nvrm_alloc64 a = {rm.client, parent, rm.next++, cls, (uint64_t)(uintptr_t)params, 0, size,
				 0, 0, 0};

	if (ioctl(rm.fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_ALLOC, struct nvrm_alloc64), &a) ||
	    a.status != NVRM_OK)
		return 0;
	return a.object;
}

static void rm_control(uint32_t object, uint32_t cmd, void *params, uint32_t size)
{
	struct nvrm_control c = {rm.client, object, cmd, 0, (uint64_t)(uintptr_t)params, size, 0};

	ioctl(rm.fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_CONTROL, struct nvrm_control), &c);
}

/* A channel group of device dev with n channels of class cls, scheduled; compute: libcuda's own
 * timeslice after. */
static void make_group(int dev, int channels, int compute)
{
	struct nvrm_schedule on = {1, 0, 0};
	struct nvrm_timeslice ts = {NVRM_LIBCUDA_TIMESLICE_US};
	uint32_t tsg = rm_alloc(rm.device[dev], NVRM_CLASS_CHANNEL_GROUP, NULL, 0);

	if (!tsg)
		return;
	for (int i = 0; i < channels; i++)
		rm_alloc(tsg, NVRM_CLASS_CHANNEL_HOPPER, NULL, 0);
	rm_control(tsg, NVRM_TSG_GPFIFO_SCHEDULE, &on, sizeof(on));
	if (compute)
		rm_control(tsg, NVRM_TSG_SET_TIMESLICE, &ts, sizeof(ts));
}

INTERNAL void fake_rm_context(int dev, const unsigned char uuid[16])
{
	struct fake_subdevice_params sub = {0, {0}};
	uint32_t device_id = (uint32_t)dev;

	if (!enabled() || dev < 0 || dev >= NVT_MACHINE_GPUS)
		return;
	pthread_mutex_lock(&rm.lock);
	if (rm.fd < 0)
		rm.fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	if (rm.fd >= 0 && !rm.device[dev] &&
	    (rm.device[dev] = rm_alloc(rm.client, NVRM_CLASS_DEVICE, &device_id, sizeof(device_id)))) {
		memcpy(sub.uuid, uuid, 16);
		rm_alloc(rm.device[dev], NVRM_CLASS_SUBDEVICE, &sub, sizeof(sub));
		make_group(dev, 2, 1);
		for (int i = 0; i < 3; i++)
			make_group(dev, 1, 0);
	}
	pthread_mutex_unlock(&rm.lock);
}

/* FAKECUDA_RM_REOPEN: the descriptor closed and the node opened again on its number; every device's
 * objects are made anew at its next launch (new_client: under a new client). */
static void reopen(int new_client)
{
	int fd;

	close(rm.fd);
	fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	if (fd >= 0 && fd != rm.fd && dup3(fd, rm.fd, O_CLOEXEC) == rm.fd)
		close(fd); /* (the lowest free number mostly is the closed one's) */
	else if (fd != rm.fd)
		rm.fd = fd;
	memset(rm.device, 0, sizeof(rm.device));
	rm.client += new_client ? 1 : 0;
	rm.next = new_client ? FIRST_HANDLE : FIRST_HANDLE + REOPEN_SKIP;
}

INTERNAL void fake_rm_launch(int dev)
{
	const char *late = getenv("FAKECUDA_RM_LATE"), *again = getenv("FAKECUDA_RM_REOPEN");
	unsigned long n;
	char *end;

	if ((!late && !again) || !enabled() || dev < 0 || dev >= NVT_MACHINE_GPUS)
		return;
	pthread_mutex_lock(&rm.lock);
	if (rm.device[dev]) {
		n = ++rm.launches[dev];
		if (late && n == strtoul(late, NULL, 10))
			make_group(dev, 1, 1);
		if (again && n == strtoul(again, &end, 10))
			reopen(!strcmp(end, ",new"));
	}
	pthread_mutex_unlock(&rm.lock);
}

INTERNAL void fake_rm_context_reset(int dev)
{
	struct nvrm_free f;

	if (!enabled() || dev < 0 || dev >= NVT_MACHINE_GPUS)
		return;
	pthread_mutex_lock(&rm.lock);
	if (rm.fd >= 0 && rm.device[dev]) {
		f = (struct nvrm_free){rm.client, rm.client, rm.device[dev], 0};
		ioctl(rm.fd, _IOWR(NVRM_IOCTL_MAGIC, NVRM_ESC_FREE, struct nvrm_free), &f);
		rm.device[dev] = 0;
		rm.launches[dev] = 0;
	}
	pthread_mutex_unlock(&rm.lock);
}
