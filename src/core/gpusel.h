/*
 * gpusel.h - naming GPUs: UUIDs, the GPU numbers users give, the GPUs a task
 * sees through CUDA_VISIBLE_DEVICES, and the per-GPU partition record a task
 * starts with (NVT_ENV_PARTITION). Pure code: no I/O, no allocation.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_GPUSEL_H
#define NVT_GPUSEL_H

#include <stddef.h>
#include <stdint.h>
#include "nvtaskset.h"
#include "segment.h"

#define NVT_UUID_TEXT_MAX 41 /* "GPU-" + 36 + NUL */

/* Formats a UUID as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (buf >= 41 bytes). */
void nvt_uuid_format(const uint8_t uuid[16], char *buf);
/* Parses that form (case-insensitive). Returns 0, or -1 if malformed. */
int nvt_uuid_parse(const char *text, uint8_t uuid[16]);
/* Returns 1 if uuid is all zero (a free slot), else 0. */
int nvt_uuid_is_zero(const uint8_t uuid[16]);

/* A GPU of the machine, as nvtaskset numbers them (see nvt_gpusel_resolve). */
struct nvt_gpu_id {
	char uuid[48];  /* "GPU-..." */
	char model[96]; /* "NVIDIA H100 80GB HBM3" */
	uint8_t uuid_bytes[16]; /* uuid, parsed once where the GPUs are listed; zero if malformed */
};

enum { NVT_GPU_NONE = -1, NVT_GPU_AMBIGUOUS = -2 };

/*
 * Resolves a GPU argument against the n GPUs: a decimal index below n, or a
 * UUID or unique UUID prefix of at least "GPU-" and one character more (case
 * does not matter). Returns the index, NVT_GPU_NONE or NVT_GPU_AMBIGUOUS.
 */
int nvt_gpusel_resolve(const char *arg, const struct nvt_gpu_id *gpus, int n);

/*
 * Which of the machine's n GPUs (in nvtaskset's order, which is PCI bus
 * order) a CUDA program with CUDA_VISIBLE_DEVICES=text sees, following
 * CUDA's rules: entries are indices or UUIDs (or unique UUID prefixes), and
 * the list ends at the first entry that is invalid or repeats a GPU.
 * Indices count in PCI bus order only when CUDA_DEVICE_ORDER=PCI_BUS_ID or
 * every GPU is of one model (CUDA's default order puts the fastest first and
 * keeps bus order among equals): pci_order says which. Fills out (at least
 * n entries) with indices and returns how many, or -1 when this cannot be
 * told (MIG instances, or indices while pci_order is 0 and models differ):
 * the caller must then assume every GPU.
 */
int nvt_visible_gpus(const char *text, const struct nvt_gpu_id *gpus, int n, int pci_order,
		     int *out);

/* ---- The per-GPU partition record (NVT_ENV_PARTITION) ------------------- */

/*
 * Formats n partitions (uuid, state, tpcs and topo of each view; seq is not
 * used) as the record. Returns its length, or -1 if it does not fit.
 */
int nvt_gpusel_env_format(const struct nvt_slot_view *parts, int n, char *buf, size_t len);
#define NVT_PARTENV_TEXT_MAX (NVT_MAX_GPUS * (NVT_UUID_TEXT_MAX + NVT_LIST_MAX_CHARS + 2 + \
					    64 + 8 * NVT_MAX_TPCS))
#define NVT_LIST_MAX_CHARS (NVT_MAX_TPCS * 4)

/*
 * Parses the record into at most max views (seq 0). Every GPU is named once,
 * its topology valid, and a list selects at least one of its TPCs. Returns
 * the number of GPUs, or -1 if the text is malformed.
 */
int nvt_gpusel_env_parse(const char *text, struct nvt_slot_view *out, int max);

#endif /* NVT_GPUSEL_H */
