/*
 * shimgraph.c - CUDA graphs follow partition changes.
 * Over 500 lines on purpose: the graph mirror, its callbacks and the
 * re-upload share file-static state the launch path reads without locks;
 * splitting it would make that state global to the shim.
 *
 * What the driver does (docs/hardware-facts.md, section 7; measured on an
 * H100, driver 580): the launch callback fires for each kernel node of a
 * graph exec when the exec is first uploaded (cuGraphUpload or its first
 * cuGraphLaunch), and every replay after that runs the device copy made
 * then: neither a replay nor a rewrite of the TMD afterwards reaches it. But
 * an exec update that changes a kernel node's function or dynamic shared
 * memory makes the driver build that node's TMD again at the next launch,
 * and the callback fires for it.
 *
 * So for every graph exec the shim keeps a mirror: a clone of the graph the
 * exec was instantiated from, to which it applies every change the program
 * makes to the exec (node parameters, exec updates), as the driver-API
 * callbacks report them on return. At the first launch or upload of an exec
 * after its GPU's partition changed, it updates the exec from the mirror
 * with every kernel's dynamic shared memory 16 bytes smaller (larger where
 * it is under 16 bytes: cuBLAS's kernels use the most there is), then from
 * the mirror as it is: the exec ends as the program left it, the driver rebuilds
 * each kernel's TMD during this launch, and the launch callback writes the
 * new partition into them. A replay with no change since costs a table
 * lookup and a sequence comparison. An exec update may run while earlier
 * replays are in flight: it affects later launches only (CUDA's documented
 * rule), which is what a partition change means.
 *
 * Execs that cannot follow run on the partition they were uploaded under,
 * and the task's segment counts their kernels (graph_stale), which -p
 * reports: device-launched graphs, graphs the driver cannot clone (memory
 * allocation nodes), graphs with conditional nodes (their bodies cannot be
 * reached), an exec whose child-graph node the program replaced, more than
 * GRAPH_EXECS live execs, or a refresh the driver refused.
 *
 * CUDA forbids using one exec from two threads at once, so an exec's entry
 * is only ever changed by one thread; entries of different execs are claimed
 * with compare-and-swap. All driver calls of the shim's own happen in
 * callbacks of graph calls (never in the kernel-launch callback), with a
 * thread-local guard so that they do not report to the shim again.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/cuda_driver.h"
#include "nvtaskset.h"
#include "core/segment.h"
#include "shimdriver.h"
#include "shimgraph.h"
#include "shimsmctrl.h"
#include "shimstate.h"
#include "shimyield.h"

#define GRAPH_EXECS 4096 /* a power of two */
#define GRAPH_DEPTH 8    /* child graphs inside child graphs */
#define SMEM_NUDGE 16    /* bytes: any change of dynamic shared memory rebuilds the TMD */

struct graph_exec {
	void *exec;          /* key (first): NULL free, SHIM_TABLE_GONE removed; published last */
	CUgraph mirror;      /* NULL: cannot follow */
	CUgraphNode *orig;   /* the instantiating graph's nodes, in cuGraphGetNodes order */
	CUgraphNode *copy;   /* the mirror's, same order */
	size_t n_nodes;
	uint32_t kernels;    /* kernel nodes, child graphs included */
	uint8_t *grew;       /* per kernel, in walk order: its nudge added memory */
	int slot;            /* the GPU slot its kernels were built for; -1: none known */
	int uploaded;        /* its kernels have TMDs (a launch callback saw them) */
	int stale;           /* kernels counted in graph_stale */
	int pending;         /* a refresh whose rebuild no launch callback has shown yet */
	uint64_t seq;        /* slot sequence of the masks its kernels carry */
	uint64_t gen;        /* segment generation when built without a slot */
	int has_mask;        /* captured from a stream with a libsmctrl mask: */
	uint64_t smctrl[2];  /* that mask, for every kernel (shimsmctrl.c) */
};

static struct graph_exec execs[GRAPH_EXECS];
_Static_assert(offsetof(struct graph_exec, exec) == 0, "a table entry starts with its key");
static uint64_t stale_kernels[NVT_MAX_GPUS];

/* What this thread is doing inside a graph call. */
static __thread struct {
	struct graph_exec *current; /* the exec being launched or uploaded */
	int instantiating;          /* inside an instantiate call (it may upload) */
	int in_shim;                /* the shim's own driver calls: ignore their callbacks */
	int pend_slot;              /* what an upload during instantiate built for */
	uint64_t pend_seq, pend_gen;
	int pend_uploaded;
	int inst_has_mask;          /* the graph being instantiated has a libsmctrl mask */
	uint64_t inst_mask[2];
} tls __attribute__((tls_model("initial-exec")));

/* Whether graphs follow partition changes (the driver has the calls and callbacks). */
static struct {
	int on;
	int debug; /* NVTASKSET_GRAPH_DEBUG: say what happens to each exec */
} following;

/* Exec set-params calls, (exec, node, what, ...), and the graph call that
 * does the same to a node of a graph: (node, what), shim_cu.graph_node_set[set]. */
static const struct {
	int cbid;
	enum shim_node_set set;
} mirror_calls[SHIM_NODE_SETS] = {
	{NVT_CBID_cuGraphExecKernelNodeSetParams, SHIM_SET_KERNEL},
	{NVT_CBID_cuGraphExecKernelNodeSetParams_v2, SHIM_SET_KERNEL_V2},
	{NVT_CBID_cuGraphExecMemcpyNodeSetParams, SHIM_SET_MEMCPY},
	{NVT_CBID_cuGraphExecMemsetNodeSetParams, SHIM_SET_MEMSET},
	{NVT_CBID_cuGraphExecHostNodeSetParams, SHIM_SET_HOST},
	{NVT_CBID_cuGraphExecEventRecordNodeSetEvent, SHIM_SET_EVENT_RECORD},
	{NVT_CBID_cuGraphExecEventWaitNodeSetEvent, SHIM_SET_EVENT_WAIT},
	{NVT_CBID_cuGraphExecNodeSetParams, SHIM_SET_NODE},
};
/* Calls the program may make whose effect on an exec the shim cannot mirror. */
static const int unmirrored_calls[] = {
	NVT_CBID_cuGraphExecChildGraphNodeSetParams,
	NVT_CBID_cuGraphExecExternalSemaphoresSignalNodeSetParams,
	NVT_CBID_cuGraphExecExternalSemaphoresWaitNodeSetParams,
	NVT_CBID_cuGraphExecBatchMemOpNodeSetParams,
};
static const int followed_calls[] = {
	NVT_CBID_cuGraphInstantiate, NVT_CBID_cuGraphInstantiate_v2,
	NVT_CBID_cuGraphInstantiateWithFlags, NVT_CBID_cuGraphInstantiateWithParams,
	NVT_CBID_cuGraphInstantiateWithParams_ptsz, NVT_CBID_cuGraphLaunch,
	NVT_CBID_cuGraphLaunch_ptsz, NVT_CBID_cuGraphUpload, NVT_CBID_cuGraphUpload_ptsz,
	NVT_CBID_cuGraphExecDestroy, NVT_CBID_cuGraphExecUpdate, NVT_CBID_cuGraphExecUpdate_v2,
};

#define DEBUG(fmt, ...) do { if (following.debug) shim_note("graph: " fmt, __VA_ARGS__); } while (0)

/* ---- The table of execs ----------------------------------------------------- */

/* Lock-free: no system call, no allocation. */
static struct graph_exec *find_exec(const void *exec)
{
	return shim_table_find(execs, GRAPH_EXECS, sizeof(execs[0]), exec);
}

/* Claims an entry for exec (the caller fills it, then publishes the key). A
 * busy marker of our own (the exec's address | 2) holds the entry while it is
 * filled; lookups never match it. */
static struct graph_exec *claim_entry(const void *exec)
{
	return shim_table_claim(execs, GRAPH_EXECS, sizeof(execs[0]), exec,
				(void *)((uintptr_t)exec | 2));
}

/* ---- Counting what cannot follow ------------------------------------------- */

static void publish_stale(int slot)
{
	if (slot >= 0 && slot < NVT_MAX_GPUS && shim.seg)
		nvt_slot_set_graph_stale(&shim.seg->gpu[slot],
					 __atomic_load_n(&stale_kernels[slot], __ATOMIC_RELAXED));
}

static void count_stale(struct graph_exec *e, int add)
{
	if (e->slot < 0 || !e->kernels || e->stale == add)
		return;
	e->stale = add;
	if (add)
		__atomic_add_fetch(&stale_kernels[e->slot], e->kernels, __ATOMIC_RELAXED);
	else
		__atomic_sub_fetch(&stale_kernels[e->slot], e->kernels, __ATOMIC_RELAXED);
	publish_stale(e->slot);
}

static void free_mirror(struct graph_exec *e)
{
	if (e->mirror)
		shim_cu.graph_destroy(e->mirror);
	free(e->orig);
	free(e->copy);
	free(e->grew);
	e->mirror = NULL;
	e->orig = e->copy = NULL;
	e->grew = NULL;
	e->n_nodes = 0;
}

/* The exec keeps the TPCs its kernels have: say so, once, and count them. */
static void give_up(struct graph_exec *e, const char *why)
{
	DEBUG("exec %p cannot follow: %s", e->exec, why);
	free_mirror(e);
	count_stale(e, 1);
	if (shim_first_time(WARN_GRAPH))
		shim_warn("pid %ld: a CUDA graph cannot follow partition changes (%s); its %u "
			  "kernels keep the TPCs they were uploaded with (nvtaskset -p counts them)",
			  (long)getpid(), why, e->kernels);
}

/* ---- Walking graphs -------------------------------------------------------- */

/* The nodes of g (malloc'd, *n of them), or NULL. */
static CUgraphNode *nodes_of(CUgraph g, size_t *n)
{
	CUgraphNode *nodes;

	*n = 0;
	if (shim_cu.graph_nodes(g, NULL, n))
		return NULL;
	nodes = calloc(*n ? *n : 1, sizeof(*nodes));
	if (nodes && shim_cu.graph_nodes(g, nodes, n)) {
		free(nodes);
		return NULL;
	}
	return nodes;
}

/*
 * Counts g's kernel nodes into *kernels and, with nudge 1, changes their
 * dynamic shared memory by SMEM_NUDGE bytes, down where it has that much,
 * noting in grew[] (one byte per kernel, in walk order) where it went up;
 * nudge -1 undoes that. Returns 0, or a reason why the graph cannot follow.
 */
static const char *walk(CUgraph g, int nudge, uint8_t *grew, uint32_t *kernels, int depth)
{
	const char *why = NULL;
	CUgraphNode *nodes;
	size_t n;

	if (depth > GRAPH_DEPTH)
		return "child graphs nested too deep";
	nodes = nodes_of(g, &n);
	if (!nodes)
		return "the driver does not list its nodes";
	for (size_t i = 0; i < n && !why; i++) {
		NVT_KERNEL_NODE_PARAMS p;
		CUgraph child;
		int type = -1;
		if (shim_cu.graph_node_type(nodes[i], &type)) {
			why = "the driver does not tell a node's type";
		} else if (type == NVT_NODE_KERNEL) {
			uint32_t k = (*kernels)++;
			if (!nudge)
				continue;
			if (shim_cu.graph_kernel_get(nodes[i], &p)) {
				why = "the driver does not give a kernel node's parameters";
				continue;
			}
			if (nudge > 0)
				grew[k] = p.sharedMemBytes < SMEM_NUDGE;
			if (grew[k] == (nudge > 0))
				p.sharedMemBytes += SMEM_NUDGE;
			else
				p.sharedMemBytes -= SMEM_NUDGE;
			if (shim_cu.graph_node_set[SHIM_SET_KERNEL_V2](nodes[i], &p))
				why = "the driver refused a kernel node's shared memory size";
		} else if (type == NVT_NODE_GRAPH) {
			if (shim_cu.graph_child(nodes[i], &child))
				why = "the driver does not give a child graph";
			else
				why = walk(child, nudge, grew, kernels, depth + 1);
		} else if (type == NVT_NODE_CONDITIONAL) {
			why = "it has conditional nodes";
		}
	}
	free(nodes);
	return why;
}

/* Makes e's mirror from graph g; on failure e cannot follow. */
static void build_mirror(struct graph_exec *e, CUgraph g)
{
	const char *why;
	size_t n_copy = 0;

	free_mirror(e);
	e->kernels = 0;
	why = walk(g, 0, NULL, &e->kernels, 0);
	if (!why && !(e->grew = calloc(e->kernels ? e->kernels : 1, 1)))
		why = "out of memory";
	if (!why && shim_cu.graph_clone(&e->mirror, g)) {
		e->mirror = NULL;
		why = "the driver cannot clone it (memory nodes?)";
	}
	if (!why) {
		e->orig = nodes_of(g, &e->n_nodes);
		e->copy = nodes_of(e->mirror, &n_copy);
		if (!e->orig || !e->copy || n_copy != e->n_nodes)
			why = "its clone differs from it";
	}
	if (why)
		give_up(e, why);
}

/* ---- Following the program's graph calls ------------------------------------ */

static void destroyed(struct graph_exec *e);

static void instantiated(CUgraphExec exec, CUgraph g, uint64_t flags)
{
	struct graph_exec *e = find_exec(exec);

	/* An exec at this address that the program never destroyed (its
	 * context was): forget it, or lookups would find its mirror first. */
	if (e)
		destroyed(e);
	e = claim_entry(exec);

	if (!e) {
		if (shim_first_time(WARN_GRAPH))
			shim_warn("pid %ld: more than %d CUDA graph execs: later ones keep the TPCs "
				  "they were uploaded with",
				  (long)getpid(), GRAPH_EXECS);
		return;
	}
	memset((char *)e + sizeof(e->exec), 0, sizeof(*e) - sizeof(e->exec));
	e->slot = -1;
	e->exec = (void *)((uintptr_t)exec | 2); /* memset cleared the busy marker */
	if (tls.pend_uploaded) {
		/* Uploaded inside the instantiate call (its upload flag). */
		e->uploaded = 1;
		e->slot = tls.pend_slot;
		e->seq = tls.pend_seq;
		e->gen = tls.pend_gen;
	}
	e->has_mask = shim_smctrl_graph_mask(g, e->smctrl);
	if (flags & NVT_GRAPH_INSTANTIATE_DEVICE_LAUNCH) {
		uint32_t k = 0;
		walk(g, 0, NULL, &k, 0);
		e->kernels = k;
		give_up(e, "it is launched from the device");
	} else {
		build_mirror(e, g);
	}
	__atomic_store_n(&e->exec, exec, __ATOMIC_RELEASE);
	DEBUG("exec %p instantiated: %u kernels, %zu nodes, mirror %p, flags %llx", exec, e->kernels,
	      e->n_nodes, e->mirror, (unsigned long long)flags);
}

static void destroyed(struct graph_exec *e)
{
	count_stale(e, 0);
	free_mirror(e);
	__atomic_store_n(&e->exec, SHIM_TABLE_GONE, __ATOMIC_RELEASE);
}

/*
 * Before a launch or upload of e: if its GPU's partition changed since its
 * kernels were built, make the driver build them again (see the top).
 */
static void refresh_if_changed(struct graph_exec *e)
{
	NVT_GRAPH_EXEC_UPDATE_RESULT_INFO info;
	uint32_t k = 0;
	const char *why;

	if (!e->uploaded || !e->mirror || !e->kernels)
		return;
	if (e->slot >= 0) {
		uint64_t seq = nvt_slot_seq(&shim.seg->gpu[e->slot]);
		if (seq == e->seq || (seq & 1))
			return; /* unchanged, or a writer is inside: launch on what it has */
	} else if (nvt_segment_gen(shim.seg) == e->gen) {
		return; /* still no partition for its GPU */
	}
	DEBUG("exec %p: partition changed (slot %d, seq %llu): refreshing", e->exec, e->slot,
	      (unsigned long long)e->seq);
	tls.in_shim = 1;
	/* A walk stops at its first failure, and only a whole nudge is undone;
	 * a failed exec update leaves the exec as it was (CUDA's rule). The
	 * way back sets values the driver took before, so it does not fail;
	 * if it ever did, the exec would keep nudged sizes: say so loudly. */
	why = walk(e->mirror, 1, e->grew, &k, 0);
	if (!why && k != e->kernels)
		why = "its mirror changed shape";
	if (!why) {
		if (shim_cu.graph_exec_update(e->exec, e->mirror, &info))
			why = "the driver refused to update it";
		k = 0;
		if (walk(e->mirror, -1, e->grew, &k, 0))
			why = "its mirror could not be restored";
		else if (!why && shim_cu.graph_exec_update(e->exec, e->mirror, &info))
			why = "the driver refused to update it back";
		if (why && k)
			shim_warn("pid %ld: a CUDA graph's kernels may keep dynamic shared memory sizes "
				  "16 bytes off after a failed partition refresh (%s); please report this",
				  (long)getpid(), why);
	}
	tls.in_shim = 0;
	if (why) {
		give_up(e, why);
		return;
	}
	e->pending = 1;
	/* Until the callbacks show it, assume this launch builds for now. */
	if (e->slot >= 0)
		e->seq = nvt_slot_seq(&shim.seg->gpu[e->slot]);
	e->gen = nvt_segment_gen(shim.seg);
}

/* After a launch or upload call of e: did the refresh rebuild anything? (A
 * launch must have: its kernels' TMDs are built by then.) */
static void launch_done(struct graph_exec *e, int launched)
{
	if (e->pending && launched) {
		e->pending = 0;
		give_up(e, "the driver did not rebuild its kernels");
	}
	e->uploaded = 1;
}

/* The program changed one of e's nodes: change the mirror the same way. */
static void mirror_call(struct graph_exec *e, int which, void *const *args)
{
	CUgraphNode node = args[1];
	nvt_cuGraphNodeSetWhat_fn set;
	size_t i;

	if (!e->mirror)
		return;
	for (i = 0; i < e->n_nodes && e->orig[i] != node; i++)
		continue;
	tls.in_shim = 1;
	set = shim_cu.graph_node_set[mirror_calls[which].set];
	if (i == e->n_nodes || !set || set(e->copy[i], args[2])) {
		tls.in_shim = 0;
		give_up(e, i == e->n_nodes ? "a node it was changed through is not its graph's"
					   : "a change of one of its nodes cannot be mirrored");
		return;
	}
	tls.in_shim = 0;
}

static void exec_updated(struct graph_exec *e, CUgraph g)
{
	CUgraphNode *orig = e->orig;
	size_t n = e->n_nodes;

	if (!e->mirror)
		return;
	/* The program goes on naming the nodes of the graph it instantiated. */
	e->orig = NULL;
	tls.in_shim = 1;
	build_mirror(e, g);
	tls.in_shim = 0;
	if (e->mirror && e->n_nodes == n) {
		free(e->orig);
		e->orig = orig;
	} else {
		free(orig);
		if (e->mirror)
			give_up(e, "it was updated from a graph of another shape");
	}
}

/* ---- The callbacks ---------------------------------------------------------- */

/* A kernel-launch callback (shim.c): the TMD it fills belongs to the exec
 * this thread is uploading, if any. Lock-free. */
void shim_graph_kernel(int slot, uint64_t seq)
{
	struct graph_exec *e = tls.current;

	if (e) {
		DEBUG("exec %p: kernel built for slot %d seq %llu", e->exec, slot, (unsigned long long)seq);
		if (e->slot != slot) {
			/* Its kernels are (now) on this GPU: count them there. */
			count_stale(e, 0);
			e->slot = slot;
			if (!e->mirror)
				count_stale(e, 1);
		}
		e->seq = seq;
		e->gen = nvt_segment_gen(shim.seg);
		e->pending = 0;
	} else if (tls.instantiating) {
		tls.pend_uploaded = 1;
		tls.pend_slot = slot;
		tls.pend_seq = seq;
		tls.pend_gen = nvt_segment_gen(shim.seg);
	}
}

const uint64_t *shim_graph_smctrl_mask(void)
{
	if (tls.current)
		return tls.current->has_mask ? tls.current->smctrl : NULL;
	return tls.instantiating && tls.inst_has_mask ? tls.inst_mask : NULL;
}

int shim_graph_busy(void)
{
	return tls.current != NULL || tls.instantiating;
}

/* An instantiate call, on entry (site 0) or return. */
static void on_instantiate(int cbid, int site, void *const *args, int result)
{
	uint64_t flags = 0;

	if (site == NVT_CB_API_SITE_ENTER) {
		tls.instantiating = 1;
		tls.pend_uploaded = 0;
		tls.inst_has_mask = shim_smctrl_graph_mask(args[1], tls.inst_mask);
		return;
	}
	if (cbid == NVT_CBID_cuGraphInstantiateWithFlags)
		flags = (uint64_t)(uintptr_t)args[2];
	else if (cbid == NVT_CBID_cuGraphInstantiateWithParams ||
		 cbid == NVT_CBID_cuGraphInstantiateWithParams_ptsz)
		flags = args[2] ? ((const NVT_GRAPH_INSTANTIATE_PARAMS *)args[2])->flags : 0;
	tls.instantiating = 0;
	if (result == 0 && args[0] && *(CUgraphExec *)args[0]) {
		tls.in_shim = 1;
		instantiated(*(CUgraphExec *)args[0], args[1], flags);
		tls.in_shim = 0;
	}
	tls.pend_uploaded = 0;
}

/* A launch or upload call of an exec (args[0]). */
static void on_launch_or_upload(int cbid, int site, void *const *args, int result)
{
	if (site == NVT_CB_API_SITE_ENTER) {
		struct graph_exec *e = find_exec(args[0]);
		tls.current = e;
		if (e)
			refresh_if_changed(e);
	} else if (tls.current) {
		int replay = cbid == NVT_CBID_cuGraphLaunch || cbid == NVT_CBID_cuGraphLaunch_ptsz;
		if (result == 0)
			launch_done(tls.current, replay);
		/* A replay is launched work, though no launch callback shows
		 * it: a priority agent sees the task active. */
		if (result == 0 && replay && tls.current->slot >= 0 && tls.current->slot < NVT_MAX_GPUS &&
		    shim.seg)
			shim_count_launch(tls.current->slot, 1);
		tls.current = NULL;
	}
}

/* A call that changed an exec's node (on return, if it succeeded). */
static void on_exec_change(int cbid, void *const *args)
{
	for (int i = 0; i < SHIM_NODE_SETS; i++)
		if (mirror_calls[i].cbid == cbid) {
			struct graph_exec *e = find_exec(args[0]);
			if (e)
				mirror_call(e, i, args);
			return;
		}
	for (size_t i = 0; i < sizeof(unmirrored_calls) / sizeof(unmirrored_calls[0]); i++)
		if (unmirrored_calls[i] == cbid) {
			struct graph_exec *e = find_exec(args[0]);
			if (e && e->mirror)
				give_up(e, "the program changed a node the shim cannot mirror");
			return;
		}
}

/* The arguments of an API callback's block for cbid, or NULL (said once;
 * graphs stop following) when it is not the block measured. */
static void *const *api_args(int cbid, const void *data, int *site, int *result)
{
	struct shim_api_call call;

	if (shim_api_call(cbid, data, &call)) {
		if (shim_first_time(WARN_GRAPH_PARAMS))
			shim_warn("unexpected driver-API callback data (call %d); CUDA graphs keep the "
				  "TPCs they were uploaded with",
				  cbid);
		following.on = 0;
		return NULL;
	}
	*site = call.site;
	*result = call.result;
	return call.args;
}

/* The calls this file follows (the callback also gets the calls others follow). */
static struct shim_calls graph_calls;

void shim_graph_api(int cbid, const void *data)
{
	void *const *args;
	int site, result;

	if (tls.in_shim || !following.on || !shim_calls_has(&graph_calls, cbid) ||
	    !(args = api_args(cbid, data, &site, &result)))
		return;
	switch (cbid) {
	case NVT_CBID_cuGraphInstantiate:
	case NVT_CBID_cuGraphInstantiate_v2:
	case NVT_CBID_cuGraphInstantiateWithFlags:
	case NVT_CBID_cuGraphInstantiateWithParams:
	case NVT_CBID_cuGraphInstantiateWithParams_ptsz:
		on_instantiate(cbid, site, args, result);
		return;
	case NVT_CBID_cuGraphLaunch:
	case NVT_CBID_cuGraphLaunch_ptsz:
	case NVT_CBID_cuGraphUpload:
	case NVT_CBID_cuGraphUpload_ptsz:
		on_launch_or_upload(cbid, site, args, result);
		return;
	case NVT_CBID_cuGraphExecDestroy:
		if (site == NVT_CB_API_SITE_ENTER) {
			struct graph_exec *e = find_exec(args[0]);
			if (e) {
				tls.in_shim = 1;
				destroyed(e);
				tls.in_shim = 0;
			}
		}
		return;
	case NVT_CBID_cuGraphExecUpdate:
	case NVT_CBID_cuGraphExecUpdate_v2:
		if (site == NVT_CB_API_SITE_EXIT && result == 0) {
			struct graph_exec *e = find_exec(args[0]);
			if (e)
				exec_updated(e, args[1]);
		}
		return;
	default:
		if (site == NVT_CB_API_SITE_EXIT && result == 0)
			on_exec_change(cbid, args);
	}
}

/* ---- Set-up --------------------------------------------------------------- */

void shim_graph_setup(nvt_cb_enable_fn enable, uint32_t handle)
{
	const char *off = secure_getenv(NVT_ENV_GRAPHS), *debug = secure_getenv(NVT_ENV_GRAPH_DEBUG);
	int ok = 1;

	if (off && !strcmp(off, "0"))
		return; /* graphs keep the TPCs they were uploaded with, at no cost */

	if (!shim_cu.graph_clone || !shim_cu.graph_destroy || !shim_cu.graph_nodes ||
	    !shim_cu.graph_node_type || !shim_cu.graph_kernel_get ||
	    !shim_cu.graph_node_set[SHIM_SET_KERNEL_V2] || !shim_cu.graph_child ||
	    !shim_cu.graph_exec_update)
		ok = 0;
	for (size_t i = 0; ok && i < sizeof(followed_calls) / sizeof(followed_calls[0]); i++)
		ok = shim_calls_follow(&graph_calls, enable, handle, followed_calls[i]) == 0;
	for (int i = 0; ok && i < SHIM_NODE_SETS; i++)
		ok = shim_calls_follow(&graph_calls, enable, handle, mirror_calls[i].cbid) == 0;
	for (size_t i = 0; ok && i < sizeof(unmirrored_calls) / sizeof(unmirrored_calls[0]); i++)
		ok = shim_calls_follow(&graph_calls, enable, handle, unmirrored_calls[i]) == 0;
	if (!ok) {
		if (debug && *debug && strcmp(debug, "0") != 0)
			shim_warn("graph: the driver lacks a graph call or callback; graphs do not follow");
		/* An older driver: graphs keep the TPCs they were uploaded with
		 * (docs/cuda-graphs.md says so); plain launches are not affected. */
		for (size_t i = 0; i < sizeof(followed_calls) / sizeof(followed_calls[0]); i++)
			enable(0, handle, NVT_CB_DOMAIN_API, followed_calls[i]);
		return;
	}
	following.on = 1;
	following.debug = debug && *debug && strcmp(debug, "0") != 0;
	DEBUG("%s", "following CUDA graphs");
}
