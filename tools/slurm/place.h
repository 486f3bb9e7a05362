/*
 * place.h - where a Slurm job step runs on its node: TPCs of one GPU, taken
 * with nvtaskset's race-free allocator (src/alloc/reserve.h) and held in the
 * calling process's control segment - slurmstepd's, so that they are held
 * exactly as long as the step's slurmstepd lives, however the step ends.
 *
 * A job holds one partition per node: a step of a job whose earlier step
 * (the batch script's, say) still holds one runs inside it. No Slurm
 * headers: the SPANK glue (spank_nvtaskset.c) passes what Slurm said.
 * Side effects: /proc, control segments, the GPU topology cache (or a
 * calibration). Returns codes and fills a reason; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SLURM_PLACE_H
#define NVT_SLURM_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/gpus.h"
#include "seg/segfile.h"
#include "core/segment.h"
#include "os/slurmproc.h"

struct nvt_place_req {
	uint32_t job;
	unsigned tpcs;       /* --gpu-tpcs, or 0 */
	unsigned gpcs;       /* --gpu-gpcs, or 0 */
	long granted;        /* TPCs of the tpc GRES the job holds on this node; -1: none */
	uint64_t gpus;       /* the GPUs Slurm lets the step use (bit i: nvtaskset's GPU i,
			      * in PCI bus order); 0: every GPU of the node */
	const char *visible; /* CUDA_VISIBLE_DEVICES, which may only narrow gpus (NULL: none) */
	int pci_order;       /* its indices count in PCI bus order (CUDA_DEVICE_ORDER) */
	const char *base;    /* where run directories are (nvt_rundir()) */
	int wait_ms;         /* how long TPCs that Slurm counts free may stay held (an ending step) */
};

struct nvt_place {
	struct nvt_seg_own own;      /* this process's segment, when holding */
	int holding;                 /* own holds part */
	int shared;                  /* part is the job's, taken by step `from` */
	struct nvt_slurm_step from;
	int gpu;                     /* nvtaskset's number of the GPU */
	int n_gpus;                  /* GPUs on the node */
	char uuid[48];
	struct nvt_slot_view part;
	double seconds;              /* how long placing took */
};

enum nvt_place_rc {
	NVT_PLACE_OK = 0,
	NVT_PLACE_NONE = 1,    /* the job asks for no TPCs: nothing to do */
	NVT_PLACE_ERROR = -1,  /* why says why */
};

/* Places the step. Returns enum nvt_place_rc. */
int nvt_place_step(const struct nvt_place_req *req, struct nvt_place *out, char *why, size_t len);

/*
 * Gives the step's tasks a GPU memory limit of limit bytes (0: none) on the
 * placed GPU: out->part's, and the slot of this process's segment that the
 * tasks start from. Returns 0, or -1 with the reason in why.
 */
int nvt_place_limit_memory(struct nvt_place *p, uint64_t limit, char *why, size_t len);

/* Gives the partition back (removes the segment); safe to call twice. */
void nvt_place_release(struct nvt_place *p);

#endif /* NVT_SLURM_PLACE_H */
