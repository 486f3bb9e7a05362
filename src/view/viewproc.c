/*
 * viewproc.c - what a view reads of its tasks' processes' memory: each task's command line
 * (and its program's name, the last part of its first word) and its Slurm job step
 * (slurmstepd's title up its parents, or the job's variables in its environment).
 *
 * Why in children, under a bound: /proc/PID/cmdline and /proc/PID/environ are read out of
 * the process's memory, and its user may put a FUSE file of hers there (mapped over its
 * arguments after exec) whose reads she never answers. Such a read waits for good, and once
 * her FUSE server has taken the request not even SIGKILL ends the waiting process. (A
 * userfaultfd region there does not stall it: a read through /proc fails at once on it,
 * measured on Linux 6.18.) The exporter reads its views under the lock every scrape waits
 * on; -l and top read one a run or a frame: one such read made here would stall every scrape
 * and every user's -l. So the reads are made in forked children (os/child.h's
 * nvt_child_batch): a task whose read makes no progress for STALL_MS while its child sleeps
 * has stalled; it costs a view STALL_MS, its words are the kernel's copy of its name
 * (/proc/PID/comm, which reading never waits for), with no command line and no Slurm job, and
 * at most MAX_STALLS tasks a view stall (the others left are named so too). A task whose
 * child is left stalled (alive, for its wait does not end) is not read again while that
 * child lives, told by its PID and start time: the exporter and top pay for it once, not at
 * every scrape or frame. At most NVT_CHILD_LEFT_MAX children are left at once; while that
 * many live, every task is named by /proc/PID/comm.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewint.h"
#include "os/child.h"
#include "os/proc.h"
#include "os/slurmproc.h"

/* How long a read may make no progress while its child sleeps, and how many tasks' reads may
 * stall in one view: a view that meets stalled reads is late by their sum at most. A read of
 * /proc that returns takes microseconds; its child is waited for while it is runnable
 * (a loaded machine's), so this is long only beside a read that waits. */
#define STALL_MS 200
#define MAX_STALLS 2

/* The tasks whose reads stalled, each with the child left in its read. */
static struct {
	pthread_mutex_t lock;
	struct {
		pid_t pid;
		uint64_t start_time;
		pid_t child;
	} task[NVT_CHILD_LEFT_MAX];
	int n;
} stuck = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The task's command line, its words joined by spaces, and its program's name. */
static void read_command(struct nvt_view_task *t)
{
	ssize_t n = nvt_proc_cmdline(t->pid, t->command, sizeof(t->command));
	const char *first, *slash;

	if (n <= 0) {
		t->command[0] = '\0';
		n = nvt_proc_comm(t->pid, t->program, sizeof(t->program));
		if (n <= 0)
			t->program[0] = '\0';
		t->program[strcspn(t->program, "\n")] = '\0';
		return;
	}
	if ((size_t)n >= sizeof(t->command))
		n = (ssize_t)sizeof(t->command) - 1;
	t->command[n] = '\0';
	first = t->command;
	t->command_first = strlen(first);
	slash = strrchr(first, '/');
	snprintf(t->program, sizeof(t->program), "%.*s", (int)sizeof(t->program) - 1,
		 slash && slash[1] ? slash + 1 : first);
	while (n && t->command[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (t->command[i] == '\0')
			t->command[i] = ' ';
}

/* In a child: the words of task i of the tasks to read (ctx) into result (a task). */
static void read_words(void *ctx, size_t i, void *result)
{
	struct nvt_view_task *const *todo = ctx;
	struct nvt_view_task *t = result;
	struct nvt_slurm_step step;

	*t = *todo[i];
	read_command(t);
	if (nvt_slurmproc_step_of(t->pid, &step) == 0) {
		snprintf(t->slurm_job, sizeof(t->slurm_job), "%lu", (unsigned long)step.job);
		snprintf(t->slurm_step, sizeof(t->slurm_step), "%s", step.step);
	}
}

/* The words of a task not read: its name as the kernel keeps it. */
static void name_from_comm(struct nvt_view_task *t)
{
	t->command[0] = '\0';
	t->command_first = 0;
	t->slurm_job[0] = t->slurm_step[0] = '\0';
	if (nvt_proc_comm(t->pid, t->program, sizeof(t->program)) <= 0)
		t->program[0] = '\0';
	t->program[strcspn(t->program, "\n")] = '\0';
}

/* 1 if task t's read stalled and its child still waits in it (under stuck.lock). */
static int stuck_locked(const struct nvt_view_task *t)
{
	for (int i = 0; i < stuck.n; i++)
		if (stuck.task[i].pid == t->pid && stuck.task[i].start_time == t->start_time)
			return 1;
	return 0;
}

/* Forgets the stalled reads whose children have ended (under stuck.lock). */
static void forget_ended_locked(void)
{
	for (int i = 0; i < stuck.n;)
		if (nvt_child_left_alive(stuck.task[i].child))
			i++;
		else
			stuck.task[i] = stuck.task[--stuck.n];
}

/* Remembers that task t's read stalled, its child left in it. */
static void remember(const struct nvt_view_task *t, pid_t child)
{
	pthread_mutex_lock(&stuck.lock);
	if (stuck.n < NVT_CHILD_LEFT_MAX && !stuck_locked(t)) {
		stuck.task[stuck.n].pid = t->pid;
		stuck.task[stuck.n].start_time = t->start_time;
		stuck.task[stuck.n++].child = child;
	}
	pthread_mutex_unlock(&stuck.lock);
}

void nvt_view_read_commands(struct nvt_view *v)
{
	size_t n = v->n_tasks + 1; /* (+ 1: no allocation of 0 bytes) */
	struct nvt_view_task **todo = malloc(n * sizeof(*todo)), *got = malloc(n * sizeof(*got));
	unsigned char *done = calloc(n, 1), *named = calloc(n, 1);
	pid_t *left = calloc(n, sizeof(*left));
	struct nvt_child_batch b = {.fn = read_words, .ctx = todo, .n = 0, .result_size = sizeof(*got),
				    .results = got, .stall_ms = STALL_MS, .max_stalls = MAX_STALLS,
				    .done = done, .left = left};

	if (todo && got && done && named && left) {
		pthread_mutex_lock(&stuck.lock);
		forget_ended_locked();
		for (size_t k = 0; k < v->n_tasks; k++)
			if (!stuck_locked(&v->tasks[k]))
				todo[b.n++] = &v->tasks[k];
		pthread_mutex_unlock(&stuck.lock);
		if (nvt_child_batch(&b) < 0)
			b.n = 0;
	}
	for (size_t i = 0; i < b.n; i++) {
		struct nvt_view_task *t = todo[i];
		if (left[i])
			remember(t, left[i]);
		if (!done[i])
			continue;
		memcpy(t->command, got[i].command, sizeof(t->command));
		t->command_first = got[i].command_first;
		memcpy(t->program, got[i].program, sizeof(t->program));
		memcpy(t->slurm_job, got[i].slurm_job, sizeof(t->slurm_job));
		memcpy(t->slurm_step, got[i].slurm_step, sizeof(t->slurm_step));
		named[t - v->tasks] = 1;
	}
	for (size_t k = 0; k < v->n_tasks; k++)
		if (!named || !named[k])
			name_from_comm(&v->tasks[k]);
	free(todo);
	free(got);
	free(done);
	free(named);
	free(left);
}
