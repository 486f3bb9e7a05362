/*
 * calibrate.h - measuring a GPU's TPC map and GPCs with a probe kernel, in
 * a child process outside MPS. Returns codes and error texts; never prints
 * except progress on stderr when asked.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CALIBRATE_H
#define NVT_CALIBRATE_H

#include <stddef.h>
#include "nvtaskset.h"

/*
 * Calibrates CUDA device ordinal (in this environment's numbering): its
 * logical TPC -> mask bit map and, on compute capability 9.0 and newer, its
 * GPCs. Waits at most timeout_ms. Returns 0 and fills topo, or -1 with the
 * reason in why.
 */
int nvt_calibrate(int ordinal, int timeout_ms, int show_progress, struct nvt_topology *topo,
		  char *why, size_t len);

#endif /* NVT_CALIBRATE_H */
