/*
 * shimhostfn.c - a host function ends a request (docs/priorities.md, "Yielding"): a task that
 * waits for its work by a host function (cuLaunchHostFunc, cuStreamAddCallback: JAX does so
 * for each step, and then makes no driver call until its next launch) never returns from a
 * synchronisation, so its request would look open for good, and lower tasks would take it for
 * one that never idles (their share of the GPU, core/yield.h: ~2 ms added to each of its
 * steps). At the call's entry the shim puts its own function in the program's place, with a
 * record of the program's function and data; when the driver's thread runs it (the work queued
 * before it is done) and no launch of the task's came since it was queued, the task's request
 * on that GPU ends (a callback of cuStreamAddCallback's only with a success status); then the
 * program's function runs. Records come from a fixed pool: with none free (256 queued and not yet
 * run, or lost to calls that failed), or on a stream being captured into a graph (its host node
 * would run the record again at every replay), the call is left as the program made it. A task
 * that queued a host function has its copies done by the driver from then on (shimbridge.h,
 * shim_bridge_copies_off).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <string.h>

#include "core/segment.h"
#include "shimbridge.h"
#include "shimdriver.h"
#include "shimhostfn.h"
#include "shimslot.h"
#include "shimstate.h"
#include "shimyield.h"

#define RECORDS 256 /* host functions queued and not yet run, at most, that end a request */

struct record {
	int used;                      /* claimed (atomic) */
	int g;                         /* its GPU slot */
	uint64_t launches;             /* the slot's launches when it was queued */
	nvt_host_fn fn;                /* the program's (cuLaunchHostFunc) */
	nvt_stream_callback callback;  /* or (cuStreamAddCallback) */
	void *user;
};

static struct record records[RECORDS];
static unsigned next_record;
struct shim_calls shim_hostfn_calls;

static const int ids[] = {
	NVT_CBID_cuLaunchHostFunc,    NVT_CBID_cuLaunchHostFunc_ptsz,
	NVT_CBID_cuStreamAddCallback, NVT_CBID_cuStreamAddCallback_ptsz,
};

static struct record *claim(void)
{
	for (int i = 0; i < RECORDS; i++) {
		struct record *r = &records[__atomic_fetch_add(&next_record, 1, __ATOMIC_RELAXED) % RECORDS];
		int free = 0;

		if (__atomic_compare_exchange_n(&r->used, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return r;
	}
	return NULL;
}

static void release(struct record *r)
{
	__atomic_store_n(&r->used, 0, __ATOMIC_RELEASE);
}

/* Record r's host function runs: the request ends if the task launched nothing since. */
static void ran(struct record *r)
{
	int g = r->g;

	if (nvt_slot_launches(&shim.seg->gpu[g]) == r->launches)
		shim_yield_ended(g);
}

static void run_host_fn(void *user)
{
	struct record *r = user;
	nvt_host_fn fn = r->fn;
	void *data = r->user;

	ran(r);
	release(r);
	fn(data);
}

static void run_callback(CUstream stream, int status, void *user)
{
	struct record *r = user;
	nvt_stream_callback fn = r->callback;
	void *data = r->user;

	if (status == 0)
		ran(r);
	release(r);
	fn(stream, status, data);
}

/* 1 if stream may not be being captured (the query answered "not capturing"). */
static int not_capturing(CUstream stream, int ptsz)
{
	int status = 1;

	if (!stream && ptsz)
		stream = NVT_CU_STREAM_PER_THREAD;
	return shim_cu.stream_capturing && shim_cu.stream_capturing(stream, &status) == 0 && status == 0;
}

/* At the call's entry: the shim's function in the program's place, where a record is free. */
static void entered(int cbid, void *args)
{
	int hostfn = cbid == NVT_CBID_cuLaunchHostFunc || cbid == NVT_CBID_cuLaunchHostFunc_ptsz;
	int ptsz = cbid == NVT_CBID_cuLaunchHostFunc_ptsz || cbid == NVT_CBID_cuStreamAddCallback_ptsz;
	NVT_LAUNCH_HOST_FUNC_ARGS *h = args;
	NVT_STREAM_ADD_CALLBACK_ARGS *c = args;
	void *ctx = NULL;
	struct record *r;
	int g;

	shim_bridge_copies_off();
	if ((hostfn ? !h->fn : !c->fn) || !shim_cu.ctx_current || shim_cu.ctx_current(&ctx) || !ctx ||
	    (g = shim_slot_of_ctx(ctx)) < 0 || !not_capturing(hostfn ? h->stream : c->stream, ptsz) ||
	    !(r = claim()))
		return;
	r->g = g;
	r->launches = nvt_slot_launches(&shim.seg->gpu[g]);
	r->fn = hostfn ? h->fn : NULL;
	r->callback = hostfn ? NULL : c->fn;
	r->user = hostfn ? h->user : c->user;
	if (hostfn) {
		h->fn = run_host_fn;
		h->user = r;
	} else {
		c->fn = run_callback;
		c->user = r;
	}
}

void shim_hostfn_api(int cbid, const void *data)
{
	struct shim_api_call call;

	/* (a call that fails keeps its record: whether the driver queued nothing then is not said,
	 * and a record freed under a function queued after all could be claimed again) */
	if (shim_api_call(cbid, data, &call) || call.site != NVT_CB_API_SITE_ENTER)
		return;
	entered(cbid, (void *)(uintptr_t)call.args);
}

void shim_hostfn_setup(nvt_cb_enable_fn enable, uint32_t handle)
{
	if (!shim_yield_tracking)
		return;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		shim_calls_follow(&shim_hostfn_calls, enable, handle, ids[i]);
}

void shim_hostfn_after_fork(void)
{
	/* The parent's host functions do not run in the child: none of its records is taken. */
	memset(records, 0, sizeof(records));
}
