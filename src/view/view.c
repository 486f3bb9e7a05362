/*
 * view.c - reading a view (view.h): every task's slots, the GPUs, the
 * agents and the MPS daemon, changing nothing.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "view.h"
#include "core/grow.h"
#include "core/prio.h"
#include "core/segment.h"
#include "core/text.h"
#include "core/tpcset.h"
#include "gpu/topocache.h"
#include "mps/mps.h"
#include "os/proc.h"
#include "prio/agent.h"
#include "seg/segfile.h"

/* Users' names, looked up once a view: a thousand tasks have a few users. */
struct names {
	uid_t uid[64];
	char name[64][64];
	int n;
};

static void user_name(struct names *names, uid_t uid, char *out, size_t len)
{
	struct passwd pw, *found = NULL;
	char buf[1024];
	int i;

	for (i = 0; i < names->n; i++)
		if (names->uid[i] == uid) {
			snprintf(out, len, "%s", names->name[i]);
			return;
		}
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) || !found)
		snprintf(out, len, "%lu", (unsigned long)uid);
	else
		snprintf(out, len, "%s", found->pw_name);
	if (names->n < 64) {
		names->uid[names->n] = uid;
		snprintf(names->name[names->n++], sizeof(names->name[0]), "%s", out);
	}
}

/* The index of the view's GPU with this UUID, added (with the slot's map, if it has one) when
 * the machine's list lacks it; -1 when the view has no room for another. */
static int gpu_of(struct nvt_view *v, const uint8_t uuid[16], const struct nvt_topology *topo)
{
	struct nvt_view_gpu *g;
	int i;

	for (i = 0; i < v->n_gpus; i++)
		if (!memcmp(v->gpus[i].uuid, uuid, 16))
			break;
	if (i == v->n_gpus) {
		if (v->n_gpus == NVT_MACHINE_GPUS)
			return -1;
		g = &v->gpus[v->n_gpus++];
		memset(g, 0, sizeof(*g));
		g->index = -1;
		memcpy(g->uuid, uuid, 16);
		nvt_uuid_format(uuid, g->uuid_text);
	}
	g = &v->gpus[i];
	/* A map a task runs with is the one calibration found (the start copied it). */
	if (!g->map_known && topo->n_tpcs && topo->n_tpcs <= NVT_MAX_TPCS) {
		g->topo = *topo;
		g->map_known = 1;
	}
	return i;
}

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
	slash = strrchr(first, '/');
	snprintf(t->program, sizeof(t->program), "%.*s", (int)sizeof(t->program) - 1,
		 slash && slash[1] ? slash + 1 : first);
	while (n && t->command[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (t->command[i] == '\0')
			t->command[i] = ' ';
}

/* Appends a slot for task (index) from the segment's slot view and status. Returns 0 or -1. */
static int add_slot(struct nvt_view *v, size_t *cap, size_t task, const struct nvt_slot_view *view,
		    const struct nvt_slot_status *st)
{
	struct nvt_view_slot *s, *slots = nvt_grow(v->slots, v->n_slots, cap, sizeof(*slots), 256);
	int gpu;

	if (!slots)
		return -1;
	v->slots = slots;
	gpu = gpu_of(v, view->uuid, &view->topo);
	if (gpu < 0)
		return 0; /* past the most GPUs a machine has: not shown */
	s = &v->slots[v->n_slots++];
	memset(s, 0, sizeof(*s));
	s->task = task;
	s->gpu = gpu;
	s->partitioned = view->state == NVT_SLOT_SET;
	s->claim = !!(view->flags & NVT_SLOTF_CLAIM);
	s->applied = st->applied == view->seq;
	s->refused = view->seq && st->rejected == view->seq;
	s->prio = view->prio;
	s->yield = st->yield;
	s->act = st->act;
	s->launches = st->launches;
	s->graph_stale = st->graph_stale;
	s->mem_used = st->mem_used;
	s->mem_limit = view->mem_limit;
	s->mem_refused = st->mem_refused;
	s->current = view->tpcs;
	/* A shim's launches that borrow run on its own TPCs and those it borrows (nvtaskset.h). */
	if (view->prio.prio != NVT_PRIO_NONE && st->yield.state == NVT_YS_BORROWING)
		nvt_set_or(&s->current, &s->current, &st->yield.borrowed);
	if (view->prio.prio != NVT_PRIO_NONE)
		nvt_prio_own_of(view, &s->own);
	else
		s->own = view->tpcs;
	nvt_set_andnot(&s->borrowed, &s->current, &s->own);
	return 0;
}

/* Reads task pid into the view. Returns 0 (read, or left out: gone, hidden, unreadable), or -1
 * when out of memory. */
static int read_task(const char *base, struct nvt_view *v, size_t *task_cap, size_t *slot_cap,
		     struct names *names, pid_t pid)
{
	struct nvt_seg_handle h;
	struct nvt_view_task *t, *tasks;
	struct nvt_slurm_step step;
	int rc = nvt_seg_open(base, pid, 0, &h);

	if (rc == NVT_SEG_ENOPROC || rc == NVT_SEG_ENOTASK || rc == NVT_SEG_EPERM)
		return 0; /* gone meanwhile, or hidden by its user */
	if (rc) {
		v->unreadable++;
		return 0;
	}
	tasks = nvt_grow(v->tasks, v->n_tasks, task_cap, sizeof(*tasks), 64);
	if (!tasks) {
		nvt_seg_close(&h);
		return -1;
	}
	v->tasks = tasks;
	t = &v->tasks[v->n_tasks];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->uid = h.task_uid;
	t->start_time = h.head.start_time;
	t->first_slot = v->n_slots;
	for (int g = 0; g < NVT_MAX_GPUS; g++) {
		struct nvt_slot_status st;
		struct nvt_slot_view view;
		if (nvt_seg_read_used(&h, g, &view, &st))
			continue;
		if (add_slot(v, slot_cap, v->n_tasks, &view, &st)) {
			nvt_seg_close(&h);
			return -1;
		}
	}
	nvt_seg_close(&h);
	t->n_slots = (int)(v->n_slots - t->first_slot);
	user_name(names, t->uid, t->user, sizeof(t->user));
	read_command(t);
	if (nvt_proc_container(pid, t->container, sizeof(t->container)))
		t->container[0] = '\0';
	if (nvt_slurmproc_step_of(pid, &step) == 0) {
		snprintf(t->slurm_job, sizeof(t->slurm_job), "%lu", (unsigned long)step.job);
		snprintf(t->slurm_step, sizeof(t->slurm_step), "%s", step.step);
	}
	v->n_tasks++;
	return 0;
}

/* The map from the cache (read only: never calibrated) for each GPU no task's slot gave one. */
static void cached_maps(struct nvt_view *v, const struct nvt_gpus *machine)
{
	char dirs[2][256];
	int n_dirs = -1;

	for (int i = 0; i < v->n_gpus && machine && strcmp(machine->nvrm, "-"); i++) {
		struct nvt_view_gpu *g = &v->gpus[i];
		struct nvt_cache_key key;
		if (g->map_known)
			continue;
		memset(&key, 0, sizeof(key));
		snprintf(key.uuid, sizeof(key.uuid), "%s", g->uuid_text);
		snprintf(key.nvrm, sizeof(key.nvrm), "%s", machine->nvrm);
		if (n_dirs < 0)
			n_dirs = nvt_cache_dirs(dirs);
		g->map_known = nvt_cache_find(dirs, n_dirs, &key, &g->topo, NULL, NULL, 0) == 0 &&
			       g->topo.n_tpcs && g->topo.n_tpcs <= NVT_MAX_TPCS;
	}
}

/* Root's agent, and those of the users of tasks with a priority. */
static void read_agents(const char *base, struct nvt_view *v, struct names *names)
{
	v->n_agents = 0;
	for (size_t k = 0; k <= v->n_tasks && v->n_agents < NVT_VIEW_AGENTS; k++) {
		uid_t uid = k ? v->tasks[k - 1].uid : 0;
		int managed = !k, known = 0;
		struct nvt_view_agent *a;
		for (int i = 0; k && i < v->tasks[k - 1].n_slots; i++)
			managed |= v->slots[v->tasks[k - 1].first_slot + (size_t)i].prio.prio != NVT_PRIO_NONE;
		for (int i = 0; i < v->n_agents; i++)
			known |= v->agents[i].uid == uid;
		if (!managed || known)
			continue;
		a = &v->agents[v->n_agents++];
		a->uid = uid;
		user_name(names, uid, a->user, sizeof(a->user));
		if (!nvt_agent_running(base, uid, &a->pid))
			a->pid = 0;
	}
}

/* The MPS daemon a task of the reader's would join (its pipe directory), and whether it runs. */
static void read_mps(struct nvt_view *v)
{
	struct nvt_mps mps;
	char why[256];

	memset(&mps, 0, sizeof(mps));
	if (nvt_mps_setup(&mps, why, sizeof(why)))
		return;
	snprintf(v->mps_pipe_dir, sizeof(v->mps_pipe_dir), "%s", mps.pipe_dir);
	v->mps_pid = nvt_mps_daemon(&mps);
}

int nvt_view_read(const char *base, const struct nvt_gpus *machine, struct nvt_view *v, char *why,
		  size_t len)
{
	struct timespec now;
	struct names names = {.n = 0};
	size_t task_cap = 0, slot_cap = 0;
	pid_t *pids = NULL;
	int n;

	memset(v, 0, sizeof(*v));
	clock_gettime(CLOCK_MONOTONIC, &now);
	v->taken_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	for (int i = 0; machine && i < machine->n && i < NVT_MACHINE_GPUS; i++) {
		struct nvt_view_gpu *g = &v->gpus[v->n_gpus++];
		g->index = i;
		memcpy(g->uuid, machine->id[i].uuid_bytes, 16);
		snprintf(g->uuid_text, sizeof(g->uuid_text), "%s", machine->id[i].uuid);
		snprintf(g->model, sizeof(g->model), "%s", machine->id[i].model);
	}
	/* No tidying: a viewer changes nothing (-l removes leftovers; the viewers leave them). */
	n = nvt_seg_tasks(base, 0, &pids);
	if (n < 0)
		return nvt_why(why, len, "cannot read the run directories under %s: %s", base,
			       strerror(errno));
	for (int i = 0; i < n; i++)
		if (read_task(base, v, &task_cap, &slot_cap, &names, pids[i])) {
			free(pids);
			return nvt_why(why, len, "out of memory");
		}
	free(pids);
	cached_maps(v, machine);
	nvt_view_settle(v);
	read_agents(base, v, &names);
	read_mps(v);
	return 0;
}

void nvt_view_free(struct nvt_view *v)
{
	free(v->tasks);
	free(v->slots);
	v->tasks = NULL;
	v->slots = NULL;
	v->n_tasks = v->n_slots = 0;
}
