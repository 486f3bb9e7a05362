/*
 * task.h - what is done to a task as a whole: open the segment it uses,
 * change its partitions (locked, race-free with -n --exclude-running, across
 * an exec to another user), and the environment a task is started with.
 * The nvtaskset command (-p, -a, the start) and the Slurm plugin call these
 * and only parse and print. Return codes: README.md, "Return codes".
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TASK_H
#define NVT_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvtaskset.h"
#include "core/cdi.h"
#include "core/gpusel.h"
#include "core/memlimit.h"
#include "core/prio.h"
#include "core/ptree.h"
#include "core/segment.h"
#include "core/topo.h"
#include "seg/segfile.h"

struct nvt_reserve_holders; /* alloc/reserve.h */

/*
 * nvt_seg_open under base, but a task whose current segment the caller may
 * not write is NVT_SEG_EPERM even where a segment it left before an exec to
 * another user is the caller's. Returns enum nvt_seg_err (seg/'s codes).
 */
int nvt_task_open(const char *base, pid_t pid, int writable, struct nvt_seg_handle *h);

/* -n COUNT --exclude-running: pick and claim instead of writing the TPCs given. */
struct nvt_task_claim {
	unsigned count;             /* TPCs to pick on each GPU named */
	enum nvt_strategy strategy;
	int timeout_ms;             /* waits for other claimers (nvt_reserve_move) */
	const struct nvt_near *near; /* one per entry of parts, or NULL: anywhere */
	int mem_exclusive;           /* --mem-exclusive (struct nvt_claim_gpu) */
	const uint64_t *gpu_mem;     /* with it: each entry of parts' GPU memory, bytes */
	struct nvt_reserve_holders *holders; /* NULL, or gets who holds the TPCs of a GPU found
					      * too full (NVT_TASK_ECLAIM) */
};

/* --mem with -p: the GPU memory limits to give the task's GPUs, each by its
 * UUID (limit 0: none); a GPU not named keeps the limit its slot holds. */
struct nvt_task_mem {
	int n;
	struct nvt_task_mem_gpu {
		uint8_t uuid[16];
		uint64_t limit;
	} gpu[NVT_MAX_GPUS];
};

/* What nvt_task_set_partition did, for the caller to report. */
struct nvt_task_change {
	int n;          /* GPUs written: the entries below (those whose partition was
			 * written first, then those given only a memory limit) */
	int n_before;   /* GPUs the task had slots for before */
	int new_slots;  /* GPUs written that the task had no slot for */
	int n_limited;  /* the last of the n entries: GPUs given a memory limit alone */
	int changed;    /* a partition written differs from the one the task had */
	int had[NVT_MAX_GPUS]; /* before[i] holds what GPU i had */
	struct nvt_slot_view before[NVT_MAX_GPUS];
	struct nvt_slot_view now[NVT_MAX_GPUS];
	struct nvt_slot_status status[NVT_MAX_GPUS];
	uint64_t written_ns; /* nvt_clock_ns (CLOCK_MONOTONIC), when the change was made */
	/*
	 * 0, or (enum nvt_seg_err) why the task's own segment could not be
	 * opened after an exec to another user made the one written here a
	 * segment from before the exec: its new shim may or may not have copied
	 * the change (the process may have ended: NVT_SEG_ENOPROC).
	 */
	int reopen_err;
	int seg_err;    /* with NVT_TASK_ESEG: enum nvt_seg_err */
};

enum nvt_task_rc {
	NVT_TASK_OK = 0,
	NVT_TASK_ESEG = -1,   /* the segment could not be locked, written or read: seg_err */
	NVT_TASK_EFULL = -2,  /* the task has partitions on NVT_MAX_GPUS GPUs already */
	NVT_TASK_ECLAIM = -3, /* -n --exclude-running could not claim: why says */
	NVT_TASK_ENOSLOT = -4, /* a memory limit for a GPU the task has no slot for: why says */
};

/*
 * Writes parts (n_parts; those of state NVT_SLOT_SET) into the task open for
 * writing as h, or with claim (not NULL) picks claim->count TPCs on each of
 * their GPUs race-free (nvt_reserve_move), and closes h. Each slot written keeps
 * the task's priority, or gets prio's (not NULL), and its own partition is
 * what is written (nvt_prio_carry). Each slot written keeps its GPU memory
 * limit, or gets mem's (not NULL) for its GPU; a GPU of mem that parts does
 * not write gets its limit alone, its partition untouched (the task must have
 * a slot for it: else NVT_TASK_ENOSLOT, nothing written). A limit below what
 * the task holds takes nothing back: its shim refuses allocations until it has
 * freed enough. If an exec to another
 * user made the segment a superseded one meanwhile (nvt_seg_superseded),
 * the change is made again in the task's own segment: a claim is withdrawn
 * from the superseded segment before it is made in the new one, so no pick
 * is left behind. out says what was done. Returns enum nvt_task_rc; why
 * says more (any failure but NVT_TASK_ESEG's seg_err).
 */
int nvt_task_set_partition(const char *base, struct nvt_seg_handle *h,
			   const struct nvt_slot_view *parts, int n_parts,
			   const struct nvt_task_claim *claim, const struct nvt_slot_prio *prio,
			   const struct nvt_task_mem *mem, struct nvt_task_change *out, char *why,
			   size_t len);

/* ---- The environment a task starts with (nvtaskset's start, the Slurm plugin) ----
 * Every variable a front end sets for a task is chosen here: the front ends
 * only apply the list (setenv, spank_setenv). */

#define NVT_TASK_ENV_MAX 10
#define NVT_TASK_ENV_PRELOAD_MAX 12288

/* What a task's environment is made from. */
struct nvt_task_env_in {
	const struct nvt_slot_view *parts; /* its partitions, n_parts GPUs */
	int n_parts;
	const char *shim;          /* the shim's path, added to LD_PRELOAD */
	const char *old_preload;   /* LD_PRELOAD as it is, or NULL */
	const char *pipe_dir;      /* CUDA_MPS_PIPE_DIRECTORY; NULL: no MPS (/dev/null) */
	int channels;              /* CUDA_DEVICE_MAX_CONNECTIONS: a count, NVT_CHANNELS_CUDA
				    * (left as it is) or 0 (the default); never over a
				    * value set already */
	int sm_limit_percent;      /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; 0: not set */
	const char *sm_count;      /* NVT_ENV_SM_COUNT (--sm-count's word); NULL: not set */
	const char *visible;       /* CUDA_VISIBLE_DEVICES; NULL: not set */
	const char *rundir;        /* NVT_ENV_RUNDIR; NULL: not set (the default) */
};

/* The variables to set, in order; values point into the buffers below. */
struct nvt_task_env {
	int n;
	struct nvt_task_env_var {
		const char *name;
		const char *value; /* NULL: unset it */
		int overwrite; /* 0: a value set already is kept */
	} vars[NVT_TASK_ENV_MAX];
	char partition[NVT_PARTENV_TEXT_MAX];
	char preload[NVT_TASK_ENV_PRELOAD_MAX];
	char channels[16], sm_limit[16], mem[NVT_MEM_ENV_TEXT_MAX];
	char owner[NVT_PROC_ID_TEXT_MAX], priority[NVT_PRIO_ENV_TEXT_MAX];
	char cdi[NVT_CDI_DEVICE_TEXT_MAX]; /* NVT_ENV_CDI (nvt_task_cdi_device_env) */
	int named; /* nvt_task_env_self: the process is named (NVT_ENV_PARTITION_FOR set) */
};

/*
 * Fills out with the variables a task needs: its partition (NVT_ENV_PARTITION),
 * its GPU memory limit (NVT_ENV_MEM: the parts' limit where each has the same
 * one, else unset), the shim in LD_PRELOAD (appended, once), MPS's settings and
 * the others of in. Pure. Returns 0, or -1 if a value does not fit (why says which).
 */
int nvt_task_env_build(const struct nvt_task_env_in *in, struct nvt_task_env *out, char *why,
		       size_t len);

/*
 * What only the process about to exec the program can set (nvtaskset's
 * start, the Slurm plugin's task), into out: NVT_ENV_PARTITION_FOR names
 * this process (an exec keeps its PID and start time), so that the
 * program's shim takes NVT_ENV_PARTITION rather than a partitioned
 * ancestor's; it is unset where the process cannot be named (never an outer
 * nvtaskset's; out->named 0). NVT_ENV_PRIORITY is prio (unset when prio is
 * NULL or NVT_PRIO_NONE), and MPS's client priority is below normal for a
 * lower task that yields with NVT_YIELD_CLIENT, unless set already. Reads
 * /proc/self. Returns 0, or -1 if the priority cannot be written (why says).
 */
int nvt_task_env_self(const struct nvt_slot_prio *prio, struct nvt_task_env *out, char *why,
		      size_t len);

#endif /* NVT_TASK_H */
