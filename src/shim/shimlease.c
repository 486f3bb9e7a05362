/*
 * shimlease.c - TPCs that an agent lent this task lapse when no agent runs
 * (docs/priorities.md, "The agent's guard").
 *
 * The agent's guard (--yield guard) lets a task borrow idle higher tasks'
 * TPCs by writing its current partition (mode borrowing) in its segment; an
 * agent killed outright (kill -9) gives nothing back, and the task would go on
 * running on the lender's TPCs after the lender is busy again, or after it
 * ended and another task was placed there. So the borrowing is a lease: every
 * agent touches its pid file every NVT_AGENT_HEARTBEAT_MS, and when a
 * synchronisation of this task returns (never on the launch path), at most
 * every CHECK_MS, its shim looks whether a slot of its own borrows while
 * neither root's agent nor its user's touched theirs within
 * NVT_AGENT_LEASE_MS. Then it gives the slot its own partition back itself,
 * as a restarted agent would: under its run directory's writer's lock, taken
 * without waiting (a writer that holds it is -p, or an agent: they decide).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "core/segment.h"
#include "core/tpcset.h"
#include "prio/agentbeat.h"
#include "seg/segfile.h"
#include "shimlease.h"
#include "shimstate.h"
#include "os/clock.h"

#define CHECK_MS 250 /* looks at most this often (a few system calls a look) */

static uint64_t next_check_ns;


/* Whether slot g says it borrows (a plain read: the writer's lock decides later). */
static int borrows(int g)
{
	return __atomic_load_n(&shim.seg->gpu[g].prio.mode, __ATOMIC_RELAXED) == NVT_MODE_BORROWING;
}

/* Gives the borrowing slots their own partitions back, under the writer's lock. */
static void lapse(void)
{
	uid_t uid = shim.seg->uid;
	int dirfd = nvt_userdir_open(shim.base, uid), fd = dirfd < 0 ? -1 : nvt_lock_open(dirfd, uid);
	int64_t pidns = (int64_t)shim.seg->pidns;
	pid_t pid = shim.seg->pid;

	if (dirfd >= 0)
		close(dirfd);
	if (fd < 0)
		return;
	if (nvt_lock_byte(fd, (uint64_t)pidns, pid, F_WRLCK)) {
		close(fd);
		return; /* a writer is inside: the next look */
	}
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct nvt_gpu_slot *slot = &shim.seg->gpu[g];
		struct nvt_slot_view view;
		if (!borrows(g) || nvt_slot_read(slot, &view, 4) || view.state != NVT_SLOT_SET ||
		    view.prio.mode != NVT_MODE_BORROWING || !nvt_set_count(&view.prio.own))
			continue;
		view.tpcs = view.prio.own;
		view.prio.mode = NVT_MODE_OWN;
		nvt_slot_write(slot, &view);
		if (shim_first_time(WARN_LEASE))
			shim_warn("pid %ld: no priority agent runs any more: the TPCs one lent this task "
				  "go back, and it runs on its own partition",
				  (long)getpid());
	}
	nvt_lock_byte(fd, (uint64_t)pidns, pid, F_UNLCK);
	close(fd);
}

void shim_lease_check(void)
{
	uint64_t now = nvt_clock_ns(), next = __atomic_load_n(&next_check_ns, __ATOMIC_RELAXED);
	int any = 0;

	if (now < next || !shim.seg || !shim.seg_shared ||
	    !__atomic_compare_exchange_n(&next_check_ns, &next, now + CHECK_MS * 1000000ull, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return; /* not yet, or another thread looks */
	for (int g = 0; g < NVT_MAX_GPUS && !any; g++)
		any = borrows(g);
	if (!any || nvt_agent_fresh(shim.base, 0, NVT_AGENT_LEASE_MS) ||
	    nvt_agent_fresh(shim.base, geteuid(), NVT_AGENT_LEASE_MS))
		return;
	lapse();
}
