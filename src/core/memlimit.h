/*
 * memlimit.h - a task's GPU memory limit (--mem, docs/usage.md "GPU memory"):
 * SIZE's text, the words it is shown in, and what the shim tells a program
 * that asks for its GPU's memory. Pure code: no I/O, no allocation, no globals.
 *
 * Terms: a limit is the most bytes of GPU memory a task may hold on one GPU
 * (0: none); used is what its shim counts it holding there; the GPU's
 * memory is what the driver reports for the whole GPU (cuDeviceTotalMem).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_MEMLIMIT_H
#define NVT_MEMLIMIT_H

#include <stddef.h>
#include <stdint.h>

/* The longest text nvt_memlimit_format writes, with its NUL. */
#define NVT_MEM_TEXT_MAX 24

/*
 * Parses SIZE: a number of bytes, with an optional fraction and unit K, M, G
 * or T (powers of 1024, as nvidia-smi and MPS read them; k, m, g, t, KiB,
 * KB, MiB, ... alike), or a percentage of the GPU's gpu_bytes ("50%",
 * "12.5%"). A limit is at least 1 MiB and at most the GPU's memory (where
 * gpu_bytes is 0, unknown: no upper bound, and no percentage). Returns 0 with
 * *bytes set (rounded down to a whole byte), or -1 with the reason in why
 * (naming the GPU's memory where known).
 */
int nvt_memlimit_parse(const char *text, uint64_t gpu_bytes, uint64_t *bytes, char *why,
		       size_t len);

/* bytes in the largest unit that leaves at least 1, one decimal where not
 * whole ("80G", "1.5G", "512M", "4095"); returns buf. len >= NVT_MEM_TEXT_MAX. */
char *nvt_memlimit_format(uint64_t bytes, char *buf, size_t len);

/* The longest text nvt_memlimit_usage writes, with its NUL. */
#define NVT_MEM_USAGE_TEXT_MAX (2 * NVT_MEM_TEXT_MAX)

/* What a task holds and may hold on a GPU, as the viewers show it: "1.2G/4G",
 * "1.2G/-" without a limit, "-" for a task that holds nothing and has no limit;
 * returns buf. len >= NVT_MEM_USAGE_TEXT_MAX. */
char *nvt_memlimit_usage(uint64_t used, uint64_t limit, char *buf, size_t len);

/* The smallest limit: a CUDA context takes more than this before a program allocates. */
#define NVT_MEM_LIMIT_MIN (1024u * 1024u)
/* The largest: 1 PiB, more than any GPU holds (the shim refuses with 4 PiB). */
#define NVT_MEM_LIMIT_MAX (1ull << 50)

/*
 * NVT_ENV_MEM's text: decimal bytes only, as nvtaskset writes them (no sign,
 * unit, space or leading zero), from
 * NVT_MEM_LIMIT_MIN to NVT_MEM_LIMIT_MAX. Returns 0 with *bytes, or -1.
 */
int nvt_memlimit_env_parse(const char *text, uint64_t *bytes);

/*
 * NVT_ENV_MEM's whole text: BYTES (nvt_memlimit_env_parse), a limit on every
 * GPU of the task's partitions, or GPU-UUID=BYTES, a limit on that GPU alone
 * (a CDI device mem=GPU:SIZE: inside a container GPU numbers may differ, its
 * UUID does not), the UUID as nvt_uuid_format writes it. The longest such
 * text, with its NUL: NVT_MEM_ENV_TEXT_MAX.
 */
#define NVT_MEM_ENV_TEXT_MAX 64
struct nvt_mem_env {
	uint64_t bytes;   /* the limit */
	int one_gpu;      /* 1: on the GPU of uuid alone; 0: on each GPU */
	uint8_t uuid[16]; /* one_gpu: that GPU */
};
/* Reads text into *out. Returns 0, or -1 if it is neither form. */
int nvt_memlimit_env_read(const char *text, struct nvt_mem_env *out);
/* Writes m's text into buf (len >= NVT_MEM_ENV_TEXT_MAX). Returns its length, or -1. */
int nvt_memlimit_env_write(const struct nvt_mem_env *m, char *buf, size_t len);
/* The limit m gives the GPU of uuid: m->bytes, or 0 (none) on another GPU. */
uint64_t nvt_memlimit_env_on(const struct nvt_mem_env *m, const uint8_t uuid[16]);

/*
 * What a program that asks for its GPU's memory is told, the driver having
 * answered *free and *total (cuMemGetInfo; total alone: cuDeviceTotalMem):
 * with a limit, total is the limit and free what the task has left of it,
 * never more than the GPU has free; without one (limit 0), the driver's answer.
 */
void nvt_memlimit_told(uint64_t limit, uint64_t used, uint64_t *free_bytes, uint64_t *total);

/*
 * The most a pitched allocation of width x height bytes takes (cuMemAllocPitch):
 * each row padded to NVT_MEM_PITCH_ALIGN, the alignment of the pitch libcuda
 * gives; UINT64_MAX past any size. The limit is checked against it before the
 * call, when the pitch is not yet known.
 */
#define NVT_MEM_PITCH_ALIGN 512u
uint64_t nvt_memlimit_pitched(uint64_t width, uint64_t height);

/*
 * The bytes a stream-ordered allocation of bytes takes from its pool (cuMemAllocAsync,
 * cuMemAllocFromPoolAsync): bytes rounded up to NVT_MEM_POOL_ALIGN, UINT64_MAX past any size.
 * Measured (H200, driver 580.159.04, docs/bench/gpuchecks-2026-11-29, run G44): allocations
 * of 1, 512, 513, 4097, 1 MiB + 1 and 2 MiB + 1 bytes from the default pool came 512, 512,
 * 1024, 4608, 1049088 and 2097664 bytes apart: no 2 MiB blocks, as cuMemAlloc's have.
 */
#define NVT_MEM_POOL_ALIGN 512u
uint64_t nvt_memlimit_pool_rounded(uint64_t bytes);

/*
 * The bytes a cuMemAlloc or cuMemAllocManaged of bytes takes (the real driver's rounding,
 * measured: H200, driver 580.159.04, docs/bench/gpuchecks-2026-11-29, runs G40 and G44): up
 * to NVT_MEM_BLOCK_SMALL, bytes rounded up to NVT_MEM_BLOCK_MIN (the addresses of 1-, 513-
 * and 65537-byte allocations came 512, 1024 and 66048 bytes apart); past it, rounded up to
 * NVT_MEM_BLOCK_LARGE (1 MiB + 1 and 2 MiB 2 MiB apart, 2 MiB + 1 4 MiB, the free memory
 * falling as much). Managed allocations' addresses came as far apart (512, 4608 for 4097
 * bytes, 2 MiB for 1 MiB + 1, 4 MiB for 2 MiB + 1). UINT64_MAX past any size.
 */
#define NVT_MEM_BLOCK_MIN 512u
#define NVT_MEM_BLOCK_SMALL (1ull << 20)
#define NVT_MEM_BLOCK_LARGE (2ull << 20)
uint64_t nvt_memlimit_alloc_rounded(uint64_t bytes);

/* Whether an allocation of bytes on top of used stays within limit (0: none). */
int nvt_memlimit_fits(uint64_t limit, uint64_t used, uint64_t bytes);

/*
 * Whether a limit of want bytes fits on a GPU of gpu_bytes beside the limits
 * other tasks hold there already (given, their sum): a claim's rule
 * (--mem-exclusive). Returns 1 or 0 (want 0, no limit, never fits beside
 * another's: it may take the whole GPU).
 */
int nvt_memlimit_has_room(uint64_t gpu_bytes, uint64_t given, uint64_t want);

#endif /* NVT_MEMLIMIT_H */
