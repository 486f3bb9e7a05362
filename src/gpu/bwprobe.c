/*
 * bwprobe.c - a GPU's memory halves from a bandwidth probe (bwprobe.h):
 *
 *  A copy kernel (PTX, JIT-compiled by the driver) streams for a fixed time
 *  on the TPCs of one GPC and counts the 16-byte words it copied. Two of
 *  them run at once on two streams of one context, each with its own mask
 *  and buffers: a reference GPC is timed alone and beside a neighbour on
 *  each other GPC in turn. What a neighbour costs the reference per unit of
 *  its own bandwidth splits the GPCs in two (core/membw.c); a second
 *  reference in the other half must agree.
 *
 * The kernels end on the GPU's own clock (%globaltimer), so no launch can
 * run on, and the child is killed at the timeout in any case. Outside MPS,
 * as the calibration is.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "bwprobe.h"
#include "core/tpcset.h"
#include "os/child.h"
#include "os/clock.h"
#include "probe.h"
#include "ptx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_BYTES (128u << 20)      /* per buffer: beyond any L2 (H100: 50 MB) */
#define MEASURE_NS 4000000ull       /* the reference streams 4 ms */
#define NEIGHBOUR_NS 10000000ull    /* the neighbour 10 ms, from before to after it */
#define REPS 3
#define STREAM_NON_BLOCKING 1u
#define MAX_SLOTS (REPS * (1 + 2 * NVT_MAX_GPCS))

/*
 * nvt_membw(src, dst, n16, dur, count): each thread copies 16-byte words
 * src[i] -> dst[i], i striding over the grid and wrapping at n16, looks at
 * %globaltimer every 16 words, stops once dur ns have passed since it began,
 * and adds the words it copied to *count.
 */
static const char membw_body[] =
	".visible .entry nvt_membw(.param .u64 src, .param .u64 dst, .param .u64 n16,\n"
	"                          .param .u64 dur, .param .u64 count)\n"
	"{\n"
	"  .reg .pred %p<3>;\n"
	"  .reg .b32 %r<12>;\n"
	"  .reg .b64 %rd<20>;\n"
	"  ld.param.u64 %rd1, [src];\n"
	"  ld.param.u64 %rd2, [dst];\n"
	"  ld.param.u64 %rd3, [n16];\n"
	"  ld.param.u64 %rd9, [dur];\n"
	"  ld.param.u64 %rd10, [count];\n"
	"  cvta.to.global.u64 %rd1, %rd1;\n"
	"  cvta.to.global.u64 %rd2, %rd2;\n"
	"  cvta.to.global.u64 %rd10, %rd10;\n"
	NVT_PTX_GRID_STRIDE
	"  mov.u64 %rd11, %rd4;\n"
	"  mov.u64 %rd12, 0;\n"
	"  mov.u64 %rd13, %globaltimer;\n"
	"LOOP:\n"
	"  setp.ge.u64 %p1, %rd11, %rd3;\n"
	"  @%p1 mov.u64 %rd11, %rd4;\n"
	"  shl.b64 %rd6, %rd11, 4;\n"
	"  add.u64 %rd7, %rd1, %rd6;\n"
	"  add.u64 %rd8, %rd2, %rd6;\n"
	"  ld.global.v4.u32 {%r7, %r8, %r9, %r10}, [%rd7];\n"
	"  st.global.v4.u32 [%rd8], {%r7, %r8, %r9, %r10};\n"
	"  add.u64 %rd11, %rd11, %rd5;\n"
	"  add.u64 %rd12, %rd12, 1;\n"
	"  and.b64 %rd14, %rd12, 15;\n"
	"  setp.ne.u64 %p2, %rd14, 0;\n"
	"  @%p2 bra LOOP;\n"
	"  mov.u64 %rd15, %globaltimer;\n"
	"  sub.u64 %rd16, %rd15, %rd13;\n"
	"  setp.lt.u64 %p2, %rd16, %rd9;\n"
	"  @%p2 bra LOOP;\n"
	"  atom.global.add.u64 %rd17, [%rd10], %rd12;\n"
	"  ret;\n"
	"}\n";

struct bench {
	const struct nvt_topology *topo;
	unsigned tpcs[NVT_MAX_GPCS];
	CUfunction fn;
	CUstream stream[2];                 /* 0: the reference, 1: the neighbour */
	CUdeviceptr src[2], dst[2], counts; /* buffers of each role; a counter per launch */
	unsigned long long n16;
	uint64_t words[MAX_SLOTS];
};

struct child_out {
	int ok;
	struct nvt_bwprobe_result res;
	char error[320];
};

#define CU_CHECK(call, what) NVT_CU_CHECK(r, call, what)

/* Launches the copy kernel on GPC gpc's TPCs, as role (0 or 1), for dur ns,
 * counting into counter slot. */
static int launch_on(struct child_out *r, struct bench *b, unsigned role, unsigned gpc,
		     unsigned long long dur, unsigned slot)
{
	struct nvt_tpcset gpcs, on;
	uint32_t disable[NVT_TMD_MASK_WORDS];
	CUdeviceptr count = b->counts + (CUdeviceptr)slot * sizeof(uint64_t);
	void *params[] = {&b->src[role], &b->dst[role], &b->n16, &dur, &count};
	CUresult rc;

	nvt_set_clear(&gpcs);
	nvt_set_add(&gpcs, gpc);
	if (nvt_topo_gpc_tpcs(b->topo, &gpcs, &on) || !nvt_topo_disable(b->topo, &on, disable))
		return nvt_why(r->error, sizeof(r->error), "GPC %u has no TPC", gpc);
	nvt_probe_mask(b->topo->tmd_layout, disable);
	/* Two blocks of 1024 threads per SM: all resident at once. */
	rc = nvt_cu.launch(b->fn, 4 * b->tpcs[gpc], 1, 1, 1024, 1, 1, 0, b->stream[role], params, NULL);
	nvt_probe_mask(NVT_TMD_NONE, disable);
	return rc ? nvt_why(r->error, sizeof(r->error), "probe launch failed: CUDA error %d", rc) : 0;
}

/* GB/s copied (read and written) by the launch counted in slot. */
static double gbps(const struct bench *b, unsigned slot, unsigned long long dur)
{
	return (double)b->words[slot] * 32.0 / (double)dur;
}

/* The median of n values (the first REPS of them), and their spread (largest - smallest); 0 for none. */
static double median_spread(const double *v, unsigned n, double *spread)
{
	double s[REPS] = {0};

	if (n > REPS)
		n = REPS;
	if (n == 0) {
		*spread = 0;
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned j = i;
		for (; j > 0 && s[j - 1] > v[i]; j--)
			s[j] = s[j - 1];
		s[j] = v[i];
	}
	*spread = s[n - 1] - s[0];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* One probe against reference ref: alone and beside each other GPC, REPS times. */
static int probe_ref(struct child_out *r, struct bench *b, unsigned ref, struct nvt_membw_probe *p)
{
	unsigned n_g = b->topo->n_gpcs, slot = 0;
	static const uint64_t zeros[MAX_SLOTS];
	double alone[REPS], beside[NVT_MAX_GPCS][REPS], hog[NVT_MAX_GPCS][REPS], unused;

	CU_CHECK(nvt_cu.copy_htod(b->counts, zeros, sizeof(zeros)), "clearing the counters");
	for (unsigned rep = 0; rep < REPS; rep++) {
		if (launch_on(r, b, 0, ref, MEASURE_NS, slot++))
			return -1;
		CU_CHECK(nvt_cu.sync(), "probe synchronize");
		for (unsigned i = 0; i < n_g; i++) {
			/* Each repetition visits the neighbours in another order. */
			unsigned g = (i + rep * 5) % n_g;
			if (g == ref)
				continue;
			if (launch_on(r, b, 1, g, NEIGHBOUR_NS, slot++) ||
			    launch_on(r, b, 0, ref, MEASURE_NS, slot++))
				return -1;
			CU_CHECK(nvt_cu.sync(), "probe synchronize");
		}
	}
	CU_CHECK(nvt_cu.copy_dtoh(b->words, b->counts, slot * sizeof(uint64_t)), "reading the counters");
	memset(p, 0, sizeof(*p));
	p->ref = ref;
	slot = 0;
	for (unsigned rep = 0; rep < REPS; rep++) {
		alone[rep] = gbps(b, slot++, MEASURE_NS);
		for (unsigned i = 0; i < n_g; i++) {
			unsigned g = (i + rep * 5) % n_g;
			if (g == ref)
				continue;
			hog[g][rep] = gbps(b, slot++, NEIGHBOUR_NS);
			beside[g][rep] = gbps(b, slot++, MEASURE_NS);
		}
	}
	p->base = median_spread(alone, REPS, &unused);
	for (unsigned g = 0; g < n_g; g++)
		if (g != ref) {
			p->hog[g] = median_spread(hog[g], REPS, &unused);
			p->beside[g] = median_spread(beside[g], REPS, &p->spread[g]);
		}
	return 0;
}

/* The GPC with most TPCs among those with in[g] == want (in NULL: all). */
static int largest(const struct bench *b, const int8_t *in, int want)
{
	int best = -1;
	for (unsigned g = 0; g < b->topo->n_gpcs; g++)
		if ((!in || in[g] == want) && (best < 0 || b->tpcs[g] > b->tpcs[best]))
			best = (int)g;
	return best;
}

static int setup(struct child_out *r, struct bench *b, int ordinal)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule module;
	char ptx[4096];
	int major = 0;

	if (nvt_probe_open(r->error, sizeof(r->error)))
		return -1;
	CU_CHECK(nvt_cu.init(0), "cuInit");
	CU_CHECK(nvt_cu.device_get(&dev, ordinal), "cuDeviceGet");
	CU_CHECK(nvt_cu.attribute(&major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
		 "cuDeviceGetAttribute");
	snprintf(ptx, sizeof(ptx), ".version %s\n.target %s\n.address_size 64\n%s",
		 major >= 9 ? "7.8" : "7.0", major >= 9 ? "sm_90" : major == 8 ? "sm_80" : "sm_70",
		 membw_body);
	CU_CHECK(nvt_cu.ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain (is the GPU exclusive to MPS?)");
	CU_CHECK(nvt_cu.ctx_set(ctx), "cuCtxSetCurrent");
	CU_CHECK(nvt_cu.module_load(&module, ptx), "loading the bandwidth probe kernel");
	CU_CHECK(nvt_cu.module_function(&b->fn, module, "nvt_membw"), "cuModuleGetFunction");
	for (int role = 0; role < 2; role++) {
		CU_CHECK(nvt_cu.stream_create(&b->stream[role], STREAM_NON_BLOCKING), "cuStreamCreate");
		CU_CHECK(nvt_cu.mem_alloc(&b->src[role], BUF_BYTES), "cuMemAlloc");
		CU_CHECK(nvt_cu.mem_alloc(&b->dst[role], BUF_BYTES), "cuMemAlloc");
	}
	CU_CHECK(nvt_cu.mem_alloc(&b->counts, MAX_SLOTS * sizeof(uint64_t)), "cuMemAlloc");
	b->n16 = BUF_BYTES / 16;
	return 0;
}

static int bwprobe(int ordinal, const struct nvt_topology *topo, struct child_out *r)
{
	static struct bench b;
	int8_t split[NVT_MAX_GPCS];
	int first, second;

	memset(&b, 0, sizeof(b));
	b.topo = topo;
	for (unsigned t = 0; t < topo->n_tpcs; t++)
		b.tpcs[topo->gpc[t]]++;
	if (setup(r, &b, ordinal))
		return -1;
	first = largest(&b, NULL, 0);
	if (probe_ref(r, &b, (unsigned)first, &r->res.probe[0]))
		return -1;
	if (!nvt_probe_masks_applied())
		return nvt_why(r->error, sizeof(r->error),
			       "the probe's TPC masks were not applied (a TMD of another layout)");
	r->res.n_probes = 1;
	memset(r->res.halves.half, NVT_HALF_UNKNOWN, sizeof(r->res.halves.half));
	r->res.halves.n_gpcs = topo->n_gpcs;
	if (!nvt_membw_split(&r->res.probe[0], topo->n_gpcs, split)) {
		snprintf(r->res.why, sizeof(r->res.why),
			 "beside GPC %d, no neighbour cost clearly more than another", first);
		return 0;
	}
	second = largest(&b, split, 0);
	if (second < 0 || probe_ref(r, &b, (unsigned)second, &r->res.probe[1]))
		return second < 0 ? 0 : -1;
	if (!nvt_probe_masks_applied())
		return nvt_why(r->error, sizeof(r->error),
			       "the probe's TPC masks were not applied (a TMD of another layout)");
	r->res.n_probes = 2;
	nvt_membw_combine(&r->res.probe[0], &r->res.probe[1], topo->n_gpcs, &r->res.halves,
			  r->res.why, sizeof(r->res.why));
	return 0;
}

struct probe_ctx {
	int ordinal;
	const struct nvt_topology *topo;
};

static void bwprobe_in_child(void *ctx, void *result)
{
	struct probe_ctx *c = ctx;
	struct child_out *r = result;

	/* Outside MPS, as the calibration: it needs a context of its own. */
	setenv(NVT_ENV_MPS_PIPE_DIR, "/nonexistent/nvtaskset-no-mps", 1);
	r->ok = bwprobe(c->ordinal, c->topo, r) == 0;
}

int nvt_bwprobe(int ordinal, const struct nvt_topology *topo, int timeout_ms,
		struct nvt_bwprobe_result *out, char *why, size_t len)
{
	struct probe_ctx ctx = {ordinal, topo};
	struct child_out res;
	uint64_t t0_ns, t1_ns;
	int rc;

	memset(out, 0, sizeof(*out));
	if (topo->n_gpcs < 3 || topo->n_gpcs > NVT_MAX_GPCS) {
		snprintf(why, len, "the GPU's GPCs are not known (they are measured on compute "
			 "capability 9.0 and newer)");
		return -1;
	}
	t0_ns = nvt_clock_ns();
	rc = nvt_child_call(bwprobe_in_child, &ctx, &res, sizeof(res), timeout_ms);
	t1_ns = nvt_clock_ns();
	res.error[sizeof(res.error) - 1] = '\0';
	res.res.why[sizeof(res.res.why) - 1] = '\0';
	if (rc == NVT_CHILD_OK && res.ok) {
		*out = res.res;
		out->halves.n_gpcs = topo->n_gpcs;
		out->seconds = (double)(t1_ns - t0_ns) * 1e-9;
		return 0;
	}
	if (rc == NVT_CHILD_TIMEOUT)
		snprintf(why, len, "the bandwidth probe did not finish within %d s", timeout_ms / 1000);
	else if (rc == NVT_CHILD_ESYS)
		snprintf(why, len, "cannot start a process: %s", strerror(errno));
	else
		snprintf(why, len, "%s", rc == NVT_CHILD_OK && res.error[0] ? res.error :
				      "the bandwidth probe's process failed");
	return -1;
}
