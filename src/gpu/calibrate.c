/*
 * calibrate.c - measures which hardware mask bit names each logical TPC and
 * which TPCs share a GPC, with no kernel module (docs/hardware-facts.md, 3-4):
 *
 *  1. A probe kernel (PTX, JIT-compiled by the driver: no nvcc needed)
 *     records the %smid of each block. With one mask bit disabled at a time
 *     (all others enabled, so no launch can hang) the SMs that vanish are
 *     the TPC that bit names.
 *  2. Thread-block clusters are co-scheduled inside one GPC: launching
 *     clusters of one-block-per-SM blocks and joining the SMs of each
 *     cluster recovers the GPCs (Hopper and newer only).
 *
 * It runs in a child process outside MPS, because MPS clients see
 * virtualised %smid values ([ECRTS25] Pitfall 5, in docs/hardware-facts.md).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "calibrate.h"
#include "core/topo.h"
#include "probe.h"
#include "os/child.h"
#include "os/sysutil.h"
#include "core/tmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appended when a TMD layout failed its check: nobody here has that GPU. */
#define TMD_REPORT_HINT                                                                   \
	". nvtaskset will not partition this GPU. Please report this message with the GPU " \
	"model and driver version (nvidia-smi) to the nvtaskset issue tracker"

/* ---- The probe ------------------------------------------------------------ */

/* Block 0's thread 0 stores %smid at out[blockIdx.x]; every block spins for
 * spin cycles so that the blocks spread over all SMs it may use. */
static const char probe_body[] =
	".address_size 64\n"
	".visible .entry nvt_probe_smid(.param .u64 out, .param .u64 spin)\n"
	"{\n"
	"	.reg .pred %p<3>;\n"
	"	.reg .b32 %r<4>;\n"
	"	.reg .b64 %rd<9>;\n"
	"	mov.u32 %r1, %tid.x;\n"
	"	setp.ne.u32 %p1, %r1, 0;\n"
	"	@%p1 bra WAIT;\n"
	"	mov.u32 %r2, %smid;\n"
	"	mov.u32 %r3, %ctaid.x;\n"
	"	ld.param.u64 %rd1, [out];\n"
	"	cvta.to.global.u64 %rd2, %rd1;\n"
	"	mul.wide.u32 %rd3, %r3, 4;\n"
	"	add.s64 %rd4, %rd2, %rd3;\n"
	"	st.global.u32 [%rd4], %r2;\n"
	"WAIT:\n"
	"	ld.param.u64 %rd5, [spin];\n"
	"	mov.u64 %rd6, %clock64;\n"
	"LOOP:\n"
	"	mov.u64 %rd7, %clock64;\n"
	"	sub.s64 %rd8, %rd7, %rd6;\n"
	"	setp.lt.u64 %p2, %rd8, %rd5;\n"
	"	@%p2 bra LOOP;\n"
	"	ret;\n"
	"}\n";

/* What the calibration callback does to each launch. */
static struct {
	unsigned layout; /* the layout being verified; NVT_TMD_NONE: leave the TMD alone */
	unsigned bit;    /* the one bit to disable */
	int use_mask;    /* write disable[] (nvt_probe_mask) instead of one bit */
	uint32_t disable[NVT_TMD_MASK_WORDS];
	int fired;
	unsigned mismatches; /* masked launches whose TMD was not of the layout */
	/* Seen on the first launch, for choosing the layout: */
	unsigned n_candidates, candidates[4];
	int matches[4]; /* candidate i's version byte matched */
	uint8_t byte58, byte72;
} probe_cb;

static void calibration_callback(void *user, int domain, int cbid, const void *params)
{
	uint32_t disable[NVT_TMD_MASK_WORDS] = {0};
	void *tmd;

	(void)user;
	if (domain != NVT_CB_DOMAIN_LAUNCH || cbid != NVT_CB_ID_LAUNCH || !params ||
	    *(const uint32_t *)params < NVT_CB_PARAMS_MIN_SIZE)
		return;
	tmd = ((void *const *)params)[NVT_CB_PARAMS_TMD_WORD];
	if (!tmd)
		return;
	if (!probe_cb.fired) {
		/* Only the version bytes: every TMD has at least 256 bytes. */
		for (unsigned i = 0; i < probe_cb.n_candidates; i++)
			probe_cb.matches[i] = nvt_tmd_is(probe_cb.candidates[i], tmd);
		probe_cb.byte58 = ((const uint8_t *)tmd)[58];
		probe_cb.byte72 = ((const uint8_t *)tmd)[72];
	}
	probe_cb.fired = 1;
	if (probe_cb.layout == NVT_TMD_NONE)
		return;
	/* Exactly what the shim writes: bits below NVT_HW_BITS, the rest 0. */
	if (probe_cb.use_mask)
		memcpy(disable, probe_cb.disable, sizeof(disable));
	else
		disable[probe_cb.bit / 32] = 1u << (probe_cb.bit % 32);
	if (nvt_tmd_write(probe_cb.layout, tmd, disable))
		probe_cb.mismatches++;
}

/* ---- In the child ---------------------------------------------------------- */

struct child_result {
	int ok;
	int tmd_failed; /* a TMD layout did not check out: worth a report */
	struct nvt_topology topo;
	char error[320];
};

#define CU_CHECK(call, what) NVT_CU_CHECK(r, call, what)

int nvt_probe_masks_applied(void)
{
	return probe_cb.fired && !probe_cb.mismatches;
}

void nvt_probe_mask(unsigned layout, const uint32_t disable[NVT_TMD_MASK_WORDS])
{
	probe_cb.layout = layout;
	probe_cb.use_mask = layout != NVT_TMD_NONE;
	if (probe_cb.use_mask)
		memcpy(probe_cb.disable, disable, sizeof(probe_cb.disable));
}

static int subscribe(char *why, size_t len)
{
	static const CUuuid id = NVT_CB_TABLE_UUID;
	const void *const *table = NULL;
	uint32_t handle;

	if (nvt_cu.export_table((const void **)&table, &id) || !table ||
	    !table[NVT_CB_TABLE_SUBSCRIBE] || !table[NVT_CB_TABLE_ENABLE]) {
		snprintf(why, len, "the CUDA driver offers no launch callback table");
		return -1;
	}
	if (((nvt_cb_subscribe_fn)table[NVT_CB_TABLE_SUBSCRIBE])(&handle, calibration_callback,
								NULL) ||
	    ((nvt_cb_enable_fn)table[NVT_CB_TABLE_ENABLE])(1, handle, NVT_CB_DOMAIN_LAUNCH,
							   NVT_CB_ID_LAUNCH)) {
		snprintf(why, len, "the CUDA driver refused the launch callback");
		return -1;
	}
	return 0;
}

int nvt_probe_open(char *why, size_t len)
{
	return nvt_driver_open(why, len) || subscribe(why, len) ? -1 : 0;
}

struct probe {
	CUfunction fn;
	CUdeviceptr out;
	unsigned *host;
	unsigned max_blocks;
	int n_sms;
};

/* Runs the probe on blocks blocks; sets seen to the SMs that ran one. */
static int run_probe(struct child_result *r, struct probe *p, unsigned blocks,
		     unsigned long long spin, struct nvt_smset *seen)
{
	void *params[2] = {&p->out, &spin};

	memset(p->host, 0xff, blocks * sizeof(unsigned));
	CU_CHECK(nvt_cu.launch(p->fn, blocks, 1, 1, 128, 1, 1, 0, NULL, params, NULL), "probe launch");
	CU_CHECK(nvt_cu.sync(), "probe synchronize");
	CU_CHECK(nvt_cu.copy_dtoh(p->host, p->out, blocks * sizeof(unsigned)), "probe copy");
	memset(seen, 0, sizeof(*seen));
	for (unsigned b = 0; b < blocks; b++) {
		unsigned sm = p->host[b];
		if (sm >= (unsigned)p->n_sms)
			return nvt_why(r->error, sizeof(r->error), "a probe block reported SM %u of %d", sm, p->n_sms);
		seen->w[sm / 64] |= (uint64_t)1 << (sm % 64);
	}
	return 0;
}

static unsigned find_root(unsigned *parent, unsigned x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

/* Joins the SMs that shared clusters; fills group[] with their roots. */
static int cluster_pass(struct child_result *r, struct probe *p, CUfunction fn, int smem,
			unsigned *group)
{
	static const unsigned sizes[] = {2, 4, 8, 16};
	unsigned parent[NVT_MAX_SMS];

	for (int s = 0; s < p->n_sms; s++)
		parent[s] = (unsigned)s;
	for (unsigned si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		unsigned cs = sizes[si];
		for (int rep = 0; rep < 10; rep++) {
			unsigned long long spin = 200000 + (unsigned long long)rep * 5000;
			unsigned blocks = cs * ((unsigned)p->n_sms / cs) * (unsigned)(1 + rep % 3);
			void *params[2] = {&p->out, &spin};
			NVT_LAUNCH_ATTRIBUTE attr;
			NVT_LAUNCH_CONFIG cfg;

			if (blocks > p->max_blocks)
				blocks = p->max_blocks / cs * cs;
			memset(&attr, 0, sizeof(attr));
			attr.id = NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
			attr.value.cluster_dim[0] = cs;
			attr.value.cluster_dim[1] = attr.value.cluster_dim[2] = 1;
			memset(&cfg, 0, sizeof(cfg));
			cfg.grid[0] = blocks;
			cfg.grid[1] = cfg.grid[2] = 1;
			cfg.block[0] = 128;
			cfg.block[1] = cfg.block[2] = 1;
			cfg.shared_mem = (unsigned)smem;
			cfg.attrs = &attr;
			cfg.num_attrs = 1;
			memset(p->host, 0xff, blocks * sizeof(unsigned));
			if (nvt_cu.launch_ex(&cfg, fn, params, NULL))
				break; /* this cluster size is not supported: fine */
			CU_CHECK(nvt_cu.sync(), "cluster probe synchronize");
			CU_CHECK(nvt_cu.copy_dtoh(p->host, p->out, blocks * sizeof(unsigned)),
				 "cluster probe copy");
			for (unsigned b = 0; b < blocks; b++) {
				unsigned first = p->host[b - b % cs], sm = p->host[b];
				if (sm >= (unsigned)p->n_sms || first >= (unsigned)p->n_sms)
					return nvt_why(r->error, sizeof(r->error), "a cluster block reported SM %u", sm);
				parent[find_root(parent, sm)] = find_root(parent, first);
			}
		}
	}
	for (int s = 0; s < p->n_sms; s++)
		group[s] = find_root(parent, (unsigned)s);
	return 0;
}

/*
 * Picks the layout to verify among those the compute capability allows: the
 * one whose version byte the first probe launch's TMD carries. Several
 * matching is a coincidence of unrelated fields (docs/hardware-facts.md, section 2, and
 * tmd.c): refuse rather than write the wrong one.
 */
static int choose_layout(struct child_result *r, int major, int minor, unsigned *layout)
{
	char seen[160];
	size_t pos = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < probe_cb.n_candidates; i++) {
		unsigned c = probe_cb.candidates[i], at = nvt_tmd_version_offset(c);
		if (probe_cb.matches[i] && n++ == 0)
			*layout = c;
		pos += (size_t)snprintf(seen + pos, sizeof(seen) - pos, "%s%s (byte %u reads 0x%02x)",
					i ? ", " : "", nvt_tmd_layout_name(c), at,
					at == 58 ? probe_cb.byte58 : probe_cb.byte72);
		if (pos >= sizeof(seen))
			pos = sizeof(seen) - 1;
	}
	if (n == 1)
		return 0;
	r->tmd_failed = 1;
	return nvt_why(r->error, sizeof(r->error), "the TMDs of this GPU (compute capability %d.%d) carry the version byte of %s "
		       "layout known for it: %s",
		       major, minor, n ? "more than one" : "no", seen);
}

/* The probe's steps in order, each checked (over 80 lines: the steps share
 * a dozen locals that a split would pass around). */
static int calibrate(int ordinal, struct child_result *r, int show_progress)
{
	CUdevice dev;
	CUcontext ctx;
	void *module;
	char ptx[2048];
	struct probe p = {0};
	struct nvt_smset all, seen;
	char why[160];
	static struct nvt_smset missing[NVT_HW_BITS];
	unsigned n_bits, group[NVT_MAX_SMS], layout = NVT_TMD_NONE;
	int major, minor, optin = 0;

	if (nvt_probe_open(r->error, sizeof(r->error)))
		return -1;
	CU_CHECK(nvt_cu.init(0), "cuInit");
	CU_CHECK(nvt_cu.device_get(&dev, ordinal), "cuDeviceGet");
	CU_CHECK(nvt_cu.attribute(&p.n_sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
		 "cuDeviceGetAttribute");
	CU_CHECK(nvt_cu.attribute(&major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
		 "cuDeviceGetAttribute");
	CU_CHECK(nvt_cu.attribute(&minor, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
		 "cuDeviceGetAttribute");
	if (p.n_sms < 2 || p.n_sms > NVT_MAX_SMS || p.n_sms % 2)
		return nvt_why(r->error, sizeof(r->error), "cannot calibrate a GPU with %d SMs", p.n_sms);
	if (major < 7)
		return nvt_why(r->error, sizeof(r->error), "compute capability %d.%d is too old", major, minor);
	probe_cb.n_candidates = nvt_tmd_layouts_for_cc((unsigned)major, (unsigned)minor,
						       probe_cb.candidates, 4);
	if (!probe_cb.n_candidates) {
		r->tmd_failed = 1;
		return nvt_why(r->error, sizeof(r->error), "no TMD layout is known for compute capability %d.%d", major, minor);
	}
	/* PTX is JIT-compiled for the device: sm_90 code also runs on newer GPUs. */
	snprintf(ptx, sizeof(ptx), ".version %s\n.target %s\n%s",
		 major >= 9 ? "7.8" : major == 8 ? "7.0" : minor >= 5 ? "6.3" : "6.0",
		 major >= 9 ? "sm_90" : major == 8 ? "sm_80" : minor >= 5 ? "sm_75" : "sm_70",
		 probe_body);
	CU_CHECK(nvt_cu.ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain (is the GPU exclusive to MPS?)");
	CU_CHECK(nvt_cu.ctx_set(ctx), "cuCtxSetCurrent");
	CU_CHECK(nvt_cu.module_load(&module, ptx), "loading the probe kernel");
	CU_CHECK(nvt_cu.module_function(&p.fn, module, "nvt_probe_smid"), "cuModuleGetFunction");
	p.max_blocks = (unsigned)p.n_sms * 64;
	CU_CHECK(nvt_cu.mem_alloc(&p.out, p.max_blocks * sizeof(unsigned)), "cuMemAlloc");
	p.host = malloc(p.max_blocks * sizeof(unsigned));
	if (!p.host)
		return nvt_why(r->error, sizeof(r->error), "out of memory");

	/* Every SM must show up while nothing is masked. */
	probe_cb.layout = NVT_TMD_NONE;
	if (run_probe(r, &p, (unsigned)p.n_sms * 16, 20000, &all))
		return -1;
	if (!probe_cb.fired)
		return nvt_why(r->error, sizeof(r->error), "the driver's launch callback never fired");
	for (int s = 0; s < p.n_sms; s++)
		if (!((all.w[s / 64] >> (s % 64)) & 1))
			return nvt_why(r->error, sizeof(r->error), "SM %d ran no probe block", s);
	if (choose_layout(r, major, minor, &layout))
		return -1;
	n_bits = nvt_tmd_layout_bits(layout);
	if (n_bits > NVT_HW_BITS)
		n_bits = NVT_HW_BITS; /* the rest stay 0; a TPC named there fails below */

	/* One bit disabled at a time, through the layout being verified: never a
	 * mask without a working TPC. */
	probe_cb.layout = layout;
	for (unsigned b = 0; b < n_bits; b++) {
		probe_cb.bit = b;
		for (int attempt = 0; attempt < 3; attempt++) {
			unsigned count = 0;
			if (run_probe(r, &p, (unsigned)p.n_sms * (16u << attempt), 20000, &seen))
				return -1;
			for (int i = 0; i < NVT_MAX_SMS / 64; i++) {
				missing[b].w[i] = all.w[i] & ~seen.w[i];
				count += (unsigned)__builtin_popcountll(missing[b].w[i]);
			}
			if (count == 0 || count == 2)
				break; /* else an SM may just have missed out: look again */
		}
		if (show_progress && (b + 1) % 32 == 0)
			fprintf(stderr, "nvtaskset: GPU %d: mask bits %u/%u measured\n", ordinal, b + 1,
				n_bits);
	}
	probe_cb.layout = NVT_TMD_NONE;
	if (probe_cb.mismatches) {
		r->tmd_failed = 1;
		return nvt_why(r->error, sizeof(r->error), "%u probe launches on this GPU (compute capability %d.%d) had a TMD "
			       "of another version than the first (not %s)",
			       probe_cb.mismatches, major, minor, nvt_tmd_layout_name(layout));
	}
	if (nvt_topo_from_sweep((unsigned)p.n_sms, n_bits, missing, &r->topo, why, sizeof(why))) {
		r->tmd_failed = 1;
		return nvt_why(r->error, sizeof(r->error), "the TPC mask of this GPU (compute capability %d.%d) does not behave "
			       "as TMD layout %s says: %s",
			       major, minor, nvt_tmd_layout_name(layout), why);
	}
	r->topo.tmd_layout = (uint8_t)layout;
	r->topo.cc_major = (uint8_t)major;
	r->topo.cc_minor = (uint8_t)minor;

	/* GPCs from clusters (compute capability 9.0 and newer). */
	if (major >= 9 && nvt_cu.launch_ex) {
		nvt_cu.attribute(&optin, NVT_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
		/* More than half an SM's shared memory: one block per SM. */
		optin = optin * 2 / 3;
		CU_CHECK(nvt_cu.func_attribute(p.fn, NVT_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin),
			 "cuFuncSetAttribute");
		nvt_cu.func_attribute(p.fn, NVT_CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
		if (cluster_pass(r, &p, p.fn, optin, group) ||
		    nvt_topo_set_gpcs(&r->topo, group, (unsigned)p.n_sms, r->error, sizeof(r->error)))
			return -1;
	}
	nvt_cu.mem_free(p.out);
	free(p.host);
	nvt_cu.ctx_release(dev);
	return 0;
}

/* ---- In the parent --------------------------------------------------------- */

struct calibration_ctx {
	int ordinal;
	int show_progress;
};

/* Runs in the child. */
static void calibrate_in_child(void *ctx, void *result)
{
	struct calibration_ctx *c = ctx;
	struct child_result *r = result;

	/* Outside MPS: MPS clients see virtualised SM IDs. */
	setenv(NVT_ENV_MPS_PIPE_DIR, "/nonexistent/nvtaskset-no-mps", 1);
	r->ok = calibrate(c->ordinal, r, c->show_progress) == 0;
}

int nvt_calibrate(int ordinal, int timeout_ms, int show_progress, struct nvt_topology *topo,
		  char *why, size_t len)
{
	struct calibration_ctx ctx = {ordinal, show_progress};
	struct child_result res;
	int rc = nvt_child_call(calibrate_in_child, &ctx, &res, sizeof(res), timeout_ms);

	switch (rc) {
	case NVT_CHILD_OK:
		break;
	case NVT_CHILD_TIMEOUT:
		nvt_why(res.error, sizeof(res.error), "calibration did not finish within %d s", timeout_ms / 1000);
		break;
	case NVT_CHILD_ESYS:
		nvt_why(res.error, sizeof(res.error), "cannot start a process: %s", strerror(errno));
		break;
	default:
		nvt_why(res.error, sizeof(res.error), "the calibration process failed");
	}
	res.error[sizeof(res.error) - 1] = '\0';
	if (rc == NVT_CHILD_OK && res.ok && nvt_topo_validate(&res.topo) == 0) {
		*topo = res.topo;
		return 0;
	}
	snprintf(why, len, "%s%s", res.error[0] ? res.error : "invalid result",
		 rc == NVT_CHILD_OK && res.tmd_failed ? TMD_REPORT_HINT : "");
	return -1;
}
