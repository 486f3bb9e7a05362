/*
 * bridgeword.c - the shim's bridge kernel (src/shim/shimbridgeptx.c) on a GPU,
 * driven by its words as the shim drives them, read back by the record the
 * kernel writes as it ends (make check-gpu-bridge, tests/gpu/bridge.sh).
 *
 * Each case queues nvt_bridge and its empty kernel, says the wait returned,
 * then releases it as a replay's exit does (the step's replay queued); the
 * word of a replay that waits for the host's next call (w[5]) is left clear,
 * set and never cleared, or set and cleared 30 us later. The bridge must end
 * the margin after the release, the late bound plus the margin after it, and
 * the margin after the clearing call: each case's median hold (release seen
 * to end) inside its bounds, over ROUNDS bridges. Where the next bridge is
 * said queued behind it (w[7] >= seq: at the release, or 10 us later), it
 * ends at once, or then, whatever else it waits for (record reason 4). A bridge left unreleased
 * ends its linger after the wait returned, or, held, its linger after the
 * last of its thread's launches (w[6] moved), at most the held bound after the
 * wait returned: those cases' hold is from the return seen to the end.
 *
 *   bridgeword    (CUDA_DEVICE_MAX_CONNECTIONS=1 is set here, as for a bridged task)
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "shim/shimbridgeptx.h"

#define ROUNDS 30
#define MARGIN_US 20 /* core/yield.h's NVT_BRIDGE_MARGIN_US, NVT_BRIDGE_SPAN_US, NVT_BRIDGE_LATE_US */
#define SPAN_US 150
#define LATE_US 60
#define LINGER_US 300  /* NVT_BRIDGE_LINGER_US, NVT_BRIDGE_HELD_SPAN_US */
#define HSPAN_US 1000

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void spin_us(unsigned us)
{
	uint64_t end = now_ns() + us * 1000ull;

	while (now_ns() < end)
		;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define CK(call)                                                              \
	do {                                                                  \
		CUresult rc_ = (call);                                        \
		if (rc_) {                                                    \
			fprintf(stderr, "bridgeword: %s: error %d\n", #call, rc_); \
			return 2;                                             \
		}                                                             \
	} while (0)

int main(void)
{
	/* pending: w[5] at the release; clear_us: when the next call clears it (-1: never);
	 * next_us: when the next bridge is said queued behind it (w[7] = seq; -1: never);
	 * launches: 0, released 20 us after the wait returned; else never released, its thread's
	 * launches (w[6]) 100 us apart from 100 us after the return, launches - 1 of them; held:
	 * the held bound (else only the cap); the median hold's bounds (us). */
	static const struct {
		const char *what;
		int pending, clear_us, next_us, launches, held;
		double lo, hi;
	} cases[] = {
		{"released, no replay waiting", 0, -1, -1, 0, 0, MARGIN_US - 5, MARGIN_US + 25},
		{"a replay waiting, no call", 1, -1, -1, 0, 0, LATE_US + MARGIN_US - 10, LATE_US + MARGIN_US + 30},
		{"a replay waiting, a call 30 us later", 1, 30, -1, 0, 0, 30 + MARGIN_US - 5, 30 + MARGIN_US + 25},
		{"released, the next bridge queued", 0, -1, 0, 0, 0, 0, 8},
		{"a replay waiting, the next bridge queued 10 us later", 1, -1, 10, 0, 0, 10 - 5, 10 + 10},
		{"not released, no launch", 0, -1, -1, 1, 0, LINGER_US - 5, LINGER_US + 30},
		{"held, 5 launches 100 us apart", 0, -1, -1, 6, 1, 500 + LINGER_US - 5, 500 + LINGER_US + 30},
		{"held, launches 100 us apart past its bound", 0, -1, -1, 16, 1, HSPAN_US - 5, HSPAN_US + 30},
	};
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn, nop;
	CUstream st;
	void *host;
	CUdeviceptr dw;
	uint32_t seq = 0;
	int fails = 0;

	setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 1);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, nvt_bridge_ptx));
	CK(cuModuleGetFunction(&fn, mod, "nvt_bridge"));
	CK(cuModuleGetFunction(&nop, mod, "nvt_bridge_nop"));
	CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	CK(cuMemHostAlloc(&host, 8192, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
	CK(cuMemHostGetDevicePointer(&dw, host, 0));
	volatile uint32_t *w = host;
	volatile struct trace_rec *rec = (volatile struct trace_rec *)((char *)host + 4096);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		double hold[ROUNDS];
		int n = 0;
		for (int r = 0; r < ROUNDS; r++) {
			uint64_t cap = 50000000, linger = LINGER_US * 1000ull, margin = MARGIN_US * 1000ull,
				 span = SPAN_US * 1000ull, late = LATE_US * 1000ull,
				 hspan = cases[c].held ? HSPAN_US * 1000ull : cap;
			uint32_t replay = 1;
			CUdeviceptr drec = dw + 4096;
			void *args[10] = {&dw, &seq, &cap, &linger, &margin, &span, &replay, &drec, &late, &hspan};
			seq++;
			w[5] = 0;
			rec->seq = 0;
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			CK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st, args, NULL));
			CK(cuLaunchKernel(nop, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL));
			spin_us(200); /* the kernel runs: the host waits */
			__atomic_store_n(&w[0], seq, __ATOMIC_SEQ_CST); /* the wait returned */
			if (cases[c].launches) {
				/* A held step's launches: each moves the word (none released it). */
				for (int l = 1; l < cases[c].launches; l++) {
					spin_us(100);
					__atomic_add_fetch(&w[6], 1, __ATOMIC_SEQ_CST);
				}
				CK(cuStreamSynchronize(st));
				if (rec->seq != seq || rec->reason != TR_LINGER || !rec->saw_ret) {
					fprintf(stderr, "bridgeword: bridge %u: record seq %u reason %u\n", seq,
						rec->seq, rec->reason);
					continue;
				}
				hold[n++] = (double)(rec->end - rec->saw_ret) / 1e3;
				__atomic_store_n(&w[1], seq, __ATOMIC_SEQ_CST);
				continue;
			}
			spin_us(20);
			/* A replay's exit: its word first, then the release (the step's replay queued). */
			if (cases[c].pending)
				__atomic_store_n(&w[5], 1, __ATOMIC_SEQ_CST);
			__atomic_store_n(&w[4], seq, __ATOMIC_SEQ_CST);
			if (cases[c].next_us == 0)
				__atomic_store_n(&w[7], seq, __ATOMIC_SEQ_CST);
			__atomic_store_n(&w[1], seq, __ATOMIC_SEQ_CST);
			if (cases[c].clear_us >= 0) {
				spin_us((unsigned)cases[c].clear_us);
				__atomic_store_n(&w[5], 0, __ATOMIC_SEQ_CST); /* the host's next call */
			}
			if (cases[c].next_us > 0) {
				spin_us((unsigned)cases[c].next_us);
				__atomic_store_n(&w[7], seq, __ATOMIC_SEQ_CST);
			}
			CK(cuStreamSynchronize(st));
			w[5] = 0;
			if (rec->seq != seq || rec->reason != (cases[c].next_us >= 0 ? TR_NEXT : TR_RELEASED) ||
			    !rec->saw_rel) {
				fprintf(stderr, "bridgeword: bridge %u: record seq %u reason %u\n", seq, rec->seq,
					rec->reason);
				continue;
			}
			hold[n++] = (double)(rec->end - rec->saw_rel) / 1e3;
		}
		if (n < ROUNDS / 2) {
			printf("FAIL %s: %d of %d bridges ended %s\n", cases[c].what, n, ROUNDS,
			       cases[c].launches ? "at their linger" : "released");
			fails++;
			continue;
		}
		qsort(hold, (size_t)n, sizeof(hold[0]), cmp);
		double med = hold[n / 2];
		int ok = med >= cases[c].lo && med <= cases[c].hi;
		printf("%s bridge kernel, %s: held %.1f us after its %s (median of %d; %.1f-%.1f; "
		       "bounds %.0f-%.0f)\n",
		       ok ? "PASS" : "FAIL", cases[c].what, med, cases[c].launches ? "wait returned" : "release", n,
		       hold[0], hold[n - 1], cases[c].lo, cases[c].hi);
		fails += !ok;
	}
	cuDevicePrimaryCtxRelease(dev);
	return fails ? 1 : 0;
}
