/*
 * prioapp.c - a service and a batch job for the fake driver, to test how a
 * lower task yields to a higher one (docs/priorities.md). Linked against the
 * fake libcuda.so.1; run with FAKECUDA_KERNEL_US set so that launches take
 * time on their streams (tests/fake/fakestream.c).
 *
 *   prioapp serve STOP LOG PERIOD_US LAUNCHES   until file STOP exists: every
 *       PERIOD_US (absolute deadlines) a request of LAUNCHES launches and one
 *       cuStreamSynchronize; appends "req BEGIN DONE END ENTER" per request to LOG
 *       (BEGIN: when its first launch call returned, DONE: when its work on the fake
 *       GPU is done, END: when its synchronisation returned, ENTER: when its first
 *       launch call was made), each line as the request ends
 *   prioapp batch STOP LOG [SYNC_EVERY]         until file STOP exists: launches back
 *       to back, a cuStreamSynchronize every SYNC_EVERY (default 8); appends
 *       "launch ENTER RETURN INFLIGHT TPCS" per launch to LOG (INFLIGHT: its launches
 *       not yet done just after the call returned; TPCS: the count of TPCs it ran on)
 *
 * Times are CLOCK_MONOTONIC ns. Writes LOG.ready after its first request or
 * launch. Exit status 0, or 1 if a call failed.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakecuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cuInit(unsigned);
int cuDevicePrimaryCtxRetain(void **, int);
int cuCtxSetCurrent(void *);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		   void *, void **, void **);
int cuStreamSynchronize(void *);
int fakecuda_in_flight(const void *stream);
int fakecuda_last_launch(struct fakecuda_launch *out);
uint64_t fakecuda_done_at(const void *stream);

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void ready(const char *log)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.ready", log);
	if ((f = fopen(path, "w")))
		fclose(f);
}

int main(int argc, char **argv)
{
	void *ctx;
	FILE *log;
	int first = 1;

	if (argc < 4 || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "usage: prioapp serve|batch STOP LOG ...\n");
		return 2;
	}
	if (!(log = fopen(argv[3], "w")))
		return 2;
	setvbuf(log, NULL, _IOFBF, 1 << 16);
	if (!strcmp(argv[1], "serve") && argc == 6) {
		uint64_t period = strtoull(argv[4], NULL, 10) * 1000, next = now_ns();
		int launches = atoi(argv[5]);
		while (!exists(argv[2])) {
			struct timespec at = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
			uint64_t begin, done, end, enter;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
			begin = 0;
			enter = now_ns();
			for (int i = 0; i < launches; i++) {
				if (cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))
					return 1;
				if (!begin)
					begin = now_ns(); /* its shim has seen the request begin */
			}
			done = fakecuda_done_at(NULL);
			if (cuStreamSynchronize(NULL))
				return 1;
			end = now_ns();
			fprintf(log, "req %llu %llu %llu %llu\n", (unsigned long long)begin,
				(unsigned long long)done, (unsigned long long)end, (unsigned long long)enter);
			fflush(log); /* the test counts requests as they end */
			if (first--> 0)
				ready(argv[3]);
			next += period;
			if (next < end)
				next = end; /* late: the next one at once */
		}
	} else if (!strcmp(argv[1], "batch") && (argc == 4 || argc == 5)) {
		int every = argc == 5 ? atoi(argv[4]) : 8;
		for (long n = 1; !exists(argv[2]); n++) {
			uint64_t enter = now_ns(), ret;
			struct fakecuda_launch rec;
			int tpcs = 0;
			if (cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))
				return 1;
			ret = now_ns();
			if (fakecuda_last_launch(&rec) == 0)
				for (int w = 0; w < 4; w++)
					tpcs += __builtin_popcountll(rec.ran_tpcs[w]);
			fprintf(log, "launch %llu %llu %d %d\n", (unsigned long long)enter,
				(unsigned long long)ret, fakecuda_in_flight(NULL), tpcs);
			if (every > 0 && n % every == 0 && cuStreamSynchronize(NULL))
				return 1;
			if (first--> 0) {
				fflush(log);
				ready(argv[3]);
			}
		}
	} else {
		fprintf(stderr, "usage: prioapp serve|batch STOP LOG ...\n");
		return 2;
	}
	return fclose(log) ? 1 : 0;
}
