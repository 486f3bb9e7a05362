/*
 * cuda_driver.h - the few CUDA driver API declarations nvtaskset uses, so
 * that building needs no CUDA toolkit. libcuda.so.1 is loaded at run time.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CUDA_DRIVER_H
#define NVT_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult; /* 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef struct {
	char bytes[16];
} CUuuid;

#define NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

typedef CUresult (*nvt_cuGetExportTable_fn)(const void **table, const CUuuid *id);
typedef CUresult (*nvt_cuInit_fn)(unsigned flags);
typedef CUresult (*nvt_cuDeviceGetCount_fn)(int *count);
typedef CUresult (*nvt_cuDeviceGet_fn)(CUdevice *dev, int ordinal);
typedef CUresult (*nvt_cuDeviceGetAttribute_fn)(int *value, int attribute, CUdevice dev);
typedef CUresult (*nvt_cuDeviceGetUuid_fn)(CUuuid *uuid, CUdevice dev);
typedef CUresult (*nvt_cuDeviceGetName_fn)(char *name, int len, CUdevice dev);
typedef CUresult (*nvt_cuDriverGetVersion_fn)(int *version);
/* cuGetProcAddress_v2 (what cuda.h 12 and 13 call cuGetProcAddress) and the
 * CUDA 11.3 form still exported as cuGetProcAddress. */
typedef CUresult (*nvt_cuGetProcAddress_v2_fn)(const char *symbol, void **pfn, int cuda_version,
					       uint64_t flags, int *symbol_status);
typedef CUresult (*nvt_cuGetProcAddress_fn)(const char *symbol, void **pfn, int cuda_version,
					    uint64_t flags);
typedef CUresult (*nvt_cuOccupancyMaxActiveBlocksPerMultiprocessor_fn)(int *blocks, void *f,
								      int block_size, size_t shmem);

/*
 * The private export table that offers launch callbacks (docs/hardware-facts.md,
 * section 1, measured on an H100, driver 580): entry 3 subscribes a callback,
 * entry 6 enables one (domain, callback id) pair for it.
 */
#define NVT_CB_TABLE_UUID                                                                    \
	{                                                                                    \
		{                                                                            \
			(char)0x2c, (char)0x8e, (char)0x0a, (char)0xd8, (char)0x07, (char)0x10, \
			(char)0xab, (char)0x4e, (char)0x90, (char)0xdd, (char)0x54, (char)0x71, \
			(char)0x9f, (char)0xe5, (char)0xf7, (char)0x4b                       \
		}                                                                            \
	}
#define NVT_CB_TABLE_SUBSCRIBE 3
#define NVT_CB_TABLE_ENABLE 6
/* Fires once per kernel launch, after the TMD is built, before it is uploaded. */
#define NVT_CB_DOMAIN_LAUNCH 0xb
#define NVT_CB_ID_LAUNCH 0x1
/*
 * Launch parameter block: uint32 size first; 8-byte word 1 is the launching
 * context (measured on two H200s, driver 580), word 4 the TMD pointer.
 */
#define NVT_CB_PARAMS_CTX_WORD 1
#define NVT_CB_PARAMS_TMD_WORD 4
#define NVT_CB_PARAMS_MIN_SIZE ((NVT_CB_PARAMS_TMD_WORD + 1) * 8)

/*
 * The driver-API domain of the same table (docs/hardware-facts.md, section 7;
 * measured on an H100, driver 580.159.04, 2026-11-22): an
 * enabled callback id fires on entry to and on return from that API call,
 * numbered as CUPTI's cupti_driver_cbid.h. Its data block: uint32 size first
 * (0x68), word 5 points to the call's CUresult (valid on return), word 7
 * points to the call's arguments in order (a struct of them; a pointer the
 * callback changes on entry is the one the call uses), and word 10 holds the
 * callback id in its low 32 bits and the site (0 entry, 1 return) above.
 */
#define NVT_CB_DOMAIN_API 6
#define NVT_CB_API_RESULT_WORD 5
#define NVT_CB_API_ARGS_WORD 7
#define NVT_CB_API_ID_WORD 10
#define NVT_CB_API_MIN_SIZE ((NVT_CB_API_ID_WORD + 1) * 8)
#define NVT_CB_API_SITE_ENTER 0
#define NVT_CB_API_SITE_EXIT 1
/* The runtime API's domain of the same table, numbered as CUPTI's
 * cupti_runtime_cbid.h (enabling graph ids worked in domains 6 and 7 only:
 * docs/hardware-facts.md, section 7); its block is read as domain 6's. */
#define NVT_CB_DOMAIN_RUNTIME 7

/*
 * The arguments of the launch calls as the API callbacks point at them
 * (word 7): CUPTI's cuLaunchKernel_params (generated_cuda_meta.h; also
 * cuLaunchCooperativeKernel's and the _ptsz forms'), cuLaunchKernelEx_params
 * with CUlaunchConfig, cudaLaunchKernel_v7000_params (also
 * cudaLaunchCooperativeKernel's) and cudaLaunchKernelExC_v11060_params with
 * cudaLaunchConfig_t, CUDA 13.0. The stream is read, and the grid, block,
 * function and attributes of cooperative launches.
 */
typedef struct {
	void *f;
	unsigned grid[3], block[3], shared_mem;
	void *stream;
} NVT_LAUNCH_KERNEL_ARGS;
/* CUlaunchAttribute: an id, then (at byte 8) a 64-byte union of values;
 * CU_LAUNCH_ATTRIBUTE_COOPERATIVE's value is an int, non-zero: cooperative. */
typedef struct {
	int id;
	char pad[4];
	union {
		char bytes[64];
		int cooperative;
	} value;
} NVT_LAUNCH_ATTRIBUTE;
#define NVT_LAUNCH_ATTRIBUTE_COOPERATIVE 2
typedef struct {
	unsigned grid[3], block[3], shared_mem;
	void *stream;
	const NVT_LAUNCH_ATTRIBUTE *attrs;
	unsigned num_attrs;
} NVT_LAUNCH_CONFIG; /* CUlaunchConfig */
typedef struct {
	const NVT_LAUNCH_CONFIG *config;
	void *f; /* a CUfunction, or a CUkernel */
} NVT_LAUNCH_KERNEL_EX_ARGS;
typedef struct {
	const void *func;
	unsigned grid[3], block[3];
	void **args;
	size_t shared_mem;
	void *stream;
} NVT_RT_LAUNCH_KERNEL_ARGS;
typedef struct {
	unsigned grid[3], block[3];
	size_t shared_mem;
	void *stream;
} NVT_RT_LAUNCH_CONFIG; /* cudaLaunchConfig_t's head */
typedef struct {
	const NVT_RT_LAUNCH_CONFIG *config;
} NVT_RT_LAUNCH_KERNEL_EX_ARGS;
/* cuStreamEndCapture_params, cudaStreamEndCapture_v10000_params. */
typedef struct {
	void *stream;
	void **graph;
} NVT_END_CAPTURE_ARGS;

/* cuDeviceGetAttribute_params: where the value goes, which attribute, which device. */
typedef struct {
	int *value;
	int attribute;
	CUdevice dev;
} NVT_DEVICE_ATTRIBUTE_ARGS;

/* The driver-API calls nvtaskset follows (CUPTI's numbers): the SM count, kernel launches, graphs. */
enum nvt_api_cbid {
	NVT_CBID_cuDeviceGetAttribute = 9,
	NVT_CBID_cuLaunchKernel = 307,
	NVT_CBID_cuLaunchKernel_ptsz = 442,
	NVT_CBID_cuLaunchCooperativeKernel = 477,
	NVT_CBID_cuLaunchCooperativeKernel_ptsz = 478,
	NVT_CBID_cuLaunchKernelEx = 652,
	NVT_CBID_cuLaunchKernelEx_ptsz = 653,
	NVT_CBID_cuGraphInstantiate = 513,
	NVT_CBID_cuGraphLaunch = 514,
	NVT_CBID_cuGraphLaunch_ptsz = 515,
	NVT_CBID_cuGraphExecDestroy = 516,
	NVT_CBID_cuGraphExecKernelNodeSetParams = 538,
	NVT_CBID_cuGraphExecUpdate = 561,
	NVT_CBID_cuGraphExecMemcpyNodeSetParams = 562,
	NVT_CBID_cuGraphExecMemsetNodeSetParams = 563,
	NVT_CBID_cuGraphExecHostNodeSetParams = 564,
	NVT_CBID_cuGraphInstantiate_v2 = 578,
	NVT_CBID_cuGraphUpload = 580,
	NVT_CBID_cuGraphUpload_ptsz = 581,
	NVT_CBID_cuGraphExecChildGraphNodeSetParams = 586,
	NVT_CBID_cuGraphExecEventRecordNodeSetEvent = 595,
	NVT_CBID_cuGraphExecEventWaitNodeSetEvent = 596,
	NVT_CBID_cuGraphExecExternalSemaphoresSignalNodeSetParams = 624,
	NVT_CBID_cuGraphExecExternalSemaphoresWaitNodeSetParams = 625,
	NVT_CBID_cuGraphInstantiateWithFlags = 643,
	NVT_CBID_cuGraphInstantiateWithParams = 656,
	NVT_CBID_cuGraphInstantiateWithParams_ptsz = 657,
	NVT_CBID_cuGraphExecBatchMemOpNodeSetParams = 672,
	NVT_CBID_cuGraphExecKernelNodeSetParams_v2 = 692,
	NVT_CBID_cuGraphExecUpdate_v2 = 696,
	NVT_CBID_cuGraphExecNodeSetParams = 714,
};

/* ---- Graph types and calls (cuda.h, CUDA 12/13) ---- */
typedef void *CUgraph;
typedef void *CUgraphNode;
typedef void *CUgraphExec;
typedef void *CUstream;
typedef void *CUfunction;
typedef void *CUkernel;
typedef void *CUcontext;

enum nvt_graph_node_type {
	NVT_NODE_KERNEL = 0,
	NVT_NODE_GRAPH = 4,       /* a child graph */
	NVT_NODE_MEM_ALLOC = 10,
	NVT_NODE_CONDITIONAL = 13,
};
/* cuGraphInstantiateWithFlags / WithParams flag: launched from the device. */
#define NVT_GRAPH_INSTANTIATE_DEVICE_LAUNCH 4

typedef struct {
	CUfunction func;
	unsigned gridDimX, gridDimY, gridDimZ;
	unsigned blockDimX, blockDimY, blockDimZ;
	unsigned sharedMemBytes;
	void **kernelParams;
	void **extra;
	CUkernel kern; /* used when func is NULL */
	CUcontext ctx;
} NVT_KERNEL_NODE_PARAMS; /* CUDA_KERNEL_NODE_PARAMS_v2 */

typedef struct {
	uint64_t flags;
	CUstream hUploadStream;
	CUgraphNode hErrNode_out;
	int result_out;
} NVT_GRAPH_INSTANTIATE_PARAMS; /* CUDA_GRAPH_INSTANTIATE_PARAMS */

typedef struct {
	int result;
	CUgraphNode errorNode;
	CUgraphNode errorFromNode;
} NVT_GRAPH_EXEC_UPDATE_RESULT_INFO; /* CUgraphExecUpdateResultInfo */

typedef void (*nvt_launch_cb)(void *user, int domain, int cbid, const void *params);
typedef int (*nvt_cb_subscribe_fn)(uint32_t *handle, nvt_launch_cb cb, void *user);
typedef int (*nvt_cb_enable_fn)(uint32_t on, uint32_t handle, int domain, int cbid);

#endif /* NVT_CUDA_DRIVER_H */
