/*
 * fakecb.c - the fake driver's private callback table (docs/hardware-facts.md,
 * section 1): subscription, and the two domains it serves, kernel launches
 * (0xb, id 1) and the driver API (6, CUPTI's callback ids). See fakecuda.h.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "fakeint.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_SUBSCRIBERS 4
#define API_BLOCK_WORDS 13
#define API_BLOCK_SIZE (API_BLOCK_WORDS * 8) /* 0x68, measured on an H100, driver 580 */

typedef void (*callback_fn)(void *user, int domain, int cbid, const void *params);

/* The callback table UUID (docs/hardware-facts.md, section 1). */
static const unsigned char callback_table_id[16] = {0x2c, 0x8e, 0x0a, 0xd8, 0x07, 0x10, 0xab, 0x4e,
						    0x90, 0xdd, 0x54, 0x71, 0x9f, 0xe5, 0xf7, 0x4b};

/*
 * Subscribers are only ever added; a slot is filled before n_sub counts it,
 * so callers read the table without the lock. Nothing holds the lock while a
 * subscriber runs: a callback may call the driver again.
 */
static struct {
	pthread_mutex_t lock;
	struct {
		callback_fn fn;
		void *user;
		int launch_on;
		uint64_t api_on[(FAKE_API_IDS + 63) / 64];
	} sub[MAX_SUBSCRIBERS];
	int n_sub;
} table = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int subscribers(void)
{
	int n = __atomic_load_n(&table.n_sub, __ATOMIC_ACQUIRE);
	return n < MAX_SUBSCRIBERS ? n : MAX_SUBSCRIBERS; /* bounded for the compiler too */
}

static int cb_subscribe(uint32_t *handle, callback_fn fn, void *user)
{
	int rc = 1, n;
	pthread_mutex_lock(&table.lock);
	n = table.n_sub;
	if (n < MAX_SUBSCRIBERS) {
		table.sub[n].fn = fn;
		table.sub[n].user = user;
		*handle = (uint32_t)n;
		__atomic_store_n(&table.n_sub, n + 1, __ATOMIC_RELEASE);
		rc = 0;
	}
	pthread_mutex_unlock(&table.lock);
	return rc;
}

static int delayed, enabling; /* FAKECUDA_ENABLE_DELAY_US's: done once; threads inside */

/* Tests read which calls were followed, when and from which thread (FAKECUDA_LOG). */
static void fake_log_enable(int cbid)
{
	FILE *log = getenv("FAKECUDA_LOG") ? fopen(getenv("FAKECUDA_LOG"), "a") : NULL;

	if (log) {
		fprintf(log, "enable cbid=%d pid=%ld tid=%ld\n", cbid, (long)getpid(), (long)syscall(SYS_gettid));
		fclose(log);
	}
}

/* The driver's teardown at exit (its destructor) while another thread is inside its enabling
 * call: what a real driver would free under that thread; the fake dies of it. */
__attribute__((destructor)) static void enabling_at_teardown(void)
{
	if (__atomic_load_n(&enabling, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "fakecuda: the driver torn down while a thread enables callbacks\n");
		abort();
	}
}

/* The real table takes domains 6, 7 and 0xb and refuses others (the probe's
 * scan: domain 1 gave an error; ids 513, 514 worked in 6 and 7 only;
 * tests/gpu/probes/graphs). Domain 7, the runtime API's, never fires here. */
static int cb_enable(uint32_t on, uint32_t handle, int domain, int cbid)
{
	uint64_t bit;

	if (handle >= (uint32_t)subscribers())
		return 1;
	if (domain == NVT_CB_DOMAIN_LAUNCH) {
		if (cbid == NVT_CB_ID_LAUNCH)
			__atomic_store_n(&table.sub[handle].launch_on, (int)on, __ATOMIC_RELEASE);
		return 0;
	}
	if (domain == NVT_CB_DOMAIN_RUNTIME)
		return cbid > 0 && cbid < FAKE_API_IDS ? 0 : 1; /* no runtime here: never fires */
	if (domain != NVT_CB_DOMAIN_API || cbid <= 0 || cbid >= FAKE_API_IDS)
		return 1;
	bit = (uint64_t)1 << (cbid % 64);
	/* FAKECUDA_ENABLE_DELAY_US=N: the first enable from a thread other than the program's own
	 * takes N us (logged before), during which the driver's teardown must not come (it dies of
	 * it: enabling_at_teardown). */
	if (on && getenv("FAKECUDA_ENABLE_DELAY_US") && syscall(SYS_gettid) != getpid() &&
	    !__atomic_exchange_n(&delayed, 1, __ATOMIC_ACQ_REL)) {
		long us = strtol(getenv("FAKECUDA_ENABLE_DELAY_US"), NULL, 10);
		struct timespec t = {us / 1000000, us % 1000000 * 1000};
		fake_log_enable(cbid);
		__atomic_add_fetch(&enabling, 1, __ATOMIC_ACQ_REL);
		nanosleep(&t, NULL);
		__atomic_sub_fetch(&enabling, 1, __ATOMIC_ACQ_REL);
	} else if (on) {
		fake_log_enable(cbid);
	}
	if (on)
		__atomic_fetch_or(&table.sub[handle].api_on[cbid / 64], bit, __ATOMIC_ACQ_REL);
	else
		__atomic_fetch_and(&table.sub[handle].api_on[cbid / 64], ~bit, __ATOMIC_ACQ_REL);
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

API int cuGetExportTable(const void **out, const unsigned char *id)
{
	if (!out || !id)
		return 1;
	if (!memcmp(id, callback_table_id, 16) && !getenv("FAKECUDA_NO_TABLE")) {
		*out = callback_table;
		return 0;
	}
	*out = NULL;
	return NVT_CUDA_ERROR_NOT_FOUND;
}

INTERNAL int fake_notify_launch(int dev, uint8_t *tmd)
{
	uint64_t block[11];
	uint32_t size = fake_launch_block_size();
	int n = subscribers(), called = 0;

	memset(block, 0, sizeof(block));
	memcpy(block, &size, 4);
	/* Word 1: the launching context; word 4: the TMD (docs/hardware-facts.md). */
	block[NVT_CB_PARAMS_CTX_WORD] = (uint64_t)(uintptr_t)fake_context_of(dev);
	block[NVT_CB_PARAMS_TMD_WORD] = (uint64_t)(uintptr_t)tmd;
	for (int i = 0; i < n; i++) {
		if (__atomic_load_n(&table.sub[i].launch_on, __ATOMIC_ACQUIRE)) {
			table.sub[i].fn(table.sub[i].user, NVT_CB_DOMAIN_LAUNCH, NVT_CB_ID_LAUNCH, block);
			called++;
		}
	}
	return called;
}

INTERNAL void fake_api_callbacks(int cbid, int site, CUresult *result, void *args)
{
	uint64_t block[API_BLOCK_WORDS];
	const char *size_env = getenv("FAKECUDA_API_PARAMS_SIZE");
	uint32_t size = size_env && *size_env ? (uint32_t)strtoul(size_env, NULL, 0) : API_BLOCK_SIZE;
	int n = subscribers();

	/* (before the callbacks, whose releases come after a cap that came by now) */
	fake_bridge_look();
	if (cbid <= 0 || cbid >= FAKE_API_IDS)
		return;
	/* Words the driver fills with what nvtaskset must not rely on: junk
	 * that is no valid pointer, so that a reader of the wrong word fails. */
	for (int w = 0; w < API_BLOCK_WORDS; w++)
		block[w] = 0x6a756e6b00000000ull | (uint64_t)(w * 0x1111);
	block[0] = (block[0] & ~0xffffffffull) | size;
	block[NVT_CB_API_RESULT_WORD] = (uint64_t)(uintptr_t)result;
	block[NVT_CB_API_ARGS_WORD] = (uint64_t)(uintptr_t)args;
	block[NVT_CB_API_ID_WORD] = (uint32_t)cbid | ((uint64_t)(uint32_t)site << 32);
	for (int i = 0; i < n; i++)
		if ((__atomic_load_n(&table.sub[i].api_on[cbid / 64], __ATOMIC_ACQUIRE) >> (cbid % 64)) & 1)
			table.sub[i].fn(table.sub[i].user, NVT_CB_DOMAIN_API, cbid, block);
	/* (what they wrote to the bridges' words: a wait's return, a release) */
	fake_bridge_noted();
	/* A graph replay after all its callbacks: what the host left the bridge until its next call. */
	if (site == NVT_CB_API_SITE_EXIT && (cbid == NVT_CBID_cuGraphLaunch || cbid == NVT_CBID_cuGraphLaunch_ptsz))
		fake_bridge_replayed();
}
