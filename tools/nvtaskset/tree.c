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
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/grow.h"
#include "os/sysutil.h"
#include "task/task.h"

int task_tree_read(struct task_tree *t, int tidy)
{
	int n;

	memset(t, 0, sizeof(*t));
	t->n_tasks = nvt_seg_tasks_skipped(nvt_rundir(), tidy, &t->tasks, &t->skipped);
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

/* What kind of file mode's type is ("a FIFO"). */
static const char *file_kind(mode_t mode)
{
	return S_ISREG(mode)	? "a regular file"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISLNK(mode)	? "a symbolic link"
				: "a file that is no directory";
}

void task_tree_warn_skipped(const struct task_tree *t)
{
	const char *base = nvt_rundir();

	for (int i = 0; i < t->skipped.n && i < NVT_SEG_SKIPPED_KEPT; i++) {
		const struct nvt_seg_skip *k = &t->skipped.v[i];
		unsigned long uid = (unsigned long)k->uid, owner = (unsigned long)k->owner;
		unsigned mode = (unsigned)(k->mode & 07777);
		char where[NVT_RUNDIR_MAX + NVT_CONTAINER_ID_MAX + 32];

		/* A container's entries lie in its run directory, under base's containers. */
		if (k->container[0] && k->kind != NVT_SKIP_CONTAINER)
			snprintf(where, sizeof(where), "%s/%s/%s/%s", nvt_rundir(), NVT_CONTAINERS_DIR,
				 k->container, NVT_CONTAINER_RUN);
		else
			snprintf(where, sizeof(where), "%s", nvt_rundir());
		base = where;
		if (k->kind == NVT_SKIP_CONTAINER)
			warnx("warning: passed over %s/%s%s%s: not a directory of root's that only root "
			      "may write in (root may remove it)",
			      base, NVT_CONTAINERS_DIR, k->container[0] ? "/" : "", k->container);
		else if (k->kind == NVT_SKIP_CLOSED)
			warnx("warning: passed over %s: you may not look into it (mode %04o): the "
			      "container's tasks are not listed here, nor counted by your claims",
			      base, mode);
		else if (k->kind == NVT_SKIP_FOREIGN)
			warnx("warning: passed over %d files of %s/nvtaskset-%lu named for processes outside "
			      "its container: they name nobody",
			      k->count, base, uid);
		else if (k->kind == NVT_SKIP_LINK || k->kind == NVT_SKIP_NOT_DIR)
			warnx("warning: passed over %s/nvtaskset-%lu: %s of uid %lu, not a run directory "
			      "(root may remove it)",
			      base, uid, file_kind(k->mode), owner);
		else if (k->kind == NVT_SKIP_OWNER)
			warnx("warning: passed over %s/nvtaskset-%lu: a directory of uid %lu, not of uid "
			      "%lu (root may remove it)",
			      base, uid, owner, uid);
		else if (k->kind == NVT_SKIP_WRITABLE)
			warnx("warning: passed over %s/nvtaskset-%lu: others may write in it (mode %04o): "
			      "uid %lu's tasks there are not trusted, listed or counted",
			      base, uid, mode, uid);
		else if (k->kind == NVT_SKIP_UNREADABLE)
			warnx("warning: passed over %s/nvtaskset-%lu: uid %lu does not let you look into it "
			      "(mode %04o): its tasks are not listed here, nor counted by your claims",
			      base, uid, uid, mode);
		else
			warnx("warning: passed over %d files of %s/nvtaskset-%lu named for processes of "
			      "other PID namespaces, more than such processes run: uid %lu's tasks in "
			      "containers may be missing here",
			      k->count, base, uid, uid);
	}
	if (t->skipped.n > NVT_SEG_SKIPPED_KEPT)
		warnx("warning: and %d more entries of %s passed over", t->skipped.n - NVT_SEG_SKIPPED_KEPT,
		      nvt_rundir());
}

/* At most this many leftover containers' directories are named (then a count). */
#define LEFTOVERS_NAMED 16

void task_tree_warn_leftovers(void)
{
	char bad_name[NVT_CONTAINER_ID_MAX + 1], *gone, amount[64];
	struct nvt_seg_container *v;
	int bad, named = 0, n;

	/* Only root judges whether a container's first process ended (nvt_seg_container_gone). */
	if (geteuid() != 0)
		return;
	n = nvt_seg_container_list(nvt_rundir(), &v, &bad, bad_name, sizeof(bad_name));
	gone = n > 0 ? calloc((size_t)n, 1) : NULL;
	if (!gone || nvt_seg_container_gone(v, n, gone)) {
		free(gone);
		free(v);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct nvt_seg_container_size size;
		if (!gone[i] || named++ >= LEFTOVERS_NAMED ||
		    nvt_seg_container_size(nvt_rundir(), v[i].id, &size))
			continue;
		if (size.bytes >= 1024 * 1024)
			snprintf(amount, sizeof(amount), "%.1f MiB", (double)size.bytes / (1024 * 1024));
		else
			snprintf(amount, sizeof(amount), "%llu KiB",
				 (unsigned long long)(size.bytes + 1023) / 1024);
		warnx("warning: %s/%s/%s outlived its container (its first process, pid %ld, "
		      "ended): %s%s in %llu entries. Its poststop hook did not run; the next "
		      "container's hooks remove it, or root may (rm -r)",
		      nvt_rundir(), NVT_CONTAINERS_DIR, v[i].id, (long)v[i].init,
		      size.whole ? "" : "at least ", amount, (unsigned long long)size.entries);
	}
	if (named > LEFTOVERS_NAMED)
		warnx("warning: and %d more directories of %s/%s that outlived their containers",
		      named - LEFTOVERS_NAMED, nvt_rundir(), NVT_CONTAINERS_DIR);
	free(gone);
	free(v);
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
	pid_t *v = nvt_grow(s->v, s->n, &s->cap, sizeof(*v), 64);

	if (!v)
		cli_errx("out of memory");
	s->v = v;
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

/* What -a has done so far. */
struct tree_run {
	const struct options *o;
	const char *mask_text; /* NULL: show, or (--mem) give a memory limit alone */
	int change;            /* a MASK or --mem: write */
	int tasks, failed;     /* tasks shown or changed, and those of them that failed */
};

/* Reports that -p failed for pid: on stderr, and as its object in -a's document. */
static void report_failure(struct tree_run *run, pid_t pid, const char *why)
{
	char message[768];

	snprintf(message, sizeof(message), "failed to %s pid %ld's partition: %s",
		 run->change ? "set" : "get", (long)pid, why);
	warnx("%s", message);
	if (run->o->json)
		json_tasks_add_error(pid, message);
	run->failed++;
}

/*
 * -p (show, or apply run->mask_text) for one task of the tree; h is the
 * task's segment when the caller opened it (NULL: opened here). The change
 * is planned for this task's own GPUs (a descendant may use other GPUs than
 * the root). *changed is set if the task had another partition, or may have
 * (it failed). Returns 0, 1 if it failed (reported, as a task that could not
 * be changed), or -1 if the task is gone or runs without the shim now
 * (nothing printed).
 */
static int one_task(struct tree_run *run, pid_t pid, struct nvt_seg_handle *h, int *changed)
{
	static struct nvt_slot_view parts[NVT_MAX_GPUS];
	const struct options *o = run->o;
	int change = run->change;
	struct nvt_seg_handle opened;
	char why[512], text[160];
	int rc, n_parts = 0;

	if (!h) {
		rc = nvt_task_open(nvt_rundir(), pid, change, &opened);
		if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK)
			return -1; /* ended since the scan, or exec'd a program without the shim */
		run->tasks++;
		if (rc) {
			report_failure(run, pid, seg_error_pid(rc, &opened, pid, text, sizeof(text)));
			*changed = 1; /* it may hold the old partition: look again */
			return 1;
		}
		h = &opened;
	} else {
		run->tasks++;
	}
	if (!change) {
		rc = pid_show(o, h, 0, why, sizeof(why));
		nvt_seg_close(h);
	} else if (run->mask_text &&
		   (n_parts = pid_plan(o, run->mask_text, h, parts, why, sizeof(why))) < 0) {
		nvt_seg_close(h);
		rc = -1;
	} else {
		rc = pid_apply(o, h, parts, n_parts, 0, changed, why, sizeof(why));
	}
	if (rc) {
		/* pid_show and pid_apply add no object when they fail: the error
		 * object takes the place of the task's. */
		report_failure(run, pid, why);
		*changed = 1;
		return 1;
	}
	return 0;
}

/* MASK checked for the machine's GPUs (a root that is no task has none of its own). */
static void check_mask_on_machine(const struct options *o, const char *mask_text)
{
	static struct nvt_slot_view parts[NVT_MAX_GPUS];
	const struct nvt_gpus *gpus = machine_gpus();
	int task[NVT_MACHINE_GPUS], n = 0;
	char why[512];

	for (int g = 0; g < gpus->n && n < NVT_MACHINE_GPUS; g++)
		task[n++] = g;
	if (build_partitions(&o->part, mask_text, task, n, NULL, NULL, parts, why, sizeof(why)) < 0)
		cli_errx("%s", why);
}

/* -a's first step: PID itself, when it is a task (*root_task), else only checks. */
static void root_step(struct tree_run *run, pid_t root, int *root_task)
{
	static struct nvt_slot_view parts[NVT_MAX_GPUS];
	const struct options *o = run->o;
	const char *mask_text = run->mask_text;
	struct nvt_seg_handle h;
	int change = run->change, rc, changed = 0;
	char why[512];

	/* PID may be any process (a job's shell started without nvtaskset): the
	 * tasks below it are the ones to change. One that is gone ends the
	 * command (as -p). */
	rc = nvt_task_open(nvt_rundir(), root, change, &h);
	if (rc == NVT_SEG_ENOPROC)
		cli_errx("failed to %s pid %ld's partition: %s", change ? "set" : "get", (long)root,
			 seg_error(rc, &h, why, sizeof(why)));
	*root_task = rc != NVT_SEG_ENOTASK;
	if (change) {
		/* What is the same for every task, checked before anything changes. */
		machine_gpus();
		for (int a = 0; a < o->part.n_gpus; a++)
			resolve_gpu(o->part.gpus[a].gpu);
		/* MASK that does not fit PID's own GPUs is bad input: nothing is changed. */
		if (rc == 0 && mask_text && pid_plan(o, mask_text, &h, parts, why, sizeof(why)) < 0) {
			nvt_seg_close(&h);
			cli_errx("%s", why);
		}
		if (!*root_task && mask_text)
			check_mask_on_machine(o, mask_text);
	}
	if (o->json)
		json_tasks_begin();
	/*
	 * PID first, then its descendants, as taskset -a goes on with a process's
	 * other threads when one cannot be changed: a PID that cannot be changed
	 * (another user's, or a segment of another version) is reported, and its
	 * descendants are changed all the same.
	 */
	if (!*root_task)
		return;
	if (rc) {
		run->tasks++;
		report_failure(run, root, seg_error_pid(rc, &h, root, why, sizeof(why)));
	} else {
		one_task(run, root, &h, &changed);
	}
}

int nvt_cmd_all_tasks(const struct options *o, pid_t root, const char *mask_text)
{
	struct tree_run run = {o, mask_text, mask_text != NULL || o->mem.n, 0, 0};
	struct pid_set done = {0};
	int change = run.change, stable = 0, root_task;
	char error[768] = "";

	root_step(&run, root, &root_task);
	set_add(&done, root);
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
			snprintf(error, sizeof(error), "cannot list the tasks in %s: %s", nvt_rundir(),
				 strerror(errno));
			warnx("%s", error);
			stable = 1; /* nothing more can be done: not "kept starting tasks" */
			break;
		}
		n = descendants(&t, root, &done, &todo);
		task_tree_free(&t);
		for (size_t i = 0; i < n; i++) {
			set_add(&done, todo[i]);
			one_task(&run, todo[i], NULL, &changed);
		}
		stable = !changed || !change;
		free(todo);
	}
	if (!stable) {
		snprintf(error, sizeof(error), "pid %ld's tree kept starting tasks during the change; "
			 "tasks it started last may keep their previous partition: run the command "
			 "again", (long)root);
		warnx("%s", error);
	}
	if (!error[0] && !run.tasks) {
		snprintf(error, sizeof(error), "failed to %s pid %ld's partition: not running under "
			 "nvtaskset, nor is any process below it", change ? "set" : "get", (long)root);
		warnx("%s", error);
	}
	/* The exit status is 1: say why once more, in one line (the document's "error"). */
	if (!error[0] && run.failed) {
		snprintf(error, sizeof(error), "failed to %s the partition%s of %d of %d task%s",
			 change ? "set" : "get", run.failed == 1 ? "" : "s", run.failed, run.tasks,
			 run.tasks == 1 ? "" : "s");
		warnx("%s", error);
	}
	if (o->json)
		json_tasks_end(error[0] ? error : NULL);
	free(done.v);
	return error[0] ? EXIT_FAILURE : EXIT_SUCCESS;
}
