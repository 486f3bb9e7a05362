/*
 * topology.c - nvtaskset --topology and --calibrate: the GPUs' TPC maps and GPCs.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Appends the SMs of TPCs in set to buf as a list. */
static void sm_list(const struct nvt_tpcset *tpcs, char *buf, size_t len)
{
	struct nvt_tpcset sms;
	nvt_set_clear(&sms);
	for (unsigned t = 0; t < NVT_MAX_TPCS / 2; t++)
		if (nvt_set_has(tpcs, t)) {
			nvt_set_add(&sms, 2 * t);
			nvt_set_add(&sms, 2 * t + 1);
		}
	nvt_format_list(&sms, buf, len);
}

static void print_topology(const struct options *o, const struct nvt_gpu_topology *g, int first)
{
	const struct nvt_topology *t = &g->topo;
	char list[NVT_LIST_TEXT_MAX], sms[NVT_LIST_TEXT_MAX];
	unsigned n_groups = t->n_gpcs ? t->n_gpcs : 1;

	if (o->json) {
		printf("%s{\"gpu\":%d,\"name\":", first ? "" : ",", g->index);
		json_string(g->info.name);
		printf(",\"uuid\":\"%s\",\"sms\":%d,\"tpcs\":%u,\"gpcs_known\":%s,\"cache\":",
		       g->key.uuid, g->info.sms, t->n_tpcs, t->n_gpcs ? "true" : "false");
		json_string(g->cache_path);
		printf(",\"tmd_layout\":\"%s\",\"compute_capability\":\"%u.%u\",\"gpcs\":[",
		       nvt_tmd_layout_name(t->tmd_layout), t->cc_major, t->cc_minor);
	} else {
		printf("GPU %d: %s (%s)\n  %u TPCs, %d SMs, %u GPCs%s; %s\n", g->index, g->info.name,
		       g->key.uuid, t->n_tpcs, g->info.sms, t->n_gpcs,
		       t->n_gpcs ? "" : " (unknown: needs thread-block clusters)",
		       g->from_cache ? "calibration read from the cache" : "calibrated now");
		/* 0.0: a record from before the compute capability was kept. */
		printf("  TMD layout %s, verified by calibration%s", nvt_tmd_layout_name(t->tmd_layout),
		       t->cc_major ? "" : "\n");
		if (t->cc_major)
			printf(" (compute capability %u.%u)\n", t->cc_major, t->cc_minor);
		printf("  %-4s %-27s %-22s %s\n", "GPC", "TPCs", "mask bits", "SMs");
	}
	for (unsigned gpc = 0; gpc < n_groups; gpc++) {
		struct nvt_tpcset tpcs, bits;
		nvt_set_clear(&tpcs);
		nvt_set_clear(&bits);
		for (unsigned tpc = 0; tpc < t->n_tpcs; tpc++)
			if (!t->n_gpcs || t->gpc[tpc] == gpc) {
				nvt_set_add(&tpcs, tpc);
				nvt_set_add(&bits, t->hw_bit[tpc]);
			}
		nvt_format_list(&tpcs, list, sizeof(list));
		sm_list(&tpcs, sms, sizeof(sms));
		if (o->json) {
			char bit_list[NVT_LIST_TEXT_MAX];
			nvt_format_list(&bits, bit_list, sizeof(bit_list));
			printf("%s{\"gpc\":%d,\"tpcs\":\"%s\",\"sms\":\"%s\",\"mask_bits\":\"%s\","
			       "\"own_cluster_domain\":%s}",
			       gpc ? "," : "", t->n_gpcs ? (int)gpc : -1, list, sms, bit_list,
			       nvt_set_count(&tpcs) == 1 && t->n_gpcs ? "true" : "false");
		} else {
			char bit_list[NVT_LIST_TEXT_MAX], name[8];
			nvt_format_list(&bits, bit_list, sizeof(bit_list));
			snprintf(name, sizeof(name), t->n_gpcs ? "%u" : "-", gpc);
			printf("  %-4s %-27s %-22s %s%s\n", name, list, bit_list, sms,
			       nvt_set_count(&tpcs) == 1 && t->n_gpcs
				       ? "  (shares no cluster with another TPC)"
				       : "");
		}
	}
	if (o->json)
		printf("]}");
}

int nvt_cmd_topology(const struct options *o)
{
	const struct nvt_gpus *gpus = machine_gpus();
	int which[NVT_GPUS_MAX], n = 0;

	if (o->gpu_masks)
		bad_usage("--topology and --calibrate take --gpu GPU without a mask");
	for (int a = 0; a < o->n_gpus; a++)
		which[n++] = resolve_gpu(o->gpus[a].gpu);
	if (!o->n_gpus)
		for (int g = 0; g < gpus->n; g++)
			which[n++] = g;
	if (o->json)
		printf("{\"gpus\":[");
	for (int i = 0; i < n; i++) {
		struct nvt_gpu_topology g = load_gpu(which[i], o->calibrate);
		if (o->calibrate && !o->json && !o->topology) {
			printf("GPU %d: %s (%s): %u TPCs, %u GPCs, calibrated in %.2f s, TMD layout %s "
			       "verified%s%s\n",
			       which[i], g.info.name, g.key.uuid, g.topo.n_tpcs, g.topo.n_gpcs, g.seconds,
			       nvt_tmd_layout_name(g.topo.tmd_layout),
			       g.cache_path[0] ? "; saved in " : "", g.cache_path);
			continue;
		}
		print_topology(o, &g, i == 0);
	}
	if (o->json)
		printf("]}\n");
	return EXIT_SUCCESS;
}
