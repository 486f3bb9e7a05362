/*
 * shimsmctrlmaps.h - the GPUs' calibrated maps for libsmctrl's masks, also
 * in a program nvtaskset did not start (shimsmctrlmaps.c). Private to the
 * shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMSMCTRLMAPS_H
#define NVT_SHIMSMCTRLMAPS_H

#include "core/topo.h"

/* Gives each GPU this process sees that its segment has no slot for one
 * with its calibrated map and no partition (slow path; the first call does
 * it, the others wait for it). */
void shim_smctrl_maps(void);
/* In a forked child (single-threaded): its locks are free again. */
void shim_smctrl_maps_after_fork(void);
/* The calibrated topology of CUDA device ordinal dev: nvtaskset's for this
 * task, or the cache's (shim_smctrl_maps). Returns 0, EINVAL (no such
 * device), EIO (the driver failed) or ENOENT (no calibration of it could be
 * had: the program was told why). */
int shim_smctrl_device_topology(int dev, struct nvt_topology *out);

#endif /* NVT_SHIMSMCTRLMAPS_H */
