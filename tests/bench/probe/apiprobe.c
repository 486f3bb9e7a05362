/*
 * apiprobe.c - which driver-API calls a program makes, and what the driver
 * answers to cuOccupancyMaxActiveClusters (a GPU probe, not part of nvtaskset).
 *
 * LD_PRELOAD=apiprobe.so PROGRAM: subscribes to the driver's private callback
 * table (docs/hardware-facts.md, sections 1 and 7), enables every driver-API
 * callback id below 1024 in domain 6, counts each call on entry, and at exit
 * writes "cbid count" lines to APIPROBE_OUT. With APIPROBE_CLUSTERS=CBID (the
 * id of cuOccupancyMaxActiveClusters in CUPTI's cupti_driver_cbid.h) it also
 * writes, on that call's return, the clusters the driver said fit with the
 * cluster shape, block and shared memory asked about ("clusters N dim X Y Z
 * block B smem S"). Run without nvtaskset's shim: the table takes one
 * subscriber.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda_driver.h"

#define MAX_ID 1024
static unsigned long counts[MAX_ID];
static int clusters_id = -1;
static FILE *out;

static void on_call(void *user, int domain, int cbid, const void *data)
{
	const void *const *w = data;
	(void)user;
	if (domain != NVT_CB_DOMAIN_API || cbid < 0 || cbid >= MAX_ID || *(const uint32_t *)data < NVT_CB_API_MIN_SIZE)
		return;
	int site = (int)((uintptr_t)w[NVT_CB_API_ID_WORD] >> 32);
	if (site == NVT_CB_API_SITE_ENTER) {
		__atomic_add_fetch(&counts[cbid], 1, __ATOMIC_RELAXED);
		return;
	}
	if (cbid == clusters_id && out) {
		/* cuOccupancyMaxActiveClusters_params: int *numClusters; CUfunction func; const CUlaunchConfig *config */
		const struct {
			int *num;
			void *f;
			const NVT_LAUNCH_CONFIG *config;
		} *a = w[NVT_CB_API_ARGS_WORD];
		const NVT_LAUNCH_CONFIG *c = a->config;
		unsigned dim[3] = {0, 0, 0};
		for (unsigned i = 0; c && i < c->num_attrs; i++)
			if (c->attrs[i].id == NVT_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
				memcpy(dim, c->attrs[i].value.cluster_dim, sizeof dim);
		fprintf(out, "clusters %d dim %u %u %u block %u smem %u result %d\n", a->num ? *a->num : -1, dim[0],
			dim[1], dim[2], c ? c->block[0] * c->block[1] * c->block[2] : 0, c ? c->shared_mem : 0,
			*(const int *)w[NVT_CB_API_RESULT_WORD]);
		fflush(out);
	}
}

__attribute__((constructor)) static void probe_init(void)
{
	static const CUuuid uuid = NVT_CB_TABLE_UUID;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	const char *path = getenv("APIPROBE_OUT"), *id = getenv("APIPROBE_CLUSTERS");
	nvt_cuGetExportTable_fn get_table;
	const void *const *tbl = NULL;
	uint32_t handle;

	if (!lib || !path || !(out = fopen(path, "a")))
		return;
	if (id)
		clusters_id = atoi(id);
	get_table = (nvt_cuGetExportTable_fn)dlsym(lib, "cuGetExportTable");
	if (!get_table || get_table((const void **)&tbl, &uuid) || !tbl)
		return;
	int (*subscribe)(uint32_t *, void (*)(void *, int, int, const void *), void *) =
		(int (*)(uint32_t *, void (*)(void *, int, int, const void *), void *))tbl[NVT_CB_TABLE_SUBSCRIBE];
	int (*enable)(uint32_t, uint32_t, int, int) = (int (*)(uint32_t, uint32_t, int, int))tbl[NVT_CB_TABLE_ENABLE];
	if (subscribe(&handle, on_call, NULL)) {
		fprintf(out, "subscribe failed\n");
		return;
	}
	for (int i = 1; i < MAX_ID; i++)
		enable(1, handle, NVT_CB_DOMAIN_API, i);
}

__attribute__((destructor)) static void probe_fini(void)
{
	if (!out)
		return;
	for (int i = 0; i < MAX_ID; i++)
		if (counts[i])
			fprintf(out, "%d %lu\n", i, counts[i]);
	fclose(out);
}
