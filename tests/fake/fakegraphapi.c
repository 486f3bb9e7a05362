/*
 * fakegraphapi.c - the fake driver's graph entry points, with real CUDA
 * signatures (cuda.h, CUDA 13.0): each gathers its arguments in a struct in
 * declaration order (CUPTI's *_params), calls the driver-API subscribers of
 * its callback id on entry, reads the arguments back from the struct (a
 * callback may have changed them: measured, the probe swapped cuGraphLaunch's
 * exec), does the work (fakegraph.c, fakeexec.c) and calls them again on
 * return. See fakecuda.h.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeint.h"

#include <string.h>

/*
 * The body of an entry point whose arguments are in struct a: the result
 * reads 999 on entry (as the real driver's), the call's own on return.
 */
#define CALL(cbid, work)                                                 \
	CUresult result = 999;                                           \
	fake_api_callbacks((cbid), NVT_CB_API_SITE_ENTER, &result, &a);  \
	result = fake_ready() ? (work) : 3; /* CUDA_ERROR_NOT_INITIALIZED */ \
	fake_api_callbacks((cbid), NVT_CB_API_SITE_EXIT, &result, &a);   \
	return result

/* Dependencies are accepted and not kept: nodes run in creation order. */
static int deps_ok(const CUgraphNode *deps, size_t n)
{
	return !n || deps;
}

static NVT_KERNEL_NODE_PARAMS from_v1(const struct fakecuda_kernel_node_params_v1 *p)
{
	NVT_KERNEL_NODE_PARAMS kp;
	memset(&kp, 0, sizeof(kp));
	kp.func = p->func;
	kp.gridDimX = p->gridDimX, kp.gridDimY = p->gridDimY, kp.gridDimZ = p->gridDimZ;
	kp.blockDimX = p->blockDimX, kp.blockDimY = p->blockDimY, kp.blockDimZ = p->blockDimZ;
	kp.sharedMemBytes = p->sharedMemBytes;
	kp.kernelParams = p->kernelParams;
	kp.extra = p->extra;
	return kp;
}

/* ---- Graphs and nodes ------------------------------------------------------ */

API CUresult cuGraphCreate(CUgraph *phGraph, unsigned flags)
{
	struct { CUgraph *phGraph; unsigned flags; } a = {phGraph, flags};
	CALL(NVT_CBID_cuGraphCreate, graph_create(a.phGraph, a.flags));
}

API CUresult cuGraphDestroy(CUgraph hGraph)
{
	struct { CUgraph hGraph; } a = {hGraph};
	CALL(NVT_CBID_cuGraphDestroy, graph_destroy(a.hGraph));
}

static CUresult add_kernel_v1(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
			      const struct fakecuda_kernel_node_params_v1 *p)
{
	NVT_KERNEL_NODE_PARAMS kp;
	if (!p || !deps_ok(deps, n))
		return E_INVALID_VALUE;
	kp = from_v1(p);
	return graph_add(out, g, NVT_NODE_KERNEL, &kp, NULL, NULL, NULL);
}

API CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				  size_t numDependencies, const struct fakecuda_kernel_node_params_v1 *nodeParams)
{
	struct {
		CUgraphNode *phGraphNode;
		CUgraph hGraph;
		const CUgraphNode *dependencies;
		size_t numDependencies;
		const struct fakecuda_kernel_node_params_v1 *nodeParams;
	} a = {phGraphNode, hGraph, dependencies, numDependencies, nodeParams};
	CALL(NVT_CBID_cuGraphAddKernelNode,
	     add_kernel_v1(a.phGraphNode, a.hGraph, a.dependencies, a.numDependencies, a.nodeParams));
}

API CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				     size_t numDependencies, const NVT_KERNEL_NODE_PARAMS *nodeParams)
{
	struct {
		CUgraphNode *phGraphNode;
		CUgraph hGraph;
		const CUgraphNode *dependencies;
		size_t numDependencies;
		const NVT_KERNEL_NODE_PARAMS *nodeParams;
	} a = {phGraphNode, hGraph, dependencies, numDependencies, nodeParams};
	CALL(NVT_CBID_cuGraphAddKernelNode_v2,
	     deps_ok(a.dependencies, a.numDependencies)
		     ? graph_add(a.phGraphNode, a.hGraph, NVT_NODE_KERNEL, a.nodeParams, NULL, NULL, NULL)
		     : E_INVALID_VALUE);
}

static CUresult kernel_get_v1(CUgraphNode n, struct fakecuda_kernel_node_params_v1 *p)
{
	NVT_KERNEL_NODE_PARAMS kp;
	int rc;
	if (!p)
		return E_INVALID_VALUE;
	if ((rc = node_kernel_get(n, &kp)))
		return rc;
	memcpy(p, &kp, sizeof(*p)); /* v1 is v2's head */
	return 0;
}

API CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, struct fakecuda_kernel_node_params_v1 *nodeParams)
{
	struct { CUgraphNode hNode; struct fakecuda_kernel_node_params_v1 *nodeParams; } a = {hNode, nodeParams};
	CALL(NVT_CBID_cuGraphKernelNodeGetParams, kernel_get_v1(a.hNode, a.nodeParams));
}

API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, NVT_KERNEL_NODE_PARAMS *nodeParams)
{
	struct { CUgraphNode hNode; NVT_KERNEL_NODE_PARAMS *nodeParams; } a = {hNode, nodeParams};
	CALL(NVT_CBID_cuGraphKernelNodeGetParams_v2, node_kernel_get(a.hNode, a.nodeParams));
}

static CUresult kernel_set_v1(CUgraphNode n, const struct fakecuda_kernel_node_params_v1 *p)
{
	NVT_KERNEL_NODE_PARAMS kp;
	if (!p)
		return E_INVALID_VALUE;
	kp = from_v1(p);
	return node_kernel_set(n, &kp);
}

API CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const struct fakecuda_kernel_node_params_v1 *nodeParams)
{
	struct { CUgraphNode hNode; const struct fakecuda_kernel_node_params_v1 *nodeParams; } a = {hNode, nodeParams};
	CALL(NVT_CBID_cuGraphKernelNodeSetParams, kernel_set_v1(a.hNode, a.nodeParams));
}

API CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const NVT_KERNEL_NODE_PARAMS *nodeParams)
{
	struct { CUgraphNode hNode; const NVT_KERNEL_NODE_PARAMS *nodeParams; } a = {hNode, nodeParams};
	CALL(NVT_CBID_cuGraphKernelNodeSetParams_v2, node_kernel_set(a.hNode, a.nodeParams));
}

API CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				      size_t numDependencies, CUgraph childGraph)
{
	struct {
		CUgraphNode *phGraphNode;
		CUgraph hGraph;
		const CUgraphNode *dependencies;
		size_t numDependencies;
		CUgraph childGraph;
	} a = {phGraphNode, hGraph, dependencies, numDependencies, childGraph};
	CALL(NVT_CBID_cuGraphAddChildGraphNode,
	     deps_ok(a.dependencies, a.numDependencies)
		     ? graph_add(a.phGraphNode, a.hGraph, NVT_NODE_GRAPH, NULL, a.childGraph, NULL, NULL)
		     : E_INVALID_VALUE);
}

API CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
	struct { CUgraphNode hNode; CUgraph *phGraph; } a = {hNode, phGraph};
	CALL(NVT_CBID_cuGraphChildGraphNodeGetGraph, node_child_graph(a.hNode, a.phGraph));
}

API CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				 size_t numDependencies)
{
	struct {
		CUgraphNode *phGraphNode;
		CUgraph hGraph;
		const CUgraphNode *dependencies;
		size_t numDependencies;
	} a = {phGraphNode, hGraph, dependencies, numDependencies};
	CALL(NVT_CBID_cuGraphAddEmptyNode,
	     deps_ok(a.dependencies, a.numDependencies)
		     ? graph_add(a.phGraphNode, a.hGraph, NVT_NODE_EMPTY, NULL, NULL, NULL, NULL)
		     : E_INVALID_VALUE);
}

API CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
				    size_t numDependencies, struct fakecuda_mem_alloc_params *nodeParams)
{
	struct {
		CUgraphNode *phGraphNode;
		CUgraph hGraph;
		const CUgraphNode *dependencies;
		size_t numDependencies;
		struct fakecuda_mem_alloc_params *nodeParams;
	} a = {phGraphNode, hGraph, dependencies, numDependencies, nodeParams};
	CALL(NVT_CBID_cuGraphAddMemAllocNode,
	     a.nodeParams && deps_ok(a.dependencies, a.numDependencies)
		     ? graph_add(a.phGraphNode, a.hGraph, NVT_NODE_MEM_ALLOC, NULL, NULL, NULL, &a.nodeParams->dptr)
		     : E_INVALID_VALUE);
}

/* cuGraphAddNode's types the fake knows: kernel, child graph, empty, and a
 * conditional of one body (IF, WHILE or SWITCH: the body runs once per replay). */
static CUresult add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
			 struct fakecuda_node_params *p)
{
	if (!p || !deps_ok(deps, n))
		return E_INVALID_VALUE;
	switch (p->type) {
	case NVT_NODE_KERNEL:
		return graph_add(out, g, NVT_NODE_KERNEL, &p->u.kernel, NULL, NULL, NULL);
	case NVT_NODE_GRAPH:
		return graph_add(out, g, NVT_NODE_GRAPH, NULL, p->u.child, NULL, NULL);
	case NVT_NODE_EMPTY:
		return graph_add(out, g, NVT_NODE_EMPTY, NULL, NULL, NULL, NULL);
	case NVT_NODE_CONDITIONAL:
		if (!p->u.conditional.handle || p->u.conditional.type < 0 || p->u.conditional.type > 2 ||
		    !p->u.conditional.size)
			return E_INVALID_VALUE;
		if (p->u.conditional.size != 1)
			return E_NOT_SUPPORTED; /* the fake makes one body */
		return graph_add(out, g, NVT_NODE_CONDITIONAL, NULL, NULL, &p->u.conditional.phGraph_out, NULL);
	default:
		return E_NOT_SUPPORTED;
	}
}

API CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			    size_t numDependencies, struct fakecuda_node_params *nodeParams)
{
	struct {
		CUgraphNode *phGraphNode;
		CUgraph hGraph;
		const CUgraphNode *dependencies;
		size_t numDependencies;
		struct fakecuda_node_params *nodeParams;
	} a = {phGraphNode, hGraph, dependencies, numDependencies, nodeParams};
	CALL(NVT_CBID_cuGraphAddNode,
	     add_node(a.phGraphNode, a.hGraph, a.dependencies, a.numDependencies, a.nodeParams));
}

API CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
			       const void *dependencyData, size_t numDependencies,
			       struct fakecuda_node_params *nodeParams)
{
	struct {
		CUgraphNode *phGraphNode;
		CUgraph hGraph;
		const CUgraphNode *dependencies;
		const void *dependencyData;
		size_t numDependencies;
		struct fakecuda_node_params *nodeParams;
	} a = {phGraphNode, hGraph, dependencies, dependencyData, numDependencies, nodeParams};
	CALL(NVT_CBID_cuGraphAddNode_v2,
	     add_node(a.phGraphNode, a.hGraph, a.dependencies, a.numDependencies, a.nodeParams));
}

API CUresult cuGraphConditionalHandleCreate(uint64_t *pHandle_out, CUgraph hGraph, CUcontext ctx,
					    unsigned defaultLaunchValue, unsigned flags)
{
	struct {
		uint64_t *pHandle_out;
		CUgraph hGraph;
		CUcontext ctx;
		unsigned defaultLaunchValue;
		unsigned flags;
	} a = {pHandle_out, hGraph, ctx, defaultLaunchValue, flags};
	CALL(NVT_CBID_cuGraphConditionalHandleCreate, cond_handle_create(a.pHandle_out, a.hGraph));
}

API CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
	struct { CUgraph *phGraphClone; CUgraph originalGraph; } a = {phGraphClone, originalGraph};
	CALL(NVT_CBID_cuGraphClone, graph_clone(a.phGraphClone, a.originalGraph));
}

API CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	struct { CUgraph hGraph; CUgraphNode *nodes; size_t *numNodes; } a = {hGraph, nodes, numNodes};
	CALL(NVT_CBID_cuGraphGetNodes, graph_nodes(a.hGraph, a.nodes, a.numNodes));
}

API CUresult cuGraphNodeGetType(CUgraphNode hNode, int *type)
{
	struct { CUgraphNode hNode; int *type; } a = {hNode, type};
	CALL(NVT_CBID_cuGraphNodeGetType, node_type(a.hNode, a.type));
}

API CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph)
{
	struct { CUgraphNode *phNode; CUgraphNode hOriginalNode; CUgraph hClonedGraph; } a = {
		phNode, hOriginalNode, hClonedGraph};
	CALL(NVT_CBID_cuGraphNodeFindInClone, node_find_in_clone(a.phNode, a.hOriginalNode, a.hClonedGraph));
}

/* ---- Executable graphs ----------------------------------------------------- */

static CUresult instantiate_old(CUgraphExec *out, CUgraph g, CUgraphNode *err, char *log, size_t size)
{
	int rc = exec_instantiate(out, g, 0);
	if (err)
		*err = NULL;
	if (log && size)
		log[0] = '\0';
	return rc;
}

API CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
				char *logBuffer, size_t bufferSize)
{
	struct {
		CUgraphExec *phGraphExec;
		CUgraph hGraph;
		CUgraphNode *phErrorNode;
		char *logBuffer;
		size_t bufferSize;
	} a = {phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize};
	CALL(NVT_CBID_cuGraphInstantiate,
	     instantiate_old(a.phGraphExec, a.hGraph, a.phErrorNode, a.logBuffer, a.bufferSize));
}

API CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
				   char *logBuffer, size_t bufferSize)
{
	struct {
		CUgraphExec *phGraphExec;
		CUgraph hGraph;
		CUgraphNode *phErrorNode;
		char *logBuffer;
		size_t bufferSize;
	} a = {phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize};
	CALL(NVT_CBID_cuGraphInstantiate_v2,
	     instantiate_old(a.phGraphExec, a.hGraph, a.phErrorNode, a.logBuffer, a.bufferSize));
}

/* The upload flag is cuGraphInstantiateWithParams' only (cuda.h). */
API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
	struct { CUgraphExec *phGraphExec; CUgraph hGraph; unsigned long long flags; } a = {phGraphExec, hGraph, flags};
	CALL(NVT_CBID_cuGraphInstantiateWithFlags,
	     a.flags & NVT_GRAPH_INSTANTIATE_UPLOAD ? E_INVALID_VALUE : exec_instantiate(a.phGraphExec, a.hGraph, a.flags));
}

/* The upload stream is not modelled: an upload is done when the call returns. */
static CUresult instantiate_params(CUgraphExec *out, CUgraph g, NVT_GRAPH_INSTANTIATE_PARAMS *p)
{
	int rc;
	if (!p)
		return E_INVALID_VALUE;
	rc = exec_instantiate(out, g, p->flags);
	p->hErrNode_out = NULL;
	p->result_out = rc ? 1 : 0; /* CUDA_GRAPH_INSTANTIATE_ERROR, _SUCCESS */
	return rc;
}

API CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
					  NVT_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	struct { CUgraphExec *phGraphExec; CUgraph hGraph; NVT_GRAPH_INSTANTIATE_PARAMS *instantiateParams; } a = {
		phGraphExec, hGraph, instantiateParams};
	CALL(NVT_CBID_cuGraphInstantiateWithParams,
	     instantiate_params(a.phGraphExec, a.hGraph, a.instantiateParams));
}

API CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
					       NVT_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	struct { CUgraphExec *phGraphExec; CUgraph hGraph; NVT_GRAPH_INSTANTIATE_PARAMS *instantiateParams; } a = {
		phGraphExec, hGraph, instantiateParams};
	CALL(NVT_CBID_cuGraphInstantiateWithParams_ptsz,
	     instantiate_params(a.phGraphExec, a.hGraph, a.instantiateParams));
}

/* A replay occupies its stream as one launch does (fakestream.c). */
static CUresult replay(CUgraphExec x, CUstream stream)
{
	CUresult rc = exec_launch(x);

	fake_bridge_replay();
	if (rc == 0)
		fake_stream_ran(stream);
	return rc;
}

API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	struct { CUgraphExec hGraphExec; CUstream hStream; } a = {hGraphExec, hStream};
	CALL(NVT_CBID_cuGraphLaunch, replay(a.hGraphExec, a.hStream));
}

API CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	struct { CUgraphExec hGraphExec; CUstream hStream; } a = {hGraphExec, hStream};
	CALL(NVT_CBID_cuGraphLaunch_ptsz, replay(a.hGraphExec, a.hStream ? a.hStream : (CUstream)2));
}

API CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	struct { CUgraphExec hGraphExec; CUstream hStream; } a = {hGraphExec, hStream};
	CALL(NVT_CBID_cuGraphUpload, exec_upload(a.hGraphExec));
}

API CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	struct { CUgraphExec hGraphExec; CUstream hStream; } a = {hGraphExec, hStream};
	CALL(NVT_CBID_cuGraphUpload_ptsz, exec_upload(a.hGraphExec));
}

API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct { CUgraphExec hGraphExec; } a = {hGraphExec};
	CALL(NVT_CBID_cuGraphExecDestroy, exec_destroy(a.hGraphExec));
}

static CUresult update_v1(CUgraphExec x, CUgraph g, CUgraphNode *err, int *result)
{
	NVT_GRAPH_EXEC_UPDATE_RESULT_INFO info;
	int rc;
	if (!err || !result)
		return E_INVALID_VALUE;
	rc = exec_update(x, g, &info);
	*err = info.errorNode;
	*result = info.result;
	return rc;
}

API CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
			       int *updateResult_out)
{
	struct {
		CUgraphExec hGraphExec;
		CUgraph hGraph;
		CUgraphNode *hErrorNode_out;
		int *updateResult_out;
	} a = {hGraphExec, hGraph, hErrorNode_out, updateResult_out};
	CALL(NVT_CBID_cuGraphExecUpdate, update_v1(a.hGraphExec, a.hGraph, a.hErrorNode_out, a.updateResult_out));
}

API CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, NVT_GRAPH_EXEC_UPDATE_RESULT_INFO *resultInfo)
{
	struct { CUgraphExec hGraphExec; CUgraph hGraph; NVT_GRAPH_EXEC_UPDATE_RESULT_INFO *resultInfo; } a = {
		hGraphExec, hGraph, resultInfo};
	CALL(NVT_CBID_cuGraphExecUpdate_v2, exec_update(a.hGraphExec, a.hGraph, a.resultInfo));
}

static CUresult exec_set_v1(CUgraphExec x, CUgraphNode n, const struct fakecuda_kernel_node_params_v1 *p)
{
	NVT_KERNEL_NODE_PARAMS kp;
	if (!p)
		return E_INVALID_VALUE;
	kp = from_v1(p);
	return exec_kernel_set(x, n, &kp);
}

API CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
					    const struct fakecuda_kernel_node_params_v1 *nodeParams)
{
	struct {
		CUgraphExec hGraphExec;
		CUgraphNode hNode;
		const struct fakecuda_kernel_node_params_v1 *nodeParams;
	} a = {hGraphExec, hNode, nodeParams};
	CALL(NVT_CBID_cuGraphExecKernelNodeSetParams, exec_set_v1(a.hGraphExec, a.hNode, a.nodeParams));
}

API CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
					       const NVT_KERNEL_NODE_PARAMS *nodeParams)
{
	struct { CUgraphExec hGraphExec; CUgraphNode hNode; const NVT_KERNEL_NODE_PARAMS *nodeParams; } a = {
		hGraphExec, hNode, nodeParams};
	CALL(NVT_CBID_cuGraphExecKernelNodeSetParams_v2, exec_kernel_set(a.hGraphExec, a.hNode, a.nodeParams));
}

/* Kernel nodes only: the fake models no other node's parameters. */
static CUresult exec_set_node(CUgraphExec x, CUgraphNode n, struct fakecuda_node_params *p)
{
	if (!p)
		return E_INVALID_VALUE;
	return p->type == NVT_NODE_KERNEL ? exec_kernel_set(x, n, &p->u.kernel) : E_NOT_SUPPORTED;
}

API CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
				      struct fakecuda_node_params *nodeParams)
{
	struct { CUgraphExec hGraphExec; CUgraphNode hNode; struct fakecuda_node_params *nodeParams; } a = {
		hGraphExec, hNode, nodeParams};
	CALL(NVT_CBID_cuGraphExecNodeSetParams, exec_set_node(a.hGraphExec, a.hNode, a.nodeParams));
}

API CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned isEnabled)
{
	struct { CUgraphExec hGraphExec; CUgraphNode hNode; unsigned isEnabled; } a = {hGraphExec, hNode, isEnabled};
	CALL(NVT_CBID_cuGraphNodeSetEnabled, exec_enabled_set(a.hGraphExec, a.hNode, a.isEnabled));
}

API CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned *isEnabled)
{
	struct { CUgraphExec hGraphExec; CUgraphNode hNode; unsigned *isEnabled; } a = {hGraphExec, hNode, isEnabled};
	CALL(NVT_CBID_cuGraphNodeGetEnabled, exec_enabled_get(a.hGraphExec, a.hNode, a.isEnabled));
}
