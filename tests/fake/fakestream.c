/*
 * fakestream.c - time on the fake GPU: streams, events and synchronisation.
 *
 * With FAKECUDA_KERNEL_US=N (default 0: every launch is done when its call
 * returns, as before), each launch and each graph replay occupies its stream
 * for N microseconds of CLOCK_MONOTONIC after the stream's earlier work: the
 * stream is busy until then. An event recorded on a stream is done when the
 * stream's work before it is; cuEventQuery says CUDA_ERROR_NOT_READY
 * until then, cuEventSynchronize, cuStreamSynchronize and cuCtxSynchronize
 * sleep until the work they wait for is done. Streams are per process, by
 * handle: NULL and the legacy handle (0x1) are one stream, the per-thread
 * handle (0x2) one per thread. These calls invoke the driver-API callbacks of
 * their ids (src/gpu/cuda_driver.h's, CUPTI's numbering as on the H100),
 * on entry and on return.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakecuda.h"
#include "fakeint.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STREAMS 1024
#define EVENTS 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Each stream, of the GPU whose context it is used in (the legacy stream, NULL: one a GPU). */
static struct {
	const void *handle;
	int dev;
	int gone; /* destroyed: its work still counts for its context's synchronisation */
	uint64_t busy_until;
} streams[STREAMS];
static int n_streams;
static struct {
	int used;
	uint64_t done_at;
	const void *ctx;           /* the context it was made in, and that context's id */
	unsigned long long key;
} events[EVENTS];
#define STREAM_DEVICES 8 /* fakecuda.c's MAX_DEVICES */
static __thread uint64_t per_thread_busy[STREAM_DEVICES]; /* this thread's own stream's, a GPU */

/* The current context's GPU, as this file keeps them. */
static int stream_dev(void)
{
	int d = fake_device();

	return d >= 0 && d < STREAM_DEVICES ? d : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	uint64_t now = now_ns();
	if (t > now) {
		struct timespec ts = {(time_t)((t - now) / 1000000000u), (long)((t - now) % 1000000000u)};
		nanosleep(&ts, NULL);
	}
}

static uint64_t kernel_ns(void)
{
	static long us = -1;
	if (us < 0) {
		const char *v = getenv("FAKECUDA_KERNEL_US");
		us = v && *v ? strtol(v, NULL, 10) : 0;
		if (us < 0)
			us = 0;
	}
	return (uint64_t)us * 1000;
}

/* The busy-until word of a stream handle (under lock): the current context's legacy or
 * per-thread stream, or a stream made in a context (kept with the GPU it is first used on). */
static uint64_t *busy_of(const void *stream)
{
	int dev = stream_dev();

	if ((uintptr_t)stream == 2)
		return &per_thread_busy[dev];
	if ((uintptr_t)stream == 1)
		stream = NULL;
	int i, now_free = -1;
	uint64_t now = now_ns();

	for (i = 0; i < n_streams; i++) {
		if (!streams[i].gone && streams[i].handle == stream && (stream || streams[i].dev == dev))
			return &streams[i].busy_until;
		if (streams[i].gone && streams[i].busy_until <= now)
			now_free = i;
	}
	if (now_free < 0 && n_streams == STREAMS) { /* (more than any test keeps) */
		fprintf(stderr, "fakecuda: more than %d streams with work\n", STREAMS);
		abort();
	}
	i = now_free >= 0 ? now_free : n_streams++;
	streams[i].handle = stream;
	streams[i].dev = dev;
	streams[i].gone = 0;
	streams[i].busy_until = 0;
	return &streams[i].busy_until;
}

INTERNAL void fake_stream_forget(const void *stream)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < n_streams; i++)
		if (stream && !streams[i].gone && streams[i].handle == stream)
			streams[i].gone = 1;
	pthread_mutex_unlock(&lock);
}

static uint64_t dry_ns; /* fake_stream_dry's, for the next launch (under lock) */

INTERNAL void fake_stream_dry(uint64_t ns)
{
	pthread_mutex_lock(&lock);
	dry_ns += ns;
	pthread_mutex_unlock(&lock);
}

INTERNAL void fake_stream_ran(const void *stream)
{
	uint64_t *busy, now = now_ns();

	pthread_mutex_lock(&lock);
	busy = busy_of(stream);
	*busy = (*busy > now ? *busy : now) + kernel_ns() + dry_ns;
	dry_ns = 0;
	pthread_mutex_unlock(&lock);
}

static uint64_t stream_done_at(const void *stream)
{
	uint64_t t;

	pthread_mutex_lock(&lock);
	t = *busy_of(stream);
	pthread_mutex_unlock(&lock);
	return t;
}

/* When every stream of the current context (and this thread's own there) is done: a context
 * synchronisation waits for its own context's work only. */
static uint64_t all_done_at(void)
{
	int dev = stream_dev();
	uint64_t t = per_thread_busy[dev];

	pthread_mutex_lock(&lock);
	for (int i = 0; i < n_streams; i++)
		if (streams[i].dev == dev && streams[i].busy_until > t)
			t = streams[i].busy_until;
	pthread_mutex_unlock(&lock);
	return t;
}

INTERNAL uint64_t fake_context_done_at(void)
{
	return all_done_at();
}

API uint64_t fakecuda_done_at(const void *stream)
{
	return stream_done_at(stream);
}

API int fakecuda_in_flight(const void *stream)
{
	uint64_t until = stream_done_at(stream), now = now_ns(), k = kernel_ns();

	if (!k || until <= now)
		return 0;
	return (int)((until - now + k - 1) / k);
}

#define CALL FAKE_API_CALL

/* FAKECUDA_EVENT_LOG=PATH: a line "event pid=PID" appended for each event made (tests count a
 * program's events: none left behind per context). */
static void event_log(void)
{
	FILE *f = getenv("FAKECUDA_EVENT_LOG") ? fopen(getenv("FAKECUDA_EVENT_LOG"), "a") : NULL;

	if (f) {
		fprintf(f, "event pid=%ld\n", (long)getpid());
		fclose(f);
	}
}

static CUresult event_create(void **ev)
{
	event_log();
	pthread_mutex_lock(&lock);
	for (int i = 0; i < EVENTS; i++)
		if (!events[i].used || fake_ctx_gone(events[i].ctx, events[i].key)) { /* (gone with it) */
			events[i].used = 1;
			events[i].done_at = 0;
			events[i].key = fake_current_key(&events[i].ctx);
			*ev = &events[i];
			pthread_mutex_unlock(&lock);
			return 0;
		}
	pthread_mutex_unlock(&lock);
	return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}

/* ev's index, or -1 for a handle that is not an event's, or -2 for one whose context went (a
 * stale handle: FAKECUDA_STALE_ABORT=1 dies of it, as a program may on the real driver). */
static int event_index(const void *ev)
{
	uintptr_t at = (uintptr_t)ev, base = (uintptr_t)&events[0];
	int i;

	if (at < base || at >= base + sizeof(events) || (at - base) % sizeof(events[0]) ||
	    !events[(at - base) / sizeof(events[0])].used)
		return -1;
	i = (int)((at - base) / sizeof(events[0]));
	if (fake_ctx_gone(events[i].ctx, events[i].key)) {
		if (getenv("FAKECUDA_STALE_ABORT")) {
			fprintf(stderr, "fakecuda: an event of a destroyed context used\n");
			abort();
		}
		return -2;
	}
	return i;
}

/* What the driver answers for an event event_index refused: 709 (CUDA_ERROR_CONTEXT_IS_DESTROYED)
 * for one whose context went (an H100's answer to a query and a record after a reset:
 * docs/hardware-facts.md), else 400. */
static CUresult event_refused(int i)
{
	return i == -2 ? NVT_CUDA_ERROR_CONTEXT_IS_DESTROYED : NVT_CUDA_ERROR_INVALID_HANDLE;
}

API CUresult cuEventCreate(void **phEvent, unsigned Flags)
{
	struct { void **phEvent; unsigned Flags; } a = {phEvent, Flags};
	CALL(NVT_CBID_cuEventCreate, phEvent ? event_create(phEvent) : NVT_CUDA_ERROR_INVALID_VALUE);
}

static CUresult event_record(void *ev, void *stream)
{
	int i = event_index(ev);

	if (i < 0)
		return event_refused(i);
	events[i].done_at = stream_done_at(stream);
	return 0;
}

API CUresult cuEventRecord(void *hEvent, void *hStream)
{
	struct { void *hEvent; void *hStream; } a = {hEvent, hStream};
	CALL(NVT_CBID_cuEventRecord, event_record(a.hEvent, a.hStream));
}

API CUresult cuEventRecord_ptsz(void *hEvent, void *hStream)
{
	/* (the callbacks see the stream as the call named it: 0, this thread's default stream) */
	struct { void *hEvent; void *hStream; } a = {hEvent, hStream};
	CALL(NVT_CBID_cuEventRecord_ptsz, event_record(a.hEvent, PTSZ(a.hStream)));
}

/* (flags: CU_EVENT_RECORD_DEFAULT, or EXTERNAL, which only a graph's capture tells apart) */
API CUresult cuEventRecordWithFlags(void *hEvent, void *hStream, unsigned flags)
{
	struct { void *hEvent; void *hStream; unsigned flags; } a = {hEvent, hStream, flags};
	CALL(NVT_CBID_cuEventRecordWithFlags, flags > 1 ? NVT_CUDA_ERROR_INVALID_VALUE : event_record(a.hEvent, a.hStream));
}

API CUresult cuEventRecordWithFlags_ptsz(void *hEvent, void *hStream, unsigned flags)
{
	struct { void *hEvent; void *hStream; unsigned flags; } a = {hEvent, hStream, flags};
	CALL(NVT_CBID_cuEventRecordWithFlags_ptsz,
	     flags > 1 ? NVT_CUDA_ERROR_INVALID_VALUE : event_record(a.hEvent, PTSZ(a.hStream)));
}

static CUresult event_query(void *ev)
{
	int i = event_index(ev);

	if (i < 0)
		return event_refused(i);
	fake_bridge_waiting(1);
	return now_ns() >= events[i].done_at ? 0 : NVT_CUDA_ERROR_NOT_READY;
}

API CUresult cuEventQuery(void *hEvent)
{
	struct { void *hEvent; } a = {hEvent};
	CALL(NVT_CBID_cuEventQuery, event_query(a.hEvent));
}

static CUresult event_sync(void *ev)
{
	int i = event_index(ev);

	if (i < 0)
		return event_refused(i);
	sleep_until(events[i].done_at);
	return 0;
}

API CUresult cuEventSynchronize(void *hEvent)
{
	struct { void *hEvent; } a = {hEvent};
	CALL(NVT_CBID_cuEventSynchronize, event_sync(a.hEvent));
}

static CUresult event_destroy(void *ev)
{
	int i = event_index(ev);

	if (i < 0)
		return event_refused(i);
	events[i].used = 0;
	return 0;
}

API CUresult cuEventDestroy_v2(void *hEvent)
{
	struct { void *hEvent; } a = {hEvent};
	CALL(NVT_CBID_cuEventDestroy_v2, event_destroy(a.hEvent));
}

static CUresult stream_sync(const void *stream)
{
	fake_bridge_waiting(0);
	sleep_until(stream_done_at(stream));
	return 0;
}

API CUresult cuStreamSynchronize(void *hStream)
{
	struct { void *hStream; } a = {hStream};
	CALL(NVT_CBID_cuStreamSynchronize, stream_sync(a.hStream));
}

API CUresult cuStreamSynchronize_ptsz(void *hStream)
{
	struct { void *hStream; } a = {hStream};
	CALL(NVT_CBID_cuStreamSynchronize_ptsz, stream_sync(PTSZ(a.hStream)));
}

static CUresult stream_query(const void *stream)
{
	fake_bridge_waiting(1);
	return now_ns() >= stream_done_at(stream) ? 0 : NVT_CUDA_ERROR_NOT_READY;
}

API CUresult cuStreamQuery(void *hStream)
{
	struct { void *hStream; } a = {hStream};
	CALL(NVT_CBID_cuStreamQuery, stream_query(a.hStream));
}

API CUresult cuStreamQuery_ptsz(void *hStream)
{
	struct { void *hStream; } a = {hStream};
	CALL(NVT_CBID_cuStreamQuery_ptsz, stream_query(PTSZ(a.hStream)));
}

/* The work queued before the call began (after its callbacks): not what another thread queues
 * after (H100, docs/hardware-facts.md); a bridge queued before then is taken in, to its cap (the
 * bridge then ends, its record written). FAKECUDA_CTXSYNC_US=N: each lasts N us more, as one
 * that took in a bridge queued too soon would, until the bridge's cap; the first M of the
 * process only with FAKECUDA_CTXSYNC_FIRST=M. */
static CUresult ctx_sync(void)
{
	static unsigned long calls;
	const char *more = getenv("FAKECUDA_CTXSYNC_US"), *first = getenv("FAKECUDA_CTXSYNC_FIRST");
	unsigned long call = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	uint64_t in;

	/* (the measure at once after the callbacks, as the H100's: the test's log after it) */
	in = fake_bridge_measured_until();
	fake_bridge_waiting(0);
	sleep_until(all_done_at());
	if (in) {
		sleep_until(in);
		fake_bridge_taken_in();
	} else if (more && *more && (!first || !*first || call <= strtoul(first, NULL, 10))) {
		sleep_until(now_ns() + (uint64_t)strtoul(more, NULL, 10) * 1000);
		fake_bridge_taken_in();
	}
	fake_membw_sync();
	return 0;
}

API CUresult cuCtxSynchronize(void)
{
	struct { int none; } a = {0};
	CALL(NVT_CBID_cuCtxSynchronize, ctx_sync());
}

/* ---- Copies to the host on a stream ---------------------------------------------------------- */

/* The copy (after the entry callbacks, with the arguments as they left them): done at once
 * (the fake GPU's memory is the host's), logged to $FAKECUDA_BRIDGE_LOG as the driver's. */
static CUresult copy_async(NVT_MEMCPY_ASYNC_ARGS *a)
{
	const char *path = getenv("FAKECUDA_BRIDGE_LOG");
	FILE *log;

	if (!a->bytes)
		return 0; /* as the driver: nothing queued */
	if (!a->dst || !a->src)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	memcpy((void *)(uintptr_t)a->dst, (const void *)(uintptr_t)a->src, a->bytes);
	if (path && (log = fopen(path, "a"))) {
		fprintf(log, "memcpy pid=%ld bytes=%zu stream=%p\n", (long)getpid(), a->bytes, (void *)a->stream);
		fclose(log);
	}
	fake_stream_ran(a->stream);
	return 0;
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, void *hStream)
{
	NVT_MEMCPY_ASYNC_ARGS a = {(CUdeviceptr)(uintptr_t)dst, src, bytes, hStream};
	CALL(NVT_CBID_cuMemcpyDtoHAsync_v2, copy_async(&a));
}

API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t bytes, void *hStream)
{
	/* The callbacks see the stream as the call named it (0: this thread's default stream). */
	NVT_MEMCPY_ASYNC_ARGS a = {(CUdeviceptr)(uintptr_t)dst, src, bytes, hStream};
	CALL(NVT_CBID_cuMemcpyDtoHAsync_v2_ptsz, copy_async(&a));
}

API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, void *hStream)
{
	NVT_MEMCPY_ASYNC_ARGS a = {dst, src, bytes, hStream};
	CALL(NVT_CBID_cuMemcpyAsync, copy_async(&a));
}

API CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t bytes, void *hStream)
{
	NVT_MEMCPY_ASYNC_ARGS a = {dst, src, bytes, hStream};
	CALL(NVT_CBID_cuMemcpyAsync_ptsz, copy_async(&a));
}

/* Nothing captures here, unless FAKECUDA_CAPTURING=1: then every stream a program can capture
 * on captures, in the global mode (each stream cuStreamCreate made and each thread's per-thread
 * stream, 0x2), and the legacy stream (NULL, 0x1) captures nothing, as on the real driver; a
 * query of it answers CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (906), as the real driver's does
 * while a blocking stream of its context captures. Only this query sees the capture: work
 * queued on any stream runs as without it. */
API CUresult cuStreamIsCapturing(void *hStream, int *status)
{
	const char *c = getenv("FAKECUDA_CAPTURING");
	int capturing = c && !strcmp(c, "1");

	if (!status)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	*status = 0;
	if (capturing && (!hStream || hStream == NVT_CU_STREAM_LEGACY))
		return 906;
	*status = capturing;
	return 0;
}
