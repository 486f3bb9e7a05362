/*
 * topocache.h - where calibrated topologies are kept, and the GPUs the
 * kernel module lists: what the command (gpus.c) and the shim (libsmctrl's
 * masks in a program nvtaskset did not start) both read, by one set of
 * rules. No CUDA; the environment is read with secure_getenv (the shim runs
 * in setuid programs too). Side effects: /proc, cache files. Returns codes;
 * never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_TOPOCACHE_H
#define NVT_TOPOCACHE_H

#include <stddef.h>
#include "cuda_driver.h"
#include "core/gpusel.h"
#include "core/topo.h"

/* The directory root's calibrations go in, which every user's tasks read. */
#define NVT_SYSTEM_CACHE_DIR "/var/cache/nvtaskset"

/* The directories searched for cached calibrations, most trusted first:
 * $NVTASKSET_CACHE_DIR alone if it is absolute; else the system's, then (not
 * for root) the user's own. Returns how many. */
int nvt_cache_dirs(char dirs[2][256]);

/*
 * Reads the file at path into buf (len bytes with the '\0') only if nobody
 * but root or the caller could have written it: a regular file (no link
 * followed, no FIFO opened blocking) of root's or the caller's, writable by
 * no group or other. Returns 0, or -1.
 */
int nvt_cache_read_trusted(const char *path, char *buf, size_t len);

/*
 * Record names. The record of kind ext ("topo": the TPC map, "mem": the
 * memory halves) for GPU uuid is dir/UUID.EXT. In a directory that others may
 * write in (a cache shared by users: mode 1777), where another user's record
 * of that name is no record of the caller's and cannot be replaced (a sticky
 * directory), a user other than root keeps hers as dir/UUID.uUID.EXT, or,
 * where someone made something of that name first, as dir/UUID.uUID.R.EXT
 * (R random, made afresh: a name nobody can take before her).
 */
/* 1 if dir is a directory others may write in (its records are kept per user). */
int nvt_cache_dir_shared(const char *dir);
/*
 * Finds the caller's trusted record of kind ext for uuid in dir (the names
 * above, in that order, the last ones by listing dir) that accept(text, arg)
 * takes (returns 1). Returns 0 with text in buf (len bytes) and path (may be
 * NULL; pathlen bytes) filled, or -1.
 */
int nvt_cache_read_record(const char *dir, const char *uuid, const char *ext,
			  int (*accept)(const char *text, void *arg), void *arg, char *buf, size_t len,
			  char *path, size_t pathlen);

/*
 * Finds the trusted record for key (nvt_cache_parse's rules) in the first of
 * dirs (n_dirs) that has one. Returns 0 with topo, found (may be NULL) and
 * path (may be NULL; pathlen bytes) filled, or -1.
 */
int nvt_cache_find(char dirs[][256], int n_dirs, const struct nvt_cache_key *key,
		   struct nvt_topology *topo, struct nvt_cache_key *found, char *path, size_t pathlen);

/* Where the kernel module describes itself: $NVTASKSET_PROC_NVIDIA (tests),
 * else /proc/driver/nvidia. */
const char *nvt_gpus_proc_dir(void);

/* The kernel module's version ("580.159.04") into out, or "-" if it cannot be read. */
void nvt_module_version(char *out, size_t len);

/*
 * Lists the GPUs the kernel module describes, in PCI bus order (the order of
 * their directory names, "0000:17:00.0"), which is nvidia-smi's, into ids
 * (max entries). Returns how many, or -1 if the directory cannot be read, is
 * empty, holds more than max, or a GPU is not described.
 */
int nvt_gpus_from_proc(struct nvt_gpu_id *ids, int max);

/*
 * The GPUs of ids (n, as nvt_gpus_from_proc lists them when from_proc, else
 * CUDA's own list) that a CUDA program started now sees (CUDA_VISIBLE_DEVICES,
 * CUDA_DEVICE_ORDER): fills idx (n entries) with their indices in ids and
 * returns how many. Where that cannot be told, every GPU.
 */
int nvt_gpus_visible_of(const struct nvt_gpu_id *ids, int n, int from_proc, int *idx);

#endif /* NVT_TOPOCACHE_H */
