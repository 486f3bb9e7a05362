/*
 * viewproc.c - what a view reads of its tasks' processes' memory: each task's command line
 * (and its program's name, the last part of its first word) and its Slurm job step
 * (slurmstepd's title up its parents, or the job's variables in its environment).
 *
 * Why in children, under a bound: /proc/PID/cmdline and /proc/PID/environ are read out of
 * the process's memory, under its memory map's lock, and its user can keep that lock held
 * for as long as she likes (one of her threads faulting on a mapped FUSE file of hers whose
 * read she never answers, another asking to map: every reader then queues behind them; a
 * reader's wait ends at SIGKILL on current kernels, not on every kernel). A read that answers
 * slowly does as much harm. The exporter reads its views under the lock every scrape waits
 * on; -l and top read one a run or a frame: one such read made here would stall every scrape
 * and every user's -l. So the reads are made in forked children (os/child.h's
 * nvt_child_batch), one batch for each user's tasks: a task whose read makes no progress for
 * STALL_MS while its child sleeps has stalled, and so has the task being read when its
 * user's batch has taken USER_BUDGET_MS; such a task's words are the kernel's copy of its name
 * (/proc/PID/comm, which reading never waits for), with no command line and no Slurm job.
 * After MAX_STALLS stalls, or once the budget is spent, the rest of that user's tasks are
 * named so too; other users' tasks are read as ever, so one user's tasks cost a view
 * USER_BUDGET_MS at most and take nobody else's command line. A task whose read stalled is
 * not read again for BACKOFF_S (told by its PID and start time): the exporter and top pay
 * for it once a while, not at every scrape or frame. At most NVT_CHILD_LEFT_MAX children are
 * left alive at once (where their waits do not end at SIGKILL); while that many live, every
 * task is named by /proc/PID/comm.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewint.h"
#include "os/child.h"
#include "os/proc.h"
#include "os/slurmproc.h"

/* How long a read may make no progress while its child sleeps, how many of one user's tasks'
 * reads may stall in one view and how long they may take in all, and for how long a task
 * whose read stalled is not read again. A read of /proc that returns takes microseconds; its
 * child is waited for while it is runnable (a loaded machine's), so these are long only
 * beside reads that wait. */
#define STALL_MS 200
#define MAX_STALLS 2
#define USER_BUDGET_MS 500
#define BACKOFF_S 60

/* The tasks whose reads stalled lately. */
static struct nvt_stalled stuck = NVT_STALLED_INIT(BACKOFF_S);

/* The task's command line, its words joined by spaces, and its program's name, from the n
 * bytes of /proc/PID/cmdline read into t->command (n <= 0: none could be read). */
static void take_command(struct nvt_view_task *t, ssize_t n)
{
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
	ssize_t n;

	*t = *todo[i];
	/* One read (each waits for the task's memory map's lock): its words, and whether the task
	 * is a slurmstepd. */
	n = nvt_proc_cmdline(t->pid, t->command, sizeof(t->command));
	if (nvt_slurmproc_step_titled(t->pid, n > 0 ? t->command : NULL, n > 0 ? (size_t)n : 0, &step) == 0) {
		snprintf(t->slurm_job, sizeof(t->slurm_job), "%lu", (unsigned long)step.job);
		snprintf(t->slurm_step, sizeof(t->slurm_step), "%s", step.step);
	}
	take_command(t, n);
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

/* Copies what a child read of task t (got) into t. */
static void take_words(struct nvt_view_task *t, const struct nvt_view_task *got)
{
	memcpy(t->command, got->command, sizeof(t->command));
	t->command_first = got->command_first;
	memcpy(t->program, got->program, sizeof(t->program));
	memcpy(t->slurm_job, got->slurm_job, sizeof(t->slurm_job));
	memcpy(t->slurm_step, got->slurm_step, sizeof(t->slurm_step));
}

/* Reads the words of the n tasks of todo (one user's) in one batch of children; named[k] set
 * for each task k of v whose words were read. */
static void read_batch(struct nvt_view *v, struct nvt_view_task **todo, size_t n, struct nvt_view_task *got,
		       unsigned char *done, pid_t *left, unsigned char *stalled, unsigned char *named)
{
	struct nvt_child_batch b = {.fn = read_words, .ctx = todo, .n = n, .result_size = sizeof(*got),
				    .results = got, .stall_ms = STALL_MS, .max_stalls = MAX_STALLS,
				    .budget_ms = USER_BUDGET_MS, .done = done, .left = left, .stalled = stalled};

	if (nvt_child_batch(&b) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (stalled[i])
			nvt_stalled_seen(&stuck, todo[i]->pid, todo[i]->start_time, 1);
		if (!done[i])
			continue;
		take_words(todo[i], &got[i]);
		named[todo[i] - v->tasks] = 1;
	}
}

void nvt_view_read_commands(struct nvt_view *v)
{
	size_t n = v->n_tasks + 1; /* (+ 1: no allocation of 0 bytes) */
	struct nvt_view_task **todo = malloc(n * sizeof(*todo)), *got = malloc(n * sizeof(*got));
	unsigned char *done = calloc(n, 1), *named = calloc(n, 1), *taken = calloc(n, 1), *stalled = calloc(n, 1);
	pid_t *left = calloc(n, sizeof(*left));

	if (todo && got && done && named && taken && stalled && left) {
		for (size_t k = 0; k < v->n_tasks; k++)
			taken[k] = nvt_stalled_seen(&stuck, v->tasks[k].pid, v->tasks[k].start_time, 0);
		/* One batch for each user's tasks, in the order of their first task. */
		for (size_t k = 0; k < v->n_tasks; k++) {
			size_t m = 0;
			if (taken[k])
				continue;
			for (size_t j = k; j < v->n_tasks; j++)
				if (!taken[j] && v->tasks[j].uid == v->tasks[k].uid) {
					taken[j] = 1;
					todo[m++] = &v->tasks[j];
				}
			read_batch(v, todo, m, got, done, left, stalled, named);
		}
	}
	for (size_t k = 0; k < v->n_tasks; k++)
		if (!named || !named[k])
			name_from_comm(&v->tasks[k]);
	free(todo);
	free(got);
	free(done);
	free(named);
	free(taken);
	free(stalled);
	free(left);
}
