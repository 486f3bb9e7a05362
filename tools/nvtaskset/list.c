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
		struct nvt_slot_view view;
		char cmd[512], list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX], path[256], why[160];
		struct passwd *pw;
		int rc = nvt_seg_open(rundir, pids[i], 0, &h);

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
		if (nvt_slot_read(&h.seg->gpu[0], &view, 1000)) {
			nvt_seg_close(&h);
			continue;
		}
		read_cmdline(pids[i], cmd, sizeof(cmd));
		pw = getpwuid(h.owner);
		if (view.state == NVT_SLOT_SET) {
			describe(&view.tpcs, list, mask);
		} else {
			snprintf(list, sizeof(list), "all");
			mask[0] = '\0';
		}
		if (o->json) {
			printf("%s{\"pid\":%ld,\"uid\":%lu,\"user\":", shown ? "," : "",
			       (long)pids[i], (unsigned long)h.owner);
			json_string(pw ? pw->pw_name : "");
			printf(",\"command\":");
			json_string(cmd);
			printf(",\"partitioned\":%s", view.state == NVT_SLOT_SET ? "true" : "false");
			if (view.state == NVT_SLOT_SET)
				printf(",\"tpcs\":\"%s\",\"tpc_mask\":\"%s\",\"tpc_count\":%u", list,
				       mask, nvt_set_count(&view.tpcs));
			putchar('}');
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
				char count[16];
				int n_keep = 20 - snprintf(count, sizeof(count), "...(%u)",
							   nvt_set_count(&view.tpcs));
				snprintf(list + n_keep, sizeof(list) - (size_t)n_keep, "%s", count);
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

