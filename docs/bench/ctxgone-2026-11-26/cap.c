/* S4: (1) bare: thread A captures a stream in the global mode while the main thread registers
 * host memory, its own mode global, then relaxed: each registration's answer and A's
 * cuStreamEndCapture's. (2) "step": the main thread's primary context reset and retained, then
 * thread A begins a global capture, and the main thread runs a step (a launch and a
 * cuStreamSynchronize on its own stream; under nvtaskset --priority high its bridge is made again
 * there), then A ends its capture: each answer. (3) "reset": what the driver answers for a
 * context's objects after cuDevicePrimaryCtxReset (its id, an event's query and record). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda.h>
static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n";
static CUcontext ctx;
static CUfunction fn;
static volatile int phase;
static int end_rc = -1, begin_rc = -1;
static void *capturer(void *u)
{
	CUstream s; CUgraph g;
	(void)u;
	cuCtxSetCurrent(ctx);
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	begin_rc = cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
	phase = 1;
	while (phase != 2) usleep(100);
	end_rc = cuStreamEndCapture(s, &g);
	return NULL;
}
static int with_capture(const char *what, int relaxed, int step)
{
	pthread_t t; CUstream s; static char buf[2][8192] __attribute__((aligned(4096))); static int n;
	int r1 = -1, r2 = -1;
	CUstreamCaptureMode mode = relaxed ? CU_STREAM_CAPTURE_MODE_RELAXED : CU_STREAM_CAPTURE_MODE_GLOBAL;
	if (step) cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	phase = 0;
	pthread_create(&t, NULL, capturer, NULL);
	while (phase != 1) usleep(100);
	cuThreadExchangeStreamCaptureMode(&mode);
	if (step) {
		r1 = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
		r2 = cuStreamSynchronize(s);
	} else {
		r1 = cuMemHostRegister(buf[n++ % 2], 4096, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
	}
	cuThreadExchangeStreamCaptureMode(&mode);
	phase = 2;
	pthread_join(t, NULL);
	printf("%s: begin capture %d, %s %d %d, end capture %d\n", what, begin_rc, step ? "launch/sync" : "register", r1, r2, end_rc);
	fflush(stdout);
	return 0;
}
int main(int argc, char **argv)
{
	CUmodule m; CUstream s; CUevent e; unsigned long long a = 0, b = 0, c = 0; unsigned fl; int act;
	if (argc < 2) return 2;
	cuInit(0);
	cuDevicePrimaryCtxRetain(&ctx, 0);
	cuCtxSetCurrent(ctx);
	cuModuleLoadData(&m, ptx);
	cuModuleGetFunction(&fn, m, "k");
	if (!strcmp(argv[1], "bare")) {
		with_capture("bare global", 0, 0);
		with_capture("bare relaxed", 1, 0);
		return 0;
	}
	if (!strcmp(argv[1], "step")) {
		cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
		for (int i = 0; i < 20; i++) { cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL); cuStreamSynchronize(s); }
		with_capture("step before the reset", 0, 1);
		printf("reset %d\n", cuDevicePrimaryCtxReset(0));
		cuDevicePrimaryCtxRetain(&ctx, 0);
		cuCtxSetCurrent(ctx);
		cuModuleLoadData(&m, ptx);
		cuModuleGetFunction(&fn, m, "k");
		with_capture("step after the reset", 0, 1);
		return 0;
	}
	cuCtxGetId(ctx, &a);
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
	cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
	cuEventRecord(e, s);
	cuCtxSynchronize();
	printf("reset %d\n", cuDevicePrimaryCtxReset(0));
	cuDevicePrimaryCtxGetState(0, &fl, &act);
	printf("after the reset: active %d, the old handle's id: rc %d\n", act, cuCtxGetId(ctx, &b));
	CUcontext again;
	cuDevicePrimaryCtxRetain(&again, 0);
	cuCtxSetCurrent(again);
	cuCtxGetId(again, &c);
	printf("retained: the same handle %d, id %llu before, %llu now\n", again == ctx, a, c);
	printf("the old event: query %d, record %d\n", cuEventQuery(e), cuEventRecord(e, NULL));
	return 0;
}
