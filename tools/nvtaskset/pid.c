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
#include "task/task.h"
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

/* Graph kernels that keep the partition they were uploaded with (README: CUDA graphs). */
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

/* Prints what nvt_task_set_partition did to pid: lines, or (--json) its object
 * ("version" when top, the whole document). */
static void print_change(const struct options *o, pid_t pid, const struct nvt_task_change *c,
			 int top)
{
	for (int i = 0; i < c->n; i++)
		warn_graph_stale(pid, c->status[i].graph_stale);
	check_sm_limit(pid, c->now, c->n);
	if (o->json) {
		/* When the change was made, for measuring how soon launches follow. */
		if (top)
			printf("{\"version\":%d,", NVT_JSON_VERSION);
		else
			putchar('{');
		printf("\"pid\":%ld,\"written_monotonic_ns\":%lld,\"gpus\":[", (long)pid,
		       (long long)c->written.tv_sec * 1000000000LL + c->written.tv_nsec);
		for (int i = 0; i < c->n; i++) {
			printf(i ? "," : "");
			json_gpu_start(stdout, c->now[i].uuid);
			putchar(',');
			json_partition("previous", c->had[i] ? &c->before[i] : NULL);
			putchar(',');
			json_partition("current", &c->now[i]);
			printf(",\"graph_kernels_stale\":%llu}",
			       (unsigned long long)c->status[i].graph_stale);
		}
		printf(top ? "]}\n" : "]}");
		return;
	}
	for (int i = 0; i < c->n; i++) {
		char gpu[96] = "";
		if (c->n > 1 || c->n_before + c->new_slots > 1)
			slot_gpu_text(&c->now[i], gpu, sizeof(gpu));
		if (c->had[i])
			print_partition(o, pid, "current", gpu, &c->before[i]);
		else if (c->n_before == 0)
			print_partition(o, pid, "current", gpu, &(struct nvt_slot_view){0});
		print_partition(o, pid, "new", gpu, &c->now[i]);
	}
}

int pid_apply(const struct options *o, struct nvt_seg_handle *h, const struct nvt_slot_view *parts,
	      int n_parts, int top, int *changed, char *why, size_t len)
{
	static struct nvt_task_change c;
	struct nvt_task_claim claim = {o->count, o->strategy, 0};
	pid_t pid = h->pid;
	int rc;

	if (o->count && o->exclude_running)
		claim.timeout_ms = claim_timeout_ms();
	rc = nvt_task_set_partition(nvt_rundir(), h, parts, n_parts,
				    o->count && o->exclude_running ? &claim : NULL, &c, why, len);
	if (rc == NVT_TASK_ESEG) {
		char text[160];
		snprintf(why, len, "%s", seg_error(c.seg_err, h, text, sizeof(text)));
	}
	if (rc)
		return -1;
	if (changed && c.changed)
		*changed = 1;
	if (c.reopen_err == NVT_SEG_ENOPROC)
		warnx("warning: pid %ld ended while its partition was changed", (long)pid);
	else if (c.reopen_err) {
		char text[160];
		warnx("warning: pid %ld exec'd a program of another user while its partition was "
		      "changed, and its new control segment cannot be opened (%s): the change was "
		      "written to the one from before the exec, which its program may have copied or "
		      "not; see its partition with 'nvtaskset -p %ld'",
		      (long)pid, seg_error(c.reopen_err, h, text, sizeof(text)), (long)pid);
	}
	print_change(o, pid, &c, top);
	return 0;
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
	rc = nvt_task_open(nvt_rundir(), pid, mask_text != NULL, &h);
	if (rc)
		cli_errx("failed to %s pid %ld's partition: %s", mask_text ? "set" : "get", (long)pid,
			 seg_error(rc, &h, why, sizeof(why)));
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
	return EXIT_SUCCESS;
}
