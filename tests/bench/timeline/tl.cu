// tl.cu - the GPU timeline of a service beside a batch (make bench-timeline; README.md beside).
//
// Two roles, one program, so that both sides stamp the same clock (%globaltimer, ns):
//   tl batch MODE SECS OUT      a batch task: MODE spin (528-style CTAs of 128 threads, no
//                               shared memory), heavy (a CTA of 1024 threads and 200 KiB of shared
//                               memory per SM), gemm (cuBLAS bf16 8192^3 in a loop, beside a
//                               one-warp watcher kernel; GEMM_N its size). SGATE=FILE: its stream
//                               waits before each kernel while FILE's first word is 1 (the
//                               service's GATE; it implies WATCH_OFF, and the batch opens it at
//                               its end); BLOCK_MS=N: blocked on a semaphore after N ms, until its
//                               end; WATCH_OFF=1: no watcher. Each watcher thread (thread 0 of the
//                               first WATCH CTAs; gemm: the watcher) reads %globaltimer in a loop
//                               and records every gap longer than GAP_NS: when its context was
//                               off the GPU. Writes OUT (one line per gap of GAP_KEEP_NS or
//                               more, default 10000: sm start_ns end_ns).
//   tl svc OUT                  a service: REQS requests, PERIOD_US apart (periodic), of STEPS
//                               steps; a step is KERNELS dependent kernels of CTAS CTAs that each
//                               spin WORK_NS, then the host waits (SYNC: spin, block, yield, or
//                               poll = the last kernel writes a host-mapped flag the host spins
//                               on; ctx = spin, the wait a cudaDeviceSynchronize). COPY=1: each step copies 8 bytes to the host on its
//                               stream; COPY=2 on a stream of its own after the step (the host
//                               does not wait for it); COPY=3 by a kernel on its stream (to
//                               pinned memory the GPU maps); COPY=4 the same, then a copy of 0
//                               bytes (cuMemcpyDtoHAsync) on its stream. ASYNC=1 queues step k+1 before waiting
//                               for step k. LEGACY=1: the steps on the legacy default
//                               stream (PyTorch's current stream). GRAPH=1: each step a
//                               graph (BLAS=N: N cuBLAS bf16 4096 layers at batch 1 after its
//                               first kernel). LGAP_US=N: the host takes N us between a
//                               step's launches. FLUSH=1: a query of the
//                               stream right after each step is queued. Each
//                               kernel stamps its first CTA's start and last CTA's end; the host
//                               stamps each step's submit and return (CLOCK_MONOTONIC), and a
//                               ping kernel before and after the run maps host time to
//                               %globaltimer (the round trip of least delay of 200). GATE=FILE:
//                               the first 8 bytes of FILE are 1 while a request is open (a
//                               batch's rmprobe.so holds its groups off meanwhile). PIN_OTHERS=1:
//                               after the first request every other thread of the process (the
//                               shim's, the runtime's) may run only on the CPU the program's
//                               thread runs on then, as threads the scheduler put on one CPU.
//                               PIN_SELF=1: the program's thread alone pinned to its CPU after
//                               CUDA's start, before its first context synchronisation (the
//                               threads CUDA started keep theirs).
//                               Writes OUT.
// Probe code, not product code: every run is under `timeout` in run.sh.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "tl: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

static long envl(const char *n, long d)
{
	const char *v = getenv(n);
	return v && *v ? strtol(v, NULL, 10) : d;
}

/* PIN_OTHERS: every other thread of the process may run only on this thread's CPU now. */
static void pin_others(void)
{
	long self = syscall(SYS_gettid);
	int cpu = sched_getcpu(), n = 0;
	cpu_set_t one;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (cpu < 0 || !d) {
		fprintf(stderr, "tl: PIN_OTHERS: cannot read the threads\n");
		exit(2);
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	while ((e = readdir(d)))
		if (atol(e->d_name) > 0 && atol(e->d_name) != self)
			n += sched_setaffinity((pid_t)atol(e->d_name), sizeof(one), &one) == 0;
	closedir(d);
	fprintf(stderr, "tl: %d other threads pinned to CPU %d\n", n, cpu);
}

/* PIN_SELF: this thread alone may run only on the CPU it runs on now (the threads CUDA started
 * keep theirs). */
static void pin_self(void)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	if (cpu < 0 || sched_setaffinity(0, sizeof(one), &one)) {
		fprintf(stderr, "tl: PIN_SELF: cannot pin the thread\n");
		exit(2);
	}
	fprintf(stderr, "tl: the program's thread alone pinned to CPU %d after CUDA's start\n", cpu);
}

static uint64_t host_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

__device__ __forceinline__ uint64_t gtime(void)
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ __forceinline__ unsigned smid(void)
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}

struct gap {
	unsigned long long sm, start, end;
};

// Thread 0 of a watching CTA records the gaps in its own progress; every thread spins until
// `until` (ns, %globaltimer) or *stop.
__device__ void watch(uint64_t until, uint64_t gap_ns, gap *gaps, unsigned *ngaps, unsigned cap,
		      int watcher, volatile int *stop)
{
	uint64_t prev = gtime();
	unsigned sm = smid();
	unsigned n = 0;
	while (prev < until) {
		uint64_t t = gtime();
		if (watcher && t - prev > gap_ns) {
			unsigned i = atomicAdd(ngaps, 1u);
			if (i < cap)
				gaps[i] = gap{ sm, prev, t };
		}
		prev = t;
		/* Only the gemm watcher looks at the host's stop flag: hundreds of CTAs reading host
		 * memory stall for milliseconds on PCIe, and a preemption waits for them. */
		if (stop && (++n & 4095) == 0 && *stop)
			break;
	}
}

__global__ void k_spin(uint64_t cta_ns, uint64_t gap_ns, gap *gaps, unsigned *ngaps, unsigned cap,
		       int nwatch, volatile int *stop)
{
	uint64_t until = gtime() + cta_ns;
	watch(until, gap_ns, gaps, ngaps, cap, threadIdx.x == 0 && (int)blockIdx.x < nwatch, NULL);
}

// The gemm batch's watcher: one warp beside cuBLAS's kernels, until *stop.
__global__ void k_watch(uint64_t run_ns, uint64_t gap_ns, gap *gaps, unsigned *ngaps, unsigned cap,
			volatile int *stop)
{
	watch(gtime() + run_ns, gap_ns, gaps, ngaps, cap, threadIdx.x == 0, stop);
}

__global__ void k_heavy(uint64_t cta_ns, uint64_t gap_ns, gap *gaps, unsigned *ngaps, unsigned cap,
			int nwatch, volatile int *stop)
{
	extern __shared__ float sh[];
	// Touch the shared memory and keep registers live, so that a context save has state to save.
	float acc[32];
	for (int i = 0; i < 32; i++)
		acc[i] = (float)(threadIdx.x + i);
	for (int i = threadIdx.x; i < 200 * 1024 / 4; i += blockDim.x)
		sh[i] = (float)i;
	__syncthreads();
	uint64_t until = gtime() + cta_ns;
	watch(until, gap_ns, gaps, ngaps, cap, threadIdx.x == 0 && (int)blockIdx.x < nwatch, NULL);
	float s = 0;
	for (int i = 0; i < 32; i++)
		s += acc[i] * sh[(threadIdx.x * 7 + i) % (200 * 1024 / 4)];
	if (s == -1.0f)
		sh[0] = s;
}

// The service's kernel: spin work_ns, stamp the kernel's first start and last end.
__global__ void k_step(uint64_t work_ns, unsigned long long *first, unsigned long long *last,
		       volatile unsigned *hostflag, unsigned flagval)
{
	uint64_t t0 = gtime();
	if (threadIdx.x == 0)
		atomicMin(first, (unsigned long long)t0);
	while (gtime() - t0 < work_ns)
		;
	__syncthreads();
	if (threadIdx.x == 0) {
		atomicMax(last, (unsigned long long)gtime());
		if (hostflag) {
			__threadfence_system();
			*hostflag = flagval;
		}
	}
}

// The tail: keeps the service's context busy after a step until the host has queued the next
// step (*rel >= want) or tail_ns have passed.
__global__ void k_tail(volatile unsigned *rel, unsigned want, uint64_t tail_ns)
{
	uint64_t t0 = gtime();
	while (*rel < want && gtime() - t0 < tail_ns)
		;
}

// Queued behind a tail (TAIL_MODE=flag2, side2): work the service's context has pending while
// the tail runs.
__global__ void k_nop(void) {}

/* COPY=3/4: the step's 8 bytes copied to the host by a kernel (host memory the GPU maps). */
__global__ void k_copy8(unsigned long long *dst, const unsigned long long *src)
{
	*(volatile unsigned long long *)dst = *src;
	__threadfence_system();
}

// The bridge (TAIL_MODE=bridge): queued on a stream of its own, with nothing before it, when the
// host begins to wait for step seq (an empty kernel queued behind it). Runs until the host has
// queued the next step (w[1] >= seq, then margin_ns more), or linger_ns after the host's wait
// returned (w[0] >= seq), or cap_ns after it began.
__device__ void bridge_loop(volatile unsigned *w, unsigned seq, uint64_t cap_ns, uint64_t linger_ns,
			    uint64_t margin_ns)
{
	uint64_t t0 = gtime(), tret = 0, trel = 0;
	for (;;) {
		uint64_t t = gtime();
		if (t - t0 > cap_ns)
			break;
		if ((int)(w[1] - seq) >= 0) {
			if (!trel)
				trel = t;
			if (t - trel >= margin_ns)
				break;
		} else if ((int)(w[0] - seq) >= 0) {
			if (!tret)
				tret = t;
			if (t - tret >= linger_ns)
				break;
		}
		__nanosleep(500);
	}
}

__global__ void k_bridge(volatile unsigned *w, unsigned seq, uint64_t cap_ns, uint64_t linger_ns,
			 uint64_t margin_ns)
{
	bridge_loop(w, seq, cap_ns, linger_ns, margin_ns);
}

// BRIDGE_GRAPH=1: the same, launched as a graph captured once; its seq read from *seqp.
__global__ void k_bridge_mem(volatile unsigned *w, const volatile unsigned *seqp, uint64_t cap_ns,
			     uint64_t linger_ns, uint64_t margin_ns)
{
	bridge_loop(w, *seqp, cap_ns, linger_ns, margin_ns);
}

// Ping: spin on a host-mapped request counter; answer each with %globaltimer.
__global__ void k_ping(volatile unsigned *req, volatile unsigned long long *resp, volatile unsigned *ack, int n)
{
	for (int i = 1; i <= n; i++) {
		while (*req != (unsigned)i)
			;
		resp[i] = gtime();
		__threadfence_system();
		*ack = (unsigned)i;
	}
}

struct calib {
	double off; // gpu_ns - host_ns
	double rtt;
	uint64_t at;
};

static calib ping(int n)
{
	unsigned *req, *ack;
	unsigned long long *resp;
	CK(cudaHostAlloc(&req, 64, cudaHostAllocMapped));
	CK(cudaHostAlloc(&ack, 64, cudaHostAllocMapped));
	CK(cudaHostAlloc(&resp, sizeof(unsigned long long) * (n + 1), cudaHostAllocMapped));
	*req = 0;
	*ack = 0;
	unsigned *dreq, *dack;
	unsigned long long *dresp;
	CK(cudaHostGetDevicePointer(&dreq, req, 0));
	CK(cudaHostGetDevicePointer(&dack, ack, 0));
	CK(cudaHostGetDevicePointer(&dresp, resp, 0));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	k_ping<<<1, 1, 0, s>>>(dreq, dresp, dack, n);
	calib best = { 0, 1e18, 0 };
	for (int i = 1; i <= n; i++) {
		uint64_t a = host_ns();
		__atomic_store_n(req, (unsigned)i, __ATOMIC_SEQ_CST);
		uint64_t lim = a + 1000000000ull;
		while (__atomic_load_n((volatile unsigned *)ack, __ATOMIC_SEQ_CST) != (unsigned)i && host_ns() < lim)
			;
		uint64_t b = host_ns();
		double rtt = (double)(b - a);
		if (rtt < best.rtt) {
			best.rtt = rtt;
			best.off = (double)resp[i] - ((double)a + (double)b) / 2;
			best.at = a;
		}
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	cudaFreeHost(req);
	cudaFreeHost(ack);
	cudaFreeHost(resp);
	return best;
}

static volatile sig_atomic_t stop_req;
static void on_term(int s)
{
	(void)s;
	stop_req = 1;
}

static int batch(const char *mode, double secs, const char *out)
{
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, 0));
	int nsm = p.multiProcessorCount;
	uint64_t gap_ns = (uint64_t)envl("GAP_NS", 2500);
	int nwatch = (int)envl("WATCH", 8);
	unsigned cap = 4u << 20;
	gap *gaps;
	unsigned *ngaps;
	int *stop;
	CK(cudaMalloc(&gaps, sizeof(gap) * cap));
	CK(cudaMalloc(&ngaps, 4));
	CK(cudaMemset(ngaps, 0, 4));
	CK(cudaHostAlloc(&stop, 64, cudaHostAllocMapped));
	*stop = 0;
	int *dstop;
	CK(cudaHostGetDevicePointer(&dstop, stop, 0));
	uint64_t cta_ns = (uint64_t)envl("CTA_US", 20000) * 1000;
	cudaStream_t s, w;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&w, cudaStreamNonBlocking));
	cublasHandle_t h = NULL;
	__nv_bfloat16 *A = NULL, *B = NULL, *C = NULL;
	int N = (int)envl("GEMM_N", 8192);
	if (!strcmp(mode, "gemm")) {
		if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
			return 2;
		cublasSetStream(h, s);
		CK(cudaMalloc(&A, (size_t)N * N * 2));
		CK(cudaMalloc(&B, (size_t)N * N * 2));
		CK(cudaMalloc(&C, (size_t)N * N * 2));
		CK(cudaMemset(A, 0, (size_t)N * N * 2));
		CK(cudaMemset(B, 0, (size_t)N * N * 2));
	}
	if (!strcmp(mode, "heavy"))
		CK(cudaFuncSetAttribute(k_heavy, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
	uint64_t t_end = host_ns() + (uint64_t)(secs * 1e9);
	long iters = 0;
	float one = 1.0f, zero = 0.0f;
	/* SGATE=FILE: before each of its kernels the batch's stream waits (cuStreamWaitValue32, EQ 0)
	 * on the first word of FILE, which the service sets to 1 while a request is open (its GATE):
	 * a batch held in its own stream. BLOCK_MS=N: after N ms the stream waits on a word released
	 * only at the end (a batch blocked on a semaphore, nothing else to run). WATCH_OFF=1: no
	 * watcher kernel (a running watcher keeps the batch runnable). */
	long block_ms = envl("BLOCK_MS", 0);
	int watch_off = (int)envl("WATCH_OFF", 0) || (getenv("SGATE") && *getenv("SGATE"));
	CUdeviceptr dsgate = 0, dblock = 0;
	unsigned *blockw = NULL;
	volatile unsigned *sgate = NULL;
	const char *sg = getenv("SGATE");
	if (sg && *sg) {
		int fd = open(sg, O_RDWR);
		void *m = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
		if (fd >= 0)
			close(fd);
		if (m == MAP_FAILED) {
			fprintf(stderr, "tl: SGATE %s: cannot map\n", sg);
			return 2;
		}
		CK(cudaHostRegister(m, 4096, cudaHostRegisterMapped));
		void *dp;
		CK(cudaHostGetDevicePointer(&dp, m, 0));
		dsgate = (CUdeviceptr)dp;
		sgate = (volatile unsigned *)m;
	}
	if (block_ms) {
		CK(cudaHostAlloc(&blockw, 64, cudaHostAllocMapped));
		*blockw = 0;
		void *dp;
		CK(cudaHostGetDevicePointer(&dp, blockw, 0));
		dblock = (CUdeviceptr)dp;
	}
	/* Two GEMMs first: their modules are loaded lazily at the first launch, and that load waited for
	 * the running watcher (13 s: the batch then ran no GEMM at all). */
	for (int i = 0; i < 2 && h; i++) {
		cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, A, CUDA_R_16BF, N, B, CUDA_R_16BF, N,
			     &zero, C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
		CK(cudaStreamSynchronize(s));
	}
	if (!strcmp(mode, "gemm") && !watch_off) // the watcher: one warp for the whole run
		k_watch<<<1, 32, 0, w>>>(block_ms ? (uint64_t)block_ms * 1000000ull : (uint64_t)(secs * 1e9) + 1000000000ull,
					 gap_ns, gaps, ngaps, cap, dstop);
	uint64_t t_block = block_ms ? host_ns() + (uint64_t)block_ms * 1000000ull : 0;
	fprintf(stderr, "tl batch %s: %d SMs, ready\n", mode, nsm);
	cudaEvent_t inflight[3];
	for (int i = 0; i < 3; i++)
		CK(cudaEventCreateWithFlags(&inflight[i], cudaEventDisableTiming));
	while (host_ns() < t_end && !stop_req) {
		if (t_block && host_ns() >= t_block) {
			/* Blocked: the stream waits on a word set only at the end, two GEMMs behind it. */
			if (cuStreamWaitValue32((CUstream)s, dblock, 1, CU_STREAM_WAIT_VALUE_EQ) != CUDA_SUCCESS) {
				fprintf(stderr, "tl: cuStreamWaitValue32 failed\n");
				return 2;
			}
			for (int i = 0; i < 2 && h; i++)
				cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, A, CUDA_R_16BF, N, B,
					     CUDA_R_16BF, N, &zero, C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
					     CUBLAS_GEMM_DEFAULT);
			/* Read back: the event after the two GEMMs is not done while the wait holds. */
			cudaEvent_t behind;
			CK(cudaEventCreateWithFlags(&behind, cudaEventDisableTiming));
			CK(cudaEventRecord(behind, s));
			fprintf(stderr, "tl batch: blocked after %ld launches\n", iters);
			while (host_ns() < t_end && !stop_req)
				usleep(1000);
			cudaError_t q = cudaEventQuery(behind);
			fprintf(stderr, "tl batch: the work behind the wait %s at the end\n",
				q == cudaErrorNotReady ? "had not run (the wait held)" : "had run (the wait did not hold)");
			*blockw = 1;
			break;
		}
		if (dsgate && cuStreamWaitValue32((CUstream)s, dsgate, 0, CU_STREAM_WAIT_VALUE_EQ) != CUDA_SUCCESS) {
			fprintf(stderr, "tl: cuStreamWaitValue32 (SGATE) failed\n");
			return 2;
		}
		if (iters >= 2)
			CK(cudaEventSynchronize(inflight[(iters - 2) % 3]));
		if (!strcmp(mode, "spin"))
			k_spin<<<nsm * 4, 128, 0, s>>>(cta_ns, gap_ns, gaps, ngaps, cap, nwatch, dstop);
		else if (!strcmp(mode, "heavy"))
			k_heavy<<<nsm, 1024, 200 * 1024, s>>>(cta_ns, gap_ns, gaps, ngaps, cap, nwatch, dstop);
		else
			cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, A, CUDA_R_16BF, N, B,
				     CUDA_R_16BF, N, &zero, C, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
				     CUBLAS_GEMM_DEFAULT);
		CK(cudaEventRecord(inflight[iters % 3], s));
		iters++;
	}
	uint64_t t_stop = host_ns();
	fprintf(stderr, "tl batch: stopping after %ld launches\n", iters);
	*stop = 1;
	if (sgate) /* a service that ended inside a request left the gate closed: open it */
		*sgate = 0;
	CK(cudaDeviceSynchronize());
	unsigned n;
	CK(cudaMemcpy(&n, ngaps, 4, cudaMemcpyDeviceToHost));
	if (n > cap)
		n = cap;
	gap *hg = (gap *)malloc(sizeof(gap) * (n ? n : 1));
	CK(cudaMemcpy(hg, gaps, sizeof(gap) * n, cudaMemcpyDeviceToHost));
	fprintf(stderr, "tl batch: synchronised %.3f s after the stop, %u gaps\n", (host_ns() - t_stop) / 1e9, n);
	/* GAP_KEEP_NS: only gaps this long are written (a switch takes ~140 us; millions of short
	 * ones took longer to write than run.sh waits). */
	uint64_t keep_ns = (uint64_t)envl("GAP_KEEP_NS", 10000);
	FILE *f = fopen(out, "w");
	if (!f)
		return 2;
	static char fbuf[1 << 20];
	setvbuf(f, fbuf, _IOFBF, sizeof(fbuf));
	unsigned kept = 0;
	for (unsigned i = 0; i < n; i++)
		kept += hg[i].end - hg[i].start >= keep_ns;
	fprintf(f, "# batch %s iters %ld gaps %u gap_ns %llu keep_ns %llu\n", mode, iters, kept,
		(unsigned long long)gap_ns, (unsigned long long)keep_ns);
	for (unsigned i = 0; i < n; i++)
		if (hg[i].end - hg[i].start >= keep_ns)
			fprintf(f, "%llu %llu %llu\n", hg[i].sm, hg[i].start, hg[i].end);
	fclose(f);
	fprintf(stderr, "tl batch %s: %ld launches, %u gaps (%u of %llu ns or more written), %.3f s after the stop\n",
		mode, iters, n, kept, (unsigned long long)keep_ns, (host_ns() - t_stop) / 1e9);
	return 0;
}

static int svc(const char *out)
{
	int reqs = (int)envl("REQS", 200), steps = (int)envl("STEPS", 8), kernels = (int)envl("KERNELS", 4);
	int ctas = (int)envl("CTAS", 1), threads = (int)envl("THREADS", 128);
	uint64_t work = (uint64_t)envl("WORK_NS", 5000);
	long period = envl("PERIOD_US", 5000);
	int async = (int)envl("ASYNC", 0);
	int copy = (int)envl("COPY", 0);
	uint64_t tail_ns = (uint64_t)envl("TAIL_US", 0) * 1000;
	/* TAIL_MODE: flag (same stream, ends when the next step is queued or at TAIL_US), same (same
	 * stream, TAIL_US), side (a stream of its own, after the step's work, TAIL_US); flag2 (flag
	 * with an empty kernel queued behind the tail, so that the context has work pending while
	 * the tail runs), side2 (the same on a stream of its own, after the step's work); flag2 and
	 * side2 end when the next step is queued or at TAIL_US, and the host does not end the
	 * request's last one (its timeout does) */
	const char *tail_mode = getenv("TAIL_MODE") ? getenv("TAIL_MODE") : "flag";
	int tail_side2 = !strcmp(tail_mode, "side2"), tail_flag2 = !strcmp(tail_mode, "flag2");
	int tail_side = !strcmp(tail_mode, "side") || tail_side2, tail_flag = !strcmp(tail_mode, "flag") || tail_flag2;
	int tail_rel = tail_flag || tail_side2; /* ended by the host at the next step */
	/* bridge: k_bridge and an empty kernel on a stream of their own at each wait's start,
	 * TAIL_US its linger after the wait returned (0 allowed), BRIDGE_MARGIN_US (20) */
	int bridge = !strcmp(tail_mode, "bridge");
	uint64_t margin_ns = (uint64_t)envl("BRIDGE_MARGIN_US", 20) * 1000;
	unsigned bseq = 0;
	/* WAIT=1: after each step its stream waits (cuStreamWaitValue32, a semaphore acquire) for the
	 * host to queue the next step (or end the request): the channel is never empty between
	 * steps. */
	int waitv = (int)envl("WAIT", 0);
	/* WAIT_LATE_US (with WAIT=1): the host releases that wait WAIT_LATE_US after it queued the
	 * step behind it: the step's doorbell comes first and the release, a write to memory, later
	 * (as a host function's completion may come after the next launch). */
	uint64_t wait_late_ns = (uint64_t)envl("WAIT_LATE_US", 0) * 1000;
	/* PRE_US: each step begins with an empty kernel, then the host takes PRE_US before it
	 * queues the step's own work (small work queued before a step's bulk, a slow host
	 * between). */
	uint64_t pre_ns = (uint64_t)envl("PRE_US", 0) * 1000;
	/* POST_US: the host takes POST_US after it queued the step's work, before it waits (as
	 * PyTorch's host between a replay and its next call): whether the work queued is on the
	 * GPU before the next call into the driver. */
	uint64_t post_ns = (uint64_t)envl("POST_US", 0) * 1000;
	/* LGAP_US: the host takes LGAP_US between a step's launches (an eager, host-bound step:
	 * the GPU may run dry between its kernels). */
	uint64_t lgap_ns = (uint64_t)envl("LGAP_US", 0) * 1000;
	cudaStream_t side;
	cudaEvent_t evside;
	CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&evside, cudaEventDisableTiming));
	const char *sync = getenv("SYNC") ? getenv("SYNC") : "spin";
	unsigned flags = !strcmp(sync, "block") ? cudaDeviceScheduleBlockingSync
		       : !strcmp(sync, "yield") ? cudaDeviceScheduleYield
						: cudaDeviceScheduleSpin;
	CK(cudaSetDeviceFlags(flags | cudaDeviceMapHost));
	int poll = !strcmp(sync, "poll"), ctxsync = !strcmp(sync, "ctx");
	volatile uint64_t *gate = NULL;
	const char *gp = getenv("GATE");
	if (gp && *gp) {
		int fd = open(gp, O_RDWR);
		if (fd >= 0)
			gate = (volatile uint64_t *)mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (gate == MAP_FAILED)
			gate = NULL;
	}
	CK(cudaFree(0));
	if (envl("PIN_SELF", 0)) /* (before its first context synchronisation, the warm-up's) */
		pin_self();
	calib c0 = ping(200);
	int nst = reqs * steps;
	unsigned long long *dfirst, *dlast;
	size_t nk = (size_t)nst * kernels;
	CK(cudaMalloc(&dfirst, nk * 8));
	CK(cudaMalloc(&dlast, nk * 8));
	CK(cudaMemset(dfirst, 0xff, nk * 8));
	CK(cudaMemset(dlast, 0, nk * 8));
	unsigned *hflag, *dflag = NULL;
	CK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped));
	*hflag = 0;
	if (poll)
		CK(cudaHostGetDevicePointer(&dflag, hflag, 0));
	unsigned *hrel, *drel;
	CK(cudaHostAlloc(&hrel, 64, cudaHostAllocMapped));
	memset(hrel, 0, 64);
	CK(cudaHostGetDevicePointer(&drel, hrel, 0));
	unsigned long long *hcopy;
	CK(cudaHostAlloc(&hcopy, 64, 0));
	if (ctas <= 0) {
		cudaDeviceProp p;
		CK(cudaGetDeviceProperties(&p, 0));
		ctas = p.multiProcessorCount;
	}
	uint64_t *sub0 = (uint64_t *)calloc(nst, 8), *sub1 = (uint64_t *)calloc(nst, 8);
	uint64_t *ret = (uint64_t *)calloc(nst, 8), *arr = (uint64_t *)calloc(reqs, 8);
	cudaStream_t s = 0; /* LEGACY=1: the steps on the legacy default stream (PyTorch's) */
	if (!envl("LEGACY", 0))
		CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cudaEvent_t *ev = (cudaEvent_t *)malloc(sizeof(cudaEvent_t) * steps);
	for (int i = 0; i < steps; i++)
		CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming |
							    (!strcmp(sync, "block") ? cudaEventBlockingSync : 0)));
	// warm-up: the kernels loaded, nothing stamped
	for (int i = 0; i < 20; i++)
		k_step<<<ctas, threads, 0, s>>>(work, dfirst, dlast, NULL, 0);
	CK(cudaStreamSynchronize(s));
	CK(cudaMemset(dfirst, 0xff, nk * 8));
	CK(cudaMemset(dlast, 0, nk * 8));
	CK(cudaDeviceSynchronize());
	/* GRAPH=1: each step's kernels captured as a graph of its own (PyTorch's replays), launched
	 * as one; BRIDGE_GRAPH=1: the bridge and its empty kernel as a graph too. */
	int flush = (int)envl("FLUSH", 0);
	int graph = (int)envl("GRAPH", 0), bridge_graph = (int)envl("BRIDGE_GRAPH", 0);
	cudaGraphExec_t *gx = NULL, bgx = NULL;
	/* BLAS=N (with GRAPH=1): N cuBLAS bf16 layers of 4096 at batch 1 (PyTorch's decode, each
	 * a weight of its own) in each step's graph after its first kernel. */
	int blas = (int)envl("BLAS", 0);
	cublasHandle_t bh = NULL;
	__nv_bfloat16 *bw = NULL, *bx = NULL;
	const int BD = 4096;
	if (graph && blas > 0) {
		void *ws;
		if (cublasCreate(&bh) != CUBLAS_STATUS_SUCCESS)
			return 2;
		CK(cudaMalloc(&ws, 32 << 20));
		cublasSetWorkspace(bh, ws, 32 << 20);
		CK(cudaMalloc(&bw, (size_t)blas * BD * BD * 2));
		CK(cudaMemset(bw, 0, (size_t)blas * BD * BD * 2));
		CK(cudaMalloc(&bx, 2 * BD * 2));
		CK(cudaMemset(bx, 0, 2 * BD * 2));
	}
	if (graph) {
		cudaStream_t cs;
		CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
		if (bh)
			cublasSetStream(bh, cs);
		gx = (cudaGraphExec_t *)calloc(nst, sizeof(*gx));
		for (int st = 0; st < nst; st++) {
			cudaGraph_t g;
			CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
			for (int k = 0; k < kernels; k++) {
				size_t i = (size_t)st * kernels + k;
				float one = 1.0f, zero = 0.0f;
				for (int l = 0; k == 1 && l < blas; l++)
					cublasGemmEx(bh, CUBLAS_OP_N, CUBLAS_OP_N, BD, 1, BD, &one, bw + (size_t)l * BD * BD,
						     CUDA_R_16BF, BD, bx + (l % 2) * BD, CUDA_R_16BF, BD, &zero,
						     bx + ((l + 1) % 2) * BD, CUDA_R_16BF, BD, CUBLAS_COMPUTE_32F,
						     CUBLAS_GEMM_DEFAULT);
				k_step<<<ctas, threads, 0, cs>>>(work, dfirst + i, dlast + i, NULL, 0);
			}
			CK(cudaStreamEndCapture(cs, &g));
			CK(cudaGraphInstantiate(&gx[st], g, 0));
			CK(cudaGraphUpload(gx[st], s));
		}
		CK(cudaStreamSynchronize(s));
	}
	if (bridge_graph) {
		cudaGraph_t g;
		CK(cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal));
		k_bridge_mem<<<1, 1, 0, side>>>(drel, drel + 2, 50000000ull, tail_ns, margin_ns);
		k_nop<<<1, 1, 0, side>>>();
		CK(cudaStreamEndCapture(side, &g));
		CK(cudaGraphInstantiate(&bgx, g, 0));
		CK(cudaGraphUpload(bgx, side));
		CK(cudaStreamSynchronize(side));
	}
	uint64_t t0 = host_ns() + 20000000ull;
	auto launch_step = [&](int st) {
		sub0[st] = host_ns();
		if (bridge && bseq)
			__atomic_store_n(&hrel[1], bseq, __ATOMIC_SEQ_CST); /* the last bridge ends */
		if (pre_ns) {
			k_nop<<<1, 32, 0, s>>>();
			while (host_ns() < sub0[st] + pre_ns)
				;
		}
		for (int k = 0; k < kernels && !graph; k++) {
			size_t i = (size_t)st * kernels + k;
			int lastk = k == kernels - 1;
			for (uint64_t t1 = host_ns() + lgap_ns; k && lgap_ns && host_ns() < t1;)
				;
			k_step<<<ctas, threads, 0, s>>>(work, dfirst + i, dlast + i, lastk ? dflag : NULL,
							 (unsigned)(st + 1));
		}
		if (graph)
			CK(cudaGraphLaunch(gx[st], s));
		if (copy == 2) { /* on a stream of its own, after the step: the next step need not wait for it */
			CK(cudaEventRecord(evside, s));
			CK(cudaStreamWaitEvent(side, evside, 0));
			CK(cudaMemcpyAsync(hcopy, dlast + (size_t)st * kernels, 8, cudaMemcpyDeviceToHost, side));
		} else if (copy == 3 || copy == 4) { /* by a kernel; 4: then a copy of 0 bytes */
			k_copy8<<<1, 1, 0, s>>>(hcopy, dlast + (size_t)st * kernels);
			if (copy == 4 && cuMemcpyDtoHAsync(hcopy, (CUdeviceptr)(dlast + (size_t)st * kernels), 0, (CUstream)s) != CUDA_SUCCESS) {
				fprintf(stderr, "tl: a copy of 0 bytes failed\n");
				exit(2);
			}
		} else if (copy)
			CK(cudaMemcpyAsync(hcopy, dlast + (size_t)st * kernels, 8, cudaMemcpyDeviceToHost, s));
		if (waitv) {
			for (uint64_t t1 = host_ns() + wait_late_ns; wait_late_ns && host_ns() < t1;)
				;
			__atomic_store_n(hrel, (unsigned)st, __ATOMIC_SEQ_CST); /* the last step's wait ends */
			CK(cudaEventRecord(ev[0], s));
			if (cuStreamWaitValue32((CUstream)s, (CUdeviceptr)drel, (unsigned)st + 1, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
				fprintf(stderr, "tl: cuStreamWaitValue32 failed\n");
				exit(2);
			}
		} else if (bridge) {
		} else if (tail_ns && tail_side) {
			if (tail_rel)
				__atomic_store_n(hrel, (unsigned)st, __ATOMIC_SEQ_CST); /* the last step's tail ends */
			CK(cudaEventRecord(evside, s));
			CK(cudaStreamWaitEvent(side, evside, 0));
			k_tail<<<1, 32, 0, side>>>(drel, tail_rel ? (unsigned)st + 1 : 0xffffffffu, tail_ns);
			if (tail_side2)
				k_nop<<<1, 32, 0, side>>>();
		} else if (tail_ns) {
			if (tail_flag)
				__atomic_store_n(hrel, (unsigned)st, __ATOMIC_SEQ_CST); /* the last step's tail ends */
			CK(cudaEventRecord(ev[0], s));
			k_tail<<<1, 32, 0, s>>>(drel, tail_flag ? (unsigned)st + 1 : 0xffffffffu, tail_ns);
			if (tail_flag2)
				k_nop<<<1, 32, 0, s>>>();
		}
		if (flush) /* FLUSH=1: a query of the stream right after the step is queued */
			(void)cudaStreamQuery(s);
		sub1[st] = host_ns();
		while (post_ns && host_ns() < sub1[st] + post_ns)
			;
	};
	auto wait_step = [&](int st, int e) {
		if (bridge) {
			bseq++;
			if (bridge_graph) {
				__atomic_store_n(&hrel[2], bseq, __ATOMIC_SEQ_CST);
				CK(cudaGraphLaunch(bgx, side));
			} else {
				k_bridge<<<1, 1, 0, side>>>(drel, bseq, 50000000ull, tail_ns, margin_ns);
				k_nop<<<1, 1, 0, side>>>();
			}
		}
		if (poll) {
			while (__atomic_load_n((volatile unsigned *)hflag, __ATOMIC_ACQUIRE) < (unsigned)(st + 1))
				;
		} else if (async || waitv || (tail_ns && !tail_side && !bridge)) {
			CK(cudaEventSynchronize(ev[e]));
		} else if (ctxsync) {
			CK(cudaDeviceSynchronize());
		} else {
			CK(cudaStreamSynchronize(s));
		}
		if (bridge)
			__atomic_store_n(&hrel[0], bseq, __ATOMIC_SEQ_CST);
		ret[st] = host_ns();
	};
	for (int r = 0; r < reqs; r++) {
		arr[r] = t0 + (uint64_t)r * (uint64_t)period * 1000ull;
		while (host_ns() < arr[r])
			;
		if (gate)
			*gate = 1;
		int base = r * steps;
		if (async) {
			launch_step(base);
			CK(cudaEventRecord(ev[0], s));
			for (int k = 0; k < steps; k++) {
				if (k + 1 < steps) {
					launch_step(base + k + 1);
					CK(cudaEventRecord(ev[k + 1], s));
				}
				wait_step(base + k, k);
			}
		} else {
			for (int k = 0; k < steps; k++) {
				launch_step(base + k);
				wait_step(base + k, 0);
			}
		}
		if ((tail_ns && tail_flag && !tail_flag2) || waitv)
			__atomic_store_n(hrel, (unsigned)(base + steps), __ATOMIC_SEQ_CST);
		if (gate)
			*gate = 0;
		if (r == 0 && envl("PIN_OTHERS", 0))
			pin_others();
	}
	CK(cudaDeviceSynchronize());
	calib c1 = ping(200);
	unsigned long long *hf = (unsigned long long *)malloc(nk * 8), *hl = (unsigned long long *)malloc(nk * 8);
	CK(cudaMemcpy(hf, dfirst, nk * 8, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hl, dlast, nk * 8, cudaMemcpyDeviceToHost));
	FILE *f = fopen(out, "w");
	if (!f)
		return 2;
	fprintf(f, "# svc reqs %d steps %d kernels %d ctas %d work_ns %llu period_us %ld sync %s async %d copy %d tail_us %llu tail_mode %s wait %d\n",
		reqs, steps, kernels, ctas, (unsigned long long)work, period, sync, async, copy, (unsigned long long)(tail_ns / 1000), tail_mode, waitv);
	fprintf(f, "# calib %.1f %.1f %llu %.1f %.1f %llu\n", c0.off, c0.rtt, (unsigned long long)c0.at, c1.off,
		c1.rtt, (unsigned long long)c1.at);
	// one line per step: req step arrival sub0 sub1 ret, then each kernel's first last (gpu ns)
	for (int r = 0; r < reqs; r++)
		for (int k = 0; k < steps; k++) {
			int st = r * steps + k;
			fprintf(f, "%d %d %llu %llu %llu %llu", r, k, (unsigned long long)arr[r],
				(unsigned long long)sub0[st], (unsigned long long)sub1[st], (unsigned long long)ret[st]);
			for (int j = 0; j < kernels; j++)
				fprintf(f, " %llu %llu", hf[(size_t)st * kernels + j], hl[(size_t)st * kernels + j]);
			fputc('\n', f);
		}
	fclose(f);
	fprintf(stderr, "tl svc: %d requests, calib rtt %.0f/%.0f ns\n", reqs, c0.rtt, c1.rtt);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "batch"))
		return batch(argv[2], strtod(argv[3], NULL), argv[4]);
	if (argc == 3 && !strcmp(argv[1], "svc"))
		return svc(argv[2]);
	fprintf(stderr, "usage: tl batch spin|heavy|gemm SECS OUT | tl svc OUT\n");
	return 1;
}
