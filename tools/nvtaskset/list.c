/*
 * list.c - nvtaskset -l: list the tasks that run under nvtaskset.
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
#include <pwd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

static void read_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i + 1 < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = buf[i] ? '?' : '\0';
}

/* Width left for COMMAND in -l's table: the terminal's, or no limit. */
static int command_width(void)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_col < 60)
		return 0;
	return ws.ws_col - 45; /* PID, USER and TPCS take 45 columns */
}

/* The TPCS column: "all", a list, or "GPU:list" for each GPU of the task. */
static void task_partitions(const struct nvt_slot_view *views, int n, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "all");
	for (int v = 0; v < n && used + NVT_LIST_TEXT_MAX + 8 < len; v++) {
		int index = n > 1 ? gpu_index_of(views[v].uuid) : -1;
		if (n > 1)
			used += (size_t)snprintf(buf + used, len - used, index >= 0 ? "%s%d:" : "%s?:",
						 v ? " " : "", index);
		if (views[v].state == NVT_SLOT_SET)
			used += (size_t)nvt_format_list(&views[v].tpcs, buf + used, len - used);
		else
			used += (size_t)snprintf(buf + used, len - used, "all");
	}
}

/* One element of a task's "gpus" array. */
static void json_gpu_partition(const struct nvt_slot_view *view, int first)
{
	char uuid[NVT_UUID_TEXT_MAX], list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
	int index = gpu_index_of(view->uuid);

	nvt_uuid_format(view->uuid, uuid);
	printf("%s{\"gpu\":", first ? "" : ",");
	printf(index >= 0 ? "%d" : "null", index);
	printf(",\"uuid\":\"%s\",\"partitioned\":%s", uuid,
	       view->state == NVT_SLOT_SET ? "true" : "false");
	if (view->state == NVT_SLOT_SET) {
		describe(&view->tpcs, list, mask);
		printf(",\"tpcs\":\"%s\",\"tpc_mask\":\"%s\",\"tpc_count\":%u", list, mask,
		       nvt_set_count(&view->tpcs));
	}
	putchar('}');
}

int nvt_cmd_list(const struct options *o)
{
	static pid_t pids[MAX_TASKS];
	const char *rundir = nvt_rundir();
	int n = nvt_seg_scan(rundir, pids, MAX_TASKS), shown = 0, width = command_width();

	if (n < 0)
		err(EXIT_FAILURE, "cannot read %s", rundir);
	if (n > MAX_TASKS)
		n = MAX_TASKS;
	if (o->json)
		printf("{\"tasks\":[");
	else
		printf("%7s  %-10s  %-20s  %s\n", "PID", "USER", "TPCS", "COMMAND");
	for (int i = 0; i < n; i++) {
		struct nvt_seg_handle h;
		struct nvt_slot_view views[NVT_MAX_GPUS];
		char cmd[512], path[256], why[160];
		static char list[NVT_MAX_GPUS * (NVT_LIST_TEXT_MAX + 8)];
		struct passwd *pw;
		int rc = nvt_seg_open(rundir, pids[i], 0, &h), n_views = 0;
		unsigned count = 0;

		if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK) {
			/* Left behind by a task that died: tidy up what we may. */
			if (!nvt_seg_path(path, sizeof(path), rundir, pids[i]))
				unlink(path);
			continue;
		}
		if (rc == NVT_SEG_EPERM)
			continue; /* another user's task */
		if (rc) {
			warnx("pid %ld: %s", (long)pids[i], seg_error(rc, &h, why, sizeof(why)));
			continue;
		}
		for (int g = 0; g < NVT_MAX_GPUS; g++)
			if (nvt_slot_read(&h.seg->gpu[g], &views[n_views], 1000) == 0 &&
			    !nvt_uuid_is_zero(views[n_views].uuid))
				count += views[n_views++].state == NVT_SLOT_SET
						 ? nvt_set_count(&views[n_views - 1].tpcs)
						 : 0;
		read_cmdline(pids[i], cmd, sizeof(cmd));
		pw = getpwuid(h.owner);
		task_partitions(views, n_views, list, sizeof(list));
		if (o->json) {
			printf("%s{\"pid\":%ld,\"uid\":%lu,\"user\":", shown ? "," : "",
			       (long)pids[i], (unsigned long)h.owner);
			json_string(pw ? pw->pw_name : "");
			printf(",\"command\":");
			json_string(cmd);
			printf(",\"gpus\":[");
			for (int v = 0; v < n_views; v++)
				json_gpu_partition(&views[v], v == 0);
			printf("]}");
		} else {
			char user[16];
			if (pw)
				snprintf(user, sizeof(user), "%s", pw->pw_name);
			else
				snprintf(user, sizeof(user), "%lu", (unsigned long)h.owner);
			/* In a terminal, keep rows on one line; piped output stays whole. */
			if (width && (int)strlen(cmd) > width)
				snprintf(cmd + width - 3, 4, "...");
			if (width && strlen(list) > 20) {
				char suffix[16];
				int n_keep = 20 - snprintf(suffix, sizeof(suffix), "...(%u)", count);
				snprintf(list + n_keep, sizeof(list) - (size_t)n_keep, "%s", suffix);
			}
			printf("%7ld  %-10s  %-20s  %s\n", (long)pids[i], user, list, cmd);
		}
		shown++;
		nvt_seg_close(&h);
	}
	if (o->json)
		printf("]}\n");
	return EXIT_SUCCESS;
}

