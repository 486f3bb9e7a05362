/*
 * fakeexec.c - executable graphs in the fake driver, with the device model
 * the real driver showed on an H100 (driver 580.159.04, 2026-11-22;
 * tests/gpu/probes/graphs, gapp.cu and refresh.cu): a kernel node's TMD is
 * built, shown to the launch callbacks and copied to the device once, at the
 * exec's first upload; replays run that copy; a node is built again only
 * after it got another function or shared-memory size. See fakecuda.h.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUgraphExecUpdateResult (cuda.h). */
#define UPDATE_TOPOLOGY_CHANGED 2
#define UPDATE_NODE_TYPE_CHANGED 3

/* One node of an exec: an exec holds its own copy of the graph. */
struct xnode {
	int type;
	const struct gnode *origin; /* the node it was instantiated from */
	int enabled;
	NVT_KERNEL_NODE_PARAMS kp;  /* kernel: kernelParams and extra unused */
	uint64_t arg;
	int built, stale;           /* it has a device copy; the copy must be built again */
	int callbacks, stray, ran;
	unsigned builds;
	uint8_t host_tmd[TMD_BYTES]; /* what the callbacks saw; valid while the exec lives */
	uint8_t dev_tmd[TMD_BYTES];  /* the device copy every replay runs */
	struct fakecuda_launch run;
	int n_body;                  /* child graph or conditional body */
	struct xnode *body;
};

struct exec {
	struct exec *next; /* all live execs */
	int device;        /* the current one at instantiation */
	uint64_t flags;
	unsigned replays;
	int n;
	struct xnode *node;
};

static struct exec *execs;

static struct exec *find_exec(CUgraphExec h)
{
	for (struct exec *x = execs; x && h; x = x->next)
		if (x == h)
			return x;
	return NULL;
}

/* The exec's node instantiated from origin, at any depth. */
static struct xnode *find_xnode(struct xnode *xn, int n, const struct gnode *origin)
{
	for (int i = 0; i < n; i++) {
		struct xnode *hit = xn[i].origin == origin ? &xn[i] : find_xnode(xn[i].body, xn[i].n_body, origin);
		if (hit)
			return hit;
	}
	return NULL;
}

/* Kernel node *index of a tree, depth first in creation order; counts *index down. */
static struct xnode *kernel_at(struct xnode *xn, int n, int *index)
{
	for (int i = 0; i < n; i++) {
		struct xnode *hit;
		if (xn[i].type == NVT_NODE_KERNEL && (*index)-- == 0)
			return &xn[i];
		if ((hit = kernel_at(xn[i].body, xn[i].n_body, index)))
			return hit;
	}
	return NULL;
}

static int count_kernels(const struct xnode *xn, int n)
{
	int count = 0;
	for (int i = 0; i < n; i++)
		count += (xn[i].type == NVT_NODE_KERNEL) + count_kernels(xn[i].body, xn[i].n_body);
	return count;
}

static void free_xnodes(struct xnode *xn, int n)
{
	for (int i = 0; i < n; i++)
		free_xnodes(xn[i].body, xn[i].n_body);
	free(xn);
}

/* Copies a graph's nodes, at any depth, into an exec's. */
static int copy_nodes(const struct graph *g, struct xnode **out, int *n)
{
	struct xnode *xn = calloc((size_t)g->n + 1, sizeof(*xn));

	if (!xn)
		return E_OUT_OF_MEMORY;
	for (int i = 0; i < g->n; i++) {
		const struct gnode *s = g->node[i];
		xn[i].type = s->type;
		xn[i].origin = s;
		xn[i].enabled = 1;
		xn[i].kp = s->kp;
		xn[i].kp.kernelParams = NULL;
		xn[i].arg = s->arg;
		if (s->body && copy_nodes(s->body, &xn[i].body, &xn[i].n_body)) {
			free_xnodes(xn, i);
			return E_OUT_OF_MEMORY;
		}
	}
	*out = xn;
	*n = g->n;
	return 0;
}

/* Builds a kernel node's TMD as for a launch on the exec's device, shows it
 * to the launch callbacks, and copies it to the device. */
static void build(const struct exec *x, struct xnode *k)
{
	uint8_t before[TMD_BYTES];

	fake_build_tmd(x->device, 1, k->host_tmd);
	memcpy(before, k->host_tmd, TMD_BYTES);
	k->callbacks = fake_notify_launch(x->device, k->host_tmd);
	k->stray = fake_stray_bits(x->device, before, k->host_tmd);
	memcpy(k->dev_tmd, k->host_tmd, TMD_BYTES);
	k->built = 1;
	k->stale = 0;
	k->builds++;
}

/* An upload: each kernel node without a current device copy gets one. */
static void upload(const struct exec *x, struct xnode *xn, int n)
{
	for (int i = 0; i < n; i++) {
		if (xn[i].type == NVT_NODE_KERNEL && (!xn[i].built || xn[i].stale))
			build(x, &xn[i]);
		upload(x, xn[i].body, xn[i].n_body);
	}
}

/* A replay: runs the enabled kernel nodes' device copies (a conditional's
 * body once). Returns how many hung. */
static int run(const struct exec *x, struct xnode *xn, int n)
{
	int hung = 0;
	for (int i = 0; i < n; i++) {
		struct xnode *k = &xn[i];
		k->ran = 0;
		if (k->type == NVT_NODE_KERNEL && k->enabled) {
			fake_execute(x->device, k->dev_tmd, 1, &k->run);
			k->run.callbacks = k->callbacks;
			k->run.stray_bits = k->stray;
			k->ran = 1;
			hung += k->run.hung;
		}
		hung += run(x, k->body, k->n_body);
	}
	return hung;
}

INTERNAL CUresult exec_instantiate(CUgraphExec *out, CUgraph h, uint64_t flags)
{
	struct graph *g;
	struct exec *x = NULL;
	int rc;

	/* cuda.h: device launch does not go with auto-free on launch. */
	if (!out || (flags & ~(uint64_t)FLAG_KNOWN) ||
	    ((flags & NVT_GRAPH_INSTANTIATE_AUTO_FREE) && (flags & NVT_GRAPH_INSTANTIATE_DEVICE_LAUNCH)))
		return E_INVALID_VALUE;
	graph_lock();
	if (!(g = find_graph(h)))
		rc = E_INVALID_HANDLE;
	else if (!(x = calloc(1, sizeof(*x))))
		rc = E_OUT_OF_MEMORY;
	else if ((rc = copy_nodes(g, &x->node, &x->n)))
		free(x);
	if (!rc) {
		x->device = fake_device();
		x->flags = flags;
		x->next = execs;
		execs = x;
		if (flags & NVT_GRAPH_INSTANTIATE_UPLOAD)
			upload(x, x->node, x->n);
		*out = x;
	}
	graph_unlock();
	return rc;
}

INTERNAL CUresult exec_upload(CUgraphExec h)
{
	struct exec *x;
	int rc = 0;
	graph_lock();
	if ((x = find_exec(h)))
		upload(x, x->node, x->n);
	else
		rc = E_INVALID_HANDLE;
	graph_unlock();
	return rc;
}

INTERNAL CUresult exec_launch(CUgraphExec h)
{
	struct exec *x;
	int rc = 0, hung;
	graph_lock();
	if ((x = find_exec(h))) {
		upload(x, x->node, x->n); /* the first launch uploads, and rebuilds marked nodes */
		x->replays++;
		hung = run(x, x->node, x->n);
		if (hung) {
			fprintf(stderr, "fakecuda: HANG: %d kernel node%s of a graph enable%s no working TPC\n",
				hung, hung > 1 ? "s" : "", hung > 1 ? "" : "s");
			rc = E_HANG; /* a real GPU never returns: report it loudly */
		}
	} else {
		rc = E_INVALID_HANDLE;
	}
	graph_unlock();
	return rc;
}

INTERNAL CUresult exec_destroy(CUgraphExec h)
{
	int rc = E_INVALID_HANDLE;
	graph_lock();
	for (struct exec **p = &execs; *p; p = &(*p)->next)
		if (*p == h) {
			struct exec *x = *p;
			*p = x->next;
			free_xnodes(x->node, x->n);
			free(x);
			rc = 0;
			break;
		}
	graph_unlock();
	return rc;
}

/* An exec can take a graph's parameters if the graph has the same node
 * count, types and child structure. */
static int same_shape(const struct xnode *xn, int n, const struct graph *g,
		      NVT_GRAPH_EXEC_UPDATE_RESULT_INFO *info)
{
	if (n != g->n) {
		info->result = UPDATE_TOPOLOGY_CHANGED;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		if (xn[i].type != g->node[i]->type) {
			info->result = UPDATE_NODE_TYPE_CHANGED;
			info->errorNode = g->node[i];
			info->errorFromNode = (CUgraphNode)(uintptr_t)xn[i].origin;
			return 0;
		}
		if (g->node[i]->body && !same_shape(xn[i].body, xn[i].n_body, g->node[i]->body, info))
			return 0;
	}
	return 1;
}

/* Sets an exec's kernel node. Another function or shared-memory size marks
 * it for a rebuild at the next upload or launch, even if set back before
 * (measured: gapp.cu T5, refresh.cu V1-V3); arguments and grid do not. */
static void set_kernel(struct xnode *k, const NVT_KERNEL_NODE_PARAMS *kp, uint64_t arg)
{
	if (kernel_of(kp) != kernel_of(&k->kp) || kp->sharedMemBytes != k->kp.sharedMemBytes)
		k->stale = 1;
	k->kp = *kp;
	k->kp.kernelParams = NULL;
	k->kp.extra = NULL;
	k->arg = arg;
}

static void take_params(struct xnode *xn, int n, const struct graph *g)
{
	for (int i = 0; i < n; i++) {
		if (xn[i].type == NVT_NODE_KERNEL)
			set_kernel(&xn[i], &g->node[i]->kp, g->node[i]->arg);
		if (g->node[i]->body)
			take_params(xn[i].body, xn[i].n_body, g->node[i]->body);
	}
}

INTERNAL CUresult exec_update(CUgraphExec h, CUgraph gh, NVT_GRAPH_EXEC_UPDATE_RESULT_INFO *info)
{
	struct exec *x;
	struct graph *g;
	int rc = 0;

	if (!info)
		return E_INVALID_VALUE;
	memset(info, 0, sizeof(*info));
	graph_lock();
	if (!(x = find_exec(h)) || !(g = find_graph(gh)))
		rc = E_INVALID_HANDLE;
	else if (!same_shape(x->node, x->n, g, info))
		rc = E_UPDATE_FAILURE; /* and nothing changed */
	else
		take_params(x->node, x->n, g); /* enabled flags stay */
	graph_unlock();
	return rc;
}

/* The exec's node instantiated from node handle nh (400: no such exec or
 * node; 1: the exec has no such node, or it is no kernel node). */
static int exec_kernel(CUgraphExec h, CUgraphNode nh, struct xnode **out)
{
	struct exec *x = find_exec(h);
	struct gnode *n = find_node(nh);
	if (!x || !n)
		return E_INVALID_HANDLE;
	*out = find_xnode(x->node, x->n, n);
	return *out && (*out)->type == NVT_NODE_KERNEL ? 0 : E_INVALID_VALUE;
}

INTERNAL CUresult exec_kernel_set(CUgraphExec h, CUgraphNode nh, const NVT_KERNEL_NODE_PARAMS *kp)
{
	struct xnode *k;
	int rc;
	if (!kernel_ok(kp))
		return E_INVALID_VALUE;
	graph_lock();
	if (!(rc = exec_kernel(h, nh, &k)))
		set_kernel(k, kp, kernel_arg(kp));
	graph_unlock();
	return rc;
}

INTERNAL CUresult exec_enabled_set(CUgraphExec h, CUgraphNode nh, unsigned on)
{
	struct xnode *k;
	int rc;
	graph_lock();
	if (!(rc = exec_kernel(h, nh, &k)))
		k->enabled = on != 0;
	graph_unlock();
	return rc;
}

INTERNAL CUresult exec_enabled_get(CUgraphExec h, CUgraphNode nh, unsigned *on)
{
	struct xnode *k;
	int rc;
	if (!on)
		return E_INVALID_VALUE;
	graph_lock();
	if (!(rc = exec_kernel(h, nh, &k)))
		*on = (unsigned)k->enabled;
	graph_unlock();
	return rc;
}

/* ---- What the tests read --------------------------------------------------- */

API int fakecuda_graph_kernels(CUgraphExec h)
{
	struct exec *x;
	int n = -1;
	graph_lock();
	if ((x = find_exec(h)))
		n = count_kernels(x->node, x->n);
	graph_unlock();
	return n;
}

API int fakecuda_graph_last(CUgraphExec h, int index, struct fakecuda_graph_node *out)
{
	struct exec *x;
	struct xnode *k = NULL;
	graph_lock();
	if ((x = find_exec(h)) && index >= 0 && (k = kernel_at(x->node, x->n, &index))) {
		memset(out, 0, sizeof(*out));
		out->run = k->run;
		out->ran = k->ran;
		out->builds = k->builds;
		out->arg = k->arg;
		out->replays = x->replays;
	}
	graph_unlock();
	return k ? 0 : -1;
}
