/*
 * gpus.h - the machine's GPUs as nvtaskset numbers them, and each one's
 * calibrated topology (from the cache, or measured and cached).
 * Side effects: /proc, the CUDA driver (in child processes), cache files.
 * Returns codes and error texts; never prints except progress to the FILE
 * given.
 *
 * GPU numbers are nvidia-smi's indices: PCI bus order, as the kernel module
 * lists its GPUs in /proc/driver/nvidia/gpus. Where that cannot be read,
 * they are CUDA's device ordinals in this environment.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_GPUS_H
#define NVT_GPUS_H

#include <stdio.h>
#include "gpu.h"
#include "core/gpusel.h"
#include "core/topo.h"
#include "core/membw.h"
#include "bwprobe.h"
#include "topocache.h"

/* How long the driver may take to answer (listing the GPUs, asking one GPU,
 * calibrating) when NVTASKSET_DRIVER_TIMEOUT does not say: seconds. The one
 * default: the command and the exporter (nvt_gpus_timeout_ms), and the Slurm
 * plugin, which reads no such variable and always waits this long. */
#define NVT_DRIVER_TIMEOUT_S 60
/* NVTASKSET_DRIVER_TIMEOUT's value (text; NULL or empty: NVT_DRIVER_TIMEOUT_S): 1-3600 seconds,
 * a '+' before them taken as strtoul takes it, in milliseconds; -1 if it is no such value. */
int nvt_gpus_timeout_ms(const char *text);

struct nvt_gpus {
	int n;
	int from_proc; /* numbered from /proc/driver/nvidia (else by CUDA) */
	char nvrm[32]; /* kernel module version, "-" if unknown */
	struct nvt_gpu_id id[NVT_MACHINE_GPUS];
};

/*
 * Lists the machine's GPUs: from /proc/driver/nvidia without the CUDA
 * driver when it can be read, else by asking CUDA (waiting at most
 * timeout_ms). Returns 0, or -1 with the reason in why.
 */
int nvt_gpus_list(int timeout_ms, struct nvt_gpus *out, char *why, size_t len);

/* nvtaskset's number of the GPU with this UUID among gpus (NULL: none), or -1. */
int nvt_gpus_find(const struct nvt_gpus *gpus, const uint8_t uuid[16]);

/*
 * The GPUs a CUDA program started now would see (CUDA_VISIBLE_DEVICES,
 * CUDA_DEVICE_ORDER): fills idx (NVT_MACHINE_GPUS entries) with their numbers
 * and returns how many. Where that cannot be told, every GPU.
 */
int nvt_gpus_visible(const struct nvt_gpus *gpus, int *idx);

struct nvt_gpu_topology {
	int index; /* nvtaskset's number of the GPU */
	struct nvt_gpu_info info; /* name and SM count always; the rest when the driver was asked */
	struct nvt_cache_key key;
	struct nvt_topology topo;
	char cache_path[600]; /* where it was read or saved; "" if not saved */
	int from_cache;       /* 1: read from the cache, 0: calibrated now */
	double seconds;       /* calibration time, when calibrated now */
	char note[512];       /* a warning worth showing (cache not saved, ...) */
	/* The GPU's memory halves from its cache record (UUID.mem beside
	 * UUID.topo), when the bandwidth probe has run: halves_measured. Read
	 * only by nvt_gpu_read_halves (a start without --memory-half needs none). */
	struct nvt_membw halves;
	int halves_measured;
};

/*
 * Returns GPU index's topology: from the cache when a trusted record for
 * this GPU exists (and force is 0) - measured under the same kernel module,
 * which needs no CUDA at all, or under the same driver and SM count - else
 * by calibrating it outside MPS and saving the record. Waits at most
 * timeout_ms for each driver step. Returns enum nvt_gpu_topology_rc (err
 * describes a failure).
 */
enum nvt_gpu_topology_rc {
	NVT_GPU_OK = 0,
	NVT_GPU_ERROR = -1,  /* the reason in why */
	NVT_GPU_HIDDEN = -2, /* CUDA here does not see the GPU */
};
int nvt_gpu_topology(const struct nvt_gpus *gpus, int index, int force, int timeout_ms,
		     FILE *progress, struct nvt_gpu_topology *out, char *why, size_t len);

/* Reads gt's memory halves from the cache directories (halves_measured 0 when
 * there is no trusted record for this GPU and topology). */
void nvt_gpu_read_halves(struct nvt_gpu_topology *gt);

/*
 * Runs the bandwidth probe (bwprobe.h) on the GPU of gt (loaded by
 * nvt_gpu_topology), saves its halves beside the topology's record and sets
 * gt->halves. Returns 0 (res filled; the halves may all be unknown, with
 * res->why), or -1 with the reason in why.
 */
int nvt_gpu_probe_halves(struct nvt_gpu_topology *gt, int timeout_ms, struct nvt_bwprobe_result *res,
			 char *why, size_t len);

#endif /* NVT_GPUS_H */
