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
 *       launch call was made), each line as the request ends; PRIOAPP_COPY=BYTES: each
 *       request then copies BYTES (a pattern of its own, written to the GPU's memory
 *       before it) to the host on its stream, before its synchronisation, and checks
 *       them after it (a wrong byte: exit 1); PRIOAPP_COPY_TO: pinned (cuMemAllocHost,
 *       cuMemcpyDtoHAsync_v2: the default), pageable (malloc), generic (pinned,
 *       cuMemcpyAsync), ptsz (pinned, cuMemcpyDtoHAsync_v2_ptsz), offset (pinned, the
 *       copy ending at the last byte of an allocation of BYTES + 5), managed (pinned, from
 *       managed memory), otherctx (pinned, from memory of a context of its own);
 *       PRIOAPP_HOSTFN=1: each request waited for by a host function (cuLaunchHostFunc;
 *       =ptsz: its _ptsz form; =callback: cuStreamAddCallback (=callbackerr: its callback's error
 *       status, FAKECUDA_CALLBACK_STATUS, taken as the work's end); =ahead: one more launch
 *       queued behind it before the wait) and no driver call, as JAX waits for its steps;
 *       PRIOAPP_POLL=1: each request waited for by polling an event recorded after its
 *       launches (cuEventRecord, then cuEventQuery every 50 us until it answers success;
 *       =ptsz: cuEventRecord_ptsz; =flags: cuEventRecordWithFlags; =early: the event recorded
 *       before one more launch, whose work the poll does not wait for; =stream: no event,
 *       cuStreamQuery of the legacy stream every 50 us until it answers success; =rerecord: the
 *       event recorded again before each query; =thread: queried once, then polled by a thread
 *       of its own; =handoff: queried twice, then polled by a thread of its own; =twogpu: also a launch and an event on device 1's primary context
 *       (FAKECUDA_DEVICES=2), both events polled in turn, each in its context; =swap: device
 *       1's context current at every other look);
 *       PRIOAPP_POLL_US=N: N us between two looks of a polling loop (not 50);
 *       PRIOAPP_POLL_FIRST_US=N: N us between its first two looks; PRIOAPP_LOOKS=FILE: each
 *       look at the polled event appended to FILE, "look BEFORE AFTER RC" (the monotonic
 *       clock in ns around the query, its result)
 *   prioapp batch STOP LOG [SYNC_EVERY]         until file STOP exists (or, with
 *       PRIOAPP_LAUNCHES=N, N launches made, whichever first: a count that a busy host's
 *       slow look at the log does not stretch): launches back
 *       to back, a cuStreamSynchronize every SYNC_EVERY (default 8); appends
 *       "launch ENTER RETURN INFLIGHT TPCS" per launch to LOG (INFLIGHT: its launches
 *       not yet done just after the call returned; TPCS: the count of TPCs it ran on);
 *       PRIOAPP_SYNC_TWICE=1: two synchronisations in a row each time; PRIOAPP_RESET_AT=N:
 *       the device's primary context reset before the Nth launch, and made again;
 *       PRIOAPP_RELEASE_AT=N: the same by its last release (cuDevicePrimaryCtxRelease) and
 *       a retain (with PRIOAPP_RETAIN_TWICE=1, retained twice at the start: a release that
 *       is not the last; PRIOAPP_RELEASE_V1=1: the release by its old name);
 *       PRIOAPP_CTX_UNTIL=N: its launches before the Nth in a context of its own (cuCtxCreate),
 *       destroyed before the Nth (PRIOAPP_DESTROY_V1=1: by the call's old name), the primary
 *       context's after (a reset or release before the Nth leaves its own context current;
 *       PRIOAPP_CTX_KEEP=1: not destroyed, the primary context made current);
 *       PRIOAPP_ON_DEV1=1: its work on device 1's primary context (FAKECUDA_DEVICES=2), where it
 *       stays through PRIOAPP_RESET_AT's reset of device 0's; PRIOAPP_SPMD=1: each launch made on
 *       device 0's primary context and then on device 1's (FAKECUDA_DEVICES=2), and each
 *       synchronisation made on both in turn, as a program that runs one step on two GPUs;
 *       PRIOAPP_CTX_SYNC=1: each synchronisation a cuCtxSynchronize (its fork's child's too);
 *       PRIOAPP_FORK_AT=N: before the Nth launch it forks a child that makes 60 launches of its
 *       own (a synchronisation after every 2) and exits, and goes on when the child ended
 *       well (else exit 1); PRIOAPP_CHILD_WIDE=1: that child first lets itself run on every
 *       CPU of the machine (its cpuset's); PRIOAPP_PIN_OTHERS_AT=N: before the Nth launch every
 *       other thread of the process (the shim's) may run only on the CPU this one runs on then,
 *       as threads the scheduler put on one CPU; PRIOAPP_PIN_ALL_AT=N: the same, this thread
 *       too (the task pinned to one CPU while it runs); PRIOAPP_PIN_SELF_AT=N: before the Nth
 *       launch this thread alone may run only on the CPU it runs on then (1: before the shim's
 *       thread starts); PRIOAPP_OTHER_THREAD=1: a thread that only sleeps (a logger, say),
 *       started first; PRIOAPP_WIDE_AT=N: before the Nth launch it lets itself run on every
 *       CPU of the machine (its cpuset's); PRIOAPP_SIDE_US=N: a second thread launches a kernel every N us
 *       (never waiting) until STOP exists; PRIOAPP_GAP_US=N: N us of the host before each
 *       launch but a step's first (a step whose host is slower than its kernels);
 *       PRIOAPP_IDLE_US=N: N us after every fourth synchronisation (requests of four steps);
 *       PRIOAPP_POLL: each synchronisation a polled event, as serve's
 *   prioapp threads STOP LOG THREADS LAUNCHES APART_US   THREADS threads, each making
 *       LAUNCHES launches APART_US apart (0: back to back; 1000: a busy higher task's
 *       next request holds each one back, not only the first), or until file STOP
 *       exists; writes "threads THREADS
 *       launches N max_call_us US" to LOG at the end: N launch calls made in all, US
 *       the longest one took from its call to its return
 *
 * Times are CLOCK_MONOTONIC ns. Writes LOG.ready after its first request or
 * launch. Exit status 0, or 1 if a call failed.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "prioapp.h"

#include <limits.h>
#include <pthread.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pause_us(long us)
{
	struct timespec t = {us / 1000000, us % 1000000 * 1000};

	nanosleep(&t, NULL);
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* What the threads of "prioapp threads" share. */
struct threads {
	void *ctx;
	const char *stop;
	int launches;
	long apart_us;
	uint64_t max_ns, calls; /* atomics */
	int failed;
};

static void *launcher(void *arg)
{
	struct threads *t = arg;
	struct timespec apart = {(time_t)(t->apart_us / 1000000), (long)(t->apart_us % 1000000) * 1000};

	if (cuCtxSetCurrent(t->ctx)) {
		__atomic_store_n(&t->failed, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	for (int i = 0; i < t->launches && !exists(t->stop); i++) {
		uint64_t enter = now_ns(), took, max;
		if (cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL)) {
			__atomic_store_n(&t->failed, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		took = now_ns() - enter;
		if (t->apart_us)
			nanosleep(&apart, NULL);
		__atomic_add_fetch(&t->calls, 1, __ATOMIC_RELAXED);
		max = __atomic_load_n(&t->max_ns, __ATOMIC_RELAXED);
		while (took > max && !__atomic_compare_exchange_n(&t->max_ns, &max, took, 0, __ATOMIC_RELAXED,
								   __ATOMIC_RELAXED))
			;
	}
	return NULL;
}

/* prioapp threads: returns 0, or 1 if a call failed. */
static int run_threads(void *ctx, const char *stop, FILE *log, int n, int launches, long apart_us)
{
	struct threads t = {ctx, stop, launches, apart_us, 0, 0, 0};
	pthread_t tid[64];
	int made = 0;

	if (n < 1 || n > 64)
		return 1;
	while (made < n && pthread_create(&tid[made], NULL, launcher, &t) == 0)
		made++;
	for (int i = 0; i < made; i++)
		pthread_join(tid[i], NULL);
	fprintf(log, "threads %d launches %llu max_call_us %llu\n", made, (unsigned long long)t.calls,
		(unsigned long long)(t.max_ns / 1000));
	return made < n || t.failed;
}

/* PRIOAPP_COPY: a request's copy to the host, before its synchronisation. */
struct copy {
	size_t bytes;
	const char *to;
	unsigned long long dev;
	unsigned char *host, *pattern;
};

static int copy_setup(struct copy *c, void *primary)
{
	const char *b = getenv("PRIOAPP_COPY");
	void *h;

	c->bytes = b ? strtoul(b, NULL, 10) : 0;
	c->to = getenv("PRIOAPP_COPY_TO") ? getenv("PRIOAPP_COPY_TO") : "pinned";
	if (!c->bytes)
		return 0;
	if (!strcmp(c->to, "otherctx")) {
		void *other;
		if (cuCtxCreate_v2(&other, 0, 0) || cuMemAlloc_v2(&c->dev, c->bytes) || cuCtxSetCurrent(primary))
			return -1;
	} else if (!strcmp(c->to, "managed") ? cuMemAllocManaged(&c->dev, c->bytes, 1)
					     : cuMemAlloc_v2(&c->dev, c->bytes)) {
		return -1;
	}
	if (!(c->pattern = malloc(c->bytes)))
		return -1;
	if (!strcmp(c->to, "pageable"))
		return (c->host = malloc(c->bytes)) ? 0 : -1;
	if (cuMemAllocHost_v2(&h, c->bytes + 5))
		return -1;
	c->host = (unsigned char *)h + (!strcmp(c->to, "offset") ? 5 : 0);
	return 0;
}

/* Request n's pattern to the GPU, its copy to the host queued. */
static int copy_queue(struct copy *c, unsigned n)
{
	if (!c->bytes)
		return 0;
	for (size_t i = 0; i < c->bytes; i++)
		c->pattern[i] = (unsigned char)(n * 31 + i);
	memset(c->host, 0, c->bytes);
	if (cuMemcpyHtoD_v2(c->dev, c->pattern, c->bytes))
		return -1;
	if (!strcmp(c->to, "generic"))
		return cuMemcpyAsync((unsigned long long)(uintptr_t)c->host, c->dev, c->bytes, NULL);
	if (!strcmp(c->to, "ptsz"))
		return cuMemcpyDtoHAsync_v2_ptsz(c->host, c->dev, c->bytes, NULL);
	return cuMemcpyDtoHAsync_v2(c->host, c->dev, c->bytes, NULL);
}

/* Lets this thread run on every CPU of the machine (its cpuset's). Returns 0, or -1. */
static int widen(void)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (long c = 0; c < sysconf(_SC_NPROCESSORS_CONF) && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, &all);
	return sched_setaffinity(0, sizeof(all), &all) ? -1 : 0;
}

/* PRIOAPP_OTHER_THREAD's thread: sleeps until the program exits. */
static void *sleeper(void *unused)
{
	(void)unused;
	for (;;)
		pause();
	return NULL;
}


/* PRIOAPP_PIN_OTHERS_AT: every other thread of the process may run only on the CPU this one runs
 * on now (self_too 1: this one too, PRIOAPP_PIN_ALL_AT; 2: this one alone, PRIOAPP_PIN_SELF_AT).
 * Returns 0, or -1. */
static int pin_others(int self_too)
{
	long self = syscall(SYS_gettid);
	int cpu = sched_getcpu(), n = 0;
	cpu_set_t one;
	DIR *d;
	struct dirent *e;

	if (cpu < 0 || !(d = opendir("/proc/self/task")))
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	/* (this one first: a thread pinned before it could move to this one's other CPUs) */
	if ((self_too && (n = sched_setaffinity(0, sizeof(one), &one))) || self_too == 2) {
		closedir(d);
		return n ? -1 : 0;
	}
	while ((e = readdir(d))) {
		long tid = atol(e->d_name);
		if (tid > 0 && tid != self) {
			if (sched_setaffinity((pid_t)tid, sizeof(one), &one) && errno != ESRCH) {
				closedir(d);
				return -1;
			}
			n++;
		}
	}
	closedir(d);
	return n ? 0 : -1;
}

/* The program's synchronisation: of the legacy stream, or of the context (PRIOAPP_CTX_SYNC), or
 * a polled event (PRIOAPP_POLL). */
static int app_sync(void)
{
	if (getenv("PRIOAPP_POLL"))
		return poll_wait(getenv("PRIOAPP_POLL"));
	return getenv("PRIOAPP_CTX_SYNC") ? cuCtxSynchronize() : cuStreamSynchronize(NULL);
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

	void *dev1 = NULL, *spmd = NULL;

	if (argc < 4 || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) ||
	    (getenv("PRIOAPP_RETAIN_TWICE") && cuDevicePrimaryCtxRetain(&ctx, 0)) ||
	    (getenv("PRIOAPP_ON_DEV1") && (cuDevicePrimaryCtxRetain(&dev1, 1) || cuCtxSetCurrent(dev1))) ||
	    (getenv("PRIOAPP_SPMD") && cuDevicePrimaryCtxRetain(&spmd, 1))) {
		fprintf(stderr, "usage: prioapp serve|batch|threads STOP LOG ...\n");
		return 2;
	}
	if (!(log = fopen(argv[3], "w")))
		return 2;
	setvbuf(log, NULL, _IOFBF, 1 << 16);
	if (!strcmp(argv[1], "serve") && argc == 6) {
		uint64_t period = strtoull(argv[4], NULL, 10) * 1000, next = now_ns();
		int launches = atoi(argv[5]);
		struct copy copy = {0};
		unsigned n = 0;
		if (copy_setup(&copy, ctx)) {
			fclose(log);
			return 1;
		}
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
			if (copy_queue(&copy, ++n))
				return 1;
			done = fakecuda_done_at(NULL);
			if (serve_wait())
				return 1;
			end = now_ns();
			if (copy.bytes && memcmp(copy.host, copy.pattern, copy.bytes)) {
				fprintf(stderr, "prioapp: request %u: the copy to the host is wrong\n", n);
				fclose(log);
				return 1;
			}
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
		long reset_at = getenv("PRIOAPP_RESET_AT") ? atol(getenv("PRIOAPP_RESET_AT")) : 0;
		long release_at = getenv("PRIOAPP_RELEASE_AT") ? atol(getenv("PRIOAPP_RELEASE_AT")) : 0;
		long fork_at = getenv("PRIOAPP_FORK_AT") ? atol(getenv("PRIOAPP_FORK_AT")) : 0;
		long pin_at = getenv("PRIOAPP_PIN_OTHERS_AT") ? atol(getenv("PRIOAPP_PIN_OTHERS_AT")) : 0;
		long wide_at = getenv("PRIOAPP_WIDE_AT") ? atol(getenv("PRIOAPP_WIDE_AT")) : 0;
		long pin_all_at = getenv("PRIOAPP_PIN_ALL_AT") ? atol(getenv("PRIOAPP_PIN_ALL_AT")) : 0;
		long pin_self_at = getenv("PRIOAPP_PIN_SELF_AT") ? atol(getenv("PRIOAPP_PIN_SELF_AT")) : 0;
		pthread_t other;
		if (getenv("PRIOAPP_OTHER_THREAD") && pthread_create(&other, NULL, sleeper, NULL)) {
			fclose(log);
			return 1;
		}
		long own_until = getenv("PRIOAPP_CTX_UNTIL") ? atol(getenv("PRIOAPP_CTX_UNTIL")) : 0;
		void *own = NULL;
		if (own_until > 0 && cuCtxCreate_v2(&own, 0, 0)) {
			fclose(log);
			return 1;
		}
		/* PRIOAPP_GRAPH=1: each launch a kernel then a replay of a graph of one kernel (small
		 * work queued before a replay). */
		CUgraphExec exec = NULL;
		if (getenv("PRIOAPP_GRAPH")) {
			NVT_KERNEL_NODE_PARAMS kp = {.func = (void *)1, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
						     .blockDimX = 1, .blockDimY = 1, .blockDimZ = 1};
			CUgraph g;
			CUgraphNode node;
			if (cuGraphCreate(&g, 0) || cuGraphAddKernelNode_v2(&node, g, NULL, 0, &kp) ||
			    cuGraphInstantiate_v2(&exec, g, NULL, NULL, 0)) {
				fclose(log);
				return 1;
			}
		}
		pthread_t side;
		struct threads st = {ctx, argv[2], INT_MAX, getenv("PRIOAPP_SIDE_US") ? atol(getenv("PRIOAPP_SIDE_US")) : 0,
				     0, 0, 0};
		if (st.apart_us > 0 && pthread_create(&side, NULL, launcher, &st)) {
			fclose(log);
			return 1;
		}
		long gap_us = getenv("PRIOAPP_GAP_US") ? atol(getenv("PRIOAPP_GAP_US")) : 0;
		long idle_us = getenv("PRIOAPP_IDLE_US") ? atol(getenv("PRIOAPP_IDLE_US")) : 0;
		long launches = getenv("PRIOAPP_LAUNCHES") ? atol(getenv("PRIOAPP_LAUNCHES")) : 0;
		for (long n = 1; !exists(argv[2]) && (launches <= 0 || n <= launches); n++) {
			if (gap_us > 0 && every > 0 && (n - 1) % every != 0)
				pause_us(gap_us);
			if (n == release_at &&
			    ((getenv("PRIOAPP_RELEASE_V1") ? cuDevicePrimaryCtxRelease(0) : cuDevicePrimaryCtxRelease_v2(0)) ||
			     cuDevicePrimaryCtxRetain(&ctx, 0) || (n >= own_until && cuCtxSetCurrent(ctx)))) {
				fclose(log);
				return 1;
			}
			if (n == own_until && (getenv("PRIOAPP_CTX_KEEP") ? cuCtxSetCurrent(ctx)
					       : getenv("PRIOAPP_DESTROY_V1") ? cuCtxDestroy(own)
									     : cuCtxDestroy_v2(own))) {
				fclose(log);
				return 1;
			}
			if (n == reset_at && (cuDevicePrimaryCtxReset_v2(0) ||
					      (!dev1 && (cuDevicePrimaryCtxRetain(&ctx, 0) ||
							 (n >= own_until && cuCtxSetCurrent(ctx)))))) {
				fclose(log);
				return 1;
			}
			if ((n == pin_at && pin_others(0)) || (n == pin_all_at && pin_others(1)) ||
			    (n == pin_self_at && pin_others(2)) || (n == wide_at && widen())) {
				fclose(log);
				return 1;
			}
			if (n == fork_at) {
				int status;
				pid_t child;
				fflush(log);
				if ((child = fork()) < 0)
					return 1;
				if (child == 0) {
					if (getenv("PRIOAPP_CHILD_WIDE") && widen())
						_exit(1);
					for (int i = 1; i <= 60; i++)
						if (cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) ||
						    (i % 2 == 0 && app_sync()))
							_exit(1);
					if (getenv("PRIOAPP_FORK_EXIT")) /* its exit handlers run */
						exit(0);
					_exit(0);
				}
				if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
					fclose(log);
					return 1;
				}
			}
			uint64_t enter = now_ns(), ret;
			struct fakecuda_launch rec;
			int tpcs = 0;
			if (cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) ||
			    (exec && cuGraphLaunch(exec, NULL)))
				return 1;
			if (spmd && (cuCtxSetCurrent(spmd) || cuLaunchKernel((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) ||
				     cuCtxSetCurrent(ctx)))
				return 1;
			ret = now_ns();
			if (fakecuda_last_launch(&rec) == 0)
				for (int w = 0; w < 4; w++)
					tpcs += __builtin_popcountll(rec.ran_tpcs[w]);
			fprintf(log, "launch %llu %llu %d %d\n", (unsigned long long)enter,
				(unsigned long long)ret, fakecuda_in_flight(NULL), tpcs);
			if (every > 0 && n % every == 0 &&
			    (app_sync() || (getenv("PRIOAPP_SYNC_TWICE") && app_sync()) ||
			     (spmd && (cuCtxSetCurrent(spmd) || app_sync() || cuCtxSetCurrent(ctx))))) {
				fclose(log);
				return 1;
			}
			if (idle_us > 0 && every > 0 && n % (4 * every) == 0)
				pause_us(idle_us);
			if (first--> 0) {
				fflush(log);
				ready(argv[3]);
			}
		}
		if (st.apart_us > 0 && (pthread_join(side, NULL) || st.failed)) {
			fclose(log);
			return 1;
		}
	} else if (!strcmp(argv[1], "threads") && argc == 7) {
		ready(argv[3]);
		if (run_threads(ctx, argv[2], log, atoi(argv[4]), atoi(argv[5]), atol(argv[6]))) {
			fclose(log);
			return 1;
		}
	} else {
		fprintf(stderr, "usage: prioapp serve|batch|threads STOP LOG ...\n");
		fclose(log);
		return 2;
	}
	return fclose(log) ? 1 : 0;
}
