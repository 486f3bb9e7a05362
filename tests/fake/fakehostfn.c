/*
 * fakehostfn.c - host functions on the fake driver's streams: cuLaunchHostFunc[_ptsz] and
 * cuStreamAddCallback[_ptsz] (callback ids 527, 528, 346, 437) run the function the entry
 * callbacks left in the arguments (the shim puts its own there: src/shim/shimhostfn.c) on a
 * thread of their own once the stream's work queued before it is done (fakestream.c's time);
 * the stream's later work does not wait for it. FAKECUDA_CALLBACK_STATUS=N: stream callbacks get
 * status N (the real driver's, where the stream's work failed), else 0.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakecuda.h"
#include "fakeint.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

uint64_t fakecuda_done_at(const void *stream); /* fakestream.c: when its work queued so far is done */

#define CALL FAKE_API_CALL

static void sleep_until(uint64_t t)
{
	struct timespec now;
	uint64_t n;

	clock_gettime(CLOCK_MONOTONIC, &now);
	n = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (t > n) {
		struct timespec ts = {(time_t)((t - n) / 1000000000u), (long)((t - n) % 1000000000u)};
		nanosleep(&ts, NULL);
	}
}

struct hostfn {
	void (*fn)(void *);
	void (*callback)(void *, int, void *);
	void *stream, *data;
	uint64_t at;
};

static void *hostfn_run(void *p)
{
	struct hostfn h = *(struct hostfn *)p;

	free(p);
	sleep_until(h.at);
	if (h.fn) {
		h.fn(h.data);
	} else {
		const char *st = getenv("FAKECUDA_CALLBACK_STATUS");
		h.callback(h.stream, st ? (int)strtol(st, NULL, 10) : 0, h.data);
	}
	return NULL;
}

/* The function (fn or callback, with the arguments as the entry callbacks left them) on a thread
 * of the driver's once the work queued on stream before it is done; the stream's later work does
 * not wait for it here. */
static CUresult host_func(void *stream, void (*fn)(void *), void (*callback)(void *, int, void *),
			  void *data)
{
	struct hostfn *h;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (!fn && !callback)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (!(h = malloc(sizeof(*h))))
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	*h = (struct hostfn){fn, callback, stream, data, fakecuda_done_at(stream)};
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, hostfn_run, h);
	pthread_attr_destroy(&attr);
	if (rc) {
		free(h);
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	}
	return 0;
}

API CUresult cuLaunchHostFunc(void *hStream, void (*fn)(void *), void *userData)
{
	NVT_LAUNCH_HOST_FUNC_ARGS a = {hStream, fn, userData};
	CALL(NVT_CBID_cuLaunchHostFunc, host_func(a.stream, a.fn, NULL, a.user));
}

API CUresult cuLaunchHostFunc_ptsz(void *hStream, void (*fn)(void *), void *userData)
{
	/* (the callbacks see the stream as the call named it: 0, this thread's default stream) */
	NVT_LAUNCH_HOST_FUNC_ARGS a = {hStream, fn, userData};
	CALL(NVT_CBID_cuLaunchHostFunc_ptsz, host_func(PTSZ(a.stream), a.fn, NULL, a.user));
}

API CUresult cuStreamAddCallback(void *hStream, void (*callback)(void *, int, void *), void *userData,
				 unsigned flags)
{
	NVT_STREAM_ADD_CALLBACK_ARGS a = {hStream, callback, userData, flags};
	CALL(NVT_CBID_cuStreamAddCallback,
	     a.flags ? NVT_CUDA_ERROR_INVALID_VALUE : host_func(a.stream, NULL, a.fn, a.user));
}

API CUresult cuStreamAddCallback_ptsz(void *hStream, void (*callback)(void *, int, void *), void *userData,
				      unsigned flags)
{
	NVT_STREAM_ADD_CALLBACK_ARGS a = {hStream, callback, userData, flags};
	CALL(NVT_CBID_cuStreamAddCallback_ptsz,
	     a.flags ? NVT_CUDA_ERROR_INVALID_VALUE : host_func(PTSZ(a.stream), NULL, a.fn, a.user));
}
