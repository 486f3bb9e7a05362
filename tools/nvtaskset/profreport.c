/*
 * profreport.c - what --profile prints: a table, or JSON (docs/json.md).
 *
 * SPDX-License-Identifier: MIT
 */
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
static struct json_object *json_pick(const struct nvt_profile_size *s, int pick)
{
	return pick >= 0 ? jsonout_uint(s[pick].tpcs) : NULL;
}

/* A measurement: as printf's %.6g (null when not finite). */
static struct json_object *json_number(double v)
{
	return jsonout_number("%.6g", v);
}

static struct json_object *json_sizes(const struct nvt_profile_size *s,
				      const char (*lists)[NVT_LIST_TEXT_MAX], unsigned n)
{
	struct json_object *sizes = jsonout_array();

	for (unsigned i = 0; i < n; i++) {
		struct json_object *size = jsonout_object(), *values = jsonout_array();
		jsonout_append(sizes, size);
		jsonout_add_uint(size, "tpcs", s[i].tpcs);
		jsonout_add_text(size, "tpc_list", lists[i]);
		jsonout_add(size, "values", values);
		for (unsigned k = 0; k < s[i].n; k++)
			jsonout_append(values, json_number(s[i].value[k]));
		jsonout_add_uint(size, "failed", s[i].failed);
		if (s[i].n) {
			jsonout_add(size, "median", json_number(s[i].median));
			jsonout_add(size, "min", json_number(s[i].min));
			jsonout_add(size, "max", json_number(s[i].max));
			jsonout_add(size, "ratio", json_number(s[i].ratio));
		}
	}
	return sizes;
}

/* The memory half of the pick: 0, 1, "both", or null (docs/memory-halves.md). */
static struct json_object *json_pick_half(const struct nvt_gpu_topology *gpu,
					  const char (*lists)[NVT_LIST_TEXT_MAX], int pick)
{
	switch (pick >= 0 ? half_of_list(gpu, lists[pick]) : NVT_HALF_UNKNOWN) {
	case 0: return jsonout_int(0);
	case 1: return jsonout_int(1);
	case 2: return jsonout_text("both");
	default: return NULL;
	}
}

static void print_json(const struct nvt_gpu_topology *gpu, const char *metric,
		       const struct nvt_profile_size *sizes, const struct nvt_profile_size *hog,
		       const char (*lists)[NVT_LIST_TEXT_MAX], unsigned n, int pick, int hog_pick,
		       const struct profile_report_opts *o)
{
	struct json_object *doc = jsonout_document(), *command = jsonout_array();

	jsonout_add_int(doc, "gpu", gpu->index);
	jsonout_add_uint(doc, "gpu_tpcs", gpu->topo.n_tpcs);
	jsonout_add(doc, "command", command);
	for (unsigned i = 0; o->command[i]; i++)
		jsonout_append(command, jsonout_text(o->command[i]));
	jsonout_add_text(doc, "metric", metric ? metric : "wall_ms");
	jsonout_add_bool(doc, "higher_is_better", o->higher_is_better);
	jsonout_add_uint(doc, "rounds", o->rounds);
	jsonout_add_text(doc, "strategy", nvt_strategy_name(o->strategy));
	jsonout_add_bool(doc, "mps", !o->no_mps);
	jsonout_add(doc, "slowdown", json_number(o->slowdown));
	jsonout_add_uint_or_null(doc, "memory_limit_bytes", o->mem_limit);
	jsonout_add(doc, "sizes", json_sizes(sizes, lists, n));
	jsonout_add(doc, "pick", json_pick(sizes, pick));
	jsonout_add(doc, "pick_memory_half", json_pick_half(gpu, lists, pick));
	if (hog) {
		jsonout_add(doc, "beside_hog", json_sizes(hog, lists, n));
		jsonout_add(doc, "pick_beside_hog", json_pick(hog, hog_pick));
	}
	jsonout_print(stdout, doc);
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
