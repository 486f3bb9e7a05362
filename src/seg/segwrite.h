/*
 * segwrite.h - writing another process's segment (segwrite.c): its writer's
 * lock, then a slot. Side effects: files.
 * Returns codes; never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SEGWRITE_H
#define NVT_SEGWRITE_H

#include "segfile.h"

struct nvt_seg_handle; /* segopen.h */

/* Takes the writer's lock (see nvtaskset.h), waiting at most timeout_ms, then
 * maps the segment and checks it again. Returns enum nvt_seg_err. */
int nvt_seg_lock(struct nvt_seg_handle *h, int timeout_ms);
/* Writes view (its GPU and partition) into slot gpu (after nvt_seg_lock);
 * new_gpu: the slot was free, so tell the shim (slots_gen). A file its owner
 * shrinks meanwhile gives NVT_SEG_ECORRUPT, not a crash. Returns enum nvt_seg_err. */
int nvt_seg_write(struct nvt_seg_handle *h, int gpu, const struct nvt_slot_view *view, int new_gpu);

#endif /* NVT_SEGWRITE_H */
