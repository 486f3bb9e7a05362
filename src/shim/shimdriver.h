/*
 * shimdriver.h - the CUDA driver's entry points as the shim calls them: one
 * table (shimdriver.c), each entry point looked up once, by its name written
 * once. Private to the shim. The command has a table of its own
 * (src/gpu/driver.h): the shim does not load a driver of its own choosing
 * but finds the one its host loaded (or would load).
 *
 * Two kinds of entries:
 *  - shim_cu, filled at set-up (shim_driver_load) from the library that
 *    defines cuGetExportTable after the shim (the real driver behind the
 *    wrapper, or the one a program linked against), else from
 *    libcuda.so.1, loaded as the program would later. NULL where the
 *    driver lacks one: each feature says what it does without.
 *  - The driver's own entry points behind the shim's exports of the same
 *    name (shimsmcount.c: cuDeviceGetAttribute, cuGetProcAddress), found on
 *    first use (shim_driver_own): a program may call an export before
 *    set-up, through the handle of the library that defines
 *    cuGetExportTable (the handle the driver was found by may be the
 *    wrapper's, whose dlsym finds the wrapper's exports first).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_SHIMDRIVER_H
#define NVT_SHIMDRIVER_H

#include <stddef.h>

#include "gpu/cuda_driver.h"

/* The graph calls that set what one node of a graph does, (node, what):
 * each is the mirror of an exec's call (shimgraph.c). */
enum shim_node_set {
	SHIM_SET_KERNEL,       /* cuGraphKernelNodeSetParams */
	SHIM_SET_KERNEL_V2,    /* cuGraphKernelNodeSetParams_v2 */
	SHIM_SET_MEMCPY,
	SHIM_SET_MEMSET,
	SHIM_SET_HOST,
	SHIM_SET_EVENT_RECORD, /* cuGraphEventRecordNodeSetEvent */
	SHIM_SET_EVENT_WAIT,
	SHIM_SET_NODE,         /* cuGraphNodeSetParams */
	SHIM_NODE_SETS
};

struct shim_driver {
	nvt_cuGetExportTable_fn get_export_table;
	/* The GPUs CUDA shows the process, and a context's GPU (slow path only). */
	nvt_cuInit_fn init;
	nvt_cuDriverGetVersion_fn version;
	nvt_cuDeviceGetCount_fn device_count;
	nvt_cuDeviceGet_fn device_get;
	nvt_cuDeviceGetUuid_fn device_uuid;
	nvt_cuCtxGetDevice_fn ctx_device;
	/* Whether a device's primary context lives (after its release: shimslot.h). */
	nvt_cuDevicePrimaryCtxGetState_fn primary_state;
	/* A context's id, new for each context even at an address used before (CUDA 12.0). */
	nvt_cuCtxGetId_fn ctx_id;
	/* Priorities (shimyield.c). */
	nvt_cuCtxGetCurrent_fn ctx_current;
	nvt_cuCtxSetCurrent_fn ctx_set_current; /* the thread that bridges context synchronisations */
	nvt_cuEventCreate_fn event_create;
	nvt_cuEventRecord_fn event_record;
	nvt_cuEventQuery_fn event_query;
	/* The bridge between a time-sliced task's steps (shimbridge.c). */
	nvt_cuModuleLoadData_fn module_load;
	nvt_cuModuleGetFunction_fn module_function;
	nvt_cuStreamCreate_fn stream_create;
	nvt_cuLaunchKernel_fn launch_kernel;
	nvt_cuMemHostRegister_fn host_register;
	nvt_cuMemHostGetDevicePointer_fn host_device_ptr;
	nvt_cuThreadExchangeStreamCaptureMode_fn capture_mode;
	nvt_cuStreamIsCapturing_fn stream_capturing;
	nvt_cuStreamGetDevice_fn stream_device; /* the GPU a stream's allocations take (shimmem.c) */
	nvt_cuPointerGetAttribute_fn pointer_attribute;
	nvt_cuPointerGetAttributes_fn pointer_attributes;
	/* Cooperative launches (shimsmcount.c). */
	nvt_cuOccupancyMaxActiveBlocksPerMultiprocessor_fn occupancy;
	/* CUDA graphs (shimgraph.c). */
	nvt_cuGraphClone_fn graph_clone;
	nvt_cuGraphDestroy_fn graph_destroy;
	nvt_cuGraphGetNodes_fn graph_nodes;
	nvt_cuGraphNodeGetType_fn graph_node_type;
	nvt_cuGraphKernelNodeGetParams_fn graph_kernel_get;
	nvt_cuGraphChildGraphNodeGetGraph_fn graph_child;
	nvt_cuGraphExecUpdate_fn graph_exec_update;
	nvt_cuGraphNodeSetWhat_fn graph_node_set[SHIM_NODE_SETS];
};
extern struct shim_driver shim_cu;

/* Finds the driver and fills shim_cu (set-up, once). Returns 0, or -1 with
 * the reason in why when no driver can be loaded. */
int shim_driver_load(char *why, size_t len);

/* The driver's own entry points behind the shim's exports. */
enum shim_own {
	SHIM_OWN_ATTRIBUTE,   /* cuDeviceGetAttribute */
	SHIM_OWN_GET_PROC,    /* cuGetProcAddress (the CUDA 11.3 form) */
	SHIM_OWN_GET_PROC_V2, /* cuGetProcAddress_v2 */
	SHIM_OWNS
};
/* The driver's own entry point which (found on first use, lock-free), or
 * NULL while none can be found. In a copy of the shim that is not in
 * charge, the export of the copy in charge. */
void *shim_driver_own(enum shim_own which);

/* In a copy of the shim that is not in charge: shim_driver_own answers with
 * the exports of the copy in charge (in_charge: an address in it). */
void shim_driver_passive(const void *in_charge);

#endif /* NVT_SHIMDRIVER_H */
