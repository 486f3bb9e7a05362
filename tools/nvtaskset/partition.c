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
#include "core/membw.h"
#include "seg/segfile.h"
/*
 * The TPCs that the other nvtaskset tasks hold on GPU uuid, every user's (for
 * --exclude-running), but those of except. Returns 0, or -1 with errno set.
 */
static int running_tpcs(const uint8_t uuid[16], pid_t except, struct nvt_tpcset *held)
{
	pid_t *pids;
	int n = nvt_seg_tasks(nvt_rundir(), 1, &pids);

	nvt_set_clear(held);
	if (n < 0 && errno == ENOENT)
		return 0; /* no task has run yet */
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct nvt_seg_handle h;
		struct nvt_slot_view view;
		int g;
		if (pids[i] == except || nvt_seg_open(nvt_rundir(), pids[i], 0, &h))
			continue;
		g = nvt_seg_find_slot(&h, uuid);
		if (g >= 0 && nvt_seg_read(&h, g, &view, NULL) == 0 &&
		    view.state == NVT_SLOT_SET)
			nvt_set_or(held, held, &view.tpcs);
		nvt_seg_close(&h);
	}
	free(pids);
	return 0;
}

/* Fails a parse: the reason into why (len bytes); returns -1. */
static int __attribute__((format(printf, 3, 4))) refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Why list text (a -c or -g list, what names it) does not parse (err), and how to write it. */
static int list_syntax(const char *what, const char *text, const struct nvt_parse_error *err,
		       char *why, size_t len)
{
	struct nvt_tpcset set;
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];

	if (err->problem == NVT_PARSE_EMPTY)
		return refuse(why, len, "empty %s: give numbers and ranges such as 0-15,32, or all",
			      what);
	if ((!strncasecmp(text, "0x", 2) || strpbrk(text, "abcdefABCDEF")) &&
	    nvt_parse_mask(text, NVT_MAX_TPCS, &set) == NVT_PARSE_OK && strcmp(what, "GPC list")) {
		describe(&set, list, mask);
		return refuse(why, len, "%s '%s' looks like a hexadecimal mask: leave out -c to give "
			      "a mask (it is TPCs %s), or list the TPCs", what, text, list);
	}
	if (err->problem == NVT_PARSE_DOWN)
		return refuse(why, len, "%s '%s': the range %lu-%lu goes down; write it from low to "
			      "high (%lu-%lu)", what, text, err->first, err->last, err->last, err->first);
	if (err->problem == NVT_PARSE_ZERO_STEP)
		return refuse(why, len, "%s '%s': the step after ':' in %.*s takes every Nth number of "
			      "the range and must be 1 or more", what, text, (int)err->word_len,
			      text + err->word);
	return refuse(why, len, "failed to parse %s '%s': give numbers and ranges, such as "
		      "0-15,32,40-47:2 (every 2nd of 40-47), or all", what, text);
}

/* memory_near's work; claiming: the claim protocol decides whether the half
 * has room (it sees claims and priorities as running_tpcs does not). */
static int near_in(const struct part_args *o, const uint8_t uuid[16], const struct nvt_topology *topo,
		   pid_t self, const struct nvt_tpcset *avail, int claiming, struct nvt_near *near,
		   char *why, size_t len)
{
	static uint64_t warned; /* the GPUs whose "neither half" was said */
	struct nvt_gpu_topology g;
	struct nvt_tpcset others, in;
	char gpcs[NVT_LIST_TEXT_MAX];
	int index = gpu_index_of(uuid), h;

	memset(near, 0, sizeof(*near));
	if (!o->memory_half_given)
		return 0;
	if (index < 0 || load_topology(index, 0, &g, why, len))
		return index < 0 ? refuse(why, len, "a GPU of the task is not listed") : -1;
	nvt_gpu_read_halves(&g);
	if (!g.halves_measured)
		return refuse(why, len, "the memory halves of GPU %d are not known: 'nvtaskset "
			      "--calibrate' measures them (as root: for every user)", index);
	if (!nvt_membw_known(&g.halves))
		return refuse(why, len, "GPU %d shows no memory halves: its bandwidth probe found "
			      "no neighbour that cost clearly more than another ('nvtaskset "
			      "--calibrate' measures again)", index);
	h = o->memory_half;
	if (h == NVT_HALF_UNKNOWN) {
		if (running_tpcs(uuid, self, &others))
			return refuse(why, len, "cannot list the tasks in %s: %s", nvt_rundir(),
				      strerror(errno));
		h = nvt_membw_auto_half(topo, &g.halves, avail, &others, o->count);
		if (h == NVT_HALF_UNKNOWN) {
			if (!(warned >> (index % 64) & 1))
				warnx("warning: neither memory half of GPU %d has %u free TPCs: picking "
				      "from both", index, o->count);
			warned |= (uint64_t)1 << (index % 64);
			return 0;
		}
	}
	nvt_membw_half_tpcs(topo, &g.halves, h, &near->tpcs);
	nvt_set_and(&in, &near->tpcs, avail);
	nvt_membw_gpcs_text(&g.halves, h, gpcs, sizeof(gpcs));
	if (o->memory_half != NVT_HALF_UNKNOWN && !claiming && nvt_set_count(&in) < o->count)
		return refuse(why, len, "cannot pick %u TPCs in memory half %d of GPU %d (GPCs %s): "
			      "only %u %s free", o->count, h, index, gpcs, nvt_set_count(&in),
			      nvt_set_count(&in) == 1 ? "is" : "are");
	near->mode = o->memory_half == NVT_HALF_UNKNOWN ? NVT_NEAR_PREFER : NVT_NEAR_ONLY;
	return 0;
}

int memory_near(const struct part_args *o, const uint8_t uuid[16], const struct nvt_topology *topo,
		pid_t self, const struct nvt_tpcset *avail, struct nvt_near *near, char *why,
		size_t len)
{
	return near_in(o, uuid, topo, self, avail, 0, near, why, len);
}

int near_of(const struct part_args *o, const struct nvt_slot_view *part, pid_t self,
	    struct nvt_near *near, char *why, size_t len)
{
	struct nvt_tpcset avail, held;

	memset(near, 0, sizeof(*near));
	if (!o->memory_half_given)
		return 0;
	nvt_topo_all(&part->topo, &avail);
	if (running_tpcs(part->uuid, self, &held))
		return refuse(why, len, "cannot list the tasks in %s: %s", nvt_rundir(),
			      strerror(errno));
	nvt_set_andnot(&avail, &avail, &held);
	return near_in(o, part->uuid, &part->topo, self, &avail, 1, near, why, len);
}

/* Why a MASK that does not parse is wrong, and how to write it. */
static int mask_syntax(const char *text, char *why, size_t len)
{
	struct nvt_tpcset set;

	if (*text && nvt_parse_list(text, NVT_MAX_TPCS, &set) == NVT_PARSE_OK)
		return refuse(why, len, "TPC mask '%s' is not hexadecimal: to give the TPC list %s, "
			      "add -c (e.g. nvtaskset -c %s COMMAND, or -c --gpu GPU=%s)", text, text,
			      text, text);
	return refuse(why, len, "failed to parse TPC mask '%s': a mask is hexadecimal, bit t "
		      "for TPC t (ff: TPCs 0-7); -c takes a list of TPCs instead", text);
}

/* TPC (or GPC) top is beyond what the GPU has: one wording for every way to name it. */
static int beyond(int gpcs, long top, const struct nvt_topology *topo, const char *gpu_name,
		  char *why, size_t len)
{
	unsigned n = gpcs ? topo->n_gpcs : topo->n_tpcs;

	return refuse(why, len, "%s %ld does not exist: %s has %u %ss (0-%u)", gpcs ? "GPC" : "TPC",
		      top, gpu_name, n, gpcs ? "GPC" : "TPC", n - 1);
}

int parse_partition(const struct part_args *o, const char *text, const struct nvt_topology *topo,
		    const uint8_t uuid[16], const char *gpu_name, pid_t self, struct nvt_tpcset *set,
		    char *why, size_t len)
{
	struct nvt_parse_error err;
	struct nvt_tpcset gpcs;
	const char *what = o->gpc_list ? "GPC list" : o->tpc_list ? "TPC list" : "TPC mask";
	int rc, top, every;

	if (o->count) {
		struct nvt_tpcset available, held;
		struct nvt_near near;
		nvt_topo_all(topo, &available);
		if (o->exclude_running) {
			if (running_tpcs(uuid, self, &held))
				return refuse(why, len, "cannot list the tasks in %s: %s", nvt_rundir(),
					      strerror(errno));
			nvt_set_andnot(&available, &available, &held);
		}
		if (o->count > topo->n_tpcs)
			return refuse(why, len, "cannot pick %u TPCs: %s has %u", o->count, gpu_name,
				      topo->n_tpcs);
		if (memory_near(o, uuid, topo, self, &available, &near, why, len))
			return -1;
		if (near.mode != NVT_NEAR_NONE) {
			struct nvt_tpcset in;
			nvt_set_and(&in, &available, &near.tpcs);
			if (nvt_topo_pick(topo, &in, o->count, o->strategy, set) == 0)
				return 0;
			if (near.mode == NVT_NEAR_ONLY)
				return refuse(why, len, "cannot pick %u TPCs in the memory half asked "
					      "for", o->count);
		}
		if (nvt_topo_pick(topo, &available, o->count, o->strategy, set))
			return refuse(why, len, "cannot pick %u TPCs: only %u %s free of other tasks",
				      o->count, nvt_set_count(&available),
				      nvt_set_count(&available) == 1 ? "is" : "are");
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
		return beyond(o->gpc_list, err.highest, topo, gpu_name, why, len);
	if (rc == NVT_PARSE_RANGE)
		return refuse(why, len, "GPC list '%s' names a GPC beyond %d", text, NVT_MAX_GPCS - 1);
	if (o->gpc_list) {
		if (!topo->n_gpcs)
			return refuse(why, len,
				      "the GPC layout of %s is unknown (it is measured with "
				      "thread-block clusters, which need compute capability 9.0); "
				      "give TPCs with -c or a mask instead",
				      gpu_name);
		top = nvt_set_highest(&gpcs);
		if (top >= (int)topo->n_gpcs)
			return beyond(1, top, topo, gpu_name, why, len);
		nvt_topo_gpc_tpcs(topo, &gpcs, set);
	}
	top = nvt_set_highest(set);
	if (top < 0)
		return refuse(why, len, "empty partition: %s '%s' selects no TPC", what, text);
	if (top >= (int)topo->n_tpcs)
		return beyond(0, top, topo, gpu_name, why, len);
	return 0;
}

int build_partitions(const struct part_args *o, const char *mask, const int *task_gpus, int n_task,
		     const struct nvt_topology *topos, pid_t self, struct nvt_slot_view *out,
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
			return refuse(why, len, "GPU %d (%s) is not one the task can use (see "
				      "CUDA_VISIBLE_DEVICES)", named[a], gpus->id[named[a]].uuid);
		for (int b = 0; b < a; b++)
			if (named[b] == named[a])
				return refuse(why, len, "GPU %d is named twice", named[a]);
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
				return refuse(why, len, "nvtaskset partitions at most %d GPUs of a "
					      "task; name fewer with CUDA_VISIBLE_DEVICES", NVT_MAX_GPUS);
			continue;
		}
		memset(v, 0, sizeof(*v));
		if (nvt_uuid_parse(gpus->id[index].uuid, v->uuid))
			return refuse(why, len, "GPU %d has a malformed UUID '%s'", index,
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
			if (parse_partition(o, text, &v->topo, v->uuid, name, self, &v->tpcs, why, len))
				return -1;
			v->state = NVT_SLOT_SET;
		}
		n++;
	}
	return n;
}

int sm_limit_percent(const struct nvt_slot_view *parts, int n)
{
	unsigned best = 0; /* in 1/10000 */

	for (int i = 0; i < n; i++) {
		struct nvt_tpcset all, used;
		unsigned share;
		nvt_topo_all(&parts[i].topo, &all);
		if (!nvt_set_count(&all))
			continue;
		nvt_set_and(&used, &all, &parts[i].tpcs);
		share = parts[i].state == NVT_SLOT_SET
				? 10000 * nvt_set_count(&used) / nvt_set_count(&all)
				: 10000;
		if (share > best)
			best = share;
	}
	best = (best + 99) / 100;
	return best < 1 ? 1 : best > 100 ? 100 : (int)best;
}
