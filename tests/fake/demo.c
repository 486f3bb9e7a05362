/*
 * demo.c - a "CUDA program" for trying nvtaskset without a GPU (make try,
 * README's "Try it without a GPU"). It loads libcuda.so.1 as CUDA programs
 * do (dlopen, as the CUDA runtime does), launches a small kernel every
 * 10 ms, and prints where its kernels ran on the fake GPU whenever that
 * changes: so `nvtaskset -c 0-7 demo`, or a `nvtaskset -p` that moves it,
 * shows its effect at once.
 *
 *   demo [--serve] [SECONDS]   launch for SECONDS (default: until interrupted)
 *
 * --serve: a service, as priorities see one: every 10 ms a request of 4
 * kernels that ends with cuCtxSynchronize, so that a --priority high demo
 * --serve is followed by its lower neighbours (`nvtaskset -l` shows them
 * `ahead:`, `running:` or `borrowing:`). A plain demo never synchronises:
 * its neighbours launch beside it.
 *
 * Each line: "demo PID: kernel N ran on TPCs LIST (S SMs)". The fake driver
 * alone can say where a kernel ran (fakecuda_last_launch); on a real driver
 * the demo says so and exits 2.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakecuda.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*init_fn)(unsigned);
typedef int (*sync_fn)(void);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Writes the TPC list of w as nvtaskset prints lists ("0-3,8"); returns the TPC count. */
static int tpc_list(const uint64_t w[4], char *buf, size_t len)
{
	size_t pos = 0;
	int count = 0;

	buf[0] = '\0';
	for (int t = 0; t < 256; t++) {
		int end = t;
		if (!((w[t / 64] >> (t % 64)) & 1))
			continue;
		while (end + 1 < 256 && ((w[(end + 1) / 64] >> ((end + 1) % 64)) & 1))
			end++;
		if (pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, pos ? ",%d" : "%d", t);
		if (end > t && pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, "-%d", end);
		count += end - t + 1;
		t = end;
	}
	return count;
}

/* Reads SECONDS; returns 0 (until interrupted) or the count, -1 if it is not one. */
static long parse_seconds(const char *text)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(text, &end, 10);
	if (errno || end == text || *end || n < 1 || n > 86400)
		return -1;
	return n;
}

int main(int argc, char **argv)
{
	long seconds = 0, kernels = 0;
	int serve = argc > 1 && !strcmp(argv[1], "--serve");
	char prev[1200] = "", now[1200];
	struct timespec pause = {0, 10 * 1000 * 1000}, start, at;
	void *lib;
	init_fn init;
	launch_fn launch;
	fakecuda_last_launch_fn last;
	sync_fn sync;

	argc -= serve;
	argv += serve;
	if (argc > 2 || (argc == 2 && (seconds = parse_seconds(argv[1])) < 0)) {
		fprintf(stderr, "usage: demo [--serve] [SECONDS]   (SECONDS: 1 to 86400; default: until "
				"interrupted; --serve: a request of 4 kernels every 10 ms, each "
				"synchronised)\n");
		return 2;
	}
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "demo: %s\n", dlerror());
		return 2;
	}
	init = (init_fn)dlsym(lib, "cuInit");
	launch = (launch_fn)dlsym(lib, "cuLaunchKernel");
	sync = (sync_fn)dlsym(lib, "cuCtxSynchronize");
	last = (fakecuda_last_launch_fn)dlsym(lib, "fakecuda_last_launch");
	if (!init || !launch || !last || !sync) {
		fprintf(stderr, "demo: this libcuda.so.1 is not nvtaskset's fake driver, the one GPU "
				"that tells where a kernel ran (LD_LIBRARY_PATH=build/test/fake)\n");
		return 2;
	}
	if (init(0)) {
		fprintf(stderr, "demo: cuInit failed\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct fakecuda_launch rec;
		int tpcs;

		for (int k = 0; k < (serve ? 4 : 1); k++) {
			if (launch((void *)1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) || last(&rec)) {
				fprintf(stderr, "demo: the kernel launch failed\n");
				return 1;
			}
			kernels++;
		}
		if (serve && sync()) {
			fprintf(stderr, "demo: cuCtxSynchronize failed\n");
			return 1;
		}
		tpcs = tpc_list(rec.ran_tpcs, now, sizeof(now));
		if (rec.hung)
			printf("demo %d: kernel %ld hung: its TPC mask left it no TPC\n", (int)getpid(), kernels);
		else if (strcmp(now, prev))
			printf("demo %d: kernel %ld ran on TPCs %s (%d SMs)\n", (int)getpid(), kernels, now,
			       2 * tpcs);
		strcpy(prev, now);
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &at);
		if (stop || (seconds && (at.tv_sec - start.tv_sec) * 1000000000L + at.tv_nsec -
						start.tv_nsec >= seconds * 1000000000L))
			break;
	}
	printf("demo %d: %ld kernels, done\n", (int)getpid(), kernels);
	return 0;
}
