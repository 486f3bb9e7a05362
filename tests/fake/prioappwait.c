/*
 * prioappwait.c - how prioapp's service waits for a request (prioapp.c's head comment:
 * PRIOAPP_HOSTFN, PRIOAPP_POLL): by a stream synchronisation, a host function, or polling an
 * event or the stream.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "prioapp.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

static void host_done(void *flag)
{
	__atomic_store_n((int *)flag, 1, __ATOMIC_RELEASE);
}

static void callback_done(void *stream, int status, void *flag)
{
	(void)stream;
	__atomic_store_n((int *)flag, status ? -1 : 1, __ATOMIC_RELEASE);
}

/* The pause after look n (0: the first) of a polling loop: PRIOAPP_POLL_US, or 50 us; after the
 * first, PRIOAPP_POLL_FIRST_US where set (a loop that sleeps about a step's time once, then
 * looks often). */
static long poll_us(int n)
{
	const char *v = getenv(n == 0 && getenv("PRIOAPP_POLL_FIRST_US") ? "PRIOAPP_POLL_FIRST_US" : "PRIOAPP_POLL_US");
	char *end;
	long us = v ? strtol(v, &end, 10) : 50;

	return v && (*end || end == v || us < 0 || us > 1000000) ? 50 : us;
}

/* Polls event ev until a query answers success: 0, or 1 if a query failed. */
static int poll_event(void *ev)
{
	int rc, n = 0;

	while ((rc = cuEventQuery(ev)) == NVT_CUDA_ERROR_NOT_READY)
		pause_us(poll_us(n++));
	return rc != 0;
}

static void *poll_thread(void *ev)
{
	return (void *)(intptr_t)poll_event(ev);
}

/* PRIOAPP_POLL=twogpu: one launch and event on device 1 too, both events polled in turn by this
 * thread, each in its own context. */
static int poll_two(void *ev0)
{
	static void *ctx1, *ev1;
	void *ctx0;
	int rc, n = 0, done[2] = {0, 0};

	if (cuCtxGetCurrent(&ctx0) || (!ctx1 && cuDevicePrimaryCtxRetain(&ctx1, 1)) || cuCtxSetCurrent(ctx1) ||
	    (!ev1 && cuEventCreate(&ev1, NVT_CU_EVENT_DISABLE_TIMING)) ||
	    cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) || cuEventRecord(ev1, NULL))
		return 1;
	while (!done[0] || !done[1]) {
		for (int d = 0; d < 2; d++) {
			if (done[d])
				continue;
			if (cuCtxSetCurrent(d ? ctx1 : ctx0))
				return 1;
			rc = cuEventQuery(d ? ev1 : ev0);
			if (rc && rc != NVT_CUDA_ERROR_NOT_READY)
				return 1;
			done[d] = rc == 0;
		}
		pause_us(poll_us(n++));
	}
	return cuCtxSetCurrent(ctx0) != 0;
}

/* PRIOAPP_POLL=swap: event ev polled with device 1's primary context current at every other
 * look (FAKECUDA_DEVICES=2), this one's again at the end. */
static int poll_swapping(void *ev)
{
	static void *ctx1;
	void *ctx0;
	int rc, i = 0;

	if (cuCtxGetCurrent(&ctx0) || (!ctx1 && cuDevicePrimaryCtxRetain(&ctx1, 1)))
		return 1;
	while ((rc = cuEventQuery(ev)) == NVT_CUDA_ERROR_NOT_READY) {
		pause_us(poll_us(i));
		if (cuCtxSetCurrent(++i % 2 ? ctx1 : ctx0))
			return 1;
	}
	return (rc != 0) | (cuCtxSetCurrent(ctx0) != 0);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One query of ev; with PRIOAPP_LOOKS=FILE, "look BEFORE AFTER RC" appended to FILE (the
 * monotonic clock just before and after the call: the shim's own look lies between). */
static int event_look(void *ev)
{
	static FILE *looks;
	static int opened;
	uint64_t before = mono_ns();
	int rc = cuEventQuery(ev);

	if (!opened++ && getenv("PRIOAPP_LOOKS"))
		looks = fopen(getenv("PRIOAPP_LOOKS"), "a");
	if (looks)
		fprintf(looks, "look %llu %llu %d\n", (unsigned long long)before, (unsigned long long)mono_ns(), rc);
	return rc;
}

/* A serve request's wait by polling an event (PRIOAPP_POLL): 0, or 1 if a call failed. */
int poll_wait(const char *form)
{
	static void *ev;
	pthread_t poller;
	void *failed;
	int rc, n = 0;

	if (!strcmp(form, "stream")) {
		while ((rc = cuStreamQuery(NULL)) == NVT_CUDA_ERROR_NOT_READY)
			pause_us(poll_us(n++));
		return rc != 0;
	}
	if (!ev && cuEventCreate(&ev, NVT_CU_EVENT_DISABLE_TIMING))
		return 1;
	rc = !strcmp(form, "ptsz")    ? cuEventRecord_ptsz(ev, NULL)
	     : !strcmp(form, "flags") ? cuEventRecordWithFlags(ev, NULL, 0)
				      : cuEventRecord(ev, NULL);
	if (rc || (!strcmp(form, "early") && cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL)))
		return 1;
	if (!strcmp(form, "twogpu"))
		return poll_two(ev);
	if (!strcmp(form, "swap"))
		return poll_swapping(ev);
	if (!strcmp(form, "thread") || !strcmp(form, "handoff")) {
		/* (handoff: polled twice here, a wait begun, then by the other thread) */
		for (int i = 0; i < (form[0] == 'h' ? 2 : 1); i++)
			if ((rc = cuEventQuery(ev)) && rc != NVT_CUDA_ERROR_NOT_READY)
				return 1;
		if (pthread_create(&poller, NULL, poll_thread, ev) || pthread_join(poller, &failed))
			return 1;
		return failed != NULL;
	}
	while ((rc = event_look(ev)) == NVT_CUDA_ERROR_NOT_READY) {
		pause_us(poll_us(n++));
		if (!strcmp(form, "rerecord") && cuEventRecord(ev, NULL))
			return 1;
	}
	return rc != 0;
}

/* A serve request's wait: a cuStreamSynchronize, or (PRIOAPP_HOSTFN) a host function queued
 * (cuLaunchHostFunc; =callback: cuStreamAddCallback) and waited for with no driver call, as
 * JAX waits for its steps, or (PRIOAPP_POLL) a polled event. */
int serve_wait(void)
{
	const char *h = getenv("PRIOAPP_HOSTFN");
	const char *p = getenv("PRIOAPP_POLL");
	int done = 0;

	if (p)
		return poll_wait(p);
	if (!h)
		return cuStreamSynchronize(NULL);
	/* (callbackerr: a callback's error status ends the wait as a success does) */
	if (!strncmp(h, "callback", 8) ? cuStreamAddCallback(NULL, callback_done, &done, 0)
	    : !strcmp(h, "ptsz")   ? cuLaunchHostFunc_ptsz(NULL, host_done, &done)
				   : cuLaunchHostFunc(NULL, host_done, &done))
		return 1;
	/* ahead: the next work queued before the host function runs (its request goes on) */
	if (!strcmp(h, "ahead") && cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))
		return 1;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		pause_us(50);
	return done < 0 && strcmp(h, "callbackerr");
}

