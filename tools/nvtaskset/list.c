/*
 * list.c - nvtaskset -l: list the tasks that run under nvtaskset, every user's
 * (partitions are public to read, as CPU affinity is), as a tree: each task
 * under the nearest task it descends from, through processes that are no
 * tasks too (a shell without the shim, say). It tidies the run directories
 * (leftovers removed), then reads what runs through src/view, as top,
 * --metrics and the exporter read it, and prints it.
 * Over 500 lines on purpose: the rows, the tree, the overlaps and the two
 * outputs (text, JSON) of one sub-command share its private row type.
 *
 * To show one more thing about a task: a field of the view's task or slot
 * (src/view/view.h, read in view.c), an entry in columns[] for the text, and
 * a member in json_row (and docs/json.md). Starts queued with --wait hold no segment: they
 * are no rows, but lines after the table ("queued" in JSON).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <err.h>
#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "os/slurmproc.h"
#include "core/prio.h"
#include "core/yield.h"
#include "prio/agent.h"
#include "view/view.h"
#include "os/clock.h"
#include "core/memlimit.h"

/* What -l shows of one task: what the view read of it (src/view), and its place in the tree. */
struct row {
	const struct nvt_view_task *task;
	const struct nvt_view_slot *slot; /* its partition slots, slot[0 .. n - 1] */
	int n;
	pid_t pid;
	pid_t ppid;   /* its parent process, 0 when unknown */
	pid_t parent; /* the nearest task shown that it descends from, 0 when none */
	int depth;    /* tasks shown above it */
	char slurm_step[NVT_SLURM_STEP_TEXT_MAX]; /* "JOB.STEP" of a Slurm task, else "" */
	/* Where its TPCs overlap those of tasks of other trees (nvt_view_overlaps), by slot. */
	const struct nvt_view_overlap *overlap;
	size_t n_overlap;
};

/* The view the rows point into. */
static struct nvt_view view;

/* The UUID of slot p's GPU. */
static const uint8_t *uuid_of(const struct nvt_view_slot *p)
{
	return view.gpus[p->gpu].uuid;
}

/* The kernels a task launched on all its GPUs; -1 when it has no slot to count them in. */
static long long launches_of(const struct row *r)
{
	uint64_t sum = 0;

	for (int i = 0; i < r->n; i++)
		sum += r->slot[i].launches;
	return r->n ? (long long)(sum > LLONG_MAX ? LLONG_MAX : sum) : -1;
}

/* The row of the view's task k (t: the processes, for its parent). */
static void row_of(const struct task_tree *t, size_t k, struct row *r)
{
	const struct nvt_view_task *task = &view.tasks[k];

	memset(r, 0, sizeof(*r));
	r->task = task;
	r->slot = &view.slots[task->first_slot];
	r->n = task->n_slots;
	r->pid = task->pid;
	r->ppid = nvt_links_parent(t->links, t->n_links, task->pid);
	if (task->slurm_job[0])
		snprintf(r->slurm_step, sizeof(r->slurm_step), "%s.%s", task->slurm_job, task->slurm_step);
}

/* Reads the view (-l's, of every user's tasks), or ends the command. The GPUs the tasks' slots
 * name are taken first come: another user's segments naming more GPUs than a machine has
 * would leave the machine's out, so then it is read again with the machine's first (listed
 * only then: they are listed for the rows' GPU numbers anyway). */
static void read_view(void)
{
	char why[512];
	int failed = nvt_view_read(nvt_rundir(), NULL, &view, why, sizeof(why));

	if (!failed && view.gpus_past && machine_gpus_if_listed()) {
		nvt_view_free(&view);
		failed = nvt_view_read(nvt_rundir(), machine_gpus_if_listed(), &view, why, sizeof(why));
	}
	if (failed) {
		nvt_view_free(&view);
		cli_errx("%s", why);
	}
	if (view.gpus_past)
		warnx("warning: %zu slot%s of tasks on more GPUs than a machine has (%d) not shown",
		      view.gpus_past, view.gpus_past == 1 ? "" : "s", NVT_MACHINE_GPUS);
}

/* Says why each task whose segment the view could not read is left out. */
static void warn_unread(void)
{
	for (size_t i = 0; i < view.n_unread; i++) {
		const struct nvt_view_unread *u = &view.unread[i];
		struct nvt_seg_handle h;
		char why[160];
		memset(&h, 0, sizeof(h));
		h.found_version = u->found_version;
		errno = u->sys_errno;
		warnx("pid %ld: %s", (long)u->pid, seg_error(u->seg_err, &h, why, sizeof(why)));
	}
}

/* ---- JSON (docs/json.md) --------------------------------------------------- */

/* Milliseconds from then to now (0 if then is later or unknown). */
static double ms_since(uint64_t then)
{
	uint64_t now = nvt_clock_ns();

	return then && now > then ? (double)(now - then) / 1e6 : 0;
}

/* "yield" of a GPU: how the task yields to higher ones, and what it does now. */
static struct json_object *json_yield(const struct nvt_view_slot *p)
{
	struct json_object *y = jsonout_object();
	char ways[96];

	if (nvt_yield_format(&p->prio, ',', ways, sizeof(ways)) < 0)
		snprintf(ways, sizeof(ways), "?");
	jsonout_add_text(y, "ways", ways);
	jsonout_add_text(y, "state", nvt_yield_state_name(p->yield.state));
	jsonout_add_number(y, "since_ms", "%.1f", ms_since(p->yield.since_ns));
	jsonout_add_uint(y, "watching", p->yield.watching);
	jsonout_add_number(y, "held_ms", "%.1f", (double)p->yield.held_ns / 1e6);
	jsonout_add_uint(y, "holds", p->yield.holds);
	jsonout_add(y, "client_priority",
		    p->act.client_prio ? jsonout_uint(p->act.client_prio - 1u) : NULL);
	jsonout_add_uint(y, "channel_groups", p->yield.groups);
	jsonout_add_uint_or_null(y, "timeslice_us", p->yield.timeslice_us);
	jsonout_add_uint(y, "driver_status", p->yield.rm_status);
	return y;
}

/* "requests" of a GPU: the task's requests as its shim follows them. */
static struct json_object *json_requests(const struct nvt_view_slot *p)
{
	const struct nvt_slot_activity *a = &p->act;
	struct json_object *r = jsonout_object();

	jsonout_add_bool(r, "tracked", a->flags & NVT_ACT_TRACKED);
	jsonout_add_uint(r, "count", a->begins);
	jsonout_add_bool(r, "busy", a->begins != a->ends);
	jsonout_add_number(r, "period_ms", "%.3f", (double)a->period_ns / 1e6);
	jsonout_add_number(r, "busy_ms", "%.3f", (double)a->busy_ns / 1e6);
	jsonout_add_number(r, "duty", "%.3f", nvt_act_duty_pm(a) / 1000.0);
	jsonout_add_bool(r, "periodic", nvt_act_periodic(a));
	return r;
}

/* "priority", "own_tpcs", "mode", "guard", "lend", "yield", "requests" of a GPU
 * (docs/json.md): nulls without a priority. */
static void json_prio_fields(struct json_object *gpu, const struct nvt_view_slot *p)
{
	static const char *const keys[] = {"priority", "own_tpcs", "mode", "guard",
					   "lend",     "yield",    "requests"};
	char list[NVT_LIST_TEXT_MAX];

	if (p->prio.prio == NVT_PRIO_NONE) {
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			jsonout_add(gpu, keys[k], NULL);
		return;
	}
	nvt_format_list(&p->own, list, sizeof(list));
	jsonout_add_text(gpu, "priority", nvt_prio_name(p->prio.prio));
	jsonout_add_text(gpu, "own_tpcs", list);
	jsonout_add_text(gpu, "mode", p->lending ? "lending" : nvt_prio_mode_name(p->prio.mode));
	jsonout_add_uint_or_null(gpu, "guard", p->prio.guard);
	jsonout_add_bool(gpu, "lend", !(p->prio.flags & NVT_PRIOF_NO_LEND));
	jsonout_add(gpu, "yield", json_yield(p));
	jsonout_add(gpu, "requests", json_requests(p));
}

/* The view's index of slot i of row r. */
static size_t slot_index(const struct row *r, int i)
{
	return r->task->first_slot + (size_t)i;
}

/* Row r's overlap record for its slot i, or NULL. */
static const struct nvt_view_overlap *overlap_of(const struct row *r, int i)
{
	for (size_t k = 0; k < r->n_overlap; k++)
		if (r->overlap[k].slot == slot_index(r, i))
			return &r->overlap[k];
	return NULL;
}

/* "overlap_pids" of slot i of row r: the tasks whose TPCs its own overlap, ascending, the first
 * NVT_VIEW_OVERLAP_NAMED ("overlap_count" counts them all). */
static struct json_object *json_overlap_pids(const struct nvt_view_overlap *o)
{
	struct json_object *pids = jsonout_array();
	size_t named = !o ? 0 : o->n_others < NVT_VIEW_OVERLAP_NAMED ? o->n_others : NVT_VIEW_OVERLAP_NAMED;

	for (size_t k = 0; k < named; k++)
		jsonout_append(pids, jsonout_int(view.tasks[view.slots[o->others[k]].task].pid));
	return pids;
}

/* Task r's object in -l's "tasks". */
static struct json_object *json_row(const struct row *r)
{
	long long launches = launches_of(r);
	struct json_object *task = jsonout_object(), *gpus = jsonout_array();

	jsonout_add_int(task, "pid", r->pid);
	jsonout_add_pid(task, "ppid", r->ppid);
	jsonout_add_pid(task, "parent", r->parent);
	jsonout_add_int(task, "depth", r->depth);
	jsonout_add_uint(task, "uid", r->task->uid);
	jsonout_add_text(task, "user", r->task->user_named ? r->task->user : NULL);
	jsonout_add_text(task, "command", r->task->command[0] ? r->task->command : NULL);
	jsonout_add(task, "launches", launches >= 0 ? jsonout_int(launches) : NULL);
	jsonout_add_text(task, "slurm_step", r->slurm_step[0] ? r->slurm_step : NULL);
	jsonout_add_text(task, "container", r->task->container[0] ? r->task->container : NULL);
	jsonout_add_bool(task, "overlaps", r->n_overlap > 0);
	jsonout_add(task, "gpus", gpus);
	for (int i = 0; i < r->n; i++) {
		const struct nvt_view_slot *p = &r->slot[i];
		struct json_object *gpu = json_gpu_object(uuid_of(p));
		jsonout_append(gpus, gpu);
		jsonout_add_partition(gpu, p->partitioned, &p->current);
		jsonout_add_bool(gpu, "applied", p->applied);
		jsonout_add_bool(gpu, "refused", p->refused);
		jsonout_add_uint(gpu, "launches", p->launches);
		jsonout_add_uint(gpu, "memory_bytes", p->mem_used);
		jsonout_add_uint_or_null(gpu, "memory_limit_bytes", p->mem_limit);
		jsonout_add(gpu, "overlap_pids", json_overlap_pids(overlap_of(r, i)));
		jsonout_add_uint(gpu, "overlap_count", overlap_of(r, i) ? overlap_of(r, i)->n_others : 0);
		json_prio_fields(gpu, p);
	}
	return task;
}

/* ---- Text: one row per task, its columns, then COMMAND --------------------- */

/* Writes one column of row r; terminal: keep it short (in a terminal). */
typedef void (*column_text)(const struct row *r, int terminal, char *buf, size_t len);

/* The columns a TPC list may take in a terminal (list_room_for: what the terminal leaves). */
static int list_room = 20;

/* In a terminal, a list of TPCs (set, as text in list) longer than list_room columns keeps its
 * start, up to a comma, and says how many TPCs it names, so that rows stay on one line; piped
 * output stays whole. */
static void shorten_list(char *list, size_t len, const struct nvt_tpcset *set, int terminal)
{
	char count[16];
	int n_keep;

	if (!terminal || (int)strlen(list) <= list_room)
		return;
	n_keep = list_room - snprintf(count, sizeof(count), "...(%u)", nvt_set_count(set));
	while (n_keep > 1 && list[n_keep] != ',')
		n_keep--; /* (whole items: no number cut in two) */
	snprintf(list + n_keep, len - (size_t)n_keep, "%s", count);
}

static void col_pid(const struct row *r, int terminal, char *buf, size_t len)
{
	(void)terminal;
	snprintf(buf, len, "%ld", (long)r->pid);
}

static void col_ppid(const struct row *r, int terminal, char *buf, size_t len)
{
	(void)terminal;
	if (r->ppid > 0)
		snprintf(buf, len, "%ld", (long)r->ppid);
	else
		snprintf(buf, len, "-");
}

static void col_user(const struct row *r, int terminal, char *buf, size_t len)
{
	(void)terminal;
	if (r->task->user_named)
		terminal_text(r->task->user, buf, len);
	else
		snprintf(buf, len, "%lu", (unsigned long)r->task->uid);
}

/* The GPUs' numbers ("0", "0,1"; "?" for one not on this machine's list), "-" for none. */
static void col_gpu(const struct row *r, int terminal, char *buf, size_t len)
{
	size_t used = 0;

	(void)terminal;
	snprintf(buf, len, "-");
	for (int i = 0; i < r->n && used + 8 < len; i++) {
		int index = gpu_index_of(uuid_of(&r->slot[i]));
		used += (size_t)snprintf(buf + used, len - used, index >= 0 ? "%s%d" : "%s?",
					 i ? "," : "", index);
	}
}

static void col_launches(const struct row *r, int terminal, char *buf, size_t len)
{
	long long n = launches_of(r);

	(void)terminal;
	if (n >= 0)
		snprintf(buf, len, "%lld", n);
	else
		snprintf(buf, len, "-");
}

/* "all", a list, or "GPU:list" for each GPU of the task; a partition no
 * launch has used yet, or that the task refused, says so. */
static void col_tpcs(const struct row *r, int terminal, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "all");
	for (int i = 0; i < r->n && used + NVT_LIST_TEXT_MAX + 40 < len; i++) {
		const struct nvt_view_slot *p = &r->slot[i];
		char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
		int index = r->n > 1 ? gpu_index_of(uuid_of(p)) : -1;

		if (r->n > 1)
			used += (size_t)snprintf(buf + used, len - used, index >= 0 ? "%s%d:" : "%s?:",
						 i ? " " : "", index);
		if (!p->partitioned) {
			used += (size_t)snprintf(buf + used, len - used, "all");
			continue;
		}
		describe(&p->current, list, mask);
		shorten_list(list, sizeof(list), &p->current, terminal);
		/* Not yet used by a launch, or the program runs without the shim;
		 * with several GPUs, on which. */
		used += (size_t)snprintf(buf + used, len - used, "%s", list);
		if (p->refused || !p->applied) {
			char on[16] = "";
			if (r->n > 1)
				snprintf(on, sizeof(on), index >= 0 ? "GPU %d " : "GPU ? ", index);
			used += (size_t)snprintf(buf + used, len - used, " (%s%s)", on,
						 p->refused ? "refused" : "not applied");
		}
	}
}

/* Each GPU's priority, mode or own partition ("-" without a priority), as col_tpcs lists GPUs. */
static void prio_column(const struct row *r, int what, int terminal, char *buf, size_t len)
{
	size_t used = 0;

	snprintf(buf, len, "-");
	for (int i = 0; i < r->n && used + NVT_LIST_TEXT_MAX + 16 < len; i++) {
		const struct nvt_view_slot *p = &r->slot[i];
		char list[NVT_LIST_TEXT_MAX];
		const char *text = list;
		if (p->prio.prio == NVT_PRIO_NONE)
			text = "-";
		else if (what == 0)
			text = nvt_prio_name(p->prio.prio);
		else if (what == 1 && p->yield.state != NVT_YS_NONE && p->prio.mode == NVT_MODE_OWN)
			snprintf(list, sizeof(list), "%s:%.0fms", nvt_yield_state_name(p->yield.state),
				 ms_since(p->yield.since_ns)); /* its shim holds it back, since when */
		else if (what == 1 && p->yield.timeslice_us && p->prio.mode == NVT_MODE_OWN)
			snprintf(list, sizeof(list), "slice:%uus", (unsigned)p->yield.timeslice_us);
		else if (what == 1)
			text = p->lending ? "lending" : nvt_prio_mode_name(p->prio.mode);
		else {
			nvt_format_list(&p->own, list, sizeof(list));
			shorten_list(list, sizeof(list), &p->own, terminal);
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "", text);
	}
}

static void col_prio(const struct row *r, int terminal, char *buf, size_t len)
{
	prio_column(r, 0, terminal, buf, len);
}

static void col_mode(const struct row *r, int terminal, char *buf, size_t len)
{
	prio_column(r, 1, terminal, buf, len);
}

static void col_own(const struct row *r, int terminal, char *buf, size_t len)
{
	prio_column(r, 2, terminal, buf, len);
}

/* What the task holds of GPU memory and its limit, on each GPU as col_gpu lists them
 * ("1.2G/4G", "48M/-" without a limit, "-": nothing and no limit). */
static void col_mem(const struct row *r, int terminal, char *buf, size_t len)
{
	size_t used = 0;

	(void)terminal;
	snprintf(buf, len, "-");
	for (int i = 0; i < r->n && used + NVT_MEM_USAGE_TEXT_MAX + 1 < len; i++) {
		char text[NVT_MEM_USAGE_TEXT_MAX];
		nvt_memlimit_usage(r->slot[i].mem_used, r->slot[i].mem_limit, text, sizeof(text));
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "", text);
	}
}

/* The Slurm job step the task runs in (src/os/slurmproc.h), "-" for none. */
static void col_jobstep(const struct row *r, int terminal, char *buf, size_t len)
{
	(void)terminal;
	snprintf(buf, len, "%s", r->slurm_step[0] ? r->slurm_step : "-");
}

/* The container the task runs in (the start of its id, as podman ps and docker ps
 * show it), "-" for none. */
static void col_container(const struct row *r, int terminal, char *buf, size_t len)
{
	(void)terminal;
	snprintf(buf, len, "%s", r->task->container[0] ? r->task->container : "-");
}

/* The columns before COMMAND; width < 0: left-aligned, as printf's. A
 * column marked SLURM is shown only when a task runs in a Slurm job step,
 * one marked PRIO only when a task has a priority, one marked CONTAINER
 * only when a task runs in a container, one marked MEM only when a task
 * holds GPU memory or has a limit. */
#define SLURM 1
#define PRIO 2
#define CONTAINER 3
#define MEM 4
static const struct column {
	const char *name;
	int width;
	column_text text;
	int only;
} columns[] = {
	{"PID", 7, col_pid, 0},        {"PPID", 7, col_ppid, 0},         {"USER", -10, col_user, 0},
	{"GPU", -5, col_gpu, 0},       {"LAUNCHES", 8, col_launches, 0}, {"MEM", -9, col_mem, MEM},
	{"PRIO", -6, col_prio, PRIO},
	{"MODE", -9, col_mode, PRIO},  {"OWN", -12, col_own, PRIO},      {"TPCS", -20, col_tpcs, 0},
	{"JOBSTEP", -12, col_jobstep, SLURM}, {"CONTAINER", -12, col_container, CONTAINER},
};
#define N_COLUMNS (sizeof(columns) / sizeof(columns[0]))

/* Each column's width: its default, or its widest text (fit_columns), so that the columns stay
 * aligned, piped or not. */
static int widths[N_COLUMNS];

/* Show the Slurm columns: some task listed runs in a Slurm job step. */
static int slurm_columns;
/* Show the priority columns: some task listed has a priority. */
static int prio_columns;
/* Show the container column: some task listed runs in a container. */
static int container_columns;
/* Show the memory column: some task listed holds GPU memory or has a limit. */
static int mem_columns;

static int column_shown(size_t c)
{
	return !columns[c].only || (columns[c].only == SLURM && slurm_columns) ||
	       (columns[c].only == PRIO && prio_columns) ||
	       (columns[c].only == CONTAINER && container_columns) ||
	       (columns[c].only == MEM && mem_columns);
}

/* For each user whose agent does not run (root, and users of tasks with a priority): the
 * last line its log holds (an agent a command started says there why it ended or could not
 * start); with doc, as its "agent_logs". */
static void print_agent_logs(struct json_object *doc)
{
	struct json_object *logs = doc ? jsonout_array() : NULL;
	char text[sizeof(view.agents[0].log_last)];

	if (doc)
		jsonout_add(doc, "agent_logs", logs);
	for (int i = 0; i < view.n_agents; i++) {
		const struct nvt_view_agent *a = &view.agents[i];
		if (a->pid || !a->log_last[0])
			continue;
		if (doc) {
			struct json_object *log = jsonout_object();
			jsonout_append(logs, log);
			jsonout_add_uint(log, "uid", a->uid);
			jsonout_add_text(log, "last", a->log_last);
		} else {
			terminal_text(a->log_last, text, sizeof(text));
			printf("priority agent of uid %lu: not running; its log ends: %s\n",
			       (unsigned long)a->uid, text);
		}
	}
}

/* Agent a as an object of "agents", with the tasks it says it cannot follow. */
static struct json_object *json_agent(const struct nvt_view_agent *a)
{
	struct json_object *agent = jsonout_object(), *unfollowed = jsonout_array();

	jsonout_add_uint(agent, "uid", a->uid);
	jsonout_add_int(agent, "pid", a->pid);
	jsonout_add(agent, "unfollowed", unfollowed);
	for (int i = 0; i < a->n_notes; i++) {
		struct json_object *note = jsonout_object();
		jsonout_append(unfollowed, note);
		jsonout_add_int(note, "pid", a->notes[i].pid);
		jsonout_add_text(note, "why", nvt_agent_why_word(a->notes[i].why));
	}
	return agent;
}

/* The priority agents that run (the view's: root's, and those of the users of tasks with a
 * priority); with doc, as its "agents" (and "agent_logs"). */
static void print_agents(struct json_object *doc)
{
	struct json_object *agents = doc ? jsonout_array() : NULL;
	int printed = 0, wanted = 0;

	if (doc)
		jsonout_add(doc, "agents", agents);
	for (int i = 0; i < view.n_agents; i++) {
		const struct nvt_view_agent *a = &view.agents[i];
		/* Only a task that yields by the agent's guard needs one (docs/priorities.md). */
		wanted |= a->wanted;
		if (!a->pid)
			continue;
		if (doc) {
			jsonout_append(agents, json_agent(a));
		} else {
			printf("priority agent: pid %ld (uid %lu)\n", (long)a->pid, (unsigned long)a->uid);
			/* The tasks with a priority it says it cannot follow or change. */
			for (int k = 0; k < a->n_notes; k++)
				printf("priority agent (uid %lu) cannot follow pid %ld: %s\n",
				       (unsigned long)a->uid, (long)a->notes[k].pid,
				       nvt_agent_why_text(a->notes[k].why));
		}
		printed = 1;
	}
	if (!doc && !printed && wanted)
		printf("priority agent: none runs; tasks started with --yield guard keep the "
		       "partitions they have\n");
	print_agent_logs(doc);
}

/* The terminal's width, or 0: not a terminal (piped output, no limit). */
static int terminal_width(void)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 0;
	return ws.ws_col;
}

/* widths: each shown column as wide as its default and its widest text in rows (n). */
static void fit_columns(const struct row *rows, size_t n, int terminal)
{
	static char text[NVT_MAX_GPUS * (NVT_LIST_TEXT_MAX + 40)];

	for (size_t c = 0; c < N_COLUMNS; c++) {
		int w = abs(columns[c].width);
		for (size_t k = 0; k < n && column_shown(c); k++) {
			int used;
			columns[c].text(&rows[k], terminal, text, sizeof(text));
			used = (int)strlen(text);
			w = used > w ? used : w;
		}
		widths[c] = columns[c].width < 0 ? -w : w;
	}
}

/* list_room on a terminal of cols columns (0: piped): what the other shown columns at their
 * default widths and 20 columns of COMMAND leave, shared by the TPC lists (TPCS, and OWN with
 * priorities); at least 20 (a 200-column terminal shows lists of 100 and more whole). */
static void list_room_for(int cols)
{
	int fixed = 20, lists = 0;

	for (size_t c = 0; c < N_COLUMNS; c++) {
		if (!column_shown(c))
			continue;
		if (columns[c].text == col_tpcs || columns[c].text == col_own)
			lists++;
		else
			fixed += abs(columns[c].width);
		fixed += 2;
	}
	list_room = cols && lists && cols - fixed > 20 * lists ? (cols - fixed) / lists : 20;
}

/* Width left for COMMAND on a terminal of cols columns, or 0: no limit (piped output). */
static int command_width(int cols)
{
	int fixed = 0;

	for (size_t c = 0; c < N_COLUMNS; c++)
		if (column_shown(c))
			fixed += abs(widths[c]) + 2;
	if (!cols)
		return 0;
	/* A narrow terminal still gets short commands (at least 20 columns). */
	return cols > fixed + 20 ? cols - fixed : 20;
}

static void print_header(void)
{
	for (size_t c = 0; c < N_COLUMNS; c++)
		if (column_shown(c))
			printf("%*s  ", widths[c], columns[c].name);
	printf("COMMAND\n");
}

/*
 * Fits cmd (its program cmd0_len bytes long) into room columns: the
 * program's directory goes first, as ps's COMMAND does (its name says what
 * runs; a common prefix such as /home/me/proj/build/ made every row alike),
 * then the end is cut with "...".
 */
static void shorten_command(char *cmd, size_t cmd0_len, int room)
{
	char *slash = memrchr(cmd, '/', cmd0_len);

	if (slash)
		memmove(cmd, slash + 1, strlen(slash + 1) + 1);
	if ((int)strlen(cmd) > room)
		snprintf(cmd + room - 3, 4, "...");
}

static void print_text(const struct row *r, int width)
{
	static char text[NVT_MAX_GPUS * (NVT_LIST_TEXT_MAX + 40)];
	char raw[sizeof(r->task->command)], cmd[sizeof(r->task->command)], indent[64] = "";
	int room = width;

	for (size_t c = 0; c < N_COLUMNS; c++) {
		if (!column_shown(c))
			continue;
		columns[c].text(r, width > 0, text, sizeof(text));
		printf("%*s  ", widths[c], text);
	}
	/* A child under its parent, as ps f draws it. */
	if (r->depth > 0)
		snprintf(indent, sizeof(indent), "%*s\\_ ", 4 * (r->depth > 14 ? 14 : r->depth) - 3, "");
	room -= (int)strlen(indent);
	/* (No command line read: its name, as top shows it.) */
	snprintf(raw, sizeof(raw), "%s", r->task->command[0] ? r->task->command : r->task->program);
	if (width && room < 10)
		room = 10;
	if (width && (int)strlen(raw) > room)
		shorten_command(raw, r->task->command_first, room);
	terminal_text(raw, cmd, sizeof(cmd));
	printf("%s%s\n", indent, cmd);
}

/* The index of pid in pids (ascending, n), or -1. */
static long index_of(const pid_t *pids, size_t n, pid_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pids[mid] == pid)
			return (long)mid;
		if (pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * The top of each shown task's tree (pids, n) among every task of t, shown or
 * not, into tops: --launched hides a launcher that never launched, and its
 * workers stay one tree all the same. Returns 0, or -1 when out of memory.
 */
static int tree_tops(const struct task_tree *t, const pid_t *pids, size_t n, pid_t *tops)
{
	size_t all = (size_t)t->n_tasks;
	pid_t *up = malloc((all + 1) * sizeof(*up)), *top = malloc((all + 1) * sizeof(*top));

	if (!up || !top) {
		free(up);
		free(top);
		return -1;
	}
	nvt_links_tops(t->links, t->n_links, t->tasks, all, up, top);
	for (size_t k = 0; k < n; k++) {
		long i = index_of(t->tasks, all, pids[k]);
		tops[k] = i < 0 ? pids[k] : top[i];
	}
	free(up);
	free(top);
	return 0;
}

/*
 * Finds the tasks of rows (n; pids[k] is rows[k]'s, tops[k] the top of its tree, tree_tops)
 * whose partitions overlap on a GPU (nvt_view_overlaps: tasks of one tree copied their
 * partition) and points each row at its own. Returns the overlaps (the caller frees them;
 * NULL: none); ends the command when out of memory.
 */
static struct nvt_view_overlap *find_overlaps(struct row *rows, const pid_t *tops, size_t n)
{
	pid_t *tree = calloc(view.n_tasks + 1, sizeof(*tree));
	struct nvt_view_overlap *all = NULL;
	size_t count = 0, at = 0;

	/* Only the tasks shown: --launched leaves out the others. */
	for (size_t k = 0; tree && k < n; k++)
		tree[rows[k].task - view.tasks] = tops[k];
	if (!tree || nvt_view_overlaps(&view, tree, &all, &count))
		cli_errx("out of memory");
	free(tree);
	for (size_t k = 0; k < n; k++) {
		size_t task = (size_t)(rows[k].task - view.tasks);
		while (at < count && view.slots[all[at].slot].task < task)
			at++;
		rows[k].overlap = all + at;
		while (at < count && view.slots[all[at].slot].task == task)
			at++;
		rows[k].n_overlap = (size_t)(all + at - rows[k].overlap);
	}
	return all;
}

/* Tasks an Overlap line names; past that, the first OVERLAP_NAMED - 1 and "and N more"
 * (-l --json lists more), so that a task on a crowded GPU keeps one readable line. */
#define OVERLAP_NAMED 4

/* The tasks overlap o names, into buf: "pid 4250 (app)", "pids 4250 (app) and 4260 (train)",
 * past OVERLAP_NAMED "pids 4250 (app), 4260 (train), 4270 (app) and 5 more"; their programs as
 * the terminal may show them. */
static void overlap_names(const struct nvt_view_overlap *o, char *buf, size_t len)
{
	size_t n = o->n_others, named = n > OVERLAP_NAMED ? OVERLAP_NAMED - 1 : n, used;

	used = (size_t)snprintf(buf, len, "pid%s", n > 1 ? "s" : "");
	for (size_t k = 0; k < named && used < len; k++) {
		const struct nvt_view_task *t = &view.tasks[view.slots[o->others[k]].task];
		char program[sizeof(t->program)];
		terminal_text(t->program, program, sizeof(program));
		used += (size_t)snprintf(buf + used, len - used, "%s%ld (%s)",
					 k == 0 ? " " : k + 1 == n ? " and " : ", ", (long)t->pid, program);
	}
	if (named < n && used < len)
		snprintf(buf + used, len - used, " and %zu more", n - named);
}

/* After the table: a line for each task and GPU where its TPCs overlap those of other tasks,
 * naming them (each pair so on both its tasks' lines). */
static void print_overlaps(const struct row *rows, size_t n)
{
	for (size_t k = 0; k < n; k++)
		for (size_t a = 0; a < rows[k].n_overlap; a++) {
			const struct nvt_view_overlap *o = &rows[k].overlap[a];
			char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX], names[512], gpu[16] = "?";
			int index = gpu_index_of(view.gpus[view.slots[o->slot].gpu].uuid);
			if (index >= 0)
				snprintf(gpu, sizeof(gpu), "%d", index);
			describe(&o->both, list, mask);
			overlap_names(o, names, sizeof(names));
			printf("Overlap: pid %ld shares TPC%s %s of GPU %s with %s\n", (long)rows[k].pid,
			       nvt_set_count(&o->both) > 1 ? "s" : "", list, gpu, names);
		}
}

/* ---- Starts queued with --wait (they hold no segment: no row) ---------------- */

/* A queued start as an object of -l's "queued" (docs/json.md). */
static struct json_object *json_queued(const struct nvt_view_queued *q)
{
	struct json_object *start = jsonout_object(), *gpus = jsonout_array();

	jsonout_add_int(start, "pid", q->rec.pid);
	jsonout_add_uint(start, "uid", q->uid);
	jsonout_add_text(start, "user", q->user_named ? q->user : NULL);
	jsonout_add_text(start, "command", q->rec.command);
	jsonout_add(start, "gpus", gpus);
	for (int i = 0; i < q->rec.n_gpus; i++) {
		struct json_object *gpu = json_gpu_object(q->rec.gpu[i].uuid);
		jsonout_append(gpus, gpu);
		jsonout_add_uint(gpu, "tpc_count", q->rec.gpu[i].count);
	}
	jsonout_add_uint(start, "waited_s", q->waited_s);
	jsonout_add_uint_or_null(start, "timeout_s", q->rec.timeout_s);
	return start;
}

/* After the table: a line for each start queued with --wait, whose user, command and words
 * the terminal may show: "Queued: pid 4321 of me waits 12 s for 4 TPCs on GPU 0
 * (--wait=60): app loop"; with doc, as its "queued". */
static void print_queued(struct json_object *doc)
{
	struct json_object *queued = doc ? jsonout_array() : NULL;

	if (doc)
		jsonout_add(doc, "queued", queued);
	for (size_t k = 0; k < view.n_queued; k++) {
		const struct nvt_view_queued *q = &view.queued[k];
		char user[sizeof(q->user)], cmd[sizeof(q->rec.command)], what[512];
		if (doc) {
			jsonout_append(queued, json_queued(q));
			continue;
		}
		if (q->user_named)
			terminal_text(q->user, user, sizeof(user));
		else
			snprintf(user, sizeof(user), "%lu", (unsigned long)q->uid);
		terminal_text(q->rec.command, cmd, sizeof(cmd));
		queued_what(&q->rec, what, sizeof(what));
		printf("Queued: pid %ld of %s waits %llu s for %s: %s\n", (long)q->rec.pid, user,
		       (unsigned long long)q->waited_s, what, cmd);
	}
}

/* The columns shown only for some tasks: shown when a task of rows (n) has one. */
static void choose_columns(const struct row *rows, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		slurm_columns |= rows[k].slurm_step[0] != '\0';
		container_columns |= rows[k].task->container[0] != '\0';
		for (int i = 0; i < rows[k].n; i++) {
			prio_columns |= rows[k].slot[i].prio.prio != NVT_PRIO_NONE;
			mem_columns |= rows[k].slot[i].mem_used || rows[k].slot[i].mem_limit;
		}
	}
}

int nvt_cmd_list(const struct options *o)
{
	struct task_tree t;
	struct row *rows;
	pid_t *pids, *up, *tops;
	size_t *order, n = 0;
	int *depth, width, cols;
	struct json_object *doc = NULL, *list = NULL;
	struct nvt_view_overlap *overlaps;

	/* First the one step that changes something: leftovers removed (and the processes read,
	 * for the tree); then what runs, read through the view, as the other viewers read it. */
	if (task_tree_read(&t, 1))
		cli_err("cannot read %s", nvt_rundir());
	task_tree_warn_skipped(&t);
	read_view();
	if (nvt_view_read_queued(nvt_rundir(), &view))
		warnx("warning: the starts queued with --wait cannot be listed: %s", strerror(errno));
	warn_unread();
	task_tree_warn_leftovers();
	rows = malloc((view.n_tasks + 1) * sizeof(*rows));
	pids = malloc((view.n_tasks + 1) * sizeof(*pids));
	up = malloc((view.n_tasks + 1) * sizeof(*up));
	order = malloc((view.n_tasks + 1) * sizeof(*order));
	depth = malloc((view.n_tasks + 1) * sizeof(*depth));
	tops = malloc((view.n_tasks + 1) * sizeof(*tops));
	if (!rows || !pids || !up || !order || !depth || !tops)
		cli_errx("out of memory");
	for (size_t k = 0; k < view.n_tasks; k++) {
		row_of(&t, k, &rows[n]);
		/* A task without a slot counts no launches: it may have launched some. */
		if (o->launched_only && launches_of(&rows[n]) == 0)
			continue;
		pids[n] = rows[n].pid; /* ascending, as the view's tasks */
		n++;
	}
	choose_columns(rows, n);
	cols = terminal_width();
	list_room_for(cols);
	fit_columns(rows, n, cols > 0);
	width = command_width(cols);
	/* Each task under the nearest task shown that it descends from. */
	nvt_links_nearest(t.links, t.n_links, pids, n, up);
	if (nvt_tree_order(pids, up, n, order, depth))
		cli_errx("out of memory");
	if (tree_tops(&t, pids, n, tops))
		cli_errx("out of memory");
	overlaps = find_overlaps(rows, tops, n);
	if (o->json) {
		doc = jsonout_document();
		list = jsonout_array();
		jsonout_add(doc, "tasks", list);
	} else {
		print_header();
	}
	for (size_t k = 0; k < n; k++) {
		struct row *r = &rows[order[k]];
		r->parent = up[order[k]];
		r->depth = depth[order[k]];
		if (o->json)
			jsonout_append(list, json_row(r));
		else
			print_text(r, width);
	}
	if (o->json) {
		print_queued(doc);
		print_agents(doc);
		jsonout_print(stdout, doc);
	} else {
		print_overlaps(rows, n);
		print_queued(NULL);
		if (prio_columns)
			print_agents(NULL);
	}
	free(rows), free(pids), free(up), free(order), free(depth), free(tops), free(overlaps);
	nvt_view_free(&view);
	task_tree_free(&t);
	return EXIT_SUCCESS;
}
