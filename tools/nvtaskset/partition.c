/*
 * partition.c - partitions from the command line (partition.h): MASK or -n's
 * pick for each GPU of a task, and what is wrong with a MASK that does not parse.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "output.h"
#include "machine.h"
#include "partition.h"
#include "alloc/placement.h"
#include "core/membw.h"
#include "seg/segfile.h"
#include "core/text.h"
#include "core/memlimit.h"
#include "core/gpusel.h"
#include "gpu/gpu.h"

/* A -c or -g list (what names it) that does not parse (err: where): the slip, and the list
 * tidied of it where that parses (nvt_list_tidied), else how a list is written. */
static int malformed_list(const char *what, const char *text, const struct nvt_parse_error *err,
			  char *why, size_t len)
{
	int gpcs = !strcmp(what, "GPC list");
	char tidy[NVT_LIST_TEXT_MAX], slip[160], item[48];
	size_t at = err->at <= strlen(text) ? err->at : strlen(text);
	char c = text[at];

	snprintf(item, sizeof(item), "%.*s", (int)(err->word_len < 40 ? err->word_len : 40), text + err->word);
	if (c == ',' && (at == 0 || text[at - 1] == ',' || text[at + 1] == '\0'))
		snprintf(slip, sizeof(slip), "an empty item (two commas, or one at an end)");
	else if (c == ' ' || c == '\t')
		snprintf(slip, sizeof(slip), "a space in '%s' (a list has none)", item);
	else if (c == '.')
		snprintf(slip, sizeof(slip), "'.' in '%s' (a range is FIRST-LAST)", item);
	else if (c == '\0')
		snprintf(slip, sizeof(slip), "it ends inside '%s'", item);
	else if (!strcmp(item, "all"))
		snprintf(slip, sizeof(slip), "'all' stands alone, in no list");
	else if (err->word_len == 1)
		snprintf(slip, sizeof(slip), "'%c' is no number or range", c);
	else
		snprintf(slip, sizeof(slip), "'%c' in '%s' is no number or range", c, item);
	if (!nvt_list_tidied(text, gpcs ? NVT_MAX_GPCS : NVT_MAX_TPCS, tidy, sizeof(tidy)))
		return nvt_why(why, len, "failed to parse %s '%s': %s; write it %s", what, text, slip,
			       tidy);
	return nvt_why(why, len, "failed to parse %s '%s': %s; give numbers and ranges, such as %s, "
		       "or all", what, text, slip,
		       gpcs ? "0-2,5 (GPCs 0, 1, 2 and 5)" : "0-15,32,40-47:2 (every 2nd of 40-47)");
}

/* Why list text (a -c or -g list, what names it) does not parse (err), and how to write it. */
static int list_syntax(const char *what, const char *text, const struct nvt_parse_error *err,
		       char *why, size_t len)
{
	struct nvt_tpcset set;
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];

	if (err->problem == NVT_PARSE_EMPTY)
		return nvt_why(why, len, "empty %s: give numbers and ranges such as 0-15,32, or all",
			       what);
	if ((!strncasecmp(text, "0x", 2) || strpbrk(text, "abcdefABCDEF")) &&
	    nvt_parse_mask(text, NVT_MAX_TPCS, &set) == NVT_PARSE_OK && strcmp(what, "GPC list")) {
		describe(&set, list, mask);
		return nvt_why(why, len, "%s '%s' looks like a hexadecimal mask: leave out -c to give "
			       "a mask (it is TPCs %s), or list the TPCs", what, text, list);
	}
	if (err->problem == NVT_PARSE_DOWN)
		return nvt_why(why, len, "%s '%s': the range %lu-%lu goes down; write it from low to "
			       "high (%lu-%lu)", what, text, err->first, err->last, err->last, err->first);
	if (err->problem == NVT_PARSE_ZERO_STEP)
		return nvt_why(why, len, "%s '%s': the step after ':' in %.*s takes every Nth number of "
			       "the range and must be 1 or more", what, text, (int)err->word_len,
			       text + err->word);
	return malformed_list(what, text, err, why, len);
}
/* What ask asks of the GPU uuid (topology topo), in placement's words. */
static void place_of(const struct part_args *o, const uint8_t uuid[16], const struct nvt_topology *topo,
		     const char *name, struct nvt_placement_ask *ask, struct nvt_placement_gpu *gpu)
{
	memset(ask, 0, sizeof(*ask));
	ask->count = o->count;
	ask->strategy = o->strategy;
	ask->exclude_running = o->exclude_running;
	ask->half = o->memory_half_given ? o->memory_half : NVT_PLACEMENT_ANY_HALF;
	memset(gpu, 0, sizeof(*gpu));
	gpu->uuid = uuid;
	gpu->topo = topo;
	gpu->name = name;
}

/* With --memory-half: gpu->halves, the GPU's halves read (g holds them). Returns 0, or -1 with why. */
static int load_halves(const struct part_args *o, struct nvt_placement_gpu *gpu,
		       struct nvt_gpu_topology *g, char *why, size_t len)
{
	int index = gpu_index_of(gpu->uuid);

	if (!o->memory_half_given)
		return 0;
	if (index < 0)
		return nvt_why(why, len, "a GPU of the task is not listed");
	if (load_topology(index, 0, g, why, len))
		return -1;
	nvt_gpu_read_halves(g);
	gpu->halves = g;
	return 0;
}

/* Says once per GPU that auto found no half with room (NVT_NEAR_NEITHER). */
static void warn_neither(const struct part_args *o, const struct nvt_gpu_topology *g)
{
	static uint64_t warned; /* the GPUs whose "neither half" was said */

	if (!(warned >> (g->index % 64) & 1))
		warnx("warning: neither memory half of GPU %d has %u free TPCs: picking "
		      "from both", g->index, o->count);
	warned |= (uint64_t)1 << (g->index % 64);
}

int near_of(const struct part_args *o, const struct nvt_slot_view *part,
	    const struct nvt_claimer *me, struct nvt_near *near, char *why, size_t len)
{
	struct nvt_placement_ask ask;
	struct nvt_placement_gpu gpu;
	struct nvt_gpu_topology g;
	int rc;

	memset(near, 0, sizeof(*near));
	place_of(o, part->uuid, &part->topo, "", &ask, &gpu);
	if (load_halves(o, &gpu, &g, why, len))
		return -1;
	rc = nvt_placement_near_for_claim(nvt_rundir(), &gpu, &ask, me, near, why, len);
	if (rc == NVT_NEAR_NEITHER)
		warn_neither(o, &g);
	return rc < 0 ? -1 : 0;
}

/* Why a MASK that does not parse is wrong, and how to write it. */
static int mask_syntax(const char *text, char *why, size_t len)
{
	struct nvt_tpcset set;

	if (*text && nvt_parse_list(text, NVT_MAX_TPCS, &set) == NVT_PARSE_OK)
		return nvt_why(why, len, "TPC mask '%s' is not hexadecimal: to give the TPC list %s, "
			       "add -c (e.g. nvtaskset -c %s COMMAND, or -c --gpu GPU=%s)", text, text,
			       text, text);
	return nvt_why(why, len, "failed to parse TPC mask '%s': a mask is hexadecimal, bit t "
		       "for TPC t (ff: TPCs 0-7); -c takes a list of TPCs instead", text);
}

/* TPC (or GPC) top (decimal text) is beyond what the GPU has: one wording for
 * every way to name it. */
static int beyond(int gpcs, const char *top, const struct nvt_topology *topo, const char *gpu_name,
		  char *why, size_t len)
{
	unsigned n = gpcs ? topo->n_gpcs : topo->n_tpcs;

	return nvt_why(why, len, "%s %s does not exist: %s has %u %ss (0-%u)", gpcs ? "GPC" : "TPC",
		       top, gpu_name, n, gpcs ? "GPC" : "TPC", n - 1);
}
static int beyond_n(int gpcs, long top, const struct nvt_topology *topo, const char *gpu_name,
		    char *why, size_t len)
{
	char text[24];

	snprintf(text, sizeof(text), "%ld", top);
	return beyond(gpcs, text, topo, gpu_name, why, len);
}
/* The highest TPC (or GPC) that text names, as the user wrote it (40 digits at most). */
static int beyond_named(int gpcs, const char *text, const struct nvt_parse_error *err,
			const struct nvt_topology *topo, const char *gpu_name, char *why, size_t len)
{
	char top[48];

	if (!err->top_len)
		return beyond_n(gpcs, err->highest, topo, gpu_name, why, len);
	snprintf(top, sizeof(top), "%.*s%s", (int)(err->top_len < 40 ? err->top_len : 40),
		 text + err->top, err->top_len > 40 ? "..." : "");
	return beyond(gpcs, top, topo, gpu_name, why, len);
}

int start_mask_syntax(const struct part_args *o, const char *text, char *why, size_t len)
{
	const char *what = o->gpc_list ? "GPC list" : "TPC list";
	struct nvt_parse_error err;
	struct nvt_tpcset set;

	if (o->gpc_list || o->tpc_list)
		return nvt_parse_list_why(text, NVT_MAX_TPCS, &set, &err) == NVT_PARSE_SYNTAX ?
			       list_syntax(what, text, &err, why, len) : 0;
	if (nvt_parse_mask(text, NVT_MAX_TPCS, &set) != NVT_PARSE_SYNTAX)
		return 0;
	if (*text && nvt_parse_list(text, NVT_MAX_TPCS, &set) == NVT_PARSE_OK)
		return mask_syntax(text, why, len);
	return nvt_why(why, len, "failed to parse TPC mask '%s': '%s' is not a MASK; give -c LIST, "
		       "-g LIST, -n COUNT or a hexadecimal MASK (ff: TPCs 0-7) before COMMAND", text,
		       text);
}

int parse_partition(const struct part_args *o, const char *text, const struct nvt_topology *topo,
		    const uint8_t uuid[16], const char *gpu_name, const struct nvt_claimer *me,
		    struct nvt_tpcset *set,
		    char *why, size_t len)
{
	struct nvt_parse_error err;
	struct nvt_tpcset gpcs;
	const char *what = o->gpc_list ? "GPC list" : o->tpc_list ? "TPC list" : "TPC mask";
	int rc, top, every;

	if (o->count) {
		struct nvt_placement_ask ask;
		struct nvt_placement_gpu gpu;
		struct nvt_gpu_topology g;
		int neither = 0;

		place_of(o, uuid, topo, gpu_name, &ask, &gpu);
		if (load_halves(o, &gpu, &g, why, len) ||
		    nvt_placement_once(nvt_rundir(), &gpu, &ask, me, set, &neither, why, len))
			return -1;
		if (neither)
			warn_neither(o, &g);
		return 0;
	}
	/* "all" (as -l and -p show an unpartitioned task): every TPC or GPC the GPU has. */
	every = !strcmp(text, "all");
	if (o->gpc_list)
		rc = nvt_parse_list_why(text, every && topo->n_gpcs ? topo->n_gpcs : NVT_MAX_GPCS,
					&gpcs, &err);
	else if (o->tpc_list)
		rc = nvt_parse_list_why(text, every ? topo->n_tpcs : NVT_MAX_TPCS, set, &err);
	else
		rc = nvt_parse_mask_why(text, NVT_MAX_TPCS, set, &err);
	if (rc == NVT_PARSE_SYNTAX)
		return o->gpc_list || o->tpc_list ? list_syntax(what, text, &err, why, len) :
		       mask_syntax(text, why, len);
	if (rc == NVT_PARSE_RANGE && (!o->gpc_list || topo->n_gpcs))
		return beyond_named(o->gpc_list, text, &err, topo, gpu_name, why, len);
	if (rc == NVT_PARSE_RANGE)
		return nvt_why(why, len, "GPC list '%s' names a GPC beyond %d", text, NVT_MAX_GPCS - 1);
	if (o->gpc_list) {
		if (!topo->n_gpcs)
			return nvt_why(why, len,
				       "the GPC layout of %s is unknown (it is measured with "
				       "thread-block clusters, which need compute capability 9.0); "
				       "give TPCs with -c or a mask instead",
				       gpu_name);
		top = nvt_set_highest(&gpcs);
		if (top >= (int)topo->n_gpcs)
			return beyond_n(1, top, topo, gpu_name, why, len);
		nvt_topo_gpc_tpcs(topo, &gpcs, set);
	}
	top = nvt_set_highest(set);
	if (top < 0)
		return nvt_why(why, len, "empty partition: %s '%s' selects no TPC", what, text);
	if (top >= (int)topo->n_tpcs)
		return beyond_n(0, top, topo, gpu_name, why, len);
	return 0;
}

int build_partitions(const struct part_args *o, const char *mask, const int *task_gpus, int n_task,
		     const struct nvt_topology *topos, const struct nvt_claimer *me,
		     struct nvt_slot_view *out,
		     char *why, size_t len)
{
	const struct nvt_gpus *gpus = machine_gpus();
	int named[NVT_MAX_GPUS], n = 0;

	for (int a = 0; a < o->n_gpus; a++) {
		int found = 0;
		named[a] = resolve_gpu(o->gpus[a].gpu);
		for (int i = 0; i < n_task; i++)
			found |= task_gpus[i] == named[a];
		if (!found)
			return nvt_why(why, len, "GPU %d (%s) is not one the task can use (see "
				       "CUDA_VISIBLE_DEVICES)", named[a], gpus->id[named[a]].uuid);
		for (int b = 0; b < a; b++)
			if (named[b] == named[a])
				return nvt_why(why, len, "GPU %d is named twice", named[a]);
	}
	for (int i = 0; i < n_task; i++) {
		int index = task_gpus[i];
		const char *text = o->n_gpus ? NULL : mask; /* NULL: not partitioned */
		struct nvt_slot_view *v = &out[n];
		struct nvt_gpu_topology g;
		char name[32];
		int rc;

		for (int a = 0; a < o->n_gpus; a++)
			if (named[a] == index)
				text = o->gpu_masks ? o->gpus[a].mask : mask;
		if (n == NVT_MAX_GPUS) {
			if (text)
				return nvt_why(why, len, "nvtaskset partitions at most %d GPUs of a "
					       "task; name fewer with CUDA_VISIBLE_DEVICES", NVT_MAX_GPUS);
			continue;
		}
		memset(v, 0, sizeof(*v));
		memcpy(v->uuid, gpus->id[index].uuid_bytes, 16);
		if (nvt_uuid_is_zero(v->uuid))
			return nvt_why(why, len, "GPU %d has a malformed UUID '%s'", index,
				       gpus->id[index].uuid);
		if (topos && topos[i].n_tpcs) {
			v->topo = topos[i];
		} else if ((rc = load_topology(index, 0, &g, why, len))) {
			/* A GPU CUDA does not show here is none the task can use. */
			if (rc == NVT_GPU_HIDDEN && !o->n_gpus)
				continue;
			if (!text) {
				warnx("warning: %s; the task's launches on GPU %d run unpartitioned", why,
				      index);
				continue;
			}
			return -1; /* why says it */
		} else {
			v->topo = g.topo;
		}
		v->state = NVT_SLOT_UNSET;
		if (text) {
			gpu_name(index, n_task, name, sizeof(name));
			if (parse_partition(o, text, &v->topo, v->uuid, name, me, &v->tpcs, why, len))
				return -1;
			v->state = NVT_SLOT_SET;
		}
		n++;
	}
	return n;
}

void warn_shared_tpcs(pid_t tree, const struct nvt_slot_view *parts, int n, const char *who)
{
	struct nvt_clash clashes[NVT_CLASHES_MAX];
	int found = nvt_placement_clashes(nvt_rundir(), tree, parts, n, clashes);

	for (int k = 0; k < found && k < NVT_CLASHES_MAX; k++) {
		char list[NVT_LIST_TEXT_MAX];
		nvt_format_list(&clashes[k].both, list, sizeof(list));
		warnx("warning: %sTPC%s %s of GPU %d %s pid %ld's too: the two tasks share them "
		      "(-n N --exclude-running picks TPCs no task holds)", who,
		      nvt_set_count(&clashes[k].both) > 1 ? "s" : "", list,
		      gpu_index_of(parts[clashes[k].part].uuid),
		      nvt_set_count(&clashes[k].both) > 1 ? "are" : "is", (long)clashes[k].pid);
	}
	if (found > NVT_CLASHES_MAX)
		warnx("warning: and %d more tasks share %sTPCs (nvtaskset -l shows them)",
		      found - NVT_CLASHES_MAX, who);
}

uint64_t gpu_memory(const uint8_t uuid[16], char *why, size_t len)
{
	static struct {
		uint8_t uuid[16];
		uint64_t bytes;
	} known[NVT_MAX_GPUS];
	static int n_known;
	struct nvt_gpu_info info;

	for (int i = 0; i < n_known; i++)
		if (!memcmp(known[i].uuid, uuid, 16))
			return known[i].bytes;
	if (nvt_gpu_query(uuid, driver_timeout_ms(), &info, why, len))
		return 0;
	if (n_known < NVT_MAX_GPUS) {
		memcpy(known[n_known].uuid, uuid, 16);
		known[n_known++].bytes = info.total_mem;
	}
	return info.total_mem;
}

int mem_names_gpu(const struct mem_arg *arg, const uint8_t uuid[16])
{
	int index = arg->gpu ? nvt_gpusel_resolve(arg->gpu, machine_gpus()->id, machine_gpus()->n) : -1;

	return !arg->gpu || (index >= 0 && gpu_index_of(uuid) == index);
}

int mem_limits(const struct mem_args *m, struct nvt_slot_view *parts, int n, char *why, size_t len)
{
	const struct nvt_gpus *gpus = m->n ? machine_gpus() : NULL;

	for (int a = 0; a < m->n; a++) {
		int index = -1, found = 0;
		if (m->arg[a].gpu) {
			index = nvt_gpusel_resolve(m->arg[a].gpu, gpus->id, gpus->n);
			if (index < 0)
				return nvt_why(why, len, "--mem %s=%s: %s GPU '%s'", m->arg[a].gpu,
					       m->arg[a].size, index == NVT_GPU_AMBIGUOUS ? "ambiguous" : "no",
					       m->arg[a].gpu);
		}
		for (int i = 0; i < n; i++) {
			char asked[256], bad[512], uuid[NVT_UUID_TEXT_MAX];
			uint64_t total;
			int number = gpu_index_of(parts[i].uuid);
			if (index >= 0 && number != index)
				continue;
			found = 1;
			if (!strcmp(m->arg[a].size, "none")) {
				parts[i].mem_limit = 0; /* no limit (a running task's taken away) */
				continue;
			}
			asked[0] = '\0';
			total = gpu_memory(parts[i].uuid, asked, sizeof(asked));
			if (!nvt_memlimit_parse(m->arg[a].size, total, &parts[i].mem_limit, bad, sizeof(bad)))
				continue;
			nvt_uuid_format(parts[i].uuid, uuid);
			return nvt_why(why, len, "--mem on GPU %d (%s): %s%s%s", number, uuid, bad,
				       asked[0] ? "; the driver could not say: " : "", asked);
		}
		if (!found)
			return nvt_why(why, len, "--mem %s=%s: GPU %s is not one the task uses",
				       m->arg[a].gpu, m->arg[a].size, m->arg[a].gpu);
	}
	return 0;
}
