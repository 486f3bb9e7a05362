/*
 * fakecuda.c - a fake libcuda.so.1 for nvtaskset's GPU-free tests.
 * See fakecuda.h. Test code: simple and explicit, not fast.
 * Over 500 lines on purpose: the simulated chips, the device queries, the
 * launches and the contexts read one private state of devices and contexts;
 * the other parts of the fake see what they need of it through fakeint.h.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeint.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Logical TPC -> V04 mask slot measured on the project's H100. */
static const uint8_t h100_map[66] = {
	0,  9,  18, 27, 36, 45, 54, 63, 1,  10, 19, 28, 37, 46, 55, 64, 2,  11, 20, 29, 38, 47,
	56, 65, 3,  12, 21, 30, 39, 48, 57, 66, 13, 22, 31, 40, 49, 58, 67, 14, 23, 32, 41, 50,
	59, 68, 15, 24, 33, 42, 51, 60, 69, 16, 25, 34, 43, 52, 61, 70, 62, 71, 75, 78, 81, 83,
};

#define MAX_DEVICES 8
#define MAX_CREATED 128 /* contexts cuCtxCreate makes that live at once: then out of memory (a
			 * destroyed one's place, and so its address, is taken again, as the driver's
			 * allocator may; the driver makes as many as the GPU's memory holds, 524 MiB
			 * each on an H100: docs/bench/mem-driver-2026-11-25) */
#define CTX_STACK 128   /* a thread's context stack (cuCtxCreate pushes, cuCtxDestroy pops) */

/* A context cuCtxCreate made. */
struct made_ctx {
	int dev;
	int live;     /* 1 while it lives; 0 once cuCtxDestroy destroyed it; -1 while made */
	unsigned gen; /* the contexts made at its address: its id's (cuCtxGetId's ids are new) */
};

/* One simulated GPU. */
struct chip {
	int kind;             /* CHIP_* */
	int sms, n_tpcs;
	uint8_t tmd_version;
	int cc_major, cc_minor;
	int layout;           /* TMD_* the driver emits and the hardware reads */
	int quirk;            /* QUIRK_*: how the hardware departs from the layout */
	uint8_t slot_of[256]; /* logical TPC -> mask bit (slot) */
	uint8_t gpc_of[256];  /* logical TPC -> GPC */
	int n_gpcs;
};

static struct {
	int initialised;
	int devices;
	uint32_t params_size;
	struct chip chip[MAX_DEVICES]; /* by CUDA ordinal (after CUDA_VISIBLE_DEVICES) */
	int physical[MAX_DEVICES];     /* ordinal -> the GPU's place on the bus */
	int poke_at, poke_value;       /* FAKECUDA_TMD_POKE, or -1 */
	int context[MAX_DEVICES]; /* the address of context[d] is device d's primary CUcontext */
	int retained[MAX_DEVICES]; /* cuDevicePrimaryCtxRetain's count, less the releases */
	unsigned generation[MAX_DEVICES]; /* the primary contexts destroyed (reset, last release) */
	struct made_ctx created[MAX_CREATED]; /* the address of each is a CUcontext cuCtxCreate made */
	unsigned n_created;
} fake;

enum {
	CHIP_H100,
	CHIP_IDENTITY,
	CHIP_A100,
	CHIP_H100_ALT,
	CHIP_BLACKWELL,
	CHIP_BW_MISREAD,
	CHIP_BW_NOVALID
};
static const char *const chip_names[] = {"H100 map",      "identity map",
					 "A100-like",     "H100, other floorsweeping",
					 "Blackwell map", "Blackwell, misread mask",
					 "Blackwell, no valid bit"};

/*
 * TMD layouts as NVIDIA's open-gpu-doc class headers give them (clc6c0qmd.h,
 * clcbc0qmd.h, clcdc0qmd.h): written out here independently of src/core/tmd.c, so
 * that the tests check the shim against the documents, not against itself.
 */
enum { TMD_V01, TMD_V04_00, TMD_V04_01, TMD_V05_00 };
static const struct {
	const char *name;
	int version_at, version;
	int mask_at, mask_words; /* mask words 0.. */
	int upper_at;            /* V04_01: words 4-7; 0 = none */
	int valid_at;            /* byte holding the valid bit (its bit 7); -1 = none */
	int confuser_at, confuser; /* the other layout's version byte: a value that misleads */
	int type_at;             /* 32-bit word whose bits 23-25 are QMD_TYPE; -1 = none */
	int cga_at;              /* GPC_CGA_WIDTH, _HEIGHT, _DEPTH: low 6 bits of 3 bytes */
} tmd_layouts[] = {
	[TMD_V01] = {"V01", 72, 0x30, 84, 2, 0, -1, 58, 0x50, -1, 0},
	[TMD_V04_00] = {"V04_00", 72, 0x40, 304, 4, 0, 3, 58, 0x50, 0, 268},
	[TMD_V04_01] = {"V04_01", 72, 0x41, 304, 4, 336, 3, 58, 0x12, 0, 268},
	[TMD_V05_00] = {"V05_00", 58, 0x50, 280, 8, 0, 19, 72, 0x40, 16, 256},
};
/* QMD_TYPE values: a plain grid of CTAs, and one of GPC-wide clusters. */
#define QMD_TYPE_GRID_CTA 2
#define QMD_TYPE_GRID_GPC_CGA 3
/* Hardware that does not do what the layout says (calibration must catch it). */
enum {
	QUIRK_NONE,
	QUIRK_MASK_MISREAD, /* reads the mask 8 bytes after where the layout puts it */
	QUIRK_NO_VALID,     /* honours the mask only with bit 31 of word 0, not the layout's bit */
};

/* The Blackwell fake's floorswept slots: 12 GPCs x 8 slots, one missing in
 * each GPC but the last: 85 TPCs, 170 SMs (an RTX 5090's counts). */
static int bw_floorswept(int slot)
{
	static const int gone[] = {3, 12, 22, 29, 37, 46, 52, 61, 70, 79, 85};
	for (unsigned i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
		if (gone[i] == slot)
			return 1;
	return 0;
}

/* GPCs of the H100 (docs/hardware-facts.md, section 4). */
static uint8_t h100_gpc(int t)
{
	if (t < 32)
		return (uint8_t)(t % 8);
	if (t < 60)
		return (uint8_t)(1 + (t - 32) % 7);
	return (uint8_t)(t < 62 ? 6 + (t - 60) : 8 + (t - 62));
}

static __thread struct fakecuda_launch last;
static __thread int have_last;
static __thread uint8_t thread_version;
/* The calling thread's context stack, its top the current context; empty: device 0's primary, as
 * after cudart's first call. cuCtxSetCurrent replaces the top, cuCtxCreate pushes. */
static __thread const void *ctx_stack[CTX_STACK];
static __thread int ctx_depth;

static long env_long(const char *name, long fallback)
{
	const char *v = getenv(name);
	return v && *v ? strtol(v, NULL, 0) : fallback;
}

static int chip_kind(const char *name, size_t len)
{
	if (!len || (len == 4 && !strncmp(name, "h100", 4)))
		return CHIP_H100;
	if (len == 4 && !strncmp(name, "a100", 4))
		return CHIP_A100;
	if (len == 8 && !strncmp(name, "h100-alt", 8))
		return CHIP_H100_ALT;
	if (len == 9 && !strncmp(name, "blackwell", 9))
		return CHIP_BLACKWELL;
	if (len == 17 && !strncmp(name, "blackwell-misread", 17))
		return CHIP_BW_MISREAD;
	if (len == 17 && !strncmp(name, "blackwell-novalid", 17))
		return CHIP_BW_NOVALID;
	return CHIP_IDENTITY;
}

static void setup_chip(struct chip *c, int kind)
{
	const char *layout = getenv("FAKECUDA_TMD_LAYOUT");

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->quirk = kind == CHIP_BW_MISREAD   ? QUIRK_MASK_MISREAD
		   : kind == CHIP_BW_NOVALID ? QUIRK_NO_VALID
					     : QUIRK_NONE;
	for (int t = 0; t < 256; t++)
		c->slot_of[t] = (uint8_t)(t < 128 ? t : 255);
	switch (kind) {
	case CHIP_H100:
	case CHIP_H100_ALT:
		c->sms = 132;
		c->n_tpcs = 66;
		memcpy(c->slot_of, h100_map, sizeof(h100_map));
		/* Another chip of the same model, floorswept elsewhere: the same
		 * logical TPCs sit in other mask slots (bit b becomes 127 - b). */
		if (kind == CHIP_H100_ALT)
			for (int t = 0; t < 66; t++)
				c->slot_of[t] = (uint8_t)(127 - h100_map[t]);
		for (int t = 0; t < 66; t++)
			c->gpc_of[t] = h100_gpc(t);
		c->n_gpcs = 12;
		c->cc_major = 9;
		c->layout = TMD_V04_00;
		break;
	case CHIP_BLACKWELL:
	case CHIP_BW_MISREAD:
	case CHIP_BW_NOVALID:
		/* Logical TPCs striped over the GPCs, as on the H100. */
		c->n_tpcs = 0;
		for (int r = 0; r < 8; r++)
			for (int g = 0; g < 12; g++)
				if (!bw_floorswept(g * 8 + r)) {
					c->slot_of[c->n_tpcs] = (uint8_t)(g * 8 + r);
					c->gpc_of[c->n_tpcs++] = (uint8_t)g;
				}
		c->sms = 2 * c->n_tpcs;
		c->n_gpcs = 12;
		c->cc_major = 12;
		c->layout = TMD_V05_00;
		break;
	case CHIP_A100:
		c->sms = 108;
		c->n_tpcs = 54;
		for (int t = 0; t < 54; t++)
			c->gpc_of[t] = (uint8_t)(t % 7);
		c->n_gpcs = 7;
		c->cc_major = 8;
		c->layout = TMD_V01;
		break;
	default:
		c->sms = (int)env_long("FAKECUDA_SMS", 132);
		c->n_tpcs = c->sms / 2;
		for (int t = 0; t < c->n_tpcs && t < 256; t++)
			c->gpc_of[t] = (uint8_t)(t % 8);
		c->n_gpcs = c->n_tpcs < 8 ? c->n_tpcs : 8;
		c->cc_major = 9;
		c->layout = TMD_V04_00;
	}
	if (layout && !strcmp(layout, "V04_01"))
		c->layout = TMD_V04_01; /* the other layout Blackwell's classes define */
	c->tmd_version = (uint8_t)env_long("FAKECUDA_TMD_VERSION", tmd_layouts[c->layout].version);
}

/* A GPU's UUID: another chip or another place on the bus is another GPU. */
static void uuid_bytes(const struct chip *c, int physical, unsigned char *uuid)
{
	for (int i = 0; i < 16; i++)
		uuid[i] = (unsigned char)(0x10 * c->kind + i + physical);
	uuid[15] = (unsigned char)c->sms;
}

static void uuid_text(const struct chip *c, int physical, char *buf)
{
	unsigned char u[16];
	uuid_bytes(c, physical, u);
	sprintf(buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		u[15]);
}

/*
 * FAKECUDA_CHIPS="h100,h100-alt" gives each device its own chip (and sets the
 * device count); else every device is FAKECUDA_CHIP.
 */
static void configure(void)
{
	const char *chips = getenv("FAKECUDA_CHIPS"), *chip = getenv("FAKECUDA_CHIP");
	const char *poke = getenv("FAKECUDA_TMD_POKE");
	int n = 0;

	fake.poke_at = -1;
	if (poke && sscanf(poke, "%i:%i", &fake.poke_at, &fake.poke_value) != 2)
		fake.poke_at = -1;
	fake.params_size = (uint32_t)env_long("FAKECUDA_PARAMS_SIZE", 88);
	if (chips && *chips) {
		for (const char *p = chips; n < MAX_DEVICES;) {
			const char *end = strchr(p, ',');
			size_t len = end ? (size_t)(end - p) : strlen(p);
			setup_chip(&fake.chip[n++], chip_kind(p, len));
			if (!end)
				break;
			p = end + 1;
		}
		fake.devices = n;
	} else {
		fake.devices = (int)env_long("FAKECUDA_DEVICES", 1);
		for (int d = 0; d < MAX_DEVICES; d++)
			setup_chip(&fake.chip[d], chip_kind(chip ? chip : "", chip ? strlen(chip) : 0));
	}
	if (fake.devices > MAX_DEVICES)
		fake.devices = MAX_DEVICES;
	for (int d = 0; d < MAX_DEVICES; d++)
		fake.physical[d] = d;
	/* As CUDA: indices into the machine's GPUs, up to the first bad one. */
	if (getenv("CUDA_VISIBLE_DEVICES")) {
		struct chip all[MAX_DEVICES];
		const char *p = getenv("CUDA_VISIBLE_DEVICES");
		int n_visible = 0;
		memcpy(all, fake.chip, sizeof(all));
		while (*p && n_visible < MAX_DEVICES) {
			char *end;
			long d = strtol(p, &end, 10);
			if (!strncmp(p, "GPU-", 4)) /* a UUID (or a prefix of one) */
				for (d = 0, end = strchr(p, ',') ? strchr(p, ',') : (char *)p + strlen(p);
				     d < fake.devices; d++) {
					char text[64];
					uuid_text(&all[d], (int)d, text);
					if ((size_t)(end - p) <= strlen(text) && !strncmp(text, p, (size_t)(end - p)))
						break;
				}
			if (end == p || d < 0 || d >= fake.devices || (*end && *end != ','))
				break;
			fake.physical[n_visible] = (int)d;
			fake.chip[n_visible++] = all[d];
			if (!*end)
				break;
			p = end + 1;
		}
		fake.devices = n_visible;
	}
}

/* ctx is a device's primary context. */
static int is_primary(const void *ctx)
{
	const int *primary = ctx;

	return primary >= fake.context && primary < fake.context + MAX_DEVICES;
}

/* The device of context ctx, a primary one or one cuCtxCreate made (destroyed or not). */
static int device_of(const void *ctx)
{
	if (is_primary(ctx))
		return (int)((const int *)ctx - fake.context);
	return ((const struct made_ctx *)ctx)->dev;
}

/* ctx is a context of this process the calling thread may use. */
static int ctx_valid(const void *ctx)
{
	const int *primary = ctx;
	const struct made_ctx *made = ctx;

	if (primary >= fake.context && primary < fake.context + fake.devices)
		return 1;
	return made >= fake.created && made < fake.created + MAX_CREATED &&
	       made < fake.created + __atomic_load_n(&fake.n_created, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&made->live, __ATOMIC_ACQUIRE) == 1;
}

/* The calling thread's current context. */
static const void *current_context(void)
{
	return ctx_depth ? ctx_stack[ctx_depth - 1] : &fake.context[0];
}

/* The device of the calling thread's current context. */
static int current_device(void)
{
	return device_of(current_context());
}

/* ---- What the other parts of the fake use (fakeint.h) ----------------- */

INTERNAL int fake_ready(void)
{
	return fake.initialised;
}

INTERNAL int fake_devices(void)
{
	return fake.devices;
}

INTERNAL int fake_device(void)
{
	return current_device();
}

INTERNAL void *fake_context_of(int dev)
{
	const void *ctx = current_context();

	return (void *)(device_of(ctx) == dev ? ctx : &fake.context[dev]);
}

INTERNAL const void *fake_current_context(void)
{
	return current_context();
}

static __thread const void *launch_stream;

INTERNAL const void *fake_launch_stream(void)
{
	return launch_stream;
}

INTERNAL const void *fake_primary_context(int dev)
{
	return &fake.context[dev];
}

INTERNAL uint32_t fake_launch_block_size(void)
{
	return fake.params_size;
}

INTERNAL int fake_tpcs(int dev)
{
	return fake.chip[dev].n_tpcs;
}

INTERNAL int fake_gpcs(int dev)
{
	return fake.chip[dev].n_gpcs;
}

INTERNAL int fake_gpc_of(int dev, int tpc)
{
	return fake.chip[dev].gpc_of[tpc];
}

/* ---- Device queries ------------------------------------------------------ */

/* Once per process, as the real driver reads its environment once: a later
 * cuInit (any thread's, while others launch) changes nothing. */
static pthread_once_t configured = PTHREAD_ONCE_INIT;

/*
 * Under a running MPS control daemon (its pid file in CUDA_MPS_PIPE_DIRECTORY), a process that
 * initialises CUDA is a client of its server, as the real driver's is: the fake daemon lists
 * it (tests/fake/bin/nvidia-cuda-mps-control reads $pipe/fake-clients.d, each live PID a
 * client) unless a test staged a server of its own.
 */
static void join_mps(void)
{
	const char *pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
	char path[4096];
	int fd;

	if (!pipe || !*pipe)
		return;
	snprintf(path, sizeof(path), "%s/nvidia-cuda-mps-control.pid", pipe);
	if (access(path, F_OK))
		return;
	snprintf(path, sizeof(path), "%s/fake-clients.d", pipe);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/fake-clients.d/%ld", pipe, (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd >= 0)
		close(fd);
}
static pthread_once_t joined = PTHREAD_ONCE_INIT;

API int cuInit(unsigned flags)
{
	long error = env_long("FAKECUDA_INIT_ERROR", 0);
	(void)flags;
	if (getenv("FAKECUDA_INIT_HANG"))
		for (;;)
			pause();
	if (error)
		return (int)error;
	pthread_once(&configured, configure);
	pthread_once(&joined, join_mps);
	__atomic_store_n(&fake.initialised, 1, __ATOMIC_RELEASE);
	if (getenv("FAKECUDA_LOG")) {
		/* Tests read who initialised CUDA, and whether it could reach MPS. */
		FILE *log = fopen(getenv("FAKECUDA_LOG"), "a");
		const char *mps = getenv("CUDA_MPS_PIPE_DIRECTORY");
		if (log) {
			fprintf(log, "cuInit pid=%ld mps=%s\n", (long)getpid(), mps ? mps : "");
			fclose(log);
		}
	}
	return fake.devices > 0 ? 0 : NVT_CUDA_ERROR_NO_DEVICE;
}

API int cuDriverGetVersion(int *version)
{
	*version = (int)env_long("FAKECUDA_DRIVER_VERSION", 13000);
	return 0;
}

API int cuDeviceGetCount(int *count)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	*count = fake.devices;
	return 0;
}

API int cuDeviceGet(int *dev, int ordinal)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (ordinal < 0 || ordinal >= fake.devices)
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	*dev = ordinal;
	return 0;
}

/* cuDeviceGetAttribute's arguments as its API callbacks see them (CUPTI's
 * cuDeviceGetAttribute_params). */
struct device_attribute_args {
	int *value;
	int attribute;
	int dev;
};

static int device_attribute(int *value, int attribute, int dev)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= fake.devices)
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	switch (attribute) {
	case NVT_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = fake.chip[dev].sms; return 0;
	case NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = fake.chip[dev].cc_major; return 0;
	case NVT_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = fake.chip[dev].cc_minor; return 0;
	case NVT_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
		*value = fake.chip[dev].cc_major >= 9 ? 232448 : 166912;
		return 0;
	default: return NVT_CUDA_ERROR_INVALID_VALUE;
	}
}

/* The entry callbacks, the query (with the arguments they may have
 * changed), the return callbacks (which see the value written). */
API int cuDeviceGetAttribute(int *value, int attribute, int dev)
{
	struct device_attribute_args a = {value, attribute, dev};
	const char *cb = getenv("FAKECUDA_ATTRIBUTE_CALLBACKS");
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;

	if (cb && !strcmp(cb, "0"))
		return device_attribute(value, attribute, dev);
	fake_api_callbacks(NVT_CBID_cuDeviceGetAttribute, NVT_CB_API_SITE_ENTER, &rc, &a);
	rc = device_attribute(a.value, a.attribute, a.dev);
	fake_api_callbacks(NVT_CBID_cuDeviceGetAttribute, NVT_CB_API_SITE_EXIT, &rc, &a);
	return rc;
}

/* Calls whose form cuGetProcAddress picks by the CUDA version asked, newest first: measured on
 * an H100, driver 580.159.04 (cuCtxCreate gives _v2 below 11040, _v3 below 12050, then _v4;
 * cuCtxDestroy the old export below 4000: docs/bench/ctxgone-2026-11-26). */
static const struct {
	const char *name;
	int from; /* CUDA version */
	const char *symbol;
} by_version[] = {
	{"cuCtxCreate", 12050, "cuCtxCreate_v4"},
	{"cuCtxCreate", 11040, "cuCtxCreate_v3"},
	{"cuDevicePrimaryCtxRelease", 11000, "cuDevicePrimaryCtxRelease_v2"},
	{"cuDevicePrimaryCtxReset", 11000, "cuDevicePrimaryCtxReset_v2"},
	{"cuCtxDestroy", 4000, "cuCtxDestroy_v2"},
};

/* One of this library's own entry points (never an interposer's: a handle's
 * dlsym searches this library first), as the real driver's cuGetProcAddress
 * hands out its own functions whatever is preloaded: the form of by_version[] for
 * version; with per_thread (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) a
 * call's _ptsz or _ptds form, as the real driver gives cuMemAllocAsync_ptsz
 * (measured as above); else name, else name_v2. */
static void *own_symbol(const char *name, int version, int per_thread)
{
	static const char *const suffixes[] = {"_ptsz", "_v2_ptsz", "_ptds", "_v2_ptds", "", "_v2"};
	static void *self;
	char versioned[128];
	void *fn;
	Dl_info info;

	if (!self && dladdr((void *)own_symbol, &info) && info.dli_fname)
		self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!self || !name)
		return NULL;
	for (unsigned i = 0; i < sizeof(by_version) / sizeof(by_version[0]); i++)
		if (!strcmp(name, by_version[i].name) && version >= by_version[i].from)
			return dlsym(self, by_version[i].symbol);
	for (unsigned i = per_thread ? 0 : 4; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (snprintf(versioned, sizeof(versioned), "%s%s", name, suffixes[i]) >= (int)sizeof(versioned))
			return NULL;
		if ((fn = dlsym(self, versioned)))
			return fn;
	}
	return NULL;
}

/* cuda.h, CUDA 12 and 13: cuGetProcAddress_v2 (what cuda.h calls
 * cuGetProcAddress) reports the symbol's status too: 0 found, 1 not found. */
API int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
	void *fn;

	if (!symbol || !pfn)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	fn = version > 0 ? own_symbol(symbol, version, !!(flags & NVT_GET_PROC_ADDRESS_PER_THREAD)) : NULL;
	*pfn = fn;
	if (status)
		*status = fn ? 0 : 1;
	return fn ? 0 : NVT_CUDA_ERROR_NOT_FOUND;
}

/* The CUDA 11.3 form, still exported under its old name. */
API int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

/* Occupancy, as a simple model: 2048 threads an SM, at most 32 blocks, and
 * 228 KiB of shared memory. */
API int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *f, int block_size, size_t shmem)
{
	int n;

	(void)f;
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!blocks || block_size <= 0 || block_size > 1024)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	n = 2048 / block_size;
	n = n > 32 ? 32 : n;
	if (shmem && (size_t)n > 233472 / shmem)
		n = (int)(233472 / shmem);
	*blocks = n;
	return 0;
}

/* How many clusters of the launch's cluster dimension fit at once on the
 * current device, as the driver answers for the whole GPU: each GPC of s SMs
 * holds floor(s b / cluster), b the blocks an SM holds; 0 for a cluster
 * larger than 16 CTAs (the real driver's answer for sizes it cannot place). */
static int max_active_clusters(int *clusters, void *f, const NVT_LAUNCH_CONFIG *cfg)
{
	const struct chip *c = &fake.chip[current_device()];
	unsigned cluster = 0, per_gpc[256] = {0};
	int b, held = 0;

	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!clusters || !cfg || c->cc_major < 9)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < cfg->num_attrs; i++)
		if (cfg->attrs[i].id == NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
			cluster = cfg->attrs[i].value.cluster_dim[0] * cfg->attrs[i].value.cluster_dim[1] *
				  cfg->attrs[i].value.cluster_dim[2];
	if (!cluster || cuOccupancyMaxActiveBlocksPerMultiprocessor(&b, f, (int)(cfg->block[0] * cfg->block[1] *
										   cfg->block[2]),
								      cfg->shared_mem))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	for (int t = 0; t < c->n_tpcs; t++)
		per_gpc[c->gpc_of[t]] += 2;
	for (int g = 0; g < 256 && cluster <= 16; g++)
		held += (int)(per_gpc[g] * (unsigned)b / cluster);
	*clusters = held;
	return 0;
}

API int cuOccupancyMaxActiveClusters(int *clusters, void *f, const NVT_LAUNCH_CONFIG *cfg)
{
	struct {
		int *clusters;
		void *f;
		const NVT_LAUNCH_CONFIG *cfg;
	} a = {clusters, f, cfg};
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;

	fake_api_callbacks(NVT_CBID_cuOccupancyMaxActiveClusters, NVT_CB_API_SITE_ENTER, &rc, &a);
	rc = max_active_clusters(a.clusters, a.f, a.cfg);
	fake_api_callbacks(NVT_CBID_cuOccupancyMaxActiveClusters, NVT_CB_API_SITE_EXIT, &rc, &a);
	return rc;
}

API int cuDeviceGetUuid(unsigned char *uuid, int dev)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= fake.devices)
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	uuid_bytes(&fake.chip[dev], fake.physical[dev], uuid);
	return 0;
}

API int cuDeviceGetName(char *name, int len, int dev)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= fake.devices)
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "Fake GPU %d (%s)", fake.physical[dev],
		 chip_names[fake.chip[dev].kind]);
	return 0;
}

/* ---- Launches ------------------------------------------------------------ */

static uint32_t get32(const uint8_t *tmd, int at)
{
	uint32_t v;
	memcpy(&v, tmd + at, 4);
	return v;
}

/* Which logical TPCs run a launch whose TMD now reads as given: the hardware
 * reads the chip's layout, whatever the version byte says. */
static void execute(const struct chip *c, const uint8_t *tmd, unsigned cluster,
		    struct fakecuda_launch *rec)
{
	int room[64] = {0}, fits = 0;
	int l = c->layout, any = 0, width = 32 * tmd_layouts[l].mask_words;
	int mask_at = tmd_layouts[l].mask_at + (c->quirk == QUIRK_MASK_MISREAD ? 8 : 0);
	uint32_t words[8] = {0};

	rec->tmd_version = tmd[tmd_layouts[l].version_at];
	memset(rec->ran_tpcs, 0, sizeof(rec->ran_tpcs));
	for (int i = 0; i < tmd_layouts[l].mask_words; i++)
		words[i] = get32(tmd, mask_at + 4 * i);
	if (tmd_layouts[l].upper_at) {
		for (int i = 0; i < 4; i++)
			words[4 + i] = get32(tmd, tmd_layouts[l].upper_at + 4 * i);
		width = 256;
	}
	memcpy(rec->disable, words, sizeof(rec->disable));
	memcpy(rec->disable_hi, words + 4, sizeof(rec->disable_hi));
	if (c->quirk == QUIRK_NO_VALID)
		rec->mask_enabled = (tmd[3] >> 7) & 1;
	else if (tmd_layouts[l].valid_at >= 0)
		rec->mask_enabled = (tmd[tmd_layouts[l].valid_at] >> 7) & 1;
	else
		rec->mask_enabled = rec->tmd_version >= 0x16; /* older TMDs have no mask */
	for (int t = 0; t < c->n_tpcs; t++) {
		int bit = c->slot_of[t], disabled = 0;
		if (rec->mask_enabled)
			disabled = bit >= width || ((words[bit / 32] >> (bit % 32)) & 1);
		if (!disabled) {
			rec->ran_tpcs[t / 64] |= (uint64_t)1 << (t % 64);
			any = 1;
			if (c->gpc_of[t] < 64)
				room[c->gpc_of[t]] += 2;
		}
	}
	/* A cluster (one CTA per SM, as cuBLAS's big-tile kernels) waits for
	 * that many SMs of one GPC: none with room, and the GPU waits forever.
	 * Its clusters run only in the GPCs with room; the enabled TPCs of the
	 * others stay idle (docs/hardware-facts.md, 4). */
	for (int g = 0; g < 64; g++)
		fits |= room[g] >= (int)cluster;
	rec->hung = !any || (cluster > 1 && !fits);
	for (int t = 0; cluster > 1 && fits && t < c->n_tpcs; t++)
		if (c->gpc_of[t] < 64 && room[c->gpc_of[t]] < (int)cluster)
			rec->ran_tpcs[t / 64] &= ~((uint64_t)1 << (t % 64));
}

/* Counts the bits of tmd that differ from before outside the fields of the
 * layout it carries: anything a callback must not have written. */
static int stray_bits(const struct chip *c, const uint8_t *before, const uint8_t *tmd)
{
	int l = c->layout, n = 0;

	for (int i = 0; i < TMD_BYTES; i++) {
		uint8_t diff = before[i] ^ tmd[i];
		int m0 = tmd_layouts[l].mask_at, m1 = m0 + 4 * tmd_layouts[l].mask_words;
		int u0 = tmd_layouts[l].upper_at, u1 = u0 ? u0 + 16 : 0;
		if ((i >= m0 && i < m1) || (i >= u0 && i < u1))
			continue;
		if (i == tmd_layouts[l].valid_at)
			diff &= 0x7f;
		n += __builtin_popcount(diff);
	}
	return n;
}

/* ---- Contexts (modules, memory and the probe kernel: fakeprobe.c) ------- */

/* Device dev's context is used (retained, or launched on): its RM objects (FAKECUDA_RM). */
static void rm_context(int dev)
{
	unsigned char uuid[16];

	uuid_bytes(&fake.chip[dev], fake.physical[dev], uuid);
	fake_rm_context(dev, uuid);
}

API int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	long error = env_long("FAKECUDA_CTX_ERROR", 0);
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (error)
		return (int)error;
	if (dev < 0 || dev >= fake.devices)
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	*ctx = &fake.context[dev];
	__atomic_add_fetch(&fake.retained[dev], 1, __ATOMIC_RELAXED);
	rm_context(dev);
	return 0;
}

INTERNAL int fake_primary_release(int dev, int *was_last)
{
	int n;

	*was_last = 0;
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= fake.devices)
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	n = __atomic_load_n(&fake.retained[dev], __ATOMIC_RELAXED);
	do
		if (n <= 0)
			return NVT_CUDA_ERROR_INVALID_CONTEXT;
	while (!__atomic_compare_exchange_n(&fake.retained[dev], &n, n - 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	*was_last = n == 1;
	return 0;
}

/* ctx's id as cuCtxGetId gives it (0: not a context of this process now): a primary context
 * destroyed and made again at its address gets a new one. */
static unsigned long long key_of(const void *ctx)
{
	const int *primary = ctx;

	if (!fake.initialised || !ctx_valid(ctx))
		return 0;
	if (primary >= fake.context && primary < fake.context + fake.devices)
		return ((unsigned long long)(primary - fake.context) + 1) << 32 |
		       (__atomic_load_n(&fake.generation[primary - fake.context], __ATOMIC_RELAXED) + 1);
	return (1ull << 48) + ((unsigned long long)((const struct made_ctx *)ctx)->gen << 8) +
	       (unsigned long long)((const struct made_ctx *)ctx - fake.created);
}

/* What an object made in the calling thread's current context remembers of it (its id), to
 * tell a context that went (destroyed, or a primary one reset or released the last time) from
 * the one at its address now: fake_ctx_gone. */
INTERNAL unsigned long long fake_current_key(const void **ctx)
{
	*ctx = current_context();
	return key_of(*ctx);
}

INTERNAL int fake_ctx_gone(const void *ctx, unsigned long long key)
{
	return key && key_of(ctx) != key;
}

/* cuda.h (CUDA 12.0): an id no other context of the process had; a primary context destroyed
 * and made again at its address gets a new one. FAKECUDA_NO_CTX_ID=1: a driver without. */
API int cuCtxGetId(void *ctx, unsigned long long *id)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (getenv("FAKECUDA_NO_CTX_ID"))
		return NVT_CUDA_ERROR_NOT_SUPPORTED;
	if (!id || !ctx_valid(ctx))
		return !id ? NVT_CUDA_ERROR_INVALID_VALUE : NVT_CUDA_ERROR_INVALID_CONTEXT;
	*id = key_of(ctx);
	return 0;
}

INTERNAL void fake_primary_destroyed(int dev)
{
	if (dev >= 0 && dev < MAX_DEVICES)
		__atomic_add_fetch(&fake.generation[dev], 1, __ATOMIC_RELAXED);
}

INTERNAL unsigned fake_primary_generation(int dev)
{
	return dev >= 0 && dev < MAX_DEVICES ? __atomic_load_n(&fake.generation[dev], __ATOMIC_RELAXED) : 0;
}

/* cuda.h: whether the primary context is active (retained more often than released).
 * FAKECUDA_NO_PRIMARY_STATE=1: a driver that does not say. */
API int cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (getenv("FAKECUDA_NO_PRIMARY_STATE"))
		return NVT_CUDA_ERROR_NOT_SUPPORTED;
	if (dev < 0 || dev >= fake.devices)
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	if (!flags || !active)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	*flags = 0;
	*active = __atomic_load_n(&fake.retained[dev], __ATOMIC_RELAXED) > 0;
	return 0;
}

API int cuCtxGetCurrent(void **ctx)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	*ctx = (void *)current_context();
	return 0;
}

API int cuCtxGetDevice(int *dev)
{
	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (getenv("FAKECUDA_CTX_GET_DEVICE_ERROR"))
		return NVT_CUDA_ERROR_INVALID_CONTEXT;
	*dev = current_device();
	return 0;
}

API int cuCtxSetCurrent(void *ctx)
{
	/* A context cuCtxDestroy destroyed is no handle any more (cuda.h: no call may use it while
	 * or after it is destroyed): FAKECUDA_STALE_ABORT=1 dies of it, as of a stale kernel. */
	if (ctx && !ctx_valid(ctx) && (const struct made_ctx *)ctx >= fake.created &&
	    (const struct made_ctx *)ctx < fake.created + MAX_CREATED && getenv("FAKECUDA_STALE_ABORT")) {
		fprintf(stderr, "fakecuda: a destroyed context made current\n");
		abort();
	}
	if (!ctx_valid(ctx))
		return NVT_CUDA_ERROR_INVALID_CONTEXT;
	if (!ctx_depth)
		ctx_depth = 1;
	ctx_stack[ctx_depth - 1] = ctx;
	return 0;
}

/* cuCtxCreate, every form: a new context on dev, pushed on the calling thread's stack (cuda.h:
 * "If a context is already current to the thread, it is supplanted by the newly created context
 * and may be restored by a subsequent call to cuCtxPopCurrent()"). What the forms add (execution
 * affinity, cuCtxCreate_v4's parameters) the fake takes and ignores. */
/* Taken while a context's place is chosen. */
static pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;

static int ctx_create(void **pctx, int dev)
{
	unsigned i;

	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= fake.devices)
		return NVT_CUDA_ERROR_INVALID_DEVICE;
	if (ctx_depth >= CTX_STACK)
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&made_lock);
	for (i = 0; i < fake.n_created; i++)
		if (!__atomic_load_n(&fake.created[i].live, __ATOMIC_ACQUIRE))
			break; /* a destroyed one's place */
	if (i == MAX_CREATED) {
		pthread_mutex_unlock(&made_lock);
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (i == fake.n_created)
		__atomic_store_n(&fake.n_created, i + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&fake.created[i].live, -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&made_lock);
	fake.created[i].dev = dev;
	fake.created[i].gen++;
	__atomic_store_n(&fake.created[i].live, 1, __ATOMIC_RELEASE);
	*pctx = &fake.created[i];
	ctx_stack[ctx_depth++] = *pctx;
	return 0;
}

/* A context call's model between its driver-API callbacks (cuda_driver.h's ids). */
#define CTX_CALL(cbid, args, model)                                             \
	do {                                                                    \
		CUresult rc_ = NVT_CUDA_ERROR_UNKNOWN;                          \
		fake_api_callbacks(cbid, NVT_CB_API_SITE_ENTER, &rc_, &(args)); \
		rc_ = (model);                                                  \
		fake_api_callbacks(cbid, NVT_CB_API_SITE_EXIT, &rc_, &(args));  \
		return rc_;                                                     \
	} while (0)

API int cuCtxCreate_v2(void **pctx, unsigned flags, int dev)
{
	struct { void **pctx; unsigned flags; int dev; } a = {pctx, flags, dev};
	CTX_CALL(NVT_CBID_cuCtxCreate_v2, a, ctx_create(a.pctx, a.dev));
}

API int cuCtxCreate_v3(void **pctx, void *affinity, int n_affinity, unsigned flags, int dev)
{
	struct { void **pctx; void *affinity; int n_affinity; unsigned flags; int dev; } a = {
		pctx, affinity, n_affinity, flags, dev};
	CTX_CALL(NVT_CBID_cuCtxCreate_v3, a,
		 n_affinity < 0 || (n_affinity && !affinity) ? NVT_CUDA_ERROR_INVALID_VALUE
							     : ctx_create(a.pctx, a.dev));
}

API int cuCtxCreate_v4(void **pctx, void *params, unsigned flags, int dev)
{
	struct { void **pctx; void *params; unsigned flags; int dev; } a = {pctx, params, flags, dev};
	CTX_CALL(NVT_CBID_cuCtxCreate_v4, a, ctx_create(a.pctx, a.dev));
}

/* cuCtxDestroy: a context cuCtxCreate made, with what it holds (fake_mem_context_destroyed);
 * popped from the calling thread's stack where it is current there. */
static int ctx_destroy(void *ctx)
{
	struct made_ctx *made = ctx;

	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	/* As the driver answers (H100, driver 580.159.04): 201 for a primary context, 709 for
	 * one destroyed before. */
	if (is_primary(ctx) || (const struct made_ctx *)ctx < fake.created ||
	    (const struct made_ctx *)ctx >= fake.created + MAX_CREATED)
		return NVT_CUDA_ERROR_INVALID_CONTEXT;
	if (!ctx_valid(ctx))
		return NVT_CUDA_ERROR_CONTEXT_IS_DESTROYED;
	__atomic_store_n(&made->live, 0, __ATOMIC_RELEASE);
	fake_mem_context_destroyed(ctx);
	if (ctx_depth && ctx_stack[ctx_depth - 1] == ctx)
		ctx_depth--;
	return 0;
}

API int cuCtxDestroy_v2(void *ctx)
{
	struct { void *ctx; } a = {ctx};
	CTX_CALL(NVT_CBID_cuCtxDestroy_v2, a, ctx_destroy(a.ctx));
}

/* ... by its old name (CUDA before 4.0: a callback id of its own). */
API int cuCtxDestroy(void *ctx)
{
	struct { void *ctx; } a = {ctx};
	CTX_CALL(NVT_CBID_cuCtxDestroy, a, ctx_destroy(a.ctx));
}


static int launch(void *f, unsigned blocks, unsigned cluster, void **params);
static int launch_coop(void *f, uint64_t blocks, unsigned block_threads, unsigned shmem, unsigned cluster,
		       void **params);

/* The launch calls' arguments as the API callbacks see them (CUPTI's
 * cuLaunchKernel_params, cuLaunchKernelEx_params: src/gpu/cuda_driver.h). */
struct launch_kernel_args {
	void *f;
	unsigned gx, gy, gz, bx, by, bz, shmem;
	void *stream;
	void **params, **extra;
};
struct launch_kernel_ex_args {
	const NVT_LAUNCH_CONFIG *cfg;
	void *f;
	void **params, **extra;
};

/* cuLaunchKernel[_ptsz]: the entry callbacks, the launch (whose launch
 * callbacks run in between, on this thread), the return callbacks. */
static int launch_kernel(int cbid, struct launch_kernel_args *a)
{
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;

	fake_api_callbacks(cbid, NVT_CB_API_SITE_ENTER, &rc, a);
	launch_stream = a->stream;
	rc = launch(a->f, a->gx, 1, a->params);
	launch_stream = NULL;
	/* (a bridge's kernels take no time of the program's: one ends at its release) */
	if (rc == 0 && !fake_is_bridge(a->f))
		fake_stream_ran(cbid == NVT_CBID_cuLaunchKernel_ptsz && !a->stream ? NVT_CU_STREAM_PER_THREAD : a->stream);
	fake_api_callbacks(cbid, NVT_CB_API_SITE_EXIT, &rc, a);
	return rc;
}

API int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	struct launch_kernel_args a = {f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra};
	return launch_kernel(NVT_CBID_cuLaunchKernel, &a);
}

API int cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			    unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	struct launch_kernel_args a = {f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra};
	return launch_kernel(NVT_CBID_cuLaunchKernel_ptsz, &a);
}

/* cuLaunchCooperativeKernel[_ptsz]: as cuLaunchKernel, but every block of the
 * grid must be resident at once (see launch_coop). */
static int launch_cooperative(int cbid, struct launch_kernel_args *a)
{
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;

	fake_api_callbacks(cbid, NVT_CB_API_SITE_ENTER, &rc, a);
	rc = launch_coop(a->f, (uint64_t)a->gx * a->gy * a->gz, a->bx * a->by * a->bz, a->shmem, 1, a->params);
	if (rc == 0)
		fake_stream_ran(cbid == NVT_CBID_cuLaunchCooperativeKernel_ptsz && !a->stream ? NVT_CU_STREAM_PER_THREAD
											     : a->stream);
	fake_api_callbacks(cbid, NVT_CB_API_SITE_EXIT, &rc, a);
	return rc;
}

API int cuLaunchCooperativeKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				  unsigned by, unsigned bz, unsigned shmem, void *stream, void **params)
{
	struct launch_kernel_args a = {f, gx, gy, gz, bx, by, bz, shmem, stream, params, NULL};
	return launch_cooperative(NVT_CBID_cuLaunchCooperativeKernel, &a);
}

API int cuLaunchCooperativeKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				       unsigned by, unsigned bz, unsigned shmem, void *stream, void **params)
{
	struct launch_kernel_args a = {f, gx, gy, gz, bx, by, bz, shmem, stream, params, NULL};
	return launch_cooperative(NVT_CBID_cuLaunchCooperativeKernel_ptsz, &a);
}

static int launch_kernel_ex(int cbid, struct launch_kernel_ex_args *a)
{
	const NVT_LAUNCH_CONFIG *cfg;
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;
	unsigned cluster = 1;
	int coop = 0;

	fake_api_callbacks(cbid, NVT_CB_API_SITE_ENTER, &rc, a);
	cfg = a->cfg;
	if (!cfg || fake.chip[current_device()].cc_major < 9) {
		rc = NVT_CUDA_ERROR_INVALID_VALUE;
	} else {
		for (unsigned i = 0; i < cfg->num_attrs; i++) {
			if (cfg->attrs[i].id == NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
				cluster = cfg->attrs[i].value.cluster_dim[0];
			if (cfg->attrs[i].id == NVT_LAUNCH_ATTRIBUTE_COOPERATIVE)
				coop = cfg->attrs[i].value.cooperative;
		}
		if (cluster > 16 || (cluster && cfg->grid[0] % cluster))
			rc = NVT_CUDA_ERROR_INVALID_VALUE;
		else if (coop)
			rc = launch_coop(a->f, (uint64_t)cfg->grid[0] * cfg->grid[1] * cfg->grid[2],
					 cfg->block[0] * cfg->block[1] * cfg->block[2], cfg->shared_mem, cluster,
					 a->params);
		else
			rc = launch(a->f, cfg->grid[0], cluster, a->params);
		if (rc == 0)
			fake_stream_ran(cbid == NVT_CBID_cuLaunchKernelEx_ptsz && !cfg->stream ? NVT_CU_STREAM_PER_THREAD
												   : cfg->stream);
	}
	fake_api_callbacks(cbid, NVT_CB_API_SITE_EXIT, &rc, a);
	return rc;
}

API int cuLaunchKernelEx(const NVT_LAUNCH_CONFIG *cfg, void *f, void **params, void **extra)
{
	struct launch_kernel_ex_args a = {cfg, f, params, extra};
	return launch_kernel_ex(NVT_CBID_cuLaunchKernelEx, &a);
}

API int cuLaunchKernelEx_ptsz(const NVT_LAUNCH_CONFIG *cfg, void *f, void **params,
			      void **extra)
{
	struct launch_kernel_ex_args a = {cfg, f, params, extra};
	return launch_kernel_ex(NVT_CBID_cuLaunchKernelEx_ptsz, &a);
}

/*
 * Streams: handles with nothing behind them (launches run at once). As the
 * real driver's allocator does, a destroyed stream's handle is given to the
 * next stream made (the last destroyed first): a tool keyed by the handle
 * must forget a stream when it is destroyed. A stream belongs to the context
 * current when it was made, and its work (cuMemAllocAsync's memory) to that
 * context's device (cuStreamGetDevice).
 */
#define FAKE_STREAMS 4096
static struct {
	pthread_mutex_t lock;
	char handle[FAKE_STREAMS];
	int used[FAKE_STREAMS];
	const void *ctx[FAKE_STREAMS]; /* the context current at its making */
	int freed[FAKE_STREAMS], n_freed;
	unsigned next;
} streams = {.lock = PTHREAD_MUTEX_INITIALIZER};

struct stream_create_args {
	void **stream;
	unsigned flags;
};
struct stream_destroy_args {
	void *stream;
};

static CUresult stream_create(void **stream)
{
	int i = -1;
	const char *fresh = getenv("FAKECUDA_STREAMS_FRESH");

	if (!stream)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&streams.lock);
	if (streams.n_freed && !(fresh && !strcmp(fresh, "1")))
		i = streams.freed[--streams.n_freed];
	else if (streams.next < sizeof(streams.handle))
		i = (int)streams.next++;
	if (i >= 0) {
		streams.used[i] = 1;
		streams.ctx[i] = current_context();
	}
	pthread_mutex_unlock(&streams.lock);
	if (i < 0)
		return NVT_CUDA_ERROR_OUT_OF_MEMORY;
	*stream = &streams.handle[i];
	return 0;
}

static CUresult stream_destroy(void *stream)
{
	char *h = stream;
	CUresult rc = NVT_CUDA_ERROR_INVALID_HANDLE;

	pthread_mutex_lock(&streams.lock);
	if (h >= streams.handle && h < streams.handle + sizeof(streams.handle) &&
	    streams.used[h - streams.handle]) {
		streams.used[h - streams.handle] = 0;
		streams.freed[streams.n_freed++] = (int)(h - streams.handle);
		rc = 0;
	}
	pthread_mutex_unlock(&streams.lock);
	if (!rc)
		fake_stream_forget(stream);
	return rc;
}

API int cuStreamCreate(void **stream, unsigned flags)
{
	struct stream_create_args a = {stream, flags};
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;

	fake_api_callbacks(NVT_CBID_cuStreamCreate, NVT_CB_API_SITE_ENTER, &rc, &a);
	rc = stream_create(stream);
	fake_api_callbacks(NVT_CBID_cuStreamCreate, NVT_CB_API_SITE_EXIT, &rc, &a);
	return rc;
}

API int cuStreamDestroy_v2(void *stream)
{
	struct stream_destroy_args a = {stream};
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;

	fake_api_callbacks(NVT_CBID_cuStreamDestroy_v2, NVT_CB_API_SITE_ENTER, &rc, &a);
	rc = stream_destroy(stream);
	fake_api_callbacks(NVT_CBID_cuStreamDestroy_v2, NVT_CB_API_SITE_EXIT, &rc, &a);
	return rc;
}

/* The context of stream: the one it was made in, or for NULL, the legacy (0x1) and the
 * per-thread (0x2) stream the current one; NULL for a handle no stream has. */
static const void *stream_context(const void *stream)
{
	const char *h = stream;
	const void *ctx = NULL;

	if ((uintptr_t)stream <= 2)
		return current_context();
	pthread_mutex_lock(&streams.lock);
	if (h >= streams.handle && h < streams.handle + sizeof(streams.handle) &&
	    streams.used[h - streams.handle])
		ctx = streams.ctx[h - streams.handle];
	pthread_mutex_unlock(&streams.lock);
	return ctx;
}

INTERNAL int fake_stream_device(const void *stream)
{
	const void *ctx = stream_context(stream);

	return ctx ? device_of(ctx) : -1;
}

struct stream_get_device_args {
	void *stream;
	int *dev;
};

static CUresult stream_get_device(struct stream_get_device_args *a)
{
	int dev;

	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (!a->dev)
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if ((dev = fake_stream_device(a->stream)) < 0)
		return NVT_CUDA_ERROR_INVALID_HANDLE;
	*a->dev = dev;
	return 0;
}

/* cuStreamGetDevice (CUDA 12.8), and its per-thread stream's form. */
API int cuStreamGetDevice(void *stream, int *dev)
{
	struct stream_get_device_args a = {stream, dev};
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;

	fake_api_callbacks(NVT_CBID_cuStreamGetDevice, NVT_CB_API_SITE_ENTER, &rc, &a);
	rc = stream_get_device(&a);
	fake_api_callbacks(NVT_CBID_cuStreamGetDevice, NVT_CB_API_SITE_EXIT, &rc, &a);
	return rc;
}

API int cuStreamGetDevice_ptsz(void *stream, int *dev)
{
	struct stream_get_device_args a = {stream, dev};
	CUresult rc = NVT_CUDA_ERROR_UNKNOWN;

	fake_api_callbacks(NVT_CBID_cuStreamGetDevice_ptsz, NVT_CB_API_SITE_ENTER, &rc, &a);
	rc = stream_get_device(&a);
	fake_api_callbacks(NVT_CBID_cuStreamGetDevice_ptsz, NVT_CB_API_SITE_EXIT, &rc, &a);
	return rc;
}

/* The TMD the driver builds for a launch on device dev. */
INTERNAL void fake_build_tmd(int dev, unsigned cluster, uint8_t *tmd)
{
	const struct chip *c = &fake.chip[dev];
	int l = c->layout;

	/* Busy bytes, so that stray writes show; the mask fields and valid bit
	 * clear, as a driver leaves them. */
	for (int i = 0; i < TMD_BYTES; i++)
		tmd[i] = (uint8_t)(i * 37 + 11);
	memset(tmd + tmd_layouts[l].mask_at, 0, 4 * (size_t)tmd_layouts[l].mask_words);
	if (tmd_layouts[l].upper_at)
		memset(tmd + tmd_layouts[l].upper_at, 0, 16);
	tmd[0] = 0x00; tmd[1] = 0x00; tmd[2] = 0x3f; tmd[3] = 0x11; /* as seen on an H100 */
	if (tmd_layouts[l].valid_at >= 0)
		tmd[tmd_layouts[l].valid_at] &= 0x7f;
	tmd[tmd_layouts[l].confuser_at] = (uint8_t)tmd_layouts[l].confuser;
	if (tmd_layouts[l].type_at >= 0) {
		/* The driver names the grid's kind, and a cluster's shape. */
		uint32_t word;
		memcpy(&word, tmd + tmd_layouts[l].type_at, 4);
		word &= ~(7u << 23);
		word |= (uint32_t)(cluster > 1 ? QMD_TYPE_GRID_GPC_CGA : QMD_TYPE_GRID_CTA) << 23;
		memcpy(tmd + tmd_layouts[l].type_at, &word, 4);
		tmd[tmd_layouts[l].cga_at] = (uint8_t)((tmd[tmd_layouts[l].cga_at] & 0xc0) | (cluster > 1 ? cluster : 0));
		tmd[tmd_layouts[l].cga_at + 1] = (uint8_t)((tmd[tmd_layouts[l].cga_at + 1] & 0xc0) | (cluster > 1));
		tmd[tmd_layouts[l].cga_at + 2] = (uint8_t)((tmd[tmd_layouts[l].cga_at + 2] & 0xc0) | (cluster > 1));
	}
	tmd[tmd_layouts[l].version_at] = thread_version ? thread_version : c->tmd_version;
	if (fake.poke_at >= 0 && fake.poke_at < TMD_BYTES)
		tmd[fake.poke_at] = (uint8_t)fake.poke_value;
}

INTERNAL void fake_execute(int dev, const uint8_t *tmd, unsigned cluster, struct fakecuda_launch *rec)
{
	execute(&fake.chip[dev], tmd, cluster, rec);
}

INTERNAL int fake_stray_bits(int dev, const uint8_t *before, const uint8_t *tmd)
{
	return stray_bits(&fake.chip[dev], before, tmd);
}

/* A cooperative launch's grid: blocks of block_threads threads, of which
 * per_sm fit on an SM at once; 0 for a launch that is not cooperative. */
static __thread struct {
	uint64_t blocks;
	int per_sm;
} coop_grid;

/*
 * A cooperative launch: the driver refuses a grid that the whole GPU cannot
 * hold at once (720, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE), as the real
 * one does; the hardware then runs it on the SMs its TMD's mask enables,
 * where a grid that does not fit waits at its first grid-wide barrier for
 * blocks that never start: a hang.
 */
static int launch_coop(void *f, uint64_t blocks, unsigned block_threads, unsigned shmem, unsigned cluster,
		       void **params)
{
	int per_sm = 0, rc;

	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, (int)block_threads, shmem))
		return NVT_CUDA_ERROR_INVALID_VALUE;
	if (blocks > (uint64_t)per_sm * (uint64_t)fake.chip[current_device()].sms)
		return NVT_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	coop_grid.blocks = blocks;
	coop_grid.per_sm = per_sm;
	rc = launch(f, (unsigned)blocks, cluster, params);
	coop_grid.blocks = 0;
	return rc;
}

static int launch(void *f, unsigned blocks, unsigned cluster, void **params)
{
	uint8_t tmd[TMD_BYTES], before[TMD_BYTES];
	struct fakecuda_launch rec;
	int dev;

	if (!fake.initialised)
		return NVT_CUDA_ERROR_NOT_INITIALIZED;
	int refused = fake_bridge_refused(f, params);
	if (refused)
		return refused;
	rm_context(fake_device());
	fake_rm_launch(fake_device());
	dev = current_device();
	fake_build_tmd(dev, cluster, tmd);
	memcpy(before, tmd, sizeof(tmd));
	memset(&rec, 0, sizeof(rec));
	fake_bridge_app_enter();
	rec.callbacks = fake_notify_launch(dev, tmd);
	execute(&fake.chip[dev], tmd, fake_is_probe(f) ? 1 : cluster, &rec);
	rec.stray_bits = stray_bits(&fake.chip[dev], before, tmd);
	if (coop_grid.blocks) {
		uint64_t sms = 0;
		for (int i = 0; i < 4; i++)
			sms += 2 * (uint64_t)__builtin_popcountll(rec.ran_tpcs[i]);
		rec.coop_blocks = coop_grid.blocks;
		if (!rec.hung && coop_grid.blocks > (uint64_t)coop_grid.per_sm * sms) {
			rec.hung = 1;
			last = rec;
			have_last = 1;
			fprintf(stderr, "fakecuda: HANG: a cooperative grid of %llu blocks (%d an SM) does not "
				"fit on the %llu SMs its mask enables\n",
				(unsigned long long)coop_grid.blocks, coop_grid.per_sm, (unsigned long long)sms);
			return NVT_CUDA_ERROR_LAUNCH_TIMEOUT;
		}
	}
	last = rec;
	have_last = 1;
	if (rec.hung) {
		fprintf(stderr, "fakecuda: HANG: the launch's mask enables no working TPC\n");
		return NVT_CUDA_ERROR_LAUNCH_TIMEOUT; /* a real GPU never returns: report it loudly */
	}
	if (fake_is_probe(f))
		return fake_run_probe(dev, &rec, blocks, cluster, params);
	if (fake_is_hog(f))
		fake_run_hog(&rec);
	if (fake_is_bridge(f))
		fake_run_bridge(f, params);
	else
		fake_bridge_app_launch();
	if (fake_is_membw(f))
		fake_run_membw(dev, &rec, params);
	return 0;
}

API int fakecuda_last_launch(struct fakecuda_launch *out)
{
	if (!have_last)
		return -1;
	*out = last;
	return 0;
}

API void fakecuda_set_tmd_version(uint8_t version)
{
	thread_version = version;
}
