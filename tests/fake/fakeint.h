/*
 * fakeint.h - what the parts of the fake libcuda.so.1 share, and nothing
 * else sees: fakecuda.c (devices, contexts, launches, the simulated chip),
 * fakeprobe.c (modules, memory, the calibration probe), fakecb.c (the
 * callback table) and fakegraph.c, fakeexec.c, fakegraphapi.c (CUDA graphs).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef FAKEINT_H
#define FAKEINT_H

#include "gpu/cuda_driver.h"
#include "fakecuda.h"

#include <stddef.h>
#include <stdint.h>

/* Exported driver entry points; everything else stays inside the library. */
#define API __attribute__((visibility("default")))
#define INTERNAL __attribute__((visibility("hidden")))

#define TMD_BYTES 512
/* CUPTI_DRIVER_TRACE_CBID_SIZE of CUDA 13.0: callback ids of domain 6 are below it. */
#define FAKE_API_IDS 807

/* ---- fakecuda.c ---- */

/* cuInit succeeded. */
INTERNAL int fake_ready(void);
/* The device of the calling thread's current context. */
INTERNAL int fake_device(void);
INTERNAL int fake_devices(void); /* FAKECUDA_DEVICES */
/* The context a launch on device dev runs in: the calling thread's current one if it is dev's,
 * else dev's primary context. */
INTERNAL void *fake_context_of(int dev);
/* The calling thread's current context (a primary one, or one cuCtxCreate made). */
INTERNAL const void *fake_current_context(void);
/* The stream of the cuLaunchKernel[_ptsz] call this thread is in (as the call named it). */
INTERNAL const void *fake_launch_stream(void);
/* Device dev's primary context. */
INTERNAL const void *fake_primary_context(int dev);
/* cuDevicePrimaryCtxRelease's count: 0, or the driver's error (none retained: 201); *was_last: it
 * was the last (the context is destroyed). */
INTERNAL int fake_primary_release(int dev, int *was_last);
/* The id of the calling thread's current context (*ctx), for objects made in it; 1 where the
 * context an object was made in (ctx, key) went since (fakestream.c's events). */
INTERNAL unsigned long long fake_current_key(const void **ctx);
/* The calling thread's stream capture mode (cuThreadExchangeStreamCaptureMode's). */
INTERNAL int fake_capture_mode(void);
INTERNAL int fake_ctx_gone(const void *ctx, unsigned long long key);
/* Device dev's primary context was destroyed (its reset, its last release): what was made in it
 * answers 400 from now on (as on an H100, docs/hardware-facts.md); and how often that was. */
INTERNAL void fake_primary_destroyed(int dev);
INTERNAL unsigned fake_primary_generation(int dev);
/* The size word of the launch callback's block (FAKECUDA_PARAMS_SIZE). */
INTERNAL uint32_t fake_launch_block_size(void);
/* Fills tmd (TMD_BYTES) as the driver builds a launch's TMD for device dev. */
INTERNAL void fake_build_tmd(int dev, unsigned cluster, uint8_t *tmd);
/* Runs a TMD on device dev's chip: which TPCs its mask lets it use, or a hang. */
INTERNAL void fake_execute(int dev, const uint8_t *tmd, unsigned cluster,
			   struct fakecuda_launch *rec);
/* Bits of tmd changed since before outside the mask fields of dev's layout. */
INTERNAL int fake_stray_bits(int dev, const uint8_t *before, const uint8_t *tmd);
/* Device dev's logical TPCs, GPCs, and the GPC of a TPC. */
INTERNAL int fake_tpcs(int dev);
INTERNAL int fake_gpcs(int dev);
INTERNAL int fake_gpc_of(int dev, int tpc);

/* ---- fakeprobe.c ---- */

/* f is the calibration probe's CUfunction. */
INTERNAL int fake_is_probe(const void *f);
INTERNAL int fake_is_hog(const void *f);
/* nvtaskset's bridge (src/shim/shimbridge.c): its kernel and the empty one behind it. */
INTERNAL int fake_is_bridge(const void *f);
INTERNAL void fake_run_bridge(const void *f, void **params);
/* The launch of bridge kernel f with params fails (made in a primary context since destroyed,
 * FAKECUDA_BRIDGE_FAIL_RC, FAKECUDA_BRIDGE_FAIL_CHAINED): its error, or 0. */
INTERNAL int fake_bridge_refused(const void *f, void **params);
/* A launch begins (before its callbacks): the bridge its log line names. */
INTERNAL void fake_bridge_app_enter(void);
INTERNAL void fake_bridge_app_launch(void);
INTERNAL void fake_bridge_replay(void);
/* A synchronisation begins, or (look) a query of an event or a stream (after their callbacks):
 * each GPU's last bridge, what the host had released of it and whether it waits for the host's
 * next call after a replay (d:seq/rel/call, logged: "wait", "look"). */
INTERNAL void fake_bridge_waiting(int look);
/* A context synchronisation takes its measure: when the last bridge queued before it, not
 * released, reaches its cap (0: none); the wait took it in (taken_in: it ends there). */
INTERNAL uint64_t fake_bridge_measured_until(void);
INTERNAL void fake_bridge_taken_in(void);
/* An API call's callbacks begin: the bridges that reached their linger or their cap unreleased
 * ended there. */
INTERNAL void fake_bridge_look(void);
/* An API call's callbacks ended: the bridges see what they wrote to their words (a wait's
 * return, a release, a held thread's launch), from when each ends at its linger. */
INTERNAL void fake_bridge_noted(void);
/* A stream destroyed: its handle may be made again, in another context; its work still counts
 * for its own context's synchronisation. */
INTERNAL void fake_stream_forget(const void *stream);
/* The device of stream's context (NULL, the legacy and the per-thread stream: the current
 * context's), or -1 for a handle no stream has. */
INTERNAL int fake_stream_device(const void *stream);
/* When the work queued so far in the current context is done (CLOCK_MONOTONIC ns). */
INTERNAL uint64_t fake_context_done_at(void);
INTERNAL void fake_bridge_replayed(void);
INTERNAL void fake_run_hog(const struct fakecuda_launch *rec);
/* Runs the probe on device dev as its launch record allows: block b stores
 * the SM it ran on; clusters stay in one GPC. Returns a CUresult. */
INTERNAL int fake_run_probe(int dev, const struct fakecuda_launch *rec, unsigned blocks,
			    unsigned cluster, void **params);

/* ---- fakemembw.c: the bandwidth probe's model ---- */

INTERNAL void *fake_membw_module(void);
INTERNAL int fake_membw_function(void *module, const char *name, void **fn);
INTERNAL int fake_is_membw(const void *f);
INTERNAL void fake_run_membw(int dev, const struct fakecuda_launch *rec, void **params);
/* A synchronize: the launches before it have ended. */
INTERNAL void fake_membw_sync(void);

/* ---- fakermcalls.c: the RM calls libcuda makes (FAKECUDA_RM) ---- */

/* Device dev's first context: its device, subdevice and channel groups. */
INTERNAL void fake_rm_context(int dev, const unsigned char uuid[16]);
/* A launch on device dev (FAKECUDA_RM_LATE: one more group at the N-th). */
INTERNAL void fake_rm_launch(int dev);
/* Device dev's primary context was reset: its RM objects are freed (FAKECUDA_RM). */
INTERNAL void fake_rm_context_reset(int dev);

/* ---- fakemem.c: GPU memory per device ---- */

/* Device dev's memory in bytes (FAKECUDA_MEM_MB; default 80 GiB). */
INTERNAL uint64_t fake_mem_total(int dev);
/* Context ctx was destroyed: what was allocated in it is freed. */
INTERNAL void fake_mem_context_destroyed(const void *ctx);

/* ---- fakestream.c ---- */

/* A launch or replay on stream: it occupies the stream for FAKECUDA_KERNEL_US. */
INTERNAL void fake_stream_ran(const void *stream);
/* The next launch's stream is busy ns longer (FAKECUDA_DRY_US: fakeprobe.c). */
INTERNAL void fake_stream_dry(uint64_t ns);

/* ---- fakecb.c ---- */

/* Calls the launch domain's subscribers (0xb, id 1) for a TMD built for
 * device dev; returns how many were called. */
INTERNAL int fake_notify_launch(int dev, uint8_t *tmd);
/* Calls the subscribers that enabled callback id cbid of the driver-API
 * domain (6), at site NVT_CB_API_SITE_ENTER or _EXIT, with a block whose
 * words point at the call's result and at its arguments. */
INTERNAL void fake_api_callbacks(int cbid, int site, CUresult *result, void *args);
/* A driver call's body (fakestream.c, fakehostfn.c): its arguments in a struct named a, which the
 * entry callbacks may change, work run after them (CUDA_ERROR_NOT_INITIALIZED before cuInit),
 * then the return callbacks. */
#define FAKE_API_CALL(cbid, work)                                       \
	CUresult result = NVT_CUDA_ERROR_UNKNOWN;                       \
	fake_api_callbacks((cbid), NVT_CB_API_SITE_ENTER, &result, &a); \
	result = fake_ready() ? (work) : 3;                             \
	fake_api_callbacks((cbid), NVT_CB_API_SITE_EXIT, &result, &a);  \
	return result

/* The stream a _ptsz call works on: the one named, or (0) this thread's default stream. Its
 * callbacks see the stream as the call named it, as the real driver's do. */
#define PTSZ(stream) ((stream) ? (stream) : NVT_CU_STREAM_PER_THREAD)

/* ---- The graph model, called by fakegraphapi.c's entry points ---- */

/* CUresult values of the graph calls (cuda_driver.h's). */
enum {
	E_INVALID_VALUE = NVT_CUDA_ERROR_INVALID_VALUE,
	E_OUT_OF_MEMORY = NVT_CUDA_ERROR_OUT_OF_MEMORY,
	E_INVALID_HANDLE = NVT_CUDA_ERROR_INVALID_HANDLE,
	E_HANG = NVT_CUDA_ERROR_LAUNCH_TIMEOUT, /* what the fake's launches return for a hang, too */
	E_NOT_SUPPORTED = NVT_CUDA_ERROR_NOT_SUPPORTED,
	E_UPDATE_FAILURE = NVT_CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
};
/* The instantiate flags the model knows. */
#define FLAG_KNOWN (NVT_GRAPH_INSTANTIATE_AUTO_FREE | NVT_GRAPH_INSTANTIATE_UPLOAD | \
		    NVT_GRAPH_INSTANTIATE_DEVICE_LAUNCH | NVT_GRAPH_INSTANTIATE_NODE_PRIORITY)

struct graph;

struct gnode {
	int type;
	struct graph *owner;
	const struct gnode *clone_of; /* the node this one was cloned from */
	NVT_KERNEL_NODE_PARAMS kp;    /* kernel: kernelParams points at argv */
	uint64_t arg;                 /* kernel: the argument's value */
	void *argv[1];
	struct graph *body; /* child graph (4) or conditional body (13), owned */
	CUgraph bodies[1];  /* the conditional's phGraph_out array */
};

struct graph {
	struct graph *next;     /* all live graphs, embedded ones too */
	struct gnode *embedder; /* the node that owns this graph, or NULL */
	int n, cap;
	struct gnode **node;
};

/* The model's lock (recursive): held by every call of fakegraph.c and
 * fakeexec.c, and by their callers around the lookups below. */
INTERNAL void graph_lock(void);
INTERNAL void graph_unlock(void);
/* The live graph or node of a handle, or NULL. */
INTERNAL struct graph *find_graph(CUgraph h);
INTERNAL struct gnode *find_node(CUgraphNode h);
/* A kernel node's function (func, or kern when func is NULL). */
INTERNAL const void *kernel_of(const NVT_KERNEL_NODE_PARAMS *kp);
/* kp names a function. */
INTERNAL int kernel_ok(const NVT_KERNEL_NODE_PARAMS *kp);
/* A kernel's argument as the fake keeps it: the 8 bytes kernelParams[0]
 * points at (0 without one). */
INTERNAL uint64_t kernel_arg(const NVT_KERNEL_NODE_PARAMS *kp);

/* Graphs and their nodes (fakegraph.c). Handles are checked: a wrong one gives 400. */
INTERNAL CUresult graph_create(CUgraph *out, unsigned flags);
INTERNAL CUresult graph_destroy(CUgraph g);
/* Adds a node of type (kernel: kp; child graph: a copy of child; conditional:
 * an empty body graph, *bodies set to the node's array of it; empty; mem
 * alloc: *dptr set to a fake address). */
INTERNAL CUresult graph_add(CUgraphNode *out, CUgraph g, int type, const NVT_KERNEL_NODE_PARAMS *kp,
			    CUgraph child, CUgraph **bodies, uint64_t *dptr);
INTERNAL CUresult graph_clone(CUgraph *out, CUgraph g);
INTERNAL CUresult graph_nodes(CUgraph g, CUgraphNode *nodes, size_t *n);
INTERNAL CUresult node_type(CUgraphNode n, int *type);
INTERNAL CUresult node_kernel_get(CUgraphNode n, NVT_KERNEL_NODE_PARAMS *kp);
INTERNAL CUresult node_kernel_set(CUgraphNode n, const NVT_KERNEL_NODE_PARAMS *kp);
INTERNAL CUresult node_child_graph(CUgraphNode n, CUgraph *out);
INTERNAL CUresult node_find_in_clone(CUgraphNode *out, CUgraphNode original, CUgraph clone);
INTERNAL CUresult cond_handle_create(uint64_t *out, CUgraph g);

/* Executable graphs (fakeexec.c). */
INTERNAL CUresult exec_instantiate(CUgraphExec *out, CUgraph g, uint64_t flags);
INTERNAL CUresult exec_upload(CUgraphExec x);
INTERNAL CUresult exec_launch(CUgraphExec x);
INTERNAL CUresult exec_destroy(CUgraphExec x);
INTERNAL CUresult exec_update(CUgraphExec x, CUgraph g, NVT_GRAPH_EXEC_UPDATE_RESULT_INFO *info);
INTERNAL CUresult exec_kernel_set(CUgraphExec x, CUgraphNode n, const NVT_KERNEL_NODE_PARAMS *kp);
INTERNAL CUresult exec_enabled_set(CUgraphExec x, CUgraphNode n, unsigned on);
INTERNAL CUresult exec_enabled_get(CUgraphExec x, CUgraphNode n, unsigned *on);

#endif /* FAKEINT_H */
