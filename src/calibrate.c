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
#include "cuda_driver.h"
#include "driverinfo.h"
#include "sysutil.h"
#include "tmd.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SYSTEM_CACHE_DIR "/var/cache/nvtaskset"
#define CACHE_MAX_BYTES 16384

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

typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;

/* Layouts as in CUDA 12/13's cuda.h. */
struct launch_attribute {
	int id;
	char pad[4];
	union {
		char bytes[64];
		struct {
			unsigned x, y, z;
		} cluster_dim;
	} value;
};
struct launch_config {
	unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
	void *stream;
	struct launch_attribute *attrs;
	unsigned num_attrs;
};
#define LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4
#define FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED 14
#define DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97

static struct {
	CUresult (*init)(unsigned);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*attribute)(int *, int, CUdevice);
	CUresult (*ctx_retain)(CUcontext *, CUdevice);
	CUresult (*ctx_release)(CUdevice);
	CUresult (*ctx_set)(CUcontext);
	CUresult (*sync)(void);
	CUresult (*module_load)(CUmodule *, const void *);
	CUresult (*module_function)(CUfunction *, CUmodule, const char *);
	CUresult (*func_attribute)(CUfunction, int, int);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*mem_free)(CUdeviceptr);
	CUresult (*copy_dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, void *, void **, void **);
	CUresult (*launch_ex)(const struct launch_config *, CUfunction, void **, void **);
	nvt_cuGetExportTable_fn export_table;
} cu;

/* What the calibration callback does to each launch. */
static struct {
	int masking; /* 0: leave the TMD alone */
	unsigned bit; /* the one bit to disable */
	int fired;
	uint8_t version;
} probe_cb;

static void calibration_callback(void *user, int domain, int cbid, const void *params)
{
	void *tmd;

	(void)user;
	if (domain != NVT_CB_DOMAIN_LAUNCH || cbid != NVT_CB_ID_LAUNCH || !params ||
	    *(const uint32_t *)params < NVT_CB_PARAMS_MIN_SIZE)
		return;
	tmd = ((void *const *)params)[NVT_CB_PARAMS_TMD_WORD];
	if (!tmd)
		return;
	probe_cb.fired = 1;
	probe_cb.version = nvt_tmd_version(tmd);
	if (!probe_cb.masking)
		return;
	if (nvt_tmd_classify(probe_cb.version) == NVT_TMD_V4) {
		uint32_t disable[4] = {0, 0, 0, 0};
		disable[probe_cb.bit / 32] = 1u << (probe_cb.bit % 32);
		nvt_tmd_write_v4(tmd, disable);
	} else if (nvt_tmd_classify(probe_cb.version) == NVT_TMD_V1) {
		nvt_tmd_write_v1(tmd, (uint64_t)1 << probe_cb.bit);
	}
}

/* ---- In the child ---------------------------------------------------------- */

struct child_result {
	int ok;
	struct nvt_topology topo;
	char error[256];
};

static int cfail(struct child_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cfail(struct child_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return -1;
}

#define CU_CHECK(call, what)                                                     \
	do {                                                                     \
		CUresult rc_ = (call);                                           \
		if (rc_)                                                         \
			return cfail(r, "%s failed: CUDA error %d", what, rc_); \
	} while (0)

static int load_driver(struct child_result *r)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	struct {
		void **slot;
		const char *name;
	} syms[] = {
		{(void **)&cu.init, "cuInit"},
		{(void **)&cu.device_get, "cuDeviceGet"},
		{(void **)&cu.attribute, "cuDeviceGetAttribute"},
		{(void **)&cu.ctx_retain, "cuDevicePrimaryCtxRetain"},
		{(void **)&cu.ctx_release, "cuDevicePrimaryCtxRelease_v2"},
		{(void **)&cu.ctx_set, "cuCtxSetCurrent"},
		{(void **)&cu.sync, "cuCtxSynchronize"},
		{(void **)&cu.module_load, "cuModuleLoadData"},
		{(void **)&cu.module_function, "cuModuleGetFunction"},
		{(void **)&cu.func_attribute, "cuFuncSetAttribute"},
		{(void **)&cu.mem_alloc, "cuMemAlloc_v2"},
		{(void **)&cu.mem_free, "cuMemFree_v2"},
		{(void **)&cu.copy_dtoh, "cuMemcpyDtoH_v2"},
		{(void **)&cu.launch, "cuLaunchKernel"},
		{(void **)&cu.export_table, "cuGetExportTable"},
	};

	if (!lib)
		return cfail(r, "cannot load the CUDA driver: %s", dlerror());
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(lib, syms[i].name);
		if (!*syms[i].slot)
			return cfail(r, "libcuda.so.1 lacks %s", syms[i].name);
	}
	cu.launch_ex = (CUresult(*)(const struct launch_config *, CUfunction, void **,
				    void **))dlsym(lib, "cuLaunchKernelEx");
	return 0;
}

static int subscribe(struct child_result *r)
{
	static const CUuuid id = NVT_CB_TABLE_UUID;
	const void *const *table = NULL;
	uint32_t handle;

	if (cu.export_table((const void **)&table, &id) || !table ||
	    !table[NVT_CB_TABLE_SUBSCRIBE] || !table[NVT_CB_TABLE_ENABLE])
		return cfail(r, "the CUDA driver offers no launch callback table");
	if (((nvt_cb_subscribe_fn)table[NVT_CB_TABLE_SUBSCRIBE])(&handle, calibration_callback,
								NULL) ||
	    ((nvt_cb_enable_fn)table[NVT_CB_TABLE_ENABLE])(1, handle, NVT_CB_DOMAIN_LAUNCH,
							   NVT_CB_ID_LAUNCH))
		return cfail(r, "the CUDA driver refused the launch callback");
	return 0;
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
	CU_CHECK(cu.launch(p->fn, blocks, 1, 1, 128, 1, 1, 0, NULL, params, NULL), "probe launch");
	CU_CHECK(cu.sync(), "probe synchronize");
	CU_CHECK(cu.copy_dtoh(p->host, p->out, blocks * sizeof(unsigned)), "probe copy");
	memset(seen, 0, sizeof(*seen));
	for (unsigned b = 0; b < blocks; b++) {
		unsigned sm = p->host[b];
		if (sm >= (unsigned)p->n_sms)
			return cfail(r, "a probe block reported SM %u of %d", sm, p->n_sms);
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
			struct launch_attribute attr;
			struct launch_config cfg;

			if (blocks > p->max_blocks)
				blocks = p->max_blocks / cs * cs;
			memset(&attr, 0, sizeof(attr));
			attr.id = LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
			attr.value.cluster_dim.x = cs;
			attr.value.cluster_dim.y = attr.value.cluster_dim.z = 1;
			memset(&cfg, 0, sizeof(cfg));
			cfg.grid_x = blocks;
			cfg.grid_y = cfg.grid_z = 1;
			cfg.block_x = 128;
			cfg.block_y = cfg.block_z = 1;
			cfg.shared_bytes = (unsigned)smem;
			cfg.attrs = &attr;
			cfg.num_attrs = 1;
			memset(p->host, 0xff, blocks * sizeof(unsigned));
			if (cu.launch_ex(&cfg, fn, params, NULL))
				break; /* this cluster size is not supported: fine */
			CU_CHECK(cu.sync(), "cluster probe synchronize");
			CU_CHECK(cu.copy_dtoh(p->host, p->out, blocks * sizeof(unsigned)),
				 "cluster probe copy");
			for (unsigned b = 0; b < blocks; b++) {
				unsigned first = p->host[b - b % cs], sm = p->host[b];
				if (sm >= (unsigned)p->n_sms || first >= (unsigned)p->n_sms)
					return cfail(r, "a cluster block reported SM %u", sm);
				parent[find_root(parent, sm)] = find_root(parent, first);
			}
		}
	}
	for (int s = 0; s < p->n_sms; s++)
		group[s] = find_root(parent, (unsigned)s);
	return 0;
}

static int calibrate(int ordinal, struct child_result *r, int show_progress)
{
	CUdevice dev;
	CUcontext ctx;
	void *module;
	char ptx[2048];
	struct probe p = {0};
	struct nvt_smset all, seen;
	static struct nvt_smset missing[NVT_HW_BITS];
	unsigned n_bits, group[NVT_MAX_SMS];
	int major, minor, optin = 0;

	if (load_driver(r) || subscribe(r))
		return -1;
	CU_CHECK(cu.init(0), "cuInit");
	CU_CHECK(cu.device_get(&dev, ordinal), "cuDeviceGet");
	CU_CHECK(cu.attribute(&p.n_sms, NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
		 "cuDeviceGetAttribute");
	CU_CHECK(cu.attribute(&major, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
		 "cuDeviceGetAttribute");
	CU_CHECK(cu.attribute(&minor, NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
		 "cuDeviceGetAttribute");
	if (p.n_sms < 2 || p.n_sms > NVT_MAX_SMS || p.n_sms % 2)
		return cfail(r, "cannot calibrate a GPU with %d SMs", p.n_sms);
	if (major < 7)
		return cfail(r, "compute capability %d.%d is too old", major, minor);
	/* PTX is JIT-compiled for the device: sm_90 code also runs on newer GPUs. */
	snprintf(ptx, sizeof(ptx), ".version %s\n.target %s\n%s",
		 major >= 9 ? "7.8" : major == 8 ? "7.0" : minor >= 5 ? "6.3" : "6.0",
		 major >= 9 ? "sm_90" : major == 8 ? "sm_80" : minor >= 5 ? "sm_75" : "sm_70",
		 probe_body);
	CU_CHECK(cu.ctx_retain(&ctx, dev), "cuDevicePrimaryCtxRetain (is the GPU exclusive to MPS?)");
	CU_CHECK(cu.ctx_set(ctx), "cuCtxSetCurrent");
	CU_CHECK(cu.module_load(&module, ptx), "loading the probe kernel");
	CU_CHECK(cu.module_function(&p.fn, module, "nvt_probe_smid"), "cuModuleGetFunction");
	p.max_blocks = (unsigned)p.n_sms * 64;
	CU_CHECK(cu.mem_alloc(&p.out, p.max_blocks * sizeof(unsigned)), "cuMemAlloc");
	p.host = malloc(p.max_blocks * sizeof(unsigned));
	if (!p.host)
		return cfail(r, "out of memory");

	/* Every SM must show up while nothing is masked. */
	probe_cb.masking = 0;
	if (run_probe(r, &p, (unsigned)p.n_sms * 16, 20000, &all))
		return -1;
	if (!probe_cb.fired)
		return cfail(r, "the driver's launch callback never fired");
	for (int s = 0; s < p.n_sms; s++)
		if (!((all.w[s / 64] >> (s % 64)) & 1))
			return cfail(r, "SM %d ran no probe block", s);
	switch (nvt_tmd_classify(probe_cb.version)) {
	case NVT_TMD_V4: n_bits = 128; break;
	case NVT_TMD_V1: n_bits = 64; break;
	default: return cfail(r, "TMD version 0x%02x has no known mask layout", probe_cb.version);
	}

	/* One bit disabled at a time: never a mask without a working TPC. */
	probe_cb.masking = 1;
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
	probe_cb.masking = 0;
	if (nvt_topo_from_sweep((unsigned)p.n_sms, n_bits, missing, &r->topo, r->error,
				sizeof(r->error)))
		return -1;

	/* GPCs from clusters (compute capability 9.0 and newer). */
	if (major >= 9 && cu.launch_ex) {
		cu.attribute(&optin, DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
		/* More than half an SM's shared memory: one block per SM. */
		optin = optin * 2 / 3;
		CU_CHECK(cu.func_attribute(p.fn, FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin),
			 "cuFuncSetAttribute");
		cu.func_attribute(p.fn, FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
		if (cluster_pass(r, &p, p.fn, optin, group) ||
		    nvt_topo_set_gpcs(&r->topo, group, (unsigned)p.n_sms, r->error, sizeof(r->error)))
			return -1;
	}
	cu.mem_free(p.out);
	free(p.host);
	cu.ctx_release(dev);
	return 0;
}

/* ---- In the parent --------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
	setenv("CUDA_MPS_PIPE_DIRECTORY", "/nonexistent/nvtaskset-no-mps", 1);
	r->ok = calibrate(c->ordinal, r, c->show_progress) == 0;
}

static int run_calibration(int ordinal, int timeout_ms, int show_progress,
			   struct child_result *res)
{
	struct calibration_ctx ctx = {ordinal, show_progress};

	switch (nvt_child_call(calibrate_in_child, &ctx, res, sizeof(*res), timeout_ms)) {
	case NVT_CHILD_OK:
		break;
	case NVT_CHILD_TIMEOUT:
		return cfail(res, "calibration did not finish within %d s", timeout_ms / 1000);
	case NVT_CHILD_ESYS:
		return cfail(res, "cannot start a process: %s", strerror(errno));
	default:
		return cfail(res, "the calibration process failed");
	}
	res->error[sizeof(res->error) - 1] = '\0';
	return res->ok && nvt_topo_validate(&res->topo) == 0 ? 0 : -1;
}

/* The directories searched for cached calibrations, most trusted first. */
static int cache_dirs(char dirs[2][256])
{
	const char *env = getenv("NVTASKSET_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	int n = 0;

	if (env && env[0] == '/') {
		snprintf(dirs[0], sizeof(dirs[0]), "%s", env);
		return 1;
	}
	snprintf(dirs[n++], sizeof(dirs[0]), SYSTEM_CACHE_DIR);
	if (geteuid() != 0) {
		if (xdg && xdg[0] == '/')
			snprintf(dirs[n++], sizeof(dirs[0]), "%.200s/nvtaskset", xdg);
		else if (home && home[0] == '/')
			snprintf(dirs[n++], sizeof(dirs[0]), "%.200s/.cache/nvtaskset", home);
	}
	return n;
}

/* Reads a cache file only if nobody but root or the caller could have written it. */
static int read_trusted(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & 022) || st.st_size <= 0 || (size_t)st.st_size >= len) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, len - 1);
	close(fd);
	if (n != st.st_size)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Saves text as dir/name atomically, readable by all. */
static int save(const char *dir, const char *name, const char *text, char *path, size_t len)
{
	char tmp[600];
	size_t n = strlen(text);
	int fd, saved;

	if (nvt_mkdirs(dir, 0755))
		return -1;
	snprintf(path, len, "%.255s/%.200s", dir, name);
	snprintf(tmp, sizeof(tmp), "%.255s/.%.200s.XXXXXX", dir, name);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	if (fchmod(fd, 0644) || write(fd, text, n) != (ssize_t)n || fsync(fd)) {
		saved = errno;
		close(fd);
		unlink(tmp);
		errno = saved;
		return -1;
	}
	close(fd);
	if (rename(tmp, path)) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}

/* Where the kernel module describes itself: $NVTASKSET_PROC_NVIDIA (tests), else /proc. */
static const char *proc_nvidia(void)
{
	const char *dir = getenv("NVTASKSET_PROC_NVIDIA");
	return dir && dir[0] == '/' && strlen(dir) < 200 ? dir : "/proc/driver/nvidia";
}

/* The kernel module's version, or "-" if it cannot be read. */
static void module_version(char *out, size_t len)
{
	char path[256], text[1024];

	snprintf(path, sizeof(path), "%s/version", proc_nvidia());
	if (nvt_read_file(path, text, sizeof(text), 0) < 0 || nvt_parse_nvrm_version(text, out, len))
		snprintf(out, len, "-");
}

/*
 * Identifies GPU ordinal without the CUDA driver (whose initialisation costs
 * a start-up): only when the machine has exactly one GPU and CUDA sees it as
 * GPU 0. Fills key (driver_version 0) and model. Returns 0, or -1 if not sure.
 */
static int identify_from_proc(int ordinal, struct nvt_cache_key *key, char *model, size_t len)
{
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	char dir[256], name[256] = "", path[600], text[4096];
	struct dirent *ent;
	DIR *d;
	int n = 0;

	if (ordinal != 0 || (visible && strcmp(visible, "0")))
		return -1;
	snprintf(dir, sizeof(dir), "%s/gpus", proc_nvidia());
	d = opendir(dir);
	if (!d)
		return -1;
	while ((ent = readdir(d)))
		if (ent->d_name[0] != '.' && n++ == 0)
			snprintf(name, sizeof(name), "%s", ent->d_name);
	closedir(d);
	if (n != 1)
		return -1;
	snprintf(path, sizeof(path), "%s/%.255s/information", dir, name);
	memset(key, 0, sizeof(*key));
	if (nvt_read_file(path, text, sizeof(text), 0) < 0 ||
	    nvt_parse_gpu_information(text, key->uuid, sizeof(key->uuid), model, len))
		return -1;
	module_version(key->nvrm, sizeof(key->nvrm));
	return strcmp(key->nvrm, "-") ? 0 : -1;
}

/* Reads a cached record for key from the cache directories. Returns 0 or -1. */
static int read_cache(char dirs[][256], int n_dirs, const struct nvt_cache_key *key,
		      struct nvt_gpu_topology *out, struct nvt_cache_key *found)
{
	char path[600], text[NVT_CACHE_TEXT_MAX];

	for (int d = 0; d < n_dirs; d++) {
		snprintf(path, sizeof(path), "%.255s/%.47s.topo", dirs[d], key->uuid);
		if (read_trusted(path, text, sizeof(text)) == 0 &&
		    nvt_cache_parse(text, key, &out->topo, found) == NVT_CACHE_OK) {
			snprintf(out->cache_path, sizeof(out->cache_path), "%s", path);
			out->from_cache = 1;
			return 0;
		}
	}
	return -1;
}

int nvt_gpu_topology(int ordinal, int force, int timeout_ms, FILE *progress,
		     struct nvt_gpu_topology *out, char *err, size_t errlen)
{
	struct nvt_cache_key fast;
	char model[128];
	char dirs[2][256], path[600], text[NVT_CACHE_TEXT_MAX];
	struct child_result res;
	int n_dirs = cache_dirs(dirs), write_dir;
	double start;

	memset(out, 0, sizeof(*out));
	out->ordinal = ordinal;
	/* Fast: the one GPU, known from /proc, measured under this very module. */
	if (!force && identify_from_proc(ordinal, &fast, model, sizeof(model)) == 0 &&
	    read_cache(dirs, n_dirs, &fast, out, &out->key) == 0) {
		snprintf(out->info.name, sizeof(out->info.name), "%s", model);
		out->info.sms = out->key.sms;
		out->info.driver_version = out->key.driver_version;
		out->info.device_count = 1;
		return 0;
	}
	if (nvt_gpu_query(ordinal, timeout_ms, &out->info)) {
		snprintf(err, errlen, "cannot query GPU %d: %s", ordinal, out->info.error);
		return -1;
	}
	nvt_gpu_uuid_text(out->info.uuid, out->key.uuid);
	out->key.driver_version = out->info.driver_version;
	out->key.sms = out->info.sms;
	module_version(out->key.nvrm, sizeof(out->key.nvrm));
	if (!force && read_cache(dirs, n_dirs, &out->key, out, &fast) == 0) {
		/* Measured before the module's version was known: note it, so that
		 * the next start can skip the driver. */
		if (!strcmp(fast.nvrm, "-") && strcmp(out->key.nvrm, "-") &&
		    nvt_cache_format(&out->key, &out->topo, text, sizeof(text)) > 0) {
			snprintf(path, sizeof(path), "%s.topo", out->key.uuid);
			save(dirs[(geteuid() == 0 || n_dirs == 1) ? 0 : n_dirs - 1], path, text,
			     out->cache_path, sizeof(out->cache_path));
		}
		return 0;
	}
	if (progress)
		fprintf(progress, "nvtaskset: calibrating GPU %d (%s)...\n", ordinal, out->info.name);
	start = now_s();
	/* Bit-by-bit progress is for a person at a terminal, not for logs. */
	if (run_calibration(ordinal, timeout_ms, progress && isatty(fileno(progress)), &res)) {
		snprintf(err, errlen, "cannot calibrate GPU %d: %s", ordinal,
			 res.error[0] ? res.error : "invalid result");
		return -1;
	}
	out->seconds = now_s() - start;
	out->topo = res.topo;
	/* Root's calibrations go where every user's tasks can read them. */
	write_dir = (geteuid() == 0 || n_dirs == 1) ? 0 : n_dirs - 1;
	snprintf(path, sizeof(path), "%s.topo", out->key.uuid);
	if (nvt_cache_format(&out->key, &out->topo, text, sizeof(text)) < 0 ||
	    save(dirs[write_dir], path, text, out->cache_path, sizeof(out->cache_path))) {
		snprintf(out->note, sizeof(out->note),
			 "cannot save the calibration in %s (%s); it will be measured again next "
			 "time",
			 dirs[write_dir], strerror(errno));
		out->cache_path[0] = '\0';
	}
	if (progress)
		fprintf(progress, "nvtaskset: calibrated GPU %d in %.2f s\n", ordinal, out->seconds);
	return 0;
}
