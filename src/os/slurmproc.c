/*
 * slurmproc.c - the Slurm job step of a process, from /proc.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "slurmproc.h"
#include "nvtaskset.h"
#include "core/ptree.h"
#include "proc.h"
#include "sysutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far up the process tree a task's slurmstepd may be (task, shell, srun...). */
#define MAX_DEPTH 32

/* Parses decimal digits (no sign, no spaces) below 2^32. Returns the end, or NULL. */
static const char *parse_job(const char *p, const char *end, uint32_t *job)
{
	unsigned long long v = 0;
	const char *start = p;

	while (p < end && isdigit((unsigned char)*p) && p - start < 11)
		v = v * 10 + (unsigned)(*p++ - '0');
	if (p == start || v == 0 || v > UINT32_MAX)
		return NULL;
	*job = (uint32_t)v;
	return p;
}

/* A step id: letters, digits and '+' (a heterogeneous component), 1-23 of them. */
static int set_step(const char *p, size_t n, struct nvt_slurm_step *out)
{
	if (n == 0 || n >= sizeof(out->step))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '+')
			return -1;
	memcpy(out->step, p, n);
	out->step[n] = '\0';
	return 0;
}

int nvt_slurmproc_title_parse(const char *title, size_t len, struct nvt_slurm_step *out)
{
	static const char prefix[] = "slurmstepd: [";
	const char *end = title + len, *p, *close;
	struct nvt_slurm_step s;

	if (len < sizeof(prefix) || memcmp(title, prefix, sizeof(prefix) - 1))
		return -1;
	p = parse_job(title + sizeof(prefix) - 1, end, &s.job);
	if (!p || p >= end || *p != '.')
		return -1;
	p++;
	close = memchr(p, ']', (size_t)(end - p));
	if (!close || set_step(p, (size_t)(close - p), &s))
		return -1;
	*out = s;
	return 0;
}

int nvt_slurmproc_env_parse(const char *job, const char *step, struct nvt_slurm_step *out)
{
	struct nvt_slurm_step s;
	const char *end;

	if (!job)
		return -1;
	end = job + strlen(job);
	if (parse_job(job, end, &s.job) != end)
		return -1;
	if (set_step(step ? step : "batch", strlen(step ? step : "batch"), &s))
		return -1;
	*out = s;
	return 0;
}

void nvt_slurmproc_step_format(const struct nvt_slurm_step *s, char *buf, size_t len)
{
	snprintf(buf, len, "%lu.%s", (unsigned long)s->job, s->step);
}

int nvt_slurmproc_stepd(pid_t pid, struct nvt_slurm_step *out)
{
	char title[128];
	ssize_t n = nvt_proc_cmdline(pid, title, sizeof(title));

	if (n <= 0)
		return -1;
	return nvt_slurmproc_title_parse(title, (size_t)n, out);
}

/* The parent of pid, or 0. */
static pid_t parent_of(pid_t pid)
{
	struct nvt_stat st;

	return nvt_proc_stat(pid, &st) ? 0 : st.ppid;
}

int nvt_slurmproc_step_of(pid_t pid, struct nvt_slurm_step *out)
{
	char title[128];
	ssize_t n = pid > 1 ? nvt_proc_cmdline(pid, title, sizeof(title)) : 0;

	return nvt_slurmproc_step_titled(pid, n > 0 ? title : NULL, n > 0 ? (size_t)n : 0, out);
}

int nvt_slurmproc_step_titled(pid_t pid, const char *title, size_t len, struct nvt_slurm_step *out)
{
	char job[32], step[32];
	int has_step;
	pid_t p = pid;

	if (pid > 1 && title && nvt_slurmproc_title_parse(title, len, out) == 0)
		return 0;
	for (int depth = 1; p > 1 && depth < MAX_DEPTH; depth++)
		if ((p = parent_of(p)) > 1 && nvt_slurmproc_stepd(p, out) == 0)
			return 0;
	if (nvt_proc_env(pid, NVT_ENV_SLURM_JOB_ID, job, sizeof(job)))
		return -1;
	has_step = nvt_proc_env(pid, NVT_ENV_SLURM_STEP_ID, step, sizeof(step)) == 0;
	return nvt_slurmproc_env_parse(job, has_step ? step : NULL, out);
}
