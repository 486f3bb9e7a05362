/*
 * nvtaskset.h - the contract between the nvtaskset shim and the nvtaskset CLI.
 *
 * Everything that both sides must agree on lives here and only here:
 * environment variable names, the control segment's layout and version,
 * the topology record, and the text formats of masks and lists. Over 500
 * lines on purpose: one contract, read by both sides whole.
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

/*
 * Initial partition of a task on each GPU it may use, set by the CLI: one
 * record per GPU, separated by ';', each "UUID LIST TOPOLOGY" where UUID is
 * the GPU's ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"), LIST its TPC list or
 * "all" (not partitioned), TOPOLOGY its topology record (see below). See
 * nvt_gpusel_env_format().
 */
#define NVT_ENV_PARTITION "NVTASKSET_PARTITION"
/*
 * The process NVT_ENV_PARTITION was given to, as "PIDNS.PID.START" (its PID
 * namespace's inode, its PID there, field 22 of its /proc/PID/stat): set by
 * the CLI for the COMMAND it execs. See "Control segment" below.
 */
#define NVT_ENV_PARTITION_FOR "NVTASKSET_PARTITION_FOR"
/*
 * A new task's priority (docs/priorities.md),
 * "LEVEL[,guard=N][,no-lend][,yield=WORD+WORD...][,bound=US][,ahead=US][,duty=PCT]",
 * LEVEL high, normal or low, WORDs those of --yield (src/core/yield.h), or yield=auto alone
 * (a CDI priority device's: the default by partition, nvt_prio_resolve): set
 * by the CLI and the Slurm plugin beside NVT_ENV_PARTITION, and taken with it
 * (see "Where a new task's partitions come from": only where the partitions
 * come from the environment).
 */
#define NVT_ENV_PRIORITY "NVTASKSET_PRIORITY"
/*
 * A new task's GPU memory limit on each GPU of NVT_ENV_PARTITION, in bytes
 * (decimal digits; docs/usage.md "GPU memory"), or GPU-UUID=BYTES on that GPU
 * alone (a CDI device mem=GPU:SIZE; src/core/memlimit.h): set by the CLI (--mem), the
 * Slurm plugin (--gpu-mem) and CDI memory devices beside NVT_ENV_PARTITION,
 * and taken with it (only where the partitions come from the environment).
 */
#define NVT_ENV_MEM "NVTASKSET_MEM"
/* MPS's client priority (driver 580: 0 normal, 1 below normal), read by the
 * MPS client at its start: set to 1 for a task that yields with
 * NVT_YIELD_CLIENT, unless already set (docs/priorities.md). */
#define NVT_ENV_MPS_CLIENT_PRIORITY "CUDA_MPS_CLIENT_PRIORITY"
/* A high time-sliced task's steps are bridged (docs/priorities.md, "Preemption"): 0 turns it
 * off; the bridge needs the process's streams on one hardware queue
 * (NVT_ENV_CUDA_CONNECTIONS 1), which nvtaskset sets unless told otherwise. */
#define NVT_ENV_BRIDGE "NVTASKSET_BRIDGE"
#define NVT_ENV_BRIDGE_HOLD "NVTASKSET_BRIDGE_HOLD" /* "0"/"1": never/always held (core/yield.h) */
#define NVT_ENV_BRIDGE_REARM "NVTASKSET_BRIDGE_REARM" /* "1": held steps chained (core/yield.h) */
/* Any non-empty value other than "0" silences the shim's warnings. */
/*
 * Set by nvtaskset in the environment of an MPS control daemon it starts for
 * a priority level (the level's text, as NVT_ENV_PRIORITY's): the shim in the
 * daemon's server gives the server's channel groups, which run its clients'
 * work, the level's timeslice and holds (docs/priorities.md, "Preemption").
 */
#define NVT_ENV_MPS_SERVER "NVTASKSET_MPS_SERVER"
#define NVT_ENV_QUIET "NVTASKSET_QUIET"
/* "0": CUDA graphs do not follow partition changes (they keep the TPCs they
 * were uploaded with), and graph launches cost nothing extra. */
#define NVT_ENV_GRAPHS "NVTASKSET_GRAPHS"
/* Any non-empty value other than "0": the shim says on stderr what it does
 * with each CUDA graph (for bug reports). */
#define NVT_ENV_GRAPH_DEBUG "NVTASKSET_GRAPH_DEBUG"
/* Any non-empty value other than "0": at exit, the shim says how many launches
 * it saw while libsmctrl masks were in use and for how many it knew the
 * stream (include/libsmctrl.h; for bug reports and the GPU tests). */
#define NVT_ENV_SMCTRL_DEBUG "NVTASKSET_SMCTRL_DEBUG"
/* Any non-empty value other than "0": at exit, the shim says how many of its
 * waits it bridged, how many its learning left unbridged (by the task's share
 * of waits followed soon), how many copies to the host its kernel did and graph
 * replays it saw, how long the host took from a wait's return to the next
 * launch, and how many it held (docs/priorities.md, "Preemption"; for bugs). */
#define NVT_ENV_BRIDGE_DEBUG "NVTASKSET_BRIDGE_DEBUG"
/* A path: at exit, a high time-sliced task's shim writes its bridges' and copies'
 * times to PATH.PID, a new file (docs/environment.md; for bug reports). */
#define NVT_ENV_BRIDGE_TRACE "NVTASKSET_BRIDGE_TRACE"
/* What a program that asks for its GPU's SM count is told (src/core/smcount.h):
 * "partition" (the default: its partition's count at its first query of that
 * GPU, kept after), "follow" (the partition's count at each query) or "gpu"
 * (the driver's count, as without nvtaskset). */
#define NVT_ENV_SM_COUNT "NVTASKSET_SM_COUNT"
/* Any non-empty value other than "0": at the end of its set-up the shim says
 * on stderr what its parts took (for the start-up benchmark and bug reports). */
#define NVT_ENV_START_DEBUG "NVTASKSET_START_DEBUG"
/* Directory that holds every user's run directory (default NVT_SHARED_RUNDIR where
 * it exists, else NVT_DEFAULT_RUNDIR): an absolute path shorter than NVT_RUNDIR_MAX
 * bytes (a longer one is not used). */
#define NVT_ENV_RUNDIR "NVTASKSET_RUNDIR"
#define NVT_RUNDIR_MAX 200
/* Path of the preload shim, overriding the CLI's search (tests, packagers). */
#define NVT_ENV_SHIM "NVTASKSET_SHIM"
/* Where calibration records are cached (docs/calibration.md), before
 * $XDG_CACHE_HOME/nvtaskset and ~/.cache/nvtaskset. */
#define NVT_ENV_CACHE_DIR "NVTASKSET_CACHE_DIR"
/* Where the kernel module describes its GPUs, instead of /proc/driver/nvidia (tests). */
#define NVT_ENV_PROC_NVIDIA "NVTASKSET_PROC_NVIDIA"
/* Seconds the command waits for the driver (1-3600; default 60). */
#define NVT_ENV_DRIVER_TIMEOUT "NVTASKSET_DRIVER_TIMEOUT"
/* Seconds -n --exclude-running waits for other claimers' overlapping claims (1-3600; default 10). */
#define NVT_ENV_CLAIM_TIMEOUT "NVTASKSET_CLAIM_TIMEOUT"
/*
 * The partition device of nvtaskset's CDI spec a container was started with,
 * "CLASS=NAME" ("gpc=0-3", "tpcs=16": src/core/cdi.h), set in the container by
 * the device. The device's hook checks that no other partition device replaced
 * it; a shim that gets no partition in a container started with a tpcs device
 * (a process that `podman exec` started) says so.
 */
#define NVT_ENV_CDI "NVTASKSET_CDI"
/* The priority agent's options when not given (nvtaskset(1)): --poll, --hold, --guard. */
#define NVT_ENV_AGENT_POLL_US "NVTASKSET_POLL_US"
#define NVT_ENV_AGENT_HOLD_MS "NVTASKSET_HOLD_MS"
#define NVT_ENV_AGENT_GUARD "NVTASKSET_GUARD"

/* Other programs' variables that nvtaskset reads or sets for a task. */
#define NVT_ENV_LD_PRELOAD "LD_PRELOAD"
#define NVT_ENV_CUDA_VISIBLE "CUDA_VISIBLE_DEVICES"
#define NVT_ENV_CUDA_ORDER "CUDA_DEVICE_ORDER"
#define NVT_ENV_CUDA_CONNECTIONS "CUDA_DEVICE_MAX_CONNECTIONS"
#define NVT_ENV_MPS_PIPE_DIR "CUDA_MPS_PIPE_DIRECTORY"
#define NVT_ENV_MPS_LOG_DIR "CUDA_MPS_LOG_DIRECTORY"
#define NVT_ENV_MPS_THREAD_PERCENTAGE "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
#define NVT_ENV_XDG_CACHE_HOME "XDG_CACHE_HOME"
#define NVT_ENV_XDG_RUNTIME_DIR "XDG_RUNTIME_DIR"
#define NVT_ENV_HOME "HOME"
#define NVT_ENV_SLURM_JOB_ID "SLURM_JOB_ID"
#define NVT_ENV_SLURM_STEP_ID "SLURM_STEP_ID"
#define NVT_ENV_SLURM_JOB_GPUS "SLURM_JOB_GPUS"
#define NVT_ENV_SLURM_STEP_GPUS "SLURM_STEP_GPUS"

/*
 * The nvtaskset command exports a symbol of this name (the linker's
 * --export-dynamic-symbol). A shim that finds it in its process stays
 * passive: the CLI, inheriting a partitioned shell's LD_PRELOAD, gets no
 * segment from the shim and no launch callback, so that a nested nvtaskset's
 * partition is the one its COMMAND gets (the CLI makes the segment that
 * COMMAND adopts, src/alloc/reserve.h) and --calibrate's probes reach every SM.
 */
#define NVT_CLI_MARKER "nvtaskset_cli"

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
/*
 * The directory of run directories where one exists as root made it, mode
 * NVT_SHARED_RUNDIR_MODE (a directory, not a link): the default before
 * NVT_DEFAULT_RUNDIR. nvtaskset --cdi makes it; CDI devices mount it into
 * containers (at NVT_CONTAINER_RUNDIR), which /dev/shm, holding every
 * program's shared memory, should not be.
 */
#define NVT_SHARED_RUNDIR "/run/nvtaskset"
#define NVT_SHARED_RUNDIR_MODE 01777
#define NVT_CONTAINER_RUNDIR "/run/nvtaskset"
#define NVT_USERDIR_PREFIX "nvtaskset-"
#define NVT_SEG_PREFIX "nvtaskset."
#define NVT_USERDIR_MODE 0755
#define NVT_SEG_MODE 0644
/* A segment's mode while its maker fills it: see "Control segment" below. */
#define NVT_SEG_NEW_MODE 0600
/*
 * The writers' lock file of a run directory (one per directory, never
 * removed), mode NVT_LOCK_MODE: only the directory's user and root can open
 * it, so nobody else can hold a writer's lock. See "Control segment".
 */
#define NVT_LOCK_NAME "writers.lock"
#define NVT_LOCK_MODE 0600

/*
 * A start queued with --wait (nvtaskset -n COUNT --exclude-running --wait) holds no segment
 * while it waits for free TPCs: it says that it waits in a record of its user's run directory,
 * NVT_QUEUED_PREFIX<PIDNS>.<PID> (as a segment's name), mode NVT_QUEUED_MODE, made whole under
 * that name and NVT_QUEUED_NEW, then renamed into place, and removed when the wait ends (the
 * TPCs claimed, --wait's TIMEOUT past, SIGINT, SIGTERM or SIGHUP). Its text, at most NVT_QUEUED_MAX
 * bytes, is these lines in this order (src/core/queuerec.c writes and reads it):
 *
 *   NVT_QUEUED_MAGIC
 *   pid PID              the waiting process, as its PID namespace numbers it
 *   start START          field 22 of /proc/PID/stat: tells a reused PID
 *   pidns INODE          its PID namespace's inode
 *   since MS             CLOCK_MONOTONIC's milliseconds when it began to wait
 *   timeout SECONDS      --wait=SECONDS; 0: no end
 *   gpu GPU-UUID COUNT   each GPU it claims COUNT TPCs on (1 to NVT_MAX_GPUS lines)
 *   command WORDS        its COMMAND's words joined by spaces (raw bytes, no NUL, cut to
 *                        NVT_QUEUED_COMMAND_MAX - 1), then a newline, to the file's end
 *
 * Readers (nvtaskset -l, -p) read other users' run directories too, so a record counts only
 * as a regular file of its run directory's user of one link and at most NVT_QUEUED_MAX bytes
 * (opened without following a link or waiting on a FIFO), whose text parses whole and names
 * its file's PID namespace and PID, a live process of that start time that runs as that user.
 * A record that a killed start left fails that check, and its user's next queued start
 * removes it.
 */
#define NVT_QUEUED_PREFIX "queued."
#define NVT_QUEUED_NEW ".new"
#define NVT_QUEUED_MODE 0644
#define NVT_QUEUED_MAGIC "nvtaskset-queued 1"
#define NVT_QUEUED_MAX 4096
#define NVT_QUEUED_COMMAND_MAX 512

/* ---- Sizes ------------------------------------------------------------ */

/* Largest logical TPC count a set can describe (an H100 has 66). */
#define NVT_MAX_TPCS 256
/* Mask bits a topology may name: V04_00's 128. Wider layouts (V04_01, V05_00)
 * have 256; their bits from 128 up are written 0 and calibration checks that
 * no working TPC needs them. */
#define NVT_HW_BITS 128
/* GPUs a control segment has room for: the most GPUs a task has partitions
 * on. Not NVT_MACHINE_GPUS (src/gpu/cuda_driver.h), the most GPUs of a
 * machine nvtaskset lists: the segment's size is part of its layout, so this
 * one stays small. */
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
 * TMD (QMD) mask layouts. A layout is written on a GPU only when calibration
 * verified it there: its probe disabled one mask bit at a time through this
 * very layout and saw each bit remove exactly one TPC or nothing.
 */
enum nvt_tmd_layout {
	NVT_TMD_NONE = 0,   /* none verified: launches are never rewritten */
	NVT_TMD_V01 = 1,    /* V01_06 .. V03_00 (Volta .. Ada): 64-bit mask */
	NVT_TMD_V04_00 = 2, /* Hopper: 128-bit mask, version byte 72 */
	NVT_TMD_V04_01 = 3, /* Blackwell compute classes, 128+128-bit mask, byte 72 */
	NVT_TMD_V05_00 = 4, /* Blackwell: 256-bit mask, version byte 58 */
};
#define NVT_TMD_LAYOUTS 5

/*
 * What the shim knows about one GPU. Logical TPC t holds SMs 2t and 2t+1.
 * hw_bit[t] is the bit of the TMD mask that names logical TPC t, as
 * calibration measured it (on Hopper a physical TPC slot; before Hopper bit
 * t, libsmctrl paper; docs/hardware-facts.md, sections 2-3). gpc[t] is the GPC of TPC t, or NVT_NONE when unknown.
 * tmd_layout is the layout calibration verified on this GPU; it took the
 * place of a reserved word that every writer zeroed, so a topology from an
 * older writer reads as NVT_TMD_NONE.
 */
struct nvt_topology {
	uint32_t n_tpcs; /* logical TPCs 0 .. n_tpcs-1 work; 0 = unknown GPU */
	uint32_t n_gpcs; /* 0 = GPCs unknown */
	uint32_t flags;  /* NVT_TOPO_* */
	uint8_t tmd_layout; /* enum nvt_tmd_layout */
	uint8_t cc_major;   /* compute capability it was verified on; 0.0 = not recorded */
	uint8_t cc_minor;
	uint8_t reserved;
	uint8_t hw_bit[NVT_MAX_TPCS];
	uint8_t gpc[NVT_MAX_TPCS];
};

/* The map was measured (calibrated), not assumed to be bit t = TPC t. */
#define NVT_TOPO_CALIBRATED 0x1u

/* ---- Control segment ---------------------------------------------------
 *
 * One file per process, mode NVT_SEG_MODE once made (public to read, as CPU
 * affinity is; only the task's user and root may write it). The rules below
 * are the contract; docs/design.md ("The control segment's life") explains
 * them: how a segment is made, published, changed, superseded and left over.
 *
 * - Each GPU slot is a sequence lock: a writer makes seq odd, writes, makes
 *   it even; a reader keeps its copy only if seq was even and unchanged.
 *   Readers take no lock. The shim never waits: while seq is odd, launches
 *   keep the last partition it accepted.
 * - Writers lock byte nvt_seg_lock_byte(PIDNS, PID) of their run directory's
 *   NVT_LOCK_NAME (F_OFD_SETLK, dropped when the holder dies). The CLI reads
 *   other processes' segments by pread, never by mapping them.
 * - Making: take the lock, create with NVT_SEG_NEW_MODE, size, header,
 *   slots, then NVT_SEG_MODE, then unlock. A file others may not read yet
 *   is one still being made.
 * - A slot belongs to the GPU whose UUID it holds (all zero: free). A writer
 *   that gives a free slot to a GPU increments slots_gen afterwards.
 * - A new process's partitions: an exec'd program adopts its PID's segment;
 *   a forked child copies its parent's; any other new process takes (1) its
 *   own from before an exec that changed its user (root's run directory),
 *   else (2) those of its nearest ancestor with a trusted, whole segment of
 *   its effective user's or root's (at most 32 parents, within its PID
 *   namespace; a process whose parent is outside it looks at its PID 1),
 *   else (3) NVT_ENV_PARTITION (secure_getenv). Step 2 is skipped
 *   in, and stops at, the process NVT_ENV_PARTITION_FOR names.
 */
/* The byte of NVT_LOCK_NAME that guards segment PIDNS.PID (below 2^31, for any off_t). */
#define nvt_seg_lock_byte(pidns, pid) \
	((((uint64_t)(pidns) & 0x1ffu) << 22) | ((uint64_t)(pid) & 0x3fffffu))

#define NVT_SEG_MAGIC 0x5354564eu /* "NVTS" */
#define NVT_LAUNCH_STRIPES 8
#define NVT_SEG_VERSION 10u

enum nvt_slot_state {
	NVT_SLOT_UNSET = 0, /* no partition: launches are left untouched */
	NVT_SLOT_SET = 1,   /* launches run on .tpcs */
};

/*
 * Slot flags. NVT_SLOTF_CLAIM: the TPCs are a pick that its writer has not
 * confirmed yet (race-free allocation, see src/alloc/reserve.c); readers that
 * allocate treat them as taken. The slot's task has not started, or is being
 * moved (nvtaskset -p -n --exclude-running), and may launch on them already.
 */
#define NVT_SLOTF_CLAIM 0x1u

/*
 * Priorities (docs/priorities.md). A task with a priority (prio != NVT_PRIO_NONE)
 * on a GPU is managed there by a priority agent (nvtaskset --agent): own is the
 * partition its user gave it (-c, -g, -n, -p), tpcs what its launches use now,
 * which the agent sets from own, the priorities and the activity of the GPU's
 * managed tasks: guarded (at most guard TPCs of own, while a task of higher
 * priority launches), borrowing (own and idle higher tasks' TPCs), or own.
 * Writers of a partition (-p, a start) set own and tpcs alike; the agent
 * writes only tpcs and mode, under the writer's lock, so a task's own
 * partition is always in its segment, whatever happens to an agent. A task
 * without a priority is never changed by an agent, and guards nobody.
 */
enum nvt_prio {
	NVT_PRIO_NONE = 0, /* not managed: exactly as without priorities */
	NVT_PRIO_LOW = 1,
	NVT_PRIO_NORMAL = 2,
	NVT_PRIO_HIGH = 3,
};
#define NVT_PRIO_LEVELS 4
/* prio flags: NVT_PRIOF_NO_LEND: while idle, this task's TPCs are not lent. NVT_PRIOF_AUTO:
 * the ways of yielding are the default by partition (NVT_ENV_PRIORITY's yield=auto, a CDI
 * priority device's), not known until whether the task is partitioned is: only in what
 * nvt_prio_env_parse gives, taken away by nvt_prio_resolve before the priority is used; never
 * in a segment. */
#define NVT_PRIOF_NO_LEND 0x1u
#define NVT_PRIOF_AUTO 0x2u
/* What the agent made of tpcs (for display; the agent writes it with tpcs). */
enum nvt_prio_mode {
	NVT_MODE_OWN = 0,       /* tpcs = own */
	NVT_MODE_GUARDED = 1,   /* a higher task is active: at most guard TPCs of own */
	NVT_MODE_BORROWING = 2, /* no higher task active: own and idle higher tasks' TPCs */
	NVT_MODE_LENDING = 3,   /* own; idle, and a lower task borrows its TPCs */
	NVT_MODE_SQUEEZED = 4,  /* guarded, and higher tasks hold all of own: 1 TPC of it */
};
#define NVT_PRIO_MODES 5

/*
 * How a task yields to tasks of higher priority on its GPU (yield, a set of
 * NVT_YIELD_*). All but GUARD are its own shim's doing, from the higher
 * tasks' activity (struct nvt_slot_activity), which it reads by mapping their
 * segments read-only: those of its own user and of root only, so that no user
 * holds back another user's task unless root set it up (docs/priorities.md).
 */
#define NVT_YIELD_GATE 0x01u   /* its launches wait while a higher task is busy */
#define NVT_YIELD_BOUND 0x02u  /* at most bound_us of its work in flight beside a higher task */
#define NVT_YIELD_AHEAD 0x04u  /* its launches wait from ahead_us before a periodic higher task's
				* next request is due */
#define NVT_YIELD_CLIENT 0x08u /* MPS client priority below normal (set at its start, under MPS) */
#define NVT_YIELD_BORROW 0x10u /* while higher tasks are idle, it launches on their TPCs too */
#define NVT_YIELD_GUARD 0x20u  /* the agent narrows it to guard TPCs while a higher task launches */
#define NVT_YIELD_ANY 0x40u    /* gate, bound, ahead and borrow for higher tasks whose requests come
				* at random too (without it: periodic ones only) */
/*
 * Time-sliced (docs/priorities.md, "Preemption"): the task runs in a context
 * apart from other levels' tasks (its level's MPS server, or its own), whose
 * channel groups run at a timeslice by its level: slice_us (a task below
 * high), or 20 ms or slice_us where longer (high), so that the GPU switches
 * to a higher task's work within microseconds, inside running kernels.
 */
#define NVT_YIELD_SLICE 0x80u
#define NVT_YIELD_ALL 0xffu

struct nvt_slot_prio {
	struct nvt_tpcset own; /* the user's partition (prio set, state NVT_SLOT_SET) */
	uint8_t prio;          /* enum nvt_prio */
	uint8_t flags;         /* NVT_PRIOF_* */
	uint8_t mode;          /* enum nvt_prio_mode */
	uint8_t reserved;
	uint32_t guard;        /* TPCs while guarded; 0: the agent's default */
	uint32_t yield;        /* NVT_YIELD_* */
	uint32_t bound_us;     /* its work in flight with NVT_YIELD_BOUND; 0: the default */
	uint32_t ahead_us;     /* how long before a due request NVT_YIELD_AHEAD holds; 0: default */
	uint32_t duty_pct;     /* it holds back only for higher tasks busy at most this share
				* of the time (1-100); 0: the default */
	uint32_t slice_us;     /* its channel groups' timeslice with NVT_YIELD_SLICE (high: at
				* least 20 ms); 0: the default */
	uint32_t reserved2;
};

/*
 * A managed task's activity on one GPU, written by its own shim (relaxed
 * stores, no lock; readers take the words as estimates). A request begins
 * with a launch while the task is idle and ends with a synchronisation
 * (cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize, a synchronous
 * copy to the host, a cuStreamQuery that finds the stream done), a host function's
 * run or a cuEventQuery that finds done an event recorded after its last launch: the
 * task is busy while begins != ends. Times are CLOCK_MONOTONIC ns.
 */
#define NVT_ACT_TRACKED 0x1u /* its shim follows its synchronisations (started with a priority) */
struct nvt_slot_activity {
	uint64_t begins;    /* requests begun */
	uint64_t ends;      /* requests ended */
	uint64_t begin_ns;  /* when the last one began */
	uint64_t end_ns;    /* when the last one ended */
	uint64_t period_ns; /* mean time between two begins (moving average, weight 1/8) */
	uint64_t jitter_ns; /* mean distance of that time from period_ns */
	uint64_t busy_ns;   /* mean time from a begin to its end */
	uint32_t flags;     /* NVT_ACT_* */
	uint32_t client_prio; /* CUDA_MPS_CLIENT_PRIORITY the task started with, plus 1; 0: none */
	/* The latest gaps far from period_ns (over half of it), all on one side
	 * of it and within a quarter of each other: a new rate (a service that
	 * went from back to back to every 10 ms, say). NVT_ACT_SHIFT of them
	 * start the averages afresh at their level. */
	uint64_t shift_min_ns; /* the smallest of them */
	uint64_t shift_max_ns; /* the largest */
	uint32_t shifts;       /* how many (NVT_ACT_SHIFT_UP: above period_ns) */
	uint32_t idle_us;      /* how long it was idle before its last request began (us,
				* at most UINT32_MAX): its latest share of time busy */
};
#define NVT_ACT_SHIFT 3
#define NVT_ACT_SHIFT_UP 0x80000000u

/* What a yielding task's launches do now, written by its shim (for -l). */
enum nvt_yield_state {
	NVT_YS_NONE = 0,     /* no higher task on its GPU (or it does not yield) */
	NVT_YS_RUNNING = 1,  /* higher tasks idle: launching */
	NVT_YS_GATED = 2,    /* waiting: a higher task is busy */
	NVT_YS_AHEAD = 3,    /* waiting: a periodic higher task's request is due */
	NVT_YS_BOUND = 4,    /* waiting for its own work in flight to drain */
	NVT_YS_BORROWING = 5, /* higher tasks idle: launching on their TPCs too */
	NVT_YS_BESIDE = 6,   /* a higher task is busy more than duty_pct: launching beside it */
	NVT_YS_SLICED = 7,   /* its channel groups time-sliced below higher tasks' */
};
#define NVT_YS_STATES 8
struct nvt_slot_yield {
	uint32_t state;    /* enum nvt_yield_state */
	uint32_t watching; /* higher tasks it follows on this GPU */
	uint64_t since_ns; /* when state began (CLOCK_MONOTONIC) */
	uint64_t held_ns;  /* how long its launches waited, in all */
	uint64_t holds;    /* launches that waited */
	/* Time-slicing (NVT_YIELD_SLICE), for this GPU: the channel groups its
	 * process follows, the timeslice it gave them (us, as the driver recorded
	 * it; 0: the driver's own), and the last status the driver refused a
	 * control with (0: none). */
	uint32_t groups;
	uint32_t timeslice_us;
	uint32_t rm_status;
	uint32_t reserved;
	/* With state NVT_YS_BORROWING: the TPCs its launches run on, its own and
	 * those it borrows (written before state says so, and changed only while
	 * it does not). Claims count them as held, -l shows them: a lender that
	 * ended may leave them to nobody else while they are borrowed. */
	struct nvt_tpcset borrowed;
};

struct nvt_gpu_slot {
	uint64_t seq;          /* sequence lock, see above */
	uint32_t state;        /* enum nvt_slot_state */
	uint32_t flags;        /* NVT_SLOTF_* */
	uint8_t uuid[16];      /* the GPU this slot is for; all zero: free */
	struct nvt_tpcset tpcs; /* enabled logical TPCs (with a priority: the current ones) */
	struct nvt_topology topo;
	struct nvt_slot_prio prio; /* priority and own partition, see above */
	/* GPU memory the task may hold on this GPU, in bytes (0: no limit): its
	 * shim refuses an allocation that would take it past this with
	 * CUDA_ERROR_OUT_OF_MEMORY and tells the program this as the GPU's memory
	 * (docs/usage.md, "GPU memory"). Written with the partition, under the
	 * sequence lock; one word, so the shim reads it alone with one load. */
	uint64_t mem_limit;
	/* Written by the shim, read by the CLI (no sequence lock): */
	uint64_t applied_seq;  /* seq of the partition launches now use; 0 until a launch used one */
	uint64_t rejected_seq; /* last seq refused: it enabled no working TPC */
	/* Kernel launches on this GPU so far: the sum of the stripes. Stripes
	 * 0 to NVT_LAUNCH_STRIPES - 2 each belong to one launching thread, which
	 * adds with a plain store; later threads share the last one (atomic add).
	 * A locked add on every launch cost ~0.3 us on an H100 host (2026-11-22,
	 * docs/bench/launch-2026-11-22-cost/): the callback runs right after the
	 * driver's own stores, which a locked instruction must wait for. */
	uint64_t launches[NVT_LAUNCH_STRIPES];
	uint64_t graph_stale;  /* graph kernels that still run on an earlier partition */
	/* GPU memory the process holds on this GPU, as its shim counts it (bytes;
	 * relaxed stores on the allocation path, never the launch path), and the
	 * allocations it refused for mem_limit. */
	uint64_t mem_used;
	uint64_t mem_refused;
	struct nvt_slot_activity act; /* see above */
	struct nvt_slot_yield yield;
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
	uint64_t slots_gen; /* incremented after a free slot is given a GPU */
	struct nvt_gpu_slot gpu[NVT_MAX_GPUS];
};

/* ---- Text formats -------------------------------------------------------
 *
 * TPC mask:  hexadecimal, as taskset's CPU mask, bit t = TPC t; an optional
 *            "0x" prefix; commas between digit groups are ignored ("ff,ffffffff").
 * TPC list:  comma-separated items N, N-M or N-M:S (every S-th TPC from N to
 *            M), e.g. "0-15,32,40-47:2". GPC lists use the same syntax.
 * Topology:  "nvtaskset-topology 2 tpcs=N gpcs=G flags=F tmd=L cc=M.m
 *            map=b0,b1,... gpc=g0,g1,..." on one line, L a layout name
 *            ("V05_00", "none"), M.m the compute capability (see src/core/topo.c).
 *            Version 1 records (no tmd=, cc=) are still read.
 */

#ifdef __cplusplus
}
#endif

#endif /* NVTASKSET_H */
