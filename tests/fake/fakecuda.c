/*
 * fakecuda.c - a fake libcuda.so.1 for nvtaskset's GPU-free tests.
 * See fakecuda.h. Test code: simple and explicit, not fast.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakecuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define MAX_SUBSCRIBERS 4
#define TMD_BYTES 512

typedef void (*callback_fn)(void *user, int domain, int cbid, const void *params);

/* The callback table UUID (docs/hardware-facts.md, section 1). */
static const unsigned char callback_table_id[16] = {0x2c, 0x8e, 0x0a, 0xd8, 0x07, 0x10, 0xab, 0x4e,
						    0x90, 0xdd, 0x54, 0x71, 0x9f, 0xe5, 0xf7, 0x4b};

/* Logical TPC -> V04 mask slot measured on the project's H100. */
static const uint8_t h100_map[66] = {
	0,  9,  18, 27, 36, 45, 54, 63, 1,  10, 19, 28, 37, 46, 55, 64, 2,  11, 20, 29, 38, 47,
	56, 65, 3,  12, 21, 30, 39, 48, 57, 66, 13, 22, 31, 40, 49, 58, 67, 14, 23, 32, 41, 50,
	59, 68, 15, 24, 33, 42, 51, 60, 69, 16, 25, 34, 43, 52, 61, 70, 62, 71, 75, 78, 81, 83,
};

static struct {
	pthread_mutex_t lock;
	struct {
		callback_fn fn;
		void *user;
		int enabled;
	} sub[MAX_SUBSCRIBERS];
	int n_sub;
	int initialised;
	int sms, n_tpcs, devices;
	uint8_t tmd_version;
	uint32_t params_size;
	int chip;             /* CHIP_* */
	int cc_major;
	uint8_t slot_of[256]; /* logical TPC -> V04 slot */
	uint8_t gpc_of[256];  /* logical TPC -> GPC */
	int n_gpcs;
	unsigned launches;    /* for rotating block placement */
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER};

enum { CHIP_H100, CHIP_IDENTITY, CHIP_A100 };
static const char *const chip_names[] = {"H100 map", "identity map", "A100-like"};

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

static long env_long(const char *name, long fallback)
{
	const char *v = getenv(name);
	return v && *v ? strtol(v, NULL, 0) : fallback;
}

static void configure(void)
{
	const char *chip = getenv("FAKECUDA_CHIP");

	fake.chip = !chip || !strcmp(chip, "h100") ? CHIP_H100
		    : !strcmp(chip, "a100")        ? CHIP_A100
						   : CHIP_IDENTITY;
	fake.devices = (int)env_long("FAKECUDA_DEVICES", 1);
	fake.params_size = (uint32_t)env_long("FAKECUDA_PARAMS_SIZE", 88);
	for (int t = 0; t < 256; t++)
		fake.slot_of[t] = (uint8_t)(t < 128 ? t : 255);
	switch (fake.chip) {
	case CHIP_H100:
		fake.sms = 132;
		fake.n_tpcs = 66;
		memcpy(fake.slot_of, h100_map, sizeof(h100_map));
		for (int t = 0; t < 66; t++)
			fake.gpc_of[t] = h100_gpc(t);
		fake.n_gpcs = 12;
		fake.cc_major = 9;
		fake.tmd_version = 0x40;
		break;
	case CHIP_A100:
		fake.sms = 108;
		fake.n_tpcs = 54;
		for (int t = 0; t < 54; t++)
			fake.gpc_of[t] = (uint8_t)(t % 7);
		fake.n_gpcs = 7;
		fake.cc_major = 8;
		fake.tmd_version = 0x30;
		break;
	default:
		fake.sms = (int)env_long("FAKECUDA_SMS", 132);
		fake.n_tpcs = fake.sms / 2;
		for (int t = 0; t < fake.n_tpcs && t < 256; t++)
			fake.gpc_of[t] = (uint8_t)(t % 8);
		fake.n_gpcs = fake.n_tpcs < 8 ? fake.n_tpcs : 8;
		fake.cc_major = 9;
		fake.tmd_version = 0x40;
	}
	fake.tmd_version = (uint8_t)env_long("FAKECUDA_TMD_VERSION", fake.tmd_version);
}

/* ---- Callback table ------------------------------------------------------ */

static int cb_subscribe(uint32_t *handle, callback_fn fn, void *user)
{
	int rc = 1;
	pthread_mutex_lock(&fake.lock);
	if (fake.n_sub < MAX_SUBSCRIBERS) {
		fake.sub[fake.n_sub].fn = fn;
		fake.sub[fake.n_sub].user = user;
		*handle = (uint32_t)fake.n_sub++;
		rc = 0;
	}
	pthread_mutex_unlock(&fake.lock);
	return rc;
}

static int cb_enable(uint32_t on, uint32_t handle, int domain, int cbid)
{
	if (handle >= (uint32_t)fake.n_sub)
		return 1;
	if (domain == 0xb && cbid == 1)
		fake.sub[handle].enabled = (int)on;
	return 0;
}

static void cb_unused(void)
{
}

static const void *callback_table[8] = {
	(const void *)(uintptr_t)sizeof(callback_table),
	(const void *)cb_unused, (const void *)cb_unused,
	(const void *)cb_subscribe,
	(const void *)cb_unused, (const void *)cb_unused,
	(const void *)cb_enable,
	(const void *)cb_unused,
};

API int cuGetExportTable(const void **table, const unsigned char *id)
{
	if (!table || !id)
		return 1;
	if (!memcmp(id, callback_table_id, 16) && !getenv("FAKECUDA_NO_TABLE")) {
		*table = callback_table;
		return 0;
	}
	*table = NULL;
	return 500; /* CUDA_ERROR_NOT_FOUND */
}

/* ---- Device queries ------------------------------------------------------ */

API int cuInit(unsigned flags)
{
	long error = env_long("FAKECUDA_INIT_ERROR", 0);
	(void)flags;
	if (getenv("FAKECUDA_INIT_HANG"))
		for (;;)
			pause();
	if (error)
		return (int)error;
	configure();
	fake.initialised = 1;
	if (getenv("FAKECUDA_LOG")) {
		/* Tests read who initialised CUDA, and whether it could reach MPS. */
		FILE *log = fopen(getenv("FAKECUDA_LOG"), "a");
		const char *mps = getenv("CUDA_MPS_PIPE_DIRECTORY");
		if (log) {
			fprintf(log, "cuInit pid=%ld mps=%s\n", (long)getpid(), mps ? mps : "");
			fclose(log);
		}
	}
	return fake.devices > 0 ? 0 : 100;
}

API int cuDriverGetVersion(int *version)
{
	*version = (int)env_long("FAKECUDA_DRIVER_VERSION", 13000);
	return 0;
}

API int cuDeviceGetCount(int *count)
{
	if (!fake.initialised)
		return 3;
	*count = fake.devices;
	return 0;
}

API int cuDeviceGet(int *dev, int ordinal)
{
	if (!fake.initialised)
		return 3;
	if (ordinal < 0 || ordinal >= fake.devices)
		return 101;
	*dev = ordinal;
	return 0;
}

API int cuDeviceGetAttribute(int *value, int attribute, int dev)
{
	if (!fake.initialised)
		return 3;
	if (dev < 0 || dev >= fake.devices)
		return 101;
	switch (attribute) {
	case 16: *value = fake.sms; return 0;
	case 75: *value = fake.cc_major; return 0;
	case 76: *value = 0; return 0;
	case 97: *value = fake.cc_major >= 9 ? 232448 : 166912; return 0;
	default: return 1;
	}
}

API int cuDeviceGetUuid(unsigned char *uuid, int dev)
{
	if (!fake.initialised)
		return 3;
	/* Another chip is another GPU: its calibration must not be reused. */
	for (int i = 0; i < 16; i++)
		uuid[i] = (unsigned char)(0x10 * fake.chip + i + dev);
	uuid[15] = (unsigned char)fake.sms;
	return 0;
}

API int cuDeviceGetName(char *name, int len, int dev)
{
	if (!fake.initialised)
		return 3;
	snprintf(name, (size_t)len, "Fake GPU %d (%s)", dev, chip_names[fake.chip]);
	return 0;
}

/* ---- Launches ------------------------------------------------------------ */

/* Which logical TPCs run a launch whose TMD now reads as given. */
static void execute(const uint8_t *tmd, struct fakecuda_launch *rec)
{
	uint32_t word0;
	int any = 0;

	memcpy(&word0, tmd, 4);
	rec->tmd_version = tmd[72];
	memset(rec->ran_tpcs, 0, sizeof(rec->ran_tpcs));
	if (tmd[72] >= 0x40) {
		memcpy(rec->disable, tmd + 304, 16);
		rec->mask_enabled = (word0 >> 31) & 1;
	} else {
		memset(rec->disable, 0, sizeof(rec->disable));
		memcpy(rec->disable, tmd + 84, 8);
		rec->mask_enabled = tmd[72] >= 0x16;
	}
	for (int t = 0; t < fake.n_tpcs; t++) {
		int bit = tmd[72] >= 0x40 ? fake.slot_of[t] : t;
		int disabled = 0;
		if (rec->mask_enabled && bit < 128)
			disabled = (rec->disable[bit / 32] >> (bit % 32)) & 1;
		if (rec->mask_enabled && tmd[72] < 0x40 && bit >= 64)
			disabled = 1;
		if (!disabled) {
			rec->ran_tpcs[t / 64] |= (uint64_t)1 << (t % 64);
			any = 1;
		}
	}
	rec->hung = !any;
}

/* ---- Contexts, modules, memory: just enough for the calibration probe ---- */

static int probe_function; /* the address is the CUfunction of nvt_probe_smid */
static int context;

API int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	long error = env_long("FAKECUDA_CTX_ERROR", 0);
	if (!fake.initialised)
		return 3;
	if (error)
		return (int)error;
	(void)dev;
	*ctx = &context;
	return 0;
}

API int cuDevicePrimaryCtxRelease_v2(int dev)
{
	(void)dev;
	return 0;
}

API int cuCtxSetCurrent(void *ctx)
{
	return ctx == &context ? 0 : 201;
}

API int cuCtxSynchronize(void)
{
	return 0;
}

API int cuModuleLoadData(void **module, const void *image)
{
	if (getenv("FAKECUDA_LOG")) {
		FILE *log = fopen(getenv("FAKECUDA_LOG"), "a");
		if (log) {
			fprintf(log, "module pid=%ld\n", (long)getpid());
			fclose(log);
		}
	}
	const char *ptx = image;
	if (!strstr(ptx, ".entry nvt_probe_smid") || !strstr(ptx, ".target sm_") ||
	    !strstr(ptx, "%smid"))
		return 218; /* CUDA_ERROR_INVALID_PTX */
	*module = &probe_function;
	return 0;
}

API int cuModuleGetFunction(void **fn, void *module, const char *name)
{
	if (module != &probe_function || strcmp(name, "nvt_probe_smid"))
		return 500;
	*fn = &probe_function;
	return 0;
}

API int cuFuncSetAttribute(void *fn, int attribute, int value)
{
	(void)attribute, (void)value;
	return fn == &probe_function ? 0 : 400;
}

API int cuMemAlloc_v2(uint64_t *ptr, size_t bytes)
{
	void *p = calloc(1, bytes);
	if (!p)
		return 2;
	*ptr = (uint64_t)(uintptr_t)p;
	return 0;
}

API int cuMemFree_v2(uint64_t ptr)
{
	free((void *)(uintptr_t)ptr);
	return 0;
}

API int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes)
{
	memcpy(dst, (void *)(uintptr_t)src, bytes);
	return 0;
}

/* The SMs a launch may use, given its TMD after the callbacks. */
static int allowed_sms(const struct fakecuda_launch *rec, int *sms)
{
	int n = 0;
	for (int t = 0; t < fake.n_tpcs; t++)
		if ((rec->ran_tpcs[t / 64] >> (t % 64)) & 1) {
			sms[n++] = 2 * t;
			sms[n++] = 2 * t + 1;
		}
	return n;
}

/* Runs the probe: block b stores the SM it ran on; clusters stay in a GPC. */
static int run_probe(const struct fakecuda_launch *rec, unsigned blocks, unsigned cluster,
		     void **params)
{
	unsigned *out = (unsigned *)(uintptr_t)*(uint64_t *)params[0];
	int sms[512], n = allowed_sms(rec, sms), rot = (int)(fake.launches++ * 7);

	if (cluster <= 1) {
		for (unsigned b = 0; b < blocks; b++)
			out[b] = (unsigned)sms[(b + (unsigned)rot) % (unsigned)n];
		return 0;
	}
	for (unsigned c = 0; c < blocks / cluster; c++) {
		int eligible[64], n_el = 0, members[512], m, g;
		for (g = 0; g < fake.n_gpcs; g++) {
			m = 0;
			for (int i = 0; i < n; i++)
				m += fake.gpc_of[sms[i] / 2] == g;
			if (m >= (int)cluster)
				eligible[n_el++] = g;
		}
		if (!n_el)
			return 1; /* no GPC can hold such a cluster */
		g = eligible[(c + (unsigned)rot) % (unsigned)n_el];
		m = 0;
		for (int i = 0; i < n; i++)
			if (fake.gpc_of[sms[i] / 2] == g)
				members[m++] = sms[i];
		for (unsigned j = 0; j < cluster; j++)
			out[c * cluster + j] =
				(unsigned)members[((int)(c * cluster + j) + rot) % m];
	}
	return 0;
}

static int launch(void *f, unsigned blocks, unsigned cluster, void **params);

API int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	(void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)stream, (void)extra;
	return launch(f, gx, 1, params);
}

/* As in cuda.h: the cluster dimension is launch attribute 4. */
struct fake_launch_attribute {
	int id;
	char pad[4];
	union {
		char bytes[64];
		unsigned dims[3];
	} value;
};
struct fake_launch_config {
	unsigned gx, gy, gz, bx, by, bz, shmem;
	void *stream;
	struct fake_launch_attribute *attrs;
	unsigned num_attrs;
};

API int cuLaunchKernelEx(const struct fake_launch_config *cfg, void *f, void **params, void **extra)
{
	unsigned cluster = 1;
	(void)extra;
	if (fake.cc_major < 9)
		return 1;
	for (unsigned i = 0; i < cfg->num_attrs; i++)
		if (cfg->attrs[i].id == 4)
			cluster = cfg->attrs[i].value.dims[0];
	if (cluster > 16 || (cluster && cfg->gx % cluster))
		return 1;
	return launch(f, cfg->gx, cluster, params);
}

static int launch(void *f, unsigned blocks, unsigned cluster, void **params)
{
	uint8_t tmd[TMD_BYTES];
	uint64_t block[11];
	struct fakecuda_launch rec;

	if (!fake.initialised)
		return 3;
	memset(tmd, 0, sizeof(tmd));
	tmd[0] = 0x00; tmd[1] = 0x00; tmd[2] = 0x3f; tmd[3] = 0x11; /* as seen on an H100 */
	tmd[72] = thread_version ? thread_version : fake.tmd_version;
	memset(block, 0, sizeof(block));
	memcpy(block, &fake.params_size, 4);
	block[4] = (uint64_t)(uintptr_t)tmd;
	memset(&rec, 0, sizeof(rec));
	for (int i = 0; i < fake.n_sub; i++) {
		if (fake.sub[i].enabled) {
			fake.sub[i].fn(fake.sub[i].user, 0xb, 1, block);
			rec.callbacks++;
		}
	}
	execute(tmd, &rec);
	last = rec;
	have_last = 1;
	if (rec.hung) {
		fprintf(stderr, "fakecuda: HANG: the launch's mask enables no working TPC\n");
		return 702; /* a real GPU never returns: report it loudly */
	}
	if (f == &probe_function)
		return run_probe(&rec, blocks, cluster, params);
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
