/*
 * viewmetrics.c - a view as Prometheus metrics (view.h), for both front ends
 * that serve them: nvtaskset --metrics and the exporter. The names follow
 * Prometheus' conventions (base units, _total for counters, snake_case) and
 * dcgm-exporter's GPU labels, gpu and UUID, so that a query can join the two
 * (its modelName is model_name here: promtool refuses camelCase);
 * docs/observability.md lists every metric.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "core/promtext.h"
#include "core/prio.h"
#include "core/tpcset.h"
#include "core/yield.h"

/* The labels of a GPU: gpu (its number, "" when not on the machine's list) and UUID. */
struct gpu_labels {
	char index[16];
	struct nvt_prom_label l[3];
};

static void gpu_labels(const struct nvt_view_gpu *g, struct gpu_labels *out)
{
	if (g->index >= 0)
		snprintf(out->index, sizeof(out->index), "%d", g->index);
	else
		out->index[0] = '\0';
	out->l[0] = (struct nvt_prom_label){"gpu", out->index};
	out->l[1] = (struct nvt_prom_label){"UUID", g->uuid_text};
	out->l[2] = (struct nvt_prom_label){"model_name", g->model};
}

/* The labels of a task's slot: its GPU's, then pid, user, command, container, slurm_job,
 * priority; a last one free for the caller (state). */
#define TASK_LABELS 8
struct task_labels {
	struct gpu_labels gpu;
	char pid[16];
	struct nvt_prom_label l[TASK_LABELS + 1];
};

static void task_labels(const struct nvt_view *v, const struct nvt_view_slot *s,
			struct task_labels *out)
{
	const struct nvt_view_task *t = &v->tasks[s->task];

	gpu_labels(&v->gpus[s->gpu], &out->gpu);
	snprintf(out->pid, sizeof(out->pid), "%ld", (long)t->pid);
	out->l[0] = out->gpu.l[0];
	out->l[1] = out->gpu.l[1];
	out->l[2] = (struct nvt_prom_label){"pid", out->pid};
	out->l[3] = (struct nvt_prom_label){"user", t->user};
	out->l[4] = (struct nvt_prom_label){"command", t->program};
	out->l[5] = (struct nvt_prom_label){"container", t->container};
	out->l[6] = (struct nvt_prom_label){"slurm_job", t->slurm_job};
	out->l[7] = (struct nvt_prom_label){"priority", nvt_view_prio_word(s)};
}

/* What a task's family measures of one slot; < 0: no sample (not known, or not its kind). */
typedef double (*slot_value)(const struct nvt_view *v, const struct nvt_view_slot *s);

static double current_tpcs(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	const struct nvt_view_gpu *g = &v->gpus[s->gpu];

	if (!s->partitioned)
		return g->map_known ? (double)nvt_set_count(&g->working) : -1;
	return nvt_set_count(&s->current);
}

static double current_sms(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	double tpcs = current_tpcs(v, s);

	return tpcs < 0 ? -1 : 2 * tpcs; /* TPC t holds SMs 2t and 2t+1 */
}

static double own_tpcs(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	return s->partitioned ? nvt_set_count(&s->own) : current_tpcs(v, s);
}

static double borrowed_tpcs(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return nvt_set_count(&s->borrowed);
}

static double launches(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return (double)s->launches;
}

/* Waits exist for tasks with a priority only (a task without one never waits). */
static double waits(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return s->prio.prio == NVT_PRIO_NONE ? -1 : (double)s->yield.holds;
}

static double wait_seconds(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return s->prio.prio == NVT_PRIO_NONE ? -1 : (double)s->yield.held_ns / 1e9;
}

/* Time-sliced tasks (--yield slice) only: their channel groups' timeslice, as the driver recorded it. */
static double timeslice_seconds(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return s->yield.timeslice_us ? (double)s->yield.timeslice_us / 1e6 : -1;
}

static double channel_groups(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return s->yield.timeslice_us || s->yield.groups ? (double)s->yield.groups : -1;
}

/* Every task's shim counts what it holds (a program without the shim: 0). */
static double memory_bytes(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return (double)s->mem_used;
}

/* Tasks with a limit only. */
static double memory_limit_bytes(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return s->mem_limit ? (double)s->mem_limit : -1;
}

static double memory_refused(const struct nvt_view *v, const struct nvt_view_slot *s)
{
	(void)v;
	return s->mem_limit || s->mem_refused ? (double)s->mem_refused : -1;
}

static const struct task_family {
	const char *name, *type, *help;
	slot_value value;
} task_families[] = {
	{"nvtaskset_task_tpcs", "gauge",
	 "TPCs the task's launches on the GPU use now (2 SMs each): its partition, with what it "
	 "borrows; every working TPC where it is not partitioned.",
	 current_tpcs},
	{"nvtaskset_task_sms", "gauge", "SMs of the TPCs the task's launches on the GPU use now.",
	 current_sms},
	{"nvtaskset_task_own_tpcs", "gauge",
	 "The task's own TPCs on the GPU: its partition as its user gave it.", own_tpcs},
	{"nvtaskset_task_borrowed_tpcs", "gauge",
	 "TPCs of higher-priority tasks that the task's launches borrow now.", borrowed_tpcs},
	{"nvtaskset_task_launches_total", "counter",
	 "Kernels the task launched on the GPU since its process started.", launches},
	{"nvtaskset_task_waits_total", "counter",
	 "Launches of the task that waited for a higher-priority task (tasks with a priority).",
	 waits},
	{"nvtaskset_task_wait_seconds_total", "counter",
	 "Time the task's launches waited for higher-priority tasks (tasks with a priority).",
	 wait_seconds},
	{"nvtaskset_task_timeslice_seconds", "gauge",
	 "Timeslice of the time-sliced task's channel groups on the GPU, as the driver recorded it "
	 "(--yield slice; an MPS server of a priority level: its clients').",
	 timeslice_seconds},
	{"nvtaskset_task_channel_groups", "gauge",
	 "Channel groups of the time-sliced task's process on the GPU (--yield slice).", channel_groups},
	{"nvtaskset_task_memory_bytes", "gauge",
	 "GPU memory the task's process holds on the GPU, as its shim counts its allocations.",
	 memory_bytes},
	{"nvtaskset_task_memory_limit_bytes", "gauge",
	 "The most GPU memory the task's process may hold on the GPU (--mem; tasks with a limit).",
	 memory_limit_bytes},
	{"nvtaskset_task_memory_refused_total", "counter",
	 "Allocations of the task on the GPU refused for its memory limit (tasks with a limit).",
	 memory_refused},
};

static int task_family(const struct nvt_view *v, const struct task_family *f, struct nvt_outbuf *b)
{
	if (nvt_prom_family(b, f->name, f->type, f->help))
		return -1;
	for (size_t s = 0; s < v->n_slots; s++) {
		struct task_labels l;
		double value = f->value(v, &v->slots[s]);
		if (value < 0)
			continue;
		task_labels(v, &v->slots[s], &l);
		if (nvt_prom_sample(b, f->name, l.l, TASK_LABELS, value))
			return -1;
	}
	return 0;
}

/* The words nvt_view_state_word may give a task with a priority, each once, into words:
 * every state a shim publishes (by the names its table has, so a new one shows), the agent's
 * modes, and lending. Returns how many. */
static int state_words(const char **words, int max)
{
	const char *all[NVT_YS_STATES + NVT_PRIO_MODES + 1];
	int n_all = 0, n = 0;

	for (unsigned s = 0; s < NVT_YS_STATES; s++)
		if (s != NVT_YS_NONE)
			all[n_all++] = nvt_yield_state_name(s);
	for (unsigned m = 0; m < NVT_PRIO_MODES; m++)
		all[n_all++] = nvt_prio_mode_name(m);
	all[n_all++] = "lending";
	for (int i = 0; i < n_all && n < max; i++) {
		int seen = 0;
		for (int j = 0; j < n && !seen; j++)
			seen = !strcmp(words[j], all[i]);
		if (!seen)
			words[n++] = all[i];
	}
	return n;
}

static int state_family(const struct nvt_view *v, struct nvt_outbuf *b)
{
	static const char name[] = "nvtaskset_task_state";
	const char *words[NVT_YS_STATES + NVT_PRIO_MODES + 1];
	int n_words = state_words(words, (int)(sizeof(words) / sizeof(words[0])));

	if (nvt_prom_family(b, name, "gauge",
			    "1 for what the task does now, 0 for the other states (tasks with a "
			    "priority): the state its shim publishes (running, gated, ahead and bound "
			    "wait for a higher task, borrowing, beside, ...), or the agent's mode "
			    "(own, guarded, squeezed, borrowing), or lending."))
		return -1;
	for (size_t s = 0; s < v->n_slots; s++) {
		const struct nvt_view_slot *slot = &v->slots[s];
		const char *now = nvt_view_state_word(slot);
		struct task_labels l;
		if (slot->prio.prio == NVT_PRIO_NONE)
			continue;
		task_labels(v, slot, &l);
		for (int w = 0; w < n_words; w++) {
			l.l[TASK_LABELS] = (struct nvt_prom_label){"state", words[w]};
			if (nvt_prom_sample(b, name, l.l, TASK_LABELS + 1, !strcmp(now, words[w])))
				return -1;
		}
	}
	return 0;
}

/* A GPU's family: value(g) < 0 leaves the GPU out. */
static int gpu_family(const struct nvt_view *v, const char *name, const char *help, int info,
		      double (*value)(const struct nvt_view_gpu *g), struct nvt_outbuf *b)
{
	if (nvt_prom_family(b, name, "gauge", help))
		return -1;
	for (int i = 0; i < v->n_gpus; i++) {
		struct gpu_labels l;
		double x = value(&v->gpus[i]);
		if (x < 0)
			continue;
		gpu_labels(&v->gpus[i], &l);
		if (nvt_prom_sample(b, name, l.l, info ? 3 : 2, x))
			return -1;
	}
	return 0;
}

static double gpu_info(const struct nvt_view_gpu *g)
{
	(void)g;
	return 1;
}

static double gpu_tpcs(const struct nvt_view_gpu *g)
{
	return g->map_known ? (double)nvt_set_count(&g->working) : -1;
}

static double gpu_free(const struct nvt_view_gpu *g)
{
	struct nvt_tpcset left;

	if (!g->map_known)
		return -1;
	nvt_set_andnot(&left, &g->working, &g->held);
	return nvt_set_count(&left);
}

static double gpu_borrowed(const struct nvt_view_gpu *g)
{
	return nvt_set_count(&g->borrowed);
}

static int gpu_families(const struct nvt_view *v, struct nvt_outbuf *b)
{
	return gpu_family(v, "nvtaskset_gpu_info",
			  "1 for each GPU: its number (as nvidia-smi's), UUID and model.", 1,
			  gpu_info, b) ||
	       gpu_family(v, "nvtaskset_gpu_tpcs",
			  "Working TPCs of the GPU (2 SMs each), where its TPC map is known.", 0,
			  gpu_tpcs, b) ||
	       gpu_family(v, "nvtaskset_gpu_free_tpcs",
			  "TPCs of the GPU that no task holds, own or borrowed, claims counted.", 0,
			  gpu_free, b) ||
	       gpu_family(v, "nvtaskset_gpu_borrowed_tpcs",
			  "TPCs of the GPU that tasks borrow from higher-priority tasks now.", 0,
			  gpu_borrowed, b);
}

static int daemon_families(const struct nvt_view *v, struct nvt_outbuf *b)
{
	if (nvt_prom_family(b, "nvtaskset_agent_up", "gauge",
			    "1 for each priority agent that runs; 0 for a user whose tasks need one "
			    "(a priority that yields by the agent's guard) while neither the user's "
			    "agent nor root's runs. No series where no agent runs or is needed."))
		return -1;
	for (int i = 0; i < v->n_agents; i++) {
		enum nvt_view_agent_state state = nvt_view_agent_state(v, i);
		char uid[16];
		struct nvt_prom_label l[2] = {{"uid", uid}, {"user", v->agents[i].user}};
		if (state == NVT_VIEW_AGENT_IDLE)
			continue;
		snprintf(uid, sizeof(uid), "%lu", (unsigned long)v->agents[i].uid);
		if (nvt_prom_sample(b, "nvtaskset_agent_up", l, 2, state == NVT_VIEW_AGENT_RUNS))
			return -1;
	}
	if (nvt_prom_family(b, "nvtaskset_mps_daemon_up", "gauge",
			    "1 if the MPS control daemon of the pipe directory runs, else 0: the "
			    "shared one the reader's tasks would join (priority empty), and each "
			    "priority level's own, which its time-sliced tasks join, where it runs "
			    "or its pipe directory is there."))
		return -1;
	if (v->mps_pipe_dir[0]) {
		/* priority="": the same series as without the label, to Prometheus. */
		struct nvt_prom_label l[2] = {{"pipe_directory", v->mps_pipe_dir}, {"priority", ""}};
		if (nvt_prom_sample(b, "nvtaskset_mps_daemon_up", l, 2, v->mps_pid > 0))
			return -1;
	}
	for (int i = 0; i < v->n_mps_levels; i++) {
		const struct nvt_view_mps_level *m = &v->mps_levels[i];
		struct nvt_prom_label l[2] = {{"pipe_directory", m->pipe_dir},
					      {"priority", nvt_prio_name(m->prio)}};
		if (nvt_prom_sample(b, "nvtaskset_mps_daemon_up", l, 2, m->pid > 0))
			return -1;
	}
	return 0;
}

int nvt_view_metrics(const struct nvt_view *v, struct nvt_outbuf *b)
{
	/* node_exporter's convention: an info gauge of 1 whose labels say what serves them. */
	struct nvt_prom_label version = {"version", NVT_VERSION_STRING};

	if (nvt_prom_family(b, "nvtaskset_build_info", "gauge",
			    "1, with the version of nvtaskset that reads the metrics.") ||
	    nvt_prom_sample(b, "nvtaskset_build_info", &version, 1, 1) ||
	    nvt_prom_family(b, "nvtaskset_tasks", "gauge", "Tasks under nvtaskset, every user's.") ||
	    nvt_prom_sample(b, "nvtaskset_tasks", NULL, 0, (double)v->n_tasks) ||
	    nvt_prom_family(b, "nvtaskset_tasks_unreadable", "gauge",
			    "Control segments left out: corrupt, of another version, or unreadable.") ||
	    nvt_prom_sample(b, "nvtaskset_tasks_unreadable", NULL, 0, v->unreadable) ||
	    gpu_families(v, b))
		return -1;
	for (size_t f = 0; f < sizeof(task_families) / sizeof(task_families[0]); f++)
		if (task_family(v, &task_families[f], b))
			return -1;
	if (state_family(v, b) || daemon_families(v, b))
		return -1;
	return b->failed ? -1 : 0;
}
