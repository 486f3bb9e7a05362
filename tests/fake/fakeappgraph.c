/*
 * fakeappgraph.c - fakeapp's CUDA graph modes (usage: fakeapp.c): a program
 * that builds a graph with the driver API, instantiates it and replays it,
 * as a CUDA application would, and reads what each kernel node ran on from
 * the fake driver. Built into both fakeapp binaries: the driver's entry
 * points come through the dlopen handle, or are linked.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeapp.h"
#include "fakecuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The driver calls the graph modes make: name, then the parameter list. */
#define DRIVER_CALLS(X)                                                                                    \
	X(cuGraphCreate, (CUgraph *, unsigned))                                                             \
	X(cuGraphDestroy, (CUgraph))                                                                        \
	X(cuGraphAddKernelNode_v2, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t,                   \
				    const NVT_KERNEL_NODE_PARAMS *))                                        \
	X(cuGraphAddChildGraphNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph))        \
	X(cuGraphAddMemAllocNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t,                    \
				   struct fakecuda_mem_alloc_params *))                                     \
	X(cuGraphConditionalHandleCreate, (uint64_t *, CUgraph, CUcontext, unsigned, unsigned))            \
	X(cuGraphAddNode_v2, (CUgraphNode *, CUgraph, const CUgraphNode *, const void *, size_t,           \
			      struct fakecuda_node_params *))                                               \
	X(cuGraphKernelNodeGetParams_v2, (CUgraphNode, NVT_KERNEL_NODE_PARAMS *))                          \
	X(cuGraphInstantiateWithFlags, (CUgraphExec *, CUgraph, unsigned long long))                       \
	X(cuGraphInstantiateWithParams, (CUgraphExec *, CUgraph, NVT_GRAPH_INSTANTIATE_PARAMS *))          \
	X(cuGraphInstantiate_v2, (CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t))                  \
	X(cuGraphUpload, (CUgraphExec, CUstream))                                                           \
	X(cuGraphLaunch, (CUgraphExec, CUstream))                                                           \
	X(cuGraphExecUpdate_v2, (CUgraphExec, CUgraph, NVT_GRAPH_EXEC_UPDATE_RESULT_INFO *))               \
	X(cuGraphExecKernelNodeSetParams_v2, (CUgraphExec, CUgraphNode, const NVT_KERNEL_NODE_PARAMS *))   \
	X(cuGraphNodeSetEnabled, (CUgraphExec, CUgraphNode, unsigned))                                      \
	X(cuGraphExecDestroy, (CUgraphExec))

#define TYPEDEF(name, params) typedef CUresult name##_ft params;
DRIVER_CALLS(TYPEDEF)
#define POINTER(name, params) static name##_ft *p_##name;
DRIVER_CALLS(POINTER)
static fakecuda_graph_kernels_fn p_kernels;
static fakecuda_graph_last_fn p_last;

#ifdef USE_DLOPEN
#include <dlfcn.h>
#define LOAD(name, params) p_##name = (name##_ft *)dlsym(fakeapp_lib, #name);
#define LOADED(name, params) &&p_##name
static void load(void)
{
	DRIVER_CALLS(LOAD)
	p_kernels = (fakecuda_graph_kernels_fn)dlsym(fakeapp_lib, "fakecuda_graph_kernels");
	p_last = (fakecuda_graph_last_fn)dlsym(fakeapp_lib, "fakecuda_graph_last");
	if (!(p_kernels && p_last DRIVER_CALLS(LOADED))) {
		fprintf(stderr, "fakeapp: graph symbol missing behind the libcuda.so.1 handle\n");
		exit(2);
	}
}
#else
#define DECLARE(name, params) name##_ft name;
DRIVER_CALLS(DECLARE)
#define LOAD(name, params) p_##name = name;
static void load(void)
{
	DRIVER_CALLS(LOAD)
	p_kernels = fakecuda_graph_kernels;
	p_last = fakecuda_graph_last;
}
#endif

/* The kernels: functions are only names to the fake. */
static char kernel_a;

#define MAX_NODES 64
#define CHILD_ARG 101
#define COND_ARG 201

struct options {
	long nodes;
	int child, cond, alloc, device, params, v2, upload;
	long setparams, update, toggle, reinst; /* every K replays; 0: never */
};

/* The application's graph and what it knows of it. */
struct app {
	struct options opt;
	CUgraph graph;
	CUgraphNode kernel[MAX_NODES]; /* the top-level kernel nodes */
	CUgraphExec exec;
	long bad;
};

static int failed(const char *what, int rc)
{
	fprintf(stderr, "fakeapp: %s failed: %d\n", what, rc);
	return 1;
}

static int add_kernel(CUgraph g, uint64_t arg, CUgraphNode *out)
{
	NVT_KERNEL_NODE_PARAMS p = {.func = &kernel_a, .gridDimX = 132, .gridDimY = 1, .gridDimZ = 1,
				    .blockDimX = 128, .blockDimY = 1, .blockDimZ = 1};
	void *args[] = {&arg};
	p.kernelParams = args; /* the driver copies the value */
	return p_cuGraphAddKernelNode_v2(out, g, NULL, 0, &p);
}

/* Builds the graph the options describe; the top-level kernel nodes' handles
 * go to kernel (may be NULL). Returns 0, or 1 with a message. */
static int build(const struct options *o, CUgraph *out, CUgraphNode *kernel)
{
	CUgraphNode node, scratch[MAX_NODES];
	CUgraph g, child;
	int rc;

	if ((rc = p_cuGraphCreate(&g, 0)))
		return failed("cuGraphCreate", rc);
	kernel = kernel ? kernel : scratch;
	for (long i = 0; i < o->nodes; i++)
		if ((rc = add_kernel(g, (uint64_t)i + 1, &kernel[i])))
			return failed("cuGraphAddKernelNode_v2", rc);
	if (o->child) {
		/* The node holds a copy: the child graph can go at once. */
		if ((rc = p_cuGraphCreate(&child, 0)) || (rc = add_kernel(child, CHILD_ARG, &node)) ||
		    (rc = p_cuGraphAddChildGraphNode(&node, g, NULL, 0, child)) || (rc = p_cuGraphDestroy(child)))
			return failed("a child graph node", rc);
	}
	if (o->cond) {
		struct fakecuda_node_params p;
		memset(&p, 0, sizeof(p));
		p.type = NVT_NODE_CONDITIONAL;
		p.u.conditional.size = 1;
		if ((rc = p_cuGraphConditionalHandleCreate(&p.u.conditional.handle, g, NULL, 1, 1)) ||
		    (rc = p_cuGraphAddNode_v2(&node, g, NULL, NULL, 0, &p)) ||
		    (rc = add_kernel(p.u.conditional.phGraph_out[0], COND_ARG, &node)))
			return failed("a conditional node", rc);
	}
	if (o->alloc) {
		struct fakecuda_mem_alloc_params p;
		memset(&p, 0, sizeof(p));
		p.bytesize = 1 << 20;
		if ((rc = p_cuGraphAddMemAllocNode(&node, g, NULL, 0, &p)))
			return failed("cuGraphAddMemAllocNode", rc);
	}
	*out = g;
	return 0;
}

static int instantiate(struct app *a)
{
	const struct options *o = &a->opt;
	unsigned long long flags = o->device ? NVT_GRAPH_INSTANTIATE_DEVICE_LAUNCH : 0;
	int rc;

	if (o->params) {
		NVT_GRAPH_INSTANTIATE_PARAMS p = {.flags = flags | NVT_GRAPH_INSTANTIATE_UPLOAD};
		if ((rc = p_cuGraphInstantiateWithParams(&a->exec, a->graph, &p)))
			return failed("cuGraphInstantiateWithParams", rc);
	} else if (o->v2) {
		if ((rc = p_cuGraphInstantiate_v2(&a->exec, a->graph, NULL, NULL, 0)))
			return failed("cuGraphInstantiate_v2", rc);
	} else if ((rc = p_cuGraphInstantiateWithFlags(&a->exec, a->graph, flags))) {
		return failed("cuGraphInstantiateWithFlags", rc);
	}
	if (o->upload && (rc = p_cuGraphUpload(a->exec, NULL)))
		return failed("cuGraphUpload", rc);
	return 0;
}

/* Writes one line per kernel node of the exec and the replay count into
 * buf; counts the nodes that hung. */
static void report(CUgraphExec exec, long replays, char *buf, size_t len, long *hung)
{
	int n = p_kernels(exec);
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++) {
		struct fakecuda_graph_node rec;
		char list[1200] = "-";
		if (p_last(exec, i, &rec))
			break;
		if (rec.ran)
			tpcs_text(rec.run.ran_tpcs, list, sizeof(list));
		*hung += rec.ran && rec.run.hung;
		used += (size_t)snprintf(buf + used, len - used, "node %d tpcs=%s\n", i, list);
	}
	if (used < len)
		snprintf(buf + used, len - used, "replays=%ld", replays);
}

/* The program's own graph operations before replay n; *skip0 says node 0
 * is disabled for it, *want0 the argument node 0 must run with. */
static void operate(struct app *a, long n, int *skip0, uint64_t *want0)
{
	const struct options *o = &a->opt;
	int rc;

	if (o->reinst && n % o->reinst == 0) {
		if ((rc = p_cuGraphExecDestroy(a->exec)) || instantiate(a))
			a->bad += rc ? failed("cuGraphExecDestroy", rc) : 1;
		*want0 = 1; /* the graph's own */
	}
	if (o->update && n % o->update == 0) {
		NVT_GRAPH_EXEC_UPDATE_RESULT_INFO info;
		CUgraph fresh;
		if (build(o, &fresh, NULL)) {
			a->bad++;
		} else {
			if ((rc = p_cuGraphExecUpdate_v2(a->exec, fresh, &info)))
				a->bad += failed("cuGraphExecUpdate_v2", rc);
			p_cuGraphDestroy(fresh);
			*want0 = 1;
		}
	}
	if (o->setparams && n % o->setparams == 0 && o->nodes) {
		NVT_KERNEL_NODE_PARAMS p;
		uint64_t arg = 1000000 + (uint64_t)n;
		void *args[] = {&arg};
		if ((rc = p_cuGraphKernelNodeGetParams_v2(a->kernel[0], &p)))
			a->bad += failed("cuGraphKernelNodeGetParams_v2", rc);
		p.kernelParams = args; /* the same function, a new argument */
		if ((rc = p_cuGraphExecKernelNodeSetParams_v2(a->exec, a->kernel[0], &p)))
			a->bad += failed("cuGraphExecKernelNodeSetParams_v2", rc);
		else
			*want0 = arg;
	}
	*skip0 = o->toggle && n % o->toggle == 0 && o->nodes;
	if (*skip0 && (rc = p_cuGraphNodeSetEnabled(a->exec, a->kernel[0], 0)))
		a->bad += failed("cuGraphNodeSetEnabled", rc);
}

/* Checks node 0's run in the replay just made. */
static void check_node0(struct app *a, int skip0, uint64_t want0)
{
	struct fakecuda_graph_node rec;
	int rc;

	if (!a->opt.nodes || p_last(a->exec, 0, &rec))
		return;
	if (skip0) {
		if (rec.ran && a->bad++ < 5)
			fprintf(stderr, "fakeapp: node 0 ran while disabled\n");
		if ((rc = p_cuGraphNodeSetEnabled(a->exec, a->kernel[0], 1)))
			a->bad += failed("cuGraphNodeSetEnabled", rc);
	} else if ((!rec.ran || rec.arg != want0) && a->bad++ < 5) {
		fprintf(stderr, "fakeapp: node 0 ran=%d with argument %llu, not %llu\n", rec.ran,
			(unsigned long long)rec.arg, (unsigned long long)want0);
	}
}

static int parse_count(const char *text, long max, long *out)
{
	char *end;
	errno = 0;
	*out = strtol(text, &end, 10);
	return end == text || *end || errno || *out < 0 || *out > max ? -1 : 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct {
		const char *name;
		size_t flag, every; /* offsets in struct options, or 0 */
	} known[] = {
		{"child", offsetof(struct options, child), 0},
		{"cond", offsetof(struct options, cond), 0},
		{"alloc", offsetof(struct options, alloc), 0},
		{"device", offsetof(struct options, device), 0},
		{"params", offsetof(struct options, params), 0},
		{"v2", offsetof(struct options, v2), 0},
		{"upload", offsetof(struct options, upload), 0},
		{"setparams=", 0, offsetof(struct options, setparams)},
		{"update=", 0, offsetof(struct options, update)},
		{"toggle=", 0, offsetof(struct options, toggle)},
		{"reinst=", 0, offsetof(struct options, reinst)},
	};
	for (int i = 0; i < argc; i++) {
		size_t k, len;
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
			len = strlen(known[k].name);
			if (known[k].flag && !strcmp(argv[i], known[k].name)) {
				*(int *)((char *)o + known[k].flag) = 1;
				break;
			}
			if (known[k].every && !strncmp(argv[i], known[k].name, len)) {
				long *every = (long *)((char *)o + known[k].every);
				if (parse_count(argv[i] + len, 1000000, every) || !*every)
					return -1;
				break;
			}
		}
		if (k == sizeof(known) / sizeof(known[0]))
			return -1;
	}
	return 0;
}

int graph_main(int argc, char **argv)
{
	int once = !strcmp(argv[0], "graph-once"), first = once ? 2 : 4, rc;
	struct app a;
	char text[16384];
	long replays = 0, hung = 0;
	uint64_t want0 = 1;
	struct timespec pause = {0, 200000};
	const char *each = getenv("FAKEAPP_STAMP_LAUNCHES");
	int stamp_each = each && !strcmp(each, "1"); /* a stamp per replay */

	memset(&a, 0, sizeof(a));
	if (argc < first || parse_count(argv[1], MAX_NODES, &a.opt.nodes) ||
	    parse_options(argc - first, argv + first, &a.opt)) {
		fprintf(stderr, "fakeapp: bad graph arguments\n");
		return 2;
	}
	load();
	if (build(&a.opt, &a.graph, a.kernel) || instantiate(&a))
		return 2;
	if (once) {
		rc = p_cuGraphLaunch(a.exec, NULL);
		report(a.exec, 1, text, sizeof(text), &hung);
		printf("%s\n", text);
		return rc || hung ? 1 : 0;
	}
	while (!exists(argv[2])) {
		int skip0 = 0;
		replays++;
		operate(&a, replays, &skip0, &want0);
		if ((rc = p_cuGraphLaunch(a.exec, NULL)) && rc != NVT_CUDA_ERROR_LAUNCH_TIMEOUT)
			a.bad += failed("cuGraphLaunch", rc);
		check_node0(&a, skip0, want0);
		report(a.exec, replays, text, sizeof(text), &hung);
		write_state(argv[3], text);
		if (stamp_each)
			stamp("launch");
		nanosleep(&pause, NULL);
	}
	printf("replays=%ld hung=%ld bad=%ld\n", replays, hung, a.bad);
	p_cuGraphExecDestroy(a.exec);
	p_cuGraphDestroy(a.graph);
	return hung || a.bad ? 1 : 0;
}
