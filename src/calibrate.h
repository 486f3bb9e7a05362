/*
 * calibrate.h - measuring a GPU's TPC map and GPCs, and caching the result.
 * Side effects: the CUDA driver (in a child process), cache files.
 * Returns codes and error texts; never prints except progress to the FILE
 * given.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CALIBRATE_H
#define NVT_CALIBRATE_H

#include <stdio.h>
#include "gpu.h"
#include "topo.h"

struct nvt_gpu_topology {
	int ordinal;
	struct nvt_gpu_info info;
	struct nvt_cache_key key;
	struct nvt_topology topo;
	char cache_path[600]; /* where it was read or saved; "" if not saved */
	int from_cache;       /* 1: read from the cache, 0: calibrated now */
	double seconds;       /* calibration time, when calibrated now */
	char note[512];       /* a warning worth showing (cache not saved, ...) */
};

/*
 * Returns GPU ordinal's topology: from the cache when a valid record for this
 * GPU and driver exists (and force is 0), else by calibrating it outside MPS
 * and saving the record. progress, if not NULL, receives progress lines.
 * Waits at most timeout_ms for each driver step. Returns 0, or -1 with
 * err describing the failure.
 */
int nvt_gpu_topology(int ordinal, int force, int timeout_ms, FILE *progress,
		     struct nvt_gpu_topology *out, char *err, size_t errlen);

#endif /* NVT_CALIBRATE_H */
