/*
 * task.c - a task's partition changed as a whole (-p, -a) and the
 * environment a task starts with (the command's start, the Slurm plugin).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/prio.h"
#include "core/yield.h"
#include "os/clock.h"
#include "os/proc.h"
#include "task.h"
#include "alloc/reserve.h"
#include "core/mpslog.h"
#include "core/tpcset.h"

#define SEG_LOCK_TIMEOUT_MS 2000
/* Times a change follows the task into a segment an exec to another user
 * made (each exec makes one; more in the instant of a change is a loop). */
#define SUPERSEDED_RETRIES 3

int nvt_task_open(const char *base, pid_t pid, int writable, struct nvt_seg_handle *h)
{
	struct nvt_seg_handle current;
	int rc, same;

	for (int attempt = 0;; attempt++) {
		rc = nvt_seg_open(base, pid, writable, h);
		if (rc || !writable)
			return rc;
		/*
		 * To write, nvt_seg_open passes over a segment the caller may not
		 * write and tries the next user's directory. After an exec to another
		 * user (a setuid program started by the caller) that holds the
		 * segment from before the exec, which the process reads no more: a
		 * change written there would be reported and never used. The segment
		 * the process uses is the one a look for reading finds (as
		 * nvt_seg_tasks judges which are stale).
		 */
		if (nvt_seg_open(base, pid, 0, &current) != NVT_SEG_OK)
			return rc;
		same = current.dev == h->dev && current.ino == h->ino;
		nvt_seg_close(&current);
		if (same)
			return rc;
		nvt_seg_close(h);
		/* Once more: the new segment may have got its header between the
		 * two looks (the exec happening now). */
		if (attempt == 1)
			return NVT_SEG_EPERM;
	}
}

/* Slots of h that hold a GPU, and of those that hold none yet. */
static void count_slots(const struct nvt_seg_handle *h, int *used, int *free_slots)
{
	*used = *free_slots = 0;
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t uuid[16];
		if (nvt_seg_slot_gpu(h, g, uuid))
			continue;
		if (nvt_uuid_is_zero(uuid))
			(*free_slots)++;
		else
			(*used)++;
	}
}

/* The claim's request and what the task's slots hold now (prev) for want's GPUs. */
static void claim_request(const struct nvt_task_claim *claim, const struct nvt_slot_view *want,
			  const int *from, const struct nvt_slot_view *old, const int *had, int n,
			  struct nvt_claim_gpu *req, struct nvt_slot_view *prev)
{
	for (int i = 0; i < n; i++) {
		memcpy(req[i].uuid, want[i].uuid, sizeof(req[i].uuid));
		req[i].topo = want[i].topo;
		req[i].count = claim->count;
		req[i].gpcs = 0;
		req[i].strategy = claim->strategy;
		req[i].mem_limit = want[i].mem_limit; /* written with the pick */
		req[i].mem_exclusive = claim->mem_exclusive;
		req[i].gpu_mem = claim->gpu_mem ? claim->gpu_mem[from[i]] : 0;
		if (claim->near)
			req[i].near = claim->near[from[i]];
		else
			memset(&req[i].near, 0, sizeof(req[i].near));
		if (had[i]) {
			prev[i] = old[i];
		} else {
			memset(&prev[i], 0, sizeof(prev[i]));
			memcpy(prev[i].uuid, want[i].uuid, sizeof(prev[i].uuid));
			prev[i].topo = want[i].topo;
		}
		prev[i].flags = 0;
		prev[i].prio = want[i].prio; /* the claim sets its own partition */
	}
}

/* One segment's change: what it held, and what was asked of it. */
struct attempt {
	struct nvt_slot_view old[NVT_MAX_GPUS], want[NVT_MAX_GPUS], prev[NVT_MAX_GPUS];
	struct nvt_claim_gpu req[NVT_MAX_GPUS];
	int had[NVT_MAX_GPUS], n, n_used, new_slots;
	int from[NVT_MAX_GPUS]; /* want[k] is parts[from[k]] */
	/* GPUs given a memory limit alone: their slots, and what they hold with it */
	struct nvt_slot_view limited[NVT_MAX_GPUS], limited_old[NVT_MAX_GPUS];
	int limited_slot[NVT_MAX_GPUS], n_limited;
};

/* mem's limit for GPU uuid into *limit. Returns 1 if mem names the GPU, else 0. */
static int mem_given(const struct nvt_task_mem *mem, const uint8_t uuid[16], uint64_t *limit)
{
	for (int i = 0; mem && i < mem->n; i++)
		if (!memcmp(mem->gpu[i].uuid, uuid, 16)) {
			*limit = mem->gpu[i].limit;
			return 1;
		}
	return 0;
}

/*
 * The slots of mem's GPUs that a is not writing a partition for, read (under
 * the lock) into a->limited with mem's limit. Returns enum nvt_task_rc.
 */
static int plan_limits(struct nvt_seg_handle *h, const struct nvt_task_mem *mem, struct attempt *a,
		       int *seg_err, char *why, size_t len)
{
	a->n_limited = 0;
	for (int i = 0; mem && i < mem->n; i++) {
		int written = 0, g = nvt_seg_find_slot(h, mem->gpu[i].uuid);
		char uuid[NVT_UUID_TEXT_MAX];
		for (int k = 0; k < a->n; k++)
			written |= !memcmp(a->want[k].uuid, mem->gpu[i].uuid, 16);
		if (written)
			continue;
		if (g < 0) {
			nvt_uuid_format(mem->gpu[i].uuid, uuid);
			snprintf(why, len, "it has no partition on GPU %s to give a memory limit to: "
				 "give a MASK too", uuid);
			return NVT_TASK_ENOSLOT;
		}
		if (nvt_seg_read(h, g, &a->limited_old[a->n_limited], NULL)) {
			*seg_err = NVT_SEG_ECORRUPT;
			return NVT_TASK_ESEG;
		}
		a->limited[a->n_limited] = a->limited_old[a->n_limited];
		a->limited[a->n_limited].mem_limit = mem->gpu[i].limit;
		a->limited_slot[a->n_limited++] = g;
	}
	return NVT_TASK_OK;
}

/* Writes the limits plan_limits read. Returns enum nvt_task_rc. */
static int write_limits(struct nvt_seg_handle *h, struct attempt *a, int *seg_err)
{
	for (int i = 0; i < a->n_limited; i++)
		if ((*seg_err = nvt_seg_write(h, a->limited_slot[i], &a->limited[i], 0)))
			return NVT_TASK_ESEG;
	return NVT_TASK_OK;
}

/* Locks h and writes (or claims) parts in it. Returns enum nvt_task_rc. */
static int change_one(const char *base, struct nvt_seg_handle *h, const struct nvt_slot_view *parts,
		      int n_parts, const struct nvt_task_claim *claim, const struct nvt_slot_prio *prio,
		      const struct nvt_task_mem *mem, struct attempt *a, int *seg_err, char *why,
		      size_t len)
{
	int free_slots, rc;

	a->n = a->new_slots = 0;
	if ((*seg_err = nvt_seg_lock(h, SEG_LOCK_TIMEOUT_MS)))
		return NVT_TASK_ESEG;
	count_slots(h, &a->n_used, &free_slots);
	for (int i = 0; i < n_parts; i++) {
		int g;
		if (parts[i].state != NVT_SLOT_SET)
			continue; /* a GPU this change does not name */
		/* Under the lock no live writer is inside: a failed read is a dead one's. */
		g = nvt_seg_find_slot(h, parts[i].uuid);
		a->had[a->n] = g >= 0 && nvt_seg_read(h, g, &a->old[a->n], NULL) == 0;
		a->new_slots += g < 0;
		a->want[a->n] = parts[i];
		a->from[a->n] = i;
		nvt_prio_carry(&a->want[a->n], a->had[a->n] ? &a->old[a->n] : NULL, prio);
		/* The memory limit the slot holds stays, unless mem gives one. */
		if (!mem_given(mem, parts[i].uuid, &a->want[a->n].mem_limit))
			a->want[a->n].mem_limit = a->had[a->n] ? a->old[a->n].mem_limit : 0;
		a->n++;
	}
	if (a->new_slots > free_slots) {
		snprintf(why, len, "it already has partitions on %d GPUs, the most a task can have",
			 NVT_MAX_GPUS);
		return NVT_TASK_EFULL;
	}
	if ((rc = plan_limits(h, mem, a, seg_err, why, len)))
		return rc;
	if (claim) {
		/* The pick is claimed in the task's own slots, as a start claims
		 * (src/alloc/reserve.c): moves and starts at once never share a TPC. */
		claim_request(claim, a->want, a->from, a->old, a->had, a->n, a->req, a->prev);
		if (nvt_reserve_move(base, h, a->req, a->n, a->prev, claim->timeout_ms, a->want,
				     claim->holders, why, len))
			return NVT_TASK_ECLAIM;
		return write_limits(h, a, seg_err);
	}
	for (int i = 0; i < a->n; i++) {
		int g = nvt_seg_find_slot(h, a->want[i].uuid), fresh = g < 0;
		if (fresh)
			g = nvt_seg_free_slot_of(h);
		if ((*seg_err = nvt_seg_write(h, g, &a->want[i], fresh)))
			return NVT_TASK_ESEG;
	}
	return write_limits(h, a, seg_err);
}

/* Gives a superseded segment's slots back what a claim found there: the pick
 * is claimed again in the task's own segment, and is held there alone. */
static void withdraw_claim(struct nvt_seg_handle *h, const struct attempt *a)
{
	for (int i = 0; i < a->n; i++) {
		int g = nvt_seg_find_slot(h, a->prev[i].uuid);
		if (g >= 0)
			nvt_seg_write(h, g, &a->prev[i], 0);
	}
}

/* Fills out's results from the segment h that was written last. Returns enum nvt_task_rc. */
static int read_result(struct nvt_seg_handle *h, const struct attempt *a,
		       struct nvt_task_change *out)
{
	out->n = a->n;
	for (int i = 0; i < a->n; i++) {
		int g = nvt_seg_find_slot(h, a->want[i].uuid);
		if (!out->had[i] || out->before[i].state != a->want[i].state ||
		    !nvt_set_equal(&out->before[i].tpcs, &a->want[i].tpcs) ||
		    out->before[i].mem_limit != a->want[i].mem_limit)
			out->changed = 1;
		if (g < 0 || nvt_seg_read(h, g, &out->now[i], &out->status[i])) {
			out->seg_err = NVT_SEG_ECORRUPT;
			return NVT_TASK_ESEG;
		}
	}
	out->n_limited = a->n_limited;
	for (int i = 0; i < a->n_limited; i++, out->n++) {
		out->changed |= a->limited_old[i].mem_limit != a->limited[i].mem_limit;
		if (nvt_seg_read(h, a->limited_slot[i], &out->now[out->n], &out->status[out->n])) {
			out->seg_err = NVT_SEG_ECORRUPT;
			return NVT_TASK_ESEG;
		}
	}
	return NVT_TASK_OK;
}

int nvt_task_set_partition(const char *base, struct nvt_seg_handle *h,
			   const struct nvt_slot_view *parts, int n_parts,
			   const struct nvt_task_claim *claim, const struct nvt_slot_prio *prio,
			   const struct nvt_task_mem *mem, struct nvt_task_change *out, char *why,
			   size_t len)
{
	static struct attempt a;
	struct nvt_seg_handle own;
	int rc;

	memset(out, 0, sizeof(*out));
	for (int attempt = 0;; attempt++) {
		rc = change_one(base, h, parts, n_parts, claim, prio, mem, &a, &out->seg_err, why,
				len);
		if (rc)
			break;
		out->written_ns = nvt_clock_ns();
		if (attempt == 0) {
			/* What the task had: the segment it used when the change began. */
			out->n_before = a.n_used;
			out->new_slots = a.new_slots;
			memcpy(out->before, a.old, sizeof(out->before));
			memcpy(out->had, a.had, sizeof(out->had));
			for (int i = 0; i < a.n_limited && a.n + i < NVT_MAX_GPUS; i++) {
				out->before[a.n + i] = a.limited_old[i];
				out->had[a.n + i] = 1;
			}
		}
		/* Written into the segment the task had before an exec to another
		 * user, while that user's shim made its own from it, maybe before
		 * this write: write the task's own segment too (the one it reads). */
		if (attempt == SUPERSEDED_RETRIES || !nvt_seg_superseded(base, h)) {
			rc = read_result(h, &a, out);
			break;
		}
		out->reopen_err = nvt_task_open(base, h->pid, 1, &own);
		if (out->reopen_err) {
			/* The change stands where it was written: say so, not that it failed. */
			rc = read_result(h, &a, out);
			break;
		}
		if (claim)
			withdraw_claim(h, &a);
		nvt_seg_close(h);
		*h = own;
	}
	nvt_seg_close(h);
	return rc;
}

/* Appends path to the colon-separated list old unless it is there. Returns 0 or -1. */
static int preload_join(const char *old, const char *path, char *buf, size_t len)
{
	size_t n = strlen(path);

	if (old && *old)
		for (const char *p = old; (p = strstr(p, path)); p++)
			if ((p == old || p[-1] == ':' || p[-1] == ' ') &&
			    (!p[n] || p[n] == ':' || p[n] == ' '))
				return snprintf(buf, len, "%s", old) < (int)len ? 0 : -1;
	return snprintf(buf, len, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", path) <
			       (int)len
		       ? 0
		       : -1;
}

static void env_add(struct nvt_task_env *e, const char *name, const char *value, int overwrite)
{
	e->vars[e->n].name = name;
	e->vars[e->n].value = value;
	e->vars[e->n++].overwrite = overwrite;
}

/* NVT_ENV_MEM's value for parts (n) into buf: their limit where they share one, else NULL
 * (the environment's record holds one limit for every GPU: a process that starts from it
 * gets none rather than another GPU's). */
static const char *mem_env(const struct nvt_slot_view *parts, int n, char *buf, size_t len)
{
	for (int i = 1; i < n; i++)
		if (parts[i].mem_limit != parts[0].mem_limit)
			return NULL;
	if (n < 1 || !parts[0].mem_limit)
		return NULL;
	snprintf(buf, len, "%llu", (unsigned long long)parts[0].mem_limit);
	return buf;
}

int nvt_task_env_build(const struct nvt_task_env_in *in, struct nvt_task_env *out, char *why,
		       size_t len)
{
	out->n = 0;
	if (nvt_gpusel_env_format(in->parts, in->n_parts, out->partition, sizeof(out->partition)) < 0) {
		snprintf(why, len, "internal error: cannot format the partition");
		return -1;
	}
	if (preload_join(in->old_preload, in->shim, out->preload, sizeof(out->preload))) {
		snprintf(why, len, "LD_PRELOAD is too long to add %s", in->shim);
		return -1;
	}
	env_add(out, NVT_ENV_PARTITION, out->partition, 1);
	env_add(out, NVT_ENV_MEM, mem_env(in->parts, in->n_parts, out->mem, sizeof(out->mem)), 1);
	env_add(out, NVT_ENV_LD_PRELOAD, out->preload, 1);
	/* Channels (docs/bench/startup-2026-11-23/): CUDA's own count unless told; never over the
	 * task's own CUDA_DEVICE_MAX_CONNECTIONS. */
	if (nvt_channels_env(in->channels ? in->channels : NVT_CHANNELS_DEFAULT, out->channels,
			     sizeof(out->channels)))
		env_add(out, NVT_ENV_CUDA_CONNECTIONS, out->channels, 0);
	env_add(out, NVT_ENV_MPS_PIPE_DIR, in->pipe_dir ? in->pipe_dir : "/dev/null", 1);
	if (in->sm_limit_percent > 0) {
		snprintf(out->sm_limit, sizeof(out->sm_limit), "%d", in->sm_limit_percent);
		env_add(out, NVT_ENV_MPS_THREAD_PERCENTAGE, out->sm_limit, 1);
	}
	if (in->sm_count)
		env_add(out, NVT_ENV_SM_COUNT, in->sm_count, 1);
	if (in->visible)
		env_add(out, NVT_ENV_CUDA_VISIBLE, in->visible, 1);
	if (in->rundir)
		env_add(out, NVT_ENV_RUNDIR, in->rundir, 1);
	return 0;
}

int nvt_task_env_self(const struct nvt_slot_prio *prio, struct nvt_task_env *out, char *why,
		      size_t len)
{
	struct nvt_proc_id self = {nvt_own_pidns(), getpid(), 0};
	struct nvt_stat st;

	out->n = 0;
	out->named = 0;
	/* /proc/self must number PIDs as our namespace does (the shim compares). */
	if (self.pidns && nvt_proc_stat(0, &st) == 0 && st.pid == self.pid) {
		self.start_time = st.start_time;
		out->named = nvt_ptree_id_format(&self, out->owner, sizeof(out->owner)) == 0;
	}
	env_add(out, NVT_ENV_PARTITION_FOR, out->named ? out->owner : NULL, 1);
	if (!prio || prio->prio == NVT_PRIO_NONE) {
		env_add(out, NVT_ENV_PRIORITY, NULL, 1);
		return 0;
	}
	if (nvt_prio_env_format(prio, out->priority, sizeof(out->priority)) < 0) {
		snprintf(why, len, "internal error: cannot format the priority");
		return -1;
	}
	env_add(out, NVT_ENV_PRIORITY, out->priority, 1);
	/* Below normal among MPS's clients, unless the user chose (read at the
	 * client's start: -p cannot change it later). */
	if (prio->prio < NVT_PRIO_HIGH && (prio->yield & NVT_YIELD_CLIENT))
		env_add(out, NVT_ENV_MPS_CLIENT_PRIORITY, "1", 0);
	/* A high time-sliced task's bridge needs its streams on one hardware queue, unless the
	 * user chose (--channels, or the variable set already: then its steps are not bridged;
	 * NVTASKSET_BRIDGE=0: no bridge). */
	if (nvt_bridge_on(nvt_bridge_wanted(prio->prio, prio->yield, "1", getenv(NVT_ENV_BRIDGE))))
		env_add(out, NVT_ENV_CUDA_CONNECTIONS, "1", 0);
	return 0;
}
