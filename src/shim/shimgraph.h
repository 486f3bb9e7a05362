/*
 * shimgraph.h - CUDA graphs follow partition changes (shimgraph.c). Private
 * to the shim.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMGRAPH_H
#define NVT_SHIMGRAPH_H

#include <stdint.h>

#include "gpu/cuda_driver.h"

void shim_graph_setup(nvt_cb_enable_fn enable, uint32_t handle);
/* A driver-API callback (domain 6) of a call it follows. */
void shim_graph_api(int cbid, const void *data);
/* Whether this thread is inside a graph upload (cheap: a thread-local read). */
int shim_graph_busy(void);
/* The launch callback built a graph kernel's TMD for slot (-1: none) with
 * the masks of slot sequence seq. */
void shim_graph_kernel(int slot, uint64_t seq);
/* The libsmctrl mask of the graph this thread uploads, if any. */
const uint64_t *shim_graph_smctrl_mask(void);

#endif /* NVT_SHIMGRAPH_H */
