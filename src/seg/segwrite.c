/*
 * segwrite.c - writing a task's control segment (segfile.h): the writer's
 * lock in the run directory's lock file, then the slot written through a
 * mapping, with a fault turned into an error (the file's owner may shrink
 * it under the mapping at any time). Finding and reading it: segopen.c.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "segwrite.h"
#include "core/segment.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

/* ---- Writing: a fault on the mapping becomes an error --------------------- */

static sigjmp_buf bus_jump;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	if (bus_armed)
		siglongjmp(bus_jump, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* write_mapped's answer: written, and the slot's priority level changed. */
#define NVT_SEG_NEW_PRIO 1

struct write_args {
	int gpu;
	const struct nvt_slot_view *view;
	int new_gpu;
};

static int check_mapped(struct nvt_seg_handle *h, const void *unused)
{
	const struct nvt_segment *seg = h->seg;

	(void)unused;
	if (nvt_segment_check(seg, sizeof(*seg)) != NVT_SEG_VALID)
		return NVT_SEG_ECORRUPT;
	if (seg->pid != h->head.pid || seg->start_time != h->head.start_time ||
	    seg->pidns != h->head.pidns || seg->uid != h->head.uid)
		return NVT_SEG_ENOTASK;
	return NVT_SEG_OK;
}

static int write_mapped(struct nvt_seg_handle *h, const void *arg)
{
	const struct write_args *a = arg;
	struct nvt_gpu_slot *slot = &h->seg->gpu[a->gpu];
	int new_prio = slot->prio.prio != a->view->prio.prio;
	struct nvt_slot_view old;
	/* Launches that use the slot's partition use the new one too when the write changes
	 * no mask (a priority alone): it is applied as written, and -p does not call it
	 * pending until a launch of a task that may launch no more. */
	int carry = nvt_slot_read(slot, &old, 1) == 0 && old.seq &&
		    __atomic_load_n(&slot->applied_seq, __ATOMIC_ACQUIRE) == old.seq &&
		    nvt_slot_same_masks(&old, a->view);
	uint64_t seq = nvt_slot_write(slot, a->view);

	if (carry)
		nvt_slot_set_applied(slot, seq);
	if (a->new_gpu)
		nvt_segment_bump_gen(h->seg); /* the shim looks again for GPUs it had no slot for */
	return new_prio ? NVT_SEG_NEW_PRIO : NVT_SEG_OK;
}

/* Runs fn with SIGBUS turned into NVT_SEG_ECORRUPT: the file's owner may
 * shrink it under our mapping at any time. */
static int guarded(int (*fn)(struct nvt_seg_handle *, const void *), struct nvt_seg_handle *h,
		   const void *arg)
{
	struct sigaction sa, old;
	volatile int rc = NVT_SEG_ECORRUPT;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &old))
		return NVT_SEG_ESYS;
	if (sigsetjmp(bus_jump, 1) == 0) {
		bus_armed = 1;
		rc = fn(h, arg);
	}
	bus_armed = 0;
	sigaction(SIGBUS, &old, NULL);
	return rc;
}

int nvt_seg_lock(struct nvt_seg_handle *h, int timeout_ms)
{
	struct timespec pause = {0, 1000000};
	struct stat st;
	void *p;

	if (!h->writable)
		return NVT_SEG_EPERM;
	if (h->lock_fd < 0) {
		errno = h->lock_errno;
		return NVT_SEG_ESYS;
	}
	/* Only the segment's user and root can open the lock file: nobody else
	 * can keep us waiting. A holder that dies loses the lock. */
	for (int waited = 0;; waited++) {
		if (nvt_lock_byte(h->lock_fd, h->head.pidns, h->head.pid, F_WRLCK) == 0)
			break;
		if (errno != EAGAIN && errno != EINTR)
			return NVT_SEG_ESYS;
		if (waited >= timeout_ms)
			return NVT_SEG_EBUSY;
		nanosleep(&pause, NULL);
	}
	h->locked = 1;
	if (fstat(h->fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size != sizeof(struct nvt_segment))
		return NVT_SEG_ECORRUPT;
	p = mmap(NULL, sizeof(struct nvt_segment), PROT_READ | PROT_WRITE, MAP_SHARED, h->fd, 0);
	if (p == MAP_FAILED)
		return NVT_SEG_ESYS;
	h->seg = p;
	return guarded(check_mapped, h, NULL);
}

int nvt_seg_write(struct nvt_seg_handle *h, int gpu, const struct nvt_slot_view *view, int new_gpu)
{
	struct write_args a = {gpu, view, new_gpu};
	int rc;

	if (!h->seg || gpu < 0 || gpu >= NVT_MAX_GPUS)
		return NVT_SEG_EPERM;
	rc = guarded(write_mapped, h, &a);
	if (rc != NVT_SEG_NEW_PRIO)
		return rc;
	/* A new priority changes the file's ctime, by which the priority agent reads it
	 * at its next look (it does not read every file without a priority each time).
	 * A write through a mapping sets the times at its first fault only (tmpfs): that
	 * is before the priority is in place, and never for a mapping written before. */
	futimens(h->fd, NULL);
	return NVT_SEG_OK;
}
