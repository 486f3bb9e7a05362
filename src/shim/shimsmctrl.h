/*
 * shimsmctrl.h - libsmctrl's masks within the task's partition
 * (shimsmctrl.c; include/libsmctrl.h states the semantics). Private to the
 * shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMSMCTRL_H
#define NVT_SHIMSMCTRL_H

#include <stdint.h>

#include "gpu/cuda_driver.h"
#include "core/topo.h"
#include "shimstate.h"

void shim_smctrl_setup(nvt_cb_enable_fn enable, uint32_t handle);
/* Slot g's topology, for the launch path (slow path; first call wins). */
void shim_smctrl_topology(int g, const struct nvt_topology *topo);
/* An API-domain callback (6: driver, 7: runtime) of a call it follows. */
void shim_smctrl_api(int domain, int cbid, const void *data);
/* Whether a program set a libsmctrl mask (one load: the launch path). */
int shim_smctrl_on(void);
/* Narrows m for this launch (slot g, -1: none) by the program's mask;
 * graph_mask: the mask of the captured graph whose kernel it is, or NULL.
 * Returns 0, or -1 when the masks cannot apply (m unchanged). */
int shim_smctrl_launch(int g, struct hw_masks *m, const void *tmd, const uint64_t *graph_mask);
/* The mask a graph captured from a masked stream keeps; 1 if it has one. */
int shim_smctrl_graph_mask(const void *graph, uint64_t mask[2]);
/* Masks of 3 words: disable bits of TPCs 0-63, 64-127, and "set". */
void shim_smctrl_set_global(const uint64_t w[3]);
void shim_smctrl_set_stream(const void *stream, const uint64_t w[3]);
void shim_smctrl_set_next(const uint64_t w[3]);
/* fork(): the forking thread holds the setters' lock across it (no mask is copied
 * mid-write); in the child (single-threaded) the lock is free again. */
void shim_smctrl_before_fork(void);
void shim_smctrl_after_fork_in_parent(void);
void shim_smctrl_after_fork(void);
/* At exit with NVTASKSET_SMCTRL_DEBUG: what it saw. */
void shim_smctrl_report(void);

#endif /* NVT_SHIMSMCTRL_H */
