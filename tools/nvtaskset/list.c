/*
 * list.c - nvtaskset -l: list the tasks that run under nvtaskset, every user's
 * (partitions are public to read, as CPU affinity is), as a tree: each task
 * under the nearest task it descends from, through processes that are no
 * tasks too (a shell without the shim, say).
 * Over 500 lines on purpose: the rows, the tree, the overlaps and the two
 * outputs (text, JSON) of one sub-command share its private row type.
 *
 * To show one more thing about a task: a field in struct row (filled in
 * read_row), an entry in columns[] for the text, and a field in print_json
 * (and docs/json.md).
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
#include <pwd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "core/cdi.h"
#include "os/slurmproc.h"
#include "core/prio.h"
#include "core/yield.h"
#include "prio/agent.h"
#include "core/memlimit.h"

/* One GPU's partition of a task. */
struct gpu_part {
	uint8_t uuid[16];
	uint32_t state;        /* enum nvt_slot_state */
	struct nvt_tpcset tpcs;
	int applied;           /* a launch used it: the task launched on this GPU since it was set */
	int refused;           /* the task refused it and runs on its previous one */
	uint64_t launches;     /* kernels the task launched on this GPU */
	struct nvt_slot_prio prio; /* its priority; prio.own its own partition (set_own) */
	int lending;           /* idle, and a lower task borrows its TPCs (find_lenders) */
	struct nvt_slot_activity act; /* its requests (a task started with a priority) */
	struct nvt_slot_yield yield;  /* how it yields now, as its shim says */
	uint64_t mem_used;     /* GPU memory its shim counts it holding */
	uint64_t mem_limit;    /* the most it may hold (--mem); 0: no limit */
};

/* What -l shows of one task: a partition per GPU it has a slot for. */
struct row {
	pid_t pid;
	pid_t ppid;   /* its parent process, 0 when unknown */
	pid_t parent; /* the nearest task shown that it descends from, 0 when none */
	int depth;    /* tasks shown above it */
	uid_t uid;
	int n;
	struct gpu_part gpu[NVT_MAX_GPUS];
	char cmd[512];
	size_t cmd0_len; /* the length of cmd's first word, the program */
	char slurm_step[NVT_SLURM_STEP_TEXT_MAX]; /* "JOB.STEP" of a Slurm task, else "" */
	char container[NVT_CONTAINER_ID_TEXT]; /* the container it runs in (its id's start), else "" */
	int overlaps; /* its TPCs overlap another task's that is neither its ancestor nor descendant */
	pid_t overlap_pid; /* the first such task */
	int overlap_gpu;   /* on this GPU (nvtaskset's number, -1 if not listed) */
	struct nvt_tpcset overlap_tpcs; /* these TPCs */
};

/* The kernels a task launched on all its GPUs; -1 when it has no slot to count them in. */
static long long launches_of(const struct row *r)
{
	uint64_t sum = 0;

	for (int i = 0; i < r->n; i++)
		sum += r->gpu[i].launches;
	return r->n ? (long long)(sum > LLONG_MAX ? LLONG_MAX : sum) : -1;
}

/* The command line of pid, arguments joined by spaces; raw bytes (see
 * terminal_text). Returns the length of its first argument. */
static size_t read_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n, first;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	first = strlen(buf);
	while (n && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	return first;
}

/*
 * Fills r for the task pid. Returns 0; 1 when the task is to be left out
 * (gone meanwhile, hidden by its user, or, with --launched, it launched no
 * kernel).
 */
static int read_row(const struct options *o, const struct task_tree *t, pid_t pid, struct row *r)
{
	struct nvt_seg_handle h;
	struct nvt_slurm_step step;
	char why[160];
	int rc = nvt_seg_open(nvt_rundir(), pid, 0, &h);

	if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK || rc == NVT_SEG_EPERM)
		return 1; /* gone meanwhile, or hidden by its user */
	if (rc) {
		warnx("pid %ld: %s", (long)pid, seg_error(rc, &h, why, sizeof(why)));
		return 1;
	}
	memset(r, 0, sizeof(*r));
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct gpu_part *p = &r->gpu[r->n];
		struct nvt_slot_status st;
		struct nvt_slot_view view;
		if (nvt_seg_read_used(&h, g, &view, &st))
			continue;
		memcpy(p->uuid, view.uuid, sizeof(p->uuid));
		p->state = view.state;
		p->tpcs = view.tpcs;
		p->applied = st.applied == view.seq;
		p->refused = view.seq && st.rejected == view.seq;
		p->launches = st.launches;
		p->mem_used = st.mem_used;
		p->mem_limit = view.mem_limit;
		p->prio = view.prio;
		p->act = st.act;
		p->yield = st.yield;
		if (view.prio.prio != NVT_PRIO_NONE)
			nvt_prio_own_of(&view, &p->prio.own);
		/* Its shim's launches borrow now: what they run on. */
		if (view.prio.prio != NVT_PRIO_NONE && st.yield.state == NVT_YS_BORROWING)
			nvt_set_or(&p->tpcs, &p->tpcs, &st.yield.borrowed);
		r->n++;
	}
	r->pid = pid;
	r->ppid = nvt_links_parent(t->links, t->n_links, pid);
	r->uid = h.task_uid;
	r->cmd0_len = read_cmdline(pid, r->cmd, sizeof(r->cmd));
	if (nvt_slurmproc_step_of(pid, &step) == 0)
		nvt_slurmproc_step_format(&step, r->slurm_step, sizeof(r->slurm_step));
	if (nvt_proc_container(pid, r->container, sizeof(r->container)))
		r->container[0] = '\0';
	nvt_seg_close(&h);
	/* A task without a slot counts no launches: it may have launched some. */
	return o->launched_only && launches_of(r) == 0;
}

/* ---- JSON (docs/json.md) --------------------------------------------------- */

static void json_pid_or_null(const char *key, pid_t pid)
{
	printf(pid > 0 ? ",\"%s\":%ld" : ",\"%s\":null", key, (long)pid);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Milliseconds from then to now (0 if then is later or unknown). */
static double ms_since(uint64_t then)
{
	uint64_t now = monotonic_ns();

	return then && now > then ? (double)(now - then) / 1e6 : 0;
}

/* "yield" of a GPU: how the task yields to higher ones, and what it does now. */
static void json_yield(const struct gpu_part *p)
{
	char ways[96];

	if (nvt_yield_format(&p->prio, ',', ways, sizeof(ways)) < 0)
		snprintf(ways, sizeof(ways), "?");
	printf(",\"yield\":{\"ways\":\"%s\",\"state\":\"%s\",\"since_ms\":%.1f,\"watching\":%u,"
	       "\"held_ms\":%.1f,\"holds\":%" PRIu64 ",\"client_priority\":",
	       ways, nvt_yield_state_name(p->yield.state), ms_since(p->yield.since_ns),
	       (unsigned)p->yield.watching, (double)p->yield.held_ns / 1e6, p->yield.holds);
	printf(p->act.client_prio ? "%u" : "null", p->act.client_prio - 1);
	printf(",\"channel_groups\":%u,\"timeslice_us\":", (unsigned)p->yield.groups);
	printf(p->yield.timeslice_us ? "%u" : "null", (unsigned)p->yield.timeslice_us);
	printf(",\"driver_status\":%u}", (unsigned)p->yield.rm_status);
}

/* "requests" of a GPU: the task's requests as its shim follows them. */
static void json_requests(const struct gpu_part *p)
{
	const struct nvt_slot_activity *a = &p->act;

	printf(",\"requests\":{\"tracked\":%s,\"count\":%" PRIu64 ",\"busy\":%s,\"period_ms\":%.3f,"
	       "\"busy_ms\":%.3f,\"duty\":%.3f,\"periodic\":%s}",
	       a->flags & NVT_ACT_TRACKED ? "true" : "false", a->begins,
	       a->begins != a->ends ? "true" : "false", (double)a->period_ns / 1e6,
	       (double)a->busy_ns / 1e6, nvt_act_duty_pm(a) / 1000.0,
	       nvt_act_periodic(a) ? "true" : "false");
}

/* "priority", "own_tpcs", "mode", "guard", "lend", "yield", "requests" of a GPU
 * (docs/json.md): nulls without a priority. */
static void json_prio_fields(const struct gpu_part *p)
{
	char list[NVT_LIST_TEXT_MAX];

	if (p->prio.prio == NVT_PRIO_NONE) {
		printf(",\"priority\":null,\"own_tpcs\":null,\"mode\":null,\"guard\":null,\"lend\":null,"
		       "\"yield\":null,\"requests\":null");
		return;
	}
	nvt_format_list(&p->prio.own, list, sizeof(list));
	printf(",\"priority\":\"%s\",\"own_tpcs\":\"%s\",\"mode\":\"%s\",", nvt_prio_name(p->prio.prio),
	       list, p->lending ? "lending" : nvt_prio_mode_name(p->prio.mode));
	printf(p->prio.guard ? "\"guard\":%u" : "\"guard\":null", (unsigned)p->prio.guard);
	printf(",\"lend\":%s", p->prio.flags & NVT_PRIOF_NO_LEND ? "false" : "true");
	json_yield(p);
	json_requests(p);
}

static void print_json(const struct row *r, int first)
{
	struct passwd *pw = getpwuid(r->uid);
	long long launches = launches_of(r);

	printf("%s{\"pid\":%ld", first ? "" : ",", (long)r->pid);
	json_pid_or_null("ppid", r->ppid);
	json_pid_or_null("parent", r->parent);
	printf(",\"depth\":%d,\"uid\":%lu,\"user\":", r->depth, (unsigned long)r->uid);
	if (pw)
		json_string(pw->pw_name);
	else
		printf("null");
	printf(",\"command\":");
	if (r->cmd[0])
		json_string(r->cmd);
	else
		printf("null");
	printf(launches >= 0 ? ",\"launches\":%lld" : ",\"launches\":null", launches);
	printf(",\"slurm_step\":");
	if (r->slurm_step[0])
		json_string(r->slurm_step);
	else
		printf("null");
	printf(",\"container\":");
	if (r->container[0])
		json_string(r->container);
	else
		printf("null");
	printf(",\"overlaps\":%s,\"gpus\":[", r->overlaps ? "true" : "false");
	for (int i = 0; i < r->n; i++) {
		const struct gpu_part *p = &r->gpu[i];
		printf(i ? "," : "");
		json_gpu_start(stdout, p->uuid);
		putchar(',');
		json_partition_fields(stdout, p->state, &p->tpcs);
		printf(",\"applied\":%s,\"refused\":%s,\"launches\":%" PRIu64 ",\"memory_bytes\":%" PRIu64,
		       p->applied ? "true" : "false", p->refused ? "true" : "false", p->launches,
		       p->mem_used);
		if (p->mem_limit)
			printf(",\"memory_limit_bytes\":%" PRIu64, p->mem_limit);
		else
			printf(",\"memory_limit_bytes\":null");
		json_prio_fields(p);
		putchar('}');
	}
	printf("]}");
}

/* ---- Text: one row per task, its columns, then COMMAND --------------------- */

/* Writes one column of row r; terminal: keep it short (in a terminal). */
typedef void (*column_text)(const struct row *r, int terminal, char *buf, size_t len);

/* In a terminal, a list of TPCs (set, as text in list) longer than 20 columns keeps its start
 * and says how many TPCs it names, so that rows stay on one line; piped output stays whole. */
static void shorten_list(char *list, size_t len, const struct nvt_tpcset *set, int terminal)
{
	char count[16];
	int n_keep;

	if (!terminal || strlen(list) <= 20)
		return;
	n_keep = 20 - snprintf(count, sizeof(count), "...(%u)", nvt_set_count(set));
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
	struct passwd *pw = getpwuid(r->uid);

	(void)terminal;
	if (pw)
		terminal_text(pw->pw_name, buf, len);
	else
		snprintf(buf, len, "%lu", (unsigned long)r->uid);
}

/* The GPUs' numbers ("0", "0,1"; "?" for one not on this machine's list), "-" for none. */
static void col_gpu(const struct row *r, int terminal, char *buf, size_t len)
{
	size_t used = 0;

	(void)terminal;
	snprintf(buf, len, "-");
	for (int i = 0; i < r->n && used + 8 < len; i++) {
		int index = gpu_index_of(r->gpu[i].uuid);
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
		const struct gpu_part *p = &r->gpu[i];
		char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
		int index = r->n > 1 ? gpu_index_of(p->uuid) : -1;

		if (r->n > 1)
			used += (size_t)snprintf(buf + used, len - used, index >= 0 ? "%s%d:" : "%s?:",
						 i ? " " : "", index);
		if (p->state != NVT_SLOT_SET) {
			used += (size_t)snprintf(buf + used, len - used, "all");
			continue;
		}
		describe(&p->tpcs, list, mask);
		shorten_list(list, sizeof(list), &p->tpcs, terminal);
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
		const struct gpu_part *p = &r->gpu[i];
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
			nvt_format_list(&p->prio.own, list, sizeof(list));
			shorten_list(list, sizeof(list), &p->prio.own, terminal);
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
		nvt_memlimit_usage(r->gpu[i].mem_used, r->gpu[i].mem_limit, text, sizeof(text));
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
	snprintf(buf, len, "%s", r->container[0] ? r->container : "-");
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

/* Marks the idle tasks whose TPCs a lower task of their GPU borrows. */
static void find_lenders(struct row *rows, size_t n)
{
	for (size_t a = 0; a < n; a++)
		for (int i = 0; i < rows[a].n; i++) {
			struct gpu_part *p = &rows[a].gpu[i];
			for (size_t b = 0; b < n && p->prio.prio != NVT_PRIO_NONE; b++)
				for (int j = 0; j < rows[b].n; j++) {
					const struct gpu_part *q = &rows[b].gpu[j];
					struct nvt_tpcset both;
					if ((q->prio.mode != NVT_MODE_BORROWING && q->yield.state != NVT_YS_BORROWING) ||
					    q->prio.prio == NVT_PRIO_NONE || q->prio.prio >= p->prio.prio ||
					    memcmp(q->uuid, p->uuid, 16))
						continue;
					nvt_set_and(&both, &q->tpcs, &p->prio.own);
					p->lending |= p->prio.mode == NVT_MODE_OWN && nvt_set_count(&both) > 0;
				}
		}
}

/* For users of seen whose agent does not run: the last line its log holds (an agent a
 * command started says there why it ended or could not start). */
static void print_agent_logs(const uid_t *seen, size_t n_seen, int json)
{
	char line[512], text[512];
	int printed = 0;
	pid_t pid;

	if (json)
		printf(",\"agent_logs\":[");
	for (size_t s = 0; s < n_seen; s++) {
		if (nvt_agent_running(nvt_rundir(), seen[s], &pid) ||
		    !nvt_agent_log_last(nvt_rundir(), seen[s], line, sizeof(line)))
			continue;
		if (json) {
			printf("%s{\"uid\":%lu,\"last\":", printed ? "," : "", (unsigned long)seen[s]);
			json_string(line);
			printf("}");
		} else {
			terminal_text(line, text, sizeof(text));
			printf("priority agent of uid %lu: not running; its log ends: %s\n",
			       (unsigned long)seen[s], text);
		}
		printed = 1;
	}
	if (json)
		printf("]");
}

/* The priority agents that run: root's, and those of the users of tasks with a priority. */
static void print_agents(const struct row *rows, size_t n, int json)
{
	uid_t seen[64];
	size_t n_seen = 0;
	int printed = 0, guarded = 0;

	/* Only a task that yields by the agent's guard needs an agent (docs/priorities.md). */
	for (size_t k = 0; k < n; k++)
		for (int i = 0; i < rows[k].n; i++)
			guarded |= nvt_prio_needs_agent(rows[k].gpu[i].prio.prio,
							rows[k].gpu[i].prio.yield);
	seen[n_seen++] = 0;
	for (size_t k = 0; k < n && n_seen < 64; k++) {
		int has = 0, known = 0;
		for (int i = 0; i < rows[k].n; i++)
			has |= rows[k].gpu[i].prio.prio != NVT_PRIO_NONE;
		for (size_t s = 0; s < n_seen; s++)
			known |= seen[s] == rows[k].uid;
		if (has && !known)
			seen[n_seen++] = rows[k].uid;
	}
	if (json)
		printf(",\"agents\":[");
	for (size_t s = 0; s < n_seen; s++) {
		static struct nvt_agent_note notes[NVT_AGENT_MAX_NOTES];
		pid_t pid;
		int n_notes;
		if (!nvt_agent_running(nvt_rundir(), seen[s], &pid))
			continue;
		/* The tasks with a priority it says it cannot follow or change. */
		n_notes = nvt_agent_status_read(nvt_rundir(), seen[s], notes, NVT_AGENT_MAX_NOTES);
		if (json) {
			printf("%s{\"uid\":%lu,\"pid\":%ld,\"unfollowed\":[", printed ? "," : "",
			       (unsigned long)seen[s], (long)pid);
			for (int i = 0; i < n_notes; i++)
				printf("%s{\"pid\":%ld,\"why\":\"%s\"}", i ? "," : "", (long)notes[i].pid,
				       nvt_agent_why_word(notes[i].why));
			printf("]}");
		} else {
			printf("priority agent: pid %ld (uid %lu)\n", (long)pid, (unsigned long)seen[s]);
			for (int i = 0; i < n_notes; i++)
				printf("priority agent (uid %lu) cannot follow pid %ld: %s\n",
				       (unsigned long)seen[s], (long)notes[i].pid,
				       nvt_agent_why_text(notes[i].why));
		}
		printed = 1;
	}
	if (json)
		printf("]");
	else if (!printed && guarded)
		printf("priority agent: none runs; tasks started with --yield guard keep the "
		       "partitions they have\n");
	print_agent_logs(seen, n_seen, json);
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
	char raw[sizeof(r->cmd)], cmd[sizeof(r->cmd)], indent[64] = "";
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
	snprintf(raw, sizeof(raw), "%s", r->cmd);
	if (width && room < 10)
		room = 10;
	if (width && (int)strlen(raw) > room)
		shorten_command(raw, r->cmd0_len, room);
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


/* The index of the topmost task shown above task k (k itself for a tree's top). */
static size_t top_of(const pid_t *pids, const pid_t *up, size_t n, size_t k)
{
	for (size_t hops = 0; hops < n; hops++) {
		long i;
		if (up[k] <= 0 || (i = index_of(pids, n, up[k])) < 0)
			return k;
		k = (size_t)i;
	}
	return k;
}

/* Marks r as overlapping task pid on GPU uuid, TPCs both (the first such task is named). */
static void mark_overlap(struct row *r, pid_t pid, const uint8_t uuid[16], const struct nvt_tpcset *both)
{
	if (r->overlaps++)
		return;
	r->overlap_pid = pid;
	r->overlap_gpu = gpu_index_of(uuid);
	r->overlap_tpcs = *both;
}

/*
 * The top of each shown task's tree (pids, n) among every task of t, shown or
 * not, into tops: --launched hides a launcher that never launched, and its
 * workers stay one tree all the same. Returns 0, or -1 when out of memory.
 */
static int tree_tops(const struct task_tree *t, const pid_t *pids, size_t n, pid_t *tops)
{
	size_t all = (size_t)t->n_tasks;
	pid_t *up = malloc((all + 1) * sizeof(*up));

	if (!up)
		return -1;
	nvt_links_nearest(t->links, t->n_links, t->tasks, all, up);
	for (size_t k = 0; k < n; k++) {
		long i = index_of(t->tasks, all, pids[k]);
		tops[k] = i < 0 ? pids[k] : t->tasks[top_of(t->tasks, up, all, (size_t)i)];
	}
	free(up);
	return 0;
}

/*
 * Marks the tasks whose partitions overlap on a GPU, but for tasks of one
 * tree (tops[k]: the top of task pids[k]'s, tree_tops): they copied their
 * partition. rows[k] is task pids[k].
 */
static void find_overlaps(struct row *rows, const pid_t *pids, const pid_t *tops, size_t n)
{
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			/* Tasks of one tree (a launcher and its workers, which start
			 * on its partition) share TPCs by design: only tasks of
			 * different trees clash. */
			if (tops[a] == tops[b])
				continue;
			for (int i = 0; i < rows[a].n; i++)
				for (int j = 0; j < rows[b].n; j++) {
					const struct gpu_part *x = &rows[a].gpu[i], *y = &rows[b].gpu[j];
					struct nvt_tpcset both;
					if (x->state != NVT_SLOT_SET || y->state != NVT_SLOT_SET ||
					    memcmp(x->uuid, y->uuid, sizeof(x->uuid)))
						continue;
					/* Managed tasks by their own partitions: a borrowed
					 * or guarded one is the agent's, not an overlap. */
					nvt_set_and(&both, x->prio.prio != NVT_PRIO_NONE ? &x->prio.own : &x->tpcs,
						    y->prio.prio != NVT_PRIO_NONE ? &y->prio.own : &y->tpcs);
					if (!nvt_set_count(&both))
						continue;
					mark_overlap(&rows[a], pids[b], x->uuid, &both);
					mark_overlap(&rows[b], pids[a], x->uuid, &both);
				}
		}
}

/* After the table: a line for each pair of tasks whose TPCs overlap. */
static void print_overlaps(const struct row *rows, const pid_t *pids, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct row *r = &rows[k];
		char list[NVT_LIST_TEXT_MAX], mask[NVT_MASK_TEXT_MAX];
		long other = index_of(pids, n, r->overlap_pid);
		/* Each pair once: from its lower PID, unless that one names another. */
		if (!r->overlaps || (r->overlap_pid < r->pid && other >= 0 &&
				     rows[other].overlap_pid == r->pid))
			continue;
		describe(&r->overlap_tpcs, list, mask);
		printf("Overlap: pids %ld and %ld both hold TPC%s %s of GPU %d\n",
		       (long)r->pid, (long)r->overlap_pid, nvt_set_count(&r->overlap_tpcs) > 1 ? "s" : "",
		       list, r->overlap_gpu);
	}
}

int nvt_cmd_list(const struct options *o)
{
	struct task_tree t;
	struct row *rows;
	pid_t *pids, *up, *tops;
	size_t *order, n = 0;
	int *depth, width, cols;

	if (task_tree_read(&t, 1))
		cli_err("cannot read %s", nvt_rundir());
	task_tree_warn_skipped(&t);
	rows = malloc((size_t)(t.n_tasks + 1) * sizeof(*rows));
	pids = malloc((size_t)(t.n_tasks + 1) * sizeof(*pids));
	up = malloc((size_t)(t.n_tasks + 1) * sizeof(*up));
	order = malloc((size_t)(t.n_tasks + 1) * sizeof(*order));
	depth = malloc((size_t)(t.n_tasks + 1) * sizeof(*depth));
	tops = malloc((size_t)(t.n_tasks + 1) * sizeof(*tops));
	if (!rows || !pids || !up || !order || !depth || !tops)
		cli_errx("out of memory");
	for (int i = 0; i < t.n_tasks; i++)
		if (read_row(o, &t, t.tasks[i], &rows[n]) == 0)
			pids[n++] = t.tasks[i]; /* ascending, as the tasks */
	for (size_t k = 0; k < n; k++) {
		slurm_columns |= rows[k].slurm_step[0] != '\0';
		container_columns |= rows[k].container[0] != '\0';
		for (int i = 0; i < rows[k].n; i++) {
			prio_columns |= rows[k].gpu[i].prio.prio != NVT_PRIO_NONE;
			mem_columns |= rows[k].gpu[i].mem_used || rows[k].gpu[i].mem_limit;
		}
	}
	find_lenders(rows, n);
	cols = terminal_width();
	fit_columns(rows, n, cols > 0);
	width = command_width(cols);
	/* Each task under the nearest task shown that it descends from. */
	nvt_links_nearest(t.links, t.n_links, pids, n, up);
	if (nvt_tree_order(pids, up, n, order, depth))
		cli_errx("out of memory");
	if (tree_tops(&t, pids, n, tops))
		cli_errx("out of memory");
	find_overlaps(rows, pids, tops, n);
	if (o->json)
		printf("{\"version\":%d,\"tasks\":[", NVT_JSON_VERSION);
	else
		print_header();
	for (size_t k = 0; k < n; k++) {
		struct row *r = &rows[order[k]];
		r->parent = up[order[k]];
		r->depth = depth[order[k]];
		if (o->json)
			print_json(r, k == 0);
		else
			print_text(r, width);
	}
	if (o->json) {
		printf("]");
		print_agents(rows, n, 1);
		printf("}\n");
	} else {
		print_overlaps(rows, pids, n);
		if (prio_columns)
			print_agents(rows, n, 0);
	}
	free(rows), free(pids), free(up), free(order), free(depth), free(tops);
	task_tree_free(&t);
	return EXIT_SUCCESS;
}
