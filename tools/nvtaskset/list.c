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
#include "slurmproc.h"

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

/* One GPU's partition of a task. */
struct gpu_part {
	struct nvt_slot_view view;
	int applied; /* launches use this partition */
	int refused; /* the task refused it and runs on its previous one */
};

/* What -l shows of one task: a partition per GPU it has a slot for. */
struct row {
	pid_t pid;
	uid_t uid;
	int n;
	struct gpu_part gpu[NVT_MAX_GPUS];
	char cmd[512];
	char slurm_step[NVT_SLURM_STEP_TEXT_MAX]; /* "JOB.STEP" of a Slurm task, else "" */
};

/* Fills r->slurm_step: the Slurm job step the task runs in, if any. */
static void slurm_column(struct row *r)
{
	struct nvt_slurm_step s;

	r->slurm_step[0] = '\0';
	if (nvt_slurm_step_of(r->pid, &s) == 0)
		nvt_slurm_step_format(&s, r->slurm_step, sizeof(r->slurm_step));
}

/* 1 if a task of pids runs in a Slurm job step: -l then has a JOBSTEP column. */
static int any_in_slurm(const pid_t *pids, int n)
{
	struct nvt_slurm_step s;

	for (int i = 0; i < n; i++)
		if (nvt_slurm_step_of(pids[i], &s) == 0)
			return 1;
	return 0;
}

static void print_json(const struct row *r, int first)
{
	char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX], uuid[NVT_UUID_TEXT_MAX];
	struct passwd *pw = getpwuid(r->uid);

	printf("%s{\"pid\":%ld,\"uid\":%lu,\"user\":", first ? "" : ",", (long)r->pid,
	       (unsigned long)r->uid);
	json_string(pw ? pw->pw_name : "");
	printf(",\"command\":");
	json_string(r->cmd);
	printf(",\"slurm_step\":");
	if (r->slurm_step[0])
		json_string(r->slurm_step);
	else
		printf("null");
	printf(",\"gpus\":[");
	for (int i = 0; i < r->n; i++) {
		const struct gpu_part *p = &r->gpu[i];
		int index = gpu_index_of(p->view.uuid);
		nvt_uuid_format(p->view.uuid, uuid);
		printf("%s{\"gpu\":", i ? "," : "");
		printf(index >= 0 ? "%d" : "null", index);
		printf(",\"uuid\":\"%s\",\"partitioned\":%s", uuid,
		       p->view.state == NVT_SLOT_SET ? "true" : "false");
		if (p->view.state == NVT_SLOT_SET) {
			describe(&p->view.tpcs, list, mask);
			printf(",\"tpcs\":\"%s\",\"tpc_mask\":\"%s\",\"tpc_count\":%u", list, mask,
			       nvt_set_count(&p->view.tpcs));
		}
		printf(",\"applied\":%s,\"refused\":%s}", p->applied ? "true" : "false",
		       p->refused ? "true" : "false");
	}
	printf("]}");
}

/* The TPCS column: "all", a list, or "GPU:list" for each GPU of the task;
 * a partition no launch uses yet says so. */
static void tpcs_column(const struct row *r, int width, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "all");
	for (int i = 0; i < r->n && used + NVT_LIST_TEXT_MAX + 40 < len; i++) {
		const struct gpu_part *p = &r->gpu[i];
		char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
		int index = r->n > 1 ? gpu_index_of(p->view.uuid) : -1;

		if (r->n > 1)
			used += (size_t)snprintf(buf + used, len - used, index >= 0 ? "%s%d:" : "%s?:",
						 i ? " " : "", index);
		if (p->view.state != NVT_SLOT_SET) {
			used += (size_t)snprintf(buf + used, len - used, "all");
			continue;
		}
		describe(&p->view.tpcs, list, mask);
		/* In a terminal, keep rows on one line; piped output stays whole. */
		if (width && strlen(list) > 20) {
			char count[16];
			int n_keep = 20 - snprintf(count, sizeof(count), "...(%u)",
						   nvt_set_count(&p->view.tpcs));
			snprintf(list + n_keep, sizeof(list) - (size_t)n_keep, "%s", count);
		}
		/* Not yet used by a launch, or the program runs without the shim. */
		used += (size_t)snprintf(buf + used, len - used, "%s%s", list,
					 p->refused ? " (refused)" : !p->applied ? " (not applied)" : "");
	}
}

static void print_text(const struct row *r, int width, int slurm)
{
	static char list[NVT_MAX_GPUS * (NVT_LIST_TEXT_MAX + 40)];
	char user[64], raw[sizeof(r->cmd)], cmd[sizeof(r->cmd)];
	struct passwd *pw = getpwuid(r->uid);

	tpcs_column(r, width, list, sizeof(list));
	if (pw)
		terminal_text(pw->pw_name, user, sizeof(user));
	else
		snprintf(user, sizeof(user), "%lu", (unsigned long)r->uid);
	snprintf(raw, sizeof(raw), "%s", r->cmd);
	if (width && (int)strlen(raw) > width)
		snprintf(raw + width - 3, 4, "...");
	terminal_text(raw, cmd, sizeof(cmd));
	if (slurm)
		printf("%7ld  %-10s  %-20s  %-12s  %s\n", (long)r->pid, user, list,
		       r->slurm_step[0] ? r->slurm_step : "-", cmd);
	else
		printf("%7ld  %-10s  %-20s  %s\n", (long)r->pid, user, list, cmd);
}

int nvt_cmd_list(const struct options *o)
{
	const char *rundir = nvt_rundir();
	int width = command_width(), shown = 0, slurm;
	pid_t *pids;
	int n = nvt_seg_tasks(rundir, 1, &pids);

	if (n < 0)
		err(EXIT_FAILURE, "cannot read %s", rundir);
	slurm = !o->json && any_in_slurm(pids, n);
	if (slurm && width)
		width = width > 74 ? width - 14 : 60;
	if (o->json)
		printf("{\"tasks\":[");
	else if (slurm)
		printf("%7s  %-10s  %-20s  %-12s  %s\n", "PID", "USER", "TPCS", "JOBSTEP", "COMMAND");
	else
		printf("%7s  %-10s  %-20s  %s\n", "PID", "USER", "TPCS", "COMMAND");
	for (int i = 0; i < n; i++) {
		struct nvt_seg_handle h;
		static struct row r;
		char why[160];
		int rc = nvt_seg_open(rundir, pids[i], 0, &h);

		if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK || rc == NVT_SEG_EPERM)
			continue; /* gone meanwhile, or hidden by its user */
		if (rc) {
			warnx("pid %ld: %s", (long)pids[i], seg_error(rc, &h, why, sizeof(why)));
			continue;
		}
		memset(&r, 0, sizeof(r));
		for (int g = 0; g < NVT_MAX_GPUS; g++) {
			struct gpu_part *p = &r.gpu[r.n];
			struct nvt_slot_status st;
			if (nvt_seg_read(&h, g, &p->view, &st) ||
			    nvt_uuid_is_zero(p->view.uuid))
				continue; /* free, or a writer died inside: -p tells */
			p->applied = st.applied == p->view.seq;
			p->refused = p->view.seq && st.rejected == p->view.seq;
			r.n++;
		}
		r.pid = pids[i];
		r.uid = h.task_uid;
		read_cmdline(pids[i], r.cmd, sizeof(r.cmd));
		slurm_column(&r);
		if (o->json)
			print_json(&r, !shown);
		else
			print_text(&r, width, slurm);
		shown++;
		nvt_seg_close(&h);
	}
	free(pids);
	if (o->json)
		printf("]}\n");
	return EXIT_SUCCESS;
}
