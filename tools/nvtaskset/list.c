/*
 * list.c - nvtaskset -l: list the tasks that run under nvtaskset, every user's
 * (partitions are public to read, as CPU affinity is).
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

/* The command line of pid, arguments joined by spaces; raw bytes (see terminal_text). */
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
	while (n && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
}

/* Width left for COMMAND in -l's table: the terminal's, or no limit. */
static int command_width(void)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_col < 60)
		return 0;
	return ws.ws_col - 45; /* PID, USER and TPCS take 45 columns */
}

/* What -l shows of one task. */
struct row {
	pid_t pid;
	uid_t uid;
	struct nvt_slot_view view;
	int applied;  /* launches use this partition */
	int refused;  /* the task refused it and runs on its previous one */
	char cmd[512];
};

static void print_json(const struct row *r, int first)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
	struct passwd *pw = getpwuid(r->uid);

	printf("%s{\"pid\":%ld,\"uid\":%lu,\"user\":", first ? "" : ",", (long)r->pid,
	       (unsigned long)r->uid);
	json_string(pw ? pw->pw_name : "");
	printf(",\"command\":");
	json_string(r->cmd);
	printf(",\"partitioned\":%s", r->view.state == NVT_SLOT_SET ? "true" : "false");
	if (r->view.state == NVT_SLOT_SET) {
		describe(&r->view.tpcs, list, mask);
		printf(",\"tpcs\":\"%s\",\"tpc_mask\":\"%s\",\"tpc_count\":%u", list, mask,
		       nvt_set_count(&r->view.tpcs));
	}
	printf(",\"applied\":%s}", r->applied ? "true" : "false");
}

static void print_text(const struct row *r, int width)
{
	char list[NVT_LIST_TEXT_MAX + 32], mask[NVT_MASK_TEXT_MAX], user[64];
	char raw[sizeof(r->cmd)], cmd[sizeof(r->cmd)];
	struct passwd *pw = getpwuid(r->uid);

	if (r->view.state == NVT_SLOT_SET) {
		describe(&r->view.tpcs, list, mask);
		/* In a terminal, keep rows on one line; piped output stays whole. */
		if (width && strlen(list) > 20) {
			char count[16];
			int n_keep = 20 - snprintf(count, sizeof(count), "...(%u)",
						   nvt_set_count(&r->view.tpcs));
			snprintf(list + n_keep, sizeof(list) - (size_t)n_keep, "%s", count);
		}
		/* Not yet used by a launch, or the program runs without the shim. */
		if (r->refused)
			strcat(list, " (refused)");
		else if (!r->applied)
			strcat(list, " (not applied)");
	} else {
		snprintf(list, sizeof(list), "all");
	}
	if (pw)
		terminal_text(pw->pw_name, user, sizeof(user));
	else
		snprintf(user, sizeof(user), "%lu", (unsigned long)r->uid);
	snprintf(raw, sizeof(raw), "%s", r->cmd);
	if (width && (int)strlen(raw) > width)
		snprintf(raw + width - 3, 4, "...");
	terminal_text(raw, cmd, sizeof(cmd));
	printf("%7ld  %-10s  %-20s  %s\n", (long)r->pid, user, list, cmd);
}

int nvt_cmd_list(const struct options *o)
{
	const char *rundir = nvt_rundir();
	int width = command_width(), shown = 0;
	pid_t *pids;
	int n = nvt_seg_tasks(rundir, 1, &pids);

	if (n < 0)
		err(EXIT_FAILURE, "cannot read %s", rundir);
	if (o->json)
		printf("{\"tasks\":[");
	else
		printf("%7s  %-10s  %-20s  %s\n", "PID", "USER", "TPCS", "COMMAND");
	for (int i = 0; i < n; i++) {
		struct nvt_seg_handle h;
		struct row r;
		uint64_t applied, rejected;
		char why[160];
		int rc = nvt_seg_open(rundir, pids[i], 0, &h);

		if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK || rc == NVT_SEG_EPERM)
			continue; /* gone meanwhile, or hidden by its user */
		if (rc) {
			warnx("pid %ld: %s", (long)pids[i], seg_error(rc, &h, why, sizeof(why)));
			continue;
		}
		memset(&r, 0, sizeof(r));
		if (nvt_seg_read(&h, 0, &r.view, &applied, &rejected)) {
			nvt_seg_close(&h);
			continue;
		}
		r.pid = pids[i];
		r.uid = h.task_uid;
		r.applied = applied == r.view.seq;
		r.refused = r.view.seq && rejected == r.view.seq;
		read_cmdline(pids[i], r.cmd, sizeof(r.cmd));
		if (o->json)
			print_json(&r, !shown);
		else
			print_text(&r, width);
		shown++;
		nvt_seg_close(&h);
	}
	if (o->json)
		printf("]}\n");
	free(pids);
	return EXIT_SUCCESS;
}
