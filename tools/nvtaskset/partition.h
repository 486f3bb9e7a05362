/*
 * partition.h - partitions from the command line: MASK (hexadecimal, a -c
 * TPC list or a -g GPC list) or -n's pick, for each GPU of a task, with a
 * message that says what is wrong and how to write it. Above machine.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CLI_PARTITION_H
#define NVT_CLI_PARTITION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvtaskset.h"
#include "core/segment.h"
#include "core/topo.h"
#include "core/claim.h"

/* What the command line says of partitions. */
struct part_args {
	int tpc_list; /* -c: MASK is a TPC list */
	int gpc_list; /* -g: MASK is a GPC list */
	/* --gpu GPU or --gpu GPU=MASK, in order given */
	int n_gpus;
	struct gpu_arg {
		const char *gpu;  /* index or UUID as the user wrote it */
		const char *mask; /* the GPU's own MASK, or NULL */
	} gpus[NVT_MAX_GPUS];
	int gpu_masks; /* the --gpu options carry masks (GPU=MASK) */
	unsigned count; /* -n: pick this many TPCs (0: not given) */
	enum nvt_strategy strategy;
	int exclude_running;
	int memory_half_given; /* --memory-half */
	int memory_half;       /* 0, 1, or NVT_HALF_UNKNOWN: auto */
};

/*
 * Turns MASK (hex, -c list, -g list or -n) into the TPC set *set for the GPU
 * with topology topo and uuid (called gpu_name in messages); -n places it
 * (alloc/placement.h) clear of what the tasks but me (NULL: none) hold with
 * --exclude-running, in the memory half asked for. Returns 0, or -1 with a
 * one-line reason in why.
 */
int parse_partition(const struct part_args *o, const char *text, const struct nvt_topology *topo,
		    const uint8_t uuid[16], const char *gpu_name, const struct nvt_claimer *me,
		    struct nvt_tpcset *set, char *why, size_t len);
/* A start's MASK text, before COMMAND is looked for: 0 if its syntax is what the options say
 * (a hexadecimal mask, or a -c or -g list; the GPU's TPCs are checked in parse_partition),
 * else -1 with a one-line reason in why that says what to give. */
int start_mask_syntax(const struct part_args *o, const char *text, char *why, size_t len);
/* Where -n --exclude-running's claim on part's GPU picks (nvt_claim_gpu.near):
 * the memory half asked for (nvt_placement_near_for_claim; the tasks but me count).
 * Returns 0, or -1 with why. */
int near_of(const struct part_args *o, const struct nvt_slot_view *part,
	    const struct nvt_claimer *me, struct nvt_near *near, char *why, size_t len);
/*
 * The partitions a task gets (run) or is given (-p): for each GPU of the
 * task, its UUID, topology and, for the GPUs MASK or --gpu names, the TPC
 * set. task_gpus lists the task's GPUs (n_task, nvtaskset's numbers);
 * topos, where not NULL, gives topologies already known (n_task entries,
 * n_tpcs 0 where unknown). Returns how many entries out holds, or -1 with
 * the reason in why (bad input for this task's GPUs); exits only if the
 * machine's GPUs cannot be listed or a --gpu names none of them.
 */
int build_partitions(const struct part_args *o, const char *mask, const int *task_gpus, int n_task,
		     const struct nvt_topology *topos, const struct nvt_claimer *me,
		     struct nvt_slot_view *out,
		     char *why, size_t len);
/*
 * Warns, a line each on standard error, of the live tasks whose partitions share TPCs with
 * parts (n; what a start or -p gives) against the design (nvt_placement_clashes: not tasks of
 * other priority levels, two time-sliced ones, nor tasks of tree's own tree). who: "" for a
 * start, else the task's words ("pid 42's "). A scan that fails says nothing.
 */
void warn_shared_tpcs(pid_t tree, const struct nvt_slot_view *parts, int n, const char *who);

/* The memory of GPU uuid in bytes, asked of the driver once per GPU; 0 where it cannot
 * say (why says why). */
uint64_t gpu_memory(const uint8_t uuid[16], char *why, size_t len);

/* --mem SIZE (each GPU of the task) and --mem GPU=SIZE (that GPU), in the order given. */
struct mem_args {
	int n;
	int exclusive; /* --mem-exclusive: a claim's limit must fit beside the others' */
	struct mem_arg {
		const char *gpu;  /* index or UUID as the user wrote it; NULL: every GPU */
		const char *size; /* SIZE (core/memlimit.h) */
	} arg[NVT_MAX_GPUS];
};

/* Whether arg names the GPU uuid (an arg without GPU names every GPU). */
int mem_names_gpu(const struct mem_arg *arg, const uint8_t uuid[16]);

/*
 * Sets the GPU memory limit (mem_limit) of each of parts (n GPUs of a task)
 * that --mem names, SIZE read against the GPU's memory (asked of the driver,
 * once per GPU; "none": no limit); a later --mem of the same GPU wins. Returns 0, or -1 with the
 * reason in why (bad SIZE, naming the GPU and its memory; a --mem GPU that is
 * none of the task's).
 */
int mem_limits(const struct mem_args *m, struct nvt_slot_view *parts, int n, char *why, size_t len);
#endif /* NVT_CLI_PARTITION_H */
