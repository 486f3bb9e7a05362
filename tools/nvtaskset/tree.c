/*
 * tree.c - process trees for -a and -l: the tasks under nvtaskset and every
 * process's parent, read at one time; and nvtaskset -a -p, which shows or
 * changes a task and every task that descends from it (through processes
 * that are no tasks too), as taskset -a does for a process's threads.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sysutil.h"

int task_tree_read(struct task_tree *t, int tidy)
{
	int n;

	memset(t, 0, sizeof(*t));
	t->n_tasks = nvt_seg_tasks(nvt_rundir(), tidy, &t->tasks);
	if (t->n_tasks < 0)
		return -1;
	n = nvt_proc_links(&t->links);
	if (n < 0) {
		free(t->tasks);
		t->tasks = NULL;
		return -1;
	}
	t->n_links = (size_t)n;
	return 0;
}

void task_tree_free(struct task_tree *t)
{
	free(t->tasks);
	free(t->links);
	memset(t, 0, sizeof(*t));
}

/* PIDs already shown or changed, sorted when looked up. */
struct pid_set {
	pid_t *v;
	size_t n, cap;
};

static int by_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

static void set_add(struct pid_set *s, pid_t pid)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		pid_t *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			cli_errx("out of memory");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = pid;
	qsort(s->v, s->n, sizeof(*s->v), by_pid);
}

static int set_has(const struct pid_set *s, pid_t pid)
{
	return s->n && bsearch(&pid, s->v, s->n, sizeof(*s->v), by_pid);
}

/*
 * The tasks of t that descend from root and are not in done, parents before
 * their children, into out (malloc'd, the caller frees it). Returns how many.
 */
static size_t descendants(const struct task_tree *t, pid_t root, const struct pid_set *done, pid_t **out)
{
	size_t n = 0, n_out = 0, *order;
	pid_t *set, *up;
	int *depth;

	set = malloc((size_t)(t->n_tasks + 1) * sizeof(*set));
	up = malloc((size_t)(t->n_tasks + 1) * sizeof(*up));
	order = malloc((size_t)(t->n_tasks + 1) * sizeof(*order));
	depth = malloc((size_t)(t->n_tasks + 1) * sizeof(*depth));
	*out = malloc((size_t)(t->n_tasks + 1) * sizeof(**out));
	if (!set || !up || !order || !depth || !*out)
		cli_errx("out of memory");
	for (int i = 0; i < t->n_tasks; i++)
		if (nvt_links_descends(t->links, t->n_links, t->tasks[i], root))
			set[n++] = t->tasks[i]; /* ascending, as t->tasks */
	nvt_links_nearest(t->links, t->n_links, set, n, up);
	if (nvt_tree_order(set, up, n, order, depth))
		cli_errx("out of memory");
	for (size_t k = 0; k < n; k++)
		if (!set_has(done, set[order[k]]))
			(*out)[n_out++] = set[order[k]];
	free(set), free(up), free(order), free(depth);
	return n_out;
}

/* Reports that -p failed for pid: on stderr, and as its JSON object. */
static void report_failure(const struct options *o, pid_t pid, int change, const char *why)
{
	char message[512];

	snprintf(message, sizeof(message), "failed to %s pid %ld's partition: %s", change ? "set" : "get",
		 (long)pid, why);
	warnx("%s", message);
	if (o->json)
		json_error(pid, message);
}

/*
 * -p (show, or apply mask_text) for one task of the tree, after another
 * task's (its JSON object follows a comma); *changed set if the task had
 * another partition. The change is planned for this task's own GPUs (a
 * descendant may use other GPUs than the root). Returns 0, 1 if it failed (reported), or -1 if the task is gone
 * or runs without the shim now (nothing printed).
 */
static int one_task(const struct options *o, pid_t pid, const char *mask_text, int *changed)
{
	static struct nvt_slot_view parts[NVT_MAX_GPUS];
	int change = mask_text != NULL;
	struct nvt_seg_handle h;
	char why[256], text[160];
	int rc = nvt_seg_open(nvt_rundir(), pid, change, &h);

	if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK)
		return -1; /* ended since the scan, or exec'd a program without the shim */
	if (o->json)
		putchar(',');
	if (rc) {
		report_failure(o, pid, change, seg_error(rc, &h, text, sizeof(text)));
		*changed = 1; /* it may hold the old partition: look again */
		return 1;
	}
	if (change) {
		int n_parts = pid_plan(o, mask_text, &h, parts);
		rc = pid_apply(o, &h, parts, n_parts, 0, changed, why, sizeof(why));
	} else {
		rc = pid_show(o, &h, 0, why, sizeof(why));
		nvt_seg_close(&h);
	}
	if (rc)
		report_failure(o, pid, change, why);
	return rc ? 1 : 0;
}

int nvt_cmd_all_tasks(const struct options *o, pid_t root, const char *mask_text)
{
	static struct nvt_slot_view parts[NVT_MAX_GPUS];
	struct pid_set done = {0};
	struct nvt_seg_handle h;
	int change = mask_text != NULL, n_parts = 0, failed = 0, stable = 0;
	char why[256];
	int rc;

	/* The root must be a task: its partitions plan the change. */
	rc = nvt_seg_open(nvt_rundir(), root, change, &h);
	if (rc)
		cli_errx("failed to %s pid %ld's partition: %s", change ? "set" : "get", (long)root,
			 seg_error(rc, &h, why, sizeof(why)));
	if (change)
		n_parts = pid_plan(o, mask_text, &h, parts);
	if (o->json)
		printf("{\"version\":%d,\"tasks\":[", NVT_JSON_VERSION);
	rc = change ? pid_apply(o, &h, parts, n_parts, 0, NULL, why, sizeof(why))
		    : pid_show(o, &h, 0, why, sizeof(why));
	if (!change)
		nvt_seg_close(&h);
	set_add(&done, root);
	if (rc) {
		/* Nothing below it is changed: the tree would be left split. */
		report_failure(o, root, change, why);
		failed = 1;
		stable = 1;
	}
	/*
	 * Then its descendants, parents before children, and again until a look
	 * finds no new task that held another partition. A task started meanwhile
	 * copied its partition from an ancestor that we may not have written yet;
	 * but it made its segment (locked, with a header) before it read that
	 * ancestor's (the shim's init and fork handler do so). So a task that
	 * copied an old partition had its segment in place before our write to
	 * that ancestor, and the next look, which comes after that write, finds
	 * it; a task that no look finds read its ancestor after our writes. New
	 * tasks that already hold the new partition (a tree that keeps starting
	 * short-lived workers has some at every look) are written too, but call
	 * for no further look: their children copy what they hold. Showing needs
	 * one look. Bounded: a tree whose new tasks keep holding old partitions
	 * is reported.
	 */
	for (int round = 0; !stable && round < (change ? ALL_TASKS_ROUNDS : 1); round++) {
		struct task_tree t;
		pid_t *todo;
		int changed = 0;
		size_t n;

		if (task_tree_read(&t, 0)) {
			warn("cannot list the tasks in %s", nvt_rundir());
			failed = 1;
			break;
		}
		n = descendants(&t, root, &done, &todo);
		task_tree_free(&t);
		for (size_t i = 0; i < n; i++) {
			set_add(&done, todo[i]);
			if (one_task(o, todo[i], mask_text, &changed) > 0)
				failed = 1;
		}
		stable = !changed || !change;
		free(todo);
	}
	if (o->json)
		printf("]}\n");
	if (!stable) {
		warnx("pid %ld's tree kept starting tasks during the change; tasks it started last may "
		      "keep their previous partition: run the command again",
		      (long)root);
		failed = 1;
	}
	free(done.v);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
