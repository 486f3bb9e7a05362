/*
 * shimhostfn.c - the program learns that its work is done without a synchronisation, and its
 * request ends (docs/priorities.md, "Yielding"). A task that waits for its work by a host
 * function or by polling an event never returns from a synchronisation, so its request would
 * look open for good, and lower tasks would take it for one that never idles (their share of
 * the GPU, core/yield.h: ~2 ms added to each of its steps).
 *
 * Host functions (cuLaunchHostFunc, cuStreamAddCallback: JAX waits so for each step, and then
 * makes no driver call until its next launch). At the call's entry the shim puts its own
 * function in the program's place, with a record of the program's function and data; when the
 * driver's thread runs it (the work queued before it is done) and no launch of the task's came
 * since it was queued, the task's request on that GPU ends (a callback of cuStreamAddCallback's
 * only with a success status); then the program's function runs. Records come from a fixed
 * pool: with none free (256 queued and not yet run, or lost to calls that failed), or on a
 * stream being captured into a graph (its host node would run the record again at every
 * replay), the call is left as the program made it. A task that queued a host function has its
 * copies done by the driver from then on (shimbridge.h, shim_bridge_copies_off).
 *
 * Event queries (a loop of cuEventQuery, as a service that polls for its step's end). At each
 * cuEventRecord[WithFlags][_ptsz] that succeeds the shim notes the event, its GPU slot and the
 * slot's launches then, in a table of 64 kept by the event's handle (a newer record takes an
 * older one's place); a cuEventQuery that answers success ends the request where the event's
 * note says that no launch came since its record. An event recorded before the task's last
 * launch (a caching allocator's, a step queued ahead) ends none, nor one whose note was taken
 * by another. The shim's own events (shimyield.c's) are not noted. A polled event is also a
 * wait to bridge: a query of such an event that answers "not ready" may begin it (the thread's
 * second in a row, or its first after a loop of close looks: core/bridge.h's
 * nvt_bridge_poll_look), and the query that answers success returns from it (shim_yield_polled).
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
#define EVENTS 64   /* events whose last record is noted (a power of two) */

struct record {
	int used;                      /* claimed (atomic) */
	int g;                         /* its GPU slot */
	uint64_t launches;             /* the slot's launches when it was queued */
	nvt_host_fn fn;                /* the program's (cuLaunchHostFunc) */
	nvt_stream_callback callback;  /* or (cuStreamAddCallback) */
	void *user;
};

/* An event's last record: written under an odd seq, read where seq was even and unchanged. */
struct event_note {
	unsigned seq;
	void *ev;
	int g;
	uint64_t launches;
};

static struct record records[RECORDS];
static unsigned next_record;
static struct event_note notes[EVENTS];
struct shim_calls shim_hostfn_calls;

static const int ids[] = {
	NVT_CBID_cuLaunchHostFunc,	  NVT_CBID_cuLaunchHostFunc_ptsz,   NVT_CBID_cuStreamAddCallback,
	NVT_CBID_cuStreamAddCallback_ptsz, NVT_CBID_cuEventRecord,	     NVT_CBID_cuEventRecord_ptsz,
	NVT_CBID_cuEventRecordWithFlags,	  NVT_CBID_cuEventRecordWithFlags_ptsz, NVT_CBID_cuEventQuery,
	NVT_CBID_cuEventDestroy_v2,		  NVT_CBID_cuEventDestroy,
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

/* ---- Event queries ------------------------------------------------------------------------ */

static struct event_note *note_of(const void *ev)
{
	uintptr_t h = (uintptr_t)ev;

	return &notes[((h >> 4) ^ (h >> 12)) & (EVENTS - 1)];
}

/* The launch count of the record this thread is in (read at its entry: a launch of another
 * thread while the driver queues the record is not taken for one before it). */
static __thread struct {
	int g; /* its slot + 1 (0: none, as a thread's first value) */
	uint64_t launches;
} rec __attribute__((tls_model("initial-exec")));

/* Writes note n (event ev, slot g, its launches): skipped while another thread writes it (that
 * event then ends no request). ev NULL: the note is of no event; was: where not NULL, only if the
 * note is of event was (a destroyed event's, not another's written since). */
static void note_write(struct event_note *n, void *ev, int g, uint64_t launches, const void *was)
{
	unsigned seq = __atomic_load_n(&n->seq, __ATOMIC_RELAXED);

	if ((seq & 1) || !__atomic_compare_exchange_n(&n->seq, &seq, seq + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	/* (the fields' stores after the odd seq's, for weakly ordered processors) */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (was && __atomic_load_n(&n->ev, __ATOMIC_RELAXED) != was) {
		__atomic_store_n(&n->seq, seq + 2, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&n->ev, ev, __ATOMIC_RELAXED);
	__atomic_store_n(&n->g, g, __ATOMIC_RELAXED);
	__atomic_store_n(&n->launches, launches, __ATOMIC_RELAXED);
	__atomic_store_n(&n->seq, seq + 2, __ATOMIC_RELEASE);
}

/* The slot of event ev's note (its launches then in *launches), or -1 without one. */
static int note_slot(const void *ev, uint64_t *launches)
{
	const struct event_note *n = note_of(ev);
	unsigned seq = __atomic_load_n(&n->seq, __ATOMIC_ACQUIRE);
	const void *noted = __atomic_load_n(&n->ev, __ATOMIC_RELAXED);
	int g = __atomic_load_n(&n->g, __ATOMIC_RELAXED);

	*launches = __atomic_load_n(&n->launches, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if ((seq & 1) || seq != __atomic_load_n(&n->seq, __ATOMIC_RELAXED) || !ev || noted != ev || g < 0 ||
	    g >= NVT_MAX_GPUS)
		return -1;
	return g;
}

/* A query of event ev answered (done: success, else not ready): a wait begun or returned from
 * (shim_yield_polled), and the request ended where the event was recorded after the last launch. */
static void queried(const void *ev, int done)
{
	uint64_t noted;
	int g = note_slot(ev, &noted);

	if (g >= 0 && shim_yield_polled(g, ev, noted, done))
		shim_yield_ended(g);
}

static void event_api(int cbid, const struct shim_api_call *call)
{
	void *ev = call->args[0], *ctx = NULL;

	if (shim_yield_own_call() || !ev)
		return;
	if (cbid == NVT_CBID_cuEventDestroy_v2 || cbid == NVT_CBID_cuEventDestroy) {
		/* (a new event at its address, never recorded, answers success: not this one's note) */
		if (call->site == NVT_CB_API_SITE_ENTER)
			note_write(note_of(ev), NULL, -1, 0, ev);
		return;
	}
	if (cbid == NVT_CBID_cuEventQuery) {
		if (call->site == NVT_CB_API_SITE_EXIT && (call->result == 0 || call->result == NVT_CUDA_ERROR_NOT_READY))
			queried(ev, call->result == 0);
		return;
	}
	if (call->site == NVT_CB_API_SITE_ENTER) {
		int g = shim_cu.ctx_current && shim_cu.ctx_current(&ctx) == 0 && ctx ? shim_slot_of_ctx(ctx) : -1;
		rec.g = g + 1;
		if (g < 0)
			return;
		/* (a record queued while this thread's polled wait's bridge runs does not wait for the
		 * bridge on the GPU: an H100's, docs/hardware-facts.md) */
		rec.launches = nvt_slot_launches(&shim.seg->gpu[g]);
		return;
	}
	if (call->result == 0 && rec.g > 0)
		note_write(note_of(ev), ev, rec.g - 1, rec.launches, NULL);
	rec.g = 0;
}

static int event_call(int cbid)
{
	return cbid == NVT_CBID_cuEventQuery || cbid == NVT_CBID_cuEventRecord || cbid == NVT_CBID_cuEventRecord_ptsz ||
	       cbid == NVT_CBID_cuEventRecordWithFlags || cbid == NVT_CBID_cuEventRecordWithFlags_ptsz ||
	       cbid == NVT_CBID_cuEventDestroy_v2 || cbid == NVT_CBID_cuEventDestroy;
}

void shim_hostfn_api(int cbid, const void *data)
{
	struct shim_api_call call;

	if (shim_api_call(cbid, data, &call))
		return;
	if (event_call(cbid)) {
		event_api(cbid, &call);
		return;
	}
	/* (a call that fails keeps its record: whether the driver queued nothing then is not said,
	 * and a record freed under a function queued after all could be claimed again) */
	if (call.site != NVT_CB_API_SITE_ENTER)
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
	/* The parent's host functions do not run in the child: none of its records is taken; its
	 * events are the parent's (a query of one in the child fails). */
	memset(records, 0, sizeof(records));
	memset(notes, 0, sizeof(notes));
}
