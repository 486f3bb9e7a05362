/*
 * fakegraphcheck.c - scenarios that test the fake driver's CUDA graphs
 * against what the real driver did on an H100 (tests/gpu/probes/graphs),
 * with the test subscriber (testsub.c) LD_PRELOADed and the fake's identity
 * chip. Each prints what it saw, one fact a line; tests/e2e/fakegraph.sh
 * holds what they must print.
 * Over 500 lines on purpose: one program of scenarios, a function each, on
 * the graph-building and printing helpers they share.
 *
 *   fakegraphcheck mask|rebuild|enable|instantiate|api|swap|clone|hang
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakecuda.h"
#include "testsub.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cuInit(unsigned);
CUresult cuGraphCreate(CUgraph *, unsigned);
CUresult cuGraphDestroy(CUgraph);
CUresult cuGraphAddKernelNode_v2(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
				 const NVT_KERNEL_NODE_PARAMS *);
CUresult cuGraphAddChildGraphNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph);
CUresult cuGraphAddEmptyNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
CUresult cuGraphAddMemAllocNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
				struct fakecuda_mem_alloc_params *);
CUresult cuGraphAddNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, struct fakecuda_node_params *);
CUresult cuGraphConditionalHandleCreate(uint64_t *, CUgraph, CUcontext, unsigned, unsigned);
CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode, CUgraph *);
CUresult cuGraphClone(CUgraph *, CUgraph);
CUresult cuGraphGetNodes(CUgraph, CUgraphNode *, size_t *);
CUresult cuGraphNodeGetType(CUgraphNode, int *);
CUresult cuGraphNodeFindInClone(CUgraphNode *, CUgraphNode, CUgraph);
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode, NVT_KERNEL_NODE_PARAMS *);
CUresult cuGraphKernelNodeSetParams(CUgraphNode, const struct fakecuda_kernel_node_params_v1 *);
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode, const NVT_KERNEL_NODE_PARAMS *);
CUresult cuGraphInstantiate(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
CUresult cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *, CUgraph, unsigned long long);
CUresult cuGraphInstantiateWithParams(CUgraphExec *, CUgraph, NVT_GRAPH_INSTANTIATE_PARAMS *);
CUresult cuGraphUpload(CUgraphExec, CUstream);
CUresult cuGraphLaunch(CUgraphExec, CUstream);
CUresult cuGraphExecDestroy(CUgraphExec);
CUresult cuGraphExecUpdate(CUgraphExec, CUgraph, CUgraphNode *, int *);
CUresult cuGraphExecUpdate_v2(CUgraphExec, CUgraph, NVT_GRAPH_EXEC_UPDATE_RESULT_INFO *);
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec, CUgraphNode, const struct fakecuda_kernel_node_params_v1 *);
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec, CUgraphNode, const NVT_KERNEL_NODE_PARAMS *);
CUresult cuGraphExecNodeSetParams(CUgraphExec, CUgraphNode, struct fakecuda_node_params *);
CUresult cuGraphNodeSetEnabled(CUgraphExec, CUgraphNode, unsigned);
CUresult cuGraphNodeGetEnabled(CUgraphExec, CUgraphNode, unsigned *);

/* The test subscriber's functions. */
static struct {
	testsub_set_mask_fn set_mask;
	testsub_launches_fn launches;
	testsub_rewrite_fn rewrite;
	testsub_enable_fn enable;
	testsub_swap_fn swap;
	testsub_swapped_fn swapped;
	testsub_nested_fn nested;
	testsub_count_fn count;
	testsub_last_fn last;
} sub;

/* Kernels: functions are only names to the fake. */
static char fn_a, fn_b, fn_c;

/* What a test graph holds: top-level kernels (function, shared memory and
 * argument each), then optionally a child graph of one kernel and a
 * conditional whose body holds one kernel. */
struct shape {
	int kernels;
	void *fn[8];
	unsigned smem[8];
	uint64_t arg[8];
	int child, cond;
	void *child_fn;
	int empty_at; /* node index that is an empty node instead of a kernel; -1: none */
};

static void must(int rc, const char *what)
{
	if (rc) {
		printf("FAILED: %s returned %d\n", what, rc);
		exit(1);
	}
}

static CUgraphNode add_kernel(CUgraph g, void *fn, unsigned smem, uint64_t arg)
{
	NVT_KERNEL_NODE_PARAMS p = {.func = fn, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
				    .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1, .sharedMemBytes = smem};
	void *args[] = {&arg};
	CUgraphNode n;
	p.kernelParams = args;
	must(cuGraphAddKernelNode_v2(&n, g, NULL, 0, &p), "cuGraphAddKernelNode_v2");
	return n;
}

/* Builds a graph of a shape; its top-level nodes go to top. */
static CUgraph build(const struct shape *s, CUgraphNode *top)
{
	CUgraph g, c;
	CUgraphNode scratch[16];
	int k = 0;

	top = top ? top : scratch;
	must(cuGraphCreate(&g, 0), "cuGraphCreate");
	for (int i = 0; i < s->kernels; i++) {
		if (i == s->empty_at)
			must(cuGraphAddEmptyNode(&top[k++], g, NULL, 0), "cuGraphAddEmptyNode");
		else
			top[k++] = add_kernel(g, s->fn[i], s->smem[i], s->arg[i]);
	}
	if (s->child) {
		must(cuGraphCreate(&c, 0), "cuGraphCreate");
		add_kernel(c, s->child_fn ? s->child_fn : &fn_a, 0, 101);
		must(cuGraphAddChildGraphNode(&top[k++], g, NULL, 0, c), "cuGraphAddChildGraphNode");
		must(cuGraphDestroy(c), "cuGraphDestroy");
	}
	if (s->cond) {
		struct fakecuda_node_params p;
		memset(&p, 0, sizeof(p));
		p.type = NVT_NODE_CONDITIONAL;
		p.u.conditional.size = 1;
		must(cuGraphConditionalHandleCreate(&p.u.conditional.handle, g, NULL, 1, 0), "handle");
		must(cuGraphAddNode(&top[k++], g, NULL, 0, &p), "cuGraphAddNode");
		add_kernel(p.u.conditional.phGraph_out[0], &fn_a, 0, 201);
	}
	return g;
}

static struct shape basic(int kernels, int child, int cond)
{
	struct shape s = {.kernels = kernels, .child = child, .cond = cond, .empty_at = -1};
	for (int i = 0; i < kernels; i++) {
		s.fn[i] = &fn_a;
		s.arg[i] = (uint64_t)i + 1;
	}
	return s;
}

/* Prints "LABEL rc=R callbacks=C" and the exec's kernel nodes: TPCs ("-":
 * did not run), TMD builds and arguments. */
static void show(const char *label, int rc, CUgraphExec x)
{
	char tpcs[1024] = "", builds[256] = "", args[256] = "", list[512];
	int n = fakecuda_graph_kernels(x);

	for (int i = 0; i < n; i++) {
		struct fakecuda_graph_node r;
		const char *sep = i ? "|" : "";
		fakecuda_graph_last(x, i, &r);
		list[0] = '\0';
		for (int t = 0, first = 1; t < 256 && r.ran; t++) {
			int end = t;
			if (!((r.run.ran_tpcs[t / 64] >> (t % 64)) & 1))
				continue;
			while (end + 1 < 256 && ((r.run.ran_tpcs[(end + 1) / 64] >> ((end + 1) % 64)) & 1))
				end++;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), end > t ? "%s%d-%d" : "%s%d",
				 first ? "" : ",", t, end);
			first = 0;
			t = end;
		}
		snprintf(tpcs + strlen(tpcs), sizeof(tpcs) - strlen(tpcs), "%s%s", sep, r.ran ? list : "-");
		snprintf(builds + strlen(builds), sizeof(builds) - strlen(builds), "%s%u", sep, r.builds);
		snprintf(args + strlen(args), sizeof(args) - strlen(args), "%s%llu", sep,
			 (unsigned long long)r.arg);
	}
	printf("%s rc=%d callbacks=%u tpcs=%s builds=%s args=%s\n", label, rc, sub.launches(), tpcs,
	       builds, args);
}

/* (a) Replays run the mask written at the first upload; later writes to the
 * host TMD change nothing; callbacks fire once per kernel node. */
static void mask(void)
{
	struct shape s = basic(2, 1, 1);
	CUgraph g = build(&s, NULL);
	CUgraphExec x, y;
	int rc;

	must(cuGraphInstantiateWithFlags(&x, g, 0), "instantiate");
	printf("instantiate callbacks=%u\n", sub.launches());
	rc = cuGraphUpload(x, NULL);
	show("upload", rc, x);
	rc = cuGraphUpload(x, NULL);
	show("upload-again", rc, x);
	for (int i = 0; i < 5; i++)
		rc |= cuGraphLaunch(x, NULL);
	show("launch-x5", rc, x);
	sub.set_mask(0x3);
	printf("rewrote %d TMDs\n", sub.rewrite(0x3));
	rc = cuGraphLaunch(x, NULL);
	show("launch-after-rewrite", rc, x);
	rc = cuGraphUpload(x, NULL) | cuGraphLaunch(x, NULL);
	show("upload-launch-after-rewrite", rc, x);
	must(cuGraphInstantiateWithFlags(&y, g, 0), "instantiate");
	rc = cuGraphLaunch(y, NULL);
	show("second-exec", rc, y);
	rc = cuGraphLaunch(x, NULL);
	show("first-exec", rc, x);
}

/* (a) Rebuild rule: another function or shared-memory size rebuilds the node
 * (one callback, the mask of then); identical or argument-only changes keep
 * it; an exec update needs the same shape. */
static void rebuild(void)
{
	struct shape s = basic(3, 1, 0);
	CUgraphNode top[8], err;
	CUgraph g = build(&s, top), h;
	CUgraphExec x;
	NVT_KERNEL_NODE_PARAMS p;
	NVT_GRAPH_EXEC_UPDATE_RESULT_INFO info;
	struct fakecuda_node_params np;
	struct fakecuda_kernel_node_params_v1 v1;
	uint64_t arg;
	void *args[] = {&arg};
	int rc, result;

	must(cuGraphInstantiateWithFlags(&x, g, 0), "instantiate");
	rc = cuGraphLaunch(x, NULL);
	show("start", rc, x);
	sub.set_mask(0x3);
	must(cuGraphKernelNodeGetParams_v2(top[0], &p), "get");
	arg = 11;
	p.kernelParams = args;
	p.gridDimX = 64;
	rc = cuGraphExecKernelNodeSetParams_v2(x, top[0], &p) | cuGraphLaunch(x, NULL);
	show("same-function", rc, x);
	memset(&np, 0, sizeof(np));
	np.type = NVT_NODE_KERNEL;
	must(cuGraphKernelNodeGetParams_v2(top[1], &np.u.kernel), "get");
	arg = 22;
	np.u.kernel.kernelParams = args;
	rc = cuGraphExecNodeSetParams(x, top[1], &np) | cuGraphLaunch(x, NULL);
	show("node-set-params", rc, x);
	h = build(&s, NULL);
	rc = cuGraphExecUpdate_v2(x, h, &info) | cuGraphLaunch(x, NULL);
	show("update-identical", rc, x);
	cuGraphDestroy(h);
	must(cuGraphKernelNodeGetParams_v2(top[0], &p), "get");
	p.func = &fn_b;
	rc = cuGraphExecKernelNodeSetParams_v2(x, top[0], &p) | cuGraphLaunch(x, NULL);
	show("new-function", rc, x);
	must(cuGraphKernelNodeGetParams_v2(top[1], &p), "get");
	memcpy(&v1, &p, sizeof(v1)); /* v1 is v2's head */
	v1.sharedMemBytes = 1024;
	rc = cuGraphExecKernelNodeSetParams(x, top[1], &v1) | cuGraphLaunch(x, NULL);
	show("new-smem-v1", rc, x);
	sub.set_mask(0xc);
	must(cuGraphKernelNodeGetParams_v2(top[2], &p), "get");
	p.func = &fn_b;
	rc = cuGraphExecKernelNodeSetParams_v2(x, top[2], &p);
	p.func = &fn_a;
	rc |= cuGraphExecKernelNodeSetParams_v2(x, top[2], &p) | cuGraphLaunch(x, NULL);
	show("changed-and-back", rc, x);
	/* The exec's state now, but for the child's kernel. */
	s.fn[0] = &fn_b;
	s.smem[1] = 1024;
	s.child_fn = &fn_c;
	h = build(&s, NULL);
	rc = cuGraphExecUpdate_v2(x, h, &info) | cuGraphLaunch(x, NULL);
	show("update-child-function", rc, x);
	cuGraphDestroy(h);
	/* Rejected updates change nothing: not the arguments, no rebuild. */
	sub.set_mask(0x30);
	s.fn[0] = &fn_c;
	s.arg[0] = 7, s.arg[1] = 8, s.arg[2] = 9;
	s.kernels = 4;
	s.fn[3] = &fn_a;
	h = build(&s, NULL);
	rc = cuGraphExecUpdate_v2(x, h, &info);
	printf("update-topology rc=%d result=%d\n", rc, info.result);
	cuGraphDestroy(h);
	s.kernels = 3;
	s.empty_at = 1;
	h = build(&s, NULL);
	rc = cuGraphExecUpdate(x, h, &err, &result);
	printf("update-type-v1 rc=%d result=%d error-node=%s\n", rc, result, err ? "set" : "NULL");
	cuGraphDestroy(h);
	rc = cuGraphUpload(x, NULL) | cuGraphLaunch(x, NULL);
	show("after-failed-updates", rc, x);
	s.empty_at = -1;
	s.child = 0;
	h = build(&s, NULL);
	rc = cuGraphExecUpdate_v2(x, h, &info);
	printf("update-without-child rc=%d result=%d\n", rc, info.result);
	cuGraphDestroy(h);
	/* The graph's own nodes were never changed by the exec's. */
	must(cuGraphKernelNodeGetParams_v2(top[0], &p), "get");
	printf("graph-node-0 function=%s arg=%llu\n", p.func == &fn_a ? "a" : "other",
	       (unsigned long long)*(uint64_t *)p.kernelParams[0]);
}

/* Disabled nodes do not run, and stay disabled across an exec update. */
static void enable(void)
{
	struct shape s = basic(2, 1, 0);
	CUgraphNode top[4];
	CUgraph g = build(&s, top), h;
	CUgraphExec x;
	NVT_GRAPH_EXEC_UPDATE_RESULT_INFO info;
	unsigned on = 9;
	int rc;

	must(cuGraphInstantiateWithFlags(&x, g, 0), "instantiate");
	rc = cuGraphNodeSetEnabled(x, top[0], 0) | cuGraphLaunch(x, NULL);
	show("disabled", rc, x);
	h = build(&s, NULL);
	rc = cuGraphExecUpdate_v2(x, h, &info) | cuGraphLaunch(x, NULL);
	show("after-update", rc, x);
	rc = cuGraphNodeGetEnabled(x, top[0], &on);
	printf("get-enabled rc=%d enabled=%u\n", rc, on);
	rc = cuGraphNodeSetEnabled(x, top[0], 1) | cuGraphLaunch(x, NULL);
	show("enabled", rc, x);
	printf("child-node set-enabled rc=%d\n", cuGraphNodeSetEnabled(x, top[2], 0));
	printf("other-graph's node set-enabled rc=%d\n", cuGraphNodeSetEnabled(x, (CUgraphNode)&fn_a, 0));
}

/* Every way to instantiate; the upload flag uploads at once. */
static void instantiate(void)
{
	struct shape s = basic(2, 0, 0);
	CUgraph g = build(&s, NULL);
	CUgraphExec x;
	CUgraphNode err = (CUgraphNode)&fn_a;
	NVT_GRAPH_INSTANTIATE_PARAMS ip = {.flags = 2 | 4, .result_out = 7};
	char log[8] = "junk";
	int rc;

	rc = cuGraphInstantiateWithParams(&x, g, &ip);
	printf("with-params-upload rc=%d result=%d callbacks=%u\n", rc, ip.result_out, sub.launches());
	ip.flags = 0;
	rc = cuGraphInstantiateWithParams(&x, g, &ip);
	printf("with-params rc=%d result=%d callbacks=%u\n", rc, ip.result_out, sub.launches());
	rc = cuGraphLaunch(x, NULL);
	show("launch", rc, x);
	rc = cuGraphInstantiate(&x, g, &err, log, sizeof(log));
	printf("v1 rc=%d error-node=%p log='%s' callbacks=%u\n", rc, err, log, sub.launches());
	rc = cuGraphInstantiate_v2(&x, g, NULL, NULL, 0);
	printf("v2 rc=%d callbacks=%u\n", rc, sub.launches());
	printf("with-flags device rc=%d\n", cuGraphInstantiateWithFlags(&x, g, 4));
	printf("with-flags upload rc=%d\n", cuGraphInstantiateWithFlags(&x, g, 2));
	printf("with-flags auto-free+device rc=%d\n", cuGraphInstantiateWithFlags(&x, g, 1 | 4));
	printf("with-flags unknown rc=%d\n", cuGraphInstantiateWithFlags(&x, g, 16));
	printf("bad graph rc=%d\n", cuGraphInstantiateWithFlags(&x, (CUgraph)&fn_a, 0));
	printf("callbacks=%u\n", sub.launches());
}

/* (b) The driver-API block, and the domains the table takes. */
static void api(void)
{
	struct shape s = basic(1, 0, 0);
	CUgraph g = build(&s, NULL);
	CUgraphExec x, y;
	struct testsub_api a;
	int rc;

	/* Domain 1 is none the table takes; 807 is no call the fake makes. */
	printf("enable %d/%d rc=%d\n", NVT_CB_DOMAIN_API, NVT_CBID_cuGraphLaunch,
	       sub.enable(NVT_CB_DOMAIN_API, NVT_CBID_cuGraphLaunch, 1));
	printf("enable 1/%d rc=%d\n", NVT_CBID_cuGraphLaunch, sub.enable(1, NVT_CBID_cuGraphLaunch, 1));
	printf("enable %d/807 rc=%d\n", NVT_CB_DOMAIN_API, sub.enable(NVT_CB_DOMAIN_API, 807, 1));
	printf("enable %d/%d rc=%d\n", NVT_CB_DOMAIN_LAUNCH, NVT_CB_ID_LAUNCH,
	       sub.enable(NVT_CB_DOMAIN_LAUNCH, NVT_CB_ID_LAUNCH, 1));
	must(cuGraphInstantiateWithFlags(&x, g, 0), "instantiate");
	sub.last(&a);
	printf("uninteresting calls=%d\n", a.calls);
	rc = cuGraphLaunch(x, (CUstream)0x5);
	sub.last(&a);
	printf("launch rc=%d calls=%d cbid=%d size=%#x,%#x id=%#llx,%#llx result=%d,%d same-result=%d "
	       "same-args=%d args=%s,%#llx\n",
	       rc, a.calls, a.cbid, a.size[0], a.size[1], (unsigned long long)a.id[0],
	       (unsigned long long)a.id[1], a.result[0], a.result[1], a.result_at[0] == a.result_at[1],
	       a.args_at[0] == a.args_at[1], a.args[0][0] == (uintptr_t)x ? "exec" : "other",
	       (unsigned long long)a.args[0][1]);
	for (int w = 0; w < 13; w++)
		if (w != 0 && w != 5 && w != 7 && w != 10 && a.block[0][w] >> 32 != 0x6a756e6b)
			printf("word %d is no junk: %#llx\n", w, (unsigned long long)a.block[0][w]);
	rc = cuGraphLaunch((CUgraphExec)&fn_a, NULL);
	sub.last(&a);
	printf("bad launch rc=%d result=%d,%d\n", rc, a.result[0], a.result[1]);
	printf("enable %d/%d rc=%d\n", NVT_CB_DOMAIN_API, NVT_CBID_cuGraphInstantiateWithFlags,
	       sub.enable(NVT_CB_DOMAIN_API, NVT_CBID_cuGraphInstantiateWithFlags, 1));
	rc = cuGraphInstantiateWithFlags(&y, g, 4);
	sub.last(&a);
	printf("instantiate rc=%d calls=%d cbid=%d args=%s,%s,%llu out=%s\n", rc, a.calls, a.cbid,
	       a.args[0][0] == (uintptr_t)&y ? "&exec" : "other", a.args[0][1] == (uintptr_t)g ? "graph" : "other",
	       (unsigned long long)a.args[0][2], a.args[1][0] == (uintptr_t)&y && y ? "set" : "unset");
	printf("disable %d/%d rc=%d\n", NVT_CB_DOMAIN_API, NVT_CBID_cuGraphLaunch,
	       sub.enable(NVT_CB_DOMAIN_API, NVT_CBID_cuGraphLaunch, 0));
	rc = cuGraphLaunch(x, NULL);
	sub.last(&a);
	printf("launch after disable rc=%d calls=%d\n", rc, a.calls);
}

/* (b) A callback that changes cuGraphLaunch's exec on entry launches the
 * other one; a callback may call the driver. */
static void swap(void)
{
	struct shape sa = basic(1, 0, 0), sb = basic(1, 0, 0);
	CUgraphExec a, b;
	struct fakecuda_graph_node ra, rb;
	int rc;

	sb.arg[0] = 2;
	must(cuGraphInstantiateWithFlags(&a, build(&sa, NULL), 0), "instantiate");
	must(cuGraphInstantiateWithFlags(&b, build(&sb, NULL), 0), "instantiate");
	sub.enable(NVT_CB_DOMAIN_API, NVT_CBID_cuGraphLaunch, 1);
	sub.swap(a, b);
	rc = cuGraphLaunch(a, NULL);
	fakecuda_graph_last(a, 0, &ra);
	fakecuda_graph_last(b, 0, &rb);
	printf("swapped rc=%d swaps=%d a.replays=%u b.replays=%u b.arg=%llu\n", rc, sub.swapped(), ra.replays,
	       rb.replays, (unsigned long long)rb.arg);
	sub.swap(NULL, NULL);
	rc = cuGraphLaunch(a, NULL);
	fakecuda_graph_last(a, 0, &ra);
	fakecuda_graph_last(b, 0, &rb);
	printf("not swapped rc=%d a.replays=%u b.replays=%u a.arg=%llu\n", rc, ra.replays, rb.replays,
	       (unsigned long long)ra.arg);
	sub.enable(NVT_CB_DOMAIN_API, NVT_CBID_cuGraphUpload, 1);
	sub.nested(1);
	rc = cuGraphLaunch(a, NULL);
	/* cuGraphLaunch: entry and return of three launches; cuGraphUpload: of the nested upload. */
	printf("nested rc=%d launch-callbacks=%u upload-callbacks=%u\n", rc, sub.count(NVT_CBID_cuGraphLaunch),
	       sub.count(NVT_CBID_cuGraphUpload));
}

/* (c) Cloning; child graph copies; node lists. */
static void clone(void)
{
	struct shape s = basic(2, 1, 0);
	CUgraphNode top[4], nodes[5], found, inner[2];
	CUgraph g = build(&s, top), c, child, a;
	CUgraphExec x;
	struct fakecuda_mem_alloc_params mp;
	NVT_KERNEL_NODE_PARAMS p;
	struct fakecuda_graph_node r;
	size_t n = 0;
	int t0, t1, t2, rc, rc2;
	uint64_t arg = 9;
	void *args[] = {&arg};

	rc = cuGraphGetNodes(g, NULL, &n);
	printf("get-nodes count rc=%d n=%zu\n", rc, n);
	n = 5;
	memset(nodes, 0xff, sizeof(nodes));
	rc = cuGraphGetNodes(g, nodes, &n);
	printf("get-nodes rc=%d n=%zu order=%d tail=%s\n", rc, n,
	       nodes[0] == top[0] && nodes[1] == top[1] && nodes[2] == top[2], !nodes[3] && !nodes[4] ? "NULL" : "set");
	printf("clone rc=%d\n", cuGraphClone(&c, g));
	n = 3;
	must(cuGraphGetNodes(c, nodes, &n), "clone's nodes");
	must(cuGraphNodeGetType(nodes[0], &t0) | cuGraphNodeGetType(nodes[1], &t1) | cuGraphNodeGetType(nodes[2], &t2),
	     "types");
	printf("clone n=%zu types=%d,%d,%d new-nodes=%d\n", n, t0, t1, t2, nodes[0] != top[0]);
	rc = cuGraphNodeFindInClone(&found, top[1], c);
	printf("find-in-clone rc=%d found=%d\n", rc, found == nodes[1]);
	must(cuGraphChildGraphNodeGetGraph(top[2], &child), "child of original");
	n = 2;
	must(cuGraphGetNodes(child, inner, &n), "child nodes");
	printf("find-in-clone child kernel rc=%d\n", cuGraphNodeFindInClone(&found, inner[0], c));
	printf("find-in-clone of a clone's node rc=%d\n", cuGraphNodeFindInClone(&found, nodes[0], g));
	must(cuGraphKernelNodeGetParams_v2(nodes[0], &p), "get");
	p.kernelParams = args;
	must(cuGraphKernelNodeSetParams_v2(nodes[0], &p), "set");
	must(cuGraphKernelNodeGetParams_v2(top[0], &p), "get");
	printf("original node 0 after the clone's changed arg=%llu\n", (unsigned long long)*(uint64_t *)p.kernelParams[0]);
	/* The child graph of a node is the node's: changing it changes the node. */
	{
		struct fakecuda_kernel_node_params_v1 v1;
		arg = 303;
		memcpy(&v1, &p, sizeof(v1));
		v1.kernelParams = args;
		must(cuGraphKernelNodeSetParams(inner[0], &v1), "set v1");
	}
	must(cuGraphInstantiateWithFlags(&x, g, 0), "instantiate");
	must(cuGraphLaunch(x, NULL), "launch");
	fakecuda_graph_last(x, 2, &r);
	printf("child kernel arg=%llu\n", (unsigned long long)r.arg);
	printf("destroy a node's graph rc=%d\n", cuGraphDestroy(child));
	memset(&mp, 0, sizeof(mp));
	mp.bytesize = 4096;
	must(cuGraphCreate(&a, 0), "create");
	add_kernel(a, &fn_a, 0, 1);
	rc = cuGraphAddMemAllocNode(&found, a, NULL, 0, &mp);
	printf("mem-alloc node rc=%d dptr=%s\n", rc, mp.dptr ? "set" : "0");
	cuGraphNodeGetType(found, &t0);
	printf("mem-alloc type=%d\n", t0);
	printf("clone mem-alloc graph rc=%d\n", cuGraphClone(&c, a));
	printf("child of mem-alloc graph rc=%d\n", cuGraphAddChildGraphNode(&found, g, NULL, 0, a));
	must(cuGraphInstantiateWithFlags(&x, a, 0), "instantiate");
	rc = cuGraphLaunch(x, NULL);
	printf("mem-alloc exec launch rc=%d kernels=%d\n", rc, fakecuda_graph_kernels(x));
	rc = cuGraphDestroy(a);
	rc2 = cuGraphDestroy(a);
	printf("destroy rc=%d, again rc=%d\n", rc, rc2);
	printf("destroyed graph's node type rc=%d\n", cuGraphNodeGetType(found, &t0));
	rc = cuGraphExecDestroy(x);
	rc2 = cuGraphExecDestroy(x);
	printf("exec destroy rc=%d, again rc=%d\n", rc, rc2);
}

/* A mask without a working TPC hangs the node, as a launch. */
static void hang(void)
{
	struct shape s = basic(2, 0, 0);
	CUgraphExec x;
	int rc;
	sub.set_mask(0);
	must(cuGraphInstantiateWithFlags(&x, build(&s, NULL), 0), "instantiate");
	rc = cuGraphLaunch(x, NULL);
	fflush(stderr);
	show("hang", rc, x);
}

int main(int argc, char **argv)
{
#define SYM(field, name) sub.field = (void *)dlsym(RTLD_DEFAULT, name)
	SYM(set_mask, "testsub_set_mask");
	SYM(launches, "testsub_launches");
	SYM(rewrite, "testsub_rewrite");
	SYM(enable, "testsub_enable");
	SYM(swap, "testsub_swap");
	SYM(swapped, "testsub_swapped");
	SYM(nested, "testsub_nested");
	SYM(count, "testsub_count");
	SYM(last, "testsub_last");
	if (!sub.set_mask || !sub.last) {
		fprintf(stderr, "fakegraphcheck: run with LD_PRELOAD=testsub.so\n");
		return 2;
	}
	if (argc != 2 || cuInit(0)) {
		fprintf(stderr, "usage: fakegraphcheck SCENARIO (cuInit must work)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "mask"))
		mask();
	else if (!strcmp(argv[1], "rebuild"))
		rebuild();
	else if (!strcmp(argv[1], "enable"))
		enable();
	else if (!strcmp(argv[1], "instantiate"))
		instantiate();
	else if (!strcmp(argv[1], "api"))
		api();
	else if (!strcmp(argv[1], "swap"))
		swap();
	else if (!strcmp(argv[1], "clone"))
		clone();
	else if (!strcmp(argv[1], "hang"))
		hang();
	else
		return 2;
	return 0;
}
