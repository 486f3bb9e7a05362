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
 * on entry and on return. cuStreamWaitValue32 (EQ) holds a stream's later
 * work until the word equals its value, as the GPU does: its launches queue
 * behind it, and synchronisations and queries wait for it to be met
 * (fakecuda_waits counts the calls); cuMemHostAlloc gives the pages such a
 * word lives in.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakecuda.h"
#include "fakeint.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define STREAMS 64
#define EVENTS 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* A stream: busy until busy_until; with wait_addr, its later work waits until the word there
 * equals wait_val (cuStreamWaitValue32), pending_ns of it queued behind the wait. */
struct sstate {
	const void *handle;
	uint64_t busy_until;
	const volatile uint32_t *wait_addr;
	uint32_t wait_val;
	uint64_t pending_ns;
};
static struct sstate streams[STREAMS];
static int n_streams;
static struct {
	int used;
	uint64_t done_at;
	const volatile uint32_t *wait_addr; /* recorded behind a wait not yet met */
	uint32_t wait_val;
	uint64_t after_ns;                  /* its stream's work queued behind that wait */
} events[EVENTS];
static __thread struct sstate per_thread;
static uint64_t n_waits; /* cuStreamWaitValue32 calls (atomic) */

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

static void nap(void)
{
	struct timespec ts = {0, 50000};
	nanosleep(&ts, NULL);
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

/* The state of a stream handle (under lock). */
static struct sstate *state_of(const void *stream)
{
	if ((uintptr_t)stream == 2)
		return &per_thread;
	if ((uintptr_t)stream == 1)
		stream = NULL;
	for (int i = 0; i < n_streams; i++)
		if (streams[i].handle == stream)
			return &streams[i];
	if (n_streams == STREAMS)
		return &streams[0];
	streams[n_streams].handle = stream;
	return &streams[n_streams++];
}

/* 1 while st's wait is not met (under lock); a wait met now lets its queued work start now. */
static int waiting(struct sstate *st, uint64_t now)
{
	if (!st->wait_addr)
		return 0;
	if (__atomic_load_n(st->wait_addr, __ATOMIC_ACQUIRE) != st->wait_val)
		return 1;
	st->busy_until = (st->busy_until > now ? st->busy_until : now) + st->pending_ns;
	st->wait_addr = NULL;
	st->pending_ns = 0;
	return 0;
}

/* FAKECUDA_QUEUE=N: at most N launches queue behind a wait not met; the next launch call, or
 * wait, blocks until it is met, as the driver's calls block when a channel's queue is full
 * (default: no limit). */
static uint64_t queue_max(void)
{
	static long n = -1;
	if (n < 0) {
		const char *v = getenv("FAKECUDA_QUEUE");
		n = v && *v ? strtol(v, NULL, 10) : 0;
		if (n < 0)
			n = 0;
	}
	return (uint64_t)n;
}

/* Blocks while the stream's queue behind a wait not met is full (FAKECUDA_QUEUE). */
static void queue_room(const void *stream)
{
	uint64_t max = queue_max() * kernel_ns();

	for (int full = 1; max && full;) {
		pthread_mutex_lock(&lock);
		full = waiting(state_of(stream), now_ns()) && state_of(stream)->pending_ns >= max;
		pthread_mutex_unlock(&lock);
		if (full)
			nap();
	}
}

INTERNAL void fake_stream_ran(const void *stream)
{
	struct sstate *st;
	uint64_t now;

	queue_room(stream);
	now = now_ns();
	pthread_mutex_lock(&lock);
	st = state_of(stream);
	if (waiting(st, now))
		st->pending_ns += kernel_ns();
	else
		st->busy_until = (st->busy_until > now ? st->busy_until : now) + kernel_ns();
	pthread_mutex_unlock(&lock);
}

/* When a stream's work is done; waits for a wait it has to be met. */
static uint64_t stream_done_at(const void *stream)
{
	uint64_t t;
	int w;

	for (;;) {
		pthread_mutex_lock(&lock);
		struct sstate *st = state_of(stream);
		w = waiting(st, now_ns());
		t = st->busy_until;
		pthread_mutex_unlock(&lock);
		if (!w)
			return t;
		nap();
	}
}

/* 1 if a stream's work is not done yet (a wait not met, or work running). */
static int stream_busy(const void *stream)
{
	uint64_t now = now_ns();
	int busy;

	pthread_mutex_lock(&lock);
	struct sstate *st = state_of(stream);
	busy = waiting(st, now) || st->busy_until > now;
	pthread_mutex_unlock(&lock);
	return busy;
}

/* When every stream of this process (and this thread's own) is done. */
static uint64_t all_done_at(void)
{
	uint64_t t;
	int w;

	for (;;) {
		uint64_t now = now_ns();
		pthread_mutex_lock(&lock);
		w = waiting(&per_thread, now);
		t = per_thread.busy_until;
		for (int i = 0; i < n_streams; i++) {
			w |= waiting(&streams[i], now);
			if (streams[i].busy_until > t)
				t = streams[i].busy_until;
		}
		pthread_mutex_unlock(&lock);
		if (!w)
			return t;
		nap();
	}
}

API uint64_t fakecuda_done_at(const void *stream)
{
	return stream_done_at(stream);
}

API int fakecuda_in_flight(const void *stream)
{
	uint64_t until, now = now_ns(), k = kernel_ns(), queued;
	int w;

	pthread_mutex_lock(&lock);
	struct sstate *st = state_of(stream);
	w = waiting(st, now);
	until = st->busy_until;
	queued = st->pending_ns;
	pthread_mutex_unlock(&lock);
	if (!k)
		return 0;
	return (int)((until > now ? (until - now + k - 1) / k : 0) + (w ? queued / k : 0));
}

/* Calls of cuStreamWaitValue32 so far, and 1 if a stream's work waits on one not met. */
API uint64_t fakecuda_waits(void)
{
	return __atomic_load_n(&n_waits, __ATOMIC_RELAXED);
}

API int fakecuda_waiting(const void *stream)
{
	int w;

	pthread_mutex_lock(&lock);
	w = waiting(state_of(stream), now_ns());
	pthread_mutex_unlock(&lock);
	return w;
}

#define CALL(cbid, work)                                                \
	CUresult result = NVT_CUDA_ERROR_UNKNOWN;                       \
	fake_api_callbacks((cbid), NVT_CB_API_SITE_ENTER, &result, &a); \
	result = fake_ready() ? (work) : 3;                             \
	fake_api_callbacks((cbid), NVT_CB_API_SITE_EXIT, &result, &a);  \
	return result

static CUresult event_create(void **ev)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < EVENTS; i++)
		if (!events[i].used) {
			events[i].used = 1;
			events[i].done_at = 0;
			events[i].wait_addr = NULL;
			*ev = &events[i];
			pthread_mutex_unlock(&lock);
			return 0;
		}
	pthread_mutex_unlock(&lock);
	return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}

static int event_index(const void *ev)
{
	uintptr_t at = (uintptr_t)ev, base = (uintptr_t)&events[0];

	if (at < base || at >= base + sizeof(events) || (at - base) % sizeof(events[0]) ||
	    !events[(at - base) / sizeof(events[0])].used)
		return -1;
	return (int)((at - base) / sizeof(events[0]));
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
		return NVT_CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	struct sstate *st = state_of(stream);
	events[i].wait_addr = NULL;
	if (waiting(st, now_ns())) {
		/* Behind a wait not met: done once it is, and the work queued behind it ran. */
		events[i].wait_addr = st->wait_addr;
		events[i].wait_val = st->wait_val;
		events[i].after_ns = st->pending_ns;
	}
	events[i].done_at = st->busy_until;
	pthread_mutex_unlock(&lock);
	return 0;
}

/* 1 while event i waits behind a wait not met (under lock). */
static int event_waiting(int i, uint64_t now)
{
	if (!events[i].wait_addr)
		return 0;
	if (__atomic_load_n(events[i].wait_addr, __ATOMIC_ACQUIRE) != events[i].wait_val)
		return 1;
	events[i].done_at = (events[i].done_at > now ? events[i].done_at : now) + events[i].after_ns;
	events[i].wait_addr = NULL;
	return 0;
}

API CUresult cuEventRecord(void *hEvent, void *hStream)
{
	struct { void *hEvent; void *hStream; } a = {hEvent, hStream};
	CALL(NVT_CBID_cuEventRecord, event_record(a.hEvent, a.hStream));
}

static CUresult event_query(void *ev)
{
	int i = event_index(ev);

	if (i < 0)
		return NVT_CUDA_ERROR_INVALID_HANDLE;
	uint64_t now = now_ns();
	int w;

	pthread_mutex_lock(&lock);
	w = event_waiting(i, now);
	pthread_mutex_unlock(&lock);
	return !w && now >= events[i].done_at ? 0 : NVT_CUDA_ERROR_NOT_READY;
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
		return NVT_CUDA_ERROR_INVALID_HANDLE;
	for (;;) {
		int w;
		pthread_mutex_lock(&lock);
		w = event_waiting(i, now_ns());
		pthread_mutex_unlock(&lock);
		if (!w)
			break;
		nap();
	}
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
		return NVT_CUDA_ERROR_INVALID_HANDLE;
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
	struct { void *hStream; } a = {hStream ? hStream : NVT_CU_STREAM_PER_THREAD};
	CALL(NVT_CBID_cuStreamSynchronize_ptsz, stream_sync(a.hStream));
}

API CUresult cuStreamQuery(void *hStream)
{
	struct { void *hStream; } a = {hStream};
	CALL(NVT_CBID_cuStreamQuery, stream_busy(a.hStream) ? NVT_CUDA_ERROR_NOT_READY : 0);
}

API CUresult cuStreamQuery_ptsz(void *hStream)
{
	struct { void *hStream; } a = {hStream ? hStream : NVT_CU_STREAM_PER_THREAD};
	CALL(NVT_CBID_cuStreamQuery_ptsz, stream_busy(a.hStream) ? NVT_CUDA_ERROR_NOT_READY : 0);
}

static CUresult ctx_sync(void)
{
	sleep_until(all_done_at());
	fake_membw_sync();
	return 0;
}

API CUresult cuCtxSynchronize(void)
{
	struct { int none; } a = {0};
	CALL(NVT_CBID_cuCtxSynchronize, ctx_sync());
}

/* ---- Waits on memory, and the pinned host memory they wait on ---------------------------- */

#define HOST_PAGES 16
static void *host_pages[HOST_PAGES];

/* cuMemHostAlloc: zeroed pages; the device sees them at the same address (unified). */
API CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned flags)
{
	void *p;

	(void)flags;
	if (!pp || !bytes || bytes > (1u << 20))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (!fake_ready())
		return 3;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < HOST_PAGES; i++)
		if (!host_pages[i]) {
			host_pages[i] = p;
			break;
		}
	pthread_mutex_unlock(&lock);
	*pp = p;
	return 0;
}

API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *dptr, void *p, unsigned flags)
{
	int known = 0;

	if (!dptr || flags)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < HOST_PAGES; i++)
		known |= host_pages[i] && host_pages[i] == p;
	pthread_mutex_unlock(&lock);
	if (!known)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return 0;
}

/* cuStreamWaitValue32 (EQ only): the stream's later work waits until the word equals value.
 * FAKECUDA_WAIT_FAILS=1: it fails, as a driver without stream memory operations would. */
API CUresult cuStreamWaitValue32_v2(void *hStream, CUdeviceptr addr, uint32_t value, unsigned flags)
{
	const char *fails = getenv("FAKECUDA_WAIT_FAILS");

	if (fails && *fails == '1')
		return 801; /* CUDA_ERROR_NOT_SUPPORTED */
	if (!addr || (addr & 3) || flags != NVT_CU_STREAM_WAIT_VALUE_EQ)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (!fake_ready())
		return 3;
	queue_room(hStream); /* a wait is queued as a launch is */
	__atomic_add_fetch(&n_waits, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&lock);
	struct sstate *st = state_of(hStream);
	if (!waiting(st, now_ns())) {
		st->wait_addr = (const volatile uint32_t *)(uintptr_t)addr;
		st->wait_val = value;
		st->pending_ns = 0;
		(void)waiting(st, now_ns()); /* met at once: nothing waits */
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

API CUresult cuStreamIsCapturing(void *hStream, int *status)
{
	(void)hStream;
	if (!status)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	*status = NVT_CU_STREAM_CAPTURE_STATUS_NONE;
	return 0;
}
