/*
 * fakecuda.h - test-only interface of the fake libcuda.so.1.
 *
 * The fake behaves like the real driver as the shim sees it: the private
 * export table, callback subscription, one callback per launch with an
 * 88-byte parameter block pointing at a TMD of the configured version. It
 * then "runs" the launch on a simulated chip and records which logical TPCs
 * the hardware would have used.
 *
 * It also runs nvtaskset's calibration probe (PTX entry nvt_probe_smid), or a
 * kernel of another name like it (one .entry that uses %smid: its first
 * parameter is where it stores): each
 * block stores the SM it ran on, on the SMs the TMD's mask allows; cluster
 * launches keep each cluster inside one GPC. Any launch of thread-block
 * clusters runs only on the enabled TPCs of the GPCs that hold a whole
 * cluster (one block per SM), and hangs where none does.
 *
 * Configuration: the FAKECUDA_* variables of the environment, one table in
 * tests/fake/README.md (the chips, the knobs read once at the first cuInit
 * that succeeds, as the real driver reads its environment, and the others).
 * CUDA_VISIBLE_DEVICES names the devices CUDA shows, as CUDA reads it.
 * Launches run on the device of the thread's current context (device 0's
 * until cuCtxSetCurrent), which the callback's word 1 names.
 *
 * Kernel launches: cuLaunchKernel[_ptsz], cuLaunchCooperativeKernel[_ptsz] and
 * cuLaunchKernelEx[_ptsz] invoke the driver-API callbacks of their ids (307,
 * 442, 477, 478, 652, 653) on entry, then the launch callbacks (on the same
 * thread: docs/hardware-facts.md, section 14), then the return callbacks; the
 * stream argument is passed along and otherwise ignored (launches run at once).
 * cuStreamCreate and cuStreamDestroy_v2 invoke theirs too; a destroyed
 * stream's handle is the next one made (the last destroyed first), as the real
 * driver's allocator gives memory back. Host functions: fakehostfn.c.
 *
 * Cooperative launches (cuLaunchCooperativeKernel, or cuLaunchKernelEx with
 * attribute 2): every block of the grid must be resident at once. The
 * driver refuses with 720 a grid larger than the whole GPU holds (blocks an
 * SM from cuOccupancyMaxActiveBlocksPerMultiprocessor: 2048 threads, at most
 * 32 blocks, 228 KiB of shared memory an SM); a grid larger than the SMs
 * its TMD's mask enables hold is a hang (702 and a message), as on a GPU,
 * where its blocks wait at a grid-wide barrier for blocks that never start.
 *
 * cuDeviceGetAttribute invokes the driver-API callbacks on entry and
 * on return (with a pointer to the value it wrote), as the callback table of
 * CUPTI numbers it; FAKECUDA_ATTRIBUTE_CALLBACKS=0 makes it invoke none (a
 * driver that would not report it). It knows attributes 16 (SMs), 75, 76
 * (compute capability) and 97 (shared memory an SM).
 * cuGetProcAddress_v2 and cuGetProcAddress (CUDA 11.3's form) give this
 * library's own entry point of a name (or of its _v2), never an
 * interposer's, as the real driver does; 500 for a name it does not have.
 *
 * Driver-API callbacks (domain 6; src/gpu/cuda_driver.h; measured on an H100,
 * driver 580.159.04, 2026-11-22, tests/gpu/probes/graphs). The table's
 * enable entry takes domain 0xb (launches) and domain 6 with a callback id
 * below 807 (CUPTI's numbers), and refuses any other domain with 1. Every
 * graph call below invokes the subscribers that enabled its id twice, on
 * entry and on return, with a 13-word block: word 0's low 32 bits the size
 * (0x68), word 5 a pointer to the call's CUresult (999 on entry, the result
 * on return), word 7 a pointer to the call's arguments (a struct of them in
 * declaration order, as CUPTI's *_params), word 10 the id | site << 32
 * (site 0 entry, 1 return); the other words are junk, no pointers. The call
 * reads its arguments back after the entry callbacks: a callback that
 * changes one changes what the call does. No lock is held while a subscriber
 * runs; it may call the driver (whose calls fire their own callbacks).
 *
 * CUDA graphs (fakegraph.c, fakegraphapi.c): cuGraphCreate, cuGraphDestroy,
 * cuGraphAddKernelNode[_v2], cuGraphKernelNodeGetParams[_v2],
 * cuGraphKernelNodeSetParams[_v2], cuGraphAddChildGraphNode (embeds a copy),
 * cuGraphChildGraphNodeGetGraph (the embedded graph: changing it changes the
 * node), cuGraphAddEmptyNode, cuGraphAddMemAllocNode (a node of type 10 that
 * does nothing), cuGraphAddNode[_v2] (kernel, child graph, empty, and
 * conditional nodes of one body graph, which runs once per replay whatever
 * the condition), cuGraphConditionalHandleCreate, cuGraphClone (fails with
 * 801 for a graph holding a mem-alloc node, as the real one), cuGraphGetNodes
 * (creation order; dependencies are accepted and ignored: nodes run in
 * creation order), cuGraphNodeGetType, cuGraphNodeFindInClone,
 * cuGraphInstantiate[_v2], cuGraphInstantiateWithFlags, cuGraphInstantiate-
 * WithParams[_ptsz] (flag 2, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD, uploads at
 * once; flag 4, device launch, is accepted and changes nothing),
 * cuGraphUpload[_ptsz], cuGraphLaunch[_ptsz], cuGraphExecUpdate[_v2],
 * cuGraphExecKernelNodeSetParams[_v2], cuGraphExecNodeSetParams (kernel
 * nodes), cuGraphNodeSetEnabled/GetEnabled (kernel nodes of an exec),
 * cuGraphExecDestroy. Unversioned names have the real library's old
 * signatures (CUDA_KERNEL_NODE_PARAMS_v1, the old cuGraphExecUpdate).
 *
 * The device model of an exec: each of its kernel nodes (those in child
 * graphs and conditional bodies too, numbered depth first in creation order)
 * gets a device copy of its TMD at the exec's first upload (cuGraphUpload,
 * the upload flag, or the first cuGraphLaunch): the fake builds a host TMD
 * as for a launch on the exec's device (the current one at instantiation),
 * calls the launch subscribers once with it (word 1 the context, word 4 the
 * TMD) and copies it. Later replays never call them; writing that host TMD
 * later changes nothing. A replay runs every enabled kernel node's device
 * copy on the chip, as launches run (a mask with no working TPC is a hang:
 * 702 and a message). Rebuild: setting an exec's kernel node (set-params or
 * cuGraphExecUpdate) to another function or another sharedMemBytes marks it;
 * its TMD is built again (one more round of callbacks) at the next upload or
 * launch, even if it was set back meanwhile. Other changes (arguments, grid)
 * keep the device copy and its mask. cuGraphExecUpdate needs the same node
 * count, types and child structure, else it returns 910 and changes nothing;
 * disabled nodes stay disabled. A graph kernel's argument: the 8 bytes that
 * kernelParams[0] points at, copied when the node is set, as the real driver
 * copies argument values; each replay records it.
 * fakecuda_graph_kernels and fakecuda_graph_last read an exec's records.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include "gpu/cuda_driver.h"

#include <stddef.h>
#include <stdint.h>

struct fakecuda_launch {
	uint8_t tmd_version;    /* at the chip's version byte (72, or 58 for V05) */
	int mask_enabled;       /* the valid bit the hardware reads is set; V01: always */
	uint32_t disable[4];    /* the mask words 0-3 the hardware read, after the callbacks */
	int hung;               /* the mask left no working TPC: a real GPU hangs */
	uint64_t ran_tpcs[4];   /* logical TPCs the launch ran on */
	int callbacks;          /* callbacks invoked for this launch */
	uint32_t disable_hi[4]; /* mask words 4-7 (V04_01's upper mask, V05_00) */
	int stray_bits;         /* bits written outside the TMD layout's mask and valid bit */
	uint64_t coop_blocks;   /* a cooperative launch: its grid's blocks; 0: not one */
};

/* cuLaunchKernelEx's configuration and attributes: cuda_driver.h's NVT_LAUNCH_CONFIG and
 * NVT_LAUNCH_ATTRIBUTE (the cluster dimension, cooperative). */
typedef int (*fakecuda_launch_ex_fn)(const NVT_LAUNCH_CONFIG *cfg, void *f, void **params, void **extra);

/* ---- Graphs: the cuda.h structs that src/gpu/cuda_driver.h does not declare ---- */

/* CUDA_KERNEL_NODE_PARAMS_v1: the unversioned calls' struct (no kern, ctx). */
struct fakecuda_kernel_node_params_v1 {
	CUfunction func;
	unsigned gridDimX, gridDimY, gridDimZ;
	unsigned blockDimX, blockDimY, blockDimZ;
	unsigned sharedMemBytes;
	void **kernelParams;
	void **extra;
};
/* CUDA_CONDITIONAL_NODE_PARAMS; phGraph_out is set to the node's body array. */
struct fakecuda_conditional_params {
	uint64_t handle; /* from cuGraphConditionalHandleCreate */
	int type;        /* CU_GRAPH_COND_TYPE_IF, _WHILE, _SWITCH */
	unsigned size;   /* bodies: the fake makes one */
	CUgraph *phGraph_out;
	CUcontext ctx;
};
/* CUgraphNodeParams: 256 bytes, the type's parameters at byte 16. */
struct fakecuda_node_params {
	int type;
	int reserved0[3];
	union {
		long long reserved1[29];
		NVT_KERNEL_NODE_PARAMS kernel;
		CUgraph child;   /* CUDA_CHILD_GRAPH_NODE_PARAMS.graph */
		struct fakecuda_conditional_params conditional;
	} u;
	long long reserved2;
};
/* CUDA_MEM_ALLOC_NODE_PARAMS: the fake reads nothing and sets dptr. */
struct fakecuda_mem_alloc_params {
	unsigned char pool_props[88]; /* CUmemPoolProps */
	const void *accessDescs;
	size_t accessDescCount;
	size_t bytesize;
	uint64_t dptr;
};
_Static_assert(sizeof(struct fakecuda_node_params) == 256, "CUgraphNodeParams is 256 bytes");
_Static_assert(offsetof(struct fakecuda_mem_alloc_params, dptr) == 112, "as in cuda.h");

/* One kernel node of an exec, as its latest replay left it. */
struct fakecuda_graph_node {
	struct fakecuda_launch run; /* that replay's run (callbacks: at its TMD's build) */
	int ran;                    /* it ran then (0: disabled, or no replay yet) */
	unsigned builds;            /* its TMD's builds, each with one round of callbacks */
	uint64_t arg;               /* the argument it ran with (see above) */
	unsigned replays;           /* the exec's replays so far */
};

/* Returns how many kernel nodes the exec has, or -1 for no such exec. */
int fakecuda_graph_kernels(CUgraphExec exec);
/* Fills out for the exec's kernel node index (depth first); 0, or -1. */
int fakecuda_graph_last(CUgraphExec exec, int index, struct fakecuda_graph_node *out);

typedef int (*fakecuda_graph_kernels_fn)(CUgraphExec exec);
typedef int (*fakecuda_graph_last_fn)(CUgraphExec exec, int index, struct fakecuda_graph_node *out);

/* Returns the record of the calling thread's last launch (0), or -1. */
int fakecuda_last_launch(struct fakecuda_launch *out);
/* Overrides the TMD version of the calling thread's launches (0 = default). */
void fakecuda_set_tmd_version(uint8_t version);

typedef int (*fakecuda_last_launch_fn)(struct fakecuda_launch *out);
typedef void (*fakecuda_set_tmd_version_fn)(uint8_t version);

#endif /* FAKECUDA_H */
