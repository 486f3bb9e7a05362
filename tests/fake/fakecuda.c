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

/* The callback table UUID (HARDWARE-FACTS.md section 1). */
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
	int h100;
	uint8_t slot_of[256]; /* logical TPC -> V04 slot */
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER};

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

	fake.sms = (int)env_long("FAKECUDA_SMS", 132);
	fake.devices = (int)env_long("FAKECUDA_DEVICES", 1);
	fake.tmd_version = (uint8_t)env_long("FAKECUDA_TMD_VERSION", 0x40);
	fake.params_size = (uint32_t)env_long("FAKECUDA_PARAMS_SIZE", 88);
	fake.h100 = chip && !strcmp(chip, "h100");
	if (fake.h100) {
		fake.sms = 132;
		fake.n_tpcs = 66;
		memcpy(fake.slot_of, h100_map, sizeof(h100_map));
	} else {
		fake.n_tpcs = fake.sms / 2;
		for (int t = 0; t < 256; t++)
			fake.slot_of[t] = (uint8_t)(t < 128 ? t : 255);
	}
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
	return fake.devices > 0 ? 0 : 100;
}

API int cuDriverGetVersion(int *version)
{
	*version = 13000;
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
	case 75: *value = fake.tmd_version >= 0x40 ? 9 : 8; return 0;
	case 76: *value = 0; return 0;
	default: return 1;
	}
}

API int cuDeviceGetUuid(unsigned char *uuid, int dev)
{
	if (!fake.initialised)
		return 3;
	for (int i = 0; i < 16; i++)
		uuid[i] = (unsigned char)(0xf0 + i + dev);
	return 0;
}

API int cuDeviceGetName(char *name, int len, int dev)
{
	if (!fake.initialised)
		return 3;
	snprintf(name, (size_t)len, "Fake GPU %d (%s)", dev, fake.h100 ? "H100 map" : "identity map");
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

API int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
	uint8_t tmd[TMD_BYTES];
	uint64_t block[11];
	struct fakecuda_launch rec;

	(void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem;
	(void)stream, (void)params, (void)extra;
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
