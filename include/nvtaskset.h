/*
 * nvtaskset.h - the contract between the nvtaskset shim and the nvtaskset CLI.
 *
 * Everything that both sides must agree on lives here and only here:
 * environment variable names, the control segment's layout and version,
 * the topology record, and the text formats of masks and lists.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVTASKSET_H
#define NVTASKSET_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NVT_VERSION_STRING "0.1.0"

/* ---- Environment variables ------------------------------------------- */

/* Initial partition of a task, in TPC list syntax ("0-15,32"). Set by the CLI. */
#define NVT_ENV_TPCS "NVTASKSET_TPCS"
/* Topology record of the GPU (text form, see nvt_topo_format()). Set by the CLI. */
#define NVT_ENV_TOPOLOGY "NVTASKSET_TOPOLOGY"
/* Any non-empty value other than "0" silences the shim's warnings. */
#define NVT_ENV_QUIET "NVTASKSET_QUIET"
/* Directory that holds every user's run directory (default NVT_DEFAULT_RUNDIR). */
#define NVT_ENV_RUNDIR "NVTASKSET_RUNDIR"
/* Path of the preload shim, overriding the CLI's search (tests, packagers). */
#define NVT_ENV_SHIM "NVTASKSET_SHIM"

/*
 * Where control segments live. User UID's run directory is
 * <rundir>/NVT_USERDIR_PREFIX<UID>: made by the shim with mode 0755, owned by
 * UID, used only if it is a directory of UID's that nobody else may write in.
 * A segment in it is named NVT_SEG_PREFIX<PIDNS>.<PID>: PIDNS is the inode of
 * the task's PID namespace (/proc/self/ns/pid) and PID its PID there, so that
 * tasks in different containers never share a name, and UID is the task's
 * effective uid when it made the segment.
 */
#define NVT_DEFAULT_RUNDIR "/dev/shm"
#define NVT_USERDIR_PREFIX "nvtaskset-"
#define NVT_SEG_PREFIX "nvtaskset."
#define NVT_USERDIR_MODE 0755
#define NVT_SEG_MODE 0644

/* ---- Sizes ------------------------------------------------------------ */

/* Largest logical TPC count a set can describe (an H100 has 66). */
#define NVT_MAX_TPCS 256
/* Width of the widest hardware disable mask (TMD V04: 128 bits). */
#define NVT_HW_BITS 128
/* GPUs a control segment has room for. */
#define NVT_MAX_GPUS 16
/* Largest GPC count a topology may describe. */
#define NVT_MAX_GPCS 64
/* "No value" in the per-TPC byte arrays of a topology. */
#define NVT_NONE 0xff

/* A set of logical TPCs: bit t of word t/64 is TPC t. */
struct nvt_tpcset {
	uint64_t w[NVT_MAX_TPCS / 64];
};

/*
 * What the shim knows about one GPU. Logical TPC t holds SMs 2t and 2t+1.
 * hw_bit[t] is the bit of the V04 (Hopper) TMD mask that names logical TPC
 * t; on older TMDs bit t always names TPC t (libsmctrl paper). gpc[t] is the
 * GPC of TPC t, or NVT_NONE when unknown.
 */
struct nvt_topology {
	uint32_t n_tpcs; /* logical TPCs 0 .. n_tpcs-1 work; 0 = unknown GPU */
	uint32_t n_gpcs; /* 0 = GPCs unknown */
	uint32_t flags;  /* NVT_TOPO_* */
	uint32_t reserved;
	uint8_t hw_bit[NVT_MAX_TPCS];
	uint8_t gpc[NVT_MAX_TPCS];
};

/* The map was measured (calibrated), not assumed to be bit t = TPC t. */
#define NVT_TOPO_CALIBRATED 0x1u

/* ---- Control segment ---------------------------------------------------
 *
 * One file per process (see above), made by the shim with mode 0644:
 * partitions are public to read, as CPU affinity is; only the task's user and
 * root may write it. The shim maps its own segment shared.
 *
 * Each GPU slot is a sequence lock: a writer makes seq odd, writes, and makes
 * it even again; a reader copies the slot and accepts the copy only if seq was
 * even and unchanged. Writers exclude each other with an exclusive flock on
 * the file: the CLI always, the shim when it fills its own segment (at start
 * and in a forked child; never while launching). The CLI reads by copying
 * (pread), never by mapping a file another user controls. The shim never
 * waits for a writer: while seq is odd, or its copy fails, launches keep the
 * last partition the shim accepted.
 *
 * Version 2 shims apply slot 0 to every GPU of the process.
 */
#define NVT_SEG_MAGIC 0x5354564eu /* "NVTS" */
#define NVT_SEG_VERSION 2u

enum nvt_slot_state {
	NVT_SLOT_UNSET = 0, /* no partition: launches are left untouched */
	NVT_SLOT_SET = 1,   /* launches run on .tpcs */
};

struct nvt_gpu_slot {
	uint64_t seq;          /* sequence lock, see above */
	uint32_t state;        /* enum nvt_slot_state */
	uint32_t reserved;
	struct nvt_tpcset tpcs; /* enabled logical TPCs */
	struct nvt_topology topo;
	/* Written by the shim, read by the CLI: */
	uint64_t applied_seq;  /* seq of the partition launches now use; 0 until a launch used one */
	uint64_t rejected_seq; /* last seq refused: it enabled no working TPC */
};

struct nvt_segment {
	uint32_t magic;    /* NVT_SEG_MAGIC */
	uint32_t version;  /* NVT_SEG_VERSION */
	uint32_t size;     /* sizeof(struct nvt_segment) */
	uint32_t max_gpus; /* NVT_MAX_GPUS */
	int32_t pid;       /* owning process, as its PID namespace numbers it */
	uint32_t uid;      /* its effective uid when created: the run directory's user */
	uint64_t start_time; /* field 22 of /proc/<pid>/stat: tells PID reuse */
	uint64_t pidns;    /* inode of the owner's PID namespace */
	struct nvt_gpu_slot gpu[NVT_MAX_GPUS];
};

/* ---- Text formats -------------------------------------------------------
 *
 * TPC mask:  hexadecimal, as taskset's CPU mask, bit t = TPC t; an optional
 *            "0x" prefix; commas between digit groups are ignored ("ff,ffffffff").
 * TPC list:  comma-separated items N, N-M or N-M:S (every S-th TPC from N to
 *            M), e.g. "0-15,32,40-47:2". GPC lists use the same syntax.
 * Topology:  "nvtaskset-topology 1 tpcs=N gpcs=G flags=F map=b0,b1,...
 *            gpc=g0,g1,..." on one line (see src/topo.c).
 */

#ifdef __cplusplus
}
#endif

#endif /* NVTASKSET_H */
