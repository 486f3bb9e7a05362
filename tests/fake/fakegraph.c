/*
 * fakegraph.c - CUDA graphs in the fake driver: graphs and their nodes
 * (fakeexec.c: executable graphs and the device model; fakegraphapi.c: the
 * entry points and their driver-API callbacks). See fakecuda.h.
 *
 * Handles are looked up among the live objects: a wrong one gives
 * CUDA_ERROR_INVALID_HANDLE, never a crash. One recursive lock serialises
 * the model; it is held while launch callbacks run at an upload (a callback
 * may call the driver again on its thread), never around the driver-API
 * callbacks.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeint.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct graph *graphs;
static uint64_t next_dptr = 0x7f0000000000ull, next_handle;

INTERNAL void graph_lock(void)
{
	pthread_mutex_lock(&lock);
}

INTERNAL void graph_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

/* ---- Lookups ------------------------------------------------------------- */

INTERNAL struct graph *find_graph(CUgraph h)
{
	for (struct graph *g = graphs; g && h; g = g->next)
		if (g == h)
			return g;
	return NULL;
}

INTERNAL struct gnode *find_node(CUgraphNode h)
{
	for (struct graph *g = graphs; g && h; g = g->next)
		for (int i = 0; i < g->n; i++)
			if (g->node[i] == h)
				return g->node[i];
	return NULL;
}

/* ---- Graphs -------------------------------------------------------------- */

INTERNAL const void *kernel_of(const NVT_KERNEL_NODE_PARAMS *kp)
{
	return kp->func ? (const void *)kp->func : (const void *)kp->kern;
}

INTERNAL int kernel_ok(const NVT_KERNEL_NODE_PARAMS *kp)
{
	return kp && kernel_of(kp);
}

INTERNAL uint64_t kernel_arg(const NVT_KERNEL_NODE_PARAMS *kp)
{
	return kp->kernelParams && kp->kernelParams[0] ? *(const uint64_t *)kp->kernelParams[0] : 0;
}

/* Copies kernel parameters into a node, the argument by value. */
static void set_node_kernel(struct gnode *n, const NVT_KERNEL_NODE_PARAMS *kp)
{
	uint64_t arg = kernel_arg(kp);
	n->kp = *kp;
	n->arg = arg;
	n->argv[0] = &n->arg;
	n->kp.kernelParams = n->argv;
	n->kp.extra = NULL;
}

static struct graph *new_graph(struct gnode *embedder)
{
	struct graph *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->embedder = embedder;
	g->next = graphs;
	graphs = g;
	return g;
}

static void free_graph(struct graph *g)
{
	for (struct graph **p = &graphs; *p; p = &(*p)->next)
		if (*p == g) {
			*p = g->next;
			break;
		}
	for (int i = 0; i < g->n; i++) {
		if (g->node[i]->body)
			free_graph(g->node[i]->body);
		free(g->node[i]);
	}
	free(g->node);
	free(g);
}

static int append(struct graph *g, struct gnode *n)
{
	if (g->n == g->cap) {
		int cap = g->cap ? 2 * g->cap : 8;
		struct gnode **more = realloc(g->node, (size_t)cap * sizeof(*more));
		if (!more)
			return E_OUT_OF_MEMORY;
		g->node = more;
		g->cap = cap;
	}
	n->owner = g;
	g->node[g->n++] = n;
	return 0;
}

static int holds_alloc(const struct graph *g)
{
	for (int i = 0; i < g->n; i++)
		if (g->node[i]->type == NVT_NODE_MEM_ALLOC || (g->node[i]->body && holds_alloc(g->node[i]->body)))
			return 1;
	return 0;
}

/* A copy of src, nodes in order, child graphs and bodies copied too. */
static int clone_graph(const struct graph *src, struct gnode *embedder, struct graph **out)
{
	struct graph *g;

	if (holds_alloc(src))
		return E_NOT_SUPPORTED; /* measured: cudaGraphClone of such a graph fails */
	if (!(g = new_graph(embedder)))
		return E_OUT_OF_MEMORY;
	for (int i = 0; i < src->n; i++) {
		const struct gnode *s = src->node[i];
		struct gnode *n = calloc(1, sizeof(*n));
		int rc = E_OUT_OF_MEMORY;
		if (n && (rc = append(g, n)))
			free(n);
		if (!rc) {
			n->type = s->type;
			n->clone_of = s;
			if (s->type == NVT_NODE_KERNEL)
				set_node_kernel(n, &s->kp);
			if (s->body)
				rc = clone_graph(s->body, n, &n->body);
			n->bodies[0] = n->body;
		}
		if (rc) {
			free_graph(g);
			return rc;
		}
	}
	*out = g;
	return 0;
}

INTERNAL CUresult graph_create(CUgraph *out, unsigned flags)
{
	struct graph *g;
	if (!out || flags)
		return E_INVALID_VALUE;
	graph_lock();
	g = new_graph(NULL);
	graph_unlock();
	if (!g)
		return E_OUT_OF_MEMORY;
	*out = g;
	return 0;
}

INTERNAL CUresult graph_destroy(CUgraph h)
{
	struct graph *g;
	int rc = 0;
	graph_lock();
	if (!(g = find_graph(h)))
		rc = E_INVALID_HANDLE;
	else if (g->embedder)
		rc = E_INVALID_VALUE; /* a node's graph goes with its node */
	else
		free_graph(g);
	graph_unlock();
	return rc;
}

static int add_node(struct graph *g, int type, const NVT_KERNEL_NODE_PARAMS *kp, CUgraph child,
		    CUgraph **bodies, uint64_t *dptr, struct gnode **out)
{
	struct graph *c = NULL;
	struct gnode *n;
	int rc;

	if (type == NVT_NODE_KERNEL && !kernel_ok(kp))
		return E_INVALID_VALUE;
	if (type == NVT_NODE_GRAPH && !(c = find_graph(child)))
		return E_INVALID_HANDLE;
	/* Memory nodes belong in top-level graphs (cuda.h: not in child
	 * graphs or conditional bodies). */
	if (type == NVT_NODE_MEM_ALLOC && g->embedder)
		return E_NOT_SUPPORTED;
	if (type != NVT_NODE_KERNEL && type != NVT_NODE_GRAPH && type != NVT_NODE_CONDITIONAL &&
	    type != NVT_NODE_MEM_ALLOC && type != NVT_NODE_EMPTY)
		return E_NOT_SUPPORTED;
	if (!(n = calloc(1, sizeof(*n))))
		return E_OUT_OF_MEMORY;
	n->type = type;
	if (type == NVT_NODE_KERNEL)
		set_node_kernel(n, kp);
	rc = type == NVT_NODE_GRAPH ? clone_graph(c, n, &n->body) : 0;
	if (!rc && type == NVT_NODE_CONDITIONAL && !(n->body = new_graph(n)))
		rc = E_OUT_OF_MEMORY;
	if (!rc && (rc = append(g, n)) && n->body)
		free_graph(n->body);
	if (rc) {
		free(n);
		return rc;
	}
	n->bodies[0] = n->body;
	if (bodies)
		*bodies = n->bodies;
	if (type == NVT_NODE_MEM_ALLOC && dptr) {
		*dptr = next_dptr;
		next_dptr += 1ull << 21;
	}
	*out = n;
	return 0;
}

INTERNAL CUresult graph_add(CUgraphNode *out, CUgraph h, int type, const NVT_KERNEL_NODE_PARAMS *kp,
			    CUgraph child, CUgraph **bodies, uint64_t *dptr)
{
	struct graph *g;
	struct gnode *n = NULL;
	int rc;

	if (!out)
		return E_INVALID_VALUE;
	graph_lock();
	rc = (g = find_graph(h)) ? add_node(g, type, kp, child, bodies, dptr, &n) : E_INVALID_HANDLE;
	graph_unlock();
	if (!rc)
		*out = n;
	return rc;
}

INTERNAL CUresult graph_clone(CUgraph *out, CUgraph h)
{
	struct graph *g, *c = NULL;
	int rc;
	if (!out)
		return E_INVALID_VALUE;
	graph_lock();
	rc = (g = find_graph(h)) ? clone_graph(g, NULL, &c) : E_INVALID_HANDLE;
	graph_unlock();
	if (!rc)
		*out = c;
	return rc;
}

INTERNAL CUresult graph_nodes(CUgraph h, CUgraphNode *nodes, size_t *n)
{
	struct graph *g;
	int rc = 0;
	if (!n)
		return E_INVALID_VALUE;
	graph_lock();
	if (!(g = find_graph(h))) {
		rc = E_INVALID_HANDLE;
	} else if (!nodes) {
		*n = (size_t)g->n;
	} else {
		/* As cuda.h: entries past the graph's nodes are NULL. */
		for (size_t i = 0; i < *n; i++)
			nodes[i] = i < (size_t)g->n ? g->node[i] : NULL;
		if (*n > (size_t)g->n)
			*n = (size_t)g->n;
	}
	graph_unlock();
	return rc;
}

INTERNAL CUresult node_type(CUgraphNode h, int *type)
{
	struct gnode *n;
	int rc = 0;
	if (!type)
		return E_INVALID_VALUE;
	graph_lock();
	if ((n = find_node(h)))
		*type = n->type;
	else
		rc = E_INVALID_HANDLE;
	graph_unlock();
	return rc;
}

INTERNAL CUresult node_kernel_get(CUgraphNode h, NVT_KERNEL_NODE_PARAMS *kp)
{
	struct gnode *n;
	int rc = 0;
	if (!kp)
		return E_INVALID_VALUE;
	graph_lock();
	if (!(n = find_node(h)))
		rc = E_INVALID_HANDLE;
	else if (n->type != NVT_NODE_KERNEL)
		rc = E_INVALID_VALUE;
	else
		*kp = n->kp; /* kernelParams: the node's own copy of the argument */
	graph_unlock();
	return rc;
}

INTERNAL CUresult node_kernel_set(CUgraphNode h, const NVT_KERNEL_NODE_PARAMS *kp)
{
	struct gnode *n;
	int rc = 0;
	graph_lock();
	if (!(n = find_node(h)))
		rc = E_INVALID_HANDLE;
	else if (n->type != NVT_NODE_KERNEL || !kernel_ok(kp))
		rc = E_INVALID_VALUE;
	else
		set_node_kernel(n, kp);
	graph_unlock();
	return rc;
}

INTERNAL CUresult node_child_graph(CUgraphNode h, CUgraph *out)
{
	struct gnode *n;
	int rc = 0;
	if (!out)
		return E_INVALID_VALUE;
	graph_lock();
	if (!(n = find_node(h)))
		rc = E_INVALID_HANDLE;
	else if (n->type != NVT_NODE_GRAPH)
		rc = E_INVALID_VALUE;
	else
		*out = n->body;
	graph_unlock();
	return rc;
}

static struct gnode *find_clone(const struct graph *g, const struct gnode *original)
{
	for (int i = 0; i < g->n; i++) {
		struct gnode *hit = g->node[i]->clone_of == original ? g->node[i] : NULL;
		if (!hit && g->node[i]->body)
			hit = find_clone(g->node[i]->body, original);
		if (hit)
			return hit;
	}
	return NULL;
}

INTERNAL CUresult node_find_in_clone(CUgraphNode *out, CUgraphNode original, CUgraph clone)
{
	struct graph *g;
	struct gnode *n = NULL;
	int rc = 0;
	if (!out)
		return E_INVALID_VALUE;
	graph_lock();
	if (!(g = find_graph(clone)) || !find_node(original))
		rc = E_INVALID_HANDLE;
	else if (!(n = find_clone(g, original)))
		rc = E_INVALID_VALUE;
	graph_unlock();
	if (!rc)
		*out = n;
	return rc;
}

INTERNAL CUresult cond_handle_create(uint64_t *out, CUgraph h)
{
	int rc = 0;
	if (!out)
		return E_INVALID_VALUE;
	graph_lock();
	if (find_graph(h))
		*out = ++next_handle;
	else
		rc = E_INVALID_HANDLE;
	graph_unlock();
	return rc;
}
