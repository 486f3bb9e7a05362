/*
 * profreport.c - what --profile prints: a table, or JSON (docs/json.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>

#include "profile.h"
#include "core/membw.h"
#include "core/memlimit.h"

/* The memory half the TPC list sits in: 0, 1, 2 (both), or
 * NVT_HALF_UNKNOWN (halves not measured, none found, or a TPC not placed). */
static int half_of_list(const struct nvt_gpu_topology *gpu, const char *list)
{
	struct nvt_tpcset set;

	if (!gpu->halves_measured || nvt_parse_list(list, NVT_MAX_TPCS, &set) != NVT_PARSE_OK)
		return NVT_HALF_UNKNOWN;
	return nvt_membw_half_of(&gpu->topo, &gpu->halves, &set);
}

/* A line on the memory half of the pick (docs/memory-halves.md). */
static void print_half(const struct nvt_gpu_topology *gpu, const char *list)
{
	int h = half_of_list(gpu, list);

	if (!gpu->halves_measured)
		printf("memory halves: not measured ('nvtaskset --calibrate' measures them)\n");
	else if (!nvt_membw_known(&gpu->halves))
		printf("memory halves: none found on this GPU (docs/memory-halves.md)\n");
	else if (h == 2)
		printf("the pick lies in both memory halves\n");
	else if (h == 0 || h == 1)
		printf("the pick lies in memory half %d\n", h);
	else
		printf("the pick has TPCs whose memory half is not known\n");
}

/* The TPCs of the size picked, or null. */
static void json_pick(const struct nvt_profile_size *s, int pick)
{
	if (pick >= 0)
		printf("%u", s[pick].tpcs);
	else
		printf("null");
}

static void json_number(double v)
{
	if (isfinite(v))
		printf("%.6g", v);
	else
		printf("null");
}

static void json_sizes(const struct nvt_profile_size *s, const char (*lists)[NVT_LIST_TEXT_MAX],
		       unsigned n)
{
	printf("[");
	for (unsigned i = 0; i < n; i++) {
		printf("%s{\"tpcs\":%u,\"tpc_list\":", i ? "," : "", s[i].tpcs);
		json_string(lists[i]);
		printf(",\"values\":[");
		for (unsigned k = 0; k < s[i].n; k++) {
			printf(k ? "," : "");
			json_number(s[i].value[k]);
		}
		printf("],\"failed\":%u", s[i].failed);
		if (s[i].n) {
			printf(",\"median\":");
			json_number(s[i].median);
			printf(",\"min\":");
			json_number(s[i].min);
			printf(",\"max\":");
			json_number(s[i].max);
			printf(",\"ratio\":");
			json_number(s[i].ratio);
		}
		printf("}");
	}
	printf("]");
}

static void print_json(const struct nvt_gpu_topology *gpu, const char *metric,
		       const struct nvt_profile_size *sizes, const struct nvt_profile_size *hog,
		       const char (*lists)[NVT_LIST_TEXT_MAX], unsigned n, int pick, int hog_pick,
		       const struct profile_report_opts *o)
{
	printf("{\"version\":%d,\"gpu\":%d,\"gpu_tpcs\":%u,\"command\":[", NVT_JSON_VERSION,
	       gpu->index, gpu->topo.n_tpcs);
	for (unsigned i = 0; o->command[i]; i++) {
		printf(i ? "," : "");
		json_string(o->command[i]);
	}
	printf("],\"metric\":");
	if (metric)
		json_string(metric);
	else
		printf("\"wall_ms\"");
	printf(",\"higher_is_better\":%s,\"rounds\":%u,\"strategy\":\"%s\",\"mps\":%s,"
	       "\"slowdown\":",
	       o->higher_is_better ? "true" : "false", o->rounds, nvt_strategy_name(o->strategy),
	       o->no_mps ? "false" : "true");
	json_number(o->slowdown);
	if (o->mem_limit)
		printf(",\"memory_limit_bytes\":%llu", (unsigned long long)o->mem_limit);
	else
		printf(",\"memory_limit_bytes\":null");
	printf(",\"sizes\":");
	json_sizes(sizes, lists, n);
	printf(",\"pick\":");
	json_pick(sizes, pick);
	/* 0, 1, "both", or null (docs/memory-halves.md). */
	printf(",\"pick_memory_half\":");
	switch (pick >= 0 ? half_of_list(gpu, lists[pick]) : NVT_HALF_UNKNOWN) {
	case 0: printf("0"); break;
	case 1: printf("1"); break;
	case 2: printf("\"both\""); break;
	default: printf("null");
	}
	if (hog) {
		printf(",\"beside_hog\":");
		json_sizes(hog, lists, n);
		printf(",\"pick_beside_hog\":");
		json_pick(hog, hog_pick);
	}
	printf("}\n");
}

static void print_row(const struct nvt_profile_size *s, int mark)
{
	if (!s->n) {
		printf("%6u  %10s %10s %10s %7s %5u%s\n", s->tpcs, "-", "-", "-", "-", s->failed,
		       mark ? "  <" : "");
		return;
	}
	printf("%6u  %10.4g %10.4g %10.4g %7.3f %5u%s\n", s->tpcs, s->median, s->min, s->max,
	       s->ratio, s->failed, mark ? "  <" : "");
}

void profile_report(const struct nvt_gpu_topology *gpu, const char *const *metric,
		    const struct nvt_profile_size *sizes, const struct nvt_profile_size *hog,
		    const char (*lists)[NVT_LIST_TEXT_MAX], unsigned n, int pick, int hog_pick,
		    const struct profile_report_opts *o)
{
	if (o->json) {
		print_json(gpu, *metric, sizes, hog, lists, n, pick, hog_pick, o);
		return;
	}
	char limit[NVT_MEM_TEXT_MAX], mem[NVT_MEM_TEXT_MAX + 32] = "";

	if (o->mem_limit)
		snprintf(mem, sizeof(mem), ", GPU memory at most %s",
			 nvt_memlimit_format(o->mem_limit, limit, sizeof(limit)));
	printf("GPU %d (%u TPCs), %u round%s, %s (%s)%s%s\n", gpu->index, gpu->topo.n_tpcs,
	       o->rounds, o->rounds == 1 ? "" : "s",
	       *metric ? "the program's metric" : "wall-clock ms",
	       o->higher_is_better ? "higher is better" : "lower is better",
	       o->no_mps ? ", without MPS" : "", mem);
	printf("%6s  %10s %10s %10s %7s %5s\n", "TPCS", "MEDIAN", "MIN", "MAX", "xBEST", "FAIL");
	for (unsigned i = 0; i < n; i++)
		print_row(&sizes[i], (int)i == pick);
	if (pick >= 0)
		printf("smallest partition within %g%% of the best: %u TPCs (%.3fx; -c %s)\n",
		       o->slowdown * 100, sizes[pick].tpcs, sizes[pick].ratio, lists[pick]);
	if (pick >= 0)
		print_half(gpu, lists[pick]);
	else
		printf("no size met the bound (every run failed?)\n");
	if (!hog)
		return;
	printf("\nbeside a memory-bandwidth hog on every other TPC (xBEST: against the best "
	       "alone):\n");
	printf("%6s  %10s %10s %10s %7s %5s\n", "TPCS", "MEDIAN", "MIN", "MAX", "xBEST", "FAIL");
	for (unsigned i = 0; i < n; i++)
		if (hog[i].n || hog[i].failed)
			print_row(&hog[i], (int)i == hog_pick);
	if (hog_pick >= 0)
		printf("smallest partition within %g%% beside the hog: %u TPCs (%.3fx)\n",
		       o->slowdown * 100, hog[hog_pick].tpcs, hog[hog_pick].ratio);
	else
		printf("no size stays within %g%% of the best beside the hog\n", o->slowdown * 100);
}
