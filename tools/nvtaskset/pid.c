/*
 * pid.c - nvtaskset -p: show or change the partition of a running task.
 * -a (tree.c) takes the same steps for each task of a tree.
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
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "alloc/reserve.h"
#include "os/sysutil.h"

static pid_t parse_pid(const char *text)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v <= 0 || v > INT_MAX)
		cli_errx("invalid PID argument: '%s'", text);
	return (pid_t)v;
}

/* The GPU a slot is for, as "GPU N (UUID)" or "GPU UUID" when not on this machine's list. */
static void slot_gpu_text(const struct nvt_slot_view *view, char *buf, size_t len)
{
	char uuid[NVT_UUID_TEXT_MAX];
	int index;

	nvt_uuid_format(view->uuid, uuid);
	index = gpu_index_of(view->uuid);
	if (index >= 0)
		snprintf(buf, len, "GPU %d (%s)", index, uuid);
	else
		snprintf(buf, len, "GPU %s", uuid);
}

/* Prints one partition; gpu is "" for a task of one GPU. */
static void print_partition(const struct options *o, pid_t pid, const char *which,
			    const char *gpu, const struct nvt_slot_view *view)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
	const char *kind = o->tpc_list || o->gpc_list ? "list" : "mask";

	printf("pid %ld's %s TPC %s%s%s: ", (long)pid, which, kind, *gpu ? " on " : "", gpu);
	if (view->state != NVT_SLOT_SET) {
		printf("all (not partitioned)\n");
		return;
	}
	describe(&view->tpcs, list, mask);
	printf("%s\n", o->tpc_list || o->gpc_list ? list : mask);
}

/* Prints "key":{partition} (null for none). */
static void json_partition(const char *key, const struct nvt_slot_view *view)
{
	printf("\"%s\":", key);
	if (!view) {
		printf("null");
		return;
	}
	putchar('{');
	json_partition_fields(stdout, view->state, &view->tpcs);
	putchar('}');
}

/* Graph kernels that keep the partition they were uploaded with (docs/cuda-graphs.md). */
static void warn_graph_stale(pid_t pid, uint64_t kernels)
{
	if (kernels)
		warnx("warning: pid %ld runs %llu CUDA graph kernel%s that cannot follow partition "
		      "changes: they keep the TPCs they were uploaded with (see nvtaskset(1), CUDA GRAPHS)",
		      (long)pid, (unsigned long long)kernels, kernels == 1 ? "" : "s");
}

/* What the task says of a slot's partition. */
struct slot_status {
	int slot;
	struct nvt_slot_status s;
};

/*
 * Reads the slots that hold a GPU into views (their status in st). Returns
 * how many; *torn counts slots a dead writer left half-written (or that the
 * file's owner cut short).
 */
static int read_slots(const struct nvt_seg_handle *h, struct nvt_slot_view *views,
		      struct slot_status *st, int *torn)
{
	int n = 0;

	*torn = 0;
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		if (nvt_seg_read(h, g, &views[n], &st[n].s)) {
			(*torn)++;
			continue;
		}
		if (nvt_uuid_is_zero(views[n].uuid))
			continue;
		st[n++].slot = g;
	}
	return n;
}

/* The GPUs of slots a dead writer left half-written (their topologies unknown). */
static int torn_gpus(const struct nvt_seg_handle *h, int *task, int n_task)
{
	for (int g = 0; g < NVT_MAX_GPUS && n_task < NVT_GPUS_MAX; g++) {
		struct nvt_slot_view view;
		uint8_t uuid[16];
		int index;
		if (nvt_seg_read(h, g, &view, NULL) == 0 || nvt_seg_slot_gpu(h, g, uuid))
			continue;
		index = nvt_uuid_is_zero(uuid) ? -1 : gpu_index_of(uuid);
		if (index >= 0)
			task[n_task++] = index;
	}
	return n_task;
}

int pid_show(const struct options *o, const struct nvt_seg_handle *h, int top, char *why, size_t len)
{
	static struct nvt_slot_view views[NVT_MAX_GPUS];
	struct slot_status st[NVT_MAX_GPUS];
	int torn, n = read_slots(h, views, st, &torn);
	pid_t pid = h->pid;

	if (torn && !n) {
		snprintf(why, len, "a writer died while changing it; set a new partition to repair it");
		return -1;
	}
	if (torn)
		warnx("pid %ld: a writer died while changing %d of its GPU partitions; set a new "
		      "partition to repair them",
		      (long)pid, torn);
	if (o->json) {
		if (top)
			printf("{\"version\":%d,", NVT_JSON_VERSION);
		else
			putchar('{');
		printf("\"pid\":%ld,\"gpus\":[", (long)pid);
		for (int i = 0; i < n; i++) {
			int refused = views[i].seq && st[i].s.rejected == views[i].seq;
			printf(i ? "," : "");
			json_gpu_start(stdout, views[i].uuid);
			putchar(',');
			json_partition("current", &views[i]);
			printf(",\"applied\":%s,\"refused\":%s,\"launches\":%llu,\"graph_kernels_stale\":%llu}",
			       st[i].s.applied == views[i].seq ? "true" : "false", refused ? "true" : "false",
			       (unsigned long long)st[i].s.launches, (unsigned long long)st[i].s.graph_stale);
		}
		printf(top ? "]}\n" : "]}");
	} else if (n == 0) {
		struct nvt_slot_view none = {0};
		print_partition(o, pid, "current", "", &none);
	}
	for (int i = 0; i < n && !o->json; i++) {
		char gpu[96] = "";
		if (n > 1)
			slot_gpu_text(&views[i], gpu, sizeof(gpu));
		print_partition(o, pid, "current", gpu, &views[i]);
	}
	for (int i = 0; i < n; i++)
		warn_graph_stale(pid, st[i].s.graph_stale);
	for (int i = 0; i < n; i++)
		if (views[i].seq && st[i].s.rejected == views[i].seq)
			warnx("pid %ld refused this partition (it enables no working TPC) and runs on its "
			      "previous one",
			      (long)pid);
		else if (views[i].state == NVT_SLOT_SET && st[i].s.applied != views[i].seq)
			warnx("pid %ld has not applied this partition yet: it has launched no kernel "
			      "since, or its program runs without the nvtaskset shim",
			      (long)pid);
	return 0;
}

int pid_plan(const struct options *o, const char *mask_text, const struct nvt_seg_handle *h,
	     struct nvt_slot_view *parts, char *why, size_t len)
{
	static struct nvt_slot_view old[NVT_MAX_GPUS];
	static struct nvt_topology topos[NVT_GPUS_MAX];
	struct slot_status st[NVT_MAX_GPUS];
	int task[NVT_GPUS_MAX], n_task = 0, torn, n_old = read_slots(h, old, st, &torn);

	/* The task's GPUs: those it has slots for, with the maps it already uses. */
	for (int i = 0; i < n_old; i++) {
		int index = gpu_index_of(old[i].uuid);
		if (index < 0)
			continue;
		task[n_task] = index;
		memset(&topos[n_task], 0, sizeof(topos[n_task]));
		if (nvt_topo_validate(&old[i].topo) == 0)
			topos[n_task] = old[i].topo; /* no driver call */
		n_task++;
	}
	if (torn) {
		int before = n_task;
		n_task = torn_gpus(h, task, n_task);
		for (int i = before; i < n_task; i++)
			memset(&topos[i], 0, sizeof(topos[i]));
	}
	/* None yet (started without nvtaskset), or a GPU named that it has none for. */
	if (n_task == 0 || o->n_gpus) {
		const struct nvt_gpus *gpus = machine_gpus();
		for (int g = 0; g < gpus->n && n_task < NVT_GPUS_MAX; g++) {
			int known = 0;
			for (int i = 0; i < n_task; i++)
				known |= task[i] == g;
			if (!known) {
				memset(&topos[n_task], 0, sizeof(topos[n_task]));
				task[n_task++] = g;
			}
		}
	}
	/* -n --exclude-running: the GPUs and their topologies here; pid_apply
	 * claims the pick (nvt_claim_move), race-free against other claimers. */
	if (o->count && o->exclude_running) {
		struct options pick = *o;
		pick.exclude_running = 0;
		return build_partitions(&pick, mask_text, task, n_task, topos, h->pid, parts, why, len);
	}
	return build_partitions(o, mask_text, task, n_task, topos, h->pid, parts, why, len);
}

/* Started with --sm-limit: MPS caps the task at its start's share. */
static void check_sm_limit(pid_t pid, const struct nvt_slot_view *now, int n)
{
	char text[16], *end;
	long limit;

	if (nvt_proc_env(pid, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", text, sizeof(text)) == 0 &&
	    (limit = strtol(text, &end, 10)) > 0 && limit < 100 && !*end &&
	    sm_limit_percent(now, n) > limit)
		warnx("warning: pid %ld runs under MPS's limit of %ld%% of the SMs (set at its "
		      "start, e.g. by --sm-limit): it cannot use more SMs than that, whatever "
		      "its partition",
		      (long)pid, limit);
}

/* Slots of h that hold no GPU yet. */
static int free_slots(const struct nvt_seg_handle *h)
{
	int n = 0;

	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		uint8_t uuid[16];
		n += nvt_seg_slot_gpu(h, g, uuid) == 0 && nvt_uuid_is_zero(uuid);
	}
	return n;
}

int pid_apply(const struct options *o, struct nvt_seg_handle *h, const struct nvt_slot_view *parts,
	      int n_parts, int top, int *changed, char *why, size_t len)
{
	static struct nvt_slot_view old[NVT_MAX_GPUS], now[NVT_MAX_GPUS], want[NVT_MAX_GPUS];
	struct slot_status st[NVT_MAX_GPUS];
	int written_slot[NVT_MAX_GPUS], had[NVT_MAX_GPUS];
	static struct nvt_slot_view first_old[NVT_MAX_GPUS];
	int first_had[NVT_MAX_GPUS], first_n_old = 0, attempt = 0;
	int n_old, torn, rc, shown, new_slot;
	struct timespec written;
	pid_t pid = h->pid;

again:
	shown = new_slot = 0;
	n_old = read_slots(h, old, st, &torn);
	rc = nvt_seg_lock(h, SEG_LOCK_TIMEOUT_MS);
	if (rc)
		goto fail;
	for (int i = 0; i < n_parts; i++) {
		int g;
		if (parts[i].state != NVT_SLOT_SET)
			continue; /* a GPU this change does not name */
		/* Under the lock no live writer is inside: a failed read is a dead one's. */
		g = nvt_seg_find_slot(h, parts[i].uuid);
		had[shown] = g >= 0 && nvt_seg_read(h, g, &old[shown], NULL) == 0;
		new_slot += g < 0;
		want[shown] = parts[i];
		prio_carry(o, &want[shown], had[shown] ? &old[shown] : NULL);
		shown++;
	}
	if (new_slot > free_slots(h)) {
		snprintf(why, len, "it already has partitions on %d GPUs, the most a task can have",
			 NVT_MAX_GPUS);
		nvt_seg_close(h);
		return -1;
	}
	if (o->count && o->exclude_running) {
		/* The pick is claimed in the task's own slots, as a start claims
		 * (src/alloc/reserve.c): moves and starts at once never share a TPC. */
		static struct nvt_claim_gpu req[NVT_MAX_GPUS];
		static struct nvt_slot_view prev[NVT_MAX_GPUS];
		for (int i = 0; i < shown; i++) {
			memcpy(req[i].uuid, want[i].uuid, sizeof(req[i].uuid));
			req[i].topo = want[i].topo;
			req[i].count = o->count;
			req[i].strategy = o->strategy;
			if (had[i]) {
				prev[i] = old[i];
			} else {
				memset(&prev[i], 0, sizeof(prev[i]));
				memcpy(prev[i].uuid, want[i].uuid, sizeof(prev[i].uuid));
				prev[i].topo = want[i].topo;
			}
			prev[i].flags = 0;
			prev[i].prio = want[i].prio; /* the claim sets its own partition */
		}
		if (nvt_claim_move(nvt_rundir(), h, req, shown, prev, claim_timeout_ms(), want, why,
				   len)) {
			nvt_seg_close(h);
			return -1;
		}
	} else {
		for (int i = 0; i < shown; i++) {
			int g = nvt_seg_find_slot(h, want[i].uuid), fresh = g < 0;
			if (fresh)
				g = nvt_seg_free_slot_of(h);
			rc = nvt_seg_write(h, g, &want[i], fresh);
			if (rc)
				goto fail;
		}
	}
	if (attempt == 0) {
		first_n_old = n_old;
		memcpy(first_old, old, sizeof(old));
		memcpy(first_had, had, sizeof(had));
	}
	/* Written into the segment the task had before an exec to another user,
	 * while that user's shim made its own from it, maybe before this write:
	 * write the task's own segment too (it is the one -p and -l read now). */
	if (attempt < 3 && nvt_seg_superseded(nvt_rundir(), h)) {
		nvt_seg_close(h);
		rc = open_task(pid, 1, h);
		if (rc)
			goto fail;
		attempt++;
		goto again;
	}
	n_old = first_n_old;
	memcpy(old, first_old, sizeof(old));
	memcpy(had, first_had, sizeof(had));
	for (int i = 0; i < shown; i++) {
		written_slot[i] = nvt_seg_find_slot(h, want[i].uuid);
		if (changed && (!had[i] || old[i].state != want[i].state ||
				!nvt_set_equal(&old[i].tpcs, &want[i].tpcs)))
			*changed = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &written);
	for (int i = 0; i < shown; i++)
		if (nvt_seg_read(h, written_slot[i], &now[i], &st[i].s)) {
			rc = NVT_SEG_ECORRUPT;
			goto fail;
		}
	nvt_seg_close(h);
	for (int i = 0; i < shown; i++)
		warn_graph_stale(pid, st[i].s.graph_stale);
	check_sm_limit(pid, now, shown);
	if (o->json) {
		/* When the change was made, for measuring how soon launches follow. */
		if (top)
			printf("{\"version\":%d,", NVT_JSON_VERSION);
		else
			putchar('{');
		printf("\"pid\":%ld,\"written_monotonic_ns\":%lld,\"gpus\":[", (long)pid,
		       (long long)written.tv_sec * 1000000000LL + written.tv_nsec);
		for (int i = 0; i < shown; i++) {
			printf(i ? "," : "");
			json_gpu_start(stdout, now[i].uuid);
			putchar(',');
			json_partition("previous", had[i] ? &old[i] : NULL);
			putchar(',');
			json_partition("current", &now[i]);
			printf(",\"graph_kernels_stale\":%llu}", (unsigned long long)st[i].s.graph_stale);
		}
		printf(top ? "]}\n" : "]}");
		return 0;
	}
	for (int i = 0; i < shown; i++) {
		char gpu[96] = "";
		if (shown > 1 || n_old + new_slot > 1)
			slot_gpu_text(&now[i], gpu, sizeof(gpu));
		if (had[i])
			print_partition(o, pid, "current", gpu, &old[i]);
		else if (n_old == 0)
			print_partition(o, pid, "current", gpu, &(struct nvt_slot_view){0});
		print_partition(o, pid, "new", gpu, &now[i]);
	}
	return 0;
fail:
	{
		char text[160];
		snprintf(why, len, "%s", seg_error(rc, h, text, sizeof(text)));
	}
	nvt_seg_close(h);
	return -1;
}

int nvt_cmd_pid(const struct options *o, int argc, char **argv)
{
	const char *mask_text = argc == 2 ? argv[0] : (o->count || o->gpu_masks) ? "" : NULL;
	static struct nvt_slot_view parts[NVT_MAX_GPUS];
	pid_t pid = parse_pid(argv[argc - 1]);
	struct nvt_seg_handle h;
	char why[512];
	int rc, n_parts;

	if (o->count && o->exclude_running)
		claim_timeout_ms(); /* a bad value says so before anything changes */
	if (o->all_tasks)
		return nvt_cmd_all_tasks(o, pid, mask_text);
	rc = open_task(pid, mask_text != NULL || o->prio_given, &h);
	if (rc)
		cli_errx("failed to %s pid %ld's %s: %s", mask_text || o->prio_given ? "set" : "get",
			 (long)pid, !mask_text && o->prio_given ? "priority" : "partition",
			 seg_error(rc, &h, why, sizeof(why)));
	if (!mask_text && o->prio_given) {
		/* A priority alone: the task's own partitions stay. */
		n_parts = prio_plan(o, &h, parts, why, sizeof(why));
		if (n_parts < 0) {
			nvt_seg_close(&h);
			cli_errx("failed to set pid %ld's priority: %s", (long)pid, why);
		}
		if (pid_apply(o, &h, parts, n_parts, 1, NULL, why, sizeof(why)))
			cli_errx("failed to set pid %ld's priority: %s", (long)pid, why);
		if (o->prio != NVT_PRIO_NONE)
			prio_autostart();
		return EXIT_SUCCESS;
	}
	if (!mask_text) {
		rc = pid_show(o, &h, 1, why, sizeof(why));
		nvt_seg_close(&h);
		if (rc)
			cli_errx("failed to get pid %ld's partition: %s", (long)pid, why);
		return EXIT_SUCCESS;
	}
	n_parts = pid_plan(o, mask_text, &h, parts, why, sizeof(why));
	if (n_parts < 0)
		cli_errx("%s", why);
	if (pid_apply(o, &h, parts, n_parts, 1, NULL, why, sizeof(why)))
		cli_errx("failed to set pid %ld's partition: %s", (long)pid, why);
	if (o->prio_given && o->prio != NVT_PRIO_NONE)
		prio_autostart();
	return EXIT_SUCCESS;
}
