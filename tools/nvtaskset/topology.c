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
#include "task/task.h"
#include "alloc/placement.h"
#include "core/membw.h"

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

/* What the tasks hold on GPU g: placement's scan (what a claim keeps clear
 * of), into held (nothing if the run directory cannot be read). */
static void holders_of(const struct nvt_gpu_topology *g, struct nvt_held_list *held)
{
	const uint8_t *uuids[1] = {machine_gpus()->id[g->index].uuid_bytes};

	memset(held, 0, sizeof(*held));
	if (nvt_uuid_is_zero(uuids[0]) || nvt_held_scan(nvt_rundir(), NULL, uuids, 1, held))
		held->n = 0;
}

/* The TPCs of the GPC (tpcs) that no holder takes, as a list ("" for none). */
static void free_of(const struct nvt_tpcset *tpcs, const struct nvt_held_list *h, char *buf,
		    size_t len)
{
	struct nvt_tpcset left = *tpcs;

	for (int i = 0; i < h->n; i++)
		nvt_set_andnot(&left, &left, &h->v[i].tpcs);
	buf[0] = '\0';
	if (nvt_set_count(&left))
		nvt_format_list(&left, buf, len);
}

/* Free and held TPCs of one GPC: a row of the text. */
static void print_use(const char *name, const struct nvt_tpcset *tpcs, const struct nvt_held_list *h)
{
	char list[NVT_LIST_TEXT_MAX];
	int shown = 0;

	free_of(tpcs, h, list, sizeof(list));
	printf("  %-4s %-27s ", name, list[0] ? list : "-");
	for (int i = 0; i < h->n; i++) {
		struct nvt_tpcset part;
		nvt_set_and(&part, tpcs, &h->v[i].tpcs);
		if (!nvt_set_count(&part))
			continue;
		nvt_format_list(&part, list, sizeof(list));
		printf("%s%s by %ld", shown++ ? "; " : "", list, (long)h->pids[i]);
	}
	printf(shown ? "\n" : "-\n");
}

/* Free and held TPCs of one GPC: its "free" and "held" members. */
static void json_use(struct json_object *gpc, const struct nvt_tpcset *tpcs,
		     const struct nvt_held_list *h)
{
	char list[NVT_LIST_TEXT_MAX];
	struct json_object *held = jsonout_array();

	free_of(tpcs, h, list, sizeof(list));
	jsonout_add_text(gpc, "free", list);
	jsonout_add(gpc, "held", held);
	for (int i = 0; i < h->n; i++) {
		struct nvt_tpcset part;
		struct json_object *holder;
		nvt_set_and(&part, tpcs, &h->v[i].tpcs);
		if (!nvt_set_count(&part))
			continue;
		nvt_format_list(&part, list, sizeof(list));
		holder = jsonout_object();
		jsonout_append(held, holder);
		jsonout_add_int(holder, "pid", h->pids[i]);
		jsonout_add_text(holder, "tpcs", list);
	}
}

/* GPC gpc's TPCs and their mask bits (every TPC when GPCs are unknown). */
static void gpc_tpcs(const struct nvt_topology *t, unsigned gpc, struct nvt_tpcset *tpcs,
		     struct nvt_tpcset *bits)
{
	nvt_set_clear(tpcs);
	nvt_set_clear(bits);
	for (unsigned tpc = 0; tpc < t->n_tpcs; tpc++)
		if (!t->n_gpcs || t->gpc[tpc] == gpc) {
			nvt_set_add(tpcs, tpc);
			nvt_set_add(bits, t->hw_bit[tpc]);
		}
}

static void print_header(const struct nvt_gpu_topology *g)
{
	const struct nvt_topology *t = &g->topo;

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

/* The GPU's memory halves, a line of --topology's text. */
static void print_halves(const struct nvt_gpu_topology *g)
{
	char h0[NVT_LIST_TEXT_MAX], h1[NVT_LIST_TEXT_MAX], unplaced[NVT_LIST_TEXT_MAX];

	if (!g->topo.n_gpcs)
		return;
	if (!g->halves_measured) {
		printf("  Memory halves: not measured ('nvtaskset --calibrate' measures them)\n");
		return;
	}
	if (!nvt_membw_known(&g->halves)) {
		printf("  Memory halves: none found by the bandwidth probe\n");
		return;
	}
	nvt_membw_gpcs_text(&g->halves, 0, h0, sizeof(h0));
	nvt_membw_gpcs_text(&g->halves, 1, h1, sizeof(h1));
	nvt_membw_gpcs_text(&g->halves, NVT_HALF_UNKNOWN, unplaced, sizeof(unplaced));
	printf("  Memory halves: 0 = GPCs %s; 1 = GPCs %s%s%s\n", h0, h1,
	       unplaced[0] ? "; not placed: GPCs " : "", unplaced);
}

/* What the bandwidth probe measured: a GPU's "memory_probe". */
static struct json_object *json_probe(const struct nvt_bwprobe_result *r)
{
	struct json_object *probe = jsonout_object(), *probes = jsonout_array();

	jsonout_add_number(probe, "seconds", "%.3f", r->seconds);
	jsonout_add_text(probe, "why", r->why);
	jsonout_add(probe, "probes", probes);
	for (unsigned i = 0; i < r->n_probes && i < 2; i++) {
		const struct nvt_membw_probe *p = &r->probe[i];
		struct json_object *ref = jsonout_object(), *beside = jsonout_array();
		jsonout_append(probes, ref);
		jsonout_add_uint(ref, "reference_gpc", p->ref);
		jsonout_add_number(ref, "alone_gbps", "%.1f", p->base);
		jsonout_add(ref, "beside", beside);
		for (unsigned g = 0; g < r->halves.n_gpcs; g++) {
			struct json_object *gpc;
			if (g == p->ref)
				continue;
			gpc = jsonout_object();
			jsonout_append(beside, gpc);
			jsonout_add_uint(gpc, "gpc", g);
			jsonout_add_number(gpc, "gbps", "%.1f", p->beside[g]);
			jsonout_add_number(gpc, "spread_gbps", "%.1f", p->spread[g]);
			jsonout_add_number(gpc, "neighbour_gbps", "%.1f", p->hog[g]);
			jsonout_add_number(gpc, "cost", "%.4f", nvt_membw_cost(p, g));
		}
	}
	return probe;
}

/* A GPU's object of --topology --json: its GPCs, and which TPCs of each the tasks hold. */
static struct json_object *json_topology(const struct nvt_gpu_topology *g,
					 const struct nvt_bwprobe_result *probe)
{
	const struct nvt_topology *t = &g->topo;
	char list[NVT_LIST_TEXT_MAX], sms[NVT_LIST_TEXT_MAX], bit_list[NVT_LIST_TEXT_MAX], cc[24];
	unsigned n_groups = t->n_gpcs ? t->n_gpcs : 1;
	struct json_object *gpu = jsonout_object(), *gpcs = jsonout_array();
	struct nvt_tpcset tpcs, bits;
	struct nvt_held_list held;

	holders_of(g, &held);
	snprintf(cc, sizeof(cc), "%u.%u", t->cc_major, t->cc_minor);
	jsonout_add_int(gpu, "gpu", g->index);
	jsonout_add_text(gpu, "name", g->info.name);
	jsonout_add_text(gpu, "uuid", g->key.uuid);
	jsonout_add_int(gpu, "sms", g->info.sms);
	jsonout_add_uint(gpu, "tpcs", t->n_tpcs);
	jsonout_add_bool(gpu, "gpcs_known", t->n_gpcs);
	jsonout_add_text(gpu, "cache", g->cache_path);
	jsonout_add_text(gpu, "tmd_layout", nvt_tmd_layout_name(t->tmd_layout));
	jsonout_add_text(gpu, "compute_capability", cc);
	jsonout_add(gpu, "gpcs", gpcs);
	for (unsigned gpc = 0; gpc < n_groups; gpc++) {
		int half = g->halves_measured && gpc < g->halves.n_gpcs ? g->halves.half[gpc] : -1;
		struct json_object *o = jsonout_object();
		gpc_tpcs(t, gpc, &tpcs, &bits);
		nvt_format_list(&tpcs, list, sizeof(list));
		nvt_format_list(&bits, bit_list, sizeof(bit_list));
		sm_list(&tpcs, sms, sizeof(sms));
		jsonout_append(gpcs, o);
		jsonout_add_int(o, "gpc", t->n_gpcs ? (int)gpc : -1);
		jsonout_add_text(o, "tpcs", list);
		jsonout_add_text(o, "sms", sms);
		jsonout_add_text(o, "mask_bits", bit_list);
		jsonout_add_bool(o, "own_cluster_domain", nvt_set_count(&tpcs) == 1 && t->n_gpcs);
		jsonout_add(o, "memory_half", half == 0 || half == 1 ? jsonout_int(half) : NULL);
		json_use(o, &tpcs, &held);
	}
	jsonout_add_bool(gpu, "memory_halves_measured", g->halves_measured);
	if (probe)
		jsonout_add(gpu, "memory_probe", json_probe(probe));
	nvt_held_free(&held, 1);
	return gpu;
}

/* A GPU's GPCs, and which TPCs of each the tasks hold (a table of its own). */
static void print_topology(const struct nvt_gpu_topology *g)
{
	const struct nvt_topology *t = &g->topo;
	char list[NVT_LIST_TEXT_MAX], sms[NVT_LIST_TEXT_MAX], bit_list[NVT_LIST_TEXT_MAX], name[8];
	unsigned n_groups = t->n_gpcs ? t->n_gpcs : 1;
	struct nvt_tpcset tpcs, bits;
	struct nvt_held_list held;

	holders_of(g, &held);
	print_header(g);
	for (unsigned gpc = 0; gpc < n_groups; gpc++) {
		gpc_tpcs(t, gpc, &tpcs, &bits);
		nvt_format_list(&tpcs, list, sizeof(list));
		nvt_format_list(&bits, bit_list, sizeof(bit_list));
		sm_list(&tpcs, sms, sizeof(sms));
		snprintf(name, sizeof(name), t->n_gpcs ? "%u" : "-", gpc);
		printf("  %-4s %-27s %-22s %s%s\n", name, list, bit_list, sms,
		       nvt_set_count(&tpcs) == 1 && t->n_gpcs ? "  (shares no cluster with another TPC)"
							      : "");
	}
	print_halves(g);
	if (!held.n) {
		printf("  No task holds TPCs of this GPU (nvtaskset -l lists the tasks).\n");
	} else {
		printf("  TPCs the tasks hold (nvtaskset -l lists them):\n");
		printf("  %-4s %-27s %s\n", "GPC", "free", "held");
		for (unsigned gpc = 0; gpc < n_groups; gpc++) {
			gpc_tpcs(t, gpc, &tpcs, &bits);
			snprintf(name, sizeof(name), t->n_gpcs ? "%u" : "-", gpc);
			print_use(name, &tpcs, &held);
		}
	}
	nvt_held_free(&held, 1);
}

/* --calibrate: the memory halves, by the bandwidth probe. Returns 0 when it ran. */
static int probe_halves(struct nvt_gpu_topology *g, struct nvt_bwprobe_result *res)
{
	char why[512];

	if (g->topo.n_gpcs < 3)
		return -1; /* GPCs unknown: no halves to place them in */
	if (nvt_gpu_probe_halves(g, driver_timeout_ms(), res, why, sizeof(why))) {
		warnx("warning: GPU %d: cannot measure its memory halves: %s", g->index, why);
		return -1;
	}
	if (g->note[0])
		warnx("%s", g->note);
	return 0;
}

/* --calibrate's line about the memory halves. */
static void report_probe(int index, const struct nvt_gpu_topology *g,
			 const struct nvt_bwprobe_result *r)
{
	char h0[NVT_LIST_TEXT_MAX], h1[NVT_LIST_TEXT_MAX];

	if (!nvt_membw_known(&g->halves)) {
		printf("GPU %d: no memory halves found in %.2f s (%s)\n", index, r->seconds, r->why);
		return;
	}
	nvt_membw_gpcs_text(&g->halves, 0, h0, sizeof(h0));
	nvt_membw_gpcs_text(&g->halves, 1, h1, sizeof(h1));
	printf("GPU %d: memory halves 0 = GPCs %s, 1 = GPCs %s, measured in %.2f s (%s)\n", index,
	       h0, h1, r->seconds, r->why);
}

int nvt_cmd_topology(const struct options *o)
{
	const struct nvt_gpus *gpus = machine_gpus();
	int which[NVT_MACHINE_GPUS], n = 0;
	struct json_object *doc = NULL, *list = NULL;

	if (o->part.gpu_masks)
		bad_usage("--topology and --calibrate take --gpu GPU without a mask");
	for (int a = 0; a < o->part.n_gpus; a++)
		which[n++] = resolve_gpu(o->part.gpus[a].gpu);
	if (!o->part.n_gpus)
		for (int g = 0; g < gpus->n; g++)
			which[n++] = g;
	if (o->json) {
		doc = jsonout_document();
		list = jsonout_array();
		jsonout_add(doc, "gpus", list);
	}
	for (int i = 0; i < n; i++) {
		struct nvt_gpu_topology g = load_gpu(which[i], o->calibrate);
		nvt_gpu_read_halves(&g);
		static struct nvt_bwprobe_result probe;
		int probed = o->calibrate && probe_halves(&g, &probe) == 0;
		if (o->json) {
			jsonout_append(list, json_topology(&g, probed ? &probe : NULL));
		} else if (o->calibrate && !o->topology) {
			printf("GPU %d: %s (%s): %u TPCs, %u GPCs, calibrated in %.2f s, TMD layout %s "
			       "verified%s%s\n",
			       which[i], g.info.name, g.key.uuid, g.topo.n_tpcs, g.topo.n_gpcs, g.seconds,
			       nvt_tmd_layout_name(g.topo.tmd_layout),
			       g.cache_path[0] ? "; saved in " : "", g.cache_path);
			if (probed)
				report_probe(which[i], &g, &probe);
		} else {
			print_topology(&g);
		}
	}
	if (o->json)
		jsonout_print(stdout, doc);
	return EXIT_SUCCESS;
}
