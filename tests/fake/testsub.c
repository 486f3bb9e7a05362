/*
 * testsub.c - a subscriber of the fake driver's callback table for testing
 * the fake itself (it is not nvtaskset). LD_PRELOADed, it subscribes one
 * callback and enables the launch domain; its launch callback writes a fixed
 * TPC mask into every TMD it is shown, in the V04_00 layout of the fake's
 * identity chip (FAKECUDA_CHIP=identity: mask bit t is TPC t), and remembers
 * the TMD. Test programs drive it through the testsub_* functions below,
 * found with dlsym: another mask, rewriting the remembered TMDs, enabling
 * driver-API callback ids, swapping the exec of cuGraphLaunch on entry,
 * calling the driver from inside a callback, and what callbacks saw.
 *
 *   TESTSUB_MASK=HEX   the TPCs its launch callback enables (default 1: TPC 0)
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "gpu/cuda_driver.h"
#include "testsub.h"

#include <stdlib.h>
#include <string.h>

CUresult cuGetExportTable(const void **table, const CUuuid *id);
CUresult cuGraphUpload(CUgraphExec exec, CUstream stream);

/* V04_00 (NVIDIA's clc6c0qmd.h): mask words at byte 304, valid bit 31 of word 0. */
#define MASK_AT 304
#define MAX_TMDS 1024

static struct {
	nvt_cb_enable_fn enable;
	uint32_t handle;
	uint64_t mask;
	unsigned launches;
	uint8_t *tmd[MAX_TMDS]; /* the TMDs seen, each once */
	int n_tmd;
	void *swap_from, *swap_to;
	int swapped, nested;
	unsigned count[1024]; /* driver-API callbacks per id */
	struct testsub_api last;
} sub;

static void write_mask(uint8_t *tmd, uint64_t tpcs)
{
	uint32_t words[4];
	for (int w = 0; w < 4; w++)
		words[w] = w < 2 ? ~(uint32_t)(tpcs >> (32 * w)) : 0xffffffffu;
	memcpy(tmd + MASK_AT, words, sizeof(words));
	tmd[3] |= 0x80;
}

static void on_launch(const uint64_t *block)
{
	uint8_t *tmd = (uint8_t *)(uintptr_t)block[NVT_CB_PARAMS_TMD_WORD];
	int i;

	sub.launches++;
	write_mask(tmd, sub.mask);
	for (i = 0; i < sub.n_tmd && sub.tmd[i] != tmd; i++)
		;
	if (i == sub.n_tmd && sub.n_tmd < MAX_TMDS)
		sub.tmd[sub.n_tmd++] = tmd;
}

/* Words of a call's arguments struct that are safe to read (the ones tests look at). */
static size_t args_words(int cbid)
{
	switch (cbid) {
	case NVT_CBID_cuGraphLaunch:
	case NVT_CBID_cuGraphUpload:
		return 2;
	case NVT_CBID_cuGraphInstantiateWithFlags:
		return 3;
	default:
		return 1;
	}
}

static void on_api(int cbid, const uint64_t *block)
{
	uint64_t id = block[NVT_CB_API_ID_WORD];
	int site = (int)(id >> 32) & 1;
	void **args = (void **)(uintptr_t)block[NVT_CB_API_ARGS_WORD];
	const CUresult *result = (const CUresult *)(uintptr_t)block[NVT_CB_API_RESULT_WORD];

	if (cbid >= 0 && cbid < 1024)
		sub.count[cbid]++;
	sub.last.calls++;
	sub.last.cbid = cbid;
	memcpy(&sub.last.size[site], block, 4);
	sub.last.id[site] = id;
	sub.last.result[site] = *result;
	sub.last.result_at[site] = result;
	sub.last.args_at[site] = args;
	memset(sub.last.args[site], 0, sizeof(sub.last.args[site]));
	memcpy(sub.last.args[site], args, 8 * args_words(cbid));
	memcpy(sub.last.block[site], block, sizeof(sub.last.block[site]));
	if (cbid == NVT_CBID_cuGraphLaunch && site == NVT_CB_API_SITE_ENTER) {
		if (sub.swap_from && args[0] == sub.swap_from) {
			args[0] = sub.swap_to; /* the call must launch this one */
			sub.swapped++;
		}
		if (sub.nested)
			cuGraphUpload(args[0], NULL); /* fires its own callbacks */
	}
}

static void callback(void *user, int domain, int cbid, const void *params)
{
	(void)user;
	if (domain == NVT_CB_DOMAIN_LAUNCH && cbid == NVT_CB_ID_LAUNCH)
		on_launch(params);
	else if (domain == NVT_CB_DOMAIN_API)
		on_api(cbid, params);
}

__attribute__((constructor)) static void testsub_init(void)
{
	static const CUuuid id = NVT_CB_TABLE_UUID;
	const void *const *table;
	const char *mask = getenv("TESTSUB_MASK");

	sub.mask = mask && *mask ? strtoull(mask, NULL, 16) : 1;
	if (cuGetExportTable((const void **)&table, &id) ||
	    ((nvt_cb_subscribe_fn)table[NVT_CB_TABLE_SUBSCRIBE])(&sub.handle, callback, NULL))
		abort(); /* a test tool: it must not pass unnoticed */
	sub.enable = (nvt_cb_enable_fn)table[NVT_CB_TABLE_ENABLE];
	if (sub.enable(1, sub.handle, NVT_CB_DOMAIN_LAUNCH, NVT_CB_ID_LAUNCH))
		abort();
}

void testsub_set_mask(uint64_t tpcs)
{
	sub.mask = tpcs;
}

unsigned testsub_launches(void)
{
	return sub.launches;
}

int testsub_rewrite(uint64_t tpcs)
{
	for (int i = 0; i < sub.n_tmd; i++)
		write_mask(sub.tmd[i], tpcs);
	return sub.n_tmd;
}

int testsub_enable(int domain, int cbid, int on)
{
	return sub.enable((uint32_t)on, sub.handle, domain, cbid);
}

void testsub_swap(void *from, void *to)
{
	sub.swap_from = from;
	sub.swap_to = to;
}

int testsub_swapped(void)
{
	return sub.swapped;
}

void testsub_nested(int on)
{
	sub.nested = on;
}

unsigned testsub_count(int cbid)
{
	return cbid >= 0 && cbid < 1024 ? sub.count[cbid] : 0;
}

void testsub_last(struct testsub_api *out)
{
	*out = sub.last;
	memset(&sub.last, 0, sizeof(sub.last));
}
