/*
 * cuda_driver.h - the CUDA driver's interface as nvtaskset uses it, written
 * once, so that building needs no CUDA toolkit (libcuda.so.1 is loaded at
 * run time): its types, the function types of the entry points called, the
 * constants (error codes, device, function and launch attributes, stream
 * handles, flags), the callback table with its domains, callback ids and
 * data blocks, the argument blocks read, and the most GPUs of a machine. The
 * fake driver (tests/fake) includes it too: what the shim reads and what the
 * fake hands it are one declaration (tests/e2e/driverapi.sh checks that no
 * other file writes a callback id or an entry point's function type).
 *
 * Over 500 lines on purpose: the driver's interface written once, in one
 * place, so that the shim and the fake driver read one declaration.
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
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUfunction;
typedef void *CUkernel;
typedef void *CUmodule;
typedef unsigned long long CUdeviceptr;
typedef void *CUgraph;
typedef void *CUgraphNode;
typedef void *CUgraphExec;

/*
 * The most GPUs of one machine that nvtaskset lists and numbers (CUDA's
 * devices, the kernel module's). Not NVT_MAX_GPUS (src/nvtaskset.h): the
 * GPUs a control segment has slots for, which a task has partitions on; that
 * one is part of the segment's layout and stays small.
 */
#define NVT_MACHINE_GPUS 64

/* CUresult values nvtaskset tells apart, and those the fake driver returns (cuda.h). */
#define NVT_CUDA_ERROR_INVALID_VALUE 1
#define NVT_CUDA_ERROR_OUT_OF_MEMORY 2
#define NVT_CUDA_ERROR_NOT_INITIALIZED 3
#define NVT_CUDA_ERROR_INSUFFICIENT_DRIVER 35
#define NVT_CUDA_ERROR_DEVICES_UNAVAILABLE 46
#define NVT_CUDA_ERROR_NO_DEVICE 100
#define NVT_CUDA_ERROR_INVALID_DEVICE 101
#define NVT_CUDA_ERROR_INVALID_CONTEXT 201
#define NVT_CUDA_ERROR_INVALID_PTX 218
#define NVT_CUDA_ERROR_INVALID_HANDLE 400
#define NVT_CUDA_ERROR_NOT_FOUND 500
#define NVT_CUDA_ERROR_NOT_READY 600
#define NVT_CUDA_ERROR_LAUNCH_TIMEOUT 702
#define NVT_CUDA_ERROR_CONTEXT_IS_DESTROYED 709
#define NVT_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE 720
#define NVT_CUDA_ERROR_NOT_SUPPORTED 801
#define NVT_CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE 910
#define NVT_CUDA_ERROR_UNKNOWN 999

/* CUdevice_attribute values. */
#define NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define NVT_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97
/* CUfunction_attribute values. */
#define NVT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define NVT_CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED 14
/* Stream handles with a meaning of their own (NULL is the legacy stream too),
 * and cuEventCreate's flag for an event without timing. */
#define NVT_CU_STREAM_LEGACY ((CUstream)0x1)
#define NVT_CU_STREAM_PER_THREAD ((CUstream)0x2)
#define NVT_CU_EVENT_DISABLE_TIMING 0x2

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
/* Its flag CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: the calls' _ptsz and _ptds forms. */
#define NVT_GET_PROC_ADDRESS_PER_THREAD 0x2
typedef CUresult (*nvt_cuOccupancyMaxActiveBlocksPerMultiprocessor_fn)(int *blocks, void *f,
								      int block_size, size_t shmem);
typedef CUresult (*nvt_cuCtxGetDevice_fn)(CUdevice *dev);
typedef CUresult (*nvt_cuCtxGetId_fn)(CUcontext ctx, unsigned long long *id);
typedef CUresult (*nvt_cuCtxGetCurrent_fn)(CUcontext *ctx);
typedef CUresult (*nvt_cuCtxSetCurrent_fn)(CUcontext ctx);
typedef CUresult (*nvt_cuCtxSynchronize_fn)(void);
typedef CUresult (*nvt_cuDevicePrimaryCtxRetain_fn)(CUcontext *ctx, CUdevice dev);
typedef CUresult (*nvt_cuDevicePrimaryCtxRelease_fn)(CUdevice dev);
typedef CUresult (*nvt_cuDevicePrimaryCtxGetState_fn)(CUdevice dev, unsigned *flags, int *active);
typedef CUresult (*nvt_cuModuleLoadData_fn)(CUmodule *module, const void *image);
typedef CUresult (*nvt_cuModuleGetFunction_fn)(CUfunction *fn, CUmodule module, const char *name);
typedef CUresult (*nvt_cuFuncSetAttribute_fn)(CUfunction fn, int attribute, int value);
typedef CUresult (*nvt_cuMemAlloc_fn)(CUdeviceptr *ptr, size_t bytes);
typedef CUresult (*nvt_cuMemFree_fn)(CUdeviceptr ptr);
typedef CUresult (*nvt_cuMemcpyDtoH_fn)(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*nvt_cuMemcpyHtoD_fn)(CUdeviceptr dst, const void *src, size_t bytes);
typedef CUresult (*nvt_cuStreamCreate_fn)(CUstream *stream, unsigned flags);
typedef CUresult (*nvt_cuLaunchKernel_fn)(CUfunction f, unsigned grid_x, unsigned grid_y,
					  unsigned grid_z, unsigned block_x, unsigned block_y,
					  unsigned block_z, unsigned shared_mem, CUstream stream,
					  void **params, void **extra);
typedef CUresult (*nvt_cuEventCreate_fn)(CUevent *ev, unsigned flags);
typedef CUresult (*nvt_cuEventRecord_fn)(CUevent ev, CUstream stream);
typedef CUresult (*nvt_cuEventQuery_fn)(CUevent ev);
typedef CUresult (*nvt_cuMemHostRegister_fn)(void *host, size_t bytes, unsigned flags);
typedef CUresult (*nvt_cuMemHostGetDevicePointer_fn)(CUdeviceptr *dev, void *host, unsigned flags);
/* cuMemHostRegister's flags: pinned memory the GPU reads and writes (portable to every context). */
#define NVT_CU_MEMHOSTREGISTER_PORTABLE 0x01
#define NVT_CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define NVT_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED 712
#define NVT_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED 713
/* cuStreamIsCapturing: *status 0 (CU_STREAM_CAPTURE_STATUS_NONE) while the stream captures nothing. */
typedef CUresult (*nvt_cuStreamIsCapturing_fn)(CUstream stream, int *status);
/* cuStreamGetDevice (CUDA 12.8): the device of the context stream was made in (NULL, the legacy
 * and the per-thread stream: the current context's). */
typedef CUresult (*nvt_cuStreamGetDevice_fn)(CUstream stream, CUdevice *dev);
/* cuPointerGetAttribute (CUpointer_attribute): what ptr is. */
typedef CUresult (*nvt_cuPointerGetAttribute_fn)(void *data, int attribute, CUdeviceptr ptr);
/* cuPointerGetAttributes: each of n attributes of ptr into data[i]; a pointer unknown to the
 * driver gets 0 in each, and CUDA_SUCCESS. */
typedef CUresult (*nvt_cuPointerGetAttributes_fn)(unsigned n, int *attributes, void **data, CUdeviceptr ptr);
#define NVT_CU_POINTER_ATTRIBUTE_CONTEXT 1        /* CUcontext its memory lives in; NULL: none */
#define NVT_CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2    /* unsigned: CUmemorytype */
#define NVT_CU_POINTER_ATTRIBUTE_DEVICE_POINTER 3 /* CUdeviceptr: where a kernel reaches it */
#define NVT_CU_POINTER_ATTRIBUTE_IS_MANAGED 8     /* unsigned */
#define NVT_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9 /* int */
#define NVT_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR 11 /* CUdeviceptr: its allocation's start */
#define NVT_CU_POINTER_ATTRIBUTE_RANGE_SIZE 12    /* size_t: and size */
#define NVT_CU_POINTER_ATTRIBUTE_ACCESS_FLAGS 16  /* int: what this context may do (1: read) */
#define NVT_CU_MEMORYTYPE_HOST 1
#define NVT_CU_MEMORYTYPE_DEVICE 2
/* cuLaunchHostFunc[_ptsz] and cuStreamAddCallback[_ptsz]: their arguments as the API callbacks
 * see them (a callback at entry may change fn and userData: the call uses what it leaves). */
typedef void (*nvt_host_fn)(void *user);
typedef void (*nvt_stream_callback)(CUstream stream, int status, void *user);
typedef struct {
	CUstream stream;
	nvt_host_fn fn;
	void *user;
} NVT_LAUNCH_HOST_FUNC_ARGS;
typedef struct {
	CUstream stream;
	nvt_stream_callback fn;
	void *user;
	unsigned flags;
} NVT_STREAM_ADD_CALLBACK_ARGS;
_Static_assert(sizeof(NVT_LAUNCH_HOST_FUNC_ARGS) == 24 && sizeof(NVT_STREAM_ADD_CALLBACK_ARGS) == 32 &&
		       __builtin_offsetof(NVT_STREAM_ADD_CALLBACK_ARGS, user) == 16,
	       "the driver's cuLaunchHostFunc_params and cuStreamAddCallback_params");
/* cuMemcpyDtoHAsync_v2[_ptsz] (void *dst, CUdeviceptr src, ...) and cuMemcpyAsync[_ptsz]
 * (CUdeviceptr dst, ...): their arguments as the API callbacks see them. */
typedef struct {
	CUdeviceptr dst;
	CUdeviceptr src;
	size_t bytes;
	CUstream stream;
} NVT_MEMCPY_ASYNC_ARGS;
_Static_assert(sizeof(NVT_MEMCPY_ASYNC_ARGS) == 32 && __builtin_offsetof(NVT_MEMCPY_ASYNC_ARGS, bytes) == 16 &&
		       __builtin_offsetof(NVT_MEMCPY_ASYNC_ARGS, stream) == 24,
	       "cuMemcpyDtoHAsync_v2_params and cuMemcpyAsync_params (CUPTI)");
/* cuThreadExchangeStreamCaptureMode: the calling thread's mode (CUstreamCaptureMode). */
typedef CUresult (*nvt_cuThreadExchangeStreamCaptureMode_fn)(int *mode);
#define NVT_CU_STREAM_CAPTURE_MODE_RELAXED 2
/* cuStreamCreate's flag: no implicit synchronisation with the legacy default stream. */
#define NVT_CU_STREAM_NON_BLOCKING 0x1

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
 * CU_LAUNCH_ATTRIBUTE_COOPERATIVE's value is an int, non-zero: cooperative;
 * CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION's three unsigned (x, y, z). */
typedef struct {
	int id;
	char pad[4];
	union {
		char bytes[64];
		int cooperative;
		unsigned cluster_dim[3];
	} value;
} NVT_LAUNCH_ATTRIBUTE;
#define NVT_LAUNCH_ATTRIBUTE_COOPERATIVE 2
#define NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4
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
typedef CUresult (*nvt_cuLaunchKernelEx_fn)(const NVT_LAUNCH_CONFIG *config, CUfunction f,
					    void **params, void **extra);
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

/* cuOccupancyMaxActiveClusters_params: where the answer goes, the function,
 * and the launch it asks about (its cluster dimension attribute). */
typedef struct {
	int *clusters;
	void *f;
	const NVT_LAUNCH_CONFIG *config;
} NVT_MAX_CLUSTERS_ARGS;

/*
 * Driver-API callback ids (domain 6), CUPTI's numbering (cupti_driver_cbid.h,
 * CUDA 13.0): the calls the shim follows (the SM count, kernel launches,
 * synchronisations, streams, graphs), and the others the fake driver reports.
 * tests/gpu/cbid.sh (make check-gpu-cbid) checks each against the toolkit's headers.
 */
enum nvt_api_cbid {
	NVT_CBID_cuDeviceGetAttribute = 9,
	NVT_CBID_cuOccupancyMaxActiveClusters = 676,
	/* Kernel launches. */
	NVT_CBID_cuLaunchKernel = 307,
	NVT_CBID_cuLaunchKernel_ptsz = 442,
	NVT_CBID_cuLaunchCooperativeKernel = 477,
	NVT_CBID_cuLaunchCooperativeKernel_ptsz = 478,
	NVT_CBID_cuLaunchKernelEx = 652,
	NVT_CBID_cuLaunchKernelEx_ptsz = 653,
	/* Synchronisations and the calls that end a request (shimyield.c). */
	NVT_CBID_cuCtxSynchronize = 17,
	NVT_CBID_cuMemcpyDtoH = 45,
	NVT_CBID_cuEventSynchronize = 121,
	NVT_CBID_cuStreamQuery = 125,
	NVT_CBID_cuStreamSynchronize = 126,
	NVT_CBID_cuMemcpyDtoH_v2 = 278,
	NVT_CBID_cuMemcpyDtoH_v2_ptds = 398,
	NVT_CBID_cuStreamQuery_ptsz = 439,
	NVT_CBID_cuStreamSynchronize_ptsz = 440,
	NVT_CBID_cuCtxSynchronize_v2 = 800,
	/* Copies to the host on a stream (a bridged task's: shimbridge.c). */
	NVT_CBID_cuMemcpyDtoHAsync_v2 = 279,
	NVT_CBID_cuMemcpyAsync = 306,
	NVT_CBID_cuMemcpyAsync_ptsz = 418,
	NVT_CBID_cuMemcpyDtoHAsync_v2_ptsz = 422,
	/* Host functions queued on a stream (their run ends a request: shimhostfn.c). */
	NVT_CBID_cuStreamAddCallback = 346,
	NVT_CBID_cuStreamAddCallback_ptsz = 437,
	NVT_CBID_cuLaunchHostFunc = 527,
	NVT_CBID_cuLaunchHostFunc_ptsz = 528,
	/* Events and streams (a query that finds an event done may end a request: shimhostfn.c). */
	NVT_CBID_cuEventCreate = 118,
	NVT_CBID_cuEventRecord = 119,
	NVT_CBID_cuEventQuery = 120,
	NVT_CBID_cuEventDestroy = 122,
	NVT_CBID_cuEventRecord_ptsz = 441,
	NVT_CBID_cuEventRecordWithFlags = 587,
	NVT_CBID_cuEventRecordWithFlags_ptsz = 588,
	NVT_CBID_cuStreamCreate = 124,
	NVT_CBID_cuStreamDestroy = 127,
	NVT_CBID_cuEventDestroy_v2 = 325,
	NVT_CBID_cuStreamDestroy_v2 = 326,
	NVT_CBID_cuStreamEndCapture = 497,
	NVT_CBID_cuStreamEndCapture_ptsz = 498,
	/* Graphs. */
	/* GPU memory (src/shim/shimmem.c): what takes it, frees it, and tells it. */
	NVT_CBID_cuDeviceTotalMem_v2 = 259,
	NVT_CBID_cuMemGetInfo_v2 = 242,
	NVT_CBID_cuMemAlloc_v2 = 243,
	NVT_CBID_cuMemAllocPitch_v2 = 244,
	NVT_CBID_cuMemFree_v2 = 245,
	NVT_CBID_cuMemAllocManaged = 371,
	NVT_CBID_cuMemAllocAsync = 598,
	NVT_CBID_cuMemAllocAsync_ptsz = 599,
	NVT_CBID_cuMemFreeAsync = 600,
	NVT_CBID_cuMemFreeAsync_ptsz = 601,
	NVT_CBID_cuMemAllocFromPoolAsync = 611,
	NVT_CBID_cuMemAllocFromPoolAsync_ptsz = 612,
	NVT_CBID_cuMemCreate = 549,
	NVT_CBID_cuMemRelease = 550,
	NVT_CBID_cuMemRetainAllocationHandle = 565,
	NVT_CBID_cuMemMap = 551,
	NVT_CBID_cuMemUnmap = 552,
	NVT_CBID_cuMemImportFromShareableHandle = 555,
	NVT_CBID_cuArrayCreate_v2 = 272,
	NVT_CBID_cuArray3DCreate_v2 = 274,
	NVT_CBID_cuArrayDestroy = 89,
	NVT_CBID_cuMipmappedArrayCreate = 347,
	NVT_CBID_cuMipmappedArrayDestroy = 349,
	NVT_CBID_cuIpcOpenMemHandle_v2 = 567,
	NVT_CBID_cuIpcCloseMemHandle = 330,
	NVT_CBID_cuCtxCreate_v2 = 235,
	NVT_CBID_cuCtxCreate_v3 = 645,
	NVT_CBID_cuCtxCreate_v4 = 757,
	NVT_CBID_cuCtxDestroy_v2 = 322,
	NVT_CBID_cuDevicePrimaryCtxRelease_v2 = 544,
	NVT_CBID_cuDevicePrimaryCtxReset_v2 = 545,
	/* ... and by their old names (the exports a program finds with dlsym, or cuGetProcAddress
	 * below CUDA 11.0): the same calls, ids of their own */
	NVT_CBID_cuDevicePrimaryCtxRelease = 387,
	NVT_CBID_cuDevicePrimaryCtxReset = 389,
	NVT_CBID_cuCtxDestroy = 11,
	/* ... where a stream-ordered allocation lives: its pool's device, its stream's */
	NVT_CBID_cuMemPoolCreate = 607,
	NVT_CBID_cuMemPoolDestroy = 608,
	NVT_CBID_cuDeviceGetDefaultMemPool = 606,
	NVT_CBID_cuDeviceGetMemPool = 610,
	NVT_CBID_cuMemGetDefaultMemPool = 801,
	NVT_CBID_cuMemGetMemPool = 802,
	NVT_CBID_cuStreamGetDevice = 774,
	NVT_CBID_cuStreamGetDevice_ptsz = 775,
	/* CUDA graphs */
	NVT_CBID_cuGraphCreate = 501,
	NVT_CBID_cuGraphAddKernelNode = 502,
	NVT_CBID_cuGraphKernelNodeGetParams = 503,
	NVT_CBID_cuGraphNodeGetType = 509,
	NVT_CBID_cuGraphInstantiate = 513,
	NVT_CBID_cuGraphLaunch = 514,
	NVT_CBID_cuGraphLaunch_ptsz = 515,
	NVT_CBID_cuGraphExecDestroy = 516,
	NVT_CBID_cuGraphDestroy = 517,
	NVT_CBID_cuGraphKernelNodeSetParams = 521,
	NVT_CBID_cuGraphClone = 523,
	NVT_CBID_cuGraphNodeFindInClone = 524,
	NVT_CBID_cuGraphAddChildGraphNode = 525,
	NVT_CBID_cuGraphAddEmptyNode = 526,
	NVT_CBID_cuGraphChildGraphNodeGetGraph = 529,
	NVT_CBID_cuGraphGetNodes = 534,
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
	NVT_CBID_cuGraphAddMemAllocNode = 638,
	NVT_CBID_cuGraphInstantiateWithFlags = 643,
	NVT_CBID_cuGraphNodeSetEnabled = 650,
	NVT_CBID_cuGraphNodeGetEnabled = 651,
	NVT_CBID_cuGraphInstantiateWithParams = 656,
	NVT_CBID_cuGraphInstantiateWithParams_ptsz = 657,
	NVT_CBID_cuGraphExecBatchMemOpNodeSetParams = 672,
	NVT_CBID_cuGraphAddKernelNode_v2 = 689,
	NVT_CBID_cuGraphKernelNodeGetParams_v2 = 690,
	NVT_CBID_cuGraphKernelNodeSetParams_v2 = 691,
	NVT_CBID_cuGraphExecKernelNodeSetParams_v2 = 692,
	NVT_CBID_cuGraphExecUpdate_v2 = 696,
	NVT_CBID_cuGraphAddNode = 712,
	NVT_CBID_cuGraphExecNodeSetParams = 714,
	NVT_CBID_cuGraphConditionalHandleCreate = 722,
	NVT_CBID_cuGraphAddNode_v2 = 723,
};

/* Runtime-API callback ids (domain 7), CUPTI's numbering
 * (cupti_runtime_cbid.h, CUDA 13.0): the launch, capture and graph calls
 * whose streams libsmctrl's masks follow (shimsmctrl.c). */
enum nvt_rt_cbid {
	NVT_CBID_cudaLaunchKernel = 211,
	NVT_CBID_cudaLaunchKernel_ptsz = 214,
	NVT_CBID_cudaLaunchCooperativeKernel = 269,
	NVT_CBID_cudaGraphDestroy = 314,
	NVT_CBID_cudaStreamEndCapture = 319,
	NVT_CBID_cudaStreamEndCapture_ptsz = 320,
	NVT_CBID_cudaLaunchKernelExC = 430,
	NVT_CBID_cudaLaunchKernelExC_ptsz = 431,
};

/* ---- Graph types and calls (cuda.h, CUDA 12/13) ---- */

enum nvt_graph_node_type {
	NVT_NODE_KERNEL = 0,
	NVT_NODE_GRAPH = 4,       /* a child graph */
	NVT_NODE_EMPTY = 5,
	NVT_NODE_MEM_ALLOC = 10,
	NVT_NODE_CONDITIONAL = 13,
};
/* CUgraphInstantiate_flags (cuGraphInstantiateWithFlags / WithParams): free
 * allocations on launch, upload (WithParams only), launched from the device,
 * use node priorities. */
#define NVT_GRAPH_INSTANTIATE_AUTO_FREE 1
#define NVT_GRAPH_INSTANTIATE_UPLOAD 2
#define NVT_GRAPH_INSTANTIATE_DEVICE_LAUNCH 4
#define NVT_GRAPH_INSTANTIATE_NODE_PRIORITY 8

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

typedef CUresult (*nvt_cuGraphClone_fn)(CUgraph *out, CUgraph g);
typedef CUresult (*nvt_cuGraphDestroy_fn)(CUgraph g);
typedef CUresult (*nvt_cuGraphGetNodes_fn)(CUgraph g, CUgraphNode *nodes, size_t *n);
typedef CUresult (*nvt_cuGraphNodeGetType_fn)(CUgraphNode n, int *type);
typedef CUresult (*nvt_cuGraphKernelNodeGetParams_fn)(CUgraphNode n, NVT_KERNEL_NODE_PARAMS *p);
typedef CUresult (*nvt_cuGraphKernelNodeSetParams_fn)(CUgraphNode n, const NVT_KERNEL_NODE_PARAMS *p);
typedef CUresult (*nvt_cuGraphChildGraphNodeGetGraph_fn)(CUgraphNode n, CUgraph *g);
typedef CUresult (*nvt_cuGraphExecUpdate_fn)(CUgraphExec e, CUgraph g,
					     NVT_GRAPH_EXEC_UPDATE_RESULT_INFO *info);
/* A graph call that sets what one node does, (node, what): cuGraphKernelNodeSetParams,
 * cuGraphMemcpyNodeSetParams, cuGraphEventRecordNodeSetEvent, ... */
typedef CUresult (*nvt_cuGraphNodeSetWhat_fn)(CUgraphNode n, const void *what);

/*
 * GPU memory: the arguments of the calls that take and free it as their API
 * callbacks point at them (CUPTI's generated_cuda_meta.h, CUDA 13.0), and
 * the structures they name (cuda.h). One struct serves calls of the same
 * leading arguments: cuMemAlloc_v2, cuMemAllocManaged (flags after),
 * cuMemAllocAsync[_ptsz] (stream after), cuMemAllocFromPoolAsync[_ptsz]
 * (pool, stream after) begin (CUdeviceptr *, size_t).
 */
typedef struct {
	CUdeviceptr *dptr;
	size_t bytes;
} NVT_MEM_ALLOC_ARGS;
typedef struct {
	CUdeviceptr *dptr;
	size_t *pitch;
	size_t width;
	size_t height;
	unsigned element;
} NVT_MEM_ALLOC_PITCH_ARGS;
/* cuMemAllocAsync[_ptsz]: from the current pool of the stream's device. */
typedef struct {
	CUdeviceptr *dptr;
	size_t bytes;
	CUstream stream;
} NVT_MEM_ALLOC_ASYNC_ARGS;
/* cuMemAllocFromPoolAsync[_ptsz]: from the pool, on the pool's device (which may not be the
 * stream's: cuda.h). */
typedef struct {
	CUdeviceptr *dptr;
	size_t bytes;
	void *pool;
	CUstream stream;
} NVT_MEM_POOL_ALLOC_ARGS;
/* CUmemPoolProps' leading fields (the whole is 88 bytes: read through a pointer, never
 * copied): the location, as CUmemAllocationProp's (type 1, CU_MEM_LOCATION_TYPE_DEVICE: the id
 * is the device ordinal). */
typedef struct {
	int alloc_type, handle_types, location_type, location_id;
} NVT_MEM_POOL_PROPS_HEAD;
typedef struct {
	void **pool;
	const NVT_MEM_POOL_PROPS_HEAD *props;
} NVT_MEM_POOL_CREATE_ARGS;
/* cuDeviceGetDefaultMemPool, cuDeviceGetMemPool: the device's pool. cuMemPoolDestroy:
 * NVT_HANDLE_ARGS. */
typedef struct {
	void **pool;
	CUdevice dev;
} NVT_DEVICE_POOL_ARGS;
/* cuMemGetDefaultMemPool, cuMemGetMemPool (CUDA 13.0): a location's pool of an allocation type
 * (CUmemLocation; CUmemAllocationType, 1 pinned). */
typedef struct {
	int type, id;
} NVT_MEM_LOCATION;
typedef struct {
	void **pool;
	const NVT_MEM_LOCATION *location;
	int alloc_type;
} NVT_LOCATION_POOL_ARGS;
/* cuMemFree_v2, cuMemFreeAsync[_ptsz], cuIpcCloseMemHandle: the pointer first. */
typedef struct {
	CUdeviceptr dptr;
} NVT_MEM_FREE_ARGS;
/* CUmemAllocationProp, whole (32 bytes: a caller's copy shorter than that
 * gives the driver what lies beyond it, and cuMemCreate answers
 * CUDA_ERROR_INVALID_VALUE): the location's id is the device ordinal
 * (location type 1, CU_MEM_LOCATION_TYPE_DEVICE); allocFlags' compression
 * type, GPUDirect RDMA capability, usage and reserved bytes, zero here. */
typedef struct {
	int type, handle_types, location_type, location_id;
	void *win32_handle_meta;
	unsigned char alloc_flags[8];
} NVT_MEM_ALLOC_PROP;
#define NVT_MEM_LOCATION_DEVICE 1
typedef struct {
	uint64_t *handle;
	size_t size;
	const NVT_MEM_ALLOC_PROP *prop;
	unsigned long long flags;
} NVT_MEM_CREATE_ARGS;
/* cuMemRelease; cuMemRetainAllocationHandle is (uint64_t *handle, void *addr). */
typedef struct {
	uint64_t handle;
} NVT_MEM_RELEASE_ARGS;
typedef struct {
	uint64_t *handle;
	void *addr;
} NVT_MEM_RETAIN_ARGS;
/* cuMemMap (its flags must be 0) and cuMemUnmap: a range of addresses, and the handle mapped at
 * offset of its allocation. */
typedef struct {
	CUdeviceptr ptr;
	size_t size, offset;
	uint64_t handle;
	unsigned long long flags;
} NVT_MEM_MAP_ARGS;
typedef struct {
	CUdeviceptr ptr;
	size_t size;
} NVT_MEM_UNMAP_ARGS;
typedef struct {
	size_t width, height;
	int format;
	unsigned channels;
} NVT_ARRAY_DESCRIPTOR; /* CUDA_ARRAY_DESCRIPTOR */
typedef struct {
	size_t width, height, depth;
	int format;
	unsigned channels, flags;
} NVT_ARRAY3D_DESCRIPTOR; /* CUDA_ARRAY3D_DESCRIPTOR */
#define NVT_ARRAY3D_LAYERED 0x01 /* CUDA_ARRAY3D_LAYERED: the depth counts layers */
#define NVT_ARRAY3D_CUBEMAP 0x04 /* CUDA_ARRAY3D_CUBEMAP: the depth counts faces (6, or 6 a layer) */
/* cuArrayCreate_v2 (NVT_ARRAY_DESCRIPTOR), cuArray3DCreate_v2 and
 * cuMipmappedArrayCreate (NVT_ARRAY3D_DESCRIPTOR, then the level count). */
typedef struct {
	void **handle;
	const void *desc;
	unsigned levels;
} NVT_ARRAY_CREATE_ARGS;
/* cuArrayDestroy, cuMipmappedArrayDestroy, cuCtxDestroy_v2: one handle. */
typedef struct {
	void *handle;
} NVT_HANDLE_ARGS;
/* cuCtxCreate_v2, _v3, _v4: the new context's address first. */
typedef struct {
	CUcontext *ctx;
} NVT_CTX_CREATE_ARGS;
/* cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxRelease_v2: the device. */
typedef struct {
	CUdevice dev;
} NVT_DEVICE_ARGS;
typedef struct {
	size_t *free_bytes;
	size_t *total;
} NVT_MEM_GET_INFO_ARGS;
typedef struct {
	size_t *bytes;
	CUdevice dev;
} NVT_DEVICE_TOTAL_MEM_ARGS;
typedef CUresult (*nvt_cuDeviceTotalMem_fn)(size_t *bytes, CUdevice dev);
typedef CUresult (*nvt_cuMemGetInfo_fn)(size_t *free_bytes, size_t *total);

typedef void (*nvt_launch_cb)(void *user, int domain, int cbid, const void *params);
typedef int (*nvt_cb_subscribe_fn)(uint32_t *handle, nvt_launch_cb cb, void *user);
typedef int (*nvt_cb_enable_fn)(uint32_t on, uint32_t handle, int domain, int cbid);

#endif /* NVT_CUDA_DRIVER_H */
